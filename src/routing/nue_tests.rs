//! Tests of Nue and Up*/Down*: deadlock freedom by the channel dependency analysis (`hxsim
//! check-deadlock`) on small faulty tori, a random regular graph, a Kautz graph, a fat tree and a
//! faulty HyperX; every pair of live switches routed; Up*/Down* routes legal; the Nue paper's
//! ring example (section 4); bad input named by key.

use super::deadlock::{self, Verdict};
use super::nue::Nue;
use super::updown_routing::UpDownRouting;
use super::{build, Candidate, RouteState, Routing};
use crate::topology::{Fabric, SwitchId};

use super::tests::{topology_config as config, topology_routing as routing};

const TORUS: &str = "kind = \"torus\"\nsides = [4, 4, 3]\nservers_per_switch = 2";
const RRG: &str = "kind = \"rrg\"\nswitches = 20\ndegree = 4\nservers_per_switch = 2";
const KAUTZ: &str = "kind = \"kautz\"\ndegree = 2\ndiameter = 3\nservers_per_switch = 2";
const FATTREE: &str = "kind = \"fattree\"\nzones = [4, 4]\nroots = [1, 4]\ninternal_links = [1, 1]";
const HYPERX: &str = "sides = [4, 4, 3]\nservers_per_switch = 2";
const DRAGONFLY: &str = "kind = \"dragonfly\"\np = 1\na = 4\nh = 2";

/// Follow every route from every live switch with servers to every other; return the longest
/// route and check that each one arrives (no unroutable pair) within `bound` hops, never visits a
/// failed port, and (`updown`) never turns from a down hop to an up hop.
fn walk_all(net: &Fabric, r: &dyn Routing, updown: Option<&UpDownRouting>) -> u32 {
    let n = net.num_switches() as SwitchId;
    let ends: Vec<SwitchId> = (0..n).filter(|&s| net.switch_alive(s) && net.servers_at(s) > 0).collect();
    let bound = 4 * n as u16;
    let mut longest = 0;
    let mut c: Vec<Candidate> = Vec::new();
    for &src in &ends {
        for &dst in ends.iter().filter(|&&d| d != src) {
            let mut stack = vec![(src, RouteState { src, dst, ..Default::default() }, false)];
            while let Some((at, st, went_down)) = stack.pop() {
                if at == dst {
                    longest = longest.max(st.hops as u32);
                    continue;
                }
                assert!(st.hops < bound, "{} loops from {src} to {dst}", r.name());
                c.clear();
                r.candidates(at, &st, &mut c);
                assert!(!c.is_empty(), "{}: no route from {src} to {dst} at {at}", r.name());
                for cand in c.clone() {
                    assert!((cand.vc as usize) < r.vcs());
                    let next = net.neighbour(at, cand.port).expect("a live port").0;
                    let up = updown.map(|u| u.is_up(at, next));
                    if let Some(up) = up {
                        assert!(!(went_down && up), "down -> up turn at {at} from {src} to {dst}");
                    }
                    let mut s = st;
                    super::tests::take_hop(r, &mut s, at, next, &cand);
                    stack.push((next, s, went_down || up == Some(false)));
                }
            }
        }
    }
    longest
}

#[test]
fn nue_is_deadlock_free_with_1_2_and_4_layers_on_faulty_tori() {
    for faults in [0, 3, 6] {
        for k in [1usize, 2, 4] {
            let (net, r) = routing(
                TORUS,
                &["routing.algorithm=nue", &format!("routing.vcs={k}"), &format!("faults.random_links={faults}")],
            );
            assert_eq!(net.failed_links(), faults);
            assert_eq!(r.vcs(), k);
            let rep = deadlock::check(&net, &*r);
            assert_eq!(rep.verdict, Verdict::Acyclic, "k={k}, {faults} faults");
            // Every ordered pair of the 48 switches explored, one route each (destination-based).
            assert_eq!(rep.pairs, 48 * 47);
            walk_all(&net, &*r, None);
        }
    }
}

