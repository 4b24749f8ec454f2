//! Benchmarks for `event_queue::EventQueue`.
//!
//! - `event_queue`: `PRODUCERS` threads push `EVENTS_PER_PRODUCER` small events
//!   each while one consumer takes them all, for `EventQueue` and three
//!   baselines in the same group: a raw `crossbeam_channel::unbounded`,
//!   `std::sync::mpsc`, and a `parking_lot::Mutex<VecDeque>` + `Condvar` queue
//!   whose consumer swaps the whole deque out under the lock. Each consumer
//!   uses its queue's fastest way to take events (batch draining where the
//!   queue has it).
//! - `drain_per_tick`: `TICK_EVENTS` events pushed, then taken by one `drain`
//!   call, as a system does each tick; a plain `Vec` push + drain is the
//!   baseline.
//! - `producers/N` (N = 1, 2, 4, 8): `SCALING_EVENTS` events in all, split
//!   over N producer threads, one consumer sleeping until events arrive
//!   (`EventQueue::drain_blocking`, the mutex queue's swap, one `recv` per
//!   event for crossbeam's lock-free channel): how each queue holds up as
//!   contention grows.
//! - `tick_consumer/N`: the same producers, and a consumer that never
//!   sleeps: once per "tick" it takes whatever is queued without waiting
//!   (`EventQueue::drain`, the mutex queue's swap, crossbeam's `try_iter`),
//!   then does a tick's worth of other work (`TICK_WORK` spins) before it
//!   looks again, as a game loop's input system does.
//!
//! Run with `cargo bench --bench event_queue`.

use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use event_queue::EventQueue;
use parking_lot::{Condvar, Mutex};

/// Producer threads in the `event_queue` group.
const PRODUCERS: usize = 4;
/// Events each producer pushes per iteration.
const EVENTS_PER_PRODUCER: u64 = 250_000;
/// Events per iteration in the `event_queue` group.
const TOTAL_EVENTS: u64 = PRODUCERS as u64 * EVENTS_PER_PRODUCER;
/// Events pushed per tick in the `drain_per_tick` group.
const TICK_EVENTS: u64 = 1_000;

/// A small event: which producer, which sequence number.
fn event(producer: usize, seq: u64) -> u64 {
    ((producer as u64) << 32) | seq
}

/// `EventQueue`: the consumer sleeps in `drain_blocking` until events are
/// queued, then takes the whole batch with that one lock acquisition.
fn run_event_queue() -> u64 {
    let queue = EventQueue::new();
    thread::scope(|scope| {
        for producer in 0..PRODUCERS {
            let queue = queue.clone();
            scope.spawn(move || {
                for seq in 0..EVENTS_PER_PRODUCER {
                    queue.push(event(producer, seq)).expect("queue is open");
                }
            });
        }
        let mut received = 0;
        let mut checksum = 0u64;
        while received < TOTAL_EVENTS {
            let batch = queue.drain_blocking().expect("queue is open");
            received += batch.len() as u64;
            checksum = batch.fold(checksum, u64::wrapping_add);
        }
        checksum
    })
}

/// The producers and the one-`recv`-per-event consumer shared by the two
/// channel baselines: `send` pushes through a clone of `sender` on each
/// producer thread, `recv` takes the next event on this one.
fn run_channel<S: Clone + Send>(
    sender: S,
    send: fn(&S, u64),
    mut recv: impl FnMut() -> u64,
) -> u64 {
    thread::scope(|scope| {
        for producer in 0..PRODUCERS {
            let sender = sender.clone();
            scope.spawn(move || {
                for seq in 0..EVENTS_PER_PRODUCER {
                    send(&sender, event(producer, seq));
                }
            });
        }
        let mut checksum = 0u64;
        for _ in 0..TOTAL_EVENTS {
            checksum = checksum.wrapping_add(recv());
        }
        checksum
    })
}

/// Baseline: a raw `crossbeam_channel::unbounded`, one `recv` per event.
fn run_crossbeam() -> u64 {
    let (sender, receiver) = crossbeam_channel::unbounded();
    run_channel(
        sender,
        |s, e| s.send(e).expect("receiver alive"),
        || receiver.recv().expect("senders alive"),
    )
}

