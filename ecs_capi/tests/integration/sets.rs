//! System sets from C (through the rlib): members ordered as a whole
//! after a system, a set condition evaluated once per tick for all its
//! members, and bad calls refused with a status.

use crate::common;

use std::ffi::{CStr, CString, c_void};
use std::ptr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use common::*;
use ecs_capi::*;

/// What the test systems share.
#[derive(Default)]
struct Log {
    /// System names in the order they ran.
    runs: Mutex<Vec<String>>,
    /// The set condition's answer, and how many times it was asked.
    open: AtomicBool,
    asked: AtomicU32,
}

/// Records the running system's name (its `user_data` is a `(&Log, name)`).
unsafe extern "C" fn record(_: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: the test's `(Log, name)` pair, alive across the ticks.
    let (log, name) = unsafe { &*user.cast::<(&Log, &str)>() };
    log.runs.lock().unwrap().push((*name).to_owned());
}

unsafe extern "C" fn gate(_: *const ecs_system_ctx, user: *mut c_void) -> bool {
    // SAFETY: the test's `Log`.
    let log = unsafe { &*user.cast::<Log>() };
    log.asked.fetch_add(1, Ordering::Relaxed);
    log.open.load(Ordering::Relaxed)
}

fn configure(
    engine: &Engine,
    name: &CStr,
    after: &[&CStr],
    run_if: ecs_condition_fn,
    user: *mut c_void,
) -> ecs_status {
    let after: Vec<_> = after.iter().map(|n| n.as_ptr()).collect();
    let desc = ecs_set_desc {
        struct_size: size_of::<ecs_set_desc>() as u32,
        name: name.as_ptr(),
        before: ptr::null(),
        before_len: 0,
        after: after.as_ptr(),
        after_len: after.len(),
        run_if,
        run_if_user_data: user,
    };
    // SAFETY: a live engine; `desc` and what it points to are locals.
    unsafe { ecs_set_configure(engine.raw(), &desc) }
}

#[test]
fn a_set_runs_after_what_it_names_and_under_one_condition() {
    for threads in [1, 4] {
        let engine = Engine::new(threads);
        let log = Log::default();
        log.open.store(true, Ordering::Relaxed);
        let users: Vec<(&Log, &str)> = vec![(&log, "a"), (&log, "b"), (&log, "input")];
        // `a` and `b` are in `physics`, which runs after `input`, added last.
        for (k, user) in users.iter().enumerate() {
            let mut spec = SystemSpec::new(user.1, Some(record));
            spec.user_data = (&raw const *user).cast_mut().cast();
            if k < 2 {
                spec.sets = vec![CString::new("physics").unwrap()];
            }
            ok(spec.add(&engine));
        }
        let log_ptr = (&raw const log).cast_mut().cast();
        ok(configure(
            &engine,
            c"physics",
            &[c"input"],
            Some(gate),
            log_ptr,
        ));
        ok(engine.run(2));
        let runs = log.runs.lock().unwrap().clone();
        assert_eq!(runs.len(), 6, "{runs:?}");
        for tick in runs.chunks(3) {
            assert_eq!(tick[0], "input", "{runs:?}");
        }
        // Asked once per tick, for both members.
        assert_eq!(log.asked.load(Ordering::Relaxed), 2);

        // Closed: the members skip, `input` still runs.
        log.open.store(false, Ordering::Relaxed);
        ok(engine.tick());
        assert_eq!(log.runs.lock().unwrap()[6..], ["input".to_owned()]);
        assert_eq!(log.asked.load(Ordering::Relaxed), 3);
    }
}

#[test]
fn bad_set_calls_return_a_status() {
    let engine = Engine::new(1);
    fails(
        configure(&engine, c"loop", &[c"loop"], None, ptr::null_mut()),
        ECS_ERR_SCHEDULE,
        "itself",
    );
    fails(
        configure(&engine, c"", &[], None, ptr::null_mut()),
        ECS_ERR_INVALID_ARGUMENT,
        "",
    );
    // SAFETY: NULL descriptor on purpose.
    fails(
        unsafe { ecs_set_configure(engine.raw(), ptr::null()) },
        ECS_ERR_NULL_POINTER,
        "desc",
    );
    // A startup system takes no sets.
    let mut start = SystemSpec::new("start", Some(record));
    start.startup = true;
    start.sets = vec![CString::new("physics").unwrap()];
    fails(start.add(&engine), ECS_ERR_INVALID_ARGUMENT, "`sets`");
    // A set ordered after a name nobody has: the build says so.
    ok(configure(
        &engine,
        c"physics",
        &[c"nobody"],
        None,
        ptr::null_mut(),
    ));
    let mut member = SystemSpec::new("member", Some(record));
    let log = Log::default();
    let user: (&Log, &str) = (&log, "member");
    member.user_data = (&raw const user).cast_mut().cast();
    member.sets = vec![CString::new("physics").unwrap()];
    ok(member.add(&engine));
    fails(engine.build(), ECS_ERR_SCHEDULE, "nobody");

    let built = Engine::new(1);
    ok(built.build());
    fails(
        configure(&built, c"late", &[], None, ptr::null_mut()),
        ECS_ERR_WRONG_STATE,
        "already built",
    );
}
