//! Tests of the topology-agnostic baselines DFSSSP, LASH and SPDA: deadlock freedom shown by the
//! channel dependency analysis on faulty tori, a random regular graph, a Kautz graph and a HyperX;
//! minimal routes; the balancing of SSSP on a ring where the optimum can be derived; the VCs a
//! 5-ring needs (the Nue paper's example, section 4); and the spanning-tree routes of SPDA.

use super::deadlock::{self, Verdict};
use super::dfsssp::{self, Routes};
use super::{build, Candidate, RouteState, Routing};
use crate::topology::{Fabric, SwitchId};

use super::tests::{topology_config as config, topology_routing as routing};

const TORUS: &str = "kind = \"torus\"\nsides = [4, 4, 3]\nservers_per_switch = 1";
const RRG: &str = "kind = \"rrg\"\nswitches = 20\ndegree = 4\nservers_per_switch = 1";
const KAUTZ: &str = "kind = \"kautz\"\ndegree = 2\ndiameter = 3\nservers_per_switch = 1";
const HYPERX: &str = "sides = [4, 4]\nservers_per_switch = 1";
const RING4: &str = "kind = \"torus\"\nsides = [4]\nservers_per_switch = 1";
const RING5: &str = "kind = \"torus\"\nsides = [5]\nservers_per_switch = 1";

/// The route of a deterministic routing from `src` to `dst`: (switches visited, VCs used).
fn route(net: &Fabric, r: &dyn Routing, src: SwitchId, dst: SwitchId) -> (Vec<SwitchId>, Vec<u8>) {
    let mut st = RouteState { src, dst, ..Default::default() };
    let mut rng = crate::rng::stream(0, 0, crate::rng::Purpose::Router);
    r.init(&mut st, &mut rng);
    let (mut at, mut path, mut vcs) = (src, vec![src], Vec::new());
    let mut c: Vec<Candidate> = Vec::new();
    while at != dst {
        c.clear();
        r.candidates(at, &st, &mut c);
        assert_eq!(c.len(), 1, "{} offers one hop at {at} ({src} -> {dst})", r.name());
        let next = net.neighbour(at, c[0].port).expect("a live port").0;
        super::tests::take_hop(r, &mut st, at, next, &c[0]);
        vcs.push(c[0].vc);
        at = next;
        path.push(at);
        assert!(path.len() <= 4 * net.num_switches(), "{} loops", r.name());
    }
    (path, vcs)
}

#[test]
fn every_baseline_is_deadlock_free_on_faulty_tori_rrg_kautz_and_hyperx() {
    let cases: [(&str, &[&str]); 6] = [
        (TORUS, &["faults.random_links=4"]),
        (TORUS, &["faults.random_links=9", "faults.seed=7"]),
        (RRG, &[]),
        (KAUTZ, &[]),
        (HYPERX, &[]),
        (HYPERX, &["faults.random_links=3"]),
    ];
    for (topo, faults) in cases {
        for (alg, vcs) in [("dfsssp", "0"), ("lash", "0"), ("dfsssp", "8"), ("spda", "3")] {
            let (a, v) = (format!("routing.algorithm={alg}"), format!("routing.vcs={vcs}"));
            let sets = [&[a.as_str(), v.as_str()], faults].concat();
            let (net, r) = routing(topo, &sets);
            let rep = deadlock::check(&net, &*r);
            assert_eq!(rep.verdict, Verdict::Acyclic, "{alg} on {topo} {faults:?}");
            let layers = r.tables().unwrap().layers;
            if vcs == "0" {
                assert_eq!(r.vcs(), layers, "{alg}: the default is the layers needed");
            } else {
                assert_eq!(r.vcs(), vcs.parse::<usize>().unwrap());
                assert!(layers <= r.vcs());
            }
            // Routes use live links only: the analysis would report a candidate on a dead port.
            assert!(rep.channels_used <= 2 * net.live_links() * r.vcs());
        }
    }
}

