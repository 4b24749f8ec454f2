//! Queries and change detection in systems: [`Query`], the component
//! view a system takes, and the parameters about changes. Each system
//! parameter that asks about changes remembers the change tick its system last ran at
//! ([`LastRun`]), and [`RemovedComponents`] reads the entities that lost a
//! component since then.
//!
//! The scheduler advances the registry's change tick before every wave and
//! again before the wave's commands are applied, so a system sees every
//! change made after its previous run: by later waves of that tick, by
//! earlier waves of the next one, and by commands (its own included). Its
//! own writes through `&mut T` are stamped with its run's tick and are not
//! reported back to it. A system skipped by a run condition, or disabled,
//! fetches nothing: its next run still sees everything since the last one
//! it made. A system's first run sees every component as added and
//! changed. See the `ecs_engine` crate's change module for ticks,
//! wrap-around and the opt-in tracking, which the schedule enables at
//! build for every type a system asks about.
//!
//! # Examples
//!
//! ```
//! use ecs_engine::{Changed, Entity, Registry};
//! use scheduler::{Query, ResMut, Schedule, Tick};
//!
//! struct Health(u32);
//! #[derive(Default)]
//! struct Seen(Vec<usize>);
//!
//! fn damage(mut q: Query<(Entity, &mut Health)>, mut calls: scheduler::Local<u32>) {
//!     *calls += 1;
//!     // Writes on the second tick only.
//!     if *calls == 2 {
//!         q.each(|(_, h)| h.0 -= 1);
//!     }
//! }
//! fn report(q: Query<&Health, Changed<Health>>, mut seen: ResMut<Seen>) {
//!     seen.0.push(q.count());
//! }
//!
//! let mut registry = Registry::new();
//! registry.insert_resource(Seen::default());
//! registry.spawn((Health(3),));
//! registry.spawn((Health(3),));
//! let mut builder = Schedule::builder();
//! builder.add(damage);
//! builder.add(report);
//! let mut schedule = builder.build(&mut registry).unwrap();
//! for _ in 0..3 {
//!     schedule.run(&mut registry, Tick::default()).unwrap();
//! }
//! // First run: everything is new; second: both written; third: nothing.
//! assert_eq!(registry.resource::<Seen>().unwrap().0, [2, 2, 0]);
//! ```

use std::ops::{Deref, DerefMut};

use std::any::type_name;

use ecs_engine::{
    Access, ChangeTick, Component, ComponentAccess, ExclusiveView, MAX_CHANGE_AGE, QueryData,
    QueryFilter, QueryShape, ReadOnlyQueryData, Removed, RemovedCursor, STALE_AGE, View, ViewIter,
};

use crate::{LocalState, SystemAccess, SystemContext, SystemError, SystemParam};

