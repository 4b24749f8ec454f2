//! The world after N ticks is bit-identical whatever the thread count and
//! however late the input thread delivers.

use std::path::Path;
use std::time::Duration;

use ecs_runtime::divergence::Divergence;
use harness::{InputSource, RunConfig, Scenario, check_determinism, run};

fn config(file: &str, threads: usize) -> RunConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    let mut config = RunConfig::new(Scenario::load(&path).unwrap());
    config.threads = threads;
    config
}

#[test]
fn the_shmup_is_the_same_on_1_and_4_threads() {
    let check = check_determinism(&config("small.toml", 4), |_| {}).unwrap();
    assert!(check.passed());
    assert_eq!(check.single.report.threads, 1);
    assert_eq!(check.multi.report.threads, 4);
    assert_eq!(check.single.report.entities, check.multi.report.entities);
    assert_eq!(check.single.report.players, check.multi.report.players);
    // The command counts are part of the check, and are counted.
    let commands = &check.multi.report.commands;
    assert_eq!(&check.single.report.commands, commands);
    assert!(commands.applied > 0);
    assert_eq!(
        commands.skipped,
        commands.skipped_by_kind.values().sum::<u64>()
    );
}

#[test]
fn the_particles_are_the_same_on_1_and_4_threads() {
    let check = check_determinism(&config("particles-small.toml", 4), |_| {}).unwrap();
    assert!(check.passed());
    assert_eq!(check.single.report.checksum, check.multi.report.checksum);
}

#[test]
fn the_checksum_follows_the_seed() {
    let mut a = config("small.toml", 2);
    a.ticks = 120;
    let mut b = a.clone();
    b.seed += 1;
    let (ra, rb) = (
        run(&a, |_| {}).unwrap().report,
        run(&b, |_| {}).unwrap().report,
    );
    assert_ne!(ra.checksum, rb.checksum);
    assert_eq!(ra.checksum, run(&a, |_| {}).unwrap().report.checksum);
}

#[test]
fn a_slow_input_thread_changes_nothing() {
    let script = "0 0 fire on\n0 1 move 0 1\n10 1 fire on\n30 0 move 1 -1\n30 0 move -1 0\n\
                  31 1 move 0 0\n60 0 fire off\n61 1 move 1 1\n";
    let mut fast = config("small.toml", 2);
    fast.ticks = 90;
    fast.inputs = InputSource::Text(script.into());
    let mut slow = fast.clone();
    slow.input_pause = Duration::from_millis(3);
    let fast = run(&fast, |_| {}).unwrap().report;
    let slow = run(&slow, |_| {}).unwrap().report;
    assert_eq!(fast.inputs_applied, 8);
    assert_eq!(slow.inputs_applied, 8);
    assert_eq!(fast.checksum, slow.checksum);
    // The script matters: without it the world differs.
    let mut none = config("small.toml", 2);
    none.ticks = 90;
    none.inputs = InputSource::Text(String::new());
    assert_ne!(run(&none, |_| {}).unwrap().report.checksum, fast.checksum);
}

#[test]
fn the_built_in_script_is_the_same_when_slowed_down() {
    let mut fast = config("small.toml", 2);
    fast.ticks = 60;
    let mut slow = fast.clone();
    slow.input_pause = Duration::from_micros(500);
    let fast = run(&fast, |_| {}).unwrap().report;
    let slow = run(&slow, |_| {}).unwrap().report;
    assert!(fast.inputs_applied > 0);
    assert_eq!(fast.inputs_applied, slow.inputs_applied);
    assert_eq!(fast.checksum, slow.checksum);
}

/// The suspects of `divergence`, as (system, why).
fn suspects(divergence: &Divergence) -> Vec<(&str, &str)> {
    divergence
        .suspects
        .iter()
        .map(|s| (s.system.as_str(), s.why))
        .collect()
}

