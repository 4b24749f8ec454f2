//! The change-tracking query terms: [`Ref<T>`] (`T`, read, with its change
//! state), [`Untracked<T>`] (`&mut T` that marks nothing) and
//! [`Mut<T>`] (`T`, writable, marked changed on `DerefMut`), all
//! relative to the view's `since` tick; the ticks they read are kept by
//! `change/ticks.rs`.

use std::any::TypeId;
use std::marker::PhantomData;
use std::ops::{Deref, Range};

use parking_lot::MappedRwLockWriteGuard;

use super::terms::MutCursor;
use super::traits::{Driver, QueryData, ReadOnlyQueryData, block_start, sealed};
use crate::change::ticks::{UnmarkedWrites, newer};
use crate::storage::claims::Claimed;
use crate::storage::locked::Locked;
use crate::{Access, ChangeTick, Component, ComponentAccess, EcsError, Entity, SparseSet};

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
        newer(self.added, self.since, self.now)
    }

    /// `true` when the component was added or written after the view's
    /// `since` tick (always `true` for an untracked type).
    pub fn is_changed(&self) -> bool {
        newer(self.changed, self.since, self.now)
    }

    /// The change tick the component was added at.
    pub fn added_tick(&self) -> ChangeTick {
        ChangeTick::new(self.added)
    }

    /// The change tick the component was last written at.
    pub fn changed_tick(&self) -> ChangeTick {
        ChangeTick::new(self.changed)
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
    type Static = Ref<T>;
    type Item<'a> = ComponentRef<'a, T>;
    type Borrow<'w> = (Option<Claimed<'w, T>>, u32);
    type Cursor<'a> = RefCursor<'a, T>;
    type Block<'a> = RefBlock<'a, T>;
    type Run = Option<usize>;
    const DRIVES: bool = true;

    #[inline]
    fn contains(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
        <&T as QueryData>::contains(cursor.pool, entity, hint)
    }

    #[inline]
    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
        Ok((registry.claim_opaque::<T>()?, registry.since()))
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

    #[inline]
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

    #[inline]
    fn access(out: &mut dyn FnMut(ComponentAccess)) {
        out(ComponentAccess::tracked::<T>(Access::Read));
    }

    fn shape(out: &mut dyn FnMut(TypeId, bool)) {
        out(TypeId::of::<T>(), true);
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
    type Static = Untracked<T>;
    type Item<'a> = &'a mut T;
    type Borrow<'w> = Option<Claimed<'w, T>>;
    type Cursor<'a> = Option<MutCursor<'a, T>>;
    type Block<'a> = <&'a mut T as QueryData>::Block<'a>;
    type Run = Option<usize>;
    const DRIVES: bool = true;

    #[inline]
    fn contains(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
        <&mut T as QueryData>::contains(cursor, entity, hint)
    }

    #[inline]
    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
        <&mut T as QueryData>::borrow(registry)
    }

    #[inline]
    fn cursor<'a>(borrow: &'a mut Self::Borrow<'_>) -> Self::Cursor<'a> {
        // The walk's writes leave no tick: counted once, for in-memory
        // states (`UnmarkedWrites`).
        if let Some(c) = borrow.as_deref().and_then(|pool| pool.changes.as_deref()) {
            c.unmarked.count();
        }
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

    #[inline]
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

    #[inline]
    fn access(out: &mut dyn FnMut(ComponentAccess)) {
        <&mut T as QueryData>::access(out);
    }

    fn shape(out: &mut dyn FnMut(TypeId, bool)) {
        out(TypeId::of::<T>(), true);
    }
}

// --- Mut<T> -----------------------------------------------------------

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
/// use ecs_engine::{Changed, Entity, Mut, Registry};
///
/// struct Health(u32);
///
/// let mut registry = Registry::new();
/// registry.track_changes::<Health>();
/// let a = registry.spawn((Health(5),));
/// let b = registry.spawn((Health(0),));
/// let since = registry.change_tick();
/// registry.advance_change_tick();
/// registry.view_mut::<Mut<Health>>().each(|mut h| {
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
pub struct Mut<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for Mut<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mut<{}>", std::any::type_name::<T>())
    }
}