#[test]
fn nue_is_deadlock_free_on_rrg_kautz_fat_tree_dragonfly_and_faulty_hyperx() {
    for (topo, faults) in [(RRG, 0), (RRG, 3), (KAUTZ, 0), (FATTREE, 0), (FATTREE, 2), (DRAGONFLY, 4), (HYPERX, 8)] {
        for k in [1usize, 2, 4] {
            let (net, r) = routing(
                topo,
                &["routing.algorithm=nue", &format!("routing.vcs={k}"), &format!("faults.random_links={faults}")],
            );
            let rep = deadlock::check(&net, &*r);
            assert_eq!(rep.verdict, Verdict::Acyclic, "{topo}, k={k}, {faults} faults");
            walk_all(&net, &*r, None);
        }
    }
}

#[test]
fn nue_keeps_packets_on_their_destinations_layer() {
    let (net, r) = routing(TORUS, &["routing.algorithm=nue", "routing.vcs=4", "faults.random_links=3"]);
    let cfg = config(TORUS, &["routing.vcs=4", "faults.random_links=3"]);
    let nue = Nue::new(&crate::sim::build_network(&cfg).unwrap(), 4, None).unwrap();
    let n = net.num_switches() as SwitchId;
    let mut per_layer = [0usize; 4];
    for t in 0..n {
        per_layer[nue.layer_of(t) as usize] += 1;
        for x in (0..n).filter(|&x| x != t) {
            let mut c = Vec::new();
            r.candidates(x, &RouteState { src: x, dst: t, ..Default::default() }, &mut c);
            assert_eq!(c.len(), 1, "destination-based: one port per (switch, destination)");
            assert_eq!(c[0].vc, nue.layer_of(t));
            assert_eq!(Some(c[0].port), nue.port(x, t), "the same build gives the same tables");
        }
    }
    // The 48 destinations (unit weights) in 4 parts: the multilevel partitioner's bound is
    // max(floor(1.03 * 48 / 4), ceil(48 / 4) + 1 - 1) = 12 per part, so every layer holds 12.
    assert_eq!(per_layer, [12; 4]);
    for l in 0..4 {
        assert!(nue.root(l).is_some());
    }
}

/// The Nue paper's section 4 example: a 5-node ring cannot be routed along shortest paths without
/// two VCs, so Nue on one VC must route some pair the long way round; with the shortcut (Fig. 6a)
/// the network is still routed deadlock free on one VC.
#[test]
fn nue_routes_the_papers_ring_examples_on_one_vc() {
    let dir = tempfile::tempdir().unwrap();
    for (name, edges, ring_only) in
        [("ring", "0 1\n1 2\n2 3\n3 4\n4 0\n", true), ("ring-shortcut", "0 1\n1 2\n2 3\n3 4\n4 0\n2 4\n", false)]
    {
        let file = dir.path().join(format!("{name}.edges"));
        std::fs::write(&file, edges).unwrap();
        let topo = format!("kind = \"graph\"\nfile = \"{}\"\nservers_per_switch = 1", file.display());
        let (net, r) = routing(&topo, &["routing.algorithm=nue", "routing.vcs=1"]);
        let rep = deadlock::check(&net, &*r);
        assert_eq!(rep.verdict, Verdict::Acyclic, "{name}");
        let longest = walk_all(&net, &*r, None);
        if ring_only {
            // Shortest paths on a 5-ring are at most 2 hops; one VC forces a 3-hop (or longer) route.
            assert!(longest >= 3, "{name}: longest route {longest}");
        }
    }
}

