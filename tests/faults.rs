//! The fault model through runs and the binary (issue 10): failed switches silence their servers,
//! metrics over live servers, thread invariance with switch faults and shapes, disconnected
//! networks (exit 2, or `faults.unreachable = "drop"`), bad fault specs, `hxsim analyze`,
//! `--sequence` and `hxsim faults`.

use hxsim::config;
use hxsim::engine::Progress;
use hxsim::sim::{self, RunOptions, RunResult};
use std::process::Command;

fn run(overrides: &[&str], threads: usize) -> RunResult {
    let mut set: Vec<String> = vec![
        "topology.sides=[4,4,4]".into(),
        "topology.servers_per_switch=4".into(),
        "simulation.warmup_cycles=200".into(),
        "simulation.measure_cycles=400".into(),
    ];
    set.extend(overrides.iter().map(|s| s.to_string()));
    let cfg = config::load(std::path::Path::new("configs/hyperx-3d-8.toml"), &set).unwrap();
    sim::run(&cfg, &RunOptions { threads, ..Default::default() }, &Progress::default()).unwrap()
}

fn hxsim(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).output().expect("hxsim runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

const SWITCH_FAULTS: &[&str] =
    &["faults.random_switches=3", "faults.random_links=5", "faults.shapes=[{kind=\"row\", at=[0,1,2]}]"];

#[test]
fn results_with_switch_faults_and_shapes_are_the_same_for_1_2_3_threads() {
    for pattern in ["uniform", "random-server-permutation"] {
        let p = format!("traffic.pattern={pattern}");
        let mut o: Vec<&str> = SWITCH_FAULTS.to_vec();
        o.push(&p);
        let strip = |r: RunResult| {
            let s = r.summary.without_timings();
            (s, r.server_injected, r.server_accepted, r.link_phits)
        };
        let reference = strip(run(&o, 1));
        assert!(reference.0.packets_delivered > 500);
        for t in [2, 3] {
            assert_eq!(strip(run(&o, t)), reference, "{pattern}, {t} threads");
        }
    }
}

#[test]
fn dead_servers_neither_send_nor_receive_and_metrics_are_over_live_servers() {
    // Switches 0 and 5 fail: their 8 servers are lost.
    let r = run(&["faults.switches=[0, 5]", "traffic.load=0.3"], 1);
    let dead: Vec<usize> = (0..4).chain(20..24).collect();
    for &v in &dead {
        assert_eq!((r.server_injected[v], r.server_accepted[v]), (0, 0), "server {v}");
    }
    assert!((0..256).filter(|v| !dead.contains(v)).all(|v| r.server_injected[v] > 0 && r.server_accepted[v] > 0));
    let s = &r.summary;
    assert_eq!(s.servers_lost, 8);
    // Accepted load is per live server: delivered phits over (window x 248).
    let delivered: u64 = r.server_accepted.iter().sum();
    assert!((s.accepted_load - delivered as f64 / (400.0 * 248.0)).abs() < 1e-12);
    assert!((s.accepted_load - 0.3).abs() < 0.05, "{}", s.accepted_load);
    // Jain's index over the senders only: the dead servers' zeros would pull it down by 8/256.
    let live: Vec<u64> = (0..256).filter(|v| !dead.contains(v)).map(|v| r.server_injected[v]).collect();
    assert_eq!(s.jain_index, hxsim::metrics::jain_index(&live));
    assert!(s.jain_index > hxsim::metrics::jain_index(&r.server_injected));

    // Permutations: the random server permutation permutes the live servers; a fixed map silences a
    // live server whose image is dead (bit complement: server v sends to 255 - v).
    let r = run(&["faults.switches=[0]", "traffic.pattern=bit-complement", "traffic.load=0.3"], 1);
    for v in (0..4).chain(252..256) {
        assert_eq!(r.server_injected[v], 0, "server {v}: dead, or its image is");
    }
    assert!((4..252).all(|v| r.server_injected[v] > 0));
    let r = run(&["faults.switches=[0]", "traffic.pattern=random-server-permutation", "traffic.load=0.3"], 1);
    assert!((0..4).all(|v| r.server_injected[v] == 0 && r.server_accepted[v] == 0));
    assert!((4..256).all(|v| r.server_injected[v] > 0 && r.server_accepted[v] > 0));
}

#[test]
fn without_failed_switches_nothing_changes() {
    // The fault seed defaults to the run's seed: the same links as before faults.seed existed.
    let a = run(&["faults.random_links=10"], 1).summary;
    let b = run(&["faults.random_links=10", "faults.seed=1"], 1).summary;
    assert_eq!((a.accepted_load, a.average_latency), (b.accepted_load, b.average_latency));
    // A separate fault seed keeps the faults while the traffic changes, and the reverse.
    let c = run(&["faults.random_links=10", "faults.seed=1", "seed=2"], 1).summary;
    assert_ne!(a.average_latency, c.average_latency);
    let ra = sim::build_network(
        &config::load(
            std::path::Path::new("configs/quickstart.toml"),
            &["faults.random_links=5".into(), "faults.seed=4".into(), "seed=1".into()],
        )
        .unwrap(),
    )
    .unwrap();
    let rb = sim::build_network(
        &config::load(
            std::path::Path::new("configs/quickstart.toml"),
            &["faults.random_links=5".into(), "faults.seed=4".into(), "seed=2".into()],
        )
        .unwrap(),
    )
    .unwrap();
    assert!((0..16).all(|s| (0..6).all(|p| ra.alive(s, p) == rb.alive(s, p))));
}

#[test]
fn disconnected_networks_exit_2_or_drop_the_unreachable_traffic() {
    // Every link of switch 0 of the 4x4 quickstart network: its 4 servers are cut off from 60.
    let cut = "faults.links=[[0,0],[0,1],[0,2],[0,3],[0,4],[0,5]]";
    let short =
        ["--set", "simulation.warmup_cycles=100", "--set", "simulation.measure_cycles=300", "--no-output", "-q"];
    let mut args = vec!["run", "configs/quickstart.toml", "--set", cut];
    args.extend_from_slice(&short);
    let (code, _, err) = hxsim(&args);
    assert_eq!(code, 2, "{err}");
    // 64^2 - 4^2 - 60^2 = 480 ordered pairs; one example pair.
    assert!(
        err.contains("480 ordered pairs") && err.contains("server 4 on switch 1 and server 0 on switch 0"),
        "{err}"
    );
    assert!(err.contains("faults.unreachable = \"drop\""), "{err}");
    args.extend_from_slice(&["--set", "faults.unreachable=drop", "--json"]);
    let (code, out, err) = hxsim(&args);
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["unreachable_pairs"], 480);
    assert!(j["packets_dropped"].as_u64().unwrap() > 0);
    assert!(j["accepted_load"].as_f64().unwrap() > 0.3);
}

