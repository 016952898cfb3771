//! What the binary says about itself (read by `hxsim::build_info`):
//! - `HXSIM_GIT_COMMIT`: the commit it is built from (`unknown` outside a git checkout or without git;
//!   the environment variable of that name at build time overrides it);
//! - `HXSIM_GIT_DIRTY`: `true` when tracked files differ from that commit, `false`, or `unknown`;
//! - `HXSIM_FEATURES`: the cargo features enabled, comma-separated (empty for none);
//! - `HXSIM_PROFILE`: `release` or `debug` (cargo's `PROFILE`: `test` and `bench` builds report the
//!   profile they inherit from).
//!
//! It also links `hdf5_hl` (HDF5's high-level library, shipped with every HDF5 install) for the
//! dimension-scale API `H5DS*` that `hdf5-metno` does not wrap.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_string())
}

fn watch(p: Option<String>) {
    if let Some(p) = p.filter(|p| std::path::Path::new(p).exists()) {
        println!("cargo:rerun-if-changed={p}");
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=HXSIM_GIT_COMMIT");
    println!("cargo:rerun-if-env-changed=HDF5_DIR");
    link_hdf5_hl();

    let mut features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| k.strip_prefix("CARGO_FEATURE_").map(|f| f.to_ascii_lowercase().replace('_', "-")))
        .filter(|f| f != "default")
        .collect();
    features.sort();
    println!("cargo:rustc-env=HXSIM_FEATURES={}", features.join(","));
    println!("cargo:rustc-env=HXSIM_PROFILE={}", std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into()));

    let (commit, dirty) = match std::env::var("HXSIM_GIT_COMMIT") {
        Ok(c) => (c, "unknown".to_string()),
        Err(_) => match git(&["rev-parse", "HEAD"]).filter(|c| !c.is_empty()) {
            Some(c) => {
                let dirty = match git(&["status", "--porcelain", "--untracked-files=no"]) {
                    Some(s) => (!s.is_empty()).to_string(),
                    None => "unknown".into(),
                };
                (c, dirty)
            }
            None => ("unknown".into(), "unknown".into()),
        },
    };
    println!("cargo:rustc-env=HXSIM_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=HXSIM_GIT_DIRTY={dirty}");
    if commit == "unknown" {
        return;
    }
    // Rebuild when HEAD moves (HEAD and the branch it points to, worktree-aware paths) and when the
    // tree becomes dirty or clean: the index (staging), and every tracked source directory (cargo
    // watches a directory's files recursively).
    watch(git(&["rev-parse", "--git-path", "HEAD"]));
    watch(git(&["rev-parse", "--git-path", "packed-refs"]));
    watch(git(&["rev-parse", "--git-path", "index"]));
    if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]).filter(|r| !r.is_empty()) {
        watch(git(&["rev-parse", "--git-path", &r]));
    }
    for d in ["src", "partitioning", "tests", "benches", "configs", "jobs", "scripts", "Cargo.toml", "README.md"] {
        watch(Some(d.to_string()));
    }
}

/// `cargo:rustc-link-lib=hdf5_hl`, searching where the HDF5 library is (`HDF5_DIR`, or pkg-config's
/// `-L` flags for `hdf5`; `hdf5-metno-sys` adds the same directories for `hdf5` itself).
fn link_hdf5_hl() {
    let mut dirs = Vec::new();
    if let Ok(d) = std::env::var("HDF5_DIR") {
        dirs.push(format!("{d}/lib"));
        dirs.push(d);
    }
    if let Ok(out) = Command::new("pkg-config").args(["--libs-only-L", "hdf5"]).output() {
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        dirs.extend(text.split_whitespace().filter_map(|f| f.strip_prefix("-L")).map(str::to_string));
    }
    for d in dirs.iter().filter(|d| std::path::Path::new(d).join("libhdf5_hl.so").exists()) {
        println!("cargo:rustc-link-search=native={d}");
    }
    println!("cargo:rustc-link-lib=dylib=hdf5_hl");
}
