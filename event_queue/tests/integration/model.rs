//! Single-threaded behaviour against a model: a `VecDeque`, a closed flag and
//! an optional capacity. Every operation's result and the queue's `len` must
//! match the model after every step. Also: events are dropped exactly once,
//! and the queue can be stored as an engine resource.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use event_queue::{Closed, EventQueue, PopTimeoutError, TryPushError};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Push(u16),
    TryPush(u16),
    TryPop,
    /// `pop_blocking`, only issued when the model says it will not block.
    PopBlocking,
    PopTimeoutZero,
    /// `drain`, consuming only the first `n` events and dropping the rest.
    Drain {
        take: usize,
    },
    Close,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u16>().prop_map(Op::Push),
        2 => any::<u16>().prop_map(Op::TryPush),
        3 => Just(Op::TryPop),
        2 => Just(Op::PopBlocking),
        1 => Just(Op::PopTimeoutZero),
        2 => (0usize..8).prop_map(|take| Op::Drain { take }),
        1 => Just(Op::Close),
    ]
}

/// The reference: what the queue should hold and say.
struct Model {
    events: VecDeque<u16>,
    closed: bool,
    capacity: Option<usize>,
}

impl Model {
    fn full(&self) -> bool {
        self.capacity
            .is_some_and(|capacity| self.events.len() >= capacity)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn queue_matches_the_model(capacity in prop::option::of(1usize..6), ops in prop::collection::vec(op(), 0..80)) {
        let queue = match capacity {
            Some(capacity) => EventQueue::bounded(capacity),
            None => EventQueue::new(),
        };
        let mut model = Model { events: VecDeque::new(), closed: false, capacity };
        for op in ops {
            match op {
                Op::Push(event) => {
                    if model.full() && !model.closed {
                        continue; // would block forever on one thread
                    }
                    let expected = if model.closed {
                        Err(Closed(event))
                    } else {
                        model.events.push_back(event);
                        Ok(())
                    };
                    prop_assert_eq!(queue.push(event), expected);
                }
                Op::TryPush(event) => {
                    let expected = if model.closed {
                        Err(TryPushError::Closed(event))
                    } else if model.full() {
                        Err(TryPushError::Full(event))
                    } else {
                        model.events.push_back(event);
                        Ok(())
                    };
                    prop_assert_eq!(queue.try_push(event), expected);
                }
                Op::TryPop => prop_assert_eq!(queue.try_pop(), model.events.pop_front()),
                Op::PopBlocking => {
                    if model.events.is_empty() && !model.closed {
                        continue; // would block forever on one thread
                    }
                    let expected = model.events.pop_front().ok_or(Closed(()));
                    prop_assert_eq!(queue.pop_blocking(), expected);
                }
                Op::PopTimeoutZero => {
                    let expected = match model.events.pop_front() {
                        Some(event) => Ok(event),
                        None if model.closed => Err(PopTimeoutError::Closed),
                        None => Err(PopTimeoutError::Timeout(Duration::ZERO)),
                    };
                    prop_assert_eq!(queue.pop_timeout(Duration::ZERO), expected);
                }
                Op::Drain { take } => {
                    let mut drain = queue.drain();
                    prop_assert_eq!(drain.len(), model.events.len());
                    let taken: Vec<u16> = drain.by_ref().take(take).collect();
                    let expected: Vec<u16> = model.events.iter().copied().take(take).collect();
                    prop_assert_eq!(taken, expected);
                    drop(drain);
                    model.events.clear();
                }
                Op::Close => {
                    queue.close();
                    model.closed = true;
                }
            }
            prop_assert_eq!(queue.len(), model.events.len());
            prop_assert_eq!(queue.is_empty(), model.events.is_empty());
            prop_assert_eq!(queue.is_closed(), model.closed);
            prop_assert_eq!(queue.capacity(), model.capacity);
        }
    }
}

/// An event that counts how often it is dropped.
struct Tracked(Arc<AtomicUsize>);

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn every_event_is_dropped_exactly_once_wherever_it_ends() {
    let drops = Arc::new(AtomicUsize::new(0));
    let queue = EventQueue::new();
    for _ in 0..100 {
        queue.push(Tracked(Arc::clone(&drops))).unwrap();
    }
    // Popped and dropped by the caller.
    drop(queue.try_pop());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    // A drain dropped half way drops what it did not yield.
    let mut drain = queue.drain();
    let first_ten: Vec<Tracked> = drain.by_ref().take(10).collect();
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    drop(drain);
    assert_eq!(drops.load(Ordering::SeqCst), 1 + 89);
    drop(first_ten);
    assert_eq!(drops.load(Ordering::SeqCst), 100);
    // Refused events come back to the caller, not dropped by the queue.
    for _ in 0..5 {
        queue.push(Tracked(Arc::clone(&drops))).unwrap();
    }
    queue.close();
    let refused = queue.push(Tracked(Arc::clone(&drops))).unwrap_err();
    assert_eq!(drops.load(Ordering::SeqCst), 100);
    drop(refused);
    assert_eq!(drops.load(Ordering::SeqCst), 101);
    // Dropping the last handle drops what is left.
    let other = queue.clone();
    drop(queue);
    assert_eq!(drops.load(Ordering::SeqCst), 101);
    drop(other);
    assert_eq!(drops.load(Ordering::SeqCst), 106);
}

#[test]
fn events_leave_in_push_order_across_drains_and_pops() {
    let queue = EventQueue::new();
    let mut expected = Vec::new();
    let mut got = Vec::new();
    for round in 0..50u32 {
        for n in 0..round {
            queue.push(round * 1_000 + n).unwrap();
            expected.push(round * 1_000 + n);
        }
        if round % 3 == 0 {
            got.extend(queue.try_pop());
        }
        got.extend(queue.drain());
    }
    assert_eq!(got, expected);
}

#[test]
fn the_queue_can_be_stored_as_an_engine_resource() {
    fn resource<R: Send + Sync + 'static>() {}
    resource::<EventQueue<u64>>();
    resource::<EventQueue<String>>();
    resource::<EventQueue<Box<dyn std::any::Any + Send>>>();
    // A `Send` but not `Sync` event type is fine: events only move.
    resource::<EventQueue<std::cell::Cell<u32>>>();
}

#[test]
fn errors_say_what_happened() {
    assert_eq!(Closed(5).to_string(), "the event queue is closed");
    assert_eq!(
        TryPushError::Full(5).to_string(),
        "the event queue is full; the event was not queued and is returned"
    );
    assert_eq!(
        PopTimeoutError::Timeout(Duration::from_millis(250)).to_string(),
        "no event arrived within 250ms"
    );
    assert_eq!(
        PopTimeoutError::Closed.to_string(),
        "the event queue is closed and empty"
    );
    assert_eq!(format!("{:?}", Closed(vec![1])), "Closed(..)");
    assert_eq!(PopTimeoutError::from(Closed(())), PopTimeoutError::Closed);
    assert_eq!(TryPushError::from(Closed(3)), TryPushError::Closed(3));
}

#[test]
#[should_panic(expected = "capacity must be at least 1")]
fn a_bounded_queue_of_capacity_zero_is_refused() {
    let _ = EventQueue::<u8>::bounded(0);
}

#[test]
fn debug_output_shows_the_state() {
    let queue = EventQueue::bounded(4);
    queue.push(1).unwrap();
    assert_eq!(
        format!("{queue:?}"),
        "EventQueue { len: 1, capacity: Some(4), closed: false, .. }"
    );
    assert_eq!(format!("{:?}", queue.drain()), "Drain { remaining: 1, .. }");
}
