//! The parallel passes of a [`View`]: [`par_each`](View::par_each),
//! [`par_each_init`](View::par_each_init), [`par_fold`](View::par_fold),
//! [`par_filter_map`](View::par_filter_map) and
//! [`par_filter_map_into`](View::par_filter_map_into), which split the
//! driving pool into chunks of consecutive entities that the threads of
//! the current rayon pool take one at a time
//! ([`par_for_each`](crate::par_for_each)), and how long those chunks are; and the serial scope
//! ([`run_serial`]) in which they all walk on the calling thread.

use std::cell::Cell;

use super::traits::{QueryData, QueryFilter};
use super::view::{BLOCK, View};
use crate::Entity;

/// The fewest driver positions a parallel task walks.
const MIN_CHUNK: usize = 64;

/// The fewest driver positions a task gets when the walk is long enough
/// to give every thread that many. A task costs about a microsecond to
/// hand to another thread, and the thief then pulls the entities' data
/// from the cache of the thread that last wrote it: cut into 64-entity
/// tasks, a 600-entity `par_each` ran slower on 2 threads than on 1 (the
/// harness's default shoot'em up).
const SMALL_TASK: usize = 256;

/// Driver positions per task of a parallel walk over `len` positions on
/// `threads` threads: about 8 tasks per thread, for balance (a thread
/// that finds its data in its own cache finishes more of them), but no
/// task shorter than [`SMALL_TASK`] while each thread could still get one
/// that long, nor shorter than [`MIN_CHUNK`]. 100,000 entities on 2
/// threads make 16 tasks; 4,000 on 2 make 16 (of 250 to 256); 600 on 2
/// make 3; 1,000 on 16 make 16 (of 64); 64 or fewer make one, walked on
/// the calling thread.
///
/// The threads take the chunks one at a time ([`par_for_each`](crate::par_for_each)):
/// left to rayon's adaptive splitting, the list of chunks is cut only
/// about `log2(threads) + 1` times unless a thief comes, so a thread that
/// is busy elsewhere when the walk starts (the other system of a wave)
/// later finds only halves already being run, and on 2 threads the
/// `particles` respawn walk ran on one thread while the other sat idle.
pub(crate) fn chunk_len(len: usize, threads: usize) -> usize {
    let threads = threads.max(1);
    let balanced = len.div_ceil(threads * 8);
    let per_thread = len.div_ceil(threads);
    balanced.max(SMALL_TASK.min(per_thread)).max(MIN_CHUNK)
}

thread_local! {
    /// Set while [`run_serial`] runs on this thread.
    static SERIAL: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with every parallel pass of a [`View`] (and the parallel
/// despawn of a [`Registry`](crate::Registry)) walking serially on this
/// thread, the chunks in order, as on a one-thread pool: nothing is sent
/// to a rayon pool, the global one included. A schedule of one thread
/// runs its ticks in this scope, on the caller's thread. Results are the
/// same as on a one-thread pool (the same chunks, `init` states and
/// reduction order). Nests; the scope ends when `f` returns or unwinds.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Registry, run_serial, walk_threads};
///
/// struct Position(f32);
///
/// let mut registry = Registry::new();
/// for i in 0..1_000 {
///     registry.spawn((Position(i as f32),));
/// }
/// let caller = std::thread::current().id();
/// run_serial(|| {
///     assert_eq!(walk_threads(), 1);
///     registry.view_mut::<&mut Position>().par_each(|p| {
///         assert_eq!(std::thread::current().id(), caller);
///         p.0 += 1.0;
///     });
/// });
/// assert_eq!(registry.view::<&Position>().iter().map(|p| p.0).sum::<f32>(), 500_500.0);
/// ```
pub fn run_serial<R>(f: impl FnOnce() -> R) -> R {
    /// Restores the flag as it was, even when `f` unwinds.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SERIAL.with(|serial| serial.set(self.0));
        }
    }
    let _restore = Restore(SERIAL.with(|serial| serial.replace(true)));
    f()
}

thread_local! {
    /// Set while [`run_shuffled`] runs on this thread: the seed of the
    /// next walk's chunk order.
    static SHUFFLE: Cell<Option<u64>> = const { Cell::new(None) };
}

