//! Parallel loops whose calling thread keeps working and then waits awake:
//! [`par_for_each`] and [`par_map`] run a list of items (chunks of a walk,
//! a wave's systems) on the current rayon pool, each thread claiming the
//! next item from a shared list, and [`yield_core`], the yield they wait
//! with.
//!
//! A rayon `join` or parallel iterator hands halves of its items to other
//! threads, and the thread that started it, once its own half is done,
//! waits for the stolen half in rayon's idle loop: a few dozen yields,
//! then sleep. The stolen half usually ends a few microseconds later, and
//! waking the sleeper took 20 to 40 µs on a 2-core virtual machine:
//! in the harness's shoot'em up, the collision test's chunks were done on
//! both threads at 66 µs and the walk returned at 84 to 97 µs (issue 24).
//! Here the starting thread claims items until none is left, then waits
//! for the items other threads still run (at most one each) by running
//! other pool work or yielding its core, never sleeping for a short wait.
//! A pool with more threads than cores is the exception: there the items
//! are spread by a rayon parallel iterator, which wakes sleeping threads
//! as it splits (see [`par_for_each`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rayon::Yield;
use rayon::prelude::*;

use crate::walk_threads;

/// Locks `mutex`, poisoned or not (a panic while it was held, in an
/// iterator's `next`, reaches the loop's caller anyway). `std`'s lock, not
/// `parking_lot`'s: every thread of a loop contends for it, and under
/// Miri (nightlies since 2026-09) `parking_lot_core` 0.9's futex wait of a
/// contended lock fails Miri's check of variadic argument types (rust-lang
/// PR 161734; fixed in `parking_lot_core` 0.10, which needs Rust 1.95).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A yield of the core that returns later than this found another thread
/// waiting for the core: the machine is busy (other programs, or more
/// threads than cores), and a thread waiting for work should give its
/// core up (sleep) instead of taking it from work that needs it. On a
/// quiet machine `sched_yield` returns within a few microseconds.
const BUSY_YIELD: Duration = Duration::from_micros(20);

/// The longest the starting thread of a [`par_for_each`] waits awake for
/// the items other threads still run; past it, or on a busy machine, it
/// sleeps in rayon's wait until they end.
const MAX_AWAKE_WAIT: Duration = Duration::from_micros(500);

/// Yields this thread's core ([`std::thread::yield_now`]); `false` when
/// the yield came back later than 20 µs, that is when another thread
/// wanted the core (a busy machine).
pub fn yield_core() -> bool {
    let start = Instant::now();
    std::thread::yield_now();
    start.elapsed() < BUSY_YIELD
}

/// The cores this process may use ([`std::thread::available_parallelism`],
/// read once): a pool with more threads than that runs a loop as rayon's
/// parallel iterators do (see [`par_for_each`]).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
}

/// Counts an item as done when dropped: when it returns, and when it
/// unwinds, so that a panicking item does not keep the starting thread
/// waiting.
struct Done<'a>(&'a AtomicUsize);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// Calls `f` with every item of `items` on the current rayon pool: this
/// thread and up to `threads - 1` helper tasks take the items one at a
/// time in order, so a thread that is busy elsewhere when the loop starts
/// takes fewer. Once none is left, this thread waits for the items others
/// still run by running other work of the pool or yielding its core (for
/// up to 500 µs, less on a busy machine: then it sleeps until they end),
/// not by sleeping at once as a rayon parallel iterator's caller does.
/// Allocates nothing. On a pool with more threads than the machine has
/// cores, the tasks are spread by a rayon parallel iterator instead (one
/// per thread, each claiming items until none is left), and this thread
/// waits as its caller does.
///
/// On a pool of one thread, inside [`run_serial`](crate::run_serial),
/// or for one item, every item runs on this thread, in order. Which
/// thread runs an item varies from run to run; the items themselves do
/// not, so code whose result depends only on each item's own work (the
/// chunks of a walk) gets the same result on any thread count. A panic of
/// `f` is resumed on this thread once every started item has ended (the
/// other items may or may not run).
///
/// # Examples
///
/// ```
/// # // rayon's pool trips crossbeam-epoch under Miri's Stacked Borrows.
/// # if cfg!(miri) { return; }
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// let total = AtomicU64::new(0);
/// ecs_engine::par_for_each(1..101u32, |n| {
///     total.fetch_add(u64::from(n), Ordering::Relaxed);
/// });
/// assert_eq!(total.into_inner(), 5_050);
/// ```
pub fn par_for_each<I, Fun>(items: I, f: Fun)
where
    I: ExactSizeIterator + Send,
    I::Item: Send,
    Fun: Fn(I::Item) + Sync,
{
    let len = items.len();
    let threads = walk_threads();
    if threads == 1 || len <= 1 {
        items.for_each(f);
        return;
    }
    let items = Mutex::new(items);
    let done = AtomicUsize::new(0);
    let work = || {
        loop {
            // Taken out of the lock, so `f` runs with the lock released.
            let next = lock(&items).next();
            let Some(item) = next else { return };
            let _done = Done(&done);
            f(item);
        }
    };
    if threads > cores() {
        // A pool larger than the machine: its idle threads wait for a core
        // as often as they run, so rayon takes them for awake and wakes
        // none of the sleepers for one helper task (particles, 8 threads
        // on 2 cores: the helper started 0.3 to 2 ms into a 2 ms walk, or
        // never). A task per thread, split by rayon, wakes threads as it
        // spreads; each claims items until none is left.
        (0..threads.min(len))
            .into_par_iter()
            .with_max_len(1)
            .for_each(|_| work());
        return;
    }
    let helpers = (threads - 1).min(len - 1);
    rayon::join(
        || {
            work();
            wait_awake(&done, len);
        },
        || spread(helpers, &|| work(), &|| wait_awake(&done, len)),
    );
}

