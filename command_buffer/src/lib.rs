//! Deferred structural changes (spawn, despawn, insert, remove) recorded by
//! systems and applied to an [`ecs_engine::Registry`] between waves.
//!
//! Filled in by its own issue; see `../shared/DESIGN.md`.
#![forbid(unsafe_code)]
