//! The engine handle: the facade's [`ecs_runtime::Engine`] (registry,
//! schedule, thread pool, tick counter and the `Tick` resource), built from
//! the systems C adds, behind a lock that refuses re-entry.

use std::collections::HashSet;

use ::ecs_engine::{Entity, Registry};
use ecs_runtime::{EngineBuilder, EngineError};
use parking_lot::{Mutex, MutexGuard};

use crate::boundary::{arg, call, call_value, check_struct_size, write_out};
use crate::status::{
    ECS_ERR_DUPLICATE_NAME, ECS_ERR_INVALID_ARGUMENT, ECS_ERR_LIMIT, ECS_ERR_SCHEDULE,
    ECS_ERR_WRONG_STATE, Failure, ecs_status,
};

/// An entity handle: `(generation << 32) | index`. Never 0 (generations
/// start at 1); `ECS_ENTITY_NULL` is never alive. A handle belongs to the
/// engine that made it: in another engine it is unknown or names another
/// entity (handles are not tagged per engine, unlike component ids).
pub type ecs_entity = u64;

/// The null entity (`UINT64_MAX`): never alive.
pub const ECS_ENTITY_NULL: ecs_entity = u64::MAX;

/// The most worker threads an engine's pool may have
/// (`ecs_engine_desc.threads`): 1024.
pub const ECS_THREADS_MAX: u32 = 1024;

/// Settings of a new engine.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ecs_engine_desc {
    /// `sizeof(ecs_engine_desc)`: lets later versions add fields.
    pub struct_size: u32,
    /// Worker threads of the engine's pool, 1 to `ECS_THREADS_MAX`.
    pub threads: u32,
    /// The fixed step of a tick, in seconds; 0 means 1/60.
    pub step_seconds: f64,
}

/// The engine before and after its schedule is built.
enum Stage {
    /// Systems are still being added to the facade's builder; `names`
    /// catches duplicates when they are added rather than at the build.
    Building {
        builder: EngineBuilder,
        names: HashSet<String>,
    },
    /// Frozen: ticks run it, through the facade's one tick loop.
    Built(ecs_runtime::Engine),
    /// The build failed (its systems are gone with the consumed builder;
    /// the world is kept): every later build or tick fails with the same
    /// failure.
    Failed {
        registry: Registry,
        failure: Failure,
    },
}

/// An engine: it owns the registry, the systems, the thread pool and the
/// tick counter. Opaque to C; made by `ecs_engine_create`, freed by
/// `ecs_engine_destroy`. Engines are independent: several can live in one
/// process. An engine may move between threads. Every call takes the
/// engine for its duration without waiting: a call made while another one
/// holds it (from a system callback during a tick, from a component's
/// destructor during a call or during `ecs_engine_destroy`, or from a
/// second thread at the same time) fails with `ECS_ERR_WRONG_STATE`
/// instead of racing. One exception: the body of an exclusive system
/// (`ecs_system_desc.run_exclusive`) may make world calls on its thread
/// during the tick.
pub struct ecs_engine {
    state: Mutex<EngineState>,
    /// The world an exclusive system lends its callback (`exclusive.rs`).
    lent: crate::exclusive::LentSlot,
}

/// The engine's state, held by one call at a time.
pub(crate) struct EngineState {
    /// Tags this engine's component ids (see `component::encode`).
    pub(crate) tag: crate::tag::Tag,
    /// The resources registered from C, shared with the systems.
    pub(crate) resources: std::sync::Arc<crate::resource::ResourceStore>,
    /// Per event channel, by index: registered `savable` (its events may
    /// be saved by their bytes).
    pub(crate) savable_events: Vec<bool>,
    stage: Stage,
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
    pub(crate) fn state_if_free(&self) -> Option<MutexGuard<'_, EngineState>> {
        self.state.try_lock()
    }

    /// The engine's state for the call `function`, or `ECS_ERR_WRONG_STATE`
    /// when another call holds it (never waits).
    pub(crate) fn lock(&self, function: &str) -> Result<MutexGuard<'_, EngineState>, Failure> {
        self.state
            .try_lock()
            .ok_or_else(|| crate::exclusive::busy(function))
    }

    /// The slot of the world an exclusive system lends.
    pub(crate) fn lent(&self) -> &crate::exclusive::LentSlot {
        &self.lent
    }
}

impl std::fmt::Debug for EngineState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let systems = match &self.stage {
            Stage::Building { names, .. } => format!("{} added, not built", names.len()),
            Stage::Built(engine) => format!("{} built", engine.schedule().len()),
            Stage::Failed { failure, .. } => format!("build failed: {}", failure.message),
        };
        f.debug_struct("ecs_engine")
            .field("entities", &self.registry().len())
            .field("systems", &systems)
            .field("ticks", &self.ticks())
            .finish()
    }
}

