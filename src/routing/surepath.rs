//! SurePath (SurePath paper, section 3 and Table 4): a fully adaptive routing subnetwork plus an
//! opportunistic Up/Down escape subnetwork, split over the VCs.
//!
//! The `vcs` VCs of every port are split into routing VCs `C_Rout` (the first `vcs - escape_vcs`)
//! and escape VCs `C_Esc` (the last `routing.escape_vcs`, default 1). Candidates (section 3):
//! 1. a packet still in `C_Rout` gets the hops of its route set, with the route set's penalties
//!    (Omnidimensional: 0 minimal, 64 deroute; Polarized: 0/64/80 by `dmu`), on routing VCs
//!    chosen by `routing.vc_policy`:
//!    - `ladder` (default): by hop count, as the ladder of section 3.1.2 but truncated: a packet
//!      that has taken `h` hops uses routing VC `min(h, |C_Rout| - 1)`, so longer routes share the
//!      last routing VC. The escape, not the order, is what avoids deadlock ("by using an escape
//!      subnetwork ... instead of a ladder, this restriction is lifted"), so any number of routing
//!      VCs works;
//!    - `none`: every routing VC on every hop.
//!
//!    The paper does not say which (Table 4 only gives the counts). Measured on the 16x16 HyperX
//!    under Random Server Permutation at offered load 1.0, the hop order keeps PolSP at 0.70
//!    accepted where any-VC use falls to 0.47 after saturation (the routing VCs, used in any
//!    order, form cyclic waits that only drain through the escape), hence the default;
//! 2. every packet, in `C_Rout` or `C_Esc`, gets the escape hops of [`UpDown`] on every escape VC,
//!    with the escape penalties (Up 112, Down 96, shortcuts 80/64/48).
//!
//! The router requests the candidate with the lowest `Q + P`, so escape hops are taken when the
//! routing VCs are congested, or when the route set has nothing to offer (a *forced* hop). A packet
//! that entered `C_Esc` never returns to `C_Rout` (its state records it). Deadlock freedom follows
//! from Duato's theorem with the Up/Down links of the escape VCs as the escape subfunction, which
//! [`Routing::escape_subfunction`] exposes to `hxsim check-deadlock`. Routing VCs need no ladder, so
//! any `vcs >= escape_vcs + 1` works, whatever the (faulty) diameter: the paper's Table 4 uses
//! `2n - 1` routing VCs and one escape VC, and section 6 uses 3 + 1.
//!
//! - **OmniSP** (`surepath-omni`): Omnidimensional routes ([`Omnidimensional`]).
//! - **PolSP** (`surepath-polarized`): Polarized routes ([`PolarizedRoutes`]).

use super::omnidimensional::Omnidimensional;
use super::polarized::PolarizedRoutes;
use super::updown::{LinkKind, UpDown};
use super::{configured_vcs, step, Candidate, RouteState, Routing};
use crate::config::{Config, ConfigError};
use crate::topology::{Network, PortId, SwitchId};
use std::sync::Arc;

/// A set of routes SurePath can use in its routing subnetwork.
pub trait RouteSet: Send + Sync {
    /// Pushes the routing candidates of a packet in state `st` at `at` on the VCs `vcs`.
    fn push(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>, vcs: std::ops::Range<u8>);
    /// State update for a routing hop through `port`.
    fn advance(&self, _st: &mut RouteState, _at: SwitchId, _port: PortId) {}
}

impl RouteSet for Omnidimensional {
    #[inline]
    fn push(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>, vcs: std::ops::Range<u8>) {
        self.hops(at, st, |port, penalty| {
            for vc in vcs.clone() {
                out.push(Candidate { port, vc, penalty, escape: false });
            }
        });
    }
    #[inline]
    fn advance(&self, st: &mut RouteState, at: SwitchId, port: PortId) {
        Omnidimensional::advance(self, st, at, port);
    }
}

