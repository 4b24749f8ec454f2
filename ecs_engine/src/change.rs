//! Change detection: which components were added, changed or removed since
//! a given change tick.
//!
//! # The clock
//!
//! A [`Registry`] keeps a `u32` *change tick* ([`Registry::change_tick`]),
//! advanced by [`Registry::advance_change_tick`] (the scheduler advances it
//! before every wave). Every insert of a tracked component stamps its
//! *added* and *changed* ticks with the current tick; every write through
//! `&mut T` stamps its *changed* tick. A filter or term asks "newer than
//! `since`?", where `since` is the tick a system last ran at (the scheduler
//! keeps one per system parameter, so a system that was skipped or disabled
//! still sees everything changed since its last run), or a tick the caller
//! saved ([`Registry::view_since`]).
//!
//! # Opt-in per type, compact storage
//!
//! Tracking costs memory and time, so it is enabled per component type,
//! on demand: [`Registry::track_changes`], by the scheduler at build for
//! every type a system asks about ([`Added`], [`Changed`], [`Ref`],
//! `RemovedComponents`), and by the registry's `&mut self` views
//! ([`Registry::view_mut`], [`Registry::view_filtered`],
//! [`Registry::view_mut_since`]) for the types they ask about. A tracked type's pool keeps two `u32` arrays
//! (added, changed) parallel to its components, kept in step by every
//! structural path (insert, remove, swap-remove, despawn, `despawn_many`,
//! `spawn_batch`, [`PoolMut`](crate::PoolMut), command buffers), plus a
//! bounded log of removals. Enabling fills the arrays with the current
//! tick, so a system's first run sees every existing component as added
//! and changed (as in bevy). An untracked type costs nothing: its views
//! test one null pointer per pass. For a type nobody tracks (reachable only
//! through the `&self` views, which cannot start tracking), [`Added`] and
//! [`Changed`] match every entity and [`ComponentRef::is_changed`] is
//! `true`: a change is never missed, only over-reported.
//! Components registered at run time (`BlobPool`) are not tracked.
//!
//! # Writes mark on fetch
//!
//! A view term `&mut T` marks the component changed when the view hands
//! it out (in a block walk, one store per entity beside the `&mut T`), not
//! when the code writes through it: cheaper than a `Mut<T>` wrapper that
//! marks on `DerefMut`, and the same for the usual loop that writes what it
//! fetches. So do [`Registry::get_mut`](crate::Registry::get_mut),
//! [`SparseSet::get_mut`](crate::SparseSet::get_mut),
//! `components_mut`, `iter_mut` and a replacing insert. Code that writes
//! without changing the value opts out with [`Untracked<T>`] (a view term)
//! or [`Registry::get_mut_untracked`]. Where a pass reads many and writes
//! few, [`RefMut<T>`] marks on `DerefMut` instead (bevy's `Mut<T>`), and
//! tells the state before the pass ([`ComponentMut::is_changed`]).
//!
//! # Wrap-around
//!
//! Ticks are compared by age, modulo 2^32: `tick` is newer than `since`
//! when `now - tick < now - since` (wrapping), so the clock may wrap freely.
//! Ages must stay below 2^32: every [`CHECK_INTERVAL`] advances, the
//! registry clamps every stored tick older than [`MAX_CHANGE_AGE`] to that
//! age (as bevy does), so no stored tick is ever [`STALE_AGE`] old, and a
//! `since` older than that counts as [`STALE_AGE`] old: older than every
//! stored tick. The horizon: a system (or a saved tick) that waits more
//! than [`MAX_CHANGE_AGE`] ticks between runs, or runs for the first time,
//! sees every component as changed, clamped ones included.
//!
//! # Examples
//!
//! ```
//! use ecs_engine::{Added, Changed, Entity, Registry};
//!
//! struct Health(u32);
//!
//! let mut registry = Registry::new();
//! registry.track_changes::<Health>();
//! let a = registry.spawn((Health(3),));
//! let b = registry.spawn((Health(3),));
//! let since = registry.change_tick();
//! registry.advance_change_tick();
//!
//! registry.get_mut::<Health>(b).unwrap().0 = 2;
//! let c = registry.spawn((Health(5),));
//! let changed: Vec<Entity> = registry
//!     .view_since::<(Entity, &Health), Changed<Health>>(since)
//!     .iter()
//!     .map(|(e, _)| e)
//!     .collect();
//! assert_eq!(changed, vec![b, c]);
//! let added: Vec<Entity> = registry
//!     .view_since::<(Entity, &Health), Added<Health>>(since)
//!     .iter()
//!     .map(|(e, _)| e)
//!     .collect();
//! assert_eq!(added, vec![c]);
//! # let _ = a;
//! ```

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::ops::{Deref, Range};

use parking_lot::{MappedRwLockReadGuard, MappedRwLockWriteGuard};

use crate::query::MutCursor;
use crate::query::{Driver, QueryData, QueryFilter, ReadOnlyQueryData, block_start, sealed};
use crate::storage::locked::Locked;
use crate::storage::pools::Pools;
use crate::{
    Access, Component, ComponentAccess, EcsError, Entity, Registry, RegistryCell, SparseSet, View,
};

