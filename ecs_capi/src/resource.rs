//! Resources from C: one value per engine of a registered size and
//! alignment, outside any entity, read and written between ticks by the
//! engine and during a tick by the systems that declared access.
//!
//! Each resource's bytes live in their own heap block (never moved until
//! the engine is destroyed). The scheduler orders systems by a zero-sized
//! run-time component registered with the resource (named
//! `resource:{name}`), so a system declaring a write to a resource
//! conflicts with every other system touching it, and readers run
//! together, exactly as Rust `Res`/`ResMut` are ordered.

use std::alloc::Layout;
use std::ffi::{c_char, c_void};
use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::sync::Arc;

use ::ecs_engine::{Access, ComponentDescriptor, ComponentId};
use parking_lot::RwLock;

use crate::boundary::{Versioned, arg, call, read_versioned, string_arg, write_out};
use crate::context::ecs_system_ctx;
use crate::engine::ecs_engine;
use crate::status::{
    ECS_ERR_DUPLICATE_NAME, ECS_ERR_LIMIT, ECS_ERR_UNDECLARED, ECS_ERR_UNKNOWN_RESOURCE, Failure,
    ecs_status,
};
use crate::tag::{IdKind, MAX_INDEXES, Tag, decode_id, encode_id};

/// A resource's id: tagged with its engine like an `ecs_component_id`
/// (an id from another engine is refused), and marked as a resource id:
/// a component or event channel id passed as one is refused.
pub type ecs_resource_id = u64;

/// The most resources an engine holds: 65,536.
const MAX_RESOURCES: usize = MAX_INDEXES;

/// A resource to register.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ecs_resource_desc {
    /// `sizeof(ecs_resource_desc)`.
    pub struct_size: u32,
    /// Unique among the engine's resources; UTF-8, NUL-terminated; copied.
    pub name: *const c_char,
    /// Size of the value in bytes (0 allowed: a marker).
    pub size: usize,
    /// Alignment in bytes: a power of two, at most 4096.
    pub align: usize,
    /// The initial value, `size` bytes, copied; NULL for all zero bytes.
    pub initial: *const c_void,
    // Version 2 (API 2.4): read only when `struct_size` covers it.
    /// `true` declares the value plain data that `ecs_engine_save` and
    /// `ecs_engine_load` copy by its bytes, with the same promise as
    /// `ecs_component_desc.savable`: every byte initialised (padding
    /// included) and no pointer or handle whose meaning is lost when the
    /// bytes are loaded elsewhere. `false` (or an older struct): an engine
    /// with the resource can be neither saved nor loaded.
    pub savable: bool,
}

// The version 1 struct: every field up to `initial`.
// SAFETY: every field is valid as zero bytes (NULL pointers, `None`
// callbacks, 0, `false`); the struct begins with `struct_size`.
unsafe impl Versioned for ecs_resource_desc {
    const NAME: &'static str = "ecs_resource_desc";
    const V1: usize = std::mem::offset_of!(ecs_resource_desc, savable);
}

/// One resource's bytes.
struct Slot {
    name: String,
    layout: Layout,
    /// `layout.size()` bytes aligned to `layout.align()`, owned by the slot
    /// (dangling, aligned, when the size is 0).
    bytes: NonNull<u8>,
    /// The scheduling key: a zero-sized run-time component.
    key: ComponentId,
    /// Declared savable (`ecs_resource_desc.savable`).
    savable: bool,
}

// SAFETY: the slot owns its block; the bytes are touched only by engine
// calls holding the engine's lock between ticks, or during a tick by
// systems whose declared accesses the scheduler keeps apart (a writer runs
// alone with respect to that resource), as for component values.
unsafe impl Send for Slot {}
// SAFETY: as above: shared references only read the name, layout and
// pointer; the bytes are reached through the raw pointer under those rules.
unsafe impl Sync for Slot {}

impl Drop for Slot {
    fn drop(&mut self) {
        if self.layout.size() > 0 {
            // SAFETY: allocated in `Slot::new` with this layout, freed once.
            unsafe { std::alloc::dealloc(self.bytes.as_ptr(), self.layout) };
        }
    }
}

