//! In-memory states (`Registry::save_state` / `restore_state`) and
//! `Registry::clone_entity`: what a restore brings back (entities,
//! handles, components, dense order, change ticks, removal logs,
//! hierarchy, disabled marks, resources), what a save refuses, and a
//! model test of random operations around a save and a restore. Sizes are
//! small enough for Miri.

use std::alloc::Layout;
use std::collections::BTreeMap;

use ecs_engine::{
    Added, ChangeTick, Changed, CloneEntityError, ComponentDescriptor, Disabled, EcsError, Entity,
    Mut, Registry, RemovedCursor, StateError,
};
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq)]
struct Position(f32, f32);
#[derive(Debug, Clone, PartialEq)]
struct Name(String);
#[derive(Debug, Clone, PartialEq)]
struct Score(u64);

/// A component whose clone is never registered.
#[derive(Debug)]
struct Opaque;

fn registry() -> Registry {
    let mut registry = Registry::new();
    // Position's saves copy only what was written (by its ticks); Name's
    // copy every value.
    registry.register_clone_delta::<Position>();
    registry.register_clone::<Name>();
    registry.track_changes::<Position>();
    registry
}

/// The live handles, and the two typed pools' owners in dense order with
/// their values.
type Contents = (Vec<Entity>, Vec<(Entity, Position)>, Vec<(Entity, Name)>);

/// Everything a reader sees of the two typed pools.
fn contents(registry: &Registry) -> Contents {
    let live = registry.entities().iter().collect();
    let positions = registry
        .pool::<Position>()
        .map(|p| p.iter().map(|(e, v)| (e, v.clone())).collect())
        .unwrap_or_default();
    let names = registry
        .pool::<Name>()
        .map(|p| p.iter().map(|(e, v)| (e, v.clone())).collect())
        .unwrap_or_default();
    (live, positions, names)
}

#[test]
fn restore_brings_back_entities_handles_and_dense_order() {
    let mut registry = registry();
    let mut handles = Vec::new();
    for i in 0..20 {
        handles.push(registry.spawn((Position(i as f32, 0.0), Name(format!("e{i}")))));
    }
    for &e in handles.iter().step_by(3) {
        registry.despawn(e).unwrap();
    }
    registry.remove::<Name>(handles[4]).unwrap();
    let saved = contents(&registry);
    let state = registry.save_state().unwrap();
    assert_eq!(state.len(), registry.len());
    // What the next spawns get after the save.
    let next: Vec<Entity> = (0..8).map(|_| registry.spawn(())).collect();

    registry.despawn(handles[1]).unwrap();
    registry.get_mut::<Position>(handles[2]).unwrap().0 = 99.0;
    registry.insert(handles[4], Name("back".into())).unwrap();
    registry.restore_state(&state).unwrap();

    assert_eq!(contents(&registry), saved);
    assert!(!registry.is_alive(next[0]) || next[0] == handles[0]);
    let again: Vec<Entity> = (0..8).map(|_| registry.spawn(())).collect();
    assert_eq!(
        again, next,
        "the allocator's free list and generations came back"
    );
    // A state restores as often as wanted.
    registry.restore_state(&state).unwrap();
    assert_eq!(contents(&registry), saved);
}

#[test]
fn restore_makes_no_spurious_added_or_changed() {
    let mut registry = registry();
    let a = registry.spawn((Position(0.0, 0.0),));
    let b = registry.spawn((Position(1.0, 0.0),));
    let since = registry.change_tick();
    registry.advance_change_tick();
    registry.get_mut::<Position>(a).unwrap().1 = 5.0;
    let state = registry.save_state().unwrap();
    assert_eq!(state.change_tick(), registry.change_tick());

    let changed = |r: &Registry, since: ChangeTick| -> Vec<Entity> {
        r.view_since::<(Entity, &Position), Changed<Position>>(since)
            .iter()
            .map(|(e, _)| e)
            .collect()
    };
    let added = |r: &Registry, since: ChangeTick| -> Vec<Entity> {
        r.view_since::<(Entity, &Position), Added<Position>>(since)
            .iter()
            .map(|(e, _)| e)
            .collect()
    };
    assert_eq!(changed(&registry, since), vec![a]);
    assert!(added(&registry, since).is_empty());

    for _ in 0..3 {
        registry.advance_change_tick();
    }
    registry.get_mut::<Position>(b).unwrap().0 = 7.0;
    let c = registry.spawn((Position(2.0, 0.0),));
    registry.restore_state(&state).unwrap();

    assert_eq!(registry.change_tick(), state.change_tick());
    assert_eq!(changed(&registry, since), vec![a]);
    assert!(added(&registry, since).is_empty());
    assert_eq!(
        registry.pool::<Position>().unwrap().change_ticks(b),
        Some((since, since))
    );
    assert!(!registry.is_alive(c));
}

