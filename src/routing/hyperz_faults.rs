//! The HyperZ and fat-tree routings on a faulty network (Adda 2023, section 5.4; Adda and Peratikou,
//! "Routing and Fault Tolerance in Z-Fat Tree", IEEE TPDS 28(8), 2017, the paper's ref. \[21\]).
//!
//! **What the papers give.** Section 5.4: inside a Z-node, the "recoiling algorithm" of \[21\]
//! "determine\[s\] the paths of unfaulty links, and hence select\[s\] the uplinks that will avoid
//! meeting faulty downlinks"; in an offset dimension `k` there are `l_max = sum_i q_ik` parallel
//! side links (one per level), and "if the number of failed links is less than `l_max`, additional
//! rerouting in the up and then down directions within the Z-node is required to locate the level
//! of non-faulty links"; "if all the `l_max` links fail, one has to reroute through the side links.
//! This scheme is adopted by DAL" (HyperX paper, section 6). Only the abstract of \[21\] could be
//! found (the `search` corpora hold its title page and abstract, "a fault tolerance algorithm, named
//! recoil-and-reroute which makes use of the extra links"; the TPDS text is closed access), so the
//! rule below is this module's reading of section 5.4, made exact. InfiniBand's ftree routing does
//! the same inside a fat tree with tables: OpenSM's `osm_ucast_ftree.c` routes each destination
//! "downgoing by going up" from its leaf over the live links only, then gives every other switch an
//! up port towards a switch that has such a down path (read, not copied).
//!
//! **The moves** of a packet at switch `x` of Z-node `a` for destination leaf `t` of Z-node `b`
//! (section 4.1's move types, over live links only):
//! - Up: to any parent, while the packet has not yet gone down since its last side hop;
//! - Down: to the child whose zone holds `t` (the only way down towards it);
//! - Side(k) to `b_k`, `k` an offset dimension, at whatever level the packet is;
//! - a *deroute* Side(k) to a coordinate other than `a_k` and `b_k` (DAL's non-minimal hop), `k` an
//!   offset dimension; or, for a packet still in its source Z-node with `a = b` (no side hop taken),
//!   a side hop out of it in any dimension (`k` then offset, to be corrected back): the only way to
//!   a leaf whose up links all failed. At most `routing.max_deroutes` per packet (default 1).
//!
//! A packet's route is then a sequence of *segments*, each an up\*-then-down\* walk inside one
//! Z-node, separated by side hops. The header carries whether the packet has gone down in its
//! current segment (`RouteState::phase` bit 0), its side hops (`phase >> 1`) and its deroutes
//! (`RouteState::deroutes`).
//!
//! **Which moves are offered** (three tiers; the first that has a move offers it):
//! 1. the rule's own moves (ODim, CLIOD, ALIOD, Deter as in their files, with their penalties),
//!    kept where the link is alive and the move is *feasible*;
//! 2. else every feasible Up, Down and minimal Side move ("up then down within the Z-node to locate
//!    the level of non-faulty links", section 5.4);
//! 3. else every feasible deroute ("reroute through the side links").
//!
//! A move is feasible when the state it leads to (switch, gone-down bit, deroutes) can still reach
//! `t` by the moves above: a depth-first search over that state graph, which is finite and acyclic
//! (within a segment the level rises then falls, and every side hop clears an offset dimension or
//! spends a deroute), so a packet that starts in a feasible state only ever takes feasible moves and
//! arrives. This is the recoil of \[21\] and OpenSM's ftree rule made adaptive: an up port is offered
//! only if some switch above it has a live down path to `t`, and likewise a side link only if the
//! route can be completed from its far end. Where a fault set leaves some pair of live leaves without
//! such a route, [`Detours::check`] refuses it when the routing is built (exit 2), naming the pair
//! (every pair is searched up to [`PAIR_CHECK_LIMIT`] pairs; beyond, an unroutable pair shows when
//! one of its packets is injected, as the router's "no route" error, exit 3).
//! The search runs per hop with a per-thread mark array (no allocation, no hashing): in a region
//! without faults its first branch succeeds within the route's remaining hops.
//!
//! **Deadlock** (SPEC §5.3 scheme B, extended by the deroutes): the VC of a hop is the number of side
//! hops the packet has taken. A route takes at most `max(d_eff, 1)` minimal side hops (one per
//! offset dimension of its source, or the one back after leaving its source Z-node) plus its
//! deroutes, so `d_eff + 1 + max_deroutes` VCs.
//! Within one VC a packet only goes up\* then down\* (the gone-down bit), so Up channels ranked by
//! level, then Down channels by decreasing level, then side channels (which lead to the next VC)
//! order every dependency; the CDG is acyclic, which `hxsim check-deadlock` verifies. Scheme A's
//! ODim escape has a single route per pair that one failed link cuts, so it is not offered on a
//! faulty HyperZ with GHC dimensions. On a fat tree (`d = 0`) there are no side hops: routes are
//! up\*/down\* and deadlock free on any number of VCs, every VC usable on every hop.
//!
//! Where I had to choose: Down goes only towards `t` (a packet never descends elsewhere to find a
//! side link, which would need a down-then-up turn); a segment may rise above `L*` when no lower
//! switch has a usable link; the tiers make the rule's own (minimal) moves win whenever one can
//! complete, whatever the queues, as section 5.4 describes rerouting only where faults force it.

