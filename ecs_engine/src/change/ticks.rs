//! The bottom of change detection: [`ChangeTick`] and [`is_newer`], the
//! constants of the clock, the tick arrays (raw `u32`s) and removal log of
//! one tracked pool ([`ChangeTicks`]), the hooks every structural path of a
//! sparse set calls to keep them in step, and [`mark`], the store `&mut T`
//! terms make on fetch.

use std::collections::VecDeque;

use super::stamps::BlockStamps;
use crate::Entity;

/// Advances of the change tick between two clamps of the old ticks
/// (bevy's `CHECK_TICK_THRESHOLD`).
pub const CHECK_INTERVAL: u32 = 518_400_000;

/// The oldest age a change tick keeps: older ticks are clamped to this age
/// every [`CHECK_INTERVAL`] advances, so no age ever reaches 2^32 (which
/// would wrap and make an old change look new).
pub const MAX_CHANGE_AGE: u32 = u32::MAX - (2 * CHECK_INTERVAL - 1);

/// The age a `since` past the horizon counts as: older than any stored
/// tick (ticks are clamped to [`MAX_CHANGE_AGE`] every [`CHECK_INTERVAL`]
/// advances, so none reaches this age), so such a `since` sees every
/// component as changed. A system's first run compares with this age.
pub const STALE_AGE: u32 = MAX_CHANGE_AGE + CHECK_INTERVAL;

/// Removals a tracked type's log keeps by default; older ones are dropped
/// and counted ([`Removed::missed`](crate::Removed::missed)).
pub const REMOVED_CAPACITY: usize = 1 << 16;

/// A change tick: a reading of a registry's change clock
/// ([`Registry::change_tick`](crate::Registry::change_tick)), which
/// advances by one (wrapping, modulo 2^32) per
/// [`advance_change_tick`](crate::Registry::advance_change_tick). Inserts
/// and writes of tracked components are stamped with one; change filters
/// and terms compare them with a `since` tick.
///
/// Not the frame tick (the scheduler's `Tick`, a `u64` frame number with a
/// fixed step): a schedule advances the change tick several times a frame
/// (before every wave and every apply).
///
/// Ticks wrap, so they have no order of their own: compare them relative
/// to the current tick with [`is_newer_than`](Self::is_newer_than), and
/// measure distances with [`age`](Self::age).
///
/// # Examples
///
/// ```
/// use ecs_engine::ChangeTick;
///
/// let now = ChangeTick::new(5);
/// assert!(ChangeTick::new(5).is_newer_than(ChangeTick::new(4), now));
/// assert!(!ChangeTick::new(4).is_newer_than(ChangeTick::new(4), now));
/// // Across the wrap: tick 1 came 3 ticks after u32::MAX - 1.
/// let since = ChangeTick::new(u32::MAX - 1);
/// assert!(ChangeTick::new(1).is_newer_than(since, ChangeTick::new(2)));
/// assert_eq!(since.age(ChangeTick::new(2)), 4);
/// assert_eq!(since.wrapping_add(3), ChangeTick::new(1));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct ChangeTick(u32);

impl ChangeTick {
    /// The tick with raw value `raw`.
    #[inline]
    pub const fn new(raw: u32) -> Self {
        ChangeTick(raw)
    }

    /// The raw value.
    #[inline]
    pub const fn get(self) -> u32 {
        self.0
    }

    /// The tick `advances` advances after this one (wrapping).
    #[inline]
    #[must_use]
    pub const fn wrapping_add(self, advances: u32) -> Self {
        ChangeTick(self.0.wrapping_add(advances))
    }

    /// The tick `advances` advances before this one (wrapping).
    #[inline]
    #[must_use]
    pub const fn wrapping_sub(self, advances: u32) -> Self {
        ChangeTick(self.0.wrapping_sub(advances))
    }

    /// How many advances ago this tick was, read at `now` (wrapping: a
    /// tick after `now` reads as very old).
    #[inline]
    pub const fn age(self, now: ChangeTick) -> u32 {
        now.0.wrapping_sub(self.0)
    }

