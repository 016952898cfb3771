//! Channel dependency graph (CDG) analysis behind `hxsim check-deadlock`.
//!
//! A *channel* is a switch-to-switch link direction with a VC, named `(switch, port, vc)` by the
//! switch that sends on it. A packet holding channel `c` (it sits in the input buffer `c` leads to)
//! may wait for any channel its routing offers next, which is a dependency `c -> c'` (Dally and
//! Seitz; DAVC paper Definition 3.5). Injection and ejection channels are dedicated to one server,
//! so nothing depends on injection channels and ejection channels depend on nothing: neither can
//! be part of a cycle, and they are left out.
//!
//! To find every dependency the routing can produce, the analysis follows every state a packet
//! between two switches with servers can reach, starting from every state
//! [`Routing::init_choices`] can produce at its source and following every candidate with
//! [`step`] and [`Routing::advance`]. Along the way it records the longest route, states with no
//! candidate (the packet could never move: reported as unroutable), and candidates on dead ports
//! or on VCs beyond [`Routing::vcs`]. Two explorations do this:
//! - [`check_exact`], the reference: for every ordered pair `(s, t)`, every `(switch, channel
//!   held, last C1 channel taken, RouteState)`, one packet's route at a time.
//! - [`check`], what `hxsim check-deadlock` runs: one exploration per destination `t` for all
//!   sources together, hop count by hop count, over *classes* of states: the states at one switch
//!   with one hop count that [`Routing::analysis_state`] reduces alike (a SurePath packet in the
//!   escape is one class per switch and hop count, whatever its source, deroutes, VC and channel
//!   held). Nothing a class does depends on how its packets got there, so each class's candidates
//!   are computed once; the channels that lead into it are not part of it: each candidate's
//!   channel depends on every candidate of the class it leads to, kept as one row of bits per
//!   channel over the ports and VCs of its far switch (`ports x vcs` bits). The last `C1` channels
//!   of the class's packets travel along as a set per class. The dependencies, channels used,
//!   longest route and verdict are those of [`check_exact`] (`deadlock_tests.rs` compares the two
//!   on the test suite's networks and routings, and on routings made to fail each way); only
//!   `states` counts classes. Debug builds check [`Routing::analysis_state`]'s contract on every
//!   state one hop from a class, and the routing's candidate runs against its candidates.
//!
//! Verdicts:
//! - routings that rely on an acyclic CDG (ladder, DAVC, DOR, ...): the CDG of all channels must be
//!   acyclic; otherwise one cycle is reported.
//! - escape-based routings ([`Routing::escape_based`]: SurePath, DAL): Duato's sufficient condition.
//!   The escape subfunction `R1` ([`Routing::escape_subfunction`]) must (a) be offered in every
//!   reachable state, (b) be connected (from every switch, following `R1` reaches every switch
//!   with servers), and (c) have an acyclic *extended* CDG over its channels `C1`: `c1 -> c2` for
//!   `c1, c2` in `C1` whenever some route goes from `c1` to `c2` directly or through channels
//!   outside `C1`. The exploration carries, per packet state, the last `C1` channel the packet
//!   took, so these direct and indirect dependencies are exactly Duato's (one packet's route).
//!   When some state uses a `C1` channel as a channel outside its own `R1` (Duato's *cross*
//!   dependencies), the indirect paths are instead taken in the CDG of all channels, which joins
//!   pieces of different packets' routes: a superset of Duato's graph, so acyclicity is still
//!   sufficient but a cycle may be spurious. Routings whose packets never leave the escape once in
//!   it (SurePath, DAL) get the same graph either way; those that may return to adaptive channels
//!   (the HyperZ scheme A) need the exact one.
//!
//! Cost: [`check_exact`] takes the reachable `(state, channel held, last C1 channel)` of every
//! pair times their candidates, about switches^3.5 on a HyperX (SurePath on the 16x16 of the
//! papers gave no answer in ten minutes). [`check`] takes the classes times their candidates:
//! per destination, switches x hop counts x what the routing keeps (its deroutes for OmniSP,
//! OmniWAR and DAL, so about switches^2 in all; its source for Polarized and PolSP, whose routes
//! depend on it, so about switches^3). One core, release build: OmniSP, OmniWAR and DAL in under
//! a second on the 16x16 and in seconds on the 8x8x8, Polarized and PolSP in about 5 and 10 s on
//! the 16x16 and 40 s and 100 s on the 8x8x8 (docs/performance-log.md, 2026-11-28).

use super::{cdg, runs_of, step, Candidate, CandidateRun, RouteState, Routing};
use crate::topology::{Fabric, PortId, SwitchId};
use serde::Serialize;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// A channel: the link leaving `switch` through topology port `port`, on VC `vc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Channel {
    /// Sending switch.
    pub switch: SwitchId,
    /// Topology port of the sending switch.
    pub port: PortId,
    /// Virtual channel.
    pub vc: u8,
}

impl std::fmt::Display for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {}, {})", self.switch, self.port, self.vc)
    }
}

/// Where a packet was when something went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Place {
    /// Source switch of the packet.
    pub src: SwitchId,
    /// Destination switch.
    pub dst: SwitchId,
    /// Switch it was at.
    pub at: SwitchId,
    /// Hops it had taken.
    pub hops: u32,
}

