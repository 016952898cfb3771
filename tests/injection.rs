//! Injection options of issue 15: throttling (`router.injection_throttle`, local thresholds and
//! the end-to-end window), injection into any VC
//! (`router.injection_vcs`), ejection into any VC (`router.ejection_vcs`), per-VC switch
//! allocation (`router.allocation`), and when a refused head is routed again (`router.reroute`,
//! issue 34).

use hxsim::config::{parse_str, Config};
use hxsim::engine::Progress;
use hxsim::sim::{self, RunOptions, RunResult};

fn config(base: &str, sets: &[&str]) -> Config {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    parse_str(base, "test", &sets).expect("valid test config")
}

fn run_on(cfg: &Config, threads: usize) -> RunResult {
    sim::run(cfg, &RunOptions { threads, ..Default::default() }, &Progress::default()).expect("run succeeds")
}

fn run(cfg: &Config) -> RunResult {
    run_on(cfg, 1)
}

/// Everything a run reports that depends on the model: equal for equal models.
fn fingerprint(r: &RunResult) -> String {
    let s = &r.summary;
    format!(
        "{} {} {} {} {:?} {:?} {:?} {:?}",
        s.accepted_load,
        s.average_latency,
        r.stats.generated_packets,
        r.stats.traversals,
        r.server_injected,
        r.server_accepted,
        r.link_phits,
        r.stats.samples.iter().map(|x| (x.injected_phits, x.accepted_phits, x.in_flight)).collect::<Vec<_>>()
    )
}

/// PolSP under Dimension Complement Reverse past saturation on HyperX 4x4x4 with 4 servers per
/// switch, the network where issue 15 saw the collapse; short windows for CI.
const DCR: &str = r#"
name = "inject"
seed = 1
[topology]
sides = [4, 4, 4]
servers_per_switch = 4
[routing]
algorithm = "surepath-polarized"
[traffic]
pattern = "dimension-complement-reverse"
load = 1.0
[simulation]
warmup_cycles = 500
measure_cycles = 1000
"#;

/// A threshold of 0 asks for a free fraction of at least 0, which always holds: both throttles
/// must then leave every result as it is without throttling.
#[test]
fn a_zero_threshold_never_throttles() {
    let off = fingerprint(&run(&config(DCR, &[])));
    for mode in ["switch", "route"] {
        let sets = [format!("router.injection_throttle={mode}"), "router.injection_threshold=0".to_string()];
        let sets: Vec<&str> = sets.iter().map(|s| s.as_str()).collect();
        assert_eq!(fingerprint(&run(&config(DCR, &sets))), off, "{mode}");
    }
}

/// A throttle holds servers back: at offered 1.0 the servers inject less than without it, the
/// network holds fewer packets, and a stricter threshold holds back more (a server injects under
/// threshold `x` only where it would under any threshold below `x`, as the watched space is the
/// same). With the strictest (`switch`, 1: every output of the switch empty, every credit back) a
/// server's packets leave its switch only one output's worth at a time, so the network holds well
/// under half the packets it holds unthrottled, when its buffers fill up.
#[test]
fn throttling_limits_injection_and_packets_in_flight() {
    let injected = |r: &RunResult| r.server_injected.iter().sum::<u64>();
    let peak = |r: &RunResult| r.stats.samples.iter().map(|s| s.in_flight).max().unwrap_or(0);
    let off = run(&config(DCR, &[]));
    let mut last = (injected(&off), peak(&off));
    for t in ["0.8", "1"] {
        let th = format!("router.injection_threshold={t}");
        let r = run(&config(DCR, &["router.injection_throttle=switch", &th]));
        let now = (injected(&r), peak(&r));
        assert!(
            now.0 < last.0 && now.1 < last.1,
            "threshold {t}: injected and peak in flight {now:?}, before {last:?}"
        );
        last = now;
    }
    assert!(last.1 < peak(&off) / 2, "peak in flight {} vs {} without throttling", last.1, peak(&off));
}

