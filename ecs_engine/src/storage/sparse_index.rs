//! [`SparseIndex`]: the paged sparse array of a sparse set, from entity
//! index to dense position.
//!
//! A page of [`PAGE_LEN`] slots is allocated the first time an index in its
//! range is stored, so one entity with index 10,000,000 costs one page, not
//! ten million slots.

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
