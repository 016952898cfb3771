//! Deter, the deterministic HyperZ routing of Adda 2023, section 5.1 ("deterministic routing based on
//! DRR"; section 4.1 and Table 1 for the move types). DRR is defined in the paper's ref. \[21\], which is
//! not available, so (SPEC §5.2 Deter) D-mod-K stands in for it:
//! 1. while the LCL is not reached, Up on the single up port
//!    `floor(dst / prod_{j<=i} w_j g_j) mod (w_{i+1} g_{i+1})` ([`dmodk_up`]);
//! 2. else the ODim side hops at level `L*` (any parallel link, as ODim: at `h = 1` Deter and ODim
//!    coincide, SPEC §5.2);
//! 3. else Down, on the parallel link D-mod-K assigns ([`dmodk_down`]).
//!
//! `dst` is the destination's level-1 switch (global processor id divided by `z_1`): routing knows
//! the destination switch, not the processor, so D-mod-K spreads destinations leaf by leaf rather
//! than processor by processor. Minimal and deadlock free on one VC (SPEC §5.3). [`super::dmodk`]
//! is the same rule keyed by the destination server ([`RouteState::dst_port`]), as Zahavi's
//! D-mod-K is: keyed by the leaf, every packet for one leaf meets at one root, which on a k-ary
//! tree caps a server at `1/(k-1)` of a link.
//!
//! **With faults**: the D-mod-K port where its link is alive and a route can be completed from it;
//! where not, the packet takes any of the feasible moves of [`super::hyperz_faults`] (the router
//! picks by queue), so Deter becomes adaptive exactly where faults force it off its port. OpenSM's
//! ftree routing instead reassigns one port per destination when it computes its tables; a routing
//! without tables offers the feasible ones.

use super::hyperz_moves::{self, dmodk_down, dmodk_up, Here, Move, Rule};
use super::{RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::topology::{Fabric, HyperZ};
use std::sync::Arc;

/// Deter's per-hop rule: D-mod-K's key is the destination's level-1 switch (SPEC §5.2), or with
/// `by_server` its server ([`super::dmodk`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Deter {
    /// Key D-mod-K by the destination server (its switch's first server plus
    /// [`RouteState::dst_port`]) instead of its switch.
    pub by_server: bool,
}

impl Deter {
    /// The number D-mod-K divides and reduces for a packet in state `st` at `here`.
    #[inline]
    fn key(&self, here: &Here, st: &RouteState) -> u32 {
        if self.by_server {
            here.dst_server + st.dst_port as u32
        } else {
            st.dst
        }
    }
}

impl Rule for Deter {
    const ACYCLIC: bool = true;
    #[inline]
    fn moves(&self, hz: &HyperZ, here: &Here, st: &RouteState, out: &mut Vec<Move>) {
        if here.up_phase {
            out.extend(dmodk_up(hz, here, self.key(here, st)).map(|port| Move { port, penalty: 0 }));
        } else if let Some(k) = here.odim {
            here.side(hz, k, 0, out);
        } else {
            out.extend(dmodk_down(hz, here, self.key(here, st)).map(|port| Move { port, penalty: 0 }));
        }
    }
}

/// `routing.algorithm = "deter"` over `net` (a HyperZ or fat tree, with or without faults).
pub fn build(params: &RoutingParams, net: Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError> {
    hyperz_moves::build(params, net, "deter", Deter::default(), 2)
}
