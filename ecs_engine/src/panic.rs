//! Panics: [`panic_message`], the text of a caught panic, and finishing an
//! operation when a destructor unwinds.
//!
//! The registry's rule: after a panic out of a structural change (despawn,
//! remove, clear, an overwriting insert, a batch call), no pool holds a
//! dead entity and every value is dropped exactly once. The operation is
//! therefore *completed*, not undone: each step whose destructor may panic
//! runs under [`FirstPanic::run`], the remaining steps still run, and the
//! first panic resumes once the world is whole again (later panics of the
//! same call are discarded, so one call never aborts the process by
//! panicking twice).

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// The first panic caught while finishing an operation.
#[derive(Default)]
pub(crate) struct FirstPanic(Option<Box<dyn Any + Send>>);

impl FirstPanic {
    /// Runs `step`, keeping its panic (the first one) for
    /// [`resume`](Self::resume).
    #[inline]
    pub(crate) fn run(&mut self, step: impl FnOnce()) {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(step)) {
            if self.0.is_none() {
                self.0 = Some(payload);
            } else if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
                // A payload whose own drop panics: leak it rather than abort.
                std::mem::forget(again);
            }
        }
    }

    /// Resumes the first panic caught, if any.
    #[inline]
    pub(crate) fn resume(self) {
        if let Some(payload) = self.0 {
            resume_unwind(payload);
        }
    }
}

/// The message of a panic caught by [`std::panic::catch_unwind`]: the
/// `&str` or `String` that `panic!` carries, or
/// `"<non-string panic payload>"` for any other payload (`panic_any`).
/// The scheduler names a panicking system with it, the C API reports
/// panics caught at its boundary with it.
///
/// # Examples
///
/// ```
/// use ecs_engine::panic_message;
///
/// let caught = std::panic::catch_unwind(|| panic!("broke at {}", 7)).unwrap_err();
/// assert_eq!(panic_message(&*caught), "broke at 7");
/// ```
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_owned()
    }
}
