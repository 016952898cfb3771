//! Nue routing (J. Domke, T. Hoefler, S. Matsuoka, "Routing on the Dependency Graph: A New
//! Approach to Deadlock-Free High-Performance Routing", HPDC 2016; Domke's dissertation, section 4
//! and Algorithm 4.1), `routing.algorithm = "nue"`: deadlock-free, destination-based routing for
//! any topology and any number `k >= 1` of virtual channels (`routing.vcs`, default 1), faults
//! included.
//!
//! Algorithm 4.1, step by step, as built here:
//! 1. **Partition** the destinations (live switches with servers) into `k` disjoint subsets, one
//!    per virtual layer. The paper (and OpenSM's implementation) uses METIS's multilevel k-way
//!    partitioning of the network graph; here the METIS-style partitioner of the `partitioning`
//!    crate ([`partitioning::Method::Multilevel`]) cuts the graph of live switches into `k` parts
//!    balanced by their number of destinations (fixed seed: the tables depend on the network only).
//!    A part without destinations leaves its layer unused.
//! 2. Per layer `L_i`, in order:
//!    - (line 3) the **convex subgraph** `H_i`: the destinations of the layer plus every switch on
//!      a shortest path between two switches of `H_i` (one pass in switch order, each switch
//!      added to `H_i` is itself a source later, as OpenSM computes it);
//!    - (line 4) its **central root** `n_r`: the switch of `H_i` of largest betweenness
//!      centrality in the subgraph induced by `H_i` (Brandes' algorithm; ties: lowest id);
//!    - (line 5) a new **complete channel dependency graph** `D_i`: vertices are the channels
//!      (directed live links) and edges every dependency `(w -> x) -> (x -> y)`, `y != w`, a route
//!      could create. Only the dependencies in use are stored, in an acyclic graph kept in a
//!      topological order (Pearce and Kelly's online algorithm), so "would this dependency close a
//!      cycle?" is answered as the paths are built, which is the point of section 4;
//!    - (line 6) **escape paths**: a spanning tree from `n_r` (Dijkstra on the current channel
//!      weights, as OpenSM does) whose up*/down* dependencies (up-up, down-down and the up-down
//!      turn at every common ancestor) are put into `D_i` first. They are acyclic and let every
//!      switch reach every destination;
//!    - (lines 7-10) for every destination `t` of the layer (in id order): a **Dijkstra search in
//!      `D_i`** backwards from `t`. A switch `w` is settled through a channel `(w -> x)` only if
//!      the dependency `(w -> x) -> next(x)` is already in `D_i` or can be added without a cycle;
//!      otherwise the next-best channel of `w` is tried. Distances are sums of **channel
//!      weights**; after `t` is routed every channel's weight grows by the number of servers whose
//!      route to `t` uses it (line 10: balance). If the search reaches an impasse (some switch
//!      cannot be settled) that local backtracking cannot solve, the dependencies it added are withdrawn and `t` is routed on the
//!      escape paths (the tree route), whose dependencies are in `D_i` already. The number of such
//!      destinations is reported (`escape_fallbacks`).
//! 3. **Tables**: one output port per (switch, destination switch); the destination's layer is its
//!    VC. A packet keeps the VC of its destination's layer on every hop, so dependencies of
//!    different layers never meet and every layer's are acyclic: the whole CDG is acyclic
//!    (`hxsim check-deadlock` checks it on the actual network).
//!
//! Differences from the paper and OpenSM (documented, not hidden): destinations are switches (all
//! servers of a switch share its routes; the weights count servers), so the tables have one entry
//! per (switch, destination switch), stored for the destination's own layer only (the other
//! layers have no entry for it), `1` or `2` bytes each: `switches x destination switches` bytes
//! in all, not per layer. OpenSM's *local backtracking* (dissertation section 6.2.6.2) is done one level deep (an unsettled
//! switch's settled neighbour may move to another settled neighbour, see `Construction::backtrack`);
//! its *shortcut discovery* (section 6.2.6.3) is not, and an impasse that backtracking cannot solve
//! falls back to the escape paths for the whole destination, as Alg. 4.1 does. The build is single-threaded and deterministic.
//! Channel weights start at 1; OpenSM starts them at the square of the number of destinations,
//! which keeps routes shortest and uses the load to choose among them: measured on the 7x7x7 torus
//! it helps 2 layers and hurts 1 (more destinations on the escape paths), so it was not taken.
//!
//! What to expect (docs/validity-ugal-nue.md measures it): Nue is deterministic, one route per
//! (switch, destination switch), while `updown` here is adaptive among all its shortest legal
//! routes, so comparing the two is not the paper's comparison (OpenSM's Up*/Down* is deterministic).
//! On a fat tree whose leaves have as many up-links as servers, routes per destination *switch*
//! bring all the traffic to a leaf down one of its links, which bounds uniform throughput near
//! `1 / servers per leaf` for every deterministic routing here (D-mod-K and DFSSSP too), at any
//! layer count.
//!
//! Memory: the tables above plus, while building, 8 bytes per (channel, port) pair of the complete
//! CDG; the build refuses (exit 2, naming `routing.algorithm`) when the tables would not fit.