/// Outcome of the analysis.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// The CDG of all channels is acyclic: deadlock free.
    Acyclic,
    /// Duato's condition holds for the escape subfunction: deadlock free.
    Duato {
        /// Channels of the escape subfunction.
        escape_channels: usize,
        /// Dependencies of its extended CDG.
        extended_dependencies: usize,
        /// Whether the CDG of all channels happens to be acyclic as well.
        full_cdg_acyclic: bool,
    },
    /// A cycle in the CDG of all channels.
    Cycle {
        /// The channels of the cycle, each depending on the next, the last on the first.
        channels: Vec<Channel>,
    },
    /// A cycle in the extended CDG of the escape subfunction.
    EscapeCycle {
        /// The channels of the cycle.
        channels: Vec<Channel>,
    },
    /// The escape subfunction cannot bring a packet from `from` to `to`.
    EscapeDisconnected {
        /// Switch.
        from: SwitchId,
        /// Destination.
        to: SwitchId,
    },
    /// A reachable state does not offer the escape subfunction's channel `missing`.
    EscapeNotOffered {
        /// The state.
        place: Place,
        /// A channel of `R1(at, dst)` not among the candidates.
        missing: Channel,
    },
    /// A reachable state offers no candidate: the packet can never move.
    Unroutable {
        /// The state.
        place: Place,
    },
    /// A candidate on a dead or unwired port, or on a VC the routing does not have.
    InvalidCandidate {
        /// The state.
        place: Place,
        /// The candidate's channel.
        channel: Channel,
    },
    /// A route exceeded the exploration bound (a routing that can loop forever).
    RouteTooLong {
        /// The state.
        place: Place,
    },
}

/// What `check` found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Routing name.
    pub routing: String,
    /// VCs per port.
    pub vcs: usize,
    /// Switches.
    pub switches: usize,
    /// Source-destination switch pairs explored.
    pub pairs: u64,
    /// Routing states explored: by [`check`], classes of states (per destination, switch, hop
    /// count and [`Routing::analysis_state`]); by [`check_exact`], `(state, channel held, last C1
    /// channel)` of every pair.
    pub states: u64,
    /// Longest route found, switch-to-switch hops.
    pub longest_route: u32,
    /// Channels some route uses.
    pub channels_used: usize,
    /// VCs the routes can reach: the highest VC of a channel some route uses, plus one (0 when no
    /// route leaves its switch). For a DAVC policy this is the VC count the allocation function
    /// needs on this network and routing (DAVC paper section 8, "VC utilization"), which the
    /// configured `vcs` only bounds.
    pub vcs_needed: usize,
    /// Dependencies of the CDG of all channels.
    pub dependencies: usize,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
}

impl Report {
    /// Whether the verdict shows deadlock freedom.
    pub fn deadlock_free(&self) -> bool {
        matches!(self.verdict, Verdict::Acyclic | Verdict::Duato { .. })
    }
}

/// FxHash-style hasher: the exploration hashes millions of small keys.
#[derive(Default)]
pub(crate) struct Fx(u64);

impl Hasher for Fx {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
}

/// A hash set with [`Fx`] hashing.
pub(crate) type FxSet<T> = HashSet<T, BuildHasherDefault<Fx>>;
/// A hash map with [`Fx`] hashing.
pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

/// Dependency set: a bit matrix for small channel counts, a hash set otherwise.
enum Edges {
    Bits { n: usize, bits: Vec<u64>, count: usize },
    Hash(FxSet<u64>),
}

impl Edges {
    fn new(n: usize) -> Self {
        if n <= 16384 {
            Edges::Bits { n, bits: vec![0; (n * n).div_ceil(64)], count: 0 }
        } else {
            Edges::Hash(FxSet::default())
        }
    }
    #[inline]
    fn insert(&mut self, a: u32, b: u32) {
        match self {
            Edges::Bits { n, bits, count } => {
                let i = a as usize * *n + b as usize;
                let (w, m) = (i / 64, 1u64 << (i % 64));
                if bits[w] & m == 0 {
                    bits[w] |= m;
                    *count += 1;
                }
            }
            Edges::Hash(h) => {
                h.insert(((a as u64) << 32) | b as u64);
            }
        }
    }
    fn len(&self) -> usize {
        match self {
            Edges::Bits { count, .. } => *count,
            Edges::Hash(h) => h.len(),
        }
    }
    /// Adjacency lists over `n` nodes.
    fn adjacency(&self, n: usize) -> Vec<Vec<u32>> {
        let mut adj = vec![Vec::new(); n];
        match self {
            Edges::Bits { n: m, bits, .. } => {
                for (w, &word) in bits.iter().enumerate() {
                    let mut x = word;
                    while x != 0 {
                        let i = w * 64 + x.trailing_zeros() as usize;
                        x &= x - 1;
                        adj[i / m].push((i % m) as u32);
                    }
                }
            }
            Edges::Hash(h) => {
                for &e in h {
                    adj[(e >> 32) as usize].push(e as u32);
                }
                for a in &mut adj {
                    a.sort_unstable();
                }
            }
        }
        adj
    }
}

