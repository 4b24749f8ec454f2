//! The reserve of handles: real ids from `spawn`, the refill policy,
//! placeholders when it runs dry, and giving handles back (clear, release,
//! drop, a strict abort).

use command_buffer::{CommandBuffer, CommandKind, ReservePolicy, is_placeholder};
use ecs_engine::{EcsError, Entity, EntityAllocator, Registry};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Link(Entity);

#[test]
fn spawn_hands_out_the_reserved_handle_apply_makes_alive() {
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::new();
    commands.prepare(&mut registry);
    let reserved_before = registry.entities().reserved();
    assert_eq!(reserved_before, 64);

    let e = commands.spawn((Health(1),));
    assert!(!is_placeholder(e));
    assert!(registry.entities().is_reserved(e));
    assert!(!registry.is_alive(e));
    assert_eq!(commands.reserved_len(), 63);

    commands.apply(&mut registry);
    assert!(registry.is_alive(e));
    assert_eq!(registry.get::<Health>(e), Some(&Health(1)));
    // Refilled: 64 is the policy's floor (1 spawn * 2 < 64).
    assert_eq!(commands.reserved_len(), 64);
    assert_eq!(registry.entities().reserved(), 64);
}

#[test]
fn reserve_follows_the_policy() {
    let mut registry = Registry::new();
    let policy = ReservePolicy {
        min: 4,
        per_spawn: 2,
        max: 50,
    };
    let mut commands = CommandBuffer::with_policy(policy);
    commands.prepare(&mut registry);
    assert_eq!(commands.reserved_len(), 4);

    let spawned: Vec<Entity> = (0..10).map(|_| commands.spawn_empty()).collect();
    assert_eq!(spawned.iter().filter(|e| is_placeholder(**e)).count(), 6);
    commands.apply(&mut registry);
    assert_eq!(commands.reserved_len(), 20, "2 per spawn");
    assert_eq!(registry.entities().reserved(), 20);

    let steps: [(usize, usize); 4] = [
        (8, 16), // 12 left, topped up to 2 * 8
        (0, 4),  // 16 > 2 * min: shrunk to min
        (3, 6),  // 1 left, topped up to 2 * 3
        (0, 6),  // 6 <= 2 * min: kept (hysteresis)
    ];
    for (spawns, expected) in steps {
        for _ in 0..spawns {
            assert!(!is_placeholder(commands.spawn_empty()));
        }
        commands.apply(&mut registry);
        assert_eq!(commands.reserved_len(), expected, "after {spawns} spawns");
        assert_eq!(registry.entities().reserved(), expected);
    }
    assert_eq!(registry.len(), 21);
}

#[test]
fn oversized_reserve_shrinks_to_the_target() {
    let mut registry = Registry::new();
    let policy = ReservePolicy {
        min: 4,
        per_spawn: 2,
        max: 50,
    };
    let mut commands = CommandBuffer::with_policy(policy);
    for _ in 0..100 {
        commands.spawn_empty();
    }
    commands.apply(&mut registry);
    assert_eq!(commands.reserved_len(), 50, "capped at max");
    commands.apply(&mut registry);
    assert_eq!(
        commands.reserved_len(),
        4,
        "50 > 2 * 4: shrunk to the target"
    );
    assert_eq!(registry.entities().reserved(), 4);
    assert_eq!(registry.len(), 100);
}

#[test]
fn placeholders_are_remapped_in_later_commands_of_the_buffer() {
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::with_policy(ReservePolicy::NONE);
    let first = commands.spawn((Health(1),));
    let second = commands.spawn((Link(first),));
    commands.insert(first, Link(second));
    commands.insert(second, Health(2));
    assert!(is_placeholder(first) && is_placeholder(second));
    assert_ne!(first, second);

    let report = commands.apply(&mut registry);
    assert_eq!(report.total_applied(), 4);
    assert_eq!(report.placeholders().len(), 2);
    let real_first = report.resolve(0, first).unwrap();
    let real_second = report.resolve(0, second).unwrap();
    assert!(registry.is_alive(real_first) && registry.is_alive(real_second));
    assert_ne!(real_first, real_second);
    // Command targets were remapped...
    assert_eq!(registry.get::<Health>(real_first), Some(&Health(1)));
    assert_eq!(registry.get::<Health>(real_second), Some(&Health(2)));
    // ...but not handles inside component values (documented limit).
    assert_eq!(registry.get::<Link>(real_first), Some(&Link(second)));
    assert_eq!(registry.get::<Link>(real_second), Some(&Link(first)));
    assert_eq!(
        registry.entities().reserved(),
        0,
        "policy NONE reserves nothing"
    );
}

