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
//!
//! Here: the table (`Pools`) and the lock helpers (`try_read`,
//! `try_write`, which resources use too); the `ErasedPool` trait its
//! pools implement is in `erased.rs`, the component ids and infos in
//! `component.rs`.

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::Hasher;

use crate::storage::type_id_map::{TypeIdHasher, TypeIdMap};
use parking_lot::{
    MappedRwLockReadGuard, MappedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

use crate::panic::FirstPanic;
use crate::storage::blob_pool::BlobPool;
use crate::storage::claims::{Claimed, Claims, ShapeFn, SharedPool};
pub(crate) use crate::storage::erased::ErasedPool;
use crate::storage::pool_copy::PoolCopy;
use crate::{
    Access, Component, ComponentDescriptor, ComponentId, ComponentInfo, ComponentKey, EcsError,
    Entity, SparseSet,
};

pub(super) struct PoolSlot {
    pub(super) info: ComponentInfo,
    pub(super) cell: RwLock<Box<dyn ErasedPool>>,
    /// How to copy the pool whole, for in-memory states
    /// (`pool_copy.rs`); `None` until its type's clone is registered.
    pub(super) copy: Option<PoolCopy>,
    /// The views' claims on the pool's values (`storage/claims.rs`).
    pub(super) claims: Claims,
}

impl PoolSlot {
    /// The pool, read without its lock. Only the registry's `&self`
    /// accessors call this; a `RegistryCell` never does.
    #[inline]
    pub(super) fn peek(&self) -> &dyn ErasedPool {
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
    pub(super) slots: Vec<PoolSlot>,
    pub(super) by_type: TypeIdMap<ComponentId>,
    /// A direct-mapped front for `by_type`: a type's slot is fixed by its
    /// `TypeId` (a constant at each call site), so most lookups are one load
    /// and one compare. Types whose slot is taken are found in `by_type`.
    /// A registration fills its slot when empty and no pool is ever
    /// unregistered, so an empty slot means "no pool": a type nobody
    /// registered (the `Disabled` marker of a world that never disabled an
    /// entity) costs no hash lookup either.
    pub(super) fast: [Option<(TypeId, ComponentId)>; FAST_SLOTS],
    /// Run-time components by registered name.
    pub(super) by_name: HashMap<String, ComponentId>,
}

/// Slots of the direct-mapped type table.
const FAST_SLOTS: usize = 64;

#[inline]
pub(super) fn fast_slot(type_id: TypeId) -> usize {
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
            fast: [None; FAST_SLOTS],
            by_name: HashMap::new(),
        }
    }
}

impl std::fmt::Debug for Pools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.slots.iter().map(|s| (s.info.name(), s.peek().len())))
            .finish()
    }
}

/// Read-locks `cell` without waiting.
///
/// # Errors
///
/// [`EcsError::BorrowConflict`] naming `name()` when it is write-locked
/// (`name` is called only then).
pub(crate) fn try_read<'a, T: ?Sized>(
    cell: &'a RwLock<T>,
    name: impl FnOnce() -> Cow<'static, str>,
) -> Result<RwLockReadGuard<'a, T>, EcsError> {
    cell.try_read().ok_or_else(|| EcsError::BorrowConflict {
        name: name(),
        wanted: Access::Read,
        held: Access::Write,
    })
}

