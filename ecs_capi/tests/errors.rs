//! Every error path of the C API, called from Rust: status codes,
//! messages, and a world left as it was.

mod common;

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use ecs_capi::*;

#[track_caller]
fn fails(status: ecs_status, expected: ecs_status, words: &str) {
    assert_eq!(status, expected, "{}", last_error());
    let message = last_error();
    assert!(
        message.contains(words),
        "`{message}` should mention `{words}`"
    );
}

#[test]
fn null_pointers_are_errors() {
    let engine = engine(1);
    let id = register::<u32>(engine, c"Health");
    let e = spawn(engine);
    let mut out_ptr: *mut c_void = ptr::null_mut();
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe {
        fails(
            ecs_engine_create(ptr::null(), ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "desc",
        );
        fails(
            ecs_engine_tick(ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "engine",
        );
        fails(
            ecs_spawn(engine, ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "out",
        );
        fails(
            ecs_insert(engine, e, id, ptr::null()),
            ECS_ERR_NULL_POINTER,
            "value",
        );
        fails(
            ecs_get(ptr::null_mut(), e, id, &mut out_ptr),
            ECS_ERR_NULL_POINTER,
            "engine",
        );
        fails(
            ecs_component_register(engine, ptr::null(), ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "desc",
        );
        fails(
            ecs_system_add(engine, ptr::null()),
            ECS_ERR_NULL_POINTER,
            "desc",
        );
        fails(
            ecs_queue_try_pop(ptr::null(), ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "queue",
        );
        fails(
            ecs_world_checksum(engine, ptr::null(), 1, ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "ids",
        );
        assert!(!ecs_is_alive(ptr::null(), e));
        ecs_engine_destroy(ptr::null_mut());
        ecs_queue_destroy(ptr::null_mut());
        ecs_engine_destroy(engine);
    }
}

#[test]
fn bad_descriptors_are_invalid_arguments() {
    let mut engine = ptr::null_mut();
    let mut desc = ecs_engine_desc {
        struct_size: 4,
        threads: 1,
        step_seconds: 0.0,
    };
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe {
        fails(
            ecs_engine_create(&desc, &mut engine),
            ECS_ERR_INVALID_ARGUMENT,
            "struct_size",
        );
        desc.struct_size = size_of::<ecs_engine_desc>() as u32;
        desc.threads = 0;
        fails(
            ecs_engine_create(&desc, &mut engine),
            ECS_ERR_INVALID_ARGUMENT,
            "threads",
        );
        desc.threads = 1;
        desc.step_seconds = -1.0;
        fails(
            ecs_engine_create(&desc, &mut engine),
            ECS_ERR_INVALID_ARGUMENT,
            "step_seconds",
        );
        assert!(engine.is_null());
    }
    let engine = common::engine(1);
    let mut id = u32::MAX;
    let mut component = component_desc::<u32>(c"Health");
    component.align = 3;
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe {
        fails(
            ecs_component_register(engine, &component, &mut id),
            ECS_ERR_INVALID_ARGUMENT,
            "alignment 3",
        );
        component.align = 4;
        component.name = ptr::null();
        fails(
            ecs_component_register(engine, &component, &mut id),
            ECS_ERR_NULL_POINTER,
            "name",
        );
        component.name = c"".as_ptr();
        fails(
            ecs_component_register(engine, &component, &mut id),
            ECS_ERR_INVALID_ARGUMENT,
            "empty",
        );
        component.name = c"Health".as_ptr();
        component.struct_size = 8;
        fails(
            ecs_component_register(engine, &component, &mut id),
            ECS_ERR_INVALID_ARGUMENT,
            "struct_size",
        );
        let queue_desc = ecs_queue_desc {
            struct_size: size_of::<ecs_queue_desc>() as u32,
            event_size: 0,
            capacity: 0,
        };
        let mut queue = ptr::null_mut();
        fails(
            ecs_queue_create(&queue_desc, &mut queue),
            ECS_ERR_INVALID_ARGUMENT,
            "event_size",
        );
        assert_eq!(id, u32::MAX, "a failed call writes nothing");
        ecs_engine_destroy(engine);
    }
}

#[test]
fn duplicates_unknown_ids_and_stale_entities_are_reported() {
    let engine = engine(1);
    let health = register::<u32>(engine, c"Health");
    let desc = component_desc::<u32>(c"Health");
    let mut id = 0;
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe {
        fails(
            ecs_component_register(engine, &desc, &mut id),
            ECS_ERR_DUPLICATE_NAME,
            "Health",
        );
        fails(
            ecs_component_lookup(engine, c"Mana".as_ptr(), &mut id),
            ECS_ERR_UNKNOWN_COMPONENT,
            "Mana",
        );
    }
    let e = spawn(engine);
    insert(engine, e, health, 10u32);
    let value = 5u32;
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe {
        fails(
            ecs_insert(engine, e, 99, (&raw const value).cast()),
            ECS_ERR_UNKNOWN_COMPONENT,
            "0x63",
        );
        ok(ecs_despawn(engine, e));
        fails(
            ecs_get(engine, e, health, &mut out),
            ECS_ERR_STALE_ENTITY,
            "not alive",
        );
        fails(
            ecs_insert(engine, e, health, (&raw const value).cast()),
            ECS_ERR_STALE_ENTITY,
            "not alive",
        );
        fails(
            ecs_remove(engine, e, health),
            ECS_ERR_STALE_ENTITY,
            "not alive",
        );
        fails(ecs_despawn(engine, e), ECS_ERR_STALE_ENTITY, "not alive");
        fails(
            ecs_despawn(engine, ECS_ENTITY_NULL),
            ECS_ERR_STALE_ENTITY,
            "not alive",
        );
        fails(ecs_despawn(engine, 0), ECS_ERR_STALE_ENTITY, "0x0");
        // The slot is reused with a new generation: the old handle stays dead.
        let reused = spawn(engine);
        assert_eq!(reused as u32, e as u32);
        assert!(!ecs_is_alive(engine, e));
        fails(
            ecs_remove(engine, reused, health),
            ECS_ERR_MISSING_COMPONENT,
            "Health",
        );
        let mut has = true;
        ok(ecs_has(engine, reused, health, &mut has));
        assert!(!has);
        ecs_engine_destroy(engine);
    }
}

/// What a probing system saw: the statuses of its calls.
#[derive(Default)]
struct Probe {
    id: ecs_component_id,
    entity: ecs_entity,
    get: ecs_status,
    view: ecs_status,
    commands: ecs_status,
    message: String,
}

unsafe extern "C" fn probe(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    unsafe extern "C" fn each(_: ecs_entity, _: *const *mut c_void, _: *mut c_void) {}
    // SAFETY: `user` is the test's `Probe`; pointers are valid.
    unsafe {
        let probe = &mut *user.cast::<Probe>();
        let mut out: *mut c_void = ptr::null_mut();
        probe.get = ecs_ctx_get(ctx, probe.entity, probe.id, &mut out);
        probe.message = last_error();
        probe.view = ecs_view_each(ctx, &probe.id, 1, Some(each), ptr::null_mut());
        let mut commands = ptr::null_mut();
        probe.commands = ecs_ctx_commands(ctx, &mut commands);
    }
}

#[test]
fn a_system_touching_undeclared_components_gets_errors() {
    let engine = engine(2);
    let health = register::<u32>(engine, c"Health");
    let e = spawn(engine);
    insert(engine, e, health, 1u32);
    let mut probe_state = Probe {
        id: health,
        entity: e,
        ..Probe::default()
    };
    let mut spec = SystemSpec::new("prober", Some(probe));
    spec.user_data = (&raw mut probe_state).cast();
    ok(spec.add(engine));
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_engine_tick(engine) });
    assert_eq!(probe_state.get, ECS_ERR_UNDECLARED);
    assert!(
        probe_state.message.contains("prober") && probe_state.message.contains("Health"),
        "{}",
        probe_state.message
    );
    assert_eq!(probe_state.view, ECS_ERR_UNDECLARED);
    assert_eq!(probe_state.commands, ECS_ERR_UNDECLARED);
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe { ecs_engine_destroy(engine) };
}

unsafe extern "C" fn idle(_: *mut ecs_system_ctx, _: *mut c_void) {}

#[test]
fn schedule_errors_name_the_systems() {
    let engine = engine(1);
    let mut a = SystemSpec::new("a", Some(idle));
    a.before = vec![c"b".into()];
    ok(a.add(engine));
    let mut b = SystemSpec::new("b", Some(idle));
    b.before = vec![c"a".into()];
    ok(b.add(engine));
    fails(
        SystemSpec::new("a", Some(idle)).add(engine),
        ECS_ERR_DUPLICATE_NAME,
        "`a`",
    );
    fails(
        SystemSpec::new("c", None).add(engine),
        ECS_ERR_NULL_POINTER,
        "run",
    );
    let mut unknown = SystemSpec::new("d", Some(idle));
    unknown.reads = vec![42];
    fails(unknown.add(engine), ECS_ERR_UNKNOWN_COMPONENT, "0x2a");
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe {
        fails(ecs_engine_build(engine), ECS_ERR_SCHEDULE, "cycle");
        // It stays failed, and says why.
        fails(ecs_engine_tick(engine), ECS_ERR_SCHEDULE, "cycle");
        fails(
            SystemSpec::new("e", Some(idle)).add(engine),
            ECS_ERR_WRONG_STATE,
            "failed to build",
        );
        ecs_engine_destroy(engine);
    }

    let engine = common::engine(1);
    let mut lonely = SystemSpec::new("lonely", Some(idle));
    lonely.after = vec![c"nobody".into()];
    ok(lonely.add(engine));
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe {
        fails(ecs_engine_tick(engine), ECS_ERR_SCHEDULE, "nobody");
        ecs_engine_destroy(engine);
    }
}

unsafe extern "C" fn count_drop(value: *mut c_void, user: *mut c_void) {
    // SAFETY: `user` is the test's counter; `value` an aligned u64.
    unsafe {
        assert_eq!(value as usize % align_of::<u64>(), 0);
        assert_ne!(*value.cast::<u64>(), 0, "dropped twice or never written");
        (*user.cast::<AtomicUsize>()).fetch_add(1, Ordering::SeqCst);
    }
}

unsafe extern "C" fn kill_first(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the entity to despawn.
    unsafe {
        let mut commands = ptr::null_mut();
        ok(ecs_ctx_commands(ctx, &mut commands));
        ok(ecs_commands_despawn(commands, *user.cast::<ecs_entity>()));
    }
}

unsafe extern "C" fn insert_late(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is `(entity, id)`.
    unsafe {
        let (entity, id) = *user.cast::<(ecs_entity, ecs_component_id)>();
        let mut commands = ptr::null_mut();
        ok(ecs_ctx_commands(ctx, &mut commands));
        let value = 9u64;
        ok(ecs_commands_insert(
            commands,
            entity,
            id,
            (&raw const value).cast(),
        ));
    }
}

#[test]
fn destructors_run_once_per_value() {
    let counter = AtomicUsize::new(0);
    let engine = engine(2);
    let mut desc = component_desc::<u64>(c"Handle");
    desc.drop = Some(count_drop);
    desc.drop_user_data = (&raw const counter).cast_mut().cast();
    let mut id = 0;
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_component_register(engine, &desc, &mut id) });
    let drops = || counter.load(Ordering::SeqCst);

    let entities: Vec<_> = (0..3).map(|_| spawn(engine)).collect();
    for (i, &e) in entities.iter().enumerate() {
        insert(engine, e, id, i as u64 + 1);
    }
    assert_eq!(drops(), 0);
    insert(engine, entities[0], id, 10u64);
    assert_eq!(drops(), 1, "replaced");
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_remove(engine, entities[1], id) });
    assert_eq!(drops(), 2, "removed");
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_despawn(engine, entities[2]) });
    assert_eq!(drops(), 3, "despawned");

    // A command inserting on an entity another system despawns first is
    // skipped; its copy is dropped once.
    let victim = spawn(engine);
    let mut target = victim;
    let mut kill = SystemSpec::new("kill", Some(kill_first));
    kill.user_data = (&raw mut target).cast();
    kill.commands = true;
    ok(kill.add(engine));
    let mut args = (victim, id);
    let mut late = SystemSpec::new("late", Some(insert_late));
    late.user_data = (&raw mut args).cast();
    late.commands = true;
    late.after = vec![c"kill".into()];
    ok(late.add(engine));
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_engine_tick(engine) });
    assert_eq!(drops(), 4, "the skipped insert's value");

    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe { ecs_engine_destroy(engine) };
    assert_eq!(drops(), 5, "the last value, with the engine");
}

