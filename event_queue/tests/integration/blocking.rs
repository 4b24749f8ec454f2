//! Blocking behaviour: a waiting consumer uses no CPU, `close` wakes every
//! waiter and loses nothing, and timeouts last about the time asked.
//!
//! Timing bounds are generous (seconds of slack above, a few milliseconds of
//! timer granularity below) so a loaded machine does not make them flaky.

use std::fs;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use event_queue::{Closed, EventQueue, PopTimeoutError, TryPushError};

/// Slack allowed above an expected duration.
const SLACK: Duration = Duration::from_secs(3);
/// How long a test waits for a thread that should finish promptly.
const JOIN_LIMIT: Duration = Duration::from_secs(10);

/// CPU time the calling thread has used so far.
///
/// Reads `/proc/thread-self/schedstat` (nanoseconds on the CPU), falling back
/// to the `utime + stime` clock ticks of `/proc/thread-self/stat` (assumed 100
/// per second, so 10 ms resolution) where schedstat is missing.
fn thread_cpu_time() -> Duration {
    if let Ok(schedstat) = fs::read_to_string("/proc/thread-self/schedstat") {
        let nanos: u64 = schedstat
            .split_whitespace()
            .next()
            .and_then(|field| field.parse().ok())
            .expect("schedstat starts with the time on CPU in ns");
        return Duration::from_nanos(nanos);
    }
    let stat = fs::read_to_string("/proc/thread-self/stat").expect("Linux /proc is mounted");
    // Fields after the command name, which is in parentheses and may hold spaces.
    let after_name = &stat[stat.rfind(')').expect("stat has a command name") + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    Duration::from_millis(ticks * 10)
}

/// A way to wait for one event, run on a consumer thread.
#[derive(Debug, Clone, Copy)]
enum Wait {
    PopBlocking,
    PopTimeout,
    DrainBlocking,
}

impl Wait {
    const ALL: [Wait; 3] = [Wait::PopBlocking, Wait::PopTimeout, Wait::DrainBlocking];

    /// Waits in this way; `Ok` with the events taken, `Err` if closed.
    fn wait(self, queue: &EventQueue<u32>) -> Result<Vec<u32>, Closed> {
        match self {
            Wait::PopBlocking => queue.pop_blocking().map(|event| vec![event]),
            Wait::PopTimeout => match queue.pop_timeout(Duration::from_secs(60)) {
                Ok(event) => Ok(vec![event]),
                Err(PopTimeoutError::Closed) => Err(Closed(())),
                Err(timeout) => panic!("waited 60 s: {timeout}"),
            },
            Wait::DrainBlocking => queue.drain_blocking().map(Iterator::collect),
        }
    }
}

#[test]
fn a_consumer_blocked_for_200_ms_uses_almost_no_cpu() {
    const BLOCKED: Duration = Duration::from_millis(200);
    for wait in Wait::ALL {
        let queue = EventQueue::new();
        let consumer = {
            let queue = queue.clone();
            thread::spawn(move || {
                let (cpu_before, wall_before) = (thread_cpu_time(), Instant::now());
                let got = wait.wait(&queue);
                (got, thread_cpu_time() - cpu_before, wall_before.elapsed())
            })
        };
        thread::sleep(BLOCKED);
        queue.push(42).unwrap();
        let (got, cpu, wall) = consumer.join().unwrap();

        // The event exists only after the sleep, so getting it proves the
        // consumer waited; no lower bound on `wall` (a consumer thread that
        // starts late would break one).
        assert_eq!(got, Ok(vec![42]), "{wait:?}");
        assert!(
            cpu < Duration::from_millis(5),
            "{wait:?} used {cpu:?} of CPU while blocked for {wall:?}"
        );
        eprintln!("{wait:?}: blocked {wall:?}, used {cpu:?} of CPU");
    }
}

#[test]
fn close_wakes_every_blocked_consumer() {
    let queue = EventQueue::new();
    let (done, results) = mpsc::channel();
    let consumers: Vec<_> = [Wait::ALL, Wait::ALL]
        .concat()
        .into_iter()
        .map(|wait| {
            let (queue, done) = (queue.clone(), done.clone());
            thread::spawn(move || done.send((wait, wait.wait(&queue))).unwrap())
        })
        .collect();
    // Let them all go to sleep.
    thread::sleep(Duration::from_millis(100));
    assert!(
        results.try_recv().is_err(),
        "a consumer returned before close"
    );

    queue.close();
    for _ in 0..consumers.len() {
        let (wait, result) = results
            .recv_timeout(JOIN_LIMIT)
            .expect("close left a consumer asleep");
        assert_eq!(result, Err(Closed(())), "{wait:?}");
    }
    for consumer in consumers {
        consumer.join().unwrap();
    }
}

#[test]
fn close_wakes_a_producer_blocked_on_a_full_queue_and_returns_its_event() {
    let queue = EventQueue::bounded(1);
    queue.push(1).unwrap();
    let (done, result) = mpsc::channel();
    let producer = {
        let queue = queue.clone();
        thread::spawn(move || done.send(queue.push(2)).unwrap())
    };
    thread::sleep(Duration::from_millis(100));
    assert!(
        result.try_recv().is_err(),
        "push returned while the queue was full"
    );

    queue.close();
    assert_eq!(result.recv_timeout(JOIN_LIMIT), Ok(Err(Closed(2))));
    producer.join().unwrap();
    // What was queued before the close is still delivered.
    assert_eq!(queue.pop_blocking(), Ok(1));
    assert_eq!(queue.pop_blocking(), Err(Closed(())));
}

#[test]
fn a_blocked_push_resumes_when_a_consumer_makes_room() {
    let queue = EventQueue::bounded(2);
    queue.push(1).unwrap();
    queue.push(2).unwrap();
    let producer = {
        let queue = queue.clone();
        thread::spawn(move || queue.push(3))
    };
    thread::sleep(Duration::from_millis(50));
    assert_eq!(queue.len(), 2, "push went past the capacity");
    assert_eq!(queue.try_pop(), Some(1));
    assert_eq!(producer.join().unwrap(), Ok(()));
    assert_eq!(queue.drain().collect::<Vec<_>>(), [2, 3]);
}

#[test]
fn push_after_close_returns_the_event() {
    let queue = EventQueue::new();
    queue.close();
    assert_eq!(
        queue.push(String::from("late")),
        Err(Closed(String::from("late")))
    );
    assert_eq!(
        queue.try_push(String::from("later")),
        Err(TryPushError::Closed(String::from("later")))
    );
    assert!(queue.is_empty());
    // A full bounded queue reports the close, not the lack of room.
    let bounded = EventQueue::bounded(1);
    bounded.push(1).unwrap();
    bounded.close();
    assert_eq!(bounded.try_push(2), Err(TryPushError::Closed(2)));
    assert_eq!(bounded.push(3), Err(Closed(3)));
}

#[test]
fn after_close_consumers_get_what_was_queued_then_closed() {
    let queue = EventQueue::new();
    for n in 0..5 {
        queue.push(n).unwrap();
    }
    queue.close();
    assert!(queue.is_closed());
    assert_eq!(queue.len(), 5);
    assert_eq!(queue.try_pop(), Some(0));
    assert_eq!(queue.pop_blocking(), Ok(1));
    assert_eq!(queue.pop_timeout(Duration::from_secs(1)), Ok(2));
    assert_eq!(queue.drain().collect::<Vec<_>>(), [3, 4]);
    assert_eq!(queue.drain().count(), 0);
    assert_eq!(queue.try_pop(), None);
    assert_eq!(queue.pop_blocking(), Err(Closed(())));
    assert_eq!(
        queue.pop_timeout(Duration::from_secs(1)),
        Err(PopTimeoutError::Closed)
    );
    assert!(queue.drain_blocking().is_err());
    // Closing again changes nothing.
    queue.close();
    assert!(queue.is_closed());
}

#[test]
fn drain_blocking_after_close_returns_what_was_left() {
    let queue = EventQueue::new();
    queue.push('a').unwrap();
    queue.push('b').unwrap();
    queue.close();
    assert_eq!(
        queue.drain_blocking().map(Iterator::collect::<String>),
        Ok("ab".to_owned())
    );
    assert_eq!(
        queue.drain_blocking().map(|batch| batch.len()),
        Err(Closed(()))
    );
}

#[test]
fn pop_timeout_on_an_empty_queue_waits_about_the_time_asked() {
    let queue = EventQueue::<u8>::new();
    for millis in [0, 20, 100] {
        let timeout = Duration::from_millis(millis);
        let start = Instant::now();
        assert_eq!(
            queue.pop_timeout(timeout),
            Err(PopTimeoutError::Timeout(timeout))
        );
        let waited = start.elapsed();
        assert!(
            waited >= timeout,
            "asked {timeout:?}, returned after {waited:?}"
        );
        assert!(
            waited < timeout + SLACK,
            "asked {timeout:?}, returned after {waited:?}"
        );
    }
}

#[test]
fn pop_timeout_returns_as_soon_as_an_event_arrives() {
    let queue = EventQueue::new();
    let producer = {
        let queue = queue.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            queue.push(7).unwrap();
        })
    };
    let start = Instant::now();
    assert_eq!(queue.pop_timeout(Duration::from_secs(30)), Ok(7));
    assert!(start.elapsed() < SLACK, "took {:?}", start.elapsed());
    producer.join().unwrap();
}

#[test]
fn pop_timeout_with_an_unrepresentable_deadline_waits_for_an_event() {
    let queue = EventQueue::new();
    let producer = {
        let queue = queue.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            queue.push(1).unwrap();
        })
    };
    assert_eq!(queue.pop_timeout(Duration::MAX), Ok(1));
    producer.join().unwrap();
}

#[test]
fn pop_timeout_with_zero_still_takes_a_queued_event() {
    let queue = EventQueue::new();
    queue.push(9).unwrap();
    assert_eq!(queue.pop_timeout(Duration::ZERO), Ok(9));
}
