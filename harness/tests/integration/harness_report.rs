//! The harness on small scenarios: the report's numbers agree with each
//! other and with the world, the schedule has the waves worked out by hand,
//! and the trace has a span per system per tick.

use std::path::Path;

use harness::{InputSource, Report, RunConfig, Scenario, Simulation, SpanKind, chrome_trace, run};

fn scenario(file: &str) -> Scenario {
    Scenario::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join(file),
    )
    .unwrap()
}

fn config(file: &str, threads: usize) -> RunConfig {
    let mut config = RunConfig::new(scenario(file));
    config.threads = threads;
    config
}

const SHMUP_SYSTEMS: [&str; 14] = [
    "steering",
    "movement",
    "sine motion",
    "play area",
    "weapons",
    "enemy fire",
    "spawns",
    "waves",
    "collision",
    "damage",
    "score",
    "lives",
    "cleanup",
    "despawn",
];

fn wave_names(report: &Report) -> Vec<Vec<&str>> {
    report
        .waves
        .iter()
        .map(|w| w.systems.iter().map(String::as_str).collect())
        .collect()
}

#[test]
fn the_shmup_report_adds_up() {
    let config = config("small.toml", 2);
    assert_eq!(config.ticks, 300);
    let report = run(&config, |_| {}).unwrap().report;
    let e = report.entities;
    assert_eq!(report.ticks, 300);
    assert_eq!(report.threads, 2);
    assert_eq!(e.spawned - e.despawned, e.last as u64, "{e:?}");
    assert!(e.min as f64 <= e.mean && e.mean <= e.max as f64, "{e:?}");
    assert!((e.min..=e.max).contains(&e.last));
    // After tick 0: the two ships and player 0's first missile (the
    // built-in script holds fire from tick 0); waves of 20 from tick 12.
    assert_eq!(e.min, 3);
    assert!(e.max > 20, "{e:?}");
    assert!(e.despawned > 0, "enemies and missiles were removed");
    let updates = e.mean * 300.0 / report.wall_seconds;
    assert!((report.entity_updates_per_second / updates - 1.0).abs() < 1e-9);
    assert!((report.ticks_per_second * report.wall_seconds - 300.0).abs() < 1e-6);

    let names: Vec<&str> = report.systems.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, SHMUP_SYSTEMS);
    assert!(
        report
            .systems
            .iter()
            .all(|s| s.p99_us >= 0.0 && s.mean_us >= 0.0)
    );
    assert_eq!(
        wave_names(&report),
        vec![
            vec!["steering", "spawns"],
            vec!["movement", "waves"],
            vec!["sine motion"],
            vec!["play area"],
            vec!["weapons", "enemy fire", "collision"],
            vec!["damage"],
            // `cleanup` reads the `Health` of non-players
            // (`Without<Player>`), `lives` writes the players' (`&Player`):
            // disjoint, so one wave.
            vec!["score", "lives", "cleanup"],
            vec!["despawn"],
        ]
    );
    let widths: Vec<usize> = report.waves.iter().map(|w| w.width).collect();
    assert_eq!(widths, [2, 2, 1, 1, 3, 1, 3, 1]);
    for system in &report.systems {
        assert!(report.waves[system.wave].systems.contains(&system.name));
    }
    assert_eq!(report.players.len(), 2);
    assert!(report.inputs_applied > 0);
    if cfg!(target_os = "linux") {
        assert!(report.peak_memory_bytes.unwrap() > 0);
    }

    // The tick's time: the waves' and applies' sums, and the rest, which
    // together make the mean `Engine::tick` call, no longer than the loop.
    let t = report.tick_time;
    let waves: f64 = report.waves.iter().map(|w| w.mean_us).sum();
    let applies: f64 = report.waves.iter().map(|w| w.apply_us).sum();
    assert_eq!((t.waves_us, t.applies_us), (waves, applies), "{t:?}");
    assert!(t.mean_us > 0.0 && t.executor_us >= 0.0, "{t:?}");
    // The built-in input script comes from the input thread: its
    // delivery takes some time every tick.
    assert!(t.input_us > 0.0, "{t:?}");
    let parts = waves + applies + t.input_us;
    assert!(
        (t.waves_us + t.applies_us + t.input_us + t.executor_us - t.mean_us.max(parts)).abs()
            < 1e-6,
        "{t:?}"
    );
    assert!(t.mean_us * 300.0 <= report.wall_seconds * 1e6, "{t:?}");

    let json: serde_json::Value = serde_json::to_value(&report).unwrap();
    assert_eq!(json["tick_time"]["executor_us"], t.executor_us);
    assert_eq!(json["checksum"], format!("{:#018x}", report.checksum));
    assert_eq!(json["entities"]["spawned"], e.spawned);
    assert_eq!(json["waves"][4]["width"], 3);
    let text = report.to_string();
    assert!(
        text.contains(&format!("checksum          {:#018x}", report.checksum)),
        "{text}"
    );
    assert!(text.contains("4         3"), "{text}");
    assert!(
        text.contains(&format!(
            "tick time         mean {:.1} µs: waves {:.1}, applies {:.1}, input {:.1}, executor {:.1}",
            t.mean_us, t.waves_us, t.applies_us, t.input_us, t.executor_us
        )),
        "{text}"
    );
}

