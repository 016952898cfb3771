//! The opportunistic Up/Down escape subnetwork of SurePath (SurePath paper, section 3.2 and Fig. 2;
//! AutoNet's Up*/Down* with shortcuts).
//!
//! A root switch `r` (`routing.escape_root`) is chosen and every switch gets its depth `d(x,r)`
//! (BFS over live links). A link `(x,y)` is *Up/Down* (black) if `d(x,r) != d(y,r)` (Up towards the
//! root, Down away from it), else *horizontal* (red). The *Up/Down distance* `ud(x,t)` is the length
//! of the shortest path from `x` to `t` made of an Up part followed by a Down part; with
//! `b(x,t)` the largest depth of a switch reachable by Up hops from both `x` and `t`,
//! `ud(x,t) = d(x,r) + d(t,r) - 2 b(x,t)`.
//!
//! Escape candidates of a packet at `x` for `t`:
//! - Up/Down links along shortest Up/Down paths: an Up link to `y` with `ud(y,t) < ud(x,t)` while the
//!   packet still has to climb (`t` is not below `x`), or a Down link with `ud(y,t) < ud(x,t)` once
//!   `t` is below `x` (`ud(x,t) = d(t,r) - d(x,r)`). A Down link is never taken while the packet must
//!   still climb, even if it would shorten `ud` (that Down-then-Up turn is not an Up/Down path, and
//!   with it the escape channels could form cycles: on the 4x4 example one is
//!   `(0,1)->(1,1)->(1,0)->(1,2)->(0,2)->(0,1)`).
//! - Horizontal links used opportunistically, only when `ud(y,t) < ud(x,t)` (Fig. 2: from (0,1) to
//!   (0,3) the red link is taken, (0,1)->(0,2) never is).
//!
//! Penalties (section 3.2): Up 112 phits, Down 96, shortcuts 80, 64 or 48 for a reduction of `ud` by
//! 1, 2 or at least 3. (A horizontal link joins switches of equal depth, so `ud(x,t)` and `ud(y,t)`
//! have the parity of `d(x,r) + d(t,r)` and the reduction is even: in practice shortcuts get 64 or
//! 48, and minimal hops over red links, which reduce `ud` by 2, are preferred over Up/Down hops as
//! the paper intends.)
//!
//! Once `t` is below `x` a packet only goes Down, and it only climbs or moves sideways before, so
//! routes are (Up | horizontal)* Down*. The Up/Down links alone are the routing subfunction of
//! Duato's theorem: connected (every switch reaches the root by Up hops and every switch below it
//! by Down hops) and with an acyclic extended dependency graph (Up channels ordered by decreasing
//! depth, then Down channels by increasing depth; horizontal hops only happen between Up hops of
//! lower and lower depth). `hxsim check-deadlock` checks both on the actual network.
//!
//! Memory: on a fault-free HyperX, depths are Hamming distances to the root and
//! `b(x,t) = #{dims: x_d = t_d != r_d}` (the Up-reachable switches of `x` are those that replace some
//! of its coordinates by the root's), so nothing is stored. Otherwise depths are one BFS (O(switches))
//! and `ud` is a table of one byte per ordered pair of switches, built by one pass per destination
//! in O(links); it is only built for networks of at most [`MAX_TABLE_SWITCHES`] switches (64 MiB),
//! and larger faulty networks are a config error.

use crate::config::ConfigError;
use crate::topology::fabric::UNREACHABLE;
use crate::topology::{Fabric, HyperX, PortId, SwitchId};
use rayon::prelude::*;
use std::sync::Arc;

/// Penalty of an Up candidate, phits.
pub const UP_PENALTY: u32 = 112;
/// Penalty of a Down candidate, phits.
pub const DOWN_PENALTY: u32 = 96;
/// Penalties of shortcuts reducing the Up/Down distance by 1, 2, and 3 or more.
pub const SHORTCUT_PENALTIES: [u32; 3] = [80, 64, 48];
/// Largest network for which an all-pairs Up/Down table is built.
pub const MAX_TABLE_SWITCHES: usize = 8192;

/// Kind of a link with respect to the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// Towards the root.
    Up,
    /// Away from the root.
    Down,
    /// Between switches at the same depth.
    Horizontal,
}

/// The Up/Down escape subnetwork of one network and root.
pub struct UpDown {
    net: Arc<Fabric>,
    root: SwitchId,
    /// `d(x, r)` for every switch.
    depth: Vec<u32>,
    /// `ud(x, t)` at `[t * n + x]`, when not computed from coordinates.
    table: Vec<u8>,
}

