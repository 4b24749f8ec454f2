//! Change detection: added and changed ticks, removal logs, the opt-in per
//! type, wrap-around, and a model test against a `HashMap` with ticks.

use std::collections::{BTreeSet, HashMap};

use ecs_engine::{
    Added, CHECK_INTERVAL, ChangeTick, Changed, Entity, MAX_CHANGE_AGE, Mut, Ref, Registry,
    RemovedCursor, Untracked, Without, is_newer,
};
use proptest::prelude::*;

use crate::components::{A, B};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Z;

fn changed_a(registry: &Registry, since: ChangeTick) -> Vec<Entity> {
    registry
        .view_since::<(Entity, &A), Changed<A>>(since)
        .iter()
        .map(|(e, _)| e)
        .collect()
}

fn added_a(registry: &Registry, since: ChangeTick) -> Vec<Entity> {
    registry
        .view_since::<(Entity, &A), Added<A>>(since)
        .iter()
        .map(|(e, _)| e)
        .collect()
}

fn sorted(mut v: Vec<Entity>) -> Vec<Entity> {
    v.sort_by_key(|e| e.to_bits());
    v
}

/// Entities enough for many blocks of 16 dense positions in the tests of
/// blocks and lookups (fewer under Miri, which interprets every access).
const MANY: u32 = if cfg!(miri) { 200 } else { 1000 };

/// Sets up a registry tracking `A` with `n` entities, and advances once.
fn world(n: u32) -> (Registry, Vec<Entity>, ChangeTick) {
    let mut registry = Registry::new();
    registry.track_changes::<A>();
    let entities = (0..n).map(|i| registry.spawn((A(i), B(i)))).collect();
    let since = registry.change_tick();
    registry.advance_change_tick();
    (registry, entities, since)
}

#[test]
fn spawn_and_insert_mark_added_and_changed() {
    let (mut registry, e, since) = world(3);
    assert!(changed_a(&registry, since).is_empty());
    let new = registry.spawn((A(9),));
    registry.insert(e[0], A(7)).unwrap();
    assert_eq!(sorted(changed_a(&registry, since)), sorted(vec![e[0], new]));
    assert_eq!(added_a(&registry, since), vec![new]);
    let (added, changed) = registry.pool::<A>().unwrap().change_ticks(e[0]).unwrap();
    assert_eq!((added, changed), (since, registry.change_tick()));
}

#[test]
fn reads_do_not_mark_writes_do() {
    let (mut registry, e, since) = world(4);
    let sum: u32 = registry.view::<&A>().iter().map(|a| a.0).sum();
    assert_eq!(sum, 6);
    let _ = registry.get::<A>(e[1]);
    registry.view_mut::<(&A, &mut B)>().each(|(_, b)| b.0 += 1);
    assert!(changed_a(&registry, since).is_empty());
    registry.get_mut::<A>(e[2]).unwrap().0 = 20;
    assert_eq!(changed_a(&registry, since), vec![e[2]]);
    registry.view_mut::<&mut A>().each(|_| {});
    assert_eq!(changed_a(&registry, since), e);
}

#[test]
fn untracked_writes_do_not_mark() {
    let (mut registry, e, since) = world(3);
    registry.view_mut::<Untracked<A>>().each(|a| a.0 += 0);
    registry.get_mut_untracked::<A>(e[0]).unwrap().0 = 0;
    assert!(changed_a(&registry, since).is_empty());
}

#[test]
fn plain_views_see_the_current_tick() {
    let (mut registry, e, _) = world(2);
    registry.get_mut::<A>(e[1]).unwrap().0 = 5;
    let changed: Vec<Entity> = registry
        .view::<(Entity, &A)>()
        .with::<A>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    assert_eq!(changed.len(), 2);
    let recent: Vec<Entity> = registry
        .view_filtered::<(Entity, &B), Changed<A>>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    assert_eq!(recent, vec![e[1]]);
    registry.advance_change_tick();
    assert_eq!(registry.view_filtered::<&B, Changed<A>>().count(), 0);
}

