//! A panicking `Drop` never leaves the world half-changed: after the unwind,
//! no pool holds a dead entity and every value is dropped exactly once (the
//! operation is completed, then the first panic resumes).

use std::alloc::Layout;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use ecs_engine::{ComponentDescriptor, Entity, Registry, SparseSet};

/// How many times each tagged value was dropped.
#[derive(Debug, Default, Clone)]
struct Drops(Arc<Mutex<BTreeMap<u32, usize>>>);

impl Drops {
    fn probe<const K: u8>(&self, tag: u32, panics: bool) -> Probe<K> {
        Probe {
            tag,
            panics,
            drops: self.clone(),
        }
    }

    /// Asserts that exactly `tags` were dropped, each once.
    #[track_caller]
    fn assert_dropped_once(&self, tags: &[u32]) {
        let log = self.0.lock().unwrap().clone();
        let expected: BTreeMap<u32, usize> = tags.iter().map(|&t| (t, 1)).collect();
        assert_eq!(log, expected);
    }
}

/// A component (one type per `K`) that records its drop, and panics in
/// `Drop` when asked to.
#[derive(Debug)]
struct Probe<const K: u8> {
    tag: u32,
    panics: bool,
    drops: Drops,
}

impl<const K: u8> Drop for Probe<K> {
    fn drop(&mut self) {
        *self.drops.0.lock().unwrap().entry(self.tag).or_default() += 1;
        if self.panics {
            panic!("Probe {} panics in Drop", self.tag);
        }
    }
}

/// Runs `f`, expecting it to panic.
#[track_caller]
fn panics(f: impl FnOnce()) {
    assert!(
        catch_unwind(AssertUnwindSafe(f)).is_err(),
        "expected a panic"
    );
}

/// `entity` is in no pool of the three probe types.
#[track_caller]
fn in_no_pool(registry: &Registry, entity: Entity) {
    assert!(registry.get::<Probe<0>>(entity).is_none());
    assert!(registry.get::<Probe<1>>(entity).is_none());
    assert!(registry.get::<Probe<2>>(entity).is_none());
    for pool_has in [
        registry
            .pool::<Probe<0>>()
            .is_some_and(|p| p.entities().contains(&entity)),
        registry
            .pool::<Probe<1>>()
            .is_some_and(|p| p.entities().contains(&entity)),
        registry
            .pool::<Probe<2>>()
            .is_some_and(|p| p.entities().contains(&entity)),
    ] {
        assert!(!pool_has);
    }
}

#[test]
fn despawn_completes_when_a_drop_panics() {
    let drops = Drops::default();
    let mut registry = Registry::new();
    let keep = registry.spawn((drops.probe::<2>(9, false),));
    let e = registry.spawn((
        drops.probe::<0>(1, true),
        drops.probe::<1>(2, true),
        drops.probe::<2>(3, false),
    ));
    panics(|| registry.despawn(e).unwrap());
    assert!(!registry.is_alive(e));
    in_no_pool(&registry, e);
    assert_eq!(registry.view::<&Probe<2>>().iter().count(), 1);
    drops.assert_dropped_once(&[1, 2, 3]);
    assert_eq!(registry.get::<Probe<2>>(keep).map(|p| p.tag), Some(9));
    // The slot is reused cleanly.
    let next = registry.spawn((drops.probe::<2>(4, false),));
    assert_eq!(next.index(), e.index());
    assert_eq!(registry.count::<Probe<2>>(), 2);
}

#[test]
fn clear_completes_when_a_drop_panics() {
    let drops = Drops::default();
    let mut registry = Registry::new();
    let a = registry.spawn((drops.probe::<0>(1, true), drops.probe::<1>(2, false)));
    let b = registry.spawn((drops.probe::<0>(3, true), drops.probe::<2>(4, true)));
    panics(|| registry.clear());
    assert!(registry.is_empty());
    in_no_pool(&registry, a);
    in_no_pool(&registry, b);
    assert_eq!(registry.count::<Probe<0>>(), 0);
    drops.assert_dropped_once(&[1, 2, 3, 4]);
}

#[test]
fn remove_bundle_completes_when_a_drop_panics() {
    let drops = Drops::default();
    let mut registry = Registry::new();
    let e = registry.spawn((
        drops.probe::<0>(1, true),
        drops.probe::<1>(2, true),
        drops.probe::<2>(3, false),
    ));
    panics(|| {
        registry
            .remove_bundle::<(Probe<0>, Probe<1>, Probe<2>)>(e)
            .unwrap()
    });
    assert!(registry.is_alive(e));
    in_no_pool(&registry, e);
    drops.assert_dropped_once(&[1, 2, 3]);
}

