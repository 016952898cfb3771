//! Omnidimensional routes and OmniWAR (SurePath paper, section 3.1.1 and Table 4; McDonald et al.'s
//! OmniWAR; the same route set as DAL's adaptive part).
//!
//! At each hop a packet may move in any dimension in which the current switch differs from the
//! destination switch, to *any* switch of that row: the one aligned with the destination (a minimal
//! hop) or another one (a deroute, which leaves the dimension unaligned). Deroutes are limited by
//! a global budget of `m` non-minimal hops (`routing.max_deroutes`, default `m = n`), which may be
//! spent several times in the same dimension; once it is spent only minimal hops remain. Routes
//! therefore have at most `n + m` hops, and never leave the sub-HyperX spanned by the unaligned
//! dimensions (a packet between two switches of one row stays in that row). Penalties: 0 phits for
//! minimal hops, 64 for deroutes. With trunking, every parallel link is a candidate. Dead links are
//! skipped, so on a faulty network a packet whose aligning link is dead must deroute around it
//! while it has budget; OmniWAR then may find no route, which the router reports.
//!
//! **OmniWAR** is these routes with the ladder (Table 4: "n VCs minimal and n VCs for deroutes",
//! 2n VCs in all): the ladder of section 3.1.2, one VC per hop, over the `n + m` hops a route may
//! have. A packet that has taken `h` hops, `d` of them deroutes, requests VC `h` whatever `d`: since
//! at most `n` of its hops are minimal and at most `m = n` are deroutes, `h < n + m = 2n`, which is
//! where the paper's "n VCs for minimal and n for deroutes" count comes from. (Indexing minimal and
//! deroute hops on two separate ladders would let a minimal hop after a deroute drop to a lower VC,
//! so the VC index would no longer grow along the route, which is what makes the ladder acyclic.)
//! Other VC policies can be chosen with `routing.vc_policy`.

