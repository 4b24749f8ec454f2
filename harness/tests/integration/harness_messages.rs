//! The smaller cases of issue 25 (case 9): a closed standard output, a
//! scenario with CR-only line ends, terminal escapes in a script line,
//! and clap's refusals, each one clean line.

use crate::common;

use common::{assert_refused, harness, harness_sh, small_toml, stderr, temp_dir};

#[test]
fn case_9_a_closed_standard_output_is_refused_before_the_run() {
    let output = harness_sh("exec >&-", &["--scenario", "movers", "--ticks", "5"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        "error: cannot print the report on standard output: it is closed (>&-), and the report \
         would be lost: redirect it to a file, or to /dev/null\n"
    );
    // /dev/null is a place to send it.
    let output = harness_sh("exec >/dev/null", &["--scenario", "movers", "--ticks", "5"]);
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn case_9_cr_only_line_ends_are_named_on_one_line() {
    let text = small_toml().replace('\n', "\r");
    let cr = temp_dir("cr");
    let path = cr.path().join("mac.toml");
    std::fs::write(&path, text).unwrap();
    let p = path.to_str().unwrap();
    let output = harness(&["--scenario", p]);
    assert_refused(
        &output,
        &format!(
            "error: scenario {p}: line 1: a carriage return (CR) without a line feed ends the line; \
             TOML lines end in LF or CR LF"
        ),
    );
    assert!(stderr(&output).len() < 250, "{}", stderr(&output));
    // CR LF is fine.
    let crlf = temp_dir("crlf");
    let path = crlf.path().join("windows.toml");
    std::fs::write(&path, small_toml().replace('\n', "\r\n")).unwrap();
    let output = harness(&["--scenario", path.to_str().unwrap(), "--ticks", "2"]);
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn case_9_terminal_escapes_in_a_script_line_are_quoted_escaped() {
    let dir = temp_dir("escape");
    let path = dir.path().join("script.txt");
    std::fs::write(&path, "0 0 \u{1b}[2J\u{1b}]0;owned\u{7}\n").unwrap();
    let output = harness(&[
        "--scenario",
        "scenarios/small.toml",
        "--inputs",
        path.to_str().unwrap(),
    ]);
    assert_refused(
        &output,
        "line 1: unknown command `\\u{1b}[2J\\u{1b}]0;owned\\u{7}` (expected `move` or `fire`)",
    );
    assert!(!stderr(&output).contains('\u{1b}'));
}

#[test]
fn case_9_clap_refusals_take_one_line() {
    for (args, expected) in [
        (
            vec!["--threads", "0"],
            "error: invalid value '0' for '--threads <N>': the engine needs at least 1 thread (see --help)",
        ),
        (
            vec!["--tick", "5"],
            "error: unexpected argument '--tick' found",
        ),
        (vec!["--save-at", "5"], "error: "),
        (
            vec!["--scale"],
            "error: a value is required for '--scale <K>' but none was supplied",
        ),
    ] {
        let output = harness(&args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert_eq!(message.lines().count(), 1, "{args:?}: {message}");
        assert!(message.starts_with(expected), "{args:?}: {message}");
        assert!(message.trim_end().ends_with("(see --help)"), "{message}");
        assert!(output.stdout.is_empty());
    }
    // Help still prints whole, on standard output.
    let output = harness(&["--help"]);
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("--save-at <TICK> <FILE>"));
}
