//! Every [`QueryFilter`]: [`With`], [`Without`], `()` (no condition),
//! [`Or`] (any of its filters holds), filter tuples of up to 8 (all hold),
//! and the change filters [`Added`] and [`Changed`] (relative to the
//! view's `since` tick; see the `change` module docs).
//!
//! Both combinators are written against [`QueryFilter`] alone (each
//! element's borrow, cursor, per-entity test and access), so any filter,
//! including ones added later, composes with them unchanged.

use std::any::TypeId;
use std::marker::PhantomData;

use parking_lot::MappedRwLockReadGuard;

use super::traits::{Driver, QueryFilter, sealed};
use crate::change::ticks::newer;
use crate::storage::claims::Claimed;
use crate::storage::locked::Locked;
use crate::{Access, Component, ComponentAccess, EcsError, Entity, SparseSet};

/// QueryFilter: only entities that have component `C` (its value is not borrowed
/// for the caller, but its pool is read-locked while the view lives). A
/// query with no required term is driven by `C`'s pool.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Entity, Registry, With};
///
/// struct Player;
/// struct Name(&'static str);
///
/// let mut registry = Registry::new();
/// let hero = registry.spawn((Name("hero"), Player));
/// registry.spawn((Name("rock"),));
///
/// let players: Vec<Entity> = registry.view_filtered::<Entity, With<Player>>().iter().collect();
/// assert_eq!(players, [hero]);
/// ```
pub struct With<C>(PhantomData<fn() -> C>);

/// QueryFilter: only entities that do not have component `C` (its pool is
/// read-locked while the view lives).
///
/// # Examples
///
/// ```
/// use ecs_engine::{Registry, Without};
///
/// struct Health(i32);
/// struct Dead;
///
/// let mut registry = Registry::new();
/// registry.spawn((Health(3),));
/// registry.spawn((Health(0), Dead));
///
/// let alive: i32 = registry.view_filtered::<&Health, Without<Dead>>().iter().map(|h| h.0).sum();
/// assert_eq!(alive, 3);
/// ```
pub struct Without<C>(PhantomData<fn() -> C>);

macro_rules! presence_filter {
    ($filter:ident, $keep_if_present:expr, $drives:expr) => {
        impl<C> std::fmt::Debug for $filter<C> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}<{}>", stringify!($filter), std::any::type_name::<C>())
            }
        }

        impl<C: Component> sealed::SealedQueryFilter for $filter<C> {}

        impl<C: Component> QueryFilter for $filter<C> {
            type Borrow<'w> = Option<MappedRwLockReadGuard<'w, SparseSet<C>>>;
            type Cursor<'a> = Option<&'a SparseSet<C>>;

            #[inline]
            fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
                registry.read::<C>()
            }

            #[inline]
            fn cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {
                borrow.as_deref()
            }

            #[inline]
            fn matches(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
                let present = cursor.is_some_and(|p| p.dense_index_hinted(entity, hint).is_some());
                present == $keep_if_present
            }

            #[inline]
            fn driver<'a>(cursor: Self::Cursor<'a>) -> Option<Driver<'a>> {
                $drives.then(|| {
                    cursor.map_or(Driver::EMPTY, |pool| {
                        Driver::of(pool.entities(), pool.lookup_parts().1)
                    })
                })
            }

            #[inline]
            fn access(out: &mut dyn FnMut(ComponentAccess)) {
                out(ComponentAccess::of::<C>(Access::Read));
            }

            fn shape(out: &mut dyn FnMut(TypeId, bool)) {
                out(TypeId::of::<C>(), $keep_if_present);
            }
        }
    };
}

presence_filter!(With, true, true);
presence_filter!(Without, false, false);

impl sealed::SealedQueryFilter for () {}

impl QueryFilter for () {
    type Borrow<'w> = ();
    type Cursor<'a> = ();

    #[inline]
    fn borrow(_: Locked<'_>) -> Result<(), EcsError> {
        Ok(())
    }

    #[inline]
    fn cursor<'a>(_: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {}

    #[inline]
    fn matches(_: (), _: Entity, _: usize) -> bool {
        true
    }

    #[inline]
    fn access(_: &mut dyn FnMut(ComponentAccess)) {}
}

