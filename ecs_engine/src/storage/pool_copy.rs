//! Whole-pool copies for in-memory states ([`RegistryState`](crate::RegistryState)):
//! the per-type copy functions a pool slot keeps ([`PoolCopy`]), and the
//! save and restore of the whole pool table.
//!
//! A typed pool is copied by its type's `Clone`, registered with
//! [`Registry::register_clone`](crate::Registry::register_clone) (Rust has
//! no way to ask "is `T: Clone`?" of a generic `T`, so the registry learns
//! it once per type); the hierarchy's links and [`Disabled`](crate::Disabled)
//! marks are clonable from the start. A run-time component of plain bytes
//! (no destructor) is copied byte for byte; one with a destructor owns
//! something its bytes do not show, so it is never copied.
//!
//! Invariant of a saved table: position `i` holds a copy of the pool of
//! [`ComponentId`](crate::ComponentId) `i`, with that slot's info and copy
//! functions, so a restore can check, pool by pool, that it puts each
//! copy back into a pool of the same type.

use std::any::{Any, TypeId};

use parking_lot::{Mutex, RwLock};

use super::blob_pool::BlobPool;
use super::pools::{ErasedPool, PoolSlot, Pools, as_blob, fast_slot, typed_mut};
use crate::storage::sparse_set::CopySide;
use crate::{
    ChildOf, Children, Component, ComponentId, ComponentInfo, Disabled, Entity, EntityMap,
    MapEntities, SparseSet, StateError,
};

/// How to copy one slot's pool.
#[derive(Clone, Copy)]
pub(crate) struct PoolCopy {
    /// A copy of the pool, with its own identity for views: a saved copy,
    /// or, with `true`, one indexed to become a registry's pool (see
    /// `SparseSet::copy_state`).
    pub(super) copy: fn(&dyn ErasedPool, bool) -> Box<dyn ErasedPool>,
    /// Makes the first pool equal to the second (the current change tick
    /// next), reusing its allocations where it can; copies the values
    /// only when told both hold the same entities in the same order. The
    /// side says which pool is the saved copy.
    restore: fn(&mut dyn ErasedPool, &dyn ErasedPool, u32, bool, CopySide),
    /// Copies from the second pool into the first the components written
    /// after a tick (see `SparseSet::copy_changed`), for a typed pool;
    /// `false` when either keeps no ticks.
    changed: Option<CopyChanged>,
    /// Brings a ring's mirror copy (the first pool) up to the second,
    /// copying only the positions that differ since a tick (the current
    /// tick next; with `true`, the pool's structure changed since) and
    /// keeping what it overwrote for an undo (see
    /// `SparseSet::save_delta`); `None` when it cannot. With
    /// `undo_delta`, for a typed pool.
    pub(super) save_delta: Option<SaveDelta>,
    /// Puts back into the mirror what `save_delta` overwrote.
    pub(super) undo_delta: Option<UndoDelta>,
    /// Gives the second entity a copy of the first one's value (both
    /// alive, the second without one); `false` when the first has none.
    clone_value: fn(&mut dyn ErasedPool, Entity, Entity) -> bool,
    /// Gives the entity of the other registry's pools (alive there, with
    /// no component) a copy of the first one's value, its handles mapped
    /// for a type registered with `MapEntities`; `None` for a run-time
    /// component (its id means nothing in another registry).
    clone_into: Option<CloneInto>,
}

/// See [`PoolCopy`]'s `changed`: the copy, the source, the tick after
/// which writes are copied, the current tick, and whether the source's
/// ticks (rather than the copy's) say what was written.
type CopyChanged = fn(&mut dyn ErasedPool, &dyn ErasedPool, u32, u32, bool) -> bool;

/// See [`PoolCopy`]'s `save_delta`.
type SaveDelta = fn(
    &mut dyn ErasedPool,
    &dyn ErasedPool,
    u32,
    u32,
    bool,
) -> Option<super::pool_ring::DeltaSaved>;

/// See [`PoolCopy`]'s `undo_delta`.
type UndoDelta = fn(&mut dyn ErasedPool, Box<dyn Any + Send + Sync>);