/// A system parameter: a view over the components of `Q` (e.g.
/// `Query<(&mut Position, &Velocity)>`), filtered by `F` (e.g.
/// `Without<Frozen>`, `Or<(With<A>, With<B>)>`, or a tuple of up to 8
/// filters). Dereferences to [`View`] (`each`, `iter`, `get`, `count`,
/// `get_many_mut`, `par_each`, `par_fold`, ...).
///
/// A `Query` is a registry [`View`] opened on the registry the scheduler
/// lends for one wave, after the schedule checked, from the system's
/// declared access, that no system of the same wave writes what it reads.
///
/// Its change filters and terms ([`Added`](ecs_engine::Added),
/// [`Changed`](ecs_engine::Changed), [`Ref`](ecs_engine::Ref)) compare
/// with the change tick of the system's previous run, kept per parameter
/// (see [`LastRun`](crate::LastRun) and [`RemovedComponents`](crate::RemovedComponents)):
/// a system skipped or disabled meanwhile still sees every change since
/// it last ran; its first run sees everything.
///
/// ```
/// use ecs_engine::{Added, Registry};
/// use scheduler::{Query, Schedule, Tick};
///
/// struct Name(&'static str);
///
/// fn greet(q: Query<&Name, Added<Name>>) {
///     q.each(|name| assert_eq!(name.0, "new"));
/// }
///
/// let mut registry = Registry::new();
/// let mut builder = Schedule::builder();
/// builder.add(greet);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// let e = registry.spawn((Name("new"),));
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// // A replace is a change, not an addition: `greet` sees nothing.
/// registry.insert(e, Name("old")).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// ```
///
/// # Access
///
/// Derived from the types: `&T` and `Option<&T>` read `T`, `&mut T` and
/// `Option<&mut T>` write it; the filters [`With<T>`](ecs_engine::With),
/// [`Without<T>`](ecs_engine::Without) (inside [`Or`](ecs_engine::Or)s
/// and tuples too) and the term [`Has<T>`](ecs_engine::Has) *read* `T`:
/// they read its pool's membership under its lock, so they are ordered
/// against systems that write `T`, never run beside them. `Entity` touches
/// nothing.
///
/// A read-only query (no `&mut` term) iterates, counts and reads through
/// `&self`, so its parameter needs no `mut`; one that writes is declared
/// `mut`.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Entity, Has, Or, Registry, With, Without};
/// use scheduler::{Query, ResMut, Schedule, Tick};
///
/// struct Position(f32);
/// struct Velocity(f32);
/// struct Frozen;
/// struct Player;
/// struct Enemy;
/// struct Shield;
///
/// #[derive(Default)]
/// struct Report {
///     players: Vec<Entity>,
///     shielded: usize,
///     targets: usize,
/// }
///
/// fn movement(mut q: Query<(&mut Position, &Velocity), Without<Frozen>>) {
///     q.each(|(p, v)| p.0 += v.0);
/// }
///
/// fn report(
///     players: Query<Entity, With<Player>>,
///     shields: Query<Has<Shield>>,
///     targets: Query<&Position, Or<(With<Player>, With<Enemy>)>>,
///     mut report: ResMut<Report>,
/// ) {
///     report.players = players.iter().collect();
///     report.shielded = shields.iter().filter(|&has| has).count();
///     report.targets = targets.count();
/// }
///
/// let mut registry = Registry::new();
/// registry.insert_resource(Report::default());
/// let hero = registry.spawn((Position(0.0), Velocity(1.0), Player, Shield));
/// registry.spawn((Position(0.0), Velocity(1.0), Enemy, Frozen));
/// registry.spawn((Position(0.0),));
///
/// let mut builder = Schedule::builder();
/// builder.add(movement);
/// builder.add(report);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap();
///
/// assert_eq!(registry.get::<Position>(hero).unwrap().0, 1.0);
/// let report = registry.resource::<Report>().unwrap();
/// assert_eq!((report.players.as_slice(), report.shielded, report.targets), ([hero].as_slice(), 1, 2));
/// ```
pub struct Query<'s, Q: QueryData, F: QueryFilter = ()>(View<'s, Q, F>);

impl<Q: QueryData, F: QueryFilter> std::fmt::Debug for Query<'_, Q, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<'s, Q: QueryData, F: QueryFilter> Deref for Query<'s, Q, F> {
    type Target = View<'s, Q, F>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<Q: QueryData, F: QueryFilter> DerefMut for Query<'_, Q, F> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// Why [`Query::single`] or [`Query::single_mut`] found no item.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QuerySingleError {
    /// No entity matches the query.
    #[error("query `{query}` matches no entity, one was expected")]
    NoEntities {
        /// The query's type name.
        query: &'static str,
    },
    /// More than one entity matches the query.
    #[error("query `{query}` matches more than one entity, one was expected")]
    MultipleEntities {
        /// The query's type name.
        query: &'static str,
    },
}

/// The one item of `items`, or why there is not exactly one.
fn exactly_one<I: Iterator>(
    mut items: I,
    query: &'static str,
) -> Result<I::Item, QuerySingleError> {
    match (items.next(), items.next()) {
        (Some(item), None) => Ok(item),
        (None, _) => Err(QuerySingleError::NoEntities { query }),
        (Some(_), Some(_)) => Err(QuerySingleError::MultipleEntities { query }),
    }
}

impl<'s, Q: ReadOnlyQueryData, F: QueryFilter> Query<'s, Q, F> {
    /// The item of the one entity the query matches (the player, the
    /// camera): bevy's `Query::single`.
    ///
    /// # Errors
    ///
    /// [`QuerySingleError::NoEntities`] when none matches,
    /// [`QuerySingleError::MultipleEntities`] when more than one does.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{Registry, With};
    /// use scheduler::{Query, ResMut, Schedule, Tick};
    ///
    /// struct Player;
    /// struct Position(f32);
    ///
    /// fn follow(player: Query<&Position, With<Player>>, mut camera: ResMut<f32>) {
    ///     if let Ok(position) = player.single() {
    ///         *camera = position.0;
    ///     }
    /// }
    /// let mut registry = Registry::new();
    /// registry.insert_resource(0.0_f32);
    /// registry.spawn((Player, Position(3.5)));
    /// registry.spawn((Position(9.0),));
    /// let mut builder = Schedule::builder();
    /// builder.add(follow);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// assert_eq!(registry.resource::<f32>(), Some(&3.5));
    /// ```
    pub fn single(&self) -> Result<Q::Item<'_>, QuerySingleError> {
        exactly_one(self.0.iter(), type_name::<Self>())
    }
}

