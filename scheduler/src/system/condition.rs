//! Run conditions: predicates over resources, evaluated each tick before a
//! system runs; a `false` skips the system for that tick. Built-in ones:
//! [`resource_exists`], [`resource_changed`], [`every_n_ticks`] and
//! [`on_timer`].

use std::marker::PhantomData;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::access::short_name;
use crate::{LocalState, Res, SystemAccess, SystemContext, SystemError, SystemParam, Tick};

/// A predicate the scheduler evaluates right before a system would run,
/// each tick: `true` runs the system, `false` skips it for the tick (it
/// records nothing, and its timing is zero). Its access is merged into the
/// system's, so the schedule orders it like the system: the condition sees
/// the same values the system would, whatever the thread count.
///
/// Made from a function or closure returning `bool` whose parameters are
/// [`SystemParam`]s (usually `Res<R>`); see [`IntoCondition`]. A
/// condition keeps its parameters' state per system that evaluates it: a
/// `Query` with [`Changed`](ecs_engine::Changed) sees what changed since
/// the condition last ran for that system, and a `Local` keeps its value.
pub trait Condition: Send + 'static {
    /// What the predicate reads; called once, at build.
    fn access(&self) -> SystemAccess;

    /// Evaluates the predicate.
    ///
    /// # Errors
    ///
    /// What fetching its parameters returns (a missing resource, ...); the
    /// tick then fails as if the system had.
    fn evaluate(&mut self, ctx: &SystemContext<'_>) -> Result<bool, SystemError>;

    /// The state type (its id and name) the condition tests, for
    /// [`in_state`](crate::in_state): the build checks that the type was
    /// added ([`BuildError::UnknownState`](crate::BuildError::UnknownState)).
    /// `None`, the default, for every other condition.
    fn state_type(&self) -> Option<(std::any::TypeId, &'static str)> {
        None
    }

    /// The state the predicate's parameters keep for the system named
    /// `system`, for saved system states
    /// ([`Schedule::save_system_states`](crate::Schedule::save_system_states));
    /// `None` (the default) when it keeps none.
    fn locals_for(&self, system: &str) -> Option<&LocalState> {
        let _ = system;
        None
    }

    /// [`locals_for`](Self::locals_for), mutable, made empty when the
    /// predicate has not run for that system yet.
    fn locals_for_mut(&mut self, system: &str) -> Option<&mut LocalState> {
        let _ = system;
        None
    }
}

/// Conversion into a [`Condition`]: implemented for functions and
/// closures of up to 4 [`SystemParam`]s returning `bool`. `Marker` only
/// tells the implementations apart.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a run condition",
    label = "not a run condition",
    note = "a run condition is a function or closure of up to 4 parameters (`Res<R>`, `Query<..>`, `Tick`, ...) returning `bool`"
)]
pub trait IntoCondition<Marker> {
    /// The condition type.
    type Condition: Condition;
    /// Makes the condition.
    fn into_condition(self) -> Self::Condition;
}

/// Marker for [`IntoCondition`] on a type that is a [`Condition`] already
/// (such as [`EveryNTicks`]).
#[derive(Debug)]
pub struct IsCondition;

impl<C: Condition> IntoCondition<IsCondition> for C {
    type Condition = C;
    fn into_condition(self) -> C {
        self
    }
}

/// A [`Condition`] made from a function; see [`IntoCondition`].
pub struct FunctionCondition<F, Params> {
    function: F,
    /// Its parameters' states (a `Query`'s last run, so `Changed<T>`
    /// compares with the previous evaluation; a `Local`'s value), one set
    /// per system that evaluates it (a set's condition is shared), by
    /// system name.
    locals: Vec<(String, LocalState)>,
    _params: PhantomData<fn() -> Params>,
}

impl<F, Params> std::fmt::Debug for FunctionCondition<F, Params> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&short_name(std::any::type_name::<F>()))
    }
}

