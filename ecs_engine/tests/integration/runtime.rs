//! Components registered at run time: the blob pool against a model,
//! destructor counts, alignment, zero-size components, raw views and
//! errors.

use std::alloc::Layout;
use std::collections::{BTreeSet, HashMap};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use ecs_engine::{
    Access, ComponentDescriptor, ComponentId, EcsError, Entity, RawArena, RawComponent, Registry,
};
use proptest::prelude::*;

/// Every value id dropped, in order; values carry a unique `u64` id in
/// their first 8 bytes. Zero-size values are counted as id `u64::MAX`.
#[derive(Clone, Default)]
struct Drops(Arc<Mutex<Vec<u64>>>);

impl Drops {
    fn ids(&self) -> Vec<u64> {
        self.0.lock().unwrap().clone()
    }
    fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

/// A run-time component of `layout` whose destructor checks the pointer's
/// alignment and records the value's id.
fn counted(name: &str, layout: Layout, drops: &Drops) -> ComponentDescriptor {
    let drops = drops.clone();
    // SAFETY: the destructor reads the id of a value with `size >= 8`
    // (every such test value starts with one), touches nothing for a
    // zero-size one.
    unsafe {
        ComponentDescriptor::new(name, layout).with_drop(move |ptr: NonNull<u8>| {
            assert_eq!(ptr.as_ptr() as usize % layout.align(), 0, "aligned drop");
            let id = if layout.size() == 0 {
                u64::MAX
            } else {
                ptr.cast::<u64>().read()
            };
            drops.0.lock().unwrap().push(id);
        })
    }
}

/// Inserts a value of `size` bytes starting with `id` (the rest a pattern),
/// from a deliberately misaligned source.
fn insert(registry: &mut Registry, e: Entity, c: ComponentId, id: u64) -> Result<(), EcsError> {
    let size = registry.component_info(c).unwrap().layout().size();
    let mut buf = vec![0u8; size + 1];
    if size >= 8 {
        buf[1..9].copy_from_slice(&id.to_ne_bytes());
        for (k, byte) in buf[9..].iter_mut().enumerate() {
            *byte = (id as u8).wrapping_add(k as u8);
        }
    }
    // SAFETY: the bytes are a valid value of the test components (plain
    // bytes whose destructor only reads the id); `buf` is ours.
    unsafe { registry.insert_raw(e, c, buf.as_ptr().add(1)) }
}

/// The id stored in `e`'s value of `c` (checking alignment and pattern).
fn read(registry: &Registry, e: Entity, c: ComponentId) -> Result<u64, EcsError> {
    let layout = registry.component_info(c).unwrap().layout();
    let ptr = registry.get_raw(e, c)?;
    assert_eq!(ptr.as_ptr() as usize % layout.align(), 0);
    if layout.size() == 0 {
        return Ok(u64::MAX);
    }
    // SAFETY: an aligned value of at least 8 bytes, valid until the
    // registry changes.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.as_ptr(), layout.size()) };
    let id = u64::from_ne_bytes(bytes[..8].try_into().unwrap());
    for (k, &byte) in bytes[8..].iter().enumerate() {
        assert_eq!(byte, (id as u8).wrapping_add(k as u8));
    }
    Ok(id)
}

struct World {
    registry: Registry,
    drops: Drops,
    /// u64-sized, 64-byte aligned and 64 bytes, zero-size.
    ids: [ComponentId; 3],
}

fn world() -> World {
    let drops = Drops::default();
    let mut registry = Registry::new();
    registry.register::<u32>(); // a Rust type beside them
    let ids = [
        registry
            .register_runtime(counted("small", Layout::new::<u64>(), &drops))
            .unwrap(),
        registry
            .register_runtime(counted(
                "wide",
                Layout::from_size_align(64, 64).unwrap(),
                &drops,
            ))
            .unwrap(),
        registry
            .register_runtime(counted("marker", Layout::new::<()>(), &drops))
            .unwrap(),
    ];
    World {
        registry,
        drops,
        ids,
    }
}

#[derive(Debug, Clone)]
enum Op {
    Spawn,
    Despawn(usize),
    Insert(usize, usize),
    Remove(usize, usize),
    View(bool),
    Clear,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Spawn),
        1 => any::<usize>().prop_map(Op::Despawn),
        6 => (any::<usize>(), 0..3usize).prop_map(|(e, c)| Op::Insert(e, c)),
        2 => (any::<usize>(), 0..3usize).prop_map(|(e, c)| Op::Remove(e, c)),
        1 => any::<bool>().prop_map(Op::View),
        1 => Just(Op::Clear).prop_filter("rare", |_| true),
    ]
}

