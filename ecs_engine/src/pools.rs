//! The table of component pools: one per [`ComponentId`], each behind its own
//! lock.
//!
//! # Locking discipline
//!
//! Each pool sits in a `parking_lot::RwLock`. Views take the locks (a read
//! lock per `&T`, a write lock per `&mut T`), so two parallel systems can
//! never alias a pool, and a conflicting borrow is an [`EcsError`], not a data
//! race. Write locks are taken only through an exclusive borrow of the
//! registry (`Registry::view_mut`, or a [`RegistryCell`](crate::RegistryCell),
//! which holds `&mut Registry`). So whenever a plain `&Registry` exists, no
//! write guard can be alive, and the registry's `&self` accessors (`get`,
//! `pool`, ...) may read a pool without touching its lock. `&mut self`
//! accessors use `RwLock::get_mut`, which needs no lock either.
//!
//! Pools are stored type-erased (`dyn ErasedPool`) and keyed by
//! `ComponentId`, so component types registered at run time (for the C API:
//! name, size, alignment, drop function) can be stored in the same table
//! beside the typed [`SparseSet`]s.

use std::alloc::Layout;
use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use parking_lot::{
    MappedRwLockReadGuard, MappedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

use crate::{Access, EcsError, Entity, Registry, SparseSet};

/// A component: any `'static + Send + Sync` type. Implemented for every such
/// type; nothing to derive.
pub trait Component: Send + Sync + 'static {}

impl<T: Send + Sync + 'static> Component for T {}

/// The registry-local number of a component type: the position of its pool
/// in the registry. Ids are handed out in order of first use, starting at 0,
/// so they differ between registries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComponentId(u32);

impl ComponentId {
    /// The id as an index, `0..registry.component_types()`.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What the registry knows of a component type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentInfo {
    name: &'static str,
    type_id: Option<TypeId>,
    layout: Layout,
}

impl ComponentInfo {
    /// The info of the Rust type `T`.
    pub fn of<T: Component>() -> Self {
        ComponentInfo {
            name: type_name::<T>(),
            type_id: Some(TypeId::of::<T>()),
            layout: Layout::new::<T>(),
        }
    }

    /// The type's name (`std::any::type_name` for Rust types).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The Rust `TypeId`; `None` for a type registered at run time.
    pub fn type_id(&self) -> Option<TypeId> {
        self.type_id
    }

    /// Size and alignment of one component, in bytes.
    pub fn layout(&self) -> Layout {
        self.layout
    }
}

/// One component type that a query or filter borrows, and how: what the
/// scheduler needs to order systems and to check a system's declaration.
#[derive(Debug, Clone, Copy)]
pub struct ComponentAccess {
    /// The component's Rust type.
    pub type_id: TypeId,
    /// The component's type name.
    pub name: &'static str,
    /// Read or write.
    pub access: Access,
    /// Creates the type's pool in a registry if missing and returns its id.
    pub register: fn(&mut Registry) -> ComponentId,
}

impl ComponentAccess {
    /// `access` to the Rust type `T`.
    pub fn of<T: Component>(access: Access) -> Self {
        ComponentAccess {
            type_id: TypeId::of::<T>(),
            name: type_name::<T>(),
            access,
            register: Registry::register::<T>,
        }
    }
}

/// The operations the registry needs on a pool without knowing its type.
pub(crate) trait ErasedPool: Any + Send + Sync {
    /// Removes and drops `entity`'s component; `true` if it had one.
    fn remove_entity(&mut self, entity: Entity) -> bool;
    fn contains_entity(&self, entity: Entity) -> bool;
    fn len(&self) -> usize;
    fn clear(&mut self);
    fn heap_bytes(&self) -> usize;
}

impl<T: Component> ErasedPool for SparseSet<T> {
    fn remove_entity(&mut self, entity: Entity) -> bool {
        self.remove(entity).is_some()
    }
    fn contains_entity(&self, entity: Entity) -> bool {
        self.contains(entity)
    }
    fn len(&self) -> usize {
        SparseSet::len(self)
    }
    fn clear(&mut self) {
        SparseSet::clear(self)
    }
    fn heap_bytes(&self) -> usize {
        SparseSet::heap_bytes(self)
    }
}

/// A hasher for `TypeId`s, which are already well-mixed hashes.
#[derive(Default)]
pub(crate) struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = self.0.rotate_left(5) ^ n;
    }
}

pub(crate) type TypeIdMap<V> = HashMap<TypeId, V, BuildHasherDefault<TypeIdHasher>>;

struct PoolSlot {
    info: ComponentInfo,
    cell: RwLock<Box<dyn ErasedPool>>,
}

