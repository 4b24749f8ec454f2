//! What a view asks for: [`QueryData`] terms (`&T`, `&mut T`, `Option<Q>`,
//! [`Entity`], [`Has`](crate::Has) and tuples of them) and [`QueryFilter`]s
//! ([`With`], [`Without`], [`Or`](crate::Or) and tuples of them).
//!
//! A view borrows every pool its query names (a read lock for `&T`, a write
//! lock for `&mut T`), picks the smallest pool among the required terms as
//! the *driver* (when the query has no required term: the smallest pool a
//! filter requires, e.g. [`With`]'s; when neither has one: every alive
//! entity), walks the driver's dense entities and, for each, looks the
//! entity up in the other pools in O(1). The lookup first tries the same
//! dense position as in the driver, so pools that hold the same entities in
//! the same order are joined without touching their sparse arrays.

use std::marker::PhantomData;
use std::ops::Range;

use parking_lot::{MappedRwLockReadGuard, MappedRwLockWriteGuard};

use crate::storage::locked::Locked;
use crate::storage::runs::{RUN_CACHE_SLOTS, RunCache, RunInfo};
use crate::storage::sparse_index::SparseIndex;
use crate::{Access, Component, ComponentAccess, EcsError, Entity, SparseSet};

pub(crate) mod sealed {
    pub trait SealedQueryData {}
    pub trait SealedQueryFilter {}
    /// Only this crate says which queries are read-only: `Registry::view`
    /// (`&self`) trusts it to take no write lock, while the registry's
    /// `&self` accessors read pools without locks.
    pub trait SealedReadOnly {}
}

/// A component set a view iterates over, and the item it yields per entity.
///
/// Implemented (sealed) for:
/// - `&T`: the entity must have `T`; yields `&T` (read access);
/// - `&mut T`: the entity must have `T`; yields `&mut T` (write access);
/// - `Option<Q>`: yields `Some` when the entity matches `Q`, else `None`;
///   never restricts the entities visited;
/// - [`Entity`]: yields the entity's handle;
/// - tuples of up to 12 queries.
///
/// A query with no required term (`Entity`, `Option<&T>`, [`Has<T>`](crate::Has))
/// is driven by its filter's pools (`(Entity, With<T>)` walks `T`'s pool),
/// or, when the filter requires no pool either, by every alive entity. The same component
/// twice with a write (`(&mut A, &A)`) cannot be proven distinct at compile
/// time on stable Rust: it is refused when the view is created (a panic from
/// `Registry::view_mut`, an error from `RegistryCell::view`).
pub trait QueryData: sealed::SealedQueryData {
    /// What the view yields for one entity.
    type Item<'a>;
    #[doc(hidden)]
    type Borrow<'w>;
    #[doc(hidden)]
    type Cursor<'a>: Copy;
    #[doc(hidden)]
    const DRIVES: bool;

    /// `true` when [`fetch`](Self::fetch) marks what it hands out as
    /// changed (`&mut T`): a tuple with such a term first checks that
    /// every term has the entity ([`contains`](Self::contains)), so an
    /// entity the query does not visit is never marked.
    #[doc(hidden)]
    const MARKS: bool = false;

    /// `true` when [`fetch`](Self::fetch) would give `entity` an item;
    /// reads only (marks nothing).
    #[doc(hidden)]
    fn contains(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool;

    #[doc(hidden)]
    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError>;

    #[doc(hidden)]
    fn cursor<'a>(borrow: &'a mut Self::Borrow<'_>) -> Self::Cursor<'a>;

    #[doc(hidden)]
    fn driver<'a>(cursor: Self::Cursor<'a>) -> Option<Driver<'a>>;

