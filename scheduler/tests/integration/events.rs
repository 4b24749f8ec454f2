//! Events between systems: writers before readers, writers of one wave
//! merged in registration order, every event seen exactly once within the
//! retention window, drops counted, sends from commands and from outside.

use crate::common::wave_names;
use command_buffer::CommandBuffer;
use ecs_engine::Registry;
use parking_lot::Mutex;
use scheduler::{
    Commands, EventCommands, EventReader, EventWriter, Events, ResMut, Schedule, StatefulSystem,
    Tick,
};

/// An event: who sent it and its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ping {
    from: u32,
    n: u32,
}

fn tick(number: u64) -> Tick {
    Tick {
        number,
        step: 1.0 / 60.0,
        delta: 0.0,
    }
}

/// Sends `count` pings per run, each numbered.
struct Sender {
    id: u32,
    count: u32,
}

impl StatefulSystem for Sender {
    type Params = EventWriter<'static, Ping>;
    fn run(&mut self, mut pings: EventWriter<'_, Ping>) {
        for n in 0..self.count {
            pings.send(Ping { from: self.id, n });
        }
    }
}

/// Keeps every ping it sees, and what it missed.
#[derive(Default)]
struct Log {
    seen: Vec<Ping>,
    missed: u64,
}

impl StatefulSystem for Log {
    type Params = EventReader<'static, Ping>;
    fn run(&mut self, pings: EventReader<'_, Ping>) {
        self.seen.extend(pings.iter().copied());
        self.missed += pings.missed();
    }
}

#[test]
fn readers_run_after_writers_and_writers_share_a_wave() {
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    builder.add(Log::default()).named("log");
    for id in 0..4 {
        builder
            .add(Sender { id, count: 3 })
            .named(format!("sender{id}"));
    }
    let schedule = builder.build(&mut registry).unwrap();
    assert_eq!(
        wave_names(&schedule),
        [
            vec!["sender0", "sender1", "sender2", "sender3"],
            vec!["log"]
        ]
    );
    assert!(schedule.explain().to_string().contains("event "));
}

/// 4 senders with different counts in one wave, one reader; every event
/// once, in registration order, whatever the threads.
fn pings_on(threads: usize) -> Vec<Ping> {
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    builder.threads(threads);
    let log = builder.add(Log::default()).named("log").id();
    for id in 0..4 {
        builder
            .add(Sender {
                id,
                count: 100 * (id + 1),
            })
            .named(format!("sender{id}"));
    }
    let mut schedule = builder.build(&mut registry).unwrap();
    for number in 0..5 {
        schedule.run(&mut registry, tick(number)).unwrap();
    }
    let state = schedule.state::<Log>(log).unwrap();
    assert_eq!(state.missed, 0);
    // What the reader has seen goes at the next tick: one tick is kept.
    let events = registry.resource::<Events<Ping>>().unwrap();
    assert_eq!((events.sent(), events.len()), (5 * 1000, 1000));
    state.seen.clone()
}

#[test]
fn every_event_is_seen_once_in_registration_order_on_any_thread_count() {
    let seen = pings_on(1);
    let per_tick: Vec<Ping> = (0..4)
        .flat_map(|from| (0..100 * (from + 1)).map(move |n| Ping { from, n }))
        .collect();
    let expected: Vec<Ping> = (0..5).flat_map(|_| per_tick.iter().copied()).collect();
    assert_eq!(seen, expected);
    for threads in [2, 8] {
        assert_eq!(pings_on(threads), expected, "{threads} threads");
    }
}

