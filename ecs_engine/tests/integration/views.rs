//! Views: which entities are visited, how often, with what.

use std::collections::{BTreeMap, BTreeSet};

use ecs_engine::{Access, EcsError, Entity, Registry, Without};

use crate::components::{A, B, C, Tag};

const N: u32 = if cfg!(miri) { 60 } else { 600 };

/// Entity i has A always, B when i % 2 == 0, C when i % 3 == 0, Tag when i % 5 == 0.
fn world() -> (Registry, Vec<Entity>) {
    let mut registry = Registry::new();
    let entities = (0..N)
        .map(|i| {
            let e = registry.spawn((A(i),));
            if i % 2 == 0 {
                registry.insert(e, B(i)).unwrap();
            }
            if i % 3 == 0 {
                registry.insert(e, C(i)).unwrap();
            }
            if i % 5 == 0 {
                registry.insert(e, Tag).unwrap();
            }
            e
        })
        .collect();
    (registry, entities)
}

fn visited_ab(registry: &Registry) -> BTreeMap<Entity, (u32, u32)> {
    let mut seen = BTreeMap::new();
    registry
        .view::<(Entity, &A, &B)>()
        .each(|(e, a, b)| assert!(seen.insert(e, (a.0, b.0)).is_none(), "{e} twice"));
    seen
}

#[test]
fn join_visits_exactly_the_owners_once() {
    let (registry, entities) = world();
    let expected: BTreeMap<Entity, (u32, u32)> = (0..N)
        .filter(|i| i % 2 == 0)
        .map(|i| (entities[i as usize], (i, i)))
        .collect();
    assert_eq!(visited_ab(&registry), expected);

    // Driven by C (smallest), joined with A and B.
    let mut abc: Vec<u32> = registry
        .view::<(&C, &B, &A)>()
        .iter()
        .map(|(c, b, a)| {
            assert_eq!((c.0, b.0), (a.0, a.0));
            a.0
        })
        .collect();
    abc.sort_unstable();
    let expected: Vec<u32> = (0..N).filter(|i| i % 6 == 0).collect();
    assert_eq!(abc, expected);
}

#[test]
fn removals_in_the_middle_of_pools_keep_the_join_exact() {
    let (mut registry, entities) = world();
    let mut expected = BTreeMap::new();
    for i in 0..N {
        let e = entities[i as usize];
        match i % 4 {
            0 => {
                registry.remove::<B>(e).unwrap();
            }
            1 => registry.despawn(e).unwrap(),
            _ => {
                if i % 2 == 0 {
                    expected.insert(e, (i, i));
                }
            }
        }
    }
    assert_eq!(visited_ab(&registry), expected);
    assert_eq!(registry.count::<A>(), (N - N.div_ceil(4)) as usize);
}

#[test]
fn a_join_aligned_for_some_blocks_and_not_for_others_visits_each_owner_once() {
    // Pools filled together are joined block by block by position, the
    // blocks growing while they stay aligned; here the alignment breaks
    // after a few thousand entities (B's entries of a middle stretch move
    // to B's end) and holds again after that stretch.
    // Under Miri, whose views start from blocks of 64, 240 entities grow
    // a block and break one.
    let n: u32 = if cfg!(miri) { 240 } else { 6_000 };
    let moved = n / 2..n / 2 + n / 10;
    let mut registry = Registry::new();
    let entities: Vec<Entity> = (0..n).map(|i| registry.spawn((A(i), B(i)))).collect();
    for i in moved.clone() {
        let e = entities[i as usize];
        registry.remove::<B>(e).unwrap();
        registry.insert(e, B(i)).unwrap();
    }
    registry.view_mut::<(&mut A, &B)>().each(|(a, b)| {
        assert_eq!(a.0, b.0);
        a.0 += 1;
    });
    let expected: BTreeMap<Entity, (u32, u32)> =
        (0..n).map(|i| (entities[i as usize], (i + 1, i))).collect();
    assert_eq!(visited_ab(&registry), expected);
}

