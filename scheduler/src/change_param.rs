//! Change detection in systems: each system parameter that asks about
//! changes remembers the change tick its system last ran at
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

use std::ops::Deref;

use ecs_engine::{
    Access, Component, ComponentAccess, MAX_CHANGE_AGE, Removed, RemovedCursor, STALE_AGE,
};

use crate::{LocalState, SystemAccess, SystemContext, SystemError, SystemParam};

/// The change tick a system parameter's system last ran at, kept in the
/// parameter's [`LocalState`]; `None` before the first run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LastRun(Option<u32>);

impl LastRun {
    /// The `since` tick for a run at change tick `now`: the previous
    /// run's tick, or one older than every stored tick
    /// ([`STALE_AGE`](ecs_engine::STALE_AGE)) for a first run or one past
    /// the horizon, so it sees everything.
    pub fn since(&self, now: u32) -> u32 {
        match self.0 {
            Some(last) if now.wrapping_sub(last) <= MAX_CHANGE_AGE => last,
            _ => now.wrapping_sub(STALE_AGE),
        }
    }

    /// [`since`](Self::since), and records `now` as the last run.
    pub fn start(&mut self, now: u32) -> u32 {
        let since = self.since(now);
        self.0 = Some(now);
        since
    }

    /// The tick of the last run, if there was one.
    pub fn tick(&self) -> Option<u32> {
        self.0
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
        let cursor = local.value_or_default::<RemovedCursor>();
        ctx.removed::<T>(cursor).map(RemovedComponents)
    }
}
