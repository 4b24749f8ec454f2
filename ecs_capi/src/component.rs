//! Components registered at run time: name, size, alignment and an optional
//! destructor.

use std::alloc::Layout;
use std::ffi::{c_char, c_void};

use ::ecs_engine::{ComponentDescriptor, ComponentId, Registry};

use crate::boundary::{
    Versioned, arg, call, check_struct_size, foreign, read_versioned, string_arg, write_out,
};
use crate::status::{ECS_ERR_LIMIT, ECS_ERR_UNKNOWN_COMPONENT, Failure, ecs_status};
use crate::tag::{IdKind, MAX_INDEXES, Tag, decode_id, encode_id};
use crate::{SendPtr, ecs_engine};

/// A component type's id, from `ecs_component_register`: valid only in the
/// engine that registered it. An id from any other engine of the process,
/// live or destroyed, is refused with `ECS_ERR_UNKNOWN_COMPONENT`, and so
/// is a resource or event channel id: the top 2 bits say what the id
/// names, the next 46 are the engine's tag, never reused, and the low 16
/// the component's index.
pub type ecs_component_id = u64;

/// A component destructor: called once for every value the engine drops
/// (despawn, remove, replacement by an insert, an unapplied command, the
/// engine destroyed), with a pointer to the value (aligned, valid for the
/// call only) and the `drop_user_data` given at registration. May run on
/// any worker thread. The engine is busy while its values are dropped: a
/// call back into it (`ecs_engine_destroy` included) is refused with
/// `ECS_ERR_WRONG_STATE` and changes nothing.
pub type ecs_drop_fn = Option<unsafe extern "C" fn(component: *mut c_void, user_data: *mut c_void)>;

/// A component type to register.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ecs_component_desc {
    /// `sizeof(ecs_component_desc)`.
    pub struct_size: u32,
    /// UTF-8, NUL-terminated, unique in the engine; copied.
    pub name: *const c_char,
    /// Bytes of one value; may be 0.
    pub size: usize,
    /// Alignment in bytes: a power of two.
    pub align: usize,
    /// Optional destructor (NULL: the value is plain bytes).
    pub drop: ecs_drop_fn,
    /// Passed to `drop`; must be usable from any thread.
    pub drop_user_data: *mut c_void,
    // Version 2 (API 2.3): read only when `struct_size` covers it; an
    // older caller's smaller struct registers an unsavable component.
    /// `true` declares the values plain data that `ecs_engine_save` and
    /// `ecs_engine_load` copy by their bytes. The caller promises, for
    /// every value it inserts: every byte of its `size` is initialised,
    /// padding included (zero the struct with `memset` or `= {0}` before
    /// filling it), and the value owns nothing and holds no pointer or
    /// handle it relies on (bytes saved by one process must be a valid
    /// value when loaded by another). A savable component cannot have a
    /// destructor: `drop` must be NULL (else `ECS_ERR_INVALID_ARGUMENT`).
    /// `false` (or an older struct): the component is not savable, and a
    /// save of an engine where it has values is refused.
    pub savable: bool,
    // Version 3 (API 2.6): read only when `struct_size` covers it (a
    // 64-bit field, so that the struct grows: an older caller's padding
    // after `savable` is never read as it).
    /// Flags (0 for none): `ECS_COMPONENT_TRACK_CHANGES`. Other bits are
    /// refused with `ECS_ERR_INVALID_ARGUMENT` (kept for later versions).
    pub flags: u64,
}

/// `ecs_component_desc.flags`: keep change ticks for the component: when
/// each value was added and last written (an insert, a replacement, a
/// visit by a view that declares it written in its `ids`, `ecs_ctx_get`
/// of a written id, `ecs_get`), and a log of the entities that lost it,
/// for the `added` and `changed` lists of `ecs_view_desc` and for
/// `ecs_ctx_removed`. Costs 8 bytes per value and one store per written
/// value a view visits. Without it (or with an older struct), those lists
/// and `ecs_ctx_removed` refuse the id with `ECS_ERR_INVALID_ARGUMENT`.
pub const ECS_COMPONENT_TRACK_CHANGES: u64 = 1;

