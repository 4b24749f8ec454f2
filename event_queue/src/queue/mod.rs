//! [`EventQueue`]: one lock-protected `VecDeque`, two condition variables.
//! The type, its construction, the producer side and closing are here;
//! popping and draining in `consumer`.
//!
//! # Design
//!
//! The events live in one `parking_lot::Mutex<State<T>>`, laid out so that
//! the lock word and everything a push touches share one cache line, and
//! nothing else does (see `Shared`):
//!
//! - `queue`: the events, oldest at the front. A push appends at the back, a
//!   pop takes the front, and [`EventQueue::drain`] swaps the whole deque out
//!   in O(1) under the lock, so a consumer pays one lock per *batch*, not one
//!   per event, and producers are held up only for that swap.
//! - `closed`, and the number of threads asleep on each condition variable
//!   (`pop_waiters` on `not_empty`, `push_waiters` on `not_full`). A push
//!   notifies only when `pop_waiters > 0`, so while consumers are busy (or a
//!   game loop never blocks) a push makes no wake-up call at all.
//!
//! Beside it, `spare` (its own small lock, touched only by consumers) keeps
//! the empty buffer a finished [`Drain`] handed back; the next drain swaps it
//! in, so a queue drained once per tick stops allocating once it has seen its
//! largest tick. Buffers past `MAX_RECYCLED_CAPACITY` are handed back only
//! while their batches fill a quarter of them.
//!
//! Invariants, each kept under the lock:
//!
//! 1. Every event is in exactly one place: a producer's hands, `queue`, one
//!    [`Drain`] batch, or a consumer's hands. Moving it is a `VecDeque`
//!    operation under the lock, hence no loss and no duplication.
//! 2. `queue` is in push order (the lock totally orders pushes), so the
//!    events of one producer leave in the order it pushed them.
//! 3. Once `closed` is set it stays set and nothing enters `queue` again; a
//!    pop reports closed only when `queue` is empty, so what was queued before
//!    the close is still delivered.
//! 4. A waiter checks its condition under the lock before it sleeps and after
//!    it wakes, and is counted in `*_waiters` for as long as it may be asleep.
//!    A state change that can satisfy a waiter (push, pop, drain, close) is
//!    made under the lock and followed by a notify whenever the count is
//!    non-zero, so no wake-up is lost. `close` notifies every waiter.
//! 5. `queue.len() <= capacity` for a bounded queue.
//! 6. No user code runs while the lock is held: no event's `Drop` and no
//!    `Debug` formatter's writer. So a panicking destructor can neither
//!    deadlock nor corrupt the queue, and a slow formatter stalls nobody.
//!    The one call out under the lock is the deque's own growth when a push
//!    finds its buffer full, as in `Vec::push`: amortized, and a
//!    `realloc` that can extend the buffer in place (or remap its pages)
//!    instead of copying it. Growing outside the lock (allocate, relock,
//!    copy the events into the fresh buffer) was tried and measured 1.5x
//!    slower than a plain mutex-and-swap queue with 4 producers: every
//!    producer that found the buffer full allocated its own, and the copy
//!    into untouched pages ran under the lock anyway. (A program whose
//!    `#[global_allocator]` pushes to or pops from a queue would deadlock
//!    on that queue's growth.) [`EventQueue::try_pop`] and
//!    [`EventQueue::try_push`] only *try* the lock (a few times), so they
//!    return promptly even when the holder was descheduled or is growing
//!    the buffer.
//!
//! The blocking and close logic is model-checked with loom (`tests/loom.rs`,
//! through the seam in `sync.rs`).
//!
//! # Why a lock and not a crossbeam channel or queue
//!
//! crossbeam channels or queues are the obvious base, and
//! `benches/event_queue.rs` measures one in the same run (4 producers, 1
//! consumer, on 2 cores): a raw `crossbeam_channel::unbounded` costs about
//! 18-20 ns per event, a `parking_lot::Mutex<VecDeque>` whose consumer swaps
//! the deque out about 10 ns, because the consumer pays one lock per batch
//! instead of one atomic hand-off per event, and a producer's lock and
//! `push_back` touch one cache line. A lock-free
//! `crossbeam::queue::SegQueue` with a consumer that only spins measured
//! about 20-27 ns per event in a separate probe, before any parking; and a lock-free queue
//! needs extra bookkeeping for `close` (a push that raced with `close` could
//! land after a consumer had already reported "closed and empty"). With one
//! lock, `close` is a single point in the total order of operations and a
//! batch is an O(1) swap; the lock is held only for a `push_back` or a swap.
//! The bench's `producers` and `tick_consumer` groups (1, 2, 4 and 8
//! producers, a blocking consumer and one that drains once per tick) show
//! the gap to the lock-free channel widening as contention grows (1.7x to
//! 3.1x at 4 and 8 producers), since more producers only make the batches
//! bigger. So this crate needs parking_lot only, not crossbeam.

