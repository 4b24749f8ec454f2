//! The sparse set: one per component type.
//!
//! Invariants, for every `i < len`:
//! - `dense[i]` is the entity whose component is `data[i]`;
//! - `sparse[dense[i].index()] == i`;
//! - every other sparse slot is empty.
//!
//! The sparse array is paged (`lookup.rs`): a page of
//! [`PAGE_LEN`](crate::PAGE_LEN) slots is allocated the first time an index
//! in its range is stored, so one entity with index 10,000,000 costs one
//! page, not ten million slots. Removal moves the last element into the hole
//! (swap-and-pop), so the dense arrays stay packed and iteration touches only
//! live components. See EnTT's and shipyard's sparse sets for the same
//! layout. What views need to join sets by position (identity, revision,
//! written positions, run cache) is in `lookup.rs` too.

mod copy;
pub(crate) use copy::CopySide;
mod frame_delta;
pub(crate) use frame_delta::DeltaUndo;
mod remove_many;

use super::claims::RawParts;
use super::lookup::{EMPTY, RunInfo, SparseIndex};
use crate::change::ticks::{self, ChangeTick, ChangeTicks, TickParts, TickSlices};
use crate::panic::FirstPanic;
use crate::{EcsError, Entity, InsertError};

/// The components of one type, packed densely, with O(1) lookup by entity.
///
/// `entities()`, `components()` and `components_mut()` are slices of equal
/// length, in the same order: `components()[i]` belongs to `entities()[i]`.
/// The order changes on removal (the last element fills the hole). A
/// zero-sized component costs no component memory: only the dense entity and
/// the sparse slot.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Registry, SparseSet};
///
/// let mut registry = Registry::new();
/// let a = registry.spawn((1u32,));
/// let b = registry.spawn((2u32,));
/// let pool: &SparseSet<u32> = registry.pool::<u32>().unwrap();
/// assert_eq!(pool.entities(), &[a, b]);
/// assert_eq!(pool.components(), &[1, 2]);
/// assert_eq!(pool.get(b), Some(&2));
/// ```
#[derive(Debug)]
pub struct SparseSet<T> {
    sparse: SparseIndex,
    dense: Vec<Entity>,
    data: Vec<T>,
    runs: RunInfo,
    /// Change ticks and removal log, when the type is tracked (`change/ticks.rs`).
    pub(crate) changes: Option<Box<ChangeTicks>>,
    /// The buffers' raw pointers for write claims (`storage/claims.rs`),
    /// taken by [`refresh_raw`](Self::refresh_raw).
    raw: RawParts<T>,
}

impl<T> Default for SparseSet<T> {
    fn default() -> Self {
        SparseSet {
            sparse: SparseIndex::default(),
            dense: Vec::new(),
            data: Vec::new(),
            runs: RunInfo::default(),
            changes: None,
            raw: RawParts::NULL,
        }
    }
}

impl<T: Clone> Clone for SparseSet<T> {
    /// A copy with its own identity (views do not share run caches) and
    /// no change tracking.
    fn clone(&self) -> Self {
        SparseSet {
            sparse: self.sparse.clone(),
            dense: self.dense.clone(),
            data: self.data.clone(),
            runs: RunInfo::default(),
            changes: None,
            raw: RawParts::NULL,
        }
    }
}

impl<T> SparseSet<T> {
    /// An empty set; allocates nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of components stored.
    #[inline]
    pub fn len(&self) -> usize {
        self.dense.len()
    }

