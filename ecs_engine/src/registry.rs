//! The registry: the world's entities, component pools and resources.
//!
//! This file holds the struct, its entity methods (spawn, reserve, despawn)
//! and its memory figure; the other `impl Registry` blocks live beside it:
//! `components.rs` (component types and values), `visit.rs` (`visit`,
//! `retain`), `resources.rs` and `state.rs` (in-memory states); the view entry points are in
//! `query/view.rs`, `cell` in `cell.rs`, the change clock in
//! `change/clock.rs`, removal logs in `change/removed.rs`.

mod bytes;
mod clone_entity;
mod components;
mod resources;
mod ring;
mod state;
mod visit;

pub use bytes::RuntimeBytes;
pub use clone_entity::CloneEntityError;
pub use ring::StateRing;
pub use state::{RegistryState, StateError};
pub use visit::EntityChanges;

use std::any::type_name;

use crate::resources::Resources;
use crate::storage::pools::Pools;
use crate::{Bundle, EcsError, Entity, EntityAllocator, SpawnBatch};

/// The world: entities, one [`SparseSet`](crate::SparseSet) per component type, and
/// resources.
///
/// Every operation that takes an [`Entity`] treats a null, stale or unknown
/// handle as not alive: it returns `None`, `false` or
/// [`EcsError::NoSuchEntity`], and never touches another entity's data.
/// Component values are dropped exactly once when they leave the world
/// (remove, replace, despawn, clear or the registry's drop). A `Drop` that
/// panics never leaves the world half-changed: the operation is completed
/// first (no pool holds a dead entity, every other value is dropped once),
/// then the first panic resumes; a batch call stops after the item whose
/// value panicked, the items after it untouched.
///
/// `&self` methods only read; `&mut self` methods change values or
/// structure. For parallel systems that each write different pools, borrow
/// the registry as a [`RegistryCell`](crate::RegistryCell).
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
///
/// #[derive(Debug, PartialEq)]
/// struct Health(i32);
/// struct Name(&'static str);
///
/// let mut registry = Registry::new();
/// let ship = registry.spawn((Health(3), Name("ship")));
/// assert_eq!(registry.insert(ship, Health(2)), Ok(Some(Health(3))));
/// assert!(registry.has::<(Health, Name)>(ship));
/// registry.despawn(ship).unwrap();
/// assert_eq!(registry.get::<Health>(ship), None);
/// assert!(registry.despawn(ship).is_err());
/// ```
#[derive(Debug, Default)]
pub struct Registry {
    pub(crate) allocator: EntityAllocator,
    pub(crate) pools: Pools,
    pub(crate) resources: Resources,
    /// Set by the first `set_parent`: until then despawn skips the
    /// hierarchy's bookkeeping (no pool lookup).
    pub(crate) has_hierarchy: bool,
    /// The change tick and the tracked types (`change/clock.rs`).
    pub(crate) change: crate::change::clock::ChangeClock,
    /// How many times [`replace_entities`](Registry::replace_entities)
    /// swapped the allocator (`entity/allocator_state.rs`).
    pub(crate) entities_epoch: u64,
    /// Required components (`required.rs`).
    pub(crate) required: crate::required::Requirements,
}

/// The value [`Registry::try_insert`] refused, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error}")]
pub struct InsertError<T> {
    /// Why the value was refused.
    pub error: EcsError,
    /// The value, given back untouched.
    pub value: T,
}

fn missing<T>(entity: Entity) -> EcsError {
    EcsError::MissingComponent {
        entity,
        component: type_name::<T>().into(),
    }
}