    /// # Safety
    ///
    /// While an item fetched from `cursor` for `entity` is alive, the same
    /// entity must not be fetched again from a cursor of the same borrow
    /// (an `&mut T` item would be aliased).
    #[doc(hidden)]
    unsafe fn fetch<'a>(
        cursor: Self::Cursor<'a>,
        entity: Entity,
        hint: usize,
    ) -> Option<Self::Item<'a>>;

    #[doc(hidden)]
    type Block<'a>: Copy;

    #[doc(hidden)]
    type Run: Copy + Send + Sync;

    /// Where the driver's whole dense array sits in every pool of the
    /// query as one run, if it does; found once per pass (cached across
    /// passes) and handed to every [`block`](Self::block) call.
    #[doc(hidden)]
    fn run(cursor: Self::Cursor<'_>, driver: Driver<'_>) -> Self::Run;

    /// The run of every pool of the query that holds exactly the driver's
    /// entities `driver[range]`, in the same order (at any offset in each
    /// pool); `None` when some pool does not. Such a block is joined by
    /// position, with no lookup.
    #[doc(hidden)]
    fn block<'a>(
        cursor: Self::Cursor<'a>,
        run: Self::Run,
        driver: Driver<'a>,
        range: Range<usize>,
    ) -> Option<Self::Block<'a>>;

    /// The item of the `k`-th entity of a block.
    ///
    /// # Safety
    ///
    /// `block` came from [`block`](Self::block) for a range longer than
    /// `k`, and the contract of [`fetch`](Self::fetch) holds.
    #[doc(hidden)]
    unsafe fn fetch_block<'a>(block: Self::Block<'a>, k: usize) -> Self::Item<'a>;

    /// Reports every component type the query borrows, with its access
    /// (the scheduler derives a system's access from this).
    fn access(out: &mut dyn FnMut(ComponentAccess));
}

/// The pool that drives a view's iteration: its dense entities and its
/// identity, which keys the run caches of the other pools.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Driver<'a> {
    pub(crate) entities: &'a [Entity],
    id: u64,
    revision: u64,
    runs: Option<&'a RunInfo>,
}

impl<'a> Driver<'a> {
    pub(crate) fn of(dense: &'a [Entity], runs: &'a RunInfo) -> Self {
        Driver {
            entities: dense,
            id: runs.id,
            revision: runs.revision,
            runs: Some(runs),
        }
    }

    /// A driver that is no pool (the alive entities of a view with no
    /// required term): the pools' run caches are not used for it.
    pub(crate) fn unpooled(entities: &'a [Entity]) -> Self {
        Driver {
            entities,
            id: 0,
            revision: 0,
            runs: None,
        }
    }

    const EMPTY: Driver<'static> = Driver {
        entities: &[],
        id: 0,
        revision: 0,
        runs: None,
    };
}

/// Where `wanted` starts in `dense` as one run, if it does.
#[inline]
fn run_start(
    dense: &[Entity],
    sparse: &SparseIndex,
    wanted: &[Entity],
    hint: usize,
) -> Option<usize> {
    let start = SparseSet::<()>::locate(dense, sparse, *wanted.first()?, hint)?;
    same_run(dense.get(start..start + wanted.len())?, wanted).then_some(start)
}

/// Where the run `driver[range]` starts in a pool's `dense` array, given
/// where the driver's whole array starts in it (`whole`, from
/// [`whole_run_start`], computed once per pass), if the pool holds exactly
/// those entities in that order there.
#[inline]
pub(crate) fn block_start(
    dense: &[Entity],
    sparse: &SparseIndex,
    whole: Option<usize>,
    driver: Driver<'_>,
    range: Range<usize>,
) -> Option<usize> {
    match whole {
        Some(start) => Some(start + range.start),
        None => run_start(
            dense,
            sparse,
            driver.entities.get(range.clone())?,
            range.start,
        ),
    }
}

/// Where the driver's whole dense array starts in a pool's `dense` array
/// as one run, if it does (0 when the pool is the driver). Cached per
/// (driver, revisions); after structural changes, a cached run is
/// re-checked only at the positions the changes wrote (the pools' change
/// logs), so the cost follows what changed, not the size of the join.
#[inline]
pub(crate) fn whole_run_start(
    dense: &[Entity],
    sparse: &SparseIndex,
    runs: &RunInfo,
    driver: Driver<'_>,
) -> Option<usize> {
    if driver.runs.is_none() {
        // Not a pool: no identity to key a cache with.
        return run_start(dense, sparse, driver.entities, 0);
    }
    if runs.id == driver.id {
        return Some(0);
    }
    let key = RunCache {
        driver_id: driver.id,
        driver_revision: driver.revision,
        revision: runs.revision,
        start: None,
    };
    let slot = (driver.id % RUN_CACHE_SLOTS as u64) as usize;
    let cached = runs.cache.lock()[slot];
    if (cached.driver_id, cached.driver_revision, cached.revision)
        == (key.driver_id, key.driver_revision, key.revision)
    {
        return cached.start;
    }
    let start = (cached.driver_id == driver.id)
        .then(|| recheck(dense, runs, driver, &cached))
        .flatten()
        .unwrap_or_else(|| run_start(dense, sparse, driver.entities, 0));
    runs.cache.lock()[slot] = RunCache { start, ..key };
    start
}

