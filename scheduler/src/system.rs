//! Systems: functions and structs that run once per tick over the registry.

use std::any::Any;
use std::borrow::Cow;
use std::marker::PhantomData;

use crate::access::short_name;
use crate::{SystemAccess, SystemContext, SystemError, SystemParam};

/// The clock a system sees: which tick runs, the fixed step, and the wall
/// time since the previous tick.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tick {
    /// The tick's number: 0 for the first tick, then 1, 2, ...
    pub number: u64,
    /// The fixed simulation step, in seconds (1/60 by default in the
    /// engine). Systems that must be deterministic use this.
    pub step: f64,
    /// Wall-clock seconds since the previous tick started (0 for the first).
    pub delta: f64,
}

/// Something the scheduler can run: a declared access and a run function.
///
/// Most systems are plain functions (see [`IntoSystem`]); implement this
/// trait directly for full control.
pub trait System: Send + 'static {
    /// The name used when the schedule is built without an explicit one.
    fn default_name(&self) -> Cow<'static, str>;

    /// The function or type path the default name is made from, when the
    /// system has one: the schedule then names the system by the shortest
    /// suffix of that path that no other system shares (see
    /// [`ScheduleBuilder::build`](crate::ScheduleBuilder::build)). `None`
    /// (the default) when [`default_name`](Self::default_name) is a name the
    /// system chose, kept as is.
    fn type_path(&self) -> Option<Cow<'static, str>> {
        None
    }

    /// What the system reads and writes; called once, at build.
    fn access(&self) -> SystemAccess;

    /// Runs the system once.
    ///
    /// # Errors
    ///
    /// Whatever stops the run; the tick then fails with it and the system's
    /// commands are discarded.
    fn run(&mut self, ctx: &SystemContext<'_>) -> Result<(), SystemError>;

    /// The system's state, for reading its output between ticks (see
    /// [`Schedule::state`](crate::Schedule::state)).
    fn state(&self) -> &dyn Any;
}

/// Conversion into a [`System`]. `Marker` only tells the implementations
/// apart; callers never name it.
///
/// Implemented for:
/// - every [`System`];
/// - functions and closures whose parameters are all [`SystemParam`]s
///   (`fn movement(query: Query<(&mut Position, &Velocity)>)`), with the
///   access derived from the parameter types;
/// - every [`StatefulSystem`] (a struct that keeps state between ticks).
pub trait IntoSystem<Marker> {
    /// The system type.
    type System: System;
    /// Makes the system.
    fn into_system(self) -> Self::System;
}

/// Marker for [`IntoSystem`] on a [`System`].
#[derive(Debug)]
pub struct IsSystem;

impl<S: System> IntoSystem<IsSystem> for S {
    type System = S;
    fn into_system(self) -> S {
        self
    }
}

/// A system made from a function or closure; see [`IntoSystem`].
pub struct FunctionSystem<F, Params> {
    function: F,
    _params: PhantomData<fn() -> Params>,
}

impl<F, Params> std::fmt::Debug for FunctionSystem<F, Params> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&short_name(std::any::type_name::<F>()))
    }
}

macro_rules! function_system {
    ($($p:ident),*) => {
        impl<Func, $($p: SystemParam + 'static),*> IntoSystem<fn($($p,)*)> for Func
        where
            Func: Send + 'static + FnMut($($p),*) + FnMut($($p::Item<'_>),*),
        {
            type System = FunctionSystem<Func, fn($($p,)*)>;
            fn into_system(self) -> Self::System {
                FunctionSystem { function: self, _params: PhantomData }
            }
        }

        impl<Func, $($p: SystemParam + 'static),*> System for FunctionSystem<Func, fn($($p,)*)>
        where
            Func: Send + 'static + FnMut($($p),*) + FnMut($($p::Item<'_>),*),
        {
            fn default_name(&self) -> Cow<'static, str> {
                Cow::Owned(short_name(std::any::type_name::<Func>()))
            }

            fn type_path(&self) -> Option<Cow<'static, str>> {
                Some(Cow::Borrowed(std::any::type_name::<Func>()))
            }

            #[allow(unused_mut, reason = "a function without parameters declares nothing")]
            fn access(&self) -> SystemAccess {
                let mut access = SystemAccess::new();
                $($p::declare(&mut access);)*
                access
            }

            #[allow(non_snake_case, unused_variables, reason = "parameters named after their types")]
            fn run(&mut self, ctx: &SystemContext<'_>) -> Result<(), SystemError> {
                // Calls through a generic function so that the
                // `FnMut(Item<'_>...)` bound is the one used.
                #[allow(clippy::too_many_arguments, reason = "one argument per system parameter")]
                fn call<$($p),*>(mut f: impl FnMut($($p),*), $($p: $p),*) {
                    f($($p),*)
                }
                $(let $p = $p::fetch(ctx)?;)*
                call(&mut self.function, $($p),*);
                Ok(())
            }

            fn state(&self) -> &dyn Any {
                &self.function
            }
        }
    };
}

