//! The per-port-class time series of `output.link_series` (issue 36, item 7): the port classes of
//! every family checked against each family's definition; the series' sums checked against the
//! summary's hop count; the minimal share of DOR (1) and of Valiant (its expectation, enumerated
//! over intermediates); the live ports per class across a failure event; the same series for 1, 2
//! and 3 threads, and the same results with the series on and off.

use hxsim::config::{self, Config};
use hxsim::engine::Progress;
use hxsim::metrics::LinkSeries;
use hxsim::sim::{self, RunOptions, RunResult};
use hxsim::topology::SwitchId;

fn parse(text: &str, sets: &[&str]) -> Config {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    config::parse_str(text, "test", &sets).unwrap_or_else(|e| panic!("{e}"))
}

fn run(text: &str, sets: &[&str], threads: usize) -> RunResult {
    let r = sim::run(&parse(text, sets), &RunOptions { threads, ..Default::default() }, &Progress::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.complete, "{sets:?}");
    r
}

/// A 4 x 4 HyperX with 2 servers per switch.
const HX: &str = "name = \"hx\"\nseed = 3\n[topology]\nkind = \"hyperx\"\nsides = [4, 4]\nservers_per_switch = 2\n";
const K: usize = 4;
const T: usize = 2;

/// Coordinates of switch `s` of a grid of `sides`, the first varying fastest.
fn coords(s: SwitchId, sides: &[usize]) -> Vec<usize> {
    let mut x = s as usize;
    sides
        .iter()
        .map(|&k| {
            let c = x % k;
            x /= k;
            c
        })
        .collect()
}

/// Every wired port's class is in range, and is what the family's definition says: on a grid the
/// one dimension in which the two ends' coordinates differ; on a dragonfly `global` exactly between
/// groups; on trees `upN` at one end of a link and `downN` at the other, and on a HyperZ or fat
/// tree `upN` from level `N` to `N + 1`.
#[test]
fn series_classes_follow_each_family_definition() {
    let families = [
        ("hyperx", "kind = \"hyperx\"\nsides = [3, 4, 2]\ntrunking = [1, 2, 1]\nservers_per_switch = 1"),
        ("torus", "kind = \"torus\"\nsides = [4, 3]\nservers_per_switch = 1"),
        ("mesh", "kind = \"mesh\"\nsides = [4, 3]\nservers_per_switch = 1"),
        ("dragonfly", "kind = \"dragonfly\"\np = 2\na = 4\nh = 2"),
        ("fattree", "kind = \"fattree\"\nzones = [4, 4, 4]\nroots = [1, 4, 16]"),
        ("hyperz", "kind = \"hyperz\"\nsides = [2, 3]\nzones = [2, 2]\nroots = [1, 2]"),
        ("clos", "kind = \"clos\"\nservers = 16\ndown = [4, 4]\nup = [4]\ntop_per_package = 1"),
        ("rrg", "kind = \"rrg\"\nswitches = 16\ndegree = 4\nservers_per_switch = 2"),
    ];
    for (family, topo_text) in families {
        let cfg = parse(&format!("[topology]\n{topo_text}\n"), &[]);
        let topo = sim::build_topology(&cfg).unwrap();
        let names = topo.series_classes();
        let mut used = vec![0usize; names.len()];
        for s in 0..topo.num_switches() as SwitchId {
            for p in 0..topo.switch_ports(s) as u16 {
                let Some((o, q)) = topo.neighbour(s, p) else { continue };
                let c = topo.series_class(s, p) as usize;
                assert!(c < names.len(), "{family}: class {c} of port {p} of switch {s}, of {names:?}");
                used[c] += 1;
                let (name, far) = (&names[c], &names[topo.series_class(o, q) as usize]);
                match family {
                    "hyperx" | "torus" | "mesh" => {
                        let sides = topo.grid().unwrap();
                        let (a, b) = (coords(s, &sides), coords(o, &sides));
                        let differ: Vec<usize> = (0..sides.len()).filter(|&d| a[d] != b[d]).collect();
                        assert_eq!(differ.len(), 1, "{family}: {s} and {o} are neighbours");
                        assert_eq!(name, &format!("dim{}", differ[0]), "{family}: port {p} of switch {s}");
                        assert_eq!(name, far);
                    }
                    "dragonfly" => {
                        let g = topo.group_size().unwrap() as SwitchId;
                        assert_eq!(name, if s / g == o / g { "local" } else { "global" }, "port {p} of {s}");
                        assert_eq!(name, far);
                    }
                    "fattree" | "hyperz" | "clos" => {
                        if let Some(n) = name.strip_prefix("up") {
                            assert_eq!(far, &format!("down{n}"), "{family}: far end of port {p} of {s}");
                        } else if let Some(n) = name.strip_prefix("down") {
                            assert_eq!(far, &format!("up{n}"), "{family}: far end of port {p} of {s}");
                        } else {
                            assert!(family == "hyperz" && name.starts_with("dim") && name == far, "{name}");
                        }
                        if let (Some(n), hxsim::topology::View::HyperZ(h)) = (name.strip_prefix("up"), topo.view()) {
                            let n: usize = n.parse().unwrap();
                            assert_eq!((h.level(s), h.level(o)), (n, n + 1), "{family}: port {p} of {s}");
                        }
                    }
                    _ => assert_eq!(name, "link"),
                }
            }
        }
        assert!(used.iter().all(|&u| u > 0), "{family}: a class without a port: {names:?} {used:?}");
    }
}

