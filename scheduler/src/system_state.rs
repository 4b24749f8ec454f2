//! Saved system states: what each system keeps from run to run, copied
//! out of a schedule between ticks and put back, for in-memory states of a
//! whole engine (rollback, replays, "what if" branches).
//!
//! A system keeps state in two places: its parameters' [`LocalState`]
//! ([`Local`](crate::Local) values, the [`LastRun`] change tick of every
//! query, the cursors of [`RemovedComponents`](crate::RemovedComponents)),
//! and its own value (the struct of a [`StatefulSystem`](crate::StatefulSystem)).
//! Both are copied by their types' `Clone`, registered once per type with
//! [`Schedule::register_state_clone`] ([`LastRun`] and
//! [`RemovedCursor`] are registered from the start). A save that meets a
//! value of a type with no clone refuses, naming the system and the type:
//! nothing is ever left out silently.
//!
//! The state a run condition keeps for each system it guards (its
//! parameters' `LocalState`) is saved the same way. What a function
//! system's closure captures cannot be (a save refuses a closure that
//! captures anything: keep such state in a `Local` or a resource); nor,
//! yet, the parts of a pipe (refused the same way). Event channels and
//! their readers' cursors are resources ([`Events`](crate::Events)),
//! saved with the registry.
//!
//! The systems saved are the tick systems, the enter and exit systems of
//! states and the one-shot systems and observers
//! ([`Schedule::saved_slots`]), with the schedule's [`ScheduleProgress`]
//! (startup systems run or not, each state type's initial enter run or
//! not), so a restore into a fresh schedule runs none of them again.
//! The file snapshots of the `ecs_snapshot` crate walk the same values
//! one by one ([`values`]).

use std::any::{Any, TypeId};

use ecs_engine::{RemovedCursor, TypeIdMap};

use crate::executor::Between;
use crate::slot::Slot;
use crate::state::builder::StateRunner;
use crate::{LastRun, LocalState, Schedule};

pub(crate) mod values;

/// Every system whose state a save holds, mutable, in the order of
/// [`Schedule::saved_slots`] (by fields, so the schedule's other fields
/// stay free to borrow).
pub(crate) fn saved_slots_mut<'a>(
    slots: &'a mut [Slot],
    states: &'a mut StateRunner,
    between: &'a mut Between,
) -> impl Iterator<Item = &'a mut Slot> {
    slots
        .iter_mut()
        .chain(states.slots.iter_mut())
        .chain(between.oneshots.slots.iter_mut())
}

/// A clone of a state value, boxed.
type CopyFn = fn(&dyn Any) -> Box<dyn Any + Send>;
/// Makes the first value a clone of the second (both of one type).
type AssignFn = fn(&mut dyn Any, &dyn Any);

fn copy<T: Clone + Send + 'static>(value: &dyn Any) -> Box<dyn Any + Send> {
    Box::new(
        value
            .downcast_ref::<T>()
            .expect("a copy of its own type")
            .clone(),
    )
}

fn assign<T: Clone + Send + 'static>(dst: &mut dyn Any, src: &dyn Any) {
    let src = src
        .downcast_ref::<T>()
        .expect("a saved value of its own type");
    dst.downcast_mut::<T>()
        .expect("a system's state keeps its type")
        .clone_from(src);
}

/// The clones of the state types a schedule knows, by type.
#[derive(Debug)]
pub(crate) struct StateCopies {
    copies: TypeIdMap<(CopyFn, AssignFn)>,
}

impl Default for StateCopies {
    fn default() -> Self {
        let mut copies = StateCopies {
            copies: TypeIdMap::default(),
        };
        copies.register::<LastRun>();
        copies.register::<RemovedCursor>();
        copies
    }
}

impl StateCopies {
    fn register<T: Clone + Send + 'static>(&mut self) {
        self.copies
            .insert(TypeId::of::<T>(), (copy::<T>, assign::<T>));
    }

    fn get(&self, value: &dyn Any) -> Option<(CopyFn, AssignFn)> {
        self.copies.get(&value.type_id()).copied()
    }
}

/// Why [`Schedule::save_system_states`] or
/// [`Schedule::restore_system_states`] refused; nothing changed then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SystemStateError {
    /// A value a system keeps has a type with no registered clone (a
    /// closure that captures values is such a value, and so is a `fn`
    /// pointer: only a function item, or a closure that captures
    /// nothing, keeps no state of its own).
    #[error(
        "cannot save system `{system}`: its state `{state}` has no clone; call \
         `register_state_clone::<T>()` for it (a closure's captures cannot be saved: \
         keep that state in a `Local` or a resource; a `fn` pointer: add the function \
         itself, not `f as fn(..)`)"
    )]
    NotClonable {
        /// The system.
        system: String,
        /// The type name of the value (the closure's, for captures).
        state: String,
    },
    /// The states were saved from a schedule with other systems (names
    /// compared in run order), or before the startup systems ran, into a
    /// schedule where they have run.
    #[error("cannot restore system states: {reason}")]
    OtherSchedule {
        /// What differs.
        reason: String,
    },
}

