//! The fabric: a topology with its faults applied, and the distances routing reads.
//!
//! [`Fabric`] is what every routing algorithm and the router see: the topology, which switch ports
//! are alive, and graph distances. Without faults, distances come from the topology's formula (no
//! tables, so a million-endpoint HyperX needs no O(switches^2) memory). With faults, a HyperX keeps
//! its closed form plus a sparse list of the pairs whose every shortest path a fault cut
//! ([`SparseDistances`], exact; checked against BFS in debug builds); a HyperZ or fat tree with side
//! links at every level keeps its closed form plus the per-destination exceptions of
//! [`Exceptions`] (exact, likewise checked; towards the switches with servers only, unless the
//! routing heads for others, [`Targets`]); other families compute all-pairs distances by BFS and
//! store them as one byte per ordered pair, row per destination.

use super::distances::{SparseDistances, DEBUG_CHECK_SWITCHES};
use super::exceptions::{Exceptions, OverBudget};
pub use super::faults::FaultSet;
use super::hyperz_exceptions::HyperZSeeds;
use super::{HyperX, HyperZ, PortId, SwitchId, Topology, View};
use rayon::prelude::*;
use std::sync::Arc;

/// Distance value for "unreachable".
pub const UNREACHABLE: u32 = u32::MAX;

/// Towards which switches a faulty HyperZ or fat tree keeps its distance exceptions
/// ([`Exceptions`], module doc "Which destinations").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Targets {
    /// Every switch: for routings that head for switches without servers (Valiant's intermediates).
    Every,
    /// The switches with servers, where packets go: distances with neither end among them are not
    /// served. On a 4-level fat tree this keeps a small fraction of the exceptions.
    ServerSwitches,
}

/// Every switch-to-switch link once, as the end with the lower `(switch, port)`.
pub fn all_links(topo: &dyn Topology) -> Vec<(SwitchId, PortId)> {
    let mut v = Vec::new();
    for s in 0..topo.num_switches() as SwitchId {
        for p in 0..topo.switch_ports(s) as PortId {
            if let Some((o, q)) = topo.neighbour(s, p) {
                if (s, p) < (o, q) {
                    v.push((s, p));
                }
            }
        }
    }
    v
}

/// A topology with faults applied: what routing algorithms and the router model read.
pub struct Fabric {
    topo: Arc<dyn Topology>,
    /// `dead[s * ports + p]`: port `p` of switch `s` has failed. Empty when fault-free.
    dead: Vec<bool>,
    /// `dead_switch[s]`: switch `s` has failed (its ports are dead too). Empty when none has.
    dead_switch: Vec<bool>,
    /// All-pairs distances `dist[dst * n + src]` when faulty and neither a HyperX nor a HyperZ or fat
    /// tree with side links at every level; empty otherwise.
    dist: Vec<u8>,
    /// Distances of a faulty HyperX: Hamming distance plus exceptions.
    sparse: Option<SparseDistances>,
    /// Distances of a faulty HyperZ or fat tree: its closed form plus exceptions.
    tree: Option<Exceptions<HyperZ>>,
    /// Stride of per-port arrays: the largest number of switch-to-switch ports of a switch.
    ports: usize,
    /// The most router ports (servers plus switch-to-switch ports) of any switch.
    router_ports: usize,
    n: usize,
    failed_links: usize,
    failed_switches: usize,
    /// The topology's HyperX view when it is one and has no faults: minimal ports and distances
    /// then come from coordinates, read without a virtual call (taken once, from [`View`]).
    fault_free_hyperx: Option<HyperX>,
    /// Likewise for a HyperZ or fat tree without faults.
    fault_free_hyperz: Option<HyperZ>,
}

impl Fabric {
    /// Apply `faults` to `topo`; computes distance tables by BFS if there are faults. Serves the
    /// distance of every pair ([`Targets::Every`]).
    pub fn new(topo: Arc<dyn Topology>, faults: &FaultSet) -> Self {
        Self::with_targets(topo, faults, Targets::Every)
    }

    /// [`Fabric::new`], where a faulty HyperZ or fat tree keeps exceptions only towards `targets`:
    /// with [`Targets::ServerSwitches`], [`Fabric::distance`] serves the pairs with at least one
    /// end that has servers, and [`Fabric::distances_to_every_switch`] is false.
    pub fn with_targets(topo: Arc<dyn Topology>, faults: &FaultSet, targets: Targets) -> Self {
        match Self::within(topo, faults, targets, None) {
            Ok(net) => net,
            Err(_) => unreachable!("a build without a budget is never over it"),
        }
    }

