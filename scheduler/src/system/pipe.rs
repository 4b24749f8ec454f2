//! System piping (bevy's `a.pipe(b)`): the output of one function is the
//! input of the next, and the chain is one system for the scheduler,
//! whose access is the union of its parts'.

use std::any::Any;
use std::borrow::Cow;
use std::marker::PhantomData;

use super::{SystemOutput, failed};
use crate::access::short_name;
use crate::param::LocalState;
use crate::{System, SystemAccess, SystemContext, SystemError, SystemParam};

/// The input a piped function takes from the one before it: its first
/// parameter, `In(value): In<T>` (bevy's `In`). Not a system parameter
/// of its own: only a function after a [`pipe`](IntoPipeable::pipe)
/// takes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct In<T>(pub T);

/// A part of a pipe: a function of system parameters that may take an
/// [`In<T>`] first and may return any value. Made by [`IntoPipeable`];
/// callers never implement it.
pub trait Pipeable: Send + 'static {
    /// What it takes from the part before it (`()` for the first).
    type In: 'static;
    /// What it returns, for the part after it.
    type Out: 'static;

    /// Its name in the pipe's default name.
    fn name(&self) -> Cow<'static, str>;

    /// What it reads and writes.
    fn access(&self) -> SystemAccess;

    /// Runs it with `input`.
    ///
    /// # Errors
    ///
    /// What fetching its parameters returns (an undeclared access, a
    /// missing resource).
    fn run_with(
        &mut self,
        input: Self::In,
        ctx: &SystemContext<'_>,
    ) -> Result<Self::Out, SystemError>;
}

/// Conversion into a [`Pipeable`], and [`pipe`](Self::pipe). `Marker`
/// only tells the implementations apart.
///
/// Implemented for functions and closures of up to 7 [`SystemParam`]s,
/// with or without an [`In<T>`] first, returning anything; and for every
/// [`Pipeable`] (so pipes chain: `a.pipe(b).pipe(c)`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be piped",
    label = "not a pipeable function",
    note = "a piped function takes system parameters (`Query<..>`, `Res<R>`, `Commands`, ...), after an `In<T>` whose `T` is the output of the function before it"
)]
pub trait IntoPipeable<Marker>: Sized {
    /// The pipeable type.
    type System: Pipeable;

    /// Makes the pipeable.
    fn into_pipeable(self) -> Self::System;

    /// Runs `self`, then `next` with `self`'s output as its [`In`]: one
    /// system, whose access is the union of both (so the schedule orders
    /// it as one), named `self | next` unless
    /// [`named`](crate::SystemConfig::named). It is a system to
    /// [`add`](crate::ScheduleBuilder::add) when the first part takes no
    /// input and the last returns `()` or `Result<(), E>`; an error of
    /// the last part stops the tick naming the pipe. Each part keeps its
    /// own [`Local`](crate::Local)s.
    ///
    /// The output type must be the next part's input type:
    ///
    /// ```compile_fail
    /// use scheduler::{In, IntoPipeable, Schedule};
    ///
    /// fn name() -> String {
    ///     "ship".to_owned()
    /// }
    /// fn count(In(n): In<u32>) {}
    ///
    /// Schedule::builder().add(name.pipe(count)); // error: String is not u32
    /// ```
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{In, IntoPipeable, Query, ResMut, Schedule, Tick};
    ///
    /// struct Health(i32);
    ///
    /// fn count_dead(q: Query<&Health>) -> usize {
    ///     q.iter().filter(|h| h.0 <= 0).count()
    /// }
    /// fn record(In(dead): In<usize>, mut total: ResMut<usize>) {
    ///     *total += dead;
    /// }
    ///
    /// let mut registry = Registry::new();
    /// registry.insert_resource(0_usize);
    /// registry.spawn((Health(0),));
    /// registry.spawn((Health(5),));
    /// let mut builder = Schedule::builder();
    /// builder.add(count_dead.pipe(record));
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// assert_eq!(schedule.waves()[0][0].1, "count_dead | record");
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// assert_eq!(registry.resource::<usize>(), Some(&1));
    /// ```
    fn pipe<B, MarkerB>(self, next: B) -> Pipe<Self::System, B::System>
    where
        B: IntoPipeable<MarkerB>,
        B::System: Pipeable<In = <Self::System as Pipeable>::Out>,
    {
        let (first, second) = (self.into_pipeable(), next.into_pipeable());
        let name = Cow::Owned(format!("{} | {}", first.name(), second.name()));
        Pipe {
            first,
            second,
            name,
        }
    }
}

