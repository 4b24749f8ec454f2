//! Disabled entities: the [`Disabled`] marker, which every view, system
//! query and `par_each` skips unless the query names `Disabled` itself.
//!
//! A disabled entity keeps all its components and stays alive; it is only
//! left out of iteration. The marker is an ordinary component: insert it
//! with [`Registry::disable`] (or `insert(entity, Disabled)`, or a command
//! buffer's `insert`) and remove it with [`Registry::enable`].
//!
//! # How a view skips them
//!
//! A view whose query and filter do not mention `Disabled` read-locks the
//! `Disabled` pool too and skips the entities in it. When the pool is
//! missing or empty (no entity was ever disabled, or all were enabled
//! again) the walk is the same code as before this feature: the check is
//! one branch per view pass, not per entity. A query asks for disabled
//! entities by naming the marker: `Option<&Disabled>` visits every entity,
//! disabled or not; `&Disabled` or [`With<Disabled>`](crate::With) only the
//! disabled ones.
//!
//! Raw views ([`RawView`](crate::RawView), the C API's) always skip
//! disabled entities: their chunks are cut around them.
//!
//! The pool is never write-locked by a view (a query with `&mut Disabled`
//! is refused with [`EcsError::ReadOnlyComponent`]), so parallel systems
//! never conflict over it and the scheduler needs no access entry for it.
//!
//! # Counts
//!
//! [`Registry::len`], [`Registry::count`] and a pool's `len` count disabled
//! entities too; [`View::count`](crate::View::count) and every iteration do
//! not. [`Registry::disabled_len`] gives the number of disabled entities.

use std::any::TypeId;

use crate::storage::claims::SharedPool;

use crate::storage::locked::Locked;
use crate::{Access, EcsError, Entity, QueryData, QueryFilter, Registry, SparseSet};

/// The marker of a disabled entity: views skip entities that have it
/// unless their query names `Disabled` (see [`Registry::disable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Disabled;

/// The `Disabled` pool a view reads to skip disabled entities; `None` when
/// the query names `Disabled` itself or no pool exists.
pub(crate) type DisabledBorrow<'w> = Option<SharedPool<'w, Disabled>>;

/// How a query made of `Q` and `F` treats `Disabled`: `Ok(true)` when it
/// names it (so it sees disabled entities), `Ok(false)` when not.
///
/// # Errors
///
/// [`EcsError::ReadOnlyComponent`] when it asks for `&mut` access to
/// `Disabled`, [`ChildOf`](crate::ChildOf) or [`Children`](crate::Children)
/// (swapping two `&mut ChildOf` would break the hierarchy's lists).
#[inline]
pub(crate) fn names_disabled<Q: QueryData, F: QueryFilter>() -> Result<bool, EcsError> {
    let read_only = [
        TypeId::of::<Disabled>(),
        TypeId::of::<crate::ChildOf>(),
        TypeId::of::<crate::Children>(),
    ];
    let mut named = false;
    let mut written = None;
    let mut check = |c: crate::ComponentAccess| {
        if c.key == TypeId::of::<Disabled>().into() {
            named = true;
        }
        if c.access == Access::Write && read_only.iter().any(|&t| c.key == t.into()) {
            written.get_or_insert(c.name);
        }
    };
    Q::access(&mut check);
    F::access(&mut check);
    match written {
        Some(component) => Err(EcsError::ReadOnlyComponent { component }),
        None => Ok(named),
    }
}

/// Read-locks the `Disabled` pool for a view over `Q` and `F`, unless they
/// name `Disabled`.
#[inline]
pub(crate) fn borrow<Q: QueryData, F: QueryFilter>(
    registry: Locked<'_>,
) -> Result<DisabledBorrow<'_>, EcsError> {
    if names_disabled::<Q, F>()? {
        Ok(None)
    } else {
        registry.read_unwritten::<Disabled>()
    }
}

/// The pool to check in a pass: `None` when nothing is disabled.
#[inline]
pub(crate) fn cursor<'a>(borrow: &'a DisabledBorrow<'_>) -> Option<&'a SparseSet<Disabled>> {
    borrow.as_deref().filter(|pool| !pool.is_empty())
}

impl Registry {
    /// Disables `entity`: every view, system query and `par_each` skips it
    /// from now on, unless the query names [`Disabled`]; its components
    /// stay. Returns `true` when it was enabled before.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{Disabled, Entity, Registry};
    ///
    /// let mut registry = Registry::new();
    /// let a = registry.spawn((1_u32,));
    /// let b = registry.spawn((2_u32,));
    /// assert_eq!(registry.disable(b), Ok(true));
    /// assert_eq!(registry.view::<&u32>().iter().copied().collect::<Vec<_>>(), [1]);
    /// // Naming the marker asks for disabled entities too.
    /// let all: Vec<(Entity, bool)> = registry
    ///     .view::<(Entity, &u32, Option<&Disabled>)>()
    ///     .iter()
    ///     .map(|(e, _, d)| (e, d.is_some()))
    ///     .collect();
    /// assert_eq!(all, [(a, false), (b, true)]);
    /// assert_eq!((registry.len(), registry.disabled_len()), (2, 1));
    /// assert_eq!(registry.enable(b), Ok(true));
    /// assert_eq!(registry.view::<&u32>().iter().count(), 2);
    /// ```
    pub fn disable(&mut self, entity: Entity) -> Result<bool, EcsError> {
        Ok(self.insert(entity, Disabled)?.is_none())
    }

    /// Enables `entity` again (views visit it). Returns `true` when it was
    /// disabled before.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when `entity` is not alive.
    pub fn enable(&mut self, entity: Entity) -> Result<bool, EcsError> {
        self.check_alive(entity)?;
        Ok(self.remove::<Disabled>(entity).is_ok())
    }

    /// `true` when `entity` is alive and disabled.
    pub fn is_disabled(&self, entity: Entity) -> bool {
        self.get::<Disabled>(entity).is_some()
    }

    /// Number of live entities that are disabled ([`len`](Self::len)
    /// counts them too).
    pub fn disabled_len(&self) -> usize {
        self.count::<Disabled>()
    }
}
