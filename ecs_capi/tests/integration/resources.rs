//! Resources, run conditions and startup systems from C (through the
//! rlib): registration and bytes between ticks, declared access from
//! systems (ordered like Rust `Res`/`ResMut`), undeclared access refused,
//! conditions that skip, startup systems that run once.

use crate::common;

use std::ffi::c_void;
use std::ptr;
use std::sync::Mutex;

use common::*;
use ecs_capi::*;

/// What the test systems share: the resources and what they saw.
struct Shared {
    counter: ecs_resource_id,
    paused: ecs_resource_id,
    seen: Mutex<Vec<u64>>,
    statuses: Mutex<Vec<ecs_status>>,
    /// The last error message on the worker after each failed call.
    messages: Mutex<Vec<String>>,
}

impl Shared {
    fn new(counter: ecs_resource_id, paused: ecs_resource_id) -> Shared {
        Shared {
            counter,
            paused,
            seen: Mutex::new(Vec::new()),
            statuses: Mutex::new(Vec::new()),
            messages: Mutex::new(Vec::new()),
        }
    }

    fn seen(&self) -> Vec<u64> {
        self.seen.lock().unwrap().clone()
    }

    fn statuses(&self) -> Vec<ecs_status> {
        self.statuses.lock().unwrap().clone()
    }

    fn record(&self, status: ecs_status) {
        self.statuses.lock().unwrap().push(status);
        if status != ECS_OK {
            self.messages.lock().unwrap().push(last_error());
        }
    }

    fn user(&self) -> *mut c_void {
        (&raw const *self).cast_mut().cast()
    }
}

/// Adds 1 to the counter (declared written).
unsafe extern "C" fn increment(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Shared`, alive across the ticks.
    let shared = unsafe { &*user.cast::<Shared>() };
    let mut value: *mut c_void = ptr::null_mut();
    // SAFETY: the running system's context; `value` is a local.
    let status = unsafe { ecs_ctx_resource_write(ctx, shared.counter, &mut value) };
    shared.record(status);
    if status == ECS_OK {
        // SAFETY: a declared write: the 8 bytes of the counter, aligned,
        // not touched by another system during this one.
        unsafe { *value.cast::<u64>() += 1 };
    }
}

/// Records the counter's value (declared read).
unsafe extern "C" fn observe(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Shared`, alive across the ticks.
    let shared = unsafe { &*user.cast::<Shared>() };
    let mut value: *const c_void = ptr::null();
    // SAFETY: the running system's context; `value` is a local.
    let status = unsafe { ecs_ctx_resource_read(ctx, shared.counter, &mut value) };
    shared.record(status);
    if status == ECS_OK {
        // SAFETY: a declared read of the counter's 8 aligned bytes.
        shared
            .seen
            .lock()
            .unwrap()
            .push(unsafe { *value.cast::<u64>() });
    }
}

/// Runs when the `paused` resource is 0.
unsafe extern "C" fn not_paused(ctx: *const ecs_system_ctx, user: *mut c_void) -> bool {
    // SAFETY: `user` is the test's `Shared`.
    let shared = unsafe { &*user.cast::<Shared>() };
    let mut value: *const c_void = ptr::null();
    // SAFETY: the context passed to the condition; `value` is a local.
    ok(unsafe { ecs_ctx_resource_read(ctx, shared.paused, &mut value) });
    // SAFETY: a declared read of the flag's 4 aligned bytes.
    unsafe { *value.cast::<u32>() == 0 }
}

fn engine_with_resources(threads: u32) -> (Engine, Shared) {
    let engine = Engine::new(threads);
    let counter = engine.resource(c"counter", &0u64);
    let paused = engine.resource(c"paused", &0u32);
    (engine, Shared::new(counter, paused))
}

