//! The query language: Or, filter tuples of 8, Has, entity-only
//! views, get_many_mut edge cases, read-only views through `&self`.

use ecs_engine::{Disabled, EcsError, Entity, Has, Or, Registry, With, Without};

use crate::components::{A, B};

#[derive(Debug, Clone, Copy, PartialEq)]
struct C;
#[derive(Debug, Clone, Copy, PartialEq)]
struct D;

fn sorted(mut v: Vec<Entity>) -> Vec<Entity> {
    v.sort_by_key(|e| e.to_bits());
    v
}

#[test]
fn entity_only_or_walks_every_alive_entity() {
    let mut registry = Registry::new();
    let a = registry.spawn((A(0),));
    let b = registry.spawn((B(0),));
    let ab = registry.spawn((A(1), B(1)));
    let _c = registry.spawn((C,));
    let got = sorted(
        registry
            .view_filtered::<Entity, Or<(With<A>, With<B>)>>()
            .iter()
            .collect(),
    );
    assert_eq!(got, vec![a, b, ab]);
    let not_a_or_b = sorted(
        registry
            .view_filtered::<Entity, Or<(Without<A>, With<B>)>>()
            .iter()
            .collect(),
    );
    assert_eq!(not_a_or_b, vec![b, ab, _c]);
}

#[test]
fn eight_filters_in_a_tuple_and_in_an_or() {
    let mut registry = Registry::new();
    let all = registry.spawn((A(0), B(0), C, D));
    let _some = registry.spawn((A(0), B(0)));
    type Eight = (
        With<A>,
        With<B>,
        With<C>,
        With<D>,
        Without<Disabled>,
        With<A>,
        With<B>,
        With<C>,
    );
    let got: Vec<Entity> = registry.view_filtered::<Entity, Eight>().iter().collect();
    assert_eq!(got, vec![all]);
    type AnyOf = Or<(
        With<C>,
        With<D>,
        With<C>,
        With<D>,
        With<C>,
        With<D>,
        With<C>,
        With<D>,
    )>;
    let got: Vec<Entity> = registry.view_filtered::<Entity, AnyOf>().iter().collect();
    assert_eq!(got, vec![all]);
}

#[test]
fn has_reads_presence_and_skips_disabled() {
    let mut registry = Registry::new();
    let a = registry.spawn((A(0), C));
    let b = registry.spawn((A(1),));
    let c = registry.spawn((A(2), C));
    registry.disable(c).unwrap();
    let got: Vec<(Entity, bool)> = registry.view::<(Entity, Has<C>)>().iter().collect();
    let mut got = got;
    got.sort_by_key(|(e, _)| e.to_bits());
    assert_eq!(got, vec![(a, true), (b, false)]);
    // Through &self: two read-only views at once.
    let v1 = registry.view::<&A>();
    let v2 = registry.view::<(Entity, Has<C>)>();
    assert_eq!(v1.count(), 2);
    assert_eq!(v2.get(a), Ok((a, true)));
    assert!(matches!(v2.get(c), Err(EcsError::NotInView { .. })));
}

#[test]
fn get_many_mut_edge_cases() {
    let mut registry = Registry::new();
    let a = registry.spawn((A(1),));
    let b = registry.spawn((A(2),));
    let dead = registry.spawn((A(3),));
    registry.despawn(dead).unwrap();
    let disabled = registry.spawn((A(4),));
    registry.disable(disabled).unwrap();
    let mut view = registry.view_mut::<&mut A>();
    assert!(view.get_many_mut::<0>([]).unwrap().is_empty());
    assert!(matches!(
        view.get_many_mut([a, b, a]),
        Err(EcsError::DuplicateEntity {
            first: 0,
            second: 2,
            ..
        })
    ));
    assert!(matches!(
        view.get_many_mut([a, dead]),
        Err(EcsError::NoSuchEntity { entity }) if entity == dead
    ));
    assert!(matches!(
        view.get_many_mut([a, disabled]),
        Err(EcsError::NotInView { entity, .. }) if entity == disabled
    ));
    let [x, y] = view.get_many_mut([b, a]).unwrap();
    std::mem::swap(x, y);
    drop(view);
    assert_eq!(registry.get::<A>(a), Some(&A(2)));
    assert_eq!(registry.get::<A>(b), Some(&A(1)));
}

#[test]
fn option_mut_alone_walks_everyone_and_writes_only_present() {
    let mut registry = Registry::new();
    let a = registry.spawn((A(1),));
    let b = registry.spawn((B(1),));
    let mut seen = Vec::new();
    registry
        .view_mut::<(Entity, Option<&mut A>)>()
        .each(|(e, a)| {
            if let Some(a) = a {
                a.0 += 1;
            }
            seen.push(e);
        });
    assert_eq!(sorted(seen), vec![a, b]);
    assert_eq!(registry.get::<A>(a), Some(&A(2)));
}
