//! [`Locked`]: a registry reached only through its locks.
//!
//! The registry's `&self` accessors (`get`, `pool`, `resource`, `Debug`,
//! ...) read pools and resources without taking their locks, which is sound
//! only while no write guard can exist, i.e. while the registry is not
//! borrowed through a [`RegistryCell`](crate::RegistryCell) or a mutable
//! view. Views and cells therefore hold a `Locked`, not a `&Registry`: its
//! field is private to this module, and its methods take a lock for every
//! pool or resource they touch (or read data that no lock guards: the entity
//! allocator and the component infos, which cannot change while the
//! registry is borrowed). So a cell or a view has no path to an unlocked
//! read, by construction.

use std::any::TypeId;
use std::hash::{BuildHasher, BuildHasherDefault};

use parking_lot::{MappedRwLockReadGuard, MappedRwLockWriteGuard};

use crate::storage::claims::{Claimed, ShapeFn, SharedPool};
use crate::storage::pools::LockedBlob;
use crate::storage::type_id_map::TypeIdHasher;
use crate::{
    Access, ChangeTick, Component, ComponentAccess, ComponentId, ComponentInfo, ComponentKey,
    EcsError, EntityAllocator, QueryData, QueryFilter, Registry,
};
use crate::{Entity, SparseSet};

/// A borrow of a registry whose pools and resources are reached through
/// their locks only (see the module docs). Public only because hidden
/// methods of [`QueryData`](crate::QueryData) name it; nothing outside the
/// crate can make or use one.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Locked<'w> {
    registry: &'w Registry,
    /// The tick change filters and terms compare with (`query/filters.rs`,
    /// `query/tracked.rs`), raw as the tick arrays store it.
    since: u32,
    /// What the claims of the view borrowing through this handle need to
    /// know about it (`storage/claims.rs`); `None` outside a view.
    view: Option<&'static ViewClaims>,
    /// `true` for a view that is the registry's only borrower and names
    /// each component type once ([`exclusive_for`](Self::exclusive_for)):
    /// no other claim can meet its claims, so they are not registered.
    sole: bool,
}

/// What a view's claims need to know about the view: one constant per
/// view type (`View::new`), so a [`Locked`] stays three words.
pub(crate) struct ViewClaims {
    /// The view's shape (disjoint views may share a pool).
    pub(crate) shape: ShapeFn,
    /// Whether the view's filter reads change ticks
    /// ([`QueryFilter::READS_TICKS`]).
    pub(crate) reads_ticks: bool,
    /// Whether the view's query writes a Rust type.
    pub(crate) query_writes: fn(TypeId) -> bool,
    /// Whether the view's filter reads a Rust type's change ticks.
    pub(crate) filter_reads_ticks: fn(TypeId) -> bool,
}

impl std::fmt::Debug for Locked<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Locked")
            .field("entities", &self.registry.allocator.len())
            .finish()
    }
}

/// The component types a view names, to find whether each is named once.
/// Keeps a fingerprint of each (a type's [`TypeIdHasher`] hash, a run-time
/// component's index): two types that share one read as repeated, which only sends the view down the
/// checked path. At most [`OnceEach::CAP`] are kept; past that, "not once".
#[derive(Default)]
struct OnceEach {
    prints: [u64; OnceEach::CAP],
    len: usize,
    repeated: bool,
}

impl OnceEach {
    const CAP: usize = 8;

    #[inline]
    fn note(&mut self, key: ComponentKey) {
        let print = match key {
            ComponentKey::Type(type_id) => {
                BuildHasherDefault::<TypeIdHasher>::default().hash_one(type_id)
            }
            ComponentKey::Runtime(id) => id.index() as u64,
        };
        if self.len == Self::CAP || self.prints[..self.len].contains(&print) {
            self.repeated = true;
        } else {
            self.prints[self.len] = print;
            self.len += 1;
        }
    }
}

impl<'w> Locked<'w> {
    /// The locks of an exclusively borrowed registry: any lock may be taken.
    /// Refreshes the writers' raw pointers of every pool
    /// (`storage/claims.rs`), which stay valid while the borrow lasts: no
    /// structure changes meanwhile.
    pub(crate) fn exclusive(registry: &'w mut Registry) -> Self {
        registry.pools.refresh_raw();
        let since = registry.change_tick().wrapping_sub(1).get();
        Locked {
            registry,
            since,
            view: None,
            sole: false,
        }
    }

