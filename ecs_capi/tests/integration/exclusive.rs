//! Exclusive C systems (through the rlib): a body that gets the engine and
//! changes the world at once, alone between waves; the world calls it may
//! make, the engine calls refused during it (also from another thread, or
//! from a component destructor nested in one of its calls), the
//! descriptor refusals, and the same world on 1 and 4 threads.

use crate::common;

use std::ffi::c_void;
use std::ptr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;
use ecs_capi::*;

struct Shared {
    engine: *mut ecs_engine,
    pos: ecs_component_id,
    /// A component whose destructor calls the engine back (set after the
    /// user-data pointer is taken, so through a shared reference).
    nested: AtomicU64,
    counter: ecs_resource_id,
    /// Entity counts seen by the system after the exclusive one.
    seen_after: Mutex<Vec<usize>>,
    /// Statuses of the calls the exclusive body expects refused.
    refused: Mutex<Vec<ecs_status>>,
    /// Status of the nested call a destructor made.
    nested_status: Mutex<Option<ecs_status>>,
    /// Runs of the exclusive body so far.
    ticks: Mutex<u64>,
}

impl Shared {
    fn user(&self) -> *mut c_void {
        (&raw const *self).cast_mut().cast()
    }
}

unsafe extern "C" fn mover(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Shared`.
    let shared = unsafe { &*user.cast::<Shared>() };
    unsafe extern "C" fn step(_: ecs_entity, values: *const *mut c_void, _: *mut c_void) {
        // SAFETY: one u32 declared written.
        unsafe { *(*values).cast::<u32>() += 1 };
    }
    // SAFETY: the running context; the id lives in `shared`.
    ok(unsafe { ecs_view_each(ctx, &shared.pos, 1, Some(step), ptr::null_mut()) });
}

unsafe extern "C" fn count_after(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Shared`.
    let shared = unsafe { &*user.cast::<Shared>() };
    let mut n = 0usize;
    unsafe extern "C" fn add(_: ecs_entity, _: *const *mut c_void, user: *mut c_void) {
        // SAFETY: `user` is the counter below.
        unsafe { *user.cast::<usize>() += 1 };
    }
    // SAFETY: the running context; `n` is a local.
    ok(unsafe { ecs_view_each(ctx, &shared.pos, 1, Some(add), (&raw mut n).cast()) });
    shared.seen_after.lock().unwrap().push(n);
}

unsafe extern "C" fn calls_back(_: *mut c_void, user: *mut c_void) {
    // SAFETY: `user` is the test's `Shared` (the drop user data).
    let shared = unsafe { &*user.cast::<Shared>() };
    let mut out = 0;
    // SAFETY: a live engine, lent to the exclusive system whose call runs
    // this destructor: the nested call must be refused.
    let status = unsafe { ecs_spawn(shared.engine, &mut out) };
    *shared.nested_status.lock().unwrap() = Some(status);
}

/// Each tick: spawns an entity with `pos` = 100 (seen at once), despawns
/// those past 102, bumps the counter resource; tries refused calls.
unsafe extern "C" fn director(engine: *mut ecs_engine, tick: *const ecs_tick, user: *mut c_void) {
    // SAFETY: `user` is the test's `Shared`; `engine` the live engine.
    unsafe {
        let shared = &*user.cast::<Shared>();
        assert_eq!(engine, shared.engine);
        let mut ticks = shared.ticks.lock().unwrap();
        assert_eq!((*tick).number, *ticks, "the tick being run");
        *ticks += 1;
        drop(ticks);
        let mut e = 0;
        ok(ecs_spawn(engine, &mut e));
        let value = 100u32;
        ok(ecs_insert(engine, e, shared.pos, (&raw const value).cast()));
        let mut got: *mut c_void = ptr::null_mut();
        ok(ecs_get(engine, e, shared.pos, &mut got));
        assert_eq!(*got.cast::<u32>(), 100, "applied at once");
        let mut count = 0usize;
        ok(ecs_entity_count(engine, &mut count));
        assert!(ecs_is_alive(engine, e));
        let mut counter = 0u64;
        ok(ecs_resource_get(
            engine,
            shared.counter,
            (&raw mut counter).cast(),
            8,
        ));
        counter += 1;
        ok(ecs_resource_set(
            engine,
            shared.counter,
            (&raw const counter).cast(),
            8,
        ));
        // Despawn what went past 102 (the movers of earlier ticks).
        for index in 0..count as u64 + 2 {
            for generation in 1..3u64 {
                let candidate = (generation << 32) | index;
                if ecs_is_alive(engine, candidate) {
                    let mut value: *mut c_void = ptr::null_mut();
                    if ecs_get(engine, candidate, shared.pos, &mut value) == ECS_OK
                        && *value.cast::<u32>() > 102
                    {
                        ok(ecs_despawn(engine, candidate));
                    }
                }
            }
        }
        let mut refused = shared.refused.lock().unwrap();
        if refused.is_empty() {
            refused.push(ecs_engine_tick(engine));
            refused.push(ecs_engine_build(engine));
            let mut bytes: *mut u8 = ptr::null_mut();
            let mut len = 0;
            refused.push(ecs_engine_save(
                engine,
                ECS_SNAPSHOT_POSTCARD,
                &mut bytes,
                &mut len,
            ));
            refused.push(SystemSpec::new("late", Some(mover)).add_raw(engine));
            // A world call from another thread is refused.
            struct Raw(*mut ecs_engine);
            // SAFETY: the engine may be called from any thread (it refuses
            // what it must).
            unsafe impl Send for Raw {}
            let raw = Raw(engine);
            let from_thread = std::thread::spawn(move || {
                let raw = raw;
                let mut n = 0usize;
                ecs_entity_count(raw.0, &mut n)
            });
            refused.push(from_thread.join().unwrap());
            // A destructor that calls back, nested in a world call.
            let mut victim = 0;
            ok(ecs_spawn(engine, &mut victim));
            let byte = 1u8;
            let nested = shared.nested.load(Ordering::Relaxed);
            ok(ecs_insert(engine, victim, nested, (&raw const byte).cast()));
            ok(ecs_despawn(engine, victim));
        }
    }
}

