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
//! Routing state travels in the packet ([`RouteState`]). After each hop the caller (the router, the
//! deadlock checker) applies [`step`], the update every routing shares, and then
//! [`Routing::advance`], the routing's own update; a routing cannot forget the shared part.

pub mod aliod;
mod cdg;
pub mod cliod;
pub mod clos_ad;
pub mod dal;
pub mod davc;
pub mod degraded;
pub mod deadlock;
pub mod deter;
pub mod dfsssp;
pub mod dmodk;
pub mod dor;
pub mod dragonfly_min;
pub mod dragonfly_valiant;
pub mod hyperz_faults;
pub mod hyperz_moves;
pub mod lash;
pub mod minimal;
pub mod nca;
pub mod nue;
pub mod odim;
pub mod omnidimensional;
pub mod polarized;
pub mod spda;
pub mod surepath;
pub mod table;
pub mod torus_dor;
pub mod ugal;
pub mod updown;
pub mod updown_routing;
pub mod valiant;
pub mod vc;

#[cfg(test)]
mod deadlock_tests;
#[cfg(test)]
mod family_tests;
#[cfg(test)]
mod hyperz_fault_tests;
#[cfg(test)]
mod hyperz_tests;
#[cfg(test)]
mod layered_tests;
#[cfg(test)]
mod nue_tests;
#[cfg(test)]
mod tests;

/// Fixtures shared by the routings' unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::PortClass;
    use crate::topology::{Fabric, FaultSet, HyperX, PortId, Topology};
    use std::sync::Arc;

    /// The faulty HyperX networks on which the classes from masks are compared with the hop
    /// loops, each with its sides: a 4x4x4 with 30 random link faults (seed 3) and a 3x4x3 with
    /// trunks (2, 1, 1) and 24 (seed 5), each with switch 5 failed too.
    pub fn faulty_hyperx_cases() -> Vec<(&'static [usize], Arc<Fabric>)> {
        [(&[4usize, 4, 4][..], &[1usize, 1, 1][..], 30, 3), (&[3, 4, 3], &[2, 1, 1], 24, 5)]
            .into_iter()
            .map(|(sides, trunks, links, seed)| {
                let h: Arc<dyn Topology> = Arc::new(HyperX::new(sides, trunks, 1));
                let mut f = FaultSet::random_links(&*h, links, seed).unwrap();
                f.switches.push(5);
                (sides, Arc::new(Fabric::new(h, &f)))
            })
            .collect()
    }

    /// Every (port, penalty) that `classes` offer, sorted.
    pub fn class_ports(classes: &[PortClass]) -> Vec<(PortId, u32)> {
        let mut ports: Vec<(PortId, u32)> = classes
            .iter()
            .flat_map(|c| (0..128).filter(move |&p| c.mask >> p & 1 == 1).map(move |p| (p as PortId, c.penalty)))
            .collect();
        ports.sort_unstable();
        ports
    }
}

use crate::error::ConfigError;
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
    /// Phase (Valiant: 0 towards the intermediate, 1 towards the destination; SPDA: the spanning
    /// tree the packet follows).
    pub phase: u8,
    /// Non-minimal hops taken (Omnidimensional budget).
    pub deroutes: u8,
    /// Per-dimension flags (DAL: dimension already derouted).
    pub dim_mask: u16,
    /// The packet is in the escape subnetwork (SurePath, DAL).
    pub escape: bool,
    /// VC of the channel the packet holds (0 at injection); DAVC allocates the next VC from it.
    pub vc: u8,
    /// The destination server's port at its switch (`dst`): D-mod-K spreads destinations server
    /// by server with it ([`dmodk`]). It fits the state's padding.
    pub dst_port: u16,
    /// Topology port taken at the previous switch (DAVC's inbound port id for F_P and F_NP).
    pub last_port: PortId,
}

// The route state stays in 24 bytes (a packet and its queue links in one 64-byte slot).
const _: () = assert!(std::mem::size_of::<RouteState>() == 24);

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