/// Advances of the change tick between two clamps of the old ticks
/// (bevy's `CHECK_TICK_THRESHOLD`).
pub const CHECK_INTERVAL: u32 = 518_400_000;

/// The oldest age a change tick keeps: older ticks are clamped to this age
/// every [`CHECK_INTERVAL`] advances, so no age ever reaches 2^32 (which
/// would wrap and make an old change look new).
pub const MAX_CHANGE_AGE: u32 = u32::MAX - (2 * CHECK_INTERVAL - 1);

/// The age a `since` past the horizon counts as: older than any stored
/// tick (ticks are clamped to [`MAX_CHANGE_AGE`] every [`CHECK_INTERVAL`]
/// advances, so none reaches this age), so such a `since` sees every
/// component as changed. A system's first run compares with this age.
pub const STALE_AGE: u32 = MAX_CHANGE_AGE + CHECK_INTERVAL;

/// Removals a tracked type's log keeps by default; older ones are dropped
/// and counted ([`Removed::missed`]).
pub const REMOVED_CAPACITY: usize = 1 << 16;

/// `true` when `tick` is newer than `since`, both read relative to `now`
/// (wrapping), with `since` older than [`STALE_AGE`] counted as that old
/// (older than any stored tick).
///
/// # Examples
///
/// ```
/// use ecs_engine::is_newer;
///
/// assert!(is_newer(5, 4, 5));
/// assert!(!is_newer(4, 4, 5));
/// // Across the wrap: tick 1 came 3 ticks after u32::MAX - 1.
/// assert!(is_newer(1, u32::MAX - 1, 2));
/// ```
#[inline]
pub fn is_newer(tick: u32, since: u32, now: u32) -> bool {
    let since_age = now.wrapping_sub(since).min(STALE_AGE);
    now.wrapping_sub(tick) < since_age
}

/// The change ticks of one tracked pool, parallel to its components, and
/// its log of removals.
#[derive(Debug)]
pub(crate) struct ChangeTicks {
    /// The registry's change tick, copied here on every advance.
    pub(crate) now: u32,
    added: Vec<u32>,
    changed: Vec<u32>,
    removed: RemovedLog,
}

/// The entities that lost a component, in order, with sequence numbers:
/// `entries[k]` has number `first + k`. Bounded; the oldest entries go
/// first, counted by the readers that missed them.
#[derive(Debug)]
struct RemovedLog {
    entries: VecDeque<Entity>,
    first: u64,
    capacity: usize,
}

impl RemovedLog {
    fn push(&mut self, entity: Entity) {
        if self.capacity == 0 {
            self.first += 1;
            return;
        }
        if self.entries.len() == self.capacity {
            self.entries.pop_front();
            self.first += 1;
        }
        self.entries.push_back(entity);
    }

    fn end(&self) -> u64 {
        self.first + self.entries.len() as u64
    }
}

impl ChangeTicks {
    fn new(len: usize, now: u32) -> Self {
        ChangeTicks {
            now,
            added: vec![now; len],
            changed: vec![now; len],
            removed: RemovedLog {
                entries: VecDeque::new(),
                first: 0,
                capacity: REMOVED_CAPACITY,
            },
        }
    }

    /// Clamps every tick older than [`MAX_CHANGE_AGE`] to that age.
    fn clamp(&mut self) {
        let now = self.now;
        let oldest = now.wrapping_sub(MAX_CHANGE_AGE);
        for tick in self.added.iter_mut().chain(self.changed.iter_mut()) {
            if now.wrapping_sub(*tick) > MAX_CHANGE_AGE {
                *tick = oldest;
            }
        }
    }

    #[inline]
    fn added_at(&self, i: usize) -> u32 {
        self.added[i]
    }

    #[inline]
    fn changed_at(&self, i: usize) -> u32 {
        self.changed[i]
    }
}

// --- hooks called by `SparseSet` on every structural path -----------------

/// A component was appended at the end of the pool.
#[inline]
pub(crate) fn ticks_pushed(changes: &mut Option<Box<ChangeTicks>>) {
    if let Some(c) = changes {
        c.added.push(c.now);
        c.changed.push(c.now);
    }
}

/// `count` components were appended at the end of the pool.
#[inline]
pub(crate) fn ticks_pushed_n(changes: &mut Option<Box<ChangeTicks>>, count: usize) {
    if let Some(c) = changes {
        let now = c.now;
        c.added.resize(c.added.len() + count, now);
        c.changed.resize(c.changed.len() + count, now);
    }
}

/// The components at dense positions `a` and `b` traded places.
#[inline]
pub(crate) fn ticks_swapped(changes: &mut Option<Box<ChangeTicks>>, a: usize, b: usize) {
    if let Some(c) = changes {
        c.added.swap(a, b);
        c.changed.swap(a, b);
    }
}

/// The component at dense position `i` was written.
#[inline]
pub(crate) fn ticks_marked(changes: &mut Option<Box<ChangeTicks>>, i: usize) {
    if let Some(c) = changes {
        c.changed[i] = c.now;
    }
}

/// Every component was (or may have been) written.
#[inline]
pub(crate) fn ticks_marked_all(changes: &mut Option<Box<ChangeTicks>>) {
    if let Some(c) = changes {
        let now = c.now;
        c.changed.fill(now);
    }
}

