//! Every error a load can give names what and where, and leaves the
//! registry exactly as it was. The JSON edits here are resealed (their
//! checksums recomputed with [`json_checksum`]), so that they reach the
//! checks behind the checksums; `integrity.rs` tests the checksums.

use ecs_engine::{AllocatorStateError, Entity, Registry};
use ecs_snapshot::{EntryKind, FORMAT_VERSION, Format, SnapshotError, Snapshots, json_checksum};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Extra(u8);

fn snapshots() -> Snapshots {
    let mut s = Snapshots::new();
    s.register::<Position>("Position")
        .unwrap()
        .register_resource::<u64>("Score")
        .unwrap();
    s
}

/// The source world: 5 entities, slot 1 free.
fn source() -> Registry {
    let mut registry = Registry::new();
    let e: Vec<Entity> = (0..5)
        .map(|i| {
            registry.spawn((Position {
                x: i as f32,
                y: 0.5,
            },))
        })
        .collect();
    registry.despawn(e[1]).unwrap();
    registry.insert_resource(12_u64);
    registry
}

/// The target of every failed load, and what it must still hold.
fn target() -> Registry {
    let mut registry = Registry::new();
    let a = registry.spawn((Position { x: -1.0, y: -2.0 }, Extra(3)));
    registry.spawn((Position { x: -3.0, y: -4.0 },));
    registry.despawn(a).unwrap();
    registry.insert_resource(99_u64);
    registry
}

fn contents(
    registry: &Registry,
) -> (
    ecs_engine::AllocatorState,
    Vec<(Entity, Position)>,
    Option<u64>,
) {
    let pool = registry.pool::<Position>().unwrap();
    (
        registry.entities().export_state(),
        pool.entities()
            .iter()
            .copied()
            .zip(pool.components().iter().copied())
            .collect(),
        registry.resource::<u64>().copied(),
    )
}

/// Loads `bytes` into the target, expects an error, checks the target is
/// untouched, returns the error.
fn failed_load(snapshots: &Snapshots, bytes: &[u8], format: Format) -> SnapshotError {
    let mut registry = target();
    let before = contents(&registry);
    let error = snapshots
        .load(&mut registry, bytes, format)
        .expect_err("the load must fail");
    assert_eq!(
        contents(&registry),
        before,
        "a failed load changed the registry ({error})"
    );
    error
}

/// Recomputes every checksum of a JSON document, as the format documents
/// them.
fn reseal(document: &mut Value) {
    for entry in document["components"].as_array_mut().unwrap() {
        let covered = json!([entry["name"], entry["entities"], entry["values"]]);
        entry["checksum"] = json!(json_checksum(&covered));
    }
    for entry in document["resources"].as_array_mut().unwrap() {
        let covered = json!([entry["name"], entry["value"]]);
        entry["checksum"] = json!(json_checksum(&covered));
    }
    let hierarchy = document.get("hierarchy").cloned().unwrap_or(Value::Null);
    let covered = json!([document["version"], document["entities"], hierarchy]);
    document["checksum"] = json!(json_checksum(&covered));
}

/// The source saved as JSON, edited, resealed, loaded.
fn edited_json(edit: impl FnOnce(&mut Value)) -> SnapshotError {
    let snapshots = snapshots();
    let bytes = snapshots.save(&source(), Format::Json).unwrap();
    let mut document: Value = serde_json::from_slice(&bytes).unwrap();
    edit(&mut document);
    reseal(&mut document);
    failed_load(
        &snapshots,
        &serde_json::to_vec(&document).unwrap(),
        Format::Json,
    )
}

