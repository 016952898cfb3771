//! The `hxsim` binary as a user meets it: JSON keys, `analyze`, thread invariance, and clear errors
//! with exit code 2 for bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

fn hxsim(args: &[&str]) -> Output {
    // These tests are about the summary and the errors: `run` writes no results file here
    // (tests/results.rs covers the files).
    let mut args = args.to_vec();
    if args.first() == Some(&"run") {
        args.push("--no-output");
    }
    Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).output().expect("hxsim runs")
}

fn write_config(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn repo(path: &str) -> String {
    format!("{}/{}", env!("CARGO_MANIFEST_DIR"), path)
}

const SMALL: &str = r#"
name = "small"
[topology]
sides = [3, 3]
servers_per_switch = 3
[traffic]
load = 0.4
[simulation]
warmup_cycles = 300
measure_cycles = 600
"#;

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

/// A `--json` summary without the keys that measure the run rather than the network (time,
/// speed, memory): what must be identical for any thread count or fetch-ahead mode.
fn without_timing(mut v: serde_json::Value) -> serde_json::Value {
    for k in ["wall_seconds", "hops_per_second", "peak_memory_bytes"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

#[test]
fn run_json_has_the_documented_keys() {
    let (_d, cfg) = write_config("c.toml", SMALL);
    let v = json(&hxsim(&["run", cfg.to_str().unwrap(), "--json", "--quiet"]));
    for key in [
        "complete",
        "status",
        "offered_load",
        "accepted_load",
        "average_latency",
        "latency_p99",
        "average_hops",
        "jain_index",
        "packets_delivered",
        "cycles",
        "wall_seconds",
        "hops_per_second",
    ] {
        assert!(v.get(key).is_some(), "missing key {key} in {v}");
    }
    assert_eq!(v["cycles"], 900);
    assert_eq!(v["offered_load"], 0.4);
    assert_eq!((&v["complete"], &v["status"]), (&true.into(), &"complete".into()));
}

#[test]
fn threads_give_identical_json_apart_from_timing() {
    let (_d, cfg) = write_config("c.toml", SMALL);
    let base = without_timing(json(&hxsim(&["run", cfg.to_str().unwrap(), "--json", "-q", "--threads", "1"])));
    for t in ["2", "4"] {
        let other = without_timing(json(&hxsim(&["run", cfg.to_str().unwrap(), "--json", "-q", "--threads", t])));
        assert_eq!(base, other, "--threads {t}");
    }
}

#[test]
fn analyze_reports_surepath_table3() {
    // SurePath Table 3 (the paper rounds 1.875 to 1.8).
    let v = json(&hxsim(&["analyze", &repo("configs/hyperx-3d-8.toml"), "--json"]));
    assert_eq!(v["switches"], 512);
    assert_eq!(v["servers"], 4096);
    assert_eq!(v["links"], 5376);
    assert_eq!(v["radix"], 29);
    assert_eq!(v["diameter"], 3);
    assert_eq!(v["average_distance"], 2.625);
    assert_eq!(v["connected"], true);
    let v = json(&hxsim(&["analyze", &repo("configs/hyperx-2d-16.toml"), "--json"]));
    assert_eq!(
        (v["switches"].as_u64(), v["servers"].as_u64(), v["links"].as_u64()),
        (Some(256), Some(4096), Some(3840))
    );
    assert_eq!((v["radix"].as_u64(), v["diameter"].as_u64()), (Some(46), Some(2)));
    assert_eq!(v["average_distance"], 1.875);
}

#[test]
fn analyze_sees_faults() {
    let (_d, cfg) = write_config("c.toml", SMALL);
    let v = json(&hxsim(&["analyze", cfg.to_str().unwrap(), "--json", "--set", "faults.random_links=5"]));
    // A 3x3 HyperX has 9 * 4 / 2 = 18 links.
    assert_eq!(v["links"], 13);
}

#[test]
fn analyze_says_why_the_routing_cannot_be_built() {
    // Valiant's ladder needs 2 x diameter VCs; with one, `run` exits 2 and `analyze` still
    // analyses the network and says why (its memory figures then count the fewest VCs).
    let (_d, cfg) = write_config("c.toml", SMALL);
    let args = ["--set", "routing.algorithm=valiant", "--set", "routing.vcs=1"];
    let v = json(&hxsim(&[&["analyze", cfg.to_str().unwrap(), "--json"][..], &args].concat()));
    assert_eq!(v["links"], 18);
    let why = v["routing_error"].as_str().expect("routing_error");
    assert!(why.contains("routing.vcs"), "{why}");
    let ok = json(&hxsim(&["analyze", cfg.to_str().unwrap(), "--json"]));
    assert!(ok.get("routing_error").is_none(), "a routing that builds has no error");
    assert_input_error(&hxsim(&[&["run", cfg.to_str().unwrap()][..], &args].concat()), &["routing.vcs"]);
}

fn assert_input_error(out: &Output, must_contain: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit code for: {err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "no panic: {err}");
    for m in must_contain {
        assert!(err.contains(m), "`{m}` not in: {err}");
    }
    assert!(out.stdout.is_empty(), "nothing on stdout");
}

/// Fetching ahead is a hint to the cache: forced on (as on large networks, with every fetch the
/// partition's size would select, cost levels and cached heads included) or off (as on small
/// ones), the results are those of the default, with and without the candidate cache (PolSP, in
/// its per-input and per-switch forms) and across partitions.
#[test]
fn prefetch_modes_give_identical_json_apart_from_timing() {
    let (_d, cfg) = write_config("c.toml", SMALL);
    for routing in ["minimal", "surepath-polarized"] {
        let set = format!("routing.algorithm={routing}");
        let c = cfg.to_str().unwrap();
        let base = without_timing(json(&hxsim(&["run", c, "--json", "-q", "--set", &set])));
        for (mode, threads, cache) in
            [("on", "1", "auto"), ("off", "1", "auto"), ("on", "2", "auto"), ("on", "2", "switch")]
        {
            let other = without_timing(json(&hxsim(&[
                "run",
                c,
                "--json",
                "-q",
                "--set",
                &set,
                "--prefetch",
                mode,
                "--threads",
                threads,
                "--candidate-cache",
                cache,
            ])));
            assert_eq!(base, other, "{routing}, --prefetch {mode}, --threads {threads}, --candidate-cache {cache}");
        }
    }
}

/// Where waiting heads' candidates are kept is a matter of speed: a few per switch (as on the
/// million-endpoint networks, where one per input port does not fit) or none, the results are
/// those of the default's per-input cache and cost levels, for the routings that cache (SurePath
/// over Polarized and Omnidimensional routes, DAL, Polarized), on a fault-free and a faulty
/// network, near saturation (so that heads wait), on one and two partitions. For SurePath also
/// on Dimension Complement Reverse traffic at full load, where the escape carries hops even
/// without faults: both caches ask for a head's escape classes only when selection needs them,
/// which `off` never defers. Debug builds also compare every cached list with the routing's, and
/// every selection from classes with the one from the routing's runs.
#[test]
fn candidate_cache_modes_give_identical_json_apart_from_timing() {
    let (_d, cfg) = write_config("c.toml", SMALL);
    let c = cfg.to_str().unwrap();
    let uniform: &[&str] = &["--set", "traffic.load=0.9"];
    let dcr: &[&str] = &["--set", "traffic.load=1.0", "--set", "traffic.pattern=dimension-complement-reverse"];
    for (routing, traffic) in [
        ("surepath-polarized", uniform),
        ("surepath-polarized", dcr),
        ("surepath-omni", uniform),
        ("surepath-omni", dcr),
        ("dal", uniform),
        ("polarized", uniform),
    ] {
        for faults in ["faults.random_links=0", "faults.random_links=3"] {
            let set = format!("routing.algorithm={routing}");
            let args = [&["run", c, "--json", "-q", "--set", &set, "--set", faults][..], traffic].concat();
            let base = without_timing(json(&hxsim(&args)));
            for (mode, threads) in [("switch", "1"), ("off", "1"), ("switch", "2")] {
                let more = ["--candidate-cache", mode, "--threads", threads];
                let other = without_timing(json(&hxsim(&[&args[..], &more].concat())));
                assert_eq!(
                    base, other,
                    "{routing}, {traffic:?}, {faults}, --candidate-cache {mode}, --threads {threads}"
                );
            }
        }
    }
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let (_d, cfg) = write_config("c.toml", SMALL);
    let c = cfg.to_str().unwrap();
    assert_input_error(&hxsim(&["run", c, "--set", "traffic.load=1.5"]), &["traffic.load", "1.5", "(0, 1]"]);
    assert_input_error(
        &hxsim(&["run", c, "--set", "routing.algorithm=zigzag"]),
        &["routing.algorithm", "zigzag", "valiant"],
    );
    assert_input_error(
        &hxsim(&["run", c, "--set", "traffic.pattern=tornado"]),
        &["traffic.pattern", "tornado", "uniform"],
    );
    assert_input_error(&hxsim(&["run", c, "--set", "topology.sides=[1,4]"]), &["topology.sides", "between 2"]);
    assert_input_error(&hxsim(&["run", c, "--set", "traffic.lod=0.3"]), &["lod"]);
    assert_input_error(
        &hxsim(&["run", c, "--set", "router.input_buffer_packets=\"eight\""]),
        &["input_buffer_packets"],
    );
    assert_input_error(&hxsim(&["run", c, "--set", "faults.random_links=100"]), &["faults.random_links", "18 links"]);
    assert_input_error(
        &hxsim(&["run", c, "--set", "routing.vcs=1", "--set", "routing.algorithm=valiant"]),
        &["routing.vcs", "Valiant"],
    );
    assert_input_error(
        &hxsim(&["run", c, "--set", "router.intransit_priority=3"]),
        &["intransit_priority", "3", "boolean"],
    );
    assert_input_error(&hxsim(&["run", c, "--threads", "0"]), &["--threads"]);
    assert_input_error(&hxsim(&["run", c, "--prefetch", "maybe"]), &["--prefetch", "maybe", "auto, on, off"]);
    assert_input_error(
        &hxsim(&["run", c, "--candidate-cache", "all"]),
        &["--candidate-cache", "all", "auto, switch, off"],
    );
    assert_input_error(&hxsim(&["run", "/nonexistent/x.toml"]), &["/nonexistent/x.toml"]);
    assert_input_error(&hxsim(&["run", c, "--set", "novalue"]), &["key=value"]);
    assert_input_error(&hxsim(&["frobnicate"]), &["frobnicate"]);
    // Bit complement needs a power-of-two number of servers (27 here).
    assert_input_error(
        &hxsim(&["run", c, "--set", "traffic.pattern=bit-complement"]),
        &["traffic.pattern", "power-of-two"],
    );
}

#[test]
fn malformed_toml_exits_2() {
    let (_d, cfg) = write_config("bad.toml", "[topology\nsides = [4,4]\n");
    assert_input_error(&hxsim(&["run", cfg.to_str().unwrap()]), &["bad.toml"]);
    let (_d, cfg) = write_config("missing.toml", "name = \"x\"\n");
    assert_input_error(&hxsim(&["run", cfg.to_str().unwrap()]), &["topology"]);
}

#[test]
fn quickstart_runs() {
    let out = hxsim(&["run", &repo("configs/quickstart.toml"), "--quiet"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("accepted load") && text.contains("phits/cycle/server"), "{text}");
}

/// Every option that takes one of a fixed set of names lists them in `--help`, from the same list
/// that parsing checks (the registries' names, not a copy in the help text).
#[test]
fn enum_options_list_their_values_in_help() {
    let help = |args: &[&str]| String::from_utf8_lossy(&hxsim(args).stdout).into_owned();
    let values = |names: &[&str]| format!("[possible values: {}]", names.join(", "));
    let methods: Vec<&str> = <partitioning::Method as hxsim::config::Named>::names();
    for (args, want) in [
        (&["run", "-h"][..], values(&hxsim::network::FetchAhead::NAMES)),
        (&["run", "-h"], values(&hxsim::network::CandidateCache::NAMES)),
        (&["partition", "-h"], values(&methods)),
        (&["merge", "-h"], values(&["csv", "jsonl"])),
        (&["plot", "-h"], "[possible values: all, throughput, latency, jain, timeseries]".into()),
        (&["completions", "-h"], "[possible values: bash, elvish, fish, powershell, zsh]".into()),
    ] {
        let text = help(args).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(text.contains(&want), "{args:?}: {want} not in\n{text}");
    }
}

/// Log lines carry no ANSI colour codes when stderr is not a terminal (a Slurm log file, a pipe).
#[test]
fn logs_to_a_file_have_no_colour_codes() {
    let dir = tempfile::tempdir().unwrap();
    let (_d, cfg) = write_config("small.toml", SMALL);
    let out = dir.path().join("s.h5");
    let r =
        hxsim(&["-v", "sweep", cfg.to_str().unwrap(), "--set", "traffic.load=0.2,0.3", "-o", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("INFO") && err.contains("wrote the point"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err:?}");
}
