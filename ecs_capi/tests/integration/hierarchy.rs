//! The hierarchy and disabled entities through the C API (between ticks on
//! the engine, and from systems through their command buffers), and views
//! with `with` / `without` filter terms.

use crate::common;

use std::ffi::c_void;
use std::ptr;

use common::*;
use ecs_capi::*;

/// The children of `e`, through the two-call pattern of `ecs_children`.
fn children(engine: &Engine, e: ecs_entity) -> Vec<ecs_entity> {
    let mut len = usize::MAX;
    // SAFETY: a live engine; NULL with capacity 0 asks for the count.
    ok(unsafe { ecs_children(engine.raw(), e, ptr::null_mut(), 0, &mut len) });
    let mut out = vec![0; len];
    let mut again = usize::MAX;
    // SAFETY: `out` holds `len` handles.
    ok(unsafe { ecs_children(engine.raw(), e, out.as_mut_ptr(), out.len(), &mut again) });
    assert_eq!(again, len);
    out
}

fn parent(engine: &Engine, e: ecs_entity) -> Result<ecs_entity, ecs_status> {
    let mut out = 0;
    // SAFETY: a live engine and a local.
    let status = unsafe { ecs_parent(engine.raw(), e, &mut out) };
    if status == ECS_OK {
        Ok(out)
    } else {
        Err(status)
    }
}

fn set_parent(engine: &Engine, child: ecs_entity, parent: ecs_entity) -> ecs_status {
    // SAFETY: a live engine.
    unsafe { ecs_set_parent(engine.raw(), child, parent) }
}

fn disabled(engine: &Engine, e: ecs_entity) -> Result<bool, ecs_status> {
    let mut out = false;
    // SAFETY: a live engine and a local.
    let status = unsafe { ecs_is_disabled(engine.raw(), e, &mut out) };
    if status == ECS_OK {
        Ok(out)
    } else {
        Err(status)
    }
}

#[test]
fn parents_children_in_order_and_recursive_despawn() {
    let engine = Engine::new(1);
    let [ship, turret, gun, wing, lone] = [(); 5].map(|()| engine.spawn());
    ok(set_parent(&engine, turret, ship));
    ok(set_parent(&engine, wing, ship));
    ok(set_parent(&engine, gun, turret));
    assert_eq!(children(&engine, ship), [turret, wing]);
    assert_eq!(children(&engine, turret), [gun]);
    assert_eq!(children(&engine, gun), Vec::<ecs_entity>::new());
    assert_eq!(parent(&engine, gun), Ok(turret));
    assert_eq!(parent(&engine, ship), Ok(ECS_ENTITY_NULL));
    // Setting the parent it has keeps its place; moving it puts it last.
    ok(set_parent(&engine, turret, ship));
    assert_eq!(children(&engine, ship), [turret, wing]);
    ok(set_parent(&engine, wing, lone));
    ok(set_parent(&engine, wing, ship));
    assert_eq!(children(&engine, ship), [turret, wing]);
    assert_eq!(children(&engine, lone), Vec::<ecs_entity>::new());

    // A short array gets the first children and the full count.
    let mut first = [0; 1];
    let mut len = 0;
    // SAFETY: `first` holds one handle.
    ok(unsafe { ecs_children(engine.raw(), ship, first.as_mut_ptr(), 1, &mut len) });
    assert_eq!((first, len), ([turret], 2));

    // Detach, with the old parent reported.
    let mut old = 0;
    // SAFETY: a live engine and a local.
    ok(unsafe { ecs_remove_parent(engine.raw(), wing, &mut old) });
    assert_eq!(old, ship);
    // SAFETY: as above; a root has no parent to report.
    ok(unsafe { ecs_remove_parent(engine.raw(), wing, &mut old) });
    assert_eq!(old, ECS_ENTITY_NULL);
    // SAFETY: NULL for the old parent is allowed.
    ok(unsafe { ecs_remove_parent(engine.raw(), lone, ptr::null_mut()) });

    // Recursive despawn takes the subtree and detaches from the parent.
    ok(set_parent(&engine, wing, ship));
    let mut count = 0;
    // SAFETY: a live engine and a local.
    ok(unsafe { ecs_despawn_recursive(engine.raw(), turret, &mut count) });
    assert_eq!(count, 2);
    assert!(!engine.is_alive(turret) && !engine.is_alive(gun));
    assert_eq!(children(&engine, ship), [wing]);
    // SAFETY: a live engine; NULL count allowed.
    ok(unsafe { ecs_despawn_recursive(engine.raw(), ship, ptr::null_mut()) });
    assert!(!engine.is_alive(wing));
    assert_eq!(engine.count(), 1);
}