impl PoolSlot {
    /// The pool, read without its lock. Only the registry's `&self`
    /// accessors call this; a `RegistryCell` never does.
    #[inline]
    fn peek(&self) -> &dyn ErasedPool {
        // SAFETY: write guards exist only while the registry is exclusively
        // borrowed (see the module docs), and `RegistryCell`, which lets
        // threads take them through a shared reference, never calls `peek`.
        // Our caller holds `&self` through a shared `&Registry`, so no write
        // guard is alive and nothing mutates the pool while the returned
        // reference lives.
        unsafe { &**self.cell.data_ptr() }
    }
}

/// Every pool of a registry, by [`ComponentId`].
pub(crate) struct Pools {
    slots: Vec<PoolSlot>,
    by_type: TypeIdMap<ComponentId>,
    /// A direct-mapped front for `by_type`: a type's slot is fixed by its
    /// `TypeId` (a constant at each call site), so most lookups are one load
    /// and one compare. Types whose slot is taken are found in `by_type`.
    fast: Box<[Option<(TypeId, ComponentId)>; FAST_SLOTS]>,
}

/// Slots of the direct-mapped type table.
const FAST_SLOTS: usize = 64;

#[inline]
fn fast_slot(type_id: TypeId) -> usize {
    use std::hash::Hash;
    let mut hasher = TypeIdHasher::default();
    type_id.hash(&mut hasher);
    (hasher.finish() % FAST_SLOTS as u64) as usize
}

impl Default for Pools {
    fn default() -> Self {
        Pools {
            slots: Vec::new(),
            by_type: TypeIdMap::default(),
            fast: Box::new([None; FAST_SLOTS]),
        }
    }
}

impl std::fmt::Debug for Pools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.slots.iter().map(|s| (s.info.name, s.peek().len())))
            .finish()
    }
}

/// Read-locks `cell` without waiting.
///
/// # Errors
///
/// [`EcsError::BorrowConflict`] naming `name` when it is write-locked.
pub(crate) fn try_read<'a, T: ?Sized>(
    cell: &'a RwLock<T>,
    name: &'static str,
) -> Result<RwLockReadGuard<'a, T>, EcsError> {
    cell.try_read().ok_or(EcsError::BorrowConflict {
        name,
        wanted: Access::Read,
        held: Access::Write,
    })
}

/// Write-locks `cell` without waiting.
///
/// # Errors
///
/// [`EcsError::BorrowConflict`] naming `name` and the access that holds it.
pub(crate) fn try_write<'a, T: ?Sized>(
    cell: &'a RwLock<T>,
    name: &'static str,
) -> Result<RwLockWriteGuard<'a, T>, EcsError> {
    cell.try_write().ok_or_else(|| EcsError::BorrowConflict {
        name,
        wanted: Access::Write,
        held: if cell.is_locked_exclusive() {
            Access::Write
        } else {
            Access::Read
        },
    })
}

/// `pool` as the `SparseSet<T>` it is. Callers pass the pool found at
/// `id_of::<T>()`: `register::<T>` is the only place that creates a slot
/// for a type id, and it stores a `SparseSet<T>` there.
#[inline]
fn downcast<T: Component>(pool: &dyn ErasedPool) -> &SparseSet<T> {
    debug_assert!((pool as &dyn Any).is::<SparseSet<T>>());
    // SAFETY: the pool is a `SparseSet<T>` (see above); the cast drops the
    // vtable and keeps the data pointer and the borrow's lifetime. This
    // skips the virtual `type_id` call of `Any::downcast_ref` on the hot
    // path of every typed access.
    unsafe { &*(pool as *const dyn ErasedPool as *const SparseSet<T>) }
}

/// `pool` as the `SparseSet<T>` it is, checked (for batch paths, which
/// look a pool up once per batch, not per entity).
///
/// # Panics
///
/// When `pool` does not hold `T`s (a broken invariant).
pub(crate) fn typed_mut<T: Component>(pool: &mut dyn ErasedPool) -> &mut SparseSet<T> {
    (pool as &mut dyn Any)
        .downcast_mut()
        .expect("a pool's type matches its id")
}

/// [`downcast`] for a mutable borrow.
#[inline]
fn downcast_mut<T: Component>(pool: &mut dyn ErasedPool) -> &mut SparseSet<T> {
    debug_assert!((pool as &dyn Any).is::<SparseSet<T>>());
    // SAFETY: as in `downcast`; the borrow stays exclusive.
    unsafe { &mut *(pool as *mut dyn ErasedPool as *mut SparseSet<T>) }
}

impl Pools {
    #[inline]
    pub(crate) fn id_of<T: Component>(&self) -> Option<ComponentId> {
        let type_id = TypeId::of::<T>();
        match self.fast[fast_slot(type_id)] {
            Some((known, id)) if known == type_id => Some(id),
            _ => self.by_type.get(&type_id).copied(),
        }
    }

