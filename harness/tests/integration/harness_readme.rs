//! The README's sample report (section "The report") comes from a real
//! run: the default scenario on 2 threads. Every figure that does not
//! depend on timing must match what the run prints today.

use harness::{RunConfig, Scenario, run};

/// The lines of the README's ```text block under `### The report`.
fn readme_sample() -> Vec<String> {
    let readme = include_str!("../../../README.md");
    let section = readme
        .split("### The report")
        .nth(1)
        .expect("the README has a section `### The report`");
    let block = section
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the section opens with a ```text block");
    block.lines().map(str::to_owned).collect()
}

/// Labels of the report lines whose figures are the same in every run.
const EXACT: [&str; 6] = [
    "scenario ",
    "entities alive",
    "spawned/despawned",
    "checksum",
    "inputs applied",
    "player ",
];

#[test]
fn the_readme_sample_report_matches_a_real_run() {
    let sample = readme_sample();
    let mut config = RunConfig::new(Scenario::builtin("shmup").unwrap());
    config.threads = 2;
    let printed = run(&config, |_| {}).unwrap().report.to_string();
    let printed: Vec<&str> = printed.lines().collect();

    let mut exact = 0;
    for line in sample
        .iter()
        .filter(|l| EXACT.iter().any(|e| l.starts_with(e)))
    {
        assert!(
            printed.contains(&line.as_str()),
            "the README shows `{line}`, the run prints:\n{}",
            printed.join("\n")
        );
        exact += 1;
    }
    assert_eq!(exact, 7, "the sample keeps its seven exact lines");

    // The tables: each row the README shows has the run's system and wave
    // (or wave, width and systems); only the microseconds differ.
    let words = |line: &str| -> Vec<String> {
        line.split_whitespace()
            .filter(|w| w.parse::<f64>().is_err() || !w.contains('.'))
            .map(str::to_owned)
            .collect()
    };
    let printed_rows: Vec<Vec<String>> = printed.iter().map(|l| words(l)).collect();
    let rows = sample
        .iter()
        .skip_while(|l| !l.starts_with("system "))
        .filter(|l| !l.is_empty() && l.as_str() != "...");
    let mut checked = 0;
    for row in rows {
        assert!(
            printed_rows.contains(&words(row)),
            "the README's row `{row}` is not in the run's report:\n{}",
            printed.join("\n")
        );
        checked += 1;
    }
    assert!(checked >= 6, "{checked} table rows");
}
