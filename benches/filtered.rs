//! Filtered view benchmarks, each beside a plain-`Vec` baseline doing the
//! same work with no ECS, in the same criterion group. Track the ratio
//! `registry / baseline`, not the absolute times.
//!
//! 10,000 entities with `Position` and `Velocity`; every 4th is `Frozen`,
//! every 3rd an `Enemy`, every 5th a `Boss`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ecs_engine::{Entity, Or, Registry, With, Without};

const ENTITIES: usize = 10_000;

#[derive(Clone, Copy)]
struct Position([f32; 3]);
#[derive(Clone, Copy)]
struct Velocity([f32; 3]);
struct Frozen;
struct Enemy;
struct Boss;

fn velocity(i: usize) -> Velocity {
    Velocity([i as f32 * 0.5, 1.0, -1.0])
}

fn add(p: &mut [f32; 3], v: &[f32; 3]) {
    p[0] += v[0];
    p[1] += v[1];
    p[2] += v[2];
}

fn world() -> Registry {
    let mut registry = Registry::new();
    for i in 0..ENTITIES {
        let e = registry.spawn((Position([0.0; 3]), velocity(i)));
        if i % 4 == 0 {
            registry.insert(e, Frozen).unwrap();
        }
        if i % 3 == 0 {
            registry.insert(e, Enemy).unwrap();
        }
        if i % 5 == 0 {
            registry.insert(e, Boss).unwrap();
        }
    }
    registry
}

fn filtered_iter(c: &mut Criterion) {
    let mut group = c.benchmark_group("filtered_iter");
    let mut registry = world();
    group.bench_function("registry_without", |b| {
        b.iter(|| {
            registry
                .view_mut::<(&mut Position, &Velocity)>()
                .without::<Frozen>()
                .each(|(p, v)| add(&mut p.0, &v.0))
        })
    });
    group.bench_function("registry_with_without", |b| {
        b.iter(|| {
            registry
                .view_filtered::<(&mut Position, &Velocity), (With<Enemy>, Without<Frozen>)>()
                .each(|(p, v)| add(&mut p.0, &v.0))
        })
    });
    group.bench_function("registry_read_only_iter", |b| {
        b.iter(|| {
            let mut sum = 0.0f32;
            for (p, v) in registry.view::<(&Position, &Velocity)>().iter() {
                sum += p.0[0] + v.0[0];
            }
            sum
        })
    });
    // NEW-API-BEGIN (filters that did not exist before; cut for the "before" run)
    group.bench_function("registry_or", |b| {
        b.iter(|| {
            registry
                .view_filtered::<(&mut Position, &Velocity), Or<(With<Enemy>, With<Boss>)>>()
                .each(|(p, v)| add(&mut p.0, &v.0))
        })
    });
    group.bench_function("registry_entity_with", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for e in registry.view_filtered::<Entity, With<Enemy>>().iter() {
                n += u64::from(e.index());
            }
            n
        })
    });
    // NEW-API-END
    let mut positions = vec![Position([0.0; 3]); ENTITIES];
    let velocities: Vec<Velocity> = (0..ENTITIES).map(velocity).collect();
    let frozen: Vec<bool> = (0..ENTITIES).map(|i| i % 4 == 0).collect();
    let enemy: Vec<bool> = (0..ENTITIES).map(|i| i % 3 == 0).collect();
    group.bench_function("baseline_vecs_without", |b| {
        b.iter(|| {
            let frozen = black_box(&frozen);
            for ((p, v), &f) in black_box(&mut positions)
                .iter_mut()
                .zip(black_box(&velocities))
                .zip(frozen)
            {
                if !f {
                    add(&mut p.0, &v.0);
                }
            }
        })
    });
    group.bench_function("baseline_vecs_with_without", |b| {
        b.iter(|| {
            let (frozen, enemy) = (black_box(&frozen), black_box(&enemy));
            for (i, (p, v)) in black_box(&mut positions)
                .iter_mut()
                .zip(black_box(&velocities))
                .enumerate()
            {
                if enemy[i] && !frozen[i] {
                    add(&mut p.0, &v.0);
                }
            }
        })
    });
    group.bench_function("baseline_vecs_read_only", |b| {
        b.iter(|| {
            let mut sum = 0.0f32;
            for (p, v) in black_box(&positions).iter().zip(black_box(&velocities)) {
                sum += p.0[0] + v.0[0];
            }
            sum
        })
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = filtered_iter
}
criterion_main!(benches);
