//! `Registry::spawn_batch`: the same entities, in the same order, as one
//! `spawn` per bundle, whether the batch is iterated, partly iterated or
//! dropped at once.

use ecs_engine::{Entity, Registry};

#[derive(Debug, Clone, Copy, PartialEq)]
struct A(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct B(f32);

/// Each pool's entities and components, in dense order.
type Pools = (Vec<(Entity, A)>, Vec<(Entity, B)>);

fn pools(registry: &Registry) -> Pools {
    (
        registry
            .pool::<A>()
            .unwrap()
            .iter()
            .map(|(e, c)| (e, *c))
            .collect(),
        registry
            .pool::<B>()
            .unwrap()
            .iter()
            .map(|(e, c)| (e, *c))
            .collect(),
    )
}

/// A registry with freed slots, so handles come from the free list first.
fn used() -> Registry {
    let mut registry = Registry::new();
    let early: Vec<Entity> = (0..10).map(|i| registry.spawn((A(i),))).collect();
    for e in early.iter().step_by(3) {
        registry.despawn(*e).unwrap();
    }
    registry
}

#[test]
fn dropped_partly_iterated_and_collected_batches_match_single_spawns() {
    let bundles = |n: u32| (0..n).map(|i| (A(i), B(i as f32 * 0.5)));
    let mut single = used();
    let expected: Vec<Entity> = bundles(50).map(|b| single.spawn(b)).collect();

    let mut dropped = used();
    dropped.spawn_batch(bundles(50));
    assert_eq!(pools(&dropped), pools(&single));

    let mut partly = used();
    let first: Vec<Entity> = partly.spawn_batch(bundles(50)).take(7).collect();
    assert_eq!(first, expected[..7]);
    assert_eq!(pools(&partly), pools(&single));

    let mut collected = used();
    let all: Vec<Entity> = collected.spawn_batch(bundles(50)).collect();
    assert_eq!(all, expected);
    assert_eq!(pools(&collected), pools(&single));
}

#[test]
fn a_type_twice_keeps_the_last_value() {
    let mut registry = Registry::new();
    registry.spawn_batch((0..3).map(|i| (A(i), A(i + 100))));
    let values: Vec<A> = registry.pool::<A>().unwrap().components().to_vec();
    assert_eq!(values, vec![A(100), A(101), A(102)]);
    registry.spawn_batch((0..2).map(|_| ()));
    assert_eq!(registry.len(), 5);
}