use super::cdg::{wiring, AcyclicCdg};
use super::{Candidate, RouteState, Routing, RoutingParams, TableReport};
use crate::error::ConfigError;
use crate::topology::{bfs_hops, Fabric, PortId, SwitchId};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

/// "No switch" in the channel arrays.
const NONE: u32 = u32::MAX;

/// Output ports, one byte each when every switch has fewer than 255 switch ports.
enum Ports {
    Narrow(Vec<u8>),
    Wide(Vec<u16>),
}

impl Ports {
    fn new(len: usize, wide: bool) -> Self {
        if wide {
            Ports::Wide(vec![u16::MAX; len])
        } else {
            Ports::Narrow(vec![u8::MAX; len])
        }
    }
    #[inline]
    fn get(&self, i: usize) -> Option<PortId> {
        match self {
            Ports::Narrow(v) => (v[i] != u8::MAX).then_some(v[i] as PortId),
            Ports::Wide(v) => (v[i] != u16::MAX).then_some(v[i]),
        }
    }
    fn set(&mut self, i: usize, p: PortId) {
        match self {
            Ports::Narrow(v) => v[i] = p as u8,
            Ports::Wide(v) => v[i] = p,
        }
    }
    fn bytes(&self) -> u64 {
        match self {
            Ports::Narrow(v) => v.len() as u64,
            Ports::Wide(v) => 2 * v.len() as u64,
        }
    }
}

/// Nue's destination-based tables.
pub struct Nue {
    n: usize,
    layers: usize,
    /// Row of each destination switch in `ports` (`NONE`: not a destination).
    row: Vec<u32>,
    /// Layer (VC) of each destination switch.
    layer: Vec<u8>,
    /// `ports[row(t) * n + x]`: the port switch `x` takes towards `t`.
    ports: Ports,
    /// Central root of every layer (`NONE` for an empty layer).
    roots: Vec<u32>,
    report: TableReport,
}

