//! Tests of the HyperZ and fat-tree routings (`odim`, `cliod`, `aliod`, `deter`, `nca`, `dmodk`)
//! against SPEC §7.11: every route they can produce, for every pair of server switches of small
//! instances, is walked from `candidates` through `advance`; expected values come from the SPEC's
//! formulas (`2 L* + |O|` processor hops), the topology's closed-form distance, and hand-derived
//! route counts in the comments.

use super::deadlock::{self, Verdict};
use super::tests::take_hop;
use super::{build, Candidate, RouteState, Routing};
use crate::config::{parse_str, Config};
use crate::sim;
use crate::topology::hyperz::PortKind;
use crate::topology::{Fabric, HyperZ, SwitchId, View};
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

const HZ_ALGS: [&str; 4] = ["odim", "cliod", "aliod", "deter"];
const TREE_ALGS: [&str; 2] = ["nca", "dmodk"];

/// `(sides, zones, roots, internal_links)`, as in `routing_check.py`, plus `d = 1` and `g > 1` cases.
type Case = (&'static [usize], &'static [usize], &'static [usize], &'static [usize]);
const CASES: [Case; 6] = [
    (&[3, 3], &[2], &[1], &[1]),                   // h = 1: a 3x3 HyperX, T = 2
    (&[2], &[2, 2], &[1, 2], &[1, 1]),             // SPEC §4.2 tiny example (i)
    (&[3, 3], &[2, 2], &[1, 2], &[1, 1]),          // h = 2, d = 2
    (&[3, 2, 2], &[2, 2], &[1, 2], &[1, 2]),       // h = 2, d = 3, g_2 = 2
    (&[3, 3], &[2, 2, 2], &[1, 2, 4], &[1, 1, 1]), // h = 3, d = 2
    (&[3], &[2, 3, 2], &[1, 2, 2], &[1, 2, 2]),    // h = 3, d = 1, g > 1, w_3 = 1
];

fn hz_config(case: Case, sets: &[&str]) -> Config {
    let (s, z, r, g) = case;
    let text =
        format!("[topology]\nkind = \"hyperz\"\nsides = {s:?}\nzones = {z:?}\nroots = {r:?}\ninternal_links = {g:?}\n");
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    parse_str(&text, "test", &sets).unwrap()
}

fn tree_config(z: &[usize], r: &[usize], g: &[usize], sets: &[&str]) -> Config {
    let text = format!("[topology]\nkind = \"fattree\"\nzones = {z:?}\nroots = {r:?}\ninternal_links = {g:?}\n");
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    parse_str(&text, "test", &sets).unwrap()
}

fn routing_for(cfg: &Config) -> (Arc<Fabric>, Box<dyn Routing>) {
    let net = sim::build_network(cfg).unwrap();
    let r = build(&cfg.routing_params(), net.clone()).unwrap();
    (net, r)
}

fn hyperz(net: &Fabric) -> &HyperZ {
    match net.topology().view() {
        View::HyperZ(h) => h,
        _ => panic!("not a HyperZ"),
    }
}

fn leaves(hz: &HyperZ) -> Vec<SwitchId> {
    (0..hz.num_switches() as SwitchId).filter(|&s| hz.level(s) == 1).collect()
}

/// SPEC §5.1: `L* = max(LCL, 1)`; the LCL of two level-1 switches is that of their first processors.
fn l_star(hz: &HyperZ, a: SwitchId, b: SwitchId) -> usize {
    hz.lcl(hz.first_server(a), hz.first_server(b)).max(1)
}

/// What one walk found.
#[derive(Default)]
struct Walk {
    /// Distinct routes (switch sequences, VCs ignored).
    routes: BTreeSet<Vec<SwitchId>>,
    /// Side hops `(level, dimension)` per route, in order.
    sides: Vec<Vec<(usize, usize)>>,
}