#[test]
fn overwriting_insert_bundle_completes_when_a_drop_panics() {
    let drops = Drops::default();
    let mut registry = Registry::new();
    let e = registry.spawn((drops.probe::<0>(1, true), drops.probe::<1>(2, true)));
    panics(|| {
        registry
            .insert_bundle(
                e,
                (
                    drops.probe::<0>(10, false),
                    drops.probe::<1>(20, false),
                    drops.probe::<2>(30, false),
                ),
            )
            .unwrap()
    });
    assert_eq!(registry.get::<Probe<0>>(e).map(|p| p.tag), Some(10));
    assert_eq!(registry.get::<Probe<1>>(e).map(|p| p.tag), Some(20));
    assert_eq!(registry.get::<Probe<2>>(e).map(|p| p.tag), Some(30));
    drops.assert_dropped_once(&[1, 2]);
    drop(registry);
    drops.assert_dropped_once(&[1, 2, 10, 20, 30]);
}

#[test]
fn overwriting_insert_hands_the_old_value_back() {
    let drops = Drops::default();
    let mut registry = Registry::new();
    let e = registry.spawn((drops.probe::<0>(1, true),));
    let old = registry.insert(e, drops.probe::<0>(2, false)).unwrap();
    panics(move || drop(old));
    assert_eq!(registry.get::<Probe<0>>(e).map(|p| p.tag), Some(2));
    drops.assert_dropped_once(&[1]);
}

#[test]
fn batches_stop_whole_when_a_drop_panics() {
    let drops = Drops::default();
    let mut registry = Registry::new();
    let es: Vec<Entity> = (0..3)
        .map(|k| registry.spawn((drops.probe::<0>(k, k == 1),)))
        .collect();
    // insert_many: the panicking replaced value stops the batch after its item.
    let mut items = es
        .iter()
        .enumerate()
        .map(|(k, &e)| (e, drops.probe::<0>(10 + k as u32, false)));
    panics(|| {
        let _ = registry.insert_many(&mut items);
    });
    let rest: Vec<_> = items.collect();
    assert_eq!(
        rest.len(),
        1,
        "the item after the panic stays in the iterator"
    );
    drop(rest);
    let tags: Vec<u32> = es
        .iter()
        .map(|&e| registry.get::<Probe<0>>(e).unwrap().tag)
        .collect();
    assert_eq!(tags, [10, 11, 2]);
    drops.assert_dropped_once(&[0, 1, 12]);

    // remove_many: stops after the entity whose value panicked, removed.
    registry.insert(es[0], drops.probe::<0>(20, true)).unwrap();
    let mut entities = es.iter().copied();
    panics(|| {
        let _ = registry.remove_many::<Probe<0>>(&mut entities);
    });
    assert_eq!(entities.next(), Some(es[1]));
    assert_eq!(registry.count::<Probe<0>>(), 2);
    assert!(registry.get::<Probe<0>>(es[0]).is_none());
}

#[test]
fn runtime_components_are_dropped_once_when_a_destructor_panics() {
    let dropped = Arc::new(Mutex::new(Vec::<u32>::new()));
    let log = dropped.clone();
    let mut registry = Registry::new();
    // SAFETY: the destructor reads a u32, which every value is.
    let descriptor = unsafe {
        ComponentDescriptor::new("fragile", Layout::new::<u32>()).with_drop(move |p| {
            let v = *p.cast::<u32>().as_ref();
            log.lock().unwrap().push(v);
            if v % 2 == 1 {
                panic!("fragile {v} panics in its destructor");
            }
        })
    };
    let id = registry.register_runtime(descriptor).unwrap();
    let es: Vec<Entity> = (0..4_u32)
        .map(|v| {
            let e = registry.spawn((drops_marker(),));
            // SAFETY: a valid u32, plain bytes.
            unsafe { registry.insert_raw(e, id, (&raw const v).cast()) }.unwrap();
            e
        })
        .collect();
    panics(|| registry.clear());
    assert!(es.iter().all(|&e| !registry.has_id(e, id)));
    assert_eq!(registry.count_id(id), 0);
    let mut seen = dropped.lock().unwrap().clone();
    seen.sort_unstable();
    assert_eq!(seen, [0, 1, 2, 3]);
}

fn drops_marker() -> u8 {
    0
}

#[test]
fn standalone_pool_clear_drops_every_value_once() {
    let drops = Drops::default();
    let mut registry = Registry::new();
    let mut pool = SparseSet::new();
    for k in 0..4 {
        let e = registry.spawn(());
        pool.insert(e, drops.probe::<0>(k, k % 2 == 0)).unwrap();
    }
    panics(|| pool.clear());
    assert!(pool.is_empty());
    drops.assert_dropped_once(&[0, 1, 2, 3]);
}

/// The test: a handle of an older owner of a slot never replaces
/// the new owner's value in a standalone pool.
#[test]
fn stale_handle_cannot_overwrite_the_new_owner() {
    let mut registry = Registry::new();
    let old = registry.spawn(());
    registry.despawn(old).unwrap();
    let new = registry.spawn(());
    assert_eq!(new.index(), old.index());
    let mut pool = SparseSet::new();
    pool.insert(new, "new owner").unwrap();
    let refused = pool.insert(old, "stale").unwrap_err();
    assert_eq!(refused.value, "stale");
    let message = refused.error.to_string();
    assert!(message.contains(&old.to_string()) && message.contains(&new.to_string()));
    assert_eq!(pool.get(new), Some(&"new owner"));
    assert_eq!(pool.get(old), None);
    assert_eq!(pool.len(), 1);
}
