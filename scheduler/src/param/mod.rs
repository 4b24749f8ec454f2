//! System parameters: the types a function system takes, from which its
//! access is derived, so the declaration cannot drift from the code.
//!
//! The trait, the per-system [`LocalState`] and the plain parameters are
//! here; [`Query`](crate::Query) and the change parameters in `query`,
//! the event parameters in `events`, and the [`SystemContext`] every
//! parameter is fetched from in `context`.

pub(crate) mod context;
pub(crate) mod exclusive;
pub(crate) mod param_set;
pub(crate) mod query;
pub(crate) mod random;

use std::any::Any;
use std::cell::RefMut;
use std::ops::{Deref, DerefMut};

use command_buffer::CommandBuffer;
use ecs_engine::{Access, ChangeTick, EcsError, ResourceTicks, ResourceTicksMut};
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

/// One value of a [`LocalState`] tree ([`LocalState::values`]): its
/// path, its type name and the value.
pub(crate) type StoredValue<'a> = (Vec<usize>, &'static str, &'a (dyn Any + Send));

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
    /// This state's value, made with `T::default()` on first use, for
    /// `system`'s parameter.
    ///
    /// # Errors
    ///
    /// [`SystemError::Failed`] when the slot holds a value of another
    /// type: only a restore or a load of saved states from another
    /// version of the system puts one there.
    pub(crate) fn value_or_default<T: Default + Send + 'static>(
        &mut self,
        system: &str,
    ) -> Result<&mut T, SystemError> {
        if self.value.is_none() {
            self.name = std::any::type_name::<T>();
        }
        let found = self.name;
        self.value
            .get_or_insert_with(|| Box::new(T::default()))
            .downcast_mut::<T>()
            .ok_or_else(|| SystemError::Failed {
                system: system.to_owned(),
                message: format!(
                    "its parameter keeps a `{}`, but its saved state holds a `{found}` there \
                     (states saved from another version of the system?)",
                    std::any::type_name::<T>()
                ),
            })
    }

    /// This state's value when it holds a `T`; `None` when it is empty or
    /// holds another type.
    pub(crate) fn value_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.value.as_mut()?.downcast_mut::<T>()
    }

    /// The value at `path` below this state, if there is one.
    pub(crate) fn value_at(&self, path: &[usize]) -> Option<&(dyn Any + Send)> {
        match path.split_first() {
            None => self.value.as_deref(),
            Some((&i, rest)) => self.children.get(i)?.value_at(rest),
        }
    }

    /// Every value of this state and its children, in pre-order, with
    /// the value's path (child indices from here) and type name.
    pub(crate) fn values(&self) -> Vec<StoredValue<'_>> {
        let mut out = Vec::new();
        self.collect_values(&mut Vec::new(), &mut out);
        out
    }

    fn collect_values<'a>(&'a self, path: &mut Vec<usize>, out: &mut Vec<StoredValue<'a>>) {
        if let Some(value) = &self.value {
            out.push((path.clone(), self.name, &**value));
        }
        for (i, child) in self.children.iter().enumerate() {
            path.push(i);
            child.collect_values(path, out);
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
/// Works in function systems, [`StatefulSystem`](crate::StatefulSystem)s,
/// exclusive systems (`fn(&mut Registry, Local<T>)`, as an
/// [`ExclusiveParam`](crate::ExclusiveParam)) and their tuples; fetched another way (a hand-written
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
        ctx: &'s SystemContext<'_>,
        local: &'s mut LocalState,
    ) -> Result<Self::Item<'s>, SystemError> {
        Ok(Local(local.value_or_default::<T>(ctx.system_name())?))
    }
}

/// A system parameter: shared access to resource `R`, with its change
/// detection ([`is_changed`](Self::is_changed),
/// [`is_added`](Self::is_added)) relative to the system's last run, the
/// baseline [`Changed<T>`](ecs_engine::Changed) uses (a first run sees
/// the resource changed and added, as in bevy). Fetching costs the lock
/// and two `u32` loads.
///
/// Fetched by hand ([`SystemParam::fetch`], without the system's state),
/// it compares with the change tick before this run's.
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{Res, ResMut, Schedule, Tick};
///
/// #[derive(Default)]
/// struct Seen(Vec<bool>);
///
/// fn watch(score: Res<u32>, mut seen: ResMut<Seen>) {
///     seen.0.push(score.is_changed());
/// }
///
/// let mut registry = Registry::new();
/// registry.insert_resource(0_u32);
/// registry.insert_resource(Seen::default());
/// let mut builder = Schedule::builder();
/// builder.add(watch);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap(); // first run: changed
/// schedule.run(&mut registry, Tick::default()).unwrap(); // untouched
/// *registry.resource_mut::<u32>().unwrap() = 5;
/// schedule.run(&mut registry, Tick::default()).unwrap(); // written
/// assert_eq!(registry.resource::<Seen>().unwrap().0, [true, false, true]);
/// ```
pub struct Res<'s, R: Send + Sync + 'static> {
    guard: MappedRwLockReadGuard<'s, R>,
    ticks: ResourceTicks,
    since: ChangeTick,
    now: ChangeTick,
}

