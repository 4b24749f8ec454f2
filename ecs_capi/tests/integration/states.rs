//! In-memory states from C (`ecs_state_create`, `ecs_engine_save_state`,
//! `ecs_engine_restore_state`, `ecs_state_ticks`, `ecs_state_destroy`),
//! called as a C program would: an engine restored to a save runs the
//! same ticks again (components, resources and events in flight, none of
//! them declared savable), a state restores into a second engine built
//! the same way, and every refusal has its status and message and leaves
//! the engine and the state as they were.

use crate::common;

use std::ffi::c_void;
use std::ptr;

use common::*;
use ecs_capi::*;

/// One engine's ids, the systems' user data.
struct Ids {
    /// The movement system's (`common::movement`).
    moves: MoveIds,
    counter: ecs_resource_id,
    sum: ecs_resource_id,
    ticked: ecs_event_id,
}

/// Adds 1 to the counter, sends the new count on `ticked` and spawns an
/// entity at (count, 0) moving (1, 0.5).
unsafe extern "C" fn step(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the engine's `Ids`; every pointer is valid for its call.
    unsafe {
        let ids = &*user.cast::<Ids>();
        let mut counter: *mut c_void = ptr::null_mut();
        ok(ecs_ctx_resource_write(ctx, ids.counter, &mut counter));
        let count = &mut *counter.cast::<u64>();
        *count += 1;
        ok(ecs_ctx_send_event(
            ctx,
            ids.ticked,
            (&raw const *count).cast(),
            8,
        ));
        let mut commands = ptr::null_mut();
        ok(ecs_ctx_commands(ctx, &mut commands));
        let mut e = 0;
        ok(ecs_commands_spawn(commands, &mut e));
        let p = Vec2 {
            x: *count as f32,
            y: 0.0,
        };
        let v = Vec2 { x: 1.0, y: 0.5 };
        ok(ecs_commands_insert(
            commands,
            e,
            ids.moves.position,
            (&raw const p).cast(),
        ));
        ok(ecs_commands_insert(
            commands,
            e,
            ids.moves.velocity,
            (&raw const v).cast(),
        ));
    }
}

/// Adds every event read on `ticked` to the sum, times the order it came
/// in (so a lost, doubled or reordered event changes the sum).
unsafe extern "C" fn total(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    unsafe extern "C" fn add(event: *const c_void, user: *mut c_void) {
        // SAFETY: an 8-byte event; `user` is the `(sum, order)` pair below.
        unsafe {
            let (sum, order) = &mut *user.cast::<(u64, u64)>();
            *order += 1;
            *sum = sum
                .wrapping_mul(31)
                .wrapping_add(event.cast::<u64>().read_unaligned());
        }
    }
    // SAFETY: `user` is the engine's `Ids`; every pointer is valid for its call.
    unsafe {
        let ids = &*user.cast::<Ids>();
        let mut sum: *mut c_void = ptr::null_mut();
        ok(ecs_ctx_resource_write(ctx, ids.sum, &mut sum));
        let mut acc = (sum.cast::<u64>().read(), 0u64);
        let mut read = ecs_events_read::default();
        ok(ecs_ctx_read_events(
            ctx,
            ids.ticked,
            Some(add),
            (&raw mut acc).cast(),
            &mut read,
        ));
        sum.cast::<u64>().write(acc.0);
    }
}

/// An engine with the three systems, built; `ids` must outlive it.
fn game(ids: &mut Box<Ids>) -> Engine {
    let engine = Engine::new(2);
    ids.moves = MoveIds {
        position: engine.register::<Vec2>(c"Position"),
        velocity: engine.register::<Vec2>(c"Velocity"),
    };
    ids.counter = engine.resource(c"counter", &0u64);
    ids.sum = engine.resource(c"sum", &0u64);
    ids.ticked = engine.try_event_channel(c"ticked", 8, 8, false).unwrap();
    let base: *mut Ids = &raw mut **ids;
    let user: *mut c_void = base.cast();
    // SAFETY: `base` points to the live `Ids`; no reference is made.
    let moves: *mut c_void = unsafe { &raw mut (*base).moves }.cast();
    let mut spec = SystemSpec::new("step", Some(step));
    spec.user_data = user;
    spec.resource_writes = vec![ids.counter];
    spec.event_writes = vec![ids.ticked];
    spec.commands = true;
    ok(spec.add(&engine));
    let mut spec = SystemSpec::new("movement", Some(movement));
    spec.user_data = moves;
    spec.reads = vec![ids.moves.velocity];
    spec.writes = vec![ids.moves.position];
    ok(spec.add(&engine));
    let mut spec = SystemSpec::new("total", Some(total));
    spec.user_data = user;
    spec.resource_writes = vec![ids.sum];
    spec.event_reads = vec![ids.ticked];
    ok(spec.add(&engine));
    ok(engine.build());
    engine
}

