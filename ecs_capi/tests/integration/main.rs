//! The crate's integration tests, one module per topic, compiled into one
//! test binary (one build and one link instead of one per file). A new
//! test file goes here with a `mod` line below; `every_file_is_a_module`
//! fails when one is missing. Run one topic with
//! `cargo test -p ecs_capi --test integration -- <module>::`.

#[path = "../common/mod.rs"]
mod common;
mod errors;
mod events;
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

/// Every `.rs` file and folder beside this one is declared above, so that
/// no test file is left out of the binary.
#[test]
#[cfg_attr(miri, ignore = "reads the tests folder, which Miri's isolation hides")]
fn every_file_is_a_module() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration");
    let declared = include_str!("main.rs");
    for entry in std::fs::read_dir(&here).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let is_module = path.extension().is_some_and(|e| e == "rs") || path.is_dir();
        if !is_module || stem == "main" {
            continue;
        }
        let line = format!("mod {stem};");
        assert!(
            declared.lines().any(|l| l == line),
            "{} is not declared in tests/integration/main.rs",
            path.display()
        );
    }
}