/// One system's saved state.
struct SavedSystem {
    name: String,
    enabled: bool,
    /// A copy of the system's own value, when it has one that is saved.
    own: Option<Box<dyn Any + Send>>,
    /// Copies of its parameters' values.
    locals: Vec<SavedValue>,
    /// Copies of the values its run conditions keep for it, one list per
    /// condition in order.
    conditions: Vec<Vec<SavedValue>>,
}

/// One saved value of a [`LocalState`] tree: its path, type name and a
/// copy.
type SavedValue = (Vec<usize>, &'static str, Box<dyn Any + Send>);

/// Every system's state, saved by [`Schedule::save_system_states`]: what
/// each keeps from run to run (see the module docs), and whether it is
/// enabled.
pub struct SystemStates {
    systems: Vec<SavedSystem>,
    progress: ScheduleProgress,
}

impl SystemStates {
    /// Checks that these states fit `schedule`, as
    /// [`Schedule::restore_system_states`] does before it changes
    /// anything.
    ///
    /// # Errors
    ///
    /// [`SystemStateError::OtherSchedule`] when they do not.
    pub fn check(&self, schedule: &Schedule) -> Result<(), SystemStateError> {
        schedule.check_system_names(self.systems.iter().map(|s| s.name.as_str()).collect())?;
        schedule.check_progress(&self.progress)
    }
}

impl std::fmt::Debug for SystemStates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SystemStates")
            .field(
                "systems",
                &self.systems.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .field("progress", &self.progress)
            .finish()
    }
}

