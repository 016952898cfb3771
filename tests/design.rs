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

fn hyperz(args: &[&str]) -> Output {
    let mut a = vec!["design", "hyperz"];
    a.extend_from_slice(args);
    hxsim(&a)
}

/// SPEC section 4.3 h = 3 A (Adda 2023 section 5.3's node on (s1, s2) = (2, 2)): 288 switches on
/// radix 18, relative bisection q s_min sum(R_i) / (2 R_0) = 2 * 72 / 512 = 9/32 (GHC cut) and
/// min(32 * 4 * 2, 8 * 8 * 2) / 256 = 1/2 (tree cut).
#[test]
fn hyperz_search_is_at_least_as_small_as_the_paper_node() {
    let v = json(&hyperz(&[
        "--processors",
        "1024",
        "--radix",
        "18",
        "--levels",
        "3",
        "--bisection",
        "9/32",
        "--top",
        "3",
        "--json",
    ]));
    let designs = v["designs"].as_array().unwrap();
    assert_eq!(designs.len(), 3);
    for d in designs {
        assert!(d["switches"].as_u64().unwrap() <= 288, "{d}");
        assert!(d["max_radix"].as_u64().unwrap() <= 18);
        assert!(d["processors"].as_u64().unwrap() >= 1024);
        assert!(d["bisection"].as_f64().unwrap() >= 9.0 / 32.0);
        assert!(d["tree_bisection"].as_f64().unwrap() >= 9.0 / 32.0);
        assert_eq!(d["levels"], 3);
        assert_eq!(d["diameter"].as_u64().unwrap(), 6 + d["dims"].as_u64().unwrap());
    }
    assert!(v["search_seconds"].as_f64().unwrap() < 5.0);
}

fn analyze_agrees(cfg_s: &str, d: &serde_json::Value) {
    let a = json(&hxsim(&["analyze", cfg_s, "--json"]));
    assert_eq!(a["switches"], d["switches"]);
    assert_eq!(a["servers"], d["processors"]);
    assert_eq!(a["links"], d["switch_links"]);
    assert_eq!(a["radix"], d["max_radix"]);
    assert_eq!(a["diameter"], d["switch_diameter"]);
    assert_eq!(a["server_diameter"], d["diameter"]);
    let x = &a["details"];
    assert_eq!(x["switches_per_level"], d["switches_per_level"]);
    assert_eq!(x["radix_per_level"], d["radix_per_level"]);
    assert_eq!(x["internal_links"], d["internal_link_count"]);
    assert_eq!(x["side_links"], d["side_link_count"]);
    assert_eq!(x["total_links"], d["links"]);
    assert_eq!(x["znodes"], d["znodes"]);
}

#[test]
fn hyperz_written_config_builds_the_same_network() {
    let dir = tempfile::tempdir().unwrap();
    for (i, extra) in [
        // Bisection 1/2 on two levels needs more roots (r_2 > 1) and side links (q > 1).
        vec!["--processors", "200", "--radix", "16", "--levels", "2", "--bisection", "1/2"],
        vec!["--processors", "1024", "--radix", "22", "--regular", "--levels", "2"],
        vec!["--processors", "1024", "--radix", "18", "--levels", "3", "--bisection", "9/32"],
    ]
    .into_iter()
    .enumerate()
    {
        let cfg = dir.path().join(format!("best{i}.toml"));
        let cfg_s = cfg.to_str().unwrap();
        let mut args = extra.clone();
        args.extend(["--json", "--write-config", cfg_s]);
        let v = json(&hyperz(&args));
        let d = &v["designs"][0];
        analyze_agrees(cfg_s, d);
        let text = std::fs::read_to_string(&cfg).unwrap();
        assert!(text.contains("kind = \"hyperz\""), "{text}");
        if i == 0 {
            assert!(d["roots"][1].as_u64().unwrap() > 1 || d["side_links"].as_u64().unwrap() > 1, "{d}");
        }
    }
}

#[test]
fn hyperz_bad_values_exit_2_naming_the_option() {
    let base = ["--processors", "1024", "--radix", "32"];
    for (extra, key) in [
        (vec!["--levels", "0"], "--levels"),
        (vec!["--dims", "0"], "--dims"),
        (vec!["--side-links", "0"], "--side-links"),
        (vec!["--side-links", "31"], "--side-links"),
        (vec!["--side-links", "20", "--dims", "2"], "--radix"),
        (vec!["--bisection", "half"], "--bisection"),
        (vec!["--bisection", "0"], "--bisection"),
        (vec!["--top", "0"], "--top"),
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(&extra);
        let out = hyperz(&args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(stderr(&out).contains(key), "{extra:?}: {}", stderr(&out));
    }
    for (args, key, allowed) in [
        (vec!["--processors", "0", "--radix", "32"], "--processors", "between 1 and 2^31"),
        (vec!["--processors", "10", "--radix", "2"], "--radix", "between 3 and"),
        (vec!["--processors", "10", "--radix", "3", "--levels", "2"], "--radix", "between 4 and"),
    ] {
        let out = hyperz(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = stderr(&out);
        assert!(e.contains(key) && e.contains(allowed), "{args:?}: {e}");
    }
}

/// SPEC section 8 item 11 (the paper's Fig. 3 claim): a fully regular h = 3, d = 3 HyperZ for 131072
/// processors needs z >= 8 by eq. (4), while eq. (3) on radix 32 allows z <= 7.
#[test]
fn hyperz_no_design_names_the_excluding_equations() {
    let out = hyperz(&["--processors", "131072", "--radix", "32", "--fully-regular", "--levels", "3", "--dims", "3"]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(e.contains("--processors") && e.contains("z >= 8") && e.contains("z <= 7"), "{e}");
    // With the 37 ports that z = 8 needs (2*8 + 3*7), the design exists.
    let v = json(&hyperz(&[
        "--processors",
        "131072",
        "--radix",
        "37",
        "--fully-regular",
        "--levels",
        "3",
        "--dims",
        "3",
        "--json",
    ]));
    assert_eq!(v["designs"][0]["sides"], serde_json::json!([8, 8, 8]));
    assert_eq!(v["designs"][0]["zones"], serde_json::json!([8, 8, 8]));
    assert_eq!(v["designs"][0]["max_radix"], 37);
}