#[test]
fn queue_errors_and_a_producer_thread() {
    let desc = ecs_queue_desc {
        struct_size: size_of::<ecs_queue_desc>() as u32,
        event_size: 8,
        capacity: 2,
    };
    let mut queue = ptr::null_mut();
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_queue_create(&desc, &mut queue) });
    let mut out = 0u64;
    let out_ptr: *mut c_void = (&raw mut out).cast();
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe {
        fails(
            ecs_queue_try_pop(queue, out_ptr),
            ECS_ERR_QUEUE_EMPTY,
            "empty",
        );
        fails(
            ecs_queue_pop_timeout(queue, out_ptr, 10),
            ECS_ERR_TIMEOUT,
            "10 ms",
        );
        for v in [1u64, 2] {
            ok(ecs_queue_try_push(queue, (&raw const v).cast()));
        }
        let v = 3u64;
        fails(
            ecs_queue_try_push(queue, (&raw const v).cast()),
            ECS_ERR_QUEUE_FULL,
            "full",
        );
        ok(ecs_queue_close(queue));
        fails(
            ecs_queue_push(queue, (&raw const v).cast()),
            ECS_ERR_QUEUE_CLOSED,
            "closed",
        );
        ok(ecs_queue_try_pop(queue, out_ptr));
        assert_eq!(out, 1);
        ok(ecs_queue_pop_timeout(queue, out_ptr, 10));
        assert_eq!(out, 2);
        fails(
            ecs_queue_try_pop(queue, out_ptr),
            ECS_ERR_QUEUE_CLOSED,
            "closed",
        );
        fails(
            ecs_queue_pop_timeout(queue, out_ptr, 10),
            ECS_ERR_QUEUE_CLOSED,
            "closed",
        );
        ecs_queue_destroy(queue);
    }

    // Many events from another thread through its own handle, in order.
    let events: u64 = if cfg!(miri) { 200 } else { 10_000 };
    let desc = ecs_queue_desc {
        capacity: 64,
        ..desc
    };
    let mut queue = ptr::null_mut();
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_queue_create(&desc, &mut queue) });
    let mut producer_handle = ptr::null_mut();
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_queue_clone(queue, &mut producer_handle) });
    /// A queue handle moved to the producer thread (handles are for any thread).
    struct Handle(*mut ecs_queue);
    // SAFETY: the C API documents queue handles as usable from any thread.
    unsafe impl Send for Handle {}
    let producer_handle = Handle(producer_handle);
    let producer = std::thread::spawn(move || {
        let handle = producer_handle;
        for v in 1..=events {
            // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
            ok(unsafe { ecs_queue_push(handle.0, (&raw const v).cast()) });
        }
        // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
        unsafe {
            ok(ecs_queue_close(handle.0));
            ecs_queue_destroy(handle.0);
        }
    });
    let mut expected = 1u64;
    loop {
        // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
        match unsafe { ecs_queue_pop_timeout(queue, out_ptr, 5_000) } {
            ECS_OK => {
                assert_eq!(out, expected);
                expected += 1;
            }
            ECS_ERR_QUEUE_CLOSED => break,
            other => panic!("{other}: {}", last_error()),
        }
    }
    producer.join().unwrap();
    assert_eq!(expected, events + 1);
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe { ecs_queue_destroy(queue) };
}

