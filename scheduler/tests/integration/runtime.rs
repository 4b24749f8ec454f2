//! Systems over components registered at run time: ordering against Rust
//! systems, undeclared ids, and raw views inside a running schedule.

use crate::common;

use std::alloc::Layout;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ecs_engine::{
    Access, ComponentDescriptor, ComponentId, EcsError, Entity, RawComponent, Registry,
};
use scheduler::{
    DeclaredSystem, EdgeReason, Policy, Query, Rule, RunError, Schedule, SubjectKind, SystemAccess,
    SystemError, Tick,
};

use common::wave_names;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(f32);

fn f32s(registry: &mut Registry, name: &str) -> ComponentId {
    registry
        .register_runtime(ComponentDescriptor::new(name, Layout::new::<f32>()))
        .unwrap()
}

fn put(registry: &mut Registry, e: Entity, id: ComponentId, value: f32) {
    // SAFETY: a valid f32 for an f32 component.
    unsafe { registry.insert_raw(e, id, (&raw const value).cast()) }.unwrap();
}

fn get(registry: &Registry, e: Entity, id: ComponentId) -> f32 {
    // SAFETY: an aligned f32, read between ticks.
    unsafe { *registry.get_raw(e, id).unwrap().cast::<f32>().as_ptr() }
}

#[test]
fn runtime_access_orders_systems() {
    let mut registry = Registry::new();
    let pos = f32s(&mut registry, "pos");
    let vel = f32s(&mut registry, "vel");
    let mut builder = Schedule::builder();
    builder.policy(Policy::WriterFirst);
    builder.add(|mut q: Query<&mut Position>| q.each(|p| p.0 += 1.0));
    builder.add(DeclaredSystem::new(
        "integrate",
        SystemAccess::new()
            .write_runtime(pos, "pos")
            .read_runtime(vel, "vel"),
        |_| Ok(()),
    ));
    builder.add(DeclaredSystem::new(
        "report",
        SystemAccess::new()
            .read_runtime(pos, "pos")
            .read::<Position>(),
        |_| Ok(()),
    ));
    builder.add(DeclaredSystem::new(
        "damp",
        SystemAccess::new().write_runtime(vel, "vel"),
        |_| Ok(()),
    ));
    builder.add(DeclaredSystem::new(
        "also_reads",
        SystemAccess::new().read_runtime(vel, "vel"),
        |_| Ok(()),
    ));
    let schedule = builder.build(&mut registry).unwrap();
    let typed = schedule.name(schedule.waves()[0][0].0).to_owned();
    assert_eq!(
        wave_names(&schedule),
        vec![
            vec![typed.clone(), "damp".to_owned()],
            vec!["integrate".to_owned(), "also_reads".to_owned()],
            vec!["report".to_owned()],
        ]
    );
    let explain = schedule.explain().to_string();
    assert!(
        explain.contains("integrate: reads vel; writes pos"),
        "{explain}"
    );
    assert!(
        explain.contains("after damp (wave 0): vel: write -> read"),
        "{explain}"
    );
    assert!(
        explain.contains("after integrate (wave 1): pos: write -> read"),
        "{explain}"
    );
    assert!(explain.contains("Position: write -> read"), "{explain}");
    let dot = schedule.to_dot();
    assert!(
        dot.contains("\"damp\" -> \"integrate\" [label=\"vel: write -> read\"]"),
        "{dot}"
    );
    let _ = EdgeReason::Conflict {
        name: "pos".into(),
        kind: SubjectKind::Component,
        rule: Rule::WriteWrite,
    };
}

#[test]
fn runtime_declarations_merge_per_id() {
    let mut registry = Registry::new();
    let a = f32s(&mut registry, "a");
    let b = f32s(&mut registry, "b");
    let access = SystemAccess::new()
        .write_runtime(a, "a")
        .read_runtime(a, "a");
    assert_eq!(access.components().len(), 1, "merged, write wins");
    assert!(access.allows_component(a, Access::Write));
    assert!(!access.allows_component(b, Access::Read));
    assert_eq!(access.component_access(a), Some(Access::Write));
}

