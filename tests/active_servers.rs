//! `traffic.active_servers`: only N of the network's servers take part in the traffic (HyperX paper,
//! Ahn et al., SC09, section 4.1: N = 4096 processors on the 4802 ports of Fig. 7's beta = 0.25
//! HyperX). Which servers, the patterns on their ranks, the accounting over them, thread
//! invariance, and the exit-2 errors.

use hxsim::config;
use hxsim::engine::Progress;
use hxsim::sim::{self, RunOptions, RunResult};
use hxsim::traffic::{active_servers, Pattern, PatternKind};
use std::process::Command;

/// A 3x3x3 HyperX with T = 3: 27 switches, 81 servers (not a power of two).
const SMALL: [&str; 2] = ["topology.sides=[3,3,3]", "topology.servers_per_switch=3"];
const WARMUP: u64 = 500;
const MEASURE: u64 = 2000;

fn cfg(overrides: &[&str]) -> config::Config {
    let mut set: Vec<String> = SMALL.iter().map(|s| s.to_string()).collect();
    set.push(format!("simulation.warmup_cycles={WARMUP}"));
    set.push(format!("simulation.measure_cycles={MEASURE}"));
    set.extend(overrides.iter().map(|s| s.to_string()));
    config::load(std::path::Path::new("configs/hyperx-3d-8.toml"), &set).unwrap()
}

fn run(overrides: &[&str], threads: usize) -> RunResult {
    sim::run(&cfg(overrides), &RunOptions { threads, ..Default::default() }, &Progress::default()).unwrap()
}

fn hxsim(args: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).output().expect("hxsim runs");
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into())
}

fn ids_of(n: u64) -> Vec<u32> {
    let c = cfg(&[]);
    active_servers(&*sim::build_topology(&c).unwrap(), n).unwrap()
}

#[test]
fn active_servers_are_spread_evenly_over_the_switches() {
    // 64 of 81 on 27 switches: floor(64/27) = 2 or 3 each; 64 - 2*27 = 10 switches keep 3.
    let ids = ids_of(64);
    assert_eq!(ids.len(), 64);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "increasing ids (the ranks)");
    let mut per = [0u32; 27];
    for &v in &ids {
        per[(v / 3) as usize] += 1;
    }
    assert!(per.iter().all(|&k| k == 2 || k == 3), "{per:?}");
    assert_eq!(per.iter().filter(|&&k| k == 3).count(), 10);
    // Each switch keeps its first k servers by local index.
    assert!(ids.iter().all(|&v| v % 3 < per[(v / 3) as usize]));
    // All servers: the identity.
    assert_eq!(ids_of(81), (0..81).collect::<Vec<u32>>());

    // The paper's case: 4096 of the 4802 ports of the 7x7x7, T = 14 HyperX. 4096 = 11*343 + 323:
    // 323 switches keep 12 servers and 20 keep 11.
    let c = config::load(std::path::Path::new("configs/hyperx-3d-7-t14.toml"), &[]).unwrap();
    let ids = active_servers(&*sim::build_topology(&c).unwrap(), 4096).unwrap();
    let mut per = vec![0u32; 343];
    for &v in &ids {
        per[(v / 14) as usize] += 1;
    }
    assert_eq!(per.iter().filter(|&&k| k == 12).count(), 323);
    assert_eq!(per.iter().filter(|&&k| k == 11).count(), 20);
}

#[test]
fn patterns_are_defined_on_the_ranks_of_the_active_servers() {
    let ids = ids_of(64);
    let mut rng = hxsim::rng::stream(1, 0, hxsim::rng::Purpose::Global);
    let p = Pattern::on_active(PatternKind::BitComplement, ids.clone(), 81, 1).unwrap();
    assert!(p.is_permutation());
    for (i, &v) in ids.iter().enumerate() {
        // Bit complement on 6 bits: rank i -> rank 63 - i.
        assert_eq!(p.destination(v, &mut rng), ids[63 - i], "rank {i}");
        assert!(p.is_active(v));
    }
    assert_eq!((0..81).filter(|&v| p.is_active(v)).count(), 64);
    // Bit rotate on the ranks: rank 1 (000001) -> rank 32 (100000).
    let p = Pattern::on_active(PatternKind::BitRotate, ids.clone(), 81, 1).unwrap();
    assert_eq!(p.destination(ids[1], &mut rng), ids[32]);
    // Transpose on 6 bits: rank 0b000111 -> 0b111000.
    let p = Pattern::on_active(PatternKind::Transpose, ids.clone(), 81, 1).unwrap();
    assert_eq!(p.destination(ids[7], &mut rng), ids[56]);
    // Uniform stays among the other active servers.
    let p = Pattern::on_active(PatternKind::Uniform, ids.clone(), 81, 1).unwrap();
    for _ in 0..2000 {
        let d = p.destination(ids[5], &mut rng);
        assert!(d != ids[5] && p.is_active(d));
    }
    // The random server permutation permutes the active servers.
    let p = Pattern::on_active(PatternKind::RandomServerPermutation, ids.clone(), 81, 1).unwrap();
    let mut img: Vec<u32> = ids.iter().map(|&v| p.destination(v, &mut rng)).collect();
    img.sort_unstable();
    assert_eq!(img, ids);
}

