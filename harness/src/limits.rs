//! What a run may ask for: at most [`MAX_THREADS`] threads, and no more
//! memory than this process may take ([`memory_budget`]: free memory, the
//! cgroup limit, `ulimit -v`), estimated over the whole run before
//! anything is allocated ([`estimate_memory`]) and watched while it runs
//! ([`Guard`]).

mod budget;
mod peak;

pub use budget::{MemoryBudget, available_memory_bytes, memory_budget};
pub(crate) use peak::largest_snapshot_bytes;

use std::mem::size_of;

use super::components::{
    Bounty, Collider, Damage, Enemy, EnemyGun, Faction, Health, Hits, Position, SineWave, Velocity,
};
use super::report::grouped;
use super::scenario::ScenarioKind;
use super::shmup::PLANNED_BYTES;
use super::trace::TraceSpan;
use super::{HarnessError, RunConfig};

/// The most threads a run may ask for: more would spend seconds starting
/// threads that have nothing to do (a game world has far fewer systems
/// and entity chunks than this).
pub const MAX_THREADS: usize = 1024;

/// Bytes a registry spends per component beyond the component itself:
/// the entity in the dense array and the sparse index (a lower bound).
const PER_COMPONENT: u64 = 8;
/// Bytes a registry spends per entity beyond its components: its
/// generation and free-list slot (a lower bound).
const PER_ENTITY: u64 = 8;
/// Bytes of trace text per recorded span (a JSON object of about this
/// size).
const TRACE_TEXT_PER_SPAN: u64 = 96;
/// Systems of each world, for the per-tick samples (checked against the
/// built worlds by the tests).
const SHMUP_SYSTEMS: u64 = 14;
const PARTICLES_SYSTEMS: u64 = 4;
const MOVERS_SYSTEMS: u64 = 2;

/// A lower bound on the memory a run needs, worked out from its
/// configuration alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// Bytes, at least (saturating at `u64::MAX`).
    pub bytes: u64,
    /// Entities alive at once, at least.
    pub entities: u64,
    /// Bytes an entity of the world costs, at least (its largest kind).
    pub per_entity: u64,
    /// What the figure is made of, for the message: "4,000,000,000
    /// particles at 48 B; 4 systems × 100 ticks of samples".
    pub breakdown: String,
}

/// Bytes an entity of these components costs in the registry, at least.
fn entity_bytes(component_bytes: usize, components: u64) -> u64 {
    component_bytes as u64 + components * PER_COMPONENT + PER_ENTITY
}

