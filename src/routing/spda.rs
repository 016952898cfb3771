//! SPDA, the spanning-tree deadlock avoidance of the DAVC paper (section 7.2 and Fig. 5; after
//! multiple-spanning-tree routing, its refs. \[22\] and \[34\]), the baseline of its RRG experiments
//! (Fig. 8 and 9).
//!
//! "Given a network topology and a number m (configurable) of VCs to be used, \[SPDA\] calculates m
//! spanning trees which will be used to route the traffic. The creation of the spanning trees is
//! performed by selecting a root node at random and using a breadth first search (BFS) to create a
//! minimal spanning tree from it. When a packet is injected, one of the m VCs is selected randomly
//! and the packet will follow the path determined by the corresponding spanning tree."
//!
//! - `m = routing.vcs` trees (0: 1); tree `k` is used on VC `k` only.
//! - Roots: `m` distinct live switches drawn at random from the config's `seed` (a partial
//!   Fisher-Yates shuffle of the live switches; with more trees than live switches, roots repeat
//!   after every switch has been one).
//! - Tree `k`: the BFS tree from its root over the live links, each switch attached to the first
//!   switch that discovers it (switches in BFS order, ports in increasing order).
//! - A packet draws its tree uniformly at injection (router stream of its source switch, kept in
//!   [`RouteState::phase`]) and follows the unique tree path: up towards the root until the
//!   destination is below, then down. Routes on one tree are Up*/Down* paths of that tree, so each
//!   VC's channel dependency graph is acyclic, and VCs never depend on each other.
//!
//! Memory: per tree and switch, the port to the parent and the pre-order interval of its subtree
//! (`O(m n)`); a child's subtree containing the destination is found by binary search among the
//! switch's children, sorted by pre-order. The report gives the build time.
//!
//! The DAVC paper runs SPDA with up to 128 VCs; here `m <= 64`, because the router keeps 64 VCs
//! per port at most ([`super::vc::MAX_VCS`]: one bit per VC in each port's occupancy masks, a
//! `u64`), and `routing.vcs` is validated against that. Nothing in SPDA itself stops at 64 (the
//! tree index is a `u8`); lifting the router's limit would widen every port record of every run
//! for this one baseline, so it stays (docs/validity-ugal-nue.md).

use super::dfsssp::own_vc_policy;
use super::{Candidate, RouteState, Routing, RoutingParams, TableReport};
use crate::error::ConfigError;
use crate::rng::{below, stream, Purpose, Rng};
use crate::topology::fabric::UNREACHABLE;
use crate::topology::{Fabric, PortId, SwitchId};
use std::sync::Arc;
use std::time::Instant;

/// One BFS spanning tree.
struct Tree {
    /// Port of each switch towards its parent (unused at the root and at failed switches).
    up: Vec<PortId>,
    /// Pre-order number of each switch, and one past the last of its subtree.
    pre: Vec<u32>,
    end: Vec<u32>,
    /// Children of `x`: `kids[kids_at[x]..kids_at[x + 1]]`, `(pre-order, port)`, by pre-order.
    kids_at: Vec<u32>,
    kids: Vec<(u32, PortId)>,
}

impl Tree {
    /// The BFS tree of the live network rooted at `root`, or the first live switch it misses.
    fn bfs(net: &Fabric, root: SwitchId) -> Result<Tree, SwitchId> {
        let n = net.num_switches();
        let mut parent = vec![UNREACHABLE; n];
        let mut up = vec![0 as PortId; n];
        let mut order = Vec::with_capacity(n);
        parent[root as usize] = root;
        order.push(root);
        let mut head = 0;
        while head < order.len() {
            let x = order[head];
            head += 1;
            for q in 0..net.switch_ports(x) as PortId {
                if let Some((y, qy)) = net.neighbour(x, q) {
                    if parent[y as usize] == UNREACHABLE {
                        parent[y as usize] = x;
                        up[y as usize] = qy;
                        order.push(y);
                    }
                }
            }
        }
        if let Some(miss) = (0..n as SwitchId).find(|&s| net.switch_alive(s) && parent[s as usize] == UNREACHABLE) {
            return Err(miss);
        }
        // Children lists (by port order of the parent), then an iterative pre-order walk.
        let mut kids_at = vec![0u32; n + 1];
        for &y in &order[1..] {
            kids_at[parent[y as usize] as usize + 1] += 1;
        }
        for i in 0..n {
            kids_at[i + 1] += kids_at[i];
        }
        let mut fill = kids_at.clone();
        let mut child = vec![0 as SwitchId; order.len().saturating_sub(1)];
        for &y in &order[1..] {
            let x = parent[y as usize] as usize;
            child[fill[x] as usize] = y;
            fill[x] += 1;
        }
        let (mut pre, mut end) = (vec![0u32; n], vec![0u32; n]);
        let mut counter = 0u32;
        let mut stack: Vec<(SwitchId, u32)> = vec![(root, kids_at[root as usize])];
        pre[root as usize] = 0;
        counter += 1;
        while let Some(&mut (x, ref mut i)) = stack.last_mut() {
            if *i < kids_at[x as usize + 1] {
                let y = child[*i as usize];
                *i += 1;
                pre[y as usize] = counter;
                counter += 1;
                stack.push((y, kids_at[y as usize]));
            } else {
                end[x as usize] = counter;
                stack.pop();
            }
        }
        // The port from a parent to each child: the child's parent link seen from the parent.
        let mut kids = vec![(0u32, 0 as PortId); child.len()];
        for x in 0..n {
            for i in kids_at[x]..kids_at[x + 1] {
                let y = child[i as usize];
                let down = net.neighbour(y, up[y as usize]).map(|(_, q)| q).expect("tree links are live");
                kids[i as usize] = (pre[y as usize], down);
            }
            kids[kids_at[x] as usize..kids_at[x + 1] as usize].sort_unstable();
        }
        Ok(Tree { up, pre, end, kids_at, kids })
    }

