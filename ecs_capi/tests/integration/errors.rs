//! Every error path of the C API, called from Rust: status codes,
//! messages, and a world left as it was.

use crate::common;

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use ecs_capi::*;

#[test]
fn null_pointers_are_errors() {
    let engine = Engine::new(1);
    let id = engine.register::<u32>(c"Health");
    let e = engine.spawn();
    let mut out_ptr: *mut c_void = ptr::null_mut();
    let raw = engine.raw();
    // SAFETY: what this test is about: NULL where the C API promises to
    // check for it; every other pointer is a live engine or a local that
    // lives across the call.
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
        fails(ecs_spawn(raw, ptr::null_mut()), ECS_ERR_NULL_POINTER, "out");
        fails(
            ecs_insert(raw, e, id, ptr::null()),
            ECS_ERR_NULL_POINTER,
            "value",
        );
        fails(
            ecs_get(ptr::null_mut(), e, id, &mut out_ptr),
            ECS_ERR_NULL_POINTER,
            "engine",
        );
        fails(
            ecs_component_register(raw, ptr::null(), ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "desc",
        );
        fails(
            ecs_system_add(raw, ptr::null()),
            ECS_ERR_NULL_POINTER,
            "desc",
        );
        fails(
            ecs_queue_try_pop(ptr::null(), ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "queue",
        );
        fails(
            ecs_world_checksum(raw, ptr::null(), 1, ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "ids",
        );
        assert!(!ecs_is_alive(ptr::null(), e));
        ecs_engine_destroy(ptr::null_mut());
        ecs_queue_destroy(ptr::null_mut());
    }
}

#[test]
fn bad_descriptors_are_invalid_arguments() {
    let create = |desc: &ecs_engine_desc| {
        let mut engine = ptr::null_mut();
        // SAFETY: both pointers are to locals that live across the call;
        // the descriptor is refused, so no engine is made.
        let status = unsafe { ecs_engine_create(desc, &mut engine) };
        assert!(engine.is_null(), "a refused create writes nothing");
        status
    };
    let mut desc = ecs_engine_desc {
        struct_size: 4,
        threads: 1,
        step_seconds: 0.0,
    };
    fails(create(&desc), ECS_ERR_INVALID_ARGUMENT, "struct_size");
    desc.struct_size = size_of::<ecs_engine_desc>() as u32;
    desc.threads = 0;
    fails(create(&desc), ECS_ERR_INVALID_ARGUMENT, "threads");
    for threads in [ECS_THREADS_MAX + 1, 100_000, u32::MAX] {
        desc.threads = threads;
        fails(
            create(&desc),
            ECS_ERR_INVALID_ARGUMENT,
            &format!("`threads` is {threads}, above ECS_THREADS_MAX (1024)"),
        );
    }
    desc.threads = 1;
    desc.step_seconds = -1.0;
    fails(create(&desc), ECS_ERR_INVALID_ARGUMENT, "step_seconds");

    let engine = Engine::new(1);
    let mut component = component_desc::<u32>(c"Health");
    component.align = 3;
    let refused = |desc: &ecs_component_desc| engine.register_desc(desc).unwrap_err();
    fails(refused(&component), ECS_ERR_INVALID_ARGUMENT, "alignment 3");
    component.align = 4;
    component.name = ptr::null();
    fails(refused(&component), ECS_ERR_NULL_POINTER, "name");
    component.name = c"".as_ptr();
    fails(refused(&component), ECS_ERR_INVALID_ARGUMENT, "empty");
    component.name = c"Health".as_ptr();
    component.struct_size = 8;
    fails(refused(&component), ECS_ERR_INVALID_ARGUMENT, "struct_size");
    let queue_desc = ecs_queue_desc {
        struct_size: size_of::<ecs_queue_desc>() as u32,
        event_size: 0,
        capacity: 0,
    };
    let mut queue = ptr::null_mut();
    fails(
        // SAFETY: both pointers are to locals that live across the call.
        unsafe { ecs_queue_create(&queue_desc, &mut queue) },
        ECS_ERR_INVALID_ARGUMENT,
        "event_size",
    );
    assert!(queue.is_null());
    let queue_desc = ecs_queue_desc {
        event_size: usize::MAX,
        ..queue_desc
    };
    fails(
        // SAFETY: both pointers are to locals that live across the call.
        unsafe { ecs_queue_create(&queue_desc, &mut queue) },
        ECS_ERR_INVALID_ARGUMENT,
        "`event_size` is 18446744073709551615, above PTRDIFF_MAX",
    );
    assert!(queue.is_null());
}

#[test]
fn duplicates_unknown_ids_and_stale_entities_are_reported() {
    let engine = Engine::new(1);
    let health = engine.register::<u32>(c"Health");
    fails(
        engine
            .register_desc(&component_desc::<u32>(c"Health"))
            .unwrap_err(),
        ECS_ERR_DUPLICATE_NAME,
        "Health",
    );
    fails(
        engine.lookup(c"Mana").unwrap_err(),
        ECS_ERR_UNKNOWN_COMPONENT,
        "Mana",
    );
    let e = engine.spawn();
    engine.insert(e, health, 10u32);
    fails(
        engine.try_insert(e, 99, 5u32),
        ECS_ERR_UNKNOWN_COMPONENT,
        "0x63",
    );
    ok(engine.despawn(e));
    fails(
        engine.get_ptr(e, health).unwrap_err(),
        ECS_ERR_STALE_ENTITY,
        "not alive",
    );
    fails(
        engine.try_insert(e, health, 5u32),
        ECS_ERR_STALE_ENTITY,
        "not alive",
    );
    fails(engine.remove(e, health), ECS_ERR_STALE_ENTITY, "not alive");
    fails(engine.despawn(e), ECS_ERR_STALE_ENTITY, "not alive");
    fails(
        engine.despawn(ECS_ENTITY_NULL),
        ECS_ERR_STALE_ENTITY,
        "not alive",
    );
    fails(engine.despawn(0), ECS_ERR_STALE_ENTITY, "0x0");
    // The slot is reused with a new generation: the old handle stays dead.
    let reused = engine.spawn();
    assert_eq!(reused as u32, e as u32);
    assert!(!engine.is_alive(e));
    fails(
        engine.remove(reused, health),
        ECS_ERR_MISSING_COMPONENT,
        "Health",
    );
    assert_eq!(engine.has(reused, health), Ok(false));
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
    let engine = Engine::new(2);
    let health = engine.register::<u32>(c"Health");
    let e = engine.spawn();
    engine.insert(e, health, 1u32);
    let mut probe_state = Probe {
        id: health,
        entity: e,
        ..Probe::default()
    };
    let mut spec = SystemSpec::new("prober", Some(probe));
    spec.user_data = (&raw mut probe_state).cast();
    ok(spec.add(&engine));
    ok(engine.tick());
    assert_eq!(probe_state.get, ECS_ERR_UNDECLARED);
    assert!(
        probe_state.message.contains("prober") && probe_state.message.contains("Health"),
        "{}",
        probe_state.message
    );
    assert_eq!(probe_state.view, ECS_ERR_UNDECLARED);
    assert_eq!(probe_state.commands, ECS_ERR_UNDECLARED);
}

/// What `ecs_ctx_try_get` gave a system: (status, value read) for an
/// entity with the component, one without, a stale handle, an undeclared
/// id, and a NULL `out`.
#[derive(Default)]
struct TryGets {
    ids: [ecs_component_id; 2],
    entities: [ecs_entity; 2],
    seen: Vec<(ecs_status, Option<u32>)>,
}

unsafe extern "C" fn try_gets(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `TryGets`; `out` is a local.
    unsafe {
        let t = &mut *user.cast::<TryGets>();
        let [declared, undeclared] = t.ids;
        let [with, without] = t.entities;
        for (entity, id) in [
            (with, declared),
            (without, declared),
            (ECS_ENTITY_NULL, declared),
            (with, undeclared),
        ] {
            let mut out: *mut c_void = ptr::dangling_mut();
            let status = ecs_ctx_try_get(ctx, entity, id, &mut out);
            let value = (!out.is_null() && status == ECS_OK).then(|| *out.cast::<u32>());
            t.seen.push((status, value));
        }
        let status = ecs_ctx_try_get(ctx, with, declared, ptr::null_mut());
        t.seen.push((status, None));
    }
}

#[test]
fn try_get_gives_null_for_a_missing_component_and_errors_otherwise() {
    let engine = Engine::new(1);
    let health = engine.register::<u32>(c"Health");
    let armor = engine.register::<u32>(c"Armor");
    let (with, without) = (engine.spawn(), engine.spawn());
    engine.insert(with, health, 7u32);
    engine.insert(without, armor, 1u32);
    let mut state = TryGets {
        ids: [health, armor],
        entities: [with, without],
        ..TryGets::default()
    };
    let mut spec = SystemSpec::new("optional", Some(try_gets));
    spec.user_data = (&raw mut state).cast();
    spec.reads = vec![health];
    ok(spec.add(&engine));
    ok(engine.tick());
    assert_eq!(
        state.seen,
        vec![
            (ECS_OK, Some(7)),
            (ECS_OK, None),
            (ECS_ERR_STALE_ENTITY, None),
            (ECS_ERR_UNDECLARED, None),
            (ECS_ERR_NULL_POINTER, None),
        ]
    );
}

unsafe extern "C" fn idle(_: *mut ecs_system_ctx, _: *mut c_void) {}

#[test]
fn schedule_errors_name_the_systems() {
    let engine = Engine::new(1);
    let mut a = SystemSpec::new("a", Some(idle));
    a.before = vec![c"b".into()];
    ok(a.add(&engine));
    let mut b = SystemSpec::new("b", Some(idle));
    b.before = vec![c"a".into()];
    ok(b.add(&engine));
    fails(
        SystemSpec::new("a", Some(idle)).add(&engine),
        ECS_ERR_DUPLICATE_NAME,
        "`a`",
    );
    fails(
        SystemSpec::new("c", None).add(&engine),
        ECS_ERR_NULL_POINTER,
        "run",
    );
    let mut unknown = SystemSpec::new("d", Some(idle));
    unknown.reads = vec![42];
    fails(unknown.add(&engine), ECS_ERR_UNKNOWN_COMPONENT, "0x2a");
    fails(engine.build(), ECS_ERR_SCHEDULE, "cycle");
    // It stays failed, and says why.
    fails(engine.tick(), ECS_ERR_SCHEDULE, "cycle");
    fails(
        SystemSpec::new("e", Some(idle)).add(&engine),
        ECS_ERR_WRONG_STATE,
        "failed to build",
    );
    // The world outlives the failed build.
    let e = engine.spawn();
    assert!(engine.is_alive(e));
    engine.destroy();

    let engine = Engine::new(1);
    let mut lonely = SystemSpec::new("lonely", Some(idle));
    lonely.after = vec![c"nobody".into()];
    ok(lonely.add(&engine));
    fails(engine.tick(), ECS_ERR_SCHEDULE, "nobody");
}

#[test]
fn a_system_ordered_before_or_after_itself_is_refused_when_added() {
    let engine = Engine::new(1);
    let id = engine.register::<u32>(c"Count");
    let e = engine.spawn();
    engine.insert(e, id, 3u32);
    let mut a = SystemSpec::new("a", Some(idle));
    a.before = vec![c"a".into()];
    fails(
        a.add(&engine),
        ECS_ERR_SCHEDULE,
        "system `a` names itself in `before`",
    );
    let mut a = SystemSpec::new("a", Some(idle));
    a.after = vec![c"b".into(), c"a".into()];
    fails(
        a.add(&engine),
        ECS_ERR_SCHEDULE,
        "system `a` names itself in `after`",
    );
    // Nothing was added: the name is free, the schedule builds, the world
    // is intact.
    ok(SystemSpec::new("a", Some(idle)).add(&engine));
    ok(engine.build());
    ok(engine.run(2));
    assert_eq!(engine.ticks(), 2);
    assert_eq!(engine.get::<u32>(e, id), 3);
}

/// Counts its runs in its user data (a `u32`).
unsafe extern "C" fn count_runs(_: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's counter, used by this system alone.
    unsafe { *user.cast::<u32>() += 1 };
}

#[test]
fn a_spawn_reserve_past_the_maximum_is_refused_and_the_world_kept() {
    let engine = Engine::new(2);
    let id = engine.register::<u32>(c"Count");
    let entities: Vec<_> = (0..3u32)
        .map(|i| {
            let e = engine.spawn();
            engine.insert(e, id, i);
            e
        })
        .collect();
    for reserve in [ECS_SPAWN_RESERVE_MAX + 1, 1 << 32, usize::MAX] {
        let mut greedy = SystemSpec::new("greedy", Some(idle));
        greedy.commands = true;
        greedy.spawn_reserve = reserve;
        fails(
            greedy.add(&engine),
            ECS_ERR_INVALID_ARGUMENT,
            &format!("`spawn_reserve` is {reserve}, above ECS_SPAWN_RESERVE_MAX"),
        );
    }
    // The largest reserve is accepted; the build and the ticks work, and the
    // world is as it was.
    let mut runs = 0u32;
    let mut largest = SystemSpec::new("largest", Some(count_runs));
    largest.user_data = (&raw mut runs).cast();
    largest.commands = true;
    largest.spawn_reserve = if cfg!(miri) {
        1_000
    } else {
        ECS_SPAWN_RESERVE_MAX
    };
    ok(largest.add(&engine));
    ok(engine.build());
    ok(engine.run(3));
    assert_eq!(runs, 3);
    assert_eq!(engine.count(), 3);
    for (i, &e) in entities.iter().enumerate() {
        assert_eq!(engine.get::<u32>(e, id), i as u32);
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
    let engine = Engine::new(2);
    let mut desc = component_desc::<u64>(c"Handle");
    desc.drop = Some(count_drop);
    desc.drop_user_data = (&raw const counter).cast_mut().cast();
    let id = engine.register_desc(&desc).unwrap();
    let drops = || counter.load(Ordering::SeqCst);

    let entities: Vec<_> = (0..3).map(|_| engine.spawn()).collect();
    for (i, &e) in entities.iter().enumerate() {
        engine.insert(e, id, i as u64 + 1);
    }
    assert_eq!(drops(), 0);
    engine.insert(entities[0], id, 10u64);
    assert_eq!(drops(), 1, "replaced");
    ok(engine.remove(entities[1], id));
    assert_eq!(drops(), 2, "removed");
    ok(engine.despawn(entities[2]));
    assert_eq!(drops(), 3, "despawned");

    // A command inserting on an entity another system despawns first is
    // skipped; its copy is dropped once.
    let victim = engine.spawn();
    let mut target = victim;
    let mut kill = SystemSpec::new("kill", Some(kill_first));
    kill.user_data = (&raw mut target).cast();
    kill.commands = true;
    ok(kill.add(&engine));
    let mut args = (victim, id);
    let mut late = SystemSpec::new("late", Some(insert_late));
    late.user_data = (&raw mut args).cast();
    late.commands = true;
    late.after = vec![c"kill".into()];
    ok(late.add(&engine));
    ok(engine.tick());
    assert_eq!(drops(), 4, "the skipped insert's value");

    engine.destroy();
    assert_eq!(drops(), 5, "the last value, with the engine");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "a consumer parked on parking_lot's futex: nightlies since 2026-09-11 check \
              syscall's variadic types and refuse parking_lot_core 0.9.12's &AtomicI32 \
              (rust-lang/rust#161734), not a bug of ours"
)]
fn queue_errors_and_a_producer_thread() {
    let queue = Queue::new(2);
    fails(queue.try_pop().unwrap_err(), ECS_ERR_QUEUE_EMPTY, "empty");
    fails(queue.pop_timeout(10).unwrap_err(), ECS_ERR_TIMEOUT, "10 ms");
    ok(queue.try_push(1));
    ok(queue.try_push(2));
    fails(queue.try_push(3), ECS_ERR_QUEUE_FULL, "full");
    ok(queue.close());
    fails(queue.push(3), ECS_ERR_QUEUE_CLOSED, "closed");
    assert_eq!(queue.try_pop(), Ok(1));
    assert_eq!(queue.pop_timeout(10), Ok(2));
    fails(queue.try_pop().unwrap_err(), ECS_ERR_QUEUE_CLOSED, "closed");
    fails(
        queue.pop_timeout(10).unwrap_err(),
        ECS_ERR_QUEUE_CLOSED,
        "closed",
    );
    drop(queue);

    // Many events from another thread through its own handle, in order.
    let events: u64 = if cfg!(miri) { 200 } else { 10_000 };
    let queue = Queue::new(64);
    let handle = queue.handle();
    let producer = std::thread::spawn(move || {
        for v in 1..=events {
            ok(handle.push(v));
        }
        ok(handle.close());
    });
    let mut expected = 1u64;
    loop {
        match queue.pop_timeout(5_000) {
            Ok(v) => {
                assert_eq!(v, expected);
                expected += 1;
            }
            Err(ECS_ERR_QUEUE_CLOSED) => break,
            Err(other) => panic!("{other}: {}", last_error()),
        }
    }
    producer.join().unwrap();
    assert_eq!(expected, events + 1);
}

#[test]
fn status_names_are_the_header_names() {
    let name = |s| {
        // SAFETY: `ecs_status_name` returns a NUL-terminated string in
        // static storage for any status, never NULL.
        unsafe { std::ffi::CStr::from_ptr(ecs_status_name(s)) }
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(name(ECS_OK), "ECS_OK");
    assert_eq!(name(ECS_ERR_STALE_ENTITY), "ECS_ERR_STALE_ENTITY");
    assert_eq!(name(ECS_ERR_LIMIT), "ECS_ERR_LIMIT");
    assert_eq!(name(ECS_ERR_UNKNOWN_RESOURCE), "ECS_ERR_UNKNOWN_RESOURCE");
    assert_eq!(name(ECS_ERR_SNAPSHOT), "ECS_ERR_SNAPSHOT");
    assert_eq!(name(ECS_ERR_UNKNOWN_EVENT), "ECS_ERR_UNKNOWN_EVENT");
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
        let engine = Engine::new(threads);
        let first = engine.spawn();
        assert_eq!(first, 1 << 32);
        let mut seen = Reentry {
            engine: engine.raw(),
            spawn: ECS_OK,
            tick: ECS_OK,
            alive: true,
        };
        let mut spec = SystemSpec::new("reentrant", Some(call_the_engine));
        spec.user_data = (&raw mut seen).cast();
        ok(spec.add(&engine));
        ok(engine.tick());
        assert_eq!(seen.spawn, ECS_ERR_WRONG_STATE);
        assert_eq!(seen.tick, ECS_ERR_WRONG_STATE);
        assert!(!seen.alive, "a busy engine answers false");
        // The destroy inside was refused: the engine still works.
        assert_eq!(engine.count(), 1);
    }
}

#[test]
fn component_ids_of_another_engine_are_refused() {
    let physics = Engine::new(1);
    let render = Engine::new(1);
    let position = physics.register::<[f32; 2]>(c"Position");
    let transform = render.register::<[f32; 16]>(c"Transform");
    assert_ne!(position, transform, "ids carry their engine's tag");
    let e = render.spawn();
    fails(
        render.try_insert(e, position, [0.0f32; 2]),
        ECS_ERR_UNKNOWN_COMPONENT,
        "this engine",
    );
    fails(
        render.remove(e, position),
        ECS_ERR_UNKNOWN_COMPONENT,
        "this engine",
    );
    // A bare index is never an id.
    fails(
        render.remove(e, 0),
        ECS_ERR_UNKNOWN_COMPONENT,
        "this engine",
    );
}

#[test]
#[cfg_attr(miri, ignore = "makes 70,000 engines: minutes under Miri")]
fn component_ids_of_another_engine_are_refused_after_65536_engines() {
    // With 16-bit engine tags, one engine of any 65,535 made after `first`
    // had its tag again, and the same id for its first component.
    let first = Engine::new(1);
    let id = first.register::<u32>(c"Position");
    let e = first.spawn();
    for made in 0..70_000u32 {
        let other = Engine::new(1);
        let other_id = other.register::<u32>(c"Position");
        assert_ne!(other_id, id, "engine {made} after the first has its tag");
        let f = other.spawn();
        assert_eq!(
            other.try_insert(f, id, 1u32),
            ECS_ERR_UNKNOWN_COMPONENT,
            "engine {made}"
        );
    }
    first.insert(e, id, 2u32);
    assert_eq!(first.get::<u32>(e, id), 2);
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
    let engine = Engine::new(2);
    let id = engine.register::<u32>(c"Index");
    let mut spawner = Spawner {
        id,
        count: 1_000,
        handles: Vec::new(),
    };
    let mut spec = SystemSpec::new("spawner", Some(spawn_many));
    spec.user_data = (&raw mut spawner).cast();
    spec.commands = true;
    spec.spawn_reserve = 1_000;
    ok(spec.add(&engine));
    ok(engine.tick());
    assert_eq!(spawner.handles.len(), 1_000);
    for (i, &e) in spawner.handles.iter().enumerate() {
        assert_eq!(engine.get::<u32>(e, id), i as u32, "handle {e:#x}");
    }
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
    let engine = Engine::new(2);
    let mut seen = DropReentry {
        engine: engine.raw(),
        spawns: Vec::new(),
    };
    let mut desc = component_desc::<u64>(c"Reentrant");
    desc.drop = Some(drop_calling_the_engine);
    desc.drop_user_data = (&raw mut seen).cast();
    let id = engine.register_desc(&desc).unwrap();
    let a = engine.spawn();
    let b = engine.spawn();
    engine.insert(a, id, 1u64);
    engine.insert(b, id, 2u64);
    ok(engine.despawn(a));
    assert_eq!(seen.spawns, [ECS_ERR_WRONG_STATE], "during ecs_despawn");
    // The destroy inside the destructor was refused: the engine still works.
    assert_eq!(engine.count(), 1);
    // Destroyed once: the nested destroy does nothing.
    engine.destroy();
    assert_eq!(
        seen.spawns,
        [ECS_ERR_WRONG_STATE, ECS_ERR_WRONG_STATE],
        "during ecs_engine_destroy"
    );
}