/// Marker for [`IntoPipeable`] on a [`Pipeable`].
#[derive(Debug)]
pub struct IsPipeable;

impl<P: Pipeable> IntoPipeable<IsPipeable> for P {
    type System = P;
    fn into_pipeable(self) -> P {
        self
    }
}

/// Two parts run one after the other, the first's output the second's
/// input: made by [`IntoPipeable::pipe`].
pub struct Pipe<A, B> {
    first: A,
    second: B,
    name: Cow<'static, str>,
}

impl<A, B> std::fmt::Debug for Pipe<A, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipe").field("name", &self.name).finish()
    }
}

impl<A: Pipeable, B: Pipeable<In = A::Out>> Pipeable for Pipe<A, B> {
    type In = A::In;
    type Out = B::Out;

    fn name(&self) -> Cow<'static, str> {
        self.name.clone()
    }

    fn access(&self) -> SystemAccess {
        let mut access = self.first.access();
        let second = self.second.access();
        access.merge(&second);
        // A part's own clash (two `Commands` in one function) is still
        // one: `merge` keeps the accesses, not the clashes.
        for clash in second.clashes() {
            access.record_clash(clash.clone());
        }
        access
    }

    fn run_with(&mut self, input: A::In, ctx: &SystemContext<'_>) -> Result<B::Out, SystemError> {
        let middle = self.first.run_with(input, ctx)?;
        self.second.run_with(middle, ctx)
    }
}

impl<A, B> System for Pipe<A, B>
where
    A: Pipeable<In = ()>,
    B: Pipeable<In = A::Out>,
    B::Out: SystemOutput,
{
    fn default_name(&self) -> Cow<'static, str> {
        self.name.clone()
    }

    fn access(&self) -> SystemAccess {
        Pipeable::access(self)
    }

    fn run(&mut self, ctx: &SystemContext<'_>) -> Result<(), SystemError> {
        let outcome = self.run_with((), ctx)?.into_outcome();
        failed(ctx.system_name(), outcome)
    }

    fn state(&self) -> &dyn Any {
        self
    }
}

/// A function as a part of a pipe; see [`IntoPipeable`].
pub struct PipeableFunction<F, Params> {
    function: F,
    locals: LocalState,
    _params: PhantomData<fn() -> Params>,
}

impl<F, Params> std::fmt::Debug for PipeableFunction<F, Params> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&short_name(std::any::type_name::<F>()))
    }
}

impl<F, Params> PipeableFunction<F, Params> {
    fn new(function: F) -> Self {
        PipeableFunction {
            function,
            locals: LocalState::default(),
            _params: PhantomData,
        }
    }
}