/// `entity`'s component at dense position `i` was swap-removed.
#[inline]
pub(crate) fn ticks_swap_removed(changes: &mut Option<Box<ChangeTicks>>, i: usize, entity: Entity) {
    if let Some(c) = changes {
        c.added.swap_remove(i);
        c.changed.swap_remove(i);
        c.removed.push(entity);
    }
}

/// Every component of `dense` is about to be removed.
pub(crate) fn ticks_cleared(changes: &mut Option<Box<ChangeTicks>>, dense: &[Entity]) {
    if let Some(c) = changes {
        c.added.clear();
        c.changed.clear();
        for &entity in dense {
            c.removed.push(entity);
        }
    }
}

/// Heap bytes of the tick arrays and the removal log.
pub(crate) fn ticks_heap_bytes(changes: &Option<Box<ChangeTicks>>) -> usize {
    changes.as_ref().map_or(0, |c| {
        std::mem::size_of::<ChangeTicks>()
            + (c.added.capacity() + c.changed.capacity()) * 4
            + c.removed.entries.capacity() * std::mem::size_of::<Entity>()
    })
}

impl<T> SparseSet<T> {
    /// `true` when this pool keeps change ticks.
    pub fn is_tracking_changes(&self) -> bool {
        self.changes.is_some()
    }

    /// The (added, changed) ticks of `entity`'s component; `None` when it
    /// has none or the pool keeps no ticks.
    pub fn change_ticks(&self, entity: Entity) -> Option<(u32, u32)> {
        let c = self.changes.as_ref()?;
        let i = self.dense_index(entity)?;
        Some((c.added_at(i), c.changed_at(i)))
    }

    /// `entity`'s component, mutable, without marking it changed: for a
    /// write that leaves the value as it was (bevy's
    /// `bypass_change_detection`).
    pub fn get_mut_untracked(&mut self, entity: Entity) -> Option<&mut T> {
        let i = self.dense_index(entity)?;
        Some(&mut self.data_untracked()[i])
    }

    /// Where `&mut T` terms store their changed ticks: the first tick and
    /// the current tick; null when the pool keeps no ticks.
    #[inline]
    pub(crate) fn changed_ptr(&mut self) -> (*mut u32, u32) {
        match &mut self.changes {
            Some(c) => (c.changed.as_mut_ptr(), c.now),
            None => (std::ptr::null_mut(), 0),
        }
    }

    /// The tick arrays and the current tick, for read terms.
    #[inline]
    fn ticks(&self) -> Option<TickSlices<'_>> {
        self.changes.as_deref().map(|c| TickSlices {
            added: &c.added,
            changed: &c.changed,
            now: c.now,
        })
    }
}

/// Marks position `i` of a changed-tick array with `now`, when there is one.
///
/// # Safety
///
/// `ticks` is null or points to an array longer than `i` that nobody else
/// reads or writes at `i` meanwhile.
#[inline(always)]
pub(crate) unsafe fn mark(ticks: *mut u32, i: usize, now: u32) {
    if !ticks.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *ticks.add(i) = now };
    }
}

#[derive(Debug, Clone, Copy)]
struct TickSlices<'a> {
    added: &'a [u32],
    changed: &'a [u32],
    now: u32,
}

// --- the registry's clock -------------------------------------------------

/// Copies the registry's tick into one tracked pool, clamping its old
/// ticks when `check` is set.
type UpdatePool = fn(&mut Pools, u32, bool);

fn update_pool<T: Component>(pools: &mut Pools, now: u32, check: bool) {
    if let Some(c) = pools.get_mut::<T>().and_then(|p| p.changes.as_deref_mut()) {
        c.now = now;
        if check {
            c.clamp();
        }
    }
}

/// The registry's change clock and the tracked types.
#[derive(Debug, Default)]
pub(crate) struct ChangeClock {
    now: u32,
    last_check: u32,
    tracked: Vec<UpdatePool>,
}

impl Registry {
    /// The current change tick: what an insert or a write made now is
    /// stamped with.
    pub fn change_tick(&self) -> u32 {
        self.change.now
    }

    /// Advances the change tick by one (wrapping) and returns the new
    /// tick; every [`CHECK_INTERVAL`] advances, clamps the tracked types'
    /// old ticks. The scheduler calls it before every wave; code that
    /// uses the registry directly calls it where it wants a boundary
    /// (e.g. once per frame), and saves [`change_tick`](Self::change_tick)
    /// as the `since` of its next [`view_since`](Self::view_since).
    pub fn advance_change_tick(&mut self) -> u32 {
        let now = self.change.now.wrapping_add(1);
        self.set_clock(now);
        now
    }

    fn set_clock(&mut self, now: u32) {
        self.change.now = now;
        let check = now.wrapping_sub(self.change.last_check) >= CHECK_INTERVAL;
        if check {
            self.change.last_check = now;
        }
        for update in &self.change.tracked {
            update(&mut self.pools, now, check);
        }
    }

