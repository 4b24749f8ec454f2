//! Between sparse ticks the pool's threads sleep: a game ticking at 60 Hz
//! with short ticks burns little more CPU than its ticks' work. Measured
//! from the process's CPU time (`/proc/self/stat`); this file is its own
//! test binary, and its tests take turns, so nothing else runs alongside.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use ecs_engine::Registry;
use scheduler::{Query, Schedule, Tick};

struct Position(u64);
struct Velocity(u64);

/// Held by each test: the CPU time measured is the process's.
static ALONE: Mutex<()> = Mutex::new(());

/// User and system CPU time of the whole process.
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // Fields after the command name (which may hold spaces), from field 3.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // USER_HZ is 100 on Linux's user-space ABI.
    Duration::from_millis(ticks * 10)
}

/// 4,000 entities with a `Position` and a `Velocity` of 1.
fn world() -> Registry {
    let mut registry = Registry::new();
    for i in 0..4_000 {
        registry.spawn((Position(i), Velocity(1)));
    }
    registry
}

/// Tick `number` at 60 Hz.
fn tick(number: u64) -> Tick {
    Tick {
        number,
        step: 1.0 / 60.0,
        delta: 1.0 / 60.0,
    }
}

#[test]
#[cfg_attr(not(target_os = "linux"), ignore = "reads /proc/self/stat")]
#[cfg_attr(miri, ignore = "starts a rayon pool")]
fn sparse_ticks_leave_the_pool_asleep() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let mut registry = world();
    let mut builder = Schedule::builder();
    builder.threads(4);
    builder.add(|mut q: Query<(&mut Position, &Velocity)>| q.par_each(|(p, v)| p.0 += v.0));
    builder.add(|mut q: Query<&Velocity>| q.par_each(|v| assert_eq!(v.0, 1)));
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(0)).unwrap();
    let (wall_start, cpu_start) = (Instant::now(), process_cpu());
    let mut busy = Duration::ZERO;
    for t in 1..=60 {
        let start = Instant::now();
        schedule.run(&mut registry, tick(t)).unwrap();
        busy += start.elapsed();
        std::thread::sleep(Duration::from_millis(16));
    }
    let (wall, cpu) = (wall_start.elapsed(), process_cpu() - cpu_start);
    eprintln!("wall {wall:?}, in ticks {busy:?}, cpu {cpu:?}");
    // Four threads may all spin while a tick runs; between ticks nothing
    // should run (10 ms of slack per 100 ms of sleep, for rayon's own
    // short spin before a worker sleeps and the clock's 10 ms grain).
    let sleeping = wall.saturating_sub(busy);
    assert!(
        cpu <= busy * 4 + sleeping / 10 + Duration::from_millis(20),
        "cpu {cpu:?} over {wall:?} ({busy:?} in ticks)"
    );
    let sum: u64 = registry.view::<&Position>().iter().map(|p| p.0).sum();
    assert_eq!(sum, (0..4_000).sum::<u64>() + 61 * 4_000);
}

/// A long serial stretch inside a tick (a system waiting on a lock, a
/// large apply): the other threads stop spinning after a short while.
#[test]
#[cfg_attr(not(target_os = "linux"), ignore = "reads /proc/self/stat")]
#[cfg_attr(miri, ignore = "starts a rayon pool")]
fn a_long_serial_stretch_does_not_keep_the_pool_spinning() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let mut registry = world();
    let mut builder = Schedule::builder();
    builder.threads(8);
    builder
        .add(|mut q: Query<(&mut Position, &Velocity)>| q.par_each(|(p, v)| p.0 += v.0))
        .named("walk");
    builder
        .add(|_q: Query<&mut Position>| std::thread::sleep(Duration::from_millis(20)))
        .named("wait")
        .after("walk");
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule.run(&mut registry, tick(0)).unwrap();
    let (wall_start, cpu_start) = (Instant::now(), process_cpu());
    for t in 1..=20 {
        schedule.run(&mut registry, tick(t)).unwrap();
    }
    let (wall, cpu) = (wall_start.elapsed(), process_cpu() - cpu_start);
    eprintln!("wall {wall:?}, cpu {cpu:?}");
    // Seven idle threads spinning through each 20 ms wait would burn
    // seven times the wall time; a millisecond each per tick is 0.35 of it.
    assert!(cpu <= wall / 2, "cpu {cpu:?} over {wall:?}");
}