#[test]
fn untracked_type_matches_everything() {
    let mut registry = Registry::new();
    let a = registry.spawn((A(1),));
    registry.advance_change_tick();
    let since = registry.change_tick();
    registry.advance_change_tick();
    assert!(!registry.is_tracking_changes::<A>());
    assert_eq!(changed_a(&registry, since), vec![a]);
    let refs: Vec<(bool, bool)> = registry
        .view_since::<Ref<A>, ()>(since)
        .iter()
        .map(|r| (r.is_added(), r.is_changed()))
        .collect();
    assert_eq!(refs, vec![(true, true)]);
}

#[test]
fn enabling_fills_the_current_tick() {
    let mut registry = Registry::new();
    let a = registry.spawn((A(1),));
    registry.advance_change_tick();
    registry.advance_change_tick();
    let before = registry.change_tick().wrapping_sub(1);
    registry.track_changes::<A>();
    assert_eq!(
        registry.pool::<A>().unwrap().change_ticks(a),
        Some((registry.change_tick(), registry.change_tick()))
    );
    assert_eq!(changed_a(&registry, before), vec![a]);
    assert!(changed_a(&registry, registry.change_tick()).is_empty());
}

#[test]
fn ref_term_in_blocks_and_lookups() {
    let (mut registry, e, since) = world(MANY);
    let last = MANY - 1;
    registry.get_mut::<A>(e[5]).unwrap().0 = 1000;
    registry.get_mut::<A>(e[last as usize]).unwrap().0 = 1000;
    let expect: BTreeSet<u32> = [5, last].into_iter().collect();
    // Aligned pools: joined by blocks.
    let seen: BTreeSet<u32> = registry
        .view_since::<(Ref<A>, &B), ()>(since)
        .iter()
        .filter(|(a, _)| a.is_changed())
        .map(|(_, b)| b.0)
        .collect();
    assert_eq!(seen, expect);
    // Reorder `A` (remove and re-add the first): lookups by entity.
    let moved = registry.remove::<A>(e[0]).unwrap();
    registry.insert(e[0], moved).unwrap();
    let seen: BTreeSet<u32> = registry
        .view_since::<(&B, Ref<A>), ()>(since)
        .iter()
        .filter(|(_, a)| a.is_changed())
        .map(|(b, _)| b.0)
        .collect();
    assert_eq!(seen, [0, 5, last].into_iter().collect());
    let added: Vec<u32> = registry
        .view_since::<(&B, Ref<A>), ()>(since)
        .iter()
        .filter(|(_, a)| a.is_added())
        .map(|(b, _)| b.0)
        .collect();
    assert_eq!(added, vec![0]);
}

#[test]
fn mut_term_marks_through_blocks_and_lookups() {
    let (mut registry, e, since) = world(MANY);
    // Misalign B against A for half of the entities.
    for &entity in &e[..e.len() / 2] {
        let b = registry.remove::<B>(entity).unwrap();
        registry.insert(entity, b).unwrap();
    }
    registry
        .view_mut::<(&mut A, &B)>()
        .each(|(a, b)| a.0 = b.0 + 1);
    assert_eq!(changed_a(&registry, since).len(), e.len());
    let since = registry.change_tick();
    registry.advance_change_tick();
    registry
        .view_mut::<(&mut A, &B)>()
        .without::<Z>()
        .each(|(a, _)| a.0 += 1);
    assert_eq!(changed_a(&registry, since).len(), e.len());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "rayon's pool trips crossbeam-epoch under Stacked Borrows; run under Tree Borrows"
)]
fn par_each_marks() {
    let (mut registry, e, since) = world(if cfg!(miri) { 100 } else { 5000 });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| registry.view_mut::<&mut A>().par_each(|a| a.0 += 1));
    assert_eq!(changed_a(&registry, since), e);
}

