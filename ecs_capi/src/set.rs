//! System sets from C: a name that systems join (`ecs_system_desc.sets`),
//! ordered as a whole (`before`/`after` a system or another set) and run
//! under one condition, evaluated once per tick as Rust sets are.

use std::ffi::{c_char, c_void};

use crate::SendPtr;
use crate::boundary::{arg, call, check_struct_size, string_arg};
use crate::engine::ecs_engine;
use crate::status::{ECS_ERR_SCHEDULE, Failure, ecs_status};
use crate::system::{CCondition, ecs_condition_fn, names};

/// A set's configuration, for `ecs_set_configure`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ecs_set_desc {
    /// `sizeof(ecs_set_desc)`.
    pub struct_size: u32,
    /// The set's name; UTF-8, NUL-terminated; copied. Set and system names
    /// share one namespace in `before`/`after`.
    pub name: *const c_char,
    /// Systems or sets every member runs before (`before_len` names).
    pub before: *const *const c_char,
    /// Number of names in `before`.
    pub before_len: usize,
    /// Systems or sets every member runs after (`after_len` names).
    pub after: *const *const c_char,
    /// Number of names in `after`.
    pub after_len: usize,
    /// An optional condition for the whole set: evaluated once per tick,
    /// before the set's first member would run, on the worker running
    /// that member, with a context that declares nothing (use `user_data`
    /// for what it reads); `false` skips every member that tick, even if a
    /// member changes what the condition looks at. NULL: none.
    pub run_if: ecs_condition_fn,
    /// Passed to `run_if`; used from whichever worker evaluates it.
    pub run_if_user_data: *mut c_void,
}

/// Orders the set `desc->name` and gives it a condition (adding to what
/// earlier calls for the set gave). Before the build only. A set exists
/// once a system names it in `ecs_system_desc.sets` or this is called;
/// `before`/`after` names are checked at the build (`ECS_ERR_SCHEDULE` for
/// a name no system or set has, or a cycle).
///
/// # Errors
///
/// `ECS_ERR_NULL_POINTER` (engine, desc, name, a non-empty list);
/// `ECS_ERR_INVALID_ARGUMENT` (struct_size, an empty or non-UTF-8 name);
/// `ECS_ERR_SCHEDULE` when `before` or `after` names the set itself;
/// `ECS_ERR_WRONG_STATE` once the schedule is built. Nothing changes on
/// failure.
///
/// # Safety
///
/// Pointers are NULL or valid as described; `run_if` is sound to call from
/// any thread with `run_if_user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ecs_set_configure(
    engine: *mut ecs_engine,
    desc: *const ecs_set_desc,
) -> ecs_status {
    const F: &str = "ecs_set_configure";
    call(F, || {
        // SAFETY: the caller's promise on every pointer.
        let engine = unsafe { arg(engine, F, "engine") }?;
        let mut engine = engine.lock(F)?;
        // SAFETY: NULL or valid, by the caller's promise.
        let desc = unsafe { arg(desc, F, "desc") }?;
        check_struct_size(
            desc.struct_size,
            size_of::<ecs_set_desc>(),
            F,
            "ecs_set_desc",
        )?;
        // SAFETY: NULL or NUL-terminated, by the caller's promise.
        let name = unsafe { string_arg(desc.name, F, "desc->name") }?;
        // SAFETY: NULL or an array of that many C strings, by the caller's promise.
        let before = unsafe { names(desc.before, desc.before_len, F, "desc->before") }?;
        // SAFETY: NULL or an array of that many C strings, by the caller's promise.
        let after = unsafe { names(desc.after, desc.after_len, F, "desc->after") }?;
        for (list, targets) in [("before", &before), ("after", &after)] {
            if targets.contains(&name) {
                return Err(Failure::new(
                    ECS_ERR_SCHEDULE,
                    format!("{F}: set `{name}` names itself in `{list}`"),
                ));
            }
        }
        let tag = engine.tag;
        let condition = desc.run_if.map(|run_if| CCondition {
            run_if,
            user_data: SendPtr(desc.run_if_user_data),
            tag,
            resources: None,
        });
        engine.configure(F, |builder| {
            let mut set = builder.set(name);
            for target in before {
                set.before(target);
            }
            for target in after {
                set.after(target);
            }
            if let Some(condition) = condition {
                set.run_if(condition);
            }
        })
    })
}