// The version 1 struct: every field up to `drop_user_data`.
// SAFETY: every field is valid as zero bytes (NULL pointers, `None`
// callbacks, 0, `false`); the struct begins with `struct_size`.
unsafe impl Versioned for ecs_component_desc {
    const NAME: &'static str = "ecs_component_desc";
    const V1: usize = std::mem::offset_of!(ecs_component_desc, savable);
}

/// The C id of `component` in the engine tagged `tag` (`tag.rs`), so an
/// id from another engine, or a resource or event id, is refused instead
/// of naming another component here.
pub(crate) fn encode(
    tag: Tag,
    component: ComponentId,
    function: &str,
) -> Result<ecs_component_id, Failure> {
    let index = component.to_u32() as usize;
    if index >= MAX_INDEXES {
        return Err(Failure::new(
            ECS_ERR_LIMIT,
            format!("{function}: an engine holds at most {MAX_INDEXES} component types"),
        ));
    }
    Ok(encode_id(IdKind::Component, tag, index))
}

/// The component `id` names in the engine tagged `tag`, or
/// `ECS_ERR_UNKNOWN_COMPONENT` for an id of another engine or kind.
pub(crate) fn decode(
    tag: Tag,
    id: ecs_component_id,
    function: &str,
) -> Result<ComponentId, Failure> {
    let index =
        decode_id(IdKind::Component, tag, id).map_err(|note| unknown(id, function, &note))?;
    // Below MAX_INDEXES: the cast cannot truncate.
    Ok(ComponentId::from_u32(index as u32))
}

fn unknown(id: ecs_component_id, function: &str, note: &str) -> Failure {
    Failure::new(
        ECS_ERR_UNKNOWN_COMPONENT,
        format!("{function}: no component with id {id:#x} is registered in this engine{note}"),
    )
}

/// `id` as a run-time component registered in `engine`.
pub(crate) fn known_id(
    tag: Tag,
    registry: &Registry,
    id: ecs_component_id,
    function: &str,
) -> Result<ComponentId, Failure> {
    let component = decode(tag, id, function)?;
    match registry.component_info(component) {
        Some(info) if info.is_runtime() => Ok(component),
        _ => Err(unknown(id, function, "")),
    }
}

/// The registered name of `id` (for messages and the schedule's
/// explanations).
pub(crate) fn component_name(registry: &Registry, id: ComponentId) -> String {
    registry.component_info(id).map_or_else(
        || format!("#{}", id.to_u32()),
        |info| info.name().to_owned(),
    )
}

/// The layout of a component of `size` bytes aligned to `align`, or an
/// invalid-argument failure that names the reason: an alignment that is
/// not a power of two, or a size above `isize::MAX` rounded down to the
/// alignment (the largest a Rust allocation of that alignment can hold).
fn component_layout(
    name: &str,
    size: usize,
    align: usize,
    function: &str,
) -> Result<Layout, Failure> {
    if !align.is_power_of_two() {
        return Err(Failure::invalid(
            function,
            format!("component `{name}`: alignment {align} is not a power of two"),
        ));
    }
    let largest = isize::MAX.unsigned_abs() & !(align - 1);
    if size > largest {
        return Err(Failure::invalid(
            function,
            format!(
                "component `{name}`: size {size} is too large: with alignment {align} a \
                 component holds at most {largest} bytes (isize::MAX rounded down to the \
                 alignment)"
            ),
        ));
    }
    Layout::from_size_align(size, align).map_err(|error| {
        Failure::invalid(
            function,
            format!("component `{name}`: size {size}, alignment {align}: {error}"),
        )
    })
}