#[test]
fn placeholder_from_an_earlier_apply_is_never_alive() {
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::with_policy(ReservePolicy::NONE);
    let old = commands.spawn((Health(1),));
    let report = commands.apply(&mut registry);
    let real_old = report.resolve(0, old).unwrap();

    let new = commands.spawn((Health(2),));
    assert_ne!(new, old, "placeholder numbers are not reused");
    commands.insert(old, Health(99));
    commands.despawn(old);
    let report = commands.apply(&mut registry);
    assert_eq!(report.skipped(CommandKind::Insert), 1);
    assert_eq!(report.skipped(CommandKind::Despawn), 1);
    let real_new = report.resolve(0, new).unwrap();
    assert_eq!(registry.get::<Health>(real_old), Some(&Health(1)));
    assert_eq!(registry.get::<Health>(real_new), Some(&Health(2)));
}

#[test]
fn placeholder_numbers_depend_only_on_the_buffer_history() {
    let record = || {
        let mut registry = Registry::new();
        let mut commands = CommandBuffer::with_policy(ReservePolicy::NONE);
        let mut handles = Vec::new();
        for round in 0..3 {
            for _ in 0..=round {
                handles.push(commands.spawn_empty());
            }
            commands.apply(&mut registry);
        }
        handles
    };
    let handles = record();
    assert_eq!(handles, record());
    let generations: Vec<u32> = handles.iter().map(|e| e.generation()).collect();
    assert_eq!(generations, [1, 2, 3, 4, 5, 6]);
}

#[test]
fn cleared_spawns_give_their_handles_back() {
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::new();
    commands.prepare(&mut registry);
    let e = commands.spawn((Health(1),));
    commands.clear();
    assert_eq!(commands.reserved_len(), 63, "clear keeps the reserve");
    assert!(registry.entities().is_reserved(e), "cancelled lazily");
    commands.prepare(&mut registry);
    assert!(!registry.entities().is_reserved(e) && !registry.is_alive(e));
    assert_eq!(commands.reserved_len(), 64);
    assert_eq!(registry.entities().reserved(), 64);
}

#[test]
fn dropped_buffers_give_their_handles_back_deterministically() {
    let mut registry = Registry::new();
    let mut survivor = CommandBuffer::new();
    survivor.prepare(&mut registry);
    let mut dropped = Vec::new();
    let mut recorded = Vec::new();
    for _ in 0..3 {
        let mut buffer = CommandBuffer::new();
        buffer.prepare(&mut registry);
        recorded.push(buffer.spawn_empty());
        dropped.push(buffer);
    }
    assert_eq!(registry.entities().reserved(), 4 * 64);
    // Dropped in an order unrelated to their reservation order.
    let last = dropped.pop();
    drop(dropped);
    drop(last);
    assert_eq!(registry.entities().reserved(), 4 * 64, "not reclaimed yet");

    survivor.apply(&mut registry);
    assert_eq!(registry.entities().reserved(), 64);
    assert!(
        recorded
            .iter()
            .all(|e| !registry.entities().is_reserved(*e))
    );

    // Reclaimed slots come back in sorted order, whatever the drop order.
    let next: Vec<u32> = (0..3).map(|_| registry.spawn(()).index()).collect();
    assert_eq!(next, [64, 65, 66]);
}

#[test]
fn release_gives_the_reserve_back_and_unbinds() {
    let mut first = Registry::new();
    let mut second = Registry::new();
    let mut commands = CommandBuffer::new();
    commands.prepare(&mut first);
    commands.release(&mut first);
    assert_eq!(
        (commands.reserved_len(), first.entities().reserved()),
        (0, 0)
    );

    commands.spawn((Health(1),));
    commands.apply(&mut second);
    assert_eq!(second.len(), 1);
    assert_eq!(second.entities().reserved(), 64);
    assert_eq!(first.entities().reserved(), 0);
}

#[test]
#[should_panic(expected = "reserved from another registry")]
fn applying_to_another_registry_panics() {
    let mut first = Registry::new();
    let mut second = Registry::new();
    let mut commands = CommandBuffer::new();
    commands.prepare(&mut first);
    commands.spawn_empty();
    commands.apply(&mut second);
}

#[test]
fn reserve_entities_guarantees_real_handles() {
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::with_policy(ReservePolicy::NONE);
    commands.reserve_entities(&mut registry, 3).unwrap();
    commands.reserve_entities(&mut registry, 2).unwrap();
    assert_eq!(commands.reserved_len(), 3, "at least, not in addition");
    let handles: Vec<Entity> = (0..4).map(|_| commands.spawn_empty()).collect();
    let placeholders: Vec<bool> = handles.iter().map(|e| is_placeholder(*e)).collect();
    assert_eq!(placeholders, [false, false, false, true]);
    commands.apply(&mut registry);
    assert_eq!(registry.len(), 4);
    assert_eq!(
        registry.entities().reserved(),
        0,
        "policy NONE: nothing kept"
    );
}

