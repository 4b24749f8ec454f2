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
use crate::disabled::{self, Disabled, DisabledBorrow};
use crate::storage::locked::Locked;
use crate::storage::pools::LockedBlob;
use crate::{Access, ComponentId, EcsError, Entity, SparseSet};

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
    terms: Vec<LockedBlob<'w>>,
    /// The term whose pool drives the walk (the smallest).
    driver: usize,
    /// Per term: where the current chunk starts in its pool.
    starts: Vec<usize>,
    /// Per term: the current chunk's first value.
    columns: Vec<*mut u8>,
    /// Per term: the current entity's value (for `each`).
    row: Vec<*mut u8>,
    /// Per term: bytes from one value to the next.
    strides: Vec<usize>,
    /// The entities to skip.
    disabled: DisabledBorrow<'w>,
    /// Per term: the base of a chunk cut around disabled entities.
    shifted: Vec<*mut u8>,
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
        Ok(RawView {
            strides: locked.iter().map(|t| t.info().stride()).collect(),
            terms: locked,
            driver,
            starts: vec![0; n],
            columns: vec![std::ptr::null_mut(); n],
            row: vec![std::ptr::null_mut(); n],
            disabled: pools.read_unwritten::<Disabled>()?,
            shifted: vec![std::ptr::null_mut(); n],
        })
    }

    /// Number of terms.
    pub fn terms(&self) -> usize {
        self.terms.len()
    }

    /// Per term (in the order the view was made with): the bytes from one
    /// value of its column to the next in a chunk (the component's
    /// [`ComponentInfo::stride`](crate::ComponentInfo::stride)).
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// Calls `f` with every chunk (see [`RawChunk`]), in the driving pool's
    /// dense order. Each entity with all the view's components is in
    /// exactly one chunk. Allocates nothing.
    pub fn each_chunk(&mut self, mut f: impl FnMut(RawChunk<'_>)) {
        let RawView {
            terms,
            driver,
            starts,
            columns,
            strides,
            disabled,
            shifted,
            ..
        } = self;
        let disabled = disabled::cursor(disabled);
        walk(terms, *driver, starts, columns, |entities, columns| {
            enabled_runs(
                disabled,
                entities,
                columns,
                strides,
                shifted,
                |entities, columns| {
                    f(RawChunk { entities, columns });
                },
            );
        });
    }

    /// Calls `f` with every entity that has all the view's components and
    /// one pointer per term (in term order) to its value. Allocates
    /// nothing.
    pub fn each(&mut self, mut f: impl FnMut(Entity, &[*mut u8])) {
        let RawView {
            terms,
            driver,
            starts,
            columns,
            row,
            strides,
            disabled,
            ..
        } = self;
        let disabled = disabled::cursor(disabled);
        walk(terms, *driver, starts, columns, |entities, columns| {
            for (i, &entity) in entities.iter().enumerate() {
                if disabled.is_some_and(|d| d.contains(entity)) {
                    continue;
                }
                for ((value, &base), &stride) in row.iter_mut().zip(columns).zip(strides.iter()) {
                    *value = base.wrapping_add(i * stride);
                }
                f(entity, row);
            }
        });
    }

    /// Number of entities the view visits (walks the driving pool).
    pub fn count(&mut self) -> usize {
        let mut count = 0;
        self.each_chunk(|chunk| count += chunk.len());
        count
    }
}

/// Calls `f` with each maximal run of `entities` (a chunk with per-term
/// bases `columns`) that holds no disabled entity, its bases moved to the
/// run's first value (in `shifted`). With nothing disabled, `f` gets the
/// chunk as it is.
fn enabled_runs(
    disabled: Option<&SparseSet<Disabled>>,
    entities: &[Entity],
    columns: &[*mut u8],
    strides: &[usize],
    shifted: &mut [*mut u8],
    mut f: impl FnMut(&[Entity], &[*mut u8]),
) {
    let Some(disabled) = disabled else {
        f(entities, columns);
        return;
    };
    let mut i = 0;
    while i < entities.len() {
        if disabled.contains(entities[i]) {
            i += 1;
            continue;
        }
        let end = entities[i..]
            .iter()
            .position(|&e| disabled.contains(e))
            .map_or(entities.len(), |n| i + n);
        for ((base, &column), &stride) in shifted.iter_mut().zip(columns).zip(strides) {
            *base = column.wrapping_add(i * stride);
        }
        f(&entities[i..end], shifted);
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
    mut f: impl FnMut(&[Entity], &[*mut u8]),
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
        f(dense, columns);
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
        f(&dense[i..end], columns);
        i = end;
    }
}
