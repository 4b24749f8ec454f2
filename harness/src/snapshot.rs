//! Saving a running world and resuming it (`--save-at TICK FILE`,
//! `--load FILE`), through [`ecs_snapshot`].
//!
//! A snapshot holds every component type of the harness's worlds, the
//! entity allocator's state, and what the scenarios keep outside
//! components: the shoot'em up's spawn queue (planned enemies and the
//! number of waves planned), the run's identity with the number of
//! ticks run, and each system's command-buffer reserve, which decides the
//! handles of its next spawns ([`RunInfo`]). Everything else a tick depends on is rebuilt
//! from the scenario, or drawn from SplitMix64 seeded by the seed, the
//! tick and the entity (see the [crate docs](crate)), so a world resumed
//! after N ticks and run to M is the world of an uninterrupted run to M.
//! The input thread of a resumed run skips the events of the ticks
//! already run. The systems' counters (spawned, despawned, fired, inputs
//! applied) start again at 0 in a resumed run: they count what this
//! process did.
//!
//! A file whose name ends in `.json` is written and read as JSON; any
//! other as postcard.

use std::path::Path;

use command_buffer::ReserveState;
use ecs_engine::{Entity, Registry};
use ecs_runtime::Engine;
use ecs_snapshot::{Format, Snapshots};
use serde::{Deserialize, Serialize};

use crate::HarnessError;
use crate::components::{
    Bounty, Collider, Controls, Damage, Enemy, EnemyGun, Faction, Health, Hits, Lives, Missile,
    Particle, Player, Position, Score, Shield, SineWave, Velocity, Weapon,
};
use crate::shmup::SpawnQueue;

/// Which run a snapshot belongs to, and how far it got: a resource of
/// every snapshot the harness writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunInfo {
    /// The scenario's name.
    pub(crate) scenario: String,
    /// The seed of every random draw.
    pub(crate) seed: u64,
    /// The scale.
    pub(crate) scale: u32,
    /// Ticks run before the save: the resumed run's next tick.
    pub(crate) ticks: u64,
    /// Each system's command-buffer reserve: the handles its next spawns
    /// get.
    pub(crate) reserves: Vec<SavedReserve>,
}

/// One system's [`ReserveState`], in serde form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SavedReserve {
    /// The system's name.
    system: String,
    /// The reserved handles ([`Entity::to_bits`]), oldest first.
    handles: Vec<u64>,
    /// Spawns of its last batch.
    last_spawns: u64,
}

/// The engine's command reserves, to save.
pub(crate) fn reserves(engine: &Engine) -> Vec<SavedReserve> {
    engine
        .schedule()
        .command_reserves()
        .into_iter()
        .map(|(system, state)| SavedReserve {
            system,
            handles: state.handles.iter().map(|e| e.to_bits()).collect(),
            last_spawns: state.last_spawns as u64,
        })
        .collect()
}

/// The types a harness snapshot holds.
pub(crate) fn snapshots() -> Snapshots {
    let mut s = Snapshots::new();
    let registered = (|| -> Result<(), ecs_snapshot::SnapshotError> {
        s.register::<Position>("Position")?
            .register::<Velocity>("Velocity")?
            .register::<Player>("Player")?
            .register::<Controls>("Controls")?
            .register::<Weapon>("Weapon")?
            .register::<EnemyGun>("EnemyGun")?
            .register::<Enemy>("Enemy")?
            .register::<SineWave>("SineWave")?
            .register::<Missile>("Missile")?
            .register::<Faction>("Faction")?
            .register::<Collider>("Collider")?
            .register::<Health>("Health")?
            .register::<Damage>("Damage")?
            .register::<Hits>("Hits")?
            .register::<Shield>("Shield")?
            .register::<Lives>("Lives")?
            .register::<Score>("Score")?
            .register::<Bounty>("Bounty")?
            .register::<Particle>("Particle")?
            .register_resource::<SpawnQueue>("SpawnQueue")?
            .register_resource::<RunInfo>("Run")?;
        Ok(())
    })();
    registered.expect("the harness registers each type once, under distinct names");
    s
}