#[test]
fn mutation_through_view_and_optional_terms() {
    let (mut registry, entities) = world();
    registry
        .view_mut::<(&mut A, Option<&B>, Option<&mut C>)>()
        .each(|(a, b, c)| {
            a.0 += b.map_or(1000, |b| b.0);
            if let Some(c) = c {
                c.0 = 7;
            }
        });
    for (i, &e) in entities.iter().enumerate() {
        let i = i as u32;
        let expected = if i.is_multiple_of(2) { 2 * i } else { i + 1000 };
        assert_eq!(registry.get::<A>(e), Some(&A(expected)));
        assert_eq!(
            registry.get::<C>(e).copied(),
            i.is_multiple_of(3).then_some(C(7))
        );
    }
}

#[test]
fn filters_with_and_without() {
    let (mut registry, entities) = world();
    let without: BTreeSet<Entity> = registry
        .view_mut::<(Entity, &A)>()
        .without::<Tag>()
        .without::<B>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    let expected: BTreeSet<Entity> = (0..N)
        .filter(|i| i % 5 != 0 && i % 2 != 0)
        .map(|i| entities[i as usize])
        .collect();
    assert_eq!(without, expected);

    let with: Vec<u32> = registry
        .view_mut::<&A>()
        .with::<Tag>()
        .with::<C>()
        .iter()
        .map(|a| a.0)
        .collect();
    assert_eq!(with, (0..N).filter(|i| i % 15 == 0).collect::<Vec<_>>());

    let typed = registry.view_filtered::<&A, Without<A>>().count();
    assert_eq!(typed, 0);
}

#[test]
fn each_with_entity_and_get() {
    let (mut registry, entities) = world();
    let mut view = registry.view_mut::<(&mut A, &B)>();
    let mut count = 0;
    view.each_with_entity(|e, (a, b)| {
        assert_eq!(e, entities[b.0 as usize]);
        a.0 = 1;
        count += 1;
    });
    assert_eq!(count, N.div_ceil(2));
    assert!(matches!(
        view.get(entities[1]),
        Err(EcsError::NotInView { entity, .. }) if entity == entities[1]
    ));
    assert_eq!(view.get(entities[2]).map(|(a, _)| a.0), Ok(1));
    assert!(view.contains(entities[4]));
    assert!(!view.contains(Entity::NULL));
}

