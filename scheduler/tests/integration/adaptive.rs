//! Where a schedule with a pool runs a tick and a wave: on the caller's
//! thread while its systems cost too little to pay for the pool, on the
//! pool's threads once they cost more (see `Schedule::run`). Only the
//! directions a loaded machine cannot flip are checked here: a first tick
//! (nothing measured yet) runs inline, and systems that each take 300 µs
//! go to the pool; the thresholds themselves are unit-tested in the
//! executor.

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use ecs_engine::Registry;
use scheduler::{DeclaredSystem, Schedule, SystemAccess, Tick};

struct A;
struct B;

fn tick(number: u64) -> Tick {
    Tick {
        number,
        ..Tick::default()
    }
}

/// The threads the systems ran on, per tick.
type Seen = Arc<Mutex<Vec<(u64, ThreadId)>>>;

/// A schedule of 2 threads with one wave of two systems (writing `A` and
/// `B`) that each note their thread and then spin for `spin`.
fn two_system_wave(seen: &Seen, spin: Duration) -> (Registry, Schedule) {
    let mut builder = Schedule::builder();
    builder.threads(2);
    for (name, access) in [
        ("a", SystemAccess::new().write::<A>()),
        ("b", SystemAccess::new().write::<B>()),
    ] {
        let seen = seen.clone();
        builder.add(DeclaredSystem::new(name, access, move |ctx| {
            seen.lock()
                .unwrap()
                .push((ctx.tick().number, std::thread::current().id()));
            let start = Instant::now();
            while start.elapsed() < spin {
                std::hint::spin_loop();
            }
            Ok(())
        }));
    }
    let mut registry = Registry::new();
    let schedule = builder.build(&mut registry).unwrap();
    assert_eq!(schedule.waves().len(), 1);
    (registry, schedule)
}

#[test]
fn the_first_tick_of_cheap_systems_runs_on_the_callers_thread() {
    let seen: Seen = Arc::default();
    let (mut registry, mut schedule) = two_system_wave(&seen, Duration::ZERO);
    assert!(schedule.is_adaptive());
    schedule.run(&mut registry, tick(0)).unwrap();
    let caller = std::thread::current().id();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|&(_, thread)| thread == caller));
    assert!(!schedule.wave_timings()[0].parallel);
}

#[test]
fn systems_that_cost_more_than_the_pool_go_to_it_from_the_second_tick() {
    let seen: Seen = Arc::default();
    let (mut registry, mut schedule) = two_system_wave(&seen, Duration::from_micros(300));
    let caller = std::thread::current().id();
    schedule.run(&mut registry, tick(0)).unwrap();
    assert!(!schedule.wave_timings()[0].parallel);
    for number in 1..4 {
        schedule.run(&mut registry, tick(number)).unwrap();
        assert!(schedule.wave_timings()[0].parallel, "tick {number}");
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 8);
    for &(number, thread) in seen.iter() {
        assert_eq!(thread == caller, number == 0, "tick {number}");
    }
}

#[test]
fn off_every_tick_goes_to_the_pool_and_every_wave_of_several_is_parallel() {
    let seen: Seen = Arc::default();
    let (mut registry, mut schedule) = two_system_wave(&seen, Duration::ZERO);
    schedule.set_adaptive(false);
    assert!(!schedule.is_adaptive());
    let caller = std::thread::current().id();
    for number in 0..3 {
        schedule.run(&mut registry, tick(number)).unwrap();
        assert!(schedule.wave_timings()[0].parallel, "tick {number}");
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 6);
    assert!(seen.iter().all(|&(_, thread)| thread != caller));
}
