//! Tests of the HyperZ and fat-tree routings on faulty networks ([`super::hyperz_faults`]): every
//! route of every pair of live leaves is walked from `candidates` through `advance` and must arrive
//! over live links; `check-deadlock` must find the CDG acyclic for every fault kind; route lengths
//! are compared with BFS distances over the live links; and fault sets the rule cannot route are
//! refused with an error naming `faults`.

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

fn hz_text(s: &[usize], z: &[usize], r: &[usize], g: &[usize]) -> String {
    format!("[topology]\nkind = \"hyperz\"\nsides = {s:?}\nzones = {z:?}\nroots = {r:?}\ninternal_links = {g:?}\n")
}

fn tree_text(z: &[usize], r: &[usize], g: &[usize]) -> String {
    format!("[topology]\nkind = \"fattree\"\nzones = {z:?}\nroots = {r:?}\ninternal_links = {g:?}\n")
}

fn config(text: &str, sets: &[&str]) -> Config {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    parse_str(text, "test", &sets).unwrap_or_else(|e| panic!("{e}"))
}

fn routing_for(cfg: &Config) -> (Arc<Fabric>, Box<dyn Routing>) {
    let net = sim::build_network(cfg).unwrap();
    let r = build(&cfg.routing_params(), net.clone()).unwrap_or_else(|e| panic!("{e}"));
    (net, r)
}

fn hyperz(net: &Fabric) -> &HyperZ {
    match net.topology().view() {
        View::HyperZ(h) => h,
        _ => panic!("not a HyperZ"),
    }
}

fn live_leaves(net: &Fabric) -> Vec<SwitchId> {
    let hz = hyperz(net);
    (0..hz.num_switches() as SwitchId).filter(|&s| hz.level(s) == 1 && net.switch_alive(s)).collect()
}

/// Every route `r` can produce from `src` to `dst` (switch sequences), walking every candidate and
/// asserting that each is on a live link and a VC the routing has, that no state is stuck, that a
/// route never rises after going down without a side hop in between (the segments of
/// [`super::hyperz_faults`]), and, where the HyperZ has dimensions, that the VC is the number of side
/// hops taken (scheme B).
fn routes(net: &Fabric, r: &dyn Routing, src: SwitchId, dst: SwitchId) -> BTreeSet<Vec<SwitchId>> {
    let hz = hyperz(net);
    let scheme_b = hz.dims() > 0;
    let mut done = BTreeSet::new();
    let mut seen = HashSet::new();
    // (switch, state, path, side hops taken, gone down since the last one)
    let mut stack = vec![(src, RouteState { src, dst, ..Default::default() }, vec![src], 0u8, false)];
    while let Some((at, st, path, sides, down)) = stack.pop() {
        let mut cands: Vec<Candidate> = Vec::new();
        r.candidates(at, &st, &mut cands);
        assert!(!cands.is_empty(), "{}: stuck at {at} from {src} to {dst} after {path:?}", r.name());
        assert!(path.len() <= 4 * hz.num_switches(), "{}: {src} -> {dst} loops: {path:?}", r.name());
        for c in cands {
            assert!((c.vc as usize) < r.vcs(), "{}: VC {} of {}", r.name(), c.vc, r.vcs());
            let (next, _) =
                net.neighbour(at, c.port).unwrap_or_else(|| panic!("{}: dead port {} at {at}", r.name(), c.port));
            let kind = hz.port_kind(at, c.port).unwrap();
            if scheme_b {
                assert_eq!(c.vc, sides, "{}: VC after {sides} side hops on {path:?}", r.name());
            }
            assert!(!(down && kind == PortKind::Up), "{}: up after down on {path:?}", r.name());
            let side = matches!(kind, PortKind::Side { .. });
            let mut path = path.clone();
            path.push(next);
            let mut s2 = st;
            take_hop(r, &mut s2, at, next, &c);
            if next == dst {
                done.insert(path);
            } else if seen.insert((path.clone(), s2)) {
                stack.push((next, s2, path, sides + side as u8, !side && (down || kind == PortKind::Down)));
            }
        }
    }
    done
}

/// Walks every pair of live leaves; returns the longest route found (hops).
fn walk_all(net: &Fabric, r: &dyn Routing) -> usize {
    let leaves = live_leaves(net);
    let mut longest = 0;
    for &s in &leaves {
        for &t in &leaves {
            if s != t {
                let rs = routes(net, r, s, t);
                assert!(!rs.is_empty(), "{}: no route {s} -> {t}", r.name());
                for p in &rs {
                    assert!(p.len() > net.distance(s, t) as usize, "{}: shorter than BFS: {p:?}", r.name());
                    longest = longest.max(p.len() - 1);
                }
            }
        }
    }
    longest
}