impl Registry {
    /// An empty registry with the default entity limit (`u32::MAX - 1`).
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty registry using `allocator` (for its limits:
    /// [`EntityAllocator::with_max_live`],
    /// [`EntityAllocator::with_max_generation`]).
    pub fn with_allocator(allocator: EntityAllocator) -> Self {
        Registry {
            allocator,
            ..Self::default()
        }
    }

    /// The entity allocator (read-only): live handles, limits, slot counts.
    pub fn entities(&self) -> &EntityAllocator {
        &self.allocator
    }

    /// How many times [`replace_entities`](Self::replace_entities) replaced
    /// this registry's allocator (0 for a new registry). A handle reserved
    /// in one epoch is meaningless in a later one, even where the new
    /// allocator has a slot of that index and generation: whoever keeps
    /// reserved handles (a command buffer) records the epoch they came
    /// from and drops them when it changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// assert_eq!(registry.entities_epoch(), 0);
    /// let copy = registry.entities().clone();
    /// registry.replace_entities(copy);
    /// assert_eq!(registry.entities_epoch(), 1);
    /// ```
    #[inline]
    pub fn entities_epoch(&self) -> u64 {
        self.entities_epoch
    }

    // --- entities -------------------------------------------------------

    /// Spawns an entity with the components of `bundle` (a tuple; `()` for
    /// none).
    ///
    /// # Panics
    ///
    /// When the live-entity limit is reached, `bundle` holds a
    /// [`ChildOf`](crate::ChildOf) or [`Children`](crate::Children) value,
    /// or it names one component type twice (`(A(1), A(2))`);
    /// [`try_spawn`](Self::try_spawn) returns the error instead.
    #[track_caller]
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> Entity {
        self.try_spawn(bundle)
            .unwrap_or_else(|e| panic!("Registry::spawn: {e}"))
    }

    /// Spawns an entity with no component.
    ///
    /// # Panics
    ///
    /// When the live-entity limit is reached.
    #[track_caller]
    pub fn spawn_empty(&mut self) -> Entity {
        self.spawn(())
    }

    /// Spawns an entity with the components of `bundle`.
    ///
    /// # Errors
    ///
    /// [`EcsError::TooManyEntities`] when the live-entity limit is reached;
    /// [`EcsError::ReadOnlyComponent`] when `bundle` holds a
    /// [`ChildOf`](crate::ChildOf) or [`Children`](crate::Children) value
    /// (links change only through [`set_parent`](Self::set_parent) and its
    /// kin); [`EcsError::DuplicateBundleComponent`] when it names one
    /// component type twice. Either way the bundle is dropped and the
    /// registry is unchanged.
    #[inline]
    pub fn try_spawn<B: Bundle>(&mut self, bundle: B) -> Result<Entity, EcsError> {
        if let Some(error) = crate::hierarchy::refuse_bundle::<B>() {
            return Err(error);
        }
        let entity = self.allocator.allocate()?;
        bundle.insert_into(self, entity);
        B::fill_required(self, entity);
        Ok(entity)
    }

    /// Spawns one entity per bundle. The returned [`SpawnBatch`] yields
    /// the handles in order as it is advanced, and spawns whatever is left
    /// when it drops, each pool found and grown once (from the iterator's
    /// size hint) for the whole batch: `registry.spawn_batch(..);` costs
    /// about what pushing the components to one `Vec` per type does, and
    /// allocates no list of handles.
    ///
    /// # Panics
    ///
    /// When the live-entity limit is reached (the entities spawned before
    /// stay alive), or when `B` names one component type twice (nothing is
    /// spawned).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{Entity, Registry};
    ///
    /// let mut registry = Registry::new();
    /// registry.spawn_batch((0..1000u32).map(|i| (i, i as f32)));
    /// assert_eq!(registry.len(), 1000);
    /// let handles: Vec<Entity> = registry.spawn_batch((0..3u8).map(|i| (i,))).collect();
    /// assert_eq!(registry.get::<u8>(handles[2]), Some(&2));
    /// ```
    pub fn spawn_batch<B: Bundle, I: IntoIterator<Item = B>>(
        &mut self,
        bundles: I,
    ) -> SpawnBatch<'_, B, I::IntoIter> {
        SpawnBatch {
            registry: self,
            bundles: bundles.into_iter(),
            grown: false,
        }
    }

    /// Reserves a handle for an entity that does not exist yet (see
    /// [`EntityAllocator::reserve`]): it is not alive, and no later spawn
    /// gets it, until [`spawn_reserved`](Self::spawn_reserved) makes it
    /// alive or [`cancel_reserved`](Self::cancel_reserved) gives it back.
    ///
    /// # Errors
    ///
    /// [`EcsError::TooManyEntities`] when the live-entity limit is reached.
    #[inline]
    pub fn reserve_entity(&mut self) -> Result<Entity, EcsError> {
        self.allocator.reserve()
    }

