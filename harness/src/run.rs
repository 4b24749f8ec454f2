//! Running a scenario: [`RunConfig`], [`run`] and [`check_determinism`].

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::report::{EntityStats, Report, Samples};
use super::rollback::Rollback;
use super::trace::{SpanLog, TraceSpan};
use super::{HarnessError, InputSource, Scenario, Simulation, components, peak_resident_bytes};
use ecs_runtime::divergence::Divergence;

/// What to run, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// The world.
    pub scenario: Scenario,
    /// The tick to reach: ticks to run from the start, or from the
    /// snapshot of [`load`](Self::load).
    pub ticks: u64,
    /// Threads of the engine's pool (at least 1).
    pub threads: usize,
    /// Let the engine run ticks and waves too cheap to pay for its pool
    /// on one thread (the default; see `Schedule::run`); `false`
    /// (`--no-adaptive`) hands every tick to the pool.
    pub adaptive: bool,
    /// The seed of every random draw.
    pub seed: u64,
    /// Multiplies the scenario's entity counts (at least 1).
    pub scale: u32,
    /// The players' commands.
    pub inputs: InputSource,
    /// Record the engine's `tracing` spans (a span per tick, per system run
    /// and per wave's apply), for [`chrome_trace`](super::chrome_trace).
    pub record_spans: bool,
    /// A pause the input thread takes before each command, to stand for a
    /// slow producer; the world does not change with it, only the wall
    /// time (default zero).
    pub input_pause: Duration,
    /// Save the world after this many ticks (0: before the first) to
    /// this file (`--save-at TICK FILE`), replaced whole or not at all:
    /// JSON when its name ends in `.json`, postcard otherwise.
    pub save_at: Option<(u64, PathBuf)>,
    /// Start from this snapshot (`--load FILE`), written by
    /// [`save_at`](Self::save_at) for the same rules, seed and scale,
    /// instead of the scenario's initial world; the run goes on from the
    /// saved tick to [`ticks`](Self::ticks).
    pub load: Option<PathBuf>,
    /// `--rollback N`: save the whole engine in memory before every
    /// tick, and every `N` ticks restore the state of `N` ticks ago and
    /// run those ticks again (with the same input); the world must end
    /// as the plain run's. `None`: a plain run.
    pub rollback: Option<u32>,
    /// `--shuffle-waves SEED`: each wave's systems run one after another
    /// in an order drawn from `SEED`
    /// ([`Schedule::set_shuffle`](ecs_runtime::scheduler::Schedule::set_shuffle));
    /// `None`: registration order, or in parallel.
    pub shuffle: Option<u64>,
}

impl RunConfig {
    /// The scenario's own ticks and seed, scale 1, one thread per core,
    /// the built-in input script, no spans.
    pub fn new(scenario: Scenario) -> RunConfig {
        RunConfig {
            ticks: scenario.ticks,
            seed: scenario.seed,
            scenario,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            adaptive: true,
            scale: 1,
            inputs: InputSource::BuiltIn,
            record_spans: false,
            input_pause: Duration::ZERO,
            save_at: None,
            load: None,
            rollback: None,
            shuffle: None,
        }
    }
}

/// A finished run: the report, and what the trace and DOT files are made
/// of.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The measurements.
    pub report: Report,
    /// The spans of every tick, system run and apply, in the order they
    /// ended (empty unless [`RunConfig::record_spans`]).
    pub spans: Vec<TraceSpan>,
    /// The schedule as Graphviz DOT.
    pub dot: String,
}