/// Below saturation a throttle must not hold a server back for long: at offered 0.1 the outputs
/// are nearly empty, so even `route` with threshold 0.5 lets every packet through and accepted
/// load equals offered within the noise of a 1,000-cycle window (about 25,600 phits; 2%).
#[test]
fn throttling_leaves_light_load_alone() {
    let r =
        run(&config(DCR, &["traffic.load=0.1", "router.injection_throttle=route", "router.injection_threshold=0.5"]));
    assert!((r.summary.accepted_load - 0.1).abs() < 0.002, "{}", r.summary.accepted_load);
}

/// Two switches of 8 servers each, bit complement: every server sends to the other switch through
/// one link, which carries 1/8 of what the servers offer, so the servers' input buffers fill.
const TWO_SWITCHES: &str = r#"
name = "two"
seed = 1
[topology]
sides = [2]
servers_per_switch = 8
[routing]
algorithm = "minimal"
vcs = 4
[traffic]
pattern = "bit-complement"
load = 1.0
[simulation]
warmup_cycles = 200
measure_cycles = 1800
"#;

/// With `injection_vcs = "zero"` a server's packets at its switch fit in one input VC (8 packets),
/// so the packets in flight are at most, per switch, 8 servers x 8 (server inputs) + 4 VCs x (4 +
/// 8) (the output to the other switch and the input behind it) + 8 x 4 (ejection outputs, VC 0),
/// 160, plus one packet on each of the 18 links: 338 for both. With `"any"` a server fills its 4
/// VCs (32 packets), so the network holds more than that bound: packets went to VCs above 0.
#[test]
fn any_vc_injection_uses_more_than_vc_zero() {
    let peak = |r: &RunResult| r.stats.samples.iter().map(|s| s.in_flight).max().unwrap_or(0);
    let bound = 2 * (8 * 8 + 4 * (4 + 8) + 8 * 4) + 18;
    let zero = run(&config(TWO_SWITCHES, &[]));
    assert!(peak(&zero) <= bound, "VC 0 only: {} > {bound}", peak(&zero));
    let any = run(&config(TWO_SWITCHES, &["router.injection_vcs=any"]));
    assert!(peak(&any) > bound, "any VC: {} <= {bound}", peak(&any));
    // Both deliver what the one link carries: 16 phits of a 16-phit packet per 16 cycles, shared
    // by 8 servers: 1/8 of link rate each.
    for r in [&zero, &any] {
        assert!((r.summary.accepted_load - 0.125).abs() < 0.01, "{}", r.summary.accepted_load);
    }
}

/// With one VC, "the lowest VC with a credit" is VC 0 whenever VC 0 has a credit, and a server
/// with no credit waits in both modes: `any` is then the same model as `zero`.
#[test]
fn any_vc_injection_with_one_vc_is_vc_zero() {
    let one = ["routing.algorithm=dor", "routing.vc_policy=none", "routing.vcs=1"];
    let zero = run(&config(DCR, &one));
    let any = run(&config(DCR, &[one[0], one[1], one[2], "router.injection_vcs=any"]));
    assert_eq!(fingerprint(&zero), fingerprint(&any));
}

/// With one VC, "the lowest VC of the server's port with room" is VC 0: `any` ejection is then the
/// same model as `zero`.
#[test]
fn any_vc_ejection_with_one_vc_is_vc_zero() {
    let one = ["routing.algorithm=dor", "routing.vc_policy=none", "routing.vcs=1", "traffic.pattern=uniform"];
    let zero = run(&config(DCR, &[&one[..], &["router.ejection_vcs=zero"]].concat()));
    let any = run(&config(DCR, &[&one[..], &["router.ejection_vcs=any"]].concat()));
    assert_eq!(fingerprint(&zero), fingerprint(&any));
}