    /// Reserves up to `count` handles at once, as `count` calls of
    /// [`reserve_entity`](Self::reserve_entity) would (same handles, same
    /// order), appending them to `out`.
    ///
    /// # Errors
    ///
    /// [`EcsError::TooManyEntities`] when the live-entity limit stops it;
    /// the handles reserved before that are in `out`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut reserved = Vec::new();
    /// registry.reserve_entities(3, &mut reserved).unwrap();
    /// assert_eq!((reserved.len(), registry.entities().reserved()), (3, 3));
    /// ```
    pub fn reserve_entities(
        &mut self,
        count: usize,
        out: &mut impl Extend<Entity>,
    ) -> Result<(), EcsError> {
        self.allocator.reserve_many(count, out)
    }

    /// Reserves the fresh slots that [`IndexLane`](crate::IndexLane)s
    /// opened at `base` handed out, `counts[p]` of them for lane `p`; see
    /// [`EntityAllocator::reserve_lanes`]. Returns how many the live-entity
    /// limit refused (their handles are never alive).
    ///
    /// # Panics
    ///
    /// When slots were created since `base` was taken.
    #[track_caller]
    pub fn reserve_lanes(&mut self, base: usize, counts: &[usize]) -> usize {
        self.allocator.reserve_lanes(base, counts)
    }

    /// Makes the reserved handle `entity` alive with the components of
    /// `bundle`.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not reserved (the bundle
    /// is dropped); [`EcsError::ReadOnlyComponent`] when `bundle` holds a
    /// [`ChildOf`](crate::ChildOf) or [`Children`](crate::Children) value
    /// (the bundle is dropped and the reserved handle given back).
    #[inline]
    pub fn spawn_reserved<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EcsError> {
        if let Some(error) = crate::hierarchy::refuse_bundle::<B>() {
            let _ = self.allocator.cancel(entity);
            return Err(error);
        }
        self.allocator.activate(entity)?;
        bundle.insert_into(self, entity);
        B::fill_required(self, entity);
        Ok(())
    }

    /// Makes each reserved handle of `entities` alive, in order, with the
    /// next bundle from `bundles`: the same result as one
    /// [`spawn_reserved`](Self::spawn_reserved) per entity, but each
    /// component pool is looked up and grown once for the whole batch. It
    /// stops early if `bundles` runs out.
    ///
    /// # Errors
    ///
    /// `(k, error)` when `entities[k]` is not reserved
    /// ([`EcsError::NoSuchEntity`]): the entities before it are alive, its
    /// bundle was dropped, and the later entities are untouched, their
    /// bundles still in `bundles`; `(0, EcsError::ReadOnlyComponent)` when
    /// `B` holds a [`ChildOf`](crate::ChildOf) or
    /// [`Children`](crate::Children) value: the first bundle is dropped and
    /// its handle given back, the rest untouched.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let mut reserved = Vec::new();
    /// registry.reserve_entities(3, &mut reserved).unwrap();
    /// let mut bundles = (0..3_u32).map(|i| (i, i as f32));
    /// registry.spawn_reserved_batch(&reserved, &mut bundles).unwrap();
    /// assert_eq!(registry.get::<u32>(reserved[2]), Some(&2));
    ///
    /// // A handle that is no longer reserved stops the batch.
    /// registry.reserve_entities(2, &mut reserved).unwrap();
    /// registry.cancel_reserved(reserved[3]).unwrap();
    /// let mut bundles = (3..5_u32).map(|i| (i,));
    /// let error = registry.spawn_reserved_batch(&reserved[3..], &mut bundles);
    /// assert_eq!(error.unwrap_err().0, 0);
    /// assert_eq!(bundles.next(), Some((4,)));
    /// ```
    #[inline]
    pub fn spawn_reserved_batch<B: Bundle>(
        &mut self,
        entities: &[Entity],
        bundles: &mut impl Iterator<Item = B>,
    ) -> Result<(), (usize, EcsError)> {
        if B::has_required(self) {
            // Required components: one entity at a time.
            for (k, &entity) in entities.iter().enumerate() {
                let Some(bundle) = bundles.next() else { break };
                self.spawn_reserved(entity, bundle).map_err(|e| (k, e))?;
            }
            return Ok(());
        }
        B::spawn_reserved_batch(self, entities, bundles)
    }

