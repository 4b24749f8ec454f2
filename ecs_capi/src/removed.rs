//! Removal detection for C systems: the entities that lost a component
//! since the system last read them (`ecs_ctx_removed`), Rust's
//! `RemovedComponents<T>` for a run-time component.

use std::ffi::c_void;

use crate::boundary::{call, foreign, write_out};
use crate::component::{decode, ecs_component_id};
use crate::context::{ctx_arg, ecs_system_ctx};
use crate::engine::ecs_entity;
use crate::status::{Failure, ecs_status};

/// Called once per removal by `ecs_ctx_removed`, oldest first, with the
/// entity that lost the component (its handle may be stale by now: a
/// despawned entity's is).
pub type ecs_removed_fn = Option<unsafe extern "C" fn(entity: ecs_entity, user_data: *mut c_void)>;

/// Calls `each` with every entity that lost component `id` (removed
/// directly or by a command, or despawned while holding it) since this
/// system last called `ecs_ctx_removed` for `id` (since the component was
/// registered, on the first call), oldest first, on the calling thread; an
/// entity appears once per removal. Each system reads with its own
/// cursor, saved with the engine's in-memory states. The log keeps the
/// last 65,536 removals of each component: removals dropped before this
/// system read them are counted in `*missed` (NULL: not wanted), never
/// lost silently. The component must track changes
/// (`ECS_COMPONENT_TRACK_CHANGES`) and be declared by the system
/// (read or write), which orders the system after the systems that write
/// it.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (ctx, each); `ECS_ERR_UNKNOWN_COMPONENT`;
/// `ECS_ERR_UNDECLARED`; `ECS_ERR_INVALID_ARGUMENT` for a component that
/// does not track changes; `ECS_ERR_BORROW_CONFLICT` inside a view that
/// writes `id`; `ECS_ERR_WRONG_STATE` in a run condition (it keeps no
/// cursor) or from another thread than the system's. On failure `each`
/// is not called and the cursor does not move.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `each` is
/// sound to call with `user_data`; `missed` is NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_ctx_removed(
    ctx: *mut ecs_system_ctx,
    id: ecs_component_id,
    each: ecs_removed_fn,
    user_data: *mut c_void,
    missed: *mut u64,
) -> ecs_status {
    const F: &str = "ecs_ctx_removed";
    call(F, || {
        let each = each.ok_or_else(|| Failure::null(F, "each"))?;
        // SAFETY: the caller's promise on `ctx`.
        let ctx = unsafe { ctx_arg(ctx, F) }?;
        let id = decode(ctx.tag(), id, F)?;
        // Read first, call C after: the cursor is not borrowed while C runs
        // (which may call back into the context).
        let mut lost = Vec::new();
        let dropped = ctx.read_removed(id, F, |entity| lost.push(entity.to_bits()))?;
        if !missed.is_null() {
            // SAFETY: non-null, valid for writes by the caller's promise.
            unsafe { write_out(missed, dropped, F, "missed") }?;
        }
        foreign(|| {
            for entity in lost {
                // SAFETY: the C caller's promise on `each`.
                unsafe { each(entity, user_data) };
            }
        });
        Ok(())
    })
}