/// A system parameter: exclusive access to resource `R`, marked changed
/// when written through ([`DerefMut`], as bevy's `ResMut`), not when
/// merely fetched, with the registry's change tick for this run; with
/// the change detection of [`Res`] relative to the system's last run.
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
/// use scheduler::{ResMut, Schedule, Tick};
///
/// fn maybe_bump(mut score: ResMut<u32>, tick: Tick) {
///     if tick.number % 2 == 1 {
///         *score += 1; // marks
///     } else {
///         let _ = *score; // reads only: no mark
///     }
/// }
///
/// let mut registry = Registry::new();
/// registry.insert_resource(0_u32);
/// let mut builder = Schedule::builder();
/// builder.add(maybe_bump);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// let mut changed = Vec::new();
/// for number in 0..4 {
///     let since = registry.change_tick();
///     schedule.run(&mut registry, Tick { number, ..Tick::default() }).unwrap();
///     changed.push(registry.resource_changed_since::<u32>(since).unwrap());
/// }
/// assert_eq!(changed, [false, true, false, true]);
/// ```
pub struct ResMut<'s, R: Send + Sync + 'static> {
    guard: MappedRwLockWriteGuard<'s, R>,
    ticks: ResourceTicksMut<'s>,
    since: ChangeTick,
    now: ChangeTick,
}

impl<'s, R: Send + Sync + 'static> Res<'s, R> {
    /// `true` when the resource was changed (inserted, replaced or
    /// written) since the system last ran; always on its first run.
    pub fn is_changed(&self) -> bool {
        self.ticks.is_changed(self.since, self.now)
    }

    /// `true` when the resource was added (inserted while absent) since
    /// the system last ran; always on its first run.
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{Res, ResMut, Schedule, Tick};
    ///
    /// fn watch(score: Option<Res<u32>>, mut seen: ResMut<Vec<bool>>) {
    ///     seen.push(score.is_some_and(|s| s.is_added()));
    /// }
    ///
    /// let mut registry = Registry::new();
    /// registry.insert_resource(Vec::<bool>::new());
    /// let mut builder = Schedule::builder();
    /// builder.add(watch);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// schedule.run(&mut registry, Tick::default()).unwrap(); // none yet
    /// registry.insert_resource(1_u32);
    /// schedule.run(&mut registry, Tick::default()).unwrap(); // added
    /// registry.insert_resource(2_u32);
    /// schedule.run(&mut registry, Tick::default()).unwrap(); // replaced
    /// assert_eq!(registry.resource::<Vec<bool>>().unwrap(), &[false, true, false]);
    /// ```
    pub fn is_added(&self) -> bool {
        self.ticks.is_added(self.since, self.now)
    }

    /// The resource's change ticks at the fetch.
    pub fn ticks(&self) -> ResourceTicks {
        self.ticks
    }
}

impl<'s, R: Send + Sync + 'static> ResMut<'s, R> {
    /// `true` when the resource was changed since the system last ran
    /// (this run's own writes included); always on its first run.
    pub fn is_changed(&self) -> bool {
        self.ticks.ticks().is_changed(self.since, self.now)
    }

    /// `true` when the resource was added since the system last ran;
    /// always on its first run.
    pub fn is_added(&self) -> bool {
        self.ticks.ticks().is_added(self.since, self.now)
    }

    /// Marks the resource changed at this run's change tick without
    /// writing it.
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{ResMut, Schedule, Tick};
    ///
    /// fn touch(mut score: ResMut<u32>) {
    ///     score.set_changed();
    /// }
    /// let mut registry = Registry::new();
    /// registry.insert_resource(0_u32);
    /// let mut builder = Schedule::builder();
    /// builder.add(touch);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// let since = registry.change_tick();
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// assert_eq!(registry.resource_changed_since::<u32>(since), Some(true));
    /// ```
    pub fn set_changed(&mut self) {
        self.ticks.mark(self.now);
    }

    /// The resource, mutable, without marking it changed (for a write
    /// that leaves it as it was).
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{ResMut, Schedule, Tick};
    ///
    /// fn tidy(mut score: ResMut<u32>) {
    ///     *score.bypass_change_detection() += 0;
    /// }
    /// let mut registry = Registry::new();
    /// registry.insert_resource(0_u32);
    /// let mut builder = Schedule::builder();
    /// builder.add(tidy);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// let since = registry.change_tick();
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// assert_eq!(registry.resource_changed_since::<u32>(since), Some(false));
    /// ```
    pub fn bypass_change_detection(&mut self) -> &mut R {
        self.ticks.note_unmarked_write();
        &mut self.guard
    }

    /// The resource's change ticks now.
    pub fn ticks(&self) -> ResourceTicks {
        self.ticks.ticks()
    }
}

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
        &self.guard
    }
}

