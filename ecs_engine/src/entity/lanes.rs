//! Index lanes: fresh entity indices handed out by several command buffers at once; see [`IndexLane`].

use std::num::NonZeroU32;

use super::handle::{Entity, MAX_INDEX};

/// Lane `lane` of `lanes` fresh-index lanes opened at slot `base`.
///
/// Index lanes: fresh entity indices that several command buffers hand out
/// at the same time, without coordinating, with ids that depend only on
/// each buffer's own spawn count.
///
/// When a wave of systems starts, the slot table ends at `base`
/// ([`EntityAllocator::slot_count`](crate::EntityAllocator::slot_count)) and nothing creates slots until the
/// wave's buffers are applied. The `lanes` buffers that may spawn get one
/// lane each; lane `p` owns the indices `base + p`, `base + p + lanes`,
/// `base + p + 2 * lanes`, ... (interleaved, so no lane needs a size fixed
/// in advance). Its `j`-th handle is that index with generation 1, the
/// generation every fresh slot starts with. After the wave,
/// [`EntityAllocator::reserve_lanes`](crate::EntityAllocator::reserve_lanes) creates the slots up to the highest
/// one handed out: the claimed ones reserved, the gaps freed in index
/// order. So the ids are the same whatever thread ran which buffer, and no
/// two lanes ever give the same handle.
///
/// # Examples
///
/// ```
/// use ecs_engine::IndexLane;
///
/// let lane = IndexLane::new(10, 3, 1);
/// let indices: Vec<u32> = (0..3).map(|j| lane.handle(j).unwrap().index()).collect();
/// assert_eq!(indices, [11, 14, 17]);
/// assert_eq!(lane.handle(0).unwrap().generation(), 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IndexLane {
    base: usize,
    lanes: usize,
    lane: usize,
}

impl IndexLane {
    /// Lane `lane` (counted from 0) of `lanes` lanes opened at slot `base`.
    ///
    /// # Panics
    ///
    /// When `lane >= lanes`.
    #[track_caller]
    pub fn new(base: usize, lanes: usize, lane: usize) -> IndexLane {
        assert!(
            lane < lanes,
            "IndexLane::new: lane {lane} of only {lanes} lanes"
        );
        IndexLane { base, lanes, lane }
    }

    /// The slot where the lanes start.
    pub fn base(&self) -> usize {
        self.base
    }

    /// The `j`-th handle of this lane (index `base + lane + lanes * j`,
    /// generation 1); `None` past the index space.
    #[inline]
    pub fn handle(&self, j: usize) -> Option<Entity> {
        let index = self
            .lanes
            .checked_mul(j)?
            .checked_add(self.base)?
            .checked_add(self.lane)?;
        (index <= MAX_INDEX as usize).then(|| Entity::new(index as u32, NonZeroU32::MIN))
    }
}
