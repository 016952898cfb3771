//! Dragonfly minimal routing (Kim, Dally, Scott, Abts, ISCA 2008, section 4.2, "MIN"): at most one
//! local hop in the source group to the router that owns the global link to the destination
//! group, that global link, and at most one local hop in the destination group (`l g l`, up to 3
//! hops). One route per pair; on a faulty network a packet whose next link is dead is unroutable.
//!
//! **VCs** (`routing.vc_policy`): by default (`"ladder"` or `"dally"`) Dally's scheme as drawn in
//! the DAVC paper's Fig. 4 (section 7.2) and used by Kim et al.: a hop uses VC level `i`, where
//! `i` is the number of global links the packet has already crossed, so `l0 g0 l1` for minimal
//! routes (2 VCs) and `l0 g0 l1 g1 l2` for Valiant's (3 VCs). It is the hop-count ladder counted
//! in global hops only, so every route climbs the order `l_i < g_i < l_{i+1}` and the channel
//! dependency graph is acyclic. With more `routing.vcs` each level gets `vcs / levels` VCs. The DAVC
//! allocation functions (`davc-n`, `davc-p`, `davc-np`) and `none` (for `check-deadlock`) can be
//! chosen instead; they need as many VCs as the longest route has hops (3 here).
//!
//! The shared pieces ([`dragonfly`], [`DragonflyVcs`]) serve `dragonfly-valiant` and `ugal` too.

use super::vc::{Ladder, VcPolicy};
use super::{Candidate, RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::topology::{Dragonfly, Fabric, PortId, SwitchId, View};
use std::ops::Range;
use std::sync::Arc;

/// The dragonfly under `net`, or an error naming the routing that needs one.
pub fn dragonfly<'a>(net: &'a Fabric, routing: &str) -> Result<&'a Dragonfly, ConfigError> {
    match net.topology().view() {
        View::Dragonfly(d) => Ok(d),
        _ => Err(ConfigError::value(
            "routing.algorithm",
            format!("\"{routing}\" on {}", net.topology().name()),
            "topology.kind = \"dragonfly\": the routing runs on a dragonfly only (config validation names the \
             routings of each family, from routing::REGISTRY)",
        )),
    }
}

/// How a dragonfly routing assigns VCs: Dally's scheme, or a shared policy.
#[derive(Debug, Clone, Copy)]
pub enum DragonflyVcs {
    /// Dally's scheme: the ladder over global hops crossed; ports from `first_global` on are
    /// global links (on every router).
    Dally {
        /// The ladder over global-hop levels.
        ladder: Ladder,
        /// First global port, `a - 1`.
        first_global: PortId,
    },
    /// A [`VcPolicy`] (DAVC or `none`).
    Policy(VcPolicy),
}

impl DragonflyVcs {
    /// The scheme named by `routing.vc_policy` for routes of `levels` global-hop levels (2 for
    /// minimal, 3 for Valiant) and at most `max_hops` hops; `why` explains the route for errors.
    pub fn from_params(
        params: &RoutingParams,
        df: &Dragonfly,
        levels: usize,
        max_hops: usize,
        why: &str,
    ) -> Result<Self, ConfigError> {
        match params.vc_policy.as_str() {
            "ladder" | "dally" => {
                let vcs = params.vcs_or(levels);
                let why = format!("Dally's scheme uses one VC level per global hop crossed: {why}");
                Ok(DragonflyVcs::Dally {
                    ladder: Ladder::new(vcs, levels, &why)?,
                    first_global: (df.a() - 1) as PortId,
                })
            }
            _ => Ok(DragonflyVcs::Policy(VcPolicy::from_params(params, max_hops, max_hops, why)?)),
        }
    }
    /// VCs per port.
    pub fn vcs(&self) -> usize {
        match self {
            DragonflyVcs::Dally { ladder, .. } => ladder.used_vcs(),
            DragonflyVcs::Policy(p) => p.vcs(),
        }
    }
    /// The VCs a packet in state `st` at `at` may request through `port`.
    #[inline]
    pub fn vcs_for(&self, net: &Fabric, at: SwitchId, st: &RouteState, port: PortId) -> Range<u8> {
        match self {
            DragonflyVcs::Dally { ladder, first_global } => {
                // Global hops crossed so far: the level of the VC held, plus one if the link just
                // taken was global (ports are numbered alike on every router).
                let global = st.hops > 0 && st.last_port >= *first_global;
                ladder.vcs_for_hop((st.vc as usize / ladder.per_step + global as usize) as u16)
            }
            DragonflyVcs::Policy(p) => p.vcs_for(net, at, st, port),
        }
    }
    /// Push `port` of `at` with every VC allowed, if the port is alive.
    #[inline]
    pub fn push(
        &self,
        net: &Fabric,
        at: SwitchId,
        st: &RouteState,
        port: PortId,
        penalty: u32,
        out: &mut Vec<Candidate>,
    ) {
        if net.alive(at, port) {
            for vc in self.vcs_for(net, at, st, port) {
                out.push(Candidate { port, vc, penalty, escape: false });
            }
        }
    }
}

/// Dragonfly minimal routing with Dally's VCs.
pub struct DragonflyMin {
    net: Arc<Fabric>,
    df: Dragonfly,
    vcs: DragonflyVcs,
}

impl DragonflyMin {
    /// Minimal routing over `net`, which must be a dragonfly.
    pub fn new(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let df = dragonfly(&net, "dragonfly-min")?.clone();
        let vcs = DragonflyVcs::from_params(params, &df, 2, 3, "minimal routes are l g l, up to 3 hops and 1 global")?;
        Ok(DragonflyMin { net, df, vcs })
    }
}

impl Routing for DragonflyMin {
    fn name(&self) -> &'static str {
        "dragonfly-min"
    }
    fn vcs(&self) -> usize {
        self.vcs.vcs()
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        let port = self.df.minimal_port(at, st.dst);
        self.vcs.push(&self.net, at, st, port, 0, out);
    }
}