/// `routing.algorithm = "nue"`: reads `routing.vcs` (the number of virtual layers, default 1) and
/// `routing.vc_policy` (must stay at its default), in this one place.
pub fn build(cfg: &RoutingParams, net: Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError> {
    if cfg.vc_policy != "ladder" {
        return Err(ConfigError::value(
            "routing.vc_policy",
            format!("\"{}\"", cfg.vc_policy),
            "nue assigns each destination's layer as its VC itself; leave routing.vc_policy at its default, \"ladder\"",
        ));
    }
    Ok(Box::new(Nue::new(&net, cfg.vcs_or(1), crate::memory::available_memory())?))
}

impl Nue {
    /// Nue with `k` virtual layers over the live links of `net`; `available` bytes of memory (if
    /// known) bound the tables.
    pub fn new(net: &Fabric, k: usize, available: Option<u64>) -> Result<Self, ConfigError> {
        let start = Instant::now();
        let n = net.num_switches();
        if !(1..=64).contains(&k) {
            return Err(ConfigError::value("routing.vcs", k, "between 1 and 64 virtual layers"));
        }
        let live: Vec<SwitchId> = (0..n as SwitchId).filter(|&s| net.switch_alive(s)).collect();
        if let Some(&first) = live.first() {
            let d = net.bfs(first);
            if let Some(&x) = live.iter().find(|&&x| d[x as usize] == crate::topology::fabric::UNREACHABLE) {
                return Err(ConfigError::value(
                    "faults",
                    format!("{} failed links", net.failed_links()),
                    format!("a connected network: nue's escape paths must reach every live switch, {x} is cut off"),
                ));
            }
        }
        let dests: Vec<SwitchId> = live.iter().copied().filter(|&s| net.servers_at(s) > 0).collect();
        let p = net.max_switch_ports().max(1);
        let wide = p >= u8::MAX as usize;
        let table_bytes = dests.len() as u64 * n as u64 * if wide { 2 } else { 1 };
        // Per (channel, port) pair a use count and a refusal mark; per channel its dependency bits,
        // its position and mark, and the construction's arrays.
        let cdg_bytes = (n * p * p * 8 + n * p * (32 + 16 * p.div_ceil(64))) as u64;
        super::refuse_tables_beyond(table_bytes + cdg_bytes, available, "nue", n)?;

        let mut row = vec![NONE; n];
        for (i, &t) in dests.iter().enumerate() {
            row[t as usize] = i as u32;
        }
        let part = partition_destinations(net, &live, &dests, k);
        let mut layer = vec![0u8; n];
        for (&t, &l) in dests.iter().zip(&part) {
            layer[t as usize] = l as u8;
        }
        let mut b = Construction::new(net, p);
        let adj = Adjacency::new(net);
        let mut ports = Ports::new(dests.len() * n, wide);
        let mut roots = vec![NONE; k];
        let mut fallbacks = 0usize;
        for (l, root_slot) in roots.iter_mut().enumerate() {
            let members: Vec<SwitchId> =
                dests.iter().zip(&part).filter(|(_, &q)| q as usize == l).map(|(&t, _)| t).collect();
            if members.is_empty() {
                continue;
            }
            let hull = convex_subgraph(net, &adj, &members);
            let root = central_switch(&adj, &hull);
            *root_slot = root;
            b.start_layer(root);
            for &t in &members {
                if !b.route(t) {
                    fallbacks += 1;
                }
                let base = row[t as usize] as usize * n;
                for &x in &live {
                    if x != t {
                        ports.set(base + x as usize, b.next[x as usize]);
                    }
                }
                b.add_weights(t);
            }
        }
        let used = roots.iter().filter(|&&r| r != NONE).count();
        let report = TableReport {
            build_seconds: start.elapsed().as_secs_f64(),
            bytes: ports.bytes(),
            layers: k,
            escape_fallbacks: fallbacks,
            note: format!(
                "{} destination switches in {k} layers ({used} non-empty), roots {:?}, {fallbacks} on escape paths",
                dests.len(),
                roots.iter().filter(|&&r| r != NONE).collect::<Vec<_>>()
            ),
        };
        Ok(Nue { n, layers: k, row, layer, ports, roots, report })
    }

    /// Layer (VC) of destination switch `t`.
    pub fn layer_of(&self, t: SwitchId) -> u8 {
        self.layer[t as usize]
    }

    /// The central root of layer `l` (`None` for an empty layer).
    pub fn root(&self, l: usize) -> Option<SwitchId> {
        (self.roots[l] != NONE).then_some(self.roots[l])
    }

    /// The port switch `x` takes towards destination switch `t`.
    #[inline]
    pub fn port(&self, x: SwitchId, t: SwitchId) -> Option<PortId> {
        let r = self.row[t as usize];
        if r == NONE {
            return None;
        }
        self.ports.get(r as usize * self.n + x as usize)
    }
}

impl Routing for Nue {
    fn name(&self) -> &'static str {
        "nue"
    }
    fn vcs(&self) -> usize {
        self.layers
    }
    #[inline]
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        if let Some(port) = self.port(at, st.dst) {
            out.push(Candidate { port, vc: self.layer[st.dst as usize], penalty: 0, escape: false });
        }
    }
    fn tables(&self) -> Option<TableReport> {
        Some(self.report.clone())
    }
}

