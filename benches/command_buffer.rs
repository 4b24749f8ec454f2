//! Command buffer benchmarks. Each group runs the same structural changes
//! three ways in the same run: directly on the registry (the target is a
//! buffer within 1.5x of it), through a `CommandBuffer`, and through a
//! `Vec<Box<dyn FnOnce(&mut Registry)>>` (the boxed design the packed one
//! must beat). Track the ratios, not the absolute times: the machine may be
//! shared.
//!
//! For spawns there are two boxed baselines: `boxed_closures` spawns
//! inside the closure, so no handle exists at record time (less work than
//! the buffer, and not what systems need); `boxed_closures_reserved` gives
//! the same guarantee as the buffer (a real handle at record time, from a
//! reserve refilled after the apply), so it isolates boxing from packing.
//!
//! Every case records and applies 10,000 commands per iteration on a fresh
//! registry (`iter_batched`, setup untimed, outputs dropped untimed). In
//! `command_spawn` that registry is empty, so its growth (page faults
//! included) is timed in every case; `command_spawn_warm` repeats the cases
//! on a registry that already held 10,000 entities, which isolates the
//! per-command cost of each design.
//! `buffer` is the steady state of a buffer reused every tick: queues at
//! capacity and a reserve of 2 x 10,000 handles (what the default policy
//! keeps after a tick of 10,000 spawns), so its time includes refilling the
//! reserve for the next tick. `buffer_cold` is a new buffer: queues grow,
//! and with an empty reserve every spawn is a placeholder.

use std::collections::VecDeque;
use std::hint::black_box;
use std::time::Duration;

use command_buffer::{CommandBuffer, ObservedTypes, ReservePolicy, SpawnLanes, apply_all};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use ecs_engine::{Entity, Registry};

/// Commands per iteration.
const ENTITIES: usize = 10_000;

#[derive(Clone, Copy)]
#[expect(dead_code, reason = "benchmark payload: stored, never read")]
struct Position([f32; 3]);
#[derive(Clone, Copy)]
#[expect(dead_code, reason = "benchmark payload: stored, never read")]
struct Velocity([f32; 3]);
#[derive(Clone, Copy)]
#[expect(dead_code, reason = "benchmark payload: stored, never read")]
struct Health(f32);
#[derive(Clone, Copy)]
#[expect(dead_code, reason = "benchmark payload: stored, never read")]
struct Shield(u32);

/// The boxed baseline: one heap allocation per command.
type Boxed = Vec<Box<dyn FnOnce(&mut Registry) + Send>>;

fn position(i: usize) -> Position {
    Position([i as f32, 0.0, 1.0])
}

fn velocity(i: usize) -> Velocity {
    Velocity([0.0, i as f32 * 0.5, -1.0])
}

fn run_boxed(registry: &mut Registry, commands: &mut Boxed) {
    for command in commands.drain(..) {
        command(registry);
    }
}

/// A buffer bound to `registry` whose queues have held `ENTITIES` commands
/// of the kinds `warm` records, with `reserve` handles reserved.
fn warm_buffer(
    registry: &mut Registry,
    reserve: usize,
    warm: impl FnOnce(&mut CommandBuffer),
) -> CommandBuffer {
    let mut buffer = CommandBuffer::with_policy(ReservePolicy::NONE);
    warm(&mut buffer);
    buffer.clear();
    buffer.set_policy(ReservePolicy::default());
    buffer
        .reserve_entities(registry, reserve)
        .expect("room for the reserve");
    buffer
}

fn record_spawns(buffer: &mut CommandBuffer, range: std::ops::Range<usize>) {
    for i in range {
        black_box(buffer.spawn((position(i), velocity(i))));
    }
}

/// A fresh registry whose pools and allocator have already held
/// `ENTITIES` entities of (Position, Velocity), now despawned: the state of
/// a running world, so no case pays for first growth (page faults) in its
/// timed part. Used by `command_spawn_warm`.
fn warm_world() -> Registry {
    let (mut registry, _) = populated();
    registry.clear();
    registry
}

