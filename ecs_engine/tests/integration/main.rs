//! The crate's integration tests, one module per topic, compiled into one
//! test binary (one build and one link instead of one per file). A new
//! test file goes here with a `mod` line below (the workspace's
//! `tests/integration/layout.rs` fails when one is missing). Run one topic with
//! `cargo test -p ecs_engine --test integration -- <module>::`.

mod change;
mod change_paths;
mod claims;
mod clone_into;
mod components;
mod delta_paths;
mod despawn_many;
mod disabled;
mod filters;
mod hierarchy;
mod join_changes;
mod long_joins;
mod model;
mod par_fold;
mod query_language;
mod registry;
mod required;
mod runtime;
mod runtime_bytes;
mod runtime_changes;
mod sort_pools;
mod spawn_batch;
mod state;
mod unwind;
mod views;
