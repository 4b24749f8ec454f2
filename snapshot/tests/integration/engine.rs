//! `Snapshots::save_engine` / `load_engine`: the small game of the root's
//! `tests/integration/common/game.rs` (movement in parallel, spawns and despawns
//! through commands, events sent in one tick and read in the next, change
//! and removal detection, a `Local`, a run condition with a `Local`, a
//! stateful system), plus an event sent from outside, saved to a file mid-run
//! and loaded into a fresh engine gives the uninterrupted run's world,
//! entity handles and counters, on 1 and 8 threads, in both formats; a
//! state that cannot be saved is refused by system name; a failed load
//! leaves the engine as it was.

use ecs_runtime::command_buffer::CommandKind;
use ecs_runtime::prelude::*;
use ecs_snapshot::{EntryKind, Format, SnapshotError, Snapshots};

#[path = "../../../tests/integration/common/game.rs"]
mod game;
use game::*;

fn snapshots() -> Snapshots {
    let mut s = Snapshots::new();
    s.register::<Pos>("Pos")
        .and_then(|s| s.register::<Vel>("Vel"))
        .and_then(|s| s.register::<Hp>("Hp"))
        .and_then(|s| s.register::<Born>("Born"))
        .and_then(|s| s.register_resource::<Rng>("Rng"))
        .and_then(|s| s.register_resource::<Stats>("Stats"))
        .and_then(|s| s.register_events::<Hit>("Hit"))
        .and_then(|s| s.register_state::<u64>("u64"))
        .and_then(|s| s.register_state::<Census>("Census"))
        .unwrap();
    s
}

const TICKS: u64 = 24;
const SAVE_AT: u64 = 9;

/// The run to `TICKS`, with an event sent from outside after `SAVE_AT`
/// ticks (so one is in flight at the save).
fn uninterrupted(threads: usize) -> Observed {
    let (mut engine, census) = game(threads);
    engine.run(SAVE_AT).unwrap();
    send_outside(&mut engine);
    engine.run(TICKS - SAVE_AT).unwrap();
    observe(&engine, census)
}

fn send_outside(engine: &mut Engine) {
    let target = engine
        .registry()
        .view::<(Entity, &Hp)>()
        .iter()
        .next()
        .unwrap()
        .0;
    engine.send_event(Hit { target, damage: 2 });
}

#[test]
fn a_file_loaded_into_a_fresh_engine_gives_the_uninterrupted_run() {
    let reference = uninterrupted(1);
    let stats = &reference.2;
    assert!(
        stats.changed_hp > 0
            && stats.added_pos > 0
            && stats.removed_hp > 0
            && stats.hits_read > 0
            && stats.pulses > 2,
        "{stats:?}"
    );
    let snapshots = snapshots();
    for threads in [1, 8] {
        assert_eq!(uninterrupted(threads), reference, "{threads} threads");
        for format in [Format::Json, Format::Postcard] {
            let (mut engine, _) = game(threads);
            engine.run(SAVE_AT).unwrap();
            send_outside(&mut engine);
            let bytes = snapshots.save_engine(&engine, format).unwrap();
            drop(engine);
            let (mut fresh, census) = game(threads);
            snapshots.load_engine(&mut fresh, &bytes, format).unwrap();
            assert_eq!(fresh.ticks(), SAVE_AT);
            for _ in SAVE_AT..TICKS {
                fresh.tick().unwrap();
                let report = fresh.command_report();
                assert_eq!(report.skipped(CommandKind::Spawn), 0, "{report:?}");
                assert_eq!(report.skipped(CommandKind::Insert), 0, "{report:?}");
            }
            assert_eq!(
                observe(&fresh, census),
                reference,
                "{threads} threads, {format:?}"
            );
        }
    }
}

#[test]
fn a_load_into_the_running_engine_rewinds_it() {
    let snapshots = snapshots();
    let (mut engine, census) = game(2);
    engine.run(SAVE_AT).unwrap();
    send_outside(&mut engine);
    let bytes = snapshots.save_engine(&engine, Format::Postcard).unwrap();
    engine.run(7).unwrap();
    snapshots
        .load_engine(&mut engine, &bytes, Format::Postcard)
        .unwrap();
    engine.run(TICKS - SAVE_AT).unwrap();
    assert_eq!(observe(&engine, census), uninterrupted(2));
}

