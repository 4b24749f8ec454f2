//! Systems written in C: a callback with declared reads, writes and
//! commands, ordered like any Rust system.

use std::any::Any;
use std::borrow::Cow;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

use ::ecs_engine::Access;
use command_buffer::ReservePolicy;
use ecs_runtime::EngineBuilder;
use scheduler::{
    Condition, IntoSystem, LocalState, System, SystemAccess, SystemContext, SystemError,
};

use crate::SendPtr;
use crate::boundary::{Versioned, arg, call, foreign, read_versioned, slice_arg, string_arg};
use crate::component::{component_name, ecs_component_id, known_id};
use crate::context::ecs_system_ctx;
use crate::engine::ecs_engine;
use crate::exclusive::CExclusive;
use crate::resource::SystemResources;
use crate::status::{ECS_ERR_SCHEDULE, Failure, ecs_status};
use crate::tag::Tag;

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
    // Version 2 (API 2.2): the fields below are read only when
    // `struct_size` covers them; an older caller's smaller struct gets
    // none (no resources, no condition, not a startup system).
    /// Resources read (`resource_reads_len` ids from
    /// `ecs_resource_register`), ordered like Rust `Res`: readers run
    /// together, after or before a writer as added.
    pub resource_reads: *const crate::resource::ecs_resource_id,
    /// Number of ids in `resource_reads`.
    pub resource_reads_len: usize,
    /// Resources written (`resource_writes_len` ids), ordered like Rust
    /// `ResMut`: a writer never runs beside another system touching the
    /// resource. A written resource may be read too.
    pub resource_writes: *const crate::resource::ecs_resource_id,
    /// Number of ids in `resource_writes`.
    pub resource_writes_len: usize,
    /// An optional run condition: evaluated once per tick, on the worker
    /// that would run the system, right before it would run, with the
    /// system's context (its declared components and resources readable);
    /// `false` skips the system for that tick (it records nothing). NULL:
    /// the system runs every tick.
    pub run_if: ecs_condition_fn,
    /// Passed to `run_if`; used from whichever worker thread evaluates it.
    pub run_if_user_data: *mut c_void,
    /// `true` for a startup system: it runs once, before the first tick's
    /// systems, startup systems one at a time in the order added, each
    /// followed by its commands. A startup system takes no `before`,
    /// `after`, `run_if`, `spawn_reserve` or `sets`.
    pub startup: bool,
    // Version 3 (API 2.4): read only when `struct_size` covers them.
    /// Event channels read (`event_reads_len` ids from
    /// `ecs_event_register`), with `ecs_ctx_read_events`. A reader runs
    /// after the writers of its channel (unless `before`/`after` or a
    /// conflict on a component or resource orders it first: then it sees
    /// those events a tick later).
    pub event_reads: *const crate::event::ecs_event_id,
    /// Number of ids in `event_reads`.
    pub event_reads_len: usize,
    /// Event channels sent on (`event_writes_len` ids), with
    /// `ecs_ctx_send_event`. Two writers of a channel do not conflict. A
    /// channel may be both read and written: the system then counts as a
    /// sender, and sees the events of the senders of its own wave on its
    /// next run.
    pub event_writes: *const crate::event::ecs_event_id,
    /// Number of ids in `event_writes`.
    pub event_writes_len: usize,
    /// Names of the sets the system belongs to (`sets_len` names; a set
    /// is made by the first system or `ecs_set_configure` naming it):
    /// the set's `before`/`after` and run condition apply to it, and
    /// another system's `before`/`after` may name the set.
    pub sets: *const *const c_char,
    /// Number of names in `sets`.
    pub sets_len: usize,
    // Version 4 (API 2.6): read only when `struct_size` covers it.
    /// An exclusive system's body, instead of `run` (which must then be
    /// NULL): called with the engine, alone between two waves (no other
    /// system runs meanwhile), as a Rust `fn(&mut Registry)` system. During
    /// the call the engine's world calls work on the calling thread and
    /// apply at once: entities and components (`ecs_spawn`, `ecs_insert`,
    /// `ecs_get`, `ecs_remove`, `ecs_has`, `ecs_despawn`, `ecs_is_alive`,
    /// `ecs_entity_count`, `ecs_entities`), the hierarchy and disabled
    /// entities (`ecs_set_parent`, ..., `ecs_disable_recursive`), resources
    /// (`ecs_resource_get`, `ecs_resource_set`), `ecs_component_lookup`,
    /// `ecs_component_get_info` and `ecs_world_checksum`. Every other engine call
    /// (a tick, a build, a snapshot, adding systems) is refused with
    /// `ECS_ERR_WRONG_STATE`, and so are world calls from another thread.
    /// An exclusive system declares nothing (no `reads`, `writes`,
    /// `commands`, resources, events or `spawn_reserve`: it has
    /// everything); `before`, `after`, `sets`, `run_if` (whose context
    /// reads nothing) and `startup` apply as to any system. It keeps no
    /// change-detection state and cannot fail.
    pub run_exclusive: crate::exclusive::ecs_exclusive_fn,
}