use super::dor::hyperx;
use super::vc::VcPolicy;
use super::{push_classes, push_run, Candidate, CandidateRun, PortClass, RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::topology::{Fabric, HyperX, PortId, SwitchId};
use std::sync::Arc;

/// Penalty of a deroute, phits (SurePath section 3.1.1).
pub const DEROUTE_PENALTY: u32 = 64;

/// The Omnidimensional route set: which hops are allowed, with their penalties.
pub struct Omnidimensional {
    net: Arc<Fabric>,
    hx: HyperX,
    /// Non-minimal hop budget `m`.
    pub max_deroutes: u8,
}

impl Omnidimensional {
    /// Omnidimensional routes over `net` (a HyperX) with the budget of `routing.max_deroutes`.
    pub fn new(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let hx = hyperx(&net)?.clone();
        let n = hx.dims();
        let m = params.max_deroutes.unwrap_or(n);
        Ok(Omnidimensional { net, hx, max_deroutes: m as u8 })
    }

    /// Longest route: every dimension once minimally plus the whole deroute budget.
    pub fn max_hops(&self) -> usize {
        self.hx.dims() + self.max_deroutes as usize
    }

    /// Calls `f(port, penalty)` for every allowed hop of a packet in state `st` at `at`.
    #[inline]
    pub fn hops(&self, at: SwitchId, st: &RouteState, mut f: impl FnMut(PortId, u32)) {
        let h = &self.hx;
        let budget = st.deroutes < self.max_deroutes;
        for d in 0..h.dims() {
            let (x, t) = (h.coord(at, d), h.coord(st.dst, d));
            if x == t {
                continue;
            }
            for (v, ports) in h.dim_ports(at, d) {
                let minimal = v == t;
                if minimal || budget {
                    for port in ports.filter(|&p| self.net.alive(at, p)) {
                        f(port, if minimal { 0 } else { DEROUTE_PENALTY });
                    }
                }
            }
        }
    }

    /// [`Omnidimensional::hops`] on the VCs `vcs` as classes of ports (minimal hops, deroutes), on
    /// a fault-free HyperX of at most 64 ports (`false` elsewhere).
    pub fn hyperx_classes(
        &self,
        at: SwitchId,
        st: &RouteState,
        out: &mut Vec<PortClass>,
        vcs: std::ops::Range<u8>,
    ) -> bool {
        if self.net.fault_free_hyperx().is_none() {
            return false;
        }
        let h = &self.hx;
        let budget = st.deroutes < self.max_deroutes;
        let mut by = [0u64; 2];
        for d in 0..h.dims() {
            let (x, t) = (h.coord(at, d), h.coord(st.dst, d));
            if x == t {
                continue;
            }
            // With both special coordinates `t`: [others, -, -, the minimal hop's trunks].
            let Some(m) = h.coordinate_class_masks(at, d, t, t) else { return false };
            by[0] |= m[3];
            if budget {
                by[1] |= m[0];
            }
        }
        push_classes(out, &by, |i| if i == 0 { 0 } else { DEROUTE_PENALTY }, vcs, false);
        true
    }

    /// Whether leaving `at` through `port` is a deroute for a packet to `dst`.
    #[inline]
    pub fn is_deroute(&self, at: SwitchId, port: PortId, dst: SwitchId) -> bool {
        let h = &self.hx;
        let (d, v, _) = h.port_target(at, port);
        v != h.coord(dst, d)
    }

    /// State update for a routing hop through `port`.
    #[inline]
    pub fn advance(&self, st: &mut RouteState, at: SwitchId, port: PortId) {
        if self.is_deroute(at, port, st.dst) {
            st.deroutes += 1;
        }
    }

    /// What [`Omnidimensional::hops`] and [`Omnidimensional::advance`] read of `st`, with `hops`
    /// ([`Routing::analysis_state`]): the destination and the deroutes taken.
    pub fn analysis_state(&self, st: &RouteState) -> RouteState {
        RouteState { dst: st.dst, hops: st.hops, deroutes: st.deroutes, ..Default::default() }
    }
}

/// OmniWAR: Omnidimensional routes with the ladder (or another `routing.vc_policy`).
pub struct OmniWar {
    routes: Omnidimensional,
    net: Arc<Fabric>,
    policy: VcPolicy,
}

impl OmniWar {
    /// OmniWAR over `net` (a HyperX).
    pub fn new(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let routes = Omnidimensional::new(params, net.clone())?;
        let n = hyperx(&net)?.dims();
        let hops = routes.max_hops();
        let why = format!("Omnidimensional routes are up to n + m = {n} + {} = {hops} hops", routes.max_deroutes);
        let policy = VcPolicy::from_params(params, 2 * n, hops, &why)?;
        Ok(OmniWar { routes, net, policy })
    }
}

impl Routing for OmniWar {
    fn name(&self) -> &'static str {
        "omniwar"
    }
    fn vcs(&self) -> usize {
        self.policy.vcs()
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        self.routes.hops(at, st, |port, penalty| {
            for vc in self.policy.vcs_for(&self.net, at, st, port) {
                out.push(Candidate { port, vc, penalty, escape: false });
            }
        });
    }
    fn candidate_runs(&self, at: SwitchId, st: &RouteState, out: &mut Vec<CandidateRun>) -> bool {
        self.routes.hops(at, st, |port, penalty| {
            push_run(out, port, self.policy.vcs_for(&self.net, at, st, port), penalty, false);
        });
        true
    }
    fn cache_candidates(&self) -> bool {
        true
    }
    fn advance(&self, st: &mut RouteState, at: SwitchId, _next: SwitchId, c: &Candidate) {
        self.routes.advance(st, at, c.port);
    }
    fn analysis_state(&self, st: &RouteState) -> RouteState {
        self.policy.analysis_state(st, self.routes.analysis_state(st))
    }
}
