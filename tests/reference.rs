//! The configuration reference cannot drift: `docs/reference.md` must be what the binary generates
//! from the config schema and the registries (`hxsim docs reference`). A new key, routing, topology,
//! pattern or router mode changes the generated page, so this fails until the page is regenerated
//! (and its doc comments are what the page shows).

use std::process::Command;

#[test]
fn the_committed_reference_is_what_the_binary_generates() {
    let out = Command::new(env!("CARGO_BIN_EXE_hxsim")).args(["docs", "reference"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let generated = String::from_utf8(out.stdout).unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reference.md");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    if committed != generated {
        let line = committed.lines().zip(generated.lines()).position(|(a, b)| a != b);
        panic!(
            "docs/reference.md differs from `hxsim docs reference` (first difference at line {}); regenerate it with \
             `make reference` and commit it",
            line.map_or_else(|| "the end".to_string(), |l| (l + 1).to_string())
        );
    }
}
