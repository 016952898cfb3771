//! Model validation against analytic results: zero-load latency, accepted = offered below
//! saturation, Valiant's 0.5 bound on Dimension Complement Reverse, Minimal above Valiant on uniform
//! traffic, fixed workloads, and bit-identical results for any thread count.

use hxsim::config::{parse_str, Config};
use hxsim::engine::Progress;
use hxsim::sim::{self, RunOptions, RunResult};
use hxsim::topology::Topology;

fn config(base: &str, sets: &[&str]) -> Config {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    parse_str(base, "test", &sets).expect("valid test config")
}

fn run(cfg: &Config, threads: usize) -> RunResult {
    sim::run(cfg, &RunOptions { threads, ..Default::default() }, &Progress::default()).expect("run succeeds")
}

const HX_4X4X4: &str = r#"
name = "t"
seed = 3
[topology]
sides = [4, 4, 4]
servers_per_switch = 4
[simulation]
warmup_cycles = 1000
measure_cycles = 2000
"#;

/// Expected switch traversals `H` of a uniform-traffic packet on a fault-free HyperX: the destination
/// is one of the other `N - 1` servers; `T - 1` of them share the source switch (`H = 1`), and
/// `T * c_k` are `k` switches away, with `c_k = sum over k-subsets of dimensions of prod (S_d - 1)`.
fn uniform_mean_traversals(sides: &[usize], t: usize) -> f64 {
    let n_servers = sides.iter().product::<usize>() * t;
    // c_k by expanding prod_d (1 + (S_d - 1) x).
    let mut c = vec![1.0f64];
    for &s in sides {
        let mut next = vec![0.0; c.len() + 1];
        for (k, &v) in c.iter().enumerate() {
            next[k] += v;
            next[k + 1] += v * (s as f64 - 1.0);
        }
        c = next;
    }
    let mut sum = (t as f64 - 1.0) * 1.0;
    for (k, &ck) in c.iter().enumerate().skip(1) {
        sum += t as f64 * ck * (k as f64 + 1.0);
    }
    sum / (n_servers as f64 - 1.0)
}

/// The HyperX keys of a config (these tests run HyperX configs only).
fn hyperx(cfg: &hxsim::config::Config) -> &hxsim::topology::hyperx::HyperXConfig {
    match &cfg.topology {
        hxsim::config::TopologyConfig::HyperX(h) => h,
        other => panic!("a HyperX config, got {}", other.kind()),
    }
}

#[test]
fn zero_load_latency_matches_the_analytic_pipeline() {
    // At very low load almost no packet waits, so the mean latency must approach
    // L + E[H] (X + L) + P - 1 (see the network module docs) from above.
    let cfg =
        config(HX_4X4X4, &["traffic.load=0.005", "simulation.warmup_cycles=200", "simulation.measure_cycles=20000"]);
    let r = run(&cfg, 1);
    let (l, x, p) = (cfg.link.latency as f64, cfg.router.crossbar_latency as f64, cfg.packet.size_phits as f64);
    let h = uniform_mean_traversals(&hyperx(&cfg).sides, hyperx(&cfg).servers_per_switch);
    let expected = l + h * (x + l) + p - 1.0;
    let s = &r.summary;
    assert!(s.packets_delivered > 1000, "enough samples: {}", s.packets_delivered);
    assert!((s.average_hops - h).abs() / h < 0.03, "hops {} vs analytic {h}", s.average_hops);
    assert!(s.average_latency >= expected - 0.5, "latency {} below the pipeline bound {expected}", s.average_latency);
    assert!(s.average_latency <= expected * 1.02, "latency {} vs zero-load {expected}", s.average_latency);
}

#[test]
fn zero_load_latency_scales_with_link_and_crossbar_delays() {
    // Same check with other delays, so that the formula (not a constant) is what is tested; and
    // with in-transit priority, which only decides contended grants, so it must not add latency.
    let cfg = config(
        HX_4X4X4,
        &[
            "traffic.load=0.005",
            "link.latency=3",
            "router.crossbar_latency=2",
            "packet.size_phits=8",
            "router.intransit_priority=true",
            "simulation.warmup_cycles=200",
            "simulation.measure_cycles=20000",
        ],
    );
    let r = run(&cfg, 1);
    let h = uniform_mean_traversals(&hyperx(&cfg).sides, hyperx(&cfg).servers_per_switch);
    let expected = 3.0 + h * (2.0 + 3.0) + 8.0 - 1.0;
    let lat = r.summary.average_latency;
    assert!(lat >= expected - 0.5 && lat <= expected * 1.02, "latency {lat} vs {expected}");
}

#[test]
fn accepted_equals_offered_below_saturation() {
    for load in [0.2, 0.5] {
        let cfg = config(HX_4X4X4, &[&format!("traffic.load={load}")]);
        let r = run(&cfg, 1);
        let acc = r.summary.accepted_load;
        assert!((acc - load).abs() / load < 0.02, "offered {load}, accepted {acc}");
        assert!(r.summary.jain_index > 0.95, "uniform traffic is fair: {}", r.summary.jain_index);
    }
}

#[test]
fn valiant_saturates_near_half_on_dimension_complement_reverse() {
    // Valiant doubles the average path: on a HyperX with T = S, 2 * n (S-1)/S hops per packet over
    // n (S-1) links per T servers bounds throughput by 0.5 (HyperX paper 4.1; SurePath 5).
    let cfg = config(
        HX_4X4X4,
        &["routing.algorithm=valiant", "traffic.pattern=dimension-complement-reverse", "traffic.load=1.0"],
    );
    let acc = run(&cfg, 1).summary.accepted_load;
    assert!((0.40..=0.55).contains(&acc), "Valiant on DCR accepted {acc}");
}

