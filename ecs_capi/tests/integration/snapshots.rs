//! Snapshots from C (`ecs_engine_save`, `ecs_engine_load`,
//! `ecs_snapshot_free`), called as a C program would: a world saved from
//! one engine and loaded into a fresh one built the same way comes back
//! equal (entities, values, hierarchy, disabled entities, tick counter)
//! and goes on equal (the next ticks and spawns); every refusal has its
//! status and message and leaves the engine as it was.

use crate::common;

use std::ffi::CStr;

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicI32, Ordering};

use common::*;
use ecs_capi::*;

const FORMATS: [ecs_snapshot_format; 2] = [ECS_SNAPSHOT_POSTCARD, ECS_SNAPSHOT_JSON];

/// Spawns one entity per tick at (tick, 0) moving (1, 0.5), through its
/// commands (so its reserve of handles matters for the next spawns).
unsafe extern "C" fn spawner(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the engine's `MoveIds`; every pointer is valid for its call.
    unsafe {
        let ids = &*user.cast::<MoveIds>();
        let mut commands = ptr::null_mut();
        ok(ecs_ctx_commands(ctx, &mut commands));
        let mut tick = ecs_tick::default();
        ok(ecs_ctx_tick(ctx, &mut tick));
        let mut e = 0;
        ok(ecs_commands_spawn(commands, &mut e));
        let p = Vec2 {
            x: tick.number as f32,
            y: 0.0,
        };
        let v = Vec2 { x: 1.0, y: 0.5 };
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

/// Adds the two systems to `engine`, with `ids` as their user data.
fn add_systems(engine: &Engine, ids: &mut MoveIds) {
    let user: *mut c_void = (&raw mut *ids).cast();
    let mut spec = SystemSpec::new("movement", Some(movement));
    spec.user_data = user;
    spec.reads = vec![ids.velocity];
    spec.writes = vec![ids.position];
    ok(spec.add(engine));
    let mut spec = SystemSpec::new("spawner", Some(spawner));
    spec.user_data = user;
    spec.commands = true;
    ok(spec.add(engine));
}

fn set_parent(engine: &Engine, child: ecs_entity, parent: ecs_entity) {
    // SAFETY: a live engine (see `common::Engine`).
    ok(unsafe { ecs_set_parent(engine.raw(), child, parent) });
}

fn parent(engine: &Engine, e: ecs_entity) -> ecs_entity {
    let mut out = 0;
    // SAFETY: a live engine and a local to write.
    ok(unsafe { ecs_parent(engine.raw(), e, &mut out) });
    out
}

fn disable(engine: &Engine, e: ecs_entity) {
    let mut changed = false;
    // SAFETY: a live engine and a local to write.
    ok(unsafe { ecs_disable(engine.raw(), e, &mut changed) });
    assert!(changed);
}

fn is_disabled(engine: &Engine, e: ecs_entity) -> bool {
    let mut out = false;
    // SAFETY: a live engine and a local to write.
    ok(unsafe { ecs_is_disabled(engine.raw(), e, &mut out) });
    out
}

/// Registers the saved world's components on `engine`: Position and
/// Velocity (savable `Vec2`s) and Marker (savable, zero-size); returns
/// the first two ids.
fn register_savable(engine: &Engine) -> (ecs_component_id, ecs_component_id) {
    let position = engine
        .register_desc(&savable_desc::<Vec2>(c"Position"))
        .unwrap();
    let velocity = engine
        .register_desc(&savable_desc::<Vec2>(c"Velocity"))
        .unwrap();
    engine
        .register_desc(&savable_desc::<()>(c"Marker"))
        .unwrap();
    (position, velocity)
}

/// A saved world: Position and Velocity (savable), a zero-size savable
/// Marker, a child and a disabled entity, a despawned one (in the free
/// queue), and three ticks of the two systems.
struct Source {
    engine: Engine,
    ids: Box<MoveIds>,
    /// `[root, child, disabled]`.
    e: [ecs_entity; 3],
}

fn source() -> Source {
    let engine = Engine::new(2);
    let position = engine
        .register_desc(&savable_desc::<Vec2>(c"Position"))
        .unwrap();
    let velocity = engine
        .register_desc(&savable_desc::<Vec2>(c"Velocity"))
        .unwrap();
    let marker = engine
        .register_desc(&savable_desc::<()>(c"Marker"))
        .unwrap();
    let mut ids = Box::new(MoveIds { position, velocity });
    add_systems(&engine, &mut ids);
    let root = engine.spawn();
    let gone = engine.spawn();
    let child = engine.spawn();
    let disabled = engine.spawn();
    engine.insert(root, position, Vec2 { x: 1.0, y: 2.0 });
    engine.insert(child, position, Vec2 { x: -3.0, y: 0.25 });
    engine.insert(child, marker, ());
    engine.insert(disabled, position, Vec2 { x: 9.0, y: 9.0 });
    engine.insert(disabled, velocity, Vec2 { x: 1.0, y: 1.0 });
    ok(engine.despawn(gone));
    set_parent(&engine, child, root);
    disable(&engine, disabled);
    ok(engine.run(3));
    Source {
        engine,
        ids,
        e: [root, child, disabled],
    }
}

/// A fresh engine built as the source: the same components (registered
/// in another order, after another one, so the ids differ) and systems.
fn fresh() -> (Engine, Box<MoveIds>) {
    let engine = Engine::new(3);
    engine.register_desc(&savable_desc::<u8>(c"Extra")).unwrap();
    engine
        .register_desc(&savable_desc::<()>(c"Marker"))
        .unwrap();
    let velocity = engine
        .register_desc(&savable_desc::<Vec2>(c"Velocity"))
        .unwrap();
    let position = engine
        .register_desc(&savable_desc::<Vec2>(c"Position"))
        .unwrap();
    let mut ids = Box::new(MoveIds { position, velocity });
    add_systems(&engine, &mut ids);
    ok(engine.build());
    (engine, ids)
}

/// What a test compares of an engine: entity count, tick counter and
/// the checksum over Position, Velocity and Marker (those registered).
fn fingerprint(engine: &Engine) -> (usize, u64, u64) {
    let ids: Vec<ecs_component_id> = [c"Position", c"Velocity", c"Marker"]
        .iter()
        .filter_map(|name| engine.lookup(name).ok())
        .collect();
    (
        engine.count(),
        engine.ticks(),
        engine.checksum(&ids).unwrap(),
    )
}

#[test]
fn a_world_round_trips_and_goes_on_equal_in_both_formats() {
    for format in FORMATS {
        let src = source();
        let bytes = src.engine.save(format).unwrap();
        let (loaded, ids) = fresh();
        ok(loaded.load(format, &bytes));
        assert_eq!(fingerprint(&loaded), fingerprint(&src.engine), "{format}");
        assert_eq!(loaded.ticks(), 3);
        let [root, child, disabled] = src.e;
        assert_eq!(
            loaded.get::<Vec2>(child, ids.position),
            Vec2 { x: -3.0, y: 0.25 }
        );
        assert_eq!(parent(&loaded, child), root);
        assert!(is_disabled(&loaded, disabled));
        assert!(!is_disabled(&loaded, root));
        let marker = loaded.lookup(c"Marker").unwrap();
        assert_eq!(loaded.has(child, marker), Ok(true));
        assert_eq!(loaded.has(root, marker), Ok(false));

        // The next ticks (the spawner's reserved handles) and spawns are
        // the saved engine's.
        ok(src.engine.run(2));
        ok(loaded.run(2));
        assert_eq!(fingerprint(&loaded), fingerprint(&src.engine), "{format}");
        assert_eq!(loaded.spawn(), src.engine.spawn(), "{format}");
        assert_eq!(loaded.spawn(), src.engine.spawn(), "{format}");
        drop(src.ids);
    }
}

#[test]
fn a_json_snapshot_is_readable_and_names_the_components() {
    let src = source();
    let bytes = src.engine.save(ECS_SNAPSHOT_JSON).unwrap();
    let text = std::str::from_utf8(&bytes).unwrap();
    assert!(text.contains("\"Position\"") && text.contains("\"Marker\""));
    // Postcard is the compact one.
    let compact = src.engine.save(ECS_SNAPSHOT_POSTCARD).unwrap();
    assert!(compact.len() < bytes.len());
    // JSON bytes are not postcard.
    let (loaded, _ids) = fresh();
    let before = fingerprint(&loaded);
    fails(
        loaded.load(ECS_SNAPSHOT_POSTCARD, &bytes),
        ECS_ERR_SNAPSHOT,
        "ecs_engine_load",
    );
    assert_eq!(fingerprint(&loaded), before);
}

#[test]
fn a_component_that_is_not_savable_with_values_refuses_the_save() {
    let engine = Engine::new(1);
    let position = engine
        .register_desc(&savable_desc::<Vec2>(c"Position"))
        .unwrap();
    let handle = engine.register::<u64>(c"FileHandle");
    let e = engine.spawn();
    engine.insert(e, position, Vec2 { x: 1.0, y: 1.0 });
    ok(engine.build());
    // Registered but empty: nothing is lost, the save goes on.
    let saved = engine.save(ECS_SNAPSHOT_POSTCARD).unwrap();
    engine.insert(e, handle, 7u64);
    for format in FORMATS {
        assert_eq!(engine.save(format), Err(ECS_ERR_SNAPSHOT));
        let message = last_error();
        assert!(
            message.contains("`FileHandle`") && message.contains("savable"),
            "{message}"
        );
    }
    assert_eq!(engine.get::<u64>(e, handle), 7);
    ok(engine.remove(e, handle));
    assert_eq!(engine.save(ECS_SNAPSHOT_POSTCARD), Ok(saved));
}

unsafe extern "C" fn no_op_drop(_: *mut c_void, _: *mut c_void) {}

#[test]
fn a_savable_component_cannot_have_a_destructor_and_an_old_struct_is_not_savable() {
    let engine = Engine::new(1);
    let mut desc = savable_desc::<u32>(c"Owned");
    desc.drop = Some(no_op_drop);
    assert_eq!(engine.register_desc(&desc), Err(ECS_ERR_INVALID_ARGUMENT));
    assert!(last_error().contains("destructor"), "{}", last_error());
    assert_eq!(engine.lookup(c"Owned"), Err(ECS_ERR_UNKNOWN_COMPONENT));
    // Without `savable`, the same component registers.
    desc.savable = false;
    engine.register_desc(&desc).unwrap();

    // A caller built with API 2.2's header: its struct ends before
    // `savable`, whose bytes are not read (here they say true).
    let mut old = savable_desc::<u32>(c"Old");
    old.struct_size = std::mem::offset_of!(ecs_component_desc, savable) as u32;
    let id = engine.register_desc(&old).unwrap();
    let e = engine.spawn();
    engine.insert(e, id, 5u32);
    ok(engine.build());
    fails(
        engine.save(ECS_SNAPSHOT_POSTCARD).unwrap_err(),
        ECS_ERR_SNAPSHOT,
        "`Old`",
    );
    // One byte short of version 1 is refused.
    old.struct_size -= 1;
    old.name = c"Older".as_ptr();
    assert_eq!(engine.register_desc(&old), Err(ECS_ERR_INVALID_ARGUMENT));
}

#[test]
fn a_load_that_does_not_fit_the_engine_changes_nothing() {
    let src = source();
    let bytes = src.engine.save(ECS_SNAPSHOT_POSTCARD).unwrap();

    // A target with a world of its own, to see that it is untouched.
    let target = |position: ecs_component_desc| {
        let engine = Engine::new(1);
        let position = engine.register_desc(&position).unwrap();
        let velocity = engine
            .register_desc(&savable_desc::<Vec2>(c"Velocity"))
            .unwrap();
        engine
            .register_desc(&savable_desc::<()>(c"Marker"))
            .unwrap();
        let mut ids = Box::new(MoveIds { position, velocity });
        add_systems(&engine, &mut ids);
        let e = engine.spawn();
        engine.insert(e, velocity, Vec2 { x: 4.0, y: 4.0 });
        ok(engine.run(1));
        (engine, ids)
    };
    let check = |engine: &Engine, format, bytes: &[u8], status, words: &str| {
        let before = fingerprint(engine);
        fails(engine.load(format, bytes), status, words);
        assert_eq!(fingerprint(engine), before, "{words}");
    };

    // Position of another size, or not savable.
    let (engine, _ids) = target(savable_desc::<[f32; 3]>(c"Position"));
    check(
        &engine,
        ECS_SNAPSHOT_POSTCARD,
        &bytes,
        ECS_ERR_SNAPSHOT,
        "Position",
    );
    assert!(
        last_error().contains("12") && last_error().contains('8'),
        "{}",
        last_error()
    );
    let (engine, _ids) = target(component_desc::<Vec2>(c"Position"));
    check(
        &engine,
        ECS_SNAPSHOT_POSTCARD,
        &bytes,
        ECS_ERR_SNAPSHOT,
        "Position",
    );

    // No Position at all.
    let (engine, _ids) = target(savable_desc::<Vec2>(c"Elsewhere"));
    check(
        &engine,
        ECS_SNAPSHOT_POSTCARD,
        &bytes,
        ECS_ERR_SNAPSHOT,
        "Position",
    );

    // Garbage, a cut, a flipped byte, nothing, an unknown format.
    let (engine, _ids) = target(savable_desc::<Vec2>(c"Position"));
    let f = ECS_SNAPSHOT_POSTCARD;
    check(
        &engine,
        f,
        b"not a snapshot",
        ECS_ERR_SNAPSHOT,
        "ecs_engine_load",
    );
    check(
        &engine,
        f,
        &bytes[..bytes.len() / 2],
        ECS_ERR_SNAPSHOT,
        "ecs_engine_load",
    );
    let mut flipped = bytes.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x10;
    check(&engine, f, &flipped, ECS_ERR_SNAPSHOT, "ecs_engine_load");
    check(&engine, f, &[], ECS_ERR_SNAPSHOT, "ecs_engine_load");
    check(&engine, ECS_SNAPSHOT_JSON, &bytes, ECS_ERR_SNAPSHOT, "JSON");
    check(&engine, 7, &bytes, ECS_ERR_INVALID_ARGUMENT, "format 7");
    // The same bytes load into that engine afterwards.
    ok(engine.load(f, &bytes));
    assert_eq!(fingerprint(&engine), fingerprint(&src.engine));

    // Other systems: one missing.
    let engine = Engine::new(1);
    let (position, velocity) = register_savable(&engine);
    let mut ids = MoveIds { position, velocity };
    let mut spec = SystemSpec::new("movement", Some(movement));
    spec.user_data = (&raw mut ids).cast();
    spec.reads = vec![velocity];
    spec.writes = vec![position];
    ok(spec.add(&engine));
    ok(engine.build());
    check(&engine, f, &bytes, ECS_ERR_SNAPSHOT, "system");
}

#[test]
fn null_pointers_and_an_unbuilt_schedule_are_refused() {
    let src = source();
    let bytes = src.engine.save(ECS_SNAPSHOT_POSTCARD).unwrap();
    let mut out: *mut u8 = ptr::null_mut();
    let mut len = 0usize;
    // SAFETY: NULL where the test says so; the other pointers are locals.
    unsafe {
        let f = ECS_SNAPSHOT_POSTCARD;
        fails(
            ecs_engine_save(ptr::null(), f, &mut out, &mut len),
            ECS_ERR_NULL_POINTER,
            "engine",
        );
        let engine = src.engine.raw();
        fails(
            ecs_engine_save(engine, f, ptr::null_mut(), &mut len),
            ECS_ERR_NULL_POINTER,
            "out_bytes",
        );
        fails(
            ecs_engine_save(engine, f, &mut out, ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "out_len",
        );
        fails(
            ecs_engine_save(engine, 2, &mut out, &mut len),
            ECS_ERR_INVALID_ARGUMENT,
            "format",
        );
        assert!(out.is_null() && len == 0);
        fails(
            ecs_engine_load(ptr::null_mut(), f, bytes.as_ptr(), bytes.len()),
            ECS_ERR_NULL_POINTER,
            "engine",
        );
        fails(
            ecs_engine_load(engine, f, ptr::null(), 4),
            ECS_ERR_NULL_POINTER,
            "bytes",
        );
        // NULL with no bytes is an empty snapshot: not one.
        fails(
            ecs_engine_load(engine, f, ptr::null(), 0),
            ECS_ERR_SNAPSHOT,
            "ecs_engine_load",
        );
        ecs_snapshot_free(ptr::null_mut(), 0);
    }

    // Before the build: refused, and the engine stays unbuilt (a system
    // can still be added).
    let engine = Engine::new(1);
    let (position, velocity) = register_savable(&engine);
    let e = engine.spawn();
    engine.insert(e, position, Vec2 { x: 1.0, y: 2.0 });
    fails(
        engine.save(ECS_SNAPSHOT_POSTCARD).unwrap_err(),
        ECS_ERR_WRONG_STATE,
        "ecs_engine_build",
    );
    fails(
        engine.load(ECS_SNAPSHOT_POSTCARD, &bytes),
        ECS_ERR_WRONG_STATE,
        "ecs_engine_build",
    );
    assert_eq!(engine.get::<Vec2>(e, position), Vec2 { x: 1.0, y: 2.0 });
    let mut ids = Box::new(MoveIds { position, velocity });
    add_systems(&engine, &mut ids);
    ok(engine.build());
    ok(engine.load(ECS_SNAPSHOT_POSTCARD, &bytes));
    assert_eq!(fingerprint(&engine), fingerprint(&src.engine));
}

#[test]
fn the_buffer_outlives_its_engine() {
    let src = source();
    let mut out: *mut u8 = ptr::null_mut();
    let mut len = 0usize;
    // SAFETY: a live engine and locals to write.
    ok(unsafe { ecs_engine_save(src.engine.raw(), ECS_SNAPSHOT_JSON, &mut out, &mut len) });
    let expected = fingerprint(&src.engine);
    src.engine.destroy();
    let (loaded, _ids) = fresh();
    // SAFETY: the buffer of `len` bytes from the save, not freed yet.
    let bytes = unsafe { std::slice::from_raw_parts(out, len) };
    ok(loaded.load(ECS_SNAPSHOT_JSON, bytes));
    assert_eq!(fingerprint(&loaded), expected);
    // SAFETY: the save's buffer and length, freed once.
    unsafe { ecs_snapshot_free(out, len) };
}

#[test]
fn an_engine_with_a_resource_not_declared_savable_is_neither_saved_nor_loaded() {
    let src = source();
    let bytes = src.engine.save(ECS_SNAPSHOT_POSTCARD).unwrap();
    let (engine, _ids) = fresh();
    engine.resource(c"Gravity", &9.81f32);
    let before = fingerprint(&engine);
    fails(
        engine.save(ECS_SNAPSHOT_POSTCARD).unwrap_err(),
        ECS_ERR_SNAPSHOT,
        "not declared savable (`Gravity`)",
    );
    fails(
        engine.load(ECS_SNAPSHOT_POSTCARD, &bytes),
        ECS_ERR_SNAPSHOT,
        "`Gravity`",
    );
    assert_eq!(fingerprint(&engine), before);
}

#[test]
fn a_version_1_resource_descriptor_is_not_savable() {
    let (engine, _ids) = fresh();
    let value = 5u32;
    // An older caller's struct stops before `savable`: the `true` after
    // it is not read.
    let desc = ecs_resource_desc {
        struct_size: std::mem::offset_of!(ecs_resource_desc, savable) as u32,
        name: c"Old".as_ptr(),
        size: 4,
        align: 4,
        initial: (&raw const value).cast(),
        savable: true,
    };
    let mut id = 0;
    // SAFETY: a live engine; the descriptor, its name, `value` and `id` are locals.
    ok(unsafe { ecs_resource_register(engine.raw(), &desc, &mut id) });
    assert_eq!(engine.resource_get::<u32>(id), 5);
    fails(
        engine.save(ECS_SNAPSHOT_POSTCARD).unwrap_err(),
        ECS_ERR_SNAPSHOT,
        "not declared savable (`Old`)",
    );
}

/// A source engine with two savable resources, `Score` (a u64) and
/// `Wind` (a Vec2).
fn source_with_resources() -> (Source, ecs_resource_id, ecs_resource_id) {
    let src = source();
    let score = src
        .engine
        .try_resource_desc(c"Score", &41u64, true)
        .unwrap();
    let wind = src
        .engine
        .try_resource_desc(c"Wind", &Vec2 { x: 0.5, y: -1.0 }, true)
        .unwrap();
    (src, score, wind)
}

#[test]
fn savable_resources_round_trip_with_the_world_in_both_formats() {
    for format in [ECS_SNAPSHOT_POSTCARD, ECS_SNAPSHOT_JSON] {
        let (src, score, wind) = source_with_resources();
        let bytes = src.engine.save(format).unwrap();
        // The engine saved is unchanged, and saving again gives the same bytes.
        assert_eq!(src.engine.resource_get::<u64>(score), 41);
        assert_eq!(src.engine.save(format).unwrap(), bytes);
        // Loaded into a fresh engine with the same resources (other values).
        let (loaded, _ids) = fresh();
        let l_score = loaded.try_resource_desc(c"Score", &0u64, true).unwrap();
        let l_wind = loaded
            .try_resource_desc(c"Wind", &Vec2 { x: 0.0, y: 0.0 }, true)
            .unwrap();
        ok(loaded.load(format, &bytes));
        assert_eq!(loaded.resource_get::<u64>(l_score), 41);
        assert_eq!(
            loaded.resource_get::<Vec2>(l_wind),
            Vec2 { x: 0.5, y: -1.0 }
        );
        assert_eq!(fingerprint(&loaded), fingerprint(&src.engine));
        // Back into the source after a change: the saved value returns.
        ok(src.engine.resource_set(score, &7u64));
        ok(src.engine.load(format, &bytes));
        assert_eq!(src.engine.resource_get::<u64>(score), 41);
        assert_eq!(
            src.engine.resource_get::<Vec2>(wind),
            Vec2 { x: 0.5, y: -1.0 }
        );
    }
}

#[test]
fn a_snapshot_with_other_resources_loads_nothing() {
    let (src, _score, _wind) = source_with_resources();
    let with = src.engine.save(ECS_SNAPSHOT_POSTCARD).unwrap();
    let plain = source().engine.save(ECS_SNAPSHOT_POSTCARD).unwrap();

    // Another size, another name, one missing, none, one more: refused,
    // naming both lists, and nothing changes.
    let cases: [&[(&CStr, usize)]; 4] = [
        &[(c"Score", 4), (c"Wind", 8)],
        &[(c"Score", 8), (c"Breeze", 8)],
        &[(c"Score", 8)],
        &[(c"Score", 8), (c"Wind", 8), (c"Rain", 4)],
    ];
    for resources in cases {
        let (engine, _ids) = fresh();
        for &(name, size) in resources {
            if size == 8 {
                engine.try_resource_desc(name, &[3u8; 8], true).unwrap();
            } else {
                engine.try_resource_desc(name, &[3u8; 4], true).unwrap();
            }
        }
        let before = fingerprint(&engine);
        fails(
            engine.load(ECS_SNAPSHOT_POSTCARD, &with),
            ECS_ERR_SNAPSHOT,
            "the snapshot's C resources are `Score` (8 bytes), `Wind` (8 bytes)",
        );
        assert_eq!(fingerprint(&engine), before, "{resources:?}");
        // A snapshot of an engine without resources does not load into one
        // with some.
        fails(
            engine.load(ECS_SNAPSHOT_POSTCARD, &plain),
            ECS_ERR_SNAPSHOT,
            "the snapshot's C resources are none",
        );
        assert_eq!(fingerprint(&engine), before, "{resources:?}");
    }
    // And one with resources does not load into an engine without them.
    let (engine, _ids) = fresh();
    let before = fingerprint(&engine);
    fails(
        engine.load(ECS_SNAPSHOT_POSTCARD, &with),
        ECS_ERR_SNAPSHOT,
        "this engine's none",
    );
    assert_eq!(fingerprint(&engine), before);
}

/// The statuses a system got calling save and load on its own engine.
static DURING_TICK: [AtomicI32; 2] = [AtomicI32::new(-1), AtomicI32::new(-1)];

/// Calls `ecs_engine_save` and `ecs_engine_load` on its engine (`user`).
unsafe extern "C" fn reentrant(_: *mut ecs_system_ctx, user: *mut c_void) {
    let engine = user.cast::<ecs_engine>();
    let mut out: *mut u8 = ptr::null_mut();
    let mut len = 0usize;
    let bytes = [0u8; 4];
    // SAFETY: the engine is alive during its own tick; locals to write.
    let (save, load) = unsafe {
        (
            ecs_engine_save(engine, ECS_SNAPSHOT_POSTCARD, &mut out, &mut len),
            ecs_engine_load(engine, ECS_SNAPSHOT_POSTCARD, bytes.as_ptr(), bytes.len()),
        )
    };
    DURING_TICK[0].store(save, Ordering::SeqCst);
    DURING_TICK[1].store(load, Ordering::SeqCst);
}

#[test]
fn a_save_or_load_during_a_tick_is_refused() {
    let engine = Engine::new(1);
    let position = engine
        .register_desc(&savable_desc::<Vec2>(c"Position"))
        .unwrap();
    let e = engine.spawn();
    engine.insert(e, position, Vec2 { x: 1.0, y: 2.0 });
    let mut spec = SystemSpec::new("reentrant", Some(reentrant));
    spec.user_data = engine.raw().cast();
    ok(spec.add(&engine));
    ok(engine.tick());
    assert_eq!(DURING_TICK[0].load(Ordering::SeqCst), ECS_ERR_WRONG_STATE);
    assert_eq!(DURING_TICK[1].load(Ordering::SeqCst), ECS_ERR_WRONG_STATE);
    assert_eq!(engine.count(), 1);
    assert_eq!(engine.get::<Vec2>(e, position), Vec2 { x: 1.0, y: 2.0 });
    // Between ticks the same engine saves.
    assert!(engine.save(ECS_SNAPSHOT_POSTCARD).is_ok());
}

/// Counts its runs in the `AtomicI32` its user data points at.
unsafe extern "C" fn count_runs(_: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is an `AtomicI32` that outlives the engine's ticks.
    unsafe { &*user.cast::<AtomicI32>() }.fetch_add(1, Ordering::SeqCst);
}

/// An engine with a startup system and a tick system counting their runs
/// in `runs` (`[startup, tick]`), built.
fn counted(runs: &[AtomicI32; 2]) -> Engine {
    let engine = Engine::new(1);
    let mut spec = SystemSpec::new("setup", Some(count_runs));
    spec.user_data = (&raw const runs[0]).cast_mut().cast();
    spec.startup = true;
    ok(spec.add(&engine));
    let mut spec = SystemSpec::new("every_tick", Some(count_runs));
    spec.user_data = (&raw const runs[1]).cast_mut().cast();
    ok(spec.add(&engine));
    ok(engine.build());
    engine
}

#[test]
fn a_loaded_engine_does_not_run_its_startup_systems_again() {
    let saved_runs = [AtomicI32::new(0), AtomicI32::new(0)];
    let saved = counted(&saved_runs);
    ok(saved.run(2));
    let bytes = saved.save(ECS_SNAPSHOT_POSTCARD).unwrap();

    let loaded_runs = [AtomicI32::new(0), AtomicI32::new(0)];
    let loaded = counted(&loaded_runs);
    ok(loaded.load(ECS_SNAPSHOT_POSTCARD, &bytes));
    assert_eq!(loaded.ticks(), 2);
    ok(loaded.tick());
    // The startup system ran in the saved engine: not again here.
    assert_eq!(loaded_runs[0].load(Ordering::SeqCst), 0);
    assert_eq!(loaded_runs[1].load(Ordering::SeqCst), 1);
    assert_eq!(loaded.ticks(), 3);

    // Saved before its first tick, the startup system is still to run.
    let early_runs = [AtomicI32::new(0), AtomicI32::new(0)];
    let early = counted(&early_runs);
    let bytes = early.save(ECS_SNAPSHOT_JSON).unwrap();
    let later_runs = [AtomicI32::new(0), AtomicI32::new(0)];
    let later = counted(&later_runs);
    ok(later.load(ECS_SNAPSHOT_JSON, &bytes));
    ok(later.tick());
    assert_eq!(later_runs[0].load(Ordering::SeqCst), 1);
}
