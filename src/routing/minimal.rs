//! Minimal adaptive routing (Min-AD; SurePath section 4, Table 4 "Minimal"): every port that brings
//! the packet one hop closer to its destination is a candidate, and the router picks the least
//! occupied. On a faulty network "closer" is measured with BFS distances over the live links.
//!
//! VCs: `routing.vc_policy`; by default the ladder with two VCs per step (SurePath Table 4: "2 VCs
//! for each step"), a step per hop of the longest minimal route: `2 D` VCs for diameter `D`. On a
//! faulty network minimal routes are as long as the faulty diameter `D_f`, so the default is
//! `2 D_f`, two VCs per step still (before 2026-11-28 it was the fault-free `2 D`, which the ladder
//! split into `D_f` steps of one VC, e.g. 4 of the 6 VCs on a 3-D HyperX whose faults raise the
//! diameter to 4, and 2 VCs left idle). A `routing.vcs` set by the user is kept as given.
//!
//! With `routing.vc_policy = "dor-escape"` it is the HyperX paper's Min-AD as evaluated there
//! (section 4.1: "3 sets of 2 VCs ... One VC in each set is reserved for deadlock avoidance in the
//! adaptive minimal and DAL routing algorithms"; section 3.3: "When one dimension is blocked ... we
//! choose another offset dimension"). The VCs are laid out as DAL's ([`super::dal`]): set `k` is VC
//! `2k` (adaptive: every minimal port) and VC `2k + 1` (escape: the dimension-order port only, with
//! DAL's escape penalty, so it is taken only when no adaptive VC has room); every set is a candidate
//! and a packet that took the escape stays in it. Deadlock freedom is Duato's, as for DAL: the escape
//! VCs run DOR and every state offers its DOR hop. DOR cannot avoid failed links, so this is for
//! fault-free HyperX networks.

use super::dal::ESCAPE_PENALTY;
use super::dor::hyperx;
use super::vc::VcPolicy;
use super::{network_diameter, Candidate, CandidateRun, RouteState, Routing, RoutingParams};
use crate::error::ConfigError;
use crate::topology::{Fabric, HyperX, SwitchId};
use std::sync::Arc;

/// How Minimal assigns VCs.
enum Vcs {
    /// A shared VC policy.
    Policy(VcPolicy),
    /// Min-AD's sets of an adaptive and a DOR escape VC.
    DorEscape {
        /// The HyperX (for its dimension-order port).
        hx: Box<HyperX>,
        /// Sets of two VCs.
        sets: u8,
    },
}

/// Minimal adaptive routing.
pub struct Minimal {
    net: Arc<Fabric>,
    vcs: Vcs,
}

impl Minimal {
    /// Minimal routing over `net`.
    pub fn new(params: &RoutingParams, net: Arc<Fabric>) -> Result<Self, ConfigError> {
        if params.vc_policy == "dor-escape" {
            let hx = hyperx(&net)?.clone();
            if net.is_faulty() {
                return Err(ConfigError::value(
                    "routing.vc_policy",
                    "\"dor-escape\"",
                    "a fault-free HyperX: its escape is dimension order, which cannot route around a failed link",
                ));
            }
            let vcs = params.vcs_or(2 * hx.dims());
            if vcs < 2 || !vcs.is_multiple_of(2) || vcs > 64 {
                return Err(ConfigError::value(
                    "routing.vcs",
                    vcs,
                    "an even number from 2 to 64: dor-escape uses sets of one adaptive and one escape VC",
                ));
            }
            return Ok(Minimal { net, vcs: Vcs::DorEscape { hx: Box::new(hx), sets: (vcs / 2) as u8 } });
        }
        let diam = network_diameter(&net) as usize;
        // Fault-free, `diam` is the topology's diameter; past MAX_VCS the ladder takes what fits.
        let default_vcs = (2 * net.topology().diameter() as usize).max((2 * diam).min(super::vc::MAX_VCS));
        let policy = VcPolicy::from_params(
            params,
            default_vcs,
            diam,
            &format!("minimal routes are up to the diameter, {diam} hops"),
        )?;
        Ok(Minimal { net, vcs: Vcs::Policy(policy) })
    }
}

/// Min-AD's escape hop: the dimension-order port of `at` towards `dst` on every escape VC.
fn push_dor(net: &Fabric, hx: &HyperX, sets: u8, at: SwitchId, dst: SwitchId, out: &mut Vec<Candidate>) {
    hx.for_each_dor_port(at, dst, |port| {
        if net.alive(at, port) {
            for s in 0..sets {
                out.push(Candidate { port, vc: 2 * s + 1, penalty: ESCAPE_PENALTY, escape: true });
            }
        }
    });
}

impl Routing for Minimal {
    fn name(&self) -> &'static str {
        "minimal"
    }
    fn vcs(&self) -> usize {
        match &self.vcs {
            Vcs::Policy(p) => p.vcs(),
            Vcs::DorEscape { sets, .. } => 2 * *sets as usize,
        }
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        match &self.vcs {
            Vcs::Policy(p) => p.push_minimal(&self.net, at, st.dst, st, out),
            Vcs::DorEscape { hx, sets } => {
                if !st.escape {
                    super::minimal_ports(&self.net, at, st.dst, |port| {
                        for s in 0..*sets {
                            out.push(Candidate { port, vc: 2 * s, penalty: 0, escape: false });
                        }
                    });
                }
                push_dor(&self.net, hx, *sets, at, st.dst, out);
            }
        }
    }
    fn candidate_runs(&self, at: SwitchId, st: &RouteState, out: &mut Vec<CandidateRun>) -> bool {
        match &self.vcs {
            Vcs::Policy(p) => {
                p.push_minimal_runs(&self.net, at, st.dst, st, out);
                true
            }
            Vcs::DorEscape { .. } => false,
        }
    }
    fn escape_based(&self) -> bool {
        matches!(self.vcs, Vcs::DorEscape { .. })
    }
    fn escape_subfunction(&self, at: SwitchId, dst: SwitchId, out: &mut Vec<Candidate>) {
        if let Vcs::DorEscape { hx, sets } = &self.vcs {
            push_dor(&self.net, hx, *sets, at, dst, out);
        }
    }
}
