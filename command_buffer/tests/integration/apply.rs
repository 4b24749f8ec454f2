//! Applying buffers: recording order, handles used at once, skipped
//! commands per kind, stale handles, strict mode, flush order, panics.

use std::panic::{AssertUnwindSafe, catch_unwind};

use command_buffer::{
    ApplyMode, CommandBuffer, CommandKind, SkippedCommand, apply_all, apply_all_with,
};
use ecs_engine::{EcsError, Entity, Registry};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position([f32; 3]);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Link(Entity);

fn prepared() -> (Registry, CommandBuffer) {
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::new();
    commands.prepare(&mut registry);
    (registry, commands)
}

#[test]
fn buffer_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<CommandBuffer>();
}

#[test]
fn spawned_handle_is_usable_at_once() {
    let (mut registry, mut commands) = prepared();
    let parent = commands.spawn((Position([1.0, 2.0, 3.0]),));
    let child = commands.spawn((Link(parent),));
    commands.insert(parent, Health(7));
    let doomed = commands.spawn((Health(1),));
    commands.insert(child, Link(doomed));
    commands.despawn(doomed);
    assert_eq!(commands.len(), 6);

    let report = commands.apply(&mut registry);
    assert_eq!(report.total_applied(), 6);
    assert_eq!(report.total_skipped(), 0);
    assert!(report.placeholders().is_empty());
    assert_eq!(registry.len(), 2);
    assert_eq!(registry.get::<Health>(parent), Some(&Health(7)));
    assert_eq!(
        registry.get::<Position>(parent),
        Some(&Position([1.0, 2.0, 3.0]))
    );
    assert_eq!(registry.get::<Link>(child), Some(&Link(doomed)));
    assert!(!registry.is_alive(doomed));
}

#[test]
fn commands_run_in_recording_order() {
    let (mut registry, mut commands) = prepared();
    let e = registry.spawn((Health(0),));
    commands.insert(e, Health(1));
    commands.remove::<Health>(e);
    commands.insert(e, Health(2));
    commands.insert_resource(1_u64);
    commands.remove_resource::<u64>();
    commands.insert_resource(2_u64);
    commands.push(move |registry: &mut Registry| {
        let seen = registry.get::<Health>(e).map(|h| h.0);
        registry.insert_resource(seen);
    });
    commands.insert(e, Health(3));
    commands.apply(&mut registry);
    assert_eq!(registry.get::<Health>(e), Some(&Health(3)));
    assert_eq!(registry.resource::<u64>(), Some(&2));
    assert_eq!(registry.resource::<Option<u32>>(), Some(&Some(2)));
}

#[test]
fn skips_and_noops_are_counted_per_kind() {
    let (mut registry, mut commands) = prepared();
    let dead = registry.spawn(());
    registry.despawn(dead).unwrap();
    let live = registry.spawn(());

    commands.despawn(dead);
    commands.insert(dead, Health(1));
    commands.insert_bundle(dead, (Health(1), Position([0.0; 3])));
    commands.remove::<Health>(dead);
    commands.remove::<Health>(live); // alive without Health: no-op
    commands.remove_resource::<u8>(); // absent: no-op
    commands.insert(live, Health(5));
    let report = commands.apply(&mut registry);

    for kind in [
        CommandKind::Despawn,
        CommandKind::Insert,
        CommandKind::InsertBundle,
        CommandKind::Remove,
    ] {
        assert_eq!(report.skipped(kind), 1, "{kind}");
    }
    assert_eq!(report.noops(CommandKind::Remove), 1);
    assert_eq!(report.noops(CommandKind::RemoveResource), 1);
    assert_eq!(report.applied(CommandKind::Insert), 1);
    assert_eq!(
        (
            report.total_applied(),
            report.total_skipped(),
            report.total_noops()
        ),
        (1, 4, 2)
    );
    assert_eq!(report.commands(), 7);
    let first = report.first_skip().unwrap();
    assert_eq!(
        (first.index, first.kind, first.entity),
        (0, CommandKind::Despawn, dead)
    );
    assert_eq!(registry.get::<Health>(live), Some(&Health(5)));
    assert_eq!(registry.count::<Position>(), 0);
}

#[test]
fn stale_handle_never_reaches_the_reused_slot() {
    let mut registry = Registry::new();
    let old = registry.spawn((Health(1),));
    registry.despawn(old).unwrap();
    let new = registry.spawn((Health(2),));
    assert_eq!(new.index(), old.index(), "the slot was reused");

    let mut commands = CommandBuffer::new();
    commands.insert(old, Health(99));
    commands.remove::<Health>(old);
    commands.despawn(old);
    let report = commands.apply(&mut registry);
    assert_eq!(report.total_skipped(), 3);
    assert!(registry.is_alive(new));
    assert_eq!(registry.get::<Health>(new), Some(&Health(2)));
}