impl From<EngineError> for Failure {
    fn from(error: EngineError) -> Self {
        match error {
            EngineError::Build(error) => error.into(),
            EngineError::Run(error) => error.into(),
            other => Failure::new(ECS_ERR_INVALID_ARGUMENT, other.to_string()),
        }
    }
}

impl EngineState {
    /// The world, in any stage.
    pub(crate) fn registry(&self) -> &Registry {
        match &self.stage {
            Stage::Building { builder, .. } => builder.registry(),
            Stage::Built(engine) => engine.registry(),
            Stage::Failed { registry, .. } => registry,
        }
    }

    /// The world, in any stage, to change between ticks.
    pub(crate) fn registry_mut(&mut self) -> &mut Registry {
        match &mut self.stage {
            Stage::Building { builder, .. } => builder.registry_mut(),
            Stage::Built(engine) => engine.registry_mut(),
            Stage::Failed { registry, .. } => registry,
        }
    }

    /// The built engine, for a snapshot: `ECS_ERR_WRONG_STATE` before the
    /// build (nothing is built here, so a refused call changes nothing),
    /// the build's failure after a failed one.
    pub(crate) fn built_only(
        &mut self,
        function: &str,
    ) -> Result<&mut ecs_runtime::Engine, Failure> {
        match &mut self.stage {
            Stage::Built(engine) => Ok(engine),
            Stage::Building { .. } => Err(Failure::new(
                ECS_ERR_WRONG_STATE,
                format!(
                    "{function}: the schedule is not built yet: call ecs_engine_build (or run a \
                     tick) first; a snapshot holds the systems' progress"
                ),
            )),
            Stage::Failed { failure, .. } => Err(Failure::new(
                failure.status,
                format!("{function}: {}", failure.message),
            )),
        }
    }

    /// Ticks run so far (none before the build).
    fn ticks(&self) -> u64 {
        match &self.stage {
            Stage::Built(engine) => engine.ticks(),
            _ => 0,
        }
    }

    /// The built engine; `None` before the build (or after a failed one).
    pub(crate) fn built_if_any(&self) -> Option<&ecs_runtime::Engine> {
        match &self.stage {
            Stage::Built(engine) => Some(engine),
            _ => None,
        }
    }

    /// Adds a system to the schedule under construction.
    pub(crate) fn add_system(
        &mut self,
        function: &str,
        name: &str,
        add: impl FnOnce(&mut EngineBuilder),
    ) -> Result<(), Failure> {
        let (builder, names) = self.building(function, "add systems")?;
        if !names.insert(name.to_owned()) {
            return Err(Failure::new(
                ECS_ERR_DUPLICATE_NAME,
                format!("{function}: a system named `{name}` already exists"),
            ));
        }
        add(builder);
        Ok(())
    }

    /// Configures the schedule under construction (a set's ordering and
    /// condition).
    pub(crate) fn configure(
        &mut self,
        function: &str,
        configure: impl FnOnce(&mut EngineBuilder),
    ) -> Result<(), Failure> {
        let (builder, _) = self.building(function, "configure sets")?;
        configure(builder);
        Ok(())
    }

    /// The builder and the system names so far, while the schedule is
    /// being built; `ECS_ERR_WRONG_STATE` (saying one can `what` only
    /// before) once it is built or failed.
    fn building(
        &mut self,
        function: &str,
        what: &str,
    ) -> Result<(&mut EngineBuilder, &mut HashSet<String>), Failure> {
        match &mut self.stage {
            Stage::Building { builder, names } => Ok((builder, names)),
            Stage::Failed { failure, .. } => Err(Failure::new(
                ECS_ERR_WRONG_STATE,
                format!(
                    "{function}: the schedule failed to build ({}); its systems are gone: \
                     create a new engine",
                    failure.message
                ),
            )),
            Stage::Built(_) => Err(Failure::new(
                ECS_ERR_WRONG_STATE,
                format!(
                    "{function}: the schedule is already built (by ecs_engine_build or the \
                     first tick); {what} before"
                ),
            )),
        }
    }

    /// Builds the engine if not built yet, and returns it.
    fn built(&mut self) -> Result<&mut ecs_runtime::Engine, Failure> {
        if let Stage::Building { .. } = self.stage {
            // Should the build panic, the engine stays failed, with an
            // empty world (the builder that held it is gone).
            let building = std::mem::replace(
                &mut self.stage,
                Stage::Failed {
                    registry: Registry::new(),
                    failure: Failure::new(
                        ECS_ERR_SCHEDULE,
                        "building the schedule panicked earlier; the world is gone",
                    ),
                },
            );
            let Stage::Building { builder, .. } = building else {
                unreachable!("checked just above");
            };
            self.stage = match builder.build_or_keep_registry() {
                Ok(engine) => Stage::Built(engine),
                Err((error, registry)) => Stage::Failed {
                    registry: *registry,
                    failure: error.into(),
                },
            };
        }
        match &mut self.stage {
            Stage::Built(engine) => Ok(engine),
            Stage::Failed { failure, .. } => Err(failure.clone()),
            Stage::Building { .. } => unreachable!("built above"),
        }
    }

