//! Long joins, whose walks grow their blocks while the pools stay aligned:
//! alignment broken at chosen points of large worlds, walked serially and
//! in parallel, with filters, disabled entities, Option and Entity terms,
//! against a model; and `Changed<A>` sees exactly what `&mut A` handed out.

use std::collections::BTreeMap;

use ecs_engine::{ChangeTick, Changed, Entity, Registry, With, Without};

use crate::components::{A, B, C, Tag};

#[derive(Debug, Clone, Copy, Default)]
struct Model {
    a: u32,
    b: Option<u32>,
    c: Option<u32>,
    tag: bool,
    disabled: bool,
}

struct World {
    registry: Registry,
    entities: Vec<Entity>,
    model: BTreeMap<Entity, Model>,
}

/// `n` entities with A, B and C spawned together (aligned), Tag on every
/// seventh; then B (and C) moved to their pools' ends at `breaks`
/// (remove + insert), B removed at `holes`, and `disabled` disabled.
fn world(n: u32, breaks: &[u32], holes: &[u32], disabled: &[u32]) -> World {
    let mut registry = Registry::new();
    registry.track_changes::<A>();
    let mut model = BTreeMap::new();
    let entities: Vec<Entity> = (0..n)
        .map(|i| {
            let e = registry.spawn((A(i), B(i), C(i)));
            let tag = i % 7 == 0;
            if tag {
                registry.insert(e, Tag).unwrap();
            }
            model.insert(
                e,
                Model {
                    a: i,
                    b: Some(i),
                    c: Some(i),
                    tag,
                    disabled: false,
                },
            );
            e
        })
        .collect();
    for &i in breaks {
        let e = entities[i as usize];
        registry.remove::<B>(e).unwrap();
        registry.insert(e, B(i)).unwrap();
        if i % 2 == 0 {
            registry.remove::<C>(e).unwrap();
            registry.insert(e, C(i)).unwrap();
        }
    }
    for &i in holes {
        let e = entities[i as usize];
        if registry.remove::<B>(e).is_ok() {
            model.get_mut(&e).unwrap().b = None;
        }
    }
    for &i in disabled {
        let e = entities[i as usize];
        registry.disable(e).unwrap();
        model.get_mut(&e).unwrap().disabled = true;
    }
    World {
        registry,
        entities,
        model,
    }
}

/// Visits through every serial and parallel walk; checks each against the
/// model, and that the writes landed once.
/// Starts a new change tick and adds `add` to the `A` of every owner of
/// `B` with `Tag` through a `&mut A` walk; the change tick before it, and
/// the entities written.
fn write_tagged(w: &mut World, add: u32) -> (ChangeTick, Vec<Entity>) {
    let since = w.registry.change_tick();
    w.registry.advance_change_tick();
    let mut written = Vec::new();
    w.registry
        .view_filtered::<(Entity, &mut A, &B), With<Tag>>()
        .each(|(e, a, _)| {
            written.push(e);
            a.0 += add;
        });
    (since, written)
}

fn check(w: &mut World, label: &str) {
    let live = |m: &Model| !m.disabled;
    // (Entity, &mut A, &B): serial each, every owner once; A += 1.
    let mut seen = BTreeMap::new();
    w.registry
        .view_mut::<(Entity, &mut A, &B)>()
        .each(|(e, a, b)| {
            assert!(seen.insert(e, (a.0, b.0)).is_none(), "{label}: {e} twice");
            a.0 += 1;
        });
    let expected: BTreeMap<Entity, (u32, u32)> = w
        .model
        .iter()
        .filter(|(_, m)| live(m) && m.b.is_some())
        .map(|(&e, m)| (e, (m.a, m.b.unwrap())))
        .collect();
    assert_eq!(seen, expected, "{label}: (Entity, &mut A, &B)");
    for (e, m) in w.model.iter_mut() {
        if live(m) && m.b.is_some() {
            m.a += 1;
        }
        assert_eq!(w.registry.get::<A>(*e).unwrap().0, m.a, "{label}: A of {e}");
    }

    // Filters and Option terms: (&mut A, Option<&C>, &B) with Without<Tag>,
    // driven by B; then With<Tag>.
    let mut seen = BTreeMap::new();
    w.registry
        .view_filtered::<(Entity, &mut A, Option<&C>, &B), Without<Tag>>()
        .each(|(e, a, c, b)| {
            assert!(
                seen.insert(e, (a.0, c.map(|c| c.0), b.0)).is_none(),
                "{label}: {e} twice"
            );
            a.0 += 10;
        });
    let expected: BTreeMap<Entity, (u32, Option<u32>, u32)> = w
        .model
        .iter()
        .filter(|(_, m)| live(m) && m.b.is_some() && !m.tag)
        .map(|(&e, m)| (e, (m.a, m.c, m.b.unwrap())))
        .collect();
    assert_eq!(seen, expected, "{label}: Without<Tag>");
    for m in w.model.values_mut() {
        if live(m) && m.b.is_some() && !m.tag {
            m.a += 10;
        }
    }

    // Change detection: only the With<Tag> owners of B are written through
    // `&mut A` now; Changed<A> since then must be exactly them.
    let (since, mut written) = write_tagged(w, 100);
    // A read-only walk over everything marks nothing.
    let mut n = 0;
    w.registry.view::<(&A, &B, &C)>().each(|_| n += 1);
    for m in w.model.values_mut() {
        if live(m) && m.b.is_some() && m.tag {
            m.a += 100;
        }
    }
    let mut changed: Vec<Entity> = w
        .registry
        .view_since::<(Entity, &A), Changed<A>>(since)
        .iter()
        .map(|(e, _)| e)
        .collect();
    changed.sort_by_key(|e| e.to_bits());
    written.sort_by_key(|e| e.to_bits());
    let expected: Vec<Entity> = w
        .model
        .iter()
        .filter(|(_, m)| live(m) && m.b.is_some() && m.tag)
        .map(|(&e, _)| e)
        .collect();
    let mut expected_sorted = expected.clone();
    expected_sorted.sort_by_key(|e| e.to_bits());
    assert_eq!(written, expected_sorted, "{label}: With<Tag> writes");
    assert_eq!(
        changed, expected_sorted,
        "{label}: Changed<A> after With<Tag> writes"
    );

    // A query that filters on the type it writes: Changed<A> with &mut A,
    // walked over the long join, sees the Tag owners only (and re-marks
    // them, nothing else).
    let mut seen = Vec::new();
    w.registry
        .view_mut_since::<(Entity, &mut A, &B), Changed<A>>(since)
        .each(|(e, _, _)| seen.push(e));
    seen.sort_by_key(|e| e.to_bits());
    assert_eq!(seen, expected_sorted, "{label}: (&mut A) with Changed<A>");

    // Parallel walks on 2 threads: par_each writes, par_filter_map reads.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| {
        w.registry
            .view_mut::<(&mut A, &B)>()
            .par_each(|(a, _)| a.0 += 1_000);
    });
    for m in w.model.values_mut() {
        if live(m) && m.b.is_some() {
            m.a += 1_000;
        }
    }
    let found: Vec<(Entity, u32)> = pool.install(|| {
        w.registry
            .view_mut::<(Entity, &A, &B, Option<&C>)>()
            .par_filter_map(|e, (_, a, _, _)| Some((e, a.0)))
    });
    let mut found_map = BTreeMap::new();
    for (e, a) in found {
        assert!(found_map.insert(e, a).is_none(), "{label}: par {e} twice");
    }
    let expected: BTreeMap<Entity, u32> = w
        .model
        .iter()
        .filter(|(_, m)| live(m) && m.b.is_some())
        .map(|(&e, m)| (e, m.a))
        .collect();
    assert_eq!(
        found_map, expected,
        "{label}: par_filter_map after par_each"
    );
    let _ = &w.entities;
}