#[test]
fn the_simulation_counts_match_the_registry_every_tick() {
    let mut simulation = Simulation::new(&config("small.toml", 2)).unwrap();
    for _ in 0..150 {
        simulation.tick().unwrap();
        let alive = simulation.engine().registry().len() as u64;
        assert_eq!(simulation.spawned() - simulation.despawned(), alive);
    }
    assert_eq!(simulation.late_inputs(), 0);
    simulation.finish().unwrap();
}

#[test]
fn the_particles_report_adds_up() {
    let config = config("particles-small.toml", 2);
    let report = run(&config, |_| {}).unwrap().report;
    let e = report.entities;
    assert_eq!((e.min, e.max, e.last), (2000, 2000, 2000));
    // About 1% respawned per tick, through a despawn and a spawn each.
    let respawned = e.despawned;
    assert_eq!(e.spawned, 2000 + respawned);
    assert!((600..=1800).contains(&respawned), "{respawned}");
    assert_eq!(
        wave_names(&report),
        vec![vec!["forces", "respawn"], vec!["bounce"], vec!["movement"]]
    );
    assert!(report.players.is_empty());
}

#[test]
fn scale_multiplies_the_particles() {
    let mut config = config("particles-small.toml", 1);
    config.scale = 3;
    config.ticks = 2;
    let report = run(&config, |_| {}).unwrap().report;
    assert_eq!(report.entities.last, 6000);
    assert_eq!(report.scale, 3);
}

#[test]
fn progress_is_reported_after_every_tick() {
    let mut config = config("small.toml", 1);
    config.ticks = 25;
    let mut seen = Vec::new();
    run(&config, |n| seen.push(n)).unwrap();
    assert_eq!(seen, (1..=25).collect::<Vec<u64>>());
}

#[test]
fn the_trace_has_a_span_per_system_per_tick_on_a_worker() {
    let mut config = config("small.toml", 2);
    config.ticks = 20;
    config.record_spans = true;
    // Every tick on the pool: `small.toml`'s ticks are too cheap for it,
    // and would run on the caller's thread.
    config.adaptive = false;
    let outcome = run(&config, |_| {}).unwrap();
    let of = |kind: SpanKind| outcome.spans.iter().filter(|s| s.kind == kind).count();
    assert_eq!(of(SpanKind::System), 20 * 14);
    assert_eq!(of(SpanKind::Tick), 20);
    assert_eq!(of(SpanKind::Apply), 20 * outcome.report.waves.len());
    assert!(
        outcome
            .spans
            .iter()
            .filter(|s| s.kind == SpanKind::Tick)
            .all(|s| s.thread.is_none()),
        "ticks run on the caller's thread"
    );
    let json: serde_json::Value = serde_json::from_str(&chrome_trace(&outcome)).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let systems: Vec<&serde_json::Value> = events.iter().filter(|e| e["cat"] == "system").collect();
    assert_eq!(systems.len(), 20 * 14);
    for name in SHMUP_SYSTEMS {
        let spans = systems.iter().filter(|e| e["name"] == name).count();
        assert_eq!(spans, 20, "{name}");
    }
    assert!(
        systems
            .iter()
            .all(|e| e["tid"].as_u64().unwrap() < 2 && e["ph"] == "X")
    );
    let threads: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .collect();
    assert_eq!(threads.len(), 3, "ticks, ecs-worker-0, ecs-worker-1");
    assert!(outcome.dot.starts_with("digraph"));
    assert!(outcome.dot.contains("\"collision\""));
}

#[test]
fn an_input_file_that_cannot_be_opened_is_an_error() {
    let mut config = config("small.toml", 1);
    config.inputs = InputSource::File("/nonexistent/inputs.txt".into());
    let error = Simulation::new(&config).unwrap_err().to_string();
    assert!(
        error.starts_with("cannot read the input script /nonexistent/inputs.txt"),
        "{error}"
    );
}

#[test]
fn zero_threads_or_scale_are_refused() {
    let mut config = config("small.toml", 0);
    assert_eq!(
        Simulation::new(&config).unwrap_err().to_string(),
        "--threads must be at least 1, got 0"
    );
    config.threads = 1;
    config.scale = 0;
    assert_eq!(
        Simulation::new(&config).unwrap_err().to_string(),
        "--scale must be at least 1, got 0"
    );
}
