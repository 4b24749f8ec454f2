//! `Registry::sort_pools`: pools brought into one order keep every
//! (entity, value) pair, join each archetype by position, and stay exact
//! for views whose run caches were filled before the sort.

use std::alloc::Layout;
use std::collections::BTreeMap;

use ecs_engine::{ComponentDescriptor, ComponentId, Entity, Registry};

use crate::components::{A, C};

#[derive(Debug, Clone, PartialEq)]
struct B(String);
#[derive(Debug, Clone, PartialEq)]
struct D(u32);
#[derive(Debug, Clone, PartialEq)]
struct E(u32);

const PER_SET: u32 = if cfg!(miri) { 20 } else { 1000 };

/// The `schedule` bench's world, spawned interleaved: `AB`, `ABC`, `ABCD`,
/// `ABCE`, one entity of each in turn.
fn interleaved() -> Registry {
    let mut registry = Registry::new();
    for i in 0..PER_SET {
        let b = || B(format!("b{i}"));
        registry.spawn((A(i), b()));
        registry.spawn((A(i), b(), C(i)));
        registry.spawn((A(i), b(), C(i), D(i)));
        registry.spawn((A(i), b(), C(i), E(i)));
    }
    registry
}

type Pairs = BTreeMap<(u32, u32), (u32, u32)>;
/// The `(A, B)` join: entity bits to values.
type Named = BTreeMap<(u32, u32), (u32, String)>;

/// What the views `(Entity, &C, &D)` and `(Entity, &C, &E)` yield, keyed by
/// entity bits, and what `(Entity, &A, &B)` yields.
fn joins(registry: &Registry) -> (Pairs, Pairs, Named) {
    let key = |e: Entity| (e.index(), e.generation());
    let cd = registry
        .view::<(Entity, &C, &D)>()
        .iter()
        .map(|(e, c, d)| (key(e), (c.0, d.0)))
        .collect();
    let ce = registry
        .view::<(Entity, &C, &E)>()
        .iter()
        .map(|(e, c, x)| (key(e), (c.0, x.0)))
        .collect();
    let ab = registry
        .view::<(Entity, &A, &B)>()
        .iter()
        .map(|(e, a, b)| (key(e), (a.0, b.0.clone())))
        .collect();
    (cd, ce, ab)
}

/// `true` when `part` sits in `whole` as one run.
fn is_run(whole: &[Entity], part: &[Entity]) -> bool {
    part.is_empty() || whole.windows(part.len()).any(|w| w == part)
}

#[test]
fn sorting_keeps_every_pair_and_groups_archetypes() {
    let mut registry = interleaved();
    let before = joins(&registry);
    let c = registry.pool::<C>().unwrap().entities();
    assert!(!is_run(c, registry.pool::<D>().unwrap().entities()));

    registry.sort_pools();

    assert_eq!(joins(&registry), before);
    assert_eq!(before.0.len(), PER_SET as usize);
    let c = registry.pool::<C>().unwrap().entities();
    assert!(is_run(c, registry.pool::<D>().unwrap().entities()));
    assert!(is_run(c, registry.pool::<E>().unwrap().entities()));
    assert_eq!(
        registry.pool::<A>().unwrap().entities(),
        registry.pool::<B>().unwrap().entities()
    );
    // Every handle still finds its own values.
    for (&(index, _), &(c_value, d_value)) in &before.0 {
        let e = registry
            .pool::<D>()
            .unwrap()
            .entities()
            .iter()
            .copied()
            .find(|e| e.index() == index)
            .unwrap();
        assert_eq!(registry.get::<C>(e), Some(&C(c_value)));
        assert_eq!(registry.get::<D>(e), Some(&D(d_value)));
    }
}