    /// [`Fabric::with_targets`], where the exception lists of a faulty HyperZ or fat tree may take
    /// at most `budget` bytes at the peak of their build ([`Exceptions::new`]); `None`: no limit.
    /// Errors with [`OverBudget`] when they would take more (the other families' distances are
    /// counted up front by the config's memory check).
    pub fn within(
        topo: Arc<dyn Topology>,
        faults: &FaultSet,
        targets: Targets,
        budget: Option<u64>,
    ) -> Result<Self, OverBudget> {
        let ports = topo.max_switch_ports();
        let n = topo.num_switches();
        let router_ports = (0..n as SwitchId).map(|s| topo.servers_at(s) + topo.switch_ports(s)).max().unwrap_or(0);
        let mut dead = Vec::new();
        let mut dead_switch = Vec::new();
        let mut failed_links = 0;
        if !faults.is_empty() {
            dead = vec![false; n * ports];
            let mut kill = |s: SwitchId, p: PortId| {
                let (o, q) = topo.neighbour(s, p).expect("fault on an unwired port");
                let i = s as usize * ports + p as usize;
                failed_links += !dead[i] as usize;
                dead[i] = true;
                dead[o as usize * ports + q as usize] = true;
            };
            for &(s, p) in &faults.links {
                kill(s, p);
            }
            // A failed switch takes all its links down.
            for &s in &faults.switches {
                for p in 0..topo.switch_ports(s) as PortId {
                    if topo.neighbour(s, p).is_some() {
                        kill(s, p);
                    }
                }
            }
            if !faults.switches.is_empty() {
                dead_switch = vec![false; n];
                for &s in &faults.switches {
                    dead_switch[s as usize] = true;
                }
            }
        }
        let fault_free_hyperx = match topo.view() {
            View::HyperX(h) if dead.is_empty() => Some(h.clone()),
            _ => None,
        };
        let fault_free_hyperz = match topo.view() {
            View::HyperZ(h) if dead.is_empty() => Some(h.clone()),
            _ => None,
        };
        let mut net = Fabric {
            topo,
            dead,
            dist: Vec::new(),
            sparse: None,
            tree: None,
            ports,
            router_ports,
            n,
            failed_links,
            failed_switches: dead_switch.iter().filter(|&&d| d).count(),
            dead_switch,
            fault_free_hyperx,
            fault_free_hyperz,
        };
        if net.is_faulty() {
            let sparse = match net.topo.view() {
                View::HyperX(h) => SparseDistances::new(h, |s, p| net.alive(s, p)),
                _ => None,
            };
            let tree = match (&sparse, net.topo.view()) {
                (None, View::HyperZ(h)) => HyperZSeeds::new(h, |s, p| net.alive(s, p)).map(|seeds| {
                    let target = match targets {
                        Targets::Every => Vec::new(),
                        Targets::ServerSwitches => (0..n as SwitchId).map(|s| h.servers_of(s) > 0).collect(),
                    };
                    Exceptions::new(h.clone(), |s, p| net.alive(s, p), |s| net.switch_alive(s), &seeds, target, budget)
                }),
                _ => None,
            };
            let tree = tree.transpose()?;
            match (sparse, tree) {
                (Some(sd), _) => net.sparse = Some(sd),
                (None, Some(ex)) => net.tree = Some(ex),
                (None, None) => net.dist = net.all_pairs_bfs(),
            }
            if (net.sparse.is_some() || net.tree.is_some()) && cfg!(debug_assertions) && n <= DEBUG_CHECK_SWITCHES {
                net.check_against_bfs();
            }
        }
        Ok(net)
    }

    /// Debug builds: every distance served equals plain BFS over the live links.
    fn check_against_bfs(&self) {
        for b in 0..self.n as SwitchId {
            for (a, d) in self.bfs(b).into_iter().enumerate() {
                if !self.serves(a as SwitchId, b) {
                    continue;
                }
                let want = if d == UNREACHABLE { UNREACHABLE } else { d.min(254) };
                assert_eq!(self.distance(a as SwitchId, b), want, "distance from switch {a} to {b}");
            }
        }
    }

    /// Whether [`Fabric::distance`] serves the pair `(a, b)`: always, except on a faulty HyperZ or fat
    /// tree built with [`Targets::ServerSwitches`] when neither end has servers.
    pub fn serves(&self, a: SwitchId, b: SwitchId) -> bool {
        self.tree.as_ref().is_none_or(|ex| ex.is_target(a) || ex.is_target(b))
    }

