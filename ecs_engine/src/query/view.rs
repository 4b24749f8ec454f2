//! Views: the borrowed pools of a [`QueryData`], iterated with a closure
//! ([`View::each`]), an [`Iterator`] ([`View::iter`]) or in parallel
//! ([`View::par_each`], in `par.rs`); [`ExclusiveView`], what a writing
//! view's passes go through, and [`ViewIter`]. Where views are opened
//! (the `Registry` and `RegistryCell` entry points) is `open.rs`.

use std::any::TypeId;
use std::fmt;
use std::ops::{Deref, DerefMut, Range};

use super::filters::{With, Without};
use super::shape::QueryShape;
use super::traits::{Driver, QueryData, QueryFilter, ReadOnlyQueryData};
use crate::disabled::{self, Disabled, DisabledBorrow};
use crate::storage::locked::{Locked, ViewClaims};
use crate::{Access, Component, ComponentKey, EcsError, Entity, SparseSet};

/// The pools of a query `Q`, borrowed (locked) for as long as the view
/// lives, with a filter `F` on the entities visited.
///
/// Created by [`Registry::view`](crate::Registry::view), [`Registry::view_mut`](crate::Registry::view_mut) and
/// [`RegistryCell::view`](crate::RegistryCell::view). Iteration walks the
/// smallest pool among the query's required terms, in its dense order, and
/// visits every entity that has all required components and passes the
/// filter exactly once. A query with no required term (`Entity`,
/// `Option<&T>`, [`Has<T>`](crate::Has)) walks the smallest pool its filter
/// requires (`With<T>`'s), or every alive entity when the filter requires
/// none.
///
/// A read-only view (a [`ReadOnlyQueryData`] query) iterates, counts and
/// reads through `&self` ([`iter`](Self::iter), [`each`](Self::each),
/// [`get`](Self::get), [`count`](Self::count)); a view that writes does the
/// same through `&mut self` (the [`ExclusiveView`] methods it dereferences
/// to), so no two of its passes hand out `&mut T` at once.
///
/// Entities with the [`Disabled`] marker are skipped unless the query or
/// filter names `Disabled` (see [`Registry::disable`](crate::Registry::disable)).
///
/// # Borrows
///
/// A read lock on the pool of every `&T`, `Option<&T>`, [`With`] and
/// [`Without`] type, and a write lock on the pool of every `&mut T` type,
/// released when the view drops; a read lock on the [`Disabled`] pool when
/// the query does not name it.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Entity, Registry};
///
/// #[derive(Debug, PartialEq)]
/// struct Position(f32);
/// struct Velocity(f32);
/// struct Frozen;
///
/// let mut registry = Registry::new();
/// let moving = registry.spawn((Position(0.0), Velocity(2.0)));
/// let frozen = registry.spawn((Position(0.0), Velocity(2.0), Frozen));
///
/// registry
///     .view_mut::<(&mut Position, &Velocity)>()
///     .without::<Frozen>()
///     .each(|(p, v)| p.0 += v.0);
///
/// assert_eq!(registry.get::<Position>(moving), Some(&Position(2.0)));
/// assert_eq!(registry.get::<Position>(frozen), Some(&Position(0.0)));
///
/// let seen: Vec<Entity> = registry.view::<(Entity, &Frozen)>().iter().map(|(e, _)| e).collect();
/// assert_eq!(seen, vec![frozen]);
/// ```
pub struct View<'w, Q: QueryData, F: QueryFilter = ()> {
    registry: Locked<'w>,
    query: Q::Borrow<'w>,
    filter: F::Borrow<'w>,
    disabled: DisabledBorrow<'w>,
    /// The alive entities, which drive a view whose query and filter have
    /// no pool to drive it; `None` otherwise.
    all: Option<Vec<Entity>>,
}