/// Builds the scenario (or loads [`RunConfig::load`]), runs to tick
/// `config.ticks` and reports; `progress(n)` is called after tick `n`
/// (from 1, or from the loaded tick + 1). Saves the world on the way when
/// [`RunConfig::save_at`] asks.
///
/// # Errors
///
/// What [`Simulation::new`], [`Simulation::tick`],
/// [`Simulation::save`] and [`Simulation::finish`] return;
/// [`HarnessError::Option`] when the tick of `save_at` is not between the
/// start and `config.ticks`.
///
/// # Examples
///
/// ```
/// use harness::{RunConfig, Scenario, run};
///
/// let mut config = RunConfig::new(Scenario::builtin("shmup").unwrap());
/// config.ticks = 60;
/// config.threads = 2;
/// let outcome = run(&config, |_| {}).unwrap();
/// assert_eq!(outcome.report.ticks, 60);
/// assert_eq!(outcome.report.systems.len(), 14);
/// ```
pub fn run(config: &RunConfig, progress: impl FnMut(u64)) -> Result<RunOutcome, HarnessError> {
    if !config.record_spans {
        return run_ticks(config, progress);
    }
    let (log, dispatch) = SpanLog::dispatch();
    let mut outcome = tracing::dispatcher::with_default(&dispatch, || run_ticks(config, progress))?;
    outcome.spans = log.take();
    Ok(outcome)
}

fn run_ticks(
    config: &RunConfig,
    mut progress: impl FnMut(u64),
) -> Result<RunOutcome, HarnessError> {
    let mut simulation = Simulation::new(config)?;
    let start = simulation.engine().ticks();
    let save_at = match &config.save_at {
        Some((at, _)) if !(start..=config.ticks).contains(at) => {
            return Err(HarnessError::Option(format!(
                "--save-at {at} is outside the run, which goes from tick {start} to tick {}",
                config.ticks
            )));
        }
        Some((at, path)) => Some((*at, path)),
        None => None,
    };
    let ticks = config.ticks - start;
    let mut samples = Samples::new(simulation.engine(), ticks);
    let mut rollback = config
        .rollback
        .map(|depth| Rollback::new(simulation.engine_mut(), depth));
    let started = Instant::now();
    for n in start..=config.ticks {
        if let Some((_, path)) = save_at.filter(|&(at, _)| at == n) {
            simulation.save(path)?;
        }
        if n == config.ticks {
            break;
        }
        if let Some(rollback) = &mut rollback {
            rollback.save(simulation.engine())?;
        }
        let tick_started = Instant::now();
        simulation.tick()?;
        samples.record(simulation.engine(), tick_started.elapsed());
        progress(n + 1);
        if let Some(rollback) = &mut rollback
            && rollback.after_tick(simulation.engine_mut())?
        {
            while simulation.engine().ticks() <= n {
                rollback.save(simulation.engine())?;
                simulation.tick()?;
                rollback.rerun();
            }
        }
    }
    let wall = started.elapsed();
    let mut report = report(config, ticks, &simulation, &samples, wall);
    report.rollback = rollback.map(|r| r.stats());
    let outcome = RunOutcome {
        report,
        spans: Vec::new(),
        dot: simulation.engine().schedule().to_dot(),
    };
    simulation.finish()?;
    Ok(outcome)
}

fn report(
    config: &RunConfig,
    ticks: u64,
    simulation: &Simulation,
    samples: &Samples,
    wall: Duration,
) -> Report {
    let engine = simulation.engine();
    let seconds = wall.as_secs_f64().max(1e-9);
    let last = engine.registry().len();
    let (min, max) = samples.alive_range(last);
    let (systems, waves) = samples.stats(engine);
    let tick_time = samples.tick_time(&waves);
    Report {
        scenario: config.scenario.name.clone(),
        seed: config.seed,
        scale: config.scale,
        threads: engine.threads(),
        threads_asked: config.threads,
        ticks,
        wall_seconds: wall.as_secs_f64(),
        ticks_per_second: ticks as f64 / seconds,
        tick_time,
        entities: EntityStats {
            min,
            mean: samples.alive_mean(last),
            max,
            last,
            spawned: simulation.spawned(),
            despawned: simulation.despawned(),
        },
        entity_updates_per_second: samples.alive_sum() as f64 / seconds,
        systems,
        waves,
        peak_memory_bytes: peak_resident_bytes(),
        checksum: simulation.checksum(),
        players: simulation.players(),
        inputs_applied: simulation.inputs_applied(),
        commands: samples.commands(),
        rollback: None,
    }
}

