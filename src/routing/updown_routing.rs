//! Up*/Down* routing (Schroeder et al., "Autonet", IEEE JSAC 1991; the baseline of the Nue paper,
//! section 4: "delivers better performance than Up*/Down*"), `routing.algorithm = "updown"`, on any
//! topology, faulty or not.
//!
//! **Orientation.** A breadth-first spanning tree from the root `r` (`routing.escape_root`, the
//! key SurePath's Up/Down escape already uses; default switch 0) gives every live switch its depth
//! `d(x, r)` over the live links. Every live link gets a direction: `(x -> y)` is *up* when
//! `(d(y, r), y) < (d(x, r), x)` (closer to the root, ties by switch id, as Autonet breaks them),
//! *down* otherwise. So there are no horizontal links: the order `(depth, id)` is a total order of
//! the switches and every link goes up one way and down the other.
//!
//! **Legal routes** are zero or more up hops followed by zero or more down hops (no down -> up
//! turn). Every switch reaches the root by up hops (its BFS parent is one level up) and the root
//! reaches every switch by down hops, so every pair is routed. Deadlock freedom with one VC: order
//! the up channels by decreasing `(depth, id)` of their source, then the down channels by
//! increasing `(depth, id)` of their source; every dependency of a legal route goes forward in
//! this order, so the channel dependency graph is acyclic (`hxsim check-deadlock` verifies it).
//!
//! **Route choice: adaptive among the minimal legal routes.** Per destination `t` two distances
//! are tabulated, `dd(x, t)`, the fewest hops from `x` to `t` using down hops only, and
//! `ud(x, t) = min(dd(x, t), 1 + min over up hops x -> y of ud(y, t))`, the shortest legal route.
//! A packet carries one bit (`RouteState::phase`: 0 may still climb, 1 has gone down). At `x` its
//! candidates are every up port to `y` with `ud(y, t) + 1 = ud(x, t)` (phase 0 only) and every
//! down port to `y` with `dd(y, t) + 1` equal to `ud(x, t)` (phase 0) or `dd(x, t)` (phase 1), all
//! with penalty 0: the router picks the least occupied. Routes are the shortest legal routes,
//! which may be longer than the graph distance.
//!
//! **VCs** (`routing.vcs`, default 1): with more, every candidate is offered on every VC
//! (replicated). The order above is over physical links, so it still orders every dependency and
//! the graph stays acyclic; the extra VCs only add buffer space against head-of-line blocking.
//!
//! **Memory**: two `u16` tables of `switches x switches` entries (4 bytes per ordered pair, built
//! in parallel once, one row per destination); the build refuses (exit 2, naming
//! `routing.algorithm`) when they would not fit in the available memory.

use super::{Candidate, RouteState, Routing, RoutingParams, TableReport};
use crate::error::ConfigError;
use crate::topology::{Fabric, PortId, SwitchId};
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

/// Distance entry of a dead switch (never reached).
const FAR: u16 = u16::MAX;

/// Up*/Down* over a BFS spanning tree of the live links.
pub struct UpDownRouting {
    net: Arc<Fabric>,
    n: usize,
    vcs: usize,
    root: SwitchId,
    /// `(depth, id)` rank of every switch: a link `x -> y` is up iff `rank[y] < rank[x]`.
    rank: Vec<u32>,
    /// `ud[t * n + x]`: shortest legal (up* down*) route from `x` to `t`, hops.
    ud: Vec<u16>,
    /// `dd[t * n + x]`: shortest down-only route from `x` to `t`, hops.
    dd: Vec<u16>,
    report: TableReport,
}