mod consumer;

pub use self::consumer::Drain;

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
// The unit tests (`tests.rs`) take it through `super::*`.
#[cfg(all(test, not(loom)))]
use std::time::Duration;

use crate::error::{Closed, TryPushError};
use crate::sync::{Condvar, Mutex, MutexGuard};

/// A [`Drain`] gives its buffer back for reuse up to this many slots; a
/// bigger one only while its batch filled at least a quarter of it, so one
/// burst does not pin a huge allocation for the queue's whole life, while a
/// queue whose batches stay large does not regrow its buffer every drain.
const MAX_RECYCLED_CAPACITY: usize = 1 << 16;

/// How many times [`EventQueue::try_pop`] and [`EventQueue::try_push`] try
/// the lock before giving up: the lock is held for a few instructions, or
/// for a `realloc` when a push grows the buffer (invariant 6), so a lock
/// still taken after these tries belongs to a thread that was descheduled
/// while holding it or is growing the buffer, and waiting for it would not
/// be "without waiting".
const TRY_LOCK_SPINS: u32 = 64;

/// A thread-safe FIFO queue of events for many producers and many consumers.
///
/// `EventQueue` is a handle: [`Clone`] it to give another thread access to
/// the same queue (it is an `Arc` inside). Producers [`push`](Self::push)
/// (or [`try_push`](Self::try_push)); consumers [`try_pop`](Self::try_pop),
/// [`pop_blocking`](Self::pop_blocking), [`pop_timeout`](Self::pop_timeout),
/// or take everything queued at once with [`drain`](Self::drain), as a game
/// loop does once per tick (or [`drain_blocking`](Self::drain_blocking), which
/// first sleeps until there is something to take).
///
/// # Guarantees
///
/// - No event is lost, duplicated or reordered: the events pushed by one
///   thread are popped in the order that thread pushed them, and each event is
///   popped by exactly one consumer. A refused push hands its event back.
/// - A consumer waiting in [`pop_blocking`](Self::pop_blocking),
///   [`pop_timeout`](Self::pop_timeout) or
///   [`drain_blocking`](Self::drain_blocking) sleeps on a condition variable: it
///   uses no CPU until an event arrives or the queue is closed.
/// - After [`close`](Self::close), consumers still receive every event queued
///   before it, then [`Closed`]; every blocked consumer and producer wakes up.
/// - For `T: Send + 'static`, `EventQueue<T>` is `Send + Sync + 'static`, so
///   it can be stored as an engine resource and shared with other threads.
///
/// The queue is unbounded by default ([`new`](Self::new)); a
/// [`bounded`](Self::bounded) queue holds at most `capacity` events, and the
/// producer chooses per call between waiting for room ([`push`](Self::push))
/// and getting the event back as [`TryPushError::Full`]
/// ([`try_push`](Self::try_push)).
///
/// # Examples
///
/// ```
/// use std::thread;
/// use event_queue::EventQueue;
///
/// let queue = EventQueue::new();
/// let input = queue.clone();
/// let producer = thread::spawn(move || {
///     for key in ["w", "a", "s", "d"] {
///         input.push(key).unwrap();
///     }
/// });
/// producer.join().unwrap();
///
/// let tick: Vec<&str> = queue.drain().collect();
/// assert_eq!(tick, ["w", "a", "s", "d"]);
/// assert!(queue.is_empty());
/// ```
///
/// The event type must be `Send`:
///
/// ```compile_fail
/// let queue = event_queue::EventQueue::<std::rc::Rc<u32>>::new();
/// ```
pub struct EventQueue<T> {
    shared: Arc<Shared<T>>,
}

/// What every handle of one queue points to.
///
/// `repr(C, align(64))` puts `state` (lock word and all) alone in the first
/// cache line of the allocation: a push touches exactly that one line, which
/// the producers pass between cores. Layouts where a push touched two lines
/// measured slower under the 4-producer benchmark.
#[repr(C, align(64))]
struct Shared<T> {
    state: Mutex<State<T>>,
    /// Consumers wait here for an event (or the close).
    not_empty: Condvar,
    /// Producers of a bounded queue wait here for room (or the close).
    not_full: Condvar,
    /// An empty deque kept for its allocation, behind its own lock so that
    /// recycling it never contends with producers.
    spare: Mutex<VecDeque<T>>,
    /// `None` for an unbounded queue.
    capacity: Option<usize>,
}

