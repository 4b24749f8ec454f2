//! [`EntityAllocator`]: hands out [`Entity`] handles, reuses freed slots
//! first-in, first-out and tracks which handles are alive (the rules in the
//! `entity` module docs); and [`IndexLane`], the fresh indices several
//! command buffers hand out at once (at the end).

use std::collections::VecDeque;
use std::num::NonZeroU32;

use super::handle::{Entity, MAX_INDEX};
use crate::EcsError;

/// Hands out [`Entity`] handles, reuses freed slots first-in, first-out and
/// tracks which handles are alive.
///
/// Memory: 4 bytes per slot ever used (its generation), 2 bits per slot (the
/// alive and reserved flags), and 4 bytes per free slot waiting in the queue.
///
/// # Examples
///
/// ```
/// use ecs_engine::EntityAllocator;
///
/// let mut alloc = EntityAllocator::new();
/// let a = alloc.allocate().unwrap();
/// let b = alloc.allocate().unwrap();
/// alloc.free(a).unwrap();
/// alloc.free(b).unwrap();
/// // Slot `a` was freed first, so it is reused first, with a new generation.
/// let c = alloc.allocate().unwrap();
/// assert_eq!((c.index(), c.generation()), (a.index(), a.generation() + 1));
/// assert!(!alloc.is_alive(a));
/// ```
#[derive(Debug)]
pub struct EntityAllocator {
    /// Current generation of every slot ever used: the live entity's, or the
    /// one the next entity in that slot will get.
    pub(super) generations: Vec<NonZeroU32>,
    /// One bit per slot: set while the slot holds a live entity.
    pub(super) alive: Vec<u64>,
    /// One bit per slot: set while the slot is reserved (handed out by
    /// `reserve`, not alive yet, not free).
    pub(super) reserved: Vec<u64>,
    /// Free slots, oldest first.
    pub(super) free: VecDeque<u32>,
    pub(super) live: u32,
    pub(super) reserved_count: u32,
    pub(super) max_live: u32,
    pub(super) max_generation: NonZeroU32,
    pub(super) retired: u32,
    /// Who the allocator is and how often it changed: equal versions at
    /// two moments mean the same state (an in-memory state skips copying
    /// an allocator that did not change since it was last synced).
    pub(super) version: AllocatorVersion,
}

/// See [`EntityAllocator`]'s `version`: an identity no other allocator of
/// the process has (a clone gets its own) and a count of the changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AllocatorVersion {
    id: u64,
    changes: u64,
}

impl AllocatorVersion {
    pub(super) fn fresh() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        AllocatorVersion {
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            changes: 0,
        }
    }

    #[inline]
    pub(super) fn bump(&mut self) {
        self.changes = self.changes.wrapping_add(1);
    }
}

impl Default for EntityAllocator {
    fn default() -> Self {
        Self::new()
    }
}

impl EntityAllocator {
    /// An allocator with no live entity, allowing up to `u32::MAX - 1` live
    /// entities and generations up to `u32::MAX`.
    pub fn new() -> Self {
        EntityAllocator {
            generations: Vec::new(),
            alive: Vec::new(),
            reserved: Vec::new(),
            free: VecDeque::new(),
            live: 0,
            reserved_count: 0,
            max_live: MAX_INDEX,
            max_generation: NonZeroU32::MAX,
            retired: 0,
            version: AllocatorVersion::fresh(),
        }
    }

    /// Limits the number of entities alive at once; [`allocate`](Self::allocate)
    /// past it returns [`EcsError::TooManyEntities`]. Values above
    /// `u32::MAX - 1` are clamped.
    pub fn with_max_live(mut self, max_live: u32) -> Self {
        self.version.bump();
        self.max_live = max_live.min(MAX_INDEX);
        self
    }

