//! Change detection on every path that writes or removes a
//! tracked component, tried as a user would.

use ecs_engine::{ChangeTick, Changed, Entity, Has, Or, Registry, RemovedCursor, With};

use crate::components::{A, B};

fn changed_a(registry: &Registry, since: ChangeTick) -> Vec<Entity> {
    let mut v: Vec<Entity> = registry
        .view_since::<(Entity, &A), Changed<A>>(since)
        .iter()
        .map(|(e, _)| e)
        .collect();
    v.sort_by_key(|e| e.to_bits());
    v
}

fn world(n: u32) -> (Registry, Vec<Entity>, ChangeTick) {
    let mut registry = Registry::new();
    registry.track_changes::<A>();
    let entities = (0..n).map(|i| registry.spawn((A(i), B(i)))).collect();
    let since = registry.change_tick();
    registry.advance_change_tick();
    (registry, entities, since)
}

#[test]
fn get_many_mut_marks_only_the_fetched() {
    let (mut registry, e, since) = world(4);
    {
        let mut view = registry.view_mut::<&mut A>();
        let [x, y] = view.get_many_mut([e[2], e[0]]).unwrap();
        x.0 += 1;
        y.0 += 1;
    }
    assert_eq!(changed_a(&registry, since), vec![e[0], e[2]]);
}

#[test]
fn get_many_mut_refusal_marks_nothing() {
    let (mut registry, e, since) = world(4);
    registry.despawn(e[3]).unwrap();
    {
        let mut view = registry.view_mut::<&mut A>();
        assert!(view.get_many_mut([e[1], e[1]]).is_err());
        assert!(view.get_many_mut([e[1], e[3]]).is_err());
    }
    assert_eq!(changed_a(&registry, since), Vec::<Entity>::new());
}

#[test]
fn get_many_mut_not_in_view_marks_nothing() {
    let (mut registry, e, since) = world(3);
    registry.remove::<B>(e[2]).unwrap();
    {
        let mut view = registry.view_mut::<(&mut A, &B)>();
        // e[2] has no B: refused; e[0] must not be marked by the attempt.
        assert!(view.get_many_mut([e[0], e[2]]).is_err());
    }
    assert_eq!(changed_a(&registry, since), Vec::<Entity>::new());
}

#[test]
fn despawn_many_logs_each_removal() {
    let (mut registry, e, _) = world(4);
    let mut cursor = RemovedCursor::default();
    registry.despawn_many(&[e[1], e[3]]).unwrap();
    let lost: Vec<Entity> = registry.removed::<A>(&mut cursor).iter().collect();
    assert_eq!(lost, vec![e[1], e[3]]);
    // The survivors' ticks stayed with them.
    let since = registry.change_tick();
    registry.advance_change_tick();
    registry.get_mut::<A>(e[2]).unwrap().0 = 9;
    assert_eq!(changed_a(&registry, since), vec![e[2]]);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the global rayon pool trips crossbeam-epoch under Stacked Borrows; run with -Zmiri-tree-borrows"
)]
fn par_fold_and_par_each_init_mark() {
    // Several chunks either way (a chunk is at least 64 entities).
    let n: u32 = if cfg!(miri) { 600 } else { 3000 };
    let (mut registry, e, since) = world(n);
    let total = registry.view_mut::<&mut A>().par_fold(
        || 0_u64,
        |acc, a| acc + u64::from(a.0),
        |x, y| x + y,
    );
    assert_eq!(total, (0..u64::from(n)).sum::<u64>());
    assert_eq!(changed_a(&registry, since).len(), e.len());
    let since = registry.change_tick();
    registry.advance_change_tick();
    registry.view_mut::<&mut A>().par_each_init(
        || 0_u32,
        |n, a| {
            *n += 1;
            a.0 += 1;
        },
    );
    assert_eq!(changed_a(&registry, since).len(), e.len());
}

#[test]
fn insert_many_replacing_marks_changed_not_added() {
    let (mut registry, e, since) = world(3);
    let mut items = [(e[1], A(10))].into_iter();
    assert_eq!(registry.insert_many(&mut items).0, 1);
    assert_eq!(changed_a(&registry, since), vec![e[1]]);
    let added: Vec<Entity> = registry
        .view_since::<(Entity, &A), ecs_engine::Added<A>>(since)
        .iter()
        .map(|(e, _)| e)
        .collect();
    assert!(added.is_empty());
}

