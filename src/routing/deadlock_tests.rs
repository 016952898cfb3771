//! `deadlock::check` (states merged by `Routing::analysis_state`, one exploration per destination)
//! against `deadlock::check_exact` (every state of every single route), the reference: on every
//! network, routing and VC policy of the test suite's small instances, and on small made-up
//! routings built to produce each kind of verdict (unroutable states, invalid candidates, routes
//! that loop, an escape not offered, disconnected or cyclic, cross dependencies, packets that
//! leave the escape again).

use super::deadlock::{check, check_exact, Report, Verdict};
use super::dor::hyperx;
use super::{build, minimal_ports, names, Candidate, RouteState, Routing};
use crate::config::parse_str;
use crate::sim;
use crate::topology::{Fabric, SwitchId};
use std::sync::Arc;

/// Both checkers on `routing`: the same verdict (for those naming a problem's place, the same
/// kind: which of several problem states each meets first depends on its order), the same counts,
/// and no more merged states than exact ones. Returns the exact report.
fn same(what: &str, net: &Fabric, routing: &dyn Routing) -> Report {
    let fast = check(net, routing);
    let exact = check_exact(net, routing);
    let placed = |v: &Verdict| {
        matches!(
            v,
            Verdict::Unroutable { .. }
                | Verdict::InvalidCandidate { .. }
                | Verdict::RouteTooLong { .. }
                | Verdict::EscapeNotOffered { .. }
        )
    };
    if placed(&exact.verdict) {
        assert_eq!(
            std::mem::discriminant(&fast.verdict),
            std::mem::discriminant(&exact.verdict),
            "{what}: {:?} against {:?}",
            fast.verdict,
            exact.verdict
        );
    } else {
        assert_eq!(fast.verdict, exact.verdict, "{what}");
    }
    let counts =
        |r: &Report| (r.vcs, r.switches, r.pairs, r.longest_route, r.channels_used, r.vcs_needed, r.dependencies);
    assert_eq!(counts(&fast), counts(&exact), "{what}: (vcs, switches, pairs, longest, channels, vcs needed, deps)");
    assert!(fast.states <= exact.states, "{what}: {} merged states, {} exact", fast.states, exact.states);
    exact
}

/// The test suite's small networks (`[topology]` text and `--set`s): those of `tests.rs`,
/// `family_tests.rs`, `hyperz_tests.rs`, `nue_tests.rs` and `layered_tests.rs`, the larger ones
/// (4x4x4, 4x4x3) left out for time.
const NETWORKS: &[(&str, &[&str])] = &[
    ("sides = [4, 4]\nservers_per_switch = 2", &[]),
    ("sides = [3, 3, 3]\nservers_per_switch = 2", &[]),
    ("sides = [4, 4]\nservers_per_switch = 2", &["faults.random_links=6"]),
    ("sides = [3, 3, 3]\nservers_per_switch = 2", &["faults.random_links=8"]),
    ("kind = \"dragonfly\"\np = 1\na = 4\nh = 2", &[]),
    ("kind = \"dragonfly\"\np = 1\na = 3\nh = 2\narrangement = \"absolute\"", &[]),
    ("kind = \"torus\"\nsides = [4, 4]\nservers_per_switch = 1", &[]),
    ("kind = \"torus\"\nsides = [5, 3, 2]\nservers_per_switch = 1", &[]),
    ("kind = \"torus\"\nsides = [5]\nservers_per_switch = 1", &[]),
    ("kind = \"mesh\"\nsides = [4, 3]\nservers_per_switch = 1", &[]),
    ("kind = \"hyperz\"\nsides = [3, 3]\nzones = [2]\nroots = [1]\ninternal_links = [1]", &[]),
    ("kind = \"hyperz\"\nsides = [3, 3]\nzones = [2, 2]\nroots = [1, 2]\ninternal_links = [1, 1]", &[]),
    ("kind = \"fattree\"\nzones = [4, 4]\nroots = [1, 4]\ninternal_links = [1, 1]", &[]),
    ("kind = \"fattree\"\nzones = [2, 3, 2]\nroots = [1, 2, 4]\ninternal_links = [1, 2, 2]", &[]),
    ("kind = \"rrg\"\nswitches = 20\ndegree = 4\nservers_per_switch = 1", &["faults.random_links=3"]),
    ("kind = \"kautz\"\ndegree = 2\ndiameter = 3\nservers_per_switch = 1", &[]),
];

