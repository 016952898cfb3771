//! Cross-algorithm tests: candidate sets against the papers' rules (expected values derived by hand
//! from the rules, in the comments), channel dependency analysis, and short simulations.

use super::dal::{DEROUTE_PENALTY as DAL_DEROUTE, ESCAPE_PENALTY as DAL_ESCAPE};
use super::deadlock::{self, Verdict};
use super::polarized::PolarizedRoutes;
use super::updown::{LinkKind, UpDown, DOWN_PENALTY, UP_PENALTY};
use super::{build, Candidate, ClassGroups, RouteState, Routing};
use crate::config::{parse_str, Config};
use crate::engine::Progress;
use crate::sim::{self, RunOptions};
use crate::topology::{Fabric, FaultSet, HyperX, SwitchId, Topology};
use std::sync::Arc;

fn config(sides: &[usize], sets: &[&str]) -> Config {
    let text = format!("[topology]\nsides = {sides:?}\nservers_per_switch = 2\n");
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    parse_str(&text, "test", &sets).unwrap()
}

fn routing(sides: &[usize], sets: &[&str]) -> (Arc<Fabric>, Box<dyn Routing>) {
    let cfg = config(sides, sets);
    let net = sim::build_network(&cfg).unwrap();
    let r = build(&cfg.routing_params(), net.clone()).unwrap();
    (net, r)
}

/// A config of one `[topology]` table's text plus `--set` overrides, with `seed = 3` (the tests of
/// the topology-agnostic table routings).
pub(super) fn topology_config(topology: &str, sets: &[&str]) -> Config {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    crate::config::parse_str(&format!("seed = 3\n[topology]\n{topology}\n"), "test", &sets).unwrap()
}

/// The fabric and routing of [`topology_config`].
pub(super) fn topology_routing(topology: &str, sets: &[&str]) -> (Arc<Fabric>, Box<dyn Routing>) {
    let cfg = topology_config(topology, sets);
    let net = crate::sim::build_network(&cfg).unwrap();
    let r = super::build(&cfg.routing_params(), net.clone()).unwrap_or_else(|e| panic!("{topology} {sets:?}: {e}"));
    (net, r)
}

/// One hop as the router takes it: the shared [`super::step`], then the routing's own update.
pub(super) fn take_hop<R: Routing + ?Sized>(r: &R, st: &mut RouteState, at: SwitchId, next: SwitchId, c: &Candidate) {
    super::step(st, c);
    r.advance(st, at, next, c);
}

fn hx(sides: &[usize]) -> HyperX {
    HyperX::new(sides, &vec![1; sides.len()], 2)
}

fn at(h: &HyperX, c: &[usize]) -> SwitchId {
    h.switch_at(c)
}

fn state(src: SwitchId, dst: SwitchId) -> RouteState {
    RouteState { src, dst, ..Default::default() }
}

/// Candidates as sorted `(next switch, vc, penalty, escape)`.
fn cands(net: &Fabric, r: &dyn Routing, x: SwitchId, st: &RouteState) -> Vec<(SwitchId, u8, u32, bool)> {
    let mut v = Vec::new();
    r.candidates(x, st, &mut v);
    let mut out: Vec<_> = v.iter().map(|c| (net.neighbour(x, c.port).unwrap().0, c.vc, c.penalty, c.escape)).collect();
    out.sort_unstable();
    out
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort_unstable();
    v
}

// ---------------------------------------------------------------- Omnidimensional / OmniWAR

#[test]
fn omni_candidates_follow_section_3_1_1() {
    // 4x4, (0,0) -> (1,2): both dimensions unaligned. Dimension 0: (1,0) minimal (0 phits),
    // (2,0), (3,0) deroutes (64); dimension 1: (0,2) minimal, (0,1), (0,3) deroutes. OmniWAR on
    // 2n = 4 VCs with m = n = 2: routes of up to 4 hops, one VC per hop, so hop 0 uses VC 0.
    let h = hx(&[4, 4]);
    let (net, r) = routing(&[4, 4], &["routing.algorithm=omniwar"]);
    let (s, t) = (at(&h, &[0, 0]), at(&h, &[1, 2]));
    let st = state(s, t);
    let expect = |c: &[usize], p: u32| (at(&h, c), 0u8, p, false);
    assert_eq!(
        cands(&net, &*r, s, &st),
        sorted(vec![
            expect(&[1, 0], 0),
            expect(&[2, 0], 64),
            expect(&[3, 0], 64),
            expect(&[0, 2], 0),
            expect(&[0, 1], 64),
            expect(&[0, 3], 64),
        ])
    );
    // With the budget spent, only the two minimal hops remain; after 3 hops the VC is 3.
    let spent = RouteState { deroutes: 2, hops: 3, ..st };
    assert_eq!(
        cands(&net, &*r, s, &spent),
        sorted(vec![(at(&h, &[1, 0]), 3, 0, false), (at(&h, &[0, 2]), 3, 0, false)])
    );
}

#[test]
fn omni_deroutes_are_counted_and_routes_stay_in_the_unaligned_subnetwork() {
    // 3x3x3 from (0,0,0) to (2,0,0): source and destination share a row, so every route stays in
    // it (SurePath section 4: "OmniWAR does not allow routes outside that row").
    let h = hx(&[3, 3, 3]);
    let (net, r) = routing(&[3, 3, 3], &["routing.algorithm=omniwar"]);
    let (s, t) = (at(&h, &[0, 0, 0]), at(&h, &[2, 0, 0]));
    let mut st = state(s, t);
    let c = cands(&net, &*r, s, &st);
    assert_eq!(c, vec![(at(&h, &[1, 0, 0]), 0, 64, false), (t, 0, 0, false)]);
    // Take the deroute: the budget is charged and the packet is still in the row.
    let mut v = Vec::new();
    r.candidates(s, &st, &mut v);
    let d = *v.iter().find(|c| c.penalty == 64).unwrap();
    let y = net.neighbour(s, d.port).unwrap().0;
    take_hop(&*r, &mut st, s, y, &d);
    assert_eq!((st.deroutes, st.hops, st.vc), (1, 1, 0));
    // From (1,0,0): back to (0,0,0) is a deroute (budget 3 - 1 left), (2,0,0) minimal, VC 1.
    assert_eq!(cands(&net, &*r, y, &st), vec![(s, 1, 64, false), (t, 1, 0, false)]);
}