    /// Lowers the generation at which a slot is retired (default `u32::MAX`).
    /// A slot whose entity had this generation is never reused. Useful for
    /// tests of retirement, and for callers that pack handles into fewer bits.
    pub fn with_max_generation(mut self, max_generation: NonZeroU32) -> Self {
        self.version.bump();
        self.max_generation = max_generation;
        self
    }

    /// The configured limit of live entities.
    pub fn max_live(&self) -> u32 {
        self.max_live
    }

    /// See [`AllocatorVersion`].
    pub(crate) fn version(&self) -> AllocatorVersion {
        self.version
    }

    /// Number of live entities.
    #[inline]
    pub fn len(&self) -> usize {
        self.live as usize
    }

    /// `true` when no entity is alive.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Number of slots retired because their generation reached the limit.
    pub fn retired(&self) -> u32 {
        self.retired
    }

    /// Number of slots ever used (live, free or retired): one past the largest
    /// index handed out.
    pub fn slot_count(&self) -> usize {
        self.generations.len()
    }

    /// A new live handle: the oldest free slot with its bumped generation, or
    /// a fresh slot when none is free.
    ///
    /// # Errors
    ///
    /// [`EcsError::TooManyEntities`] when the live limit is reached (reserved
    /// slots count toward it) or every index is used up; nothing changes
    /// then.
    #[inline]
    pub fn allocate(&mut self) -> Result<Entity, EcsError> {
        self.version.bump();
        let entity = self.take_slot()?;
        set_bit(&mut self.alive, entity.index(), true);
        self.live += 1;
        Ok(entity)
    }

    /// Reserves a handle without making it alive: the slot leaves the free
    /// queue, [`is_alive`](Self::is_alive) stays `false` until
    /// [`activate`](Self::activate), and [`cancel`](Self::cancel) gives it
    /// back. Command buffers use this to hand out real handles before the
    /// entity exists.
    ///
    /// # Errors
    ///
    /// As [`allocate`](Self::allocate).
    #[inline]
    pub fn reserve(&mut self) -> Result<Entity, EcsError> {
        self.version.bump();
        let entity = self.take_slot()?;
        set_bit(&mut self.reserved, entity.index(), true);
        self.reserved_count += 1;
        Ok(entity)
    }

    /// Reserves up to `count` handles at once, appending them to `out` in
    /// the order `count` calls of [`reserve`](Self::reserve) would return
    /// them (freed slots first, oldest first, then new slots).
    ///
    /// # Errors
    ///
    /// [`EcsError::TooManyEntities`] when the live-entity limit (or the
    /// index space) stops it; the handles reserved before that are in
    /// `out` and stay reserved.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::EntityAllocator;
    ///
    /// let mut alloc = EntityAllocator::new().with_max_live(3);
    /// let mut out = Vec::new();
    /// alloc.reserve_many(2, &mut out).unwrap();
    /// assert_eq!(out.len(), 2);
    /// assert!(out.iter().all(|&e| alloc.is_reserved(e)));
    /// assert!(alloc.reserve_many(2, &mut out).is_err());
    /// assert_eq!((out.len(), alloc.reserved()), (3, 3));
    /// ```
    pub fn reserve_many(
        &mut self,
        count: usize,
        out: &mut impl Extend<Entity>,
    ) -> Result<(), EcsError> {
        self.version.bump();
        let too_many = EcsError::TooManyEntities {
            limit: self.max_live,
        };
        let room = (self.max_live - (self.live + self.reserved_count).min(self.max_live)) as usize;
        let wanted = count.min(room);
        // Freed slots first, in queue order.
        let reused = wanted.min(self.free.len());
        let (generations, reserved) = (&self.generations, &mut self.reserved);
        out.extend(self.free.drain(..reused).map(|index| {
            set_bit(reserved, index, true);
            Entity::new(index, generations[index as usize])
        }));
        // Then new slots, up to the index space.
        let first = self.generations.len();
        let fresh = (wanted - reused).min((MAX_INDEX as usize + 1).saturating_sub(first));
        let end = first + fresh;
        self.generations.resize(end, NonZeroU32::MIN);
        let words = end.div_ceil(64);
        if self.alive.len() < words {
            self.alive.resize(words, 0);
            self.reserved.resize(words, 0);
        }
        let reserved = &mut self.reserved;
        out.extend((first..end).map(|index| {
            set_bit(reserved, index as u32, true);
            Entity::new(index as u32, NonZeroU32::MIN)
        }));
        let taken = reused + fresh;
        self.reserved_count += taken as u32;
        if taken < count {
            return Err(too_many);
        }
        Ok(())
    }

