//! The seeds of [`super::exceptions`] on a faulty HyperZ or fat tree: per destination `b`, the
//! switches `u` whose every link to a downhill neighbour (one hop closer to `b` in the fault-free
//! network) failed, found by a few binary searches in indexes of the failed links built once.
//!
//! **Which neighbours are downhill** (from [`HyperZ::switch_distance`], when every level has side
//! links: the switch graph is then the Cartesian product of the Z-node's tree and the Hamming graph
//! of the GHC, Adda 2023 section 3, and `d0 = d_tree + |O|`). Let `u` be at level `i`, `b` at
//! level `j`, with `lo` and `hi` as in [`HyperZ::switch_distance`]:
//! - a side neighbour in dimension `k` is downhill iff `k` is an offset dimension and it takes
//!   `b`'s coordinate `b_k` there (one per offset dimension);
//! - every parent is downhill when `b`'s zone is outside `u`'s (`hi > i`) and `j <= i`;
//! - exactly one parent is downhill when `j > i` and `u`'s root digits are `b`'s (`lo = i`): the
//!   one whose root digits are `b`'s up to level `i + 1` (`Y_b mod r_{i+1}`);
//! - every child is downhill when `u`'s zone holds `b`'s, `lo < i` and `j >= i`;
//! - exactly one child is downhill when `j < i` and `u`'s zone holds `b`: the one whose zone holds
//!   `b` (zone index of `b` at level `i - 1`);
//! - no other tree neighbour is (going up when `hi = i`, or down elsewhere, moves away).
//!
//! So a seed `u` of `b` (every downhill neighbour behind a failed link) is one of:
//! - in `b`'s Z-node, with a failed link to the parent whose root digits are `b`'s up to `i + 1`
//!   (key: Z-node, `i`, those digits), or to the child whose zone is `b`'s at `i - 1` (key: Z-node,
//!   `i`, that zone), or with every parent or every child link failed (listed per Z-node);
//! - in another Z-node, with a failed side link to `b_k` in some offset dimension `k`: at `b`'s
//!   position in the tree when `u` has no failed tree link (then its tree part must be empty;
//!   key: `k`, `b_k`, position), else in a short list keyed by `k`, `b_k` alone.
//!
//! The engine checks every candidate, so these are the lookups' only obligation: to miss no seed.
//! Debug builds and the tests compare every pair against BFS. Without side links at every level the
//! closed form takes detours and this case analysis does not hold: [`HyperZSeeds::new`] returns
//! `None` and the fabric keeps an all-pairs table.

use super::exceptions::{ClosedForm, SeedIndex};
use super::{HyperZ, PortId, SwitchId};
use std::ops::Range;

impl ClosedForm for HyperZ {
    fn switch_count(&self) -> usize {
        self.num_switches()
    }
    #[inline]
    fn d0(&self, a: SwitchId, b: SwitchId) -> u32 {
        self.switch_distance(a, b)
    }
    #[inline]
    fn port_count(&self, x: SwitchId) -> usize {
        self.switch_ports(x)
    }
    #[inline]
    fn far_switch(&self, x: SwitchId, p: PortId) -> Option<SwitchId> {
        self.neighbour(x, p).map(|(y, _)| y)
    }
    /// With side links at every level (module doc): the parents in two classes (the one whose root
    /// digits are `b`'s up to `u`'s level plus one, when `b` is higher, and the others), likewise
    /// the children (the one whose zone holds `b`, when `b` is lower, and the others), each class
    /// rated by one `d0` at a representative; a side link to `b_k` in an offset dimension `k` is
    /// -1, to another value there 0, in a dimension where the Z-nodes agree +1 (the Hamming part
    /// of the product).
    fn port_classes(&self, u: SwitchId, b: SwitchId, mut f: impl FnMut(Range<PortId>, i32)) -> bool {
        if !self.side_links_at_every_level() {
            return false;
        }
        let d = self.switch_distance(u, b) as i32;
        let (i, j, h) = (self.level(u), self.level(b), self.height());
        let delta = |p: PortId| self.switch_distance(self.neighbour(u, p).map_or(u, |x| x.0), b) as i32 - d;
        let mut split = |all: Range<PortId>, special: Option<Range<PortId>>| match special {
            _ if all.is_empty() => {}
            None => f(all.clone(), delta(all.start)),
            Some(s) => {
                if all.start < s.start {
                    f(all.start..s.start, delta(all.start));
                }
                f(s.clone(), delta(s.start));
                if s.end < all.end {
                    f(s.end..all.end, delta(s.end));
                }
            }
        };
        if i >= 2 {
            let g = self.internal_links()[i - 1] as PortId;
            let zi = self.zones()[i - 1];
            let all = 0..zi as PortId * g;
            let special = (j < i)
                .then(|| self.zone_index(b, i - 1))
                .filter(|&c| c / zi == self.zone_index(u, i))
                .map(|c| (c % zi) as PortId * g..(c % zi + 1) as PortId * g);
            split(all, special);
        }
        if i < h {
            let g = self.internal_links()[i] as PortId;
            let ups = self.up_ports(u);
            let special = (j > i).then(|| {
                let t = (self.flat(b) % self.r(i + 1) / self.r(i)) as PortId;
                ups.start + t * g..ups.start + (t + 1) * g
            });
            split(ups, special);
        }
        let (zu, zb) = (self.znode(u), self.znode(b));
        for k in 0..self.dims() {
            let all = self.side_dim_ports(u, k);
            if all.is_empty() {
                continue;
            }
            let v = self.coord(zb, k);
            if self.coord(zu, k) == v {
                f(all, 1);
            } else {
                let s = self.side_ports(u, k, v);
                if all.start < s.start {
                    f(all.start..s.start, 0);
                }
                f(s.clone(), -1);
                if s.end < all.end {
                    f(s.end..all.end, 0);
                }
            }
        }
        true
    }
}

