//! The command report from C (through the rlib): the last tick's applied,
//! skipped and no-op commands by kind, for the whole tick and per system,
//! with the first skipped command; bad calls refused with a status.

use crate::common;

use std::ffi::c_void;
use std::ptr;

use common::*;
use ecs_capi::*;

/// What the recording systems share.
struct Targets {
    /// An entity despawned before the tick (every command on it skips).
    gone: ecs_entity,
    /// A live entity without `marker`.
    alive: ecs_entity,
    marker: ecs_component_id,
}

/// The recording system's command buffer.
///
/// # Safety
///
/// `ctx` is the running system's context.
unsafe fn buffer(ctx: *mut ecs_system_ctx) -> *mut ecs_commands {
    let mut commands = ptr::null_mut();
    // SAFETY: the running context; `commands` is a local.
    ok(unsafe { ecs_ctx_commands(ctx, &mut commands) });
    commands
}

/// Spawns two entities and despawns the gone one (skipped).
unsafe extern "C" fn spawner(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: the test's `Targets`, alive across the tick.
    let targets = unsafe { &*user.cast::<Targets>() };
    // SAFETY: the running context.
    let commands = unsafe { buffer(ctx) };
    let mut e = 0;
    // SAFETY: a live buffer; `e` is a local.
    unsafe {
        ok(ecs_commands_spawn(commands, &mut e));
        ok(ecs_commands_spawn(commands, &mut e));
        ok(ecs_commands_despawn(commands, targets.gone));
    }
}

/// Removes a component the live entity lacks (a no-op) and one from the
/// gone entity (skipped).
unsafe extern "C" fn remover(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: the test's `Targets`, alive across the tick.
    let targets = unsafe { &*user.cast::<Targets>() };
    // SAFETY: the running context.
    let commands = unsafe { buffer(ctx) };
    // SAFETY: a live buffer.
    unsafe {
        ok(ecs_commands_remove(commands, targets.alive, targets.marker));
        ok(ecs_commands_remove(commands, targets.gone, targets.marker));
    }
}

fn report(
    engine: &Engine,
    system: Option<&std::ffi::CStr>,
) -> Result<ecs_command_report, ecs_status> {
    // SAFETY: an all-zero report is a valid value (numbers and `false`).
    let mut out: ecs_command_report = unsafe { std::mem::zeroed() };
    out.struct_size = size_of::<ecs_command_report>() as u32;
    // SAFETY: a live engine; `out` and the name are locals.
    let status = unsafe {
        match system {
            None => ecs_engine_command_report(engine.raw(), &mut out),
            Some(name) => ecs_system_command_report(engine.raw(), name.as_ptr(), &mut out),
        }
    };
    if status == ECS_OK {
        Ok(out)
    } else {
        Err(status)
    }
}

const SPAWN: usize = ECS_COMMAND_SPAWN as usize;
const DESPAWN: usize = ECS_COMMAND_DESPAWN as usize;
const REMOVE: usize = ECS_COMMAND_REMOVE_BY_ID as usize;

/// An engine with a `Marker` component, a despawned and a live entity,
/// and two recording systems: `spawner` (as given), then `remover`. The
/// targets are the systems' user data: keep them while the engine lives.
fn recording_engine(threads: u32, spawner: ecs_system_fn) -> (Engine, Box<Targets>) {
    let engine = Engine::new(threads);
    let marker = engine.register::<u32>(c"Marker");
    let gone = engine.spawn();
    ok(engine.despawn(gone));
    let alive = engine.spawn();
    let targets = Box::new(Targets {
        gone,
        alive,
        marker,
    });
    let user = (&raw const *targets).cast_mut().cast();
    for (name, run) in [("spawner", spawner), ("remover", Some(remover))] {
        let mut spec = SystemSpec::new(name, run);
        spec.user_data = user;
        spec.commands = true;
        ok(spec.add(&engine));
    }
    (engine, targets)
}

