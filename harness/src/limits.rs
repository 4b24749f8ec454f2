//! What a run may ask for: at most [`MAX_THREADS`] threads, and no more
//! memory than the machine has free, estimated before anything is
//! allocated ([`estimate_memory`]).

use std::mem::size_of;

use super::components::{
    Bounty, Collider, Damage, Enemy, EnemyGun, Faction, Health, Hits, Position, SineWave, Velocity,
};
use super::report::grouped;
use super::scenario::ScenarioKind;
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
/// - entities at the start of the world (for the movers, with one tick of
///   spawns), or for the shoot'em up the enemies of one wave (planned,
///   then spawned), each costing its components plus one dense-array slot
///   per component and its entity slot (the sparse pages and the growth
///   slack of the arrays come on top);
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
            (
                per_wave,
                enemy + planned,
                "enemies in a wave",
                SHMUP_SYSTEMS,
            )
        }
        ScenarioKind::Particles(p) => (
            u64::from(p.count) * scale,
            entity_bytes(size_of::<(Position, Velocity)>(), 3),
            "particles",
            PARTICLES_SYSTEMS,
        ),
        ScenarioKind::Movers(m) => (
            (u64::from(m.count) + u64::from(m.spawn_per_tick)) * scale,
            entity_bytes(size_of::<(Position, Velocity)>(), 2),
            "movers (the first ones and a tick of spawns)",
            MOVERS_SYSTEMS,
        ),
    };
    let world = u128::from(entities) * u128::from(each);
    let samples = u128::from(config.ticks) * u128::from(systems) * size_of::<f32>() as u128;
    let mut bytes = world + samples;
    let mut breakdown = format!(
        "{} {what} at {each} B; {systems} systems × {} ticks of samples",
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
        breakdown,
    }
}

/// Memory the machine can give this process now, bytes: `MemAvailable`
/// plus `SwapFree` from `/proc/meminfo` on Linux; `None` elsewhere or when
/// it cannot be read.
pub fn available_memory_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = meminfo.lines().find(|l| l.starts_with(name))?;
        let mut words = line[name.len()..].split_whitespace();
        let value: u64 = words.next()?.parse().ok()?;
        (words.next() == Some("kB")).then(|| value.saturating_mul(1024))
    };
    Some(field("MemAvailable:")?.saturating_add(field("SwapFree:").unwrap_or(0)))
}

/// Refuses a run that asks for too many threads, more entities than a
/// registry holds, or more memory than `available` bytes (when known).
pub(crate) fn check(config: &RunConfig, available: Option<u64>) -> Result<(), HarnessError> {
    if config.threads > MAX_THREADS {
        return Err(HarnessError::Option(format!(
            "--threads must be at most {MAX_THREADS}, got {}",
            config.threads
        )));
    }
    let estimate = estimate_memory(config);
    if let Some(available) = available
        && estimate.bytes > available
    {
        return Err(HarnessError::Memory {
            needed: estimate.bytes,
            available,
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
            assert!(check(&config, Some(1 << 30)).is_ok(), "{name}");
        }
        let mut config = RunConfig::new(Scenario::builtin("particles").unwrap());
        config.scale = 4000;
        let Err(HarnessError::Memory {
            needed, available, ..
        }) = check(&config, Some(1 << 30))
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
