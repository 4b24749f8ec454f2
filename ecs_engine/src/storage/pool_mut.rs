//! [`PoolMut`]: one component type's pool, borrowed for many inserts and
//! removals with the type looked up once.

use crate::{Component, EcsError, Entity, EntityAllocator, SparseSet};

/// The pool of `T`, borrowed from a registry with [`Registry::pool_mut`]
/// for a loop of inserts, removals and lookups that finds the pool once,
/// instead of once per call as [`Registry::insert`] does. Every handle is
/// checked against the registry's live entities as by the registry's own
/// methods, so a stale handle never stores a component.
///
/// [`Registry::pool_mut`]: crate::Registry::pool_mut
/// [`Registry::insert`]: crate::Registry::insert
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
///
/// #[derive(Debug, PartialEq)]
/// struct Hit(u32);
///
/// let mut registry = Registry::new();
/// let targets: Vec<_> = (0..4).map(|_| registry.spawn(())).collect();
/// let mut hits = registry.pool_mut::<Hit>();
/// for (i, &e) in targets.iter().enumerate() {
///     hits.insert(e, Hit(i as u32)).unwrap();
/// }
/// assert_eq!(hits.remove(targets[1]), Ok(Hit(1)));
/// assert_eq!(hits.len(), 3);
/// registry.despawn(targets[2]).unwrap();
/// assert!(registry.pool_mut::<Hit>().insert(targets[2], Hit(9)).is_err());
/// assert_eq!(registry.get::<Hit>(targets[3]), Some(&Hit(3)));
/// ```
pub struct PoolMut<'r, T> {
    pub(crate) allocator: &'r EntityAllocator,
    pub(crate) pool: &'r mut SparseSet<T>,
}

impl<T> std::fmt::Debug for PoolMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolMut")
            .field("component", &std::any::type_name::<T>())
            .field("len", &self.pool.len())
            .finish()
    }
}

impl<T: Component> PoolMut<'_, T> {
    #[inline]
    fn check_alive(&self, entity: Entity) -> Result<(), EcsError> {
        if crate::hierarchy::is_hierarchy::<T>() {
            return Err(hierarchy_error::<T>());
        }
        if self.allocator.is_alive(entity) {
            Ok(())
        } else {
            Err(EcsError::NoSuchEntity { entity })
        }
    }

    /// Gives `entity` the component `value`, returning the one it replaces.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive (`value` is
    /// dropped); [`EcsError::ReadOnlyComponent`] for
    /// [`ChildOf`](crate::ChildOf) and [`Children`](crate::Children), which
    /// change only through the registry's hierarchy methods;
    /// [`EcsError::NotAComponent`] for a tuple, an [`Entity`] or a
    /// `&'static str` `T`.
    #[inline]
    pub fn insert(&mut self, entity: Entity, value: T) -> Result<Option<T>, EcsError> {
        if let Some(error) = crate::component::refuse_component::<T>() {
            return Err(error);
        }
        self.check_alive(entity)?;
        Ok(self.pool.insert_live(entity, value))
    }

    /// Takes `entity`'s component away and returns it.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive;
    /// [`EcsError::MissingComponent`] when it has no `T`;
    /// [`EcsError::ReadOnlyComponent`] for [`ChildOf`](crate::ChildOf) and
    /// [`Children`](crate::Children) (use [`Registry::remove`], which keeps
    /// the other side's list consistent).
    ///
    /// [`Registry::remove`]: crate::Registry::remove
    #[inline]
    pub fn remove(&mut self, entity: Entity) -> Result<T, EcsError> {
        if crate::hierarchy::is_hierarchy::<T>() {
            return Err(hierarchy_error::<T>());
        }
        // The pool holds live entities only (despawn empties every pool),
        // so a handle it holds is alive: liveness is looked up on a miss
        // only, to tell a stale handle from a missing component.
        if let Some(value) = self.pool.remove(entity) {
            debug_assert!(self.allocator.is_alive(entity), "{entity} is dead");
            return Ok(value);
        }
        self.check_alive(entity)?;
        Err(EcsError::MissingComponent {
            entity,
            component: std::any::type_name::<T>().into(),
        })
    }

    /// `entity`'s component; `None` when it has none or is not alive.
    #[inline]
    pub fn get(&self, entity: Entity) -> Option<&T> {
        self.pool.get(entity)
    }

    /// `entity`'s component, mutable; `None` when it has none or is not
    /// alive, and always for [`ChildOf`](crate::ChildOf) and
    /// [`Children`](crate::Children) (read-only, as in views).
    #[inline]
    pub fn get_mut(&mut self, entity: Entity) -> Option<&mut T> {
        if crate::hierarchy::is_hierarchy::<T>() {
            return None;
        }
        self.pool.get_mut(entity)
    }

    /// `true` when `entity` has a `T`.
    #[inline]
    pub fn contains(&self, entity: Entity) -> bool {
        self.pool.contains(entity)
    }

    /// Number of entities with a `T`.
    #[inline]
    pub fn len(&self) -> usize {
        self.pool.len()
    }

    /// `true` when no entity has a `T`.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pool.is_empty()
    }

    /// The pool itself, read-only (its entities and components in dense
    /// order).
    #[inline]
    pub fn as_set(&self) -> &SparseSet<T> {
        self.pool
    }
}

/// The refusal of a change to [`ChildOf`](crate::ChildOf) or
/// [`Children`](crate::Children) through the pool: changing one side of a
/// parent/child link through this pool alone would leave the other side's
/// list dangling.
fn hierarchy_error<T>() -> EcsError {
    EcsError::ReadOnlyComponent {
        component: std::any::type_name::<T>().into(),
    }
}
