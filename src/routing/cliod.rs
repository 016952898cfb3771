//! CLIOD, "Common Level Idle Offset Dimension" routing on HyperZ (Adda 2023, section 4.1 and Table 1:
//! it "reaches the LCL first in the source Z-node adaptively, and then searches for idle offset
//! dimensions or use ordered dimension routing and then routes down within the destination Z-node";
//! SPEC §5.2 CLIOD):
//! 1. while the LCL is not reached, Up on any up port (the router's shortest queue);
//! 2. else, while the Z-nodes differ, an idle Side(k), `k` any offset dimension, else the ODim side:
//!    the ODim side at penalty 0, the others at a packet less one phit
//!    ([`super::hyperz_moves::idle_only_penalty`]), so an idle one beats a busy ODim port and a busy
//!    one wins only on a queue a whole packet shorter (the paper: never); when both are idle the
//!    ODim side wins (the paper: random);
//! 3. else Down.
//!
//! Side hops happen only at level `L*`; at `h = 1` this is the minimal part of HyperX DAL and equals
//! ALIOD. Minimal. With one VC its channel dependency graph is cyclic (SPEC §5.3), so it runs on VC
//! scheme A by default (VC 0: the ODim escape, VC 1: adaptive) or scheme B (`vc_policy = "hyperz-b"`).
//!
//! **With faults**: the moves above where alive and completable, else the detours of
//! [`super::hyperz_faults`] (section 5.4's up-then-down rerouting to a level with a working side
//! link, then a DAL deroute), on scheme B. Its side hops then leave `L*` only where faults force it.

use super::hyperz_moves::{self, idle_only_penalty, Here, Move, Rule};
use super::{RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::topology::{Fabric, HyperZ};
use std::sync::Arc;

/// CLIOD's per-hop rule.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cliod {
    /// Penalty of a non-ODim side hop ([`idle_only_penalty`]).
    pub idle_only: u32,
}

impl Rule for Cliod {
    const ACYCLIC: bool = false;
    #[inline]
    fn moves(&self, hz: &HyperZ, here: &Here, _st: &RouteState, out: &mut Vec<Move>) {
        if here.up_phase {
            here.up(hz, 0, out);
        } else if here.odim.is_some() {
            here.idle_sides_else_odim(hz, self.idle_only, out);
        } else {
            here.down(hz, 0, out);
        }
    }
}

/// `routing.algorithm = "cliod"` over `net` (a HyperZ or fat tree, with or without faults).
pub fn build(params: &RoutingParams, net: Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError> {
    hyperz_moves::build(params, net, "cliod", Cliod { idle_only: idle_only_penalty(params) }, 2)
}
