//! Disabled entities: views, filters, `par_each`, `get`, counts, the
//! refusal of `&mut Disabled`, and a model-based property test.

use ecs_engine::{Disabled, EcsError, Entity, Registry};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(u64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(u64);

/// `n` entities with Position and Velocity; every third one disabled.
fn world(n: u64) -> (Registry, Vec<Entity>) {
    let mut registry = Registry::new();
    let all: Vec<Entity> = (0..n)
        .map(|i| registry.spawn((Position(i), Velocity(1))))
        .collect();
    for &e in all.iter().step_by(3) {
        assert_eq!(registry.disable(e), Ok(true));
    }
    (registry, all)
}

#[test]
fn every_kind_of_walk_skips_disabled_entities() {
    let n = if cfg!(miri) { 40 } else { 5000 };
    let (mut registry, all) = world(n);
    let enabled_sum: u64 = (0..n).filter(|i| i % 3 != 0).sum();
    let enabled = (0..n).filter(|i| i % 3 != 0).count();

    assert_eq!(
        registry
            .view::<&Position>()
            .iter()
            .map(|p| p.0)
            .sum::<u64>(),
        enabled_sum
    );
    assert_eq!(registry.view::<&Position>().count(), enabled);
    let mut seen = 0;
    registry
        .view::<(&Position, &Velocity)>()
        .each(|_| seen += 1);
    assert_eq!(seen, enabled);

    registry
        .view_mut::<(&mut Position, &Velocity)>()
        .each(|(p, v)| p.0 += v.0 * 1000);
    for (i, &e) in all.iter().enumerate() {
        let moved = if i % 3 == 0 {
            i as u64
        } else {
            i as u64 + 1000
        };
        assert_eq!(registry.get::<Position>(e), Some(&Position(moved)));
    }

    let view = registry.view::<&Position>();
    assert!(matches!(view.get(all[0]), Err(EcsError::NotInView { .. })));
    assert!(!view.contains(all[0]));
    assert!(view.contains(all[1]));
    drop(view);

    // Filters that do not name `Disabled` keep skipping.
    assert_eq!(
        registry.view::<&Position>().with::<Velocity>().count(),
        enabled
    );
    assert_eq!(
        registry.view::<&Position>().without::<u8>().count(),
        enabled
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "rayon's crossbeam-epoch trips Stacked Borrows; .ci/run runs this under Tree Borrows"
)]
fn par_each_skips_disabled_entities() {
    let n = if cfg!(miri) { 300 } else { 20_000 };
    let (mut registry, all) = world(n);
    let enabled = (0..n).filter(|i| i % 3 != 0).count();
    let total = std::sync::atomic::AtomicUsize::new(0);
    registry
        .view_mut::<(&mut Position, &Velocity)>()
        .par_each(|(p, v)| {
            p.0 += v.0 * 1000;
            total.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        });
    assert_eq!(total.into_inner(), enabled);
    for (i, &e) in all.iter().enumerate() {
        let moved = if i % 3 == 0 {
            i as u64
        } else {
            i as u64 + 1000
        };
        assert_eq!(registry.get::<Position>(e), Some(&Position(moved)));
    }
}

#[test]
fn naming_disabled_asks_for_disabled_entities() {
    let n = 300;
    let (mut registry, all) = world(n);
    let disabled = all.iter().step_by(3).count();
    // Option<&Disabled>: every entity, told apart.
    let both: Vec<(Entity, bool)> = registry
        .view::<(Entity, &Position, Option<&Disabled>)>()
        .iter()
        .map(|(e, _, d)| (e, d.is_some()))
        .collect();
    assert_eq!(both.len(), n as usize);
    assert_eq!(both.iter().filter(|(_, d)| *d).count(), disabled);
    // &Disabled, With<Disabled> (as a type or through `with`): only disabled.
    assert_eq!(registry.view::<(&Position, &Disabled)>().count(), disabled);
    assert_eq!(
        registry
            .view_filtered::<&Position, ecs_engine::With<Disabled>>()
            .count(),
        disabled
    );
    assert_eq!(
        registry.view::<&Position>().with::<Disabled>().count(),
        disabled
    );
    // Without<Disabled>: what a plain view does.
    assert_eq!(
        registry.view::<&Position>().without::<Disabled>().count(),
        n as usize - disabled
    );
    let view = registry.view::<(&Position, Option<&Disabled>)>();
    assert!(view.get(all[0]).is_ok_and(|(_, d)| d.is_some()));
}

#[test]
fn disable_enable_and_counts() {
    let mut registry = Registry::new();
    let a = registry.spawn((Position(1),));
    let b = registry.spawn((Position(2),));
    assert_eq!(registry.disabled_len(), 0);
    assert_eq!(registry.disable(a), Ok(true));
    assert_eq!(registry.disable(a), Ok(false));
    assert!(registry.is_disabled(a) && !registry.is_disabled(b));
    // Counts include disabled entities; views do not.
    assert_eq!(registry.len(), 2);
    assert_eq!(registry.count::<Position>(), 2);
    assert_eq!(registry.disabled_len(), 1);
    assert_eq!(registry.view::<&Position>().count(), 1);
    assert_eq!(registry.enable(a), Ok(true));
    assert_eq!(registry.enable(a), Ok(false));
    // An emptied pool: back to the plain walk.
    assert_eq!(registry.view::<&Position>().count(), 2);
    registry.despawn(b).unwrap();
    assert_eq!(
        registry.disable(b),
        Err(EcsError::NoSuchEntity { entity: b })
    );
    assert_eq!(
        registry.enable(b),
        Err(EcsError::NoSuchEntity { entity: b })
    );
    assert!(!registry.is_disabled(b));
    // The generic insert of the marker disables too.
    registry.insert(a, Disabled).unwrap();
    assert_eq!(registry.view::<&Position>().count(), 0);
    // A disabled entity's components are still reachable directly.
    assert_eq!(registry.get::<Position>(a), Some(&Position(1)));
    registry.despawn(a).unwrap();
    assert_eq!(registry.disabled_len(), 0);
}

#[test]
fn retain_and_visit_skip_disabled() {
    let (mut registry, all) = world(30);
    let despawned = registry.retain::<&Position>(|_| false);
    assert_eq!(despawned, 20);
    assert_eq!(registry.len(), 10);
    assert!(all.iter().step_by(3).all(|&e| registry.is_alive(e)));
}

#[test]
#[should_panic(expected = "Disabled` for writing: it is changed only through")]
fn a_view_of_mut_disabled_panics() {
    let mut registry = Registry::new();
    let e = registry.spawn((Position(0),));
    registry.disable(e).unwrap();
    let _ = registry.view_mut::<(&Position, &mut Disabled)>();
}

#[test]
fn a_cell_view_of_mut_disabled_is_an_error() {
    let mut registry = Registry::new();
    registry.spawn((Position(0),));
    let cell = registry.cell();
    assert_eq!(
        cell.view::<(&Position, &mut Disabled)>().err(),
        Some(EcsError::ReadOnlyComponent {
            component: std::any::type_name::<Disabled>().into()
        })
    );
    assert_eq!(
        cell.view::<(&Position, Option<&mut Disabled>)>().err(),
        Some(EcsError::ReadOnlyComponent {
            component: std::any::type_name::<Disabled>().into()
        })
    );
    // Nothing stays locked after the refusal.
    assert_eq!(
        cell.view::<(&mut Position, &Disabled)>()
            .map(|mut v| v.count()),
        Ok(0)
    );
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 3 } else { 128 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random spawns, despawns, disables and enables: every view equals the
    /// model's enabled entities, in every walk.
    #[test]
    fn views_match_model(ops in prop::collection::vec((0..4u8, 0..64usize), 1..if cfg!(miri) { 30 } else { 200 })) {
        let mut registry = Registry::new();
        let mut model: Vec<(Entity, bool, bool)> = Vec::new(); // (handle, alive, disabled)
        for (op, k) in ops {
            let k = k % model.len().max(1);
            match op {
                0 => {
                    let e = registry.spawn((Position(model.len() as u64), Velocity(1)));
                    model.push((e, true, false));
                }
                _ if model.is_empty() => {}
                1 => {
                    let m = &mut model[k];
                    prop_assert_eq!(registry.disable(m.0).is_ok(), m.1);
                    m.2 |= m.1;
                }
                2 => {
                    let m = &mut model[k];
                    prop_assert_eq!(registry.enable(m.0).is_ok(), m.1);
                    m.2 = false;
                }
                _ => {
                    let m = &mut model[k];
                    prop_assert_eq!(registry.despawn(m.0).is_ok(), m.1);
                    m.1 = false;
                    m.2 = false;
                }
            }
            let mut expected: Vec<Entity> =
                model.iter().filter(|m| m.1 && !m.2).map(|m| m.0).collect();
            expected.sort();
            let mut seen: Vec<Entity> =
                registry.view::<(Entity, &Position, &Velocity)>().iter().map(|(e, _, _)| e).collect();
            seen.sort();
            prop_assert_eq!(&seen, &expected);
            let mut each = Vec::new();
            registry.view_mut::<(Entity, &mut Position)>().each(|(e, _)| each.push(e));
            each.sort();
            prop_assert_eq!(&each, &expected);
            let mut seen = Vec::new();
            registry.view::<(Entity, &Velocity)>().iter().for_each(|(e, _)| seen.push(e));
            let mut contained: Vec<Entity> = model
                .iter()
                .map(|m| m.0)
                .filter(|&e| registry.view::<&Velocity>().contains(e))
                .collect();
            seen.sort();
            contained.sort();
            prop_assert_eq!(&seen, &expected);
            prop_assert_eq!(&contained, &expected);
            if !cfg!(miri) {
                // Under Miri, rayon is exercised by the test above only.
                let par = std::sync::Mutex::new(Vec::new());
                registry.view::<(Entity, &Velocity)>().par_each(|(e, _)| par.lock().unwrap().push(e));
                let mut par = par.into_inner().unwrap();
                par.sort();
                prop_assert_eq!(&par, &expected);
            }
            prop_assert_eq!(
                registry.disabled_len(),
                model.iter().filter(|m| m.1 && m.2).count()
            );
        }
    }
}

#[test]
fn raw_views_cut_chunks_around_disabled_entities() {
    use ecs_engine::{Access, ComponentDescriptor};
    let mut registry = Registry::new();
    let layout = std::alloc::Layout::new::<u64>();
    let id = registry
        .register_runtime(ComponentDescriptor::new("id", layout))
        .unwrap();
    let n = if cfg!(miri) { 30 } else { 1000 };
    let mut all = Vec::new();
    for i in 0..n as u64 {
        let e = registry.spawn(());
        // SAFETY: a valid u64, plain bytes.
        unsafe { registry.insert_raw(e, id, (&raw const i).cast()).unwrap() };
        all.push(e);
    }
    for &e in all.iter().step_by(3).chain(all.iter().skip(400).take(50)) {
        registry.disable(e).unwrap();
    }
    let expected: Vec<(Entity, u64)> = all
        .iter()
        .enumerate()
        .filter(|&(_, &e)| !registry.is_disabled(e))
        .map(|(i, &e)| (e, i as u64))
        .collect();
    let mut view = registry.raw_view(&[(id, Access::Read)]).unwrap();
    let mut chunked = Vec::new();
    view.each_chunk(|chunk| {
        assert!(!chunk.is_empty());
        let base = chunk.columns()[0].cast::<u64>();
        for (i, &e) in chunk.entities().iter().enumerate() {
            // SAFETY: `i < len`, a read term.
            chunked.push((e, unsafe { *base.add(i) }));
        }
    });
    assert_eq!(chunked, expected);
    let mut each = Vec::new();
    view.each(|e, values| {
        // SAFETY: the visited entity's u64.
        each.push((e, unsafe { *values[0].cast::<u64>() }));
    });
    assert_eq!(each, expected);
    assert_eq!(view.count(), expected.len());
}
