//! A ring's save into its mirror (`storage/pool_ring.rs`): brings a saved
//! copy of a set up to the set, copying only the dense positions that
//! differ, and keeps what it overwrote so the save can be undone.
//!
//! The positions that differ are the ones whose changed tick is newer
//! than the last save, and, when the set's structure changed since (an
//! entity added, removed or moved), the ones whose entity differs, plus
//! the length. Both are found in the blocks the set's summary stamped
//! after the last save only (`change/stamps.rs`): every write and every
//! structural change stamps its block. So a save costs what changed,
//! even in a pool that spawns and despawns every tick, where a copy of
//! the whole pool used to be taken.

use super::SparseSet;
use super::copy::{PREFETCH_AHEAD, newer_positions};
use crate::Entity;
use crate::change::ticks::{self, LogUndo};
use crate::storage::prefetch::prefetch;

/// A delta that would change more than one position in this many
/// (counting the positions added or cut off) is not taken: a whole copy
/// (a slice copy per array) is faster than that many positions copied
/// and kept one by one, and a pool of fewer than this many entities is
/// always copied whole.
const WHOLE_FROM: usize = 4;

/// What a [`SparseSet::save_delta`] overwrote in a copy, to undo it.
pub(crate) struct DeltaUndo<T> {
    /// The copy's length before the save.
    len: usize,
    /// Values overwritten where the entity (and its added tick) stayed,
    /// in position order.
    values: Vec<Replaced<T>>,
    /// Whole entries overwritten where the position changed hands (or its
    /// entity was added again), with their positions, in position order.
    entries: Vec<(u32, Entry<T>)>,
    /// The entries the copy lost past its new length, in position order.
    tail: Vec<Entry<T>>,
    /// What the save did to the copy's removal log.
    log: LogUndo,
}

/// A value a save overwrote: its position, the value and its changed tick.
struct Replaced<T> {
    index: u32,
    value: T,
    changed: u32,
}

/// A whole entry a save overwrote or cut off.
struct Entry<T> {
    entity: Entity,
    value: T,
    added: u32,
    changed: u32,
}

impl<T> DeltaUndo<T> {
    /// `true` when the save changed nothing.
    pub(crate) fn is_empty(&self, len: usize) -> bool {
        self.len == len
            && self.values.is_empty()
            && self.entries.is_empty()
            && self.tail.is_empty()
            && self.log.is_empty()
    }

    /// Heap bytes the undo holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.values.capacity() * size_of::<Replaced<T>>()
            + self.entries.capacity() * size_of::<(u32, Entry<T>)>()
            + self.tail.capacity() * size_of::<Entry<T>>()
            + self.log.heap_bytes()
    }
}