function_system!();
function_system!(A);
function_system!(A, B);
function_system!(A, B, C);
function_system!(A, B, C, D);
function_system!(A, B, C, D, E);
function_system!(A, B, C, D, E, F);
function_system!(A, B, C, D, E, F, G);
function_system!(A, B, C, D, E, F, G, H);

/// A struct that keeps state between ticks and runs with the parameters
/// `Params` (a [`SystemParam`], usually a tuple). Its state can be read
/// between ticks with [`Schedule::state`](crate::Schedule::state).
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{Query, Schedule, StatefulSystem, Tick};
///
/// struct Health(i32);
///
/// #[derive(Default)]
/// struct CountAlive {
///     last: usize,
/// }
///
/// impl StatefulSystem for CountAlive {
///     type Params = Query<'static, &'static Health>;
///     fn run(&mut self, mut health: Query<'_, &Health>) {
///         self.last = health.iter().filter(|h| h.0 > 0).count();
///     }
/// }
///
/// let mut registry = Registry::new();
/// registry.spawn((Health(3),));
/// registry.spawn((Health(0),));
/// let mut builder = Schedule::builder();
/// let counter = builder.add(CountAlive::default()).id();
/// let mut schedule = builder.build(&mut registry).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// assert_eq!(schedule.state::<CountAlive>(counter).unwrap().last, 1);
/// ```
pub trait StatefulSystem: Send + 'static {
    /// The parameters of each run.
    type Params: SystemParam;
    /// Runs once per tick.
    fn run(&mut self, params: <Self::Params as SystemParam>::Item<'_>);
}

/// Marker for [`IntoSystem`] on a [`StatefulSystem`].
#[derive(Debug)]
pub struct IsStateful;

/// The [`System`] made from a [`StatefulSystem`].
#[derive(Debug)]
pub struct Stateful<S>(S);

impl<S: StatefulSystem> IntoSystem<IsStateful> for S {
    type System = Stateful<S>;
    fn into_system(self) -> Stateful<S> {
        Stateful(self)
    }
}

impl<S: StatefulSystem> System for Stateful<S> {
    fn default_name(&self) -> Cow<'static, str> {
        Cow::Owned(short_name(std::any::type_name::<S>()))
    }

    fn type_path(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(std::any::type_name::<S>()))
    }

    fn access(&self) -> SystemAccess {
        let mut access = SystemAccess::new();
        S::Params::declare(&mut access);
        access
    }

    fn run(&mut self, ctx: &SystemContext<'_>) -> Result<(), SystemError> {
        let params = S::Params::fetch(ctx)?;
        self.0.run(params);
        Ok(())
    }

    fn state(&self) -> &dyn Any {
        &self.0
    }
}

/// A system declared by hand: a name, an explicit [`SystemAccess`] (like a
/// classic `ISystem` with reads and writes lists) and a function of the
/// [`SystemContext`]. Touching a type outside the declaration is a
/// [`SystemError::Undeclared`].
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{DeclaredSystem, Schedule, SystemAccess, Tick};
///
/// struct Position(f32);
/// struct Velocity(f32);
///
/// let movement = DeclaredSystem::new(
///     "movement",
///     SystemAccess::new().write::<Position>().read::<Velocity>(),
///     |ctx| {
///         ctx.query::<(&mut Position, &Velocity)>()?.each(|(p, v)| p.0 += v.0);
///         Ok(())
///     },
/// );
/// let mut registry = Registry::new();
/// let e = registry.spawn((Position(0.0), Velocity(2.0)));
/// let mut builder = Schedule::builder();
/// builder.add(movement);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// assert_eq!(registry.get::<Position>(e).unwrap().0, 2.0);
/// ```
pub struct DeclaredSystem<F> {
    name: Cow<'static, str>,
    access: SystemAccess,
    run: F,
}

impl<F> std::fmt::Debug for DeclaredSystem<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeclaredSystem")
            .field("name", &self.name)
            .field("access", &self.access.describe())
            .finish()
    }
}

impl<F> DeclaredSystem<F>
where
    F: FnMut(&SystemContext<'_>) -> Result<(), SystemError> + Send + 'static,
{
    /// A system named `name` with `access`, running `run`.
    pub fn new(name: impl Into<Cow<'static, str>>, access: SystemAccess, run: F) -> Self {
        DeclaredSystem {
            name: name.into(),
            access,
            run,
        }
    }
}

impl<F> System for DeclaredSystem<F>
where
    F: FnMut(&SystemContext<'_>) -> Result<(), SystemError> + Send + 'static,
{
    fn default_name(&self) -> Cow<'static, str> {
        self.name.clone()
    }

    fn access(&self) -> SystemAccess {
        self.access.clone()
    }

    fn run(&mut self, ctx: &SystemContext<'_>) -> Result<(), SystemError> {
        (self.run)(ctx)
    }

    fn state(&self) -> &dyn Any {
        &self.run
    }
}
