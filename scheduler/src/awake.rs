//! How a tick reaches the pool: one broadcast runs the tick on the pool's
//! first thread and keeps the other threads awake until it ends; the caller
//! waits for all of them.
//!
//! A tick alternates parallel parts (a wave of several systems, a
//! `par_each`) with serial ones (a single-system wave, the commands'
//! apply). An idle rayon worker spins for a few dozen yields, then sleeps,
//! and waking it for the next parallel part takes from tens of
//! microseconds to more than half a millisecond on a virtual machine:
//! often longer than the part itself, so a tick of short waves gained
//! little from a second thread. So while a tick runs on the pool's first
//! thread, every other thread *watches*: it runs whatever work the pool has
//! ([`rayon::yield_now`]) and yields its core when there is none (as
//! rayon's own idle loop does before it sleeps), until the tick ends.
//!
//! The watches start with the tick, in the same broadcast, when every
//! worker is idle, so each runs at the top of its worker's stack: no frame
//! waits beneath it. Should one ever be picked up by a worker waiting in
//! a `join` (nested above a frame that cannot resume before the watch
//! returns), it still returns after [`MAX_IDLE`] without finding work, so
//! a watch can delay a tick but never stall it; the same bound lets a
//! worker sleep through a long serial stretch (a system waiting on a
//! lock, a large apply).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::Thread;
use std::time::{Duration, Instant};

use rayon::Yield;

/// The longest a watch goes without finding work before it returns (and
/// its worker falls back to rayon's own idle loop, then sleep): longer than
/// the serial stretches that usually sit between two parallel parts of a
/// tick (a few to a few hundred microseconds).
pub(crate) const MAX_IDLE: Duration = Duration::from_millis(1);

/// How long the caller spins (yielding its core) before parking.
const CALLER_SPIN: Duration = Duration::from_micros(50);

/// What the caller and the broadcast's jobs (the tick, the watches) share
/// during one tick.
#[derive(Debug)]
pub(crate) struct TickSignals {
    /// Set when the tick's job ends: the watches return.
    tick_over: AtomicBool,
    /// Jobs of the broadcast that have not ended.
    pending: AtomicUsize,
    caller: Thread,
}

impl TickSignals {
    /// Signals for a broadcast of `jobs` jobs, waited for by the calling
    /// thread.
    pub(crate) fn new(jobs: usize) -> Self {
        TickSignals {
            tick_over: AtomicBool::new(false),
            pending: AtomicUsize::new(jobs),
            caller: std::thread::current(),
        }
    }

    /// A guard that marks the end of the tick's job when dropped (by
    /// unwinding too).
    pub(crate) fn tick_job(&self) -> JobEnd<'_> {
        JobEnd {
            signals: self,
            tick: true,
        }
    }

    /// Runs the pool's work, on a worker of the pool, until the tick's job
    /// ends or no work came for [`MAX_IDLE`]; then marks this job's end.
    pub(crate) fn watch(&self) {
        let _end = JobEnd {
            signals: self,
            tick: false,
        };
        let mut idle_since: Option<Instant> = None;
        while !self.tick_over.load(Ordering::Acquire) {
            match rayon::yield_now() {
                Some(Yield::Executed) => idle_since = None,
                Some(Yield::Idle) => {
                    let since = *idle_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > MAX_IDLE {
                        return;
                    }
                    // Yield the core rather than spin: on a machine busy
                    // with other work, a spinning watch took the core from
                    // the tick itself (2 threads ran slower than 1).
                    std::thread::yield_now();
                }
                // Not on a pool's thread: nothing to watch.
                None => return,
            }
        }
    }

    /// Waits, on the caller's thread, until every job has ended: spins
    /// briefly (a short tick ends before a sleep would pay off), then
    /// sleeps until the last job's end unparks it. The unpark comes after
    /// the count reaches 0, and a token left by an unpark that comes
    /// before the `park` makes it return at once, so no wake-up is lost;
    /// the loop absorbs spurious wake-ups. Waiting for the watches too
    /// (not only the tick) keeps the caller out of rayon's blocking wait
    /// for the broadcast, which would put it to sleep on every tick.
    pub(crate) fn wait(&self) {
        let start = Instant::now();
        while self.pending.load(Ordering::Acquire) != 0 {
            if start.elapsed() < CALLER_SPIN {
                std::thread::yield_now();
            } else {
                std::thread::park();
            }
        }
    }
}

/// Marks the end of one job of the broadcast when dropped.
#[derive(Debug)]
pub(crate) struct JobEnd<'a> {
    signals: &'a TickSignals,
    tick: bool,
}

impl Drop for JobEnd<'_> {
    fn drop(&mut self) {
        if self.tick {
            self.signals.tick_over.store(true, Ordering::Release);
        }
        if self.signals.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.signals.caller.unpark();
        }
    }
}
