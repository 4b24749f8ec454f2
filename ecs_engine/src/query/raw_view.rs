//! Raw views: joins over run-time components, handing out untyped pointers
//! one entity at a time ([`RawView::each`]) or a chunk of consecutive
//! values at a time ([`RawView::each_chunk`]).
//!
//! Like a typed [`View`](crate::View), a raw view locks every pool it
//! names (a read lock per [`Access::Read`] term, a write lock per
//! [`Access::Write`] term), walks the smallest pool (the *driver*) in dense
//! order, and finds each entity in the other pools, trying the same
//! position first. A *chunk* is a maximal run of the driver's entities that
//! every other pool also holds consecutively, in the same order (usually at
//! the same positions: pools filled together stay aligned). Within a chunk,
//! each term's values are `len` consecutive values of its column, so a
//! caller can loop over plain arrays. Where the pools' orders differ,
//! chunks are one entity long.
//!
//! When the driver's whole array is one run of every other pool (the usual
//! case), the pass is a single chunk; where it sits is cached per pool and
//! revisions (as typed views do), so later passes compare no handles.
//! Otherwise, finding a chunk's end compares handles in blocks that double
//! in length (8, 16, 32, ...), so a pass costs O(entities × terms) whatever
//! the chunk lengths.

use std::fmt;

use super::traits::{Driver, same_run, whole_run_start};
use crate::change::ticks;
use crate::disabled::{self, Disabled, DisabledBorrow};
use crate::storage::locked::Locked;
use crate::storage::pools::LockedBlob;
use crate::{Access, ChangeTick, ComponentId, EcsError, Entity, SparseSet};

/// The pools of a list of run-time components, locked for as long as the
/// view lives, joined on the entities that have all of them.
///
/// Created by [`Registry::raw_view`](crate::Registry::raw_view) and
/// [`RegistryCell::raw_view`](crate::RegistryCell::raw_view). Every
/// pointer it hands out is aligned to its component's alignment and valid
/// while the callback runs (and, in practice, while the view lives).
/// Writing through a pointer is allowed only for terms borrowed with
/// [`Access::Write`]; the pointers of [`Access::Read`] terms are shared with
/// other readers.
///
/// Like typed views, a raw view skips [`Disabled`] entities: a chunk never
/// holds one (a chunk of the pools' join is cut around them).
///
/// # Borrows
///
/// A read lock on the pool of every `Read` term and a write lock on the
/// pool of every `Write` term, and a read lock on the [`Disabled`] pool,
/// released when the view drops.
///
/// # Examples
///
/// ```
/// use std::alloc::Layout;
/// use ecs_engine::{Access, ComponentDescriptor, Registry};
///
/// let mut registry = Registry::new();
/// let f32s = Layout::new::<f32>();
/// let pos = registry.register_runtime(ComponentDescriptor::new("pos", f32s)).unwrap();
/// let vel = registry.register_runtime(ComponentDescriptor::new("vel", f32s)).unwrap();
/// for i in 0..4 {
///     let e = registry.spawn(());
///     let (p, v) = (0.0f32, i as f32);
///     // SAFETY: valid f32 values, plain bytes.
///     unsafe {
///         registry.insert_raw(e, pos, (&raw const p).cast()).unwrap();
///         registry.insert_raw(e, vel, (&raw const v).cast()).unwrap();
///     }
/// }
/// let mut view = registry.raw_view(&[(pos, Access::Write), (vel, Access::Read)]).unwrap();
/// let mut chunks = 0;
/// view.each_chunk(|chunk| {
///     chunks += 1;
///     let (p, v) = (chunk.columns()[0].cast::<f32>(), chunk.columns()[1].cast::<f32>());
///     for i in 0..chunk.len() {
///         // SAFETY: `i < len`; `pos` is written under its write lock.
///         unsafe { *p.add(i) += *v.add(i) };
///     }
/// });
/// assert_eq!(chunks, 1, "the pools hold the same entities in the same order");
/// let mut sum = 0.0;
/// view.each(|_, values| {
///     // SAFETY: `values[0]` points at the visited entity's `f32`.
///     sum += unsafe { *values[0].cast::<f32>() }
/// });
/// assert_eq!(sum, 6.0);
/// ```
pub struct RawView<'w> {
    pools: Locked<'w>,
    terms: Vec<LockedBlob<'w>>,
    /// The term whose pool drives the walk (the smallest).
    driver: usize,
    /// Per term: where the current chunk starts in its pool.
    starts: Vec<usize>,
    /// Per term: the current chunk's first value.
    columns: Vec<*mut u8>,
    /// Per term, then per optional term: the current entity's value (for
    /// `each`; null for an optional term the entity lacks).
    row: Vec<*mut u8>,
    /// Per term: bytes from one value to the next.
    strides: Vec<usize>,
    /// Per term: the changed ticks a visit marks (a tracked write term),
    /// or null.
    marks: Vec<*mut u32>,
    /// The change tick a mark stores.
    now: u32,
    /// The entities to skip.
    disabled: DisabledBorrow<'w>,
    /// Per term: the base of a chunk cut around skipped entities.
    shifted: Vec<*mut u8>,
    /// The change filters, each on one term.
    filters: Vec<TickFilter>,
    /// The optional terms, with the changed ticks a visit marks.
    optional: Vec<(LockedBlob<'w>, *mut u32)>,
    /// The components a visited entity must not have.
    without: Vec<LockedBlob<'w>>,
}

