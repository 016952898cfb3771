//! NCA, nearest-common-ancestor up*/down* routing on fat trees (k-ary n-trees, Petrini and Vanneschi;
//! XGFT/PGFT, Öhring et al., Zahavi), `topology.kind = "fattree"` (a HyperZ without dimensions, SPEC
//! §2.1): rise while the switch's zone does not hold the destination, on any up port (all of them are
//! minimal: every parent is an ancestor-to-be; the router picks by queue), then go down the unique
//! path to the destination (adaptive only among its `g_i` parallel links).
//!
//! This is exactly ODim's rule ([`super::odim`]; Adda 2023, section 4.1, Table 1; SPEC §5.2) with no
//! offset dimension. On a HyperZ with dimensions `nca` is therefore ODim (up*, dimension-ordered side
//! hops at the LCL, down*), which is the natural extension and stays deadlock free on one VC; the
//! difference from `odim` is only the default VC count: one here (`routing.vcs` sets more; every VC
//! is usable on every hop, SPEC §5.3).
//!
//! **With faults** (the Nue paper's fail-in-place fat trees): a packet rises only through parents
//! from which some switch above has a live down path to the destination, and descends on the live
//! parallel links ([`super::hyperz_faults`]): the rule of OpenSM's ftree routing (routes "downgoing
//! by going up" from the destination over live links, then up ports towards switches that have
//! them; `osm_ucast_ftree.c`), made adaptive. Routes stay up*/down*, deadlock free on one VC; a
//! fault set that leaves two leaves without an up*/down* route is refused (exit 2).

use super::odim::Odim;
use super::{hyperz_moves, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::topology::Fabric;
use std::sync::Arc;

/// `routing.algorithm = "nca"` over `net` (a fat tree or HyperZ, with or without faults).
pub fn build(params: &RoutingParams, net: Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError> {
    hyperz_moves::build(params, net, "nca", Odim, 1)
}