    /// Sets the change tick to `tick` and clamps every old tick, as a
    /// jump of that many advances would: a test hook for wrap-around.
    #[doc(hidden)]
    pub fn set_change_tick_for_tests(&mut self, tick: u32) {
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
            self.change.tracked.push(update_pool::<T>);
        }
    }

    /// `true` when `T`'s changes are tracked.
    pub fn is_tracking_changes<T: Component>(&self) -> bool {
        self.pools
            .get::<T>()
            .is_some_and(SparseSet::is_tracking_changes)
    }

    /// Sets how many removals of `T` the log keeps (default
    /// [`REMOVED_CAPACITY`]); tracks `T` if it is not yet.
    pub fn set_removed_capacity<T: Component>(&mut self, capacity: usize) {
        self.track_changes::<T>();
        if let Some(c) = self.pools.get_or_create::<T>().changes.as_deref_mut() {
            c.removed.capacity = capacity;
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

    /// A read-only view whose change filters and terms ([`Added`],
    /// [`Changed`], [`Ref`]) compare with `since`, a change tick the
    /// caller saved earlier ([`change_tick`](Self::change_tick)). Plain
    /// views ([`view`](Self::view)) compare with the tick before the
    /// current one: they see what changed since the last
    /// [`advance_change_tick`](Self::advance_change_tick).
    ///
    /// # Panics
    ///
    /// Never for a well-formed program (read locks through `&self`).
    #[track_caller]
    pub fn view_since<Q: ReadOnlyQueryData, F: QueryFilter>(&self, since: u32) -> View<'_, Q, F> {
        View::new(Locked::shared(self).with_since(since))
            .unwrap_or_else(|e| panic!("Registry::view_since: {e}"))
    }

    /// [`view_since`](Self::view_since) for a query that may write.
    ///
    /// # Panics
    ///
    /// As [`view_filtered`](Self::view_filtered).
    #[track_caller]
    pub fn view_mut_since<Q: QueryData, F: QueryFilter>(&mut self, since: u32) -> View<'_, Q, F> {
        self.track_observed::<Q, F>();
        View::new(Locked::exclusive(self).with_since(since))
            .unwrap_or_else(|e| panic!("Registry::view_mut_since: {e}"))
    }

    /// The entities that lost a `T` (removed, replaced by a despawn, or a
    /// clear) since `cursor` last read, oldest first; advances `cursor`.
    /// Empty when `T` is not tracked ([`track_changes`](Self::track_changes)).
    pub fn removed<T: Component>(&self, cursor: &mut RemovedCursor) -> Removed<'_, T> {
        Removed::read(self.pools.get::<T>().map(PoolRef::Plain), cursor)
    }
}

impl RegistryCell<'_> {
    /// The registry's current change tick.
    pub fn change_tick(&self) -> u32 {
        self.locked().change_tick()
    }

    /// [`view_filtered`](Self::view_filtered) whose change filters and
    /// terms compare with `since` (the scheduler passes the tick the
    /// system last ran at).
    ///
    /// # Errors
    ///
    /// As [`view`](Self::view).
    pub fn view_since<Q: QueryData, F: QueryFilter>(
        &self,
        since: u32,
    ) -> Result<View<'_, Q, F>, EcsError> {
        View::new(self.locked().with_since(since))
    }

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

// --- removed components ----------------------------------------------------

/// Where a reader of a removal log is: the number of the next removal it
/// has not read. `Default` starts at the oldest kept removal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemovedCursor {
    next: u64,
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
        let (first, end) = (log.first, log.end());
        // A cursor past the end (one from another registry) reads nothing.
        let from = cursor.next.clamp(first, end);
        let missed = first.saturating_sub(cursor.next);
        cursor.next = end;
        Removed {
            pool,
            range: from..end,
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

// --- filters -----------------------------------------------------------------

/// QueryFilter: only entities whose `T` was added (inserted, spawned with,
/// or re-inserted after a removal) after the view's `since` tick.
///
/// Only a tracked `T` knows its ticks: a schedule tracks every type a
/// system asks about at build; code that uses the registry directly calls
/// [`Registry::track_changes`] first. For an untracked `T` this filter
/// keeps every entity that has a `T` (over-reported, never missed).
///
/// # Borrows
///
/// A read lock on `T`'s pool: a query that writes `T` cannot take this
/// filter (refused like [`With`](crate::With); a schedule refuses such a
/// system at build). To write the components that changed, take
/// [`RefMut<T>`] and test [`ComponentMut::is_changed`].
///
/// # Examples
///
/// ```
/// use ecs_engine::{Added, Entity, Registry};
///
/// struct Name(&'static str);
///
/// let mut registry = Registry::new();
/// registry.track_changes::<Name>();
/// registry.spawn((Name("old"),));
/// let since = registry.change_tick();
/// registry.advance_change_tick();
/// let new = registry.spawn((Name("new"),));
/// let added: Vec<Entity> = registry
///     .view_since::<(Entity, &Name), Added<Name>>(since)
///     .iter()
///     .map(|(e, _)| e)
///     .collect();
/// assert_eq!(added, vec![new]);
/// ```
pub struct Added<T>(PhantomData<fn() -> T>);

/// QueryFilter: only entities whose `T` was added or written (through
/// `&mut T`, `get_mut`, a replacing insert) after the view's `since` tick.
/// As with [`Added`], an untracked `T` keeps every entity that has one
/// ([`Registry::track_changes`]).
///
/// # Borrows
///
/// As [`Added`].
///
/// # Examples
///
/// ```
/// use ecs_engine::{Changed, Entity, Registry};
///
/// struct Health(u32);
///
/// let mut registry = Registry::new();
/// registry.track_changes::<Health>();
/// let a = registry.spawn((Health(1),));
/// let b = registry.spawn((Health(1),));
/// let since = registry.change_tick();
/// registry.advance_change_tick();
/// registry.view_mut::<(Entity, &mut Health)>().each(|(e, h)| if e == b { h.0 = 0 });
/// // `&mut Health` marks every entity it hands out:
/// let changed: Vec<Entity> = registry
///     .view_since::<(Entity, &Health), Changed<Health>>(since)
///     .iter()
///     .map(|(e, _)| e)
///     .collect();
/// assert_eq!(changed, vec![a, b]);
/// ```
pub struct Changed<T>(PhantomData<fn() -> T>);

macro_rules! change_filter {
    ($filter:ident, $field:ident) => {
        impl<T> std::fmt::Debug for $filter<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}<{}>", stringify!($filter), std::any::type_name::<T>())
            }
        }

        impl<T: Component> sealed::SealedQueryFilter for $filter<T> {}

        impl<T: Component> QueryFilter for $filter<T> {
            type Borrow<'w> = (Option<MappedRwLockReadGuard<'w, SparseSet<T>>>, u32);
            type Cursor<'a> = (Option<&'a SparseSet<T>>, u32);

            fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
                Ok((registry.read::<T>()?, registry.since()))
            }

            #[inline]
            fn cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {
                (borrow.0.as_deref(), borrow.1)
            }

            #[inline]
            fn matches(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
                let (Some(pool), since) = cursor else {
                    return false;
                };
                let Some(i) = pool.dense_index_hinted(entity, hint) else {
                    return false;
                };
                pool.ticks()
                    .is_none_or(|t| is_newer(t.$field[i], since, t.now))
            }

            fn access(out: &mut dyn FnMut(ComponentAccess)) {
                out(ComponentAccess::tracked::<T>(Access::Read));
            }
        }
    };
}

