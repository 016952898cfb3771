//! HyperZ and fat trees through the whole simulator: `hxsim analyze` reproduces the HyperZ spec's
//! tables, a height-1 HyperZ is the equal HyperX (same analysis, same run), and results do not
//! depend on the thread count. Expected values come from the spec (`shared/specs/hyperz/SPEC.md`
//! section 4.3, computed there by its reference script) and from the HyperZ paper (section 5.3).

use hxsim::commands::analyze::analysis;
use hxsim::config::{self, Config};
use hxsim::engine::Progress;
use hxsim::metrics::Summary;
use hxsim::sim::{self, RunOptions};

fn parse(text: &str, sets: &[&str]) -> Config {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    config::parse_str(text, "test", &sets).unwrap_or_else(|e| panic!("{e}"))
}

fn hyperz(sides: &str, zones: &str, roots: &str, internal: &str) -> String {
    format!(
        "[topology]\nkind = \"hyperz\"\nsides = {sides}\nzones = {zones}\nroots = {roots}\ninternal_links = {internal}\n"
    )
}

/// SPEC section 4.3: one row of the table of 1024-processor designs, and the paper's section 5.3
/// node on larger GHCs (maximum radix 18, 20, 22, 26).
#[test]
fn analyze_reproduces_the_spec_tables() {
    struct Row {
        text: String,
        switches_per_level: Vec<u64>,
        links_internal_side: (u64, u64),
        radix_per_level: Vec<u64>,
        server_diameter: u32,
    }
    let rows = [
        Row {
            text: hyperz("[8,8]", "[16]", "[1]", "[1]"),
            switches_per_level: vec![64],
            links_internal_side: (1024, 448),
            radix_per_level: vec![30],
            server_diameter: 4,
        },
        Row {
            text: hyperz("[4,4]", "[8,8]", "[1,8]", "[1,1]"),
            switches_per_level: vec![128, 128],
            links_internal_side: (2048, 768),
            radix_per_level: vec![22, 14],
            server_diameter: 6,
        },
        Row {
            text: hyperz("[8,8]", "[4,4]", "[1,4]", "[1,1]"),
            switches_per_level: vec![256, 256],
            links_internal_side: (2048, 3584),
            radix_per_level: vec![22, 18],
            server_diameter: 6,
        },
        Row {
            text: hyperz("[2,2]", "[8,4,8]", "[1,4,8]", "[1,2,2]"),
            switches_per_level: vec![128, 128, 32],
            links_internal_side: (2560, 288),
            radix_per_level: vec![18, 14, 18],
            server_diameter: 8,
        },
        Row {
            text: hyperz("[4,4]", "[4,4,4]", "[1,4,16]", "[1,1,1]"),
            switches_per_level: vec![256, 256, 256],
            links_internal_side: (3072, 2304),
            radix_per_level: vec![14, 14, 10],
            server_diameter: 8,
        },
    ];
    for row in rows {
        let a = analysis(&parse(&row.text, &[]), None).unwrap();
        assert_eq!(a.servers, 1024, "{}", row.text);
        let d = &a.details;
        let u64s = |k: &str| -> Vec<u64> { d[k].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect() };
        assert_eq!(u64s("switches_per_level"), row.switches_per_level, "{}", row.text);
        assert_eq!(a.switches as u64, row.switches_per_level.iter().sum::<u64>());
        assert_eq!(u64s("radix_per_level"), row.radix_per_level, "{}", row.text);
        assert_eq!(a.radix as u64, *row.radix_per_level.iter().max().unwrap());
        let (internal, side) = row.links_internal_side;
        assert_eq!((d["internal_links"].as_u64().unwrap(), d["side_links"].as_u64().unwrap()), (internal, side));
        // `links` counts switch-to-switch links: the spec's internal links include the processors'.
        assert_eq!(a.links as u64, internal + side - 1024, "{}", row.text);
        assert_eq!(a.server_diameter, row.server_diameter, "{}", row.text);
        assert!(a.connected);
    }
    // Adda 2023, section 5.3: Z(8,4,8;1,4,8;1,2,2) on (s1,s2) = (2,2), (4,2), (4,4), (8,4) with q = 1
    // gives switches of radix 18, 20, 22, 26, and 1024 processors on (2,2).
    for (sides, radix, servers) in [("[2,2]", 18, 1024), ("[4,2]", 20, 2048), ("[4,4]", 22, 4096), ("[8,4]", 26, 8192)]
    {
        let a = analysis(&parse(&hyperz(sides, "[8,4,8]", "[1,4,8]", "[1,2,2]"), &[]), None).unwrap();
        assert_eq!((a.radix, a.servers), (radix, servers), "sides {sides}");
    }
    // Fig. 1's instance H_{1,2}(2;2)(Z_2(4,2;1,2;1,2)): R_2 = 2 (two level-2 switches per Z-node).
    let fig1 = analysis(&parse(&(hyperz("[2]", "[4,2]", "[1,2]", "[1,2]") + "side_links = 2\n"), &[]), None).unwrap();
    assert_eq!(fig1.details["nodes_per_znode"][2], 2);
}

fn summary(text: &str, sets: &[&str], threads: usize) -> Summary {
    let mut all = vec!["simulation.warmup_cycles=200", "simulation.measure_cycles=400"];
    all.extend_from_slice(sets);
    let r = sim::run(&parse(text, &all), &RunOptions { threads, ..Default::default() }, &Progress::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.complete);
    r.summary.without_timings()
}

