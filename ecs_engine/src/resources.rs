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

/// A copy of a resource's value, boxed.
type CopyValue = fn(&(dyn Any + Send + Sync)) -> Box<dyn Any + Send + Sync>;

fn copy_value<R: Clone + Send + Sync + 'static>(
    value: &(dyn Any + Send + Sync),
) -> Box<dyn Any + Send + Sync> {
    Box::new(downcast::<R>(value).clone())
}

/// Every resource of a registry, by type.
#[derive(Default)]
pub(crate) struct Resources {
    slots: TypeIdMap<ResourceSlot>,
    /// The resource types whose values in-memory states copy
    /// (`registry/state.rs`), with their copy.
    copies: TypeIdMap<CopyValue>,
}

/// The copies of the clonable resources, and the names of the others.
#[derive(Default)]
pub(crate) struct SavedResources {
    values: Vec<(TypeId, &'static str, Box<dyn Any + Send + Sync>)>,
    pub(crate) unsaved: Vec<&'static str>,
}

impl std::fmt::Debug for SavedResources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedResources")
            .field(
                "saved",
                &self.values.iter().map(|v| v.1).collect::<Vec<_>>(),
            )
            .field("unsaved", &self.unsaved)
            .finish()
    }
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
    /// From now on, states copy `R` with its `Clone`.
    pub(crate) fn register_clone<R: Clone + Send + Sync + 'static>(&mut self) {
        self.copies.insert(TypeId::of::<R>(), copy_value::<R>);
    }

    /// Copies of the resources whose type has a copy registered; the
    /// names of the others, sorted.
    pub(crate) fn save(&self) -> SavedResources {
        let mut saved = SavedResources::default();
        for (type_id, slot) in self.slots.iter() {
            match self.copies.get(type_id) {
                // A shared registry holds no write guard (see `get`): the
                // read lock is free.
                Some(copy) => {
                    let value = copy(&**slot.cell.read());
                    saved.values.push((*type_id, slot.name, value));
                }
                None => saved.unsaved.push(slot.name),
            }
        }
        saved.values.sort_by_key(|v| v.1);
        saved.unsaved.sort_unstable();
        saved
    }

    /// Puts copies of the saved values back (replacing the current
    /// ones); removes the resources of a clonable type that `saved` does
    /// not hold (inserted after the save). Resources of other types stay.
    pub(crate) fn restore(&mut self, saved: &SavedResources) {
        let copies = &self.copies;
        self.slots.retain(|type_id, _| {
            !copies.contains_key(type_id) || saved.values.iter().any(|v| v.0 == *type_id)
        });
        for (type_id, name, value) in &saved.values {
            let copy = self.copies[type_id];
            let fresh = copy(&**value);
            match self.slots.get_mut(type_id) {
                Some(slot) => *slot.cell.get_mut() = fresh,
                None => {
                    let slot = ResourceSlot {
                        name,
                        cell: RwLock::new(fresh),
                    };
                    self.slots.insert(*type_id, slot);
                }
            }
        }
    }

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
