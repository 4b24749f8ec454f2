//! Ticks under stress, each loop under a watchdog (a stall fails the test
//! instead of hanging it): nested parallelism on pools of 1 to 16 threads,
//! a blocking system, panics, schedules run from other threads or from
//! inside another schedule's system, and work a system leaves on the pool.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ecs_engine::{Entity, Registry};
use rayon::prelude::*;
use scheduler::{Commands, Query, RunError, Schedule, Tick};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(u64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(u64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Score(u64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Age(u64);

/// Longer than any loop here takes on a loaded 2-core machine.
const WATCHDOG: Duration = Duration::from_secs(20);

fn tick(number: u64) -> Tick {
    Tick {
        number,
        step: 1.0 / 60.0,
        delta: 1.0 / 60.0,
    }
}

/// Runs `f` on a thread of its own and returns its result; fails the test
/// when it has not returned within [`WATCHDOG`] (the thread is left behind)
/// and passes its panic on.
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = sender.send(f());
    });
    match receiver.recv_timeout(WATCHDOG) {
        Ok(value) => value,
        Err(RecvTimeoutError::Timeout) => panic!("{what}: stalled for {WATCHDOG:?}"),
        Err(RecvTimeoutError::Disconnected) => match handle.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the thread ended without sending"),
        },
    }
}

fn world(entities: u64) -> Registry {
    let mut registry = Registry::new();
    for i in 0..entities {
        registry.spawn((Position(i), Velocity(1), Score(0), Age(0)));
    }
    registry
}

fn positions(registry: &Registry) -> u64 {
    registry.view::<&Position>().iter().map(|p| p.0).sum()
}

/// Nested parallel work of every kind the user can write in a system:
/// `rayon::join` inside `par_each`, a parallel iterator inside each chunk's
/// `init`, a `rayon::scope`, over several waves with commands between them.
fn nested_schedule(threads: usize, registry: &mut Registry) -> Schedule {
    let mut builder = Schedule::builder();
    builder.threads(threads);
    builder
        .add(|mut q: Query<(&mut Position, &Velocity)>| {
            q.par_each(|(p, v)| {
                let (a, b) = rayon::join(|| v.0 * 3, || v.0 * 2);
                p.0 += a - b;
            });
        })
        .named("join_in_par_each");
    builder
        .add(|mut q: Query<&mut Score>| {
            q.par_each_init(
                || (0..16u64).into_par_iter().sum::<u64>(),
                |sum, s| s.0 += *sum / 120,
            );
        })
        .named("par_iter_in_init");
    builder
        .add(|mut q: Query<&mut Age>| {
            rayon::scope(|scope| {
                scope.spawn(|_| {
                    let _: u64 = (0..100u64).into_par_iter().sum();
                });
            });
            q.par_each(|a| a.0 += 1);
        })
        .named("scope");
    builder
        .add(
            |t: Tick, q: Query<(Entity, &Position)>, mut commands: Commands| {
                // One spawn and one despawn per tick: the apply is a serial
                // stretch between the waves.
                if let Some((e, _)) = q.iter().find(|(_, p)| p.0 % 7 == t.number % 7) {
                    commands.despawn(e);
                    commands.spawn((Position(0), Velocity(1), Score(0), Age(0)));
                }
            },
        )
        .named("churn")
        .after("join_in_par_each");
    builder
        .add(|mut q: Query<(&mut Position, &Score)>| {
            q.par_each(|(p, s)| p.0 += s.0 % 2);
        })
        .named("after_churn")
        .after("churn");
    builder.build(registry).unwrap()
}

#[test]
fn nested_parallel_work_never_stalls_on_pools_of_1_to_16_threads() {
    let ticks = 500;
    let sums = within("nested parallel work", move || {
        let mut sums = Vec::new();
        for threads in [1, 2, 3, 4, 8, 16] {
            let mut registry = world(800);
            let mut schedule = nested_schedule(threads, &mut registry);
            for t in 0..ticks {
                schedule.run(&mut registry, tick(t)).unwrap();
            }
            let scores: u64 = registry.view::<&Score>().iter().map(|s| s.0).sum();
            sums.push((threads, positions(&registry), scores, registry.len() as u64));
        }
        sums
    });
    // Every pool size computes the same world.
    for &(threads, position, score, len) in &sums {
        assert_eq!(
            (position, score, len),
            (sums[0].1, sums[0].2, 800),
            "{threads} threads"
        );
    }
    assert!(sums[0].1 > 0);
}

