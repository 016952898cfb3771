//! Records the git commit the binary is built from (`HXSIM_GIT_COMMIT`, read by `output::GIT_COMMIT`).
//! Outside a git checkout, or without git, nothing is recorded and the commit reads `unknown`.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=HXSIM_GIT_COMMIT");
    if let Ok(c) = std::env::var("HXSIM_GIT_COMMIT") {
        println!("cargo:rustc-env=HXSIM_GIT_COMMIT={c}");
        return;
    }
    let Some(commit) = git(&["rev-parse", "HEAD"]) else { return };
    println!("cargo:rustc-env=HXSIM_GIT_COMMIT={commit}");
    // Rebuild when HEAD moves: watch HEAD and the branch it points to (worktree-aware paths).
    for p in [git(&["rev-parse", "--git-path", "HEAD"]), git(&["rev-parse", "--git-path", "packed-refs"])] {
        if let Some(p) = p.filter(|p| std::path::Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(p) = git(&["rev-parse", "--git-path", &r]).filter(|p| std::path::Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}