#[test]
fn earlier_buffer_despawn_makes_later_commands_skip() {
    let mut registry = Registry::new();
    let e = registry.spawn((Health(1),));
    let mut buffers = [CommandBuffer::new(), CommandBuffer::new()];
    buffers[1].insert(e, Health(2));
    buffers[0].despawn(e);
    let report = apply_all(&mut registry, &mut buffers);
    assert_eq!(report.applied(CommandKind::Despawn), 1);
    assert_eq!(report.skipped(CommandKind::Insert), 1);
    let skip = report.first_skip().unwrap();
    assert_eq!((skip.buffer, skip.index, skip.entity), (1, 0, e));
    assert!(registry.is_empty());
}

#[test]
fn apply_all_uses_the_given_order() {
    let mut registry = Registry::new();
    let mut buffers: Vec<CommandBuffer> = (0..4).map(|_| CommandBuffer::new()).collect();
    for (i, buffer) in buffers.iter_mut().enumerate().rev() {
        buffer.insert_resource(i);
        buffer.push(move |registry: &mut Registry| {
            registry.insert_resource(format!("{i}"));
        });
    }
    apply_all(&mut registry, &mut buffers);
    assert_eq!(registry.resource::<usize>(), Some(&3));
    assert_eq!(registry.resource::<String>().map(String::as_str), Some("3"));

    buffers[2].insert_resource(0_usize);
    buffers[0].insert_resource(5_usize);
    apply_all(&mut registry, buffers.iter_mut().rev());
    assert_eq!(registry.resource::<usize>(), Some(&5));
}

#[test]
fn strict_mode_applies_the_prefix_and_drops_the_rest() {
    let (mut registry, mut commands) = prepared();
    let gone = registry.spawn(());
    registry.despawn(gone).unwrap();

    let kept = commands.spawn((Health(1),));
    commands.insert(kept, Health(2));
    commands.insert(gone, Position([0.0; 3]));
    let discarded = commands.spawn((Health(3),));
    commands.insert_resource(7_u8);
    let error = commands.apply_strict(&mut registry).unwrap_err();
    assert_eq!(
        error.skipped,
        SkippedCommand {
            buffer: 0,
            index: 2,
            kind: CommandKind::Insert,
            entity: gone,
            type_name: Some(std::any::type_name::<Position>().into()),
            reason: EcsError::NoSuchEntity { entity: gone },
        }
    );
    assert_eq!(error.report.applied(CommandKind::Spawn), 1);
    assert_eq!(error.report.applied(CommandKind::Insert), 1);
    assert_eq!(
        error.report.commands(),
        2,
        "the failing command is not counted"
    );
    assert_eq!(registry.get::<Health>(kept), Some(&Health(2)));
    assert!(!registry.is_alive(discarded));
    assert!(
        !registry.entities().is_reserved(discarded),
        "the discarded spawn's handle is cancelled, not reused"
    );
    assert!(!registry.contains_resource::<u8>());
    assert_eq!(registry.count::<Position>(), 0);
    assert!(commands.is_empty());

    // The buffer is usable again, and a new spawn does not get the old handle.
    let next = commands.spawn_empty();
    assert_ne!(next, discarded);
    let report = commands.apply_strict(&mut registry).unwrap();
    assert_eq!(report.applied(CommandKind::Spawn), 1);
    assert!(registry.is_alive(next));
}

#[test]
fn strict_apply_all_leaves_later_buffers_untouched() {
    let mut registry = Registry::new();
    let gone = registry.spawn(());
    registry.despawn(gone).unwrap();
    let mut buffers: Vec<CommandBuffer> = (0..3).map(|_| CommandBuffer::new()).collect();
    buffers[0].insert_resource(1_u8);
    buffers[1].insert_resource(2_u8);
    buffers[1].despawn(gone);
    buffers[1].insert_resource(3_u8);
    buffers[2].insert_resource(4_u8);

    let error = apply_all_with(&mut registry, &mut buffers, ApplyMode::Strict).unwrap_err();
    assert_eq!(
        (
            error.skipped.buffer,
            error.skipped.index,
            error.skipped.kind
        ),
        (1, 1, CommandKind::Despawn)
    );
    assert_eq!(error.report.applied(CommandKind::InsertResource), 2);
    assert_eq!(registry.resource::<u8>(), Some(&2));
    assert_eq!(
        buffers.iter().map(CommandBuffer::len).collect::<Vec<_>>(),
        [0, 0, 1]
    );
    // Lenient mode would have gone on.
    let report = apply_all_with(&mut registry, &mut buffers[2..], ApplyMode::Lenient).unwrap();
    assert_eq!(report.applied(CommandKind::InsertResource), 1);
    assert_eq!(registry.resource::<u8>(), Some(&4));
}

