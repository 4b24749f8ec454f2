//! Status codes: what every fallible call returns, and the Rust error each
//! failure is made from.

use std::ffi::{CStr, c_char};

use ::ecs_engine::EcsError;
use scheduler::{BuildError, RunError, SystemError};

/// The result of a call: `ECS_OK` or one of the `ECS_ERR_*` codes. A plain
/// integer rather than a C enum, so a value the header does not know yet
/// (from a newer library) is still representable.
pub type ecs_status = i32;

/// The call succeeded.
pub const ECS_OK: ecs_status = 0;
/// A required pointer argument was NULL.
pub const ECS_ERR_NULL_POINTER: ecs_status = 1;
/// An argument is out of range: a `struct_size` smaller than the version 1
/// struct, an alignment that is not a power of two, a name that is not
/// UTF-8, a zero thread count, ...
pub const ECS_ERR_INVALID_ARGUMENT: ecs_status = 2;
/// The entity is not alive: despawned, never spawned, or null.
pub const ECS_ERR_STALE_ENTITY: ecs_status = 3;
/// The entity is alive but has no such component.
pub const ECS_ERR_MISSING_COMPONENT: ecs_status = 4;
/// The component id is not registered in this engine.
pub const ECS_ERR_UNKNOWN_COMPONENT: ecs_status = 5;
/// A component or system name is already taken in this engine.
pub const ECS_ERR_DUPLICATE_NAME: ecs_status = 6;
/// A system touched a component it did not declare, or asked for its
/// command buffer without declaring commands.
pub const ECS_ERR_UNDECLARED: ecs_status = 7;
/// The schedule could not be built: a cycle, or a `before`/`after` name that
/// no system has.
pub const ECS_ERR_SCHEDULE: ecs_status = 8;
/// A tick failed: a system failed (a C system called `ecs_ctx_fail`, a
/// Rust system returned an error or panicked, or a registry error). The
/// engine stays usable.
pub const ECS_ERR_SYSTEM_FAILED: ecs_status = 9;
/// A Rust panic inside the call, caught at the C boundary.
pub const ECS_ERR_PANIC: ecs_status = 10;
/// The queue is closed (push), or closed and drained (pop).
pub const ECS_ERR_QUEUE_CLOSED: ecs_status = 11;
/// The queue is empty (non-blocking pop).
pub const ECS_ERR_QUEUE_EMPTY: ecs_status = 12;
/// The bounded queue is full (non-blocking push).
pub const ECS_ERR_QUEUE_FULL: ecs_status = 13;
/// Nothing arrived before the timeout.
pub const ECS_ERR_TIMEOUT: ecs_status = 14;
/// The call is not allowed in the engine's present state: adding a system
/// after the schedule was built, saving or loading a snapshot before it
/// is built, or calling the engine while it is busy
/// (from one of its own systems during a tick, or from two threads at once).
pub const ECS_ERR_WRONG_STATE: ecs_status = 15;
/// The component is borrowed in a way that conflicts with this access.
pub const ECS_ERR_BORROW_CONFLICT: ecs_status = 16;
/// A limit was reached: too many live entities, too many component types
/// (65,536 per engine), a thread pool the system could not start, or
/// memory the allocator could not give (a component value too large for
/// the memory or address space left). Nothing changed.
pub const ECS_ERR_LIMIT: ecs_status = 17;

/// The resource id is not registered in this engine.
pub const ECS_ERR_UNKNOWN_RESOURCE: ecs_status = 18;

/// A snapshot was refused (`ecs_engine_save`, `ecs_engine_load`): the
/// engine holds what a snapshot cannot (values of a component not
/// declared savable, resources), or the bytes do not load into this
/// engine (corrupt or truncated, another format or format version, a
/// component it lacks or of another size, other systems). The message
/// names what and where; the engine is unchanged.
pub const ECS_ERR_SNAPSHOT: ecs_status = 19;

/// The event channel id is not registered in this engine
/// (`ecs_event_register`), or no channel has the name looked up.
pub const ECS_ERR_UNKNOWN_EVENT: ecs_status = 20;