/// Algorithm 4.1 line 1: the layer of every destination, by a METIS-style k-way partition of the
/// live switch graph weighted by destinations.
fn partition_destinations(net: &Fabric, live: &[SwitchId], dests: &[SwitchId], k: usize) -> Vec<u32> {
    let parts = k.min(dests.len()).max(1);
    if parts == 1 {
        return vec![0; dests.len()];
    }
    let mut index = vec![NONE; net.num_switches()];
    for (i, &s) in live.iter().enumerate() {
        index[s as usize] = i as u32;
    }
    let mut edges = Vec::new();
    for &s in live {
        for q in 0..net.switch_ports(s) as PortId {
            if let Some((o, _)) = net.neighbour(s, q) {
                if s < o {
                    edges.push((index[s as usize], index[o as usize], 1));
                }
            }
        }
    }
    let mut g = partitioning::Graph::from_edges(live.len(), &edges);
    g.vwgt = live.iter().map(|&s| (net.servers_at(s) > 0) as u32).collect();
    match partitioning::partition(&g, parts, partitioning::Method::Multilevel, 0) {
        Ok(assign) => dests.iter().map(|&t| assign[index[t as usize] as usize]).collect(),
        // The partitioner refuses only degenerate graphs (fewer switches than parts): deal the
        // destinations round robin, as OpenSM does without METIS.
        Err(_) => (0..dests.len()).map(|i| (i % parts) as u32).collect(),
    }
}

/// The live switch graph as adjacency lists, each switch's neighbours in port order (a switch
/// linked twice is listed twice): the hulls' and centralities' searches read it instead of asking
/// the topology for every port of every switch they visit.
struct Adjacency {
    start: Vec<u32>,
    nbr: Vec<SwitchId>,
}

impl Adjacency {
    fn new(net: &Fabric) -> Self {
        let n = net.num_switches();
        let mut start = Vec::with_capacity(n + 1);
        let mut nbr = Vec::new();
        for s in 0..n as SwitchId {
            start.push(nbr.len() as u32);
            nbr.extend((0..net.switch_ports(s) as PortId).filter_map(|q| net.neighbour(s, q)).map(|(o, _)| o));
        }
        start.push(nbr.len() as u32);
        Adjacency { start, nbr }
    }

    /// The neighbours of `s`, in port order.
    #[inline]
    fn of(&self, s: SwitchId) -> &[SwitchId] {
        &self.nbr[self.start[s as usize] as usize..self.start[s as usize + 1] as usize]
    }
}

/// Algorithm 4.1 line 3: `H_i`, the destinations and every switch on a shortest path between two
/// switches already in `H_i` (OpenSM's single pass in switch order).
fn convex_subgraph(net: &Fabric, adj: &Adjacency, members: &[SwitchId]) -> Vec<bool> {
    let n = net.num_switches();
    let mut hull = vec![false; n];
    for &t in members {
        hull[t as usize] = true;
    }
    let live = (0..n as SwitchId).filter(|&s| net.switch_alive(s)).count();
    if members.len() == live {
        return hull;
    }
    let mut done = vec![false; n];
    let mut queue = VecDeque::new();
    let mut dist = vec![0; n];
    for u in 0..n {
        if !hull[u] {
            continue;
        }
        bfs_hops(u as SwitchId, &mut dist, &mut queue, |s| adj.of(s).iter().copied());
        done.fill(false);
        done[u] = true;
        for v in 0..n {
            if !hull[v] || done[v] {
                continue;
            }
            done[v] = true;
            queue.push_back(v as SwitchId);
            while let Some(x) = queue.pop_front() {
                for &y in adj.of(x) {
                    if !done[y as usize] && dist[y as usize] + 1 == dist[x as usize] {
                        hull[y as usize] = true;
                        done[y as usize] = true;
                        queue.push_back(y);
                    }
                }
            }
        }
    }
    hull
}

