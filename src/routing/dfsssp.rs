//! DFSSSP: deadlock-free single-source shortest-path routing (Domke, Hoefler, Nagel, "Deadlock-Free
//! Oblivious Routing for Arbitrary Topologies", IPDPS 2011; the SSSP part from Hoefler, Schneider,
//! Lumsdaine, "Optimized Routing for Large-Scale InfiniBand Networks", HOTI 2009), as compared in
//! the Nue paper (Domke, section 4 and Fig. 7b: "DFSSSP and LASH for the 3-dimensional
//! torus(7,7,7) [...] both exceed the limit of eight VCs").
//!
//! **Phase 1, balanced shortest paths (SSSP).** One Dijkstra per destination switch `t` gives every
//! switch one next hop towards `t` (destination-based, like an InfiniBand forwarding table). Each
//! directed channel has a weight; after routing towards `t`, the weight of every channel grows by
//! the number of routes towards `t` that cross it (server pairs: the servers of the source switch
//! times those of `t`), so later destinations avoid the channels earlier ones loaded. The papers
//! initialise every weight to `P^2` (`P` endpoints) so that a path of fewer hops always weighs
//! less; here the Dijkstra key is the pair `(hops, load)` compared lexicographically, which is the
//! same order whenever `P^2` exceeds the loads and keeps the routes minimal even when it would not.
//! Destinations are routed in decreasing order of their servers, then by id (OpenSM's order).
//! Ties are broken by switch id, so the tables depend on nothing but the network.
//!
//! **Phase 2, virtual layers.** Every route between two switches with servers starts in layer 0.
//! The channel dependency graph (CDG) of the routes of the current layer is searched for a cycle
//! (depth-first); the cycle's *weakest* dependency, the one the fewest routes of the layer induce,
//! is broken by moving all those routes to the next layer. This repeats until the layer's CDG is
//! acyclic, then the next layer is processed the same way, until a layer keeps every route it
//! holds. A single minimal route never repeats a channel, so this ends; the number of layers is
//! what DFSSSP needs. A packet keeps the VC of its pair's layer on every hop, and since every
//! layer's CDG is acyclic the whole CDG is (layers never depend on each other).
//!
//! **VCs.** `routing.vcs = 0` uses exactly the layers needed. With more VCs, the layers are spread
//! over the spare ones as OpenSM's DFSSSP does: the layer with the most routes per VC gets one more,
//! until none is left, and the routes of a layer alternate among its VCs in pair order (any subset
//! of an acyclic layer is acyclic). Fewer VCs than layers is a config error (exit 2) naming
//! `routing.vcs` and the number needed. `routing.vc_policy` must stay at its default: the layers are
//! the VC policy.
//!
//! **Cost.** Build: `O(E (L log n + n))` for the Dijkstras (`E` destinations, `L` links, `n`
//! switches) plus the cycle search and breaking, which the report gives in seconds. Memory kept:
//! one port (2 bytes) per (switch, destination) and one VC byte per (source, destination) pair of
//! switches with servers. The builder also holds, per layer processed, the routes crossing each
//! dependency (4 bytes per hop of every route of the layer). Routing a packet is two table reads.
//! [`crate::config::Config::memory_lower_bound`] counts the tables, so a network whose tables do not
//! fit is refused up front.