#[test]
fn updown_routes_are_legal_minimal_among_legal_and_deadlock_free() {
    for (topo, faults, root) in
        [(TORUS, 0, 0), (TORUS, 6, 7), (RRG, 3, 2), (KAUTZ, 0, 5), (FATTREE, 2, 0), (HYPERX, 8, 11), (DRAGONFLY, 4, 3)]
    {
        for vcs in [1usize, 3] {
            let sets = [
                "routing.algorithm=updown".to_string(),
                format!("routing.vcs={vcs}"),
                format!("faults.random_links={faults}"),
                format!("routing.escape_root={root}"),
            ];
            let sets: Vec<&str> = sets.iter().map(|s| s.as_str()).collect();
            let (net, r) = routing(topo, &sets);
            let u = UpDownRouting::new(net.clone(), root, vcs).unwrap();
            assert_eq!(u.root(), root as SwitchId);
            let rep = deadlock::check(&net, &*r);
            assert_eq!(rep.verdict, Verdict::Acyclic, "{topo}, {faults} faults, {vcs} VCs");
            walk_all(&net, &*r, Some(&u));
            // Each hop shortens the legal distance by one, so every route from s to t has exactly
            // ud(s, t) hops, never fewer than the graph distance (over the pairs whose distance
            // the fabric keeps: those with servers at one end, `Fabric::serves`).
            let n = net.num_switches() as SwitchId;
            for s in (0..n).filter(|&s| net.switch_alive(s)) {
                for t in (0..n).filter(|&t| t != s && net.switch_alive(t) && net.serves(s, t)) {
                    assert!(u.legal_distance(s, t) >= net.distance(s, t));
                }
            }
        }
    }
}

#[test]
fn updown_on_a_ring_goes_round_the_root_side() {
    // Ring 0-1-2-3-4-5-0 rooted at 0: depths 0,1,2,3,2,1; (depth, id) ranks make 3 the bottom,
    // reached from 2 (depth 2, id 2) and 4 (depth 2, id 4). From 2 to 4 the short way 2-3-4 would
    // go down to 3 and then up to 4 (rank of 4 is below 3's): illegal. The legal route climbs to
    // the root: 2-1-0-5-4, 4 hops.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ring6.edges");
    std::fs::write(&file, "0 1\n1 2\n2 3\n3 4\n4 5\n5 0\n").unwrap();
    let topo = format!("kind = \"graph\"\nfile = \"{}\"\nservers_per_switch = 1", file.display());
    let cfg = config(&topo, &[]);
    let net = crate::sim::build_network(&cfg).unwrap();
    let u = UpDownRouting::new(net.clone(), 0, 1).unwrap();
    assert_eq!(u.legal_distance(2, 4), 4);
    // Back from 4 to 2: 4-3 goes down (3 is the bottom) and 3-2 would climb, so 4-5-0-1-2, 4 hops.
    assert_eq!(u.legal_distance(4, 2), 4);
    // 1 to 5: up to the root and down, 2 hops, the graph distance.
    assert_eq!(u.legal_distance(1, 5), 2);
}

#[test]
fn bad_input_names_the_key() {
    let e = |sets: &[&str]| {
        let cfg = config(TORUS, sets);
        build(&cfg.routing_params(), crate::sim::build_network(&cfg).unwrap()).err().expect("an error").to_string()
    };
    let m = e(&["routing.algorithm=nue", "routing.vc_policy=davc-n"]);
    assert!(m.contains("routing.vc_policy"), "{m}");
    let m = e(&["routing.algorithm=updown", "routing.escape_root=48"]);
    assert!(m.contains("routing.escape_root") && m.contains("48"), "{m}");
    let m = e(&["routing.algorithm=updown", "routing.vc_policy=davc-p"]);
    assert!(m.contains("routing.vc_policy"), "{m}");
    // Tables that do not fit: 48 destination switches x 48 switches of one byte, plus the CDG.
    let cfg = config(TORUS, &[]);
    let m = Nue::new(&crate::sim::build_network(&cfg).unwrap(), 2, Some(1000)).err().unwrap().to_string();
    assert!(m.contains("routing.algorithm") && m.contains("nue"), "{m}");
}
