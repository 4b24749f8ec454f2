//! The `harness` binary against the bad inputs a new user tries: each gets
//! a clear message and a non-zero exit, never a hang, an abort or a panic.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

use common::{
    assert_refused, harness, harness_in, small_toml, stderr, stdout, temp_dir, with_field,
};

/// The harness with `input` on its standard input, closed after writing.
fn harness_with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the harness binary runs");
    let mut stdin = child.stdin.take().unwrap();
    // The harness may stop reading early (an error): a broken pipe is fine.
    let _ = stdin.write_all(input);
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// A file `name` with `contents` in `dir` (a test's folder from
/// `temp_dir`).
fn temp_file(dir: &TempDir, name: &str, contents: impl AsRef<[u8]>) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, contents).unwrap();
    path.display().to_string()
}

#[test]
fn waves_closer_than_a_tick_are_refused_instead_of_hanging() {
    let dir = temp_dir("bad-waves");
    let path = temp_file(
        &dir,
        "dense-waves.toml",
        with_field(&small_toml(), "wave_interval", "0.001"),
    );
    assert_refused(
        &harness(&["--scenario", &path, "--ticks", "5"]),
        "field `wave_interval` of [shmup.enemies] (0.001 s) must be at least one tick",
    );
    // A tick rate so low that every wave start rounds to tick 0.
    let path = temp_file(
        &dir,
        "slow-ticks.toml",
        with_field(&small_toml(), "tick_rate", "1e-300"),
    );
    assert_refused(
        &harness(&["--scenario", &path, "--ticks", "5"]),
        "field `tick_rate` must be between 0.001 and 1000000 ticks per second, got 1e-300",
    );
}

#[test]
fn huge_runs_are_refused_with_the_memory_they_need() {
    let output = harness(&["--scale", "1000000000", "--threads", "1"]);
    assert_refused(&output, "the run needs at least ");
    let message = stderr(&output);
    // Waves of 3,000,000,000,000 enemies, 0.01 s apart: the director's
    // queue holds what has not come in yet.
    assert!(
        message.contains(
            "enemies alive at once (none shot down) at 128 B, 71,999,999,927,400 planned at 48 B"
        ),
        "{message}"
    );
    assert!(message.contains("lower --scale or --ticks"), "{message}");

    let output = harness(&[
        "--scenario",
        "particles",
        "--scale",
        "4000",
        "--threads",
        "1",
    ]);
    assert_refused(&output, "the run needs at least ");
    assert!(
        stderr(&output).contains("(4,000,000,000 particles at "),
        "{}",
        stderr(&output)
    );
    // Per-tick samples of a run without end.
    let output = harness(&[
        "--scenario",
        "movers",
        "--ticks",
        "18446744073709551615",
        "--threads",
        "1",
    ]);
    assert_refused(
        &output,
        "2 systems × 18,446,744,073,709,551,615 ticks of samples",
    );
}

#[test]
fn an_endless_input_line_is_refused() {
    assert_refused(
        &harness(&[
            "--scenario",
            "scenarios/small.toml",
            "--inputs",
            "/dev/zero",
            "--threads",
            "1",
        ]),
        "input script /dev/zero, line 1: cannot read it: the line is longer than 4096 bytes",
    );
    assert_refused(
        &harness(&["--scenario", "/dev/zero"]),
        "cannot read the scenario /dev/zero: a scenario file is at most 1048576 bytes",
    );
}

#[test]
fn a_folder_is_not_an_input_script() {
    let folder = temp_dir("folder");
    let dir = folder.path().to_str().unwrap();
    assert_refused(
        &harness(&["--scenario", "scenarios/small.toml", "--inputs", dir]),
        &format!("cannot read the input script {dir}: it is a folder"),
    );
}