#[test]
fn a_reader_that_skips_ticks_gets_every_event_within_the_window_and_counts_the_rest() {
    let mut registry = Registry::new();
    registry.insert_resource(Events::<Ping>::with_retention(3));
    let mut builder = Schedule::builder();
    builder.add(Sender { id: 0, count: 1 }).named("sender");
    let log = builder.add(Log::default()).named("log").id();
    let mut schedule = builder.build(&mut registry).unwrap();
    let mut number = 0;
    let mut run = |schedule: &mut Schedule, registry: &mut Registry| {
        schedule.run(registry, tick(number)).unwrap();
        number += 1;
    };
    // Off for 2 ticks: within the window of 3.
    schedule.set_enabled("log", false).unwrap();
    run(&mut schedule, &mut registry);
    run(&mut schedule, &mut registry);
    schedule.set_enabled("log", true).unwrap();
    run(&mut schedule, &mut registry);
    let state = schedule.state::<Log>(log).unwrap();
    assert_eq!((state.seen.len(), state.missed), (3, 0));
    // Off for ticks 3 to 7: at the start of tick 8, the events of ticks
    // 3 to 5 are older than the window of 3 ticks: dropped, and counted.
    schedule.set_enabled("log", false).unwrap();
    for _ in 0..5 {
        run(&mut schedule, &mut registry);
    }
    schedule.set_enabled("log", true).unwrap();
    run(&mut schedule, &mut registry);
    let state = schedule.state::<Log>(log).unwrap();
    assert_eq!((state.seen.len(), state.missed), (3 + 3, 3));
    assert_eq!(state.seen.last(), Some(&Ping { from: 0, n: 0 }));
    let events = registry.resource::<Events<Ping>>().unwrap();
    assert_eq!((events.sent(), events.missed(), events.len()), (9, 3, 3));
}

#[test]
fn events_from_commands_and_from_outside_reach_readers_once() {
    fn announce(mut commands: Commands<'_>, tick: Tick) {
        commands.send_event(Ping {
            from: 9,
            n: tick.number as u32,
        });
    }
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    let log = builder.add(Log::default()).named("log").id();
    builder.add(announce);
    let mut schedule = builder.build(&mut registry).unwrap();
    Events::send_to(&mut registry, Ping { from: 7, n: 0 });
    schedule.run(&mut registry, tick(0)).unwrap();
    // The command's event arrives after the reader ran: seen next tick.
    let state = schedule.state::<Log>(log).unwrap();
    assert_eq!(state.seen, [Ping { from: 7, n: 0 }]);
    let mut outside = CommandBuffer::new();
    outside.send_event(Ping { from: 8, n: 1 });
    outside.apply(&mut registry);
    schedule.run(&mut registry, tick(1)).unwrap();
    schedule.run(&mut registry, tick(2)).unwrap();
    let state = schedule.state::<Log>(log).unwrap();
    assert_eq!(
        state.seen,
        [
            Ping { from: 7, n: 0 },
            Ping { from: 9, n: 0 },
            Ping { from: 8, n: 1 },
            Ping { from: 9, n: 1 },
        ]
    );
}

#[test]
fn a_failing_writer_sends_nothing() {
    static FAIL: Mutex<bool> = Mutex::new(true);
    fn flaky(mut pings: EventWriter<'_, Ping>, mut count: ResMut<'_, u32>) {
        pings.send(Ping { from: 1, n: *count });
        *count += 1;
        assert!(!*FAIL.lock(), "flaky fails");
    }
    let mut registry = Registry::new();
    registry.insert_resource(0_u32);
    let mut builder = Schedule::builder();
    builder.add(Sender { id: 0, count: 1 }).named("sender");
    builder.add(flaky);
    let log = builder.add(Log::default()).named("log").id();
    let mut schedule = builder.build(&mut registry).unwrap();
    assert!(schedule.run(&mut registry, tick(0)).is_err());
    *FAIL.lock() = false;
    schedule.run(&mut registry, tick(1)).unwrap();
    let state = schedule.state::<Log>(log).unwrap();
    assert_eq!(
        state.seen,
        [
            Ping { from: 0, n: 0 },
            Ping { from: 0, n: 0 },
            Ping { from: 1, n: 1 }
        ]
    );
}

