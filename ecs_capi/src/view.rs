//! Views of a running C system: a callback per entity
//! (`ecs_view_each`), per entity with filters (`ecs_view_each_filtered`),
//! or per chunk of values that lie side by side (`ecs_view_each_chunk`).

use std::ffi::c_void;

use ::ecs_engine::{ComponentId, RawView};

use crate::boundary::{Versioned, call, foreign, read_versioned, slice_arg};
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
    // Version 2 (API 2.6): read only when `struct_size` covers it (an
    // older caller's smaller struct has none of these).
    /// Components the callback gets a pointer to after those of `ids` (in
    /// this order), NULL where the visited entity has none: they do not
    /// choose the entities (as Rust's `Option<&T>`). Written only when
    /// declared written. May be NULL when `optional_len` is 0.
    pub optional: *const ecs_component_id,
    /// Number of ids in `optional`.
    pub optional_len: usize,
    /// Components whose value must have been added since the system last
    /// ran (every value, on its first run) for an entity to be visited,
    /// as Rust's `Added<T>`: each an id of `ids` or `with`, or one more
    /// component the entity must have. Each must track changes
    /// (`ECS_COMPONENT_TRACK_CHANGES`). May be NULL when `added_len`
    /// is 0.
    pub added: *const ecs_component_id,
    /// Number of ids in `added`.
    pub added_len: usize,
    /// As `added`, for a value added or written since the system last ran
    /// (Rust's `Changed<T>`).
    pub changed: *const ecs_component_id,
    /// Number of ids in `changed`.
    pub changed_len: usize,
}

// The version 1 struct: every field up to `without_len`.
// SAFETY: every field is valid as zero bytes (NULL pointers, 0); the
// struct begins with `struct_size`.
unsafe impl Versioned for ecs_view_desc {
    const NAME: &'static str = "ecs_view_desc";
    const V1: usize = std::mem::offset_of!(ecs_view_desc, optional);
}

/// As `ecs_view_each` over `desc->ids`, visiting only the entities that
/// also have every component of `desc->with` and none of
/// `desc->without`, and whose components of `desc->added` and
/// `desc->changed` were added or changed since the system last ran, in
/// the same order as `ecs_view_each` (the filters only skip entities).
/// The callback gets a pointer per id of `ids`, then one per id of
/// `optional` (NULL where the entity has none). As in Rust's `With<T>`
/// and `Without<T>`, a filter reads its component's membership: each id
/// of every list must be declared by the system (read or write), so
/// filtered systems are ordered against systems that write those
/// components. Each `without` and `optional` term costs one lookup per
/// entity, each `added` and `changed` term one tick comparison.
/// A visited entity's values of components declared written in `ids` and
/// `optional` count as changed for every later `changed` filter (those
/// of `with`, `added` and `changed` only filter: they are not marked).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (ctx, desc, each, a list with a non-zero
/// length); `ECS_ERR_INVALID_ARGUMENT` for a small `struct_size`, no
/// `ids`, an id named twice in `ids`, `with`, `without` and `optional`,
/// an id of `added` or `changed` also in `without` or `optional`, or a
/// component of `added` or `changed` that does not track changes;
/// `ECS_ERR_WRONG_STATE` for an `added` or `changed` list in a run
/// condition (it keeps no last run);
/// `ECS_ERR_UNKNOWN_COMPONENT`, `ECS_ERR_UNDECLARED` and
/// `ECS_ERR_BORROW_CONFLICT` as for `ecs_view_each`, for the ids of every
/// list. Nothing is visited on failure.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `desc` is
/// NULL or valid for `desc->struct_size` bytes (or a whole
/// `ecs_view_desc`, whichever is smaller), its lists valid for their
/// lengths; `each` is sound to call with `user_data`.
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
        let Filtered {
            mut view,
            ids: first,
            joined,
            optional,
        } = unsafe { open_filtered(ctx, desc, F) }?;
        // The callback's pointers: those of `ids`, then of `optional`. A
        // row is `ids`, the joined filters, then `optional`: it is already
        // in that order when no filter is joined, or when there is no
        // optional term (the callback reads only the first `first`).
        if optional == 0 || joined == first {
            foreign(|| {
                view.each(|entity, components| {
                    // SAFETY: the C caller's promise on `each`; the
                    // pointers are valid during the call.
                    unsafe { each(entity.to_bits(), components.as_ptr().cast(), user_data) }
                });
            });
            return Ok(());
        }
        let mut given = vec![std::ptr::null_mut::<u8>(); first + optional];
        foreign(|| {
            view.each(|entity, components| {
                given[..first].copy_from_slice(&components[..first]);
                given[first..].copy_from_slice(&components[joined..]);
                // SAFETY: the C caller's promise on `each`; the pointers
                // are valid during the call.
                unsafe { each(entity.to_bits(), given.as_ptr().cast(), user_data) }
            });
        });
        Ok(())
    })
}