#[test]
fn a_load_makes_no_spurious_added_or_changed() {
    let snapshots = snapshots();
    let (mut engine, _) = game(2);
    engine.run(SAVE_AT).unwrap();
    let bytes = snapshots.save_engine(&engine, Format::Json).unwrap();
    engine.run(1).unwrap();
    let after_one = engine.registry().resource::<Stats>().unwrap().clone();
    let (mut fresh, _) = game(2);
    snapshots
        .load_engine(&mut fresh, &bytes, Format::Json)
        .unwrap();
    fresh.run(1).unwrap();
    assert_eq!(fresh.registry().resource::<Stats>().unwrap(), &after_one);
}

#[test]
fn an_unsaved_state_is_refused_by_system_name() {
    let mut builder = Engine::builder();
    builder.add_system(|mut n: Local<Vec<u8>>| n.push(1));
    builder.add_system(Census::default());
    let mut engine = builder.build().unwrap();
    engine.tick().unwrap();
    let mut snapshots = Snapshots::new();
    let error = snapshots.save_engine(&engine, Format::Json).unwrap_err();
    assert!(
        matches!(&error, SnapshotError::UnsavedState { state, .. } if state.contains("Vec<u8>")),
        "{error}"
    );
    assert!(error.to_string().contains("register_state"), "{error}");
    snapshots.register_state::<Vec<u8>>("bytes").unwrap();
    // The stateful system's own value is next.
    let error = snapshots.save_engine(&engine, Format::Json).unwrap_err();
    assert!(
        matches!(&error, SnapshotError::UnsavedState { system, .. } if system.contains("Census")),
        "{error}"
    );
    snapshots.register_state::<Census>("Census").unwrap();
    let bytes = snapshots.save_engine(&engine, Format::Postcard).unwrap();
    // A loader without the type refuses, naming it.
    let mut other = Snapshots::new();
    other.register_state::<Census>("Census").unwrap();
    let error = other
        .load_engine(&mut engine, &bytes, Format::Postcard)
        .unwrap_err();
    assert!(
        matches!(&error, SnapshotError::UnknownName { kind: EntryKind::State, name, .. } if name.contains("bytes")),
        "{error}"
    );
}

#[test]
fn a_failed_load_leaves_the_engine_as_it_was() {
    let snapshots = snapshots();
    let (mut engine, census) = game(2);
    engine.run(SAVE_AT).unwrap();
    let bytes = snapshots.save_engine(&engine, Format::Postcard).unwrap();
    engine.run(3).unwrap();
    let before = observe(&engine, census);

    // A damaged file.
    let mut damaged = bytes.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x10;
    assert!(
        snapshots
            .load_engine(&mut engine, &damaged, Format::Postcard)
            .is_err()
    );
    // An engine with other systems.
    let mut builder = Engine::builder();
    builder.add_system(movement);
    let mut other = builder.build().unwrap();
    let error = snapshots
        .load_engine(&mut other, &bytes, Format::Postcard)
        .unwrap_err();
    assert!(matches!(error, SnapshotError::Systems { .. }), "{error}");
    assert_eq!(other.registry().entities().len(), 0);
    // A registry snapshot is not an engine's.
    let registry_only = snapshots.save(engine.registry(), Format::Json).unwrap();
    let error = snapshots
        .load_engine(&mut engine, &registry_only, Format::Json)
        .unwrap_err();
    assert!(matches!(error, SnapshotError::NotAnEngine), "{error}");

    assert_eq!(observe(&engine, census), before);
    engine.run(1).unwrap();
}

