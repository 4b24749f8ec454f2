//! The transitions of one state type: which enter and exit systems a due
//! change runs, and the change of [`State<S>`] between them.

use std::any::{Any, TypeId};

use ecs_engine::Registry;

use super::{NextState, State, States};

/// One state type's transitions, behind a type-erased face so a schedule
/// holds any number of state types.
pub(crate) trait Driver: Send {
    /// The state type's id.
    fn state_id(&self) -> TypeId;

    /// Makes `slot` run on entering (`enter`) or leaving `value`, an `S`.
    fn attach(&mut self, enter: bool, value: Box<dyn Any + Send>, slot: usize);

    /// Inserts `State<S>` (the initial value) and `NextState<S>` (empty)
    /// where the registry lacks them.
    fn init(&mut self, registry: &mut Registry);

    /// The transition due now, as the slots to run before the change of
    /// `State<S>` (the exits) and after it (the enters); `None` when no
    /// change is due. The first call is the initial enter.
    fn take(&mut self, registry: &mut Registry) -> Option<(Vec<usize>, Vec<usize>)>;

    /// Sets `State<S>` to the value of the transition [`take`](Self::take)
    /// returned.
    fn commit(&mut self, registry: &mut Registry);

    /// Whether the initial enter has run (saved with system states).
    fn started(&self) -> bool;

    /// Sets whether the initial enter has run (a restore of saved states).
    fn set_started(&mut self, started: bool);
}

/// The [`Driver`] of state type `S`.
pub(crate) struct TypedDriver<S: States> {
    initial: S,
    /// `(enter, value, slot)`, in registration order.
    hooks: Vec<(bool, S, usize)>,
    /// The initial enter has run.
    started: bool,
    /// The value a taken transition changes to.
    pending: Option<S>,
}

impl<S: States> TypedDriver<S> {
    pub(crate) fn new(initial: S) -> Self {
        TypedDriver {
            initial,
            hooks: Vec::new(),
            started: false,
            pending: None,
        }
    }

    fn slots(&self, enter: bool, value: &S) -> Vec<usize> {
        self.hooks
            .iter()
            .filter(|(e, v, _)| *e == enter && v == value)
            .map(|&(_, _, slot)| slot)
            .collect()
    }
}

impl<S: States> Driver for TypedDriver<S> {
    fn state_id(&self) -> TypeId {
        TypeId::of::<S>()
    }

    fn attach(&mut self, enter: bool, value: Box<dyn Any + Send>, slot: usize) {
        let value = *value
            .downcast::<S>()
            .expect("a hook's value is of its driver's state type");
        self.hooks.push((enter, value, slot));
    }

    fn init(&mut self, registry: &mut Registry) {
        if !registry.contains_resource::<State<S>>() {
            registry.insert_resource(State(self.initial.clone()));
        }
        if !registry.contains_resource::<NextState<S>>() {
            registry.insert_resource(NextState::<S>::default());
        }
    }

    fn take(&mut self, registry: &mut Registry) -> Option<(Vec<usize>, Vec<usize>)> {
        if !self.started {
            self.started = true;
            let current = registry.resource::<State<S>>()?.0.clone();
            return Some((Vec::new(), self.slots(true, &current)));
        }
        let request = registry.resource_mut::<NextState<S>>()?.0.take()?;
        let next = request.value;
        let current = registry.resource::<State<S>>()?;
        // `set` of the current value is an identity transition (its exit
        // and enter systems run); `set_if_neq` of it is nothing.
        if request.if_neq && current.0 == next {
            return None;
        }
        let exits = self.slots(false, &current.0);
        let enters = self.slots(true, &next);
        self.pending = Some(next);
        Some((exits, enters))
    }

    fn commit(&mut self, registry: &mut Registry) {
        if let Some(value) = self.pending.take() {
            registry.insert_resource(State(value));
        }
    }

    fn started(&self) -> bool {
        self.started
    }

    fn set_started(&mut self, started: bool) {
        self.started = started;
    }
}