/// One cycle of the directed graph `adj` restricted to nodes with `keep[node]`, if any.
pub fn find_cycle(adj: &[Vec<u32>], keep: &dyn Fn(usize) -> bool) -> Option<Vec<u32>> {
    const WHITE: u8 = 0;
    const GREY: u8 = 1;
    const BLACK: u8 = 2;
    let n = adj.len();
    let mut color = vec![WHITE; n];
    let mut stack: Vec<(u32, usize)> = Vec::new();
    for root in 0..n {
        if color[root] != WHITE || !keep(root) {
            continue;
        }
        color[root] = GREY;
        stack.push((root as u32, 0));
        while let Some(&mut (v, ref mut i)) = stack.last_mut() {
            if let Some(&w) = adj[v as usize].get(*i) {
                *i += 1;
                if !keep(w as usize) {
                    continue;
                }
                match color[w as usize] {
                    WHITE => {
                        color[w as usize] = GREY;
                        stack.push((w, 0));
                    }
                    GREY => {
                        let from = stack.iter().position(|&(x, _)| x == w).expect("grey nodes are on the stack");
                        return Some(stack[from..].iter().map(|&(x, _)| x).collect());
                    }
                    _ => {}
                }
            } else {
                color[v as usize] = BLACK;
                stack.pop();
            }
        }
    }
    None
}

/// Channel ids: `(switch * ports + port) * vcs + vc`.
#[derive(Clone, Copy)]
struct Ids {
    ports: usize,
    vcs: usize,
}

impl Ids {
    #[inline]
    fn id(&self, sw: SwitchId, port: PortId, vc: u8) -> u32 {
        ((sw as usize * self.ports + port as usize) * self.vcs + vc as usize) as u32
    }

    fn channel(&self, id: u32) -> Channel {
        let id = id as usize;
        let vc = (id % self.vcs) as u8;
        let link = id / self.vcs;
        Channel { switch: (link / self.ports) as SwitchId, port: (link % self.ports) as PortId, vc }
    }
}

/// What an exploration found, from which both checkers conclude alike.
struct Found {
    ids: Ids,
    /// The CDG of all channels, each list in increasing order.
    adj: Vec<Vec<u32>>,
    dependencies: usize,
    used: Vec<bool>,
    /// Escape-based routings: whether each channel is in `C1`.
    in_c1: Vec<bool>,
    /// Direct and indirect dependencies between `C1` channels along single routes, `a << 32 | b`.
    esc_edges: FxSet<u64>,
    /// A `C1` channel was offered outside `R1` of its state (a cross dependency).
    cross: bool,
    problem: Option<Verdict>,
    pairs: u64,
    states: u64,
    longest: u32,
}

/// The exploration bound on a route's hops: far beyond any route of a routing that cannot loop.
fn hop_limit(switches: usize) -> u32 {
    (4 * switches as u32).max(64).min(u16::MAX as u32 - 1)
}

/// Live switches with servers: packets travel only between these (all of a HyperX; the leaves of
/// trees and HyperZ).
fn endpoints(net: &Fabric) -> Vec<SwitchId> {
    (0..net.num_switches() as SwitchId).filter(|&s| net.servers_at(s) > 0 && net.switch_alive(s)).collect()
}

/// Build the CDG that `routing` can produce on `net` and decide whether it is deadlock free.
///
/// States that [`Routing::analysis_state`] reduces alike are explored once per destination and hop
/// count (see the module doc); the verdict and every count but `states` equal those of
/// [`check_exact`].
pub fn check(net: &Fabric, routing: &dyn Routing) -> Report {
    let n = net.num_switches();
    let ids = Ids { ports: net.max_switch_ports(), vcs: routing.vcs().max(1) };
    let channels = n * ids.ports * ids.vcs;
    let words = (ids.ports * ids.vcs).div_ceil(64);
    let (head, _) = cdg::wiring(net, ids.ports);
    let escape = routing.escape_based();
    let mut m = Merged {
        routing,
        ids,
        words,
        escape,
        head,
        used: vec![0; n * words],
        out: vec![0; channels * words],
        in_c1: if escape { escape_channels(net, routing, ids) } else { Vec::new() },
        in_c1_bits: vec![0; if escape { n * words } else { 0 }],
        r1: Vec::new(),
        r1_first: Vec::new(),
        r1_bits: vec![0; if escape { n * words } else { 0 }],
        esc_edges: FxSet::default(),
        cross: false,
        problem: None,
        states: 0,
        longest: 0,
        hop_limit: hop_limit(n),
        cands: Vec::new(),
        runs: Vec::new(),
    };
    let width = ids.ports * ids.vcs;
    for (ch, _) in m.in_c1.iter().enumerate().filter(|(_, &c)| c) {
        let (x, q) = (ch / width, ch % width);
        m.in_c1_bits[x * words + q / 64] |= 1 << (q % 64);
    }
    let ends = endpoints(net);
    let (mut cur, mut next) = (Level::new(n), Level::new(n));
    let mut inits = Vec::new();
    let mut pairs = 0u64;
    for &dst in &ends {
        if escape {
            m.escape_subfunction_to(dst);
        }
        cur.clear();
        for &src in ends.iter().filter(|&&s| s != dst) {
            pairs += 1;
            routing.init_choices(&RouteState { src, dst, ..Default::default() }, &mut |st| inits.push(st));
            for st in inits.drain(..) {
                let key = routing.analysis_state(&st);
                #[cfg(debug_assertions)]
                m.check_reduction(src, &st, &key);
                m.class(&mut cur, src, key, src);
            }
        }
        while !cur.classes.is_empty() {
            next.clear();
            m.expand(&cur, &mut next, dst);
            std::mem::swap(&mut cur, &mut next);
        }
    }
    // The CDG from the rows of dependencies: channel `a`, into switch `x`, depends on channel
    // `x * ports * vcs + q` for each bit `q` of its row.
    let mut dependencies = 0;
    let adj: Vec<Vec<u32>> = (0..channels)
        .map(|a| {
            let row = &m.out[a * words..(a + 1) * words];
            let mut list = Vec::new();
            for (k, &word) in row.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let q = k * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    list.push((m.head[a / ids.vcs] as usize * width + q) as u32);
                }
            }
            dependencies += list.len();
            list
        })
        .collect();
    conclude(
        net,
        routing,
        Found {
            ids,
            adj,
            dependencies,
            used: (0..channels)
                .map(|ch| m.used[ch / width * words + ch % width / 64] >> (ch % width % 64) & 1 != 0)
                .collect(),
            in_c1: m.in_c1,
            esc_edges: m.esc_edges,
            cross: m.cross,
            problem: m.problem,
            pairs,
            states: m.states,
            longest: m.longest,
        },
    )
}