impl<'s, Q: QueryData, F: QueryFilter> Query<'s, Q, F> {
    /// The items of every matching entity, `&mut` terms included: bevy's
    /// `Query::iter_mut` (the same iterator as `iter` on a writing query,
    /// and what `for item in &mut query` runs).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    /// use scheduler::{Query, Schedule, Tick};
    ///
    /// struct Health(u32);
    ///
    /// fn regenerate(mut q: Query<&mut Health>) {
    ///     for health in q.iter_mut() {
    ///         health.0 += 1;
    ///     }
    ///     for health in &mut q {
    ///         health.0 += 1;
    ///     }
    /// }
    /// let mut registry = Registry::new();
    /// let e = registry.spawn((Health(1),));
    /// let mut builder = Schedule::builder();
    /// builder.add(regenerate);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// assert_eq!(registry.get::<Health>(e).unwrap().0, 3);
    /// ```
    pub fn iter_mut(&mut self) -> ViewIter<'_, Q, F> {
        ExclusiveView::iter(&mut self.0)
    }

    /// The item of the one entity the query matches, `&mut` terms
    /// included: bevy's `Query::single_mut`.
    ///
    /// # Errors
    ///
    /// As [`single`](Self::single).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{Registry, With};
    /// use scheduler::{Query, Schedule, Tick};
    ///
    /// struct Player;
    /// struct Lives(u32);
    ///
    /// fn lose_one(mut player: Query<&mut Lives, With<Player>>) {
    ///     player.single_mut().unwrap().0 -= 1;
    /// }
    /// let mut registry = Registry::new();
    /// let p = registry.spawn((Player, Lives(3)));
    /// let mut builder = Schedule::builder();
    /// builder.add(lose_one);
    /// let mut schedule = builder.build(&mut registry).unwrap();
    /// schedule.run(&mut registry, Tick::default()).unwrap();
    /// assert_eq!(registry.get::<Lives>(p).unwrap().0, 2);
    /// ```
    pub fn single_mut(&mut self) -> Result<Q::Item<'_>, QuerySingleError> {
        exactly_one(ExclusiveView::iter(&mut self.0), type_name::<Self>())
    }
}

/// `for item in &query`: the items of a read-only query, as
/// [`View::iter`].
impl<'a, Q: ReadOnlyQueryData, F: QueryFilter> IntoIterator for &'a Query<'_, Q, F> {
    type Item = Q::Item<'a>;
    type IntoIter = ViewIter<'a, Q, F>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// `for item in &mut query`: the items of any query, `&mut` terms
/// included, as [`Query::iter_mut`].
impl<'a, Q: QueryData, F: QueryFilter> IntoIterator for &'a mut Query<'_, Q, F> {
    type Item = Q::Item<'a>;
    type IntoIter = ViewIter<'a, Q, F>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<Q: QueryData + 'static, F: QueryFilter + 'static> SystemParam for Query<'_, Q, F> {
    type Item<'s> = Query<'s, Q, F>;

    fn declare(access: &mut SystemAccess) {
        // The filter's types are read-locked by the same view: a clash with
        // the query's own types too.
        let mut own = SystemAccess::new();
        Q::access(&mut |c| own.add_component_borrow(c));
        // A filter on a type the query names is part of the query's own
        // borrow of that pool: a membership filter (`With`, `Without`)
        // reads no value, and a change filter (`Added`, `Changed`) reads
        // each entity's tick before the query's term marks it, beside the
        // query's claim (`Locked::claim_ticks`). So `Query<&mut P,
        // With<P>>` and `Query<&mut P, Changed<P>>` are one borrow (the
        // change filter's tracking is kept).
        let named: Vec<_> = own.components().iter().map(|c| c.key).collect();
        F::access(&mut |c| {
            if named.contains(&c.key) {
                own.add_component(c);
            } else {
                own.add_component_borrow(c);
            }
        });
        for name in own.clashes() {
            access.record_clash(name.clone());
        }
        // Against the other parameters, a borrow may share a type with a
        // disjoint query (`With<A>` beside `Without<A>`).
        access.add_query(own.components(), QueryShape::of::<Q, F>());
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        ctx.query_filtered::<Q, F>().map(Query)
    }

    /// Change filters and terms compare with the tick of the system's
    /// previous run (see [`LastRun`](crate::LastRun)).
    fn fetch_local<'s>(
        ctx: &'s SystemContext<'_>,
        local: &'s mut LocalState,
    ) -> Result<Self::Item<'s>, SystemError> {
        let last_run = local.value_or_default::<crate::LastRun>(ctx.system_name())?;
        let now = ctx.change_tick();
        let view = ctx.query_since::<Q, F>(last_run.since(now))?;
        // Only a run that got its view has seen the changes.
        last_run.start(now);
        Ok(Query(view))
    }
}