/// Candidates on consecutive VCs of one port: `port` on each VC of `lo..hi`, in increasing VC
/// order, all with the same penalty and escape flag. A candidate list written as runs reads each
/// output port's record once per run rather than once per VC (see [`Routing::candidate_runs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CandidateRun {
    /// Penalty in phits of every candidate of the run.
    pub penalty: u32,
    /// Topology port (switch-to-switch) to take.
    pub port: PortId,
    /// First VC.
    pub lo: u8,
    /// One past the last VC (`hi > lo`).
    pub hi: u8,
    /// Whether taking it puts the packet in the escape subnetwork.
    pub escape: bool,
}

impl CandidateRun {
    /// The run with no VCs (so no candidate): the fill value of the router's run cache slots
    /// before anything is cached in them.
    pub const EMPTY: CandidateRun = CandidateRun { penalty: 0, port: 0, lo: 0, hi: 0, escape: false };
    /// The candidate of this run on VC `vc`.
    #[inline]
    pub fn candidate(&self, vc: u8) -> Candidate {
        Candidate { port: self.port, vc, penalty: self.penalty, escape: self.escape }
    }
}

/// Which groups of a head's candidates [`Routing::candidate_classes`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassGroups {
    /// Both: the routing group's classes, then the escape group's.
    All,
    /// The routing group's (the candidates that do not enter the escape).
    Routing,
    /// The escape group's.
    Escape,
}

/// Candidates with one penalty on one VC range: every port of `mask` (ports below 128) on every
/// VC of `lo..hi`, each with `penalty` and `escape` ([`Routing::candidate_classes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortClass {
    /// The ports, bit `p` for port `p`.
    pub mask: u128,
    /// Penalty in phits of every candidate of the class.
    pub penalty: u32,
    /// First VC.
    pub lo: u8,
    /// One past the last VC.
    pub hi: u8,
    /// Whether taking it puts the packet in the escape subnetwork.
    pub escape: bool,
}

/// Appends the classes of `masks[i]` with penalty `penalty(i)` on `vcs` (nothing for empty masks),
/// from 64-bit masks (a HyperX of at most 64 ports) or 128-bit ones.
#[inline]
pub fn push_classes<M: Copy + Into<u128>, const N: usize>(
    out: &mut Vec<PortClass>,
    masks: &[M; N],
    penalty: impl Fn(usize) -> u32,
    vcs: std::ops::Range<u8>,
    escape: bool,
) {
    for (i, &mask) in masks.iter().enumerate() {
        let mask: u128 = mask.into();
        if mask != 0 && vcs.start < vcs.end {
            out.push(PortClass { mask, penalty: penalty(i), lo: vcs.start, hi: vcs.end, escape });
        }
    }
}

/// Classes of ports gathered hop by hop, for routings whose hop loops have no closed form of
/// port masks (a faulty network, a HyperZ, a HyperX of more than 64 ports): the classes of the
/// hops `(port, penalty)` offered in increasing port order. It declines (`push_to` is `false`)
/// where the hops would not give the runs' order back (a port not above the last), a port is
/// past the masks, or they form more than [`HopClasses::MAX`] penalties.
#[derive(Debug, Clone, Copy)]
pub struct HopClasses {
    classes: [(u32, u128); HopClasses::MAX],
    n: usize,
    last: i32,
    ok: bool,
}

impl Default for HopClasses {
    fn default() -> Self {
        HopClasses { classes: [(0, 0); HopClasses::MAX], n: 0, last: -1, ok: true }
    }
}

impl HopClasses {
    /// Most penalties (classes) kept.
    pub const MAX: usize = 8;

    /// The hop through `port` with `penalty`.
    #[inline]
    pub fn add(&mut self, port: PortId, penalty: u32) {
        if port as i32 <= self.last || port >= 128 {
            self.ok = false;
            return;
        }
        self.last = port as i32;
        self.add_ports(1 << port, penalty);
    }

    /// The ports of `mask` with `penalty`, in any order (classes from masks, where the caller
    /// knows the ports' order is the runs').
    #[inline]
    pub fn add_ports(&mut self, mask: u128, penalty: u32) {
        match self.classes[..self.n].iter_mut().find(|c| c.0 == penalty) {
            Some(c) => c.1 |= mask,
            None if self.n == Self::MAX => self.ok = false,
            None => {
                self.classes[self.n] = (penalty, mask);
                self.n += 1;
            }
        }
    }

