//! Systems: functions and structs that run once per tick over the registry;
//! their run conditions in `condition`, piping in `pipe`.

pub(crate) mod condition;
pub(crate) mod pipe;

use std::any::Any;
use std::borrow::Cow;
use std::marker::PhantomData;

use crate::access::short_name;
use ecs_engine::Registry;

use crate::param::LocalState;
use crate::{ExclusiveParam, SystemAccess, SystemContext, SystemError, SystemParam, Tick};

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

    /// The system's state, mutable, for a restore of saved system states
    /// ([`Schedule::restore_system_states`](crate::Schedule::restore_system_states));
    /// `None` (the default) when it cannot be replaced (a function or
    /// closure).
    fn state_mut(&mut self) -> Option<&mut dyn Any> {
        None
    }

    /// The state the system's parameters keep from run to run
    /// ([`Local`](crate::Local) values, last-run change ticks, removal
    /// cursors), for saved system states; `None` (the default) for a
    /// system that keeps none.
    fn locals(&self) -> Option<&LocalState> {
        None
    }

    /// [`locals`](Self::locals), mutable.
    fn locals_mut(&mut self) -> Option<&mut LocalState> {
        None
    }

    /// Runs an exclusive system (one whose [`access`](Self::access) is
    /// [`exclusive`](SystemAccess::exclusive)) with the whole registry, alone
    /// between waves. The executor calls it instead of [`run`](Self::run)
    /// for such a system; the default refuses.
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run); the default is a [`SystemError::Failed`]
    /// saying the system is not exclusive.
    fn run_exclusive(
        &mut self,
        name: &str,
        registry: &mut Registry,
        tick: Tick,
    ) -> Result<(), SystemError> {
        let _ = (registry, tick);
        Err(SystemError::Failed {
            system: name.to_owned(),
            message: "not an exclusive system: it runs with a SystemContext".to_owned(),
        })
    }
}

/// What a system function may return: `()`, or a `Result<(), E>` whose
/// error (any [`Display`](std::fmt::Display)) stops the tick with a
/// [`RunError::System`](crate::RunError::System) naming the system, as a
/// panic does.
pub trait SystemOutput: 'static {
    /// `Err(message)` for a failed run.
    ///
    /// # Errors
    ///
    /// The error's message.
    fn into_outcome(self) -> Result<(), String>;
}

impl SystemOutput for () {
    fn into_outcome(self) -> Result<(), String> {
        Ok(())
    }
}

/// Names the never type `!` on stable Rust: the output of `fn() -> !`.
trait FnOutput {
    type Output;
}

impl<O> FnOutput for fn() -> O {
    type Output = O;
}

/// `!`, the type of a closure body that only panics (edition 2024 no
/// longer turns it into `()`), so such a closure is still a system.
type Never = <fn() -> ! as FnOutput>::Output;

#[expect(
    private_interfaces,
    reason = "the helper trait only names `!`; the impl is for `!` itself"
)]
impl SystemOutput for Never {
    fn into_outcome(self) -> Result<(), String> {
        self
    }
}

impl<E: std::fmt::Display + 'static> SystemOutput for Result<(), E> {
    fn into_outcome(self) -> Result<(), String> {
        self.map_err(|e| e.to_string())
    }
}

fn failed(system: &str, outcome: Result<(), String>) -> Result<(), SystemError> {
    outcome.map_err(|message| SystemError::Failed {
        system: system.to_owned(),
        message,
    })
}

/// Conversion into a [`System`]. `Marker` only tells the implementations
/// apart; callers never name it.
///
/// Implemented for:
/// - every [`System`];
/// - functions and closures whose parameters are all [`SystemParam`]s
///   (`fn movement(query: Query<(&mut Position, &Velocity)>)`), with the
///   access derived from the parameter types;
/// - every [`StatefulSystem`] (a struct that keeps state between ticks);
/// - exclusive functions of `&mut Registry` and up to 4
///   [`ExclusiveParam`]s (`fn(&mut Registry, Local<u32>, Tick)`), see
///   [`ExclusiveSystem`].
///
/// A function or closure may return `()` or `Result<(), E>` (`E:
/// Display`): an error stops the tick with a
/// [`RunError::System`](crate::RunError::System) naming the system.
///
/// Anything else is refused at compile time with a message listing the
/// accepted parameter kinds:
///
/// ```compile_fail
/// use scheduler::Schedule;
///
/// fn not_a_system(speed: f32) {} // `f32` is not a system parameter
///
/// let mut builder = Schedule::builder();
/// builder.add(not_a_system); // error: `fn(f32) {not_a_system}` is not a system
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a system",
    label = "not a system",
    note = "a system is a function or closure of up to 8 parameters, each a `Query<..>`, `Res<R>`, `ResMut<R>`, `Option<Res<R>>`, `Option<ResMut<R>>`, `Commands`, `Tick`, `Local<T>`, `EventReader<E>`, `EventWriter<E>`, `RemovedComponents<T>`, `ParamSet<(..)>` or a tuple of these (nest tuples for more), returning `()` or `Result<(), E>`",
    note = "or an exclusive function `fn(&mut Registry, ..)` taking after the registry up to 4 `Local<T>`, `Tick` or tuples of these (no `Res`, `Query`, `Commands` or `EventWriter`: reach those through the registry), a `StatefulSystem` struct, or a type implementing `System`"
)]
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
    locals: LocalState,
    _params: PhantomData<fn() -> Params>,
}

