//! Keeping the pool's workers awake while a tick runs.
//!
//! A rayon worker with nothing to do polls for work a few dozen times, then
//! sleeps until new work wakes it. Inside a tick that happens at every
//! serial stretch: while one worker applies a wave's commands, the others
//! fall asleep, and the next wave's jobs must wake them again. A wake-up is
//! a futex call, and on a virtual machine an idle virtual CPU is halted, so
//! the wake can take hundreds of microseconds: as long as a whole wave of
//! a large scenario (measured in the harness's `particles`: the second
//! worker joined a 1 ms wave after 0.5 ms).
//!
//! So for the length of a tick every other worker runs a broadcast job,
//! [`stay_awake`], that keeps running the pool's pending jobs as they appear
//! (stolen halves of a wave's join, chunks of a `par_each`) and between
//! them spins, yielding its core to the operating system, until the tick
//! ends. Between ticks the workers sleep as usual. Only when every worker
//! has a core of its own: with more workers than cores, spinning ones
//! would take time from the working ones.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Polls of an idle worker that only spin (`spin_loop`) before each poll
/// also yields the core to the operating system.
const SPINS_BEFORE_YIELD: u32 = 64;

/// Whether and how a schedule keeps its workers awake during a tick.
#[derive(Debug)]
pub(crate) struct KeepAwake {
    /// The tick in progress: its serial number, odd while it runs, even
    /// once it ended. Shared with the broadcast jobs, which may outlive a
    /// tick (a worker that woke too late finds it over and returns).
    state: Arc<AtomicU64>,
    /// `false` for one thread, or more threads than cores.
    enabled: bool,
}

impl KeepAwake {
    /// For a pool of `threads` workers.
    pub(crate) fn new(threads: usize) -> KeepAwake {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        KeepAwake {
            state: Arc::new(AtomicU64::new(0)),
            enabled: threads > 1 && threads <= cores,
        }
    }

    /// Starts a tick: every worker of `pool` gets a job that keeps it
    /// awake until the returned guard is dropped (at the end of the tick
    /// job, even by unwinding). Nothing when disabled.
    pub(crate) fn begin(&self, pool: &rayon::ThreadPool) -> AwakeGuard<'_> {
        if !self.enabled {
            return AwakeGuard { state: None };
        }
        // Even to odd: this tick runs.
        let serial = self.state.fetch_add(1, Ordering::AcqRel) + 1;
        let state = Arc::clone(&self.state);
        pool.spawn_broadcast(move |_| stay_awake(&state, serial));
        AwakeGuard {
            state: Some(&self.state),
        }
    }
}

/// Ends the tick's wakefulness when dropped.
#[derive(Debug)]
pub(crate) struct AwakeGuard<'a> {
    state: Option<&'a AtomicU64>,
}

impl Drop for AwakeGuard<'_> {
    fn drop(&mut self) {
        if let Some(state) = self.state {
            // Odd to even: the tick is over, the workers return.
            state.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// Runs the pool's pending jobs (this worker's, stolen ones, injected ones:
/// the tick job itself, when this worker gets there first) until the tick
/// numbered `serial` is over.
fn stay_awake(state: &AtomicU64, serial: u64) {
    let mut idle = 0u32;
    while state.load(Ordering::Acquire) == serial {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            idle = 0;
        } else if idle < SPINS_BEFORE_YIELD {
            idle += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// The workers run the pool's jobs while kept awake, and every one of
    /// them returns once the guard is dropped (the pool can be dropped).
    #[test]
    fn workers_run_jobs_and_return() {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let awake = KeepAwake {
            state: Arc::new(AtomicU64::new(0)),
            enabled: true,
        };
        let sum = AtomicUsize::new(0);
        for _ in 0..20 {
            let guard = awake.begin(&pool);
            pool.install(|| {
                use rayon::prelude::*;
                (0..10_000usize).into_par_iter().for_each(|i| {
                    sum.fetch_add(i, Ordering::Relaxed);
                });
            });
            drop(guard);
        }
        assert_eq!(sum.load(Ordering::Relaxed), 20 * (10_000 * 9_999 / 2));
        assert_eq!(awake.state.load(Ordering::Relaxed), 40);
        drop(pool);
    }

    /// Disabled (one thread), `begin` leaves the state alone.
    #[test]
    fn disabled_for_one_thread() {
        let awake = KeepAwake::new(1);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        drop(awake.begin(&pool));
        assert_eq!(awake.state.load(Ordering::Relaxed), 0);
    }
}
