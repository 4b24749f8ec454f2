//! What the last tick's command buffers did, for C: how many commands of
//! each kind were applied, skipped (their target was gone) or did nothing,
//! for the whole tick or one system, and the first skipped command.

use std::ffi::c_char;

use command_buffer::{ApplyReport, CommandKind};

use crate::boundary::{arg, call, check_struct_size, string_arg};
use crate::engine::{ecs_engine, ecs_entity};
use crate::status::{Failure, ecs_status};

/// A kind of command: an index into the arrays of `ecs_command_report`.
pub type ecs_command_kind = u32;

/// `ecs_commands_spawn` (and the spawns of Rust buffers).
pub const ECS_COMMAND_SPAWN: ecs_command_kind = 0;
/// `ecs_commands_despawn`.
pub const ECS_COMMAND_DESPAWN: ecs_command_kind = 1;
/// An insert of a Rust component.
pub const ECS_COMMAND_INSERT: ecs_command_kind = 2;
/// An insert of a Rust bundle.
pub const ECS_COMMAND_INSERT_BUNDLE: ecs_command_kind = 3;
/// A remove of a Rust component.
pub const ECS_COMMAND_REMOVE: ecs_command_kind = 4;
/// An insert of a Rust resource.
pub const ECS_COMMAND_INSERT_RESOURCE: ecs_command_kind = 5;
/// A remove of a Rust resource.
pub const ECS_COMMAND_REMOVE_RESOURCE: ecs_command_kind = 6;
/// Any other command: the hierarchy and disable/enable commands
/// (`ecs_commands_set_parent`, `ecs_commands_despawn_recursive`, ...).
pub const ECS_COMMAND_CUSTOM: ecs_command_kind = 7;
/// `ecs_commands_insert`: a run-time component's bytes.
pub const ECS_COMMAND_INSERT_RAW: ecs_command_kind = 8;
/// `ecs_commands_remove`.
pub const ECS_COMMAND_REMOVE_BY_ID: ecs_command_kind = 9;
/// The number of kinds: the length of the arrays of `ecs_command_report`.
pub const ECS_COMMAND_KINDS: usize = 10;

/// The counts of one apply report, from `ecs_engine_command_report` or
/// `ecs_system_command_report`. The caller sets `struct_size`; the rest is
/// written.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ecs_command_report {
    /// `sizeof(ecs_command_report)`.
    pub struct_size: u32,
    /// Every command the report covers: applied, skipped or no-op.
    pub commands: u64,
    /// Commands applied, by kind (`ECS_COMMAND_*`).
    pub applied: [u64; ECS_COMMAND_KINDS],
    /// Commands skipped because their target was gone (a despawned or
    /// never-spawned entity), by kind: reported, never misapplied.
    pub skipped: [u64; ECS_COMMAND_KINDS],
    /// Commands that had nothing to do (a remove of a component the
    /// entity did not have), by kind.
    pub noops: [u64; ECS_COMMAND_KINDS],
    /// `true` when a command was skipped: the three fields below describe
    /// the first one.
    pub has_skip: bool,
    /// The first skipped command's kind.
    pub first_skip_kind: ecs_command_kind,
    /// Its target entity.
    pub first_skip_entity: ecs_entity,
    /// The system that recorded it: its position among the tick systems
    /// in the order they were added (0 for the first; startup systems are
    /// not counted); in a system's own report, 0.
    pub first_skip_system: usize,
    // Version 2 (API 2.5): written only when `struct_size` covers it.
    /// Commands dropped unapplied because the system that recorded them
    /// failed (`ecs_ctx_fail`, a Rust system's error or panic): its whole
    /// buffer. Not part of `commands`.
    pub discarded: u64,
}

/// The version 1 struct: every field up to `first_skip_system`.
const REPORT_V1: usize = std::mem::offset_of!(ecs_command_report, discarded);

/// `report` in the C struct (`struct_size` kept as the caller's).
fn counts(report: &ApplyReport, struct_size: u32) -> ecs_command_report {
    let by_kind = |count: &dyn Fn(CommandKind) -> usize| {
        let mut out = [0u64; ECS_COMMAND_KINDS];
        for (slot, kind) in out.iter_mut().zip(CommandKind::ALL) {
            *slot = count(kind) as u64;
        }
        out
    };
    let first = report.first_skip();
    ecs_command_report {
        struct_size,
        commands: report.commands() as u64,
        applied: by_kind(&|k| report.applied(k)),
        skipped: by_kind(&|k| report.skipped(k)),
        noops: by_kind(&|k| report.noops(k)),
        has_skip: first.is_some(),
        first_skip_kind: first.map_or(0, |skip| {
            CommandKind::ALL
                .iter()
                .position(|&k| k == skip.kind)
                .unwrap_or(0) as ecs_command_kind
        }),
        first_skip_entity: first.map_or(0, |skip| skip.entity.to_bits()),
        first_skip_system: first.map_or(0, |skip| skip.buffer),
        discarded: report.discarded() as u64,
    }
}