#[test]
fn status_names_are_the_header_names() {
    let name = |s| {
        // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
        unsafe { std::ffi::CStr::from_ptr(ecs_status_name(s)) }
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(name(ECS_OK), "ECS_OK");
    assert_eq!(name(ECS_ERR_STALE_ENTITY), "ECS_ERR_STALE_ENTITY");
    assert_eq!(name(ECS_ERR_LIMIT), "ECS_ERR_LIMIT");
    assert_eq!(name(-1), "ECS_ERR_UNKNOWN_STATUS");
    assert_eq!(name(1000), "ECS_ERR_UNKNOWN_STATUS");
}

/// What a system that calls its own engine saw.
struct Reentry {
    engine: *mut ecs_engine,
    spawn: ecs_status,
    tick: ecs_status,
    alive: bool,
}

unsafe extern "C" fn call_the_engine(_: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Reentry`.
    unsafe {
        let seen = &mut *user.cast::<Reentry>();
        let mut e = 0;
        seen.spawn = ecs_spawn(seen.engine, &mut e);
        seen.tick = ecs_engine_tick(seen.engine);
        seen.alive = ecs_is_alive(seen.engine, 1 << 32);
        ecs_engine_destroy(seen.engine);
    }
}

#[test]
fn a_system_calling_its_own_engine_is_refused() {
    for threads in [1, 3] {
        let engine = engine(threads);
        let first = spawn(engine);
        assert_eq!(first, 1 << 32);
        let mut seen = Reentry {
            engine,
            spawn: ECS_OK,
            tick: ECS_OK,
            alive: true,
        };
        let mut spec = SystemSpec::new("reentrant", Some(call_the_engine));
        spec.user_data = (&raw mut seen).cast();
        ok(spec.add(engine));
        // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
        ok(unsafe { ecs_engine_tick(engine) });
        assert_eq!(seen.spawn, ECS_ERR_WRONG_STATE);
        assert_eq!(seen.tick, ECS_ERR_WRONG_STATE);
        assert!(!seen.alive, "a busy engine answers false");
        // The destroy inside was refused: the engine still works.
        let mut count = 0;
        // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
        ok(unsafe { ecs_entity_count(engine, &mut count) });
        assert_eq!(count, 1);
        // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
        unsafe { ecs_engine_destroy(engine) };
    }
}

#[test]
fn component_ids_of_another_engine_are_refused() {
    let physics = engine(1);
    let render = engine(1);
    let position = register::<[f32; 2]>(physics, c"Position");
    let transform = register::<[f32; 16]>(render, c"Transform");
    assert_ne!(position, transform, "ids carry their engine's tag");
    let e = spawn(render);
    let value = [0.0f32; 2];
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe {
        fails(
            ecs_insert(render, e, position, (&raw const value).cast()),
            ECS_ERR_UNKNOWN_COMPONENT,
            "this engine",
        );
        fails(
            ecs_remove(render, e, position),
            ECS_ERR_UNKNOWN_COMPONENT,
            "this engine",
        );
        // A bare index is never an id.
        fails(
            ecs_remove(render, e, 0),
            ECS_ERR_UNKNOWN_COMPONENT,
            "this engine",
        );
        ecs_engine_destroy(physics);
        ecs_engine_destroy(render);
    }
}

/// Spawns `count` entities with a `u32` each and records their handles.
struct Spawner {
    id: ecs_component_id,
    count: u32,
    handles: Vec<ecs_entity>,
}

unsafe extern "C" fn spawn_many(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Spawner`.
    unsafe {
        let spawner = &mut *user.cast::<Spawner>();
        let mut commands = ptr::null_mut();
        ok(ecs_ctx_commands(ctx, &mut commands));
        for i in 0..spawner.count {
            let mut e = 0;
            ok(ecs_commands_spawn(commands, &mut e));
            ok(ecs_commands_insert(
                commands,
                e,
                spawner.id,
                (&raw const i).cast(),
            ));
            spawner.handles.push(e);
        }
    }
}

#[test]
fn a_spawn_reserve_makes_every_spawned_handle_final() {
    let engine = engine(2);
    let id = register::<u32>(engine, c"Index");
    let mut spawner = Spawner {
        id,
        count: 1_000,
        handles: Vec::new(),
    };
    let mut spec = SystemSpec::new("spawner", Some(spawn_many));
    spec.user_data = (&raw mut spawner).cast();
    spec.commands = true;
    spec.spawn_reserve = 1_000;
    ok(spec.add(engine));
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_engine_tick(engine) });
    assert_eq!(spawner.handles.len(), 1_000);
    for (i, &e) in spawner.handles.iter().enumerate() {
        assert_eq!(get::<u32>(engine, e, id), i as u32, "handle {e:#x}");
    }
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe { ecs_engine_destroy(engine) };
}

