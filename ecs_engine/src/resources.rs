//! Resources: at most one value per type, not tied to an entity (the clock,
//! the score board, an input queue).
//!
//! Each resource sits behind its own lock, with the same discipline as the
//! component pools (see the `pools` module): the registry's `&self` accessors
//! read without the lock, a `RegistryCell` locks.
//!
//! Each resource also keeps two change ticks (always, no opt-in): when it
//! was added and when it was last written, as [`ResourceTicks`]. They sit
//! beside the lock as two atomics, so reading them costs two loads and
//! marking a write one store, under the resource's own lock (relaxed: the
//! lock orders them). Inserting stamps both with the registry's change
//! tick, replacing stamps the changed one; writes mark it: on fetch for
//! the registry's `resource_mut` and a cell's `resource_mut`, and on write
//! through [`ResourceTicksMut::mark`] for the scheduler's `ResMut`.

use std::any::{Any, TypeId, type_name};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use parking_lot::{
    MappedRwLockReadGuard, MappedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

use crate::change::ticks::{MAX_CHANGE_AGE, newer};
use crate::storage::pools::{try_read, try_write};
use crate::storage::type_id_map::TypeIdMap;
use crate::{ChangeTick, EcsError};

/// The change ticks of one resource: when it was added (inserted while
/// absent) and when it was last changed (inserted, replaced, or written).
///
/// # Examples
///
/// ```
/// use ecs_engine::Registry;
///
/// struct Score(u32);
///
/// let mut registry = Registry::new();
/// let added = registry.change_tick();
/// registry.insert_resource(Score(0));
/// registry.advance_change_tick();
/// registry.resource_mut::<Score>().unwrap().0 = 3;
/// let ticks = registry.resource_ticks::<Score>().unwrap();
/// assert_eq!(ticks.added(), added);
/// assert_eq!(ticks.changed(), added.wrapping_add(1));
/// let now = registry.change_tick();
/// assert!(ticks.is_changed(added, now));
/// assert!(!ticks.is_added(added, now));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceTicks {
    added: ChangeTick,
    changed: ChangeTick,
}

impl ResourceTicks {
    /// The ticks of a resource added at `added` and last changed at
    /// `changed` (for a load that puts saved ticks back:
    /// [`Registry::set_resource_ticks`](crate::Registry::set_resource_ticks)).
    pub const fn new(added: ChangeTick, changed: ChangeTick) -> Self {
        ResourceTicks { added, changed }
    }

    /// The tick the resource was added at.
    #[inline]
    pub fn added(&self) -> ChangeTick {
        self.added
    }

    /// The tick the resource was last changed at (its insert, its last
    /// replace or its last marked write).
    #[inline]
    pub fn changed(&self) -> ChangeTick {
        self.changed
    }

    /// `true` when the resource was added after `since`, read at `now`
    /// (as [`ChangeTick::is_newer_than`]: a `since` past the horizon sees
    /// it added).
    #[inline]
    pub fn is_added(&self, since: ChangeTick, now: ChangeTick) -> bool {
        newer(self.added.get(), since.get(), now.get())
    }

    /// `true` when the resource was changed (or added) after `since`,
    /// read at `now`.
    #[inline]
    pub fn is_changed(&self, since: ChangeTick, now: ChangeTick) -> bool {
        newer(self.changed.get(), since.get(), now.get())
    }
}

/// The change ticks of a resource held for writing: what a write lock's
/// holder reads ([`ticks`](Self::ticks)) and marks
/// ([`mark`](Self::mark)). Made by
/// [`RegistryCell::resource_mut_with_ticks`](crate::RegistryCell::resource_mut_with_ticks)
/// beside the write guard, which does not mark anything by itself: the
/// holder marks when it writes (the scheduler's `ResMut` does on
/// `DerefMut`).
#[derive(Debug)]
pub struct ResourceTicksMut<'a> {
    slot: &'a SlotTicks,
    written: &'a Written,
}

