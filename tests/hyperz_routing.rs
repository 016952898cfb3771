//! The HyperZ and fat-tree routings (`odim`, `cliod`, `aliod`, `deter`, `nca`, `dmodk`) through the
//! whole simulator, on the shipped configs: below saturation everything offered is accepted, and
//! results are bit-identical for 1 and 3 threads. Route-level checks (minimality, levels, side-hop
//! order, deadlock freedom) are the unit tests in `src/routing/hyperz_tests.rs`.

use hxsim::config::{self, Config};
use hxsim::engine::Progress;
use hxsim::sim::{self, RunOptions, RunResult};

fn load(path: &str, sets: &[&str]) -> Config {
    let mut all = vec![
        "simulation.warmup_cycles=300".to_string(),
        "simulation.measure_cycles=700".to_string(),
        "simulation.watchdog_cycles=2000".to_string(),
    ];
    all.extend(sets.iter().map(|s| s.to_string()));
    config::load(std::path::Path::new(path), &all).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn run(cfg: &Config, threads: usize) -> RunResult {
    sim::run(cfg, &RunOptions { threads, ..Default::default() }, &Progress::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn comparable(r: &RunResult) -> String {
    let s = r.summary.clone().without_timings();
    format!("{:?} {:?} {:?} {:?}", s, r.server_injected, r.link_phits, r.stats.latency_hist)
}

#[test]
fn low_load_is_accepted_and_thread_count_does_not_matter() {
    for (path, algs) in [
        ("configs/hyperz-1024-h2a.toml", &["odim", "cliod", "aliod", "deter", "nca", "dmodk"][..]),
        ("configs/fattree-4ary-3tree.toml", &["nca", "dmodk"]),
    ] {
        for alg in algs {
            let cfg = load(path, &[&format!("routing.algorithm={alg}"), "traffic.load=0.1"]);
            let one = run(&cfg, 1);
            let s = &one.summary;
            // 1024 servers x 700 cycles at 0.1: about 4500 packets; Bernoulli noise is ~1.5%.
            assert!((s.accepted_load - 0.1).abs() < 0.01, "{path} {alg}: accepted {}", s.accepted_load);
            assert_eq!(comparable(&one), comparable(&run(&cfg, 3)), "{path} {alg}: 1 vs 3 threads");
        }
    }
}

#[test]
fn fat_tree_routings_accept_half_load() {
    // A k-ary n-tree has full bisection, and D-mod-K (Zahavi 2010) sends the k servers of a leaf
    // through k different roots, so uniform traffic at 0.5 loads no link above 0.5 and all of it is
    // accepted, as with NCA. (D-mod-K keyed by the destination's leaf switch sent every packet for
    // a leaf through one root, whose down link towards the leaf's group then carried k (1 - 1/k)
    // servers' load: it accepted at most 1 / (k - 1) = 1/3 here.)
    for alg in ["nca", "dmodk"] {
        let cfg = load("configs/fattree-4ary-3tree.toml", &[&format!("routing.algorithm={alg}"), "traffic.load=0.5"]);
        let s = run(&cfg, 2).summary;
        // 64 servers x 700 cycles at 0.5: about 1400 packets; Bernoulli noise is ~3%.
        assert!((s.accepted_load - 0.5).abs() < 0.04, "{alg}: accepted {} of 0.5", s.accepted_load);
    }
}

#[test]
fn saturated_hyperz_runs_keep_delivering() {
    // Full load on the h = 3 design with every scheme: no deadlock (the watchdog would fail the run).
    // The design has few side links: ODim, CLIOD and Deter take the side hops of the 7/8 of uniform
    // pairs whose LCL is 3 on the 16 level-3 side links of a Z-node, which carry 256 x 3/4 x 4/3 x
    // 7/8 = 224 phits per unit load: they saturate near 16 / 224 = 0.07 on those pairs.
    for sets in [
        &["routing.algorithm=aliod"][..],
        &["routing.algorithm=cliod"],
        &["routing.algorithm=aliod", "routing.vc_policy=hyperz-b"],
        &["routing.algorithm=odim", "routing.vcs=1"],
        &["routing.algorithm=deter", "traffic.pattern=transpose"],
    ] {
        let mut v = sets.to_vec();
        v.push("traffic.load=1.0");
        let r = run(&load("configs/hyperz-1024-h3a.toml", &v), 1);
        assert!(r.summary.accepted_load > 0.05, "{sets:?}: accepted {}", r.summary.accepted_load);
    }
}

#[test]
fn shipped_configs_build_their_routing() {
    for path in [
        "configs/hyperz-1024-h1.toml",
        "configs/hyperz-1024-h2a.toml",
        "configs/hyperz-1024-h3a.toml",
        "configs/fattree-4ary-3tree.toml",
    ] {
        let cfg = load(path, &[]);
        let net = sim::build_network(&cfg).unwrap();
        assert_eq!(net.num_servers(), if path.contains("fattree") { 64 } else { 1024 });
        hxsim::routing::build(&cfg.routing_params(), net).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
}
