//! States (bevy's `States`): a value of a type `S` held in the resource
//! [`State<S>`], changed by setting [`NextState<S>`], with systems that run
//! on entering and on leaving each value and the run condition
//! [`in_state`]. When transitions happen:
//! [`ScheduleBuilder::add_state`](crate::ScheduleBuilder::add_state).

pub(crate) mod builder;
pub(crate) mod driver;

use std::any::TypeId;
use std::fmt::Debug;
use std::ops::Deref;

use crate::system::condition::Condition;
use crate::{SystemAccess, SystemContext, SystemError};

/// The types a state can be: an enum of a game's screens or phases, most
/// often. Implemented for every `Clone + PartialEq + Debug + Send + Sync +
/// 'static` type, so nothing to derive beyond those.
pub trait States: Clone + PartialEq + Debug + Send + Sync + 'static {}

impl<T: Clone + PartialEq + Debug + Send + Sync + 'static> States for T {}

/// The current value of state `S`, a resource: read it with
/// `Res<State<S>>`, or run systems only in one value with
/// [`in_state`]. Inserted by
/// [`ScheduleBuilder::add_state`](crate::ScheduleBuilder::add_state) and
/// changed only by the transitions (see
/// [`ScheduleBuilder::add_state`](crate::ScheduleBuilder::add_state)); to
/// change it, set [`NextState<S>`].
#[derive(Debug, Clone, PartialEq)]
pub struct State<S: States>(pub(crate) S);

impl<S: States> State<S> {
    /// A state resource at `value`, to insert before the build for a
    /// world that resumes in `value` (a loaded game): `add_state` keeps a
    /// `State<S>` the registry holds, and its enter systems run on the
    /// first tick.
    pub fn new(value: S) -> Self {
        State(value)
    }

    /// The current value.
    pub fn get(&self) -> &S {
        &self.0
    }
}

impl<S: States> Deref for State<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.0
    }
}

impl<S: States> PartialEq<S> for State<S> {
    fn eq(&self, other: &S) -> bool {
        self.0 == *other
    }
}

/// The value state `S` changes to at the start of the next tick, a
/// resource: set it from a system with `ResMut<NextState<S>>` (or from
/// outside a tick through the registry). Empty (`None`) when no change is
/// asked; the transition empties it. The last value set before the
/// transition wins.
#[derive(Debug, Clone, PartialEq)]
pub struct NextState<S: States>(pub(crate) Option<S>);

impl<S: States> Default for NextState<S> {
    fn default() -> Self {
        NextState(None)
    }
}

impl<S: States> NextState<S> {
    /// Asks for state `value` from the start of the next tick.
    pub fn set(&mut self, value: S) {
        self.0 = Some(value);
    }

    /// The value asked for, if any.
    pub fn pending(&self) -> Option<&S> {
        self.0.as_ref()
    }

    /// Withdraws the change asked for.
    pub fn reset(&mut self) {
        self.0 = None;
    }
}

/// A run condition: `true` while [`State<S>`] is `value` (bevy's
/// `in_state`). Reads `State<S>`, so the schedule orders it like a
/// system that does. A state type that was never added with
/// [`ScheduleBuilder::add_state`](crate::ScheduleBuilder::add_state) is a
/// [`BuildError::UnknownState`](crate::BuildError::UnknownState) naming
/// the system and the type.
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{NextState, ResMut, Schedule, State, Tick, in_state};
///
/// #[derive(Debug, Clone, PartialEq)]
/// enum Mode {
///     Menu,
///     Playing,
/// }
///
/// fn start(mut next: ResMut<NextState<Mode>>) {
///     next.set(Mode::Playing);
/// }
/// fn play(mut ticks: ResMut<u32>) {
///     *ticks += 1;
/// }
///
/// let mut registry = Registry::new();
/// registry.insert_resource(0_u32);
/// let mut builder = Schedule::builder();
/// builder.add_state(Mode::Menu);
/// builder.add(start).run_if(in_state(Mode::Menu));
/// builder.add(play).run_if(in_state(Mode::Playing));
/// let mut schedule = builder.build(&mut registry).unwrap();
/// for _ in 0..3 {
///     schedule.run(&mut registry, Tick::default()).unwrap();
/// }
/// // Tick 0 in the menu; ticks 1 and 2 playing.
/// assert_eq!(registry.resource::<u32>(), Some(&2));
/// assert_eq!(registry.resource::<State<Mode>>().unwrap().get(), &Mode::Playing);
/// ```
pub fn in_state<S: States>(value: S) -> InState<S> {
    InState { value }
}

/// The run condition [`in_state`] makes.
#[derive(Debug, Clone, PartialEq)]
pub struct InState<S: States> {
    value: S,
}

impl<S: States> Condition for InState<S> {
    fn access(&self) -> SystemAccess {
        SystemAccess::new().read_resource::<State<S>>()
    }

    fn evaluate(&mut self, ctx: &SystemContext<'_>) -> Result<bool, SystemError> {
        Ok(ctx.resource::<State<S>>()?.0 == self.value)
    }

    fn state_type(&self) -> Option<(TypeId, &'static str)> {
        Some(state_type::<S>())
    }
}

/// The type id and name a state type is known by.
pub(crate) fn state_type<S: States>() -> (TypeId, &'static str) {
    (TypeId::of::<S>(), std::any::type_name::<S>())
}
