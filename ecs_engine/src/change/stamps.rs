//! A summary of one tracked pool's changed ticks ([`BlockStamps`]): per
//! block of [`BLOCK`] dense positions, the latest tick at which a changed
//! tick in it may have been stored, or an entity may have been added,
//! removed or moved. A delta save (`SparseSet::copy_changed`, and a
//! ring's `SparseSet::save_delta`) reads the summary first and scans the
//! blocks it names only, so its cost follows the blocks written, not the
//! pool's length.
//! Blocks are grouped by [`GROUP`], with a stamp per group as well, so
//! the summary itself is read only where a group was written.
//!
//! Every store of a changed tick stamps its block with the current tick:
//! the sparse set's hooks (`ticks.rs`, which also stamp the positions a
//! structural change writes: a push, the hole a swap-remove fills, both
//! sides of a swap; a clear drops every stamp, so blocks made again are
//! stamped anew), and the `&mut T` and `Mut<T>`
//! view terms (`query/terms.rs`, `query/tracked.rs`; a term's block walk
//! stamps its whole range once, a lookup stamps one position). A stamp
//! may name a block none of whose ticks is that new (a `Mut<T>` item
//! never written, an entity a filter skipped): the scan then finds
//! nothing there; it never misses a write.
//!
//! What the summary promises: a changed tick stored, or a position's
//! entity changed, at tick `t` since the last time the pool's ticks
//! changed unmarked (`UnmarkedWrites`) left its block stamped at `t` or
//! later. Stamps can go back only with the ticks
//! themselves (a restore, a clamp, an import), and each of those counts
//! an unmarked write, after which no copy takes a delta from the pool
//! until it is copied whole again. A restore, or a clock set back by
//! `restore_change_clock`, also pulls every stamp the clock has not
//! reached back to the clock (`ChangeTicks::clock_moved`): a ring's
//! mirror undone to an older frame still carries its newest frame's
//! marks, which would otherwise read as ancient and hide the restored
//! ticks from the next delta.

use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use super::ticks;

/// Dense positions per block: 16 `u32` ticks, one 64-byte cache line.
pub(crate) const BLOCK: usize = 16;

/// Blocks per group: the blocks of one group are tested into a `u64`
/// mask.
pub(crate) const GROUP: usize = 64;

/// See the module docs: a stamp per block, and a stamp per group of
/// [`GROUP`] blocks (1,024 positions) stored with it, so a delta save
/// skips a group nobody wrote with one test. Atomic: the chunks of a
/// parallel walk that share a block stamp it from several threads.
#[derive(Debug, Default)]
pub(crate) struct BlockStamps {
    blocks: Vec<AtomicU32>,
    groups: Vec<AtomicU32>,
}

/// The stamps of an untracked pool: none (every stamp a no-op).
pub(crate) static NO_STAMPS: BlockStamps = BlockStamps {
    blocks: Vec::new(),
    groups: Vec::new(),
};

impl BlockStamps {
    /// The stamps of `len` positions, every block stamped `now`.
    pub(crate) fn new(len: usize, now: u32) -> Self {
        let mut stamps = BlockStamps::default();
        stamps.fit(len, now);
        stamps
    }

    /// One stamp per block of `len` positions (and per group): stamps
    /// added are `now`, stamps past the end dropped.
    #[inline]
    pub(crate) fn fit(&mut self, len: usize, now: u32) {
        let blocks = len.div_ceil(BLOCK);
        if self.blocks.len() != blocks {
            self.blocks.resize_with(blocks, || AtomicU32::new(now));
            self.groups
                .resize_with(blocks.div_ceil(GROUP), || AtomicU32::new(now));
        }
    }

    /// Stamps the block of position `i` with `now` (nothing when `i` is
    /// past the summary).
    #[inline]
    pub(crate) fn stamp(&self, i: usize, now: u32) {
        if let Some(block) = self.blocks.get(i / BLOCK) {
            block.store(now, Relaxed);
            self.groups[i / BLOCK / GROUP].store(now, Relaxed);
        }
    }

