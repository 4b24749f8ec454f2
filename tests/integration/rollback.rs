//! `Engine::save_state` / `restore_state`: a small game (movement in
//! parallel, spawns and despawns through commands, events read a tick
//! later, change detection, a `Local`, a stateful system, a seeded random
//! resource) restored mid-run gives the uninterrupted run's world, entity
//! handles and counters, on 1 and 8 threads, in the same engine and in a
//! fresh one; a spawn after a restore never names an existing entity; a
//! system whose state cannot be saved is refused by name.

use ecs_runtime::command_buffer::CommandKind;
use ecs_runtime::prelude::*;
use ecs_runtime::scheduler::SystemStateError;
use ecs_runtime::{EngineRing, EngineState, EngineStateError};

use crate::common;
use common::game::{Born, Census, Hit, Hp, Observed, Pos, Rng, Stats, Vel, observe};

/// The shared game, its types registered for in-memory states.
fn game(threads: usize) -> (Engine, SystemHandle<Census>) {
    let (mut engine, census) = common::game::game(threads);
    engine
        .register_clone::<Pos>()
        .register_clone::<Vel>()
        .register_clone::<Hp>()
        .register_clone::<Born>()
        .register_resource_clone::<Rng>()
        .register_resource_clone::<Stats>()
        .register_resource_clone::<Events<Hit>>()
        .register_state_clone::<u64>()
        .register_state_clone::<Census>();
    (engine, census)
}

const TICKS: u64 = 24;
const SAVE_AT: u64 = 9;

fn uninterrupted(threads: usize) -> Observed {
    let (mut engine, census) = game(threads);
    engine.run(TICKS).unwrap();
    observe(&engine, census)
}

#[test]
fn restore_mid_run_gives_the_uninterrupted_run_on_1_and_8_threads() {
    let reference = uninterrupted(1);
    let stats = &reference.2;
    assert!(
        stats.changed_hp > 0 && stats.added_pos > 0 && stats.pulses > 2,
        "{stats:?}"
    );
    assert!(reference.1.len() > 20);
    for threads in [1, 8] {
        assert_eq!(
            uninterrupted(threads),
            reference,
            "{threads} threads, no restore"
        );

        // Save, run on, restore into the same engine, run to the end.
        let (mut engine, census) = game(threads);
        engine.run(SAVE_AT).unwrap();
        let state: EngineState = engine.save_state().unwrap();
        assert_eq!(state.ticks(), SAVE_AT);
        engine.run(7).unwrap();
        engine.restore_state(&state).unwrap();
        assert_eq!(engine.ticks(), SAVE_AT);
        engine.run(TICKS - SAVE_AT).unwrap();
        assert_eq!(
            observe(&engine, census),
            reference,
            "{threads} threads, same engine"
        );

        // Restore into a fresh engine built the same way.
        let (mut fresh, census) = game(threads);
        fresh.restore_state(&state).unwrap();
        fresh.run(TICKS - SAVE_AT).unwrap();
        assert_eq!(
            observe(&fresh, census),
            reference,
            "{threads} threads, fresh engine"
        );
    }
}

#[test]
fn a_restore_makes_no_spurious_added_or_changed() {
    let (mut engine, _) = game(2);
    engine.run(SAVE_AT).unwrap();
    let state = engine.save_state().unwrap();
    engine.run(1).unwrap();
    let after_one = engine.registry().resource::<Stats>().unwrap().clone();
    engine.run(5).unwrap();
    engine.restore_state(&state).unwrap();
    engine.run(1).unwrap();
    // One tick after the restore sees what one tick after the save saw:
    // not the whole restored population as added or changed.
    assert_eq!(engine.registry().resource::<Stats>().unwrap(), &after_one);
}

#[test]
fn spawns_after_a_restore_name_new_entities_only() {
    // `spawner` asserts each handle it gets is not a live entity; here the
    // entities it spawned carry their birth tick, so a misapplied insert
    // (onto an entity of the restored world) would show as a wrong tick.
    let (mut engine, _) = game(2);
    engine.run(4).unwrap();
    let state = engine.save_state().unwrap();
    engine.run(6).unwrap();
    for _ in 0..3 {
        engine.restore_state(&state).unwrap();
        for _ in 0..3 {
            engine.tick().unwrap();
            let report = engine.command_report();
            assert_eq!(report.skipped(CommandKind::Spawn), 0, "{report:?}");
            assert_eq!(report.skipped(CommandKind::Insert), 0, "{report:?}");
        }
        let registry = engine.registry();
        let born: Vec<u64> = registry.view::<&Born>().iter().map(|b| b.0).collect();
        assert!(born.iter().all(|&t| t < 7), "{born:?}");
        for t in 4..7 {
            let spawned = born.iter().filter(|&&b| b == t).count();
            assert!(spawned <= 3, "tick {t}: {spawned} entities born");
        }
    }
}

