//! The registry's change clock ([`ChangeClock`]): the current tick, its
//! advance and the periodic clamp of the tracked types' old ticks, and the
//! `Registry` methods that start tracking a type.

use super::ticks::{CHECK_INTERVAL, ChangeTick, ChangeTicks};
use crate::{Component, ComponentId, EcsError, Entity, Registry, RegistryCell, SparseSet};

/// The registry's change clock and the tracked pools (typed and
/// run-time), which every advance tells the new tick.
#[derive(Debug, Default)]
pub(crate) struct ChangeClock {
    pub(crate) now: u32,
    pub(crate) last_check: u32,
    pub(crate) tracked: Vec<ComponentId>,
}

impl Registry {
    /// The current change tick: what an insert or a write made now is
    /// stamped with.
    pub fn change_tick(&self) -> ChangeTick {
        ChangeTick::new(self.change.now)
    }

    /// Advances the change tick by one (wrapping) and returns the new
    /// tick; every [`CHECK_INTERVAL`] advances, clamps the tracked types'
    /// old ticks. The scheduler calls it before every wave; code that
    /// uses the registry directly calls it where it wants a boundary
    /// (e.g. once per frame), and saves [`change_tick`](Self::change_tick)
    /// as the `since` of its next [`view_since`](Self::view_since).
    pub fn advance_change_tick(&mut self) -> ChangeTick {
        let now = self.change.now.wrapping_add(1);
        self.set_clock(now);
        ChangeTick::new(now)
    }

    pub(crate) fn set_clock(&mut self, now: u32) {
        self.change.now = now;
        let check = now.wrapping_sub(self.change.last_check) >= CHECK_INTERVAL;
        if check {
            self.change.last_check = now;
        }
        for &id in &self.change.tracked {
            self.pools.erased_at_mut(id).advance(now, check);
        }
        if check {
            self.resources.clamp(now);
        }
    }

    /// Sets the change tick to `tick` and clamps every old tick, as a
    /// jump of that many advances would: a test hook for wrap-around.
    #[doc(hidden)]
    pub fn set_change_tick_for_tests(&mut self, tick: ChangeTick) {
        let tick = tick.get();
        self.change.last_check = tick.wrapping_sub(CHECK_INTERVAL);
        self.set_clock(tick);
    }

    /// Starts tracking changes of `T` (creating its pool if missing): its
    /// pool keeps an added and a changed tick per component, filled with
    /// the current tick, and a log of removals. Does nothing when `T` is
    /// tracked already. The scheduler calls this at build for every type
    /// a system asks about.
    pub fn track_changes<T: Component>(&mut self) {
        let now = self.change.now;
        let pool = self.pools.get_or_create::<T>();
        if pool.changes.is_none() {
            pool.changes = Some(Box::new(ChangeTicks::new(pool.len(), now)));
            let id = self.pools.id_of::<T>().expect("created just above");
            self.change.tracked.push(id);
        }
    }

    /// Starts tracking changes of run-time component `id`, as
    /// [`track_changes`](Self::track_changes) does for a type: its pool
    /// keeps an added and a changed tick per value, filled with the
    /// current tick, and a log of removals, which raw views filter on
    /// ([`RawView::added_since`](crate::RawView::added_since),
    /// [`RawView::changed_since`](crate::RawView::changed_since)) and
    /// [`removed_raw`](Self::removed_raw) reads. Does nothing when `id` is
    /// tracked already.
    ///
    /// # Errors
    ///
    /// [`EcsError::UnknownComponent`] or [`EcsError::TypedComponent`].
    pub fn track_changes_raw(&mut self, id: ComponentId) -> Result<(), EcsError> {
        let now = self.change.now;
        let (pool, _) = self.pools.blob_mut(id)?;
        if pool.start_tracking(now) {
            self.change.tracked.push(id);
        }
        Ok(())
    }

    /// `true` when run-time component `id`'s changes are tracked (`false`
    /// for an unknown id or a typed component).
    pub fn is_tracking_changes_raw(&self, id: ComponentId) -> bool {
        self.pools
            .blob(id)
            .is_ok_and(|(pool, _)| pool.is_tracking())
    }

    /// `true` when `T`'s changes are tracked.
    pub fn is_tracking_changes<T: Component>(&self) -> bool {
        self.pools
            .get::<T>()
            .is_some_and(SparseSet::is_tracking_changes)
    }

    /// Sets how many removals of `T` the log keeps (default
    /// [`REMOVED_CAPACITY`](crate::REMOVED_CAPACITY)); tracks `T` if it is not yet.
    pub fn set_removed_capacity<T: Component>(&mut self, capacity: usize) {
        self.track_changes::<T>();
        if let Some(c) = self.pools.get_or_create::<T>().changes.as_deref_mut() {
            c.removed.capacity = capacity;
            c.unmarked.count();
            while c.removed.entries.len() > capacity {
                c.removed.entries.pop_front();
                c.removed.first += 1;
            }
        }
    }

    /// `entity`'s `T`, mutable, without marking it changed (for a write
    /// that leaves the value as it was).
    pub fn get_mut_untracked<T: Component>(&mut self, entity: Entity) -> Option<&mut T> {
        self.pools.get_mut::<T>()?.get_mut_untracked(entity)
    }
}

impl RegistryCell<'_> {
    /// The registry's current change tick.
    pub fn change_tick(&self) -> ChangeTick {
        self.locked().change_tick()
    }
}