/// Views that joined (and cached) before the sort, and write after it,
/// write the right entities; a second sort changes nothing.
#[test]
fn views_cached_before_the_sort_stay_exact() {
    let mut registry = interleaved();
    registry
        .view_mut::<(&mut C, &D)>()
        .each(|(c, d)| c.0 += d.0);
    registry.sort_pools();
    registry
        .view_mut::<(&mut C, &D)>()
        .each(|(c, d)| c.0 += d.0);
    registry
        .view_mut::<(&mut C, &E)>()
        .each(|(c, e)| c.0 += 10 * e.0);
    let order: Vec<Entity> = registry.pool::<C>().unwrap().entities().to_vec();
    registry.sort_pools();
    assert_eq!(registry.pool::<C>().unwrap().entities(), &order[..]);
    for (e, c) in registry.pool::<C>().unwrap().iter() {
        let a = registry.get::<A>(e).unwrap().0;
        let expected = match (registry.get::<D>(e), registry.get::<E>(e)) {
            (Some(_), _) => 3 * a,
            (_, Some(_)) => 11 * a,
            _ => a,
        };
        assert_eq!(c.0, expected, "{e}");
    }
    // After a despawn and spawns the sort still groups and keeps pairs.
    let victim = order[3];
    registry.despawn(victim).unwrap();
    registry.spawn((A(7), B("x".into()), C(7), D(7)));
    let before = joins(&registry);
    registry.sort_pools();
    assert_eq!(joins(&registry), before);
    let c = registry.pool::<C>().unwrap().entities();
    assert!(is_run(c, registry.pool::<D>().unwrap().entities()));
}

/// Run-time (C API) pools are sorted too, their bytes moved with their
/// entities.
#[test]
fn runtime_pools_move_their_bytes() {
    let mut registry = Registry::new();
    let id = registry
        .register_runtime(ComponentDescriptor::new("id", Layout::new::<u64>()))
        .unwrap();
    let mut spawned = Vec::new();
    for i in 0..(PER_SET as u64) {
        let e = if i % 2 == 0 {
            registry.spawn((A(i as u32),))
        } else {
            registry.spawn(())
        };
        let value = i * 3;
        // SAFETY: a valid u64 for a u64 component, moved in on Ok.
        unsafe { registry.insert_raw(e, id, (&raw const value).cast()) }.unwrap();
        spawned.push((e, value));
    }
    registry.sort_pools();
    for (e, value) in spawned {
        let ptr = registry.get_raw(e, id).unwrap();
        // SAFETY: the pool holds a u64 for `e`, aligned.
        assert_eq!(unsafe { *ptr.cast::<u64>().as_ptr() }, value);
    }
}

/// With more than 64 pools the signature takes several words: pairs are
/// kept, and shared entities end in the same relative order everywhere.
#[test]
fn more_than_64_pools_sort_too() {
    let mut registry = interleaved();
    let markers: Vec<ComponentId> = (0..64)
        .map(|k| {
            registry
                .register_runtime(ComponentDescriptor::new(
                    format!("m{k}"),
                    Layout::new::<u8>(),
                ))
                .unwrap()
        })
        .collect();
    let owners: Vec<Entity> = registry.pool::<D>().unwrap().entities().to_vec();
    for (k, &e) in owners.iter().enumerate() {
        let value = k as u8;
        // SAFETY: a valid u8 for a u8 component, moved in on Ok.
        unsafe { registry.insert_raw(e, markers[k % 64], (&raw const value).cast()) }.unwrap();
    }
    let before = joins(&registry);
    registry.sort_pools();
    assert_eq!(joins(&registry), before);
    let c = registry.pool::<C>().unwrap().entities();
    let d = registry.pool::<D>().unwrap().entities();
    let in_c: Vec<Entity> = c.iter().copied().filter(|e| d.contains(e)).collect();
    assert_eq!(in_c, d);
    assert_eq!(
        registry.pool::<A>().unwrap().entities(),
        registry.pool::<B>().unwrap().entities()
    );
    for (k, &e) in owners.iter().enumerate() {
        let ptr = registry.get_raw(e, markers[k % 64]).unwrap();
        // SAFETY: the pool holds a u8 for `e`.
        assert_eq!(unsafe { *ptr.as_ptr() }, k as u8);
    }
}
