//! Event calls made where they are not allowed (undeclared channels, bad
//! ids and pointers, run conditions, nested reads, senders reading), old
//! descriptors, and systems that fail after sending.

use super::*;

/// Tries to send and read without declaring either.
unsafe extern "C" fn undeclared(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: the test's `Shared`.
    let shared = unsafe { shared(user) };
    let value = 1u64;
    // SAFETY: the running context; `value` is a local.
    shared.check(unsafe { ecs_ctx_send_event(ctx, shared.hits, (&raw const value).cast(), 8) });
    // SAFETY: as above; the callback is never called.
    shared.check(unsafe {
        ecs_ctx_read_events(
            ctx,
            shared.hits,
            Some(collect),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    });
}

/// Sends with a wrong size, a NULL value and an id of no channel, and
/// reads with no callback.
unsafe extern "C" fn misuses(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: the test's `Shared`.
    let shared = unsafe { shared(user) };
    let value = 1u64;
    let raw = (&raw const value).cast();
    // SAFETY: the running context; `value` is a local of 8 bytes (4 read).
    shared.check(unsafe { ecs_ctx_send_event(ctx, shared.hits, raw, 4) });
    // SAFETY: NULL on purpose.
    shared.check(unsafe { ecs_ctx_send_event(ctx, shared.hits, ptr::null(), 8) });
    // SAFETY: an id of no channel on purpose (this engine's tag, index 100).
    shared.check(unsafe { ecs_ctx_send_event(ctx, shared.hits + 100, raw, 8) });
    // SAFETY: NULL callback on purpose.
    shared.check(unsafe {
        ecs_ctx_read_events(ctx, shared.hits, None, ptr::null_mut(), ptr::null_mut())
    });
}

#[test]
fn bad_event_calls_return_a_status_and_change_nothing() {
    let engine = Engine::new(1);
    let other = Engine::new(1);
    let hits = channel(&engine, c"hit");
    let foreign = channel(&other, c"hit");
    assert_ne!(hits, foreign);

    fails(
        try_channel(&engine, c"hit", 8, 8).unwrap_err(),
        ECS_ERR_DUPLICATE_NAME,
        "hit",
    );
    fails(
        try_channel(&engine, c"wide", 32, 32).unwrap_err(),
        ECS_ERR_INVALID_ARGUMENT,
        "align",
    );
    fails(
        try_channel(&engine, c"odd", 8, 3).unwrap_err(),
        ECS_ERR_INVALID_ARGUMENT,
        "align",
    );
    fails(
        try_channel(&engine, c"", 8, 8).unwrap_err(),
        ECS_ERR_INVALID_ARGUMENT,
        "",
    );
    let mut id = 0;
    // SAFETY: NULL descriptor on purpose.
    fails(
        unsafe { ecs_event_register(engine.raw(), ptr::null(), &mut id) },
        ECS_ERR_NULL_POINTER,
        "desc",
    );
    // A zero-sized signal channel is fine.
    let signal = try_channel(&engine, c"signal", 0, 1).unwrap();
    // SAFETY: a zero-sized event needs no value.
    ok(unsafe { ecs_event_send(engine.raw(), signal, ptr::null(), 0) });

    fails(
        send(&engine, foreign, 1),
        ECS_ERR_UNKNOWN_EVENT,
        "no event channel",
    );
    let value = 1u64;
    // SAFETY: 8 readable bytes, 4 given.
    fails(
        unsafe { ecs_event_send(engine.raw(), hits, (&raw const value).cast(), 4) },
        ECS_ERR_INVALID_ARGUMENT,
        "8 bytes",
    );
    // SAFETY: NULL value on purpose.
    fails(
        unsafe { ecs_event_send(engine.raw(), hits, ptr::null(), 8) },
        ECS_ERR_NULL_POINTER,
        "value",
    );
    let mut found = 0;
    // SAFETY: a live engine; the name and `found` are locals.
    ok(unsafe { ecs_event_lookup(engine.raw(), c"hit".as_ptr(), &mut found) });
    assert_eq!(found, hits);
    // SAFETY: as above.
    fails(
        unsafe { ecs_event_lookup(engine.raw(), c"nope".as_ptr(), &mut found) },
        ECS_ERR_UNKNOWN_EVENT,
        "nope",
    );
    assert_eq!(stats(&engine, hits).sent, 0);

    // A system declaring another engine's channel is refused.
    let shared = Shared::new(hits);
    let mut stranger = spec("stranger", Some(reader), &shared, Declares::Nothing);
    stranger.event_reads = vec![foreign];
    fails(
        stranger.add(&engine),
        ECS_ERR_UNKNOWN_EVENT,
        "no event channel",
    );

    let bare = spec("undeclared", Some(undeclared), &shared, Declares::Nothing);
    ok(bare.add(&engine));
    let mut misuse = spec("misuses", Some(misuses), &shared, Declares::Nothing);
    misuse.event_writes = vec![hits];
    misuse.event_reads = vec![hits];
    ok(misuse.add(&engine));
    ok(engine.tick());
    let refused = shared.refused.lock().unwrap().clone();
    let statuses: Vec<ecs_status> = refused.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        statuses,
        [
            ECS_ERR_UNDECLARED,
            ECS_ERR_UNDECLARED,
            ECS_ERR_INVALID_ARGUMENT,
            ECS_ERR_NULL_POINTER,
            ECS_ERR_UNKNOWN_EVENT,
            ECS_ERR_NULL_POINTER,
        ],
        "{refused:?}"
    );
    assert!(
        refused[0].1.contains("undeclared") && refused[0].1.contains("hit"),
        "{}",
        refused[0].1
    );
    assert!(refused[0].1.contains("event_writes"), "{}", refused[0].1);
    // Nothing was sent by the refused calls; the engine still ticks.
    assert_eq!(stats(&engine, hits).sent, 0);
    ok(engine.tick());
}

