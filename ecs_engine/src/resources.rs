//! Resources: at most one value per type, not tied to an entity (the clock,
//! the score board, an input queue).
//!
//! Each resource sits behind its own lock, with the same discipline as the
//! component pools (see the `pools` module): the registry's `&self` accessors
//! read without the lock, a `RegistryCell` locks.

use std::any::{Any, TypeId, type_name};

use parking_lot::{
    MappedRwLockReadGuard, MappedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

use crate::EcsError;
use crate::storage::pools::{try_read, try_write};
use crate::storage::type_id_map::TypeIdMap;

struct ResourceSlot {
    name: &'static str,
    cell: RwLock<Box<dyn Any + Send + Sync>>,
}

/// Every resource of a registry, by type.
#[derive(Default)]
pub(crate) struct Resources {
    slots: TypeIdMap<ResourceSlot>,
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.slots.values().map(|slot| slot.name))
            .finish()
    }
}

fn downcast<R: 'static>(value: &(dyn Any + Send + Sync)) -> &R {
    value.downcast_ref().expect("resource type matches its key")
}

fn downcast_mut<R: 'static>(value: &mut (dyn Any + Send + Sync)) -> &mut R {
    value.downcast_mut().expect("resource type matches its key")
}

fn missing<R>() -> EcsError {
    EcsError::MissingResource {
        resource: type_name::<R>(),
    }
}

impl Resources {
    pub(crate) fn insert<R: Send + Sync + 'static>(&mut self, value: R) -> Option<R> {
        if let Some(old) = self.get_mut::<R>() {
            return Some(std::mem::replace(old, value));
        }
        let slot = ResourceSlot {
            name: type_name::<R>(),
            cell: RwLock::new(Box::new(value)),
        };
        self.slots.insert(TypeId::of::<R>(), slot);
        None
    }

    pub(crate) fn remove<R: Send + Sync + 'static>(&mut self) -> Option<R> {
        let slot = self.slots.remove(&TypeId::of::<R>())?;
        let boxed: Box<dyn Any> = slot.cell.into_inner();
        Some(*boxed.downcast().expect("resource type matches its key"))
    }

    pub(crate) fn contains<R: 'static>(&self) -> bool {
        self.slots.contains_key(&TypeId::of::<R>())
    }

    /// `R`, read without its lock.
    pub(crate) fn get<R: 'static>(&self) -> Option<&R> {
        let slot = self.slots.get(&TypeId::of::<R>())?;
        // SAFETY: write guards exist only while the registry is exclusively
        // borrowed (through `view_mut` or a `RegistryCell`), and a
        // `RegistryCell` never calls this; the caller holds a shared
        // `&Registry`, so no write guard is alive while the result lives.
        let value = unsafe { &**slot.cell.data_ptr() };
        Some(downcast(value))
    }

    pub(crate) fn get_mut<R: 'static>(&mut self) -> Option<&mut R> {
        let slot = self.slots.get_mut(&TypeId::of::<R>())?;
        Some(downcast_mut(&mut **slot.cell.get_mut()))
    }

    pub(crate) fn lock_read<R: 'static>(&self) -> Result<MappedRwLockReadGuard<'_, R>, EcsError> {
        let slot = self
            .slots
            .get(&TypeId::of::<R>())
            .ok_or_else(missing::<R>)?;
        let guard = try_read(&slot.cell, || slot.name.into())?;
        Ok(RwLockReadGuard::map(guard, |value| downcast(&**value)))
    }

    pub(crate) fn lock_write<R: 'static>(&self) -> Result<MappedRwLockWriteGuard<'_, R>, EcsError> {
        let slot = self
            .slots
            .get(&TypeId::of::<R>())
            .ok_or_else(missing::<R>)?;
        let guard = try_write(&slot.cell, || slot.name.into())?;
        Ok(RwLockWriteGuard::map(guard, |value| {
            downcast_mut(&mut **value)
        }))
    }
}