/// See [`PoolCopy`]'s `clone_into`: `false` when the entity has no value.
type CloneInto = fn(&dyn ErasedPool, Entity, &mut Pools, Entity, &mut EntityMap) -> bool;

pub(super) fn typed<T: Component>(pool: &dyn ErasedPool) -> &SparseSet<T> {
    (pool as &dyn Any)
        .downcast_ref()
        .expect("a pool's type matches its id")
}

fn copy_typed<T: Component + Clone>(pool: &dyn ErasedPool, indexed: bool) -> Box<dyn ErasedPool> {
    Box::new(typed::<T>(pool).copy_state(indexed))
}

fn restore_typed<T: Component + Clone>(
    dst: &mut dyn ErasedPool,
    src: &dyn ErasedPool,
    now: u32,
    same_structure: bool,
    side: CopySide,
) {
    typed_mut::<T>(dst).restore_from(typed::<T>(src), now, same_structure, side);
}

fn copy_changed_typed<T: Component + Clone>(
    dst: &mut dyn ErasedPool,
    src: &dyn ErasedPool,
    since: u32,
    now: u32,
    src_ticks: bool,
) -> bool {
    typed_mut::<T>(dst).copy_changed(typed::<T>(src), since, now, src_ticks)
}

fn clone_typed_value<T: Component + Clone>(
    pool: &mut dyn ErasedPool,
    from: Entity,
    to: Entity,
) -> bool {
    let set = typed_mut::<T>(pool);
    let Some(value) = set.get(from).cloned() else {
        return false;
    };
    set.insert_live(to, value);
    true
}

fn clone_typed_into<T: Component + Clone>(
    pool: &dyn ErasedPool,
    from: Entity,
    dst: &mut Pools,
    to: Entity,
    _: &mut EntityMap,
) -> bool {
    let Some(value) = typed::<T>(pool).get(from).cloned() else {
        return false;
    };
    dst.insert_copy(to, value, PoolCopy::typed::<T>());
    true
}

fn clone_mapped_into<T: Component + Clone + MapEntities>(
    pool: &dyn ErasedPool,
    from: Entity,
    dst: &mut Pools,
    to: Entity,
    map: &mut EntityMap,
) -> bool {
    let Some(mut value) = typed::<T>(pool).get(from).cloned() else {
        return false;
    };
    value.map_entities(map);
    dst.insert_copy(to, value, PoolCopy::mapped::<T>());
    true
}

fn clone_blob_value(pool: &mut dyn ErasedPool, from: Entity, to: Entity) -> bool {
    (pool as &mut dyn Any)
        .downcast_mut::<BlobPool>()
        .expect("a run-time component's pool is a BlobPool")
        .clone_value(from, to)
}

/// A byte copy of a run-time component's pool, index included (a blob
/// pool's copy is always indexed).
fn copy_blob(pool: &dyn ErasedPool, _indexed: bool) -> Box<dyn ErasedPool> {
    let copy = as_blob(pool).copy_bytes().unwrap_or_else(|| {
        // A pool with a destructor never gets these functions (`bytes`
        // is given only to plain-byte pools): what failed is memory.
        std::alloc::handle_alloc_error(std::alloc::Layout::new::<u8>())
    });
    Box::new(copy)
}

fn restore_blob(
    dst: &mut dyn ErasedPool,
    src: &dyn ErasedPool,
    _now: u32,
    _same: bool,
    _side: CopySide,
) {
    let copy = copy_blob(src, true);
    let dst = (dst as &mut dyn Any)
        .downcast_mut::<BlobPool>()
        .expect("a run-time component's pool is a BlobPool");
    *dst = *(copy as Box<dyn Any>)
        .downcast()
        .expect("a copy of a BlobPool is a BlobPool");
}

/// The ticks of a restore: `now`, the restored change tick; `current`,
/// the registry's before the restore; `since`, the tick after which the
/// registry's writes may be missing from the state (`None`: do not trust
/// the ticks).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RestoreTimes {
    pub(crate) now: u32,
    pub(crate) current: u32,
    pub(crate) since: Option<u32>,
}