change_filter!(Added, added);
change_filter!(Changed, changed);

// --- Ref<T> ------------------------------------------------------------------

/// A query term: `T`, read, with its change state ([`ComponentRef`]:
/// `is_added()`, `is_changed()` relative to the view's `since` tick).
///
/// # Borrows
///
/// A read lock on `T`'s pool.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Ref, Registry};
///
/// struct Score(u32);
///
/// let mut registry = Registry::new();
/// registry.track_changes::<Score>();
/// let a = registry.spawn((Score(1),));
/// let since = registry.change_tick();
/// registry.advance_change_tick();
/// registry.spawn((Score(2),));
/// let seen: Vec<(u32, bool)> = registry
///     .view_since::<Ref<Score>, ()>(since)
///     .iter()
///     .map(|s| (s.0, s.is_added()))
///     .collect();
/// assert_eq!(seen, vec![(1, false), (2, true)]);
/// # let _ = a;
/// ```
pub struct Ref<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for Ref<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ref<{}>", std::any::type_name::<T>())
    }
}

/// The item of a [`Ref<T>`] term: `&T` (through `Deref`) and its change
/// state.
pub struct ComponentRef<'a, T> {
    value: &'a T,
    added: u32,
    changed: u32,
    since: u32,
    now: u32,
}

impl<T: std::fmt::Debug> std::fmt::Debug for ComponentRef<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComponentRef")
            .field("value", self.value)
            .field("added", &self.added)
            .field("changed", &self.changed)
            .finish()
    }
}

impl<T> Clone for ComponentRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ComponentRef<'_, T> {}

impl<'a, T> ComponentRef<'a, T> {
    /// The component.
    pub fn into_inner(self) -> &'a T {
        self.value
    }

    /// `true` when the component was added after the view's `since` tick
    /// (always `true` for an untracked type).
    pub fn is_added(&self) -> bool {
        is_newer(self.added, self.since, self.now)
    }

    /// `true` when the component was added or written after the view's
    /// `since` tick (always `true` for an untracked type).
    pub fn is_changed(&self) -> bool {
        is_newer(self.changed, self.since, self.now)
    }

    /// The tick the component was added at.
    pub fn added_tick(&self) -> u32 {
        self.added
    }

    /// The tick the component was last written at.
    pub fn changed_tick(&self) -> u32 {
        self.changed
    }
}

impl<T> Deref for ComponentRef<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value
    }
}

/// What a [`Ref`] term reads per entity: the pool, its ticks, `since`.
#[doc(hidden)]
#[derive(Debug)]
pub struct RefCursor<'a, T> {
    pool: Option<&'a SparseSet<T>>,
    since: u32,
}

impl<T> Clone for RefCursor<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for RefCursor<'_, T> {}

/// A block of a [`Ref`] term: values and their ticks at the same
/// positions.
#[doc(hidden)]
#[derive(Debug)]
pub struct RefBlock<'a, T> {
    values: &'a [T],
    ticks: Option<(&'a [u32], &'a [u32])>,
    since: u32,
    now: u32,
}

impl<T> Clone for RefBlock<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for RefBlock<'_, T> {}