/// Re-checks a cached whole run (`cached.start`) after structural changes
/// of the pool and the driver, at the positions they wrote only: every
/// other position holds the handle it held when the run was checked.
/// `None` when that cannot decide (no cached run, a change log that no
/// longer reaches back, or a written position that no longer matches).
fn recheck(
    dense: &[Entity],
    runs: &RunInfo,
    driver: Driver<'_>,
    cached: &RunCache,
) -> Option<Option<usize>> {
    let start = cached.start?;
    let wanted = driver.entities;
    if start + wanted.len() > dense.len() {
        return None;
    }
    let matches = |p: usize| p >= wanted.len() || dense[start + p] == wanted[p];
    let driver_changes = driver.runs?.changes_since(cached.driver_revision)?;
    let pool_changes = runs.changes_since(cached.revision)?;
    for range in driver_changes {
        let end = range.end.min(wanted.len());
        if !(range.start..end).all(matches) {
            return None;
        }
    }
    for range in pool_changes {
        let from = range.start.max(start) - start;
        let to = range.end.saturating_sub(start).min(wanted.len());
        if !(from..to).all(matches) {
            return None;
        }
    }
    Some(Some(start))
}

/// `a == b` for runs of equal length, without an early exit, so the
/// compiler compares many handles per instruction.
#[inline]
pub(crate) fn same_run(a: &[Entity], b: &[Entity]) -> bool {
    a.iter()
        .zip(b)
        .fold(true, |same, (x, y)| same & (x.to_bits() == y.to_bits()))
}

/// Queries that only read: allowed on a shared `&Registry` (`Registry::view`).
///
/// Sealed: implemented by this crate for `&T`, [`Entity`], `Option<Q>` and
/// tuples of read-only queries, never for a term that takes a write lock.
/// The registry's unsafe code trusts this: `Registry::view(&self)` may run
/// while `Registry::get(&self)` reads the same pool without its lock, which
/// is sound only because a read-only query never writes.
///
/// ```compile_fail
/// // An outside crate cannot declare `&mut T` read-only.
/// struct Mine(u32);
/// impl ecs_engine::ReadOnlyQueryData for &mut Mine {}
/// ```
pub trait ReadOnlyQueryData: QueryData + sealed::SealedReadOnly {
    /// The cursor of a borrow reached through a shared reference: sound
    /// for read-only terms only, which is what lets read-only views
    /// iterate and `get` through `&self`.
    #[doc(hidden)]
    fn shared_cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a>;
}

impl<T: Component> sealed::SealedQueryData for &T {}

impl<T: Component> QueryData for &T {
    type Item<'a> = &'a T;
    type Borrow<'w> = Option<MappedRwLockReadGuard<'w, SparseSet<T>>>;
    type Cursor<'a> = Option<&'a SparseSet<T>>;
    type Block<'a> = &'a [T];
    type Run = Option<usize>;
    const DRIVES: bool = true;