/// [`run_serial`], with the chunks of every [`View::par_each`] /
/// [`par_each_init`](View::par_each_init) walked in an order drawn from
/// `seed` (each walk its own order, the same for the same seed and the
/// same walks): a check mode for code whose result should not depend on
/// the order of a parallel walk's chunks (the scheduler's
/// `Schedule::set_shuffle`). The other parallel passes combine their
/// chunks in order and walk them in order. Nests; the scope ends when
/// `f` returns or unwinds.
///
/// # Examples
///
/// ```
/// use ecs_engine::{Registry, run_shuffled};
///
/// struct Position(u32);
///
/// let mut registry = Registry::new();
/// for i in 0..1_000 {
///     registry.spawn((Position(i),));
/// }
/// let mut firsts = Vec::new();
/// for seed in 0..8 {
///     run_shuffled(seed, || {
///         let seen = std::sync::Mutex::new(Vec::new());
///         registry.view_mut::<&mut Position>().par_each(|p| seen.lock().unwrap().push(p.0));
///         let seen = seen.into_inner().unwrap();
///         assert_eq!(seen.len(), 1_000);
///         firsts.push(seen[0]);
///     });
/// }
/// assert!(firsts.iter().any(|&first| first != 0)); // another chunk came first
/// ```
pub fn run_shuffled<R>(seed: u64, f: impl FnOnce() -> R) -> R {
    /// Restores the seed as it was, even when `f` unwinds.
    struct Restore(Option<u64>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SHUFFLE.with(|shuffle| shuffle.set(self.0));
        }
    }
    let _restore = Restore(SHUFFLE.with(|shuffle| shuffle.replace(Some(seed))));
    run_serial(f)
}

/// The seed of this walk's chunk order inside [`run_shuffled`] (and the
/// next walk's seed moves on), or `None`.
fn next_shuffle() -> Option<u64> {
    SHUFFLE.with(|shuffle| {
        let seed = shuffle.get()?;
        shuffle.set(Some(splitmix64(seed)));
        Some(seed)
    })
}