#[test]
fn only_the_active_servers_send_and_receive_and_load_is_over_them() {
    let load = 0.1;
    let r = run(&["traffic.pattern=bit-complement", "traffic.load=0.1", "traffic.active_servers=64"], 1);
    let ids = ids_of(64);
    for v in 0..81u32 {
        let active = ids.contains(&v);
        assert_eq!(r.server_injected[v as usize] > 0, active, "server {v} injected");
        assert_eq!(r.server_accepted[v as usize] > 0, active, "server {v} accepted");
    }
    let s = &r.summary;
    assert_eq!(s.servers_lost, 0, "inactive servers are not lost ones");
    // Accepted load per active server: delivered phits over (window x 64).
    let delivered: u64 = r.server_accepted.iter().sum();
    assert!((s.accepted_load - delivered as f64 / (MEASURE as f64 * 64.0)).abs() < 1e-12);
    // Far below saturation accepted = offered up to the Bernoulli count: 64 servers x 2000 cycles x
    // 0.1 / 16 = 800 packets expected, standard deviation sqrt(800) packets, i.e. a relative
    // 1/sqrt(800) = 3.5%; 4 sigma, plus 1% for packets crossing the window's edges.
    let packets = 64.0 * MEASURE as f64 * load / 16.0;
    let tol = load * (4.0 / packets.sqrt() + 0.01);
    assert!((s.accepted_load - load).abs() < tol, "accepted {} vs offered {load} (tolerance {tol})", s.accepted_load);
    // Over all 81 servers it would read 64/81 of that: the accounting is over the active set.
    assert!(s.accepted_load > load * 0.9);
    // Jain's index over the 64 senders only (the 17 zeros would pull it down).
    let sent: Vec<u64> = ids.iter().map(|&v| r.server_injected[v as usize]).collect();
    assert_eq!(s.jain_index, hxsim::metrics::jain_index(&sent));

    // Uniform over the active set: the same servers send and receive.
    let r = run(&["traffic.load=0.1", "traffic.active_servers=50"], 1);
    let ids = ids_of(50);
    for v in 0..81u32 {
        let active = ids.contains(&v);
        assert_eq!(r.server_injected[v as usize] > 0, active, "server {v} injected");
        assert_eq!(r.server_accepted[v as usize] > 0, active, "server {v} accepted");
    }
}

#[test]
fn active_server_results_are_the_same_for_1_and_3_threads() {
    for pattern in ["uniform", "bit-complement", "random-server-permutation"] {
        let p = format!("traffic.pattern={pattern}");
        let o = [p.as_str(), "traffic.load=0.5", "traffic.active_servers=64"];
        let strip = |r: RunResult| {
            let mut s = r.summary;
            s.wall_seconds = 0.0;
            s.hops_per_second = 0.0;
            s.peak_memory_bytes = 0;
            (s, r.server_injected, r.server_accepted, r.link_phits)
        };
        let reference = strip(run(&o, 1));
        assert!(reference.0.packets_delivered > 1000, "{pattern}");
        assert_eq!(strip(run(&o, 3)), reference, "{pattern}");
    }
}

#[test]
fn bad_active_server_counts_exit_2_naming_the_key() {
    let cases: [(&str, &str, &str); 6] = [
        ("uniform", "0", "between 2 and the number of servers (81)"),
        ("uniform", "82", "between 2 and the number of servers (81)"),
        ("bit-complement", "48", "a power of two for bit-complement"),
        ("bit-rotate", "80", "a power of two for bit-rotate"),
        // 32 = 2^5: the two halves of the rank would differ in length.
        ("transpose", "32", "2^b with b even"),
        ("swap2", "64", "not defined on a subset"),
    ];
    for (pattern, n, want) in cases {
        let (p, a) = (format!("traffic.pattern={pattern}"), format!("traffic.active_servers={n}"));
        let mut args = vec!["run", "configs/hyperx-3d-8.toml", "-q", "--no-output"];
        let sets: Vec<String> = SMALL.iter().map(|s| s.to_string()).chain([p, a]).collect();
        for s in &sets {
            args.extend(["--set", s.as_str()]);
        }
        let (code, err) = hxsim(&args);
        assert_eq!(code, 2, "{pattern} with {n}: {err}");
        assert!(err.contains("traffic.active_servers") && err.contains(want), "{pattern} with {n}: {err}");
    }
    // Not with failed switches: the active set is chosen on the whole network.
    let (code, err) = hxsim(&[
        "run",
        "configs/quickstart.toml",
        "-q",
        "--no-output",
        "--set",
        "traffic.active_servers=32",
        "--set",
        "faults.switches=[3]",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("traffic.active_servers") && err.contains("faults"), "{err}");
}
