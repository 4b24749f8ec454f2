//! The plain query terms: `&T`, `&mut T` (through [`MutCursor`]),
//! `Option<Q>`, [`Entity`], [`Has`] (whether the entity has `T`, without
//! borrowing the value) and tuples of up to 12 terms.

use std::any::TypeId;
use std::marker::PhantomData;
use std::ops::Range;
use std::ptr::NonNull;

use parking_lot::MappedRwLockReadGuard;

use super::traits::{Driver, QueryData, ReadOnlyQueryData, block_start, sealed, whole_run_start};
use crate::change::stamps;
use crate::change::ticks::{TickParts, UnmarkedWrites};
use crate::storage::claims::Claimed;
use crate::storage::locked::Locked;
use crate::storage::lookup::{RunInfo, SparseIndex};
use crate::{Access, Component, ComponentAccess, EcsError, Entity, SparseSet};

impl<T: Component> sealed::SealedQueryData for &T {}

impl<T: Component> QueryData for &T {
    type Static = &'static T;
    type Item<'a> = &'a T;
    type Borrow<'w> = Option<Claimed<'w, T>>;
    type Cursor<'a> = Option<&'a SparseSet<T>>;
    type Block<'a> = NonNull<T>;
    type Run = Option<usize>;
    const DRIVES: bool = true;

    #[inline]
    fn contains(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
        cursor.is_some_and(|pool| pool.dense_index_hinted(entity, hint).is_some())
    }