/// The memory `config` needs, at least.
///
/// The estimate is a lower bound, so a run it refuses would surely have
/// failed (after seconds and gigabytes, with an abort instead of a
/// message), and a run it lets through may still need more:
///
/// - the most entities alive at once over the run, where the rules tell:
///   for the particles, their count; for the movers, the first ones, a
///   tick of spawns and the spawned ones still inside the band at the end
///   (from their speeds and the distances to the band's edges); for the
///   shoot'em up, the
///   larger of one wave (planned, then spawned) and the enemies alive at
///   the end of the run (or of the last wave) if none is shot down, from
///   the waves' timing and the time the fastest takes to cross the
///   screen; each costing its components plus one dense-array slot per
///   component and its entity slot (the sparse pages and the growth slack
///   of the arrays come on top; missiles are not counted);
/// - the per-tick samples of the report: one `f32` per system per tick;
/// - with spans recorded (`--trace`), one span per system per tick, plus
///   its line of trace text.
///
/// # Examples
///
/// ```
/// use harness::{RunConfig, Scenario, estimate_memory};
///
/// let mut config = RunConfig::new(Scenario::builtin("particles").unwrap());
/// config.scale = 4000;
/// let estimate = estimate_memory(&config);
/// assert_eq!(estimate.entities, 4_000_000_000);
/// assert!(estimate.bytes > 4_000_000_000 * 16);
/// ```
pub fn estimate_memory(config: &RunConfig) -> MemoryEstimate {
    let scale = u64::from(config.scale);
    let step = config.scenario.step();
    let mut extra: u128 = 0;
    let mut extra_text = String::new();
    let (entities, each, what, systems) = match config.scenario.kind() {
        ScenarioKind::Shmup(s) => {
            let enemy = entity_bytes(
                size_of::<(
                    Position,
                    Velocity,
                    Enemy,
                    Faction,
                    Collider,
                    Health,
                    Damage,
                    Hits,
                    Bounty,
                )>(),
                9,
            );
            // Planned in the spawn queue: about a SineWave and an EnemyGun.
            let planned = (size_of::<SineWave>() + size_of::<EnemyGun>()) as u64;
            let per_wave = u64::from(s.enemies.per_wave) * scale;
            let alive = peak::enemies_alive(&s.enemies, &s.arena, step, per_wave, config.ticks);
            let queued = peak::enemies_planned(&s.enemies, step, per_wave, config.ticks);
            if alive > per_wave || queued > per_wave {
                extra = u128::from(queued) * PLANNED_BYTES as u128;
                extra_text = format!(", {} planned at {PLANNED_BYTES} B", grouped(queued));
                let what = "enemies alive at once (none shot down)".to_owned();
                (alive.max(1), enemy, what, SHMUP_SYSTEMS)
            } else {
                (
                    per_wave,
                    enemy + planned,
                    "enemies in a wave".to_owned(),
                    SHMUP_SYSTEMS,
                )
            }
        }
        ScenarioKind::Particles(p) => (
            u64::from(p.count) * scale,
            entity_bytes(size_of::<(Position, Velocity)>(), 3),
            "particles".to_owned(),
            PARTICLES_SYSTEMS,
        ),
        ScenarioKind::Movers(m) => {
            let spawns = u64::from(m.spawn_per_tick) * scale;
            let staying = peak::movers_alive(m, spawns, step, config.ticks);
            let what = if staying > 0 {
                format!(
                    "movers (the first ones, a tick of spawns and {} spawned later that are still in the band at the end)",
                    grouped(staying)
                )
            } else {
                "movers (the first ones and a tick of spawns)".to_owned()
            };
            (
                (u64::from(m.count) * scale)
                    .saturating_add(spawns)
                    .saturating_add(staying),
                entity_bytes(size_of::<(Position, Velocity)>(), 2),
                what,
                MOVERS_SYSTEMS,
            )
        }
    };
    let world = u128::from(entities) * u128::from(each);
    let samples = u128::from(config.ticks) * u128::from(systems) * size_of::<f32>() as u128;
    let mut bytes = world + samples + extra;
    let mut breakdown = format!(
        "{} {what} at {each} B{extra_text}; {systems} systems × {} ticks of samples",
        grouped(entities),
        grouped(config.ticks)
    );
    if config.record_spans {
        // Per tick: a span per system run, at most one apply span per
        // system (one per wave), and the tick's own span.
        let span = size_of::<TraceSpan>() as u64 + TRACE_TEXT_PER_SPAN;
        bytes += u128::from(config.ticks) * (2 * u128::from(systems) + 1) * u128::from(span);
        breakdown.push_str(&format!(", and of trace spans at {span} B"));
    }
    MemoryEstimate {
        bytes: u64::try_from(bytes).unwrap_or(u64::MAX),
        entities,
        per_entity: each,
        breakdown,
    }
}

/// Refuses a run that asks for too many threads, more entities than a
/// registry holds, or more memory than `budget` (when known).
pub(crate) fn check(config: &RunConfig, budget: Option<MemoryBudget>) -> Result<(), HarnessError> {
    if config.threads > MAX_THREADS {
        return Err(HarnessError::Option(format!(
            "--threads must be at most {MAX_THREADS}, got {}",
            config.threads
        )));
    }
    let estimate = estimate_memory(config);
    if let Some(budget) = budget
        && estimate.bytes > budget.bytes
    {
        return Err(HarnessError::Memory {
            needed: estimate.bytes,
            available: budget.bytes,
            limit: budget.limit,
            breakdown: estimate.breakdown,
        });
    }
    if estimate.entities >= u64::from(u32::MAX) {
        return Err(HarnessError::Option(format!(
            "{} entities is more than a registry holds; lower --scale",
            grouped(estimate.entities)
        )));
    }
    Ok(())
}

/// Watches a run's world between ticks: when it grows, and the next tick
/// at the same pace would need more than the memory left, the run stops
/// with [`HarnessError::OutOfMemory`] at that tick, before an allocation
/// fails and aborts the process.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    budget: Option<MemoryBudget>,
    /// The world's bytes per entity, at least ([`MemoryEstimate`]).
    per_entity: u64,
    /// Entities at the last check.
    last: u64,
}

