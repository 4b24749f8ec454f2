//! The errors of the queue's operations, one type per failing operation.
//!
//! An error that refuses an event hands it back, so a refused push never
//! loses the event. Their `Debug` output does not print the event, so `T`
//! needs no `Debug` bound (as in `crossbeam-channel`'s `SendError`).

use std::fmt;
use std::time::Duration;

use thiserror::Error;

/// The queue is closed.
///
/// Returned by [`EventQueue::push`](crate::EventQueue::push) with the refused
/// event inside (`Closed<T>`), and by
/// [`EventQueue::pop_blocking`](crate::EventQueue::pop_blocking) once the
/// queue is closed *and* every event queued before the close has been taken
/// (`Closed`, that is `Closed<()>`).
///
/// # Examples
///
/// ```
/// use event_queue::{Closed, EventQueue};
///
/// let queue = EventQueue::new();
/// queue.close();
/// let refused = queue.push("jump").unwrap_err();
/// assert_eq!(refused, Closed("jump"));
/// assert_eq!(refused.into_inner(), "jump");
/// assert_eq!(queue.pop_blocking(), Err(Closed(())));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Error)]
#[error("the event queue is closed")]
pub struct Closed<T = ()>(pub T);

impl<T> Closed<T> {
    /// Returns the event that was refused.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = event_queue::EventQueue::new();
    /// queue.close();
    /// assert_eq!(queue.push(7).unwrap_err().into_inner(), 7);
    /// ```
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for Closed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Closed(..)")
    }
}

/// Why [`EventQueue::try_push`](crate::EventQueue::try_push) refused an
/// event; the event is inside, to retry or drop.
///
/// # Examples
///
/// ```
/// use event_queue::{EventQueue, TryPushError};
///
/// let queue = EventQueue::bounded(1);
/// queue.try_push(1).unwrap();
/// assert_eq!(queue.try_push(2), Err(TryPushError::Full(2)));
/// queue.close();
/// assert_eq!(queue.try_push(3), Err(TryPushError::Closed(3)));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Error)]
#[non_exhaustive]
pub enum TryPushError<T> {
    /// The queue is bounded and holds `capacity` events already.
    #[error("the event queue is full; the event was not queued and is returned")]
    Full(T),
    /// The queue is closed and accepts no more events.
    #[error("the event queue is closed; the event was not queued and is returned")]
    Closed(T),
    /// The queue's lock stayed held by another thread (one descheduled
    /// while holding it, or a push growing the buffer); `try_push` does not
    /// wait for it. Try again.
    #[error(
        "the event queue is busy (its lock is held by another thread); the event was not queued and is returned"
    )]
    Busy(T),
}

impl<T> TryPushError<T> {
    /// Returns the event that was refused.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = event_queue::EventQueue::bounded(1);
    /// queue.try_push('a').unwrap();
    /// assert_eq!(queue.try_push('b').unwrap_err().into_inner(), 'b');
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            Self::Full(event) | Self::Closed(event) | Self::Busy(event) => event,
        }
    }

    /// Returns `true` if the event was refused because the queue is full.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = event_queue::EventQueue::bounded(1);
    /// queue.try_push(1).unwrap();
    /// assert!(queue.try_push(2).unwrap_err().is_full());
    /// ```
    pub fn is_full(&self) -> bool {
        matches!(self, Self::Full(_))
    }

    /// Returns `true` if the event was refused because the queue is closed.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = event_queue::EventQueue::bounded(1);
    /// queue.close();
    /// assert!(queue.try_push(1).unwrap_err().is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        matches!(self, Self::Closed(_))
    }
}

impl<T> fmt::Debug for TryPushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full(_) => f.write_str("Full(..)"),
            Self::Closed(_) => f.write_str("Closed(..)"),
            Self::Busy(_) => f.write_str("Busy(..)"),
        }
    }
}

impl<T> From<Closed<T>> for TryPushError<T> {
    fn from(closed: Closed<T>) -> Self {
        Self::Closed(closed.0)
    }
}

/// Why [`EventQueue::pop_timeout`](crate::EventQueue::pop_timeout) returned
/// without an event.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use event_queue::{EventQueue, PopTimeoutError};
///
/// let queue = EventQueue::<u32>::new();
/// let wait = Duration::from_millis(1);
/// assert_eq!(queue.pop_timeout(wait), Err(PopTimeoutError::Timeout(wait)));
/// queue.close();
/// assert_eq!(queue.pop_timeout(wait), Err(PopTimeoutError::Closed));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
#[non_exhaustive]
pub enum PopTimeoutError {
    /// No event arrived within the given time (carried here).
    #[error("no event arrived within {0:?}")]
    Timeout(Duration),
    /// The queue is closed and every event queued before the close was taken.
    #[error("the event queue is closed and empty")]
    Closed,
}

impl From<Closed> for PopTimeoutError {
    fn from(_: Closed) -> Self {
        Self::Closed
    }
}
