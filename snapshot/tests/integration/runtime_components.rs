//! Run-time components (registered by name and layout, as the C API
//! does) in file snapshots: `Snapshots::register_runtime` saves their
//! values' bytes in dense order, in both formats and through
//! `save_engine` / `load_engine`; a registry without the component, with
//! an unsavable one or one of another size is refused by name, and a
//! refused load leaves the registry (or engine) exactly as it was.

use std::alloc::Layout;

use ecs_engine::{AllocatorState, ComponentDescriptor, ComponentId, EcsError, Entity, Registry};
use ecs_runtime::prelude::{Engine, Query};
use ecs_snapshot::{EntryKind, Format, SnapshotError, Snapshots, json_checksum};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const FORMATS: [Format; 2] = [Format::Json, Format::Postcard];

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Position {
    x: f32,
    y: f32,
}

/// A savable run-time component named `name` of `size` bytes aligned to
/// `align`.
fn savable(registry: &mut Registry, name: &str, size: usize, align: usize) -> ComponentId {
    let layout = Layout::from_size_align(size, align).unwrap();
    // SAFETY: the tests insert only initialised byte arrays, which own
    // nothing.
    let descriptor = unsafe { ComponentDescriptor::new(name, layout).savable() };
    registry.register_runtime(descriptor).unwrap()
}

fn snapshots() -> Snapshots {
    let mut s = Snapshots::new();
    s.register::<Position>("Position")
        .unwrap()
        .register_runtime("body")
        .unwrap()
        .register_runtime("tag")
        .unwrap();
    s
}

/// Values of a run-time component with their owners, in dense order.
type Values = Vec<(Entity, Vec<u8>)>;

/// Every value of run-time component `name`, in dense order.
fn values(registry: &Registry, name: &str) -> Values {
    let id = registry.component_by_name(name).unwrap();
    let bytes = registry.runtime_bytes(id).unwrap();
    bytes.iter().map(|(e, b)| (e, b.to_vec())).collect()
}

/// The bytes of a `body` value: three `u32`s.
fn body(a: u32, b: u32, c: u32) -> Vec<u8> {
    [a, b, c].iter().flat_map(|v| v.to_ne_bytes()).collect()
}

/// Six entities, one despawned; `body` (12 bytes, align 4) on five in a
/// dense order that is not the spawn order (a removal swapped the last
/// one in), `tag` (zero-size) on two, `Position` on two.
fn source() -> (Registry, Vec<Entity>) {
    let mut registry = Registry::new();
    let body_id = savable(&mut registry, "body", 12, 4);
    let tag = savable(&mut registry, "tag", 0, 1);
    let e: Vec<Entity> = (0..6).map(|_| registry.spawn(())).collect();
    for &i in &[4usize, 0, 2, 5, 3, 1] {
        let v = i as u32;
        registry
            .insert_runtime_bytes(e[i], body_id, &body(v, v * 100, 0xdead_0000 + v))
            .unwrap();
    }
    assert!(registry.remove_by_id(e[0], body_id).unwrap());
    registry.despawn(e[2]).unwrap();
    registry.insert_runtime_bytes(e[5], tag, &[]).unwrap();
    registry.insert_runtime_bytes(e[1], tag, &[]).unwrap();
    registry.insert(e[3], Position { x: 1.5, y: -2.0 }).unwrap();
    registry.insert(e[4], Position { x: 3.0, y: 4.0 }).unwrap();
    (registry, e)
}

/// A registry for the loads: `extra` first (so its ids are not the
/// source's), then `body` and `tag`.
fn fresh(body_size: usize) -> Registry {
    let mut registry = Registry::new();
    savable(&mut registry, "extra", 2, 1);
    savable(&mut registry, "tag", 0, 1);
    savable(&mut registry, "body", body_size, 4);
    registry
}

