//! `--save-at TICK FILE` and `--load FILE`: a world saved after tick N and
//! resumed in a fresh process to tick M has the checksum of an
//! uninterrupted run to M, on 1 and 8 threads, for every built-in world.

use std::process::{Command, Output};

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

/// Runs the harness with `--json` and returns the report's checksum.
fn checksum(args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.push("--json");
    let output = harness(&all);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    json["checksum"].as_str().unwrap().to_owned()
}

/// Uninterrupted to `m`, then saved at `n` and resumed to `m`: the same
/// checksum.
fn resumes_exactly(scenario: &str, n: u64, m: u64, threads: &str, file: &str) {
    let (n, m) = (n.to_string(), m.to_string());
    let dir = temp_dir(&format!("snapshot-{threads}-{file}"));
    let path = dir.path().join(format!("{threads}-{file}"));
    let path = path.to_str().unwrap();
    let common = ["--scenario", scenario, "--threads", threads];
    let whole = checksum(&[&common[..], &["--ticks", &m]].concat());
    let saved = checksum(&[&common[..], &["--ticks", &n, "--save-at", &n, path]].concat());
    let resumed = checksum(&[&common[..], &["--ticks", &m, "--load", path]].concat());
    assert_eq!(
        resumed, whole,
        "{scenario} on {threads} threads: saved at {n} ({saved}), resumed to {m}"
    );
}

#[test]
fn the_shoot_em_up_resumes_exactly_on_1_and_8_threads() {
    for threads in ["1", "8"] {
        // Past the first wave and an input event (tick 40) after the load.
        resumes_exactly("scenarios/small.toml", 37, 130, threads, "small.bin");
    }
    // The readable format, and the default (larger) world.
    resumes_exactly("scenarios/small.toml", 80, 100, "8", "small.json");
    resumes_exactly("shmup", 50, 90, "8", "shmup.bin");
}

#[test]
fn the_particles_resume_exactly_on_1_and_8_threads() {
    for threads in ["1", "8"] {
        resumes_exactly(
            "scenarios/particles-small.toml",
            12,
            30,
            threads,
            "particles.bin",
        );
    }
}

#[test]
fn the_movers_resume_exactly_on_1_and_8_threads() {
    for threads in ["1", "8"] {
        resumes_exactly("movers", 20, 45, threads, "movers.bin");
    }
}

#[test]
fn a_snapshot_at_tick_0_and_at_the_last_tick() {
    let dir = temp_dir("snapshot-edges");
    let path = dir.path().join("edges.bin");
    let path = path.to_str().unwrap();
    let common = ["--scenario", "scenarios/small.toml", "--threads", "2"];
    let whole = checksum(&[&common[..], &["--ticks", "25"]].concat());
    checksum(&[&common[..], &["--ticks", "25", "--save-at", "0", path]].concat());
    let resumed = checksum(&[&common[..], &["--ticks", "25", "--load", path]].concat());
    assert_eq!(resumed, whole);
    // Saved at the end: loading it and running no tick gives the same world.
    checksum(&[&common[..], &["--ticks", "25", "--save-at", "25", path]].concat());
    let resumed = checksum(&[&common[..], &["--ticks", "25", "--load", path]].concat());
    assert_eq!(resumed, whole);
}

#[test]
fn bad_snapshots_and_options_are_named() {
    let dir = temp_dir("snapshot-bad");
    let path = dir.path().join("bad.bin");
    let p = path.to_str().unwrap();
    let small = ["--scenario", "scenarios/small.toml", "--threads", "1"];
    checksum(&[&small[..], &["--ticks", "10", "--save-at", "10", p]].concat());

    // Another scenario.
    let output = harness(&["--scenario", "movers", "--ticks", "20", "--load", p]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        format!(
            "error: snapshot {p}: taken from scenario `small`, a `shmup` world, \
             but this run's scenario `movers` is a `movers` world\n"
        )
    );
    // Another seed.
    let output = harness(&[&small[..], &["--seed", "3", "--load", p]].concat());
    assert!(
        stderr(&output).contains("with seed 3"),
        "{}",
        stderr(&output)
    );
    // Taken after the tick to reach.
    let output = harness(&[&small[..], &["--ticks", "5", "--load", p]].concat());
    assert_eq!(
        stderr(&output),
        format!(
            "error: snapshot {p}: taken after tick 10, past the 5 ticks to run \
             (--ticks is the tick to reach)\n"
        )
    );
    // Truncated.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let output = harness(&[&small[..], &["--ticks", "20", "--load", p]].concat());
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).starts_with(&format!("error: snapshot {p}: snapshot (postcard): ")),
        "{}",
        stderr(&output)
    );
    // Missing.
    let _ = std::fs::remove_file(&path);
    let output = harness(&[&small[..], &["--load", p]].concat());
    assert!(
        stderr(&output).starts_with(&format!("error: cannot read the snapshot {p}: ")),
        "{}",
        stderr(&output)
    );
    // A save tick outside the run, or not a number.
    let output = harness(&[&small[..], &["--ticks", "5", "--save-at", "6", p]].concat());
    assert_eq!(
        stderr(&output),
        "error: --save-at 6 is outside the run, which goes from tick 0 to tick 5\n"
    );
    let output = harness(&[&small[..], &["--save-at", "x", p]].concat());
    assert!(
        stderr(&output).starts_with("error: --save-at x "),
        "{}",
        stderr(&output)
    );
    // A folder that does not exist, before the run.
    let output = harness(&[&small[..], &["--save-at", "1", "/nonexistent/dir/s.bin"]].concat());
    assert!(
        stderr(&output).starts_with("error: cannot write the snapshot /nonexistent/dir/s.bin: "),
        "{}",
        stderr(&output)
    );
}
