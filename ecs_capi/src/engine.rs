//! The engine handle: a registry, the systems and their schedule, a thread
//! pool, and the tick counter.

use std::collections::HashSet;
use std::time::Instant;

use ::ecs_engine::{Entity, Registry};
use parking_lot::{Mutex, MutexGuard};
use scheduler::{Schedule, ScheduleBuilder, Tick};

use crate::boundary::{arg, call, call_value, check_struct_size, write_out};
use crate::status::{
    ECS_ERR_DUPLICATE_NAME, ECS_ERR_INVALID_ARGUMENT, ECS_ERR_SCHEDULE, ECS_ERR_WRONG_STATE,
    Failure, ecs_status,
};

/// An entity handle: `(generation << 32) | index`. Never 0 (generations
/// start at 1); `ECS_ENTITY_NULL` is never alive. A handle belongs to the
/// engine that made it: in another engine it is unknown or names another
/// entity (handles are not tagged per engine, unlike component ids).
#[allow(non_camel_case_types)]
pub type ecs_entity = u64;

/// The null entity (`UINT64_MAX`): never alive.
pub const ECS_ENTITY_NULL: ecs_entity = u64::MAX;

/// Settings of a new engine.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ecs_engine_desc {
    /// `sizeof(ecs_engine_desc)`: lets later versions add fields.
    pub struct_size: u32,
    /// Worker threads of the engine's pool, at least 1.
    pub threads: u32,
    /// The fixed step of a tick, in seconds; 0 means 1/60.
    pub step_seconds: f64,
}

/// The schedule before and after it is built.
enum Systems {
    /// Systems are still being added; `names` catches duplicates early.
    Building {
        builder: ScheduleBuilder,
        names: HashSet<String>,
    },
    /// Frozen: ticks run it.
    Built(Schedule),
    /// The build failed (its systems are gone with the consumed builder):
    /// every later build or tick fails with the same failure.
    Failed(Failure),
}

/// An engine: it owns the registry, the systems, the thread pool and the
/// tick counter. Opaque to C; made by `ecs_engine_create`, freed by
/// `ecs_engine_destroy`. Engines are independent: several can live in one
/// process. An engine may move between threads. Every call takes the
/// engine for its duration without waiting: a call made while another one
/// holds it (from a system callback during a tick, or from a second thread
/// at the same time) fails with `ECS_ERR_WRONG_STATE` instead of racing.
pub struct ecs_engine {
    state: Mutex<Engine>,
}

/// The engine's state, held by one call at a time.
pub(crate) struct Engine {
    pub(crate) registry: Registry,
    /// Tags this engine's component ids (see `component::encode`).
    pub(crate) tag: u32,
    systems: Systems,
    step: f64,
    ticks: u64,
    last_start: Option<Instant>,
}

impl std::fmt::Debug for ecs_engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.state.try_lock() {
            Some(engine) => engine.fmt(f),
            None => f.write_str("ecs_engine (busy)"),
        }
    }
}

impl ecs_engine {
    /// The engine's state, or `None` when another call holds it.
    pub(crate) fn state_if_free(&self) -> Option<MutexGuard<'_, Engine>> {
        self.state.try_lock()
    }

    /// The engine's state for the call `function`, or `ECS_ERR_WRONG_STATE`
    /// when another call holds it (never waits).
    pub(crate) fn lock(&self, function: &str) -> Result<MutexGuard<'_, Engine>, Failure> {
        self.state.try_lock().ok_or_else(|| {
            Failure::new(
                ECS_ERR_WRONG_STATE,
                format!(
                    "{function}: the engine is busy: a tick is running (a system must use its \
                     ecs_system_ctx and ecs_ctx_commands, not the engine) or another thread \
                     is using it"
                ),
            )
        })
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let systems = match &self.systems {
            Systems::Building { names, .. } => format!("{} added, not built", names.len()),
            Systems::Built(schedule) => format!("{} built", schedule.len()),
            Systems::Failed(failure) => format!("build failed: {}", failure.message),
        };
        f.debug_struct("ecs_engine")
            .field("entities", &self.registry.len())
            .field("systems", &systems)
            .field("step", &self.step)
            .field("ticks", &self.ticks)
            .finish()
    }
}

