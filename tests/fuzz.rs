//! The fuzz harness that stays (issue 12, build item 6): proptest over the config schema and
//! `--set` strings, and tiny runs, run by the normal `cargo test` in bounded time (about 10 s on 2
//! cores in the test profile; `HXSIM_FUZZ_SCALE=10 cargo test --test fuzz` runs ten times more cases).
//!
//! What must hold, whatever the input:
//! - no panic: every rejected input is a `ConfigError` (exit code 2) whose message names the key of
//!   the `--set` (or, for a constraint between keys, a key of the schema);
//! - sane metrics for every run that is accepted: 0 <= accepted load <= what was generated (exactly)
//!   and <= offered load plus a tolerance derived from the run length and Bernoulli noise; Jain's index
//!   in (0, 1], or NaN exactly when nothing was injected in the window; latency at least the zero-load
//!   latency of a packet that crosses one switch, `2 L + X + P - 1`.
//!
//! The keys come from the schema itself (the default config serialised), so a new key is fuzzed as
//! soon as it exists.

use hxsim::config::{parse_str, Config, ConfigError};
use hxsim::engine::Progress;
use hxsim::sim::{self, RunOptions, SimError};
use proptest::prelude::*;
use std::process::Command;

const BASE: &str =
    "[topology]\nsides = [3, 3]\nservers_per_switch = 2\n[simulation]\nwarmup_cycles = 100\nmeasure_cycles = 200\n";

fn scale() -> u32 {
    std::env::var("HXSIM_FUZZ_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1).max(1)
}

/// Every dotted key of the schema, from the default config.
fn schema_keys() -> Vec<String> {
    fn walk(prefix: &str, v: &toml::Value, out: &mut Vec<String>) {
        match v {
            toml::Value::Table(t) => {
                for (k, x) in t {
                    let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    walk(&key, x, out);
                }
            }
            _ => out.push(prefix.to_string()),
        }
    }
    let cfg = parse_str(BASE, "base", &[]).unwrap();
    let mut out = Vec::new();
    walk("", &toml::Value::try_from(&cfg).unwrap(), &mut out);
    out
}

/// Values of every TOML type and of awkward magnitudes.
fn any_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        (0u64..5000).prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| format!("{v:e}")),
        prop::sample::select(vec!["nan", "inf", "-inf", "1e-300", "1e-16", "0.0", "-0.0", "1.0000001", "0.5"])
            .prop_map(str::to_string),
        any::<bool>().prop_map(|b| b.to_string()),
        "[a-z-]{0,12}".prop_map(|s| s),
        "\"[ -~]{0,8}\"".prop_map(|s| s),
        prop::collection::vec(0i64..40, 0..5).prop_map(|v| format!("{v:?}")),
        Just("{a = 1}".to_string()),
        Just("[[1], [2]]".to_string()),
    ]
}

fn key_strategy() -> impl Strategy<Value = String> {
    let keys = schema_keys();
    prop_oneof![
        8 => prop::sample::select(keys),
        1 => "[a-z_]{1,10}(\\.[a-z_]{1,10}){0,2}".prop_map(|s| s),
    ]
}

/// The message of a rejected `--set key=value` names `key` (or another key of the schema, when
/// the value broke a constraint between keys).
fn names_a_key(msg: &str, key: &str, keys: &[String]) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    msg.contains(key) || msg.contains(last) || keys.iter().any(|k| msg.contains(k.as_str()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000 * scale(), failure_persistence: None, ..ProptestConfig::default() })]

    /// Any `--set` on a valid base: accepted, or rejected as bad input naming the key; never a panic.
    #[test]
    fn any_set_is_accepted_or_names_its_key(sets in prop::collection::vec((key_strategy(), any_value()), 1..4)) {
        let keys = schema_keys();
        let overrides: Vec<String> = sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
        match parse_str(BASE, "base", &overrides) {
            Ok(cfg) => prop_assert!(cfg.validate().is_ok()),
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(
                    sets.iter().any(|(k, _)| names_a_key(&msg, k, &keys)),
                    "{overrides:?}: {msg}"
                );
                if let ConfigError::Parse { origin, .. } = &e {
                    // A --set that broke the config is blamed on a --set, never on the base file.
                    prop_assert!(origin.starts_with("--set"), "{overrides:?} blamed on {origin}: {msg}");
                }
            }
        }
    }

    /// Sweep `--set` syntax: parsed, or rejected with the spec in the message; never a panic.
    #[test]
    fn any_sweep_set_parses_or_is_rejected(key in key_strategy(), a in any::<i64>(), b in any::<i64>(), s in any::<i64>(),
                                           f in any::<f64>(), g in any::<f64>(), h in any::<f64>()) {
        for spec in [format!("{key}={a}:{b}:{s}"), format!("{key}={f}:{g}:{h}"), format!("{key}={a},{f},{a}")] {
            match hxsim::sweep::parse_set(&spec) {
                Ok(axis) => prop_assert!(!axis.values.is_empty() && axis.values.len() <= hxsim::sweep::MAX_POINTS),
                // Named by its start: errors clip what they echo (hxsim::error::clip).
                Err(e) => prop_assert!(e.to_string().contains(&spec[..spec.len().min(100)]), "{spec}: {e}"),
            }
        }
    }
}

