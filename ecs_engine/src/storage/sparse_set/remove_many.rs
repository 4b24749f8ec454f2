//! Removing many entities from one sparse set: the same result as one
//! [`SparseSet::remove`] per entity, with the cache misses of a group of
//! removals overlapped.
//!
//! In a set larger than the caches, one removal is a chain of misses: the
//! entity's sparse slot, then its dense slot (which the first gives), then
//! the sparse slot of the last entity, which moves into the hole. One
//! removal after another, each chain waits for the previous one, about
//! 100 ns per removal per pool on the harness's machine. Here the slots of a
//! group of [`GROUP`] removals are looked up first (independent loads, which
//! the processor runs side by side) and their dense, data and moved-entity
//! slots prefetched; the removals then run in order on warm lines. The
//! order of the removals, and so the dense order, the change log and the
//! change ticks, are exactly those of the one-by-one loop.

use super::{EMPTY, SparseSet};
use crate::Entity;
use crate::storage::prefetch::prefetch;

/// Removals looked up ahead at a time: enough misses in flight to fill the
/// memory pipeline, few enough that their lines stay in the first-level
/// cache until used (a group touches at most four lines per removal).
const GROUP: usize = 32;

impl<T> SparseSet<T> {
    /// Removes and drops the component of each entity of `entities` that
    /// has one here (only the exact handle matches), in order, as one
    /// [`remove`](Self::remove) per entity would; returns how many were
    /// removed.
    ///
    /// # Panics
    ///
    /// When a component's `Drop` panics (callers pass only sets of types
    /// that need no drop, or catch it): the removals before it are done,
    /// the set is consistent.
    pub(crate) fn remove_many(&mut self, entities: &[Entity]) -> usize {
        let mut removed = 0;
        for group in entities.chunks(GROUP) {
            self.warm_removals(group);
            for &entity in group {
                removed += usize::from(self.remove(entity).is_some());
            }
        }
        removed
    }

    /// Brings into the cache the lines that removing `group` (at most
    /// [`GROUP`] entities) reads and writes.
    #[inline]
    fn warm_removals(&self, group: &[Entity]) {
        let mut found = [EMPTY; GROUP];
        // Independent loads: their misses overlap.
        for (slot, entity) in found.iter_mut().zip(group) {
            *slot = self.sparse.get(entity.index()).map_or(EMPTY, |i| i as u32);
        }
        let len = self.dense.len();
        for &i in &found[..group.len()] {
            let i = i as usize;
            if i < len {
                prefetch(self.dense.as_ptr().wrapping_add(i));
                if size_of::<T>() != 0 {
                    prefetch(self.data.as_ptr().wrapping_add(i));
                }
            }
        }
        // The removals move the set's last entities into the holes: their
        // sparse slots are written.
        for moved in &self.dense[len.saturating_sub(group.len())..] {
            self.sparse.prefetch(moved.index());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU32;

    fn e(index: u32, generation: u32) -> Entity {
        Entity::new(index, NonZeroU32::new(generation).unwrap())
    }

    /// The batch leaves exactly what one `remove` per entity leaves:
    /// entities, values, dense order, and the sparse index (checked
    /// through `get` of every handle).
    #[test]
    fn remove_many_matches_one_by_one() {
        let mut batch = SparseSet::new();
        let mut single = SparseSet::new();
        for index in 0..1_000u32 {
            batch.insert(e(index, 1), index * 3).unwrap();
            single.insert(e(index, 1), index * 3).unwrap();
        }
        // Duplicates, stale generations, absent indices, the last entity.
        let mut doomed: Vec<Entity> = (0..1_000u32)
            .filter(|i| i % 7 == 3 || i % 11 == 0)
            .map(|i| e(i, 1))
            .collect();
        doomed.extend([e(999, 1), e(5, 2), e(4_000_000, 1), e(14, 1), e(14, 1)]);
        let removed = batch.remove_many(&doomed);
        let mut expected = 0;
        for &entity in &doomed {
            expected += usize::from(single.remove(entity).is_some());
        }
        assert_eq!(removed, expected);
        assert_eq!(batch.entities(), single.entities());
        assert_eq!(batch.components(), single.components());
        for index in 0..1_000u32 {
            assert_eq!(batch.get(e(index, 1)), single.get(e(index, 1)));
        }
    }
}
