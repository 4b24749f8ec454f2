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
        }
    }

    /// Makes the set equal to `src` (entities, values, change ticks and
    /// removal log), cloning into the set's own allocations where they
    /// are large enough. The set keeps its identity; views see the
    /// change as a clear (they check their cached runs again). A set that
    /// tracks changes where `src` does not keeps tracking, every value
    /// stamped with `now` (as [`Registry::track_changes`](crate::Registry::track_changes) does), its
    /// removal log kept.
    pub(crate) fn restore_from(&mut self, src: &Self, now: u32) {
        self.sparse.pages.clone_from(&src.sparse.pages);
        self.dense.clone_from(&src.dense);
        self.data.clone_from(&src.data);
        match (&mut self.changes, &src.changes) {
            (Some(own), Some(saved)) => own.copy_from(saved),
            (own @ None, saved) => own.clone_from(saved),
            (Some(own), None) => {
                let fresh = ChangeTicks::new(src.len(), now);
                (own.now, own.added, own.changed) = (now, fresh.added, fresh.changed);
            }
        }
        self.runs.changed_all();
    }
}