impl ResourceTicksMut<'_> {
    /// The ticks as they are now (a mark shows at once).
    #[inline]
    pub fn ticks(&self) -> ResourceTicks {
        self.slot.load()
    }

    /// Stamps the resource changed at `tick` (the registry's current
    /// change tick, for a write made now). One relaxed store: the write
    /// lock the holder keeps orders it.
    #[inline]
    pub fn mark(&self, tick: ChangeTick) {
        self.slot.changed.store(tick.get(), Ordering::Relaxed);
        self.written.dirty();
    }

    /// Notes a write that leaves the changed tick as it is (the
    /// scheduler's `ResMut::bypass_change_detection`): readers see no
    /// change, but an in-memory state copies the value again (see
    /// [`Registry::register_resource_clone_delta`](crate::Registry::register_resource_clone_delta)).
    #[inline]
    pub fn note_unmarked_write(&self) {
        self.written.dirty();
    }
}

/// A slot's two ticks, as atomics so that a write-lock holder marks
/// through `&self` (the lock orders every access).
#[derive(Debug)]
struct SlotTicks {
    added: AtomicU32,
    changed: AtomicU32,
}

impl SlotTicks {
    fn new(added: u32, changed: u32) -> Self {
        SlotTicks {
            added: AtomicU32::new(added),
            changed: AtomicU32::new(changed),
        }
    }

    #[inline]
    fn load(&self) -> ResourceTicks {
        ResourceTicks {
            added: ChangeTick::new(self.added.load(Ordering::Relaxed)),
            changed: ChangeTick::new(self.changed.load(Ordering::Relaxed)),
        }
    }

    fn set(&mut self, ticks: ResourceTicks) {
        *self.added.get_mut() = ticks.added.get();
        *self.changed.get_mut() = ticks.changed.get();
    }

    /// Clamps both ticks to at most [`MAX_CHANGE_AGE`] old at `now`.
    fn clamp(&mut self, now: u32) {
        let oldest = now.wrapping_sub(MAX_CHANGE_AGE);
        for tick in [self.added.get_mut(), self.changed.get_mut()] {
            if now.wrapping_sub(*tick) > MAX_CHANGE_AGE {
                *tick = oldest;
            }
        }
    }
}

struct ResourceSlot {
    name: &'static str,
    ticks: SlotTicks,
    /// Which value the slot holds, as far as marked writes can tell (see
    /// [`Written`]).
    written: Written,
    cell: RwLock<Box<dyn Any + Send + Sync>>,
}

/// A resource slot's written number: 0 once the value may have been
/// written (a marked write, a mutable borrow, a restore of another
/// value), else a number no other value of any slot of the process had,
/// given by the first save after the write ([`number`](Self::number)).
/// While it keeps its number, the value is the one saved with it, so a
/// save of a type registered for deltas shares that copy. A write stores
/// 0 (one relaxed store, no shared counter on the write path). Atomic: a
/// write lock's holder marks through `&self`.
#[derive(Debug, Default)]
struct Written(AtomicU64);

/// The last number a [`Written`] took.
static WRITTEN: AtomicU64 = AtomicU64::new(0);

impl Written {
    /// The value may have changed.
    #[inline]
    fn dirty(&self) {
        self.0.store(0, Ordering::Relaxed);
    }

    /// The value's number, taken now if it has none.
    fn number(&self) -> u64 {
        let held = self.0.load(Ordering::Relaxed);
        if held != 0 {
            return held;
        }
        let fresh = WRITTEN.fetch_add(1, Ordering::Relaxed) + 1;
        match self
            .0
            .compare_exchange(0, fresh, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => fresh,
            Err(held) => held,
        }
    }
}

/// How in-memory states copy one resource type.
#[derive(Clone, Copy)]
struct ResourceCopy {
    copy: CopyValue,
    /// A boxed copy, for a restore.
    boxed: BoxValue,
    /// A save shares the previous save's copy while the slot's written
    /// number is unchanged ([`Registry::register_resource_clone_delta`](crate::Registry::register_resource_clone_delta)).
    delta: bool,
}

/// A copy of a resource's value, shared between the saves that hold it.
type CopyValue = fn(&(dyn Any + Send + Sync)) -> Arc<dyn Any + Send + Sync>;
/// A copy of a resource's value, to put in its slot.
type BoxValue = fn(&(dyn Any + Send + Sync)) -> Box<dyn Any + Send + Sync>;

fn copy_value<R: Clone + Send + Sync + 'static>(
    value: &(dyn Any + Send + Sync),
) -> Arc<dyn Any + Send + Sync> {
    Arc::new(downcast::<R>(value).clone())
}

fn copy_boxed<R: Clone + Send + Sync + 'static>(
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
    copies: TypeIdMap<ResourceCopy>,
}