/// Algorithm 4.1 line 4: the switch of largest betweenness centrality in the subgraph induced by
/// `hull` (Brandes 2001; ties: lowest id).
fn central_switch(adj: &Adjacency, hull: &[bool]) -> SwitchId {
    let n = hull.len();
    let mut cb = vec![0f64; n];
    let (mut sigma, mut delta, mut dist) = (vec![0f64; n], vec![0f64; n], vec![u32::MAX; n]);
    let mut order: Vec<SwitchId> = Vec::with_capacity(n);
    let mut queue = VecDeque::new();
    for s in (0..n).filter(|&s| hull[s]) {
        for &v in &order {
            sigma[v as usize] = 0.0;
            delta[v as usize] = 0.0;
            dist[v as usize] = u32::MAX;
        }
        order.clear();
        sigma[s] = 1.0;
        dist[s] = 0;
        queue.push_back(s as SwitchId);
        while let Some(v) = queue.pop_front() {
            order.push(v);
            for &w in adj.of(v) {
                let w = w as usize;
                if !hull[w] {
                    continue;
                }
                if dist[w] == u32::MAX {
                    dist[w] = dist[v as usize] + 1;
                    queue.push_back(w as SwitchId);
                }
                if dist[w] == dist[v as usize] + 1 {
                    sigma[w] += sigma[v as usize];
                }
            }
        }
        for &w in order.iter().rev() {
            let w = w as usize;
            for &v in adj.of(w as SwitchId) {
                let v = v as usize;
                if hull[v] && dist[v] != u32::MAX && dist[v] + 1 == dist[w] {
                    delta[v] += sigma[v] / sigma[w] * (1.0 + delta[w]);
                }
            }
            if w != s {
                cb[w] += delta[w];
            }
        }
    }
    let mut best = NONE;
    for s in (0..n).filter(|&s| hull[s]) {
        if best == NONE || cb[s] > cb[best as usize] {
            best = s as u32;
        }
    }
    best
}

/// The per-layer state of Algorithm 4.1: channel weights (kept across layers, as OpenSM keeps its
/// link weights), the complete CDG of the layer with the dependencies in use, the escape tree, and
/// the route being built.
struct Construction<'a> {
    net: &'a Fabric,
    n: usize,
    /// Ports per switch (channel stride).
    p: usize,
    /// Far end of channel `s * p + q`: switch (`NONE` if dead or unwired).
    head: Vec<u32>,
    /// Port of the far end that leads back.
    back: Vec<PortId>,
    /// Channel weights (line 10), 1 initially.
    weight: Vec<u64>,
    cdg: AcyclicCdg,
    /// Escape tree: port of each switch towards its parent (`PortId::MAX` at the root).
    up: Vec<PortId>,
    /// Euler-tour interval of each switch in the escape tree (ancestor test).
    tin: Vec<u32>,
    tout: Vec<u32>,
    /// The route being built: each switch's port towards the current destination.
    next: Vec<PortId>,
    settled: Vec<bool>,
    /// Dijkstra distance of each settled switch.
    dist: Vec<u64>,
    /// Dependency changes of the current search, `(from, to, added)` (undone on a fallback).
    log: Vec<(u32, u32, bool)>,
    heap: BinaryHeap<Reverse<(u64, u32, PortId)>>,
    load: Vec<u64>,
    indeg: Vec<u32>,
}

