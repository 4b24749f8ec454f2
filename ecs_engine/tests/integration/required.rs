//! Required components: every insert path of the registry fills what the
//! inserted types require, transitively, given values winning, cycles
//! ending; and a proptest model of spawns and inserts against a plain
//! closure computed by hand.

use std::collections::BTreeSet;

use ecs_engine::{ChildOf, EcsError, Entity, Registry};
use proptest::prelude::*;

use crate::components::{A, B, C};

#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct D(u32);

/// A requires B (made as B(7)), B requires C (default), C requires A
/// (a cycle back), D requires nothing.
fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.register_required_with::<A, B>(|| B(7)).unwrap();
    registry.register_required::<B, C>().unwrap();
    registry.register_required_with::<C, A>(|| A(9)).unwrap();
    registry
}

fn parts(registry: &Registry, e: Entity) -> (Option<A>, Option<B>, Option<C>, Option<D>) {
    (
        registry.get::<A>(e).copied(),
        registry.get::<B>(e).copied(),
        registry.get::<C>(e).copied(),
        registry.get::<D>(e).copied(),
    )
}

#[test]
fn spawn_fills_transitively_and_the_cycle_ends() {
    let mut registry = registry();
    let e = registry.spawn((A(1),));
    assert_eq!(
        parts(&registry, e),
        (Some(A(1)), Some(B(7)), Some(C(0)), None)
    );
    // Entered through the cycle's middle: A is made by C's constructor.
    let f = registry.spawn((B(2),));
    assert_eq!(
        parts(&registry, f),
        (Some(A(9)), Some(B(2)), Some(C(0)), None)
    );
    // A type without requirements adds nothing.
    let g = registry.spawn((D(3),));
    assert_eq!(parts(&registry, g), (None, None, None, Some(D(3))));
}

#[test]
fn given_values_win_whatever_their_place_in_the_bundle() {
    let mut registry = registry();
    let e = registry.spawn((A(1), C(5)));
    assert_eq!(
        parts(&registry, e),
        (Some(A(1)), Some(B(7)), Some(C(5)), None)
    );
    let f = registry.spawn((C(5), B(4), A(1)));
    assert_eq!(
        parts(&registry, f),
        (Some(A(1)), Some(B(4)), Some(C(5)), None)
    );
}

#[test]
fn insert_try_insert_insert_bundle_and_insert_many_fill_too() {
    let mut registry = registry();
    let [e, f, g, h] = [(); 4].map(|()| registry.spawn((D(0),)));
    registry.insert(e, A(1)).unwrap();
    registry.try_insert(f, B(2)).unwrap();
    registry.insert_bundle(g, (C(3), D(4))).unwrap();
    let mut items = [(h, A(5))].into_iter();
    assert_eq!(registry.insert_many(&mut items).0, 1);
    assert_eq!(
        parts(&registry, e),
        (Some(A(1)), Some(B(7)), Some(C(0)), Some(D(0)))
    );
    assert_eq!(
        parts(&registry, f),
        (Some(A(9)), Some(B(2)), Some(C(0)), Some(D(0)))
    );
    assert_eq!(
        parts(&registry, g),
        (Some(A(9)), Some(B(7)), Some(C(3)), Some(D(4)))
    );
    assert_eq!(
        parts(&registry, h),
        (Some(A(5)), Some(B(7)), Some(C(0)), Some(D(0)))
    );
}

#[test]
fn insert_many_stops_at_a_dead_entity_as_before() {
    let mut registry = registry();
    let a = registry.spawn(());
    let b = registry.spawn(());
    registry.despawn(b).unwrap();
    let mut items = [(a, A(1)), (b, A(2)), (a, A(3))].into_iter();
    let (done, stop) = registry.insert_many(&mut items);
    assert_eq!((done, stop.unwrap_err().value), (1, A(2)));
    assert_eq!(registry.insert_many(&mut items).0, 1);
    assert_eq!(
        parts(&registry, a),
        (Some(A(3)), Some(B(7)), Some(C(0)), None)
    );
}

#[test]
fn batches_fill_each_entity() {
    let mut registry = registry();
    let spawned: Vec<Entity> = registry.spawn_batch((0..3).map(|i| (A(i),))).collect();
    registry.spawn_batch((10..13).map(|i| (A(i), D(i))));
    let mut reserved = Vec::new();
    registry.reserve_entities(2, &mut reserved).unwrap();
    let mut bundles = (20..22).map(|i| (B(i),));
    registry
        .spawn_reserved_batch(&reserved, &mut bundles)
        .unwrap();
    assert_eq!(registry.len(), 8);
    assert_eq!(registry.count::<A>(), 8);
    assert_eq!(registry.count::<B>(), 8);
    assert_eq!(registry.count::<C>(), 8);
    assert_eq!(
        parts(&registry, spawned[2]),
        (Some(A(2)), Some(B(7)), Some(C(0)), None)
    );
    assert_eq!(
        parts(&registry, reserved[1]),
        (Some(A(9)), Some(B(21)), Some(C(0)), None)
    );
}