/// The entities the model says have all of `cs`, sorted.
fn joined(model: &HashMap<(Entity, usize), u64>, live: &[Entity], cs: &[usize]) -> Vec<Entity> {
    let mut out: Vec<Entity> = live
        .iter()
        .copied()
        .filter(|&e| cs.iter().all(|&c| model.contains_key(&(e, c))))
        .collect();
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn blob_pools_match_hashmap_model(
        ops in proptest::collection::vec(op(), 1..if cfg!(miri) { 40 } else { 200 })
    ) {
        let World { mut registry, drops, ids } = world();
        let mut live: Vec<Entity> = Vec::new();
        let mut dead: Vec<Entity> = Vec::new();
        let mut model: HashMap<(Entity, usize), u64> = HashMap::new();
        let mut inserted: Vec<u64> = Vec::new();
        let mut next = 0u64;
        for op in ops {
            match op {
                Op::Spawn => live.push(registry.spawn(())),
                Op::Despawn(k) if !live.is_empty() => {
                    let e = live.swap_remove(k % live.len());
                    registry.despawn(e).unwrap();
                    model.retain(|&(owner, _), _| owner != e);
                    dead.push(e);
                }
                Op::Insert(k, c) => {
                    let value = if c == 2 { u64::MAX } else { next += 1; next };
                    if !live.is_empty() && k % 4 != 0 {
                        let e = live[k % live.len()];
                        insert(&mut registry, e, ids[c], value).unwrap();
                        model.insert((e, c), value);
                        inserted.push(value);
                    } else if let Some(&e) = dead.first() {
                        let before = drops.count();
                        prop_assert_eq!(
                            insert(&mut registry, e, ids[c], value),
                            Err(EcsError::NoSuchEntity { entity: e })
                        );
                        prop_assert_eq!(drops.count(), before, "a refused value stays the caller's");
                    }
                }
                Op::Remove(k, c) if !live.is_empty() => {
                    let e = live[k % live.len()];
                    let had = model.remove(&(e, c)).is_some();
                    prop_assert_eq!(registry.remove_by_id(e, ids[c]), Ok(had));
                }
                Op::View(write) => {
                    let access = if write { Access::Write } else { Access::Read };
                    let terms = [(ids[0], access), (ids[1], Access::Read)];
                    let mut view = registry.raw_view(&terms).unwrap();
                    let mut seen = Vec::new();
                    view.each(|e, values| {
                        assert_eq!(values.len(), 2);
                        assert_eq!(values[1] as usize % 64, 0);
                        seen.push(e);
                    });
                    let mut chunked = Vec::new();
                    view.each_chunk(|chunk| {
                        assert!(!chunk.is_empty());
                        chunked.extend_from_slice(chunk.entities());
                    });
                    prop_assert_eq!(&seen, &chunked, "each and each_chunk agree, in order");
                    seen.sort();
                    prop_assert_eq!(seen, joined(&model, &live, &[0, 1]));
                }
                Op::Clear => {
                    registry.clear();
                    dead.append(&mut live);
                    model.clear();
                }
                _ => {}
            }
            for &e in &live {
                for (c, &id) in ids.iter().enumerate() {
                    match model.get(&(e, c)) {
                        Some(&value) => prop_assert_eq!(read(&registry, e, id), Ok(value)),
                        None => {
                            let missing = matches!(
                                read(&registry, e, id),
                                Err(EcsError::MissingComponent { .. })
                            );
                            prop_assert!(missing);
                        }
                    }
                    prop_assert_eq!(registry.has_id(e, id), model.contains_key(&(e, c)));
                }
            }
            for (c, &id) in ids.iter().enumerate() {
                let count = model.keys().filter(|&&(_, k)| k == c).count();
                prop_assert_eq!(registry.count_id(id), count);
            }
        }
        drop(registry);
        let mut dropped = drops.ids();
        dropped.sort_unstable();
        inserted.sort_unstable();
        prop_assert_eq!(dropped, inserted, "every value dropped exactly once");
    }
}