/// Under uniform traffic past saturation a server's port receives bursts from many sources; with
/// VC 0 only it buffers 4 packets and the packets behind a full one block their input buffers,
/// while `any` gives it 4 per VC (6 VCs here). The link capacity bounds both (4 servers and 9
/// links per switch, 2.25 hops on average: 1.0), and the larger ejection buffer must show: on
/// 4x4x4 and 6x6x6 networks it raised accepted load at offered 1.0 by 2.6% and 3.5%, to within 0.5%
/// of CAMINOS's (docs/model.md, *Ejection into any VC*). In these short runs (500 + 1000 cycles)
/// the gain is about 1% of the link capacity, with seeds differing by up to 0.3%: every one of
/// three seeds must show a gain, and their mean at least half of it.
#[test]
fn any_vc_ejection_raises_uniform_saturation() {
    let uniform = ["routing.algorithm=minimal", "traffic.pattern=uniform", "router.allocator=random"];
    let mut gains = Vec::new();
    for seed in ["seed=1", "seed=2", "seed=3"] {
        let accepted =
            |ejection: &str| run(&config(DCR, &[&uniform[..], &[ejection, seed]].concat())).summary.accepted_load;
        let (zero, any) = (accepted("router.ejection_vcs=zero"), accepted("router.ejection_vcs=any"));
        assert!(any > zero && any < 1.0, "{seed}: ejection into VC 0: {zero}, into any VC: {any}");
        gains.push(any - zero);
    }
    let mean = gains.iter().sum::<f64>() / gains.len() as f64;
    assert!(mean > 0.005, "gains of `any` over `zero`: {gains:?}");
}

/// Every new option keeps results independent of the number of threads.
#[test]
fn injection_options_are_thread_invariant() {
    for sets in [
        vec!["router.injection_vcs=any"],
        vec!["router.ejection_vcs=any", "traffic.pattern=uniform"],
        vec!["router.ejection_vcs=any", "traffic.pattern=uniform", "router.allocation=vc"],
        vec!["router.allocation=vc", "router.allocator=random"],
        vec!["router.allocation=vc", "router.injection_vcs=any"],
        // SurePath keeps its selection costs; per-VC allocation adds the crossbars' free cycles
        // to what they depend on (debug builds check every kept cost against the port's state).
        vec!["router.allocation=vc", "routing.algorithm=surepath-polarized"],
        vec!["router.injection_throttle=switch", "router.injection_threshold=0.6"],
        vec!["router.injection_throttle=route", "router.injection_threshold=0.4"],
        vec!["router.injection_throttle=window", "router.injection_window=4"],
        vec!["router.injection_throttle=window", "router.injection_window=2", "routing.algorithm=surepath-omni"],
    ] {
        let cfg = config(DCR, &sets);
        let a = fingerprint(&run_on(&cfg, 1));
        for threads in [2, 3] {
            assert_eq!(fingerprint(&run_on(&cfg, threads)), a, "{sets:?} on {threads} threads");
        }
    }
}

/// `router.reroute = "output-frees"` changes only how long a refused head waits before it is
/// routed again: until the crossbar output it chose frees, instead of until every candidate's has.
/// Where a head's candidates are all on one port (dimension-order routing, and every head at its
/// destination switch, whose one candidate is its server's port), those are the same cycle, so
/// both modes skip exactly the same turns and every result is the same. SurePath's heads have
/// candidates on many ports, and there the mode takes effect; its results do not depend on the
/// number of threads either.
#[test]
fn reroute_waits_longer_only_where_a_head_has_other_ports() {
    let dor = |mode| run(&config(DCR, &["routing.algorithm=dor", "traffic.load=0.6", mode]));
    assert_eq!(
        fingerprint(&dor("router.reroute=output-frees")),
        fingerprint(&dor("router.reroute=each-turn")),
        "dimension order"
    );
    let frees = config(DCR, &["router.reroute=output-frees"]);
    let waits = fingerprint(&run(&frees));
    assert_ne!(waits, fingerprint(&run(&config(DCR, &[]))), "output-frees took no effect on SurePath");
    for threads in [2, 3] {
        assert_eq!(fingerprint(&run_on(&frees, threads)), waits, "output-frees on {threads} threads");
    }
}

