//! What the CLI tests of bad files share: running the binary, reading
//! its output, a folder per test, the small scenario with a field
//! changed.
#![allow(dead_code, reason = "each test file uses some of these")]

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The harness binary, run in `dir` with `args`, standard input closed.
pub(crate) fn harness_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("the harness binary runs")
}

/// The harness binary, run in the crate's folder.
pub(crate) fn harness(args: &[&str]) -> Output {
    harness_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// The harness binary through `sh -c`, after `setup` (a `ulimit`, a
/// redirection): `sh -c 'SETUP; exec harness "$@"' sh ARGS`.
pub(crate) fn harness_sh(setup: &str, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("{setup}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .expect("sh runs")
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Exit code 1, nothing on standard output, and one `error: ` line that
/// contains `expected`, with no panic and no control character.
pub(crate) fn assert_refused(output: &Output, expected: &str) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(message.starts_with("error: "), "{message}");
    assert!(message.contains(expected), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        !message.trim_end().chars().any(char::is_control),
        "{message:?}"
    );
    assert!(!message.contains("panicked"), "{message}");
    assert!(output.stdout.is_empty(), "{}", stdout(output));
}

/// A fresh, empty folder of its own in the temporary folder, named
/// `harness-t-NAME-` and a random tail. It is removed, with all in it,
/// when the returned guard drops: keep it in a variable for the whole test
/// (`let dir = temp_dir("x"); dir.path().join(..)`), so the folder goes
/// when the test ends, passed or panicked, and not before.
pub(crate) fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("harness-t-{name}-"))
        .tempdir()
        .expect("a temporary folder")
}

/// The names in `dir`, sorted.
pub(crate) fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

pub(crate) fn small_toml() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/small.toml"))
        .unwrap()
}

/// `text` with the first line setting `field` (at the start of a line)
/// replaced by `field = value`.
pub(crate) fn with_field(text: &str, field: &str, value: &str) -> String {
    let mut done = false;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            if !done && line.starts_with(&format!("{field} ")) {
                done = true;
                format!("{field} = {value}")
            } else {
                line.to_owned()
            }
        })
        .collect();
    assert!(done, "the scenario sets `{field}`");
    lines.join("\n") + "\n"
}

/// Makes a FIFO at `path`; `false` where `mkfifo` is missing.
pub(crate) fn mkfifo(path: &Path) -> bool {
    Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}