/// The format a snapshot file's name asks for: JSON for `.json`, postcard
/// otherwise.
pub(crate) fn format_of(path: &Path) -> Format {
    match path.extension() {
        Some(ext) if ext.eq_ignore_ascii_case("json") => Format::Json,
        _ => Format::Postcard,
    }
}

fn snapshot_error(path: &Path, message: impl std::fmt::Display) -> HarnessError {
    HarnessError::Snapshot {
        path: path.to_owned(),
        message: message.to_string(),
    }
}

/// Saves `engine`'s world (with `info` as its run resource) to `path`.
pub(crate) fn save(engine: &mut Engine, info: RunInfo, path: &Path) -> Result<(), HarnessError> {
    let registry = engine.registry_mut();
    registry.insert_resource(info);
    let bytes = snapshots()
        .save(registry, format_of(path))
        .map_err(|e| snapshot_error(path, e));
    registry.remove_resource::<RunInfo>();
    std::fs::write(path, bytes?).map_err(|source| HarnessError::WriteFile {
        what: "snapshot",
        path: path.to_owned(),
        source: source.into(),
    })
}

/// Reads the snapshot at `path`.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, HarnessError> {
    std::fs::read(path).map_err(|source| HarnessError::ReadFile {
        what: "snapshot",
        path: path.to_owned(),
        source: source.into(),
    })
}

/// Loads `bytes` (read from `path`) into `engine`, checks that it is a
/// snapshot of `expected` (scenario, seed, scale) taken at most at tick
/// `last`, restores the command reserves and the tick count, and returns
/// the ticks it had run. On an error in the snapshot's world the registry
/// is as before.
pub(crate) fn load(
    engine: &mut Engine,
    bytes: &[u8],
    path: &Path,
    expected: &RunInfo,
    last: u64,
) -> Result<u64, HarnessError> {
    // Decoded into a scratch registry first: the run's identity is checked
    // before the world changes.
    let snapshots = snapshots();
    let format = format_of(path);
    let mut scratch = Registry::new();
    snapshots
        .load(&mut scratch, bytes, format)
        .map_err(|e| snapshot_error(path, e))?;
    let info = scratch
        .remove_resource::<RunInfo>()
        .ok_or_else(|| snapshot_error(path, "no `Run` resource: not a harness snapshot"))?;
    let (found, wanted) = (
        (&info.scenario, info.seed, info.scale),
        (&expected.scenario, expected.seed, expected.scale),
    );
    if found != wanted {
        return Err(snapshot_error(
            path,
            format!(
                "taken from scenario `{}` with seed {} and scale {}, but this run is scenario `{}` with seed {} and scale {}",
                info.scenario,
                info.seed,
                info.scale,
                expected.scenario,
                expected.seed,
                expected.scale
            ),
        ));
    }
    if info.ticks > last {
        return Err(snapshot_error(
            path,
            format!(
                "taken after tick {}, past the {last} ticks to run (--ticks is the tick to reach)",
                info.ticks
            ),
        ));
    }
    let mut reserves = Vec::with_capacity(info.reserves.len());
    for saved in &info.reserves {
        let handles = saved
            .handles
            .iter()
            .map(|&bits| {
                Entity::from_bits(bits).ok_or_else(|| {
                    snapshot_error(
                        path,
                        format!(
                            "reserve of system `{}`: {bits:#x} is not an entity handle",
                            saved.system
                        ),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let last_spawns = usize::try_from(saved.last_spawns).unwrap_or(usize::MAX);
        reserves.push((
            saved.system.clone(),
            ReserveState {
                handles,
                last_spawns,
            },
        ));
    }
    let registry = engine.registry_mut();
    snapshots
        .load(registry, bytes, format)
        .map_err(|e| snapshot_error(path, e))?;
    registry.remove_resource::<RunInfo>();
    engine
        .restore_command_reserves(reserves)
        .map_err(|e| snapshot_error(path, e))?;
    engine.set_ticks(info.ticks);
    Ok(info.ticks)
}