/// The totals of a finished series: phits per class, minimal and ejected packets.
fn totals(ls: &LinkSeries) -> (Vec<u64>, u64, u64) {
    let n = ls.intervals();
    let phits = (0..ls.classes).map(|c| (0..n).map(|k| ls.phits(k, c)).sum()).collect();
    (phits, (0..n).map(|k| ls.minimal(k)).sum(), (0..n).map(|k| ls.ejected(k)).sum())
}

/// A fixed workload of 40 packets per server on the 4 x 4 HyperX, drained.
fn fixed(routing: &str) -> RunResult {
    let sets =
        ["traffic.mode=fixed", "traffic.workload_phits=640", "traffic.pattern=uniform", "output.link_series=true"];
    let routing = format!("routing.algorithm={routing}");
    let all: Vec<&str> = sets.iter().copied().chain([routing.as_str()]).collect();
    let r = run(HX, &all, 1);
    let packets = (K * K * T * 40) as u64;
    assert_eq!(r.stats.delivered_packets, packets, "every packet of the workload is counted");
    r
}

/// DOR on a 2-D HyperX under uniform traffic: every packet is minimal, and the phits per
/// dimension are those of one hop per dimension in which the source and destination switches
/// differ. A destination is uniform over the `k^2 T - 1` other servers, `(k - 1) k T` of which
/// differ in a given coordinate: a packet crosses dimension `d` with probability `(k - 1) k T /
/// (k^2 T - 1)` (24/31 here). The phits of all classes are `P` per switch-to-switch hop, and the
/// hops are the summary's switch traversals less one per packet.
#[test]
fn dor_is_all_minimal_and_crosses_each_dimension_as_derived() {
    let r = fixed("dor");
    let ls = &r.stats.link_series;
    assert_eq!(ls.classes, 2);
    let (phits, minimal, ejected) = totals(ls);
    let packets = r.stats.delivered_packets;
    assert_eq!(ejected, packets);
    assert_eq!(minimal, packets, "DOR paths are minimal");
    for k in 0..ls.intervals() {
        assert_eq!(ls.minimal(k), ls.ejected(k), "interval {k}");
    }
    let plen = parse(HX, &[]).packet.size_phits as u64;
    let hops = r.stats.hops_sum - packets;
    assert_eq!(phits.iter().sum::<u64>(), hops * plen, "link phits = switch-to-switch hops x P");
    let p = ((K - 1) * K * T) as f64 / ((K * K * T - 1) as f64);
    // Standard error of a proportion over 1,280 packets: about 0.012; allowed 4 of them.
    let tol = 4.0 * (p * (1.0 - p) / packets as f64).sqrt();
    for (d, &ph) in phits.iter().enumerate() {
        let share = ph as f64 / (plen * packets) as f64;
        assert!((share - p).abs() < tol, "dimension {d}: {share} of packets crossed it, expected {p} +- {tol}");
    }
}

