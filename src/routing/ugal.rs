//! UGAL on the dragonfly (Kim et al., ISCA 2008, section 4.2, "UGAL-L"; Singh's universal
//! globally-adaptive load-balanced routing): the source router chooses, per packet, between the
//! minimal route and a Valiant route through a random intermediate group, by queue occupancy
//! weighted by route length. Kim et al. compare `q_m H_m` with `q_nm H_nm`; in hxsim routings do
//! not read queues and the router picks the candidate with the lowest `Q + P` (see
//! [`super`]), so UGAL offers at the source router both first hops, the minimal one with penalty
//! 0 and the Valiant one with penalty `packet_phits x (H_nm - H_m)` (one packet per extra hop,
//! never below 0): the additive form of the same comparison. If both first hops are the same port
//! the packet goes minimally. After the first hop the choice is fixed: Valiant packets continue as
//! in [`super::dragonfly_valiant`], minimal ones as in [`super::dragonfly_min`].
//!
//! VCs: Dally's scheme with 3 VCs by default (minimal routes use the first two levels), or a DAVC
//! policy with at least 5.

use super::dragonfly_min::{dragonfly, DragonflyVcs};
use super::dragonfly_valiant::{first_phase, port_to_group, TO_DESTINATION, TO_INTERMEDIATE};
use super::{Candidate, RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::rng::{below, Rng};
use crate::topology::{Dragonfly, Fabric, SwitchId, Topology};
use std::sync::Arc;

/// Phase of a packet at its source router that has not chosen yet.
pub const UNDECIDED: u8 = 2;

/// UGAL-L routing.
pub struct Ugal {
    net: Arc<Fabric>,
    df: Dragonfly,
    vcs: DragonflyVcs,
    packet_phits: u32,
}

impl Ugal {
    /// UGAL over `net`, which must be a dragonfly.
    pub fn new(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        let df = dragonfly(&net, "ugal")?.clone();
        let vcs = DragonflyVcs::from_params(
            params,
            &df,
            3,
            5,
            "UGAL's Valiant routes are l g l g l, up to 5 hops and 2 globals",
        )?;
        Ok(Ugal { net, df, vcs, packet_phits: params.packet_phits })
    }

    fn phase(&self, st: &RouteState, grp: usize) -> u8 {
        match first_phase(&self.df, st, grp) {
            TO_DESTINATION => TO_DESTINATION,
            _ => UNDECIDED,
        }
    }
}

impl Routing for Ugal {
    fn name(&self) -> &'static str {
        "ugal"
    }
    fn vcs(&self) -> usize {
        self.vcs.vcs()
    }
    fn init(&self, st: &mut RouteState, rng: &mut Rng) {
        let grp = below(rng, self.df.groups() as u64) as usize;
        st.intermediate = grp as SwitchId;
        st.phase = self.phase(st, grp);
    }
    fn init_choices(&self, st: &RouteState, f: &mut dyn FnMut(RouteState)) {
        for grp in 0..self.df.groups() {
            f(RouteState { intermediate: grp as SwitchId, phase: self.phase(st, grp), ..*st });
        }
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        let df = &self.df;
        match st.phase {
            TO_INTERMEDIATE => {
                let port = port_to_group(df, at, st.intermediate as usize);
                self.vcs.push(&self.net, at, st, port, 0, out);
            }
            TO_DESTINATION => self.vcs.push(&self.net, at, st, df.minimal_port(at, st.dst), 0, out),
            _ => {
                let min = df.minimal_port(at, st.dst);
                self.vcs.push(&self.net, at, st, min, 0, out);
                let grp = st.intermediate as usize;
                let port = port_to_group(df, at, grp);
                if port != min {
                    // Hops through the intermediate group: to its gateway link, then minimal on.
                    let (gw, gport) = df.gateway(df.group(at), grp);
                    let landing = df.neighbour(gw, gport).map_or(gw, |x| x.0);
                    let h_nm = (gw != at) as u32 + 1 + df.minimal_hops(landing, st.dst);
                    let h_m = df.minimal_hops(at, st.dst);
                    let penalty = self.packet_phits * h_nm.saturating_sub(h_m);
                    self.vcs.push(&self.net, at, st, port, penalty, out);
                }
            }
        }
    }
    fn advance(&self, st: &mut RouteState, at: SwitchId, next: SwitchId, c: &Candidate) {
        if st.phase == UNDECIDED {
            st.phase = if c.port == self.df.minimal_port(at, st.dst) { TO_DESTINATION } else { TO_INTERMEDIATE };
        }
        if st.phase == TO_INTERMEDIATE && self.df.group(next) == st.intermediate as usize {
            st.phase = TO_DESTINATION;
        }
    }
}