#[test]
fn runtime_components_round_trip_in_both_formats_in_dense_order() {
    let (registry, e) = source();
    let expected_body = vec![
        (e[1], body(1, 100, 0xdead_0001)),
        (e[4], body(4, 400, 0xdead_0004)),
        (e[5], body(5, 500, 0xdead_0005)),
        (e[3], body(3, 300, 0xdead_0003)),
    ];
    // The source's own order: the despawn and the removal moved values.
    let mut sorted = values(&registry, "body");
    assert_eq!(sorted.len(), 4);
    sorted.sort_by_key(|(e, _)| e.index());
    let mut want = expected_body.clone();
    want.sort_by_key(|(e, _)| e.index());
    assert_eq!(sorted, want);
    let saved_order = values(&registry, "body");

    let snapshots = snapshots();
    for format in FORMATS {
        let bytes = snapshots.save(&registry, format).unwrap();
        let mut loaded = fresh(12);
        snapshots.load(&mut loaded, &bytes, format).unwrap();
        assert_eq!(values(&loaded, "body"), saved_order, "{format:?}");
        assert_eq!(
            values(&loaded, "tag"),
            [(e[5], vec![]), (e[1], vec![])],
            "{format:?}"
        );
        assert_eq!(values(&loaded, "extra"), [], "{format:?}");
        assert_eq!(
            loaded.get::<Position>(e[3]),
            Some(&Position { x: 1.5, y: -2.0 })
        );
        assert!(!loaded.is_alive(e[2]));
        // The next spawn is the one the source would make.
        let (mut again, _) = source();
        assert_eq!(loaded.spawn(()), again.spawn(()), "{format:?}");
    }
}

#[test]
fn a_json_snapshot_holds_the_size_and_each_value_in_hexadecimal() {
    let (registry, e) = source();
    let bytes = snapshots().save(&registry, Format::Json).unwrap();
    let doc: Value = serde_json::from_slice(&bytes).unwrap();
    let entries = doc["components"].as_array().unwrap();
    let entry = entries.iter().find(|c| c["name"] == "body").unwrap();
    let order = values(&registry, "body");
    let slots: Vec<u32> = order.iter().map(|(e, _)| e.index()).collect();
    assert_eq!(entry["entities"], json!(slots));
    assert_eq!(entry["values"]["size"], 12);
    let first = &order[0].1;
    let hex: String = first.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(entry["values"]["values"][0], hex.as_str());
    let tag = entries.iter().find(|c| c["name"] == "tag").unwrap();
    assert_eq!(tag["values"], json!({"size": 0, "values": ["", ""]}));
    assert_eq!(tag["entities"], json!([e[5].index(), e[1].index()]));
}

#[test]
fn a_save_without_a_savable_runtime_component_is_refused_by_name() {
    let snapshots = snapshots();
    // No `tag` at all: refused, even though the save would hold no value
    // of it.
    let mut registry = Registry::new();
    let body_id = savable(&mut registry, "body", 12, 4);
    let e = registry.spawn(());
    registry
        .insert_runtime_bytes(e, body_id, &body(1, 2, 3))
        .unwrap();
    for format in FORMATS {
        let error = snapshots.save(&registry, format).unwrap_err();
        assert!(
            matches!(&error, SnapshotError::RuntimeMissing { name } if name == "tag"),
            "{error}"
        );
        assert!(error.to_string().contains("`tag`"), "{error}");
    }
    // Not declared savable.
    let descriptor = ComponentDescriptor::new("tag", Layout::new::<()>());
    registry.register_runtime(descriptor).unwrap();
    let error = snapshots.save(&registry, Format::Json).unwrap_err();
    assert!(
        matches!(&error, SnapshotError::RuntimeNotSavable { name, source: EcsError::NotSavable { .. } } if name == "tag"),
        "{error}"
    );
    assert!(
        error.to_string().contains("not registered as savable"),
        "{error}"
    );

    // Declared savable, but with a destructor.
    let mut registry = Registry::new();
    savable(&mut registry, "tag", 0, 1);
    // SAFETY: the destructor does nothing.
    let descriptor = unsafe {
        ComponentDescriptor::new("body", Layout::new::<[u32; 3]>())
            .with_drop(|_| {})
            .savable()
    };
    registry.register_runtime(descriptor).unwrap();
    let error = snapshots.save(&registry, Format::Postcard).unwrap_err();
    assert!(
        matches!(&error, SnapshotError::RuntimeNotSavable { name, .. } if name == "body"),
        "{error}"
    );
    assert!(error.to_string().contains("destructor"), "{error}");
}

