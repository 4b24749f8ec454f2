//! A postcard entry whose values do not decode as the registered type
//! (a file whose checksums are sound, saved by a build that registered
//! another type under the name) is refused with the byte of the file at
//! which the decoder found the error (`SnapshotError::Value::offset`):
//! the bad byte, the end of values cut short, the first byte left over,
//! for components (typed or run-time) and resources.
//! Each expected offset is found by searching the file for the entry's
//! bytes, independently of the decoder.

use ecs_engine::{Entity, Registry};
use ecs_snapshot::{EntryKind, Format, SnapshotError, Snapshots};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Level(u8);

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Flag(bool);

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Wide(u16);

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Pair(u8, u8);

/// The one position of `needle` in `haystack`.
fn find_once(haystack: &[u8], needle: &[u8]) -> usize {
    let found: Vec<usize> = haystack
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(found.len(), 1, "{needle:?} in {haystack:?}");
    found[0]
}

/// A postcard file of one component entry named "values", saved as `T`.
fn saved<T>(values: &[T]) -> Vec<u8>
where
    T: ecs_engine::Component + Serialize + serde::de::DeserializeOwned + Copy,
{
    let mut snapshots = Snapshots::new();
    snapshots.register::<T>("values").unwrap();
    let mut registry = Registry::new();
    for &value in values {
        registry.spawn((value,));
    }
    snapshots.save(&registry, Format::Postcard).unwrap()
}

/// Loads `file` with the entry registered as `T` into a registry that
/// holds one `T`, and checks that the refusal left it as it was.
fn refused<T>(file: &[u8], value: T) -> SnapshotError
where
    T: ecs_engine::Component
        + Serialize
        + serde::de::DeserializeOwned
        + Copy
        + PartialEq
        + std::fmt::Debug,
{
    let mut snapshots = Snapshots::new();
    snapshots.register::<T>("values").unwrap();
    let mut registry = Registry::new();
    let kept = registry.spawn((value,));
    let error = snapshots
        .load(&mut registry, file, Format::Postcard)
        .unwrap_err();
    assert_eq!(registry.get::<T>(kept), Some(&value));
    assert_eq!(registry.entities().len(), 1);
    error
}

fn offset(error: &SnapshotError) -> usize {
    match error {
        SnapshotError::Value {
            kind: EntryKind::Component,
            name,
            entry: 0,
            offset: Some(offset),
            ..
        } if name == "values" => *offset,
        other => panic!("not a located value error: {other}"),
    }
}

#[test]
fn a_bad_byte_in_a_component_value_is_located_in_the_file() {
    let file = saved(&[Level(1), Level(0), Level(7)]);
    // The entry's values: a byte string of 4 bytes, the postcard bytes of
    // three `Level`s (a count, then each byte).
    let values = find_once(&file, &[4, 3, 1, 0, 7]) + 1;
    let error = refused(&file, Flag(true));
    // 7 is no bool: the fourth byte of the values.
    assert_eq!(offset(&error), values + 3);
    assert_eq!(
        error.to_string(),
        format!(
            "component `values` (entry 0): its values do not fit the registered type: \
             Found a bool that wasn't 0 or 1 (at byte {} of the file)",
            values + 3
        )
    );
}

#[test]
fn values_cut_short_are_located_at_their_end() {
    // 200 is one byte as a `u8`, but starts a two-byte varint as a `u16`.
    let file = saved(&[Level(200)]);
    let values = find_once(&file, &[2, 1, 200]) + 1;
    let error = refused(&file, Wide(3));
    assert_eq!(offset(&error), values + 2);
    assert!(
        error.to_string().contains("Hit the end of buffer"),
        "{error}"
    );
}

#[test]
fn bytes_left_after_the_values_are_located_at_the_first_of_them() {
    let file = saved(&[Pair(5, 6)]);
    let values = find_once(&file, &[3, 1, 5, 6]) + 1;
    let error = refused(&file, Level(9));
    // The count and one `Level` read: byte 2 of the values is left over.
    assert_eq!(offset(&error), values + 2);
    assert!(
        error.to_string().contains("1 bytes left after the values"),
        "{error}"
    );
}

#[test]
fn a_resource_value_that_does_not_decode_is_located_in_the_file() {
    let mut snapshots = Snapshots::new();
    snapshots.register_resource::<u64>("Score").unwrap();
    let mut registry = Registry::new();
    registry.insert_resource(300_u64);
    let file = snapshots.save(&registry, Format::Postcard).unwrap();
    // The entry: the name, then the value's 2 bytes (300 as a varint).
    let value = find_once(&file, b"\x05Score\x02\xac\x02") + 7;

    let mut other = Snapshots::new();
    other.register_resource::<bool>("Score").unwrap();
    let mut target = Registry::new();
    target.insert_resource(true);
    let error = other
        .load(&mut target, &file, Format::Postcard)
        .unwrap_err();
    assert!(
        matches!(&error, SnapshotError::Value { kind: EntryKind::Resource, name, entry: 0, offset: Some(at), .. } if name == "Score" && *at == value),
        "{error:?} (value at {value})"
    );
    assert_eq!(target.resource::<bool>(), Some(&true));
}

#[test]
fn a_located_error_names_the_entry_among_several() {
    // Two entries: the second one's values are located, not the first's.
    let mut snapshots = Snapshots::new();
    snapshots
        .register::<Pair>("pairs")
        .unwrap()
        .register::<Level>("values")
        .unwrap();
    let mut registry = Registry::new();
    let e: Entity = registry.spawn((Pair(1, 2), Level(1)));
    registry.spawn((Level(9),));
    assert!(registry.is_alive(e));
    let file = snapshots.save(&registry, Format::Postcard).unwrap();
    let values = find_once(&file, &[3, 2, 1, 9]) + 1;

    let mut other = Snapshots::new();
    other
        .register::<Pair>("pairs")
        .unwrap()
        .register::<Flag>("values")
        .unwrap();
    let error = other
        .load(&mut Registry::new(), &file, Format::Postcard)
        .unwrap_err();
    assert!(
        matches!(&error, SnapshotError::Value { name, entry: 1, offset: Some(at), .. } if name == "values" && *at == values + 2),
        "{error:?} (values at {values})"
    );
}

#[test]
fn runtime_values_that_do_not_decode_are_located_in_the_file() {
    // Saved as a typed component, loaded as a run-time one: the values
    // `[3, 1, 0, 7]` read as size 3, count 1 and an empty byte string,
    // leaving the `7`.
    let file = saved(&[Level(1), Level(0), Level(7)]);
    let values = find_once(&file, &[4, 3, 1, 0, 7]) + 1;
    let mut snapshots = Snapshots::new();
    snapshots.register_runtime("values").unwrap();
    let mut registry = Registry::new();
    let layout = std::alloc::Layout::new::<[u8; 3]>();
    // SAFETY: byte arrays own nothing; none is inserted here.
    let descriptor = unsafe { ecs_engine::ComponentDescriptor::new("values", layout).savable() };
    registry.register_runtime(descriptor).unwrap();
    let error = snapshots
        .load(&mut registry, &file, Format::Postcard)
        .unwrap_err();
    assert_eq!(offset(&error), values + 3);
    assert!(
        error.to_string().contains("1 bytes left after the values"),
        "{error}"
    );
    assert_eq!(registry.entities().len(), 0);
}