/// The fault kinds of `[faults]` on a HyperZ with `d = 2`, each as `--set`s.
fn hz_fault_kinds() -> Vec<Vec<&'static str>> {
    vec![
        vec!["faults.random_links=8"],
        vec!["faults.random_links=8", "faults.seed=5"],
        vec!["faults.random_switches=2"],
        vec!["faults.shapes=[{kind=\"znode\", at=[1,1]}]"],
        vec!["faults.shapes=[{kind=\"plane\", level=2, index=1}]", "faults.random_links=3"],
        vec!["faults.links=[[0,2],[3,1]]", "faults.switches=[22]"],
        vec!["faults.lifetime={link_rate=0.04, switch_rate=0.01, years=4.0, steps=4}"],
    ]
}

/// The search's shortcut (a fault-free shortest path that survives, in a mode that may take it)
/// never says a state reaches a leaf that the full search says it does not, on a HyperZ and a fat
/// tree under three fault kinds, for every live switch, every leaf and four modes a route can be
/// in; it answers for most states that reach, and declines some (exceptions, or a mode that may not
/// climb) over all the cases.
#[test]
fn the_shortcut_of_the_feasibility_search_agrees_with_the_search() {
    use super::hyperz_faults::{Detours, Mode};
    let shapes = [hz_text(&[3, 3], &[2, 2], &[1, 2], &[1, 1]), tree_text(&[4, 4, 4], &[1, 4, 16], &[1, 1, 1])];
    let mut declined_anywhere = 0;
    for text in &shapes {
        for faults in hz_fault_kinds().into_iter().take(3) {
            let (net, _) = routing_for(&config(text, &faults));
            let hz = hyperz(&net).clone();
            let d = Detours::new(net.clone(), 1);
            let modes = [
                Mode::default(),
                Mode { descending: true, ..Mode::default() },
                Mode { sides: 1, ..Mode::default() },
                Mode { descending: true, sides: 1, deroutes: 1 },
            ];
            let (mut answered, mut declined) = (0, 0);
            for x in (0..net.num_switches() as SwitchId).filter(|&x| net.switch_alive(x)) {
                for &t in &live_leaves(&net) {
                    for &m in &modes {
                        let short = d.with_search(|s| s.minimal_route_lives(&hz, x, m, t));
                        let full = d.with_search(|s| s.search(&hz, x, m, t));
                        assert!(!short || full, "{faults:?}: shortcut from {x} ({m:?}) to {t} without a route");
                        if x != t && full {
                            if short {
                                answered += 1;
                            } else {
                                declined += 1;
                            }
                        }
                    }
                }
            }
            assert!(answered > declined, "{faults:?}: {answered} answered, {declined} declined");
            declined_anywhere += declined;
        }
    }
    assert!(declined_anywhere > 0);
}

#[test]
fn every_fault_kind_routes_every_pair_and_is_deadlock_free() {
    // h = 2 and h = 3, d = 2, s = 3 (deroutes possible), g = 1 and 2.
    for (s, z, rt, g) in [
        (&[3usize, 3][..], &[2usize, 2][..], &[1usize, 2][..], &[1usize, 1][..]),
        (&[3, 3], &[2, 2, 2], &[1, 2, 4], &[1, 1, 2]),
    ] {
        let text = hz_text(s, z, rt, g);
        for faults in hz_fault_kinds() {
            for alg in HZ_ALGS.iter().chain(&TREE_ALGS) {
                let mut sets = faults.clone();
                let a = format!("routing.algorithm={alg}");
                sets.push(&a);
                let (net, r) = routing_for(&config(&text, &sets));
                assert!(net.is_faulty());
                // Scheme B extended by one deroute: d_eff + 2 VCs.
                assert_eq!(r.vcs(), 4, "{alg} {faults:?}");
                let longest = walk_all(&net, &*r);
                let rep = deadlock::check(&net, &*r);
                assert_eq!(rep.verdict, Verdict::Acyclic, "{alg} {faults:?} on {z:?}");
                assert_eq!(rep.longest_route as usize, longest, "{alg} {faults:?}");
            }
        }
    }
}

