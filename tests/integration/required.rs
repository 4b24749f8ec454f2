//! Required components through command buffers: spawns, inserts and
//! bundle inserts recorded by parallel systems get what their types
//! require at apply, with the same world on 1, 2 and 8 threads.

use ecs_runtime::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Enemy(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(u32);
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Velocity(i32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Burning(u32);
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Smoke;

/// Each entity: (index, enemy, health, velocity, burning, smoke).
type World = Vec<(u32, Option<u32>, Option<u32>, Option<i32>, bool, bool)>;

fn run(threads: usize) -> World {
    let mut builder = Engine::builder();
    builder.threads(threads);
    let registry = builder.registry_mut();
    registry
        .register_required_with::<Enemy, Health>(|| Health(10))
        .unwrap();
    registry.register_required::<Health, Velocity>().unwrap();
    registry.register_required::<Burning, Smoke>().unwrap();
    // Two systems that record commands in parallel (disjoint types).
    builder.add_system(|tick: Tick, mut commands: Commands| {
        for i in 0..50 {
            let n = tick.number as u32 * 100 + i;
            if i % 5 == 0 {
                commands.spawn((Enemy(n), Health(1))); // given: wins
            } else {
                commands.spawn((Enemy(n),));
            }
        }
    });
    builder.add_system(|q: Query<(Entity, &Velocity)>, mut commands: Commands| {
        for (e, v) in q.iter() {
            if v.0 == 0 {
                commands.entity(e).insert((Burning(1),));
                commands.insert_bundle(e, (Velocity(1), Burning(2)));
            }
        }
    });
    let mut engine = builder.build().unwrap();
    engine.run(6).unwrap();
    let registry = engine.registry();
    let mut world: World = registry
        .entities()
        .iter()
        .map(|e| {
            (
                e.index(),
                registry.get::<Enemy>(e).map(|x| x.0),
                registry.get::<Health>(e).map(|x| x.0),
                registry.get::<Velocity>(e).map(|x| x.0),
                registry.get::<Burning>(e).is_some(),
                registry.get::<Smoke>(e).is_some(),
            )
        })
        .collect();
    world.sort_unstable_by_key(|w| w.0);
    world
}

#[test]
fn commands_get_required_components_the_same_on_1_2_and_8_threads() {
    let one = run(1);
    assert_eq!(one.len(), 300);
    // Every enemy has health (10 unless given) and a velocity; those of
    // the ticks before the last were set burning (with smoke) and moved.
    for &(_, enemy, health, velocity, burning, smoke) in &one {
        let n = enemy.unwrap();
        assert_eq!(health, Some(if n % 100 % 5 == 0 { 1 } else { 10 }));
        let old = n / 100 < 5;
        assert_eq!(velocity, Some(i32::from(old)));
        assert_eq!((burning, smoke), (old, old));
    }
    assert_eq!(run(2), one);
    assert_eq!(run(8), one);
}
