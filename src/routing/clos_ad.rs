//! Clos-AD (Kim, Dally and Abts, ISCA 2007, as the HyperX paper describes it: Ahn et al., SC09,
//! section 3.3): "chooses, at a packet's source node, between dimension ordered minimal routing and
//! non-minimal routing, based on estimates of queuing delay. If it chooses to route non-minimally,
//! Clos-AD routes to a randomly chosen lowest common ancestor switch, considering the network as a
//! transformed folded Clos network. The packet therefore takes dimension ordered minimal paths from
//! source to intermediate and from intermediate to destination nodes. The decision is made at the
//! source node, and no packet can be derouted (take a non-minimal route) twice."
//!
//! **The folded Clos under the HyperX.** A HyperX is a flattened butterfly: each dimension is one
//! level of a folded Clos, the switch's own servers the level below them all. The paper does not
//! say which dimension is which level; it does say that Swap2's two offset dimensions "correspond to
//! the top two levels of the folded Clos that underlies Clos-AD" (section 4.1), and Swap2 offsets
//! dimensions 0 and 1 here ([`crate::traffic::PatternKind::Swap2`]), so dimension 0 is the top level,
//! dimension 1 the next, and dimension `n - 1` the level just above the switches. Two switches are
//! then in the same subtree below the level of dimension `d` when they agree in dimensions `0..d`,
//! and the lowest common ancestors of source and destination are the switches that agree with them
//! in the dimensions before their first offset dimension `d0` and take any value in `d0..n` (the
//! folded Clos's `(R/2)^m` ancestors, section 2.1.1). The source draws one uniformly: with `d0 = 0`
//! that is Valiant's random switch; with `d0 > 0` it may lie off the destination in dimensions
//! where source and destination are aligned, the "dimensional asymmetry" the paper criticises.
//!
//! **The source decision** is made at the first hop: the candidates are the DOR hop towards the
//! destination (penalty 0) and the DOR hop towards the drawn ancestor (penalty
//! `(H_nm - H_min) * packet.size_phits`), and the router takes the lowest `Q + P` (module
//! [`super`]). So a route's estimated delay is the queue at its first output plus one packet time
//! for every hop it adds, which, as the paper says of its own estimate, "tends to underestimate the
//! cost of the non-minimal path" (it ignores the queues of the later hops). [`Routing::advance`]
//! records the choice; after the first hop the route is fixed: DOR to the ancestor, then DOR to the
//! destination, with no second deroute. An ancestor equal to the source or the destination makes
//! both routes the same, and the packet routes minimally.
//!
//! **VCs** (section 4.1: "6 virtual channels per port: each port has 3 sets of 2 VCs"): set `k` is
//! VCs `2k` (the hops towards the ancestor) and `2k + 1` (the hops towards the destination, of both
//! routes), `routing.vcs / 2` sets (default `2n`, the paper's 6 on its 3-D network); every set is a
//! candidate and the router picks by occupancy. Deadlock freedom: along the even VCs and along the
//! odd VCs a packet crosses dimensions in increasing order (DOR), and it moves from even to odd VCs
//! only, so every dependency chain of the channel dependency graph visits a dimension at most once
//! per parity and the graph is acyclic. DOR cannot avoid failed links: Clos-AD is for fault-free
//! networks (on a faulty one a packet whose DOR hop is dead is unroutable).

