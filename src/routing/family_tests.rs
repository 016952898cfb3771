//! Tests of the dragonfly and torus routings: the papers' VC schemes checked with the channel
//! dependency analysis (`hxsim check-deadlock`) on small instances, the route shapes, and the
//! errors on other topologies.

use super::deadlock::{self, Verdict};
use super::tests::take_hop;
use super::{build, Candidate, RouteState, Routing};
use crate::config::{parse_str, Config};
use crate::topology::{Fabric, SwitchId};
use std::sync::Arc;

fn config(topology: &str, sets: &[&str]) -> Config {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    parse_str(&format!("[topology]\n{topology}\n"), "test", &sets).unwrap()
}

fn routing(topology: &str, sets: &[&str]) -> (Arc<Fabric>, Box<dyn Routing>) {
    let cfg = config(topology, sets);
    let net = crate::sim::build_network(&cfg).unwrap();
    let r = build(&cfg.routing_params(), net.clone()).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    (net, r)
}

const DF: &str = "kind = \"dragonfly\"\np = 1\na = 4\nh = 2";
const DF_ABS: &str = "kind = \"dragonfly\"\np = 1\na = 3\nh = 2\narrangement = \"absolute\"";

/// Largest VC any route uses, and the longest route, over every pair and every `init` choice.
fn walk_all(net: &Fabric, r: &dyn Routing) -> (u8, u32) {
    let (mut vc, mut longest) = (0, 0);
    let n = net.num_switches() as SwitchId;
    for src in 0..n {
        for dst in (0..n).filter(|&d| d != src) {
            r.init_choices(&RouteState { src, dst, ..Default::default() }, &mut |st| {
                let mut stack = vec![(src, st)];
                while let Some((at, st)) = stack.pop() {
                    if at == dst {
                        longest = longest.max(st.hops as u32);
                        continue;
                    }
                    let mut c: Vec<Candidate> = Vec::new();
                    r.candidates(at, &st, &mut c);
                    assert!(!c.is_empty(), "{} stuck at {at} ({src} -> {dst})", r.name());
                    for c in c {
                        vc = vc.max(c.vc);
                        let next = net.neighbour(at, c.port).unwrap().0;
                        let mut s = st;
                        take_hop(&*r, &mut s, at, next, &c);
                        stack.push((next, s));
                    }
                }
            });
        }
    }
    (vc, longest)
}

#[test]
fn dragonfly_routings_with_dallys_vcs_are_deadlock_free() {
    // DAVC section 7.2 / Fig. 4: Min on 2 VCs, Valiant (and UGAL) on 3; routes l g l and l g l g l.
    for topo in [DF, DF_ABS] {
        for (alg, vcs, longest) in [("dragonfly-min", 2, 3), ("dragonfly-valiant", 3, 5), ("ugal", 3, 5)] {
            let (net, r) = routing(topo, &[&format!("routing.algorithm={alg}")]);
            assert_eq!(r.vcs(), vcs, "{alg}");
            let rep = deadlock::check(&net, &*r);
            assert_eq!(rep.verdict, Verdict::Acyclic, "{alg} on {topo}");
            assert_eq!(rep.longest_route, longest, "{alg}");
            let (top, _) = walk_all(&net, &*r);
            assert_eq!(top as usize, vcs - 1, "{alg} uses every level");
        }
    }
}

#[test]
fn dragonfly_min_on_one_vc_has_a_cycle_and_davc_fixes_it() {
    let (net, r) = routing(DF, &["routing.algorithm=dragonfly-min", "routing.vc_policy=none", "routing.vcs=1"]);
    assert!(matches!(deadlock::check(&net, &*r).verdict, Verdict::Cycle { .. }));
    for f in ["davc-n", "davc-p", "davc-np"] {
        let (net, r) = routing(DF, &["routing.algorithm=dragonfly-min", &format!("routing.vc_policy={f}")]);
        assert_eq!(r.vcs(), 3, "DAVC sizes for the longest route, 3 hops");
        assert_eq!(deadlock::check(&net, &*r).verdict, Verdict::Acyclic, "{f}");
    }
}