/// Set bits `from..to` of `row`.
#[inline]
fn set_bits(row: &mut [u64], from: usize, to: usize) {
    let mut i = from;
    while i < to {
        let end = ((i / 64 + 1) * 64).min(to);
        let ones = if end - i == 64 { !0 } else { (1u64 << (end - i)) - 1 };
        row[i / 64] |= ones << (i % 64);
        i = end;
    }
}

/// Whether `a` and `b` are equal, field by field: comparing a state just written field by field
/// (by [`Routing::analysis_state`]) as wide words would stall on the stores.
#[inline]
fn same_state(a: &RouteState, b: &RouteState) -> bool {
    let RouteState { src, dst, hops, intermediate, phase, deroutes, dim_mask, escape, vc, last_port, dst_port } = *a;
    ((src ^ b.src) | (dst ^ b.dst) | (intermediate ^ b.intermediate)) == 0
        && ((hops ^ b.hops) | (dim_mask ^ b.dim_mask) | (last_port ^ b.last_port) | (dst_port ^ b.dst_port)) == 0
        && ((phase ^ b.phase) | (deroutes ^ b.deroutes) | (vc ^ b.vc) | (escape ^ b.escape) as u8) == 0
}

/// A class of the packet states to one destination with one hop count: those that
/// [`Routing::analysis_state`] reduces to `st` at switch `at`.
#[derive(Clone, Copy)]
struct Class {
    at: SwitchId,
    st: RouteState,
    /// The source of some packet of the class (the [`Place`] of a problem found there).
    src: SwitchId,
    /// Its valid candidates: `len` runs of the level's `runs` from `first`.
    first: u32,
    len: u32,
}

/// A class's switch and reduced state, the key of the level's index: hashed as three words, since
/// the index is looked up for every class a candidate leads to.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key(SwitchId, RouteState);

impl Hash for Key {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        // Every field, named: one added to `RouteState` does not compile here until it is hashed.
        let RouteState { src, dst, hops, intermediate, phase, deroutes, dim_mask, escape, vc, last_port, dst_port } =
            self.1;
        h.write_u64((self.0 as u64) << 32 | src as u64 ^ (dst_port as u64) << 48);
        h.write_u64((dst as u64) << 32 | intermediate as u64);
        h.write_u64(
            ((hops as u64) << 48
                | (dim_mask as u64) << 32
                | (last_port as u64) << 16
                | (phase as u64) << 8
                | deroutes as u64)
                ^ ((vc as u64) << 1 | escape as u64) << 55,
        );
    }
}

/// The classes of one hop count, for one destination.
struct Level {
    classes: Vec<Class>,
    /// The classes by the source of their reduced state (`st.src`, the default where the routing
    /// reduces it away), then by key. Classes that keep their source (Polarized's) are only ever
    /// looked up by packets of that source, which the exploration follows together: the few
    /// classes of one source stay in the cache, where one index of all would not.
    index: Vec<FxMap<Key, u32>>,
    /// The sources whose index is not empty.
    indexed: Vec<SwitchId>,
    /// Per switch, the class there looked up last (`u32::MAX`: none): packets of one source are
    /// followed together, so the next lookup at a switch is mostly for the same class, which this
    /// finds without hashing.
    last: Vec<u32>,
    /// Valid candidates of the classes as runs, each with the switch it leads to.
    runs: Vec<(CandidateRun, SwitchId)>,
    /// Per class, `words` words: its valid candidates' channels as bits `port * vcs + vc`.
    bits: Vec<u64>,
    /// `(class, channel)`: the last `C1` channel some packet of the class took (packets that took
    /// none add no extended dependency and are not listed).
    escs: Vec<(u32, u32)>,
}

impl Level {
    fn new(switches: usize) -> Self {
        Level {
            classes: Vec::new(),
            index: (0..switches).map(|_| FxMap::default()).collect(),
            indexed: Vec::new(),
            last: vec![u32::MAX; switches],
            runs: Vec::new(),
            bits: Vec::new(),
            escs: Vec::new(),
        }
    }

    fn clear(&mut self) {
        self.classes.clear();
        for &s in &self.indexed {
            self.index[s as usize].clear();
        }
        self.indexed.clear();
        self.last.fill(u32::MAX);
        self.runs.clear();
        self.bits.clear();
        self.escs.clear();
    }
}

