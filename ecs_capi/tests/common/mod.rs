//! Helpers for calling the C API from Rust tests.
#![allow(
    dead_code,
    unreachable_pub,
    reason = "each test binary uses a part of these helpers"
)]

use std::ffi::{CStr, CString, c_void};
use std::ptr;

use ecs_capi::*;

/// Two floats, as a C program would declare Position or Velocity.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Vec2 {
    pub x: f32,
    pub y: f32,
}

/// The calling thread's last error message.
pub fn last_error() -> String {
    // SAFETY: never NULL, NUL-terminated.
    unsafe { CStr::from_ptr(ecs_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// Panics with the message when `status` is not `ECS_OK`.
#[track_caller]
pub fn ok(status: ecs_status) {
    assert_eq!(status, ECS_OK, "{}", last_error());
}

/// Asserts that `status` is `expected` and that the last error message
/// mentions `words`.
#[track_caller]
pub fn fails(status: ecs_status, expected: ecs_status, words: &str) {
    assert_eq!(status, expected, "{}", last_error());
    let message = last_error();
    assert!(
        message.contains(words),
        "`{message}` should mention `{words}`"
    );
}

/// An engine from `ecs_engine_create`, destroyed when dropped (or by
/// [`Engine::destroy`]), with a safe method per C call the tests make.
///
/// The C API asks two things of a caller: the engine pointer is live (made
/// by `ecs_engine_create`, not destroyed yet), and every other pointer is
/// valid for the call. An `Engine` holds the only copy of a live engine
/// (it is neither `Clone` nor `Copy`; [`raw`](Engine::raw) lends the
/// pointer to a callback that runs while the engine lives), and each method
/// passes pointers to its own arguments and locals, which live across the
/// call: so every `unsafe` call below is sound for the same reason, written
/// once here.
pub struct Engine {
    raw: *mut ecs_engine,
}

impl Engine {
    /// An engine with `threads` threads and the default step.
    pub fn new(threads: u32) -> Engine {
        let desc = ecs_engine_desc {
            struct_size: size_of::<ecs_engine_desc>() as u32,
            threads,
            step_seconds: 0.0,
        };
        let mut raw = ptr::null_mut();
        // SAFETY: see `Engine`: pointers to locals.
        ok(unsafe { ecs_engine_create(&desc, &mut raw) });
        Engine { raw }
    }

    /// The engine pointer, for a callback's user data or a call that
    /// passes NULL on purpose (which stays `unsafe` at the call site).
    pub fn raw(&self) -> *mut ecs_engine {
        self.raw
    }

    /// Destroys the engine now (as dropping it does).
    pub fn destroy(self) {}

    /// Registers a component described by `desc`.
    pub fn register_desc(&self, desc: &ecs_component_desc) -> Result<ecs_component_id, ecs_status> {
        let mut id = ecs_component_id::MAX;
        // SAFETY: see `Engine` (`desc`'s name and user data are the caller's, valid for the call).
        let status = unsafe { ecs_component_register(self.raw, desc, &mut id) };
        if status == ECS_OK {
            Ok(id)
        } else {
            Err(status)
        }
    }

    /// Registers `T` under `name`.
    #[track_caller]
    pub fn register<T>(&self, name: &CStr) -> ecs_component_id {
        self.register_desc(&component_desc::<T>(name))
            .unwrap_or_else(|status| panic!("{status}: {}", last_error()))
    }

    /// The id of the component named `name`.
    pub fn lookup(&self, name: &CStr) -> Result<ecs_component_id, ecs_status> {
        let mut id = ecs_component_id::MAX;
        // SAFETY: see `Engine`.
        let status = unsafe { ecs_component_lookup(self.raw, name.as_ptr(), &mut id) };
        if status == ECS_OK {
            Ok(id)
        } else {
            Err(status)
        }
    }

    /// Registers a resource named `name` holding `initial`.
    pub fn try_resource<T>(&self, name: &CStr, initial: &T) -> Result<ecs_resource_id, ecs_status> {
        self.try_resource_desc(name, initial, false)
    }

    /// Registers a resource named `name` holding `initial`, declared
    /// `savable` or not.
    pub fn try_resource_desc<T>(
        &self,
        name: &CStr,
        initial: &T,
        savable: bool,
    ) -> Result<ecs_resource_id, ecs_status> {
        let desc = ecs_resource_desc {
            struct_size: size_of::<ecs_resource_desc>() as u32,
            name: name.as_ptr(),
            size: size_of::<T>(),
            align: align_of::<T>(),
            initial: (&raw const *initial).cast(),
            savable,
        };
        let mut id = ecs_resource_id::MAX;
        // SAFETY: see `Engine`; `initial` is valid for `size` reads.
        let status = unsafe { ecs_resource_register(self.raw, &desc, &mut id) };
        if status == ECS_OK {
            Ok(id)
        } else {
            Err(status)
        }
    }

    /// Registers a resource named `name` holding `initial`, which must succeed.
    #[track_caller]
    pub fn resource<T>(&self, name: &CStr, initial: &T) -> ecs_resource_id {
        self.try_resource(name, initial)
            .unwrap_or_else(|status| panic!("{status}: {}", last_error()))
    }

    /// Registers an event channel (`ecs_event_register`), savable or not,
    /// returning its id or the status.
    pub fn try_event_channel(
        &self,
        name: &CStr,
        size: usize,
        align: usize,
        savable: bool,
    ) -> Result<ecs_event_id, ecs_status> {
        let desc = ecs_event_desc {
            struct_size: size_of::<ecs_event_desc>() as u32,
            name: name.as_ptr(),
            size,
            align,
            savable,
        };
        let mut id = 0;
        // SAFETY: see `Engine`; `desc`, its name and `id` are locals.
        let status = unsafe { ecs_event_register(self.raw, &desc, &mut id) };
        if status == ECS_OK {
            Ok(id)
        } else {
            Err(status)
        }
    }

    /// Resource `id`'s value, read as `T` with `ecs_resource_get`.
    pub fn try_resource_get<T: Copy + Default>(
        &self,
        id: ecs_resource_id,
    ) -> Result<T, ecs_status> {
        let mut value = T::default();
        // SAFETY: see `Engine`; `value` is valid for `size_of::<T>()` writes.
        let status =
            unsafe { ecs_resource_get(self.raw, id, (&raw mut value).cast(), size_of::<T>()) };
        if status == ECS_OK {
            Ok(value)
        } else {
            Err(status)
        }
    }

    /// Resource `id`'s value, which must be readable as `T`.
    #[track_caller]
    pub fn resource_get<T: Copy + Default>(&self, id: ecs_resource_id) -> T {
        self.try_resource_get(id)
            .unwrap_or_else(|status| panic!("{status}: {}", last_error()))
    }

    /// Overwrites resource `id` with `value` (`ecs_resource_set`).
    pub fn resource_set<T>(&self, id: ecs_resource_id, value: &T) -> ecs_status {
        // SAFETY: see `Engine`; `value` is valid for `size_of::<T>()` reads.
        unsafe { ecs_resource_set(self.raw, id, (&raw const *value).cast(), size_of::<T>()) }
    }

    /// Spawns an entity.
    #[track_caller]
    pub fn spawn(&self) -> ecs_entity {
        let mut e = 0;
        // SAFETY: see `Engine`.
        ok(unsafe { ecs_spawn(self.raw, &mut e) });
        e
    }

    /// Despawns `e`.
    pub fn despawn(&self, e: ecs_entity) -> ecs_status {
        // SAFETY: see `Engine`.
        unsafe { ecs_despawn(self.raw, e) }
    }

    /// Inserts a copy of `value` as component `id` of `e`.
    pub fn try_insert<T>(&self, e: ecs_entity, id: ecs_component_id, value: T) -> ecs_status {
        // SAFETY: see `Engine`; the engine copies `value`'s bytes (a
        // refused insert takes nothing, and `value` is dropped here).
        unsafe { ecs_insert(self.raw, e, id, (&raw const value).cast()) }
    }

    /// Inserts `value` as component `id` of `e`, which must succeed.
    #[track_caller]
    pub fn insert<T>(&self, e: ecs_entity, id: ecs_component_id, value: T) {
        ok(self.try_insert(e, id, value));
    }

    /// The pointer `ecs_get` gives to `e`'s component `id`.
    pub fn get_ptr(&self, e: ecs_entity, id: ecs_component_id) -> Result<*mut c_void, ecs_status> {
        let mut value: *mut c_void = ptr::null_mut();
        // SAFETY: see `Engine`.
        let status = unsafe { ecs_get(self.raw, e, id, &mut value) };
        if status == ECS_OK {
            Ok(value)
        } else {
            Err(status)
        }
    }

    /// A copy of `e`'s component `id`, read as `T`.
    #[track_caller]
    pub fn get<T: Copy>(&self, e: ecs_entity, id: ecs_component_id) -> T {
        let value = self
            .get_ptr(e, id)
            .unwrap_or_else(|status| panic!("{status}: {}", last_error()));
        // SAFETY: `ecs_get` gave a pointer to a stored value of the
        // component's size, registered for a `T` by the test, valid until
        // the next structural change; it is read at once.
        unsafe { value.cast::<T>().read() }
    }

    /// Whether `e` has component `id`.
    pub fn has(&self, e: ecs_entity, id: ecs_component_id) -> Result<bool, ecs_status> {
        let mut has = false;
        // SAFETY: see `Engine`.
        let status = unsafe { ecs_has(self.raw, e, id, &mut has) };
        if status == ECS_OK {
            Ok(has)
        } else {
            Err(status)
        }
    }

    /// Removes `e`'s component `id`.
    pub fn remove(&self, e: ecs_entity, id: ecs_component_id) -> ecs_status {
        // SAFETY: see `Engine`.
        unsafe { ecs_remove(self.raw, e, id) }
    }

    /// Whether `e` is alive.
    pub fn is_alive(&self, e: ecs_entity) -> bool {
        // SAFETY: see `Engine`.
        unsafe { ecs_is_alive(self.raw, e) }
    }

    /// The number of live entities.
    #[track_caller]
    pub fn count(&self) -> usize {
        let mut count = usize::MAX;
        // SAFETY: see `Engine`.
        ok(unsafe { ecs_entity_count(self.raw, &mut count) });
        count
    }

    /// Builds the schedule.
    pub fn build(&self) -> ecs_status {
        // SAFETY: see `Engine`.
        unsafe { ecs_engine_build(self.raw) }
    }

    /// Runs one tick.
    pub fn tick(&self) -> ecs_status {
        // SAFETY: see `Engine`.
        unsafe { ecs_engine_tick(self.raw) }
    }

    /// Runs `ticks` ticks.
    pub fn run(&self, ticks: u64) -> ecs_status {
        // SAFETY: see `Engine`.
        unsafe { ecs_engine_run(self.raw, ticks) }
    }

    /// The number of ticks run.
    #[track_caller]
    pub fn ticks(&self) -> u64 {
        let mut ticks = u64::MAX;
        // SAFETY: see `Engine`.
        ok(unsafe { ecs_engine_ticks(self.raw, &mut ticks) });
        ticks
    }

    /// Saves the engine in `format` (`ecs_engine_save`), copying the
    /// bytes out and freeing the library's buffer (`ecs_snapshot_free`).
    pub fn save(&self, format: ecs_snapshot_format) -> Result<Vec<u8>, ecs_status> {
        let mut bytes: *mut u8 = ptr::dangling_mut();
        let mut len = usize::MAX;
        // SAFETY: see `Engine`.
        let status = unsafe { ecs_engine_save(self.raw, format, &mut bytes, &mut len) };
        if status != ECS_OK {
            // A refused save writes NULL and 0.
            assert!(bytes.is_null() && len == 0, "{bytes:?}, {len}");
            return Err(status);
        }
        assert!(!bytes.is_null());
        // SAFETY: a successful save wrote a buffer of `len` bytes, ours
        // until freed below, once.
        let copy = unsafe { std::slice::from_raw_parts(bytes, len) }.to_vec();
        // SAFETY: as above.
        unsafe { ecs_snapshot_free(bytes, len) };
        Ok(copy)
    }

    /// Loads `bytes` in `format` (`ecs_engine_load`).
    pub fn load(&self, format: ecs_snapshot_format, bytes: &[u8]) -> ecs_status {
        // SAFETY: see `Engine`; `bytes` is valid for its length.
        unsafe { ecs_engine_load(self.raw, format, bytes.as_ptr(), bytes.len()) }
    }

    /// The world checksum over components `ids`.
    pub fn checksum(&self, ids: &[ecs_component_id]) -> Result<u64, ecs_status> {
        let mut out = 0;
        // SAFETY: see `Engine`.
        let status = unsafe { ecs_world_checksum(self.raw, ids.as_ptr(), ids.len(), &mut out) };
        if status == ECS_OK {
            Ok(out)
        } else {
            Err(status)
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // SAFETY: see `Engine`: live until here, destroyed once.
        unsafe { ecs_engine_destroy(self.raw) };
    }
}

/// A component descriptor named `name` for `T`, without destructor.
pub fn component_desc<T>(name: &CStr) -> ecs_component_desc {
    ecs_component_desc {
        struct_size: size_of::<ecs_component_desc>() as u32,
        name: name.as_ptr(),
        size: size_of::<T>(),
        align: align_of::<T>(),
        drop: None,
        drop_user_data: ptr::null_mut(),
        savable: false,
        flags: 0,
    }
}

/// A view descriptor over `ids` with `with` and `without`, and no
/// optional, added or changed lists. The lists must outlive its use.
pub fn view_desc(
    ids: &[ecs_component_id],
    with: &[ecs_component_id],
    without: &[ecs_component_id],
) -> ecs_view_desc {
    ecs_view_desc {
        struct_size: size_of::<ecs_view_desc>() as u32,
        ids: ids.as_ptr(),
        ids_len: ids.len(),
        with: with.as_ptr(),
        with_len: with.len(),
        without: without.as_ptr(),
        without_len: without.len(),
        optional: ptr::null(),
        optional_len: 0,
        added: ptr::null(),
        added_len: 0,
        changed: ptr::null(),
        changed_len: 0,
    }
}

/// A descriptor of a savable component named `name` for `T` (plain
/// data: every byte initialised, owning nothing).
pub fn savable_desc<T>(name: &CStr) -> ecs_component_desc {
    ecs_component_desc {
        savable: true,
        ..component_desc::<T>(name)
    }
}

/// A system descriptor: name, callback, user data, reads, writes,
/// commands. The strings and arrays must outlive the call that uses it.
pub struct SystemSpec {
    pub name: CString,
    pub run: ecs_system_fn,
    pub user_data: *mut c_void,
    pub reads: Vec<ecs_component_id>,
    pub writes: Vec<ecs_component_id>,
    pub commands: bool,
    pub before: Vec<CString>,
    pub after: Vec<CString>,
    pub spawn_reserve: usize,
    pub resource_reads: Vec<ecs_resource_id>,
    pub resource_writes: Vec<ecs_resource_id>,
    pub run_if: ecs_condition_fn,
    pub run_if_user_data: *mut c_void,
    pub startup: bool,
    pub event_reads: Vec<ecs_event_id>,
    pub event_writes: Vec<ecs_event_id>,
    pub sets: Vec<CString>,
    pub run_exclusive: ecs_exclusive_fn,
}

impl SystemSpec {
    pub fn new(name: &str, run: ecs_system_fn) -> Self {
        SystemSpec {
            name: CString::new(name).unwrap(),
            run,
            user_data: ptr::null_mut(),
            reads: Vec::new(),
            writes: Vec::new(),
            commands: false,
            before: Vec::new(),
            after: Vec::new(),
            spawn_reserve: 0,
            resource_reads: Vec::new(),
            resource_writes: Vec::new(),
            run_if: None,
            run_if_user_data: ptr::null_mut(),
            startup: false,
            event_reads: Vec::new(),
            event_writes: Vec::new(),
            sets: Vec::new(),
            run_exclusive: None,
        }
    }

    /// An exclusive system named `name` running `run`.
    pub fn exclusive(name: &str, run: ecs_exclusive_fn) -> Self {
        SystemSpec {
            run_exclusive: run,
            ..SystemSpec::new(name, None)
        }
    }

    /// Adds the system to `engine`, returning the status.
    pub fn add(&self, engine: &Engine) -> ecs_status {
        self.add_raw(engine.raw())
    }

    /// Adds the system to the engine `engine` points at (live, or a test
    /// of a refused call), returning the status.
    pub fn add_raw(&self, engine: *mut ecs_engine) -> ecs_status {
        let before: Vec<_> = self.before.iter().map(|s| s.as_ptr()).collect();
        let after: Vec<_> = self.after.iter().map(|s| s.as_ptr()).collect();
        let sets: Vec<_> = self.sets.iter().map(|s| s.as_ptr()).collect();
        let desc = ecs_system_desc {
            struct_size: size_of::<ecs_system_desc>() as u32,
            name: self.name.as_ptr(),
            run: self.run,
            user_data: self.user_data,
            reads: self.reads.as_ptr(),
            reads_len: self.reads.len(),
            writes: self.writes.as_ptr(),
            writes_len: self.writes.len(),
            commands: self.commands,
            before: before.as_ptr(),
            before_len: before.len(),
            after: after.as_ptr(),
            after_len: after.len(),
            spawn_reserve: self.spawn_reserve,
            resource_reads: self.resource_reads.as_ptr(),
            resource_reads_len: self.resource_reads.len(),
            resource_writes: self.resource_writes.as_ptr(),
            resource_writes_len: self.resource_writes.len(),
            run_if: self.run_if,
            run_if_user_data: self.run_if_user_data,
            startup: self.startup,
            event_reads: self.event_reads.as_ptr(),
            event_reads_len: self.event_reads.len(),
            event_writes: self.event_writes.as_ptr(),
            event_writes_len: self.event_writes.len(),
            sets: sets.as_ptr(),
            sets_len: sets.len(),
            run_exclusive: self.run_exclusive,
        };
        // SAFETY: see `Engine`; every pointer in `desc` points into `self`
        // or the locals above, which live across the call, and the test
        // gives a `run` sound with its `user_data`.
        unsafe { ecs_system_add(engine, &desc) }
    }
}

/// A handle to a queue of `u64` events, from `ecs_queue_create` or
/// `ecs_queue_clone`, destroyed when dropped; a safe method per C call.
///
/// As for [`Engine`]: the handle is live while the `Queue` is (it is its
/// only owner), and each method passes pointers to its own arguments and
/// locals, valid for the call; the events are `u64`s, the queue's
/// `event_size` (8 bytes).
pub struct Queue {
    raw: *mut ecs_queue,
}

// SAFETY: the C API documents queue handles as usable from any thread.
unsafe impl Send for Queue {}

/// A status as a `Result` carrying the `u64` event read.
fn event(status: ecs_status, value: u64) -> Result<u64, ecs_status> {
    if status == ECS_OK {
        Ok(value)
    } else {
        Err(status)
    }
}

impl Queue {
    /// A queue of `u64` events holding at most `capacity` (0: unbounded).
    #[track_caller]
    pub fn new(capacity: usize) -> Queue {
        let desc = ecs_queue_desc {
            struct_size: size_of::<ecs_queue_desc>() as u32,
            event_size: size_of::<u64>(),
            capacity,
        };
        let mut raw = ptr::null_mut();
        // SAFETY: see `Queue`.
        ok(unsafe { ecs_queue_create(&desc, &mut raw) });
        Queue { raw }
    }

    /// Another handle to the same queue.
    #[track_caller]
    pub fn handle(&self) -> Queue {
        let mut raw = ptr::null_mut();
        // SAFETY: see `Queue`.
        ok(unsafe { ecs_queue_clone(self.raw, &mut raw) });
        Queue { raw }
    }

    /// Pushes `v`, waiting for room.
    pub fn push(&self, v: u64) -> ecs_status {
        // SAFETY: see `Queue`.
        unsafe { ecs_queue_push(self.raw, (&raw const v).cast()) }
    }

    /// Pushes `v` if there is room.
    pub fn try_push(&self, v: u64) -> ecs_status {
        // SAFETY: see `Queue`.
        unsafe { ecs_queue_try_push(self.raw, (&raw const v).cast()) }
    }

    /// Takes the oldest event without waiting.
    pub fn try_pop(&self) -> Result<u64, ecs_status> {
        let mut out = 0u64;
        // SAFETY: see `Queue`.
        let status = unsafe { ecs_queue_try_pop(self.raw, (&raw mut out).cast()) };
        event(status, out)
    }

    /// Takes the oldest event, waiting up to `timeout_ms`.
    pub fn pop_timeout(&self, timeout_ms: u64) -> Result<u64, ecs_status> {
        let mut out = 0u64;
        // SAFETY: see `Queue`.
        let status = unsafe { ecs_queue_pop_timeout(self.raw, (&raw mut out).cast(), timeout_ms) };
        event(status, out)
    }

    /// Closes the queue for every handle.
    pub fn close(&self) -> ecs_status {
        // SAFETY: see `Queue`.
        unsafe { ecs_queue_close(self.raw) }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // SAFETY: see `Queue`: live until here, destroyed once.
        unsafe { ecs_queue_destroy(self.raw) };
    }
}

/// The ids the [`movement`] system walks: its user data.
#[derive(Debug, Clone, Copy)]
pub struct MoveIds {
    pub position: ecs_component_id,
    pub velocity: ecs_component_id,
}

/// A system that moves every entity with a `Vec2` position and velocity
/// by its velocity; its user data is a [`MoveIds`] that outlives the
/// engine's ticks (declare the position written, the velocity read).
///
/// # Safety
///
/// `ctx` is the running system's context and `user` a live `MoveIds`.
pub unsafe extern "C" fn movement(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    unsafe extern "C" fn each(_: ecs_entity, components: *const *mut c_void, _: *mut c_void) {
        // SAFETY: one valid pointer per term (Position, Velocity), valid
        // during the call.
        unsafe {
            let p = &mut *(*components).cast::<Vec2>();
            let v = &*(*components.add(1)).cast::<Vec2>();
            p.x += v.x;
            p.y += v.y;
        }
    }
    // SAFETY: the caller's promise on `user`.
    let ids = unsafe { &*user.cast::<MoveIds>() };
    let terms = [ids.position, ids.velocity];
    // SAFETY: the running system's context; `terms` lives across the call.
    ok(unsafe { ecs_view_each(ctx, terms.as_ptr(), 2, Some(each), ptr::null_mut()) });
}

/// An empty state, destroyed when dropped.
pub struct State(pub *mut ecs_state);

impl State {
    pub fn new() -> State {
        let mut raw = ptr::null_mut();
        // SAFETY: `raw` is a local.
        ok(unsafe { ecs_state_create(&mut raw) });
        State(raw)
    }

    pub fn save(&self, engine: &Engine) -> ecs_status {
        // SAFETY: a live engine and a live state, used by this call only.
        unsafe { ecs_engine_save_state(engine.raw(), self.0) }
    }

    pub fn restore(&self, engine: &Engine) -> ecs_status {
        // SAFETY: as above.
        unsafe { ecs_engine_restore_state(engine.raw(), self.0) }
    }

    pub fn ticks(&self) -> Result<u64, ecs_status> {
        let mut ticks = 0;
        // SAFETY: a live state; `ticks` is a local.
        let status = unsafe { ecs_state_ticks(self.0, &mut ticks) };
        if status == ECS_OK {
            Ok(ticks)
        } else {
            Err(status)
        }
    }
}

impl Drop for State {
    fn drop(&mut self) {
        // SAFETY: made by `new`, destroyed once.
        unsafe { ecs_state_destroy(self.0) };
    }
}
