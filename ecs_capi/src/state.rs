//! In-memory states from C, for rollback and replays: `ecs_engine_save_state`
//! copies a whole engine into an `ecs_state` (the facade's
//! `Engine::save_state_into`: no encoding, and from the second save into
//! the same state its memory is reused), `ecs_engine_restore_state` makes
//! the engine what it was at that save.
//!
//! A state holds what a snapshot holds (`snapshot.rs`) and more, since it
//! never leaves the process: the values of every component (savable or
//! not; an engine with a component registered with a destructor cannot be
//! saved in memory), the bytes of every C resource (savable or
//! not) and the events in flight on every channel with each reader's
//! cursor, beside the entities, the hierarchy, the disabled marks, the
//! change ticks, the systems' progress, the command buffers' reserves and
//! the tick counter.

use std::alloc::Layout;
use std::mem::MaybeUninit;

use ::ecs_engine::{ComponentId, Registry};
use scheduler::{RawEventId, RawEvents};

use crate::boundary::{arg, call, write_out};
use crate::engine::ecs_engine;
use crate::status::{ECS_ERR_SNAPSHOT, ECS_ERR_WRONG_STATE, Failure, ecs_status};

/// A saved engine, in memory: made empty by `ecs_state_create`, filled by
/// `ecs_engine_save_state`, read by `ecs_engine_restore_state`, freed by
/// `ecs_state_destroy`. Opaque to C. It belongs to no engine: a state
/// saved from one engine restores into any engine built the same way
/// (the same components, resources, event channels and systems,
/// registered in the same order). One call at a time may use a state.
#[derive(Debug, Default)]
pub struct ecs_state {
    /// The facade's engine state; `None` until the first save.
    engine: Option<ecs_runtime::EngineState>,
    /// The C resources' bytes, by name, in registration order.
    resources: Vec<(String, Vec<MaybeUninit<u8>>)>,
    /// The event channels' names and layouts, in registration order.
    channels: Vec<(String, Layout)>,
    /// The run-time components' names and layouts, in registration order.
    components: Vec<(String, Layout)>,
}

/// The registry's run-time components (those registered from C, and the
/// resources' scheduling keys): names and layouts, in registration order.
/// The Rust types a C engine holds (the hierarchy, the disabled marker)
/// are registered when first used, so they may differ between engines
/// built the same way: the registry's restore handles them.
fn components(registry: &Registry) -> Vec<(String, Layout)> {
    (0..registry.component_types())
        .filter_map(|index| {
            let id = ComponentId::from_u32(u32::try_from(index).ok()?);
            let info = registry.component_info(id)?;
            info.is_runtime()
                .then(|| (info.name().to_owned(), info.layout()))
        })
        .collect()
}

/// `Err` naming both lists unless `ours` and `theirs` (the state's) are
/// the same, for `what` ("components", "event channels").
fn same_list(
    what: &str,
    theirs: &[(String, Layout)],
    ours: &[(String, Layout)],
) -> Result<(), String> {
    if theirs == ours {
        return Ok(());
    }
    let names = |list: &[(String, Layout)]| {
        let names: Vec<String> = list
            .iter()
            .map(|(name, layout)| {
                format!(
                    "`{name}` ({} bytes, aligned to {})",
                    layout.size(),
                    layout.align()
                )
            })
            .collect();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    Err(format!(
        "the state's {what} are {}, this engine's {}: register the same {what}, in the \
         same order, with the same sizes and alignments",
        names(theirs),
        names(ours)
    ))
}

/// The registry's event channels: names and layouts, in order.
fn channels(registry: &Registry) -> Vec<(String, Layout)> {
    (0..RawEvents::count(registry))
        .filter_map(|index| {
            let id = RawEventId::from_u32(u32::try_from(index).ok()?);
            RawEvents::describe(registry, id).map(|(name, layout)| (name.to_owned(), layout))
        })
        .collect()
}

/// A state refusal, `ECS_ERR_SNAPSHOT`.
fn refused(function: &str, why: impl std::fmt::Display) -> Failure {
    Failure::new(ECS_ERR_SNAPSHOT, format!("{function}: {why}"))
}

/// Makes an empty state and writes it to `*out`: it holds nothing until
/// `ecs_engine_save_state`. Free it with `ecs_state_destroy`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (out).
///
/// # Safety
///
/// `out` is NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_state_create(out: *mut *mut ecs_state) -> ecs_status {
    const F: &str = "ecs_state_create";
    call(F, || {
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        let state = Box::into_raw(Box::new(ecs_state::default()));
        // SAFETY: non-null, and valid for writes by the caller's promise.
        unsafe { write_out(out, state, F, "out") }
    })
}