impl<'a> Construction<'a> {
    fn new(net: &'a Fabric, p: usize) -> Self {
        let n = net.num_switches();
        let (head, back) = wiring(net, p);
        Construction {
            net,
            n,
            p,
            weight: vec![1; n * p],
            cdg: AcyclicCdg::new(n * p, p, true),
            head,
            back,
            up: vec![PortId::MAX; n],
            tin: vec![0; n],
            tout: vec![0; n],
            next: vec![PortId::MAX; n],
            settled: vec![false; n],
            dist: vec![0; n],
            log: Vec::new(),
            heap: BinaryHeap::new(),
            load: vec![0; n],
            indeg: vec![0; n],
        }
    }

    #[inline]
    fn ch(&self, s: SwitchId, q: PortId) -> u32 {
        (s as usize * self.p + q as usize) as u32
    }

    /// Lines 5-6: a fresh complete CDG holding the escape paths of the spanning tree from `root`.
    fn start_layer(&mut self, root: SwitchId) {
        let (n, p) = (self.n, self.p);
        self.cdg.reset();
        // Spanning tree: Dijkstra from the root on the current channel weights.
        let mut dist = vec![u64::MAX; n];
        self.up.fill(PortId::MAX);
        dist[root as usize] = 0;
        let mut heap = BinaryHeap::new();
        heap.push(Reverse((0u64, root)));
        let mut done = vec![false; n];
        while let Some(Reverse((d, u))) = heap.pop() {
            if std::mem::replace(&mut done[u as usize], true) {
                continue;
            }
            for q in 0..p as PortId {
                let c = self.ch(u, q) as usize;
                let v = self.head[c];
                if v == NONE || done[v as usize] {
                    continue;
                }
                let nd = d + self.weight[c];
                if nd < dist[v as usize] {
                    dist[v as usize] = nd;
                    self.up[v as usize] = self.back[c];
                    heap.push(Reverse((nd, v)));
                }
            }
        }
        // Children lists and Euler tour.
        let mut children: Vec<Vec<(SwitchId, PortId)>> = vec![Vec::new(); n];
        for v in 0..n as SwitchId {
            let q = self.up[v as usize];
            if q != PortId::MAX {
                let parent = self.head[self.ch(v, q) as usize];
                children[parent as usize].push((v, self.back[self.ch(v, q) as usize]));
            }
        }
        let mut clock = 0u32;
        let mut stack = vec![(root, 0usize)];
        self.tin[root as usize] = clock;
        while let Some(&mut (u, ref mut i)) = stack.last_mut() {
            if let Some(&(c, _)) = children[u as usize].get(*i) {
                *i += 1;
                clock += 1;
                self.tin[c as usize] = clock;
                stack.push((c, 0));
            } else {
                self.tout[u as usize] = clock + 1;
                stack.pop();
            }
        }
        // Escape dependencies: up-up, down-down, and up -> down turns between children.
        let ch = |s: SwitchId, q: PortId| (s as usize * p + q as usize) as u32;
        for u in 0..n as SwitchId {
            let to_parent = (self.up[u as usize] != PortId::MAX).then(|| ch(u, self.up[u as usize]));
            for &(c, down_q) in &children[u as usize] {
                let c_up = ch(c, self.up[c as usize]);
                let u_down = ch(u, down_q);
                if let Some(tp) = to_parent {
                    let from_parent = ch(self.head[tp as usize], self.back[tp as usize]);
                    let ok = self.cdg.add(&self.head, &self.back, c_up, tp)
                        && self.cdg.add(&self.head, &self.back, from_parent, u_down);
                    debug_assert!(ok, "tree up*/down* dependencies are acyclic");
                }
                for &(c2, down_q2) in &children[u as usize] {
                    if c2 != c {
                        let ok = self.cdg.add(&self.head, &self.back, c_up, ch(u, down_q2));
                        debug_assert!(ok, "tree up*/down* dependencies are acyclic");
                    }
                }
            }
        }
    }