/// Runs `work` on `helpers` threads of the pool, as a tree of
/// `rayon::join`s (no allocation, and each thread that steals a half
/// offers the next): each join's own half ends with `wait` (the items
/// all done, waited for awake), so that the join's wait for its other
/// half, which ends with the items, does not sleep.
fn spread(helpers: usize, work: &(dyn Fn() + Sync), wait: &(dyn Fn() + Sync)) {
    match helpers {
        0 => {}
        1 => work(),
        _ => {
            let half = helpers / 2;
            rayon::join(
                || {
                    spread(half, work, wait);
                    wait();
                },
                || spread(helpers - half, work, wait),
            );
        }
    }
}

/// As [`par_for_each`], collecting `f`'s results in the order of `items`
/// (whichever thread ran each).
///
/// # Examples
///
/// ```
/// # if cfg!(miri) { return; }
/// let squares = ecs_engine::par_map(0..6u32, |n| n * n);
/// assert_eq!(squares, [0, 1, 4, 9, 16, 25]);
/// ```
pub fn par_map<I, T, Fun>(items: I, f: Fun) -> Vec<T>
where
    I: ExactSizeIterator + Send,
    I::Item: Send,
    T: Send,
    Fun: Fn(I::Item) -> T + Sync,
{
    let len = items.len();
    if walk_threads() == 1 || len <= 1 {
        return items.map(f).collect();
    }
    let results = Mutex::new(Vec::with_capacity(len));
    par_for_each(items.enumerate(), |(index, item)| {
        let result = f(item);
        lock(&results).push((index, result));
    });
    let mut results = results.into_inner().unwrap_or_else(PoisonError::into_inner);
    results.sort_unstable_by_key(|&(index, _)| index);
    results.into_iter().map(|(_, result)| result).collect()
}

/// Waits until `done` reaches `len`: runs the pool's other work (another
/// loop's items, stolen) or yields the core, for up to
/// [`MAX_AWAKE_WAIT`]; returns early on a busy machine (a late yield),
/// leaving the rest of the wait to rayon's.
fn wait_awake(done: &AtomicUsize, len: usize) {
    let start = Instant::now();
    while done.load(Ordering::Acquire) < len {
        match rayon::yield_now() {
            Some(Yield::Executed) => {}
            Some(Yield::Idle) | None => {
                if start.elapsed() > MAX_AWAKE_WAIT || !yield_core() {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::{cores, par_for_each, par_map};

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a pool")
    }

    /// Items per loop: fewer under Miri, which interprets every thread.
    const ITEMS: usize = if cfg!(miri) { 40 } else { 1_000 };

    #[test]
    #[cfg_attr(miri, ignore = "starts rayon pools (Tree Borrows: miri lane 2)")]
    fn every_item_runs_once_on_any_thread_count() {
        // Up to the cores, the caller waits awake; past them, rayon spreads.
        for threads in [1, 2, 3, 8, cores() + 1] {
            let runs: Vec<AtomicUsize> = (0..ITEMS).map(|_| AtomicUsize::new(0)).collect();
            pool(threads).install(|| {
                par_for_each(0..runs.len(), |n| {
                    runs[n].fetch_add(1, Ordering::Relaxed);
                });
            });
            assert!(
                runs.iter().all(|r| r.load(Ordering::Relaxed) == 1),
                "{threads} threads"
            );
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "starts rayon pools (Tree Borrows: miri lane 2)")]
    fn results_come_in_item_order() {
        for threads in [1, 2, cores() + 1] {
            let words = pool(threads).install(|| par_map(0..300u32, |n| format!("#{n}")));
            let expected: Vec<String> = (0..300).map(|n| format!("#{n}")).collect();
            assert_eq!(words, expected, "{threads} threads");
        }
        assert_eq!(par_map(std::iter::empty::<u8>(), |n| n), Vec::<u8>::new());
    }

    #[test]
    #[cfg_attr(miri, ignore = "starts rayon pools (Tree Borrows: miri lane 2)")]
    fn nested_loops_finish() {
        for threads in [2, cores() + 1] {
            let total = AtomicUsize::new(0);
            pool(threads).install(|| {
                par_for_each(0..16, |_| {
                    par_for_each(0..16, |n| {
                        total.fetch_add(n, Ordering::Relaxed);
                    });
                });
            });
            assert_eq!(total.into_inner(), 16 * 120, "{threads} threads");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "starts rayon pools (Tree Borrows: miri lane 2)")]
    fn a_panicking_item_is_resumed_on_the_caller() {
        for threads in [2, cores() + 1] {
            let ran = AtomicUsize::new(0);
            let outcome = std::panic::catch_unwind(|| {
                pool(threads).install(|| {
                    par_for_each(0..64, |n| {
                        ran.fetch_add(1, Ordering::Relaxed);
                        assert_ne!(n, 7, "item 7 fails");
                    });
                });
            });
            let message = outcome.expect_err("the panic reaches the caller");
            assert_eq!(
                crate::panic_message(&*message),
                "assertion `left != right` failed: item 7 fails\n  left: 7\n right: 7",
                "{threads} threads"
            );
            assert!(ran.load(Ordering::Relaxed) >= 8, "{threads} threads");
        }
    }
}