#[test]
fn the_event_iterator_walks_every_chunk_with_an_exact_size() {
    /// Checks `iter` against `chunks` (order, `len`, `size_hint` at every
    /// step) and keeps what it saw.
    #[derive(Default)]
    struct Walk(Vec<Ping>);
    impl StatefulSystem for Walk {
        type Params = EventReader<'static, Ping>;
        fn run(&mut self, pings: EventReader<'_, Ping>) {
            let by_chunks: Vec<Ping> = pings.chunks().flatten().copied().collect();
            let mut iter = pings.iter();
            assert_eq!(iter.len(), pings.len());
            let mut by_for = Vec::new();
            while let Some(&ping) = iter.next() {
                by_for.push(ping);
                let left = by_chunks.len() - by_for.len();
                assert_eq!(iter.size_hint(), (left, Some(left)));
            }
            assert_eq!(iter.next(), None);
            assert_eq!(by_for, by_chunks);
            assert_eq!(pings.iter().fold(0, |n, _| n + 1), pings.len());
            self.0.extend(by_for);
        }
    }
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    let walk = builder.add(Walk::default()).named("walk").id();
    for id in 0..3 {
        builder
            .add(Sender { id, count: id * 2 })
            .named(format!("s{id}"));
    }
    let mut schedule = builder.build(&mut registry).unwrap();
    // Sent between ticks too: their own chunks, before the writers'.
    Events::send_to(&mut registry, Ping { from: 9, n: 0 });
    Events::send_to(&mut registry, Ping { from: 9, n: 1 });
    for number in 0..3 {
        schedule.run(&mut registry, tick(number)).unwrap();
    }
    let per_tick: Vec<Ping> = (1..3)
        .flat_map(|from| (0..from * 2).map(move |n| Ping { from, n }))
        .collect();
    let mut expected = vec![Ping { from: 9, n: 0 }, Ping { from: 9, n: 1 }];
    for _ in 0..3 {
        expected.extend(&per_tick);
    }
    assert_eq!(schedule.state::<Walk>(walk).unwrap().0, expected);
}

/// How [`Picky`] ends its next run.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ending {
    Succeed,
    Fail,
    Panic,
}

#[derive(Debug, thiserror::Error)]
#[error("picky refused its events")]
struct Refused;

/// What [`picky`] does next, and what each of its successful runs saw.
#[derive(Debug)]
struct Picky {
    ending: Ending,
    runs: Vec<Vec<Ping>>,
}

/// Reads every ping, then ends as told: a failed run must not move its
/// cursor, so the next run sees the same events again.
fn picky(pings: EventReader<'_, Ping>, mut state: ResMut<'_, Picky>) -> Result<(), Refused> {
    let seen: Vec<Ping> = pings.iter().copied().collect();
    match state.ending {
        Ending::Succeed => {
            state.runs.push(seen);
            Ok(())
        }
        Ending::Fail => Err(Refused),
        Ending::Panic => panic!("picky panics after reading {} events", seen.len()),
    }
}

#[test]
fn a_reader_that_fails_or_panics_keeps_its_cursor() {
    for ending in [Ending::Fail, Ending::Panic] {
        let mut registry = Registry::new();
        registry.insert_resource(Picky {
            ending: Ending::Succeed,
            runs: Vec::new(),
        });
        let mut builder = Schedule::builder();
        builder.add(Sender { id: 0, count: 2 }).named("sender");
        builder.add(picky);
        let mut schedule = builder.build(&mut registry).unwrap();
        let set = |registry: &mut Registry, ending| {
            registry.resource_mut::<Picky>().unwrap().ending = ending;
        };
        schedule.run(&mut registry, tick(0)).unwrap();
        // Ticks 1 and 2 fail after reading: their events stay unread.
        set(&mut registry, ending);
        assert!(schedule.run(&mut registry, tick(1)).is_err(), "{ending:?}");
        assert!(schedule.run(&mut registry, tick(2)).is_err(), "{ending:?}");
        set(&mut registry, Ending::Succeed);
        schedule.run(&mut registry, tick(3)).unwrap();
        schedule.run(&mut registry, tick(4)).unwrap();
        let two = vec![Ping { from: 0, n: 0 }, Ping { from: 0, n: 1 }];
        let six: Vec<Ping> = two.iter().cycle().take(6).copied().collect();
        let runs = &registry.resource::<Picky>().unwrap().runs;
        assert_eq!(runs, &[two.clone(), six, two], "{ending:?}");
        let events = registry.resource::<Events<Ping>>().unwrap();
        assert_eq!((events.sent(), events.missed()), (10, 0), "{ending:?}");
    }
}