macro_rules! pipeable_function {
    ($($p:ident),*) => {
        impl<Func, Out: 'static, $($p: SystemParam + 'static),*> IntoPipeable<fn($($p,)*) -> Out> for Func
        where
            Func: Send + 'static + FnMut($($p),*) -> Out + FnMut($($p::Item<'_>),*) -> Out,
        {
            type System = PipeableFunction<Func, fn($($p,)*) -> Out>;
            fn into_pipeable(self) -> Self::System {
                PipeableFunction::new(self)
            }
        }

        impl<Func, Out: 'static, $($p: SystemParam + 'static),*> Pipeable for PipeableFunction<Func, fn($($p,)*) -> Out>
        where
            Func: Send + 'static + FnMut($($p),*) -> Out + FnMut($($p::Item<'_>),*) -> Out,
        {
            type In = ();
            type Out = Out;

            fn name(&self) -> Cow<'static, str> {
                Cow::Owned(short_name(std::any::type_name::<Func>()))
            }

            #[allow(unused_mut, reason = "a function without parameters declares nothing")]
            fn access(&self) -> SystemAccess {
                let mut access = SystemAccess::new();
                $($p::declare(&mut access);)*
                access
            }

            #[allow(non_snake_case, unused_variables, unused_mut, reason = "parameters named after their types; none for a function without parameters")]
            fn run_with(&mut self, _input: (), ctx: &SystemContext<'_>) -> Result<Out, SystemError> {
                #[allow(clippy::too_many_arguments, reason = "one argument per system parameter")]
                fn call<Out, $($p),*>(mut f: impl FnMut($($p),*) -> Out, $($p: $p),*) -> Out {
                    f($($p),*)
                }
                let mut locals = self.locals.children(<[&str]>::len(&[$(stringify!($p)),*])).iter_mut();
                $(let $p = $p::fetch_local(ctx, locals.next().expect("one local slot per parameter"))?;)*
                Ok(call(&mut self.function, $($p),*))
            }
        }

        impl<Func, Input: 'static, Out: 'static, $($p: SystemParam + 'static),*> IntoPipeable<fn(In<Input>, $($p,)*) -> Out> for Func
        where
            Func: Send + 'static + FnMut(In<Input>, $($p),*) -> Out + FnMut(In<Input>, $($p::Item<'_>),*) -> Out,
        {
            type System = PipeableFunction<Func, fn(In<Input>, $($p,)*) -> Out>;
            fn into_pipeable(self) -> Self::System {
                PipeableFunction::new(self)
            }
        }

        impl<Func, Input: 'static, Out: 'static, $($p: SystemParam + 'static),*> Pipeable for PipeableFunction<Func, fn(In<Input>, $($p,)*) -> Out>
        where
            Func: Send + 'static + FnMut(In<Input>, $($p),*) -> Out + FnMut(In<Input>, $($p::Item<'_>),*) -> Out,
        {
            type In = Input;
            type Out = Out;

            fn name(&self) -> Cow<'static, str> {
                Cow::Owned(short_name(std::any::type_name::<Func>()))
            }

            #[allow(unused_mut, reason = "a function without parameters declares nothing")]
            fn access(&self) -> SystemAccess {
                let mut access = SystemAccess::new();
                $($p::declare(&mut access);)*
                access
            }

            #[allow(non_snake_case, unused_variables, unused_mut, reason = "parameters named after their types; none for a function without parameters")]
            fn run_with(&mut self, input: Input, ctx: &SystemContext<'_>) -> Result<Out, SystemError> {
                #[allow(clippy::too_many_arguments, reason = "one argument per system parameter")]
                fn call<Input, Out, $($p),*>(mut f: impl FnMut(In<Input>, $($p),*) -> Out, input: In<Input>, $($p: $p),*) -> Out {
                    f(input, $($p),*)
                }
                let mut locals = self.locals.children(<[&str]>::len(&[$(stringify!($p)),*])).iter_mut();
                $(let $p = $p::fetch_local(ctx, locals.next().expect("one local slot per parameter"))?;)*
                Ok(call(&mut self.function, In(input), $($p),*))
            }
        }
    };
}

pipeable_function!();
pipeable_function!(A);
pipeable_function!(A, B);
pipeable_function!(A, B, C);
pipeable_function!(A, B, C, D);
pipeable_function!(A, B, C, D, E);
pipeable_function!(A, B, C, D, E, F);
pipeable_function!(A, B, C, D, E, F, G);