    /// Stamps the blocks of positions `range` with `now` (those past the
    /// summary excepted).
    #[inline]
    pub(crate) fn stamp_range(&self, range: Range<usize>, now: u32) {
        if range.is_empty() {
            return;
        }
        let end = ((range.end - 1) / BLOCK + 1).min(self.blocks.len());
        let blocks = range.start / BLOCK..end;
        if blocks.is_empty() {
            return;
        }
        for block in &self.blocks[blocks.clone()] {
            block.store(now, Relaxed);
        }
        for group in &self.groups[blocks.start / GROUP..(blocks.end - 1) / GROUP + 1] {
            group.store(now, Relaxed);
        }
    }

    /// Stamps every block with `now`.
    pub(crate) fn fill(&mut self, now: u32) {
        for stamp in self.blocks.iter_mut().chain(&mut self.groups) {
            *stamp.get_mut() = now;
        }
    }

    /// Clamps every stamp older than [`ticks::MAX_CHANGE_AGE`] at `now`
    /// to that age, as the ticks are.
    pub(crate) fn clamp(&mut self, now: u32) {
        let oldest = now.wrapping_sub(ticks::MAX_CHANGE_AGE);
        for stamp in self.blocks.iter_mut().chain(&mut self.groups) {
            let stamp = stamp.get_mut();
            if now.wrapping_sub(*stamp) > ticks::MAX_CHANGE_AGE {
                *stamp = oldest;
            }
        }
    }

    /// Sets every stamp for which `ahead` holds to `now` (a clock set
    /// back: see `ChangeTicks::clock_moved`).
    pub(crate) fn pull_back(&mut self, now: u32, ahead: impl Fn(u32) -> bool) {
        for stamp in self.blocks.iter_mut().chain(&mut self.groups) {
            let stamp = stamp.get_mut();
            if ahead(*stamp) {
                *stamp = now;
            }
        }
    }

    /// Makes the stamps equal to `src`'s, reusing the allocations.
    pub(crate) fn copy_from(&mut self, src: &BlockStamps) {
        copy_stamps(&mut self.blocks, &src.blocks);
        copy_stamps(&mut self.groups, &src.groups);
    }

    /// Calls `f` with the range of positions (below `len`) of every
    /// block stamped after `since`, read at `now`, in order; with every
    /// block's when the summary does not cover `len` positions.
    ///
    /// A group stamped after `since` has its blocks' stamps tested into
    /// a bit mask, without a branch per stamp: which blocks were written
    /// follows no pattern a branch predictor could learn.
    pub(crate) fn each_newer_block(
        &self,
        len: usize,
        since: u32,
        now: u32,
        mut f: impl FnMut(Range<usize>),
    ) {
        let block = |b: usize| b * BLOCK..((b + 1) * BLOCK).min(len);
        let blocks = len.div_ceil(BLOCK);
        if self.blocks.len() != blocks || self.groups.len() != blocks.div_ceil(GROUP) {
            (0..blocks).for_each(|b| f(block(b)));
            return;
        }
        let bound = now.wrapping_sub(since).min(ticks::STALE_AGE);
        let newer = |stamp: &AtomicU32| now.wrapping_sub(stamp.load(Relaxed)) < bound;
        for (g, group) in self.groups.iter().enumerate() {
            if !newer(group) {
                continue;
            }
            let first = g * GROUP;
            let mut mask = 0_u64;
            for (k, stamp) in self.blocks[first..(first + GROUP).min(blocks)]
                .iter()
                .enumerate()
            {
                mask |= u64::from(newer(stamp)) << k;
            }
            while mask != 0 {
                f(block(first + mask.trailing_zeros() as usize));
                mask &= mask - 1;
            }
        }
    }

    /// Heap bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        (self.blocks.capacity() + self.groups.capacity()) * std::mem::size_of::<AtomicU32>()
    }
}

/// Makes `own` equal to `src`, reusing its allocation.
fn copy_stamps(own: &mut Vec<AtomicU32>, src: &[AtomicU32]) {
    own.truncate(src.len());
    let kept = own.len();
    for (own, theirs) in own.iter_mut().zip(src) {
        *own.get_mut() = theirs.load(Relaxed);
    }
    own.extend(src[kept..].iter().map(|s| AtomicU32::new(s.load(Relaxed))));
}