impl Engine {
    /// Adds a system to the schedule under construction.
    pub(crate) fn add_system(
        &mut self,
        function: &str,
        name: &str,
        add: impl FnOnce(&mut ScheduleBuilder),
    ) -> Result<(), Failure> {
        if let Systems::Failed(failure) = &self.systems {
            return Err(Failure::new(
                ECS_ERR_WRONG_STATE,
                format!(
                    "{function}: the schedule failed to build ({}); its systems are gone: \
                     create a new engine",
                    failure.message
                ),
            ));
        }
        let Systems::Building { builder, names } = &mut self.systems else {
            return Err(Failure::new(
                ECS_ERR_WRONG_STATE,
                format!(
                    "{function}: the schedule is already built (by ecs_engine_build or the \
                     first tick); add systems before"
                ),
            ));
        };
        if !names.insert(name.to_owned()) {
            return Err(Failure::new(
                ECS_ERR_DUPLICATE_NAME,
                format!("{function}: a system named `{name}` already exists"),
            ));
        }
        add(builder);
        Ok(())
    }

    /// Builds the schedule if not built yet.
    fn build(&mut self) -> Result<(), Failure> {
        if let Systems::Building { .. } = self.systems {
            let building = std::mem::replace(
                &mut self.systems,
                Systems::Failed(Failure::new(
                    ECS_ERR_SCHEDULE,
                    "building the schedule panicked earlier",
                )),
            );
            let Systems::Building { builder, .. } = building else {
                unreachable!("checked just above");
            };
            self.systems = match builder.build(&mut self.registry) {
                Ok(schedule) => Systems::Built(schedule),
                Err(error) => Systems::Failed(error.into()),
            };
        }
        match &mut self.systems {
            Systems::Built(_) => Ok(()),
            Systems::Failed(failure) => Err(failure.clone()),
            Systems::Building { .. } => unreachable!("built above"),
        }
    }

    fn tick(&mut self) -> Result<(), Failure> {
        let step = self.step;
        let number = self.ticks;
        let now = Instant::now();
        let delta = self
            .last_start
            .map_or(0.0, |last| now.duration_since(last).as_secs_f64());
        self.last_start = Some(now);
        self.build()?;
        let Systems::Built(schedule) = &mut self.systems else {
            unreachable!("built just above");
        };
        let tick = Tick {
            number,
            step,
            delta,
        };
        // A failed tick still counts: its earlier waves ran.
        let result = schedule.run(&mut self.registry, tick);
        self.ticks += 1;
        result.map_err(Failure::from)
    }
}

/// The smallest `ecs_engine_desc` this library accepts (version 1).
const ENGINE_DESC_V1: usize = std::mem::size_of::<ecs_engine_desc>();

/// Creates an engine with `desc`'s settings and writes it to `*out`.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` when `desc` or `out` is NULL;
/// `ECS_ERR_INVALID_ARGUMENT` when `struct_size` is too small, `threads` is
/// 0, or `step_seconds` is negative or not finite.
///
/// # Safety
///
/// `desc` is NULL or points at an `ecs_engine_desc`; `out` is NULL or valid
/// for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_engine_create(
    desc: *const ecs_engine_desc,
    out: *mut *mut ecs_engine,
) -> ecs_status {
    const F: &str = "ecs_engine_create";
    call(F, || {
        // SAFETY: the caller's promise on `desc`.
        let desc = unsafe { arg(desc, F, "desc") }?;
        if out.is_null() {
            return Err(Failure::null(F, "out"));
        }
        check_struct_size(desc.struct_size, ENGINE_DESC_V1, F, "ecs_engine_desc")?;
        if desc.threads == 0 {
            return Err(Failure::invalid(F, "`threads` is 0; give at least 1"));
        }
        let step = match desc.step_seconds {
            0.0 => 1.0 / 60.0,
            s if s.is_finite() && s > 0.0 => s,
            s => {
                return Err(Failure::new(
                    ECS_ERR_INVALID_ARGUMENT,
                    format!("{F}: `step_seconds` is {s}; give a positive number of seconds or 0"),
                ));
            }
        };
        let mut builder = Schedule::builder();
        builder.threads(desc.threads as usize);
        let engine = Box::new(ecs_engine {
            state: Mutex::new(Engine {
                registry: Registry::new(),
                tag: crate::component::next_tag(),
                systems: Systems::Building {
                    builder,
                    names: HashSet::new(),
                },
                step,
                ticks: 0,
                last_start: None,
            }),
        });
        // SAFETY: `out` is non-null and valid for writes (caller's promise).
        unsafe { write_out(out, Box::into_raw(engine), F, "out") }
    })
}