/// A tiny valid experiment.
fn tiny_config() -> impl Strategy<Value = Vec<String>> {
    (
        prop::collection::vec(2usize..4, 1..3),
        1usize..3,
        // Every routing that runs on a HyperX, from the registry.
        prop::sample::select(hxsim::routing::names_for("hyperx", false)),
        prop::sample::select(vec!["uniform", "random-server-permutation", "transpose", "swap2", "bit-complement"]),
        prop_oneof![Just(1e-16), 0.01f64..=1.0],
        (1u64..4, prop::sample::select(vec![1usize, 4, 16]), 1u64..3, 1usize..4),
        (0u64..200, 1u64..300, any::<u64>(), prop::sample::select(vec!["bernoulli", "fixed"])),
    )
        .prop_map(|(sides, t, alg, pat, load, (lat, plen, xlat, speed), (warm, meas, seed, mode))| {
            vec![
                format!("topology.sides={sides:?}"),
                format!("topology.servers_per_switch={t}"),
                format!("routing.algorithm={alg}"),
                format!("traffic.pattern={pat}"),
                format!("traffic.load={load:e}"),
                format!("traffic.mode={mode}"),
                format!("traffic.workload_phits={}", plen * 4),
                format!("link.latency={lat}"),
                format!("packet.size_phits={plen}"),
                format!("router.crossbar_latency={xlat}"),
                format!("router.crossbar_speedup={speed}"),
                format!("simulation.warmup_cycles={warm}"),
                format!("simulation.measure_cycles={meas}"),
                format!("simulation.max_cycles={}", 20_000),
                format!("seed={}", seed >> 1),
            ]
        })
}

fn check_metrics(cfg: &Config, threads: usize) -> Result<(), TestCaseError> {
    let res = match sim::run(cfg, &RunOptions { threads, ..Default::default() }, &Progress::default()) {
        Ok(r) => r,
        // Bad input found while building the model (e.g. a pattern that needs a power of two).
        Err(SimError::Config(e)) => {
            prop_assert!(!e.to_string().is_empty());
            return Ok(());
        }
        Err(e) => return Err(TestCaseError::fail(format!("{cfg:?}: {e}"))),
    };
    let s = &res.summary;
    let servers = res.server_injected.len() as f64;
    let p = cfg.packet.size_phits as f64;
    let (l, x) = (cfg.link.latency as f64, cfg.router.crossbar_latency as f64);
    prop_assert!(s.accepted_load >= 0.0);
    if cfg.traffic.mode == hxsim::config::TrafficMode::Bernoulli {
        let (w, m) = (cfg.simulation.warmup_cycles as f64, cfg.simulation.measure_cycles as f64);
        // Exact: what is delivered in the window was generated before its end.
        prop_assert!(s.accepted_load * m * servers <= s.packets_generated as f64 * p + 1e-9, "{s:?}");
        // Statistical: the offered load over the whole run (backlog included), plus 6 sigma of the
        // Bernoulli packet count, over the window.
        let offered = s.offered_load.expect("a bernoulli run reports its offered load");
        let expected_packets = offered / p * (w + m) * servers;
        let bound = (expected_packets + 6.0 * expected_packets.sqrt() + 1.0) * p / (m * servers);
        prop_assert!(s.accepted_load <= bound, "accepted {} > {bound} ({cfg:?})", s.accepted_load);
    }
    let injected: u64 = res.server_injected.iter().sum();
    if injected == 0 {
        prop_assert!(s.jain_index.is_nan());
    } else {
        prop_assert!(s.jain_index > 0.0 && s.jain_index <= 1.0 + 1e-12, "Jain {}", s.jain_index);
    }
    if cfg.traffic.mode == hxsim::config::TrafficMode::Fixed {
        prop_assert!(s.offered_load.is_none(), "a fixed workload has no offered load: {s:?}");
    }
    if s.packets_delivered == 0 {
        prop_assert!(s.average_latency.is_nan() && s.average_hops.is_nan());
        prop_assert!(s.latency_p99.is_none() && s.steady_state.is_none(), "no data, no figure: {s:?}");
    } else {
        let zero_load = 2.0 * l + x + p - 1.0;
        prop_assert!(s.average_latency >= zero_load, "latency {} < zero-load {zero_load} ({cfg:?})", s.average_latency);
        prop_assert!(s.latency_p99.is_some_and(|p| p as f64 >= zero_load));
        prop_assert!(s.average_hops >= 1.0);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120 * scale(), failure_persistence: None, ..ProptestConfig::default() })]

    /// Tiny runs of valid configs, on 1 and 2 threads: sane metrics, identical results.
    #[test]
    fn tiny_runs_have_sane_metrics(sets in tiny_config(), threads in 1usize..3) {
        let Ok(cfg) = parse_str(BASE, "base", &sets) else { return Ok(()) };
        check_metrics(&cfg, threads)?;
    }
}

/// The binary, on a few random `--set`s: exit 0 or 2, never a panic; 2 names the key.
#[test]
fn binary_exits_0_or_2_without_panicking() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let keys = schema_keys();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("base.toml");
    std::fs::write(&cfg, BASE).unwrap();
    let mut runner = TestRunner::deterministic();
    for _ in 0..(24 * scale()) {
        let (k, v) = (key_strategy(), any_value()).new_tree(&mut runner).unwrap().current();
        let set = format!("{k}={v}");
        let out = Command::new(env!("CARGO_BIN_EXE_hxsim"))
            .args(["run", cfg.to_str().unwrap(), "-q", "--no-output", "--set", &set])
            .args(["--set", "simulation.measure_cycles=50", "--set", "simulation.warmup_cycles=0"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{set}: {err}");
        match out.status.code() {
            Some(0) => {}
            Some(2) => assert!(names_a_key(&err, &k, &keys), "{set}: {err}"),
            c => panic!("{set}: exit {c:?}: {err}"),
        }
    }
}