/// A run condition: called once per tick before its system would run,
/// with the system's context (valid only during the call; use it to read,
/// not to write or record commands) and `user_data`; returns `true` to
/// run the system this tick. No C++ exception may leave it.
pub type ecs_condition_fn =
    Option<unsafe extern "C" fn(ctx: *const ecs_system_ctx, user_data: *mut c_void) -> bool>;

/// The largest `ecs_system_desc.spawn_reserve`: 1,048,576 handles (about
/// 16 MiB of bookkeeping per system). A larger value is refused by
/// `ecs_system_add` with `ECS_ERR_INVALID_ARGUMENT`.
pub const ECS_SPAWN_RESERVE_MAX: usize = 1 << 20;

// The version 1 struct: every field up to `spawn_reserve`.
// SAFETY: every field is valid as zero bytes (NULL pointers, `None`
// callbacks, 0, `false`); the struct begins with `struct_size`.
unsafe impl Versioned for ecs_system_desc {
    const NAME: &'static str = "ecs_system_desc";
    const V1: usize = std::mem::offset_of!(ecs_system_desc, resource_reads);
}

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
/// `ECS_ERR_UNKNOWN_RESOURCE` and `ECS_ERR_UNKNOWN_EVENT` likewise for a
/// resource or an event channel;
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
    let engine_ptr = SendPtr(engine.cast());
    call(F, || {
        // SAFETY: the caller's promise on every pointer of the descriptor.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.lock(F)?;
        if desc.is_null() {
            return Err(Failure::null(F, "desc"));
        }
        // SAFETY: non-null, and valid for its `struct_size` by the caller's promise.
        let desc = unsafe { read_versioned(desc, F) }?;
        // SAFETY: NULL or a NUL-terminated string, by the caller's promise.
        let name = unsafe { string_arg(desc.name, F, "desc->name") }?;
        let run = match (desc.run, desc.run_exclusive) {
            (Some(run), None) => Some(run),
            (None, Some(_)) => None,
            (None, None) => return Err(Failure::null(F, "desc->run")),
            (Some(_), Some(_)) => {
                return Err(Failure::invalid(
                    F,
                    format!("system `{name}` sets both `run` and `run_exclusive`: give one"),
                ));
            }
        };
        // SAFETY: NULL or valid for that many reads, by the caller's promise.
        let reads = unsafe { slice_arg(desc.reads, desc.reads_len, F, "desc->reads") }?;
        // SAFETY: NULL or valid for that many reads, by the caller's promise.
        let writes = unsafe { slice_arg(desc.writes, desc.writes_len, F, "desc->writes") }?;
        // SAFETY: NULL or an array of that many C strings, by the caller's promise.
        let before = unsafe { names(desc.before, desc.before_len, F, "desc->before") }?;
        // SAFETY: NULL or an array of that many C strings, by the caller's promise.
        let after = unsafe { names(desc.after, desc.after_len, F, "desc->after") }?;
        // SAFETY: NULL or valid for that many reads, by the caller's promise.
        let resource_reads = unsafe {
            slice_arg(
                desc.resource_reads,
                desc.resource_reads_len,
                F,
                "desc->resource_reads",
            )
        }?;
        // SAFETY: NULL or valid for that many reads, by the caller's promise.
        let resource_writes = unsafe {
            slice_arg(
                desc.resource_writes,
                desc.resource_writes_len,
                F,
                "desc->resource_writes",
            )
        }?;
        // SAFETY: NULL or valid for that many reads, by the caller's promise.
        let event_reads = unsafe {
            slice_arg(
                desc.event_reads,
                desc.event_reads_len,
                F,
                "desc->event_reads",
            )
        }?;
        // SAFETY: NULL or valid for that many reads, by the caller's promise.
        let event_writes = unsafe {
            slice_arg(
                desc.event_writes,
                desc.event_writes_len,
                F,
                "desc->event_writes",
            )
        }?;
        // SAFETY: NULL or an array of that many C strings, by the caller's promise.
        let sets = unsafe { names(desc.sets, desc.sets_len, F, "desc->sets") }?;
        if desc.startup {
            let extra = [
                (!before.is_empty(), "before"),
                (!after.is_empty(), "after"),
                (desc.run_if.is_some(), "run_if"),
                (desc.spawn_reserve > 0, "spawn_reserve"),
                (!sets.is_empty(), "sets"),
            ];
            if let Some((_, field)) = extra.iter().find(|(set, _)| *set) {
                return Err(Failure::invalid(
                    F,
                    format!(
                        "startup system `{name}` sets `{field}`: startup systems run once, in \
                         the order added, before the first tick, and take no `before`, \
                         `after`, `run_if`, `spawn_reserve` or `sets`"
                    ),
                ));
            }
        }
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

        let condition = |resources| {
            desc.run_if.map(|run_if| CCondition {
                run_if,
                user_data: SendPtr(desc.run_if_user_data),
                tag: engine.tag,
                resources,
            })
        };
        if let Some(run_exclusive) = desc.run_exclusive {
            let declared = [
                (!reads.is_empty(), "reads"),
                (!writes.is_empty(), "writes"),
                (desc.commands, "commands"),
                (!resource_reads.is_empty(), "resource_reads"),
                (!resource_writes.is_empty(), "resource_writes"),
                (!event_reads.is_empty(), "event_reads"),
                (!event_writes.is_empty(), "event_writes"),
                (desc.spawn_reserve > 0, "spawn_reserve"),
            ];
            if let Some((_, field)) = declared.iter().find(|(set, _)| *set) {
                return Err(Failure::invalid(
                    F,
                    format!(
                        "exclusive system `{name}` sets `{field}`: an exclusive system has the \
                         whole world, so it declares nothing"
                    ),
                ));
            }
            let plan = Plan {
                startup: desc.startup,
                sets,
                before,
                after,
                condition: condition(None),
                spawn_reserve: 0,
            };
            let system = CExclusive {
                name: name.clone(),
                run: run_exclusive,
                user_data: SendPtr(desc.user_data),
                engine: engine_ptr,
                tag: engine.tag,
                resources: Arc::clone(&engine.resources),
            };
            return engine.add_system(F, &name, |builder| plan.add(builder, system));
        }
        let run = run.expect("`run` or `run_exclusive`, checked above");

        let mut access = SystemAccess::new();
        for (ids, mode) in [(reads, Access::Read), (writes, Access::Write)] {
            for &id in ids {
                let component = known_id(engine.tag, engine.registry(), id, F)?;
                let name = component_name(engine.registry(), component);
                access = match mode {
                    Access::Read => access.read_runtime(component, name),
                    Access::Write => access.write_runtime(component, name),
                };
            }
        }
        let mut declared = Vec::new();
        for (ids, mode) in [
            (resource_reads, Access::Read),
            (resource_writes, Access::Write),
        ] {
            for &id in ids {
                let (index, key, key_name) = engine.resources.key(engine.tag, id, F)?;
                declared.push((index, mode));
                access = match mode {
                    Access::Read => access.read_runtime(key, key_name),
                    Access::Write => access.write_runtime(key, key_name),
                };
            }
        }
        let resources = Some(Arc::new(SystemResources::new(
            Arc::clone(&engine.resources),
            engine.tag,
            declared,
        )));
        for (ids, list) in [
            (event_reads, "desc->event_reads"),
            (event_writes, "desc->event_writes"),
        ] {
            for &id in ids {
                let (raw, event_name, _) =
                    crate::event::known(engine.registry(), engine.tag, id, F)?;
                access = if list == "desc->event_reads" {
                    access.read_raw_events(raw, event_name)
                } else {
                    access.write_raw_events(raw, event_name)
                };
            }
        }
        if desc.commands {
            access = access.with_commands();
        }

        let spawn_reserve = desc.spawn_reserve;
        let user_data = SendPtr(desc.user_data);
        let tag = engine.tag;
        let plan = Plan {
            startup: desc.startup,
            sets,
            before,
            after,
            condition: condition(resources.clone()),
            spawn_reserve,
        };
        let system = CSystem::new(name.clone(), access, move |context, locals| {
            let mut ctx = ecs_system_ctx::new(context, tag, resources.clone(), false);
            ctx.track(context, locals)?;
            // SAFETY: the C caller promised `run` is sound with
            // `user_data` on any thread; `ctx` lives across the call.
            foreign(|| unsafe { run(&mut ctx, user_data.get()) });
            ctx.finish()
        });
        engine.add_system(F, &name, |builder| plan.add(builder, system))
    })
}