#[test]
fn the_report_counts_each_kind_for_the_tick_and_each_system() {
    for threads in [1, 4] {
        let (engine, targets) = recording_engine(threads, Some(spawner));
        let gone = targets.gone;
        // Before the first tick: all zero.
        let before = report(&engine, None).unwrap();
        assert_eq!((before.commands, before.has_skip), (0, false));
        ok(engine.tick());

        let tick = report(&engine, None).unwrap();
        assert_eq!(tick.commands, 5);
        assert_eq!(tick.applied[SPAWN], 2);
        assert_eq!(tick.skipped[DESPAWN], 1);
        assert_eq!(tick.noops[REMOVE], 1);
        assert_eq!(tick.skipped[REMOVE], 1);
        assert_eq!(tick.applied.iter().sum::<u64>(), 2);
        assert!(tick.has_skip);
        // The first skip is the spawner's despawn (systems added first apply first).
        assert_eq!(
            (
                tick.first_skip_kind,
                tick.first_skip_entity,
                tick.first_skip_system
            ),
            (ECS_COMMAND_DESPAWN, gone, 0)
        );

        let remover = report(&engine, Some(c"remover")).unwrap();
        assert_eq!(remover.commands, 2);
        assert_eq!((remover.noops[REMOVE], remover.skipped[REMOVE]), (1, 1));
        assert_eq!(
            (remover.first_skip_kind, remover.first_skip_entity),
            (ECS_COMMAND_REMOVE_BY_ID, gone)
        );
        let spawner = report(&engine, Some(c"spawner")).unwrap();
        assert_eq!((spawner.commands, spawner.applied[SPAWN]), (3, 2));
        assert_eq!(engine.count(), 3);
    }
}

#[test]
fn bad_report_calls_return_a_status() {
    let engine = Engine::new(1);
    fails(
        report(&engine, Some(c"nobody")).unwrap_err(),
        ECS_ERR_WRONG_STATE,
        "not built",
    );
    ok(engine.build());
    fails(
        report(&engine, Some(c"nobody")).unwrap_err(),
        ECS_ERR_INVALID_ARGUMENT,
        "`nobody`",
    );
    // SAFETY: NULL `out` on purpose.
    let status = unsafe { ecs_engine_command_report(engine.raw(), ptr::null_mut()) };
    fails(status, ECS_ERR_NULL_POINTER, "out");
    // SAFETY: an all-zero report is valid; its `struct_size` 0 is refused.
    let mut unset: ecs_command_report = unsafe { std::mem::zeroed() };
    // SAFETY: a live engine; `unset` is a local.
    let status = unsafe { ecs_engine_command_report(engine.raw(), &mut unset) };
    fails(status, ECS_ERR_INVALID_ARGUMENT, "struct_size");
    // SAFETY: NULL name on purpose.
    let status = unsafe { ecs_system_command_report(engine.raw(), ptr::null(), &mut unset) };
    fails(status, ECS_ERR_NULL_POINTER, "name");
}

/// Spawns twice and despawns the gone entity, then fails.
unsafe extern "C" fn spawner_that_fails(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: the same promises as `spawner`; the message is a C string.
    unsafe {
        spawner(ctx, user);
        ecs_ctx_fail(ctx, c"no room".as_ptr());
    }
}

/// A failed system's commands are dropped and counted as `discarded`,
/// apart from `commands`; a caller of the version 1 struct (API 2.4 and
/// before, without the field) gets its fields and nothing written past
/// them.
#[test]
fn a_failed_systems_commands_are_counted_as_discarded() {
    let (engine, _targets) = recording_engine(2, Some(spawner_that_fails));
    fails(engine.tick(), ECS_ERR_SYSTEM_FAILED, "no room");
    let tick = report(&engine, None).unwrap();
    assert_eq!((tick.discarded, tick.commands), (3, 2));
    assert_eq!(tick.applied[SPAWN], 0);
    let spawner = report(&engine, Some(c"spawner")).unwrap();
    assert_eq!((spawner.discarded, spawner.commands), (3, 0));
    let remover = report(&engine, Some(c"remover")).unwrap();
    assert_eq!((remover.discarded, remover.commands), (0, 2));
    assert_eq!(engine.count(), 1, "no spawn landed");

    // SAFETY: an all-zero report is a valid value.
    let mut old: ecs_command_report = unsafe { std::mem::zeroed() };
    let v1 = std::mem::offset_of!(ecs_command_report, discarded);
    old.struct_size = v1 as u32;
    old.discarded = 99;
    // SAFETY: a live engine; `old` is a local, larger than it says.
    ok(unsafe { ecs_engine_command_report(engine.raw(), &mut old) });
    assert_eq!((old.commands, old.discarded), (2, 99));
    // Between the versions: the version 1 fields, never part of one.
    old.struct_size = v1 as u32 + 4;
    // SAFETY: as above.
    ok(unsafe { ecs_engine_command_report(engine.raw(), &mut old) });
    assert_eq!((old.commands, old.discarded), (2, 99));
    old.struct_size = v1 as u32 - 1;
    // SAFETY: as above.
    let status = unsafe { ecs_engine_command_report(engine.raw(), &mut old) };
    fails(status, ECS_ERR_INVALID_ARGUMENT, "struct_size");
}
