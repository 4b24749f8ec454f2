//! Joins stay exact while pools change between passes: a view re-checks a
//! cached whole-run join only at the positions the structural changes
//! wrote, so these tests change pools in every way a run can break
//! (despawn, spawn, insert or remove in one pool only, clear, a sort of
//! every pool) and compare each pass with a model.

use std::collections::BTreeMap;

use ecs_engine::{Entity, Registry};
use proptest::prelude::*;

use crate::components::{A, B};

/// One structural change between passes.
#[derive(Debug, Clone)]
enum Op {
    /// Spawns with both components (keeps the pools in the same order).
    SpawnBoth,
    /// Spawns with `A` only.
    SpawnA,
    /// Spawns a few with both in one `spawn_batch`.
    SpawnBatch(u8),
    /// Despawns the live entity at this index (modulo the live count).
    Despawn(usize),
    /// Removes `B` from the live entity at this index.
    RemoveB(usize),
    /// Inserts `B` into the live entity at this index.
    InsertB(usize),
    /// Removes then inserts `A` (moves it to the end of `A`'s pool).
    ReinsertA(usize),
    /// Clears `B`'s pool.
    ClearB,
    /// Runs a view pass (the join is cached at this point).
    Pass,
    /// Sorts every pool (`Registry::sort_pools`): a reorder of both.
    Sort,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => Just(Op::SpawnBoth),
        1 => Just(Op::SpawnA),
        2 => (0u8..5).prop_map(Op::SpawnBatch),
        4 => any::<usize>().prop_map(Op::Despawn),
        1 => any::<usize>().prop_map(Op::RemoveB),
        1 => any::<usize>().prop_map(Op::InsertB),
        1 => any::<usize>().prop_map(Op::ReinsertA),
        1 => Just(Op::ClearB),
        4 => Just(Op::Pass),
        1 => Just(Op::Sort),
    ]
}

/// What the view `(Entity, &A, &B)` yields, sorted by entity, against the
/// model.
fn check(registry: &mut Registry, model: &BTreeMap<Entity, (u32, Option<u32>)>) {
    let mut seen: Vec<(Entity, u32, u32)> = registry
        .view::<(Entity, &A, &B)>()
        .iter()
        .map(|(e, a, b)| (e, a.0, b.0))
        .collect();
    seen.sort_by_key(|&(e, _, _)| e.to_bits());
    let mut expected: Vec<(Entity, u32, u32)> = model
        .iter()
        .filter_map(|(&e, &(a, b))| Some((e, a, b?)))
        .collect();
    expected.sort_by_key(|&(e, _, _)| e.to_bits());
    assert_eq!(seen, expected);
    let mut count = 0;
    registry.view_mut::<(&mut B, &A)>().each(|(b, a)| {
        assert_eq!(b.0, a.0 + 1);
        count += 1;
    });
    assert_eq!(count, expected.len());
}

fn nth(model: &BTreeMap<Entity, (u32, Option<u32>)>, i: usize) -> Option<Entity> {
    (!model.is_empty()).then(|| *model.keys().nth(i % model.len()).expect("in range"))
}

fn run(ops: &[Op]) {
    let mut registry = Registry::new();
    let mut model = BTreeMap::new();
    let mut next = 0u32;
    // Under Miri, fewer: every pass checks the whole world.
    for _ in 0..if cfg!(miri) { 100 } else { 300 } {
        let e = registry.spawn((A(next), B(next + 1)));
        model.insert(e, (next, Some(next + 1)));
        next += 1;
    }
    check(&mut registry, &model);
    for op in ops {
        match *op {
            Op::SpawnBoth => {
                let e = registry.spawn((A(next), B(next + 1)));
                model.insert(e, (next, Some(next + 1)));
                next += 1;
            }
            Op::SpawnBatch(n) => {
                let first = next;
                let batch: Vec<Entity> = registry
                    .spawn_batch((first..first + u32::from(n)).map(|i| (A(i), B(i + 1))))
                    .take(1)
                    .collect();
                let spawned: Vec<Entity> = registry
                    .pool::<A>()
                    .unwrap()
                    .iter()
                    .filter(|(_, a)| a.0 >= first)
                    .map(|(e, _)| e)
                    .collect();
                assert_eq!(spawned.len(), usize::from(n));
                assert_eq!(batch.first(), spawned.first());
                for (k, e) in spawned.into_iter().enumerate() {
                    let i = first + k as u32;
                    model.insert(e, (i, Some(i + 1)));
                }
                next += u32::from(n);
            }
            Op::SpawnA => {
                let e = registry.spawn((A(next),));
                model.insert(e, (next, None));
                next += 1;
            }
            Op::Despawn(i) => {
                if let Some(e) = nth(&model, i) {
                    registry.despawn(e).unwrap();
                    model.remove(&e);
                }
            }
            Op::RemoveB(i) => {
                if let Some(e) = nth(&model, i)
                    && model[&e].1.is_some()
                {
                    registry.remove::<B>(e).unwrap();
                    model.get_mut(&e).unwrap().1 = None;
                }
            }
            Op::InsertB(i) => {
                if let Some(e) = nth(&model, i) {
                    let a = model[&e].0;
                    registry.insert(e, B(a + 1)).unwrap();
                    model.get_mut(&e).unwrap().1 = Some(a + 1);
                }
            }
            Op::ReinsertA(i) => {
                if let Some(e) = nth(&model, i) {
                    let a = registry.remove::<A>(e).unwrap();
                    registry.insert(e, a).unwrap();
                }
            }
            Op::ClearB => {
                let owners: Vec<Entity> = model
                    .iter()
                    .filter(|(_, (_, b))| b.is_some())
                    .map(|(&e, _)| e)
                    .collect();
                for e in owners {
                    registry.remove::<B>(e).unwrap();
                    model.get_mut(&e).unwrap().1 = None;
                }
            }
            Op::Pass => check(&mut registry, &model),
            Op::Sort => registry.sort_pools(),
        }
    }
    check(&mut registry, &model);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 64 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn joins_match_the_model_after_any_changes(ops in prop::collection::vec(op(), 0..if cfg!(miri) { 24 } else { 200 })) {
        run(&ops);
    }
}

/// Many small changes between passes, as a tick of a simulation makes:
/// the change log is trimmed many times and every pass stays exact.
#[test]
fn long_runs_of_small_changes_stay_exact() {
    let mut ops = Vec::new();
    let rounds = if cfg!(miri) { 2 } else { 200 };
    for round in 0..rounds {
        for k in 0..if cfg!(miri) { 12 } else { 40 } {
            ops.push(Op::Despawn(round * 7919 + k * 104_729));
            ops.push(Op::SpawnBoth);
        }
        if round % 50 == 7 {
            ops.push(Op::ReinsertA(round));
        }
        ops.push(Op::Pass);
    }
    run(&ops);
}