/// One step of SplitMix64 (Steele, Lea, Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014): the output for state
/// `state + golden gamma`.
fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `0..len` in an order drawn from `seed`: a Fisher-Yates shuffle driven
/// by [SplitMix64](https://doi.org/10.1145/2660193.2660195). The same
/// seed gives the same order on every machine.
///
/// # Examples
///
/// ```
/// let order = ecs_engine::shuffled_order(5, 42);
/// let mut sorted = order.clone();
/// sorted.sort_unstable();
/// assert_eq!(sorted, [0, 1, 2, 3, 4]);
/// assert_eq!(order, ecs_engine::shuffled_order(5, 42));
/// ```
pub fn shuffled_order(len: usize, seed: u64) -> Vec<usize> {
    let mut state = seed;
    let mut order: Vec<usize> = (0..len).collect();
    for i in (1..len).rev() {
        state = splitmix64(state);
        let j = (state % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// How many threads a parallel pass started on this thread may use: 1
/// inside [`run_serial`], else the current rayon pool's thread count
/// ([`rayon::current_num_threads`]). Code that splits its own work with
/// rayon inside a system should walk serially when this is 1.
pub fn walk_threads() -> usize {
    if SERIAL.with(Cell::get) {
        1
    } else {
        rayon::current_num_threads()
    }
}

/// The most tasks of a [`View::par_fold`]: its chunks depend on the
/// entity count only, never on the thread count, so its result does not
/// either.
const FOLD_TASKS: usize = 64;

/// Driver positions per chunk of a [`View::par_fold`] over `len`
/// positions (independent of the thread count).
pub(crate) fn fold_chunk_len(len: usize) -> usize {
    len.div_ceil(FOLD_TASKS).max(MIN_CHUNK)
}

impl<Q: QueryData, F: QueryFilter> View<'_, Q, F> {
    /// Calls `f` with the item of every matching entity, in parallel on the
    /// current rayon pool: the driving pool is split into chunks of
    /// consecutive entities, each chunk run by one task. The chunk size
    /// follows the entity count and the pool's thread count (about 8
    /// tasks per thread, none shorter than 256 entities while each thread
    /// could get one that long, nor than 64: 4,000 entities on 2 threads
    /// make 16 tasks, 600 make 3, and 1,000 on 16 threads make 16).
    ///
    /// # Examples
    ///
    /// ```
    /// # // rayon's pool trips crossbeam-epoch under Miri's Stacked Borrows.
    /// # if cfg!(miri) { return; }
    /// use ecs_engine::Registry;
    ///
    /// struct Position(f32);
    /// struct Velocity(f32);
    ///
    /// let mut registry = Registry::new();
    /// for i in 0..1_000 {
    ///     registry.spawn((Position(0.0), Velocity(i as f32)));
    /// }
    /// registry
    ///     .view_mut::<(&mut Position, &Velocity)>()
    ///     .par_each(|(p, v)| p.0 += v.0);
    /// let total: f32 = registry.view::<&Position>().iter().map(|p| p.0).sum();
    /// assert_eq!(total, 499_500.0);
    /// ```
    pub fn par_each<'a, Fun>(&'a mut self, f: Fun)
    where
        Fun: Fn(Q::Item<'a>) + Send + Sync,
        Q::Cursor<'a>: Send + Sync,
        F::Cursor<'a>: Send + Sync,
    {
        self.par_each_init(|| (), move |(), item| f(item));
    }

    /// As [`par_each`](Self::par_each), with a state per task: `init`
    /// makes one for each chunk of entities (a scratch buffer, a random
    /// number generator seeded from the chunk, ...), and `f` gets it with
    /// every item of that chunk. How many states are made depends on the
    /// entity count and the thread count.
    ///
    /// # Examples
    ///
    /// ```
    /// # if cfg!(miri) { return; }
    /// use ecs_engine::Registry;
    ///
    /// struct Path(Vec<u32>);
    ///
    /// let mut registry = Registry::new();
    /// for i in 0..200 {
    ///     registry.spawn((Path(vec![i, i + 1]),));
    /// }
    /// registry.view_mut::<&mut Path>().par_each_init(Vec::new, |scratch: &mut Vec<u32>, path| {
    ///     scratch.clear();
    ///     scratch.extend(path.0.iter().rev());
    ///     path.0.clone_from(scratch);
    /// });
    /// assert!(registry.view::<&Path>().iter().all(|p| p.0[0] == p.0[1] + 1));
    /// ```
    pub fn par_each_init<'a, S, Init, Fun>(&'a mut self, init: Init, f: Fun)
    where
        Init: Fn() -> S + Send + Sync,
        Fun: Fn(&mut S, Q::Item<'a>) + Send + Sync,
        Q::Cursor<'a>: Send + Sync,
        F::Cursor<'a>: Send + Sync,
    {
        let pass = self.pass();
        let len = pass.entities.len();
        let threads = walk_threads();
        let chunk = chunk_len(len, threads);
        let chunks = len.div_ceil(chunk);
        let run = |n: usize| {
            let range = n * chunk..((n + 1) * chunk).min(len);
            let mut state = init();
            // SAFETY: chunks are disjoint, so each position is walked once.
            unsafe { pass.walk(range, &mut |_, item| f(&mut state, item)) };
        };
        if let Some(seed) = next_shuffle() {
            // The check mode: serial, the chunks in a drawn order.
            shuffled_order(chunks, seed).into_iter().for_each(run);
            return;
        }
        if threads == 1 || chunks <= 1 {
            // One thread, or a walk too short to split: no task to hand
            // to the pool, the same chunks in order.
            (0..chunks).for_each(run);
            return;
        }
        crate::par_for_each(0..chunks, run);
    }

    /// Folds the items of every matching entity in parallel on the current
    /// rayon pool: each chunk of consecutive entities is folded with
    /// `fold`, starting from `init()`, in the driving pool's dense order,
    /// and the chunks' results are combined with `reduce`, left to right in
    /// chunk order. `init()` when no entity matches.
    ///
    /// Deterministic: the chunks depend on the number of entities in the
    /// driving pool only (at most 64 chunks of at least 64 entities), never
    /// on the thread count, and the reduction order is fixed, so the
    /// result is the same bit for bit on a pool of any size, even for a
    /// `reduce` that is not associative (floating-point sums). It is equal
    /// to a serial fold when `fold` and `reduce` agree (an associative
    /// `reduce` with `init()` as its identity).
    ///
    /// # Examples
    ///
    /// ```
    /// # if cfg!(miri) { return; }
    /// use ecs_engine::Registry;
    ///
    /// struct Mass(f64);
    ///
    /// let mut registry = Registry::new();
    /// for i in 1..=1_000 {
    ///     registry.spawn((Mass(i as f64),));
    /// }
    /// let (total, heaviest) = registry.view::<&Mass>().par_fold(
    ///     || (0.0, 0.0_f64),
    ///     |(sum, max), m| (sum + m.0, max.max(m.0)),
    ///     |(s1, m1), (s2, m2)| (s1 + s2, m1.max(m2)),
    /// );
    /// assert_eq!((total, heaviest), (500_500.0, 1_000.0));
    /// ```
    pub fn par_fold<'a, Acc, Init, Fold, Reduce>(
        &'a mut self,
        init: Init,
        fold: Fold,
        reduce: Reduce,
    ) -> Acc
    where
        Acc: Send,
        Init: Fn() -> Acc + Send + Sync,
        Fold: Fn(Acc, Q::Item<'a>) -> Acc + Send + Sync,
        Reduce: FnMut(Acc, Acc) -> Acc,
        Q::Cursor<'a>: Send + Sync,
        F::Cursor<'a>: Send + Sync,
    {
        let pass = self.pass();
        let len = pass.entities.len();
        let chunk = fold_chunk_len(len);
        let chunks = len.div_ceil(chunk);
        let fold_chunk = |n: usize| {
            let range = n * chunk..((n + 1) * chunk).min(len);
            let mut acc = Some(init());
            // SAFETY: chunks are disjoint, so each position is walked once.
            unsafe {
                pass.walk(range, &mut |_, item| {
                    let so_far = acc.take().expect("refilled after every item");
                    acc = Some(fold(so_far, item));
                });
            }
            acc.expect("refilled after every item")
        };
        if walk_threads() == 1 || chunks <= 1 {
            // The same chunks folded in order and reduced left to right:
            // the same result as in parallel.
            return (0..chunks)
                .map(fold_chunk)
                .reduce(reduce)
                .unwrap_or_else(init);
        }
        let parts: Vec<Acc> = crate::par_map(0..chunks, fold_chunk);
        parts.into_iter().reduce(reduce).unwrap_or_else(init)
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
        let threads = walk_threads();
        if threads == 1 || len <= MIN_CHUNK {
            // SAFETY: one walk over the whole driver: each position once.
            unsafe { pass.filter_map_into(0..len, &f, out) };
            return;
        }
        let chunk = chunk_len(len, threads);
        let parts: Vec<Vec<T>> = crate::par_map(0..len.div_ceil(chunk), |n| {
            let range = n * chunk..((n + 1) * chunk).min(len);
            // Room for a short chunk's every entity (growing push by
            // push cost a tenth of a small walk), but not a long one's:
            // a filter that keeps few of a million would reserve
            // megabytes per chunk.
            let mut found = Vec::with_capacity(range.len().min(BLOCK));
            // SAFETY: chunks are disjoint, so each position is walked once.
            unsafe { pass.filter_map_into(range, &f, &mut found) };
            found
        });
        out.reserve(parts.iter().map(Vec::len).sum());
        for part in parts {
            out.extend(part);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{chunk_len, fold_chunk_len};

    fn tasks(len: usize, chunk: usize) -> usize {
        len.div_ceil(chunk)
    }

    #[test]
    fn parallel_chunks_follow_the_entity_and_thread_counts() {
        assert_eq!(tasks(100_000, chunk_len(100_000, 2)), 16);
        assert_eq!(tasks(4_000, chunk_len(4_000, 2)), 16);
        assert_eq!(tasks(600, chunk_len(600, 2)), 3);
        assert_eq!(tasks(1_000, chunk_len(1_000, 16)), 16);
        assert_eq!(tasks(1_000, chunk_len(1_000, 2)), 4);
        assert_eq!(tasks(100, chunk_len(100, 16)), 2);
        assert_eq!(tasks(1_000_000, chunk_len(1_000_000, 16)), 128);
        assert_eq!(tasks(0, chunk_len(0, 4)), 0);
        assert_eq!(chunk_len(10, 0), 64);
    }

    #[test]
    fn fold_chunks_ignore_the_thread_count() {
        assert_eq!(tasks(1_000, fold_chunk_len(1_000)), 16);
        assert_eq!(tasks(1_000_000, fold_chunk_len(1_000_000)), 64);
        assert_eq!(tasks(10, fold_chunk_len(10)), 1);
    }
}
