//! [`RegistryCell`]: a registry shared between threads, every pool and
//! resource reached through its lock, and [`Registry::cell`], which makes
//! one.

use std::ptr::NonNull;

use parking_lot::{MappedRwLockReadGuard, MappedRwLockWriteGuard};

use crate::storage::locked::Locked;
use crate::{Access, ComponentId, ComponentInfo, EcsError, Entity, EntityAllocator, Registry};

impl Registry {
    /// Borrows the registry for parallel systems: every pool and resource
    /// is then reached through its lock.
    pub fn cell(&mut self) -> RegistryCell<'_> {
        RegistryCell::new(self)
    }
}

/// An exclusive borrow of a [`Registry`] that many threads can share: each
/// thread borrows the pools and resources it needs through their locks, so
/// systems that touch disjoint types run in parallel, and a conflicting
/// borrow is an [`EcsError::BorrowConflict`] instead of a data race.
///
/// Structure (the set of entities and of component types) cannot change
/// through a cell; record such changes in a command buffer and apply them
/// once the cell is gone.
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
///
/// struct A(u32);
/// struct B(u32);
///
/// let mut registry = Registry::new();
/// registry.spawn((A(1), B(2)));
/// let cell = registry.cell();
/// std::thread::scope(|s| {
///     s.spawn(|| cell.view::<&mut A>().unwrap().each(|a| a.0 += 1));
///     s.spawn(|| cell.view::<&mut B>().unwrap().each(|b| b.0 += 1));
/// });
/// let mut first = cell.view::<&A>().unwrap();
/// assert!(cell.view::<&mut A>().is_err()); // `A` is read-locked by `first`
/// assert_eq!(first.iter().map(|a| a.0).sum::<u32>(), 2);
/// ```
///
/// The cell holds no `&Registry`: it holds a lock-only handle, whose every
/// path to a pool or resource takes its lock, so the unlocked reads of the
/// registry's `&self` accessors (sound only when no write lock can exist)
/// cannot be reached through a cell.
///
/// ```compile_fail
/// // The registry stays exclusively borrowed while a cell lives:
/// // no `get` (an unlocked read) beside a view that write-locks.
/// let mut registry = ecs_engine::Registry::new();
/// let e = registry.spawn((1u32,));
/// let cell = registry.cell();
/// let mut view = cell.view::<&mut u32>().unwrap();
/// let _ = registry.get::<u32>(e);
/// view.each(|v| *v += 1);
/// ```
#[derive(Debug)]
pub struct RegistryCell<'w> {
    pub(crate) registry: Locked<'w>,
}

impl<'w> RegistryCell<'w> {
    pub(crate) fn new(registry: &'w mut Registry) -> Self {
        // The `&mut` is held for `'w`: no plain `&Registry` (whose
        // accessors read pools without locks) exists meanwhile, and the
        // cell itself keeps only the lock-only handle.
        RegistryCell {
            registry: Locked::exclusive(registry),
        }
    }

    /// The lock-only handle (for `change/` and `query/view.rs`).
    pub(crate) fn locked(&self) -> Locked<'w> {
        self.registry
    }

    /// A pointer to `entity`'s value of run-time component `id`, found
    /// under a short read lock. The pointer stays valid as long as the cell
    /// (no structural change can happen meanwhile). Reading through it
    /// while someone else writes the component, or writing through it
    /// while someone else borrows it, is a data race: callers hold the
    /// matching declared access (the scheduler's systems do).
    ///
    /// # Errors
    ///
    /// As [`Registry::get_raw`], and [`EcsError::BorrowConflict`] when the
    /// pool is write-locked by a view.
    pub fn get_raw(&self, entity: Entity, id: ComponentId) -> Result<NonNull<u8>, EcsError> {
        if !self.registry.is_alive(entity) {
            return Err(EcsError::NoSuchEntity { entity });
        }
        let locked = self.registry.lock_blob(id, Access::Read)?;
        locked
            .pool()
            .get(entity)
            .ok_or_else(|| EcsError::MissingComponent {
                entity,
                component: locked.info().name_cow(),
            })
    }

    /// As [`get_raw`](Self::get_raw), found under a short write lock, and
    /// marked changed when `id`'s changes are tracked: for a caller that
    /// writes the value (holding the declared write access).
    ///
    /// # Errors
    ///
    /// As [`get_raw`](Self::get_raw), and [`EcsError::BorrowConflict`]
    /// when the pool is borrowed by a view.
    pub fn get_raw_mut(&self, entity: Entity, id: ComponentId) -> Result<NonNull<u8>, EcsError> {
        if !self.registry.is_alive(entity) {
            return Err(EcsError::NoSuchEntity { entity });
        }
        let locked = self.registry.lock_blob(id, Access::Write)?;
        // SAFETY: `locked` holds the pool's write lock.
        unsafe { locked.pool().get_marked(entity) }.ok_or_else(|| EcsError::MissingComponent {
            entity,
            component: locked.info().name_cow(),
        })
    }

    /// What the registry knows of component `id` (layout, destructor,
    /// name); `None` for an unknown id.
    pub fn component_info(&self, id: ComponentId) -> Option<&'w ComponentInfo> {
        self.registry.component_info(id)
    }

    /// Read-locks the resource `R`.
    ///
    /// # Errors
    ///
    /// [`EcsError::MissingResource`] when there is none,
    /// [`EcsError::BorrowConflict`] when it is write-locked.
    pub fn resource<R: Send + Sync + 'static>(
        &self,
    ) -> Result<MappedRwLockReadGuard<'_, R>, EcsError> {
        self.registry.resource()
    }

    /// Write-locks the resource `R`, marking it changed at the current
    /// change tick (on fetch).
    ///
    /// # Errors
    ///
    /// [`EcsError::MissingResource`] when there is none,
    /// [`EcsError::BorrowConflict`] when it is locked.
    pub fn resource_mut<R: Send + Sync + 'static>(
        &self,
    ) -> Result<MappedRwLockWriteGuard<'_, R>, EcsError> {
        self.registry.resource_mut()
    }

    /// Read-locks the resource `R`, with its change ticks.
    ///
    /// # Errors
    ///
    /// As [`resource`](Self::resource).
    pub fn resource_with_ticks<R: Send + Sync + 'static>(
        &self,
    ) -> Result<(MappedRwLockReadGuard<'_, R>, crate::ResourceTicks), EcsError> {
        self.registry.resource_with_ticks()
    }

    /// Write-locks the resource `R`, with its change ticks, marking
    /// nothing: the holder marks its writes with
    /// [`ResourceTicksMut::mark`](crate::ResourceTicksMut::mark).
    ///
    /// # Errors
    ///
    /// As [`resource_mut`](Self::resource_mut).
    pub fn resource_mut_with_ticks<R: Send + Sync + 'static>(
        &self,
    ) -> Result<(MappedRwLockWriteGuard<'_, R>, crate::ResourceTicksMut<'_>), EcsError> {
        self.registry.resource_mut_with_ticks()
    }

    /// `true` when `entity` is alive.
    pub fn is_alive(&self, entity: Entity) -> bool {
        self.registry.is_alive(entity)
    }

    /// Number of live entities.
    pub fn len(&self) -> usize {
        self.registry.entities().len()
    }

    /// `true` when no entity is alive.
    pub fn is_empty(&self) -> bool {
        self.registry.entities().is_empty()
    }

    /// The entity allocator (read-only).
    pub fn entities(&self) -> &EntityAllocator {
        self.registry.entities()
    }
}