/// The two runs of a determinism check.
#[derive(Debug, Clone)]
pub struct DeterminismCheck {
    /// The run on one thread.
    pub single: RunOutcome,
    /// The run on the requested threads.
    pub multi: RunOutcome,
    /// When the check failed: where the two runs first differ ([`diagnose`]);
    /// `None` when it passed, or when the worlds stayed equal tick by tick
    /// (then only the command counts differ).
    pub divergence: Option<Divergence>,
}

impl DeterminismCheck {
    /// `true` when both worlds have the same checksum and both runs the
    /// same command counts (applied, skipped, no-ops, by kind).
    pub fn passed(&self) -> bool {
        self.single.report.checksum == self.multi.report.checksum
            && self.single.report.commands == self.multi.report.commands
    }
}

/// Runs `config` on one thread (in registration order: never shuffled),
/// then on `config.threads` (shuffled when [`RunConfig::shuffle`] says so), for comparing
/// the checksums and command counts ([`DeterminismCheck::passed`]). `progress(n)` counts the
/// ticks of both runs (1 to 2 × ticks).
///
/// # Errors
///
/// [`HarnessError::Option`] for a script on standard input, which can be
/// read only once; as [`run`].
pub fn check_determinism(
    config: &RunConfig,
    mut progress: impl FnMut(u64),
) -> Result<DeterminismCheck, HarnessError> {
    refuse_stdin(config)?;
    let mut single_config = config.clone();
    single_config.threads = 1;
    single_config.shuffle = None;
    let single = run(&single_config, &mut progress)?;
    let multi = run(config, |n| progress(config.ticks + n))?;
    let mut check = DeterminismCheck {
        single,
        multi,
        divergence: None,
    };
    if !check.passed() {
        check.divergence = diagnose(&single_config, config)?;
    }
    Ok(check)
}

/// A determinism check runs a scenario more than once, but standard input
/// can be read once.
fn refuse_stdin(config: &RunConfig) -> Result<(), HarnessError> {
    if config.inputs == InputSource::Stdin {
        return Err(HarnessError::Option(
            "--check-determinism runs twice, but standard input can be read once: \
             save the script to a file for --inputs"
                .into(),
        ));
    }
    Ok(())
}

/// Runs `a` and `b` side by side, tick by tick, and returns where their
/// worlds first differ ([`ecs_runtime::divergence`]: the live entities,
/// then each component type's pool in the checksum's order, then the
/// spawn queue, the doomed list, the input events and the world seed):
/// the tick, the component, resource or event channel, the first entity,
/// and the systems that could have changed it. `None` when they stay equal for all of `a`'s ticks.
///
/// # Errors
///
/// [`HarnessError::Option`] for a script on standard input; as [`run`],
/// for either world.
///
/// # Examples
///
/// ```
/// use harness::{RunConfig, Scenario, diagnose};
///
/// let mut a = RunConfig::new(Scenario::builtin("shmup").unwrap());
/// a.ticks = 30;
/// let mut b = a.clone();
/// b.threads = 4;
/// assert_eq!(diagnose(&a, &b).unwrap(), None);
/// ```
pub fn diagnose(a: &RunConfig, b: &RunConfig) -> Result<Option<Divergence>, HarnessError> {
    refuse_stdin(a)?;
    refuse_stdin(b)?;
    let digests = components::digests();
    let mut first = Simulation::new(a)?;
    let mut second = Simulation::new(b)?;
    let mut found = digests.diverged(first.engine(), second.engine());
    while found.is_none() && first.engine().ticks() < a.ticks {
        first.tick()?;
        second.tick()?;
        found = digests.diverged(first.engine(), second.engine());
    }
    first.finish()?;
    second.finish()?;
    Ok(found)
}
