//! One-shot systems: registered by id, run from the engine between ticks
//! and from commands after a wave, in a fixed order on any thread count;
//! unknown ids and endless chains are errors naming who asked.

use ecs_runtime::prelude::*;
use ecs_runtime::scheduler::{MAX_ONE_SHOT_CHAIN, RunError};

/// What ran, in order.
#[derive(Default)]
struct Log(Vec<String>);

struct Spark(u32);

/// The ids systems run: (spark, chain).
struct Ids(OneShotId, OneShotId);

#[test]
fn the_engine_runs_a_registered_system_by_id_keeping_its_state() {
    let mut engine = Engine::builder().build().unwrap();
    engine.registry_mut().insert_resource(Log::default());
    let id = engine.register_system(|mut log: ResMut<Log>, mut n: Local<u32>| {
        *n += 1;
        log.0.push(format!("run {}", *n));
    });
    assert_eq!(id.index(), 0);
    engine.run_system(id).unwrap();
    engine.tick().unwrap(); // not in the waves: does not run
    engine.run_system(id).unwrap();
    assert_eq!(
        engine.registry().resource::<Log>().unwrap().0,
        ["run 1", "run 2"]
    );
}

#[test]
fn an_exclusive_one_shot_system_and_its_commands() {
    let mut engine = Engine::builder().build().unwrap();
    let exclusive = engine.register_system(|registry: &mut Registry| {
        registry.spawn((Spark(7),));
    });
    let with_commands = engine.register_system(|mut commands: Commands| {
        commands.spawn((Spark(8),));
    });
    engine.run_system(exclusive).unwrap();
    engine.run_system(with_commands).unwrap();
    let mut sparks: Vec<u32> = engine
        .registry()
        .view::<&Spark>()
        .iter()
        .map(|s| s.0)
        .collect();
    sparks.sort_unstable();
    assert_eq!(sparks, [7, 8]);
}

/// A world where two parallel systems ask for one-shot systems each tick,
/// and one of those asks for another.
fn engine(threads: usize) -> Engine {
    let mut builder = Engine::builder();
    builder.threads(threads);
    builder.insert_resource(Log::default());
    let spark = builder.register_system(
        |mut log: ResMut<Log>, mut commands: Commands, q: Query<&Spark>, tick: Tick| {
            log.0
                .push(format!("spark {} sees {}", tick.number, q.iter().count()));
            commands.spawn((Spark(tick.number as u32),));
        },
    );
    let chain = builder.register_system(|mut log: ResMut<Log>, ids: Res<Ids>, mut c: Commands| {
        log.0.push("chain".to_owned());
        c.run_system(ids.0);
    });
    builder.insert_resource(Ids(spark, chain));
    builder
        .add_system(|ids: Res<Ids>, mut c: Commands, mut q: Query<&mut Spark>| {
            q.par_each(|s| s.0 += 100);
            c.spawn((Spark(0),));
            c.run_system(ids.1);
            c.run_system(ids.0);
        })
        .named("first");
    builder
        .add_system(|ids: Res<Ids>, mut c: Commands| c.run_system(ids.0))
        .named("second");
    builder.build().unwrap()
}

#[test]
fn requests_run_after_the_wave_in_registration_then_recording_order() {
    let mut engine = engine(2);
    assert_eq!(engine.schedule().waves().len(), 1);
    engine.tick().unwrap();
    // `first`'s buffer (its spawn, then two requests), then `second`'s
    // request; the chain's own request goes to the end of the queue.
    assert_eq!(
        engine.registry().resource::<Log>().unwrap().0,
        [
            "chain",
            "spark 0 sees 1",
            "spark 0 sees 2",
            "spark 0 sees 3"
        ]
    );
    assert_eq!(engine.registry().view::<&Spark>().count(), 4);
}

#[test]
fn the_same_world_on_1_2_and_8_threads() {
    let run = |threads: usize| {
        let mut engine = engine(threads);
        engine.run(20).unwrap();
        let mut world: Vec<(u32, u32)> = engine
            .registry()
            .view::<(Entity, &Spark)>()
            .iter()
            .map(|(e, s)| (e.index(), s.0))
            .collect();
        world.sort_unstable();
        (
            world,
            engine.registry().resource::<Log>().unwrap().0.clone(),
        )
    };
    let one = run(1);
    assert_eq!(one.0.len(), 80);
    assert_eq!(one.1.len(), 80);
    assert_eq!(run(2), one);
    assert_eq!(run(8), one);
}