use super::dor::hyperx;
use super::{Candidate, RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::rng::{below, Rng};
use crate::topology::{Fabric, HyperX, SwitchId};
use std::sync::Arc;

/// Clos-AD routing.
pub struct ClosAd {
    net: Arc<Fabric>,
    hx: HyperX,
    sets: u8,
    /// Estimated delay of one extra hop, in phits (one packet).
    hop_penalty: u32,
}

impl ClosAd {
    /// Clos-AD over `net` (a HyperX).
    pub fn new(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let hx = hyperx(&net)?.clone();
        if params.vc_policy != "ladder" {
            return Err(ConfigError::value(
                "routing.vc_policy",
                format!("\"{}\"", params.vc_policy),
                "clos-ad assigns VCs itself (sets of one VC towards the ancestor and one towards the destination); \
                 leave routing.vc_policy at its default, \"ladder\"",
            ));
        }
        let vcs = params.vcs_or(2 * hx.dims());
        if vcs < 2 || !vcs.is_multiple_of(2) {
            return Err(ConfigError::value(
                "routing.vcs",
                vcs,
                "an even number, at least 2: clos-ad uses sets of one VC towards the ancestor and one towards the \
                 destination",
            ));
        }
        Ok(ClosAd { net, hx, sets: (vcs / 2) as u8, hop_penalty: params.packet_phits })
    }

    /// The dimensions in which the ancestors of `src` and `dst` are free: `d0..n`, `d0` the first
    /// offset dimension (`n` when the two are the same switch).
    fn first_offset(&self, src: SwitchId, dst: SwitchId) -> usize {
        let h = &self.hx;
        (0..h.dims()).find(|&d| h.coord(src, d) != h.coord(dst, d)).unwrap_or(h.dims())
    }

    /// State for the drawn ancestor `anc`: phase 0 (towards it) unless it is an end of the route.
    fn with_ancestor(st: &RouteState, anc: SwitchId) -> RouteState {
        let minimal = anc == st.src || anc == st.dst;
        RouteState { intermediate: if minimal { st.dst } else { anc }, phase: minimal as u8, ..*st }
    }

    /// DOR hops from `at` towards `to` on the VC of `parity` in every set.
    fn push_dor(&self, at: SwitchId, to: SwitchId, parity: u8, penalty: u32, out: &mut Vec<Candidate>) {
        self.hx.for_each_dor_port(at, to, |port| {
            if self.net.alive(at, port) {
                for s in 0..self.sets {
                    out.push(Candidate { port, vc: 2 * s + parity, penalty, escape: false });
                }
            }
        });
    }
}

impl Routing for ClosAd {
    fn name(&self) -> &'static str {
        "clos-ad"
    }
    fn vcs(&self) -> usize {
        2 * self.sets as usize
    }
    fn init(&self, st: &mut RouteState, rng: &mut Rng) {
        let h = &self.hx;
        let mut anc = st.src;
        for d in self.first_offset(st.src, st.dst)..h.dims() {
            anc = h.with_coord(anc, d, below(rng, h.side(d) as u64) as usize);
        }
        *st = Self::with_ancestor(st, anc);
    }
    fn init_choices(&self, st: &RouteState, f: &mut dyn FnMut(RouteState)) {
        let h = &self.hx;
        let d0 = self.first_offset(st.src, st.dst);
        let free: usize = (d0..h.dims()).map(|d| h.side(d)).product();
        for mut i in 0..free {
            let mut anc = st.src;
            for d in d0..h.dims() {
                anc = h.with_coord(anc, d, i % h.side(d));
                i /= h.side(d);
            }
            f(Self::with_ancestor(st, anc));
        }
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        if st.phase == 1 {
            self.push_dor(at, st.dst, 1, 0, out);
            return;
        }
        if st.hops == 0 {
            // The source decision: minimal against the route through the ancestor.
            let h = &self.hx;
            let extra = h.hamming(at, st.intermediate) + h.hamming(st.intermediate, st.dst) - h.hamming(at, st.dst);
            self.push_dor(at, st.dst, 1, 0, out);
            self.push_dor(at, st.intermediate, 0, extra * self.hop_penalty, out);
        } else {
            self.push_dor(at, st.intermediate, 0, 0, out);
        }
    }
    fn advance(&self, st: &mut RouteState, _at: SwitchId, next: SwitchId, c: &Candidate) {
        if st.phase == 0 && (c.vc % 2 == 1 || next == st.intermediate) {
            // Minimal chosen at the source, or the ancestor reached: DOR to the destination.
            st.phase = 1;
            st.intermediate = st.dst;
        }
    }
}
