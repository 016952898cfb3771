//! Routing algorithms and VC policies, one file each, behind [`Routing`].
//!
//! A routing algorithm is asked, at every switch a packet visits before its destination switch, for
//! its *candidates*: `(port, vc, penalty)` triples. The router then applies the selection rule of
//! the SurePath paper (section 3): among candidates whose output VC has room, request the one with
//! the lowest `Q + P`, where `Q = q_s + sum of the queues of the same port`, `q` = output occupancy
//! plus consumed credits of the neighbour (phits), and `P` the candidate's penalty (phits); ties are
//! broken at random. Algorithms without penalties use 0, which makes this plain
//! "least-occupied output" adaptive selection.
//!
//! Routing state travels in the packet ([`RouteState`]); algorithms update it in [`Routing::advance`].

pub mod aliod;
pub mod cliod;
pub mod clos_ad;
pub mod dal;
pub mod davc;
pub mod deadlock;
pub mod deter;
pub mod dmodk;
pub mod dor;
pub mod dragonfly_min;
pub mod dragonfly_valiant;
pub mod hyperz_moves;
pub mod minimal;
pub mod nca;
pub mod nue;
pub mod odim;
pub mod omnidimensional;
pub mod polarized;
pub mod surepath;
pub mod table;
pub mod torus_dor;
pub mod ugal;
pub mod updown;
pub mod updown_routing;
pub mod valiant;
pub mod vc;

#[cfg(test)]
mod family_tests;
#[cfg(test)]
mod hyperz_tests;
#[cfg(test)]
mod nue_tests;
#[cfg(test)]
mod tests;

use crate::config::{Config, ConfigError};
use crate::rng::Rng;
use crate::topology::{Fabric, PortId, SwitchId};
use std::sync::Arc;

/// Per-packet routing state, carried in the packet header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct RouteState {
    /// Switch of the source server.
    pub src: SwitchId,
    /// Switch of the destination server.
    pub dst: SwitchId,
    /// Switch-to-switch hops taken so far.
    pub hops: u16,
    /// Valiant's intermediate switch; ECMP's per-packet hash key ([`table::ECMP_ANY`]: any port, for
    /// the deadlock analysis).
    pub intermediate: SwitchId,
    /// Phase (Valiant: 0 towards the intermediate, 1 towards the destination).
    pub phase: u8,
    /// Non-minimal hops taken (Omnidimensional budget).
    pub deroutes: u8,
    /// Per-dimension flags (DAL: dimension already derouted).
    pub dim_mask: u16,
    /// The packet is in the escape subnetwork (SurePath, DAL).
    pub escape: bool,
    /// VC of the channel the packet holds (0 at injection); DAVC allocates the next VC from it.
    pub vc: u8,
    /// Topology port taken at the previous switch (DAVC's inbound port id for F_P and F_NP).
    pub last_port: PortId,
}

/// One next-hop option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// Topology port (switch-to-switch) to take.
    pub port: PortId,
    /// Virtual channel to request at the next switch's input.
    pub vc: u8,
    /// Penalty in phits, added to the occupancy when choosing.
    pub penalty: u32,
    /// Whether taking it puts the packet in the escape subnetwork.
    pub escape: bool,
}

/// A routing algorithm together with its VC policy.
pub trait Routing: Send + Sync {
    /// Name as in the config.
    fn name(&self) -> &'static str;
    /// Virtual channels per port this configuration uses.
    fn vcs(&self) -> usize;
    /// Set up per-packet state at the source switch (`st.src`, `st.dst` already set).
    fn init(&self, _st: &mut RouteState, _rng: &mut Rng) {}
    /// Next-hop candidates at switch `at` (never the destination switch). An empty list means the
    /// packet cannot move at all, which the router reports as an unroutable packet.
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>);
    /// Update the state after taking `c` from `at` to `next`.
    fn advance(&self, st: &mut RouteState, _at: SwitchId, next: SwitchId, c: &Candidate) {
        step(st, c);
        let _ = next;
    }
    /// Every state [`Routing::init`] can produce from `st` (for the deadlock analysis, which must
    /// follow all of a packet's possible routes). The default runs `init` once, which is right for
    /// routings whose `init` draws nothing; routings that draw (Valiant's intermediate) override it.
    fn init_choices(&self, st: &RouteState, f: &mut dyn FnMut(RouteState)) {
        let mut s = *st;
        let mut rng = crate::rng::stream(0, 0, crate::rng::Purpose::Router);
        self.init(&mut s, &mut rng);
        f(s);
    }
    /// Whether deadlock freedom rests on an escape subnetwork (Duato's theory) rather than on an
    /// acyclic channel dependency graph of all channels.
    fn escape_based(&self) -> bool {
        false
    }
    /// For escape-based routings: the routing subfunction `R1(at, dst)` of Duato's theorem, whose
    /// channels form the escape subnetwork that must be connected and have an acyclic extended
    /// channel dependency graph. Every state must offer these channels among its candidates.
    fn escape_subfunction(&self, _at: SwitchId, _dst: SwitchId, _out: &mut Vec<Candidate>) {}
    /// For routings that build forwarding tables once (Nue, Up*/Down*): what the build cost.
    fn tables(&self) -> Option<&TableReport> {
        None
    }
}

