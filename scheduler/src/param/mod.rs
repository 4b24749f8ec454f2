//! System parameters: the types a function system takes, from which its
//! access is derived, so the declaration cannot drift from the code.
//!
//! The trait, the per-system [`LocalState`] and the plain parameters are
//! here; [`Query`](crate::Query) and the change parameters in `query`,
//! the event parameters in `events`, and the [`SystemContext`] every
//! parameter is fetched from in `context`.

pub(crate) mod context;
pub(crate) mod param_set;
pub(crate) mod query;
pub(crate) mod random;

use std::any::Any;
use std::cell::RefMut;
use std::ops::{Deref, DerefMut};

use command_buffer::CommandBuffer;
use ecs_engine::{Access, EcsError};
use parking_lot::{MappedRwLockReadGuard, MappedRwLockWriteGuard};

use crate::{ResourceAccess, SystemAccess, SystemContext, SystemError, Tick};

/// A value a system function receives, fetched from the [`SystemContext`]
/// at each run, with the access it needs declared once at build.
///
/// Implemented for [`Query`](crate::Query), [`Res`], [`ResMut`], [`Commands`], [`Tick`],
/// [`Local`] and tuples of up to 8 parameters (nest tuples for more).
pub trait SystemParam {
    /// The value for one run, borrowing the context for `'s`.
    type Item<'s>;

    /// Adds what the parameter touches to `access`.
    fn declare(access: &mut SystemAccess);

    /// Borrows the parameter for one run.
    ///
    /// # Errors
    ///
    /// What the context's accessors return (an undeclared type, a missing
    /// resource, a borrow conflict).
    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError>;

    /// Borrows the parameter for one run, with `local`, the state this
    /// parameter keeps in its system from run to run ([`Local`] stores
    /// its value there). Function systems and
    /// [`StatefulSystem`](crate::StatefulSystem)s call this; the default
    /// ignores `local` and calls [`fetch`](Self::fetch).
    ///
    /// # Errors
    ///
    /// As [`fetch`](Self::fetch).
    fn fetch_local<'s>(
        ctx: &'s SystemContext<'_>,
        local: &'s mut LocalState,
    ) -> Result<Self::Item<'s>, SystemError> {
        let _ = local;
        Self::fetch(ctx)
    }
}

/// What [`LocalState::for_each_value`] calls with each value: its path,
/// its type name and the value.
pub(crate) type ValueVisitor<'a> = dyn FnMut(&[usize], &'static str, &(dyn Any + Send)) + 'a;

/// The state a system keeps for its parameters from run to run: a value
/// per [`Local`] parameter, made on first use. Held by each function
/// system; a tuple parameter keeps one child state per element.
#[derive(Default)]
pub struct LocalState {
    value: Option<Box<dyn Any + Send>>,
    /// The type name of `value` (for the errors of saved states).
    name: &'static str,
    children: Vec<LocalState>,
}

impl std::fmt::Debug for LocalState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalState")
            .field("has_value", &self.value.is_some())
            .field("children", &self.children)
            .finish()
    }
}

impl LocalState {
    /// This state's value, made with `T::default()` on first use.
    pub(crate) fn value_or_default<T: Default + Send + 'static>(&mut self) -> &mut T {
        if self.value.is_none() {
            self.name = std::any::type_name::<T>();
        }
        self.value
            .get_or_insert_with(|| Box::new(T::default()))
            .downcast_mut::<T>()
            .expect("a local slot holds the type of its parameter")
    }

    /// Calls `f` with every value of this state and its children, in
    /// pre-order, with the value's path (child indices from here) and
    /// type name.
    pub(crate) fn for_each_value(&self, path: &mut Vec<usize>, f: &mut ValueVisitor<'_>) {
        if let Some(value) = &self.value {
            f(path, self.name, &**value);
        }
        for (i, child) in self.children.iter().enumerate() {
            path.push(i);
            child.for_each_value(path, f);
            path.pop();
        }
    }

    /// Drops every value of this state and its children (the next run
    /// makes them anew, as before a first run).
    pub(crate) fn clear_values(&mut self) {
        self.value = None;
        self.children.iter_mut().for_each(LocalState::clear_values);
    }

    /// Puts `value` (of the type named `name`) at `path` below this
    /// state, making the children on the way.
    pub(crate) fn set_value(
        &mut self,
        path: &[usize],
        name: &'static str,
        value: Box<dyn Any + Send>,
    ) {
        match path.split_first() {
            None => {
                self.value = Some(value);
                self.name = name;
            }
            Some((&i, rest)) => self.children(i + 1)[i].set_value(rest, name, value),
        }
    }

    /// The first `n` child states (one per element of a tuple parameter,
    /// or per parameter of a function), made empty on first use.
    pub fn children(&mut self, n: usize) -> &mut [LocalState] {
        if self.children.len() < n {
            self.children.resize_with(n, LocalState::default);
        }
        &mut self.children[..n]
    }
}