/// Write-locks `cell` without waiting.
///
/// # Errors
///
/// [`EcsError::BorrowConflict`] naming `name()` and the access that holds
/// it.
pub(crate) fn try_write<'a, T: ?Sized>(
    cell: &'a RwLock<T>,
    name: impl FnOnce() -> Cow<'static, str>,
) -> Result<RwLockWriteGuard<'a, T>, EcsError> {
    cell.try_write().ok_or_else(|| EcsError::BorrowConflict {
        name: name(),
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

/// `pool` as the `BlobPool` of a run-time component. Callers pass the pool
/// of a slot whose info is a run-time one: `register_runtime` is the only
/// place that creates such slots, and it stores a `BlobPool` there.
#[inline]
pub(super) fn as_blob(pool: &dyn ErasedPool) -> &BlobPool {
    (pool as &dyn Any)
        .downcast_ref::<BlobPool>()
        .expect("a run-time component's pool is a BlobPool")
}

/// A held lock on a pool: shared for reading, exclusive for writing.
pub(crate) enum PoolGuard<'a> {
    Read(
        #[expect(dead_code, reason = "held for its lock")] RwLockReadGuard<'a, Box<dyn ErasedPool>>,
    ),
    Write(
        #[expect(dead_code, reason = "held for its lock")]
        RwLockWriteGuard<'a, Box<dyn ErasedPool>>,
    ),
}

/// A run-time component's pool, locked for as long as this value lives.
pub(crate) struct LockedBlob<'a> {
    pool: &'a BlobPool,
    info: &'a ComponentInfo,
    _guard: PoolGuard<'a>,
}

impl LockedBlob<'_> {
    /// The pool, for as long as this borrow of the lock.
    #[inline]
    pub(crate) fn pool(&self) -> &BlobPool {
        self.pool
    }

    pub(crate) fn info(&self) -> &ComponentInfo {
        self.info
    }
}

/// [`downcast`] for a mutable borrow.
#[inline]
fn downcast_mut<T: Component>(pool: &mut dyn ErasedPool) -> &mut SparseSet<T> {
    debug_assert!((pool as &dyn Any).is::<SparseSet<T>>());
    // SAFETY: as in `downcast`; the borrow stays exclusive.
    unsafe { &mut *(pool as *mut dyn ErasedPool as *mut SparseSet<T>) }
}

impl Pools {
    /// Tells every pool the change clock was set to `now` other than by an
    /// advance (see `ErasedPool::clock_moved`).
    pub(crate) fn clock_moved(&mut self, now: u32) {
        for slot in &mut self.slots {
            slot.cell.get_mut().clock_moved(now);
        }
    }

    #[inline]
    pub(crate) fn id_of<T: Component>(&self) -> Option<ComponentId> {
        self.id_of_type(TypeId::of::<T>())
    }

