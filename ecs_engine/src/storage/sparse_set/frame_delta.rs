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
use crate::change::ticks::LogUndo;
use crate::storage::prefetch::prefetch;

/// A delta that would copy more than one position in this many is not
/// taken: a whole copy (two slice copies per array) is faster than that
/// many positions copied and kept one by one.
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
        let positions = newer_positions(
            theirs,
            (since, now),
            common,
            moved.then_some((&self.dense[..], &src.dense[..])),
        );
        if positions.len() > common / WHOLE_FROM {
            return None;
        }
        let log = own.removed.follow(&theirs.removed)?;
        let mut undo = DeltaUndo {
            len,
            values: Vec::new(),
            entries: Vec::new(),
            tail: Vec::new(),
            log,
        };
        for (n, &index) in positions.iter().enumerate() {
            if let Some(&ahead) = positions.get(n + PREFETCH_AHEAD) {
                let ahead = ahead as usize;
                prefetch(self.data.as_ptr().wrapping_add(ahead));
                prefetch(src.data.as_ptr().wrapping_add(ahead));
                prefetch(own.changed.as_ptr().wrapping_add(ahead));
            }
            let i = index as usize;
            let value = std::mem::replace(&mut self.data[i], src.data[i].clone());
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
            self.data.extend_from_slice(&src.data[common..]);
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