macro_rules! function_condition {
    ($($p:ident),*) => {
        impl<Func, $($p: SystemParam + 'static),*> IntoCondition<fn($($p,)*) -> bool> for Func
        where
            Func: Send + 'static + FnMut($($p),*) -> bool + FnMut($($p::Item<'_>),*) -> bool,
        {
            type Condition = FunctionCondition<Func, fn($($p,)*)>;
            fn into_condition(self) -> Self::Condition {
                FunctionCondition { function: self, locals: Vec::new(), _params: PhantomData }
            }
        }

        impl<Func, $($p: SystemParam + 'static),*> Condition for FunctionCondition<Func, fn($($p,)*)>
        where
            Func: Send + 'static + FnMut($($p),*) -> bool + FnMut($($p::Item<'_>),*) -> bool,
        {
            #[allow(unused_mut, reason = "a predicate without parameters declares nothing")]
            fn access(&self) -> SystemAccess {
                let mut access = SystemAccess::new();
                $($p::declare(&mut access);)*
                access
            }

            #[allow(non_snake_case, unused_variables, unused_mut, reason = "parameters named after their types; none for a predicate without parameters")]
            fn evaluate(&mut self, ctx: &SystemContext<'_>) -> Result<bool, SystemError> {
                fn call<$($p),*>(mut f: impl FnMut($($p),*) -> bool, $($p: $p),*) -> bool {
                    f($($p),*)
                }
                let local = entry(&mut self.locals, ctx.system_name());
                let mut slots = local.children(<[&str]>::len(&[$(stringify!($p)),*])).iter_mut();
                $(let $p = $p::fetch_local(ctx, slots.next().expect("one local slot per parameter"))?;)*
                Ok(call(&mut self.function, $($p),*))
            }

            fn locals_for(&self, system: &str) -> Option<&LocalState> {
                self.locals.iter().find(|(n, _)| n == system).map(|(_, local)| local)
            }

            fn locals_for_mut(&mut self, system: &str) -> Option<&mut LocalState> {
                Some(entry(&mut self.locals, system))
            }
        }
    };
}

/// The state kept for `system` in `locals`, made empty on first use.
fn entry<'a>(locals: &'a mut Vec<(String, LocalState)>, system: &str) -> &'a mut LocalState {
    let index = match locals.iter().position(|(n, _)| n == system) {
        Some(index) => index,
        None => {
            locals.push((system.to_owned(), LocalState::default()));
            locals.len() - 1
        }
    };
    &mut locals[index].1
}

function_condition!();
function_condition!(A);
function_condition!(A, B);
function_condition!(A, B, C);
function_condition!(A, B, C, D);

/// A condition owned by one system, or shared by the members of a set
/// (evaluated once per tick for all of them: the first evaluation's
/// verdict holds for the rest of the tick).
pub(crate) type SharedCondition = Arc<Mutex<ConditionSlot>>;

pub(crate) fn share(condition: impl Condition) -> SharedCondition {
    Arc::new(Mutex::new(ConditionSlot {
        condition: Box::new(condition),
        verdict: None,
    }))
}

/// A condition and the verdict it gave this tick, when it is a set's.
pub(crate) struct ConditionSlot {
    condition: Box<dyn Condition>,
    verdict: Option<bool>,
}

impl ConditionSlot {
    /// What the predicate reads.
    pub(crate) fn access(&self) -> SystemAccess {
        self.condition.access()
    }

    /// The condition itself.
    pub(crate) fn condition(&self) -> &dyn Condition {
        &*self.condition
    }

    /// The condition itself, mutable.
    pub(crate) fn condition_mut(&mut self) -> &mut dyn Condition {
        &mut *self.condition
    }

    /// Evaluates the predicate; with `once` (a set's condition), only the
    /// first time in the tick, whose verdict it then keeps.
    ///
    /// # Errors
    ///
    /// As [`Condition::evaluate`] (an error is not kept).
    pub(crate) fn verdict(
        &mut self,
        ctx: &SystemContext<'_>,
        once: bool,
    ) -> Result<bool, SystemError> {
        if once && let Some(verdict) = self.verdict {
            return Ok(verdict);
        }
        let verdict = self.condition.evaluate(ctx)?;
        if once {
            self.verdict = Some(verdict);
        }
        Ok(verdict)
    }

    /// Forgets the tick's verdict (at the start of each tick).
    pub(crate) fn reset(&mut self) {
        self.verdict = None;
    }
}

/// A run condition: `true` while the registry holds a resource `R`
/// (bevy's `resource_exists`). Pass the function itself:
/// `.run_if(resource_exists::<R>)`.
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{Schedule, Tick, resource_exists};
///
/// struct Paused;
/// fn count(mut n: scheduler::ResMut<u32>) {
///     *n += 1;
/// }
/// let mut registry = Registry::new();
/// registry.insert_resource(0_u32);
/// let mut builder = Schedule::builder();
/// builder.add(count).run_if(resource_exists::<Paused>);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// registry.insert_resource(Paused);
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// assert_eq!(registry.resource::<u32>(), Some(&1));
/// ```
pub fn resource_exists<R: Send + Sync + 'static>(resource: Option<Res<R>>) -> bool {
    resource.is_some()
}