    /// `true` when this tick is newer than `since`, both read relative to
    /// `now` (wrapping), with `since` older than [`STALE_AGE`] counted as
    /// that old (older than any stored tick).
    #[inline]
    pub fn is_newer_than(self, since: ChangeTick, now: ChangeTick) -> bool {
        newer(self.0, since.0, now.0)
    }
}

impl std::fmt::Display for ChangeTick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// `true` when `tick` is newer than `since`, both read relative to `now`:
/// [`ChangeTick::is_newer_than`] as a function.
///
/// # Examples
///
/// ```
/// use ecs_engine::{ChangeTick, is_newer};
///
/// let t = ChangeTick::new;
/// assert!(is_newer(t(5), t(4), t(5)));
/// assert!(!is_newer(t(4), t(4), t(5)));
/// // Across the wrap: tick 1 came 3 ticks after u32::MAX - 1.
/// assert!(is_newer(t(1), t(u32::MAX - 1), t(2)));
/// ```
#[inline]
pub fn is_newer(tick: ChangeTick, since: ChangeTick, now: ChangeTick) -> bool {
    tick.is_newer_than(since, now)
}

/// [`ChangeTick::is_newer_than`] on the raw values the tick arrays store
/// (the filters' and terms' hot path).
#[inline]
pub(crate) fn newer(tick: u32, since: u32, now: u32) -> bool {
    let since_age = now.wrapping_sub(since).min(STALE_AGE);
    now.wrapping_sub(tick) < since_age
}

/// The change ticks of one tracked pool, parallel to its components, and
/// its log of removals.
#[derive(Debug, Clone)]
pub(crate) struct ChangeTicks {
    /// The registry's change tick, copied here on every advance.
    pub(crate) now: u32,
    pub(crate) added: Vec<u32>,
    pub(crate) changed: Vec<u32>,
    pub(crate) removed: RemovedLog,
    /// Counts the writes the ticks do not show (see [`UnmarkedWrites`]).
    pub(crate) unmarked: UnmarkedWrites,
    /// The latest tick at which a changed tick may have been stored: set
    /// wherever one is (`ticks_marked`, `ticks_marked_all`) and wherever
    /// a pointer to them is handed out (`SparseSet::changed_ptr`,
    /// `raw_parts`), so a pool whose `written` is not newer than a tick
    /// had no component written since (a delta save skips it whole).
    /// Atomic: a write claim takes the pointer through a shared borrow.
    pub(crate) written: WrittenAt,
    /// The same per block of dense positions (`stamps.rs`), so a delta
    /// save scans the ticks of written blocks only.
    pub(crate) stamps: BlockStamps,
}

/// See [`ChangeTicks::written`].
#[derive(Debug, Default)]
pub(crate) struct WrittenAt(std::sync::atomic::AtomicU32);