#[test]
fn live_limit_skips_placeholder_spawns_and_stops_reserving() {
    let mut registry = Registry::with_allocator(EntityAllocator::new().with_max_live(3));
    let mut commands = CommandBuffer::with_policy(ReservePolicy::NONE);
    assert_eq!(
        commands.reserve_entities(&mut registry, 5),
        Err(EcsError::TooManyEntities { limit: 3 })
    );
    assert_eq!(commands.reserved_len(), 3);
    commands.release(&mut registry);

    let spawned: Vec<Entity> = (0..5).map(|_| commands.spawn((Health(0),))).collect();
    commands.insert(spawned[4], Health(4));
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::Spawn), 3);
    assert_eq!(report.skipped(CommandKind::Spawn), 2);
    assert_eq!(report.skipped(CommandKind::Insert), 1);
    assert_eq!(report.resolve(0, spawned[4]), None);
    assert_eq!(
        report.first_skip().unwrap().reason,
        EcsError::TooManyEntities { limit: 3 }
    );
    assert_eq!(registry.len(), 3);

    let mut full = CommandBuffer::new();
    full.prepare(&mut registry); // stops quietly at the limit
    assert_eq!(full.reserved_len(), 0);
}

#[test]
fn spawn_whose_reserved_handle_was_taken_is_skipped() {
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::new();
    commands.prepare(&mut registry);
    let e = commands.spawn((Health(1),));
    registry.cancel_reserved(e).unwrap();
    let report = commands.apply(&mut registry);
    assert_eq!(report.skipped(CommandKind::Spawn), 1);
    assert_eq!(
        report.first_skip().unwrap().reason,
        EcsError::NoSuchEntity { entity: e }
    );
    assert!(registry.is_empty());
}

#[test]
fn a_batch_that_ran_dry_keeps_placeholders_until_applied() {
    let mut registry = Registry::new();
    let policy = ReservePolicy {
        min: 1,
        per_spawn: 0,
        max: 1,
    };
    let mut commands = CommandBuffer::with_policy(policy);
    let first = commands.spawn((Health(1),));
    commands.reserve_entities(&mut registry, 1).unwrap();
    let second = commands.spawn((Health(2),));
    assert!(is_placeholder(first) && is_placeholder(second));
    assert_eq!(commands.reserved_len(), 1, "kept for the next batch");

    let report = commands.apply(&mut registry);
    let healths: Vec<Option<&Health>> = [first, second]
        .iter()
        .map(|&p| registry.get::<Health>(report.resolve(0, p).unwrap()))
        .collect();
    assert_eq!(healths, [Some(&Health(1)), Some(&Health(2))]);

    let third = commands.spawn((Health(3),));
    assert!(!is_placeholder(third) && registry.entities().is_reserved(third));
    commands.apply(&mut registry);
    assert_eq!(registry.get::<Health>(third), Some(&Health(3)));
}

#[test]
fn handles_reserved_before_the_entities_were_replaced_are_dropped_not_reused() {
    let mut registry = Registry::new();
    let mut kept = CommandBuffer::new();
    kept.prepare(&mut registry);
    let mut dropped = CommandBuffer::new();
    dropped.prepare(&mut registry);
    let dropped_handles = dropped.reserve_state().handles;
    // The world to load holds both buffers' handles as reserved: they are
    // what the loaded run's own buffers will restore.
    let loaded = registry.entities().clone();
    let stale = kept.reserve_state().handles;
    drop(dropped);

    registry.replace_entities(loaded);
    assert_eq!(registry.entities_epoch(), 1);
    // The kept buffer drops its stale handles (neither spawned nor
    // cancelled) and reserves anew; the dropped buffer's orphans, of the
    // old epoch, are not cancelled in the new allocator either.
    assert!(kept.resync(&mut registry));
    assert_eq!(registry.entities().reserved(), 3 * 64);
    assert!(
        dropped_handles
            .iter()
            .all(|&e| registry.entities().is_reserved(e))
    );
    let fresh = kept.reserve_state().handles;
    assert_eq!(fresh.len(), 64);
    assert!(fresh.iter().all(|e| !stale.contains(e)));

    let e = kept.spawn((Health(7),));
    assert_eq!(e, fresh[0]);
    kept.apply(&mut registry);
    assert_eq!(registry.get::<Health>(e), Some(&Health(7)));
    assert!(stale.iter().all(|&s| !registry.is_alive(s)));
}

#[test]
#[should_panic(expected = "before the registry's entities were replaced")]
fn spawns_recorded_before_the_entities_were_replaced_are_refused_at_apply() {
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::new();
    commands.prepare(&mut registry);
    let loaded = registry.entities().clone();
    commands.spawn((Health(1),));
    registry.replace_entities(loaded);
    commands.apply(&mut registry);
}