/// An [`added_since`](RawView::added_since) or
/// [`changed_since`](RawView::changed_since) filter: visit an entity only
/// when `ticks[position]` of term `term` is newer than `since`.
#[derive(Debug, Clone, Copy)]
struct TickFilter {
    term: usize,
    ticks: *const u32,
    since: u32,
}

impl fmt::Debug for RawView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.terms.iter().map(|t| t.info().name()).collect();
        f.debug_struct("RawView")
            .field("terms", &names)
            .field("driver", &self.driver)
            .finish()
    }
}

/// One chunk of a [`RawView::each_chunk`] pass: `len` entities and, per
/// term (in the order the view was made with), a pointer to `len`
/// consecutive values, `stride` bytes apart, where `stride` is the term's
/// [`ComponentInfo::stride`](crate::ComponentInfo::stride) (its size, for
/// every C type). Value `i` of each column belongs to `entities()[i]`.
#[derive(Debug, Clone, Copy)]
pub struct RawChunk<'a> {
    entities: &'a [Entity],
    columns: &'a [*mut u8],
}

impl<'a> RawChunk<'a> {
    /// The chunk's entities, in the driving pool's order.
    #[inline]
    pub fn entities(&self) -> &'a [Entity] {
        self.entities
    }

    /// One base pointer per term: the value of `entities()[0]`, followed by
    /// those of the other entities, one stride apart.
    #[inline]
    pub fn columns(&self) -> &'a [*mut u8] {
        self.columns
    }

    /// Number of entities (never 0).
    #[inline]
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Always `false`: a pass hands out no empty chunk.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }
}

/// First block length when extending a chunk.
const FIRST_BLOCK: usize = 8;
/// Longest block compared at once.
const MAX_BLOCK: usize = 1024;

