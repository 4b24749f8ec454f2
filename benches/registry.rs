//! Registry benchmarks, each beside a plain-`Vec` (or `HashMap`) baseline
//! doing the same work with no ECS, in the same criterion group. Track the
//! ratio `registry / baseline`, not the absolute times.

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ecs_engine::{Access, ComponentDescriptor, Entity, Registry};

/// Entities in the `simple_*`, `add_remove` and `get_random` cases.
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

fn transform() -> Transform {
    Transform([
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ])
}

fn velocity(i: usize) -> Velocity {
    Velocity([i as f32 * 0.5, 1.0, -1.0])
}

/// A small deterministic generator (xorshift64*), so every run shuffles alike.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, (self.next() % (i as u64 + 1)) as usize);
        }
    }
}

/// 10,000 entities with the four components of the `simple_*` cases.
fn simple_world() -> (Registry, Vec<Entity>) {
    let mut registry = Registry::new();
    let entities = (0..ENTITIES)
        .map(|i| {
            registry.spawn((
                transform(),
                Position([0.0; 3]),
                Rotation([0.0; 3]),
                velocity(i),
            ))
        })
        .collect();
    (registry, entities)
}

fn add(p: &mut [f32; 3], v: &[f32; 3]) {
    p[0] += v[0];
    p[1] += v[1];
    p[2] += v[2];
}

fn simple_insert(c: &mut Criterion) {
    let mut group = c.benchmark_group("simple_insert");
    group.bench_function("registry", |b| {
        b.iter(|| {
            let mut registry = Registry::new();
            for i in 0..ENTITIES {
                registry.spawn((
                    transform(),
                    Position([0.0; 3]),
                    Rotation([0.0; 3]),
                    velocity(i),
                ));
            }
            registry
        })
    });
    group.bench_function("registry_spawn_batch", |b| {
        b.iter(|| {
            let mut registry = Registry::new();
            registry.spawn_batch((0..ENTITIES).map(|i| {
                (
                    transform(),
                    Position([0.0; 3]),
                    Rotation([0.0; 3]),
                    velocity(i),
                )
            }));
            registry
        })
    });
    group.bench_function("baseline_vecs", |b| {
        b.iter(|| {
            let (mut t, mut p, mut r, mut v) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for i in 0..ENTITIES {
                t.push(transform());
                p.push(Position([0.0; 3]));
                r.push(Rotation([0.0; 3]));
                v.push(velocity(i));
            }
            (t, p, r, v)
        })
    });
    group.finish();
}