#[test]
fn unsaved_state_is_refused_by_system_name() {
    let mut builder = Engine::builder();
    builder.add_system(|mut n: Local<Vec<u8>>| n.push(1));
    let mut engine = builder.build().unwrap();
    engine.tick().unwrap();
    let error = engine.save_state().unwrap_err();
    assert!(
        matches!(&error, EngineStateError::Systems(SystemStateError::NotClonable { state, .. })
            if state.contains("Vec<u8>")),
        "{error}"
    );
    engine.register_state_clone::<Vec<u8>>();
    let state = engine.save_state().unwrap();
    assert!(
        state
            .unsaved_resources()
            .iter()
            .all(|name| !name.contains("Tick"))
    );

    let counter = 5u32;
    let mut builder = Engine::builder();
    builder.add_system(move |_: Query<&Pos>| {
        std::hint::black_box(counter);
    });
    let mut engine = builder.build().unwrap();
    engine.register_clone::<Pos>();
    let error = engine.save_state().unwrap_err();
    assert!(
        matches!(
            error,
            EngineStateError::Systems(SystemStateError::NotClonable { .. })
        ),
        "{error}"
    );
    assert!(error.to_string().contains("closure"), "{error}");
}

fn count_positions(q: Query<&Pos>) {
    std::hint::black_box(q.count());
}

#[test]
fn a_fn_pointer_system_is_refused_with_a_hint_and_saved_once_registered() {
    let mut builder = Engine::builder();
    builder.add_system(count_positions as fn(Query<&Pos>));
    let mut engine = builder.build().unwrap();
    engine.register_clone::<Pos>();
    let error = engine.save_state().unwrap_err();
    assert!(
        matches!(&error, EngineStateError::Systems(SystemStateError::NotClonable { state, .. })
            if state.starts_with("fn(")),
        "{error}"
    );
    assert!(error.to_string().contains("a `fn` pointer"), "{error}");
    engine.register_state_clone::<fn(Query<&Pos>)>();
    engine.save_state().unwrap();
    // The function item itself keeps no state: saved as it is.
    let mut builder = Engine::builder();
    builder.add_system(count_positions);
    let mut engine = builder.build().unwrap();
    engine.register_clone::<Pos>();
    engine.save_state().unwrap();
}

#[test]
fn a_restore_into_a_fresh_engine_does_not_rerun_its_startup_systems() {
    let build = || {
        let mut builder = Engine::builder();
        builder.add_startup_system(|mut commands: Commands| {
            commands.spawn((Born(0),));
        });
        builder.add_system(|q: Query<&Born>| assert!(q.count() <= 1));
        let mut engine = builder.build().unwrap();
        engine.register_clone::<Born>();
        engine
    };
    let mut engine = build();
    engine.run(2).unwrap();
    let state = engine.save_state().unwrap();
    let mut fresh = build();
    fresh.restore_state(&state).unwrap();
    fresh.run(2).unwrap();
    assert_eq!(fresh.registry().view::<&Born>().count(), 1);
}

/// Appends its run count to `u64` as a decimal digit.
fn boom(mut runs: Local<u64>, mut out: ResMut<u64>) {
    *runs += 1;
    *out = *out * 10 + *runs;
}

#[test]
fn one_shot_locals_and_initial_enters_survive_a_restore_into_a_fresh_engine() {
    #[derive(Debug, Clone, PartialEq)]
    struct Level;
    let build = || {
        let mut builder = Engine::builder();
        builder.insert_resource(0u64);
        builder.insert_resource(0u32);
        builder.add_state(Level);
        builder.add_on_enter(Level, |mut entered: ResMut<u32>| *entered += 1);
        let id = builder.register_system(boom);
        builder.add_system(|| {});
        let mut engine = builder.build().unwrap();
        engine
            .register_resource_clone::<u64>()
            .register_resource_clone::<u32>()
            .register_resource_clone::<State<Level>>()
            .register_resource_clone::<NextState<Level>>()
            .register_state_clone::<u64>();
        (engine, id)
    };
    let (mut engine, id) = build();
    engine.tick().unwrap();
    engine.run_system(id).unwrap();
    engine.run_system(id).unwrap();
    let state = engine.save_state().unwrap();
    let (mut fresh, id) = build();
    fresh.restore_state(&state).unwrap();
    fresh.tick().unwrap();
    fresh.run_system(id).unwrap();
    fresh.run_system(id).unwrap();
    assert_eq!(fresh.registry().resource::<u64>(), Some(&1234));
    assert_eq!(
        fresh.registry().resource::<u32>(),
        Some(&1),
        "the initial enter ran again"
    );
}

/// Spawns three entities through its commands, each carrying the
/// number of the run that made it.
fn spawn_three(mut runs: Local<u64>, mut commands: Commands) {
    *runs += 1;
    for _ in 0..3 {
        commands.spawn((Born(*runs),));
    }
}

