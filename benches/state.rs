//! In-memory states (issue 26): a full save and restore of 1,000,000
//! entities with (Position, Velocity), beside cloning two plain `Vec`s of
//! the same data in the same run (the baseline). Two ways each:
//! into fresh memory (`save_state`; `Vec::clone`) and into memory kept
//! from the previous frame (`save_state_into`; `Vec::clone_from`), which
//! is how a rollback loop that saves every frame runs. And a save of
//! 100,000 entities with 1% written since the last save, with change
//! tracking (only those copied) and without: the 1% spread over the pool
//! (every 100th entity, the worst case: each write its own cache lines)
//! or clustered (1,000 neighbours in the pool, as when the entities a
//! system writes were spawned together); and a ring's save after 1% of
//! the entities were despawned and as many spawned.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ecs_engine::{Registry, RegistryState};

/// Entities saved and restored.
const ENTITIES: usize = 1_000_000;

#[derive(Clone, Copy)]
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

/// Entities of the delta benches.
const DELTA_ENTITIES: usize = 100_000;
/// Entities written between two saves: 1%.
const DELTA_WRITTEN: usize = DELTA_ENTITIES / 100;

/// 100,000 (Position, Velocity), change tracking on when `tracked`.
fn delta_world(tracked: bool) -> Registry {
    let mut registry = Registry::new();
    registry.register_clone_delta::<Position>();
    registry.register_clone_delta::<Velocity>();
    if tracked {
        registry.track_changes::<Position>();
        registry.track_changes::<Velocity>();
    }
    registry.spawn_batch((0..DELTA_ENTITIES).map(|i| (position(i), velocity(i))));
    registry
}

/// Writes 1% of the positions, then advances the change tick, as a tick
/// of a game would between two saves: every 100th entity when `spread`,
/// else 1,000 neighbours in the pool (another run each round).
fn write_one_percent(registry: &mut Registry, round: &mut usize, spread: bool) {
    *round += 1;
    let stride = DELTA_ENTITIES / DELTA_WRITTEN;
    let shift = *round % stride;
    let entities = registry.pool::<Position>().unwrap().entities();
    let targets: Vec<ecs_engine::Entity> = if spread {
        entities
            .iter()
            .skip(shift)
            .step_by(stride)
            .copied()
            .collect()
    } else {
        let start = shift * DELTA_WRITTEN % (DELTA_ENTITIES - DELTA_WRITTEN);
        entities[start..start + DELTA_WRITTEN].to_vec()
    };
    for e in targets {
        registry.get_mut::<Position>(e).unwrap().x += 1.0;
    }
    registry.advance_change_tick();
}

/// Despawns 0.5% of the entities (every 200th in the pool, another
/// offset each round) and spawns as many, then advances the change tick:
/// about 1% of each pool's dense positions change hands.
fn churn_one_percent(registry: &mut Registry, round: &mut usize) {
    const STRIDE: usize = 200;
    *round += 1;
    let doomed: Vec<ecs_engine::Entity> = registry.pool::<Position>().unwrap().entities()
        [*round % STRIDE..]
        .iter()
        .step_by(STRIDE)
        .copied()
        .collect();
    for &e in &doomed {
        registry.despawn(e).unwrap();
    }
    registry.spawn_batch((0..doomed.len()).map(|i| (position(i), velocity(i))));
    registry.advance_change_tick();
}

/// A save of 100,000 entities of which 1% were written since the last
/// save into the same state: with change tracking (a delta: only those
/// are copied) and without (every value is copied), each with the same
/// writes, beside the writes alone and two `Vec::clone_from`s of the
/// same data (the plain baseline).
fn delta_saves(c: &mut Criterion) {
    let mut group = c.benchmark_group("state_100k_1pct");
    group.sample_size(30);
    let positions: Vec<Position> = (0..DELTA_ENTITIES).map(position).collect();
    let velocities: Vec<Velocity> = (0..DELTA_ENTITIES).map(velocity).collect();
    let (mut kept_p, mut kept_v) = (positions.clone(), velocities.clone());
    group.bench_function("baseline_clone_from_two_vecs", |b| {
        b.iter(|| {
            kept_p.clone_from(&positions);
            kept_v.clone_from(&velocities);
            black_box((&kept_p, &kept_v));
        })
    });
    // (name, change tracking, writes spread over the pool)
    let rows = [
        ("writes_only", true, true),
        ("full_save_into_untracked", false, true),
        ("full_save_into_tracked", true, true),
        ("delta_save_into", true, true),
        ("writes_only_clustered", true, false),
        ("delta_save_into_clustered", true, false),
    ];
    for (name, tracked, spread) in rows {
        let mut registry = delta_world(tracked);
        let first = registry.pool::<Position>().unwrap().entities()[0];
        let mut state = RegistryState::default();
        registry.save_state_into(&mut state).unwrap();
        let mut round = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                write_one_percent(&mut registry, &mut round, spread);
                if name == "full_save_into_tracked" {
                    // A write the ticks do not show: every value is copied.
                    registry.get_mut_untracked::<Position>(first).unwrap().y += 1.0;
                }
                if !name.starts_with("writes_only") {
                    registry.save_state_into(&mut state).unwrap();
                }
            })
        });
    }
    let mut registry = delta_world(true);
    let mut ring = ecs_engine::StateRing::new(8);
    let mut round = 0;
    group.bench_function("ring_save_frame", |b| {
        b.iter(|| {
            write_one_percent(&mut registry, &mut round, true);
            registry.save_frame(&mut ring).unwrap();
        })
    });
    // Spawns and despawns instead of writes: a whole copy of each pool
    // before structural deltas.
    for (name, save) in [("churn_only", false), ("ring_save_frame_churn", true)] {
        let mut registry = delta_world(true);
        let mut ring = ecs_engine::StateRing::new(8);
        let mut round = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                churn_one_percent(&mut registry, &mut round);
                if save {
                    registry.save_frame(&mut ring).unwrap();
                }
            })
        });
    }
    group.finish();
    // The ring's memory beside the registry's (printed, not timed).
    println!(
        "state_100k_1pct: a ring of {} frames holds {} bytes beyond its newest \
         frame; the registry holds {} bytes ({:.2}% per frame)",
        ring.len(),
        ring.undo_bytes(),
        registry.heap_bytes(),
        100.0 * ring.undo_bytes() as f64 / (ring.len() - 1) as f64 / registry.heap_bytes() as f64,
    );
}

criterion_group!(benches, save_restore, delta_saves);
criterion_main!(benches);