use super::hyperz_moves::Here;
use super::RouteState;
use crate::error::ConfigError;
use crate::topology::distances::DEBUG_CHECK_SWITCHES;
use crate::topology::{Fabric, HyperZ, PortId, SwitchId};
use rayon::prelude::*;
use std::cell::RefCell;
use std::ops::Range;
use std::sync::Arc;

/// Largest number of ordered pairs of live leaves [`Detours::check`] searches when the routing is
/// built (a few seconds in a release build).
pub const PAIR_CHECK_LIMIT: u64 = 1 << 22;

/// What a move does to the packet's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// To a parent.
    Up,
    /// To the child towards the destination.
    Down,
    /// A side hop to the destination's coordinate.
    Side,
    /// A side hop to another coordinate (DAL's deroute).
    Deroute,
}

/// The packet's fault-tolerance state, from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mode {
    /// It has gone down since its last side hop (it may not rise again before the next one).
    pub descending: bool,
    /// Deroutes taken.
    pub deroutes: u8,
    /// Side hops taken (deroutes included): scheme B's VC.
    pub sides: u8,
}

impl Mode {
    /// The state carried in `st` (`phase` bit 0, `phase >> 1` and `deroutes`).
    #[inline]
    pub fn of(st: &RouteState) -> Self {
        Mode { descending: st.phase & 1 != 0, deroutes: st.deroutes, sides: st.phase >> 1 }
    }
    /// The state after a move of kind `step`.
    #[inline]
    pub fn after(self, step: Step) -> Self {
        match step {
            Step::Up => self,
            Step::Down => Mode { descending: true, ..self },
            Step::Side => Mode { descending: false, sides: self.sides + 1, ..self },
            Step::Deroute => Mode { descending: false, deroutes: self.deroutes + 1, sides: self.sides + 1 },
        }
    }
    /// Writes this state into `st`.
    #[inline]
    pub fn store(self, st: &mut RouteState) {
        st.phase = self.descending as u8 | self.sides << 1;
        st.deroutes = self.deroutes;
    }
}

/// Per-thread marks of the feasibility search: entry `state` was visited in search generation
/// `seen[state]` and found to reach the destination in generation `good[state]`.
#[derive(Default)]
struct Marks {
    seen: Vec<u32>,
    good: Vec<u32>,
    generation: u32,
}

impl Marks {
    /// A new generation over at least `states` entries.
    fn start(&mut self, states: usize) {
        if self.seen.len() < states {
            self.seen.resize(states, 0);
            self.good.resize(states, 0);
        }
        if self.generation == u32::MAX {
            self.seen.fill(0);
            self.good.fill(0);
            self.generation = 0;
        }
        self.generation += 1;
    }
}

thread_local! {
    static MARKS: RefCell<Marks> = RefCell::new(Marks::default());
}

/// The fault-tolerant moves of the HyperZ routings over one faulty network (see the module doc).
pub struct Detours {
    net: Arc<Fabric>,
    /// Deroutes a packet may take.
    budget: u8,
    /// Search states: switches x gone-down bit x deroutes `0..=budget` x no side hop yet.
    states: usize,
}

impl Detours {
    /// The detours over `net` with `budget` deroutes per packet.
    pub fn new(net: Arc<Fabric>, budget: u8) -> Self {
        let states = net.num_switches() * 4 * (budget as usize + 1);
        Detours { net, budget, states }
    }

    /// Deroutes a packet may take.
    pub fn budget(&self) -> u8 {
        self.budget
    }

    /// The fabric.
    pub fn net(&self) -> &Fabric {
        &self.net
    }

