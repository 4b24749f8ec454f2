//! The command line.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use harness::{HarnessError, InputSource, MAX_THREADS, RunConfig, Scenario};

/// Runs a game world headless on many threads and reports throughput,
/// per-system cost, the schedule's waves and a checksum of the world.
#[derive(Debug, Parser)]
#[command(name = "harness", version)]
pub(crate) struct Args {
    /// The scenario: a built-in name (`shmup`, `particles`, `movers`), or
    /// a TOML file (`./shmup` for a file named like a built-in).
    #[arg(long, value_name = "FILE", default_value = "shmup")]
    pub(crate) scenario: String,
    /// Ticks to run [default: the scenario's `ticks`].
    #[arg(long, value_name = "N")]
    pub(crate) ticks: Option<u64>,
    /// Threads of the engine's pool, 1 to 1024 [default: one per core].
    #[arg(long, value_name = "N", value_parser = threads)]
    pub(crate) threads: Option<usize>,
    /// Hands every tick to the pool and runs every wave of several systems
    /// in parallel, however cheap (by default a tick or wave too cheap to
    /// pay for the pool runs on one thread).
    #[arg(long)]
    pub(crate) no_adaptive: bool,
    /// Seed of every random draw [default: the scenario's `seed`].
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,
    /// Multiplies the scenario's entity counts.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = scale)]
    pub(crate) scale: u32,
    /// An input script (lines of `TICK PLAYER COMMAND`) instead of the
    /// built-in one; `-` reads it from standard input.
    #[arg(long, value_name = "FILE")]
    pub(crate) inputs: Option<PathBuf>,
    /// Writes a Chrome trace (open it in ui.perfetto.dev or chrome://tracing).
    #[arg(long, value_name = "FILE")]
    pub(crate) trace: Option<PathBuf>,
    /// Writes the schedule as Graphviz DOT (render with `dot -Tsvg`).
    #[arg(long, value_name = "FILE")]
    pub(crate) dot: Option<PathBuf>,
    /// Runs on 1 thread and on the requested threads; fails if the world
    /// checksums differ.
    #[arg(long)]
    pub(crate) check_determinism: bool,
    /// A determinism check whose second run runs each wave's systems one
    /// after another in an order drawn from SEED: catches order
    /// dependencies the declared access does not show.
    #[arg(long, value_name = "SEED")]
    pub(crate) shuffle_waves: Option<u64>,
    /// Prints the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Saves the world after tick TICK (0: before the first) to FILE: JSON
    /// when FILE ends in `.json`, compact postcard otherwise.
    #[arg(long, num_args = 2, value_names = ["TICK", "FILE"], action = clap::ArgAction::Set)]
    pub(crate) save_at: Option<Vec<String>>,
    /// Starts from a snapshot written by --save-at (same rules, seed
    /// and scale) and runs on from its tick to --ticks.
    #[arg(long, value_name = "FILE")]
    pub(crate) load: Option<PathBuf>,
    /// Rollback replay: saves the whole engine in memory before every
    /// tick, and every N ticks restores the state of N ticks ago and runs
    /// those ticks again with the same input (1 to 1024); the checksum
    /// must be the plain run's. The report gives the save and restore
    /// times.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) rollback: Option<u32>,
}

fn threads(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(0) => Err("the engine needs at least 1 thread".into()),
        Ok(n) if n > MAX_THREADS => Err(format!("at most {MAX_THREADS} threads")),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

fn scale(value: &str) -> Result<u32, String> {
    match value.parse::<u32>() {
        Ok(0) => Err("the scale must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

impl Args {
    /// The options of this process, or the exit code after clap's help,
    /// version or refusal was printed: a refusal on one line of standard
    /// error, as every other error (`error: ... (see --help)`), exit code
    /// 2.
    pub(crate) fn parse_one_line() -> Result<Args, ExitCode> {
        Args::try_parse().map_err(|error| {
            if !error.use_stderr() {
                // --help, --version: as clap prints them.
                let _ = error.print();
                return ExitCode::SUCCESS;
            }
            // One line on standard error (a failed write leaves the exit
            // code to speak).
            let _ = writeln!(
                std::io::stderr().lock(),
                "{}",
                one_line(&error.render().to_string())
            );
            ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2))
        })
    }

    /// The file of `--save-at`, if any (for checking that it can be
    /// written before the run).
    pub(crate) fn save_file(&self) -> Option<PathBuf> {
        self.save_at.as_ref().map(|v| PathBuf::from(&v[1]))
    }

    /// The run the options ask for.
    ///
    /// # Errors
    ///
    /// [`HarnessError::Option`] when the tick of `--save-at` is not a
    /// whole number.
    pub(crate) fn config(&self, scenario: Scenario) -> Result<RunConfig, HarnessError> {
        let mut config = RunConfig::new(scenario);
        if let Some(ticks) = self.ticks {
            config.ticks = ticks;
        }
        if let Some(threads) = self.threads {
            config.threads = threads;
        }
        config.adaptive = !self.no_adaptive;
        if let Some(seed) = self.seed {
            config.seed = seed;
        }
        config.scale = self.scale;
        config.rollback = self.rollback;
        config.shuffle = self.shuffle_waves;
        if let Some(path) = &self.inputs {
            config.inputs = if path.as_os_str() == "-" {
                InputSource::Stdin
            } else {
                InputSource::File(path.clone())
            };
        }
        config.record_spans = self.trace.is_some();
        if let Some(values) = &self.save_at {
            let tick = values[0].parse::<u64>().map_err(|e| {
                HarnessError::Option(format!(
                    "--save-at {} {}: the tick is not a whole number ({e})",
                    values[0], values[1]
                ))
            })?;
            config.save_at = Some((tick, PathBuf::from(&values[1])));
        }
        config.load.clone_from(&self.load);
        Ok(config)
    }
}

/// clap's message on one line: its lines before the usage and the tip,
/// joined, control characters escaped.
fn one_line(rendered: &str) -> String {
    let parts: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect();
    format!("{} (see --help)", harness::printable(&parts.join(" ")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_clap_error_is_put_on_one_line() {
        let rendered = "error: the following required arguments were not provided:\n  \
                        --load <FILE>\n\nUsage: harness --load <FILE>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            super::one_line(rendered),
            "error: the following required arguments were not provided: --load <FILE> (see --help)"
        );
    }
}