impl Clone for BlockStamps {
    fn clone(&self) -> Self {
        let mut copy = BlockStamps::default();
        copy.copy_from(self);
        copy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(stamps: &BlockStamps, len: usize, since: u32, now: u32) -> Vec<Range<usize>> {
        let mut ranges = Vec::new();
        stamps.each_newer_block(len, since, now, |r| ranges.push(r));
        ranges
    }

    #[test]
    fn only_blocks_stamped_after_since_are_named() {
        let mut stamps = BlockStamps::new(40, 5);
        assert_eq!(ranges(&stamps, 40, 5, 9), Vec::<Range<usize>>::new());
        stamps.stamp(17, 8);
        stamps.stamp(39, 9);
        assert_eq!(ranges(&stamps, 40, 5, 9), vec![16..32, 32..40]);
        assert_eq!(ranges(&stamps, 40, 8, 9), vec![32..40]);
        stamps.fill(9);
        assert_eq!(ranges(&stamps, 40, 8, 9).len(), 3);
    }

    #[test]
    fn blocks_past_the_first_64_are_named() {
        let stamps = BlockStamps::new(16 * 130 + 3, 1);
        for i in [0, 16 * 63, 16 * 64 + 5, 16 * 130 + 2] {
            stamps.stamp(i, 7);
        }
        let starts: Vec<usize> = ranges(&stamps, 16 * 130 + 3, 6, 7)
            .into_iter()
            .map(|r| r.start)
            .collect();
        assert_eq!(starts, vec![0, 16 * 63, 16 * 64, 16 * 130]);
    }

    #[test]
    fn a_range_stamps_every_block_it_touches() {
        let stamps = BlockStamps::new(64, 1);
        stamps.stamp_range(15..17, 3);
        assert_eq!(ranges(&stamps, 64, 2, 3), vec![0..16, 16..32]);
        stamps.stamp_range(63..70, 4);
        assert_eq!(ranges(&stamps, 64, 3, 4), vec![48..64]);
        stamps.stamp_range(5..5, 5);
        stamps.stamp_range(64..80, 5);
        assert_eq!(ranges(&stamps, 64, 4, 5), Vec::<Range<usize>>::new());
        // Across a group's end.
        let stamps = BlockStamps::new(16 * 200, 1);
        stamps.stamp_range(16 * 63 + 3..16 * 65, 2);
        assert_eq!(
            ranges(&stamps, 16 * 200, 1, 2),
            vec![1008..1024, 1024..1040]
        );
    }

    #[test]
    fn a_summary_that_does_not_cover_the_pool_names_everything() {
        let mut stamps = BlockStamps::new(16, 1);
        assert_eq!(ranges(&stamps, 40, 5, 9), vec![0..16, 16..32, 32..40]);
        stamps.fit(40, 1);
        assert_eq!(ranges(&stamps, 40, 5, 9), Vec::<Range<usize>>::new());
        stamps.fit(3, 1);
        stamps.stamp(100, 9);
        assert_eq!(ranges(&stamps, 3, 5, 9), Vec::<Range<usize>>::new());
    }

    #[test]
    fn clamp_and_copy_keep_the_summary_in_step() {
        let now = ticks::MAX_CHANGE_AGE + 10;
        let mut stamps = BlockStamps::new(20, 0);
        stamps.stamp(19, now);
        stamps.clamp(now);
        let mut copy = BlockStamps::new(100, 3);
        copy.copy_from(&stamps);
        assert_eq!(copy.blocks.len(), 2);
        assert_eq!(copy.groups.len(), 1);
        assert_eq!(copy.blocks[0].load(Relaxed), now - ticks::MAX_CHANGE_AGE);
        assert_eq!(copy.blocks[1].load(Relaxed), now);
        let mut grown = BlockStamps::new(0, 0);
        grown.copy_from(&copy);
        assert_eq!(ranges(&grown, 20, now - 1, now), vec![16..20]);
    }
}