impl<Q: QueryData, F: QueryFilter> fmt::Debug for View<'_, Q, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("View")
            .field("query", &std::any::type_name::<Q>())
            .field("filter", &std::any::type_name::<F>())
            .finish()
    }
}

/// Entities per block, at first: a view checks once per block whether all
/// its pools hold the driver's entities at the same positions, and then
/// joins the block by position, with no lookup. A walk (`each`, or one
/// chunk of a `par_each`) doubles the next block after one joined by
/// position and starts again from `BLOCK` after one that was not, a grown
/// block that is not joined being walked in parts of `BLOCK` (the blocks'
/// checks were about 4% of a walk of 10,000 aligned entities at a fixed
/// 512). [`ViewIter`] keeps blocks of `BLOCK`. Under Miri 64, so that
/// tests small enough for it still grow blocks and walk them in parts.
pub(super) const BLOCK: usize = if cfg!(miri) { 64 } else { 512 };

/// `true` when neither the query nor the filter offers a pool to drive a
/// view, so the alive entities must.
fn needs_all<Q: QueryData, F: QueryFilter>(
    query: &mut Q::Borrow<'_>,
    filter: &F::Borrow<'_>,
) -> bool {
    // A query with a required term always drives: no run-time check.
    !Q::DRIVES && Q::driver(Q::cursor(query)).is_none() && F::driver(F::cursor(filter)).is_none()
}

/// The cursors of one pass: what each fetch reads.
pub(super) struct Pass<'a, Q: QueryData, F: QueryFilter> {
    query: Q::Cursor<'a>,
    filter: F::Cursor<'a>,
    driver: Driver<'a>,
    /// Where the driver's whole array sits in each pool, found once.
    run: Q::Run,
    /// The driver's entities.
    pub(super) entities: &'a [Entity],
    /// The entities to skip; `None` when none is disabled or the query
    /// asks for disabled entities.
    disabled: Option<&'a SparseSet<Disabled>>,
}

impl<Q: QueryData, F: QueryFilter> Clone for Pass<'_, Q, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<Q: QueryData, F: QueryFilter> Copy for Pass<'_, Q, F> {}

impl<'a, Q: QueryData, F: QueryFilter> Pass<'a, Q, F> {
    /// The pass of a query cursor (made by the caller, through a shared or
    /// an exclusive borrow of the query's pools) with the view's other
    /// borrows.
    fn new(
        query: Q::Cursor<'a>,
        filter: &'a F::Borrow<'_>,
        all: Option<&'a [Entity]>,
        disabled: &'a DisabledBorrow<'_>,
    ) -> Self {
        let filter = F::cursor(filter);
        let driver = Q::driver(query)
            .or_else(|| F::driver(filter))
            .unwrap_or_else(|| Driver::unpooled(all.unwrap_or_default()));
        Pass {
            query,
            filter,
            driver,
            run: Q::run(query, driver),
            entities: driver.entities,
            disabled: disabled::cursor(disabled),
        }
    }