impl Slot {
    fn new(
        name: String,
        layout: Layout,
        key: ComponentId,
        function: &str,
    ) -> Result<Self, Failure> {
        let bytes = if layout.size() == 0 {
            // An aligned dangling pointer: `align` is a non-zero power of two.
            NonNull::new(std::ptr::without_provenance_mut::<u8>(layout.align()))
                .expect("alignment is non-zero")
        } else {
            // SAFETY: the layout's size is non-zero.
            let raw = unsafe { std::alloc::alloc_zeroed(layout) };
            NonNull::new(raw).ok_or_else(|| {
                Failure::new(
                    ECS_ERR_LIMIT,
                    format!(
                        "{function}: resource `{name}`: the allocator could not give {} bytes",
                        layout.size()
                    ),
                )
            })?
        };
        Ok(Slot {
            name,
            layout,
            bytes,
            key,
            savable: false,
        })
    }
}

/// An engine's resources, shared with its systems.
#[derive(Default)]
pub(crate) struct ResourceStore {
    slots: RwLock<Vec<Slot>>,
}

impl std::fmt::Debug for ResourceStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceStore")
            .field("resources", &self.slots.read().len())
            .finish()
    }
}

impl ResourceStore {
    /// The index in `id`, when `id` is one of this engine's resources.
    fn index(&self, tag: Tag, id: ecs_resource_id, function: &str) -> Result<usize, Failure> {
        let unknown = |note: &str| {
            Failure::new(
                ECS_ERR_UNKNOWN_RESOURCE,
                format!(
                    "{function}: no resource with id {id:#x} is registered in this engine{note}"
                ),
            )
        };
        let index = decode_id(IdKind::Resource, tag, id).map_err(|note| unknown(&note))?;
        if index >= self.slots.read().len() {
            return Err(unknown(""));
        }
        Ok(index)
    }

    /// The scheduling key and name of resource `id`.
    pub(crate) fn key(
        &self,
        tag: Tag,
        id: ecs_resource_id,
        function: &str,
    ) -> Result<(usize, ComponentId, String), Failure> {
        let index = self.index(tag, id, function)?;
        let slots = self.slots.read();
        Ok((
            index,
            slots[index].key,
            format!("resource:{}", slots[index].name),
        ))
    }

    /// Resource `index`'s bytes and size.
    fn bytes(&self, index: usize) -> (NonNull<u8>, usize) {
        let slots = self.slots.read();
        (slots[index].bytes, slots[index].layout.size())
    }