/// The lock-protected part; see the module docs for its invariants.
///
/// Everything a push reads or writes is here, and with the lock word it fits
/// one 64-byte cache line (checked by a unit test).
#[repr(C)]
struct State<T> {
    queue: VecDeque<T>,
    /// The capacity, `usize::MAX` for an unbounded queue.
    limit: usize,
    /// Threads asleep on `not_empty` (`u32`: so the state fits one line).
    pop_waiters: u32,
    /// Threads asleep on `not_full`.
    push_waiters: u32,
    closed: bool,
}

impl<T> Clone for EventQueue<T> {
    /// Returns another handle to the same queue.
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T: Send> Default for EventQueue<T> {
    /// Creates an empty, unbounded queue, as [`EventQueue::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for EventQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A snapshot under the lock; the formatter's writer (the caller's
        // code) runs after it is released (invariant 6).
        let (len, closed) = {
            let state = self.shared.state.lock();
            (state.queue.len(), state.closed)
        };
        f.debug_struct("EventQueue")
            .field("len", &len)
            .field("capacity", &self.shared.capacity)
            .field("closed", &closed)
            .finish_non_exhaustive()
    }
}

impl<T: Send> EventQueue<T> {
    /// Creates an empty, unbounded queue: [`push`](Self::push) never waits.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = event_queue::EventQueue::<u32>::new();
    /// assert!(queue.is_empty());
    /// assert_eq!(queue.capacity(), None);
    /// ```
    pub fn new() -> Self {
        Self::with_capacity_limit(None)
    }

    /// Creates an empty queue that holds at most `capacity` events.
    ///
    /// When it is full, [`push`](Self::push) waits for room and
    /// [`try_push`](Self::try_push) returns the event as
    /// [`TryPushError::Full`].
    ///
    /// # Panics
    ///
    /// Panics if `capacity` is 0: such a queue could never hold an event.
    ///
    /// # Examples
    ///
    /// ```
    /// use event_queue::{EventQueue, TryPushError};
    ///
    /// let queue = EventQueue::bounded(2);
    /// assert_eq!(queue.capacity(), Some(2));
    /// queue.push(1).unwrap();
    /// queue.push(2).unwrap();
    /// assert_eq!(queue.try_push(3), Err(TryPushError::Full(3)));
    /// ```
    #[track_caller]
    pub fn bounded(capacity: usize) -> Self {
        assert!(
            capacity > 0,
            "EventQueue::bounded: capacity must be at least 1, got 0"
        );
        Self::with_capacity_limit(Some(capacity))
    }

