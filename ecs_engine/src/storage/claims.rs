//! Claims: how several views share one typed pool's values.
//!
//! Every view term that reads or writes the values of a typed pool
//! (`&T`, `&mut T`, [`Untracked<T>`](crate::Untracked), and, as opaque
//! claims, [`Ref<T>`](crate::Ref) and the change filters) registers a
//! *claim* on the pool: its access and the [`QueryShape`] of its view.
//! A change filter on a type its own view's query writes takes no claim
//! of its own: the query's write claim is then opaque and covers the
//! pool, and the filter reads a position's tick before the query marks it
//! (`Locked::claim_ticks`).
//! A claim is refused ([`EcsError::BorrowConflict`]) unless, against every
//! claim already held, both read or the two shapes are disjoint (one view
//! requires a component the other excludes, [`QueryShape::is_disjoint`]).
//! A *sole* view registers no claims and takes no read locks: it holds the registry exclusively
//! (`Registry::view_mut` and its kin), so no other view's claims exist,
//! and it names each of its types once, so its own claims cannot meet
//! (`Locked::exclusive_for` checks; a view naming a type twice goes through
//! the lists as any other).
//!
//! Invariants:
//! - every claimant holds the pool's `RwLock` *shared* (a sole view holds
//!   the registry exclusively instead, which excludes every other lock): the set's
//!   structure (dense, sparse, the buffers' addresses) cannot change while
//!   a claim lives, and a plain write lock (`Mut<T>`) cannot be taken;
//! - while a write claim lives, every other live claim on the pool is
//!   disjoint from it: the two views visit disjoint entity sets (the
//!   entities' components cannot change while the registry is borrowed),
//!   so they touch disjoint positions of the value and tick buffers;
//! - claimants reach values and ticks per element through raw pointers
//!   ([`RawParts`] for writers, `Vec::as_ptr` for readers), never through
//!   a slice spanning another claimant's elements, so no reference aliases
//!   an element another thread writes;
//! - the writers' raw pointers were taken through `&mut` (`Vec::as_mut_ptr`)
//!   when the registry was last borrowed exclusively
//!   ([`Locked::exclusive`](super::locked::Locked) for every pool; a typed
//!   view's `Locked::exclusive_for` for the pools its query writes, the
//!   only ones it claims for writing), and are checked against the
//!   buffers' addresses at each claim.
//!
//! Membership-only reads (`With`, `Without`, `Has`, the disabled filter)
//! take the shared lock without a claim: no claimant writes membership.

use std::borrow::Cow;
use std::ops::Deref;

use parking_lot::{MappedRwLockReadGuard, Mutex};

use crate::{Access, EcsError, QueryShape, SparseSet};

/// How a claim's view is shaped: a function making its [`QueryShape`]
/// (`None`: opaque, disjoint from nothing).
pub(crate) type ShapeFn = fn() -> QueryShape;

#[derive(Clone, Copy)]
struct Claim {
    token: u64,
    access: Access,
    shape: Option<ShapeFn>,
}

/// The claims held on one pool.
#[derive(Default)]
pub(crate) struct Claims {
    inner: Mutex<ClaimList>,
}

#[derive(Default)]
struct ClaimList {
    next: u64,
    held: Vec<Claim>,
}

/// `true` when two claims may live together.
fn compatible(a: &Claim, access: Access, shape: Option<ShapeFn>) -> bool {
    if a.access == Access::Read && access == Access::Read {
        return true;
    }
    match (a.shape, shape) {
        (Some(a), Some(b)) => a().is_disjoint(&b()),
        _ => false,
    }
}

impl Claims {
    /// Registers a claim of `access` by a view shaped `shape`.
    ///
    /// # Errors
    ///
    /// [`EcsError::BorrowConflict`] naming `name()` when a held claim is
    /// not compatible.
    pub(crate) fn claim(
        &self,
        access: Access,
        shape: Option<ShapeFn>,
        name: impl FnOnce() -> Cow<'static, str>,
    ) -> Result<ClaimGuard<'_>, EcsError> {
        let mut list = self.inner.lock();
        if let Some(held) = list.held.iter().find(|c| !compatible(c, access, shape)) {
            return Err(EcsError::BorrowConflict {
                name: name(),
                wanted: access,
                held: held.access,
            });
        }
        let token = list.next;
        list.next += 1;
        list.held.push(Claim {
            token,
            access,
            shape,
        });
        Ok(ClaimGuard {
            claims: self,
            token,
        })
    }
}

/// A held claim, released on drop.
pub(crate) struct ClaimGuard<'a> {
    claims: &'a Claims,
    token: u64,
}

impl Drop for ClaimGuard<'_> {
    fn drop(&mut self) {
        let mut list = self.claims.inner.lock();
        if let Some(i) = list.held.iter().position(|c| c.token == self.token) {
            list.held.swap_remove(i);
        }
    }
}

/// A typed pool borrowed shared: under its read lock, or, by a sole view,
/// without it (`Pools::read_shared`).
pub(crate) enum SharedPool<'a, T> {
    /// Read-locked.
    Locked(MappedRwLockReadGuard<'a, SparseSet<T>>),
    /// Borrowed by a sole view, which no lock holder can meet.
    Sole(&'a SparseSet<T>),
}

impl<T> Deref for SharedPool<'_, T> {
    type Target = SparseSet<T>;
    #[inline]
    fn deref(&self) -> &SparseSet<T> {
        match self {
            SharedPool::Locked(guard) => guard,
            SharedPool::Sole(pool) => pool,
        }
    }
}

/// A typed pool borrowed under a claim: shared, and, for a write claim,
/// with the raw pointers its values and ticks are written through.
#[doc(hidden)]
pub struct Claimed<'a, T> {
    pool: SharedPool<'a, T>,
    /// `None` for a sole view's claim, which no other claim can meet.
    _claim: Option<ClaimGuard<'a>>,
}

impl<'a, T> Claimed<'a, T> {
    pub(crate) fn new(pool: SharedPool<'a, T>, claim: Option<ClaimGuard<'a>>) -> Self {
        Claimed {
            pool,
            _claim: claim,
        }
    }
}

impl<T> Deref for Claimed<'_, T> {
    type Target = SparseSet<T>;
    fn deref(&self) -> &SparseSet<T> {
        &self.pool
    }
}

impl<T> std::fmt::Debug for Claimed<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claimed")
            .field("len", &self.pool.len())
            .finish()
    }
}

/// A set's value and changed-tick buffers as raw pointers taken through
/// `&mut` ([`SparseSet::refresh_raw`]), for write claims.
pub(crate) struct RawParts<T> {
    pub(crate) data: *mut T,
    pub(crate) changed: *mut u32,
}

impl<T> RawParts<T> {
    pub(crate) const NULL: RawParts<T> = RawParts {
        data: std::ptr::null_mut(),
        changed: std::ptr::null_mut(),
    };
}

impl<T> std::fmt::Debug for RawParts<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RawParts")
    }
}

// SAFETY: two addresses, dereferenced only by write claims, under the
// invariants of the module docs (disjoint positions per claimant); the set
// holding them is `Send`/`Sync` exactly when `T` is, as `Vec<T>` would be.
unsafe impl<T: Send> Send for RawParts<T> {}
// SAFETY: see the `Send` impl above.
unsafe impl<T: Sync> Sync for RawParts<T> {}