#[test]
fn a_query_that_writes_a_type_filters_it_by_change() {
    let (mut registry, e, since) = world(6);
    registry.get_mut::<A>(e[1]).unwrap().0 = 10;
    registry.get_mut::<A>(e[4]).unwrap().0 = 40;
    let fresh = registry.spawn((A(60), B(60)));
    // The filter reads each tick before the query's `&mut A` marks it.
    let mut seen = Vec::new();
    registry
        .view_mut_since::<(Entity, &mut A), Changed<A>>(since)
        .each(|(entity, a)| {
            a.0 += 1;
            seen.push(entity);
        });
    assert_eq!(seen, vec![e[1], e[4], fresh]);
    let values: Vec<u32> = e.iter().map(|&x| registry.get::<A>(x).unwrap().0).collect();
    assert_eq!(values, [0, 11, 2, 3, 41, 5]);
    let added: Vec<Entity> = registry
        .view_mut_since::<(Entity, &mut A), Added<A>>(since)
        .iter()
        .map(|(entity, _)| entity)
        .collect();
    assert_eq!(added, vec![fresh]);
    // Nothing else was marked: a view since now sees nothing, and a later
    // write is seen alone.
    let now = registry.change_tick();
    registry.advance_change_tick();
    registry.get_mut::<A>(e[2]).unwrap().0 = 20;
    let later: Vec<Entity> = registry
        .view_filtered::<(Entity, &mut A, &B), (Changed<A>, Without<Z>)>()
        .iter()
        .map(|(entity, _, _)| entity)
        .collect();
    assert_eq!(later, vec![e[2]]);
    assert_eq!(changed_a(&registry, now), vec![e[2]]);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "rayon's pool trips crossbeam-epoch under Stacked Borrows; run under Tree Borrows"
)]
fn par_each_over_a_written_type_filtered_by_change() {
    let n = if cfg!(miri) { 64 } else { 5000 };
    let (mut registry, e, since) = world(n);
    for &entity in e.iter().step_by(3) {
        registry.get_mut::<A>(entity).unwrap().0 += n;
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| {
        registry
            .view_mut_since::<&mut A, Changed<A>>(since)
            .par_each(|a| a.0 += 1)
    });
    for (i, &entity) in e.iter().enumerate() {
        let i = i as u32;
        let want = if i.is_multiple_of(3) { i + n + 1 } else { i };
        assert_eq!(registry.get::<A>(entity), Some(&A(want)));
    }
    assert_eq!(
        changed_a(&registry, since),
        e.iter().copied().step_by(3).collect::<Vec<_>>()
    );
}

#[test]
fn ref_mut_marks_on_write_only() {
    let (mut registry, e, since) = world(MANY);
    // Misalign the second half of `B`: blocks for the first, lookups after.
    for &entity in &e[e.len() / 2..] {
        let b = registry.remove::<B>(entity).unwrap();
        registry.insert(entity, b).unwrap();
    }
    registry.get_mut::<A>(e[3]).unwrap().0 = 3;
    let mut seen_changed = Vec::new();
    registry
        .view_mut_since::<(Entity, Mut<A>, &B), ()>(since)
        .each(|(entity, mut a, b)| {
            assert!(!a.is_added());
            if a.is_changed() {
                seen_changed.push(entity);
            }
            if b.0 % 100 == 7 {
                a.0 += 1;
            }
            a.bypass_change_detection().0 += 0;
        });
    assert_eq!(seen_changed, vec![e[3]]);
    let expect: Vec<Entity> = std::iter::once(e[3])
        .chain(
            e.iter()
                .copied()
                .filter(|x| registry.get::<B>(*x).unwrap().0 % 100 == 7),
        )
        .collect();
    assert_eq!(sorted(changed_a(&registry, since)), sorted(expect));
    // Untracked type: always changed, writes fine.
    let mut plain = Registry::new();
    plain.spawn((B(1),));
    plain.view_mut::<Mut<B>>().each(|mut b| {
        assert!(b.is_changed() && b.is_added());
        b.0 = 2;
    });
    assert_eq!(plain.view::<&B>().iter().next(), Some(&B(2)));
}

