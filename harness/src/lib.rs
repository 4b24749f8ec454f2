//! The simulation harness: real game worlds run headless on many threads,
//! fed input from another thread, measured and checksummed.
//!
//! The `harness` binary (`cargo run --release`) is a thin command line over
//! this module; tests and benchmarks call it directly.
//!
//! - [`Scenario`]: a world described in TOML (`scenarios/shmup.toml`, the
//!   default shoot'em up; `scenarios/particles.toml`, one million
//!   particles; `scenarios/movers.toml`, the world the C API's examples
//!   rebuild).
//! - [`Simulation`]: the world in an [`Engine`](ecs_runtime::Engine), with its
//!   input thread ([`InputSource`]), ready to tick.
//! - [`run`] and [`check_determinism`]: tick it and [`Report`] throughput,
//!   entities, per-system cost, waves, peak memory and the world checksum;
//!   [`chrome_trace`] draws the run for Perfetto.
//!
//! A run can save its world after a tick and a later process resume it
//! ([`RunConfig::save_at`], [`RunConfig::load`]; `--save-at TICK FILE`,
//! `--load FILE`): the resumed run reaches the same checksum as an
//! uninterrupted one, through [`ecs_snapshot`] and the engine's command
//! reserves and tick count.
//!
//! # Files and limits
//!
//! Inputs are read in bounded time and memory (a size limit, a pipe opened
//! without blocking), outputs replaced whole or not at all, and no output
//! may be an input or another output ([`check_distinct`],
//! [`check_output`]); a run is refused when its estimated peak exceeds
//! what the process may take ([`estimate_memory`], [`memory_budget`]) and
//! stopped at a tick when it outgrows it ([`HarnessError::OutOfMemory`]).
//!
//! # Determinism
//!
//! The world after N ticks is bit-identical whatever the thread count and
//! however the input thread is scheduled:
//!
//! - systems use the fixed step, never the wall-clock delta;
//! - every random draw comes from the runtime's
//!   [`Random`](scheduler::Random), keyed by the scenario seed (the
//!   [`WorldSeed`](scheduler::WorldSeed) resource), the system, the tick
//!   and what the draw is about (entity handle, wave and enemy), never
//!   from a generator shared between systems; the built-in input script
//!   and the first particles, drawn outside the systems, take their
//!   `Random` directly, under names no system has;
//! - systems that run in parallel over entities change each entity from
//!   its own data only, and reductions are integer sums or minimums;
//! - structural changes go through command buffers, applied in
//!   registration order;
//! - input events carry their tick and reach the steering system at that
//!   tick, through the engine's tick-stamped input
//!   ([`InputProducer`](ecs_runtime::InputProducer)), which waits for the
//!   input thread's watermark (see [`InputMessage`]).
//!
//! # The checksum
//!
//! FNV-1a (64 bits) over: the number of live entities, then each live
//! entity in increasing order of its handle bits
//! ([`Entity::to_bits`](ecs_engine::Entity::to_bits)): the handle bits, then
//! for every component type of the harness in a fixed order a presence
//! byte and the component's fields, floats by their bit patterns. It does
//! not depend on the order of the pools' dense arrays. The `movers` world
//! hashes `Position` then `Velocity` only, the component types it has, so
//! the C API's `ecs_world_checksum` over those two ids gives the same value.

mod checksum;
mod components;
mod draw;
mod error;
mod files;
mod input;
mod limits;
mod memory;
mod movers;
mod particles;
mod report;
mod rollback;
mod run;
mod scenario;
mod shmup;
mod simulation;
mod snapshot;
mod trace;

pub use components::{
    Bounty, Collider, Controls, Damage, Enemy, EnemyGun, Faction, Health, Hits, Lives, Missile,
    Particle, Player, Position, Score, Shield, SineWave, Velocity, Weapon, digests,
};
pub use error::{HarnessError, printable, write_text};
pub use files::{PIPE_WAIT, check_distinct, check_output, remove_unfinished_outputs};
pub use input::{
    Command, InputEvent, InputMessage, InputSource, LONGEST_INPUT_LINE, MOST_COMMANDS_PER_TICK,
};
pub use limits::{
    MAX_THREADS, MemoryBudget, MemoryEstimate, available_memory_bytes, estimate_memory,
    memory_budget,
};
pub use memory::peak_resident_bytes;
pub use report::{
    CommandStats, EntityStats, PlayerStats, Report, SystemStats, TickTime, WaveStats,
};
pub use rollback::RollbackStats;
pub use run::{DeterminismCheck, RunConfig, RunOutcome, check_determinism, diagnose, run};
pub use scenario::{
    Arena, BUILTIN_SCENARIOS, Enemies, LARGEST_SCENARIO_BYTES, LARGEST_VALUE, MOVERS_TOML, Movers,
    PARTICLES_TOML, Particles, Players, SHMUP_TOML, Scenario, ScenarioKind, Shmup, TICK_RATES,
};
pub use simulation::Simulation;
pub use trace::{SpanKind, TraceSpan, chrome_trace};