/// The item for dense position `i` of `pool`.
#[inline]
fn ref_at<T>(pool: &SparseSet<T>, i: usize, since: u32) -> ComponentRef<'_, T> {
    let (added, changed, now) = match pool.ticks() {
        Some(t) => (t.added[i], t.changed[i], t.now),
        // Untracked: always new (one tick after a `since` one tick old).
        None => (
            since.wrapping_add(1),
            since.wrapping_add(1),
            since.wrapping_add(1),
        ),
    };
    ComponentRef {
        value: &pool.components()[i],
        added,
        changed,
        since,
        now,
    }
}

impl<T: Component> sealed::SealedQueryData for Ref<T> {}

impl<T: Component> QueryData for Ref<T> {
    type Item<'a> = ComponentRef<'a, T>;
    type Borrow<'w> = (Option<MappedRwLockReadGuard<'w, SparseSet<T>>>, u32);
    type Cursor<'a> = RefCursor<'a, T>;
    type Block<'a> = RefBlock<'a, T>;
    type Run = Option<usize>;
    const DRIVES: bool = true;

    #[inline]
    fn contains(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
        <&T as QueryData>::contains(cursor.pool, entity, hint)
    }

    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
        Ok((registry.read::<T>()?, registry.since()))
    }

    #[inline]
    fn cursor<'a>(borrow: &'a mut Self::Borrow<'_>) -> Self::Cursor<'a> {
        RefCursor {
            pool: borrow.0.as_deref(),
            since: borrow.1,
        }
    }

    #[inline]
    fn driver<'a>(cursor: Self::Cursor<'a>) -> Option<Driver<'a>> {
        <&T as QueryData>::driver(cursor.pool)
    }

    #[inline]
    unsafe fn fetch<'a>(
        cursor: Self::Cursor<'a>,
        entity: Entity,
        hint: usize,
    ) -> Option<Self::Item<'a>> {
        let pool = cursor.pool?;
        let i = pool.dense_index_hinted(entity, hint)?;
        Some(ref_at(pool, i, cursor.since))
    }

    fn run(cursor: Self::Cursor<'_>, driver: Driver<'_>) -> Self::Run {
        <&T as QueryData>::run(cursor.pool, driver)
    }

    #[inline]
    fn block<'a>(
        cursor: Self::Cursor<'a>,
        run: Self::Run,
        driver: Driver<'a>,
        range: Range<usize>,
    ) -> Option<Self::Block<'a>> {
        let pool = cursor.pool?;
        let len = range.len();
        let (sparse, _) = pool.lookup_parts();
        let start = block_start(pool.entities(), sparse, run, driver, range)?;
        let at = start..start + len;
        let ticks = match pool.ticks() {
            Some(t) => Some((t.added.get(at.clone())?, t.changed.get(at.clone())?)),
            None => None,
        };
        Some(RefBlock {
            values: pool.components().get(at)?,
            ticks,
            since: cursor.since,
            now: pool.ticks().map_or(cursor.since.wrapping_add(1), |t| t.now),
        })
    }

    #[inline]
    unsafe fn fetch_block<'a>(block: Self::Block<'a>, k: usize) -> Self::Item<'a> {
        let fresh = block.since.wrapping_add(1);
        let (added, changed) = block.ticks.map_or((fresh, fresh), |(a, c)| (a[k], c[k]));
        ComponentRef {
            value: &block.values[k],
            added,
            changed,
            since: block.since,
            now: block.now,
        }
    }

    fn access(out: &mut dyn FnMut(ComponentAccess)) {
        out(ComponentAccess::tracked::<T>(Access::Read));
    }
}

impl<T: Component> sealed::SealedReadOnly for Ref<T> {}
impl<T: Component> ReadOnlyQueryData for Ref<T> {
    #[inline]
    fn shared_cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {
        RefCursor {
            pool: borrow.0.as_deref(),
            since: borrow.1,
        }
    }
}

// --- Untracked<T> --------------------------------------------------------

/// A query term: `&mut T` that does not mark the component changed, for
/// writes that leave the value as it was (bevy's
/// `bypass_change_detection`).
///
/// # Borrows
///
/// A write lock on `T`'s pool, as `&mut T`.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Changed, Entity, Registry, Untracked};
///
/// struct Cache(u32);
///
/// let mut registry = Registry::new();
/// registry.track_changes::<Cache>();
/// registry.spawn((Cache(1),));
/// let since = registry.change_tick();
/// registry.advance_change_tick();
/// registry.view_mut::<Untracked<Cache>>().each(|c| c.0 = 1);
/// assert_eq!(registry.view_since::<&Cache, Changed<Cache>>(since).count(), 0);
/// ```
pub struct Untracked<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for Untracked<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Untracked<{}>", std::any::type_name::<T>())
    }
}

impl<T: Component> sealed::SealedQueryData for Untracked<T> {}

impl<T: Component> QueryData for Untracked<T> {
    type Item<'a> = &'a mut T;
    type Borrow<'w> = Option<MappedRwLockWriteGuard<'w, SparseSet<T>>>;
    type Cursor<'a> = Option<MutCursor<'a, T>>;
    type Block<'a> = <&'a mut T as QueryData>::Block<'a>;
    type Run = Option<usize>;
    const DRIVES: bool = true;