impl<R: Send + Sync + 'static> Deref for ResMut<'_, R> {
    type Target = R;
    fn deref(&self) -> &R {
        &self.guard
    }
}

impl<R: Send + Sync + 'static> DerefMut for ResMut<'_, R> {
    fn deref_mut(&mut self) -> &mut R {
        self.ticks.mark(self.now);
        &mut self.guard
    }
}

/// The tick a resource fetched at `now` compares with: the system's last
/// run (which `last_run` then moves to `now`), or without the system's
/// state the tick before this run's (as a hand-fetched query's).
fn since(now: ChangeTick, last_run: Option<&mut crate::LastRun>) -> ChangeTick {
    match last_run {
        Some(last_run) => last_run.start(now),
        None => now.wrapping_sub(1),
    }
}

fn fetch_res<'s, R: Send + Sync + 'static>(
    ctx: &'s SystemContext<'_>,
    last_run: Option<&mut crate::LastRun>,
) -> Result<Res<'s, R>, SystemError> {
    let now = ctx.change_tick();
    let (guard, ticks) = ctx.resource_with_ticks::<R>()?;
    let since = since(now, last_run);
    Ok(Res {
        guard,
        ticks,
        since,
        now,
    })
}

fn fetch_res_mut<'s, R: Send + Sync + 'static>(
    ctx: &'s SystemContext<'_>,
    last_run: Option<&mut crate::LastRun>,
) -> Result<ResMut<'s, R>, SystemError> {
    let now = ctx.change_tick();
    let (guard, ticks) = ctx.resource_mut_with_ticks::<R>()?;
    let since = since(now, last_run);
    Ok(ResMut {
        guard,
        ticks,
        since,
        now,
    })
}

impl<R: Send + Sync + 'static> SystemParam for Res<'_, R> {
    type Item<'s> = Res<'s, R>;

    fn declare(access: &mut SystemAccess) {
        access.add_resource_borrow(ResourceAccess::of::<R>(Access::Read));
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        fetch_res(ctx, None)
    }

    /// Change detection compares with the system's previous run (see
    /// [`LastRun`](crate::LastRun)).
    fn fetch_local<'s>(
        ctx: &'s SystemContext<'_>,
        local: &'s mut LocalState,
    ) -> Result<Self::Item<'s>, SystemError> {
        let last_run = local.value_or_default::<crate::LastRun>(ctx.system_name())?;
        fetch_res(ctx, Some(last_run))
    }
}

impl<R: Send + Sync + 'static> SystemParam for ResMut<'_, R> {
    type Item<'s> = ResMut<'s, R>;

    fn declare(access: &mut SystemAccess) {
        access.add_resource_borrow(ResourceAccess::of::<R>(Access::Write));
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        fetch_res_mut(ctx, None)
    }

    /// Change detection compares with the system's previous run (see
    /// [`LastRun`](crate::LastRun)).
    fn fetch_local<'s>(
        ctx: &'s SystemContext<'_>,
        local: &'s mut LocalState,
    ) -> Result<Self::Item<'s>, SystemError> {
        let last_run = local.value_or_default::<crate::LastRun>(ctx.system_name())?;
        fetch_res_mut(ctx, Some(last_run))
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
        absent_as_none(fetch_res(ctx, None))
    }

    fn fetch_local<'s>(
        ctx: &'s SystemContext<'_>,
        local: &'s mut LocalState,
    ) -> Result<Self::Item<'s>, SystemError> {
        let last_run = local.value_or_default::<crate::LastRun>(ctx.system_name())?;
        let fetched = absent_as_none(fetch_res(ctx, Some(&mut *last_run)))?;
        // A run without the resource still counts as a run.
        last_run.start(ctx.change_tick());
        Ok(fetched)
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
        absent_as_none(fetch_res_mut(ctx, None))
    }

    fn fetch_local<'s>(
        ctx: &'s SystemContext<'_>,
        local: &'s mut LocalState,
    ) -> Result<Self::Item<'s>, SystemError> {
        let last_run = local.value_or_default::<crate::LastRun>(ctx.system_name())?;
        let fetched = absent_as_none(fetch_res_mut(ctx, Some(&mut *last_run)))?;
        // A run without the resource still counts as a run.
        last_run.start(ctx.change_tick());
        Ok(fetched)
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
