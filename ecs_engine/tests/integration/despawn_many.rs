//! `Registry::despawn_many` leaves the same world as one `despawn` per
//! entity, in the pools' order too, on a rayon pool of several threads
//! (large batches of drop-free components are removed pools in parallel)
//! and with components that need a drop (removed entity by entity).

use std::sync::Arc;

use ecs_engine::{Entity, Registry};

use crate::components::A;

#[derive(Debug, Clone, Copy, PartialEq)]
struct B(u64);
#[derive(Debug, Clone, PartialEq)]
struct Owned(Arc<u32>);

/// Entities per world: half of them despawned in one batch, more than the
/// removals that go pools in parallel (256, and 32 under Miri).
const N: u32 = if cfg!(miri) { 150 } else { 5000 };

fn world(with_drop: bool) -> (Registry, Vec<Entity>) {
    let mut registry = Registry::new();
    let entities = (0..N)
        .map(|i| {
            let e = registry.spawn((A(i),));
            if i % 3 != 0 {
                registry.insert(e, B(u64::from(i) * 7)).unwrap();
            }
            if with_drop && i % 2 == 0 {
                registry.insert(e, Owned(Arc::new(i))).unwrap();
            }
            e
        })
        .collect();
    (registry, entities)
}

/// Every pool's entities and components, in dense order.
type Snapshot = (Vec<(Entity, A)>, Vec<(Entity, B)>, Vec<(Entity, u32)>);

fn snapshot(registry: &Registry) -> Snapshot {
    let a = registry
        .pool::<A>()
        .map(|p| p.iter().map(|(e, c)| (e, *c)).collect())
        .unwrap_or_default();
    let b = registry
        .pool::<B>()
        .map(|p| p.iter().map(|(e, c)| (e, *c)).collect())
        .unwrap_or_default();
    let owned = registry
        .pool::<Owned>()
        .map(|p| p.iter().map(|(e, c)| (e, *c.0)).collect())
        .unwrap_or_default();
    (a, b, owned)
}

fn compare(with_drop: bool) {
    let (mut one_by_one, entities) = world(with_drop);
    let (mut batched, same) = world(with_drop);
    assert_eq!(entities, same);
    // Every other entity, scattered, then a stale handle mid-way.
    let mut doomed: Vec<Entity> = entities.iter().copied().step_by(2).collect();
    doomed.reverse();
    for &e in &doomed {
        one_by_one.despawn(e).unwrap();
    }
    doomed.push(doomed[0]);
    doomed.push(entities[1]);
    let (at, _) = batched.despawn_many(&doomed).unwrap_err();
    assert_eq!(at, doomed.len() - 2);
    assert_eq!(snapshot(&one_by_one), snapshot(&batched));
    assert_eq!(one_by_one.len(), batched.len());
    assert!(batched.is_alive(entities[1]));
    assert!(batched.despawn_many(&[entities[1], entities[3]]).is_ok());
    assert!(!batched.is_alive(entities[3]));
    assert_eq!(batched.get::<A>(entities[3]), None);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "a rayon pool trips crossbeam-epoch under Stacked Borrows; .ci/run runs it under Tree Borrows"
)]
fn batches_match_single_despawns_on_many_threads() {
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get().max(4));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        compare(false);
        compare(true);
    });
}

#[test]
fn batches_match_single_despawns_on_the_caller_thread() {
    compare(false);
    compare(true);
}