#[test]
fn destructor_runs_once_on_remove_replace_despawn_clear_and_drop() {
    let World {
        mut registry,
        drops,
        ids,
    } = world();
    let [small, wide, marker] = ids;
    let a = registry.spawn(());
    let b = registry.spawn(());
    insert(&mut registry, a, small, 1).unwrap();
    insert(&mut registry, a, small, 2).unwrap(); // replace
    assert_eq!(drops.ids(), [1]);
    insert(&mut registry, a, wide, 3).unwrap();
    insert(&mut registry, b, wide, 4).unwrap();
    insert(&mut registry, b, marker, 0).unwrap();
    assert_eq!(registry.remove_by_id(b, wide), Ok(true)); // remove
    assert_eq!(drops.ids(), [1, 4]);
    registry.despawn(b).unwrap(); // despawn: the marker
    assert_eq!(drops.ids(), [1, 4, u64::MAX]);
    let c = registry.spawn(());
    insert(&mut registry, c, small, 5).unwrap();
    registry.clear(); // clear: a's 2 and 3, c's 5
    let mut after_clear = drops.ids();
    after_clear.sort_unstable();
    assert_eq!(after_clear, [1, 2, 3, 4, 5, u64::MAX]);
    let d = registry.spawn(());
    insert(&mut registry, d, wide, 6).unwrap();
    drop(registry); // the registry's drop
    assert_eq!(drops.count(), 7);
    assert_eq!(drops.ids().last(), Some(&6));
}

#[test]
fn pointers_are_aligned_through_growth() {
    let World {
        mut registry, ids, ..
    } = world();
    let n = if cfg!(miri) { 20 } else { 300 };
    let entities: Vec<Entity> = (0..n).map(|_| registry.spawn(())).collect();
    for (i, &e) in entities.iter().enumerate() {
        insert(&mut registry, e, ids[1], i as u64).unwrap();
        // Every value so far stays readable and aligned after each growth.
        if i % 7 == 0 {
            for (j, &earlier) in entities[..=i].iter().enumerate() {
                assert_eq!(read(&registry, earlier, ids[1]), Ok(j as u64));
            }
        }
    }
    let ptr = registry.get_raw_mut(entities[3], ids[1]).unwrap();
    assert_eq!(ptr.as_ptr() as usize % 64, 0);
    // SAFETY: an aligned 64-byte value; writing keeps it valid (new id).
    unsafe { ptr.cast::<u64>().write(1000) };
    assert_eq!(
        registry
            .get_raw(entities[3], ids[1])
            .map(|p| p.as_ptr() as usize % 64),
        Ok(0)
    );
    let mut view = registry.raw_view(&[(ids[1], Access::Read)]).unwrap();
    view.each_chunk(|chunk| {
        assert_eq!(chunk.columns()[0] as usize % 64, 0);
        assert_eq!(chunk.len(), n);
    });
}

#[test]
fn zero_size_components_need_no_column() {
    let World {
        mut registry,
        drops,
        ids,
    } = world();
    let marker = ids[2];
    let before = registry.heap_bytes();
    let entities: Vec<Entity> = (0..100).map(|_| registry.spawn(())).collect();
    for &e in &entities {
        insert(&mut registry, e, marker, 0).unwrap();
    }
    assert_eq!(registry.count_id(marker), 100);
    assert!(registry.heap_bytes() - before < 100 * 8 + 2 * 4096 * 4 + 64 * 4);
    let mut view = registry.raw_view(&[(marker, Access::Write)]).unwrap();
    assert_eq!(view.count(), 100);
    view.each(|_, values| assert_eq!(values[0] as usize % registry_align(), 0));
    drop(view);
    registry.despawn(entities[0]).unwrap();
    assert_eq!(drops.count(), 1);
    drop(registry);
    assert_eq!(drops.count(), 100);
}

fn registry_align() -> usize {
    std::mem::align_of::<()>()
}

/// Registry with `a` and `b` (u32 each, no destructor).
fn pair() -> (Registry, ComponentId, ComponentId) {
    let mut registry = Registry::new();
    let a = registry
        .register_runtime(ComponentDescriptor::new("a", Layout::new::<u32>()))
        .unwrap();
    let b = registry
        .register_runtime(ComponentDescriptor::new("b", Layout::new::<u32>()))
        .unwrap();
    (registry, a, b)
}

fn put(registry: &mut Registry, e: Entity, c: ComponentId, value: u32) {
    // SAFETY: a valid u32 for a u32 component.
    unsafe { registry.insert_raw(e, c, (&raw const value).cast()) }.unwrap();
}

