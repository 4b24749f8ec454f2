//! The consumer side of [`EventQueue`]: popping one event ([`try_pop`](EventQueue::try_pop),
//! [`pop_blocking`](EventQueue::pop_blocking), [`pop_timeout`](EventQueue::pop_timeout)) and
//! draining a batch ([`drain`](EventQueue::drain), [`Drain`]).

use std::collections::VecDeque;
use std::fmt;
use std::iter::FusedIterator;
use std::mem;
use std::time::{Duration, Instant};

use super::{EventQueue, MAX_RECYCLED_CAPACITY, Shared, State};
use crate::error::{Closed, PopTimeoutError};
use crate::sync::MutexGuard;

impl<T: Send> EventQueue<T> {
    /// Removes and returns the oldest event, or `None` if the queue is empty.
    /// Never waits: the lock is only tried (a few times), so a thread that
    /// was descheduled while holding it, or a push growing the buffer,
    /// cannot stall this call; `None` is then returned as well (the queue
    /// looked busy, so nothing was taken: no event is lost, and the next
    /// call will see it).
    ///
    /// `None` does not say whether the queue is closed; ask
    /// [`is_closed`](Self::is_closed) (before asking
    /// [`is_empty`](Self::is_empty): a closed queue never fills again).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = event_queue::EventQueue::new();
    /// assert_eq!(queue.try_pop(), None);
    /// queue.push(5).unwrap();
    /// assert_eq!(queue.try_pop(), Some(5));
    /// ```
    pub fn try_pop(&self) -> Option<T> {
        let mut state = self.try_lock_state()?;
        let event = state.queue.pop_front();
        if event.is_some() {
            self.finish_pop(state);
        }
        event
    }

    /// Removes and returns the oldest event, sleeping until one arrives.
    ///
    /// The calling thread sleeps on a condition variable while the queue is
    /// empty: it uses no CPU while it waits.
    ///
    /// # Errors
    ///
    /// Returns [`Closed`] once the queue is closed and every event queued
    /// before the close has been taken. Closing the queue wakes every
    /// consumer waiting here.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::thread;
    /// use event_queue::{Closed, EventQueue};
    ///
    /// let queue = EventQueue::new();
    /// let producer = queue.clone();
    /// let handle = thread::spawn(move || {
    ///     producer.push("connected").unwrap();
    ///     producer.close();
    /// });
    /// assert_eq!(queue.pop_blocking(), Ok("connected"));
    /// assert_eq!(queue.pop_blocking(), Err(Closed(())));
    /// handle.join().unwrap();
    /// ```
    pub fn pop_blocking(&self) -> Result<T, Closed> {
        let shared = &*self.shared;
        let mut state = shared.state.lock();
        loop {
            if let Some(event) = state.queue.pop_front() {
                self.finish_pop(state);
                return Ok(event);
            }
            if state.closed {
                return Err(Closed(()));
            }
            state.pop_waiters += 1;
            shared.not_empty.wait(&mut state);
            state.pop_waiters -= 1;
        }
    }

