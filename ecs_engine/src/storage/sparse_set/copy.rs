//! Whole-set copies for in-memory states (`registry/state.rs`): a copy
//! with its change ticks and removal log, and a restore that makes a set
//! equal to a copy while reusing the set's allocations.
//!
//! A saved copy keeps no sparse index: it is only ever read by dense
//! position (a restore, a delta, an undo), and a set of a few thousand
//! entities spread over a large index range would copy 16 KiB pages per
//! save for nothing. A restore into a live set re-points that set's slots
//! from the copy's dense array instead.

use super::SparseSet;
use std::ops::Range;

use crate::Entity;
use crate::change::stamps;
use crate::change::ticks::{self, ChangeTicks};
use crate::storage::lookup::{RunInfo, SparseIndex};
use crate::storage::prefetch::prefetch;

/// Which side of a [`SparseSet::restore_from`] is a saved copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CopySide {
    /// The set is a saved copy (a save): it keeps no sparse index.
    Into,
    /// The source is a saved copy (a restore): the set's index is
    /// re-pointed from the copy's dense array.
    From,
}

impl<T: Clone> SparseSet<T> {
    /// A copy of the set, change ticks and removal log included, with its
    /// own identity for views (a fresh run cache). With `indexed`, its
    /// sparse index is built from its dense array (a copy that becomes a
    /// registry's pool); otherwise it has none (a saved copy, see the
    /// module docs).
    pub(crate) fn copy_state(&self, indexed: bool) -> Self {
        let mut sparse = SparseIndex::default();
        if indexed {
            sparse.remap(&[], &self.dense);
        }
        SparseSet {
            sparse,
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
    /// are large enough; `side` says which of the two is a saved copy
    /// (whose sparse index is empty). The set keeps its identity; views
    /// see the change as a clear (they check their cached runs again). A
    /// set that tracks changes where `src` does not keeps tracking, every
    /// value stamped with `now` (as [`Registry::track_changes`](crate::Registry::track_changes) does), its
    /// removal log kept.
    ///
    /// With `same_structure` (the caller knows both sets hold the same
    /// entities in the same dense order) only the values and change
    /// ticks are copied, and views see no change.
    pub(crate) fn restore_from(
        &mut self,
        src: &Self,
        now: u32,
        same_structure: bool,
        side: CopySide,
    ) {
        debug_assert!(!same_structure || self.dense == src.dense);
        if !same_structure {
            if side == CopySide::From {
                self.sparse.remap(&self.dense, &src.dense);
            }
            self.dense.clone_from(&src.dense);
        }
        self.data.clone_from(&src.data);
        match (&mut self.changes, &src.changes) {
            (Some(own), Some(saved)) => own.copy_from(saved),
            (own @ None, saved) => own.clone_from(saved),
            (Some(own), None) => {
                let fresh = ChangeTicks::new(src.len(), now);
                (own.now, own.added, own.changed, own.stamps) =
                    (now, fresh.added, fresh.changed, fresh.stamps);
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

impl<T: Clone> SparseSet<T> {
    /// Copies from `src` the components written after the tick `since`
    /// (as the changed ticks of `src` say when `src_ticks`, of `self`
    /// otherwise), with their changed ticks; the others are left as they
    /// are. The caller knows that both sets hold the same entities in the
    /// same order and that, but for those writes, their values and ticks
    /// are equal (nothing was written unmarked since, see
    /// `UnmarkedWrites`; so the added ticks are all equal). Returns
    /// `false`, changing nothing, when either set keeps no ticks. (A
    /// ring's save, which keeps what it replaces, is
    /// [`save_delta`](Self::save_delta).)
    pub(crate) fn copy_changed(
        &mut self,
        src: &Self,
        since: u32,
        now: u32,
        src_ticks: bool,
    ) -> bool {
        debug_assert!(self.dense == src.dense);
        let (Some(own), Some(theirs)) = (self.changes.as_deref_mut(), src.changes.as_deref())
        else {
            return false;
        };
        let writer = if src_ticks { theirs } else { &*own };
        let fresh = if ticks::newer(writer.written.get(), since, now) {
            newer_positions(writer, (since, now), src.len(), None)
        } else {
            Vec::new()
        };
        for (n, run) in runs(&fresh) {
            if let Some(&ahead) = fresh.get(n + PREFETCH_AHEAD) {
                let ahead = ahead as usize;
                prefetch(self.data.as_ptr().wrapping_add(ahead));
                prefetch(src.data.as_ptr().wrapping_add(ahead));
                prefetch(own.changed.as_ptr().wrapping_add(ahead));
                prefetch(theirs.changed.as_ptr().wrapping_add(ahead));
            }
            debug_assert_eq!(own.added[run.clone()], theirs.added[run.clone()]);
            if run.len() >= SLICE_RUN {
                self.data[run.clone()].clone_from_slice(&src.data[run.clone()]);
                own.changed[run.clone()].copy_from_slice(&theirs.changed[run.clone()]);
            } else {
                for i in run.clone() {
                    self.data[i] = src.data[i].clone();
                    own.changed[i] = theirs.changed[i];
                }
            }
            own.stamps.stamp_range(run, theirs.now);
        }
        own.now = theirs.now;
        own.written.set(theirs.written.get());
        // Values written without a mark, as far as anyone else can tell
        // (the other copies of this pool must not take a delta from it).
        own.unmarked.count();
        true
    }
}

/// The runs of consecutive positions in `positions` (ascending), each
/// with the index in `positions` of its first one: a delta of neighbours
/// copies them as slices.
fn runs(positions: &[u32]) -> impl Iterator<Item = (usize, Range<usize>)> + '_ {
    let mut n = 0;
    std::iter::from_fn(move || {
        let first = n;
        let start = *positions.get(first)? as usize;
        n += 1;
        while positions.get(n) == Some(&((start + n - first) as u32)) {
            n += 1;
        }
        Some((first, start..start + n - first))
    })
}

/// The shortest run a delta copies as slices (shorter ones one by one:
/// a slice copy is a call).
const SLICE_RUN: usize = 8;

/// How many positions (or blocks) ahead a delta's loops ask for the
/// cache lines they will touch: the positions written are scattered, so
/// each one is a cache miss the hardware prefetcher cannot foresee.
pub(super) const PREFETCH_AHEAD: usize = 8;

/// The positions below `len` whose changed ticks in `changes` are newer
/// than `since` (at tick `now`) or, given `entities` (two dense arrays),
/// whose entities differ between the two; in order. Only the blocks its
/// summary stamped after `since` are scanned (`change/stamps.rs`; every
/// write and every structural change stamps its block, see the hooks of
/// `change/ticks.rs`), each into a bit mask without a branch per
/// position.
pub(super) fn newer_positions(
    changes: &ChangeTicks,
    (since, now): (u32, u32),
    len: usize,
    entities: Option<(&[Entity], &[Entity])>,
) -> Vec<u32> {
    const { assert!(stamps::BLOCK <= 32, "a block's ticks fit a u32 mask") };
    // `ticks::newer` with its bound taken out of the loop.
    let bound = now.wrapping_sub(since).min(ticks::STALE_AGE);
    let ticks = &changes.changed;
    let mut blocks = Vec::new();
    changes
        .stamps
        .each_newer_block(ticks.len(), since, now, |block| {
            if block.start < len {
                blocks.push(block.start..block.end.min(len));
            }
        });
    let mut positions = Vec::with_capacity(blocks.len() * stamps::BLOCK);
    for (n, block) in blocks.iter().enumerate() {
        if let Some(ahead) = blocks.get(n + PREFETCH_AHEAD) {
            prefetch(ticks.as_ptr().wrapping_add(ahead.start));
            if let Some((a, b)) = entities {
                // A block's 16 entities: 128 bytes, two cache lines.
                for at in [ahead.start, ahead.start + stamps::BLOCK / 2] {
                    prefetch(a.as_ptr().wrapping_add(at));
                    prefetch(b.as_ptr().wrapping_add(at));
                }
            }
        }
        let first = block.start as u32;
        let mut newer = 0_u32;
        for (k, &tick) in ticks[block.clone()].iter().enumerate() {
            newer |= u32::from(now.wrapping_sub(tick) < bound) << k;
        }
        if let Some((a, b)) = entities {
            for (k, (a, b)) in a[block.clone()].iter().zip(&b[block.clone()]).enumerate() {
                newer |= u32::from(a != b) << k;
            }
        }
        while newer != 0 {
            positions.push(first + newer.trailing_zeros());
            newer &= newer - 1;
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

#[cfg(test)]
mod tests {
    use super::runs;

    #[test]
    fn runs_split_positions_where_they_skip() {
        let found: Vec<_> = runs(&[2, 3, 4, 9, 11, 12]).collect();
        assert_eq!(found, vec![(0, 2..5), (3, 9..10), (4, 11..13)]);
        assert_eq!(runs(&[]).count(), 0);
        assert_eq!(runs(&[7]).collect::<Vec<_>>(), vec![(0, 7..8)]);
    }
}
