//! Scheduler benchmarks, each beside a baseline in the same group: the same
//! loops run one after the other on plain `Vec`s, or on one thread.

use std::alloc::Layout;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use ecs_runtime::ecs_engine::{ComponentDescriptor, ComponentId, Registry};
use ecs_runtime::scheduler::{
    DeclaredSystem, Policy, Query, Res, Schedule, ScheduleBuilder, SystemAccess, SystemContext,
    SystemError, Tick,
};

/// Entities per archetype in `schedule`.
const PER_SET: usize = 10_000;
/// Entities in `heavy_compute`.
const HEAVY: usize = 1_000;
/// Matrix inversions per entity in `heavy_compute`.
const INVERSIONS: usize = 100;

struct A(f32);
struct B(f32);
struct C(f32);
struct D(f32);
struct E(f32);

fn ab(mut q: Query<(&mut A, &mut B)>) {
    q.each(|(a, b)| std::mem::swap(&mut a.0, &mut b.0));
}
fn cd(mut q: Query<(&mut C, &mut D)>) {
    q.each(|(c, d)| std::mem::swap(&mut c.0, &mut d.0));
}
fn ce(mut q: Query<(&mut C, &mut E)>) {
    q.each(|(c, e)| std::mem::swap(&mut c.0, &mut e.0));
}

/// The `schedule` world. `batched`: each archetype spawned as one batch
/// (so every pool holds each archetype's entities as one run); otherwise
/// interleaved, one entity of each archetype in turn.
fn schedule_world(batched: bool) -> Registry {
    let mut registry = Registry::new();
    let x = |i: usize| i as f32;
    if batched {
        registry.spawn_batch((0..PER_SET).map(|i| (A(x(i)), B(x(i)))));
        registry.spawn_batch((0..PER_SET).map(|i| (A(x(i)), B(x(i)), C(x(i)))));
        registry.spawn_batch((0..PER_SET).map(|i| (A(x(i)), B(x(i)), C(x(i)), D(x(i)))));
        registry.spawn_batch((0..PER_SET).map(|i| (A(x(i)), B(x(i)), C(x(i)), E(x(i)))));
    } else {
        for i in 0..PER_SET {
            registry.spawn((A(x(i)), B(x(i))));
            registry.spawn((A(x(i)), B(x(i)), C(x(i))));
            registry.spawn((A(x(i)), B(x(i)), C(x(i)), D(x(i))));
            registry.spawn((A(x(i)), B(x(i)), C(x(i)), E(x(i))));
        }
    }
    registry
}

fn schedule(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule");
    for (batched, sorted, label) in [
        (true, false, "batched"),
        (false, false, "interleaved"),
        (false, true, "interleaved_sorted"),
    ] {
        let mut registry = schedule_world(batched);
        if sorted {
            registry.sort_pools();
        }
        for threads in [1, 2] {
            let mut builder = Schedule::builder();
            builder.threads(threads);
            builder.add(ab);
            builder.add(cd);
            builder.add(ce);
            let mut schedule = builder.build(&mut registry).unwrap();
            assert_eq!(
                schedule.waves().len(),
                2,
                "ab and cd share a wave; ce follows cd"
            );
            group.bench_function(format!("registry_{label}_{threads}_threads"), |b| {
                b.iter(|| schedule.run(&mut registry, Tick::default()).unwrap())
            });
        }
    }
    let n = PER_SET;
    let (mut a, mut b) = (vec![0.0f32; 4 * n], vec![0.0f32; 4 * n]);
    let (mut c1, mut d) = (vec![0.0f32; n], vec![0.0f32; n]);
    let (mut c2, mut e) = (vec![0.0f32; n], vec![0.0f32; n]);
    group.bench_function("baseline_sequential_vecs", |bench| {
        bench.iter(|| {
            for (x, y) in black_box(&mut a)
                .iter_mut()
                .zip(black_box(&mut b).iter_mut())
            {
                std::mem::swap(x, y);
            }
            for (x, y) in black_box(&mut c1)
                .iter_mut()
                .zip(black_box(&mut d).iter_mut())
            {
                std::mem::swap(x, y);
            }
            for (x, y) in black_box(&mut c2)
                .iter_mut()
                .zip(black_box(&mut e).iter_mut())
            {
                std::mem::swap(x, y);
            }
        })
    });
    group.finish();
}