#[test]
fn visit_despawns_the_visited_entity_and_visits_others_once() {
    let (mut registry, entities) = world();
    let mut seen = BTreeSet::new();
    let changes = registry.visit::<(&A, Option<&B>)>(|e, (a, b), changes| {
        assert!(seen.insert(e));
        if a.0 % 3 == 0 {
            changes.despawn();
        } else if b.is_some() {
            changes.remove::<B>();
        }
    });
    assert_eq!(seen.len(), N as usize);
    assert_eq!(changes, (0..N).filter(|i| i % 3 == 0 || i % 2 == 0).count());
    assert_eq!(registry.len(), (0..N).filter(|i| i % 3 != 0).count());
    assert_eq!(registry.count::<B>(), 0);
    assert_eq!(registry.count::<C>(), 0);
    assert!(!registry.is_alive(entities[3]));
    assert!(registry.is_alive(entities[4]));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "rayon's crossbeam-epoch trips Stacked Borrows; .ci/run runs this under Tree Borrows"
)]
fn par_each_visits_every_entity_once() {
    let mut registry = Registry::new();
    let count = if cfg!(miri) { 300 } else { 20_000 };
    for i in 0..count {
        registry.spawn((A(i), B(0)));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    pool.install(|| {
        registry
            .view_mut::<(&A, &mut B)>()
            .par_each(|(a, b)| b.0 += a.0 + 1)
    });
    let mut sum = 0u64;
    registry.view::<(&A, &B)>().each(|(a, b)| {
        assert_eq!(b.0, a.0 + 1);
        sum += b.0 as u64;
    });
    assert_eq!(sum, (1..=count as u64).sum::<u64>());
}

#[test]
#[should_panic(expected = "query names a type twice")]
fn same_type_twice_with_a_write_panics_at_creation() {
    let mut registry = Registry::new();
    registry.spawn((A(1),));
    let _ = registry.view_mut::<(&mut A, &A)>();
}

/// A view that names a type twice is checked pair by pair (the one-term
/// fast path does not apply): two writers or a writer and a reader are
/// refused in either order, a writer beside a membership filter of its own
/// type is accepted and writes every member.
#[test]
fn a_type_named_twice_is_refused_or_accepted_as_a_pair() {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    let (mut registry, entities) = world();
    let refused = |open: &mut dyn FnMut(&mut Registry)| {
        let mut registry = Registry::new();
        registry.spawn((A(1), B(1)));
        catch_unwind(AssertUnwindSafe(|| open(&mut registry))).is_err()
    };
    assert!(refused(&mut |r| drop(r.view_mut::<(&mut A, &mut A)>())));
    assert!(refused(&mut |r| drop(r.view_mut::<(&A, &mut A)>())));
    assert!(refused(&mut |r| drop(r.view_mut::<(&mut A, &B, &A)>())));
    assert!(!refused(&mut |r| drop(r.view_mut::<(&A, &A)>())));
    registry
        .view_filtered::<&mut A, ecs_engine::With<A>>()
        .each(|a| a.0 += 1000);
    registry
        .view_filtered::<(ecs_engine::Has<B>, &mut A), ecs_engine::With<B>>()
        .each(|(has, a)| {
            assert!(has);
            a.0 += 1000;
        });
    for (i, &e) in entities.iter().enumerate() {
        let bump = if i % 2 == 0 { 2000 } else { 1000 };
        assert_eq!(registry.get::<A>(e), Some(&A(i as u32 + bump)));
    }
}

#[test]
fn cell_reports_conflicts_by_name() {
    let mut registry = Registry::new();
    registry.spawn((A(1), B(1)));
    let cell = registry.cell();
    let writer = cell.view::<&mut A>().unwrap();
    let err = cell.view::<(&B, &A)>().unwrap_err();
    assert_eq!(
        err,
        EcsError::BorrowConflict {
            name: std::any::type_name::<A>().into(),
            wanted: Access::Read,
            held: Access::Write
        }
    );
    // The failed view released what it had taken: B is free.
    assert!(cell.view::<&mut B>().is_ok());
    drop(writer);
    let reader = cell.view::<&A>().unwrap();
    let err = cell.view::<&mut A>().unwrap_err();
    assert!(
        err.to_string().contains("already borrowed for reading"),
        "{err}"
    );
    drop(reader);
    assert!(cell.view::<&mut A>().is_ok());
}

#[test]
fn views_over_missing_pools_are_empty() {
    let mut registry = Registry::new();
    registry.spawn((A(1),));
    assert_eq!(registry.view::<(&A, &B)>().count(), 0);
    assert_eq!(registry.view_mut::<&mut C>().count(), 0);
    assert_eq!(registry.view::<(&A, Option<&C>)>().count(), 1);
}

#[test]
fn runs_at_other_offsets_join_by_position_and_stay_exact() {
    let n: u32 = if cfg!(miri) { 40 } else { 1500 };
    let mut registry = Registry::new();
    let lonely: Vec<Entity> = (0..n).map(|i| registry.spawn((A(i),))).collect();
    let paired: Vec<Entity> = (0..n).map(|i| registry.spawn((A(n + i), B(i)))).collect();
    // B's run sits at offset `n` of A's pool: joined by position.
    registry
        .view_mut::<(&mut A, &B)>()
        .each(|(a, b)| a.0 += 10 * b.0);
    for (i, &e) in paired.iter().enumerate() {
        assert_eq!(registry.get::<A>(e), Some(&A(n + 11 * i as u32)));
    }
    assert_eq!(registry.get::<A>(lonely[3]), Some(&A(3)));

    // Break the run in the middle: swap-and-pop reorders B's pool.
    registry.remove::<B>(paired[(n / 2) as usize]).unwrap();
    registry.despawn(paired[1]).unwrap();
    let mut seen: Vec<(Entity, u32, u32)> = registry
        .view_mut::<(Entity, &mut A, &B)>()
        .iter()
        .map(|(e, a, b)| {
            a.0 = b.0;
            (e, a.0, b.0)
        })
        .collect();
    seen.sort();
    let mut expected: Vec<(Entity, u32, u32)> = paired
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != 1 && i != (n / 2) as usize)
        .map(|(i, &e)| (e, i as u32, i as u32))
        .collect();
    expected.sort();
    assert_eq!(seen, expected);
}
