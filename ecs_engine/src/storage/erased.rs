//! [`ErasedPool`]: the operations the registry needs on a pool without
//! knowing its type, implemented by the typed [`SparseSet`]s and by the
//! untyped `BlobPool`s of run-time components (the table of pools,
//! `pools.rs`, stores them as `dyn ErasedPool`).

use std::any::Any;

use crate::change::ticks::ChangeTicks;
use crate::storage::blob_pool::BlobPool;
use crate::{Component, Entity, SparseSet};

/// The operations the registry needs on a pool without knowing its type:
/// implemented by the typed [`SparseSet`]s and by the untyped `BlobPool`s of
/// run-time components.
pub(crate) trait ErasedPool: Any + Send + Sync {
    /// Removes and drops `entity`'s component; `true` if it had one.
    fn remove_entity(&mut self, entity: Entity) -> bool;
    /// Removes and drops the components of `entities`, in order, as one
    /// [`remove_entity`](Self::remove_entity) each would.
    fn remove_entities(&mut self, entities: &[Entity]) {
        for &entity in entities {
            self.remove_entity(entity);
        }
    }
    /// `true` when dropping a component may run code (which may panic).
    fn needs_drop(&self) -> bool;
    fn contains_entity(&self, entity: Entity) -> bool;
    fn len(&self) -> usize;
    fn clear(&mut self);
    fn heap_bytes(&self) -> usize;
    /// The owners, in dense order.
    fn entities(&self) -> &[Entity];
    /// Reorders the pool: position `i` takes what position `order[i]`
    /// held (`order`, a permutation, is left as the identity).
    fn apply_order(&mut self, order: &mut [u32]);
    /// Takes the raw pointers write claims use (`storage/claims.rs`);
    /// nothing for a pool that has no claims.
    fn refresh_raw(&mut self) {}
    /// `true` when the pool keeps change ticks.
    fn is_tracking(&self) -> bool;
    /// The pool's identity and structural revision (see `RunInfo`):
    /// equal stamps at two moments mean the same entities in the same
    /// dense order.
    fn stamp(&self) -> (u64, u64);
    /// The pool's [`UnmarkedWrites`](crate::change::ticks::UnmarkedWrites)
    /// number; `None` when it keeps no ticks.
    fn unmarked(&self) -> Option<u64>;
    /// Empties the pool, dropping its values, without logging removals
    /// (a restore to a state saved before the pool had any; tick arrays
    /// emptied, the removal log kept).
    fn reset(&mut self);
    /// The registry's change clock was set to `now` other than by an
    /// advance (a restore, a load): see [`ChangeTicks::clock_moved`](crate::change::ticks::ChangeTicks::clock_moved);
    /// nothing for a pool that keeps no ticks (the default).
    fn clock_moved(&mut self, _now: u32) {}
    /// The registry's change clock advanced to `now`: a tracked pool
    /// stores it as the tick of its next marks, and clamps its old ticks
    /// when `check` is set; nothing for a pool that keeps no ticks.
    fn advance(&mut self, now: u32, check: bool);
}

/// [`ErasedPool::advance`] on a pool's ticks.
fn advance_ticks(changes: Option<&mut ChangeTicks>, now: u32, check: bool) {
    if let Some(c) = changes {
        c.now = now;
        if check {
            c.clamp();
        }
    }
}

impl<T: Component> ErasedPool for SparseSet<T> {
    fn remove_entity(&mut self, entity: Entity) -> bool {
        self.remove(entity).is_some()
    }
    fn remove_entities(&mut self, entities: &[Entity]) {
        self.remove_many(entities);
    }
    fn needs_drop(&self) -> bool {
        std::mem::needs_drop::<T>()
    }
    fn contains_entity(&self, entity: Entity) -> bool {
        self.contains(entity)
    }
    fn len(&self) -> usize {
        SparseSet::len(self)
    }
    fn clear(&mut self) {
        SparseSet::clear(self)
    }
    fn heap_bytes(&self) -> usize {
        SparseSet::heap_bytes(self)
    }
    fn entities(&self) -> &[Entity] {
        SparseSet::entities(self)
    }
    fn apply_order(&mut self, order: &mut [u32]) {
        SparseSet::apply_order(self, order)
    }
    fn refresh_raw(&mut self) {
        SparseSet::refresh_raw(self)
    }
    fn is_tracking(&self) -> bool {
        self.changes.is_some()
    }
    fn stamp(&self) -> (u64, u64) {
        SparseSet::stamp(self)
    }
    fn unmarked(&self) -> Option<u64> {
        self.changes.as_ref().map(|c| c.unmarked.get())
    }
    fn clock_moved(&mut self, now: u32) {
        if let Some(c) = &mut self.changes {
            c.clock_moved(now);
        }
    }
    fn advance(&mut self, now: u32, check: bool) {
        advance_ticks(self.changes.as_deref_mut(), now, check);
    }
    fn reset(&mut self) {
        let changes = self.changes.take();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.clear()));
        self.changes = emptied(changes);
        if let Err(payload) = result {
            std::panic::resume_unwind(payload);
        }
    }
}

/// A reset pool's ticks: the arrays emptied, the removal log kept.
pub(crate) fn emptied(changes: Option<Box<ChangeTicks>>) -> Option<Box<ChangeTicks>> {
    changes.map(|mut c| {
        c.added.clear();
        c.changed.clear();
        c.stamps.fit(0, c.now);
        c
    })
}

impl ErasedPool for BlobPool {
    fn remove_entity(&mut self, entity: Entity) -> bool {
        self.remove(entity)
    }
    fn needs_drop(&self) -> bool {
        self.has_drop()
    }
    fn contains_entity(&self, entity: Entity) -> bool {
        self.contains(entity)
    }
    fn len(&self) -> usize {
        BlobPool::len(self)
    }
    fn clear(&mut self) {
        BlobPool::clear(self)
    }
    fn heap_bytes(&self) -> usize {
        BlobPool::heap_bytes(self)
    }
    fn entities(&self) -> &[Entity] {
        BlobPool::entities(self)
    }
    fn apply_order(&mut self, order: &mut [u32]) {
        BlobPool::apply_order(self, order)
    }
    fn is_tracking(&self) -> bool {
        BlobPool::is_tracking(self)
    }
    fn refresh_raw(&mut self) {
        BlobPool::refresh_raw(self)
    }
    fn stamp(&self) -> (u64, u64) {
        let (_, runs) = self.lookup_parts();
        (runs.id, runs.revision)
    }
    fn unmarked(&self) -> Option<u64> {
        None
    }
    fn reset(&mut self) {
        BlobPool::reset(self)
    }
    fn clock_moved(&mut self, now: u32) {
        if let Some(c) = self.changes_mut() {
            c.clock_moved(now);
        }
    }
    fn advance(&mut self, now: u32, check: bool) {
        advance_ticks(self.changes_mut(), now, check);
    }
}
