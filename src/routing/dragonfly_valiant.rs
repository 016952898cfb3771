//! Dragonfly Valiant routing (Kim et al., ISCA 2008, section 4.2, "VAL"; Valiant and Brebner
//! 1981): the source router draws an intermediate group uniformly among all `a h + 1` groups; the
//! packet goes minimally to that group (a local hop to the router owning the global link to it, and
//! the link), then minimally to the destination (`l g l g l`, up to 5 hops: the DAVC paper's
//! "longest path of 7 hops" counting the two server links, section 6.2.3). When the drawn group is
//! the source's or the destination's the route is minimal.
//!
//! VCs: Dally's scheme by default (3 VCs, `l0 g0 l1 g1 l2`; see [`super::dragonfly_min`]), or a
//! DAVC policy with at least 5 VCs.

use super::dragonfly_min::{dragonfly, DragonflyVcs};
use super::{Candidate, RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::rng::{below, Rng};
use crate::topology::{Dragonfly, Fabric, PortId, SwitchId};
use std::sync::Arc;

/// Route states of the two phases (`RouteState::phase`).
pub const TO_INTERMEDIATE: u8 = 0;
/// Towards the destination.
pub const TO_DESTINATION: u8 = 1;

/// Port of `at` towards group `grp` (`at` not in it): the global link, or the local link to the
/// router that owns it.
#[inline]
pub fn port_to_group(df: &Dragonfly, at: SwitchId, grp: usize) -> PortId {
    let (gw, port) = df.gateway(df.group(at), grp);
    if gw == at {
        port
    } else {
        df.local_port(df.router(at), df.router(gw))
    }
}

/// The phase a packet from `src` to `dst` through group `grp` starts in.
#[inline]
pub fn first_phase(df: &Dragonfly, st: &RouteState, grp: usize) -> u8 {
    if grp == df.group(st.src) || grp == df.group(st.dst) {
        TO_DESTINATION
    } else {
        TO_INTERMEDIATE
    }
}

/// Dragonfly Valiant routing.
pub struct DragonflyValiant {
    net: Arc<Fabric>,
    df: Dragonfly,
    vcs: DragonflyVcs,
}

impl DragonflyValiant {
    /// Valiant routing over `net`, which must be a dragonfly.
    pub fn new(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let df = dragonfly(&net, "dragonfly-valiant")?.clone();
        let vcs =
            DragonflyVcs::from_params(params, &df, 3, 5, "Valiant routes are l g l g l, up to 5 hops and 2 globals")?;
        Ok(DragonflyValiant { net, df, vcs })
    }
}

impl Routing for DragonflyValiant {
    fn name(&self) -> &'static str {
        "dragonfly-valiant"
    }
    fn vcs(&self) -> usize {
        self.vcs.vcs()
    }
    fn init(&self, st: &mut RouteState, rng: &mut Rng) {
        let grp = below(rng, self.df.groups() as u64) as usize;
        st.intermediate = grp as SwitchId;
        st.phase = first_phase(&self.df, st, grp);
    }
    fn init_choices(&self, st: &RouteState, f: &mut dyn FnMut(RouteState)) {
        for grp in 0..self.df.groups() {
            f(RouteState { intermediate: grp as SwitchId, phase: first_phase(&self.df, st, grp), ..*st });
        }
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        let port = if st.phase == TO_INTERMEDIATE {
            port_to_group(&self.df, at, st.intermediate as usize)
        } else {
            self.df.minimal_port(at, st.dst)
        };
        self.vcs.push(&self.net, at, st, port, 0, out);
    }
    fn advance(&self, st: &mut RouteState, _at: SwitchId, next: SwitchId, _c: &Candidate) {
        if st.phase == TO_INTERMEDIATE && self.df.group(next) == st.intermediate as usize {
            st.phase = TO_DESTINATION;
        }
    }
}
