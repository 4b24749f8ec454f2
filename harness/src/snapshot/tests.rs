//! Sound snapshots (checksums right) that do not fit the run: edited
//! through the registry and saved again, then refused by the field checks.

use super::*;
use crate::components::Bounty;
use crate::{RunConfig, Scenario, Simulation};

fn small() -> Scenario {
    let text = include_str!("../../scenarios/small.toml");
    Scenario::parse(text, "small.toml").unwrap()
}

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("harness-unit-{}-{name}", std::process::id()))
}

/// Runs `config` to tick `at`, saves, edits the saved world (run
/// resource included) with `edit`, saves it again as JSON and returns
/// the file.
fn edited(
    config: &RunConfig,
    at: u64,
    name: &str,
    edit: impl FnOnce(&mut Registry),
) -> std::path::PathBuf {
    let path = temp(name);
    let mut first = config.clone();
    first.ticks = at;
    first.save_at = Some((at, path.clone()));
    crate::run(&first, |_| {}).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let mut registry = Registry::new();
    snapshots()
        .load(&mut registry, &bytes, Format::Json)
        .unwrap();
    edit(&mut registry);
    let bytes = snapshots().save(&registry, Format::Json).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The error of a run that loads `path`.
fn load_error(config: &RunConfig, path: &Path) -> String {
    let mut config = config.clone();
    config.load = Some(path.to_owned());
    let error = Simulation::new(&config).unwrap_err().to_string();
    let _ = std::fs::remove_file(path);
    error
}

fn config(scenario: Scenario) -> RunConfig {
    let mut config = RunConfig::new(scenario);
    config.threads = 1;
    config.ticks = 40;
    config
}

fn run_info(registry: &mut Registry) -> &mut RunInfo {
    registry.resource_mut::<RunInfo>().unwrap()
}

#[test]
fn a_tick_count_the_spawn_queue_does_not_match_is_refused() {
    let mut config = config(small());
    let path = edited(&config, 20, "ticks.json", |r| {
        run_info(r).ticks = 20_000_000
    });
    config.ticks = 30_000_000;
    let error = load_error(&config, &path);
    assert!(
        error.contains("resource `SpawnQueue`: waves planned: 1, but the director plans 333334 by tick 20000000"),
        "{error}"
    );
}

#[test]
fn a_missing_or_swollen_reserve_is_refused() {
    let config = config(small());
    let path = edited(&config, 10, "reserves.json", |r| {
        run_info(r).reserves.retain(|s| s.system != "spawns");
    });
    let error = load_error(&config, &path);
    assert!(
        error.contains("field `reserves` of resource `Run` lists the systems"),
        "{error}"
    );
    let path = edited(&config, 10, "spawns.json", |r| {
        run_info(r).reserves[0].last_spawns = 1 << 40;
    });
    let error = load_error(&config, &path);
    assert!(
        error.contains("spawns in its last batch, but the world has"),
        "{error}"
    );
}

#[test]
fn a_component_value_the_rules_cannot_give_is_refused() {
    let config = config(small());
    let path = edited(&config, 30, "bounty.json", |r| {
        let e = r.pool::<Bounty>().unwrap().entities()[0];
        r.get_mut::<Bounty>(e).unwrap().0 = 4_294_967_295;
    });
    let error = load_error(&config, &path);
    assert!(
        error.contains("component `Bounty`, item 0: bounty 4294967295, but the rules give 100"),
        "{error}"
    );
}

#[test]
fn other_rules_under_the_same_name_are_named_by_field() {
    let path = edited(&config(small()), 10, "rules.json", |_| {});
    let text = include_str!("../../scenarios/small.toml").replace("bounty = 100", "bounty = 250");
    let other = Scenario::parse(&text, "other.toml").unwrap();
    let error = load_error(&config(other), &path);
    assert!(
        error.contains(
            "taken with other rules: field `shmup.enemies.bounty` is 100 in the snapshot \
             (of scenario `small`), but 250 in this run's scenario `small`"
        ),
        "{error}"
    );
}

#[test]
fn a_particle_world_keeps_its_count() {
    let text = include_str!("../../scenarios/particles-small.toml");
    let config = config(Scenario::parse(text, "p.toml").unwrap());
    let path = edited(&config, 5, "particles.json", |r| {
        let e = r.pool::<crate::components::Particle>().unwrap().entities()[0];
        r.despawn(e).unwrap();
    });
    let error = load_error(&config, &path);
    assert!(
        error.contains("entities, but the particle world keeps"),
        "{error}"
    );
}
