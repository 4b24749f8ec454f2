//! Savable run-time components read and written as bytes
//! (`Registry::runtime_bytes`, `Registry::insert_runtime_bytes`): the
//! values in dense order, a round trip into another registry, zero-size
//! and over-aligned layouts, and every refusal leaving the registry as it
//! was.

use std::alloc::Layout;
use std::borrow::Cow;

use ecs_engine::{ComponentDescriptor, ComponentId, EcsError, Entity, Registry};

/// A savable component named `name` of `size` bytes aligned to `align`.
fn savable(registry: &mut Registry, name: &str, size: usize, align: usize) -> ComponentId {
    let layout = Layout::from_size_align(size, align).unwrap();
    // SAFETY: the tests insert only initialised byte arrays, and byte
    // arrays own nothing.
    let descriptor = unsafe { ComponentDescriptor::new(name, layout).savable() };
    registry.register_runtime(descriptor).unwrap()
}

fn values(registry: &Registry, id: ComponentId) -> Vec<(Entity, Vec<u8>)> {
    let bytes = registry.runtime_bytes(id).unwrap();
    assert_eq!(bytes.len(), bytes.entities().len());
    bytes.iter().map(|(e, b)| (e, b.to_vec())).collect()
}

#[test]
fn values_come_in_dense_order_and_round_trip_into_another_registry() {
    let mut registry = Registry::new();
    let id = savable(&mut registry, "cell", 12, 4);
    let entities: Vec<Entity> = (0..5).map(|_| registry.spawn(())).collect();
    for (i, &e) in entities.iter().enumerate() {
        let value: Vec<u8> = (0..12).map(|b| (i * 16 + b) as u8).collect();
        registry.insert_runtime_bytes(e, id, &value).unwrap();
    }
    // A replacement keeps the position; a removal swaps the last one in.
    registry
        .insert_runtime_bytes(entities[1], id, &[9; 12])
        .unwrap();
    assert!(registry.remove_by_id(entities[0], id).unwrap());
    let saved = values(&registry, id);
    let order: Vec<Entity> = saved.iter().map(|&(e, _)| e).collect();
    assert_eq!(
        order,
        [entities[4], entities[1], entities[2], entities[3]],
        "swap-and-pop order"
    );
    assert_eq!(saved[1].1, [9; 12]);
    assert_eq!(saved[0].1, (64..76).collect::<Vec<u8>>());

    // The same bytes, read through the raw pointer, in a second registry.
    let mut other = Registry::new();
    let other_id = savable(&mut other, "cell", 12, 4);
    let others: Vec<Entity> = (0..5).map(|_| other.spawn(())).collect();
    assert_eq!(
        others, entities,
        "a fresh registry hands out the same handles"
    );
    for (e, bytes) in &saved {
        other.insert_runtime_bytes(*e, other_id, bytes).unwrap();
    }
    assert_eq!(values(&other, other_id), saved);
    let raw = other.get_raw(entities[2], other_id).unwrap();
    assert_eq!(raw.as_ptr() as usize % 4, 0, "stored aligned");
    // SAFETY: the value is 12 initialised bytes, valid until `other` changes.
    let stored = unsafe { std::slice::from_raw_parts(raw.as_ptr(), 12) };
    assert_eq!(stored, (32..44).collect::<Vec<u8>>());
}

#[test]
fn zero_size_and_over_aligned_values() {
    let mut registry = Registry::new();
    let marker = savable(&mut registry, "marker", 0, 1);
    let wide = savable(&mut registry, "wide", 64, 64);
    let e = registry.spawn(());
    registry.insert_runtime_bytes(e, marker, &[]).unwrap();
    registry.insert_runtime_bytes(e, wide, &[3; 64]).unwrap();
    assert_eq!(values(&registry, marker), [(e, vec![])]);
    assert_eq!(values(&registry, wide), [(e, vec![3; 64])]);
    assert_eq!(registry.get_raw(e, wide).unwrap().as_ptr() as usize % 64, 0);
    assert!(registry.runtime_bytes(marker).unwrap().value(1).is_none());
}

#[test]
fn refusals_name_the_component_and_change_nothing() {
    let mut registry = Registry::new();
    let cell = savable(&mut registry, "cell", 4, 4);
    let plain = registry
        .register_runtime(ComponentDescriptor::new("plain", Layout::new::<u32>()))
        .unwrap();
    // SAFETY: the destructor does nothing; the values are initialised.
    let dropped = unsafe {
        ComponentDescriptor::new("dropped", Layout::new::<u32>())
            .savable()
            .with_drop(|_| {})
    };
    let dropped = registry.register_runtime(dropped).unwrap();
    let typed = registry.register::<u32>();
    let e = registry.spawn(());
    registry
        .insert_runtime_bytes(e, cell, &[1, 2, 3, 4])
        .unwrap();

    assert!(!registry.component_info(plain).unwrap().is_savable());
    assert!(!registry.component_info(dropped).unwrap().is_savable());
    assert!(registry.component_info(cell).unwrap().is_savable());
    match registry.runtime_bytes(plain).unwrap_err() {
        EcsError::NotSavable { component, reason } => {
            assert_eq!(component, Cow::<str>::from("plain"));
            assert!(reason.contains("not registered as savable"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let err = registry
        .insert_runtime_bytes(e, dropped, &[0; 4])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "component `dropped` cannot be saved by its bytes: it has a destructor, \
         so a byte copy would own its resources twice"
    );
    assert!(matches!(
        registry.runtime_bytes(typed).unwrap_err(),
        EcsError::TypedComponent { .. }
    ));
    assert!(matches!(
        registry.insert_runtime_bytes(e, cell, &[7; 5]).unwrap_err(),
        EcsError::LayoutMismatch { expected, found, .. }
            if expected.size() == 4 && found.size() == 5
    ));
    let dead = registry.spawn(());
    registry.despawn(dead).unwrap();
    assert_eq!(
        registry
            .insert_runtime_bytes(dead, cell, &[7; 4])
            .unwrap_err(),
        EcsError::NoSuchEntity { entity: dead }
    );
    assert!(matches!(
        registry
            .runtime_bytes(ComponentId::from_u32(99))
            .unwrap_err(),
        EcsError::UnknownComponent { .. }
    ));
    // Nothing changed.
    assert_eq!(values(&registry, cell), [(e, vec![1, 2, 3, 4])]);
    assert!(!registry.has_id(e, dropped));
    assert!(!registry.has_id(dead, cell));
}
