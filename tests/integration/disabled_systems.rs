//! Disabled entities seen from systems: queries skip them unless they name
//! `Disabled`, disabling and enabling go through commands, and the world is
//! the same on one thread and on many.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ecs_runtime::prelude::*;

struct Position(u64);
struct Health(u64);

/// Each entity's final (position, health, disabled).
type World = Vec<(u64, u64, bool)>;
/// What the census saw each tick: (entities, disabled ones).
type Census = Vec<(usize, usize)>;

/// Runs 12 ticks of: a system that disables every entity whose position is
/// a multiple of 3 at even ticks and enables them at odd ticks (through
/// commands), movers that skip disabled entities, and a census that names
/// `Disabled`. Returns each entity's final (position, health, disabled)
/// and what the census saw.
fn run(threads: usize) -> (World, Census) {
    let mut registry = Registry::new();
    for i in 0..3000u64 {
        registry.spawn((Position(i), Health(0)));
    }
    let census = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut builder = Schedule::builder();
    builder.threads(threads);
    builder
        .add(
            |tick: Tick, q: Query<(Entity, &Position)>, mut commands: Commands| {
                for (e, p) in q.iter() {
                    if p.0 % 3 == 0 {
                        if tick.number.is_multiple_of(2) {
                            commands.disable(e);
                        } else {
                            commands.enable(e);
                        }
                    }
                }
            },
        )
        .named("toggle");
    builder
        .add(|mut q: Query<&mut Position>| q.par_each(|p| p.0 += 1))
        .named("move");
    builder
        .add(|mut q: Query<&mut Health>| q.each(|h| h.0 += 1))
        .named("heal");
    let seen = census.clone();
    builder
        .add(move |all: Query<(&Health, Option<&Disabled>)>| {
            let total = all.count();
            let disabled = all.iter().filter(|(_, d)| d.is_some()).count();
            seen.lock().unwrap().push((total, disabled));
        })
        .named("census");
    let mut schedule = builder.build(&mut registry).unwrap();
    for number in 0..12 {
        schedule
            .run(
                &mut registry,
                Tick {
                    number,
                    step: 1.0,
                    delta: 0.0,
                },
            )
            .unwrap();
    }
    let mut world: World = registry
        .view::<(Entity, &Position, &Health, Option<&Disabled>)>()
        .iter()
        .map(|(_, p, h, d)| (p.0, h.0, d.is_some()))
        .collect();
    world.sort_unstable();
    let census = census.lock().unwrap().clone();
    (world, census)
}

#[test]
fn queries_skip_disabled_entities_on_any_thread_count() {
    let (world, census) = run(1);
    assert_eq!(census.len(), 12);
    assert!(census.iter().all(|&(total, _)| total == 3000));
    // Disabled at the flush of even ticks, enabled at odd ones: the census
    // (a later wave) sees 1000 disabled, then none, by turns.
    assert!(census.iter().any(|&(_, d)| d > 0));
    assert_eq!(world.len(), 3000);
    let moved = world.iter().filter(|(_, h, _)| *h == 12).count();
    let held = world.iter().filter(|(_, h, _)| *h < 12).count();
    assert_eq!(moved + held, 3000);
    assert!(held > 0, "disabled entities were skipped by `heal`");
    let many = std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .max(4);
    assert_eq!(run(many), (world, census));
}

#[test]
fn a_system_counts_only_enabled_entities() {
    let counted = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    let a = registry.spawn((Health(1),));
    registry.spawn((Health(2),));
    registry.disable(a).unwrap();
    let seen = counted.clone();
    let mut builder = Schedule::builder();
    builder.add(move |q: Query<&Health>| {
        seen.store(q.count(), Ordering::SeqCst);
    });
    let mut schedule = builder.build(&mut registry).unwrap();
    schedule
        .run(
            &mut registry,
            Tick {
                number: 0,
                step: 1.0,
                delta: 0.0,
            },
        )
        .unwrap();
    assert_eq!(counted.load(Ordering::SeqCst), 1);
    assert_eq!(registry.len(), 2); // counts include disabled entities
}
