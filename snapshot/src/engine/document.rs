//! The engine section of a snapshot document: what a whole engine holds
//! beyond its registry's entities, components and resources. Every
//! struct refuses unknown keys, as the rest of the document does.

use command_buffer::ReserveState;
use ecs_engine::Entity;
use serde::{Deserialize, Serialize};

/// `{ ticks, clock, pool_ticks, resource_ticks, seed, startup_pending,
/// states_started, systems, reserves, checksum }`; the checksum covers every other field
/// (see [`crate::integrity`]).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EngineSection<V> {
    /// Ticks run ([`Engine::ticks`](ecs_runtime::Engine::ticks)).
    pub(crate) ticks: u64,
    /// The change clock: the current change tick and that of the last
    /// clamp ([`ecs_engine::ChangeClockState`]).
    pub(crate) clock: (u32, u32),
    /// The change ticks of every registered component type that tracks
    /// changes.
    pub(crate) pool_ticks: Vec<PoolTicksEntry>,
    /// `(name, added, changed)` of every registered resource saved.
    pub(crate) resource_ticks: Vec<(String, u32, u32)>,
    /// The [`WorldSeed`](scheduler::WorldSeed) resource, when present.
    pub(crate) seed: Option<u64>,
    /// The startup systems had not run yet.
    pub(crate) startup_pending: bool,
    /// Per state type, its initial enter had run
    /// ([`scheduler::ScheduleProgress`]).
    pub(crate) states_started: Vec<bool>,
    /// Every system, in run order.
    pub(crate) systems: Vec<SystemEntry<V>>,
    /// Every command buffer's reserve, by system name.
    pub(crate) reserves: Vec<(String, ReserveState)>,
    pub(crate) checksum: u32,
}

/// [`ecs_engine::PoolTicks`] of one component type (handles as their
/// [`Entity::to_bits`](ecs_engine::Entity::to_bits) values).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PoolTicksEntry {
    pub(crate) name: String,
    pub(crate) added: Vec<u32>,
    pub(crate) changed: Vec<u32>,
    pub(crate) removed: Vec<Entity>,
    pub(crate) removed_first: u64,
}

/// One system: whether it is enabled, and the values it keeps.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SystemEntry<V> {
    pub(crate) name: String,
    pub(crate) enabled: bool,
    pub(crate) values: Vec<StateEntry<V>>,
}

/// One value a system keeps: where, under which registered name, and
/// the value.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StateEntry<V> {
    pub(crate) place: Place,
    pub(crate) kind: String,
    pub(crate) value: V,
}

/// [`scheduler::StatePlace`] in serde form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Place {
    Own,
    Param(Vec<usize>),
    Condition(usize, Vec<usize>),
}

impl From<scheduler::StatePlace> for Place {
    fn from(place: scheduler::StatePlace) -> Place {
        match place {
            scheduler::StatePlace::Own => Place::Own,
            scheduler::StatePlace::Param(path) => Place::Param(path),
            scheduler::StatePlace::Condition { condition, path } => {
                Place::Condition(condition, path)
            }
        }
    }
}

impl From<Place> for scheduler::StatePlace {
    fn from(place: Place) -> scheduler::StatePlace {
        match place {
            Place::Own => scheduler::StatePlace::Own,
            Place::Param(path) => scheduler::StatePlace::Param(path),
            Place::Condition(condition, path) => {
                scheduler::StatePlace::Condition { condition, path }
            }
        }
    }
}