    /// The id of `T`, creating its (empty) pool on first use.
    pub(crate) fn register<T: Component>(&mut self) -> ComponentId {
        match self.id_of::<T>() {
            Some(id) => id,
            None => self.register_new::<T>(),
        }
    }

    /// Creates the pool of a type not registered yet (out of line: the
    /// hot paths only ever find their pool).
    #[cold]
    #[inline(never)]
    fn register_new<T: Component>(&mut self) -> ComponentId {
        let id = ComponentId(self.slots.len() as u32);
        self.slots.push(PoolSlot {
            info: ComponentInfo::of::<T>(),
            cell: RwLock::new(Box::new(SparseSet::<T>::new())),
        });
        self.by_type.insert(TypeId::of::<T>(), id);
        let fast = &mut self.fast[fast_slot(TypeId::of::<T>())];
        if fast.is_none() {
            *fast = Some((TypeId::of::<T>(), id));
        }
        id
    }

    pub(crate) fn info(&self, id: ComponentId) -> Option<&ComponentInfo> {
        self.slots.get(id.index()).map(|slot| &slot.info)
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// `T`'s pool, read without its lock (see `PoolSlot::peek`).
    #[inline]
    pub(crate) fn get<T: Component>(&self) -> Option<&SparseSet<T>> {
        Some(downcast(self.slots[self.id_of::<T>()?.index()].peek()))
    }

    #[inline]
    pub(crate) fn get_mut<T: Component>(&mut self) -> Option<&mut SparseSet<T>> {
        let index = self.id_of::<T>()?.index();
        Some(downcast_mut(&mut **self.slots[index].cell.get_mut()))
    }

    /// `T`'s pool, created if missing.
    #[inline]
    pub(crate) fn get_or_create<T: Component>(&mut self) -> &mut SparseSet<T> {
        let index = self.register::<T>().index();
        downcast_mut(&mut **self.slots[index].cell.get_mut())
    }

    /// The pools `ids` name, each borrowed mutably at once; `None` when an
    /// id appears twice. `ids` must name registered pools.
    pub(crate) fn disjoint_mut<const N: usize>(
        &mut self,
        ids: [ComponentId; N],
    ) -> Option<[&mut dyn ErasedPool; N]> {
        let slots = self
            .slots
            .get_disjoint_mut(ids.map(ComponentId::index))
            .ok()?;
        Some(slots.map(|slot| &mut **slot.cell.get_mut()))
    }

    /// Locks `T`'s pool for reading; `Ok(None)` when `T` has no pool.
    pub(crate) fn read<T: Component>(
        &self,
    ) -> Result<Option<MappedRwLockReadGuard<'_, SparseSet<T>>>, EcsError> {
        let Some(id) = self.id_of::<T>() else {
            return Ok(None);
        };
        let slot = &self.slots[id.index()];
        let guard = try_read(&slot.cell, slot.info.name)?;
        Ok(Some(RwLockReadGuard::map(guard, |pool| downcast(&**pool))))
    }

    /// Locks `T`'s pool for writing; `Ok(None)` when `T` has no pool.
    pub(crate) fn write<T: Component>(
        &self,
    ) -> Result<Option<MappedRwLockWriteGuard<'_, SparseSet<T>>>, EcsError> {
        let Some(id) = self.id_of::<T>() else {
            return Ok(None);
        };
        let slot = &self.slots[id.index()];
        let guard = try_write(&slot.cell, slot.info.name)?;
        Ok(Some(RwLockWriteGuard::map(guard, |pool| {
            downcast_mut(&mut **pool)
        })))
    }

    /// Removes `entity` from every pool, dropping its components.
    pub(crate) fn remove_entity(&mut self, entity: Entity) {
        for slot in &mut self.slots {
            slot.cell.get_mut().remove_entity(entity);
        }
    }

    pub(crate) fn remove_by_id(&mut self, id: ComponentId, entity: Entity) -> bool {
        self.slots
            .get_mut(id.index())
            .is_some_and(|slot| slot.cell.get_mut().remove_entity(entity))
    }

    pub(crate) fn contains_by_id(&self, id: ComponentId, entity: Entity) -> bool {
        self.slots
            .get(id.index())
            .is_some_and(|slot| slot.peek().contains_entity(entity))
    }

    pub(crate) fn len_by_id(&self, id: ComponentId) -> usize {
        self.slots
            .get(id.index())
            .map_or(0, |slot| slot.peek().len())
    }

    pub(crate) fn clear(&mut self) {
        for slot in &mut self.slots {
            slot.cell.get_mut().clear();
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        let own = self.slots.capacity() * std::mem::size_of::<PoolSlot>();
        own + self
            .slots
            .iter()
            .map(|slot| slot.peek().heap_bytes())
            .sum::<usize>()
    }
}