/// Baseline: `std::sync::mpsc`, one `recv` per event.
fn run_std_mpsc() -> u64 {
    let (sender, receiver) = mpsc::channel();
    run_channel(
        sender,
        |s, e| s.send(e).expect("receiver alive"),
        || receiver.recv().expect("senders alive"),
    )
}

/// Baseline: the textbook `Mutex<VecDeque>` + `Condvar` queue. Producers lock,
/// push and notify; the consumer waits while it is empty, then swaps the whole
/// deque out under the lock and processes the batch outside it.
fn run_mutex_swap() -> u64 {
    let queue = Mutex::new(VecDeque::new());
    let not_empty = Condvar::new();
    thread::scope(|scope| {
        for producer in 0..PRODUCERS {
            let (queue, not_empty) = (&queue, &not_empty);
            scope.spawn(move || {
                for seq in 0..EVENTS_PER_PRODUCER {
                    queue.lock().push_back(event(producer, seq));
                    not_empty.notify_one();
                }
            });
        }
        let mut batch = VecDeque::new();
        let mut received = 0;
        let mut checksum = 0u64;
        while received < TOTAL_EVENTS {
            {
                let mut guard = queue.lock();
                while guard.is_empty() {
                    not_empty.wait(&mut guard);
                }
                std::mem::swap(&mut *guard, &mut batch);
            }
            received += batch.len() as u64;
            checksum = batch.drain(..).fold(checksum, u64::wrapping_add);
        }
        checksum
    })
}

/// A queue under test: its name and one full producers-to-consumer run.
type Contender = (&'static str, fn() -> u64);

fn bench_event_queue(c: &mut Criterion) {
    let expected: u64 = (0..PRODUCERS)
        .flat_map(|p| (0..EVENTS_PER_PRODUCER).map(move |s| event(p, s)))
        .fold(0, u64::wrapping_add);
    let mut group = c.benchmark_group("event_queue");
    group
        .throughput(Throughput::Elements(TOTAL_EVENTS))
        .sample_size(15)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    let contenders: [Contender; 4] = [
        ("mutex_vecdeque_swap", run_mutex_swap),
        ("crossbeam_channel_unbounded", run_crossbeam),
        ("std_mpsc", run_std_mpsc),
        ("EventQueue", run_event_queue),
    ];
    for (name, run) in contenders {
        assert_eq!(run(), expected, "{name} lost or duplicated an event");
        group.bench_function(name, |b| b.iter(|| black_box(run())));
    }
    group.finish();
}

fn bench_drain_per_tick(c: &mut Criterion) {
    let mut group = c.benchmark_group("drain_per_tick");
    group
        .throughput(Throughput::Elements(TICK_EVENTS))
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));

    let queue = EventQueue::new();
    group.bench_function("EventQueue", |b| {
        b.iter(|| {
            for n in 0..TICK_EVENTS {
                queue.push(black_box(n)).expect("queue is open");
            }
            queue.drain().fold(0u64, u64::wrapping_add)
        });
    });

    let mut plain = Vec::new();
    group.bench_function("vec_baseline", |b| {
        b.iter(|| {
            for n in 0..TICK_EVENTS {
                plain.push(black_box(n));
            }
            plain.drain(..).fold(0u64, u64::wrapping_add)
        });
    });
    group.finish();
}

/// Events per iteration of the `producers` and `tick_consumer` groups, split
/// evenly over the producers.
const SCALING_EVENTS: u64 = 400_000;
/// Busy-work iterations of one simulated tick in `tick_consumer`.
const TICK_WORK: u64 = 2_000;

/// Producer counts of the scaling groups.
const PRODUCER_COUNTS: [usize; 4] = [1, 2, 4, 8];

/// How the consumer of a scaling run takes events.
#[derive(Clone, Copy, PartialEq)]
enum Consumer {
    /// Sleeps until events arrive, then takes them.
    Blocking,
    /// Takes what is queued without waiting, then does a tick of other work.
    PerTick,
}

/// A tick's worth of other work for the `PerTick` consumer.
fn tick_work() {
    let mut x = 0u64;
    for i in 0..TICK_WORK {
        x = black_box(x.wrapping_add(i));
    }
    black_box(x);
}

