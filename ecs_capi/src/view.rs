//! Views of a running C system: a callback per entity
//! (`ecs_view_each`), per entity with filters (`ecs_view_each_filtered`),
//! or per chunk of values that lie side by side (`ecs_view_each_chunk`).

use std::ffi::c_void;

use ::ecs_engine::{ComponentId, RawView};

use crate::boundary::{arg, call, check_struct_size, foreign, slice_arg};
use crate::component::{decode, ecs_component_id};
use crate::context::{ctx_arg, ecs_system_ctx};
use crate::engine::ecs_entity;
use crate::status::{Failure, ecs_status};

/// Called once per entity of a view: the entity and one pointer per id (in
/// the order given), valid during the call.
pub type ecs_each_fn = Option<
    unsafe extern "C" fn(
        entity: ecs_entity,
        components: *const *mut c_void,
        user_data: *mut c_void,
    ),
>;

/// Visits every entity that has all components `ids` (each declared by the
/// system; a declared write is writable), calling `each` once per entity,
/// on the calling thread, one call after the other. The component with the
/// fewest values drives the order: its values' storage order, which depends
/// only on the sequence of inserts and removals, so the same world gives
/// the same order on every run and thread count.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_INVALID_ARGUMENT` for no ids or an id
/// given twice; `ECS_ERR_UNKNOWN_COMPONENT` for an id of another engine;
/// `ECS_ERR_UNDECLARED` for an id the system did not declare;
/// `ECS_ERR_BORROW_CONFLICT` when a written component is already in use
/// by this system (a view or `ecs_ctx_get` nested inside another view).
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `ids` is
/// valid for `ids_len` reads; `each` is sound to call with `user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_view_each(
    ctx: *mut ecs_system_ctx,
    ids: *const ecs_component_id,
    ids_len: usize,
    each: ecs_each_fn,
    user_data: *mut c_void,
) -> ecs_status {
    const F: &str = "ecs_view_each";
    call(F, || {
        let each = each.ok_or_else(|| Failure::null(F, "each"))?;
        // SAFETY: the caller's promise on `ctx` and `ids`.
        let mut view = unsafe { open_view(ctx, ids, ids_len, F) }?;
        // The whole walk is the C program's (one switch, not one per
        // entity): a panic in the walk itself would be caught all the same.
        foreign(|| {
            view.each(|entity, components| {
                // SAFETY: the C caller's promise on `each`; the pointers are
                // valid during the call.
                unsafe { each(entity.to_bits(), components.as_ptr().cast(), user_data) }
            });
        });
        Ok(())
    })
}

/// The terms of a filtered view (`ecs_view_each_filtered`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ecs_view_desc {
    /// `sizeof(ecs_view_desc)`.
    pub struct_size: u32,
    /// The components the callback gets a pointer to, in this order (at
    /// least one), as for `ecs_view_each`.
    pub ids: *const ecs_component_id,
    /// Number of ids in `ids`.
    pub ids_len: usize,
    /// Components an entity must also have to be visited (no pointer is
    /// given for them); may be NULL when `with_len` is 0.
    pub with: *const ecs_component_id,
    /// Number of ids in `with`.
    pub with_len: usize,
    /// Components an entity must not have to be visited; may be NULL when
    /// `without_len` is 0.
    pub without: *const ecs_component_id,
    /// Number of ids in `without`.
    pub without_len: usize,
}

const VIEW_DESC_V1: usize = std::mem::size_of::<ecs_view_desc>();

