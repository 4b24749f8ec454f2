//! The report of a run: throughput, entities, per-system cost, waves,
//! memory and the world checksum; as text ([`Display`](std::fmt::Display))
//! or JSON (serde).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Serialize, Serializer};

use ecs_runtime::Engine;
use ecs_runtime::command_buffer::CommandKind;

/// Everything a run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The scenario's name.
    pub scenario: String,
    /// The seed used.
    pub seed: u64,
    /// The entity count multiplier used.
    pub scale: u32,
    /// Threads of the engine's pool.
    pub threads: usize,
    /// Threads asked for (`--threads`, or one per core): more than
    /// [`threads`](Self::threads) when the scheduler's cap of
    /// [`THREADS_PER_CORE`](scheduler::THREADS_PER_CORE) per core cut it.
    pub threads_asked: usize,
    /// Ticks run (by this process: from the loaded tick with
    /// [`RunConfig::load`](crate::RunConfig::load)).
    pub ticks: u64,
    /// Wall-clock seconds for all ticks (setup and checksum excluded).
    pub wall_seconds: f64,
    /// `ticks / wall_seconds`.
    pub ticks_per_second: f64,
    /// Where a tick's time went, mean microseconds per tick.
    pub tick_time: TickTime,
    /// Entities alive, spawned and despawned.
    pub entities: EntityStats,
    /// Entities alive after each tick, summed over the ticks, per wall
    /// second: how many entity-ticks the engine advanced per second.
    pub entity_updates_per_second: f64,
    /// Each system, in registration order.
    pub systems: Vec<SystemStats>,
    /// Each wave of the schedule, in order.
    pub waves: Vec<WaveStats>,
    /// Peak resident memory of the process, bytes (`None`: unknown).
    pub peak_memory_bytes: Option<u64>,
    /// The world checksum after the last tick (see the harness docs);
    /// serialized as a `0x`-prefixed hexadecimal string.
    #[serde(serialize_with = "hex")]
    pub checksum: u64,
    /// Each player's final state (empty for scenarios without players).
    pub players: Vec<PlayerStats>,
    /// Input events applied by the steering system.
    pub inputs_applied: u64,
    /// The systems' commands over the whole run, as applied between waves
    /// (of the ticks' first runs only, with `--rollback`).
    pub commands: CommandStats,
    /// What `--rollback` did and cost (`None`: a plain run; left out of
    /// the JSON then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollback: Option<crate::RollbackStats>,
}

/// Where one tick's time went: mean microseconds per tick over the run
/// (the ticks' first runs only, with `--rollback`).
///
/// `mean_us = waves_us + applies_us + input_us + executor_us`, except
/// that `executor_us` is never below 0 (timer rounding).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TickTime {
    /// The whole `Engine::tick` call.
    pub mean_us: f64,
    /// The waves, each from its start to the end of its last system (the
    /// sum of the waves' `mean_us`).
    pub waves_us: f64,
    /// Applying the waves' command buffers (the sum of the waves'
    /// `apply_us`).
    pub applies_us: f64,
    /// Delivering the tick's input
    /// ([`Engine::last_input_time`](ecs_runtime::Engine::last_input_time)):
    /// mostly waiting for the input thread to finish the tick.
    pub input_us: f64,
    /// The rest: the executor's own time. Handing the tick to the pool and
    /// back (or deciding to keep it on the calling thread), starting each
    /// wave, ageing the event channels, and the one-shot systems and state
    /// transitions, if any.
    pub executor_us: f64,
}

/// The systems' commands over a run: how many the command buffers applied,
/// skipped (target not alive when the command ran) and ran as no-ops.
/// Part of the determinism check: the same inputs give the same counts on
/// any thread count.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CommandStats {
    /// Commands that changed the world.
    pub applied: u64,
    /// Commands skipped because their target was not alive.
    pub skipped: u64,
    /// Commands that found nothing to do (removing something absent).
    pub noops: u64,
    /// Skipped commands by kind (`"despawn"`, `"insert"`, ...), only the
    /// kinds with any.
    pub skipped_by_kind: BTreeMap<String, u64>,
}

fn hex<S: Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&format!("{value:#018x}"))
}