#[test]
fn channels_nobody_reads_are_aged_and_their_drops_counted() {
    /// Declared by a writer only.
    #[derive(Debug)]
    struct Shout;
    /// Declared by no system: sent from outside only.
    #[derive(Debug, PartialEq)]
    struct Whisper(u64);
    fn shout(mut shouts: EventWriter<'_, Shout>) {
        shouts.send(Shout);
        shouts.send(Shout);
    }
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    builder.add(shout);
    let mut schedule = builder.build(&mut registry).unwrap();
    let ticks = 50;
    for number in 0..ticks {
        Events::send_to(&mut registry, Whisper(number));
        schedule.run(&mut registry, tick(number)).unwrap();
        let whispers = registry.resource::<Events<Whisper>>().unwrap();
        let shouts = registry.resource::<Events<Shout>>().unwrap();
        // At most the window (plus the tick being sent) is retained.
        let window = Events::<Whisper>::DEFAULT_RETENTION as usize + 1;
        assert!(whispers.len() <= window, "{} whispers", whispers.len());
        assert!(shouts.len() <= 2 * window, "{} shouts", shouts.len());
        // Every event is retained or counted as dropped.
        assert_eq!(whispers.missed() + whispers.len() as u64, whispers.sent());
        assert_eq!(shouts.missed() + shouts.len() as u64, shouts.sent());
    }
    let whispers = registry.resource::<Events<Whisper>>().unwrap();
    assert_eq!(whispers.sent(), ticks);
    assert!(whispers.missed() >= ticks - 9);

    // A reader that comes later sees what is retained, and the drops
    // counted before it are not counted again.
    let (missed, retained) = (whispers.missed(), whispers.len());
    let log = std::sync::Arc::new(Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&log);
    let mut builder = Schedule::builder();
    builder.add(move |whispers: EventReader<'_, Whisper>| {
        seen.lock().extend(whispers.iter().map(|w| w.0));
    });
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(ticks)).unwrap();
    // The tick ages the channel once more before the reader runs.
    let seen = log.lock().len() as u64;
    assert!(seen > 0 && seen <= retained as u64);
    assert_eq!(*log.lock(), (ticks - seen..ticks).collect::<Vec<_>>());
    let whispers = registry.resource::<Events<Whisper>>().unwrap();
    // Every whisper was seen or counted missed, exactly once.
    assert_eq!(whispers.missed() + seen, ticks);
    assert_eq!(whispers.missed() - missed, retained as u64 - seen);
}

#[test]
fn events_sent_by_a_startup_system_of_a_type_no_tick_system_uses_are_kept() {
    #[derive(Debug, PartialEq)]
    struct LevelLoaded(u32);
    fn load(mut loaded: EventWriter<'_, LevelLoaded>) {
        loaded.send(LevelLoaded(1));
    }
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    builder.add_startup(load);
    builder.add(Sender { id: 0, count: 1 }).named("sender");
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(0)).unwrap();
    let events = registry.resource::<Events<LevelLoaded>>().unwrap();
    assert_eq!(events.iter().collect::<Vec<_>>(), [&LevelLoaded(1)]);
    assert_eq!(events.sent(), 1);
}

#[test]
fn a_startup_reader_and_the_first_tick_reader_keep_separate_cursors() {
    static STARTUP: Mutex<Vec<Ping>> = Mutex::new(Vec::new());
    fn early(pings: EventReader<'_, Ping>) {
        STARTUP.lock().extend(pings.iter().copied());
    }
    let mut registry = Registry::new();
    Events::send_to(&mut registry, Ping { from: 9, n: 0 });
    Events::send_to(&mut registry, Ping { from: 9, n: 1 });
    let mut builder = Schedule::builder();
    builder.add_startup(early);
    // Tick system 0 and startup system 0: once they shared one cursor, so
    // the startup read hid both pings from the tick reader.
    let log = builder.add(Log::default()).named("log").id();
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(0)).unwrap();
    let expected = [Ping { from: 9, n: 0 }, Ping { from: 9, n: 1 }];
    assert_eq!(*STARTUP.lock(), expected);
    let log = schedule.state::<Log>(log).unwrap();
    assert_eq!((log.seen.as_slice(), log.missed), (&expected[..], 0));
}

