//! Saving a running world and resuming it (`--save-at TICK FILE`,
//! `--load FILE`), through [`ecs_snapshot`].
//!
//! A snapshot holds every component type of the harness's worlds, the
//! entity allocator's state, and what the scenarios keep outside
//! components: the shoot'em up's spawn queue (planned enemies and the
//! number of waves planned), the run's identity with the number of
//! ticks run, and each system's command-buffer reserve, which decides the
//! handles of its next spawns ([`RunInfo`]). Everything else a tick depends on is rebuilt
//! from the scenario, or drawn from the runtime's `Random`, keyed by the
//! seed, the system, the tick and the entity (see the [crate
//! docs](crate)), so a world resumed
//! after N ticks and run to M is the world of an uninterrupted run to M.
//! The input thread of a resumed run skips the events of the ticks
//! already run. The systems' counters (spawned, despawned, fired, inputs
//! applied) start again at 0 in a resumed run: they count what this
//! process did.
//!
//! A file whose name ends in `.json` is written and read as JSON; any
//! other as postcard. A save replaces the file whole or not at all
//! ([`Output`]). A load reads at most what a snapshot of the run can hold,
//! and refuses, before the engine changes, a snapshot that is damaged
//! (the format's checksums), of another run (its identity: a hash of the
//! rules, the seed and the scale, the differing field named), or whose
//! fields the rules cannot produce ([`check`]); it gives every command
//! buffer a reserve of the loaded allocator, so none keeps a handle of the
//! engine's first one.

use std::path::Path;

use command_buffer::ReserveState;
use ecs_engine::{Entity, Registry};
use ecs_runtime::Engine;
use ecs_snapshot::{FORMAT_VERSION, Format, Snapshots};
use serde::{Deserialize, Serialize};

use crate::checksum::Fnv1a;
use crate::files::{Output, read_input};
use crate::{HarnessError, RunConfig};

mod check;
use crate::components::{
    Bounty, Collider, Controls, Damage, Enemy, EnemyGun, Faction, Health, Hits, Lives, Missile,
    Particle, Player, Position, Score, Shield, SineWave, Velocity, Weapon,
};
use crate::shmup::SpawnQueue;

/// Which run a snapshot belongs to, and how far it got: a resource of
/// every snapshot the harness writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunInfo {
    /// The scenario's name (shown; the identity is `identity`).
    pub(crate) scenario: String,
    /// FNV-1a of the rules, the seed and the scale ([`identity`]).
    pub(crate) identity: u64,
    /// The scenario's rules ([`Scenario::rules`](crate::Scenario::rules)),
    /// to name the field that differs when `identity` does.
    pub(crate) rules: Vec<(String, String)>,
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

/// The hash that says which run a snapshot belongs to: FNV-1a over the
/// rules (each field and value), the seed and the scale.
pub(crate) fn identity(rules: &[(String, String)], seed: u64, scale: u32) -> u64 {
    let mut h = Fnv1a::default();
    for (field, value) in rules {
        h.bytes(field.as_bytes());
        h.u8(b'=');
        h.bytes(value.as_bytes());
        h.u8(b';');
    }
    h.u64(seed);
    h.u32(scale);
    h.finish()
}

/// One system's [`ReserveState`], in serde form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SavedReserve {
    /// The system's name.
    pub(crate) system: String,
    /// The reserved handles ([`Entity::to_bits`]), oldest first.
    pub(crate) handles: Vec<u64>,
    /// Spawns of its last batch.
    pub(crate) last_spawns: u64,
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

/// Saves `engine`'s world (with `info` as its run resource) to `path`,
/// whole or not at all (see [`Output`]): the file that was there stays
/// as it was on any error.
pub(crate) fn save(engine: &mut Engine, info: RunInfo, path: &Path) -> Result<(), HarnessError> {
    // The temporary file first: an interrupted encoding leaves nothing.
    let mut output = Output::create(path, "snapshot")?;
    let registry = engine.registry_mut();
    registry.insert_resource(info);
    let bytes = snapshots()
        .save(registry, format_of(path))
        .map_err(|e| snapshot_error(path, e));
    registry.remove_resource::<RunInfo>();
    output.write_all(&bytes?)?;
    output.commit()
}