    /// Whether [`Fabric::distance`] and minimal ports serve every pair of switches (see
    /// [`Fabric::with_targets`]).
    pub fn distances_to_every_switch(&self) -> bool {
        self.tree.as_ref().is_none_or(|ex| ex.every_target())
    }

    /// The sparse distances of a faulty HyperX (see [`SparseDistances`]).
    #[inline]
    pub fn sparse_distances(&self) -> Option<&SparseDistances> {
        self.sparse.as_ref()
    }

    /// The exceptions of a faulty HyperZ or fat tree (see [`Exceptions`]).
    #[inline]
    pub fn tree_exceptions(&self) -> Option<&Exceptions<HyperZ>> {
        self.tree.as_ref()
    }

    /// The underlying fault-free topology.
    pub fn topology(&self) -> &dyn Topology {
        &*self.topo
    }
    /// Shared handle to the topology.
    pub fn topology_arc(&self) -> Arc<dyn Topology> {
        self.topo.clone()
    }
    /// The HyperX when the network is one and has no faults (coordinates then give distances and
    /// minimal ports).
    #[inline]
    pub fn fault_free_hyperx(&self) -> Option<&HyperX> {
        self.fault_free_hyperx.as_ref()
    }
    /// The HyperZ (or fat tree) when the network is one and has no faults.
    #[inline]
    pub fn fault_free_hyperz(&self) -> Option<&HyperZ> {
        self.fault_free_hyperz.as_ref()
    }
    /// Whether any link has failed.
    pub fn is_faulty(&self) -> bool {
        !self.dead.is_empty()
    }
    /// Number of failed links (listed, or taken down by a failed switch).
    pub fn failed_links(&self) -> usize {
        self.failed_links
    }
    /// Number of failed switches.
    pub fn failed_switches(&self) -> usize {
        self.failed_switches
    }
    /// Whether switch `s` is alive (a failed switch has no live port and no live server).
    #[inline]
    pub fn switch_alive(&self, s: SwitchId) -> bool {
        self.dead_switch.is_empty() || !self.dead_switch[s as usize]
    }
    /// Servers of live switches.
    pub fn live_servers(&self) -> usize {
        if self.dead_switch.is_empty() {
            return self.num_servers();
        }
        (0..self.n as SwitchId).filter(|&s| self.switch_alive(s)).map(|s| self.servers_at(s)).sum()
    }
    /// Whether server `v` is alive (its switch is).
    #[inline]
    pub fn server_alive(&self, v: u32) -> bool {
        self.dead_switch.is_empty() || self.switch_alive(self.topo.server_switch(v))
    }
    /// Number of switches.
    pub fn num_switches(&self) -> usize {
        self.n
    }
    /// Number of servers.
    pub fn num_servers(&self) -> usize {
        self.topo.num_servers()
    }
    /// Switch-to-switch ports of `s`.
    #[inline]
    pub fn switch_ports(&self, s: SwitchId) -> usize {
        self.topo.switch_ports(s)
    }
    /// The largest number of switch-to-switch ports of a switch (stride of per-port arrays).
    pub fn max_switch_ports(&self) -> usize {
        self.ports
    }
    /// The most router ports (servers plus switch-to-switch ports) of any switch.
    pub fn max_router_ports(&self) -> usize {
        self.router_ports
    }
    /// Servers attached to `s`.
    #[inline]
    pub fn servers_at(&self, s: SwitchId) -> usize {
        self.topo.servers_at(s)
    }
    /// Whether port `p` of `s` is alive (not failed).
    #[inline]
    pub fn alive(&self, s: SwitchId, p: PortId) -> bool {
        self.dead.is_empty() || !self.dead[s as usize * self.ports + p as usize]
    }
    /// The far end of a wired, live port.
    #[inline]
    pub fn neighbour(&self, s: SwitchId, p: PortId) -> Option<(SwitchId, PortId)> {
        if self.alive(s, p) {
            self.topo.neighbour(s, p)
        } else {
            None
        }
    }
    /// Graph distance from `a` to `b` over live links ([`UNREACHABLE`] if disconnected). A pair
    /// that is not served ([`Fabric::serves`]) panics.
    #[inline]
    pub fn distance(&self, a: SwitchId, b: SwitchId) -> u32 {
        if let Some(h) = &self.fault_free_hyperx {
            h.hamming(a, b)
        } else if let Some(sd) = &self.sparse {
            sd.distance(a, b)
        } else if let Some(ex) = &self.tree {
            ex.distance(a, b)
        } else if self.dist.is_empty() {
            self.topo.distance(a, b)
        } else {
            let d = self.dist[b as usize * self.n + a as usize];
            if d == u8::MAX {
                UNREACHABLE
            } else {
                d as u32
            }
        }
    }