/// SPEC section 7.9 (and the paper's section 3): with h = 1 a HyperZ is a HyperX with T = z_1,
/// numbered the same way, so every topology-agnostic routing runs the very same simulation.
#[test]
fn height_one_hyperz_is_the_hyperx() {
    let hz = hyperz("[4,3]", "[3]", "[1]", "[1]") + "side_links = [1, 2]\n";
    let hx = "[topology]\nkind = \"hyperx\"\nsides = [4,3]\ntrunking = [1,2]\nservers_per_switch = 3\n";
    let (a, b) = (analysis(&parse(&hz, &[]), None).unwrap(), analysis(&parse(hx, &[]), None).unwrap());
    assert_eq!(
        (a.switches, a.servers, a.links, a.radix, a.diameter, a.server_diameter, a.connected),
        (b.switches, b.servers, b.links, b.radix, b.diameter, b.server_diameter, b.connected)
    );
    assert_eq!(a.average_distance.to_bits(), b.average_distance.to_bits());
    for sets in [
        &["routing.algorithm=minimal", "traffic.load=0.7"][..],
        &["routing.algorithm=valiant", "traffic.pattern=random-server-permutation"],
        &["routing.algorithm=surepath-polarized", "traffic.load=0.9"],
        &["routing.algorithm=sp", "routing.vc_policy=davc-np"],
    ] {
        assert_eq!(summary(&hz, sets, 1), summary(hx, sets, 1), "{sets:?}");
    }
}

/// Architecture spec, property 3, on networks whose switches differ (servers on one level only).
#[test]
fn hyperz_and_fat_tree_results_are_the_same_for_any_thread_count() {
    let hz = hyperz("[2,2]", "[4,2,2]", "[1,2,2]", "[1,2,1]");
    let ft = "[topology]\nkind = \"fattree\"\nzones = [4,4,4]\nroots = [1,4,16]\n";
    for (text, sets) in [
        (hz.as_str(), &["routing.algorithm=minimal", "traffic.load=0.8"][..]),
        (hz.as_str(), &["traffic.mode=fixed", "traffic.workload_phits=160", "routing.algorithm=valiant"]),
        (ft, &["routing.algorithm=minimal", "traffic.pattern=bit-complement", "traffic.load=0.9"]),
    ] {
        let reference = summary(text, sets, 1);
        assert!(reference.packets_delivered > 100, "{sets:?}");
        for t in [2, 3] {
            assert_eq!(summary(text, sets, t), reference, "{sets:?}, {t} threads");
        }
    }
}

#[test]
fn hyperx_only_routings_and_patterns_say_so_elsewhere() {
    let ft = "[topology]\nkind = \"fattree\"\nzones = [4,4]\nroots = [1,4]\n";
    // A HyperX-only routing is refused while the config is read, naming those that run here.
    let e = config::parse_str(ft, "t", &["routing.algorithm=dor".into()]).unwrap_err().to_string();
    assert!(e.contains("routing.algorithm") && e.contains("\"hyperx\"") && e.contains("nca"), "{e}");
    let e =
        sim::run(&parse(ft, &["traffic.pattern=swap2"]), &RunOptions::default(), &Progress::default()).err().unwrap();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("traffic.pattern"), "{e}");
    // Bad HyperZ parameters are config errors that say why.
    let e = config::parse_str(&hyperz("[2,2]", "[4,4,4]", "[1,2,3]", "[1,1,1]"), "t", &[]).unwrap_err().to_string();
    assert!(e.contains("topology.roots") && e.contains("divide"), "{e}");
    let e = config::parse_str(&(hyperz("[2]", "[4]", "[1]", "[1]") + "servers_per_switch = 4\n"), "t", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("servers_per_switch"), "{e}");
}

/// Issue 32: on a HyperZ and a fat tree with every fault kind, the HyperZ routings (their detours,
/// Adda 2023 section 5.4) and the escape compositions deliver a fixed workload whole, and the
/// results do not depend on the thread count.
#[test]
fn faulty_hyperz_and_fat_tree_fixed_workloads_drain() {
    let hz = hyperz("[3,3]", "[4,2]", "[1,2]", "[1,1]");
    let ft = "[topology]\nkind = \"fattree\"\nzones = [4,4,4]\nroots = [1,4,16]\n";
    let fixed = ["traffic.mode=fixed", "traffic.workload_phits=320"];
    let hz_faults: [&[&str]; 5] = [
        &["faults.random_links=10"],
        &["faults.random_switches=3"],
        &["faults.shapes=[{kind=\"znode\", at=[2,1]}]"],
        &["faults.shapes=[{kind=\"plane\", level=1, index=0}]"],
        &["faults.lifetime={link_rate=0.03, switch_rate=0.01, years=4.0, steps=4}"],
    ];
    let ft_faults: [&[&str]; 2] =
        [&["faults.random_links=8"], &["faults.lifetime={link_rate=0.02, switch_rate=0.01, years=4.0, steps=4}"]];
    let hz_algs = ["aliod", "cliod", "odim", "deter", "surepath-aliod", "surepath-minimal"];
    let ft_algs = ["nca", "dmodk", "aliod", "surepath-minimal"];
    for (text, faults, algs) in [(hz.as_str(), &hz_faults[..], &hz_algs[..]), (ft, &ft_faults[..], &ft_algs[..])] {
        for f in faults {
            for alg in algs {
                let a = format!("routing.algorithm={alg}");
                let sets: Vec<&str> = f.iter().copied().chain(fixed).chain([a.as_str()]).collect();
                let s = summary(text, &sets, 1);
                assert!(s.packets_generated > 100, "{alg} {f:?}");
                assert_eq!(s.packets_delivered, s.packets_generated, "{alg} {f:?}");
                assert!(s.completion_cycles.is_some(), "{alg} {f:?}");
                if *alg == "aliod" {
                    assert_eq!(summary(text, &sets, 3), s, "{alg} {f:?}, 3 threads");
                }
            }
        }
    }
}