/// One saved resource: its type, name, value, change ticks and the
/// written number of the value it copies.
struct SavedValue {
    type_id: TypeId,
    name: &'static str,
    value: Arc<dyn Any + Send + Sync>,
    /// Puts a copy of `value` in a slot: a restore needs no registration
    /// of the type in the registry it restores.
    boxed: BoxValue,
    ticks: ResourceTicks,
    written: u64,
}

/// The copies of the clonable resources, and the names (and types) of
/// the others.
#[derive(Default)]
pub(crate) struct SavedResources {
    values: Vec<SavedValue>,
    pub(crate) unsaved: Vec<&'static str>,
    unsaved_types: Vec<TypeId>,
}

impl std::fmt::Debug for SavedResources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedResources")
            .field(
                "saved",
                &self.values.iter().map(|v| v.name).collect::<Vec<_>>(),
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
    /// From now on, states copy `R` with its `Clone`; with `delta`, a
    /// save shares the previous save's copy of a value nobody took for
    /// writing since.
    pub(crate) fn register_clone<R: Clone + Send + Sync + 'static>(&mut self, delta: bool) {
        let copy = ResourceCopy {
            copy: copy_value::<R>,
            boxed: copy_boxed::<R>,
            delta,
        };
        self.copies.insert(TypeId::of::<R>(), copy);
    }

    /// Copies of the resources whose type has a copy registered, with
    /// their change ticks; the names of the others, sorted. A type
    /// registered for deltas whose value `previous` (an earlier save of
    /// this registry) holds, unwritten since, shares that copy.
    pub(crate) fn save(&self, previous: &SavedResources) -> SavedResources {
        let mut saved = SavedResources::default();
        for (type_id, slot) in self.slots.iter() {
            match self.copies.get(type_id) {
                // A shared registry holds no write guard (see `get`): the
                // read lock is free.
                Some(copy) => {
                    let written = slot.written.number();
                    let unchanged = previous
                        .values
                        .iter()
                        .find(|v| v.type_id == *type_id && v.written == written)
                        .filter(|_| copy.delta);
                    let value = match unchanged {
                        Some(earlier) => Arc::clone(&earlier.value),
                        None => (copy.copy)(&**slot.cell.read()),
                    };
                    saved.values.push(SavedValue {
                        type_id: *type_id,
                        name: slot.name,
                        value,
                        boxed: copy.boxed,
                        ticks: slot.ticks.load(),
                        written,
                    });
                }
                None => {
                    saved.unsaved.push(slot.name);
                    saved.unsaved_types.push(*type_id);
                }
            }
        }
        saved.values.sort_by_key(|v| v.name);
        saved.unsaved.sort_unstable();
        saved
    }

    /// Puts copies of the saved values back (replacing the current
    /// ones, whether or not this registry registered their type), with
    /// their saved change ticks; removes the resources of a clonable type
    /// that `saved` does not know (inserted after the save). Resources of
    /// other types, and those `saved` names unsaved (their clone was
    /// registered after the save), stay, stamped changed at `now` (the
    /// restored clock: their value is not the saved one, so a reader
    /// sees them changed rather than missing a change), and added at
    /// `now` when their added tick is past the restored clock.
    pub(crate) fn restore(&mut self, saved: &SavedResources, now: u32) {
        let copies = &self.copies;
        let in_saved = |type_id: &TypeId| saved.values.iter().any(|v| v.type_id == *type_id);
        // Gone: a clonable type the save did not see at all (inserted
        // after it). Kept: a type the save saw but could not copy (its
        // clone registered only since), as other unsaved resources are.
        self.slots.retain(|type_id, _| {
            !copies.contains_key(type_id)
                || in_saved(type_id)
                || saved.unsaved_types.contains(type_id)
        });
        for (type_id, slot) in self.slots.iter_mut() {
            if !in_saved(type_id) {
                let added = slot.ticks.added.get_mut();
                if now.wrapping_sub(*added) > MAX_CHANGE_AGE {
                    *added = now;
                }
                *slot.ticks.changed.get_mut() = now;
                slot.written.dirty();
            }
        }
        for saved in &saved.values {
            let fresh = (saved.boxed)(&*saved.value);
            // The slot holds the saved value again: its number.
            match self.slots.get_mut(&saved.type_id) {
                Some(slot) => {
                    *slot.cell.get_mut() = fresh;
                    slot.ticks.set(saved.ticks);
                    *slot.written.0.get_mut() = saved.written;
                }
                None => {
                    let slot = ResourceSlot {
                        name: saved.name,
                        ticks: SlotTicks::new(saved.ticks.added.get(), saved.ticks.changed.get()),
                        written: Written(AtomicU64::new(saved.written)),
                        cell: RwLock::new(fresh),
                    };
                    self.slots.insert(saved.type_id, slot);
                }
            }
        }
    }

    /// Clamps every resource's ticks to at most [`MAX_CHANGE_AGE`] old
    /// at `now` (with the tracked pools', every
    /// [`CHECK_INTERVAL`](crate::CHECK_INTERVAL) advances).
    pub(crate) fn clamp(&mut self, now: u32) {
        for slot in self.slots.values_mut() {
            slot.ticks.clamp(now);
        }
    }

    /// Stores `value`, stamped added and changed at `now`; a replace
    /// keeps the old added tick and stamps the changed one.
    pub(crate) fn insert<R: Send + Sync + 'static>(&mut self, value: R, now: u32) -> Option<R> {
        if let Some(old) = self.get_mut::<R>(now) {
            return Some(std::mem::replace(old, value));
        }
        let slot = ResourceSlot {
            name: type_name::<R>(),
            ticks: SlotTicks::new(now, now),
            written: Written::default(),
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

    /// `R`'s ticks.
    pub(crate) fn ticks<R: 'static>(&self) -> Option<ResourceTicks> {
        Some(self.slots.get(&TypeId::of::<R>())?.ticks.load())
    }

    /// Sets `R`'s ticks.
    pub(crate) fn set_ticks<R: 'static>(&mut self, ticks: ResourceTicks) -> Result<(), EcsError> {
        let slot = self
            .slots
            .get_mut(&TypeId::of::<R>())
            .ok_or_else(missing::<R>)?;
        slot.ticks.set(ticks);
        Ok(())
    }

    /// `R`, mutable, marked changed at `now`.
    pub(crate) fn get_mut<R: 'static>(&mut self, now: u32) -> Option<&mut R> {
        let slot = self.slots.get_mut(&TypeId::of::<R>())?;
        *slot.ticks.changed.get_mut() = now;
        slot.written.dirty();
        Some(downcast_mut(&mut **slot.cell.get_mut()))
    }

    /// `R`, mutable, not marked.
    pub(crate) fn get_mut_untracked<R: 'static>(&mut self) -> Option<&mut R> {
        let slot = self.slots.get_mut(&TypeId::of::<R>())?;
        slot.written.dirty();
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

    /// `R` read-locked, with its ticks.
    pub(crate) fn lock_read_with_ticks<R: 'static>(
        &self,
    ) -> Result<(MappedRwLockReadGuard<'_, R>, ResourceTicks), EcsError> {
        let slot = self
            .slots
            .get(&TypeId::of::<R>())
            .ok_or_else(missing::<R>)?;
        let guard = try_read(&slot.cell, || slot.name.into())?;
        let guard = RwLockReadGuard::map(guard, |value| downcast(&**value));
        Ok((guard, slot.ticks.load()))
    }

    /// `R` write-locked, with its ticks to mark; marks nothing.
    pub(crate) fn lock_write_with_ticks<R: 'static>(
        &self,
    ) -> Result<(MappedRwLockWriteGuard<'_, R>, ResourceTicksMut<'_>), EcsError> {
        let slot = self
            .slots
            .get(&TypeId::of::<R>())
            .ok_or_else(missing::<R>)?;
        let guard = try_write(&slot.cell, || slot.name.into())?;
        let guard = RwLockWriteGuard::map(guard, |value| downcast_mut(&mut **value));
        let ticks = ResourceTicksMut {
            slot: &slot.ticks,
            written: &slot.written,
        };
        Ok((guard, ticks))
    }

    /// `R` write-locked, marked changed at `now` (a write lock's holder
    /// may write anything: marked on fetch).
    pub(crate) fn lock_write<R: 'static>(
        &self,
        now: u32,
    ) -> Result<MappedRwLockWriteGuard<'_, R>, EcsError> {
        let (guard, ticks) = self.lock_write_with_ticks::<R>()?;
        ticks.mark(ChangeTick::new(now));
        Ok(guard)
    }
}