    /// The port of `at` on the tree path towards `dst`.
    #[inline]
    fn port(&self, at: SwitchId, dst: SwitchId) -> PortId {
        let (a, t) = (at as usize, self.pre[dst as usize]);
        if t > self.pre[a] && t < self.end[a] {
            // Below: the last child whose pre-order is not after t.
            let kids = &self.kids[self.kids_at[a] as usize..self.kids_at[a + 1] as usize];
            let i = kids.partition_point(|&(p, _)| p <= t);
            kids[i - 1].1
        } else {
            self.up[a]
        }
    }

    fn bytes(&self) -> u64 {
        (self.up.len() * 2 + self.pre.len() * 8 + self.kids_at.len() * 4 + self.kids.len() * 8) as u64
    }
}

/// SPDA over `m` trees.
pub struct Spda {
    trees: Vec<Tree>,
    roots: Vec<SwitchId>,
    report: TableReport,
}

impl Spda {
    /// `m` BFS trees of `net` with roots drawn from `seed`.
    pub fn new(net: &Fabric, m: usize, seed: u64) -> Result<Self, ConfigError> {
        let start = Instant::now();
        let mut live: Vec<SwitchId> = (0..net.num_switches() as SwitchId).filter(|&s| net.switch_alive(s)).collect();
        let mut rng = stream(seed, 0x5bda, Purpose::Global);
        let mut roots = Vec::with_capacity(m);
        while roots.len() < m {
            let k = roots.len() % live.len();
            let j = k + below(&mut rng, (live.len() - k) as u64) as usize;
            live.swap(k, j);
            roots.push(live[k]);
        }
        let mut trees = Vec::with_capacity(m);
        for &root in &roots {
            trees.push(Tree::bfs(net, root).map_err(|miss| {
                ConfigError::value(
                    "faults",
                    format!("{} failed links", net.failed_links()),
                    format!(
                        "a connected network: spda's spanning tree from switch {root} does not reach switch {miss} (use \
                         fewer faults or another faults.seed)"
                    ),
                )
            })?);
        }
        let bytes = trees.iter().map(Tree::bytes).sum();
        let report = TableReport {
            layers: m,
            bytes,
            build_seconds: start.elapsed().as_secs_f64(),
            note: format!("{m} spanning tree(s), one per VC"),
            ..Default::default()
        };
        Ok(Spda { trees, roots, report })
    }

    /// The root of each tree.
    pub fn roots(&self) -> &[SwitchId] {
        &self.roots
    }
}

impl Routing for Spda {
    fn name(&self) -> &'static str {
        "spda"
    }
    fn vcs(&self) -> usize {
        self.trees.len()
    }
    fn init(&self, st: &mut RouteState, rng: &mut Rng) {
        st.phase = below(rng, self.trees.len() as u64) as u8;
    }
    fn init_choices(&self, st: &RouteState, f: &mut dyn FnMut(RouteState)) {
        for k in 0..self.trees.len() {
            f(RouteState { phase: k as u8, ..*st });
        }
    }
    #[inline]
    fn candidates(&self, at: SwitchId, st: &RouteState, out: &mut Vec<Candidate>) {
        let port = self.trees[st.phase as usize].port(at, st.dst);
        out.push(Candidate { port, vc: st.phase, penalty: 0, escape: false });
    }
    fn tables(&self) -> Option<TableReport> {
        Some(self.report.clone())
    }
}

/// `routing.algorithm = "spda"`: `routing.vcs` trees (0: 1), roots drawn from `seed`; refuses any
/// `routing.vc_policy` but the default.
pub fn build(cfg: &RoutingParams, net: Arc<Fabric>) -> Result<Box<dyn Routing>, ConfigError> {
    own_vc_policy(cfg, "spda", "VC k carries the packets that follow spanning tree k")?;
    Ok(Box::new(Spda::new(&net, cfg.vcs_or(1), cfg.seed)?))
}
