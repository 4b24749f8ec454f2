//! Whole-set copies for in-memory states (`registry/state.rs`): a copy
//! with its change ticks and removal log, and a restore that makes a set
//! equal to a copy while reusing the set's allocations.

use super::SparseSet;
use crate::change::ticks::ChangeTicks;
use crate::storage::lookup::RunInfo;

impl<T: Clone> SparseSet<T> {
    /// A copy of the set, change ticks and removal log included, with its
    /// own identity for views (a fresh run cache).
    pub(crate) fn copy_state(&self) -> Self {
        SparseSet {
            sparse: self.sparse.clone(),
            dense: self.dense.clone(),
            data: self.data.clone(),
            runs: RunInfo::default(),
            changes: self.changes.clone(),
            // A copy is never claimed; the registry's next exclusive
            // borrow takes its pointers once it is restored into a pool.
            raw: super::RawParts::NULL,
        }
    }

    /// Makes the set equal to `src` (entities, values, change ticks and
    /// removal log), cloning into the set's own allocations where they
    /// are large enough. The set keeps its identity; views see the
    /// change as a clear (they check their cached runs again). A set that
    /// tracks changes where `src` does not keeps tracking, every value
    /// stamped with `now` (as [`Registry::track_changes`](crate::Registry::track_changes) does), its
    /// removal log kept.
    ///
    /// With `same_structure` (the caller knows both sets hold the same
    /// entities in the same dense order) only the values and change
    /// ticks are copied, and views see no change.
    pub(crate) fn restore_from(&mut self, src: &Self, now: u32, same_structure: bool) {
        debug_assert!(!same_structure || self.dense == src.dense);
        if !same_structure {
            self.sparse.pages.clone_from(&src.sparse.pages);
            self.dense.clone_from(&src.dense);
        }
        self.data.clone_from(&src.data);
        match (&mut self.changes, &src.changes) {
            (Some(own), Some(saved)) => own.copy_from(saved),
            (own @ None, saved) => own.clone_from(saved),
            (Some(own), None) => {
                let fresh = ChangeTicks::new(src.len(), now);
                (own.now, own.added, own.changed) = (now, fresh.added, fresh.changed);
            }
        }
        if !same_structure {
            self.runs.changed_all();
        }
    }
}

impl<T> SparseSet<T> {
    /// Who the set is and how often its structure changed (see
    /// `RunInfo`): equal stamps at two moments mean the same entities in
    /// the same dense order.
    pub(crate) fn stamp(&self) -> (u64, u64) {
        (self.runs.id, self.runs.revision)
    }
}
