//! Minimal adaptive routing (Min-AD; SurePath section 4, Table 4 "Minimal"): every port that brings
//! the packet one hop closer to its destination is a candidate, and the router picks the least
//! occupied. On a faulty network "closer" is measured with BFS distances over the live links.
//!
//! VCs: the ladder with two VCs per step on 2n VCs (SurePath Table 4: "2 VCs for each step"); on a
//! faulty network routes are as long as the faulty diameter, and the ladder is sized for that.

use super::vc::Ladder;
use super::{configured_vcs, minimal_ports, network_diameter, Candidate, RouteState, Routing};
use crate::config::{Config, ConfigError};
use crate::topology::{Network, SwitchId};
use std::sync::Arc;

/// Minimal adaptive routing.
pub struct Minimal {
    net: Arc<Network>,
    ladder: Ladder,
}

impl Minimal {
    /// Minimal routing over `net`.
    pub fn new(cfg: &Config, net: Arc<Network>) -> Result<Self, ConfigError> {
        let diam = network_diameter(&net) as usize;
        let vcs = configured_vcs(cfg, 2 * net.topology().diameter() as usize);
        let ladder = Ladder::new(vcs, diam, &format!("minimal routes are up to the diameter, {diam} hops"))?;
        Ok(Minimal { net, ladder })
    }
}

impl Routing for Minimal {
    fn name(&self) -> &'static str {
        "minimal"
    }
    fn vcs(&self) -> usize {
        self.ladder.used_vcs()
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        let vcs = self.ladder.vcs_for_hop(st.hops);
        minimal_ports(&self.net, at, st.dst, |port| {
            let mut vc = vcs.start;
            while vc < vcs.end {
                out.push(Candidate { port, vc, penalty: 0, escape: false });
                vc += 1;
            }
        });
    }
}
