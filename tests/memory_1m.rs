//! `memory_1m`: the heap bytes a registry holds for 1,000,000 entities with
//! (Position, Velocity), counted by a counting global allocator, beside the
//! 24 bytes of component data per entity. Run with `--nocapture` to see the
//! figures; the test fails above the 56 bytes per entity target.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use ecs_runtime::ecs_engine::{Entity, Registry};

/// Bytes currently allocated by this test binary.
static ALLOCATED: AtomicIsize = AtomicIsize::new(0);

struct Counting;

// SAFETY: forwards every call to the system allocator unchanged and only
// counts the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        ALLOCATED.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Position([f32; 3]);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Velocity([f32; 3]);

const ENTITIES: usize = 1_000_000;
const TARGET_BYTES_PER_ENTITY: f64 = 56.0;

fn allocated() -> isize {
    ALLOCATED.load(Ordering::Relaxed)
}

#[test]
fn memory_1m() {
    let before = allocated();
    let mut registry = Registry::new();
    registry.spawn_batch((0..ENTITIES).map(|i| (Position([i as f32; 3]), Velocity([1.0; 3]))));
    let full = (allocated() - before) as f64;
    // The handles in spawn order (the pools are in spawn order after a
    // batch), counted out of the figures below.
    let handles: Vec<Entity> = registry.pool::<Position>().unwrap().entities().to_vec();
    let handle_bytes = (handles.capacity() * std::mem::size_of::<Entity>()) as isize;
    let per_entity = full / ENTITIES as f64;
    println!(
        "memory_1m: {full} bytes for {ENTITIES} entities = {per_entity:.2} bytes/entity \
         ({:.2} of them component data); registry's own count: {}",
        24.0,
        registry.heap_bytes()
    );
    // The registry's own count leaves out only small fixed-size parts (the
    // type map, the boxed pool headers).
    let own = registry.heap_bytes() as f64;
    assert!(
        own <= full && full - own < 4096.0,
        "heap_bytes() {own} vs allocator {full}"
    );
    assert!(
        per_entity <= TARGET_BYTES_PER_ENTITY,
        "{per_entity:.2} bytes per entity is over the {TARGET_BYTES_PER_ENTITY} target"
    );

    for &e in handles.iter().step_by(2) {
        registry.despawn(e).unwrap();
    }
    let half = (allocated() - before - handle_bytes) as f64;
    println!(
        "memory_1m after despawning every other entity: {half} bytes for {} live = {:.2} bytes/live entity",
        registry.len(),
        half / registry.len() as f64
    );
    assert_eq!(registry.len(), ENTITIES / 2);
    assert_eq!(
        registry.get::<Position>(handles[1]),
        Some(&Position([1.0; 3]))
    );
    assert_eq!(registry.get::<Velocity>(handles[0]), None);
}