/// The view `desc` describes, for a running system's `ctx`, in `function`: its
/// joined terms (`ids`, then the filters), filtered and with its optional
/// terms, and where the callback's pointers are in a visit's row.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `desc` is
/// NULL or valid for `desc->struct_size` bytes (or a whole
/// `ecs_view_desc`), its lists valid for their lengths.
unsafe fn open_filtered<'c>(
    ctx: *mut ecs_system_ctx,
    desc: *const ecs_view_desc,
    function: &str,
) -> Result<Filtered<'c>, Failure> {
    // SAFETY: the caller's promise on `ctx`; the context outlives the
    // callback, during which alone the view is used.
    let ctx: &'c ecs_system_ctx = unsafe { ctx_arg(ctx, function) }?;
    if desc.is_null() {
        return Err(Failure::null(function, "desc"));
    }
    // SAFETY: non-null, valid for `struct_size` bytes by the caller's promise.
    let desc = unsafe { read_versioned(desc, function) }?;
    let decoded = |ptr, len, what| {
        // SAFETY: the caller's promise on the lists of `desc`.
        let ids = unsafe { slice_arg(ptr, len, function, what) }?;
        ids.iter()
            .map(|&id| decode(ctx.tag(), id, function))
            .collect::<Result<Vec<ComponentId>, Failure>>()
    };
    let ids = decoded(desc.ids, desc.ids_len, "desc->ids")?;
    let with = decoded(desc.with, desc.with_len, "desc->with")?;
    let without = decoded(desc.without, desc.without_len, "desc->without")?;
    let optional = decoded(desc.optional, desc.optional_len, "desc->optional")?;
    let added = decoded(desc.added, desc.added_len, "desc->added")?;
    let changed = decoded(desc.changed, desc.changed_len, "desc->changed")?;
    if ids.is_empty() {
        return Err(Failure::invalid(
            function,
            "a view needs at least one id in `ids`",
        ));
    }
    let context = ctx.context();
    let name = |id: ComponentId| {
        context
            .component_info(id)
            .map_or_else(|| format!("#{}", id.to_u32()), |i| i.name().to_owned())
    };
    let named: Vec<ComponentId> = [&ids, &with, &without, &optional]
        .into_iter()
        .flatten()
        .copied()
        .collect();
    for (k, id) in named.iter().enumerate() {
        if named[..k].contains(id) {
            return Err(Failure::invalid(
                function,
                format!(
                    "component `{}` is named twice in the view's lists",
                    name(*id)
                ),
            ));
        }
    }
    // The joined terms: `ids`, then the filters (read-locked, never
    // marked): `with`, then each `added` or `changed` component not
    // among them.
    let mut filters = with.clone();
    for &id in added.iter().chain(&changed) {
        if without.contains(&id) || optional.contains(&id) {
            return Err(Failure::invalid(
                function,
                format!(
                    "component `{}` is in `added` or `changed` and in `without` or \
                     `optional`: a filtered change needs the component",
                    name(id)
                ),
            ));
        }
        if !ids.contains(&id) && !filters.contains(&id) {
            filters.push(id);
        }
    }
    let all: Vec<ComponentId> = ids.iter().chain(&filters).copied().collect();
    let since = if added.is_empty() && changed.is_empty() {
        None
    } else {
        Some(ctx.since(function)?)
    };
    let mut view = context
        .raw_view_with(&ids, &filters, &optional, &without)
        .map_err(Failure::from)?;
    let term = |id| all.iter().position(|&t| t == id).expect("joined above");
    if let Some(since) = since {
        for &id in &added {
            view.added_since(term(id), since)
                .map_err(|e| Failure::registry(function, &e))?;
        }
        for &id in &changed {
            view.changed_since(term(id), since)
                .map_err(|e| Failure::registry(function, &e))?;
        }
    }
    Ok(Filtered {
        view,
        ids: ids.len(),
        joined: all.len(),
        optional: optional.len(),
    })
}

/// A filtered view, opened: the callback's pointers are the first `ids`
/// of a row, then its last `optional` (after the `joined` terms).
struct Filtered<'c> {
    view: RawView<'c>,
    ids: usize,
    joined: usize,
    optional: usize,
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
        each_chunk(&mut view, each, user_data);
        Ok(())
    })
}

/// As `ecs_view_each_chunk` over `desc->ids`, visiting what
/// `ecs_view_each_filtered` visits for `desc` (the filters cut the chunks
/// around the entities they skip): the fast way to walk a filtered view
/// in C. In each chunk, `columns[k]` is the column of `desc->ids[k]`, for
/// `k` below `desc->ids_len` (the entries after those belong to the
/// filters: do not use them). A chunk holds no optional term:
/// `desc->optional` must be empty.
///
/// # Errors
///
/// As `ecs_view_each_filtered`, and `ECS_ERR_INVALID_ARGUMENT` for a
/// non-empty `optional` list.
///
/// # Safety
///
/// As `ecs_view_each_filtered`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_view_each_chunk_filtered(
    ctx: *mut ecs_system_ctx,
    desc: *const ecs_view_desc,
    each: ecs_chunk_fn,
    user_data: *mut c_void,
) -> ecs_status {
    const F: &str = "ecs_view_each_chunk_filtered";
    call(F, || {
        let each = each.ok_or_else(|| Failure::null(F, "each"))?;
        // SAFETY: the caller's promise on `ctx` and `desc`.
        let Filtered {
            mut view, optional, ..
        } = unsafe { open_filtered(ctx, desc, F) }?;
        if optional > 0 {
            return Err(Failure::invalid(
                F,
                "a chunk holds the columns of `ids` only: `optional` is for \
                 ecs_view_each_filtered",
            ));
        }
        each_chunk(&mut view, each, user_data);
        Ok(())
    })
}

/// Calls `each` once per chunk of `view`.
fn each_chunk(
    view: &mut RawView<'_>,
    each: unsafe extern "C" fn(*const ecs_view_chunk, *mut c_void),
    user_data: *mut c_void,
) {
    view.each_chunk(|chunk| {
        let c = ecs_view_chunk {
            len: chunk.len(),
            entities: ::ecs_engine::Entity::slice_as_bits(chunk.entities()).as_ptr(),
            columns: chunk.columns().as_ptr().cast(),
        };
        // SAFETY: the C caller's promise on `each`; the chunk and what it
        // points at are valid during the call.
        foreign(|| unsafe { each(&c, user_data) });
    });
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
