//! Removed components: [`Removed`], the entities that lost a tracked type
//! since a reader's [`RemovedCursor`] last looked, read from the pool's
//! bounded removal log (`ticks.rs`).

use std::ops::{Deref, Range};

use parking_lot::MappedRwLockReadGuard;

use crate::change::ticks::RemovedLog;
use crate::storage::blob_pool::BlobPool;
use crate::{
    Component, ComponentId, ComponentInfo, EcsError, Entity, Registry, RegistryCell, SparseSet,
};

impl Registry {
    /// The entities that lost a `T` (removed, replaced by a despawn, or a
    /// clear) since `cursor` last read, oldest first; advances `cursor`.
    /// Empty when `T` is not tracked ([`track_changes`](Self::track_changes)).
    pub fn removed<T: Component>(&self, cursor: &mut RemovedCursor) -> Removed<'_, T> {
        Removed::read(self.pools.get::<T>().map(PoolRef::Plain), cursor)
    }
}

impl RegistryCell<'_> {
    /// [`Registry::removed`] through `T`'s read lock.
    ///
    /// # Errors
    ///
    /// [`EcsError::BorrowConflict`] when `T`'s pool is write-locked.
    pub fn removed<T: Component>(
        &self,
        cursor: &mut RemovedCursor,
    ) -> Result<Removed<'_, T>, EcsError> {
        let guard = self.locked().read::<T>()?;
        Ok(Removed::read(guard.map(PoolRef::Locked), cursor))
    }
}

impl Registry {
    /// The entities that lost run-time component `id` (removed, replaced
    /// by a despawn, or a clear) since `cursor` last read, oldest first,
    /// each passed to `f`; advances `cursor` and returns the number of
    /// removals the bounded log dropped before this reader read them.
    ///
    /// # Errors
    ///
    /// [`EcsError::UnknownComponent`] / [`EcsError::TypedComponent`] for an
    /// id that is not a run-time component here, [`EcsError::Untracked`]
    /// when it keeps no change ticks
    /// ([`track_changes_raw`](Self::track_changes_raw)).
    pub fn removed_raw(
        &self,
        id: ComponentId,
        cursor: &mut RemovedCursor,
        f: impl FnMut(Entity),
    ) -> Result<u64, EcsError> {
        let (pool, info) = self.pools.blob(id)?;
        read_raw(pool, info, cursor, f)
    }
}

impl RegistryCell<'_> {
    /// [`Registry::removed_raw`] through `id`'s read lock.
    ///
    /// # Errors
    ///
    /// As [`Registry::removed_raw`], and [`EcsError::BorrowConflict`] when
    /// the pool is write-locked.
    pub fn removed_raw(
        &self,
        id: ComponentId,
        cursor: &mut RemovedCursor,
        f: impl FnMut(Entity),
    ) -> Result<u64, EcsError> {
        let locked = self.locked().lock_blob(id, crate::Access::Read)?;
        read_raw(locked.pool(), locked.info(), cursor, f)
    }
}

fn read_raw(
    pool: &BlobPool,
    info: &ComponentInfo,
    cursor: &mut RemovedCursor,
    f: impl FnMut(Entity),
) -> Result<u64, EcsError> {
    let log = pool
        .changes()
        .map(|c| &c.removed)
        .ok_or_else(|| EcsError::Untracked {
            component: info.name_cow(),
        })?;
    let (range, missed) = read_log(log, cursor);
    let (from, to) = (range.start - log.first, range.end - log.first);
    log.entries
        .range(from as usize..to as usize)
        .copied()
        .for_each(f);
    Ok(missed)
}

/// The numbers of the removals of `log` that `cursor` has not read, and
/// how many of those the log dropped; advances `cursor` to the log's end.
fn read_log(log: &RemovedLog, cursor: &mut RemovedCursor) -> (Range<u64>, u64) {
    let (first, end) = (log.first, log.end());
    // A cursor past the end (one from another registry) reads nothing.
    let from = cursor.next.clamp(first, end);
    let missed = first.saturating_sub(cursor.next);
    cursor.next = end;
    (from..end, missed)
}

/// Where a reader of a removal log is: the number of the next removal it
/// has not read. `Default` starts at the oldest kept removal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemovedCursor {
    next: u64,
}

impl RemovedCursor {
    /// A cursor at removal number `next` (a saved cursor put back by a
    /// load; see [`next`](Self::next)).
    pub const fn at(next: u64) -> Self {
        RemovedCursor { next }
    }

    /// The number of the next removal it has not read.
    pub const fn next(&self) -> u64 {
        self.next
    }
}

enum PoolRef<'w, T> {
    Plain(&'w SparseSet<T>),
    Locked(MappedRwLockReadGuard<'w, SparseSet<T>>),
}

impl<T> Deref for PoolRef<'_, T> {
    type Target = SparseSet<T>;
    fn deref(&self) -> &SparseSet<T> {
        match self {
            PoolRef::Plain(pool) => pool,
            PoolRef::Locked(guard) => guard,
        }
    }
}

/// The entities that lost a `T` since a reader last looked
/// ([`Registry::removed`], the scheduler's `RemovedComponents<T>`), with
/// the number it missed because the bounded log dropped them.
///
/// # Borrows
///
/// A read lock on `T`'s pool while it lives (through a cell).
///
/// # Examples
///
/// ```
/// use ecs_engine::{Registry, RemovedCursor};
///
/// struct Shield;
///
/// let mut registry = Registry::new();
/// registry.track_changes::<Shield>();
/// let a = registry.spawn((Shield,));
/// let b = registry.spawn((Shield,));
/// let mut cursor = RemovedCursor::default();
/// registry.remove::<Shield>(a).unwrap();
/// registry.despawn(b).unwrap();
/// let lost: Vec<_> = registry.removed::<Shield>(&mut cursor).iter().collect();
/// assert_eq!(lost, vec![a, b]);
/// assert!(registry.removed::<Shield>(&mut cursor).is_empty());
/// ```
pub struct Removed<'w, T> {
    pool: Option<PoolRef<'w, T>>,
    range: Range<u64>,
    missed: u64,
}

impl<T> std::fmt::Debug for Removed<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Removed")
            .field("component", &std::any::type_name::<T>())
            .field("len", &self.len())
            .field("missed", &self.missed)
            .finish()
    }
}

impl<'w, T> Removed<'w, T> {
    fn read(pool: Option<PoolRef<'w, T>>, cursor: &mut RemovedCursor) -> Self {
        let Some(log) = pool
            .as_deref()
            .and_then(|p| p.changes.as_deref())
            .map(|c| &c.removed)
        else {
            return Removed {
                pool: None,
                range: 0..0,
                missed: 0,
            };
        };
        let (range, missed) = read_log(log, cursor);
        Removed {
            pool,
            range,
            missed,
        }
    }

    /// The entities, oldest removal first (an entity appears once per
    /// removal).
    pub fn iter(&self) -> impl Iterator<Item = Entity> + '_ {
        let entries = self
            .pool
            .as_deref()
            .and_then(|p| p.changes.as_deref())
            .map(|c| {
                let log = &c.removed;
                let from = (self.range.start - log.first) as usize;
                let to = (self.range.end - log.first) as usize;
                log.entries.range(from..to)
            });
        entries.into_iter().flatten().copied()
    }

    /// Number of removals read.
    pub fn len(&self) -> usize {
        (self.range.end - self.range.start) as usize
    }

    /// `true` when nothing was removed since the last read.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removals the reader missed: the bounded log dropped them before it
    /// read them (never silently: this counts them).
    pub fn missed(&self) -> u64 {
        self.missed
    }
}