/// `bytes` (JSON) with `edit` applied to its engine section, the
/// section's checksum recomputed (as a tool that edits on purpose would).
fn edited(bytes: &[u8], edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut doc: serde_json::Value = serde_json::from_slice(bytes).unwrap();
    let engine = &mut doc["engine"];
    edit(engine);
    let fields: Vec<serde_json::Value> = [
        "ticks",
        "clock",
        "pool_ticks",
        "resource_ticks",
        "seed",
        "startup_pending",
        "states_started",
        "systems",
        "reserves",
    ]
    .iter()
    .map(|k| engine[*k].clone())
    .collect();
    engine["checksum"] = ecs_snapshot::json_checksum(&serde_json::Value::Array(fields)).into();
    serde_json::to_vec(&doc).unwrap()
}

#[test]
fn an_engine_section_that_does_not_fit_is_refused_before_anything_changes() {
    let snapshots = snapshots();
    let (mut engine, census) = game(2);
    engine.run(SAVE_AT).unwrap();
    let bytes = snapshots.save_engine(&engine, Format::Json).unwrap();
    let before = observe(&engine, census);
    // Unchanged, the edit helper's checksum is the saved one.
    assert!(
        snapshots
            .load_engine(&mut engine, &edited(&bytes, |_| {}), Format::Json)
            .is_ok()
    );
    assert_eq!(observe(&engine, census), before);

    // One change tick too few for the pool.
    let short = edited(&bytes, |e| {
        e["pool_ticks"][0]["added"].as_array_mut().unwrap().pop();
    });
    let error = snapshots
        .load_engine(&mut engine, &short, Format::Json)
        .unwrap_err();
    assert!(
        matches!(&error, SnapshotError::EngineState { part, .. } if part.contains("change ticks of component")),
        "{error}"
    );
    // A reserve naming a live entity, not a reserved one.
    let live = engine.registry().entities().iter().next().unwrap();
    let stolen = edited(&bytes, |e| {
        e["reserves"][0][1]["handles"][0] = live.to_bits().into();
    });
    let error = snapshots
        .load_engine(&mut engine, &stolen, Format::Json)
        .unwrap_err();
    assert!(matches!(error, SnapshotError::Reserves { .. }), "{error}");
    // A state value of the wrong shape.
    let wrong = edited(&bytes, |e| {
        let systems = e["systems"].as_array_mut().unwrap();
        let watcher = systems
            .iter_mut()
            .find(|s| s["name"].as_str().unwrap().contains("watcher"))
            .unwrap();
        let local = watcher["values"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|v| v["kind"] == "u64")
            .unwrap();
        local["value"] = "many".into();
    });
    let error = snapshots
        .load_engine(&mut engine, &wrong, Format::Json)
        .unwrap_err();
    assert!(
        matches!(&error, SnapshotError::Value { kind: EntryKind::State, name, .. } if name.contains("watcher")),
        "{error}"
    );
    assert_eq!(observe(&engine, census), before);
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
enum Level {
    One,
    Two,
}

/// Asks for `Level::Two` after three runs; entering it counts in `u32`.
fn states_game() -> Engine {
    let mut builder = Engine::builder();
    builder.insert_resource(0u32);
    builder.insert_resource(0u64);
    builder.add_state(Level::One);
    // The initial enter: once, never again after a load.
    builder.add_on_enter(Level::One, |mut entered_one: ResMut<u64>| *entered_one += 1);
    builder.add_on_enter(Level::Two, |mut entered: ResMut<u32>| *entered += 1);
    builder.add_system(
        |mut runs: Local<u64>, mut next: ResMut<ecs_runtime::scheduler::NextState<Level>>| {
            *runs += 1;
            if *runs == 3 {
                next.set(Level::Two);
            }
        },
    );
    builder.build().unwrap()
}

#[test]
fn a_pending_state_transition_survives_a_file() {
    let mut snapshots = Snapshots::new();
    snapshots
        .register_states::<Level>("Level")
        .and_then(|s| s.register_resource::<u32>("entered"))
        .and_then(|s| s.register_resource::<u64>("entered one"))
        .and_then(|s| s.register_state::<u64>("runs"))
        .unwrap();
    // Registering the states twice registers nothing more.
    assert!(snapshots.register_states::<Level>("Other").is_err());
    assert!(snapshots.resource_names().all(|n| n != "Other"));

    let mut engine = states_game();
    engine.run(3).unwrap();
    // The transition is asked for, not made: it happens at the next tick.
    let state = |e: &Engine| {
        e.registry()
            .resource::<ecs_runtime::scheduler::State<Level>>()
            .unwrap()
            .get()
            .clone()
    };
    assert_eq!(state(&engine), Level::One);
    let bytes = snapshots.save_engine(&engine, Format::Json).unwrap();
    let mut fresh = states_game();
    snapshots
        .load_engine(&mut fresh, &bytes, Format::Json)
        .unwrap();
    fresh.run(3).unwrap();
    assert_eq!(state(&fresh), Level::Two);
    assert_eq!(fresh.registry().resource::<u32>(), Some(&1));
    assert_eq!(fresh.registry().resource::<u64>(), Some(&1));
}

/// Appends its run count to `u64` as a decimal digit.
fn boom(mut runs: Local<u64>, mut out: ResMut<u64>) {
    *runs += 1;
    *out = *out * 10 + *runs;
}

fn one_shot_engine() -> (Engine, ecs_runtime::scheduler::OneShotId) {
    let mut builder = Engine::builder();
    builder.insert_resource(0u64);
    let id = builder.register_system(boom);
    builder.add_system(|| {});
    (builder.build().unwrap(), id)
}

#[test]
fn one_shot_systems_keep_their_locals_through_a_file() {
    let mut snapshots = Snapshots::new();
    snapshots
        .register_resource::<u64>("out")
        .and_then(|s| s.register_state::<u64>("runs"))
        .unwrap();
    let (mut engine, id) = one_shot_engine();
    engine.run_system(id).unwrap();
    engine.run_system(id).unwrap();
    let bytes = snapshots.save_engine(&engine, Format::Postcard).unwrap();
    let (mut fresh, id) = one_shot_engine();
    snapshots
        .load_engine(&mut fresh, &bytes, Format::Postcard)
        .unwrap();
    fresh.run_system(id).unwrap();
    fresh.run_system(id).unwrap();
    assert_eq!(fresh.registry().resource::<u64>(), Some(&1234));
    // Its Local's type is required like any other system's.
    let mut without = Snapshots::new();
    without.register_resource::<u64>("out").unwrap();
    let error = without.save_engine(&engine, Format::Json).unwrap_err();
    assert!(
        matches!(&error, SnapshotError::UnsavedState { system, .. } if system.contains("boom")),
        "{error}"
    );
}

fn count32(mut n: Local<u32>) {
    *n += 1;
}

fn count64(mut n: Local<u64>) {
    *n += 1;
}

/// One system named `counter`: `count32`, or `count64` (a new version of
/// it with a wider counter).
fn counter_engine(wide: bool) -> Engine {
    let mut builder = Engine::builder();
    if wide {
        builder.add_system(count64).named("counter");
    } else {
        builder.add_system(count32).named("counter");
    }
    builder.build().unwrap()
}

#[test]
fn a_local_of_another_type_under_the_same_name_is_refused_or_reported() {
    let mut snapshots = Snapshots::new();
    snapshots
        .register_state::<u32>("u32")
        .and_then(|s| s.register_state::<u64>("u64"))
        .unwrap();
    let mut saved = counter_engine(false);
    saved.run(3).unwrap();
    let bytes = snapshots.save_engine(&saved, Format::Json).unwrap();
    // An engine that has run knows the type: refused before any change.
    let mut running = counter_engine(true);
    running.run(1).unwrap();
    let error = snapshots
        .load_engine(&mut running, &bytes, Format::Json)
        .unwrap_err();
    assert!(
        matches!(&error, SnapshotError::Systems { .. }) && error.to_string().contains("counter"),
        "{error}"
    );
    assert_eq!(running.ticks(), 1);
    running.run(1).unwrap();
    // A fresh one learns it at the first run: a clear error, no panic.
    let mut fresh = counter_engine(true);
    snapshots
        .load_engine(&mut fresh, &bytes, Format::Json)
        .unwrap();
    let error = fresh.tick().unwrap_err().to_string();
    assert!(
        error.contains("counter") && error.contains("saved state holds a `u32`"),
        "{error}"
    );
}
