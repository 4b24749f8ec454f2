//! Adding state types and their enter and exit systems to a
//! [`ScheduleBuilder`], checking them at build, and running the
//! transitions at the start of a tick.

use std::any::{Any, TypeId};

use ecs_engine::Registry;

use super::driver::{Driver, TypedDriver};
use super::{States, state_type};
use crate::names::{self, NameSource};
use crate::slot::{Slot, system_buffer};
use crate::system::condition::SharedCondition;
use crate::{BuildError, IntoSystem, ScheduleBuilder, System, SystemId};

/// An enter or exit system waiting for the build.
struct PendingHook {
    state: (TypeId, &'static str),
    enter: bool,
    value: Box<dyn Any + Send>,
    system: Box<dyn System>,
}

/// What [`ScheduleBuilder::add_state`] and the enter and exit systems
/// collect.
#[derive(Default)]
pub(crate) struct StateBuilder {
    drivers: Vec<Box<dyn Driver>>,
    /// The first state type added twice.
    duplicate: Option<&'static str>,
    hooks: Vec<PendingHook>,
}

/// A built schedule's state types (in the order added) and their enter
/// and exit systems' slots.
#[derive(Default)]
pub(crate) struct StateRunner {
    pub(crate) drivers: Vec<Box<dyn Driver>>,
    pub(crate) slots: Vec<Slot>,
}

impl StateBuilder {
    fn knows(&self, state: TypeId) -> bool {
        self.drivers.iter().any(|d| d.state_id() == state)
    }

    /// Every [`in_state`](super::in_state) condition names a state type
    /// that was added: the first that does not is the error, with its
    /// system.
    pub(crate) fn check_conditions<'a>(
        &self,
        systems: impl Iterator<Item = (&'a String, &'a Vec<SharedCondition>)>,
    ) -> Result<(), BuildError> {
        for (system, conditions) in systems {
            for condition in conditions {
                if let Some((id, name)) = condition.lock().condition().state_type()
                    && !self.knows(id)
                {
                    return Err(BuildError::UnknownState {
                        system: system.clone(),
                        state: crate::short_name(name),
                    });
                }
            }
        }
        Ok(())
    }

    /// Checks the state types and their systems, inserts each type's
    /// `State` and `NextState` resources where missing, and makes the
    /// systems' slots, whose event keys start at `events_key`.
    pub(crate) fn build(
        self,
        registry: &mut Registry,
        events_key: usize,
        strict: bool,
    ) -> Result<StateRunner, BuildError> {
        if let Some(state) = self.duplicate {
            return Err(BuildError::DuplicateState {
                state: crate::short_name(state),
            });
        }
        let sources: Vec<NameSource> = self
            .hooks
            .iter()
            .map(|hook| match hook.system.type_path() {
                Some(path) => NameSource::Path(path.into_owned()),
                None => NameSource::Chosen(hook.system.default_name().into_owned()),
            })
            .collect();
        let names = names::assign(&sources)?;
        let mut drivers = self.drivers;
        let mut slots = Vec::with_capacity(self.hooks.len());
        for (index, (hook, name)) in self.hooks.into_iter().zip(names).enumerate() {
            let Some(driver) = drivers.iter_mut().find(|d| d.state_id() == hook.state.0) else {
                return Err(BuildError::UnknownState {
                    system: name,
                    state: crate::short_name(hook.state.1),
                });
            };
            driver.attach(hook.enter, hook.value, index);
            let id = SystemId(index);
            let buffer = system_buffer(None);
            let key = events_key + index;
            slots.push(Slot::plain(
                id,
                key,
                name,
                hook.system,
                buffer,
                strict,
                registry,
            ));
        }
        for driver in &mut drivers {
            driver.init(registry);
        }
        Ok(StateRunner { drivers, slots })
    }
}