macro_rules! markers {
    ($($t:ident),*) => { $(struct $t;)* };
}
markers!(T0, T1, T2, T3, T4, T5, T6, T7);

type Run = fn(&SystemContext<'_>) -> Result<(), SystemError>;

fn nothing(_: &SystemContext<'_>) -> Result<(), SystemError> {
    Ok(())
}

/// Access of system `j` of wave `w`: writes one of the eight types, reads
/// another, so that each column of systems forms a chain.
fn access(w: usize, j: usize) -> SystemAccess {
    let low = [
        SystemAccess::new().write::<T0>().read::<T4>(),
        SystemAccess::new().write::<T1>().read::<T5>(),
        SystemAccess::new().write::<T2>().read::<T6>(),
        SystemAccess::new().write::<T3>().read::<T7>(),
    ];
    let high = [
        SystemAccess::new().write::<T4>().read::<T0>(),
        SystemAccess::new().write::<T5>().read::<T1>(),
        SystemAccess::new().write::<T6>().read::<T2>(),
        SystemAccess::new().write::<T7>().read::<T3>(),
    ];
    if w.is_multiple_of(2) {
        low[j].clone()
    } else {
        high[j].clone()
    }
}

fn empty_schedule(c: &mut Criterion) {
    let mut group = c.benchmark_group("empty_schedule");
    let mut registry = Registry::new();
    for threads in [1, 2] {
        let mut builder = Schedule::builder();
        builder.threads(threads).policy(Policy::RegistrationOrder);
        for w in 0..5 {
            for j in 0..4 {
                builder.add(DeclaredSystem::new(
                    format!("s{w}{j}"),
                    access(w, j),
                    nothing as Run,
                ));
            }
        }
        let mut schedule = builder.build(&mut registry).unwrap();
        let widths: Vec<usize> = schedule.waves().iter().map(Vec::len).collect();
        assert_eq!(widths, vec![4; 5]);
        group.bench_function(format!("20_systems_5_waves_{threads}_threads"), |b| {
            b.iter(|| schedule.run(&mut registry, Tick::default()).unwrap())
        });
    }
    group.finish();
}

/// A 4x4 matrix, row-major.
#[derive(Clone, Copy)]
struct Matrix([[f64; 4]; 4]);

/// Gauss-Jordan inversion with partial pivoting; the input is always
/// invertible here (diagonally dominant).
fn invert(m: &Matrix) -> Matrix {
    let mut a = m.0;
    let mut inv = [[0.0; 4]; 4];
    for (i, row) in inv.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    for col in 0..4 {
        let pivot = (col..4)
            .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
            .expect("non-empty range");
        a.swap(col, pivot);
        inv.swap(col, pivot);
        let p = a[col][col];
        for k in 0..4 {
            a[col][k] /= p;
            inv[col][k] /= p;
        }
        for row in 0..4 {
            if row != col {
                let f = a[row][col];
                for k in 0..4 {
                    a[row][k] -= f * a[col][k];
                    inv[row][k] -= f * inv[col][k];
                }
            }
        }
    }
    Matrix(inv)
}

fn heavy(m: &mut Matrix) {
    for _ in 0..INVERSIONS {
        *m = invert(m);
    }
}

fn heavy_compute(c: &mut Criterion) {
    let mut group = c.benchmark_group("heavy_compute");
    let mut registry = Registry::new();
    for i in 0..HEAVY {
        let d = 4.0 + i as f64 * 1e-3;
        registry.spawn((Matrix([
            [d, 1.0, 0.5, 0.0],
            [0.0, d, 1.0, 0.5],
            [0.5, 0.0, d, 1.0],
            [1.0, 0.5, 0.0, d],
        ]),));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    group.bench_function("par_each_2_threads", |b| {
        b.iter(|| pool.install(|| registry.view_mut::<&mut Matrix>().par_each(heavy)))
    });
    group.bench_function("baseline_one_thread", |b| {
        b.iter(|| registry.view_mut::<&mut Matrix>().each(heavy))
    });
    group.finish();
}

/// A plain call in the baselines.
type Call = fn(&mut u64);

/// A gate resource for run conditions.
struct Gate(bool);

fn gate_open(gate: Res<Gate>) -> bool {
    gate.0
}

/// 20 empty systems in 5 waves (as `empty_schedule`); with `conditions`,
/// every other one is skipped by a run condition each tick.
fn gated_schedule(registry: &mut Registry, threads: usize, conditions: bool) -> Schedule {
    let mut builder = Schedule::builder();
    builder.threads(threads);
    for w in 0..5 {
        for j in 0..4 {
            let mut config = builder.add(DeclaredSystem::new(
                format!("s{w}{j}"),
                access(w, j),
                nothing as Run,
            ));
            if conditions && j % 2 == 1 {
                config.run_if(gate_open);
            }
        }
    }
    let schedule = builder.build(registry).unwrap();
    let widths: Vec<usize> = schedule.waves().iter().map(Vec::len).collect();
    assert_eq!(widths, vec![4; 5]);
    schedule
}

fn run_conditions(c: &mut Criterion) {
    let mut group = c.benchmark_group("run_conditions");
    let mut registry = Registry::new();
    registry.insert_resource(Gate(false));
    for threads in [1, 2] {
        for (conditions, label) in [(true, "half_skipped"), (false, "no_conditions")] {
            let mut schedule = gated_schedule(&mut registry, threads, conditions);
            group.bench_function(format!("20_systems_{label}_{threads}_threads"), |b| {
                b.iter(|| schedule.run(&mut registry, Tick::default()).unwrap())
            });
        }
    }
    // Baseline: 20 plain calls in a Vec, every other one behind a bool.
    let calls: Vec<(bool, Call)> = (0..20)
        .map(|i| (i % 2 == 1, (|x: &mut u64| *x += 1) as Call))
        .collect();
    let gate = Gate(false);
    group.bench_function("baseline_vec_of_calls", |b| {
        let mut x = 0u64;
        b.iter(|| {
            for (conditional, call) in black_box(&calls) {
                if !conditional || black_box(&gate).0 {
                    call(&mut x);
                }
            }
            black_box(x)
        })
    });
    group.finish();
}

fn exclusive(c: &mut Criterion) {
    let mut group = c.benchmark_group("exclusive");
    let mut registry = Registry::new();
    for threads in [1, 2] {
        for (with_exclusive, label) in [(true, "between_two_waves"), (false, "two_waves_only")] {
            let mut builder = Schedule::builder();
            builder.threads(threads);
            for j in 0..4 {
                builder.add(DeclaredSystem::new(
                    format!("a{j}"),
                    access(0, j),
                    nothing as Run,
                ));
            }
            if with_exclusive {
                builder.add(|registry: &mut Registry| {
                    black_box(registry.len());
                });
            }
            for j in 0..4 {
                builder.add(DeclaredSystem::new(
                    format!("b{j}"),
                    access(1, j),
                    nothing as Run,
                ));
            }
            let mut schedule = builder.build(&mut registry).unwrap();
            assert_eq!(schedule.waves().len(), if with_exclusive { 3 } else { 2 });
            group.bench_function(format!("{label}_{threads}_threads"), |b| {
                b.iter(|| schedule.run(&mut registry, Tick::default()).unwrap())
            });
        }
    }
    // Baseline: the 9 calls one after the other on a plain Vec.
    let mut values = vec![0u64; 9];
    group.bench_function("baseline_vec_of_calls", |b| {
        b.iter(|| {
            for v in black_box(&mut values).iter_mut() {
                *v += 1;
            }
        })
    });
    group.finish();
}

/// Run-time components in `schedule_build`'s random lists.
const BUILD_COMPONENTS: usize = 1_000;

/// `n` systems that all write `A`: every pair conflicts.
fn conflicting(n: usize) -> ScheduleBuilder {
    let mut builder = Schedule::builder();
    builder.threads(1);
    for i in 0..n {
        builder.add(DeclaredSystem::new(
            format!("s{i}"),
            SystemAccess::new().write::<A>(),
            nothing as Run,
        ));
    }
    builder
}

/// `n` systems, each touching 4 of `ids` at random (xorshift, fixed
/// seed), one access in four a write.
fn random_access(n: usize, ids: &[ComponentId]) -> ScheduleBuilder {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut builder = Schedule::builder();
    builder.threads(1);
    for i in 0..n {
        let mut access = SystemAccess::new();
        for _ in 0..4 {
            let k = (next() % ids.len() as u64) as usize;
            access = if next().is_multiple_of(4) {
                access.write_runtime(ids[k], format!("c{k}"))
            } else {
                access.read_runtime(ids[k], format!("c{k}"))
            };
        }
        builder.add(DeclaredSystem::new(format!("s{i}"), access, nothing as Run));
    }
    builder
}

/// Kahn's levels of `edges` over `n` nodes on plain `Vec`s: the least a
/// build must do once it knows its edges.
fn plain_levels(n: usize, edges: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let mut successors = vec![Vec::new(); n];
    let mut in_degree = vec![0usize; n];
    for &(from, to) in edges {
        successors[from].push(to);
        in_degree[to] += 1;
    }
    let mut wave: Vec<usize> = (0..n).filter(|&i| in_degree[i] == 0).collect();
    let mut waves = Vec::new();
    while !wave.is_empty() {
        let mut next = Vec::new();
        for &u in &wave {
            for &v in &successors[u] {
                in_degree[v] -= 1;
                if in_degree[v] == 0 {
                    next.push(v);
                }
            }
        }
        next.sort_unstable();
        waves.push(std::mem::replace(&mut wave, next));
    }
    waves
}

/// Schedule build time (names, access, DAG, waves, a one-thread pool),
/// each beside a plain topological sort of the edges the built DAG keeps.
fn schedule_build(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule_build");
    group.sample_size(10);
    let mut registry = Registry::new();
    let ids: Vec<ComponentId> = (0..BUILD_COMPONENTS)
        .map(|k| {
            registry
                .register_runtime(ComponentDescriptor::new(
                    format!("c{k}"),
                    Layout::new::<u32>(),
                ))
                .unwrap()
        })
        .collect();
    let cases: [(String, Box<dyn Fn() -> ScheduleBuilder>); 3] = [
        ("1000_conflicting".into(), Box::new(|| conflicting(1_000))),
        ("10000_conflicting".into(), Box::new(|| conflicting(10_000))),
        (
            format!("10000_random_over_{BUILD_COMPONENTS}_components"),
            Box::new(|| random_access(10_000, &ids)),
        ),
    ];
    for (label, make) in &cases {
        let schedule = make().build(&mut registry).unwrap();
        let n = schedule.len();
        let edges: Vec<(usize, usize)> = schedule
            .edges()
            .map(|(from, to, _)| (from.index(), to.index()))
            .collect();
        assert_eq!(plain_levels(n, &edges).len(), schedule.waves().len());
        group.bench_function(label.as_str(), |b| {
            b.iter_batched(
                make,
                |builder| builder.build(&mut registry).unwrap(),
                BatchSize::PerIteration,
            )
        });
        group.bench_function(format!("{label}_baseline_plain_toposort"), |b| {
            b.iter(|| plain_levels(n, black_box(&edges)))
        });
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = schedule, empty_schedule, run_conditions, exclusive, heavy_compute, schedule_build
}
criterion_main!(benches);