use super::RoutingParams;
use super::{Candidate, RouteState, Routing, TableReport};
use crate::error::ConfigError;
use crate::topology::{Fabric, PortId, SwitchId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::time::Instant;

/// No next hop: the switch is the destination, or cannot reach it.
pub const NO_PORT: PortId = PortId::MAX;

/// The most VCs the router supports (its per-port VC masks are 64-bit words).
pub const MAX_VCS: usize = super::vc::MAX_VCS;

/// The most virtual layers the builders compute before giving up (layers are bytes, `u8::MAX`
/// marks unrouted pairs).
pub(crate) const MAX_LAYERS: usize = 200;

/// Refuse a `routing.vc_policy` other than the default for a routing whose VCs are its own.
pub(crate) fn own_vc_policy(cfg: &RoutingParams, name: &str, what: &str) -> Result<(), ConfigError> {
    match cfg.vc_policy.as_str() {
        "ladder" => Ok(()),
        other => Err(ConfigError::value(
            "routing.vc_policy",
            format!("\"{other}\""),
            format!("the default (\"ladder\"): {name} assigns VCs itself ({what})"),
        )),
    }
}

/// Destination-based next hops over the live links, for every switch towards every switch with
/// servers, and the channel numbering the layer builders share.
pub struct Routes {
    /// Switches.
    pub n: usize,
    /// Stride of per-port arrays ([`Fabric::max_switch_ports`]).
    pub p: usize,
    /// Live switches with servers, increasing: the sources and destinations of routes.
    pub ends: Vec<SwitchId>,
    /// Index in `ends` of each switch (`u32::MAX` if none).
    pub end_of: Vec<u32>,
    /// `next[t * n + at]`: port of `at` towards `ends[t]` ([`NO_PORT`] at `ends[t]` or when
    /// unreachable).
    pub next: Vec<PortId>,
    /// Far switch of channel `at * p + port` (`u32::MAX` for dead or unwired ports).
    pub far: Vec<u32>,
}

impl Routes {
    /// Empty tables for `net`.
    pub fn new(net: &Fabric) -> Self {
        let n = net.num_switches();
        let p = net.max_switch_ports().max(1);
        let ends: Vec<SwitchId> =
            (0..n as SwitchId).filter(|&s| net.servers_at(s) > 0 && net.switch_alive(s)).collect();
        let mut end_of = vec![u32::MAX; n];
        for (i, &s) in ends.iter().enumerate() {
            end_of[s as usize] = i as u32;
        }
        let (far, _) = super::cdg::wiring(net, p);
        let next = vec![NO_PORT; ends.len() * n];
        Routes { n, p, ends, end_of, next, far }
    }

    /// Number of switches with servers.
    #[inline]
    pub fn e(&self) -> usize {
        self.ends.len()
    }

    /// Whether the pair `pid = s * e + t` (indices in `ends`) has a route.
    #[inline]
    pub fn routed(&self, pid: usize) -> bool {
        let e = self.e();
        let (s, t) = (pid / e, pid % e);
        s != t && self.next[t * self.n + self.ends[s] as usize] != NO_PORT
    }

    /// Every channel (`at * p + port`) of the route of pair `pid`, in order.
    #[inline]
    pub fn channels(&self, pid: usize, mut f: impl FnMut(u32)) {
        let e = self.e();
        let (s, t) = (pid / e, pid % e);
        let (mut at, dst) = (self.ends[s] as usize, self.ends[t] as usize);
        while at != dst {
            let port = self.next[t * self.n + at];
            debug_assert_ne!(port, NO_PORT, "a routed pair has a next hop at every switch of its route");
            let c = at * self.p + port as usize;
            f(c as u32);
            at = self.far[c] as usize;
        }
    }

    /// Every dependency (`c1 * p + port of c2`) of the route of pair `pid`.
    #[inline]
    pub fn dependencies(&self, pid: usize, mut f: impl FnMut(usize)) {
        let p = self.p;
        let mut prev = u32::MAX;
        self.channels(pid, |c| {
            if prev != u32::MAX {
                f(prev as usize * p + c as usize % p);
            }
            prev = c;
        });
    }

    /// The channel a dependency `d` leads to.
    #[inline]
    pub fn dep_target(&self, d: usize) -> usize {
        let c1 = d / self.p;
        self.far[c1] as usize * self.p + d % self.p
    }

    /// Bytes of the next-hop table.
    pub fn bytes(&self) -> u64 {
        (self.next.len() * std::mem::size_of::<PortId>() + self.end_of.len() * 4) as u64
    }
}

/// SSSP (phase 1): one Dijkstra per destination with key `(hops, load)`; with `balance`, each
/// destination's routes then add their server pairs to the load of the channels they cross
/// (without it, every load stays 0: plain shortest paths with ties broken by switch id).
pub fn sssp(net: &Fabric, balance: bool) -> Routes {
    let mut r = Routes::new(net);
    let (n, p, e) = (r.n, r.p, r.e());
    let servers: Vec<u64> = (0..n as SwitchId).map(|s| net.servers_at(s) as u64).collect();
    let mut load = vec![0u64; n * p];
    let mut order: Vec<usize> = (0..e).collect();
    order.sort_by_key(|&t| Reverse(servers[r.ends[t] as usize]));
    let mut best = vec![(u32::MAX, u64::MAX); n];
    let mut done = vec![false; n];
    let mut popped: Vec<u32> = Vec::with_capacity(n);
    let mut below = vec![0u64; n];
    let mut heap = BinaryHeap::new();
    for &t in &order {
        let dst = r.ends[t];
        best.fill((u32::MAX, u64::MAX));
        done.fill(false);
        popped.clear();
        let row = &mut r.next[t * n..(t + 1) * n];
        best[dst as usize] = (0, 0);
        heap.push(Reverse((0u32, 0u64, dst)));
        while let Some(Reverse((h, l, v))) = heap.pop() {
            if done[v as usize] {
                continue;
            }
            done[v as usize] = true;
            popped.push(v);
            for q in 0..net.switch_ports(v) as PortId {
                // The channel u -> v (port `pu` of `u`) carries traffic from u towards t.
                let Some((u, pu)) = net.neighbour(v, q) else { continue };
                if done[u as usize] {
                    continue;
                }
                let cand = (h + 1, l + load[u as usize * p + pu as usize]);
                if cand < best[u as usize] {
                    best[u as usize] = cand;
                    row[u as usize] = pu;
                    heap.push(Reverse((cand.0, cand.1, u)));
                }
            }
        }
        if !balance {
            continue;
        }
        // Children are popped after their parents (one more hop), so in reverse pop order each
        // switch knows the servers whose routes to t pass through it.
        let st = servers[dst as usize];
        for &v in popped.iter().rev() {
            let v = v as usize;
            below[v] += servers[v];
            if v != dst as usize {
                let c = v * p + row[v] as usize;
                load[c] += below[v] * st;
                below[r.far[c] as usize] += below[v];
            }
        }
        for &v in &popped {
            below[v as usize] = 0;
        }
    }
    r
}

/// DFSSSP phase 2: the layer of every pair (`pid = s * e + t`; `u8::MAX` for unrouted pairs) and
/// the number of layers.
pub fn break_cycles(r: &Routes) -> Result<(Vec<u8>, usize), usize> {
    const WHITE: u8 = 0;
    const GREY: u8 = 1;
    const BLACK: u8 = 2;
    let (n, p, e) = (r.n, r.p, r.e());
    let nch = n * p;
    let mut layer_of = vec![u8::MAX; e * e];
    let mut set: Vec<u32> = (0..e * e).filter(|&pid| r.routed(pid)).map(|pid| pid as u32).collect();
    let mut cnt = vec![0u32; nch * p];
    let mut off = vec![0u32; nch * p + 1];
    let mut list: Vec<u32> = Vec::new();
    let mut color = vec![WHITE; nch];
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let mut pos = vec![0u32; nch];
    let mut moved: Vec<u32> = Vec::new();
    let mut layer = 0usize;
    while !set.is_empty() {
        if layer >= MAX_LAYERS {
            return Err(layer + 1);
        }
        for &pid in &set {
            layer_of[pid as usize] = layer as u8;
        }
        // The layer's CDG: routes per dependency, and which routes (CSR by dependency).
        cnt.fill(0);
        for &pid in &set {
            r.dependencies(pid as usize, |d| cnt[d] += 1);
        }
        off[0] = 0;
        for d in 0..cnt.len() {
            off[d + 1] = off[d] + cnt[d];
        }
        list.clear();
        list.resize(off[cnt.len()] as usize, 0);
        let mut fill = off.clone();
        for &pid in &set {
            r.dependencies(pid as usize, |d| {
                list[fill[d] as usize] = pid;
                fill[d] += 1;
            });
        }
        color.fill(WHITE);
        moved.clear();
        for root in 0..nch {
            if color[root] != WHITE || r.far[root] == u32::MAX {
                continue;
            }
            // Depth-first search from `root`; on a cycle, break it and search again from `root`
            // (black channels stay black: removing dependencies cannot make a cycle reachable).
            'search: loop {
                color[root] = GREY;
                pos[root] = 0;
                stack.push((root as u32, 0));
                while let Some(top) = stack.len().checked_sub(1) {
                    let c = stack[top].0 as usize;
                    let mut q = stack[top].1 as usize;
                    let mut deeper = None;
                    while q < p {
                        let d = c * p + q;
                        q += 1;
                        if cnt[d] == 0 {
                            continue;
                        }
                        let w = r.dep_target(d);
                        match color[w] {
                            WHITE => {
                                deeper = Some(w);
                                break;
                            }
                            GREY => {
                                // The cycle: stack[pos[w]..] and back to w. Its weakest dependency
                                // (fewest routes; the first such) moves its routes up a layer.
                                let mut weakest = d;
                                for k in pos[w] as usize..top {
                                    let (a, b) = (stack[k].0 as usize, stack[k + 1].0 as usize);
                                    let dk = a * p + b % p;
                                    if cnt[dk] < cnt[weakest] {
                                        weakest = dk;
                                    }
                                }
                                for &pid in &list[off[weakest] as usize..off[weakest + 1] as usize] {
                                    let pid = pid as usize;
                                    if layer_of[pid] as usize == layer {
                                        layer_of[pid] = layer as u8 + 1;
                                        moved.push(pid as u32);
                                        r.dependencies(pid, |x| cnt[x] -= 1);
                                    }
                                }
                                debug_assert_eq!(cnt[weakest], 0);
                                for &(x, _) in &stack {
                                    color[x as usize] = WHITE;
                                }
                                stack.clear();
                                continue 'search;
                            }
                            _ => {}
                        }
                    }
                    stack[top].1 = q as u32;
                    match deeper {
                        Some(w) => {
                            color[w] = GREY;
                            pos[w] = stack.len() as u32;
                            stack.push((w as u32, 0));
                        }
                        None => {
                            color[c] = BLACK;
                            stack.pop();
                        }
                    }
                }
                break;
            }
        }
        std::mem::swap(&mut set, &mut moved);
        layer += 1;
    }
    Ok((layer_of, layer))
}

