//! The lock and condition variable the queue is built on, behind one seam.
//!
//! Normal builds use `parking_lot`'s `Mutex` and `Condvar` directly. Under
//! `--cfg loom` the same names wrap loom's model-checked primitives, so the
//! queue's blocking and close logic (the code in `queue/`, unchanged) can be
//! explored exhaustively by `tests/loom.rs`. Loom has no model of time, so its
//! `wait_until` releases the lock, lets any other thread run, re-takes the lock
//! and reports a timeout: a timer that may fire at any point of the schedule.

#[cfg(not(loom))]
pub(crate) use parking_lot::{Condvar, Mutex, MutexGuard};

#[cfg(loom)]
pub(crate) use self::loom_shim::{Condvar, Mutex, MutexGuard};

#[cfg(loom)]
mod loom_shim {
    use std::ops::{Deref, DerefMut};
    use std::time::Instant;

    /// `parking_lot::Mutex`'s API over `loom::sync::Mutex`.
    #[derive(Debug)]
    pub(crate) struct Mutex<T> {
        inner: loom::sync::Mutex<T>,
    }

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Self {
            Self {
                inner: loom::sync::Mutex::new(value),
            }
        }

        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            MutexGuard {
                mutex: &self.inner,
                guard: Some(self.inner.lock().expect("loom mutex poisoned")),
            }
        }

        pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
            let guard = self.inner.try_lock().ok()?;
            Some(MutexGuard {
                mutex: &self.inner,
                guard: Some(guard),
            })
        }
    }

    /// A guard that can be handed to a wait by `&mut`, as in `parking_lot`.
    pub(crate) struct MutexGuard<'a, T> {
        mutex: &'a loom::sync::Mutex<T>,
        /// `None` only inside a wait.
        guard: Option<loom::sync::MutexGuard<'a, T>>,
    }

    impl<T> Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            self.guard.as_ref().expect("guard held outside a wait")
        }
    }

    impl<T> DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            self.guard.as_mut().expect("guard held outside a wait")
        }
    }

    /// Whether a timed wait ended by timing out.
    pub(crate) struct WaitTimeoutResult(bool);

    impl WaitTimeoutResult {
        pub(crate) fn timed_out(&self) -> bool {
            self.0
        }
    }

    /// `parking_lot::Condvar`'s API over `loom::sync::Condvar`.
    #[derive(Debug)]
    pub(crate) struct Condvar {
        inner: loom::sync::Condvar,
    }

    impl Condvar {
        pub(crate) fn new() -> Self {
            Self {
                inner: loom::sync::Condvar::new(),
            }
        }

        pub(crate) fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
            let held = guard.guard.take().expect("guard held outside a wait");
            guard.guard = Some(self.inner.wait(held).expect("loom mutex poisoned"));
        }

        /// Models a timer that fires at an arbitrary point: release the lock,
        /// let the other threads run, re-take the lock, report a timeout.
        pub(crate) fn wait_until<T>(
            &self,
            guard: &mut MutexGuard<'_, T>,
            _deadline: Instant,
        ) -> WaitTimeoutResult {
            drop(guard.guard.take());
            loom::thread::yield_now();
            guard.guard = Some(guard.mutex.lock().expect("loom mutex poisoned"));
            WaitTimeoutResult(true)
        }

        pub(crate) fn notify_one(&self) -> bool {
            self.inner.notify_one();
            true
        }

        pub(crate) fn notify_all(&self) -> usize {
            self.inner.notify_all();
            0
        }
    }
}