    /// Calls `f` for every matching entity at the driver positions `range`
    /// (one block); `true` when every pool held the block's entities in the
    /// driver's order, so that it was joined by position.
    ///
    /// # Safety
    ///
    /// No position of `range` is walked twice in this pass while its items
    /// live (vacuous for a [`ReadOnlyQueryData`] query, whose items are
    /// shared references and copies).
    #[inline]
    unsafe fn walk_block(
        self,
        range: Range<usize>,
        f: &mut impl FnMut(Entity, Q::Item<'a>),
    ) -> bool {
        // Two copies of the loop: with nothing disabled, the check folds
        // away and the walk is the plain join.
        match self.disabled {
            // SAFETY: forwarded contract.
            None => unsafe { self.walk_block_if(range, f, |_| true) },
            // SAFETY: forwarded contract.
            Some(disabled) => unsafe { self.walk_block_if(range, f, |e| !disabled.contains(e)) },
        }
    }

    /// [`walk_block`](Self::walk_block) over the entities for which
    /// `enabled` holds. A block longer than [`BLOCK`] that is not joined by
    /// position as a whole is walked in parts of `BLOCK`, each joined by
    /// position if it can be: one entity out of place then sends `BLOCK`
    /// entities to the lookups, not the whole block.
    ///
    /// # Safety
    ///
    /// As `walk_block`.
    #[inline(always)]
    unsafe fn walk_block_if(
        self,
        range: Range<usize>,
        f: &mut impl FnMut(Entity, Q::Item<'a>),
        enabled: impl Fn(Entity) -> bool,
    ) -> bool {
        let block = Q::block(self.query, self.run, self.driver, range.clone());
        if block.is_none() && range.len() > BLOCK {
            let mut start = range.start;
            while start < range.end {
                let end = (start + BLOCK).min(range.end);
                let part = Q::block(self.query, self.run, self.driver, start..end);
                // SAFETY: the parts of `range` are disjoint; forwarded
                // contract.
                unsafe { self.walk_part(start..end, part, f, &enabled) };
                start = end;
            }
            return false;
        }
        let joined = block.is_some();
        // SAFETY: forwarded contract.
        unsafe { self.walk_part(range, block, f, enabled) };
        joined
    }

    /// Calls `f` for every matching entity of `range` for which `enabled`
    /// holds: by position in `block` when it is `Some` (what
    /// [`QueryData::block`] gave for `range`), else by lookups.
    ///
    /// # Safety
    ///
    /// As `walk_block`.
    #[inline(always)]
    unsafe fn walk_part(
        self,
        range: Range<usize>,
        block: Option<Q::Block<'a>>,
        f: &mut impl FnMut(Entity, Q::Item<'a>),
        enabled: impl Fn(Entity) -> bool,
    ) {
        let start = range.start;
        let entities = &self.entities[range];
        if let Some(block) = block {
            // An item that does not use `entity` drops its load, and with
            // one counter the compiler unrolls the loop (callgrind, a walk
            // of 10,000 aligned (Position, Velocity): 11% fewer
            // instructions than `entities.iter().enumerate()`).
            #[allow(
                clippy::needless_range_loop,
                reason = "one counter, so that the loop unrolls"
            )]
            let mut joined = |block| {
                for k in 0..entities.len() {
                    let entity = entities[k];
                    if F::matches(self.filter, entity, start + k) && enabled(entity) {
                        // SAFETY: the block covers `k`; each position once.
                        f(entity, unsafe { Q::fetch_block(block, k) });
                    }
                }
            };
            // Two copies of the loop: in the second the compiler knows
            // that no term stores change ticks and drops the check each
            // entity's fetch made (peerbench's simple_iter, an untracked
            // `(&mut Position, &Velocity)` walk: the check was one of 11
            // instructions per entity).
            #[allow(
                clippy::if_same_then_else,
                reason = "the branches compile apart: the condition is known in each"
            )]
            if Q::block_marks(&block) {
                joined(block);
            } else {
                joined(block);
            }
        } else {
            for (k, &entity) in entities.iter().enumerate() {
                if F::matches(self.filter, entity, start + k) && enabled(entity) {
                    // SAFETY: the driver holds each entity once, and each
                    // position is walked once.
                    if let Some(item) = unsafe { Q::fetch(self.query, entity, start + k) } {
                        f(entity, item);
                    }
                }
            }
        }
    }

    /// Walks `range`, pushing the `Some` results of `f` onto `out` in
    /// driver order. A function of its own, shared by the serial walk and
    /// every parallel chunk, so that `out` reaches the loop as a `&mut`
    /// argument: the compiler then knows a push cannot change what `f`
    /// captured, and keeps those values in registers instead of reloading
    /// them for every entity (inlined into a parallel chunk with a local
    /// vector, the loop ran about 1.4 times as long per entity).
    ///
    /// # Safety
    ///
    /// As `walk_block`.
    #[inline(never)]
    pub(super) unsafe fn filter_map_into<T>(
        self,
        range: Range<usize>,
        f: &impl Fn(Entity, Q::Item<'a>) -> Option<T>,
        out: &mut Vec<T>,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            self.walk(range, &mut |entity, item| {
                if let Some(value) = f(entity, item) {
                    out.push(value);
                }
            });
        }
    }

    /// [`walk_block`](Self::walk_block) over `range`, block by block.
    ///
    /// # Safety
    ///
    /// As `walk_block`.
    #[inline]
    pub(super) unsafe fn walk(self, range: Range<usize>, f: &mut impl FnMut(Entity, Q::Item<'a>)) {
        let mut start = range.start;
        let mut len = BLOCK;
        while start < range.end {
            let end = (start + len).min(range.end);
            // SAFETY: blocks of `range` are disjoint; forwarded contract.
            let joined = unsafe { self.walk_block(start..end, f) };
            // A block joined by position suggests its neighbours are too
            // (pools filled together stay aligned): the next block is
            // twice as long, so a large aligned join checks a few blocks,
            // not one per `BLOCK` entities.
            len = if joined { len.saturating_mul(2) } else { BLOCK };
            start = end;
        }
    }
}

