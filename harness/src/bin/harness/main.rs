//! The simulation harness: runs a scenario headless on many threads and
//! prints a report. `cargo run --release -- --help` lists the options.
#![forbid(unsafe_code)]

mod cli;
mod output;
mod progress;
mod signals;

use std::process::ExitCode;

use harness::{HarnessError, Scenario};

fn main() -> ExitCode {
    let args = match cli::Args::parse_one_line() {
        Ok(args) => args,
        Err(code) => return code,
    };
    signals::install();
    match run(&args) {
        Ok(code) => code,
        Err(error) => {
            output::note(&format!(
                "error: {}",
                harness::printable(&error.to_string())
            ));
            ExitCode::FAILURE
        }
    }
}

fn run(args: &cli::Args) -> Result<ExitCode, HarnessError> {
    output::check_stdout()?;
    output::check_distinct(args)?;
    let scenario = Scenario::resolve(&args.scenario)?;
    if let Some(path) = Scenario::shadowed_by(&args.scenario) {
        output::note(&format!(
            "note: using the built-in scenario `{}`; write `{path}` for the file of that name",
            args.scenario
        ));
    }
    let config = args.config(scenario)?;
    output::check_files(args)?;
    if args.check_determinism || args.shuffle_waves.is_some() {
        let bar = progress::bar(2 * config.ticks, args.json);
        let check = harness::check_determinism(&config, |n| bar.set_position(n))?;
        bar.finish_and_clear();
        output::files(args, &check.multi)?;
        output::print(args, &check.multi.report, Some(&check))?;
        if !check.passed() {
            output::note(&format!(
                "error: the world differs between 1 and {} threads ({:#018x} vs {:#018x}; commands {:?} vs {:?})",
                check.multi.report.threads,
                check.single.report.checksum,
                check.multi.report.checksum,
                check.single.report.commands,
                check.multi.report.commands
            ));
            match &check.divergence {
                Some(divergence) => output::note(&format!("  {divergence}")),
                None => output::note(
                    "  the worlds stayed equal tick by tick: only the command counts differ",
                ),
            }
            return Ok(ExitCode::FAILURE);
        }
    } else {
        let bar = progress::bar(config.ticks, args.json);
        let outcome = harness::run(&config, |n| bar.set_position(n))?;
        bar.finish_and_clear();
        output::files(args, &outcome)?;
        output::print(args, &outcome.report, None)?;
    }
    Ok(ExitCode::SUCCESS)
}
