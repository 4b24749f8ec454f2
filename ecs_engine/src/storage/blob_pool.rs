//! The pool of a run-time component: a sparse set of untyped values.
//!
//! Same layout and invariants as [`SparseSet`](crate::SparseSet), for every
//! `i < len`:
//! - `dense[i]` is the entity whose value sits at `column[i]`;
//! - `sparse[dense[i].index()] == i`;
//! - every other sparse slot is empty.
//!
//! The column is one allocation with the component's alignment, holding
//! `cap` values `stride` bytes apart (`stride` is the size rounded up to the
//! alignment); it grows by doubling, or by one value when the allocator
//! refuses the doubled size, and an insert the allocator cannot make room
//! for is refused (the pool unchanged) rather than aborting. A zero-size component allocates no
//! column: its values all live at one dangling, aligned address.
//!
//! Values are moved by copying `size` bytes (swap-and-pop on removal) and
//! dropped by calling the component's destructor exactly once, with an
//! aligned pointer: on remove, replace, despawn, clear and when the pool
//! drops. Every byte copy goes through `copy_nonoverlapping` (an untyped
//! copy), so padding bytes of C values may stay uninitialised.

use std::alloc::{self, Layout};
use std::ptr::{self, NonNull};

use crate::change::ticks::{self, ChangeTicks};
use crate::panic::FirstPanic;
use crate::storage::lookup::{RunInfo, SparseIndex};
use crate::{DropFn, Entity, SparseSet};

/// The bytes of a pool's values.
struct Column {
    /// Start of the allocation; dangling (aligned) while `cap == 0` and
    /// for a zero-size component.
    data: NonNull<u8>,
    /// Values the allocation holds (`usize::MAX` for a zero-size component).
    cap: usize,
    /// One value's layout.
    item: Layout,
    /// Bytes from one value to the next.
    stride: usize,
}

/// An aligned, non-null pointer with no provenance, for zero-size values
/// and empty columns.
fn dangling(align: usize) -> NonNull<u8> {
    NonNull::new(ptr::without_provenance_mut(align)).expect("alignment is non-zero")
}

impl Column {
    fn new(item: Layout) -> Self {
        let stride = item.pad_to_align().size();
        Column {
            data: dangling(item.align()),
            cap: if stride == 0 { usize::MAX } else { 0 },
            item,
            stride,
        }
    }

    /// The layout of an allocation of `cap` values, or `None` when it
    /// would exceed `isize::MAX` bytes.
    fn array(&self, cap: usize) -> Option<Layout> {
        self.stride
            .checked_mul(cap)
            .and_then(|size| Layout::from_size_align(size, self.item.align()).ok())
    }

    /// Address of value `i` (in bounds when `i < cap`).
    #[inline]
    fn at(&self, i: usize) -> *mut u8 {
        self.data.as_ptr().wrapping_add(i * self.stride)
    }

    /// Makes room for value number `len` (0-based; `len <= cap`): doubles
    /// the capacity (from 4 values, or 1 for values over 1 KiB, as `Vec`
    /// does), or, when the allocator refuses that, grows by one value.
    /// Nothing changes when both are refused: the error is the size in
    /// bytes of the last allocation asked for.
    fn try_reserve_one(&mut self, len: usize) -> Result<(), usize> {
        if len < self.cap {
            return Ok(());
        }
        let first = if self.stride > 1024 { 1 } else { 4 };
        let doubled = self.cap.saturating_mul(2).max(first);
        let exact = self.cap.saturating_add(1);
        match self.try_grow_to(doubled) {
            Err(_) if exact < doubled => self.try_grow_to(exact),
            result => result,
        }
    }

    /// Reallocates the column to hold `new_cap > cap` values; on failure
    /// keeps it as it was and returns the bytes asked for.
    fn try_grow_to(&mut self, new_cap: usize) -> Result<(), usize> {
        let new_layout = self
            .array(new_cap)
            .ok_or(self.stride.saturating_mul(new_cap))?;
        let data = if self.cap == 0 {
            // SAFETY: `new_layout` has a non-zero size (stride > 0 here,
            // since a zero-size column's capacity is unbounded).
            unsafe { alloc::alloc(new_layout) }
        } else {
            let old = self.array(self.cap).expect("allocated with this layout");
            // SAFETY: `data` was allocated with `old`, and the new size is
            // non-zero and fits `isize` (checked by `Layout::from_size_align`).
            unsafe { alloc::realloc(self.data.as_ptr(), old, new_layout.size()) }
        };
        // A null pointer: the allocator refused, and (for `realloc`) the
        // old allocation is untouched.
        self.data = NonNull::new(data).ok_or(new_layout.size())?;
        self.cap = new_cap;
        Ok(())
    }

