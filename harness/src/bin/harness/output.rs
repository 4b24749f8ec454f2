//! What the harness prints and writes.

use harness::{DeterminismCheck, HarnessError, Report, RunOutcome, chrome_trace, write_text};
use serde::Serialize;

use crate::cli::Args;

/// The outcome of `--check-determinism`, for the JSON report.
#[derive(Serialize)]
struct Determinism {
    threads: usize,
    single_thread_checksum: String,
    multi_thread_checksum: String,
    passed: bool,
}

/// The JSON report: the run's report, plus the determinism check if any.
#[derive(Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    report: &'a Report,
    #[serde(skip_serializing_if = "Option::is_none")]
    determinism: Option<Determinism>,
}

/// Writes the `--trace` and `--dot` files.
pub(crate) fn files(args: &Args, outcome: &RunOutcome) -> Result<(), HarnessError> {
    if let Some(path) = &args.trace {
        write_text(path, "trace", &chrome_trace(outcome))?;
        eprintln!(
            "trace written to {} (open it in https://ui.perfetto.dev or chrome://tracing)",
            path.display()
        );
    }
    if let Some(path) = &args.dot {
        write_text(path, "DOT file", &outcome.dot)?;
        eprintln!(
            "schedule written to {} (render it with `dot -Tsvg {} -o schedule.svg`)",
            path.display(),
            path.display()
        );
    }
    Ok(())
}

/// Prints the report, as text or JSON.
pub(crate) fn print(args: &Args, report: &Report, check: Option<&DeterminismCheck>) {
    let determinism = check.map(|c| Determinism {
        threads: c.multi.report.threads,
        single_thread_checksum: format!("{:#018x}", c.single.report.checksum),
        multi_thread_checksum: format!("{:#018x}", c.multi.report.checksum),
        passed: c.passed(),
    });
    if args.json {
        let json = Json {
            report,
            determinism,
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&json).expect("the report serializes")
        );
        return;
    }
    print!("{report}");
    if let Some(d) = determinism {
        println!();
        println!(
            "determinism       {} ({} with 1 thread, {} with {} thread{})",
            if d.passed { "passed" } else { "FAILED" },
            d.single_thread_checksum,
            d.multi_thread_checksum,
            d.threads,
            if d.threads == 1 { "" } else { "s" }
        );
    }
}