/// Frees a state from `ecs_state_create` and everything it holds. NULL is
/// a no-op. Any thread may call it; the engines it was saved from or
/// restored into need not be alive.
///
/// # Safety
///
/// `state` is NULL or a state from `ecs_state_create` not destroyed yet,
/// used by no other call; it is invalid afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_state_destroy(state: *mut ecs_state) {
    const F: &str = "ecs_state_destroy";
    call(F, || {
        if !state.is_null() {
            // SAFETY: from `ecs_state_create` (Box::into_raw), not freed
            // yet, by the caller's promise.
            drop(unsafe { Box::from_raw(state) });
        }
        Ok(())
    });
}

/// Saves `engine` between ticks into `state`, replacing what it held
/// (and reusing its memory where the component types match, so a
/// rollback loop that saves every tick allocates little once warm). The
/// engine is not changed.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, state); `ECS_ERR_WRONG_STATE` during a
/// tick (from a system), from another thread at the same time, or before
/// the schedule is built (the state holds the systems' progress); the
/// build's status (`ECS_ERR_SCHEDULE`) after a failed build;
/// `ECS_ERR_SNAPSHOT` when a component is registered with a destructor,
/// with values or not (its values cannot be copied as bytes: the message
/// names it). On failure `state` holds what it held before.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `state` is NULL or a live state
/// from `ecs_state_create`, used by no other call. Threading: as every
/// engine call, one thread at a time, between ticks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_engine_save_state(
    engine: *const ecs_engine,
    state: *mut ecs_state,
) -> ecs_status {
    const F: &str = "ecs_engine_save_state";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        // SAFETY: NULL or a live state used by no other call (the caller's
        // promise): a unique reference for this call.
        let state = unsafe { state.as_mut() }.ok_or_else(|| Failure::null(F, "state"))?;
        let mut engine = engine.lock(F)?;
        let registry = engine.registry();
        if let Some(name) = (0..registry.component_types()).find_map(|index| {
            let info = registry.component_info(ComponentId::from_u32(index as u32))?;
            (info.is_runtime() && info.drop_fn().is_some()).then(|| info.name().to_owned())
        }) {
            return Err(refused(
                F,
                format!(
                    "component `{name}` was registered with a destructor \
                     (ecs_component_desc.drop): its values are not plain bytes, so an engine \
                     with it cannot be saved in memory"
                ),
            ));
        }
        let built = engine.built_only(F)?;
        let saved = match &mut state.engine {
            Some(saved) => built.save_state_into(saved),
            None => built.save_state().map(|saved| state.engine = Some(saved)),
        };
        saved.map_err(|e| refused(F, format!("the engine was not saved: {e}")))?;
        engine.resources.raw_copies_into(&mut state.resources);
        state.channels = channels(engine.registry());
        state.components = components(engine.registry());
        Ok(())
    })
}

