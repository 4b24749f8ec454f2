//! The entity allocator's exact state as plain data, for snapshots.
//!
//! [`EntityAllocator::export_state`] copies out everything that decides
//! which handles are alive and which handle the next spawn gets: every
//! slot's generation, the live and reserved slots, the free queue in its
//! first-in, first-out order, the limits and the retired count.
//! [`EntityAllocator::from_state`] checks such a state and rebuilds an
//! allocator that behaves exactly like the one it came from, so a
//! serializer (the `ecs_snapshot` crate) can save and restore handles
//! without this crate depending on any format. The allocator's `Clone`
//! (whose `clone_from` reuses memory, for in-memory states) is here too.
//!
//! # Invariants checked by `from_state`
//!
//! - every generation is at least 1;
//! - the live, reserved and free slots are distinct indices below the slot
//!   count, each listed once; the slots in none of the three are retired,
//!   and their number is [`AllocatorState::retired`];
//! - the live and reserved slots together are at most
//!   [`AllocatorState::max_live`], which is at most `u32::MAX - 1`, as is
//!   the slot count;
//! - [`AllocatorState::max_generation`] is at least 1.

use std::num::NonZeroU32;

use super::MAX_INDEX;
use super::allocator::{AllocatorVersion, EntityAllocator, bit, set_bit};
use crate::Registry;

/// The state of an [`EntityAllocator`] as plain vectors: what
/// [`EntityAllocator::export_state`] returns and
/// [`EntityAllocator::from_state`] takes.
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
/// let state = alloc.export_state();
/// assert_eq!(state.generations, vec![2, 1]);
/// assert_eq!((state.alive.as_slice(), state.free.as_slice()), (&[1][..], &[0][..]));
///
/// let mut copy = EntityAllocator::from_state(state).unwrap();
/// assert!(copy.is_alive(b) && !copy.is_alive(a));
/// assert_eq!(copy.allocate(), alloc.allocate());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AllocatorState {
    /// The current generation of every slot ever used, by index: the live
    /// entity's, or the one the next entity in that slot will get (at least
    /// 1). Its length is the slot count.
    pub generations: Vec<u32>,
    /// The indices of the live slots, increasing.
    pub alive: Vec<u32>,
    /// The indices of the reserved slots (handed out, not alive yet),
    /// increasing.
    pub reserved: Vec<u32>,
    /// The free queue, oldest first: the next spawns take these slots in
    /// this order.
    pub free: Vec<u32>,
    /// The limit of live (and reserved) entities.
    pub max_live: u32,
    /// The generation at which a slot is retired.
    pub max_generation: u32,
    /// The number of retired slots (the slots neither live, reserved nor
    /// free).
    pub retired: u32,
}

/// Why [`EntityAllocator::from_state`] refused a state: the first
/// inconsistency found, naming the slot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AllocatorStateError {
    /// A slot has generation 0, which no handle has.
    #[error("allocator state: slot {index} has generation 0 (generations start at 1)")]
    ZeroGeneration {
        /// The slot.
        index: u32,
    },
    /// `max_generation` is 0.
    #[error("allocator state: max_generation is 0 (it must be at least 1)")]
    ZeroMaxGeneration,
    /// More slots than indices.
    #[error("allocator state: {slots} slots, more than the {max} indices a registry has")]
    TooManySlots {
        /// The slot count given.
        slots: usize,
        /// The largest slot count.
        max: usize,
    },
    /// A live, reserved or free index is not below the slot count.
    #[error("allocator state: {list} index {index} is past the {slots} slots")]
    IndexOutOfRange {
        /// Which list: `alive`, `reserved` or `free`.
        list: &'static str,
        /// The index.
        index: u32,
        /// The slot count.
        slots: usize,
    },
    /// An index appears twice (in one list, or in two of them).
    #[error("allocator state: slot {index} is listed twice (second time in `{list}`)")]
    DuplicateSlot {
        /// The list of the second appearance: `alive`, `reserved` or `free`.
        list: &'static str,
        /// The index.
        index: u32,
    },
    /// The live and reserved slots are more than the limit.
    #[error("allocator state: {count} live and reserved slots, more than max_live {max_live}")]
    OverLimit {
        /// Live plus reserved.
        count: usize,
        /// The limit given.
        max_live: u32,
    },
    /// The retired count does not match the slots left out of every list.
    #[error("allocator state: {found} retired slots declared, {expected} slots are in no list")]
    RetiredMismatch {
        /// The declared count.
        found: u32,
        /// The slots in no list.
        expected: usize,
    },
}