/// A system parameter: a value of `T` that belongs to the system and lives
/// from run to run, made with `T::default()` before the first run. A
/// stateful system stays a plain function. Each `Local` parameter of a
/// system has its own value. Touches nothing in the registry, so it adds no
/// ordering.
///
/// Works in function systems, [`StatefulSystem`](crate::StatefulSystem)s
/// and their tuples; fetched another way (a hand-written
/// [`System`](crate::System) calling [`SystemParam::fetch`]) it is a
/// [`SystemError::Failed`].
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{Local, ResMut, Schedule, Tick};
///
/// #[derive(Default)]
/// struct Seen(Vec<u32>);
///
/// fn count(mut calls: Local<u32>, mut seen: ResMut<Seen>) {
///     *calls += 1;
///     seen.0.push(*calls);
/// }
///
/// let mut registry = Registry::new();
/// registry.insert_resource(Seen::default());
/// let mut builder = Schedule::builder();
/// builder.add(count);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// for _ in 0..3 {
///     schedule.run(&mut registry, Tick::default()).unwrap();
/// }
/// assert_eq!(registry.resource::<Seen>().unwrap().0, [1, 2, 3]);
/// ```
pub struct Local<'s, T: Default + Send + 'static>(&'s mut T);

impl<T: Default + Send + 'static + std::fmt::Debug> std::fmt::Debug for Local<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Default + Send + 'static> Deref for Local<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.0
    }
}

impl<T: Default + Send + 'static> DerefMut for Local<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.0
    }
}

impl<T: Default + Send + 'static> SystemParam for Local<'_, T> {
    type Item<'s> = Local<'s, T>;

    fn declare(_: &mut SystemAccess) {}

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        Err(SystemError::Failed {
            system: ctx.system_name().to_owned(),
            message: format!(
                "`Local<{}>` keeps per-system state: use it in a function system, a run condition or a StatefulSystem",
                crate::short_name(std::any::type_name::<T>())
            ),
        })
    }

    fn fetch_local<'s>(
        _: &'s SystemContext<'_>,
        local: &'s mut LocalState,
    ) -> Result<Self::Item<'s>, SystemError> {
        Ok(Local(local.value_or_default::<T>()))
    }
}

/// A system parameter: shared access to resource `R`.
pub struct Res<'s, R: Send + Sync + 'static>(MappedRwLockReadGuard<'s, R>);

/// A system parameter: exclusive access to resource `R`.
pub struct ResMut<'s, R: Send + Sync + 'static>(MappedRwLockWriteGuard<'s, R>);

impl<R: Send + Sync + 'static + std::fmt::Debug> std::fmt::Debug for Res<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<R: Send + Sync + 'static + std::fmt::Debug> std::fmt::Debug for ResMut<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<R: Send + Sync + 'static> Deref for Res<'_, R> {
    type Target = R;
    fn deref(&self) -> &R {
        &self.0
    }
}

impl<R: Send + Sync + 'static> Deref for ResMut<'_, R> {
    type Target = R;
    fn deref(&self) -> &R {
        &self.0
    }
}

impl<R: Send + Sync + 'static> DerefMut for ResMut<'_, R> {
    fn deref_mut(&mut self) -> &mut R {
        &mut self.0
    }
}

impl<R: Send + Sync + 'static> SystemParam for Res<'_, R> {
    type Item<'s> = Res<'s, R>;

    fn declare(access: &mut SystemAccess) {
        access.add_resource_borrow(ResourceAccess::of::<R>(Access::Read));
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        ctx.resource::<R>().map(Res)
    }
}

impl<R: Send + Sync + 'static> SystemParam for ResMut<'_, R> {
    type Item<'s> = ResMut<'s, R>;

    fn declare(access: &mut SystemAccess) {
        access.add_resource_borrow(ResourceAccess::of::<R>(Access::Write));
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        ctx.resource_mut::<R>().map(ResMut)
    }
}

/// `Option<Res<R>>`: the resource when the registry holds one, `None`
/// otherwise (bevy's optional resource). Ordered against the systems that
/// write `R`, as `Res<R>` is, but the schedule runs without it.
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{Res, ResMut, Schedule, Tick};
///
/// struct Wind(f32);
/// #[derive(Default)]
/// struct Drift(f32);
///
/// fn drift(wind: Option<Res<Wind>>, mut drift: ResMut<Drift>) {
///     drift.0 += wind.map_or(0.0, |w| w.0);
/// }
///
/// let mut registry = Registry::new();
/// registry.insert_resource(Drift::default());
/// let mut builder = Schedule::builder();
/// builder.add(drift);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap(); // no wind yet
/// registry.insert_resource(Wind(1.5));
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// assert_eq!(registry.resource::<Drift>().unwrap().0, 1.5);
/// ```
impl<R: Send + Sync + 'static> SystemParam for Option<Res<'_, R>> {
    type Item<'s> = Option<Res<'s, R>>;

    fn declare(access: &mut SystemAccess) {
        access.add_resource_borrow(ResourceAccess::of::<R>(Access::Read).optional());
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        absent_as_none(ctx.resource::<R>()).map(|guard| guard.map(Res))
    }
}

/// `Option<ResMut<R>>`: the resource for writing when the registry holds
/// one, `None` otherwise. Ordered as `ResMut<R>` is; the schedule runs
/// without it.
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{ResMut, Schedule, Tick};
///
/// struct Score(u32);
///
/// fn bump(score: Option<ResMut<Score>>) {
///     if let Some(mut score) = score {
///         score.0 += 1;
///     }
/// }
///
/// let mut registry = Registry::new();
/// let mut builder = Schedule::builder();
/// builder.add(bump);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// registry.insert_resource(Score(0));
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// assert_eq!(registry.resource::<Score>().unwrap().0, 1);
/// ```
impl<R: Send + Sync + 'static> SystemParam for Option<ResMut<'_, R>> {
    type Item<'s> = Option<ResMut<'s, R>>;

    fn declare(access: &mut SystemAccess) {
        access.add_resource_borrow(ResourceAccess::of::<R>(Access::Write).optional());
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        absent_as_none(ctx.resource_mut::<R>()).map(|guard| guard.map(ResMut))
    }
}

/// A missing resource as `None`; every other error stays one.
fn absent_as_none<G>(fetched: Result<G, SystemError>) -> Result<Option<G>, SystemError> {
    match fetched {
        Ok(guard) => Ok(Some(guard)),
        Err(SystemError::Registry {
            source: EcsError::MissingResource { .. },
            ..
        }) => Ok(None),
        Err(error) => Err(error),
    }
}

/// A system parameter: the system's own [`CommandBuffer`], applied after
/// its wave in registration order. Dereferences to the buffer. A system
/// takes at most one: a second is refused when the schedule is built
/// ([`BuildError::ParamClash`](crate::BuildError::ParamClash)).
pub struct Commands<'s>(RefMut<'s, CommandBuffer>, pub(crate) &'s str);

impl std::fmt::Debug for Commands<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Commands")
            .field("len", &self.0.len())
            .finish()
    }
}