impl PoolCopy {
    /// Makes `dst` equal to `src`, copying as little as `apart` allows:
    /// the components written after its tick (by the ticks of the registry
    /// pool: `src` in a save, `side` [`CopySide::Into`], `dst` in a
    /// restore; `current` is the registry's change tick), the values, or
    /// the whole pool (`now` stamps the values of a pool that starts
    /// tracking changes here).
    pub(super) fn make_equal(
        &self,
        dst: &mut dyn ErasedPool,
        src: &dyn ErasedPool,
        apart: Apart,
        (now, current): (u32, u32),
        side: CopySide,
    ) {
        if let (Apart::Delta(since), Some(changed)) = (apart, self.changed)
            && changed(dst, src, since, current, side == CopySide::Into)
        {
            return;
        }
        let same_structure = matches!(apart, Apart::Delta(_) | Apart::Values);
        (self.restore)(dst, src, now, same_structure, side);
    }

    /// The copy of `SparseSet<T>`.
    pub(crate) fn typed<T: Component + Clone>() -> Self {
        PoolCopy {
            copy: copy_typed::<T>,
            restore: restore_typed::<T>,
            changed: None,
            save_delta: None,
            undo_delta: None,
            clone_value: clone_typed_value::<T>,
            clone_into: Some(clone_typed_into::<T>),
        }
    }

    /// The copy of `SparseSet<T>` that copies, where the pool tracks
    /// changes, only the components written since (by their changed
    /// ticks): for a type whose values change through `&mut` access only.
    pub(crate) fn delta<T: Component + Clone>() -> Self {
        PoolCopy {
            changed: Some(copy_changed_typed::<T>),
            save_delta: Some(super::pool_ring::save_delta_typed::<T>),
            undo_delta: Some(super::pool_ring::undo_delta_typed::<T>),
            ..Self::typed::<T>()
        }
    }

    /// The copy of `SparseSet<T>` for a type holding handles: across
    /// registries its values follow an [`EntityMap`].
    pub(crate) fn mapped<T: Component + Clone + MapEntities>() -> Self {
        PoolCopy {
            clone_into: Some(clone_mapped_into::<T>),
            ..Self::typed::<T>()
        }
    }

    /// The copy of a run-time component's pool of plain bytes.
    pub(crate) fn bytes() -> Self {
        PoolCopy {
            copy: copy_blob,
            restore: restore_blob,
            changed: None,
            save_delta: None,
            undo_delta: None,
            clone_value: clone_blob_value,
            clone_into: None,
        }
    }

    /// The copy of the engine's own component types, known clonable:
    /// the hierarchy's links and [`Disabled`]; `None` for any other `T`.
    pub(crate) fn builtin<T: Component>() -> Option<Self> {
        let id = TypeId::of::<T>();
        if id == TypeId::of::<ChildOf>() {
            Some(Self::typed::<ChildOf>())
        } else if id == TypeId::of::<Children>() {
            Some(Self::typed::<Children>())
        } else if id == TypeId::of::<Disabled>() {
            Some(Self::typed::<Disabled>())
        } else {
            None
        }
    }
}

/// The copy of one pool in a saved table.
pub(crate) struct SavedPool {
    pub(super) info: ComponentInfo,
    pub(super) copy: PoolCopy,
    pub(super) pool: Box<dyn ErasedPool>,
    /// The registry pool this copy was last made equal to or from, as it
    /// was then: while that pool keeps the stamp, both hold the same
    /// entities in the same order, and a save or restore between them
    /// copies the values only (the copy's own structure changes only
    /// through a save or restore that records this anew, or through a
    /// ring's undo, which puts back what the copy knew before); while it
    /// also keeps its unmarked number, only the values written since (by
    /// their ticks), or, in a ring's save, the positions whose entity
    /// changed as well. Behind a lock: a
    /// restore reads the state through a shared borrow.
    pub(super) synced: Mutex<Option<PoolSync>>,
}

