//! The `harness` binary: bad input gets a clear message and a non-zero
//! exit; a good run prints its report, as text or JSON.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

use crate::common::temp_dir;

fn harness(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the harness binary runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A file `name` with `contents` in `dir` (a test's folder from
/// `temp_dir`, removed with it when the test ends).
fn temp_file(dir: &TempDir, name: &str, contents: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

fn small() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/small.toml")
        .display()
        .to_string()
}

#[test]
fn a_missing_scenario_file_is_named() {
    let output = harness(&["--scenario", "/nonexistent/world.toml"]);
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.starts_with("error: cannot read the scenario /nonexistent/world.toml: "),
        "{message}"
    );
}

#[test]
fn a_malformed_scenario_names_the_line_and_the_field() {
    let text = std::fs::read_to_string(small())
        .unwrap()
        .replace("radius = 9.0", "radius = \"nine\"");
    let line = text.lines().position(|l| l.contains("\"nine\"")).unwrap() + 1;
    let dir = temp_dir("cli-malformed");
    let path = temp_file(&dir, "malformed.toml", &text);
    let output = harness(&["--scenario", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.starts_with(&format!(
            "error: scenario {}: line {line}, column 10:",
            path.display()
        )),
        "{message}"
    );
    assert!(
        message.ends_with("(field `radius` of [shmup.enemies])\n"),
        "{message}"
    );

    let text = std::fs::read_to_string(small())
        .unwrap()
        .replace("margin = 48.0", "");
    let header = text.lines().position(|l| l == "[shmup.arena]").unwrap() + 1;
    let path = temp_file(&dir, "missing.toml", &text);
    let message = stderr(&harness(&["--scenario", path.to_str().unwrap()]));
    assert!(
        message.ends_with(&format!(
            ": line {header}, column 1: missing field `margin` (in [shmup.arena])\n"
        )),
        "{message}"
    );
}

#[test]
fn an_unknown_builtin_or_an_out_of_range_value_is_explained() {
    let output = harness(&["--scenario", "tetris"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        "error: no scenario file or built-in scenario is named `tetris` (built-in: shmup, particles, movers)\n"
    );
    let text = std::fs::read_to_string(small())
        .unwrap()
        .replace("count = 2 ", "count = 0 ");
    let dir = temp_dir("cli-zero");
    let path = temp_file(&dir, "zero.toml", &text);
    let message = stderr(&harness(&["--scenario", path.to_str().unwrap()]));
    assert!(
        message.ends_with("field `count` of [shmup.players] must be above 0, got 0\n"),
        "{message}"
    );
}

#[test]
fn a_bad_input_line_is_named_by_its_number() {
    let dir = temp_dir("cli-inputs");
    let script = temp_file(&dir, "inputs.txt", "# moves\n0 0 fire on\n\n5 0 jump\n");
    let output = harness(&[
        "--scenario",
        &small(),
        "--ticks",
        "20",
        "--threads",
        "2",
        "--inputs",
        script.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        format!(
            "error: input script {}, line 4: unknown command `jump` (expected `move` or `fire`)\n",
            script.display()
        )
    );
}

#[test]
fn a_bad_input_line_after_the_last_tick_is_still_reported() {
    let dir = temp_dir("cli-late");
    let script = temp_file(&dir, "late.txt", "0 0 fire on\n5000 1 move 1 1 1\n");
    let output = harness(&[
        "--scenario",
        &small(),
        "--ticks",
        "5",
        "--inputs",
        script.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains(", line 2: `move` takes two directions"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn zero_threads_is_refused() {
    let output = harness(&["--threads", "0"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("--threads <N>"), "{message}");
    assert!(
        message.contains("the engine needs at least 1 thread"),
        "{message}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn json_reports_parse_and_agree() {
    let output = harness(&[
        "--scenario",
        &small(),
        "--ticks",
        "40",
        "--threads",
        "2",
        "--json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["scenario"], "small");
    assert_eq!(json["ticks"], 40);
    assert_eq!(json["threads"], 2);
    assert_eq!(json["systems"].as_array().unwrap().len(), 14);
    let e = &json["entities"];
    assert_eq!(
        e["spawned"].as_u64().unwrap() - e["despawned"].as_u64().unwrap(),
        e["last"].as_u64().unwrap()
    );
    let checksum = json["checksum"].as_str().unwrap();
    assert!(
        checksum.starts_with("0x") && checksum.len() == 18,
        "{checksum}"
    );
    assert!(json.get("determinism").is_none());
}

#[test]
fn check_determinism_passes_and_writes_the_files() {
    let dir = temp_dir("cli-determinism");
    let trace = dir.path().join("trace.json");
    let dot = dir.path().join("schedule.dot");
    let output = harness(&[
        "--scenario",
        "scenarios/particles-small.toml",
        "--ticks",
        "10",
        "--threads",
        "4",
        "--check-determinism",
        "--trace",
        trace.to_str().unwrap(),
        "--dot",
        dot.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("determinism       passed"), "{stdout}");
    assert!(stdout.contains("scenario `particles-small`: seed 1, scale 1, 4 threads"));
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let spans = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "system")
        .count();
    assert_eq!(spans, 10 * 4);
    let dot = std::fs::read_to_string(&dot).unwrap();
    assert!(
        dot.starts_with("digraph") && dot.contains("\"respawn\""),
        "{dot}"
    );
}

#[test]
fn shuffle_waves_is_a_determinism_check_that_passes() {
    let args = [
        "--scenario",
        "scenarios/small.toml",
        "--ticks",
        "40",
        "--threads",
        "2",
        "--shuffle-waves",
        "7",
    ];
    let output = harness(&[&args[..], &["--json"]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["determinism"]["passed"], true);
    assert_eq!(
        json["determinism"]["single_thread_checksum"],
        json["determinism"]["multi_thread_checksum"]
    );
    assert!(json["determinism"].get("divergence").is_none());
    assert_eq!(json["determinism"]["shuffle_seed"], 7);
    // The text report says the second run was shuffled, and by which seed.
    let text = String::from_utf8(harness(&args).stdout).unwrap();
    assert!(
        text.contains("with 2 threads, waves shuffled by seed 7)"),
        "{text}"
    );
}
