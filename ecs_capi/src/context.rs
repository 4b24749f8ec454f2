//! What a C system sees while it runs: the tick, views and random access
//! over its declared components, and its command buffer.

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;
use std::thread::ThreadId;

use ::ecs_engine::{ChangeTick, ComponentId, RawComponent, RemovedCursor};
use scheduler::{LastRun, Local, LocalState, SystemContext, SystemParam};

use crate::boundary::{arg, call, call_value, write_out};
use crate::component::{decode, ecs_component_id};
use crate::engine::{ecs_entity, entity};
use crate::resource::SystemResources;
use crate::status::{Failure, ecs_status};
use crate::tag::Tag;

/// A running system's context: passed to its callback, valid only during
/// that call, and only on the thread that runs it. Opaque to C.
#[derive(Debug)]
pub struct ecs_system_ctx {
    /// The scheduler's context, its lifetime erased: it outlives this
    /// struct, which lives on the stack of the system's run.
    context: NonNull<SystemContext<'static>>,
    /// The engine's id tag, to decode component ids.
    tag: Tag,
    commands: ecs_commands,
    /// The resources the system declared, if any.
    resources: Option<Arc<SystemResources>>,
    /// Events sent so far in this run, by channel, handed to the channels
    /// when the system returns (`event.rs`).
    pub(crate) sent: RefCell<Vec<crate::event::Sending>>,
    /// `true` while `ecs_ctx_read_events` runs its callback (a nested
    /// read is refused).
    pub(crate) reading: Cell<bool>,
    /// `true` for a run condition's context: it sends and reads no events.
    pub(crate) condition: bool,
    /// The message of `ecs_ctx_fail`, when the system failed.
    failed: RefCell<Option<String>>,
    /// The thread running the callback: the only one that may use the
    /// context (its cells are not shared).
    owner: ThreadId,
    /// The change tick of the system's last run, what `added` and
    /// `changed` compare with; `None` in a run condition (which keeps no
    /// last run).
    since: Option<ChangeTick>,
    /// The system's removal cursors, one child state per component index
    /// (`track`), borrowed for the run; `None` in a run condition.
    cursors: Option<NonNull<LocalState>>,
}

/// A running system's command buffer, from `ecs_ctx_commands`: valid
/// while the system runs. Opaque to C.
#[derive(Debug)]
pub struct ecs_commands {
    context: NonNull<SystemContext<'static>>,
    tag: Tag,
    /// As `ecs_system_ctx::owner`.
    owner: ThreadId,
}

impl ecs_system_ctx {
    /// The C view of `context`, for one call of a system's callback (or,
    /// with `condition`, of its run condition) in the engine tagged `tag`.
    pub(crate) fn new(
        context: &SystemContext<'_>,
        tag: Tag,
        resources: Option<Arc<SystemResources>>,
        condition: bool,
    ) -> Self {
        let context = NonNull::from(context).cast::<SystemContext<'static>>();
        let owner = std::thread::current().id();
        ecs_system_ctx {
            context,
            tag,
            commands: ecs_commands {
                context,
                tag,
                owner,
            },
            resources,
            sent: RefCell::new(Vec::new()),
            reading: Cell::new(false),
            condition,
            failed: RefCell::new(None),
            owner,
            since: None,
            cursors: None,
        }
    }

    /// Gives a system's context its change detection from `locals`, the
    /// system's state (which must outlive the context): starts its
    /// [`LastRun`] at this run's change tick, and lends it the removal
    /// cursors.
    pub(crate) fn track(
        &mut self,
        context: &SystemContext<'_>,
        locals: &mut LocalState,
    ) -> Result<(), scheduler::SystemError> {
        let [last_run, cursors] = locals.children(2) else {
            unreachable!("two children asked for")
        };
        let mut last_run = Local::<LastRun>::fetch_local(context, last_run)?;
        self.since = Some(last_run.start(context.change_tick()));
        self.cursors = Some(NonNull::from(cursors));
        Ok(())
    }

    /// The `since` of `added` and `changed` lists, or `ECS_ERR_WRONG_STATE`
    /// in a run condition.
    pub(crate) fn since(&self, function: &str) -> Result<ChangeTick, Failure> {
        self.since.ok_or_else(|| in_condition(function))
    }

