//! A parallel, DAG-scheduled Entity-Component-System runtime.
//!
//! This facade gathers the parts: [`ecs_engine`] (the sparse-set registry),
//! [`command_buffer`] (deferred structural changes), [`scheduler`] (systems,
//! the dependency DAG and the parallel wave executor) and [`event_queue`]
//! (input from other threads). Most programs only need the [`prelude`].
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

pub use command_buffer;
pub use ecs_engine;
pub use event_queue;
pub use scheduler;

/// The names most programs use, in one import: `use ecs_runtime::prelude::*;`.
pub mod prelude {
    pub use ecs_engine::{
        Bundle, Component, ComponentId, EcsError, Entity, QueryData, Registry, RegistryCell, View,
        With, Without,
    };
}

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