#[test]
fn a_system_that_blocks_while_others_run_parallel_walks() {
    let ticks = 40;
    let (elapsed, position) = within("a blocking system", move || {
        let mut registry = world(4_000);
        let mut builder = Schedule::builder();
        builder.threads(4);
        builder
            .add(|_ages: Query<&mut Age>| std::thread::sleep(Duration::from_millis(5)))
            .named("sleeper");
        builder
            .add(|mut q: Query<(&mut Position, &Velocity)>| {
                for _ in 0..4 {
                    q.par_each(|(p, v)| p.0 += v.0);
                }
            })
            .named("walker");
        let mut schedule = builder.build(&mut registry).unwrap();
        assert_eq!(schedule.waves().len(), 1);
        let start = Instant::now();
        for t in 0..ticks {
            schedule.run(&mut registry, tick(t)).unwrap();
        }
        (start.elapsed(), positions(&registry))
    });
    assert_eq!(position, (0..4_000).sum::<u64>() + 4 * ticks * 4_000);
    // The sleeper bounds each tick from below, nothing else much above it.
    assert!(elapsed >= Duration::from_millis(5 * ticks), "{elapsed:?}");
}

#[test]
fn a_panic_in_a_par_each_chunk_is_a_run_error_and_the_next_tick_works() {
    within("panics", move || {
        for threads in [1, 2, 3, 4, 8, 16] {
            let armed = Arc::new(AtomicBool::new(false));
            let mut registry = world(3_000);
            let mut builder = Schedule::builder();
            builder.threads(threads);
            let trigger = armed.clone();
            builder
                .add(move |mut q: Query<(&mut Position, &Velocity)>| {
                    let armed = trigger.load(Ordering::SeqCst);
                    q.par_each(|(p, v)| {
                        // On the last entities: a chunk that another
                        // thread is likely to have taken.
                        if armed && p.0 == 2_999 {
                            panic!("chunk boom");
                        }
                        p.0 += v.0;
                    });
                })
                .named("walker");
            builder
                .add(|mut q: Query<&mut Age>| q.par_each(|a| a.0 += 1))
                .named("ager");
            let mut schedule = builder.build(&mut registry).unwrap();
            for t in 0..20 {
                // The fifth tick panics; position 2_999 is reached only
                // once (before any increment), by entity 2_999.
                armed.store(t == 4, Ordering::SeqCst);
                let outcome = schedule.run(&mut registry, tick(t));
                if t == 4 {
                    assert_eq!(
                        outcome,
                        Err(RunError::Panic {
                            tick: 4,
                            system: "walker".into(),
                            message: "chunk boom".into(),
                        }),
                        "{threads} threads"
                    );
                } else {
                    outcome.unwrap();
                }
            }
            let ages: u64 = registry.view::<&Age>().iter().map(|a| a.0).sum();
            assert_eq!(ages, 20 * 3_000, "{threads} threads");
        }
    });
}

/// Panics in `Drop` when its flag says so.
struct Fragile(bool);

impl Drop for Fragile {
    fn drop(&mut self) {
        if self.0 {
            panic!("Fragile panics in Drop");
        }
    }
}

#[test]
fn a_panic_in_drop_while_discarding_a_failed_systems_commands_stays_in_the_tick() {
    within("a panic in Drop while discarding", move || {
        let armed = Arc::new(AtomicBool::new(true));
        let mut registry = world(2_000);
        let mut builder = Schedule::builder();
        builder.threads(4);
        let trigger = armed.clone();
        builder
            .add(move |mut commands: Commands| {
                if trigger.swap(false, Ordering::SeqCst) {
                    // The system fails with a recorded command whose value
                    // panics when the discarded buffer drops it.
                    commands.spawn((Fragile(true),));
                    panic!("system boom");
                }
            })
            .named("faulty");
        builder
            .add(|mut q: Query<(&mut Position, &Velocity)>| q.par_each(|(p, v)| p.0 += v.0))
            .named("walker");
        let mut schedule = builder.build(&mut registry).unwrap();
        // Dropping the failed system's buffer panics too: the tick still
        // reports the system's own panic, and the buffer is empty.
        let first = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut registry, tick(0))));
        match first.expect("the Drop panic is caught inside the tick") {
            Err(RunError::Panic {
                system, message, ..
            }) => {
                assert_eq!(system, "faulty");
                assert_eq!(message, "system boom");
            }
            other => panic!("expected the system's panic, got {other:?}"),
        }
        for t in 1..50 {
            schedule.run(&mut registry, tick(t)).unwrap();
        }
        assert!(positions(&registry) >= (0..2_000).sum::<u64>() + 49 * 2_000);
    });
}

