//! Views: the borrowed pools of a [`QueryData`], iterated with a closure
//! ([`View::each`]), an [`Iterator`] ([`View::iter`]) or in parallel
//! ([`View::par_each`]).

use std::fmt;
use std::ops::Range;

use rayon::prelude::*;

use crate::disabled::{self, Disabled, DisabledBorrow};
use crate::locked::Locked;
use crate::query::{Driver, QueryData, QueryFilter, With, Without};
use crate::{Component, EcsError, Entity, SparseSet};

/// The pools of a query `Q`, borrowed (locked) for as long as the view
/// lives, with a filter `F` on the entities visited.
///
/// Created by [`Registry::view`](crate::Registry::view), [`Registry::view_mut`](crate::Registry::view_mut) and
/// [`RegistryCell::view`](crate::RegistryCell::view). Iteration walks the
/// smallest pool among the query's required terms, in its dense order, and
/// visits every entity that has all required components and passes the
/// filter exactly once. Entities with the [`Disabled`] marker are skipped
/// unless the query or filter names `Disabled` (see
/// [`Registry::disable`](crate::Registry::disable)).
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
}

impl<Q: QueryData, F: QueryFilter> fmt::Debug for View<'_, Q, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("View")
            .field("query", &std::any::type_name::<Q>())
            .field("filter", &std::any::type_name::<F>())
            .finish()
    }
}

/// Entities per block: a view checks once per block whether all its pools
/// hold the driver's entities at the same positions, and then joins the
/// block by position, with no lookup.
const BLOCK: usize = 512;