    /// [`id_of`](Self::id_of) by `TypeId`.
    #[inline]
    fn id_of_type(&self, type_id: TypeId) -> Option<ComponentId> {
        match self.fast[fast_slot(type_id)] {
            Some((known, id)) if known == type_id => Some(id),
            Some(_) => self.by_type.get(&type_id).copied(),
            None => None,
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
        let id = ComponentId::from_u32(self.slots.len() as u32);
        self.slots.push(PoolSlot {
            info: ComponentInfo::of::<T>(),
            cell: RwLock::new(Box::new(SparseSet::<T>::new())),
            copy: PoolCopy::builtin::<T>(),
            claims: Claims::default(),
        });
        self.by_type.insert(TypeId::of::<T>(), id);
        let fast = &mut self.fast[fast_slot(TypeId::of::<T>())];
        if fast.is_none() {
            *fast = Some((TypeId::of::<T>(), id));
        }
        id
    }

    /// Adds the pool of a run-time component.
    ///
    /// # Errors
    ///
    /// [`EcsError::DuplicateComponentName`] when a run-time component has
    /// that name already.
    pub(crate) fn register_runtime(
        &mut self,
        descriptor: ComponentDescriptor,
    ) -> Result<ComponentId, EcsError> {
        if self.by_name.contains_key(descriptor.name()) {
            return Err(EcsError::DuplicateComponentName {
                name: descriptor.name().to_owned(),
            });
        }
        let id = ComponentId::from_u32(
            u32::try_from(self.slots.len()).expect("fewer than 2^32 component types"),
        );
        let name = descriptor.name().to_owned();
        let info = ComponentInfo::runtime(descriptor);
        let pool = BlobPool::new(info.layout(), info.drop_fn().cloned());
        let copy = info.drop_fn().is_none().then(PoolCopy::bytes);
        self.slots.push(PoolSlot {
            info,
            cell: RwLock::new(Box::new(pool)),
            copy,
            claims: Claims::default(),
        });
        self.by_name.insert(name, id);
        Ok(id)
    }

    pub(crate) fn id_by_name(&self, name: &str) -> Option<ComponentId> {
        self.by_name.get(name).copied()
    }

    /// The slot of run-time component `id`.
    ///
    /// # Errors
    ///
    /// [`EcsError::UnknownComponent`] or [`EcsError::TypedComponent`].
    fn runtime_slot(&self, id: ComponentId) -> Result<&PoolSlot, EcsError> {
        let slot = self
            .slots
            .get(id.index())
            .ok_or(EcsError::UnknownComponent { id })?;
        if slot.info.is_runtime() {
            Ok(slot)
        } else {
            Err(EcsError::TypedComponent {
                component: slot.info.name_cow(),
            })
        }
    }

    /// The blob pool of run-time component `id`, read without its lock (see
    /// `PoolSlot::peek`), with its info.
    ///
    /// # Errors
    ///
    /// As `runtime_slot`.
    pub(crate) fn blob(&self, id: ComponentId) -> Result<(&BlobPool, &ComponentInfo), EcsError> {
        let slot = self.runtime_slot(id)?;
        Ok((as_blob(slot.peek()), &slot.info))
    }

    /// The blob pool of run-time component `id`, mutable, with its info.
    ///
    /// # Errors
    ///
    /// As `runtime_slot`.
    pub(crate) fn blob_mut(
        &mut self,
        id: ComponentId,
    ) -> Result<(&mut BlobPool, &ComponentInfo), EcsError> {
        self.runtime_slot(id)?;
        let slot = &mut self.slots[id.index()];
        let pool = (&mut **slot.cell.get_mut() as &mut dyn Any)
            .downcast_mut::<BlobPool>()
            .expect("a run-time component's pool is a BlobPool");
        Ok((pool, &slot.info))
    }

    /// Locks the blob pool of run-time component `id` for `access`.
    ///
    /// # Errors
    ///
    /// As `runtime_slot`, and [`EcsError::BorrowConflict`] when the pool is
    /// locked in a conflicting way.
    pub(crate) fn lock_blob(
        &self,
        id: ComponentId,
        access: Access,
    ) -> Result<LockedBlob<'_>, EcsError> {
        let slot = self.runtime_slot(id)?;
        let name = || slot.info.name_cow();
        let guard = match access {
            Access::Read => PoolGuard::Read(try_read(&slot.cell, name)?),
            Access::Write => PoolGuard::Write(try_write(&slot.cell, name)?),
        };
        // SAFETY: `guard` holds the pool's lock, and `LockedBlob` keeps it
        // for as long as the reference exists (it only lends the reference
        // for a borrow of itself). Under a read lock nobody writes the pool;
        // under our write lock nobody else touches it, and `LockedBlob`
        // never mutates the pool's fields (its values are reached through
        // the column's raw pointer, outside the pool struct).
        let pool = unsafe { &**slot.cell.data_ptr() };
        Ok(LockedBlob {
            pool: as_blob(pool),
            info: &slot.info,
            _guard: guard,
        })
    }

    pub(crate) fn info(&self, id: ComponentId) -> Option<&ComponentInfo> {
        self.slots.get(id.index()).map(|slot| &slot.info)
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The pool of `id`, type-erased.
    ///
    /// # Panics
    ///
    /// When `id` is not registered.
    pub(crate) fn erased_at_mut(&mut self, id: ComponentId) -> &mut dyn ErasedPool {
        &mut **self.slots[id.index()].cell.get_mut()
    }

    /// Every pool, type-erased, in [`ComponentId`] order.
    pub(crate) fn erased_mut(&mut self) -> impl Iterator<Item = &mut dyn ErasedPool> {
        self.slots.iter_mut().map(|slot| &mut **slot.cell.get_mut())
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
        let guard = try_read(&slot.cell, || slot.info.name_cow())?;
        Ok(Some(RwLockReadGuard::map(guard, |pool| downcast(&**pool))))
    }

    /// Shared-locks `T`'s pool and claims its values for `access` by a view
    /// shaped `shape` (`storage/claims.rs`); `Ok(None)` when `T` has no pool.
    /// A `sole` view (the registry's only borrower, naming `T` once:
    /// `Locked::exclusive_for`) meets no other claim and registers none.
    #[inline]
    pub(crate) fn claim<T: Component>(
        &self,
        access: Access,
        shape: Option<ShapeFn>,
        sole: bool,
    ) -> Result<Option<Claimed<'_, T>>, EcsError> {
        let Some(id) = self.id_of::<T>() else {
            return Ok(None);
        };
        let slot = &self.slots[id.index()];
        if sole {
            return Ok(Some(Claimed::new(Self::sole(slot, access), None)));
        }
        Self::claim_shared(slot, access, shape).map(Some)
    }