#[test]
fn resources_round_trip_before_the_build_and_between_ticks() {
    let engine = Engine::new(2);
    let score = engine.resource(c"score", &41u64);
    assert_eq!(engine.resource_get::<u64>(score), 41);
    ok(engine.resource_set(score, &7u64));
    assert_eq!(engine.resource_get::<u64>(score), 7);
    ok(engine.run(2));
    assert_eq!(engine.resource_get::<u64>(score), 7);
    ok(engine.resource_set(score, &9u64));
    assert_eq!(engine.resource_get::<u64>(score), 9);

    // Registered after the build, between ticks; NULL initial is zeroes.
    let desc = ecs_resource_desc {
        struct_size: size_of::<ecs_resource_desc>() as u32,
        name: c"late".as_ptr(),
        size: 16,
        align: 16,
        initial: ptr::null(),
        savable: false,
    };
    let mut late = 0;
    // SAFETY: a live engine; the descriptor and `late` are locals.
    ok(unsafe { ecs_resource_register(engine.raw(), &desc, &mut late) });
    assert_ne!(late, score);
    assert_eq!(engine.resource_get::<[u64; 2]>(late), [0, 0]);
    // Resources are no entities.
    assert_eq!(engine.count(), 0);
}

#[test]
fn bad_resource_calls_return_a_status() {
    let engine = Engine::new(1);
    let other = Engine::new(1);
    let score = engine.resource(c"score", &1u32);
    let foreign = other.resource(c"score", &1u32);

    fails(
        engine.try_resource(c"score", &2u32).unwrap_err(),
        ECS_ERR_DUPLICATE_NAME,
        "`score` already exists",
    );
    fails(
        engine.try_resource_get::<u32>(foreign).unwrap_err(),
        ECS_ERR_UNKNOWN_RESOURCE,
        "no resource with id",
    );
    fails(
        engine.try_resource_get::<u64>(score).unwrap_err(),
        ECS_ERR_INVALID_ARGUMENT,
        "is 4 bytes, but `size` is 8",
    );
    fails(
        engine.resource_set(score, &1u8),
        ECS_ERR_INVALID_ARGUMENT,
        "is 4 bytes, but `size` is 1",
    );
    let mut desc = ecs_resource_desc {
        struct_size: size_of::<ecs_resource_desc>() as u32,
        name: c"odd".as_ptr(),
        size: 4,
        align: 3,
        initial: ptr::null(),
        savable: false,
    };
    let mut id = 0;
    // SAFETY: a live engine; the descriptor and `id` are locals.
    let status = unsafe { ecs_resource_register(engine.raw(), &desc, &mut id) };
    fails(status, ECS_ERR_INVALID_ARGUMENT, "`align` is 3");
    desc.align = 8;
    desc.size = usize::MAX - 4;
    // SAFETY: as above.
    let status = unsafe { ecs_resource_register(engine.raw(), &desc, &mut id) };
    fails(status, ECS_ERR_INVALID_ARGUMENT, "too large");
    desc.size = isize::MAX as usize - 64;
    // SAFETY: as above.
    let status = unsafe { ecs_resource_register(engine.raw(), &desc, &mut id) };
    fails(status, ECS_ERR_LIMIT, "could not give");
    // SAFETY: NULL descriptor, on purpose.
    let status = unsafe { ecs_resource_register(engine.raw(), ptr::null(), &mut id) };
    fails(status, ECS_ERR_NULL_POINTER, "`desc` is NULL");
    // Nothing refused was registered: `odd` is still free.
    desc.size = 4;
    // SAFETY: as above.
    ok(unsafe { ecs_resource_register(engine.raw(), &desc, &mut id) });
    // SAFETY: NULL out, on purpose.
    let status = unsafe { ecs_resource_get(engine.raw(), score, ptr::null_mut(), 4) };
    fails(status, ECS_ERR_NULL_POINTER, "`out` is NULL");
}

#[test]
fn a_reader_added_after_a_writer_sees_the_value_of_the_same_tick() {
    for threads in [1, 4] {
        let (engine, shared) = engine_with_resources(threads);
        let mut writer = SystemSpec::new("writer", Some(increment));
        writer.user_data = shared.user();
        writer.resource_writes = vec![shared.counter];
        ok(writer.add(&engine));
        let mut reader = SystemSpec::new("reader", Some(observe));
        reader.user_data = shared.user();
        reader.resource_reads = vec![shared.counter];
        ok(reader.add(&engine));
        ok(engine.run(3));
        assert_eq!(shared.seen(), [1, 2, 3], "{threads} threads");
        assert_eq!(engine.resource_get::<u64>(shared.counter), 3);
        assert!(shared.statuses().iter().all(|&s| s == ECS_OK));
    }
}