/// Writes `report` to `out` after checking `out->struct_size`.
///
/// # Safety
///
/// `out` is NULL or valid for reads of its `struct_size` and writes of
/// that many bytes (at most a whole `ecs_command_report`).
unsafe fn write_report(
    out: *mut ecs_command_report,
    report: &ApplyReport,
    function: &str,
) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::null(function, "out"));
    }
    // SAFETY: non-null and valid for reads of the first field, by the
    // caller's promise.
    let struct_size = unsafe { out.cast::<u32>().read() };
    check_struct_size(struct_size, REPORT_V1, function, "ecs_command_report")?;
    let counts = counts(report, struct_size);
    // The fields the caller's struct has: an older caller's smaller struct
    // gets the version 1 fields only (never part of a field).
    let covered = if struct_size as usize >= size_of::<ecs_command_report>() {
        size_of::<ecs_command_report>()
    } else {
        REPORT_V1
    };
    // SAFETY: `out` is valid for writes of `struct_size` bytes (the
    // caller's promise), `covered` at most that and at most the local's
    // size; the two do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping((&raw const counts).cast::<u8>(), out.cast::<u8>(), covered);
    }
    Ok(())
}

/// Writes what the last tick's command buffers did, every tick system's
/// together, to `*out`; all zero before the first tick. Startup systems'
/// commands are in no report. A load (`ecs_engine_load`) keeps the report
/// of the last tick run before it. Threading: an engine call (one thread
/// at a time, not from a system).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, out); `ECS_ERR_INVALID_ARGUMENT` when
/// `out->struct_size` is not set (`sizeof(ecs_command_report)`; an older
/// header's smaller struct gets the fields it has);
/// `ECS_ERR_WRONG_STATE` while the engine is busy.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `out` NULL or valid for reads of
/// its `struct_size` and writes of that many bytes (at most a whole
/// `ecs_command_report`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_engine_command_report(
    engine: *const ecs_engine,
    out: *mut ecs_command_report,
) -> ecs_status {
    const F: &str = "ecs_engine_command_report";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.lock(F)?;
        let empty = ApplyReport::default();
        let report = engine
            .built_if_any()
            .map_or(&empty, |built| built.command_report());
        // SAFETY: the caller's promise on `out`.
        unsafe { write_report(out, report, F) }
    })
}

/// Writes what the command buffer of the tick system named `name` did in
/// the last tick to `*out`; all zero for a system that records no
/// commands, did not run, or before the first tick.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, name, out); `ECS_ERR_INVALID_ARGUMENT`
/// when no tick system has the name (a startup system has no report; or
/// the name is not UTF-8), or `out->struct_size`
/// is not set; `ECS_ERR_WRONG_STATE` while the engine is busy or before the
/// build.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `name` NULL or NUL-terminated; `out`
/// NULL or valid for reads of its `struct_size` and writes of that many
/// bytes (at most a whole `ecs_command_report`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_system_command_report(
    engine: *const ecs_engine,
    name: *const c_char,
    out: *mut ecs_command_report,
) -> ecs_status {
    const F: &str = "ecs_system_command_report";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.lock(F)?;
        // SAFETY: NULL or NUL-terminated, by the caller's promise.
        let name = unsafe { string_arg(name, F, "name") }?;
        let built = engine.built_if_any().ok_or_else(|| {
            Failure::new(
                crate::status::ECS_ERR_WRONG_STATE,
                format!("{F}: the schedule is not built yet: call ecs_engine_build first"),
            )
        })?;
        let report = built
            .schedule()
            .system_command_reports()
            .find(|&(_, system, _)| system == name)
            .map(|(_, _, report)| report)
            .ok_or_else(|| {
                Failure::invalid(
                    F,
                    format!("no tick system is named `{name}` (startup systems have no report)"),
                )
            })?;
        // SAFETY: the caller's promise on `out`.
        unsafe { write_report(out, report, F) }
    })
}
