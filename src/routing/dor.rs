//! Dimension-order routing (DOR) on HyperX: correct the lowest unaligned dimension first, in one hop
//! (every row of a HyperX is a complete graph, Ahn et al. section 3). With trunking, the `K_d`
//! parallel links are all candidates, chosen by occupancy. VCs: `routing.vc_policy` (default: the
//! ladder of SurePath Table 4 over `n` steps, so with the default 2n VCs two per step); DOR is
//! deadlock-free even on one VC, the ladder only spreads load over the VCs the router has.
//!
//! DOR gives one route per pair, so it cannot avoid failed links: on a faulty network a packet whose
//! dimension-order hop is dead is reported as unroutable.

use super::vc::VcPolicy;
use super::{Candidate, RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::topology::{Fabric, HyperX, SwitchId, View};
use std::sync::Arc;

/// Dimension-order routing.
pub struct Dor {
    net: Arc<Fabric>,
    hx: HyperX,
    policy: VcPolicy,
}

impl Dor {
    /// DOR over `net`, which must be a HyperX.
    pub fn new(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let hx = hyperx(&net)?.clone();
        let n = hx.dims();
        let policy = VcPolicy::from_params(params, 2 * n, n, &format!("DOR routes are up to n = {n} hops"))?;
        Ok(Dor { net, hx, policy })
    }
}

/// The HyperX under `net`, or a config error naming the routing that needs it.
pub fn hyperx(net: &Fabric) -> Result<&HyperX, ConfigError> {
    match net.topology().view() {
        View::HyperX(h) => Ok(h),
        _ => Err(ConfigError::value(
            "routing.algorithm",
            format!("a HyperX-only routing on {}", net.topology().name()),
            "topology.kind = \"hyperx\": the routing runs on a HyperX only (config validation names the routings \
             of each family, from routing::REGISTRY)",
        )),
    }
}

impl Routing for Dor {
    fn name(&self) -> &'static str {
        "dor"
    }
    fn vcs(&self) -> usize {
        self.policy.vcs()
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        self.hx.for_each_dor_port(at, st.dst, |port| {
            if self.net.alive(at, port) {
                for vc in self.policy.vcs_for(&self.net, at, st, port) {
                    out.push(Candidate { port, vc, penalty: 0, escape: false });
                }
            }
        });
    }
}
