//! Systems written in C: a callback with declared reads, writes and
//! commands, ordered like any Rust system.

use std::ffi::{c_char, c_void};

use ::ecs_engine::Access;
use command_buffer::ReservePolicy;
use scheduler::{DeclaredSystem, SystemAccess};

use crate::SendPtr;
use crate::boundary::{arg, call, check_struct_size, foreign, slice_arg, string_arg};
use crate::component::{component_name, ecs_component_id, known_id};
use crate::context::ecs_system_ctx;
use crate::engine::ecs_engine;
use crate::status::{ECS_ERR_SCHEDULE, Failure, ecs_status};

/// A system's body: called once per tick on a worker thread with the
/// system's context and its `user_data`. `ctx` and everything obtained
/// from it (the command buffer, view pointers) are valid only during the
/// call: do not keep them. Inside, use `ctx` only: calls on the engine
/// itself fail with `ECS_ERR_WRONG_STATE` while it ticks (structural
/// changes go through `ecs_ctx_commands`). No C++ exception may leave the
/// callback: one that does aborts the process.
pub type ecs_system_fn =
    Option<unsafe extern "C" fn(ctx: *mut ecs_system_ctx, user_data: *mut c_void)>;

/// A system to add.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ecs_system_desc {
    /// `sizeof(ecs_system_desc)`.
    pub struct_size: u32,
    /// Unique in the engine; UTF-8, NUL-terminated; copied.
    pub name: *const c_char,
    /// The body.
    pub run: ecs_system_fn,
    /// Passed to `run`; used from whichever worker thread runs the system.
    pub user_data: *mut c_void,
    /// Components read (`reads_len` ids).
    pub reads: *const ecs_component_id,
    /// Number of ids in `reads`.
    pub reads_len: usize,
    /// Components written (`writes_len` ids); a written id may be read too.
    pub writes: *const ecs_component_id,
    /// Number of ids in `writes`.
    pub writes_len: usize,
    /// `true` when the system records commands (`ecs_ctx_commands`).
    pub commands: bool,
    /// Names of systems this one must run before (`before_len` names).
    pub before: *const *const c_char,
    /// Number of names in `before`.
    pub before_len: usize,
    /// Names of systems this one must run after (`after_len` names).
    pub after: *const *const c_char,
    /// Number of names in `after`.
    pub after_len: usize,
    /// Entity handles the system's command buffer keeps reserved between
    /// ticks; 0 for the default (none until the system spawns, then twice
    /// the last tick's spawns). A tuning knob only: `ecs_commands_spawn`
    /// beyond the reserve still gives real handles (fresh slots, the same
    /// on any thread count); a system that spawns many entities every tick can set this
    /// to the most it spawns per tick to keep entity indices packed. At
    /// most `ECS_SPAWN_RESERVE_MAX`.
    pub spawn_reserve: usize,
}

/// The largest `ecs_system_desc.spawn_reserve`: 1,048,576 handles (about
/// 16 MiB of bookkeeping per system). A larger value is refused by
/// `ecs_system_add` with `ECS_ERR_INVALID_ARGUMENT`.
pub const ECS_SPAWN_RESERVE_MAX: usize = 1 << 20;

const SYSTEM_DESC_V1: usize = std::mem::size_of::<ecs_system_desc>();

