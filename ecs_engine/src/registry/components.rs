//! `Registry` methods on components: registering types (Rust and run-time),
//! inserting, removing and reading values, raw access and pool access.

use std::any::type_name;
use std::ptr::NonNull;

use super::{InsertError, Registry, missing};
use crate::storage::blob_pool::Refused;
use crate::{
    Bundle, Component, ComponentDescriptor, ComponentId, ComponentInfo, EcsError, Entity, PoolMut,
    SparseSet,
};

impl Registry {
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
    /// dropped); [`EcsError::ReadOnlyComponent`] for a
    /// [`ChildOf`](crate::ChildOf) or [`Children`](crate::Children) value
    /// (one taken out by [`remove`](Self::remove)): links change only
    /// through [`set_parent`](Self::set_parent) and its kin;
    /// [`EcsError::NotAComponent`] for a tuple (insert a bundle with
    /// [`insert_bundle`](Self::insert_bundle)), an [`Entity`] or a
    /// `&'static str` value.
    #[inline]
    pub fn insert<T: Component>(
        &mut self,
        entity: Entity,
        value: T,
    ) -> Result<Option<T>, EcsError> {
        if let Some(error) = crate::component::refuse_component::<T>() {
            return Err(error);
        }
        self.check_alive(entity)?;
        let old = self.pools.get_or_create::<T>().insert_live(entity, value);
        self.after_insert::<T>(entity);
        Ok(old)
    }

    /// Gives `entity` the component `value` unless it already has one.
    ///
    /// # Errors
    ///
    /// [`EcsError::ComponentExists`] when `entity` already has a `T`, or
    /// [`EcsError::NoSuchEntity`] when it is not alive, or
    /// [`EcsError::ReadOnlyComponent`] for [`ChildOf`](crate::ChildOf) and
    /// [`Children`](crate::Children) and [`EcsError::NotAComponent`] (as
    /// [`insert`](Self::insert)); either way `value` comes back in the
    /// error and nothing changes.
    pub fn try_insert<T: Component>(
        &mut self,
        entity: Entity,
        value: T,
    ) -> Result<&mut T, InsertError<T>> {
        if let Some(error) = crate::component::refuse_component::<T>() {
            return Err(InsertError { error, value });
        }
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
        self.after_insert::<T>(entity);
        Ok(self.get_mut(entity).expect("just inserted"))
    }

    /// Inserts each `(entity, value)` that `items` yields, in order, as
    /// [`insert`](Self::insert) would (a replaced value is dropped), with
    /// the pool looked up once; stops at the first entity that is not
    /// alive. Returns how many were inserted, and what stopped it: the
    /// [`InsertError`] of that entity, with its value; the items after it
    /// are still in `items`. [`ChildOf`](crate::ChildOf) and
    /// [`Children`](crate::Children) values are refused at the first item
    /// ([`EcsError::ReadOnlyComponent`], as [`insert`](Self::insert)), and
    /// so are the types of [`EcsError::NotAComponent`].
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
        if self.required.has(std::any::TypeId::of::<T>()) {
            return self.insert_each(items);
        }
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
        if let Some(error) = crate::component::refuse_component::<T>() {
            return (0, Err(InsertError { error, value }));
        }
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
    /// dropped); [`EcsError::ReadOnlyComponent`] when it holds a
    /// [`ChildOf`](crate::ChildOf) or [`Children`](crate::Children) value
    /// (dropped, nothing changes).
    ///
    /// # Panics
    ///
    /// When a replaced value's `Drop` panics. Every component of the bundle
    /// is inserted first, and every replaced value dropped exactly once;
    /// then the first panic resumes.
    pub fn insert_bundle<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EcsError> {
        if let Some(error) = crate::hierarchy::refuse_bundle::<B>() {
            return Err(error);
        }
        self.check_alive(entity)?;
        bundle.insert_into(self, entity);
        B::fill_required(self, entity);
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

    /// Removes (and drops) every component of `B` that `entity` has. A
    /// [`ChildOf`](crate::ChildOf) or [`Children`](crate::Children) in `B`
    /// is removed as by [`remove`](Self::remove): the child, or every
    /// child, is detached, so the hierarchy stays consistent.
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
    /// had one. Removing [`ChildOf`](crate::ChildOf) or
    /// [`Children`](crate::Children) by id detaches the child, or every
    /// child, as [`remove`](Self::remove) does.
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
        if self.has_hierarchy {
            use crate::{ChildOf, Children};
            if self.pools.id_of::<ChildOf>() == Some(id) {
                return Ok(crate::hierarchy::remove_typed::<ChildOf>(self, entity).is_some());
            }
            if self.pools.id_of::<Children>() == Some(id) {
                return Ok(crate::hierarchy::remove_typed::<Children>(self, entity).is_some());
            }
        }
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
    /// [`EcsError::TypedComponent`] when it names a Rust type,
    /// [`EcsError::OutOfMemory`] when the allocator cannot give the room
    /// for the value (a component too large for the memory left). Nothing
    /// is read from `src` then, and the value stays the caller's (to drop
    /// or reuse).
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
        let refused = match unsafe { pool.insert(entity, src) } {
            Ok(()) => return Ok(()),
            Err(refused) => refused,
        };
        let component = self
            .pools
            .info(id)
            .map_or("?".into(), ComponentInfo::name_cow);
        Err(match refused {
            Refused::Held(holder) => EcsError::SlotHeld {
                entity,
                holder,
                component,
            },
            Refused::NoMemory { bytes } => EcsError::OutOfMemory { component, bytes },
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
    /// through (until the registry next changes); marks the value changed
    /// when `id`'s changes are tracked.
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
        pool.refresh_raw();
        // SAFETY: the registry is borrowed exclusively, so is the pool.
        unsafe { pool.get_marked(entity) }.ok_or_else(|| EcsError::MissingComponent {
            entity,
            component: info.name_cow(),
        })
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

    /// `entity`'s `T`, mutable; `None` when it has none or is not alive,
    /// and always for [`ChildOf`](crate::ChildOf) and
    /// [`Children`](crate::Children), which are read-only (as in views).
    #[inline]
    pub fn get_mut<T: Component>(&mut self, entity: Entity) -> Option<&mut T> {
        if crate::hierarchy::is_hierarchy::<T>() {
            return None;
        }
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
    /// As [`component`](Self::component); [`EcsError::ReadOnlyComponent`]
    /// for [`ChildOf`](crate::ChildOf) and [`Children`](crate::Children).
    pub fn component_mut<T: Component>(&mut self, entity: Entity) -> Result<&mut T, EcsError> {
        if crate::hierarchy::is_hierarchy::<T>() {
            return Err(read_only::<T>());
        }
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
}

/// The error for `&mut` access to, or an insert of, a hierarchy component
/// `T` outside the hierarchy methods.
fn read_only<T: Component>() -> EcsError {
    EcsError::ReadOnlyComponent {
        component: type_name::<T>().into(),
    }
}
