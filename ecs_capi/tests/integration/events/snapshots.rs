//! Events in flight and readers' cursors in snapshots: saved, refused,
//! and loads that would not fit the engine.

use super::*;

/// An engine with one channel `hit`, a reader of it, and a system that
/// reads and sends on it (`echo`: each event it reads comes back + 100,
/// a tick later), built.
fn echo_engine() -> (Engine, Box<Shared>) {
    let engine = Engine::new(2);
    let shared = Box::new(Shared::new(channel(&engine, c"hit")));
    ok(spec("read", Some(reader), &shared, Declares::Reads).add(&engine));
    ok(spec("echo", Some(echo), &shared, Declares::Both).add(&engine));
    ok(engine.build());
    (engine, shared)
}

/// Sends back, + 100, every event below 100 it reads.
unsafe extern "C" fn echo(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: the test's `Shared`.
    let shared = unsafe { shared(user) };
    let mut values: Vec<u64> = Vec::new();
    // SAFETY: the running context; `values` is a local.
    shared.check(unsafe {
        ecs_ctx_read_events(
            ctx,
            shared.hits,
            Some(collect),
            (&raw mut values).cast(),
            ptr::null_mut(),
        )
    });
    for value in values.into_iter().filter(|&v| v < 100).map(|v| v + 100) {
        // SAFETY: the running context; `value` is a local of 8 bytes.
        shared.check(unsafe { ecs_ctx_send_event(ctx, shared.hits, (&raw const value).cast(), 8) });
    }
}

#[test]
fn a_snapshot_holds_the_events_in_flight_and_every_readers_cursor() {
    for format in [ECS_SNAPSHOT_POSTCARD, ECS_SNAPSHOT_JSON] {
        let (engine, shared) = echo_engine();
        ok(send(&engine, shared.hits, 4));
        ok(engine.tick());
        ok(send(&engine, shared.hits, 5));
        // In flight: 104 (`echo` has not read its own send) and 5 (sent
        // between ticks).
        let bytes = engine.save(format).expect("events in flight are saved");
        let before = stats(&engine, shared.hits);
        run(&engine, &shared, 3);
        let went_on = shared.seen();
        // `echo` runs first (it sends), reads 104 and 5 and sends 105.
        assert_eq!(went_on[..2], [(vec![4, 104], 0), (vec![5, 105], 0)]);

        // The same engine, put back: the same three ticks again.
        ok(engine.load(format, &bytes));
        let counts = stats(&engine, shared.hits);
        assert_eq!(
            (counts.sent, counts.retained, counts.missed),
            (before.sent, before.retained, before.missed)
        );
        shared.seen.lock().unwrap().clear();
        run(&engine, &shared, 3);
        assert_eq!(shared.seen(), went_on[1..], "format {format}");

        // And a fresh engine built the same way.
        let (fresh, fresh_shared) = echo_engine();
        ok(fresh.load(format, &bytes));
        run(&fresh, &fresh_shared, 3);
        assert_eq!(fresh_shared.seen(), went_on[1..], "format {format}");
        assert!(shared.refused.lock().unwrap().is_empty());
    }
}

#[test]
fn a_channel_not_savable_refuses_a_save_while_it_holds_events() {
    let engine = Engine::new(1);
    let hits = engine.try_event_channel(c"hit", 8, 8, false).unwrap();
    ok(engine.build());
    let bytes = engine.save(ECS_SNAPSHOT_POSTCARD).expect("empty: saved");
    ok(send(&engine, hits, 1));
    fails(
        engine.save(ECS_SNAPSHOT_POSTCARD).unwrap_err(),
        ECS_ERR_SNAPSHOT,
        "event channel `hit` holds 1 event(s) but is not savable",
    );
    // Loading the empty save drops the event, as a load drops the values
    // of components a snapshot does not hold.
    ok(engine.load(ECS_SNAPSHOT_POSTCARD, &bytes));
    assert_eq!(stats(&engine, hits).retained, 0);
}

#[test]
fn a_snapshot_whose_channels_have_other_readers_loads_nothing() {
    let (engine, shared) = echo_engine();
    ok(send(&engine, shared.hits, 4));
    let bytes = engine.save(ECS_SNAPSHOT_POSTCARD).unwrap();
    // The same systems, but `echo` only sends here: one reader less.
    let other = Engine::new(2);
    let other_shared = Shared::new(channel(&other, c"hit"));
    ok(spec("read", Some(reader), &other_shared, Declares::Reads).add(&other));
    ok(spec("echo", Some(echo), &other_shared, Declares::Sends).add(&other));
    ok(other.build());
    fails(
        other.load(ECS_SNAPSHOT_POSTCARD, &bytes),
        ECS_ERR_SNAPSHOT,
        "event channel `hit`: the snapshot's reader systems are [0, 1], this engine's [0]",
    );
    assert_eq!(other.ticks(), 0);
}

#[test]
fn a_snapshot_with_other_event_channels_loads_nothing() {
    let (engine, shared) = echo_engine();
    ok(send(&engine, shared.hits, 4));
    let bytes = engine.save(ECS_SNAPSHOT_POSTCARD).unwrap();
    for (name, size) in [(c"miss", 8), (c"hit", 4)] {
        let other = Engine::new(1);
        try_channel(&other, name, size, 4).unwrap();
        ok(other.build());
        fails(
            other.load(ECS_SNAPSHOT_POSTCARD, &bytes),
            ECS_ERR_SNAPSHOT,
            "the snapshot's event channels are `hit` (8-byte events)",
        );
        assert_eq!(other.ticks(), 0);
    }
    let none = Engine::new(1);
    ok(none.build());
    fails(
        none.load(ECS_SNAPSHOT_POSTCARD, &bytes),
        ECS_ERR_SNAPSHOT,
        "this engine's none",
    );
}

#[test]
fn an_event_sent_after_a_load_that_moved_the_clock_reaches_the_next_tick() {
    let make = || {
        let engine = Engine::new(1);
        let shared = Box::new(Shared::new(channel(&engine, c"hit")));
        ok(spec("read", Some(reader), &shared, Declares::Reads).add(&engine));
        ok(engine.build());
        (engine, shared)
    };
    let (ahead, ahead_shared) = make();
    run(&ahead, &ahead_shared, 20);
    let bytes = ahead.save(ECS_SNAPSHOT_POSTCARD).unwrap();
    let (engine, shared) = make();
    run(&engine, &shared, 1);
    ok(engine.load(ECS_SNAPSHOT_POSTCARD, &bytes));
    assert_eq!(engine.ticks(), 20);
    ok(send(&engine, shared.hits, 9));
    run(&engine, &shared, 1);
    assert_eq!(shared.seen().last().unwrap(), &(vec![9], 0));
    let counts = stats(&engine, shared.hits);
    assert_eq!((counts.retained, counts.missed), (1, 0));
}