    #[inline]
    fn contains(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
        cursor.is_some_and(|pool| pool.dense_index_hinted(entity, hint).is_some())
    }

    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
        registry.read::<T>()
    }

    #[inline]
    fn cursor<'a>(borrow: &'a mut Self::Borrow<'_>) -> Self::Cursor<'a> {
        borrow.as_deref()
    }

    #[inline]
    fn driver<'a>(cursor: Self::Cursor<'a>) -> Option<Driver<'a>> {
        Some(cursor.map_or(Driver::EMPTY, |pool| {
            Driver::of(pool.entities(), pool.lookup_parts().1)
        }))
    }

    #[inline]
    unsafe fn fetch<'a>(
        cursor: Self::Cursor<'a>,
        entity: Entity,
        hint: usize,
    ) -> Option<Self::Item<'a>> {
        let pool = cursor?;
        let i = pool.dense_index_hinted(entity, hint)?;
        Some(&pool.components()[i])
    }

    fn run(cursor: Self::Cursor<'_>, driver: Driver<'_>) -> Self::Run {
        let pool = cursor?;
        let (sparse, runs) = pool.lookup_parts();
        whole_run_start(pool.entities(), sparse, runs, driver)
    }

    #[inline]
    fn block<'a>(
        cursor: Self::Cursor<'a>,
        run: Self::Run,
        driver: Driver<'a>,
        range: Range<usize>,
    ) -> Option<Self::Block<'a>> {
        let pool = cursor?;
        let len = range.len();
        let (sparse, _) = pool.lookup_parts();
        let start = block_start(pool.entities(), sparse, run, driver, range)?;
        pool.components().get(start..start + len)
    }

    #[inline]
    unsafe fn fetch_block<'a>(block: Self::Block<'a>, k: usize) -> Self::Item<'a> {
        // SAFETY: `k` is within the block (the caller's contract).
        unsafe { block.get_unchecked(k) }
    }

    fn access(out: &mut dyn FnMut(ComponentAccess)) {
        out(ComponentAccess::of::<T>(Access::Read));
    }
}

impl<T: Component> sealed::SealedReadOnly for &T {}
impl<T: Component> ReadOnlyQueryData for &T {
    #[inline]
    fn shared_cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {
        borrow.as_deref()
    }
}

/// The lookup parts of a write-locked pool and a raw pointer to its
/// components, so a view can hand out `&mut T` for many entities at once.
#[doc(hidden)]
pub struct MutCursor<'a, T> {
    dense: &'a [Entity],
    sparse: &'a SparseIndex,
    runs: &'a RunInfo,
    data: *mut T,
    /// The pool's changed ticks (null when untracked), and the tick to
    /// stamp on every fetch (`change.rs`).
    ticks: *mut u32,
    now: u32,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> MutCursor<'a, T> {
    /// The cursor of a write-locked pool.
    pub(crate) fn of(pool: &'a mut SparseSet<T>) -> Self {
        let (ticks, now) = pool.changed_ptr();
        let (dense, sparse, runs, data) = pool.parts_mut();
        MutCursor {
            dense,
            sparse,
            runs,
            data,
            ticks,
            now,
            _borrow: PhantomData,
        }
    }

    /// Its parts: dense entities, sparse index, components, changed ticks
    /// (null when untracked) and the current tick.
    pub(crate) fn parts(self) -> (&'a [Entity], &'a SparseIndex, *mut T, *mut u32, u32) {
        (self.dense, self.sparse, self.data, self.ticks, self.now)
    }

    /// The same cursor, marking nothing changed (`Untracked<T>`).
    pub(crate) fn untracked(self) -> Self {
        MutCursor {
            ticks: std::ptr::null_mut(),
            ..self
        }
    }
}

impl<T> Clone for MutCursor<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for MutCursor<'_, T> {}

impl<T> std::fmt::Debug for MutCursor<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MutCursor")
            .field("len", &self.dense.len())
            .finish()
    }
}

// SAFETY: a `MutCursor` stands for `&'a mut [T]` (and its `&'a mut [u32]`
// of ticks) split by entity; sharing it across threads lets each thread
// build `&mut T` and store ticks for distinct entities only (the
// `QueryData::fetch` contract), which is sound when `T: Send + Sync`.
unsafe impl<T: Send + Sync> Send for MutCursor<'_, T> {}
// SAFETY: see the `Send` impl above.
unsafe impl<T: Send + Sync> Sync for MutCursor<'_, T> {}

impl<T: Component> sealed::SealedQueryData for &mut T {}

impl<T: Component> QueryData for &mut T {
    type Item<'a> = &'a mut T;
    type Borrow<'w> = Option<MappedRwLockWriteGuard<'w, SparseSet<T>>>;
    type Cursor<'a> = Option<MutCursor<'a, T>>;
    type Block<'a> = (*mut T, *mut u32, u32);
    type Run = Option<usize>;
    const DRIVES: bool = true;
    const MARKS: bool = true;