    /// Gives a reserved handle back; its slot is reused later with a new
    /// generation.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not reserved.
    pub fn cancel_reserved(&mut self, entity: Entity) -> Result<(), EcsError> {
        self.allocator.cancel(entity)
    }

    /// Destroys `entity` and drops all its components. Its handle, and every
    /// copy of it, becomes stale. In a hierarchy it leaves its parent's
    /// [`Children`](crate::Children) and its children become roots (see
    /// [`despawn_recursive`](Self::despawn_recursive) to take them too).
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive.
    ///
    /// # Panics
    ///
    /// When a component's `Drop` panics. The despawn is completed first:
    /// the entity is dead, no pool holds it, and each of its components is
    /// dropped exactly once; then the first panic resumes.
    #[inline]
    pub fn despawn(&mut self, entity: Entity) -> Result<(), EcsError> {
        self.allocator.free(entity)?;
        if self.has_hierarchy {
            crate::hierarchy::unlink(self, entity);
        }
        self.pools.remove_entity(entity);
        Ok(())
    }

    /// Despawns the entities of `entities` in order, as many
    /// [`despawn`](Self::despawn) calls would, but removes the components
    /// pool by pool (and the pools in parallel, for a large batch of
    /// components that need no drop, when called on a rayon worker thread;
    /// never from another thread, which would block on the global pool),
    /// which keeps each pool's memory warm and costs one pass over the pool
    /// table.
    ///
    /// # Errors
    ///
    /// `Err((i, error))` when `entities[i]` is not alive (or appears twice):
    /// `entities[..i]` are despawned, `entities[i..]` are left as they are.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let batch: Vec<_> = registry.spawn_batch((0..4u32).map(|i| (i,))).collect();
    /// assert!(registry.despawn_many(&batch[..2]).is_ok());
    /// assert_eq!(registry.len(), 2);
    /// let (at, _) = registry.despawn_many(&[batch[2], batch[0], batch[3]]).unwrap_err();
    /// assert_eq!(at, 1);
    /// assert!(registry.is_alive(batch[3]));
    /// assert!(!registry.is_alive(batch[2]));
    /// ```
    pub fn despawn_many(&mut self, entities: &[Entity]) -> Result<(), (usize, EcsError)> {
        let mut freed = 0;
        let mut failure = None;
        for &entity in entities {
            if let Err(error) = self.allocator.free(entity) {
                failure = Some((freed, error));
                break;
            }
            freed += 1;
        }
        if self.has_hierarchy {
            for &entity in &entities[..freed] {
                crate::hierarchy::unlink(self, entity);
            }
        }
        self.pools.remove_entities(&entities[..freed]);
        failure.map_or(Ok(()), Err)
    }

    /// `true` when `entity` is alive in this registry.
    #[inline]
    pub fn is_alive(&self, entity: Entity) -> bool {
        self.allocator.is_alive(entity)
    }

    /// Number of live entities.
    #[inline]
    pub fn len(&self) -> usize {
        self.allocator.len()
    }

    /// `true` when no entity is alive.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.allocator.is_empty()
    }

    /// Despawns every entity (dropping every component). Resources stay.
    ///
    /// # Panics
    ///
    /// When a component's `Drop` panics. The clear is completed first (no
    /// entity alive, every pool empty, every value dropped exactly once);
    /// then the first panic resumes.
    pub fn clear(&mut self) {
        let live: Vec<Entity> = self.allocator.iter().collect();
        for entity in live {
            self.allocator
                .free(entity)
                .expect("entity listed as alive by the allocator");
        }
        self.pools.clear();
    }

    // --- memory ---------------------------------------------------------

    /// Bytes the registry holds on the heap for entities and components
    /// (allocator, sparse pages, dense arrays, component capacity; not
    /// resources).
    pub fn heap_bytes(&self) -> usize {
        self.allocator.heap_bytes() + self.pools.heap_bytes()
    }

    #[inline]
    pub(crate) fn check_alive(&self, entity: Entity) -> Result<(), EcsError> {
        if self.allocator.is_alive(entity) {
            Ok(())
        } else {
            Err(EcsError::NoSuchEntity { entity })
        }
    }
}
