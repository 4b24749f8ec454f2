//! Growth and close under stress: many producers pushing (`push` and `try_push`) into
//! bounded and unbounded queues whose buffers grow under the lock, the
//! queue closed in the middle. Every accepted event arrives exactly once and
//! in its producer's order, every refused event comes back to its producer,
//! nothing is leaked or dropped twice, `Full` only ever comes from a full
//! bounded queue, and once a producer saw the queue closed it stays closed.

use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering::SeqCst};
use std::thread;
use std::time::Duration;

use event_queue::{Closed, EventQueue, TryPushError};

/// Live `Payload`s, over all runs of this test (the tests of this module run
/// one at a time through `LOCK`).
static LIVE: AtomicIsize = AtomicIsize::new(0);
static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// An event with a heap part and a drop count, so that a duplicated or
/// leaked event shows in `LIVE`.
#[derive(Debug, PartialEq)]
struct Payload {
    producer: usize,
    seq: u32,
    body: Box<[u8; 24]>,
}

impl Payload {
    fn new(producer: usize, seq: u32) -> Payload {
        LIVE.fetch_add(1, SeqCst);
        Payload {
            producer,
            seq,
            body: Box::new([seq as u8; 24]),
        }
    }
}

impl Drop for Payload {
    fn drop(&mut self) {
        assert_eq!(self.body[0], self.seq as u8, "a torn or moved-from payload");
        LIVE.fetch_sub(1, SeqCst);
    }
}

const PRODUCERS: usize = 6;
const PER_PRODUCER: u32 = 60_000;

fn run(capacity: Option<usize>, close_after: usize) {
    let queue = match capacity {
        Some(c) => EventQueue::bounded(c),
        None => EventQueue::new(),
    };
    let seen_total = AtomicUsize::new(0);
    let stop_monitor = AtomicBool::new(false);
    let (accepted, seen) = thread::scope(|scope| {
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                let queue = queue.clone();
                scope.spawn(move || {
                    let mut accepted = 0u32;
                    let mut closed = false;
                    for seq in 0..PER_PRODUCER {
                        let mut event = Payload::new(p, seq);
                        let use_try = (seq + p as u32).is_multiple_of(3);
                        loop {
                            if use_try {
                                match queue.try_push(event) {
                                    Ok(()) => break,
                                    Err(TryPushError::Busy(e)) => {
                                        event = e;
                                        thread::yield_now();
                                    }
                                    Err(TryPushError::Full(e)) => {
                                        assert!(capacity.is_some(), "Full from an unbounded queue");
                                        event = e;
                                        thread::yield_now();
                                    }
                                    Err(TryPushError::Closed(e)) => {
                                        assert_eq!((e.producer, e.seq), (p, seq));
                                        closed = true;
                                        break;
                                    }
                                    Err(other) => panic!("unknown refusal {other:?}"),
                                }
                            } else {
                                match queue.push(event) {
                                    Ok(()) => break,
                                    Err(Closed(e)) => {
                                        assert_eq!((e.producer, e.seq), (p, seq));
                                        closed = true;
                                        break;
                                    }
                                }
                            }
                        }
                        if closed {
                            // Closed stays closed, for both calls.
                            assert!(matches!(
                                queue.try_push(Payload::new(p, u32::MAX)),
                                Err(TryPushError::Closed(_) | TryPushError::Busy(_))
                            ));
                            assert!(queue.push(Payload::new(p, u32::MAX)).is_err());
                            break;
                        }
                        accepted += 1;
                    }
                    accepted
                })
            })
            .collect();
        let consumers: Vec<_> = (0..2)
            .map(|c| {
                let queue = queue.clone();
                let seen_total = &seen_total;
                scope.spawn(move || {
                    let mut seen: Vec<Vec<u32>> = vec![Vec::new(); PRODUCERS];
                    let mut record = |e: Payload| {
                        let list = &mut seen[e.producer];
                        if let Some(&last) = list.last() {
                            assert!(e.seq > last, "out of order");
                        }
                        list.push(e.seq);
                        seen_total.fetch_add(1, SeqCst);
                    };
                    if c == 0 {
                        while let Ok(batch) = queue.drain_blocking() {
                            batch.for_each(&mut record);
                        }
                    } else {
                        while let Ok(e) = queue.pop_blocking() {
                            record(e);
                        }
                    }
                    seen
                })
            })
            .collect();
        // A monitor: a bounded queue never holds more than its capacity.
        let monitor = {
            let queue = queue.clone();
            let stop = &stop_monitor;
            scope.spawn(move || {
                while !stop.load(SeqCst) {
                    if let Some(c) = capacity {
                        assert!(queue.len() <= c);
                    }
                    thread::yield_now();
                }
            })
        };
        while seen_total.load(SeqCst) < close_after && !queue.is_closed() {
            if producers.iter().all(|h| h.is_finished()) {
                break;
            }
            thread::sleep(Duration::from_micros(200));
        }
        queue.close();
        let accepted: Vec<u32> = producers.into_iter().map(|h| h.join().unwrap()).collect();
        let seen: Vec<Vec<Vec<u32>>> = consumers.into_iter().map(|h| h.join().unwrap()).collect();
        stop_monitor.store(true, SeqCst);
        monitor.join().unwrap();
        (accepted, seen)
    });
    for p in 0..PRODUCERS {
        let mut all: Vec<u32> = seen.iter().flat_map(|s| s[p].iter().copied()).collect();
        all.sort_unstable();
        let expected: Vec<u32> = (0..accepted[p]).collect();
        assert_eq!(all, expected, "producer {p}: accepted {}", accepted[p]);
    }
    assert!(queue.is_empty());
}

#[test]
fn growth_under_the_lock_with_a_close_in_the_middle() {
    let _one = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for capacity in [None, Some(1), Some(7), Some(1_000), Some(100_000)] {
        for close_after in [0, 5_000, 100_000] {
            run(capacity, close_after);
            assert_eq!(LIVE.load(SeqCst), 0, "{capacity:?} {close_after}");
        }
    }
}

#[test]
fn growth_from_recycled_buffers_keeps_every_event() {
    let _one = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // Drains recycle buffers of every size while producers grow the one in
    // the queue; no close until the end.
    let queue = EventQueue::new();
    thread::scope(|scope| {
        for p in 0..4 {
            let queue = queue.clone();
            scope.spawn(move || {
                for seq in 0..50_000 {
                    queue.push(Payload::new(p, seq)).unwrap();
                }
            });
        }
        let mut seen = [0u32; 4];
        let mut total = 0;
        while total < 200_000 {
            let batch = queue.drain();
            if batch.len() == 0 {
                thread::yield_now();
            }
            for e in batch {
                assert_eq!(e.seq, seen[e.producer]);
                seen[e.producer] += 1;
                total += 1;
            }
        }
    });
    drop(queue);
    assert_eq!(LIVE.load(SeqCst), 0);
}
