//! The simulation harness: runs a scenario headless on many threads and
//! prints a report. `cargo run --release -- --help` lists the options.
#![forbid(unsafe_code)]

mod cli;
mod output;
mod progress;

use std::process::ExitCode;

use clap::Parser;
use harness::{HarnessError, Scenario};

fn main() -> ExitCode {
    let args = cli::Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &cli::Args) -> Result<ExitCode, HarnessError> {
    let config = args.config(Scenario::resolve(&args.scenario)?);
    if args.check_determinism {
        let bar = progress::bar(2 * config.ticks, args.json);
        let check = harness::check_determinism(&config, |n| bar.set_position(n))?;
        bar.finish_and_clear();
        output::files(args, &check.multi)?;
        output::print(args, &check.multi.report, Some(&check));
        if !check.passed() {
            eprintln!(
                "error: the world differs between 1 and {} threads ({:#018x} vs {:#018x}; commands {:?} vs {:?})",
                check.multi.report.threads,
                check.single.report.checksum,
                check.multi.report.checksum,
                check.single.report.commands,
                check.multi.report.commands
            );
            return Ok(ExitCode::FAILURE);
        }
    } else {
        let bar = progress::bar(config.ticks, args.json);
        let outcome = harness::run(&config, |n| bar.set_position(n))?;
        bar.finish_and_clear();
        output::files(args, &outcome)?;
        output::print(args, &outcome.report, None);
    }
    Ok(ExitCode::SUCCESS)
}
