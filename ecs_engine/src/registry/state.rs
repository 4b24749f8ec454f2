//! In-memory states: a whole registry saved and restored by cloning its
//! pools whole (see `storage/pool_copy.rs`), with no serde and no entity
//! by entity re-insertion.
//!
//! A [`RegistryState`] holds a copy of every component pool (values,
//! dense array, change ticks and removal logs; no sparse index, which a
//! restore re-points from the dense array), the entity
//! allocator (live handles, generations, free list, reserved handles),
//! the change clock, the hierarchy flag and the resources whose type
//! opted in (with their change ticks). A restore makes the registry equal to the state in every
//! respect a reader can observe: the same entities with the same handles,
//! the same components in the same dense order, the same change ticks
//! (so nothing restored reads as added or changed unless it did at the
//! save), the same removal logs.

use std::borrow::Cow;

use super::Registry;
use crate::change::ticks::CHECK_INTERVAL;
use crate::entity::AllocatorVersion;
use crate::resources::SavedResources;
use crate::storage::pool_copy::{RestoreTimes, SavedPool};
use crate::{ChangeTick, Component, EntityAllocator};

/// Why a registry could not be saved to, or restored from, a
/// [`RegistryState`]; the registry and the state are unchanged then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// A component pool has no copy: a Rust type whose clone was never
    /// registered, or a run-time component with a destructor (its bytes
    /// do not say what it owns).
    #[error(
        "cannot save component `{component}`: its pool has no clone; call \
         `Registry::register_clone::<T>()` for it (run-time components with a \
         destructor cannot be saved)"
    )]
    NotClonable {
        /// The component's name (its type name for a Rust type).
        component: Cow<'static, str>,
    },
    /// The registry holds another component type than the state at this
    /// position: the state was saved from a registry that registered its
    /// types in another order.
    #[error(
        "cannot restore: the state's component #{position} is `{saved}`, the \
         registry's is `{found}` (register types in the same order as the saved registry)"
    )]
    OtherTypes {
        /// The [`ComponentId`](crate::ComponentId) index where they differ.
        position: usize,
        /// The state's component there.
        saved: Cow<'static, str>,
        /// The registry's component there.
        found: Cow<'static, str>,
    },
    /// [`Registry::restore_frame`] was asked for a frame the
    /// [`StateRing`](crate::StateRing) does not hold.
    #[error("cannot restore the frame {back} saves back: the ring holds {frames} frames")]
    NoSuchFrame {
        /// Saves back from the newest frame (0: the newest).
        back: usize,
        /// Frames the ring holds.
        frames: usize,
    },
}

/// A whole registry saved in memory: made by [`Registry::save_state`] or
/// [`Registry::save_state_into`], put back by [`Registry::restore_state`]
/// (as often as wanted: a restore copies out of the state, which stays as
/// it is).
///
/// Holds a copy of every component pool, the entity allocator, the change
/// clock and the resources whose type opted in
/// ([`Registry::register_resource_clone`]); the other resources are not
/// saved, and [`unsaved_resources`](Self::unsaved_resources) names them.
///
/// `Default` is an empty state, to be filled by
/// [`Registry::save_state_into`] (which reuses its memory from one save to
/// the next: a rollback loop saves into the same state every frame).
#[derive(Debug, Default)]
pub struct RegistryState {
    pub(super) allocator: EntityAllocator,
    /// The version of the registry allocator `allocator` was last made
    /// equal to or from: while that allocator keeps it, neither copy is
    /// needed. Behind a lock: a restore reads the state through a shared
    /// borrow.
    pub(super) allocator_synced: parking_lot::Mutex<Option<AllocatorVersion>>,
    pub(super) pools: Vec<SavedPool>,
    pub(super) resources: SavedResources,
    pub(super) has_hierarchy: bool,
    pub(super) now: u32,
    pub(super) last_check: u32,
}

impl RegistryState {
    /// Number of live entities saved.
    pub fn len(&self) -> usize {
        self.allocator.len()
    }

    /// The saved entity allocator: the handles alive, free and reserved
    /// at the save (what a restore puts back), for checks made before a
    /// restore changes anything.
    pub fn entities(&self) -> &EntityAllocator {
        &self.allocator
    }

    /// `true` when no entity was saved.
    pub fn is_empty(&self) -> bool {
        self.allocator.is_empty()
    }

    /// The change tick at the save ([`Registry::change_tick`]).
    pub fn change_tick(&self) -> ChangeTick {
        ChangeTick::new(self.now)
    }

    /// The names of the resources the save left out (their types did not
    /// opt in with [`Registry::register_resource_clone`]), sorted. A
    /// restore leaves those resources as it finds them.
    pub fn unsaved_resources(&self) -> &[&'static str] {
        &self.resources.unsaved
    }