/// `producers` threads push `SCALING_EVENTS` events in all through
/// `push`; `take` is called on this thread until it has returned them all,
/// each call adding what it took to `(count, checksum)`.
fn run_scaling<Q: Sync>(
    queue: &Q,
    producers: usize,
    push: fn(&Q, u64),
    mut take: impl FnMut(&Q, &mut (u64, u64)),
) -> u64 {
    let per_producer = SCALING_EVENTS / producers as u64;
    thread::scope(|scope| {
        for producer in 0..producers {
            scope.spawn(move || {
                for seq in 0..per_producer {
                    push(queue, event(producer, seq));
                }
            });
        }
        let total = per_producer * producers as u64;
        let mut got = (0u64, 0u64);
        while got.0 < total {
            take(queue, &mut got);
        }
        got.1
    })
}

fn scaling_event_queue(producers: usize, consumer: Consumer) -> u64 {
    let queue = EventQueue::new();
    run_scaling(
        &queue,
        producers,
        |q, e| q.push(e).expect("queue is open"),
        |q, got| {
            let batch = match consumer {
                Consumer::Blocking => q.drain_blocking().expect("queue is open"),
                Consumer::PerTick => {
                    tick_work();
                    q.drain()
                }
            };
            got.0 += batch.len() as u64;
            got.1 = batch.fold(got.1, u64::wrapping_add);
        },
    )
}

fn scaling_mutex_swap(producers: usize, consumer: Consumer) -> u64 {
    let queue = (Mutex::new(VecDeque::new()), Condvar::new());
    let mut batch = VecDeque::new();
    run_scaling(
        &queue,
        producers,
        |(q, not_empty), e| {
            q.lock().push_back(e);
            not_empty.notify_one();
        },
        |(q, not_empty), got| {
            if consumer == Consumer::PerTick {
                tick_work();
            }
            {
                let mut guard = q.lock();
                while consumer == Consumer::Blocking && guard.is_empty() {
                    not_empty.wait(&mut guard);
                }
                std::mem::swap(&mut *guard, &mut batch);
            }
            got.0 += batch.len() as u64;
            got.1 = batch.drain(..).fold(got.1, u64::wrapping_add);
        },
    )
}

fn scaling_crossbeam(producers: usize, consumer: Consumer) -> u64 {
    let (sender, receiver) = crossbeam_channel::unbounded();
    run_scaling(
        &(sender, receiver),
        producers,
        |(s, _), e| s.send(e).expect("receiver alive"),
        |(_, r), got| match consumer {
            Consumer::Blocking => {
                got.0 += 1;
                got.1 = got.1.wrapping_add(r.recv().expect("senders alive"));
            }
            Consumer::PerTick => {
                tick_work();
                for e in r.try_iter() {
                    got.0 += 1;
                    got.1 = got.1.wrapping_add(e);
                }
            }
        },
    )
}

/// One scaling contender: its name and a run for a producer count.
type ScalingContender = (&'static str, fn(usize, Consumer) -> u64);

fn bench_scaling(c: &mut Criterion) {
    let contenders: [ScalingContender; 3] = [
        ("EventQueue", scaling_event_queue),
        ("mutex_vecdeque_swap", scaling_mutex_swap),
        ("crossbeam_channel_unbounded", scaling_crossbeam),
    ];
    for (group_name, consumer) in [
        ("producers", Consumer::Blocking),
        ("tick_consumer", Consumer::PerTick),
    ] {
        let mut group = c.benchmark_group(group_name);
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
        for producers in PRODUCER_COUNTS {
            let per_producer = SCALING_EVENTS / producers as u64;
            let expected = (0..producers)
                .flat_map(|p| (0..per_producer).map(move |s| event(p, s)))
                .fold(0, u64::wrapping_add);
            group.throughput(Throughput::Elements(per_producer * producers as u64));
            for (name, run) in contenders {
                assert_eq!(
                    run(producers, consumer),
                    expected,
                    "{name} lost or duplicated an event"
                );
                group.bench_function(format!("{name}/{producers}"), |b| {
                    b.iter(|| black_box(run(producers, consumer)))
                });
            }
        }
        group.finish();
    }
}

criterion_group!(
    benches,
    bench_event_queue,
    bench_drain_per_tick,
    bench_scaling
);
criterion_main!(benches);