impl ScheduleBuilder {
    /// Adds state type `S` starting at `initial`: inserts the resources
    /// [`State<S>`](super::State) (`initial`, unless the registry already
    /// holds one, e.g. from a snapshot) and
    /// [`NextState<S>`](super::NextState) at build, and applies their
    /// transitions at the start of each tick. A type added twice is a
    /// [`BuildError::DuplicateState`](crate::BuildError::DuplicateState).
    ///
    /// # When a transition happens
    ///
    /// At one fixed point: the start of
    /// [`Schedule::run`](crate::Schedule::run),
    /// after the startup systems (on the first tick) and before the first
    /// wave. For each state type, in the order of the `add_state` calls: when
    /// `NextState<S>` holds a request, it is taken, the current value's
    /// exit systems run (they still see the old `State<S>`), `State<S>`
    /// becomes the new value, and the new value's enter systems run. So a `NextState` set during tick `n` is the state of
    /// tick `n + 1` from its first wave on. On the first tick the initial
    /// value's enter systems run (there is nothing to leave), and nothing
    /// else: a `NextState` set before the first tick applies at the start
    /// of the second. [`NextState::set`](super::NextState::set) of the
    /// current value is an identity transition (its exit systems, then its
    /// enter systems again); [`NextState::set_if_neq`](super::NextState::set_if_neq)
    /// of the current value does nothing.
    ///
    /// Enter and exit systems run one at a time, in registration order, each
    /// followed by its commands (as startup systems do), on the tick's pool,
    /// so the outcome does not depend on the thread count. A `NextState` set
    /// by an enter or exit system is applied at the start of the next tick.
    /// A failing enter or exit system stops the tick with its error before
    /// the first wave; the transition's request is used up (an exit system
    /// that fails leaves `State<S>` as it was; set `NextState` again to
    /// retry).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{Commands, NextState, ResMut, Schedule, Tick};
    ///
    /// #[derive(Debug, Clone, PartialEq)]
    /// enum Level {
    ///     One,
    ///     Two,
    /// }
    /// struct Wall(Level);
    ///
    /// fn build_one(mut commands: Commands) {
    ///     commands.spawn((Wall(Level::One),));
    /// }
    /// fn clear(registry: &mut Registry) {
    ///     registry.clear(); // an exclusive system: the whole world
    /// }
    /// fn build_two(mut commands: Commands) {
    ///     commands.spawn((Wall(Level::Two),));
    ///     commands.spawn((Wall(Level::Two),));
    /// }
    /// fn finish(mut next: ResMut<NextState<Level>>) {
    ///     next.set(Level::Two);
    /// }
    ///
    /// let mut registry = Registry::new();
    /// let mut builder = Schedule::builder();
    /// builder
    ///     .add_state(Level::One)
    ///     .add_on_enter(Level::One, build_one)
    ///     .add_on_exit(Level::One, clear)
    ///     .add_on_enter(Level::Two, build_two);
    /// builder.add(finish);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// schedule.run(&mut registry, Tick::default()).unwrap(); // enters One
    /// assert_eq!(registry.len(), 1);
    /// schedule.run(&mut registry, Tick::default()).unwrap(); // leaves One, enters Two
    /// assert_eq!(registry.len(), 2);
    /// ```
    pub fn add_state<S: States>(&mut self, initial: S) -> &mut Self {
        let states = &mut self.states;
        if states.knows(TypeId::of::<S>()) {
            states.duplicate.get_or_insert(state_type::<S>().1);
        } else {
            states.drivers.push(Box::new(TypedDriver::new(initial)));
        }
        self
    }

    /// Adds a system that runs each time state `S` becomes `value` (bevy's
    /// `OnEnter(value)`), the initial value on the first tick included:
    /// one at a time with the other enter systems of `value`, in
    /// registration order, each followed by its commands. Named like
    /// other systems. A state type that was never added is a
    /// [`BuildError::UnknownState`](crate::BuildError::UnknownState)
    /// naming the system.
    pub fn add_on_enter<M, S: States>(
        &mut self,
        value: S,
        system: impl IntoSystem<M>,
    ) -> &mut Self {
        self.hook(true, value, Box::new(system.into_system()))
    }

    /// Adds a system that runs each time state `S` leaves `value` (bevy's
    /// `OnExit(value)`), before `State<S>` changes; as
    /// [`add_on_enter`](Self::add_on_enter) otherwise.
    pub fn add_on_exit<M, S: States>(&mut self, value: S, system: impl IntoSystem<M>) -> &mut Self {
        self.hook(false, value, Box::new(system.into_system()))
    }

    fn hook<S: States>(&mut self, enter: bool, value: S, system: Box<dyn System>) -> &mut Self {
        self.states.hooks.push(PendingHook {
            state: state_type::<S>(),
            enter,
            value: Box::new(value),
            system,
        });
        self
    }
}