/// `output-frees` needs port allocation: per-VC allocation has no refused turns to wait out.
#[test]
fn reroute_on_output_needs_port_allocation() {
    let sets = vec!["router.reroute=output-frees".to_string(), "router.allocation=vc".to_string()];
    let e = parse_str(DCR, "test", &sets).and_then(|c| c.validate().map(|_| c));
    let msg = format!("{}", e.expect_err("output-frees with per-VC allocation accepted"));
    assert!(msg.contains("router.reroute") && msg.contains("router.allocation"), "{msg}");
}

/// Per-VC allocation lets several VCs of one input cross the crossbar at once, so with `any`
/// injection a server's switch can take its packets at the server link's full rate even while
/// several wait; at a load below saturation the network delivers what is offered, as with the
/// default allocation.
#[test]
fn per_vc_allocation_delivers_below_saturation() {
    for sets in [vec!["router.allocation=vc"], vec!["router.allocation=vc", "router.injection_vcs=any"]] {
        let mut s = sets.clone();
        s.push("traffic.load=0.3");
        let r = run(&config(DCR, &s));
        assert!((r.summary.accepted_load - 0.3).abs() < 0.006, "{sets:?}: {}", r.summary.accepted_load);
    }
}

/// Bad values name the key and what is allowed (exit status 2 at the command line).
#[test]
fn bad_injection_values_are_refused() {
    for (set, key) in [
        ("router.injection_throttle=always", "router.injection_throttle"),
        ("router.injection_threshold=1.5", "router.injection_threshold"),
        ("router.injection_window=0", "router.injection_window"),
        ("router.injection_window=65536", "router.injection_window"),
        ("router.injection_vcs=all", "router.injection_vcs"),
        ("router.ejection_vcs=all", "router.ejection_vcs"),
        ("router.allocation=flit", "router.allocation"),
        ("router.reroute=never", "router.reroute"),
    ] {
        let sets = vec![set.to_string()];
        let e = parse_str(DCR, "test", &sets).and_then(|c| c.validate().map(|_| c));
        let msg = format!("{}", e.err().unwrap_or_else(|| panic!("{set} accepted")));
        assert!(msg.contains(key), "{set}: {msg}");
    }
}

/// The end-to-end window with one packet: a server sends its next packet when the acknowledgement
/// of the last one arrives. On an otherwise idle network (bit complement with dimension-order
/// routing on a 2-D or 3-D HyperX with 2 switches per dimension and one server per switch: every
/// server crosses `d` hops, and no two servers share a link, an input or an output) that is one
/// packet per round trip, `RTT = L + (d + 1)(X + L) + P - 1` (head leaves the server to tail at the
/// destination server: the zero-load latency of the network module docs) plus the acknowledgement's
/// `d (X + L)`. A measurement window of a whole number of round trips then delivers exactly
/// `P / RTT` phits per cycle and server.
#[test]
fn a_window_of_one_sends_one_packet_per_round_trip() {
    for (sides, d) in [("[2]", 1u64), ("[2,2,2]", 3)] {
        for (l, x, p) in [(1u64, 1u64, 16u64), (3, 2, 8)] {
            let rtt = l + (d + 1) * (x + l) + p - 1 + d * (x + l);
            let trips = 50;
            let sets = [
                format!("topology.sides={sides}"),
                "topology.servers_per_switch=1".into(),
                "routing.algorithm=dor".into(),
                "traffic.pattern=bit-complement".into(),
                format!("link.latency={l}"),
                format!("router.crossbar_latency={x}"),
                format!("packet.size_phits={p}"),
                "router.injection_throttle=window".into(),
                "router.injection_window=1".into(),
                "simulation.warmup_cycles=1000".into(),
                format!("simulation.measure_cycles={}", trips * rtt),
            ];
            let sets: Vec<&str> = sets.iter().map(|s| s.as_str()).collect();
            let r = run(&config(DCR, &sets));
            let want = p as f64 / rtt as f64;
            let got = r.summary.accepted_load;
            assert!((got - want).abs() < 1e-9, "sides {sides}, L {l}, X {x}, P {p}: {got} vs {p}/{rtt}");
            // Every server delivers the same number of packets: `trips` of them.
            assert!(r.server_accepted.iter().all(|&a| a == trips * p), "{:?}", r.server_accepted);
        }
    }
}