/// A run condition: `true` when resource `R` was changed (or added)
/// since this condition last ran for the system (bevy's
/// `resource_changed`); `true` on its first evaluation. Pass the function
/// itself: `.run_if(resource_changed::<R>)`. A missing `R` fails the tick
/// as a missing `Res<R>` does.
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{Res, ResMut, Schedule, Tick, resource_changed};
///
/// struct Volume(u32);
/// fn apply(volume: Res<Volume>, mut applied: ResMut<Vec<u32>>) {
///     applied.push(volume.0);
/// }
/// let mut registry = Registry::new();
/// registry.insert_resource(Volume(3));
/// registry.insert_resource(Vec::<u32>::new());
/// let mut builder = Schedule::builder();
/// builder.add(apply).run_if(resource_changed::<Volume>);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap(); // first: runs
/// schedule.run(&mut registry, Tick::default()).unwrap(); // unchanged: skipped
/// registry.resource_mut::<Volume>().unwrap().0 = 7;
/// schedule.run(&mut registry, Tick::default()).unwrap(); // changed: runs
/// assert_eq!(registry.resource::<Vec<u32>>().unwrap(), &[3, 7]);
/// ```
pub fn resource_changed<R: Send + Sync + 'static>(resource: Res<R>) -> bool {
    resource.is_changed()
}

/// A run condition: `true` on the ticks whose number is a multiple of `n`
/// (ticks 0, n, 2n, ...), whatever the wall clock does, so the same ticks
/// on any machine and thread count.
///
/// # Panics
///
/// When `n` is 0.
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{ResMut, Schedule, Tick, every_n_ticks};
///
/// fn autosave(mut saves: ResMut<Vec<u64>>, tick: Tick) {
///     saves.push(tick.number);
/// }
/// let mut registry = Registry::new();
/// registry.insert_resource(Vec::<u64>::new());
/// let mut builder = Schedule::builder();
/// builder.add(autosave).run_if(every_n_ticks(3));
/// let mut schedule = builder.build(&mut registry).unwrap();
/// for number in 0..7 {
///     schedule.run(&mut registry, Tick { number, ..Tick::default() }).unwrap();
/// }
/// assert_eq!(registry.resource::<Vec<u64>>().unwrap(), &[0, 3, 6]);
/// ```
pub fn every_n_ticks(n: u64) -> EveryNTicks {
    assert!(
        n > 0,
        "every_n_ticks(0): the period must be at least one tick"
    );
    EveryNTicks { n }
}

/// The run condition [`every_n_ticks`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EveryNTicks {
    n: u64,
}

impl Condition for EveryNTicks {
    fn access(&self) -> SystemAccess {
        SystemAccess::new()
    }

    fn evaluate(&mut self, ctx: &SystemContext<'_>) -> Result<bool, SystemError> {
        Ok(ctx.tick().number.is_multiple_of(self.n))
    }
}

/// A run condition: `true` once each time the simulated clock (the tick's
/// number times its fixed [`step`](Tick::step), in seconds) passes a
/// multiple of `period` seconds: on tick `n` when
/// `floor(n * step / period) > floor((n - 1) * step / period)`. Simulated
/// time, not the wall clock (bevy's `on_timer` uses real time), so the
/// same ticks on every run: with a 1/60 s step, `on_timer(0.5)` is true
/// on ticks 30, 60, 90, ...
///
/// # Panics
///
/// When `period` is not a positive finite number.
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{ResMut, Schedule, Tick, on_timer};
///
/// fn spawn_wave(mut waves: ResMut<Vec<u64>>, tick: Tick) {
///     waves.push(tick.number);
/// }
/// let mut registry = Registry::new();
/// registry.insert_resource(Vec::<u64>::new());
/// let mut builder = Schedule::builder();
/// builder.add(spawn_wave).run_if(on_timer(0.5));
/// let mut schedule = builder.build(&mut registry).unwrap();
/// for number in 0..100 {
///     let tick = Tick { number, step: 1.0 / 60.0, delta: 0.0 };
///     schedule.run(&mut registry, tick).unwrap();
/// }
/// assert_eq!(registry.resource::<Vec<u64>>().unwrap(), &[30, 60, 90]);
/// ```
pub fn on_timer(period: f64) -> OnTimer {
    assert!(
        period.is_finite() && period > 0.0,
        "on_timer({period}): the period must be a positive number of seconds"
    );
    OnTimer { period }
}

/// The run condition [`on_timer`] makes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OnTimer {
    /// Seconds of simulated time.
    period: f64,
}

impl Condition for OnTimer {
    fn access(&self) -> SystemAccess {
        SystemAccess::new()
    }

    fn evaluate(&mut self, ctx: &SystemContext<'_>) -> Result<bool, SystemError> {
        let tick: Tick = ctx.tick();
        let periods = |number: u64| (number as f64 * tick.step / self.period).floor();
        Ok(tick.number > 0 && periods(tick.number) > periods(tick.number - 1))
    }
}