/// Entities alive after each tick, and the totals spawned and despawned.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EntityStats {
    /// Fewest alive after a tick.
    pub min: usize,
    /// Mean alive after a tick.
    pub mean: f64,
    /// Most alive after a tick.
    pub max: usize,
    /// Alive at the end.
    pub last: usize,
    /// Spawned since the start, the initial entities included.
    pub spawned: u64,
    /// Despawned since the start.
    pub despawned: u64,
}

/// The cost of one system per tick.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SystemStats {
    /// Its name.
    pub name: String,
    /// Its wave.
    pub wave: usize,
    /// Mean microseconds per tick.
    pub mean_us: f64,
    /// 99th percentile (nearest rank) of microseconds per tick.
    pub p99_us: f64,
}

/// One wave of the schedule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaveStats {
    /// Its position, from 0.
    pub index: usize,
    /// Number of systems that may run at the same time.
    pub width: usize,
    /// Their names, in registration order.
    pub systems: Vec<String>,
    /// Mean microseconds per tick from the wave's start to its last
    /// system's end, command buffers not included.
    pub mean_us: f64,
    /// Mean microseconds per tick applying its command buffers.
    pub apply_us: f64,
    /// Percent of the ticks in which its systems ran as tasks of their own
    /// on the pool, rather than in turn on one thread (a single system, a
    /// one-thread run, or a wave or tick too cheap to pay for the pool).
    pub parallel_percent: f64,
}

/// A player's final state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PlayerStats {
    /// The player number.
    pub player: u8,
    /// Points scored.
    pub score: u32,
    /// Lives left (0: out).
    pub lives: u8,
}

/// The 99th percentile of `samples` by nearest rank (0 when empty).
pub(crate) fn p99(samples: &[f32]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable_by(f32::total_cmp);
    let rank = (sorted.len() * 99).div_ceil(100);
    f64::from(sorted[rank.max(1) - 1])
}

/// Per-tick samples gathered during a run.
#[derive(Debug, Default)]
pub(crate) struct Samples {
    /// Microseconds per tick of each system, by registration index.
    systems: Vec<Vec<f32>>,
    /// The `Engine::tick` calls' wall time, summed.
    ticks_wall: Duration,
    /// Their input delivery's time, summed.
    input_wall: Duration,
    /// Summed wall and apply time of each wave, and the ticks it ran in
    /// parallel.
    waves: Vec<(Duration, Duration, u64)>,
    alive_min: usize,
    alive_max: usize,
    alive_sum: u128,
    ticks: u64,
    commands: CommandStats,
}

impl Samples {
    pub(crate) fn new(engine: &Engine, ticks: u64) -> Samples {
        let capacity = usize::try_from(ticks).unwrap_or(0).min(1 << 20);
        Samples {
            systems: (0..engine.schedule().len())
                .map(|_| Vec::with_capacity(capacity))
                .collect(),
            waves: vec![Default::default(); engine.schedule().wave_timings().len()],
            alive_min: usize::MAX,
            ..Samples::default()
        }
    }

    /// Records the last tick's timings (`wall`: its `Engine::tick` call)
    /// and the entities alive.
    pub(crate) fn record(&mut self, engine: &Engine, wall: Duration) {
        self.ticks_wall += wall;
        self.input_wall += engine.last_input_time();
        for (samples, (_, _, time)) in self
            .systems
            .iter_mut()
            .zip(engine.schedule().system_timings())
        {
            samples.push(time.as_secs_f32() * 1e6);
        }
        for (sum, timing) in self.waves.iter_mut().zip(engine.schedule().wave_timings()) {
            sum.0 += timing.wall;
            sum.1 += timing.apply;
            sum.2 += u64::from(timing.parallel);
        }
        let alive = engine.registry().len();
        self.alive_min = self.alive_min.min(alive);
        self.alive_max = self.alive_max.max(alive);
        self.alive_sum += alive as u128;
        self.ticks += 1;
        let report = engine.command_report();
        self.commands.applied += report.total_applied() as u64;
        self.commands.skipped += report.total_skipped() as u64;
        self.commands.noops += report.total_noops() as u64;
        for kind in CommandKind::ALL {
            let skipped = report.skipped(kind) as u64;
            if skipped > 0 {
                *self
                    .commands
                    .skipped_by_kind
                    .entry(kind.name().to_owned())
                    .or_default() += skipped;
            }
        }
    }