/// Where a system goes in the schedule: its ordering, sets, condition and
/// reserve, or the startup systems.
struct Plan {
    startup: bool,
    sets: Vec<String>,
    before: Vec<String>,
    after: Vec<String>,
    condition: Option<CCondition>,
    spawn_reserve: usize,
}

impl Plan {
    fn add<M, S: IntoSystem<M> + 'static>(self, builder: &mut EngineBuilder, system: S) {
        if self.startup {
            builder.add_startup_system(system);
            return;
        }
        let mut config = builder.add_system(system);
        for set in self.sets {
            config.in_set(set);
        }
        for target in self.before {
            config.before(target);
        }
        for target in self.after {
            config.after(target);
        }
        if let Some(condition) = self.condition {
            config.run_if(condition);
        }
        if self.spawn_reserve > 0 {
            let default = ReservePolicy::SCHEDULED;
            config.reserve(ReservePolicy {
                min: self.spawn_reserve,
                max: default.max.max(self.spawn_reserve),
                ..default
            });
        }
    }
}

/// A C system, as the scheduler's [`System`]: its body and user data are
/// the C program's; what it keeps from run to run is the runtime's own,
/// its [`locals`](System::locals): the change tick of its last run (the
/// `since` of its `added` and `changed` view lists) and a removal cursor
/// per component it read removals of (`ecs_ctx_removed`), saved with the
/// engine's states. Its [`state`](System::state) is `()`: the closure's
/// captures, the C function pointer and user data, are not state (the
/// loading engine has its own).
struct CSystem<F> {
    name: String,
    access: SystemAccess,
    run: F,
    locals: LocalState,
}