fn new_ids() -> Box<Ids> {
    Box::new(Ids {
        moves: MoveIds {
            position: 0,
            velocity: 0,
        },
        counter: 0,
        sum: 0,
        ticked: 0,
    })
}

/// What a tick left: (ticks, entities, checksum, counter, sum).
type Seen = (u64, usize, u64, u64, u64);

fn seen(engine: &Engine, ids: &Ids) -> Seen {
    (
        engine.ticks(),
        engine.count(),
        engine
            .checksum(&[ids.moves.position, ids.moves.velocity])
            .unwrap(),
        engine.resource_get::<u64>(ids.counter),
        engine.resource_get::<u64>(ids.sum),
    )
}

/// Runs `ticks` ticks, recording what each left.
fn play(engine: &Engine, ids: &Ids, ticks: u32) -> Vec<Seen> {
    (0..ticks)
        .map(|_| {
            ok(engine.tick());
            seen(engine, ids)
        })
        .collect()
}

fn send(engine: &Engine, ids: &Ids, value: u64) {
    // SAFETY: a live engine; `value` is a local of 8 bytes.
    ok(unsafe { ecs_event_send(engine.raw(), ids.ticked, (&raw const value).cast(), 8) });
}

#[test]
fn a_restored_engine_runs_the_ticks_after_the_save_again() {
    let mut ids = new_ids();
    let engine = game(&mut ids);
    play(&engine, &ids, 3);
    // An event in flight at the save: read by the first tick after it.
    send(&engine, &ids, 1_000);
    let state = State::new();
    ok(state.save(&engine));
    assert_eq!(state.ticks(), Ok(3));
    let before = seen(&engine, &ids);
    let first = play(&engine, &ids, 5);
    ok(state.restore(&engine));
    assert_eq!(seen(&engine, &ids), before);
    let again = play(&engine, &ids, 5);
    assert_eq!(again, first);
    assert_eq!(first[0].3, 4, "the counter went on from the save");
    // The same state again, then saved into once more (reusing its
    // memory) at a later tick.
    ok(state.restore(&engine));
    assert_eq!(play(&engine, &ids, 5), first);
    ok(state.save(&engine));
    assert_eq!(state.ticks(), Ok(8));
    let later = play(&engine, &ids, 2);
    ok(state.restore(&engine));
    assert_eq!(play(&engine, &ids, 2), later);
}

#[test]
fn a_state_restores_into_a_second_engine_built_the_same_way() {
    let mut ids = new_ids();
    let engine = game(&mut ids);
    play(&engine, &ids, 4);
    send(&engine, &ids, 7);
    let state = State::new();
    ok(state.save(&engine));
    let first = play(&engine, &ids, 6);
    drop(engine);
    let mut other_ids = new_ids();
    let other = game(&mut other_ids);
    play(&other, &other_ids, 9);
    ok(state.restore(&other));
    assert_eq!(play(&other, &other_ids, 6), first);
}

/// Does nothing, but a component with it has a destructor: its values are
/// not plain bytes.
unsafe extern "C" fn no_op(_: *mut c_void, _: *mut c_void) {}

