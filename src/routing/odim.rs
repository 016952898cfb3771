//! ODim, ordered-dimension routing on HyperZ (Adda 2023, section 4.1 and Table 1; section 5.2: "ODim
//! improves ... by using the adaptive up direction ... based on the tree routing"; SPEC §5.2 ODim):
//! 1. while the LCL is not reached (`up_phase`), Up on any up port, chosen by the router's queue term;
//! 2. else, while the Z-nodes differ, the ODim side: Side(min O), on any of its parallel links;
//! 3. else Down to the child holding the destination.
//!
//! All side hops are taken at level `L* = max(LCL, 1)`, in ascending dimension order. Minimal
//! (`2 L* + |O|` processor hops). Deadlock free on one VC (SPEC §5.3: up* then dimension-ordered side
//! hops then down*); every VC is usable on every hop, default 2 as for CLIOD and ALIOD (see
//! [`super::hyperz_moves`] for `routing.vc_policy`). On a fat tree (`d = 0`) it is NCA ([`super::nca`]).
//!
//! **With faults**: up ports whose zone has a live down path to the destination, the ODim side where
//! its link works and the route can be completed, else the detours of [`super::hyperz_faults`]
//! (another offset dimension, another level reached up then down, a DAL deroute). Dimension order
//! then no longer holds, so it runs on scheme B (VC = side hops taken), not on one VC.

use super::hyperz_moves::{self, odim_moves, Here, Move, Rule};
use super::{RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::topology::{Fabric, HyperZ};
use std::sync::Arc;

/// ODim's per-hop rule.
#[derive(Debug, Clone, Copy, Default)]
pub struct Odim;

impl Rule for Odim {
    const ACYCLIC: bool = true;
    #[inline]
    fn moves(&self, hz: &HyperZ, here: &Here, _st: &RouteState, out: &mut Vec<Move>) {
        odim_moves(hz, here, out);
    }
}

/// `routing.algorithm = "odim"` over `net` (a HyperZ or fat tree, with or without faults).
pub fn build(params: &RoutingParams, net: Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError> {
    hyperz_moves::build(params, net, "odim", Odim, 2)
}
