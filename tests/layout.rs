//! Results do not depend on how a run is spread over threads (architecture spec, property 3), for
//! open-loop and drained (fixed workload) runs alike. tests/mpi.rs does the same over MPI ranks.

use hxsim::config;
use hxsim::engine::Progress;
use hxsim::metrics::Summary;
use hxsim::sim::{self, RunOptions};

fn summary(overrides: &[&str], threads: usize) -> Summary {
    let mut set: Vec<String> = vec![
        "topology.sides=[4,4,4]".into(),
        "topology.servers_per_switch=4".into(),
        "simulation.warmup_cycles=200".into(),
        "simulation.measure_cycles=400".into(),
    ];
    set.extend(overrides.iter().map(|s| s.to_string()));
    let cfg = config::load(std::path::Path::new("configs/hyperx-3d-8.toml"), &set).unwrap();
    let r = sim::run(&cfg, &RunOptions { threads, ..Default::default() }, &Progress::default()).unwrap();
    assert!(r.complete);
    assert_eq!((r.layout.ranks, r.layout.threads), (1, threads));
    r.summary.without_timings()
}

#[test]
fn open_loop_summary_is_the_same_for_any_thread_count() {
    let reference = summary(&[], 1);
    assert!(reference.packets_delivered > 500);
    // One counter per VC of the routing (the config's 2n = 6), integers summed over partitions.
    assert_eq!(reference.vc_phits.len(), 6);
    assert_eq!(reference.vcs_used, reference.vc_phits.iter().filter(|&&p| p > 0).count() as u64);
    assert!(reference.vcs_used >= 2);
    for t in [2, 3, 5] {
        let s = summary(&[], t);
        assert_eq!(s.vc_phits, reference.vc_phits, "per-VC phits, {t} threads");
        assert_eq!(s, reference, "{t} threads");
    }
    let ml = ["partition.method=multilevel"];
    assert_eq!(summary(&ml, 4), reference, "multilevel, 4 threads");
}

#[test]
fn drained_summary_is_the_same_for_any_thread_count() {
    let fixed = ["traffic.mode=fixed", "traffic.workload_phits=160"];
    let reference = summary(&fixed, 1);
    let done = reference.completion_cycles.unwrap();
    // The run ends when the last tail arrives, whatever the engine's window size.
    assert_eq!(reference.cycles, done);
    for t in [2, 4] {
        assert_eq!(summary(&fixed, t), reference, "{t} threads");
    }
}

#[test]
fn too_many_partitions_is_a_config_error() {
    let cfg = config::load(std::path::Path::new("configs/quickstart.toml"), &[]).unwrap();
    let e = sim::run(&cfg, &RunOptions { threads: 17, ..Default::default() }, &Progress::default()).err().unwrap();
    assert_eq!(e.exit_code(), 2);
    let msg = e.to_string();
    assert!(msg.contains("--threads") && msg.contains("17") && msg.contains("(16)"), "{msg}");
}