    #[inline]
    fn contains(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
        <&mut T as QueryData>::contains(cursor, entity, hint)
    }

    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
        <&mut T as QueryData>::borrow(registry)
    }

    #[inline]
    fn cursor<'a>(borrow: &'a mut Self::Borrow<'_>) -> Self::Cursor<'a> {
        <&mut T as QueryData>::cursor(borrow).map(MutCursor::untracked)
    }

    #[inline]
    fn driver<'a>(cursor: Self::Cursor<'a>) -> Option<Driver<'a>> {
        <&mut T as QueryData>::driver(cursor)
    }

    #[inline]
    unsafe fn fetch<'a>(
        cursor: Self::Cursor<'a>,
        entity: Entity,
        hint: usize,
    ) -> Option<Self::Item<'a>> {
        // SAFETY: forwarded contract.
        unsafe { <&mut T as QueryData>::fetch(cursor, entity, hint) }
    }

    fn run(cursor: Self::Cursor<'_>, driver: Driver<'_>) -> Self::Run {
        <&mut T as QueryData>::run(cursor, driver)
    }

    #[inline]
    fn block<'a>(
        cursor: Self::Cursor<'a>,
        run: Self::Run,
        driver: Driver<'a>,
        range: Range<usize>,
    ) -> Option<Self::Block<'a>> {
        <&mut T as QueryData>::block(cursor, run, driver, range)
    }

    #[inline]
    unsafe fn fetch_block<'a>(block: Self::Block<'a>, k: usize) -> Self::Item<'a> {
        // SAFETY: forwarded contract.
        unsafe { <&mut T as QueryData>::fetch_block(block, k) }
    }

    fn access(out: &mut dyn FnMut(ComponentAccess)) {
        <&mut T as QueryData>::access(out);
    }
}

// --- RefMut<T> -----------------------------------------------------------

/// A query term: `T`, writable, with its change state; unlike `&mut T`, it
/// marks the component changed only when written through
/// (`DerefMut`), so a pass that reads most and writes few marks only
/// those. `is_added()` and `is_changed()` tell the state before this
/// pass's write.
///
/// # Borrows
///
/// A write lock on `T`'s pool, as `&mut T`.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Changed, Entity, RefMut, Registry};
///
/// struct Health(u32);
///
/// let mut registry = Registry::new();
/// registry.track_changes::<Health>();
/// let a = registry.spawn((Health(5),));
/// let b = registry.spawn((Health(0),));
/// let since = registry.change_tick();
/// registry.advance_change_tick();
/// registry.view_mut::<RefMut<Health>>().each(|mut h| {
///     if h.0 == 0 {
///         h.0 = 10; // marks `b` only
///     }
/// });
/// let changed: Vec<Entity> = registry
///     .view_since::<(Entity, &Health), Changed<Health>>(since)
///     .iter()
///     .map(|(e, _)| e)
///     .collect();
/// assert_eq!(changed, vec![b]);
/// # let _ = a;
/// ```
pub struct RefMut<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for RefMut<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RefMut<{}>", std::any::type_name::<T>())
    }
}

/// The item of a [`RefMut<T>`] term: `&mut T` that marks the component
/// changed on its first write (`DerefMut`), and its change state.
pub struct ComponentMut<'a, T> {
    value: &'a mut T,
    /// The component's changed tick; `None` when the type is untracked.
    tick: Option<&'a mut u32>,
    added: u32,
    changed: u32,
    since: u32,
    now: u32,
}

impl<T: std::fmt::Debug> std::fmt::Debug for ComponentMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComponentMut")
            .field("value", &self.value)
            .field("added", &self.added)
            .field("changed", &self.changed)
            .finish()
    }
}

impl<T> ComponentMut<'_, T> {
    /// `true` when the component was added after the view's `since` tick
    /// (always `true` for an untracked type).
    pub fn is_added(&self) -> bool {
        is_newer(self.added, self.since, self.now)
    }

    /// `true` when the component was added or written after the view's
    /// `since` tick, before this item was handed out (always `true` for
    /// an untracked type).
    pub fn is_changed(&self) -> bool {
        is_newer(self.changed, self.since, self.now)
    }

    /// The component, writable, without marking it changed (bevy's
    /// `bypass_change_detection`).
    pub fn bypass_change_detection(&mut self) -> &mut T {
        self.value
    }
}

impl<T> Deref for ComponentMut<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T> std::ops::DerefMut for ComponentMut<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        if let Some(tick) = self.tick.as_deref_mut() {
            *tick = self.now;
        }
        self.value
    }
}

/// What a [`RefMut`] term reads per entity: the write-locked pool's parts
/// and raw pointers to its components and ticks.
#[doc(hidden)]
pub struct RefMutCursor<'a, T> {
    inner: MutCursor<'a, T>,
    added: *const u32,
    since: u32,
}

impl<T> std::fmt::Debug for RefMutCursor<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RefMutCursor").finish_non_exhaustive()
    }
}

impl<T> Clone for RefMutCursor<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for RefMutCursor<'_, T> {}

// SAFETY: as `MutCursor` (which this wraps): each thread builds items for
// distinct entities only (the `QueryData::fetch` contract); the added ticks
// are only read.
unsafe impl<T: Send + Sync> Send for RefMutCursor<'_, T> {}
// SAFETY: see the `Send` impl above.
unsafe impl<T: Send + Sync> Sync for RefMutCursor<'_, T> {}

