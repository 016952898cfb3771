//! DAL, Dimensionally-Adaptive Load-balanced routing (Ahn et al., "HyperX: Topology, Routing, and
//! Packaging of Efficient Large-Scale Networks", SC09, section 3.3; evaluation set-up in 4.1).
//!
//! The paper's rules, at every switch a packet visits:
//! 1. on creation all offset dimensions are deroutable (unmarked);
//! 2. take an offset dimension with an unblocked path to the switch aligned with the destination in
//!    that dimension (a minimal hop); if there is none,
//! 3. take an unmarked offset dimension and an unblocked switch in it that is still offset from the
//!    destination (a deroute), and mark that dimension; else
//! 4. push the packet into a minimal, dimension-order, deterministic routed VC (the escape).
//!
//! So a packet deroutes at most once per dimension, only in offset dimensions (an aligned dimension
//! stays aligned), and routes have at most `2n` hops. Here the three steps are candidates with
//! penalties large enough to make the order strict, as the paper's sequential allocation does:
//! minimal hops 0, deroutes [`DEROUTE_PENALTY`], the escape hop [`ESCAPE_PENALTY`]; "unblocked"
//! is the router's "the output VC has room". A packet that took the escape stays in it (DOR to the
//! destination), as "pushed into a ... deterministic routed VC" says.
//!
//! VCs (section 4.1): "3 sets of 2 VCs; one VC in each set is reserved for deadlock avoidance".
//! Set `k` is VCs `2k` (adaptive) and `2k + 1` (escape), `vcs / 2` sets (default `vcs = 2n`, the
//! paper's 6 on its 3-D network). The paper does not say how a packet picks a set; here every set is
//! a candidate and the router picks by occupancy. Deadlock freedom is Duato's: the escape VCs run
//! DOR, whose channels only depend on channels of higher dimensions (a DOR hop in dimension `d`
//! leaves dimensions `<= d` aligned, and no DAL hop unaligns them), and every state offers its DOR
//! hop.
//!
//! **Faulty networks** (section 6: "a packet can only be blocked by a single failed link when there
//! is only one remaining offset dimension, and the deroute has already been taken in that
//! dimension. A simple solution is to permit a further deroute ... In order to avoid selecting a
//! nonminimal route that would lead to a failed link, the same technique of filters on random
//! routes ... can be applied"). Here:
//! - *filtered deroutes*: a deroute in dimension `d` to `w` is offered only if the link from `w` to
//!   the destination's coordinate is alive (on a fault-free network every deroute passes);
//! - *further deroutes*: in an offset dimension whose minimal link is dead, a (filtered) deroute is
//!   offered even if the dimension is marked; these are counted in `RouteState::deroutes` and
//!   limited to `n` per packet, so routes stay finite (at most `3n` hops) whatever the faults;
//! - *the escape* is DOR with detours: where the DOR link is dead, the escape goes through the
//!   lowest `w` of the same row with both links alive (`x -> w -> t` in dimension `d`, leaving the
//!   lower dimensions aligned). To keep the escape acyclic, a detour's first hop uses the escape VC
//!   of set 0 and direct DOR hops use the escape VCs of sets `1..`: escape channels are then ordered
//!   by (dimension, detour before direct), and every dependency goes up that order (a detour's first
//!   hop is followed by the direct hop `w -> t`, a direct hop by hops in higher dimensions). This
//!   needs two sets (`routing.vcs >= 4`) and a detour for every failed link, both checked at
//!   construction; `hxsim check-deadlock` verifies Duato's condition on the actual network.
//!
//! **Failed switches** are refused on HyperX with two or more dimensions, because DAL's escape
//! cannot pass them: section 6 treats failed links only ("the dominant failure mechanism will remain
//! individual links rather than switches"), and rule 4's escape is dimension-order routing. A DOR
//! route corrects dimension `d` by moving within a row to the switch `Y` whose coordinate `d` is the
//! destination's, and `Y` is the only switch of that row with that coordinate: when it has failed,
//! no hop in that row (direct or through a detour `w`) reaches it, and correcting another dimension
//! first would break the dimension order that makes the escape acyclic. Every switch `Y` of an
//! `n >= 2`-dimensional HyperX lies on such routes between live switches (from `Y` with coordinate
//! 0 changed, to any switch that agrees with `Y` in dimension 0 and differs in dimension 1), so any
//! failed switch leaves some pair without an escape. On one dimension a DOR route has no
//! intermediate switch, and failed switches only take their own links down.