#[test]
fn a_batch_of_a_reserved_handle_no_longer_reserved_stops_as_before() {
    let mut registry = registry();
    let mut reserved = Vec::new();
    registry.reserve_entities(3, &mut reserved).unwrap();
    registry.cancel_reserved(reserved[1]).unwrap();
    let mut bundles = (0..3).map(|i| (A(i),));
    let error = registry
        .spawn_reserved_batch(&reserved, &mut bundles)
        .unwrap_err();
    assert_eq!(error.0, 1);
    assert_eq!(bundles.next(), Some((A(2),)));
    assert_eq!(
        parts(&registry, reserved[0]),
        (Some(A(0)), Some(B(7)), Some(C(0)), None)
    );
}

#[test]
fn registering_again_replaces_the_constructor_and_old_entities_stay() {
    let mut registry = Registry::new();
    let before = registry.spawn((A(0),));
    registry.register_required_with::<A, B>(|| B(1)).unwrap();
    registry.register_required_with::<A, B>(|| B(2)).unwrap();
    let after = registry.spawn((A(0),));
    assert_eq!(registry.get::<B>(before), None);
    assert_eq!(registry.get::<B>(after), Some(&B(2)));
}

#[test]
fn the_hierarchy_links_cannot_be_required() {
    let mut registry = Registry::new();
    let error = registry
        .register_required_with::<A, ChildOf>(|| -> ChildOf { unreachable!("never built") })
        .unwrap_err();
    assert!(matches!(error, EcsError::ReadOnlyComponent { .. }));
    assert!(error.to_string().contains("ChildOf"), "{error}");
    let error = registry.register_required::<ChildOf, A>().unwrap_err();
    assert!(matches!(error, EcsError::ReadOnlyComponent { .. }));
}

/// The type indices (A = 0 .. D = 3) an entity has after spawning `given`,
/// by the rules worked out by hand over `edges` (requirer, required): a
/// depth-first walk from each given type in order.
fn closure(given: &[usize], edges: &[(usize, usize)]) -> BTreeSet<usize> {
    fn visit(t: usize, edges: &[(usize, usize)], have: &mut BTreeSet<usize>) {
        let mut seen = Vec::new();
        for &(from, to) in edges {
            if from == t && !seen.contains(&to) {
                seen.push(to);
                if have.insert(to) {
                    visit(to, edges, have);
                }
            }
        }
    }
    let mut have: BTreeSet<usize> = given.iter().copied().collect();
    for &t in given {
        visit(t, edges, &mut have);
    }
    have
}

fn require(registry: &mut Registry, (from, to): (usize, usize)) {
    macro_rules! to {
        ($from:ty) => {
            match to {
                0 => registry.register_required::<$from, A>(),
                1 => registry.register_required::<$from, B>(),
                2 => registry.register_required::<$from, C>(),
                _ => registry.register_required::<$from, D>(),
            }
        };
    }
    match from {
        0 => to!(A),
        1 => to!(B),
        2 => to!(C),
        _ => to!(D),
    }
    .unwrap();
}

fn spawn_one(registry: &mut Registry, t: usize) -> Entity {
    match t {
        0 => registry.spawn((A(100),)),
        1 => registry.spawn((B(100),)),
        2 => registry.spawn((C(100),)),
        _ => registry.spawn((D(100),)),
    }
}

fn has(registry: &Registry, e: Entity) -> BTreeSet<usize> {
    let (a, b, c, d) = parts(registry, e);
    [a.is_some(), b.is_some(), c.is_some(), d.is_some()]
        .into_iter()
        .enumerate()
        .filter_map(|(i, h)| h.then_some(i))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_requirement_graph_fills_its_closure(
        edges in proptest::collection::vec((0..4usize, 0..4usize), 0..8),
        spawns in proptest::collection::vec(0..4usize, 1..6),
    ) {
        let mut registry = Registry::new();
        for &edge in &edges {
            require(&mut registry, edge);
        }
        for &t in &spawns {
            let e = spawn_one(&mut registry, t);
            prop_assert_eq!(has(&registry, e), closure(&[t], &edges));
            // The given value is untouched.
            let given = match t {
                0 => registry.get::<A>(e).map(|v| v.0),
                1 => registry.get::<B>(e).map(|v| v.0),
                2 => registry.get::<C>(e).map(|v| v.0),
                _ => registry.get::<D>(e).map(|v| v.0),
            };
            prop_assert_eq!(given, Some(100));
        }
    }
}
