//! The crate's integration tests, one module per topic, compiled into one
//! test binary (one build and one link instead of one per file). A new
//! test file goes here with a `mod` line below (the workspace's
//! `tests/integration/layout.rs` fails when one is missing). Run one topic with
//! `cargo test -p harness --test integration -- <module>::`.

mod common;
mod harness_bad_input;
mod harness_cli;
mod harness_determinism;
mod harness_files;
mod harness_integrity;
mod harness_limits;
mod harness_messages;
mod harness_movers;
mod harness_outcome;
mod harness_readme;
mod harness_repeated_flags;
mod harness_report;
mod harness_rollback;
mod harness_snapshot;
