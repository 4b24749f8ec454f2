//! The harness's files against a careless or hostile user (issue 25,
//! cases 1 to 4): inputs of any size or kind are read in bounded time and
//! memory, a pipe nobody opens does not block, a failed or interrupted
//! write leaves the old file whole and nothing else, and no output may
//! overwrite an input or another output.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{
    assert_refused, harness, harness_sh, mkfifo, names, small_toml, stderr, stdout, temp_dir,
};

const SMALL: &str = "scenarios/small.toml";

/// A good snapshot of the small world after `ticks`, at `path`.
fn snapshot(path: &Path, ticks: &str) {
    let p = path.to_str().unwrap();
    let output = harness(&["--scenario", SMALL, "--ticks", ticks, "--save-at", ticks, p]);
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn case_1_load_reads_no_more_than_a_snapshot_of_the_run_can_hold() {
    let started = Instant::now();
    assert_refused(
        &harness(&["--scenario", SMALL, "--ticks", "20", "--load", "/dev/zero"]),
        "cannot read the snapshot /dev/zero: not a snapshot of format version 3: it starts with byte 0x00",
    );
    assert_refused(
        &harness(&[
            "--scenario",
            SMALL,
            "--ticks",
            "20",
            "--load",
            "/dev/urandom",
        ]),
        "cannot read the snapshot /dev/urandom: ",
    );
    // An 8 GiB sparse file: refused by its size, before a byte is read.
    let dir = temp_dir("sparse");
    let sparse = dir.path().join("huge.bin");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let output = harness(&[
        "--scenario",
        SMALL,
        "--ticks",
        "20",
        "--load",
        sparse.to_str().unwrap(),
    ]);
    assert_refused(&output, "but this is 8589934592 bytes");
    assert!(
        stderr(&output).contains("a snapshot of this run is at most "),
        "{}",
        stderr(&output)
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn case_1_an_endless_pipe_is_cut_at_the_limit() {
    let dir = temp_dir("endless");
    let fifo = dir.path().join("endless.bin");
    if !mkfifo(&fifo) {
        return;
    }
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut file = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            // A version byte that passes, then zeros without end (until
            // the reader is gone: a broken pipe).
            let _ = file.write_all(&[ecs_snapshot::FORMAT_VERSION as u8]);
            let block = [0u8; 1 << 16];
            while file.write_all(&block).is_ok() {}
        })
    };
    let started = Instant::now();
    assert_refused(
        &harness(&[
            "--scenario",
            SMALL,
            "--ticks",
            "20",
            "--load",
            fifo.to_str().unwrap(),
        ]),
        "but this is more than that",
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    writer.join().unwrap();
}

#[test]
fn case_2_a_pipe_nobody_opens_blocks_nothing() {
    let dir = temp_dir("fifo");
    let fifo = dir.path().join("f");
    if !mkfifo(&fifo) {
        return;
    }
    let f = fifo.to_str().unwrap().to_owned();
    // Outputs: refused at once, before the run.
    for (option, what) in [("--dot", "DOT file"), ("--trace", "trace")] {
        assert_refused(
            &harness(&["--scenario", SMALL, "--ticks", "5", option, &f]),
            &format!("cannot write the {what} {f}: it is a pipe or a socket"),
        );
    }
    assert_refused(
        &harness(&["--scenario", SMALL, "--ticks", "5", "--save-at", "5", &f]),
        &format!("cannot write the snapshot {f}: it is a pipe or a socket"),
    );
    // Inputs: refused after a bounded wait for a writer (5 s), in
    // parallel.
    let started = Instant::now();
    let cases = [
        (
            vec!["--scenario", &f],
            format!(
                "cannot read the scenario {f}: no program opened the pipe for writing within 5 s"
            ),
        ),
        (
            vec!["--scenario", SMALL, "--ticks", "5", "--load", &f],
            format!(
                "cannot read the snapshot {f}: no program opened the pipe for writing within 5 s"
            ),
        ),
        (
            vec!["--scenario", SMALL, "--ticks", "5", "--inputs", &f],
            format!(
                "input script {f}, line 1: cannot read it: no program opened the pipe for writing within 5 s"
            ),
        ),
    ];
    let runs: Vec<_> = cases
        .into_iter()
        .map(|(args, expected)| {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            std::thread::spawn(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                (harness(&args), expected)
            })
        })
        .collect();
    for run in runs {
        let (output, expected) = run.join().unwrap();
        assert_refused(&output, &expected);
    }
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn case_2_a_pipe_with_a_writer_is_read() {
    let dir = temp_dir("fifo-ok");
    let (scenario, script) = (dir.path().join("scenario"), dir.path().join("script"));
    if !mkfifo(&scenario) || !mkfifo(&script) {
        return;
    }
    let writer = {
        let (scenario, script) = (scenario.clone(), script.clone());
        std::thread::spawn(move || {
            std::fs::write(&scenario, small_toml()).unwrap();
            std::fs::write(&script, "0 0 fire on\n3 1 move 1 0\n").unwrap();
        })
    };
    let output = harness(&[
        "--scenario",
        scenario.to_str().unwrap(),
        "--ticks",
        "10",
        "--inputs",
        script.to_str().unwrap(),
    ]);
    writer.join().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("inputs applied    2\n"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn case_3_a_write_past_the_file_size_limit_keeps_the_old_file() {
    let dir = temp_dir("ulimit");
    let good = dir.path().join("good.json");
    snapshot(&good, "10");
    let before = std::fs::read(&good).unwrap();
    assert!(before.len() > 8 * 1024, "{}", before.len());
    let g = good.to_str().unwrap();
    // 8 blocks of 512 or 1024 bytes, as the shell counts them.
    let output = harness_sh(
        "ulimit -f 8",
        &["--scenario", SMALL, "--ticks", "60", "--save-at", "60", g],
    );
    assert_refused(
        &output,
        &format!("cannot write the snapshot {g}: File too large"),
    );
    assert_eq!(
        std::fs::read(&good).unwrap(),
        before,
        "the old snapshot is whole"
    );
    assert_eq!(
        names(dir.path()),
        ["good.json"],
        "no temporary file is left"
    );
    let output = harness(&["--scenario", SMALL, "--ticks", "20", "--load", g]);
    assert!(
        output.status.success(),
        "the old snapshot still loads: {}",
        stderr(&output)
    );

    for (option, what) in [("--trace", "trace"), ("--dot", "DOT file")] {
        let file = dir.path().join(format!("out{option}"));
        std::fs::write(&file, "old contents").unwrap();
        let f = file.to_str().unwrap();
        let output = harness_sh(
            "ulimit -f 1",
            &["--scenario", SMALL, "--ticks", "30", option, f],
        );
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        assert!(
            stderr(&output).contains(&format!("cannot write the {what} {f}: File too large")),
            "{}",
            stderr(&output)
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "old contents");
    }
    assert_eq!(names(dir.path()), ["good.json", "out--dot", "out--trace"]);
}

#[cfg(unix)]
#[test]
fn case_3_ctrl_c_during_a_save_leaves_the_old_file_and_nothing_else() {
    let dir = temp_dir("interrupt");
    let target = dir.path().join("big.json");
    std::fs::write(&target, "the old snapshot").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args([
            "--scenario",
            "particles",
            "--threads",
            "2",
            "--ticks",
            "0",
            "--save-at",
            "0",
        ])
        .arg(&target)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the temporary file, then interrupt.
    let deadline = Instant::now() + Duration::from_secs(60);
    while names(dir.path()).len() < 2 {
        assert!(Instant::now() < deadline, "no temporary file appeared");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the save ended before the interrupt"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "error: interrupted (signal 2); 1 unfinished output removed, the old file kept"
        ),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "the old snapshot"
    );
    assert_eq!(names(dir.path()), ["big.json"]);
}

#[test]
fn case_4_no_output_over_an_input_or_another_output() {
    let dir = temp_dir("distinct");
    let script = dir.path().join("script.txt");
    std::fs::write(&script, "0 0 fire on\n").unwrap();
    let scenario = dir.path().join("my.toml");
    std::fs::write(&scenario, small_toml()).unwrap();
    let (s, m) = (script.to_str().unwrap(), scenario.to_str().unwrap());
    let x = dir.path().join("X.json");
    let x = x.to_str().unwrap();
    let f = dir.path().join("F");
    let f = f.to_str().unwrap();
    let snap = dir.path().join("snap.bin");
    snapshot(&snap, "5");
    let snap = snap.to_str().unwrap();
    for (args, expected) in [
        (
            vec!["--scenario", SMALL, "--inputs", s, "--save-at", "10", s],
            format!("--save-at {s} is the file of --inputs: the output would overwrite an input"),
        ),
        (
            vec!["--scenario", m, "--dot", m],
            format!("--dot {m} is the file of --scenario"),
        ),
        (
            vec!["--scenario", SMALL, "--save-at", "10", x, "--trace", x],
            format!(
                "--trace {x} is also the file of --save-at: one output would overwrite the other"
            ),
        ),
        (
            vec!["--scenario", SMALL, "--trace", f, "--dot", f],
            format!("--dot {f} is also the file of --trace"),
        ),
        (
            vec![
                "--scenario",
                SMALL,
                "--ticks",
                "10",
                "--load",
                snap,
                "--save-at",
                "10",
                snap,
            ],
            format!("--save-at {snap} is the file of --load"),
        ),
    ] {
        assert_refused(&harness(&args), &expected);
    }
    // Another spelling of the script is the same file.
    let other = format!("{}/./script.txt", dir.path().display());
    assert_refused(
        &harness(&["--scenario", SMALL, "--inputs", s, "--dot", &other]),
        "is the file of --inputs",
    );
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "0 0 fire on\n");
    assert_eq!(std::fs::read_to_string(&scenario).unwrap(), small_toml());
    assert_eq!(names(dir.path()), ["my.toml", "script.txt", "snap.bin"]);
}