    /// The search state of `m` at `x`: what the moves from there depend on.
    #[inline]
    fn key(&self, x: SwitchId, m: Mode) -> usize {
        ((x as usize * 2 + m.descending as usize) * 2 + (m.sides == 0) as usize) * (self.budget as usize + 1)
            + m.deroutes as usize
    }

    /// Whether some port of `ports` at `x` is alive.
    #[inline]
    pub fn live(&self, x: SwitchId, ports: Range<PortId>) -> bool {
        ports.into_iter().any(|p| self.net.alive(x, p))
    }

    /// Calls `f(step, ports)` for the port group of every move of a packet in mode `m` at `here`
    /// (dead ports included; each group leads to one switch), in the order the search tries them:
    /// minimal sides, down, up, deroutes. Stops and returns true as soon as `f` does.
    #[inline]
    pub fn groups(
        &self,
        hz: &HyperZ,
        here: &Here,
        m: Mode,
        tiers: Range<u8>,
        mut f: impl FnMut(Step, Range<PortId>) -> bool,
    ) -> bool {
        if tiers.contains(&2) {
            for k in here.offsets(hz) {
                if f(Step::Side, hz.side_ports(here.at, k, hz.coord(here.zb, k))) {
                    return true;
                }
            }
            if !here.up_phase {
                if let Some(r) = hz.down_port_to(here.at, here.dst_server) {
                    if f(Step::Down, r) {
                        return true;
                    }
                }
            }
            if !m.descending {
                let ups = hz.up_ports(here.at);
                let g = hz.internal_links().get(here.level).copied().unwrap_or(1) as PortId;
                let mut p = ups.start;
                while p < ups.end {
                    if f(Step::Up, p..p + g) {
                        return true;
                    }
                    p += g;
                }
            }
        }
        if tiers.contains(&3) && m.deroutes < self.budget {
            for k in here.offsets(hz) {
                let (a, b) = (hz.coord(here.za, k), hz.coord(here.zb, k));
                for w in (0..hz.sides()[k]).filter(|&w| w != a && w != b) {
                    if f(Step::Deroute, hz.side_ports(here.at, k, w)) {
                        return true;
                    }
                }
            }
            // Out of the source Z-node when it is the destination's: the way around a leaf cut off
            // inside it.
            if here.odim.is_none() && m.sides == 0 {
                for k in 0..hz.dims() {
                    let a = hz.coord(here.za, k);
                    for w in (0..hz.sides()[k]).filter(|&w| w != a) {
                        if f(Step::Deroute, hz.side_ports(here.at, k, w)) {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }

    /// Whether a packet in mode `m` at `x` can still reach the leaf `t` (see the module doc).
    /// Starts a new search generation, so a hop's queries should share one [`Detours::with_search`].
    pub fn reaches(&self, hz: &HyperZ, x: SwitchId, m: Mode, t: SwitchId) -> bool {
        self.with_search(|s| s.reaches(hz, x, m, t))
    }

    /// Runs `f` with a search whose memory of visited states lasts for all of `f`'s queries (they
    /// must share one destination).
    #[inline]
    pub fn with_search<T>(&self, f: impl FnOnce(&mut Search<'_>) -> T) -> T {
        MARKS.with_borrow_mut(|marks| {
            marks.start(self.states);
            f(&mut Search { d: self, marks })
        })
    }

    /// Refuses (exit 2) a fault set that leaves two live leaves without a route by these moves,
    /// searching every ordered pair of live leaves, when there are at most [`PAIR_CHECK_LIMIT`]
    /// (a thousand-switch HyperZ has tens of thousands). Larger networks are not searched up front:
    /// a pair the rule cannot route shows when a packet of it is injected, as the router's "no
    /// route" error (exit 3), which names the pair. Returns whether the pairs were searched.
    pub fn check(&self, hz: &HyperZ, name: &str, faults: &str) -> Result<bool, ConfigError> {
        let net = &*self.net;
        let leaves: Vec<SwitchId> =
            (0..hz.num_switches() as SwitchId).filter(|&s| hz.level(s) == 1 && net.switch_alive(s)).collect();
        let n = leaves.len() as u64;
        if n * n > PAIR_CHECK_LIMIT {
            return Ok(false);
        }
        let first = leaves
            .par_iter()
            .filter_map(|&s| {
                leaves.iter().find(|&&t| t != s && !self.reaches(hz, s, Mode::default(), t)).map(|&t| (s, t))
            })
            .min();
        match first {
            Some((s, t)) => Err(unroutable(name, faults, s, t, hz.dims() > 0)),
            None => Ok(true),
        }
    }
}

/// The error of a fault set the rule cannot route (`sides`: the network has GHC dimensions).
fn unroutable(name: &str, faults: &str, s: SwitchId, t: SwitchId, sides: bool) -> ConfigError {
    let moves = if sides {
        "up*-then-down* inside each Z-node towards live down paths, side hops at any level, at most \
         routing.max_deroutes deroutes"
    } else {
        "up* then down* towards live down paths"
    };
    ConfigError::value(
        "faults",
        if faults.is_empty() { "the configured faults".to_string() } else { faults.to_string() },
        format!(
            "a fault set {name} can route around: with it, leaf switch {s} has no route to leaf switch {t} by {name}'s \
             moves ({moves}); use fewer faults, another faults.seed, or a routing that takes any path (minimal, \
             surepath-aliod, surepath-minimal, updown, nue)"
        ),
    )
}

/// One hop's feasibility queries (see [`Detours::with_search`]).
pub struct Search<'a> {
    d: &'a Detours,
    marks: &'a mut Marks,
}

impl Search<'_> {
    /// Whether a packet in mode `m` at `x` can reach the leaf `t`.
    pub fn reaches(&mut self, hz: &HyperZ, x: SwitchId, m: Mode, t: SwitchId) -> bool {
        if x == t {
            return true;
        }
        if self.minimal_route_lives(hz, x, m, t) {
            debug_assert!(
                self.d.net.num_switches() > DEBUG_CHECK_SWITCHES || self.search(hz, x, m, t),
                "a live shortest path from {x} to {t}, but the search finds no route"
            );
            return true;
        }
        self.search(hz, x, m, t)
    }

    /// Whether a shortest path of the fault-free network from `x` to `t` survives (no distance
    /// exception for the pair: the faulty distance is the closed form) and the mode lets the packet
    /// take one. Then the search would find it: a fault-free shortest path to a leaf is made of the
    /// moves the search offers (Up while below the lowest common level, one Side to the
    /// destination's coordinate per offset dimension, Down towards the destination), and it
    /// starts with Up only when `x`'s zone does not hold the destination, which a packet that has
    /// gone down since its last side hop may not take. Most states of a lightly faulty network
    /// answer here, without walking their route.
    #[inline]
    pub(super) fn minimal_route_lives(&self, hz: &HyperZ, x: SwitchId, m: Mode, t: SwitchId) -> bool {
        let Some(ex) = self.d.net.tree_exceptions() else { return false };
        (!m.descending || hz.ancestor_contains(x, hz.first_server(t))) && x != t && !ex.differs(x, t)
    }

    /// The depth-first search behind [`Search::reaches`].
    pub(super) fn search(&mut self, hz: &HyperZ, x: SwitchId, m: Mode, t: SwitchId) -> bool {
        if x == t {
            return true;
        }
        let key = self.d.key(x, m);
        let gen = self.marks.generation;
        if self.marks.seen[key] == gen {
            // The state graph is acyclic, so a visited state is finished: its answer stands.
            return self.marks.good[key] == gen;
        }
        self.marks.seen[key] = gen;
        let here = Here::new(hz, x, t);
        let d = self.d;
        let found = d.groups(hz, &here, m, 2..4, |step, ports| {
            d.live(x, ports.clone()) && {
                let next = hz.neighbour(x, ports.start).expect("HyperZ ports are wired").0;
                self.reaches(hz, next, m.after(step), t)
            }
        });
        if found {
            self.marks.good[key] = gen;
        }
        found
    }
}

/// The step a move through `port` of `at` is, for a packet bound to Z-node `zb`.
#[inline]
pub fn step_of(hz: &HyperZ, at: SwitchId, port: PortId, zb: u32) -> Step {
    use crate::topology::hyperz::PortKind;
    match hz.port_kind(at, port) {
        Some(PortKind::Up) => Step::Up,
        Some(PortKind::Down) => Step::Down,
        Some(PortKind::Side { dim }) => {
            let next = hz.neighbour(at, port).expect("HyperZ ports are wired").0;
            if hz.coord(hz.znode(next), dim) == hz.coord(zb, dim) {
                Step::Side
            } else {
                Step::Deroute
            }
        }
        None => unreachable!("port {port} of switch {at} is not a switch port"),
    }
}

/// The fault-tolerance state update of a hop through `port` of `at` (see [`super::Routing::advance`]).
#[inline]
pub fn advance(hz: &HyperZ, st: &mut RouteState, at: SwitchId, port: PortId) {
    let m = Mode::of(st).after(step_of(hz, at, port, hz.znode(st.dst)));
    m.store(st);
}