impl RouteSet for PolarizedRoutes {
    #[inline]
    fn push(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>, vcs: std::ops::Range<u8>) {
        self.candidates(at, st, out, |_| vcs.clone());
    }
}

/// SurePath over the route set `R`.
pub struct SurePath<R> {
    name: &'static str,
    routes: R,
    escape: UpDown,
    routing_vcs: u8,
    vcs: u8,
    /// Routing VCs by hop count (`ladder`) rather than any (`none`).
    ordered: bool,
}

impl SurePath<Omnidimensional> {
    /// OmniSP: SurePath with Omnidimensional routes (needs a HyperX).
    pub fn omni(cfg: &Config, net: Arc<Network>) -> Result<Self, ConfigError> {
        let routes = Omnidimensional::new(cfg, net.clone())?;
        Self::with_routes("surepath-omni", routes, cfg, net)
    }
}

impl SurePath<PolarizedRoutes> {
    /// PolSP: SurePath with Polarized routes.
    pub fn polarized(cfg: &Config, net: Arc<Network>) -> Result<Self, ConfigError> {
        let routes = PolarizedRoutes::new(net.clone());
        Self::with_routes("surepath-polarized", routes, cfg, net)
    }
}

impl<R: RouteSet> SurePath<R> {
    fn with_routes(name: &'static str, routes: R, cfg: &Config, net: Arc<Network>) -> Result<Self, ConfigError> {
        let ordered = match cfg.routing.vc_policy.as_str() {
            "ladder" => true,
            "none" => false,
            other => {
                return Err(ConfigError::value(
                    "routing.vc_policy",
                    format!("\"{other}\""),
                    format!(
                        "for {name}: \"ladder\" (routing VCs by hop count, the last one shared by longer \
                         routes) or \"none\" (any routing VC on any hop)"
                    ),
                ))
            }
        };
        let vcs = configured_vcs(cfg, 2 * net.topology().diameter() as usize);
        let esc = cfg.routing.escape_vcs;
        if esc == 0 {
            return Err(ConfigError::value("routing.escape_vcs", 0, format!("at least 1 escape VC for {name}")));
        }
        if vcs <= esc {
            return Err(ConfigError::value(
                "routing.vcs",
                vcs,
                format!("{name} needs routing VCs besides its {esc} escape VC(s): at least {}", esc + 1),
            ));
        }
        let escape = UpDown::new(net, cfg.routing.escape_root)?;
        Ok(SurePath { name, routes, escape, routing_vcs: (vcs - esc) as u8, vcs: vcs as u8, ordered })
    }

    /// The escape subnetwork.
    pub fn escape(&self) -> &UpDown {
        &self.escape
    }
}

impl<R: RouteSet> Routing for SurePath<R> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn vcs(&self) -> usize {
        self.vcs as usize
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        if !st.escape {
            let vcs = if self.ordered {
                let v = (st.hops.min(self.routing_vcs as u16 - 1)) as u8;
                v..v + 1
            } else {
                0..self.routing_vcs
            };
            self.routes.push(at, st, out, vcs);
        }
        let esc = self.routing_vcs..self.vcs;
        self.escape.hops(at, st.dst, |port, penalty, _| {
            for vc in esc.clone() {
                out.push(Candidate { port, vc, penalty, escape: true });
            }
        });
    }
    fn advance(&self, st: &mut RouteState, at: SwitchId, _next: SwitchId, c: &Candidate) {
        if !c.escape {
            self.routes.advance(st, at, c.port);
        }
        step(st, c);
    }
    fn escape_based(&self) -> bool {
        true
    }
    fn escape_subfunction(&self, at: SwitchId, dst: SwitchId, out: &mut Vec<Candidate>) {
        let esc = self.routing_vcs..self.vcs;
        self.escape.hops(at, dst, |port, penalty, kind| {
            if kind != LinkKind::Horizontal {
                for vc in esc.clone() {
                    out.push(Candidate { port, vc, penalty, escape: true });
                }
            }
        });
    }
}
