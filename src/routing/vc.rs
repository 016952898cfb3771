//! VC policies that routings share, chosen with `routing.vc_policy`.
//!
//! - `ladder` (SurePath section 3.1.2 and Table 4; Gunther / Merlin-Schweitzer hop-count schemes):
//!   the i-th group of VCs is used by a packet that has already crossed i switch-to-switch links.
//!   With `vcs` VCs and routes of at most `steps` hops, each step gets `vcs / steps` VCs (Minimal on
//!   2n VCs: two per step; Valiant, OmniWAR and Polarized on 2n VCs: one per step). Since the VC
//!   index strictly grows along every route, the channel dependency graph is acyclic.
//! - `davc-n`, `davc-p`, `davc-np` (DAVC paper, sections 4 and 5; see [`super::davc`]): the VC is
//!   raised by one whenever the next channel would not be above the current one in the strict order
//!   `<_2` / `<_3` over (node id, port id, VC); injection is on VC 0.
//! - `dor-escape` (HyperX paper section 4.1, Min-AD): sets of one adaptive and one escape VC, the
//!   escape running dimension order; `minimal` on a HyperX only (see [`super::minimal`]).
//! - `none`: every hop may use any VC. This is **not** deadlock free for most routings; it exists
//!   to analyse channel dependency graphs (`hxsim check-deadlock`), e.g. Minimal on one VC.
//!
//! A policy never hands out a VC beyond the configured count: a route longer than the policy was
//! sized for gets no candidate for that hop (and the router reports it as unroutable) rather than
//! silently reusing a VC, which would void the deadlock-freedom argument.

use super::davc::Davc;
use super::{push_run, Candidate, CandidateRun, RouteState, RoutingParams};
use crate::error::ConfigError;

/// Every `routing.vc_policy` name with what it is: the only list of names (config validation and
/// [`VcPolicy::from_params`] read it). Routings that manage their VCs themselves (SurePath, DAL,
/// the HyperZ routings) accept only the names their docs give.
pub const POLICIES: &[(&str, &str)] = &[
    ("ladder", "hop-count ladder (SurePath Table 4)"),
    ("davc-n", "DAVC F_N (DAVC section 4)"),
    ("davc-p", "DAVC F_P (DAVC section 5)"),
    ("davc-np", "DAVC F_NP (DAVC section 5)"),
    ("dor-escape", "minimal only: sets of an adaptive and a DOR escape VC, Min-AD (HyperX section 4.1)"),
    ("none", "any VC on any hop: not deadlock free, for check-deadlock"),
    ("hyperz-a", "HyperZ scheme A: VC 0 ODim escape, others adaptive (SPEC 5.3; hyperz_moves)"),
    ("hyperz-b", "HyperZ scheme B: VC = side hops taken (SPEC 5.3; hyperz_moves)"),
    ("dally", "Dally's dragonfly scheme, a VC level per global hop (dragonfly-min, dragonfly-valiant, ugal)"),
    ("dateline", "dateline VCs on torus rings (torus-dor)"),
];

/// Most VCs a port can have (`routing.vcs` is at most this): the router keeps one bit per VC in
/// each port's occupancy masks (`vc_mask: u64` of the input and output port records in
/// `network`), read on every allocation. Widening them to 128 bits would grow every port record
/// of every run (and the checkpoint format) for the few configurations that need more VCs.
pub const MAX_VCS: usize = u64::BITS as usize;

/// The VC count of a routing whose user left `routing.vcs` at 0: its own default `default`, raised
/// to one VC per hop of its longest route (`max_hops`, explained by `why`) where that is more (the
/// ladder and the DAVC functions need that many: Polarized on a dragonfly or an RRG, Valiant on a
/// faulty network). The user set no VC count, so an error names `routing.algorithm`, not
/// `routing.vcs`: only when the routes need more than [`MAX_VCS`].
pub fn default_vcs(params: &RoutingParams, default: usize, max_hops: usize, why: &str) -> Result<usize, ConfigError> {
    let need = default.max(max_hops).max(1);
    if need > MAX_VCS {
        return Err(ConfigError::value(
            "routing.algorithm",
            format!("\"{}\"", params.algorithm),
            format!("a routing whose routes fit in the {MAX_VCS} VCs a port can have: {why}, so it needs {need} VCs"),
        ));
    }
    Ok(need)
}

/// Every `routing.vc_policy` name.
pub fn policy_names() -> Vec<&'static str> {
    POLICIES.iter().map(|p| p.0).collect()
}
use crate::topology::{Fabric, PortId, SwitchId};

/// Hop-count ladder.
#[derive(Debug, Clone, Copy)]
pub struct Ladder {
    /// VCs per step.
    pub per_step: usize,
    /// Longest route, in switch-to-switch hops.
    pub steps: usize,
}

