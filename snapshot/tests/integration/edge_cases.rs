//! Review of snapshots: values JSON cannot hold, change tracking across a
//! load, the next handle, a save of an empty world.

use ecs_engine::{Added, Entity, Registry, RemovedCursor};
use ecs_snapshot::{Format, Snapshots};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Position {
    x: f32,
    y: f32,
}

fn snapshots() -> Snapshots {
    let mut s = Snapshots::new();
    s.register::<Position>("Position").unwrap();
    s.register_disabled().unwrap();
    s
}

#[test]
fn a_non_finite_float_does_not_make_an_unloadable_json_file() {
    let mut registry = Registry::new();
    registry.spawn((Position {
        x: f32::NAN,
        y: f32::INFINITY,
    },));
    let s = snapshots();
    match s.save(&registry, Format::Json) {
        // Refused at save: fine, if the error names the entry.
        Err(e) => assert!(e.to_string().contains("Position"), "{e}"),
        // Saved: it must load back.
        Ok(bytes) => {
            let mut copy = Registry::new();
            s.load(&mut copy, &bytes, Format::Json)
                .expect("a saved snapshot loads");
        }
    }
}

#[test]
fn non_finite_floats_round_trip_in_postcard() {
    let mut registry = Registry::new();
    let e = registry.spawn((Position {
        x: f32::NAN,
        y: f32::NEG_INFINITY,
    },));
    let s = snapshots();
    let bytes = s.save(&registry, Format::Postcard).unwrap();
    let mut copy = Registry::new();
    s.load(&mut copy, &bytes, Format::Postcard).unwrap();
    let p = copy.get::<Position>(e).unwrap();
    assert!(p.x.is_nan() && p.y == f32::NEG_INFINITY);
}

#[test]
fn tracking_survives_a_load_and_loaded_components_are_added() {
    let mut source = Registry::new();
    let e: Vec<Entity> = (0..3)
        .map(|i| {
            source.spawn((Position {
                x: i as f32,
                y: 0.0,
            },))
        })
        .collect();
    let s = snapshots();
    let bytes = s.save(&source, Format::Postcard).unwrap();

    let mut target = Registry::new();
    target.track_changes::<Position>();
    let old = target.spawn((Position { x: 9.0, y: 9.0 },));
    let mut cursor = RemovedCursor::default();
    let since = target.change_tick();
    target.advance_change_tick();
    s.load(&mut target, &bytes, Format::Postcard).unwrap();
    assert!(target.is_tracking_changes::<Position>());
    let added: Vec<Entity> = target
        .view_since::<Entity, Added<Position>>(since)
        .iter()
        .collect();
    assert_eq!(added, e);
    // The replaced world's component is reported removed.
    let lost: Vec<Entity> = target.removed::<Position>(&mut cursor).iter().collect();
    assert_eq!(lost, vec![old]);
}

#[test]
fn next_handle_and_disabled_after_a_load() {
    let mut source = Registry::new();
    let e: Vec<Entity> = (0..4)
        .map(|i| {
            source.spawn((Position {
                x: i as f32,
                y: 0.0,
            },))
        })
        .collect();
    source.despawn(e[2]).unwrap();
    source.despawn(e[0]).unwrap();
    source.disable(e[3]).unwrap();
    let s = snapshots();
    for format in [Format::Json, Format::Postcard] {
        let bytes = s.save(&source, format).unwrap();
        let mut copy = Registry::new();
        copy.spawn((Position { x: 0.0, y: 0.0 },));
        s.load(&mut copy, &bytes, format).unwrap();
        assert!(copy.is_disabled(e[3]));
        assert_eq!(copy.view::<Entity>().iter().collect::<Vec<_>>(), vec![e[1]]);
        let mut again = Registry::new();
        s.load(&mut again, &bytes, format).unwrap();
        let mut original = Registry::new();
        s.load(&mut original, &bytes, format).unwrap();
        let (a, b) = (copy.spawn_empty(), source_clone_next(&source));
        assert_eq!(a, b);
    }
}

/// The handle the source registry would give next, without changing it.
fn source_clone_next(source: &Registry) -> Entity {
    let mut alloc =
        ecs_engine::EntityAllocator::from_state(source.entities().export_state()).unwrap();
    alloc.allocate().unwrap()
}

#[test]
fn an_empty_world_round_trips() {
    let s = snapshots();
    for format in [Format::Json, Format::Postcard] {
        let bytes = s.save(&Registry::new(), format).unwrap();
        let mut copy = Registry::new();
        let old = copy.spawn((Position { x: 1.0, y: 1.0 },));
        s.load(&mut copy, &bytes, format).unwrap();
        assert!(!copy.is_alive(old));
        assert_eq!(copy.len(), 0);
        assert_eq!(copy.count::<Position>(), 0);
    }
}

#[test]
fn garbage_and_empty_inputs_are_errors_that_leave_the_registry() {
    let s = snapshots();
    let mut copy = Registry::new();
    let a = copy.spawn((Position { x: 1.0, y: 2.0 },));
    for format in [Format::Json, Format::Postcard] {
        for bytes in [&b""[..], b"\xff\xff\xff\xff\xff\xff", b"{}", b"[]", b"null"] {
            let error = s.load(&mut copy, bytes, format).unwrap_err();
            assert!(!error.to_string().is_empty());
            assert_eq!(copy.get::<Position>(a), Some(&Position { x: 1.0, y: 2.0 }));
        }
    }
}

#[test]
fn json_read_as_postcard_says_so() {
    let s = snapshots();
    let bytes = s.save(&Registry::new(), Format::Json).unwrap();
    let error = s
        .load(&mut Registry::new(), &bytes, Format::Postcard)
        .unwrap_err();
    assert!(
        error.to_string().contains("JSON snapshot read as postcard"),
        "{error}"
    );
}

#[test]
fn a_non_finite_resource_is_refused_in_json() {
    let mut s = snapshots();
    s.register_resource::<f64>("Gravity").unwrap();
    let mut registry = Registry::new();
    registry.insert_resource(f64::NAN);
    let error = s.save(&registry, Format::Json).unwrap_err();
    assert!(error.to_string().contains("Gravity"), "{error}");
    assert!(s.save(&registry, Format::Postcard).is_ok());
}