/// The item of a [`Mut<T>`] term: `&mut T` that marks the component
/// changed on its first write (`DerefMut`), and its change state.
pub struct ComponentMut<'a, T> {
    value: &'a mut T,
    /// The component's changed tick; `None` when the type is untracked.
    tick: Option<&'a mut u32>,
    /// The pool's count of unmarked writes; `None` when untracked.
    unmarked: Option<&'a UnmarkedWrites>,
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
        newer(self.added, self.since, self.now)
    }

    /// `true` when the component was added or written after the view's
    /// `since` tick, before this item was handed out (always `true` for
    /// an untracked type).
    pub fn is_changed(&self) -> bool {
        newer(self.changed, self.since, self.now)
    }

    /// The component, writable, without marking it changed (bevy's
    /// `bypass_change_detection`).
    pub fn bypass_change_detection(&mut self) -> &mut T {
        // Readers see no change, but an in-memory state must copy the
        // pool's values again (`Registry::register_clone_delta`).
        if let Some(unmarked) = self.unmarked {
            unmarked.count();
        }
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

/// What a [`Mut`] term reads per entity (named apart from [`MutCursor`],
/// the `&mut T` cursor it wraps): the write-locked pool's parts
/// and raw pointers to its components and ticks.
#[doc(hidden)]
pub struct MutTermCursor<'a, T> {
    inner: MutCursor<'a, T>,
    added: *const u32,
    since: u32,
}

impl<T> std::fmt::Debug for MutTermCursor<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MutTermCursor").finish_non_exhaustive()
    }
}

impl<T> Clone for MutTermCursor<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for MutTermCursor<'_, T> {}

// SAFETY: as `MutCursor` (which this wraps): each thread builds items for
// distinct entities only (the `QueryData::fetch` contract); the added ticks
// are only read, and the count of unmarked writes is an atomic.
unsafe impl<T: Send + Sync> Send for MutTermCursor<'_, T> {}
// SAFETY: see the `Send` impl above.
unsafe impl<T: Send + Sync> Sync for MutTermCursor<'_, T> {}

/// A block of a [`Mut`] term: its `&mut T` block and its added ticks.
#[doc(hidden)]
#[derive(Debug)]
pub struct MutTermBlock<'a, T> {
    values: *mut T,
    changed: *mut u32,
    added: *const u32,
    unmarked: *const UnmarkedWrites,
    since: u32,
    now: u32,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> Clone for MutTermBlock<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for MutTermBlock<'_, T> {}

/// The item for raw parts at one position.
///
/// # Safety
///
/// `value` is valid for `'a` and handed out once; `changed` and `added`
/// are null (untracked) or point to that position's ticks, valid for `'a`
/// and not touched by anyone else meanwhile; `unmarked` is null or points
/// to the pool's count of unmarked writes, valid for `'a` (an atomic:
/// shared by every item).
#[inline(always)]
unsafe fn item_mut<'a, T>(
    value: *mut T,
    (changed, added, unmarked): (*mut u32, *const u32, *const UnmarkedWrites),
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
            unmarked: unmarked.as_ref(),
            added,
            changed: changed_tick,
            since,
            now,
        }
    }
}

impl<T: Component> sealed::SealedQueryData for Mut<T> {}

impl<T: Component> QueryData for Mut<T> {
    type Static = Mut<T>;
    type Item<'a> = ComponentMut<'a, T>;
    type Borrow<'w> = (Option<MappedRwLockWriteGuard<'w, SparseSet<T>>>, u32);
    type Cursor<'a> = Option<MutTermCursor<'a, T>>;
    type Block<'a> = MutTermBlock<'a, T>;
    type Run = Option<usize>;
    const DRIVES: bool = true;

    #[inline]
    fn contains(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
        <&mut T as QueryData>::contains(cursor.map(|c| c.inner), entity, hint)
    }

    #[inline]
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
        Some(MutTermCursor {
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
        // The item may be written: its block counts as written now.
        c.inner.stamp_one(i);
        // SAFETY: `i < dense.len()`, the length of the write-locked pool's
        // components and of its tick arrays (when present); each entity is
        // fetched once while its item lives (the caller's contract).
        unsafe {
            let (changed, added) = if ticks.is_null() {
                (ticks, c.added)
            } else {
                (ticks.add(i), c.added.add(i))
            };
            let unmarked = c.inner.unmarked();
            Some(item_mut(
                data.add(i),
                (changed, added, unmarked),
                c.since,
                now,
            ))
        }
    }

    #[inline]
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
        let len = range.len();
        let start = block_start(dense, sparse, run, driver, range)?;
        c.inner.stamp(start..start + len);
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
        Some(MutTermBlock {
            values,
            changed,
            added,
            unmarked: c.inner.unmarked(),
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
            item_mut(
                block.values.add(k),
                (changed, added, block.unmarked),
                block.since,
                block.now,
            )
        }
    }

    #[inline]
    fn access(out: &mut dyn FnMut(ComponentAccess)) {
        out(ComponentAccess::tracked::<T>(Access::Write));
    }

    fn shape(out: &mut dyn FnMut(TypeId, bool)) {
        out(TypeId::of::<T>(), true);
    }
}
