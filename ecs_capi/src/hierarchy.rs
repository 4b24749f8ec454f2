//! The hierarchy (parents and children) and disabled entities, between
//! ticks on the engine and inside systems through their command buffer.
//!
//! The rules are the Rust registry's: a child has one parent and a parent
//! lists its children in the order they were attached; a parent cannot be
//! set below its own subtree (a cycle); despawning recursively removes an
//! entity and its whole subtree. A disabled entity stays alive, keeps its
//! components and its place in the hierarchy, but views (`ecs_view_each`,
//! `ecs_view_each_chunk`) skip it until it is enabled again.

use ::ecs_engine::{EcsError, Entity, Registry};

use crate::boundary::{arg, call, list_args, write_list, write_out};
use crate::context::ecs_commands;
use crate::engine::{ECS_ENTITY_NULL, ecs_engine, ecs_entity, entity};
use crate::status::{Failure, ecs_status};

/// Writes `value` through `out` when `out` is not NULL (an optional
/// out-parameter).
///
/// # Safety
///
/// `out` is NULL or valid for writes of a `T`.
unsafe fn write_optional<T>(out: *mut T, value: T) {
    if !out.is_null() {
        // SAFETY: non-null and valid for writes by the caller's promise.
        unsafe { out.write(value) };
    }
}

/// A stale-entity failure unless `entity` is alive in `registry`.
fn alive(registry: &Registry, entity: Entity, function: &str) -> Result<(), Failure> {
    if registry.is_alive(entity) {
        Ok(())
    } else {
        Err(Failure::registry(
            function,
            &EcsError::NoSuchEntity { entity },
        ))
    }
}

/// The handle of an optional entity: `ECS_ENTITY_NULL` for none.
fn bits(entity: Option<Entity>) -> ecs_entity {
    entity.map_or(ECS_ENTITY_NULL, Entity::to_bits)
}

/// Runs `change` on the registry of the C caller's `engine` with `entity`,
/// as `function`, and writes what it returns through the optional `out`.
///
/// # Safety
///
/// `engine` is NULL or a live engine used by no other thread; `out` is
/// NULL or valid for writes of a `T`.
unsafe fn change_entity<T>(
    engine: *mut ecs_engine,
    entity: ecs_entity,
    out: *mut T,
    function: &str,
    change: impl FnOnce(&mut Registry, Entity) -> Result<T, EcsError>,
) -> ecs_status {
    call(function, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, function, "engine") }?;
        let mut engine = engine.world(function)?;
        let target = self::entity(entity, function)?;
        let value =
            change(engine.registry_mut(), target).map_err(|e| Failure::registry(function, &e))?;
        // SAFETY: NULL or valid for writes, by the C caller's promise.
        unsafe { write_optional(out, value) };
        Ok(())
    })
}

/// Makes `parent` the parent of `child` (detaching it from its old parent
/// first): `child` goes last in `parent`'s children. Setting the parent it
/// already has changes nothing (it keeps its place).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_STALE_ENTITY` when either is not
/// alive; `ECS_ERR_INVALID_ARGUMENT` when `parent` is `child` or one of its
/// descendants (a cycle). Nothing changes on failure.
///
/// # Safety
///
/// `engine` is NULL or a live engine used by no other thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_set_parent(
    engine: *mut ecs_engine,
    child: ecs_entity,
    parent: ecs_entity,
) -> ecs_status {
    const F: &str = "ecs_set_parent";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.world(F)?;
        let (child, parent) = (entity(child, F)?, entity(parent, F)?);
        engine
            .registry_mut()
            .set_parent(child, parent)
            .map_err(|e| Failure::registry(F, &e))
    })
}

/// Detaches `child` from its parent: it becomes a root, keeping its own
/// subtree. Writes the parent it had to `*old_parent` (`ECS_ENTITY_NULL`
/// when it was a root) unless `old_parent` is NULL.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine); `ECS_ERR_STALE_ENTITY`.
///
/// # Safety
///
/// `engine` is NULL or a live engine used by no other thread;
/// `old_parent` is NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_remove_parent(
    engine: *mut ecs_engine,
    child: ecs_entity,
    old_parent: *mut ecs_entity,
) -> ecs_status {
    // SAFETY: forwarded promises.
    unsafe {
        change_entity(
            engine,
            child,
            old_parent,
            "ecs_remove_parent",
            |r, child| r.remove_parent(child).map(bits),
        )
    }
}

/// Writes the parent of `entity` to `*out`: `ECS_ENTITY_NULL` for a root.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_STALE_ENTITY`.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `out` is NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_parent(
    engine: *const ecs_engine,
    entity: ecs_entity,
    out: *mut ecs_entity,
) -> ecs_status {
    const F: &str = "ecs_parent";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.world(F)?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        let target = self::entity(entity, F)?;
        let registry = engine.registry();
        alive(registry, target, F)?;
        // SAFETY: non-null and valid for writes by the caller's promise.
        unsafe { write_out(out, bits(registry.parent(target)), F, "out") }
    })
}