/// Bounds on the share of minimal paths under Valiant on the k x k HyperX with uniform traffic.
/// The intermediate `i` is uniform over the switches, and the path goes minimally to it, then
/// minimally to the destination; it is minimal when `i` lies on a shortest path, `H(s, i) + H(i, d)
/// = H(s, d)` (the lower bound). The router also ejects a packet that reaches its destination
/// switch on the way to `i`, which its adaptive first leg may do when `d` lies on a shortest path
/// from `s` to `i`, `H(s, d) + H(d, i) = H(s, i)`: the upper bound counts all of those. Averaged
/// over sources, destinations (uniform over the other servers) and intermediates.
fn valiant_minimal_bounds() -> (f64, f64) {
    let n = K * K;
    let h = |a: usize, b: usize| (a % K != b % K) as usize + (a / K != b / K) as usize;
    let (mut lo, mut hi, mut all) = (0usize, 0usize, 0usize);
    for s in 0..n * T {
        for d in (0..n * T).filter(|&d| d != s) {
            let (a, b) = (s / T, d / T);
            for i in 0..n {
                let on_path = h(a, i) + h(i, b) == h(a, b);
                lo += on_path as usize;
                hi += (on_path || h(a, b) + h(b, i) == h(a, i)) as usize;
                all += 1;
            }
        }
    }
    (lo as f64 / all as f64, hi as f64 / all as f64)
}

/// Valiant: the minimal share lies within its bounds (both well below 1), and the phits of all
/// classes are still `P` per switch-to-switch hop.
#[test]
fn valiant_minimal_share_is_within_its_bounds() {
    let r = fixed("valiant");
    let ls = &r.stats.link_series;
    let (phits, minimal, ejected) = totals(ls);
    let packets = r.stats.delivered_packets;
    assert_eq!(ejected, packets);
    assert_eq!(phits.iter().sum::<u64>(), (r.stats.hops_sum - packets) * parse(HX, &[]).packet.size_phits as u64);
    let (lo, hi) = valiant_minimal_bounds();
    assert!(hi < 0.35, "{hi}");
    let share = minimal as f64 / packets as f64;
    // Standard error of a proportion over 1,280 packets: at most 0.014; allowed 4 of them.
    let tol = 4.0 * (0.25 / packets as f64).sqrt();
    assert!(share > lo - tol && share < hi + tol, "minimal share {share}, expected within [{lo}, {hi}] +- {tol}");
}

/// The summary without what measures the machine (wall times, and the routing's rebuild time).
fn model(r: &RunResult) -> hxsim::metrics::Summary {
    let mut s = r.summary.clone().without_timings();
    for e in &mut s.failure_events {
        e.rebuild_seconds = None;
    }
    s
}

/// Bernoulli traffic with a failure event at cycle 400 (links `[0,0]` and `[5,1]`, both in
/// dimension 0): the live ports per class are `k (k - 1)` per switch row and dimension, 48 each,
/// and 4 fewer output ports in dimension 0 (both directions of two links) from the event on; the
/// buffers never hold more than the ports' VCs can; the series and the results are the same for
/// 1, 2 and 3 threads; and the results are those of the same run without the series.
#[test]
fn series_are_thread_independent_and_leave_results_alone() {
    let sets = [
        "routing.algorithm=surepath-polarized",
        "traffic.load=0.7",
        "simulation.warmup_cycles=200",
        "simulation.measure_cycles=600",
        "faults.events=[{cycle=400, links=[[0,0],[5,1]]}]",
    ];
    let on: Vec<&str> = sets.iter().copied().chain(["output.link_series=true"]).collect();
    let reference = run(HX, &on, 1);
    let ls = &reference.stats.link_series;
    let sc = 100;
    let per_dim = (K * K * (K - 1)) as u64;
    let vcs = reference.summary.vc_phits.len() as u64;
    let cfg = parse(HX, &on);
    let room = vcs * (cfg.router.input_buffer_packets + cfg.router.output_buffer_packets) as u64;
    // Phits of packets sent in the last cycles run into a ninth interval, past the run's end,
    // where no census was taken.
    assert!(ls.intervals() >= 8 && ls.intervals() <= 9, "{}", ls.intervals());
    assert_eq!((ls.ports(8, 0), ls.ports(8, 1), ls.buffered(8, 0)), (0, 0, 0));
    for k in 0..8 {
        let dim0 = if (k as u64 + 1) * sc > 400 { per_dim - 4 } else { per_dim };
        assert_eq!((ls.ports(k, 0), ls.ports(k, 1)), (dim0, per_dim), "interval {k}");
        for c in 0..2 {
            assert!(ls.buffered(k, c) <= room * ls.ports(k, c), "interval {k} class {c}");
        }
        // At most one phit per cycle per live port (a port that failed sent until the event).
        assert!(ls.phits(k, 0) + ls.phits(k, 1) <= sc * 2 * per_dim, "interval {k}");
    }
    assert!(ls.buffered(7, 0) + ls.buffered(7, 1) > 0, "a loaded network holds packets");
    let (_, minimal, ejected) = totals(ls);
    assert!(minimal > 0 && ejected > minimal / 2, "{minimal} of {ejected}");
    for threads in [2, 3] {
        let r = run(HX, &on, threads);
        assert_eq!(&r.stats.link_series, ls, "{threads} threads");
        assert_eq!(model(&r), model(&reference));
    }
    let off = run(HX, &sets, 2);
    assert_eq!(off.stats.link_series.classes, 0);
    assert_eq!(model(&off), model(&reference));
    assert_eq!(off.stats.samples, reference.stats.samples);
}