#[test]
fn a_version_2_descriptor_declares_no_events() {
    let engine = Engine::new(1);
    let shared = Shared::new(channel(&engine, c"hit"));
    let reads = [shared.hits];
    let name = c"old";
    let desc = ecs_system_desc {
        struct_size: std::mem::offset_of!(ecs_system_desc, event_reads) as u32,
        name: name.as_ptr(),
        run: Some(reader),
        user_data: shared.user(),
        reads: ptr::null(),
        reads_len: 0,
        writes: ptr::null(),
        writes_len: 0,
        commands: false,
        before: ptr::null(),
        before_len: 0,
        after: ptr::null(),
        after_len: 0,
        spawn_reserve: 0,
        resource_reads: ptr::null(),
        resource_reads_len: 0,
        resource_writes: ptr::null(),
        resource_writes_len: 0,
        run_if: None,
        run_if_user_data: ptr::null_mut(),
        startup: false,
        event_reads: reads.as_ptr(),
        event_reads_len: 1,
        event_writes: ptr::null(),
        event_writes_len: 0,
        sets: ptr::null(),
        sets_len: 0,
        run_exclusive: None,
    };
    // SAFETY: a live engine; `desc` and what it points to live across the call.
    ok(unsafe { ecs_system_add(engine.raw(), &desc) });
    ok(engine.tick());
    let refused = shared.refused.lock().unwrap().clone();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0].0, ECS_ERR_UNDECLARED);
}