    /// The names of the resources, in registration order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.slots
            .read()
            .iter()
            .map(|slot| slot.name.clone())
            .collect()
    }

    fn name(&self, index: usize) -> String {
        self.slots.read()[index].name.clone()
    }

    /// The names of the resources not declared savable.
    pub(crate) fn unsavable(&self) -> Vec<String> {
        self.slots
            .read()
            .iter()
            .filter(|slot| !slot.savable)
            .map(|slot| slot.name.clone())
            .collect()
    }

    /// Every resource's name and a copy of its bytes, in registration
    /// order. Between ticks only (the caller holds the engine's lock), and
    /// only when every resource is savable ([`unsavable`](Self::unsavable)
    /// is empty): their bytes are then initialised, by the caller's
    /// promise.
    pub(crate) fn copies(&self) -> Vec<(String, Vec<u8>)> {
        self.slots
            .read()
            .iter()
            .map(|slot| {
                let bytes = if slot.layout.size() == 0 {
                    Vec::new()
                } else {
                    // SAFETY: the block holds `size` bytes, initialised by
                    // the `savable` promise (see above); no tick runs while
                    // the engine's lock is held, so no system writes it now.
                    unsafe { std::slice::from_raw_parts(slot.bytes.as_ptr(), slot.layout.size()) }
                        .to_vec()
                };
                (slot.name.clone(), bytes)
            })
            .collect()
    }

    /// `Err` with the reason unless `saved` (names and byte counts) holds
    /// exactly this store's resources (the same names, in the same order,
    /// with their sizes); `what` names the copy ("snapshot", "state").
    pub(crate) fn fits<'a, B: 'a>(
        &self,
        saved: impl IntoIterator<Item = &'a (String, Vec<B>)>,
        what: &str,
    ) -> Result<(), String> {
        let slots = self.slots.read();
        let ours: Vec<(&str, usize)> = slots
            .iter()
            .map(|s| (s.name.as_str(), s.layout.size()))
            .collect();
        let theirs: Vec<(&str, usize)> = saved
            .into_iter()
            .map(|(n, b)| (n.as_str(), b.len()))
            .collect();
        if ours == theirs {
            return Ok(());
        }
        let describe = |list: &[(&str, usize)]| {
            let items: Vec<String> = list
                .iter()
                .map(|(n, size)| format!("`{n}` ({size} bytes)"))
                .collect();
            if items.is_empty() {
                "none".to_owned()
            } else {
                items.join(", ")
            }
        };
        Err(format!(
            "the {what}'s C resources are {}, this engine's {}: register the same \
             resources, in the same order, with the same sizes",
            describe(&theirs),
            describe(&ours)
        ))
    }

    /// Every resource's bytes copied into `into` (reusing its memory), as
    /// they are: initialised or not, since an in-memory state only copies
    /// them back ([`restore_raw`](Self::restore_raw)), so no resource needs
    /// to be savable. Between ticks only (the caller holds the engine's
    /// lock).
    pub(crate) fn raw_copies_into(&self, into: &mut Vec<(String, Vec<MaybeUninit<u8>>)>) {
        let slots = self.slots.read();
        into.truncate(slots.len());
        for (index, slot) in slots.iter().enumerate() {
            let size = slot.layout.size();
            if index == into.len() {
                into.push((String::new(), Vec::new()));
            }
            let (name, bytes) = &mut into[index];
            name.clone_from(&slot.name);
            bytes.clear();
            bytes.reserve_exact(size);
            // SAFETY: the block holds `size` bytes and `bytes` has room for
            // them; copying bytes that may be uninitialised into
            // `MaybeUninit<u8>` reads none of them as values. No tick runs
            // while the engine's lock is held, so no system writes them now.
            unsafe {
                std::ptr::copy_nonoverlapping(slot.bytes.as_ptr(), bytes.as_mut_ptr().cast(), size);
                bytes.set_len(size);
            }
        }
    }

    /// Copies `saved` (from [`raw_copies_into`](Self::raw_copies_into),
    /// checked by [`fits`](Self::fits)) back into the resources. Between
    /// ticks only.
    pub(crate) fn restore_raw(&self, saved: &[(String, Vec<MaybeUninit<u8>>)]) {
        let slots = self.slots.read();
        for (slot, (_, bytes)) in slots.iter().zip(saved) {
            // SAFETY: `bytes` is `size` bytes (checked by `fits`), copied
            // as they are into the slot's own block, which no system
            // touches while the engine's lock is held.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr().cast::<u8>(),
                    slot.bytes.as_ptr(),
                    bytes.len(),
                );
            }
        }
    }

    /// Copies `saved` (checked by [`fits`](Self::fits)) into the
    /// resources. Between ticks only.
    pub(crate) fn restore(&self, saved: &[(String, Vec<u8>)]) {
        let slots = self.slots.read();
        for (slot, (_, bytes)) in slots.iter().zip(saved) {
            if !bytes.is_empty() {
                // SAFETY: `bytes` is `size` bytes (checked by `fits`); the
                // block is the slot's own, not touched by any system while
                // the engine's lock is held.
                unsafe {
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), slot.bytes.as_ptr(), bytes.len());
                }
            }
        }
    }
}

/// What one C system may touch of its engine's resources.
#[derive(Debug)]
pub(crate) struct SystemResources {
    store: Arc<ResourceStore>,
    tag: Tag,
    /// The resource indices declared, each with its access (a write
    /// allows reading too).
    declared: Vec<(usize, Access)>,
}

impl SystemResources {
    pub(crate) fn new(store: Arc<ResourceStore>, tag: Tag, declared: Vec<(usize, Access)>) -> Self {
        SystemResources {
            store,
            tag,
            declared,
        }
    }