/// A dragonfly and a fat tree: the series of their classes are the same for 1 and 3 threads.
#[test]
fn other_families_series_are_thread_independent() {
    let df = "name = \"df\"\nseed = 5\n[topology]\nkind = \"dragonfly\"\np = 2\na = 4\nh = 2\n";
    let ft = "name = \"ft\"\nseed = 5\n[topology]\nkind = \"fattree\"\nzones = [4, 4]\nroots = [1, 4]\n";
    for (text, routing) in [(df, "dragonfly-valiant"), (ft, "nca")] {
        let sets = [
            "simulation.warmup_cycles=200",
            "simulation.measure_cycles=300",
            "traffic.load=0.6",
            "output.link_series=true",
        ];
        let routing = format!("routing.algorithm={routing}");
        let all: Vec<&str> = sets.iter().copied().chain([routing.as_str()]).collect();
        let one = run(text, &all, 1);
        let (phits, _, ejected) = totals(&one.stats.link_series);
        assert!(phits.iter().all(|&p| p > 0) && ejected > 0, "{routing}: {phits:?}");
        let three = run(text, &all, 3);
        assert_eq!(three.stats.link_series, one.stats.link_series, "{routing}");
    }
}

/// The results file of a run with the series: `/timeseries` has the per-class columns, whose sums
/// are the run's series, and `hxsim plot`'s time-series figure gets a panel of one load curve per
/// class and the minimal share.
#[test]
fn results_file_and_figure_show_the_classes() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("hx.toml");
    std::fs::write(&cfg, HX).unwrap();
    let out = dir.path().join("r.h5");
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_hxsim"))
        .args(["run", cfg.to_str().unwrap(), "-q", "-o", out.to_str().unwrap()])
        .args(["--set", "output.link_series=true", "--set", "simulation.warmup_cycles=200"])
        .args(["--set", "simulation.measure_cycles=300", "--set", "traffic.load=0.5"])
        .status()
        .unwrap();
    assert!(st.success());
    let same = run(
        HX,
        &[
            "output.link_series=true",
            "simulation.warmup_cycles=200",
            "simulation.measure_cycles=300",
            "traffic.load=0.5",
        ],
        1,
    );
    let f = hdf5::File::open(&out).unwrap();
    let ts = f.group("timeseries").unwrap();
    let phits: Vec<u64> = ts.dataset("link_phits").unwrap().read_raw().unwrap();
    assert_eq!(ts.dataset("link_phits").unwrap().shape(), vec![5, 2]);
    let ls = &same.stats.link_series;
    let want: Vec<u64> = (0..5).flat_map(|k| [ls.phits(k, 0), ls.phits(k, 1)]).collect();
    assert_eq!(phits, want);
    let fig = hxsim::plot::timeseries_figure(&f).unwrap();
    let panel = fig.panels.iter().find(|p| p.title == "Links by class").expect("a links panel");
    let labels: Vec<&str> = panel.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["dim0 link load", "dim1 link load", "minimal share"]);
    // Minimal routing: every packet minimal.
    assert!(panel.series[2].points.iter().all(|&(_, y)| y == 1.0), "{:?}", panel.series[2].points);
}