/// How much more than the world's own bytes its arrays may take while one
/// of them grows: the old and the new buffer, at twice the old size, at
/// once.
const GROWTH_FACTOR: u64 = 3;

impl Guard {
    /// A guard for the world of `config` with `entities` alive, under
    /// `budget` (measured with the engine built and its threads started).
    pub(crate) fn new(config: &RunConfig, entities: u64, budget: Option<MemoryBudget>) -> Guard {
        Guard {
            budget: budget.map(|b| MemoryBudget {
                // What the world holds now is already taken from it.
                bytes: b
                    .bytes
                    .saturating_add(entities.saturating_mul(estimate_memory(config).per_entity)),
                ..b
            }),
            per_entity: estimate_memory(config).per_entity,
            last: entities,
        }
    }

    /// After tick `tick`, with `entities` alive.
    pub(crate) fn check(&mut self, tick: u64, entities: u64) -> Result<(), HarnessError> {
        let growth = entities.saturating_sub(self.last);
        self.last = entities;
        let Some(budget) = self.budget else {
            return Ok(());
        };
        if growth == 0 {
            return Ok(());
        }
        let next = entities.saturating_add(growth);
        let needed = next
            .saturating_mul(self.per_entity)
            .saturating_mul(GROWTH_FACTOR);
        if needed <= budget.bytes {
            return Ok(());
        }
        Err(HarnessError::OutOfMemory {
            tick,
            message: format!(
                "the world has {} entities and grew by {} in this tick; at that pace the next \
                 tick needs about {} ({} B an entity, {GROWTH_FACTOR} times for the arrays' growth), \
                 but {} is left ({}); lower --scale or --ticks",
                grouped(entities),
                grouped(growth),
                human_bytes(needed),
                self.per_entity,
                human_bytes(budget.bytes),
                budget.limit
            ),
        })
    }
}

/// `bytes` in the largest binary unit that keeps a figure of 1 or more:
/// `4.9 MiB`, `372.5 GiB`.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    #[test]
    fn bytes_read_in_binary_units() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(5 << 20), "5.0 MiB");
        assert_eq!(human_bytes(3 << 40), "3.0 TiB");
    }

    #[test]
    fn the_default_runs_fit_and_huge_ones_do_not() {
        for name in crate::BUILTIN_SCENARIOS {
            let config = RunConfig::new(Scenario::builtin(name).unwrap());
            let gib = Some(MemoryBudget {
                bytes: 1 << 30,
                limit: "free memory",
            });
            assert!(check(&config, gib).is_ok(), "{name}");
        }
        let mut config = RunConfig::new(Scenario::builtin("particles").unwrap());
        config.scale = 4000;
        let gib = Some(MemoryBudget {
            bytes: 1 << 30,
            limit: "free memory",
        });
        let Err(HarnessError::Memory {
            needed, available, ..
        }) = check(&config, gib)
        else {
            panic!("4 billion particles do not fit in 1 GiB");
        };
        assert_eq!(available, 1 << 30);
        assert!(needed >= 4_000_000_000 * 40, "{needed}");
        // Unknown memory: the registry's own limit still holds.
        assert!(check(&config, None).is_ok());
        config.scale = 5000;
        assert_eq!(
            check(&config, None).unwrap_err().to_string(),
            "5,000,000,000 entities is more than a registry holds; lower --scale"
        );
    }

    #[test]
    fn the_system_counts_match_the_built_worlds() {
        for (name, systems) in [
            ("shmup", SHMUP_SYSTEMS),
            ("particles", PARTICLES_SYSTEMS),
            ("movers", MOVERS_SYSTEMS),
        ] {
            let mut config = RunConfig::new(Scenario::builtin(name).unwrap());
            config.threads = 1;
            let simulation = crate::Simulation::new(&config).unwrap();
            assert_eq!(
                simulation.engine().schedule().len() as u64,
                systems,
                "{name}"
            );
            simulation.finish().unwrap();
        }
    }

    #[test]
    fn too_many_threads_are_refused() {
        let mut config = RunConfig::new(Scenario::builtin("movers").unwrap());
        config.threads = MAX_THREADS + 1;
        assert_eq!(
            check(&config, None).unwrap_err().to_string(),
            "--threads must be at most 1024, got 1025"
        );
    }
}