/// `(len, entities)` of every chunk of a view over `a` and `b`.
fn chunks(registry: &mut Registry, a: ComponentId, b: ComponentId) -> Vec<Vec<Entity>> {
    let mut view = registry
        .raw_view(&[(a, Access::Read), (b, Access::Read)])
        .unwrap();
    let mut out = Vec::new();
    view.each_chunk(|chunk| {
        // Each column holds `len` consecutive values, one per entity.
        for (i, &e) in chunk.entities().iter().enumerate() {
            for (k, &base) in chunk.columns().iter().enumerate() {
                // SAFETY: `i < len`, u32 values 4 bytes apart.
                let value = unsafe { *base.cast::<u32>().add(i) };
                assert_eq!(value, e.index() * 10 + k as u32);
            }
        }
        out.push(chunk.entities().to_vec());
    });
    out
}

#[test]
fn chunks_follow_dense_positions() {
    let (mut registry, a, b) = pair();
    let entities: Vec<Entity> = (0..10).map(|_| registry.spawn(())).collect();
    for &e in &entities {
        put(&mut registry, e, a, e.index() * 10);
        put(&mut registry, e, b, e.index() * 10 + 1);
    }
    assert_eq!(chunks(&mut registry, a, b), vec![entities.clone()]);

    // `b` in reverse order: every chunk is one entity long.
    for &e in &entities {
        registry.remove_by_id(e, b).unwrap();
    }
    for &e in entities.iter().rev() {
        put(&mut registry, e, b, e.index() * 10 + 1);
    }
    let found = chunks(&mut registry, a, b);
    assert_eq!(found.len(), 10);
    assert!(found.iter().all(|c| c.len() == 1));
    let flat: Vec<Entity> = found.concat();
    assert_eq!(
        flat, entities,
        "driven by `a` (first of equal sizes), in its order"
    );

    // A swap-and-pop in `a` splits one aligned run into pieces.
    let (mut registry, a, b) = pair();
    let entities: Vec<Entity> = (0..10).map(|_| registry.spawn(())).collect();
    for &e in &entities {
        put(&mut registry, e, a, e.index() * 10);
        put(&mut registry, e, b, e.index() * 10 + 1);
    }
    let extra = registry.spawn(());
    put(&mut registry, extra, b, extra.index() * 10 + 1);
    registry.remove_by_id(entities[2], a).unwrap(); // a: 0 1 9 3 4 5 6 7 8
    let found = chunks(&mut registry, a, b);
    let lens: Vec<usize> = found.iter().map(Vec::len).collect();
    assert_eq!(lens, [2, 1, 6]);
    assert_eq!(found.concat().len(), 9);
}

#[test]
fn chunks_join_runs_at_other_offsets() {
    let (mut registry, a, b) = pair();
    let first = registry.spawn(());
    put(&mut registry, first, b, first.index() * 10 + 1);
    let entities: Vec<Entity> = (0..20).map(|_| registry.spawn(())).collect();
    for &e in &entities {
        put(&mut registry, e, a, e.index() * 10);
        put(&mut registry, e, b, e.index() * 10 + 1);
    }
    // `b` holds the same run one position later: still one chunk.
    assert_eq!(chunks(&mut registry, a, b), vec![entities]);
}

#[test]
fn raw_view_writes_through_write_terms() {
    let (mut registry, a, b) = pair();
    let entities: Vec<Entity> = (0..50).map(|_| registry.spawn(())).collect();
    for &e in &entities {
        put(&mut registry, e, a, 1);
        if e.index() % 3 != 0 {
            put(&mut registry, e, b, e.index());
        }
    }
    let mut view = registry
        .raw_view(&[(a, Access::Write), (b, Access::Read)])
        .unwrap();
    view.each(|_, values| {
        // SAFETY: `a` is write-locked by this view; both are u32s.
        unsafe { *values[0].cast::<u32>() += *values[1].cast::<u32>() };
    });
    drop(view);
    for &e in &entities {
        // SAFETY: an aligned u32, read while nothing changes.
        let value = unsafe { *registry.get_raw(e, a).unwrap().cast::<u32>().as_ptr() };
        let expected = if e.index() % 3 != 0 { 1 + e.index() } else { 1 };
        assert_eq!(value, expected);
    }
}

