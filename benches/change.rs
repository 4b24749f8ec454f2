//! Change detection's cost (issue 15): `simple_iter` and `frag_iter` over
//! `&mut T` with change tracking off (the type is not tracked: the default)
//! and on (`Registry::track_changes`: every `&mut T` handed out stores its
//! tick), beside the plain-`Vec` baseline of the same pass. Tracking is
//! opt-in per type; the scheduler enables it for the types a system asks
//! about (`Added`, `Changed`, `Ref`, `RemovedComponents`).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ecs_engine::{Changed, Mut, Registry, Untracked};

/// Entities in the `simple_iter` cases.
const ENTITIES: usize = 10_000;
/// Marker-like component types in `frag_iter`.
const FRAG_TYPES: usize = 26;
/// Entities per marker type in `frag_iter`.
const FRAG_PER_TYPE: usize = 20;

#[derive(Clone, Copy)]
#[expect(dead_code, reason = "payload: the benches store it, never read it")]
struct Transform([[f32; 4]; 4]);
#[derive(Clone, Copy)]
struct Position([f32; 3]);
#[derive(Clone, Copy)]
#[expect(dead_code, reason = "payload: the benches store it, never read it")]
struct Rotation([f32; 3]);
#[derive(Clone, Copy)]
struct Velocity([f32; 3]);

fn velocity(i: usize) -> Velocity {
    Velocity([i as f32 * 0.5, 1.0, -1.0])
}

/// The `simple_iter` world of `benches/registry.rs`; `Position` tracked
/// when `tracked`.
fn simple_world(tracked: bool) -> Registry {
    let mut registry = Registry::new();
    if tracked {
        registry.track_changes::<Position>();
    }
    for i in 0..ENTITIES {
        registry.spawn((
            Transform([[0.0; 4]; 4]),
            Position([0.0; 3]),
            Rotation([0.0; 3]),
            velocity(i),
        ));
    }
    registry
}

fn add(p: &mut [f32; 3], v: &[f32; 3]) {
    p[0] += v[0];
    p[1] += v[1];
    p[2] += v[2];
}

fn simple_iter(c: &mut Criterion) {
    let mut group = c.benchmark_group("change_simple_iter");
    let mut untracked = simple_world(false);
    group.bench_function("registry_tracking_off", |b| {
        b.iter(|| {
            untracked
                .view_mut::<(&mut Position, &Velocity)>()
                .each(|(p, v)| add(&mut p.0, &v.0))
        })
    });
    let mut tracked = simple_world(true);
    group.bench_function("registry_tracking_on", |b| {
        b.iter(|| {
            tracked
                .view_mut::<(&mut Position, &Velocity)>()
                .each(|(p, v)| add(&mut p.0, &v.0))
        })
    });
    group.bench_function("registry_tracking_on_untracked_term", |b| {
        b.iter(|| {
            tracked
                .view_mut::<(Untracked<Position>, &Velocity)>()
                .each(|(p, v)| add(&mut p.0, &v.0))
        })
    });
    group.bench_function("registry_tracking_on_ref_mut", |b| {
        b.iter(|| {
            tracked
                .view_mut::<(Mut<Position>, &Velocity)>()
                .each(|(mut p, v)| add(&mut p.0, &v.0))
        })
    });
    // A reader's pass: `Changed<Position>` after every position changed.
    let since = tracked.change_tick().wrapping_sub(1);
    group.bench_function("registry_changed_filter_read", |b| {
        b.iter(|| {
            let mut sum = 0.0f32;
            tracked
                .view_since::<&Velocity, Changed<Position>>(since)
                .each(|v| sum += v.0[0]);
            sum
        })
    });
    let mut positions = vec![Position([0.0; 3]); ENTITIES];
    let velocities: Vec<Velocity> = (0..ENTITIES).map(velocity).collect();
    group.bench_function("baseline_vecs", |b| {
        b.iter(|| {
            for (p, v) in black_box(&mut positions)
                .iter_mut()
                .zip(black_box(&velocities))
            {
                add(&mut p.0, &v.0);
            }
        })
    });
    group.finish();
}

struct Data(f32);
struct Frag<const N: usize>;

macro_rules! spawn_frag {
    ($registry:expr, $($n:literal)*) => {
        $(
            for _ in 0..FRAG_PER_TYPE {
                $registry.spawn((Frag::<$n>, Data(1.0)));
            }
        )*
    };
}

fn frag_world(tracked: bool) -> Registry {
    let mut registry = Registry::new();
    if tracked {
        registry.track_changes::<Data>();
    }
    spawn_frag!(registry, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25);
    assert_eq!(registry.len(), FRAG_TYPES * FRAG_PER_TYPE);
    registry
}

fn frag_iter(c: &mut Criterion) {
    let mut group = c.benchmark_group("change_frag_iter");
    let mut untracked = frag_world(false);
    group.bench_function("registry_tracking_off", |b| {
        b.iter(|| untracked.view_mut::<&mut Data>().each(|d| d.0 *= 2.0))
    });
    let mut tracked = frag_world(true);
    group.bench_function("registry_tracking_on", |b| {
        b.iter(|| tracked.view_mut::<&mut Data>().each(|d| d.0 *= 2.0))
    });
    let mut data: Vec<Data> = (0..FRAG_TYPES * FRAG_PER_TYPE).map(|_| Data(1.0)).collect();
    group.bench_function("baseline_vecs", |b| {
        b.iter(|| {
            for d in black_box(&mut data).iter_mut() {
                d.0 *= 2.0;
            }
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
    targets = simple_iter, frag_iter
}
criterion_main!(benches);