#[test]
fn swap_remove_keeps_ticks_in_step() {
    let (mut registry, e, since) = world(6);
    registry.get_mut::<A>(e[5]).unwrap().0 = 50;
    registry.remove::<A>(e[1]).unwrap(); // e[5] moves into position 1
    registry.despawn(e[2]).unwrap();
    registry.despawn_many(&[e[3]]).unwrap();
    assert_eq!(changed_a(&registry, since), vec![e[5]]);
    let pool = registry.pool::<A>().unwrap();
    for &entity in pool.entities() {
        let (added, changed) = pool.change_ticks(entity).unwrap();
        assert_eq!(added, since);
        let expected = if entity == e[5] {
            since.wrapping_add(1)
        } else {
            since
        };
        assert_eq!(changed, expected, "{entity}");
    }
}

#[test]
fn sort_pools_moves_ticks_with_their_components() {
    let mut registry = Registry::new();
    registry.track_changes::<A>();
    // Interleaved archetypes, so sorting reorders `A`'s pool.
    let e: Vec<Entity> = (0..8)
        .map(|i| {
            if i % 2 == 0 {
                registry.spawn((A(i), B(i)))
            } else {
                registry.spawn((A(i),))
            }
        })
        .collect();
    let since = registry.change_tick();
    registry.advance_change_tick();
    registry.get_mut::<A>(e[3]).unwrap().0 = 30;
    let before = registry.pool::<A>().unwrap().entities().to_vec();
    registry.sort_pools();
    let pool = registry.pool::<A>().unwrap();
    assert_ne!(
        pool.entities(),
        &before[..],
        "the sort must reorder the pool"
    );
    for &entity in &e {
        let expected = if entity == e[3] {
            since.wrapping_add(1)
        } else {
            since
        };
        assert_eq!(
            pool.change_ticks(entity),
            Some((since, expected)),
            "{entity}"
        );
    }
    assert_eq!(changed_a(&registry, since), vec![e[3]]);
}

#[test]
fn spawn_batch_and_pool_mut_stamp() {
    let (mut registry, e, since) = world(2);
    let batch: Vec<Entity> = registry.spawn_batch((0..5).map(|i| (A(i), Z))).collect();
    let extra = registry.spawn(());
    let mut pool = registry.pool_mut::<A>();
    pool.insert(extra, A(3)).unwrap();
    pool.get_mut(e[0]).unwrap().0 = 1;
    pool.remove(e[1]).unwrap();
    let mut expect = batch.clone();
    expect.push(extra);
    assert_eq!(sorted(added_a(&registry, since)), sorted(expect.clone()));
    expect.push(e[0]);
    assert_eq!(sorted(changed_a(&registry, since)), sorted(expect));
    let mut cursor = RemovedCursor::default();
    let removed: Vec<Entity> = registry.removed::<A>(&mut cursor).iter().collect();
    assert_eq!(removed, vec![e[1]]);
}

#[test]
fn removals_are_logged_once_per_reader() {
    let (mut registry, e, _) = world(5);
    let mut early = RemovedCursor::default();
    registry.remove::<A>(e[0]).unwrap();
    registry.despawn(e[1]).unwrap();
    registry.despawn(e[4]).unwrap();
    let mut late = RemovedCursor::default();
    let got: Vec<Entity> = registry.removed::<A>(&mut early).iter().collect();
    assert_eq!(got, vec![e[0], e[1], e[4]]);
    assert!(registry.removed::<A>(&mut early).is_empty());
    registry.clear();
    let first = registry.removed::<A>(&mut early);
    assert_eq!(sorted(first.iter().collect()), sorted(vec![e[2], e[3]]));
    assert_eq!(first.missed(), 0);
    assert_eq!(registry.removed::<A>(&mut late).len(), 5);
    // A cursor from another registry, past this log's end: nothing.
    let mut fresh = Registry::new();
    fresh.track_changes::<A>();
    assert!(fresh.removed::<A>(&mut early).is_empty());
    // B is not tracked: nothing logged.
    assert!(
        registry
            .removed::<B>(&mut RemovedCursor::default())
            .is_empty()
    );
}

