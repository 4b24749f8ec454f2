//! Snapshot save and load of 1,000,000 entities with `(Position,
//! Velocity)` in the compact format (postcard), beside postcard of two
//! plain `Vec`s of the same data, in the same criterion groups: a
//! registry (`snapshot`) and a whole engine whose systems track changes
//! of `Position` (`engine`: its change ticks, system states and reserves
//! with the registry). Track the ratios `snapshot / vecs` and
//! `engine / vecs`; the bytes per entity are printed once.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ecs_engine::Registry;
use ecs_runtime::Engine;
use ecs_runtime::prelude::{Changed, Query};
use ecs_snapshot::{Format, Snapshots};
use serde::{Deserialize, Serialize};

/// Entities in every case.
const ENTITIES: usize = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Velocity {
    x: f32,
    y: f32,
}

fn position(i: usize) -> Position {
    Position {
        x: i as f32 * 0.25,
        y: -(i as f32),
    }
}

fn velocity(i: usize) -> Velocity {
    Velocity {
        x: 1.0,
        y: (i % 7) as f32,
    }
}

/// The world: `ENTITIES` spawned in one batch.
fn world() -> Registry {
    let mut registry = Registry::new();
    registry.spawn_batch((0..ENTITIES).map(|i| (position(i), velocity(i))));
    registry
}

/// Counts the Positions changed since its last run (so the engine tracks
/// their changes).
fn moved(q: Query<&Position, Changed<Position>>) {
    black_box(q.count());
}

/// An engine over the same world, after one tick.
fn tracked_engine() -> Engine {
    let mut builder = Engine::builder();
    builder.threads(1);
    builder
        .registry_mut()
        .spawn_batch((0..ENTITIES).map(|i| (position(i), velocity(i))));
    builder.add_system(moved);
    let mut engine = builder.build().expect("one system");
    engine.tick().expect("the system does not fail");
    engine
}

/// The baseline's data: the same values in two plain vectors.
fn vecs() -> (Vec<Position>, Vec<Velocity>) {
    (
        (0..ENTITIES).map(position).collect(),
        (0..ENTITIES).map(velocity).collect(),
    )
}

fn snapshots() -> Snapshots {
    let mut s = Snapshots::new();
    s.register::<Position>("Position")
        .and_then(|s| s.register::<Velocity>("Velocity"))
        .expect("distinct names");
    s
}

fn save_and_load(c: &mut Criterion) {
    let snapshots = snapshots();
    let registry = world();
    let plain = vecs();
    let bytes = snapshots.save(&registry, Format::Postcard).unwrap();
    let plain_bytes = postcard::to_allocvec(&plain).unwrap();
    eprintln!(
        "snapshot: {} bytes ({:.2} per entity); two Vecs: {} bytes ({:.2} per entity)",
        bytes.len(),
        bytes.len() as f64 / ENTITIES as f64,
        plain_bytes.len(),
        plain_bytes.len() as f64 / ENTITIES as f64
    );

    let mut group = c.benchmark_group("save_1m");
    group.sample_size(10);
    group.bench_function("snapshot", |b| {
        b.iter(|| {
            black_box(
                snapshots
                    .save(black_box(&registry), Format::Postcard)
                    .unwrap(),
            )
        })
    });
    group.bench_function("vecs", |b| {
        b.iter(|| black_box(postcard::to_allocvec(black_box(&plain)).unwrap()))
    });
    let engine = tracked_engine();
    let engine_bytes = snapshots.save_engine(&engine, Format::Postcard).unwrap();
    eprintln!(
        "engine snapshot: {} bytes ({:.2} per entity)",
        engine_bytes.len(),
        engine_bytes.len() as f64 / ENTITIES as f64
    );
    group.bench_function("engine", |b| {
        b.iter(|| {
            black_box(
                snapshots
                    .save_engine(black_box(&engine), Format::Postcard)
                    .unwrap(),
            )
        })
    });
    group.finish();

    let mut group = c.benchmark_group("load_1m");
    group.sample_size(10);
    let mut target = Registry::new();
    group.bench_function("snapshot", |b| {
        b.iter(|| {
            snapshots
                .load(&mut target, black_box(&bytes), Format::Postcard)
                .unwrap()
        })
    });
    group.bench_function("vecs", |b| {
        b.iter(|| {
            black_box(
                postcard::from_bytes::<(Vec<Position>, Vec<Velocity>)>(black_box(&plain_bytes))
                    .unwrap(),
            )
        })
    });
    let mut loaded = tracked_engine();
    group.bench_function("engine", |b| {
        b.iter(|| {
            snapshots
                .load_engine(&mut loaded, black_box(&engine_bytes), Format::Postcard)
                .unwrap()
        })
    });
    group.finish();
    assert_eq!(target.len(), ENTITIES);
    assert_eq!(loaded.registry().len(), ENTITIES);
}

criterion_group!(benches, save_and_load);
criterion_main!(benches);