impl UpDown {
    /// The escape subnetwork rooted at `root` over the live links of `net`.
    pub fn new(net: Arc<Fabric>, root: usize) -> Result<Self, ConfigError> {
        let n = net.num_switches();
        if root >= n {
            return Err(ConfigError::value("routing.escape_root", root, format!("a switch id below {n}")));
        }
        if !net.switch_alive(root as SwitchId) {
            return Err(ConfigError::value(
                "routing.escape_root",
                root,
                "a live switch: [faults] failed this one (choose another root)",
            ));
        }
        let mut depth = net.bfs(root as SwitchId);
        // Failed switches have no live link: no route reaches them, and depth 0 keeps them out of
        // the way (never a parent, never below a live switch).
        for (s, d) in depth.iter_mut().enumerate() {
            if !net.switch_alive(s as SwitchId) {
                *d = 0;
            }
        }
        if depth.contains(&UNREACHABLE) {
            return Err(ConfigError::value(
                "faults",
                format!("{} failed links", net.failed_links()),
                "a connected network: the Up/Down escape subnetwork must reach every live switch",
            ));
        }
        let mut u = UpDown { net, root: root as SwitchId, depth, table: Vec::new() };
        if u.hyperx().is_none() {
            if n > MAX_TABLE_SWITCHES {
                return Err(ConfigError::value(
                    "faults.random_links",
                    u.net.failed_links(),
                    format!(
                        "no faults on networks above {MAX_TABLE_SWITCHES} switches with an Up/Down escape \
                         (its distance table is one byte per switch pair; this network has {n} switches)"
                    ),
                ));
            }
            u.table = u.build_table()?;
        }
        Ok(u)
    }

    /// The fault-free HyperX, when distances can be computed from coordinates.
    #[inline]
    fn hyperx(&self) -> Option<&HyperX> {
        self.net.fault_free_hyperx()
    }

    /// The root switch.
    pub fn root(&self) -> SwitchId {
        self.root
    }

    /// Depth `d(x, r)`.
    #[inline]
    pub fn depth(&self, x: SwitchId) -> u32 {
        self.depth[x as usize]
    }

    /// Up/Down distance `ud(x, t)`.
    #[inline]
    pub fn ud(&self, x: SwitchId, t: SwitchId) -> u32 {
        match self.hyperx() {
            Some(h) => {
                let mut shared = 0;
                for d in 0..h.dims() {
                    let (a, b) = (h.coord(x, d), h.coord(t, d));
                    shared += (a == b && a != h.coord(self.root, d)) as u32;
                }
                self.depth(x) + self.depth(t) - 2 * shared
            }
            None => self.table[t as usize * self.depth.len() + x as usize] as u32,
        }
    }

    /// Kind of the link from `x` to its neighbour `y`.
    #[inline]
    pub fn kind(&self, x: SwitchId, y: SwitchId) -> LinkKind {
        let (a, b) = (self.depth(x), self.depth(y));
        if b < a {
            LinkKind::Up
        } else if b > a {
            LinkKind::Down
        } else {
            LinkKind::Horizontal
        }
    }

    /// Penalty of an escape hop of kind `kind` that reduces the Up/Down distance by `reduction`.
    #[inline]
    pub fn penalty(kind: LinkKind, reduction: u32) -> u32 {
        match kind {
            LinkKind::Up => UP_PENALTY,
            LinkKind::Down => DOWN_PENALTY,
            LinkKind::Horizontal => SHORTCUT_PENALTIES[(reduction.clamp(1, 3) - 1) as usize],
        }
    }

