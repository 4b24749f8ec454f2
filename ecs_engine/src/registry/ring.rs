//! A ring of in-memory states: the last N frames of a registry, kept as
//! one whole copy of the newest frame (a [`RegistryState`], the *mirror*)
//! and, for each older frame, an undo of what the next save changed.
//!
//! A save costs what changed since the previous one: in a pool of a
//! tracked type registered with `register_clone_delta`, the components
//! whose changed tick is newer than the previous save, and the positions
//! whose entity was added, removed or moved since (spawns, despawns,
//! inserts, removals), are copied, and what they replace moves into the
//! undo; any other pool, or one written without marks (`Untracked`,
//! `get_mut_untracked`), is copied whole and its old copy moves into the
//! undo; such a tracked pool that nothing touched costs a scan of its
//! block summary. So
//! the ring's memory is one whole state plus what changed per frame. A
//! restore to a frame undoes the newer frames on the mirror, newest
//! first, and then restores the registry from it, copying again only
//! what changed since that frame where the ticks tell (a pool whose
//! entities changed since is copied whole).

use std::collections::VecDeque;

use super::Registry;
use super::state::{RegistryState, StateError};
use crate::EntityAllocator;
use crate::resources::SavedResources;
use crate::storage::pool_copy::SavedPool;
use crate::storage::pool_ring::FramePools;
use crate::storage::pools::Pools;

/// The last `capacity` frames of a registry, saved by
/// [`Registry::save_frame`] (one per tick, say) and restored by
/// [`Registry::restore_frame`] (`back` frames before the newest): the
/// rollback loop of a networked game, or a replay's scrub bar.
///
/// The newest frame is held whole (as a [`RegistryState`]); each older
/// one as what the save after it replaced. For components of a type with
/// change tracking ([`Registry::track_changes`]) whose clone was
/// registered with [`Registry::register_clone_delta`], that is the values
/// written in between and the entries of the dense positions whose
/// entity changed (spawns, despawns, inserts, removals; a pool nobody
/// touched costs nothing), so a ring of 8 frames of a world where 1% of
/// the components change per tick holds about one state plus 8% of one;
/// any other type's pool, such a pool written without marks, or one
/// where over a quarter of the positions changed, is held whole in that
/// frame.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Registry, StateRing};
///
/// #[derive(Clone, Debug, PartialEq)]
/// struct Position(i32);
///
/// let mut registry = Registry::new();
/// registry.register_clone_delta::<Position>();
/// registry.track_changes::<Position>();
/// let e = registry.spawn((Position(0),));
/// let mut ring = StateRing::new(8);
/// for tick in 1..=10 {
///     registry.save_frame(&mut ring).unwrap(); // before tick `tick`
///     registry.get_mut::<Position>(e).unwrap().0 = tick;
///     registry.advance_change_tick();
/// }
/// assert_eq!(ring.len(), 8); // the frames before ticks 3..=10
/// registry.restore_frame(&mut ring, 2).unwrap(); // the frame before tick 8
/// assert_eq!(registry.get::<Position>(e), Some(&Position(7)));
/// assert_eq!(ring.len(), 6); // the two newer frames are gone
/// ```
#[derive(Debug)]
pub struct StateRing {
    capacity: usize,
    /// The newest frame, whole; meaningless while `frames` is 0.
    mirror: RegistryState,
    /// Oldest first: `undo[k]` makes frame `k` of the ring out of frame
    /// `k + 1`; one fewer than the frames.
    undo: VecDeque<FrameUndo>,
    frames: usize,
    /// Whole copies of dropped undos, by pool index (at most `capacity`
    /// each): the memory the next whole copies of that pool are made in.
    spares: Vec<Vec<SavedPool>>,
    /// Allocators of dropped undos (at most `capacity`), for the same.
    spare_allocators: Vec<EntityAllocator>,
}

/// What one save changed in the mirror, to undo it.
struct FrameUndo {
    pools: FramePools,
    /// The mirror's allocator before the save, when the save changed it.
    allocator: Option<EntityAllocator>,
    resources: SavedResources,
    has_hierarchy: bool,
    now: u32,
    last_check: u32,
}

impl std::fmt::Debug for FrameUndo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameUndo")
            .field("pool_bytes", &self.pools.heap_bytes())
            .field("allocator", &self.allocator.is_some())
            .field("now", &self.now)
            .finish()
    }
}

impl StateRing {
    /// An empty ring that keeps the last `capacity` frames.
    ///
    /// # Panics
    ///
    /// When `capacity` is 0.
    pub fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "a state ring keeps at least one frame");
        StateRing {
            capacity,
            mirror: RegistryState::default(),
            undo: VecDeque::with_capacity(capacity),
            frames: 0,
            spares: Vec::new(),
            spare_allocators: Vec::new(),
        }
    }

    /// The most frames the ring keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Frames saved and still kept (at most [`capacity`](Self::capacity)).
    pub fn len(&self) -> usize {
        self.frames
    }

    /// `true` before the first save.
    pub fn is_empty(&self) -> bool {
        self.frames == 0
    }

    /// The newest frame, whole; `None` before the first save.
    pub fn newest(&self) -> Option<&RegistryState> {
        (self.frames > 0).then_some(&self.mirror)
    }

    /// Heap bytes the older frames hold beyond the newest (the values and
    /// pools their undos keep, not counting the resources' copies): what
    /// the ring costs on top of one whole state.
    pub fn undo_bytes(&self) -> usize {
        self.undo
            .iter()
            .map(|frame| frame.pools.heap_bytes())
            .sum::<usize>()
            + self
                .undo
                .iter()
                .filter_map(|frame| frame.allocator.as_ref())
                .map(EntityAllocator::heap_bytes)
                .sum::<usize>()
    }
}