#[test]
fn removal_logs_are_restored_as_they_were() {
    let mut registry = registry();
    let e: Vec<Entity> = (0..4)
        .map(|i| registry.spawn((Position(i as f32, 0.0),)))
        .collect();
    registry.remove::<Position>(e[0]).unwrap();
    registry.despawn(e[1]).unwrap();
    let state = registry.save_state().unwrap();
    registry.remove::<Position>(e[2]).unwrap();
    registry.despawn(e[3]).unwrap();
    let mut cursor = RemovedCursor::default();
    assert_eq!(registry.removed::<Position>(&mut cursor).len(), 4);

    registry.restore_state(&state).unwrap();
    let mut fresh = RemovedCursor::default();
    let lost: Vec<Entity> = registry.removed::<Position>(&mut fresh).iter().collect();
    assert_eq!(lost, vec![e[0], e[1]]);
    // The removals after a restore are numbered from where the save was.
    registry.remove::<Position>(e[2]).unwrap();
    let lost: Vec<Entity> = registry.removed::<Position>(&mut fresh).iter().collect();
    assert_eq!(lost, vec![e[2]]);
}

#[test]
fn hierarchy_disabled_marks_and_types_registered_later() {
    let mut registry = registry();
    let root = registry.spawn((Name("root".into()),));
    let child = registry.spawn((Name("child".into()),));
    registry.set_parent(child, root).unwrap();
    registry.insert(root, Disabled).unwrap();
    let state = registry.save_state().unwrap();

    registry.remove_parent(child).unwrap();
    registry.remove::<Disabled>(root).unwrap();
    registry.register_clone::<Score>();
    registry.insert(child, Score(3)).unwrap();
    registry.restore_state(&state).unwrap();

    assert_eq!(registry.parent(child), Some(root));
    assert_eq!(registry.children(root), &[child]);
    assert!(registry.has::<(Disabled,)>(root));
    assert_eq!(
        registry.count::<Score>(),
        0,
        "a pool registered after the save is emptied"
    );
    let mut cursor = RemovedCursor::default();
    assert!(registry.removed::<Score>(&mut cursor).is_empty());
}

#[test]
fn a_save_refuses_a_pool_without_clone_by_name() {
    let mut registry = registry();
    registry.spawn((Position(0.0, 0.0), Opaque));
    let error = registry.save_state().unwrap_err();
    assert_eq!(
        error,
        StateError::NotClonable {
            component: std::any::type_name::<Opaque>().into()
        }
    );
    assert!(error.to_string().contains("register_clone"), "{error}");

    // A run-time component with a destructor: refused by its name.
    let mut registry = Registry::new();
    // SAFETY: the destructor does nothing.
    let owned =
        unsafe { ComponentDescriptor::new("Owned", Layout::new::<u64>()).with_drop(|_| {}) };
    registry.register_runtime(owned).unwrap();
    let error = registry.save_state().unwrap_err();
    assert_eq!(
        error,
        StateError::NotClonable {
            component: "Owned".into()
        }
    );
}

#[test]
fn run_time_components_of_plain_bytes_are_copied() {
    let mut registry = Registry::new();
    let id = registry
        .register_runtime(ComponentDescriptor::new("Pair", Layout::new::<[u32; 2]>()))
        .unwrap();
    let read = |r: &Registry, e: Entity| {
        // SAFETY: the pool stores aligned `[u32; 2]` values.
        r.get_raw(e, id)
            .ok()
            .map(|p| unsafe { *p.cast::<[u32; 2]>().as_ptr() })
    };
    let e: Vec<Entity> = (0..5).map(|_| registry.spawn(())).collect();
    for (i, &entity) in e.iter().enumerate() {
        let value = [i as u32, 10 * i as u32];
        // SAFETY: a valid `[u32; 2]`, plain bytes.
        unsafe { registry.insert_raw(entity, id, value.as_ptr().cast()) }.unwrap();
    }
    let state = registry.save_state().unwrap();
    assert_eq!(registry.remove_by_id(e[1], id), Ok(true));
    let other = [7u32, 7];
    // SAFETY: as above.
    unsafe { registry.insert_raw(e[2], id, other.as_ptr().cast()) }.unwrap();
    registry.restore_state(&state).unwrap();
    for (i, &entity) in e.iter().enumerate() {
        assert_eq!(read(&registry, entity), Some([i as u32, 10 * i as u32]));
    }

    // Into a fresh registry: the pool is registered under its id.
    let mut fresh = Registry::new();
    fresh.restore_state(&state).unwrap();
    assert_eq!(fresh.component_by_name("Pair"), Some(id));
    assert_eq!(read(&fresh, e[3]), Some([3, 30]));
}