#[test]
fn two_schedules_tick_at_once_from_two_threads_and_one_is_run_where_it_was_not_built() {
    let build = |threads| {
        let mut registry = world(1_000);
        let schedule = nested_schedule(threads, &mut registry);
        (schedule, registry)
    };
    // Built here, run on other threads.
    let (mut a, mut registry_a) = build(4);
    let (mut b, mut registry_b) = build(3);
    let (reference, reference_registry) = build(2);
    let results = within("two schedules at once", move || {
        let left = std::thread::spawn(move || {
            for t in 0..400 {
                a.run(&mut registry_a, tick(t)).unwrap();
            }
            positions(&registry_a)
        });
        let right = std::thread::spawn(move || {
            for t in 0..400 {
                b.run(&mut registry_b, tick(t)).unwrap();
            }
            positions(&registry_b)
        });
        let (mut reference, mut registry) = (reference, reference_registry);
        for t in 0..400 {
            reference.run(&mut registry, tick(t)).unwrap();
        }
        (
            left.join().unwrap(),
            right.join().unwrap(),
            positions(&registry),
        )
    });
    assert_eq!(results.0, results.2);
    assert_eq!(results.1, results.2);
}

#[test]
fn a_system_can_tick_another_schedule() {
    let position = within("a schedule inside a system", move || {
        let mut inner_registry = world(1_500);
        let inner = nested_schedule(4, &mut inner_registry);
        let inner = Arc::new(Mutex::new((inner, inner_registry)));
        let ticks = Arc::new(AtomicU64::new(0));
        let mut registry = world(1_500);
        let mut builder = Schedule::builder();
        builder.threads(3);
        let (held, count) = (inner.clone(), ticks.clone());
        builder
            .add(move |mut q: Query<&mut Age>| {
                let mut guard = held.lock().unwrap();
                let (schedule, registry) = &mut *guard;
                let t = count.fetch_add(1, Ordering::SeqCst);
                schedule.run(registry, tick(t)).unwrap();
                q.par_each(|a| a.0 += 1);
            })
            .named("ticks_the_inner");
        builder
            .add(|mut q: Query<(&mut Position, &Velocity)>| q.par_each(|(p, v)| p.0 += v.0))
            .named("walker");
        let mut outer = builder.build(&mut registry).unwrap();
        for t in 0..300 {
            outer.run(&mut registry, tick(t)).unwrap();
        }
        let guard = inner.lock().unwrap();
        positions(&guard.1)
    });
    let mut registry = world(1_500);
    let mut alone = nested_schedule(4, &mut registry);
    for t in 0..300 {
        alone.run(&mut registry, tick(t)).unwrap();
    }
    assert_eq!(position, positions(&registry));
}

/// A system may leave work on the pool (`rayon::spawn`: a background job
/// the tick does not wait for), and that job may wait for the caller (a
/// hand-off a few ticks later). While it waits, it holds one of the pool's
/// threads: the next ticks must run on the others, not wait for it.
#[test]
fn a_background_job_that_waits_for_the_caller_does_not_stall_the_ticks() {
    within("a background job waiting for the caller", move || {
        let (sender, receiver) = mpsc::channel::<u64>();
        let receiver = Arc::new(Mutex::new(Some(receiver)));
        let started = Arc::new(AtomicBool::new(false));
        let received = Arc::new(AtomicU64::new(0));
        let mut registry = world(2_000);
        let mut builder = Schedule::builder();
        builder.threads(2);
        let (got, job_started) = (received.clone(), started.clone());
        builder
            .add(move |mut q: Query<(&mut Position, &Velocity)>| {
                q.par_each(|(p, v)| p.0 += v.0);
                // Last in the tick: no wait of the tick's can pick it up.
                if let Some(receiver) = receiver.lock().unwrap().take() {
                    let (got, started) = (got.clone(), job_started.clone());
                    rayon::spawn(move || {
                        started.store(true, Ordering::SeqCst);
                        got.store(receiver.recv().unwrap(), Ordering::SeqCst);
                    });
                }
            })
            .named("spawner");
        let mut schedule = builder.build(&mut registry).unwrap();
        schedule.run(&mut registry, tick(0)).unwrap();
        while !started.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        for t in 1..6 {
            schedule.run(&mut registry, tick(t)).unwrap();
        }
        sender.send(7).unwrap();
        while received.load(Ordering::SeqCst) != 7 {
            std::thread::yield_now();
        }
        assert_eq!(positions(&registry), (0..2_000).sum::<u64>() + 6 * 2_000);
    });
}