    /// Number of components saved of the type named `name` (its type name
    /// for a Rust type); `None` when the state has no such pool.
    pub fn count_by_name(&self, name: &str) -> Option<usize> {
        self.pools
            .iter()
            .find(|p| p.info().name() == name)
            .map(SavedPool::len)
    }
}

impl Registry {
    /// Lets in-memory states ([`save_state`](Self::save_state)) copy
    /// `T`'s pool with `T`'s `Clone` (creating the pool if missing). Every
    /// component type in the registry needs this once before a save; the
    /// hierarchy's [`ChildOf`](crate::ChildOf) and
    /// [`Children`](crate::Children) and [`Disabled`](crate::Disabled)
    /// have it from the start, and run-time components of plain bytes
    /// (no destructor) are copied byte for byte.
    pub fn register_clone<T: Component + Clone>(&mut self) {
        self.pools.register_clone::<T>();
    }

    /// [`register_clone`](Self::register_clone), and lets a save copy
    /// only the `T`s written since the state (or the ring,
    /// [`StateRing`](crate::StateRing)) was last saved or restored, as
    /// their changed ticks say, when `T` tracks changes
    /// ([`track_changes`](Self::track_changes)); a pool nobody wrote is
    /// not copied at all. For a type whose values change only through
    /// `&mut` access: a change through a shared reference (an atomic, a
    /// lock or a cell inside `T`) leaves no tick, and such a save would
    /// miss it. Writes through `Untracked`, `get_mut_untracked`,
    /// `Mut::bypass_change_detection` and the like are seen (they make
    /// the next save copy every value).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct Position(f32);
    ///
    /// let mut registry = Registry::new();
    /// registry.register_clone_delta::<Position>();
    /// registry.track_changes::<Position>();
    /// let entities: Vec<_> = (0..100).map(|i| registry.spawn((Position(i as f32),))).collect();
    /// let mut state = registry.save_state().unwrap();
    /// registry.advance_change_tick();
    /// registry.get_mut::<Position>(entities[7]).unwrap().0 = -1.0;
    /// registry.save_state_into(&mut state).unwrap(); // copies one Position
    /// registry.get_mut::<Position>(entities[7]).unwrap().0 = 5.0;
    /// registry.restore_state(&state).unwrap(); // puts one back
    /// assert_eq!(registry.get::<Position>(entities[7]), Some(&Position(-1.0)));
    /// ```
    pub fn register_clone_delta<T: Component + Clone>(&mut self) {
        self.pools.register_clone_delta::<T>();
    }