/// Walk every route `r` can produce from `src` to `dst`, asserting SPEC §7.11 on each hop.
fn walk(net: &Fabric, r: &dyn Routing, src: SwitchId, dst: SwitchId) -> Walk {
    let hz = hyperz(net);
    let dist = net.topology().distance(src, dst);
    let ls = l_star(hz, src, dst);
    let mut w = Walk::default();
    // Paths already expanded. The state is not part of the key: these routings read only `src` and
    // `dst` from it (VCs differ between states, candidates do not), so VC choices need no exploring.
    let mut seen = HashSet::new();
    // (switch, state, path, side hops)
    let mut stack = vec![(src, RouteState { src, dst, ..Default::default() }, vec![src], Vec::new())];
    while let Some((at, st, path, sides)) = stack.pop() {
        let mut cands: Vec<Candidate> = Vec::new();
        r.candidates(at, &st, &mut cands);
        assert!(!cands.is_empty(), "{}: stuck at {at} from {src} to {dst}", r.name());
        for c in cands {
            assert!((c.vc as usize) < r.vcs(), "{}: VC {} of {}", r.name(), c.vc, r.vcs());
            let (next, _) = net.neighbour(at, c.port).expect("a wired port");
            // Minimal: every hop brings the packet one hop closer.
            assert_eq!(
                net.topology().distance(next, dst) + 1,
                net.topology().distance(at, dst),
                "{}: non-minimal hop {at} -> {next} towards {dst}",
                r.name()
            );
            assert!(hz.level(next) <= ls, "{}: {src} -> {dst} rises to level {} > L* = {ls}", r.name(), hz.level(next));
            let mut sides = sides.clone();
            if let Some(PortKind::Side { dim }) = hz.port_kind(at, c.port) {
                assert!(hz.level(at) >= 1);
                sides.push((hz.level(at), dim));
            }
            let mut path = path.clone();
            path.push(next);
            let mut s2 = st;
            take_hop(r, &mut s2, at, next, &c);
            if next == dst {
                assert_eq!(s2.hops as u32, dist, "{}: {src} -> {dst}", r.name());
                if w.routes.insert(path) {
                    w.sides.push(sides);
                }
            } else if seen.insert(path.clone()) {
                stack.push((next, s2, path, sides));
            }
        }
    }
    w
}

#[test]
fn every_route_is_minimal_and_stays_below_the_lcl() {
    for case in CASES {
        for alg in HZ_ALGS.iter().chain(&TREE_ALGS) {
            let (net, r) = routing_for(&hz_config(case, &[&format!("routing.algorithm={alg}")]));
            let hz = hyperz(&net);
            for &s in &leaves(hz) {
                for &t in &leaves(hz) {
                    if s == t {
                        continue;
                    }
                    // SPEC §5.1: 2 L* + |O| processor hops, i.e. 2 L* + |O| - 2 between switches.
                    let o = hz.offset_count(hz.znode(s), hz.znode(t)) as usize;
                    assert_eq!(net.topology().distance(s, t) as usize, 2 * l_star(hz, s, t) + o - 2);
                    let w = walk(&net, &*r, s, t);
                    assert!(!w.routes.is_empty());
                    if matches!(*alg, "odim" | "deter" | "nca" | "dmodk") {
                        // ODim side hops: all at L*, ascending in k, one per offset dimension.
                        for sides in &w.sides {
                            assert_eq!(sides.len(), o);
                            assert!(sides.iter().all(|&(l, _)| l == l_star(hz, s, t)), "{alg} {sides:?}");
                            assert!(sides.windows(2).all(|p| p[0].1 < p[1].1), "{alg} {sides:?}");
                        }
                    }
                    if *alg == "cliod" {
                        assert!(w.sides.iter().flatten().all(|&(l, _)| l == l_star(hz, s, t)));
                    }
                    if matches!(*alg, "deter" | "dmodk") {
                        // Deterministic up, sides and down: one route (every case has q = 1).
                        assert_eq!(w.routes.len(), 1, "{alg} {s} -> {t}");
                    }
                }
            }
        }
    }
}