impl<'w, Q: QueryData, F: QueryFilter> View<'w, Q, F> {
    /// Borrows every pool of `Q` and `F`.
    #[inline]
    pub(crate) fn new(registry: Locked<'w>) -> Result<Self, EcsError> {
        let registry = registry.for_view(
            const {
                &ViewClaims {
                    shape: QueryShape::of::<Q, F>,
                    reads_ticks: F::READS_TICKS,
                    query_writes: writes::<Q>,
                    filter_reads_ticks: reads_ticks::<F>,
                }
            },
        );
        let mut query = Q::borrow(registry)?;
        let filter = F::borrow(registry)?;
        let all =
            needs_all::<Q, F>(&mut query, &filter).then(|| registry.entities().iter().collect());
        Ok(View {
            registry,
            query,
            filter,
            disabled: disabled::borrow::<Q, F>(registry)?,
            all,
        })
    }

    /// Adds a filter; the extra pool is read-locked. Only membership
    /// filters (`With`, `Without`) come here: they take no claim, so a sole
    /// view (`storage/locked.rs`) stays sole.
    fn filtered<G: QueryFilter>(mut self) -> Result<View<'w, Q, (F, G)>, EcsError> {
        let extra = G::borrow(self.registry)?;
        // The extra filter may offer a pool to drive the view.
        let all = if Q::DRIVES || G::driver(G::cursor(&extra)).is_some() {
            None
        } else {
            self.all.take()
        };
        // A filter that names `Disabled` asks for disabled entities.
        let disabled = if disabled::names_disabled::<Entity, G>()? {
            None
        } else {
            self.disabled
        };
        Ok(View {
            registry: self.registry,
            query: self.query,
            filter: (self.filter, extra),
            disabled,
            all,
        })
    }

    /// Restricts the view to entities that also have `C`.
    ///
    /// # Panics
    ///
    /// When `C`'s pool is write-locked (a `Mut<C>` term holds it).
    #[track_caller]
    pub fn with<C: Component>(self) -> View<'w, Q, (F, With<C>)> {
        self.filtered()
            .unwrap_or_else(|e| panic!("View::with: {e}"))
    }

    /// Restricts the view to entities that do not have `C`.
    ///
    /// # Panics
    ///
    /// When `C`'s pool is write-locked (a `Mut<C>` term holds it).
    #[track_caller]
    pub fn without<C: Component>(self) -> View<'w, Q, (F, Without<C>)> {
        self.filtered()
            .unwrap_or_else(|e| panic!("View::without: {e}"))
    }

    pub(super) fn pass(&mut self) -> Pass<'_, Q, F> {
        Pass::new(
            Q::cursor(&mut self.query),
            &self.filter,
            self.all.as_deref(),
            &self.disabled,
        )
    }

    /// `true` when `entity` is alive, passes the filter and is not skipped
    /// as disabled (its required components are checked by the fetch; a
    /// query with none, like `Entity`, relies on the alive check).
    fn admits(&self, entity: Entity) -> bool {
        self.registry.is_alive(entity)
            && F::matches(F::cursor(&self.filter), entity, usize::MAX)
            && !disabled::cursor(&self.disabled).is_some_and(|d| d.contains(entity))
    }

    /// `Ok` when `entity` passes the view's filter and disabled check:
    /// else [`EcsError::NoSuchEntity`] for a handle that is not alive, or
    /// [`EcsError::NotInView`].
    fn admit(&self, entity: Entity) -> Result<(), EcsError> {
        if self.admits(entity) {
            Ok(())
        } else if self.registry.is_alive(entity) {
            Err(not_in_view::<Q, F>(entity))
        } else {
            Err(EcsError::NoSuchEntity { entity })
        }
    }

    /// The items of several distinct entities at once (for a query that
    /// writes: `&mut` to the components of two entities, e.g. to move
    /// health from one to the other), in the order of `entities`.
    ///
    /// # Errors
    ///
    /// [`EcsError::DuplicateEntity`] naming the handle when `entities`
    /// holds one twice; [`EcsError::NoSuchEntity`] for a handle that is not
    /// alive; [`EcsError::NotInView`] for an alive entity the view does not
    /// visit (a required component missing, rejected by the filter, or
    /// disabled). The first problem in `entities` order is reported.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{EcsError, Registry};
    ///
    /// struct Health(i32);
    ///
    /// let mut registry = Registry::new();
    /// let a = registry.spawn((Health(10),));
    /// let b = registry.spawn((Health(3),));
    /// let mut view = registry.view_mut::<&mut Health>();
    /// let [from, to] = view.get_many_mut([a, b]).unwrap();
    /// from.0 -= 4;
    /// to.0 += 4;
    /// assert!(matches!(view.get_many_mut([a, a]), Err(EcsError::DuplicateEntity { .. })));
    /// drop(view);
    /// assert_eq!(registry.get::<Health>(b).unwrap().0, 7);
    /// ```
    pub fn get_many_mut<const N: usize>(
        &mut self,
        entities: [Entity; N],
    ) -> Result<[Q::Item<'_>; N], EcsError> {
        for (second, &entity) in entities.iter().enumerate() {
            if let Some(first) = entities[..second].iter().position(|&e| e == entity) {
                return Err(EcsError::DuplicateEntity {
                    entity,
                    first,
                    second,
                });
            }
        }
        if let Some(&entity) = entities.iter().find(|&&e| !self.registry.is_alive(e)) {
            return Err(EcsError::NoSuchEntity { entity });
        }
        let admitted = entities.map(|entity| self.admits(entity));
        let cursor = Q::cursor(&mut self.query);
        // Every entity is checked before any is fetched, so a refusal
        // marks nothing changed.
        if let Some(k) =
            (0..N).find(|&k| !(admitted[k] && Q::contains(cursor, entities[k], usize::MAX)))
        {
            return Err(not_in_view::<Q, F>(entities[k]));
        }
        let items = std::array::from_fn(|k| {
            // SAFETY: the handles are distinct, so each entity (one dense
            // position per pool) is fetched once, and the items borrow
            // `self` mutably, so no other item of this view lives meanwhile.
            unsafe { Q::fetch(cursor, entities[k], usize::MAX) }
        });
        Ok(items.map(|item| item.expect("every term holds the entity (checked above)")))
    }
}

