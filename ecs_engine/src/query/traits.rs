//! The query traits ([`QueryData`], [`ReadOnlyQueryData`],
//! [`QueryFilter`]) and the [`Driver`]: the pool a view walks, and where
//! the driver's entities sit as one run in the other pools, so blocks of a
//! join are fetched by position (cached per driver and revisions).

use std::any::TypeId;
use std::ops::Range;

use crate::storage::locked::Locked;
use crate::storage::lookup::{RUN_CACHE_SLOTS, RunCache, RunInfo, SparseIndex};
use crate::{ComponentAccess, EcsError, Entity, SparseSet};

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
    /// The same query with every borrowed lifetime `'static` (`&'static
    /// T` for `&T`): names a query type independently of the lifetimes a
    /// function signature elides (the scheduler's `ParamSet` does).
    #[doc(hidden)]
    type Static: QueryData + 'static;
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

    /// `true` when [`fetch_block`](Self::fetch_block) may store change
    /// ticks for `block` (a write term of a tracked pool). Only a hint:
    /// the walk keeps one copy of its loop for blocks where this is
    /// `false`, in which the compiler sees every tick pointer null and
    /// drops the per-entity check; `false` for a block that does store
    /// ticks costs speed, never correctness.
    #[doc(hidden)]
    #[inline]
    fn block_marks(_block: &Self::Block<'_>) -> bool {
        false
    }

    /// Reports every component type the query borrows, with its access
    /// (the scheduler derives a system's access from this).
    fn access(out: &mut dyn FnMut(ComponentAccess));

    /// Reports the components every visited entity has (`true`, a
    /// required term); see [`QueryShape`](crate::QueryShape). By default
    /// none.
    #[doc(hidden)]
    fn shape(out: &mut dyn FnMut(TypeId, bool)) {
        let _ = out;
    }
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

    pub(crate) const EMPTY: Driver<'static> = Driver {
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
    cached_run_start(dense, sparse, runs, driver)
}

/// [`whole_run_start`] for a pool that is not the driver: the cache, and
/// a check on a miss (out of line, so a pool that drives its own view
/// pays one compare).
#[inline(never)]
fn cached_run_start(
    dense: &[Entity],
    sparse: &SparseIndex,
    runs: &RunInfo,
    driver: Driver<'_>,
) -> Option<usize> {
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

/// A condition on the visited entities that yields nothing: [`With`](crate::With),
/// [`Without`](crate::Without), [`Or`](crate::Or) (any must hold), `()` (no condition) and
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

    /// `true` when the filter reads change ticks ([`Added`](crate::Added),
    /// [`Changed`](crate::Changed), or a tuple or [`Or`](crate::Or)
    /// holding one), so that its view checks which types its query writes
    /// (`Locked::claim_ticks`); a constant, so other views pay nothing.
    #[doc(hidden)]
    const READS_TICKS: bool = false;

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

    /// Reports the components every accepted entity has (`true`) or
    /// lacks (`false`); see [`QueryShape`](crate::QueryShape). By default
    /// none.
    #[doc(hidden)]
    fn shape(out: &mut dyn FnMut(TypeId, bool)) {
        let _ = out;
    }
}