    /// The largest penalty added (0 if none): Polarized's best weight change, before its penalties
    /// are known.
    #[inline]
    pub fn max_penalty(&self) -> u32 {
        self.classes[..self.n].iter().map(|c| c.0).max().unwrap_or(0)
    }

    /// Appends the classes on `vcs` to `out` (none if `vcs` is empty, as no run would be
    /// written), each penalty mapped by `penalty`; `false` (with `out` unchanged) if the hops
    /// declined.
    #[inline]
    pub fn push_to(
        &self,
        out: &mut Vec<PortClass>,
        vcs: std::ops::Range<u8>,
        escape: bool,
        penalty: impl Fn(u32) -> u32,
    ) -> bool {
        if !self.ok {
            return false;
        }
        if vcs.start < vcs.end {
            for &(p, mask) in &self.classes[..self.n] {
                out.push(PortClass { mask, penalty: penalty(p), lo: vcs.start, hi: vcs.end, escape });
            }
        }
        true
    }
}

/// Appends the run of `port` on `vcs` (nothing if `vcs` is empty, as a loop over it would push no
/// candidate).
#[inline]
pub fn push_run(out: &mut Vec<CandidateRun>, port: PortId, vcs: std::ops::Range<u8>, penalty: u32, escape: bool) {
    if vcs.start < vcs.end {
        out.push(CandidateRun { penalty, port, lo: vcs.start, hi: vcs.end, escape });
    }
}

/// Appends `cands` as runs, in the same order: consecutive candidates of one port on consecutive
/// VCs with equal penalty and escape flag share a run.
pub fn runs_of(cands: &[Candidate], out: &mut Vec<CandidateRun>) {
    for &c in cands {
        push_candidate(out, c);
    }
}

/// Appends candidate `c` to `out`, extending the last run where `c` is its next VC (as
/// [`runs_of`] converts a list): for routings that write runs one candidate at a time.
#[inline]
pub fn push_candidate(out: &mut Vec<CandidateRun>, c: Candidate) {
    if let Some(r) = out.last_mut() {
        if r.port == c.port && r.hi == c.vc && r.penalty == c.penalty && r.escape == c.escape && c.vc < u8::MAX {
            r.hi += 1;
            return;
        }
    }
    out.push(CandidateRun { penalty: c.penalty, port: c.port, lo: c.vc, hi: c.vc + 1, escape: c.escape });
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
    /// The same candidates as [`Routing::candidates`], in the same order, appended to `out` as
    /// runs of consecutive VCs; `false` (the default) if the routing does not write runs, and the
    /// caller converts `candidates` with [`runs_of`]. Routings with many candidates per hop (one per
    /// port and VC) write runs directly, which the router's selection reads port by port.
    fn candidate_runs(&self, _at: SwitchId, _st: &RouteState, _out: &mut Vec<CandidateRun>) -> bool {
        false
    }
    /// Whether computing [`Routing::candidate_runs`] costs enough (many ports, several route sets)
    /// that the router should keep each waiting head's runs rather than ask again every cycle.
    fn cache_candidates(&self) -> bool {
        false
    }
    /// The same candidates as [`Routing::candidate_runs`] (the same set of port, VC, penalty and
    /// escape flag), or those of one group of them (`groups`), written into `out` (cleared first)
    /// as classes of ports, where the routing writes them (from masks of the topology's closed
    /// form, or hop by hop: [`HopClasses`]); a port appears in at most one class of each escape
    /// flag. `false` (the default, and where a switch has 128 ports or more) if it does not, and
    /// the caller asks for runs. Only routings with an [`Routing::escape_penalty_floor`] are asked
    /// for one group.
    fn candidate_classes(
        &self,
        _at: SwitchId,
        _st: &RouteState,
        _groups: ClassGroups,
        _out: &mut Vec<PortClass>,
    ) -> bool {
        false
    }
    /// Where [`Routing::candidate_classes`] writes the escape group apart ([`ClassGroups`]): the
    /// least penalty of any escape candidate. Selection then asks for a head's escape classes
    /// only when they could win or tie: when its routing classes' best cost reaches the lowest
    /// cost any escape VC has plus this, or every routing candidate's crossbar is busy. `None`
    /// (the default): classes come whole.
    fn escape_penalty_floor(&self) -> Option<u32> {
        None
    }
    /// Whether the router should keep, per switch, what selection learnt of each output port's
    /// VCs across cycles (two slots per port: the VC range starting at 0, and one other), as it
    /// pays where a head's runs span whole VC ranges, several heads read one port, and heads wait
    /// ([`Routing::cache_candidates`]). Routings whose runs are single VCs scattered over the port
    /// (DAL's every other VC) would relearn a slot at almost every read.
    fn keep_costs(&self) -> bool {
        self.cache_candidates()
    }
    /// The routing's own state update after taking `c` from `at` to `next` (phase, deroutes, ...).
    /// Callers apply [`step`] first, so `st` already holds the new hop count, escape flag, VC and
    /// port. Routings whose state is only what [`step`] keeps leave the default, which does nothing.
    fn advance(&self, _st: &mut RouteState, _at: SwitchId, _next: SwitchId, _c: &Candidate) {}
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
    /// For `hxsim check-deadlock` ([`deadlock::check`]): `st` with every field that neither this
    /// routing's [`Routing::candidates`] nor its [`Routing::advance`] will read again reset to its
    /// default, so that the analysis explores once the states that differ only there (a SurePath
    /// packet in the escape is the same packet whatever its source and deroutes). It must keep
    /// `dst` and `hops`. The contract, which debug builds of the checker assert on every state
    /// they reach: at any switch, `st` and the result have the same candidates, and after any of
    /// them their successors reduce to the same state. The default keeps every field: exact for
    /// any routing, and as many states as [`deadlock::check_exact`] follows.
    fn analysis_state(&self, st: &RouteState) -> RouteState {
        *st
    }
    /// Routings built from tables computed once (Nue, Up*/Down*, DFSSSP, LASH, SPDA): what building
    /// them took.
    fn tables(&self) -> Option<TableReport> {
        None
    }
}

