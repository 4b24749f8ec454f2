//! Entities and their components, from outside systems (between ticks).

use std::ffi::c_void;

use ::ecs_engine::EcsError;
use ecs_runtime::checksum::world_checksum;

use crate::boundary::{arg, call, call_value, list_args, slice_arg, write_list, write_out};
use crate::component::{component_name, ecs_component_id, known_id};
use crate::engine::{ecs_engine, ecs_entity, entity};
use crate::status::{ECS_ERR_MISSING_COMPONENT, Failure, ecs_status};

/// Spawns an entity with no components and writes its handle to `*out`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_LIMIT` when no more entities fit.
///
/// # Safety
///
/// `engine` is NULL or a live engine used by no other thread; `out` is
/// NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_spawn(engine: *mut ecs_engine, out: *mut ecs_entity) -> ecs_status {
    const F: &str = "ecs_spawn";
    call(F, || {
        // SAFETY: the caller's promise on both pointers.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.world(F)?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        let spawned = engine
            .registry_mut()
            .try_spawn(())
            .map_err(|e| Failure::registry(F, &e))?;
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, spawned.to_bits(), F, "out") }
    })
}

/// Despawns `entity`, dropping all its components.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_STALE_ENTITY` when it is not alive.
///
/// # Safety
///
/// `engine` is NULL or a live engine used by no other thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_despawn(engine: *mut ecs_engine, entity: ecs_entity) -> ecs_status {
    const F: &str = "ecs_despawn";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.world(F)?;
        let target = self::entity(entity, F)?;
        engine
            .registry_mut()
            .despawn(target)
            .map_err(|e| Failure::registry(F, &e))
    })
}

/// `true` when `entity` is alive; `false` for a dead or null entity, a NULL
/// engine, or an engine busy with another call (a tick).
///
/// # Safety
///
/// `engine` is NULL or a live engine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_is_alive(engine: *const ecs_engine, entity: ecs_entity) -> bool {
    call_value("ecs_is_alive", false, || {
        // SAFETY: the caller's promise on `engine`.
        let Some(engine) = (unsafe { engine.as_ref() }) else {
            return false;
        };
        let Ok(engine) = engine.world("ecs_is_alive") else {
            return false;
        };
        ::ecs_engine::Entity::from_bits(entity).is_some_and(|e| engine.registry().is_alive(e))
    })
}

/// Writes the number of live entities to `*out`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`.
///
/// # Safety
///
/// Pointers are NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_entity_count(
    engine: *const ecs_engine,
    out: *mut usize,
) -> ecs_status {
    const F: &str = "ecs_entity_count";
    call(F, || {
        // SAFETY: the caller's promise on both pointers.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.world(F)?;
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, engine.registry().len(), F, "out") }
    })
}

/// Copies the live entities, in increasing handle order (the order
/// `ecs_world_checksum` visits them), to `out[0..capacity]`, and writes how
/// many there are to `*len` (which may be more than `capacity`: then only
/// the first `capacity` are copied; call again with a larger array). `out`
/// may be NULL when `capacity` is 0, to ask for the count alone. Disabled
/// entities are live and listed. Takes O(n log n) for n live entities.
///
/// Threading: an engine call like any other (one thread at a time; not
/// during a tick: `ECS_ERR_WRONG_STATE`).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, len, or out with a non-zero capacity).
///
/// # Safety
///
/// `engine` is NULL or a live engine; `out` is NULL or valid for writes of
/// `capacity` handles; `len` is NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_entities(
    engine: *const ecs_engine,
    out: *mut ecs_entity,
    capacity: usize,
    len: *mut usize,
) -> ecs_status {
    const F: &str = "ecs_entities";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.world(F)?;
        list_args(out, capacity, len, F)?;
        let mut live: Vec<ecs_entity> = engine
            .registry()
            .entities()
            .iter()
            .map(|e| e.to_bits())
            .collect();
        live.sort_unstable();
        // SAFETY: the arguments were checked; the caller's promise on them.
        unsafe { write_list(out, capacity, len, live.into_iter(), F) }
    })
}

/// Inserts component `id` on `entity`, copying the component's size in
/// bytes from `value` (which need not be aligned). An old value is dropped
/// first (its destructor called). The engine owns the copy; on failure the
/// caller still owns `value`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, or value, even for a size-0 component);
/// `ECS_ERR_STALE_ENTITY`; `ECS_ERR_UNKNOWN_COMPONENT`; `ECS_ERR_LIMIT`
/// when the allocator cannot give the room for the value (a component too
/// large for the memory or address space left). Nothing is read from
/// `value` on failure, and the world is unchanged.
///
/// # Safety
///
/// `engine` is NULL or a live engine used by no other thread; `value` is
/// valid for reads of the component's size and holds a valid value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_insert(
    engine: *mut ecs_engine,
    entity: ecs_entity,
    id: ecs_component_id,
    value: *const c_void,
) -> ecs_status {
    const F: &str = "ecs_insert";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.world(F)?;
        let target = self::entity(entity, F)?;
        let component = known_id(engine.tag(), engine.registry(), id, F)?;
        if value.is_null() {
            return Err(Failure::null(F, "value"));
        }
        // SAFETY: `value` holds a valid value of the component's size (the
        // caller's promise); the registry copies it.
        unsafe {
            engine
                .registry_mut()
                .insert_raw(target, component, value.cast())
                .map_err(|e| Failure::registry(F, &e))
        }
    })
}