#[test]
fn undeclared_runtime_ids_are_errors_naming_them() {
    let mut registry = Registry::new();
    let pos = f32s(&mut registry, "pos");
    let vel = f32s(&mut registry, "vel");
    let e = registry.spawn(());
    put(&mut registry, e, pos, 0.0);
    put(&mut registry, e, vel, 1.0);
    let mut builder = Schedule::builder();
    builder.add(DeclaredSystem::new(
        "sneaky",
        SystemAccess::new().write_runtime(pos, "pos"),
        move |ctx| {
            assert!(ctx.get_raw(e, pos).is_ok());
            let err = ctx.get_raw(e, vel).unwrap_err();
            assert_eq!(
                err,
                SystemError::Undeclared {
                    system: "sneaky".into(),
                    kind: "component",
                    name: "vel".into(),
                    access: Access::Read,
                }
            );
            assert!(matches!(
                ctx.raw_view(&[pos, pos]),
                Err(SystemError::Registry {
                    source: EcsError::DuplicateTerm { .. },
                    ..
                })
            ));
            ctx.raw_view(&[pos, vel]).map(|_| ())
        },
    ));
    let mut schedule = builder.build(&mut registry).unwrap();
    let err = schedule.run(&mut registry, Tick::default()).unwrap_err();
    match &err {
        RunError::System {
            source: SystemError::Undeclared { system, name, .. },
            ..
        } => assert_eq!((system.as_str(), name.as_ref()), ("sneaky", "vel")),
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        err.to_string()
            .contains("system `sneaky` accessed component `vel` for reading without declaring it")
    );
}

#[test]
fn raw_views_run_in_parallel_systems() {
    let mut registry = Registry::new();
    let pos = f32s(&mut registry, "pos");
    let vel = f32s(&mut registry, "vel");
    let hp = f32s(&mut registry, "hp");
    let n = if cfg!(miri) { 20 } else { 2000 };
    let entities: Vec<Entity> = (0..n)
        .map(|i| {
            let e = registry.spawn((Position(0.0),));
            put(&mut registry, e, pos, 0.0);
            put(&mut registry, e, vel, i as f32);
            put(&mut registry, e, hp, 10.0);
            e
        })
        .collect();
    let threads_seen = Arc::new(AtomicUsize::new(0));
    let mut builder = Schedule::builder();
    builder.threads(2);
    builder.add(DeclaredSystem::new(
        "move",
        SystemAccess::new()
            .write_runtime(pos, "pos")
            .read_runtime(vel, "vel"),
        move |ctx| {
            let mut view = ctx.raw_view(&[pos, vel])?;
            view.each_chunk(|chunk| {
                let (p, v) = (
                    chunk.columns()[0].cast::<f32>(),
                    chunk.columns()[1].cast::<f32>(),
                );
                for i in 0..chunk.len() {
                    // SAFETY: `pos` is declared write, `i < len`, f32 values.
                    unsafe { *p.add(i) += *v.add(i) };
                }
            });
            Ok(())
        },
    ));
    let seen = threads_seen.clone();
    builder.add(DeclaredSystem::new(
        "regen",
        SystemAccess::new().write_runtime(hp, "hp").with_commands(),
        move |ctx| {
            seen.fetch_add(1, Ordering::Relaxed);
            let mut view = ctx.raw_view(&[hp])?;
            // SAFETY: `hp` is declared write; f32 values.
            view.each(|_, values| unsafe { *values[0].cast::<f32>() += 1.0 });
            drop(view);
            let first = ctx.query::<&Position>().map(|_| ()).unwrap_err();
            assert!(matches!(first, SystemError::Undeclared { .. }));
            // A raw insert recorded for after the wave.
            let info = ctx.component_info(hp).unwrap();
            let value = -1.0f32;
            // SAFETY: `info` is `hp`'s; `value` a valid f32.
            let raw = unsafe { RawComponent::new(hp, info, RawComponent::bytes_of(&value)) };
            let mut commands = ctx.commands()?;
            let marker = commands.spawn((Position(9.0),));
            commands.insert_raw(marker, raw);
            Ok(())
        },
    ));
    builder.add(DeclaredSystem::new(
        "typed",
        SystemAccess::new().write::<Position>(),
        |ctx| {
            ctx.query::<&mut Position>()?.each(|p| p.0 += 1.0);
            Ok(())
        },
    ));
    let mut schedule = builder.build(&mut registry).unwrap();
    assert_eq!(schedule.waves().len(), 1, "disjoint access: one wave");
    let ticks = 3;
    for tick in 0..ticks {
        schedule
            .run(
                &mut registry,
                Tick {
                    number: tick,
                    ..Tick::default()
                },
            )
            .unwrap();
    }
    for (i, &e) in entities.iter().enumerate() {
        assert_eq!(get(&registry, e, pos), ticks as f32 * i as f32);
        assert_eq!(get(&registry, e, hp), 10.0 + ticks as f32);
        assert_eq!(registry.get::<Position>(e), Some(&Position(ticks as f32)));
    }
    assert_eq!(registry.count_id(hp), n + ticks as usize);
    assert_eq!(threads_seen.load(Ordering::Relaxed), ticks as usize);
}