/// What building a table-based routing took: reported in the run summary, by `hxsim analyze` and by
/// `hxsim check-deadlock`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TableReport {
    /// Wall-clock seconds to build the tables (one thread unless said otherwise).
    pub build_seconds: f64,
    /// Bytes the routing keeps for its tables.
    pub bytes: u64,
    /// Virtual layers (VCs) the tables use (DFSSSP, LASH, Nue), or spanning trees (SPDA).
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
                crate::memory::human_bytes(bytes),
                crate::memory::human_bytes(avail)
            ),
        )),
        _ => Ok(()),
    }
}

/// The state update every routing shares, applied by the caller before [`Routing::advance`]: one
/// more hop, the escape flag, and the VC and port taken (which DAVC reads at the next switch).
#[inline]
pub fn step(st: &mut RouteState, c: &Candidate) {
    st.hops += 1;
    st.escape |= c.escape;
    st.vc = c.vc;
    st.last_port = c.port;
}

/// What a routing reads from the config when it is built (see `Config::routing_params`): the
/// `[routing]` section, typed, and the two other values routings use. The network itself (topology, faults, distances) comes with the
/// [`Fabric`]. Errors about these values still name their config keys (`routing.vcs`, ...), so each
/// field says which key it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct RoutingParams {
    /// `routing.algorithm`: the [`REGISTRY`] name (the table routings share one builder and tell
    /// `sp`, `ecmp`, ... apart by it).
    pub algorithm: String,
    /// `routing.vcs`: virtual channels per port; `None` (`routing.vcs = 0`) for the algorithm's own
    /// default (see [`RoutingParams::vcs_or`]).
    pub vcs: Option<usize>,
    /// `routing.vc_policy`: a name from [`vc::POLICIES`], checked by the routing that reads it (each
    /// accepts its own subset and says which).
    pub vc_policy: String,
    /// `routing.escape_vcs`: VCs of the escape subnetwork (SurePath).
    pub escape_vcs: usize,
    /// `routing.escape_root`: root switch of the Up/Down escape subnetwork (SurePath).
    pub escape_root: usize,
    /// `routing.max_deroutes`: Omnidimensional's non-minimal hop budget `m`; `None`
    /// (`routing.max_deroutes = 0`) for `n`, the number of dimensions.
    pub max_deroutes: Option<usize>,
    /// `routing.extra_hops`: AllPath(k)'s `k`, hops over the shortest path.
    pub extra_hops: u32,
    /// `packet.size_phits`: packet length in phits, the unit of the penalties that price one extra
    /// hop (Clos-AD, UGAL, the HyperZ routings).
    pub packet_phits: u32,
    /// `seed`: the run's seed, which DAL names in its errors about a fault set it cannot route.
    pub seed: u64,
    /// The `[faults]` keys in force, as `faults.random_links = 6, faults.random_switches = 1`
    /// (empty without faults): what a routing's error about a fault set it cannot route names.
    pub faults: String,
}

