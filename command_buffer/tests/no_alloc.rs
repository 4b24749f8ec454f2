//! A buffer reused every tick stops allocating after warm-up: recording and
//! applying the same mix of typed commands (spawn, insert, insert_bundle,
//! remove, despawn, resources, including a skipped command) allocates
//! nothing once the queues, the reserve and the registry have grown.
//! (`Registry::insert_resource` itself boxes a resource whose type is not
//! stored yet, so the tick replaces a resource rather than re-adding one.)
//!
//! Counted by a global allocator that counts, per thread, while enabled.
//! Kept in its own test binary so no other test shares the allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use command_buffer::{CommandBuffer, CommandKind};
use ecs_engine::{Entity, Registry};

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn note_allocation() {
    // `try_with`: the thread-locals may be gone while a thread exits.
    let counting = COUNTING.try_with(Cell::get).unwrap_or(false);
    if counting {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees hold; the counting touches only
// const-initialized thread-locals without destructors, which never
// allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: forwarded as is; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: forwarded as is; `ptr` came from `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns the number of allocations it made on this thread.
fn allocations_in(f: impl FnOnce()) -> usize {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get)
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position([f32; 3]);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity([f32; 3]);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Score(u64);

/// Entities spawned per tick (fewer under Miri, which interprets every
/// step).
const PER_TICK: usize = if cfg!(miri) { 10 } else { 100 };
/// Ticks of warm-up, then of counting.
const TICKS: usize = if cfg!(miri) { 5 } else { 20 };

/// One tick: despawn last tick's entities, spawn new ones and change them.
fn tick(registry: &mut Registry, commands: &mut CommandBuffer, alive: &mut Vec<Entity>) {
    for &e in alive.iter() {
        commands.remove::<Velocity>(e);
        commands.despawn(e);
    }
    let had_previous = !alive.is_empty();
    if let Some(&first) = alive.first() {
        commands.despawn(first); // skipped: despawned above
    }
    alive.clear();
    for i in 0..PER_TICK {
        let e = commands.spawn((Position([i as f32; 3]), Velocity([1.0; 3])));
        commands.insert(e, Health(i as u32));
        commands.insert_bundle(e, (Score(1), Health(2)));
        alive.push(e);
    }
    // The registry boxes a resource of a type it does not hold, so the
    // steady state replaces one and removes an absent one.
    commands.insert_resource(Score(7));
    commands.remove_resource::<Position>();
    let report = commands.apply(registry);
    // The first tick outgrows the reserve: map its placeholders.
    for e in alive.iter_mut() {
        *e = report.resolve(0, *e).unwrap_or(*e);
    }
    assert_eq!(report.applied(CommandKind::Spawn), PER_TICK);
    assert_eq!(
        report.skipped(CommandKind::Despawn),
        usize::from(had_previous)
    );
    assert_eq!(registry.len(), PER_TICK);
}

#[test]
fn a_reused_buffer_stops_allocating_after_warm_up() {
    let mut registry = Registry::new();
    let mut commands = CommandBuffer::new();
    commands.prepare(&mut registry);
    let mut alive = Vec::with_capacity(PER_TICK);
    // Warm-up: long enough for every buffer (free list, pools, queues) to
    // reach its steady size, which takes more ticks than counted when the
    // ticks are small (under Miri).
    for _ in 0..4 * TICKS {
        tick(&mut registry, &mut commands, &mut alive);
    }
    let during_warm_ticks = allocations_in(|| {
        for _ in 0..TICKS {
            tick(&mut registry, &mut commands, &mut alive);
        }
    });
    assert_eq!(during_warm_ticks, 0);
    // The counter does count: a boxed closure that captures something
    // allocates once, even with its queue warm.
    let custom = |value: u64| {
        move |registry: &mut Registry| {
            registry.insert_resource(Score(value));
        }
    };
    commands.push(custom(1));
    commands.apply(&mut registry);
    let boxed = allocations_in(|| commands.push(custom(2)));
    assert_eq!(boxed, 1);
}
