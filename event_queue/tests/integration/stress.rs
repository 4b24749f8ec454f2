//! Many producers and many consumers at once: every event arrives exactly
//! once, and each producer's events keep their order for every consumer.
//!
//! Each event is `(producer, sequence number)`. Each consumer checks, as it
//! goes, that the sequence numbers it sees from one producer only grow; at the
//! end every `(producer, sequence)` pair must have been seen exactly once
//! across all consumers.

use std::thread;
use std::time::{Duration, Instant};

use event_queue::{EventQueue, PopTimeoutError};

/// One event: which producer pushed it, and its sequence number there.
type Event = (usize, u32);

/// How a consumer takes events; the stress tests run them side by side.
#[derive(Debug, Clone, Copy)]
enum Style {
    PopBlocking,
    DrainBlocking,
    PopTimeout,
    /// `try_pop` and `drain` only, yielding while the queue is empty.
    Polling,
}

/// What one consumer saw: how many events, and per producer the number of
/// events seen, each one with the sequence number in order.
struct Seen {
    per_producer: Vec<Vec<u32>>,
}

/// Takes events in the given style until the queue is closed and empty.
fn consume(queue: &EventQueue<Event>, style: Style, producers: usize) -> Seen {
    let mut seen = Seen {
        per_producer: vec![Vec::new(); producers],
    };
    let mut record = |(producer, seq): Event| {
        let list = &mut seen.per_producer[producer];
        if let Some(&last) = list.last() {
            assert!(
                seq > last,
                "{style:?} consumer saw producer {producer}'s event {seq} after {last}"
            );
        }
        list.push(seq);
    };
    match style {
        Style::PopBlocking => {
            while let Ok(event) = queue.pop_blocking() {
                record(event);
            }
        }
        Style::DrainBlocking => {
            while let Ok(batch) = queue.drain_blocking() {
                batch.for_each(&mut record);
            }
        }
        Style::PopTimeout => loop {
            match queue.pop_timeout(Duration::from_millis(1)) {
                Ok(event) => record(event),
                Err(PopTimeoutError::Timeout(_)) => {}
                Err(PopTimeoutError::Closed) => break,
                Err(other) => panic!("unexpected {other}"),
            }
        },
        Style::Polling => loop {
            if let Some(event) = queue.try_pop() {
                record(event);
                queue.drain().for_each(&mut record);
                continue;
            }
            // Closed first, then empty: a closed queue never fills again.
            if queue.is_closed() && queue.is_empty() {
                break;
            }
            thread::yield_now();
        },
    }
    seen
}

/// Runs `producers` threads pushing `per_producer` events each into `queue`
/// while one consumer per entry of `styles` takes them, closes the queue when
/// the producers are done, and checks exactly-once delivery and per-producer
/// order. Returns how many events each consumer received.
fn run(
    queue: EventQueue<Event>,
    producers: usize,
    per_producer: u32,
    styles: &[Style],
) -> Vec<usize> {
    let per_producer_len = usize::try_from(per_producer).expect("fits in usize");
    let seen: Vec<Seen> = thread::scope(|scope| {
        let consumers: Vec<_> = styles
            .iter()
            .map(|&style| {
                let queue = queue.clone();
                scope.spawn(move || consume(&queue, style, producers))
            })
            .collect();
        let pushers: Vec<_> = (0..producers)
            .map(|producer| {
                let queue = queue.clone();
                scope.spawn(move || {
                    for seq in 0..per_producer {
                        queue.push((producer, seq)).expect("queue closed too early");
                    }
                })
            })
            .collect();
        for pusher in pushers {
            pusher.join().expect("producer panicked");
        }
        queue.close();
        consumers
            .into_iter()
            .map(|consumer| consumer.join().expect("consumer panicked"))
            .collect()
    });

    assert!(
        queue.is_empty(),
        "events left after every consumer finished"
    );
    for producer in 0..producers {
        let mut arrived = vec![0u8; per_producer_len];
        for consumer in &seen {
            for &seq in &consumer.per_producer[producer] {
                arrived[usize::try_from(seq).expect("fits in usize")] += 1;
            }
        }
        let lost = arrived.iter().filter(|&&n| n == 0).count();
        let duplicated = arrived.iter().filter(|&&n| n > 1).count();
        assert_eq!(
            (lost, duplicated),
            (0, 0),
            "producer {producer}: {lost} events lost, {duplicated} delivered twice"
        );
    }
    seen.iter()
        .map(|consumer| consumer.per_producer.iter().map(Vec::len).sum())
        .collect()
}

/// Threads for a stress test: twice the cores, at least 2 and at most
/// `max`, so the test contends on a 2-core machine as on a large one
/// without oversubscribing the small one into minutes.
fn threads(max: usize) -> usize {
    let cores = thread::available_parallelism().map_or(2, std::num::NonZero::get);
    (2 * cores).clamp(2, max)
}

#[test]
fn many_producers_four_consumers_deliver_every_event_once_in_order() {
    let producers = threads(8);
    let per_producer: u32 = 1_600_000 / u32::try_from(producers).expect("at most 8");
    let start = Instant::now();
    let received = run(
        EventQueue::new(),
        producers,
        per_producer,
        &[
            Style::PopBlocking,
            Style::DrainBlocking,
            Style::PopTimeout,
            Style::Polling,
        ],
    );
    let total = producers * usize::try_from(per_producer).expect("fits");
    assert_eq!(received.iter().sum::<usize>(), total);
    eprintln!(
        "unbounded stress: {total} events from {producers} producers in {:?}, per consumer {received:?}",
        start.elapsed()
    );
}

#[test]
fn bounded_queue_with_blocking_pushes_delivers_every_event_once_in_order() {
    let producers = threads(4);
    let per_producer: u32 = 200_000 / u32::try_from(producers).expect("at most 4");
    let queue = EventQueue::bounded(64);
    let received = run(
        queue,
        producers,
        per_producer,
        &[Style::PopBlocking, Style::DrainBlocking],
    );
    let total = producers * usize::try_from(per_producer).expect("fits");
    assert_eq!(received.iter().sum::<usize>(), total);
}

#[test]
fn bounded_queue_never_holds_more_than_its_capacity() {
    const CAPACITY: usize = 8;
    let queue = EventQueue::bounded(CAPACITY);
    let producers = threads(3);
    thread::scope(|scope| {
        for producer in 0..producers {
            let queue = queue.clone();
            scope.spawn(move || {
                for seq in 0..2_000 {
                    queue.push((producer, seq)).expect("queue is open");
                }
            });
        }
        let mut received = 0;
        while received < producers * 2_000 {
            let len = queue.len();
            assert!(
                len <= CAPACITY,
                "bounded({CAPACITY}) queue held {len} events"
            );
            let batch = queue.drain_blocking().expect("queue is open");
            assert!(
                batch.len() <= CAPACITY,
                "a drain took {} events",
                batch.len()
            );
            received += batch.count();
        }
        assert_eq!(received, producers * 2_000);
    });
}