/// Registers a component type and writes its id to `*out`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, desc, name, out);
/// `ECS_ERR_INVALID_ARGUMENT` when `struct_size` is too small, the name is
/// empty or not UTF-8, `align` is not a power of two, `size` is above
/// `PTRDIFF_MAX` rounded down to `align`, `size` is not a multiple of
/// `align` (C's `sizeof` always is), or `savable` is set with a `drop`;
/// `ECS_ERR_DUPLICATE_NAME` when the name is taken.
///
/// # Safety
///
/// Pointers are NULL or valid (`desc` for `desc->struct_size` bytes,
/// `desc->name` NUL-terminated); `drop`, when given, is sound for every
/// value inserted under this id; with `savable`, every value inserted is
/// plain data as `ecs_component_desc.savable` describes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_component_register(
    engine: *mut ecs_engine,
    desc: *const ecs_component_desc,
    out: *mut ecs_component_id,
) -> ecs_status {
    const F: &str = "ecs_component_register";
    call(F, || {
        // SAFETY: the caller's promise on every pointer.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.lock(F)?;
        if desc.is_null() {
            return Err(Failure::null(F, "desc"));
        }
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        // SAFETY: non-null, and valid for `struct_size` bytes by the
        // caller's promise.
        let desc = unsafe { read_versioned(desc, F) }?;
        // SAFETY: NULL or a NUL-terminated string, by the caller's promise.
        let name = unsafe { string_arg(desc.name, F, "desc->name") }?;
        let layout = component_layout(&name, desc.size, desc.align, F)?;
        if layout.size() % layout.align() != 0 {
            // C's `sizeof` is always a multiple of `alignof`; chunk columns
            // rely on it (the stride is the size).
            return Err(Failure::invalid(
                F,
                format!(
                    "component `{name}`: size {} is not a multiple of its alignment {}",
                    desc.size, desc.align
                ),
            ));
        }
        if desc.flags & !ECS_COMPONENT_TRACK_CHANGES != 0 {
            return Err(Failure::invalid(
                F,
                format!(
                    "component `{name}`: `flags` is {:#x}; this library knows \
                     ECS_COMPONENT_TRACK_CHANGES (1) only",
                    desc.flags
                ),
            ));
        }
        if desc.savable && desc.drop.is_some() {
            // A byte copy of a value with a destructor would own its
            // resources twice (`ComponentInfo::is_savable` would say no).
            return Err(Failure::invalid(
                F,
                format!(
                    "component `{name}`: a savable component cannot have a destructor (`drop` \
                     must be NULL when `savable` is true)"
                ),
            ));
        }
        let mut descriptor = ComponentDescriptor::new(name, layout);
        if desc.savable {
            // SAFETY: the C caller declared the values plain data (see
            // `ecs_component_desc.savable`): every byte initialised, owning
            // nothing; the component has no destructor (checked above).
            descriptor = unsafe { descriptor.savable() };
        }
        if let Some(drop) = desc.drop {
            let user_data = SendPtr(desc.drop_user_data);
            // SAFETY: the C caller promises `drop` is sound for every value
            // stored under this id; the registry calls it once per value,
            // with an aligned pointer.
            descriptor = unsafe {
                descriptor.with_drop(move |value| {
                    foreign(|| drop(value.as_ptr().cast(), user_data.get()));
                })
            };
        }
        if engine.registry().component_types() >= MAX_INDEXES {
            return Err(Failure::new(
                ECS_ERR_LIMIT,
                format!("{F}: an engine holds at most {MAX_INDEXES} component types"),
            ));
        }
        let registry = engine.registry_mut();
        let id = registry
            .register_runtime(descriptor)
            .map_err(|e| Failure::registry(F, &e))?;
        if desc.flags & ECS_COMPONENT_TRACK_CHANGES != 0 {
            registry
                .track_changes_raw(id)
                .expect("a run-time component registered just above");
        }
        let id = encode(engine.tag, id, F)?;
        // SAFETY: `out` is non-null and valid for writes.
        unsafe { write_out(out, id, F, "out") }
    })
}