    /// Resource `id`'s bytes for `access` by the system `system`.
    fn pointer(
        &self,
        id: ecs_resource_id,
        access: Access,
        system: &str,
        function: &str,
    ) -> Result<NonNull<u8>, Failure> {
        let index = self.store.index(self.tag, id, function)?;
        let allowed = self.declared.iter().any(|&(i, declared)| {
            i == index && (declared == Access::Write || access == Access::Read)
        });
        if !allowed {
            let verb = if access == Access::Write {
                "write"
            } else {
                "read"
            };
            return Err(Failure::new(
                ECS_ERR_UNDECLARED,
                format!(
                    "{function}: system `{system}` did not declare a {verb} of resource `{}` \
                     (add it to `ecs_system_desc.resource_{verb}s`)",
                    self.store.name(index)
                ),
            ));
        }
        Ok(self.store.bytes(index).0)
    }
}

/// The shared body of `ecs_resource_get` and `ecs_resource_set`: locks
/// `engine` (no tick runs while the lock is held), finds resource `id`,
/// checks `size` against its size and, when `size` is not 0, the caller's
/// buffer (`buffer_is_null`, named `buffer` in the error), then calls `copy`
/// with the resource's block of `size` bytes.
///
/// # Safety
///
/// `engine` is NULL or a live engine.
unsafe fn copy_between_ticks(
    engine: *mut ecs_engine,
    id: ecs_resource_id,
    size: usize,
    (buffer_is_null, buffer): (bool, &str),
    function: &str,
    copy: impl FnOnce(NonNull<u8>),
) -> Result<(), Failure> {
    // SAFETY: the caller's promise on `engine`.
    let engine = unsafe { arg(engine, function, "engine") }?;
    let engine = engine.world(function)?;
    let store = engine.resources();
    let index = store.index(engine.tag(), id, function)?;
    let (bytes, expected) = store.bytes(index);
    if size != expected {
        return Err(Failure::invalid(
            function,
            format!(
                "resource `{}` is {expected} bytes, but `size` is {size}",
                store.name(index)
            ),
        ));
    }
    if size == 0 {
        return Ok(());
    }
    if buffer_is_null {
        return Err(Failure::null(function, buffer));
    }
    copy(bytes);
    Ok(())
}