#[test]
fn tiny_example_route_counts() {
    // SPEC §4.2 H_{1,2}(2; q=1)(Z_2(2,2;1,2;1,1)): leaf S1(0;0) (id 0) to S1(1;1) (id 3): LCL = 2, O = {1}.
    // ODim and CLIOD: up to either of the 2 level-2 switches, side, down: 2 routes. ALIOD also takes the
    // side hop at level 1 first, then up to either parent and down (2), or rises to either parent and
    // then goes side-then-down or down-then-side at level 1 (2 x 2): 6. Deter: 1.
    for (alg, n) in [("odim", 2), ("cliod", 2), ("aliod", 6), ("deter", 1)] {
        let (net, r) = routing_for(&hz_config(CASES[1], &[&format!("routing.algorithm={alg}")]));
        let hz = hyperz(&net);
        let (s, t) = (hz.switch_at(1, 0, 0), hz.switch_at(1, 1, 1));
        assert_eq!((s, t), (0, 3));
        let w = walk(&net, &*r, s, t);
        assert_eq!(w.routes.len(), n, "{alg}: {:?}", w.routes);
        if alg == "aliod" {
            // The level-1 side hop goes to S1(1;0) (id 2), whose zone does not hold the destination.
            assert!(w.routes.iter().any(|p| p[1] == 2));
        }
    }
}

/// Candidate sets at every (switch, destination) of a network as comparable values.
fn candidate_table(cfg: &Config) -> Vec<Vec<(u16, u8, u32, bool)>> {
    let (net, r) = routing_for(cfg);
    let hz = hyperz(&net);
    let mut table = Vec::new();
    for s in 0..hz.num_switches() as SwitchId {
        for &t in &leaves(hz) {
            if s != t {
                let mut v = Vec::new();
                r.candidates(s, &RouteState { src: s, dst: t, ..Default::default() }, &mut v);
                let mut v: Vec<_> = v.iter().map(|c| (c.port, c.vc, c.penalty, c.escape)).collect();
                v.sort_unstable();
                table.push(v);
            }
        }
    }
    table
}

#[test]
fn at_height_one_deter_is_odim_and_aliod_is_cliod() {
    for case in [CASES[0], (&[3, 2, 4][..], &[3][..], &[1][..], &[1][..])] {
        for policy in ["ladder", "hyperz-b"] {
            let p = format!("routing.vc_policy={policy}");
            let t = |alg: &str| candidate_table(&hz_config(case, &[&format!("routing.algorithm={alg}"), &p]));
            assert_eq!(t("deter"), t("odim"), "{case:?} {policy}");
            assert_eq!(t("aliod"), t("cliod"), "{case:?} {policy}");
        }
    }
}

#[test]
fn aliod_prefers_idle_sides_over_up() {
    // Adda 2023 Table 1 via penalties: at a leaf with the LCL above and an offset dimension, ALIOD
    // offers Side(k) at 0 and every up port at the fallback penalty; VC 0 carries the ODim (up) move.
    // At level 1 with the LCL reached (rule 5) it is CLIOD's step 2: the ODim side (dimension 0) at
    // 0, dimension 1 at a packet (16 phits) less one.
    let (net, r) = routing_for(&hz_config(CASES[2], &["routing.algorithm=aliod"]));
    let hz = hyperz(&net);
    let (s, t) = (hz.switch_at(1, 0, 0), hz.switch_at(1, 4, 1)); // Z-node 4 = (1,1): O = {0, 1}
    let mut v = Vec::new();
    r.candidates(s, &RouteState { src: s, dst: t, ..Default::default() }, &mut v);
    let kinds: Vec<_> = v.iter().map(|c| (hz.port_kind(s, c.port).unwrap(), c.vc, c.penalty, c.escape)).collect();
    use super::hyperz_moves::{ESCAPE_PENALTY, FALLBACK_PENALTY};
    let up = PortKind::Up;
    let mut expect = vec![
        (PortKind::Side { dim: 0 }, 1, 0, false),
        (PortKind::Side { dim: 1 }, 1, 0, false),
        (up, 1, FALLBACK_PENALTY, false),
        (up, 1, FALLBACK_PENALTY, false),
        (up, 0, ESCAPE_PENALTY, true),
        (up, 0, ESCAPE_PENALTY, true),
    ];
    let key = |x: &(PortKind, u8, u32, bool)| format!("{x:?}");
    let mut got = kinds.clone();
    got.sort_by_key(key);
    expect.sort_by_key(key);
    assert_eq!(got, expect);
    let t = hz.switch_at(1, 4, 0);
    let mut v = Vec::new();
    r.candidates(s, &RouteState { src: s, dst: t, ..Default::default() }, &mut v);
    let mut got: Vec<_> = v.iter().map(|c| (hz.port_kind(s, c.port).unwrap(), c.vc, c.penalty, c.escape)).collect();
    let mut expect = vec![
        (PortKind::Side { dim: 0 }, 1, 0, false),
        (PortKind::Side { dim: 1 }, 1, 15, false),
        (PortKind::Side { dim: 0 }, 0, ESCAPE_PENALTY, true),
    ];
    got.sort_by_key(key);
    expect.sort_by_key(key);
    assert_eq!(got, expect);
}