    /// A column holding a byte copy of the first `len` values (`len <=
    /// cap`), with room for exactly `len`; `None` when the allocator
    /// refuses.
    fn copy_prefix(&self, len: usize) -> Option<Column> {
        let mut copy = Column::new(self.item);
        if self.stride == 0 || len == 0 {
            return Some(copy);
        }
        copy.try_grow_to(len).ok()?;
        // SAFETY: `self` holds `len <= cap` values in `len * stride`
        // readable bytes from `data` (initialised or padding: an untyped
        // copy reads either); `copy` was just allocated with room for
        // `len` values of the same stride, and two allocations never
        // overlap.
        unsafe { ptr::copy_nonoverlapping(self.at(0), copy.at(0), len * self.stride) };
        Some(copy)
    }

    fn heap_bytes(&self) -> usize {
        if self.stride == 0 {
            0
        } else {
            self.cap * self.stride
        }
    }
}

impl Drop for Column {
    fn drop(&mut self) {
        if self.stride != 0 && self.cap != 0 {
            let layout = self.array(self.cap).expect("allocated with this layout");
            // SAFETY: allocated with this layout by `try_grow_to`.
            unsafe { alloc::dealloc(self.data.as_ptr(), layout) }
        }
    }
}

/// Copies `len` bytes from `src` to `dst` when dropped, so a move finishes
/// even if a destructor called before it unwinds.
struct CopyOnDrop {
    src: *const u8,
    dst: *mut u8,
    len: usize,
}

impl Drop for CopyOnDrop {
    fn drop(&mut self) {
        // SAFETY: whoever builds a `CopyOnDrop` checks that `src` is
        // readable and `dst` writable for `len` bytes, and that they do not
        // overlap.
        unsafe { ptr::copy_nonoverlapping(self.src, self.dst, self.len) }
    }
}

/// Why [`BlobPool::insert`] refused a value (nothing was read from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The slot of the entity's index is held by this other handle.
    Held(Entity),
    /// The allocator refused an allocation of `bytes` bytes.
    NoMemory {
        /// The size asked for.
        bytes: usize,
    },
}

/// The values of one run-time component, packed densely, with O(1) lookup
/// by entity. See the module docs for the invariants.
pub(crate) struct BlobPool {
    sparse: SparseIndex,
    dense: Vec<Entity>,
    column: Column,
    drop: Option<DropFn>,
    /// Identity, revision and run cache, for raw views (as in `SparseSet`).
    runs: RunInfo,
    /// The added and changed ticks and the removal log, once tracked
    /// (`Registry::track_changes_raw`); kept by the same hooks as a typed
    /// pool's (`change/ticks.rs`). The block stamps and `written` marks
    /// are kept but unread: a blob pool is always copied whole.
    changes: Option<Box<ChangeTicks>>,
    /// The changed ticks' buffer, taken through `&mut` by
    /// [`refresh_raw`](Self::refresh_raw) (whenever the registry is
    /// borrowed exclusively, as a typed pool's `RawParts`), so that a raw
    /// view's write terms mark through it under a shared borrow; null
    /// when untracked.
    raw_changed: *mut u32,
}

// SAFETY: the pool owns its column like a `Vec<u8>` owns its buffer; the
// values in it are only inserted through `Registry::insert_raw` (or a
// `RawComponent`), whose callers promise they may be sent to and shared
// between threads, and the destructor is `Send + Sync`.
unsafe impl Send for BlobPool {}
// SAFETY: as above; `&BlobPool` gives no interior mutability of its own
// (writes through the column's and the changed ticks' raw pointers are
// governed by the pool's lock; `raw_changed` points into the pool's own
// tick buffer, like the column pointer).
unsafe impl Sync for BlobPool {}

impl std::fmt::Debug for BlobPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlobPool")
            .field("len", &self.dense.len())
            .field("layout", &self.column.item)
            .finish()
    }
}