/// What a copy knows of the registry pool it was last made equal to or
/// from (see [`SavedPool`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PoolSync {
    /// `ErasedPool::stamp`.
    stamp: (u64, u64),
    /// `ErasedPool::unmarked`.
    unmarked: Option<u64>,
}

impl PoolSync {
    pub(super) fn of(pool: &dyn ErasedPool) -> Self {
        PoolSync {
            stamp: pool.stamp(),
            unmarked: pool.unmarked(),
        }
    }
}

/// How far a copy and a pool that were once equal may have moved apart:
/// `Delta(since)` when only components written after the tick `since`
/// differ (both track changes and nothing was written unmarked), `Values`
/// when they hold the same entities in the same order, `Moved(since)`
/// when, besides the components written after `since`, only the
/// positions whose entities the pool added, removed or moved since
/// differ (a ring's save copies only those, see `SparseSet::save_delta`;
/// elsewhere such a pool is copied whole), `Whole` otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Apart {
    Delta(u32),
    Values,
    Moved(u32),
    Whole,
}

impl Apart {
    /// `since`: the tick after which writes may be missing from the copy,
    /// `None` when the copy cannot be trusted that far back.
    pub(super) fn of(synced: Option<PoolSync>, pool: &dyn ErasedPool, since: Option<u32>) -> Apart {
        let now = PoolSync::of(pool);
        match (synced, since) {
            (Some(s), Some(since)) if s == now && now.unmarked.is_some() => Apart::Delta(since),
            (Some(s), _) if s.stamp == now.stamp => Apart::Values,
            // The same pool (its identity), nothing written unmarked.
            (Some(s), Some(since))
                if s.stamp.0 == now.stamp.0
                    && s.unmarked == now.unmarked
                    && now.unmarked.is_some() =>
            {
                Apart::Moved(since)
            }
            _ => Apart::Whole,
        }
    }
}

impl SavedPool {
    pub(crate) fn info(&self) -> &ComponentInfo {
        &self.info
    }

    pub(crate) fn len(&self) -> usize {
        self.pool.len()
    }
}

impl std::fmt::Debug for SavedPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedPool")
            .field("component", &self.info.name())
            .field("len", &self.pool.len())
            .finish()
    }
}

impl Pools {
    /// Registers `T`'s clone as the copy of its pool (creating the pool
    /// if missing).
    pub(crate) fn register_clone<T: Component + Clone>(&mut self) {
        let id = self.register::<T>();
        self.slots[id.index()].copy = Some(PoolCopy::typed::<T>());
    }

    /// Registers `T`'s clone as the copy of its pool, with the copy of
    /// the written components only ([`PoolCopy::delta`]).
    pub(crate) fn register_clone_delta<T: Component + Clone>(&mut self) {
        let id = self.register::<T>();
        self.slots[id.index()].copy = Some(PoolCopy::delta::<T>());
    }

    /// Registers `T`'s clone, its handles mapped when copied into another
    /// registry (creating the pool if missing).
    pub(crate) fn register_clone_mapped<T: Component + Clone + MapEntities>(&mut self) {
        let id = self.register::<T>();
        self.slots[id.index()].copy = Some(PoolCopy::mapped::<T>());
    }

    /// Gives `to` (alive, without a `T`) the copied `value`, registering
    /// `T` with `copy` as its pool's copy if it has none yet (so the copy
    /// can be saved and copied on in turn).
    fn insert_copy<T: Component>(&mut self, to: Entity, value: T, copy: PoolCopy) {
        let id = self.register::<T>();
        let slot = &mut self.slots[id.index()];
        slot.copy.get_or_insert(copy);
        typed_mut::<T>(&mut **slot.cell.get_mut()).insert_live(to, value);
    }

    /// The copy functions of every slot.
    ///
    /// # Errors
    ///
    /// [`StateError::NotClonable`] naming the first pool that has none.
    pub(super) fn copies(&self) -> Result<Vec<PoolCopy>, StateError> {
        self.slots
            .iter()
            .map(|slot| {
                slot.copy.ok_or_else(|| StateError::NotClonable {
                    component: slot.info.name_cow(),
                })
            })
            .collect()
    }