/// What a destructor that calls back into its engine was answered.
struct DropReentry {
    engine: *mut ecs_engine,
    /// The status of `ecs_spawn` from each destructor call, in order.
    spawns: Vec<ecs_status>,
}

unsafe extern "C" fn drop_calling_the_engine(_: *mut c_void, user: *mut c_void) {
    // SAFETY: `user` is the test's `DropReentry`, which outlives the engine;
    // its `engine` is the engine dropping this value (alive, or being
    // destroyed: the call under test).
    unsafe {
        let seen = &mut *user.cast::<DropReentry>();
        let mut e = 0;
        seen.spawns.push(ecs_spawn(seen.engine, &mut e));
        // Refused: the engine is busy dropping this value. Were it not, this
        // would free the engine under the call that runs this destructor.
        ecs_engine_destroy(seen.engine);
    }
}

#[test]
fn a_destructor_calling_its_engine_is_refused_even_during_destroy() {
    let engine = engine(2);
    let mut seen = DropReentry {
        engine,
        spawns: Vec::new(),
    };
    let mut desc = component_desc::<u64>(c"Reentrant");
    desc.drop = Some(drop_calling_the_engine);
    desc.drop_user_data = (&raw mut seen).cast();
    let mut id = 0;
    // SAFETY: the pointers passed point at live locals for the call.
    ok(unsafe { ecs_component_register(engine, &desc, &mut id) });
    let a = spawn(engine);
    let b = spawn(engine);
    insert(engine, a, id, 1u64);
    insert(engine, b, id, 2u64);
    // SAFETY: a live engine, used by this thread only.
    ok(unsafe { ecs_despawn(engine, a) });
    assert_eq!(seen.spawns, [ECS_ERR_WRONG_STATE], "during ecs_despawn");
    // The destroy inside the destructor was refused: the engine still works.
    let mut count = 0;
    // SAFETY: a live engine; `count` lives across the call.
    ok(unsafe { ecs_entity_count(engine, &mut count) });
    assert_eq!(count, 1);
    // SAFETY: a live engine, destroyed once (the nested destroy does nothing).
    unsafe { ecs_engine_destroy(engine) };
    assert_eq!(
        seen.spawns,
        [ECS_ERR_WRONG_STATE, ECS_ERR_WRONG_STATE],
        "during ecs_engine_destroy"
    );
}

#[test]
fn a_component_too_large_for_its_alignment_is_refused_with_the_reason() {
    let engine = engine(1);
    let mut id = u32::MAX;
    let mut desc = component_desc::<u64>(c"Huge");
    desc.size = (isize::MAX as usize & !7) + 8;
    // SAFETY: a live engine; `desc` and `id` live across the call.
    fails(
        unsafe { ecs_component_register(engine, &desc, &mut id) },
        ECS_ERR_INVALID_ARGUMENT,
        "size 9223372036854775808 is too large",
    );
    assert!(!last_error().contains("power of two"), "{}", last_error());
    assert_eq!(id, u32::MAX);
    // SAFETY: a live engine, destroyed once.
    unsafe { ecs_engine_destroy(engine) };
}
