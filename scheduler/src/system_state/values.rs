//! The values systems keep, one by one, for file snapshots: read in
//! place ([`Schedule::visit_system_states`]) so a snapshot encodes each
//! with its own format, and put back from decoded values
//! ([`Schedule::load_system_states`]). The in-memory states of the parent
//! module copy the same values with their `Clone`.

use std::any::Any;
use std::borrow::Cow;

use super::saved_slots_mut;
use crate::{LocalState, Schedule, ScheduleProgress, SystemStateError};

/// Where one value a system keeps sits in its state.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StatePlace {
    /// The system's own value (the struct of a
    /// [`StatefulSystem`](crate::StatefulSystem)).
    Own,
    /// A value of its parameters ([`Local`](crate::Local),
    /// [`LastRun`](crate::LastRun), a removal cursor) at this path of
    /// its [`LocalState`] tree.
    Param(Vec<usize>),
    /// A value that run condition number `condition` (its own conditions
    /// first, then its sets') keeps for it, at `path` of that
    /// condition's tree.
    Condition {
        /// The condition's index.
        condition: usize,
        /// The path in its tree.
        path: Vec<usize>,
    },
}

/// One value a system keeps, borrowed from the schedule.
#[derive(Debug)]
pub struct StateValue<'a> {
    /// Where it sits.
    pub place: StatePlace,
    /// Its type's name (for an own value, the system's type).
    pub type_name: Cow<'static, str>,
    /// The value.
    pub value: &'a dyn Any,
}

/// What [`Schedule::visit_system_states`] shows, in order: each system,
/// then each value it keeps.
#[derive(Debug)]
pub enum StateVisit<'a> {
    /// The next system, in run order.
    System {
        /// Its name.
        name: &'a str,
        /// Whether it is enabled.
        enabled: bool,
    },
    /// A value the last system shown keeps.
    Value(StateValue<'a>),
}

/// One value decoded for [`Schedule::load_system_states`].
#[derive(Debug)]
pub struct LoadedValue {
    /// Where it goes.
    pub place: StatePlace,
    /// Its type's name.
    pub type_name: &'static str,
    /// The value.
    pub value: Box<dyn Any + Send>,
}

/// One system's state decoded for [`Schedule::load_system_states`].
#[derive(Debug)]
pub struct LoadedSystem {
    /// The system's name.
    pub name: String,
    /// Whether it is enabled.
    pub enabled: bool,
    /// Its values.
    pub values: Vec<LoadedValue>,
}

/// Replaces a system's own value with a decoded one of the same type;
/// `false` when the types differ.
pub type PutOwn<'a> = &'a dyn Fn(&mut dyn Any, Box<dyn Any + Send>) -> bool;

