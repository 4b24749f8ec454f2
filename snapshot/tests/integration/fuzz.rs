//! Loading mutated snapshots, a bounded fuzz loop run with the tests: a
//! valid file of each format, bytes flipped, set, cut, inserted or
//! removed. Whatever the bytes, a load never panics; a failed load leaves
//! the registry exactly as it was; a load that succeeds (spacing changed
//! in JSON) gives the saved world.

use ecs_engine::{AllocatorState, Entity, Registry};
use ecs_snapshot::{Format, Snapshots};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Tag {
    Ship { name: String },
    Rock,
}

fn snapshots() -> Snapshots {
    let mut s = Snapshots::new();
    s.register::<Position>("Position")
        .unwrap()
        .register::<Tag>("Tag")
        .unwrap()
        .register_disabled()
        .unwrap()
        .register_resource::<Vec<u32>>("Draws")
        .unwrap()
        .register_hierarchy();
    s
}

/// Dead, recycled, disabled and reserved slots, a parent with children,
/// components of two types and a resource.
fn source() -> Registry {
    let mut registry = Registry::new();
    let e: Vec<Entity> = (0..12)
        .map(|i| {
            registry.spawn((Position {
                x: i as f32 * 1.5,
                y: -0.25,
            },))
        })
        .collect();
    for &i in &[1, 4, 7] {
        registry.despawn(e[i]).unwrap();
    }
    registry.spawn((Tag::Rock,));
    registry
        .insert(e[2], Tag::Ship { name: "Ann".into() })
        .unwrap();
    registry.disable(e[3]).unwrap();
    registry.set_parent(e[5], e[2]).unwrap();
    registry.set_parent(e[6], e[2]).unwrap();
    registry.reserve_entity().unwrap();
    registry.insert_resource(vec![3_u32, 1, 4]);
    registry
}

type Contents = (
    AllocatorState,
    Vec<(Entity, Position)>,
    Vec<(Entity, Tag)>,
    Option<Vec<u32>>,
    ecs_engine::HierarchyState,
);

fn contents(registry: &Registry) -> Contents {
    let pool = |r: &Registry| {
        r.pool::<Position>().map_or(Vec::new(), |p| {
            p.entities()
                .iter()
                .copied()
                .zip(p.components().iter().copied())
                .collect()
        })
    };
    let tags = registry.pool::<Tag>().map_or(Vec::new(), |p| {
        p.entities()
            .iter()
            .copied()
            .zip(p.components().iter().cloned())
            .collect()
    });
    (
        registry.entities().export_state(),
        pool(registry),
        tags,
        registry.resource::<Vec<u32>>().cloned(),
        registry.export_hierarchy(),
    )
}

/// The target of every load: another world, which a failed load keeps.
fn target() -> Registry {
    let mut registry = Registry::new();
    let a = registry.spawn((Position { x: 9.0, y: 9.0 }, Tag::Rock));
    let b = registry.spawn(());
    registry.set_parent(b, a).unwrap();
    registry.insert_resource(vec![7_u32]);
    registry
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Set(usize, u8),
    Insert(usize, u8),
    Remove(usize),
    Cut(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::Flip(at, bit)),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Set(at, b)),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Insert(at, b)),
        1 => any::<usize>().prop_map(Mutation::Remove),
        1 => any::<usize>().prop_map(Mutation::Cut),
    ]
}

fn mutate(bytes: &mut Vec<u8>, mutation: &Mutation) {
    let len = bytes.len().max(1);
    match *mutation {
        Mutation::Flip(at, bit) if !bytes.is_empty() => bytes[at % len] ^= 1 << bit,
        Mutation::Set(at, b) if !bytes.is_empty() => bytes[at % len] = b,
        Mutation::Insert(at, b) => bytes.insert(at % (bytes.len() + 1), b),
        Mutation::Remove(at) if !bytes.is_empty() => {
            bytes.remove(at % len);
        }
        Mutation::Cut(at) => bytes.truncate(at % len),
        _ => {}
    }
}

proptest! {
    // Bounded: about a second in a test build (20,000 loads).
    #![proptest_config(ProptestConfig { cases: 20_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_snapshots_never_panic_and_never_change_the_registry_on_failure(
        mutations in prop::collection::vec(mutation(), 1..4),
        json in any::<bool>(),
    ) {
        let format = if json { Format::Json } else { Format::Postcard };
        let snapshots = snapshots();
        let original = source();
        let mut bytes = snapshots.save(&original, format).unwrap();
        for m in &mutations {
            mutate(&mut bytes, m);
        }
        let mut registry = target();
        let before = contents(&registry);
        match snapshots.load(&mut registry, &bytes, format) {
            Err(_) => prop_assert_eq!(contents(&registry), before),
            Ok(()) => prop_assert_eq!(contents(&registry), contents(&original)),
        }
    }
}