#[test]
fn dfsssp_and_lash_routes_are_shortest_paths() {
    for (topo, faults) in
        [(TORUS, "faults.random_links=6"), (RRG, "faults.random_links=3"), (KAUTZ, "faults.random_links=0")]
    {
        for alg in ["dfsssp", "lash"] {
            let (net, r) = routing(topo, &[&format!("routing.algorithm={alg}"), faults]);
            let n = net.num_switches() as SwitchId;
            for dst in 0..n {
                let d = net.bfs(dst);
                for src in (0..n).filter(|&s| s != dst) {
                    let (path, vcs) = route(&net, &*r, src, dst);
                    assert_eq!(path.len() as u32 - 1, d[src as usize], "{alg} {src} -> {dst} on {topo}");
                    assert!(vcs.windows(2).all(|w| w[0] == w[1]), "{alg} keeps one layer per route");
                }
            }
        }
    }
}

/// Largest number of (switch) routes on one directed channel.
fn max_channel_load(r: &Routes) -> u32 {
    let e = r.e();
    let mut load = vec![0u32; r.n * r.p];
    for pid in (0..e * e).filter(|&pid| r.routed(pid)) {
        r.channels(pid, |c| load[c as usize] += 1);
    }
    load.into_iter().max().unwrap()
}

#[test]
fn sssp_balancing_reaches_the_derived_optimum_on_a_ring() {
    // Ring of 4, one server per switch: the 8 neighbour pairs use their own channel once each (8
    // channel uses) and the 4 opposite pairs need 2 hops each (8 uses), 16 uses over 8 directed
    // channels, so some channel carries at least 2 routes; 2 is reached when each opposite pair
    // takes a different half of one direction. Plain shortest paths break the ties by switch id and
    // send opposite pairs through the same channels.
    let cfg = config(RING4, &[]);
    let net = crate::sim::build_network(&cfg).unwrap();
    let balanced = dfsssp::sssp(&net, true);
    let plain = dfsssp::sssp(&net, false);
    assert_eq!(max_channel_load(&balanced), 2);
    assert!(max_channel_load(&plain) > 2, "plain {}", max_channel_load(&plain));
    // Every route stays minimal either way.
    for r in [&balanced, &plain] {
        for s in 0..4 {
            for t in (0..4).filter(|&t| t != s) {
                let mut hops = 0;
                r.channels(s * 4 + t, |_| hops += 1);
                assert_eq!(hops, net.distance(s as SwitchId, t as SwitchId));
            }
        }
    }
    // A 4x4 torus: each switch has 4 switches at 1 hop, 6 at 2, 4 at 3 and 1 at 4, so 16 x 32 = 512
    // channel uses over 64 directed channels: at least 8 on some channel. Balancing does not do
    // worse than plain shortest paths.
    let cfg = config("kind = \"torus\"\nsides = [4, 4]\nservers_per_switch = 1", &[]);
    let net = crate::sim::build_network(&cfg).unwrap();
    let (b, p) = (max_channel_load(&dfsssp::sssp(&net, true)), max_channel_load(&dfsssp::sssp(&net, false)));
    assert!((8..=p).contains(&b), "balanced {b}, plain {p}");
}

#[test]
fn a_five_ring_needs_two_layers_and_one_vc_is_refused() {
    // The Nue paper's example (section 4): a 5-ring cannot be routed on shortest paths without 2
    // VCs. Every pair 2 apart goes 2 hops one way round, and the five clockwise ones alone close a
    // cycle of the five clockwise channels.
    for alg in ["dfsssp", "lash"] {
        let (net, r) = routing(RING5, &[&format!("routing.algorithm={alg}")]);
        assert_eq!(r.vcs(), 2, "{alg}");
        assert_eq!(r.tables().unwrap().layers, 2);
        assert_eq!(deadlock::check(&net, &*r).verdict, Verdict::Acyclic);
        let cfg = config(RING5, &[&format!("routing.algorithm={alg}"), "routing.vcs=1"]);
        let e = build(&cfg.routing_params(), crate::sim::build_network(&cfg).unwrap())
            .err()
            .expect("one VC is too few")
            .to_string();
        assert!(e.contains("routing.vcs") && e.contains("needs 2 virtual layers"), "{e}");
        // On one VC whatever the layers, the same routes close the cycle.
        let (net, r) = routing(RING5, &[&format!("routing.algorithm={alg}"), "routing.vcs=2"]);
        let one = OneVc(&*r);
        assert!(matches!(deadlock::check(&net, &one).verdict, Verdict::Cycle { .. }), "{alg}");
    }
    let cfg = config(RING5, &["routing.algorithm=dfsssp", "routing.vc_policy=davc-n"]);
    let e = build(&cfg.routing_params(), crate::sim::build_network(&cfg).unwrap()).err().unwrap().to_string();
    assert!(e.contains("routing.vc_policy"), "{e}");
}