/// Copies the children of `entity`, in the order they were attached, to
/// `out[0..capacity]`, and writes how many it has to `*len` (which may be
/// more than `capacity`: then only the first `capacity` are copied; call
/// again with a larger array). `out` may be NULL when `capacity` is 0, to
/// ask for the count alone.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, len, or out with a non-zero capacity);
/// `ECS_ERR_STALE_ENTITY`.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `out` is NULL or valid for writes of
/// `capacity` handles; `len` is NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_children(
    engine: *const ecs_engine,
    entity: ecs_entity,
    out: *mut ecs_entity,
    capacity: usize,
    len: *mut usize,
) -> ecs_status {
    const F: &str = "ecs_children";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.world(F)?;
        list_args(out, capacity, len, F)?;
        let target = self::entity(entity, F)?;
        let registry = engine.registry();
        alive(registry, target, F)?;
        let children = registry.children(target).iter().map(|c| c.to_bits());
        // SAFETY: the arguments were checked; the caller's promise on them.
        unsafe { write_list(out, capacity, len, children, F) }
    })
}

/// Despawns `entity` and its whole subtree (children, their children,
/// ...), detaching it from its parent first, and writes how many entities
/// were despawned to `*count` unless `count` is NULL.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine); `ECS_ERR_STALE_ENTITY` (nothing
/// changes).
///
/// # Safety
///
/// `engine` is NULL or a live engine used by no other thread; `count` is
/// NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_despawn_recursive(
    engine: *mut ecs_engine,
    entity: ecs_entity,
    count: *mut usize,
) -> ecs_status {
    // SAFETY: forwarded promises.
    unsafe {
        change_entity(engine, entity, count, "ecs_despawn_recursive", |r, e| {
            r.despawn_recursive(e)
        })
    }
}

/// Disables `root` and every descendant (as `ecs_disable` on each), and
/// writes how many were enabled before to `*count` unless it is NULL.
/// Entities attached to the subtree later are not disabled.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine); `ECS_ERR_STALE_ENTITY` (nothing
/// changes).
///
/// # Safety
///
/// `engine` is NULL or a live engine used by no other thread; `count` is
/// NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_disable_recursive(
    engine: *mut ecs_engine,
    root: ecs_entity,
    count: *mut usize,
) -> ecs_status {
    // SAFETY: forwarded promises.
    unsafe {
        change_entity(
            engine,
            root,
            count,
            "ecs_disable_recursive",
            Registry::disable_recursive,
        )
    }
}

/// Enables `root` and every descendant again, and writes how many were
/// disabled before to `*count` unless it is NULL.
///
/// # Errors
///
/// As `ecs_disable_recursive`.
///
/// # Safety
///
/// As `ecs_disable_recursive`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_enable_recursive(
    engine: *mut ecs_engine,
    root: ecs_entity,
    count: *mut usize,
) -> ecs_status {
    // SAFETY: forwarded promises.
    unsafe {
        change_entity(
            engine,
            root,
            count,
            "ecs_enable_recursive",
            Registry::enable_recursive,
        )
    }
}

/// Disables `entity`: it stays alive with its components, but views skip
/// it until `ecs_enable`. Writes `true` to `*changed` (unless NULL) when
/// it was enabled before.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine); `ECS_ERR_STALE_ENTITY`.
///
/// # Safety
///
/// `engine` is NULL or a live engine used by no other thread; `changed`
/// is NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_disable(
    engine: *mut ecs_engine,
    entity: ecs_entity,
    changed: *mut bool,
) -> ecs_status {
    // SAFETY: forwarded promises.
    unsafe { change_entity(engine, entity, changed, "ecs_disable", Registry::disable) }
}

/// Enables `entity` again: views visit it. Writes `true` to `*changed`
/// (unless NULL) when it was disabled before.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine); `ECS_ERR_STALE_ENTITY`.
///
/// # Safety
///
/// As `ecs_disable`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_enable(
    engine: *mut ecs_engine,
    entity: ecs_entity,
    changed: *mut bool,
) -> ecs_status {
    // SAFETY: forwarded promises.
    unsafe { change_entity(engine, entity, changed, "ecs_enable", Registry::enable) }
}

/// Writes whether `entity` is disabled to `*out`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_STALE_ENTITY`.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `out` is NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_is_disabled(
    engine: *const ecs_engine,
    entity: ecs_entity,
    out: *mut bool,
) -> ecs_status {
    const F: &str = "ecs_is_disabled";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.world(F)?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        let target = self::entity(entity, F)?;
        let registry = engine.registry();
        alive(registry, target, F)?;
        // SAFETY: non-null and valid for writes by the caller's promise.
        unsafe { write_out(out, registry.is_disabled(target), F, "out") }
    })
}

/// What a hierarchy or enable command records.
enum Record {
    SetParent(Entity),
    RemoveParent,
    DespawnRecursive,
    Disable,
    Enable,
    DisableRecursive,
    EnableRecursive,
}