#[test]
fn one_shot_command_reserves_survive_a_restore_into_a_fresh_engine() {
    // A one-shot system's buffer keeps a reserve of handles between its
    // runs (twice its last run's spawns); a state restored into a fresh
    // engine must give it back, or that engine spawns other handles than
    // the saved run and leaks the reserved ones.
    let build = || {
        let mut builder = Engine::builder();
        let id = builder.register_system(spawn_three);
        builder.add_system(|| {});
        let mut engine = builder.build().unwrap();
        engine
            .register_clone::<Born>()
            .register_state_clone::<u64>();
        (engine, id)
    };
    let handles = |engine: &Engine| {
        let mut all: Vec<(u64, Entity)> = engine
            .registry()
            .view::<(Entity, &Born)>()
            .iter()
            .map(|(e, b)| (b.0, e))
            .collect();
        all.sort_unstable();
        all
    };
    let (mut engine, id) = build();
    engine.tick().unwrap();
    engine.run_system(id).unwrap();
    let state = engine.save_state().unwrap();
    engine.run_system(id).unwrap();
    engine.tick().unwrap();
    let reference = handles(&engine);
    assert_eq!(reference.len(), 6);

    let (mut fresh, id) = build();
    fresh.restore_state(&state).unwrap();
    fresh.run_system(id).unwrap();
    fresh.tick().unwrap();
    assert_eq!(handles(&fresh), reference);
    assert_eq!(fresh.registry().len(), engine.registry().len());
    assert_eq!(
        fresh.registry().entities().reserved(),
        engine.registry().entities().reserved(),
        "reserved handles leaked"
    );
}

/// A spawn plan, written without marking it changed.
#[derive(Debug, Clone, PartialEq, Default)]
struct Plan(Vec<u64>);

fn plan_quietly(mut plan: ResMut<Plan>, tick: Tick) {
    plan.bypass_change_detection().0.push(tick.number);
}

#[test]
fn a_delta_resource_written_without_a_mark_is_saved_anew() {
    let mut builder = Engine::builder();
    builder.insert_resource(Plan::default());
    builder.add_system(plan_quietly);
    let mut engine = builder.build().unwrap();
    engine.register_resource_clone_delta::<Plan>();
    let mut state = engine.save_state().unwrap();
    let mut ring = EngineRing::new(4);
    for _ in 0..3 {
        engine.tick().unwrap();
        engine.save_state_into(&mut state).unwrap();
        engine.save_frame(&mut ring).unwrap();
    }
    let saved = engine.registry().resource::<Plan>().unwrap().clone();
    assert_eq!(saved, Plan(vec![0, 1, 2]));
    engine.tick().unwrap();
    engine.restore_state(&state).unwrap();
    assert_eq!(engine.registry().resource::<Plan>(), Some(&saved));
    engine.tick().unwrap();
    engine.restore_frame(&mut ring, 0).unwrap();
    assert_eq!(engine.registry().resource::<Plan>(), Some(&saved));
}

/// A level that one system raises on one entity of many per tick.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Level(u64);

fn raise_one(mut q: Query<(Entity, &mut Level)>, tick: Tick) {
    let target = (tick.number as usize * 37) % 2_000;
    q.each(|(e, level)| {
        if e.index() as usize == target {
            level.0 += 1;
        }
    });
}

fn levels(engine: &Engine) -> Vec<(Entity, Level)> {
    let pool = engine.registry().pool::<Level>().unwrap();
    pool.iter().map(|(e, l)| (e, *l)).collect()
}

/// A ring stepped back one frame at a time (a scrub bar, or two
/// rollbacks in a row with no tick between): each restore gives the
/// frame it names, though the frames' saves copied only the blocks of
/// the entity a system wrote.
#[test]
fn a_ring_stepped_back_frame_by_frame_gives_each_frame() {
    let mut builder = Engine::builder();
    builder.add_system(raise_one);
    for i in 0..2_000 {
        builder.registry_mut().spawn((Level(i),));
    }
    let mut engine = builder.build().unwrap();
    engine.register_clone_delta::<Level>();
    engine.registry_mut().track_changes::<Level>();
    let mut ring = EngineRing::new(8);
    let mut frames = Vec::new();
    for _ in 0..6 {
        engine.tick().unwrap();
        engine.save_frame(&mut ring).unwrap();
        frames.push(levels(&engine));
    }
    frames.pop();
    while let Some(want) = frames.pop() {
        engine.restore_frame(&mut ring, 1).unwrap();
        let got = levels(&engine);
        let wrong: Vec<_> = got.iter().zip(&want).filter(|(g, w)| g != w).collect();
        assert!(
            got.len() == want.len() && wrong.is_empty(),
            "{} frames back: {:?}",
            6 - frames.len(),
            &wrong[..wrong.len().min(3)]
        );
    }
}
