//! The tower-defense example's command line: its options, their bounds,
//! and the checks clap's derive cannot make (a thread count listed twice
//! in `--check-threads`). Shared with `tests/integration/tower_defense.rs`.

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};

/// The most ticks one run may ask for (about 46 simulated hours at 60 a
/// second; the game itself is over at tick 301).
pub(crate) const MAX_TICKS: u64 = 10_000_000;

/// The largest `--scale`.
pub(crate) const MAX_SCALE: f64 = 100.0;

/// A tower-defense game on ecs_runtime, run headless.
#[derive(Debug, Parser)]
#[command(name = "tower_defense")]
pub(crate) struct Args {
    /// Threads of the engine's pool (1 to 1024). Not with
    /// `--check-threads`, which names the thread counts itself.
    #[arg(
        long,
        default_value_t = 1,
        value_parser = clap::value_parser!(u16).range(1..=1024),
        conflicts_with = "check_threads"
    )]
    pub(crate) threads: u16,
    /// Ticks to run, 1 to 10,000,000 (60 a simulated second); the game is
    /// over at tick 301.
    #[arg(
        long,
        default_value_t = 360,
        value_parser = clap::value_parser!(u64).range(1..=MAX_TICKS)
    )]
    pub(crate) ticks: u64,
    /// Multiplies the game's counts, each rounded and at least 1: the
    /// enemies of each of the 5 waves (10,000 at 1), the lives (2,000),
    /// the towers placed at set-up (600) and the towers the gold may buy
    /// later (600). The map has 1,200 tower slots, so above 1 each tower
    /// count stays at 600 and only the enemies and lives grow. Above 0, at
    /// most 100.
    #[arg(long, default_value_t = 1.0, value_parser = parse_scale)]
    pub(crate) scale: f64,
    /// Seed of the random draws.
    #[arg(long, default_value_t = 2026)]
    pub(crate) seed: u64,
    /// Hands every tick to the pool, however cheap.
    #[arg(long)]
    pub(crate) no_adaptive: bool,
    /// Runs the game once on each of these thread counts (e.g. `1,2`, each
    /// 1 to 1024 and listed once) and exits 1 unless every run has the same
    /// checksum.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub(crate) check_threads: Vec<u16>,
    /// Prints what each system of the last tick cost, costliest first.
    #[arg(long)]
    pub(crate) systems: bool,
}

impl Args {
    /// Parses `args` (the program's name first), as `Args::try_parse_from`
    /// does, then refuses a thread count listed twice in
    /// `--check-threads`.
    ///
    /// # Errors
    ///
    /// clap's error for a malformed or out-of-bounds option (exit code 2
    /// through `Error::exit`), or for `--threads` with `--check-threads`;
    /// a [`ErrorKind::ValueValidation`] naming the repeated count.
    pub(crate) fn parse_from_checked<I, T>(args: I) -> Result<Args, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let args = Args::try_parse_from(args)?;
        for (i, threads) in args.check_threads.iter().enumerate() {
            if args.check_threads[..i].contains(threads) {
                return Err(Args::command().error(
                    ErrorKind::ValueValidation,
                    format!(
                        "--check-threads lists {threads} twice ({}); give each thread count once",
                        list(&args.check_threads)
                    ),
                ));
            }
        }
        Ok(args)
    }
}

/// `counts` as the option takes them: `1,2,1`.
fn list(counts: &[u16]) -> String {
    counts
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// A `--scale`: a number above 0 and at most [`MAX_SCALE`].
fn parse_scale(text: &str) -> Result<f64, String> {
    let scale: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if scale.is_finite() && scale > 0.0 && scale <= MAX_SCALE {
        Ok(scale)
    } else {
        Err(format!("{scale} is not above 0 and at most {MAX_SCALE}"))
    }
}