impl BlobPool {
    pub(crate) fn new(item: Layout, drop: Option<DropFn>) -> Self {
        BlobPool {
            sparse: SparseIndex::default(),
            dense: Vec::new(),
            column: Column::new(item),
            drop,
            runs: RunInfo::default(),
            changes: None,
            raw_changed: ptr::null_mut(),
        }
    }

    /// Starts keeping change ticks, every value stamped `now`; `false`
    /// (nothing done) when the pool keeps them already.
    pub(crate) fn start_tracking(&mut self, now: u32) -> bool {
        if self.changes.is_some() {
            return false;
        }
        self.changes = Some(Box::new(ChangeTicks::new(self.dense.len(), now)));
        true
    }

    /// `true` when the pool keeps change ticks.
    #[inline]
    pub(crate) fn is_tracking(&self) -> bool {
        self.changes.is_some()
    }

    /// The change ticks, when tracked.
    #[inline]
    pub(crate) fn changes(&self) -> Option<&ChangeTicks> {
        self.changes.as_deref()
    }

    /// Takes the changed ticks' buffer pointer through `&mut`, for
    /// [`marks`](Self::marks).
    pub(crate) fn refresh_raw(&mut self) {
        self.raw_changed = match &mut self.changes {
            Some(c) => c.changed.as_mut_ptr(),
            None => ptr::null_mut(),
        };
    }

    /// What a write term marks: the changed ticks (null when untracked),
    /// written only under the pool's write lock (or by the one thread
    /// that holds the declared write access), and the tick to store.
    ///
    /// # Panics
    ///
    /// When the buffer moved since the last [`refresh_raw`](Self::refresh_raw)
    /// (a broken invariant: the refresh runs whenever the registry is
    /// borrowed exclusively, and structure cannot change meanwhile).
    pub(crate) fn marks(&self) -> (*mut u32, u32) {
        match &self.changes {
            Some(c) => {
                assert!(
                    ptr::eq(self.raw_changed, c.changed.as_ptr()),
                    "a pool's buffers moved while a view held them"
                );
                (self.raw_changed, c.now)
            }
            None => (ptr::null_mut(), 0),
        }
    }

    /// The added and changed ticks' buffers (dense order), for filters;
    /// `None` when untracked. Read through these pointers only (a write
    /// term may mark the changed ticks meanwhile, through its own).
    pub(crate) fn tick_ptrs(&self) -> Option<(*const u32, *const u32)> {
        let c = self.changes.as_deref()?;
        Some((c.added.as_ptr(), self.marks().0.cast_const()))
    }

    /// The change ticks, mutable, when tracked.
    #[inline]
    pub(crate) fn changes_mut(&mut self) -> Option<&mut ChangeTicks> {
        self.changes.as_deref_mut()
    }