#[test]
fn fat_tree_faults_route_up_down_on_one_vc() {
    // A 4-ary 3-tree and a PGFT with parallel links, with every fault kind a fat tree has.
    let mut routed = 0;
    for text in [tree_text(&[4, 4, 4], &[1, 4, 16], &[1, 1, 1]), tree_text(&[2, 3, 2], &[1, 2, 4], &[1, 2, 2])] {
        for faults in [
            &["faults.random_links=6"][..],
            &["faults.random_switches=3"],
            &["faults.lifetime={link_rate=0.05, switch_rate=0.03, years=4.0, steps=4}"],
        ] {
            for alg in TREE_ALGS.iter().chain(&HZ_ALGS) {
                let a = format!("routing.algorithm={alg}");
                let sets: Vec<&str> = faults.iter().copied().chain([a.as_str()]).collect();
                let cfg = config(&text, &sets);
                let (net, r) = match build(&cfg.routing_params(), sim::build_network(&cfg).unwrap()) {
                    Ok(r) => (sim::build_network(&cfg).unwrap(), r),
                    // A fault set without up*/down* routes for some pair is refused for every
                    // routing alike; the refusal is tested below.
                    Err(e) => {
                        assert!(e.to_string().contains("no route"), "{e}");
                        continue;
                    }
                };
                walk_all(&net, &*r);
                let rep = deadlock::check(&net, &*r);
                assert_eq!(rep.verdict, Verdict::Acyclic, "{alg} {faults:?}");
                if TREE_ALGS.contains(alg) {
                    assert_eq!(r.vcs(), 1);
                }
                routed += 1;
            }
        }
    }
    // Most of these fault sets leave up*/down* routes (36 tries).
    assert!(routed >= 24, "{routed}");
}

#[test]
fn a_failed_side_link_is_avoided_one_level_up() {
    // SPEC §4.2's tiny example H_{1,2}(2; q=1)(Z_2(2,2;1,2;1,1)): leaf S1(0;0) (id 0) and S1(1;0)
    // (id 2) share their local address, so L* = 1 and the fault-free route is their one level-1 side
    // link. With it failed, BFS gives 3 hops: up to either level-2 switch of Z-node 0, its side link,
    // down. Every rule takes exactly those two routes.
    let text = hz_text(&[2], &[2, 2], &[1, 2], &[1, 1]);
    let (net0, _) = routing_for(&config(&text, &["routing.algorithm=odim"]));
    let hz = hyperz(&net0).clone();
    let (s, t) = (hz.switch_at(1, 0, 0), hz.switch_at(1, 1, 0));
    assert_eq!((s, t, net0.distance(s, t)), (0, 2, 1));
    let side = hz.side_ports(s, 0, 1).start;
    let link = format!("faults.links=[[{s},{side}]]");
    for alg in HZ_ALGS.iter().chain(&TREE_ALGS) {
        let (net, r) = routing_for(&config(&text, &[&link, &format!("routing.algorithm={alg}")]));
        assert_eq!(net.distance(s, t), 3);
        let rs = routes(&net, &*r, s, t);
        let ups: BTreeSet<SwitchId> = (0..2).map(|x| hz.switch_at(2, 0, x)).collect();
        let want: BTreeSet<Vec<SwitchId>> =
            ups.iter().map(|&u| vec![s, u, hz.switch_at(2, 1, hz.flat(u)), t]).collect();
        assert_eq!(rs, want, "{alg}");
    }
}

#[test]
fn all_side_links_of_a_dimension_failed_take_a_deroute() {
    // h = 1, d = 1, s = 3: a 3-switch HyperX row (T = 2). With the link 0 - 1 failed, 0 reaches 1 only
    // through 2: one deroute (DAL's, section 5.4), on VC 0, then the minimal side hop on VC 1.
    let text = hz_text(&[3], &[2], &[1], &[1]);
    for alg in HZ_ALGS {
        let (net, r) = routing_for(&config(&text, &["faults.links=[[0,0]]", &format!("routing.algorithm={alg}")]));
        assert_eq!(r.vcs(), 3, "{alg}: d_eff + 1 + one deroute");
        assert_eq!(routes(&net, &*r, 0, 1), BTreeSet::from([vec![0, 2, 1]]), "{alg}");
        let mut st = RouteState { src: 0, dst: 1, ..Default::default() };
        let mut vcs = Vec::new();
        let mut at = 0;
        while at != 1 {
            let mut c = Vec::new();
            r.candidates(at, &st, &mut c);
            let next = net.neighbour(at, c[0].port).unwrap().0;
            vcs.push(c[0].vc);
            take_hop(&*r, &mut st, at, next, &c[0]);
            at = next;
        }
        assert_eq!(vcs, vec![0, 1], "{alg}");
        assert_eq!(deadlock::check(&net, &*r).verdict, Verdict::Acyclic, "{alg}");
    }
    // A leaf whose up links all failed is cut off inside its Z-node: from the other leaf of that
    // Z-node the only way in is out through a side link and back through the leaf's own (BFS: 4
    // hops, e.g. side - up - down - side, or up - side - down - side). H_{2,2}(3,3)(Z_2(2,2;1,2;1,1)): leaves 2 and 3 are Z-node 1's.
    let text = hz_text(&[3, 3], &[2, 2], &[1, 2], &[1, 1]);
    for alg in HZ_ALGS {
        let (net, r) =
            routing_for(&config(&text, &["faults.links=[[3,0],[3,1]]", &format!("routing.algorithm={alg}")]));
        let hz = hyperz(&net);
        assert_eq!((hz.znode(2), hz.znode(3), net.distance(2, 3)), (1, 1, 4));
        let rs = routes(&net, &*r, 2, 3);
        assert!(!rs.is_empty());
        for p in &rs {
            assert_eq!(p.len() - 1, 4, "{alg}: {p:?}");
            assert!(p.iter().any(|&x| hz.znode(x) != 1), "{alg}: {p:?} stays in Z-node 1");
        }
    }
}