/// `routing.algorithm = "updown"`: reads `routing.escape_root` and `routing.vcs` (the only config
/// this routing reads, in one place).
pub fn build(cfg: &RoutingParams, net: Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError> {
    if cfg.vc_policy != "ladder" {
        return Err(ConfigError::value(
            "routing.vc_policy",
            format!("\"{}\"", cfg.vc_policy),
            "updown is deadlock free on any VC (every route is legal on every VC); leave routing.vc_policy at its \
             default, \"ladder\"",
        ));
    }
    Ok(Box::new(UpDownRouting::new(net, cfg.escape_root, cfg.vcs_or(1))?))
}

impl UpDownRouting {
    /// Up*/Down* rooted at `root` with `vcs` replicated VCs over the live links of `net`.
    pub fn new(net: Arc<Fabric>, root: usize, vcs: usize) -> Result<Self, ConfigError> {
        let start = Instant::now();
        let n = net.num_switches();
        let depth = super::updown::root_depths(&net, root, "updown's spanning tree")?;
        let bytes = 4 * (n as u64) * (n as u64);
        super::refuse_tables_beyond(bytes, crate::memory::available_memory(), "updown", n)?;
        // Rank by (depth, id); dead switches last (they have no links).
        let mut order: Vec<SwitchId> = (0..n as SwitchId).collect();
        order.sort_by_key(|&x| (depth[x as usize], x));
        let mut rank = vec![0u32; n];
        for (i, &x) in order.iter().enumerate() {
            rank[x as usize] = i as u32;
        }
        let mut ud = vec![FAR; n * n];
        let mut dd = vec![FAR; n * n];
        let nw = &*net;
        ud.par_chunks_mut(n).zip(dd.par_chunks_mut(n)).enumerate().for_each(|(t, (ud, dd))| {
            if !nw.switch_alive(t as SwitchId) {
                return;
            }
            // dd: BFS from t backwards over down links (x -> y down iff rank[x] < rank[y]).
            let mut queue = std::collections::VecDeque::new();
            dd[t] = 0;
            queue.push_back(t as SwitchId);
            while let Some(y) = queue.pop_front() {
                for p in 0..nw.switch_ports(y) as PortId {
                    if let Some((x, _)) = nw.neighbour(y, p) {
                        if rank[x as usize] < rank[y as usize] && dd[x as usize] == FAR {
                            dd[x as usize] = dd[y as usize] + 1;
                            queue.push_back(x);
                        }
                    }
                }
            }
            // ud: by increasing rank, every up neighbour is done before.
            for &x in &order {
                if !nw.switch_alive(x) {
                    continue;
                }
                let mut best = dd[x as usize];
                for p in 0..nw.switch_ports(x) as PortId {
                    if let Some((y, _)) = nw.neighbour(x, p) {
                        if rank[y as usize] < rank[x as usize] && ud[y as usize] != FAR {
                            best = best.min(ud[y as usize] + 1);
                        }
                    }
                }
                ud[x as usize] = best;
            }
        });
        let report = TableReport {
            build_seconds: start.elapsed().as_secs_f64(),
            bytes,
            layers: 1,
            escape_fallbacks: 0,
            note: format!("up*/down* from root switch {root}, {vcs} replicated VCs"),
        };
        Ok(UpDownRouting { net, n, vcs, root: root as SwitchId, rank, ud, dd, report })
    }

    /// The root switch.
    pub fn root(&self) -> SwitchId {
        self.root
    }

    /// Whether the hop `x -> y` goes up (towards the root in the `(depth, id)` order).
    #[inline]
    pub fn is_up(&self, x: SwitchId, y: SwitchId) -> bool {
        self.rank[y as usize] < self.rank[x as usize]
    }

    /// Shortest legal route from `x` to `t`, hops.
    #[inline]
    pub fn legal_distance(&self, x: SwitchId, t: SwitchId) -> u32 {
        self.ud[t as usize * self.n + x as usize] as u32
    }
}

impl Routing for UpDownRouting {
    fn name(&self) -> &'static str {
        "updown"
    }
    fn vcs(&self) -> usize {
        self.vcs
    }
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        let row = st.dst as usize * self.n;
        let (ud, dd) = (&self.ud[row..row + self.n], &self.dd[row..row + self.n]);
        let here = if st.phase == 0 { ud[at as usize] } else { dd[at as usize] };
        if here == FAR {
            return;
        }
        let net = &*self.net;
        for p in 0..net.switch_ports(at) as PortId {
            let Some((y, _)) = net.neighbour(at, p) else { continue };
            let ok = if self.is_up(at, y) {
                st.phase == 0 && ud[y as usize] != FAR && ud[y as usize] + 1 == here
            } else {
                dd[y as usize] != FAR && dd[y as usize] + 1 == here
            };
            if ok {
                for vc in 0..self.vcs as u8 {
                    out.push(Candidate { port: p, vc, penalty: 0, escape: false });
                }
            }
        }
    }
    fn advance(&self, st: &mut RouteState, at: SwitchId, next: SwitchId, _c: &Candidate) {
        if !self.is_up(at, next) {
            st.phase = 1;
        }
    }
    fn tables(&self) -> Option<TableReport> {
        Some(self.report.clone())
    }
}