#[test]
fn omniwar_uses_one_vc_per_hop_over_n_plus_m_steps() {
    // Table 4: 2n VCs for routes of n minimal hops plus m = n deroutes. On 3-D with 6 VCs, hop h
    // uses VC h; with m = 3 forced to 1 (routing.max_deroutes = 1) routes have 4 hops and 6 VCs
    // give one VC per step (the remaining two are not used).
    let h = hx(&[3, 3, 3]);
    let (net, r) = routing(&[3, 3, 3], &["routing.algorithm=omniwar"]);
    assert_eq!(r.vcs(), 6);
    let (s, t) = (at(&h, &[0, 0, 0]), at(&h, &[1, 1, 1]));
    for hops in 0..6u16 {
        let st = RouteState { hops, ..state(s, t) };
        assert!(cands(&net, &*r, s, &st).iter().all(|c| c.1 == hops as u8));
    }
    let (_, r1) = routing(&[3, 3, 3], &["routing.algorithm=omniwar", "routing.max_deroutes=1"]);
    assert_eq!(r1.vcs(), 4);
    let e = build(
        &config(&[3, 3, 3], &["routing.algorithm=omniwar", "routing.vcs=5"]).routing_params(),
        sim::build_network(&config(&[3, 3, 3], &[])).unwrap(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("routing.vcs") && e.contains("n + m = 3 + 3 = 6 hops"), "{e}");
}

// ---------------------------------------------------------------- Polarized

#[test]
fn polarized_candidates_follow_table_1_and_its_penalties() {
    // 4x4, s = (0,0), t = (0,2), at s: (0,2) approaches t while departing s, (+1,-1), dmu 2: 0 phits;
    // (0,1) and (0,3) depart s and revolve t, (+1,0), dmu 1: 64; (1,0), (2,0), (3,0) depart both,
    // (+1,+1), dmu 0, allowed because d(c,s) = 0 < d(c,t) = 1: 80.
    let h = hx(&[4, 4]);
    let (net, r) = routing(&[4, 4], &["routing.algorithm=polarized"]);
    let (s, t) = (at(&h, &[0, 0]), at(&h, &[0, 2]));
    let e = |c: &[usize], p: u32| (at(&h, c), 0u8, p, false);
    assert_eq!(
        cands(&net, &*r, s, &state(s, t)),
        sorted(vec![e(&[0, 2], 0), e(&[0, 1], 64), e(&[0, 3], 64), e(&[1, 0], 80), e(&[2, 0], 80), e(&[3, 0], 80)])
    );
    // s = (0,0), t = (1,1), at c = (1,0) after one hop (mu = 1 - 1 = 0): (1,1) = t is (+1,-1): 0;
    // (1,2), (1,3) are (+1,0): 64; (0,0) = s is (-1,+1) and (2,0), (3,0) are (0,+1): not allowed.
    let (s, t, c) = (at(&h, &[0, 0]), at(&h, &[1, 1]), at(&h, &[1, 0]));
    let st = RouteState { hops: 1, ..state(s, t) };
    let e = |c: &[usize], p: u32| (at(&h, c), 1u8, p, false);
    assert_eq!(cands(&net, &*r, c, &st), sorted(vec![e(&[1, 1], 0), e(&[1, 2], 64), e(&[1, 3], 64)]));
    // s = (0,0), t = (2,2), at c = (1,1) after two hops (d(c,s) = d(c,t) = 2): (2,1) and (1,2) are
    // (0,-1), dmu 1, the best here, so 0 phits; (3,1) and (1,3) revolve both, (0,0), which Table 1
    // forbids; (0,1) and (1,0) are (-1,0). VC 2 on the ladder.
    let (t, c) = (at(&h, &[2, 2]), at(&h, &[1, 1]));
    let st = RouteState { hops: 2, ..state(s, t) };
    assert_eq!(cands(&net, &*r, c, &st), sorted(vec![(at(&h, &[2, 1]), 2, 0, false), (at(&h, &[1, 2]), 2, 0, false)]));
}

/// Table 1 written out: the five allowed (ds, dt) moves.
const TABLE1: [(i32, i32); 5] = [(1, -1), (1, 0), (1, 1), (0, -1), (-1, -1)];

/// Walks every polarized route from every source to every destination on `net`, checking each step
/// against Table 1 independently of the implementation: the candidates are exactly the neighbours
/// whose (ds, dt) is one of the five moves, with the dmu = 0 moves (+1,+1) only while d(c,s) <
/// d(c,t) and (-1,-1) only otherwise (minus dead ends when `pruned`, and then never none); mu never
/// decreases; the penalties are 0/64/80 below the best dmu. Returns the longest route (longest
/// path of the moves, which form a DAG, by memoised search).
fn walk_polarized(net: &Arc<Fabric>, pruned: bool) -> u32 {
    let routes = if pruned { PolarizedRoutes::pruned(net.clone()).unwrap() } else { PolarizedRoutes::new(net.clone()) };
    let n = net.num_switches() as SwitchId;
    let mut longest = 0;
    for s in 0..n {
        for t in 0..n {
            if s != t {
                let mut memo = std::collections::HashMap::new();
                if let Some(l) = walk_from(net, &routes, pruned, &state(s, t), s, &mut memo) {
                    longest = longest.max(l);
                }
            }
        }
    }
    longest
}

fn walk_from(
    net: &Fabric,
    routes: &PolarizedRoutes,
    pruned: bool,
    st: &RouteState,
    c: SwitchId,
    memo: &mut std::collections::HashMap<SwitchId, Option<u32>>,
) -> Option<u32> {
    let (s, t) = (st.src, st.dst);
    if c == t {
        return Some(0);
    }
    if let Some(&m) = memo.get(&c) {
        return m;
    }
    let d = |a: SwitchId, b: SwitchId| net.distance(a, b) as i32;
    let mut got = Vec::new();
    routes.candidates(c, st, &mut got, |_| 0..1);
    let got: Vec<(SwitchId, u32)> =
        sorted(got.iter().map(|x: &Candidate| (net.neighbour(c, x.port).unwrap().0, x.penalty)).collect());
    let (a, b) = (d(c, s), d(c, t));
    let mut want = Vec::new();
    for p in 0..net.switch_ports(c) as u16 {
        if let Some((y, _)) = net.neighbour(c, p) {
            let (ds, dt) = (d(y, s) - a, d(y, t) - b);
            if TABLE1.contains(&(ds, dt)) && (ds - dt > 0 || (ds == 1 && a < b) || (dt == -1 && a >= b)) {
                want.push((y, ds - dt));
            }
        }
    }
    if pruned {
        assert!(got.iter().all(|g| want.iter().any(|w| w.0 == g.0)), "s={s} t={t} c={c}");
        assert!(!got.is_empty(), "pruned polarized stuck: s={s} t={t} c={c}");
    } else {
        let best = want.iter().map(|w| w.1).max().unwrap_or(0);
        let want: Vec<(SwitchId, u32)> =
            sorted(want.iter().map(|&(y, m)| (y, [0, 64, 80][(best - m) as usize])).collect());
        assert_eq!(got, want, "s={s} t={t} c={c}");
    }
    let mut best = None;
    for &(y, _) in &got {
        assert!(d(y, s) - d(y, t) >= a - b, "mu decreased");
        if let Some(l) = walk_from(net, routes, pruned, st, y, memo) {
            best = Some(best.unwrap_or(0).max(l + 1));
        }
    }
    memo.insert(c, best);
    best
}

#[test]
fn polarized_moves_are_exactly_table_1_and_routes_are_at_most_twice_the_diameter() {
    for sides in [vec![4usize, 4], vec![3, 3, 3], vec![2, 3, 4]] {
        let net = sim::build_network(&config(&sides, &[])).unwrap();
        let longest = walk_polarized(&net, false);
        assert!(longest <= 2 * sides.len() as u32, "{sides:?}: {longest}");
    }
    // Faulty networks: the same rules with BFS distances.
    let net = sim::build_network(&config(&[4, 4], &["faults.random_links=5"])).unwrap();
    walk_polarized(&net, false);
}

/// The 3x3 HyperX with links (0,0)-(1,0) and (0,0)-(2,0) failed, so (0,0) only has (0,1), (0,2).
fn corner_network() -> (HyperX, Arc<Fabric>) {
    let h = hx(&[3, 3]);
    let o = at(&h, &[0, 0]);
    let faults = FaultSet { links: vec![(o, h.port_to(o, 0, 1, 0)), (o, h.port_to(o, 0, 2, 0))], switches: vec![] };
    let topo: Arc<dyn Topology> = Arc::new(h.clone());
    (h, Arc::new(Fabric::new(topo, &faults)))
}

#[test]
fn polarized_dead_end_on_a_faulty_network_is_avoided() {
    // Packet (0,1) -> (1,1) (distance 1). From s every neighbour departs s, and (0,0) is
    // (+1,+1): d((0,0),(1,1)) = 2 now that (0,0)-(1,0) is dead, allowed since d(c,s) = 0 < 1.
    // At (0,0): a = d(c,s) = 1 < b = d(c,t) = 2; its neighbours are (0,1) = s, (-1,-1), only
    // allowed when a >= b, and (0,2), (0,0) since d((0,2),(0,1)) = 1 and d((0,2),(1,1)) = 2:
    // no allowed move. Paper-exact Polarized walks into this dead end; pruned Polarized does not.
    let (h, net) = corner_network();
    let (s, t, o) = (at(&h, &[0, 1]), at(&h, &[1, 1]), at(&h, &[0, 0]));
    let st = state(s, t);
    let next = |r: &PolarizedRoutes, c: SwitchId| {
        let mut v = Vec::new();
        r.hops(c, &st, |p, _| v.push(net.neighbour(c, p).unwrap().0));
        v
    };
    let exact = PolarizedRoutes::new(net.clone());
    assert!(next(&exact, s).contains(&o));
    assert!(next(&exact, o).is_empty());
    let pruned = PolarizedRoutes::pruned(net.clone()).unwrap();
    assert!(!next(&pruned, s).contains(&o));
    assert!(next(&pruned, s).contains(&t));
    walk_polarized(&net, true);
}

// ---------------------------------------------------------------- SurePath

#[test]
fn surepath_splits_routing_and_escape_vcs() {
    // OmniSP on 4x4 with 4 VCs, 1 escape: routing hops on VCs 0..3, escape hops on VC 3. From
    // (0,1) to (0,3) (Fig. 2, root (0,0)): routing gives (0,3) minimal (0) and (0,0), (0,2)
    // deroutes (64); the escape gives the red link to (0,3) (64) and Up to the root (112).
    let h = hx(&[4, 4]);
    let (net, r) = routing(&[4, 4], &["routing.algorithm=surepath-omni"]);
    assert_eq!(r.vcs(), 4);
    let (s, t) = (at(&h, &[0, 1]), at(&h, &[0, 3]));
    let mut want = Vec::new();
    for vc in 0..3 {
        want.push((t, vc, 0, false));
        want.push((at(&h, &[0, 0]), vc, 64, false));
        want.push((at(&h, &[0, 2]), vc, 64, false));
    }
    want.push((t, 3, 64, true));
    want.push((at(&h, &[0, 0]), 3, UP_PENALTY, true));
    assert_eq!(cands(&net, &*r, s, &state(s, t)), sorted(want));
    // In the escape subnetwork a packet never returns to routing VCs.
    let esc = RouteState { escape: true, ..state(s, t) };
    assert_eq!(cands(&net, &*r, s, &esc), sorted(vec![(t, 3, 64, true), (at(&h, &[0, 0]), 3, UP_PENALTY, true)]));
    // Taking an escape candidate sets the flag.
    let mut st = state(s, t);
    take_hop(&*r, &mut st, s, t, &Candidate { port: h.port_to(s, 1, 3, 0), vc: 3, penalty: 64, escape: true });
    assert!(st.escape);
}

#[test]
fn surepath_escape_subfunction_is_the_up_down_links() {
    // R1 (Duato) is the black links only: from (2,2) to (1,1) the Up links to (2,0) and (0,2); the
    // red links to (1,2) and (2,1) are escape candidates but not part of R1.
    let h = hx(&[4, 4]);
    let (net, r) = routing(&[4, 4], &["routing.algorithm=surepath-polarized", "routing.vcs=2"]);
    assert!(r.escape_based());
    let (x, t) = (at(&h, &[2, 2]), at(&h, &[1, 1]));
    let mut v = Vec::new();
    r.escape_subfunction(x, t, &mut v);
    let got = sorted(v.iter().map(|c| (net.neighbour(x, c.port).unwrap().0, c.vc, c.penalty)).collect::<Vec<_>>());
    assert_eq!(got, sorted(vec![(at(&h, &[2, 0]), 1, UP_PENALTY), (at(&h, &[0, 2]), 1, UP_PENALTY)]));
    let all = cands(&net, &*r, x, &state(x, t));
    assert!(all.contains(&(at(&h, &[1, 2]), 1, 64, true)) && all.contains(&(at(&h, &[2, 1]), 1, 64, true)));
}

#[test]
fn surepath_forces_escape_at_a_polarized_dead_end() {
    // On the corner network, PolSP at (0,0) for (0,1) -> (1,1) has no routing candidate, so only
    // escape hops remain (forced hops, section 3). (0,0) is the root and every switch is below it;
    // its live neighbours are (0,1) and (0,2) at depth 1, and (1,1), at depth 2, has (0,1) as its
    // only parent ((1,0) is at depth 3 now), so the one escape hop is Down to (0,1).
    let (h, net) = corner_network();
    let cfg = config(&[3, 3], &["routing.algorithm=surepath-polarized", "routing.vcs=2"]);
    let r = build(&cfg.routing_params(), net.clone()).unwrap();
    let (s, t, o) = (at(&h, &[0, 1]), at(&h, &[1, 1]), at(&h, &[0, 0]));
    let st = RouteState { hops: 1, ..state(s, t) };
    assert_eq!(cands(&net, &*r, o, &st), vec![(s, 1, DOWN_PENALTY, true)]);
}

#[test]
fn escape_hops_always_reduce_the_up_down_distance() {
    let net = sim::build_network(&config(&[3, 3, 3], &["faults.random_links=6"])).unwrap();
    let u = UpDown::new(net.clone(), 4).unwrap();
    for x in 0..27 {
        for t in 0..27 {
            if x == t {
                continue;
            }
            let below = u.ud(x, t) + u.depth(x) == u.depth(t);
            u.hops(x, t, |p, pen, kind| {
                let y = net.neighbour(x, p).unwrap().0;
                assert!(u.ud(y, t) < u.ud(x, t));
                assert_eq!(u.kind(x, y), kind);
                match kind {
                    LinkKind::Down => assert!(below && pen == DOWN_PENALTY),
                    LinkKind::Up => assert!(!below && pen == UP_PENALTY),
                    LinkKind::Horizontal => assert!(!below && [80, 64, 48].contains(&pen)),
                }
            });
        }
    }
}

// ---------------------------------------------------------------- DAL

#[test]
fn dal_candidates_follow_section_3_3() {
    // 4x4x4 with 6 VCs = 3 sets; (0,0,0) -> (1,2,0), dimension 2 aligned. Minimal hops (1,0,0) and
    // (0,2,0) on the adaptive VCs 0, 2, 4; deroutes (2,0,0), (3,0,0), (0,1,0), (0,3,0); the escape is
    // the DOR hop, dimension 0 first: (1,0,0) on VCs 1, 3, 5. Nothing in the aligned dimension 2.
    let h = hx(&[4, 4, 4]);
    let (net, r) = routing(&[4, 4, 4], &["routing.algorithm=dal"]);
    let (s, t) = (at(&h, &[0, 0, 0]), at(&h, &[1, 2, 0]));
    let mut want = Vec::new();
    for set in 0..3u8 {
        for (c, p) in [([1, 0, 0], 0), ([0, 2, 0], 0), ([2, 0, 0], DAL_DEROUTE), ([3, 0, 0], DAL_DEROUTE)] {
            want.push((at(&h, &c), 2 * set, p, false));
        }
        for c in [[0, 1, 0], [0, 3, 0]] {
            want.push((at(&h, &c), 2 * set, DAL_DEROUTE, false));
        }
        want.push((at(&h, &[1, 0, 0]), 2 * set + 1, DAL_ESCAPE, true));
    }
    let mut st = state(s, t);
    assert_eq!(cands(&net, &*r, s, &st), sorted(want));
    // Deroute in dimension 0 to (2,0,0): dimension 0 is marked, so from there only its minimal hop
    // (1,0,0) remains in dimension 0 while dimension 1 can still be derouted.
    let y = at(&h, &[2, 0, 0]);
    take_hop(
        &*r,
        &mut st,
        s,
        y,
        &Candidate { port: h.port_to(s, 0, 2, 0), vc: 0, penalty: DAL_DEROUTE, escape: false },
    );
    assert_eq!(st.dim_mask, 1);
    let c = cands(&net, &*r, y, &st);
    assert!(c.iter().all(|&(z, _, _, _)| h.coord(z, 0) == 2 || z == at(&h, &[1, 0, 0])));
    assert!(c.contains(&(at(&h, &[2, 1, 0]), 0, DAL_DEROUTE, false)));
    // Once in the escape VC the packet stays in dimension order.
    let esc = RouteState { escape: true, ..st };
    assert_eq!(
        cands(&net, &*r, y, &esc),
        vec![
            (at(&h, &[1, 0, 0]), 1, DAL_ESCAPE, true),
            (at(&h, &[1, 0, 0]), 3, DAL_ESCAPE, true),
            (at(&h, &[1, 0, 0]), 5, DAL_ESCAPE, true)
        ]
    );
}

// ---------------------------------------------------------------- Clos-AD

#[test]
fn clos_ad_ancestors_are_the_folded_clos_lowest_common_ancestors() {
    // 4x4x4, dimension 0 the top level of the folded Clos: (0,0,0) -> (0,2,0) first differs in
    // dimension 1, so its ancestors keep x_0 = 0 and take any x_1, x_2 (16, among them (0,1,3),
    // off the destination in the aligned dimension 2); (0,0,0) -> (1,0,0) may go anywhere (64).
    let h = hx(&[4, 4, 4]);
    let (_, r) = routing(&[4, 4, 4], &["routing.algorithm=clos-ad"]);
    let ancestors = |s: SwitchId, t: SwitchId| {
        let mut v = Vec::new();
        r.init_choices(&state(s, t), &mut |st| v.push((st.intermediate, st.phase)));
        v
    };
    let o = at(&h, &[0, 0, 0]);
    let (t1, t0) = (at(&h, &[0, 2, 0]), at(&h, &[1, 0, 0]));
    let a = ancestors(o, t1);
    assert_eq!(a.len(), 16);
    assert!(a.iter().all(|&(i, _)| h.coord(i, 0) == 0 || i == t1));
    assert!(a.contains(&(at(&h, &[0, 1, 3]), 0)));
    // The source and the destination themselves make the route minimal (phase 1 from the start).
    assert_eq!(a.iter().filter(|&&(i, p)| i == t1 && p == 1).count(), 2);
    assert_eq!(ancestors(o, t0).len(), 64);
    // Drawn ancestors are among them.
    let mut rng = crate::rng::stream(7, 0, crate::rng::Purpose::Router);
    for _ in 0..50 {
        let mut st = state(o, t1);
        r.init(&mut st, &mut rng);
        assert!(a.contains(&(st.intermediate, st.phase)), "{st:?}");
    }
}

#[test]
fn clos_ad_decides_at_the_source_and_never_deroutes_twice() {
    // 4x4x4 with 3 sets, 16-phit packets: (0,0,0) -> (0,2,1) through the ancestor (0,3,3).
    // H_min = 2, H_nm = 2 + 2, so the non-minimal first hop costs 2 packets = 32 phits more.
    // At the source: the DOR hop to the destination, (0,2,0), on the odd VCs with penalty 0, and
    // the DOR hop to the ancestor, (0,3,0), on the even VCs with penalty 32.
    let h = hx(&[4, 4, 4]);
    let (net, r) = routing(&[4, 4, 4], &["routing.algorithm=clos-ad"]);
    let (s, t, anc) = (at(&h, &[0, 0, 0]), at(&h, &[0, 2, 1]), at(&h, &[0, 3, 3]));
    let st0 = RouteState { intermediate: anc, ..state(s, t) };
    let mut want = Vec::new();
    for set in 0..3u8 {
        want.push((at(&h, &[0, 2, 0]), 2 * set + 1, 0, false));
        want.push((at(&h, &[0, 3, 0]), 2 * set, 32, false));
    }
    assert_eq!(cands(&net, &*r, s, &st0), sorted(want));
    // Non-minimal chosen: DOR to the ancestor on the even VCs, no more minimal option.
    let mut st = st0;
    let y = at(&h, &[0, 3, 0]);
    take_hop(&*r, &mut st, s, y, &Candidate { port: h.port_to(s, 1, 3, 0), vc: 2, penalty: 32, escape: false });
    assert_eq!((st.phase, st.hops), (0, 1));
    assert_eq!(cands(&net, &*r, y, &st), vec![(anc, 0, 0, false), (anc, 2, 0, false), (anc, 4, 0, false)]);
    // At the ancestor: DOR to the destination on the odd VCs, dimension 1 first.
    take_hop(&*r, &mut st, y, anc, &Candidate { port: h.port_to(y, 2, 3, 0), vc: 4, penalty: 0, escape: false });
    assert_eq!(st.phase, 1);
    let z = at(&h, &[0, 2, 3]);
    assert_eq!(cands(&net, &*r, anc, &st), vec![(z, 1, 0, false), (z, 3, 0, false), (z, 5, 0, false)]);
    // Minimal chosen at the source: DOR to the destination from then on, whatever the ancestor was.
    let mut st = st0;
    let m = at(&h, &[0, 2, 0]);
    take_hop(&*r, &mut st, s, m, &Candidate { port: h.port_to(s, 1, 2, 0), vc: 1, penalty: 0, escape: false });
    assert_eq!((st.phase, st.intermediate), (1, t));
    assert_eq!(cands(&net, &*r, m, &st), vec![(t, 1, 0, false), (t, 3, 0, false), (t, 5, 0, false)]);
}

#[test]
fn clos_ad_is_deadlock_free_on_one_set_of_two_vcs() {
    // Even VCs towards the ancestor, odd towards the destination, DOR on each: acyclic with one set.
    for sides in [&[4usize, 4][..], &[3, 3, 3], &[2, 3, 4]] {
        let rep = check(sides, &["routing.algorithm=clos-ad", "routing.vcs=2"]);
        assert_eq!(rep.verdict, Verdict::Acyclic, "{sides:?}");
        // DOR to the ancestor, then DOR on: up to 2n hops (5 on 2x3x4, where an ancestor off the
        // source in dimension 0 is the destination's value there).
        let longest = if sides[0] == 2 { 2 * sides.len() - 1 } else { 2 * sides.len() };
        assert_eq!(rep.longest_route as usize, longest, "{sides:?}");
    }
    let e = build(
        &config(&[3, 3], &["routing.algorithm=clos-ad", "routing.vcs=3"]).routing_params(),
        routing(&[3, 3], &[]).0,
    );
    assert!(e.is_err_and(|e| e.to_string().contains("routing.vcs")));
}

// ---------------------------------------------------------------- SP / ECMP / AllPath, DAVC

#[test]
fn table_routings_candidates() {
    let h = hx(&[4, 4]);
    let (s, t) = (at(&h, &[0, 0]), at(&h, &[1, 2]));
    // Adaptive ECMP: the two minimal ports. SP: one of them, the same for every packet at (s, t).
    let (net, ecmp) = routing(&[4, 4], &["routing.algorithm=ecmp-adaptive"]);
    let both = vec![(at(&h, &[1, 0]), 0, 0, false), (at(&h, &[0, 2]), 0, 0, false)];
    assert_eq!(cands(&net, &*ecmp, s, &state(s, t)), sorted(both.clone()));
    let (_, sp) = routing(&[4, 4], &["routing.algorithm=sp"]);
    let one = cands(&net, &*sp, s, &state(s, t));
    assert_eq!(one.len(), 1);
    assert!(both.contains(&one[0]));
    assert_eq!(cands(&net, &*sp, s, &state(at(&h, &[3, 3]), t)), one);
    // AllPath(1) from (0,0) to (1,0) (distance 1, budget 2): t itself (0), and (2,0), (3,0), which
    // are at distance 1 from t (64); (0,y) are at distance 2 and cannot finish within 2 hops.
    let (_, ap) = routing(&[4, 4], &["routing.algorithm=allpath", "routing.extra_hops=1"]);
    let t = at(&h, &[1, 0]);
    assert_eq!(
        cands(&net, &*ap, s, &state(s, t)),
        sorted(vec![(t, 0, 0, false), (at(&h, &[2, 0]), 0, 64, false), (at(&h, &[3, 0]), 0, 64, false)])
    );
    // After one extra hop the budget is spent: from (2,0) only t.
    let st = RouteState { hops: 1, ..state(s, t) };
    assert_eq!(cands(&net, &*ap, at(&h, &[2, 0]), &st), vec![(t, 1, 0, false)]);
}

#[test]
fn davc_vcs_follow_the_allocation_functions_along_a_route() {
    // Adaptive ECMP with F_N on 4x4: (0,0)=0 -> (1,0)=1 -> (1,2)=9: first hop VC 0, second hop
    // 9 > 1 keeps VC 0. (3,3)=15 -> (0,3)=12 -> (0,0)=0: 12 <= 15 (first hop, still VC 0), then
    // 0 <= 12: VC 1.
    let h = hx(&[4, 4]);
    let (net, r) = routing(&[4, 4], &["routing.algorithm=ecmp-adaptive", "routing.vc_policy=davc-n"]);
    let hop = |st: &mut RouteState, x: SwitchId, y: SwitchId| -> u8 {
        let mut v = Vec::new();
        r.candidates(x, st, &mut v);
        let c = *v.iter().find(|c| net.neighbour(x, c.port).unwrap().0 == y).unwrap();
        take_hop(&*r, st, x, y, &c);
        c.vc
    };
    let (a, b, c) = (at(&h, &[0, 0]), at(&h, &[1, 0]), at(&h, &[1, 2]));
    let mut st = state(a, c);
    assert_eq!((hop(&mut st, a, b), hop(&mut st, b, c)), (0, 0));
    let (a, b, c) = (at(&h, &[3, 3]), at(&h, &[0, 3]), at(&h, &[0, 0]));
    let mut st = state(a, c);
    assert_eq!((hop(&mut st, a, b), hop(&mut st, b, c)), (0, 1));
}

#[test]
fn too_few_vcs_is_a_config_error_naming_the_route_length() {
    let err = |sides: &[usize], sets: &[&str]| {
        let cfg = config(sides, sets);
        build(&cfg.routing_params(), sim::build_network(&cfg).unwrap()).err().unwrap().to_string()
    };
    let e = err(&[4, 4], &["routing.algorithm=sp", "routing.vc_policy=davc-n", "routing.vcs=1"]);
    assert!(e.contains("routing.vcs") && e.contains(": 1 ") && e.contains("diameter, 2 hops"), "{e}");
    let e = err(
        &[3, 3, 3],
        &["routing.algorithm=allpath", "routing.extra_hops=2", "routing.vc_policy=davc-np", "routing.vcs=4"],
    );
    assert!(e.contains("diameter 3 + extra_hops 2 = 5 hops") && e.contains("at least 5"), "{e}");
    let e = err(&[4, 4], &["routing.algorithm=valiant", "routing.vc_policy=davc-p", "routing.vcs=3"]);
    assert!(e.contains("2 x diameter 2 = 4 hops"), "{e}");
    let e = err(&[4, 4], &["routing.algorithm=surepath-omni", "routing.vcs=1"]);
    assert!(e.contains("routing.vcs") && e.contains("at least 2"), "{e}");
    let e = err(&[4, 4], &["routing.algorithm=surepath-omni", "routing.vc_policy=davc-n"]);
    assert!(e.contains("routing.vc_policy") && e.contains("davc-n") && e.contains("ladder"), "{e}");
    let e = err(&[4, 4], &["routing.algorithm=dal", "routing.vcs=3"]);
    assert!(e.contains("routing.vcs") && e.contains("3") && e.contains("even"), "{e}");
    let e = parse_str("[topology]\nsides=[4,4]\nservers_per_switch=1\n", "t", &["routing.vc_policy=davc".into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("routing.vc_policy") && e.contains("davc-np") && e.contains("none"), "{e}");
    // Faulty diameter: 4x4 with enough faults has diameter 3 > 2, so SP with DAVC needs 3 VCs.
    let cfg = config(&[4, 4], &["routing.algorithm=sp", "routing.vc_policy=davc-n", "faults.random_links=10"]);
    let net = sim::build_network(&cfg).unwrap();
    let diam = net.distance_stats().diameter;
    let r = build(&cfg.routing_params(), net).unwrap();
    assert_eq!(r.vcs(), diam as usize);
}

/// SurePath Table 4: Minimal uses "2 VCs for each step" of the ladder, a step per hop. On a faulty
/// network the longest minimal route is the faulty diameter (BFS from every switch here), so the
/// default is two VCs for each of its hops, never fewer than the fault-free default; before
/// 2026-11-28 the fault-free 2 D VCs were split into D_f steps of one VC (3 VCs on this 4x4).
#[test]
fn minimal_on_a_faulty_network_keeps_two_vcs_per_step() {
    let (net, r) = routing(&[4, 4], &["faults.random_links=10"]);
    let diam = (0..16).flat_map(|s| net.bfs(s)).filter(|&d| d != crate::topology::fabric::UNREACHABLE).max();
    let diam = diam.unwrap() as usize;
    assert!(diam > 2, "the faults lengthen the 4x4's diameter (2), got {diam}");
    assert_eq!(r.vcs(), 2 * diam);
    let (_, r) = routing(&[4, 4], &[]);
    assert_eq!(r.vcs(), 4, "fault-free: 2 x diameter 2");
    let (_, r) = routing(&[4, 4], &["faults.random_links=10", "routing.vcs=5"]);
    assert_eq!(r.vcs(), 5 / diam * diam, "a routing.vcs set by the user is kept (the ladder floors it per step)");
}

// ---------------------------------------------------------------- check-deadlock

fn check(sides: &[usize], sets: &[&str]) -> deadlock::Report {
    let (net, r) = routing(sides, sets);
    deadlock::check(&net, &*r)
}

#[test]
fn ladder_routings_are_acyclic() {
    for sides in [&[4usize, 4][..], &[3, 3, 3]] {
        for alg in ["dor", "minimal", "valiant", "omniwar", "polarized", "clos-ad"] {
            let rep = check(sides, &[&format!("routing.algorithm={alg}")]);
            assert_eq!(rep.verdict, Verdict::Acyclic, "{alg} on {sides:?}");
            assert!(rep.longest_route as usize <= rep.vcs, "{alg}: route longer than its ladder");
        }
    }
    for alg in ["dor", "minimal", "polarized"] {
        assert_eq!(check(&[4, 4, 4], &[&format!("routing.algorithm={alg}")]).verdict, Verdict::Acyclic, "{alg}");
    }
}

#[test]
fn minimal_on_one_vc_without_ladder_has_a_cycle() {
    // Minimal routes on a 4x4 close the cycle (0,0)->(1,0)->(1,1)->(0,1)->(0,0): each pair of
    // consecutive links is the minimal route of some diagonal pair.
    let (net, r) = routing(&[4, 4], &["routing.algorithm=minimal", "routing.vc_policy=none", "routing.vcs=1"]);
    let rep = deadlock::check(&net, &*r);
    let Verdict::Cycle { channels } = &rep.verdict else { panic!("{:?}", rep.verdict) };
    assert!(channels.len() >= 2 && !rep.deadlock_free());
    for (i, c) in channels.iter().enumerate() {
        let next = channels[(i + 1) % channels.len()];
        assert_eq!(net.neighbour(c.switch, c.port).unwrap().0, next.switch, "channels must chain");
        assert_eq!(c.vc, 0);
    }
    // DOR is deadlock free even on one VC (dimensions are crossed in increasing order).
    let rep = check(&[4, 4], &["routing.algorithm=dor", "routing.vc_policy=none", "routing.vcs=1"]);
    assert_eq!(rep.verdict, Verdict::Acyclic);
}

#[test]
fn table_routings_are_acyclic_with_every_davc_function() {
    for sides in [&[4usize, 4][..], &[3, 3, 3]] {
        for alg in ["sp", "ecmp", "ecmp-adaptive", "allpath"] {
            for policy in ["davc-n", "davc-p", "davc-np"] {
                let rep = check(sides, &[&format!("routing.algorithm={alg}"), &format!("routing.vc_policy={policy}")]);
                assert_eq!(rep.verdict, Verdict::Acyclic, "{alg} {policy} on {sides:?}");
            }
        }
    }
    for alg in ["sp", "ecmp", "allpath"] {
        for policy in ["davc-n", "davc-p", "davc-np"] {
            let rep = check(
                &[4, 4],
                &[&format!("routing.algorithm={alg}"), &format!("routing.vc_policy={policy}"), "faults.random_links=6"],
            );
            assert_eq!(rep.verdict, Verdict::Acyclic, "{alg} {policy} faulty");
        }
    }
}

#[test]
fn escape_based_routings_satisfy_duato() {
    let cases: [(&[usize], &[&str]); 12] = [
        (&[4, 4], &["routing.vc_policy=dor-escape"]),
        (&[3, 3, 3], &["routing.vc_policy=dor-escape", "routing.vcs=2"]),
        (&[4, 4], &["routing.algorithm=surepath-omni"]),
        (&[4, 4], &["routing.algorithm=surepath-polarized", "routing.vcs=2"]),
        (&[3, 3, 3], &["routing.algorithm=surepath-omni", "routing.vcs=4", "routing.escape_root=13"]),
        (&[3, 3, 3], &["routing.algorithm=surepath-polarized", "routing.vcs=4"]),
        (&[4, 4], &["routing.algorithm=surepath-polarized", "routing.vcs=4", "faults.random_links=8"]),
        (&[4, 4], &["routing.algorithm=dal"]),
        (&[3, 3, 3], &["routing.algorithm=dal"]),
        (&[4, 4], &["routing.algorithm=dal", "faults.random_links=3"]),
        (&[4, 4], &["routing.algorithm=dal", "faults.random_links=5"]),
        (&[3, 3, 3], &["routing.algorithm=dal", "faults.random_links=12", "seed=3"]),
    ];
    for (sides, sets) in cases {
        let rep = check(sides, sets);
        assert!(matches!(rep.verdict, Verdict::Duato { .. }), "{sets:?} on {sides:?}: {:?}", rep.verdict);
    }
    // Without the escape, the routing VCs of SurePath are cyclic: Duato is what makes it safe.
    let rep = check(&[4, 4], &["routing.algorithm=surepath-omni"]);
    assert!(matches!(rep.verdict, Verdict::Duato { full_cdg_acyclic: false, .. }));
}

/// The escape subnetwork on its own (one VC, every escape hop including shortcuts), declared as a
/// plain routing: its CDG has cycles among horizontal links, e.g. on the 4x4 with root (0,0),
/// (2,2)->(1,2)->(1,1)->(2,1)->(2,2) (each consecutive pair is the escape route of a packet to
/// (1,1), (2,1), (2,2), (1,2), as the Up/Down distances give). Declared as escape-based with the
/// Up/Down links as R1 it satisfies Duato.
struct EscapeOnly(UpDown, bool);

impl Routing for EscapeOnly {
    fn name(&self) -> &'static str {
        "escape-only"
    }
    fn vcs(&self) -> usize {
        1
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        self.0.hops(at, st.dst, |port, penalty, _| out.push(Candidate { port, vc: 0, penalty, escape: true }));
    }
    fn escape_based(&self) -> bool {
        self.1
    }
    fn escape_subfunction(&self, at: SwitchId, dst: SwitchId, out: &mut Vec<Candidate>) {
        self.0.hops(at, dst, |port, penalty, kind| {
            if kind != LinkKind::Horizontal {
                out.push(Candidate { port, vc: 0, penalty, escape: true })
            }
        });
    }
}

#[test]
fn escape_shortcuts_alone_are_cyclic_but_satisfy_duato() {
    let net = sim::build_network(&config(&[4, 4], &[])).unwrap();
    let plain = EscapeOnly(UpDown::new(net.clone(), 0).unwrap(), false);
    let rep = deadlock::check(&net, &plain);
    let Verdict::Cycle { channels } = rep.verdict else { panic!("expected a cycle") };
    let u = UpDown::new(net.clone(), 0).unwrap();
    assert!(channels
        .iter()
        .any(|c| u.kind(c.switch, net.neighbour(c.switch, c.port).unwrap().0) == LinkKind::Horizontal));
    let duato = EscapeOnly(UpDown::new(net.clone(), 0).unwrap(), true);
    assert!(deadlock::check(&net, &duato).deadlock_free());
}

#[test]
fn faulty_polarized_ladder_matches_the_longest_route() {
    // Standalone Polarized sizes its ladder by the longest pruned route; the exhaustive exploration
    // must find exactly that length, no dead end, and an acyclic CDG.
    for (sides, faults, seed) in [(&[4usize, 4][..], 8, 1), (&[3, 3, 3], 8, 1), (&[3, 3, 3], 16, 2)] {
        let cfg =
            config(sides, &["routing.algorithm=polarized", "routing.vcs=16", &format!("faults.random_links={faults}")]);
        let cfg = Config { seed, ..cfg };
        let net = sim::build_network(&cfg).unwrap();
        let pr = PolarizedRoutes::pruned(net.clone()).unwrap();
        let r = build(&cfg.routing_params(), net.clone()).unwrap();
        let rep = deadlock::check(&net, &*r);
        assert_eq!(rep.verdict, Verdict::Acyclic, "{sides:?}");
        assert_eq!(rep.longest_route as usize, pr.max_hops(), "{sides:?}");
        assert_eq!(walk_polarized(&net, true) as usize, pr.max_hops());
    }
}

#[test]
fn faulty_polarized_routes_networks_above_the_corner_table() {
    // 11x11x11 (1331 switches, above CORNER_TABLE_SWITCHES) with 1% of its links failed and a failed
    // switch: Polarized builds (no refusal), its ladder is the 4D - 1 bound, and packets between
    // random pairs, taking a random candidate at every switch, reach their destination within the
    // ladder by allowed moves (mu never decreases) and never stop at a dead end.
    let sides = [11usize, 11, 11];
    let cfg = config(
        &sides,
        &["routing.algorithm=polarized", "routing.vcs=32", "faults.random_links=200", "faults.switches=[7]"],
    );
    let net = sim::build_network(&cfg).unwrap();
    let diam = super::network_diameter(&net) as usize;
    let r = build(&cfg.routing_params(), net.clone()).unwrap();
    assert_eq!(PolarizedRoutes::pruned(net.clone()).unwrap().max_hops(), 4 * diam - 1);
    let n = net.num_switches() as u64;
    let mut rng = crate::rng::stream(5, 0, crate::rng::Purpose::Router);
    let d = |a: SwitchId, b: SwitchId| net.distance(a, b) as i32;
    for _ in 0..300 {
        let (s, t) = (crate::rng::below(&mut rng, n) as SwitchId, crate::rng::below(&mut rng, n) as SwitchId);
        if s == t || !net.switch_alive(s) || !net.switch_alive(t) {
            continue;
        }
        let mut st = state(s, t);
        let mut c = s;
        while c != t {
            let mut cands = Vec::new();
            r.candidates(c, &st, &mut cands);
            assert!(!cands.is_empty(), "stuck at {c} from {s} to {t} after {} hops", st.hops);
            let pick = cands[crate::rng::below(&mut rng, cands.len() as u64) as usize];
            let next = net.neighbour(c, pick.port).unwrap().0;
            assert!(d(next, s) - d(next, t) >= d(c, s) - d(c, t), "mu decreased from {s} to {t} at {c}");
            take_hop(&*r, &mut st, c, next, &pick);
            c = next;
            assert!((st.hops as usize) < 4 * diam, "route from {s} to {t} above the 4D - 1 bound");
        }
    }
}

// ---------------------------------------------------------------- simulations

fn simulate(sides: &[usize], sets: &[&str]) -> crate::metrics::Summary {
    let mut all =
        vec!["simulation.warmup_cycles=200", "simulation.measure_cycles=400", "simulation.watchdog_cycles=2000"];
    all.extend_from_slice(sets);
    let cfg = config(sides, &all);
    match sim::run(&cfg, &RunOptions { threads: 1, ..Default::default() }, &Progress::default()) {
        Ok(r) => r.summary,
        Err(e) => panic!("{sets:?}: {e}"),
    }
}

#[test]
fn every_algorithm_delivers_at_moderate_load() {
    // Family-only routings run in their own tests: HyperZ and fat trees in tests/hyperz_routing.rs,
    // dragonflies and tori in tests/families.rs. SPDA (one spanning tree by default) saturates far
    // below 0.3 at the links near the root (DAVC Fig. 8); tests/table_routings.rs runs it.
    for alg in super::names().into_iter().filter(|&a| a != "spda" && super::entry(a).unwrap().runs_on("hyperx")) {
        let s = simulate(&[4, 4], &[&format!("routing.algorithm={alg}"), "traffic.load=0.3"]);
        // Below saturation everything offered is accepted (up to the Bernoulli noise of 400 cycles).
        assert!((s.accepted_load - 0.3).abs() < 0.05, "{alg}: accepted {}", s.accepted_load);
    }
}

#[test]
fn saturated_runs_do_not_deadlock() {
    for sets in [
        &["routing.algorithm=surepath-omni", "routing.vcs=2"][..],
        &["routing.algorithm=surepath-polarized", "routing.vcs=2"],
        &["routing.algorithm=dal"],
        &["routing.algorithm=clos-ad", "routing.vcs=2"],
        &["routing.algorithm=polarized"],
        &["routing.algorithm=omniwar"],
        &["routing.algorithm=allpath", "routing.vc_policy=davc-np"],
    ] {
        let mut v = sets.to_vec();
        v.push("traffic.load=1.0");
        let s = simulate(&[3, 3, 3], &v);
        assert!(s.accepted_load > 0.2, "{sets:?}: accepted {}", s.accepted_load);
    }
}

#[test]
fn faulty_networks_keep_delivering() {
    for sets in [
        &["routing.algorithm=polarized", "routing.vcs=12"][..],
        &["routing.algorithm=surepath-polarized", "routing.vcs=4"],
        &["routing.algorithm=surepath-omni", "routing.vcs=4"],
        &["routing.algorithm=surepath-polarized", "routing.vcs=2"],
        &["routing.algorithm=sp", "routing.vc_policy=davc-n"],
        &["routing.algorithm=ecmp", "routing.vc_policy=davc-p"],
        &["routing.algorithm=allpath", "routing.vc_policy=davc-np"],
        &["routing.algorithm=allpath"],
    ] {
        for load in ["0.2", "1.0"] {
            let mut v = sets.to_vec();
            let l = format!("traffic.load={load}");
            v.extend_from_slice(&["faults.random_links=8", &l]);
            let s = simulate(&[4, 4], &v);
            assert!(s.accepted_load > 0.1, "{sets:?} at {load}: accepted {}", s.accepted_load);
            if load == "0.2" {
                assert!((s.accepted_load - 0.2).abs() < 0.05, "{sets:?}: accepted {}", s.accepted_load);
            }
        }
    }
}

// ---------------------------------------------------------------- hxsim check-deadlock

#[test]
fn check_deadlock_exit_codes() {
    use crate::commands;
    // 0: deadlock free; 1: a cycle; 2 (through commands::exit_code): a config the routing rejects.
    assert_eq!(commands::check_deadlock::run(&config(&[3, 3], &["routing.algorithm=minimal"]), true).unwrap(), 0);
    assert_eq!(
        commands::check_deadlock::run(&config(&[3, 3], &["routing.algorithm=surepath-omni"]), false).unwrap(),
        0
    );
    let cyclic = config(&[3, 3], &["routing.algorithm=minimal", "routing.vc_policy=none", "routing.vcs=1"]);
    assert_eq!(commands::check_deadlock::run(&cyclic, false).unwrap(), 1);
    let bad = config(&[3, 3], &["routing.algorithm=valiant", "routing.vcs=3"]);
    let e = commands::check_deadlock::run(&bad, false).unwrap_err();
    assert_eq!(commands::exit_code(&e), 2);
    assert!(e.to_string().contains("routing.vcs"), "{e}");
}

/// ECMP (DAVC section 7.3) spreads packets over every shortest path, obliviously: a packet's key
/// fixes one minimal port per switch (the same on every evaluation, whatever the buffers), and over
/// many keys every minimal port is taken. Min-AD with `dor-escape` (HyperX section 4.1) offers every
/// minimal port on the adaptive VC of each set and the dimension-order port on each escape VC.
#[test]
fn ecmp_hashes_per_packet_and_min_ad_offers_its_dor_escape() {
    let sides = [4usize, 4, 4];
    let h = hx(&sides);
    let (src, dst) = (at(&h, &[0, 0, 0]), at(&h, &[1, 2, 3]));
    let (_, ecmp) = routing(&sides, &["routing.algorithm=ecmp"]);
    let mut rng = crate::rng::stream(7, 0, crate::rng::Purpose::Router);
    let mut ports = std::collections::BTreeSet::new();
    for _ in 0..64 {
        let mut st = state(src, dst);
        ecmp.init(&mut st, &mut rng);
        let mut c = Vec::new();
        ecmp.candidates(src, &st, &mut c);
        let mut again = Vec::new();
        ecmp.candidates(src, &st, &mut again);
        assert_eq!(c, again, "a packet's choice is fixed");
        assert!(c.iter().all(|x| x.port == c[0].port), "one port per packet: {c:?}");
        ports.insert(c[0].port);
    }
    assert_eq!(ports.len(), 3, "three offset dimensions, three minimal ports, all used");
    let (_, minad) = routing(&sides, &["routing.vc_policy=dor-escape"]);
    assert_eq!(minad.vcs(), 6);
    let mut c = Vec::new();
    minad.candidates(src, &state(src, dst), &mut c);
    let adaptive: Vec<_> = c.iter().filter(|x| !x.escape).collect();
    let escape: Vec<_> = c.iter().filter(|x| x.escape).collect();
    assert_eq!(adaptive.len(), 3 * 3, "3 minimal ports x 3 sets");
    assert!(adaptive.iter().all(|x| x.vc % 2 == 0 && x.penalty == 0));
    assert_eq!(escape.len(), 3, "the DOR port on each set's escape VC");
    let dor = h.port_to(src, 0, 1, 0);
    assert!(escape.iter().all(|x| x.port == dor && x.vc % 2 == 1 && x.penalty == DAL_ESCAPE));
}

/// Issue 10 item 4: with 3 random faults on a 4x4 HyperX, DAL (HyperX paper section 6: filtered and
/// further deroutes, an escape with detours) leaves no packet unroutable, for several fault sets;
/// two VCs (one set) are not enough for the detours.
#[test]
fn dal_routes_around_faults() {
    for seed in 1..=6 {
        let seed = format!("seed={seed}");
        let rep = check(&[4, 4], &["routing.algorithm=dal", "faults.random_links=3", &seed]);
        assert!(matches!(rep.verdict, Verdict::Duato { .. }), "{seed}: {:?}", rep.verdict);
    }
    let err =
        sim::build_network(&config(&[4, 4], &["routing.algorithm=dal", "routing.vcs=2", "faults.random_links=3"]))
            .and_then(|net| {
                crate::routing::build(
                    &config(&[4, 4], &["routing.algorithm=dal", "routing.vcs=2", "faults.random_links=3"])
                        .routing_params(),
                    net,
                )
                .map(|_| ())
            });
    let msg = err.unwrap_err().to_string();
    assert!(msg.contains("routing.vcs") && msg.contains("at least 4"), "{msg}");
}

/// Issue 32: DAL's errors about faults name the fault keys in force. A failed switch is refused on
/// a 2-D HyperX, naming `faults` and the switch key (its escape is dimension order, which a failed
/// switch cuts: dal.rs); on one dimension failed switches only take their links down, and DAL routes
/// (Duato's condition holds). A link set without detours names the key that made it.
#[test]
fn dal_fault_errors_name_the_keys() {
    let build = |sides: &[usize], sets: &[&str]| {
        let cfg = config(sides, sets);
        crate::routing::build(&cfg.routing_params(), sim::build_network(&cfg).unwrap()).map(|_| ())
    };
    for (sets, key) in [
        (&["routing.algorithm=dal", "faults.random_switches=1"][..], "faults.random_switches = 1"),
        (&["routing.algorithm=dal", "faults.switches=[5]"], "faults.switches (1 switches)"),
    ] {
        let msg = build(&[4, 4], sets).unwrap_err().to_string();
        assert!(msg.contains("`faults`") && msg.contains(key) && msg.contains("dimension-order"), "{msg}");
    }
    let rep = check(&[6], &["routing.algorithm=dal", "routing.vcs=4", "faults.switches=[2]", "faults.links=[[0,0]]"]);
    assert!(matches!(rep.verdict, Verdict::Duato { .. }), "{:?}", rep.verdict);
    // Every link of switch 0 in dimension 0 but the one to coordinate 3 failed: coordinates 1 and 2 of
    // its row are reachable only through 3, which is linked to both, so DAL routes; with the link to
    // 3 failed too, switch 0 is cut off from its row (no detour).
    let row = "faults.links=[[0,0],[0,1],[0,3]]";
    assert!(build(&[5, 5], &["routing.algorithm=dal", row]).is_ok());
    let msg =
        build(&[5, 5], &["routing.algorithm=dal", "faults.links=[[0,0],[0,1],[0,2],[0,3]]"]).unwrap_err().to_string();
    assert!(msg.contains("`faults`") && msg.contains("faults.links (4 links)") && msg.contains("detour"), "{msg}");
}

/// `routing.vcs = 0` and `routing.max_deroutes = 0` mean "the algorithm's default": `None` in
/// [`RoutingParams`]; the other keys are copied as they are.
#[test]
fn routing_params_from_config() {
    let p = config(&[3, 3], &[]).routing_params();
    assert_eq!((p.vcs, p.max_deroutes, p.vcs_or(6), p.escape_vcs), (None, None, 6, 1));
    let sets = ["routing.vcs=4", "routing.max_deroutes=1", "packet.size_phits=8", "seed=7", "routing.extra_hops=2"];
    let p = config(&[3, 3], &sets).routing_params();
    assert_eq!((p.vcs, p.max_deroutes, p.vcs_or(6)), (Some(4), Some(1), 4));
    assert_eq!((p.packet_phits, p.seed, p.extra_hops), (8, 7, 2));
}

/// `Routing::candidate_runs` is `Routing::candidates` grouped: expanding the runs gives the same
/// candidates in the same order (the router's selection and its tie-break draw depend on that
/// order), for every pair of switches and a range of states, with and without failed links.
#[test]
fn candidate_runs_expand_to_the_candidates_in_order() {
    // Polarized and OmniWAR need more VCs, or no faults, on the faulty network.
    let fault_free = ["minimal", "polarized", "omniwar", "surepath-polarized", "surepath-omni"];
    let faulty = ["minimal", "surepath-polarized", "surepath-omni"];
    for (faults, algs) in [("0", &fault_free[..]), ("4", &faulty[..])] {
        for &alg in algs {
            let sets = [format!("routing.algorithm={alg}"), format!("faults.random_links={faults}")];
            let sets: Vec<&str> = sets.iter().map(|s| s.as_str()).collect();
            let (net, r) = routing(&[3, 4], &sets);
            let n = net.num_switches() as SwitchId;
            for at in 0..n {
                for src in 0..n {
                    for dst in (0..n).filter(|&d| d != at) {
                        for (hops, escape, deroutes) in [(0, false, 0), (1, false, 1), (2, true, 0)] {
                            let st = RouteState { hops, escape, deroutes, ..state(src, dst) };
                            let mut cands = Vec::new();
                            r.candidates(at, &st, &mut cands);
                            let mut runs = Vec::new();
                            assert!(r.candidate_runs(at, &st, &mut runs), "{alg} writes runs");
                            let expanded: Vec<Candidate> =
                                runs.iter().flat_map(|c| (c.lo..c.hi).map(move |vc| c.candidate(vc))).collect();
                            assert_eq!(expanded, cands, "{alg} at {at} from {src} to {dst}, {st:?}");
                            assert!(runs.iter().all(|c| c.lo < c.hi), "no empty run");
                        }
                    }
                }
            }
        }
    }
}

/// The classes SurePath writes (Polarized and Omnidimensional routes over the Up/Down escape: from
/// masks on a fault-free HyperX, hop by hop on a faulty one) offer exactly the candidates of its
/// runs, each port at most once per escape flag: at every switch, for every destination, from a
/// spread of sources, before and after a deroute and in the escape, on a 4x4x4 HyperX, a trunked
/// 3x4 one and a 4x4x4 one with 8 failed links.
#[test]
fn surepath_classes_offer_the_candidates_of_its_runs() {
    let expand = |classes: &[super::PortClass]| {
        let mut v: Vec<(u16, u8, u32, bool)> = Vec::new();
        for c in classes {
            for p in 0..128u16 {
                if c.mask & 1 << p != 0 {
                    v.extend((c.lo..c.hi).map(|vc| (p, vc, c.penalty, c.escape)));
                }
            }
        }
        v.sort_unstable();
        v
    };
    let mut checked = 0;
    for (sides, extra) in [
        (&[4usize, 4, 4][..], None),
        (&[3, 4], Some("topology.trunking=[2,1]")),
        (&[4, 4, 4], Some("faults.random_links=8")),
    ] {
        for alg in ["surepath-polarized", "surepath-omni"] {
            let a = format!("routing.algorithm={alg}");
            let mut sets = vec![a.as_str()];
            sets.extend(extra);
            let (net, r) = routing(sides, &sets);
            let n = net.num_switches() as SwitchId;
            for x in 0..n {
                for s in (0..n).step_by(5) {
                    for t in (0..n).filter(|&t| t != x) {
                        for (deroutes, escape) in [(0, false), (1, false), (0, true)] {
                            let st = RouteState { src: s, dst: t, deroutes, escape, ..Default::default() };
                            let mut classes = Vec::new();
                            assert!(r.candidate_classes(x, &st, ClassGroups::All, &mut classes), "{alg} {sides:?}");
                            // Each group apart: the same classes, in the same order, and the
                            // escape's penalties at the routing's floor or above.
                            let (mut routing_group, mut escape_group) = (Vec::new(), Vec::new());
                            assert!(r.candidate_classes(x, &st, ClassGroups::Routing, &mut routing_group));
                            assert!(r.candidate_classes(x, &st, ClassGroups::Escape, &mut escape_group));
                            assert!(routing_group.iter().all(|c| !c.escape) && escape_group.iter().all(|c| c.escape));
                            assert_eq!([routing_group, escape_group.clone()].concat(), classes, "{alg} at {x} {st:?}");
                            let floor = r.escape_penalty_floor().unwrap();
                            assert!(escape_group.iter().all(|c| c.penalty >= floor), "{alg} at {x} {st:?}");
                            for g in [false, true] {
                                let masks: Vec<u128> =
                                    classes.iter().filter(|c| c.escape == g).map(|c| c.mask).collect();
                                let union = masks.iter().fold(0u128, |u, m| u | m);
                                assert_eq!(union.count_ones(), masks.iter().map(|m| m.count_ones()).sum::<u32>());
                            }
                            let mut runs = Vec::new();
                            r.candidate_runs(x, &st, &mut runs);
                            let mut want: Vec<_> = runs
                                .iter()
                                .flat_map(|r| (r.lo..r.hi).map(move |vc| (r.port, vc, r.penalty, r.escape)))
                                .collect();
                            want.sort_unstable();
                            assert_eq!(expand(&classes), want, "{alg} {sides:?} at {x} from {s} to {t} {st:?}");
                            checked += !want.is_empty() as u32;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 15_000, "{checked}");
}