    #[inline]
    fn contains(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
        cursor.is_some_and(|c| SparseSet::<T>::locate(c.dense, c.sparse, entity, hint).is_some())
    }

    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
        registry.write::<T>()
    }

    #[inline]
    fn cursor<'a>(borrow: &'a mut Self::Borrow<'_>) -> Self::Cursor<'a> {
        Some(MutCursor::of(borrow.as_deref_mut()?))
    }

    #[inline]
    fn driver<'a>(cursor: Self::Cursor<'a>) -> Option<Driver<'a>> {
        Some(cursor.map_or(Driver::EMPTY, |c| Driver::of(c.dense, c.runs)))
    }

    #[inline]
    unsafe fn fetch<'a>(
        cursor: Self::Cursor<'a>,
        entity: Entity,
        hint: usize,
    ) -> Option<Self::Item<'a>> {
        let c = cursor?;
        let i = SparseSet::<T>::locate(c.dense, c.sparse, entity, hint)?;
        // SAFETY: `i < dense.len() == data.len()` (the sparse set's
        // invariant), `data` comes from the write-locked pool borrowed for
        // `'a`, and the caller fetches each entity (so each `i`) at most once
        // while its item lives, so no two `&mut T` alias; the ticks array
        // (when there is one) has the same length, and its position `i`
        // belongs to this fetch alike.
        unsafe {
            crate::change::mark(c.ticks, i, c.now);
            Some(&mut *c.data.add(i))
        }
    }

    fn run(cursor: Self::Cursor<'_>, driver: Driver<'_>) -> Self::Run {
        let c = cursor?;
        whole_run_start(c.dense, c.sparse, c.runs, driver)
    }

    #[inline]
    fn block<'a>(
        cursor: Self::Cursor<'a>,
        run: Self::Run,
        driver: Driver<'a>,
        range: Range<usize>,
    ) -> Option<Self::Block<'a>> {
        let c = cursor?;
        let start = block_start(c.dense, c.sparse, run, driver, range)?;
        // SAFETY: `block_start` checked `start + len <= dense.len()`, which
        // equals the component count and the tick count, so the offsets
        // stay in their buffers.
        unsafe {
            let ticks = if c.ticks.is_null() {
                c.ticks
            } else {
                c.ticks.add(start)
            };
            Some((c.data.add(start), ticks, c.now))
        }
    }

    #[inline]
    unsafe fn fetch_block<'a>(block: Self::Block<'a>, k: usize) -> Self::Item<'a> {
        // SAFETY: `k` is within the block, whose components belong to the
        // pool write-locked for `'a`; each `k` is fetched once while its
        // item lives (the caller's contract), so no two `&mut T` alias;
        // the same holds for the block's ticks, when it has them.
        unsafe {
            crate::change::mark(block.1, k, block.2);
            &mut *block.0.add(k)
        }
    }

    fn access(out: &mut dyn FnMut(ComponentAccess)) {
        out(ComponentAccess::of::<T>(Access::Write));
    }
}

impl<Q: QueryData> sealed::SealedQueryData for Option<Q> {}

impl<Q: QueryData> QueryData for Option<Q> {
    type Item<'a> = Option<Q::Item<'a>>;
    type Borrow<'w> = Q::Borrow<'w>;
    type Cursor<'a> = Q::Cursor<'a>;
    type Block<'a> = Q::Block<'a>;
    type Run = Q::Run;
    const DRIVES: bool = false;
    const MARKS: bool = Q::MARKS;