fn simple_iter(c: &mut Criterion) {
    let mut group = c.benchmark_group("simple_iter");
    let (mut registry, _) = simple_world();
    group.bench_function("registry", |b| {
        b.iter(|| {
            registry
                .view_mut::<(&mut Position, &Velocity)>()
                .each(|(p, v)| add(&mut p.0, &v.0))
        })
    });
    group.bench_function("registry_iterator", |b| {
        b.iter(|| {
            for (p, v) in registry.view_mut::<(&mut Position, &Velocity)>().iter() {
                add(&mut p.0, &v.0);
            }
        })
    });

    // The same pass when the two pools hold the same entities in different
    // orders: every join goes through the sparse array.
    let (mut shuffled, mut entities) = simple_world();
    Rng(7).shuffle(&mut entities);
    for &e in &entities {
        let v = shuffled.remove::<Velocity>(e).unwrap();
        shuffled.insert(e, v).unwrap();
    }
    group.bench_function("registry_pools_in_different_order", |b| {
        b.iter(|| {
            shuffled
                .view_mut::<(&mut Position, &Velocity)>()
                .each(|(p, v)| add(&mut p.0, &v.0))
        })
    });

    // The same world after `sort_pools`: the pools share one order again.
    shuffled.sort_pools();
    group.bench_function("registry_pools_in_different_order_sorted", |b| {
        b.iter(|| {
            shuffled
                .view_mut::<(&mut Position, &Velocity)>()
                .each(|(p, v)| add(&mut p.0, &v.0))
        })
    });

    // The same pass with 1% of the entities disabled: the view checks the
    // `Disabled` pool per entity (0% disabled: the `registry` case above).
    let (mut some_disabled, entities) = simple_world();
    for &e in entities.iter().step_by(100) {
        some_disabled.disable(e).unwrap();
    }
    group.bench_function("registry_1pct_disabled", |b| {
        b.iter(|| {
            some_disabled
                .view_mut::<(&mut Position, &Velocity)>()
                .each(|(p, v)| add(&mut p.0, &v.0))
        })
    });

    let mut positions = vec![Position([0.0; 3]); ENTITIES];
    group.bench_function("registry_pool", |b| {
        let pool = registry.pool::<Velocity>().unwrap();
        b.iter(|| {
            let mut sum = 0.0f32;
            for &e in &entities {
                sum += pool.get(e).unwrap().0[0];
            }
            sum
        })
    });
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

/// What a C system's chunk callback does: `pos += vel` over `len` rows.
extern "C" fn c_move_chunk(len: usize, columns: *const *mut u8) {
    // SAFETY: `columns` holds two bases of `len` `[f32; 3]` values each
    // (stride 12), the first write-locked by the view.
    unsafe {
        let p = (*columns).cast::<[f32; 3]>();
        let v = (*columns.add(1)).cast::<[f32; 3]>();
        for i in 0..len {
            add(&mut *p.add(i), &*v.add(i));
        }
    }
}

/// The `simple_iter` pass over run-time components, through a raw view
/// calling an `extern "C"` function per chunk (the C API's path), beside
/// the typed view and the plain-array baseline.
fn raw_chunk_iter(c: &mut Criterion) {
    let mut group = c.benchmark_group("raw_chunk_iter");
    let (mut registry, entities) = simple_world();
    let layout = std::alloc::Layout::new::<[f32; 3]>();
    let pos = registry
        .register_runtime(ComponentDescriptor::new("pos", layout))
        .unwrap();
    let vel = registry
        .register_runtime(ComponentDescriptor::new("vel", layout))
        .unwrap();
    for (i, &e) in entities.iter().enumerate() {
        let (p, v) = ([0.0f32; 3], velocity(i).0);
        // SAFETY: valid `[f32; 3]` values, plain bytes.
        unsafe {
            registry.insert_raw(e, pos, (&raw const p).cast()).unwrap();
            registry.insert_raw(e, vel, (&raw const v).cast()).unwrap();
        }
    }
    let callback: extern "C" fn(usize, *const *mut u8) = black_box(c_move_chunk);
    group.bench_function("raw_view_c_chunks", |b| {
        b.iter(|| {
            registry
                .raw_view(&[(pos, Access::Write), (vel, Access::Read)])
                .unwrap()
                .each_chunk(|chunk| callback(chunk.len(), chunk.columns().as_ptr()))
        })
    });
    group.bench_function("typed_view", |b| {
        b.iter(|| {
            registry
                .view_mut::<(&mut Position, &Velocity)>()
                .each(|(p, v)| add(&mut p.0, &v.0))
        })
    });
    let mut positions = vec![[0.0f32; 3]; ENTITIES];
    let velocities: Vec<[f32; 3]> = (0..ENTITIES).map(|i| velocity(i).0).collect();
    group.bench_function("baseline_vecs", |b| {
        b.iter(|| {
            for (p, v) in black_box(&mut positions).iter_mut().zip(&velocities) {
                add(p, v);
            }
        })
    });
    group.finish();
}

fn one_type_iter(c: &mut Criterion) {
    let mut group = c.benchmark_group("one_type_iter");
    let (mut registry, _) = simple_world();
    group.bench_function("registry", |b| {
        b.iter(|| {
            registry
                .view_mut::<&mut Position>()
                .each(|p| p.0[0] = p.0[0] * 0.5 + 1.0)
        })
    });
    let mut positions = vec![Position([0.0; 3]); ENTITIES];
    group.bench_function("baseline_vecs", |b| {
        b.iter(|| {
            for p in black_box(&mut positions).iter_mut() {
                p.0[0] = p.0[0] * 0.5 + 1.0;
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

fn frag_iter(c: &mut Criterion) {
    let mut group = c.benchmark_group("frag_iter");
    let mut registry = Registry::new();
    spawn_frag!(registry, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25);
    assert_eq!(registry.len(), FRAG_TYPES * FRAG_PER_TYPE);
    group.bench_function("registry", |b| {
        b.iter(|| registry.view_mut::<&mut Data>().each(|d| d.0 *= 2.0))
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

#[expect(dead_code, reason = "payload: the benches store it, never read it")]
struct A(f32);
#[derive(Clone, Copy)]
#[expect(dead_code, reason = "payload: the benches store it, never read it")]
struct B(f32);

fn add_remove(c: &mut Criterion) {
    let mut group = c.benchmark_group("add_remove");
    let mut registry = Registry::new();
    let entities: Vec<Entity> = (0..ENTITIES)
        .map(|i| registry.spawn((A(i as f32),)))
        .collect();
    group.bench_function("registry", |b| {
        b.iter(|| {
            for &e in &entities {
                registry.insert(e, B(1.0)).unwrap();
            }
            for &e in &entities {
                black_box(registry.remove::<B>(e).unwrap());
            }
        })
    });
    group.bench_function("registry_pool_mut", |b| {
        b.iter(|| {
            let mut pool = registry.pool_mut::<B>();
            for &e in &entities {
                pool.insert(e, B(1.0)).unwrap();
            }
            for &e in &entities {
                black_box(pool.remove(e).unwrap());
            }
        })
    });
    let mut map: HashMap<Entity, B> = HashMap::new();
    group.bench_function("baseline_hashmap", |b| {
        b.iter(|| {
            for &e in &entities {
                map.insert(e, B(1.0));
            }
            for &e in &entities {
                black_box(map.remove(&e).unwrap());
            }
        })
    });
    group.finish();
}

fn get_random(c: &mut Criterion) {
    let mut group = c.benchmark_group("get_random");
    let (registry, mut entities) = simple_world();
    Rng(42).shuffle(&mut entities);
    group.bench_function("registry", |b| {
        b.iter(|| {
            let mut sum = 0.0f32;
            for &e in &entities {
                sum += registry.get::<Velocity>(e).unwrap().0[0];
            }
            sum
        })
    });
    group.bench_function("registry_pool", |b| {
        let pool = registry.pool::<Velocity>().unwrap();
        b.iter(|| {
            let mut sum = 0.0f32;
            for &e in &entities {
                sum += pool.get(e).unwrap().0[0];
            }
            sum
        })
    });
    let velocities: Vec<Velocity> = (0..ENTITIES).map(velocity).collect();
    let indices: Vec<usize> = entities.iter().map(|e| e.index() as usize).collect();
    group.bench_function("baseline_vec_index", |b| {
        b.iter(|| {
            let mut sum = 0.0f32;
            for &i in black_box(&indices) {
                sum += velocities[i].0[0];
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
    targets = simple_insert, simple_iter, raw_chunk_iter, one_type_iter, frag_iter, add_remove, get_random
}
criterion_main!(benches);