    /// Calls `f(port, penalty, kind)` for every escape hop of a packet at `x` bound for `t != x`.
    #[inline]
    pub fn hops(&self, x: SwitchId, t: SwitchId, mut f: impl FnMut(PortId, u32, LinkKind)) {
        let (dx, dt) = (self.depth(x), self.depth(t));
        let ux = self.ud(x, t);
        let below = dt >= dx && ux == dt - dx;
        let mut consider = |port: PortId, dy: u32, uy: u32| {
            if uy >= ux {
                return;
            }
            let kind = if dy < dx {
                LinkKind::Up
            } else if dy > dx {
                LinkKind::Down
            } else {
                LinkKind::Horizontal
            };
            match kind {
                LinkKind::Down if !below => {}
                LinkKind::Up if below => {}
                _ => f(port, Self::penalty(kind, ux - uy), kind),
            }
        };
        if let Some(h) = self.hyperx() {
            // Per-dimension update of depth and shared-coordinate count.
            let shared = (dx + dt - ux) / 2;
            for d in 0..h.dims() {
                let (a, tt, r) = (h.coord(x, d), h.coord(t, d), h.coord(self.root, d));
                let base_depth = dx - (a != r) as u32;
                let base_shared = shared - (a == tt && a != r) as u32;
                for v in 0..h.side(d) {
                    if v == a {
                        continue;
                    }
                    let dy = base_depth + (v != r) as u32;
                    let sy = base_shared + (v == tt && v != r) as u32;
                    let uy = dy + dt - 2 * sy;
                    for k in 0..h.trunk(d) {
                        consider(h.port_to(x, d, v, k), dy, uy);
                    }
                }
            }
        } else {
            for p in 0..self.net.switch_ports(x) as PortId {
                if let Some((y, _)) = self.net.neighbour(x, p) {
                    consider(p, self.depth(y), self.ud(y, t));
                }
            }
        }
    }

