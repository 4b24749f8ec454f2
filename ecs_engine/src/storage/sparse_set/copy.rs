//! Whole-set copies for in-memory states (`registry/state.rs`): a copy
//! with its change ticks and removal log, and a restore that makes a set
//! equal to a copy while reusing the set's allocations.

use super::SparseSet;
use crate::change::ticks::{self, ChangeTicks};
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
            self.sparse
                .copy_mapping(&src.sparse, &self.dense, &src.dense);
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
        if let Some(c) = &self.changes {
            c.unmarked.count();
        }
    }
}

/// A component a delta save replaced in a copy: its dense position, the
/// value and its added and changed ticks before the save (an undo frame
/// of a [`StateRing`](crate::StateRing) puts them back).
pub(crate) struct Replaced<T> {
    pub(crate) index: u32,
    pub(crate) value: T,
    pub(crate) added: u32,
    pub(crate) changed: u32,
}

impl<T: Clone> SparseSet<T> {
    /// Copies from `src` the components written after the tick `since`
    /// (as the changed ticks of `src` say when `src_ticks`, of `self`
    /// otherwise), with their ticks; the others are left as they are.
    /// The caller knows that both sets hold the same entities in the same
    /// order and that, but for those writes, their values and ticks are
    /// equal (nothing was written unmarked since, see `UnmarkedWrites`).
    /// With `replaced`, the values it overwrites go there with their old
    /// ticks (no clone: moved out). Returns `false`, changing nothing,
    /// when either set keeps no ticks.
    pub(crate) fn copy_changed(
        &mut self,
        src: &Self,
        since: u32,
        now: u32,
        src_ticks: bool,
        mut replaced: Option<&mut Vec<Replaced<T>>>,
    ) -> bool {
        debug_assert!(self.dense == src.dense);
        let (Some(own), Some(theirs)) = (self.changes.as_deref_mut(), src.changes.as_deref())
        else {
            return false;
        };
        let (written, at) = if src_ticks {
            (&theirs.changed, theirs.written.get())
        } else {
            (&own.changed, own.written.get())
        };
        let fresh = if ticks::newer(at, since, now) {
            newer_positions(written, since, now)
        } else {
            Vec::new()
        };
        for i in fresh {
            let i = i as usize;
            let value = src.data[i].clone();
            let old = std::mem::replace(&mut self.data[i], value);
            if let Some(replaced) = replaced.as_deref_mut() {
                replaced.push(Replaced {
                    index: i as u32,
                    value: old,
                    added: own.added[i],
                    changed: own.changed[i],
                });
            }
            own.added[i] = theirs.added[i];
            own.changed[i] = theirs.changed[i];
        }
        own.now = theirs.now;
        own.written.set(theirs.written.get());
        // Values written without a mark, as far as anyone else can tell
        // (the other copies of this pool must not take a delta from it).
        own.unmarked.count();
        true
    }

    /// Puts back what a [`copy_changed`](Self::copy_changed) replaced,
    /// last first.
    pub(crate) fn put_back(&mut self, replaced: Vec<Replaced<T>>) {
        let own = self
            .changes
            .as_deref_mut()
            .expect("a set that took a delta keeps ticks");
        for r in replaced.into_iter().rev() {
            let i = r.index as usize;
            self.data[i] = r.value;
            own.added[i] = r.added;
            own.changed[i] = r.changed;
        }
    }
}

/// The positions of the ticks newer than `since` (at tick `now`), in
/// order: blocks of 16 ticks are tested at once (a loop the compiler
/// turns into vector compares), and only a block holding a newer tick is
/// walked one by one.
fn newer_positions(ticks: &[u32], since: u32, now: u32) -> Vec<u32> {
    const BLOCK: usize = 16;
    // `ticks::newer` with its bound taken out of the loop.
    let bound = now.wrapping_sub(since).min(ticks::STALE_AGE);
    let newer = |tick: u32| now.wrapping_sub(tick) < bound;
    let mut positions = Vec::new();
    for (b, block) in ticks.chunks(BLOCK).enumerate() {
        if block.iter().fold(false, |any, &tick| any | newer(tick)) {
            let first = (b * BLOCK) as u32;
            for (k, &tick) in block.iter().enumerate() {
                if newer(tick) {
                    positions.push(first + k as u32);
                }
            }
        }
    }
    positions
}

impl<T> SparseSet<T> {
    /// Who the set is and how often its structure changed (see
    /// `RunInfo`): equal stamps at two moments mean the same entities in
    /// the same dense order.
    pub(crate) fn stamp(&self) -> (u64, u64) {
        (self.runs.id, self.runs.revision)
    }
}