    /// Lines 8-9 for destination `t`: Dijkstra in the complete CDG, with local backtracking at an
    /// impasse; `false` when that fails too and `t` is routed on the escape paths instead.
    fn route(&mut self, t: SwitchId) -> bool {
        let net = self.net;
        self.settled.fill(false);
        self.next.fill(PortId::MAX);
        self.log.clear();
        self.heap.clear();
        self.settled[t as usize] = true;
        self.dist[t as usize] = 0;
        let mut left = (0..self.n as SwitchId).filter(|&s| s != t && net.switch_alive(s)).count();
        self.relax(t, 0, NONE);
        loop {
            while let Some(Reverse((d, w, q))) = self.heap.pop() {
                if self.settled[w as usize] {
                    continue;
                }
                let c = self.ch(w, q);
                let x = self.head[c as usize];
                if x != t && !self.depend(c, self.ch(x, self.next[x as usize])) {
                    continue;
                }
                self.settle(w, q, d);
                left -= 1;
                self.relax(w, d, x);
            }
            if left == 0 {
                return true;
            }
            match self.backtrack(t) {
                Some((w, x)) => {
                    left -= 1;
                    self.relax(w, self.dist[w as usize], x);
                }
                None => break,
            }
        }
        self.undo_to(0);
        // Escape route: up the tree until an ancestor of t, then down towards t.
        let anc = |s: &Self, a: SwitchId, b: SwitchId| {
            s.tin[a as usize] <= s.tin[b as usize] && s.tin[b as usize] < s.tout[a as usize]
        };
        for x in 0..self.n as SwitchId {
            if x != t && net.switch_alive(x) && !anc(self, x, t) {
                self.next[x as usize] = self.up[x as usize];
            }
        }
        let mut c = t;
        while self.up[c as usize] != PortId::MAX {
            let ch = self.ch(c, self.up[c as usize]);
            let parent = self.head[ch as usize];
            self.next[parent as usize] = self.back[ch as usize];
            c = parent;
        }
        false
    }

    fn settle(&mut self, w: SwitchId, q: PortId, d: u64) {
        self.settled[w as usize] = true;
        self.next[w as usize] = q;
        self.dist[w as usize] = d;
    }

    /// Use the dependency `a -> b` once more (logged), unless it closes a cycle.
    fn depend(&mut self, a: u32, b: u32) -> bool {
        let ok = self.cdg.add(&self.head, &self.back, a, b);
        if ok {
            self.log.push((a, b, true));
        }
        ok
    }

    /// Withdraw one use of the dependency `a -> b` (logged).
    fn release(&mut self, a: u32, b: u32) {
        self.cdg.remove(&self.head, &self.back, self.cdg.edge(a, (b as usize % self.p) as PortId));
        self.log.push((a, b, false));
    }

    /// Undo the logged dependency changes after the first `mark`. Replaying them backwards
    /// passes through graphs that were all acyclic, so re-adding a withdrawn one cannot fail.
    fn undo_to(&mut self, mark: usize) {
        while self.log.len() > mark {
            let (a, b, added) = self.log.pop().expect("log longer than mark");
            if added {
                self.cdg.remove(&self.head, &self.back, self.cdg.edge(a, (b as usize % self.p) as PortId));
            } else {
                let ok = self.cdg.add(&self.head, &self.back, a, b);
                debug_assert!(ok, "undo re-adds a dependency of an acyclic graph");
            }
        }
    }