    /// Distances from every switch to `root` (BFS over live links).
    pub fn bfs(&self, root: SwitchId) -> Vec<u32> {
        let mut d = vec![UNREACHABLE; self.n];
        let mut q = std::collections::VecDeque::with_capacity(self.n);
        super::bfs_hops(root, &mut d, &mut q, |s| {
            (0..self.switch_ports(s) as PortId).filter_map(move |p| self.neighbour(s, p)).map(|(o, _)| o)
        });
        d
    }

    fn all_pairs_bfs(&self) -> Vec<u8> {
        let n = self.n;
        let mut dist = vec![u8::MAX; n * n];
        // Links are bidirectional, so BFS from the destination gives the row d(., dst).
        dist.par_chunks_mut(n).enumerate().for_each(|(dst, row)| {
            for (s, d) in self.bfs(dst as SwitchId).into_iter().enumerate() {
                row[s] = if d == UNREACHABLE { u8::MAX } else { d.min(254) as u8 };
            }
        });
        dist
    }

    /// Number of live switch-to-switch links.
    pub fn live_links(&self) -> usize {
        all_links(&*self.topo).into_iter().filter(|&(s, p)| self.alive(s, p)).count()
    }

    /// Diameter, average distance over all ordered pairs of server-bearing switches (self pairs
    /// included, as in SurePath Table 3), and connectivity. Without faults, BFS runs only from the
    /// topology's [`Topology::distance_sources`] (one per orbit of its symmetries), each weighted by
    /// its orbit; with faults, from every server-bearing switch.
    pub fn distance_stats(&self) -> DistanceStats {
        let topo = &*self.topo;
        if let Some(hist) = self.sparse_histogram().or_else(|| self.tree_histogram()) {
            let pairs: u64 = hist.iter().sum();
            let sum: u64 = hist.iter().enumerate().map(|(d, &c)| d as u64 * c).sum();
            return DistanceStats {
                diameter: (hist.len() as u32).saturating_sub(1),
                average_distance: if pairs == 0 { 0.0 } else { sum as f64 / pairs as f64 },
                connected: true,
                histogram: Vec::new(),
            };
        }
        let sources: Vec<(SwitchId, u64)> = if self.is_faulty() {
            (0..self.n as SwitchId)
                .filter(|&s| topo.servers_at(s) > 0 && self.switch_alive(s))
                .map(|s| (s, 1))
                .collect()
        } else {
            topo.distance_sources()
        };
        let per_root: Vec<(Vec<u64>, bool)> = sources
            .par_iter()
            .map(|&(r, w)| {
                let mut hist = Vec::new();
                let mut connected = true;
                for (s, x) in self.bfs(r).into_iter().enumerate() {
                    if topo.servers_at(s as SwitchId) == 0 || !self.switch_alive(s as SwitchId) {
                        continue;
                    }
                    if x == UNREACHABLE {
                        connected = false;
                    } else {
                        if hist.len() <= x as usize {
                            hist.resize(x as usize + 1, 0);
                        }
                        hist[x as usize] += w;
                    }
                }
                (hist, connected)
            })
            .collect();
        let mut histogram: Vec<u64> = Vec::new();
        for (h, _) in &per_root {
            if histogram.len() < h.len() {
                histogram.resize(h.len(), 0);
            }
            for (i, &c) in h.iter().enumerate() {
                histogram[i] += c;
            }
        }
        let pairs: u64 = histogram.iter().sum();
        let sum: u64 = histogram.iter().enumerate().map(|(d, &c)| d as u64 * c).sum();
        // The histogram is over all (weighted) sources; report it per source switch, as from one
        // switch of a vertex-transitive network.
        let weight: u64 = sources.iter().map(|x| x.1).sum();
        DistanceStats {
            diameter: (histogram.len() as u32).saturating_sub(1),
            average_distance: if pairs == 0 { 0.0 } else { sum as f64 / pairs as f64 },
            connected: per_root.iter().all(|x| x.1),
            histogram: if sources.len() == 1 && weight > 0 {
                histogram.iter().map(|&c| c / weight).collect()
            } else {
                Vec::new()
            },
        }
    }
}