/// Number of equal handles at the start of both slices.
#[inline]
fn common_prefix(a: &[Entity], b: &[Entity]) -> usize {
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    if same_run(a, b) {
        return len;
    }
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl<'w> RawView<'w> {
    /// Locks the pool of every term.
    pub(crate) fn new(
        pools: Locked<'w>,
        terms: &[(ComponentId, Access)],
    ) -> Result<Self, EcsError> {
        if terms.is_empty() {
            return Err(EcsError::NoTerms);
        }
        for (k, &(id, _)) in terms.iter().enumerate() {
            let info = pools
                .component_info(id)
                .ok_or(EcsError::UnknownComponent { id })?;
            if terms[..k].iter().any(|&(other, _)| other == id) {
                return Err(EcsError::DuplicateTerm {
                    component: info.name_cow(),
                });
            }
        }
        let locked = terms
            .iter()
            .map(|&(id, access)| pools.lock_blob(id, access))
            .collect::<Result<Vec<_>, _>>()?;
        let driver = (0..locked.len())
            .min_by_key(|&k| locked[k].pool().len())
            .expect("at least one term");
        let n = locked.len();
        let marks = terms
            .iter()
            .zip(&locked)
            .map(|(&(_, access), term)| write_marks(term, access))
            .collect();
        Ok(RawView {
            pools,
            strides: locked.iter().map(|t| t.info().stride()).collect(),
            terms: locked,
            driver,
            starts: vec![0; n],
            columns: vec![std::ptr::null_mut(); n],
            row: vec![std::ptr::null_mut(); n],
            marks,
            now: pools.change_tick().get(),
            disabled: pools.read_unwritten::<Disabled>()?,
            shifted: vec![std::ptr::null_mut(); n],
            filters: Vec::new(),
            optional: Vec::new(),
            without: Vec::new(),
        })
    }

    /// Number of terms (the joined ones; optional terms not counted).
    pub fn terms(&self) -> usize {
        self.terms.len()
    }

    /// Per term (in the order the view was made with): the bytes from one
    /// value of its column to the next in a chunk (the component's
    /// [`ComponentInfo::stride`](crate::ComponentInfo::stride)).
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// Adds an optional term: [`each`](Self::each) hands out, after the
    /// pointers of the joined terms, one pointer per optional term (in
    /// the order added) to the visited entity's value, or null when it
    /// has none. Optional terms do not change which entities are visited,
    /// and [`each_chunk`](Self::each_chunk) does not hand them out. Locks
    /// the pool as a term does (a write lock for [`Access::Write`]).
    ///
    /// # Errors
    ///
    /// As [`Registry::raw_view`](crate::Registry::raw_view) for the id
    /// (unknown, typed, already a term of the view, joined or optional),
    /// and [`EcsError::BorrowConflict`] when the pool is borrowed in a
    /// conflicting way.
    pub fn optional(&mut self, id: ComponentId, access: Access) -> Result<(), EcsError> {
        let term = self.new_term(id, access)?;
        let marks = write_marks(&term, access);
        self.optional.push((term, marks));
        self.row.push(std::ptr::null_mut());
        Ok(())
    }

    /// Locks the pool of `id`, a component the view does not name yet.
    fn new_term(&self, id: ComponentId, access: Access) -> Result<LockedBlob<'w>, EcsError> {
        let info = self
            .pools
            .component_info(id)
            .ok_or(EcsError::UnknownComponent { id })?;
        let named = |term: &LockedBlob<'_>| std::ptr::eq(term.info(), info);
        let optional = self.optional.iter().map(|(t, _)| t);
        if self
            .terms
            .iter()
            .chain(optional)
            .chain(&self.without)
            .any(named)
        {
            return Err(EcsError::DuplicateTerm {
                component: info.name_cow(),
            });
        }
        self.pools.lock_blob(id, access)
    }

    /// Visits only the entities that have no value of component `id` (as
    /// [`Without`](crate::Without) does for a typed component); read-locks
    /// its pool.
    ///
    /// # Errors
    ///
    /// As [`optional`](Self::optional).
    pub fn without(&mut self, id: ComponentId) -> Result<(), EcsError> {
        let term = self.new_term(id, Access::Read)?;
        self.without.push(term);
        Ok(())
    }

    /// Visits only the entities whose value of term `term` (its position
    /// in the list the view was made with) was added after change tick
    /// `since` (as [`Added`](crate::Added) does for a typed component).
    /// Filters add up: an entity is visited when it passes every one.
    ///
    /// # Errors
    ///
    /// [`EcsError::Untracked`] when the term's component keeps no change
    /// ticks ([`Registry::track_changes_raw`](crate::Registry::track_changes_raw)).
    ///
    /// # Panics
    ///
    /// When `term` is not below [`terms`](Self::terms).
    pub fn added_since(&mut self, term: usize, since: ChangeTick) -> Result<(), EcsError> {
        self.filter(term, since, |(added, _)| added)
    }

    /// As [`added_since`](Self::added_since), for a value added or written
    /// after `since` (as [`Changed`](crate::Changed)).
    ///
    /// # Errors
    ///
    /// As [`added_since`](Self::added_since).
    ///
    /// # Panics
    ///
    /// As [`added_since`](Self::added_since).
    pub fn changed_since(&mut self, term: usize, since: ChangeTick) -> Result<(), EcsError> {
        self.filter(term, since, |(_, changed)| changed)
    }

    fn filter(
        &mut self,
        term: usize,
        since: ChangeTick,
        pick: fn((*const u32, *const u32)) -> *const u32,
    ) -> Result<(), EcsError> {
        let locked = &self.terms[term];
        let ticks = locked
            .pool()
            .tick_ptrs()
            .ok_or_else(|| EcsError::Untracked {
                component: locked.info().name_cow(),
            })?;
        self.filters.push(TickFilter {
            term,
            ticks: pick(ticks),
            since: since.get(),
        });
        Ok(())
    }

    /// Calls `f` with every chunk (see [`RawChunk`]), in the driving pool's
    /// dense order. Each entity the view visits (with all the view's
    /// components, enabled, passing the filters) is in exactly one chunk.
    /// Marks every value of a tracked write term in a chunk changed.
    /// Allocates nothing.
    pub fn each_chunk(&mut self, mut f: impl FnMut(RawChunk<'_>)) {
        let RawView {
            terms,
            driver,
            starts,
            columns,
            strides,
            marks,
            now,
            disabled,
            shifted,
            filters,
            without,
            ..
        } = self;
        let disabled = disabled::cursor(disabled);
        let now = *now;
        walk(
            terms,
            *driver,
            starts,
            columns,
            |entities, columns, starts| {
                let keep =
                    |i: usize| visits(disabled, without, filters, starts, now, entities[i], i);
                let plain = disabled.is_none() && without.is_empty() && filters.is_empty();
                kept_runs(
                    plain,
                    entities,
                    columns,
                    strides,
                    shifted,
                    keep,
                    |run, columns, at| {
                        for (&mark, &start) in marks.iter().zip(starts.iter()) {
                            if mark.is_null() {
                                continue;
                            }
                            for i in at..at + run.len() {
                                // SAFETY: `start + i` is the dense position of a
                                // value of this run in the term's pool.
                                unsafe { ticks::mark(mark, start + i, now) };
                            }
                        }
                        f(RawChunk {
                            entities: run,
                            columns,
                        });
                    },
                );
            },
        );
    }

    /// Calls `f` with every entity the view visits (it has all the view's
    /// components, is enabled, and passes the filters) and one pointer
    /// per term (in term order), then one per optional term (null where
    /// the entity has none), to its values. Marks the visited entity's
    /// values of tracked write terms changed. Allocates nothing.
    pub fn each(&mut self, mut f: impl FnMut(Entity, &[*mut u8])) {
        let RawView {
            terms,
            driver,
            starts,
            columns,
            row,
            strides,
            marks,
            now,
            disabled,
            filters,
            optional,
            without,
            ..
        } = self;
        let disabled = disabled::cursor(disabled);
        let (now, n, driver) = (*now, terms.len(), *driver);
        let plain = disabled.is_none() && without.is_empty() && filters.is_empty();
        let marked = marks.iter().any(|mark| !mark.is_null());
        if plain && !marked && optional.is_empty() {
            // The common case, apart so that its loop stays as tight as
            // one with no filter, mark or optional term can be.
            walk(terms, driver, starts, columns, |entities, columns, _| {
                for (i, &entity) in entities.iter().enumerate() {
                    for ((value, &base), &stride) in row.iter_mut().zip(columns).zip(strides.iter())
                    {
                        *value = base.wrapping_add(i * stride);
                    }
                    f(entity, row);
                }
            });
            return;
        }
        walk(
            terms,
            driver,
            starts,
            columns,
            |entities, columns, starts| {
                for (i, &entity) in entities.iter().enumerate() {
                    if !plain && !visits(disabled, without, filters, starts, now, entity, i) {
                        continue;
                    }
                    for ((value, &base), &stride) in row.iter_mut().zip(columns).zip(strides.iter())
                    {
                        *value = base.wrapping_add(i * stride);
                    }
                    if marked {
                        for (&mark, &start) in marks.iter().zip(starts.iter()) {
                            // SAFETY: `start + i` is the dense position of the
                            // entity's value in the term's pool.
                            unsafe { ticks::mark(mark, start + i, now) };
                        }
                    }
                    for (value, (term, mark)) in row[n..].iter_mut().zip(optional.iter()) {
                        let pool = term.pool();
                        *value = match pool.dense_index_hinted(entity, starts[driver] + i) {
                            Some(at) => {
                                // SAFETY: `at` is the dense position of the
                                // entity's value in the pool.
                                unsafe { ticks::mark(*mark, at, now) };
                                pool.ptr_at(at)
                            }
                            None => std::ptr::null_mut(),
                        };
                    }
                    f(entity, row);
                }
            },
        );
    }

    /// Number of entities the view visits (walks the driving pool). Marks
    /// as [`each_chunk`](Self::each_chunk) does.
    pub fn count(&mut self) -> usize {
        let mut count = 0;
        self.each_chunk(|chunk| count += chunk.len());
        count
    }
}

/// The changed ticks a tracked term's visits mark: only for a write.
fn write_marks(term: &LockedBlob<'_>, access: Access) -> *mut u32 {
    match access {
        Access::Write => term.pool().marks().0,
        Access::Read => std::ptr::null_mut(),
    }
}

/// `true` when the view visits `entity`, row `i` of a chunk whose terms
/// start at `starts`: enabled, without any component of `without`, and
/// passing every filter.
#[inline]
fn visits(
    disabled: Option<&SparseSet<Disabled>>,
    without: &[LockedBlob<'_>],
    filters: &[TickFilter],
    starts: &[usize],
    now: u32,
    entity: Entity,
    i: usize,
) -> bool {
    !disabled.is_some_and(|d| d.contains(entity))
        && !without.iter().any(|term| term.pool().contains(entity))
        && filters.iter().all(|filter| {
            // SAFETY: `starts[term] + i` is the dense position of the
            // entity's value in the filtered term's pool, whose tick
            // buffer is that long and not resized while the view lives.
            let tick = unsafe { *filter.ticks.add(starts[filter.term] + i) };
            ticks::newer(tick, filter.since, now)
        })
}

/// Calls `f` with each maximal run of `entities` (a chunk with per-term
/// bases `columns`) whose rows `keep` accepts, its bases moved to the
/// run's first value (in `shifted`), and the run's first row. When
/// `plain` (nothing to skip), `f` gets the chunk as it is.
fn kept_runs(
    plain: bool,
    entities: &[Entity],
    columns: &[*mut u8],
    strides: &[usize],
    shifted: &mut [*mut u8],
    keep: impl Fn(usize) -> bool,
    mut f: impl FnMut(&[Entity], &[*mut u8], usize),
) {
    if plain {
        f(entities, columns, 0);
        return;
    }
    let mut i = 0;
    while i < entities.len() {
        if !keep(i) {
            i += 1;
            continue;
        }
        let end = (i + 1..entities.len())
            .find(|&j| !keep(j))
            .unwrap_or(entities.len());
        for ((base, &column), &stride) in shifted.iter_mut().zip(columns).zip(strides) {
            *base = column.wrapping_add(i * stride);
        }
        f(&entities[i..end], shifted, i);
        i = end;
    }
}

/// The chunk walk shared by `each` and `each_chunk`: calls `f` with each
/// chunk's entities and per-term base pointers.
fn walk(
    terms: &[LockedBlob<'_>],
    driver: usize,
    starts: &mut [usize],
    columns: &mut [*mut u8],
    mut f: impl FnMut(&[Entity], &[*mut u8], &[usize]),
) {
    let dense = terms[driver].pool().entities();
    let n = dense.len();
    if n == 0 {
        return;
    }
    let whole = Driver::of(dense, terms[driver].pool().lookup_parts().1);
    let mut one_run = true;
    for (k, term) in terms.iter().enumerate() {
        starts[k] = if k == driver {
            0
        } else {
            let pool = term.pool();
            let (sparse, runs) = pool.lookup_parts();
            match whole_run_start(pool.entities(), sparse, runs, whole) {
                Some(start) => start,
                None => {
                    one_run = false;
                    break;
                }
            }
        };
    }
    if one_run {
        for (k, term) in terms.iter().enumerate() {
            columns[k] = term.pool().ptr_at(starts[k]);
        }
        f(dense, columns, starts);
        return;
    }
    let mut i = 0;
    'chunks: while i < n {
        let entity = dense[i];
        for (k, term) in terms.iter().enumerate() {
            starts[k] = if k == driver {
                i
            } else {
                match term.pool().dense_index_hinted(entity, i) {
                    Some(j) => j,
                    None => {
                        i += 1;
                        continue 'chunks;
                    }
                }
            };
        }
        // Entity `i` is in every pool; extend the chunk block by block.
        let mut end = i + 1;
        let mut block = FIRST_BLOCK;
        while end < n {
            let block_end = (end + block).min(n);
            let mut reach = block_end;
            for (k, term) in terms.iter().enumerate() {
                if k == driver {
                    continue;
                }
                let other = term.pool().entities();
                let from = starts[k] + (end - i);
                let theirs = other.get(from..).unwrap_or(&[]);
                reach = reach.min(end + common_prefix(&dense[end..reach], theirs));
            }
            if reach < block_end {
                end = reach;
                break;
            }
            end = block_end;
            block = (block * 2).min(MAX_BLOCK);
        }
        for (k, term) in terms.iter().enumerate() {
            columns[k] = term.pool().ptr_at(starts[k]);
        }
        f(&dense[i..end], columns, starts);
        i = end;
    }
}
