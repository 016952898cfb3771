//! Channel dependency graph (CDG) analysis behind `hxsim check-deadlock`.
//!
//! A *channel* is a switch-to-switch link direction with a VC, named `(switch, port, vc)` by the
//! switch that sends on it. A packet holding channel `c` (it sits in the input buffer `c` leads to)
//! may wait for any channel its routing offers next, which is a dependency `c -> c'` (Dally and
//! Seitz; DAVC paper Definition 3.5). Injection and ejection channels are dedicated to one server,
//! so nothing depends on injection channels and ejection channels depend on nothing: neither can
//! be part of a cycle, and they are left out.
//!
//! To find every dependency the routing can produce, the analysis explores, for every ordered pair
//! of switches `(s, t)` that have servers, every state a packet from `s` to `t` can reach:
//! `(switch, channel held, RouteState)`, starting from every state [`Routing::init_choices`] can produce at `s`, and
//! following every candidate with [`Routing::advance`]. Along the way it records the longest route,
//! states with no candidate (the packet could never move: reported as unroutable), and candidates
//! on dead ports or on VCs beyond [`Routing::vcs`].
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
//! Cost: the number of reachable states times the candidates per state, which grows quickly with
//! the network (fine for 4x4, 3x3x3 and 4x4x4 HyperX; slow for the 8x8x8 of the papers).

use super::{step, Candidate, RouteState, Routing};
use crate::topology::{Fabric, PortId, SwitchId};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

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
    /// Routing states explored.
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

struct Explorer<'a> {
    net: &'a Fabric,
    routing: &'a dyn Routing,
    ports: usize,
    vcs: usize,
    used: Vec<bool>,
    edges: Edges,
    /// Escape-based routings: whether each channel is in `C1`.
    in_c1: Vec<bool>,
    /// Direct and indirect dependencies between `C1` channels along single routes.
    esc_edges: Edges,
    /// A `C1` channel was offered outside `R1` of its state (a cross dependency).
    cross: bool,
    problem: Option<Verdict>,
    states: u64,
    longest: u32,
    hop_limit: u32,
}

const NO_CHANNEL: u32 = u32::MAX;