impl RoutingParams {
    /// The configured VC count, or `default` when `routing.vcs = 0`.
    pub fn vcs_or(&self, default: usize) -> usize {
        self.vcs.unwrap_or(default)
    }
}

/// Builds a routing from its parameters over a fabric.
pub type Builder = fn(&RoutingParams, Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError>;

/// One routing algorithm: its `routing.algorithm` name, its builder, what it runs on, and a
/// one-line description.
pub struct Entry {
    /// The config name.
    pub name: &'static str,
    /// Its builder.
    pub build: Builder,
    /// The topology families (`topology.kind`) it runs on; empty: any. Configs naming it on another
    /// family are refused before anything is built, with the routings that run there.
    pub families: &'static [&'static str],
    /// Whether it routes around failed links and switches. DOR has one route per pair; OmniWAR
    /// keeps a packet between two switches of one row in that row; Clos-AD's routes are DOR; the
    /// dragonfly and torus routings follow fixed l-g-l and dimension-order paths. (DAL detours
    /// around failed links: HyperX paper section 6; the HyperZ and fat-tree routings take up then
    /// down detours and side deroutes, Adda 2023 section 5.4, see [`hyperz_faults`].) Configs with
    /// faults refuse the others before anything is built.
    pub fault_tolerant: bool,
    /// Whether it keeps all-pairs tables (a 2-byte next port per switch and destination switch and
    /// a VC byte per pair, `3 x switches^2` bytes), which the up-front memory check counts.
    pub all_pairs_tables: bool,
    /// Whether its routes head for switches other than the destination's, including ones without
    /// servers (Valiant's intermediates): a faulty HyperZ or fat tree then keeps its distance
    /// exceptions towards every switch, not only towards those with servers ([`crate::topology::Targets`]).
    pub routes_to_any_switch: bool,
    /// What it is, with the paper it comes from.
    pub doc: &'static str,
}

/// The families of the HyperX routings.
const HYPERX: &[&str] = &["hyperx"];
/// The families of the HyperZ routings (a fat tree is a HyperZ without GHC dimensions).
const HYPERZ: &[&str] = &["hyperz", "fattree"];
/// The families of the dragonfly routings.
const DRAGONFLY: &[&str] = &["dragonfly"];
/// The families of torus dimension-order routing.
const TORUS: &[&str] = &["torus", "mesh"];
/// Any family.
const ANY: &[&str] = &[];