    /// `true` when no component is stored.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.dense.is_empty()
    }

    /// The owners, in dense order.
    #[inline]
    pub fn entities(&self) -> &[Entity] {
        &self.dense
    }

    /// The components, in the same order as [`entities`](Self::entities).
    #[inline]
    pub fn components(&self) -> &[T] {
        &self.data
    }

    /// The components, mutable, in the same order as
    /// [`entities`](Self::entities). Marks every one changed when the
    /// type is tracked.
    #[inline]
    pub fn components_mut(&mut self) -> &mut [T] {
        ticks::ticks_marked_all(&mut self.changes);
        &mut self.data
    }

    /// The components, mutable, marking nothing changed.
    #[inline]
    pub(crate) fn data_untracked(&mut self) -> &mut [T] {
        if let Some(c) = &self.changes {
            c.unmarked.count();
        }
        &mut self.data
    }

    /// `(entity, &component)` pairs in dense order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Entity, &T)> {
        self.dense.iter().copied().zip(self.data.iter())
    }

    /// `(entity, &mut component)` pairs in dense order. Marks every
    /// component changed when the type is tracked.
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = (Entity, &mut T)> {
        ticks::ticks_marked_all(&mut self.changes);
        self.dense.iter().copied().zip(self.data.iter_mut())
    }

    /// The dense position of `entity`'s component, if it has one. Only an
    /// exact handle matches: a stale handle with the same index does not.
    #[inline]
    pub fn dense_index(&self, entity: Entity) -> Option<usize> {
        let i = self.sparse.get(entity.index())?;
        (self.dense.get(i) == Some(&entity)).then_some(i)
    }

    /// Like [`dense_index`](Self::dense_index), trying position `hint` first:
    /// when pools hold the same entities in the same order this skips the
    /// sparse lookup.
    #[inline]
    pub(crate) fn dense_index_hinted(&self, entity: Entity, hint: usize) -> Option<usize> {
        Self::locate(&self.dense, &self.sparse, entity, hint)
    }

    /// `true` when `entity` (this exact handle) has a component here.
    #[inline]
    pub fn contains(&self, entity: Entity) -> bool {
        self.dense_index(entity).is_some()
    }

    /// `entity`'s component. Only this exact handle matches (generations
    /// are compared).
    #[inline]
    pub fn get(&self, entity: Entity) -> Option<&T> {
        // The owner and the value are read side by side (no dependency
        // between the two loads), the owner compared after.
        let i = self.sparse.get(entity.index())?;
        let (owner, value) = (self.dense.get(i)?, self.data.get(i)?);
        (*owner == entity).then_some(value)
    }

    /// `entity`'s component, mutable. Only this exact handle matches
    /// (generations are compared). Marks it changed when the type is
    /// tracked.
    #[inline]
    pub fn get_mut(&mut self, entity: Entity) -> Option<&mut T> {
        let i = self.sparse.get(entity.index())?;
        let (owner, value) = (self.dense.get(i)?, self.data.get_mut(i)?);
        if *owner != entity {
            return None;
        }
        ticks::ticks_marked(&mut self.changes, i);
        Some(value)
    }

    /// Stores `value` for `entity`. Returns the value it replaces when
    /// `entity` already had one.
    ///
    /// Generations are compared, as on every path of the set: a handle
    /// whose index is held here by another generation (a stale handle, or
    /// an entry of an older owner) never replaces the holder's value.
    ///
    /// # Errors
    ///
    /// [`EcsError::SlotHeld`] naming `entity` and the holder when the slot
    /// of `entity`'s index holds another generation; `value` comes back in
    /// the [`InsertError`] and the set is unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{EcsError, Registry, SparseSet};
    ///
    /// let mut registry = Registry::new();
    /// let old = registry.spawn(());
    /// registry.despawn(old).unwrap();
    /// let new = registry.spawn(()); // same slot, next generation
    /// let mut pool = SparseSet::new();
    /// pool.insert(new, "new owner").unwrap();
    /// let refused = pool.insert(old, "stale").unwrap_err();
    /// assert!(matches!(refused.error, EcsError::SlotHeld { entity, holder, .. }
    ///     if entity == old && holder == new));
    /// assert_eq!(pool.get(new), Some(&"new owner"));
    /// ```
    #[inline(always)]
    pub fn insert(&mut self, entity: Entity, value: T) -> Result<Option<T>, InsertError<T>> {
        let len = self.dense.len();
        let Some(slot) = self.sparse.slot_present_mut(entity.index()) else {
            return self.insert_on_new_page(entity, value);
        };
        if *slot != EMPTY {
            let i = *slot as usize;
            return self.replace(i, entity, value);
        }
        self.dense.push(entity);
        self.data.push(value);
        // Written once the dense arrays are done (see `remove`).
        *slot = len as u32;
        ticks::ticks_pushed(&mut self.changes);
        self.runs.changed(len, len + 1);
        Ok(None)
    }

    /// [`insert`](Self::insert) when the page of `entity`'s sparse slot
    /// is missing: allocates it, then inserts.
    #[cold]
    #[inline(never)]
    fn insert_on_new_page(
        &mut self,
        entity: Entity,
        value: T,
    ) -> Result<Option<T>, InsertError<T>> {
        self.sparse.add_page(entity.index());
        self.insert(entity, value)
    }

    /// [`insert`](Self::insert) where the slot of `entity`'s index holds
    /// dense position `i`: replaces the value if `entity` holds it,
    /// refuses otherwise. Out of line, so that the append path of
    /// `insert` stays small enough to inline into callers' loops.
    #[inline(never)]
    fn replace(&mut self, i: usize, entity: Entity, value: T) -> Result<Option<T>, InsertError<T>> {
        let holder = self.dense[i];
        if holder != entity {
            let error = EcsError::SlotHeld {
                entity,
                holder,
                component: std::any::type_name::<T>().into(),
            };
            return Err(InsertError { error, value });
        }
        ticks::ticks_marked(&mut self.changes, i);
        Ok(Some(std::mem::replace(&mut self.data[i], value)))
    }

    /// [`insert`](Self::insert) for a handle the registry checked alive:
    /// the registry's pools never hold a dead entity (despawn and clear
    /// empty every pool, even when a destructor unwinds), so a live handle
    /// never meets another generation in its slot.
    ///
    /// # Panics
    ///
    /// When the slot is held by another generation (a broken invariant).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn insert_live(&mut self, entity: Entity, value: T) -> Option<T> {
        match self.insert(entity, value) {
            Ok(old) => old,
            Err(refused) => panic!("broken registry invariant: {}", refused.error),
        }
    }

    /// Appends `value` for `entity`, which must have no component here yet
    /// (a just-allocated entity); an occupied slot (which the registry
    /// never leaves for a fresh entity) falls back to
    /// [`insert`](Self::insert). Does not log the change: the caller
    /// reports the appended positions with [`RunInfo::pushed`] through
    /// [`pushed_since`](Self::pushed_since).
    #[inline]
    pub(crate) fn push_new(&mut self, entity: Entity, value: T) {
        let len = self.dense.len();
        if self.sparse.claim(entity.index(), len) != EMPTY {
            // Logged by `insert` itself; later pushes start a new entry.
            self.insert_live(entity, value);
            return;
        }
        self.dense.push(entity);
        self.data.push(value);
        ticks::ticks_pushed(&mut self.changes);
    }

    /// Appends `value` with no owner yet (the dense arrays are uneven
    /// until [`adopt_fresh`](Self::adopt_fresh) gives the pending values
    /// their owners; nothing may read the set in between).
    #[inline]
    pub(crate) fn push_pending(&mut self, value: T) {
        self.data.push(value);
    }

    /// Gives the first `count` values pushed by
    /// [`push_pending`](Self::push_pending) the owners with indices
    /// `first..first + count` and generation 1 (fresh slots, which no pool
    /// holds), drops any pending value past them, and logs the appended
    /// positions.
    pub(crate) fn adopt_fresh(&mut self, first: u32, count: u32) {
        let start = self.dense.len();
        debug_assert!(self.data.len() >= start + count as usize);
        self.data.truncate(start + count as usize);
        self.dense.extend(
            (first..first + count).map(|index| Entity::new(index, std::num::NonZeroU32::MIN)),
        );
        self.sparse.fill(first, count, start);
        ticks::ticks_pushed_n(&mut self.changes, count as usize);
        self.runs.pushed(start, self.dense.len());
    }

    /// Logs the positions appended by [`push_new`](Self::push_new) since
    /// the set held `start` components.
    pub(crate) fn pushed_since(&mut self, start: usize) {
        self.runs.pushed(start, self.dense.len());
    }

    /// Removes and returns `entity`'s component; the last component moves
    /// into its place. Only this exact handle matches: a stale handle with
    /// the same index removes nothing.
    #[inline(always)]
    pub fn remove(&mut self, entity: Entity) -> Option<T> {
        let slot = self.sparse.slot_present_mut(entity.index())?;
        // An empty slot (`u32::MAX`) is past the end of `dense`.
        let i = *slot as usize;
        if self.dense.get(i).map(|e| e.to_bits()) != Some(entity.to_bits()) {
            return None;
        }
        let last = self.dense.len() - 1;
        let moved = self.dense[last];
        self.dense.swap_remove(i);
        let value = self.data.swap_remove(i);
        // The sparse slots are written once the dense arrays are done (a
        // write through a slot could alias their lengths for the
        // compiler, which would load them again), the logs last (they
        // may allocate).
        *slot = EMPTY;
        if i != last {
            // The moved entity is stored here: its page exists.
            self.sparse.set_present(moved.index(), i);
        }
        self.runs.changed(i, last);
        ticks::ticks_swap_removed(&mut self.changes, i, entity);
        Some(value)
    }

    /// Drops every component; keeps the allocated memory.
    ///
    /// # Panics
    ///
    /// When a component's `Drop` panics: the set is emptied first and every
    /// other component is still dropped (once), then the first panic
    /// resumes.
    pub fn clear(&mut self) {
        self.runs.changed_all();
        ticks::ticks_cleared(&mut self.changes, &self.dense);
        for entity in self.dense.drain(..) {
            self.sparse.clear_slot(entity.index());
        }
        if std::mem::needs_drop::<T>() {
            let mut panic = FirstPanic::default();
            for value in self.data.drain(..) {
                panic.run(|| drop(value));
            }
            panic.resume();
        } else {
            self.data.clear();
        }
    }

    /// Reorders the set: position `i` takes the entity and component that
    /// position `order[i]` held (`order`, a permutation of `0..len`, is
    /// left as the identity). Values are swapped, never cloned or dropped;
    /// the sparse index is rebuilt and the change is logged as a clear
    /// (views check their cached runs again).
    pub(crate) fn apply_order(&mut self, order: &mut [u32]) {
        debug_assert_eq!(order.len(), self.dense.len());
        crate::sort::apply_order(order, |a, b| {
            self.dense.swap(a, b);
            self.data.swap(a, b);
            ticks::ticks_swapped(&mut self.changes, a, b);
        });
        for (i, entity) in self.dense.iter().enumerate() {
            self.sparse.set(entity.index(), i);
        }
        self.runs.changed_all();
    }

    /// Reserves room for `additional` more components in the dense arrays.
    pub fn reserve(&mut self, additional: usize) {
        self.dense.reserve(additional);
        self.data.reserve(additional);
    }

    /// Bytes held on the heap: sparse pages, dense entities and component
    /// capacity.
    pub fn heap_bytes(&self) -> usize {
        self.sparse.heap_bytes()
            + self.dense.capacity() * std::mem::size_of::<Entity>()
            + self.data.capacity() * std::mem::size_of::<T>()
            + ticks::ticks_heap_bytes(&self.changes)
    }

    /// Splits the set for views that hand out `&mut T` to many entities:
    /// its lookup parts, a raw pointer to the components, and what their
    /// writes mark ([`TickParts`]; the pool counts as written now).
    pub(crate) fn parts_mut(
        &mut self,
    ) -> (&[Entity], &SparseIndex, &RunInfo, *mut T, TickParts<'_>) {
        let marks = match &mut self.changes {
            Some(c) => {
                c.written.set(c.now);
                TickParts {
                    ticks: c.changed.as_mut_ptr(),
                    now: c.now,
                    unmarked: std::ptr::from_ref(&c.unmarked),
                    stamps: &c.stamps,
                }
            }
            None => TickParts::UNTRACKED,
        };
        (
            &self.dense,
            &self.sparse,
            &self.runs,
            self.data.as_mut_ptr(),
            marks,
        )
    }

    /// The sparse array and run information, for views that locate runs
    /// of entities.
    #[inline]
    pub(crate) fn lookup_parts(&self) -> (&SparseIndex, &RunInfo) {
        (&self.sparse, &self.runs)
    }

    /// The dense position of `entity` using only the lookup parts.
    #[inline]
    pub(crate) fn locate(
        dense: &[Entity],
        sparse: &SparseIndex,
        entity: Entity,
        hint: usize,
    ) -> Option<usize> {
        if dense.get(hint) == Some(&entity) {
            return Some(hint);
        }
        let i = sparse.get(entity.index())?;
        (dense[i] == entity).then_some(i)
    }
}

