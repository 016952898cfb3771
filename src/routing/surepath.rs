//! SurePath (SurePath paper, section 3 and Table 4): a fully adaptive routing subnetwork plus an
//! opportunistic Up/Down escape subnetwork, split over the VCs.
//!
//! The `vcs` VCs of every port are split into routing VCs `C_Rout` (the first `vcs - escape_vcs`)
//! and escape VCs `C_Esc` (the last `routing.escape_vcs`, default 1). Candidates (section 3):
//! 1. a packet still in `C_Rout` gets the hops of its route set on every routing VC, with the route
//!    set's penalties (Omnidimensional: 0 minimal, 64 deroute; Polarized: 0/64/80 by `dmu`). The
//!    paper (Table 4) only gives the VC counts; using the routing VCs in hop order instead (VC
//!    `min(hops, |C_Rout| - 1)`) was measured and is worse on most of Figs. 4-5's points (e.g.
//!    3-D Random Server Permutation at offered load 1.0: 0.70 accepted against 0.81), better only
//!    after saturation on 2-D Random Server Permutation and 3-D Dimension Complement Reverse;
//! 2. every packet, in `C_Rout` or `C_Esc`, gets the escape hops of [`UpDown`] on every escape VC,
//!    with the escape penalties (Up 112, Down 96, shortcuts 80/64/48).
//!
//! The router requests the candidate with the lowest `Q + P`, so escape hops are taken when the
//! routing VCs are congested, or when the route set has nothing to offer (a *forced* hop). A packet
//! that entered `C_Esc` never returns to `C_Rout` (its state records it). Deadlock freedom follows
//! from Duato's theorem with the Up/Down links of the escape VCs as the escape subfunction, which
//! [`Routing::escape_subfunction`] exposes to `hxsim check-deadlock`. Routing VCs need no ladder, so
//! any `vcs >= escape_vcs + 1` works, whatever the (faulty) diameter: the paper's Table 4 uses
//! `2n - 1` routing VCs and one escape VC, and section 6 uses 3 + 1.
//!
//! - **OmniSP** (`surepath-omni`): Omnidimensional routes ([`Omnidimensional`]).
//! - **PolSP** (`surepath-polarized`): Polarized routes ([`PolarizedRoutes`]).
//!
//! The same composition, SurePath's rule with another adaptive part, is the fault-tolerant
//! baseline on HyperZ and fat trees (issue 32; the SurePath paper applies it to HyperX only):
//! - **`surepath-aliod`**: ALIOD's moves (Adda 2023, Table 1; [`super::aliod`]) as computed on the
//!   fault-free HyperZ, kept where their link is alive ([`RuleRoutes`]). Where faults leave ALIOD
//!   no live move, the packet takes a forced escape hop, as PolSP does at a dead end; unlike
//!   `aliod` on a faulty network ([`super::hyperz_faults`]) it needs no search and no scheme B.
//! - **`surepath-minimal`**: every live port one hop closer to the destination over the live
//!   links ([`MinimalRoutes`], [`super::minimal_ports`]), any family.

use super::aliod::Aliod;
use super::hyperz_moves::{self, idle_only_penalty, Rule};
use super::omnidimensional::Omnidimensional;
use super::polarized::{PolarizedRoutes, PENALTIES};
use super::updown::{LinkKind, UpDown};
use super::{
    push_run, Candidate, CandidateRun, ClassGroups, HopClasses, PortClass, RouteState, Routing, RoutingParams,
};
use crate::error::ConfigError;
use crate::topology::{Fabric, HyperZ, PortId, SwitchId};
use std::sync::Arc;

/// A set of routes SurePath can use in its routing subnetwork.
pub trait RouteSet: Send + Sync {
    /// Pushes the routing candidates of a packet in state `st` at `at` on the VCs `vcs`.
    fn push(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>, vcs: std::ops::Range<u8>);
    /// [`RouteSet::push`] as runs, one per hop on all of `vcs` (the same candidates in the same
    /// order).
    fn push_runs(&self, at: SwitchId, st: &RouteState, out: &mut Vec<CandidateRun>, vcs: std::ops::Range<u8>);
    /// [`RouteSet::push_runs`] as classes of ports ([`Routing::candidate_classes`]); `false` (the
    /// default) where the route set does not write them, with `out` unchanged.
    fn push_classes(
        &self,
        _at: SwitchId,
        _st: &RouteState,
        _out: &mut Vec<PortClass>,
        _vcs: std::ops::Range<u8>,
    ) -> bool {
        false
    }
    /// State update for a routing hop through `port`.
    fn advance(&self, _st: &mut RouteState, _at: SwitchId, _port: PortId) {}
    /// What [`RouteSet::push`] and [`RouteSet::advance`] read of `st`, with `hops` (see
    /// [`Routing::analysis_state`]).
    fn analysis_state(&self, st: &RouteState) -> RouteState;
}