    /// Reserves the fresh slots that spawned into [`IndexLane`](crate::IndexLane)s: lane `p`
    /// of `counts.len()` lanes opened at `base` handed out the handles of
    /// indices `base + p + lanes * j` (generation 1) for `j < counts[p]`
    /// (see [`IndexLane::handle`](crate::IndexLane::handle)).
    ///
    /// Every slot from `base` to one past the highest such index is
    /// created, in increasing index order: a claimed one is reserved (its
    /// handle becomes a normal reserved handle, for
    /// [`activate`](Self::activate) or [`cancel`](Self::cancel)); an
    /// unclaimed one joins the free queue. Past the live-entity limit a
    /// claimed slot is created already cancelled (freed with its
    /// generation bumped), so the handle that was handed out for it is
    /// never alive and never someone else's. Indices past the index space
    /// are not created (no lane hands them out).
    ///
    /// Returns how many claimed handles were refused by the limit.
    ///
    /// # Panics
    ///
    /// When `base` is not [`slot_count`](Self::slot_count): a slot was
    /// created since the lanes were opened, so lane indices may be taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{EntityAllocator, IndexLane};
    ///
    /// let mut alloc = EntityAllocator::new();
    /// let base = alloc.slot_count();
    /// let (a, b) = (IndexLane::new(base, 2, 0), IndexLane::new(base, 2, 1));
    /// let handed_out = [a.handle(0).unwrap(), a.handle(1).unwrap(), b.handle(0).unwrap()];
    /// assert_eq!(alloc.reserve_lanes(base, &[2, 1]), 0);
    /// assert!(handed_out.iter().all(|&e| alloc.is_reserved(e)));
    /// // Index 3 (lane 1's second) was not claimed: it is free for anyone.
    /// assert_eq!(alloc.slot_count(), 3);
    /// ```
    #[track_caller]
    pub fn reserve_lanes(&mut self, base: usize, counts: &[usize]) -> usize {
        self.version.bump();
        assert_eq!(
            base,
            self.generations.len(),
            "EntityAllocator::reserve_lanes: slots were created after the lanes were opened at {base}"
        );
        let lanes = counts.len();
        let end = counts
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(lane, &n)| {
                base.saturating_add(lane)
                    .saturating_add(lanes.saturating_mul(n - 1))
                    .saturating_add(1)
            })
            .max()
            .unwrap_or(base)
            .min(MAX_INDEX as usize + 1);
        self.generations.resize(end, NonZeroU32::MIN);
        let words = end.div_ceil(64);
        if self.alive.len() < words {
            self.alive.resize(words, 0);
            self.reserved.resize(words, 0);
        }
        let mut refused = 0;
        for index in base..end {
            let offset = index - base;
            let claimed = offset / lanes < counts[offset % lanes];
            if !claimed {
                self.free.push_back(index as u32);
            } else if self.live + self.reserved_count < self.max_live {
                set_bit(&mut self.reserved, index as u32, true);
                self.reserved_count += 1;
            } else {
                refused += 1;
                self.release(Entity::new(index as u32, NonZeroU32::MIN));
            }
        }
        refused
    }

    /// Makes a reserved handle alive.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not currently reserved.
    #[inline]
    pub fn activate(&mut self, entity: Entity) -> Result<(), EcsError> {
        self.version.bump();
        self.unreserve(entity)?;
        set_bit(&mut self.alive, entity.index(), true);
        self.live += 1;
        Ok(())
    }

    /// Gives a reserved slot back to the free queue (with a bumped
    /// generation, as if the entity had lived and died).
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not currently reserved.
    pub fn cancel(&mut self, entity: Entity) -> Result<(), EcsError> {
        self.version.bump();
        self.unreserve(entity)?;
        self.release(entity);
        Ok(())
    }

    /// `true` when `entity` is reserved and not yet activated or cancelled.
    pub fn is_reserved(&self, entity: Entity) -> bool {
        let index = entity.index() as usize;
        self.generations.get(index) == Some(&entity.generation) && bit(&self.reserved, index)
    }

    /// Number of reserved slots.
    pub fn reserved(&self) -> usize {
        self.reserved_count as usize
    }

    #[inline]
    fn unreserve(&mut self, entity: Entity) -> Result<(), EcsError> {
        self.version.bump();
        if !self.is_reserved(entity) {
            return Err(EcsError::NoSuchEntity { entity });
        }
        set_bit(&mut self.reserved, entity.index(), false);
        self.reserved_count -= 1;
        Ok(())
    }

    /// The oldest free slot, or a fresh one, with its current generation.
    #[inline]
    fn take_slot(&mut self) -> Result<Entity, EcsError> {
        self.version.bump();
        let too_many = EcsError::TooManyEntities {
            limit: self.max_live,
        };
        if self.live + self.reserved_count >= self.max_live {
            return Err(too_many);
        }
        let index = match self.free.pop_front() {
            Some(index) => index,
            None => {
                let index = self.generations.len();
                if index > MAX_INDEX as usize {
                    return Err(too_many);
                }
                self.generations.push(NonZeroU32::MIN);
                if index.is_multiple_of(64) {
                    self.alive.push(0);
                    self.reserved.push(0);
                }
                index as u32
            }
        };
        Ok(Entity::new(index, self.generations[index as usize]))
    }

    /// Grows the slot tables once for `additional` allocations (the freed
    /// slots waiting are used first; at most what the limits allow), so
    /// that many `allocate` calls in a row do not grow them by doubling.
    pub(crate) fn reserve_slots(&mut self, additional: usize) {
        self.version.bump();
        let by_live = self
            .max_live
            .saturating_sub(self.live.saturating_add(self.reserved_count));
        let len = self.generations.len();
        let by_index = (MAX_INDEX as usize + 1).saturating_sub(len);
        let fresh = additional
            .saturating_sub(self.free.len())
            .min(by_live as usize)
            .min(by_index);
        if fresh == 0 {
            return;
        }
        self.generations.reserve_exact(fresh);
        let words = (len + fresh).div_ceil(64);
        self.alive
            .reserve_exact(words.saturating_sub(self.alive.len()));
        self.reserved
            .reserve_exact(words.saturating_sub(self.reserved.len()));
    }

    /// Number of freed slots waiting for reuse.
    pub(crate) fn free_len(&self) -> usize {
        self.free.len()
    }

    /// Where a run of fresh slots (never used) can be handed out at once,
    /// as [`allocate_fresh`](Self::allocate_fresh) does: `Some((first,
    /// room))`, the first fresh index and how many the limits allow, when no
    /// freed slot is waiting (`allocate` hands those out first).
    pub(crate) fn fresh_run(&self) -> Option<(u32, usize)> {
        if !self.free.is_empty() {
            return None;
        }
        let len = self.generations.len();
        let by_live = self
            .max_live
            .saturating_sub(self.live.saturating_add(self.reserved_count));
        let by_index = (MAX_INDEX as usize + 1).saturating_sub(len);
        Some((len as u32, (by_live as usize).min(by_index)))
    }

    /// Makes the `count` fresh slots from `first` alive with generation 1,
    /// as `count` [`allocate`](Self::allocate) calls would; `first` and
    /// `count` come from [`fresh_run`](Self::fresh_run) (nothing else
    /// allocated since, `count <= room`).
    pub(crate) fn allocate_fresh(&mut self, first: u32, count: u32) {
        self.version.bump();
        debug_assert_eq!(first as usize, self.generations.len());
        let end = first as usize + count as usize;
        self.generations.resize(end, NonZeroU32::MIN);
        let words = end.div_ceil(64);
        self.alive.resize(words, 0);
        self.reserved.resize(words, 0);
        let mut index = first as usize;
        while index < end {
            let (word, low) = (index / 64, index % 64);
            let high = 64.min(low + (end - index));
            let mask = (u64::MAX >> (64 - (high - low))) << low;
            self.alive[word] |= mask;
            index += high - low;
        }
        self.live += count;
    }

    /// Frees a live handle's slot: the handle and all its copies become stale.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive (stale, null, or
    /// never allocated); nothing changes then.
    #[inline]
    pub fn free(&mut self, entity: Entity) -> Result<(), EcsError> {
        self.version.bump();
        if !self.is_alive(entity) {
            return Err(EcsError::NoSuchEntity { entity });
        }
        set_bit(&mut self.alive, entity.index(), false);
        self.live -= 1;
        self.release(entity);
        Ok(())
    }

    /// Queues the slot of a dead or cancelled handle for reuse with the next
    /// generation, or retires it at the generation limit.
    #[inline]
    fn release(&mut self, entity: Entity) {
        self.version.bump();
        let generation = entity.generation;
        if generation >= self.max_generation {
            self.retired += 1;
        } else {
            self.generations[entity.index() as usize] = generation.saturating_add(1);
            self.free.push_back(entity.index());
        }
    }

    /// `true` when `entity` is the current live occupant of its slot. Null,
    /// stale and never-allocated handles are simply not alive.
    #[inline]
    pub fn is_alive(&self, entity: Entity) -> bool {
        let index = entity.index() as usize;
        match self.generations.get(index) {
            Some(&generation) => generation == entity.generation && bit(&self.alive, index),
            None => false,
        }
    }

    /// The live handle in slot `index`, if any.
    pub fn entity_at(&self, index: u32) -> Option<Entity> {
        let i = index as usize;
        let generation = *self.generations.get(i)?;
        bit(&self.alive, i).then(|| Entity::new(index, generation))
    }

    /// Every live handle, by increasing index. Walks the live bits a
    /// word of 64 slots at a time, so free slots cost little.
    pub fn iter(&self) -> impl Iterator<Item = Entity> + '_ {
        self.alive
            .iter()
            .enumerate()
            .flat_map(move |(word, &bits)| {
                let mut bits = bits;
                std::iter::from_fn(move || {
                    (bits != 0).then(|| {
                        let index = word * 64 + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        Entity::new(index as u32, self.generations[index])
                    })
                })
            })
    }

    /// Bytes held on the heap by this allocator (capacity, not length).
    pub fn heap_bytes(&self) -> usize {
        self.generations.capacity() * 4
            + (self.alive.capacity() + self.reserved.capacity()) * 8
            + self.free.capacity() * 4
    }
}

#[inline]
pub(super) fn bit(bits: &[u64], index: usize) -> bool {
    bits[index / 64] & (1 << (index % 64)) != 0
}

#[inline]
pub(super) fn set_bit(bits: &mut [u64], index: u32, value: bool) {
    let (word, mask) = (index as usize / 64, 1u64 << (index % 64));
    if value {
        bits[word] |= mask;
    } else {
        bits[word] &= !mask;
    }
}

// --- index lanes: fresh entity indices handed out by several command
// buffers at once -------------------------------------------------------

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

#[cfg(test)]
mod tests;
