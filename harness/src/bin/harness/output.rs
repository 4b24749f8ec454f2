//! What the harness prints and writes.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

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

/// A line on standard error; if even that fails (a full disk), there is
/// nowhere left to say so, and the exit code speaks.
pub(crate) fn note(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Checks, before the run, that the `--trace` and `--dot` files can be
/// written, so that a bad path does not cost the whole run: opens each for
/// appending (created if missing, then removed again; an existing file is
/// left as it is).
pub(crate) fn check_files(args: &Args) -> Result<(), HarnessError> {
    let save = args.save_file();
    let outputs = [
        (&args.trace, "trace"),
        (&args.dot, "DOT file"),
        (&save, "snapshot"),
    ];
    for (path, what) in outputs {
        let Some(path) = path else { continue };
        check_writable(path).map_err(|source| HarnessError::WriteFile {
            what,
            path: path.clone(),
            source: Arc::new(source),
        })?;
    }
    Ok(())
}

fn check_writable(path: &Path) -> std::io::Result<()> {
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?;
    if !existed {
        std::fs::remove_file(path)?;
    }
    Ok(())
}

/// Writes the `--trace` and `--dot` files.
pub(crate) fn files(args: &Args, outcome: &RunOutcome) -> Result<(), HarnessError> {
    if let Some(path) = &args.trace {
        write_text(path, "trace", &chrome_trace(outcome))?;
        note(&format!(
            "trace written to {} (open it in https://ui.perfetto.dev or chrome://tracing)",
            path.display()
        ));
    }
    if let Some(path) = &args.dot {
        write_text(path, "DOT file", &outcome.dot)?;
        note(&format!(
            "schedule written to {} (render it with `dot -Tsvg {} -o schedule.svg`)",
            path.display(),
            path.display()
        ));
    }
    Ok(())
}

/// Prints the report, as text or JSON.
///
/// # Errors
///
/// [`HarnessError::Print`] when standard output cannot be written (a full
/// disk, a closed pipe).
pub(crate) fn print(
    args: &Args,
    report: &Report,
    check: Option<&DeterminismCheck>,
) -> Result<(), HarnessError> {
    let mut out = std::io::stdout().lock();
    write_report(&mut out, args, report, check)
        .and_then(|()| out.flush())
        .map_err(|e| HarnessError::Print(Arc::new(e)))
}

fn write_report(
    out: &mut impl Write,
    args: &Args,
    report: &Report,
    check: Option<&DeterminismCheck>,
) -> std::io::Result<()> {
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
        serde_json::to_writer_pretty(&mut *out, &json)?;
        return writeln!(out);
    }
    write!(out, "{report}")?;
    if let Some(d) = determinism {
        writeln!(out)?;
        writeln!(
            out,
            "determinism       {} ({} with 1 thread, {} with {} thread{})",
            if d.passed { "passed" } else { "FAILED" },
            d.single_thread_checksum,
            d.multi_thread_checksum,
            d.threads,
            if d.threads == 1 { "" } else { "s" }
        )?;
    }
    Ok(())
}
