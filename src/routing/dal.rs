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
//! hop. DOR cannot avoid failed links, so DAL is for fault-free networks: on a faulty one a packet
//! whose DOR hop is dead may find no escape, which `hxsim check-deadlock` reports.

use super::dor::hyperx;
use super::{configured_vcs, step, Candidate, RouteState, Routing};
use crate::config::{Config, ConfigError};
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
}

impl Dal {
    /// DAL over `net` (a HyperX).
    pub fn new(cfg: &Config, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let hx = hyperx(&net)?.clone();
        let n = hx.dims();
        if n > 16 {
            return Err(ConfigError::value("topology.sides", format!("{n} dimensions"), "at most 16 for DAL"));
        }
        if cfg.routing.vc_policy != "ladder" {
            return Err(ConfigError::value(
                "routing.vc_policy",
                format!("\"{}\"", cfg.routing.vc_policy),
                "dal assigns VCs itself (sets of one adaptive and one escape VC); leave routing.vc_policy at its default, \"ladder\"",
            ));
        }
        let vcs = configured_vcs(cfg, 2 * n);
        if vcs < 2 || !vcs.is_multiple_of(2) {
            return Err(ConfigError::value(
                "routing.vcs",
                vcs,
                "an even number, at least 2: dal uses sets of one adaptive and one escape VC",
            ));
        }
        Ok(Dal { net, hx, sets: (vcs / 2) as u8 })
    }

    fn push_dor(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        self.hx.for_each_dor_port(at, st.dst, |port| {
            if self.net.alive(at, port) {
                for s in 0..self.sets {
                    out.push(Candidate { port, vc: 2 * s + 1, penalty: ESCAPE_PENALTY, escape: true });
                }
            }
        });
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
        if !st.escape {
            let h = &self.hx;
            for d in 0..h.dims() {
                let (x, t) = (h.coord(at, d), h.coord(st.dst, d));
                if x == t {
                    continue;
                }
                let deroutable = st.dim_mask & (1 << d) == 0;
                for v in 0..h.side(d) {
                    if v == x || (v != t && !deroutable) {
                        continue;
                    }
                    let penalty = if v == t { 0 } else { DEROUTE_PENALTY };
                    for k in 0..h.trunk(d) {
                        let port = h.port_to(at, d, v, k);
                        if self.net.alive(at, port) {
                            for s in 0..self.sets {
                                out.push(Candidate { port, vc: 2 * s, penalty, escape: false });
                            }
                        }
                    }
                }
            }
        }
        self.push_dor(at, st, out);
    }
    fn advance(&self, st: &mut RouteState, at: SwitchId, _next: SwitchId, c: &Candidate) {
        if !c.escape {
            let h = &self.hx;
            let (d, v, _) = h.port_target(at, c.port);
            if v != h.coord(st.dst, d) {
                st.dim_mask |= 1 << d;
            }
        }
        step(st, c);
    }
    fn escape_based(&self) -> bool {
        true
    }
    fn escape_subfunction(&self, at: SwitchId, dst: SwitchId, out: &mut Vec<Candidate>) {
        let st = RouteState { dst, escape: true, ..Default::default() };
        self.push_dor(at, &st, out);
    }
}
