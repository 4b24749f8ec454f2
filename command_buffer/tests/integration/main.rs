//! The crate's integration tests, one module per topic, compiled into one
//! test binary (one build and one link instead of one per file). A new
//! test file goes here with a `mod` line below (the workspace's
//! `tests/integration/layout.rs` fails when one is missing). Run one topic with
//! `cargo test -p command_buffer --test integration -- <module>::`.

mod apply;
mod change;
mod determinism;
mod drops;
mod hierarchy;
mod model;
mod reserve;
mod runs;
mod unwind;
