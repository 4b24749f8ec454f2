//! The C API from Rust: entities and components between ticks, systems
//! with views and commands, ordering, and the world checksum.

use crate::common;

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
    // SAFETY: `ctx` is the running system's context; `terms` lives across the call.
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
    let engine = Engine::new(1);
    let position = engine.register::<Vec2>(c"Position");
    let velocity = engine.register::<Vec2>(c"Velocity");
    assert_ne!(position, velocity);
    assert_eq!(engine.lookup(c"Velocity"), Ok(velocity));

    let e = engine.spawn();
    assert_ne!(e, 0);
    assert!(engine.is_alive(e));
    engine.insert(e, position, Vec2 { x: 1.0, y: 2.0 });
    assert_eq!(engine.get::<Vec2>(e, position), Vec2 { x: 1.0, y: 2.0 });
    engine.insert(e, position, Vec2 { x: 3.0, y: 4.0 });
    assert_eq!(engine.get::<Vec2>(e, position), Vec2 { x: 3.0, y: 4.0 });

    // Written through the pointer `ecs_get` gives.
    let value = engine.get_ptr(e, position).unwrap();
    // SAFETY: `ecs_get` gave a pointer to the entity's Vec2, valid until the next structural change.
    unsafe { value.cast::<Vec2>().write(Vec2 { x: 5.0, y: 6.0 }) };
    assert_eq!(engine.get::<Vec2>(e, position), Vec2 { x: 5.0, y: 6.0 });

    assert_eq!(engine.has(e, position), Ok(true));
    assert_eq!(engine.has(e, velocity), Ok(false));
    ok(engine.remove(e, position));
    assert_eq!(engine.has(e, position), Ok(false));

    assert_eq!(engine.count(), 1);
    ok(engine.despawn(e));
    assert!(!engine.is_alive(e));
    assert_eq!(engine.count(), 0);
}

#[test]
fn c_systems_move_spawn_and_despawn_through_commands() {
    for threads in [1, 4] {
        let engine = Engine::new(threads);
        let mut ids = Ids {
            position: engine.register::<Vec2>(c"Position"),
            velocity: engine.register::<Vec2>(c"Velocity"),
        };
        let user: *mut c_void = (&raw mut ids).cast();
        let mut spec = SystemSpec::new("movement", Some(movement));
        spec.user_data = user;
        spec.reads = vec![ids.velocity];
        spec.writes = vec![ids.position];
        ok(spec.add(&engine));
        let mut spec = SystemSpec::new("spawner", Some(spawner));
        spec.user_data = user;
        spec.reads = vec![ids.position];
        spec.commands = true;
        ok(spec.add(&engine));

        ok(engine.run(6));
        assert_eq!(engine.ticks(), 6);
        // Each tick t: movement moves every entity by (1, 1); then the
        // spawner sees the moved positions, despawns those with x > 3 and
        // spawns one at x = t, applied after its wave. The entity spawned
        // at tick s has x = t during tick t, so tick 4 despawns those of
        // ticks 0..=3, tick 5 the one of tick 4, and only tick 5's is left.
        assert_eq!(engine.count(), 1, "threads {threads}");
    }
}

#[test]
fn the_checksum_sees_values_and_presence() {
    let engine = Engine::new(1);
    let position = engine.register::<Vec2>(c"Position");
    let e = engine.spawn();
    engine.insert(e, position, Vec2 { x: 1.0, y: 2.0 });
    let checksum = |ids: &[ecs_component_id]| engine.checksum(ids).unwrap();
    let before = checksum(&[position]);
    engine.insert(e, position, Vec2 { x: 1.0, y: 2.5 });
    assert_ne!(checksum(&[position]), before);
    engine.insert(e, position, Vec2 { x: 1.0, y: 2.0 });
    assert_eq!(checksum(&[position]), before);
    ok(engine.remove(e, position));
    assert_ne!(checksum(&[position]), before);
}

