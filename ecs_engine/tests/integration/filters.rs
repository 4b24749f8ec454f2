//! Filters and terms: `Or`, filter tuples up to 8, `Has<T>`, views with no
//! required term, read-only views through `&self`, `get_many_mut`; the
//! selections checked against a `HashMap` model on random worlds.

use std::collections::{BTreeSet, HashMap};

use ecs_engine::{
    EcsError, Entity, Has, Or, QueryData, QueryFilter, ReadOnlyQueryData, Registry, With, Without,
};
use proptest::prelude::*;

use crate::components::{A, B, C};

#[derive(Debug, Clone, Copy, PartialEq)]
struct D;
#[derive(Debug, Clone, Copy, PartialEq)]
struct E;
#[derive(Debug, Clone, Copy, PartialEq)]
struct F;
#[derive(Debug, Clone, Copy, PartialEq)]
struct G;
#[derive(Debug, Clone, Copy, PartialEq)]
struct H;

const KINDS: u32 = 8;

/// Gives `entity` the component of bit `kind` (0 = A .. 7 = H).
fn insert_kind(registry: &mut Registry, entity: Entity, kind: u32, value: u32) {
    match kind {
        0 => drop(registry.insert(entity, A(value))),
        1 => drop(registry.insert(entity, B(value))),
        2 => drop(registry.insert(entity, C(value))),
        3 => drop(registry.insert(entity, D)),
        4 => drop(registry.insert(entity, E)),
        5 => drop(registry.insert(entity, F)),
        6 => drop(registry.insert(entity, G)),
        _ => drop(registry.insert(entity, H)),
    }
}

fn remove_kind(registry: &mut Registry, entity: Entity, kind: u32) {
    let _ = match kind {
        0 => registry.remove::<A>(entity).map(drop),
        1 => registry.remove::<B>(entity).map(drop),
        2 => registry.remove::<C>(entity).map(drop),
        3 => registry.remove::<D>(entity).map(drop),
        4 => registry.remove::<E>(entity).map(drop),
        5 => registry.remove::<F>(entity).map(drop),
        6 => registry.remove::<G>(entity).map(drop),
        _ => registry.remove::<H>(entity).map(drop),
    };
}

#[derive(Debug, Clone)]
enum Op {
    /// Spawn an entity with the components of the mask's bits.
    Spawn(u8),
    Despawn(usize),
    Insert(usize, u32),
    Remove(usize, u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u8>().prop_map(Op::Spawn),
        1 => any::<usize>().prop_map(Op::Despawn),
        2 => (any::<usize>(), 0..KINDS).prop_map(|(i, k)| Op::Insert(i, k)),
        2 => (any::<usize>(), 0..KINDS).prop_map(|(i, k)| Op::Remove(i, k)),
    ]
}

/// The registry and its model: each alive entity's component mask.
fn build(ops: &[Op]) -> (Registry, HashMap<Entity, u8>, Vec<Entity>) {
    let mut registry = Registry::new();
    let mut model = HashMap::new();
    let mut handles = Vec::new();
    for op in ops {
        match *op {
            Op::Spawn(mask) => {
                let e = registry.spawn_empty();
                for kind in 0..KINDS {
                    if mask & (1 << kind) != 0 {
                        insert_kind(&mut registry, e, kind, e.index());
                    }
                }
                model.insert(e, mask);
                handles.push(e);
            }
            Op::Despawn(i) if !handles.is_empty() => {
                let e = handles[i % handles.len()];
                let _ = registry.despawn(e);
                model.remove(&e);
            }
            Op::Insert(i, kind) if !handles.is_empty() => {
                let e = handles[i % handles.len()];
                if let Some(mask) = model.get_mut(&e) {
                    insert_kind(&mut registry, e, kind, e.index());
                    *mask |= 1 << kind;
                }
            }
            Op::Remove(i, kind) if !handles.is_empty() => {
                let e = handles[i % handles.len()];
                if let Some(mask) = model.get_mut(&e) {
                    remove_kind(&mut registry, e, kind);
                    *mask &= !(1 << kind);
                }
            }
            _ => {}
        }
    }
    (registry, model, handles)
}

