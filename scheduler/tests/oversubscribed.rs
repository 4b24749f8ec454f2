//! A pool with more threads than the machine has cores (or than are free
//! on a loaded machine): every tick still finishes, with the same world as
//! on one thread. Its own test binary, so that nothing else runs
//! alongside.

use std::time::{Duration, Instant};

use ecs_engine::Registry;
use scheduler::{Commands, Query, Schedule, Tick};

struct Position(u64);
struct Velocity(u64);
struct Marker;

/// Seconds for `ticks` ticks of a schedule of short waves on `threads`
/// threads: a chain of parallel walks with a command apply between each.
fn seconds(threads: usize, ticks: u64) -> Duration {
    let mut registry = Registry::new();
    for i in 0..2_000 {
        registry.spawn((Position(i), Velocity(1)));
    }
    let mut builder = Schedule::builder();
    builder.threads(threads);
    let mut previous: Option<String> = None;
    for k in 0..6 {
        let name = format!("walk{k}");
        let mut config = builder.add(
            |mut q: Query<(&mut Position, &Velocity)>, mut commands: Commands| {
                q.par_each(|(p, v)| p.0 += v.0);
                commands.spawn((Marker,));
            },
        );
        config.named(name.clone());
        if let Some(previous) = previous {
            config.after(previous);
        }
        previous = Some(name);
    }
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(schedule.waves().len(), 6);
    let start = Instant::now();
    for number in 0..ticks {
        let tick = Tick {
            number,
            step: 1.0 / 60.0,
            delta: 1.0 / 60.0,
        };
        schedule.run(&mut registry, tick).unwrap();
    }
    let elapsed = start.elapsed();
    let sum: u64 = registry.view::<&Position>().iter().map(|p| p.0).sum();
    assert_eq!(sum, (0..2_000).sum::<u64>() + 6 * ticks * 2_000);
    assert_eq!(registry.count::<Marker>(), 6 * ticks as usize);
    elapsed
}

#[test]
#[cfg_attr(miri, ignore = "starts rayon pools")]
fn sixteen_threads_on_few_cores_finish_with_the_world_of_one() {
    // The world is checked inside `seconds` (every walk and every spawn
    // of every tick landed). How fast 16 threads run beside 1 is measured
    // by `harness/thread_grid.sh` (BENCHMARKS.md, issue 24), not here: a
    // timed test fails on a busy machine for reasons of its own.
    let ticks = 1_000;
    let one = seconds(1, ticks);
    let sixteen = seconds(16, ticks);
    eprintln!("1 thread {one:?}, 16 threads {sixteen:?}");
}
