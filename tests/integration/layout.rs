//! The test layout of every crate of the workspace: each crate's
//! integration tests are the modules of one binary,
//! `tests/integration/main.rs`, so a file beside it that no `mod` line
//! declares would never be compiled or run. This test finds such files.

use std::path::Path;

/// The `.rs` files and folders in `dir` that `dir/main.rs` does not
/// declare with a `mod` line.
fn undeclared(dir: &Path) -> Vec<String> {
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let is_module = path.extension().is_some_and(|e| e == "rs") || path.is_dir();
        let line = format!("mod {stem};");
        if is_module && stem != "main" && !main.lines().any(|l| l == line) {
            missing.push(path.display().to_string());
        }
    }
    missing
}

#[test]
#[cfg_attr(miri, ignore = "reads the tests folders, which Miri's isolation hides")]
fn every_test_file_of_every_crate_is_a_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut binaries = 0;
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root).unwrap() {
        let crate_dir = entry.unwrap().path();
        let tests = crate_dir.join("tests/integration");
        if tests.join("main.rs").is_file() {
            binaries += 1;
            missing.extend(undeclared(&tests));
        }
    }
    let own = root.join("tests/integration");
    binaries += 1;
    missing.extend(undeclared(&own));
    assert!(binaries >= 8, "found {binaries} integration test binaries");
    assert!(
        missing.is_empty(),
        "not declared in their tests/integration/main.rs: {missing:#?}"
    );
}
