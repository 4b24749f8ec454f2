//! Events between C systems (through the rlib): writers before readers
//! whatever the order added, writers merged in the order added on any
//! thread count, sends between ticks, a cursor per reader with the
//! retention window and missed counts, and every bad call refused with a
//! status.

mod common;

use std::ffi::{CStr, c_void};
use std::ptr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use common::*;
use ecs_capi::*;

/// Registers a savable event channel, returning its id or the status.
fn try_channel(
    engine: &Engine,
    name: &CStr,
    size: usize,
    align: usize,
) -> Result<ecs_event_id, ecs_status> {
    try_channel_desc(engine, name, size, align, true)
}

/// Registers an event channel, savable or not.
fn try_channel_desc(
    engine: &Engine,
    name: &CStr,
    size: usize,
    align: usize,
    savable: bool,
) -> Result<ecs_event_id, ecs_status> {
    let desc = ecs_event_desc {
        struct_size: size_of::<ecs_event_desc>() as u32,
        name: name.as_ptr(),
        size,
        align,
        savable,
    };
    let mut id = 0;
    // SAFETY: a live engine; `desc`, its name and `id` are locals.
    let status = unsafe { ecs_event_register(engine.raw(), &desc, &mut id) };
    if status == ECS_OK {
        Ok(id)
    } else {
        Err(status)
    }
}

/// A channel of `u64` events named `name`, which must register.
fn channel(engine: &Engine, name: &CStr) -> ecs_event_id {
    try_channel(engine, name, 8, 8).unwrap_or_else(|status| panic!("{status}: {}", last_error()))
}

/// Sends `value` between ticks.
fn send(engine: &Engine, id: ecs_event_id, value: u64) -> ecs_status {
    // SAFETY: a live engine; `value` is a local of 8 bytes.
    unsafe { ecs_event_send(engine.raw(), id, (&raw const value).cast(), 8) }
}

fn stats(engine: &Engine, id: ecs_event_id) -> ecs_event_stats {
    let mut out = ecs_event_stats::default();
    // SAFETY: a live engine; `out` is a local.
    ok(unsafe { ecs_event_get_stats(engine.raw(), id, &mut out) });
    out
}

/// What the test systems share.
struct Shared {
    hits: ecs_event_id,
    /// The tick number each writer stamps its events with.
    tick: AtomicU64,
    /// What the reader saw, per run: the values, and the missed count.
    seen: Mutex<Vec<(Vec<u64>, u64)>>,
    /// Statuses of failed calls, with the message.
    refused: Mutex<Vec<(ecs_status, String)>>,
    /// The reader runs only while this is `true`.
    reader_on: AtomicBool,
}

impl Shared {
    fn new(hits: ecs_event_id) -> Shared {
        Shared {
            hits,
            tick: AtomicU64::new(0),
            seen: Mutex::new(Vec::new()),
            refused: Mutex::new(Vec::new()),
            reader_on: AtomicBool::new(true),
        }
    }

    fn user(&self) -> *mut c_void {
        (&raw const *self).cast_mut().cast()
    }

    fn check(&self, status: ecs_status) {
        if status != ECS_OK {
            self.refused.lock().unwrap().push((status, last_error()));
        }
    }

    fn seen(&self) -> Vec<(Vec<u64>, u64)> {
        self.seen.lock().unwrap().clone()
    }
}

/// # Safety
///
/// `user` is a live `Shared`.
unsafe fn shared<'a>(user: *mut c_void) -> &'a Shared {
    // SAFETY: the caller's promise.
    unsafe { &*user.cast::<Shared>() }
}

/// Sends `tick * 10 + k` for each `k` in `ks`.
///
/// # Safety
///
/// `ctx` is the running system's context and `user` a live `Shared`.
unsafe fn send_each(ctx: *mut ecs_system_ctx, user: *mut c_void, ks: &[u64]) {
    // SAFETY: the caller's promise.
    let shared = unsafe { shared(user) };
    let tick = shared.tick.load(Ordering::Relaxed);
    for k in ks {
        let value = tick * 10 + k;
        // SAFETY: the running context; `value` is a local of 8 bytes.
        shared.check(unsafe { ecs_ctx_send_event(ctx, shared.hits, (&raw const value).cast(), 8) });
    }
}