use super::dor::hyperx;
use super::{push_candidate, Candidate, CandidateRun, RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::topology::{Fabric, HyperX, SwitchId};
use std::sync::Arc;

/// Penalty of a deroute: far above any `Q` (with Table 2 buffers `Q` stays below 2^11 phits), so a
/// minimal hop with room always wins (rule 2 before rule 3).
pub const DEROUTE_PENALTY: u32 = 1 << 20;
/// Penalty of the escape hop: above every deroute (rule 3 before rule 4).
pub const ESCAPE_PENALTY: u32 = 1 << 24;

/// DAL routing.
pub struct Dal {
    net: Arc<Fabric>,
    hx: HyperX,
    sets: u8,
    /// Sets whose escape VC carries direct DOR hops: all of them without faults, `1..` with faults
    /// (set 0's escape VC carries detours).
    direct_sets: std::ops::Range<u8>,
}

impl Dal {
    /// DAL over `net` (a HyperX).
    pub fn new(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let hx = hyperx(&net)?.clone();
        let n = hx.dims();
        if net.failed_switches() > 0 && n >= 2 {
            return Err(ConfigError::value(
                "faults",
                fault_keys(params, &net),
                format!(
                    "failed links only for dal ({} switches failed here): its escape is dimension-order routing \
                     (HyperX paper section 3.3, rule 4), which must pass through the one switch of a row that \
                     has the destination's coordinate, so a failed switch cuts the escape of some pairs; section \
                     6 covers failed links only; use surepath-polarized or surepath-omni with failed switches",
                    net.failed_switches()
                ),
            ));
        }
        if n > 16 {
            return Err(ConfigError::value("topology.sides", format!("{n} dimensions"), "at most 16 for DAL"));
        }
        if params.vc_policy != "ladder" {
            return Err(ConfigError::value(
                "routing.vc_policy",
                format!("\"{}\"", params.vc_policy),
                "dal assigns VCs itself (sets of one adaptive and one escape VC); leave routing.vc_policy at its default, \"ladder\"",
            ));
        }
        let vcs = params.vcs_or(2 * n);
        if vcs < 2 || !vcs.is_multiple_of(2) {
            return Err(ConfigError::value(
                "routing.vcs",
                vcs,
                "an even number, at least 2: dal uses sets of one adaptive and one escape VC",
            ));
        }
        let sets = (vcs / 2) as u8;
        let mut dal = Dal { net, hx, sets, direct_sets: 0..sets };
        if dal.net.is_faulty() {
            if sets < 2 {
                return Err(ConfigError::value(
                    "routing.vcs",
                    vcs,
                    "at least 4 on a faulty network: dal's escape takes detours around failed links on the \
                     escape VC of set 0 and direct hops on the other sets",
                ));
            }
            dal.direct_sets = 1..sets;
            dal.check_detours(&fault_keys(params, &dal.net))?;
        }
        Ok(dal)
    }

    /// Whether some trunk from `x` to coordinate `v` of dimension `d` is alive.
    #[inline]
    fn linked(&self, x: SwitchId, d: usize, v: usize) -> bool {
        (0..self.hx.trunk(d)).any(|k| self.net.alive(x, self.hx.port_to(x, d, v, k)))
    }

    /// The escape's detour from `x` to coordinate `t` of dimension `d` when their link is dead: the
    /// lowest `w` of the row linked to both.
    #[inline]
    fn detour(&self, x: SwitchId, d: usize, t: usize) -> Option<usize> {
        let h = &self.hx;
        let xd = h.coord(x, d);
        (0..h.side(d)).find(|&w| w != xd && w != t && self.linked(x, d, w) && self.linked(h.with_coord(x, d, w), d, t))
    }

    /// Every failed link between live switches has a detour in its row (else the escape is not
    /// connected). `faults` names the fault keys in the error.
    fn check_detours(&self, faults: &str) -> Result<(), ConfigError> {
        let h = &self.hx;
        let net = &*self.net;
        for x in (0..net.num_switches() as SwitchId).filter(|&x| net.switch_alive(x)) {
            for d in 0..h.dims() {
                for t in 0..h.side(d) {
                    if t != h.coord(x, d)
                        && net.switch_alive(h.with_coord(x, d, t))
                        && !self.linked(x, d, t)
                        && self.detour(x, d, t).is_none()
                    {
                        return Err(ConfigError::value(
                            "faults",
                            faults,
                            format!(
                                "failed links dal's escape can detour around, each leaving a third switch of its \
                                 row linked to both ends (switch {x} reaches coordinate {t} of dimension {d} \
                                 neither directly nor through its row, {} links failed); use fewer failed links, \
                                 another faults.seed (its default is the run's seed), or surepath-polarized",
                                net.failed_links()
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn push_dor(&self, at: SwitchId, st: &RouteState, out: &mut impl FnMut(Candidate)) {
        let h = &self.hx;
        let Some(d) = (0..h.dims()).find(|&d| h.coord(at, d) != h.coord(st.dst, d)) else { return };
        let t = h.coord(st.dst, d);
        if !self.net.is_faulty() || self.linked(at, d, t) {
            for k in 0..h.trunk(d) {
                let port = h.port_to(at, d, t, k);
                if self.net.alive(at, port) {
                    for s in self.direct_sets.clone() {
                        out(Candidate { port, vc: 2 * s + 1, penalty: ESCAPE_PENALTY, escape: true });
                    }
                }
            }
        } else if let Some(w) = self.detour(at, d, t) {
            for k in 0..h.trunk(d) {
                let port = h.port_to(at, d, w, k);
                if self.net.alive(at, port) {
                    out(Candidate { port, vc: 1, penalty: ESCAPE_PENALTY, escape: true });
                }
            }
        }
    }
}

impl Routing for Dal {
    fn name(&self) -> &'static str {
        "dal"
    }
    fn vcs(&self) -> usize {
        2 * self.sets as usize
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        self.each_candidate(at, st, &mut |c| out.push(c));
    }
    /// The candidates as runs: DAL's adaptive VCs are every other VC, so most runs are one VC.
    fn candidate_runs(&self, at: SwitchId, st: &RouteState, out: &mut Vec<CandidateRun>) -> bool {
        self.each_candidate(at, st, &mut |c| push_candidate(out, c));
        true
    }
    /// A waiting head's candidates (up to `2n (k - 1)` ports per set) are kept by the router
    /// rather than derived again every cycle it waits.
    fn cache_candidates(&self) -> bool {
        true
    }
    /// Its runs are one VC each (sets' adaptive VCs `2k`, escape VCs `2k + 1`), which the router's
    /// kept per-port costs (two VC ranges per port) do not fit: measured 25% slower with them.
    fn keep_costs(&self) -> bool {
        false
    }
    fn advance(&self, st: &mut RouteState, at: SwitchId, _next: SwitchId, c: &Candidate) {
        if !c.escape {
            let h = &self.hx;
            let (d, v, _) = h.port_target(at, c.port);
            if v != h.coord(st.dst, d) {
                if st.dim_mask & (1 << d) != 0 {
                    st.deroutes += 1;
                }
                st.dim_mask |= 1 << d;
            }
        }
    }
    fn escape_based(&self) -> bool {
        true
    }
    /// In the escape only the destination counts (dimension order); before, the deroutes and
    /// the derouted dimensions too.
    fn analysis_state(&self, st: &RouteState) -> RouteState {
        let mut k = RouteState { dst: st.dst, hops: st.hops, escape: st.escape, ..Default::default() };
        if !st.escape {
            (k.deroutes, k.dim_mask) = (st.deroutes, st.dim_mask);
        }
        k
    }
    fn escape_subfunction(&self, at: SwitchId, dst: SwitchId, out: &mut Vec<Candidate>) {
        let st = RouteState { dst, escape: true, ..Default::default() };
        self.push_dor(at, &st, &mut |c| out.push(c));
    }
}

impl Dal {
    /// The candidates of a packet in state `st` at `at`, in order: minimal hops, deroutes (section
    /// 3.3, rules 2 and 3, with section 6's filters and further deroutes), then the escape hop.
    fn each_candidate(&self, at: SwitchId, st: &RouteState, out: &mut impl FnMut(Candidate)) {
        if !st.escape {
            let h = &self.hx;
            let faulty = self.net.is_faulty();
            for d in 0..h.dims() {
                let (x, t) = (h.coord(at, d), h.coord(st.dst, d));
                if x == t {
                    continue;
                }
                // Section 6: a further deroute where the minimal link is dead, within the budget.
                let further = faulty && st.deroutes < h.dims() as u8 && !self.linked(at, d, t);
                let deroutable = st.dim_mask & (1 << d) == 0 || further;
                for v in 0..h.side(d) {
                    if v == x || (v != t && !deroutable) {
                        continue;
                    }
                    // Filter: no deroute to a switch whose link to the destination's coordinate is dead.
                    if v != t && faulty && !self.linked(h.with_coord(at, d, v), d, t) {
                        continue;
                    }
                    let penalty = if v == t { 0 } else { DEROUTE_PENALTY };
                    for k in 0..h.trunk(d) {
                        let port = h.port_to(at, d, v, k);
                        if self.net.alive(at, port) {
                            for s in 0..self.sets {
                                out(Candidate { port, vc: 2 * s, penalty, escape: false });
                            }
                        }
                    }
                }
            }
        }
        self.push_dor(at, st, out);
    }
}

/// The fault keys in force, for errors (the failed link count where the caller gave none).
fn fault_keys(params: &RoutingParams, net: &Fabric) -> String {
    if params.faults.is_empty() {
        format!("{} failed links, {} failed switches", net.failed_links(), net.failed_switches())
    } else {
        params.faults.clone()
    }
}
