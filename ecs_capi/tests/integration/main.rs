//! The crate's integration tests, one module per topic, compiled into one
//! test binary (one build and one link instead of one per file). A new
//! test file goes here with a `mod` line below (the workspace's
//! `tests/integration/layout.rs` fails when one is missing). Run one topic with
//! `cargo test -p ecs_capi --test integration -- <module>::`.

mod changes;
#[path = "../common/mod.rs"]
mod common;
mod errors;
mod events;
mod exclusive;
mod header;
mod hierarchy;
mod limits;
mod par_chunks;
mod report;
mod resources;
mod sets;
mod snapshots;
mod states;
mod world;