fn has(mask: u8, kind: u32) -> bool {
    mask & (1 << kind) != 0
}

/// Checks that the view `Q`, `F` visits exactly the entities of `model`
/// for which `keep` holds (each once), and that `get`/`contains`/`count`
/// agree, for every handle ever made (dead ones included).
fn check<Q, Fl>(
    registry: &mut Registry,
    model: &HashMap<Entity, u8>,
    handles: &[Entity],
    keep: impl Fn(u8) -> bool,
    entity_of: impl Fn(Q::Item<'_>) -> Entity,
) where
    Q: ReadOnlyQueryData,
    Fl: QueryFilter,
{
    let expected: BTreeSet<Entity> = model
        .iter()
        .filter(|&(_, &mask)| keep(mask))
        .map(|(&e, _)| e)
        .collect();
    let view = registry.view_filtered::<Q, Fl>();
    let seen: Vec<Entity> = view.iter().map(&entity_of).collect();
    let unique: BTreeSet<Entity> = seen.iter().copied().collect();
    assert_eq!(unique.len(), seen.len(), "an entity was visited twice");
    assert_eq!(unique, expected, "{}", std::any::type_name::<(Q, Fl)>());
    assert_eq!(view.count(), expected.len());
    for &e in handles {
        assert_eq!(view.contains(e), expected.contains(&e), "contains({e})");
        assert_eq!(
            view.get(e).ok().map(&entity_of),
            expected.contains(&e).then_some(e)
        );
    }
}

fn check_all(ops: &[Op]) {
    let (mut registry, model, handles) = build(ops);
    let r = &mut registry;
    let (m, h) = (&model, &handles[..]);
    // Entity only, driven by a filter's pool.
    check::<Entity, With<A>>(r, m, h, |k| has(k, 0), |e| e);
    // Entity only, nothing drives: every alive entity.
    check::<Entity, ()>(r, m, h, |_| true, |e| e);
    check::<Entity, Without<A>>(r, m, h, |k| !has(k, 0), |e| e);
    check::<Entity, Or<(With<A>, With<B>)>>(r, m, h, |k| has(k, 0) || has(k, 1), |e| e);
    check::<Entity, Or<(With<A>, With<B>, Without<C>)>>(
        r,
        m,
        h,
        |k| has(k, 0) || has(k, 1) || !has(k, 2),
        |e| e,
    );
    check::<(Entity, &A), Or<(With<B>, Without<C>)>>(
        r,
        m,
        h,
        |k| has(k, 0) && (has(k, 1) || !has(k, 2)),
        |(e, a)| {
            assert_eq!(a.0, e.index());
            e
        },
    );
    check::<Entity, (With<A>, Without<B>, Or<(With<C>, With<D>)>)>(
        r,
        m,
        h,
        |k| has(k, 0) && !has(k, 1) && (has(k, 2) || has(k, 3)),
        |e| e,
    );
    // A tuple of 8 filters, nested `Or`s inside.
    check::<
        (Entity, Option<&C>),
        (
            Or<(With<A>, With<B>)>,
            Without<C>,
            Or<(With<D>, Or<(With<E>, With<F>)>)>,
            Without<G>,
            (),
            Or<(Without<H>, With<A>)>,
            Or<(
                With<D>,
                With<E>,
                With<F>,
                With<A>,
                With<B>,
                With<C>,
                With<G>,
                With<H>,
            )>,
            Without<H>,
        ),
    >(
        r,
        m,
        h,
        |k| {
            (has(k, 0) || has(k, 1))
                && !has(k, 2)
                && (has(k, 3) || has(k, 4) || has(k, 5))
                && !has(k, 6)
                && !has(k, 7)
        },
        |(e, c)| {
            assert!(c.is_none());
            e
        },
    );
    // `Has` terms, every alive entity (driven by none).
    check::<(Entity, Has<B>, Option<&C>), ()>(
        r,
        m,
        h,
        |_| true,
        |(e, b, c)| {
            let mask = model[&e];
            assert_eq!(b, has(mask, 1));
            assert_eq!(c.map(|c| c.0), has(mask, 2).then_some(e.index()));
            e
        },
    );
    // `Has` beside a required term, driven by that term.
    check::<(Entity, &B, Has<A>, Has<H>), With<C>>(
        r,
        m,
        h,
        |k| has(k, 1) && has(k, 2),
        |(e, b, a, hh)| {
            let mask = model[&e];
            assert_eq!((b.0, a, hh), (e.index(), has(mask, 0), has(mask, 7)));
            e
        },
    );
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 128 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn filters_select_what_the_model_selects(ops in prop::collection::vec(op(), 0..if cfg!(miri) { 24 } else { 160 })) {
        check_all(&ops);
    }
}

#[test]
fn an_entity_only_query_with_a_filter_is_driven_by_the_filters_pool() {
    let mut registry = Registry::new();
    let tagged: Vec<Entity> = (0..10u32)
        .map(|i| {
            let e = registry.spawn((A(i),));
            if i % 3 == 0 {
                registry.insert(e, D).unwrap();
            }
            e
        })
        .filter(|e| e.index() % 3 == 0)
        .collect();
    // In D's dense order: the order D was inserted.
    let seen: Vec<Entity> = registry.view_filtered::<Entity, With<D>>().iter().collect();
    assert_eq!(seen, tagged);
    // With a smaller pool among two filters, that one drives.
    let seen: Vec<Entity> = registry
        .view_filtered::<Entity, (With<A>, With<D>)>()
        .iter()
        .collect();
    assert_eq!(seen, tagged);
    // Added by `.with` too.
    let seen: Vec<Entity> = registry.view::<Entity>().with::<D>().iter().collect();
    assert_eq!(seen, tagged);
}

#[test]
fn an_unfiltered_entity_query_visits_every_alive_entity_once() {
    let mut registry = Registry::new();
    let a = registry.spawn((A(0),));
    let b = registry.spawn_empty();
    let c = registry.spawn((B(0),));
    registry.despawn(b).unwrap();
    let d = registry.spawn_empty();
    let seen: BTreeSet<Entity> = registry.view::<Entity>().iter().collect();
    assert_eq!(seen, BTreeSet::from([a, c, d]));
    assert_eq!(registry.view::<Entity>().count(), 3);
    assert!(!registry.view::<Entity>().contains(b));
    // Option-only queries too: every alive entity.
    let got: Vec<(Entity, Option<u32>)> = registry
        .view::<(Entity, Option<&A>)>()
        .iter()
        .map(|(e, a)| (e, a.map(|a| a.0)))
        .collect();
    assert_eq!(got.len(), 3);
    assert!(got.contains(&(a, Some(0))) && got.contains(&(d, None)));
}

#[test]
fn disabled_entities_are_skipped_by_entity_only_queries() {
    let mut registry = Registry::new();
    let a = registry.spawn((D,));
    let b = registry.spawn((D,));
    registry.disable(b).unwrap();
    let seen: Vec<Entity> = registry.view_filtered::<Entity, With<D>>().iter().collect();
    assert_eq!(seen, [a]);
    let seen: Vec<Entity> = registry.view::<Entity>().iter().collect();
    assert_eq!(seen, [a]);
    // `Has<Disabled>` names it: disabled entities are seen, and marked.
    let mut seen: Vec<(Entity, bool)> = registry
        .view::<(Entity, Has<ecs_engine::Disabled>)>()
        .iter()
        .collect();
    seen.sort();
    assert_eq!(seen, [(a, false), (b, true)]);
}

#[test]
fn has_reads_membership_beside_readers_and_value_writers_not_beside_a_write_lock() {
    let mut registry = Registry::new();
    let e = registry.spawn((A(1), B(2)));
    let cell = registry.cell();
    let reading = cell.view::<&A>().unwrap();
    let has = cell.view::<(&B, Has<A>)>().unwrap();
    assert_eq!(has.get(e), Ok((&B(2), true)));
    assert_eq!(reading.get(e), Ok(&A(1)));
    drop((reading, has));
    // `&mut A` writes values, under a claim: membership stays readable.
    let mut writing = cell.view::<(&mut A, Has<A>)>().unwrap();
    writing.each(|(a, has)| {
        assert!(has);
        a.0 += 10;
    });
    drop(writing);
    assert_eq!(cell.view::<&A>().unwrap().get(e), Ok(&A(11)));
    // `Mut<A>` takes the pool's write lock: nothing else reads it.
    assert!(matches!(
        cell.view::<(ecs_engine::Mut<A>, Has<A>)>(),
        Err(EcsError::BorrowConflict { .. })
    ));
    // The access a scheduler derives: a read of A.
    let mut access = Vec::new();
    <Has<A> as QueryData>::access(&mut |c| access.push(c.access));
    assert_eq!(access, [ecs_engine::Access::Read]);
}

#[test]
fn read_only_views_iterate_count_and_get_through_shared_references() {
    let mut registry = Registry::new();
    let e = registry.spawn((A(1), B(2)));
    registry.spawn((A(3),));
    let view = registry.view::<(&A, Option<&B>)>();
    let view_ref = &view;
    // Two iterators of one read-only view at once.
    let pairs: Vec<(u32, u32)> = view_ref
        .iter()
        .flat_map(|(a, _)| view_ref.iter().map(move |(b, _)| (a.0, b.0)))
        .collect();
    assert_eq!(pairs.len(), 4);
    assert_eq!(view_ref.count(), 2);
    assert_eq!(view_ref.get(e), Ok((&A(1), Some(&B(2)))));
    let mut sum = 0;
    view_ref.each(|(a, _)| sum += a.0);
    assert_eq!(sum, 4);
}

#[test]
fn get_many_mut_hands_out_distinct_entities_and_reports_bad_handles() {
    let mut registry = Registry::new();
    let a = registry.spawn((A(10), B(0)));
    let b = registry.spawn((A(20), B(0)));
    let c = registry.spawn((A(30),));
    let dead = registry.spawn((A(40), B(0)));
    registry.despawn(dead).unwrap();
    {
        let mut view = registry.view_mut::<(&mut A, &B)>();
        let [(x, _), (y, _)] = view.get_many_mut([a, b]).unwrap();
        std::mem::swap(&mut x.0, &mut y.0);
        assert_eq!(
            view.get_many_mut([a, b, a]).err(),
            Some(EcsError::DuplicateEntity {
                entity: a,
                first: 0,
                second: 2
            })
        );
        assert_eq!(
            view.get_many_mut([a, dead]).err(),
            Some(EcsError::NoSuchEntity { entity: dead })
        );
        let missing = view.get_many_mut([c, a]).unwrap_err();
        assert!(matches!(missing, EcsError::NotInView { entity, .. } if entity == c));
        assert!(missing.to_string().contains(&c.to_string()), "{missing}");
        let none: [_; 0] = view.get_many_mut([]).unwrap();
        assert!(none.is_empty());
    }
    assert_eq!(registry.get::<A>(a), Some(&A(20)));
    assert_eq!(registry.get::<A>(b), Some(&A(10)));
    // A filter rejects too.
    let mut view = registry.view_filtered::<&mut A, Without<B>>();
    assert!(matches!(
        view.get_many_mut([c, a]),
        Err(EcsError::NotInView { entity, .. }) if entity == a
    ));
    let [x] = view.get_many_mut([c]).unwrap();
    x.0 += 1;
    drop(view);
    assert_eq!(registry.get::<A>(c), Some(&A(31)));
}