    /// Reads removals of component `id` through the system's cursor for
    /// it, each passed to `f`; the number the log dropped unread.
    pub(crate) fn read_removed(
        &self,
        id: ComponentId,
        function: &str,
        f: impl FnMut(::ecs_engine::Entity),
    ) -> Result<u64, Failure> {
        let cursors = self.cursors.ok_or_else(|| in_condition(function))?;
        let index = id.to_u32() as usize;
        // SAFETY: `cursors` points at the running system's state, which
        // outlives this context (`track`); the context is used on its
        // owner thread only, and this borrow ends before any C code runs.
        let state = unsafe { &mut *cursors.as_ptr() };
        let slot = &mut state.children(index + 1)[index];
        let mut cursor = Local::<RemovedCursor>::fetch_local(self.context(), slot)?;
        self.context()
            .removed_raw(id, &mut cursor, f)
            .map_err(Failure::from)
    }

    /// The engine's id tag, to decode ids.
    pub(crate) fn tag(&self) -> Tag {
        self.tag
    }

    /// How the system's run ends: its failure (`ecs_ctx_fail`), or its
    /// events handed to their channels.
    pub(crate) fn finish(&self) -> Result<(), scheduler::SystemError> {
        if let Some(message) = self.failed.take() {
            return Err(scheduler::SystemError::Failed {
                system: self.system_name(),
                message,
            });
        }
        self.finish_events()
    }

    /// The resources the running system declared (`None`: none).
    pub(crate) fn resources(&self) -> Option<&SystemResources> {
        self.resources.as_deref()
    }

    /// The running system's name.
    pub(crate) fn system_name(&self) -> String {
        self.context().system_name().to_string()
    }

    pub(crate) fn context(&self) -> &SystemContext<'static> {
        // SAFETY: `context` points at the scheduler's context, alive for
        // the whole callback, during which alone C holds this struct.
        unsafe { self.context.as_ref() }
    }
}

impl ecs_commands {
    /// The running system's context.
    pub(crate) fn context(&self) -> &SystemContext<'static> {
        // SAFETY: as in `ecs_system_ctx::context`.
        unsafe { self.context.as_ref() }
    }
}

/// `ECS_ERR_WRONG_STATE` for what only a system (not a run condition) may
/// do.
fn in_condition(function: &str) -> Failure {
    Failure::new(
        crate::status::ECS_ERR_WRONG_STATE,
        format!(
            "{function}: change detection (`added`, `changed`, removals) is for systems: a run \
             condition keeps no last run"
        ),
    )
}

/// `ECS_ERR_WRONG_STATE` unless the calling thread is `owner`, the one
/// running the system's callback.
fn check_owner(owner: ThreadId, function: &str) -> Result<(), Failure> {
    if std::thread::current().id() == owner {
        return Ok(());
    }
    Err(Failure::new(
        crate::status::ECS_ERR_WRONG_STATE,
        format!(
            "{function}: a system's context and command buffer are used only on the thread \
             that runs its callback (not from ecs_view_par_each_chunk's pieces on other threads)"
        ),
    ))
}

/// The running system's context `ctx`, checked: not NULL, and used on the
/// thread that runs the system.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to a running callback.
pub(crate) unsafe fn ctx_arg<'a>(
    ctx: *const ecs_system_ctx,
    function: &str,
) -> Result<&'a ecs_system_ctx, Failure> {
    // SAFETY: the caller's promise.
    let ctx: &ecs_system_ctx = unsafe { arg(ctx, function, "ctx") }?;
    check_owner(ctx.owner, function)?;
    Ok(ctx)
}

/// A running system's command buffer `commands`, checked as
/// [`ctx_arg`] checks a context.
///
/// # Safety
///
/// `commands` is NULL or a buffer from `ecs_ctx_commands` whose system is
/// running.
pub(crate) unsafe fn commands_arg<'a>(
    commands: *const ecs_commands,
    function: &str,
) -> Result<&'a ecs_commands, Failure> {
    // SAFETY: the caller's promise.
    let commands: &ecs_commands = unsafe { arg(commands, function, "commands") }?;
    check_owner(commands.owner, function)?;
    Ok(commands)
}

/// The tick being run.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ecs_tick {
    /// 0 for the first tick, then 1, 2, ...
    pub number: u64,
    /// The fixed step, seconds.
    pub step: f64,
    /// Wall-clock seconds since the previous tick started (0 for the first).
    pub delta: f64,
}

