//! Runs of identical commands are applied as batches (spawns with reserved
//! handles, inserts, removes, despawns). A failure in the middle of a run
//! must be skipped and counted exactly as one command at a time would: at
//! its own index, with the commands before and after it applied (lenient)
//! or dropped exactly once (strict).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use command_buffer::{CommandBuffer, CommandKind, ReservePolicy, is_placeholder};
use ecs_engine::{EcsError, Entity, Registry};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Speed(u32);

/// Counts its drops.
#[derive(Debug)]
struct Tracked(Arc<AtomicUsize>);

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn reserved_buffer(registry: &mut Registry, handles: usize) -> CommandBuffer {
    let mut commands = CommandBuffer::with_policy(ReservePolicy::NONE);
    commands.reserve_entities(registry, handles).unwrap();
    commands
}

#[test]
fn a_spawn_whose_handle_was_cancelled_is_skipped_inside_its_run() {
    let mut registry = Registry::new();
    let mut commands = reserved_buffer(&mut registry, 5);
    let spawned: Vec<Entity> = (0..5)
        .map(|i| commands.spawn((Health(i), Speed(i))))
        .collect();
    registry.cancel_reserved(spawned[2]).unwrap();
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::Spawn), 4);
    assert_eq!(report.skipped(CommandKind::Spawn), 1);
    let skip = report.first_skip().unwrap();
    assert_eq!((skip.index, skip.entity), (2, spawned[2]));
    assert_eq!(skip.reason, EcsError::NoSuchEntity { entity: spawned[2] });
    for (i, &e) in spawned.iter().enumerate() {
        let expected = (i != 2).then_some(Health(i as u32));
        assert_eq!(registry.get::<Health>(e).copied(), expected);
    }
    assert_eq!((registry.len(), registry.entities().reserved()), (4, 0));
}

#[test]
fn strict_mode_stops_a_spawn_run_and_drops_the_rest_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    let mut commands = reserved_buffer(&mut registry, 4);
    let spawned: Vec<Entity> = (0..6)
        .map(|_| commands.spawn((Tracked(Arc::clone(&drops)),)))
        .collect();
    assert!(is_placeholder(spawned[4]) && is_placeholder(spawned[5]));
    registry.cancel_reserved(spawned[1]).unwrap();
    let error = commands.apply_strict(&mut registry).unwrap_err();
    assert_eq!((error.skipped.index, error.skipped.entity), (1, spawned[1]));
    assert_eq!(error.report.total_applied(), 1);
    // The skipped bundle and the four after it are dropped, once each.
    assert_eq!(drops.load(Ordering::SeqCst), 5);
    assert!(registry.is_alive(spawned[0]));
    assert_eq!((registry.len(), registry.entities().reserved()), (1, 0));
    drop(registry);
    assert_eq!(drops.load(Ordering::SeqCst), 6);
}

#[test]
fn a_run_mixing_reserved_and_placeholder_spawns_applies_in_order() {
    let mut registry = Registry::new();
    let mut commands = reserved_buffer(&mut registry, 2);
    let spawned: Vec<Entity> = (0..4).map(|i| commands.spawn((Health(i),))).collect();
    commands.insert(spawned[3], Speed(3));
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::Spawn), 4);
    let real: Vec<Entity> = spawned
        .iter()
        .map(|&e| report.resolve(0, e).unwrap_or(e))
        .collect();
    for (i, &e) in real.iter().enumerate() {
        assert_eq!(registry.get::<Health>(e), Some(&Health(i as u32)));
    }
    assert_eq!(registry.get::<Speed>(real[3]), Some(&Speed(3)));
}

#[test]
fn a_run_of_bundles_naming_a_type_twice_is_refused_spawn_by_spawn() {
    let mut registry = Registry::new();
    let mut commands = reserved_buffer(&mut registry, 3);
    let a = commands.spawn((Health(1), Health(2)));
    let b = commands.spawn((Health(3), Health(4)));
    let c = commands.spawn((Health(5),));
    let report = commands.apply(&mut registry);
    assert_eq!(report.skipped(CommandKind::Spawn), 2);
    assert_eq!(report.applied(CommandKind::Spawn), 1);
    assert!(!registry.is_alive(a) && !registry.is_alive(b));
    assert!(!registry.entities().is_reserved(a) && !registry.entities().is_reserved(b));
    assert_eq!(registry.get::<Health>(c), Some(&Health(5)));
}

#[test]
fn dead_targets_inside_insert_remove_and_despawn_runs_are_skipped_in_place() {
    let mut registry = Registry::new();
    let alive: Vec<Entity> = (0..4).map(|i| registry.spawn((Health(i),))).collect();
    let dead = registry.spawn(());
    registry.despawn(dead).unwrap();
    let mut commands = CommandBuffer::new();
    commands.insert(alive[0], Speed(0));
    commands.insert(dead, Speed(9));
    commands.insert(alive[1], Speed(1));
    commands.remove::<Speed>(alive[0]);
    commands.remove::<Speed>(alive[2]); // no Speed: a no-op
    commands.remove::<Speed>(dead);
    commands.remove::<Speed>(alive[1]);
    commands.despawn(alive[0]);
    commands.despawn(dead);
    commands.despawn(alive[3]);
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::Insert), 2);
    assert_eq!(report.skipped(CommandKind::Insert), 1);
    assert_eq!(report.applied(CommandKind::Remove), 2);
    assert_eq!(report.noops(CommandKind::Remove), 1);
    assert_eq!(report.skipped(CommandKind::Remove), 1);
    assert_eq!(report.applied(CommandKind::Despawn), 2);
    assert_eq!(report.skipped(CommandKind::Despawn), 1);
    let skip = report.first_skip().unwrap();
    assert_eq!(
        (skip.index, skip.kind, skip.entity),
        (1, CommandKind::Insert, dead)
    );
    assert_eq!(registry.count::<Speed>(), 0);
    assert_eq!(registry.len(), 2);

    // Strict mode reports the skipped remove at its own index.
    let mut commands = CommandBuffer::new();
    commands.insert(alive[1], Speed(1));
    commands.remove::<Speed>(alive[1]);
    commands.remove::<Speed>(dead);
    commands.remove::<Speed>(alive[2]);
    let error = commands.apply_strict(&mut registry).unwrap_err();
    assert_eq!(
        (error.skipped.index, error.skipped.kind),
        (2, CommandKind::Remove)
    );
    assert_eq!(error.report.total_applied(), 2);
}

