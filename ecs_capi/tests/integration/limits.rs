//! The C API's answers when the allocator cannot give what a call needs:
//! a status (`ECS_ERR_LIMIT`, or the reason a size is refused), never an
//! abort, and a world left as it was. (The other error paths are in
//! `errors.rs`.)

use crate::common;

use std::ffi::c_void;
use std::ptr;

use common::*;
use ecs_capi::*;

#[test]
#[cfg_attr(
    miri,
    ignore = "Miri stops at an allocation it cannot make instead of returning null"
)]
fn an_event_the_allocator_cannot_copy_is_a_limit() {
    let desc = ecs_queue_desc {
        struct_size: size_of::<ecs_queue_desc>() as u32,
        event_size: isize::MAX as usize,
        capacity: 0,
    };
    let mut queue = ptr::null_mut();
    // SAFETY: both pointers are to locals that live across the call.
    ok(unsafe { ecs_queue_create(&desc, &mut queue) });
    let stand_in = 0u64;
    // SAFETY: a live queue; the copy is refused before anything is read
    // from the event (what this checks), so a `u64` stands for it.
    unsafe {
        for push in [ecs_queue_push, ecs_queue_try_push] {
            fails(
                push(queue, (&raw const stand_in).cast()),
                ECS_ERR_LIMIT,
                "the allocator refused 9223372036854775807 bytes",
            );
        }
        let mut out = 0u64;
        fails(
            ecs_queue_try_pop(queue, (&raw mut out).cast()),
            ECS_ERR_QUEUE_EMPTY,
            "empty",
        );
        ecs_queue_destroy(queue);
    }
}

#[test]
fn a_component_too_large_for_its_alignment_is_refused_with_the_reason() {
    let engine = Engine::new(1);
    let mut desc = component_desc::<u64>(c"Huge");
    desc.size = (isize::MAX as usize & !7) + 8;
    fails(
        engine.register_desc(&desc).unwrap_err(),
        ECS_ERR_INVALID_ARGUMENT,
        "size 9223372036854775808 is too large",
    );
    assert!(!last_error().contains("power of two"), "{}", last_error());
}

/// A component as large as a Rust allocation may be (`PTRDIFF_MAX` rounded
/// down to 8): registering it works, but no allocator can hold a value.
fn huge_component(engine: &Engine) -> ecs_component_id {
    let mut desc = component_desc::<u64>(c"Huge");
    desc.size = isize::MAX as usize & !7;
    engine
        .register_desc(&desc)
        .unwrap_or_else(|status| panic!("{status}: {}", last_error()))
}

#[test]
#[cfg_attr(
    miri,
    ignore = "Miri stops at an allocation it cannot make instead of returning null"
)]
fn a_value_the_allocator_cannot_hold_is_a_limit_from_ecs_insert() {
    let engine = Engine::new(1);
    let huge = huge_component(&engine);
    let small = engine.register::<u32>(c"Small");
    let e = engine.spawn();
    engine.insert(e, small, 5u32);
    // Nothing is read from the value when the room cannot be made, so a
    // `u64` stands for the huge value.
    fails(
        engine.try_insert(e, huge, 1u64),
        ECS_ERR_LIMIT,
        "ecs_insert: cannot store a value of component `Huge`: the allocator refused",
    );
    assert_eq!(engine.has(e, huge), Ok(false));
    assert_eq!(engine.get::<u32>(e, small), 5);
    // The engine is usable.
    let f = engine.spawn();
    engine.insert(f, small, 6u32);
    ok(engine.tick());
    assert_eq!(engine.count(), 2);
    assert_eq!(engine.get::<u32>(f, small), 6);
}

/// What a system inserting a huge value through its commands was answered.
struct HugeInsert {
    entity: ecs_entity,
    huge: ecs_component_id,
    small: ecs_component_id,
    insert: ecs_status,
    message: String,
    after: ecs_status,
}

unsafe extern "C" fn insert_huge(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `HugeInsert`; the huge insert is refused
    // before anything is read from its value (what the test checks), so a
    // `u64` stands for it.
    unsafe {
        let seen = &mut *user.cast::<HugeInsert>();
        let mut commands = ptr::null_mut();
        ok(ecs_ctx_commands(ctx, &mut commands));
        let stand_in = 1u64;
        seen.insert = ecs_commands_insert(
            commands,
            seen.entity,
            seen.huge,
            (&raw const stand_in).cast(),
        );
        seen.message = last_error();
        let value = 9u32;
        seen.after =
            ecs_commands_insert(commands, seen.entity, seen.small, (&raw const value).cast());
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "Miri stops at an allocation it cannot make instead of returning null"
)]
fn a_value_the_allocator_cannot_hold_is_a_limit_from_ecs_commands_insert() {
    let engine = Engine::new(2);
    let huge = huge_component(&engine);
    let small = engine.register::<u32>(c"Small");
    let e = engine.spawn();
    let mut seen = HugeInsert {
        entity: e,
        huge,
        small,
        insert: ECS_OK,
        message: String::new(),
        after: ECS_ERR_PANIC,
    };
    let mut spec = SystemSpec::new("inserter", Some(insert_huge));
    spec.user_data = (&raw mut seen).cast();
    spec.commands = true;
    ok(spec.add(&engine));
    ok(engine.tick());
    assert_eq!(seen.insert, ECS_ERR_LIMIT, "{}", seen.message);
    assert!(
        seen.message.contains(
            "ecs_commands_insert: cannot store a value of component `Huge`: the allocator refused"
        ),
        "{}",
        seen.message
    );
    // The buffer still works: the next command was recorded and applied.
    assert_eq!(seen.after, ECS_OK);
    assert_eq!(engine.get::<u32>(e, small), 9);
    assert_eq!(engine.has(e, huge), Ok(false));
    ok(engine.tick());
    assert_eq!(engine.ticks(), 2);
}
