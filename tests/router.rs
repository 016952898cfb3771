//! The router the papers' figures assume (issue 15): fair allocation by default, the steady-state
//! verdict of every run, and the baselines as their papers define them.

use hxsim::config::{parse_str, Config};
use hxsim::engine::Progress;
use hxsim::sim::{self, RunOptions, RunResult};

fn config(base: &str, sets: &[&str]) -> Config {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    parse_str(base, "test", &sets).expect("valid test config")
}

fn run(cfg: &Config) -> RunResult {
    sim::run(cfg, &RunOptions { threads: 1, ..Default::default() }, &Progress::default()).expect("run succeeds")
}

/// The issue's bit-complement case at CI size: HyperX 4x4, T = 16 (N = 256), Minimal, load 0.9.
const BIT_COMPLEMENT: &str = r#"
name = "fair"
seed = 1
[topology]
sides = [4, 4]
servers_per_switch = 16
[traffic]
pattern = "bit-complement"
load = 0.9
[simulation]
warmup_cycles = 1000
measure_cycles = 2000
"#;

/// Injected phits per local server index, summed over switches.
fn per_class(r: &RunResult, t: usize) -> Vec<u64> {
    let mut c = vec![0u64; t];
    for (i, &x) in r.server_injected.iter().enumerate() {
        c[i % t] += x;
    }
    c
}

/// Bit complement sends every server of a switch to one other switch, so all 16 compete for the
/// same two minimal outputs, which also carry transit packets. With the default (age) allocator an
/// output grants in order of arrival, so servers that keep requesting take turns: over a window in
/// which a server injects `k` packets every other server of its switch injects `k +- 1`. Here `k` is
/// about `0.0625 x 2000 / 16 ~ 8`, so Jain's index is at least `1 / (1 + (1/8)^2) ~ 0.98` and every
/// server index class gets at least 7/8 of the mean; the test asserts the issue's bound (0.85, half
/// the mean), with that margin for the window's edges. The old iSLIP pointer wraps to server 0 after
/// every transit grant and fails both.
#[test]
fn default_allocator_is_fair_where_islip_starves_high_server_indices() {
    let t = 16;
    for (alloc, fair) in [(None, true), (Some("router.allocator=islip"), false)] {
        let cfg = config(BIT_COMPLEMENT, alloc.as_slice());
        let r = run(&cfg);
        let classes = per_class(&r, t);
        let mean = classes.iter().sum::<u64>() as f64 / t as f64;
        let min = *classes.iter().min().unwrap() as f64;
        let (jain, share) = (r.summary.jain_index, min / mean);
        if fair {
            assert!(jain >= 0.85 && share >= 0.5, "{alloc:?}: Jain {jain:.3}, weakest class {share:.3} of the mean");
        } else {
            assert!(jain < 0.5 && share < 0.1, "{alloc:?}: Jain {jain:.3}, weakest class {share:.3}: bias gone?");
        }
        assert!((r.summary.accepted_load - 0.0625).abs() < 0.002, "{alloc:?}: {}", r.summary.accepted_load);
    }
}

/// Dimension Complement Reverse at offered 1.0 on HyperX 4x4x4 with 4 servers per switch, 2,000 +
/// 2,000 cycles: PolSP's accepted load decays through the window (the collapse of issue 15: -47%
/// and -61% with seeds 1 and 2), Valiant's stays (+0.2%, +2.7%), far on either side of the 5%
/// tolerance, and both far beyond the noise of 300-packet intervals.
#[test]
fn steady_state_tells_polsp_collapse_from_valiant() {
    let base = r#"
name = "steady"
seed = 1
[topology]
sides = [4, 4, 4]
servers_per_switch = 4
[traffic]
pattern = "dimension-complement-reverse"
load = 1.0
[simulation]
warmup_cycles = 2000
measure_cycles = 2000
"#;
    let v = run(&config(base, &["routing.algorithm=valiant"])).summary;
    assert!(v.steady_state == Some(true) && v.accepted_trend.abs() < 0.05, "Valiant: {v:?}");
    let p = run(&config(base, &["routing.algorithm=surepath-polarized"])).summary;
    assert!(p.steady_state == Some(false) && p.accepted_trend < -0.2, "PolSP: {p:?}");
}

/// `measure_until_steady` doubles the run until the last window is steady or the bound is hit:
/// below saturation the first window is steady, so nothing is added.
#[test]
fn measure_until_steady_keeps_a_steady_window_as_it_is() {
    let cfg = config(
        BIT_COMPLEMENT,
        &["traffic.pattern=uniform", "traffic.load=0.3", "simulation.measure_until_steady=true"],
    );
    let r = run(&cfg);
    assert_eq!(r.summary.steady_state, Some(true));
    assert_eq!(r.summary.cycles, 3000);
}

/// ECMP (DAVC section 7.3) is oblivious: a packet's route is fixed by its hash key, so with one VC
/// per hop and an idle network every packet of a pair still spreads over the shortest paths, and
/// the choice never depends on occupancy; here only that it runs, delivers at low load, and differs
/// from the adaptive variant under load (which reads occupancy).
#[test]
fn ecmp_is_oblivious_and_min_ad_has_a_dor_escape() {
    let base = r#"
name = "baselines"
seed = 1
[topology]
sides = [4, 4, 4]
servers_per_switch = 4
[traffic]
load = 0.3
[simulation]
warmup_cycles = 500
measure_cycles = 1000
"#;
    for alg in ["ecmp", "ecmp-adaptive"] {
        let r = run(&config(base, &[&format!("routing.algorithm={alg}")]));
        assert!((r.summary.accepted_load - 0.3).abs() < 0.02, "{alg}: {}", r.summary.accepted_load);
    }
    let heavy = |alg: &str| {
        run(&config(base, &[&format!("routing.algorithm={alg}"), "traffic.pattern=bit-rotate", "traffic.load=0.8"]))
            .summary
    };
    assert_ne!(heavy("ecmp").accepted_load, heavy("ecmp-adaptive").accepted_load);
    let r = run(&config(base, &["routing.vc_policy=dor-escape", "traffic.load=0.5"]));
    assert!((r.summary.accepted_load - 0.5).abs() < 0.02, "Min-AD: {}", r.summary.accepted_load);
}
