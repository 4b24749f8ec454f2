//! In-memory states (issue 26): a full save and restore of 1,000,000
//! entities with (Position, Velocity), beside cloning two plain `Vec`s of
//! the same data in the same run (the baseline). Two ways each:
//! into fresh memory (`save_state`; `Vec::clone`) and into memory kept
//! from the previous frame (`save_state_into`; `Vec::clone_from`), which
//! is how a rollback loop that saves every frame runs.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ecs_engine::{Registry, RegistryState};

/// Entities saved and restored.
const ENTITIES: usize = 1_000_000;

#[derive(Clone, Copy)]
#[expect(dead_code, reason = "payload: the benches copy it, never read it")]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Clone, Copy)]
#[expect(dead_code, reason = "payload: the benches copy it, never read it")]
struct Velocity {
    x: f32,
    y: f32,
}

fn position(i: usize) -> Position {
    Position {
        x: i as f32,
        y: 0.5 * i as f32,
    }
}

fn velocity(i: usize) -> Velocity {
    Velocity {
        x: 1.0,
        y: (i % 7) as f32,
    }
}

fn world() -> Registry {
    let mut registry = Registry::new();
    registry.register_clone::<Position>();
    registry.register_clone::<Velocity>();
    registry.spawn_batch((0..ENTITIES).map(|i| (position(i), velocity(i))));
    registry
}

fn save_restore(c: &mut Criterion) {
    let mut group = c.benchmark_group("state_1m");
    group.sample_size(20);

    let positions: Vec<Position> = (0..ENTITIES).map(position).collect();
    let velocities: Vec<Velocity> = (0..ENTITIES).map(velocity).collect();
    group.bench_function("baseline_clone_two_vecs", |b| {
        b.iter(|| {
            let copies = (positions.clone(), velocities.clone());
            black_box(&copies);
        })
    });
    let (mut kept_p, mut kept_v) = (positions.clone(), velocities.clone());
    group.bench_function("baseline_clone_from_two_vecs", |b| {
        b.iter(|| {
            kept_p.clone_from(&positions);
            kept_v.clone_from(&velocities);
            black_box((&kept_p, &kept_v));
        })
    });

    let mut registry = world();
    group.bench_function("save_restore", |b| {
        b.iter(|| {
            let state = registry.save_state().unwrap();
            registry.restore_state(&state).unwrap();
            black_box(&state);
        })
    });
    let mut state = RegistryState::default();
    group.bench_function("save_into_restore", |b| {
        b.iter(|| {
            registry.save_state_into(&mut state).unwrap();
            registry.restore_state(&state).unwrap();
        })
    });
    group.bench_function("save_into", |b| {
        b.iter(|| registry.save_state_into(&mut state).unwrap())
    });
    group.bench_function("restore", |b| {
        b.iter(|| registry.restore_state(&state).unwrap())
    });
    group.finish();
}

criterion_group!(benches, save_restore);
criterion_main!(benches);