impl<T: Clone> SparseSet<T> {
    /// Makes this copy equal to `src` (values, entities, change ticks,
    /// removal log), copying only the positions that differ, and returns
    /// what undoes it. The caller knows that both were equal after the
    /// tick `since` (at tick `now`) and that nothing was written into
    /// `src` unmarked since (see `UnmarkedWrites`); with `moved`, `src`'s
    /// structure changed since, otherwise both hold the same entities in
    /// the same order. Returns `None`, changing nothing, when either set
    /// keeps no ticks, the removal logs do not follow on, or more than
    /// one position in [`WHOLE_FROM`] differs (a whole copy is cheaper).
    /// Every value is cloned before the copy changes: a clone that panics
    /// leaves it as it was.
    pub(crate) fn save_delta(
        &mut self,
        src: &Self,
        since: u32,
        now: u32,
        moved: bool,
    ) -> Option<DeltaUndo<T>> {
        debug_assert!(moved || self.dense == src.dense);
        let (Some(own), Some(theirs)) = (self.changes.as_deref_mut(), src.changes.as_deref())
        else {
            return None;
        };
        let len = self.dense.len();
        let common = len.min(src.dense.len());
        let positions = if moved || ticks::newer(theirs.written.get(), since, now) {
            newer_positions(
                theirs,
                (since, now),
                common,
                moved.then_some((&self.dense[..], &src.dense[..])),
            )
        } else {
            Vec::new()
        };
        let differing = positions.len() + len.abs_diff(src.dense.len());
        if differing > len.max(src.dense.len()) / WHOLE_FROM {
            return None;
        }
        // Every clone first: one that panics leaves the copy as it was.
        let fresh: Vec<T> = positions
            .iter()
            .enumerate()
            .map(|(n, &index)| {
                if let Some(&ahead) = positions.get(n + PREFETCH_AHEAD) {
                    prefetch(src.data.as_ptr().wrapping_add(ahead as usize));
                }
                src.data[index as usize].clone()
            })
            .collect();
        let grown = src.data[common..].to_vec();
        let log = own.removed.follow(&theirs.removed)?;
        let mut undo = DeltaUndo {
            len,
            values: Vec::new(),
            entries: Vec::new(),
            tail: Vec::new(),
            log,
        };
        for ((n, &index), value) in positions.iter().enumerate().zip(fresh) {
            if let Some(&ahead) = positions.get(n + PREFETCH_AHEAD) {
                let ahead = ahead as usize;
                prefetch(self.data.as_ptr().wrapping_add(ahead));
                prefetch(own.changed.as_ptr().wrapping_add(ahead));
            }
            let i = index as usize;
            let value = std::mem::replace(&mut self.data[i], value);
            let changed = std::mem::replace(&mut own.changed[i], theirs.changed[i]);
            // Without `moved`, every entity (and its added tick) stayed.
            if !moved || (self.dense[i] == src.dense[i] && own.added[i] == theirs.added[i]) {
                undo.values.push(Replaced {
                    index,
                    value,
                    changed,
                });
            } else {
                let entity = std::mem::replace(&mut self.dense[i], src.dense[i]);
                let added = std::mem::replace(&mut own.added[i], theirs.added[i]);
                undo.entries.push((
                    index,
                    Entry {
                        entity,
                        value,
                        added,
                        changed,
                    },
                ));
            }
            own.stamps.stamp(i, theirs.now);
        }
        if src.dense.len() < len {
            undo.tail = (self.dense.drain(common..))
                .zip(self.data.drain(common..))
                .zip(own.added.drain(common..).zip(own.changed.drain(common..)))
                .map(|((entity, value), (added, changed))| Entry {
                    entity,
                    value,
                    added,
                    changed,
                })
                .collect();
        } else {
            self.dense.extend_from_slice(&src.dense[common..]);
            self.data.extend(grown);
            own.added.extend_from_slice(&theirs.added[common..]);
            own.changed.extend_from_slice(&theirs.changed[common..]);
        }
        own.stamps.fit(self.dense.len(), theirs.now);
        own.stamps.stamp_range(common..self.dense.len(), theirs.now);
        own.now = theirs.now;
        own.written.set(theirs.written.get());
        // As in `copy_changed`: no other copy of the pool may take a
        // delta from this one.
        own.unmarked.count();
        debug_assert!(self.dense == src.dense);
        debug_assert!(own.added == theirs.added && own.changed == theirs.changed);
        debug_assert!(own.removed.entries == theirs.removed.entries);
        Some(undo)
    }