fn world(threads: u32, ticks: u64) -> (u64, Vec<usize>, u64) {
    let engine = Engine::new(threads);
    let pos = engine.register::<u32>(c"Pos");
    let shared = Box::new(Shared {
        engine: engine.raw(),
        pos,
        nested: AtomicU64::new(0),
        counter: engine.resource(c"Counter", &0u64),
        seen_after: Mutex::new(Vec::new()),
        refused: Mutex::new(Vec::new()),
        nested_status: Mutex::new(None),
        ticks: Mutex::new(0),
    });
    let nested = ecs_component_desc {
        drop: Some(calls_back),
        drop_user_data: shared.user(),
        ..component_desc::<u8>(c"Nested")
    };
    let nested = engine.register_desc(&nested).unwrap();
    shared.nested.store(nested, Ordering::Relaxed);
    let mut move_it = SystemSpec::new("mover", Some(mover));
    move_it.user_data = shared.user();
    move_it.writes = vec![pos];
    ok(move_it.add(&engine));
    let mut direct = SystemSpec::exclusive("director", Some(director));
    direct.user_data = shared.user();
    direct.after = vec![c"mover".to_owned()];
    ok(direct.add(&engine));
    let mut after = SystemSpec::new("after", Some(count_after));
    after.user_data = shared.user();
    after.reads = vec![pos];
    after.after = vec![c"director".to_owned()];
    ok(after.add(&engine));
    ok(engine.run(ticks));
    assert_eq!(
        *shared.refused.lock().unwrap(),
        vec![ECS_ERR_WRONG_STATE; 5],
        "tick, build, save, system_add, another thread"
    );
    assert_eq!(
        *shared.nested_status.lock().unwrap(),
        Some(ECS_ERR_WRONG_STATE)
    );
    let counter: u64 = engine.resource_get(shared.counter);
    let checksum = engine.checksum(&[pos]).unwrap();
    let seen = shared.seen_after.lock().unwrap().clone();
    (checksum, seen, counter)
}

#[test]
fn an_exclusive_c_system_changes_the_world_at_once_and_alone() {
    let (one, seen, counter) = world(1, 6);
    assert_eq!(counter, 6);
    // Tick k: the spawned entity is seen by the next system at once; those
    // spawned 3 ticks before are past 102 and despawned.
    assert_eq!(seen, vec![1, 2, 3, 3, 3, 3]);
    let (four, seen_four, _) = world(4, 6);
    assert_eq!((one, &seen), (four, &seen_four));
}

unsafe extern "C" fn nothing(_: *mut ecs_engine, _: *const ecs_tick, _: *mut c_void) {}

