//! Minimal adaptive routing (Min-AD; SurePath section 4, Table 4 "Minimal"): every port that brings
//! the packet one hop closer to its destination is a candidate, and the router picks the least
//! occupied. On a faulty network "closer" is measured with BFS distances over the live links.
//!
//! VCs: `routing.vc_policy`; by default the ladder with two VCs per step on 2n VCs (SurePath Table
//! 4: "2 VCs for each step"); on a faulty network routes are as long as the faulty diameter, and the
//! ladder (or DAVC's VC count) is sized for that.

use super::vc::VcPolicy;
use super::{network_diameter, Candidate, RouteState, Routing};
use crate::config::{Config, ConfigError};
use crate::topology::{Fabric, SwitchId};
use std::sync::Arc;

/// Minimal adaptive routing.
pub struct Minimal {
    net: Arc<Fabric>,
    policy: VcPolicy,
}

impl Minimal {
    /// Minimal routing over `net`.
    pub fn new(cfg: &Config, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let diam = network_diameter(&net) as usize;
        let default_vcs = 2 * net.topology().diameter() as usize;
        let policy = VcPolicy::from_config(
            cfg,
            default_vcs,
            diam,
            &format!("minimal routes are up to the diameter, {diam} hops"),
        )?;
        Ok(Minimal { net, policy })
    }
}

impl Routing for Minimal {
    fn name(&self) -> &'static str {
        "minimal"
    }
    fn vcs(&self) -> usize {
        self.policy.vcs()
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        self.policy.push_minimal(&self.net, at, st.dst, st, out);
    }
}