/// A world's label, and the positions of its breaks, holes and disabled
/// entities (see [`world`]).
type Case = (&'static str, Vec<u32>, Vec<u32>, Vec<u32>);

fn big() -> u32 {
    if cfg!(miri) { 2_000 } else { 100_000 }
}

#[test]
#[cfg_attr(miri, ignore = "too long for Miri")]
fn long_joins_broken_at_chosen_points_match_the_model() {
    let n = big();
    let cases: Vec<Case> = vec![
        ("aligned", vec![], vec![], vec![]),
        ("break at 0", vec![0], vec![], vec![]),
        ("break at 511", vec![511], vec![], vec![]),
        ("break at 512", vec![512], vec![], vec![]),
        ("break at 1535", vec![1535], vec![], vec![]),
        ("break in the middle", vec![n / 2 + 17], vec![], vec![]),
        ("break at the end", vec![n - 2], vec![], vec![]),
        (
            "periodic breaks",
            (0..n).step_by(1_537).collect(),
            vec![],
            vec![],
        ),
        (
            "periodic holes",
            vec![],
            (3..n).step_by(3_001).collect(),
            vec![],
        ),
        (
            "breaks, holes and disabled",
            (100..n).step_by(4_099).collect(),
            (7..n).step_by(2_053).collect(),
            (5..n).step_by(997).collect(),
        ),
        (
            "disabled only",
            vec![],
            vec![],
            (0..n).step_by(513).collect(),
        ),
    ];
    for (label, breaks, holes, disabled) in cases {
        let breaks: Vec<u32> = breaks.into_iter().filter(|&i| i < n).collect();
        let mut w = world(n, &breaks, &holes, &disabled);
        check(&mut w, label);
    }
}

/// Small enough for Miri: a joined block of 1,024 positions (the second
/// block, after one of 512), then a broken one, walked serially with
/// `&mut` terms, a filter, Option and Entity terms; then Changed<A>.
/// Under Miri, whose views start from blocks of 64, a grown block of 128
/// after one of 64, in a quarter of the entities.
#[test]
fn a_doubled_joined_block_is_walked_once_per_position() {
    let n: u32 = if cfg!(miri) { 256 } else { 1_600 };
    // A tagged entity (a multiple of 7) in the grown block, disabled.
    let disabled = if cfg!(miri) { 112 } else { 700 };
    let mut w = world(n, &[n - 2], &[], &[3, disabled]);
    let mut seen = BTreeMap::new();
    w.registry
        .view_filtered::<(Entity, &mut A, Option<&C>, &B), Without<Tag>>()
        .each(|(e, a, c, b)| {
            assert_eq!(c.map(|c| c.0), Some(b.0));
            assert!(seen.insert(e, a.0).is_none(), "{e} twice");
            a.0 += 1;
        });
    let expected: BTreeMap<Entity, u32> = w
        .model
        .iter()
        .filter(|(_, m)| !m.disabled && !m.tag)
        .map(|(&e, m)| (e, m.a))
        .collect();
    assert_eq!(seen, expected);
    let (since, written) = write_tagged(&mut w, 1);
    let changed: Vec<Entity> = w
        .registry
        .view_since::<(Entity, &A), Changed<A>>(since)
        .iter()
        .map(|(e, _)| e)
        .collect();
    assert_eq!(changed.len(), written.len());
    assert_eq!(
        written.len(),
        (0..n).filter(|i| i % 7 == 0 && *i != disabled).count()
    );
    for e in written {
        assert!(changed.contains(&e));
    }
}