impl WrittenAt {
    #[inline]
    pub(crate) fn set(&self, now: u32) {
        self.0.store(now, std::sync::atomic::Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn get(&self) -> u32 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Clone for WrittenAt {
    fn clone(&self) -> Self {
        WrittenAt(std::sync::atomic::AtomicU32::new(self.get()))
    }
}

/// Changes when a tracked pool's values or ticks change without the
/// changed ticks saying which: an `Untracked` term's walk,
/// `get_mut_untracked`, a clamp of old ticks, a restore from a copy, a new
/// removal-log capacity. While it keeps its value, the components whose
/// changed tick is older than a moment are the ones not written since
/// that moment, which lets an in-memory state copy only the newer ones
/// (`storage/pool_copy.rs`). Each change takes a number no pool of the
/// process had before, so a value seen once is never seen again after a
/// change. Atomic: an `Untracked` walk counts itself through a shared
/// claim of the pool.
#[derive(Debug)]
pub(crate) struct UnmarkedWrites(std::sync::atomic::AtomicU64);

/// The last number an [`UnmarkedWrites`] took.
static UNMARKED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Default for UnmarkedWrites {
    fn default() -> Self {
        let fresh = UNMARKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        UnmarkedWrites(std::sync::atomic::AtomicU64::new(fresh))
    }
}

impl UnmarkedWrites {
    /// Notes an unmarked write (or a batch of them): a fresh number.
    #[inline]
    pub(crate) fn count(&self) {
        let fresh = UNMARKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        self.0.store(fresh, std::sync::atomic::Ordering::Relaxed);
    }

    /// The count.
    #[inline]
    pub(crate) fn get(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Clone for UnmarkedWrites {
    fn clone(&self) -> Self {
        UnmarkedWrites(std::sync::atomic::AtomicU64::new(self.get()))
    }
}

/// The entities that lost a component, in order, with sequence numbers:
/// `entries[k]` has number `first + k`. Bounded; the oldest entries go
/// first, counted by the readers that missed them.
#[derive(Debug, Clone)]
pub(crate) struct RemovedLog {
    pub(crate) entries: VecDeque<Entity>,
    pub(crate) first: u64,
    pub(crate) capacity: usize,
}

impl RemovedLog {
    pub(crate) fn push(&mut self, entity: Entity) {
        if self.capacity == 0 {
            self.first += 1;
            return;
        }
        if self.entries.len() == self.capacity {
            self.entries.pop_front();
            self.first += 1;
        }
        self.entries.push_back(entity);
    }

    pub(crate) fn end(&self) -> u64 {
        self.first + self.entries.len() as u64
    }

    /// Brings this log, a copy of `src` made earlier, up to `src`: drops
    /// the entries `src` trimmed since and appends the ones it logged.
    /// Returns what undoes that, or `None`, changing nothing, when `src`
    /// is not this log later (another capacity, or numbers that went
    /// back).
    pub(crate) fn follow(&mut self, src: &RemovedLog) -> Option<LogUndo> {
        if src.capacity != self.capacity || src.first < self.first || src.end() < self.end() {
            return None;
        }
        let first = self.first;
        let kept_from = src.first.min(self.end());
        let trimmed: Vec<Entity> = self.entries.drain(..(kept_from - first) as usize).collect();
        // Empty now when `src` trimmed past all of it: it goes on where
        // `src` starts.
        self.first = if self.entries.is_empty() {
            src.first
        } else {
            kept_from
        };
        let from = (self.end() - src.first) as usize;
        self.entries.extend(src.entries.range(from..).copied());
        Some(LogUndo {
            first,
            moved_on: self.first != first,
            trimmed,
            appended: src.entries.len() - from,
        })
    }

    /// Undoes a [`follow`](Self::follow).
    pub(crate) fn unfollow(&mut self, undo: LogUndo) {
        self.entries.truncate(self.entries.len() - undo.appended);
        for &entity in undo.trimmed.iter().rev() {
            self.entries.push_front(entity);
        }
        self.first = undo.first;
    }
}

/// What [`RemovedLog::follow`] changed: the log's first number before
/// (and whether it changed), the entries it dropped from the front
/// (oldest first) and how many it appended.
#[derive(Debug)]
pub(crate) struct LogUndo {
    first: u64,
    moved_on: bool,
    trimmed: Vec<Entity>,
    appended: usize,
}

impl LogUndo {
    /// `true` when the follow changed nothing.
    pub(crate) fn is_empty(&self) -> bool {
        !self.moved_on && self.appended == 0
    }

    /// Heap bytes the undo holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.trimmed.capacity() * std::mem::size_of::<Entity>()
    }
}

impl ChangeTicks {
    /// Makes `self` equal to `src`, reusing `self`'s allocations (a
    /// derived `clone_from` would allocate anew).
    pub(crate) fn copy_from(&mut self, src: &ChangeTicks) {
        self.now = src.now;
        self.added.clone_from(&src.added);
        self.changed.clone_from(&src.changed);
        // Slice by slice: `VecDeque::clone_from` goes entry by entry.
        self.removed.entries.clear();
        let (front, back) = src.removed.entries.as_slices();
        self.removed.entries.extend(front);
        self.removed.entries.extend(back);
        self.removed.first = src.removed.first;
        self.removed.capacity = src.removed.capacity;
        self.written.set(src.written.get());
        self.stamps.copy_from(&src.stamps);
    }

    pub(crate) fn new(len: usize, now: u32) -> Self {
        ChangeTicks {
            now,
            added: vec![now; len],
            changed: vec![now; len],
            removed: RemovedLog {
                entries: VecDeque::new(),
                first: 0,
                capacity: REMOVED_CAPACITY,
            },
            unmarked: UnmarkedWrites::default(),
            written: WrittenAt(std::sync::atomic::AtomicU32::new(now)),
            stamps: BlockStamps::new(len, now),
        }
    }

    /// The registry's clock was set to `now` other than by an advance (a
    /// restore to an older frame, a load): the marks that say when the
    /// pool was last written (`written`, the block stamps) may now lie in
    /// the clock's future, where they would read as ancient and hide the
    /// ticks they stand for. Every mark older than [`STALE_AGE`] at `now`
    /// (so one the clock has not reached, no stored mark being that old)
    /// becomes `now`, and the pool counts an unmarked write (no copy
    /// made before takes a delta from it).
    pub(crate) fn clock_moved(&mut self, now: u32) {
        self.now = now;
        let ahead = |mark: u32| now.wrapping_sub(mark) > STALE_AGE;
        if ahead(self.written.get()) {
            self.written.set(now);
        }
        self.stamps.pull_back(now, ahead);
        self.unmarked.count();
    }

    /// Clamps every tick older than [`MAX_CHANGE_AGE`] to that age.
    pub(crate) fn clamp(&mut self) {
        self.unmarked.count();
        let now = self.now;
        let oldest = now.wrapping_sub(MAX_CHANGE_AGE);
        for tick in self.added.iter_mut().chain(self.changed.iter_mut()) {
            if now.wrapping_sub(*tick) > MAX_CHANGE_AGE {
                *tick = oldest;
            }
        }
        self.stamps.clamp(now);
    }

    #[inline]
    pub(crate) fn added_at(&self, i: usize) -> u32 {
        self.added[i]
    }

    #[inline]
    pub(crate) fn changed_at(&self, i: usize) -> u32 {
        self.changed[i]
    }
}

// --- hooks called by `SparseSet` on every structural path -----------------

/// A component was appended at the end of the pool.
#[inline]
pub(crate) fn ticks_pushed(changes: &mut Option<Box<ChangeTicks>>) {
    if let Some(c) = changes {
        c.added.push(c.now);
        c.changed.push(c.now);
        c.stamps.fit(c.changed.len(), c.now);
        c.stamps.stamp(c.changed.len() - 1, c.now);
    }
}

/// `count` components were appended at the end of the pool.
#[inline]
pub(crate) fn ticks_pushed_n(changes: &mut Option<Box<ChangeTicks>>, count: usize) {
    if let Some(c) = changes {
        let now = c.now;
        let old = c.changed.len();
        c.added.resize(old + count, now);
        c.changed.resize(old + count, now);
        c.stamps.fit(c.changed.len(), now);
        c.stamps.stamp_range(old..old + count, now);
    }
}

/// The components at dense positions `a` and `b` traded places.
#[inline]
pub(crate) fn ticks_swapped(changes: &mut Option<Box<ChangeTicks>>, a: usize, b: usize) {
    if let Some(c) = changes {
        c.added.swap(a, b);
        c.changed.swap(a, b);
        c.stamps.stamp(a, c.now);
        c.stamps.stamp(b, c.now);
    }
}

/// The component at dense position `i` was written.
#[inline]
pub(crate) fn ticks_marked(changes: &mut Option<Box<ChangeTicks>>, i: usize) {
    if let Some(c) = changes {
        c.changed[i] = c.now;
        c.written.set(c.now);
        c.stamps.stamp(i, c.now);
    }
}

/// Every component was (or may have been) written.
#[inline]
pub(crate) fn ticks_marked_all(changes: &mut Option<Box<ChangeTicks>>) {
    if let Some(c) = changes {
        let now = c.now;
        c.changed.fill(now);
        c.written.set(now);
        c.stamps.fill(now);
    }
}

/// `entity`'s component at dense position `i` was swap-removed.
#[inline]
pub(crate) fn ticks_swap_removed(changes: &mut Option<Box<ChangeTicks>>, i: usize, entity: Entity) {
    if let Some(c) = changes {
        c.added.swap_remove(i);
        c.changed.swap_remove(i);
        c.removed.push(entity);
        c.stamps.stamp(i, c.now);
        c.stamps.fit(c.changed.len(), c.now);
    }
}

/// Every component of `dense` is about to be removed.
pub(crate) fn ticks_cleared(changes: &mut Option<Box<ChangeTicks>>, dense: &[Entity]) {
    if let Some(c) = changes {
        c.added.clear();
        c.changed.clear();
        c.stamps.fit(0, c.now);
        for &entity in dense {
            c.removed.push(entity);
        }
    }
}

/// Heap bytes of the tick arrays and the removal log.
pub(crate) fn ticks_heap_bytes(changes: &Option<Box<ChangeTicks>>) -> usize {
    changes.as_ref().map_or(0, |c| {
        std::mem::size_of::<ChangeTicks>()
            + (c.added.capacity() + c.changed.capacity()) * 4
            + c.removed.entries.capacity() * std::mem::size_of::<Entity>()
            + c.stamps.heap_bytes()
    })
}

/// Marks position `i` of a changed-tick array with `now`, when there is one.
///
/// # Safety
///
/// `ticks` is null or points to an array longer than `i` that nobody else
/// reads or writes at `i` meanwhile.
#[inline(always)]
pub(crate) unsafe fn mark(ticks: *mut u32, i: usize, now: u32) {
    if !ticks.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *ticks.add(i) = now };
    }
}

/// What the writes of a view term into one pool mark: its changed
/// ticks (null when the pool keeps none), the tick to store, its count
/// of unmarked writes (null when untracked) and its block stamps (empty
/// when untracked).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TickParts<'a> {
    pub(crate) ticks: *mut u32,
    pub(crate) now: u32,
    pub(crate) unmarked: *const UnmarkedWrites,
    pub(crate) stamps: &'a BlockStamps,
}

impl TickParts<'_> {
    /// The parts of an untracked pool: nothing to mark.
    pub(crate) const UNTRACKED: TickParts<'static> = TickParts {
        ticks: std::ptr::null_mut(),
        now: 0,
        unmarked: std::ptr::null(),
        stamps: &super::stamps::NO_STAMPS,
    };
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct TickSlices<'a> {
    pub(crate) added: &'a [u32],
    pub(crate) changed: &'a [u32],
    pub(crate) now: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU32;

    fn log(capacity: usize) -> RemovedLog {
        RemovedLog {
            entries: VecDeque::new(),
            first: 0,
            capacity,
        }
    }

    fn push_n(log: &mut RemovedLog, from: u32, n: u32) {
        for i in from..from + n {
            log.push(Entity::new(i, NonZeroU32::MIN));
        }
    }

    fn parts(log: &RemovedLog) -> (Vec<Entity>, u64) {
        (log.entries.iter().copied().collect(), log.first)
    }

    #[test]
    fn a_log_follows_its_later_self_and_unfollows_back() {
        for capacity in 0..5 {
            for before in 0..8 {
                for after in 0..8 {
                    let mut src = log(capacity);
                    push_n(&mut src, 0, before);
                    let mut copy = src.clone();
                    let old = parts(&copy);
                    push_n(&mut src, before, after);
                    let undo = copy.follow(&src).expect("the same log later");
                    assert_eq!(parts(&copy), parts(&src), "{capacity} {before} {after}");
                    assert_eq!(undo.is_empty(), old == parts(&src));
                    copy.unfollow(undo);
                    assert_eq!(parts(&copy), old, "{capacity} {before} {after}");
                }
            }
        }
    }

    #[test]
    fn a_log_does_not_follow_another_capacity_or_an_older_self() {
        let mut older = log(4);
        push_n(&mut older, 0, 6);
        let mut newer = older.clone();
        push_n(&mut newer, 6, 2);
        let untouched = parts(&newer);
        assert!(newer.follow(&older).is_none());
        assert_eq!(parts(&newer), untouched);
        let mut other = log(3);
        push_n(&mut other, 0, 6);
        assert!(newer.follow(&other).is_none());
        assert_eq!(parts(&newer), untouched);
    }
}