/// Finds a registered component by name and writes its id to `*out`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_INVALID_ARGUMENT` for an empty or
/// non-UTF-8 name; `ECS_ERR_UNKNOWN_COMPONENT` when no component has it.
///
/// # Safety
///
/// Pointers are NULL or valid; `name` NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_component_lookup(
    engine: *const ecs_engine,
    name: *const c_char,
    out: *mut ecs_component_id,
) -> ecs_status {
    const F: &str = "ecs_component_lookup";
    call(F, || {
        // SAFETY: the caller's promise on every pointer.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.world(F)?;
        // SAFETY: NULL or a NUL-terminated string, by the caller's promise.
        let name = unsafe { string_arg(name, F, "name") }?;
        let id = engine.registry().component_by_name(&name).ok_or_else(|| {
            Failure::new(
                ECS_ERR_UNKNOWN_COMPONENT,
                format!("{F}: no component named `{name}` is registered in this engine"),
            )
        })?;
        let id = encode(engine.tag(), id, F)?;
        // SAFETY: valid for writes by the caller's promise.
        unsafe { write_out(out, id, F, "out") }
    })
}

/// What a component was registered with (`ecs_component_get_info`): for a
/// caller that found its id by name (`ecs_component_lookup`) to check that
/// its own type matches before it reads or writes values through the id.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ecs_component_info {
    /// `sizeof(ecs_component_info)`, set by the caller.
    pub struct_size: u32,
    /// `ecs_component_desc.savable` as registered.
    pub savable: bool,
    /// Whether a destructor was registered (`ecs_component_desc.drop`
    /// not NULL).
    pub has_drop: bool,
    /// Bytes of one value (`ecs_component_desc.size`).
    pub size: usize,
    /// Alignment in bytes (`ecs_component_desc.align`).
    pub align: usize,
    /// `ecs_component_desc.flags` as registered
    /// (`ECS_COMPONENT_TRACK_CHANGES` when it keeps change ticks).
    pub flags: u64,
}

/// Writes what component `id` was registered with to `*out`: its size,
/// alignment and flags, whether it is savable and whether it has a
/// destructor. Threading: a world call (between ticks, or from an
/// exclusive system's body on its thread).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, out); `ECS_ERR_INVALID_ARGUMENT` when
/// `out->struct_size` is less than `sizeof(ecs_component_info)`;
/// `ECS_ERR_UNKNOWN_COMPONENT`. Nothing is written on an error.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `out` NULL or valid for reads of its
/// `struct_size` and writes of `sizeof(ecs_component_info)` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_component_get_info(
    engine: *const ecs_engine,
    id: ecs_component_id,
    out: *mut ecs_component_info,
) -> ecs_status {
    const F: &str = "ecs_component_get_info";
    call(F, || {
        // SAFETY: the caller's promise on every pointer.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.world(F)?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        // SAFETY: non-null and valid for reads of the first field, by the
        // caller's promise.
        let struct_size = unsafe { out.cast::<u32>().read() };
        check_struct_size(
            struct_size,
            size_of::<ecs_component_info>(),
            F,
            "ecs_component_info",
        )?;
        let registry = engine.registry();
        let component = known_id(engine.tag(), registry, id, F)?;
        let info = registry
            .component_info(component)
            .expect("known_id found its info");
        let flags = if registry.is_tracking_changes_raw(component) {
            ECS_COMPONENT_TRACK_CHANGES
        } else {
            0
        };
        let written = ecs_component_info {
            struct_size,
            savable: info.is_savable(),
            has_drop: info.drop_fn().is_some(),
            size: info.layout().size(),
            align: info.layout().align(),
            flags,
        };
        // SAFETY: non-null, valid for writes of the whole struct (its
        // `struct_size` covers it, checked above), by the caller's promise.
        unsafe { write_out(out, written, F, "out") }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_refusal_names_its_real_reason() {
        let bad_align = component_layout("Odd", 4, 3, "f").unwrap_err();
        assert!(
            bad_align
                .message
                .contains("alignment 3 is not a power of two"),
            "{}",
            bad_align.message
        );
        let largest = isize::MAX as usize & !7;
        assert!(component_layout("Huge", largest, 8, "f").is_ok());
        let too_large = component_layout("Huge", largest + 1, 8, "f").unwrap_err();
        assert!(
            too_large.message.contains("is too large") && !too_large.message.contains("power"),
            "{}",
            too_large.message
        );
        assert!(component_layout("Huge", usize::MAX, 1, "f").is_err());
        assert!(component_layout("Byte", isize::MAX as usize, 1, "f").is_ok());
    }
}
