//! `hxsim design` as a user meets it: the search's JSON, a written config that `hxsim analyze`
//! builds into the same network, the figures, and errors with exit code 2.

use std::process::{Command, Output};

fn hxsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).output().expect("hxsim runs")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn design(extra: &[&str]) -> Output {
    let mut args = vec!["design", "hyperx", "--endpoints", "131072", "--radix", "128"];
    args.extend_from_slice(extra);
    hxsim(&args)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn table1_half_bisection_as_json() {
    let v = json(&design(&["--bisection", "0.5", "--json", "--top", "2"]));
    let d = &v["designs"][0];
    assert_eq!(d["switches"], 3780);
    assert_eq!(d["sides"], serde_json::json!([3, 35, 36]));
    assert_eq!(d["trunking"], serde_json::json!([12, 1, 1]));
    assert_eq!(d["servers_per_switch_range"], serde_json::json!([35, 35]));
    // Ports: 35 + 12*2 + 34 + 35 = 128; beta = min(36, 35, 36) / 70.
    assert_eq!(d["ports_used"], 128);
    assert_eq!(d["beta"], 0.5);
    assert_eq!(d["diameter"], 3);
    assert_eq!(v["designs"].as_array().unwrap().len(), 2);
    assert!(v["designs"][1]["switches"].as_u64().unwrap() >= 3780);
}

#[test]
fn regular_and_flattened_butterfly() {
    let v = json(&design(&["--bisection", "1", "--regular", "--json"]));
    assert_eq!(v["designs"][0]["switches"], 10000);
    let v = json(&design(&["--bisection", "1", "--flattened-butterfly", "--json"]));
    assert_eq!(v["designs"][0]["switches"], 14641);
    assert_eq!(v["designs"][0]["servers_per_switch"], 9);
}

#[test]
fn written_config_builds_the_same_network() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("best.toml");
    let cfg_s = cfg.to_str().unwrap();
    let v = json(&design(&["--bisection", "0.125", "--json", "--write-config", cfg_s]));
    let d = &v["designs"][0];
    let a = json(&hxsim(&["analyze", cfg_s, "--json"]));
    assert_eq!(a["switches"], d["switches"]);
    assert_eq!(a["servers"], d["endpoints"]);
    assert_eq!(a["links"], d["links"]);
    assert_eq!(a["radix"], d["ports_used"]);
    assert_eq!(a["diameter"], d["diameter"]);
    let (x, y) = (a["average_distance"].as_f64().unwrap(), d["average_distance"].as_f64().unwrap());
    assert!((x - y).abs() < 1e-9, "analyze {x}, design {y}");
    let text = std::fs::read_to_string(&cfg).unwrap();
    assert!(text.contains("kind = \"hyperx\"") && text.contains("sides = [5, 19, 19]"), "{text}");
}

#[test]
fn no_design_exits_2_naming_the_options() {
    // Fig. 4: two dimensions without trunking cannot reach 2^17 endpoints on radix 128.
    let out = design(&["--bisection", "0.125", "--regular", "--dims", "2", "--trunking", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(e.contains("--endpoints") && e.contains("--dims 2") && e.contains("--trunking 1"), "{e}");
}

#[test]
fn bad_values_exit_2_naming_the_option() {
    for (args, key) in [
        (vec!["--bisection", "0"], "--bisection"),
        (vec!["--bisection", "half"], "--bisection"),
        (vec!["--bisection", "0.5", "--trunking", "0"], "--trunking"),
        (vec!["--bisection", "0.5", "--dims", "500"], "--dims"),
        (vec!["--bisection", "0.5", "--top", "0"], "--top"),
        (vec!["--bisection", "0.5", "--plot", "x.pdf"], "--plot"),
    ] {
        let out = design(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(key), "{args:?}: {}", stderr(&out));
    }
    let out = hxsim(&["design", "hyperx", "--endpoints", "0", "--radix", "128", "--bisection", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--endpoints"));
    let out = hxsim(&["design", "hyperx", "--endpoints", "10", "--radix", "1", "--bisection", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--radix"));
}

#[test]
fn figures_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let space = dir.path().join("space.svg");
    let out = design(&[
        "--bisection",
        "0.5",
        "--regular",
        "--dims",
        "3",
        "--trunking",
        "1",
        "--plot",
        space.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let svg = std::fs::read_to_string(&space).unwrap();
    // beta = 0.5, L = 3, K = 1: S = 19 needs T >= ceil(2^17 / 19^3) = 20 > S / (2 * 0.5) = 19, while
    // S = 20 takes T = ceil(2^17 / 8000) = 17 <= min(20, 128 - 3 * 19): the corner is (T,S) = (17,20).
    assert!(svg.starts_with("<svg") && svg.contains("(17,20)"), "the beta = 0.5 corner is labelled (T,S)");
    let fig8 = dir.path().join("fig8.png");
    let out = hxsim(&["design", "hyperx-vs-clos", "--max-log2-endpoints", "11", "--plot", fig8.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::metadata(&fig8).unwrap().len() > 10_000);
}
