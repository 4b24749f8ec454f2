//! Events between C systems (through the rlib): writers before readers
//! whatever the order added, writers merged in the order added on any
//! thread count, sends between ticks, a cursor per reader with the
//! retention window and missed counts, and every bad call refused with a
//! status.

use crate::common;

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
    engine.try_event_channel(name, size, align, true)
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

mod misuse;
mod snapshots;