    /// Lets in-memory states copy the resource `R` with its `Clone`
    /// (whether `R` is in the registry yet or not). Resources of other
    /// types are left out of states, named by
    /// [`RegistryState::unsaved_resources`].
    pub fn register_resource_clone<R: Clone + Send + Sync + 'static>(&mut self) {
        self.resources.register_clone::<R>(false);
    }

    /// [`register_resource_clone`](Self::register_resource_clone), and a
    /// save shares the copy of `R` that the state (or the ring's newest
    /// frame) holds already while nothing wrote `R` since (a `ResMut`
    /// written through, [`resource_mut`](Self::resource_mut), an insert):
    /// a large resource written in few ticks (a spawn plan, a level's
    /// map) is copied only in those. For a type whose value changes only
    /// through marked `&mut` access: a change through a shared reference
    /// (an atomic, a lock or a cell inside `R`) is not seen, and such a
    /// save would keep the older copy; so is a write through a guard of
    /// `resource_mut_with_ticks` that its holder does not mark (which
    /// change detection misses too).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct Plan(Vec<u32>);
    ///
    /// let mut registry = Registry::new();
    /// registry.register_resource_clone_delta::<Plan>();
    /// registry.insert_resource(Plan(vec![1, 2, 3]));
    /// let mut state = registry.save_state().unwrap();
    /// registry.save_state_into(&mut state).unwrap(); // Plan not copied again
    /// registry.resource_mut::<Plan>().unwrap().0.push(4);
    /// registry.save_state_into(&mut state).unwrap(); // copied: it was written
    /// registry.resource_mut::<Plan>().unwrap().0.clear();
    /// registry.restore_state(&state).unwrap();
    /// assert_eq!(registry.resource::<Plan>(), Some(&Plan(vec![1, 2, 3, 4])));
    /// ```
    pub fn register_resource_clone_delta<R: Clone + Send + Sync + 'static>(&mut self) {
        self.resources.register_clone::<R>(true);
    }

    /// The whole registry, saved in memory: see [`RegistryState`].
    ///
    /// # Errors
    ///
    /// [`StateError::NotClonable`] naming the first component pool that
    /// cannot be copied (see [`register_clone`](Self::register_clone)).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{Registry, StateError};
    ///
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct Position(f32);
    /// struct Secret;
    ///
    /// let mut registry = Registry::new();
    /// registry.register_clone::<Position>();
    /// let a = registry.spawn((Position(1.0),));
    /// let state = registry.save_state().unwrap();
    ///
    /// registry.get_mut::<Position>(a).unwrap().0 = 5.0;
    /// let b = registry.spawn((Position(2.0),));
    /// registry.restore_state(&state).unwrap();
    /// assert_eq!(registry.get::<Position>(a), Some(&Position(1.0)));
    /// assert!(!registry.is_alive(b));
    ///
    /// registry.spawn((Secret,));
    /// assert!(matches!(registry.save_state(), Err(StateError::NotClonable { .. })));
    /// ```
    pub fn save_state(&self) -> Result<RegistryState, StateError> {
        let mut state = RegistryState::default();
        self.save_state_into(&mut state)?;
        Ok(state)
    }

    /// [`save_state`](Self::save_state) into `state`, replacing what it
    /// held and reusing its memory where the pools' types match (a
    /// rollback loop that saves every frame allocates only for growth).
    ///
    /// # Errors
    ///
    /// As [`save_state`](Self::save_state); `state` is unchanged then.
    ///
    /// # Panics
    ///
    /// When a component's or resource's `Clone` panics; `state` is then
    /// partly saved: save into it again before restoring from it. (A
    /// ring's [`save_frame`](Self::save_frame) keeps its frames whole
    /// instead.)
    pub fn save_state_into(&self, state: &mut RegistryState) -> Result<(), StateError> {
        let since = delta_since(state.now, self.change.now);
        self.pools
            .save_into(&mut state.pools, self.change.now, since)?;
        let synced = state.allocator_synced.get_mut();
        if *synced != Some(self.allocator.version()) {
            state.allocator.clone_from(&self.allocator);
            *synced = Some(self.allocator.version());
        }
        state.resources = self.resources.save(&state.resources);
        state.has_hierarchy = self.has_hierarchy;
        state.now = self.change.now;
        state.last_check = self.change.last_check;
        Ok(())
    }

    /// Makes the registry what it was when `state` was saved: the same
    /// entities and handles (the allocator's free list and generations
    /// too, so the next spawns get the handles they got after the save),
    /// the same components in the same order, the same change tick, change
    /// ticks and removal logs, and the saved resources. Component types
    /// registered since the save keep their pools, emptied (without
    /// logging removals); resources of a type not registered with
    /// [`register_resource_clone`](Self::register_resource_clone) stay as
    /// they are; resources of such a type inserted after the save are
    /// removed.
    ///
    /// Handles reserved before the restore (by command buffers) name
    /// nothing in the restored allocator: the restore advances
    /// [`entities_epoch`](Self::entities_epoch), so buffers drop them at
    /// their next prepare (`CommandBuffer::resync` of the `command_buffer`
    /// crate). Handles that were reserved at the save come back reserved;
    /// an engine gives them back to its buffers with their saved reserves.
    ///
    /// # Errors
    ///
    /// [`StateError::OtherTypes`] when the state was saved from a
    /// registry whose types were registered in another order; nothing
    /// changes then.
    ///
    /// # Panics
    ///
    /// When a component's `Drop` panics while its pool is emptied (the
    /// restore is not completed then).
    pub fn restore_state(&mut self, state: &RegistryState) -> Result<(), StateError> {
        let times = RestoreTimes {
            now: state.now,
            current: self.change.now,
            since: delta_since(state.now, self.change.now),
        };
        self.pools
            .restore(&state.pools, times, &mut self.change.tracked)?;
        let mut synced = state.allocator_synced.lock();
        if *synced != Some(self.allocator.version()) {
            self.allocator.clone_from(&state.allocator);
            *synced = Some(self.allocator.version());
        }
        drop(synced);
        self.entities_epoch = self.entities_epoch.wrapping_add(1);
        self.has_hierarchy |= state.has_hierarchy;
        self.change.last_check = state.last_check;
        self.set_clock(state.now);
        self.resources.restore(&state.resources, state.now);
        Ok(())
    }
}

/// The tick after which a pool and its copy, equal at a save at tick
/// `saved`, may differ at tick `now`: one before the save, since a write
/// in the save's own tick may come after it. `None` when the save is too
/// far back for the ticks to tell (the clock clamps old ticks every
/// [`CHECK_INTERVAL`] advances), or in the future of `now`.
pub(super) fn delta_since(saved: u32, now: u32) -> Option<u32> {
    (now.wrapping_sub(saved) < CHECK_INTERVAL).then(|| saved.wrapping_sub(1))
}