    /// Where the ticks' time went; `waves` as [`stats`](Self::stats) gives
    /// them.
    pub(crate) fn tick_time(&self, waves: &[WaveStats]) -> TickTime {
        let per_tick = |d: Duration| {
            if self.ticks == 0 {
                0.0
            } else {
                d.as_secs_f64() * 1e6 / self.ticks as f64
            }
        };
        let mean_us = per_tick(self.ticks_wall);
        let input_us = per_tick(self.input_wall);
        let waves_us: f64 = waves.iter().map(|w| w.mean_us).sum();
        let applies_us: f64 = waves.iter().map(|w| w.apply_us).sum();
        TickTime {
            mean_us,
            waves_us,
            applies_us,
            input_us,
            executor_us: (mean_us - waves_us - applies_us - input_us).max(0.0),
        }
    }

    /// The commands counted over the run.
    pub(crate) fn commands(&self) -> CommandStats {
        self.commands.clone()
    }

    /// The mean alive after a tick; `last` when no tick ran.
    pub(crate) fn alive_mean(&self, last: usize) -> f64 {
        if self.ticks == 0 {
            last as f64
        } else {
            self.alive_sum as f64 / self.ticks as f64
        }
    }

    pub(crate) fn alive_sum(&self) -> u128 {
        self.alive_sum
    }

    pub(crate) fn alive_range(&self, last: usize) -> (usize, usize) {
        if self.ticks == 0 {
            (last, last)
        } else {
            (self.alive_min, self.alive_max)
        }
    }

    /// The systems' and waves' statistics.
    pub(crate) fn stats(&self, engine: &Engine) -> (Vec<SystemStats>, Vec<WaveStats>) {
        let schedule = engine.schedule();
        let waves_of = schedule.waves();
        let mut wave_of = vec![0; schedule.len()];
        for (k, wave) in waves_of.iter().enumerate() {
            for (id, _) in wave {
                wave_of[id.index()] = k;
            }
        }
        let per_tick = |d: Duration| {
            if self.ticks == 0 {
                0.0
            } else {
                d.as_secs_f64() * 1e6 / self.ticks as f64
            }
        };
        let systems = schedule
            .system_timings()
            .zip(&self.systems)
            .map(|((id, name, _), samples)| SystemStats {
                name: name.to_owned(),
                wave: wave_of[id.index()],
                mean_us: mean(samples),
                p99_us: p99(samples),
            })
            .collect();
        let waves = waves_of
            .iter()
            .zip(&self.waves)
            .enumerate()
            .map(|(index, (wave, &(wall, apply, parallel)))| WaveStats {
                index,
                width: wave.len(),
                systems: wave.iter().map(|(_, name)| (*name).to_owned()).collect(),
                mean_us: per_tick(wall),
                apply_us: per_tick(apply),
                parallel_percent: if self.ticks == 0 {
                    0.0
                } else {
                    100.0 * parallel as f64 / self.ticks as f64
                },
            })
            .collect();
        (systems, waves)
    }
}

fn mean(samples: &[f32]) -> f64 {
    if samples.is_empty() {
        0.0
    } else {
        samples.iter().map(|&s| f64::from(s)).sum::<f64>() / samples.len() as f64
    }
}