/// Sorted `(key, switch)` pairs; a lookup appends the switches of one key.
struct Keyed(Vec<(u128, SwitchId)>);

impl Keyed {
    fn sorted(mut v: Vec<(u128, SwitchId)>) -> Self {
        v.sort_unstable();
        v.dedup();
        Keyed(v)
    }
    #[inline]
    fn get(&self, key: u128, out: &mut Vec<SwitchId>) {
        let lo = self.0.partition_point(|e| e.0 < key);
        out.extend(self.0[lo..].iter().take_while(|e| e.0 == key).map(|e| e.1));
    }
}

#[inline]
fn tree_key(znode: u32, level: usize, value: usize) -> u128 {
    (znode as u128) << 64 | (level as u128) << 48 | value as u128
}

#[inline]
fn side_key(k: usize, v: usize, pos: u64) -> u128 {
    (k as u128) << 96 | (v as u128) << 64 | pos as u128
}

/// The seed index of a faulty HyperZ or fat tree (see the module doc).
pub struct HyperZSeeds<'a> {
    hz: &'a HyperZ,
    /// Failed link to a parent: key (Z-node, level, the parent's root digits `X mod r_{i+1}`).
    up: Keyed,
    /// Failed link to a child: key (Z-node, level, the child's zone index at its level).
    down: Keyed,
    /// Every parent link, or every child link, failed: key (Z-node, 0, 0).
    all: Keyed,
    /// Failed side link of a switch without failed tree links: key (dimension, value, position).
    side: Keyed,
    /// Failed side link of a switch with failed tree links too: key (dimension, value, 0).
    mixed: Keyed,
}

impl<'a> HyperZSeeds<'a> {
    /// Index the failed links of `hz` under `alive` (a port predicate; a failed switch has no live
    /// port, and is itself never a seed). `None` where some level lacks side links.
    pub fn new(hz: &'a HyperZ, alive: impl Fn(SwitchId, PortId) -> bool) -> Option<Self> {
        if !hz.side_links_at_every_level() {
            return None;
        }
        let (mut up, mut down, mut all, mut side, mut mixed) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let h = hz.height();
        let mut sides_failed: Vec<(usize, usize)> = Vec::new();
        for u in 0..hz.num_switches() as SwitchId {
            if (0..hz.switch_ports(u) as PortId).all(|p| alive(u, p)) {
                continue;
            }
            let dead = |r: std::ops::Range<PortId>| !r.is_empty() && r.clone().all(|p| !alive(u, p));
            let (i, z, x) = (hz.level(u), hz.znode(u), hz.flat(u));
            let mut tree_failed = false;
            if i < h {
                let g = hz.internal_links()[i] as PortId;
                let ups = hz.up_ports(u);
                let w = (ups.end - ups.start) / g;
                let mut every = true;
                for t in 0..w {
                    let first = ups.start + t * g;
                    if dead(first..first + g) {
                        up.push((tree_key(z, i, x % hz.r(i) + t as usize * hz.r(i)), u));
                        tree_failed = true;
                    } else {
                        every = false;
                    }
                }
                if every {
                    all.push((tree_key(z, 0, 0), u));
                }
            }
            if i >= 2 {
                let g = hz.internal_links()[i - 1] as PortId;
                let zi = hz.zones()[i - 1];
                let mut every = true;
                for c in 0..zi {
                    let first = c as PortId * g;
                    if dead(first..first + g) {
                        down.push((tree_key(z, i, x / hz.r(i) * zi + c), u));
                        tree_failed = true;
                    } else {
                        every = false;
                    }
                }
                if every {
                    all.push((tree_key(z, 0, 0), u));
                }
            }
            sides_failed.clear();
            for k in 0..hz.dims() {
                let a = hz.coord(z, k);
                for v in (0..hz.sides()[k]).filter(|&v| v != a) {
                    if dead(hz.side_ports(u, k, v)) {
                        sides_failed.push((k, v));
                    }
                }
            }
            let pos = hz.switch_at(i, 0, x) as u64;
            for &(k, v) in &sides_failed {
                if tree_failed {
                    mixed.push((side_key(k, v, 0), u));
                } else {
                    side.push((side_key(k, v, pos), u));
                }
            }
        }
        Some(HyperZSeeds {
            hz,
            up: Keyed::sorted(up),
            down: Keyed::sorted(down),
            all: Keyed::sorted(all),
            side: Keyed::sorted(side),
            mixed: Keyed::sorted(mixed),
        })
    }