impl Schedule {
    /// Shows `visit` every system, in run order, each followed by every
    /// value it keeps from run to run (see
    /// [`save_system_states`](Self::save_system_states) for what that
    /// is), borrowed in place; stops at the first error `visit` returns.
    /// A system whose own value is a function or a closure that captures
    /// nothing shows no own value; startup systems still to run are not
    /// shown ([`progress`](Self::progress)). Call it
    /// between ticks.
    ///
    /// # Errors
    ///
    /// The first error of `visit`.
    pub fn visit_system_states<E>(
        &self,
        mut visit: impl FnMut(StateVisit<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        for slot in self.saved_slots() {
            let system = &*slot.system;
            visit(StateVisit::System {
                name: &slot.name,
                enabled: slot.enabled,
            })?;
            let state = system.state();
            if std::mem::size_of_val(state) != 0 {
                // A system without a type path (a pipe) is named by what
                // it is, not by its name again.
                let type_name = system.type_path().unwrap_or_else(|| {
                    Cow::Owned(format!(
                        "the value of system `{}` itself (a pipe's parts and their locals \
                         are not saved yet)",
                        system.default_name()
                    ))
                });
                visit(StateVisit::Value(StateValue {
                    place: StatePlace::Own,
                    type_name,
                    value: state,
                }))?;
            }
            let mut tree_values = |tree: Option<&LocalState>,
                                   place: &dyn Fn(Vec<usize>) -> StatePlace|
             -> Result<(), E> {
                for (path, name, value) in tree.map(LocalState::values).unwrap_or_default() {
                    visit(StateVisit::Value(StateValue {
                        place: place(path),
                        type_name: Cow::Borrowed(name),
                        value,
                    }))?;
                }
                Ok(())
            };
            tree_values(system.locals(), &StatePlace::Param)?;
            for (condition, shared) in slot.conditions.iter().enumerate() {
                let guard = shared.lock();
                tree_values(guard.condition().locals_for(&slot.name), &|path| {
                    StatePlace::Condition { condition, path }
                })?;
            }
        }
        Ok(())
    }

    /// Puts decoded system states back, as
    /// [`restore_system_states`](Self::restore_system_states) does with
    /// copies: each listed value goes to its place (the values a system
    /// has now are dropped first, so those not listed are made anew at
    /// its next run), `put_own` replaces own values, and each system is
    /// enabled or not as listed. `progress` is put back as
    /// [`restore_system_states`](Self::restore_system_states) does: when
    /// the states were saved after the startup systems ran, this
    /// schedule's pending startup systems are dropped (they ran in the
    /// saved run), and each state type's initial enter counts as run or
    /// not as saved.
    ///
    /// # Errors
    ///
    /// [`SystemStateError::OtherSchedule`], before anything changes, when
    /// the systems are not this schedule's (names compared in order),
    /// when the states were saved before the startup systems ran and
    /// they have run here, when the number of state types differs, or
    /// when a value's type is not the one the system keeps at its place
    /// (its own value always; a parameter's once the system has run: a
    /// system that has not run yet makes its parameters' values at its
    /// first run, which fails naming the system if a loaded value there
    /// is of another type).
    pub fn load_system_states(
        &mut self,
        systems: Vec<LoadedSystem>,
        progress: &ScheduleProgress,
        put_own: PutOwn<'_>,
    ) -> Result<(), SystemStateError> {
        self.check_system_states(&systems, progress)?;
        self.set_progress(progress);
        let slots = saved_slots_mut(&mut self.slots, &mut self.states, &mut self.between);
        for (slot, saved) in slots.zip(systems) {
            slot.enabled = saved.enabled;
            if let Some(tree) = slot.system.locals_mut() {
                tree.clear_values();
            }
            for condition in &slot.conditions {
                if let Some(tree) = condition.lock().condition_mut().locals_for_mut(&slot.name) {
                    tree.clear_values();
                }
            }
            for value in saved.values {
                match value.place {
                    StatePlace::Own => {
                        if let Some(state) = slot.system.state_mut() {
                            let put = put_own(state, value.value);
                            debug_assert!(put, "the own value's type was checked above");
                        }
                    }
                    StatePlace::Param(path) => {
                        if let Some(tree) = slot.system.locals_mut() {
                            tree.set_value(&path, value.type_name, value.value);
                        }
                    }
                    StatePlace::Condition { condition, path } => {
                        if let Some(shared) = slot.conditions.get(condition) {
                            let mut guard = shared.lock();
                            if let Some(tree) = guard.condition_mut().locals_for_mut(&slot.name) {
                                tree.set_value(&path, value.type_name, value.value);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks decoded system states as
    /// [`load_system_states`](Self::load_system_states) does before it
    /// changes anything (for a load that checks every part before its
    /// swap).
    ///
    /// # Errors
    ///
    /// As [`load_system_states`](Self::load_system_states).
    pub fn check_system_states(
        &self,
        systems: &[LoadedSystem],
        progress: &ScheduleProgress,
    ) -> Result<(), SystemStateError> {
        self.check_system_names(systems.iter().map(|s| s.name.as_str()).collect())?;
        self.check_progress(progress)?;
        for (slot, saved) in self.saved_slots().zip(systems) {
            for value in &saved.values {
                // The type the system keeps there now, when it has run.
                let found = match &value.place {
                    StatePlace::Own => Some(Any::type_id(slot.system.state())),
                    StatePlace::Param(path) => slot
                        .system
                        .locals()
                        .and_then(|tree| tree.value_at(path))
                        .map(Any::type_id),
                    StatePlace::Condition { condition, path } => {
                        slot.conditions.get(*condition).and_then(|shared| {
                            let guard = shared.lock();
                            let tree = guard.condition().locals_for(&slot.name)?;
                            tree.value_at(path).map(Any::type_id)
                        })
                    }
                };
                if found.is_some_and(|found| found != Any::type_id(&*value.value)) {
                    return Err(SystemStateError::OtherSchedule {
                        reason: format!(
                            "system `{}` keeps another type at {:?} than the saved `{}` \
                             (states saved from another version of the system?)",
                            slot.name, value.place, value.type_name
                        ),
                    });
                }
            }
        }
        Ok(())
    }
}