impl Ladder {
    /// A ladder over `vcs` VCs for routes of at most `steps` hops; `why` explains the route length in
    /// the error (e.g. "Valiant routes are up to 2 x diameter 3 = 6 hops").
    pub fn new(vcs: usize, steps: usize, why: &str) -> Result<Self, ConfigError> {
        let steps = steps.max(1);
        if vcs < steps {
            return Err(ConfigError::value(
                "routing.vcs",
                vcs,
                format!("the ladder needs at least one VC per hop: {why}, so at least {steps} VCs"),
            ));
        }
        Ok(Ladder { per_step: vcs / steps, steps })
    }

    /// The VCs a packet that has taken `hops` hops may request for its next hop (empty once the
    /// route is longer than the ladder).
    #[inline]
    pub fn vcs_for_hop(&self, hops: u16) -> std::ops::Range<u8> {
        let h = hops as usize;
        if h >= self.steps {
            return 0..0;
        }
        let lo = h * self.per_step;
        lo as u8..(lo + self.per_step) as u8
    }

    /// Total VCs the ladder spans.
    pub fn used_vcs(&self) -> usize {
        self.per_step * self.steps
    }
}

/// How a routing assigns VCs to its hops.
#[derive(Debug, Clone, Copy)]
pub enum VcPolicy {
    /// Hop-count ladder.
    Ladder(Ladder),
    /// DAVC allocation function over `vcs` VCs.
    Davc {
        /// F_N, F_P or F_NP.
        f: Davc,
        /// VCs per port.
        vcs: usize,
    },
    /// Any VC on any hop (unsafe; for analysis).
    Any {
        /// VCs per port.
        vcs: usize,
    },
}

impl VcPolicy {
    /// The policy named by `routing.vc_policy` for a routing whose routes are at most `max_hops`
    /// switch-to-switch hops (`why` says why, for errors) and which uses `default_vcs` VCs when
    /// `routing.vcs = 0`, or more where the ladder or a DAVC function needs more ([`default_vcs`]).
    pub fn from_params(
        params: &RoutingParams,
        default_vcs: usize,
        max_hops: usize,
        why: &str,
    ) -> Result<Self, ConfigError> {
        let name = params.vc_policy.as_str();
        let vcs = match (params.vcs, name) {
            (Some(v), _) => v,
            (None, "ladder" | "davc-n" | "davc-p" | "davc-np") => {
                self::default_vcs(params, default_vcs, max_hops, why)?
            }
            (None, _) => default_vcs,
        };
        match name {
            "ladder" => Ok(VcPolicy::Ladder(Ladder::new(vcs, max_hops, why)?)),
            "none" => Ok(VcPolicy::Any { vcs: vcs.max(1) }),
            "dally" | "dateline" => Err(ConfigError::value(
                "routing.vc_policy",
                format!("\"{name}\""),
                "dally is the scheme of dragonfly-min, dragonfly-valiant and ugal, dateline that of torus-dor; \
                 this routing takes ladder, davc-n, davc-p, davc-np or none",
            )),
            "dor-escape" => Err(ConfigError::value(
                "routing.vc_policy",
                "\"dor-escape\"",
                format!(
                    "dor-escape is Min-AD's escape (HyperX paper section 4.1) and only routing.algorithm = \"minimal\" \
                     on a HyperX takes it; here: {}",
                    params.algorithm
                ),
            )),
            _ => {
                let f = Davc::from_name(name).ok_or_else(|| {
                    ConfigError::value(
                        "routing.vc_policy",
                        format!("\"{name}\""),
                        format!("allowed: {}", policy_names().join(", ")),
                    )
                })?;
                // Injection is on VC 0 and each further hop raises the VC at most by one, so a route
                // of `max_hops` switch-to-switch hops needs up to `max_hops` VCs (DAVC Lemma 6.1).
                if vcs < max_hops.max(1) {
                    return Err(ConfigError::value(
                        "routing.vcs",
                        vcs,
                        format!(
                            "{name} may raise the VC on every hop after the first: {why}, so at least {} VCs",
                            max_hops.max(1)
                        ),
                    ));
                }
                Ok(VcPolicy::Davc { f, vcs })
            }
        }
    }

    /// For the deadlock analysis ([`super::Routing::analysis_state`]): `routes`, the state the
    /// route set reads (with `hops`, which the ladder reads), where the policy reads nothing more;
    /// DAVC also reads the VC and port of the previous hop, so it keeps `st` whole.
    pub fn analysis_state(&self, st: &RouteState, routes: RouteState) -> RouteState {
        match self {
            VcPolicy::Davc { .. } => *st,
            VcPolicy::Ladder(_) | VcPolicy::Any { .. } => routes,
        }
    }

    /// VCs per port this policy uses.
    pub fn vcs(&self) -> usize {
        match self {
            VcPolicy::Ladder(l) => l.used_vcs(),
            VcPolicy::Davc { vcs, .. } | VcPolicy::Any { vcs } => *vcs,
        }
    }

