//! Systems, access declarations, the dependency DAG, Kahn waves and the
//! parallel wave executor.
//!
//! A system declares what it reads and writes, most often through its
//! parameter types ([`Query`], [`Res`], [`ResMut`], [`Commands`], [`Tick`]),
//! so the declaration cannot drift from the code. The scheduler turns the
//! declarations into a DAG, sorts it into waves with Kahn's algorithm, and
//! runs each wave's systems in parallel on a rayon pool.
//!
//! The DAG has the explicit `before`/`after` constraints first (the only
//! edges that can form a cycle, a [`BuildError::Cycle`] that lists them);
//! then, for each pair of systems that touch a type (at least one writing
//! it) and that the constraints leave unordered, an edge by the
//! [`Policy`]: by default registration order, which cannot form a cycle;
//! or [`Policy::WriterFirst`], writers before readers, falling back to
//! registration order (and saying so, [`Rule::CycleFallback`]) where a
//! writer-first edge would close a cycle.
//!
//! Beyond plain systems: run conditions
//! ([`SystemConfig::run_if`]), system sets ordered and conditioned as one
//! ([`ScheduleBuilder::set`], [`SystemConfig::in_set`]), exclusive systems
//! taking `&mut Registry` (and [`ExclusiveParam`]s such as [`Local`]) and
//! running alone ([`ExclusiveSystem`]),
//! per-system state ([`Local`]), systems returning `Result`
//! ([`SystemOutput`]), and a startup stage
//! ([`ScheduleBuilder::add_startup`]); each has a short example on its
//! page.
//! Structural changes go through each system's command buffer, applied
//! between waves in registration order, so the result does not depend on
//! thread timing. The schedule explains itself: [`Schedule::explain`]
//! prints why each system is in its wave, [`Schedule::to_dot`] draws the
//! DAG.
//!
//! # Examples
//!
//! ```
//! use ecs_engine::Registry;
//! use scheduler::{Query, Schedule, Tick};
//!
//! struct Position(f32);
//! struct Velocity(f32);
//! struct Health(i32);
//!
//! fn movement(mut q: Query<(&mut Position, &Velocity)>) {
//!     q.each(|(p, v)| p.0 += v.0);
//! }
//! fn regen(mut q: Query<&mut Health>) {
//!     q.each(|h| h.0 += 1);
//! }
//! fn report(q: Query<(&Position, &Health)>) {
//!     assert!(q.iter().all(|(p, h)| p.0 > 0.0 && h.0 > 0));
//! }
//!
//! let mut registry = Registry::new();
//! registry.spawn((Position(0.0), Velocity(1.0), Health(1)));
//! let mut builder = Schedule::builder();
//! builder.add(movement);
//! builder.add(regen);
//! builder.add(report);
//! let mut schedule = builder.build(&mut registry).unwrap();
//! // movement and regen touch different types: one wave; report reads both.
//! let names: Vec<Vec<&str>> = schedule
//!     .waves()
//!     .into_iter()
//!     .map(|w| w.into_iter().map(|(_, name)| name).collect())
//!     .collect();
//! assert_eq!(names, vec![vec!["movement", "regen"], vec!["report"]]);
//! schedule.run(&mut registry, Tick::default()).unwrap();
//! ```
//!
//! Two systems that each read what the other writes run in registration
//! order; a constraint overrides it:
//!
//! ```
//! use ecs_engine::Registry;
//! use scheduler::{Policy, Query, Schedule};
//!
//! struct Velocity(f32);
//! struct Steer(f32);
//!
//! fn steer(mut q: Query<(&Velocity, &mut Steer)>) {
//!     q.each(|(v, s)| s.0 = -v.0);
//! }
//! fn integrate(mut q: Query<(&Steer, &mut Velocity)>) {
//!     q.each(|(s, v)| v.0 += s.0);
//! }
//!
//! let names = |schedule: &Schedule| -> Vec<String> {
//!     schedule.waves().concat().iter().map(|(_, n)| n.to_string()).collect()
//! };
//! let mut builder = Schedule::builder();
//! builder.add(steer);
//! builder.add(integrate);
//! let schedule = builder.build(&mut Registry::new()).unwrap();
//! assert_eq!(names(&schedule), ["steer", "integrate"]);
//!
//! let mut builder = Schedule::builder();
//! builder.policy(Policy::WriterFirst);
//! builder.add(steer);
//! builder.add(integrate).before("steer");
//! let schedule = builder.build(&mut Registry::new()).unwrap();
//! assert_eq!(names(&schedule), ["integrate", "steer"]);
//! ```
#![forbid(unsafe_code)]

mod access;
mod builder;
mod error;
mod events;
mod executor;
mod explain;
mod graph;
mod label;
mod names;
mod observer;
mod oneshot;
mod param;
mod schedule;
mod slot;
mod snapshot_reserves;
mod state;
mod system;
mod system_state;
mod tick;

pub use access::{EventAccess, EventKey, ResourceAccess, SubjectKind, SystemAccess, short_name};
pub use builder::{
    MAX_THREADS, ScheduleBuilder, SetConfig, SystemChain, SystemConfig, THREADS_PER_CORE,
};
pub use error::{BuildError, CycleEdge, RunError, SystemError};
pub use events::params::{EventReader, EventWriter};
pub use events::saved::{EventChunk, EventsState, EventsStateError};
pub use events::{
    EventCommands, EventIter, Events, RAW_EVENT_MAX_ALIGN, RawEvent, RawEventError, RawEventId,
    RawEvents,
};
pub use executor::WaveTiming;
pub use explain::Explain;
pub use graph::{EdgeReason, Policy, Rule};
pub use label::{Label, SystemSet};
pub use observer::{Hook, Trigger};
pub use oneshot::{MAX_ONE_SHOT_CHAIN, MAX_ONE_SHOT_RUNS, OneShotId};
pub use param::context::{SystemContext, SystemId};
pub use param::exclusive::ExclusiveParam;
#[doc(hidden)]
pub use param::param_set::FetchMember;
pub use param::param_set::{ParamSet, ParamSetMembers, SetMember};
pub use param::query::{LastRun, Query, QuerySingleError, RemovedComponents};
pub use param::random::{Random, RandomStream, WorldSeed};
pub use param::{Commands, Local, LocalState, Res, ResMut, SystemParam};
pub use schedule::Schedule;
pub use slot::SystemRun;
pub use snapshot_reserves::RestoreReservesError;
pub use state::{InState, NextState, State, States, in_state};
pub use system::condition::{
    Condition, EveryNTicks, FunctionCondition, IntoCondition, IsCondition, OnTimer, every_n_ticks,
    on_timer, resource_changed, resource_exists,
};
pub use system::pipe::{In, IntoPipeable, IsPipeable, Pipe, Pipeable, PipeableFunction};
pub use system::{
    DeclaredSystem, ExclusiveSystem, FunctionSystem, IntoSystem, IsExclusive, IsStateful, IsSystem,
    Stateful, StatefulSystem, System, SystemOutput,
};
pub use system_state::values::{
    LoadedSystem, LoadedValue, PutOwn, StatePlace, StateValue, StateVisit,
};
pub use system_state::{ScheduleProgress, SystemStateError, SystemStates};
pub use tick::Tick;