/// Registers a resource: a zeroed or `desc->initial` value of `desc->size`
/// bytes aligned to `desc->align`, owned by the engine until it is
/// destroyed (resources cannot be removed), and writes its id to `*out`.
/// Allowed before the build and between ticks; systems can declare only
/// resources registered before they are added. The resource also
/// registers a zero-sized component named `resource:{name}` (the
/// scheduler orders systems by it): that name is then taken for
/// components.
///
/// Threading: an engine call like any other (one thread at a time; not
/// from a system: `ECS_ERR_WRONG_STATE`).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, desc, name, out);
/// `ECS_ERR_INVALID_ARGUMENT` (struct_size, an empty or non-UTF-8 name,
/// an alignment that is not a power of two or above 4096, a size too large
/// for the alignment); `ECS_ERR_DUPLICATE_NAME` when a resource has the
/// name (or a component is named `resource:{name}`); `ECS_ERR_LIMIT` when
/// the allocator cannot give `size` bytes or the engine holds 65,536
/// resources; `ECS_ERR_WRONG_STATE` while the engine is busy. Nothing is
/// registered on failure.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `desc` is NULL or valid, its
/// `initial` NULL or valid for `size` reads; `out` NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_resource_register(
    engine: *mut ecs_engine,
    desc: *const ecs_resource_desc,
    out: *mut ecs_resource_id,
) -> ecs_status {
    const F: &str = "ecs_resource_register";
    call(F, || {
        // SAFETY: the caller's promise on every pointer.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.lock(F)?;
        if desc.is_null() {
            return Err(Failure::null(F, "desc"));
        }
        // SAFETY: non-null, and valid for its `struct_size` by the caller's promise.
        let desc = unsafe { read_versioned(desc, F) }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        // SAFETY: NULL or NUL-terminated, by the caller's promise.
        let name = unsafe { string_arg(desc.name, F, "desc->name") }?;
        if !desc.align.is_power_of_two() || desc.align > 4096 {
            return Err(Failure::invalid(
                F,
                format!(
                    "resource `{name}`: `align` is {}; give a power of two up to 4096",
                    desc.align
                ),
            ));
        }
        let layout = Layout::from_size_align(desc.size, desc.align).map_err(|_| {
            Failure::invalid(
                F,
                format!(
                    "resource `{name}`: `size` {} is too large for alignment {}",
                    desc.size, desc.align
                ),
            )
        })?;
        let store = Arc::clone(&engine.resources);
        {
            let slots = store.slots.read();
            if slots.iter().any(|slot| slot.name == name) {
                return Err(Failure::new(
                    ECS_ERR_DUPLICATE_NAME,
                    format!("{F}: a resource named `{name}` already exists"),
                ));
            }
            if slots.len() >= MAX_RESOURCES {
                return Err(Failure::new(
                    ECS_ERR_LIMIT,
                    format!("{F}: an engine holds at most {MAX_RESOURCES} resources"),
                ));
            }
        }
        let key_name = format!("resource:{name}");
        if engine.registry().component_by_name(&key_name).is_some() {
            return Err(Failure::new(
                ECS_ERR_DUPLICATE_NAME,
                format!("{F}: resource `{name}`: a component is named `{key_name}` already"),
            ));
        }
        // Allocate first, so a refused allocation registers nothing.
        let tag = engine.tag;
        let mut slot = Slot::new(name, layout, ComponentId::from_u32(0), F)?;
        slot.savable = desc.savable;
        if !desc.initial.is_null() && layout.size() > 0 {
            // SAFETY: `initial` is valid for `size` reads (the caller's
            // promise); the block is `size` bytes and fresh.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    desc.initial.cast::<u8>(),
                    slot.bytes.as_ptr(),
                    layout.size(),
                );
            }
        }
        slot.key = engine
            .registry_mut()
            .register_runtime(ComponentDescriptor::new(key_name, Layout::new::<()>()))
            .map_err(|error| Failure::registry(F, &error))?;
        let mut slots = store.slots.write();
        let index = slots.len();
        slots.push(slot);
        drop(slots);
        // SAFETY: `out` is non-null, valid for writes by the caller's promise.
        unsafe { write_out(out, encode_id(IdKind::Resource, tag, index), F, "out") }
    })
}

/// Copies resource `id`'s value (`size` bytes, which must be its
/// registered size) to `out`. Between ticks only: from a system use
/// `ecs_ctx_resource_read`. Threading: an engine call (one thread at a
/// time; from a system it fails with `ECS_ERR_WRONG_STATE`). The engine
/// keeps its own copy: `out`/`value` belong to the caller.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, out when size > 0);
/// `ECS_ERR_UNKNOWN_RESOURCE` for an id not of this engine;
/// `ECS_ERR_INVALID_ARGUMENT` for a `size` that is not the resource's;
/// `ECS_ERR_WRONG_STATE` while the engine is busy (during a tick).
///
/// # Safety
///
/// `engine` is NULL or a live engine; `out` NULL or valid for `size` writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_resource_get(
    engine: *mut ecs_engine,
    id: ecs_resource_id,
    out: *mut c_void,
    size: usize,
) -> ecs_status {
    const F: &str = "ecs_resource_get";
    let copy = |bytes: NonNull<u8>| {
        // SAFETY: no system runs meanwhile (the engine's lock is held
        // while this runs, or an exclusive system runs alone and lent its
        // world to this call), so no system writes the block; `out` is
        // valid for `size` writes (the caller's promise) and the block
        // holds `size` bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast::<u8>(), size) };
    };
    // SAFETY: the caller's promise on `engine`.
    call(F, || unsafe {
        copy_between_ticks(engine, id, size, (out.is_null(), "out"), F, copy)
    })
}

