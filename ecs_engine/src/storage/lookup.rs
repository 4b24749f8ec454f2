//! How a sparse set is found and joined: [`SparseIndex`], the paged sparse
//! array from entity index to dense position, and [`RunInfo`], the set's
//! identity, revision and log of written dense positions with the cache of
//! where a driving set's whole run sits in it, which let views join sets by
//! position (`query/traits.rs`).
//!
//! A page of [`PAGE_LEN`] slots is allocated the first time an index in its
//! range is stored, so one entity with index 10,000,000 costs one page, not
//! ten million slots.

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::Entity;

/// Slots per page of the sparse array (16 KiB of `u32` per page). Under
/// Miri 256: Miri fills a fresh page slot by slot (about 0.6 s for 4,096
/// slots, paid by every test that inserts a component), and small pages
/// make more tests cross page boundaries.
pub const PAGE_LEN: usize = if cfg!(miri) { 256 } else { 4096 };
pub(super) const EMPTY: u32 = u32::MAX;

/// A paged map from entity index to dense position.
#[derive(Debug, Default, Clone)]
pub(crate) struct SparseIndex {
    /// Fixed-size pages: the slot's offset in a page needs no bounds check.
    pub(super) pages: Vec<Option<Box<Page>>>,
}

/// One page of the sparse array.
type Page = [u32; PAGE_LEN];

impl SparseIndex {
    #[inline]
    pub(crate) fn get(&self, index: u32) -> Option<usize> {
        let index = index as usize;
        let page = self.pages.get(index / PAGE_LEN)?.as_ref()?;
        let slot = page[index % PAGE_LEN];
        (slot != EMPTY).then_some(slot as usize)
    }

    /// Prefetches the slot of `index` (nothing when its page is missing).
    #[inline]
    pub(crate) fn prefetch(&self, index: u32) {
        let index = index as usize;
        if let Some(Some(page)) = self.pages.get(index / PAGE_LEN) {
            crate::storage::prefetch::prefetch(&page[index % PAGE_LEN]);
        }
    }

    /// The slot of `index`, its page allocated if missing.
    #[inline(always)]
    pub(super) fn slot_mut(&mut self, index: u32) -> &mut u32 {
        let index = index as usize;
        let page_number = index / PAGE_LEN;
        if page_number >= self.pages.len() {
            self.pages.resize_with(page_number + 1, || None);
        }
        let page = self.pages[page_number].get_or_insert_with(new_page);
        &mut page[index % PAGE_LEN]
    }

    /// Allocates the page of `index` if it is missing.
    pub(super) fn add_page(&mut self, index: u32) {
        self.slot_mut(index);
    }

    /// Sets the slot of `index` to `dense` if it is empty (its page
    /// allocated if missing) and returns what it held: [`EMPTY`] when it
    /// took `dense`. One lookup of the page when it exists.
    #[inline(always)]
    pub(super) fn claim(&mut self, index: u32, dense: usize) -> u32 {
        if let Some(slot) = self.slot_present_mut(index) {
            let held = *slot;
            if held == EMPTY {
                *slot = dense as u32;
            }
            return held;
        }
        self.set(index, dense);
        EMPTY
    }

    #[inline]
    pub(crate) fn set(&mut self, index: u32, dense: usize) {
        *self.slot_mut(index) = dense as u32;
    }

    /// Maps the `count` indices from `first` to the dense positions from
    /// `dense`, in order, page by page.
    pub(super) fn fill(&mut self, first: u32, count: u32, dense: usize) {
        let (mut index, end) = (first as usize, first as usize + count as usize);
        let mut position = dense as u32;
        while index < end {
            let (page_number, low) = (index / PAGE_LEN, index % PAGE_LEN);
            let high = PAGE_LEN.min(low + (end - index));
            if page_number >= self.pages.len() {
                self.pages.resize_with(page_number + 1, || None);
            }
            let page = self.pages[page_number].get_or_insert_with(new_page);
            for slot in &mut page[low..high] {
                *slot = position;
                position += 1;
            }
            index += high - low;
        }
    }