/// Makes `engine` what it was when `state` was saved (from it or from
/// another engine built the same way): its entities with the same
/// handles, component values, hierarchy, disabled marks, change ticks,
/// resources, events in flight and readers' cursors, systems' progress,
/// command reserves and tick counter, so the next ticks run as they ran
/// after the save. Call it between ticks. `state` is not changed: restore
/// from it as often as needed. A restore is a structural change: pointers
/// from `ecs_get` (and from a view) are invalid afterwards. A state saved
/// before the first tick of an engine with startup systems restores only
/// into an engine whose startup systems have not run yet (they run once,
/// and are gone afterwards): save after the first tick to roll back to it.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, state); `ECS_ERR_WRONG_STATE` for an
/// empty state (never saved into), during a tick, from another thread at
/// the same time, or before the schedule is built; the build's status
/// after a failed build; `ECS_ERR_SNAPSHOT` when the state is of an
/// engine built another way (other systems or their commands, component
/// types, resources or event channels: the message says which), or
/// saved before startup systems that have run here since. Every check is
/// made before anything changes: on failure the engine is unchanged.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `state` is NULL or a live state
/// from `ecs_state_create`, not being saved into by another call.
/// Threading: as every engine call, one thread at a time, between ticks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_engine_restore_state(
    engine: *const ecs_engine,
    state: *const ecs_state,
) -> ecs_status {
    const F: &str = "ecs_engine_restore_state";
    call(F, || {
        // SAFETY: the caller's promise on `engine` and `state`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        // SAFETY: as above.
        let state = unsafe { arg(state, F, "state") }?;
        let mut engine = engine.lock(F)?;
        let Some(saved) = &state.engine else {
            return Err(Failure::new(
                ECS_ERR_WRONG_STATE,
                format!("{F}: the state is empty: save into it (ecs_engine_save_state) first"),
            ));
        };
        engine.built_only(F)?;
        engine
            .resources
            .fits(&state.resources, "state")
            .map_err(|why| refused(F, why))?;
        same_list(
            "components",
            &state.components,
            &components(engine.registry()),
        )
        .and_then(|()| {
            same_list(
                "event channels",
                &state.channels,
                &channels(engine.registry()),
            )
        })
        .map_err(|why| refused(F, why))?;
        engine
            .built_only(F)?
            .restore_state(saved)
            .map_err(|e| refused(F, format!("the engine was not restored: {e}")))?;
        engine.resources.restore_raw(&state.resources);
        Ok(())
    })
}

/// Writes the number of ticks the engine had run when `state` was saved
/// to `*out` (`ecs_engine_ticks` at the save).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (state, out); `ECS_ERR_WRONG_STATE` for an
/// empty state.
///
/// # Safety
///
/// `state` is NULL or a live state not being saved into by another call;
/// `out` is NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_state_ticks(state: *const ecs_state, out: *mut u64) -> ecs_status {
    const F: &str = "ecs_state_ticks";
    call(F, || {
        // SAFETY: the caller's promise on `state`.
        let state = unsafe { arg(state, F, "state") }?;
        let Some(saved) = &state.engine else {
            return Err(Failure::new(
                ECS_ERR_WRONG_STATE,
                format!("{F}: the state is empty: save into it (ecs_engine_save_state) first"),
            ));
        };
        // SAFETY: `out` is checked for NULL there and valid for writes by
        // the caller's promise.
        unsafe { write_out(out, saved.ticks(), F, "out") }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::ECS_ERR_NULL_POINTER;

    #[test]
    fn a_null_out_is_refused_and_nothing_leaks() {
        // SAFETY: NULL is allowed.
        let status = unsafe { ecs_state_create(std::ptr::null_mut()) };
        assert_eq!(status, ECS_ERR_NULL_POINTER);
        let mut state = std::ptr::null_mut();
        // SAFETY: `state` is a local.
        assert_eq!(unsafe { ecs_state_create(&mut state) }, crate::ECS_OK);
        let mut ticks = 0;
        // SAFETY: a live state; `ticks` is a local.
        let status = unsafe { ecs_state_ticks(state, &mut ticks) };
        assert_eq!(status, ECS_ERR_WRONG_STATE);
        // SAFETY: made above, destroyed once.
        unsafe { ecs_state_destroy(state) };
    }
}