/// VCs from layers: `vcs >= layers` VCs, the spare ones spread over the layers with the most
/// routes per VC (OpenSM's DFSSSP balancing); the routes of a layer alternate among its VCs in pair
/// order.
pub fn spread(layer_of: &[u8], layers: usize, vcs: usize) -> Vec<u8> {
    // No route crosses a switch-to-switch link (one live switch with servers, after faults): no
    // layer to spread over, every pair on VC 0 (it indexed an empty table).
    if layers == 0 {
        return vec![0; layer_of.len()];
    }
    let mut paths = vec![0u64; layers];
    for &l in layer_of.iter().filter(|&&l| l != u8::MAX) {
        paths[l as usize] += 1;
    }
    let mut split = vec![1u64; layers];
    for _ in layers..vcs {
        // The layer with the most routes per VC (the first such).
        let mut best = 0;
        for l in 1..layers {
            if paths[l] as u128 * split[best] as u128 > paths[best] as u128 * split[l] as u128 {
                best = l;
            }
        }
        split[best] += 1;
    }
    let mut base = vec![0u64; layers];
    for l in 1..layers {
        base[l] = base[l - 1] + split[l - 1];
    }
    let mut seen = vec![0u64; layers];
    layer_of
        .iter()
        .map(|&l| {
            if l == u8::MAX {
                return 0;
            }
            let l = l as usize;
            let vc = base[l] + seen[l] % split[l];
            seen[l] += 1;
            vc as u8
        })
        .collect()
}