#[test]
fn fault_sets_the_rule_cannot_route_are_refused_naming_faults() {
    // PGFT(2; 2,3; 1,2): three leaves, two roots. Leaf 0 keeps only root 0 and leaf 1 only root 1:
    // connected through leaf 2 (0 - r0 - 2 - r1 - 1), but no up*/down* route from 0 to 1.
    let text = tree_text(&[2, 3], &[1, 2], &[1, 1]);
    for alg in TREE_ALGS.iter().chain(&HZ_ALGS) {
        let cfg = config(&text, &["faults.links=[[0,1],[1,0]]", &format!("routing.algorithm={alg}")]);
        let net = sim::build_network(&cfg).unwrap();
        assert_eq!(net.bfs(0)[1], 4);
        let e = build(&cfg.routing_params(), net).err().unwrap().to_string();
        assert!(e.contains("faults.links") && e.contains("leaf switch 0 has no route to leaf switch 1"), "{e}");
    }
    // Scheme A's escape cannot take faults on a HyperZ with dimensions.
    let cfg = config(
        &hz_text(&[3, 3], &[2, 2], &[1, 2], &[1, 1]),
        &["faults.random_links=2", "routing.algorithm=aliod", "routing.vc_policy=hyperz-a"],
    );
    let e = build(&cfg.routing_params(), sim::build_network(&cfg).unwrap()).err().unwrap().to_string();
    assert!(e.contains("routing.vc_policy") && e.contains("hyperz-b"), "{e}");
    // Scheme B's VC count with a deroute.
    let cfg = config(
        &hz_text(&[3, 3], &[2, 2], &[1, 2], &[1, 1]),
        &["faults.random_links=2", "routing.algorithm=aliod", "routing.vcs=3"],
    );
    let e = build(&cfg.routing_params(), sim::build_network(&cfg).unwrap()).err().unwrap().to_string();
    assert!(e.contains("routing.vcs") && e.contains("deroute"), "{e}");
}

#[test]
fn far_faults_leave_the_rule_unchanged() {
    // A failed link inside Z-node 8 of a 3x3 HyperZ changes no candidate of a packet between Z-nodes
    // 0 and 1 whose every route stays in Z-nodes 0 and 1: the tier-1 moves are the fault-free ones.
    let text = hz_text(&[3, 3], &[2, 2], &[1, 2], &[1, 1]);
    for alg in HZ_ALGS {
        let a = format!("routing.algorithm={alg}");
        let (net0, r0) = routing_for(&config(&text, &[&a, "routing.vc_policy=hyperz-b"]));
        let hz = hyperz(&net0).clone();
        let far = hz.switch_at(2, 8, 0);
        let link = format!("faults.links=[[{far},0]]");
        let (net1, r1) = routing_for(&config(&text, &[&a, &link]));
        assert!(net1.is_faulty());
        for x in [0u32, 1] {
            for y in [0u32, 1] {
                let (s, t) = (hz.switch_at(1, 0, x as usize), hz.switch_at(1, 1, y as usize));
                assert_eq!(routes(&net0, &*r0, s, t), routes(&net1, &*r1, s, t), "{alg} {s} -> {t}");
            }
        }
    }
}

#[test]
fn escape_compositions_are_deadlock_free_by_duato() {
    // SurePath's rule over ALIOD's live moves or minimal routes: Duato's condition with the Up*/Down*
    // escape, with and without faults, and no state without a candidate.
    let text = hz_text(&[3, 3], &[2, 2], &[1, 2], &[1, 1]);
    let mut kinds = hz_fault_kinds();
    kinds.push(vec![]);
    for faults in kinds {
        for alg in ["surepath-aliod", "surepath-minimal"] {
            let a = format!("routing.algorithm={alg}");
            let sets: Vec<&str> = faults.iter().copied().chain([a.as_str(), "routing.vcs=3"]).collect();
            let (net, r) = routing_for(&config(&text, &sets));
            let rep = deadlock::check(&net, &*r);
            assert!(matches!(rep.verdict, Verdict::Duato { .. }), "{alg} {faults:?}: {:?}", rep.verdict);
        }
    }
}
