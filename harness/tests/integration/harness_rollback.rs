//! `--rollback N`: restoring the state of N ticks ago every N ticks and
//! running those ticks again ends with the plain run's world, on 1 and 8
//! threads, for every scenario.

use std::path::Path;
use std::time::Duration;

use harness::{InputSource, RunConfig, Scenario, run};

use crate::common::temp_dir;

fn config(file: &str, threads: usize) -> RunConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    let mut config = RunConfig::new(Scenario::load(&path).unwrap());
    config.threads = threads;
    config
}

fn check(mut config: RunConfig, depth: u32) {
    let plain = run(&config, |_| {}).unwrap().report;
    config.rollback = Some(depth);
    let rolled = run(&config, |_| {}).unwrap().report;
    assert_eq!(
        rolled.checksum, plain.checksum,
        "{} threads",
        config.threads
    );
    assert_eq!(rolled.entities, plain.entities);
    assert_eq!(rolled.players, plain.players);
    assert_eq!(rolled.inputs_applied, plain.inputs_applied);
    assert_eq!(rolled.commands, plain.commands);
    let stats = rolled.rollback.expect("rollback stats");
    let restores = config.ticks / u64::from(depth);
    assert_eq!(stats.restores, restores);
    assert_eq!(stats.rerun_ticks, restores * u64::from(depth));
    assert_eq!(stats.saves, config.ticks + stats.rerun_ticks);
    assert!(plain.rollback.is_none());
}

#[test]
fn the_shmup_rolled_back_every_8_ticks_ends_as_the_plain_run_on_1_and_8_threads() {
    for threads in [1, 8] {
        let mut config = config("small.toml", threads);
        config.ticks = 200;
        check(config, 8);
    }
}

#[test]
fn a_slow_input_thread_and_a_rollback_deeper_than_a_wave_change_nothing() {
    let script = "0 0 fire on\n0 1 move 0 1\n10 1 fire on\n30 0 move 1 -1\n30 0 move -1 0\n\
                  31 1 move 0 0\n60 0 fire off\n61 1 move 1 1\n";
    let dir = temp_dir("rollback");
    let path = dir.path().join("rollback.txt");
    std::fs::write(&path, script).unwrap();
    let mut config = config("small.toml", 2);
    config.ticks = 120;
    config.inputs = InputSource::File(path.clone());
    config.input_pause = Duration::from_micros(300);
    check(config, 13);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn the_particles_and_the_movers_roll_back_too() {
    let mut particles = config("particles-small.toml", 2);
    particles.ticks = 40;
    check(particles, 5);
    let mut movers = RunConfig::new(Scenario::builtin("movers").unwrap());
    movers.threads = 2;
    movers.ticks = 60;
    check(movers, 7);
}