/// The VC count for `layers` layers: `configured` (0: the layers), or an error naming
/// `routing.vcs` and the number needed.
pub(crate) fn vcs_for_layers(name: &str, configured: usize, layers: usize) -> Result<usize, ConfigError> {
    let vcs = if configured == 0 { layers.max(1) } else { configured };
    if layers > vcs || layers > MAX_VCS {
        return Err(ConfigError::value(
            "routing.vcs",
            if configured == 0 { "0 (the layers needed)".to_string() } else { configured.to_string() },
            format!(
                "{name} needs {layers} virtual layers (VCs) to be deadlock free on this network: set routing.vcs to \
                 at least {layers}{}",
                if layers > MAX_VCS {
                    format!(", which is more than the {MAX_VCS} VCs the router supports: use another routing")
                } else {
                    String::new()
                }
            ),
        ));
    }
    Ok(vcs)
}

/// One next hop per (switch, destination) and one VC per (source, destination) pair: DFSSSP and
/// LASH.
pub struct LayeredTables {
    name: &'static str,
    routes: Routes,
    /// `vc[s * e + t]`.
    vc: Vec<u8>,
    vcs: usize,
    report: TableReport,
}

impl LayeredTables {
    /// Tables from `routes` and the layer of every pair, over `configured` VCs (0: the layers).
    pub fn new(
        name: &'static str,
        routes: Routes,
        layer_of: &[u8],
        layers: usize,
        configured: usize,
        start: Instant,
    ) -> Result<Self, ConfigError> {
        let vcs = vcs_for_layers(name, configured, layers)?;
        let vc = spread(layer_of, layers, vcs);
        let bytes = routes.bytes() + vc.len() as u64;
        let report = TableReport {
            layers,
            bytes,
            build_seconds: start.elapsed().as_secs_f64(),
            note: format!("{name}: {layers} virtual layer(s) needed"),
            ..Default::default()
        };
        Ok(LayeredTables { name, routes, vc, vcs, report })
    }