/// The exploration behind [`check`].
struct Merged<'a> {
    routing: &'a dyn Routing,
    ids: Ids,
    /// Words of a row of channel bits (`ports * vcs` bits).
    words: usize,
    escape: bool,
    /// The far switch of each link `switch * ports + port` (`u32::MAX`: dead or unwired).
    head: Vec<u32>,
    /// The channels used, a row of `words` words per switch (bit `port * vcs + vc`).
    used: Vec<u64>,
    /// Per channel, a row of `words` words: bit `port * vcs + vc` when the channel leaving its far
    /// switch through `port` on `vc` depends on it.
    out: Vec<u64>,
    in_c1: Vec<bool>,
    /// `in_c1` as rows, as `used`.
    in_c1_bits: Vec<u64>,
    /// `R1(x, dst)` of every switch `x` for the destination explored: the lists one after the other
    /// (switch `x`'s from `r1_first[x]`), and as rows of channel bits (`words` words per switch;
    /// only its valid channels).
    r1: Vec<Candidate>,
    r1_first: Vec<u32>,
    r1_bits: Vec<u64>,
    esc_edges: FxSet<u64>,
    cross: bool,
    problem: Option<Verdict>,
    states: u64,
    longest: u32,
    hop_limit: u32,
    cands: Vec<Candidate>,
    runs: Vec<CandidateRun>,
}