#[test]
fn refusals_leave_the_engine_and_the_state_as_they_were() {
    let state = State::new();
    let mut ids = new_ids();
    let engine = game(&mut ids);
    fails(
        state.restore(&engine),
        ECS_ERR_WRONG_STATE,
        "the state is empty",
    );
    assert_eq!(state.ticks(), Err(ECS_ERR_WRONG_STATE));
    play(&engine, &ids, 2);
    ok(state.save(&engine));

    // Before the build.
    let unbuilt = Engine::new(1);
    fails(state.save(&unbuilt), ECS_ERR_WRONG_STATE, "not built");
    fails(state.restore(&unbuilt), ECS_ERR_WRONG_STATE, "not built");
    assert_eq!(state.ticks(), Ok(2));

    // Null pointers.
    // SAFETY: NULL is allowed for every pointer.
    unsafe {
        fails(
            ecs_engine_save_state(engine.raw(), ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "state",
        );
        fails(
            ecs_engine_restore_state(ptr::null(), state.0),
            ECS_ERR_NULL_POINTER,
            "engine",
        );
        fails(
            ecs_state_ticks(state.0, ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "out",
        );
        ecs_state_destroy(ptr::null_mut());
    }

    // An engine with one more resource, or other channels: refused,
    // unchanged.
    let mut more_ids = new_ids();
    let more = game(&mut more_ids);
    more.resource(c"extra", &5u32);
    play(&more, &more_ids, 1);
    let kept = seen(&more, &more_ids);
    fails(state.restore(&more), ECS_ERR_SNAPSHOT, "`extra` (4 bytes)");
    assert_eq!(seen(&more, &more_ids), kept);
    let mut other_ids = new_ids();
    let other = game(&mut other_ids);
    other.try_event_channel(c"shots", 8, 8, false).unwrap();
    fails(state.restore(&other), ECS_ERR_SNAPSHOT, "event channels");

    // A component with a destructor (values or not): the save is refused
    // and the state keeps the last save, whole.
    let mut desc = component_desc::<u32>(c"Handle");
    desc.drop = Some(no_op);
    engine.register_desc(&desc).unwrap();
    play(&engine, &ids, 1);
    fails(state.save(&engine), ECS_ERR_SNAPSHOT, "`Handle`");
    assert_eq!(state.ticks(), Ok(2));
    let mut fresh_ids = new_ids();
    let fresh = game(&mut fresh_ids);
    ok(state.restore(&fresh));
    assert_eq!(fresh.ticks(), 2);
    assert_eq!(fresh.resource_get::<u64>(fresh_ids.counter), 2);
}

unsafe extern "C" fn idle(_: *mut ecs_system_ctx, _: *mut c_void) {}

/// An engine with the components `(name, bytes)` in that order, an
/// entity holding each (value 7), and one system `s` (with commands and a
/// reserve of 4 handles when `commands`), built and run once.
fn small(components: &[(&std::ffi::CStr, usize)], commands: bool) -> Engine {
    let engine = Engine::new(1);
    for &(name, size) in components {
        let desc = ecs_component_desc {
            size,
            align: size,
            ..component_desc::<u8>(name)
        };
        let id = engine.register_desc(&desc).unwrap();
        let e = engine.spawn();
        let value = [7u8; 8];
        // SAFETY: a live engine; `value` holds at least `size` bytes.
        ok(unsafe { ecs_insert(engine.raw(), e, id, value.as_ptr().cast()) });
    }
    let mut spec = SystemSpec::new("s", Some(idle));
    spec.commands = commands;
    spec.spawn_reserve = if commands { 4 } else { 0 };
    ok(spec.add(&engine));
    ok(engine.tick());
    engine
}

/// The registry and the schedule would take a state whose component
/// types or command buffers differ (emptying, adding or replacing what
/// the engine has): the C layer compares them first, and nothing changes.
#[test]
fn a_state_of_other_components_or_command_buffers_is_refused_and_changes_nothing() {
    let saved = small(&[(c"P", 4)], true);
    let state = State::new();
    ok(state.save(&saved));
    let others = [
        (small(&[(c"P", 4), (c"Extra", 8)], true), "`Extra` (8 bytes"),
        (
            small(&[], true),
            "components are `P` (4 bytes, aligned to 4), this engine's none",
        ),
        (small(&[(c"P", 8)], true), "`P` (8 bytes, aligned to 8)"),
        (small(&[(c"P", 4)], false), "command"),
    ];
    for (engine, words) in others {
        let before = (engine.count(), engine.ticks(), engine.lookup(c"Extra").ok());
        fails(state.restore(&engine), ECS_ERR_SNAPSHOT, words);
        let after = (engine.count(), engine.ticks(), engine.lookup(c"Extra").ok());
        assert_eq!(after, before, "{words}");
    }
    let same = small(&[(c"P", 4)], true);
    ok(state.restore(&same));
}

#[test]
fn a_save_refused_for_a_destructor_says_so_in_c_terms() {
    let engine = small(&[(c"P", 4)], false);
    let mut desc = component_desc::<u32>(c"Handle");
    desc.drop = Some(no_op);
    engine.register_desc(&desc).unwrap();
    let state = State::new();
    fails(
        state.save(&engine),
        ECS_ERR_SNAPSHOT,
        "component `Handle` was registered with a destructor (ecs_component_desc.drop)",
    );
    assert!(!last_error().contains("Registry::"), "{}", last_error());
}
