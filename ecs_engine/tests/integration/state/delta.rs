//! Delta saves of resources and of writes that bypass change detection,
//! and rings saved on a thread pool.

use super::*;

/// A resource that counts its clones, for the resource-delta test.
#[derive(Debug, PartialEq)]
struct Plan(Vec<u32>);

static PLAN_CLONES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Clone for Plan {
    fn clone(&self) -> Self {
        PLAN_CLONES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Plan(self.0.clone())
    }
}

#[test]
fn a_delta_resource_is_copied_only_after_a_write() {
    let clones = || PLAN_CLONES.load(std::sync::atomic::Ordering::Relaxed);
    let mut registry = Registry::new();
    registry.register_resource_clone_delta::<Plan>();
    registry.insert_resource(Plan(vec![1]));
    let mut state = registry.save_state().unwrap();
    assert_eq!(clones(), 1);
    // Unwritten: the state's copy is shared, whatever else ticks.
    for _ in 0..3 {
        registry.advance_change_tick();
        registry.save_state_into(&mut state).unwrap();
    }
    assert_eq!(clones(), 1);
    // Taken for writing through the cell but not written (not marked):
    // still the same value.
    {
        let cell = registry.cell();
        let (plan, _ticks) = cell.resource_mut_with_ticks::<Plan>().unwrap();
        assert_eq!(plan.0, [1]);
    }
    registry.save_state_into(&mut state).unwrap();
    assert_eq!(clones(), 1);

    // Each way of writing makes the next save copy, and a restore gives
    // back the value of the save it restores.
    type Write = fn(&mut Registry, u32);
    let writes: [(&str, Write); 5] = [
        ("resource_mut", |r, v| {
            r.resource_mut::<Plan>().unwrap().0.push(v)
        }),
        ("resource_mut_untracked", |r, v| {
            r.resource_mut_untracked::<Plan>().unwrap().0.push(v)
        }),
        ("cell resource_mut", |r, v| {
            r.cell().resource_mut::<Plan>().unwrap().0.push(v)
        }),
        ("marked guard", |r, v| {
            let cell = r.cell();
            let (mut plan, ticks) = cell.resource_mut_with_ticks::<Plan>().unwrap();
            plan.0.push(v);
            ticks.mark(cell.change_tick());
        }),
        ("insert_resource", |r, v| {
            let mut plan = r.resource::<Plan>().unwrap().0.clone();
            plan.push(v);
            r.insert_resource(Plan(plan));
        }),
    ];
    let mut expected = vec![1];
    for (k, (how, write)) in writes.iter().enumerate() {
        let v = k as u32 + 2;
        write(&mut registry, v);
        expected.push(v);
        let before = clones();
        registry.save_state_into(&mut state).unwrap();
        assert!(
            clones() > before,
            "{how}: the save did not copy the written value"
        );
        write(&mut registry, 100);
        registry.restore_state(&state).unwrap();
        assert_eq!(registry.resource::<Plan>().unwrap().0, expected, "{how}");
        // The restored value is the saved one: the next save shares it.
        let before = clones();
        registry.save_state_into(&mut state).unwrap();
        assert_eq!(clones(), before, "{how}: a restored value copied again");
    }

    // In a ring, each frame keeps the value it saw.
    let mut ring = ecs_engine::StateRing::new(4);
    registry.save_frame(&mut ring).unwrap();
    registry.save_frame(&mut ring).unwrap();
    registry.resource_mut::<Plan>().unwrap().0.push(7);
    registry.save_frame(&mut ring).unwrap();
    registry.restore_frame(&mut ring, 1).unwrap();
    assert_eq!(registry.resource::<Plan>().unwrap().0, expected);
    registry.resource_mut::<Plan>().unwrap().0.clear();
    registry.restore_frame(&mut ring, 0).unwrap();
    assert_eq!(registry.resource::<Plan>().unwrap().0, expected);
}

#[test]
fn a_restore_needs_no_registration_and_keeps_what_the_save_could_not_copy() {
    // Saved by a registry that registered `Score`'s clone: restored into
    // one that did not, the saved value comes back (no panic).
    let mut saver = Registry::new();
    saver.register_resource_clone_delta::<Score>();
    saver.insert_resource(Score(7));
    let state = saver.save_state().unwrap();
    let mut other = Registry::new();
    other.insert_resource(Score(1));
    other.restore_state(&state).unwrap();
    assert_eq!(other.resource::<Score>(), Some(&Score(7)));

    // A resource the save saw but could not copy (its clone registered
    // only after the save) stays as it is; one of a
    // registered type inserted after the save goes.
    let mut registry = Registry::new();
    registry.insert_resource(Score(3));
    let state = registry.save_state().unwrap();
    assert_eq!(state.unsaved_resources().len(), 1);
    registry.register_resource_clone_delta::<Score>();
    registry.register_resource_clone::<Name>();
    registry.insert_resource(Name("later".into()));
    registry.resource_mut::<Score>().unwrap().0 = 4;
    registry.advance_change_tick();
    registry.restore_state(&state).unwrap();
    assert_eq!(registry.resource::<Score>(), Some(&Score(4)));
    assert_eq!(registry.resource::<Name>(), None);
    // And its next save copies it (it was not the value of any save).
    let mut state = registry.save_state().unwrap();
    registry.restore_state(&state).unwrap();
    registry.save_state_into(&mut state).unwrap();
    registry.resource_mut::<Score>().unwrap().0 = 9;
    registry.restore_state(&state).unwrap();
    assert_eq!(registry.resource::<Score>(), Some(&Score(4)));
}