#[test]
fn clear_logs_every_removal() {
    let (mut registry, e, _) = world(3);
    let mut cursor = RemovedCursor::default();
    registry.clear();
    let lost: Vec<Entity> = registry.removed::<A>(&mut cursor).iter().collect();
    assert_eq!(lost, e);
}

#[test]
fn retain_and_visit_with_mut_mark() {
    let (mut registry, e, since) = world(3);
    registry.retain::<&mut A>(|a| {
        a.0 += 1;
        true
    });
    assert_eq!(changed_a(&registry, since), e);
}

#[test]
fn disabled_entity_written_then_enabled_is_changed() {
    let (mut registry, e, since) = world(3);
    registry.disable(e[1]).unwrap();
    registry.get_mut::<A>(e[1]).unwrap().0 = 99;
    // Disabled: not visited.
    assert_eq!(changed_a(&registry, since), Vec::<Entity>::new());
    registry.enable(e[1]).unwrap();
    assert_eq!(changed_a(&registry, since), vec![e[1]]);
}

#[test]
fn changed_children_after_a_new_child() {
    let mut registry = Registry::new();
    registry.track_changes::<ecs_engine::Children>();
    let parent = registry.spawn((A(0),));
    let c1 = registry.spawn((A(1),));
    let c2 = registry.spawn((A(2),));
    registry.set_parent(c1, parent).unwrap();
    let since = registry.change_tick();
    registry.advance_change_tick();
    registry.set_parent(c2, parent).unwrap();
    let changed: Vec<Entity> = registry
        .view_since::<Entity, Changed<ecs_engine::Children>>(since)
        .iter()
        .collect();
    assert_eq!(changed, vec![parent]);
}

#[test]
fn or_of_changed_and_with() {
    let (mut registry, e, since) = world(3);
    registry.get_mut::<A>(e[0]).unwrap().0 = 7;
    let lone = registry.spawn((B(5),));
    let mut got: Vec<Entity> = registry
        .view_since::<Entity, Or<(Changed<A>, With<B>)>>(since)
        .iter()
        .collect();
    got.sort_by_key(|e| e.to_bits());
    // Every entity has B: all four.
    assert_eq!(got, vec![e[0], e[1], e[2], lone]);
    let has: Vec<(Entity, bool)> = registry
        .view_since::<(Entity, Has<A>), Or<(Changed<A>,)>>(since)
        .iter()
        .collect();
    assert_eq!(has, vec![(e[0], true)]);
}

#[test]
fn a_join_marks_only_the_visited() {
    let mut registry = Registry::new();
    registry.track_changes::<A>();
    // A is the smaller pool (drives); only one A-entity has B, and the
    // pools are not aligned, so the walk looks B up per entity.
    let lone_b: Vec<Entity> = (0..10).map(|i| registry.spawn((B(i),))).collect();
    let a: Vec<Entity> = (0..3).map(|i| registry.spawn((A(i),))).collect();
    registry.insert(a[1], B(7)).unwrap();
    let since = registry.change_tick();
    registry.advance_change_tick();
    let mut visited = Vec::new();
    registry
        .view_mut::<(Entity, &mut A, &B)>()
        .each(|(e, a, _)| {
            a.0 += 1;
            visited.push(e);
        });
    assert_eq!(visited, vec![a[1]]);
    assert_eq!(changed_a(&registry, since), vec![a[1]]);
    let _ = lone_b;
}

#[test]
fn contains_and_count_do_not_mark() {
    let (mut registry, e, since) = world(3);
    {
        let mut view = registry.view_mut::<&mut A>();
        assert!(view.contains(e[0]));
        assert_eq!(view.count(), 3);
    }
    assert_eq!(changed_a(&registry, since), Vec::<Entity>::new());
}

#[test]
fn every_removal_path_is_logged() {
    let (mut registry, e, _) = world(8);
    let mut cursor = RemovedCursor::default();
    let child = registry.spawn((A(100),));
    registry.set_parent(child, e[0]).unwrap();
    // remove_bundle, remove_by_id on a typed component, PoolMut,
    // visit's EntityChanges, remove_many, despawn_recursive.
    registry.remove_bundle::<(A, B)>(e[1]).unwrap();
    let id = registry.register::<A>();
    assert!(registry.remove_by_id(e[2], id).unwrap());
    registry.pool_mut::<A>().remove(e[3]).unwrap();
    registry.visit::<(Entity, &A)>(|entity, _, changes| {
        if entity == e[4] {
            changes.remove::<A>();
        }
    });
    let mut some = [e[5]].into_iter();
    assert_eq!(registry.remove_many::<A>(&mut some).0, 1);
    registry.despawn_recursive(e[0]).unwrap();
    let mut lost: Vec<Entity> = registry.removed::<A>(&mut cursor).iter().collect();
    lost.sort_by_key(|e| e.to_bits());
    let mut expected = vec![e[0], e[1], e[2], e[3], e[4], e[5], child];
    expected.sort_by_key(|e| e.to_bits());
    assert_eq!(lost, expected);
}