// --- change ticks (kept by `change/ticks.rs`) -------------------------------

impl<T> SparseSet<T> {
    /// `true` when this pool keeps change ticks.
    pub fn is_tracking_changes(&self) -> bool {
        self.changes.is_some()
    }

    /// The (added, changed) ticks of `entity`'s component; `None` when it
    /// has none or the pool keeps no ticks.
    pub fn change_ticks(&self, entity: Entity) -> Option<(ChangeTick, ChangeTick)> {
        let c = self.changes.as_ref()?;
        let i = self.dense_index(entity)?;
        Some((
            ChangeTick::new(c.added_at(i)),
            ChangeTick::new(c.changed_at(i)),
        ))
    }

    /// `entity`'s component, mutable, without marking it changed: for a
    /// write that leaves the value as it was (bevy's
    /// `bypass_change_detection`).
    pub fn get_mut_untracked(&mut self, entity: Entity) -> Option<&mut T> {
        let i = self.dense_index(entity)?;
        Some(&mut self.data_untracked()[i])
    }

    /// Takes the value and changed-tick buffers' pointers through `&mut`,
    /// for write claims (`storage/claims.rs`).
    pub(crate) fn refresh_raw(&mut self) {
        self.raw = RawParts {
            data: self.data.as_mut_ptr(),
            changed: match &mut self.changes {
                Some(c) => c.changed.as_mut_ptr(),
                None => std::ptr::null_mut(),
            },
        };
    }