#[test]
fn nan_or_infinity_in_any_float_field_is_refused() {
    let dir = temp_dir("bad-floats");
    for (field, value) in [
        ("speed_max", "nan"),
        ("amplitude_max", "inf"),
        ("frequency_max", "-inf"),
        ("speed_min", "nan"),
        ("width", "inf"),
        ("first_wave", "nan"),
        ("fire_interval", "1e30"),
    ] {
        let path = temp_file(
            &dir,
            &format!("{field}.toml"),
            with_field(&small_toml(), field, value),
        );
        let output = harness(&["--scenario", &path, "--ticks", "5"]);
        assert_refused(&output, &format!("field `{field}` of [shmup."));
        assert!(
            stderr(&output).contains("must be a finite number between -1e9 and 1e9"),
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn too_many_threads_are_refused_at_once() {
    let output = harness(&["--threads", "100000"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("invalid value '100000' for '--threads <N>': at most 1024 threads"),
        "{message}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn unwritable_outputs_are_found_before_the_run() {
    // The script's first line is bad: had the run started, its error would
    // come first.
    let dir = temp_dir("bad-outputs");
    let script = temp_file(&dir, "bad-first.txt", "0 0 jump\n");
    for (option, what) in [("--trace", "trace"), ("--dot", "DOT file")] {
        assert_refused(
            &harness(&[
                "--scenario",
                "scenarios/small.toml",
                "--inputs",
                &script,
                option,
                "/nonexistent/folder/out",
            ]),
            &format!("error: cannot write the {what} /nonexistent/folder/out: "),
        );
    }
    // A writable path is checked without leaving a file behind.
    let check = temp_dir("check");
    let dot = check.path().join("schedule.dot");
    let output = harness(&[
        "--scenario",
        "scenarios/small.toml",
        "--inputs",
        &script,
        "--dot",
        dot.to_str().unwrap(),
    ]);
    assert_refused(&output, "line 1: unknown command `jump`");
    assert!(!dot.exists());
}

#[test]
fn a_full_disk_on_standard_output_is_an_error_not_a_panic() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    for json in [false, true] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let mut args = vec!["--scenario", "movers", "--ticks", "3", "--threads", "1"];
        if json {
            args.push("--json");
        }
        let output = Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(&args)
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        let message = stderr(&output);
        assert!(
            message.starts_with("error: cannot print the report on standard output: "),
            "{message}"
        );
        assert!(!message.contains("panicked"), "{message}");
    }
}

#[test]
fn a_negative_count_names_its_field() {
    let text = small_toml().replace("count = 2 ", "count = -2 ");
    let line = text.lines().position(|l| l.contains("-2")).unwrap() + 1;
    let dir = temp_dir("bad-negative");
    let path = temp_file(&dir, "negative.toml", text);
    assert_refused(
        &harness(&["--scenario", &path]),
        &format!(
            "line {line}, column 9: invalid value: integer `-2`, expected u8 (field `count` of [shmup.players])"
        ),
    );
}

#[test]
fn a_huge_bad_input_line_is_cut_in_the_message() {
    let dir = temp_dir("bad-long-line");
    let script = temp_file(&dir, "long-line.txt", format!("0 0 {}\n", "x".repeat(3000)));
    let output = harness(&["--scenario", "scenarios/small.toml", "--inputs", &script]);
    assert_refused(
        &output,
        &format!(
            "line 1: unknown command `{}…` (expected `move` or `fire`)",
            "x".repeat(40)
        ),
    );
    assert!(stderr(&output).len() < 300, "{}", stderr(&output));
}

#[test]
fn an_endless_input_stream_does_not_outlive_the_run() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args([
            "--scenario",
            "scenarios/small.toml",
            "--ticks",
            "20",
            "--threads",
            "2",
            "--inputs",
            "-",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Commands past the last tick, and the pipe left open: the input
    // thread ends up blocked in a read that never returns.
    let mut stdin = child.stdin.take().unwrap();
    let script: String = (0..100).map(|t| format!("{t} 0 fire on\n")).collect();
    stdin.write_all(script.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let output = child.wait_with_output().unwrap();
    drop(stdin);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("inputs applied    20\n"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn endless_commands_for_one_tick_are_refused() {
    let script = "0 0 fire on\n".repeat(5000);
    let output = harness_with_stdin(
        &["--scenario", "scenarios/small.toml", "--inputs", "-"],
        script.as_bytes(),
    );
    assert_refused(
        &output,
        "input script on standard input, line 4097: more than 4096 commands for tick 0",
    );
}

#[test]
fn inputs_are_read_from_standard_input() {
    let script = "\u{feff}0 0 fire on\n3 1 move 1 0\n";
    let output = harness_with_stdin(
        &[
            "--scenario",
            "scenarios/small.toml",
            "--ticks",
            "10",
            "--inputs",
            "-",
        ],
        script.as_bytes(),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("inputs applied    2\n"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn standard_input_is_not_read_twice() {
    assert_refused(
        &harness_with_stdin(
            &[
                "--scenario",
                "scenarios/small.toml",
                "--inputs",
                "-",
                "--check-determinism",
            ],
            b"0 0 fire on\n",
        ),
        "--check-determinism runs twice, but standard input can be read once",
    );
}

#[test]
fn a_local_file_named_like_a_builtin_does_not_shadow_it() {
    let dir = temp_dir("shadow");
    std::fs::create_dir_all(dir.path().join("shmup")).unwrap();
    std::fs::write(dir.path().join("movers"), small_toml()).unwrap();

    let output = harness_in(dir.path(), &["--scenario", "shmup", "--ticks", "2"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).starts_with("scenario `shmup`: "));
    assert_eq!(
        stderr(&output),
        "note: using the built-in scenario `shmup`; write `./shmup` for the file of that name\n"
    );
    assert_refused(
        &harness_in(dir.path(), &["--scenario", "./shmup"]),
        "cannot read the scenario ./shmup: ",
    );
    let output = harness_in(dir.path(), &["--scenario", "./movers", "--ticks", "2"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).starts_with("scenario `small`: "));
}

#[test]
fn a_byte_order_mark_never_reaches_a_message() {
    let text = format!(
        "\u{feff}{}",
        small_toml().replace("seed = 1", "seed = \"one\"")
    );
    let dir = temp_dir("bad-bom");
    let path = temp_file(&dir, "bom.toml", text.as_bytes());
    let output = harness(&["--scenario", &path]);
    assert_refused(&output, "line 5, column 8: ");
    assert!(stderr(&output).contains("(field `seed`)"));
    assert!(!stderr(&output).contains('\u{feff}'), "{}", stderr(&output));

    // A scenario and a script that start with one run as without it.
    let path = temp_file(&dir, "bom-ok.toml", format!("\u{feff}{}", small_toml()));
    let script = temp_file(&dir, "bom.txt", "\u{feff}0 0 fire on\n");
    let output = harness(&["--scenario", &path, "--ticks", "5", "--inputs", &script]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("inputs applied    1\n"));
}
