//! The registry: the world's entities, component pools and resources.

use std::any::type_name;
use std::ptr::NonNull;

use crate::locked::Locked;
use crate::pools::Pools;
use crate::query::{QueryFilter, ReadOnlyQueryData};
use crate::resources::Resources;
use crate::{
    Access, Bundle, Component, ComponentDescriptor, ComponentId, ComponentInfo, EcsError, Entity,
    EntityAllocator, PoolMut, QueryData, RawView, RegistryCell, SparseSet, SpawnBatch, View,
};

/// The world: entities, one [`SparseSet`] per component type, and resources.
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
/// the registry as a [`RegistryCell`].
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
///
/// #[derive(Debug, PartialEq)]
/// struct Health(i32);
///
/// let mut registry = Registry::new();
/// let ship = registry.spawn((Health(3), "ship"));
/// assert_eq!(registry.insert(ship, Health(2)), Ok(Some(Health(3))));
/// assert!(registry.has::<(Health, &str)>(ship));
/// registry.despawn(ship).unwrap();
/// assert_eq!(registry.get::<Health>(ship), None);
/// assert!(registry.despawn(ship).is_err());
/// ```
#[derive(Debug, Default)]
pub struct Registry {
    pub(crate) allocator: EntityAllocator,
    pub(crate) pools: Pools,
    resources: Resources,
    /// Set by the first `set_parent`: until then despawn skips the
    /// hierarchy's bookkeeping (no pool lookup).
    pub(crate) has_hierarchy: bool,
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

    // --- entities -------------------------------------------------------