#[test]
fn raw_views_take_locks() {
    let (mut registry, a, b) = pair();
    let e = registry.spawn(());
    put(&mut registry, e, a, 0);
    put(&mut registry, e, b, 1);
    let cell = registry.cell();
    let writer = cell.raw_view(&[(a, Access::Write)]).unwrap();
    let err = cell
        .raw_view(&[(b, Access::Read), (a, Access::Read)])
        .unwrap_err();
    assert_eq!(
        err,
        EcsError::BorrowConflict {
            name: "a".into(),
            wanted: Access::Read,
            held: Access::Write,
        }
    );
    assert!(err.to_string().contains("`a`"));
    assert!(matches!(
        cell.get_raw(e, a),
        Err(EcsError::BorrowConflict { .. })
    ));
    // `b` was released when the failed view dropped its guards.
    let _b_writer = cell.raw_view(&[(b, Access::Write)]).unwrap();
    drop(writer);
    let r1 = cell.raw_view(&[(a, Access::Read)]).unwrap();
    let r2 = cell.raw_view(&[(a, Access::Read)]).unwrap();
    assert!(matches!(
        cell.raw_view(&[(a, Access::Write)]),
        Err(EcsError::BorrowConflict {
            held: Access::Read,
            ..
        })
    ));
    assert!(cell.get_raw(e, a).is_ok());
    drop((r1, r2));
    assert_eq!(cell.component_info(a).unwrap().name(), "a");
}

#[test]
fn raw_view_threads_share_reads() {
    let (mut registry, a, b) = pair();
    let n = if cfg!(miri) { 30 } else { 1000 };
    for i in 0..n {
        let e = registry.spawn(());
        put(&mut registry, e, a, i);
        put(&mut registry, e, b, 2 * i);
    }
    let cell = registry.cell();
    let sums: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut view = cell.raw_view(&[(a, Access::Read)]).unwrap();
                    let mut sum = 0u64;
                    // SAFETY: u32 values under a read lock.
                    view.each(|_, v| sum += u64::from(unsafe { *v[0].cast::<u32>() }));
                    sum
                })
            })
            .collect();
        let mut writer = cell.raw_view(&[(b, Access::Write)]).unwrap();
        // SAFETY: `b` is write-locked by this view; u32 values.
        writer.each(|_, v| unsafe { *v[0].cast::<u32>() += 1 });
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let expected = u64::from(n) * u64::from(n - 1) / 2;
    assert_eq!(sums, [expected, expected]);
}

#[test]
fn raw_errors_are_values() {
    let (mut registry, a, b) = pair();
    let typed = registry.register::<u32>();
    let e = registry.spawn(());
    let dead = registry.spawn(());
    registry.despawn(dead).unwrap();
    let unknown = ComponentId::from_u32(99);
    let value = 5u32;
    let src: *const u8 = (&raw const value).cast();
    // SAFETY: each insert gets a valid u32 for u32 components.
    unsafe {
        assert_eq!(
            registry.insert_raw(dead, a, src),
            Err(EcsError::NoSuchEntity { entity: dead })
        );
        assert_eq!(
            registry.insert_raw(e, unknown, src),
            Err(EcsError::UnknownComponent { id: unknown })
        );
        let err = registry.insert_raw(e, typed, src).unwrap_err();
        assert_eq!(
            err,
            EcsError::TypedComponent {
                component: "u32".into()
            }
        );
        assert!(err.to_string().contains("`u32` is a Rust type"));
    }
    assert_eq!(
        registry.get_raw(e, a),
        Err(EcsError::MissingComponent {
            entity: e,
            component: "a".into()
        })
    );
    assert_eq!(
        registry.get_raw(dead, a),
        Err(EcsError::NoSuchEntity { entity: dead })
    );
    assert_eq!(
        registry.get_raw_mut(e, unknown),
        Err(EcsError::UnknownComponent { id: unknown })
    );
    let duplicate = registry
        .register_runtime(ComponentDescriptor::new("a", Layout::new::<u8>()))
        .unwrap_err();
    assert_eq!(
        duplicate,
        EcsError::DuplicateComponentName { name: "a".into() }
    );
    assert!(duplicate.to_string().contains("`a`"));
    assert_eq!(registry.component_by_name("b"), Some(b));
    assert_eq!(registry.component_by_name("u32"), None);
    assert_eq!(registry.raw_view(&[]).unwrap_err(), EcsError::NoTerms);
    assert_eq!(
        registry
            .raw_view(&[(a, Access::Read), (b, Access::Read), (a, Access::Read)])
            .unwrap_err(),
        EcsError::DuplicateTerm {
            component: "a".into()
        }
    );
    assert_eq!(
        registry.raw_view(&[(typed, Access::Read)]).unwrap_err(),
        EcsError::TypedComponent {
            component: "u32".into()
        }
    );
    assert_eq!(
        registry.raw_view(&[(unknown, Access::Read)]).unwrap_err(),
        EcsError::UnknownComponent { id: unknown }
    );
    assert_eq!(registry.remove_by_id(e, a), Ok(false));
    assert_eq!(registry.count_id(unknown), 0);
    let info = registry.component_info(a).unwrap();
    assert!(info.is_runtime() && info.drop_fn().is_none());
    assert_eq!((info.layout(), info.stride()), (Layout::new::<u32>(), 4));
}