impl<'w, Q: ReadOnlyQueryData, F: QueryFilter> View<'w, Q, F> {
    fn shared_pass(&self) -> Pass<'_, Q, F> {
        Pass::new(
            Q::shared_cursor(&self.query),
            &self.filter,
            self.all.as_deref(),
            &self.disabled,
        )
    }

    /// Calls `f` with the item of every matching entity (read-only views;
    /// a view that writes has [`ExclusiveView::each`]).
    pub fn each<'a>(&'a self, mut f: impl FnMut(Q::Item<'a>)) {
        self.each_with_entity(|_, item| f(item));
    }

    /// Calls `f` with the handle and the item of every matching entity.
    pub fn each_with_entity<'a>(&'a self, mut f: impl FnMut(Entity, Q::Item<'a>)) {
        let pass = self.shared_pass();
        // SAFETY: read-only items never alias a `&mut`.
        unsafe { pass.walk(0..pass.entities.len(), &mut f) };
    }

    /// The items of every matching entity, as an iterator (read-only
    /// views; a view that writes has [`ExclusiveView::iter`]). Several
    /// iterators may live at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// struct Score(u32);
    ///
    /// let mut registry = Registry::new();
    /// registry.spawn((Score(3),));
    /// registry.spawn((Score(4),));
    /// let view = registry.view::<&Score>(); // no `mut` needed
    /// let best = view.iter().map(|s| s.0).max();
    /// assert_eq!((best, view.count()), (Some(4), 2));
    /// ```
    ///
    /// A view that writes needs an exclusive borrow to iterate:
    ///
    /// ```compile_fail,E0596
    /// let mut registry = ecs_engine::Registry::new();
    /// registry.spawn((1u32,));
    /// let view = registry.view_mut::<&mut u32>();
    /// let first = view.iter().next();
    /// ```
    pub fn iter(&self) -> ViewIter<'_, Q, F> {
        ViewIter::new(self.shared_pass())
    }

    /// The item of `entity`, as bevy's `Query::get`.
    ///
    /// # Errors
    ///
    /// [`EcsError::NoSuchEntity`] when the handle is not alive (never
    /// spawned, despawned, or a stale generation); [`EcsError::NotInView`]
    /// when the entity is alive but the view does not visit it (a
    /// component the query names is missing, the filter rejects it, or it
    /// is disabled).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{EcsError, Registry};
    ///
    /// struct Health(u32);
    ///
    /// let mut registry = Registry::new();
    /// let knight = registry.spawn((Health(7),));
    /// let rock = registry.spawn(());
    /// let gone = registry.spawn((Health(1),));
    /// registry.despawn(gone).unwrap();
    ///
    /// let view = registry.view::<&Health>();
    /// assert_eq!(view.get(knight).map(|h| h.0), Ok(7));
    /// assert!(matches!(view.get(rock), Err(EcsError::NotInView { .. })));
    /// assert_eq!(view.get(gone).err(), Some(EcsError::NoSuchEntity { entity: gone }));
    /// ```
    pub fn get(&self, entity: Entity) -> Result<Q::Item<'_>, EcsError> {
        self.admit(entity)?;
        // SAFETY: read-only items never alias a `&mut`.
        unsafe { Q::fetch(Q::shared_cursor(&self.query), entity, usize::MAX) }
            .ok_or_else(|| not_in_view::<Q, F>(entity))
    }

    /// `true` when `entity` matches the view.
    pub fn contains(&self, entity: Entity) -> bool {
        self.get(entity).is_ok()
    }

    /// Number of entities the view visits (walks the driving pool);
    /// disabled entities are not counted unless the query names
    /// [`Disabled`].
    pub fn count(&self) -> usize {
        self.iter().count()
    }
}

