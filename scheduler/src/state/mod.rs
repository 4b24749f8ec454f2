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
/// outside a tick through the registry). Empty when no change is asked;
/// the transition empties it. The last request made before the
/// transition wins.
///
/// Two ways to ask, as in bevy (`bevy_state` 0.18):
/// [`set`](Self::set) always makes a transition, even to the current
/// value (an *identity transition*: the value's exit systems run, then
/// its enter systems again, which restarts a level or a screen);
/// [`set_if_neq`](Self::set_if_neq) makes one only when the value differs
/// from the current state at the time of the transition.
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{NextState, ResMut, Schedule, Tick};
///
/// #[derive(Debug, Clone, PartialEq)]
/// enum Level {
///     One,
/// }
///
/// fn count_enters(mut enters: ResMut<u32>) {
///     *enters += 1;
/// }
///
/// let mut registry = Registry::new();
/// registry.insert_resource(0_u32);
/// let mut builder = Schedule::builder();
/// builder.add_state(Level::One).add_on_enter(Level::One, count_enters);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap(); // the initial enter
/// assert_eq!(registry.resource::<u32>(), Some(&1));
///
/// // `set_if_neq` to the current value: no transition.
/// registry.resource_mut::<NextState<Level>>().unwrap().set_if_neq(Level::One);
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// assert_eq!(registry.resource::<u32>(), Some(&1));
///
/// // `set` to the current value: exit and enter again (a restart).
/// registry.resource_mut::<NextState<Level>>().unwrap().set(Level::One);
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// assert_eq!(registry.resource::<u32>(), Some(&2));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct NextState<S: States>(pub(crate) Option<Request<S>>);

/// A request held by [`NextState`]: the value, and whether a value equal
/// to the current state is skipped.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Request<S> {
    pub(crate) value: S,
    /// Made by [`NextState::set_if_neq`]: no transition when `value` is
    /// the current state.
    pub(crate) if_neq: bool,
}

impl<S: States> Default for NextState<S> {
    fn default() -> Self {
        NextState(None)
    }
}

impl<S: States> NextState<S> {
    /// Asks for state `value` from the start of the next tick, replacing
    /// any request made before. Always a transition, even when `value` is
    /// the current state: then the current value's exit systems run, and
    /// its enter systems run again (bevy's identity transition), once each
    /// in that tick. To skip that case, use
    /// [`set_if_neq`](Self::set_if_neq).
    pub fn set(&mut self, value: S) {
        self.0 = Some(Request {
            value,
            if_neq: false,
        });
    }

    /// Asks for state `value` from the start of the next tick, unless it
    /// is the current state then (bevy's `set_if_neq`): when the
    /// transition comes and `State<S>` equals `value`, the request is
    /// dropped and no exit or enter system runs. A pending
    /// [`set`](Self::set) of the same value is kept as it is (its identity
    /// transition still runs, as in bevy); any other pending request is
    /// replaced.
    pub fn set_if_neq(&mut self, value: S) {
        if let Some(request) = &self.0
            && !request.if_neq
            && request.value == value
        {
            return;
        }
        self.0 = Some(Request {
            value,
            if_neq: true,
        });
    }

    /// The value asked for, if any (by [`set`](Self::set) or
    /// [`set_if_neq`](Self::set_if_neq)).
    pub fn pending(&self) -> Option<&S> {
        self.0.as_ref().map(|request| &request.value)
    }

    /// The value asked for and whether it was asked with
    /// [`set_if_neq`](Self::set_if_neq) (`true`) or [`set`](Self::set)
    /// (`false`); `None` when nothing is asked (for a snapshot that saves
    /// the request).
    pub fn request(&self) -> Option<(&S, bool)> {
        self.0
            .as_ref()
            .map(|request| (&request.value, request.if_neq))
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