impl EntityAllocator {
    /// A copy of the allocator's whole state as plain vectors (see
    /// [`AllocatorState`]); [`from_state`](Self::from_state) rebuilds an
    /// equal allocator from it.
    ///
    /// Memory: 4 bytes per slot ever used, plus 4 per live, reserved or
    /// free slot.
    pub fn export_state(&self) -> AllocatorState {
        let slots = self.generations.len();
        let indices = |bits: &[u64]| -> Vec<u32> {
            (0..slots)
                .filter(|&i| bit(bits, i))
                .map(|i| i as u32)
                .collect()
        };
        AllocatorState {
            generations: self.generations.iter().map(|g| g.get()).collect(),
            alive: indices(&self.alive),
            reserved: indices(&self.reserved),
            free: self.free.iter().copied().collect(),
            max_live: self.max_live,
            max_generation: self.max_generation.get(),
            retired: self.retired,
        }
    }

    /// Rebuilds an allocator from [`export_state`](Self::export_state)'s
    /// output: the same live and reserved handles, the same free queue
    /// order, the same limits, so the next allocation returns the same
    /// handle as the original's would.
    ///
    /// # Errors
    ///
    /// [`AllocatorStateError`] naming the first inconsistency; nothing is
    /// built then. Checked: every generation is at least 1, as is
    /// `max_generation`; the live, reserved and free slots are distinct
    /// indices below the slot count; the slots in none of them number
    /// `retired`; live and reserved together are at most `max_live`.
    pub fn from_state(state: AllocatorState) -> Result<EntityAllocator, AllocatorStateError> {
        let AllocatorState {
            generations,
            alive,
            reserved,
            free,
            max_live,
            max_generation,
            retired,
        } = state;
        let max_generation =
            NonZeroU32::new(max_generation).ok_or(AllocatorStateError::ZeroMaxGeneration)?;
        let slots = generations.len();
        if slots > MAX_INDEX as usize + 1 {
            return Err(AllocatorStateError::TooManySlots {
                slots,
                max: MAX_INDEX as usize + 1,
            });
        }
        let generations = generations
            .iter()
            .enumerate()
            .map(|(index, &g)| {
                NonZeroU32::new(g).ok_or(AllocatorStateError::ZeroGeneration {
                    index: index as u32,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let words = slots.div_ceil(64);
        let mut seen = vec![0u64; words];
        let mut alive_bits = vec![0u64; words];
        let mut reserved_bits = vec![0u64; words];
        for (list, indices) in [("alive", &alive), ("reserved", &reserved), ("free", &free)] {
            for &index in indices {
                if index as usize >= slots {
                    return Err(AllocatorStateError::IndexOutOfRange { list, index, slots });
                }
                if bit(&seen, index as usize) {
                    return Err(AllocatorStateError::DuplicateSlot { list, index });
                }
                set_bit(&mut seen, index, true);
                match list {
                    "alive" => set_bit(&mut alive_bits, index, true),
                    "reserved" => set_bit(&mut reserved_bits, index, true),
                    _ => {}
                }
            }
        }
        let max_live = max_live.min(MAX_INDEX);
        let count = alive.len() + reserved.len();
        if count > max_live as usize {
            return Err(AllocatorStateError::OverLimit { count, max_live });
        }
        let expected = slots - count - free.len();
        if retired as usize != expected {
            return Err(AllocatorStateError::RetiredMismatch {
                found: retired,
                expected,
            });
        }
        Ok(EntityAllocator {
            generations,
            alive: alive_bits,
            reserved: reserved_bits,
            free: free.into(),
            live: alive.len() as u32,
            reserved_count: reserved.len() as u32,
            max_live,
            max_generation,
            retired,
            version: AllocatorVersion::fresh(),
        })
    }
}

impl Registry {
    /// Replaces every entity: despawns them all, as [`clear`](Self::clear)
    /// does (dropping every component, keeping resources), then makes
    /// `allocator` the registry's, with its live handles alive and no
    /// components. Returns the allocator it replaced. A snapshot loader
    /// calls this, then inserts the saved components.
    ///
    /// Handles reserved from the replaced allocator name nothing in the new
    /// one (or an unrelated entity): the call advances
    /// [`entities_epoch`](Self::entities_epoch), and command buffers drop
    /// the handles they reserved in an earlier epoch instead of spawning
    /// them.
    ///
    /// # Panics
    ///
    /// When a component's `Drop` panics, as [`clear`](Self::clear); the
    /// new allocator is installed first.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{EntityAllocator, Registry};
    ///
    /// let mut registry = Registry::new();
    /// let a = registry.spawn((1_u32,));
    /// let state = registry.entities().export_state();
    /// registry.despawn(a).unwrap();
    /// registry.spawn(());
    ///
    /// registry.replace_entities(EntityAllocator::from_state(state).unwrap());
    /// assert!(registry.is_alive(a));
    /// assert_eq!(registry.count::<u32>(), 0);
    /// ```
    pub fn replace_entities(&mut self, allocator: EntityAllocator) -> EntityAllocator {
        let old = std::mem::replace(&mut self.allocator, allocator);
        self.entities_epoch = self.entities_epoch.wrapping_add(1);
        self.pools.clear();
        old
    }
}

/// A copy of the whole allocator (its state, limits and counters).
impl Clone for EntityAllocator {
    fn clone(&self) -> Self {
        EntityAllocator {
            generations: self.generations.clone(),
            alive: self.alive.clone(),
            reserved: self.reserved.clone(),
            free: self.free.clone(),
            version: AllocatorVersion::fresh(),
            ..*self
        }
    }

    /// Copies `source` into this allocator's own memory where it is large
    /// enough (an in-memory state saved every frame allocates nothing).
    fn clone_from(&mut self, source: &Self) {
        self.generations.clone_from(&source.generations);
        self.alive.clone_from(&source.alive);
        self.reserved.clone_from(&source.reserved);
        self.free.clone_from(&source.free);
        self.live = source.live;
        self.reserved_count = source.reserved_count;
        self.max_live = source.max_live;
        self.max_generation = source.max_generation;
        self.retired = source.retired;
        self.version.bump();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Entity;

    fn churned() -> EntityAllocator {
        let mut alloc = EntityAllocator::new()
            .with_max_live(100)
            .with_max_generation(NonZeroU32::new(3).unwrap());
        let e: Vec<Entity> = (0..10).map(|_| alloc.allocate().unwrap()).collect();
        for &i in &[7, 2, 5] {
            alloc.free(e[i]).unwrap();
        }
        // Slot 7 is reused twice more and retired at generation 3.
        let again = alloc.allocate().unwrap();
        assert_eq!(again.index(), 7);
        alloc.free(again).unwrap();
        let r = alloc.reserve().unwrap();
        assert_eq!(r.index(), 2);
        alloc
    }

    #[test]
    fn round_trip_is_exact() {
        let mut alloc = churned();
        let state = alloc.export_state();
        assert_eq!(state.free, vec![5, 7]);
        assert_eq!(state.reserved, vec![2]);
        assert_eq!(state.retired, 0);
        let mut copy = EntityAllocator::from_state(state.clone()).unwrap();
        assert_eq!(copy.export_state(), state);
        assert_eq!(copy.len(), alloc.len());
        assert_eq!(copy.reserved(), alloc.reserved());
        for _ in 0..6 {
            let (a, b) = (alloc.allocate(), copy.allocate());
            assert_eq!(a, b);
            let e = a.unwrap();
            alloc.free(e).unwrap();
            copy.free(e).unwrap();
        }
        assert_eq!(alloc.retired(), copy.retired());
        assert!(alloc.retired() > 0);
        assert_eq!(copy.export_state(), alloc.export_state());
    }

    #[test]
    fn inconsistent_states_are_refused() {
        let good = churned().export_state();
        let check = |change: fn(&mut AllocatorState), expected: AllocatorStateError| {
            let mut state = good.clone();
            change(&mut state);
            assert_eq!(EntityAllocator::from_state(state).err(), Some(expected));
        };
        check(
            |s| s.generations[3] = 0,
            AllocatorStateError::ZeroGeneration { index: 3 },
        );
        check(
            |s| s.max_generation = 0,
            AllocatorStateError::ZeroMaxGeneration,
        );
        check(
            |s| s.free.push(10),
            AllocatorStateError::IndexOutOfRange {
                list: "free",
                index: 10,
                slots: 10,
            },
        );
        check(
            |s| s.free.push(0),
            AllocatorStateError::DuplicateSlot {
                list: "free",
                index: 0,
            },
        );
        check(
            |s| s.max_live = 3,
            AllocatorStateError::OverLimit {
                count: 8,
                max_live: 3,
            },
        );
        check(
            |s| s.retired = 1,
            AllocatorStateError::RetiredMismatch {
                found: 1,
                expected: 0,
            },
        );
        check(
            |s| {
                s.free.pop();
            },
            AllocatorStateError::RetiredMismatch {
                found: 0,
                expected: 1,
            },
        );
    }

    #[test]
    fn replace_entities_drops_components_and_keeps_resources() {
        let mut registry = Registry::new();
        let a = registry.spawn((1_u32, 2_u64));
        registry.insert_resource(5_i8);
        let state = registry.entities().export_state();
        registry.despawn(a).unwrap();
        let b = registry.spawn((3_u32,));
        let old = registry.replace_entities(EntityAllocator::from_state(state).unwrap());
        assert!(old.is_alive(b));
        assert!(registry.is_alive(a) && !registry.is_alive(b));
        assert_eq!((registry.count::<u32>(), registry.count::<u64>()), (0, 0));
        assert_eq!(registry.resource::<i8>(), Some(&5));
        assert_eq!(registry.entities().entity_at(a.index()), Some(a));
        assert_eq!(registry.entities_epoch(), 1);
        registry.insert(a, 4_u32).unwrap();
        assert_eq!(registry.get::<u32>(a), Some(&4));
    }
}
