//! Run conditions: predicates over resources, evaluated each tick before a
//! system runs; a `false` skips the system for that tick.

use std::marker::PhantomData;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::access::short_name;
use crate::{LocalState, SystemAccess, SystemContext, SystemError, SystemParam};

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
                let FunctionCondition { function, locals, .. } = self;
                let name = ctx.system_name();
                let index = match locals.iter().position(|(n, _)| n == name) {
                    Some(index) => index,
                    None => {
                        locals.push((name.to_owned(), LocalState::default()));
                        locals.len() - 1
                    }
                };
                let mut slots = locals[index].1.children(<[&str]>::len(&[$(stringify!($p)),*])).iter_mut();
                $(let $p = $p::fetch_local(ctx, slots.next().expect("one local slot per parameter"))?;)*
                Ok(call(function, $($p),*))
            }
        }
    };
}

function_condition!();
function_condition!(A);
function_condition!(A, B);
function_condition!(A, B, C);
function_condition!(A, B, C, D);

/// A condition shared by the systems of a set (each evaluates it when it
/// would run) or owned by one system.
pub(crate) type SharedCondition = Arc<Mutex<Box<dyn Condition>>>;

pub(crate) fn share(condition: impl Condition) -> SharedCondition {
    Arc::new(Mutex::new(Box::new(condition)))
}