/// Destroys an engine made by `ecs_engine_create`: drops every entity's
/// components (calling their destructors), the systems and the pool. NULL
/// is a no-op. An engine that is busy (called from one of its own systems
/// during a tick) is not destroyed: the call does nothing but set the last
/// error message.
///
/// # Safety
///
/// `engine` is NULL or an engine from `ecs_engine_create` not destroyed
/// yet, used by no other thread; it is invalid afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_engine_destroy(engine: *mut ecs_engine) {
    call_value("ecs_engine_destroy", (), || {
        // SAFETY: NULL or a live engine (the caller's promise).
        let Some(live) = (unsafe { engine.as_ref() }) else {
            return;
        };
        if live.state_if_free().is_none() {
            crate::boundary::set_last_error(
                "ecs_engine_destroy: the engine is busy (a tick is running): not destroyed",
            );
            return;
        }
        // SAFETY: made by `Box::into_raw` in `ecs_engine_create` and not
        // freed yet (the caller's promise); no call holds it.
        drop(unsafe { Box::from_raw(engine) });
    });
}

/// Validates and freezes the schedule. The first tick does it when this is
/// not called. Afterwards no system can be added.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; `ECS_ERR_SCHEDULE` for a cycle or a `before` /
/// `after` naming no system. A schedule that failed to build stays failed:
/// later builds and ticks return the same error.
///
/// # Safety
///
/// `engine` is NULL or a live engine used by no other thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_engine_build(engine: *mut ecs_engine) -> ecs_status {
    const F: &str = "ecs_engine_build";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.lock(F)?;
        engine.build()
    })
}

/// Runs one tick: every wave of systems, each wave's command buffers
/// applied after it in registration order.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`; build errors as for `ecs_engine_build`;
/// `ECS_ERR_SYSTEM_FAILED` when a system panicked or failed (the message
/// names it). A failed tick still counts; the engine stays usable.
///
/// # Safety
///
/// `engine` is NULL or a live engine used by no other thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_engine_tick(engine: *mut ecs_engine) -> ecs_status {
    const F: &str = "ecs_engine_tick";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.lock(F)?;
        engine.tick()
    })
}

/// Runs `ticks` ticks, stopping at the first failure.
///
/// # Errors
///
/// As `ecs_engine_tick`.
///
/// # Safety
///
/// `engine` is NULL or a live engine used by no other thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_engine_run(engine: *mut ecs_engine, ticks: u64) -> ecs_status {
    const F: &str = "ecs_engine_run";
    call(F, || {
        // SAFETY: the caller's promise on `engine`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.lock(F)?;
        (0..ticks).try_for_each(|_| engine.tick())
    })
}

/// Writes the number of ticks run so far to `*out`: a tick in which a
/// system failed counts (its earlier waves ran); one refused because the
/// schedule could not be built does not.
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER`.
///
/// # Safety
///
/// `engine` is NULL or a live engine; `out` is NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_engine_ticks(engine: *const ecs_engine, out: *mut u64) -> ecs_status {
    const F: &str = "ecs_engine_ticks";
    call(F, || {
        // SAFETY: the caller's promise on `engine` and `out`.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let engine = engine.lock(F)?;
        // SAFETY: `out` is checked for NULL there and valid for writes by the caller's promise.
        unsafe { write_out(out, engine.ticks, F, "out") }
    })
}

/// `bits` as an entity handle, or a stale-entity failure.
pub(crate) fn entity(bits: ecs_entity, function: &str) -> Result<Entity, Failure> {
    Entity::from_bits(bits).ok_or_else(|| {
        Failure::new(
            crate::status::ECS_ERR_STALE_ENTITY,
            format!("{function}: {bits:#x} is not an entity handle (generation 0)"),
        )
    })
}
