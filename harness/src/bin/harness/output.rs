//! What the harness prints and writes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use harness::{
    DeterminismCheck, HarnessError, Report, RunOutcome, Scenario, chrome_trace, write_text,
};
use serde::Serialize;

use crate::cli::Args;

/// The outcome of `--check-determinism`, for the JSON report.
#[derive(Serialize)]
struct Determinism {
    threads: usize,
    /// The seed the second run's waves were shuffled by (`--shuffle-waves`).
    #[serde(skip_serializing_if = "Option::is_none")]
    shuffle_seed: Option<u64>,
    single_thread_checksum: String,
    multi_thread_checksum: String,
    passed: bool,
    /// Where the runs first differ, when they do (`harness::diagnose`).
    #[serde(skip_serializing_if = "Option::is_none")]
    divergence: Option<String>,
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

/// Checks, before the run, that the `--trace`, `--dot` and `--save-at`
/// files can be written, so that a bad path does not cost the whole run
/// (see [`harness::check_output`]: nothing is left behind, an existing
/// file is left as it is).
pub(crate) fn check_files(args: &Args) -> Result<(), HarnessError> {
    for (path, what) in outputs(args) {
        harness::check_output(&path, what)?;
    }
    Ok(())
}

/// The output files, with what each is.
fn outputs(args: &Args) -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    if let Some(path) = &args.save_file() {
        out.push((path.clone(), "snapshot"));
    }
    if let Some(path) = &args.trace {
        out.push((path.clone(), "trace"));
    }
    if let Some(path) = &args.dot {
        out.push((path.clone(), "DOT file"));
    }
    out
}

/// Refuses, before anything is read, an output that is an input (the
/// scenario file, the script, the snapshot to load) or another output.
pub(crate) fn check_distinct(args: &Args) -> Result<(), HarnessError> {
    let mut inputs: Vec<(&str, PathBuf)> = Vec::new();
    if let Some(path) = Scenario::file_of(&args.scenario) {
        inputs.push(("--scenario", path));
    }
    if let Some(path) = args.inputs.as_ref().filter(|p| p.as_os_str() != "-") {
        inputs.push(("--inputs", path.clone()));
    }
    if let Some(path) = &args.load {
        inputs.push(("--load", path.clone()));
    }
    let outputs: Vec<(&str, PathBuf)> = outputs(args)
        .into_iter()
        .map(|(path, what)| {
            let option = match what {
                "snapshot" => "--save-at",
                "trace" => "--trace",
                _ => "--dot",
            };
            (option, path)
        })
        .collect();
    let inputs: Vec<(&str, &Path)> = inputs.iter().map(|(o, p)| (*o, p.as_path())).collect();
    let outputs: Vec<(&str, &Path)> = outputs.iter().map(|(o, p)| (*o, p.as_path())).collect();
    harness::check_distinct(&inputs, &outputs)
}

/// Refuses to run with standard output closed (`>&-`): the report would
/// be lost while the run exits 0. (The Rust runtime reopens a closed
/// descriptor 1 on `/dev/null` for reading and writing before `main`; a
/// shell's `> /dev/null` opens it write-only, which runs as asked.)
pub(crate) fn check_stdout() -> Result<(), HarnessError> {
    let target = std::fs::read_link("/proc/self/fd/1").ok();
    let flags = std::fs::read_to_string("/proc/self/fdinfo/1").ok();
    if stdout_closed(target.as_deref(), flags.as_deref()) {
        return Err(HarnessError::Print(std::sync::Arc::new(
            std::io::Error::other(
                "it is closed (>&-), and the report would be lost: redirect it to a file, or to /dev/null",
            ),
        )));
    }
    Ok(())
}

/// Whether descriptor 1, pointing at `target` with the `fdinfo` text
/// `flags`, is the runtime's stand-in for a closed one: `/dev/null` opened
/// for reading and writing (`O_RDWR`).
fn stdout_closed(target: Option<&Path>, fdinfo: Option<&str>) -> bool {
    let Some(flags) = fdinfo
        .and_then(|f| f.lines().find_map(|l| l.strip_prefix("flags:")))
        .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
    else {
        return false;
    };
    const ACCESS_MODE: u32 = 0o3;
    const READ_WRITE: u32 = 0o2;
    target == Some(Path::new("/dev/null")) && flags & ACCESS_MODE == READ_WRITE
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
        shuffle_seed: args.shuffle_waves,
        single_thread_checksum: format!("{:#018x}", c.single.report.checksum),
        multi_thread_checksum: format!("{:#018x}", c.multi.report.checksum),
        passed: c.passed(),
        divergence: c.divergence.as_ref().map(ToString::to_string),
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
        let shuffled = d.shuffle_seed.map_or(String::new(), |seed| {
            format!(", waves shuffled by seed {seed}")
        });
        writeln!(
            out,
            "determinism       {} ({} with 1 thread, {} with {} thread{}{shuffled})",
            if d.passed { "passed" } else { "FAILED" },
            d.single_thread_checksum,
            d.multi_thread_checksum,
            d.threads,
            if d.threads == 1 { "" } else { "s" }
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn a_closed_stdout_is_told_from_dev_null() {
        let null = Some(Path::new("/dev/null"));
        assert!(super::stdout_closed(
            null,
            Some("pos:\t0\nflags:\t0100002\nmnt_id:\t1\n")
        ));
        assert!(!super::stdout_closed(
            null,
            Some("pos:\t0\nflags:\t0100001\n")
        ));
        assert!(!super::stdout_closed(
            Some(Path::new("/tmp/x")),
            Some("flags:\t0100002\n")
        ));
        assert!(!super::stdout_closed(None, None));
    }
}