    #[inline]
    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
        registry.claim_read::<T>()
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
        // SAFETY: `i < len` (the sparse set's invariant); the pool is
        // claimed for reading for `'a`, so any writer beside this view is
        // disjoint from it and never writes element `i` (`storage/claims.rs`);
        // the reference spans this one element only.
        Some(unsafe { &*pool.components_ptr().add(i) })
    }

    #[inline]
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
        (start + len <= pool.len()).then(|| {
            // SAFETY: in bounds (checked above) of the live buffer, whose
            // pointer is never null.
            unsafe { NonNull::new_unchecked(pool.components_ptr().add(start).cast_mut()) }
        })
    }

    #[inline]
    unsafe fn fetch_block<'a>(block: Self::Block<'a>, k: usize) -> Self::Item<'a> {
        // SAFETY: `k` is within the block (the caller's contract), whose
        // entities the view visits: as in `fetch`, no writer beside the
        // view writes them, and the reference spans one element.
        unsafe { block.add(k).as_ref() }
    }

    #[inline]
    fn access(out: &mut dyn FnMut(ComponentAccess)) {
        out(ComponentAccess::of::<T>(Access::Read));
    }

    fn shape(out: &mut dyn FnMut(TypeId, bool)) {
        out(TypeId::of::<T>(), true);
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
    /// What a fetch marks: the pool's changed ticks and block stamps, the
    /// tick to store (`change/ticks.rs`), and the count of unmarked
    /// writes that a `Mut<T>` item's `bypass_change_detection` counts.
    marks: TickParts<'a>,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> MutCursor<'a, T> {
    /// The cursor of a write-locked pool.
    pub(crate) fn of(pool: &'a mut SparseSet<T>) -> Self {
        let (dense, sparse, runs, data, marks) = pool.parts_mut();
        MutCursor {
            dense,
            sparse,
            runs,
            data,
            marks,
            _borrow: PhantomData,
        }
    }

    /// The cursor of a pool claimed for writing (`storage/claims.rs`):
    /// the values and ticks through the raw pointers taken under `&mut`.
    pub(crate) fn claimed(pool: &'a SparseSet<T>) -> Self {
        let (data, marks) = pool.raw_parts();
        let (sparse, runs) = pool.lookup_parts();
        MutCursor {
            dense: pool.entities(),
            sparse,
            runs,
            data,
            marks,
            _borrow: PhantomData,
        }
    }

    /// Its parts: dense entities, sparse index, components, changed ticks
    /// (null when untracked) and the current tick.
    pub(crate) fn parts(self) -> (&'a [Entity], &'a SparseIndex, *mut T, *mut u32, u32) {
        let marks = self.marks;
        (self.dense, self.sparse, self.data, marks.ticks, marks.now)
    }

    /// The pool's count of unmarked writes; null when untracked.
    pub(crate) fn unmarked(self) -> *const UnmarkedWrites {
        self.marks.unmarked
    }

    /// Stamps the block summary of the dense positions `range`, which
    /// this cursor's fetches may write (`change/stamps.rs`; nothing when
    /// the cursor marks nothing).
    #[inline]
    pub(crate) fn stamp(self, range: Range<usize>) {
        self.marks.stamps.stamp_range(range, self.marks.now);
    }

    /// [`stamp`](Self::stamp) for the one position `i`.
    #[inline]
    pub(crate) fn stamp_one(self, i: usize) {
        self.marks.stamps.stamp(i, self.marks.now);
    }

    /// The same cursor, marking nothing changed (`Untracked<T>`).
    pub(crate) fn untracked(self) -> Self {
        MutCursor {
            marks: TickParts {
                ticks: std::ptr::null_mut(),
                stamps: &stamps::NO_STAMPS,
                ..self.marks
            },
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
    type Static = &'static mut T;
    type Item<'a> = &'a mut T;
    type Borrow<'w> = Option<Claimed<'w, T>>;
    type Cursor<'a> = Option<MutCursor<'a, T>>;
    type Block<'a> = (*mut T, *mut u32, u32);
    type Run = Option<usize>;
    const DRIVES: bool = true;
    const MARKS: bool = true;

    #[inline]
    fn contains(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
        cursor.is_some_and(|c| SparseSet::<T>::locate(c.dense, c.sparse, entity, hint).is_some())
    }

    #[inline]
    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
        registry.claim_write::<T>()
    }

    #[inline]
    fn cursor<'a>(borrow: &'a mut Self::Borrow<'_>) -> Self::Cursor<'a> {
        Some(MutCursor::claimed(borrow.as_deref()?))
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
        c.stamp_one(i);
        // SAFETY: `i < dense.len() == data.len()` (the sparse set's
        // invariant), `data` comes from the pool claimed for writing for
        // `'a` (any other claim on it is disjoint: its views never reach
        // entry `i`, `storage/claims.rs`), and the caller fetches each
        // entity (so each `i`) at most once while its item lives, so no
        // two `&mut T` alias; the ticks array (when there is one) has the
        // same length, and its position `i` belongs to this fetch alike.
        unsafe {
            crate::change::ticks::mark(c.marks.ticks, i, c.marks.now);
            Some(&mut *c.data.add(i))
        }
    }

    #[inline]
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
        let len = range.len();
        let start = block_start(c.dense, c.sparse, run, driver, range)?;
        c.stamp(start..start + len);
        // SAFETY: `block_start` checked `start + len <= dense.len()`, which
        // equals the component count and the tick count, so the offsets
        // stay in their buffers.
        unsafe {
            let ticks = if c.marks.ticks.is_null() {
                c.marks.ticks
            } else {
                c.marks.ticks.add(start)
            };
            Some((c.data.add(start), ticks, c.marks.now))
        }
    }

    #[inline]
    unsafe fn fetch_block<'a>(block: Self::Block<'a>, k: usize) -> Self::Item<'a> {
        // SAFETY: `k` is within the block, whose components belong to the
        // pool claimed for writing for `'a` (as in `fetch`); each `k` is fetched once while its
        // item lives (the caller's contract), so no two `&mut T` alias;
        // the same holds for the block's ticks, when it has them.
        unsafe {
            crate::change::ticks::mark(block.1, k, block.2);
            &mut *block.0.add(k)
        }
    }

    #[inline]
    fn block_marks(block: &Self::Block<'_>) -> bool {
        !block.1.is_null()
    }

    #[inline]
    fn access(out: &mut dyn FnMut(ComponentAccess)) {
        out(ComponentAccess::of::<T>(Access::Write));
    }

    fn shape(out: &mut dyn FnMut(TypeId, bool)) {
        out(TypeId::of::<T>(), true);
    }
}

impl<Q: QueryData> sealed::SealedQueryData for Option<Q> {}

impl<Q: QueryData> QueryData for Option<Q> {
    type Static = Option<Q::Static>;
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

    #[inline]
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

    #[inline]
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

    #[inline]
    fn block_marks(block: &Self::Block<'_>) -> bool {
        Q::block_marks(block)
    }

    #[inline]
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
    type Static = Entity;
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

    #[inline]
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

    #[inline]
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