    /// [`set`](Self::set) for an index whose page exists (an index stored
    /// in the set); does nothing otherwise, never allocates.
    #[inline]
    pub(super) fn set_present(&mut self, index: u32, dense: usize) {
        let index = index as usize;
        if let Some(Some(page)) = self.pages.get_mut(index / PAGE_LEN) {
            page[index % PAGE_LEN] = dense as u32;
        }
    }

    /// The slot of `index` when its page exists; never allocates.
    #[inline]
    pub(super) fn slot_present_mut(&mut self, index: u32) -> Option<&mut u32> {
        let index = index as usize;
        let page = self.pages.get_mut(index / PAGE_LEN)?.as_mut()?;
        Some(&mut page[index % PAGE_LEN])
    }

    #[inline]
    pub(crate) fn clear_slot(&mut self, index: u32) {
        let index = index as usize;
        if let Some(Some(page)) = self.pages.get_mut(index / PAGE_LEN) {
            page[index % PAGE_LEN] = EMPTY;
        }
    }

    /// Makes the index map `new_dense` (a set's entities, in dense order)
    /// when it maps `old_dense` now, writing only the slots of positions
    /// whose entity differs: first it empties those of `old_dense`, then it
    /// sets those of `new_dense` (so an entity that moved ends at its new
    /// position). A restore a few frames back, where most entities kept
    /// their positions, costs a compare of the two arrays and the moved
    /// entities. Pages only the old mapping had stay allocated, empty:
    /// lookups read them as missing pages.
    pub(crate) fn remap(&mut self, old_dense: &[Entity], new_dense: &[Entity]) {
        for (position, entity) in old_dense.iter().enumerate() {
            if new_dense.get(position) != Some(entity) {
                self.clear_slot(entity.index());
            }
        }
        for (position, entity) in new_dense.iter().enumerate() {
            if old_dense.get(position) != Some(entity) {
                self.set(entity.index(), position);
            }
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        let pages = self.pages.iter().flatten().count();
        self.pages.capacity() * std::mem::size_of::<Option<Box<Page>>>() + pages * PAGE_LEN * 4
    }
}

/// A page of empty slots, allocated on the heap directly.
#[cold]
fn new_page() -> Box<Page> {
    vec![EMPTY; PAGE_LEN]
        .into_boxed_slice()
        .try_into()
        .expect("PAGE_LEN slots")
}

// --- runs ------------------------------------------------------------------

/// What views need to join this set with a driving set by position without
/// comparing every handle on every pass: who the set is, how often its
/// structure changed, which dense positions changed lately, and where the
/// driver's whole run last sat in it.
///
/// The change log lets a view re-check only what changed since a cached
/// check: a structural change costs in proportion to the positions it
/// wrote, not to the size of the join.
#[derive(Debug)]
pub(crate) struct RunInfo {
    /// Unique among all sets of the process; never 0.
    pub(crate) id: u64,
    /// Bumped by every structural change (an entity added or removed).
    pub(crate) revision: u64,
    /// The latest entry of the log, kept out of `log` so that the next
    /// write one position on costs a compare and an increment: positions
    /// `open_start..open_end`, written one after the other by the last
    /// `open_end - open_start` changes. Both [`EMPTY`] when no such run
    /// is open (after a clear, or after the last component was removed).
    open_start: u32,
    /// See `open_start`.
    open_end: u32,
    /// The older dense positions written by the structural changes after
    /// revision `log_from`, as ranges in revision order.
    log: Vec<Change>,
    /// Every change after this revision is in `log` or the open entry.
    pub(super) log_from: u64,
    /// The last whole-run lookups against a few drivers, one slot per
    /// driver id modulo [`RUN_CACHE_SLOTS`] (a set joined with several
    /// drivers, like `C` with `D` in one system and with `E` in another,
    /// keeps a result for each).
    pub(crate) cache: Mutex<[RunCache; RUN_CACHE_SLOTS]>,
}

/// Dense positions `start..end` written one after the other by the
/// structural changes numbered up to `last` (pushes in a row share one
/// entry; the first write is revision `last + 1 - (end - start)`), so the
/// part written after any revision is known exactly.
#[derive(Debug, Clone, Copy)]
struct Change {
    last: u64,
    start: u32,
    end: u32,
}

impl Change {
    /// The revision of the entry's first write.
    #[inline]
    fn first_revision(&self) -> u64 {
        self.last + 1 - u64::from(self.end - self.start)
    }
}

/// Entries the change log keeps at least before it forgets old ones; it
/// keeps up to one per [`LOG_SHARE`] components when the set is larger.
const LOG_MIN: usize = 256;
/// See [`LOG_MIN`].
const LOG_SHARE: usize = 64;

impl RunInfo {
    /// Records a structural change that wrote dense position `position`
    /// of a set now holding `len` components. A position at or past `len`
    /// (the last component removed) holds nothing a view could re-check,
    /// so it starts no entry (views re-check positions below the length
    /// only).
    #[inline]
    pub(crate) fn changed(&mut self, position: usize, len: usize) {
        let position = position as u32;
        self.revision += 1;
        if position == self.open_end {
            self.open_end += 1;
        } else if (position as usize) < len || self.open_start != self.open_end {
            self.reopen(position, position + 1, len);
        }
    }

