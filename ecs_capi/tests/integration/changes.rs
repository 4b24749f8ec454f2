//! Change detection from C (through the rlib): components registered with
//! `ECS_COMPONENT_TRACK_CHANGES`, views with `optional`, `added` and `changed` lists
//! compared with the system's last run, `ecs_ctx_get` of a written id
//! marking, `ecs_ctx_removed` with its own cursor, in-memory states that
//! keep all of it, and the refusals.

use crate::common;

use std::ffi::c_void;
use std::ptr;
use std::sync::Mutex;

use common::*;
use ecs_capi::*;

/// What one run of the watching system saw.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Seen {
    added: Vec<ecs_entity>,
    changed: Vec<ecs_entity>,
    /// `(entity, shield)` of every entity with a position.
    shields: Vec<(ecs_entity, Option<u32>)>,
    removed: Vec<ecs_entity>,
    missed: u64,
}

struct Shared {
    pos: ecs_component_id,
    hp: ecs_component_id,
    shield: ecs_component_id,
    /// The entity whose position the writer writes (through `ecs_ctx_get`).
    target: Mutex<Option<ecs_entity>>,
    runs: Mutex<Vec<Seen>>,
    /// Status and message of each refused call, on the first run.
    refusals: Mutex<Vec<(ecs_status, String)>>,
}

impl Shared {
    fn user(&self) -> *mut c_void {
        (&raw const *self).cast_mut().cast()
    }
}

unsafe extern "C" fn push_entity(entity: ecs_entity, _: *const *mut c_void, user: *mut c_void) {
    // SAFETY: `user` is a `Vec<ecs_entity>` of the caller.
    unsafe { (*user.cast::<Vec<ecs_entity>>()).push(entity) };
}

unsafe extern "C" fn push_shield(
    entity: ecs_entity,
    values: *const *mut c_void,
    user: *mut c_void,
) {
    // SAFETY: `values` holds the position then the shield (or NULL);
    // `user` is a `Vec` of the caller.
    unsafe {
        let shield = *values.add(1);
        let shield = (!shield.is_null()).then(|| *shield.cast::<u32>());
        (*user.cast::<Vec<(ecs_entity, Option<u32>)>>()).push((entity, shield));
    }
}

unsafe extern "C" fn push_removed(entity: ecs_entity, user: *mut c_void) {
    // SAFETY: `user` is a `Vec<ecs_entity>` of the caller.
    unsafe { (*user.cast::<Vec<ecs_entity>>()).push(entity) };
}