/// What a refused load must leave as it was.
fn contents(registry: &Registry) -> (AllocatorState, Values, Vec<Entity>) {
    let body = registry
        .component_by_name("body")
        .and_then(|id| registry.runtime_bytes(id).ok())
        .map(|b| b.iter().map(|(e, v)| (e, v.to_vec())).collect())
        .unwrap_or_default();
    let positions = registry
        .view::<(Entity, &Position)>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    (registry.entities().export_state(), body, positions)
}

/// A target with entities and values of its own.
fn target(register: impl FnOnce(&mut Registry)) -> Registry {
    let mut registry = Registry::new();
    register(&mut registry);
    let a = registry.spawn((Position { x: 9.0, y: 9.0 },));
    let b = registry.spawn(());
    registry.despawn(a).unwrap();
    if let Some(id) = registry.component_by_name("body")
        && registry.component_info(id).unwrap().layout().size() == 12
        && registry.component_info(id).unwrap().is_savable()
    {
        registry
            .insert_runtime_bytes(b, id, &body(7, 7, 7))
            .unwrap();
    }
    registry.spawn((Position { x: 8.0, y: 8.0 },));
    registry
}

#[test]
fn a_load_into_a_registry_without_it_or_of_another_size_is_refused_and_changes_nothing() {
    let (registry, _) = source();
    let snapshots = snapshots();
    for format in FORMATS {
        let bytes = snapshots.save(&registry, format).unwrap();

        // No `body`.
        let mut missing = target(|r| {
            savable(r, "tag", 0, 1);
        });
        let before = contents(&missing);
        let error = snapshots.load(&mut missing, &bytes, format).unwrap_err();
        assert!(
            matches!(&error, SnapshotError::RuntimeMissing { name } if name == "body"),
            "{format:?}: {error}"
        );
        assert_eq!(contents(&missing), before);

        // `body` of 16 bytes.
        let mut wider = target(|r| {
            savable(r, "tag", 0, 1);
            savable(r, "body", 16, 4);
        });
        let before = contents(&wider);
        let error = snapshots.load(&mut wider, &bytes, format).unwrap_err();
        assert!(
            matches!(
                &error,
                SnapshotError::RuntimeSize { name, entry: 1, expected: 16, found: 12 } if name == "body"
            ),
            "{format:?}: {error}"
        );
        assert_eq!(
            error.to_string(),
            "run-time component `body` (entry 1): the snapshot's values are 12 bytes each, \
             but the registry's component is 16 bytes"
        );
        assert_eq!(contents(&wider), before);

        // `body` not savable.
        let mut unsavable = target(|r| {
            savable(r, "tag", 0, 1);
            let descriptor = ComponentDescriptor::new("body", Layout::new::<[u32; 3]>());
            r.register_runtime(descriptor).unwrap();
        });
        let before = contents(&unsavable);
        let error = snapshots.load(&mut unsavable, &bytes, format).unwrap_err();
        assert!(
            matches!(&error, SnapshotError::RuntimeNotSavable { name, .. } if name == "body"),
            "{format:?}: {error}"
        );
        assert_eq!(contents(&unsavable), before);

        // The same target with a fitting `body` loads, replacing its
        // values.
        let mut fitting = target(|r| {
            savable(r, "tag", 0, 1);
            savable(r, "body", 12, 4);
        });
        assert_eq!(contents(&fitting).1.len(), 1);
        snapshots.load(&mut fitting, &bytes, format).unwrap();
        assert_eq!(values(&fitting, "body"), values(&registry, "body"));
    }
}

/// `bytes` (JSON) with `edit` applied to the entry named `name`, its
/// checksum recomputed (as a tool that edits on purpose would).
fn edited(bytes: &[u8], name: &str, edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut doc: Value = serde_json::from_slice(bytes).unwrap();
    let entry = doc["components"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["name"] == name)
        .unwrap();
    edit(&mut entry["values"]);
    let sum = json_checksum(&json!([entry["name"], entry["entities"], entry["values"]]));
    entry["checksum"] = json!(sum);
    serde_json::to_vec(&doc).unwrap()
}