    /// Makes `saved` a copy of every pool, reusing the copies it holds
    /// where the slot's type is the same (the current change tick `now`).
    ///
    /// # Errors
    ///
    /// [`StateError::NotClonable`] when a pool has no copy function;
    /// `saved` is unchanged then.
    pub(crate) fn save_into(
        &self,
        saved: &mut Vec<SavedPool>,
        now: u32,
        since: Option<u32>,
    ) -> Result<(), StateError> {
        let copies = self.copies()?;
        saved.truncate(self.slots.len());
        for (i, (slot, copy)) in self.slots.iter().zip(copies).enumerate() {
            let pool = slot.peek();
            match saved.get_mut(i) {
                Some(old) if old.info == slot.info => {
                    let synced = old.synced.get_mut();
                    copy.make_equal(
                        &mut *old.pool,
                        pool,
                        Apart::of(*synced, pool, since),
                        (now, now),
                        CopySide::Into,
                    );
                    *synced = Some(PoolSync::of(pool));
                }
                _ => {
                    let fresh = SavedPool {
                        info: slot.info.clone(),
                        copy,
                        pool: (copy.copy)(pool, false),
                        synced: Mutex::new(Some(PoolSync::of(pool))),
                    };
                    if i < saved.len() {
                        saved[i] = fresh;
                    } else {
                        saved.push(fresh);
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks that every copy of `saved` has the type of the slot at its
    /// position.
    ///
    /// # Errors
    ///
    /// [`StateError::OtherTypes`] naming the first position where not.
    pub(crate) fn check_types(&self, saved: &[SavedPool]) -> Result<(), StateError> {
        let infos: Vec<&ComponentInfo> = saved.iter().map(SavedPool::info).collect();
        self.check_infos(&infos)
    }

    /// [`check_types`](Self::check_types) of copies with the components
    /// `infos`.
    ///
    /// # Errors
    ///
    /// As `check_types`.
    pub(crate) fn check_infos(&self, infos: &[&ComponentInfo]) -> Result<(), StateError> {
        match self
            .slots
            .iter()
            .zip(infos)
            .enumerate()
            .find(|(_, (slot, info))| slot.info != ***info)
        {
            Some((i, (slot, info))) => Err(StateError::OtherTypes {
                position: i,
                saved: info.name_cow(),
                found: slot.info.name_cow(),
            }),
            None => Ok(()),
        }
    }

    /// Makes every pool equal to its copy in `saved`: pools of the table
    /// that `saved` lacks (registered after the save) are emptied without
    /// logging removals, and pools `saved` has beyond the table are
    /// registered. `tracked` gets the id of every pool that
    /// starts tracking changes here; `now` is the restored change tick.
    ///
    /// # Errors
    ///
    /// [`StateError::OtherTypes`] when a slot holds another type than the
    /// copy at its position (a state of a registry that registered its
    /// types in another order); checked before any pool changes.
    pub(crate) fn restore(
        &mut self,
        saved: &[SavedPool],
        times: RestoreTimes,
        tracked: &mut Vec<ComponentId>,
    ) -> Result<(), StateError> {
        let RestoreTimes {
            now,
            current,
            since,
        } = times;
        self.check_types(saved)?;
        for (k, (slot, copy)) in self.slots.iter_mut().zip(saved).enumerate() {
            let pool = slot.cell.get_mut();
            let was_tracking = pool.is_tracking();
            let mut synced = copy.synced.lock();
            let apart = Apart::of(*synced, &**pool, since);
            copy.copy.make_equal(
                &mut **pool,
                &*copy.pool,
                apart,
                (now, current),
                CopySide::From,
            );
            // The copy's marks may be of a later moment than its ticks (a
            // ring's mirror undone to an older frame), the pool's own of
            // a moment after the state: none may lie ahead of the clock.
            pool.clock_moved(now);
            *synced = Some(PoolSync::of(&**pool));
            if pool.is_tracking() && !was_tracking {
                tracked.push(ComponentId::from_u32(
                    u32::try_from(k).expect("fewer than 2^32 component types"),
                ));
            }
            slot.copy = Some(copy.copy);
        }
        for slot in self.slots.iter_mut().skip(saved.len()) {
            slot.cell.get_mut().reset();
        }
        for copy in saved.iter().skip(self.slots.len()) {
            self.adopt(copy, tracked, now);
        }
        Ok(())
    }

    /// The first component of `entity` whose pool has no copy, leaving
    /// out the hierarchy's links (not copied by a clone).
    pub(crate) fn first_unclonable(&self, entity: Entity) -> Option<&ComponentInfo> {
        self.slots
            .iter()
            .filter(|slot| !is_link(&slot.info))
            .find(|slot| slot.copy.is_none() && slot.peek().contains_entity(entity))
            .map(|slot| &slot.info)
    }

    /// The first component of `entity` that cannot be copied into another
    /// registry (no copy, or a run-time component), leaving out the
    /// hierarchy's links.
    pub(crate) fn first_unclonable_into(&self, entity: Entity) -> Option<&ComponentInfo> {
        self.slots
            .iter()
            .filter(|slot| !is_link(&slot.info))
            .find(|slot| {
                slot.copy.and_then(|copy| copy.clone_into).is_none()
                    && slot.peek().contains_entity(entity)
            })
            .map(|slot| &slot.info)
    }

    /// Gives `to`, an entity of `dst` (alive, with no component), a copy
    /// of every component of `from` but the hierarchy's links, each
    /// type's handles mapped by `map` where it was registered with
    /// [`MapEntities`]; every pool holding one can be copied across (see
    /// [`first_unclonable_into`](Self::first_unclonable_into)).
    pub(crate) fn clone_components_into(
        &self,
        from: Entity,
        dst: &mut Pools,
        to: Entity,
        map: &mut EntityMap,
    ) {
        for slot in self.slots.iter().filter(|slot| !is_link(&slot.info)) {
            if let Some(clone_into) = slot.copy.and_then(|copy| copy.clone_into) {
                clone_into(slot.peek(), from, dst, to, map);
            }
        }
    }

    /// Gives `to` (alive, with no component) a copy of every component of
    /// `from` but the hierarchy's links; every pool holding one has a copy
    /// (see [`first_unclonable`](Self::first_unclonable)).
    pub(crate) fn clone_components(&mut self, from: Entity, to: Entity) {
        for slot in self.slots.iter_mut().filter(|slot| !is_link(&slot.info)) {
            if let Some(copy) = slot.copy {
                (copy.clone_value)(&mut **slot.cell.get_mut(), from, to);
            }
        }
    }

    /// Registers a slot for the type of `copy` (absent from the table),
    /// holding a copy of its pool, read at the restored clock `now`.
    fn adopt(&mut self, copy: &SavedPool, tracked: &mut Vec<ComponentId>, now: u32) {
        let id = ComponentId::from_u32(
            u32::try_from(self.slots.len()).expect("fewer than 2^32 component types"),
        );
        let mut pool = (copy.copy.copy)(&*copy.pool, true);
        // As in `restore`: no mark of the copy may lie ahead of the clock.
        pool.clock_moved(now);
        *copy.synced.lock() = Some(PoolSync::of(&*pool));
        if pool.is_tracking() {
            tracked.push(id);
        }
        match copy.info.type_id() {
            Some(type_id) => {
                self.by_type.insert(type_id, id);
                let fast = &mut self.fast[fast_slot(type_id)];
                if fast.is_none() {
                    *fast = Some((type_id, id));
                }
            }
            None => {
                self.by_name.insert(copy.info.name().to_owned(), id);
            }
        }
        self.slots.push(PoolSlot {
            info: copy.info.clone(),
            cell: RwLock::new(pool),
            copy: Some(copy.copy),
            claims: crate::storage::claims::Claims::default(),
        });
    }
}

/// `true` for the hierarchy's link components, which a clone of an
/// entity does not copy (a child has one parent).
fn is_link(info: &ComponentInfo) -> bool {
    let id = info.type_id();
    id == Some(TypeId::of::<ChildOf>()) || id == Some(TypeId::of::<Children>())
}
