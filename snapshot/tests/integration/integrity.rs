//! The checksums: a damaged or hand-edited snapshot is refused, naming
//! the part (and, in postcard, its bytes), before any value is decoded;
//! unknown keys are refused; spacing and key order in JSON do not matter.

use ecs_engine::{Entity, Registry};
use ecs_snapshot::{Format, SnapshotError, Snapshots};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Position {
    x: f32,
    y: f32,
}

fn snapshots() -> Snapshots {
    let mut s = Snapshots::new();
    s.register::<Position>("Position")
        .unwrap()
        .register_resource::<u64>("Score")
        .unwrap()
        .register_hierarchy();
    s
}

/// Four entities at x = 0, 1, 2, 3 (y = 0.5), slot 1 free, a parent and
/// a child, a score.
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
    registry.set_parent(e[3], e[2]).unwrap();
    registry.insert_resource(12_u64);
    registry
}

/// Loads into a fresh target that must not change; returns the error.
fn refused(bytes: &[u8], format: Format) -> SnapshotError {
    let mut registry = Registry::new();
    let kept = registry.spawn((Position { x: 9.0, y: 9.0 },));
    let error = snapshots()
        .load(&mut registry, bytes, format)
        .expect_err("the load must fail");
    assert_eq!(registry.len(), 1, "{error}");
    assert_eq!(
        registry.get::<Position>(kept),
        Some(&Position { x: 9.0, y: 9.0 })
    );
    error
}

fn json() -> Value {
    let bytes = snapshots().save(&source(), Format::Json).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn an_edited_json_value_is_refused_naming_its_entry() {
    let mut document = json();
    document["components"][0]["values"][2]["x"] = serde_json::json!(7.0);
    let error = refused(&serde_json::to_vec(&document).unwrap(), Format::Json);
    assert!(
        matches!(&error, SnapshotError::Checksum { part, bytes: None } if part == "component `Position` (entry 0)"),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "snapshot damaged: component `Position` (entry 0) does not match its checksum \
         (the file was damaged, or edited by hand)"
    );
    let mut document = json();
    document["resources"][0]["value"] = serde_json::json!(13);
    let error = refused(&serde_json::to_vec(&document).unwrap(), Format::Json);
    assert!(
        matches!(&error, SnapshotError::Checksum { part, .. } if part == "resource `Score` (entry 0)"),
        "{error:?}"
    );
    for edit in ["entities", "hierarchy"] {
        let mut document = json();
        match edit {
            "entities" => document["entities"]["max_live"] = serde_json::json!(3),
            _ => document["hierarchy"]["links"] = serde_json::json!([]),
        }
        let error = refused(&serde_json::to_vec(&document).unwrap(), Format::Json);
        assert!(
            matches!(&error, SnapshotError::Checksum { part, .. } if part == "the entities or the hierarchy"),
            "{edit}: {error:?}"
        );
    }
}

#[test]
fn spacing_and_key_order_do_not_matter_in_json() {
    let document = json();
    // Compact, keys in serde_json's order (sorted, or as read).
    let compact = serde_json::to_vec(&document).unwrap();
    let mut loaded = Registry::new();
    snapshots()
        .load(&mut loaded, &compact, Format::Json)
        .unwrap();
    assert_eq!(loaded.len(), 4);
    // A value's keys swapped by hand, and extra spaces.
    let pretty = String::from_utf8(snapshots().save(&source(), Format::Json).unwrap()).unwrap();
    let swapped = pretty
        .replacen("\"x\": 0.0,\n", "\"y\": 0.5,\n", 1)
        .replacen("\"y\": 0.5\n", "\"x\": 0.0\n", 1);
    assert_ne!(swapped, pretty);
    let spaced = swapped.replace(": ", " :  ");
    snapshots()
        .load(&mut Registry::new(), spaced.as_bytes(), Format::Json)
        .unwrap();
}

#[test]
fn unknown_keys_are_refused_a_misspelt_hierarchy_included() {
    let text = String::from_utf8(snapshots().save(&source(), Format::Json).unwrap()).unwrap();
    assert!(text.contains("\"hierarchy\": {"), "{text}");
    let misspelt = text.replace("\"hierarchy\"", "\"hierarchi\"");
    let error = refused(misspelt.as_bytes(), Format::Json);
    assert!(matches!(error, SnapshotError::Json { .. }), "{error:?}");
    assert!(
        error.to_string().contains("unknown field `hierarchi`"),
        "{error}"
    );
    for (from, to) in [
        ("\"max_live\"", "\"max_lives\""),
        ("\"values\"", "\"valeus\""),
        ("\"links\"", "\"link\""),
    ] {
        let error = refused(text.replacen(from, to, 1).as_bytes(), Format::Json);
        assert!(
            error.to_string().contains("unknown field")
                || error.to_string().contains("missing field"),
            "{from}: {error}"
        );
    }
}

#[test]
fn a_damaged_postcard_entry_is_named_with_its_bytes() {
    let bytes = snapshots().save(&source(), Format::Postcard).unwrap();
    // The x of the entity at slot 2: 2.0f32, little-endian.
    let at = bytes
        .windows(4)
        .position(|w| w == 2.0f32.to_le_bytes())
        .unwrap();
    let mut damaged = bytes.clone();
    damaged[at] ^= 0x10;
    let error = refused(&damaged, Format::Postcard);
    let SnapshotError::Checksum {
        part,
        bytes: Some((start, end)),
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(part, "component `Position` (entry 0)");
    assert!((*start..*end).contains(&at), "{at} in {start}..{end}");
    assert!(
        error.to_string().starts_with(&format!(
            "snapshot damaged: component `Position` (entry 0) (bytes {start} to {end}) does not match"
        )),
        "{error}"
    );
    // The closing checksum itself.
    let mut damaged = bytes.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    let error = refused(&damaged, Format::Postcard);
    assert!(
        matches!(&error, SnapshotError::Checksum { part, bytes: Some((s, e)) } if part == "the file's checksum" && *s == last - 3 && *e == last + 1),
        "{error:?}"
    );
}

#[test]
fn every_single_bit_flip_of_a_postcard_file_is_refused() {
    let bytes = snapshots().save(&source(), Format::Postcard).unwrap();
    for at in 0..bytes.len() {
        for bit in 0..8 {
            let mut damaged = bytes.clone();
            damaged[at] ^= 1 << bit;
            let error = refused(&damaged, Format::Postcard);
            assert!(
                matches!(
                    error,
                    SnapshotError::Checksum { .. }
                        | SnapshotError::PostcardAt { damaged: true, .. }
                        | SnapshotError::Version { .. }
                ),
                "byte {at} bit {bit}: {error:?}"
            );
        }
    }
}