/// What building a table-based routing cost (reported by `hxsim analyze` and `check-deadlock`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TableReport {
    /// Wall-clock seconds to build the tables (one thread unless said otherwise).
    pub build_seconds: f64,
    /// Bytes the routing keeps for its tables.
    pub table_bytes: u64,
    /// Virtual layers (VCs) the tables use.
    pub layers: usize,
    /// Destinations whose routes fell back to the escape paths (Nue, Alg. 4.1).
    pub escape_fallbacks: usize,
    /// One line on how the tables were built.
    pub note: String,
}

/// Refuse (a config error naming `routing.algorithm`) tables of `bytes` that would not fit in
/// `available` bytes of memory (`None`: unknown, allowed).
pub fn refuse_tables_beyond(
    bytes: u64,
    available: Option<u64>,
    name: &str,
    switches: usize,
) -> Result<(), ConfigError> {
    match available {
        Some(avail) if bytes > avail => Err(ConfigError::value(
            "routing.algorithm",
            format!("\"{name}\""),
            format!(
                "a routing whose tables fit in memory: {name} needs {} of tables for {switches} switches but the \
                 available memory is {}; use a routing computed from coordinates or a smaller network",
                crate::config::human_bytes(bytes),
                crate::config::human_bytes(avail)
            ),
        )),
        _ => Ok(()),
    }
}

/// The part of [`Routing::advance`] every routing shares: one more hop, the escape flag, and the VC
/// and port taken (which DAVC reads at the next switch).
#[inline]
pub fn step(st: &mut RouteState, c: &Candidate) {
    st.hops += 1;
    st.escape |= c.escape;
    st.vc = c.vc;
    st.last_port = c.port;
}

/// Builds a routing from the config over a fabric.
pub type Builder = fn(&Config, Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError>;

/// One routing algorithm: its `routing.algorithm` name, its builder, and a one-line description.
pub struct Entry {
    /// The config name.
    pub name: &'static str,
    /// Its builder.
    pub build: Builder,
    /// What it is, with the paper it comes from.
    pub doc: &'static str,
}

/// Every routing algorithm, one line each: the only list of names (config validation and
/// construction both read it).
pub const REGISTRY: &[Entry] = &[
    Entry { name: "dor", build: |c, n| Ok(Box::new(dor::Dor::new(c, n)?)), doc: "dimension-order (HyperX)" },
    Entry { name: "minimal", build: |c, n| Ok(Box::new(minimal::Minimal::new(c, n)?)), doc: "minimal adaptive" },
    Entry { name: "valiant", build: |c, n| Ok(Box::new(valiant::Valiant::new(c, n)?)), doc: "Valiant, minimal phases" },
    Entry {
        name: "omniwar",
        build: |c, n| Ok(Box::new(omnidimensional::OmniWar::new(c, n)?)),
        doc: "Omnidimensional (HyperX)",
    },
    Entry { name: "polarized", build: |c, n| Ok(Box::new(polarized::Polarized::new(c, n)?)), doc: "Polarized routes" },
    Entry {
        name: "surepath-omni",
        build: |c, n| Ok(Box::new(surepath::SurePath::omni(c, n)?)),
        doc: "SurePath with Omnidimensional routes (HyperX)",
    },
    Entry {
        name: "surepath-polarized",
        build: |c, n| Ok(Box::new(surepath::SurePath::polarized(c, n)?)),
        doc: "SurePath with Polarized routes",
    },
    Entry {
        name: "dal",
        build: |c, n| Ok(Box::new(dal::Dal::new(c, n)?)),
        doc: "dimensionally-adaptive load-balanced (HyperX)",
    },
    Entry { name: "clos-ad", build: |c, n| Ok(Box::new(clos_ad::ClosAd::new(c, n)?)), doc: "Clos-AD (HyperX)" },
    Entry {
        name: "sp",
        build: |c, n| Ok(Box::new(table::TableRouting::new(c, n)?)),
        doc: "one shortest path (DAVC section 7.3)",
    },
    Entry {
        name: "ecmp",
        build: |c, n| Ok(Box::new(table::TableRouting::new(c, n)?)),
        doc: "equal-cost multipath, oblivious: a per-packet hash picks the minimal port (DAVC section 7.3)",
    },
    Entry {
        name: "ecmp-adaptive",
        build: |c, n| Ok(Box::new(table::TableRouting::new(c, n)?)),
        doc: "every minimal port a candidate, chosen by occupancy (hxsim's ecmp before issue 15)",
    },
    Entry {
        name: "allpath",
        build: |c, n| Ok(Box::new(table::TableRouting::new(c, n)?)),
        doc: "AllPath(k) (DAVC section 7.3)",
    },
    Entry { name: "odim", build: odim::build, doc: "ordered-dimension HyperZ routing (Adda 2023 section 4.1)" },
    Entry { name: "cliod", build: cliod::build, doc: "common-level idle offset dimension (HyperZ, Adda 2023 Table 1)" },
    Entry { name: "aliod", build: aliod::build, doc: "any-level idle offset dimension (HyperZ, Adda 2023 Table 1)" },
    Entry { name: "deter", build: deter::build, doc: "deterministic HyperZ routing, D-mod-K for DRR (SPEC 5.2)" },
    Entry { name: "nca", build: nca::build, doc: "nearest-common-ancestor up/down (fat trees; ODim on HyperZ)" },
    Entry { name: "dmodk", build: dmodk::build, doc: "D-mod-K (fat trees; Deter on HyperZ)" },
    Entry {
        name: "dragonfly-min",
        build: |c, n| Ok(Box::new(dragonfly_min::DragonflyMin::new(c, n)?)),
        doc: "dragonfly minimal l-g-l, Dally's VCs (Kim et al. 2008)",
    },
    Entry {
        name: "dragonfly-valiant",
        build: |c, n| Ok(Box::new(dragonfly_valiant::DragonflyValiant::new(c, n)?)),
        doc: "dragonfly Valiant via a random group, Dally's VCs (Kim et al. 2008)",
    },
    Entry {
        name: "ugal",
        build: |c, n| Ok(Box::new(ugal::Ugal::new(c, n)?)),
        doc: "dragonfly UGAL-L (Kim et al. 2008)",
    },
    Entry {
        name: "torus-dor",
        build: |c, n| Ok(Box::new(torus_dor::TorusDor::new(c, n)?)),
        doc: "torus/mesh dimension order, dateline VCs (Dally and Seitz 1987)",
    },
    Entry { name: "updown", build: updown_routing::build, doc: "Up*/Down* on a BFS spanning tree (Autonet)" },
    Entry { name: "nue", build: nue::build, doc: "Nue, routing on the complete CDG (Domke et al. 2016)" },
];

/// Every `routing.algorithm` name, in registry order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name).collect()
}

