//! Review of the snapshot flags: a second `--save-at` is refused, not
//! silently dropped (the first was kept and the second ignored).

use std::process::{Command, Output};

use crate::common::temp_dir;

fn harness(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the harness binary runs")
}

#[test]
fn a_second_save_at_is_refused() {
    let dir = temp_dir("repeated-save-at");
    let a = dir.path().join("a.bin");
    let b = dir.path().join("b.bin");
    let output = harness(&[
        "--scenario",
        "scenarios/small.toml",
        "--ticks",
        "4",
        "--save-at",
        "1",
        a.to_str().unwrap(),
        "--save-at",
        "2",
        b.to_str().unwrap(),
    ]);
    let message = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains("--save-at"), "{message}");
    assert!(!a.exists() && !b.exists());
}