impl<F, Params> std::fmt::Debug for FunctionSystem<F, Params> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&short_name(std::any::type_name::<F>()))
    }
}

/// The [`System`] items a function system and an exclusive system share:
/// names from the function's type, the function as the state, and the
/// parameters' `Local` slots (`self.function`, `self.locals`).
macro_rules! closure_system_items {
    () => {
        fn default_name(&self) -> Cow<'static, str> {
            Cow::Owned(short_name(std::any::type_name::<Func>()))
        }

        fn type_path(&self) -> Option<Cow<'static, str>> {
            Some(Cow::Borrowed(std::any::type_name::<Func>()))
        }

        fn state(&self) -> &dyn Any {
            &self.function
        }

        fn locals(&self) -> Option<&LocalState> {
            Some(&self.locals)
        }

        fn locals_mut(&mut self) -> Option<&mut LocalState> {
            Some(&mut self.locals)
        }
    };
}

macro_rules! function_system {
    ($($p:ident),*) => {
        impl<Func, Out: SystemOutput, $($p: SystemParam + 'static),*> IntoSystem<fn($($p,)*) -> Out> for Func
        where
            Func: Send + 'static + FnMut($($p),*) -> Out + FnMut($($p::Item<'_>),*) -> Out,
        {
            type System = FunctionSystem<Func, fn($($p,)*) -> Out>;
            fn into_system(self) -> Self::System {
                FunctionSystem { function: self, locals: LocalState::default(), _params: PhantomData }
            }
        }

        impl<Func, Out: SystemOutput, $($p: SystemParam + 'static),*> System for FunctionSystem<Func, fn($($p,)*) -> Out>
        where
            Func: Send + 'static + FnMut($($p),*) -> Out + FnMut($($p::Item<'_>),*) -> Out,
        {
            closure_system_items!();

            #[allow(unused_mut, reason = "a function without parameters declares nothing")]
            fn access(&self) -> SystemAccess {
                let mut access = SystemAccess::new();
                $($p::declare(&mut access);)*
                access
            }

            #[allow(non_snake_case, unused_variables, unused_mut, reason = "parameters named after their types; none for a function without parameters")]
            fn run(&mut self, ctx: &SystemContext<'_>) -> Result<(), SystemError> {
                // Calls through a generic function so that the
                // `FnMut(Item<'_>...)` bound is the one used.
                #[allow(clippy::too_many_arguments, reason = "one argument per system parameter")]
                fn call<Out, $($p),*>(mut f: impl FnMut($($p),*) -> Out, $($p: $p),*) -> Out {
                    f($($p),*)
                }
                let mut locals = self.locals.children(<[&str]>::len(&[$(stringify!($p)),*])).iter_mut();
                $(let $p = $p::fetch_local(ctx, locals.next().expect("one local slot per parameter"))?;)*
                let outcome = call(&mut self.function, $($p),*).into_outcome();
                failed(ctx.system_name(), outcome)
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
pub struct Stateful<S>(S, LocalState);

impl<S: StatefulSystem> IntoSystem<IsStateful> for S {
    type System = Stateful<S>;
    fn into_system(self) -> Stateful<S> {
        Stateful(self, LocalState::default())
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
        let params = S::Params::fetch_local(ctx, &mut self.1)?;
        self.0.run(params);
        Ok(())
    }

    fn state(&self) -> &dyn Any {
        &self.0
    }

    fn state_mut(&mut self) -> Option<&mut dyn Any> {
        Some(&mut self.0)
    }

    fn locals(&self) -> Option<&LocalState> {
        Some(&self.1)
    }

    fn locals_mut(&mut self) -> Option<&mut LocalState> {
        Some(&mut self.1)
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

/// An exclusive system: a function of `&mut Registry` and up to 4
/// [`ExclusiveParam`]s (`fn(&mut Registry, P1, .., Pn)`: [`Local<T>`](crate::Local),
/// [`Tick`], tuples of these), returning `()` or a `Result<(), E>`, for
/// work that touches everything (loading a level, compacting, spawning
/// from a file). It conflicts with every other system, so it runs alone in
/// its own wave, in its place in the order (registration order, or its
/// `before`/`after` constraints), after the commands of the waves before
/// it are applied. Made by [`IntoSystem`] from such a function;
/// structural changes go straight to the registry, no command buffer
/// needed.
///
/// The parameters after the registry come from the system's own state,
/// never from the registry: a `Local` keeps its value from run to run, in
/// the system's [`locals`](System::locals) (one child state per
/// parameter, as a function system's), so
/// [`Schedule::save_system_states`](crate::Schedule::save_system_states)
/// saves it and
/// [`restore_system_states`](crate::Schedule::restore_system_states) puts
/// it back. Resources, entities and events are reached through the
/// registry: `registry.resource::<R>()` and `resource_mut::<R>()`,
/// `registry.view::<Q>()`, [`Events::send_to(registry,
/// event)`](crate::Events::send_to) to send (appended at once, seen by the
/// readers that run after it), and `registry.resource::<Events<E>>()` with
/// [`Events::iter`](crate::Events::iter) to look at the retained events
/// (no reader cursor: an exclusive system sees every retained event each
/// time). A parameter that borrows the registry (`Res`, `Query`,
/// `Commands`, `EventWriter`, ...) does not compile (see
/// [`ExclusiveParam`]).
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{Local, Query, Schedule, Tick};
///
/// struct Health(i32);
///
/// fn hurt(mut q: Query<&mut Health>) {
///     q.each(|h| h.0 -= 1);
/// }
/// // Exclusive, with a counter of its own kept from tick to tick.
/// fn bury(registry: &mut Registry, mut buried: Local<usize>) {
///     let dead: Vec<_> = registry
///         .view::<(ecs_engine::Entity, &Health)>()
///         .iter()
///         .filter(|(_, h)| h.0 <= 0)
///         .map(|(e, _)| e)
///         .collect();
///     *buried += dead.len();
///     for entity in dead {
///         registry.despawn(entity).unwrap();
///     }
///     registry.insert_resource(*buried);
/// }
///
/// let mut registry = Registry::new();
/// registry.spawn((Health(1),));
/// registry.spawn((Health(2),));
/// registry.spawn((Health(5),));
/// let mut builder = Schedule::builder();
/// builder.add(hurt);
/// builder.add(bury);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// assert_eq!(schedule.waves().len(), 2); // bury runs alone, after hurt
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// assert_eq!(registry.len(), 1);
/// assert_eq!(registry.resource::<usize>(), Some(&2));
/// ```
pub struct ExclusiveSystem<F, Out, Params = ()> {
    function: F,
    locals: LocalState,
    _out: PhantomData<fn() -> (Out, Params)>,
}

impl<F, Out, Params> std::fmt::Debug for ExclusiveSystem<F, Out, Params> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&short_name(std::any::type_name::<F>()))
    }
}

/// Marker for [`IntoSystem`] on an exclusive function (`fn(&mut
/// Registry)`, or `fn(&mut Registry, P1, .., Pn)` with `Params` the tuple
/// `(P1, .., Pn)` of its [`ExclusiveParam`]s).
#[derive(Debug)]
pub struct IsExclusive<Out, Params = ()>(PhantomData<fn() -> (Out, Params)>);

macro_rules! exclusive_system {
    ($($p:ident),*) => {
        impl<Func, Out: SystemOutput, $($p: ExclusiveParam + 'static),*> IntoSystem<IsExclusive<Out, ($($p,)*)>> for Func
        where
            Func: Send + 'static + FnMut(&mut Registry, $($p),*) -> Out + FnMut(&mut Registry, $($p::Item<'_>),*) -> Out,
        {
            type System = ExclusiveSystem<Func, Out, ($($p,)*)>;
            fn into_system(self) -> Self::System {
                ExclusiveSystem { function: self, locals: LocalState::default(), _out: PhantomData }
            }
        }

        impl<Func, Out: SystemOutput, $($p: ExclusiveParam + 'static),*> System for ExclusiveSystem<Func, Out, ($($p,)*)>
        where
            Func: Send + 'static + FnMut(&mut Registry, $($p),*) -> Out + FnMut(&mut Registry, $($p::Item<'_>),*) -> Out,
        {
            closure_system_items!();

            fn access(&self) -> SystemAccess {
                SystemAccess::new().exclusive()
            }

            fn run(&mut self, ctx: &SystemContext<'_>) -> Result<(), SystemError> {
                Err(SystemError::Failed {
                    system: ctx.system_name().to_owned(),
                    message: "an exclusive system runs with the whole registry, not a SystemContext"
                        .to_owned(),
                })
            }

            #[allow(non_snake_case, unused_variables, unused_mut, reason = "parameters named after their types; none for a function of the registry alone")]
            fn run_exclusive(
                &mut self,
                name: &str,
                registry: &mut Registry,
                tick: Tick,
            ) -> Result<(), SystemError> {
                // Calls through a generic function so that the
                // `FnMut(&mut Registry, Item<'_>...)` bound is the one used.
                fn call<Out, $($p),*>(
                    mut f: impl FnMut(&mut Registry, $($p),*) -> Out,
                    registry: &mut Registry,
                    $($p: $p),*
                ) -> Out {
                    f(registry, $($p),*)
                }
                let mut locals = self.locals.children(<[&str]>::len(&[$(stringify!($p)),*])).iter_mut();
                $(let $p = $p::fetch_exclusive(name, locals.next().expect("one local slot per parameter"), tick)?;)*
                let outcome = call(&mut self.function, registry, $($p),*).into_outcome();
                failed(name, outcome)
            }

        }
    };
}

exclusive_system!();
exclusive_system!(A);
exclusive_system!(A, B);
exclusive_system!(A, B, C);
exclusive_system!(A, B, C, D);