#[test]
fn minimal_beats_valiant_on_uniform_traffic() {
    let min = run(&config(HX_4X4X4, &["traffic.load=1.0"]), 1).summary.accepted_load;
    let val = run(&config(HX_4X4X4, &["traffic.load=1.0", "routing.algorithm=valiant"]), 1).summary.accepted_load;
    assert!(min > 0.75, "minimal saturates high on uniform traffic: {min}");
    assert!(val < 0.56, "valiant is bounded by 0.5: {val}");
    assert!(min > val + 0.2, "minimal {min} should be well above valiant {val}");
}

#[test]
fn dor_delivers_with_dimension_order_hop_counts() {
    // DOR takes exactly the Hamming distance, like minimal routing: same mean hops.
    let cfg = config(HX_4X4X4, &["traffic.load=0.1", "routing.algorithm=dor"]);
    let r = run(&cfg, 1);
    let h = uniform_mean_traversals(&hyperx(&cfg).sides, hyperx(&cfg).servers_per_switch);
    assert!((r.summary.average_hops - h).abs() / h < 0.03);
    assert!((r.summary.accepted_load - 0.1).abs() < 0.004);
}

#[test]
fn fixed_workload_delivers_everything_and_reports_completion() {
    // Every server sends 10 packets of 16 phits: nothing may be lost, and completion takes at least
    // the time one server needs to push its 160 phits through its one-phit-per-cycle link.
    let cfg = config(
        HX_4X4X4,
        &["traffic.mode=fixed", "traffic.workload_phits=160", "traffic.pattern=random-server-permutation"],
    );
    let r = run(&cfg, 2);
    let servers = 256u64;
    assert_eq!(r.summary.packets_generated, servers * 10);
    assert_eq!(r.summary.packets_delivered, servers * 10);
    let done = r.summary.completion_cycles.expect("fixed mode reports completion");
    assert!(done >= 160, "completion {done} faster than the injection link allows");
    assert!(r.complete);
}

fn comparable(r: &RunResult) -> String {
    let s = r.summary.clone().without_timings();
    format!("{:?} {:?} {:?} {:?} {:?}", s, r.stats.samples, r.server_injected, r.link_phits, r.stats.latency_hist)
}

#[test]
fn results_are_identical_for_any_thread_count() {
    for sets in [
        vec!["traffic.load=0.7"],
        vec!["traffic.load=0.9", "routing.algorithm=valiant", "router.allocator=random"],
        vec!["traffic.load=0.6", "partition.method=round-robin", "traffic.pattern=random-server-permutation"],
        vec!["traffic.load=0.5", "faults.random_links=20", "link.latency=2"],
        vec!["traffic.load=1.0", "routing.algorithm=polarized", "router.intransit_priority=true"],
    ] {
        let cfg = config(HX_4X4X4, &sets);
        let one = comparable(&run(&cfg, 1));
        for threads in [2, 3, 4] {
            assert_eq!(one, comparable(&run(&cfg, threads)), "{sets:?} with {threads} threads");
        }
    }
}

#[test]
fn faults_are_routed_around_by_minimal_routing() {
    let cfg = config(HX_4X4X4, &["traffic.load=0.3", "faults.random_links=40"]);
    let r = run(&cfg, 1);
    assert_eq!(r.net.failed_links(), 40);
    assert!((r.summary.accepted_load - 0.3).abs() < 0.01, "accepted {}", r.summary.accepted_load);
    // With links gone, some pairs take longer paths than the Hamming distance.
    let h = uniform_mean_traversals(&hyperx(&cfg).sides, hyperx(&cfg).servers_per_switch);
    assert!(r.summary.average_hops > h, "{} vs fault-free {h}", r.summary.average_hops);
}

#[test]
fn dor_reports_unroutable_packets_on_faulty_networks() {
    // Validation refuses DOR on a faulty network up front (exit 2, naming the key)...
    let e = hxsim::config::parse_str(HX_4X4X4, "t", &["faults.random_links=40".into(), "routing.algorithm=dor".into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("routing.algorithm") && e.contains("sp"), "{e}");
    // ...and the router still reports what it cannot route if such a config gets past it.
    let mut cfg = config(HX_4X4X4, &["traffic.load=0.3", "faults.random_links=40"]);
    cfg.routing.algorithm = "dor".into();
    let err = sim::run(&cfg, &RunOptions { threads: 1, ..Default::default() }, &Progress::default())
        .err()
        .expect("DOR cannot avoid faults");
    let msg = err.to_string();
    assert!(msg.contains("no route") && msg.contains("dor"), "{msg}");
    assert_eq!(err.exit_code(), 3);
}

#[test]
fn paper_networks_have_table3_properties() {
    for (sides, t, radix, links) in [(vec![8, 8, 8], 8, 29, 5376), (vec![16, 16], 16, 46, 3840)] {
        let h = hxsim::topology::HyperX::new(&sides, &vec![1; sides.len()], t);
        assert_eq!(h.switch_ports(0) + t, radix);
        // Links: every switch has sum (S_d - 1) neighbours, each link counted from both ends.
        assert_eq!(h.num_switches() * h.switch_ports(0) / 2, links);
    }
}
