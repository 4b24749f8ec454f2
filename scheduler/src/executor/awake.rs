//! Keeps the pool's threads awake while ticks come, and lets the caller
//! wait for a tick without sleeping through a short one.
//!
//! A tick alternates parallel parts (a wave of several systems, a
//! `par_each`) with serial ones (a single-system wave, the commands'
//! apply). An idle rayon worker yields its core a few dozen times, then
//! sleeps, and waking it for the next parallel part took from tens of
//! microseconds to more than half a millisecond on a virtual machine:
//! often longer than the part itself, so a tick of short waves gained
//! little from a second thread. So each worker of a schedule's pool
//! (up to one per core) *watches* instead: it runs whatever work the pool has
//! ([`rayon::yield_now`]: the tick's job itself, a wave's systems, the
//! chunks of a `par_each`) and yields its core when there is none (as
//! rayon's idle loop does before it sleeps). A watch lasts from tick to
//! tick and ends after [`MAX_IDLE`] without work, as soon as a yield comes
//! back late (another thread wanted the core: see [`yield_core`]), at the
//! end of a tick when ticks come further apart than [`MAX_IDLE`]
//! ([`Watches::release`]), or when the schedule is dropped; the next tick sends new watches when none is left.
//!
//! A watch must never hold up the work beneath it: a worker waiting for a
//! stolen half of a `join` could pick up a watch, nested above the waiting
//! frame, which cannot resume before the watch returns. Watches are sent
//! only when none is running, which is between ticks, when every worker is
//! idle at the top of its stack; and a watch still returns after
//! [`MAX_IDLE`] without work, so even nested it can delay a tick, never
//! stall it. (An earlier watch that ran until the tick's end, whatever
//! happened, livelocked a 2-thread run this way.) The tick's job may run
//! inside a watch, above it: the watch waits on nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::Thread;
use std::time::{Duration, Instant};

use ecs_engine::yield_core;

use rayon::{ThreadPool, Yield};

/// The longest a watch goes without finding work before it returns and its
/// worker falls back to rayon's own idle loop (and then sleep): longer than
/// the gap between two ticks run back to back and than most serial
/// stretches of a tick, short enough that a game ticking at 60 Hz keeps
/// its cores busy for half a millisecond after each tick, not the whole
/// frame.
pub(crate) const MAX_IDLE: Duration = Duration::from_micros(500);

/// How long the caller spins (yielding its core) before parking.
const CALLER_SPIN: Duration = Duration::from_micros(50);

/// The watches of one pool.
#[derive(Debug)]
pub(crate) struct Watches {
    state: Arc<WatchState>,
    /// How many of the pool's threads watch: one per core the process may
    /// use ([`std::thread::available_parallelism`]) at most, so the
    /// threads of a pool larger than the machine do not keep each other's
    /// cores busy while they wait.
    watchers: usize,
}

/// What a pool's watches share.
#[derive(Debug, Default)]
struct WatchState {
    /// Watches sent and not yet ended.
    running: AtomicUsize,
    /// Set when the schedule is dropped: the watches end.
    closed: AtomicBool,
    /// Set after a tick when the next one is expected later than
    /// [`MAX_IDLE`] (see [`Watches::release`]): the watches end now;
    /// cleared when the next tick starts.
    released: AtomicBool,
}

impl Watches {
    /// The watches of a pool of `threads` threads.
    pub(crate) fn new(threads: usize) -> Watches {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        Watches {
            state: Arc::default(),
            watchers: threads.min(cores),
        }
    }

    /// Sends a watch to the first `watchers` threads of
    /// `pool` unless watches are still running (or fewer than two threads
    /// would watch). Called before each tick, from outside the pool;
    /// allocates rayon's broadcast job when it sends.
    pub(crate) fn keep_awake(&self, pool: &ThreadPool) {
        self.state.released.store(false, Ordering::Release);
        let watchers = self.watchers;
        if watchers < 2 || self.state.running.load(Ordering::Acquire) != 0 {
            return;
        }
        self.state.running.store(watchers, Ordering::Release);
        let state = Arc::clone(&self.state);
        pool.spawn_broadcast(move |context| {
            // The broadcast reaches every thread; those past the cores
            // go back to rayon's idle loop (and sleep) at once.
            if context.index() < watchers {
                state.watch();
            }
        });
    }
}

impl Watches {
    /// Ends the running watches now, after a tick, when the caller paces
    /// its ticks further apart than [`MAX_IDLE`] (a game at 60 Hz): a watch
    /// would find no work before it ended anyway, and each of its
    /// [`MAX_IDLE`] would be a core's time spent for nothing every frame
    /// (at 60 Hz with 2 watching threads, 6% of a core).
    pub(crate) fn release(&self) {
        self.state.released.store(true, Ordering::Release);
    }
}

impl Drop for Watches {
    fn drop(&mut self) {
        self.state.closed.store(true, Ordering::Release);
    }
}

impl WatchState {
    /// Runs the pool's work, on a worker of the pool, until no work came
    /// for [`MAX_IDLE`] or the schedule is dropped.
    fn watch(&self) {
        let mut idle_since: Option<Instant> = None;
        while !self.closed.load(Ordering::Acquire) && !self.released.load(Ordering::Acquire) {
            match rayon::yield_now() {
                Some(Yield::Executed) => idle_since = None,
                Some(Yield::Idle) => {
                    let since = *idle_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > MAX_IDLE {
                        break;
                    }
                    // Yield the core rather than spin: on a machine busy
                    // with other work, a spinning watch took the core from
                    // the tick itself. A yield that comes back late found
                    // the core wanted: give it up for good (rayon's idle
                    // loop sleeps soon after).
                    if !yield_core() {
                        break;
                    }
                }
                // Not on a pool's thread: nothing to watch.
                None => break,
            }
        }
        self.running.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Sets `done` and wakes the caller when the tick job ends, even by
/// unwinding.
pub(crate) struct DoneSignal<'a> {
    pub(crate) done: &'a AtomicBool,
    pub(crate) caller: &'a Thread,
}

impl Drop for DoneSignal<'_> {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
        self.caller.unpark();
    }
}

/// Waits for `done`: spins briefly (a short tick ends before a sleep would
/// pay off), then sleeps until [`DoneSignal`] unparks this thread. The
/// unpark comes after `done` is set, and a token left by an unpark that
/// comes before the `park` makes it return at once, so no wake-up is lost;
/// the loop absorbs spurious wake-ups.
/// A busy machine (a late yield) parks at once.
pub(crate) fn wait_for(done: &AtomicBool) {
    let start = Instant::now();
    let mut spin = true;
    while !done.load(Ordering::Acquire) {
        if spin && start.elapsed() < CALLER_SPIN {
            spin = yield_core();
        } else {
            std::thread::park();
        }
    }
}