const NAMES: [&CStr; 21] = [
    c"ECS_OK",
    c"ECS_ERR_NULL_POINTER",
    c"ECS_ERR_INVALID_ARGUMENT",
    c"ECS_ERR_STALE_ENTITY",
    c"ECS_ERR_MISSING_COMPONENT",
    c"ECS_ERR_UNKNOWN_COMPONENT",
    c"ECS_ERR_DUPLICATE_NAME",
    c"ECS_ERR_UNDECLARED",
    c"ECS_ERR_SCHEDULE",
    c"ECS_ERR_SYSTEM_FAILED",
    c"ECS_ERR_PANIC",
    c"ECS_ERR_QUEUE_CLOSED",
    c"ECS_ERR_QUEUE_EMPTY",
    c"ECS_ERR_QUEUE_FULL",
    c"ECS_ERR_TIMEOUT",
    c"ECS_ERR_WRONG_STATE",
    c"ECS_ERR_BORROW_CONFLICT",
    c"ECS_ERR_LIMIT",
    c"ECS_ERR_UNKNOWN_RESOURCE",
    c"ECS_ERR_SNAPSHOT",
    c"ECS_ERR_UNKNOWN_EVENT",
];

/// The name of `status` (`"ECS_ERR_STALE_ENTITY"`), in static storage;
/// `"ECS_ERR_UNKNOWN_STATUS"` for a code this library does not define.
#[unsafe(no_mangle)]
pub extern "C" fn ecs_status_name(status: ecs_status) -> *const c_char {
    usize::try_from(status)
        .ok()
        .and_then(|i| NAMES.get(i))
        .copied()
        .unwrap_or(c"ECS_ERR_UNKNOWN_STATUS")
        .as_ptr()
}

/// A failure on its way to the C caller: the code it returns and the
/// message `ecs_last_error_message` gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) status: ecs_status,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(status: ecs_status, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
        }
    }

    /// A NULL `what` argument of function `function`.
    pub(crate) fn null(function: &str, what: &str) -> Self {
        Failure::new(
            ECS_ERR_NULL_POINTER,
            format!("{function}: `{what}` is NULL"),
        )
    }

    /// An out-of-range argument.
    pub(crate) fn invalid(function: &str, why: impl std::fmt::Display) -> Self {
        Failure::new(ECS_ERR_INVALID_ARGUMENT, format!("{function}: {why}"))
    }

    /// `error` from the registry, in function `function`.
    pub(crate) fn registry(function: &str, error: &EcsError) -> Self {
        Failure::new(
            ecs_error_status(error),
            format!("{function}: {}", c_terms(error)),
        )
    }
}

/// `error`'s message in the C API's terms (a Rust call it names has a C
/// name).
fn c_terms(error: &EcsError) -> String {
    match error {
        EcsError::Untracked { component } => format!(
            "component `{component}` was registered without ECS_COMPONENT_TRACK_CHANGES \
             (C++: ecs::track_changes): it keeps no change ticks, so `added`, `changed` and \
             ecs_ctx_removed cannot use it"
        ),
        other => other.to_string(),
    }
}

/// The status of a registry error.
pub(crate) fn ecs_error_status(error: &EcsError) -> ecs_status {
    match error {
        EcsError::NoSuchEntity { .. } => ECS_ERR_STALE_ENTITY,
        EcsError::MissingComponent { .. } => ECS_ERR_MISSING_COMPONENT,
        EcsError::TooManyEntities { .. } | EcsError::OutOfMemory { .. } => ECS_ERR_LIMIT,
        EcsError::BorrowConflict { .. } => ECS_ERR_BORROW_CONFLICT,
        EcsError::UnknownComponent { .. } | EcsError::TypedComponent { .. } => {
            ECS_ERR_UNKNOWN_COMPONENT
        }
        EcsError::DuplicateComponentName { .. } => ECS_ERR_DUPLICATE_NAME,
        _ => ECS_ERR_INVALID_ARGUMENT,
    }
}

impl From<SystemError> for Failure {
    fn from(error: SystemError) -> Self {
        let status = match &error {
            SystemError::Undeclared { .. } => ECS_ERR_UNDECLARED,
            SystemError::Registry {
                system,
                source: source @ EcsError::Untracked { .. },
            } => {
                let message = format!("system `{system}`: {}", c_terms(source));
                return Failure::new(ecs_error_status(source), message);
            }
            SystemError::Registry { source, .. } => ecs_error_status(source),
            // `Failed`, and any failure a later scheduler adds.
            _ => ECS_ERR_SYSTEM_FAILED,
        };
        Failure::new(status, error.to_string())
    }
}

impl From<BuildError> for Failure {
    fn from(error: BuildError) -> Self {
        let status = match &error {
            BuildError::DuplicateName { .. } => ECS_ERR_DUPLICATE_NAME,
            BuildError::ThreadPool { .. } => ECS_ERR_LIMIT,
            _ => ECS_ERR_SCHEDULE,
        };
        Failure::new(status, format!("building the schedule: {error}"))
    }
}

impl From<RunError> for Failure {
    fn from(error: RunError) -> Self {
        Failure::new(ECS_ERR_SYSTEM_FAILED, error.to_string())
    }
}