    #[inline]
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
            type Static = ($($name::Static,)+);
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

            #[inline]
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

            #[inline]
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

            #[inline]
            fn block_marks(block: &Self::Block<'_>) -> bool {
                $($name::block_marks(&block.$index))||+
            }

            #[inline]
            fn access(out: &mut dyn FnMut(ComponentAccess)) {
                $($name::access(out);)+
            }

            fn shape(out: &mut dyn FnMut(TypeId, bool)) {
                $($name::shape(out);)+
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

/// Query term: `true` when the entity has component `T`, `false` when
/// not; never restricts the entities visited and never hands out the
/// value.
///
/// # Borrows
///
/// `T`'s pool is read-locked while the view lives (membership is read
/// from the pool's sparse index, which its lock guards), so a system
/// query with `Has<T>` declares a *read* of `T`, like [`With<T>`](crate::With):
/// it is ordered against systems that write `T`, and a view that also
/// has `&mut T` is refused (a borrow conflict).
///
/// # Examples
///
/// ```
/// use ecs_engine::{Has, Registry};
///
/// struct Health(i32);
/// struct Shield;
///
/// let mut registry = Registry::new();
/// registry.spawn((Health(10), Shield));
/// registry.spawn((Health(10),));
///
/// registry.view_mut::<(&mut Health, Has<Shield>)>().each(|(health, shielded)| {
///     health.0 -= if shielded { 1 } else { 5 };
/// });
/// let mut left: Vec<i32> = registry.view::<&Health>().iter().map(|h| h.0).collect();
/// left.sort();
/// assert_eq!(left, [5, 9]);
/// ```
pub struct Has<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for Has<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Has<{}>", std::any::type_name::<T>())
    }
}

/// The block of a [`Has`] term: the pool and the driver's entities of the
/// block, from dense position `start` on.
#[doc(hidden)]
#[derive(Debug)]
pub struct HasBlock<'a, T> {
    pool: Option<&'a SparseSet<T>>,
    entities: &'a [Entity],
    start: usize,
}

impl<T> Clone for HasBlock<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for HasBlock<'_, T> {}

impl<T: Component> sealed::SealedQueryData for Has<T> {}

impl<T: Component> QueryData for Has<T> {
    type Static = Has<T>;
    type Item<'a> = bool;
    type Borrow<'w> = Option<MappedRwLockReadGuard<'w, SparseSet<T>>>;
    type Cursor<'a> = Option<&'a SparseSet<T>>;
    type Block<'a> = HasBlock<'a, T>;
    type Run = ();
    const DRIVES: bool = false;

    #[inline]
    fn contains(_: Self::Cursor<'_>, _: Entity, _: usize) -> bool {
        true
    }

    #[inline]
    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
        registry.read::<T>()
    }

    #[inline]
    fn cursor<'a>(borrow: &'a mut Self::Borrow<'_>) -> Self::Cursor<'a> {
        borrow.as_deref()
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
        Some(cursor.is_some_and(|pool| pool.dense_index_hinted(entity, hint).is_some()))
    }

    #[inline]
    fn run(_: Self::Cursor<'_>, _: Driver<'_>) -> Self::Run {}

    #[inline]
    fn block<'a>(
        cursor: Self::Cursor<'a>,
        _: Self::Run,
        driver: Driver<'a>,
        range: Range<usize>,
    ) -> Option<Self::Block<'a>> {
        Some(HasBlock {
            pool: cursor,
            start: range.start,
            entities: driver.entities.get(range)?,
        })
    }

    #[inline]
    unsafe fn fetch_block<'a>(block: Self::Block<'a>, k: usize) -> Self::Item<'a> {
        // SAFETY: `k` is within the block (the caller's contract).
        let entity = unsafe { *block.entities.get_unchecked(k) };
        block
            .pool
            .is_some_and(|pool| pool.dense_index_hinted(entity, block.start + k).is_some())
    }

    #[inline]
    fn access(out: &mut dyn FnMut(ComponentAccess)) {
        out(ComponentAccess::of::<T>(Access::Read));
    }
}

impl<T: Component> sealed::SealedReadOnly for Has<T> {}

impl<T: Component> ReadOnlyQueryData for Has<T> {
    #[inline]
    fn shared_cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {
        borrow.as_deref()
    }
}