#[test]
fn deadlock_free_under_both_schemes_and_cliod_cyclic_on_one_vc() {
    for case in [CASES[0], CASES[2], CASES[3], CASES[4]] {
        for alg in HZ_ALGS {
            let a = format!("routing.algorithm={alg}");
            for policy in ["ladder", "hyperz-a", "hyperz-b"] {
                let (net, r) = routing_for(&hz_config(case, &[&a, &format!("routing.vc_policy={policy}")]));
                let rep = deadlock::check(&net, &*r);
                assert!(rep.deadlock_free(), "{alg} {policy} {case:?}: {:?}", rep.verdict);
                let escape = matches!(alg, "cliod" | "aliod") && policy != "hyperz-b";
                assert_eq!(matches!(rep.verdict, Verdict::Duato { .. }), escape, "{alg} {policy}");
            }
            // One VC, no scheme: ODim and Deter stay acyclic, CLIOD and ALIOD have a cycle (SPEC §5.3).
            let (net, r) = routing_for(&hz_config(case, &[&a, "routing.vc_policy=none", "routing.vcs=1"]));
            let rep = deadlock::check(&net, &*r);
            if matches!(alg, "odim" | "deter") {
                assert_eq!(rep.verdict, Verdict::Acyclic, "{alg} {case:?}");
            } else {
                assert!(matches!(rep.verdict, Verdict::Cycle { .. }), "{alg} {case:?}: {:?}", rep.verdict);
            }
        }
    }
}

#[test]
fn scheme_b_uses_the_side_hop_count() {
    // d = 2 with both s_k >= 2: VCs 0..=2; a route with |O| = 2 uses VC 0, then 1 after the first side
    // hop, then 2 after the second (SPEC §5.3 scheme B).
    let (net, r) = routing_for(&hz_config(CASES[2], &["routing.algorithm=aliod", "routing.vc_policy=hyperz-b"]));
    assert_eq!(r.vcs(), 3);
    let hz = hyperz(&net);
    let (s, t) = (hz.switch_at(1, 0, 0), hz.switch_at(1, 4, 0));
    let mut at = s;
    let mut st = RouteState { src: s, dst: t, ..Default::default() };
    let mut vcs = Vec::new();
    while at != t {
        let mut v = Vec::new();
        r.candidates(at, &st, &mut v);
        let c = v[0];
        vcs.push(c.vc);
        let next = net.neighbour(at, c.port).unwrap().0;
        take_hop(&*r, &mut st, at, next, &c);
        at = next;
    }
    assert_eq!(vcs, vec![0, 1]); // L* = 1: two side hops at level 1, nothing else
}

#[test]
fn fat_tree_routes_are_minimal_and_deadlock_free_on_one_vc() {
    for (z, rt, g) in [
        (&[4usize, 4, 4][..], &[1usize, 4, 16][..], &[1usize, 1, 1][..]), // 4-ary 3-tree
        (&[2, 3, 2], &[1, 2, 4], &[1, 2, 2]),                             // PGFT with g > 1
    ] {
        for alg in TREE_ALGS.iter().chain(&["odim", "deter"]) {
            let cfg = tree_config(z, rt, g, &[&format!("routing.algorithm={alg}")]);
            let (net, r) = routing_for(&cfg);
            let hz = hyperz(&net);
            for &s in &leaves(hz) {
                for &t in &leaves(hz) {
                    if s != t {
                        let w = walk(&net, &*r, s, t);
                        assert!(w.sides.iter().all(|x| x.is_empty()));
                    }
                }
            }
            if TREE_ALGS.contains(alg) {
                assert_eq!(r.vcs(), 1);
                assert_eq!(deadlock::check(&net, &*r).verdict, Verdict::Acyclic, "{alg} {z:?}");
            }
        }
    }
}

