//! The dragonfly, torus, mesh, random regular graph, Kautz graph and edge-list graph through the
//! whole simulator (issue 11): `hxsim analyze` gives the counts of each family's definition
//! (computed here from the definitions, not pasted) and its diameter; a global-link latency
//! reaches the engine's lookahead and the zero-load latency; results do not depend on the thread
//! count; the adversarial group pattern and the family routings run, and refuse what they cannot.

use hxsim::config::{self, Config};
use hxsim::engine::Progress;
use hxsim::metrics::Summary;
use hxsim::sim::{self, RunOptions};
use std::process::{Command, Output};

fn parse(text: &str, sets: &[&str]) -> Config {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    config::parse_str(text, "test", &sets).unwrap_or_else(|e| panic!("{e}"))
}

fn hxsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).output().expect("hxsim runs")
}

fn analyze(text: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, text).unwrap();
    let out = hxsim(&["analyze", path.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `(switches, servers, links, radix, diameter)` as `hxsim analyze` reports them.
fn counts(v: &serde_json::Value) -> (u64, u64, u64, u64, u64) {
    let g = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
    assert_eq!(v["connected"], true);
    (g("switches"), g("servers"), g("links"), g("radix"), g("diameter"))
}

#[test]
fn analyze_gives_the_definitions_counts_and_diameters() {
    // Dragonfly DF(p, a, h) (Kim et al. section 3.1): g = a h + 1 groups of a routers; a complete
    // graph in each group and one global link per pair of groups; radix p + (a - 1) + h; diameter 3
    // (local, global, local).
    let (p, a, h) = (6u64, 12u64, 6u64);
    let g = a * h + 1;
    let v = analyze(&format!("[topology]\nkind = \"dragonfly\"\np = {p}\na = {a}\nh = {h}\n"));
    assert_eq!(counts(&v), (a * g, p * a * g, g * a * (a - 1) / 2 + g * (g - 1) / 2, p + a - 1 + h, 3));
    assert_eq!(v["details"]["groups"], g);
    assert_eq!((a * g, p * a * g, p + a - 1 + h), (876, 5256, 23), "DAVC section 7.1");

    // RRG(N, k, r) (DAVC section 7.1): N switches, r links each (N r / 2 links), k - r servers.
    // Diameter: the Moore bound, 1 + r sum_{i<D} (r-1)^i >= N, gives D >= 3. Whether 3 suffices:
    // the r (r-1)^2 = 4352 link ends leaving a switch's 2-ball land on any given other switch with
    // probability 1 - exp(-4352 / N) each time, so about N^2/2 exp(-4352/N) = 2,650 pairs are 4 hops
    // apart in a random 17-regular graph on 876 switches: the diameter is 4.
    let (n, k, r) = (876u64, 23u64, 17u64);
    let v = analyze(&format!(
        "seed = 1\n[topology]\nkind = \"rrg\"\nswitches = {n}\ndegree = {r}\nservers_per_switch = {}\n",
        k - r
    ));
    let mut moore = (1u64, 0u64, 1u64);
    while moore.0 < n {
        moore = (moore.0 + r * moore.2, moore.1 + 1, moore.2 * (r - 1));
    }
    assert_eq!(moore.1, 3);
    let far_pairs = (n * n) as f64 / 2.0 * (-((r * (r - 1) * (r - 1)) as f64) / n as f64).exp();
    assert!(far_pairs > 100.0, "{far_pairs}");
    assert_eq!(counts(&v), (n, n * (k - r), n * r / 2, k, moore.1 + 1));

    // Torus 7x7x7 (k-ary n-cube, 4 servers each as in the Nue paper's tori): k^n switches, n k^n
    // links, radix 2n + 4, diameter n floor(k/2).
    let (kk, nn, t) = (7u64, 3u32, 4u64);
    let v = analyze(&format!("[topology]\nkind = \"torus\"\nsides = [7, 7, 7]\nservers_per_switch = {t}\n"));
    let sw = kk.pow(nn);
    assert_eq!(counts(&v), (sw, t * sw, nn as u64 * sw, 2 * nn as u64 + t, nn as u64 * (kk / 2)));
    // The mesh: n (k - 1) k^(n-1) links, diameter n (k - 1).
    let v = analyze(&format!("[topology]\nkind = \"mesh\"\nsides = [7, 7, 7]\nservers_per_switch = {t}\n"));
    assert_eq!(
        counts(&v),
        (sw, t * sw, nn as u64 * (kk - 1) * kk.pow(nn - 1), 2 * nn as u64 + t, nn as u64 * (kk - 1))
    );

    // Kautz(d, k) (Li et al.; Nue section 2: Kautz(7,3) with 2,352 terminals): (d + 1) d^(k-1)
    // switches, (d + 1) d^k arcs, each a bidirectional link, so radix 2d + servers; diameter k.
    let (d, kz) = (7u64, 3u32);
    let sw = (d + 1) * d.pow(kz - 1);
    let per = 2352 / sw;
    assert_eq!(per * sw, 2352);
    let v =
        analyze(&format!("[topology]\nkind = \"kautz\"\ndegree = {d}\ndiameter = {kz}\nservers_per_switch = {per}\n"));
    assert_eq!(counts(&v), (sw, 2352, (d + 1) * d.pow(kz), 2 * d + per, kz as u64));
}

const DF_SMALL: &str = "name = \"df\"\nseed = 5\n[topology]\nkind = \"dragonfly\"\np = 2\na = 4\nh = 2\n";

/// Mean of `f(src switch, dst switch)` over ordered pairs of distinct servers of `DF(p, a, h)`.
fn mean_over_server_pairs(p: usize, a: usize, h: usize, f: impl Fn(usize, usize) -> f64) -> f64 {
    let n = a * (a * h + 1);
    let (mut sum, mut pairs) = (0.0, 0.0);
    for x in 0..n {
        for y in 0..n {
            let w = if x == y { p * (p - 1) } else { p * p } as f64;
            sum += w * f(x, y);
            pairs += w;
        }
    }
    sum / pairs
}

#[test]
fn global_link_latency_reaches_lookahead_and_zero_load_latency() {
    let (p, a, h, lg) = (2usize, 4usize, 2usize, 10u64);
    let g = a * h + 1;
    let sets = ["link.class_latency.global=10", "routing.algorithm=dragonfly-min"];
    let cfg = parse(DF_SMALL, &sets);
    // Lookahead: blocks of one group each cut only global links; halves cut local links too.
    let s = hxsim::commands::partition::partition_summary(&cfg, g, Some("block")).unwrap();
    assert_eq!(s.methods[0].lookahead, Some(lg as u32));
    let s = hxsim::commands::partition::partition_summary(&cfg, 2, Some("block")).unwrap();
    assert_eq!(s.methods[0].lookahead, Some(cfg.link.latency as u32));

    // Zero-load latency of Kim et al.'s minimal routes (palm tree: group link j of group G reaches
    // group G + j + 1, owned by router j / h): server link L, a crossbar X per switch crossed, the
    // latency of each link, the ejection link L, and P - 1 for the tail.
    let (l, x, pp) = (cfg.link.latency as f64, cfg.router.crossbar_latency as f64, cfg.packet.size_phits as f64);
    let route = |s: usize, d: usize| -> (f64, f64) {
        let (gs, gd, rs, rd) = (s / a, d / a, s % a, d % a);
        if s == d {
            (0.0, 0.0)
        } else if gs == gd {
            (1.0, 0.0)
        } else {
            let j = (gd + g - gs - 1) % g;
            let back = a * h - 1 - j;
            (((j / h != rs) as u8 + (back / h != rd) as u8) as f64, 1.0)
        }
    };
    let expected = mean_over_server_pairs(p, a, h, |s, d| {
        let (local, global) = route(s, d);
        2.0 * l + (local + global + 1.0) * x + local * l + global * lg as f64 + pp - 1.0
    });
    let hops = mean_over_server_pairs(p, a, h, |s, d| {
        let (local, global) = route(s, d);
        local + global + 1.0
    });
    let cfg = parse(
        DF_SMALL,
        &[&sets[..], &["traffic.load=0.01", "simulation.warmup_cycles=200", "simulation.measure_cycles=60000"]]
            .concat(),
    );
    let r = sim::run(&cfg, &RunOptions { threads: 1, ..Default::default() }, &Progress::default()).unwrap();
    let s = &r.summary;
    eprintln!("zero-load latency {} (derived {expected}), hops {} (derived {hops})", s.average_latency, s.average_hops);
    assert!(s.packets_delivered > 2000, "{}", s.packets_delivered);
    assert!((s.average_hops - hops).abs() / hops < 0.03, "hops {} vs {hops}", s.average_hops);
    assert!(
        s.average_latency >= expected - 0.5 && s.average_latency <= expected * 1.03,
        "latency {} vs zero-load {expected}",
        s.average_latency
    );
    // And the run with cross-thread global links of 10 cycles is the same simulation.
    let r3 = sim::run(&cfg, &RunOptions { threads: 3, ..Default::default() }, &Progress::default()).unwrap();
    assert_eq!(r3.summary.average_latency, s.average_latency);
    assert_eq!(r3.summary.packets_delivered, s.packets_delivered);
}

fn summary(text: &str, sets: &[&str], threads: usize) -> Summary {
    let mut all = vec!["simulation.warmup_cycles=200", "simulation.measure_cycles=400"];
    all.extend_from_slice(sets);
    let r = sim::run(&parse(text, &all), &RunOptions { threads, ..Default::default() }, &Progress::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.complete);
    r.summary.without_timings()
}

#[test]
fn every_new_family_gives_the_same_results_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ring.edges");
    // A ring of 8 switches with two chords, as a user's machine file.
    std::fs::write(&file, "# ring\n0 1\n1 2\n2 3\n3 4\n4 5\n5 6\n6 7\n7 0\n0 4\n2 6 # chord\n").unwrap();
    let graph = format!("[topology]\nkind = \"graph\"\nfile = \"{}\"\nservers_per_switch = 2\n", file.display());
    let df = DF_SMALL.to_string();
    let torus = "[topology]\nkind = \"torus\"\nsides = [4, 3]\nservers_per_switch = 2\n".to_string();
    let mesh = "[topology]\nkind = \"mesh\"\nsides = [4, 3]\nservers_per_switch = 2\n".to_string();
    let rrg = "[topology]\nkind = \"rrg\"\nswitches = 16\ndegree = 4\nservers_per_switch = 2\n".to_string();
    let kautz = "[topology]\nkind = \"kautz\"\ndegree = 2\ndiameter = 3\nservers_per_switch = 2\n".to_string();
    let cases: Vec<(&String, Vec<&str>)> = vec![
        (&df, vec!["routing.algorithm=dragonfly-min", "traffic.load=0.6", "link.class_latency.global=4"]),
        (&df, vec!["routing.algorithm=dragonfly-valiant", "traffic.pattern=adversarial-group", "traffic.load=0.5"]),
        (&df, vec!["routing.algorithm=ugal", "traffic.pattern=adversarial-group", "traffic.load=0.8"]),
        (&df, vec!["routing.algorithm=minimal", "routing.vc_policy=davc-np", "traffic.load=0.5"]),
        (&torus, vec!["routing.algorithm=torus-dor", "traffic.load=0.7"]),
        (&torus, vec!["traffic.mode=fixed", "traffic.workload_phits=160", "routing.algorithm=torus-dor"]),
        (&mesh, vec!["routing.algorithm=torus-dor", "traffic.load=0.4"]),
        (&rrg, vec!["routing.algorithm=minimal", "routing.vc_policy=davc-p", "traffic.load=0.6"]),
        (&kautz, vec!["routing.algorithm=minimal", "routing.vc_policy=davc-n", "traffic.load=0.5"]),
        (&graph, vec!["routing.algorithm=minimal", "traffic.load=0.5"]),
    ];
    for (text, sets) in cases {
        let reference = summary(text, &sets, 1);
        assert!(reference.packets_delivered > 50, "{sets:?}: {}", reference.packets_delivered);
        for t in [2, 3] {
            assert_eq!(summary(text, &sets, t), reference, "{sets:?}, {t} threads on {text}");
        }
    }
}

#[test]
fn nue_and_updown_give_the_same_results_for_any_thread_count() {
    // Table-based routings on faulty networks: the tables are built once, deterministically, so
    // 1 and 3 threads simulate the same packets.
    let torus = "seed = 2\n[topology]\nkind = \"torus\"\nsides = [4, 4, 3]\nservers_per_switch = 2\n".to_string();
    let rrg = "[topology]\nkind = \"rrg\"\nswitches = 16\ndegree = 4\nservers_per_switch = 2\n".to_string();
    let cases: Vec<(&String, Vec<&str>)> = vec![
        (&torus, vec!["routing.algorithm=nue", "routing.vcs=1", "faults.random_links=3", "traffic.load=0.5"]),
        (&torus, vec!["routing.algorithm=nue", "routing.vcs=3", "faults.random_links=3", "traffic.load=0.7"]),
        (
            &torus,
            vec!["routing.algorithm=updown", "routing.escape_root=5", "faults.random_links=3", "traffic.load=0.5"],
        ),
        (&rrg, vec!["routing.algorithm=nue", "routing.vcs=2", "traffic.load=0.6"]),
        (&rrg, vec!["routing.algorithm=updown", "routing.vcs=2", "traffic.load=0.6"]),
    ];
    for (text, sets) in cases {
        let reference = summary(text, &sets, 1);
        assert!(reference.packets_delivered > 50, "{sets:?}: {}", reference.packets_delivered);
        assert_eq!(summary(text, &sets, 3), reference, "{sets:?}, 3 threads on {text}");
    }
}

#[test]
fn nue_and_updown_refuse_bad_keys_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let torus = dir.path().join("t.toml");
    std::fs::write(&torus, "[topology]\nkind = \"torus\"\nsides = [4, 4]\nservers_per_switch = 1\n").unwrap();
    for (sets, key) in [
        (["routing.algorithm=updown", "routing.escape_root=16"], "routing.escape_root"),
        (["routing.algorithm=nue", "routing.vc_policy=davc-n"], "routing.vc_policy"),
        (["routing.algorithm=nue", "routing.vcs=65"], "routing.vcs"),
    ] {
        let out = hxsim(&["run", torus.to_str().unwrap(), "--no-output", "--set", sets[0], "--set", sets[1]]);
        assert_eq!(out.status.code(), Some(2), "{sets:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(key) && !err.contains("panicked"), "{sets:?}: {err}");
    }
}

#[test]
fn group_pattern_and_family_routings_refuse_what_they_cannot_do() {
    let dir = tempfile::tempdir().unwrap();
    let torus = dir.path().join("t.toml");
    std::fs::write(&torus, "[topology]\nkind = \"torus\"\nsides = [4, 4]\nservers_per_switch = 1\n").unwrap();
    for (set, key) in [
        ("traffic.pattern=adversarial-group", "traffic.pattern"),
        ("routing.algorithm=dragonfly-min", "routing.algorithm"),
        ("link.class_latency.global=10", "link.class_latency.global"),
    ] {
        let out = hxsim(&["run", torus.to_str().unwrap(), "--no-output", "--set", set]);
        assert_eq!(out.status.code(), Some(2), "{set}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(key), "{set}: {err}");
    }
    // traffic.group_switches: only with the group pattern, and a divisor of the 16 switches.
    for sets in [
        ["traffic.pattern=uniform", "traffic.group_switches=4"],
        ["traffic.pattern=adversarial-group", "traffic.group_switches=3"],
        ["traffic.pattern=adversarial-group", "traffic.group_switches=16"],
    ] {
        let out = hxsim(&["run", torus.to_str().unwrap(), "--no-output", "--set", sets[0], "--set", sets[1]]);
        assert_eq!(out.status.code(), Some(2), "{sets:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("traffic.group_switches") && !err.contains("panicked"), "{sets:?}: {err}");
    }
    // An edge-list file's error names the file and the line.
    let bad = dir.path().join("bad.edges");
    std::fs::write(&bad, "0 1\n1 2\n2 2\n").unwrap();
    let cfg = dir.path().join("g.toml");
    std::fs::write(
        &cfg,
        format!("[topology]\nkind = \"graph\"\nfile = \"{}\"\nservers_per_switch = 1\n", bad.display()),
    )
    .unwrap();
    let out = hxsim(&["analyze", cfg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.edges:3") && err.contains("self-loop"), "{err}");
}

/// DAVC section 7.1's adversarial pattern on a topology without groups: with
/// `traffic.group_switches = g`, the servers of switches `g k .. g (k + 1)` send only to those of
/// the next `g` switches (the last group to the first), and reach every server there.
#[test]
fn group_switches_make_groups_of_consecutive_switches() {
    let text = "[topology]\nkind = \"rrg\"\nswitches = 24\ndegree = 4\nservers_per_switch = 2\n";
    let cfg = parse(text, &["traffic.pattern=adversarial-group", "traffic.group_switches=6"]);
    let topo = sim::build_topology(&cfg).unwrap();
    let p = sim::build_pattern(&cfg, &*topo).unwrap();
    let per_group = 6 * 2;
    let mut rng = hxsim::rng::stream(1, 0, hxsim::rng::Purpose::Traffic);
    for src in 0..48u32 {
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..400 {
            seen.insert(p.destination(src, &mut rng));
        }
        let next = (src / per_group + 1) % 4;
        let want: std::collections::BTreeSet<u32> = (next * per_group..(next + 1) * per_group).collect();
        assert_eq!(seen, want, "server {src}");
    }
}
