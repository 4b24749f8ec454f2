//! Model checks of the blocking and close logic with loom.
//!
//! Built only with `--cfg loom`, where the crate's lock and condition
//! variable are loom's (see `src/sync.rs`); run with
//! `RUSTFLAGS="--cfg loom" cargo test -p event_queue --test loom --release`.
//! Loom runs each closure under every interleaving of its threads (no
//! preemption bound: the models are small enough to explore exhaustively, in
//! about ten seconds in release) and fails on a deadlock, which is how a lost
//! wake-up shows. Loom has no clock: a timed wait is modelled as a timer that may fire
//! at any point of the schedule.
#![cfg(loom)]

use std::time::Duration;

use event_queue::{Closed, EventQueue, PopTimeoutError};
use loom::thread;

#[test]
fn push_then_close_reaches_exactly_one_of_two_blocked_consumers() {
    loom::model(|| {
        let queue = EventQueue::new();
        let consumers: Vec<_> = (0..2)
            .map(|_| {
                let queue = queue.clone();
                thread::spawn(move || queue.pop_blocking())
            })
            .collect();
        queue.push(1).unwrap();
        queue.close();
        let mut results: Vec<_> = consumers.into_iter().map(|c| c.join().unwrap()).collect();
        results.sort();
        assert_eq!(results, [Ok(1), Err(Closed(()))]);
    });
}

#[test]
fn close_wakes_every_blocked_consumer() {
    loom::model(|| {
        let queue = EventQueue::<u8>::new();
        let popper = {
            let queue = queue.clone();
            thread::spawn(move || queue.pop_blocking())
        };
        let drainer = {
            let queue = queue.clone();
            thread::spawn(move || queue.drain_blocking().map(Iterator::count))
        };
        queue.close();
        assert_eq!(popper.join().unwrap(), Err(Closed(())));
        assert_eq!(drainer.join().unwrap(), Err(Closed(())));
    });
}

#[test]
fn two_pushes_wake_two_blocked_consumers() {
    loom::model(|| {
        let queue = EventQueue::new();
        let consumers: Vec<_> = (0..2)
            .map(|_| {
                let queue = queue.clone();
                thread::spawn(move || queue.pop_blocking())
            })
            .collect();
        let producer = {
            let queue = queue.clone();
            thread::spawn(move || queue.push(1).unwrap())
        };
        queue.push(2).unwrap();
        producer.join().unwrap();
        let mut results: Vec<_> = consumers.into_iter().map(|c| c.join().unwrap()).collect();
        results.sort();
        assert_eq!(results, [Ok(1), Ok(2)]);
    });
}

#[test]
fn a_timed_out_consumer_never_swallows_a_wake_up_or_an_event() {
    loom::model(|| {
        let queue = EventQueue::new();
        let timed = {
            let queue = queue.clone();
            thread::spawn(move || queue.pop_timeout(Duration::from_millis(1)))
        };
        let blocked = {
            let queue = queue.clone();
            thread::spawn(move || queue.pop_blocking())
        };
        queue.push(1).unwrap();
        queue.push(2).unwrap();
        let blocked = blocked.join().unwrap().expect("the queue is open");
        let mut delivered = vec![blocked];
        match timed.join().unwrap() {
            Ok(event) => delivered.push(event),
            Err(PopTimeoutError::Timeout(_)) => {}
            Err(PopTimeoutError::Closed) => panic!("the queue was never closed"),
            Err(other) => panic!("unexpected: {other}"),
        }
        delivered.extend(queue.drain());
        delivered.sort_unstable();
        assert_eq!(delivered, [1, 2]);
    });
}

#[test]
fn one_producers_events_keep_their_order_through_drain_blocking() {
    loom::model(|| {
        let queue = EventQueue::new();
        let consumer = {
            let queue = queue.clone();
            thread::spawn(move || {
                let mut got = Vec::new();
                while let Ok(batch) = queue.drain_blocking() {
                    got.extend(batch);
                }
                got
            })
        };
        queue.push(1).unwrap();
        queue.push(2).unwrap();
        queue.close();
        assert_eq!(consumer.join().unwrap(), [1, 2]);
    });
}

#[test]
fn a_bounded_queue_hands_over_with_blocking_pushes() {
    loom::model(|| {
        let queue = EventQueue::bounded(1);
        let producer = {
            let queue = queue.clone();
            thread::spawn(move || {
                queue.push(1).unwrap();
                queue.push(2).unwrap();
            })
        };
        assert_eq!(queue.pop_blocking(), Ok(1));
        assert_eq!(queue.pop_blocking(), Ok(2));
        producer.join().unwrap();
    });
}

#[test]
fn close_wakes_a_producer_blocked_on_a_full_queue() {
    loom::model(|| {
        let queue = EventQueue::bounded(1);
        queue.push(1).unwrap();
        let producer = {
            let queue = queue.clone();
            thread::spawn(move || queue.push(2))
        };
        queue.close();
        assert_eq!(producer.join().unwrap(), Err(Closed(2)));
        assert_eq!(queue.drain().collect::<Vec<_>>(), [1]);
    });
}

#[test]
fn a_drain_racing_a_blocked_producer_loses_nothing() {
    loom::model(|| {
        let queue = EventQueue::bounded(1);
        let producer = {
            let queue = queue.clone();
            thread::spawn(move || {
                queue.push(1).unwrap();
                queue.push(2).unwrap();
                queue.close();
            })
        };
        let mut got = Vec::new();
        while let Ok(batch) = queue.drain_blocking() {
            got.extend(batch);
        }
        assert_eq!(queue.drain_blocking().unwrap_err(), Closed(()));
        producer.join().unwrap();
        assert_eq!(got, [1, 2]);
    });
}