/// Every routing algorithm, one entry each: the only list of names (config validation, construction
/// and the docs read it).
pub const REGISTRY: &[Entry] = &[
    Entry {
        name: "dor",
        families: HYPERX,
        build: |c, n| Ok(Box::new(dor::Dor::new(c, n)?)),
        fault_tolerant: false,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "dimension-order (HyperX)",
    },
    Entry {
        name: "minimal",
        families: ANY,
        build: |c, n| Ok(Box::new(minimal::Minimal::new(c, n)?)),
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "minimal adaptive",
    },
    Entry {
        name: "valiant",
        families: ANY,
        build: |c, n| Ok(Box::new(valiant::Valiant::new(c, n)?)),
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: true,
        doc: "Valiant, minimal phases",
    },
    Entry {
        name: "omniwar",
        families: HYPERX,
        build: |c, n| Ok(Box::new(omnidimensional::OmniWar::new(c, n)?)),
        fault_tolerant: false,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "Omnidimensional (HyperX)",
    },
    Entry {
        name: "polarized",
        families: ANY,
        build: |c, n| Ok(Box::new(polarized::Polarized::new(c, n)?)),
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: true,
        doc: "Polarized routes",
    },
    Entry {
        name: "surepath-omni",
        families: HYPERX,
        build: |c, n| Ok(Box::new(surepath::SurePath::omni(c, n)?)),
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "SurePath with Omnidimensional routes (HyperX)",
    },
    Entry {
        name: "surepath-polarized",
        families: ANY,
        build: |c, n| Ok(Box::new(surepath::SurePath::polarized(c, n)?)),
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: true,
        doc: "SurePath with Polarized routes",
    },
    Entry {
        name: "surepath-aliod",
        families: HYPERZ,
        build: |c, n| Ok(Box::new(surepath::SurePath::aliod(c, n)?)),
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "SurePath's Up*/Down* escape with ALIOD's moves (HyperZ)",
    },
    Entry {
        name: "surepath-minimal",
        families: ANY,
        build: |c, n| Ok(Box::new(surepath::SurePath::minimal(c, n)?)),
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "SurePath's Up*/Down* escape with minimal routes",
    },
    Entry {
        name: "dal",
        families: HYPERX,
        build: |c, n| Ok(Box::new(dal::Dal::new(c, n)?)),
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "dimensionally-adaptive load-balanced (HyperX)",
    },
    Entry {
        name: "clos-ad",
        families: HYPERX,
        build: |c, n| Ok(Box::new(clos_ad::ClosAd::new(c, n)?)),
        fault_tolerant: false,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "Clos-AD (HyperX)",
    },
    Entry {
        name: "sp",
        families: ANY,
        build: |c, n| Ok(Box::new(table::TableRouting::new(c, n)?)),
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "one shortest path (DAVC section 7.3)",
    },
    Entry {
        name: "ecmp",
        families: ANY,
        build: |c, n| Ok(Box::new(table::TableRouting::new(c, n)?)),
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "equal-cost multipath, oblivious: a per-packet hash picks the minimal port (DAVC section 7.3)",
    },
    Entry {
        name: "ecmp-adaptive",
        families: ANY,
        build: |c, n| Ok(Box::new(table::TableRouting::new(c, n)?)),
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "every minimal port a candidate, chosen by occupancy (hxsim's ecmp before issue 15)",
    },
    Entry {
        name: "allpath",
        families: ANY,
        build: |c, n| Ok(Box::new(table::TableRouting::new(c, n)?)),
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "AllPath(k) (DAVC section 7.3)",
    },
    Entry {
        name: "odim",
        families: HYPERZ,
        build: odim::build,
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "ordered-dimension HyperZ routing (Adda 2023 section 4.1)",
    },
    Entry {
        name: "cliod",
        families: HYPERZ,
        build: cliod::build,
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "common-level idle offset dimension (HyperZ, Adda 2023 Table 1)",
    },
    Entry {
        name: "aliod",
        families: HYPERZ,
        build: aliod::build,
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "any-level idle offset dimension (HyperZ, Adda 2023 Table 1)",
    },
    Entry {
        name: "deter",
        families: HYPERZ,
        build: deter::build,
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "deterministic HyperZ routing, D-mod-K for DRR (SPEC 5.2)",
    },
    Entry {
        name: "nca",
        families: HYPERZ,
        build: nca::build,
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "nearest-common-ancestor up/down (fat trees; ODim on HyperZ)",
    },
    Entry {
        name: "dmodk",
        families: HYPERZ,
        build: dmodk::build,
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "D-mod-K by destination server (fat trees; Deter's moves on HyperZ)",
    },
    Entry {
        name: "dragonfly-min",
        families: DRAGONFLY,
        build: |c, n| Ok(Box::new(dragonfly_min::DragonflyMin::new(c, n)?)),
        fault_tolerant: false,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "dragonfly minimal l-g-l, Dally's VCs (Kim et al. 2008)",
    },
    Entry {
        name: "dragonfly-valiant",
        families: DRAGONFLY,
        build: |c, n| Ok(Box::new(dragonfly_valiant::DragonflyValiant::new(c, n)?)),
        fault_tolerant: false,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "dragonfly Valiant via a random group, Dally's VCs (Kim et al. 2008)",
    },
    Entry {
        name: "ugal",
        families: DRAGONFLY,
        build: |c, n| Ok(Box::new(ugal::Ugal::new(c, n)?)),
        fault_tolerant: false,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "dragonfly UGAL-L (Kim et al. 2008)",
    },
    Entry {
        name: "dfsssp",
        families: ANY,
        build: dfsssp::build,
        fault_tolerant: true,
        all_pairs_tables: true,
        routes_to_any_switch: false,
        doc: "deadlock-free SSSP: balanced shortest paths on virtual layers (Domke, Hoefler, Nagel 2011)",
    },
    Entry {
        name: "lash",
        families: ANY,
        build: lash::build,
        fault_tolerant: true,
        all_pairs_tables: true,
        routes_to_any_switch: false,
        doc: "layered shortest path (Skeie, Lysne, Theiss 2002)",
    },
    Entry {
        name: "spda",
        families: ANY,
        build: spda::build,
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "one BFS spanning tree per VC, random root (DAVC section 7.2)",
    },
    Entry {
        name: "torus-dor",
        families: TORUS,
        build: |c, n| Ok(Box::new(torus_dor::TorusDor::new(c, n)?)),
        fault_tolerant: false,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "torus/mesh dimension order, dateline VCs (Dally and Seitz 1987)",
    },
    Entry {
        name: "updown",
        families: ANY,
        build: updown_routing::build,
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "Up*/Down* on a BFS spanning tree (Autonet)",
    },
    Entry {
        name: "nue",
        families: ANY,
        build: nue::build,
        fault_tolerant: true,
        all_pairs_tables: false,
        routes_to_any_switch: false,
        doc: "Nue, routing on the complete CDG (Domke et al. 2016)",
    },
];

