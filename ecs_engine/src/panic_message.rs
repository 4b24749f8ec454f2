//! [`panic_message`]: the text of a caught panic.

use std::any::Any;

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