/// Records `what` on `entity` in `commands`.
///
/// # Safety
///
/// `commands` is NULL or from `ecs_ctx_commands` of the running system.
unsafe fn record(
    commands: *mut ecs_commands,
    entity: ecs_entity,
    what: impl FnOnce(&str) -> Result<Record, Failure>,
    function: &str,
) -> ecs_status {
    call(function, || {
        // SAFETY: the caller's promise on `commands`.
        let commands = unsafe { crate::context::commands_arg(commands, function) }?;
        let target = self::entity(entity, function)?;
        let what = what(function)?;
        let mut buffer = commands.context().commands().map_err(Failure::from)?;
        match what {
            Record::SetParent(parent) => buffer.set_parent(target, parent),
            Record::RemoveParent => buffer.remove_parent(target),
            Record::DespawnRecursive => buffer.despawn_recursive(target),
            Record::Disable => buffer.disable(target),
            Record::Enable => buffer.enable(target),
            Record::DisableRecursive => buffer.disable_recursive(target),
            Record::EnableRecursive => buffer.enable_recursive(target),
        }
        Ok(())
    })
}

/// Records making `parent` the parent of `child`, applied after the
/// system's wave as `ecs_set_parent` (skipped when either is dead by then
/// or it would close a cycle). Handles from `ecs_commands_spawn` may be
/// used.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_STALE_ENTITY` for a handle that can
/// never be alive (generation 0); `ECS_ERR_UNDECLARED` when the system did
/// not declare commands.
///
/// # Safety
///
/// `commands` is NULL or from `ecs_ctx_commands` of the running system.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_commands_set_parent(
    commands: *mut ecs_commands,
    child: ecs_entity,
    parent: ecs_entity,
) -> ecs_status {
    const F: &str = "ecs_commands_set_parent";
    // SAFETY: forwarded promise on `commands`.
    unsafe {
        record(
            commands,
            child,
            |f| entity(parent, f).map(Record::SetParent),
            F,
        )
    }
}

/// Records detaching `child` from its parent (as `ecs_remove_parent`).
///
/// # Errors
///
/// As `ecs_commands_set_parent`.
///
/// # Safety
///
/// As `ecs_commands_set_parent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_commands_remove_parent(
    commands: *mut ecs_commands,
    child: ecs_entity,
) -> ecs_status {
    // SAFETY: forwarded promise on `commands`.
    unsafe {
        record(
            commands,
            child,
            |_| Ok(Record::RemoveParent),
            "ecs_commands_remove_parent",
        )
    }
}

/// Records despawning `entity` and its subtree (as
/// `ecs_despawn_recursive`; skipped when it is dead by then).
///
/// # Errors
///
/// As `ecs_commands_set_parent`.
///
/// # Safety
///
/// As `ecs_commands_set_parent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_commands_despawn_recursive(
    commands: *mut ecs_commands,
    entity: ecs_entity,
) -> ecs_status {
    // SAFETY: forwarded promise on `commands`.
    unsafe {
        record(
            commands,
            entity,
            |_| Ok(Record::DespawnRecursive),
            "ecs_commands_despawn_recursive",
        )
    }
}

/// Records disabling `entity` (as `ecs_disable`).
///
/// # Errors
///
/// As `ecs_commands_set_parent`.
///
/// # Safety
///
/// As `ecs_commands_set_parent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_commands_disable(
    commands: *mut ecs_commands,
    entity: ecs_entity,
) -> ecs_status {
    // SAFETY: forwarded promise on `commands`.
    unsafe {
        record(
            commands,
            entity,
            |_| Ok(Record::Disable),
            "ecs_commands_disable",
        )
    }
}

/// Records enabling `entity` again (as `ecs_enable`).
///
/// # Errors
///
/// As `ecs_commands_set_parent`.
///
/// # Safety
///
/// As `ecs_commands_set_parent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_commands_enable(
    commands: *mut ecs_commands,
    entity: ecs_entity,
) -> ecs_status {
    // SAFETY: forwarded promise on `commands`.
    unsafe {
        record(
            commands,
            entity,
            |_| Ok(Record::Enable),
            "ecs_commands_enable",
        )
    }
}

/// Records disabling `entity` and its whole subtree (as
/// `ecs_disable_recursive`, when the buffer is applied).
///
/// # Errors
///
/// As `ecs_commands_set_parent`.
///
/// # Safety
///
/// As `ecs_commands_set_parent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_commands_disable_recursive(
    commands: *mut ecs_commands,
    entity: ecs_entity,
) -> ecs_status {
    // SAFETY: forwarded promise on `commands`.
    unsafe {
        record(
            commands,
            entity,
            |_| Ok(Record::DisableRecursive),
            "ecs_commands_disable_recursive",
        )
    }
}

/// Records enabling `entity` and its whole subtree again (as
/// `ecs_enable_recursive`, when the buffer is applied).
///
/// # Errors
///
/// As `ecs_commands_set_parent`.
///
/// # Safety
///
/// As `ecs_commands_set_parent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_commands_enable_recursive(
    commands: *mut ecs_commands,
    entity: ecs_entity,
) -> ecs_status {
    // SAFETY: forwarded promise on `commands`.
    unsafe {
        record(
            commands,
            entity,
            |_| Ok(Record::EnableRecursive),
            "ecs_commands_enable_recursive",
        )
    }
}