    #[inline]
    fn contains(_: Self::Cursor<'_>, _: Entity, _: usize) -> bool {
        true
    }

    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
        Q::borrow(registry)
    }

    #[inline]
    fn cursor<'a>(borrow: &'a mut Self::Borrow<'_>) -> Self::Cursor<'a> {
        Q::cursor(borrow)
    }

    #[inline]
    fn driver<'a>(_: Self::Cursor<'a>) -> Option<Driver<'a>> {
        None
    }

    #[inline]
    unsafe fn fetch<'a>(
        cursor: Self::Cursor<'a>,
        entity: Entity,
        hint: usize,
    ) -> Option<Self::Item<'a>> {
        // SAFETY: forwarded contract.
        Some(unsafe { Q::fetch(cursor, entity, hint) })
    }

    fn run(cursor: Self::Cursor<'_>, driver: Driver<'_>) -> Self::Run {
        Q::run(cursor, driver)
    }

    #[inline]
    fn block<'a>(
        cursor: Self::Cursor<'a>,
        run: Self::Run,
        driver: Driver<'a>,
        range: Range<usize>,
    ) -> Option<Self::Block<'a>> {
        Q::block(cursor, run, driver, range)
    }

    #[inline]
    unsafe fn fetch_block<'a>(block: Self::Block<'a>, k: usize) -> Self::Item<'a> {
        // SAFETY: forwarded contract; a block holds every entity of its run.
        Some(unsafe { Q::fetch_block(block, k) })
    }

    fn access(out: &mut dyn FnMut(ComponentAccess)) {
        Q::access(out);
    }
}

impl<Q: ReadOnlyQueryData> sealed::SealedReadOnly for Option<Q> {}
impl<Q: ReadOnlyQueryData> ReadOnlyQueryData for Option<Q> {
    #[inline]
    fn shared_cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {
        Q::shared_cursor(borrow)
    }
}

impl sealed::SealedQueryData for Entity {}

impl QueryData for Entity {
    type Item<'a> = Entity;
    type Borrow<'w> = ();
    type Cursor<'a> = ();
    type Block<'a> = &'a [Entity];
    type Run = ();
    const DRIVES: bool = false;

    #[inline]
    fn contains(_: (), _: Entity, _: usize) -> bool {
        true
    }

    fn borrow(_: Locked<'_>) -> Result<(), EcsError> {
        Ok(())
    }

    #[inline]
    fn cursor<'a>(_: &'a mut Self::Borrow<'_>) -> Self::Cursor<'a> {}

    #[inline]
    fn driver<'a>(_: ()) -> Option<Driver<'a>> {
        None
    }

    #[inline]
    unsafe fn fetch<'a>(_: Self::Cursor<'a>, entity: Entity, _: usize) -> Option<Self::Item<'a>> {
        Some(entity)
    }

    fn run(_: Self::Cursor<'_>, _: Driver<'_>) -> Self::Run {}

    #[inline]
    fn block<'a>(
        _: Self::Cursor<'a>,
        _: Self::Run,
        driver: Driver<'a>,
        range: Range<usize>,
    ) -> Option<Self::Block<'a>> {
        driver.entities.get(range)
    }

    #[inline]
    unsafe fn fetch_block<'a>(block: Self::Block<'a>, k: usize) -> Self::Item<'a> {
        // SAFETY: `k` is within the block (the caller's contract).
        unsafe { *block.get_unchecked(k) }
    }

    fn access(_: &mut dyn FnMut(ComponentAccess)) {}
}

impl sealed::SealedReadOnly for Entity {}
impl ReadOnlyQueryData for Entity {
    #[inline]
    fn shared_cursor<'a>(_: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {}
}

/// `true` when `Q` does not mark on fetch, or holds `entity`: a tuple
/// with two marking terms checks them all before fetching either.
#[inline(always)]
fn marking_term_present<Q: QueryData>(cursor: Q::Cursor<'_>, entity: Entity, hint: usize) -> bool {
    !Q::MARKS || Q::contains(cursor, entity, hint)
}

