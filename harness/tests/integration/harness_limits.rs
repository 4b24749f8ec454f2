//! Runs that grow past the memory this process may take, and sums at the
//! documented limits (issue 25, cases 7 and 8). The memory cases run
//! under `ulimit -v` (an address-space limit), so they behave the same on
//! any machine: refused before the run where the rules tell the peak,
//! stopped at a tick with a message where they do not, never aborted.

use crate::common;

use tempfile::TempDir;

use common::{
    assert_refused, harness, harness_sh, small_toml, stderr, stdout, temp_dir, with_field,
};

/// About 3.8 GiB of address space, in the shell's KiB.
const FOUR_GB: &str = "ulimit -v 4000000";

/// A file `name` with `text` in `dir` (a test's folder from `temp_dir`).
fn file(dir: &TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// `text` with each `(field, value)` set in turn.
fn with_fields(text: &str, fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .fold(text.to_owned(), |t, (f, v)| with_field(&t, f, v))
}

#[test]
fn case_7_waves_that_never_leave_are_refused_from_their_peak() {
    // A million enemies a wave, a wave every tick, none moving: one wave
    // fits, the run does not (the director plans each wave whole).
    let text = with_fields(
        &small_toml(),
        &[
            ("per_wave", "1000000"),
            ("wave_interval", "0.0167"),
            ("speed_min", "0.0"),
            ("speed_max", "0.0"),
        ],
    );
    let dir = temp_dir("never-leave");
    let path = file(&dir, "never-leave.toml", &text);
    let output = harness_sh(FOUR_GB, &["--scenario", &path, "--threads", "2"]);
    assert_refused(&output, "the run needs at least ");
    let message = stderr(&output);
    assert!(
        message.contains("enemies alive at once (none shot down)")
            && message.contains(" planned at 48 B"),
        "{message}"
    );
    assert!(
        message.contains("is left (the address-space limit (ulimit -v)); lower --scale or --ticks"),
        "{message}"
    );
}

#[test]
fn case_7_movers_that_outgrow_the_limit_stop_at_a_tick_never_abort() {
    let movers = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/movers.toml"
    ))
    .unwrap();
    let text = with_field(&movers, "spawn_per_tick", "1000000");
    let dir = temp_dir("outgrow");
    let path = file(&dir, "movers.toml", &text);
    // With 3.8 GiB the peak estimate fits, the world does not: the guard
    // stops it between two ticks.
    let output = harness_sh(FOUR_GB, &["--scenario", &path, "--threads", "2"]);
    assert_refused(&output, ": out of memory: the world has ");
    let message = stderr(&output);
    assert!(message.starts_with("error: tick "), "{message}");
    assert!(
        message.contains("(the address-space limit (ulimit -v))"),
        "{message}"
    );
    // With 1.9 GiB the estimate alone refuses it.
    let output = harness_sh(
        "ulimit -v 2000000",
        &["--scenario", &path, "--threads", "2"],
    );
    assert_refused(&output, "the run needs at least ");
    assert!(
        stderr(&output).contains("spawned later that are still in the band at the end"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn case_8_the_bounty_is_range_checked() {
    let dir = temp_dir("range");
    for bounty in ["4294967295", "1000000001"] {
        let path = file(
            &dir,
            &format!("bounty-{bounty}.toml"),
            &with_field(&small_toml(), "bounty", bounty),
        );
        assert_refused(
            &harness(&["--scenario", &path]),
            "field `bounty` of [shmup.enemies] must be a finite number between -1e9 and 1e9",
        );
    }
    for field in ["per_wave", "max_waves"] {
        let text = with_field(&small_toml(), field, "4000000000");
        let path = file(&dir, &format!("{field}.toml"), &text);
        assert_refused(
            &harness(&["--scenario", &path]),
            &format!("field `{field}` of [shmup.enemies] must be a finite number"),
        );
    }
}

#[test]
fn case_8_scores_and_damage_saturate_at_the_limit() {
    // This binary is built with overflow checks: a wrapping sum panics.
    let dir = temp_dir("saturate");
    let path = file(
        &dir,
        "bounty.toml",
        &with_field(&small_toml(), "bounty", "1000000000"),
    );
    let output = harness(&["--scenario", &path, "--threads", "2"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report = stdout(&output);
    assert!(
        report.contains("player 0          score 4,294,967,295, lives"),
        "{report}"
    );
    // Enemies as large as the margin allows, ramming with 1e9 damage:
    // several at once on a ship add up past i32.
    let text = small_toml()
        .replace("margin = 48.0", "margin = 200.0")
        .replace("radius = 9.0", "radius = 150.0")
        .replace("health = 2\n", "health = 1000000000\n")
        .replace("contact_damage = 1\n", "contact_damage = 1000000000\n")
        .replace("missile_damage = 1\n", "missile_damage = 1000000000\n");
    assert_eq!(text.matches("1000000000").count(), 5, "{text}");
    let path = file(&dir, "damage.toml", &text);
    let output = harness(&["--scenario", &path, "--threads", "2"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stderr(&output).contains("overflow"), "{}", stderr(&output));
}
