//! Dimension-order routing (DOR) on HyperX: correct the lowest unaligned dimension first, in one hop
//! (every row of a HyperX is a complete graph, Ahn et al. section 3). With trunking, the `K_d`
//! parallel links are all candidates, chosen by occupancy. VCs: `routing.vc_policy` (default: the
//! ladder of SurePath Table 4 over `n` steps, so with the default 2n VCs two per step); DOR is
//! deadlock-free even on one VC, the ladder only spreads load over the VCs the router has.
//!
//! DOR gives one route per pair, so it cannot avoid failed links: on a faulty network a packet whose
//! dimension-order hop is dead is reported as unroutable.

use super::vc::VcPolicy;
use super::{Candidate, RouteState, Routing};
use crate::config::{Config, ConfigError};
use crate::topology::{HyperX, Network, SwitchId};
use std::sync::Arc;

/// Dimension-order routing.
pub struct Dor {
    net: Arc<Network>,
    policy: VcPolicy,
}

impl Dor {
    /// DOR over `net`, which must be a HyperX.
    pub fn new(cfg: &Config, net: Arc<Network>) -> Result<Self, ConfigError> {
        let n = hyperx(&net)?.dims();
        let policy = VcPolicy::from_config(cfg, 2 * n, n, &format!("DOR routes are up to n = {n} hops"))?;
        Ok(Dor { net, policy })
    }
}

/// The HyperX under `net`, or a config error naming the routing that needs it.
pub fn hyperx(net: &Network) -> Result<&HyperX, ConfigError> {
    net.topology().as_hyperx().ok_or_else(|| {
        ConfigError::value("routing.algorithm", "a dimension-aware routing", "needs topology.kind = \"hyperx\"")
    })
}

impl Routing for Dor {
    fn name(&self) -> &'static str {
        "dor"
    }
    fn vcs(&self) -> usize {
        self.policy.vcs()
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        let h = self.net.topology().as_hyperx().expect("checked in new");
        h.for_each_dor_port(at, st.dst, |port| {
            if self.net.alive(at, port) {
                for vc in self.policy.vcs_for(&self.net, at, st, port) {
                    out.push(Candidate { port, vc, penalty: 0, escape: false });
                }
            }
        });
    }
}