    /// The pointers of [`refresh_raw`](Self::refresh_raw) and what the
    /// writes of a write claim mark ([`TickParts`], its ticks the
    /// refreshed pointer; the pool counts as written now).
    ///
    /// # Panics
    ///
    /// When a buffer moved since the refresh (a broken invariant of
    /// `storage/claims.rs`: the refresh runs whenever the registry is
    /// borrowed exclusively, and structure cannot change meanwhile).
    pub(crate) fn raw_parts(&self) -> (*mut T, TickParts<'_>) {
        let marks = match &self.changes {
            Some(c) => {
                c.written.set(c.now);
                TickParts {
                    ticks: self.raw.changed,
                    now: c.now,
                    unmarked: std::ptr::from_ref(&c.unmarked),
                    stamps: &c.stamps,
                }
            }
            None => TickParts::UNTRACKED,
        };
        let changed = self
            .changes
            .as_ref()
            .map_or(std::ptr::null(), |c| c.changed.as_ptr());
        assert!(
            std::ptr::eq(self.raw.data, self.data.as_ptr())
                && std::ptr::eq(self.raw.changed, changed),
            "a pool's buffers moved while a view held them"
        );
        (self.raw.data, marks)
    }

    /// The components' buffer, read through per element by read claims
    /// (`Vec::as_ptr`, no reference over the whole buffer).
    #[inline]
    pub(crate) fn components_ptr(&self) -> *const T {
        self.data.as_ptr()
    }