#[test]
fn an_exclusive_system_declares_nothing_and_has_one_body() {
    let engine = Engine::new(1);
    let pos = engine.register::<u32>(c"Pos");
    let mut reads = SystemSpec::exclusive("reads", Some(nothing));
    reads.reads = vec![pos];
    fails(reads.add(&engine), ECS_ERR_INVALID_ARGUMENT, "`reads`");
    let mut commands = SystemSpec::exclusive("commands", Some(nothing));
    commands.commands = true;
    fails(
        commands.add(&engine),
        ECS_ERR_INVALID_ARGUMENT,
        "`commands`",
    );
    let mut both = SystemSpec::exclusive("both", Some(nothing));
    both.run = Some(mover);
    fails(
        both.add(&engine),
        ECS_ERR_INVALID_ARGUMENT,
        "both `run` and `run_exclusive`",
    );
    fails(
        SystemSpec::exclusive("none", None).add(&engine),
        ECS_ERR_NULL_POINTER,
        "desc->run",
    );
    // A startup exclusive system runs once, before the first tick.
    ok(SystemSpec {
        startup: true,
        ..SystemSpec::exclusive("setup", Some(nothing))
    }
    .add(&engine));
    ok(engine.run(2));
}

/// Three entities (a parent and two others) and the statuses of the calls
/// an exclusive body made on them.
struct Family {
    members: [ecs_entity; 3],
    statuses: Mutex<Vec<(&'static str, ecs_status)>>,
    /// What `ecs_component_get_info` gave for `Pos` (size, alignment,
    /// destructor, flags).
    pos_info: Mutex<(usize, usize, bool, u64)>,
}

unsafe extern "C" fn rearrange(engine: *mut ecs_engine, _: *const ecs_tick, user: *mut c_void) {
    // SAFETY: `user` is the test's `Family`; `engine` the live engine.
    unsafe {
        let f = &*user.cast::<Family>();
        let [parent, first, second] = f.members;
        let mut log = f.statuses.lock().unwrap();
        let (mut entity, mut changed, mut count) = (0, false, 0usize);
        let mut lookup = 0;
        log.push((
            "ecs_component_lookup",
            ecs_component_lookup(engine, c"Pos".as_ptr(), &mut lookup),
        ));
        let mut info = ecs_component_info {
            struct_size: size_of::<ecs_component_info>() as u32,
            savable: true,
            has_drop: true,
            size: 0,
            align: 0,
            flags: 9,
        };
        log.push((
            "ecs_component_get_info",
            ecs_component_get_info(engine, lookup, &mut info),
        ));
        *f.pos_info.lock().unwrap() = (info.size, info.align, info.has_drop, info.flags);
        log.push(("ecs_parent", ecs_parent(engine, first, &mut entity)));
        log.push(("ecs_set_parent", ecs_set_parent(engine, second, parent)));
        log.push((
            "ecs_children",
            ecs_children(engine, parent, ptr::null_mut(), 0, &mut count),
        ));
        log.push((
            "ecs_remove_parent",
            ecs_remove_parent(engine, first, &mut entity),
        ));
        log.push(("ecs_disable", ecs_disable(engine, parent, &mut changed)));
        log.push(("ecs_enable", ecs_enable(engine, parent, &mut changed)));
        log.push((
            "ecs_disable_recursive",
            ecs_disable_recursive(engine, parent, &mut count),
        ));
        log.push((
            "ecs_enable_recursive",
            ecs_enable_recursive(engine, parent, &mut count),
        ));
        log.push((
            "ecs_is_disabled",
            ecs_is_disabled(engine, parent, &mut changed),
        ));
        log.push((
            "ecs_despawn_recursive",
            ecs_despawn_recursive(engine, parent, &mut count),
        ));
    }
}

#[test]
fn the_hierarchy_and_disabled_calls_work_in_an_exclusive_system() {
    let engine = Engine::new(1);
    engine.register::<u32>(c"Pos");
    let members = [engine.spawn(), engine.spawn(), engine.spawn()];
    // SAFETY: a live engine, between ticks.
    ok(unsafe { ecs_set_parent(engine.raw(), members[1], members[0]) });
    let family = Family {
        members,
        statuses: Mutex::new(Vec::new()),
        pos_info: Mutex::new((0, 0, true, 9)),
    };
    let mut body = SystemSpec::exclusive("rearrange", Some(rearrange));
    body.user_data = (&raw const family).cast_mut().cast();
    ok(body.add(&engine));
    ok(engine.tick());
    let statuses = family.statuses.lock().unwrap().clone();
    assert_eq!(statuses.len(), 12);
    let refused: Vec<_> = statuses.iter().filter(|(_, s)| *s != ECS_OK).collect();
    assert!(
        refused.is_empty(),
        "refused in an exclusive system: {refused:?}"
    );
    assert_eq!(
        *family.pos_info.lock().unwrap(),
        (4, 4, false, 0),
        "Pos is a plain u32"
    );
    // The recursive despawn took the parent and the child set in the body.
    assert!(!engine.is_alive(members[0]) && !engine.is_alive(members[2]));
    assert!(engine.is_alive(members[1]), "its parent was removed first");
}