/// Build the routing named by `cfg.routing.algorithm` over `net`.
pub fn build(cfg: &Config, net: Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError> {
    let name = cfg.routing.algorithm.as_str();
    match REGISTRY.iter().find(|e| e.name == name) {
        Some(e) => (e.build)(cfg, net),
        None => Err(ConfigError::value(
            "routing.algorithm",
            format!("\"{name}\""),
            format!("allowed: {}", names().join(", ")),
        )),
    }
}

/// Ports of `at` that bring a packet one hop closer to `to` (by graph distance over live links).
/// Fault-free HyperX uses coordinates, a faulty one its sparse distances; otherwise the BFS tables
/// of [`Fabric`].
#[inline]
pub fn minimal_ports(net: &Fabric, at: SwitchId, to: SwitchId, mut f: impl FnMut(PortId)) {
    if let Some(h) = net.fault_free_hyperx() {
        h.for_each_minimal_port(at, to, f);
        return;
    }
    if let Some(h) = net.fault_free_hyperz() {
        if h.for_each_minimal_port(at, to, &mut f) {
            debug_assert!(
                {
                    let (mut fast, mut slow) = (Vec::new(), Vec::new());
                    h.for_each_minimal_port(at, to, |p| fast.push(p));
                    minimal_ports_by_distance(net, at, to, |p| slow.push(p));
                    fast == slow
                },
                "closed-form HyperZ minimal ports differ from the distance-based ones at {at} towards {to}"
            );
            return;
        }
    }
    if let Some(sd) = net.sparse_distances() {
        // A faulty HyperX where a shortest path of the fault-free network survives: the next hops
        // are the live corrections of one coordinate whose switch keeps a live shortest path (the
        // same ports, in the same increasing order, as the scan below finds).
        if sd.minimal_ports(at, to, |p| net.alive(at, p), &mut f) {
            return;
        }
    }
    minimal_ports_by_distance(net, at, to, f);
}

/// [`minimal_ports`] from distances: every live port whose far end is closer to `to`.
#[inline]
fn minimal_ports_by_distance(net: &Fabric, at: SwitchId, to: SwitchId, mut f: impl FnMut(PortId)) {
    let here = net.distance(at, to);
    for p in 0..net.switch_ports(at) as PortId {
        if let Some((n, _)) = net.neighbour(at, p) {
            if net.distance(n, to) < here {
                f(p);
            }
        }
    }
}

/// The number of VCs configured, or `default` when `routing.vcs = 0`.
pub fn configured_vcs(cfg: &Config, default: usize) -> usize {
    if cfg.routing.vcs == 0 {
        default
    } else {
        cfg.routing.vcs
    }
}

/// Diameter of the network routing works on (with faults, from the BFS tables).
pub fn network_diameter(net: &Fabric) -> u32 {
    if net.is_faulty() {
        net.distance_stats().diameter
    } else {
        net.topology().diameter()
    }
}