/// The one ordering rule for events, and what `explain` says of it.
mod ordering {
    use ecs_engine::Registry;
    use scheduler::{EventReader, EventWriter, Query, ResMut, Schedule, Tick};

    #[derive(Debug, Clone, Copy)]
    struct Hit;
    struct Score(u32);
    #[derive(Default)]
    struct Seen(Vec<usize>);

    fn tally(hits: EventReader<Hit>, mut seen: ResMut<Seen>) {
        seen.0.push(hits.iter().count());
    }
    fn tally_scoring(hits: EventReader<Hit>, mut seen: ResMut<Seen>, mut s: Query<&mut Score>) {
        let n = hits.iter().count();
        seen.0.push(n);
        s.each(|s| s.0 += n as u32);
    }
    fn shoot(mut hits: EventWriter<Hit>) {
        hits.send(Hit);
    }
    fn shoot_scoring(mut hits: EventWriter<Hit>, mut s: Query<&mut Score>) {
        hits.send(Hit);
        s.each(|s| s.0 *= 2);
    }

    /// Three ticks of `reader` registered before `writer`: what the reader
    /// saw each tick, and the schedule's explanation.
    fn run<A, B>(
        reader: impl scheduler::IntoSystem<A>,
        writer: impl scheduler::IntoSystem<B>,
    ) -> (Vec<usize>, String) {
        let mut registry = Registry::new();
        registry.insert_resource(Seen::default());
        registry.spawn((Score(1),));
        let mut builder = Schedule::builder();
        builder.add(reader).named("reader");
        builder.add(writer).named("writer");
        let mut schedule = builder.build(&mut registry).unwrap();
        for _ in 0..3 {
            schedule.run(&mut registry, Tick::default()).unwrap();
        }
        let seen = registry.resource::<Seen>().unwrap().0.clone();
        (seen, schedule.explain().to_string())
    }

    #[test]
    fn a_writer_runs_before_a_reader_registered_first() {
        let (seen, text) = run(tally, shoot);
        assert_eq!(seen, [1, 1, 1]);
        assert!(
            text.contains("after writer (wave 0): event Hit: write -> read"),
            "{text}"
        );
    }

    #[test]
    fn a_component_conflict_that_runs_the_reader_first_decides_and_says_so() {
        let (seen, text) = run(tally_scoring, shoot_scoring);
        // The reader runs first: each tick it reads the previous one's hit.
        assert_eq!(seen, [0, 1, 1]);
        assert!(
            text.contains(
                "after reader (wave 0): Score: conflict, registration order; event Hit: reader first, ordered by the pair's other conflict (it reads them a tick later)"
            ),
            "{text}"
        );
        assert!(!text.contains("cycle"), "{text}");
    }
}

/// Sends one ping per run and keeps the pings it reads: a writer and a
/// reader of one channel.
#[derive(Default)]
struct Echo {
    seen: Vec<Ping>,
}

impl StatefulSystem for Echo {
    type Params = (EventWriter<'static, Ping>, EventReader<'static, Ping>);
    fn run(&mut self, (mut out, pings): (EventWriter<'_, Ping>, EventReader<'_, Ping>)) {
        self.seen.extend(pings.iter().copied());
        out.send(Ping { from: 9, n: 0 });
    }
}

#[test]
fn a_system_that_writes_and_reads_a_channel_counts_as_a_writer() {
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    let echo = builder.add(Echo::default()).named("echo").id();
    builder.add(Sender { id: 0, count: 1 }).named("sender");
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(
        wave_names(&schedule),
        [["echo", "sender"]],
        "writers share a wave"
    );
    schedule.run(&mut registry, tick(0)).unwrap();
    schedule.run(&mut registry, tick(1)).unwrap();
    // The first run saw nothing; the second, both systems' pings of the
    // first tick (merged in registration order), a tick late.
    assert_eq!(
        schedule.state::<Echo>(echo).unwrap().seen,
        [Ping { from: 9, n: 0 }, Ping { from: 0, n: 0 }]
    );
}
