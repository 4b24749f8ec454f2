//! The committed header `include/ecs_runtime.h` must be what cbindgen
//! generates from the crate's source today. Regenerate it with
//! `ECS_CAPI_BLESS=1 cargo test -p ecs_capi --test integration -- header::`.

use std::path::Path;

#[test]
fn the_committed_header_matches_the_code() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");
    let path = crate_dir.join("include/ecs_runtime.h");
    if std::env::var_os("ECS_CAPI_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("the header is writable");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/ecs_runtime.h is out of date with the code: regenerate it with \
         `ECS_CAPI_BLESS=1 cargo test -p ecs_capi --test integration -- header::` and commit it"
    );
}