#[test]
fn bounded_log_counts_drops() {
    let mut registry = Registry::new();
    registry.set_removed_capacity::<A>(4);
    let entities: Vec<Entity> = (0..10).map(|i| registry.spawn((A(i),))).collect();
    let mut cursor = RemovedCursor::default();
    for &e in &entities[..3] {
        registry.remove::<A>(e).unwrap();
    }
    assert_eq!(registry.removed::<A>(&mut cursor).len(), 3);
    for &e in &entities[3..] {
        registry.despawn(e).unwrap();
    }
    let read = registry.removed::<A>(&mut cursor);
    assert_eq!(read.missed(), 3);
    assert_eq!(read.iter().collect::<Vec<_>>(), entities[6..].to_vec());
}

#[test]
fn compare_is_modular() {
    let t = ChangeTick::new;
    assert!(is_newer(t(0), t(u32::MAX), t(0)));
    assert!(is_newer(t(3), t(u32::MAX - 3), t(10)));
    assert!(!is_newer(t(u32::MAX - 3), t(3), t(10)));
    // A `since` past the horizon counts as MAX_CHANGE_AGE old.
    assert!(is_newer(
        t(100).wrapping_sub(MAX_CHANGE_AGE - 1),
        t(101),
        t(100)
    ));
    // The method and the function agree.
    assert!(t(3).is_newer_than(t(u32::MAX - 3), t(10)));
    assert!(!t(u32::MAX - 3).is_newer_than(t(3), t(10)));
    assert_eq!(t(u32::MAX - 3).age(t(10)), 14);
}

/// The clock crosses `u32::MAX`: filters keep working across the wrap.
#[test]
fn runs_past_the_wrap() {
    let mut registry = Registry::new();
    registry.set_change_tick_for_tests(ChangeTick::new(u32::MAX - 5));
    registry.track_changes::<A>();
    let e: Vec<Entity> = (0..4).map(|i| registry.spawn((A(i),))).collect();
    let mut since = registry.change_tick();
    for step in 0..12u32 {
        registry.advance_change_tick();
        let target = e[(step % 4) as usize];
        registry.get_mut::<A>(target).unwrap().0 += 1;
        assert_eq!(changed_a(&registry, since), vec![target], "step {step}");
        since = registry.change_tick();
    }
    assert!(registry.change_tick().get() < 10, "the clock wrapped");
}

/// A tick older than the horizon is clamped, so it never looks new again
/// when the clock comes round.
#[test]
fn old_ticks_are_clamped() {
    let mut registry = Registry::new();
    registry.track_changes::<A>();
    let a = registry.spawn((A(0),));
    let start = registry.change_tick();
    // Nearly a whole lap later (past a check), then past the lap.
    registry.set_change_tick_for_tests(start.wrapping_add(MAX_CHANGE_AGE + CHECK_INTERVAL / 2));
    registry.set_change_tick_for_tests(start.wrapping_add(u32::MAX - 10));
    let now = registry.change_tick();
    let (added, changed) = registry.pool::<A>().unwrap().change_ticks(a).unwrap();
    assert!(added.age(now) <= MAX_CHANGE_AGE + CHECK_INTERVAL);
    assert_eq!(added, changed);
    registry.set_change_tick_for_tests(start.wrapping_add(5));
    // A whole lap after the spawn: unclamped, the spawn tick would look 5
    // ticks old, newer than a `since` 10 ticks old; clamped, it is old.
    let since = registry.change_tick().wrapping_sub(10);
    assert!(changed_a(&registry, since).is_empty());
}

// --- the model -------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Spawn(u32),
    Despawn(usize),
    Insert(usize, u32),
    Remove(usize),
    GetMut(usize),
    Untracked(usize),
    ViewWrite(u32),
    MutWrite(u32),
    Advance,
    /// Runs system `k` (compares its filters with the model).
    Run(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<u32>().prop_map(Op::Spawn),
        1 => any::<usize>().prop_map(Op::Despawn),
        2 => (any::<usize>(), any::<u32>()).prop_map(|(i, v)| Op::Insert(i, v)),
        1 => any::<usize>().prop_map(Op::Remove),
        2 => any::<usize>().prop_map(Op::GetMut),
        1 => any::<usize>().prop_map(Op::Untracked),
        1 => (0..4u32).prop_map(Op::ViewWrite),
        1 => (0..4u32).prop_map(Op::MutWrite),
        3 => Just(Op::Advance),
        3 => (0..3usize).prop_map(Op::Run),
    ]
}

