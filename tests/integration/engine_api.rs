//! The Engine: builder defaults and checks, the Tick resource, ticks and
//! runs, stateful system handles, input queues, errors, Send (spans:
//! `tests/spans.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ecs_runtime::DEFAULT_STEP;
use ecs_runtime::prelude::*;
use ecs_runtime::scheduler::{BuildError, RunError};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(f64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(f64);

fn movement(tick: Tick, mut q: Query<(&mut Position, &Velocity)>) {
    q.each(|(p, v)| p.0 += v.0 * tick.step);
}

/// Records the ticks it saw, through its parameter and the resource.
#[derive(Debug, Default)]
struct Clock {
    numbers: Vec<u64>,
    from_resource: Vec<u64>,
    steps: Vec<f64>,
}

impl StatefulSystem for Clock {
    type Params = (Tick, Res<'static, Tick>);
    fn run(&mut self, (tick, resource): (Tick, Res<'_, Tick>)) {
        self.numbers.push(tick.number);
        self.from_resource.push(resource.number);
        self.steps.push(tick.step);
    }
}

#[test]
fn defaults_one_thread_per_core_and_a_sixtieth_of_a_second() {
    let engine = Engine::builder().build().unwrap();
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(engine.threads(), cores);
    assert_eq!(engine.step(), 1.0 / 60.0);
    assert_eq!(DEFAULT_STEP, 1.0 / 60.0);
    assert_eq!(engine.ticks(), 0);
    let tick = *engine.registry().resource::<Tick>().unwrap();
    assert_eq!((tick.number, tick.step, tick.delta), (0, 1.0 / 60.0, 0.0));
}

#[test]
fn ticks_are_numbered_and_the_tick_resource_follows() {
    let mut builder = Engine::builder();
    builder.threads(2).step(0.25);
    let clock = builder.add_system(Clock::default()).named("clock").handle();
    builder.add_system(movement);
    let mut engine = builder.build().unwrap();
    let e = engine.registry_mut().spawn((Position(1.0), Velocity(2.0)));

    let first = engine.tick().unwrap();
    assert_eq!((first.number, first.step, first.delta), (0, 0.25, 0.0));
    engine.run(3).unwrap();
    assert_eq!(engine.ticks(), 4);
    let last = *engine.registry().resource::<Tick>().unwrap();
    assert_eq!(last.number, 3);
    assert!(last.delta >= 0.0);

    let state = engine.state(clock).unwrap();
    assert_eq!(state.numbers, [0, 1, 2, 3]);
    assert_eq!(state.from_resource, [0, 1, 2, 3]);
    assert_eq!(state.steps, [0.25; 4]);
    // 4 ticks of 0.25 s at 2 units per second.
    assert_eq!(engine.registry().get::<Position>(e), Some(&Position(3.0)));
}

#[test]
fn a_function_systems_state_is_its_closure() {
    let seen = Arc::new(AtomicU64::new(0));
    let counter = seen.clone();
    let mut builder = Engine::builder();
    builder.threads(1);
    let system = move |tick: Tick| {
        counter.store(tick.number + 100, Ordering::SeqCst);
    };
    let handle = builder.add_system(system).named("counter").handle();
    let mut engine = builder.build().unwrap();
    engine.run(5).unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 104);
    assert!(engine.state(handle).is_some());
    assert_eq!(engine.schedule().name(handle.id()), "counter");
}

#[test]
fn bad_settings_are_refused_at_build() {
    let mut builder = Engine::builder();
    builder.threads(0);
    assert_eq!(builder.build().unwrap_err(), EngineError::ZeroThreads);
    for step in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let mut builder = Engine::builder();
        builder.step(step);
        let error = builder.build().unwrap_err();
        assert!(
            matches!(error, EngineError::InvalidStep { step: s } if s.to_bits() == step.to_bits()),
            "{error:?}"
        );
    }
    assert_eq!(
        EngineError::ZeroThreads.to_string(),
        "the engine needs at least one thread, got 0"
    );
}

#[test]
fn schedule_errors_reach_the_caller() {
    let mut builder = Engine::builder();
    builder.add_system(movement).named("twice");
    builder.add_system(movement).named("twice");
    assert_eq!(
        builder.build().unwrap_err(),
        EngineError::Build(BuildError::DuplicateName {
            name: "twice".into()
        })
    );

    let mut builder = Engine::builder();
    builder.add_system(|_: Tick| {}).named("a").after("b");
    builder.add_system(|_: Tick| {}).named("b").after("a");
    let error = builder.build().unwrap_err();
    let EngineError::Build(BuildError::Cycle { cycle }) = &error else {
        panic!("{error:?}")
    };
    let mut names: Vec<&str> = cycle.iter().map(|e| e.from.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["a", "b"]);
    assert!(
        error.to_string().starts_with(
            "cannot build the schedule: the `before`/`after` constraints form a cycle"
        )
    );

    let mut builder = Engine::builder();
    builder.threads(100_000);
    assert_eq!(
        builder.build().unwrap_err(),
        EngineError::Build(BuildError::TooManyThreads {
            threads: 100_000,
            max: ecs_runtime::scheduler::MAX_THREADS
        })
    );

    let mut builder = Engine::builder();
    builder.add_system(|_: Tick| {}).named("a").before("nobody");
    assert!(matches!(
        builder.build().unwrap_err(),
        EngineError::Build(BuildError::UnknownSystem { .. })
    ));
}

#[test]
fn a_panicking_system_is_an_error_and_the_engine_goes_on() {
    let mut builder = Engine::builder();
    builder.threads(2);
    builder
        .add_system(|tick: Tick| {
            if tick.number == 1 {
                panic!("tick one");
            }
        })
        .named("fragile");
    builder.add_system(movement);
    let mut engine = builder.build().unwrap();
    let e = engine.registry_mut().spawn((Position(0.0), Velocity(60.0)));
    engine.tick().unwrap();
    let error = engine.tick().unwrap_err();
    assert_eq!(
        error,
        EngineError::Run(RunError::Panic {
            tick: 1,
            system: "fragile".into(),
            message: "tick one".into()
        })
    );
    engine.tick().unwrap();
    assert_eq!(engine.ticks(), 3);
    // movement ran in every tick: it shares no type with `fragile`, so both
    // are in the first wave and the failing one does not stop it.
    assert_eq!(engine.registry().get::<Position>(e), Some(&Position(3.0)));
    assert!(matches!(
        engine.set_enabled("nobody", false),
        Err(EngineError::Run(RunError::UnknownSystem { .. }))
    ));
    engine.set_enabled("fragile", false).unwrap();
    assert!(!engine.schedule().is_enabled("fragile"));
}

#[derive(Debug, Default)]
struct Received(Vec<u32>);

#[test]
fn input_queues_are_resources_fed_from_other_threads() {
    let mut builder = Engine::builder();
    let producer = builder.input_queue::<u32>();
    assert!(builder.input_queue::<u32>().is_empty());
    builder.insert_resource(Received::default());
    builder.add_system(
        |queue: Res<EventQueue<u32>>, mut received: ResMut<Received>| {
            received.0.extend(queue.drain());
        },
    );
    let mut engine = builder.build().unwrap();
    std::thread::spawn(move || {
        for n in 0..5 {
            producer.push(n).unwrap();
        }
    })
    .join()
    .unwrap();
    engine.tick().unwrap();
    assert_eq!(
        engine.registry().resource::<Received>().unwrap().0,
        [0, 1, 2, 3, 4]
    );
    let again = engine.input_queue::<u32>().unwrap();
    again.push(9).unwrap();
    engine.tick().unwrap();
    assert_eq!(
        engine.registry().resource::<Received>().unwrap().0.last(),
        Some(&9)
    );
    assert!(engine.input_queue::<String>().is_none());
}

#[test]
fn the_engine_moves_to_another_thread() {
    let mut builder = Engine::builder();
    builder.threads(1);
    builder.add_system(movement);
    let mut engine = builder.build().unwrap();
    let e = engine.registry_mut().spawn((Position(0.0), Velocity(6.0)));
    let engine = std::thread::spawn(move || {
        engine.run(10).unwrap();
        engine
    })
    .join()
    .unwrap();
    let x = engine.registry().get::<Position>(e).unwrap().0;
    assert!((x - 1.0).abs() < 1e-12, "{x}");
}

#[derive(Default)]
struct Paused(bool);

#[test]
fn run_conditions_sets_and_startup_through_the_engine() {
    fn running(paused: Res<Paused>) -> bool {
        !paused.0
    }
    fn spawn_ship(registry: &mut Registry) {
        registry.spawn((Position(0.0), Velocity(1.0)));
    }
    let mut builder = Engine::builder();
    builder.threads(2).step(1.0);
    builder.insert_resource(Paused::default());
    builder.add_startup_system(spawn_ship);
    builder.set("physics").run_if(running);
    builder.add_system(movement).in_set("physics");
    builder
        .add_system(|mut paused: ResMut<Paused>, tick: Tick| paused.0 = tick.number >= 1)
        .named("pause")
        .after("physics");
    let mut engine = builder.build().unwrap();
    engine.run(4).unwrap();
    // movement ran on ticks 0 and 1, then the pause held it.
    let x: Vec<f64> = engine
        .registry()
        .view::<&Position>()
        .iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(x, [2.0]);
}

#[test]
fn advance_runs_the_ticks_that_fit_whatever_the_frames() {
    use std::time::Duration;
    let world = |frames: &[u64]| {
        let mut builder = Engine::builder();
        builder.step(0.01).threads(2).add_system(movement);
        let mut engine = builder.build().unwrap();
        let ship = engine.registry_mut().spawn((Position(0.0), Velocity(3.0)));
        let mut ran = 0;
        for &ms in frames {
            let frame = engine.advance(Duration::from_millis(ms)).unwrap();
            assert!((0.0..1.0).contains(&frame.overstep), "{frame:?}");
            assert_eq!(frame.dropped, 0.0);
            ran += u64::from(frame.ticks);
        }
        assert_eq!(ran, engine.ticks());
        (ran, engine.registry().get::<Position>(ship).copied())
    };
    // 120 ms of frames, cut three ways: 12 ticks each time, the same world.
    let even = world(&[10; 12]);
    assert_eq!(even.0, 12);
    assert_eq!(world(&[3, 7, 25, 5, 40, 1, 9, 30]), even);
    assert_eq!(world(&[60, 60]), even);
    assert_eq!(world(&[4; 30]), even);
}

#[test]
fn advance_caps_the_catch_up_and_keeps_time_after_a_failure() {
    use std::time::Duration;
    let mut builder = Engine::builder();
    builder.step(0.01);
    builder
        .add_system(|tick: Tick| -> Result<(), String> {
            if tick.number == 1 {
                Err("tick one".into())
            } else {
                Ok(())
            }
        })
        .named("flaky");
    let mut engine = builder.build().unwrap();
    // 5.5 steps are due: tick 0 runs, tick 1 fails, the rest is kept.
    let error = engine.advance(Duration::from_micros(55_000)).unwrap_err();
    assert!(error.to_string().contains("flaky"), "{error}");
    assert_eq!(engine.ticks(), 2);
    let frame = engine.advance(Duration::ZERO).unwrap();
    assert_eq!((frame.ticks, engine.ticks()), (3, 5));
    assert!((frame.overstep - 0.5).abs() < 1e-6, "{frame:?}");
    // A long stall under a cap of 3: 3 ticks, the rest dropped and
    // reported, the half step kept.
    engine.set_max_catch_up(3);
    let frame = engine.advance(Duration::from_secs(1)).unwrap();
    assert_eq!(frame.ticks, 3);
    assert!((frame.dropped - 0.97).abs() < 1e-6, "{frame:?}");
    assert!((frame.overstep - 0.5).abs() < 1e-6, "{frame:?}");
}

#[test]
fn a_unique_plugin_added_twice_fails_the_build_naming_it() {
    use ecs_runtime::{EngineError, Plugin};
    fn physics(builder: &mut EngineBuilder) {
        builder.add_system(movement).named("movement");
    }
    /// Spawns one ship each time it is added: not unique.
    struct Ship(f64);
    impl Plugin for Ship {
        fn build(&self, builder: &mut EngineBuilder) {
            builder
                .registry_mut()
                .spawn((Position(0.0), Velocity(self.0)));
        }
        fn is_unique(&self) -> bool {
            false
        }
    }

    let mut builder = Engine::builder();
    builder
        .add_plugin(physics)
        .add_plugin(Ship(1.0))
        .add_plugin(Ship(2.0));
    let mut engine = builder.build().unwrap();
    engine.run(60).unwrap();
    let mut xs: Vec<f64> = engine
        .registry()
        .view::<&Position>()
        .iter()
        .map(|p| (p.0 * 1e6).round() / 1e6)
        .collect();
    xs.sort_by(f64::total_cmp);
    assert_eq!(xs, [1.0, 2.0]);

    let mut builder = Engine::builder();
    builder.add_plugin(physics).add_plugin(physics);
    let error = builder.build().unwrap_err();
    match &error {
        EngineError::DuplicatePlugin { name } => assert!(name.contains("physics"), "{name}"),
        other => panic!("{other:?}"),
    }
    assert!(error.to_string().contains("added twice"), "{error}");
}