/// Writes the tick being run to `*out`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `out` is
/// NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_ctx_tick(
    ctx: *const ecs_system_ctx,
    out: *mut ecs_tick,
) -> ecs_status {
    const F: &str = "ecs_ctx_tick";
    call(F, || {
        // SAFETY: the caller's promise on both pointers.
        let ctx = unsafe { ctx_arg(ctx, F) }?;
        let tick = ctx.context().tick();
        let tick = ecs_tick {
            number: tick.number,
            step: tick.step,
            delta: tick.delta,
        };
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, tick, F, "out") }
    })
}

/// `true` when `entity` is alive (no declaration needed); `false` for a
/// NULL context.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_ctx_is_alive(ctx: *const ecs_system_ctx, entity: ecs_entity) -> bool {
    call_value("ecs_ctx_is_alive", false, || {
        // SAFETY: the caller's promise on `ctx`.
        let Some(ctx) = (unsafe { ctx.as_ref() }) else {
            return false;
        };
        ::ecs_engine::Entity::from_bits(entity).is_some_and(|e| ctx.context().is_alive(e))
    })
}

/// Writes to `*out` whether `entity` has component `id` (declared by the
/// system, read or write: a membership test reads the component), without
/// marking anything changed (unlike `ecs_ctx_get` of a written id).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_UNKNOWN_COMPONENT` for an id of
/// another engine; `ECS_ERR_UNDECLARED`; `ECS_ERR_STALE_ENTITY`;
/// `ECS_ERR_BORROW_CONFLICT` inside a view that writes `id`.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `out` is
/// NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_ctx_has(
    ctx: *mut ecs_system_ctx,
    entity: ecs_entity,
    id: ecs_component_id,
    out: *mut bool,
) -> ecs_status {
    const F: &str = "ecs_ctx_has";
    call(F, || {
        // SAFETY: the caller's promise on both pointers.
        let ctx = unsafe { ctx_arg(ctx, F) }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        let target = self::entity(entity, F)?;
        let has = match ctx.context().get_raw(target, decode(ctx.tag, id, F)?) {
            Ok(_) => true,
            Err(scheduler::SystemError::Registry {
                source: ::ecs_engine::EcsError::MissingComponent { .. },
                ..
            }) => false,
            Err(error) => return Err(Failure::from(error)),
        };
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, has, F, "out") }
    })
}

/// Writes a pointer to `entity`'s component `id` to `*out`: valid until the
/// system returns; it may be written through only when the system declared
/// `id` as written, and then the value counts as changed (for a component
/// that tracks changes).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_UNKNOWN_COMPONENT` for an id of
/// another engine; `ECS_ERR_UNDECLARED` when the system did not declare
/// `id`; `ECS_ERR_STALE_ENTITY`; `ECS_ERR_MISSING_COMPONENT`;
/// `ECS_ERR_BORROW_CONFLICT` inside a view that writes `id`.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `out` is
/// NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_ctx_get(
    ctx: *mut ecs_system_ctx,
    entity: ecs_entity,
    id: ecs_component_id,
    out: *mut *mut c_void,
) -> ecs_status {
    // SAFETY: the caller's promises, passed on.
    unsafe { get_component(ctx, entity, id, out, "ecs_ctx_get", false) }
}

/// As `ecs_ctx_get`, but an entity without the component is not a
/// failure: `*out` is set to NULL and the call returns `ECS_OK` (with no
/// message to format: the cheap test for an optional component, one call
/// where `ecs_ctx_has` and `ecs_ctx_get` take two).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_UNKNOWN_COMPONENT` for an id of
/// another engine; `ECS_ERR_UNDECLARED` when the system did not declare
/// `id`; `ECS_ERR_STALE_ENTITY`; `ECS_ERR_BORROW_CONFLICT` inside a view
/// that writes `id`.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `out` is
/// NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_ctx_try_get(
    ctx: *mut ecs_system_ctx,
    entity: ecs_entity,
    id: ecs_component_id,
    out: *mut *mut c_void,
) -> ecs_status {
    // SAFETY: the caller's promises, passed on.
    unsafe { get_component(ctx, entity, id, out, "ecs_ctx_try_get", true) }
}

