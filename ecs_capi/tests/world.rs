//! The C API from Rust: entities and components between ticks, systems
//! with views and commands, ordering, and the world checksum.

mod common;

use std::ffi::c_void;
use std::ptr;

use common::*;
use ecs_capi::*;

struct Ids {
    position: ecs_component_id,
    velocity: ecs_component_id,
}

unsafe extern "C" fn movement(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    unsafe extern "C" fn chunk(chunk: *const ecs_view_chunk, _: *mut c_void) {
        // SAFETY: the chunk and its columns are valid during the call.
        unsafe {
            let chunk = &*chunk;
            let columns = std::slice::from_raw_parts(chunk.columns, 2);
            let p = std::slice::from_raw_parts_mut(columns[0].cast::<Vec2>(), chunk.len);
            let v = std::slice::from_raw_parts(columns[1].cast::<Vec2>(), chunk.len);
            for (p, v) in p.iter_mut().zip(v) {
                p.x += v.x;
                p.y += v.y;
            }
        }
    }
    // SAFETY: `user` is the `Ids` the test passed.
    let ids = unsafe { &*user.cast::<Ids>() };
    let terms = [ids.position, ids.velocity];
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_view_each_chunk(ctx, terms.as_ptr(), 2, Some(chunk), ptr::null_mut()) });
}

/// Spawns one entity per tick at (tick, 0) moving (1, 1); despawns the
/// entities whose x passed 3.
unsafe extern "C" fn spawner(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    unsafe extern "C" fn each(e: ecs_entity, components: *const *mut c_void, user: *mut c_void) {
        // SAFETY: one valid pointer per id; `user` is the command buffer.
        unsafe {
            let p = &*(*components).cast::<Vec2>();
            if p.x > 3.0 {
                ok(ecs_commands_despawn(user.cast(), e));
            }
        }
    }
    // SAFETY: `user` is the `Ids` the test passed; pointers are valid.
    unsafe {
        let ids = &*user.cast::<Ids>();
        let mut commands = ptr::null_mut();
        ok(ecs_ctx_commands(ctx, &mut commands));
        ok(ecs_view_each(
            ctx,
            &ids.position,
            1,
            Some(each),
            commands.cast(),
        ));
        let mut tick = ecs_tick::default();
        ok(ecs_ctx_tick(ctx, &mut tick));
        let mut e = 0;
        ok(ecs_commands_spawn(commands, &mut e));
        let p = Vec2 {
            x: tick.number as f32,
            y: 0.0,
        };
        let v = Vec2 { x: 1.0, y: 1.0 };
        ok(ecs_commands_insert(
            commands,
            e,
            ids.position,
            (&raw const p).cast(),
        ));
        ok(ecs_commands_insert(
            commands,
            e,
            ids.velocity,
            (&raw const v).cast(),
        ));
    }
}

#[test]
fn components_round_trip_between_ticks() {
    let engine = engine(1);
    let position = register::<Vec2>(engine, c"Position");
    let velocity = register::<Vec2>(engine, c"Velocity");
    assert_ne!(position, velocity);
    let mut found = u32::MAX;
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_component_lookup(engine, c"Velocity".as_ptr(), &mut found) });
    assert_eq!(found, velocity);

    let e = spawn(engine);
    assert_ne!(e, 0);
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    assert!(unsafe { ecs_is_alive(engine, e) });
    insert(engine, e, position, Vec2 { x: 1.0, y: 2.0 });
    assert_eq!(get::<Vec2>(engine, e, position), Vec2 { x: 1.0, y: 2.0 });
    insert(engine, e, position, Vec2 { x: 3.0, y: 4.0 });
    assert_eq!(get::<Vec2>(engine, e, position), Vec2 { x: 3.0, y: 4.0 });

    // Written through the pointer `ecs_get` gives.
    let mut value: *mut c_void = ptr::null_mut();
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_get(engine, e, position, &mut value) });
    // SAFETY: `ecs_get` gave a pointer to the entity's Vec2, valid until the next structural change.
    unsafe { value.cast::<Vec2>().write(Vec2 { x: 5.0, y: 6.0 }) };
    assert_eq!(get::<Vec2>(engine, e, position), Vec2 { x: 5.0, y: 6.0 });

    let mut has = false;
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_has(engine, e, position, &mut has) });
    assert!(has);
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_has(engine, e, velocity, &mut has) });
    assert!(!has);
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_remove(engine, e, position) });
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_has(engine, e, position, &mut has) });
    assert!(!has);

    let mut count = 0;
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_entity_count(engine, &mut count) });
    assert_eq!(count, 1);
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_despawn(engine, e) });
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    assert!(!unsafe { ecs_is_alive(engine, e) });
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_entity_count(engine, &mut count) });
    assert_eq!(count, 0);
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe { ecs_engine_destroy(engine) };
}