/// The methods of every [`View`] (those that write included) that hand out
/// items through an exclusive borrow, so that no two passes of a view that
/// writes hand out `&mut T` at once. A `View` dereferences to it; a
/// read-only view has the same methods on `&self` (see [`View::iter`]).
#[repr(transparent)]
pub struct ExclusiveView<'w, Q: QueryData, F: QueryFilter = ()>(View<'w, Q, F>);

impl<Q: QueryData, F: QueryFilter> fmt::Debug for ExclusiveView<'_, Q, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<'w, Q: QueryData, F: QueryFilter> Deref for View<'w, Q, F> {
    type Target = ExclusiveView<'w, Q, F>;

    fn deref(&self) -> &Self::Target {
        // SAFETY: `ExclusiveView` is a `repr(transparent)` wrapper of
        // `View<'w, Q, F>`: same layout, and the reference keeps the
        // lifetime and mutability of `self`.
        unsafe { &*std::ptr::from_ref(self).cast::<ExclusiveView<'w, Q, F>>() }
    }
}

impl<Q: QueryData, F: QueryFilter> DerefMut for View<'_, Q, F> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        // SAFETY: as in `deref`, for the exclusive reference.
        unsafe { &mut *std::ptr::from_mut(self).cast::<Self::Target>() }
    }
}