macro_rules! query_tuple {
    ($($name:ident $index:tt),+) => {
        impl<$($name: QueryData),+> sealed::SealedQueryData for ($($name,)+) {}

        impl<$($name: QueryData),+> QueryData for ($($name,)+) {
            type Item<'a> = ($($name::Item<'a>,)+);
            type Borrow<'w> = ($($name::Borrow<'w>,)+);
            type Cursor<'a> = ($($name::Cursor<'a>,)+);
            type Block<'a> = ($($name::Block<'a>,)+);
            type Run = ($($name::Run,)+);
            const DRIVES: bool = $($name::DRIVES)||+;
            const MARKS: bool = $($name::MARKS)||+;

            #[inline]
            fn contains(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
                $($name::contains(cursor.$index, entity, hint))&&+
            }

            fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
                Ok(($($name::borrow(registry)?,)+))
            }

            #[inline]
            fn cursor<'a>(borrow: &'a mut Self::Borrow<'_>) -> Self::Cursor<'a> {
                ($($name::cursor(&mut borrow.$index),)+)
            }

            #[inline]
            fn driver<'a>(cursor: Self::Cursor<'a>) -> Option<Driver<'a>> {
                let mut best: Option<Driver<'a>> = None;
                $(
                    if let Some(d) = $name::driver(cursor.$index) {
                        if best.is_none_or(|b| d.entities.len() < b.entities.len()) {
                            best = Some(d);
                        }
                    }
                )+
                best
            }

            #[inline(always)]
            unsafe fn fetch<'a>(
                cursor: Self::Cursor<'a>,
                entity: Entity,
                hint: usize,
            ) -> Option<Self::Item<'a>> {
                // A term that marks (`&mut T`) must not mark an entity
                // another term turns away: the other terms are fetched
                // first (no side effect), and with two terms that mark,
                // both are checked before either is fetched.
                let marking = 0 $(+ usize::from($name::MARKS))+;
                let first = ($(
                    if $name::MARKS {
                        None
                    } else {
                        // SAFETY: forwarded contract; each term has its own
                        // pool.
                        Some(unsafe { $name::fetch(cursor.$index, entity, hint) }?)
                    },
                )+);
                if marking > 1 && !($(marking_term_present::<$name>(cursor.$index, entity, hint))&&+) {
                    return None;
                }
                Some(($(
                    match first.$index {
                        Some(item) => item,
                        // SAFETY: as above.
                        None => unsafe { $name::fetch(cursor.$index, entity, hint) }?,
                    },
                )+))
            }

            fn run(cursor: Self::Cursor<'_>, driver: Driver<'_>) -> Self::Run {
                ($($name::run(cursor.$index, driver),)+)
            }

            #[inline]
            fn block<'a>(
                cursor: Self::Cursor<'a>,
                run: Self::Run,
                driver: Driver<'a>,
                range: Range<usize>,
            ) -> Option<Self::Block<'a>> {
                Some(($($name::block(cursor.$index, run.$index, driver, range.clone())?,)+))
            }

            #[inline]
            unsafe fn fetch_block<'a>(block: Self::Block<'a>, k: usize) -> Self::Item<'a> {
                // SAFETY: forwarded contract; every term's block covers `k`.
                unsafe { ($($name::fetch_block(block.$index, k),)+) }
            }

            fn access(out: &mut dyn FnMut(ComponentAccess)) {
                $($name::access(out);)+
            }
        }

        impl<$($name: ReadOnlyQueryData),+> sealed::SealedReadOnly for ($($name,)+) {}
        impl<$($name: ReadOnlyQueryData),+> ReadOnlyQueryData for ($($name,)+) {
            #[inline]
            fn shared_cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {
                ($($name::shared_cursor(&borrow.$index),)+)
            }
        }
    };
}

query_tuple!(A 0);
query_tuple!(A 0, B 1);
query_tuple!(A 0, B 1, C 2);
query_tuple!(A 0, B 1, C 2, D 3);
query_tuple!(A 0, B 1, C 2, D 3, E 4);
query_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
query_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
query_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
query_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
query_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
query_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
query_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

/// A condition on the visited entities that yields nothing: [`With`],
/// [`Without`], [`Or`](crate::Or) (any must hold), `()` (no condition) and
/// tuples of up to 8 filters (all must hold).
///
/// A filter is a per-entity test ([`matches`](Self::matches)) over the
/// pools it borrows; it may also offer a pool to drive a view whose query
/// has no required term (`driver`, by default none). [`Or`](crate::Or) and
/// tuples combine any filters through this trait alone, so a new filter
/// composes with them unchanged.
///
/// # Examples
///
/// A tuple of three filters (a view's `.with::<C>()` and `.without::<C>()`
/// add filters the same way):
///
/// ```
/// use ecs_engine::{Registry, With, Without};
///
/// struct Position(f32);
/// struct Enemy;
/// struct Flying;
/// struct Dead;
///
/// let mut registry = Registry::new();
/// registry.spawn((Position(1.0), Enemy, Flying));
/// registry.spawn((Position(2.0), Enemy, Flying, Dead));
/// registry.spawn((Position(4.0), Enemy));
///
/// let n = registry
///     .view_filtered::<&Position, (With<Enemy>, With<Flying>, Without<Dead>)>()
///     .count();
/// assert_eq!(n, 1);
/// ```
pub trait QueryFilter: sealed::SealedQueryFilter {
    #[doc(hidden)]
    type Borrow<'w>;
    #[doc(hidden)]
    type Cursor<'a>: Copy;