impl Deref for Commands<'_> {
    type Target = CommandBuffer;
    fn deref(&self) -> &CommandBuffer {
        &self.0
    }
}

impl DerefMut for Commands<'_> {
    fn deref_mut(&mut self) -> &mut CommandBuffer {
        &mut self.0
    }
}

impl SystemParam for Commands<'_> {
    type Item<'s> = Commands<'s>;

    fn declare(access: &mut SystemAccess) {
        // Each `Commands` borrows the system's one buffer for the whole
        // run: a second one would fail every run, so it is a clash that
        // `build` refuses, naming the system.
        if access.commands() {
            access.record_clash("Commands".into());
        }
        access.set_commands(true);
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        ctx.commands()
            .map(|buffer| Commands(buffer, ctx.system_name()))
    }
}

impl SystemParam for Tick {
    type Item<'s> = Tick;

    fn declare(_: &mut SystemAccess) {}

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        Ok(ctx.tick())
    }
}

macro_rules! param_tuple {
    ($($p:ident),*) => {
        impl<$($p: SystemParam),*> SystemParam for ($($p,)*) {
            type Item<'s> = ($($p::Item<'s>,)*);

            #[allow(unused_variables, reason = "the empty tuple declares nothing")]
            fn declare(access: &mut SystemAccess) {
                $($p::declare(access);)*
            }

            #[allow(unused_variables, reason = "the empty tuple fetches nothing")]
            fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
                Ok(($($p::fetch(ctx)?,)*))
            }

            #[allow(unused_variables, unused_mut, reason = "the empty tuple fetches nothing")]
            fn fetch_local<'s>(
                ctx: &'s SystemContext<'_>,
                local: &'s mut LocalState,
            ) -> Result<Self::Item<'s>, SystemError> {
                let mut slots = local.children(<[&str]>::len(&[$(stringify!($p)),*])).iter_mut();
                Ok(($($p::fetch_local(ctx, slots.next().expect("one local slot per element"))?,)*))
            }
        }
    };
}

param_tuple!();
param_tuple!(A);
param_tuple!(A, B);
param_tuple!(A, B, C);
param_tuple!(A, B, C, D);
param_tuple!(A, B, C, D, E);
param_tuple!(A, B, C, D, E, F);
param_tuple!(A, B, C, D, E, F, G);
param_tuple!(A, B, C, D, E, F, G, H);