/// A fresh registry with `ENTITIES` entities of (Position, Velocity).
fn populated() -> (Registry, Vec<Entity>) {
    let mut registry = Registry::new();
    let entities = (0..ENTITIES)
        .map(|i| registry.spawn((position(i), velocity(i))))
        .collect();
    (registry, entities)
}

/// The spawn cases, each on a registry made by `world`.
fn spawn_group(c: &mut Criterion, name: &str, world: fn() -> Registry) {
    let mut group = c.benchmark_group(name);
    group.bench_function("direct", |b| {
        b.iter_batched(
            world,
            |mut registry| {
                for i in 0..ENTITIES {
                    black_box(registry.spawn((position(i), velocity(i))));
                }
                registry
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("buffer", |b| {
        b.iter_batched(
            || {
                let mut registry = world();
                let buffer = warm_buffer(&mut registry, 2 * ENTITIES, |buffer| {
                    record_spawns(buffer, 0..ENTITIES)
                });
                (registry, buffer)
            },
            |(mut registry, mut buffer)| {
                record_spawns(&mut buffer, 0..ENTITIES);
                black_box(buffer.apply(&mut registry));
                (registry, buffer)
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("buffer_cold", |b| {
        b.iter_batched(
            || (world(), CommandBuffer::with_policy(ReservePolicy::NONE)),
            |(mut registry, mut buffer)| {
                record_spawns(&mut buffer, 0..ENTITIES);
                black_box(buffer.apply(&mut registry));
                (registry, buffer)
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("buffer_2_threads", |b| {
        b.iter_batched(
            || {
                let mut registry = world();
                let buffers: Vec<CommandBuffer> = (0..2)
                    .map(|_| {
                        warm_buffer(&mut registry, ENTITIES, |buffer| {
                            record_spawns(buffer, 0..ENTITIES / 2)
                        })
                    })
                    .collect();
                (registry, buffers)
            },
            |(mut registry, mut buffers)| {
                let (first, second) = buffers.split_at_mut(1);
                rayon::join(
                    || record_spawns(&mut first[0], 0..ENTITIES / 2),
                    || record_spawns(&mut second[0], ENTITIES / 2..ENTITIES),
                );
                black_box(apply_all(&mut registry, &mut buffers));
                (registry, buffers)
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("boxed_closures", |b| {
        b.iter_batched(
            || (world(), Boxed::with_capacity(ENTITIES)),
            |(mut registry, mut commands)| {
                for i in 0..ENTITIES {
                    let bundle = (position(i), velocity(i));
                    commands.push(Box::new(move |registry: &mut Registry| {
                        black_box(registry.spawn(bundle));
                    }));
                }
                run_boxed(&mut registry, &mut commands);
                (registry, commands)
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("boxed_closures_reserved", |b| {
        b.iter_batched(
            || {
                let mut registry = world();
                let reserve: VecDeque<Entity> = (0..2 * ENTITIES)
                    .map(|_| registry.reserve_entity().expect("room"))
                    .collect();
                (registry, reserve, Boxed::with_capacity(ENTITIES))
            },
            |(mut registry, mut reserve, mut commands)| {
                for i in 0..ENTITIES {
                    let entity = reserve.pop_front().expect("reserved");
                    let bundle = (position(i), velocity(i));
                    commands.push(Box::new(move |registry: &mut Registry| {
                        registry.spawn_reserved(entity, bundle).expect("reserved");
                    }));
                    black_box(entity);
                }
                run_boxed(&mut registry, &mut commands);
                while reserve.len() < 2 * ENTITIES {
                    reserve.push_back(registry.reserve_entity().expect("room"));
                }
                (registry, reserve, commands)
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

/// Spawns into a fresh, empty registry each iteration: pools and allocator
/// grow (and fault their pages in) inside the timed part, for every case.
fn command_spawn(c: &mut Criterion) {
    spawn_group(c, "command_spawn", Registry::new);
}

/// Spawns into a registry that already held as many entities: the steady
/// state of a running world, where only the per-command work is timed.
fn command_spawn_warm(c: &mut Criterion) {
    spawn_group(c, "command_spawn_warm", warm_world);
}

/// A child's parent: the stored handle of `command_spawn_stored`.
#[derive(Clone, Copy)]
#[expect(dead_code, reason = "benchmark payload: stored, never read")]
struct ChildOf(Entity);

/// Records `ENTITIES / 2` parent/child pairs, each child storing its
/// parent's handle in a component.
fn record_pairs(buffer: &mut CommandBuffer) {
    for i in 0..ENTITIES / 2 {
        let parent = buffer.spawn((position(i), velocity(i)));
        black_box(buffer.spawn((position(i), ChildOf(parent))));
    }
}

/// Parent/child pairs whose handles are stored in components: directly,
/// through a buffer whose reserve covers them, and through a buffer with no
/// reserve at all, every handle from its spawn lane (the scheduler's path
/// when a system spawns more than its reserve holds), on an empty registry.
fn command_spawn_stored(c: &mut Criterion) {
    let mut group = c.benchmark_group("command_spawn_stored");
    group.bench_function("direct", |b| {
        b.iter_batched(
            Registry::new,
            |mut registry| {
                for i in 0..ENTITIES / 2 {
                    let parent = registry.spawn((position(i), velocity(i)));
                    black_box(registry.spawn((position(i), ChildOf(parent))));
                }
                registry
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("buffer", |b| {
        b.iter_batched(
            || {
                let mut registry = Registry::new();
                let buffer = warm_buffer(&mut registry, 2 * ENTITIES, record_pairs);
                (registry, buffer)
            },
            |(mut registry, mut buffer)| {
                record_pairs(&mut buffer);
                black_box(buffer.apply(&mut registry));
                (registry, buffer)
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("buffer_lane", |b| {
        b.iter_batched(
            || {
                let mut buffer = CommandBuffer::with_policy(ReservePolicy::NONE);
                record_pairs(&mut buffer);
                buffer.clear();
                (Registry::new(), [buffer], SpawnLanes::new())
            },
            |(mut registry, mut buffers, mut lanes)| {
                lanes.open(&registry, &mut buffers, |b| Some(b));
                record_pairs(&mut buffers[0]);
                lanes.close(&mut registry, &mut buffers, |b| Some(b));
                black_box(buffers[0].apply(&mut registry));
                (registry, buffers, lanes)
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn command_despawn(c: &mut Criterion) {
    let mut group = c.benchmark_group("command_despawn");
    group.bench_function("direct", |b| {
        b.iter_batched(
            populated,
            |(mut registry, entities)| {
                for &e in &entities {
                    registry.despawn(e).expect("alive");
                }
                registry
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("buffer", |b| {
        b.iter_batched(
            || {
                let (mut registry, entities) = populated();
                let buffer = warm_buffer(&mut registry, 64, |buffer| {
                    entities.iter().for_each(|&e| buffer.despawn(e))
                });
                (registry, entities, buffer)
            },
            |(mut registry, entities, mut buffer)| {
                for &e in &entities {
                    buffer.despawn(e);
                }
                black_box(buffer.apply(&mut registry));
                (registry, buffer)
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("boxed_closures", |b| {
        b.iter_batched(
            || (populated(), Boxed::with_capacity(ENTITIES)),
            |((mut registry, entities), mut commands)| {
                for &e in &entities {
                    commands.push(Box::new(move |registry: &mut Registry| {
                        let _ = black_box(registry.despawn(e));
                    }));
                }
                run_boxed(&mut registry, &mut commands);
                (registry, commands)
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn command_insert_remove(c: &mut Criterion) {
    let mut group = c.benchmark_group("command_insert_remove");
    group.bench_function("direct", |b| {
        b.iter_batched(
            populated,
            |(mut registry, entities)| {
                for &e in &entities {
                    registry.insert(e, Health(1.0)).expect("alive");
                }
                for &e in &entities {
                    registry.remove::<Health>(e).expect("has Health");
                }
                registry
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("buffer", |b| {
        b.iter_batched(
            || {
                let (mut registry, entities) = populated();
                let buffer = warm_buffer(&mut registry, 64, |buffer| {
                    for &e in &entities {
                        buffer.insert(e, Health(0.0));
                        buffer.remove::<Health>(e);
                    }
                });
                (registry, entities, buffer)
            },
            |(mut registry, entities, mut buffer)| {
                for &e in &entities {
                    buffer.insert(e, Health(1.0));
                }
                black_box(buffer.apply(&mut registry));
                for &e in &entities {
                    buffer.remove::<Health>(e);
                }
                black_box(buffer.apply(&mut registry));
                (registry, buffer)
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("boxed_closures", |b| {
        b.iter_batched(
            || (populated(), Boxed::with_capacity(ENTITIES)),
            |((mut registry, entities), mut commands)| {
                for &e in &entities {
                    commands.push(Box::new(move |registry: &mut Registry| {
                        let _ = black_box(registry.insert(e, Health(1.0)));
                    }));
                }
                run_boxed(&mut registry, &mut commands);
                for &e in &entities {
                    commands.push(Box::new(move |registry: &mut Registry| {
                        let _ = black_box(registry.remove::<Health>(e));
                    }));
                }
                run_boxed(&mut registry, &mut commands);
                (registry, commands)
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

/// A bundle insert of two components on entities that lack them, then
/// the same bundle again (overwriting both): the `entity(e).insert(..)`
/// path, timed directly, through a warm buffer, and through a warm
/// buffer in a world that observes one of the two types (hooks recorded)
/// or another type.
fn command_insert_bundle(c: &mut Criterion) {
    let mut group = c.benchmark_group("command_insert_bundle");
    group.bench_function("direct", |b| {
        b.iter_batched(
            populated,
            |(mut registry, entities)| {
                for round in 0..2 {
                    for &e in &entities {
                        let bundle = (Health(round as f32), Shield(round));
                        registry.insert_bundle(e, bundle).expect("alive");
                    }
                }
                registry
            },
            BatchSize::LargeInput,
        )
    });
    // Through a warm buffer; then with `Health` observed (each insert
    // records its hooks, `Add` and `Insert`, then `Replace` and `Insert`,
    // left in the registry's `FiredHooks` as no scheduler takes them);
    // then in a world that observes another type (the bundle's commands
    // check that none of their types is observed, and fire nothing).
    type Observe = fn(&mut Registry);
    let worlds: [(&str, Observe); 3] = [
        ("buffer", |_| {}),
        ("buffer_observed", ObservedTypes::observe::<Health>),
        ("buffer_observed_other", ObservedTypes::observe::<Velocity>),
    ];
    for (name, observe) in worlds {
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let (mut registry, entities) = populated();
                    observe(&mut registry);
                    let buffer = warm_buffer(&mut registry, 64, |buffer| {
                        for &e in &entities {
                            buffer.insert_bundle(e, (Health(0.0), Shield(0)));
                        }
                    });
                    (registry, entities, buffer)
                },
                |(mut registry, entities, mut buffer)| {
                    for round in 0..2 {
                        for &e in &entities {
                            buffer
                                .entity(e)
                                .insert((Health(round as f32), Shield(round)));
                        }
                        black_box(buffer.apply(&mut registry));
                    }
                    (registry, buffer)
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = command_spawn, command_spawn_warm, command_spawn_stored, command_despawn, command_insert_remove, command_insert_bundle
}
criterion_main!(benches);
