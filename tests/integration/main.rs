//! The crate's integration tests, one module per topic, compiled into one
//! test binary (one build and one link instead of one per file). A new
//! test file goes here with a `mod` line below (the workspace's
//! `tests/integration/layout.rs` fails when one is missing). Run one topic with
//! `cargo test --test integration -- <module>::`.

mod common;
mod disabled_systems;
mod divergence;
mod engine_api;
mod event_queue_resource;
mod hierarchy_wave;
mod input;
mod input_replay;
mod layout;
mod one_shot;
mod pipe;
mod required;
mod rollback;
mod states;
mod tower_defense;