unsafe extern "C" fn first_writer(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: called by the engine with the system's context and the test's `Shared`.
    unsafe { send_each(ctx, user, &[1, 2]) };
}

unsafe extern "C" fn second_writer(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: as above.
    unsafe { send_each(ctx, user, &[5]) };
}

unsafe extern "C" fn collect(event: *const c_void, user: *mut c_void) {
    // SAFETY: `user` is the reader's `Vec<u64>`; `event` holds 8 aligned bytes.
    unsafe { (*user.cast::<Vec<u64>>()).push(*event.cast::<u64>()) };
}

/// Reads the channel once, recording the values and the missed count.
unsafe extern "C" fn reader(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: the test's `Shared`.
    let shared = unsafe { shared(user) };
    let mut values: Vec<u64> = Vec::new();
    let mut counts = ecs_events_read::default();
    // SAFETY: the running context; `values` and `counts` are locals.
    let status = unsafe {
        ecs_ctx_read_events(
            ctx,
            shared.hits,
            Some(collect),
            (&raw mut values).cast(),
            &mut counts,
        )
    };
    shared.check(status);
    assert_eq!(counts.read, values.len() as u64);
    shared.seen.lock().unwrap().push((values, counts.missed));
}

/// Reads twice in one run: the second read must hand out nothing.
unsafe extern "C" fn reads_twice(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: the test's `Shared`.
    let shared = unsafe { shared(user) };
    for _ in 0..2 {
        let mut values: Vec<u64> = Vec::new();
        // SAFETY: the running context; `values` is a local; NULL counts are allowed.
        shared.check(unsafe {
            ecs_ctx_read_events(
                ctx,
                shared.hits,
                Some(collect),
                (&raw mut values).cast(),
                ptr::null_mut(),
            )
        });
        shared.seen.lock().unwrap().push((values, 0));
    }
}

unsafe extern "C" fn reader_on(_: *const ecs_system_ctx, user: *mut c_void) -> bool {
    // SAFETY: the test's `Shared`.
    unsafe { shared(user) }.reader_on.load(Ordering::Relaxed)
}

/// What a test system declares on the `hit` channel.
#[derive(Clone, Copy, PartialEq)]
enum Declares {
    Nothing,
    Reads,
    Sends,
    Both,
}

fn spec(name: &str, run: ecs_system_fn, shared: &Shared, declares: Declares) -> SystemSpec {
    let mut spec = SystemSpec::new(name, run);
    spec.user_data = shared.user();
    if matches!(declares, Declares::Reads | Declares::Both) {
        spec.event_reads = vec![shared.hits];
    }
    if matches!(declares, Declares::Sends | Declares::Both) {
        spec.event_writes = vec![shared.hits];
    }
    spec
}

/// Runs `ticks` ticks, stamping each with its number first.
fn run(engine: &Engine, shared: &Shared, ticks: u64) {
    for _ in 0..ticks {
        shared.tick.store(engine.ticks(), Ordering::Relaxed);
        ok(engine.tick());
    }
}

/// The reader added first, two writers after it: what the reader sees
/// over `ticks` ticks on `threads` threads.
fn reader_first(threads: u32, ticks: u64) -> Vec<(Vec<u64>, u64)> {
    let engine = Engine::new(threads);
    let shared = Shared::new(channel(&engine, c"hit"));
    ok(spec("read", Some(reader), &shared, Declares::Reads).add(&engine));
    for (name, run) in [
        ("first", first_writer as unsafe extern "C" fn(_, _)),
        ("second", second_writer),
    ] {
        ok(spec(name, Some(run), &shared, Declares::Sends).add(&engine));
    }
    run(&engine, &shared, ticks);
    assert!(shared.refused.lock().unwrap().is_empty());
    assert_eq!(stats(&engine, shared.hits).sent, 3 * ticks);
    shared.seen()
}

