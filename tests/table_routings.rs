//! DFSSSP, LASH and SPDA through the whole simulator: the same results for 1 and 3 threads, the
//! layers and build time in the summary, and a too-small `routing.vcs` refused with exit code 2.

use hxsim::config;
use hxsim::engine::Progress;
use hxsim::metrics::Summary;
use hxsim::sim::{self, RunOptions};
use std::process::Command;

const TORUS: &str = "name = \"t\"\nseed = 4\n[topology]\nkind = \"torus\"\nsides = [4, 3, 3]\nservers_per_switch = 2\n";
const RRG: &str =
    "name = \"r\"\nseed = 4\n[topology]\nkind = \"rrg\"\nswitches = 24\ndegree = 5\nservers_per_switch = 2\n";

fn summary(text: &str, sets: &[&str], threads: usize) -> Summary {
    let mut all: Vec<String> =
        ["simulation.warmup_cycles=200", "simulation.measure_cycles=600"].iter().map(|s| s.to_string()).collect();
    all.extend(sets.iter().map(|s| s.to_string()));
    let cfg = config::parse_str(text, "test", &all).unwrap_or_else(|e| panic!("{e}"));
    let r = sim::run(&cfg, &RunOptions { threads, ..Default::default() }, &Progress::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.complete);
    r.summary.without_timings()
}

#[test]
fn table_routings_give_the_same_results_for_any_thread_count() {
    let cases: [(&str, &[&str]); 5] = [
        (TORUS, &["routing.algorithm=dfsssp", "faults.random_links=3", "traffic.load=0.6"]),
        (TORUS, &["routing.algorithm=lash", "routing.vcs=4", "traffic.load=0.6"]),
        (RRG, &["routing.algorithm=dfsssp", "routing.vcs=6", "traffic.load=0.5"]),
        (RRG, &["routing.algorithm=spda", "routing.vcs=4", "traffic.load=0.4"]),
        (TORUS, &["routing.algorithm=spda", "routing.vcs=2", "faults.random_links=2", "traffic.load=0.3"]),
    ];
    for (text, sets) in cases {
        let one = summary(text, sets, 1);
        assert!(one.packets_delivered > 100, "{sets:?}: {}", one.packets_delivered);
        assert!(one.routing_layers >= 1 && one.routing_table_bytes > 0, "{sets:?}");
        assert_eq!(one, summary(text, sets, 3), "{sets:?}");
    }
}

#[test]
fn too_few_vcs_for_the_layers_is_exit_code_2_naming_the_key_and_the_need() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ring.toml");
    // A 5-ring needs 2 layers on shortest paths (Nue paper, section 4).
    std::fs::write(&path, "[topology]\nkind = \"torus\"\nsides = [5]\nservers_per_switch = 1\n").unwrap();
    for alg in ["dfsssp", "lash"] {
        for cmd in ["run", "check-deadlock"] {
            let out = Command::new(env!("CARGO_BIN_EXE_hxsim"))
                .args([
                    cmd,
                    path.to_str().unwrap(),
                    "--set",
                    &format!("routing.algorithm={alg}"),
                    "--set",
                    "routing.vcs=1",
                ])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{alg} {cmd}: {err}");
            assert!(err.contains("routing.vcs") && err.contains("needs 2 virtual layers"), "{err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}