    /// Records `end - start` structural changes that appended dense
    /// positions `start..end` one after the other (a batch of pushes), as
    /// that many [`changed`](Self::changed) calls would.
    pub(crate) fn pushed(&mut self, start: usize, end: usize) {
        if start >= end {
            return;
        }
        let (start, end) = (start as u32, end as u32);
        self.revision += u64::from(end - start);
        if start == self.open_end {
            self.open_end = end;
            return;
        }
        self.reopen(start, end, end as usize);
    }

    /// The slow path of [`changed`](Self::changed) and
    /// [`pushed`](Self::pushed), which already counted the `end - start`
    /// changes: the open entry moves into the log (whose oldest half is
    /// forgotten when it grew too long) and `start..end` opens the next
    /// one, unless it lies past the length `len`.
    #[inline(never)]
    fn reopen(&mut self, start: u32, end: u32, len: usize) {
        if self.open_start != self.open_end {
            self.log.push(Change {
                last: self.revision - u64::from(end - start),
                start: self.open_start,
                end: self.open_end,
            });
            if self.log.len() > LOG_MIN.max(len / LOG_SHARE) {
                let forget = self.log.len() / 2;
                self.log_from = self.log[forget - 1].last;
                self.log.drain(..forget);
            }
        }
        (self.open_start, self.open_end) = if (start as usize) < len {
            (start, end)
        } else {
            (EMPTY, EMPTY)
        };
    }

    /// Records a change that may have written any position (a clear).
    pub(crate) fn changed_all(&mut self) {
        self.revision += 1;
        self.log.clear();
        (self.open_start, self.open_end) = (EMPTY, EMPTY);
        self.log_from = self.revision;
    }

    /// The dense position ranges written after revision `since`, or
    /// `None` when the log no longer reaches back that far.
    #[inline]
    pub(crate) fn changes_since(
        &self,
        since: u64,
    ) -> Option<impl Iterator<Item = std::ops::Range<usize>> + '_> {
        if since < self.log_from || since > self.revision {
            return None;
        }
        let open = Change {
            last: self.revision,
            start: self.open_start,
            end: self.open_end,
        };
        let open = (open.start != open.end).then_some(open);
        let first = self.log.partition_point(|c| c.last <= since);
        let entries = self.log[first..].iter().copied().chain(open);
        Some(entries.map(move |c| {
            let skip = (since + 1).saturating_sub(c.first_revision()) as usize;
            c.start as usize + skip..c.end as usize
        }))
    }
}

/// Drivers remembered per set by the run cache.
pub(crate) const RUN_CACHE_SLOTS: usize = 4;

/// Where a driver's whole dense array sat, as one run, in a set's dense
/// array, for given revisions of both; `driver_id == 0` means empty.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RunCache {
    pub(crate) driver_id: u64,
    pub(crate) driver_revision: u64,
    pub(crate) revision: u64,
    pub(crate) start: Option<usize>,
}

impl Default for RunInfo {
    fn default() -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        RunInfo {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            revision: 0,
            open_start: EMPTY,
            open_end: EMPTY,
            log: Vec::new(),
            log_from: 0,
            cache: Mutex::new([RunCache::default(); RUN_CACHE_SLOTS]),
        }
    }
}
