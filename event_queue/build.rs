//! Declares the `loom` cfg so `#[cfg(loom)]` passes the `unexpected_cfgs` lint.
//!
//! The crate uses the workspace lint table (`[lints] workspace = true`), which
//! cannot be combined with a local `[lints.rust]` table, so the cfg is declared
//! here instead. Build the model-checking tests with
//! `RUSTFLAGS="--cfg loom" cargo test -p event_queue --test loom --release`.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(loom)");
}