    /// Empties the pool without logging removals (the tick arrays
    /// emptied, the removal log kept): a restore to a state saved before
    /// the pool had any value.
    pub(crate) fn reset(&mut self) {
        let changes = self.changes.take();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.clear()));
        self.changes = crate::storage::erased::emptied(changes);
        if let Err(payload) = result {
            std::panic::resume_unwind(payload);
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.dense.len()
    }

    /// The owners, in dense order.
    #[inline]
    pub(crate) fn entities(&self) -> &[Entity] {
        &self.dense
    }

    /// Reorders the pool: position `i` takes the entity and value that
    /// position `order[i]` held (`order`, a permutation of `0..len`, is
    /// left as the identity). Values are swapped byte-wise, never dropped;
    /// the sparse index is rebuilt and the change logged as a clear.
    pub(crate) fn apply_order(&mut self, order: &mut [u32]) {
        debug_assert_eq!(order.len(), self.dense.len());
        let size = self.column.item.size();
        crate::sort::apply_order(order, |a, b| {
            self.dense.swap(a, b);
            ticks::ticks_swapped(&mut self.changes, a, b);
            // SAFETY: `a != b` (a cycle step never swaps a position with
            // itself) and both are below `len`, so the two values are live,
            // in the column's allocation, and `size` bytes apart at least
            // (the stride; for a zero-sized type nothing is touched): the
            // ranges do not overlap. Swapping bytes moves
            // the values without running any code.
            unsafe {
                std::ptr::swap_nonoverlapping(self.column.at(a), self.column.at(b), size);
            }
        });
        for (i, entity) in self.dense.iter().enumerate() {
            self.sparse.set(entity.index(), i);
        }
        self.runs.changed_all();
    }

    /// The sparse index and run information, for raw views.
    #[inline]
    pub(crate) fn lookup_parts(&self) -> (&SparseIndex, &RunInfo) {
        (&self.sparse, &self.runs)
    }

    /// Address of the value at dense position `i` (`i <= len`; the value
    /// is live when `i < len`). Aligned to the component's alignment.
    #[inline]
    pub(crate) fn ptr_at(&self, i: usize) -> *mut u8 {
        self.column.at(i)
    }

    /// The dense position of `entity`'s value, trying `hint` first.
    #[inline]
    pub(crate) fn dense_index_hinted(&self, entity: Entity, hint: usize) -> Option<usize> {
        SparseSet::<()>::locate(&self.dense, &self.sparse, entity, hint)
    }

    #[inline]
    pub(crate) fn contains(&self, entity: Entity) -> bool {
        self.dense_index_hinted(entity, usize::MAX).is_some()
    }

    /// The address of `entity`'s value.
    #[inline]
    pub(crate) fn get(&self, entity: Entity) -> Option<NonNull<u8>> {
        let i = self.dense_index_hinted(entity, usize::MAX)?;
        NonNull::new(self.ptr_at(i))
    }

    /// The address of `entity`'s value, marked changed when tracked.
    ///
    /// # Safety
    ///
    /// The caller holds the pool's write lock (nobody else reads or
    /// writes its ticks meanwhile).
    #[inline]
    pub(crate) unsafe fn get_marked(&self, entity: Entity) -> Option<NonNull<u8>> {
        let i = self.dense_index_hinted(entity, usize::MAX)?;
        let (ticks, now) = self.marks();
        // SAFETY: `i` is a dense position, inside the tick buffer; the
        // caller's write lock keeps everyone else off it.
        unsafe { ticks::mark(ticks, i, now) };
        NonNull::new(self.ptr_at(i))
    }

    /// Calls the destructor on the value at `value`.
    ///
    /// # Safety
    ///
    /// `value` holds a live value of this pool's component that is not
    /// used again.
    #[inline]
    unsafe fn drop_value(&self, value: *mut u8) {
        if let (Some(drop), Some(value)) = (&self.drop, NonNull::new(value)) {
            // SAFETY: forwarded contract; the pointer is aligned (column
            // addresses are multiples of the alignment apart from an
            // aligned start).
            unsafe { drop.call(value) }
        }
    }

    /// Stores the value at `src` for `entity`, dropping the value it
    /// replaces. Generations are compared: when the slot of `entity`'s
    /// index is held by another generation, nothing is read from `src` and
    /// [`Refused::Held`] names the holder. When the allocator cannot give
    /// the room for a new value, nothing is read from `src` either, the
    /// pool is unchanged, and [`Refused::NoMemory`] gives the size asked.
    ///
    /// # Safety
    ///
    /// `src` is readable for the component's size and holds a valid value
    /// of it (any alignment), which the pool owns on `Ok`; it does not
    /// point into this pool's column. (It is read only on `Ok`.)
    pub(crate) unsafe fn insert(&mut self, entity: Entity, src: *const u8) -> Result<(), Refused> {
        let size = self.column.item.size();
        if let Some(i) = self.sparse.get(entity.index()) {
            let holder = self.dense[i];
            if holder != entity {
                return Err(Refused::Held(holder));
            }
            // Moves the new value in once the old one is dropped, even if
            // its destructor unwinds.
            let _move_in = CopyOnDrop {
                src,
                dst: self.column.at(i),
                len: size,
            };
            ticks::ticks_marked(&mut self.changes, i);
            // SAFETY: position `i < len` holds a live value, replaced next.
            unsafe { self.drop_value(self.column.at(i)) };
            return Ok(());
        }
        let len = self.dense.len();
        self.column
            .try_reserve_one(len)
            .map_err(|bytes| Refused::NoMemory { bytes })?;
        self.dense.try_reserve(1).map_err(|_| Refused::NoMemory {
            bytes: (len + 1).saturating_mul(std::mem::size_of::<Entity>()),
        })?;
        // SAFETY: `src` is readable for `size` bytes (our contract), the
        // column has room for value `len`, and the two do not overlap.
        unsafe { ptr::copy_nonoverlapping(src, self.column.at(len), size) };
        self.sparse.set(entity.index(), len);
        self.dense.push(entity);
        ticks::ticks_pushed(&mut self.changes);
        self.runs.changed(len, len + 1);
        Ok(())
    }

    /// A copy of the pool, its values copied byte for byte, with its own
    /// identity for raw views. `None` when the values have a destructor
    /// (a byte copy would own their resources twice) or the allocator
    /// refuses the memory.
    pub(crate) fn copy_bytes(&self) -> Option<BlobPool> {
        if self.drop.is_some() {
            return None;
        }
        Some(BlobPool {
            sparse: self.sparse.clone(),
            dense: self.dense.clone(),
            column: self.column.copy_prefix(self.dense.len())?,
            drop: None,
            runs: RunInfo::default(),
            changes: self.changes.clone(),
            raw_changed: ptr::null_mut(),
        })
    }

    /// Gives `to` a byte copy of `from`'s value; `false` (nothing done)
    /// when `from` has none. The caller knows the values have no
    /// destructor (a byte copy of plain bytes is a valid value).
    ///
    /// # Panics
    ///
    /// When `to`'s slot is held by another generation, or the allocator
    /// refuses the room (as `Vec` does).
    pub(crate) fn clone_value(&mut self, from: Entity, to: Entity) -> bool {
        debug_assert!(self.drop.is_none());
        let Some(i) = self.dense_index_hinted(from, usize::MAX) else {
            return false;
        };
        let size = self.column.item.size();
        // The insert may move the column: the value goes through a buffer.
        let mut buffer = vec![std::mem::MaybeUninit::<u8>::uninit(); size];
        // SAFETY: position `i < len` holds `size` readable bytes; the
        // buffer is a separate allocation of `size` bytes.
        unsafe { ptr::copy_nonoverlapping(self.column.at(i), buffer.as_mut_ptr().cast(), size) };
        // SAFETY: the buffer holds a byte copy of a valid value of plain
        // bytes (no destructor: it owns nothing), readable for the size,
        // outside the column.
        let inserted = unsafe { self.insert(to, buffer.as_ptr().cast()) };
        match inserted {
            Ok(()) => true,
            Err(Refused::Held(holder)) => {
                panic!("broken registry invariant: {to} meets {holder} in a run-time pool")
            }
            Err(Refused::NoMemory { bytes }) => std::alloc::handle_alloc_error(
                Layout::from_size_align(bytes, 1).unwrap_or(Layout::new::<u8>()),
            ),
        }
    }

    /// `true` when the values have a destructor.
    pub(crate) fn has_drop(&self) -> bool {
        self.drop.is_some()
    }

    /// Removes and drops `entity`'s value; the last value moves into its
    /// place. `true` if it had one.
    pub(crate) fn remove(&mut self, entity: Entity) -> bool {
        let Some(i) = self.dense_index_hinted(entity, usize::MAX) else {
            return false;
        };
        let last = self.dense.len() - 1;
        self.runs.changed(i, last);
        self.sparse.clear_slot(entity.index());
        self.dense.swap_remove(i);
        ticks::ticks_swap_removed(&mut self.changes, i, entity);
        if let Some(&moved) = self.dense.get(i) {
            self.sparse.set(moved.index(), i);
        }
        // The last value fills the hole once the removed one is dropped,
        // even if its destructor unwinds.
        let _fill = CopyOnDrop {
            src: self.column.at(last),
            dst: self.column.at(i),
            len: if i == last {
                0
            } else {
                self.column.item.size()
            },
        };
        // SAFETY: position `i` held `entity`'s live value, no longer listed.
        unsafe { self.drop_value(self.column.at(i)) };
        true
    }

    /// Drops every value; keeps the allocated memory.
    pub(crate) fn clear(&mut self) {
        let len = self.dense.len();
        self.runs.changed_all();
        ticks::ticks_cleared(&mut self.changes, &self.dense);
        for entity in self.dense.drain(..) {
            self.sparse.clear_slot(entity.index());
        }
        let mut panic = FirstPanic::default();
        for i in 0..len {
            // SAFETY: positions `0..len` held live values, no longer listed;
            // each is dropped once (a destructor that unwinds is caught, and
            // the next value dropped all the same).
            panic.run(|| unsafe { self.drop_value(self.column.at(i)) });
        }
        panic.resume();
    }

    /// Bytes held on the heap: sparse pages, dense entities and the column.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.sparse.heap_bytes()
            + self.dense.capacity() * std::mem::size_of::<Entity>()
            + self.column.heap_bytes()
            + ticks::ticks_heap_bytes(&self.changes)
    }
}