unsafe extern "C" fn writer(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Shared`.
    let shared = unsafe { &*user.cast::<Shared>() };
    if let Some(target) = *shared.target.lock().unwrap() {
        let mut value: *mut c_void = ptr::null_mut();
        // SAFETY: the running context; `value` a local; the pointer is to a
        // u32 declared written.
        unsafe {
            ok(ecs_ctx_get(ctx, target, shared.pos, &mut value));
            *value.cast::<u32>() += 1;
        }
    }
}

/// A filtered view over `pos`, collecting what `each` pushes.
fn walk<T>(
    ctx: *mut ecs_system_ctx,
    desc: &ecs_view_desc,
    each: ecs_each_fn,
    out: &mut Vec<T>,
) -> ecs_status {
    // SAFETY: the running context; `desc`'s lists outlive the call; `each`
    // pushes into `out`.
    unsafe { ecs_view_each_filtered(ctx, desc, each, (&raw mut *out).cast()) }
}

unsafe extern "C" fn watch(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Shared`.
    let shared = unsafe { &*user.cast::<Shared>() };
    let (pos, shield, hp) = ([shared.pos], [shared.shield], [shared.hp]);
    let mut seen = Seen::default();
    let added = ecs_view_desc {
        added: pos.as_ptr(),
        added_len: 1,
        ..view_desc(&pos, &[], &[])
    };
    ok(walk(ctx, &added, Some(push_entity), &mut seen.added));
    let changed = ecs_view_desc {
        changed: pos.as_ptr(),
        changed_len: 1,
        ..view_desc(&pos, &[], &[])
    };
    ok(walk(ctx, &changed, Some(push_entity), &mut seen.changed));
    let optional = ecs_view_desc {
        optional: shield.as_ptr(),
        optional_len: 1,
        ..view_desc(&pos, &[], &[])
    };
    ok(walk(ctx, &optional, Some(push_shield), &mut seen.shields));
    // SAFETY: the running context; the callback pushes into `seen.removed`.
    ok(unsafe {
        ecs_ctx_removed(
            ctx,
            shared.hp,
            Some(push_removed),
            (&raw mut seen.removed).cast(),
            &mut seen.missed,
        )
    });
    let mut refusals = shared.refusals.lock().unwrap();
    if refusals.is_empty() {
        let mut nothing: Vec<ecs_entity> = Vec::new();
        let mut refused = |status: ecs_status| refusals.push((status, last_error()));
        // `added` on a component that keeps no ticks.
        refused(walk(
            ctx,
            &ecs_view_desc {
                added: shield.as_ptr(),
                added_len: 1,
                ..view_desc(&pos, &[], &[])
            },
            Some(push_entity),
            &mut nothing,
        ));
        // `changed` on a component the view also excludes.
        refused(walk(
            ctx,
            &ecs_view_desc {
                changed: hp.as_ptr(),
                changed_len: 1,
                ..view_desc(&pos, &[], &hp)
            },
            Some(push_entity),
            &mut nothing,
        ));
        // Removals of an untracked component.
        // SAFETY: the running context; nothing is called back on failure.
        refused(unsafe {
            ecs_ctx_removed(
                ctx,
                shared.shield,
                Some(push_removed),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        });
        // No callback.
        // SAFETY: as above.
        refused(unsafe { ecs_ctx_removed(ctx, shared.hp, None, ptr::null_mut(), ptr::null_mut()) });
        assert!(nothing.is_empty(), "nothing visited on failure");
        // The version 1 struct: the newer lists are not read.
        let old = ecs_view_desc {
            struct_size: std::mem::offset_of!(ecs_view_desc, optional) as u32,
            added: std::ptr::dangling::<ecs_component_id>(),
            added_len: usize::MAX,
            ..view_desc(&pos, &[], &[])
        };
        let mut all: Vec<ecs_entity> = Vec::new();
        ok(walk(ctx, &old, Some(push_entity), &mut all));
        assert!(!all.is_empty());
    }
    for list in [&mut seen.added, &mut seen.changed, &mut seen.removed] {
        list.sort();
    }
    seen.shields.sort();
    shared.runs.lock().unwrap().push(seen);
}

/// A run condition that tries change detection (refused: it keeps no last run).
unsafe extern "C" fn condition(ctx: *const ecs_system_ctx, user: *mut c_void) -> bool {
    // SAFETY: `user` is the test's `Shared`.
    let shared = unsafe { &*user.cast::<Shared>() };
    // SAFETY: the condition's context; nothing is called back on failure.
    let status = unsafe {
        ecs_ctx_removed(
            ctx.cast_mut(),
            shared.hp,
            Some(push_removed),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(status, ECS_ERR_WRONG_STATE, "{}", last_error());
    true
}

/// How the test goes back to the moment after its first tick.
#[derive(Clone, Copy)]
enum Rewind {
    /// An in-memory state (`ecs_engine_save_state` / `restore_state`).
    State,
    /// A file snapshot (`ecs_engine_save` / `ecs_engine_load`).
    Snapshot(ecs_snapshot_format),
}

/// A component of `u32`, savable when `savable`, tracking its changes
/// when `track`.
fn register(
    engine: &Engine,
    name: &std::ffi::CStr,
    savable: bool,
    track: bool,
) -> ecs_component_id {
    let desc = ecs_component_desc {
        savable,
        flags: if track {
            ECS_COMPONENT_TRACK_CHANGES
        } else {
            0
        },
        ..component_desc::<u32>(name)
    };
    engine.register_desc(&desc).unwrap()
}

#[test]
fn c_systems_see_what_was_added_changed_and_removed_since_their_last_run() {
    see_changes_and_rewind(Rewind::State);
}

#[test]
fn a_file_snapshot_keeps_what_changed_since_each_systems_last_run() {
    see_changes_and_rewind(Rewind::Snapshot(ECS_SNAPSHOT_POSTCARD));
    see_changes_and_rewind(Rewind::Snapshot(ECS_SNAPSHOT_JSON));
}

fn see_changes_and_rewind(rewind: Rewind) {
    let engine = Engine::new(2);
    let savable = matches!(rewind, Rewind::Snapshot(_));
    let pos = register(&engine, c"Pos", savable, true);
    let hp = register(&engine, c"Hp", savable, true);
    let shield = register(&engine, c"Shield", savable, false);
    let shared = Shared {
        pos,
        hp,
        shield,
        target: Mutex::new(None),
        runs: Mutex::new(Vec::new()),
        refusals: Mutex::new(Vec::new()),
    };
    let mut write = SystemSpec::new("writer", Some(writer));
    write.user_data = shared.user();
    write.writes = vec![pos];
    ok(write.add(&engine));
    let mut look = SystemSpec::new("watch", Some(watch));
    look.user_data = shared.user();
    look.reads = vec![pos, hp, shield];
    look.run_if = Some(condition);
    look.run_if_user_data = shared.user();
    ok(look.add(&engine));
    ok(engine.build());

    let (a, b) = (engine.spawn(), engine.spawn());
    for e in [a, b] {
        engine.insert(e, pos, 0u32);
        engine.insert(e, hp, 10u32);
    }
    engine.insert(b, shield, 5u32);
    ok(engine.tick());
    let state = State::new();
    let mut bytes = Vec::new();
    match rewind {
        Rewind::State => ok(state.save(&engine)),
        Rewind::Snapshot(format) => bytes = engine.save(format).unwrap(),
    }

    let second = |engine: &Engine| {
        *shared.target.lock().unwrap() = Some(a);
        let c = engine.spawn();
        engine.insert(c, pos, 0u32);
        ok(engine.remove(b, hp));
        ok(engine.tick());
        *shared.target.lock().unwrap() = None;
        ok(engine.tick());
        c
    };
    let c = second(&engine);
    let runs = shared.runs.lock().unwrap().clone();
    let mut both = vec![a, b];
    both.sort();
    let first = Seen {
        added: both.clone(),
        changed: both,
        shields: {
            let mut s = vec![(a, None), (b, Some(5))];
            s.sort();
            s
        },
        removed: vec![],
        missed: 0,
    };
    let mut written = vec![a, c];
    written.sort();
    let mut shields = vec![(a, None), (b, Some(5)), (c, None)];
    shields.sort();
    let want = vec![
        first,
        Seen {
            added: vec![c],
            changed: written,
            shields: shields.clone(),
            removed: vec![b],
            missed: 0,
        },
        Seen {
            shields,
            ..Seen::default()
        },
    ];
    assert_eq!(runs, want);

    let refusals = shared.refusals.lock().unwrap().clone();
    let statuses: Vec<ecs_status> = refusals.iter().map(|r| r.0).collect();
    assert_eq!(
        statuses,
        vec![
            ECS_ERR_INVALID_ARGUMENT,
            ECS_ERR_INVALID_ARGUMENT,
            ECS_ERR_INVALID_ARGUMENT,
            ECS_ERR_NULL_POINTER
        ],
        "{refusals:?}"
    );
    assert!(refusals[0].1.contains("`Shield`"), "{}", refusals[0].1);
    assert!(refusals[1].1.contains("`Hp`"), "{}", refusals[1].1);
    assert!(refusals[2].1.contains("`Shield`"), "{}", refusals[2].1);
    for k in [0, 2] {
        let message = &refusals[k].1;
        assert!(message.contains("ECS_COMPONENT_TRACK_CHANGES"), "{message}");
        assert!(!message.contains("track_changes_raw"), "C terms: {message}");
    }

    // Restored to after the first tick, the same two ticks see the same:
    // the system's last run, the ticks and the removal cursor come back.
    match rewind {
        Rewind::State => ok(state.restore(&engine)),
        Rewind::Snapshot(format) => ok(engine.load(format, &bytes)),
    }
    shared.runs.lock().unwrap().clear();
    let again = second(&engine);
    assert_eq!(again, c, "the restored allocator hands out the same handle");
    assert_eq!(*shared.runs.lock().unwrap(), want[1..].to_vec());
}

/// Asks for removals of the component whose id `user` points at, and
/// records the status in `STATUS`.
static STATUS: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

unsafe extern "C" fn ask_removed(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's id; the running context; nothing is
    // called back on failure, and `push_removed` pushes into a `Vec`.
    let status = unsafe {
        let id = *user.cast::<ecs_component_id>();
        let mut lost: Vec<ecs_entity> = Vec::new();
        ecs_ctx_removed(
            ctx,
            id,
            Some(push_removed),
            (&raw mut lost).cast(),
            ptr::null_mut(),
        )
    };
    STATUS.store(status, std::sync::atomic::Ordering::Relaxed);
}

#[test]
fn an_older_callers_padding_is_never_read_as_flags() {
    /// The descriptor of API 2.5: `savable` then padding to 56 bytes.
    #[repr(C)]
    struct DescV2 {
        struct_size: u32,
        name: *const std::ffi::c_char,
        size: usize,
        align: usize,
        drop: ecs_drop_fn,
        drop_user_data: *mut c_void,
        savable: bool,
    }
    assert!(size_of::<DescV2>() < size_of::<ecs_component_desc>());
    for padding in [1u8, 2, 0xff] {
        let mut raw = std::mem::MaybeUninit::<DescV2>::uninit();
        // SAFETY: every field is written below; the padding keeps `padding`.
        let desc = unsafe {
            ptr::write_bytes(raw.as_mut_ptr().cast::<u8>(), padding, size_of::<DescV2>());
            let p = raw.as_mut_ptr();
            (&raw mut (*p).struct_size).write(size_of::<DescV2>() as u32);
            (&raw mut (*p).name).write(c"Old".as_ptr());
            (&raw mut (*p).size).write(4);
            (&raw mut (*p).align).write(4);
            (&raw mut (*p).drop).write(None);
            (&raw mut (*p).drop_user_data).write(ptr::null_mut());
            (&raw mut (*p).savable).write(false);
            raw.assume_init()
        };
        let engine = Engine::new(1);
        let mut id = 0;
        // SAFETY: a live engine; `desc` is valid for its `struct_size`.
        ok(unsafe { ecs_component_register(engine.raw(), (&raw const desc).cast(), &mut id) });
        let mut ask = SystemSpec::new("ask", Some(ask_removed));
        ask.user_data = (&raw mut id).cast();
        ask.reads = vec![id];
        ok(ask.add(&engine));
        ok(engine.tick());
        assert_eq!(
            STATUS.load(std::sync::atomic::Ordering::Relaxed),
            ECS_ERR_INVALID_ARGUMENT,
            "an older struct registers a component that keeps no change ticks"
        );
    }
    let engine = Engine::new(1);
    let unknown = ecs_component_desc {
        flags: 2,
        ..component_desc::<u32>(c"Flagged")
    };
    let status = engine.register_desc(&unknown).unwrap_err();
    fails(
        status,
        ECS_ERR_INVALID_ARGUMENT,
        "ECS_COMPONENT_TRACK_CHANGES",
    );
}

struct Filters {
    pos: ecs_component_id,
    vel: ecs_component_id,
    /// The entity; `filter_on_pos` also tests its membership
    /// (`ecs_ctx_has`, which marks nothing either).
    entity: Mutex<ecs_entity>,
    /// Per run of `watch_pos`: the entities whose position changed since.
    changed: Mutex<Vec<usize>>,
}

/// Filters on `pos` (declared written) without taking a pointer to it.
unsafe extern "C" fn filter_on_pos(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Filters`.
    let f = unsafe { &*user.cast::<Filters>() };
    let (pos, vel) = ([f.pos], [f.vel]);
    let entity = *f.entity.lock().unwrap();
    let (mut has_pos, mut has_other) = (false, true);
    // SAFETY: the running context; the outputs are locals.
    unsafe {
        ok(ecs_ctx_has(ctx, entity, f.pos, &mut has_pos));
        ok(ecs_ctx_has(ctx, entity, f.vel, &mut has_other));
        assert!(has_pos && has_other);
        let stale = ecs_ctx_has(ctx, ECS_ENTITY_NULL, f.pos, &mut has_pos);
        assert_eq!(stale, ECS_ERR_STALE_ENTITY);
        let no_out = ecs_ctx_has(ctx, entity, f.pos, ptr::null_mut());
        assert_eq!(no_out, ECS_ERR_NULL_POINTER);
    }
    let mut seen: Vec<ecs_entity> = Vec::new();
    for desc in [
        view_desc(&vel, &pos, &[]),
        ecs_view_desc {
            changed: pos.as_ptr(),
            changed_len: 1,
            ..view_desc(&vel, &[], &[])
        },
        ecs_view_desc {
            added: pos.as_ptr(),
            added_len: 1,
            ..view_desc(&vel, &pos, &[])
        },
    ] {
        ok(walk(ctx, &desc, Some(push_entity), &mut seen));
    }
}

unsafe extern "C" fn watch_pos(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Filters`.
    let f = unsafe { &*user.cast::<Filters>() };
    let pos = [f.pos];
    let desc = ecs_view_desc {
        changed: pos.as_ptr(),
        changed_len: 1,
        ..view_desc(&pos, &[], &[])
    };
    let mut seen: Vec<ecs_entity> = Vec::new();
    ok(walk(ctx, &desc, Some(push_entity), &mut seen));
    f.changed.lock().unwrap().push(seen.len());
}

#[test]
fn with_added_and_changed_filters_and_membership_tests_mark_nothing() {
    let engine = Engine::new(1);
    let f = Filters {
        pos: register(&engine, c"Pos", false, true),
        vel: engine.register::<u32>(c"Vel"),
        entity: Mutex::new(ECS_ENTITY_NULL),
        changed: Mutex::new(Vec::new()),
    };
    let mut filter = SystemSpec::new("filter", Some(filter_on_pos));
    filter.user_data = (&raw const f).cast_mut().cast();
    filter.reads = vec![f.vel];
    filter.writes = vec![f.pos];
    ok(filter.add(&engine));
    let mut watch = SystemSpec::new("watch", Some(watch_pos));
    watch.user_data = (&raw const f).cast_mut().cast();
    watch.reads = vec![f.pos];
    watch.after = vec![c"filter".to_owned()];
    ok(watch.add(&engine));
    let a = engine.spawn();
    engine.insert(a, f.pos, 0u32);
    engine.insert(a, f.vel, 0u32);
    *f.entity.lock().unwrap() = a;
    ok(engine.run(3));
    assert_eq!(*f.changed.lock().unwrap(), vec![1, 0, 0]);
}

struct Chunks {
    pos: ecs_component_id,
    /// Read by `chunked`, as a (refused) optional term.
    other: ecs_component_id,
    /// Written by `poke` (through `ecs_ctx_get`) from the second tick on.
    poked: [ecs_entity; 2],
    ticks: Mutex<u32>,
    /// Per run of `chunked`: the entities of its chunks, sorted.
    rows: Mutex<Vec<Vec<ecs_entity>>>,
    refused: Mutex<Option<(ecs_status, String)>>,
}

unsafe extern "C" fn poke(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Chunks`; the running context.
    let c = unsafe { &*user.cast::<Chunks>() };
    let mut ticks = c.ticks.lock().unwrap();
    *ticks += 1;
    if *ticks > 1 {
        for e in c.poked {
            let mut value: *mut c_void = ptr::null_mut();
            // SAFETY: the running context; `value` a local.
            ok(unsafe { ecs_ctx_get(ctx, e, c.pos, &mut value) });
        }
    }
}

unsafe extern "C" fn push_rows(chunk: *const ecs_view_chunk, user: *mut c_void) {
    // SAFETY: a valid chunk; `user` is a `Vec<ecs_entity>` of the caller.
    unsafe {
        let chunk = &*chunk;
        let entities = std::slice::from_raw_parts(chunk.entities, chunk.len);
        (*user.cast::<Vec<ecs_entity>>()).extend_from_slice(entities);
    }
}

unsafe extern "C" fn chunked(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Chunks`.
    let c = unsafe { &*user.cast::<Chunks>() };
    let pos = [c.pos];
    let desc = ecs_view_desc {
        changed: pos.as_ptr(),
        changed_len: 1,
        ..view_desc(&pos, &[], &[])
    };
    let mut rows: Vec<ecs_entity> = Vec::new();
    // SAFETY: the running context; `desc`'s lists outlive the call.
    ok(unsafe {
        ecs_view_each_chunk_filtered(ctx, &desc, Some(push_rows), (&raw mut rows).cast())
    });
    rows.sort();
    c.rows.lock().unwrap().push(rows);
    let other = [c.other];
    let with_optional = ecs_view_desc {
        optional: other.as_ptr(),
        optional_len: 1,
        ..view_desc(&pos, &[], &[])
    };
    // SAFETY: as above; nothing is called back on failure.
    let status = unsafe {
        ecs_view_each_chunk_filtered(ctx, &with_optional, Some(push_rows), ptr::null_mut())
    };
    *c.refused.lock().unwrap() = Some((status, last_error()));
}

#[test]
fn a_filtered_chunk_walk_cuts_its_chunks_around_what_did_not_change() {
    let engine = Engine::new(2);
    let pos = register(&engine, c"Pos", false, true);
    let entities: Vec<ecs_entity> = (0..10)
        .map(|k| {
            let e = engine.spawn();
            engine.insert(e, pos, k as u32);
            e
        })
        .collect();
    let c = Chunks {
        pos,
        other: engine.register::<u32>(c"Other"),
        poked: [entities[3], entities[7]],
        ticks: Mutex::new(0),
        rows: Mutex::new(Vec::new()),
        refused: Mutex::new(None),
    };
    let mut writer = SystemSpec::new("poke", Some(poke));
    writer.user_data = (&raw const c).cast_mut().cast();
    writer.writes = vec![pos];
    ok(writer.add(&engine));
    let mut walker = SystemSpec::new("chunked", Some(chunked));
    walker.user_data = (&raw const c).cast_mut().cast();
    walker.reads = vec![pos, c.other];
    walker.after = vec![c"poke".to_owned()];
    ok(walker.add(&engine));
    ok(engine.run(3));
    let rows = c.rows.lock().unwrap().clone();
    assert_eq!(
        rows,
        vec![
            entities.clone(),
            vec![entities[3], entities[7]],
            vec![entities[3], entities[7]]
        ]
    );
    let (status, message) = c.refused.lock().unwrap().clone().unwrap();
    assert_eq!(status, ECS_ERR_INVALID_ARGUMENT, "{message}");
    assert!(message.contains("`optional`"), "{message}");
}