impl Explorer<'_> {
    #[inline]
    fn id(&self, sw: SwitchId, port: PortId, vc: u8) -> u32 {
        ((sw as usize * self.ports + port as usize) * self.vcs + vc as usize) as u32
    }

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
                let next = if (c.vc as usize) < self.vcs { self.net.neighbour(at, c.port) } else { None };
                let Some((next, _)) = next else {
                    self.note(Verdict::InvalidCandidate { place, channel });
                    continue;
                };
                let ch = self.id(at, c.port, c.vc);
                self.used[ch as usize] = true;
                if held != NO_CHANNEL {
                    self.edges.insert(held, ch);
                }
                let mut esc = last_esc;
                if escape {
                    if r1.iter().any(|e| e.port == c.port && e.vc == c.vc) {
                        if last_esc != NO_CHANNEL {
                            self.esc_edges.insert(last_esc, ch);
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

    fn channel(&self, id: u32) -> Channel {
        let id = id as usize;
        let vc = (id % self.vcs) as u8;
        let link = id / self.vcs;
        Channel { switch: (link / self.ports) as SwitchId, port: (link % self.ports) as PortId, vc }
    }
}

/// Build the CDG that `routing` can produce on `net` and decide whether it is deadlock free.
pub fn check(net: &Fabric, routing: &dyn Routing) -> Report {
    let n = net.num_switches();
    let ports = net.max_switch_ports();
    let vcs = routing.vcs().max(1);
    let channels = n * ports * vcs;
    let mut ex = Explorer {
        net,
        routing,
        ports,
        vcs,
        used: vec![false; channels],
        edges: Edges::new(channels),
        in_c1: Vec::new(),
        esc_edges: Edges::Hash(FxSet::default()),
        cross: false,
        problem: None,
        states: 0,
        longest: 0,
        hop_limit: (4 * n as u32).max(64).min(u16::MAX as u32 - 1),
    };
    if routing.escape_based() {
        ex.in_c1 = escape_channels(&ex);
    }
    let mut pairs = 0u64;
    // Packets only travel between live switches that have servers (all of them on a HyperX; the
    // leaves of trees and HyperZ); failed switches send and receive nothing.
    let ends: Vec<SwitchId> = (0..n as SwitchId).filter(|&s| net.servers_at(s) > 0 && net.switch_alive(s)).collect();
    for &src in &ends {
        for &dst in &ends {
            if src != dst {
                ex.pair(src, dst);
                pairs += 1;
            }
        }
    }
    let adj = ex.edges.adjacency(channels);
    let full_cycle = find_cycle(&adj, &|_| true);
    let verdict = if let Some(p) = ex.problem.take() {
        p
    } else if !routing.escape_based() {
        match &full_cycle {
            None => Verdict::Acyclic,
            Some(c) => Verdict::Cycle { channels: c.iter().map(|&i| ex.channel(i)).collect() },
        }
    } else {
        duato(&ex, &adj, full_cycle.is_none())
    };
    Report {
        routing: routing.name().to_string(),
        vcs,
        switches: n,
        pairs,
        states: ex.states,
        longest_route: ex.longest,
        channels_used: ex.used.iter().filter(|&&u| u).count(),
        vcs_needed: ex.used.iter().enumerate().filter(|&(_, &u)| u).map(|(i, _)| i % vcs + 1).max().unwrap_or(0),
        dependencies: ex.edges.len(),
        verdict,
    }
}

/// Duato's condition for the escape subfunction of an escape-based routing.
/// Whether each channel is in `C1`, the channels of the escape subfunction over all switches and
/// destinations.
fn escape_channels(ex: &Explorer<'_>) -> Vec<bool> {
    let net = ex.net;
    let n = net.num_switches();
    let mut in_c1 = vec![false; n * ex.ports * ex.vcs];
    let mut r1 = Vec::new();
    for t in (0..n as SwitchId).filter(|&t| net.servers_at(t) > 0) {
        for x in (0..n as SwitchId).filter(|&x| x != t) {
            r1.clear();
            ex.routing.escape_subfunction(x, t, &mut r1);
            for c in &r1 {
                if (c.vc as usize) < ex.vcs && net.neighbour(x, c.port).is_some() {
                    in_c1[ex.id(x, c.port, c.vc) as usize] = true;
                }
            }
        }
    }
    in_c1
}

fn duato(ex: &Explorer<'_>, adj: &[Vec<u32>], full_cdg_acyclic: bool) -> Verdict {
    let net = ex.net;
    let n = net.num_switches();
    let in_c1 = &ex.in_c1;
    let mut r1 = Vec::new();
    // R1 as next-switch lists, per destination, for the connectivity check.
    for t in (0..n as SwitchId).filter(|&t| net.servers_at(t) > 0 && net.switch_alive(t)) {
        let mut next: Vec<Vec<SwitchId>> = vec![Vec::new(); n];
        for x in 0..n as SwitchId {
            if x == t || !net.switch_alive(x) {
                continue;
            }
            r1.clear();
            ex.routing.escape_subfunction(x, t, &mut r1);
            for c in &r1 {
                if (c.vc as usize) < ex.vcs {
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
    if !ex.cross {
        // Exact: the dependencies recorded along single routes.
        let ext = ex.esc_edges.adjacency(adj.len());
        return match find_cycle(&ext, &|i| in_c1[i]) {
            Some(c) => Verdict::EscapeCycle { channels: c.iter().map(|&i| ex.channel(i)).collect() },
            None => Verdict::Duato {
                escape_channels: in_c1.iter().filter(|&&b| b).count(),
                extended_dependencies: ex.esc_edges.len(),
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
        Some(c) => Verdict::EscapeCycle { channels: c.iter().map(|&i| ex.channel(i)).collect() },
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
