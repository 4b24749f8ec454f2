//! Change ticks and removal logs through a command buffer.

use command_buffer::CommandBuffer;
use ecs_engine::{Added, ChangeTick, Changed, Entity, Registry, RemovedCursor};

#[derive(Debug, Clone, Copy, PartialEq)]
struct A(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct B(u32);

fn ids<F: ecs_engine::QueryFilter>(registry: &Registry, since: ChangeTick) -> Vec<Entity> {
    let mut v: Vec<Entity> = registry.view_since::<Entity, F>(since).iter().collect();
    v.sort_by_key(|e| e.to_bits());
    v
}

#[test]
fn commands_stamp_and_log() {
    let mut registry = Registry::new();
    registry.track_changes::<A>();
    let e: Vec<Entity> = (0..4).map(|i| registry.spawn((A(i), B(i)))).collect();
    let mut cursor = RemovedCursor::default();
    let since = registry.change_tick();
    registry.advance_change_tick();

    let mut buffer = CommandBuffer::new();
    buffer.insert(e[0], A(10)); // replace: changed, not added
    buffer.remove::<A>(e[1]); // logged
    buffer.despawn(e[2]); // logged
    buffer.insert_bundle(e[1], (A(11),)); // re-added after the removal
    let fresh = buffer.spawn((A(12),)); // added
    let many: Vec<Entity> = (0..3).map(|i| buffer.spawn((A(20 + i), B(0)))).collect();
    let report = buffer.apply(&mut registry);
    assert_eq!(report.total_skipped(), 0, "{report:?}");

    // Spawns from a plain buffer hand out placeholders: count them.
    let _ = (fresh, many);
    let added = ids::<Added<A>>(&registry, since);
    assert_eq!(added.len(), 5, "{added:?}");
    assert!(added.contains(&e[1]) && !added.contains(&e[0]));
    let changed = ids::<Changed<A>>(&registry, since);
    assert_eq!(changed.len(), 6, "{changed:?}");
    assert!(changed.contains(&e[0]));
    let lost: Vec<Entity> = registry.removed::<A>(&mut cursor).iter().collect();
    assert_eq!(lost, vec![e[1], e[2]]);
    // e[3] untouched.
    assert!(!ids::<Changed<A>>(&registry, since).contains(&e[3]));
}