    /// [`exclusive`](Self::exclusive) for one view of `Q` filtered by `F`,
    /// in one walk of their accesses: starts tracking the types they ask
    /// about ([`Registry::track_changes`], as a schedule does at build, so
    /// a view that asks is never silently answered "everything" for a type
    /// nobody tracked: a type starts with every component stamped now, as
    /// for a system's first run), refreshes the raw pointers of
    /// the pools they write only (the only pools such a view claims for
    /// writing), so a view's cost does not grow with the number of
    /// component types in the registry, and finds whether they name each
    /// type once.
    ///
    /// A view so opened is the registry's only borrower while it lives, so
    /// its claims can only meet each other: when every type is named once
    /// they cannot meet at all, and the view is *sole* (its terms skip the
    /// claim lists, `storage/claims.rs`). A type named twice (`(&A, &A)`,
    /// `(&mut A, With<A>)`, `(&mut A, &mut A)`) goes through the claim
    /// lists, which accept or refuse the pair as for any two views.
    #[inline]
    pub(crate) fn exclusive_for<Q: QueryData, F: QueryFilter>(registry: &'w mut Registry) -> Self {
        let mut seen = OnceEach::default();
        let mut visit = |access: ComponentAccess| {
            if let Some(track) = access.track {
                track(registry);
            }
            seen.note(access.key);
        };
        Q::access(&mut visit);
        F::access(&mut visit);
        // A sole view's write claims refresh their pool's pointers
        // themselves (`Pools::claim`); the others are refreshed here, after
        // every `track` (which may give a pool its tick buffers).
        let sole = !seen.repeated;
        if !sole {
            let mut refresh = |access: ComponentAccess| {
                if access.access == Access::Write {
                    registry.pools.refresh_raw_of(access.key);
                }
            };
            Q::access(&mut refresh);
            F::access(&mut refresh);
        }
        let since = registry.change_tick().wrapping_sub(1).get();
        Locked {
            registry,
            since,
            view: None,
            sole,
        }
    }

    /// The locks of a shared registry, for read-only views
    /// ([`Registry::view`]): the caller takes read locks only (a
    /// [`ReadOnlyQueryData`](crate::ReadOnlyQueryData), sealed, never asks
    /// for a write lock), so the unlocked reads of other `&Registry` users
    /// meet no writer.
    pub(crate) fn shared(registry: &'w Registry) -> Self {
        let since = registry.change_tick().wrapping_sub(1).get();
        Locked {
            registry,
            since,
            view: None,
            sole: false,
        }
    }

    /// The same locks, with change filters comparing with `since`.
    pub(crate) fn with_since(self, since: ChangeTick) -> Self {
        Locked {
            since: since.get(),
            ..self
        }
    }

    /// The same locks, for a view described by `view`: its claims may
    /// share a pool with disjoint views' claims.
    pub(crate) fn for_view(self, view: &'static ViewClaims) -> Self {
        Locked {
            view: Some(view),
            ..self
        }
    }

