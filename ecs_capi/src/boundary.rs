//! The C boundary: every exported function runs its body through `call`,
//! which turns a `Result` into a status code, records the message of a
//! failure for `ecs_last_error_message` (per thread), and catches panics so
//! that none unwinds into C.
//!
//! A caught panic prints nothing: the first call installs a panic hook
//! that is silent while the panicking thread is inside `call`'s body, and
//! otherwise hands the panic to the hook that was there before (Rust's
//! default one prints `thread ... panicked at`). Code of the C program
//! that runs inside a call (system bodies, view callbacks, destructors) is
//! run through [`foreign`], which is not silent: a panic in Rust code that
//! the C program calls from there is not one this crate catches, so it is
//! reported as usual.

use std::cell::{Cell, RefCell};
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use crate::status::{ECS_ERR_PANIC, ECS_OK, Failure, ecs_status};

thread_local! {
    /// The message of this thread's last failed call.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    /// `true` while this thread runs the body of a `call`, whose panics
    /// are caught and reported as `ECS_ERR_PANIC` (and not inside a
    /// [`foreign`] callback of it).
    static CAUGHT_HERE: Cell<bool> = const { Cell::new(false) };
}

/// Sets `CAUGHT_HERE` for a scope and restores the value before it when
/// dropped (on unwinding too).
struct CaughtHere {
    before: bool,
}

impl CaughtHere {
    fn set(caught: bool) -> Self {
        CaughtHere {
            before: CAUGHT_HERE.replace(caught),
        }
    }
}

impl Drop for CaughtHere {
    fn drop(&mut self) {
        CAUGHT_HERE.set(self.before);
    }
}

/// `true` when a panic on this thread now would be caught by `call`.
pub(crate) fn caught_here() -> bool {
    CAUGHT_HERE.get()
}

/// Installs the hook that keeps caught panics quiet, once per process.
/// The hook it wraps is the one in place at the first call; a program
/// that sets its own hook later replaces this one (and then hears of
/// caught panics again).
fn install_quiet_hook() {
    static INSTALL: Once = Once::new();
    // `take_hook` and `set_hook` panic on a panicking thread (a call made
    // from a destructor during unwinding): the hook waits for a later call.
    if INSTALL.is_completed() || std::thread::panicking() {
        return;
    }
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !caught_here() {
                previous(info);
            }
        }));
    });
}

/// Runs `callback`, code of the C program called from inside a call,
/// with panics reported as usual: one in Rust code the C program calls
/// from there is not caught by this crate.
pub(crate) fn foreign<R>(callback: impl FnOnce() -> R) -> R {
    let _loud = CaughtHere::set(false);
    callback()
}

/// Records `message` as this thread's last error.
pub(crate) fn set_last_error(message: &str) {
    // An interior NUL would cut the C string short: replace it.
    let message = CString::new(message.replace('\0', "?")).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = message);
}

/// The message of the last call that failed on this thread, or `""` when
/// none has. Never NULL. The pointer stays valid until the next failing
/// call on the same thread; copy the text to keep it longer. Successful
/// calls leave it unchanged.
#[unsafe(no_mangle)]
pub extern "C" fn ecs_last_error_message() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// Runs `body`, the work of exported function `function`: `ECS_OK` on
/// success; on failure its status, with its message recorded; on a panic,
/// `ECS_ERR_PANIC` with the panic's message.
pub(crate) fn call(function: &str, body: impl FnOnce() -> Result<(), Failure>) -> ecs_status {
    install_quiet_hook();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _quiet = CaughtHere::set(true);
        body()
    }));
    match caught {
        Ok(Ok(())) => ECS_OK,
        Ok(Err(failure)) => {
            set_last_error(&failure.message);
            failure.status
        }
        Err(payload) => {
            let what = ::ecs_engine::panic_message(&*payload);
            set_last_error(&format!("{function}: panicked: {what}"));
            ECS_ERR_PANIC
        }
    }
}

/// Runs `body` for a function that returns a plain value rather than a
/// status: `fallback` on a panic (recorded as the last error).
pub(crate) fn call_value<T>(function: &str, fallback: T, body: impl FnOnce() -> T) -> T {
    let mut value = None;
    let status = call(function, || {
        value = Some(body());
        Ok(())
    });
    debug_assert!(status == ECS_OK || value.is_none());
    value.unwrap_or(fallback)
}

