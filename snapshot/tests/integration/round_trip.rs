//! Save and load in both formats: components in dense order, resources,
//! the allocator's exact state (dead and recycled handles, the free
//! queue, the next spawn), the `Disabled` marker.

use ecs_engine::{Entity, Registry};
use ecs_snapshot::{Format, Snapshots};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Velocity {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Tag {
    Ship { name: String },
    Rock,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Rng {
    state: u64,
    draws: Vec<u32>,
}

/// Not registered: dropped by a load.
#[derive(Debug, Clone, PartialEq)]
struct Scratch(u8);

const FORMATS: [Format; 2] = [Format::Json, Format::Postcard];

fn snapshots() -> Snapshots {
    let mut s = Snapshots::new();
    s.register::<Position>("Position")
        .unwrap()
        .register::<Velocity>("Velocity")
        .unwrap()
        .register::<Tag>("Tag")
        .unwrap()
        .register_disabled()
        .unwrap()
        .register_resource::<Rng>("Rng")
        .unwrap()
        .register_resource::<u64>("Score")
        .unwrap();
    s
}

/// A world with dead, recycled and disabled entities.
fn world() -> (Registry, Vec<Entity>) {
    let mut registry = Registry::new();
    let mut e = Vec::new();
    for i in 0..12 {
        let f = i as f32;
        e.push(registry.spawn((Position { x: f, y: -f }, Scratch(i as u8))));
        if i % 3 == 0 {
            registry
                .insert(e[i], Velocity { x: 0.5 * f, y: 1.0 })
                .unwrap();
        }
    }
    registry
        .insert(
            e[4],
            Tag::Ship {
                name: "Ann \"A\"".into(),
            },
        )
        .unwrap();
    registry.insert(e[5], Tag::Rock).unwrap();
    for &i in &[7, 2, 9] {
        registry.despawn(e[i]).unwrap();
    }
    // Slot 7 comes back with generation 2, then dies again.
    let recycled = registry.spawn((Position { x: 70.0, y: 0.0 },));
    assert_eq!((recycled.index(), recycled.generation()), (7, 2));
    registry.despawn(recycled).unwrap();
    let recycled = registry.spawn((Velocity { x: 2.0, y: 9.0 },));
    assert_eq!(recycled.index(), 2);
    e.push(recycled);
    // A swap-and-pop moved the last Position into slot 1's place.
    registry.remove::<Position>(e[1]).unwrap();
    registry.disable(e[3]).unwrap();
    registry.insert_resource(Rng {
        state: 0xDEAD_BEEF,
        draws: vec![1, 2, 3],
    });
    registry.insert_resource(41_u64);
    (registry, e)
}

fn dense<T: Clone + Send + Sync + 'static>(registry: &Registry) -> Vec<(Entity, T)> {
    registry.pool::<T>().map_or_else(Vec::new, |pool| {
        pool.entities()
            .iter()
            .copied()
            .zip(pool.components().iter().cloned())
            .collect()
    })
}

fn assert_same_world(a: &Registry, b: &Registry) {
    assert_eq!(a.entities().export_state(), b.entities().export_state());
    assert_eq!(dense::<Position>(a), dense::<Position>(b));
    assert_eq!(dense::<Velocity>(a), dense::<Velocity>(b));
    assert_eq!(dense::<Tag>(a), dense::<Tag>(b));
    assert_eq!(
        dense::<ecs_engine::Disabled>(a),
        dense::<ecs_engine::Disabled>(b)
    );
    assert_eq!(a.resource::<Rng>(), b.resource::<Rng>());
    assert_eq!(a.resource::<u64>(), b.resource::<u64>());
}

#[test]
fn round_trip_in_both_formats() {
    let snapshots = snapshots();
    for format in FORMATS {
        let (mut original, e) = world();
        let bytes = snapshots.save(&original, format).unwrap();
        let mut loaded = Registry::new();
        loaded.insert_resource(Scratch(99));
        snapshots.load(&mut loaded, &bytes, format).unwrap();
        assert_same_world(&original, &loaded);
        // Dead handles stay dead, the recycled one is alive.
        for &i in &[7, 9] {
            assert!(!loaded.is_alive(e[i]), "{format:?}: {} alive", e[i]);
        }
        assert!(loaded.is_alive(e[12]));
        assert!(loaded.is_disabled(e[3]));
        assert_eq!(loaded.view::<&Position>().iter().count(), 7);
        // Unregistered components are not saved; unregistered resources of
        // the target stay.
        assert_eq!(loaded.count::<Scratch>(), 0);
        assert_eq!(loaded.resource::<Scratch>(), Some(&Scratch(99)));
        // The next spawns get the same handles, oldest free slot first.
        for _ in 0..4 {
            assert_eq!(loaded.spawn(()), original.spawn(()));
        }
        // Saving the loaded world gives the same bytes.
        let (original, _) = world();
        let mut again = Registry::new();
        snapshots.load(&mut again, &bytes, format).unwrap();
        assert_eq!(snapshots.save(&again, format).unwrap(), bytes);
        assert_same_world(&original, &again);
    }
}

#[test]
fn load_replaces_what_was_there() {
    let snapshots = snapshots();
    let (original, _) = world();
    for format in FORMATS {
        let bytes = snapshots.save(&original, format).unwrap();
        let mut target = Registry::new();
        for i in 0..30 {
            target.spawn((
                Position {
                    x: i as f32,
                    y: 0.0,
                },
                Tag::Rock,
            ));
        }
        target.insert_resource(7_u64);
        target.insert_resource(Scratch(1));
        snapshots.load(&mut target, &bytes, format).unwrap();
        assert_same_world(&original, &target);
        assert_eq!(target.resource::<Scratch>(), Some(&Scratch(1)));
    }
}

#[test]
fn registered_resources_missing_from_the_snapshot_are_removed() {
    let snapshots = snapshots();
    let empty = Registry::new();
    for format in FORMATS {
        let bytes = snapshots.save(&empty, format).unwrap();
        let mut target = world().0;
        snapshots.load(&mut target, &bytes, format).unwrap();
        assert!(target.is_empty());
        assert_eq!(target.resource::<u64>(), None);
        assert_eq!(target.resource::<Rng>(), None);
        assert_eq!(target.spawn(()), Registry::new().spawn(()));
    }
}

#[test]
fn json_is_readable() {
    let snapshots = snapshots();
    let (original, _) = world();
    let text = String::from_utf8(snapshots.save(&original, Format::Json).unwrap()).unwrap();
    for needle in [
        "\"version\": 3",
        "\"checksum\": ",
        "\"generations\"",
        "\"free\"",
        "\"name\": \"Position\"",
        "\"Ann \\\"A\\\"\"",
        "\"name\": \"Score\"",
    ] {
        assert!(text.contains(needle), "{needle} not in\n{text}");
    }
}

#[test]
fn reserved_slots_and_limits_round_trip() {
    let snapshots = snapshots();
    for format in FORMATS {
        let mut original = Registry::with_allocator(
            ecs_engine::EntityAllocator::new()
                .with_max_live(20)
                .with_max_generation(std::num::NonZeroU32::new(2).unwrap()),
        );
        let a = original.spawn((Position { x: 1.0, y: 1.0 },));
        original.despawn(a).unwrap();
        let b = original.spawn(());
        original.despawn(b).unwrap(); // Slot 0 is retired at generation 2.
        let reserved = original.reserve_entity().unwrap();
        let bytes = snapshots.save(&original, format).unwrap();
        let mut loaded = Registry::new();
        snapshots.load(&mut loaded, &bytes, format).unwrap();
        let state = loaded.entities().export_state();
        assert_eq!(state, original.entities().export_state());
        assert_eq!((state.retired, state.max_live), (1, 20));
        assert_eq!(state.reserved, vec![reserved.index()]);
        loaded.spawn_reserved(reserved, (Tag::Rock,)).unwrap();
        assert_eq!(loaded.get::<Tag>(reserved), Some(&Tag::Rock));
    }
}

/// One operation on the model world.
#[derive(Debug, Clone)]
enum Op {
    Spawn(f32, bool),
    Despawn(usize),
    Insert(usize, f32),
    Remove(usize),
    Disable(usize),
    SetParent(usize, usize),
    DespawnRecursive(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (-1e6f32..1e6, any::<bool>()).prop_map(|(x, v)| Op::Spawn(x, v)),
        any::<usize>().prop_map(Op::Despawn),
        (any::<usize>(), -1e3f32..1e3).prop_map(|(i, x)| Op::Insert(i, x)),
        any::<usize>().prop_map(Op::Remove),
        any::<usize>().prop_map(Op::Disable),
        (any::<usize>(), any::<usize>()).prop_map(|(c, p)| Op::SetParent(c, p)),
        any::<usize>().prop_map(Op::DespawnRecursive),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random worlds (with parents and children) round-trip exactly in
    /// both formats, and go on identically after the load.
    #[test]
    fn random_worlds_round_trip(ops in prop::collection::vec(op(), 0..80), after in prop::collection::vec(op(), 0..20)) {
        let mut snapshots = snapshots();
        snapshots.register_hierarchy();
        let apply = |registry: &mut Registry, handles: &mut Vec<Entity>, ops: &[Op]| {
            for op in ops {
                let pick = |i: usize| handles.get(i % handles.len().max(1)).copied();
                match *op {
                    Op::Spawn(x, v) => {
                        let e = registry.spawn((Position { x, y: -x },));
                        if v {
                            registry.insert(e, Velocity { x: 1.0, y: x }).unwrap();
                        }
                        handles.push(e);
                    }
                    Op::Despawn(i) => { if let Some(e) = pick(i) { let _ = registry.despawn(e); } }
                    Op::Insert(i, x) => { if let Some(e) = pick(i) { let _ = registry.insert(e, Velocity { x, y: x }); } }
                    Op::Remove(i) => { if let Some(e) = pick(i) { let _ = registry.remove::<Position>(e); } }
                    Op::Disable(i) => { if let Some(e) = pick(i) { let _ = registry.disable(e); } }
                    Op::SetParent(c, p) => {
                        if let (Some(c), Some(p)) = (pick(c), pick(p)) {
                            let _ = registry.set_parent(c, p);
                        }
                    }
                    Op::DespawnRecursive(i) => { if let Some(e) = pick(i) { let _ = registry.despawn_recursive(e); } }
                }
            }
        };
        for format in FORMATS {
            let (mut original, mut handles) = (Registry::new(), Vec::new());
            apply(&mut original, &mut handles, &ops);
            original.insert_resource(handles.len() as u64);
            let bytes = snapshots.save(&original, format).unwrap();
            let mut loaded = Registry::new();
            snapshots.load(&mut loaded, &bytes, format).unwrap();
            assert_same_world(&original, &loaded);
            prop_assert_eq!(loaded.export_hierarchy(), original.export_hierarchy());
            let mut loaded_handles = handles.clone();
            apply(&mut original, &mut handles, &after);
            apply(&mut loaded, &mut loaded_handles, &after);
            prop_assert_eq!(&handles, &loaded_handles);
            assert_same_world(&original, &loaded);
            prop_assert_eq!(loaded.export_hierarchy(), original.export_hierarchy());
        }
    }
}

#[test]
fn the_hierarchy_round_trips_when_registered() {
    let mut snapshots = snapshots();
    snapshots.register_hierarchy();
    for format in FORMATS {
        let (mut original, e) = world();
        original.set_parent(e[4], e[0]).unwrap();
        original.set_parent(e[5], e[4]).unwrap();
        original.set_parent(e[6], e[0]).unwrap();
        original.set_parent(e[4], e[3]).unwrap();
        original.set_parent(e[4], e[0]).unwrap(); // last in e[0]'s list again
        let bytes = snapshots.save(&original, format).unwrap();
        let mut loaded = Registry::new();
        snapshots.load(&mut loaded, &bytes, format).unwrap();
        assert_same_world(&original, &loaded);
        assert_eq!(loaded.export_hierarchy(), original.export_hierarchy());
        assert_eq!(loaded.children(e[0]), [e[6], e[4]]);
        assert_eq!(loaded.root(e[5]), Some(e[0]));
        let subtree: Vec<Entity> = loaded.depth_first(e[0]).collect();
        assert_eq!(subtree, original.depth_first(e[0]).collect::<Vec<_>>());
        // The links stay consistent through later changes.
        loaded.despawn_recursive(e[4]).unwrap();
        assert!(!loaded.is_alive(e[5]));
        assert_eq!(loaded.children(e[0]), [e[6]]);
    }
}

#[test]
fn entity_handles_in_components_derive_serde() {
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Target {
        entity: ecs_engine::Entity,
        others: Vec<ecs_engine::Entity>,
    }
    let mut registry = ecs_engine::Registry::new();
    let a = registry.spawn(());
    let b = registry.spawn(());
    registry.despawn(a).unwrap();
    let c = registry.spawn(()); // a's slot, the next generation
    let target = Target {
        entity: c,
        others: vec![b, ecs_engine::Entity::NULL],
    };
    let json = serde_json::to_string(&target).unwrap();
    assert_eq!(
        json,
        format!(
            "{{\"entity\":{},\"others\":[{},{}]}}",
            c.to_bits(),
            b.to_bits(),
            ecs_engine::Entity::NULL.to_bits()
        )
    );
    assert_eq!(serde_json::from_str::<Target>(&json).unwrap(), target);
    // Generation 0 is no handle: refused, with the value named.
    let error = serde_json::from_str::<Target>("{\"entity\":7,\"others\":[]}").unwrap_err();
    assert!(
        error.to_string().contains("invalid value: integer `7`"),
        "{error}"
    );
}