/// Writes a pointer to `entity`'s component `id` to `*out`. It is valid
/// until the next structural change of this engine (spawn, despawn,
/// insert, remove, tick, `ecs_engine_load`, `ecs_engine_restore_state`),
/// and, in an exclusive system, until its callback returns; it may be
/// written through: for a component registered with
/// `ECS_COMPONENT_TRACK_CHANGES`, the value counts as changed (test
/// presence with `ecs_has`, which marks nothing).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_STALE_ENTITY`;
/// `ECS_ERR_UNKNOWN_COMPONENT`; `ECS_ERR_MISSING_COMPONENT`.
///
/// # Safety
///
/// Pointers are NULL or valid; the engine is used by no other thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_get(
    engine: *mut ecs_engine,
    entity: ecs_entity,
    id: ecs_component_id,
    out: *mut *mut c_void,
) -> ecs_status {
    const F: &str = "ecs_get";
    call(F, || {
        // SAFETY: the caller's promise on the pointers.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.world(F)?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        let target = self::entity(entity, F)?;
        let component = known_id(engine.tag(), engine.registry(), id, F)?;
        let value = engine
            .registry_mut()
            .get_raw_mut(target, component)
            .map_err(|e| Failure::registry(F, &e))?;
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, value.as_ptr().cast(), F, "out") }
    })
}

/// Removes `entity`'s component `id`, calling its destructor.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_STALE_ENTITY`;
/// `ECS_ERR_UNKNOWN_COMPONENT`; `ECS_ERR_MISSING_COMPONENT` when it had
/// none.
///
/// # Safety
///
/// `engine` is NULL or a live engine used by no other thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_remove(
    engine: *mut ecs_engine,
    entity: ecs_entity,
    id: ecs_component_id,
) -> ecs_status {
    const F: &str = "ecs_remove";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.world(F)?;
        let target = self::entity(entity, F)?;
        let component = known_id(engine.tag(), engine.registry(), id, F)?;
        match engine.registry_mut().remove_by_id(target, component) {
            Ok(true) => Ok(()),
            Ok(false) => Err(Failure::new(
                ECS_ERR_MISSING_COMPONENT,
                format!(
                    "{F}: entity {target} has no component `{}`",
                    component_name(engine.registry(), component)
                ),
            )),
            Err(e) => Err(Failure::registry(F, &e)),
        }
    })
}

/// Writes whether `entity` has component `id` to `*out`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_STALE_ENTITY`;
/// `ECS_ERR_UNKNOWN_COMPONENT`.
///
/// # Safety
///
/// Pointers are NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_has(
    engine: *const ecs_engine,
    entity: ecs_entity,
    id: ecs_component_id,
    out: *mut bool,
) -> ecs_status {
    const F: &str = "ecs_has";
    call(F, || {
        // SAFETY: the caller's promise on the pointers.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.world(F)?;
        let target = self::entity(entity, F)?;
        let component = known_id(engine.tag(), engine.registry(), id, F)?;
        if !engine.registry().is_alive(target) {
            return Err(Failure::registry(
                F,
                &EcsError::NoSuchEntity { entity: target },
            ));
        }
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, engine.registry().has_id(target, component), F, "out") }
    })
}

/// Writes the world checksum over components `ids` to `*out`: FNV-1a, 64
/// bits, over the live entity count (u64, little-endian), then, for each
/// live entity in increasing handle order, its handle (u64 LE) and, for
/// each id in order, a presence byte (0 or 1) followed, when present, by
/// the component's bytes. It is the Rust runtime's world checksum (the
/// same function computes it), the one the simulation harness prints: a
/// component of two `float`s hashes as the harness's `Position`, so a
/// world built through this API can be compared with the harness's.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_UNKNOWN_COMPONENT`.
///
/// # Safety
///
/// Pointers are NULL or valid; `ids` holds `ids_len` ids. Components must
/// hold no padding bytes (their padding would be hashed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_world_checksum(
    engine: *const ecs_engine,
    ids: *const ecs_component_id,
    ids_len: usize,
    out: *mut u64,
) -> ecs_status {
    const F: &str = "ecs_world_checksum";
    call(F, || {
        // SAFETY: the caller's promise on the pointers.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.world(F)?;
        // SAFETY: NULL or valid for that many reads, by the caller's promise.
        let ids = unsafe { slice_arg(ids, ids_len, F, "ids") }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        let registry = engine.registry();
        let components = ids
            .iter()
            .map(|&id| {
                let component = known_id(engine.tag(), engine.registry(), id, F)?;
                let size = registry
                    .component_info(component)
                    .map_or(0, |info| info.layout().size());
                Ok((component, size))
            })
            .collect::<Result<Vec<_>, Failure>>()?;
        let hash = world_checksum(registry, |registry, entity, h| {
            for &(component, size) in &components {
                h.optional(registry.get_raw(entity, component).ok(), |h, value| {
                    // SAFETY: the registry holds a value of `size` bytes
                    // there, every byte initialized (the caller promises
                    // components without padding); nothing changes it
                    // during the call.
                    let bytes =
                        unsafe { std::slice::from_raw_parts(value.as_ptr().cast_const(), size) };
                    h.bytes(bytes);
                });
            }
        });
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, hash, F, "out") }
    })
}