/// A run condition that tries to read and send (refused), then lets the
/// system run.
unsafe extern "C" fn reading_condition(ctx: *const ecs_system_ctx, user: *mut c_void) -> bool {
    // SAFETY: the test's `Shared`.
    let shared = unsafe { shared(user) };
    let ctx = ctx.cast_mut();
    let value = 1u64;
    // SAFETY: the condition's context, cast as a careless C caller would.
    shared.check(unsafe {
        ecs_ctx_read_events(
            ctx,
            shared.hits,
            Some(collect),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    });
    // SAFETY: as above; `value` is a local.
    shared.check(unsafe { ecs_ctx_send_event(ctx, shared.hits, (&raw const value).cast(), 8) });
    true
}

/// Reads, and inside the callback reads again (refused).
unsafe extern "C" fn nested_reader(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    struct Nest<'a> {
        ctx: *mut ecs_system_ctx,
        shared: &'a Shared,
        values: Vec<u64>,
    }
    unsafe extern "C" fn inner(event: *const c_void, user: *mut c_void) {
        // SAFETY: the `Nest` below, alive across the read.
        let nest = unsafe { &mut *user.cast::<Nest<'_>>() };
        // SAFETY: `event` holds 8 aligned bytes during the call.
        nest.values.push(unsafe { *event.cast::<u64>() });
        // SAFETY: the running context; a nested read on purpose.
        let status = unsafe {
            ecs_ctx_read_events(
                nest.ctx,
                nest.shared.hits,
                Some(collect),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        nest.shared.check(status);
    }
    // SAFETY: the test's `Shared`.
    let shared = unsafe { shared(user) };
    let mut nest = Nest {
        ctx,
        shared,
        values: Vec::new(),
    };
    // SAFETY: the running context; `nest` is a local.
    shared.check(unsafe {
        ecs_ctx_read_events(
            ctx,
            shared.hits,
            Some(inner),
            (&raw mut nest).cast(),
            ptr::null_mut(),
        )
    });
    shared.seen.lock().unwrap().push((nest.values, 0));
}

#[test]
fn conditions_nested_reads_and_senders_do_not_read() {
    let engine = Engine::new(2);
    let shared = Shared::new(channel(&engine, c"hit"));
    // A sender that tries to read: refused, though it declared the channel.
    ok(spec("write_only", Some(reader), &shared, Declares::Sends).add(&engine));
    let mut gated = spec("gated", Some(nested_reader), &shared, Declares::Both);
    gated.run_if = Some(reading_condition);
    gated.run_if_user_data = shared.user();
    ok(gated.add(&engine));
    ok(send(&engine, shared.hits, 5));
    ok(send(&engine, shared.hits, 6));
    run(&engine, &shared, 1);
    let refused = shared.refused.lock().unwrap().clone();
    let statuses: Vec<ecs_status> = refused.iter().map(|(s, _)| *s).collect();
    // write_only's read; the condition's read and send; one nested read
    // per event.
    let mut sorted = statuses.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            ECS_ERR_UNDECLARED,
            ECS_ERR_WRONG_STATE,
            ECS_ERR_WRONG_STATE,
            ECS_ERR_WRONG_STATE,
            ECS_ERR_WRONG_STATE
        ],
        "{refused:?}"
    );
    let undeclared = &refused
        .iter()
        .find(|(s, _)| *s == ECS_ERR_UNDECLARED)
        .unwrap()
        .1;
    assert!(undeclared.contains("event_reads"), "{undeclared}");
    // The gated system still saw both events, once each (the condition's
    // read moved nothing); write_only's refused read saw nothing.
    let seen = shared.seen();
    assert!(seen.contains(&(vec![5, 6], 0)), "{seen:?}");
    assert_eq!(stats(&engine, shared.hits).sent, 2);
}

/// Reads, sends 77, records a spawn, and fails while `fail` is set.
unsafe extern "C" fn failing(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: the test's `Shared`; the running context.
    unsafe {
        let shared = shared(user);
        let mut values: Vec<u64> = Vec::new();
        shared.check(ecs_ctx_read_events(
            ctx,
            shared.hits,
            Some(collect),
            (&raw mut values).cast(),
            ptr::null_mut(),
        ));
        shared.seen.lock().unwrap().push((values, 0));
        let value = 77u64;
        shared.check(ecs_ctx_send_event(
            ctx,
            shared.hits,
            (&raw const value).cast(),
            8,
        ));
        let mut commands = ptr::null_mut();
        shared.check(ecs_ctx_commands(ctx, &mut commands));
        let mut e = 0;
        shared.check(ecs_commands_spawn(commands, &mut e));
        if shared.reader_on.load(Ordering::Relaxed) {
            shared.check(ecs_ctx_fail(ctx, c"out of ammo".as_ptr()));
            shared.check(ecs_ctx_fail(ctx, ptr::null()));
        }
    }
}

#[test]
fn a_system_that_fails_drops_its_sends_and_commands_and_reads_again() {
    let engine = Engine::new(2);
    let shared = Shared::new(channel(&engine, c"hit"));
    let mut spec = spec("gunner", Some(failing), &shared, Declares::Both);
    spec.commands = true;
    ok(spec.add(&engine));
    ok(send(&engine, shared.hits, 5));
    let entities = engine.count();
    fails(engine.tick(), ECS_ERR_SYSTEM_FAILED, "gunner");
    assert!(last_error().contains("out of ammo"), "{}", last_error());
    assert_eq!(engine.count(), entities, "the spawn was dropped");
    assert_eq!(stats(&engine, shared.hits).sent, 1, "the 77 was dropped");
    // Not failing now: it reads 5 again, and its send and spawn land.
    shared.reader_on.store(false, Ordering::Relaxed);
    ok(engine.tick());
    assert_eq!(shared.seen(), [(vec![5], 0), (vec![5], 0)]);
    assert_eq!(engine.count(), entities + 1);
    assert_eq!(stats(&engine, shared.hits).sent, 2);
    assert!(shared.refused.lock().unwrap().is_empty());
}

/// Fails with an empty message, then with bytes that are not UTF-8.
unsafe extern "C" fn fails_quietly(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: the test's `Shared`; the running context.
    unsafe {
        let shared = shared(user);
        let message: &CStr = if shared.reader_on.load(Ordering::Relaxed) {
            c""
        } else {
            c"caf\xe9"
        };
        shared.check(ecs_ctx_fail(ctx, message.as_ptr()));
    }
}

#[test]
fn an_empty_or_garbled_fail_message_still_fails_the_system() {
    let engine = Engine::new(1);
    let shared = Shared::new(channel(&engine, c"hit"));
    ok(spec("quiet", Some(fails_quietly), &shared, Declares::Nothing).add(&engine));
    fails(
        engine.tick(),
        ECS_ERR_SYSTEM_FAILED,
        "failed (ecs_ctx_fail)",
    );
    shared.reader_on.store(false, Ordering::Relaxed);
    fails(engine.tick(), ECS_ERR_SYSTEM_FAILED, "caf\u{fffd}");
    assert!(shared.refused.lock().unwrap().is_empty());
}

/// Ids carry their kind: a resource or component id passed to an event
/// call is refused, and a channel id passed to a resource or component
/// call, each message saying what the id is. (The three kinds once shared
/// one encoding: a send with the resource id below went to channel 0.)
#[test]
fn an_id_of_another_kind_is_refused_naming_its_kind() {
    let engine = Engine::new(1);
    let hits = channel(&engine, c"hit");
    let counter = engine.resource(c"counter", &7u64);
    let speed = engine.register::<u64>(c"Speed");
    fails(
        send(&engine, counter, 1),
        ECS_ERR_UNKNOWN_EVENT,
        "is a resource id, not an event channel id",
    );
    fails(
        send(&engine, speed, 1),
        ECS_ERR_UNKNOWN_EVENT,
        "is a component id, not an event channel id",
    );
    fails(
        engine.try_resource_get::<u64>(hits).unwrap_err(),
        ECS_ERR_UNKNOWN_RESOURCE,
        "is an event channel id, not a resource id",
    );
    let e = engine.spawn();
    fails(
        engine.try_insert(e, counter, 1u64),
        ECS_ERR_UNKNOWN_COMPONENT,
        "is a resource id, not a component id",
    );
    fails(
        engine.try_insert(e, hits, 1u64),
        ECS_ERR_UNKNOWN_COMPONENT,
        "is an event channel id, not a component id",
    );
    assert_eq!(stats(&engine, hits).sent, 0);
    assert_eq!(engine.resource_get::<u64>(counter), 7);
    assert_eq!(engine.has(e, speed), Ok(false));
    engine.insert(e, speed, 3u64);
    ok(send(&engine, hits, 1));
    assert_eq!(stats(&engine, hits).sent, 1);
}