#[test]
fn edited_json_values_are_refused_by_item() {
    let (registry, _) = source();
    let snapshots = snapshots();
    let bytes = snapshots.save(&registry, Format::Json).unwrap();
    type Edit = fn(&mut Value);
    let cases: [(Edit, &str); 4] = [
        (
            |v| v["values"][1] = json!("zz"),
            "values[1]: `zz` is not hexadecimal",
        ),
        (
            |v| v["values"][2] = json!("0102"),
            "values[2] is 2 bytes, but the entry's size is 12",
        ),
        (|v| v["size"] = json!("twelve"), "invalid type"),
        (|v| v["extra"] = json!(1), "unknown field `extra`"),
    ];
    for (edit, message) in cases {
        let file = edited(&bytes, "body", edit);
        let mut loaded = fresh(12);
        let error = snapshots
            .load(&mut loaded, &file, Format::Json)
            .unwrap_err();
        assert!(
            matches!(&error, SnapshotError::Value { kind: EntryKind::Component, name, entry: 1, offset: None, .. } if name == "body"),
            "{error}"
        );
        assert!(error.to_string().contains(message), "{error}");
        assert_eq!(values(&loaded, "body"), []);
    }
    // One value fewer than entities.
    let file = edited(&bytes, "body", |v| {
        v["values"].as_array_mut().unwrap().pop();
    });
    let error = snapshots
        .load(&mut fresh(12), &file, Format::Json)
        .unwrap_err();
    assert!(
        matches!(&error, SnapshotError::CountMismatch { name, values: 3, entities: 4, .. } if name == "body"),
        "{error}"
    );
}

#[test]
fn register_runtime_refuses_a_name_in_use() {
    let mut snapshots = snapshots();
    let error = snapshots.register_runtime("Position").unwrap_err();
    assert!(
        matches!(&error, SnapshotError::DuplicateName { kind: EntryKind::Component, name } if name == "Position"),
        "{error}"
    );
    assert!(snapshots.register_runtime("body").is_err());
    assert!(snapshots.register::<u8>("body").is_err());
    assert_eq!(
        snapshots.component_names().collect::<Vec<_>>(),
        ["Position", "body", "tag"]
    );
}

/// An engine whose one system moves every `Position`, with `body` and
/// `tag` registered in its registry and values set between ticks.
fn engine(body_size: usize) -> Engine {
    let mut builder = Engine::builder();
    savable(builder.registry_mut(), "tag", 0, 1);
    savable(builder.registry_mut(), "body", body_size, 4);
    builder.add_system(|mut query: Query<&mut Position>| {
        query.par_each(|p| p.x += 1.0);
    });
    builder.build().unwrap()
}

#[test]
fn runtime_components_survive_save_engine_and_load_engine() {
    let snapshots = snapshots();
    for format in FORMATS {
        let mut running = engine(12);
        let registry = running.registry_mut();
        let id = registry.component_by_name("body").unwrap();
        let e: Vec<Entity> = (0..4)
            .map(|i| {
                registry.spawn((Position {
                    x: i as f32,
                    y: 0.0,
                },))
            })
            .collect();
        for (i, &entity) in e.iter().enumerate().rev() {
            let v = i as u32;
            registry
                .insert_runtime_bytes(entity, id, &body(v, v + 10, v + 20))
                .unwrap();
        }
        running.run(3).unwrap();
        let registry = running.registry_mut();
        registry.despawn(e[1]).unwrap();
        registry
            .insert_runtime_bytes(e[2], id, &body(42, 43, 44))
            .unwrap();
        let file = snapshots.save_engine(&running, format).unwrap();

        let mut loaded = engine(12);
        snapshots.load_engine(&mut loaded, &file, format).unwrap();
        assert_eq!(loaded.ticks(), 3);
        assert_eq!(
            values(loaded.registry(), "body"),
            values(running.registry(), "body")
        );
        assert_eq!(
            values(loaded.registry(), "body"),
            [
                (e[3], body(3, 13, 23)),
                (e[2], body(42, 43, 44)),
                (e[0], body(0, 10, 20))
            ]
        );
        running.run(2).unwrap();
        loaded.run(2).unwrap();
        let positions = |engine: &Engine| {
            engine
                .registry()
                .view::<(Entity, &Position)>()
                .iter()
                .map(|(e, p)| (e, *p))
                .collect::<Vec<_>>()
        };
        assert_eq!(positions(&loaded), positions(&running));
        assert_eq!(positions(&loaded)[0].1.x, 5.0);
        assert_eq!(
            values(loaded.registry(), "body"),
            values(running.registry(), "body")
        );

        // An engine whose `body` is another size is refused, unchanged.
        let mut other = engine(8);
        other.run(1).unwrap();
        let spawned = other.registry_mut().spawn((Position { x: 0.0, y: 0.0 },));
        let error = snapshots
            .load_engine(&mut other, &file, format)
            .unwrap_err();
        assert!(
            matches!(&error, SnapshotError::RuntimeSize { name, expected: 8, found: 12, .. } if name == "body"),
            "{format:?}: {error}"
        );
        assert_eq!(other.ticks(), 1);
        assert_eq!(other.registry().entities().len(), 1);
        assert!(other.registry().is_alive(spawned));
    }
}