/// As `ecs_view_each` over `desc->ids`, visiting only the entities that
/// also have every component of `desc->with` and none of
/// `desc->without`, in the same order as `ecs_view_each` (the filters only
/// skip entities). As in Rust's `With<T>` and `Without<T>`, a filter reads
/// its component's membership: each id of `with` and `without` must be
/// declared by the system (read or write), so filtered systems are ordered
/// against systems that write those components. Each `without` term costs
/// one lookup per visited entity.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (ctx, desc, each, a list with a non-zero
/// length); `ECS_ERR_INVALID_ARGUMENT` for a small `struct_size`, no
/// `ids`, or an id named twice (in one list or two);
/// `ECS_ERR_UNKNOWN_COMPONENT`, `ECS_ERR_UNDECLARED` and
/// `ECS_ERR_BORROW_CONFLICT` as for `ecs_view_each`, for the ids of every
/// list. Nothing is visited on failure.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `desc` is
/// NULL or valid, its lists valid for their lengths; `each` is sound to
/// call with `user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_view_each_filtered(
    ctx: *mut ecs_system_ctx,
    desc: *const ecs_view_desc,
    each: ecs_each_fn,
    user_data: *mut c_void,
) -> ecs_status {
    const F: &str = "ecs_view_each_filtered";
    call(F, || {
        let each = each.ok_or_else(|| Failure::null(F, "each"))?;
        // SAFETY: the caller's promise on `ctx` and `desc`.
        let (ctx, desc) = unsafe { (ctx_arg(ctx, F)?, arg(desc, F, "desc")?) };
        check_struct_size(desc.struct_size, VIEW_DESC_V1, F, "ecs_view_desc")?;
        let decoded = |ptr, len, what| {
            // SAFETY: the caller's promise on the lists of `desc`.
            let ids = unsafe { slice_arg(ptr, len, F, what) }?;
            ids.iter()
                .map(|&id| decode(ctx.tag(), id, F))
                .collect::<Result<Vec<ComponentId>, Failure>>()
        };
        let ids = decoded(desc.ids, desc.ids_len, "desc->ids")?;
        let with = decoded(desc.with, desc.with_len, "desc->with")?;
        let without = decoded(desc.without, desc.without_len, "desc->without")?;
        if ids.is_empty() {
            return Err(Failure::invalid(F, "a view needs at least one id in `ids`"));
        }
        let context = ctx.context();
        let mut all = ids.clone();
        all.extend(&with);
        for (k, id) in all.iter().chain(&without).enumerate() {
            if all.iter().chain(&without).take(k).any(|other| other == id) {
                let name = context
                    .component_info(*id)
                    .map_or_else(|| format!("#{}", id.to_u32()), |i| i.name().to_owned());
                return Err(Failure::invalid(
                    F,
                    format!("component `{name}` is named twice in the view's lists"),
                ));
            }
        }
        // Each `without` id: declared, known, not write-locked by this
        // system (a lock taken and released at once).
        for &id in &without {
            drop(context.raw_view(&[id]).map_err(Failure::from)?);
        }
        let mut view = context.raw_view(&all).map_err(Failure::from)?;
        let excluded = |entity| {
            without
                .iter()
                .any(|&id| context.get_raw(entity, id).is_ok())
        };
        foreign(|| {
            view.each(|entity, components| {
                if !excluded(entity) {
                    // SAFETY: the C caller's promise on `each`; the
                    // pointers (the first `ids_len` are the callback's) are
                    // valid during the call.
                    unsafe { each(entity.to_bits(), components.as_ptr().cast(), user_data) }
                }
            });
        });
        Ok(())
    })
}

/// A run of a view's entities whose components lie side by side: row `i`
/// is `entities[i]`, and `columns[k]` points at `len` consecutive values of
/// the view's `k`-th id (stride: that component's size).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ecs_view_chunk {
    /// Rows in the chunk, at least 1.
    pub len: usize,
    /// `len` entity handles.
    pub entities: *const ecs_entity,
    /// One column pointer per id of the view.
    pub columns: *const *mut c_void,
}

/// Called once per chunk of a view; the chunk is valid during the call.
pub type ecs_chunk_fn =
    Option<unsafe extern "C" fn(chunk: *const ecs_view_chunk, user_data: *mut c_void)>;

/// As `ecs_view_each`, but one call per chunk of entities whose
/// components lie side by side: the fast way to write a loop over many
/// entities in C (one indirect call per chunk instead of per entity).
/// Chunks come in the order of `ecs_view_each`, one after the other on
/// the calling thread.
///
/// # Errors
///
/// As `ecs_view_each`.
///
/// # Safety
///
/// As `ecs_view_each`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_view_each_chunk(
    ctx: *mut ecs_system_ctx,
    ids: *const ecs_component_id,
    ids_len: usize,
    each: ecs_chunk_fn,
    user_data: *mut c_void,
) -> ecs_status {
    const F: &str = "ecs_view_each_chunk";
    call(F, || {
        let each = each.ok_or_else(|| Failure::null(F, "each"))?;
        // SAFETY: the caller's promise on `ctx` and `ids`.
        let mut view = unsafe { open_view(ctx, ids, ids_len, F) }?;
        view.each_chunk(|chunk| {
            let c = ecs_view_chunk {
                len: chunk.len(),
                entities: ::ecs_engine::Entity::slice_as_bits(chunk.entities()).as_ptr(),
                columns: chunk.columns().as_ptr().cast(),
            };
            // SAFETY: the C caller's promise on `each`; the chunk and what
            // it points at are valid during the call.
            foreign(|| unsafe { each(&c, user_data) });
        });
        Ok(())
    })
}

/// The view of a running system over the C ids `ids`, for `function`.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `ids` is
/// NULL or valid for `ids_len` reads.
pub(crate) unsafe fn open_view<'c>(
    ctx: *const ecs_system_ctx,
    ids: *const ecs_component_id,
    ids_len: usize,
    function: &str,
) -> Result<RawView<'c>, Failure> {
    // SAFETY: the caller's promise on `ctx`; the context outlives the
    // callback, during which alone the view is used.
    let ctx: &'c ecs_system_ctx = unsafe { ctx_arg(ctx, function) }?;
    // SAFETY: the caller's promise on `ids`.
    let ids = unsafe { slice_arg(ids, ids_len, function, "ids") }?;
    if ids.is_empty() {
        return Err(Failure::invalid(
            function,
            "a view needs at least one component id",
        ));
    }
    let ids = ids
        .iter()
        .map(|&id| decode(ctx.tag(), id, function))
        .collect::<Result<Vec<ComponentId>, Failure>>()?;
    ctx.context().raw_view(&ids).map_err(Failure::from)
}
