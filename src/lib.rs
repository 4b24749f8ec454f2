//! A parallel, DAG-scheduled Entity-Component-System runtime.
//!
//! This facade gathers the parts: [`ecs_engine`] (the sparse-set registry),
//! [`command_buffer`] (deferred structural changes), [`scheduler`] (systems,
//! the dependency DAG and the parallel wave executor) and [`event_queue`]
//! (input from other threads). The [`Engine`] puts them together: one
//! registry, one schedule on its thread pool, a fixed-step clock and input
//! queues as resources. Most programs only need the [`prelude`]. (The
//! simulation harness, `cargo run --release`, is a separate crate of the
//! workspace built on this one; a game never compiles it.)
//!
//! # Examples
//!
//! ```
//! use ecs_runtime::prelude::*;
//!
//! struct Position(f32);
//! struct Velocity(f32);
//!
//! let mut registry = Registry::new();
//! registry.spawn((Position(0.0), Velocity(1.5)));
//! registry.view_mut::<(&mut Position, &Velocity)>().each(|(p, v)| p.0 += v.0);
//! assert_eq!(registry.view::<&Position>().iter().map(|p| p.0).sum::<f32>(), 1.5);
//! ```
#![forbid(unsafe_code)]

pub mod checksum;
pub mod divergence;
mod engine;

pub use engine::{
    Advance, DEFAULT_MAX_CATCH_UP, DEFAULT_STEP, Engine, EngineBuilder, EngineError, EngineParts,
    EngineRing, EngineState, EngineStateError, InputError, InputProducer, InputSender, InputStats,
    Plugin, SystemEntry, SystemHandle,
};

pub use command_buffer;
pub use ecs_engine;
pub use event_queue;
pub use scheduler;

/// The names most programs use, in one import: `use ecs_runtime::prelude::*;`.
pub mod prelude {
    pub use ecs_engine::{
        Bundle, ChildOf, Children, Component, ComponentId, Disabled, EcsError, Entity, EntityMap,
        Has, MapEntities, Or, QueryData, Registry, RegistryCell, View, With, Without,
    };

    pub use command_buffer::CommandBuffer;
    pub use event_queue::EventQueue;
    pub use scheduler::{
        Commands, EventCommands, EventReader, EventWriter, Events, Hook, In, IntoPipeable, Local,
        NextState, OneShotId, ParamSet, Policy, Query, QuerySingleError, Random, Res, ResMut,
        Schedule, State, StatefulSystem, States, SystemId, SystemSet, Tick, Trigger, WorldSeed,
        in_state,
    };

    pub use crate::{
        Engine, EngineBuilder, EngineError, InputProducer, InputSender, Plugin, SystemHandle,
    };

    // Change detection (issue 15).
    pub use ecs_engine::{Added, ChangeTick, Changed, Mut, Ref, Untracked};
    pub use scheduler::RemovedComponents;
}

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