/// A packet is outstanding from the cycle it leaves its server until its acknowledgement is back,
/// which is at least until it is delivered: the packets in the network (injected, not delivered)
/// never exceed the window times the servers. Past saturation that bound binds (without the window
/// the network holds more); debug builds also assert it per server at every injection.
#[test]
fn packets_in_the_network_stay_within_the_windows() {
    let peak = |r: &RunResult| r.stats.samples.iter().map(|s| s.in_flight).max().unwrap_or(0);
    let servers = 64 * 4;
    let off = peak(&run(&config(DCR, &[])));
    for w in [1i64, 2, 4] {
        let ws = format!("router.injection_window={w}");
        let r = run(&config(DCR, &["router.injection_throttle=window", &ws]));
        let bound = w * servers;
        assert!(peak(&r) <= bound, "window {w}: {} packets in the network, bound {bound}", peak(&r));
        assert!(off > bound, "without the window the network holds {off}, not above {bound}");
    }
}

/// A window no server can fill (each server injects at most one packet per `P` = 16 cycles: under
/// 100 in this run) never holds a server back, and acknowledgements only re-evaluate servers: the
/// results are those without throttling.
#[test]
fn a_window_no_server_fills_changes_nothing() {
    let off = fingerprint(&run(&config(DCR, &[])));
    let wide = fingerprint(&run(&config(DCR, &["router.injection_throttle=window", "router.injection_window=1000"])));
    assert_eq!(wide, off);
}

/// Below saturation the window must not hold servers back for long: at offered 0.1 a server has a
/// packet outstanding for about a round trip (under 60 cycles here) every 160 cycles, so a window
/// of 4 is rarely full and accepted load equals offered within the noise (as for the thresholds).
#[test]
fn the_window_leaves_light_load_alone() {
    let r = run(&config(DCR, &["traffic.load=0.1", "router.injection_throttle=window", "router.injection_window=4"]));
    assert!((r.summary.accepted_load - 0.1).abs() < 0.002, "{}", r.summary.accepted_load);
}

/// Acknowledgements between partitions must respect the engine's lookahead, the smallest latency
/// of a cut link, also where link latencies differ: on a dragonfly with global links of 7 cycles
/// and local links of 1, an acknowledgement takes `d (X + 7)` (the largest latency per hop), never
/// less than the slowest link it could cross. Debug builds assert the lookahead on every message;
/// the results must be the same on 1 and 3 threads.
#[test]
fn acknowledgements_keep_the_lookahead_with_unequal_latencies() {
    let dragonfly = r#"
name = "dragonfly-window"
seed = 1
[topology]
kind = "dragonfly"
p = 2
a = 4
h = 2
[link]
latency = 1
class_latency.global = 7
[routing]
algorithm = "dragonfly-min"
[traffic]
pattern = "uniform"
load = 1.0
[router]
injection_throttle = "window"
injection_window = 2
[simulation]
warmup_cycles = 300
measure_cycles = 1000
"#;
    let cfg = config(dragonfly, &[]);
    let a = fingerprint(&run_on(&cfg, 1));
    assert_eq!(fingerprint(&run_on(&cfg, 3)), a);
}