    /// [`claim`](Self::claim) for a view that is not sole: the read lock
    /// and the claim list (out of line, so a sole view's claim stays a
    /// lookup).
    #[inline(never)]
    fn claim_shared<T: Component>(
        slot: &PoolSlot,
        access: Access,
        shape: Option<ShapeFn>,
    ) -> Result<Claimed<'_, T>, EcsError> {
        let pool = Self::shared(slot, false).map_err(|e| match e {
            EcsError::BorrowConflict { name, held, .. } => EcsError::BorrowConflict {
                name,
                wanted: access,
                held,
            },
            other => other,
        })?;
        let claim = slot.claims.claim(access, shape, || slot.info.name_cow())?;
        Ok(Claimed::new(pool, Some(claim)))
    }

    /// The pool of a sole view's claim (`Locked::exclusive_for`), borrowed
    /// without its lock; for a write claim, with its raw pointers
    /// refreshed first.
    #[inline]
    fn sole<T: Component>(slot: &PoolSlot, access: Access) -> SharedPool<'_, T> {
        if access == Access::Write {
            // SAFETY: a sole view borrows the registry exclusively for its
            // whole life and names `T` once, through this claim: no guard
            // of this lock and no other reference to the pool exists now,
            // so this `&mut` is unique while it lives (to the end of this
            // block). The pointers it takes stay valid under the shared
            // borrow below, as after `refresh_raw` through `&mut Registry`.
            let pool = unsafe { &mut *slot.cell.data_ptr() };
            downcast_mut::<T>(&mut **pool).refresh_raw();
        }
        // SAFETY: as in `shared` for a sole view.
        let pool = unsafe { &*slot.cell.data_ptr() };
        SharedPool::Sole(downcast(&**pool))
    }

    /// `T`'s pool shared: read-locked, or, for a `sole` view, borrowed
    /// without the lock; `Ok(None)` when `T` has no pool. The caller (a
    /// sole view) reads a pool it names nowhere else, or one that no view
    /// may write (`Disabled`).
    #[inline]
    pub(crate) fn read_shared<T: Component>(
        &self,
        sole: bool,
    ) -> Result<Option<SharedPool<'_, T>>, EcsError> {
        let Some(id) = self.id_of::<T>() else {
            return Ok(None);
        };
        Self::shared(&self.slots[id.index()], sole).map(Some)
    }

    #[inline]
    fn shared<T: Component>(slot: &PoolSlot, sole: bool) -> Result<SharedPool<'_, T>, EcsError> {
        if sole {
            // SAFETY: a sole view (`Locked::exclusive_for`) borrows the
            // registry exclusively for its whole life, so no guard of this
            // lock exists but the view's own, and the view takes no write
            // lock on this pool: it names the type once, through this
            // borrow, or the type is one no view writes (`Disabled`). No
            // `&mut` to the pool can therefore exist while this `&` lives,
            // exactly as under a read guard.
            let pool = unsafe { &*slot.cell.data_ptr() };
            return Ok(SharedPool::Sole(downcast(&**pool)));
        }
        let guard = try_read(&slot.cell, || slot.info.name_cow())?;
        Ok(SharedPool::Locked(RwLockReadGuard::map(guard, |pool| {
            downcast(&**pool)
        })))
    }

    /// Takes every typed pool's raw pointers for write claims.
    pub(crate) fn refresh_raw(&mut self) {
        for pool in self.erased_mut() {
            pool.refresh_raw();
        }
    }

    /// Takes the raw pointers for write claims of the pool of `key` only,
    /// if it has one (a view that writes only that pool needs no other).
    pub(crate) fn refresh_raw_of(&mut self, key: ComponentKey) {
        let id = match key {
            ComponentKey::Type(type_id) => self.id_of_type(type_id),
            ComponentKey::Runtime(id) => Some(id),
        };
        if let Some(slot) = id.and_then(|id| self.slots.get_mut(id.index())) {
            slot.cell.get_mut().refresh_raw();
        }
    }

    /// Locks `T`'s pool for writing; `Ok(None)` when `T` has no pool.
    pub(crate) fn write<T: Component>(
        &self,
    ) -> Result<Option<MappedRwLockWriteGuard<'_, SparseSet<T>>>, EcsError> {
        let Some(id) = self.id_of::<T>() else {
            return Ok(None);
        };
        let slot = &self.slots[id.index()];
        let guard = try_write(&slot.cell, || slot.info.name_cow())?;
        Ok(Some(RwLockWriteGuard::map(guard, |pool| {
            downcast_mut(&mut **pool)
        })))
    }

    /// Removes `entity` from every pool, dropping its components. If a
    /// destructor panics, the other pools are still emptied of `entity`
    /// (each value dropped once), then the first panic resumes.
    pub(crate) fn remove_entity(&mut self, entity: Entity) {
        let mut panic = FirstPanic::default();
        for slot in &mut self.slots {
            let pool = slot.cell.get_mut();
            panic.run(|| {
                pool.remove_entity(entity);
            });
        }
        panic.resume();
    }

    /// Removes every entity of `entities` from every pool. When no pool's
    /// components run code on drop (so no removal can unwind), pool by
    /// pool: each pool sees the entities in the same order as entity by
    /// entity, so the result is the same. Otherwise entity by entity, as
    /// [`remove_entity`](Self::remove_entity).
    ///
    /// The pools go in parallel only for a large batch *and* when the
    /// caller is already a rayon worker (a schedule's apply between
    /// waves), where the split costs a push onto its own deque. Called from
    /// any other thread (a `CommandBuffer::apply` in a plain loop), a
    /// parallel split injects a job into the global pool, blocks the
    /// caller on a latch and moves the pools' cache lines to the workers'
    /// cores and back. That was the `command_flush` regression of issue 29:
    /// a buffer's 10,000 despawns reach here as 20 batches of 512, so 20
    /// such splits (about 80 context switches) per apply. Inside
    /// [`run_serial`](crate::run_serial) (a one-thread schedule) they go
    /// one after the other as well.
    pub(crate) fn remove_entities(&mut self, entities: &[Entity]) {
        /// Removals below which the pools are not worth a parallel split
        /// (under Miri 32, so that its small tests take the parallel path).
        const PARALLEL_REMOVALS: usize = if cfg!(miri) { 32 } else { 256 };
        if self.slots.iter_mut().any(|s| s.cell.get_mut().needs_drop()) {
            for &entity in entities {
                self.remove_entity(entity);
            }
            return;
        }
        let remove_all = |slot: &mut PoolSlot| {
            let pool = slot.cell.get_mut();
            if pool.len() > 0 {
                pool.remove_entities(entities);
            }
        };
        if entities.len() >= PARALLEL_REMOVALS
            && self.slots.len() > 1
            && rayon::current_thread_index().is_some()
            && crate::walk_threads() > 1
        {
            use rayon::prelude::*;
            self.slots.par_iter_mut().for_each(remove_all);
        } else {
            self.slots.iter_mut().for_each(remove_all);
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

    /// Empties every pool, dropping every value once; if a destructor
    /// panics, every pool is still emptied, then the first panic resumes.
    pub(crate) fn clear(&mut self) {
        let mut panic = FirstPanic::default();
        for slot in &mut self.slots {
            let pool = slot.cell.get_mut();
            panic.run(|| pool.clear());
        }
        panic.resume();
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