/// `ecs_ctx_get` and `ecs_ctx_try_get` (`missing_is_null`) as `function`.
///
/// # Safety
///
/// As theirs.
unsafe fn get_component(
    ctx: *mut ecs_system_ctx,
    entity: ecs_entity,
    id: ecs_component_id,
    out: *mut *mut c_void,
    function: &'static str,
    missing_is_null: bool,
) -> ecs_status {
    let f = function;
    call(f, || {
        // SAFETY: the caller's promise on both pointers.
        let ctx = unsafe { ctx_arg(ctx, f) }?;
        if out.is_null() {
            return Err(Failure::null(f, "out"));
        }
        let target = self::entity(entity, f)?;
        let id = decode(ctx.tag, id, f)?;
        let context = ctx.context();
        let value = match context.declared(id) {
            Some(::ecs_engine::Access::Write) => context.get_raw_mut(target, id),
            _ => context.get_raw(target, id),
        };
        let pointer = match value {
            Ok(value) => value.as_ptr().cast(),
            Err(scheduler::SystemError::Registry {
                source: ::ecs_engine::EcsError::MissingComponent { .. },
                ..
            }) if missing_is_null => std::ptr::null_mut(),
            Err(error) => return Err(Failure::from(error)),
        };
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, pointer, f, "out") }
    })
}

/// Marks the running system as failed, with `message` (copied; NULL for
/// none): when its callback returns, the system's commands and the events
/// it sent are dropped, the events it read are handed out again the next
/// time it runs, and the tick fails with `ECS_ERR_SYSTEM_FAILED` naming the
/// system and the message after the wave ends (the other systems of the
/// wave finish and keep their effects; later waves do not run), as for a
/// Rust system that returns an error. Writes the system made directly
/// (through views, `ecs_ctx_get`, resources) are kept. A second call keeps
/// the first message; an empty message, or bytes that are not UTF-8, still
/// fail the system (with a default message, or the bytes read lossily).
/// Not from a run condition. A failing startup system stops the startup
/// systems after it: they never run (as in Rust).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (ctx); `ECS_ERR_WRONG_STATE` from a run
/// condition or from another thread than the system's.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `message`
/// NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_ctx_fail(
    ctx: *mut ecs_system_ctx,
    message: *const std::ffi::c_char,
) -> ecs_status {
    const F: &str = "ecs_ctx_fail";
    call(F, || {
        // SAFETY: the caller's promise on `ctx`.
        let ctx = unsafe { ctx_arg(ctx, F) }?;
        if ctx.condition {
            return Err(Failure::new(
                crate::status::ECS_ERR_WRONG_STATE,
                format!("{F}: a run condition cannot fail its system (return false to skip it)"),
            ));
        }
        // Whatever the message, the system fails: an empty one, or bytes
        // that are not UTF-8, are no reason to keep its effects.
        let message = if message.is_null() {
            String::new()
        } else {
            // SAFETY: non-null and NUL-terminated by the caller's promise.
            unsafe { std::ffi::CStr::from_ptr(message) }
                .to_string_lossy()
                .into_owned()
        };
        let message = if message.is_empty() {
            "failed (ecs_ctx_fail)".to_owned()
        } else {
            message
        };
        ctx.failed.borrow_mut().get_or_insert(message);
        Ok(())
    })
}

/// Writes the running system's command buffer to `*out`; valid while the
/// system runs. Its commands are applied after the system's wave, in the
/// order systems were added.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_UNDECLARED` when the system did not
/// declare commands.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `out` is
/// NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_ctx_commands(
    ctx: *mut ecs_system_ctx,
    out: *mut *mut ecs_commands,
) -> ecs_status {
    const F: &str = "ecs_ctx_commands";
    call(F, || {
        // SAFETY: the caller's promise on both pointers.
        let ctx = unsafe { ctx_arg(ctx, F) }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        // Checks the declaration (the buffer itself is borrowed per call).
        drop(ctx.context().commands().map_err(Failure::from)?);
        // Never written through: the handle is only read.
        let commands = std::ptr::from_ref(&ctx.commands).cast_mut();
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, commands, F, "out") }
    })
}

/// Records the spawn of an entity with no components and writes its
/// handle to `*out`: usable at once in this buffer's later commands, alive
/// once the buffer is applied. The handle is final, wherever it is
/// stored: taken from the buffer's reserve of handles (refilled between
/// waves in a fixed order) or, past the reserve, from fresh slots that
/// depend only on the wave's layout and this buffer's own spawn count, so
/// ids do not depend on thread timing.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`.
///
/// # Safety
///
/// `commands` is NULL or from `ecs_ctx_commands` of the running system;
/// `out` is NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_commands_spawn(
    commands: *mut ecs_commands,
    out: *mut ecs_entity,
) -> ecs_status {
    const F: &str = "ecs_commands_spawn";
    call(F, || {
        // SAFETY: the caller's promise on both pointers.
        let commands = unsafe { commands_arg(commands, F) }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        let spawned = commands
            .context()
            .commands()
            .map_err(Failure::from)?
            .spawn_empty();
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, spawned.to_bits(), F, "out") }
    })
}