/// DAVC section 8.1: with minimal routing on the dragonfly, F_P and F_NP need no more VCs than
/// Dally's scheme (2) and F_N more. Derivation: global ports are numbered after the local ones,
/// so on `l g l` the global hop never raises F_P's or F_NP's VC (its port is above the local
/// inbound one) and the last local hop always does (its port is below the global inbound one): 2
/// VCs; F_N raises on every hop to a lower switch id, and a route `l g l` from a higher group
/// down to a lower switch of a lower group raises twice: 3. Valiant's `l g l g l` adds one global
/// level: 3 for Dally, F_P, F_NP; F_N needs more than Dally's 3 and at most the 5 hops (how many
/// depends on the arrangement and the ids). `vcs_needed` of the
/// channel dependency analysis must say so, and agree with a walk over every route.
#[test]
fn davc_vcs_needed_on_the_dragonfly_match_the_paper() {
    for topo in [DF, DF_ABS] {
        for (alg, want) in
            [("dragonfly-min", [2..=2, 3..=3, 2..=2, 2..=2]), ("dragonfly-valiant", [3..=3, 4..=5, 3..=3, 3..=3])]
        {
            for (policy, want) in ["dally", "davc-n", "davc-p", "davc-np"].into_iter().zip(want) {
                let (net, r) =
                    routing(topo, &[&format!("routing.algorithm={alg}"), &format!("routing.vc_policy={policy}")]);
                let rep = deadlock::check(&net, &*r);
                assert_eq!(rep.verdict, Verdict::Acyclic, "{alg} {policy}");
                let (top, _) = walk_all(&net, &*r);
                assert_eq!(rep.vcs_needed, top as usize + 1, "{alg} {policy}: the walk's highest VC");
                assert!(
                    want.contains(&rep.vcs_needed),
                    "{alg} {policy} on {topo}: {} VCs, want {want:?}",
                    rep.vcs_needed
                );
            }
        }
    }
}

#[test]
fn ugal_offers_both_first_hops_with_the_extra_hops_as_penalty() {
    // DF(1,4,2) palm tree, 9 groups: switch 0 (group 0, router 0) owns links to groups 1 and 2.
    let (net, r) = routing(DF, &["routing.algorithm=ugal"]);
    let dst = 4 * 4 + 1; // group 4, router 1
    let st = RouteState { src: 0, dst, intermediate: 1, phase: super::ugal::UNDECIDED, ..Default::default() };
    let mut c = Vec::new();
    r.candidates(0, &st, &mut c);
    // Minimal: group 0's link to group 4 is j = 3, router 1: a local hop (l g l: 3 hops at most).
    // Valiant via group 1: the global link of router 0, then minimal from the landing router.
    assert_eq!(c.len(), 2, "{c:?}");
    let min = c.iter().find(|x| x.penalty == 0).unwrap();
    assert_eq!(net.neighbour(0, min.port).unwrap().0, 1);
    let val = c.iter().find(|x| x.port != min.port).unwrap();
    assert_eq!(net.neighbour(0, val.port).unwrap().0 / 4, 1);
    assert_eq!(val.penalty % 16, 0, "a packet (16 phits) per extra hop");
    let mut s = st;
    take_hop(&*r, &mut s, 0, net.neighbour(0, val.port).unwrap().0, val);
    assert_eq!(s.phase, super::dragonfly_valiant::TO_DESTINATION, "arrived in the intermediate group");
    let mut s = st;
    take_hop(&*r, &mut s, 0, 1, min);
    assert_eq!(s.phase, super::dragonfly_valiant::TO_DESTINATION, "minimal chosen");
}

