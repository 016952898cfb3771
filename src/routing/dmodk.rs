//! D-mod-K on fat trees (Zahavi, "D-Mod-K Routing Providing Non-Blocking Traffic for Shift
//! Permutations on Real Life Fat Trees", 2010; the stand-in for DRR of SPEC §5.2):
//! rise on the single up port `floor(d / prod_{j<=i} w_j g_j) mod (w_{i+1} g_{i+1})` at level `i`
//! until the switch's zone holds the destination, then go down the unique path, on the parallel link
//! whose index a rising packet for the same destination uses. Fully deterministic: one route per
//! pair, all routes to one destination server form a tree. `d` is the destination *server* (its
//! switch's first server plus [`super::RouteState::dst_port`]), as in Zahavi's rule: on a k-ary
//! n-tree the `k` servers of a leaf then climb through `k` different ports, so the traffic for one
//! leaf spreads over `k` roots. (Keyed by the leaf switch, as [`super::deter`] is on a HyperZ, every
//! packet for a leaf met at one root, whose down link towards the leaf's group capped a server at
//! `1/(k-1)` of a link: 0.26 accepted at 0.5 on a 4-ary 3-tree, 0.0102 on a 100-ary one.)
//!
//! This is Deter's rule ([`super::deter`]; Adda 2023, section 4.1, Table 1; SPEC §5.2) without offset
//! dimensions; on a HyperZ with dimensions `dmodk` is Deter (ODim side hops at the LCL). Deadlock free
//! on one VC (up*/down*); default one VC, every VC usable on every hop.
//!
//! `hxsim check-deadlock` follows the routes to each destination switch's first server
//! (`dst_port = 0`); every server's routes are up*/down* alike.
//!
//! **With faults**: the D-mod-K port where its link is alive and some switch above it has a live
//! down path to the destination, else any such port (see [`super::deter`] and
//! [`super::hyperz_faults`]); routes stay up*/down*, deadlock free on one VC.

use super::deter::Deter;
use super::{hyperz_moves, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::topology::Fabric;
use std::sync::Arc;

/// `routing.algorithm = "dmodk"` over `net` (a fat tree or HyperZ, with or without faults).
pub fn build(params: &RoutingParams, net: Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError> {
    hyperz_moves::build(params, net, "dmodk", Deter { by_server: true }, 1)
}