#[test]
fn pool_mut_insert_replacing_marks_changed() {
    let (mut registry, e, since) = world(3);
    let old = registry.pool_mut::<A>().insert(e[2], A(50)).unwrap();
    assert_eq!(old, Some(A(2)));
    assert_eq!(changed_a(&registry, since), vec![e[2]]);
    registry.pool_mut::<A>().get_mut(e[1]).unwrap().0 = 7;
    assert_eq!(changed_a(&registry, since), vec![e[1], e[2]]);
}

#[test]
fn batches_keep_the_tick_arrays_in_step() {
    let (mut registry, e, since) = world(2);
    // A batch dropped unread, a reserved batch, then writes at the end.
    drop(registry.spawn_batch((0..700).map(|i| (A(i),))));
    let reserved: Vec<Entity> = (0..5).map(|_| registry.reserve_entity().unwrap()).collect();
    let mut bundles = (0..5).map(|i| (A(i), B(i)));
    registry
        .spawn_reserved_batch(&reserved, &mut bundles)
        .unwrap();
    assert_eq!(registry.count::<A>(), 707);
    registry.sort_pools();
    let last = *reserved.last().unwrap();
    registry.get_mut::<A>(last).unwrap().0 = 3;
    let changed = changed_a(&registry, since);
    assert_eq!(changed.len(), 705);
    assert!(!changed.contains(&e[0]));
    let since = registry.change_tick();
    registry.advance_change_tick();
    registry.get_mut::<A>(last).unwrap().0 = 4;
    assert_eq!(changed_a(&registry, since), vec![last]);
}

#[test]
fn two_writing_terms_mark_only_when_both_are_there() {
    let mut registry = Registry::new();
    registry.track_changes::<A>();
    registry.track_changes::<B>();
    let _only_b: Vec<Entity> = (0..10).map(|i| registry.spawn((B(i),))).collect();
    let a: Vec<Entity> = (0..3).map(|i| registry.spawn((A(i),))).collect();
    registry.insert(a[2], B(9)).unwrap();
    let since = registry.change_tick();
    registry.advance_change_tick();
    let mut visited = Vec::new();
    assert!(
        registry
            .view_mut::<(Entity, &mut A, &mut B)>()
            .get(a[0])
            .is_err()
    );
    registry
        .view_mut::<(Entity, &mut A, &mut B)>()
        .each(|(e, _, _)| visited.push(e));
    assert_eq!(visited, vec![a[2]]);
    assert_eq!(changed_a(&registry, since), vec![a[2]]);
    let changed_b: Vec<Entity> = registry
        .view_since::<Entity, Changed<B>>(since)
        .iter()
        .collect();
    assert_eq!(changed_b, vec![a[2]]);
    // Nested: the inner tuple writes, the outer term turns it away.
    let since = registry.change_tick();
    registry.advance_change_tick();
    let n = registry
        .view_mut::<((&mut A, Option<&B>), &B)>()
        .iter()
        .count();
    assert_eq!(n, 1);
    assert_eq!(changed_a(&registry, since), vec![a[2]]);
}

/// A change made after a reader's last look must not be lost when both
/// are older than the horizon (the component's tick clamped, the reader's
/// `since` too): the doc promises such a reader sees every component.
#[test]
fn a_reader_past_the_horizon_sees_clamped_changes() {
    use ecs_engine::{MAX_CHANGE_AGE, STALE_AGE};
    let mut registry = Registry::new();
    registry.track_changes::<A>();
    let start = registry.change_tick();
    let a = registry.spawn((A(0),));
    registry.advance_change_tick();
    registry.get_mut::<A>(a).unwrap().0 = 1; // after `start`
    // Far past the horizon: the write's tick is clamped.
    registry.set_change_tick_for_tests(start.wrapping_add(MAX_CHANGE_AGE + 100));
    assert_eq!(changed_a(&registry, start), vec![a]);
    // A first run's `since`.
    let first = registry.change_tick().wrapping_sub(STALE_AGE);
    assert_eq!(changed_a(&registry, first), vec![a]);
}
