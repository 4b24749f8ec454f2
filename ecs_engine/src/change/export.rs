//! Change detection as plain values, for file snapshots: the change
//! clock ([`ChangeClockState`]), a tracked pool's ticks and removal log
//! ([`PoolTicks`]), a resource's ticks and a removal cursor, each read
//! and written back exactly, so a world loaded from a file reads as
//! added or changed only what did at the save. (In-memory states copy
//! them whole: `registry/state.rs`.)

use std::borrow::Cow;
use std::collections::VecDeque;

use crate::change::ticks::ChangeTicks;
use crate::resources::ResourceTicks;
use crate::{Component, ComponentId, EcsError, Entity, Registry};

/// The registry's change clock: the current change tick and the tick of
/// the last clamp of old ticks (every
/// [`CHECK_INTERVAL`](crate::CHECK_INTERVAL) advances).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChangeClockState {
    /// The current change tick ([`Registry::change_tick`]).
    pub now: u32,
    /// The change tick of the last clamp.
    pub last_check: u32,
}

/// The change ticks of one tracked pool, in its dense order (parallel to
/// [`SparseSet::entities`](crate::SparseSet::entities)), and its log of
/// removals.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PoolTicks {
    /// The raw tick each component was added at.
    pub added: Vec<u32>,
    /// The raw tick each component was last written at.
    pub changed: Vec<u32>,
    /// The entities that lost the component, oldest first.
    pub removed: Vec<Entity>,
    /// The sequence number of `removed[0]` (removals before it were
    /// dropped from the log; readers count them as missed).
    pub removed_first: u64,
}

/// Why [`Registry::import_pool_ticks`] refused; nothing changed then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "change ticks of `{component}`: {added} added and {changed} changed ticks for a pool of {len} components"
)]
pub struct PoolTicksError {
    /// The component's name (a Rust type's name, or a run-time
    /// component's registered name).
    pub component: Cow<'static, str>,
    /// The pool's length.
    pub len: usize,
    /// The added ticks given.
    pub added: usize,
    /// The changed ticks given.
    pub changed: usize,
}

impl Registry {
    /// The change clock, to save.
    pub fn export_change_clock(&self) -> ChangeClockState {
        ChangeClockState {
            now: self.change.now,
            last_check: self.change.last_check,
        }
    }

    /// Sets the change clock to `state` without clamping any tick: what
    /// a load does before it puts back the saved ticks
    /// ([`import_pool_ticks`](Self::import_pool_ticks)). Every tracked
    /// pool counts it as a write its ticks do not show (a clock set back
    /// leaves ticks in its future), so no in-memory state saved before
    /// takes a delta from it.
    pub fn restore_change_clock(&mut self, state: ChangeClockState) {
        self.change.now = state.now;
        self.change.last_check = state.last_check;
        self.pools.clock_moved(state.now);
    }

    /// The change ticks and removal log of `T`'s pool, in its dense
    /// order; `None` when `T` is not tracked
    /// ([`track_changes`](Self::track_changes)).
    pub fn export_pool_ticks<T: Component>(&self) -> Option<PoolTicks> {
        self.pools.get::<T>()?.changes.as_deref().map(export)
    }

    /// [`export_pool_ticks`](Self::export_pool_ticks) of run-time
    /// component `id`; `None` when it is not a run-time component here or
    /// is not tracked ([`track_changes_raw`](Self::track_changes_raw)).
    pub fn export_pool_ticks_raw(&self, id: ComponentId) -> Option<PoolTicks> {
        self.pools.blob(id).ok()?.0.changes().map(export)
    }

    /// Gives `T`'s pool the saved `ticks` (tracking `T` if it is not
    /// yet), read against the current clock: call it after the pool's
    /// components are back, in their saved order, and after
    /// [`restore_change_clock`](Self::restore_change_clock). A removal
    /// log longer than the pool's capacity keeps its newest entries.
    ///
    /// # Errors
    ///
    /// [`PoolTicksError`] when the tick arrays are not one per component.
    pub fn import_pool_ticks<T: Component>(
        &mut self,
        ticks: PoolTicks,
    ) -> Result<(), PoolTicksError> {
        let len = self.pools.get::<T>().map_or(0, |p| p.len());
        check_len(&ticks, len, || Cow::Borrowed(std::any::type_name::<T>()))?;
        self.track_changes::<T>();
        let now = self.change.now;
        let pool = self.pools.get_or_create::<T>();
        import(
            pool.changes.as_deref_mut().expect("tracked just above"),
            ticks,
            now,
        );
        Ok(())
    }

    /// [`import_pool_ticks`](Self::import_pool_ticks) for run-time
    /// component `id` (tracking it if it is not yet).
    ///
    /// # Errors
    ///
    /// [`PoolTicksError`] when the tick arrays are not one per value, or
    /// `id` is not a run-time component here (then `len` is 0 and the
    /// name `#id`).
    pub fn import_pool_ticks_raw(
        &mut self,
        id: ComponentId,
        ticks: PoolTicks,
    ) -> Result<(), PoolTicksError> {
        let Ok((pool, info)) = self.pools.blob(id) else {
            return Err(PoolTicksError {
                component: Cow::Owned(format!("#{}", id.to_u32())),
                len: 0,
                added: ticks.added.len(),
                changed: ticks.changed.len(),
            });
        };
        check_len(&ticks, pool.len(), || info.name_cow())?;
        self.track_changes_raw(id)
            .expect("a run-time component, found above");
        let now = self.change.now;
        let (pool, _) = self.pools.blob_mut(id).expect("found above");
        import(pool.changes_mut().expect("tracked just above"), ticks, now);
        Ok(())
    }

    /// Sets resource `R`'s change ticks (see
    /// [`resource_ticks`](Self::resource_ticks)).
    ///
    /// # Errors
    ///
    /// [`EcsError::MissingResource`] when the registry has no `R`.
    pub fn set_resource_ticks<R: Send + Sync + 'static>(
        &mut self,
        ticks: ResourceTicks,
    ) -> Result<(), EcsError> {
        self.resources.set_ticks::<R>(ticks)
    }
}

/// A pool's ticks and removal log, as plain values.
fn export(c: &ChangeTicks) -> PoolTicks {
    PoolTicks {
        added: c.added.clone(),
        changed: c.changed.clone(),
        removed: c.removed.entries.iter().copied().collect(),
        removed_first: c.removed.first,
    }
}

/// [`PoolTicksError`] unless `ticks` has one added and one changed tick
/// per component of a pool of `len`.
fn check_len(
    ticks: &PoolTicks,
    len: usize,
    component: impl FnOnce() -> Cow<'static, str>,
) -> Result<(), PoolTicksError> {
    if ticks.added.len() != len || ticks.changed.len() != len {
        return Err(PoolTicksError {
            component: component(),
            len,
            added: ticks.added.len(),
            changed: ticks.changed.len(),
        });
    }
    Ok(())
}

/// Puts `ticks` into a tracked pool's `c`, read against the clock `now`.
fn import(c: &mut ChangeTicks, ticks: PoolTicks, now: u32) {
    let len = ticks.changed.len();
    c.now = now;
    c.added = ticks.added;
    c.changed = ticks.changed;
    c.stamps = super::stamps::BlockStamps::new(len, now);
    c.removed.entries = VecDeque::from(ticks.removed);
    c.removed.first = ticks.removed_first;
    while c.removed.entries.len() > c.removed.capacity {
        c.removed.entries.pop_front();
        c.removed.first += 1;
    }
    // The ticks changed without the changed ticks saying which.
    c.unmarked.count();
    c.written.set(now);
}