#[test]
fn bad_fault_specs_exit_2_naming_the_key() {
    let dir = std::env::temp_dir().join(format!("hxsim-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad_json = dir.join("bad.json");
    std::fs::write(&bad_json, "{\"links\": [[0, 0]], \"nodes\": []}").unwrap();
    let good_csv = dir.join("good.csv");
    std::fs::write(&good_csv, "link,0,0\nswitch,3\n").unwrap();
    let file_set = |p: &std::path::Path| format!("faults.file=\"{}\"", p.display());
    let cases: Vec<(String, &[&str])> = vec![
        ("faults.shapes=[{kind=\"cross\"}]".into(), &["faults.shapes[0].length", "between 2 and 4"]),
        ("faults.shapes=[{kind=\"subcube\", size=3, dim=1}]".into(), &["faults.shapes[0].dim", "kind, at, size"]),
        ("faults.links=[[16,0]]".into(), &["faults.links[0]", "below 16"]),
        (
            "faults.switches=[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]".into(),
            &["faults", "faults.switches (16 switches)", "servers alive"],
        ),
        ("faults.random_switches=17".into(), &["faults.random_switches", "at most the number of switches (16)"]),
        ("faults.random_links=49".into(), &["faults.random_links", "48"]),
        (file_set(&bad_json), &["faults.file", "bad.json", "JSON object"]),
        ("faults.unreachable=\"ignore\"".into(), &["faults.unreachable", "error, drop"]),
        ("faults.lifetime.step=9".into(), &["faults.lifetime.step", "0..=8"]),
        ("faults.lifetime.link_rate=1.5".into(), &["faults.lifetime.link_rate", "[0, 1)"]),
    ];
    for (set, want) in &cases {
        let (code, _, err) = hxsim(&["analyze", "configs/quickstart.toml", "--set", set]);
        assert_eq!(code, 2, "{set}: {err}");
        for w in *want {
            assert!(err.contains(w), "{set}: {err} lacks {w}");
        }
    }
    let (code, out, err) = hxsim(&["analyze", "configs/quickstart.toml", "--json", "--set", &file_set(&good_csv)]);
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((j["failed_switches"].as_u64(), j["failed_links"].as_u64()), (Some(1), Some(1 + 6)));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn analyze_reports_shapes_switches_and_sequences() {
    // SurePath section 6: Cross removes two K_11 (110 links) on the 16x16 network.
    let (code, out, err) =
        hxsim(&["analyze", "configs/hyperx-2d-16.toml", "--json", "--set", "faults.shapes=[{kind=\"cross\"}]"]);
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["failed_links"], 110);
    assert_eq!(j["live_links"], 16 * 16 * 30 / 2 - 110);
    let (code, out, err) = hxsim(&[
        "analyze",
        "configs/quickstart.toml",
        "--json",
        "--set",
        "faults.switches=[3]",
        "--set",
        "faults.links=[[0,0]]",
    ]);
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["failed_switches"], 1);
    assert_eq!(j["live_switches"], 15);
    assert_eq!(j["servers_lost"], 4);
    assert_eq!(j["live_servers"], 60);
    assert_eq!(j["unreachable_pairs"], 0);
    assert_eq!(j["failed_links"], 7);

    // The sequence: nested (each point's failed links include the previous ones'), and at its
    // points the same as analyze with faults.random_links = N.
    let (code, out, err) = hxsim(&["analyze", "configs/quickstart.toml", "--json", "--sequence", "0:40:10"]);
    assert_eq!(code, 0, "{err}");
    let pts: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(pts.len(), 5);
    for p in &pts {
        let n = p["random_links"].as_u64().unwrap();
        let (_, one, _) =
            hxsim(&["analyze", "configs/quickstart.toml", "--json", "--set", &format!("faults.random_links={n}")]);
        let one: serde_json::Value = serde_json::from_str(&one).unwrap();
        assert_eq!(p["diameter"], one["diameter"], "{n}");
        assert_eq!(p["connected"], one["connected"], "{n}");
        assert_eq!(p["failed_links"], one["failed_links"], "{n}");
    }

    let (code, out, err) =
        hxsim(&["faults", "configs/quickstart.toml", "--json", "--set", "faults.lifetime.link_rate=0.1"]);
    assert_eq!(code, 0, "{err}");
    let steps: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(steps.len(), 9);
    assert!(steps.iter().all(|s| s["unreachable_pairs"] == 0), "critical failures are repaired");
    assert!(steps.windows(2).all(|w| w[1]["failed_links"].as_u64() >= w[0]["failed_links"].as_u64()));
}

#[test]
fn a_config_files_fault_list_is_read_from_its_folder_and_a_set_one_from_the_working_directory() {
    let dir = std::env::temp_dir().join(format!("hxsim-faults-rel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("f.csv"), "link,0,0\n").unwrap();
    let quick = std::fs::read_to_string("configs/quickstart.toml").unwrap();
    let cfg = dir.join("cfg.toml");
    std::fs::write(&cfg, format!("{quick}\n[faults]\nfile = \"f.csv\"\n")).unwrap();
    // Run from the crate root, not the config's folder: the list beside the config is found.
    let (code, out, err) = hxsim(&["analyze", cfg.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["failed_links"].as_u64(), Some(1));
    // The same relative name given with --set is a command-line path: there is no f.csv here.
    let (code, _, err) = hxsim(&["analyze", cfg.to_str().unwrap(), "--set", "faults.file=\"f.csv\""]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("faults.file") && err.contains("f.csv"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