    /// The added tick of dense position `i` and the current tick, read
    /// through the buffer's pointer (no reference over the whole buffer);
    /// `None` when the set does not track changes.
    ///
    /// # Panics
    ///
    /// When `i` is not below [`len`](Self::len) (of a tracked set).
    #[inline]
    pub(crate) fn added_at(&self, i: usize) -> Option<(u32, u32)> {
        self.changes
            .as_deref()
            .map(|c| (tick_at(&c.added, i), c.now))
    }

    /// The changed tick of dense position `i` and the current tick, read
    /// as [`added_at`](Self::added_at) reads: a write claim (of the same
    /// view, or of a disjoint one on another thread) may be writing other
    /// positions of the buffer meanwhile.
    ///
    /// # Panics
    ///
    /// As `added_at`.
    #[inline]
    pub(crate) fn changed_at(&self, i: usize) -> Option<(u32, u32)> {
        self.changes
            .as_deref()
            .map(|c| (tick_at(&c.changed, i), c.now))
    }

    /// The tick arrays and the current tick, for read terms.
    #[inline]
    pub(crate) fn ticks(&self) -> Option<TickSlices<'_>> {
        self.changes.as_deref().map(|c| TickSlices {
            added: &c.added,
            changed: &c.changed,
            now: c.now,
        })
    }
}

/// Element `i` of a tick buffer, read through its pointer.
///
/// # Panics
///
/// When `i` is out of bounds.
#[inline]
#[allow(
    clippy::ptr_arg,
    reason = "a `&[u32]` would be a reference over positions other threads mark"
)]
fn tick_at(ticks: &Vec<u32>, i: usize) -> u32 {
    assert!(i < ticks.len(), "tick position {i} out of {}", ticks.len());
    // SAFETY: in bounds (checked above). `Vec::as_ptr` makes no reference
    // over the buffer, and claimants write ticks only at positions of the
    // entities they visit (`storage/claims.rs`): a position read here is
    // written by nobody while it is read (the caller's view visits it, or
    // its write claim is its own and marks it only after the check).
    unsafe { ticks.as_ptr().add(i).read() }
}

#[cfg(test)]
mod tests;