/// Kim et al.'s UGAL-L chooses between the minimal and the Valiant route by local queues, so a
/// packet goes minimally without a choice only where Valiant itself would (the intermediate group
/// is the source's or the destination's, section 4.2). Where both routes leave the source by one
/// port, the choice moves to the next router: following every packet while it is offered a single
/// port, it must meet a router offering both the minimal port and the port towards its intermediate
/// group, unless Valiant would route it minimally. (Deciding "minimal" at the source, as hxsim did
/// before 2026-11-28, left these packets no choice.)
#[test]
fn ugal_leaves_no_packet_without_a_choice_that_valiant_would_divert() {
    use super::dragonfly_valiant::port_to_group;
    for topo in [DF, DF_ABS] {
        let (net, r) = routing(topo, &["routing.algorithm=ugal"]);
        let df = match net.topology().view() {
            crate::topology::View::Dragonfly(d) => d.clone(),
            _ => unreachable!(),
        };
        let n = net.num_switches() as SwitchId;
        let (mut deferred, mut forced) = (0, 0);
        for src in 0..n {
            for dst in (0..n).filter(|&d| df.group(d) != df.group(src)) {
                for grp in 0..df.groups() {
                    let valiant_minimal = grp == df.group(src) || grp == df.group(dst);
                    let mut st = RouteState { src, dst, ..Default::default() };
                    let first = st;
                    r.init_choices(&first, &mut |s| {
                        if s.intermediate as usize == grp {
                            st = s;
                        }
                    });
                    let mut at = src;
                    let chose = loop {
                        if at == dst {
                            break false;
                        }
                        let mut c: Vec<Candidate> = Vec::new();
                        r.candidates(at, &st, &mut c);
                        let mut ports: Vec<_> = c.iter().map(|x| x.port).collect();
                        ports.sort();
                        ports.dedup();
                        if ports.len() > 1 {
                            let mut want = [df.minimal_port(at, dst), port_to_group(&df, at, grp)];
                            want.sort();
                            assert_eq!(ports, want, "{topo}: {src} -> {dst} via group {grp}, at {at}");
                            deferred += (at != src) as u32;
                            break true;
                        }
                        let next = net.neighbour(at, c[0].port).unwrap().0;
                        take_hop(&*r, &mut st, at, next, &c[0]);
                        at = next;
                    };
                    assert_eq!(chose, !valiant_minimal, "{topo}: {src} -> {dst} via group {grp}");
                    forced += (!chose) as u32;
                }
            }
        }
        assert!(deferred > 0 && forced > 0, "{topo}: both cases occur");
    }
}

#[test]
fn torus_dor_with_dateline_vcs_is_deadlock_free_and_needs_them() {
    for sides in ["[4, 4]", "[5, 3, 2]", "[6]"] {
        let topo = format!("kind = \"torus\"\nsides = {sides}\nservers_per_switch = 1");
        let (net, r) = routing(&topo, &["routing.algorithm=torus-dor"]);
        assert_eq!(r.vcs(), 2);
        let rep = deadlock::check(&net, &*r);
        assert_eq!(rep.verdict, Verdict::Acyclic, "{sides}");
        assert_eq!(rep.longest_route, net.topology().diameter(), "DOR is minimal");
        // Without the dateline, one VC: the rings close a cycle.
        let (net, r) = routing(&topo, &["routing.algorithm=torus-dor", "routing.vc_policy=none", "routing.vcs=1"]);
        assert!(matches!(deadlock::check(&net, &*r).verdict, Verdict::Cycle { .. }), "{sides}");
    }
    let (net, r) = routing("kind = \"mesh\"\nsides = [4, 3]\nservers_per_switch = 1", &["routing.algorithm=torus-dor"]);
    assert_eq!(r.vcs(), 1, "a mesh has no dateline");
    assert_eq!(deadlock::check(&net, &*r).verdict, Verdict::Acyclic);
}

#[test]
fn family_routings_refuse_other_topologies_and_schemes() {
    let hx = "sides = [4, 4]\nservers_per_switch = 1";
    for alg in ["dragonfly-min", "dragonfly-valiant", "ugal", "torus-dor"] {
        let sets = [format!("routing.algorithm={alg}")];
        let e = parse_str(&format!("[topology]\n{hx}\n"), "test", &sets).unwrap_err().to_string();
        assert!(e.contains("routing.algorithm") && e.contains(alg), "{e}");
        // The builder refuses too, for code that builds without validating a config.
        let cfg = config(hx, &[]);
        let mut params = cfg.routing_params();
        params.algorithm = alg.to_string();
        let e = build(&params, crate::sim::build_network(&cfg).unwrap()).err().unwrap().to_string();
        assert!(e.contains("routing.algorithm"), "{e}");
    }
    let e = parse_str(&format!("[topology]\n{DF}\n"), "test", &["routing.algorithm=torus-dor".into()]).unwrap_err();
    assert!(e.to_string().contains("\"torus\""), "{e}");
    let cfg = config(hx, &["routing.algorithm=minimal", "routing.vc_policy=dally"]);
    let e = build(&cfg.routing_params(), crate::sim::build_network(&cfg).unwrap()).err().unwrap();
    assert!(e.to_string().contains("routing.vc_policy"), "{e}");
    let cfg = config(DF, &["routing.algorithm=dragonfly-valiant", "routing.vcs=2"]);
    let e = build(&cfg.routing_params(), crate::sim::build_network(&cfg).unwrap()).err().unwrap();
    assert!(e.to_string().contains("routing.vcs"), "{e}");
}