#[test]
fn arena_values_leave_exactly_once() {
    let World {
        mut registry,
        drops,
        ids,
    } = world();
    let [small, wide, marker] = ids;
    let e = registry.spawn(());
    let dead = registry.spawn(());
    registry.despawn(dead).unwrap();
    let mut arena = RawArena::new();
    let push = |arena: &mut RawArena, registry: &Registry, c: ComponentId, id: u64| {
        let mut bytes = [0u8; 65];
        bytes[1..9].copy_from_slice(&id.to_ne_bytes());
        for (k, byte) in bytes[9..].iter_mut().enumerate() {
            *byte = (id as u8).wrapping_add(k as u8);
        }
        let info = registry.component_info(c).unwrap();
        // SAFETY: `info` is `c`'s; the bytes (misaligned on purpose) are a
        // valid test value of at most 64 bytes.
        arena.push(unsafe { RawComponent::new(c, info, &RawComponent::bytes_of(&bytes)[1..]) })
    };
    let applied = push(&mut arena, &registry, wide, 1);
    let refused = push(&mut arena, &registry, small, 2);
    let _zst = push(&mut arena, &registry, marker, 0);
    let _left = push(&mut arena, &registry, wide, 3);
    arena.insert_into(applied, &mut registry, e).unwrap();
    assert_eq!(read(&registry, e, wide), Ok(1));
    assert_eq!(
        arena.insert_into(refused, &mut registry, dead),
        Err(EcsError::NoSuchEntity { entity: dead })
    );
    assert_eq!(drops.ids(), [2], "a refused value is dropped by the arena");
    arena.clear();
    let mut ids_dropped = drops.ids();
    ids_dropped.sort_unstable();
    assert_eq!(ids_dropped, [2, 3, u64::MAX]);
    // Reuse after clear, then drop the arena with a value in it.
    push(&mut arena, &registry, small, 4);
    drop(arena);
    assert_eq!(drops.count(), 4);

    // A value recorded with another registry's info is refused, and dropped.
    let mut other = Registry::new();
    let foreign = other
        .register_runtime(ComponentDescriptor::new("other", Layout::new::<u8>()))
        .unwrap();
    let mut arena = RawArena::new();
    let info = other.component_info(foreign).unwrap();
    let byte = 7u8;
    // SAFETY: a valid u8 for `other`'s component.
    let slot = arena.push(unsafe { RawComponent::new(small, info, RawComponent::bytes_of(&byte)) });
    assert!(matches!(
        arena.insert_into(slot, &mut registry, e),
        Err(EcsError::LayoutMismatch { .. })
    ));
    assert!(!registry.has_id(e, small));
}

#[test]
fn entity_slices_read_as_bits() {
    let mut registry = Registry::new();
    let entities: Vec<Entity> = (0..6).map(|_| registry.spawn(())).collect();
    registry.despawn(entities[1]).unwrap();
    let reused = registry.spawn(());
    let all: Vec<Entity> = entities.iter().copied().chain([reused]).collect();
    #[cfg(target_endian = "little")]
    {
        let bits = Entity::slice_as_bits(&all);
        let expected: Vec<u64> = all.iter().map(|e| e.to_bits()).collect();
        assert_eq!(bits, &expected[..]);
    }
    assert_eq!(std::mem::size_of::<Option<Entity>>(), 8);
    let unique: BTreeSet<u64> = all.iter().map(|e| e.to_bits()).collect();
    assert_eq!(unique.len(), all.len());
}
