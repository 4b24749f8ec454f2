//! Components registered at run time: name, size, alignment and an optional
//! destructor.

use std::alloc::Layout;
use std::ffi::{c_char, c_void};

use ::ecs_engine::{ComponentDescriptor, ComponentId, Registry};

use crate::boundary::{arg, arg_mut, call, check_struct_size, string_arg, write_out};
use crate::status::{ECS_ERR_UNKNOWN_COMPONENT, Failure, ecs_status};
use crate::{SendPtr, ecs_engine};

/// A component type's id: registry-local, from `ecs_component_register`.
#[allow(non_camel_case_types)]
pub type ecs_component_id = u32;

/// A component destructor: called once for every value the engine drops
/// (despawn, remove, replacement by an insert, an unapplied command, the
/// engine destroyed), with a pointer to the value (aligned, valid for the
/// call only) and the `drop_user_data` given at registration. May run on
/// any worker thread; must not call back into the engine.
#[allow(non_camel_case_types)]
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
}

const COMPONENT_DESC_V1: usize = std::mem::size_of::<ecs_component_desc>();

/// `id` as a component id registered in `registry` as a run-time component.
pub(crate) fn known_id(
    registry: &Registry,
    id: ecs_component_id,
    function: &str,
) -> Result<ComponentId, Failure> {
    let component = ComponentId::from_u32(id);
    match registry.component_info(component) {
        Some(info) if info.is_runtime() => Ok(component),
        _ => Err(Failure::new(
            ECS_ERR_UNKNOWN_COMPONENT,
            format!("{function}: no component with id {id} is registered in this engine"),
        )),
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

/// Registers a component type and writes its id to `*out`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, desc, name, out);
/// `ECS_ERR_INVALID_ARGUMENT` when `struct_size` is too small, the name is
/// empty or not UTF-8, `align` is not a power of two, or `size` is not a
/// multiple of `align` (C's `sizeof` always is); `ECS_ERR_DUPLICATE_NAME` when the name is taken.
///
/// # Safety
///
/// Pointers are NULL or valid (`desc->name` NUL-terminated); `drop`, when
/// given, is sound for every value inserted under this id.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_component_register(
    engine: *mut ecs_engine,
    desc: *const ecs_component_desc,
    out: *mut ecs_component_id,
) -> ecs_status {
    const F: &str = "ecs_component_register";
    call(F, || {
        // SAFETY: the caller's promise on every pointer.
        let engine = unsafe { arg_mut(engine, F, "engine") }?;
        // SAFETY: a NULL or valid pointer, by the caller's promise.
        let desc = unsafe { arg(desc, F, "desc") }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        check_struct_size(desc.struct_size, COMPONENT_DESC_V1, F, "ecs_component_desc")?;
        // SAFETY: NULL or a NUL-terminated string, by the caller's promise.
        let name = unsafe { string_arg(desc.name, F, "desc->name") }?;
        let layout = Layout::from_size_align(desc.size, desc.align).map_err(|_| {
            Failure::invalid(
                F,
                format!(
                    "component `{name}`: alignment {} is not a power of two (or size {} is too large)",
                    desc.align, desc.size
                ),
            )
        })?;
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
        let mut descriptor = ComponentDescriptor::new(name, layout);
        if let Some(drop) = desc.drop {
            let user_data = SendPtr(desc.drop_user_data);
            // SAFETY: the C caller promises `drop` is sound for every value
            // stored under this id; the registry calls it once per value,
            // with an aligned pointer.
            descriptor = unsafe {
                descriptor.with_drop(move |value| drop(value.as_ptr().cast(), user_data.get()))
            };
        }
        let id = engine
            .registry
            .register_runtime(descriptor)
            .map_err(|e| Failure::registry(F, &e))?;
        let id = u32::try_from(id.index()).expect("component ids fit in u32");
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
        // SAFETY: NULL or a NUL-terminated string, by the caller's promise.
        let name = unsafe { string_arg(name, F, "name") }?;
        let id = engine.registry.component_by_name(&name).ok_or_else(|| {
            Failure::new(
                ECS_ERR_UNKNOWN_COMPONENT,
                format!("{F}: no component named `{name}` is registered in this engine"),
            )
        })?;
        let id = u32::try_from(id.index()).expect("component ids fit in u32");
        // SAFETY: valid for writes by the caller's promise.
        unsafe { write_out(out, id, F, "out") }
    })
}