#[test]
fn noop_remove_is_not_an_error_in_strict_mode() {
    let mut registry = Registry::new();
    let e = registry.spawn(());
    let mut commands = CommandBuffer::new();
    commands.remove::<Health>(e);
    commands.remove_resource::<Health>();
    let report = commands.apply_strict(&mut registry).unwrap();
    assert_eq!(report.total_noops(), 2);
}

#[test]
fn error_message_names_command_type_and_entity() {
    let mut registry = Registry::new();
    let gone = registry.spawn(());
    registry.despawn(gone).unwrap();
    let mut commands = CommandBuffer::new();
    commands.remove::<Health>(gone);
    let error = commands.apply_strict(&mut registry).unwrap_err();
    let text = error.to_string();
    assert!(
        text.starts_with("strict apply stopped: command #0 of buffer 0 (remove `"),
        "{text}"
    );
    assert!(
        text.contains("Health` on 0:1) was skipped: entity 0:1 is not alive"),
        "{text}"
    );
}

#[test]
fn panicking_custom_command_leaves_the_buffer_usable() {
    let (mut registry, mut commands) = prepared();
    let before = commands.spawn((Health(1),));
    commands.push(|_: &mut Registry| panic!("system bug"));
    let after = commands.spawn((Health(2),));
    let outcome = catch_unwind(AssertUnwindSafe(|| commands.apply(&mut registry)));
    assert!(outcome.is_err());
    assert!(commands.is_empty());
    assert!(registry.is_alive(before));
    assert!(!registry.is_alive(after));

    let again = commands.spawn((Health(3),));
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::Spawn), 1);
    assert!(registry.is_alive(again));
    assert!(
        !registry.entities().is_reserved(after),
        "cancelled on the next apply"
    );
    assert_eq!(registry.len(), 2);
}

#[test]
fn applying_reuses_the_buffer() {
    let (mut registry, mut commands) = prepared();
    for round in 0..3_u32 {
        let e = commands.spawn((Health(round),));
        commands.insert(e, Position([round as f32; 3]));
        assert_eq!(commands.len(), 2);
        let report = commands.apply(&mut registry);
        assert_eq!(report.total_applied(), 2);
        assert!(commands.is_empty());
        assert_eq!(registry.get::<Health>(e), Some(&Health(round)));
    }
    assert_eq!(registry.len(), 3);
}

#[test]
fn a_nested_bundle_is_a_skipped_command() {
    let (mut registry, mut commands) = prepared();
    let refused = commands.spawn(((Health(1), Position([0.0; 3])),));
    let kept = commands.spawn((Health(2),));
    commands.insert(kept, (Health(3),));
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::Spawn), 1);
    assert_eq!(report.skipped(CommandKind::Spawn), 1);
    assert_eq!(report.skipped(CommandKind::Insert), 1);
    let skip = report.first_skip().unwrap();
    assert_eq!(skip.entity, refused);
    assert!(
        matches!(&skip.reason, EcsError::NotAComponent { reason, .. } if reason.contains("do not nest")),
        "{:?}",
        skip.reason
    );
    assert!(!registry.is_alive(refused));
    assert!(!registry.entities().is_reserved(refused));
    assert_eq!(registry.get::<Health>(kept), Some(&Health(2)));
}

#[test]
fn a_bundle_naming_a_type_twice_is_a_skipped_command() {
    let (mut registry, mut commands) = prepared();
    let kept = commands.spawn((Health(1),));
    let refused = commands.spawn((Health(2), Position([0.0; 3]), Health(3)));
    commands.insert_bundle(kept, (Health(4), Health(5)));
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::Spawn), 1);
    assert_eq!(report.skipped(CommandKind::Spawn), 1);
    let skip = report.first_skip().unwrap();
    assert_eq!(skip.entity, refused);
    assert!(
        matches!(&skip.reason, EcsError::DuplicateBundleComponent { component, .. } if component.ends_with("Health")),
        "{:?}",
        skip.reason
    );
    assert_eq!(registry.get::<Health>(kept), Some(&Health(1)));
    assert!(!registry.is_alive(refused));
    assert!(
        !registry.entities().is_reserved(refused),
        "its handle is given back"
    );
    assert_eq!(registry.count::<Position>(), 0);
}