/// A component in the model: value, added tick, changed tick, with ticks
/// counted in `u64` (no wrap).
#[derive(Debug, Clone, Copy)]
struct Slot {
    value: u32,
    added: u64,
    changed: u64,
}

struct Model {
    now: u64,
    alive: Vec<Entity>,
    a: HashMap<Entity, Slot>,
    removed: Vec<Entity>,
}

struct System {
    last_run: Option<(u64, ChangeTick)>,
    cursor: RemovedCursor,
    removed_read: usize,
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 128 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random structural changes, writes and tick advances on a tracked
    /// type, with three "systems" run at random (so each skips ticks):
    /// each sees exactly the model's additions, changes and removals since
    /// its own last run. The clock starts near `u32::MAX` and wraps.
    #[test]
    fn matches_model(
        start in prop_oneof![Just(0u32), Just(u32::MAX - 40), any::<u32>()],
        ops in prop::collection::vec(op(), 1..if cfg!(miri) { 24 } else { 300 }),
    ) {
        let mut registry = Registry::new();
        registry.set_change_tick_for_tests(ChangeTick::new(start));
        registry.track_changes::<A>();
        let mut model = Model { now: 0, alive: Vec::new(), a: HashMap::new(), removed: Vec::new() };
        let mut systems: Vec<System> = (0..3)
            .map(|_| System { last_run: None, cursor: RemovedCursor::default(), removed_read: 0 })
            .collect();
        for op in ops {
            let pick = |i: usize, model: &Model| (!model.alive.is_empty()).then(|| model.alive[i % model.alive.len()]);
            match op {
                Op::Spawn(v) => {
                    let e = registry.spawn((A(v), B(v)));
                    model.alive.push(e);
                    model.a.insert(e, Slot { value: v, added: model.now, changed: model.now });
                }
                Op::Despawn(i) => if let Some(e) = pick(i, &model) {
                    registry.despawn(e).unwrap();
                    model.alive.retain(|&x| x != e);
                    if model.a.remove(&e).is_some() {
                        model.removed.push(e);
                    }
                },
                Op::Insert(i, v) => if let Some(e) = pick(i, &model) {
                    let old = registry.insert(e, A(v)).unwrap();
                    let now = model.now;
                    prop_assert_eq!(old.map(|a| a.0), model.a.get(&e).map(|s| s.value));
                    let slot = model.a.entry(e).or_insert(Slot { value: v, added: now, changed: now });
                    slot.value = v;
                    slot.changed = now;
                },
                Op::Remove(i) => if let Some(e) = pick(i, &model) {
                    let got = registry.remove::<A>(e).ok().map(|a| a.0);
                    prop_assert_eq!(got, model.a.remove(&e).map(|s| s.value));
                    if got.is_some() {
                        model.removed.push(e);
                    }
                },
                Op::GetMut(i) => {
                    if let Some(e) = pick(i, &model)
                        && let Some(a) = registry.get_mut::<A>(e)
                    {
                        a.0 = a.0.wrapping_add(1);
                        let slot = model.a.get_mut(&e).unwrap();
                        slot.value = a.0;
                        slot.changed = model.now;
                    }
                }
                Op::Untracked(i) => {
                    // A write of the value it holds: not a change.
                    if let Some(e) = pick(i, &model)
                        && let Some(a) = registry.get_mut_untracked::<A>(e)
                    {
                        a.0 = std::hint::black_box(a.0);
                    }
                }
                Op::ViewWrite(m) => {
                    // Every entity with A and B is handed out (and marked).
                    registry.view_mut::<(&mut A, &B)>().each(|(a, b)| {
                        if b.0 % 4 == m { a.0 = a.0.wrapping_add(1) }
                    });
                    for slot in model.a.values_mut() {
                        slot.changed = model.now;
                    }
                    for (e, slot) in model.a.iter_mut() {
                        slot.value = registry.get::<A>(*e).unwrap().0;
                    }
                }
                Op::MutWrite(m) => {
                    // Only what is written through is marked.
                    let mut written = Vec::new();
                    registry.view_mut::<(Entity, Mut<A>, &B)>().each(|(e, mut a, b)| {
                        if b.0 % 4 == m {
                            a.0 = a.0.wrapping_add(1);
                            written.push((e, a.0));
                        }
                    });
                    for (e, value) in written {
                        let slot = model.a.get_mut(&e).unwrap();
                        slot.value = value;
                        slot.changed = model.now;
                    }
                }
                Op::Advance => {
                    registry.advance_change_tick();
                    model.now += 1;
                }
                Op::Run(k) => {
                    let system = &mut systems[k];
                    let now = registry.change_tick();
                    let since = match system.last_run {
                        Some((_, tick)) => tick,
                        None => now.wrapping_sub(MAX_CHANGE_AGE),
                    };
                    let model_since = system.last_run.map(|(t, _)| t);
                    let newer = |t: u64| model_since.is_none_or(|s| t > s);
                    let expect_changed: BTreeSet<u64> = model.a.iter()
                        .filter(|(_, s)| newer(s.changed)).map(|(e, _)| e.to_bits()).collect();
                    let expect_added: BTreeSet<u64> = model.a.iter()
                        .filter(|(_, s)| newer(s.added)).map(|(e, _)| e.to_bits()).collect();
                    let got_changed: BTreeSet<u64> = changed_a(&registry, since).iter().map(|e| e.to_bits()).collect();
                    let got_added: BTreeSet<u64> = added_a(&registry, since).iter().map(|e| e.to_bits()).collect();
                    prop_assert_eq!(got_changed, expect_changed);
                    prop_assert_eq!(got_added, expect_added);
                    let refs: BTreeSet<(u64, bool, bool)> = registry
                        .view_since::<(Entity, Ref<A>), ()>(since)
                        .iter()
                        .map(|(e, r)| (e.to_bits(), r.is_added(), r.is_changed()))
                        .collect();
                    let expect_refs: BTreeSet<(u64, bool, bool)> = model.a.iter()
                        .map(|(e, s)| (e.to_bits(), newer(s.added), newer(s.changed)))
                        .collect();
                    prop_assert_eq!(refs, expect_refs);
                    let removed: Vec<Entity> = registry.removed::<A>(&mut system.cursor).iter().collect();
                    prop_assert_eq!(&removed[..], &model.removed[system.removed_read..]);
                    system.removed_read = model.removed.len();
                    system.last_run = Some((model.now, now));
                }
            }
            for (e, slot) in &model.a {
                prop_assert_eq!(registry.get::<A>(*e).map(|a| a.0), Some(slot.value));
            }
            prop_assert_eq!(registry.pool::<A>().unwrap().len(), model.a.len());
        }
    }
}

#[test]
fn a_mutable_view_that_asks_about_changes_starts_tracking() {
    let mut registry = Registry::new();
    let e: Vec<Entity> = (0..3).map(|i| registry.spawn((A(i),))).collect();
    assert!(!registry.is_tracking_changes::<A>());
    // The first ask sees everything (as a system's first run does)...
    let since = registry.change_tick();
    assert_eq!(
        registry
            .view_filtered::<Entity, Changed<A>>()
            .iter()
            .count(),
        3
    );
    assert!(registry.is_tracking_changes::<A>());
    // ...and from then on only what changed.
    registry.advance_change_tick();
    let since_now = registry.change_tick();
    registry.advance_change_tick();
    registry.get_mut::<A>(e[1]).unwrap().0 = 10;
    assert_eq!(changed_a(&registry, since_now), vec![e[1]]);
    assert_eq!(since_now, since.wrapping_add(1));
}