    /// Push a candidate for every minimal port of `at` towards `target` with each VC this policy
    /// allows (penalty 0): the candidates of Minimal, and of Valiant in each phase. The ladder's VCs
    /// depend only on the hop count, so they are computed once, not per port: this is the router's
    /// inner loop.
    #[inline]
    pub fn push_minimal(
        &self,
        net: &Fabric,
        at: SwitchId,
        target: SwitchId,
        st: &RouteState,
        out: &mut Vec<Candidate>,
    ) {
        if let VcPolicy::Ladder(l) = self {
            let r = l.vcs_for_hop(st.hops);
            let (lo, hi) = (r.start, r.end);
            super::minimal_ports(net, at, target, |port| {
                for vc in lo..hi {
                    out.push(Candidate { port, vc, penalty: 0, escape: false });
                }
            });
        } else {
            super::minimal_ports(net, at, target, |port| {
                for vc in self.vcs_for(net, at, st, port) {
                    out.push(Candidate { port, vc, penalty: 0, escape: false });
                }
            });
        }
    }

    /// [`VcPolicy::push_minimal`] as runs ([`super::Routing::candidate_runs`]).
    #[inline]
    pub fn push_minimal_runs(
        &self,
        net: &Fabric,
        at: SwitchId,
        target: SwitchId,
        st: &RouteState,
        out: &mut Vec<CandidateRun>,
    ) {
        if let VcPolicy::Ladder(l) = self {
            let r = l.vcs_for_hop(st.hops);
            super::minimal_ports(net, at, target, |port| push_run(out, port, r.clone(), 0, false));
        } else {
            super::minimal_ports(net, at, target, |port| {
                push_run(out, port, self.vcs_for(net, at, st, port), 0, false);
            });
        }
    }

    /// The VCs a packet in state `st` at `at` may request when leaving through `port` (a live port).
    #[inline]
    pub fn vcs_for(&self, net: &Fabric, at: SwitchId, st: &RouteState, port: PortId) -> std::ops::Range<u8> {
        match self {
            VcPolicy::Ladder(l) => l.vcs_for_hop(st.hops),
            VcPolicy::Any { vcs } => 0..*vcs as u8,
            VcPolicy::Davc { f, vcs } => {
                let next = net.topology().neighbour(at, port).map_or(at, |x| x.0);
                let vc = f.next_vc(st, at, port, next) as usize;
                if vc < *vcs {
                    vc as u8..vc as u8 + 1
                } else {
                    0..0
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surepath_table4_vc_usage() {
        // Minimal on a 3-D HyperX with 2n = 6 VCs: 2 VCs for each of the 3 steps.
        let l = Ladder::new(6, 3, "").unwrap();
        assert_eq!(l.vcs_for_hop(0), 0..2);
        assert_eq!(l.vcs_for_hop(2), 4..6);
        // Valiant with 2n = 6 VCs and routes of up to 6 hops: one per step.
        let l = Ladder::new(6, 6, "").unwrap();
        assert_eq!(l.vcs_for_hop(5), 5..6);
        assert!(Ladder::new(3, 6, "x").is_err());
    }

    /// A VC count the user did not set is raised to the routes' length (Polarized on a dragonfly:
    /// 9 hops over a default of 2 x diameter 3 = 6, refused blaming `routing.vcs`), and only a count
    /// the user set is blamed on `routing.vcs`, with the numbers of the routes it must fit.
    #[test]
    fn only_a_vc_count_the_user_set_is_blamed_on_routing_vcs() {
        let params = |vcs: Option<usize>, policy: &str| RoutingParams {
            algorithm: "polarized".into(),
            vcs,
            vc_policy: policy.into(),
            escape_vcs: 1,
            escape_root: 0,
            max_deroutes: None,
            extra_hops: 0,
            packet_phits: 16,
            seed: 1,
            faults: String::new(),
        };
        let why = "polarized routes on this network (diameter 3) are up to 9 hops";
        for policy in ["ladder", "davc-np"] {
            let p = VcPolicy::from_params(&params(None, policy), 6, 9, why).unwrap();
            assert_eq!(p.vcs(), 9, "{policy}");
            let e = VcPolicy::from_params(&params(Some(6), policy), 6, 9, why).unwrap_err().to_string();
            assert!(e.contains("`routing.vcs`: 6") && e.contains("9 hops") && e.contains("at least 9 VCs"), "{e}");
            // Routes longer than a port's VCs: the routing is at fault, not a key the user never set.
            let e = VcPolicy::from_params(&params(None, policy), 6, 70, why).unwrap_err().to_string();
            assert!(e.contains("`routing.algorithm`") && e.contains("70 VCs"), "{e}");
        }
        // A default that fits is kept as it was (Minimal's 2n on a HyperX of diameter n).
        assert_eq!(VcPolicy::from_params(&params(None, "ladder"), 6, 3, "").unwrap().vcs(), 6);
    }

    #[test]
    fn ladder_never_reuses_a_vc_past_its_last_step() {
        let l = Ladder::new(4, 2, "").unwrap();
        assert_eq!(l.vcs_for_hop(1), 2..4);
        assert!(l.vcs_for_hop(2).is_empty());
    }
}