/// Every `routing.algorithm` name, in registry order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name).collect()
}

/// The registry entry named `name`.
pub fn entry(name: &str) -> Option<&'static Entry> {
    REGISTRY.iter().find(|e| e.name == name)
}

impl Entry {
    /// Whether it runs on topology family `kind`.
    pub fn runs_on(&self, kind: &str) -> bool {
        self.families.is_empty() || self.families.contains(&kind)
    }
}

/// The names of the routings that run on topology family `kind` (and, with `faults`, route around
/// faults), in registry order: the advice of errors that refuse a routing.
pub fn names_for(kind: &str, faults: bool) -> Vec<&'static str> {
    REGISTRY.iter().filter(|e| e.runs_on(kind) && (e.fault_tolerant || !faults)).map(|e| e.name).collect()
}

/// Build the routing named by `params.algorithm` over `net`.
pub fn build(params: &RoutingParams, net: Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError> {
    let name = params.algorithm.as_str();
    match REGISTRY.iter().find(|e| e.name == name) {
        Some(e) => (e.build)(params, net),
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
    if let Some(ex) = net.tree_exceptions() {
        // A faulty HyperZ or fat tree where a shortest path of the fault-free network survives: the
        // live ports one closer in the closed form to a switch that is no exception (the same ports,
        // in the same increasing order, as the scan below finds).
        if cfg!(debug_assertions) {
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            if ex.minimal_ports(at, to, |p| net.alive(at, p), &mut |p| fast.push(p)) {
                minimal_ports_by_distance(net, at, to, |p| slow.push(p));
                assert_eq!(fast, slow, "faulty HyperZ minimal ports at {at} towards {to}");
                fast.into_iter().for_each(f);
                return;
            }
        } else if ex.minimal_ports(at, to, |p| net.alive(at, p), &mut f) {
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

/// Diameter of the network routing works on (with faults, from the BFS tables).
pub fn network_diameter(net: &Fabric) -> u32 {
    if net.is_faulty() {
        net.distance_stats().diameter
    } else {
        net.topology().diameter()
    }
}