    /// Spawns an entity with the components of `bundle` (a tuple; `()` for
    /// none).
    ///
    /// # Panics
    ///
    /// When the live-entity limit is reached; [`try_spawn`](Self::try_spawn)
    /// returns the error instead.
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
    /// the bundle is dropped and the registry is unchanged.
    #[inline]
    pub fn try_spawn<B: Bundle>(&mut self, bundle: B) -> Result<Entity, EcsError> {
        let entity = self.allocator.allocate()?;
        bundle.insert_into(self, entity);
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
    /// stay alive).
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
    /// is dropped).
    #[inline]
    pub fn spawn_reserved<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EcsError> {
        self.allocator.activate(entity)?;
        bundle.insert_into(self, entity);
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
    /// bundles still in `bundles`.
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
    /// pool by pool (and the pools in parallel on the current rayon pool,
    /// for a large batch of components that need no drop), which keeps
    /// each pool's memory warm and costs one pass over the pool table.
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

    // --- components -----------------------------------------------------

    /// The id of `T` in this registry, creating its (empty) pool on first
    /// use. A view over a registered type nobody has inserted yet is empty.
    pub fn register<T: Component>(&mut self) -> ComponentId {
        self.pools.register::<T>()
    }

    /// The id of `T`, if it has a pool.
    pub fn component_id<T: Component>(&self) -> Option<ComponentId> {
        self.pools.id_of::<T>()
    }

    /// What the registry knows of component type `id`.
    pub fn component_info(&self, id: ComponentId) -> Option<&ComponentInfo> {
        self.pools.info(id)
    }

    /// Registers a component at run time (for the C API): a name, a layout
    /// and an optional destructor. Its pool is created empty; its values
    /// are reached by id through the raw API ([`insert_raw`](Self::insert_raw),
    /// [`get_raw`](Self::get_raw), [`raw_view`](Self::raw_view)) and the
    /// id-based methods ([`remove_by_id`](Self::remove_by_id),
    /// [`has_id`](Self::has_id), [`count_id`](Self::count_id)). Despawn,
    /// clear and the registry's drop drop its values like any other.
    ///
    /// # Errors
    ///
    /// [`EcsError::DuplicateComponentName`] when a run-time component has
    /// that name already (names of Rust types are not compared).
    pub fn register_runtime(
        &mut self,
        descriptor: ComponentDescriptor,
    ) -> Result<ComponentId, EcsError> {
        self.pools.register_runtime(descriptor)
    }

    /// The id of the run-time component registered as `name`.
    pub fn component_by_name(&self, name: &str) -> Option<ComponentId> {
        self.pools.id_by_name(name)
    }

    /// Number of component types with a pool (ids `0..component_types()`).
    pub fn component_types(&self) -> usize {
        self.pools.len()
    }

    /// Gives `entity` the component `value`; returns the value it replaces,
    /// like `HashMap::insert` (so the old value's `Drop` runs in the
    /// caller's code, after the pool is whole again).
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive (`value` is
    /// dropped).
    #[inline]
    pub fn insert<T: Component>(
        &mut self,
        entity: Entity,
        value: T,
    ) -> Result<Option<T>, EcsError> {
        self.check_alive(entity)?;
        Ok(self.pools.get_or_create::<T>().insert_live(entity, value))
    }

    /// Gives `entity` the component `value` unless it already has one.
    ///
    /// # Errors
    ///
    /// [`EcsError::ComponentExists`] when `entity` already has a `T`, or
    /// [`EcsError::NoSuchEntity`] when it is not alive; either way `value`
    /// comes back in the error and nothing changes.
    pub fn try_insert<T: Component>(
        &mut self,
        entity: Entity,
        value: T,
    ) -> Result<&mut T, InsertError<T>> {
        if let Err(error) = self.check_alive(entity) {
            return Err(InsertError { error, value });
        }
        let pool = self.pools.get_or_create::<T>();
        if pool.contains(entity) {
            let error = EcsError::ComponentExists {
                entity,
                component: type_name::<T>().into(),
            };
            return Err(InsertError { error, value });
        }
        pool.insert_live(entity, value);
        Ok(pool.get_mut(entity).expect("just inserted"))
    }

    /// Inserts each `(entity, value)` that `items` yields, in order, as
    /// [`insert`](Self::insert) would (a replaced value is dropped), with
    /// the pool looked up once; stops at the first entity that is not
    /// alive. Returns how many were inserted, and what stopped it: the
    /// [`InsertError`] of that entity, with its value; the items after it
    /// are still in `items`.
    ///
    /// # Panics
    ///
    /// When a replaced value's `Drop` panics: the batch stops after that
    /// item, which is inserted (its old value counted as dropped); the
    /// items after it are still in `items`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// let mut registry = Registry::new();
    /// let (a, b) = (registry.spawn(()), registry.spawn(()));
    /// registry.despawn(b).unwrap();
    /// let mut items = [(a, 1_u32), (b, 2), (a, 3)].into_iter();
    /// let (done, stop) = registry.insert_many(&mut items);
    /// assert_eq!((done, stop.unwrap_err().value), (1, 2));
    /// assert_eq!(registry.insert_many(&mut items).0, 1);
    /// assert_eq!(registry.get::<u32>(a), Some(&3));
    /// ```
    pub fn insert_many<T: Component>(
        &mut self,
        items: &mut impl Iterator<Item = (Entity, T)>,
    ) -> (usize, Result<(), InsertError<T>>) {
        let Registry {
            allocator, pools, ..
        } = self;
        let dead = |entity, value| {
            let error = EcsError::NoSuchEntity { entity };
            Err(InsertError { error, value })
        };
        let Some((entity, value)) = items.next() else {
            return (0, Ok(()));
        };
        if !allocator.is_alive(entity) {
            return (0, dead(entity, value));
        }
        // Created on the first live entity, as `insert` would, and grown
        // once for the items announced.
        let pool = pools.get_or_create::<T>();
        pool.reserve(items.size_hint().0);
        drop(pool.insert_live(entity, value));
        let mut done = 1;
        for (entity, value) in items {
            if !allocator.is_alive(entity) {
                return (done, dead(entity, value));
            }
            // A replaced value is dropped here, after its pool is whole.
            drop(pool.insert_live(entity, value));
            done += 1;
        }
        (done, Ok(()))
    }

    /// Removes (and drops) the `T` of each entity that `entities` yields,
    /// in order, as [`remove`](Self::remove) would, with the pool looked
    /// up once; stops at the first failure. Returns how many were removed,
    /// and what stopped it: [`EcsError::NoSuchEntity`] or
    /// [`EcsError::MissingComponent`] for that entity; the entities after
    /// it are still in `entities`.
    ///
    /// # Panics
    ///
    /// When a removed value's `Drop` panics: the batch stops after that
    /// entity, whose value is removed (and counted as dropped); the
    /// entities after it are still in `entities`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{EcsError, Registry};
    ///
    /// let mut registry = Registry::new();
    /// let a = registry.spawn((1_u32,));
    /// let b = registry.spawn((2_u32,));
    /// let mut entities = [a, a, b].into_iter();
    /// let (done, stop) = registry.remove_many::<u32>(&mut entities);
    /// assert!(matches!((done, stop), (1, Err(EcsError::MissingComponent { .. }))));
    /// assert_eq!(registry.remove_many::<u32>(&mut entities), (1, Ok(())));
    /// assert_eq!(registry.count::<u32>(), 0);
    /// ```
    pub fn remove_many<T: Component>(
        &mut self,
        entities: &mut impl Iterator<Item = Entity>,
    ) -> (usize, Result<(), EcsError>) {
        if crate::hierarchy::is_hierarchy::<T>() {
            let mut done = 0;
            for entity in entities {
                if let Err(error) = self.remove::<T>(entity) {
                    return (done, Err(error));
                }
                done += 1;
            }
            return (done, Ok(()));
        }
        let Registry {
            allocator, pools, ..
        } = self;
        let mut pool = pools.get_mut::<T>();
        let mut done = 0;
        for entity in entities {
            if !allocator.is_alive(entity) {
                return (done, Err(EcsError::NoSuchEntity { entity }));
            }
            match pool.as_deref_mut().and_then(|pool| pool.remove(entity)) {
                Some(_removed) => done += 1,
                None => return (done, Err(missing::<T>(entity))),
            }
        }
        (done, Ok(()))
    }

    /// Gives `entity` every component of `bundle`, replacing (and dropping)
    /// those it already had.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive (the bundle is
    /// dropped).
    ///
    /// # Panics
    ///
    /// When a replaced value's `Drop` panics. Every component of the bundle
    /// is inserted first, and every replaced value dropped exactly once;
    /// then the first panic resumes.
    pub fn insert_bundle<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EcsError> {
        self.check_alive(entity)?;
        bundle.insert_into(self, entity);
        Ok(())
    }

    /// Takes `entity`'s `T` out of the registry. Taking a
    /// [`ChildOf`](crate::ChildOf) or [`Children`](crate::Children) detaches
    /// the child or the children, as [`remove_parent`](Self::remove_parent).
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive;
    /// [`EcsError::MissingComponent`] when it has no `T`.
    #[inline]
    pub fn remove<T: Component>(&mut self, entity: Entity) -> Result<T, EcsError> {
        self.check_alive(entity)?;
        if crate::hierarchy::is_hierarchy::<T>() {
            return crate::hierarchy::remove_typed(self, entity)
                .ok_or_else(|| missing::<T>(entity));
        }
        self.pools
            .get_mut::<T>()
            .and_then(|pool| pool.remove(entity))
            .ok_or_else(|| missing::<T>(entity))
    }

    /// Removes (and drops) every component of `B` that `entity` has.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive.
    ///
    /// # Panics
    ///
    /// When a removed value's `Drop` panics. Every component of `B` is
    /// removed first, each dropped exactly once; then the first panic
    /// resumes.
    pub fn remove_bundle<B: Bundle>(&mut self, entity: Entity) -> Result<(), EcsError> {
        self.check_alive(entity)?;
        B::remove_from(self, entity);
        Ok(())
    }

    /// Removes (and drops) `entity`'s component of type `id`; `true` if it
    /// had one.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive.
    ///
    /// # Panics
    ///
    /// When the value's `Drop` panics, after it has left its pool.
    pub fn remove_by_id(&mut self, entity: Entity, id: ComponentId) -> Result<bool, EcsError> {
        self.check_alive(entity)?;
        Ok(self.pools.remove_by_id(id, entity))
    }

    /// Gives `entity` the value of run-time component `id` at `src`, by
    /// copying its `layout.size()` bytes; replaces (and drops) the value it
    /// had.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive,
    /// [`EcsError::UnknownComponent`] when `id` names no component here,
    /// [`EcsError::TypedComponent`] when it names a Rust type. Nothing is
    /// read from `src` then, and the value stays the caller's (to drop or
    /// reuse).
    ///
    /// # Safety
    ///
    /// `src` is readable for the component's size (it need not be aligned)
    /// and holds a valid value of the component, which may be sent to and
    /// shared between threads. It must not point into this registry's
    /// storage (e.g. a pointer from [`get_raw`](Self::get_raw)). On `Ok`
    /// the value is moved into the registry: the caller must not drop it.
    pub unsafe fn insert_raw(
        &mut self,
        entity: Entity,
        id: ComponentId,
        src: *const u8,
    ) -> Result<(), EcsError> {
        self.check_alive(entity)?;
        let (pool, _) = self.pools.blob_mut(id)?;
        // SAFETY: forwarded contract (on `Err`, nothing was read).
        unsafe { pool.insert(entity, src) }.map_err(|holder| EcsError::SlotHeld {
            entity,
            holder,
            component: self
                .pools
                .info(id)
                .map_or("?".into(), ComponentInfo::name_cow),
        })
    }

    /// A pointer to `entity`'s value of run-time component `id`, aligned to
    /// its layout, valid until the registry next changes (a structural
    /// change may move it). Only read through it: for writing, use
    /// [`get_raw_mut`](Self::get_raw_mut).
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive,
    /// [`EcsError::UnknownComponent`] or [`EcsError::TypedComponent`] for
    /// an id that is not a run-time component here, and
    /// [`EcsError::MissingComponent`] when `entity` has no such value.
    pub fn get_raw(&self, entity: Entity, id: ComponentId) -> Result<NonNull<u8>, EcsError> {
        self.check_alive(entity)?;
        let (pool, info) = self.pools.blob(id)?;
        pool.get(entity).ok_or_else(|| EcsError::MissingComponent {
            entity,
            component: info.name_cow(),
        })
    }

    /// As [`get_raw`](Self::get_raw), with a pointer that may be written
    /// through (until the registry next changes).
    ///
    /// # Errors
    ///
    /// As [`get_raw`](Self::get_raw).
    pub fn get_raw_mut(
        &mut self,
        entity: Entity,
        id: ComponentId,
    ) -> Result<NonNull<u8>, EcsError> {
        self.check_alive(entity)?;
        let (pool, info) = self.pools.blob_mut(id)?;
        pool.get(entity).ok_or_else(|| EcsError::MissingComponent {
            entity,
            component: info.name_cow(),
        })
    }

    /// A [`RawView`] over run-time components: the entities that have all
    /// of `terms`' components, each term read or written as given.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoTerms`] for an empty list,
    /// [`EcsError::UnknownComponent`] / [`EcsError::TypedComponent`] for an
    /// id that is not a run-time component here, and
    /// [`EcsError::DuplicateTerm`] for an id listed twice.
    pub fn raw_view(&mut self, terms: &[(ComponentId, Access)]) -> Result<RawView<'_>, EcsError> {
        RawView::new(Locked::exclusive(self), terms)
    }

    /// `true` when `entity` is alive and has every component type of `B`
    /// (a tuple type, e.g. `has::<(Position, Velocity)>`).
    pub fn has<B: Bundle>(&self, entity: Entity) -> bool {
        B::contained_in(self, entity)
    }

    /// `true` when `entity` is alive and has component type `id`.
    pub fn has_id(&self, entity: Entity, id: ComponentId) -> bool {
        self.is_alive(entity) && self.pools.contains_by_id(id, entity)
    }

    /// `entity`'s `T`; `None` when it has none or is not alive.
    #[inline]
    pub fn get<T: Component>(&self, entity: Entity) -> Option<&T> {
        self.pools.get::<T>()?.get(entity)
    }

    /// `entity`'s `T`, mutable; `None` when it has none or is not alive.
    #[inline]
    pub fn get_mut<T: Component>(&mut self, entity: Entity) -> Option<&mut T> {
        self.pools.get_mut::<T>()?.get_mut(entity)
    }

    /// `entity`'s `T`, or an error that says why not.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive;
    /// [`EcsError::MissingComponent`] when it has no `T`.
    pub fn component<T: Component>(&self, entity: Entity) -> Result<&T, EcsError> {
        self.check_alive(entity)?;
        self.get(entity).ok_or_else(|| missing::<T>(entity))
    }

    /// `entity`'s `T`, mutable, or an error that says why not.
    ///
    /// # Errors
    ///
    /// As [`component`](Self::component).
    pub fn component_mut<T: Component>(&mut self, entity: Entity) -> Result<&mut T, EcsError> {
        self.check_alive(entity)?;
        self.get_mut(entity).ok_or_else(|| missing::<T>(entity))
    }

    /// The pool of `T` (read-only); `None` before `T` is first used.
    pub fn pool<T: Component>(&self) -> Option<&SparseSet<T>> {
        self.pools.get::<T>()
    }

    /// The pool of `T` (created if missing), borrowed for many inserts,
    /// removals and lookups with the type looked up once; see [`PoolMut`].
    pub fn pool_mut<T: Component>(&mut self) -> PoolMut<'_, T> {
        let Registry {
            allocator, pools, ..
        } = self;
        PoolMut {
            allocator,
            pool: pools.get_or_create::<T>(),
        }
    }

    /// Number of entities with a `T`.
    pub fn count<T: Component>(&self) -> usize {
        self.pool::<T>().map_or(0, SparseSet::len)
    }

    /// Number of entities with component type `id`.
    pub fn count_id(&self, id: ComponentId) -> usize {
        self.pools.len_by_id(id)
    }

    // --- views ----------------------------------------------------------

    /// A read-only view over `Q` (e.g. `(Entity, &Position, Option<&Name>)`).
    ///
    /// # Panics
    ///
    /// Never for a well-formed program: read locks taken through `&self`
    /// cannot conflict, since write locks need `&mut Registry`.
    #[track_caller]
    pub fn view<Q: ReadOnlyQueryData>(&self) -> View<'_, Q> {
        View::new(Locked::shared(self)).unwrap_or_else(|e| panic!("Registry::view: {e}"))
    }