#[test]
fn an_unknown_id_from_the_engine_is_an_error() {
    let mut other = Engine::builder().build().unwrap();
    other.register_system(|| {});
    let foreign = other.register_system(|| {});
    let mut engine = Engine::builder().build().unwrap();
    engine.register_system(|| {});
    let error = engine.run_system(foreign).unwrap_err();
    assert_eq!(
        error,
        EngineError::Run(RunError::BetweenTicks {
            source: Box::new(RunError::UnknownOneShot {
                tick: 0,
                id: foreign,
                requested_by: None,
            })
        })
    );
    assert_eq!(
        error.to_string(),
        "between ticks: the caller asked to run one-shot system #1, which this schedule did not register"
    );
}

#[test]
fn an_unknown_id_from_commands_stops_the_tick_naming_the_system() {
    let mut other = Engine::builder().build().unwrap();
    let foreign = other.register_system(|| {});
    let mut builder = Engine::builder();
    builder.insert_resource(Log::default());
    builder
        .add_system(move |mut c: Commands| {
            c.run_system(foreign);
        })
        .named("asker");
    let mut engine = builder.build().unwrap();
    let error = engine.tick().unwrap_err();
    assert!(matches!(
        &error,
        EngineError::Run(RunError::UnknownOneShot { tick: 0, requested_by: Some(system), .. })
            if system == "asker"
    ));
    assert!(error.to_string().contains("system `asker`"), "{error}");
}

#[test]
fn a_system_asking_for_itself_for_ever_stops_at_the_limit() {
    #[derive(Clone, Copy)]
    struct Me(Option<OneShotId>);
    let mut engine = Engine::builder().build().unwrap();
    engine.registry_mut().insert_resource(Me(None));
    engine.registry_mut().insert_resource(0_usize);
    let id = engine.register_system(|me: Res<Me>, mut n: ResMut<usize>, mut c: Commands| {
        *n += 1;
        c.run_system(me.0.unwrap());
    });
    engine.registry_mut().insert_resource(Me(Some(id)));
    let EngineError::Run(error) = engine.run_system(id).unwrap_err() else {
        panic!("not a run error");
    };
    assert!(
        matches!(
            error.root(),
            RunError::OneShotLimit {
                limit: MAX_ONE_SHOT_CHAIN,
                requested_by: Some(_),
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().starts_with("between ticks: "), "{error}");
    assert_eq!(
        engine.registry().resource::<usize>(),
        Some(&(MAX_ONE_SHOT_CHAIN + 1))
    );
    // Nothing of the dropped queue runs later.
    engine.tick().unwrap();
    assert_eq!(
        engine.registry().resource::<usize>(),
        Some(&(MAX_ONE_SHOT_CHAIN + 1))
    );
}

#[test]
fn a_failing_one_shot_system_discards_its_commands_and_the_queue() {
    let mut builder = Engine::builder();
    let failing = builder.register_system(|mut c: Commands| -> Result<(), String> {
        c.spawn((Spark(1),));
        Err("out of sparks".into())
    });
    let spawning = builder.register_system(|mut c: Commands| {
        c.spawn((Spark(2),));
    });
    builder.add_system(move |mut c: Commands, tick: Tick| {
        if tick.number == 0 {
            c.run_system(failing);
            c.run_system(spawning);
        }
    });
    let mut engine = builder.build().unwrap();
    let error = engine.tick().unwrap_err();
    assert!(error.to_string().contains("out of sparks"), "{error}");
    engine.tick().unwrap();
    assert_eq!(engine.registry().view::<&Spark>().count(), 0);
}

#[test]
fn startup_and_state_systems_may_ask_too() {
    #[derive(Debug, Clone, PartialEq)]
    enum Phase {
        Setup,
    }
    let mut builder = Engine::builder();
    builder.insert_resource(Log::default());
    let note = builder.register_system(|mut log: ResMut<Log>| log.0.push("note".to_owned()));
    builder.add_startup_system(move |mut c: Commands| c.run_system(note));
    builder.add_state(Phase::Setup);
    builder.add_on_enter(Phase::Setup, move |mut c: Commands| c.run_system(note));
    let mut engine = builder.build().unwrap();
    engine.tick().unwrap();
    assert_eq!(
        engine.registry().resource::<Log>().unwrap().0,
        ["note", "note"]
    );
}