impl Fabric {
    /// The distance histogram of all ordered pairs of live switches from the sparse distances, when
    /// they exist, the live switches are connected and every switch has servers (what the BFS of
    /// [`Fabric::distance_stats`] would count): O(exceptions + failed switches^2) instead of
    /// O(switches x links).
    fn sparse_histogram(&self) -> Option<Vec<u64>> {
        let sd = self.sparse.as_ref()?;
        if self.topo.uniform_servers().is_none_or(|t| t == 0) || self.n <= 1 {
            return None;
        }
        let dead: Vec<SwitchId> = (0..self.n as SwitchId).filter(|&x| !self.switch_alive(x)).collect();
        sd.histogram(&dead)
    }
}

impl Fabric {
    /// The distance histogram of all ordered pairs of live server-bearing switches from the
    /// exceptions of a faulty HyperZ or fat tree, when the live server-bearing switches are
    /// connected: the fault-free histogram from one source per orbit ([`Topology::distance_sources`],
    /// closed form), less the pairs with a failed end, with each exception moved from its closed-form
    /// distance to its exact one. O(orbits x switches + failed x switches + exceptions) instead of a
    /// BFS from every switch.
    pub(crate) fn tree_histogram(&self) -> Option<Vec<u64>> {
        let ex = self.tree.as_ref()?;
        let h = ex.closed_form();
        let bearing: Vec<SwitchId> = (0..self.n as SwitchId).filter(|&s| h.servers_of(s) > 0).collect();
        let live = || bearing.iter().copied().filter(|&s| self.switch_alive(s));
        let first = live().next()?;
        if live().any(|s| !ex.same_component(s, first)) {
            return None;
        }
        let mut hist: Vec<i64> = Vec::new();
        let mut add = |d: u32, c: i64| {
            if hist.len() <= d as usize {
                hist.resize(d as usize + 1, 0);
            }
            hist[d as usize] += c;
        };
        for (r, w) in self.topo.distance_sources() {
            for &y in &bearing {
                add(h.switch_distance(r, y), w as i64);
            }
        }
        let dead: Vec<SwitchId> = bearing.iter().copied().filter(|&s| !self.switch_alive(s)).collect();
        for &x in &dead {
            for &y in &bearing {
                add(h.switch_distance(x, y), -2);
            }
            for &y in &dead {
                add(h.switch_distance(x, y), 1);
            }
        }
        for b in live() {
            let (src, dist) = ex.exceptions_to(b);
            for (&a, &d) in src.iter().zip(dist) {
                if h.servers_of(a) > 0 {
                    add(h.switch_distance(a, b), -1);
                    add(d as u32, 1);
                }
            }
        }
        while hist.last() == Some(&0) {
            hist.pop();
        }
        debug_assert!(hist.iter().all(|&c| c >= 0), "negative pair count in {hist:?}");
        Some(hist.into_iter().map(|c| c.max(0) as u64).collect())
    }
}

/// Distance properties of a network.
#[derive(Debug, Clone)]
pub struct DistanceStats {
    /// Largest finite distance.
    pub diameter: u32,
    /// Mean distance over all ordered pairs of switches, self pairs included (reachable pairs only).
    pub average_distance: f64,
    /// Whether every live switch with servers reaches every other.
    pub connected: bool,
    /// Fault-free networks with one distance source (vertex-transitive ones, e.g. HyperX): how many
    /// server-bearing switches are at each distance from a switch.
    pub histogram: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::HyperX;

    #[test]
    fn surepath_table3_distances() {
        // SurePath Table 3: 3-D 8x8x8 diameter 3, average distance 2.625 = 3 * 7/8 (all ordered pairs).
        // From a switch: 3*7 at distance 1, 3*49 at 2, 343 at 3.
        let h: Arc<dyn Topology> = Arc::new(HyperX::new(&[8, 8, 8], &[1, 1, 1], 8));
        let net = Fabric::new(h, &FaultSet::default());
        let s = net.distance_stats();
        assert_eq!(s.diameter, 3);
        assert!(s.connected);
        assert_eq!(s.histogram, vec![1, 21, 147, 343]);
        assert!((s.average_distance - 2.625).abs() < 1e-12);
    }

    #[test]
    fn faulty_bfs_agrees_with_hamming_where_links_survive() {
        let h: Arc<dyn Topology> = Arc::new(HyperX::new(&[4, 4], &[1, 1], 1));
        let f = FaultSet::random_links(&*h, 3, 5).unwrap();
        let net = Fabric::new(h.clone(), &f);
        assert_eq!(net.live_links(), 48 - 3);
        for a in 0..16 {
            for b in 0..16 {
                let d = net.distance(a, b);
                assert!(d >= h.distance(a, b));
                assert!(d <= h.distance(a, b) + 2, "3 faults cannot stretch a 4x4 HyperX path by more than 2");
            }
        }
    }
}
