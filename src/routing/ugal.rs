//! UGAL on the dragonfly (Kim et al., ISCA 2008, section 4.2, "UGAL-L"; Singh's universal
//! globally-adaptive load-balanced routing): the source router chooses, per packet, between the
//! minimal route and a Valiant route through a random intermediate group, by queue occupancy
//! weighted by route length. Kim et al. compare `q_m H_m` with `q_nm H_nm`; in hxsim routings do
//! not read queues and the router picks the candidate with the lowest `Q + P` (see
//! [`super`]), so UGAL offers at the source router both first hops, the minimal one with penalty
//! 0 and the Valiant one with penalty `packet_phits x (H_nm - H_m)` (one packet per extra hop,
//! never below 0): the additive form of the same comparison. After the choice, Valiant packets
//! continue as in [`super::dragonfly_valiant`], minimal ones as in [`super::dragonfly_min`].
//!
//! **Where the choice is made.** When both routes leave the source router by the same port (the
//! local link to a router that owns the global links to both the destination's and the
//! intermediate group), queue occupancy cannot tell them apart, so the packet takes that hop
//! *undecided* and chooses at the next router, the first where the routes part (its two global
//! links), still from local queues only: routes stay `l g l g l`. Deciding "minimal" at the source
//! in that case (as BookSim2's `ugal_dragonflynew` does, whose `q_m <= 2 q_nm + 30` holds when the
//! ports are one) sends every such packet over the minimal global link whatever its load: on
//! DF(6,12,6) under adversarial group traffic that is 5 intermediate groups in 73 for 11 routers in
//! 12, which held accepted load to 0.17 against Valiant's 0.47 (docs/validity-ugal-nue.md).

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
            let min = self.df.minimal_port(at, st.dst);
            // One port for both routes: no choice was offered, decide at the next router.
            if port_to_group(&self.df, at, st.intermediate as usize) != min {
                st.phase = if c.port == min { TO_DESTINATION } else { TO_INTERMEDIATE };
            }
        }
        if st.phase == TO_INTERMEDIATE && self.df.group(next) == st.intermediate as usize {
            st.phase = TO_DESTINATION;
        }
    }
}