impl Registry {
    /// Saves the registry as the ring's newest frame, dropping the oldest
    /// once the ring is full: see [`StateRing`]. What it saves is what
    /// [`save_state`](Self::save_state) saves. Called on a rayon pool's
    /// thread (`Engine::save_frame` runs it on the schedule's threads in
    /// a large world), it copies the component pools in parallel on that
    /// pool; the frame saved is the same either way.
    ///
    /// # Errors
    ///
    /// [`StateError::NotClonable`] naming the first component pool that
    /// cannot be copied; the ring is unchanged then.
    ///
    /// # Panics
    ///
    /// When a component's or resource's `Clone` panics; the ring is
    /// unchanged then too (the copies already brought up to date are
    /// undone before the panic resumes).
    pub fn save_frame(&self, ring: &mut StateRing) -> Result<(), StateError> {
        if ring.frames == 0 {
            self.save_state_into(&mut ring.mirror)?;
            ring.frames = 1;
            return Ok(());
        }
        let mirror = &mut ring.mirror;
        // Resources first: a `Clone` that panics there changes nothing.
        let resources = self.resources.save(&mirror.resources);
        let since = super::state::delta_since(mirror.now, self.change.now);
        let pools = self.pools.save_frame(
            &mut mirror.pools,
            (self.change.now, since),
            &mut ring.spares,
        )?;
        let synced = mirror.allocator_synced.get_mut();
        let allocator = (*synced != Some(self.allocator.version())).then(|| {
            *synced = Some(self.allocator.version());
            let mut copy = ring.spare_allocators.pop().unwrap_or_default();
            copy.clone_from(&self.allocator);
            std::mem::replace(&mut mirror.allocator, copy)
        });
        let frame = FrameUndo {
            pools,
            allocator,
            resources: std::mem::replace(&mut mirror.resources, resources),
            has_hierarchy: std::mem::replace(&mut mirror.has_hierarchy, self.has_hierarchy),
            now: std::mem::replace(&mut mirror.now, self.change.now),
            last_check: std::mem::replace(&mut mirror.last_check, self.change.last_check),
        };
        ring.undo.push_back(frame);
        if ring.frames == ring.capacity {
            let dropped = ring.undo.pop_front().expect("a full ring has undos");
            for (index, pool) in dropped.pools.into_wholes() {
                if let Some(spare) = ring.spares.get_mut(index)
                    && spare.len() < ring.capacity
                {
                    spare.push(pool);
                }
            }
            if let Some(allocator) = dropped.allocator
                && ring.spare_allocators.len() < ring.capacity
            {
                ring.spare_allocators.push(allocator);
            }
        } else {
            ring.frames += 1;
        }
        Ok(())
    }

    /// Makes the registry what it was at the frame `back` saves before
    /// the ring's newest (0: the newest), as
    /// [`restore_state`](Self::restore_state) of that frame would, and
    /// drops the `back` newer frames from the ring (a rollback runs those
    /// ticks again and saves them anew).
    ///
    /// # Errors
    ///
    /// [`StateError::NoSuchFrame`] when the ring holds `back` frames or
    /// fewer; [`StateError::OtherTypes`] when the ring was saved from a
    /// registry whose types were registered in another order. Nothing
    /// changes then.
    ///
    /// # Panics
    ///
    /// As [`restore_state`](Self::restore_state).
    pub fn restore_frame(&mut self, ring: &mut StateRing, back: usize) -> Result<(), StateError> {
        if back >= ring.frames {
            return Err(StateError::NoSuchFrame {
                back,
                frames: ring.frames,
            });
        }
        // The types of the frame restored, not the newest: nothing may
        // change before the check.
        let mut infos: Vec<_> = ring.mirror.pools.iter().map(SavedPool::info).collect();
        for frame in ring.undo.iter().rev().take(back) {
            frame.pools.infos_before(&mut infos);
        }
        self.pools.check_infos(&infos)?;
        let mirror = &mut ring.mirror;
        for _ in 0..back {
            let frame = ring.undo.pop_back().expect("one undo per older frame");
            Pools::undo_frame(&mut mirror.pools, frame.pools, &mut ring.spares);
            if let Some(allocator) = frame.allocator {
                let newer = std::mem::replace(&mut mirror.allocator, allocator);
                *mirror.allocator_synced.get_mut() = None;
                if ring.spare_allocators.len() < ring.capacity {
                    ring.spare_allocators.push(newer);
                }
            }
            mirror.resources = frame.resources;
            mirror.has_hierarchy = frame.has_hierarchy;
            mirror.now = frame.now;
            mirror.last_check = frame.last_check;
        }
        ring.frames -= back;
        self.restore_state(mirror)
    }
}