    /// Undoes a [`save_delta`](Self::save_delta) (the last one not yet
    /// undone), putting back what it overwrote, last first.
    pub(crate) fn undo_delta(&mut self, undo: DeltaUndo<T>) {
        let own = self
            .changes
            .as_deref_mut()
            .expect("a set that took a delta keeps ticks");
        let now = own.now;
        let common = undo.len.min(self.dense.len());
        self.dense.truncate(undo.len);
        self.data.truncate(undo.len);
        own.added.truncate(undo.len);
        own.changed.truncate(undo.len);
        for entry in undo.tail {
            self.dense.push(entry.entity);
            self.data.push(entry.value);
            own.added.push(entry.added);
            own.changed.push(entry.changed);
        }
        own.stamps.fit(undo.len, now);
        own.stamps.stamp_range(common..undo.len, now);
        for (index, entry) in undo.entries.into_iter().rev() {
            let i = index as usize;
            self.dense[i] = entry.entity;
            self.data[i] = entry.value;
            own.added[i] = entry.added;
            own.changed[i] = entry.changed;
            own.stamps.stamp(i, now);
        }
        for r in undo.values.into_iter().rev() {
            let i = r.index as usize;
            self.data[i] = r.value;
            own.changed[i] = r.changed;
            own.stamps.stamp(i, now);
        }
        own.removed.unfollow(undo.log);
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::panic::{AssertUnwindSafe, catch_unwind};

    use super::*;
    use crate::change::ticks::ChangeTicks;

    /// A value whose clone panics for 99.
    #[derive(Debug, PartialEq)]
    struct Fragile(u32);

    impl Clone for Fragile {
        fn clone(&self) -> Self {
            assert_ne!(self.0, 99, "a clone of 99");
            Fragile(self.0)
        }
    }

    fn e(index: u32) -> Entity {
        Entity::new(index, NonZeroU32::MIN)
    }

    /// A tracked set of `n` entities at tick 1, and a saved copy of it.
    fn set_and_copy(n: u32) -> (SparseSet<Fragile>, SparseSet<Fragile>) {
        let mut set = SparseSet::new();
        set.changes = Some(Box::new(ChangeTicks::new(0, 1)));
        for i in 0..n {
            set.insert(e(i), Fragile(i)).unwrap();
        }
        let copy = set.copy_state(false);
        set.changes.as_mut().unwrap().now = 2;
        (set, copy)
    }

    /// Entities, values, added and changed ticks, removal log and its
    /// first number.
    type Parts = (Vec<Entity>, Vec<u32>, Vec<u32>, Vec<u32>, Vec<Entity>, u64);

    fn parts(set: &SparseSet<Fragile>) -> Parts {
        let c = set.changes.as_deref().unwrap();
        (
            set.dense.clone(),
            set.data.iter().map(|v| v.0).collect(),
            c.added.clone(),
            c.changed.clone(),
            c.removed.entries.iter().copied().collect(),
            c.removed.first,
        )
    }

    #[test]
    fn a_delta_after_removals_inserts_and_writes_undoes_to_the_copy() {
        let (mut set, mut copy) = set_and_copy(40);
        let before = parts(&copy);
        set.remove(e(3)).unwrap();
        set.remove(e(17)).unwrap();
        set.insert(e(50), Fragile(50)).unwrap();
        set.get_mut(e(20)).unwrap().0 = 200;
        let undo = copy.save_delta(&set, 1, 2, true).expect("4 of 40 differ");
        assert_eq!(parts(&copy), parts(&set));
        assert!(!undo.is_empty(copy.len()));
        copy.undo_delta(undo);
        assert_eq!(parts(&copy), before);
    }

    #[test]
    fn a_delta_over_a_quarter_of_the_positions_is_refused() {
        let (mut set, mut copy) = set_and_copy(8);
        let before = parts(&copy);
        set.remove(e(0)).unwrap();
        set.remove(e(1)).unwrap();
        set.remove(e(2)).unwrap();
        assert!(copy.save_delta(&set, 1, 2, true).is_none());
        assert_eq!(parts(&copy), before);
    }

    #[test]
    fn a_clone_that_panics_leaves_the_copy_as_it_was() {
        for grow in [false, true] {
            let (mut set, mut copy) = set_and_copy(40);
            let before = parts(&copy);
            set.remove(e(5)).unwrap();
            if grow {
                set.insert(e(60), Fragile(99)).unwrap();
            } else {
                set.get_mut(e(9)).unwrap().0 = 99;
            }
            let saved = catch_unwind(AssertUnwindSafe(|| copy.save_delta(&set, 1, 2, true)));
            assert!(saved.is_err(), "the clone of 99 panics");
            assert_eq!(parts(&copy), before, "grow: {grow}");
        }
    }
}