/// Overwrites resource `id`'s value with `size` bytes (its registered
/// size) from `value`, copied. Between ticks only: from a system use
/// `ecs_ctx_resource_write`. Threading: an engine call (one thread at a
/// time; from a system it fails with `ECS_ERR_WRONG_STATE`). The engine
/// keeps its own copy: `out`/`value` belong to the caller.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, value when size > 0);
/// `ECS_ERR_UNKNOWN_RESOURCE` for an id not of this engine;
/// `ECS_ERR_INVALID_ARGUMENT` for a `size` that is not the resource's;
/// `ECS_ERR_WRONG_STATE` while the engine is busy (during a tick).
///
/// # Safety
///
/// `engine` is NULL or a live engine; `value` NULL or valid for `size`
/// reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_resource_set(
    engine: *mut ecs_engine,
    id: ecs_resource_id,
    value: *const c_void,
    size: usize,
) -> ecs_status {
    const F: &str = "ecs_resource_set";
    let copy = |bytes: NonNull<u8>| {
        // SAFETY: no system runs meanwhile (as in `ecs_resource_get`), so
        // no system touches the block; `value` is valid for
        // `size` reads (the caller's promise); `copy` allows the two to
        // overlap.
        unsafe { std::ptr::copy(value.cast::<u8>(), bytes.as_ptr(), size) };
    };
    // SAFETY: the caller's promise on `engine`.
    call(F, || unsafe {
        copy_between_ticks(engine, id, size, (value.is_null(), "value"), F, copy)
    })
}

/// Writes a read-only pointer to resource `id`'s bytes to `*out`: valid
/// until the system (or run condition) returns; the system must have
/// declared a read or a write of `id` in `ecs_system_desc.resource_reads`
/// or `resource_writes`. Do not write through it. On the system's thread
/// only.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (ctx, out); `ECS_ERR_UNKNOWN_RESOURCE` for an id
/// not of this engine; `ECS_ERR_UNDECLARED` when the system declared no
/// access to `id`.
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `out` is
/// NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_ctx_resource_read(
    ctx: *const ecs_system_ctx,
    id: ecs_resource_id,
    out: *mut *const c_void,
) -> ecs_status {
    const F: &str = "ecs_ctx_resource_read";
    call(F, || {
        // SAFETY: the caller's promise on `ctx`.
        let ctx = unsafe { crate::context::ctx_arg(ctx, F) }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        let bytes = ctx.resource(id, Access::Read, F)?;
        // SAFETY: checked non-null; valid for writes by the caller's promise.
        unsafe { write_out(out, bytes.as_ptr().cast_const().cast(), F, "out") }
    })
}

/// Writes a writable pointer to resource `id`'s bytes to `*out`: valid
/// until the system (or run condition) returns; the system must have
/// declared a write of `id` in `ecs_system_desc.resource_writes` (so no
/// other system touches it meanwhile). On the system's thread only.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (ctx, out); `ECS_ERR_UNKNOWN_RESOURCE` for an id
/// not of this engine; `ECS_ERR_UNDECLARED` when the system did not declare
/// a write of `id` (a declared read is not enough).
///
/// # Safety
///
/// `ctx` is NULL or the context passed to the running callback; `out` is
/// NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_ctx_resource_write(
    ctx: *mut ecs_system_ctx,
    id: ecs_resource_id,
    out: *mut *mut c_void,
) -> ecs_status {
    const F: &str = "ecs_ctx_resource_write";
    call(F, || {
        // SAFETY: the caller's promise on `ctx`.
        let ctx = unsafe { crate::context::ctx_arg(ctx, F) }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        let bytes = ctx.resource(id, Access::Write, F)?;
        // SAFETY: checked non-null; valid for writes by the caller's promise.
        unsafe { write_out(out, bytes.as_ptr().cast(), F, "out") }
    })
}

impl ecs_system_ctx {
    /// Resource `id`'s bytes for `access`, when the running system
    /// declared it.
    fn resource(
        &self,
        id: ecs_resource_id,
        access: Access,
        function: &str,
    ) -> Result<NonNull<u8>, Failure> {
        let system = self.system_name();
        match self.resources() {
            Some(resources) => resources.pointer(id, access, &system, function),
            None => Err(Failure::new(
                ECS_ERR_UNDECLARED,
                format!("{function}: system `{system}` declared no resources"),
            )),
        }
    }
}