    /// The table `ud[t * n + x]`, one pass per destination `t`: mark the switches Up-reachable from
    /// `t`, then, in order of increasing depth, `b(x) = d(x)` for marked switches and the largest
    /// `b` of a parent otherwise.
    fn build_table(&self) -> Result<Vec<u8>, ConfigError> {
        let n = self.depth.len();
        let net = &*self.net;
        let mut order: Vec<SwitchId> = (0..n as SwitchId).collect();
        order.sort_by_key(|&x| self.depth(x));
        let parents: Vec<Vec<SwitchId>> = (0..n as SwitchId)
            .map(|x| {
                (0..net.switch_ports(x) as PortId)
                    .filter_map(|p| net.neighbour(x, p).map(|(y, _)| y))
                    .filter(|&y| self.depth(y) + 1 == self.depth(x))
                    .collect()
            })
            .collect();
        let max_depth = self.depth.iter().copied().max().unwrap_or(0);
        if 2 * max_depth >= u8::MAX as u32 {
            return Err(ConfigError::value(
                "routing.escape_root",
                self.root,
                format!("a root at depth below 127 from every switch (the farthest is at {max_depth})"),
            ));
        }
        let mut table = vec![0u8; n * n];
        table.par_chunks_mut(n).enumerate().for_each(|(t, row)| {
            let mut marked = vec![false; n];
            let mut stack = vec![t as SwitchId];
            marked[t] = true;
            while let Some(z) = stack.pop() {
                for &p in &parents[z as usize] {
                    if !marked[p as usize] {
                        marked[p as usize] = true;
                        stack.push(p);
                    }
                }
            }
            let mut best = vec![0u32; n];
            for &x in &order {
                let xi = x as usize;
                best[xi] = if marked[xi] {
                    self.depth[xi]
                } else {
                    parents[xi].iter().map(|&p| best[p as usize]).max().unwrap_or(0)
                };
                row[xi] = (self.depth[xi] + self.depth[t] - 2 * best[xi]) as u8;
            }
        });
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{FaultSet, Topology};

    fn net(sides: &[usize], faults: usize) -> Arc<Fabric> {
        let h: Arc<dyn Topology> = Arc::new(HyperX::new(sides, &vec![1; sides.len()], 1));
        let f = if faults > 0 { FaultSet::random_links(&*h, faults, 3).unwrap() } else { FaultSet::default() };
        Arc::new(Fabric::new(h, &f))
    }

    /// Switch id of paper coordinates (a, b) on the 4x4 of Fig. 2 (a is dimension 0).
    fn sw(a: usize, b: usize) -> SwitchId {
        (a + 4 * b) as SwitchId
    }

    #[test]
    fn figure2_classification_and_distances() {
        let u = UpDown::new(net(&[4, 4], 0), 0).unwrap();
        // (1,0)-(1,1) is black: depths 1 and 2; (1,0)-(2,0) is red: both at depth 1.
        assert_eq!(u.kind(sw(1, 0), sw(1, 1)), LinkKind::Down);
        assert_eq!(u.kind(sw(1, 1), sw(1, 0)), LinkKind::Up);
        assert_eq!(u.kind(sw(1, 0), sw(2, 0)), LinkKind::Horizontal);
        // (1,0) and (2,0) are at Up/Down distance 2 (one Up, one Down), as are (0,1) and (0,3).
        assert_eq!(u.ud(sw(1, 0), sw(2, 0)), 2);
        assert_eq!(u.ud(sw(0, 1), sw(0, 3)), 2);
        // (0,0) to (1,1): two Down hops; (1,1) to (2,2): up to the root and down, 4.
        assert_eq!(u.ud(sw(0, 0), sw(1, 1)), 2);
        assert_eq!(u.ud(sw(1, 1), sw(2, 2)), 4);
        // (1,1) to (1,2) share the parent (1,0): 2.
        assert_eq!(u.ud(sw(1, 1), sw(1, 2)), 2);
    }

    #[test]
    fn figure2_escape_candidates() {
        let u = UpDown::new(net(&[4, 4], 0), 0).unwrap();
        let h = HyperX::new(&[4, 4], &[1, 1], 1);
        let cands = |x: SwitchId, t: SwitchId| {
            let mut v = Vec::new();
            u.hops(x, t, |p, pen, k| v.push((h.neighbour(x, p).unwrap().0, pen, k)));
            v.sort_by_key(|c| c.0);
            v
        };
        // From (0,1) to (0,3): the red link to (0,3) (reduces ud from 2 to 0: penalty 64) and the Up
        // link to the root (2 -> 1: 112). (0,1)->(0,2) keeps ud at 2 and is not a candidate; Down
        // links to (a,1) raise it to 3.
        assert_eq!(
            cands(sw(0, 1), sw(0, 3)),
            vec![(sw(0, 0), UP_PENALTY, LinkKind::Up), (sw(0, 3), 64, LinkKind::Horizontal)]
        );
        // From the root to (1,1): both Down links, (1,0) and (0,1).
        assert_eq!(
            cands(sw(0, 0), sw(1, 1)),
            vec![(sw(1, 0), DOWN_PENALTY, LinkKind::Down), (sw(0, 1), DOWN_PENALTY, LinkKind::Down)]
        );
        // From (0,1) to (1,0): the Down link to (1,1) would reduce ud (2 -> 1) but (1,0) is not below
        // (0,1), so only the Up link to the root is offered.
        assert_eq!(cands(sw(0, 1), sw(1, 0)), vec![(sw(0, 0), UP_PENALTY, LinkKind::Up)]);
        // From (2,2) to (1,1) (ud 4): red links to (1,2) and (2,1) reduce it to 2 (64), Up links to
        // (2,0) and (0,2) reduce it to 3 (112).
        assert_eq!(
            cands(sw(2, 2), sw(1, 1)),
            vec![
                (sw(2, 0), UP_PENALTY, LinkKind::Up),
                (sw(2, 1), 64, LinkKind::Horizontal),
                (sw(0, 2), UP_PENALTY, LinkKind::Up),
                (sw(1, 2), 64, LinkKind::Horizontal),
            ]
        );
    }

    #[test]
    fn table_matches_closed_form_on_fault_free_hyperx() {
        for sides in [vec![4usize, 4], vec![3, 3, 3], vec![2, 3, 4]] {
            let nw = net(&sides, 0);
            for root in [0usize, 5] {
                let u = UpDown::new(nw.clone(), root).unwrap();
                let table = u.build_table().unwrap();
                let n = nw.num_switches();
                for t in 0..n {
                    for x in 0..n {
                        assert_eq!(table[t * n + x] as u32, u.ud(x as SwitchId, t as SwitchId), "{sides:?} r={root}");
                    }
                }
            }
        }
    }

    #[test]
    fn faulty_escape_reaches_every_destination_by_decreasing_ud() {
        let nw = net(&[4, 4, 4], 12);
        let u = UpDown::new(nw.clone(), 7).unwrap();
        let n = nw.num_switches() as SwitchId;
        for t in 0..n {
            for x in 0..n {
                if x == t {
                    assert_eq!(u.ud(x, t), 0);
                    continue;
                }
                let mut found = false;
                u.hops(x, t, |p, _, _| {
                    let y = nw.neighbour(x, p).unwrap().0;
                    assert!(u.ud(y, t) < u.ud(x, t));
                    found = true;
                });
                assert!(found, "no escape hop from {x} to {t}");
                assert!(u.ud(x, t) >= nw.distance(x, t));
            }
        }
    }

    #[test]
    fn bad_root_is_a_config_error() {
        let e = UpDown::new(net(&[4, 4], 0), 16).err().unwrap().to_string();
        assert!(e.contains("routing.escape_root") && e.contains("16") && e.contains("below 16"), "{e}");
    }
}