/// Adds a C system. Systems are ordered like Rust systems: `before` /
/// `after` first, then two systems whose declared accesses conflict (one
/// writes what the other touches) in the order added; readers together. The
/// command buffer of a system that declared commands is applied after its
/// wave, in the order systems were added.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, desc, name, run, a non-empty list);
/// `ECS_ERR_INVALID_ARGUMENT` (struct_size, empty or non-UTF-8 names, a
/// `spawn_reserve` above `ECS_SPAWN_RESERVE_MAX`);
/// `ECS_ERR_UNKNOWN_COMPONENT` for an id not registered;
/// `ECS_ERR_DUPLICATE_NAME` when a system has the name;
/// `ECS_ERR_SCHEDULE` when `before` or `after` names the system itself;
/// `ECS_ERR_WRONG_STATE` once the schedule is built. A refused system is
/// not added, and the engine is as it was. A `before`/`after` name that no
/// system has is reported by the build (`ECS_ERR_SCHEDULE`).
///
/// # Safety
///
/// Pointers are NULL or valid as described; `run` is sound to call from
/// any thread with `user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_system_add(
    engine: *mut ecs_engine,
    desc: *const ecs_system_desc,
) -> ecs_status {
    const F: &str = "ecs_system_add";
    call(F, || {
        // SAFETY: the caller's promise on every pointer of the descriptor.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.lock(F)?;
        // SAFETY: a NULL or valid pointer, by the caller's promise.
        let desc = unsafe { arg(desc, F, "desc") }?;
        check_struct_size(desc.struct_size, SYSTEM_DESC_V1, F, "ecs_system_desc")?;
        // SAFETY: NULL or a NUL-terminated string, by the caller's promise.
        let name = unsafe { string_arg(desc.name, F, "desc->name") }?;
        let run = desc.run.ok_or_else(|| Failure::null(F, "desc->run"))?;
        // SAFETY: NULL or valid for that many reads, by the caller's promise.
        let reads = unsafe { slice_arg(desc.reads, desc.reads_len, F, "desc->reads") }?;
        // SAFETY: NULL or valid for that many reads, by the caller's promise.
        let writes = unsafe { slice_arg(desc.writes, desc.writes_len, F, "desc->writes") }?;
        // SAFETY: NULL or an array of that many C strings, by the caller's promise.
        let before = unsafe { names(desc.before, desc.before_len, F, "desc->before") }?;
        // SAFETY: NULL or an array of that many C strings, by the caller's promise.
        let after = unsafe { names(desc.after, desc.after_len, F, "desc->after") }?;
        if desc.spawn_reserve > ECS_SPAWN_RESERVE_MAX {
            return Err(Failure::invalid(
                F,
                format!(
                    "system `{name}`: `spawn_reserve` is {}, above ECS_SPAWN_RESERVE_MAX \
                     ({ECS_SPAWN_RESERVE_MAX})",
                    desc.spawn_reserve
                ),
            ));
        }
        for (list, targets) in [("before", &before), ("after", &after)] {
            if targets.contains(&name) {
                return Err(Failure::new(
                    ECS_ERR_SCHEDULE,
                    format!(
                        "{F}: system `{name}` names itself in `{list}`: a system cannot run \
                         {list} itself"
                    ),
                ));
            }
        }

        let mut access = SystemAccess::new();
        for (ids, mode) in [(reads, Access::Read), (writes, Access::Write)] {
            for &id in ids {
                let component = known_id(&engine, id, F)?;
                let name = component_name(engine.registry(), component);
                access = match mode {
                    Access::Read => access.read_runtime(component, name),
                    Access::Write => access.write_runtime(component, name),
                };
            }
        }
        if desc.commands {
            access = access.with_commands();
        }

        let spawn_reserve = desc.spawn_reserve;
        let user_data = SendPtr(desc.user_data);
        let tag = engine.tag;
        let system = DeclaredSystem::new(name.clone(), access, move |context| {
            let mut ctx = ecs_system_ctx::new(context, tag);
            // SAFETY: the C caller promised `run` is sound with
            // `user_data` on any thread; `ctx` lives across the call.
            foreign(|| unsafe { run(&mut ctx, user_data.get()) });
            Ok(())
        });
        engine.add_system(F, &name, |builder| {
            let mut config = builder.add_system(system);
            for target in before {
                config.before(target);
            }
            for target in after {
                config.after(target);
            }
            if spawn_reserve > 0 {
                let default = ReservePolicy::SCHEDULED;
                config.reserve(ReservePolicy {
                    min: spawn_reserve,
                    max: default.max.max(spawn_reserve),
                    ..default
                });
            }
        })
    })
}

/// An array of `len` C strings, copied.
///
/// # Safety
///
/// `ptr` is NULL (only when `len` is 0) or valid for `len` pointers, each
/// to a NUL-terminated string.
unsafe fn names(
    ptr: *const *const c_char,
    len: usize,
    function: &str,
    what: &str,
) -> Result<Vec<String>, Failure> {
    // SAFETY: the caller's promise.
    let pointers = unsafe { slice_arg(ptr, len, function, what) }?;
    pointers
        .iter()
        // SAFETY: NULL or a NUL-terminated string, by the caller's promise.
        .map(|&name| unsafe { string_arg(name, function, what) })
        .collect()
}