/// Reads the snapshot at `path` for `config`: at most
/// [`largest_snapshot_bytes`](crate::limits::largest_snapshot_bytes)
/// (refused by its size before it is read, or one byte past the limit for
/// a device or a pipe), and refused at once when its first bytes are not
/// a snapshot's of this format version (`/dev/zero`, `/dev/urandom`).
pub(crate) fn read(path: &Path, config: &RunConfig) -> Result<Vec<u8>, HarnessError> {
    let largest = crate::limits::largest_snapshot_bytes(config);
    // Never more than half the memory left: the bytes are decoded twice.
    let budget = crate::limits::memory_budget();
    let limit = budget.map_or(largest, |b| largest.min(b.bytes / 2));
    let too_large = |size: Option<u64>| {
        let size = size.map_or_else(|| "more than that".into(), |s| format!("{s} bytes"));
        let why = match budget {
            Some(b) if limit < largest => format!("half of what {} leaves", b.limit),
            _ => format!(
                "the largest world this run can reach by tick {}",
                config.ticks
            ),
        };
        format!("a snapshot of this run is at most {limit} bytes ({why}), but this is {size}")
    };
    let format = format_of(path);
    let start = move |bytes: &[u8]| start_of_snapshot(bytes, format);
    read_input(
        path,
        "snapshot",
        crate::PIPE_WAIT,
        limit,
        &too_large,
        Some(&start),
    )
}

/// Refuses bytes that cannot start a snapshot of this version: JSON opens
/// with `{`, postcard with the format version.
fn start_of_snapshot(bytes: &[u8], format: Format) -> Result<(), String> {
    match format {
        Format::Json => {
            let text = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
            match text.iter().find(|b| !b.is_ascii_whitespace()) {
                Some(b'{') | None => Ok(()),
                Some(_) => Err("not a JSON snapshot: it does not start with `{`".into()),
            }
        }
        Format::Postcard => match bytes.first() {
            Some(&b) if u32::from(b) == FORMAT_VERSION => Ok(()),
            Some(&b) => Err(format!(
                "not a snapshot of format version {FORMAT_VERSION}: it starts with byte {b:#04x}{}",
                if b == b'{' {
                    " (a JSON snapshot? name it *.json)"
                } else {
                    ""
                }
            )),
            None => Err("it is empty".into()),
        },
    }
}

/// Loads `bytes` (read from `path`) into `engine` (built for `config`,
/// before its first tick), after checking that it is a snapshot of this
/// run (rules, seed and scale), taken at most at tick `config.ticks`, with
/// every field within what the rules allow ([`check`]); restores every
/// command reserve and the tick count, and returns the ticks it had run.
/// On any error the engine is as before.
pub(crate) fn load(
    engine: &mut Engine,
    bytes: &[u8],
    path: &Path,
    expected: &RunInfo,
    config: &RunConfig,
) -> Result<u64, HarnessError> {
    // Decoded into a scratch registry first: the run's identity and the
    // world's fields are checked before the engine changes.
    let snapshots = snapshots();
    let format = format_of(path);
    let mut scratch = Registry::new();
    snapshots
        .load(&mut scratch, bytes, format)
        .map_err(|e| snapshot_error(path, e))?;
    let info = scratch
        .remove_resource::<RunInfo>()
        .ok_or_else(|| snapshot_error(path, "no `Run` resource: not a harness snapshot"))?;
    check::identity(&info, expected, &config.scenario.name).map_err(|m| snapshot_error(path, m))?;
    if info.ticks > config.ticks {
        return Err(snapshot_error(
            path,
            format!(
                "taken after tick {}, past the {} ticks to run (--ticks is the tick to reach)",
                info.ticks, config.ticks
            ),
        ));
    }
    let reserves = check::reserves(engine, &scratch, &info).map_err(|m| snapshot_error(path, m))?;
    check::world(engine, &scratch, &info, config).map_err(|m| snapshot_error(path, m))?;
    // Every command buffer gets a reserve of the loaded allocator (the
    // check above requires one per buffer): none keeps a handle of the
    // engine's first allocator.
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

/// The saved reserves as the engine takes them.
fn decode_reserves(info: &RunInfo) -> Result<Vec<(String, ReserveState)>, String> {
    let mut reserves = Vec::with_capacity(info.reserves.len());
    for saved in &info.reserves {
        let handles = saved
            .handles
            .iter()
            .map(|&bits| {
                Entity::from_bits(bits).ok_or_else(|| {
                    format!(
                        "reserve of system `{}`: {bits:#x} is not an entity handle",
                        saved.system
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
    Ok(reserves)
}

#[cfg(test)]
mod tests;