/// The VC settings tried with every routing (each routing refuses those it does not take).
const POLICIES: &[&[&str]] = &[
    &[],
    &["routing.vc_policy=none", "routing.vcs=1"],
    &["routing.vc_policy=davc-n"],
    &["routing.vc_policy=davc-p"],
    &["routing.vc_policy=davc-np"],
    &["routing.vc_policy=dor-escape"],
    &["routing.vc_policy=hyperz-a"],
    &["routing.vc_policy=hyperz-b"],
    &["routing.vc_policy=dally"],
    &["routing.vc_policy=dateline"],
    &["routing.vcs=2"],
    &["routing.vcs=4", "routing.escape_root=5"],
];

#[test]
fn merged_checker_matches_the_exact_one_on_the_suites_networks() {
    let (mut compared, mut free) = (0, Vec::new());
    for &(topology, faults) in NETWORKS {
        for alg in names() {
            for policy in POLICIES {
                let a = format!("routing.algorithm={alg}");
                let sets: Vec<String> =
                    [&[a.as_str()][..], faults, policy].concat().iter().map(|s| s.to_string()).collect();
                let Ok(cfg) = parse_str(&format!("seed = 3\n[topology]\n{topology}\n"), "test", &sets) else {
                    continue;
                };
                let Ok(net) = sim::build_network(&cfg) else { continue };
                let Ok(r) = build(&cfg.routing_params(), net.clone()) else { continue };
                let rep = same(&format!("{alg} {policy:?} on {topology:?} {faults:?}"), &net, &*r);
                compared += 1;
                if rep.deadlock_free() {
                    free.push(alg);
                }
            }
        }
    }
    // Every routing that reduces its states was compared where it is deadlock free.
    for alg in ["surepath-omni", "surepath-polarized", "omniwar", "polarized", "dal"] {
        assert!(free.contains(&alg), "{alg} never compared deadlock free");
    }
    assert!(compared > 300, "only {compared} instances built");
}

/// What a [`Made`] routing does wrong (or right).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Plan {
    /// Minimal hops on VC 0 and 1 (acyclic on two VCs only by luck: cyclic on VC 0).
    Minimal,
    /// As `Minimal`, but nothing at one switch for one destination.
    Stuck,
    /// As `Minimal`, plus a candidate on VC 2 of 2.
    BadVc,
    /// Every port, always: routes never end.
    Wander,
    /// Escape-based: dimension order on VC 0 is `R1`; minimal hops on VC 1 until the escape is
    /// taken, then only `R1`.
    Escape,
    /// As `Escape`, but one switch offers minimal hops instead of its `R1` hop.
    EscapeHidden,
    /// As `Escape`, but `R1` is empty at one switch for one destination.
    EscapeCut,
    /// As `Escape`, but `R1` is every minimal hop on VC 0, whose dependencies close cycles.
    EscapeCyclic,
    /// As `Escape`, but also every minimal hop on VC 0: channels of `R1` for other destinations
    /// used outside the packet's own (cross dependencies).
    Cross,
    /// As `Escape`, but a packet in the escape returns to minimal hops on VC 1 after each escape
    /// hop, once per dimension (HyperZ scheme A does the like).
    Return,
}

/// A made-up routing on a HyperX, following its [`Plan`]; its `analysis_state` keeps only what
/// it reads (destination, hops, escape flag, and the dimensions already returned in `Return`).
struct Made {
    net: Arc<Fabric>,
    plan: Plan,
}

impl Made {
    /// The dimension-order hop from `at` to `dst`, on VC 0.
    fn dor(&self, at: SwitchId, dst: SwitchId, out: &mut Vec<Candidate>) {
        let h = hyperx(&self.net).unwrap();
        if let Some(d) = (0..h.dims()).find(|&d| h.coord(at, d) != h.coord(dst, d)) {
            out.push(Candidate { port: h.port_to(at, d, h.coord(dst, d), 0), vc: 0, penalty: 0, escape: true });
        }
    }

    fn minimal(&self, at: SwitchId, dst: SwitchId, vc: u8, escape: bool, out: &mut Vec<Candidate>) {
        minimal_ports(&self.net, at, dst, |port| out.push(Candidate { port, vc, penalty: 0, escape }));
    }
}