#[test]
fn dmodk_spreads_each_leafs_servers_over_distinct_roots() {
    // 4-ary 3-tree: 16 leaves of 4 servers, 16 roots. D-mod-K's up ports are the destination
    // server's digits (Zahavi 2010; server d = p + 4 L with leaf L = x_2 + 4 x_3: port p at level 1,
    // x_2 at level 2), so all traffic to one server that reaches the top does so at one root, the
    // 4 servers of a leaf use 4 different roots, and every root serves 64 / 16 = 4 servers.
    let (net, r) = routing_for(&tree_config(&[4, 4, 4], &[1, 4, 16], &[1, 1, 1], &["routing.algorithm=dmodk"]));
    let hz = hyperz(&net);
    let mut root_of = std::collections::BTreeMap::new();
    for &t in &leaves(hz) {
        for port in 0..4u16 {
            for &s in &leaves(hz) {
                if s / 4 == t / 4 {
                    continue; // the LCL is below the top
                }
                // Deterministic: follow the single candidate up to the top.
                let st = RouteState { src: s, dst: t, dst_port: port, ..Default::default() };
                let mut at = s;
                while hz.level(at) < 3 {
                    let mut cands: Vec<Candidate> = Vec::new();
                    r.candidates(at, &st, &mut cands);
                    assert_eq!(cands.len(), 1, "dmodk is deterministic");
                    at = net.neighbour(at, cands[0].port).expect("a wired port").0;
                }
                assert_eq!(*root_of.entry((t, port)).or_insert(at), at, "server {port} of leaf {t}");
            }
        }
        let roots: BTreeSet<_> = (0..4u16).map(|p| root_of[&(t, p)]).collect();
        assert_eq!(roots.len(), 4, "the servers of leaf {t} share roots: {roots:?}");
    }
    let mut per_root = std::collections::BTreeMap::new();
    root_of.values().for_each(|&root| *per_root.entry(root).or_insert(0) += 1);
    assert_eq!(per_root.len(), 16);
    assert!(per_root.values().all(|&n| n == 4), "{per_root:?}");
}

#[test]
fn errors_name_the_key() {
    // Not a HyperZ: refused while the config is read (the registry's families), and by the builder.
    let text = "[topology]\nsides = [3, 3]\nservers_per_switch = 2\n";
    for alg in HZ_ALGS.iter().chain(&TREE_ALGS) {
        let e = parse_str(text, "t", &[format!("routing.algorithm={alg}")]).unwrap_err().to_string();
        assert!(e.contains("routing.algorithm") && e.contains("hyperz"), "{e}");
        let mut params = parse_str(text, "t", &[]).unwrap().routing_params();
        params.algorithm = alg.to_string();
        let net = sim::build_network(&parse_str(text, "t", &[]).unwrap()).unwrap();
        let e = build(&params, net).err().unwrap().to_string();
        assert!(e.contains("routing.algorithm") && e.contains("hyperz"), "{e}");
    }
    // Faults are taken (see hyperz_fault_tests.rs): the registry says so.
    for alg in HZ_ALGS.iter().chain(&TREE_ALGS) {
        assert!(crate::routing::entry(alg).unwrap().fault_tolerant, "{alg}");
    }
    // VC counts and policies.
    for (sets, key) in [
        (&["routing.algorithm=cliod", "routing.vcs=1"][..], "routing.vcs"),
        (&["routing.algorithm=odim", "routing.vc_policy=hyperz-b", "routing.vcs=2"], "routing.vcs"),
        (&["routing.algorithm=aliod", "routing.vc_policy=davc-n"], "routing.vc_policy"),
    ] {
        let cfg = hz_config(CASES[2], sets);
        let e = build(&cfg.routing_params(), sim::build_network(&cfg).unwrap()).err().unwrap().to_string();
        assert!(e.contains(key), "{sets:?}: {e}");
    }
}