impl RouteSet for Omnidimensional {
    #[inline]
    fn push(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>, vcs: std::ops::Range<u8>) {
        self.hops(at, st, |port, penalty| {
            for vc in vcs.clone() {
                out.push(Candidate { port, vc, penalty, escape: false });
            }
        });
    }
    #[inline]
    fn push_runs(&self, at: SwitchId, st: &RouteState, out: &mut Vec<CandidateRun>, vcs: std::ops::Range<u8>) {
        self.hops(at, st, |port, penalty| push_run(out, port, vcs.clone(), penalty, false));
    }
    /// From the masks of a fault-free HyperX of at most 64 ports, else hop by hop.
    #[inline]
    fn push_classes(&self, at: SwitchId, st: &RouteState, out: &mut Vec<PortClass>, vcs: std::ops::Range<u8>) -> bool {
        self.hyperx_classes(at, st, out, vcs.clone()) || omni_hop_classes(self, at, st, out, vcs)
    }
    #[inline]
    fn advance(&self, st: &mut RouteState, at: SwitchId, port: PortId) {
        Omnidimensional::advance(self, st, at, port);
    }
    fn analysis_state(&self, st: &RouteState) -> RouteState {
        Omnidimensional::analysis_state(self, st)
    }
}

impl RouteSet for PolarizedRoutes {
    #[inline]
    fn push(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>, vcs: std::ops::Range<u8>) {
        self.candidates(at, st, out, |_| vcs.clone());
    }
    #[inline]
    fn push_runs(&self, at: SwitchId, st: &RouteState, out: &mut Vec<CandidateRun>, vcs: std::ops::Range<u8>) {
        self.candidate_runs(at, st, out, |_| vcs.clone());
    }
    /// From the masks of a fault-free HyperX of at most 64 ports, or of a faulty one of at most
    /// 128, else hop by hop (the penalties relative to the best weight change, as
    /// [`PolarizedRoutes::candidate_runs`]).
    #[inline]
    fn push_classes(&self, at: SwitchId, st: &RouteState, out: &mut Vec<PortClass>, vcs: std::ops::Range<u8>) -> bool {
        self.hyperx_classes(at, st, out, vcs.clone())
            || self.faulty_hyperx_classes(at, st, out, vcs.clone())
            || polarized_hop_classes(self, at, st, out, vcs)
    }
    fn analysis_state(&self, st: &RouteState) -> RouteState {
        PolarizedRoutes::analysis_state(self, st)
    }
}

/// Omnidimensional routes' classes gathered hop by hop (not inlined beside the fault-free
/// HyperX's masks, as [`SurePath::escape_hop_classes`]).
#[inline(never)]
fn omni_hop_classes(
    o: &Omnidimensional,
    at: SwitchId,
    st: &RouteState,
    out: &mut Vec<PortClass>,
    vcs: std::ops::Range<u8>,
) -> bool {
    let mut c = HopClasses::default();
    o.hops(at, st, |port, penalty| c.add(port, penalty));
    c.push_to(out, vcs, false, |p| p)
}

/// Polarized routes' classes gathered hop by hop, the penalties relative to the best weight
/// change as [`PolarizedRoutes::candidate_runs`] (not inlined, as [`omni_hop_classes`]).
#[inline(never)]
fn polarized_hop_classes(
    p: &PolarizedRoutes,
    at: SwitchId,
    st: &RouteState,
    out: &mut Vec<PortClass>,
    vcs: std::ops::Range<u8>,
) -> bool {
    let mut c = HopClasses::default();
    p.hops(at, st, |port, dmu| c.add(port, dmu as u32));
    let best = c.max_penalty();
    c.push_to(out, vcs, false, |dmu| PENALTIES[(best - dmu) as usize])
}

/// Minimal routes over the live links: every port of [`super::minimal_ports`], penalty 0.
pub struct MinimalRoutes {
    net: Arc<Fabric>,
}

