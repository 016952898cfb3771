//! The all-to-all shift exchange (`traffic.pattern = "all-to-all-shift"`, Nue paper Figs. 2 and 7a)
//! through whole runs: a full exchange in `fixed` mode delivers one message from every server to
//! every other live server (and nothing more), dead servers are skipped, a split network drops
//! exactly the unreachable messages, results do not depend on the thread count, and the config
//! errors exit 2 naming the key. The order of the walk is tested on the pattern itself
//! (`src/traffic/patterns.rs`).

use hxsim::config;
use hxsim::engine::Progress;
use hxsim::sim::{self, RunOptions, RunResult};
use std::process::Command;

/// Packet length of the quickstart config.
const PLEN: u64 = 16;

/// The 4x4 quickstart HyperX (16 switches, 4 servers each: 64 servers) with `overrides`.
fn cfg(overrides: &[&str]) -> config::Config {
    let mut set = vec!["traffic.pattern=all-to-all-shift".to_string(), "traffic.mode=fixed".into()];
    set.extend(overrides.iter().map(|s| s.to_string()));
    config::load(std::path::Path::new("configs/quickstart.toml"), &set).unwrap()
}

fn run(overrides: &[&str], threads: usize) -> RunResult {
    sim::run(&cfg(overrides), &RunOptions { threads, ..Default::default() }, &Progress::default()).unwrap()
}

fn hxsim(args: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).output().expect("hxsim runs");
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into())
}

#[test]
fn a_full_exchange_sends_one_message_to_every_other_server() {
    let n = 64u64;
    for m in [1u64, 3] {
        let set = format!("traffic.shift_message_packets={m}");
        let r = run(&[&set], 1);
        let s = &r.summary;
        // Unset workload: (N-1) messages of m packets per server, all delivered.
        assert_eq!(s.packets_generated, n * (n - 1) * m, "m {m}");
        assert_eq!(s.packets_delivered, n * (n - 1) * m, "m {m}");
        // Every server sends and receives (N-1) m packets: one message from each other server
        // (the pattern never sends to the source itself, so the counts leave no room for a repeat).
        for v in 0..n as usize {
            assert_eq!(r.server_injected[v], (n - 1) * m * PLEN, "m {m}: server {v} sent");
            assert_eq!(r.server_accepted[v], (n - 1) * m * PLEN, "m {m}: server {v} received");
        }
        // Fixed mode's accepted load is the exchange's rate: all phits over the completion time,
        // cycles 0 to the last delivery's (`completion_cycles` is the cycle after it).
        let done = s.completion_cycles.unwrap();
        let rate = (n * (n - 1) * m * PLEN) as f64 / (done as f64 * n as f64);
        assert!((s.accepted_load - rate).abs() < 1e-12, "m {m}: {} vs {rate}", s.accepted_load);
        assert!(s.accepted_load <= 1.0, "a server link carries one phit per cycle");
    }
}

#[test]
fn an_explicit_workload_is_that_many_messages() {
    // Two messages of 2 packets each: servers 0 and 1 receive from their two predecessors.
    let r = run(&["traffic.shift_message_packets=2", &format!("traffic.workload_phits={}", 4 * PLEN)], 1);
    assert_eq!(r.summary.packets_delivered, 64 * 4);
    assert!(r.server_accepted.iter().all(|&a| a == 4 * PLEN), "{:?}", r.server_accepted);
}

#[test]
fn dead_servers_are_skipped() {
    // Switch 5 fails: servers 20..24 are gone, the 60 live ones exchange among themselves.
    let r = run(&["faults.switches=[5]"], 1);
    let live = 60u64;
    assert_eq!(r.summary.packets_delivered, live * (live - 1));
    for v in 0..64usize {
        let expect = if (20..24).contains(&v) { 0 } else { (live - 1) * PLEN };
        assert_eq!((r.server_injected[v], r.server_accepted[v]), (expect, expect), "server {v}");
    }
}

#[test]
fn a_split_network_drops_exactly_the_unreachable_messages() {
    // Switch 0 cut off: its 4 servers and the other 60 reach only their own side. Every server
    // still takes its 63 steps; 2 x 4 x 60 = 480 messages cross the cut and are dropped.
    let cut = "faults.links=[[0,0],[0,1],[0,2],[0,3],[0,4],[0,5]]";
    let r = run(&[cut, "faults.unreachable=drop"], 1);
    assert_eq!(r.summary.packets_dropped, 480);
    assert_eq!(r.summary.packets_generated + r.summary.packets_dropped, 64 * 63);
    assert_eq!(r.summary.packets_delivered, 4 * 3 + 60 * 59);
}

#[test]
fn results_are_the_same_for_1_and_3_threads() {
    let strip = |r: RunResult| {
        let s = r.summary.without_timings();
        (format!("{s:?}"), r.server_injected, r.server_accepted, r.link_phits, format!("{:?}", r.stats.samples))
    };
    for sets in [
        vec!["traffic.shift_message_packets=2", "routing.algorithm=valiant"],
        vec!["faults.switches=[5]", "faults.random_links=4"],
        vec!["traffic.mode=bernoulli", "traffic.load=0.8", "simulation.warmup_cycles=300"],
    ] {
        let one = strip(run(&sets, 1));
        assert_eq!(strip(run(&sets, 3)), one, "{sets:?}");
    }
}

#[test]
fn bad_combinations_exit_2_naming_the_key() {
    let q = "configs/quickstart.toml";
    for (sets, key, words) in [
        (vec!["traffic.shift_message_packets=2"], "traffic.shift_message_packets", "only with traffic.pattern"),
        (
            vec!["traffic.pattern=all-to-all-shift", "traffic.shift_message_packets=0"],
            "traffic.shift_message_packets",
            "between 1",
        ),
        (
            vec![
                "traffic.pattern=all-to-all-shift",
                "traffic.mode=fixed",
                "traffic.shift_message_packets=2",
                "traffic.workload_phits=48",
            ],
            "traffic.workload_phits",
            "whole messages",
        ),
    ] {
        let mut args = vec!["run", q, "--no-output", "-q"];
        for s in &sets {
            args.extend_from_slice(&["--set", s]);
        }
        let (code, err) = hxsim(&args);
        assert_eq!(code, 2, "{sets:?}: {err}");
        assert!(err.contains(key) && err.contains(words), "{sets:?}: {err}");
    }
}

#[test]
fn the_config_reads_back_the_same() {
    // Result files and checkpoints store the config as text: an unset shift workload stays unset
    // (a full exchange), other patterns keep writing the default workload.
    let c = cfg(&[]);
    assert_eq!(c.traffic.workload_phits, None);
    let text = c.to_toml();
    assert!(!text.contains("workload_phits"), "{text}");
    assert_eq!(config::parse_str(&text, "t", &[]).unwrap(), c);
    let u = config::load(std::path::Path::new("configs/quickstart.toml"), &[]).unwrap();
    assert_eq!(u.traffic.workload_phits, Some(config::DEFAULT_WORKLOAD_PHITS));
    assert!(u.to_toml().contains("workload_phits = 1600"));
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(serde_json::from_str::<config::Config>(&json).unwrap(), c);
}