/// `ptr` as a reference, or a NULL-pointer failure naming `what`.
///
/// # Safety
///
/// `ptr` is NULL or valid for reads of a `T` for `'a`, as the C caller
/// promises for every pointer argument.
pub(crate) unsafe fn arg<'a, T>(
    ptr: *const T,
    function: &str,
    what: &str,
) -> Result<&'a T, Failure> {
    // SAFETY: the caller's promise (see above); NULL is checked.
    unsafe { ptr.as_ref() }.ok_or_else(|| Failure::null(function, what))
}

/// Writes `value` through the out-pointer `out`, or fails naming `what`.
///
/// # Safety
///
/// `out` is NULL or valid for writes of a `T` (its old value is not read).
pub(crate) unsafe fn write_out<T>(
    out: *mut T,
    value: T,
    function: &str,
    what: &str,
) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::null(function, what));
    }
    // SAFETY: non-null, and valid for writes by the caller's promise.
    unsafe { out.write(value) };
    Ok(())
}

/// Checks the arguments of a list in the two-call pattern (`ecs_children`,
/// `ecs_entities`): `len` non-null, and `out` non-null unless `capacity`
/// is 0 (a call that asks for the count alone).
pub(crate) fn list_args<T>(
    out: *mut T,
    capacity: usize,
    len: *mut usize,
    function: &str,
) -> Result<(), Failure> {
    if len.is_null() {
        return Err(Failure::null(function, "len"));
    }
    if out.is_null() && capacity > 0 {
        return Err(Failure::null(function, "out"));
    }
    Ok(())
}

/// Copies the first `capacity` of `items` to `out` and writes how many
/// there are (maybe more than `capacity`) to `*len`.
///
/// # Safety
///
/// The arguments passed [`list_args`]; `out` is valid for writes of
/// `capacity` values and `len` for a write.
pub(crate) unsafe fn write_list<T>(
    out: *mut T,
    capacity: usize,
    len: *mut usize,
    items: impl ExactSizeIterator<Item = T>,
    function: &str,
) -> Result<(), Failure> {
    let count = items.len();
    for (i, item) in items.take(capacity).enumerate() {
        // SAFETY: `i < capacity`, and `out` is valid for `capacity` writes
        // by the caller's promise.
        unsafe { out.add(i).write(item) };
    }
    // SAFETY: non-null and valid for writes by the caller's promise.
    unsafe { write_out(len, count, function, "len") }
}

/// A NUL-terminated UTF-8 string argument, copied.
///
/// # Safety
///
/// `ptr` is NULL or points at a NUL-terminated string that stays valid
/// during the call.
pub(crate) unsafe fn string_arg(
    ptr: *const c_char,
    function: &str,
    what: &str,
) -> Result<String, Failure> {
    if ptr.is_null() {
        return Err(Failure::null(function, what));
    }
    // SAFETY: non-null and NUL-terminated by the caller's promise.
    let text = unsafe { CStr::from_ptr(ptr) };
    match text.to_str() {
        Ok("") => Err(Failure::invalid(function, format!("`{what}` is empty"))),
        Ok(text) => Ok(text.to_owned()),
        Err(_) => Err(Failure::invalid(function, format!("`{what}` is not UTF-8"))),
    }
}

/// A `(pointer, length)` array argument as a slice; a NULL pointer is
/// allowed when `len` is 0.
///
/// # Safety
///
/// When `len > 0`, `ptr` is NULL or valid for reads of `len` `T`s during the
/// call.
pub(crate) unsafe fn slice_arg<'a, T>(
    ptr: *const T,
    len: usize,
    function: &str,
    what: &str,
) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::null(function, what));
    }
    // SAFETY: non-null, and valid for `len` reads by the caller's promise.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Checks a descriptor's leading `struct_size` field: it must cover at least
/// the `minimum` bytes of the first version of the struct. A larger size
/// (from a newer header) is accepted and the extra fields ignored.
pub(crate) fn check_struct_size(
    struct_size: u32,
    minimum: usize,
    function: &str,
    what: &str,
) -> Result<(), Failure> {
    if (struct_size as usize) < minimum {
        return Err(Failure::invalid(
            function,
            format!(
                "`{what}.struct_size` is {struct_size}, but this library needs at least \
                 {minimum}: set it to sizeof({what})"
            ),
        ));
    }
    Ok(())
}