impl<F> CSystem<F>
where
    F: FnMut(&SystemContext<'_>, &mut LocalState) -> Result<(), SystemError> + Send + 'static,
{
    fn new(name: String, access: SystemAccess, run: F) -> Self {
        CSystem {
            name,
            access,
            run,
            locals: LocalState::default(),
        }
    }
}

impl<F> System for CSystem<F>
where
    F: FnMut(&SystemContext<'_>, &mut LocalState) -> Result<(), SystemError> + Send + 'static,
{
    fn default_name(&self) -> Cow<'static, str> {
        Cow::Owned(self.name.clone())
    }

    fn access(&self) -> SystemAccess {
        self.access.clone()
    }

    fn run(&mut self, ctx: &SystemContext<'_>) -> Result<(), SystemError> {
        (self.run)(ctx, &mut self.locals)
    }

    fn state(&self) -> &dyn Any {
        &()
    }

    fn locals(&self) -> Option<&LocalState> {
        Some(&self.locals)
    }

    fn locals_mut(&mut self) -> Option<&mut LocalState> {
        Some(&mut self.locals)
    }
}

/// A C run condition, as the scheduler's [`Condition`]: a system's (with
/// the system's resources) or a set's (with none).
pub(crate) struct CCondition {
    pub(crate) run_if: unsafe extern "C" fn(*const ecs_system_ctx, *mut c_void) -> bool,
    pub(crate) user_data: SendPtr,
    pub(crate) tag: Tag,
    pub(crate) resources: Option<Arc<SystemResources>>,
}

impl Condition for CCondition {
    fn access(&self) -> SystemAccess {
        // The condition sees the system's context: its access is the
        // system's, declared there.
        SystemAccess::new()
    }

    fn evaluate(&mut self, context: &SystemContext<'_>) -> Result<bool, SystemError> {
        let ctx = ecs_system_ctx::new(context, self.tag, self.resources.clone(), true);
        let (run_if, user_data) = (self.run_if, self.user_data);
        // SAFETY: the C caller promised `run_if` is sound with its user
        // data on any thread; `ctx` lives across the call.
        Ok(foreign(|| unsafe { run_if(&ctx, user_data.get()) }))
    }
}

/// An array of `len` C strings, copied.
///
/// # Safety
///
/// `ptr` is NULL (only when `len` is 0) or valid for `len` pointers, each
/// to a NUL-terminated string.
pub(crate) unsafe fn names(
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