    fn with_capacity_limit(capacity: Option<usize>) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    limit: capacity.unwrap_or(usize::MAX),
                    pop_waiters: 0,
                    push_waiters: 0,
                    closed: false,
                }),
                not_empty: Condvar::new(),
                not_full: Condvar::new(),
                spare: Mutex::new(VecDeque::new()),
                capacity,
            }),
        }
    }

    /// Appends `event` at the back of the queue.
    ///
    /// On an unbounded queue this never waits. On a full
    /// [`bounded`](Self::bounded) queue it sleeps until a consumer makes room
    /// or the queue is closed; use [`try_push`](Self::try_push) to get the
    /// event back instead of waiting.
    ///
    /// # Errors
    ///
    /// Returns [`Closed`] with the event inside if the queue is closed (also
    /// when it is closed while this call waits for room).
    ///
    /// # Examples
    ///
    /// ```
    /// use event_queue::{Closed, EventQueue};
    ///
    /// let queue = EventQueue::new();
    /// queue.push(1).unwrap();
    /// queue.close();
    /// assert_eq!(queue.push(2), Err(Closed(2)));
    /// assert_eq!(queue.try_pop(), Some(1));
    /// ```
    // Inlined into the producer's loop: the call alone measured ~5% of a
    // push under contention in `benches/event_queue.rs`.
    #[inline(always)]
    pub fn push(&self, event: T) -> Result<(), Closed<T>> {
        let mut state = self.shared.state.lock();
        if state.queue.len() >= state.limit {
            self.wait_for_room(&mut state);
        }
        if state.closed {
            return Err(Closed(event));
        }
        state.queue.push_back(event);
        self.finish_push(state);
        Ok(())
    }

    /// Sleeps until the bounded queue has room or is closed.
    #[cold]
    fn wait_for_room(&self, state: &mut MutexGuard<'_, State<T>>) {
        while state.queue.len() >= state.limit && !state.closed {
            state.push_waiters += 1;
            self.shared.not_full.wait(state);
            state.push_waiters -= 1;
        }
    }

    /// Appends `event` at the back of the queue if that is possible without
    /// waiting.
    ///
    /// # Errors
    ///
    /// Returns the event inside [`TryPushError::Closed`] if the queue is
    /// closed, or inside [`TryPushError::Full`] if it is bounded and full.
    ///
    /// # Examples
    ///
    /// ```
    /// use event_queue::{EventQueue, TryPushError};
    ///
    /// let queue = EventQueue::bounded(1);
    /// assert_eq!(queue.try_push("a"), Ok(()));
    /// assert_eq!(queue.try_push("b"), Err(TryPushError::Full("b")));
    /// ```
    pub fn try_push(&self, event: T) -> Result<(), TryPushError<T>> {
        let Some(mut state) = self.try_lock_state() else {
            return Err(TryPushError::Busy(event));
        };
        if state.closed {
            return Err(TryPushError::Closed(event));
        }
        if state.queue.len() >= state.limit {
            return Err(TryPushError::Full(event));
        }
        state.queue.push_back(event);
        self.finish_push(state);
        Ok(())
    }

    /// The state's lock, if it can be had without waiting for a thread
    /// that holds it (a few tries: see [`TRY_LOCK_SPINS`]).
    fn try_lock_state(&self) -> Option<MutexGuard<'_, State<T>>> {
        for _ in 0..TRY_LOCK_SPINS {
            if let Some(state) = self.shared.state.try_lock() {
                return Some(state);
            }
            std::hint::spin_loop();
        }
        self.shared.state.try_lock()
    }

    /// Releases the lock after a push, then wakes one sleeping consumer if
    /// there is one.
    #[inline(always)]
    fn finish_push(&self, state: MutexGuard<'_, State<T>>) {
        let wake = state.pop_waiters > 0;
        drop(state);
        if wake {
            self.shared.not_empty.notify_one();
        }
    }

    /// Returns the number of events in the queue now.
    ///
    /// Other threads may change it right after; use it for statistics, not
    /// to decide whether a pop will succeed.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = event_queue::EventQueue::new();
    /// queue.push('x').unwrap();
    /// queue.push('y').unwrap();
    /// assert_eq!(queue.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.shared.state.lock().queue.len()
    }

    /// Returns `true` if the queue holds no event now.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = event_queue::EventQueue::new();
    /// assert!(queue.is_empty());
    /// queue.push(()).unwrap();
    /// assert!(!queue.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.shared.state.lock().queue.is_empty()
    }

    /// Returns the maximum number of events a [`bounded`](Self::bounded)
    /// queue holds, or `None` for an unbounded one.
    ///
    /// # Examples
    ///
    /// ```
    /// use event_queue::EventQueue;
    ///
    /// assert_eq!(EventQueue::<u8>::bounded(16).capacity(), Some(16));
    /// assert_eq!(EventQueue::<u8>::new().capacity(), None);
    /// ```
    pub fn capacity(&self) -> Option<usize> {
        self.shared.capacity
    }

    /// Closes the queue, for every handle: it accepts no more events.
    ///
    /// Events already queued stay and are still delivered; once they are
    /// gone, the blocking pops return [`Closed`]. Every thread waiting in
    /// [`pop_blocking`](Self::pop_blocking),
    /// [`pop_timeout`](Self::pop_timeout),
    /// [`drain_blocking`](Self::drain_blocking) or a blocked
    /// [`push`](Self::push) wakes up (a blocked push gets its event back). Closing is permanent; closing twice
    /// does nothing more.
    ///
    /// # Examples
    ///
    /// ```
    /// use event_queue::{Closed, EventQueue};
    ///
    /// let queue = EventQueue::new();
    /// queue.push("last words").unwrap();
    /// queue.close();
    /// assert!(queue.is_closed());
    /// assert_eq!(queue.push("too late"), Err(Closed("too late")));
    /// assert_eq!(queue.pop_blocking(), Ok("last words"));
    /// assert_eq!(queue.pop_blocking(), Err(Closed(())));
    /// ```
    pub fn close(&self) {
        let shared = &*self.shared;
        let mut state = shared.state.lock();
        if state.closed {
            return;
        }
        state.closed = true;
        let wake_consumers = state.pop_waiters > 0;
        let wake_producers = state.push_waiters > 0;
        drop(state);
        if wake_consumers {
            shared.not_empty.notify_all();
        }
        if wake_producers {
            shared.not_full.notify_all();
        }
    }

    /// Returns `true` if [`close`](Self::close) was called on any handle of
    /// this queue.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = event_queue::EventQueue::<u8>::new();
    /// let other = queue.clone();
    /// other.close();
    /// assert!(queue.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.shared.state.lock().closed
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
