//! The executor: real parallelism within a wave, none across a conflict,
//! panics and errors, disabled systems, nested `par_each`, determinism.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ecs_engine::{Entity, Registry};
use scheduler::{
    Commands, DeclaredSystem, Query, Res, RunError, Schedule, SystemAccess, SystemError, Tick,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(f64, f64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(f64, f64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Age(u32);
/// A handle stored in a component: the entity this one follows.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Follows(Entity);
struct A;
struct B;

fn tick(number: u64) -> Tick {
    Tick {
        number,
        step: 1.0 / 60.0,
        delta: 1.0 / 60.0,
    }
}

/// Waits until `count` reaches `target`, for at most 30 seconds (a bound
/// generous enough for a loaded 2-core machine to start both threads).
fn rendezvous(count: &AtomicUsize, target: usize) -> bool {
    count.fetch_add(1, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if count.load(Ordering::SeqCst) >= target {
            return true;
        }
        std::thread::yield_now();
    }
    false
}

#[test]
fn systems_of_one_wave_overlap_in_time() {
    // A wave takes no more threads than cores (under Miri, the cores that
    // -Zmiri-num-cpus gives: .ci/run gives 2).
    if std::thread::available_parallelism().map_or(1, std::num::NonZero::get) < 2 {
        eprintln!("one core: the systems of a wave run in turn, nothing to check");
        return;
    }
    let arrived = Arc::new(AtomicUsize::new(0));
    let met = Arc::new(AtomicUsize::new(0));
    let mut builder = Schedule::builder();
    builder.threads(2);
    for name in ["left", "right"] {
        let (arrived, met) = (arrived.clone(), met.clone());
        let access = if name == "left" {
            SystemAccess::new().write::<A>()
        } else {
            SystemAccess::new().write::<B>()
        };
        builder.add(DeclaredSystem::new(name, access, move |_| {
            if rendezvous(&arrived, 2) {
                met.fetch_add(1, Ordering::SeqCst);
            }
            Ok(())
        }));
    }
    let mut registry = Registry::new();
    let mut schedule = builder.build(&mut registry).unwrap();
    // Cheap systems would run in turn on one thread (nothing is promised
    // about the systems of a wave running at the same time).
    schedule.set_adaptive(false);
    assert_eq!(schedule.waves().len(), 1);
    schedule.run(&mut registry, tick(0)).unwrap();
    assert_eq!(
        met.load(Ordering::SeqCst),
        2,
        "both systems were running at the same time"
    );
}

#[test]
fn a_writer_never_overlaps_its_reader() {
    let writing = Arc::new(AtomicBool::new(false));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let mut builder = Schedule::builder();
    builder.threads(4);
    let flag = writing.clone();
    builder.add(DeclaredSystem::new(
        "writer",
        SystemAccess::new().write::<A>(),
        move |_| {
            flag.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(2));
            flag.store(false, Ordering::SeqCst);
            Ok(())
        },
    ));
    for name in ["reader1", "reader2"] {
        let (flag, overlaps) = (writing.clone(), overlaps.clone());
        builder.add(DeclaredSystem::new(
            name,
            SystemAccess::new().read::<A>(),
            move |_| {
                for _ in 0..20 {
                    if flag.load(Ordering::SeqCst) {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    std::thread::sleep(Duration::from_micros(100));
                }
                Ok(())
            },
        ));
    }
    let mut registry = Registry::new();
    let mut schedule = builder.build(&mut registry).unwrap();
    for t in 0..10 {
        schedule.run(&mut registry, tick(t)).unwrap();
    }
    assert_eq!(overlaps.load(Ordering::SeqCst), 0);
}

#[test]
fn a_panicking_system_stops_the_tick_and_keeps_the_world_consistent() {
    let later_runs = Arc::new(AtomicUsize::new(0));
    let mut builder = Schedule::builder();
    builder.threads(2);
    builder
        .add(|mut commands: Commands| {
            commands.spawn((Age(1),));
            panic!("boom at {}", 42);
        })
        .named("faulty");
    builder
        .add(|mut commands: Commands| {
            commands.spawn((Age(2),));
        })
        .named("healthy");
    let runs = later_runs.clone();
    builder
        .add(move |_ages: Query<&mut Age>| {
            runs.fetch_add(1, Ordering::SeqCst);
        })
        .named("later")
        .after("healthy");
    let mut registry = Registry::new();
    let mut schedule = builder.build(&mut registry).unwrap();

    let error = schedule.run(&mut registry, tick(7)).unwrap_err();
    assert_eq!(
        error,
        RunError::Panic {
            tick: 7,
            system: "faulty".into(),
            message: "boom at 42".into()
        }
    );
    assert!(
        error
            .to_string()
            .contains("system `faulty` panicked: boom at 42")
    );
    // The healthy system's spawn landed, the faulty one's was discarded,
    // and the next wave did not run.
    let ages: Vec<u32> = registry.view::<&Age>().iter().map(|a| a.0).collect();
    assert_eq!(ages, vec![2]);
    assert_eq!(later_runs.load(Ordering::SeqCst), 0);

    // The schedule is still usable.
    schedule.set_enabled("faulty", false).unwrap();
    assert!(!schedule.is_enabled("faulty"));
    schedule.run(&mut registry, tick(8)).unwrap();
    assert_eq!(registry.view::<&Age>().count(), 2);
    assert_eq!(later_runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        schedule.set_enabled("nobody", true),
        Err(RunError::UnknownSystem {
            name: "nobody".into()
        })
    );
}

#[test]
fn undeclared_access_is_an_error_naming_system_and_type() {
    let mut builder = Schedule::builder();
    builder.add(DeclaredSystem::new(
        "sneaky",
        SystemAccess::new().read::<Position>(),
        |ctx| {
            ctx.query::<(&mut Position,)>()?.each(|p| p.0.0 = 0.0);
            Ok(())
        },
    ));
    let mut registry = Registry::new();
    let mut schedule = builder.build(&mut registry).unwrap();
    let error = schedule.run(&mut registry, tick(0)).unwrap_err();
    let RunError::System { source, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(
        source,
        &SystemError::Undeclared {
            system: "sneaky".into(),
            kind: "component",
            name: std::any::type_name::<Position>().into(),
            access: ecs_engine::Access::Write,
        }
    );
}

#[test]
fn missing_resource_is_an_error_naming_system_and_resource() {
    struct Gravity(f64);
    fn fall(gravity: Res<Gravity>, mut q: Query<&mut Velocity>) {
        q.each(|v| v.1 -= gravity.0);
    }
    let mut builder = Schedule::builder();
    builder.add(fall);
    let mut registry = Registry::new();
    let mut schedule = builder.build(&mut registry).unwrap();
    let error = schedule.run(&mut registry, tick(0)).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("system `fall`") && message.contains("Gravity"),
        "{message}"
    );
    registry.insert_resource(Gravity(1.0));
    let e = registry.spawn((Velocity(0.0, 0.0),));
    schedule.run(&mut registry, tick(1)).unwrap();
    assert_eq!(registry.get::<Velocity>(e), Some(&Velocity(0.0, -1.0)));
}

#[test]
fn declared_pools_exist_before_the_first_tick() {
    let seen = Arc::new(AtomicUsize::new(usize::MAX));
    let record = seen.clone();
    let mut builder = Schedule::builder();
    builder.add(move |q: Query<&Age>| record.store(q.iter().count(), Ordering::SeqCst));
    let mut registry = Registry::new();
    let mut schedule = builder.build(&mut registry).unwrap();
    assert!(
        registry.component_id::<Age>().is_some(),
        "build created the Age pool"
    );
    schedule.run(&mut registry, tick(0)).unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 0);
    registry.spawn((Age(3),));
    schedule.run(&mut registry, tick(1)).unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[test]
fn par_each_inside_a_system_does_not_deadlock() {
    fn double(mut q: Query<&mut Position>) {
        q.par_each(|p| p.0 *= 2.0);
    }
    fn count(mut q: Query<&Velocity>) {
        q.par_each(|v| assert!(v.0 >= 0.0));
    }
    // Under Miri: still more than one chunk of `par_each`, fewer ticks.
    let (entities, ticks) = if cfg!(miri) { (1_100, 2) } else { (10_000, 5) };
    let mut registry = Registry::new();
    for i in 0..entities {
        registry.spawn((Position(i as f64, 0.0), Velocity(1.0, 0.0)));
    }
    let mut builder = Schedule::builder();
    builder.threads(4);
    builder.add(double);
    builder.add(count);
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(schedule.waves().len(), 1);
    for t in 0..ticks {
        schedule.run(&mut registry, tick(t)).unwrap();
    }
    let sum: f64 = registry.view::<&Position>().iter().map(|p| p.0).sum();
    assert_eq!(
        sum,
        f64::from(1 << ticks) * (0..entities).sum::<u64>() as f64
    );
    let timings: Vec<&str> = schedule.system_timings().map(|(_, n, _)| n).collect();
    assert_eq!(timings, vec!["double", "count"]);
    assert_eq!(schedule.wave_timings().len(), 1);
    assert!(schedule.wave_timings()[0].wall > Duration::ZERO);
}

/// Spawns, moves, links and despawns through commands; returns a dump of
/// the world after `ticks` ticks on `threads` threads.
fn simulate(threads: usize, ticks: u64) -> Vec<(u64, u64, u64, Option<u64>, u32)> {
    fn spawner_a(tick: Tick, mut commands: Commands) {
        for k in 0..5 {
            let x = ((tick.number * 7 + k) % 40) as f64;
            let e = commands.spawn((Position(x, 0.0), Velocity(1.5, 0.25), Age(0)));
            if k % 2 == 0 {
                let follower = commands.spawn((Position(x, 1.0), Age(0)));
                commands.insert(follower, Follows(e));
            }
        }
    }
    fn spawner_b(tick: Tick, mut commands: Commands) {
        for k in 0..3 {
            commands.spawn((
                Position(-(((tick.number + k) % 30) as f64), 2.0),
                Velocity(-0.5, 1.0),
                Age(0),
            ));
        }
    }
    fn movement(mut q: Query<(&mut Position, &Velocity)>) {
        q.par_each(|(p, v)| {
            p.0 += v.0;
            p.1 += v.1;
        });
    }
    fn aging(mut q: Query<&mut Age>) {
        q.each(|a| a.0 += 1);
    }
    fn reaper(q: Query<(Entity, &Position, &Age)>, mut commands: Commands) {
        for (e, p, age) in q.iter() {
            if p.0.abs() > 60.0 || age.0 > 40 {
                commands.despawn(e);
            }
        }
    }
    fn unfollow(q: Query<(Entity, &Follows)>, mut commands: Commands) {
        for (e, follows) in q.iter() {
            if follows.0.index() % 3 == 0 {
                commands.remove::<Follows>(e);
            }
        }
    }
    let mut registry = Registry::new();
    let mut builder = Schedule::builder();
    builder.threads(threads);
    builder.add(spawner_a);
    builder.add(spawner_b);
    builder.add(movement);
    builder.add(aging);
    builder.add(reaper);
    builder.add(unfollow);
    let mut schedule = builder.build(&mut registry).unwrap();
    for t in 0..ticks {
        schedule.run(&mut registry, tick(t)).unwrap();
    }
    let mut dump: Vec<_> = registry
        .view::<(Entity, &Position, &Age, Option<&Follows>)>()
        .iter()
        .map(|(e, p, a, f)| {
            (
                e.to_bits(),
                p.0.to_bits(),
                p.1.to_bits(),
                f.map(|f| f.0.to_bits()),
                a.0,
            )
        })
        .collect();
    dump.sort_unstable();
    // Every stored handle points at a live entity or a despawned one, never
    // at a reused slot's new owner: followers were spawned after leaders.
    for &(_, _, _, follows, _) in &dump {
        if let Some(bits) = follows {
            let leader = Entity::from_bits(bits).unwrap();
            if registry.is_alive(leader) {
                assert!(
                    registry.get::<Velocity>(leader).is_some(),
                    "a leader has a velocity"
                );
            }
        }
    }
    dump
}

#[test]
fn the_world_is_bit_identical_with_1_2_and_8_threads() {
    // Fewer ticks under Miri, which interprets every thread.
    let ticks = if cfg!(miri) { 6 } else { 100 };
    let one = simulate(1, ticks);
    assert!(
        one.len() > if cfg!(miri) { 20 } else { 100 },
        "the world is not trivially empty: {}",
        one.len()
    );
    assert!(
        one.iter().any(|d| d.3.is_some()),
        "some followers keep their link"
    );
    assert_eq!(simulate(2, ticks), one);
    assert_eq!(simulate(8, ticks), one);
}

/// The threads that ran the systems and the `par_each`/`par_fold` items of
/// a tick, as they came.
type Seen = Arc<std::sync::Mutex<Vec<std::thread::ThreadId>>>;

fn note(seen: &Seen) {
    seen.lock().unwrap().push(std::thread::current().id());
}

#[test]
fn a_one_thread_schedule_runs_every_wave_on_the_callers_thread() {
    let seen: Seen = Arc::default();
    let mut registry = Registry::new();
    let n: u32 = if cfg!(miri) { 200 } else { 2_000 };
    for i in 0..n {
        registry.spawn((Position(f64::from(i), 0.0), Velocity(1.0, 2.0), Age(0)));
    }
    let mut builder = Schedule::builder();
    builder.threads(1);
    // A wave of two systems (walking with `par_each` and `par_fold`), then
    // a wave after them that spawns (its commands applied after it).
    let s = seen.clone();
    builder
        .add(move |mut q: Query<(&mut Position, &Velocity)>| {
            note(&s);
            q.par_each(|(p, v)| {
                note(&s);
                p.0 += v.0;
                p.1 += v.1;
            });
        })
        .named("walk");
    let s = seen.clone();
    builder
        .add(move |mut q: Query<&mut Age>| {
            note(&s);
            let total = q.par_fold(
                || 0u64,
                |n, a| {
                    note(&s);
                    a.0 += 1;
                    n + 1
                },
                |a, b| a + b,
            );
            assert_eq!(total, u64::from(n));
        })
        .named("fold");
    let s = seen.clone();
    builder
        .add(move |mut commands: Commands| {
            note(&s);
            commands.spawn((A,));
        })
        .named("spawn")
        .after("walk")
        .after("fold");
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(schedule.threads(), 1);
    assert_eq!(schedule.waves().len(), 2);
    assert_eq!(schedule.waves()[0].len(), 2);
    let caller = std::thread::current().id();
    for number in 0..3 {
        schedule.run(&mut registry, tick(number)).unwrap();
    }
    let seen = seen.lock().unwrap();
    // 3 ticks of 3 systems, n `par_each` items and n folded.
    assert_eq!(seen.len(), 3 * (3 + 2 * n as usize));
    assert!(seen.iter().all(|&id| id == caller));
    assert_eq!(registry.count::<A>(), 3);
    let sum: f64 = registry.view::<&Position>().iter().map(|p| p.1).sum();
    assert_eq!(sum, 3.0 * 2.0 * f64::from(n));
    assert!(registry.view::<&Age>().iter().all(|a| a.0 == 3));
}

#[test]
fn install_runs_on_the_schedules_threads_or_the_callers() {
    let mut registry = Registry::new();
    for threads in [1, 3] {
        let mut builder = Schedule::builder();
        builder.threads(threads);
        let schedule = builder.build(&mut registry).unwrap();
        let caller = std::thread::current().id();
        let (thread, index, walk) = schedule.install(|| {
            (
                std::thread::current().id(),
                rayon::current_thread_index(),
                ecs_engine::walk_threads(),
            )
        });
        if threads == 1 {
            // No pool: the caller's thread, walking serially.
            assert_eq!((thread, index, walk), (caller, None, 1));
        } else {
            assert_ne!(thread, caller);
            assert!(index.is_some_and(|i| i < 3));
            assert_eq!(walk, 3);
        }
    }
}