#[test]
fn a_reader_sees_its_ticks_events_in_the_order_the_writers_were_added() {
    let one = reader_first(1, 4);
    let expected: Vec<(Vec<u64>, u64)> = (0..4)
        .map(|t| (vec![t * 10 + 1, t * 10 + 2, t * 10 + 5], 0))
        .collect();
    assert_eq!(one, expected);
    for threads in [2, 4] {
        assert_eq!(reader_first(threads, 4), expected, "{threads} threads");
    }
}

#[test]
fn events_sent_between_ticks_are_read_once_by_the_next_tick() {
    let engine = Engine::new(2);
    let shared = Shared::new(channel(&engine, c"hit"));
    ok(spec("read", Some(reader), &shared, Declares::Reads).add(&engine));
    ok(send(&engine, shared.hits, 7));
    ok(send(&engine, shared.hits, 8));
    run(&engine, &shared, 2);
    ok(send(&engine, shared.hits, 9));
    run(&engine, &shared, 1);
    assert_eq!(shared.seen(), [(vec![7, 8], 0), (vec![], 0), (vec![9], 0)]);
    let counts = stats(&engine, shared.hits);
    assert_eq!((counts.sent, counts.missed), (3, 0));
}

#[test]
fn a_reader_that_did_not_run_reads_the_window_later_and_counts_the_rest_missed() {
    let engine = Engine::new(2);
    let shared = Shared::new(channel(&engine, c"hit"));
    ok(spec("write", Some(second_writer), &shared, Declares::Sends).add(&engine));
    let mut read = spec("read", Some(reader), &shared, Declares::Reads);
    read.run_if = Some(reader_on);
    read.run_if_user_data = shared.user();
    ok(read.add(&engine));

    // Skipped for 3 ticks: the 4th run reads all four ticks' events.
    shared.reader_on.store(false, Ordering::Relaxed);
    run(&engine, &shared, 3);
    shared.reader_on.store(true, Ordering::Relaxed);
    run(&engine, &shared, 1);
    assert_eq!(shared.seen(), [(vec![5, 15, 25, 35], 0)]);

    // Skipped for 12 ticks (4 to 15): the events of tick t are dropped
    // when tick t + 8 starts, so the run of tick 16 sees those of ticks 9
    // to 16 and counts the 5 of ticks 4 to 8 missed.
    shared.reader_on.store(false, Ordering::Relaxed);
    run(&engine, &shared, 12);
    shared.reader_on.store(true, Ordering::Relaxed);
    run(&engine, &shared, 1);
    let (values, missed) = shared.seen()[1].clone();
    let expected: Vec<u64> = (9..=16).map(|t| t * 10 + 5).collect();
    assert_eq!((values, missed), (expected, 5));
    let counts = stats(&engine, shared.hits);
    assert_eq!((counts.sent, counts.missed), (17, 5));
}

#[test]
fn a_second_read_in_one_run_hands_out_nothing_new() {
    let engine = Engine::new(1);
    let shared = Shared::new(channel(&engine, c"hit"));
    ok(spec("read", Some(reads_twice), &shared, Declares::Reads).add(&engine));
    ok(send(&engine, shared.hits, 3));
    run(&engine, &shared, 2);
    assert_eq!(
        shared.seen(),
        [(vec![3], 0), (vec![], 0), (vec![], 0), (vec![], 0)]
    );
}

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
    };
    // SAFETY: a live engine; `desc` and what it points to live across the call.
    ok(unsafe { ecs_system_add(engine.raw(), &desc) });
    ok(engine.tick());
    let refused = shared.refused.lock().unwrap().clone();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0].0, ECS_ERR_UNDECLARED);
}

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
    let hits = try_channel_desc(&engine, c"hit", 8, 8, false).unwrap();
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