    #[doc(hidden)]
    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError>;

    #[doc(hidden)]
    fn cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a>;

    #[doc(hidden)]
    fn matches(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool;

    /// A pool holding every entity the filter can accept (a superset), to
    /// drive a view whose query has no required term; `None` (the default)
    /// when the filter cannot bound its entities that way.
    #[doc(hidden)]
    #[inline]
    fn driver<'a>(cursor: Self::Cursor<'a>) -> Option<Driver<'a>> {
        let _ = cursor;
        None
    }

    /// Reports every component type the filter reads (its pool is
    /// read-locked while the view lives).
    fn access(out: &mut dyn FnMut(ComponentAccess));
}

/// QueryFilter: only entities that have component `C` (its value is not borrowed
/// for the caller, but its pool is read-locked while the view lives). A
/// query with no required term is driven by `C`'s pool.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Entity, Registry, With};
///
/// struct Player;
/// struct Name(&'static str);
///
/// let mut registry = Registry::new();
/// let hero = registry.spawn((Name("hero"), Player));
/// registry.spawn((Name("rock"),));
///
/// let players: Vec<Entity> = registry.view_filtered::<Entity, With<Player>>().iter().collect();
/// assert_eq!(players, [hero]);
/// ```
pub struct With<C>(PhantomData<fn() -> C>);

/// QueryFilter: only entities that do not have component `C` (its pool is
/// read-locked while the view lives).
///
/// # Examples
///
/// ```
/// use ecs_engine::{Registry, Without};
///
/// struct Health(i32);
/// struct Dead;
///
/// let mut registry = Registry::new();
/// registry.spawn((Health(3),));
/// registry.spawn((Health(0), Dead));
///
/// let alive: i32 = registry.view_filtered::<&Health, Without<Dead>>().iter().map(|h| h.0).sum();
/// assert_eq!(alive, 3);
/// ```
pub struct Without<C>(PhantomData<fn() -> C>);

macro_rules! presence_filter {
    ($filter:ident, $keep_if_present:expr, $drives:expr) => {
        impl<C> std::fmt::Debug for $filter<C> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}<{}>", stringify!($filter), std::any::type_name::<C>())
            }
        }

        impl<C: Component> sealed::SealedQueryFilter for $filter<C> {}

        impl<C: Component> QueryFilter for $filter<C> {
            type Borrow<'w> = Option<MappedRwLockReadGuard<'w, SparseSet<C>>>;
            type Cursor<'a> = Option<&'a SparseSet<C>>;

            fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
                registry.read::<C>()
            }

            #[inline]
            fn cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {
                borrow.as_deref()
            }

            #[inline]
            fn matches(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
                let present = cursor.is_some_and(|p| p.dense_index_hinted(entity, hint).is_some());
                present == $keep_if_present
            }

            #[inline]
            fn driver<'a>(cursor: Self::Cursor<'a>) -> Option<Driver<'a>> {
                $drives.then(|| {
                    cursor.map_or(Driver::EMPTY, |pool| {
                        Driver::of(pool.entities(), pool.lookup_parts().1)
                    })
                })
            }

            fn access(out: &mut dyn FnMut(ComponentAccess)) {
                out(ComponentAccess::of::<C>(Access::Read));
            }
        }
    };
}

presence_filter!(With, true, true);
presence_filter!(Without, false, false);

impl sealed::SealedQueryFilter for () {}

impl QueryFilter for () {
    type Borrow<'w> = ();
    type Cursor<'a> = ();

    fn borrow(_: Locked<'_>) -> Result<(), EcsError> {
        Ok(())
    }

    #[inline]
    fn cursor<'a>(_: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {}

    #[inline]
    fn matches(_: (), _: Entity, _: usize) -> bool {
        true
    }

    fn access(_: &mut dyn FnMut(ComponentAccess)) {}
}