impl<'w, Q: QueryData, F: QueryFilter> ExclusiveView<'w, Q, F> {
    /// Calls `f` with the item of every matching entity.
    pub fn each<'a>(&'a mut self, mut f: impl FnMut(Q::Item<'a>)) {
        self.each_with_entity(|_, item| f(item));
    }

    /// Calls `f` with the handle and the item of every matching entity.
    pub fn each_with_entity<'a>(&'a mut self, mut f: impl FnMut(Entity, Q::Item<'a>)) {
        let pass = self.0.pass();
        // SAFETY: one walk over the whole driver: each position once.
        unsafe { pass.walk(0..pass.entities.len(), &mut f) };
    }

    /// The items of every matching entity, as an iterator.
    pub fn iter(&mut self) -> ViewIter<'_, Q, F> {
        ViewIter::new(self.0.pass())
    }

    /// The item of `entity`, as bevy's `Query::get_mut`.
    ///
    /// # Errors
    ///
    /// As [`View::get`]: [`EcsError::NoSuchEntity`] for a handle that is
    /// not alive, [`EcsError::NotInView`] for an alive entity the view
    /// does not visit. A refusal marks nothing changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::{EcsError, Registry};
    ///
    /// struct Health(u32);
    ///
    /// let mut registry = Registry::new();
    /// let knight = registry.spawn((Health(7),));
    /// let mut view = registry.view_mut::<&mut Health>();
    /// view.get(knight).unwrap().0 += 1;
    /// assert_eq!(view.get(knight).map(|h| h.0), Ok(8));
    /// drop(view);
    /// registry.despawn(knight).unwrap();
    /// let mut view = registry.view_mut::<&mut Health>();
    /// assert_eq!(view.get(knight).err(), Some(EcsError::NoSuchEntity { entity: knight }));
    /// ```
    pub fn get(&mut self, entity: Entity) -> Result<Q::Item<'_>, EcsError> {
        self.get_mut(entity)
    }

    /// [`get`](Self::get), under bevy's name for a query that writes.
    ///
    /// # Errors
    ///
    /// As [`get`](Self::get).
    ///
    /// # Examples
    ///
    /// ```
    /// use ecs_engine::Registry;
    ///
    /// struct Health(u32);
    ///
    /// let mut registry = Registry::new();
    /// let knight = registry.spawn((Health(7),));
    /// registry.view_mut::<&mut Health>().get_mut(knight).unwrap().0 = 9;
    /// assert_eq!(registry.get::<Health>(knight).map(|h| h.0), Some(9));
    /// ```
    pub fn get_mut(&mut self, entity: Entity) -> Result<Q::Item<'_>, EcsError> {
        self.0.admit(entity)?;
        // SAFETY: one fetch from a fresh cursor; the item borrows `self`
        // mutably, so no other item of this view is alive meanwhile.
        unsafe { Q::fetch(Q::cursor(&mut self.0.query), entity, usize::MAX) }
            .ok_or_else(|| not_in_view::<Q, F>(entity))
    }

    /// `true` when `entity` matches the view (marks nothing changed).
    pub fn contains(&mut self, entity: Entity) -> bool {
        self.0.admits(entity) && Q::contains(Q::cursor(&mut self.0.query), entity, usize::MAX)
    }

    /// Number of entities the view visits (walks the driving pool);
    /// disabled entities are not counted unless the query names
    /// [`Disabled`]. Hands out no item, so marks nothing changed.
    pub fn count(&mut self) -> usize {
        let pass = self.0.pass();
        pass.entities
            .iter()
            .enumerate()
            .filter(|&(i, &entity)| {
                F::matches(pass.filter, entity, i)
                    && !pass.disabled.is_some_and(|d| d.contains(entity))
                    && Q::contains(pass.query, entity, i)
            })
            .count()
    }
}