#[test]
fn unknown_component_and_resource_names() {
    let mut more = snapshots();
    more.register::<Extra>("Extra")
        .unwrap()
        .register_resource::<String>("Title")
        .unwrap();
    let mut world = source();
    let e = world.spawn((Extra(1),));
    world.insert(e, Position { x: 0.0, y: 0.0 }).unwrap();
    for format in [Format::Json, Format::Postcard] {
        let bytes = more.save(&world, format).unwrap();
        let error = failed_load(&snapshots(), &bytes, format);
        assert!(
            matches!(&error, SnapshotError::UnknownName { kind: EntryKind::Component, name, entry: 1 } if name == "Extra"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "component entry 1: unknown name `Extra` (register it before loading)"
        );
        world.remove::<Extra>(e).unwrap();
        world.insert_resource(String::from("t"));
        let bytes = more.save(&world, format).unwrap();
        let error = failed_load(&snapshots(), &bytes, format);
        assert!(
            matches!(&error, SnapshotError::UnknownName { kind: EntryKind::Resource, name, entry: 1 } if name == "Title"),
            "{error:?}"
        );
        world.remove_resource::<String>();
        world.insert(e, Extra(1)).unwrap();
    }
}

#[test]
fn truncated_json_names_line_and_column() {
    let snapshots = snapshots();
    let bytes = snapshots.save(&source(), Format::Json).unwrap();
    let mut len = bytes.len() * 2 / 3;
    while bytes[len - 1].is_ascii_whitespace() {
        len -= 1;
    }
    let cut = &bytes[..len];
    let error = failed_load(&snapshots, cut, Format::Json);
    let SnapshotError::Json { source } = &error else {
        panic!("{error:?}");
    };
    assert!(source.is_eof());
    assert!(source.line() > 1 && source.column() > 0);
    assert!(
        error
            .to_string()
            .contains(&format!("line {}", source.line())),
        "{error}"
    );
    // Not JSON at all.
    let error = failed_load(&snapshots, b"\x00\x01garbage", Format::Json);
    assert!(matches!(error, SnapshotError::Json { .. }), "{error:?}");
}

#[test]
fn truncated_or_padded_postcard() {
    let snapshots = snapshots();
    let bytes = snapshots.save(&source(), Format::Postcard).unwrap();
    // Cut in the entities, and in the closing checksum (its 4 bytes).
    for (len, part, offset) in [
        (1, "the document's checksum", 1),
        (12, "the entities", 6),
        (bytes.len() - 1, "the file's checksum", bytes.len() - 4),
    ] {
        let error = failed_load(&snapshots, &bytes[..len], Format::Postcard);
        assert!(
            matches!(&error, SnapshotError::PostcardAt { part: p, offset: o, damaged: true, .. } if p == part && *o == offset),
            "cut at {len}: {error:?}"
        );
        assert!(
            error.to_string().contains("damaged or cut short"),
            "{error}"
        );
    }
    // Empty: the version is missing, at byte 0.
    let error = failed_load(&snapshots, &[], Format::Postcard);
    assert!(
        matches!(&error, SnapshotError::PostcardAt { part, offset: 0, .. } if part == "the format version"),
        "{error:?}"
    );
    let mut padded = bytes.clone();
    padded.extend_from_slice(&[7, 7]);
    let error = failed_load(&snapshots, &padded, Format::Postcard);
    assert!(
        matches!(error, SnapshotError::TrailingBytes { offset, count: 2 } if offset == bytes.len()),
        "{error:?}"
    );
}

#[test]
fn version_mismatch_names_found_and_expected() {
    let error = edited_json(|d| d["version"] = json!(7));
    assert!(
        matches!(
            error,
            SnapshotError::Version {
                found: 7,
                expected: FORMAT_VERSION
            }
        ),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "snapshot format version 7, but this build reads version 3"
    );
    let snapshots = snapshots();
    let mut bytes = snapshots.save(&source(), Format::Postcard).unwrap();
    assert_eq!(bytes[0], FORMAT_VERSION as u8);
    // A version 2 file (no engine section) is refused as such.
    bytes[0] = 2;
    let error = failed_load(&snapshots, &bytes, Format::Postcard);
    assert!(
        matches!(
            error,
            SnapshotError::Version {
                found: 2,
                expected: 3
            }
        ),
        "{error:?}"
    );
}

#[test]
fn values_that_do_not_fit_name_the_entry() {
    let error = edited_json(|d| d["components"][0]["values"][2]["x"] = json!("fast"));
    assert!(
        matches!(&error, SnapshotError::Value { kind: EntryKind::Component, name, entry: 0, .. } if name == "Position"),
        "{error:?}"
    );
    assert!(error.to_string().contains("Position"), "{error}");
    let error = edited_json(|d| d["resources"][0]["value"] = json!(-1));
    assert!(
        matches!(&error, SnapshotError::Value { kind: EntryKind::Resource, name, entry: 0, .. } if name == "Score"),
        "{error:?}"
    );
}

#[test]
fn entities_that_do_not_fit_name_the_item() {
    let error = edited_json(|d| {
        d["components"][0]["entities"].as_array_mut().unwrap().pop();
    });
    assert!(
        matches!(
            error,
            SnapshotError::CountMismatch {
                entry: 0,
                values: 4,
                entities: 3,
                ..
            }
        ),
        "{error:?}"
    );
    // Slot 1 is free in the source.
    let error = edited_json(|d| d["components"][0]["entities"][2] = json!(1));
    assert!(
        matches!(&error, SnapshotError::DeadEntity { name, entry: 0, item: 2, index: 1 } if name == "Position"),
        "{error:?}"
    );
    let error = edited_json(|d| d["components"][0]["entities"][3] = json!(0));
    assert!(
        matches!(
            error,
            SnapshotError::DuplicateEntity {
                entry: 0,
                item: 3,
                index: 0,
                ..
            }
        ),
        "{error:?}"
    );
    let error = edited_json(|d| d["components"][0]["entities"] = json!([0, 2, 3, 4, 0, 0]));
    assert!(
        matches!(&error, SnapshotError::ListTooLong { list, count: 6, slots: 5 } if list == "component `Position` (entry 0)"),
        "{error:?}"
    );
    let error = edited_json(|d| d["entities"]["free"] = json!([1, 1, 1, 1, 1, 1]));
    assert!(
        matches!(&error, SnapshotError::ListTooLong { list, count: 6, slots: 5 } if list == "entities.free"),
        "{error:?}"
    );
    let error = edited_json(|d| {
        let entry = d["components"][0].clone();
        d["components"].as_array_mut().unwrap().push(entry);
    });
    assert!(
        matches!(
            error,
            SnapshotError::DuplicateEntry {
                kind: EntryKind::Component,
                first: 0,
                entry: 1,
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn inconsistent_allocator_state() {
    let error = edited_json(|d| d["entities"]["generations"][3] = json!(0));
    assert!(
        matches!(
            error,
            SnapshotError::Allocator {
                source: AllocatorStateError::ZeroGeneration { index: 3 }
            }
        ),
        "{error:?}"
    );
    let error = edited_json(|d| d["entities"]["free"] = json!([1, 1]));
    assert!(
        matches!(
            error,
            SnapshotError::Allocator {
                source: AllocatorStateError::DuplicateSlot { index: 1, .. }
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("slot 1"), "{error}");
}

#[test]
fn an_unregistered_or_broken_hierarchy() {
    let mut with = snapshots();
    with.register_hierarchy();
    let mut world = source();
    let (a, b) = (world.spawn(()), world.spawn(()));
    world.set_parent(b, a).unwrap();
    for format in [Format::Json, Format::Postcard] {
        let bytes = with.save(&world, format).unwrap();
        let error = failed_load(&snapshots(), &bytes, format);
        assert!(
            matches!(error, SnapshotError::HierarchyNotRegistered),
            "{error:?}"
        );
    }
    let bytes = with.save(&world, Format::Json).unwrap();
    let mut document: Value = serde_json::from_slice(&bytes).unwrap();
    // b listed under a, but linked to itself: a cycle and a mismatch.
    document["hierarchy"]["links"][0][1] = document["hierarchy"]["links"][0][0].clone();
    reseal(&mut document);
    let error = failed_load(&with, &serde_json::to_vec(&document).unwrap(), Format::Json);
    assert!(
        matches!(error, SnapshotError::Hierarchy { source: ecs_engine::HierarchyStateError::Mismatch { child, parent } } if child == b && parent == a),
        "{error:?}"
    );
}

#[test]
fn duplicate_registrations_are_refused() {
    let mut s = snapshots();
    let error = s.register::<Extra>("Position").unwrap_err();
    assert!(matches!(
        error,
        SnapshotError::DuplicateName {
            kind: EntryKind::Component,
            ..
        }
    ));
    let error = s.register::<Position>("Pos").unwrap_err();
    assert!(
        matches!(&error, SnapshotError::DuplicateType { name, .. } if name == "Position"),
        "{error:?}"
    );
    let error = s.register_resource::<u64>("Other").unwrap_err();
    assert!(matches!(
        error,
        SnapshotError::DuplicateType {
            kind: EntryKind::Resource,
            ..
        }
    ));
    let error = s.register_resource::<u8>("Score").unwrap_err();
    assert!(matches!(
        error,
        SnapshotError::DuplicateName {
            kind: EntryKind::Resource,
            ..
        }
    ));
    // A resource may share a component's name.
    s.register_resource::<Position>("Position").unwrap();
    assert_eq!(s.component_names().collect::<Vec<_>>(), ["Position"]);
    assert_eq!(
        s.resource_names().collect::<Vec<_>>(),
        ["Score", "Position"]
    );
}
