//! Valiant routing (Valiant & Brebner 1981; SurePath section 4 and Table 4; HyperX paper section
//! 3.3): the source switch draws an intermediate switch uniformly at random; the packet goes
//! minimally (adaptively among minimal ports) to it, then minimally to the destination. This
//! balances any admissible pattern at the cost of doubling the path, so throughput is bounded by 0.5
//! (HyperX section 4.1; SurePath section 5 on Dimension Complement Reverse).
//!
//! VCs: `routing.vc_policy`; by default the ladder with one VC per step (SurePath Table 4), routes of
//! up to twice the diameter.

use super::vc::VcPolicy;
use super::{network_diameter, Candidate, RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::rng::{below, Rng};
use crate::topology::fabric::UNREACHABLE;
use crate::topology::{Fabric, SwitchId};
use std::sync::Arc;

/// Valiant routing.
pub struct Valiant {
    net: Arc<Fabric>,
    policy: VcPolicy,
}

impl Valiant {
    /// Valiant routing over `net`.
    pub fn new(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        debug_assert!(
            net.distances_to_every_switch(),
            "Valiant heads for any switch: its fabric must serve every distance (Entry::routes_to_any_switch)"
        );
        let diam = network_diameter(&net) as usize;
        let default_vcs = 2 * net.topology().diameter() as usize;
        let reach = intermediate_reach(&net).max(diam);
        let why = if reach > diam {
            format!(
                "Valiant routes are up to 2 x {reach} = {} hops (an intermediate without servers lies up to {reach} hops \
                 from a switch with servers on this faulty network)",
                2 * reach
            )
        } else {
            format!("Valiant routes are up to 2 x diameter {diam} = {} hops", 2 * diam)
        };
        let policy = VcPolicy::from_params(params, default_vcs, 2 * reach, &why)?;
        Ok(Valiant { net, policy })
    }
}

/// On a faulty network with switches that have no servers (trees, HyperZ): the farthest any of
/// them lies from a live switch with servers it reaches, which bounds each half of a Valiant route
/// through it (the network's diameter counts switches with servers only); 0 otherwise. One BFS
/// per such switch, in parallel.
fn intermediate_reach(net: &Fabric) -> usize {
    use rayon::prelude::*;
    if !net.is_faulty() {
        return 0;
    }
    let topo = net.topology();
    let bare: Vec<SwitchId> =
        (0..net.num_switches() as SwitchId).filter(|&s| net.switch_alive(s) && topo.servers_at(s) == 0).collect();
    bare.par_iter()
        .map(|&i| {
            net.bfs(i)
                .into_iter()
                .enumerate()
                .filter(|&(s, d)| d != UNREACHABLE && topo.servers_at(s as SwitchId) > 0)
                .map(|(_, d)| d as usize)
                .max()
                .unwrap_or(0)
        })
        .max()
        .unwrap_or(0)
}

impl Valiant {
    /// Whether `i` may be the intermediate of a packet from `src`: alive, and reachable from it.
    fn usable(&self, src: SwitchId, i: SwitchId) -> bool {
        self.net.switch_alive(i) && (!self.net.is_faulty() || self.net.distance(src, i) != UNREACHABLE)
    }
}

impl Routing for Valiant {
    fn name(&self) -> &'static str {
        "valiant"
    }
    fn vcs(&self) -> usize {
        self.policy.vcs()
    }
    fn init(&self, st: &mut RouteState, rng: &mut Rng) {
        st.intermediate = below(rng, self.net.num_switches() as u64) as SwitchId;
        // A failed switch, or one in another part of a network that faults split
        // (`faults.unreachable = "drop"`), is no intermediate: draw again (never on a connected
        // network without failed switches).
        while !self.usable(st.src, st.intermediate) {
            st.intermediate = below(rng, self.net.num_switches() as u64) as SwitchId;
        }
        st.phase = if st.intermediate == st.src { 1 } else { 0 };
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        // Phase flips on arrival at the intermediate (in `advance`), so `at` is never it in phase 0.
        let target = if st.phase == 0 { st.intermediate } else { st.dst };
        self.policy.push_minimal(&self.net, at, target, st, out);
    }
    fn init_choices(&self, st: &RouteState, f: &mut dyn FnMut(RouteState)) {
        for i in (0..self.net.num_switches() as SwitchId).filter(|&i| self.usable(st.src, i)) {
            f(RouteState { intermediate: i, phase: if i == st.src { 1 } else { 0 }, ..*st });
        }
    }
    fn advance(&self, st: &mut RouteState, _at: SwitchId, next: SwitchId, _c: &Candidate) {
        if st.phase == 0 && next == st.intermediate {
            st.phase = 1;
        }
    }
}
