//! Filter combinators and the [`Has`] term: [`Or`] (any of its filters
//! holds), filter tuples of up to 8 (all hold), and `Has<T>`, a `bool`
//! term saying whether the entity has `T` without borrowing its value.
//!
//! Both combinators are written against [`QueryFilter`] alone (each
//! element's borrow, cursor, per-entity test and access), so any filter,
//! including ones added later, composes with them unchanged.

use std::marker::PhantomData;
use std::ops::Range;

use parking_lot::MappedRwLockReadGuard;

use crate::query::{Driver, QueryData, QueryFilter, ReadOnlyQueryData, sealed};
use crate::storage::locked::Locked;
use crate::{Access, Component, ComponentAccess, EcsError, Entity, SparseSet};

/// QueryFilter: entities for which at least one of the filters of the
/// tuple `T` holds (`Or<(With<A>, With<B>)>`: entities with an `A`, a `B`
/// or both); a tuple of 1 to 8 filters, each any [`QueryFilter`]
/// (nested `Or`s and filter tuples included). Every pool the filters
/// name is read-locked while the view lives. Yields nothing; to know which
/// branch held, add [`Has`] or `Option<&T>` terms to the query.
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

            fn access(out: &mut dyn FnMut(ComponentAccess)) {
                $($name::access(out);)+
            }
        }

        impl<$($name: QueryFilter),+> sealed::SealedQueryFilter for Or<($($name,)+)> {}

        impl<$($name: QueryFilter),+> QueryFilter for Or<($($name,)+)> {
            type Borrow<'w> = ($($name::Borrow<'w>,)+);
            type Cursor<'a> = ($($name::Cursor<'a>,)+);

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

/// Query term: `true` when the entity has component `T`, `false` when
/// not; never restricts the entities visited and never hands out the
/// value.
///
/// # Borrows
///
/// `T`'s pool is read-locked while the view lives (membership is read
/// from the pool's sparse index, which its lock guards), so a system
/// query with `Has<T>` declares a *read* of `T`, like [`With<T>`](crate::With):
/// it is ordered against systems that write `T`, and a view that also
/// has `&mut T` is refused (a borrow conflict).
///
/// # Examples
///
/// ```
/// use ecs_engine::{Has, Registry};
///
/// struct Health(i32);
/// struct Shield;
///
/// let mut registry = Registry::new();
/// registry.spawn((Health(10), Shield));
/// registry.spawn((Health(10),));
///
/// registry.view_mut::<(&mut Health, Has<Shield>)>().each(|(health, shielded)| {
///     health.0 -= if shielded { 1 } else { 5 };
/// });
/// let mut left: Vec<i32> = registry.view::<&Health>().iter().map(|h| h.0).collect();
/// left.sort();
/// assert_eq!(left, [5, 9]);
/// ```
pub struct Has<T>(PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for Has<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Has<{}>", std::any::type_name::<T>())
    }
}

/// The block of a [`Has`] term: the pool and the driver's entities of the
/// block, from dense position `start` on.
#[doc(hidden)]
#[derive(Debug)]
pub struct HasBlock<'a, T> {
    pool: Option<&'a SparseSet<T>>,
    entities: &'a [Entity],
    start: usize,
}

impl<T> Clone for HasBlock<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for HasBlock<'_, T> {}

impl<T: Component> sealed::SealedQueryData for Has<T> {}

impl<T: Component> QueryData for Has<T> {
    type Item<'a> = bool;
    type Borrow<'w> = Option<MappedRwLockReadGuard<'w, SparseSet<T>>>;
    type Cursor<'a> = Option<&'a SparseSet<T>>;
    type Block<'a> = HasBlock<'a, T>;
    type Run = ();
    const DRIVES: bool = false;

    #[inline]
    fn contains(_: Self::Cursor<'_>, _: Entity, _: usize) -> bool {
        true
    }

    fn borrow(registry: Locked<'_>) -> Result<Self::Borrow<'_>, EcsError> {
        registry.read::<T>()
    }

    #[inline]
    fn cursor<'a>(borrow: &'a mut Self::Borrow<'_>) -> Self::Cursor<'a> {
        borrow.as_deref()
    }

    #[inline]
    fn driver<'a>(_: Self::Cursor<'a>) -> Option<Driver<'a>> {
        None
    }

    #[inline]
    unsafe fn fetch<'a>(
        cursor: Self::Cursor<'a>,
        entity: Entity,
        hint: usize,
    ) -> Option<Self::Item<'a>> {
        Some(cursor.is_some_and(|pool| pool.dense_index_hinted(entity, hint).is_some()))
    }

    fn run(_: Self::Cursor<'_>, _: Driver<'_>) -> Self::Run {}

    #[inline]
    fn block<'a>(
        cursor: Self::Cursor<'a>,
        _: Self::Run,
        driver: Driver<'a>,
        range: Range<usize>,
    ) -> Option<Self::Block<'a>> {
        Some(HasBlock {
            pool: cursor,
            start: range.start,
            entities: driver.entities.get(range)?,
        })
    }

    #[inline]
    unsafe fn fetch_block<'a>(block: Self::Block<'a>, k: usize) -> Self::Item<'a> {
        // SAFETY: `k` is within the block (the caller's contract).
        let entity = unsafe { *block.entities.get_unchecked(k) };
        block
            .pool
            .is_some_and(|pool| pool.dense_index_hinted(entity, block.start + k).is_some())
    }

    fn access(out: &mut dyn FnMut(ComponentAccess)) {
        out(ComponentAccess::of::<T>(Access::Read));
    }
}

impl<T: Component> sealed::SealedReadOnly for Has<T> {}

impl<T: Component> ReadOnlyQueryData for Has<T> {
    #[inline]
    fn shared_cursor<'a>(borrow: &'a Self::Borrow<'_>) -> Self::Cursor<'a> {
        borrow.as_deref()
    }
}
