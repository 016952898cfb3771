//! `hxsim partition`: quality of the three methods without running, and its input errors.

use serde_json::Value;
use std::process::Command;

fn partition(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hxsim"))
        .args(["partition", "configs/hyperx-3d-8.toml"])
        .args(args)
        .env_remove("OMPI_COMM_WORLD_SIZE")
        .env_remove("PMI_SIZE")
        .env_remove("SLURM_NTASKS")
        .output()
        .unwrap()
}

fn json(args: &[&str]) -> Value {
    let out = partition(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn all_methods_side_by_side_and_multilevel_cuts_no_more_than_block() {
    for parts in [2u64, 4, 8] {
        let v = json(&["--parts", &parts.to_string(), "--json"]);
        assert_eq!(v["switches"], 512);
        assert_eq!(v["links"], 5376);
        let m = v["methods"].as_array().unwrap();
        let names: Vec<&str> = m.iter().map(|r| r["method"].as_str().unwrap()).collect();
        assert_eq!(names, ["block", "round-robin", "multilevel"]);
        let cut = |i: usize| m[i]["cut_links"].as_u64().unwrap();
        assert!(cut(2) <= cut(0), "{parts} parts: multilevel {} > block {}", cut(2), cut(0));
        // Block cuts 8x8x8 into P slabs along the last dimension: on each of the 64 lines of that
        // dimension (a K_8), the links between different slabs of 8/P switches are cut.
        let s = 8 / parts;
        assert_eq!(cut(0), 64 * (28 - parts * s * (s - 1) / 2), "{v}");
        for r in m {
            assert_eq!(r["part_switches_max"].as_u64().unwrap(), 512 / parts);
            assert_eq!(r["imbalance"].as_f64().unwrap(), 1.0);
            assert_eq!(r["lookahead"], 1);
            assert_eq!(r["part_servers_max"].as_u64().unwrap(), 512 / parts * 8);
        }
    }
}

#[test]
fn one_method_and_lookahead_follows_link_latency() {
    let v = json(&["--parts", "4", "--method", "multilevel", "--json", "--set", "link.latency=3"]);
    let m = v["methods"].as_array().unwrap();
    assert_eq!(m.len(), 1);
    assert_eq!(m[0]["method"], "multilevel");
    assert_eq!(m[0]["lookahead"], 3);
    let one = json(&["--parts", "1", "--method", "block", "--json"]);
    assert_eq!(one["methods"][0]["cut_links"], 0);
    assert_eq!(one["methods"][0]["lookahead"], Value::Null);
}

#[test]
fn table_lists_every_method() {
    let out = partition(&["--parts", "2"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for m in ["block", "round-robin", "multilevel", "cut links", "imbalance", "lookahead"] {
        assert!(text.contains(m), "{m} missing:\n{text}");
    }
}

#[test]
fn bad_parts_and_method_exit_2_naming_key_value_and_allowed() {
    let out = partition(&["--parts", "513"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--parts") && err.contains("513") && err.contains("512"), "{err}");
    let out = partition(&["--parts", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let out = partition(&["--parts", "2", "--method", "metis"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--method") && err.contains("metis") && err.contains("multilevel"), "{err}");
}
