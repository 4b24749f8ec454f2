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

/// An engine with `threads` threads and the default step.
pub fn engine(threads: u32) -> *mut ecs_engine {
    let desc = ecs_engine_desc {
        struct_size: size_of::<ecs_engine_desc>() as u32,
        threads,
        step_seconds: 0.0,
    };
    let mut engine = ptr::null_mut();
    // SAFETY: valid pointers.
    ok(unsafe { ecs_engine_create(&desc, &mut engine) });
    engine
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
    }
}

/// Registers `T` under `name`.
pub fn register<T>(engine: *mut ecs_engine, name: &CStr) -> ecs_component_id {
    let desc = component_desc::<T>(name);
    let mut id = u32::MAX;
    // SAFETY: valid pointers.
    ok(unsafe { ecs_component_register(engine, &desc, &mut id) });
    id
}

/// Spawns an entity.
pub fn spawn(engine: *mut ecs_engine) -> ecs_entity {
    let mut e = 0;
    // SAFETY: valid pointers.
    ok(unsafe { ecs_spawn(engine, &mut e) });
    e
}

/// Inserts `value` as component `id`.
pub fn insert<T>(engine: *mut ecs_engine, e: ecs_entity, id: ecs_component_id, value: T) {
    // SAFETY: `value` lives across the call; the engine copies it.
    ok(unsafe { ecs_insert(engine, e, id, (&raw const value).cast()) });
}

/// A copy of `e`'s component `id`, read as `T`.
pub fn get<T: Copy>(engine: *mut ecs_engine, e: ecs_entity, id: ecs_component_id) -> T {
    let mut value: *mut c_void = ptr::null_mut();
    // SAFETY: valid pointers; the engine stores a `T` there.
    ok(unsafe { ecs_get(engine, e, id, &mut value) });
    // SAFETY: `ecs_get` gave a pointer to a stored `T` (the caller's type), valid here.
    unsafe { value.cast::<T>().read() }
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
        }
    }

    /// Adds the system to `engine`, returning the status.
    pub fn add(&self, engine: *mut ecs_engine) -> ecs_status {
        let before: Vec<_> = self.before.iter().map(|s| s.as_ptr()).collect();
        let after: Vec<_> = self.after.iter().map(|s| s.as_ptr()).collect();
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
        };
        // SAFETY: every pointer in `desc` lives across the call.
        unsafe { ecs_system_add(engine, &desc) }
    }
}
