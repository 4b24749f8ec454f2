//! Unit tests that look inside the queue: buffer recycling, waiter counts,
//! the cache-line layout.

use super::*;

#[test]
fn the_lock_and_everything_a_push_touches_fit_one_cache_line() {
    assert_eq!(std::mem::size_of::<Mutex<State<u64>>>(), 64);
    assert_eq!(std::mem::offset_of!(Shared<u64>, state), 0);
    assert_eq!(std::mem::align_of::<Shared<u64>>(), 64);
    let queue = EventQueue::<u64>::new();
    let state = std::ptr::from_ref(&queue.shared.state);
    assert_eq!(state.addr() % 64, 0, "the state starts a cache line");
}

#[test]
fn a_finished_drain_hands_its_buffer_to_the_next_drain() {
    let queue = EventQueue::new();
    for n in 0..1_000 {
        queue.push(n).unwrap();
    }
    let batch = queue.drain();
    let capacity = batch.batch.capacity();
    assert!(capacity >= 1_000);
    assert_eq!(batch.sum::<i32>(), (0..1_000).sum());
    assert_eq!(queue.shared.spare.lock().capacity(), capacity);
    // The next drain swaps the recycled buffer into the queue.
    let empty = queue.drain();
    assert_eq!(empty.len(), 0);
    assert_eq!(queue.shared.state.lock().queue.capacity(), capacity);
}

#[test]
fn a_huge_buffer_is_kept_while_its_batches_fill_it() {
    let queue = EventQueue::new();
    for n in 0..=MAX_RECYCLED_CAPACITY {
        queue.push(n).unwrap();
    }
    let batch = queue.drain();
    let huge = batch.batch.capacity();
    assert!(huge > MAX_RECYCLED_CAPACITY);
    drop(batch);
    // Filled past a quarter: kept for the next drain.
    assert_eq!(queue.shared.spare.lock().capacity(), huge);
    // A small batch: the next drain swaps the huge buffer into the queue
    // and recycles the small one.
    queue.push(1).unwrap();
    drop(queue.drain());
    assert_eq!(queue.shared.state.lock().queue.capacity(), huge);
    let small = queue.shared.spare.lock().capacity();
    assert!(small < huge);
    // The huge buffer comes back with three events in it: mostly empty,
    // so it is freed, and the small spare stays.
    for n in 0..3 {
        queue.push(n).unwrap();
    }
    let batch = queue.drain();
    assert_eq!((batch.len(), batch.batch.capacity()), (3, huge));
    drop(batch);
    assert_eq!(queue.shared.spare.lock().capacity(), 0);
    assert!(queue.shared.state.lock().queue.capacity() <= small);
}

#[test]
fn waiter_counts_return_to_zero() {
    let queue = EventQueue::bounded(1);
    std::thread::scope(|scope| {
        let consumer = scope.spawn(|| queue.pop_blocking());
        while queue.shared.state.lock().pop_waiters == 0 {
            std::thread::yield_now();
        }
        queue.push(1).unwrap();
        assert_eq!(consumer.join().unwrap(), Ok(1));
        queue.push(2).unwrap();
        let producer = scope.spawn(|| queue.push(3));
        while queue.shared.state.lock().push_waiters == 0 {
            std::thread::yield_now();
        }
        assert_eq!(queue.try_pop(), Some(2));
        assert_eq!(producer.join().unwrap(), Ok(()));
    });
    let state = queue.shared.state.lock();
    assert_eq!((state.pop_waiters, state.push_waiters), (0, 0));
    assert_eq!(state.queue, [3]);
}

/// Runs `f` on another thread and returns its result, or panics if it has
/// not returned within a generous bound (a deadlock, not a slow machine).
fn within_bound<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the call waited for a lock held by a stalled thread")
}

#[test]
fn try_pop_and_try_push_return_promptly_while_a_stalled_thread_holds_the_lock() {
    let queue = EventQueue::new();
    queue.push(1).unwrap();
    // This thread stands for a producer descheduled while holding the lock.
    let stalled = queue.shared.state.lock();
    let other = queue.clone();
    let (popped, pushed) = within_bound(move || (other.try_pop(), other.try_push(2)));
    assert_eq!(popped, None);
    assert_eq!(pushed, Err(TryPushError::Busy(2)));
    drop(stalled);
    // Nothing was lost or taken while the queue was busy.
    assert_eq!(queue.try_pop(), Some(1));
    assert_eq!(queue.try_pop(), None);
}

#[test]
fn debug_formats_outside_the_lock() {
    /// A writer that pushes into the queue it is formatting, as a logger
    /// feeding an event queue might: under the lock this would deadlock.
    struct Echo(EventQueue<u32>);
    impl fmt::Write for Echo {
        fn write_str(&mut self, _: &str) -> fmt::Result {
            self.0.push(7).map_err(|_| fmt::Error)
        }
    }
    let queue = EventQueue::new();
    let other = queue.clone();
    within_bound(move || {
        use std::fmt::Write;
        let mut echo = Echo(other.clone());
        write!(echo, "{other:?}").unwrap();
    });
    assert!(queue.drain().all(|e| e == 7));
}

#[test]
fn pushes_that_grow_the_buffer_keep_every_event_in_order() {
    for queue in [EventQueue::new(), EventQueue::bounded(1_000)] {
        for n in 0..1_000 {
            if n % 2 == 0 {
                queue.push(n).unwrap();
            } else {
                queue.try_push(n).unwrap();
            }
        }
        assert!(queue.shared.state.lock().queue.capacity() >= 1_000);
        assert_eq!(
            queue.drain().collect::<Vec<_>>(),
            (0..1_000).collect::<Vec<_>>()
        );
    }
}
