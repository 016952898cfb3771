//! Generic table-based routings of the DAVC paper (section 7.3): SP, ECMP and AllPath(k). They only
//! read graph distances ([`Fabric::distance`], exact over the live links when some failed), so they run on
//! any connected network, faulty or not, and take their VCs from `routing.vc_policy` (the DAVC
//! allocation functions, or the ladder).
//!
//! - **SP** (`sp`): one shortest path per pair. At switch `x` for destination `t` the packet takes
//!   one fixed minimal port, chosen among the minimal ports by a hash of `(x, t)`, so the next hop
//!   depends only on `(x, t)` and every source reaches `t` along a single path (ties between
//!   shortest paths are spread over the network instead of always taking the lowest port, which on
//!   a HyperX would be dimension order). Longest route: the diameter.
//! - **ECMP** (`ecmp`): "spreads the traffic between all" shortest paths, obliviously, as ECMP
//!   does: at switch `x` the packet takes the minimal port picked by a hash of `(x, key)`, with `key`
//!   drawn once per packet at its source (so the route of a packet is fixed, packets of a pair spread
//!   over every shortest path, and the choice never reads a buffer). Longest route: the diameter.
//! - **Adaptive ECMP** (`ecmp-adaptive`): every minimal port is a candidate (penalty 0) and the
//!   router picks by occupancy: Minimal with this module's VC policies.
//! - **AllPath(k)** (`allpath`, `k = routing.extra_hops`): every route of length at most
//!   `d(s,t) + k`, built hop by hop: a port to `y` is a candidate while
//!   `hops + 1 + d(y,t) <= d(s,t) + k`. Such routes may revisit a switch (DAVC's Lemma 4.6 covers
//!   loops). The paper gives no selection rule; here hops that do not bring the packet closer get
//!   the Omnidimensional deroute penalty, 64 phits, so that the extra hops are taken to avoid
//!   congestion rather than at random. Longest route: diameter + k.
//!
//! Default VCs (`routing.vcs = 0`): the longest route in hops, which is what DAVC may need in the
//! worst case and what the ladder needs for one VC per hop; fewer is a config error naming the
//! route length.

use super::omnidimensional::DEROUTE_PENALTY;
use super::vc::VcPolicy;
use super::{minimal_ports, network_diameter, Candidate, RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::rng::{below, mix64, Rng};
use crate::topology::{Fabric, PortId, SwitchId};
use std::sync::Arc;

/// ECMP's hash key meaning "any minimal port": the deadlock analysis follows every route a packet
/// may take, whatever key it drew.
pub const ECMP_ANY: u32 = u32::MAX;

/// The minimal port of `at` towards `dst` that `hash` picks (uniformly over them), if any.
pub(crate) fn hashed_minimal_port(net: &Fabric, at: SwitchId, dst: SwitchId, hash: u64) -> Option<PortId> {
    let mut count = 0u64;
    minimal_ports(net, at, dst, |_| count += 1);
    if count == 0 {
        return None;
    }
    let mut pick = hash % count;
    let mut chosen = None;
    minimal_ports(net, at, dst, |p| {
        if pick == 0 && chosen.is_none() {
            chosen = Some(p);
        }
        pick = pick.wrapping_sub(1);
    });
    chosen
}

/// Which of the generic routings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One shortest path per pair.
    Sp,
    /// All shortest paths, one per packet by hash.
    Ecmp,
    /// All shortest paths, by occupancy.
    EcmpAdaptive,
    /// All routes up to `k` hops longer than the shortest.
    AllPath(u32),
}

/// SP, ECMP or AllPath(k).
pub struct TableRouting {
    kind: Kind,
    net: Arc<Fabric>,
    policy: VcPolicy,
}

impl TableRouting {
    /// The routing named by `routing.algorithm` (`sp`, `ecmp` or `allpath`) over `net`.
    pub fn new(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let kind = match params.algorithm.as_str() {
            "sp" => Kind::Sp,
            "ecmp" => Kind::Ecmp,
            "ecmp-adaptive" => Kind::EcmpAdaptive,
            "allpath" => Kind::AllPath(params.extra_hops),
            other => {
                return Err(ConfigError::value(
                    "routing.algorithm",
                    format!("\"{other}\""),
                    "sp, ecmp, ecmp-adaptive or allpath",
                ))
            }
        };
        let diam = network_diameter(&net) as usize;
        let (hops, why) = match kind {
            Kind::AllPath(k) => (
                diam + k as usize,
                format!("allpath routes are up to diameter {diam} + extra_hops {k} = {} hops", diam + k as usize),
            ),
            _ => (diam, format!("{} routes are up to the diameter, {diam} hops", params.algorithm)),
        };
        let policy = VcPolicy::from_params(params, hops, hops, &why)?;
        Ok(TableRouting { kind, net, policy })
    }

    /// The routing's kind.
    pub fn kind(&self) -> Kind {
        self.kind
    }
}

impl Routing for TableRouting {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Sp => "sp",
            Kind::Ecmp => "ecmp",
            Kind::EcmpAdaptive => "ecmp-adaptive",
            Kind::AllPath(_) => "allpath",
        }
    }
    fn vcs(&self) -> usize {
        self.policy.vcs()
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        let net = &*self.net;
        let mut push = |port: PortId, penalty: u32| {
            for vc in self.policy.vcs_for(net, at, st, port) {
                out.push(Candidate { port, vc, penalty, escape: false });
            }
        };
        match self.kind {
            Kind::Sp => {
                if let Some(p) = hashed_minimal_port(net, at, st.dst, mix64(((at as u64) << 32) | st.dst as u64)) {
                    push(p, 0);
                }
            }
            Kind::Ecmp if st.intermediate == ECMP_ANY => minimal_ports(net, at, st.dst, |p| push(p, 0)),
            Kind::Ecmp => {
                let hash = mix64(((at as u64) << 32) | st.intermediate as u64);
                if let Some(p) = hashed_minimal_port(net, at, st.dst, hash) {
                    push(p, 0);
                }
            }
            Kind::EcmpAdaptive => minimal_ports(net, at, st.dst, |p| push(p, 0)),
            Kind::AllPath(k) => {
                let here = net.distance(at, st.dst) as u64;
                let budget = net.distance(st.src, st.dst) as u64 + k as u64;
                for p in 0..net.switch_ports(at) as PortId {
                    if let Some((y, _)) = net.neighbour(at, p) {
                        let dy = net.distance(y, st.dst) as u64;
                        if st.hops as u64 + 1 + dy <= budget {
                            push(p, if dy < here { 0 } else { DEROUTE_PENALTY });
                        }
                    }
                }
            }
        }
    }
    fn init(&self, st: &mut RouteState, rng: &mut Rng) {
        if self.kind == Kind::Ecmp {
            st.intermediate = below(rng, ECMP_ANY as u64) as u32;
        }
    }
    fn init_choices(&self, st: &RouteState, f: &mut dyn FnMut(RouteState)) {
        let mut s = *st;
        if self.kind == Kind::Ecmp {
            s.intermediate = ECMP_ANY;
        }
        f(s);
    }
}