/// A descriptor struct every field of which is valid as zero bytes (NULL
/// pointers, `None` callbacks, 0, `false`), so that a caller's older,
/// shorter version can be read into it with the rest zeroed.
///
/// # Safety
///
/// Every field is valid as all-zero bytes, and the struct begins with its
/// `u32` `struct_size`.
pub(crate) unsafe trait Versioned: Copy {
    /// The struct's name in C.
    const NAME: &'static str;
    /// Bytes of its first version (the least a caller's `struct_size` may
    /// say).
    const V1: usize;
}

/// The caller's descriptor: its first `struct_size` bytes (at least
/// version 1, at most this library's struct), the fields it does not
/// cover zero.
///
/// # Safety
///
/// `desc` is non-null and valid for reads of `desc->struct_size` bytes or
/// of a whole `T`, whichever is smaller.
pub(crate) unsafe fn read_versioned<T: Versioned>(
    desc: *const T,
    function: &str,
) -> Result<T, Failure> {
    // SAFETY: the first field of every version, valid by the caller's promise.
    let struct_size = unsafe { desc.cast::<u32>().read() };
    check_struct_size(struct_size, T::V1, function, T::NAME)?;
    let covered = (struct_size as usize).min(std::mem::size_of::<T>());
    let mut copy = std::mem::MaybeUninit::<T>::zeroed();
    // SAFETY: `covered` bytes are readable (the caller's promise) and fit
    // in `copy`; every field is valid as zero bytes (`Versioned`), so the
    // bytes not copied leave a valid value, and the copied ones are the
    // caller's fields (a `bool` read as C's `bool`, 0 or 1).
    Ok(unsafe {
        std::ptr::copy_nonoverlapping(desc.cast::<u8>(), copy.as_mut_ptr().cast::<u8>(), covered);
        copy.assume_init()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::ECS_ERR_STALE_ENTITY;

    fn last_error() -> String {
        // SAFETY: never NULL, NUL-terminated, valid until the next failure.
        unsafe { CStr::from_ptr(ecs_last_error_message()) }
            .to_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let status = call("ecs_demo", || panic!("the demo broke"));
        assert_eq!(status, ECS_ERR_PANIC);
        assert_eq!(last_error(), "ecs_demo: panicked: the demo broke");
        let status = call("ecs_demo", || panic!("formatted {}", 42));
        assert_eq!(status, ECS_ERR_PANIC);
        assert_eq!(last_error(), "ecs_demo: panicked: formatted 42");
    }

    #[test]
    fn only_the_body_of_a_call_is_quiet() {
        assert!(!caught_here());
        let mut inside = (false, true, false);
        call("ecs_demo", || {
            inside.0 = caught_here();
            inside.1 = foreign(caught_here);
            inside.2 = caught_here();
            Ok(())
        });
        assert_eq!(inside, (true, false, true));
        assert!(!caught_here());
        // Nested calls (a callback calling the API) and a panic leave it
        // as it was.
        let nested = foreign(|| {
            call("ecs_demo", || {
                let status = call("ecs_inner", || panic!("inner"));
                assert_eq!(status, ECS_ERR_PANIC);
                assert!(caught_here());
                Ok(())
            });
            caught_here()
        });
        assert!(!nested);
        assert!(!caught_here());
    }

    #[test]
    fn failures_set_the_message_and_successes_keep_it() {
        let status = call("ecs_demo", || {
            Err(Failure::new(ECS_ERR_STALE_ENTITY, "gone"))
        });
        assert_eq!(status, ECS_ERR_STALE_ENTITY);
        assert_eq!(call("ecs_demo", || Ok(())), ECS_OK);
        assert_eq!(last_error(), "gone");
        // The message is per thread.
        let other = std::thread::spawn(last_error).join().unwrap();
        assert_eq!(other, "");
    }

    #[test]
    fn an_interior_nul_does_not_cut_the_message() {
        call("ecs_demo", || {
            Err(Failure::new(ECS_ERR_STALE_ENTITY, "a\0b"))
        });
        assert_eq!(last_error(), "a?b");
    }

    #[test]
    fn a_small_struct_size_is_an_invalid_argument() {
        let failure = check_struct_size(4, 24, "ecs_demo", "ecs_demo_desc").unwrap_err();
        assert_eq!(failure.status, crate::status::ECS_ERR_INVALID_ARGUMENT);
        assert!(
            failure.message.contains("sizeof(ecs_demo_desc)"),
            "{}",
            failure.message
        );
        assert!(check_struct_size(32, 24, "ecs_demo", "ecs_demo_desc").is_ok());
    }
}