/// The change tick ([`ChangeTick`]) a system parameter's system last ran
/// at, kept in the parameter's [`LocalState`]; `None` before the first
/// run. This is what "last run" means in this crate (as bevy's
/// `last_run`): the records of runs (frame tick, worker, start, duration)
/// are [`SystemRun`](crate::SystemRun)s, from
/// [`Schedule::system_runs`](crate::Schedule::system_runs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LastRun(Option<ChangeTick>);

impl LastRun {
    /// The `since` tick for a run at change tick `now`: the previous
    /// run's tick, or one older than every stored tick
    /// ([`STALE_AGE`](ecs_engine::STALE_AGE)) for a first run or one past
    /// the horizon, so it sees everything.
    pub fn since(&self, now: ChangeTick) -> ChangeTick {
        match self.0 {
            Some(last) if last.age(now) <= MAX_CHANGE_AGE => last,
            _ => now.wrapping_sub(STALE_AGE),
        }
    }

    /// [`since`](Self::since), and records `now` as the last run.
    pub fn start(&mut self, now: ChangeTick) -> ChangeTick {
        let since = self.since(now);
        self.0 = Some(now);
        since
    }

    /// The change tick of the last run, if there was one.
    pub fn tick(&self) -> Option<ChangeTick> {
        self.0
    }

    /// A last run at `tick` (`None`: no run yet), for a load that puts a
    /// saved one back ([`tick`](Self::tick) reads it).
    pub const fn at(tick: Option<ChangeTick>) -> Self {
        LastRun(tick)
    }
}

/// A system parameter: the entities that lost a `T` (removed, or
/// despawned while holding one) since the system last ran, oldest first.
/// Dereferences to [`Removed`] (`iter`, `len`, and `missed`: removals the
/// bounded log dropped before this system read them, counted, never
/// silently lost). Declares a read of `T` (ordered after its writers) and
/// enables its tracking at build. Works in function systems and
/// [`StatefulSystem`](crate::StatefulSystem)s, which keep its cursor.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Entity, Registry};
/// use scheduler::{RemovedComponents, ResMut, Schedule, Tick};
///
/// struct Shield;
/// #[derive(Default)]
/// struct Lost(Vec<Entity>);
///
/// fn watch(removed: RemovedComponents<Shield>, mut lost: ResMut<Lost>) {
///     lost.0.extend(removed.iter());
/// }
///
/// let mut registry = Registry::new();
/// registry.insert_resource(Lost::default());
/// let a = registry.spawn((Shield,));
/// let b = registry.spawn((Shield,));
/// let mut builder = Schedule::builder();
/// builder.add(watch);
/// let mut schedule = builder.build(&mut registry).unwrap();
/// registry.remove::<Shield>(a).unwrap();
/// registry.despawn(b).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// schedule.run(&mut registry, Tick::default()).unwrap();
/// assert_eq!(registry.resource::<Lost>().unwrap().0, [a, b]);
/// ```
pub struct RemovedComponents<'s, T: Component>(Removed<'s, T>);

impl<T: Component> std::fmt::Debug for RemovedComponents<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<'s, T: Component> Deref for RemovedComponents<'s, T> {
    type Target = Removed<'s, T>;
    fn deref(&self) -> &Removed<'s, T> {
        &self.0
    }
}

impl<T: Component> SystemParam for RemovedComponents<'_, T> {
    type Item<'s> = RemovedComponents<'s, T>;

    fn declare(access: &mut SystemAccess) {
        access.add_component_borrow(ComponentAccess::tracked::<T>(Access::Read));
    }

    fn fetch<'s>(ctx: &'s SystemContext<'_>) -> Result<Self::Item<'s>, SystemError> {
        Err(SystemError::Failed {
            system: ctx.system_name().to_owned(),
            message: format!(
                "`RemovedComponents<{}>` keeps a cursor per system: use it in a function system, a run condition or a StatefulSystem",
                crate::short_name(std::any::type_name::<T>())
            ),
        })
    }

    fn fetch_local<'s>(
        ctx: &'s SystemContext<'_>,
        local: &'s mut LocalState,
    ) -> Result<Self::Item<'s>, SystemError> {
        let cursor = local.value_or_default::<RemovedCursor>(ctx.system_name())?;
        ctx.removed::<T>(cursor).map(RemovedComponents)
    }
}
