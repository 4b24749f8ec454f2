//! A panic the C API catches prints nothing (its message goes to
//! `ecs_last_error_message`), and every other panic is still reported.
//!
//! One test in its own binary: it sets the process's panic hook before the
//! first C API call, as a C program's Rust dependencies could, and records
//! every panic the hook hears instead of printing it.

mod common;

use std::any::Any;
use std::ffi::c_void;
use std::panic::catch_unwind;
use std::sync::Mutex;

use common::*;
use ecs_capi::*;

/// The messages of the panics the recording hook heard.
static HEARD: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "?".to_owned())
}

fn heard() -> Vec<String> {
    std::mem::take(&mut *HEARD.lock().unwrap())
}

/// A system body that calls Rust code which panics and catches its own
/// panic: not a panic of the C API, so it must be heard.
unsafe extern "C" fn panics_in_its_own_code(_: *mut ecs_system_ctx, user: *mut c_void) {
    let caught = catch_unwind(|| panic!("the game's own panic"));
    // SAFETY: `user` is the test's flag.
    unsafe { *user.cast::<bool>() = caught.is_err() };
}

#[test]
fn caught_panics_print_nothing_and_other_panics_are_heard() {
    std::panic::set_hook(Box::new(|info| {
        HEARD.lock().unwrap().push(message(info.payload()));
    }));

    // A panic inside a call: ECS_ERR_PANIC, the message, and silence.
    assert_eq!(__panic_inside_a_call("a library bug"), ECS_ERR_PANIC);
    assert_eq!(last_error(), "ecs_test_panic: panicked: a library bug");
    assert_eq!(heard(), Vec::<String>::new());

    // The first call installed the quiet hook over ours: a panic outside
    // any call is still heard.
    assert!(catch_unwind(|| panic!("outside the C API")).is_err());
    assert_eq!(heard(), ["outside the C API"]);

    // Inside a call, the C program's own code (here a system body) is not
    // quiet.
    let engine = Engine::new(1);
    let mut caught = false;
    let mut spec = SystemSpec::new("own_panic", Some(panics_in_its_own_code));
    spec.user_data = (&raw mut caught).cast();
    ok(spec.add(&engine));
    ok(engine.tick());
    assert!(caught);
    assert_eq!(heard(), ["the game's own panic"]);

    // The quiet scope ends with the call, on every thread.
    assert_eq!(__panic_inside_a_call("again"), ECS_ERR_PANIC);
    let other = std::thread::spawn(|| catch_unwind(|| panic!("another thread")).is_err());
    assert!(other.join().unwrap());
    assert_eq!(heard(), ["another thread"]);
}