/// A component that counts its clones, for the bypass test.
#[derive(Debug, PartialEq)]
struct Heat(u32);

static HEAT_CLONES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Clone for Heat {
    fn clone(&self) -> Self {
        HEAT_CLONES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Heat(self.0)
    }
}

#[test]
fn a_write_that_bypasses_change_detection_is_saved_by_a_delta() {
    let clones = || HEAT_CLONES.load(std::sync::atomic::Ordering::Relaxed);
    let mut registry = Registry::new();
    registry.register_clone_delta::<Heat>();
    registry.track_changes::<Heat>();
    let first = registry.spawn((Heat(0),));
    for i in 1..10 {
        registry.spawn((Heat(i),));
    }
    let mut state = registry.save_state().unwrap();
    let mut ring = ecs_engine::StateRing::new(3);
    registry.save_frame(&mut ring).unwrap();
    registry.save_frame(&mut ring).unwrap();
    // Synced: a save after a read through `Mut` copies nothing.
    registry.advance_change_tick();
    registry.save_state_into(&mut state).unwrap();
    registry.advance_change_tick();
    registry.view_mut::<Mut<Heat>>().each(|h| assert!(h.0 < 10));
    let before = clones();
    registry.save_state_into(&mut state).unwrap();
    assert_eq!(clones(), before);
    registry.save_frame(&mut ring).unwrap();
    // A write that bypasses change detection: seen by both saves.
    registry.advance_change_tick();
    registry
        .view_mut::<Mut<Heat>>()
        .each(|mut h| h.bypass_change_detection().0 += 100);
    registry.save_state_into(&mut state).unwrap();
    registry.save_frame(&mut ring).unwrap();
    registry.get_mut::<Heat>(first).unwrap().0 = 7;
    registry.restore_state(&state).unwrap();
    assert_eq!(registry.get::<Heat>(first), Some(&Heat(100)));
    registry.get_mut::<Heat>(first).unwrap().0 = 7;
    registry.restore_frame(&mut ring, 0).unwrap();
    assert_eq!(registry.get::<Heat>(first), Some(&Heat(100)));
}

/// The registry after `round` rounds of writes: spawns, in-place
/// `Position` writes (delta-saved), `Name` rewrites (copied whole) and a
/// despawn, so that a ring's saves take every path.
fn write_round(registry: &mut Registry, round: u32) {
    let e = registry.spawn((Position(round as f32, 0.0), Name(format!("n{round}"))));
    registry.spawn((Score(u64::from(round)),));
    for (i, p) in registry.view_mut::<&mut Position>().iter().enumerate() {
        if i % 2 == round as usize % 2 {
            p.1 += 1.0;
        }
    }
    if round.is_multiple_of(3) {
        registry
            .view_mut::<&mut Name>()
            .iter()
            .for_each(|n| n.0.push('+'));
    }
    if round % 4 == 1 {
        registry.despawn(e).unwrap();
    }
}

#[test]
#[cfg_attr(miri, ignore)] // a rayon pool: Miri's Tree Borrows lane runs it
fn a_ring_saved_on_a_thread_pool_equals_one_saved_serially() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let rounds = if cfg!(miri) { 4 } else { 9 };
    let (mut serial, mut parallel) = (registry(), registry());
    serial.register_clone::<Score>();
    parallel.register_clone::<Score>();
    let (mut serial_ring, mut parallel_ring) =
        (ecs_engine::StateRing::new(4), ecs_engine::StateRing::new(4));
    let mut saved = Vec::new();
    for round in 0..rounds {
        write_round(&mut serial, round);
        write_round(&mut parallel, round);
        serial.save_frame(&mut serial_ring).unwrap();
        pool.install(|| parallel.save_frame(&mut parallel_ring))
            .unwrap();
        saved.push((contents(&serial), position_ticks(&serial)));
    }
    for back in [1, 0, 2] {
        serial.restore_frame(&mut serial_ring, back).unwrap();
        parallel.restore_frame(&mut parallel_ring, back).unwrap();
        saved.truncate(saved.len() - back);
        let (contents_then, ticks_then) = saved.last().unwrap();
        for registry in [&serial, &parallel] {
            assert_eq!(&contents(registry), contents_then);
            assert_eq!(&position_ticks(registry), ticks_then);
        }
        assert_eq!(serial.change_tick(), parallel.change_tick());
        let scores = |r: &Registry| {
            let mut s: Vec<u64> = r.view::<&Score>().iter().map(|s| s.0).collect();
            s.sort_unstable();
            s
        };
        assert_eq!(scores(&serial), scores(&parallel));
    }
}