    /// Failed-link records indexed (for reports and tests).
    pub fn len(&self) -> usize {
        self.up.0.len() + self.down.0.len() + self.all.0.len() + self.side.0.len() + self.mixed.0.len()
    }

    /// Whether no link failed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl SeedIndex for HyperZSeeds<'_> {
    fn candidates(&self, b: SwitchId, out: &mut Vec<SwitchId>) {
        let hz = self.hz;
        let (j, z, y) = (hz.level(b), hz.znode(b), hz.flat(b));
        for i in 1..j {
            self.up.get(tree_key(z, i, y % hz.r(i + 1)), out);
        }
        for i in j + 1..=hz.height() {
            self.down.get(tree_key(z, i, hz.zone_index(b, i - 1)), out);
        }
        self.all.get(tree_key(z, 0, 0), out);
        let pos = hz.switch_at(j, 0, y) as u64;
        for k in 0..hz.dims() {
            let v = hz.coord(z, k);
            self.side.get(side_key(k, v, pos), out);
            self.mixed.get(side_key(k, v, 0), out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fabric::UNREACHABLE;
    use crate::topology::faults::FaultConfig;
    use crate::topology::{Fabric, Targets, Topology};
    use std::sync::Arc;

    /// Small instances: h = 2 and h = 3 HyperZs with `g > 1`, a parent count `w = 1` at some level,
    /// parallel side links, and fat trees (a k-ary 3-tree and a PGFT with parallel links).
    fn instances() -> Vec<HyperZ> {
        let q = |h: usize, d: usize, v: usize| vec![vec![v; d]; h];
        vec![
            HyperZ::new(vec![3, 3], vec![2, 3], vec![1, 2], vec![1, 2], q(2, 2, 1)).unwrap(),
            HyperZ::new(vec![4], vec![2, 2], vec![1, 2], vec![1, 1], vec![vec![1], vec![2]]).unwrap(),
            HyperZ::new(
                vec![3, 2],
                vec![2, 2, 2],
                vec![1, 2, 4],
                vec![1, 2, 1],
                vec![vec![1, 1], vec![2, 1], vec![1, 1]],
            )
            .unwrap(),
            HyperZ::new(vec![2, 3], vec![2, 3, 2], vec![1, 1, 2], vec![1, 2, 2], q(3, 2, 1)).unwrap(),
            HyperZ::new(Vec::new(), vec![3, 3, 3], vec![1, 3, 9], vec![1, 1, 1], q(3, 0, 0)).unwrap(),
            HyperZ::new(Vec::new(), vec![2, 3, 4], vec![1, 2, 2], vec![1, 2, 1], q(3, 0, 0)).unwrap(),
        ]
    }

    /// Every fault kind, as a `[faults]` table: random links (few and many), random switches, lists,
    /// a Z-node and a plane (HyperZ shapes), and a lifetime year.
    fn fault_kinds(hz: &HyperZ) -> Vec<String> {
        let links = super::super::fabric::all_links(hz).len();
        let mut v = vec![
            "random_links = 1".to_string(),
            format!("random_links = {}", links / 50 + 2),
            format!("random_links = {}", links / 8),
            format!("random_links = {}", links / 3),
            "random_switches = 1".into(),
            format!("random_switches = {}", hz.num_switches() / 10 + 1),
            format!("random_links = {}\nrandom_switches = 2", links / 20),
            "links = [[0, 0], [3, 1]]\nswitches = [5]".into(),
            "[lifetime]\nyears = 1.0\nsteps = 1\nlink_rate = 0.05\nswitch_rate = 0.02".into(),
        ];
        if hz.dims() > 0 {
            v.push(format!("[[shapes]]\nkind = \"znode\"\nat = {:?}", vec![1; hz.dims()]));
            v.push("[[shapes]]\nkind = \"plane\"\nlevel = 1\nindex = 1".into());
            v.push(format!("random_links = {}\n[[shapes]]\nkind = \"plane\"\nlevel = 2\nindex = 0", links / 30));
        }
        v
    }

    /// The faulty distances of every small HyperZ and fat tree, for every fault kind and several
    /// seeds, equal plain BFS over the live links for every ordered pair, and come from exceptions
    /// (no all-pairs table).
    #[test]
    fn exceptions_equal_bfs_for_every_fault_kind() {
        let mut checked = 0;
        for hz in instances() {
            let topo: Arc<dyn Topology> = Arc::new(hz.clone());
            for kind in fault_kinds(&hz) {
                let cfg: FaultConfig = toml::from_str(&kind).unwrap();
                for seed in 1..=3 {
                    let faults = cfg.build(&*topo, seed).unwrap();
                    let net = Fabric::new(topo.clone(), &faults);
                    let ex = net.tree_exceptions().expect("a faulty HyperZ keeps exceptions");
                    for b in 0..hz.num_switches() as SwitchId {
                        let bfs = net.bfs(b);
                        for (a, &d) in bfs.iter().enumerate() {
                            assert_eq!(
                                ex.distance(a as SwitchId, b),
                                d,
                                "{} [{kind}] seed {seed}: {a} -> {b}",
                                hz.name()
                            );
                            checked += (d != UNREACHABLE && d != hz.switch_distance(a as SwitchId, b)) as usize;
                        }
                    }
                }
            }
        }
        assert!(checked > 1000, "the faults changed only {checked} distances: the test would miss errors");
    }

    /// With exceptions kept only towards the switches with servers ([`Targets::ServerSwitches`]), on
    /// a 4-ary 4-tree (where most exceptions lead to switches above the leaves) and the other small
    /// instances, with random link and switch faults: every pair with at least one end that has
    /// servers equals BFS (the other end's list serves it by symmetry), the lists of the targets are
    /// those kept with [`Targets::Every`], no other list is kept, and the minimal ports towards a
    /// target equal BFS's.
    #[test]
    fn server_targets_serve_every_pair_with_servers() {
        let q = |h: usize| vec![Vec::new(); h];
        let mut all = instances();
        all.push(HyperZ::new(Vec::new(), vec![4, 4, 4, 4], vec![1, 4, 16, 64], vec![1, 1, 1, 1], q(4)).unwrap());
        let (mut symmetric, mut dropped) = (0, 0);
        for hz in all {
            let topo: Arc<dyn Topology> = Arc::new(hz.clone());
            let links = super::super::fabric::all_links(&hz).len();
            for kind in
                [format!("random_links = {}", links / 20), format!("random_links = {}\nrandom_switches = 2", links / 8)]
            {
                let cfg: FaultConfig = toml::from_str(&kind).unwrap();
                for seed in 1..=2 {
                    let faults = cfg.build(&*topo, seed).unwrap();
                    let every = Fabric::new(topo.clone(), &faults);
                    let net = Fabric::with_targets(topo.clone(), &faults, Targets::ServerSwitches);
                    let (exe, ex) = (every.tree_exceptions().unwrap(), net.tree_exceptions().unwrap());
                    assert!(every.distances_to_every_switch() && !net.distances_to_every_switch());
                    let n = hz.num_switches() as SwitchId;
                    let bearing = |s: SwitchId| hz.servers_of(s) > 0;
                    for b in 0..n {
                        assert_eq!(
                            ex.exceptions_to(b),
                            if bearing(b) { exe.exceptions_to(b) } else { (&[][..], &[][..]) }
                        );
                        dropped += if bearing(b) { 0 } else { exe.exceptions_to(b).0.len() };
                        let bfs = net.bfs(b);
                        for a in 0..n {
                            assert_eq!(net.serves(a, b), bearing(a) || bearing(b), "{}: {a} -> {b}", hz.name());
                            if !net.serves(a, b) {
                                continue;
                            }
                            let d = bfs[a as usize];
                            assert_eq!(net.distance(a, b), d, "{} [{kind}] seed {seed}: {a} -> {b}", hz.name());
                            symmetric += (!bearing(b) && d != UNREACHABLE && d != hz.switch_distance(a, b)) as usize;
                            if bearing(b) {
                                let mut got = Vec::new();
                                crate::routing::minimal_ports(&net, a, b, |p| got.push(p));
                                let want: Vec<PortId> = (0..hz.switch_ports(a) as PortId)
                                    .filter(|&p| net.neighbour(a, p).is_some_and(|(y, _)| bfs[y as usize] < d))
                                    .collect();
                                assert_eq!(got, want, "{}: minimal ports {a} -> {b}", hz.name());
                            }
                        }
                    }
                }
            }
        }
        assert!(symmetric > 500, "only {symmetric} changed distances served by symmetry: the test would miss errors");
        assert!(dropped > 1000, "only {dropped} exceptions towards switches without servers were dropped");
    }

    /// The port classes cover every port once, and each class's rating is `d0(far end) - d0(u)` at
    /// every one of its ports, for every ordered pair of switches.
    #[test]
    fn port_classes_rate_every_port() {
        for hz in instances() {
            for u in 0..hz.num_switches() as SwitchId {
                for b in 0..hz.num_switches() as SwitchId {
                    let mut seen = vec![0; hz.switch_ports(u)];
                    assert!(hz.port_classes(u, b, |r, delta| {
                        for p in r {
                            seen[p as usize] += 1;
                            let y = hz.neighbour(u, p).unwrap().0;
                            let want = hz.switch_distance(y, b) as i32 - hz.switch_distance(u, b) as i32;
                            assert_eq!(delta, want, "{}: port {p} of {u} towards {b}", hz.name());
                        }
                    }));
                    assert!(seen.iter().all(|&c| c == 1), "{}: {u} towards {b}: {seen:?}", hz.name());
                }
            }
        }
    }

    /// On faulty networks, the minimal ports from the exceptions are exactly the live ports whose far
    /// end is closer by BFS, in port order, for every ordered pair.
    #[test]
    fn minimal_ports_from_exceptions_equal_bfs() {
        let mut fast = 0;
        for hz in instances() {
            let topo: Arc<dyn Topology> = Arc::new(hz.clone());
            let links = super::super::fabric::all_links(&hz).len();
            let cfg: FaultConfig =
                toml::from_str(&format!("random_links = {}\nrandom_switches = 1", links / 10)).unwrap();
            let net = Fabric::new(topo.clone(), &cfg.build(&*topo, 3).unwrap());
            let ex = net.tree_exceptions().unwrap();
            let n = hz.num_switches() as SwitchId;
            let dist: Vec<Vec<u32>> = (0..n).map(|b| net.bfs(b)).collect();
            for a in 0..n {
                for b in 0..n {
                    let mut got = Vec::new();
                    if ex.minimal_ports(a, b, |p| net.alive(a, p), &mut |p| got.push(p)) {
                        fast += 1;
                        let want: Vec<PortId> = (0..hz.switch_ports(a) as PortId)
                            .filter(|&p| {
                                net.neighbour(a, p)
                                    .is_some_and(|(y, _)| dist[b as usize][y as usize] < dist[b as usize][a as usize])
                            })
                            .collect();
                        assert_eq!(got, want, "{}: {a} -> {b}", hz.name());
                    }
                }
            }
        }
        assert!(fast > 1000);
    }

    /// The distance statistics from exceptions (histogram shortcut) equal BFS from every live
    /// server-bearing switch.
    #[test]
    fn stats_from_exceptions_equal_bfs() {
        for hz in instances() {
            let topo: Arc<dyn Topology> = Arc::new(hz.clone());
            let links = super::super::fabric::all_links(&hz).len();
            let cfg: FaultConfig =
                toml::from_str(&format!("random_links = {}\nrandom_switches = 1", links / 15)).unwrap();
            let faults = cfg.build(&*topo, 7).unwrap();
            let net = Fabric::new(topo.clone(), &faults);
            let Some(hist) = net.tree_histogram() else { continue };
            let mut want: Vec<u64> = Vec::new();
            for b in (0..hz.num_switches() as SwitchId).filter(|&b| hz.servers_of(b) > 0 && net.switch_alive(b)) {
                for (a, d) in net.bfs(b).into_iter().enumerate() {
                    if hz.servers_of(a as SwitchId) > 0 && net.switch_alive(a as SwitchId) {
                        assert_ne!(d, UNREACHABLE);
                        if want.len() <= d as usize {
                            want.resize(d as usize + 1, 0);
                        }
                        want[d as usize] += 1;
                    }
                }
            }
            assert_eq!(hist, want, "{}", hz.name());
        }
    }
}