    /// Claims `T`'s pool for a change filter ([`Added`](crate::Added),
    /// [`Changed`](crate::Changed)), which reads one position's ticks at a
    /// time (`SparseSet::changed_at`), also of entities its view then
    /// rejects: an opaque claim, disjoint from no writer. When the view's
    /// own query writes `T`, the pool is only read-locked: the query's
    /// write claim is then opaque too ([`claim_write`](Self::claim_write)),
    /// so no other view reaches the pool's values or ticks meanwhile, and
    /// the filter reads a position's tick before the query marks it.
    ///
    /// # Errors
    ///
    /// [`EcsError::BorrowConflict`] when a writer holds the pool.
    #[inline]
    pub(crate) fn claim_ticks<T: Component>(self) -> Result<Option<Claimed<'w, T>>, EcsError> {
        if self
            .view
            .is_some_and(|v| (v.query_writes)(TypeId::of::<T>()))
        {
            let pool = self.registry.pools.read_shared::<T>(false)?;
            return Ok(pool.map(|pool| Claimed::new(pool, None)));
        }
        self.claim_opaque::<T>()
    }

    /// Claims `T`'s pool for reading its values, as the view's shape;
    /// `Ok(None)` when `T` has no pool.
    ///
    /// # Errors
    ///
    /// [`EcsError::BorrowConflict`] when a writer that is not disjoint
    /// holds it.
    #[inline]
    pub(crate) fn claim_read<T: Component>(self) -> Result<Option<Claimed<'w, T>>, EcsError> {
        self.registry
            .pools
            .claim::<T>(Access::Read, self.view.map(|v| v.shape), self.sole)
    }

    /// Claims `T`'s pool for writing its values, as the view's shape; or
    /// opaque (disjoint from nothing) when the view's filter reads `T`'s
    /// change ticks ([`claim_ticks`](Self::claim_ticks)).
    ///
    /// # Errors
    ///
    /// [`EcsError::BorrowConflict`] when a claim that is not disjoint, or
    /// a write lock, holds it.
    #[inline]
    pub(crate) fn claim_write<T: Component>(self) -> Result<Option<Claimed<'w, T>>, EcsError> {
        let shape = match self.view {
            Some(v) if v.reads_ticks && (v.filter_reads_ticks)(TypeId::of::<T>()) => None,
            v => v.map(|v| v.shape),
        };
        self.registry
            .pools
            .claim::<T>(Access::Write, shape, self.sole)
    }

    /// Claims `T`'s pool for reading values and ticks through slices
    /// (`Ref<T>`, the change filters): disjoint from no writer.
    ///
    /// # Errors
    ///
    /// [`EcsError::BorrowConflict`] when a writer holds it.
    pub(crate) fn claim_opaque<T: Component>(self) -> Result<Option<Claimed<'w, T>>, EcsError> {
        self.registry
            .pools
            .claim::<T>(Access::Read, None, self.sole)
    }

    /// The tick change filters and terms compare with: by default the one
    /// before the current change tick.
    pub(crate) fn since(self) -> u32 {
        self.since
    }

    /// The registry's change tick (no lock guards it: it only advances
    /// through `&mut Registry`).
    pub(crate) fn change_tick(self) -> ChangeTick {
        self.registry.change_tick()
    }

    /// Read-locks `T`'s pool; `Ok(None)` when `T` has no pool.
    ///
    /// # Errors
    ///
    /// [`EcsError::BorrowConflict`] when it is write-locked.
    pub(crate) fn read<T: Component>(
        self,
    ) -> Result<Option<MappedRwLockReadGuard<'w, SparseSet<T>>>, EcsError> {
        self.registry.pools.read::<T>()
    }

    /// Reads the pool of `T`, a type no view writes (the `Disabled`
    /// marker): read-locked, or unlocked for a sole view, which no lock
    /// holder can meet; `Ok(None)` when `T` has no pool.
    ///
    /// # Errors
    ///
    /// [`EcsError::BorrowConflict`] when it is write-locked.
    #[inline]
    pub(crate) fn read_unwritten<T: Component>(
        self,
    ) -> Result<Option<SharedPool<'w, T>>, EcsError> {
        self.registry.pools.read_shared::<T>(self.sole)
    }

    /// Write-locks `T`'s pool; `Ok(None)` when `T` has no pool.
    ///
    /// # Errors
    ///
    /// [`EcsError::BorrowConflict`] when it is locked.
    pub(crate) fn write<T: Component>(
        self,
    ) -> Result<Option<MappedRwLockWriteGuard<'w, SparseSet<T>>>, EcsError> {
        self.registry.pools.write::<T>()
    }

    /// Locks the pool of run-time component `id` for `access`.
    ///
    /// # Errors
    ///
    /// [`EcsError::UnknownComponent`], [`EcsError::TypedComponent`], or
    /// [`EcsError::BorrowConflict`].
    pub(crate) fn lock_blob(
        self,
        id: ComponentId,
        access: Access,
    ) -> Result<LockedBlob<'w>, EcsError> {
        self.registry.pools.lock_blob(id, access)
    }

    /// Read-locks the resource `R`.
    ///
    /// # Errors
    ///
    /// [`EcsError::MissingResource`] or [`EcsError::BorrowConflict`].
    pub(crate) fn resource<R: Send + Sync + 'static>(
        self,
    ) -> Result<MappedRwLockReadGuard<'w, R>, EcsError> {
        self.registry.resources().lock_read()
    }

    /// Write-locks the resource `R`.
    ///
    /// # Errors
    ///
    /// [`EcsError::MissingResource`] or [`EcsError::BorrowConflict`].
    pub(crate) fn resource_mut<R: Send + Sync + 'static>(
        self,
    ) -> Result<MappedRwLockWriteGuard<'w, R>, EcsError> {
        self.registry
            .resources()
            .lock_write(self.registry.change.now)
    }

    /// Read-locks the resource `R`, with its change ticks.
    ///
    /// # Errors
    ///
    /// [`EcsError::MissingResource`] or [`EcsError::BorrowConflict`].
    pub(crate) fn resource_with_ticks<R: Send + Sync + 'static>(
        self,
    ) -> Result<(MappedRwLockReadGuard<'w, R>, crate::ResourceTicks), EcsError> {
        self.registry.resources().lock_read_with_ticks()
    }

    /// Write-locks the resource `R`, with its change ticks to mark
    /// (marks nothing).
    ///
    /// # Errors
    ///
    /// [`EcsError::MissingResource`] or [`EcsError::BorrowConflict`].
    pub(crate) fn resource_mut_with_ticks<R: Send + Sync + 'static>(
        self,
    ) -> Result<(MappedRwLockWriteGuard<'w, R>, crate::ResourceTicksMut<'w>), EcsError> {
        self.registry.resources().lock_write_with_ticks()
    }

    /// What the registry knows of component `id` (no lock guards it: the
    /// set of component types cannot change while the registry is
    /// borrowed).
    pub(crate) fn component_info(self, id: ComponentId) -> Option<&'w ComponentInfo> {
        self.registry.pools.info(id)
    }

    /// The entity allocator (no lock guards it: entities cannot be spawned
    /// or despawned while the registry is borrowed).
    pub(crate) fn entities(self) -> &'w EntityAllocator {
        &self.registry.allocator
    }

    /// `true` when `entity` is alive.
    pub(crate) fn is_alive(self, entity: Entity) -> bool {
        self.registry.allocator.is_alive(entity)
    }
}