impl Schedule {
    /// Lets [`save_system_states`](Self::save_system_states) copy values
    /// of `T` with its `Clone`: a [`Local<T>`](crate::Local) value, or a
    /// [`StatefulSystem`](crate::StatefulSystem) of type `T`.
    pub fn register_state_clone<T: Clone + Send + 'static>(&mut self) {
        self.state_copies.register::<T>();
    }

    /// A copy of what every system keeps from run to run (startup
    /// systems that have not run yet are not copied: they still run at
    /// the next tick). Call it between ticks.
    ///
    /// # Errors
    ///
    /// [`SystemStateError::NotClonable`] naming the first system and
    /// value whose type has no clone (see
    /// [`register_state_clone`](Self::register_state_clone)), a closure
    /// that captures values among them.
    pub fn save_system_states(&self) -> Result<SystemStates, SystemStateError> {
        let mut systems = Vec::with_capacity(self.slots.len());
        for slot in self.saved_slots() {
            let system = &*slot.system;
            let state = system.state();
            // A function, or a closure that captures nothing, keeps no
            // state of its own.
            let own = if std::mem::size_of_val(state) == 0 {
                None
            } else {
                let (copy, _) =
                    self.state_copies
                        .get(state)
                        .ok_or_else(|| SystemStateError::NotClonable {
                            system: slot.name.clone(),
                            state: system
                                .type_path()
                                .unwrap_or_else(|| system.default_name())
                                .into_owned(),
                        })?;
                Some(copy(state))
            };
            let copy_tree =
                |tree: Option<&LocalState>| -> Result<Vec<SavedValue>, SystemStateError> {
                    let mut values = Vec::new();
                    let mut missing = None;
                    for (path, name, value) in tree.map(LocalState::values).unwrap_or_default() {
                        match self.state_copies.get(value) {
                            Some((copy, _)) => values.push((path, name, copy(value))),
                            None => missing = missing.or(Some(name)),
                        }
                    }
                    match missing {
                        Some(state) => Err(SystemStateError::NotClonable {
                            system: slot.name.clone(),
                            state: state.to_owned(),
                        }),
                        None => Ok(values),
                    }
                };
            let locals = copy_tree(system.locals())?;
            let conditions = slot
                .conditions
                .iter()
                .map(|condition| copy_tree(condition.lock().condition().locals_for(&slot.name)))
                .collect::<Result<Vec<_>, _>>()?;
            systems.push(SavedSystem {
                name: slot.name.clone(),
                enabled: slot.enabled,
                own,
                locals,
                conditions,
            });
        }
        Ok(SystemStates {
            systems,
            progress: self.progress(),
        })
    }

    /// Puts saved system states back: each system's own value and its
    /// parameters' values as they were at the save (values made since
    /// are dropped, so they are made anew at the next run, as then), and
    /// whether it is enabled. Call it between ticks.
    ///
    /// # Errors
    ///
    /// [`SystemStateError::OtherSchedule`] when `states` came from a
    /// schedule with other systems, or was saved before the startup
    /// systems ran and they have run since.
    pub fn restore_system_states(&mut self, states: &SystemStates) -> Result<(), SystemStateError> {
        states.check(self)?;
        self.set_progress(&states.progress);
        let slots = saved_slots_mut(&mut self.slots, &mut self.states, &mut self.between);
        for (slot, saved) in slots.zip(&states.systems) {
            slot.enabled = saved.enabled;
            // The record of its latest run belongs to the timeline left
            // behind (a tick number it may run again): forgotten, so
            // `system_runs` never names a run the restored world did not
            // see.
            slot.last = None;
            if let (Some(value), Some(state)) = (&saved.own, slot.system.state_mut()) {
                let (_, assign) = self
                    .state_copies
                    .get(&**value)
                    .expect("a saved value's type was registered");
                assign(state, &**value);
            }
            let copies = &self.state_copies;
            let put_back = |tree: &mut LocalState, values: &[SavedValue]| {
                tree.clear_values();
                for (path, name, value) in values {
                    let (copy, _) = copies
                        .get(&**value)
                        .expect("a saved value's type was registered");
                    tree.set_value(path, name, copy(&**value));
                }
            };
            if let Some(tree) = slot.system.locals_mut() {
                put_back(tree, &saved.locals);
            }
            for (condition, values) in slot.conditions.iter().zip(&saved.conditions) {
                if let Some(tree) = condition.lock().condition_mut().locals_for_mut(&slot.name) {
                    put_back(tree, values);
                }
            }
        }
        Ok(())
    }

    /// Every system whose state a save holds, in a fixed order: the tick
    /// systems in run order, then the enter and exit systems of states,
    /// then the one-shot systems and observers, in registration order.
    pub(crate) fn saved_slots(&self) -> impl Iterator<Item = &Slot> {
        self.slots
            .iter()
            .chain(self.states.slots.iter())
            .chain(self.between.oneshots.slots.iter())
    }

    /// Refuses states of other systems than this schedule's (`saved`:
    /// their names in run order).
    fn check_system_names(&self, saved: Vec<&str>) -> Result<(), SystemStateError> {
        let found: Vec<&str> = self.saved_slots().map(|s| s.name.as_str()).collect();
        if found != saved {
            return Err(SystemStateError::OtherSchedule {
                reason: format!("saved systems {saved:?}, found {found:?}"),
            });
        }
        Ok(())
    }

    /// How far this schedule has run besides its systems' states (see
    /// [`ScheduleProgress`]).
    pub fn progress(&self) -> ScheduleProgress {
        ScheduleProgress {
            startup_pending: !self.startup.is_empty(),
            states_started: self.states.drivers.iter().map(|d| d.started()).collect(),
        }
    }

    /// Refuses a progress that does not fit this schedule: saved before
    /// the startup systems ran once they have run here, or of another
    /// number of state types.
    fn check_progress(&self, progress: &ScheduleProgress) -> Result<(), SystemStateError> {
        if progress.startup_pending && self.startup.is_empty() {
            return Err(SystemStateError::OtherSchedule {
                reason: "saved before the startup systems ran, which have run since".to_owned(),
            });
        }
        if progress.states_started.len() != self.states.drivers.len() {
            return Err(SystemStateError::OtherSchedule {
                reason: format!(
                    "saved with {} state types, found {}",
                    progress.states_started.len(),
                    self.states.drivers.len()
                ),
            });
        }
        Ok(())
    }

    /// Puts a checked progress back: the pending startup systems are
    /// dropped when the states were saved after they ran (they ran in the
    /// saved run, and must not run again after a restore into a fresh
    /// schedule), and each state type's initial enter counts as run or
    /// not as it did.
    fn set_progress(&mut self, progress: &ScheduleProgress) {
        if !progress.startup_pending {
            self.startup.clear();
        }
        for (driver, &started) in self.states.drivers.iter_mut().zip(&progress.states_started) {
            driver.set_started(started);
        }
    }
}

/// How far a schedule has run besides what its systems keep: whether its
/// startup systems are still to run, and for each state type (in the
/// order they were added) whether its initial enter systems have run.
/// Saved with system states, so a restore into a fresh schedule runs
/// neither again.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScheduleProgress {
    /// The startup systems have not run.
    pub startup_pending: bool,
    /// Per state type, its initial enter has run.
    pub states_started: Vec<bool>,
}
