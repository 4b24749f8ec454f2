//! Snapshots from C: `ecs_engine_save` writes a whole engine to bytes
//! (`ecs_snapshot`'s `Snapshots::save_engine`), `ecs_engine_load` reads
//! them back into an engine built the same way (`load_engine`).
//!
//! What a snapshot holds: the entities (handles, generations, the free
//! queue), the values of every component declared savable
//! (`ecs_component_desc.savable`, saved by their bytes under their
//! registered names), the hierarchy and the disabled marker, the tick
//! counter, the systems' progress (startup systems run or not), every
//! command buffer's reserve of entity handles, so the next spawns after
//! a load are the ones the saved engine would have made, the bytes of
//! the C resources (`ecs_resource_desc.savable`) and the events in flight
//! on the C event channels with every reader's cursor (`c_state.rs`).
//!
//! Nothing is left out silently: a save refuses an engine in which a
//! component not declared savable has values and an engine with a C
//! resource not declared savable (its bytes may not be plain data); a
//! load refuses the same engines, and a snapshot whose resources or
//! channels differ from the engine's, so a loaded world never mixes with
//! state it does not replace.

use std::any::TypeId;

use ::ecs_engine::{ChildOf, Children, ComponentId, Disabled, Registry};
use ecs_snapshot::{Format, SnapshotError, Snapshots};

use crate::boundary::{arg, call, call_value, slice_arg};
use crate::engine::{EngineState, ecs_engine};
use crate::status::{ECS_ERR_INVALID_ARGUMENT, ECS_ERR_SNAPSHOT, Failure, ecs_status};

mod c_state;

use c_state::CState;

/// The format of a snapshot: `ECS_SNAPSHOT_POSTCARD` or
/// `ECS_SNAPSHOT_JSON`.
pub type ecs_snapshot_format = u32;

/// Compact binary (postcard): the smaller and faster format.
pub const ECS_SNAPSHOT_POSTCARD: ecs_snapshot_format = 0;
/// Readable JSON: for debugging and diffs; larger and slower.
pub const ECS_SNAPSHOT_JSON: ecs_snapshot_format = 1;

/// `format` as the snapshot crate's, or an invalid-argument failure.
fn format(format: ecs_snapshot_format, function: &str) -> Result<Format, Failure> {
    match format {
        ECS_SNAPSHOT_POSTCARD => Ok(Format::Postcard),
        ECS_SNAPSHOT_JSON => Ok(Format::Json),
        other => Err(Failure::new(
            ECS_ERR_INVALID_ARGUMENT,
            format!(
                "{function}: format {other} is not ECS_SNAPSHOT_POSTCARD (0) or \
                 ECS_SNAPSHOT_JSON (1)"
            ),
        )),
    }
}

/// A snapshot refusal, `ECS_ERR_SNAPSHOT`.
fn refused(function: &str, why: impl std::fmt::Display) -> Failure {
    Failure::new(ECS_ERR_SNAPSHOT, format!("{function}: {why}"))
}

/// Refuses an engine with C resources not declared savable: a snapshot
/// holds only plain data.
fn savable_resources(engine: &EngineState, function: &str) -> Result<(), Failure> {
    let names = engine.resources.unsavable();
    if names.is_empty() {
        return Ok(());
    }
    Err(refused(
        function,
        format!(
            "the engine has {} resource(s) not declared savable (`{}`): a snapshot holds only \
             resources registered with `ecs_resource_desc.savable`, so this engine can be \
             neither saved nor loaded",
            names.len(),
            names.join("`, `")
        ),
    ))
}

/// The Rust component types a C engine holds (the hierarchy and the
/// disabled marker), which a snapshot saves.
fn saved_rust_type(id: TypeId) -> bool {
    id == TypeId::of::<Disabled>()
        || id == TypeId::of::<ChildOf>()
        || id == TypeId::of::<Children>()
}