#[test]
fn a_reader_added_before_a_writer_sees_the_previous_tick() {
    for threads in [1, 4] {
        let (engine, shared) = engine_with_resources(threads);
        let mut reader = SystemSpec::new("reader", Some(observe));
        reader.user_data = shared.user();
        reader.resource_reads = vec![shared.counter];
        ok(reader.add(&engine));
        let mut writer = SystemSpec::new("writer", Some(increment));
        writer.user_data = shared.user();
        writer.resource_writes = vec![shared.counter];
        ok(writer.add(&engine));
        ok(engine.run(3));
        assert_eq!(shared.seen(), [0, 1, 2], "{threads} threads");
    }
}

#[test]
fn undeclared_resource_access_is_refused() {
    let (engine, shared) = engine_with_resources(2);
    // Declares nothing, reads the counter.
    let mut reader = SystemSpec::new("blind", Some(observe));
    reader.user_data = shared.user();
    ok(reader.add(&engine));
    // Declares a read, but writes.
    let mut writer = SystemSpec::new("sneaky", Some(increment));
    writer.user_data = shared.user();
    writer.resource_reads = vec![shared.counter];
    writer.after = vec![c"blind".into()];
    ok(writer.add(&engine));
    ok(engine.tick());
    assert_eq!(shared.statuses(), [ECS_ERR_UNDECLARED, ECS_ERR_UNDECLARED]);
    assert!(shared.seen().is_empty());
    assert_eq!(engine.resource_get::<u64>(shared.counter), 0);
    let messages = shared.messages.lock().unwrap().clone();
    assert!(
        messages[0].contains("system `blind` did not declare a read of resource `counter`"),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("system `sneaky` did not declare a write of resource `counter`"),
        "{messages:?}"
    );
}

#[test]
fn a_system_cannot_declare_an_unknown_resource() {
    let (engine, shared) = engine_with_resources(1);
    let other = Engine::new(1);
    let foreign = other.resource(c"counter", &0u64);
    let mut writer = SystemSpec::new("writer", Some(increment));
    writer.user_data = shared.user();
    writer.resource_writes = vec![foreign];
    fails(writer.add(&engine), ECS_ERR_UNKNOWN_RESOURCE, "no resource");
    // Not added: the name is free.
    writer.resource_writes = vec![shared.counter];
    ok(writer.add(&engine));
}

#[test]
fn a_false_condition_skips_the_system() {
    let (engine, shared) = engine_with_resources(2);
    let mut writer = SystemSpec::new("writer", Some(increment));
    writer.user_data = shared.user();
    writer.resource_writes = vec![shared.counter];
    writer.resource_reads = vec![shared.paused];
    writer.run_if = Some(not_paused);
    writer.run_if_user_data = shared.user();
    ok(writer.add(&engine));
    ok(engine.run(2));
    assert_eq!(engine.resource_get::<u64>(shared.counter), 2);
    ok(engine.resource_set(shared.paused, &1u32));
    ok(engine.run(3));
    assert_eq!(engine.resource_get::<u64>(shared.counter), 2);
    assert_eq!(shared.statuses().len(), 2, "skipped runs record nothing");
    ok(engine.resource_set(shared.paused, &0u32));
    ok(engine.tick());
    assert_eq!(engine.resource_get::<u64>(shared.counter), 3);
}

#[test]
fn a_startup_system_runs_once_before_the_first_tick() {
    let (engine, shared) = engine_with_resources(2);
    let mut startup = SystemSpec::new("setup", Some(increment));
    startup.user_data = shared.user();
    startup.resource_writes = vec![shared.counter];
    startup.startup = true;
    ok(startup.add(&engine));
    let mut reader = SystemSpec::new("reader", Some(observe));
    reader.user_data = shared.user();
    reader.resource_reads = vec![shared.counter];
    ok(reader.add(&engine));
    ok(engine.run(3));
    // The startup system ran once, before the first tick's reader.
    assert_eq!(shared.seen(), [1, 1, 1]);
    assert_eq!(engine.resource_get::<u64>(shared.counter), 1);
    assert_eq!(shared.statuses().len(), 4);
}

