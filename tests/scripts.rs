//! Every experiment script of `configs/` runs (at reduced size, `HXSIM_SMOKE=1`, see
//! `configs/common.sh`) with this build's binary and exits 0: a script broken by a change of the
//! binary's output or of a config key fails here rather than printing errors for its next user.
//! Files that are sourced rather than run (no `#!` line) are skipped.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

#[test]
fn every_experiment_script_runs_at_reduced_size() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut scripts: Vec<_> = std::fs::read_dir(root.join("configs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sh"))
        .filter(|p| std::fs::read_to_string(p).unwrap().starts_with("#!"))
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 10, "the experiment scripts: {scripts:?}");
    let mut failed = Vec::new();
    for s in &scripts {
        let t = Instant::now();
        let out = Command::new("bash")
            .arg(s)
            .env("HXSIM", env!("CARGO_BIN_EXE_hxsim"))
            .env("HXSIM_SMOKE", "1")
            .current_dir(root)
            .output()
            .unwrap();
        let name = s.file_name().unwrap().to_string_lossy().into_owned();
        eprintln!("{name}: exit {:?} in {:.1} s", out.status.code(), t.elapsed().as_secs_f64());
        if !out.status.success() {
            failed.push(format!(
                "{name} (exit {:?}):\n{}\n{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(failed.is_empty(), "scripts that failed with HXSIM_SMOKE=1:\n{}", failed.join("\n"));
}