impl Merged<'_> {
    fn note(&mut self, v: Verdict) {
        if self.problem.is_none() {
            self.problem = Some(v);
        }
    }

    /// The bit of the channel on `port` and `vc` in a row, if both are in range.
    #[inline]
    fn bit(&self, port: PortId, vc: u8) -> Option<usize> {
        ((vc as usize) < self.ids.vcs && (port as usize) < self.ids.ports)
            .then(|| port as usize * self.ids.vcs + vc as usize)
    }

    /// Tabulate `R1(x, dst)` for every switch `x`.
    fn escape_subfunction_to(&mut self, dst: SwitchId) {
        let (n, w) = (self.head.len() / self.ids.ports, self.words);
        self.r1.clear();
        self.r1_first.clear();
        self.r1_bits.fill(0);
        for x in 0..n as SwitchId {
            self.r1_first.push(self.r1.len() as u32);
            let from = self.r1.len();
            self.routing.escape_subfunction(x, dst, &mut self.r1);
            for i in from..self.r1.len() {
                if let Some(q) = self.bit(self.r1[i].port, self.r1[i].vc) {
                    self.r1_bits[x as usize * w + q / 64] |= 1 << (q % 64);
                }
            }
        }
        self.r1_first.push(self.r1.len() as u32);
    }

    /// The class of the reduced state `st` at `at` in `level`. A new class's candidates are
    /// checked (the problems, the channels used, the cross dependencies and the longest route are
    /// properties of the class, not of how packets reach it) and written to the level.
    fn class(&mut self, level: &mut Level, at: SwitchId, st: RouteState, src: SwitchId) -> u32 {
        let last = level.last[at as usize];
        if last != u32::MAX && same_state(&level.classes[last as usize].st, &st) {
            return last;
        }
        let bucket = st.src as usize % level.index.len();
        let i = level.classes.len() as u32;
        match level.index[bucket].entry(Key(at, st)) {
            Entry::Occupied(e) => {
                level.last[at as usize] = *e.get();
                return *e.get();
            }
            Entry::Vacant(e) => {
                e.insert(i);
            }
        }
        level.last[at as usize] = i;
        if level.index[bucket].len() == 1 {
            level.indexed.push(bucket as SwitchId);
        }
        let (first, base, w) = (level.runs.len(), level.bits.len(), self.words);
        level.bits.resize(base + w, 0);
        let (dst, hops) = (st.dst, st.hops as u32);
        let place = Place { src, dst, at, hops };
        let mut runs = std::mem::take(&mut self.runs);
        runs.clear();
        if hops > self.hop_limit {
            self.note(Verdict::RouteTooLong { place });
        } else {
            self.candidate_runs(at, &st, &mut runs);
            if runs.iter().all(|r| r.lo >= r.hi) {
                self.note(Verdict::Unroutable { place });
                runs.clear();
            }
        }
        let r1_row = at as usize * w;
        if self.escape && !runs.is_empty() {
            let r1 = &self.r1[self.r1_first[at as usize] as usize..self.r1_first[at as usize + 1] as usize];
            if let Some(m) = r1.iter().find(|e| !runs.iter().any(|r| r.port == e.port && (r.lo..r.hi).contains(&e.vc)))
            {
                let missing = Channel { switch: at, port: m.port, vc: m.vc };
                self.note(Verdict::EscapeNotOffered { place, missing });
            }
        }
        for r in &runs {
            // The run's VCs below `vcs`, if its port leads somewhere; the others are invalid.
            let to =
                self.bit(r.port, 0).map_or(u32::MAX, |_| self.head[at as usize * self.ids.ports + r.port as usize]);
            let valid = if to == u32::MAX { r.lo..r.lo } else { r.lo..r.hi.min(self.ids.vcs as u8).max(r.lo) };
            if valid.end < r.hi {
                let channel = Channel { switch: at, port: r.port, vc: valid.end };
                self.note(Verdict::InvalidCandidate { place, channel });
            }
            if valid.is_empty() {
                continue;
            }
            let q0 = r.port as usize * self.ids.vcs;
            set_bits(&mut level.bits[base..base + w], q0 + valid.start as usize, q0 + valid.end as usize);
            if to == dst {
                self.longest = self.longest.max(hops + 1);
            }
            level.runs.push((CandidateRun { lo: valid.start, hi: valid.end, ..*r }, to));
        }
        self.runs = runs;
        // The class's channels are used; those in `C1` but not in its `R1` are cross dependencies.
        let row = at as usize * w;
        for x in 0..w {
            let b = level.bits[base + x];
            self.used[row + x] |= b;
            if self.escape && b & !self.r1_bits[r1_row + x] & self.in_c1_bits[row + x] != 0 {
                self.cross = true;
            }
        }
        let len = (level.runs.len() - first) as u32;
        level.classes.push(Class { at, st, src, first: first as u32, len });
        i
    }

    /// The candidates of `st` at `at` as runs: the routing's own, or its candidates made runs.
    /// Debug builds check that the two agree.
    fn candidate_runs(&mut self, at: SwitchId, st: &RouteState, runs: &mut Vec<CandidateRun>) {
        let own = self.routing.candidate_runs(at, st, runs);
        if !own || cfg!(debug_assertions) {
            self.cands.clear();
            self.routing.candidates(at, st, &mut self.cands);
        }
        if !own {
            runs_of(&self.cands, runs);
        } else if cfg!(debug_assertions) {
            let expanded: Vec<Candidate> = runs.iter().flat_map(|r| (r.lo..r.hi).map(|vc| r.candidate(vc))).collect();
            assert_eq!(
                expanded,
                self.cands,
                "{}: candidate_runs and candidates at {at} for {st:?}",
                self.routing.name()
            );
        }
    }

    /// Follow every candidate of the classes of `cur` into the classes of `next`, one hop more:
    /// each candidate's channel depends on every candidate of the class it leads to, and the last
    /// `C1` channels taken travel along (Duato's indirect dependencies).
    fn expand(&mut self, cur: &Level, next: &mut Level, dst: SwitchId) {
        let w = self.words;
        let mut escs = cur.escs.clone();
        escs.sort_unstable();
        escs.dedup();
        let mut e0 = 0;
        for (i, k) in cur.classes.iter().enumerate() {
            self.states += 1;
            let e1 = e0 + escs[e0..].iter().take_while(|e| e.0 == i as u32).count();
            let last_esc = &escs[e0..e1];
            e0 = e1;
            let r1_row = k.at as usize * w;
            for &(r, to) in &cur.runs[k.first as usize..(k.first + k.len) as usize] {
                // A run's VCs mostly lead to the same class.
                let mut prev: Option<(RouteState, u32)> = None;
                for vc in r.lo..r.hi {
                    let c = r.candidate(vc);
                    let ch = self.ids.id(k.at, c.port, c.vc);
                    let q = c.port as usize * self.ids.vcs + c.vc as usize;
                    let in_r1 = self.escape && self.r1_bits[r1_row + q / 64] >> (q % 64) & 1 != 0;
                    if in_r1 {
                        for &(_, e) in last_esc {
                            self.esc_edges.insert((e as u64) << 32 | ch as u64);
                        }
                    }
                    if to == dst {
                        continue;
                    }
                    let mut s = k.st;
                    step(&mut s, &c);
                    self.routing.advance(&mut s, k.at, to, &c);
                    let key = self.routing.analysis_state(&s);
                    #[cfg(debug_assertions)]
                    self.check_reduction(to, &s, &key);
                    let j = match prev {
                        Some((st, j)) if same_state(&st, &key) => j,
                        _ => {
                            let j = self.class(next, to, key, k.src);
                            prev = Some((key, j));
                            j
                        }
                    };
                    let (row, b) = (ch as usize * w, j as usize * w);
                    for x in 0..w {
                        self.out[row + x] |= next.bits[b + x];
                    }
                    if in_r1 {
                        next.escs.push((j, ch));
                    } else {
                        next.escs.extend(last_esc.iter().map(|&(_, e)| (j, e)));
                    }
                }
            }
        }
    }

    /// Debug builds: [`Routing::analysis_state`] keeps its contract on `st` at `at` (the same
    /// destination and hops, the same candidates, and successors that reduce alike).
    #[cfg(debug_assertions)]
    fn check_reduction(&self, at: SwitchId, st: &RouteState, key: &RouteState) {
        if st == key {
            return;
        }
        let name = self.routing.name();
        assert!(key.dst == st.dst && key.hops == st.hops, "{name}: analysis_state of {st:?} is {key:?}");
        let (mut a, mut b) = (Vec::new(), Vec::new());
        self.routing.candidates(at, st, &mut a);
        self.routing.candidates(at, key, &mut b);
        assert_eq!(a, b, "{name}: the candidates at {at} of {st:?} and of its analysis_state {key:?}");
        for c in &a {
            let Some(to) = self.bit(c.port, c.vc).map(|_| self.head[at as usize * self.ids.ports + c.port as usize])
            else {
                continue;
            };
            if to == u32::MAX {
                continue;
            }
            let (mut x, mut y) = (*st, *key);
            step(&mut x, c);
            step(&mut y, c);
            self.routing.advance(&mut x, at, to, c);
            self.routing.advance(&mut y, at, to, c);
            assert_eq!(
                self.routing.analysis_state(&x),
                self.routing.analysis_state(&y),
                "{name}: after {c:?} at {at}, {st:?} and its analysis_state {key:?}"
            );
        }
    }
}

