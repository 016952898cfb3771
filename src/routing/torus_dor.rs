//! Dimension-order routing on tori and meshes with dateline VCs (Dally and Seitz, "Deadlock-Free
//! Message Routing in Multiprocessor Interconnection Networks", IEEE TC 1987; Dally and Towles,
//! "Principles and Practices of Interconnection Networks", section 14.2): correct dimension 0
//! first, then 1, and so on, each the shorter way around the ring (a tie, `k` even and `k / 2`
//! apart, goes the positive way, port `2d`). One route per pair; on a faulty network a packet whose
//! next link is dead is unroutable.
//!
//! **Dateline VCs** (`routing.vc_policy = "ladder"`, the default, or `"dateline"`): each ring has
//! a dateline on its wrap-around link (between `k - 1` and `0`). A packet travels a dimension on
//! VC level 0 until it has crossed that dimension's dateline, and on level 1 after (the bit of the
//! dimension in `RouteState::dim_mask`). Within a ring the level-0 channels form a path that ends
//! at the wrap link and the level-1 channels one that starts after it, and a minimal route never
//! goes all the way round, so the ring's dependencies are acyclic; dimension order makes the
//! dimensions acyclic among themselves. 2 VCs on a torus (`vcs / 2` per level with more), 1 on a
//! mesh (no wrap links). `davc-*` and `none` (for `check-deadlock`) can be chosen instead.

use super::vc::{Ladder, VcPolicy};
use super::{Candidate, RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::topology::{Fabric, PortId, SwitchId, Topology, Torus, View};
use std::sync::Arc;

/// How torus DOR assigns VCs.
#[derive(Debug, Clone, Copy)]
enum Vcs {
    Dateline(Ladder),
    Policy(VcPolicy),
}

/// Torus/mesh dimension-order routing.
pub struct TorusDor {
    net: Arc<Fabric>,
    torus: Torus,
    vcs: Vcs,
}

impl TorusDor {
    /// DOR over `net`, which must be a torus or mesh.
    pub fn new(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let torus = match net.topology().view() {
            View::Torus(t) => t.clone(),
            _ => {
                return Err(ConfigError::value(
                    "routing.algorithm",
                    format!("\"torus-dor\" on {}", net.topology().name()),
                    "topology.kind = \"torus\" or \"mesh\": torus-dor runs on those only",
                ))
            }
        };
        let levels = if torus.wraps() { 2 } else { 1 };
        let diam = torus.diameter() as usize;
        let vcs = match params.vc_policy.as_str() {
            "ladder" | "dateline" => {
                let why = if torus.wraps() {
                    "a torus ring needs one VC before and one after its dateline"
                } else {
                    "a mesh needs one VC"
                };
                Vcs::Dateline(Ladder::new(params.vcs_or(levels), levels, why)?)
            }
            _ => Vcs::Policy(VcPolicy::from_params(
                params,
                diam,
                diam,
                &format!("DOR routes are up to the diameter, {diam} hops"),
            )?),
        };
        Ok(TorusDor { net, torus, vcs })
    }

    /// The DOR port of `at` towards `to` and its dimension (`at != to`).
    #[inline]
    fn port(&self, at: SwitchId, to: SwitchId) -> Option<(usize, PortId)> {
        let t = &self.torus;
        (0..t.dims()).find_map(|d| {
            let off = t.offset(d, t.coord(at, d), t.coord(to, d));
            (off != 0).then(|| (d, (2 * d + (off < 0) as usize) as PortId))
        })
    }
}

impl Routing for TorusDor {
    fn name(&self) -> &'static str {
        "torus-dor"
    }
    fn vcs(&self) -> usize {
        match &self.vcs {
            Vcs::Dateline(l) => l.used_vcs(),
            Vcs::Policy(p) => p.vcs(),
        }
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        let Some((d, port)) = self.port(at, st.dst) else { return };
        if !self.net.alive(at, port) {
            return;
        }
        let range = match &self.vcs {
            Vcs::Dateline(l) => l.vcs_for_hop(st.dim_mask >> d & 1),
            Vcs::Policy(p) => p.vcs_for(&self.net, at, st, port),
        };
        for vc in range {
            out.push(Candidate { port, vc, penalty: 0, escape: false });
        }
    }
    fn advance(&self, st: &mut RouteState, at: SwitchId, _next: SwitchId, c: &Candidate) {
        if self.torus.crosses_dateline(at, c.port) {
            st.dim_mask |= 1 << (c.port / 2);
        }
    }
}
