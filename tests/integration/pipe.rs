//! System piping: `a.pipe(b)` passes `a`'s output to `b` as `In<T>`, is
//! one system whose access is the union of its parts' (so the schedule
//! orders it as one), keeps each part's state, reports the last part's
//! error naming the pipe, and gives the same world on 1, 2 and 8 threads.

use ecs_runtime::prelude::*;
use ecs_runtime::scheduler::{RunError, SystemError};

struct Position(i64);
struct Velocity(i64);
struct Marker;

fn fastest(q: Query<&Velocity>) -> i64 {
    q.iter().map(|v| v.0).max().unwrap_or(0)
}

fn double(In(x): In<i64>, mut calls: Local<u32>) -> (i64, u32) {
    *calls += 1;
    (x * 2, *calls)
}

fn store(In((x, calls)): In<(i64, u32)>, mut out: ResMut<Vec<(i64, u32)>>) {
    out.push((x, calls));
}

#[test]
fn outputs_flow_through_a_chain_and_each_part_keeps_its_locals() {
    let mut builder = Engine::builder();
    builder.insert_resource(Vec::<(i64, u32)>::new());
    builder.add_system(fastest.pipe(double).pipe(store));
    let mut engine = builder.build().unwrap();
    engine.registry_mut().spawn((Velocity(3),));
    engine.registry_mut().spawn((Velocity(5),));
    engine.run(2).unwrap();
    assert_eq!(
        engine.registry().resource::<Vec<(i64, u32)>>().unwrap(),
        &[(10, 1), (10, 2)]
    );
    let names: Vec<String> = engine
        .schedule()
        .waves()
        .concat()
        .iter()
        .map(|(_, n)| n.to_string())
        .collect();
    assert_eq!(names, ["fastest | double | store"]);
}

#[test]
fn the_access_is_the_union_of_the_parts() {
    // The pipe reads Velocity (first part) and writes Position (second):
    // a writer of Velocity registered before it and a reader of Position
    // after it are each ordered against it.
    let mut builder = Engine::builder();
    builder
        .add_system(|mut q: Query<&mut Velocity>| q.each(|v| v.0 += 1))
        .named("accelerate");
    builder
        .add_system(
            fastest.pipe(|In(top): In<i64>, mut q: Query<&mut Position>| q.each(|p| p.0 += top)),
        )
        .named("move");
    builder.add_system(|_q: Query<&Position>| {}).named("draw");
    builder.add_system(|_q: Query<&Marker>| {}).named("other");
    let mut engine = builder.build().unwrap();
    let names: Vec<Vec<&str>> = engine
        .schedule()
        .waves()
        .into_iter()
        .map(|w| w.into_iter().map(|(_, n)| n).collect())
        .collect();
    assert_eq!(
        names,
        [vec!["accelerate", "other"], vec!["move"], vec!["draw"]]
    );
    let e = engine.registry_mut().spawn((Position(0), Velocity(1)));
    engine.run(2).unwrap();
    assert_eq!(engine.registry().get::<Position>(e).unwrap().0, 2 + 3);
}

#[test]
fn an_error_of_the_last_part_stops_the_tick_naming_the_pipe() {
    let mut builder = Engine::builder();
    builder
        .add_system(fastest.pipe(|In(top): In<i64>| -> Result<(), String> {
            if top > 2 {
                Err(format!("too fast: {top}"))
            } else {
                Ok(())
            }
        }))
        .named("speed_check");
    let mut engine = builder.build().unwrap();
    engine.registry_mut().spawn((Velocity(9),));
    let error = engine.tick().unwrap_err();
    assert_eq!(
        error,
        EngineError::Run(RunError::System {
            tick: 0,
            source: SystemError::Failed {
                system: "speed_check".to_owned(),
                message: "too fast: 9".to_owned(),
            },
        })
    );
}

/// Pipes with commands in both parts, a `par_each` and a run condition.
fn run(threads: usize) -> Vec<(u32, i64, bool)> {
    let mut builder = Engine::builder();
    builder.threads(threads);
    let spawner = |tick: Tick, mut c: Commands| -> u64 {
        for i in 0..40 {
            c.spawn((Position(i), Velocity(tick.number as i64 % 3)));
        }
        tick.number
    };
    let marker = |In(n): In<u64>, q: Query<(Entity, &Position)>, mut c: Commands| {
        for (e, p) in q.iter() {
            if (p.0 as u64 + n).is_multiple_of(7) {
                c.entity(e).insert((Marker,));
            }
        }
    };
    builder
        .add_system(spawner.pipe(marker))
        .named("spawn_and_mark");
    builder
        .add_system(
            fastest.pipe(|In(top): In<i64>, mut q: Query<&mut Position>| {
                q.par_each(|p| p.0 += top);
            }),
        )
        .named("drift")
        .run_if(|tick: Tick| tick.number % 2 == 1);
    let mut engine = builder.build().unwrap();
    engine.run(10).unwrap();
    let registry = engine.registry();
    let mut world: Vec<(u32, i64, bool)> = registry
        .view::<(Entity, &Position)>()
        .iter()
        .map(|(e, p)| (e.index(), p.0, registry.get::<Marker>(e).is_some()))
        .collect();
    world.sort_unstable();
    world
}

#[test]
fn the_same_world_on_1_2_and_8_threads() {
    let one = run(1);
    assert_eq!(one.len(), 400);
    assert!(one.iter().any(|w| w.2) && one.iter().any(|w| !w.2));
    assert_eq!(run(2), one);
    assert_eq!(run(8), one);
}

#[test]
fn two_commands_in_one_part_are_still_a_clash() {
    use ecs_runtime::scheduler::BuildError;
    let mut builder = Engine::builder();
    builder
        .add_system(fastest.pipe(|In(_): In<i64>, _a: Commands, _b: Commands| {}))
        .named("twice");
    assert!(matches!(
        builder.build().unwrap_err(),
        EngineError::Build(BuildError::ParamClash { ref system, .. }) if system == "twice"
    ));
}
