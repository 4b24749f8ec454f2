//! Parallel chunk walks from C (through the rlib): every row handed out
//! once, in pieces of at most `ECS_PAR_CHUNK_ROWS`, the same world on 1
//! and 4 threads as the serial walk.

use crate::common;

use std::ffi::c_void;
use std::ptr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;
use ecs_capi::*;

/// What the walking system shares.
struct Walk {
    position: ecs_component_id,
    velocity: ecs_component_id,
    /// Rows seen, and the length of every piece.
    rows: AtomicU64,
    pieces: Mutex<Vec<usize>>,
    parallel: bool,
}

unsafe extern "C" fn piece(chunk: *const ecs_view_chunk, user: *mut c_void) {
    // SAFETY: the test's `Walk`; the chunk and its columns are valid during
    // the call, its rows this call's alone.
    unsafe {
        let walk = &*user.cast::<Walk>();
        let chunk = &*chunk;
        let columns = std::slice::from_raw_parts(chunk.columns, 2);
        let p = std::slice::from_raw_parts_mut(columns[0].cast::<Vec2>(), chunk.len);
        let v = std::slice::from_raw_parts(columns[1].cast::<Vec2>(), chunk.len);
        for (p, v) in p.iter_mut().zip(v) {
            p.x += v.x;
            p.y += v.y * p.x;
        }
        walk.rows.fetch_add(chunk.len as u64, Ordering::Relaxed);
        walk.pieces.lock().unwrap().push(chunk.len);
    }
}

unsafe extern "C" fn mover(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: the test's `Walk`.
    let walk = unsafe { &*user.cast::<Walk>() };
    let terms = [walk.position, walk.velocity];
    let walk_fn = if walk.parallel {
        ecs_view_par_each_chunk
    } else {
        ecs_view_each_chunk
    };
    // SAFETY: the running context; `terms` lives across the call; `piece`
    // touches only its own rows and synchronises the rest.
    ok(unsafe { walk_fn(ctx, terms.as_ptr(), 2, Some(piece), user) });
}

/// The world after `ticks` ticks of the walk over `n` entities, and the
/// walk's record.
fn world(threads: u32, parallel: bool, n: usize, ticks: u64) -> (u64, Box<Walk>) {
    let engine = Engine::new(threads);
    let position = engine.register::<Vec2>(c"Position");
    let velocity = engine.register::<Vec2>(c"Velocity");
    for i in 0..n {
        let e = engine.spawn();
        engine.insert(
            e,
            position,
            Vec2 {
                x: i as f32,
                y: 0.0,
            },
        );
        engine.insert(
            e,
            velocity,
            Vec2 {
                x: 1.0,
                y: (i % 7) as f32 * 0.25,
            },
        );
    }
    let walk = Box::new(Walk {
        position,
        velocity,
        rows: AtomicU64::new(0),
        pieces: Mutex::new(Vec::new()),
        parallel,
    });
    let mut spec = SystemSpec::new("move", Some(mover));
    spec.user_data = (&raw const *walk).cast_mut().cast();
    spec.reads = vec![velocity];
    spec.writes = vec![position];
    ok(spec.add(&engine));
    ok(engine.run(ticks));
    let checksum = engine.checksum(&[position, velocity]).unwrap();
    (checksum, walk)
}

#[test]
fn a_parallel_walk_hands_out_every_row_once_in_pieces_and_gives_the_serial_world() {
    let n = 3 * ECS_PAR_CHUNK_ROWS + 17;
    let (serial, _) = world(1, false, n, 3);
    for threads in [1, 4] {
        let (checksum, walk) = world(threads, true, n, 3);
        assert_eq!(checksum, serial, "{threads} threads");
        assert_eq!(walk.rows.load(Ordering::Relaxed), 3 * n as u64);
        let mut pieces = walk.pieces.lock().unwrap().clone();
        pieces.sort_unstable();
        let mut expected = [
            17,
            ECS_PAR_CHUNK_ROWS,
            ECS_PAR_CHUNK_ROWS,
            ECS_PAR_CHUNK_ROWS,
        ]
        .repeat(3);
        expected.sort_unstable();
        assert_eq!(pieces, expected, "{threads} threads");
    }
}

#[test]
fn a_parallel_walk_refuses_what_the_serial_one_refuses() {
    let engine = Engine::new(2);
    let position = engine.register::<Vec2>(c"Position");
    let statuses: Mutex<Vec<ecs_status>> = Mutex::new(Vec::new());
    unsafe extern "C" fn undeclared(ctx: *mut ecs_system_ctx, user: *mut c_void) {
        // SAFETY: the test's `(id, statuses)` pair.
        let (id, statuses) =
            unsafe { &*user.cast::<(ecs_component_id, &Mutex<Vec<ecs_status>>)>() };
        // SAFETY: the running context; `id` lives across the call.
        let status = unsafe { ecs_view_par_each_chunk(ctx, id, 1, Some(piece), ptr::null_mut()) };
        // SAFETY: as above; NULL callback on purpose.
        let null = unsafe { ecs_view_par_each_chunk(ctx, id, 1, None, ptr::null_mut()) };
        statuses.lock().unwrap().extend([status, null]);
    }
    let user = (position, &statuses);
    let mut spec = SystemSpec::new("sneaky", Some(undeclared));
    spec.user_data = (&raw const user).cast_mut().cast();
    ok(spec.add(&engine));
    ok(engine.tick());
    assert_eq!(
        *statuses.lock().unwrap(),
        [ECS_ERR_UNDECLARED, ECS_ERR_NULL_POINTER]
    );
}

/// Hands its context and command buffer to another thread, which tries them.
unsafe extern "C" fn lends_its_context(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: the test's statuses.
    let statuses = unsafe { &*user.cast::<Mutex<Vec<ecs_status>>>() };
    let mut commands = ptr::null_mut();
    // SAFETY: the running context, on its own thread.
    ok(unsafe { ecs_ctx_commands(ctx, &mut commands) });
    let (ctx, commands) = (ctx as usize, commands as usize);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut tick = ecs_tick::default();
            let mut e = 0;
            // SAFETY: pointers the system is still running with (the
            // scope ends before the callback returns); another thread on
            // purpose.
            let got = unsafe {
                [
                    ecs_ctx_tick(ctx as *const ecs_system_ctx, &mut tick),
                    ecs_commands_spawn(commands as *mut ecs_commands, &mut e),
                    ecs_ctx_fail(ctx as *mut ecs_system_ctx, ptr::null()),
                ]
            };
            statuses.lock().unwrap().extend(got);
        });
    });
}

#[test]
fn a_context_is_refused_on_another_thread() {
    let engine = Engine::new(2);
    let statuses: Mutex<Vec<ecs_status>> = Mutex::new(Vec::new());
    let mut spec = SystemSpec::new("lender", Some(lends_its_context));
    spec.user_data = (&raw const statuses).cast_mut().cast();
    spec.commands = true;
    ok(spec.add(&engine));
    let entities = engine.count();
    ok(engine.tick());
    assert_eq!(*statuses.lock().unwrap(), [ECS_ERR_WRONG_STATE; 3]);
    assert_eq!(
        engine.count(),
        entities,
        "the spawn from another thread was refused"
    );
}
