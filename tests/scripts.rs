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

/// `benches/cpu.sh` (issue 34's instrument) runs at reduced size with this build's binary and
/// prints, for each of its four routings, a row whose traversal count, rate and ratio to `minimal`
/// are numbers: positive, and the reference's ratio exactly 1; and CAMINOS's traversals, counted
/// from its stored results by its temporal statistics and by its per-hop histogram, agree.
#[test]
fn cpu_bench_prints_a_row_per_routing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(root.join("benches/cpu.sh"))
        .env("HXSIM", env!("CARGO_BIN_EXE_hxsim"))
        .env("HXSIM_SMOKE", "1")
        .env_remove("ROUTINGS")
        .current_dir(root)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "benches/cpu.sh failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for (routing, name) in
        [("minimal", "Minimal"), ("surepath-polarized", "PolSP"), ("surepath-omni", "OmniSP"), ("dal", "DAL")]
    {
        let row = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(routing))
            .unwrap_or_else(|| panic!("no row for {routing} in:\n{stdout}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[1], name, "{row}");
        let number = |i: usize| -> f64 {
            cells[i].replace(',', "").parse().unwrap_or_else(|_| panic!("cell {i} of `{row}` is not a number"))
        };
        let (traversals, rate, ratio) = (number(2), number(4), number(5));
        assert!(traversals > 0.0 && rate > 0.0 && ratio > 0.0, "{row}");
        if routing == "minimal" {
            assert_eq!(ratio, 1.0, "{row}");
        }
    }
    // Smoke runs skip CAMINOS but count the traversals of its stored results two ways, which the
    // script requires to agree (it fails otherwise).
    assert!(stdout.contains("its stored results count"), "no CAMINOS line in:\n{stdout}");
}