impl RouteSet for MinimalRoutes {
    #[inline]
    fn push(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>, vcs: std::ops::Range<u8>) {
        super::minimal_ports(&self.net, at, st.dst, |port| {
            for vc in vcs.clone() {
                out.push(Candidate { port, vc, penalty: 0, escape: false });
            }
        });
    }
    #[inline]
    fn push_runs(&self, at: SwitchId, st: &RouteState, out: &mut Vec<CandidateRun>, vcs: std::ops::Range<u8>) {
        super::minimal_ports(&self.net, at, st.dst, |port| push_run(out, port, vcs.clone(), 0, false));
    }
    #[inline]
    fn push_classes(&self, at: SwitchId, st: &RouteState, out: &mut Vec<PortClass>, vcs: std::ops::Range<u8>) -> bool {
        let mut c = HopClasses::default();
        super::minimal_ports(&self.net, at, st.dst, |port| c.add(port, 0));
        c.push_to(out, vcs, false, |p| p)
    }
    /// Minimal routes depend on the destination alone.
    fn analysis_state(&self, st: &RouteState) -> RouteState {
        RouteState { dst: st.dst, hops: st.hops, ..Default::default() }
    }
}

/// A HyperZ rule's moves, computed on the fault-free HyperZ and kept where their link is alive,
/// with the rule's penalties.
pub struct RuleRoutes<R: Rule> {
    net: Arc<Fabric>,
    hz: HyperZ,
    rule: R,
}

impl<R: Rule> RuleRoutes<R> {
    /// The live moves of `rule` at `at`, as `f(port, penalty)`.
    #[inline]
    fn hops(&self, at: SwitchId, st: &RouteState, mut f: impl FnMut(PortId, u32)) {
        hyperz_moves::with_moves(&self.rule, &self.hz, at, st, |moves| {
            for m in moves {
                if self.net.alive(at, m.port) {
                    f(m.port, m.penalty);
                }
            }
        });
    }
}

impl<R: Rule> RouteSet for RuleRoutes<R> {
    #[inline]
    fn push(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>, vcs: std::ops::Range<u8>) {
        self.hops(at, st, |port, penalty| {
            for vc in vcs.clone() {
                out.push(Candidate { port, vc, penalty, escape: false });
            }
        });
    }
    #[inline]
    fn push_runs(&self, at: SwitchId, st: &RouteState, out: &mut Vec<CandidateRun>, vcs: std::ops::Range<u8>) {
        self.hops(at, st, |port, penalty| push_run(out, port, vcs.clone(), penalty, false));
    }
    // No classes: a rule's moves come in the rule's order, not the ports', which classes cannot
    // give back, so most heads would be declined after the moves were computed, and computed
    // again as runs (`surepath-aliod` on `configs/hyperz-1m.toml`: 7% more CPU time).
    /// A HyperZ rule may read any field of the state (its phase, level and deroutes): all are kept.
    fn analysis_state(&self, st: &RouteState) -> RouteState {
        *st
    }
}

impl SurePath<MinimalRoutes> {
    /// SurePath with minimal routes (any family).
    pub fn minimal(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let routes = MinimalRoutes { net: net.clone() };
        Self::with_routes("surepath-minimal", routes, params, net)
    }
}

impl SurePath<RuleRoutes<Aliod>> {
    /// SurePath with ALIOD's moves (a HyperZ or fat tree).
    pub fn aliod(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let hz = hyperz_moves::hyperz(&net, "surepath-aliod")?.clone();
        let routes = RuleRoutes { net: net.clone(), hz, rule: Aliod { idle_only: idle_only_penalty(params) } };
        Self::with_routes("surepath-aliod", routes, params, net)
    }
}

/// SurePath over the route set `R`.
pub struct SurePath<R> {
    name: &'static str,
    routes: R,
    escape: UpDown,
    routing_vcs: u8,
    vcs: u8,
}

impl SurePath<Omnidimensional> {
    /// OmniSP: SurePath with Omnidimensional routes (needs a HyperX).
    pub fn omni(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let routes = Omnidimensional::new(params, net.clone())?;
        Self::with_routes("surepath-omni", routes, params, net)
    }
}

impl SurePath<PolarizedRoutes> {
    /// PolSP: SurePath with Polarized routes.
    pub fn polarized(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let routes = PolarizedRoutes::new(net.clone());
        Self::with_routes("surepath-polarized", routes, params, net)
    }
}

impl<R: RouteSet> SurePath<R> {
    fn with_routes(
        name: &'static str,
        routes: R,
        params: &RoutingParams,
        net: Arc<Fabric>,
    ) -> Result<Self, ConfigError> {
        if params.vc_policy != "ladder" {
            return Err(ConfigError::value(
                "routing.vc_policy",
                format!("\"{}\"", params.vc_policy),
                format!(
                    "{name} assigns VCs itself (routing VCs plus routing.escape_vcs escape VCs); \
                     leave routing.vc_policy at its default, \"ladder\""
                ),
            ));
        }
        let vcs = params.vcs_or(2 * net.topology().diameter() as usize);
        let esc = params.escape_vcs;
        if esc == 0 {
            return Err(ConfigError::value("routing.escape_vcs", 0, format!("at least 1 escape VC for {name}")));
        }
        if vcs <= esc {
            return Err(ConfigError::value(
                "routing.vcs",
                vcs,
                format!("{name} needs routing VCs besides its {esc} escape VC(s): at least {}", esc + 1),
            ));
        }
        let escape = UpDown::new(net, params.escape_root)?;
        Ok(SurePath { name, routes, escape, routing_vcs: (vcs - esc) as u8, vcs: vcs as u8 })
    }

