//! The crate's integration tests, one module per topic, compiled into one
//! test binary (one build and one link instead of one per file). A new
//! test file goes here with a `mod` line below (the workspace's
//! `tests/integration/layout.rs` fails when one is missing). Run one topic with
//! `cargo test -p event_queue --test integration -- <module>::`.

mod blocking;
mod growth_and_close;
mod model;
mod stress;