/// The cursors of one pass: what each fetch reads.
struct Pass<'a, Q: QueryData, F: QueryFilter> {
    query: Q::Cursor<'a>,
    filter: F::Cursor<'a>,
    driver: Driver<'a>,
    /// Where the driver's whole array sits in each pool, found once.
    run: Q::Run,
    /// The driver's entities.
    entities: &'a [Entity],
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
    /// Calls `f` for every matching entity at the driver positions `range`
    /// (at most one block).
    ///
    /// # Safety
    ///
    /// No position of `range` is walked twice in this pass while its items
    /// live.
    #[inline]
    unsafe fn walk_block(self, range: Range<usize>, f: &mut impl FnMut(Entity, Q::Item<'a>)) {
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
    /// `enabled` holds.
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
    ) {
        let start = range.start;
        let entities = &self.entities[range.clone()];
        if let Some(block) = Q::block(self.query, self.run, self.driver, range) {
            for (k, &entity) in entities.iter().enumerate() {
                if F::matches(self.filter, entity, start + k) && enabled(entity) {
                    // SAFETY: the block covers `k`; each position once.
                    f(entity, unsafe { Q::fetch_block(block, k) });
                }
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

    /// [`walk_block`](Self::walk_block) over `range`, block by block.
    ///
    /// # Safety
    ///
    /// As `walk_block`.
    #[inline]
    unsafe fn walk(self, range: Range<usize>, f: &mut impl FnMut(Entity, Q::Item<'a>)) {
        let mut start = range.start;
        while start < range.end {
            let end = (start + BLOCK).min(range.end);
            // SAFETY: blocks of `range` are disjoint; forwarded contract.
            unsafe { self.walk_block(start..end, f) };
            start = end;
        }
    }
}

impl<'w, Q: QueryData, F: QueryFilter> View<'w, Q, F> {
    /// Borrows every pool of `Q` and `F`.
    pub(crate) fn new(registry: Locked<'w>) -> Result<Self, EcsError> {
        const {
            assert!(
                Q::DRIVES,
                "a view needs at least one required component (`&T` or `&mut T`)"
            )
        };
        Ok(View {
            registry,
            query: Q::borrow(registry)?,
            filter: F::borrow(registry)?,
            disabled: disabled::borrow::<Q, F>(registry)?,
        })
    }

    /// Adds a filter; the extra pool is read-locked.
    fn filtered<G: QueryFilter>(self) -> Result<View<'w, Q, (F, G)>, EcsError> {
        let extra = G::borrow(self.registry)?;
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
        })
    }

    /// Restricts the view to entities that also have `C`.
    ///
    /// # Panics
    ///
    /// When `C`'s pool is write-locked (the query itself has `&mut C`).
    #[track_caller]
    pub fn with<C: Component>(self) -> View<'w, Q, (F, With<C>)> {
        self.filtered()
            .unwrap_or_else(|e| panic!("View::with: {e}"))
    }

    /// Restricts the view to entities that do not have `C`.
    ///
    /// # Panics
    ///
    /// When `C`'s pool is write-locked (the query itself has `&mut C`).
    #[track_caller]
    pub fn without<C: Component>(self) -> View<'w, Q, (F, Without<C>)> {
        self.filtered()
            .unwrap_or_else(|e| panic!("View::without: {e}"))
    }

    fn pass(&mut self) -> Pass<'_, Q, F> {
        let query = Q::cursor(&mut self.query);
        let driver = Q::driver(query).expect("a driving term, checked at creation");
        Pass {
            query,
            filter: F::cursor(&self.filter),
            driver,
            run: Q::run(query, driver),
            entities: driver.entities,
            disabled: disabled::cursor(&self.disabled),
        }
    }

    /// Calls `f` with the item of every matching entity.
    pub fn each<'a>(&'a mut self, mut f: impl FnMut(Q::Item<'a>)) {
        self.each_with_entity(|_, item| f(item));
    }

    /// Calls `f` with the handle and the item of every matching entity.
    pub fn each_with_entity<'a>(&'a mut self, mut f: impl FnMut(Entity, Q::Item<'a>)) {
        let pass = self.pass();
        // SAFETY: one walk over the whole driver: each position once.
        unsafe { pass.walk(0..pass.entities.len(), &mut f) };
    }

    /// The items of every matching entity, as an iterator.
    pub fn iter(&mut self) -> ViewIter<'_, Q, F> {
        ViewIter {
            pass: self.pass(),
            next: 0,
            block_start: 0,
            block_end: 0,
            block: None,
        }
    }

    /// Calls `f` with the item of every matching entity, in parallel on the
    /// current rayon pool: the driving pool is split into chunks of
    /// consecutive entities, each chunk run by one task.
    pub fn par_each<'a, Fun>(&'a mut self, f: Fun)
    where
        Fun: Fn(Q::Item<'a>) + Send + Sync,
        Q::Cursor<'a>: Send + Sync,
        F::Cursor<'a>: Send + Sync,
    {
        let pass = self.pass();
        let len = pass.entities.len();
        let chunk = (len / (rayon::current_num_threads() * 8)).max(BLOCK);
        (0..len.div_ceil(chunk)).into_par_iter().for_each(|n| {
            let range = n * chunk..((n + 1) * chunk).min(len);
            // SAFETY: chunks are disjoint, so each position is walked once.
            unsafe { pass.walk(range, &mut |_, item| f(item)) };
        });
    }

    /// Calls `f` with the handle and the item of every matching entity, in
    /// parallel on the current rayon pool (chunks as in
    /// [`par_each`](Self::par_each)), and collects the `Some` results in
    /// the driving pool's dense order: the order a serial
    /// [`each_with_entity`](Self::each_with_entity) would see them, whatever
    /// the thread count, so what is built from them stays deterministic.
    ///
    /// # Examples
    ///
    /// ```
    /// # // rayon's pool trips crossbeam-epoch under Miri's Stacked Borrows.
    /// # if cfg!(miri) { return; }
    /// use ecs_engine::{Entity, Registry};
    ///
    /// struct Health(i32);
    ///
    /// let mut registry = Registry::new();
    /// let a = registry.spawn((Health(0),));
    /// let _b = registry.spawn((Health(5),));
    /// let c = registry.spawn((Health(-1),));
    /// let dead: Vec<Entity> = registry
    ///     .view::<&Health>()
    ///     .par_filter_map(|entity, health| (health.0 <= 0).then_some(entity));
    /// assert_eq!(dead, vec![a, c]);
    /// ```
    pub fn par_filter_map<'a, T, Fun>(&'a mut self, f: Fun) -> Vec<T>
    where
        T: Send,
        Fun: Fn(Entity, Q::Item<'a>) -> Option<T> + Send + Sync,
        Q::Cursor<'a>: Send + Sync,
        F::Cursor<'a>: Send + Sync,
    {
        let mut out = Vec::new();
        self.par_filter_map_into(&mut out, f);
        out
    }

    /// As [`par_filter_map`](Self::par_filter_map), appending to `out`
    /// (whose memory a caller can keep from tick to tick). On a pool of
    /// one thread the walk is serial, straight into `out`.
    pub fn par_filter_map_into<'a, T, Fun>(&'a mut self, out: &mut Vec<T>, f: Fun)
    where
        T: Send,
        Fun: Fn(Entity, Q::Item<'a>) -> Option<T> + Send + Sync,
        Q::Cursor<'a>: Send + Sync,
        F::Cursor<'a>: Send + Sync,
    {
        let pass = self.pass();
        let len = pass.entities.len();
        let threads = rayon::current_num_threads();
        if threads == 1 || len <= BLOCK {
            // SAFETY: one walk over the whole driver: each position once.
            unsafe {
                pass.walk(0..len, &mut |entity, item| {
                    if let Some(value) = f(entity, item) {
                        out.push(value);
                    }
                });
            }
            return;
        }
        let chunk = (len / (threads * 8)).max(BLOCK);
        let parts: Vec<Vec<T>> = (0..len.div_ceil(chunk))
            .into_par_iter()
            .map(|n| {
                let range = n * chunk..((n + 1) * chunk).min(len);
                let mut found = Vec::new();
                // SAFETY: chunks are disjoint, so each position is walked once.
                unsafe {
                    pass.walk(range, &mut |entity, item| {
                        if let Some(value) = f(entity, item) {
                            found.push(value);
                        }
                    });
                }
                found
            })
            .collect();
        out.reserve(parts.iter().map(Vec::len).sum());
        for part in parts {
            out.extend(part);
        }
    }

    /// The item of `entity`, if it matches the view.
    pub fn get(&mut self, entity: Entity) -> Option<Q::Item<'_>> {
        if !F::matches(F::cursor(&self.filter), entity, usize::MAX)
            || disabled::cursor(&self.disabled).is_some_and(|d| d.contains(entity))
        {
            return None;
        }
        // SAFETY: one fetch from a fresh cursor; the item borrows `self`
        // mutably, so no other item of this view is alive meanwhile.
        unsafe { Q::fetch(Q::cursor(&mut self.query), entity, usize::MAX) }
    }

    /// `true` when `entity` matches the view.
    pub fn contains(&mut self, entity: Entity) -> bool {
        self.get(entity).is_some()
    }

    /// Number of entities the view visits (walks the driving pool);
    /// disabled entities are not counted unless the query names
    /// [`Disabled`].
    pub fn count(&mut self) -> usize {
        self.iter().count()
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

impl<'a, Q: QueryData, F: QueryFilter> Iterator for ViewIter<'a, Q, F> {
    type Item = Q::Item<'a>;

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