/// A block of a [`RefMut`] term: its `&mut T` block and its added ticks.
#[doc(hidden)]
#[derive(Debug)]
pub struct RefMutBlock<'a, T> {
    values: *mut T,
    changed: *mut u32,
    added: *const u32,
    since: u32,
    now: u32,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> Clone for RefMutBlock<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for RefMutBlock<'_, T> {}

/// The item for raw parts at one position.
///
/// # Safety
///
/// `value` is valid for `'a` and handed out once; `changed` and `added`
/// are null (untracked) or point to that position's ticks, valid for `'a`
/// and not touched by anyone else meanwhile.
#[inline(always)]
unsafe fn item_mut<'a, T>(
    value: *mut T,
    changed: *mut u32,
    added: *const u32,
    since: u32,
    now: u32,
) -> ComponentMut<'a, T> {
    let fresh = since.wrapping_add(1);
    // SAFETY: the caller's contract.
    unsafe {
        let (tick, added, changed_tick, now) = if changed.is_null() {
            (None, fresh, fresh, fresh)
        } else {
            let old = *changed;
            (Some(&mut *changed), *added, old, now)
        };
        ComponentMut {
            value: &mut *value,
            tick,
            added,
            changed: changed_tick,
            since,
            now,
        }
    }
}

impl<T: Component> sealed::SealedQueryData for RefMut<T> {}

impl<T: Component> QueryData for RefMut<T> {
    type Item<'a> = ComponentMut<'a, T>;
    type Borrow<'w> = (Option<MappedRwLockWriteGuard<'w, SparseSet<T>>>, u32);
    type Cursor<'a> = Option<RefMutCursor<'a, T>>;
    type Block<'a> = RefMutBlock<'a, T>;
    type Run = Option<usize>;
    const DRIVES: bool = true;

    #[inline]
    fn contains(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
        <&mut T as QueryData>::contains(cursor.map(|c| c.inner), entity, hint)
    }

    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
        Ok((registry.write::<T>()?, registry.since()))
    }

    #[inline]
    fn cursor<'a>(borrow: &'a mut Self::Borrow<'_>) -> Self::Cursor<'a> {
        let since = borrow.1;
        let pool = borrow.0.as_deref_mut()?;
        let added = match pool.changes.as_deref() {
            Some(c) => c.added.as_ptr(),
            None => std::ptr::null(),
        };
        Some(RefMutCursor {
            inner: MutCursor::of(pool),
            added,
            since,
        })
    }

    #[inline]
    fn driver<'a>(cursor: Self::Cursor<'a>) -> Option<Driver<'a>> {
        <&mut T as QueryData>::driver(cursor.map(|c| c.inner))
    }

    #[inline]
    unsafe fn fetch<'a>(
        cursor: Self::Cursor<'a>,
        entity: Entity,
        hint: usize,
    ) -> Option<Self::Item<'a>> {
        let c = cursor?;
        let (dense, sparse, data, ticks, now) = c.inner.parts();
        let i = SparseSet::<T>::locate(dense, sparse, entity, hint)?;
        // SAFETY: `i < dense.len()`, the length of the write-locked pool's
        // components and of its tick arrays (when present); each entity is
        // fetched once while its item lives (the caller's contract).
        unsafe {
            let (changed, added) = if ticks.is_null() {
                (ticks, c.added)
            } else {
                (ticks.add(i), c.added.add(i))
            };
            Some(item_mut(data.add(i), changed, added, c.since, now))
        }
    }

    fn run(cursor: Self::Cursor<'_>, driver: Driver<'_>) -> Self::Run {
        <&mut T as QueryData>::run(cursor.map(|c| c.inner), driver)
    }

    #[inline]
    fn block<'a>(
        cursor: Self::Cursor<'a>,
        run: Self::Run,
        driver: Driver<'a>,
        range: Range<usize>,
    ) -> Option<Self::Block<'a>> {
        let c = cursor?;
        let (dense, sparse, data, ticks, now) = c.inner.parts();
        let start = block_start(dense, sparse, run, driver, range)?;
        // SAFETY: `block_start` checked that the block lies within
        // `dense`, whose length is that of the components and the tick
        // arrays (when present).
        let (values, changed, added) = unsafe {
            if ticks.is_null() {
                (data.add(start), ticks, c.added)
            } else {
                (data.add(start), ticks.add(start), c.added.add(start))
            }
        };
        Some(RefMutBlock {
            values,
            changed,
            added,
            since: c.since,
            now,
            _borrow: PhantomData,
        })
    }

    #[inline]
    unsafe fn fetch_block<'a>(block: Self::Block<'a>, k: usize) -> Self::Item<'a> {
        // SAFETY: `k` is within the block (the caller's contract), each
        // fetched once while its item lives; the ticks, when present, are
        // the block's.
        unsafe {
            let (changed, added) = if block.changed.is_null() {
                (block.changed, block.added)
            } else {
                (block.changed.add(k), block.added.add(k))
            };
            item_mut(block.values.add(k), changed, added, block.since, block.now)
        }
    }

    fn access(out: &mut dyn FnMut(ComponentAccess)) {
        out(ComponentAccess::tracked::<T>(Access::Write));
    }
}