    /// Removes and returns the oldest event, sleeping at most `timeout` for
    /// one to arrive.
    ///
    /// Like [`pop_blocking`](Self::pop_blocking), the thread uses no CPU
    /// while it waits. An event that arrives just as the time runs out is
    /// returned, not left behind.
    ///
    /// # Errors
    ///
    /// - [`PopTimeoutError::Timeout`] (carrying `timeout`) if no event arrived
    ///   in time.
    /// - [`PopTimeoutError::Closed`] once the queue is closed and every event
    ///   queued before the close has been taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use event_queue::{EventQueue, PopTimeoutError};
    ///
    /// let queue = EventQueue::new();
    /// let wait = Duration::from_millis(5);
    /// assert_eq!(queue.pop_timeout(wait), Err(PopTimeoutError::Timeout(wait)));
    /// queue.push(1).unwrap();
    /// assert_eq!(queue.pop_timeout(wait), Ok(1));
    /// ```
    pub fn pop_timeout(&self, timeout: Duration) -> Result<T, PopTimeoutError> {
        let shared = &*self.shared;
        // A timeout too large to represent is a wait without a deadline.
        let deadline = Instant::now().checked_add(timeout);
        let mut state = shared.state.lock();
        loop {
            if let Some(event) = state.queue.pop_front() {
                self.finish_pop(state);
                return Ok(event);
            }
            if state.closed {
                return Err(PopTimeoutError::Closed);
            }
            state.pop_waiters += 1;
            let timed_out = match deadline {
                Some(deadline) => shared
                    .not_empty
                    .wait_until(&mut state, deadline)
                    .timed_out(),
                None => {
                    shared.not_empty.wait(&mut state);
                    false
                }
            };
            state.pop_waiters -= 1;
            if timed_out {
                // A last look: an event pushed as the timer fired is ours.
                if let Some(event) = state.queue.pop_front() {
                    self.finish_pop(state);
                    return Ok(event);
                }
                if state.closed {
                    return Err(PopTimeoutError::Closed);
                }
                return Err(PopTimeoutError::Timeout(timeout));
            }
        }
    }

    /// Releases the lock after one event left a bounded queue, then wakes one
    /// producer waiting for room if there is one.
    fn finish_pop(&self, state: MutexGuard<'_, State<T>>) {
        let wake = state.push_waiters > 0;
        drop(state);
        if wake {
            self.shared.not_full.notify_one();
        }
    }

    /// Takes every event queued at the moment of the call, without waiting.
    ///
    /// The events leave the queue at once (the whole deque is swapped out
    /// under the lock, in O(1)); the returned [`Drain`] yields them oldest
    /// first. Events pushed after the call stay in the queue for the next
    /// one. This is what a system does once per tick.
    ///
    /// The events belong to the [`Drain`]: any it has not yielded when it is
    /// dropped are dropped with it, as with [`Vec::drain`]. Collect it (or
    /// iterate to the end) to keep them all.
    ///
    /// On a closed queue this still returns what was left in it.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = event_queue::EventQueue::new();
    /// for n in 0..3 {
    ///     queue.push(n).unwrap();
    /// }
    /// let mut batch = queue.drain();
    /// queue.push(3).unwrap(); // after the call: left for the next drain
    /// assert_eq!(batch.len(), 3);
    /// assert_eq!(batch.by_ref().sum::<i32>(), 0 + 1 + 2);
    /// drop(batch);
    /// assert_eq!(queue.drain().collect::<Vec<_>>(), [3]);
    /// ```
    pub fn drain(&self) -> Drain<'_, T> {
        let spare = self.take_spare();
        let state = self.shared.state.lock();
        self.swap_out(state, spare)
    }

    /// Takes every queued event, sleeping first until there is at least one.
    ///
    /// This is [`drain`](Self::drain) for a dedicated consumer thread: like
    /// [`pop_blocking`](Self::pop_blocking) it sleeps without using CPU while
    /// the queue is empty, but it then takes the whole batch with the same
    /// lock acquisition, so a consumer pays one lock per batch instead of one
    /// per event. The returned [`Drain`] is never empty.
    ///
    /// # Errors
    ///
    /// Returns [`Closed`] once the queue is closed and every event queued
    /// before the close has been taken. Closing the queue wakes every
    /// consumer waiting here.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::thread;
    /// use event_queue::{Closed, EventQueue};
    ///
    /// let queue = EventQueue::new();
    /// let network = queue.clone();
    /// let receiver = thread::spawn(move || {
    ///     for packet in 0..100 {
    ///         network.push(packet).unwrap();
    ///     }
    ///     network.close();
    /// });
    ///
    /// let mut received = Vec::new();
    /// while let Ok(batch) = queue.drain_blocking() {
    ///     received.extend(batch);
    /// }
    /// assert_eq!(received, (0..100).collect::<Vec<_>>());
    /// assert_eq!(queue.drain_blocking().unwrap_err(), Closed(()));
    /// receiver.join().unwrap();
    /// ```
    pub fn drain_blocking(&self) -> Result<Drain<'_, T>, Closed> {
        let shared = &*self.shared;
        let spare = self.take_spare();
        let mut state = shared.state.lock();
        while state.queue.is_empty() {
            if state.closed {
                drop(state);
                *shared.spare.lock() = spare;
                return Err(Closed(()));
            }
            state.pop_waiters += 1;
            shared.not_empty.wait(&mut state);
            state.pop_waiters -= 1;
        }
        Ok(self.swap_out(state, spare))
    }

    /// Takes the recycled buffer a finished [`Drain`] left, if any.
    fn take_spare(&self) -> VecDeque<T> {
        mem::take(&mut *self.shared.spare.lock())
    }

    /// Swaps the whole queue out for `spare` (empty), releases the lock, then
    /// wakes the producers waiting for room, if any.
    fn swap_out(&self, mut state: MutexGuard<'_, State<T>>, spare: VecDeque<T>) -> Drain<'_, T> {
        debug_assert!(spare.is_empty(), "the spare buffer holds no events");
        let batch = mem::replace(&mut state.queue, spare);
        let wake = !batch.is_empty() && state.push_waiters > 0;
        drop(state);
        if wake {
            self.shared.not_full.notify_all();
        }
        Drain {
            taken: batch.len(),
            batch,
            shared: &self.shared,
        }
    }
}

