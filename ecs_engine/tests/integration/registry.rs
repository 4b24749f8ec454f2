//! Entities, components, errors, resources and drop counting.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ecs_engine::{EcsError, Entity, EntityAllocator, Registry};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(f32, f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(f32, f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Marker;

/// Counts how many values were made and how many dropped.
#[derive(Debug, Default, Clone)]
struct DropLog(Arc<(AtomicUsize, AtomicUsize)>);

impl DropLog {
    fn make(&self, tag: u32) -> Tracked {
        self.0.0.fetch_add(1, Ordering::SeqCst);
        Tracked(tag, self.clone())
    }
    fn dropped(&self) -> usize {
        self.0.1.load(Ordering::SeqCst)
    }
    fn live(&self) -> usize {
        self.0.0.load(Ordering::SeqCst) - self.dropped()
    }
}

#[derive(Debug)]
struct Tracked(u32, DropLog);

impl Drop for Tracked {
    fn drop(&mut self) {
        self.1.0.1.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn stale_handle_after_reuse_sees_nothing() {
    let mut registry = Registry::new();
    let old = registry.spawn((Position(1.0, 1.0),));
    registry.despawn(old).unwrap();
    let new = registry.spawn((Position(2.0, 2.0),));
    assert_eq!(new.index(), old.index());
    assert_eq!(new.generation(), old.generation() + 1);

    assert!(!registry.is_alive(old));
    assert_eq!(registry.get::<Position>(old), None);
    assert_eq!(registry.get_mut::<Position>(old), None);
    assert!(!registry.has::<(Position,)>(old));
    assert_eq!(
        registry.insert(old, Velocity(0.0, 0.0)),
        Err(EcsError::NoSuchEntity { entity: old })
    );
    assert_eq!(
        registry.remove::<Position>(old),
        Err(EcsError::NoSuchEntity { entity: old })
    );
    assert_eq!(
        registry.despawn(old),
        Err(EcsError::NoSuchEntity { entity: old })
    );
    assert_eq!(
        registry.component::<Position>(old),
        Err(EcsError::NoSuchEntity { entity: old })
    );
    // The new owner is untouched.
    assert_eq!(registry.get::<Position>(new), Some(&Position(2.0, 2.0)));
    assert_eq!(registry.count::<Velocity>(), 0);
}

#[test]
fn fifo_reuse_order_through_the_registry() {
    let mut registry = Registry::new();
    let handles: Vec<Entity> = (0..5).map(|_| registry.spawn_empty()).collect();
    for &i in &[3, 1, 4] {
        registry.despawn(handles[i]).unwrap();
    }
    let indices: Vec<u32> = (0..4).map(|_| registry.spawn_empty().index()).collect();
    assert_eq!(indices, vec![3, 1, 4, 5]);
}

#[test]
fn generation_retirement_with_small_limit() {
    let allocator = EntityAllocator::new().with_max_generation(NonZeroU32::new(2).unwrap());
    let mut registry = Registry::with_allocator(allocator);
    let first = registry.spawn((Marker,));
    registry.despawn(first).unwrap();
    let second = registry.spawn((Marker,));
    assert_eq!((second.index(), second.generation()), (0, 2));
    registry.despawn(second).unwrap();
    let third = registry.spawn((Marker,));
    assert_eq!((third.index(), third.generation()), (1, 1));
    assert_eq!(registry.entities().retired(), 1);
    assert!(!registry.is_alive(first) && !registry.is_alive(second));
}

#[test]
fn unknown_and_far_handles_are_not_alive() {
    let mut registry = Registry::new();
    registry.spawn((Position(0.0, 0.0),));
    let far = Entity::from_bits((1 << 32) | 4_000_000_000).unwrap();
    for e in [Entity::NULL, far, Entity::from_bits(7 << 32).unwrap()] {
        assert!(!registry.is_alive(e));
        assert_eq!(registry.get::<Position>(e), None);
        assert!(registry.despawn(e).is_err());
        assert!(registry.insert(e, Marker).is_err());
        assert!(!registry.has::<()>(e));
    }
}

#[test]
fn live_limit_is_an_error_not_a_panic() {
    let mut registry = Registry::with_allocator(EntityAllocator::new().with_max_live(2));
    registry.spawn((Marker,));
    registry.spawn((Marker,));
    assert_eq!(
        registry.try_spawn((Marker,)),
        Err(EcsError::TooManyEntities { limit: 2 })
    );
    assert_eq!(registry.len(), 2);
    assert_eq!(registry.count::<Marker>(), 2);
}

#[test]
fn insert_replaces_and_try_insert_refuses() {
    let mut registry = Registry::new();
    let e = registry.spawn((Position(1.0, 0.0),));
    assert_eq!(
        registry.insert(e, Position(2.0, 0.0)),
        Ok(Some(Position(1.0, 0.0)))
    );
    assert_eq!(registry.insert(e, Velocity(1.0, 1.0)), Ok(None));
    let refused = registry.try_insert(e, Position(3.0, 0.0)).unwrap_err();
    assert_eq!(
        refused.error,
        EcsError::ComponentExists {
            entity: e,
            component: std::any::type_name::<Position>().into()
        }
    );
    assert_eq!(refused.value, Position(3.0, 0.0));
    assert_eq!(registry.get::<Position>(e), Some(&Position(2.0, 0.0)));
    *registry.try_insert(e, Marker).unwrap() = Marker;
    assert!(registry.has::<(Position, Velocity, Marker)>(e));
}

#[test]
fn checked_accessor_names_entity_and_type() {
    let mut registry = Registry::new();
    let e = registry.spawn((Position(1.0, 0.0),));
    let err = registry.component::<Velocity>(e).unwrap_err();
    assert_eq!(
        err,
        EcsError::MissingComponent {
            entity: e,
            component: std::any::type_name::<Velocity>().into()
        }
    );
    let message = err.to_string();
    assert!(
        message.contains("0:1") && message.contains("Velocity"),
        "{message}"
    );
    registry.component_mut::<Position>(e).unwrap().0 = 5.0;
    assert_eq!(registry.component::<Position>(e), Ok(&Position(5.0, 0.0)));
}

#[test]
fn bundles_up_to_twelve_and_remove_bundle() {
    let mut registry = Registry::new();
    let e = registry.spawn((
        1u8, 2u16, 3u32, 4u64, 5i8, 6i16, 7i32, 8i64, 9f32, 10f64, 'k', 12u128,
    ));
    assert!(registry.has::<(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, char, u128)>(e));
    assert_eq!(registry.get::<char>(e), Some(&'k'));
    registry.remove_bundle::<(u8, u16, char)>(e).unwrap();
    assert!(!registry.has::<(u8,)>(e));
    assert!(registry.has::<(u32, u128)>(e));
    assert_eq!(registry.remove::<u32>(e), Ok(3));
    assert!(registry.remove::<u32>(e).is_err());
    registry
        .insert_bundle(e, (Position(0.0, 0.0), Marker))
        .unwrap();
    assert!(registry.has::<(Position, Marker, i64)>(e));
}

#[test]
fn pools_and_counts() {
    let mut registry = Registry::new();
    let a = registry.spawn((Position(1.0, 1.0), Velocity(0.0, 0.0)));
    let b = registry.spawn((Position(2.0, 2.0),));
    let pool = registry.pool::<Position>().unwrap();
    assert_eq!(pool.entities(), &[a, b]);
    assert_eq!(pool.components().len(), pool.entities().len());
    assert_eq!(registry.count::<Position>(), 2);
    assert_eq!(registry.count::<Velocity>(), 1);
    assert!(registry.pool::<Marker>().is_none());
    let id = registry.register::<Marker>();
    assert_eq!(registry.count_id(id), 0);
    assert_eq!(registry.view::<&Marker>().count(), 0);
    assert_eq!(registry.component_info(id).unwrap().layout().size(), 0);
}

#[test]
fn resources_hold_one_value_per_type() {
    #[derive(Debug, PartialEq)]
    struct Score(u32);
    let mut registry = Registry::new();
    assert_eq!(registry.resource::<Score>(), None);
    assert_eq!(registry.insert_resource(Score(1)), None);
    assert_eq!(registry.insert_resource(Score(2)), Some(Score(1)));
    registry.resource_mut::<Score>().unwrap().0 += 1;
    assert_eq!(registry.resource::<Score>(), Some(&Score(3)));
    assert!(registry.contains_resource::<Score>());
    assert_eq!(registry.remove_resource::<Score>(), Some(Score(3)));
    assert_eq!(registry.remove_resource::<Score>(), None);
    let cell = registry.cell();
    assert_eq!(
        cell.resource::<Score>().err(),
        Some(EcsError::MissingResource {
            resource: std::any::type_name::<Score>()
        })
    );
}

#[test]
fn drop_runs_once_on_every_path() {
    let log = DropLog::default();
    let mut registry = Registry::new();
    let e: Vec<Entity> = (0..6).map(|i| registry.spawn((log.make(i),))).collect();

    let removed = registry.remove::<Tracked>(e[0]).unwrap();
    assert_eq!(log.dropped(), 0);
    drop(removed);
    assert_eq!(log.dropped(), 1);

    let replaced = registry.insert(e[1], log.make(10)).unwrap();
    assert_eq!(replaced.map(|t| t.0), Some(1));
    assert_eq!(log.dropped(), 2);

    registry.despawn(e[2]).unwrap();
    assert_eq!(log.dropped(), 3);

    assert!(registry.try_insert(e[3], log.make(11)).is_err());
    assert_eq!(log.dropped(), 4); // the refused value, dropped with the error

    assert!(registry.insert(e[2], log.make(12)).is_err());
    assert_eq!(log.dropped(), 5); // value aimed at a dead entity

    registry.insert_bundle(e[4], (log.make(13),)).unwrap();
    assert_eq!(log.dropped(), 6); // the old component of e[4]

    registry.clear();
    assert_eq!(log.live(), 0);
    assert_eq!(registry.len(), 0);

    for i in 0..3 {
        registry.spawn((log.make(20 + i),));
    }
    drop(registry);
    assert_eq!(log.live(), 0);
}

#[test]
fn retained_and_visited_drops_are_counted() {
    let log = DropLog::default();
    let mut registry = Registry::new();
    for i in 0..10 {
        registry.spawn((log.make(i), Position(i as f32, 0.0)));
    }
    let despawned = registry.retain::<&Tracked>(|t| t.0 % 2 == 0);
    assert_eq!(despawned, 5);
    assert_eq!(log.live(), 5);
    registry.visit::<(&Tracked, &Position)>(|_, (t, _), changes| {
        if t.0 == 4 {
            changes.remove::<Tracked>();
        }
    });
    assert_eq!(log.live(), 4);
    assert_eq!(registry.count::<Position>(), 5);
}

#[test]
fn visit_counts_only_changes_that_took_effect() {
    let mut registry = Registry::new();
    for i in 0..5u32 {
        registry.spawn((Position(i as f32, 0.0), Velocity(0.0, 0.0)));
    }
    let applied = registry.visit::<&Position>(|_, p, changes| {
        if (p.0 as u32).is_multiple_of(2) {
            changes.despawn();
            changes.remove::<Velocity>(); // after the despawn: no effect
            changes.remove::<Marker>(); // never had one: no effect
        } else {
            changes.remove::<Velocity>();
        }
    });
    assert_eq!(applied, 3 + 2);
    assert_eq!(registry.len(), 2);
    assert_eq!(registry.count::<Velocity>(), 0);
}

#[test]
fn bundles_naming_a_type_twice_are_refused_everywhere() {
    let mut registry = Registry::new();
    let e = registry.spawn((Position(1.0, 1.0),));
    let twice = || EcsError::DuplicateBundleComponent {
        bundle: std::any::type_name::<(Position, Velocity, Position)>().into(),
        component: std::any::type_name::<Position>().into(),
    };
    let (len, slots) = (registry.len(), registry.entities().slot_count());
    let bundle = (Position(2.0, 2.0), Velocity(0.0, 0.0), Position(3.0, 3.0));
    assert_eq!(registry.try_spawn(bundle), Err(twice()));
    assert_eq!(
        (registry.len(), registry.entities().slot_count()),
        (len, slots)
    );
    let bundle = (Position(2.0, 2.0), Velocity(0.0, 0.0), Position(3.0, 3.0));
    assert_eq!(registry.insert_bundle(e, bundle), Err(twice()));
    assert_eq!(registry.get::<Position>(e), Some(&Position(1.0, 1.0)));
    assert_eq!(registry.get::<Velocity>(e), None);
    // Reserved handles of refused spawns are given back.
    let mut reserved = Vec::new();
    registry.reserve_entities(2, &mut reserved).unwrap();
    let bundle = (Position(2.0, 2.0), Velocity(0.0, 0.0), Position(3.0, 3.0));
    assert_eq!(registry.spawn_reserved(reserved[0], bundle), Err(twice()));
    assert!(!registry.entities().is_reserved(reserved[0]));
    let mut bundles = [(Position(4.0, 4.0), Velocity(0.0, 0.0), Position(5.0, 5.0))].into_iter();
    let refused = registry.spawn_reserved_batch(&reserved[1..], &mut bundles);
    assert_eq!(refused, Err((0, twice())));
    assert!(!registry.entities().is_reserved(reserved[1]));
    assert_eq!(registry.count::<Position>(), 1);
    // A type list may name a type twice: it is only asked about.
    assert!(registry.has::<(Position, Position)>(e));
}

#[test]
fn tuples_entities_and_strs_are_refused_as_components() {
    let mut registry = Registry::new();
    let e = registry.spawn((Marker,));
    let refused = |kind: &str| match registry_error(kind) {
        EcsError::NotAComponent { component, reason } => (component, reason),
        other => panic!("{other:?}"),
    };
    fn registry_error(kind: &str) -> EcsError {
        let mut registry = Registry::new();
        let e = registry.spawn(());
        let result = match kind {
            "nested" => registry.try_spawn(((Position(1.0, 1.0), Velocity(0.0, 0.0)), Marker)),
            "entity" => registry.try_spawn((Entity::NULL, Marker)),
            "str" => registry.try_spawn((Marker, "name")),
            "unit" => registry.insert(e, ()).map(|_| e),
            "pair" => registry.insert(e, (1_u8, 2_u8)).map(|_| e),
            _ => unreachable!(),
        };
        // Nothing changed: no entity spawned, no pool created.
        assert_eq!(registry.len(), 1, "{kind}");
        assert_eq!(registry.component_types(), 0, "{kind}");
        result.unwrap_err()
    }
    let (component, reason) = refused("nested");
    assert_eq!(component, std::any::type_name::<(Position, Velocity)>());
    assert!(reason.contains("bundles do not nest"), "{reason}");
    let (component, reason) = refused("entity");
    assert_eq!(component, std::any::type_name::<Entity>());
    assert!(reason.contains("handle"), "{reason}");
    assert_eq!(refused("str").0, "&str");
    assert_eq!(refused("unit").0, "()");
    assert_eq!(refused("pair").0, "(u8, u8)");
    // Every other path refuses them too, and the message names the type.
    let error = registry.try_insert(e, (1_u8,)).unwrap_err().error;
    assert_eq!(
        error.to_string(),
        "`(u8,)` cannot be a component: a tuple is a bundle, and bundles do not nest; \
         list its components in the outer tuple (`(A, B, C)`, not `((A, B), C)`)"
    );
    let mut items = [(e, Entity::NULL)].into_iter();
    let (done, stop) = registry.insert_many(&mut items);
    assert_eq!(done, 0);
    assert!(matches!(
        stop.unwrap_err().error,
        EcsError::NotAComponent { .. }
    ));
    let error = registry
        .insert_bundle(e, (Velocity(0.0, 0.0), "x"))
        .unwrap_err();
    assert!(matches!(error, EcsError::NotAComponent { .. }), "{error}");
    assert_eq!(registry.get::<Velocity>(e), None);
    let mut pool = registry.pool_mut::<&'static str>();
    assert!(matches!(
        pool.insert(e, "x"),
        Err(EcsError::NotAComponent { .. })
    ));
    // A wrapper type is a component; a type list may still name a tuple.
    struct Name(&'static str);
    registry.insert(e, Name("ok")).unwrap();
    assert_eq!(registry.get::<Name>(e).map(|n| n.0), Some("ok"));
    assert!(!registry.has::<((u8, u8),)>(e));
}

#[test]
#[should_panic(expected = "holds component")]
fn spawn_panics_on_a_bundle_naming_a_type_twice() {
    Registry::new().spawn((Marker, Marker));
}