impl Routing for Made {
    fn name(&self) -> &'static str {
        "made"
    }
    fn vcs(&self) -> usize {
        2
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        let dst = st.dst;
        match self.plan {
            Plan::Minimal | Plan::Stuck | Plan::BadVc => {
                if self.plan == Plan::Stuck && at == 5 && dst == 10 {
                    return;
                }
                self.minimal(at, dst, 0, false, out);
                self.minimal(at, dst, 1, false, out);
                if self.plan == Plan::BadVc && at == 3 {
                    self.minimal(at, dst, 2, false, out);
                }
            }
            Plan::Wander => {
                for port in 0..self.net.switch_ports(at) as u16 {
                    out.push(Candidate { port, vc: (st.hops % 2) as u8, penalty: 0, escape: false });
                }
            }
            _ => {
                // A switch hiding its R1 hop still offers minimal ones (else the packets in the
                // escape there would have none: unroutable, a verdict of its own).
                let hidden = self.plan == Plan::EscapeHidden && at == 6;
                let back = self.plan == Plan::Return && st.escape && st.phase < 2;
                if !st.escape || back || hidden {
                    self.minimal(at, dst, 1, false, out);
                }
                if self.plan == Plan::Cross && !st.escape {
                    self.minimal(at, dst, 0, true, out);
                }
                if !hidden {
                    self.escape_subfunction(at, dst, out);
                }
            }
        }
    }
    fn advance(&self, st: &mut RouteState, _at: SwitchId, _next: SwitchId, c: &Candidate) {
        // A packet that returns from the escape is no longer in it.
        if self.plan == Plan::Return && !c.escape && st.escape {
            st.escape = false;
            st.phase += 1;
        }
    }
    fn escape_based(&self) -> bool {
        !matches!(self.plan, Plan::Minimal | Plan::Stuck | Plan::BadVc | Plan::Wander)
    }
    fn escape_subfunction(&self, at: SwitchId, dst: SwitchId, out: &mut Vec<Candidate>) {
        match self.plan {
            Plan::EscapeCut if at == 9 && dst == 0 => {}
            Plan::EscapeCyclic => self.minimal(at, dst, 0, true, out),
            _ => self.dor(at, dst, out),
        }
    }
    fn analysis_state(&self, st: &RouteState) -> RouteState {
        match self.plan {
            // Wander's VC follows the hop count; the others read no more than this.
            Plan::Return => {
                RouteState { dst: st.dst, hops: st.hops, escape: st.escape, phase: st.phase, ..Default::default() }
            }
            _ => RouteState { dst: st.dst, hops: st.hops, escape: st.escape, ..Default::default() },
        }
    }
}

#[test]
fn merged_checker_matches_the_exact_one_on_every_kind_of_verdict() {
    let cfg =
        |sides: &str| parse_str(&format!("[topology]\nsides = {sides}\nservers_per_switch = 1\n"), "t", &[]).unwrap();
    let square = sim::build_network(&cfg("[4, 4]")).unwrap();
    let line = sim::build_network(&cfg("[3]")).unwrap();
    let cube = sim::build_network(&cfg("[3, 3, 3]")).unwrap();
    let on = |net: &Arc<Fabric>, plan: Plan| same(&format!("{plan:?}"), net, &Made { net: net.clone(), plan }).verdict;
    let kind = |plan: Plan| on(if plan == Plan::Wander { &line } else { &square }, plan);
    // Each plan's verdict, as the rules give it (the exact checker's, which `same` compares).
    assert!(matches!(kind(Plan::Minimal), Verdict::Cycle { .. }));
    assert!(matches!(kind(Plan::Stuck), Verdict::Unroutable { place } if place.at == 5 && place.dst == 10));
    assert!(
        matches!(kind(Plan::BadVc), Verdict::InvalidCandidate { place, channel } if place.at == 3 && channel.vc == 2)
    );
    assert!(matches!(kind(Plan::Wander), Verdict::RouteTooLong { .. }));
    assert!(matches!(kind(Plan::Escape), Verdict::Duato { .. }));
    assert!(matches!(kind(Plan::EscapeHidden), Verdict::EscapeNotOffered { place, .. } if place.at == 6));
    assert_eq!(kind(Plan::EscapeCut), Verdict::EscapeDisconnected { from: 9, to: 0 });
    assert!(matches!(kind(Plan::EscapeCyclic), Verdict::EscapeCycle { .. }));
    // The superset graph of cross dependencies joins DOR hops of different packets through
    // minimal hops on VC 0: not a verdict derived here, only compared.
    kind(Plan::Cross);
    on(&cube, Plan::Cross);
    // On a 2-D network a packet that leaves the escape after a DOR hop has one dimension left and
    // no escape hop to take; on the 3x3x3 it takes DOR hops again after minimal ones, which adds
    // indirect dependencies (a DOR channel on the one of a switch further on) to the direct ones
    // of `Escape`, which `Return` has too.
    let ext = |v: Verdict| match v {
        Verdict::Duato { extended_dependencies, .. } => extended_dependencies,
        v => panic!("{v:?}"),
    };
    assert!(ext(on(&cube, Plan::Return)) > ext(on(&cube, Plan::Escape)));
    assert!(matches!(kind(Plan::Return), Verdict::Duato { .. }));
}