/// The types of a snapshot of `registry`: the hierarchy, the disabled
/// marker and every run-time component that `keep` accepts (by its
/// info), by name. Any other component type with values is refused
/// (`ECS_ERR_SNAPSHOT`, naming it), before anything is saved or loaded.
fn snapshots_for(
    registry: &Registry,
    function: &str,
    keep: impl Fn(&::ecs_engine::ComponentInfo) -> bool,
) -> Result<Snapshots, Failure> {
    let mut snapshots = Snapshots::new();
    snapshots.register_hierarchy();
    snapshots
        .register_disabled()
        .map_err(|e| refused(function, e))?;
    for index in 0..registry.component_types() {
        let id = ComponentId::from_u32(u32::try_from(index).unwrap_or(u32::MAX));
        let Some(info) = registry.component_info(id) else {
            continue;
        };
        if info.is_runtime() && keep(info) {
            snapshots
                .register_runtime(info.name())
                .map_err(|e| refused(function, e))?;
            continue;
        }
        let count = registry.count_id(id);
        if count == 0 || info.type_id().is_some_and(saved_rust_type) {
            continue;
        }
        let why = if info.is_runtime() && info.drop_fn().is_some() {
            "it has a destructor"
        } else if info.is_runtime() {
            "it was registered without `savable` in ecs_component_desc"
        } else {
            "it is a Rust type the C API does not save"
        };
        return Err(refused(
            function,
            format!(
                "component `{}` has {count} value(s) but is not savable ({why}): remove its \
                 values first, or register it as savable",
                info.name()
            ),
        ));
    }
    Ok(snapshots)
}

/// Saves `engine` between ticks and writes a buffer of the bytes to
/// `*out_bytes` and its length to `*out_len`. Free the buffer with
/// `ecs_snapshot_free(bytes, len)`; it belongs to the caller and does not
/// depend on the engine (it may outlive it, and be freed on any thread).
///
/// The snapshot holds the entities (handles, generations and the free
/// queue), the values of every component registered with
/// `ecs_component_desc.savable` (under its name, as their bytes in the
/// machine's byte order), the hierarchy (parents, children and their
/// order), which entities are disabled, the tick counter, whether the
/// startup systems have run, each system's reserve of entity handles,
/// the bytes of every resource (all must be registered with
/// `ecs_resource_desc.savable`), the events in flight on every event
/// channel, with each reader's cursor, and change detection: the change
/// ticks and removal log of every component registered with
/// `ECS_COMPONENT_TRACK_CHANGES`, and each system's last run and removal cursors. It
/// holds nothing of the systems' C user data.
///
/// The schedule must be built (`ecs_engine_build`, or a tick): the
/// snapshot holds the systems' progress. The engine is not changed.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, out_bytes, out_len);
/// `ECS_ERR_INVALID_ARGUMENT` for an unknown `format`;
/// `ECS_ERR_WRONG_STATE` during a tick (from a system), from another
/// thread at the same time, or before the schedule is built; the build's
/// status (`ECS_ERR_SCHEDULE`) after a failed build; `ECS_ERR_SNAPSHOT`
/// when a component that is not savable has values (the message names it)
/// or the engine has a resource not declared savable (the messages name
/// them). On failure
/// `*out_bytes` is NULL and `*out_len` 0 (when those pointers are not
/// NULL) and nothing is allocated.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `out_bytes` and `out_len` are NULL
/// or valid for writes. Threading: as every engine call, one thread at a
/// time, between ticks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_engine_save(
    engine: *const ecs_engine,
    format: ecs_snapshot_format,
    out_bytes: *mut *mut u8,
    out_len: *mut usize,
) -> ecs_status {
    const F: &str = "ecs_engine_save";
    call(F, || {
        if out_bytes.is_null() {
            return Err(Failure::null(F, "out_bytes"));
        }
        if out_len.is_null() {
            return Err(Failure::null(F, "out_len"));
        }
        // SAFETY: both non-null and valid for writes (the caller's
        // promise): a failure below leaves them NULL and 0.
        unsafe {
            out_bytes.write(std::ptr::null_mut());
            out_len.write(0);
        }
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.lock(F)?;
        let format = self::format(format, F)?;
        savable_resources(&engine, F)?;
        let mut snapshots = snapshots_for(engine.registry(), F, |info| info.is_savable())?;
        CState::register(&mut snapshots, &engine, F)?;
        engine.built_only(F)?;
        let state = CState::of(&engine, F)?;
        engine.registry_mut().insert_resource(state);
        let saved = snapshots.save_engine(engine.built_only(F)?, format);
        engine.registry_mut().remove_resource::<CState>();
        let bytes = saved.map_err(|e| save_error(F, &e))?.into_boxed_slice();
        let len = bytes.len();
        let bytes = Box::into_raw(bytes).cast::<u8>();
        // SAFETY: both non-null and valid for writes (checked above).
        unsafe {
            out_bytes.write(bytes);
            out_len.write(len);
        }
        Ok(())
    })
}