    /// DFSSSP over `net` with `configured` VCs (0: the layers needed).
    pub fn dfsssp(net: &Fabric, configured: usize) -> Result<Self, ConfigError> {
        let start = Instant::now();
        let routes = sssp(net, true);
        let (layer_of, layers) = break_cycles(&routes).map_err(|l| too_many("dfsssp", l))?;
        Self::new("dfsssp", routes, &layer_of, layers, configured, start)
    }

    /// The next-hop tables.
    pub fn routes(&self) -> &Routes {
        &self.routes
    }
}

/// The error for a network that needs more layers than the builders compute.
pub(crate) fn too_many(name: &str, layers: usize) -> ConfigError {
    ConfigError::value(
        "routing.vcs",
        "any",
        format!(
            "{name} needs more than {} virtual layers on this network (gave up at {layers}); use another routing",
            layers - 1
        ),
    )
}

impl Routing for LayeredTables {
    fn name(&self) -> &'static str {
        self.name
    }
    fn vcs(&self) -> usize {
        self.vcs
    }
    #[inline]
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        let r = &self.routes;
        let (s, t) = (r.end_of[st.src as usize], r.end_of[st.dst as usize]);
        if s == u32::MAX || t == u32::MAX {
            return;
        }
        let port = r.next[t as usize * r.n + at as usize];
        if port != NO_PORT {
            let vc = self.vc[s as usize * r.e() + t as usize];
            out.push(Candidate { port, vc, penalty: 0, escape: false });
        }
    }
    fn tables(&self) -> Option<TableReport> {
        Some(self.report.clone())
    }
}

/// `routing.algorithm = "dfsssp"`: reads `routing.vcs` (0: the layers needed) and refuses any
/// `routing.vc_policy` but the default.
pub fn build(cfg: &RoutingParams, net: Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError> {
    own_vc_policy(cfg, "dfsssp", "one VC per virtual layer")?;
    Ok(Box::new(LayeredTables::dfsssp(&net, cfg.vcs.unwrap_or(0))?))
}