/// The iterator of [`View::iter`]: yields the item of every matching entity,
/// in the driving pool's dense order.
pub struct ViewIter<'a, Q: QueryData, F: QueryFilter> {
    pass: Pass<'a, Q, F>,
    next: usize,
    block_start: usize,
    block_end: usize,
    block: Option<Q::Block<'a>>,
}

impl<Q: QueryData, F: QueryFilter> fmt::Debug for ViewIter<'_, Q, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ViewIter")
            .field("position", &self.next)
            .field("len", &self.pass.entities.len())
            .finish()
    }
}

impl<'a, Q: QueryData, F: QueryFilter> ViewIter<'a, Q, F> {
    fn new(pass: Pass<'a, Q, F>) -> Self {
        ViewIter {
            pass,
            next: 0,
            block_start: 0,
            block_end: 0,
            block: None,
        }
    }
}

impl<'a, Q: QueryData, F: QueryFilter> Iterator for ViewIter<'a, Q, F> {
    type Item = Q::Item<'a>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let pass = self.pass;
        while let Some(&entity) = pass.entities.get(self.next) {
            let i = self.next;
            self.next += 1;
            if i >= self.block_end {
                self.block_start = i;
                self.block_end = (i + BLOCK).min(pass.entities.len());
                self.block = Q::block(pass.query, pass.run, pass.driver, i..self.block_end);
            }
            if !F::matches(pass.filter, entity, i)
                || pass.disabled.is_some_and(|d| d.contains(entity))
            {
                continue;
            }
            // SAFETY: `next` only grows, so each position is fetched once
            // over the iterator's life; `block` covers `block_start..block_end`,
            // which holds `i`.
            let item = unsafe {
                match self.block {
                    Some(block) => Some(Q::fetch_block(block, i - self.block_start)),
                    None => Q::fetch(pass.query, entity, i),
                }
            };
            if item.is_some() {
                return item;
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.pass.entities.len() - self.next))
    }
}

/// Whether `Q` writes the Rust type `type_id` (`Locked::claim_ticks`).
fn writes<Q: QueryData>(type_id: TypeId) -> bool {
    let key = ComponentKey::Type(type_id);
    let mut found = false;
    Q::access(&mut |c| found |= c.access == Access::Write && c.key == key);
    found
}

/// Whether `F` reads the change ticks of the Rust type `type_id`
/// (`Locked::claim_write`).
fn reads_ticks<F: QueryFilter>(type_id: TypeId) -> bool {
    let key = ComponentKey::Type(type_id);
    let mut found = false;
    F::access(&mut |c| found |= c.track.is_some() && c.key == key);
    found
}

/// The error for an alive `entity` that a view of `Q` and `F` does not
/// visit, naming both types.
fn not_in_view<Q, F>(entity: Entity) -> EcsError {
    EcsError::NotInView {
        entity,
        query: std::any::type_name::<(Q, F)>().into(),
    }
}