/// QueryFilter: entities for which at least one of the filters of the
/// tuple `T` holds (`Or<(With<A>, With<B>)>`: entities with an `A`, a `B`
/// or both); a tuple of 1 to 8 filters, each any [`QueryFilter`]
/// (nested `Or`s and filter tuples included). Every pool the filters
/// name is read-locked while the view lives. Yields nothing; to know which
/// branch held, add [`Has`](crate::Has) or `Option<&T>` terms to the query.
///
/// An `Or` offers no pool to drive a view: a query with no required term
/// filtered only by an `Or` walks every alive entity.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Entity, Or, Registry, With};
///
/// struct Enemy;
/// struct Boss;
/// struct Health(i32);
///
/// let mut registry = Registry::new();
/// let grunt = registry.spawn((Health(1), Enemy));
/// let boss = registry.spawn((Health(9), Boss));
/// registry.spawn((Health(5),));
///
/// let targets: Vec<Entity> = registry
///     .view_filtered::<(Entity, &Health), Or<(With<Enemy>, With<Boss>)>>()
///     .iter()
///     .map(|(e, _)| e)
///     .collect();
/// assert_eq!(targets, [grunt, boss]);
/// ```
pub struct Or<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for Or<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Or<{}>", std::any::type_name::<T>())
    }
}

// A filter tuple `(F1, ..., Fn)` keeps entities that pass every `Fi`, and
// offers the smallest pool its elements offer to drive a view.
macro_rules! filter_tuple {
    ($($name:ident $index:tt),+) => {
        impl<$($name: QueryFilter),+> sealed::SealedQueryFilter for ($($name,)+) {}

        impl<$($name: QueryFilter),+> QueryFilter for ($($name,)+) {
            type Borrow<'w> = ($($name::Borrow<'w>,)+);
            type Cursor<'a> = ($($name::Cursor<'a>,)+);
            const READS_TICKS: bool = $($name::READS_TICKS)||+;

            #[inline]
            fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
                Ok(($($name::borrow(registry)?,)+))
            }

            #[inline]
            fn cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {
                ($($name::cursor(&borrow.$index),)+)
            }

            #[inline]
            fn matches(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
                $($name::matches(cursor.$index, entity, hint))&&+
            }

            #[inline]
            fn driver<'a>(cursor: Self::Cursor<'a>) -> Option<Driver<'a>> {
                let mut best: Option<Driver<'a>> = None;
                $(
                    if let Some(d) = $name::driver(cursor.$index) {
                        if best.is_none_or(|b| d.entities.len() < b.entities.len()) {
                            best = Some(d);
                        }
                    }
                )+
                best
            }

            #[inline]
            fn access(out: &mut dyn FnMut(ComponentAccess)) {
                $($name::access(out);)+
            }

            fn shape(out: &mut dyn FnMut(TypeId, bool)) {
                $($name::shape(out);)+
            }
        }

        impl<$($name: QueryFilter),+> sealed::SealedQueryFilter for Or<($($name,)+)> {}

        impl<$($name: QueryFilter),+> QueryFilter for Or<($($name,)+)> {
            type Borrow<'w> = ($($name::Borrow<'w>,)+);
            type Cursor<'a> = ($($name::Cursor<'a>,)+);
            const READS_TICKS: bool = $($name::READS_TICKS)||+;

            #[inline]
            fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
                Ok(($($name::borrow(registry)?,)+))
            }

            #[inline]
            fn cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {
                ($($name::cursor(&borrow.$index),)+)
            }

            #[inline]
            fn matches(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
                $($name::matches(cursor.$index, entity, hint))||+
            }

            #[inline]
            fn access(out: &mut dyn FnMut(ComponentAccess)) {
                $($name::access(out);)+
            }
        }
    };
}

filter_tuple!(A 0);
filter_tuple!(A 0, B 1);
filter_tuple!(A 0, B 1, C 2);
filter_tuple!(A 0, B 1, C 2, D 3);
filter_tuple!(A 0, B 1, C 2, D 3, E 4);
filter_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
filter_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
filter_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

// --- change filters ---------------------------------------------------------