/// `1234567` as `1,234,567`.
pub(crate) fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A rate with an SI suffix: `12.3 M`.
fn si(value: f64) -> String {
    match value {
        v if v >= 1e9 => format!("{:.2} G", v / 1e9),
        v if v >= 1e6 => format!("{:.2} M", v / 1e6),
        v if v >= 1e3 => format!("{:.2} k", v / 1e3),
        v => format!("{v:.1} "),
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &self.entities;
        writeln!(
            f,
            "scenario `{}`: seed {}, scale {}, {} thread{}{}",
            self.scenario,
            self.seed,
            self.scale,
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            if self.threads_asked > self.threads {
                format!(
                    " ({} asked: at most {} per core)",
                    self.threads_asked,
                    scheduler::THREADS_PER_CORE
                )
            } else {
                String::new()
            }
        )?;
        writeln!(
            f,
            "ticks             {} in {:.3} s = {} ticks/s",
            grouped(self.ticks),
            self.wall_seconds,
            grouped(self.ticks_per_second.round() as u64)
        )?;
        let t = &self.tick_time;
        writeln!(
            f,
            "tick time         mean {:.1} µs: waves {:.1}, applies {:.1}, input {:.1}, executor {:.1}",
            t.mean_us, t.waves_us, t.applies_us, t.input_us, t.executor_us
        )?;
        if let Some(r) = &self.rollback {
            writeln!(
                f,
                "rollback          every {} ticks: {} restores, {} ticks run again; save {:.1} us, restore {:.1} us",
                r.depth,
                grouped(r.restores),
                grouped(r.rerun_ticks),
                r.save_seconds * 1e6,
                r.restore_seconds * 1e6
            )?;
        }
        writeln!(
            f,
            "entities alive    min {}, mean {}.{}, max {}, last {}",
            grouped(e.min as u64),
            grouped(e.mean.trunc() as u64),
            ((e.mean.fract() * 10.0) as u64).min(9),
            grouped(e.max as u64),
            grouped(e.last as u64)
        )?;
        writeln!(
            f,
            "spawned/despawned {} / {} (difference {})",
            grouped(e.spawned),
            grouped(e.despawned),
            grouped(e.spawned.saturating_sub(e.despawned))
        )?;
        writeln!(
            f,
            "entity updates    {}updates/s",
            si(self.entity_updates_per_second)
        )?;
        match self.peak_memory_bytes {
            Some(bytes) => writeln!(
                f,
                "peak memory       {:.1} MiB (resident)",
                bytes as f64 / (1024.0 * 1024.0)
            )?,
            None => writeln!(f, "peak memory       unknown")?,
        }
        let c = &self.commands;
        write!(
            f,
            "commands          {} applied, {} skipped, {} no-ops",
            grouped(c.applied),
            grouped(c.skipped),
            grouped(c.noops)
        )?;
        if !c.skipped_by_kind.is_empty() {
            let kinds: Vec<String> = c
                .skipped_by_kind
                .iter()
                .map(|(kind, n)| format!("{kind} {}", grouped(*n)))
                .collect();
            write!(f, " (skipped: {})", kinds.join(", "))?;
        }
        writeln!(f)?;
        writeln!(f, "checksum          {:#018x}", self.checksum)?;
        if !self.players.is_empty() {
            writeln!(f, "inputs applied    {}", grouped(self.inputs_applied))?;
            for p in &self.players {
                writeln!(
                    f,
                    "player {}          score {}, lives {}",
                    p.player,
                    grouped(u64::from(p.score)),
                    p.lives
                )?;
            }
        }
        writeln!(f)?;
        writeln!(
            f,
            "{:<14} {:>5} {:>10} {:>10}",
            "system", "wave", "mean µs", "p99 µs"
        )?;
        for s in &self.systems {
            writeln!(
                f,
                "{:<14} {:>5} {:>10.1} {:>10.1}",
                s.name, s.wave, s.mean_us, s.p99_us
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "{:<5} {:>5} {:>10} {:>10} {:>11}  systems",
            "wave", "width", "mean µs", "apply µs", "parallel %"
        )?;
        for w in &self.waves {
            writeln!(
                f,
                "{:<5} {:>5} {:>10.1} {:>10.1} {:>11.1}  {}",
                w.index,
                w.width,
                w.mean_us,
                w.apply_us,
                w.parallel_percent,
                w.systems.join(", ")
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p99_is_the_nearest_rank() {
        let samples: Vec<f32> = (1..=200).map(|n| n as f32).collect();
        assert_eq!(p99(&samples), 198.0);
        assert_eq!(p99(&[5.0]), 5.0);
        assert_eq!(p99(&[3.0, 1.0, 2.0]), 3.0);
        assert_eq!(p99(&[]), 0.0);
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(si(12_345_678.0), "12.35 M");
        assert_eq!(si(950.0), "950.0 ");
    }
}
