//! [`RegistryCell`]: a registry shared between threads, every pool and
//! resource reached through its lock.

use parking_lot::{MappedRwLockReadGuard, MappedRwLockWriteGuard};

use crate::query::QueryFilter;
use crate::{EcsError, Entity, EntityAllocator, QueryData, Registry, View};

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
pub struct RegistryCell<'w> {
    registry: &'w Registry,
}

impl std::fmt::Debug for RegistryCell<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryCell")
            .field("entities", &self.registry.len())
            .finish()
    }
}

impl<'w> RegistryCell<'w> {
    pub(crate) fn new(registry: &'w mut Registry) -> Self {
        // The `&mut` is downgraded but held for `'w`: no plain `&Registry`
        // (whose accessors read pools without locks) exists meanwhile.
        RegistryCell { registry }
    }

    /// Borrows the pools of `Q` (read or write locks).
    ///
    /// # Errors
    ///
    /// [`EcsError::BorrowConflict`] naming the type when a pool is already
    /// borrowed in a conflicting way (by another view alive on any thread,
    /// or because `Q` names a type twice with a write).
    pub fn view<Q: QueryData>(&self) -> Result<View<'_, Q>, EcsError> {
        View::new(self.registry)
    }

    /// Borrows the pools of `Q` and of the filter `F`.
    ///
    /// # Errors
    ///
    /// As [`view`](Self::view).
    pub fn view_filtered<Q: QueryData, F: QueryFilter>(&self) -> Result<View<'_, Q, F>, EcsError> {
        View::new(self.registry)
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
        self.registry.resources().lock_read()
    }

    /// Write-locks the resource `R`.
    ///
    /// # Errors
    ///
    /// [`EcsError::MissingResource`] when there is none,
    /// [`EcsError::BorrowConflict`] when it is locked.
    pub fn resource_mut<R: Send + Sync + 'static>(
        &self,
    ) -> Result<MappedRwLockWriteGuard<'_, R>, EcsError> {
        self.registry.resources().lock_write()
    }

    /// `true` when `entity` is alive.
    pub fn is_alive(&self, entity: Entity) -> bool {
        self.registry.is_alive(entity)
    }

    /// Number of live entities.
    pub fn len(&self) -> usize {
        self.registry.len()
    }

    /// `true` when no entity is alive.
    pub fn is_empty(&self) -> bool {
        self.registry.is_empty()
    }

    /// The entity allocator (read-only).
    pub fn entities(&self) -> &EntityAllocator {
        self.registry.entities()
    }
}
