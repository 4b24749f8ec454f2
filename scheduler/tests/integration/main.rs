//! The crate's integration tests, one module per topic, compiled into one
//! test binary (one build and one link instead of one per file). A new
//! test file goes here with a `mod` line below (the workspace's
//! `tests/integration/layout.rs` fails when one is missing). Run one topic with
//! `cargo test -p scheduler --test integration -- <module>::`.

mod adaptive;
mod apply_panic;
mod build_scale;
mod chain;
mod change;
mod change_conditions;
mod command_reports;
mod common;
mod disjoint;
mod disjoint_miri;
mod events;
mod exclusive;
mod game_loops;
mod observer_errors;
mod observers;
mod observers_bundles;
mod oracle;
mod params;
mod queries;
mod random;
mod reserves;
mod resource_change;
mod runtime;
mod shuffle;
mod spawn_handles;
mod systems;
mod waves;
