//! In-memory states of a whole [`Engine`]: [`Engine::save_state`] and
//! [`Engine::restore_state`], for rollback, replays and "what if"
//! branches, with no serde and no entity-by-entity copy.

use command_buffer::ReserveState;
use ecs_engine::Registry;
use ecs_engine::{Component, RegistryState, StateError};
use scheduler::{RestoreReservesError, Schedule, SystemStateError, SystemStates};

use super::Engine;

/// Why [`Engine::save_state`] or [`Engine::restore_state`] refused;
/// nothing changed then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineStateError {
    /// The registry could not be saved or restored (a component without a
    /// clone, or a state of a registry with other types).
    #[error(transparent)]
    Registry(#[from] StateError),
    /// A system's state could not be saved, or the state came from
    /// another schedule.
    #[error(transparent)]
    Systems(#[from] SystemStateError),
    /// The command buffers' saved reserves do not fit the restored
    /// registry (a state of another engine).
    #[error(transparent)]
    Reserves(#[from] RestoreReservesError),
}

/// A whole engine saved in memory by [`Engine::save_state`]: the
/// registry ([`RegistryState`]: every pool, the allocator, change ticks,
/// the hierarchy, disabled marks, the resources that opted in, among
/// them event channels with their readers' cursors), every system's own
/// state and its parameters' state ([`SystemStates`]: `Local` values,
/// last-run change ticks), every command buffer's reserve, and the tick
/// counter.
///
/// The [`Tick`](scheduler::Tick) and [`WorldSeed`](scheduler::WorldSeed)
/// resources are saved from the start ([`Random`](scheduler::Random)
/// streams are a function of the seed, the system and the tick: nothing
/// else to save). Not saved: resources whose type did not
/// opt in (named by [`unsaved_resources`](Self::unsaved_resources)),
/// input still in the input queues, and the real-time clock of
/// [`Engine::advance`].
#[derive(Debug)]
pub struct EngineState {
    registry: RegistryState,
    systems: SystemStates,
    reserves: Vec<(String, ReserveState)>,
    ticks: u64,
}

impl EngineState {
    /// The number of ticks run at the save ([`Engine::ticks`]).
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// The registry's part.
    pub fn registry(&self) -> &RegistryState {
        &self.registry
    }

    /// The resources left out of the state (see
    /// [`RegistryState::unsaved_resources`]).
    pub fn unsaved_resources(&self) -> &[&'static str] {
        self.registry.unsaved_resources()
    }
}

/// An engine's registry, schedule and tick counter, borrowed mutably
/// together ([`Engine::parts_mut`]).
#[derive(Debug)]
pub struct EngineParts<'a> {
    /// The world.
    pub registry: &'a mut Registry,
    /// The systems, their states and command buffers.
    pub schedule: &'a mut Schedule,
    /// Ticks run so far ([`Engine::ticks`]): the next tick's number.
    pub ticks: &'a mut u64,
}

impl Engine {
    /// The registry, the schedule and the tick counter at once, for code
    /// that puts a saved engine back part by part (the `ecs_snapshot`
    /// crate's `Snapshots::load_engine`). Use it between ticks; unlike
    /// [`set_ticks`](Self::set_ticks), setting `ticks` here ages no event
    /// channel.
    pub fn parts_mut(&mut self) -> EngineParts<'_> {
        EngineParts {
            registry: &mut self.registry,
            schedule: &mut self.schedule,
            ticks: &mut self.ticks,
        }
    }

    /// Lets states copy component `T` (see
    /// [`Registry::register_clone`](ecs_engine::Registry::register_clone)).
    pub fn register_clone<T: Component + Clone>(&mut self) -> &mut Self {
        self.registry.register_clone::<T>();
        self
    }

    /// Lets states copy resource `R`, an event channel
    /// ([`Events<T>`](scheduler::Events)) included (see
    /// [`Registry::register_resource_clone`](ecs_engine::Registry::register_resource_clone)).
    pub fn register_resource_clone<R: Clone + Send + Sync + 'static>(&mut self) -> &mut Self {
        self.registry.register_resource_clone::<R>();
        self
    }

    /// Lets states copy resource `R`, and a save shares the previous
    /// save's copy while nothing took `R` for writing since (see
    /// [`Registry::register_resource_clone_delta`](ecs_engine::Registry::register_resource_clone_delta)):
    /// for a type whose value changes only through `&mut` access.
    pub fn register_resource_clone_delta<R: Clone + Send + Sync + 'static>(&mut self) -> &mut Self {
        self.registry.register_resource_clone_delta::<R>();
        self
    }

    /// Lets states copy component `T`, and saves copy only the `T`s
    /// written since (see
    /// [`Registry::register_clone_delta`](ecs_engine::Registry::register_clone_delta)):
    /// for a tracked type whose values change only through `&mut` access.
    pub fn register_clone_delta<T: Component + Clone>(&mut self) -> &mut Self {
        self.registry.register_clone_delta::<T>();
        self
    }

    /// Lets states copy a system's state of type `T`: a `Local<T>`, or a
    /// [`StatefulSystem`](scheduler::StatefulSystem) of type `T` (see
    /// [`Schedule::register_state_clone`](scheduler::Schedule::register_state_clone)).
    pub fn register_state_clone<T: Clone + Send + 'static>(&mut self) -> &mut Self {
        self.schedule.register_state_clone::<T>();
        self
    }

    /// The whole engine, saved in memory between ticks: see
    /// [`EngineState`].
    ///
    /// # Errors
    ///
    /// [`EngineStateError::Registry`] naming a component without a clone;
    /// [`EngineStateError::Systems`] naming a system whose state has no
    /// clone.
    pub fn save_state(&self) -> Result<EngineState, EngineStateError> {
        Ok(EngineState {
            registry: self.registry.save_state()?,
            systems: self.schedule.save_system_states()?,
            reserves: self.schedule.command_reserves(),
            ticks: self.ticks,
        })
    }

    /// [`save_state`](Self::save_state) into `state`, reusing the memory
    /// of its pools where the types match (see
    /// [`Registry::save_state_into`](ecs_engine::Registry::save_state_into)):
    /// a rollback loop that saves every tick allocates little once warm.
    ///
    /// # Errors
    ///
    /// As [`save_state`](Self::save_state); `state` is unchanged then.
    pub fn save_state_into(&self, state: &mut EngineState) -> Result<(), EngineStateError> {
        let systems = self.schedule.save_system_states()?;
        self.registry.save_state_into(&mut state.registry)?;
        state.systems = systems;
        state.reserves = self.schedule.command_reserves();
        state.ticks = self.ticks;
        Ok(())
    }

    /// Makes the engine what it was when `state` was saved, from this
    /// engine or another one built the same way (same systems, component
    /// types registered in the same order): the next ticks then run as
    /// they ran after the save, with the same entity handles, and every
    /// handle a `commands.spawn()` returns names the entity it becomes,
    /// never one of the restored world. Call it between ticks.
    ///
    /// # Errors
    ///
    /// [`EngineStateError::Systems`] when the state's systems are not this
    /// schedule's; [`EngineStateError::Reserves`] when its command
    /// buffers' reserves do not fit this schedule (a system of the same
    /// name without commands); [`EngineStateError::Registry`] when its
    /// component types differ; all checked before anything changes.
    pub fn restore_state(&mut self, state: &EngineState) -> Result<(), EngineStateError> {
        state.systems.check(&self.schedule)?;
        self.schedule
            .check_command_reserves(state.registry.entities(), &state.reserves)?;
        self.registry.restore_state(&state.registry)?;
        self.schedule
            .restore_command_reserves(&mut self.registry, state.reserves.clone())?;
        self.schedule.restore_system_states(&state.systems)?;
        self.ticks = state.ticks;
        Ok(())
    }
}