/// Parent/child style: two bundle types recorded interleaved, the second
/// storing the first's handle, sharing `Health`.
fn record_pairs(commands: &mut CommandBuffer, pairs: u32) -> Vec<(Entity, Entity)> {
    (0..pairs)
        .map(|i| {
            let parent = commands.spawn((Health(i), Speed(i)));
            let child = commands.spawn((Health(1000 + i), Tracked(Arc::new(AtomicUsize::new(0)))));
            commands.insert(child, Speed(2000 + i));
            commands.despawn(child);
            let kept = commands.spawn((Health(3000 + i), Speed(parent.index())));
            (parent, kept)
        })
        .collect()
}

#[test]
fn interleaved_spawns_of_several_bundle_types_keep_handles_components_and_reports() {
    let mut registry = Registry::new();
    let mut commands = reserved_buffer(&mut registry, 64);
    let mut spawned = Vec::new();
    for i in 0..16u32 {
        let parent = commands.spawn((Health(i), Speed(i)));
        let child = commands.spawn((Health(100 + i), Speed(parent.index())));
        spawned.push((parent, child));
    }
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::Spawn), 32);
    assert_eq!(report.total_applied(), 32);
    for (i, &(parent, child)) in spawned.iter().enumerate() {
        let i = i as u32;
        assert_eq!(registry.get::<Health>(parent), Some(&Health(i)));
        assert_eq!(registry.get::<Speed>(parent), Some(&Speed(i)));
        assert_eq!(registry.get::<Health>(child), Some(&Health(100 + i)));
        assert_eq!(registry.get::<Speed>(child), Some(&Speed(parent.index())));
    }
    assert_eq!(registry.len(), 32);

    // The same, with other commands between the groups.
    let mut commands = reserved_buffer(&mut registry, 64);
    let pairs = record_pairs(&mut commands, 8);
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::Spawn), 24);
    assert_eq!(report.applied(CommandKind::Despawn), 8);
    assert_eq!(report.applied(CommandKind::Insert), 8);
    for (i, &(parent, kept)) in pairs.iter().enumerate() {
        let i = i as u32;
        assert_eq!(registry.get::<Speed>(parent), Some(&Speed(i)));
        assert_eq!(registry.get::<Health>(kept), Some(&Health(3000 + i)));
        assert_eq!(registry.get::<Speed>(kept), Some(&Speed(parent.index())));
    }
    assert_eq!(registry.len(), 32 + 16);
}

#[test]
fn a_cancelled_handle_in_interleaved_spawns_is_skipped_at_its_own_index() {
    let mut registry = Registry::new();
    let mut commands = reserved_buffer(&mut registry, 8);
    let a = commands.spawn((Health(0),));
    let b = commands.spawn((Speed(1),));
    let c = commands.spawn((Health(2),));
    let d = commands.spawn((Speed(3),));
    registry.cancel_reserved(c).unwrap();
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::Spawn), 3);
    let skip = report.first_skip().unwrap();
    assert_eq!((skip.index, skip.entity), (2, c));
    assert!(registry.is_alive(a) && registry.is_alive(b) && registry.is_alive(d));

    let mut commands = reserved_buffer(&mut registry, 8);
    let a = commands.spawn((Health(0),));
    let b = commands.spawn((Speed(1),));
    let c = commands.spawn((Health(2),));
    registry.cancel_reserved(b).unwrap();
    let error = commands.apply_strict(&mut registry).unwrap_err();
    assert_eq!((error.skipped.index, error.skipped.entity), (1, b));
    assert!(registry.is_alive(a) && !registry.is_alive(c));
}

#[test]
fn interleaved_spawns_past_the_reserve_resolve_their_placeholders_in_order() {
    let mut registry = Registry::new();
    let mut commands = reserved_buffer(&mut registry, 3);
    let spawned: Vec<Entity> = (0..6u32)
        .map(|i| {
            if i % 2 == 0 {
                commands.spawn((Health(i),))
            } else {
                commands.spawn((Speed(i),))
            }
        })
        .collect();
    assert!(is_placeholder(spawned[3]) && !is_placeholder(spawned[2]));
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::Spawn), 6);
    for (i, &e) in spawned.iter().enumerate() {
        let e = report.resolve(0, e).unwrap_or(e);
        if i % 2 == 0 {
            assert_eq!(registry.get::<Health>(e), Some(&Health(i as u32)));
        } else {
            assert_eq!(registry.get::<Speed>(e), Some(&Speed(i as u32)));
        }
    }
}