#[test]
fn c_systems_move_spawn_and_despawn_through_commands() {
    for threads in [1, 4] {
        let engine = engine(threads);
        let mut ids = Ids {
            position: register::<Vec2>(engine, c"Position"),
            velocity: register::<Vec2>(engine, c"Velocity"),
        };
        let user: *mut c_void = (&raw mut ids).cast();
        let mut spec = SystemSpec::new("movement", Some(movement));
        spec.user_data = user;
        spec.reads = vec![ids.velocity];
        spec.writes = vec![ids.position];
        ok(spec.add(engine));
        let mut spec = SystemSpec::new("spawner", Some(spawner));
        spec.user_data = user;
        spec.reads = vec![ids.position];
        spec.commands = true;
        ok(spec.add(engine));

        // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
        ok(unsafe { ecs_engine_run(engine, 6) });
        let mut ticks = 0;
        // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
        ok(unsafe { ecs_engine_ticks(engine, &mut ticks) });
        assert_eq!(ticks, 6);
        // Each tick t: movement moves every entity by (1, 1); then the
        // spawner sees the moved positions, despawns those with x > 3 and
        // spawns one at x = t, applied after its wave. The entity spawned
        // at tick s has x = t during tick t, so tick 4 despawns those of
        // ticks 0..=3, tick 5 the one of tick 4, and only tick 5's is left.
        let mut count = 0;
        // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
        ok(unsafe { ecs_entity_count(engine, &mut count) });
        assert_eq!(count, 1, "threads {threads}");
        // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
        unsafe { ecs_engine_destroy(engine) };
    }
}

#[test]
fn the_checksum_sees_values_and_presence() {
    let engine = engine(1);
    let position = register::<Vec2>(engine, c"Position");
    let e = spawn(engine);
    insert(engine, e, position, Vec2 { x: 1.0, y: 2.0 });
    let checksum = |ids: &[ecs_component_id]| {
        let mut out = 0;
        // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
        ok(unsafe { ecs_world_checksum(engine, ids.as_ptr(), ids.len(), &mut out) });
        out
    };
    let before = checksum(&[position]);
    insert(engine, e, position, Vec2 { x: 1.0, y: 2.5 });
    assert_ne!(checksum(&[position]), before);
    insert(engine, e, position, Vec2 { x: 1.0, y: 2.0 });
    assert_eq!(checksum(&[position]), before);
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    ok(unsafe { ecs_remove(engine, e, position) });
    assert_ne!(checksum(&[position]), before);
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe { ecs_engine_destroy(engine) };
}

#[test]
fn two_engines_are_independent() {
    let a = engine(2);
    let b = engine(2);
    let pa = register::<u64>(a, c"Score");
    let pb = register::<[u8; 3]>(b, c"Color");
    let ea = spawn(a);
    insert(a, ea, pa, 7u64);
    // The same handle bits are a different entity (or none) in `b`.
    let mut value: *mut c_void = ptr::null_mut();
    assert_eq!(
        // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
        unsafe { ecs_get(b, ea, pb, &mut value) },
        ECS_ERR_STALE_ENTITY
    );
    let eb = spawn(b);
    insert(b, eb, pb, [1u8, 2, 3]);
    assert_eq!(get::<u64>(a, ea, pa), 7);
    assert_eq!(get::<[u8; 3]>(b, eb, pb), [1, 2, 3]);
    // SAFETY: the pointers passed point at live locals (or are NULL where the call allows it) for the call.
    unsafe {
        ecs_engine_destroy(a);
        ecs_engine_destroy(b);
    }
}

#[test]
fn the_version_is_major_then_minor() {
    assert_eq!(ecs_api_version() >> 16, ECS_API_VERSION_MAJOR);
    assert_eq!(ecs_api_version() & 0xFFFF, ECS_API_VERSION_MINOR);
}