    /// A view over `Q` that may write components (e.g.
    /// `(&mut Position, &Velocity)`).
    ///
    /// # Panics
    ///
    /// When `Q` names one component type twice and one of them is `&mut`.
    #[track_caller]
    pub fn view_mut<Q: QueryData>(&mut self) -> View<'_, Q> {
        View::new(Locked::exclusive(self))
            .unwrap_or_else(|e| panic!("Registry::view_mut: query names a type twice: {e}"))
    }

    /// A view over `Q` with filter `F` (e.g. `Without<Frozen>`), for code
    /// that names the filter as a type.
    ///
    /// # Panics
    ///
    /// As [`view_mut`](Self::view_mut), also for a filter type the query
    /// writes.
    #[track_caller]
    pub fn view_filtered<Q: QueryData, F: QueryFilter>(&mut self) -> View<'_, Q, F> {
        View::new(Locked::exclusive(self))
            .unwrap_or_else(|e| panic!("Registry::view_filtered: {e}"))
    }

    /// Visits every entity matching `Q` once, like [`View::each_with_entity`],
    /// and lets the closure despawn the visited entity or remove its
    /// components through [`EntityChanges`]. The changes are applied when
    /// the pass ends, so every other entity is still visited exactly once;
    /// returns the number of changes that took effect (a removal of a
    /// component the entity lacks, or any change after its despawn, does
    /// not count).
    ///
    /// # Panics
    ///
    /// As [`view_mut`](Self::view_mut).
    #[track_caller]
    pub fn visit<Q: QueryData>(
        &mut self,
        mut f: impl FnMut(Entity, Q::Item<'_>, &mut EntityChanges),
    ) -> usize {
        let mut changes = EntityChanges::default();
        self.view_mut::<Q>().each_with_entity(|entity, item| {
            changes.entity = entity;
            f(entity, item, &mut changes);
        });
        let mut applied = 0;
        for (entity, change) in changes.pending {
            // An entity despawned by an earlier change of this pass is skipped.
            if self.is_alive(entity) {
                applied += match change {
                    Change::Despawn => {
                        self.despawn(entity).expect("checked alive");
                        1
                    }
                    Change::Remove(remove) => usize::from(remove(self, entity)),
                };
            }
        }
        applied
    }

    /// Despawns every entity matching `Q` for which `keep` returns `false`;
    /// returns how many were despawned.
    ///
    /// # Panics
    ///
    /// As [`view_mut`](Self::view_mut).
    #[track_caller]
    pub fn retain<Q: QueryData>(&mut self, mut keep: impl FnMut(Q::Item<'_>) -> bool) -> usize {
        self.visit::<Q>(|_, item, changes| {
            if !keep(item) {
                changes.despawn();
            }
        })
    }

    /// Borrows the registry for parallel systems: every pool and resource
    /// is then reached through its lock.
    pub fn cell(&mut self) -> RegistryCell<'_> {
        RegistryCell::new(self)
    }

    // --- resources ------------------------------------------------------

    /// Stores `value` as the resource of its type; returns the one it
    /// replaces.
    pub fn insert_resource<R: Send + Sync + 'static>(&mut self, value: R) -> Option<R> {
        self.resources.insert(value)
    }

    /// Takes the resource of type `R` out.
    pub fn remove_resource<R: Send + Sync + 'static>(&mut self) -> Option<R> {
        self.resources.remove::<R>()
    }

    /// The resource of type `R`.
    pub fn resource<R: Send + Sync + 'static>(&self) -> Option<&R> {
        self.resources.get::<R>()
    }

    /// The resource of type `R`, mutable.
    pub fn resource_mut<R: Send + Sync + 'static>(&mut self) -> Option<&mut R> {
        self.resources.get_mut::<R>()
    }

    /// `true` when a resource of type `R` is stored.
    pub fn contains_resource<R: Send + Sync + 'static>(&self) -> bool {
        self.resources.contains::<R>()
    }

    pub(crate) fn resources(&self) -> &Resources {
        &self.resources
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

/// Removes one component type from an entity; `true` if it had one.
type RemoveFn = fn(&mut Registry, Entity) -> bool;

enum Change {
    Despawn,
    Remove(RemoveFn),
}

/// Structural changes to the entity being visited by [`Registry::visit`],
/// applied when the pass ends.
#[derive(Default)]
pub struct EntityChanges {
    entity: Entity,
    pending: Vec<(Entity, Change)>,
}

impl std::fmt::Debug for EntityChanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntityChanges")
            .field("entity", &self.entity)
            .field("pending", &self.pending.len())
            .finish()
    }
}

impl EntityChanges {
    /// Despawns the visited entity when the pass ends.
    pub fn despawn(&mut self) {
        self.pending.push((self.entity, Change::Despawn));
    }

    /// Removes (and drops) the visited entity's `T` when the pass ends.
    pub fn remove<T: Component>(&mut self) {
        fn remove<T: Component>(registry: &mut Registry, entity: Entity) -> bool {
            registry
                .pools
                .get_mut::<T>()
                .is_some_and(|pool| pool.remove(entity).is_some())
        }
        self.pending
            .push((self.entity, Change::Remove(remove::<T>)));
    }
}