/// QueryFilter: only entities whose `T` was added (inserted, spawned with,
/// or re-inserted after a removal) after the view's `since` tick.
///
/// Only a tracked `T` knows its ticks: a schedule tracks every type a
/// system asks about at build; code that uses the registry directly calls
/// [`Registry::track_changes`](crate::Registry::track_changes) first. For an untracked `T` this filter
/// keeps every entity that has a `T` (over-reported, never missed).
///
/// # Borrows
///
/// A read lock on `T`'s pool: a query that writes `T` cannot take this
/// filter (refused like [`With`](crate::With); a schedule refuses such a
/// system at build). To write the components that changed, take
/// [`Mut<T>`](crate::Mut) and test [`ComponentMut::is_changed`](crate::ComponentMut::is_changed).
///
/// # Examples
///
/// ```
/// use ecs_engine::{Added, Entity, Registry};
///
/// struct Name(&'static str);
///
/// let mut registry = Registry::new();
/// registry.track_changes::<Name>();
/// registry.spawn((Name("old"),));
/// let since = registry.change_tick();
/// registry.advance_change_tick();
/// let new = registry.spawn((Name("new"),));
/// let added: Vec<Entity> = registry
///     .view_since::<(Entity, &Name), Added<Name>>(since)
///     .iter()
///     .map(|(e, _)| e)
///     .collect();
/// assert_eq!(added, vec![new]);
/// ```
pub struct Added<T>(PhantomData<fn() -> T>);

/// QueryFilter: only entities whose `T` was added or written (through
/// `&mut T`, `get_mut`, a replacing insert) after the view's `since` tick.
/// As with [`Added`], an untracked `T` keeps every entity that has one
/// ([`Registry::track_changes`](crate::Registry::track_changes)).
///
/// # Borrows
///
/// As [`Added`].
///
/// # Examples
///
/// ```
/// use ecs_engine::{Changed, Entity, Registry};
///
/// struct Health(u32);
///
/// let mut registry = Registry::new();
/// registry.track_changes::<Health>();
/// let a = registry.spawn((Health(1),));
/// let b = registry.spawn((Health(1),));
/// let since = registry.change_tick();
/// registry.advance_change_tick();
/// registry.view_mut::<(Entity, &mut Health)>().each(|(e, h)| if e == b { h.0 = 0 });
/// // `&mut Health` marks every entity it hands out:
/// let changed: Vec<Entity> = registry
///     .view_since::<(Entity, &Health), Changed<Health>>(since)
///     .iter()
///     .map(|(e, _)| e)
///     .collect();
/// assert_eq!(changed, vec![a, b]);
/// ```
pub struct Changed<T>(PhantomData<fn() -> T>);

macro_rules! change_filter {
    ($filter:ident, $field:ident) => {
        impl<T> std::fmt::Debug for $filter<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}<{}>", stringify!($filter), std::any::type_name::<T>())
            }
        }

        impl<T: Component> sealed::SealedQueryFilter for $filter<T> {}

        impl<T: Component> QueryFilter for $filter<T> {
            type Borrow<'w> = (Option<Claimed<'w, T>>, u32);
            type Cursor<'a> = (Option<&'a SparseSet<T>>, u32);
            const READS_TICKS: bool = true;

            #[inline]
            fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
                Ok((registry.claim_ticks::<T>()?, registry.since()))
            }

            #[inline]
            fn cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {
                (borrow.0.as_deref(), borrow.1)
            }

            #[inline]
            fn matches(cursor: Self::Cursor<'_>, entity: Entity, hint: usize) -> bool {
                let (Some(pool), since) = cursor else {
                    return false;
                };
                let Some(i) = pool.dense_index_hinted(entity, hint) else {
                    return false;
                };
                pool.$field(i)
                    .is_none_or(|(tick, now)| newer(tick, since, now))
            }

            #[inline]
            fn access(out: &mut dyn FnMut(ComponentAccess)) {
                out(ComponentAccess::tracked::<T>(Access::Read));
            }

            fn shape(out: &mut dyn FnMut(TypeId, bool)) {
                out(TypeId::of::<T>(), true);
            }
        }
    };
}

change_filter!(Added, added_at);
change_filter!(Changed, changed_at);
