//! `capi_simple_iter`: the 10,000-entity `position += velocity` pass as a
//! system written against the C API, beside the same system in Rust and a
//! plain-array baseline, in one run; `capi_simple_iter_1m`: the same cases
//! at 1,000,000 entities (issue 30: the C view walk within 1.3x of the Rust
//! one at that size). The C-side callbacks are `extern "C"`
//! functions called through C function pointers with raw pointers, exactly
//! what a C caller's callbacks cost at the boundary (the loop bodies are
//! compiled by LLVM rather than gcc).
//!
//! Both systems run as a one-system schedule on one thread, so both ratios
//! include the same per-tick cost; `rust_view` is the bare view pass.

#[path = "../tests/common/mod.rs"]
mod common;

use std::ffi::c_void;
use std::hint::black_box;
use std::ptr;

use ::ecs_engine::Registry;
use common::{Engine, SystemSpec, ok};
use criterion::{Criterion, criterion_group, criterion_main};
use ecs_capi::*;
use scheduler::{Query, Schedule, Tick};

/// The entities of `capi_simple_iter` (its figures since issue 7).
const ENTITIES: usize = 10_000;
/// The entities of `capi_simple_iter_1m` (issue 30).
const ENTITIES_1M: usize = 1_000_000;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct Position {
    x: f32,
    y: f32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct Velocity {
    x: f32,
    y: f32,
}

fn start(i: usize) -> (Position, Velocity) {
    let f = i as f32;
    (Position { x: f, y: -f }, Velocity { x: 1.0, y: 0.5 })
}

/// The C system's ids, passed as its user data.
struct Ids([ecs_component_id; 2]);

unsafe extern "C" fn move_chunk(chunk: *const ecs_view_chunk, _: *mut c_void) {
    // SAFETY: a valid chunk of (Position, Velocity) columns.
    unsafe {
        let chunk = &*chunk;
        let p = (*chunk.columns).cast::<Position>();
        let v = (*chunk.columns.add(1)).cast::<Velocity>();
        for i in 0..chunk.len {
            let (p, v) = (&mut *p.add(i), &*v.add(i));
            p.x += v.x;
            p.y += v.y;
        }
    }
}

unsafe extern "C" fn chunk_system(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the bench's `Ids`.
    let ids = unsafe { &*user.cast::<Ids>() };
    // SAFETY: `ctx` is the running system's context; the ids live in `Ids`.
    ok(unsafe { ecs_view_each_chunk(ctx, ids.0.as_ptr(), 2, Some(move_chunk), ptr::null_mut()) });
}

unsafe extern "C" fn move_one(_: ecs_entity, c: *const *mut c_void, _: *mut c_void) {
    // SAFETY: two valid component pointers.
    unsafe {
        let p = &mut *(*c).cast::<Position>();
        let v = &*(*c.add(1)).cast::<Velocity>();
        p.x += v.x;
        p.y += v.y;
    }
}

unsafe extern "C" fn each_system(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the bench's `Ids`.
    let ids = unsafe { &*user.cast::<Ids>() };
    // SAFETY: `ctx` is the running system's context; the ids live in `Ids`.
    ok(unsafe { ecs_view_each(ctx, ids.0.as_ptr(), 2, Some(move_one), ptr::null_mut()) });
}

/// A one-thread engine holding a world of `entities` and one C system `run`.
fn c_engine(run: ecs_system_fn, ids: &mut Ids, entities: usize) -> Engine {
    let engine = Engine::new(1);
    ids.0 = [
        engine.register::<Position>(c"Position"),
        engine.register::<Velocity>(c"Velocity"),
    ];
    for i in 0..entities {
        let (p, v) = start(i);
        let e = engine.spawn();
        engine.insert(e, ids.0[0], p);
        engine.insert(e, ids.0[1], v);
    }
    let mut system = SystemSpec::new("movement", run);
    system.user_data = (ids as *mut Ids).cast();
    system.reads = vec![ids.0[1]];
    system.writes = vec![ids.0[0]];
    ok(system.add(&engine));
    ok(engine.build());
    engine
}

fn movement(mut q: Query<(&mut Position, &Velocity)>) {
    q.each(|(p, v)| {
        p.x += v.x;
        p.y += v.y;
    });
}

/// The five cases over `entities` entities in the group `name`, with
/// `samples` samples per case.
fn simple_iter(c: &mut Criterion, name: &str, entities: usize, samples: usize) {
    let mut group = c.benchmark_group(name);
    group.sample_size(samples);

    let (mut ps, vs): (Vec<Position>, Vec<Velocity>) = (0..entities).map(start).unzip();
    group.bench_function("plain_vec", |b| {
        b.iter(|| {
            for (p, v) in ps.iter_mut().zip(&vs) {
                p.x += v.x;
                p.y += v.y;
            }
            black_box(&mut ps);
        });
    });

    let mut registry = Registry::new();
    registry.spawn_batch((0..entities).map(start));
    group.bench_function("rust_view", |b| {
        b.iter(|| {
            registry
                .view_mut::<(&mut Position, &Velocity)>()
                .each(|(p, v)| {
                    p.x += v.x;
                    p.y += v.y;
                });
        });
    });

    let mut builder = Schedule::builder();
    builder.threads(1);
    builder.add(movement);
    let mut schedule = builder.build(&mut registry).unwrap();
    group.bench_function("rust_system_tick", |b| {
        b.iter(|| schedule.run(&mut registry, Tick::default()).unwrap());
    });

    for (label, run) in [
        ("c_chunk_system_tick", Some(chunk_system as _)),
        ("c_each_system_tick", Some(each_system as _)),
    ] {
        let mut ids = Ids([0; 2]);
        let engine = c_engine(run, &mut ids, entities);
        group.bench_function(label, |b| b.iter(|| ok(engine.tick())));
    }
    group.finish();
}

fn capi_simple_iter(c: &mut Criterion) {
    simple_iter(c, "capi_simple_iter", ENTITIES, 100);
}

/// 1,000,000 entities: a pass takes milliseconds, so 30 samples (instead
/// of criterion's 100) fit the bench's usual 3-second measurement.
fn capi_simple_iter_1m(c: &mut Criterion) {
    simple_iter(c, "capi_simple_iter_1m", ENTITIES_1M, 30);
}

criterion_group!(benches, capi_simple_iter, capi_simple_iter_1m);
criterion_main!(benches);