/// Build the CDG that `routing` can produce on `net` from every state of every single route (the
/// reference [`check`] is tested against): every pair of switches, every `(switch, channel
/// held, last C1 channel, state)` a packet between them can reach.
pub fn check_exact(net: &Fabric, routing: &dyn Routing) -> Report {
    let n = net.num_switches();
    let ids = Ids { ports: net.max_switch_ports(), vcs: routing.vcs().max(1) };
    let channels = n * ids.ports * ids.vcs;
    let mut ex = Explorer {
        net,
        routing,
        ids,
        used: vec![false; channels],
        edges: Edges::new(channels),
        in_c1: Vec::new(),
        esc_edges: FxSet::default(),
        cross: false,
        problem: None,
        states: 0,
        longest: 0,
        hop_limit: hop_limit(n),
    };
    if routing.escape_based() {
        ex.in_c1 = escape_channels(net, routing, ids);
    }
    let mut pairs = 0u64;
    let ends = endpoints(net);
    for &src in &ends {
        for &dst in &ends {
            if src != dst {
                ex.pair(src, dst);
                pairs += 1;
            }
        }
    }
    conclude(
        net,
        routing,
        Found {
            ids,
            adj: ex.edges.adjacency(channels),
            dependencies: ex.edges.len(),
            used: ex.used,
            in_c1: ex.in_c1,
            esc_edges: ex.esc_edges,
            cross: ex.cross,
            problem: ex.problem,
            pairs,
            states: ex.states,
            longest: ex.longest,
        },
    )
}

/// The exploration behind [`check_exact`].
struct Explorer<'a> {
    net: &'a Fabric,
    routing: &'a dyn Routing,
    ids: Ids,
    used: Vec<bool>,
    edges: Edges,
    in_c1: Vec<bool>,
    esc_edges: FxSet<u64>,
    cross: bool,
    problem: Option<Verdict>,
    states: u64,
    longest: u32,
    hop_limit: u32,
}

const NO_CHANNEL: u32 = u32::MAX;

impl Explorer<'_> {
    fn note(&mut self, v: Verdict) {
        if self.problem.is_none() {
            self.problem = Some(v);
        }
    }

    /// Explore every state of packets from `src` to `dst`.
    fn pair(&mut self, src: SwitchId, dst: SwitchId) {
        let escape = self.routing.escape_based();
        // (switch, channel held, last escape channel taken, state)
        let mut visited: FxSet<(SwitchId, u32, u32, RouteState)> = FxSet::default();
        let mut stack: Vec<(SwitchId, u32, u32, RouteState)> = Vec::new();
        self.routing.init_choices(&RouteState { src, dst, ..Default::default() }, &mut |st| {
            stack.push((src, NO_CHANNEL, NO_CHANNEL, st))
        });
        let mut cands: Vec<Candidate> = Vec::new();
        let mut r1: Vec<Candidate> = Vec::new();
        while let Some(key) = stack.pop() {
            if !visited.insert(key) {
                continue;
            }
            let (at, held, last_esc, st) = key;
            self.states += 1;
            let place = Place { src, dst, at, hops: st.hops as u32 };
            if st.hops as u32 > self.hop_limit {
                self.note(Verdict::RouteTooLong { place });
                continue;
            }
            cands.clear();
            self.routing.candidates(at, &st, &mut cands);
            if cands.is_empty() {
                self.note(Verdict::Unroutable { place });
                continue;
            }
            if escape {
                r1.clear();
                self.routing.escape_subfunction(at, dst, &mut r1);
                if let Some(m) = r1.iter().find(|e| !cands.iter().any(|c| c.port == e.port && c.vc == e.vc)) {
                    let missing = Channel { switch: at, port: m.port, vc: m.vc };
                    self.note(Verdict::EscapeNotOffered { place, missing });
                }
            }
            for c in &cands {
                let channel = Channel { switch: at, port: c.port, vc: c.vc };
                let next = if (c.vc as usize) < self.ids.vcs { self.net.neighbour(at, c.port) } else { None };
                let Some((next, _)) = next else {
                    self.note(Verdict::InvalidCandidate { place, channel });
                    continue;
                };
                let ch = self.ids.id(at, c.port, c.vc);
                self.used[ch as usize] = true;
                if held != NO_CHANNEL {
                    self.edges.insert(held, ch);
                }
                let mut esc = last_esc;
                if escape {
                    if r1.iter().any(|e| e.port == c.port && e.vc == c.vc) {
                        if last_esc != NO_CHANNEL {
                            self.esc_edges.insert((last_esc as u64) << 32 | ch as u64);
                        }
                        esc = ch;
                    } else if self.in_c1[ch as usize] {
                        self.cross = true;
                    }
                }
                if next == dst {
                    self.longest = self.longest.max(st.hops as u32 + 1);
                    continue;
                }
                let mut s2 = st;
                step(&mut s2, c);
                self.routing.advance(&mut s2, at, next, c);
                stack.push((next, ch, esc, s2));
            }
        }
    }
}

/// The report of an exploration: its problem if it found one, else acyclicity of the CDG of all
/// channels or Duato's condition.
fn conclude(net: &Fabric, routing: &dyn Routing, f: Found) -> Report {
    let ids = f.ids;
    let full_cycle = find_cycle(&f.adj, &|_| true);
    let verdict = if let Some(p) = f.problem {
        p
    } else if !routing.escape_based() {
        match &full_cycle {
            None => Verdict::Acyclic,
            Some(c) => Verdict::Cycle { channels: c.iter().map(|&i| ids.channel(i)).collect() },
        }
    } else {
        duato(net, routing, &f, full_cycle.is_none())
    };
    Report {
        routing: routing.name().to_string(),
        vcs: ids.vcs,
        switches: net.num_switches(),
        pairs: f.pairs,
        states: f.states,
        longest_route: f.longest,
        channels_used: f.used.iter().filter(|&&u| u).count(),
        vcs_needed: f.used.iter().enumerate().filter(|&(_, &u)| u).map(|(i, _)| i % ids.vcs + 1).max().unwrap_or(0),
        dependencies: f.dependencies,
        verdict,
    }
}