#[test]
fn the_checksum_is_the_runtime_world_checksum() {
    let engine = Engine::new(1);
    let position = engine.register::<Vec2>(c"Position");
    let tag = engine.register::<()>(c"Tag");
    let a = engine.spawn();
    let b = engine.spawn();
    engine.insert(a, position, Vec2 { x: 1.5, y: -2.0 });
    engine.insert(b, tag, ());
    // The same world hashed by the Rust function, field by field.
    let expected = {
        use ecs_runtime::checksum::Fnv1a;
        let mut h = Fnv1a::default();
        h.u64(2);
        h.u64(a);
        h.u8(1);
        h.f32(1.5);
        h.f32(-2.0);
        h.u8(0);
        h.u64(b);
        h.u8(0);
        h.u8(1);
        h.finish()
    };
    assert_eq!(engine.checksum(&[position, tag]), Ok(expected));
}

/// The live entities through the two-call pattern of `ecs_entities`.
fn live(engine: &Engine) -> Vec<ecs_entity> {
    let mut len = usize::MAX;
    // SAFETY: a live engine; `len` is valid; no array with capacity 0.
    ok(unsafe { ecs_entities(engine.raw(), ptr::null_mut(), 0, &mut len) });
    let mut out = vec![0; len];
    let mut again = 0;
    // SAFETY: `out` holds `out.len()` handles.
    ok(unsafe { ecs_entities(engine.raw(), out.as_mut_ptr(), out.len(), &mut again) });
    assert_eq!(again, len);
    out
}

#[test]
fn the_live_entities_are_listed_in_handle_order() {
    let engine = Engine::new(1);
    let e: Vec<ecs_entity> = (0..5).map(|_| engine.spawn()).collect();
    ok(engine.despawn(e[1]));
    ok(engine.despawn(e[3]));
    // A freed slot comes back with generation 2 (the high 32 bits): its
    // handle sorts after slot 4's.
    let reborn = engine.spawn();
    assert!([e[1], e[3]].contains(&(reborn & 0xFFFF_FFFF | 1 << 32)));
    assert_eq!(reborn >> 32, 2);
    assert_eq!(live(&engine), vec![e[0], e[2], e[4], reborn]);
    // A short array gets the first handles and the whole count.
    let mut two = [0; 2];
    let mut len = 0;
    // SAFETY: `two` holds 2 handles.
    ok(unsafe { ecs_entities(engine.raw(), two.as_mut_ptr(), 2, &mut len) });
    assert_eq!((two, len), ([e[0], e[2]], 4));
}

#[test]
fn listing_the_entities_refuses_null_pointers() {
    let engine = Engine::new(1);
    engine.spawn();
    let mut len = 0;
    // SAFETY: every pointer is NULL or valid.
    unsafe {
        assert_eq!(
            ecs_entities(ptr::null(), ptr::null_mut(), 0, &mut len),
            ECS_ERR_NULL_POINTER
        );
        assert_eq!(
            ecs_entities(engine.raw(), ptr::null_mut(), 0, ptr::null_mut()),
            ECS_ERR_NULL_POINTER
        );
        assert_eq!(
            ecs_entities(engine.raw(), ptr::null_mut(), 1, &mut len),
            ECS_ERR_NULL_POINTER
        );
    }
    assert_eq!(live(&engine).len(), 1);
}

#[test]
fn two_engines_are_independent() {
    let a = Engine::new(2);
    let b = Engine::new(2);
    let pa = a.register::<u64>(c"Score");
    let pb = b.register::<[u8; 3]>(c"Color");
    let ea = a.spawn();
    a.insert(ea, pa, 7u64);
    // The same handle bits are a different entity (or none) in `b`.
    assert_eq!(b.get_ptr(ea, pb), Err(ECS_ERR_STALE_ENTITY));
    let eb = b.spawn();
    b.insert(eb, pb, [1u8, 2, 3]);
    assert_eq!(a.get::<u64>(ea, pa), 7);
    assert_eq!(b.get::<[u8; 3]>(eb, pb), [1, 2, 3]);
}

#[test]
fn the_version_is_major_then_minor() {
    assert_eq!(ecs_api_version() >> 16, ECS_API_VERSION_MAJOR);
    assert_eq!(ecs_api_version() & 0xFFFF, ECS_API_VERSION_MINOR);
}