#[test]
fn two_seeds_differ_in_the_world_seed_before_the_first_tick() {
    let a = config("small.toml", 1);
    let mut b = config("small.toml", 2);
    b.seed = a.seed + 1;
    let divergence = harness::diagnose(&a, &b)
        .unwrap()
        .expect("another seed gives another world");
    // Every random draw comes from `Random`, keyed by the `WorldSeed`
    // resource: the worlds differ in it from the start.
    assert_eq!(
        (divergence.tick, divergence.part.as_str()),
        (None, "resource `WorldSeed`"),
        "{divergence}"
    );
    assert_eq!(divergence.entity, None);
    // Before the first tick no system ran: none is named.
    assert_eq!(suspects(&divergence), [], "{divergence}");
    assert!(
        divergence
            .to_string()
            .ends_with("no system had run yet (set up differently?)"),
        "{divergence}"
    );
    // The same seed on 1 and 8 threads: equal tick by tick.
    assert_eq!(
        harness::diagnose(&a, &config("small.toml", 8)).unwrap(),
        None
    );
}

#[test]
fn another_input_diverges_at_a_named_tick_component_entity_and_system() {
    let mut a = config("small.toml", 1);
    a.inputs = InputSource::Text(String::new());
    let mut b = config("small.toml", 2);
    b.inputs = InputSource::Text("0 0 move 1 0\n".into());
    let divergence = harness::diagnose(&a, &b)
        .unwrap()
        .expect("another input gives another world");
    // Steering sets the ship's velocity in tick 0, and movement moves it
    // in that tick: its position (compared first) differs.
    assert_eq!(
        (divergence.tick, divergence.part.as_str()),
        (Some(0), "component `Position`"),
        "{divergence}"
    );
    assert!(divergence.entity.is_some(), "{divergence}");
    assert!(
        suspects(&divergence).contains(&("movement", "writes it")),
        "{divergence}"
    );
    let text = divergence.to_string();
    assert!(
        text.contains("component `Position`, first at entity "),
        "{text}"
    );
}

#[test]
fn an_input_event_that_changes_no_component_is_named_by_its_channel() {
    // Fire held twice is fire held: the same controls, another event.
    let mut a = config("small.toml", 1);
    a.inputs = InputSource::Text("0 0 fire on\n".into());
    let mut b = config("small.toml", 2);
    b.inputs = InputSource::Text("0 0 fire on\n0 0 fire on\n".into());
    let divergence = harness::diagnose(&a, &b)
        .unwrap()
        .expect("the event channels differ");
    assert_eq!(
        (divergence.tick, divergence.part.as_str()),
        (Some(0), "events `InputEvent`"),
        "{divergence}"
    );
    assert_eq!(divergence.entity, None);
    // The engine's input sends them, between ticks: no system does.
    assert!(
        suspects(&divergence)
            .iter()
            .all(|&(_, why)| why != "sends it"),
        "{divergence}"
    );
}

#[test]
fn a_wave_planned_otherwise_is_named_by_the_spawn_queue() {
    let a = config("small.toml", 1);
    let mut b = config("small.toml", 2);
    b.scenario.shmup.as_mut().unwrap().enemies.speed_min += 1.0;
    let divergence = harness::diagnose(&a, &b)
        .unwrap()
        .expect("other speeds give other enemies");
    // The first wave starts at 0.2 s, tick 12; the director plans it in
    // tick 11, before any enemy is spawned.
    assert_eq!(
        (divergence.tick, divergence.part.as_str()),
        (Some(11), "resource `SpawnQueue`"),
        "{divergence}"
    );
    let why = suspects(&divergence);
    assert!(why.contains(&("waves", "writes it")), "{divergence}");
    assert!(why.contains(&("spawns", "writes it")), "{divergence}");
}

#[test]
fn the_scenarios_give_their_world_with_shuffled_waves() {
    for file in ["small.toml", "particles-small.toml"] {
        let mut config = config(file, 2);
        config.shuffle = Some(11);
        let check = check_determinism(&config, |_| {}).unwrap();
        assert!(check.passed(), "{file}: {:?}", check.divergence);
        assert_eq!(check.single.report.checksum, check.multi.report.checksum);
        assert_eq!(check.divergence, None);
    }
}