#[test]
fn resources_opt_in_and_the_others_are_named() {
    let mut registry = registry();
    registry.register_resource_clone::<Score>();
    registry.insert_resource(Score(1));
    registry.insert_resource(Opaque);
    let state = registry.save_state().unwrap();
    assert_eq!(
        state.unsaved_resources(),
        &[std::any::type_name::<Opaque>()]
    );

    registry.resource_mut::<Score>().unwrap().0 = 9;
    registry.remove_resource::<Opaque>();
    registry.restore_state(&state).unwrap();
    assert_eq!(registry.resource::<Score>(), Some(&Score(1)));
    assert!(
        registry.resource::<Opaque>().is_none(),
        "unsaved resources stay as they are"
    );

    registry.remove_resource::<Score>();
    registry.restore_state(&state).unwrap();
    assert_eq!(registry.resource::<Score>(), Some(&Score(1)));
}

#[test]
fn restore_into_a_fresh_registry_and_a_mismatched_one() {
    let mut registry = registry();
    let a = registry.spawn((Position(1.0, 2.0), Name("a".into())));
    let state = registry.save_state().unwrap();

    let mut fresh = Registry::new();
    fresh.restore_state(&state).unwrap();
    assert_eq!(contents(&fresh), contents(&registry));
    assert!(fresh.is_tracking_changes::<Position>());
    fresh.advance_change_tick();
    fresh.get_mut::<Position>(a).unwrap().0 = 3.0;
    let now = fresh.change_tick();
    assert_eq!(
        fresh.pool::<Position>().unwrap().change_ticks(a).unwrap().1,
        now
    );
    assert_eq!(
        fresh.clone_entity(a).map(|e| fresh.get::<Name>(e).cloned()),
        Ok(Some(Name("a".into())))
    );

    let mut other = Registry::new();
    other.register_clone::<Name>();
    let error = other.restore_state(&state).unwrap_err();
    assert!(
        matches!(error, StateError::OtherTypes { position: 0, .. }),
        "{error}"
    );
    assert_eq!(other.count::<Name>(), 0);
}

#[test]
fn save_into_reuses_the_state_and_equals_a_fresh_save() {
    let mut registry = registry();
    let mut state = ecs_engine::RegistryState::default();
    for round in 0..3u32 {
        for i in 0..10 {
            registry.spawn((Position(i as f32, round as f32),));
        }
        registry.save_state_into(&mut state).unwrap();
        let saved = contents(&registry);
        registry.clear();
        registry.restore_state(&state).unwrap();
        assert_eq!(contents(&registry), saved);
        assert_eq!(
            state.count_by_name(std::any::type_name::<Position>()),
            Some(10 * (round as usize + 1))
        );
    }
}

#[test]
fn clone_entity_copies_clonable_components_and_refuses_others() {
    let mut registry = registry();
    registry.track_changes::<Name>();
    let parent = registry.spawn(());
    let orc = registry.spawn((Position(1.0, 1.0), Name("orc".into())));
    registry.set_parent(orc, parent).unwrap();
    registry.advance_change_tick();
    let twin = registry.clone_entity(orc).unwrap();
    assert_eq!(registry.get::<Position>(twin), Some(&Position(1.0, 1.0)));
    assert_eq!(registry.get::<Name>(twin), Some(&Name("orc".into())));
    assert_eq!(registry.parent(twin), Some(parent));
    assert_eq!(registry.children(parent), &[orc, twin]);
    let now = registry.change_tick();
    assert_eq!(
        registry.pool::<Name>().unwrap().change_ticks(twin),
        Some((now, now))
    );
    assert!(registry.clone_entity(parent).unwrap() != parent);
    assert!(
        registry.children(parent).len() == 2,
        "children are not cloned"
    );

    let secret = registry.spawn((Name("x".into()), Opaque));
    let before = registry.len();
    assert_eq!(
        registry.clone_entity(secret),
        Err(CloneEntityError::NotClonable {
            entity: secret,
            component: std::any::type_name::<Opaque>().into()
        })
    );
    assert_eq!(registry.len(), before);
    registry.despawn(secret).unwrap();
    assert_eq!(
        registry.clone_entity(secret),
        Err(CloneEntityError::Registry(EcsError::NoSuchEntity {
            entity: secret
        }))
    );
}

/// Each live entity's `Position` change ticks (added, changed), by
/// handle: what change filters see.
fn position_ticks(registry: &Registry) -> BTreeMap<Entity, (ChangeTick, ChangeTick)> {
    let pool = registry.pool::<Position>().unwrap();
    pool.entities()
        .iter()
        .map(|&e| (e, pool.change_ticks(e).unwrap()))
        .collect()
}

mod delta;
mod model;
mod ring_edges;