/// Whether each channel is in `C1`, the channels of the escape subfunction over all switches and
/// destinations.
fn escape_channels(net: &Fabric, routing: &dyn Routing, ids: Ids) -> Vec<bool> {
    let n = net.num_switches();
    let mut in_c1 = vec![false; n * ids.ports * ids.vcs];
    let mut r1 = Vec::new();
    for t in (0..n as SwitchId).filter(|&t| net.servers_at(t) > 0) {
        for x in (0..n as SwitchId).filter(|&x| x != t) {
            r1.clear();
            routing.escape_subfunction(x, t, &mut r1);
            for c in &r1 {
                if (c.vc as usize) < ids.vcs && net.neighbour(x, c.port).is_some() {
                    in_c1[ids.id(x, c.port, c.vc) as usize] = true;
                }
            }
        }
    }
    in_c1
}

/// Duato's condition for the escape subfunction of an escape-based routing.
fn duato(net: &Fabric, routing: &dyn Routing, f: &Found, full_cdg_acyclic: bool) -> Verdict {
    let (ids, adj, in_c1) = (f.ids, &f.adj, &f.in_c1);
    let n = net.num_switches();
    let mut r1 = Vec::new();
    // R1 as next-switch lists, per destination, for the connectivity check.
    for t in (0..n as SwitchId).filter(|&t| net.servers_at(t) > 0 && net.switch_alive(t)) {
        let mut next: Vec<Vec<SwitchId>> = vec![Vec::new(); n];
        for x in 0..n as SwitchId {
            if x == t || !net.switch_alive(x) {
                continue;
            }
            r1.clear();
            routing.escape_subfunction(x, t, &mut r1);
            for c in &r1 {
                if (c.vc as usize) < ids.vcs {
                    if let Some((y, _)) = net.neighbour(x, c.port) {
                        next[x as usize].push(y);
                    }
                }
            }
        }
        // Fixed point: switches from which R1 reaches t.
        let mut reach = vec![false; n];
        reach[t as usize] = true;
        let mut changed = true;
        while changed {
            changed = false;
            for x in 0..n {
                if !reach[x] && next[x].iter().any(|&y| reach[y as usize]) {
                    reach[x] = true;
                    changed = true;
                }
            }
        }
        if let Some(x) = (0..n).find(|&x| !reach[x] && net.switch_alive(x as SwitchId)) {
            return Verdict::EscapeDisconnected { from: x as SwitchId, to: t };
        }
    }
    if !f.cross {
        // Exact: the dependencies recorded along single routes.
        let mut ext: Vec<Vec<u32>> = vec![Vec::new(); adj.len()];
        for &e in &f.esc_edges {
            ext[(e >> 32) as usize].push(e as u32);
        }
        for a in &mut ext {
            a.sort_unstable();
        }
        return match find_cycle(&ext, &|i| in_c1[i]) {
            Some(c) => Verdict::EscapeCycle { channels: c.iter().map(|&i| ids.channel(i)).collect() },
            None => Verdict::Duato {
                escape_channels: in_c1.iter().filter(|&&b| b).count(),
                extended_dependencies: f.esc_edges.len(),
                full_cdg_acyclic,
            },
        };
    }
    // Superset: from each C1 channel, walk through non-C1 channels (of any route) to C1 channels.
    let mut ext: Vec<Vec<u32>> = vec![Vec::new(); adj.len()];
    let mut count = 0usize;
    let mut seen = vec![u32::MAX; adj.len()];
    let mut stack = Vec::new();
    for c in 0..adj.len() {
        if !in_c1[c] || adj[c].is_empty() {
            continue;
        }
        stack.clear();
        stack.extend_from_slice(&adj[c]);
        while let Some(d) = stack.pop() {
            if seen[d as usize] == c as u32 {
                continue;
            }
            seen[d as usize] = c as u32;
            if in_c1[d as usize] {
                ext[c].push(d);
                count += 1;
            } else {
                stack.extend_from_slice(&adj[d as usize]);
            }
        }
    }
    match find_cycle(&ext, &|i| in_c1[i]) {
        Some(c) => Verdict::EscapeCycle { channels: c.iter().map(|&i| ids.channel(i)).collect() },
        None => Verdict::Duato {
            escape_channels: in_c1.iter().filter(|&&b| b).count(),
            extended_dependencies: count,
            full_cdg_acyclic,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_cycle_on_small_graphs() {
        // 0 -> 1 -> 2 -> 0 and a tail 3 -> 0.
        let adj = vec![vec![1], vec![2], vec![0], vec![0]];
        let c = find_cycle(&adj, &|_| true).unwrap();
        let mut s = c.clone();
        s.sort();
        assert_eq!(s, vec![0, 1, 2]);
        for i in 0..c.len() {
            assert!(adj[c[i] as usize].contains(&c[(i + 1) % c.len()]));
        }
        // Dropping node 2 breaks it.
        assert!(find_cycle(&adj, &|i| i != 2).is_none());
        // A DAG with a diamond has no cycle.
        let dag = vec![vec![1, 2], vec![3], vec![3], vec![]];
        assert!(find_cycle(&dag, &|_| true).is_none());
    }
}