#[test]
fn hierarchy_errors_have_statuses_and_change_nothing() {
    let engine = Engine::new(1);
    let [a, b, c] = [(); 3].map(|()| engine.spawn());
    ok(set_parent(&engine, b, a));
    ok(set_parent(&engine, c, b));
    let fails = |status: ecs_status, expected: ecs_status, words: &str| {
        assert_eq!(status, expected, "{}", last_error());
        assert!(
            last_error().contains(words),
            "{} lacks {words}",
            last_error()
        );
    };
    fails(
        set_parent(&engine, a, c),
        ECS_ERR_INVALID_ARGUMENT,
        "descendants",
    );
    fails(
        set_parent(&engine, a, a),
        ECS_ERR_INVALID_ARGUMENT,
        "descendants",
    );
    assert_eq!(parent(&engine, a), Ok(ECS_ENTITY_NULL));
    let dead = engine.spawn();
    ok(engine.despawn(dead));
    fails(
        set_parent(&engine, dead, a),
        ECS_ERR_STALE_ENTITY,
        "not alive",
    );
    fails(
        set_parent(&engine, a, dead),
        ECS_ERR_STALE_ENTITY,
        "not alive",
    );
    fails(set_parent(&engine, a, 0), ECS_ERR_STALE_ENTITY, "0x0");
    fails(
        parent(&engine, dead).unwrap_err(),
        ECS_ERR_STALE_ENTITY,
        "not alive",
    );
    let mut len = 0;
    let mut one = [0; 1];
    // SAFETY: what this test is about: NULL where the API checks for it.
    unsafe {
        fails(
            ecs_children(engine.raw(), a, ptr::null_mut(), 1, &mut len),
            ECS_ERR_NULL_POINTER,
            "out",
        );
        fails(
            ecs_children(engine.raw(), a, one.as_mut_ptr(), 1, ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "len",
        );
        fails(
            ecs_children(engine.raw(), dead, one.as_mut_ptr(), 1, &mut len),
            ECS_ERR_STALE_ENTITY,
            "not alive",
        );
        fails(
            ecs_parent(engine.raw(), a, ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "out",
        );
        fails(
            ecs_set_parent(ptr::null_mut(), a, b),
            ECS_ERR_NULL_POINTER,
            "engine",
        );
        fails(
            ecs_remove_parent(engine.raw(), dead, ptr::null_mut()),
            ECS_ERR_STALE_ENTITY,
            "not alive",
        );
        fails(
            ecs_despawn_recursive(engine.raw(), dead, ptr::null_mut()),
            ECS_ERR_STALE_ENTITY,
            "not alive",
        );
        fails(
            ecs_disable(engine.raw(), dead, ptr::null_mut()),
            ECS_ERR_STALE_ENTITY,
            "not alive",
        );
        fails(
            ecs_enable(ptr::null_mut(), a, ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "engine",
        );
        fails(
            ecs_is_disabled(engine.raw(), a, ptr::null_mut()),
            ECS_ERR_NULL_POINTER,
            "out",
        );
    }
    fails(
        disabled(&engine, dead).unwrap_err(),
        ECS_ERR_STALE_ENTITY,
        "not alive",
    );
    // Nothing changed.
    assert_eq!(children(&engine, a), [b]);
    assert_eq!(children(&engine, b), [c]);
    assert_eq!(engine.count(), 3);
}

/// Sums the `u32` of every entity a view visits into the `u64` at `user`.
unsafe extern "C" fn sum_view(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    unsafe extern "C" fn each(_: ecs_entity, components: *const *mut c_void, user: *mut c_void) {
        // SAFETY: one pointer to a `u32`; `user` is the sum.
        unsafe { *user.cast::<u64>() += u64::from(*(*components).cast::<u32>()) };
    }
    // SAFETY: `user` is `(id, sum)`; the context is the running one's.
    unsafe {
        let (id, sum) = &mut *user.cast::<(ecs_component_id, u64)>();
        *sum = 0;
        ok(ecs_view_each(
            ctx,
            id,
            1,
            Some(each),
            (sum as *mut u64).cast(),
        ));
    }
}

#[test]
fn disabled_entities_keep_their_components_and_views_skip_them() {
    let engine = Engine::new(2);
    let value = engine.register::<u32>(c"Value");
    let [a, b, c] = [1u32, 10, 100].map(|v| {
        let e = engine.spawn();
        engine.insert(e, value, v);
        e
    });
    let mut seen = (value, 0u64);
    let mut spec = SystemSpec::new("sum", Some(sum_view));
    spec.reads = vec![value];
    spec.user_data = (&raw mut seen).cast();
    ok(spec.add(&engine));
    ok(engine.tick());
    assert_eq!(seen.1, 111);

    let mut changed = false;
    // SAFETY: a live engine and a local.
    ok(unsafe { ecs_disable(engine.raw(), b, &mut changed) });
    assert!(changed);
    // SAFETY: as above: disabling twice changes nothing.
    ok(unsafe { ecs_disable(engine.raw(), b, &mut changed) });
    assert!(!changed);
    assert_eq!(disabled(&engine, b), Ok(true));
    assert_eq!(disabled(&engine, a), Ok(false));
    ok(engine.tick());
    assert_eq!(seen.1, 101, "the view skips the disabled entity");
    assert!(engine.is_alive(b));
    assert_eq!(engine.get::<u32>(b, value), 10, "its components stay");
    assert_eq!(engine.count(), 3);

    // SAFETY: a live engine; NULL `changed` allowed.
    ok(unsafe { ecs_enable(engine.raw(), b, ptr::null_mut()) });
    // SAFETY: a live engine and a local.
    ok(unsafe { ecs_enable(engine.raw(), b, &mut changed) });
    assert!(!changed);
    ok(engine.tick());
    assert_eq!(seen.1, 111);
    let _ = c;
}

/// What the hierarchy system does on each tick (`user`: `Script`).
struct Script {
    tick: u32,
    root: ecs_entity,
    spawned: Vec<ecs_entity>,
    statuses: Vec<ecs_status>,
}

unsafe extern "C" fn hierarchy_commands(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Script`; the context is the running
    // system's, which declared commands.
    unsafe {
        let script = &mut *user.cast::<Script>();
        let mut commands = ptr::null_mut();
        ok(ecs_ctx_commands(ctx, &mut commands));
        match script.tick {
            0 => {
                // Two children of the root, one grandchild, in one tick:
                // handles from spawn are usable at once.
                for _ in 0..3 {
                    let mut e = 0;
                    ok(ecs_commands_spawn(commands, &mut e));
                    script.spawned.push(e);
                }
                let [x, y, z] = [script.spawned[0], script.spawned[1], script.spawned[2]];
                script
                    .statuses
                    .push(ecs_commands_set_parent(commands, x, script.root));
                script
                    .statuses
                    .push(ecs_commands_set_parent(commands, y, script.root));
                script
                    .statuses
                    .push(ecs_commands_set_parent(commands, z, x));
                script.statuses.push(ecs_commands_disable(commands, y));
            }
            1 => {
                script
                    .statuses
                    .push(ecs_commands_enable(commands, script.spawned[1]));
                script
                    .statuses
                    .push(ecs_commands_remove_parent(commands, script.spawned[1]));
                script
                    .statuses
                    .push(ecs_commands_set_parent(commands, 0, script.root));
            }
            _ => {
                script
                    .statuses
                    .push(ecs_commands_despawn_recursive(commands, script.spawned[0]));
            }
        }
        script.tick += 1;
    }
}

#[test]
fn the_hierarchy_and_disabling_through_commands() {
    let engine = Engine::new(2);
    let root = engine.spawn();
    let mut script = Script {
        tick: 0,
        root,
        spawned: Vec::new(),
        statuses: Vec::new(),
    };
    let mut spec = SystemSpec::new("builder", Some(hierarchy_commands));
    spec.commands = true;
    spec.user_data = (&raw mut script).cast();
    ok(spec.add(&engine));

    ok(engine.tick());
    assert_eq!(script.statuses, [ECS_OK; 4]);
    let [x, y, z] = [script.spawned[0], script.spawned[1], script.spawned[2]];
    assert_eq!(children(&engine, root), [x, y]);
    assert_eq!(children(&engine, x), [z]);
    assert_eq!(disabled(&engine, y), Ok(true));

    ok(engine.tick());
    assert_eq!(
        script.statuses[4..],
        [ECS_OK, ECS_OK, ECS_ERR_STALE_ENTITY],
        "a handle of generation 0 is refused when recorded"
    );
    assert_eq!(disabled(&engine, y), Ok(false));
    assert_eq!(children(&engine, root), [x]);
    assert_eq!(parent(&engine, y), Ok(ECS_ENTITY_NULL));

    ok(engine.tick());
    assert_eq!(script.statuses[7], ECS_OK);
    assert!(!engine.is_alive(x) && !engine.is_alive(z));
    assert!(engine.is_alive(y) && engine.is_alive(root));
    assert_eq!(children(&engine, root), Vec::<ecs_entity>::new());
    assert_eq!(engine.count(), 2);
}

/// Records hierarchy commands without having declared commands.
unsafe extern "C" fn undeclared_hierarchy(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's status; `ctx` is the running one's.
    unsafe {
        let mut commands = ptr::null_mut();
        *user.cast::<ecs_status>() = ecs_ctx_commands(ctx, &mut commands);
        let status = ecs_commands_set_parent(ptr::null_mut(), 1 << 32, 2 << 32);
        assert_eq!(status, ECS_ERR_NULL_POINTER);
    }
}

#[test]
fn hierarchy_commands_need_declared_commands() {
    let engine = Engine::new(1);
    let mut status = ECS_OK;
    let mut spec = SystemSpec::new("undeclared", Some(undeclared_hierarchy));
    spec.user_data = (&raw mut status).cast();
    ok(spec.add(&engine));
    ok(engine.tick());
    assert_eq!(status, ECS_ERR_UNDECLARED);
}

/// The filtered views a system runs, and what they gave.
struct Filtered {
    value: ecs_component_id,
    tag: ecs_component_id,
    frozen: ecs_component_id,
    /// Undeclared by the system.
    other: ecs_component_id,
    /// Of another engine.
    foreign: ecs_component_id,
    /// (with tag, without frozen), (without frozen), (with tag)
    sums: [u64; 3],
    entities: Vec<ecs_entity>,
    errors: Vec<(ecs_status, String)>,
}

unsafe extern "C" fn add_value(e: ecs_entity, components: *const *mut c_void, user: *mut c_void) {
    // SAFETY: one pointer to a `u32`; `user` is `(sum, entities)`.
    unsafe {
        let (sum, entities) = &mut *user.cast::<(u64, Vec<ecs_entity>)>();
        *sum += u64::from(*(*components).cast::<u32>());
        entities.push(e);
    }
}

unsafe extern "C" fn filtered_views(ctx: *mut ecs_system_ctx, user: *mut c_void) {
    // SAFETY: `user` is the test's `Filtered`; `ctx` the running one's;
    // every descriptor points at locals that live across the call.
    unsafe {
        let f = &mut *user.cast::<Filtered>();
        // The lists live across every call below (a descriptor only
        // points at them).
        let (value, tag, frozen, other) = ([f.value], [f.tag], [f.frozen], [f.other]);
        let (foreign, none) = ([f.foreign], []);
        let cases = [
            view_desc(&value, &tag, &frozen),
            view_desc(&value, &none, &frozen),
            view_desc(&value, &tag, &none),
        ];
        for (k, desc) in cases.iter().enumerate() {
            let mut seen: (u64, Vec<ecs_entity>) = (0, Vec::new());
            ok(ecs_view_each_filtered(
                ctx,
                desc,
                Some(add_value),
                (&raw mut seen).cast(),
            ));
            f.sums[k] = seen.0;
            if k == 0 {
                f.entities = seen.1;
            }
        }
        let mut refused = |desc: ecs_view_desc| {
            let mut seen: (u64, Vec<ecs_entity>) = (0, Vec::new());
            let status =
                ecs_view_each_filtered(ctx, &desc, Some(add_value), (&raw mut seen).cast());
            assert!(seen.1.is_empty(), "nothing visited on failure");
            f.errors.push((status, last_error()));
        };
        refused(view_desc(&value, &none, &other));
        refused(view_desc(&value, &other, &none));
        refused(view_desc(&value, &tag, &tag));
        refused(view_desc(&value, &none, &value));
        refused(view_desc(&none, &tag, &none));
        refused(view_desc(&value, &none, &foreign));
        refused(ecs_view_desc {
            without: ptr::null(),
            ..view_desc(&value, &none, &frozen)
        });
        refused(ecs_view_desc {
            struct_size: 8,
            ..view_desc(&value, &none, &none)
        });
        let status = ecs_view_each_filtered(ctx, ptr::null(), Some(add_value), ptr::null_mut());
        f.errors.push((status, last_error()));
        let desc = view_desc(&value, &none, &none);
        let status = ecs_view_each_filtered(ctx, &desc, None, ptr::null_mut());
        f.errors.push((status, last_error()));
    }
}

#[test]
fn filtered_views_visit_what_with_and_without_say() {
    let engine = Engine::new(2);
    let value = engine.register::<u32>(c"Value");
    let tag = engine.register::<()>(c"Tag");
    let frozen = engine.register::<()>(c"Frozen");
    let other = engine.register::<u32>(c"Other");
    let elsewhere = Engine::new(1);
    let foreign = elsewhere.register::<u32>(c"Value");
    let spawn = |v: u32, tags: &[ecs_component_id]| {
        let e = engine.spawn();
        engine.insert(e, value, v);
        for &t in tags {
            engine.insert(e, t, ());
        }
        e
    };
    let _plain = spawn(1, &[]);
    let tagged = spawn(10, &[tag]);
    let _frozen_tagged = spawn(100, &[tag, frozen]);
    let _frozen = spawn(1000, &[frozen]);
    let tagged_later = spawn(10_000, &[tag]);
    let mut f = Filtered {
        value,
        tag,
        frozen,
        other,
        foreign,
        sums: [0; 3],
        entities: Vec::new(),
        errors: Vec::new(),
    };
    let mut spec = SystemSpec::new("filtered", Some(filtered_views));
    spec.reads = vec![value, tag, frozen];
    spec.user_data = (&raw mut f).cast();
    ok(spec.add(&engine));
    ok(engine.tick());
    assert_eq!(f.sums, [10_010, 10_011, 10_110]);
    assert_eq!(
        f.entities,
        [tagged, tagged_later],
        "in ecs_view_each's order"
    );
    let statuses: Vec<ecs_status> = f.errors.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        statuses,
        [
            ECS_ERR_UNDECLARED,
            ECS_ERR_UNDECLARED,
            ECS_ERR_INVALID_ARGUMENT,
            ECS_ERR_INVALID_ARGUMENT,
            ECS_ERR_INVALID_ARGUMENT,
            ECS_ERR_UNKNOWN_COMPONENT,
            ECS_ERR_NULL_POINTER,
            ECS_ERR_INVALID_ARGUMENT,
            ECS_ERR_NULL_POINTER,
            ECS_ERR_NULL_POINTER,
        ],
        "{:#?}",
        f.errors
    );
    for (k, words) in [
        (0, "Other"),
        (2, "`Tag` is named twice"),
        (3, "`Value` is named twice"),
        (4, "at least one id"),
        (6, "desc->without"),
        (7, "struct_size"),
        (8, "desc"),
        (9, "each"),
    ] {
        assert!(f.errors[k].1.contains(words), "{k}: {}", f.errors[k].1);
    }

    // A disabled entity is skipped by filtered views too.
    // SAFETY: a live engine.
    ok(unsafe { ecs_disable(engine.raw(), tagged_later, ptr::null_mut()) });
    f.errors.clear();
    ok(engine.tick());
    assert_eq!(f.sums, [10, 11, 110]);
}