/// The events taken by one [`EventQueue::drain`] call, oldest first.
///
/// It owns those events: any not yet yielded when it is dropped are dropped
/// with it. Dropping it also hands its buffer back to the queue for the next
/// drain, so draining once per tick does not allocate in steady state.
///
/// # Examples
///
/// ```
/// let queue = event_queue::EventQueue::new();
/// queue.push(10).unwrap();
/// queue.push(20).unwrap();
/// let drain = queue.drain();
/// assert_eq!(drain.len(), 2);
/// assert_eq!(drain.collect::<Vec<_>>(), [10, 20]);
/// ```
#[must_use = "the drained events are dropped unless the iterator is consumed"]
pub struct Drain<'a, T> {
    pub(super) batch: VecDeque<T>,
    /// How many events the batch held when it was taken: whether its
    /// buffer was in use (see `Drop`).
    taken: usize,
    shared: &'a Shared<T>,
}

impl<T> Iterator for Drain<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.batch.pop_front()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.batch.len();
        (len, Some(len))
    }

    fn fold<B, F>(mut self, init: B, f: F) -> B
    where
        F: FnMut(B, T) -> B,
    {
        // `VecDeque::drain` walks the two slices directly; `sum`, `extend`
        // and `for_each` come through here.
        self.batch.drain(..).fold(init, f)
    }
}

impl<T> ExactSizeIterator for Drain<'_, T> {}

impl<T> FusedIterator for Drain<'_, T> {}

impl<T> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        // Drop unconsumed events outside the lock (invariant 6).
        self.batch.clear();
        let capacity = self.batch.capacity();
        // A buffer past MAX_RECYCLED_CAPACITY is kept only while it is in
        // use (this batch filled a quarter of it): a queue whose batches
        // stay large keeps its buffers, as a plain mutex-and-swap queue
        // does, instead of regrowing one from a small buffer after every
        // drain (issue 29: batches of 10^5 events under load did that,
        // each growth a copy into fresh pages). A burst's buffer is freed
        // by the first drain that finds it mostly empty.
        let in_use = self.taken.saturating_mul(4) >= capacity;
        if capacity == 0 || (capacity > MAX_RECYCLED_CAPACITY && !in_use) {
            return;
        }
        let mut spare = self.shared.spare.lock();
        if spare.capacity() < capacity {
            let buffer = mem::take(&mut self.batch);
            let smaller = mem::replace(&mut *spare, buffer);
            drop(spare);
            drop(smaller);
        }
    }
}

impl<T> fmt::Debug for Drain<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Drain")
            .field("remaining", &self.batch.len())
            .finish_non_exhaustive()
    }
}