    /// Runs `ticks` ticks on the facade's engine (which sets the `Tick`
    /// resource), building it first if needed; stops at the first failure.
    /// A failed tick still counts: its earlier waves ran.
    fn run(&mut self, ticks: u64) -> Result<(), Failure> {
        self.built()?.run(ticks).map_err(Failure::from)
    }

    /// Drops the world (calling the components' destructors), the systems
    /// and the pool, leaving an empty engine. The caller holds the engine's
    /// lock throughout, so a destructor that calls back in is refused.
    fn clear(&mut self) {
        let old = std::mem::replace(
            &mut self.stage,
            Stage::Failed {
                registry: Registry::new(),
                failure: Failure::new(ECS_ERR_WRONG_STATE, "the engine is being destroyed"),
            },
        );
        drop(old);
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
/// 0 or above `ECS_THREADS_MAX`, or `step_seconds` is negative or not
/// finite; `ECS_ERR_LIMIT` when the process has used up the engine tags
/// of component ids (2^48 - 1 engines: tags are never reused). Nothing is
/// made on failure.
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
        if desc.threads > ECS_THREADS_MAX {
            return Err(Failure::invalid(
                F,
                format!(
                    "`threads` is {}, above ECS_THREADS_MAX ({ECS_THREADS_MAX})",
                    desc.threads
                ),
            ));
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
        let tag = crate::tag::next_tag().ok_or_else(|| {
            Failure::new(
                ECS_ERR_LIMIT,
                format!(
                    "{F}: this process has made {} engines, all the component-id tags \
                     there are (tags are never reused)",
                    crate::tag::MAX_TAG
                ),
            )
        })?;
        let mut builder = ecs_runtime::Engine::builder();
        builder.threads(desc.threads as usize).step(step);
        let engine = Box::new(ecs_engine {
            state: Mutex::new(EngineState {
                tag,
                resources: std::sync::Arc::default(),
                savable_events: Vec::new(),
                stage: Stage::Building {
                    builder,
                    names: HashSet::new(),
                },
            }),
            lent: Mutex::new(None),
        });
        // SAFETY: `out` is non-null and valid for writes (caller's promise).
        unsafe { write_out(out, Box::into_raw(engine), F, "out") }
    })
}

/// Destroys an engine made by `ecs_engine_create`: drops every entity's
/// components (calling their destructors), the systems and the pool. NULL
/// is a no-op. The engine stays busy until the call returns: a component
/// destructor that calls the engine meanwhile gets `ECS_ERR_WRONG_STATE`.
/// An engine that is busy (called from one of its own systems during a
/// tick, or from a component destructor during a call or this destroy) is
/// not destroyed: the call does nothing but set the last error message.
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
        let Some(mut state) = live.state_if_free() else {
            crate::boundary::set_last_error(
                "ecs_engine_destroy: the engine is busy (a tick or another call is running, \
                 or it is being destroyed and a component destructor called this): not destroyed",
            );
            return;
        };
        // The world, the systems and the pool are dropped while the engine
        // is held: a component destructor that calls back in gets
        // ECS_ERR_WRONG_STATE, and its ecs_engine_destroy does nothing.
        state.clear();
        drop(state);
        // SAFETY: made by `Box::into_raw` in `ecs_engine_create` and not
        // freed yet (the caller's promise); no call holds it: the guard
        // above is gone, and no other thread uses it (the caller's promise).
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
        engine.built().map(drop)
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
        engine.run(1)
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
        engine.run(ticks)
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
        unsafe { write_out(out, engine.ticks(), F, "out") }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::ECS_OK;
    use scheduler::Tick;

    #[test]
    fn a_tick_sets_the_tick_resource_as_the_rust_engine_does() {
        let desc = ecs_engine_desc {
            struct_size: ENGINE_DESC_V1 as u32,
            threads: 1,
            step_seconds: 0.25,
        };
        let mut engine = std::ptr::null_mut();
        // SAFETY: both pointers are valid for the call.
        assert_eq!(unsafe { ecs_engine_create(&desc, &mut engine) }, ECS_OK);
        // SAFETY: a live engine, used by this thread only.
        assert_eq!(unsafe { ecs_engine_run(engine, 3) }, ECS_OK);
        {
            // SAFETY: a live engine.
            let state = unsafe { &*engine }.lock("test").unwrap();
            let tick = *state.registry().resource::<Tick>().unwrap();
            assert_eq!((tick.number, tick.step), (2, 0.25));
            assert_eq!(state.ticks(), 3);
        }
        // SAFETY: a live engine, destroyed once.
        unsafe { ecs_engine_destroy(engine) };
    }
}