#[test]
fn an_engine_file_holds_the_change_ticks_of_a_tracked_runtime_component() {
    let snapshots = snapshots();
    let mut running = engine(12);
    let registry = running.registry_mut();
    let id = registry.component_by_name("body").unwrap();
    let e = registry.spawn((Position { x: 0.0, y: 0.0 },));
    registry
        .insert_runtime_bytes(e, id, &body(1, 2, 3))
        .unwrap();
    running.run(1).unwrap();
    let ticks_named = |file: &[u8]| -> Vec<String> {
        let doc: Value = serde_json::from_slice(file).unwrap();
        doc["engine"]["pool_ticks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let untracked = snapshots.save_engine(&running, Format::Json).unwrap();
    assert!(!ticks_named(&untracked).contains(&"body".to_owned()));

    running.registry_mut().track_changes_raw(id).unwrap();
    running.run(1).unwrap();
    let f = running.registry_mut().spawn(());
    running
        .registry_mut()
        .insert_runtime_bytes(f, id, &body(4, 5, 6))
        .unwrap();
    running.registry_mut().despawn(e).unwrap();
    let file = snapshots.save_engine(&running, Format::Json).unwrap();
    assert!(ticks_named(&file).contains(&"body".to_owned()));
    let mut loaded = engine(12);
    snapshots
        .load_engine(&mut loaded, &file, Format::Json)
        .unwrap();
    let loaded_id = loaded.registry().component_by_name("body").unwrap();
    assert!(loaded.registry().is_tracking_changes_raw(loaded_id));
    let saved = running.registry().export_pool_ticks_raw(id).unwrap();
    assert_eq!(saved.removed, vec![e], "the despawn is in the log");
    assert_eq!(
        loaded.registry().export_pool_ticks_raw(loaded_id),
        Some(saved)
    );

    // A file whose ticks for `body` do not fit its values (resealed).
    let mut doc: Value = serde_json::from_slice(&file).unwrap();
    let engine_section = &mut doc["engine"];
    for entry in engine_section["pool_ticks"].as_array_mut().unwrap() {
        if entry["name"] == "body" {
            entry["added"] = json!([1, 1]);
            entry["changed"] = json!([1, 1]);
        }
    }
    let fields: Vec<Value> = [
        "ticks",
        "clock",
        "pool_ticks",
        "resource_ticks",
        "seed",
        "startup_pending",
        "states_started",
        "systems",
        "reserves",
    ]
    .iter()
    .map(|k| engine_section[*k].clone())
    .collect();
    engine_section["checksum"] = json_checksum(&Value::Array(fields)).into();
    let file = serde_json::to_vec(&doc).unwrap();
    let mut refused = engine(12);
    let error = snapshots
        .load_engine(&mut refused, &file, Format::Json)
        .unwrap_err();
    assert!(
        matches!(&error, SnapshotError::EngineState { part, message } if part == "change ticks of component `body`" && message.contains("2 added and 2 changed ticks for 1 components")),
        "{error}"
    );
    assert_eq!(refused.registry().entities().len(), 0);
    assert_eq!(refused.ticks(), 0);
}
