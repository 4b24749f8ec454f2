//! The values systems keep, one by one, for file snapshots: read in
//! place ([`Schedule::visit_system_states`]) so a snapshot encodes each
//! with its own format, and put back from decoded values
//! ([`Schedule::load_system_states`]). The in-memory states of the parent
//! module copy the same values with their `Clone`.

use std::any::Any;
use std::borrow::Cow;

use crate::{LocalState, Schedule, SystemStateError};

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
    /// shown ([`startup_pending`](Self::startup_pending)). Call it
    /// between ticks.
    ///
    /// # Errors
    ///
    /// The first error of `visit`.
    pub fn visit_system_states<E>(
        &self,
        mut visit: impl FnMut(StateVisit<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        for slot in &self.slots {
            let system = &*slot.system;
            visit(StateVisit::System {
                name: &slot.name,
                enabled: slot.enabled,
            })?;
            let state = system.state();
            if std::mem::size_of_val(state) != 0 {
                visit(StateVisit::Value(StateValue {
                    place: StatePlace::Own,
                    type_name: system.type_path().unwrap_or_else(|| system.default_name()),
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

    /// `true` while the startup systems have not run.
    pub fn startup_pending(&self) -> bool {
        !self.startup.is_empty()
    }

    /// Puts decoded system states back, as
    /// [`restore_system_states`](Self::restore_system_states) does with
    /// copies: each listed value goes to its place (the values a system
    /// has now are dropped first, so those not listed are made anew at
    /// its next run), `put_own` replaces own values, and each system is
    /// enabled or not as listed. When the states were saved after the
    /// startup systems ran (`startup_pending` false), this schedule's
    /// pending startup systems are dropped: they ran in the saved run.
    ///
    /// # Errors
    ///
    /// [`SystemStateError::OtherSchedule`], before anything changes, when
    /// the systems are not this schedule's (names compared in run order),
    /// when the states were saved before the startup systems ran and
    /// they have run here, or when an own value's type is not the
    /// system's.
    pub fn load_system_states(
        &mut self,
        systems: Vec<LoadedSystem>,
        startup_pending: bool,
        put_own: PutOwn<'_>,
    ) -> Result<(), SystemStateError> {
        self.check_system_states(&systems, startup_pending)?;
        self.finish_startup(startup_pending);
        for (slot, saved) in self.slots.iter_mut().zip(systems) {
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
        startup_pending: bool,
    ) -> Result<(), SystemStateError> {
        self.check_system_names(systems.iter().map(|s| s.name.as_str()).collect())?;
        self.check_startup(startup_pending)?;
        for (slot, saved) in self.slots.iter().zip(systems) {
            let own = saved.values.iter().find(|v| v.place == StatePlace::Own);
            if let Some(own) = own
                && Any::type_id(&*own.value) != Any::type_id(slot.system.state())
            {
                return Err(SystemStateError::OtherSchedule {
                    reason: format!(
                        "system `{}`'s own value is not of the saved type `{}`",
                        slot.name, own.type_name
                    ),
                });
            }
        }
        Ok(())
    }
}