/// Records the despawn of `entity` (skipped when it is dead by then).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_STALE_ENTITY` for a handle that can
/// never be alive (generation 0).
///
/// # Safety
///
/// `commands` is NULL or from `ecs_ctx_commands` of the running system.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_commands_despawn(
    commands: *mut ecs_commands,
    entity: ecs_entity,
) -> ecs_status {
    const F: &str = "ecs_commands_despawn";
    call(F, || {
        // SAFETY: the caller's promise on `commands`.
        let commands = unsafe { commands_arg(commands, F) }?;
        let target = self::entity(entity, F)?;
        commands
            .context()
            .commands()
            .map_err(Failure::from)?
            .despawn(target);
        Ok(())
    })
}

/// Records the insertion of component `id` on `entity`, copying the
/// component's size in bytes from `value` now. If the command is never
/// applied (the entity died first, the tick failed, or the memory for the
/// value cannot be had when it is applied), the copy is dropped with the
/// component's destructor.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_STALE_ENTITY` (generation 0);
/// `ECS_ERR_UNKNOWN_COMPONENT`; `ECS_ERR_LIMIT` when the buffer cannot get
/// the memory for the copy (nothing is read from `value` then, and it
/// stays the caller's).
///
/// # Safety
///
/// `commands` is NULL or from `ecs_ctx_commands` of the running system;
/// `value` is valid for reads of the component's size and holds a valid
/// value, whose ownership moves to the buffer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_commands_insert(
    commands: *mut ecs_commands,
    entity: ecs_entity,
    id: ecs_component_id,
    value: *const c_void,
) -> ecs_status {
    const F: &str = "ecs_commands_insert";
    call(F, || {
        // SAFETY: the caller's promise on `commands`.
        let commands = unsafe { commands_arg(commands, F) }?;
        let target = self::entity(entity, F)?;
        let context = commands.context();
        let component = decode(commands.tag, id, F)?;
        let info = context.component_info(component).ok_or_else(|| {
            Failure::new(
                crate::status::ECS_ERR_UNKNOWN_COMPONENT,
                format!("{F}: no component with id {id} is registered in this engine"),
            )
        })?;
        if value.is_null() {
            return Err(Failure::null(F, "value"));
        }
        let mut buffer = context.commands().map_err(Failure::from)?;
        // Room for the copy first: a size the allocator cannot give is
        // refused here, before anything is read from `value`.
        buffer
            .try_reserve_raw(info)
            .map_err(|e| Failure::registry(F, &e))?;
        // SAFETY: `value` is non-null and readable for the component's size
        // (the C caller's promise); any byte is a valid `MaybeUninit<u8>`,
        // and the slice lives only for this call.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                value.cast::<std::mem::MaybeUninit<u8>>(),
                info.layout().size(),
            )
        };
        // SAFETY: `info` is the component's own; `bytes` hold a valid value
        // of it whose ownership moves to the buffer (the C caller's
        // promise); the buffer copies it now.
        let value = unsafe { RawComponent::new(component, info, bytes) };
        buffer.insert_raw(target, value);
        Ok(())
    })
}

/// Records the removal of component `id` from `entity`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_STALE_ENTITY` (generation 0);
/// `ECS_ERR_UNKNOWN_COMPONENT`.
///
/// # Safety
///
/// `commands` is NULL or from `ecs_ctx_commands` of the running system.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_commands_remove(
    commands: *mut ecs_commands,
    entity: ecs_entity,
    id: ecs_component_id,
) -> ecs_status {
    const F: &str = "ecs_commands_remove";
    call(F, || {
        // SAFETY: the caller's promise on `commands`.
        let commands = unsafe { commands_arg(commands, F) }?;
        let target = self::entity(entity, F)?;
        let context = commands.context();
        let component = decode(commands.tag, id, F)?;
        if context.component_info(component).is_none() {
            return Err(Failure::new(
                crate::status::ECS_ERR_UNKNOWN_COMPONENT,
                format!("{F}: no component with id {id} is registered in this engine"),
            ));
        }
        context
            .commands()
            .map_err(Failure::from)?
            .remove_by_id(target, component);
        Ok(())
    })
}