    /// The escape subnetwork.
    pub fn escape(&self) -> &UpDown {
        &self.escape
    }
}

impl<R: RouteSet> SurePath<R> {
    /// The escape's classes gathered hop by hop ([`HopClasses`]). Not inlined: the fault-free
    /// HyperX's path ([`UpDown::hyperx_classes`]) is the hot one there, and inlining this beside
    /// it cost PolSP 1.5% more instructions on `configs/hyperx-3d-8.toml`.
    #[inline(never)]
    fn escape_hop_classes(
        &self,
        at: SwitchId,
        t: SwitchId,
        out: &mut Vec<PortClass>,
        esc: std::ops::Range<u8>,
    ) -> bool {
        let mut c = HopClasses::default();
        self.escape.hops(at, t, |port, penalty, _| c.add(port, penalty));
        c.push_to(out, esc, true, |p| p)
    }
}

impl<R: RouteSet> Routing for SurePath<R> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn vcs(&self) -> usize {
        self.vcs as usize
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        if !st.escape {
            self.routes.push(at, st, out, 0..self.routing_vcs);
        }
        let esc = self.routing_vcs..self.vcs;
        self.escape.hops(at, st.dst, |port, penalty, _| {
            for vc in esc.clone() {
                out.push(Candidate { port, vc, penalty, escape: true });
            }
        });
    }
    /// Where the route set and the escape write classes: a few masks per dimension instead of a
    /// run per port (Polarized or Omnidimensional routes and the Up/Down escape on a fault-free
    /// HyperX of at most 64 ports), else gathered hop by hop ([`HopClasses`]: any network whose
    /// switches have fewer than 128 ports), which spares the runs and grouping them.
    fn candidate_classes(&self, at: SwitchId, st: &RouteState, groups: ClassGroups, out: &mut Vec<PortClass>) -> bool {
        out.clear();
        if groups != ClassGroups::Escape && !st.escape && !self.routes.push_classes(at, st, out, 0..self.routing_vcs) {
            return false;
        }
        if groups == ClassGroups::Routing {
            return true;
        }
        let esc = self.routing_vcs..self.vcs;
        self.escape.hyperx_classes(at, st.dst, out, esc.clone())
            || self.escape.faulty_hyperx_classes(at, st.dst, out, esc.clone())
            || self.escape_hop_classes(at, st.dst, out, esc)
    }
    /// The escape's classes come apart from the routes' (the Up/Down escape's penalties are
    /// [`UpDown::LEAST_PENALTY`] or more): most heads never need them, as a route is cheaper.
    fn escape_penalty_floor(&self) -> Option<u32> {
        Some(UpDown::LEAST_PENALTY)
    }
    fn candidate_runs(&self, at: SwitchId, st: &RouteState, out: &mut Vec<CandidateRun>) -> bool {
        if !st.escape {
            self.routes.push_runs(at, st, out, 0..self.routing_vcs);
        }
        let esc = self.routing_vcs..self.vcs;
        self.escape.hops(at, st.dst, |port, penalty, _| push_run(out, port, esc.clone(), penalty, true));
        true
    }
    fn advance(&self, st: &mut RouteState, at: SwitchId, _next: SwitchId, c: &Candidate) {
        if !c.escape {
            self.routes.advance(st, at, c.port);
        }
    }
    fn escape_based(&self) -> bool {
        true
    }
    fn cache_candidates(&self) -> bool {
        true
    }
    /// In the escape a packet's candidates are the escape hops to its destination, whatever its
    /// route so far; before, what the route set reads.
    fn analysis_state(&self, st: &RouteState) -> RouteState {
        if st.escape {
            RouteState { dst: st.dst, hops: st.hops, escape: true, ..Default::default() }
        } else {
            self.routes.analysis_state(st)
        }
    }
    fn escape_subfunction(&self, at: SwitchId, dst: SwitchId, out: &mut Vec<Candidate>) {
        let esc = self.routing_vcs..self.vcs;
        self.escape.hops(at, dst, |port, penalty, kind| {
            if kind != LinkKind::Horizontal {
                for vc in esc.clone() {
                    out.push(Candidate { port, vc, penalty, escape: true });
                }
            }
        });
    }
}