    /// Local backtracking at an impasse (the dissertation's section 6.2.6.2, one level as in
    /// OpenSM): for an unsettled switch `w` with a settled neighbour `x`, move `x` onto another
    /// settled neighbour `z` (whose route avoids `x`) when the dependencies of `x`'s current
    /// dependants, of `x -> z` and of `w -> x` then all fit in the acyclic CDG; `w` is then settled
    /// through `x`. Returns `(w, x)`, or `None` when no unsettled switch can be helped so.
    fn backtrack(&mut self, t: SwitchId) -> Option<(SwitchId, u32)> {
        let net = self.net;
        let p = self.p as PortId;
        let mut dependants: Vec<u32> = Vec::new();
        for w in 0..self.n as SwitchId {
            if self.settled[w as usize] || !net.switch_alive(w) {
                continue;
            }
            for qw in 0..p {
                let cw = self.ch(w, qw);
                let x = self.head[cw as usize];
                if x == NONE || x == t || !self.settled[x as usize] {
                    continue;
                }
                let old = self.ch(x, self.next[x as usize]);
                let y_old = self.head[old as usize];
                dependants.clear();
                for q in 0..p {
                    let v = self.head[self.ch(x, q) as usize];
                    if v != NONE && v != t && self.settled[v as usize] {
                        let cv = self.ch(v, self.next[v as usize]);
                        if self.head[cv as usize] == x {
                            dependants.push(cv);
                        }
                    }
                }
                for qz in 0..p {
                    let cz = self.ch(x, qz);
                    let z = self.head[cz as usize];
                    if z == NONE || z == w || cz == old || !self.settled[z as usize] || self.passes(z, x, t) {
                        continue;
                    }
                    let mark = self.log.len();
                    for &cv in &dependants {
                        self.release(cv, old);
                    }
                    if y_old != t {
                        self.release(old, self.ch(y_old, self.next[y_old as usize]));
                    }
                    let mut ok = z == t || self.depend(cz, self.ch(z, self.next[z as usize]));
                    for &cv in &dependants {
                        ok = ok && self.depend(cv, cz);
                    }
                    ok = ok && self.depend(cw, cz);
                    if ok {
                        let dx = self.dist[z as usize] + self.weight[cz as usize];
                        self.settle(x, qz, dx);
                        self.settle(w, qw, dx + self.weight[cw as usize]);
                        return Some((w, x));
                    }
                    self.undo_to(mark);
                }
            }
        }
        None
    }

    /// Whether the route of `z` towards `t` passes through `x`.
    fn passes(&self, mut z: SwitchId, x: SwitchId, t: SwitchId) -> bool {
        while z != t {
            if z == x {
                return true;
            }
            z = self.head[self.ch(z, self.next[z as usize]) as usize];
        }
        false
    }

    /// Offer every unsettled neighbour `v` of the just-settled `w` (reached at distance `d`, its
    /// route leaving towards `x`) the channel `v -> w`.
    fn relax(&mut self, w: SwitchId, d: u64, x: u32) {
        for q in 0..self.p as PortId {
            let c = self.ch(w, q) as usize;
            let v = self.head[c];
            if v == NONE || v == x || self.settled[v as usize] {
                continue;
            }
            let back = self.back[c];
            let vc = self.ch(v, back) as usize;
            self.heap.push(Reverse((d + self.weight[vc], v, back)));
        }
    }

    /// Line 10: every channel on the route of a server to `t` weighs one more per such server.
    fn add_weights(&mut self, t: SwitchId) {
        let net = self.net;
        self.indeg.fill(0);
        for x in 0..self.n as SwitchId {
            self.load[x as usize] = net.servers_at(x) as u64;
            if x != t && self.next[x as usize] != PortId::MAX {
                let y = self.head[self.ch(x, self.next[x as usize]) as usize];
                self.indeg[y as usize] += 1;
            }
        }
        let mut stack: Vec<SwitchId> = (0..self.n as SwitchId)
            .filter(|&x| x != t && self.next[x as usize] != PortId::MAX && self.indeg[x as usize] == 0)
            .collect();
        while let Some(x) = stack.pop() {
            let c = self.ch(x, self.next[x as usize]) as usize;
            self.weight[c] += self.load[x as usize];
            let y = self.head[c];
            self.load[y as usize] += self.load[x as usize];
            self.indeg[y as usize] -= 1;
            if y != t && self.indeg[y as usize] == 0 {
                stack.push(y);
            }
        }
    }
}
