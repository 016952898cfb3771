//! What the binary says about itself (read by `hxsim::build_info`):
//! - `HXSIM_GIT_COMMIT`: the commit it is built from (`unknown` outside a git checkout or without git;
//!   the environment variable of that name at build time overrides it);
//! - `HXSIM_GIT_DIRTY`: `true` when tracked files differ from that commit, `false`, or `unknown`;
//! - `HXSIM_FEATURES`: the cargo features enabled, comma-separated (empty for none);
//! - `HXSIM_PROFILE`: `release` or `debug` (cargo's `PROFILE`: `test` and `bench` builds report the
//!   profile they inherit from).

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
