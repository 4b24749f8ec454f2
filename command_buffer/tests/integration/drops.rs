//! Every component, resource and closure a buffer holds is dropped exactly
//! once: when applied and later removed, when skipped, when replaced, when
//! cleared, when discarded by strict mode or a panic, and when the buffer is
//! dropped unapplied.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use command_buffer::{ApplyMode, CommandBuffer, CommandKind, ReservePolicy};
use ecs_engine::{ComponentDescriptor, ComponentId, EcsError, Entity, RawComponent, Registry};

/// Counts its drops in a counter shared by one test.
#[derive(Debug)]
struct Tracked(Arc<AtomicUsize>);

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A second tracked type, for bundles.
#[derive(Debug)]
struct Other(#[expect(dead_code, reason = "only dropped")] Tracked);

struct Counter(Arc<AtomicUsize>);

impl Counter {
    fn new() -> Self {
        Counter(Arc::new(AtomicUsize::new(0)))
    }
    fn make(&self) -> Tracked {
        Tracked(Arc::clone(&self.0))
    }
    fn other(&self) -> Other {
        Other(self.make())
    }
    fn dropped(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

fn dead_entity(registry: &mut Registry) -> Entity {
    let e = registry.spawn(());
    registry.despawn(e).unwrap();
    e
}

#[test]
fn applied_components_are_dropped_once_by_the_registry() {
    let count = Counter::new();
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::new();
    commands.prepare(&mut registry);
    let e = commands.spawn((count.make(), count.other()));
    let f = registry.spawn(());
    commands.insert(f, count.make());
    commands.insert_resource(count.make());
    commands.apply(&mut registry);
    assert_eq!(count.dropped(), 0);

    registry.despawn(e).unwrap();
    assert_eq!(count.dropped(), 2);
    drop(registry);
    assert_eq!(count.dropped(), 4);
    drop(commands);
    assert_eq!(count.dropped(), 4);
}

#[test]
fn replaced_and_removed_values_are_dropped_once() {
    let count = Counter::new();
    let mut registry = Registry::new();
    let e = registry.spawn((count.make(),));
    let mut commands = CommandBuffer::new();
    commands.insert(e, count.make()); // replaces the first
    commands.insert_resource(count.make());
    commands.insert_resource(count.make()); // replaces the resource
    commands.remove::<Tracked>(e);
    commands.remove_resource::<Tracked>();
    commands.apply(&mut registry);
    assert_eq!(count.dropped(), 4);
    assert!(registry.get::<Tracked>(e).is_none());
    drop(registry);
    assert_eq!(count.dropped(), 4);
}

#[test]
fn skipped_commands_drop_their_payload_during_apply() {
    let count = Counter::new();
    let mut registry = Registry::new();
    let dead = dead_entity(&mut registry);
    let mut commands = CommandBuffer::new();
    commands.insert(dead, count.make());
    commands.insert_bundle(dead, (count.make(), count.other()));
    let doomed = commands.spawn((count.make(),));
    commands.despawn(doomed);
    commands.insert(doomed, count.make()); // skipped: despawned just before
    let report = commands.apply(&mut registry);
    assert_eq!(report.total_skipped(), 3);
    assert_eq!(count.dropped(), 5);
    drop(registry);
    drop(commands);
    assert_eq!(count.dropped(), 5);
}

#[test]
fn never_applied_commands_are_dropped_with_the_buffer() {
    let count = Counter::new();
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::new();
    commands.prepare(&mut registry);
    let e = commands.spawn((count.make(), count.other()));
    commands.insert(e, count.make());
    commands.insert_bundle(e, (count.other(),));
    commands.insert_resource(count.make());
    let captured = count.make();
    commands.push(move |_: &mut Registry| drop(captured));
    assert_eq!(count.dropped(), 0);
    drop(commands);
    assert_eq!(count.dropped(), 6);
    drop(registry);
    assert_eq!(count.dropped(), 6);
}

#[test]
fn cleared_commands_are_dropped_at_clear() {
    let count = Counter::new();
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::with_policy(ReservePolicy::NONE);
    let e = commands.spawn((count.make(),));
    commands.insert(e, count.make());
    commands.clear();
    assert_eq!(count.dropped(), 2);
    let report = commands.apply(&mut registry);
    assert_eq!(report.commands(), 0);
    drop(commands);
    assert_eq!(count.dropped(), 2);
}

/// Panics when dropped.
struct PanicsInDrop;

impl Drop for PanicsInDrop {
    fn drop(&mut self) {
        panic!("PanicsInDrop");
    }
}

#[test]
fn a_clear_whose_payload_panics_in_drop_still_empties_the_buffer() {
    let count = Counter::new();
    let (mut registry, r, seen) = raw_world();
    let target = registry.spawn(());
    let mut commands = CommandBuffer::new();
    commands.prepare(&mut registry);
    let reserved = commands.spawn((count.make(),));
    commands.spawn((PanicsInDrop,));
    commands.insert(reserved, count.make());
    insert_r(&mut commands, &registry, r, target, 7);
    let caught = catch_unwind(AssertUnwindSafe(|| commands.clear()));
    assert!(caught.is_err(), "the Drop panic resumes after the clear");
    assert_eq!(count.dropped(), 2, "every other payload dropped once");
    assert_eq!(sorted(&seen), [7], "the run-time value too");
    assert!(commands.is_empty());
    // Nothing recorded before the clear is applied later.
    let report = commands.apply(&mut registry);
    assert_eq!(report.commands(), 0);
    assert!(!registry.is_alive(reserved));
    assert!(!registry.entities().is_reserved(reserved));
    assert!(!registry.has_id(target, r));
}

#[test]
fn strict_mode_drops_the_failed_command_and_the_rest_once() {
    let count = Counter::new();
    let mut registry = Registry::new();
    let dead = dead_entity(&mut registry);
    let mut commands = CommandBuffer::new();
    let kept = commands.spawn((count.make(),));
    commands.insert(dead, count.make());
    commands.spawn((count.make(), count.other()));
    commands.insert_resource(count.make());
    assert!(commands.apply_strict(&mut registry).is_err());
    assert_eq!(count.dropped(), 4);
    drop(commands);
    assert_eq!(count.dropped(), 4);
    // `kept` was a placeholder (no prepare): find the one entity it became.
    assert!(command_buffer::is_placeholder(kept));
    let live: Vec<Entity> = registry.entities().iter().collect();
    assert_eq!(live.len(), 1);
    registry.despawn(live[0]).unwrap();
    assert_eq!(count.dropped(), 5);
}

#[test]
fn a_panicking_closure_drops_the_rest_once() {
    let count = Counter::new();
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::new();
    let payload = count.make();
    commands.push(move |_: &mut Registry| {
        let _held = payload;
        panic!("system bug");
    });
    commands.spawn((count.make(),));
    commands.insert_resource(count.make());
    let outcome = catch_unwind(AssertUnwindSafe(|| commands.apply(&mut registry)));
    assert!(outcome.is_err());
    assert_eq!(count.dropped(), 3);
    assert!(registry.is_empty());
    drop(commands);
    drop(registry);
    assert_eq!(count.dropped(), 3);
}

#[test]
fn reused_buffer_drops_exactly_what_it_was_given() {
    let count = Counter::new();
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::new();
    let mut made = 0;
    for _ in 0..10 {
        let e = commands.spawn((count.make(),));
        commands.insert(e, count.make()); // replaces the spawned one
        commands.despawn(e);
        commands.insert(e, count.make()); // skipped
        made += 3;
        commands.apply(&mut registry);
        assert_eq!(count.dropped(), made);
    }
    assert!(registry.is_empty());
}

/// A registry with run-time component `R` (a 16-byte, 16-aligned value
/// whose first 8 bytes are an id) and the ids its destructor saw.
fn raw_world() -> (Registry, ComponentId, Arc<std::sync::Mutex<Vec<u64>>>) {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let layout = std::alloc::Layout::from_size_align(16, 16).unwrap();
    // SAFETY: the destructor checks alignment and reads the id of a
    // 16-byte value.
    let descriptor = unsafe {
        ComponentDescriptor::new("R", layout).with_drop(move |ptr| {
            assert_eq!(ptr.as_ptr() as usize % 16, 0, "aligned drop");
            log.lock().unwrap().push(ptr.cast::<u64>().read());
        })
    };
    let mut registry = Registry::new();
    let r = registry.register_runtime(descriptor).unwrap();
    (registry, r, seen)
}

/// Records an `insert_raw` of `R` with `id`, from an unaligned source.
fn insert_r(commands: &mut CommandBuffer, registry: &Registry, r: ComponentId, e: Entity, id: u64) {
    let mut bytes = [0u8; 17];
    bytes[1..9].copy_from_slice(&id.to_ne_bytes());
    let info = registry.component_info(r).unwrap();
    // SAFETY: `info` is `r`'s; the bytes are a valid 16-byte value.
    commands.insert_raw(e, unsafe {
        RawComponent::new(r, info, &RawComponent::bytes_of(&bytes)[1..])
    });
}

fn sorted(seen: &std::sync::Mutex<Vec<u64>>) -> Vec<u64> {
    let mut ids = seen.lock().unwrap().clone();
    ids.sort_unstable();
    ids
}

#[test]
fn raw_values_are_dropped_once_wherever_they_end() {
    let (mut registry, r, seen) = raw_world();
    let alive = registry.spawn(());
    let dead = dead_entity(&mut registry);
    let mut commands = CommandBuffer::new();

    // Applied, then replaced; skipped on a dead entity.
    insert_r(&mut commands, &registry, r, alive, 1);
    insert_r(&mut commands, &registry, r, alive, 2);
    insert_r(&mut commands, &registry, r, dead, 3);
    let report = commands.apply(&mut registry);
    assert_eq!(report.applied(CommandKind::InsertRaw), 2);
    assert_eq!(report.skipped(CommandKind::InsertRaw), 1);
    let skip = report.first_skip().unwrap();
    assert_eq!(skip.type_name.as_deref(), Some("R"));
    assert!(skip.to_string().contains("insert_raw `R` on"), "{skip}");
    assert_eq!(sorted(&seen), [1, 3]);

    // Cleared unapplied.
    insert_r(&mut commands, &registry, r, alive, 4);
    commands.clear();
    assert_eq!(sorted(&seen), [1, 3, 4]);

    // Discarded by a strict stop.
    commands.despawn(dead);
    insert_r(&mut commands, &registry, r, alive, 5);
    let error = commands
        .apply_with(&mut registry, ApplyMode::Strict)
        .unwrap_err();
    assert_eq!(error.skipped.kind, CommandKind::Despawn);
    assert_eq!(sorted(&seen), [1, 3, 4, 5]);

    // Left in a dropped buffer.
    insert_r(&mut commands, &registry, r, alive, 6);
    drop(commands);
    assert_eq!(sorted(&seen), [1, 3, 4, 5, 6]);

    // Removed by id, then the registry's own drop.
    let mut commands = CommandBuffer::new();
    commands.remove_by_id(alive, r);
    commands.remove_by_id(alive, r);
    commands.remove_by_id(dead, r);
    let report = commands.apply(&mut registry);
    assert_eq!(
        (
            report.applied(CommandKind::RemoveById),
            report.noops(CommandKind::RemoveById),
            report.skipped(CommandKind::RemoveById)
        ),
        (1, 1, 1)
    );
    assert_eq!(sorted(&seen), [1, 2, 3, 4, 5, 6]);
    insert_r(&mut commands, &registry, r, alive, 7);
    commands.apply(&mut registry);
    drop(registry);
    assert_eq!(sorted(&seen), [1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn raw_commands_follow_placeholders() {
    let (mut registry, r, seen) = raw_world();
    let mut commands = CommandBuffer::with_policy(ReservePolicy::NONE);
    let first = commands.spawn(());
    let second = commands.spawn(());
    insert_r(&mut commands, &registry, r, first, 1);
    insert_r(&mut commands, &registry, r, second, 2);
    commands.remove_by_id(second, r);
    commands.despawn(first);
    insert_r(&mut commands, &registry, r, first, 3); // first is dead by then
    let report = commands.apply(&mut registry);
    let (first, second) = (
        report.resolve(0, first).unwrap(),
        report.resolve(0, second).unwrap(),
    );
    assert!(!registry.is_alive(first));
    assert!(registry.is_alive(second) && !registry.has_id(second, r));
    assert_eq!(report.skipped(CommandKind::InsertRaw), 1);
    assert_eq!(
        report.first_skip().unwrap().reason,
        EcsError::NoSuchEntity { entity: first }
    );
    assert_eq!(sorted(&seen), [1, 2, 3]);
}