/// A routing with every VC folded onto VC 0.
struct OneVc<'a>(&'a dyn Routing);

impl Routing for OneVc<'_> {
    fn name(&self) -> &'static str {
        "one-vc"
    }
    fn vcs(&self) -> usize {
        1
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        self.0.candidates(at, st, out);
        for c in out.iter_mut() {
            c.vc = 0;
        }
    }
}

#[test]
fn spare_vcs_are_spread_over_the_busiest_layers() {
    // Layers of 6, 2 and 1 routes over 5 VCs: the first spare VC goes to layer 0 (6 per VC), the
    // second too (3 > 2), leaving 2, 2 and 1 routes per VC.
    let layer_of = [0u8, 0, 1, 0, 0, 2, 0, 1, 0, u8::MAX];
    let vc = dfsssp::spread(&layer_of, 3, 5);
    assert_eq!(vc, vec![0, 1, 3, 2, 0, 4, 1, 3, 2, 0]);
    // No layer (no route crosses a link: one live switch with servers) panicked; found by
    // tests/fuzz.rs on a fat tree with one leaf failed.
    assert_eq!(dfsssp::spread(&[u8::MAX; 4], 0, 4), vec![0; 4]);
}

#[test]
fn spda_follows_one_bfs_tree_per_vc() {
    let (net, r) = routing(RRG, &["routing.algorithm=spda", "routing.vcs=4"]);
    let n = net.num_switches() as SwitchId;
    let mut used = [false; 4];
    for k in 0..4u8 {
        // The tree: the union of the routes on VC k has n - 1 links and connects all switches.
        let mut links = std::collections::BTreeSet::new();
        for src in 0..n {
            for dst in (0..n).filter(|&d| d != src) {
                let mut st = RouteState { src, dst, phase: k, ..Default::default() };
                let mut at = src;
                let mut hops = 0;
                while at != dst {
                    let mut c = Vec::new();
                    r.candidates(at, &st, &mut c);
                    assert_eq!(c.len(), 1);
                    assert_eq!(c[0].vc, k);
                    let next = net.neighbour(at, c[0].port).unwrap().0;
                    links.insert((at.min(next), at.max(next)));
                    super::tests::take_hop(&*r, &mut st, at, next, &c[0]);
                    at = next;
                    hops += 1;
                    assert!(hops < n, "tree routes are simple paths");
                }
            }
        }
        assert_eq!(links.len(), n as usize - 1, "tree {k}");
        used[k as usize] = true;
    }
    assert!(used.iter().all(|&u| u));
    // Packets draw every tree.
    let mut seen = [0u32; 4];
    let mut rng = crate::rng::stream(1, 2, crate::rng::Purpose::Router);
    for _ in 0..400 {
        let mut st = RouteState { src: 0, dst: 1, ..Default::default() };
        r.init(&mut st, &mut rng);
        seen[st.phase as usize] += 1;
    }
    assert!(seen.iter().all(|&s| s > 60), "{seen:?}");
    assert_eq!(deadlock::check(&net, &*r).verdict, Verdict::Acyclic);
}

/// The DAVC paper evaluates SPDA up to 128 VCs (section 7); hxsim's router keeps one bit per VC in
/// each port's 64-bit occupancy masks, so more than 64 trees are refused up front, naming the key
/// and the limit, and 64 builds.
#[test]
fn spda_stops_at_the_routers_vc_limit_with_the_reason() {
    assert_eq!(super::vc::MAX_VCS, u64::BITS as usize);
    for vcs in [65, 128] {
        let sets = vec!["routing.algorithm=spda".to_string(), format!("routing.vcs={vcs}")];
        let e = crate::config::parse_str(&format!("seed = 3\n[topology]\n{RRG}\n"), "test", &sets).unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("routing.vcs")
                && m.contains(&vcs.to_string())
                && m.contains("between 1 and 64")
                && m.contains("per port"),
            "{m}"
        );
    }
    let (_, r) = routing(RRG, &["routing.algorithm=spda", "routing.vcs=64"]);
    assert_eq!(r.vcs(), 64);
}