#[test]
fn a_startup_system_takes_no_ordering_or_condition() {
    let (engine, shared) = engine_with_resources(1);
    let mut startup = SystemSpec::new("setup", Some(increment));
    startup.user_data = shared.user();
    startup.startup = true;
    startup.before = vec![c"other".into()];
    fails(
        startup.add(&engine),
        ECS_ERR_INVALID_ARGUMENT,
        "startup system `setup` sets `before`",
    );
    startup.before.clear();
    startup.run_if = Some(not_paused);
    fails(
        startup.add(&engine),
        ECS_ERR_INVALID_ARGUMENT,
        "sets `run_if`",
    );
    startup.run_if = None;
    ok(startup.add(&engine));
    fails(startup.add(&engine), ECS_ERR_DUPLICATE_NAME, "`setup`");
}

#[test]
fn a_version_1_descriptor_ignores_the_new_fields() {
    let (engine, shared) = engine_with_resources(1);
    let name = c"old";
    // A version 1 caller's struct is shorter: `struct_size` stops before
    // `resource_reads`, so the trailing fields (set here to what would
    // make it a startup system) are not read.
    let desc = ecs_system_desc {
        struct_size: std::mem::offset_of!(ecs_system_desc, resource_reads) as u32,
        name: name.as_ptr(),
        run: Some(observe),
        user_data: shared.user(),
        reads: ptr::null(),
        reads_len: 0,
        writes: ptr::null(),
        writes_len: 0,
        commands: false,
        before: ptr::null(),
        before_len: 0,
        after: ptr::null(),
        after_len: 0,
        spawn_reserve: 0,
        resource_reads: &shared.counter,
        resource_reads_len: 1,
        resource_writes: ptr::null(),
        resource_writes_len: 0,
        run_if: None,
        run_if_user_data: ptr::null_mut(),
        startup: true,
        event_reads: ptr::null(),
        event_reads_len: 0,
        event_writes: ptr::null(),
        event_writes_len: 0,
        sets: ptr::null(),
        sets_len: 0,
        run_exclusive: None,
    };
    // SAFETY: a live engine; `desc` and its strings live across the call.
    ok(unsafe { ecs_system_add(engine.raw(), &desc) });
    ok(engine.run(2));
    // Not a startup system (it ran each tick) and no declared read.
    assert_eq!(shared.statuses(), [ECS_ERR_UNDECLARED, ECS_ERR_UNDECLARED]);
    let short = ecs_system_desc {
        struct_size: std::mem::offset_of!(ecs_system_desc, spawn_reserve) as u32,
        ..desc
    };
    // SAFETY: as above.
    let status = unsafe { ecs_system_add(engine.raw(), &short) };
    fails(status, ECS_ERR_INVALID_ARGUMENT, "struct_size");
}

/// Tries the engine's own `ecs_resource_get` from inside a system.
unsafe extern "C" fn engine_call(_: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `EngineCall`, alive across the tick.
    let call = unsafe { &*user.cast::<EngineCall>() };
    let mut value = 0u64;
    // SAFETY: a live engine (busy: the call is refused); `value` is a local.
    let status = unsafe { ecs_resource_get(call.engine, call.counter, (&raw mut value).cast(), 8) };
    *call.status.lock().unwrap() = Some(status);
}

struct EngineCall {
    engine: *mut ecs_engine,
    counter: ecs_resource_id,
    status: Mutex<Option<ecs_status>>,
}

#[test]
fn the_engine_refuses_resource_calls_during_a_tick() {
    let (engine, shared) = engine_with_resources(2);
    let call = EngineCall {
        engine: engine.raw(),
        counter: shared.counter,
        status: Mutex::new(None),
    };
    let mut system = SystemSpec::new("inside", Some(engine_call));
    system.user_data = (&raw const call).cast_mut().cast();
    ok(system.add(&engine));
    ok(engine.tick());
    assert_eq!(*call.status.lock().unwrap(), Some(ECS_ERR_WRONG_STATE));
    assert_eq!(engine.resource_get::<u64>(shared.counter), 0);
}