impl Drop for BlobPool {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU32;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn e(index: u32) -> Entity {
        Entity::new(index, NonZeroU32::MIN)
    }

    #[test]
    fn swap_and_pop_moves_bytes() {
        let mut pool = BlobPool::new(Layout::new::<u64>(), None);
        for i in 0..5u64 {
            let value = i * 10;
            // SAFETY: a valid u64.
            unsafe { pool.insert(e(i as u32), (&raw const value).cast()) }.unwrap();
        }
        assert!(pool.remove(e(1)));
        assert_eq!(pool.entities(), &[e(0), e(4), e(2), e(3)]);
        let read = |pool: &BlobPool, i: u32| {
            // SAFETY: the pool stores aligned u64 values.
            pool.get(e(i)).map(|p| unsafe { *p.cast::<u64>().as_ptr() })
        };
        assert_eq!(read(&pool, 4), Some(40));
        assert_eq!(read(&pool, 1), None);
        assert!(!pool.remove(e(1)));
        assert!(pool.remove(e(3)));
        assert_eq!(pool.len(), 3);
    }

    #[test]
    fn destructor_runs_once_per_value() {
        let drops = Arc::new(AtomicUsize::new(0));
        let counter = drops.clone();
        // SAFETY: the destructor only counts.
        let drop = unsafe {
            crate::ComponentDescriptor::new("x", Layout::new::<u32>()).with_drop(move |_| {
                counter.fetch_add(1, Ordering::Relaxed);
            })
        };
        let (_, layout, drop, _) = drop.into_parts();
        let mut pool = BlobPool::new(layout, drop);
        let v = 7u32;
        for i in 0..4 {
            // SAFETY: a valid u32.
            unsafe { pool.insert(e(i), (&raw const v).cast()) }.unwrap();
        }
        // SAFETY: a valid u32.
        unsafe { pool.insert(e(0), (&raw const v).cast()) }.unwrap();
        assert_eq!(drops.load(Ordering::Relaxed), 1);
        pool.remove(e(2));
        assert_eq!(drops.load(Ordering::Relaxed), 2);
        pool.clear();
        assert_eq!(drops.load(Ordering::Relaxed), 5);
        // SAFETY: a valid u32.
        unsafe { pool.insert(e(9), (&raw const v).cast()) }.unwrap();
        drop_pool(pool);
        assert_eq!(drops.load(Ordering::Relaxed), 6);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "Miri stops at an allocation it cannot make instead of returning null"
    )]
    fn a_value_the_allocator_cannot_hold_is_refused_and_changes_nothing() {
        let huge = Layout::from_size_align(isize::MAX as usize & !7, 8).unwrap();
        let mut pool = BlobPool::new(huge, None);
        let value = 1u64;
        // SAFETY: the room cannot be made, so nothing is read from `value`
        // (what this test checks: a read past it would be caught by
        // AddressSanitizer or valgrind).
        let refused = unsafe { pool.insert(e(0), (&raw const value).cast()) }.unwrap_err();
        assert_eq!(refused, Refused::NoMemory { bytes: huge.size() });
        assert_eq!((pool.len(), pool.heap_bytes()), (0, 0));
        assert!(!pool.contains(e(0)));
    }

    #[test]
    fn large_values_start_with_room_for_one() {
        let layout = Layout::from_size_align(4096, 8).unwrap();
        let mut pool = BlobPool::new(layout, None);
        let value = [7u8; 4096];
        // SAFETY: 4096 plain bytes.
        unsafe { pool.insert(e(0), value.as_ptr()) }.unwrap();
        assert_eq!(pool.column.cap, 1);
        // SAFETY: as above.
        unsafe { pool.insert(e(1), value.as_ptr()) }.unwrap();
        assert_eq!(pool.column.cap, 2);
    }

    fn drop_pool(pool: BlobPool) {
        std::mem::drop(pool);
    }
}
