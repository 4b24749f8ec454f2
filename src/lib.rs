//! A parallel, DAG-scheduled Entity-Component-System runtime.
#![forbid(unsafe_code)]

pub use ecs_engine;