/// A save's refusal.
fn save_error(function: &str, error: &SnapshotError) -> Failure {
    refused(function, format!("the engine was not saved: {error}"))
}

/// Frees a buffer from `ecs_engine_save`, given with the length it wrote.
/// NULL is a no-op. Any thread may call it; the engine that made the
/// buffer need not be alive.
///
/// # Safety
///
/// `bytes` is NULL or a buffer from `ecs_engine_save` not freed yet, and
/// `len` the length that call wrote; `bytes` is invalid afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_snapshot_free(bytes: *mut u8, len: usize) {
    call_value("ecs_snapshot_free", (), || {
        if bytes.is_null() {
            return;
        }
        let slice = std::ptr::slice_from_raw_parts_mut(bytes, len);
        // SAFETY: made by `Box::into_raw` of a `Box<[u8]>` of `len` bytes in
        // `ecs_engine_save` and not freed yet (the caller's promise).
        drop(unsafe { Box::from_raw(slice) });
    });
}

/// Loads a snapshot from `ecs_engine_save` (`len` bytes at `bytes`, in
/// `format`) into `engine`, between ticks: every entity is replaced by
/// the snapshot's (every value the engine had, savable or not, is dropped,
/// destructors called), the savable components' values, the hierarchy
/// and the disabled entities are put back, then the tick counter, the
/// systems' progress and their reserves of entity handles, so the next
/// ticks and spawns go on as they would have in the saved engine.
///
/// `engine` must be built the same way as the saved one: its schedule
/// built (`ecs_engine_build`) with the same systems, in the same order,
/// and every component that has values in the snapshot registered
/// savable, under the same name, with the same size (ids may differ:
/// components are matched by name; look them up with
/// `ecs_component_lookup`). Components the snapshot has no values of are
/// empty afterwards. The bytes are only read; the caller keeps them.
///
/// Everything is decoded and checked before the engine changes: on any
/// failure it is exactly as before.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine; bytes when `len` is not 0);
/// `ECS_ERR_INVALID_ARGUMENT` for an unknown `format`;
/// `ECS_ERR_WRONG_STATE` during a tick (from a system), from another
/// thread at the same time, or before the schedule is built; the build's
/// status (`ECS_ERR_SCHEDULE`) after a failed build; `ECS_ERR_SNAPSHOT`
/// when the bytes do not load into this engine (corrupt or truncated,
/// saved in the other format or by another format version, a component
/// missing here, not savable or of another size, other systems, other
/// resources or event channels: names, order and sizes must be this
/// engine's), or when the engine has a resource not declared savable; the
/// message names what and where. The resources' bytes and the channels'
/// events and cursors are replaced with the snapshot's.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `bytes` is NULL or valid for reads
/// of `len` bytes during the call. Threading: as every engine call, one
/// thread at a time, between ticks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_engine_load(
    engine: *mut ecs_engine,
    format: ecs_snapshot_format,
    bytes: *const u8,
    len: usize,
) -> ecs_status {
    const F: &str = "ecs_engine_load";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.lock(F)?;
        // SAFETY: NULL or valid for `len` reads, by the caller's promise.
        let bytes = unsafe { slice_arg(bytes, len, F, "bytes") }?;
        let format = self::format(format, F)?;
        savable_resources(&engine, F)?;
        // Every run-time component by name, savable or not: an entry for
        // one that is not savable here is refused naming it.
        let mut snapshots = snapshots_for(engine.registry(), F, |_| true)?;
        CState::register(&mut snapshots, &engine, F)?;
        let built = engine.built_only(F)?;
        snapshots
            .load_engine(built, bytes, format)
            .map_err(|e| refused(F, format!("nothing was loaded: {}", c_state::explain(&e))))?;
        // Checked against the engine's resources and channels before the
        // load changed anything (`CState::register`).
        if let Some(state) = engine.registry_mut().remove_resource::<CState>() {
            state.restore(&mut engine, F)?;
        }
        // Events sent before the next tick count their window from the
        // loaded tick, not the one the engine had reached.
        let last = engine
            .built_if_any()
            .map_or(0, |built| built.ticks().saturating_sub(1));
        scheduler::RawEvents::set_tick_number(engine.registry_mut(), last);
        Ok(())
    })
}
