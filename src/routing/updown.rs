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
//! and every switch keeps its *Up set* `A(x)` (itself and every switch Up-reachable from it), sorted
//! by id: `b(x,t)` is the largest depth in `A(x) ∩ A(t)`, one merge of two short lists per query. On
//! a HyperX `|A(x)|` is `2^depth(x)` where faults did not lengthen the way to the root (8 on a 3-D
//! network), so the lists take O(switches) memory where the table they replace took one byte per
//! switch pair; they are built level by level from the parents' sets. On a faulty HyperX one bit
//! per switch marks those whose depth and Up set are still the fault-free ones: between two such
//! switches `ud` is the closed form, so escape hops need no merge for them.
//!
//! On a fault-free HyperZ with side links at every level (issue 32) the switch graph is the
//! Cartesian product of the Z-node's switch graph `T` (a PGFT) and the Hamming graph `H` of the
//! Z-nodes (Adda 2023, section 3; [`HyperZ::switch_distance`]). A step towards the root changes one
//! factor and brings that factor one step closer to the root's projection, so the Up-reachable set
//! of `x` is the product `A_T(x_T) x A_H(x_H)`, and `b(x,t) = b_T(x_T,t_T) + b_H(x_H,t_H)`:
//! `b_H` is HyperX's `#{k: x_k = t_k != r_k}` and `b_T` a table over one Z-node's switches
//! (`ZTree`, at most [`ZTREE_MAX`] of them, one byte per pair). Nothing per switch is stored
//! beyond the depths, and escape hops read neighbours from the HyperZ's port layout (debug builds
//! compare both with the Up-set merge on small networks). On a *faulty* HyperZ the Up sets are
//! built, and the table still answers most queries: between two switches that keep their
//! fault-free depths, `b(x,t)` is the fault-free one whenever a switch at that depth survives in
//! both Up sets (`UpDown::faulty_z_shared`), so the merge is left for the rest.

use super::{push_classes, PortClass};
use crate::error::ConfigError;
use crate::topology::distances::DEBUG_CHECK_SWITCHES;
use crate::topology::fabric::UNREACHABLE;
use crate::topology::{Fabric, HyperX, HyperZ, PortId, SwitchId};
use rayon::prelude::*;
use std::sync::Arc;

/// Penalty of an Up candidate, phits.
pub const UP_PENALTY: u32 = 112;
/// Penalty of a Down candidate, phits.
pub const DOWN_PENALTY: u32 = 96;
/// Penalties of shortcuts reducing the Up/Down distance by 1, 2, and 3 or more.
pub const SHORTCUT_PENALTIES: [u32; 3] = [80, 64, 48];

/// Most switches in one Z-node (the whole network, on a fat tree) for the `ZTree` closed form.
pub const ZTREE_MAX: usize = 512;

/// The Z-node factor of the Up/Down structure on a fault-free HyperZ (see the module doc): per
/// switch of one Z-node (index `offset[level] + flat`), the largest depth its Up set in the
/// Z-node's graph shares with each other's.
struct ZTree {
    hz: HyperZ,
    /// `offset[l]`: tree index of level `l`'s first switch (`offset[1] = 0`).
    offset: Vec<u32>,
    /// Switches per Z-node.
    m: usize,
    /// `shared[u * m + v] = b_T(u, v)`.
    shared: Vec<u8>,
    /// `deepest[u * m + v]`: the index of a switch of both Up sets at depth `b_T(u, v)` (the
    /// lowest such index).
    deepest: Vec<u16>,
    /// `depth[u]`: the depth of tree index `u` below the root's switch in the Z-node's graph.
    depth: Vec<u8>,
    /// `level[u]`: the level of tree index `u`.
    level: Vec<u8>,
}

impl ZTree {
    /// The table for `hz` with the root `root`, or `None` where it does not apply (side links
    /// missing at some level, or more than [`ZTREE_MAX`] switches per Z-node).
    fn new(hz: &HyperZ, root: SwitchId) -> Option<ZTree> {
        let h = hz.height();
        let m: usize = (1..=h).map(|l| hz.nodes_per_znode(l)).sum();
        if !hz.side_links_at_every_level() || m > ZTREE_MAX {
            return None;
        }
        let mut offset = vec![0u32; h + 2];
        for l in 1..=h {
            offset[l + 1] = offset[l] + hz.nodes_per_znode(l) as u32;
        }
        let zr = hz.znode(root);
        let index = |x: SwitchId| offset[hz.level(x)] as usize + hz.flat(x);
        let switch = |u: usize| {
            let l = (1..=h).rfind(|&l| offset[l] as usize <= u).expect("index below m");
            hz.switch_at(l, zr, u - offset[l] as usize)
        };
        // Tree neighbours (down and up ports) of the root's Z-node.
        let tree_nbrs = |u: usize| -> Vec<usize> {
            let x = switch(u);
            (0..hz.up_ports(x).end).map(|p| index(hz.neighbour(x, p).expect("wired").0)).collect()
        };
        let mut depth = vec![u32::MAX; m];
        let mut order = vec![index(root)];
        depth[order[0]] = 0;
        let mut i = 0;
        while i < order.len() {
            let u = order[i];
            for v in tree_nbrs(u) {
                if depth[v] == u32::MAX {
                    depth[v] = depth[u] + 1;
                    order.push(v);
                }
            }
            i += 1;
        }
        // Up sets as bit sets, by increasing depth (BFS order).
        let words = m.div_ceil(64);
        let mut up = vec![0u64; m * words];
        for &u in &order {
            up[u * words + u / 64] |= 1 << (u % 64);
            for v in tree_nbrs(u) {
                if depth[v] + 1 == depth[u] {
                    for w in 0..words {
                        up[u * words + w] |= up[v * words + w];
                    }
                }
            }
        }
        let mut shared = vec![0u8; m * m];
        let mut deepest = vec![0u16; m * m];
        for u in 0..m {
            for v in 0..m {
                let (mut best, mut at) = (0, usize::MAX);
                for w in 0..words {
                    let mut both = up[u * words + w] & up[v * words + w];
                    while both != 0 {
                        let i = w * 64 + both.trailing_zeros() as usize;
                        if at == usize::MAX || depth[i] > best {
                            (best, at) = (depth[i], i);
                        }
                        both &= both - 1;
                    }
                }
                shared[u * m + v] = best as u8;
                deepest[u * m + v] = at as u16;
            }
        }
        let depth = depth.iter().map(|&d| d as u8).collect();
        let level = (0..m).map(|u| (1..=h).rfind(|&l| offset[l] as usize <= u).expect("index below m") as u8).collect();
        Some(ZTree { hz: hz.clone(), offset, m, shared, deepest, depth, level })
    }

    /// Tree index of switch `x` (its level's offset plus its index in the Z-node).
    #[inline]
    fn index(&self, x: SwitchId) -> usize {
        self.offset[self.hz.level(x)] as usize + self.hz.flat(x)
    }

    /// The fault-free depth of `x`: its tree depth plus the Hamming distance of its Z-node to the
    /// root's `zr` (the product of the module doc).
    fn fault_free_depth(&self, x: SwitchId, zr: u32) -> u32 {
        self.depth[self.index(x)] as u32 + self.off_root_dims(x, zr).count_ones()
    }

    /// The dimensions in which the Z-node of `y` differs from the root's `zr`, as a mask.
    #[inline]
    fn off_root_dims(&self, y: SwitchId, zr: u32) -> usize {
        let h = &self.hz;
        let zy = h.znode(y);
        (0..h.dims()).fold(0, |acc, k| acc | ((h.coord(zy, k) != h.coord(zr, k)) as usize) << k)
    }

    /// The dimensions in which the Z-nodes of `x` and `t` agree away from the root's `zr` (`x_k =
    /// t_k != r_k`), as a mask: `b_H` is its size.
    #[inline]
    fn agreeing_dims(&self, x: SwitchId, t: SwitchId, zr: u32) -> usize {
        let h = &self.hz;
        let (zx, zt) = (h.znode(x), h.znode(t));
        (0..h.dims()).fold(0, |acc, k| {
            let a = h.coord(zx, k);
            acc | ((a == h.coord(zt, k) && a != h.coord(zr, k)) as usize) << k
        })
    }

    /// A switch of both fault-free Up sets of `x` and `t` at the deepest depth they share, and that
    /// depth `b_T + b_H`: the tree factor from the table, the Hamming factor the Z-node that takes
    /// `x`'s coordinate where `x` and `t` agree and the root's `zr` elsewhere.
    #[inline]
    fn deepest_shared(&self, x: SwitchId, t: SwitchId, zr: u32) -> (SwitchId, u32) {
        let h = &self.hz;
        let (u, v) = (self.index(x), self.index(t));
        let w = self.deepest[u * self.m + v] as usize;
        let (zx, agree) = (h.znode(x), self.agreeing_dims(x, t, zr));
        let zn = (0..h.dims()).filter(|&k| agree >> k & 1 != 0).fold(zr, |zn, k| h.with_coord(zn, k, h.coord(zx, k)));
        let level = self.level[w] as usize;
        let z = h.switch_at(level, zn, w - self.offset[level] as usize);
        (z, self.shared[u * self.m + v] as u32 + agree.count_ones())
    }

    /// [`ZTree::deepest_shared`] as the switch's [`ZTree::up_bit`] (the same for both Up sets),
    /// without forming its id.
    #[inline]
    fn deepest_shared_bit(&self, x: SwitchId, t: SwitchId, zr: u32) -> (usize, u32) {
        let (u, v) = (self.index(x), self.index(t));
        let agree = self.agreeing_dims(x, t, zr);
        let w = self.deepest[u * self.m + v] as usize;
        ((w << self.hz.dims()) | agree, self.shared[u * self.m + v] as u32 + agree.count_ones())
    }

    /// The bit naming switch `y` within any fault-free Up set that holds it (root Z-node `zr`): its
    /// tree index, and which of its Z-node's coordinates differ from the root's. A member of `x`'s
    /// fault-free Up set takes, per coordinate, `x`'s or the root's, so these two name it.
    #[inline]
    fn up_bit(&self, y: SwitchId, zr: u32) -> usize {
        (self.index(y) << self.hz.dims()) | self.off_root_dims(y, zr)
    }

    /// `b_T` of the Z-node positions of switches `x` and `t`.
    #[inline]
    fn shared_t(&self, x: SwitchId, t: SwitchId) -> u32 {
        self.shared[self.index(x) * self.m + self.index(t)] as u32
    }

    /// `b_H` of the Z-nodes of `x` and `t` for the root's Z-node `zr`: `#{k: x_k = t_k != r_k}`.
    #[inline]
    fn shared_h(&self, x: SwitchId, t: SwitchId, zr: u32) -> u32 {
        self.agreeing_dims(x, t, zr).count_ones()
    }
}

/// Whether bit `x` of the per-switch bit set `bits` is set (false beyond its end).
#[inline]
fn bit_set(bits: &[u64], x: SwitchId) -> bool {
    bits.get(x as usize >> 6).is_some_and(|w| w >> (x & 63) & 1 != 0)
}

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
    /// Up set `A(x)` of switch `x`: `up[up_start[x]..up_start[x + 1]]`, sorted by id (when not
    /// computed from coordinates).
    up_start: Vec<u32>,
    up: Vec<SwitchId>,
    /// A faulty HyperX's coordinates (for the closed form where it holds).
    faulty_hx: Option<HyperX>,
    /// A fault-free HyperZ's Z-node table (the closed form of the module doc).
    ztree: Option<ZTree>,
    /// Bit `x`: on a faulty HyperX, `x`'s depth is its Hamming distance to the root and its Up set
    /// is the fault-free one (see [`UpDown::ud`]).
    closed: Vec<u64>,
    /// On a faulty HyperX of at most 128 switch ports: per switch, its ports whose link failed or
    /// whose neighbour does not keep the closed form ([`UpDown::faulty_hyperx_classes`]).
    special_ports: Vec<u128>,
    /// On a faulty HyperX of at most 8 dimensions of at most 256 switches a side: each switch's
    /// coordinates, a byte per dimension ([`UpDown::shared_with_closed`]).
    packed: Vec<u64>,
    /// A faulty HyperZ's fault-free Z-node table, with `intact` (see [`UpDown::faulty_z_shared`]).
    faulty_z: Option<ZTree>,
    /// Bit `x`: on a faulty HyperZ, `x` is live and keeps its fault-free depth.
    intact: Vec<u64>,
    /// On a faulty HyperZ, the faulty Up set of each intact switch as bits over its fault-free one
    /// (`up_words` words per switch, bit [`ZTree::up_bit`]), so that [`UpDown::faulty_z_shared`]
    /// tests a member with one bit where it would search the sorted set; empty where a Z-node's
    /// positions times `2^dims` exceed [`UP_BITS_MAX`] bits.
    up_bits: Vec<u64>,
    /// Words of `up_bits` per switch (0: not kept).
    up_words: usize,
}

/// The high bit of each byte of `w` that is not zero: where two packed coordinate words (a byte
/// per dimension, [`UpDown::pack_coordinates`]) differ, given their xor.
#[inline(always)]
fn nonzero_bytes(w: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    (((w & LOW7) + LOW7) | w) & !LOW7
}

/// Most bits per switch of [`UpDown`]'s `up_bits` (a Z-node's switches times `2^dims`).
const UP_BITS_MAX: usize = 512;

/// Depths `d(x, root)` over the live links of `net` (failed switches: [`UNREACHABLE`]), after
/// checking `routing.escape_root` names a live switch and that `what` (the spanning structure
/// being built) reaches every live switch from it. Shared by SurePath's escape and `updown`.
pub fn root_depths(net: &Fabric, root: usize, what: &str) -> Result<Vec<u32>, ConfigError> {
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
    let depth = net.bfs(root as SwitchId);
    if let Some(x) = (0..n).find(|&x| net.switch_alive(x as SwitchId) && depth[x] == UNREACHABLE) {
        return Err(ConfigError::value(
            "faults",
            format!("{} failed links", net.failed_links()),
            format!("a connected network: {what} from switch {root} cannot reach switch {x}"),
        ));
    }
    Ok(depth)
}

impl UpDown {
    /// The escape subnetwork rooted at `root` over the live links of `net`.
    pub fn new(net: Arc<Fabric>, root: usize) -> Result<Self, ConfigError> {
        let mut depth = root_depths(&net, root, "the Up/Down escape subnetwork")?;
        // Failed switches have no live link: no route reaches them, and depth 0 keeps them out of
        // the way (never a parent, never below a live switch).
        for (s, d) in depth.iter_mut().enumerate() {
            if !net.switch_alive(s as SwitchId) {
                *d = 0;
            }
        }
        let faulty_hx = net.sparse_distances().map(|sd| sd.hyperx().clone());
        let mut u = UpDown {
            net,
            root: root as SwitchId,
            depth,
            up_start: Vec::new(),
            up: Vec::new(),
            faulty_hx,
            ztree: None,
            closed: Vec::new(),
            special_ports: Vec::new(),
            packed: Vec::new(),
            faulty_z: None,
            intact: Vec::new(),
            up_bits: Vec::new(),
            up_words: 0,
        };
        if u.hyperx().is_none() {
            u.ztree = u.net.fault_free_hyperz().and_then(|h| ZTree::new(h, root as SwitchId));
            let check = cfg!(debug_assertions) && u.net.num_switches() <= DEBUG_CHECK_SWITCHES;
            if u.ztree.is_none() || check {
                u.build_up_sets()?;
                u.mark_closed();
                u.pack_coordinates();
            }
            if u.ztree.is_none() {
                u.mark_intact();
            }
            u.mark_special_ports();
            if (u.ztree.is_some() || u.faulty_z.is_some()) && check {
                // Debug builds: the closed form is the Up-set merge for every pair.
                let n = u.net.num_switches() as SwitchId;
                for x in 0..n {
                    for t in 0..n {
                        assert_eq!(u.ud(x, t), u.depth(x) + u.depth(t) - 2 * u.shared_depth(x, t), "ud({x}, {t})");
                    }
                }
            }
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
        if let Some(z) = &self.ztree {
            return self.depth(x) + self.depth(t) - 2 * (z.shared_t(x, t) + z.shared_h(x, t, z.hz.znode(self.root)));
        }
        match self.hyperx() {
            Some(h) => {
                let mut shared = 0;
                for d in 0..h.dims() {
                    let (a, b) = (h.coord(x, d), h.coord(t, d));
                    shared += (a == b && a != h.coord(self.root, d)) as u32;
                }
                self.depth(x) + self.depth(t) - 2 * shared
            }
            None => match &self.faulty_hx {
                Some(h) if self.is_closed(x) && self.is_closed(t) => {
                    let shared = self.closed_shared(h, x, t);
                    debug_assert!(
                        self.net.num_switches() > DEBUG_CHECK_SWITCHES || shared == self.shared_depth(x, t),
                        "closed-form b({x}, {t}) differs from the Up-set merge"
                    );
                    self.depth(x) + self.depth(t) - 2 * shared
                }
                Some(_) if !self.packed.is_empty() && (self.is_closed(x) || self.is_closed(t)) => {
                    let shared =
                        if self.is_closed(t) { self.shared_with_closed(x, t) } else { self.shared_with_closed(t, x) };
                    debug_assert!(
                        self.net.num_switches() > DEBUG_CHECK_SWITCHES || shared == self.shared_depth(x, t),
                        "b({x}, {t}) with one closed switch differs from the Up-set merge"
                    );
                    self.depth(x) + self.depth(t) - 2 * shared
                }
                _ => {
                    let shared = match self.faulty_z.as_ref().and_then(|z| self.faulty_z_shared(z, x, t)) {
                        Some(b) => {
                            debug_assert!(
                                self.net.num_switches() > DEBUG_CHECK_SWITCHES || b == self.shared_depth(x, t),
                                "faulty HyperZ: b({x}, {t}) differs from the Up-set merge"
                            );
                            b
                        }
                        None => self.shared_depth(x, t),
                    };
                    self.depth(x) + self.depth(t) - 2 * shared
                }
            },
        }
    }

    /// Whether `x` keeps the fault-free depth and Up set (faulty HyperX only).
    ///
    /// When `x` and `t` both do, `b(x,t)` is the closed form `#{d: x_d = t_d != r_d}`: every `z`
    /// in `A(x)` is `x` with some coordinates set to the root's, reached by an Up path of length
    /// `d(x,r) - d(z,r) >= hamming(x,z)`, and `d(z,r) >= hamming(z,r)` (faults only lengthen
    /// paths), so `d(z,r) = hamming(z,r)`; `A(x) ∩ A(t)` is then the fault-free intersection with
    /// its fault-free depths.
    #[inline]
    fn is_closed(&self, x: SwitchId) -> bool {
        bit_set(&self.closed, x)
    }

    /// On a faulty HyperX whose closed form is marked, with at most 8 dimensions of at most 256
    /// switches a side: packs each switch's coordinates into a word for
    /// [`UpDown::shared_with_closed`].
    fn pack_coordinates(&mut self) {
        let Some(h) = &self.faulty_hx else { return };
        if self.closed.is_empty() || h.dims() > 8 || h.sides().iter().any(|&s| s > 256) {
            return;
        }
        let n = self.depth.len() as SwitchId;
        self.packed = (0..n).map(|x| (0..h.dims()).fold(0u64, |m, d| m | (h.coord(x, d) as u64) << (8 * d))).collect();
    }

    /// `b(o, c)` (as [`UpDown::shared_depth`]) where `c` keeps the closed form
    /// ([`UpDown::is_closed`]): `A(c)` is then every switch whose coordinates are each the root's
    /// or `c`'s, each at its Hamming distance to the root as depth, so one pass over `A(o)` with a
    /// test of coordinates finds the deepest shared switch, where the merge also reads `A(c)`
    /// and branches on every comparison (PolSP's escape on the faulty million-endpoint HyperX
    /// asks this for every neighbour when the target does not keep the closed form).
    #[inline]
    fn shared_with_closed(&self, o: SwitchId, c: SwitchId) -> u32 {
        let (pr, pc) = (self.packed[self.root as usize], self.packed[c as usize]);
        let mut best = 0;
        for &z in self.up_set(o) {
            let pz = self.packed[z as usize];
            let off_root = nonzero_bytes(pz ^ pr);
            let inside = off_root & nonzero_bytes(pz ^ pc) == 0;
            best = best.max(off_root.count_ones() * inside as u32);
        }
        best
    }

    /// `#{d: x_d = t_d != r_d}`: `b(x,t)` on a fault-free HyperX.
    #[inline]
    fn closed_shared(&self, h: &HyperX, x: SwitchId, t: SwitchId) -> u32 {
        let mut shared = 0;
        for d in 0..h.dims() {
            let (a, b) = (h.coord(x, d), h.coord(t, d));
            shared += (a == b && a != h.coord(self.root, d)) as u32;
        }
        shared
    }

    /// Sets the [`UpDown::is_closed`] bits of a faulty HyperX from the built Up sets: the depth
    /// is the Hamming distance `m` to the root and the Up set holds `2^m` switches, each `x` with
    /// some coordinates set to the root's (so it is the whole fault-free set).
    fn mark_closed(&mut self) {
        let Some(h) = &self.faulty_hx else { return };
        let n = self.depth.len();
        let r = self.root;
        let closed_one = |x: SwitchId| {
            let m = h.hamming(x, r);
            let a = self.up_set(x);
            self.net.switch_alive(x)
                && self.depth(x) == m
                && a.len() == 1 << m
                && a.iter()
                    .all(|&z| (0..h.dims()).all(|d| h.coord(z, d) == h.coord(x, d) || h.coord(z, d) == h.coord(r, d)))
        };
        let closed: Vec<u64> = (0..n.div_ceil(64))
            .into_par_iter()
            .map(|w| {
                (0..64.min(n - 64 * w)).fold(0u64, |acc, i| acc | (closed_one((64 * w + i) as SwitchId) as u64) << i)
            })
            .collect();
        self.closed = closed;
    }

    /// On a faulty HyperZ whose fault-free structure has a [`ZTree`]: keeps that table and marks
    /// the live switches whose depth is the fault-free one ([`UpDown::faulty_z_shared`]).
    fn mark_intact(&mut self) {
        let Some(hz) = self.net.tree_exceptions().map(|e| e.closed_form()) else { return };
        let Some(z) = ZTree::new(hz, self.root) else { return };
        let zr = hz.znode(self.root);
        let n = self.depth.len();
        let intact_one = |x: SwitchId| self.net.switch_alive(x) && self.depth(x) == z.fault_free_depth(x, zr);
        self.intact = (0..n.div_ceil(64))
            .into_par_iter()
            .map(|w| {
                (0..64.min(n - 64 * w)).fold(0u64, |acc, i| acc | (intact_one((64 * w + i) as SwitchId) as u64) << i)
            })
            .collect();
        let bits = z.m << hz.dims();
        if bits <= UP_BITS_MAX {
            let words = bits.div_ceil(64);
            let mut up_bits = vec![0u64; n * words];
            up_bits.par_chunks_mut(words).enumerate().for_each(|(x, row)| {
                if bit_set(&self.intact, x as SwitchId) {
                    for &y in self.up_set(x as SwitchId) {
                        let b = z.up_bit(y, zr);
                        // Unique within the fault-free Up set, which holds an intact switch's.
                        debug_assert!(row[b >> 6] >> (b & 63) & 1 == 0, "switch {x}: Up-set bit {b} twice");
                        row[b >> 6] |= 1 << (b & 63);
                    }
                }
            });
            (self.up_bits, self.up_words) = (up_bits, words);
        }
        self.faulty_z = Some(z);
    }

    /// `b(x, t)` on a faulty HyperZ without a merge, where it can be shown: when `x` and `t` both
    /// keep their fault-free depths, `b(x, t)` is the fault-free `b_T + b_H` if a switch `z` of
    /// both fault-free Up sets at that depth is in both faulty Up sets (two binary searches);
    /// `None` otherwise.
    ///
    /// Why: an Up path from `x` to `z` has `d(x,r) - d(z,r)` hops over live links, at least the
    /// fault-free `d0(x,z)`; with `d(x,r) = d0(x,r)`, `d(z,r) <= d0(x,r) - d0(x,z) <= d0(z,r)` and
    /// faults only lengthen paths, so `d(z,r) = d0(z,r)` and `z` lies on a fault-free shortest path
    /// from `x` to the root: the faulty Up set of an intact `x` is a subset of its fault-free one,
    /// with fault-free depths. So for intact `x` and `t` the faulty `b` is at most the fault-free
    /// one, and equal to it when one switch at that depth survives in both sets.
    ///
    /// The membership tests read [`UpDown`]'s `up_bits` where they are kept (one bit each: the
    /// switch's position in the Z-node and which coordinates it keeps name it within a fault-free
    /// Up set), else search the sorted Up sets.
    #[inline]
    fn faulty_z_shared(&self, z: &ZTree, x: SwitchId, t: SwitchId) -> Option<u32> {
        if !(bit_set(&self.intact, x) && bit_set(&self.intact, t)) {
            return None;
        }
        let zr = z.hz.znode(self.root);
        let searched = || {
            let (s, b) = z.deepest_shared(x, t, zr);
            (self.up_set(x).binary_search(&s).is_ok() && self.up_set(t).binary_search(&s).is_ok()).then_some(b)
        };
        let w = self.up_words;
        if w == 0 {
            return searched();
        }
        let (bit, b) = z.deepest_shared_bit(x, t, zr);
        let member = |y: SwitchId| self.up_bits[y as usize * w + (bit >> 6)] >> (bit & 63) & 1 != 0;
        let found = (member(x) && member(t)).then_some(b);
        debug_assert_eq!(found, searched(), "Up-set bits of {x} and {t} differ from the sets");
        found
    }

    /// The Up set `A(x)`, sorted by id (where built).
    #[inline]
    fn up_set(&self, x: SwitchId) -> &[SwitchId] {
        &self.up[self.up_start[x as usize] as usize..self.up_start[x as usize + 1] as usize]
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

    /// The least penalty [`UpDown::penalty`] gives, the floor of every escape hop's.
    pub const LEAST_PENALTY: u32 = {
        let (mut least, mut i) = (if UP_PENALTY < DOWN_PENALTY { UP_PENALTY } else { DOWN_PENALTY }, 0);
        while i < SHORTCUT_PENALTIES.len() {
            if SHORTCUT_PENALTIES[i] < least {
                least = SHORTCUT_PENALTIES[i];
            }
            i += 1;
        }
        least
    };

    /// Penalty of an escape hop of kind `kind` that reduces the Up/Down distance by `reduction`.
    #[inline]
    pub fn penalty(kind: LinkKind, reduction: u32) -> u32 {
        match kind {
            LinkKind::Up => UP_PENALTY,
            LinkKind::Down => DOWN_PENALTY,
            LinkKind::Horizontal => SHORTCUT_PENALTIES[(reduction.clamp(1, 3) - 1) as usize],
        }
    }

    /// The escape hops of [`UpDown::hops`] from `x` to `t` on the VCs `vcs` as classes of ports
    /// (one per penalty), on a fault-free HyperX of at most 64 ports (`false` elsewhere): per
    /// dimension the four coordinate classes of the HyperX path as port masks.
    pub fn hyperx_classes(&self, x: SwitchId, t: SwitchId, out: &mut Vec<PortClass>, vcs: std::ops::Range<u8>) -> bool {
        let Some(h) = self.hyperx() else { return false };
        let (dx, dt) = (self.depth(x), self.depth(t));
        let ux = self.ud(x, t);
        let below = dt >= dx && ux == dt - dx;
        let shared = (dx + dt - ux) / 2;
        // Ports by penalty: Up, Down, then the shortcuts by reduction 1, 2, 3.
        let mut by_kind = [0u64; 5];
        for d in 0..h.dims() {
            let (a, tt, r) = (h.coord(x, d), h.coord(t, d), h.coord(self.root, d));
            let Some(masks) = h.coordinate_class_masks(x, d, r, tt) else { return false };
            let classes = Self::dim_classes(a, tt, r, dx, shared, dt);
            for (&m, &(dy, uy)) in masks.iter().zip(&classes) {
                if m == 0 || uy >= ux {
                    continue;
                }
                let k = if dy < dx {
                    0
                } else if dy > dx {
                    1
                } else {
                    2 + ((ux - uy).clamp(1, 3) - 1) as usize
                };
                if (k == 1 && !below) || (k == 0 && below) {
                    continue;
                }
                by_kind[k] |= m;
            }
        }
        let kinds = [LinkKind::Up, LinkKind::Down, LinkKind::Horizontal, LinkKind::Horizontal, LinkKind::Horizontal];
        push_classes(out, &by_kind, |k| Self::penalty(kinds[k], (k as u32).saturating_sub(1)), vcs, true);
        true
    }

    /// On a faulty HyperX of at most 128 switch ports whose closed form is marked: per switch, the
    /// ports whose link failed or whose neighbour does not keep the closed form.
    fn mark_special_ports(&mut self) {
        if self.faulty_hx.is_none() || self.closed.is_empty() || self.net.max_switch_ports() > 128 {
            return;
        }
        let n = self.net.num_switches() as SwitchId;
        let special = (0..n)
            .map(|x| {
                (0..self.net.switch_ports(x) as PortId)
                    .filter(|&p| self.net.neighbour(x, p).is_none_or(|(y, _)| !self.is_closed(y)))
                    .fold(0u128, |m, p| m | 1 << p)
            })
            .collect();
        self.special_ports = special;
    }

    /// [`UpDown::hyperx_classes`] on a faulty HyperX of at most 128 ports, for a target that keeps
    /// the closed form (where [`UpDown::hops`] takes its closed form too): per dimension the four
    /// coordinate classes, then each port to a neighbour that does not keep the closed form with
    /// that neighbour's own depth and Up/Down distance, the failed ports left out. `false` (with
    /// `out` unchanged) elsewhere.
    pub fn faulty_hyperx_classes(
        &self,
        x: SwitchId,
        t: SwitchId,
        out: &mut Vec<PortClass>,
        vcs: std::ops::Range<u8>,
    ) -> bool {
        let Some(h) = &self.faulty_hx else { return false };
        if self.special_ports.is_empty() || self.hyperx().is_some() || !self.is_closed(t) {
            return false;
        }
        let (dx, dt) = (self.depth(x), self.depth(t));
        let ux = self.ud(x, t);
        let below = dt >= dx && ux == dt - dx;
        let offer = |dy: u32, uy: u32| Self::offered(dx, ux, below, dy, uy).map(|(penalty, _)| penalty);
        let special = self.special_ports[x as usize];
        let mut c = super::HopClasses::default();
        // The closed form, as `closed_hops`: `x`'s depth by coordinates, whatever its own bit.
        let (mx, shared) = (h.hamming(x, self.root), self.closed_shared(h, x, t));
        for d in 0..h.dims() {
            let (a, tt, r) = (h.coord(x, d), h.coord(t, d), h.coord(self.root, d));
            let Some(masks) = h.coordinate_class_masks_wide(x, d, r, tt) else { return false };
            let classes = Self::dim_classes(a, tt, r, mx, shared, dt);
            for (&m, &(dy, uy)) in masks.iter().zip(&classes) {
                let m = m & !special;
                if m != 0 {
                    if let Some(penalty) = offer(dy, uy) {
                        c.add_ports(m, penalty);
                    }
                }
            }
        }
        let mut rest = special;
        while rest != 0 {
            let p = rest.trailing_zeros();
            rest &= rest - 1;
            if self.net.alive(x, p as PortId) {
                let y = h.neighbour_switch(x, p as PortId);
                if let Some(penalty) = offer(self.depth(y), self.ud(y, t)) {
                    c.add_ports(1 << p, penalty);
                }
            }
        }
        c.push_to(out, vcs, true, |p| p)
    }

    /// The escape's rule for one hop, from a switch of depth `dx` whose Up/Down distance to the
    /// target is `ux` (`below`: the target is below it, `ux` being their depth difference) to a
    /// neighbour of depth `dy` and Up/Down distance `uy`: its penalty and kind where offered, as
    /// the hop must reduce the Up/Down distance and neither go Up towards a target below nor Down
    /// towards one that is not.
    #[inline(always)]
    fn offered(dx: u32, ux: u32, below: bool, dy: u32, uy: u32) -> Option<(u32, LinkKind)> {
        if uy >= ux {
            return None;
        }
        let kind = if dy < dx {
            LinkKind::Up
        } else if dy > dx {
            LinkKind::Down
        } else {
            LinkKind::Horizontal
        };
        match kind {
            LinkKind::Down if !below => None,
            LinkKind::Up if below => None,
            _ => Some((Self::penalty(kind, ux - uy), kind)),
        }
    }

    /// Calls `f(port, penalty, kind)` for every escape hop of a packet at `x` bound for `t != x`.
    #[inline]
    pub fn hops(&self, x: SwitchId, t: SwitchId, mut f: impl FnMut(PortId, u32, LinkKind)) {
        let (dx, dt) = (self.depth(x), self.depth(t));
        let ux = self.ud(x, t);
        let below = dt >= dx && ux == dt - dx;
        let mut consider = |port: PortId, dy: u32, uy: u32| {
            if let Some((penalty, kind)) = Self::offered(dx, ux, below, dy, uy) {
                f(port, penalty, kind);
            }
        };
        if let Some(h) = self.hyperx() {
            // Per-dimension update of depth and shared-coordinate count.
            let shared = (dx + dt - ux) / 2;
            for d in 0..h.dims() {
                let (a, tt, r) = (h.coord(x, d), h.coord(t, d), h.coord(self.root, d));
                // Ports of dimension `d` are consecutive (every other coordinate in increasing
                // order, each with its trunks: `HyperX::port_to`).
                let classes = Self::dim_classes(a, tt, r, dx, shared, dt);
                for (v, ports) in h.dim_ports(x, d) {
                    let (dy, uy) = classes[(v == r) as usize | ((v == tt) as usize) << 1];
                    ports.for_each(|p| consider(p, dy, uy));
                }
            }
        } else if let Some(z) = &self.ztree {
            self.hyperz_hops(z, x, t, ux, &mut consider);
        } else if let Some(sd) = self.net.sparse_distances() {
            let h = sd.hyperx();
            if !self.is_closed(t) && cfg!(debug_assertions) && self.net.num_switches() <= DEBUG_CHECK_SWITCHES {
                // Debug builds: one pass over `A(t)` gives what the merges give.
                let (mut fast, mut slow) = (Vec::new(), Vec::new());
                let wrote = self.open_target_hops(h, x, t, &mut |p, dy, uy| fast.push((p, dy, uy)));
                self.sparse_hops(h, x, t, &mut |p, dy, uy| slow.push((p, dy, uy)));
                assert!(!wrote || fast == slow, "open-target escape hops at {x} to {t}");
                slow.into_iter().for_each(|(p, dy, uy)| consider(p, dy, uy));
            } else if !self.is_closed(t) {
                if !self.open_target_hops(h, x, t, &mut consider) {
                    self.sparse_hops(h, x, t, &mut consider);
                }
            } else if cfg!(debug_assertions) && self.net.num_switches() <= DEBUG_CHECK_SWITCHES {
                // Debug builds: the closed form gives every neighbour the depth and Up/Down
                // distance of the Up-set merges.
                let (mut fast, mut slow) = (Vec::new(), Vec::new());
                self.closed_hops(h, x, t, &mut |p, dy, uy| fast.push((p, dy, uy)));
                self.sparse_hops(h, x, t, &mut |p, dy, uy| slow.push((p, dy, uy)));
                assert_eq!(fast, slow, "escape hops at {x} to {t}");
                fast.into_iter().for_each(|(p, dy, uy)| consider(p, dy, uy));
            } else {
                self.closed_hops(h, x, t, &mut consider);
            }
        } else {
            // `consider` drops an Up hop towards a target below and a Down hop towards one that is
            // not, whatever `ud(y,t)`: those neighbours are left out before their `ud` is computed
            // (the per-neighbour cost here), and parallel links to one neighbour share it.
            let mut last = (SwitchId::MAX, 0);
            for p in 0..self.net.switch_ports(x) as PortId {
                if let Some((y, _)) = self.net.neighbour(x, p) {
                    let dy = self.depth(y);
                    if (dy < dx && below) || (dy > dx && !below) {
                        continue;
                    }
                    if y != last.0 {
                        last = (y, self.ud(y, t));
                    }
                    consider(p, dy, last.1);
                }
            }
        }
    }

    /// A fault-free HyperZ ([`ZTree`]): calls `g(port, d(y,r), ud(y,t))` for every port of `x`, in
    /// port order (down, up, side), with one table lookup per tree neighbour (not per parallel
    /// link) and the per-dimension update of HyperX for side neighbours (a side hop leaves the tree
    /// factor as it is).
    fn hyperz_hops(&self, z: &ZTree, x: SwitchId, t: SwitchId, ux: u32, g: &mut impl FnMut(PortId, u32, u32)) {
        let h = &z.hz;
        let (dx, dt) = (self.depth(x), self.depth(t));
        let level = h.level(x);
        let ups = h.up_ports(x);
        let widths = h.internal_links();
        let zr = h.znode(self.root);
        let shared_h = z.shared_h(x, t, zr);
        for (range, width) in
            [(0..ups.start, widths[level - 1]), (ups.clone(), widths.get(level).copied().unwrap_or(1))]
        {
            let mut p = range.start;
            while p < range.end {
                let y = h.neighbour(x, p).expect("HyperZ ports are wired").0;
                let dy = self.depth(y);
                let uy = dy + dt - 2 * (z.shared_t(y, t) + shared_h);
                let next = p + width as PortId;
                (p..next).for_each(|q| g(q, dy, uy));
                p = next;
            }
        }
        // `b(x,t)` from `ud(x,t)`; side neighbours change only the Hamming terms.
        let shared = (dx + dt - ux) / 2;
        let (zx, zt) = (h.znode(x), h.znode(t));
        for k in 0..h.dims() {
            let (a, tt, r) = (h.coord(zx, k), h.coord(zt, k), h.coord(zr, k));
            let classes = Self::dim_classes(a, tt, r, dx, shared, dt);
            for v in (0..h.sides()[k]).filter(|&v| v != a) {
                let (dy, uy) = classes[(v == r) as usize | ((v == tt) as usize) << 1];
                h.side_ports(x, k, v).for_each(|q| g(q, dy, uy));
            }
        }
    }

    /// A faulty HyperX: calls `g(port, d(y,r), ud(y,t))` for every live port of `x` to a neighbour
    /// `y`, in the order of the generic port scan, with neighbours from coordinates and one
    /// [`UpDown::ud`] per neighbour switch (not per trunk).
    fn sparse_hops(&self, h: &HyperX, x: SwitchId, t: SwitchId, g: &mut impl FnMut(PortId, u32, u32)) {
        h.for_each_neighbour(x, |y, ports| {
            let mut uy = None;
            for p in ports.filter(|&p| self.net.alive(x, p)) {
                g(p, self.depth(y), *uy.get_or_insert_with(|| self.ud(y, t)));
            }
        });
    }

    /// [`UpDown::sparse_hops`] when `t` does not keep the closed form ([`UpDown::is_closed`]) but
    /// coordinates are packed ([`UpDown::shared_with_closed`]): `false` (nothing called) where it
    /// declines. A neighbour `y` across dimension `d` that keeps the closed form shares with `t`
    /// the members `z` of `A(t)` whose every coordinate is the root's or `y`'s, which are `x`'s
    /// in every dimension but `d`. So one pass over `A(t)` sorts them: a `z` whose coordinates
    /// are each the root's or `x`'s counts for every neighbour across each dimension where it has
    /// the root's; a `z` with one other coordinate, value `w` in dimension `d`, counts only for
    /// the neighbour with coordinate `w` there; the others count for none. The deepest that counts
    /// gives `b(y, t)` without a merge per neighbour (on the faulty million-endpoint HyperX, one
    /// target in nine does not keep the closed form, and the merge was read for each of its 93
    /// neighbours).
    fn open_target_hops(&self, h: &HyperX, x: SwitchId, t: SwitchId, g: &mut impl FnMut(PortId, u32, u32)) -> bool {
        /// Most members of `A(t)` with one coordinate off both the root's and `x`'s.
        const ONE_OFF: usize = 32;
        if self.packed.is_empty() {
            return false;
        }
        let (pr, px) = (self.packed[self.root as usize], self.packed[x as usize]);
        // Per dimension, the deepest `z` that counts for every neighbour across it; and the `z`
        // that count for one neighbour: (dimension, coordinate, depth).
        let mut all = [0u32; 8];
        let (mut one, mut n_one) = ([(0u8, 0u8, 0u8); ONE_OFF], 0);
        for &z in self.up_set(t) {
            let pz = self.packed[z as usize];
            let off_root = nonzero_bytes(pz ^ pr);
            let off_both = off_root & nonzero_bytes(pz ^ px);
            let depth = off_root.count_ones();
            if off_both == 0 {
                for (d, best) in all.iter_mut().enumerate().take(h.dims()) {
                    if off_root >> (8 * d + 7) & 1 == 0 {
                        *best = (*best).max(depth);
                    }
                }
            } else if off_both & (off_both - 1) == 0 {
                if n_one == ONE_OFF {
                    return false;
                }
                let d = off_both.trailing_zeros() as usize / 8;
                one[n_one] = (d as u8, (pz >> (8 * d)) as u8, depth as u8);
                n_one += 1;
            }
        }
        let (dt, mx) = (self.depth(t), h.hamming(x, self.root));
        for (d, &all_d) in all.iter().enumerate().take(h.dims()) {
            let (a, r) = (h.coord(x, d), h.coord(self.root, d));
            for (v, ports) in h.dim_ports(x, d) {
                let y = h.with_coord(x, d, v);
                let mut dy_uy = None;
                for p in ports.filter(|&p| self.net.alive(x, p)) {
                    let (dy, uy) = *dy_uy.get_or_insert_with(|| {
                        if self.is_closed(y) {
                            let dy = mx - (a != r) as u32 + (v != r) as u32;
                            let shared = one[..n_one]
                                .iter()
                                .filter(|&&(dd, w, _)| dd as usize == d && w as usize == v)
                                .fold(all_d, |b, &(_, _, depth)| b.max(depth as u32));
                            (dy, dy + dt - 2 * shared)
                        } else {
                            (self.depth(y), self.ud(y, t))
                        }
                    });
                    g(p, dy, uy);
                }
            }
        }
        true
    }

    /// [`UpDown::sparse_hops`] when `t` [`UpDown::is_closed`]: neighbours that are closed too get
    /// their depth and Up/Down distance from the fault-free per-dimension update (no Up-set merge),
    /// the others from [`UpDown::depth`] and [`UpDown::ud`].
    #[inline]
    fn closed_hops(&self, h: &HyperX, x: SwitchId, t: SwitchId, g: &mut impl FnMut(PortId, u32, u32)) {
        let dt = self.depth(t);
        // The closed-form depth of `x` and `b(x,t)`, whatever `x`'s own bit.
        let (mx, shared) = (h.hamming(x, self.root), self.closed_shared(h, x, t));
        for d in 0..h.dims() {
            let (a, tt, r) = (h.coord(x, d), h.coord(t, d), h.coord(self.root, d));
            let classes = Self::dim_classes(a, tt, r, mx, shared, dt);
            for (v, ports) in h.dim_ports(x, d) {
                let y = h.with_coord(x, d, v);
                let (dy, uy) = if self.is_closed(y) {
                    classes[(v == r) as usize | ((v == tt) as usize) << 1]
                } else {
                    (self.depth(y), self.ud(y, t))
                };
                for p in ports.filter(|&p| self.net.alive(x, p)) {
                    g(p, dy, uy);
                }
            }
        }
    }

    /// On a HyperX whose depths and Up sets are the closed form: the depth and Up/Down distance of
    /// a neighbour of `x` across one dimension, by whether its coordinate there is the root's and
    /// whether it is the target's (`[neither, root, target, both]`, indexed `is_r | is_t << 1`),
    /// from `x`'s coordinate `a`, the target's `tt` and the root's `r` in that dimension, `x`'s
    /// depth `dx`, the coordinates `shared` by `x` and `t` off the root's, and `t`'s depth `dt`.
    /// A combination that cannot occur (e.g. the target's coordinate but not the root's, when the
    /// two are equal) may wrap; it is never read.
    #[inline]
    fn dim_classes(a: usize, tt: usize, r: usize, dx: u32, shared: u32, dt: u32) -> [(u32, u32); 4] {
        let base_depth = dx - (a != r) as u32;
        let base_shared = shared - (a == tt && a != r) as u32;
        let class = |is_r: bool, is_t: bool| {
            let dy = base_depth + !is_r as u32;
            let sy = base_shared + (is_t && !is_r) as u32;
            (dy, (dy + dt).wrapping_sub(2 * sy))
        };
        [class(false, false), class(true, false), class(false, true), class(true, true)]
    }

    /// `b(x, t)`: the largest depth of a switch in both Up sets (a sorted merge).
    #[inline]
    fn shared_depth(&self, x: SwitchId, t: SwitchId) -> u32 {
        let (ax, at) = (self.up_set(x), self.up_set(t));
        let (mut i, mut j, mut best) = (0, 0, 0);
        while i < ax.len() && j < at.len() {
            match ax[i].cmp(&at[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    best = best.max(self.depth[ax[i] as usize]);
                    i += 1;
                    j += 1;
                }
            }
        }
        best
    }

    /// The Up sets, level by level: `A(x) = {x}` plus the union of its parents' sets (parents are
    /// live neighbours one level closer to the root).
    fn build_up_sets(&mut self) -> Result<(), ConfigError> {
        let n = self.depth.len();
        let net = &*self.net;
        let max_depth = self.depth.iter().copied().max().unwrap_or(0) as usize;
        let mut levels: Vec<Vec<SwitchId>> = vec![Vec::new(); max_depth + 1];
        for x in 0..n as SwitchId {
            levels[self.depth(x) as usize].push(x);
        }
        let mut sets: Vec<Vec<SwitchId>> = vec![Vec::new(); n];
        for level in &levels {
            let built: Vec<Vec<SwitchId>> = level
                .par_iter()
                .map(|&x| {
                    let mut a = vec![x];
                    for p in 0..net.switch_ports(x) as PortId {
                        if let Some((y, _)) = net.neighbour(x, p) {
                            if self.depth(y) + 1 == self.depth(x) {
                                a.extend_from_slice(&sets[y as usize]);
                            }
                        }
                    }
                    a.sort_unstable();
                    a.dedup();
                    a
                })
                .collect();
            for (&x, a) in level.iter().zip(built) {
                sets[x as usize] = a;
            }
        }
        let total: usize = sets.iter().map(|a| a.len()).sum();
        if total > u32::MAX as usize {
            return Err(ConfigError::value(
                "routing.escape_root",
                self.root,
                format!("a root whose Up sets hold at most 2^32 switches in all (they hold {total})"),
            ));
        }
        let mut up_start = Vec::with_capacity(n + 1);
        let mut up = Vec::with_capacity(total);
        up_start.push(0);
        for a in sets {
            up.extend_from_slice(&a);
            up_start.push(up.len() as u32);
        }
        self.up_start = up_start;
        self.up = up;
        Ok(())
    }

    /// Bytes held by the Up sets, depths, closed-form bits and Z-node table (for reports).
    pub fn bytes(&self) -> usize {
        4 * (self.depth.len() + self.up_start.len() + self.up.len())
            + 8 * (self.closed.len() + self.intact.len() + self.up_bits.len())
            + [&self.ztree, &self.faulty_z].iter().filter_map(|z| z.as_ref()).map(|z| 3 * z.shared.len()).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::fixtures::{class_ports, faulty_hyperx_cases};
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

    /// The former all-pairs table's pass for one destination `t`: mark the switches Up-reachable
    /// from `t`, then, by increasing depth, `b(x)` is `d(x)` for marked switches and the largest `b`
    /// of a parent otherwise.
    fn ud_row(u: &UpDown, t: SwitchId) -> Vec<u32> {
        let nw = &u.net;
        let n = nw.num_switches();
        let parents = |x: SwitchId| -> Vec<SwitchId> {
            (0..nw.switch_ports(x) as PortId)
                .filter_map(|p| nw.neighbour(x, p).map(|(y, _)| y))
                .filter(|&y| u.depth(y) + 1 == u.depth(x))
                .collect()
        };
        let mut marked = vec![false; n];
        let mut stack = vec![t];
        marked[t as usize] = true;
        while let Some(z) = stack.pop() {
            for p in parents(z) {
                if !std::mem::replace(&mut marked[p as usize], true) {
                    stack.push(p);
                }
            }
        }
        let mut order: Vec<SwitchId> = (0..n as SwitchId).collect();
        order.sort_by_key(|&x| u.depth(x));
        let mut best = vec![0u32; n];
        for &x in &order {
            best[x as usize] = if marked[x as usize] {
                u.depth(x)
            } else {
                parents(x).iter().map(|&p| best[p as usize]).max().unwrap_or(0)
            };
        }
        (0..n).map(|x| u.depth(x as SwitchId) + u.depth(t) - 2 * best[x]).collect()
    }

    #[test]
    fn up_sets_match_closed_form_and_the_table_pass() {
        for (sides, faults) in
            [(vec![4usize, 4], 0), (vec![3, 3, 3], 0), (vec![2, 3, 4], 0), (vec![4, 4], 6), (vec![4, 4, 4], 30)]
        {
            let nw = net(&sides, faults);
            for root in [0usize, 5] {
                let mut u = UpDown::new(nw.clone(), root).unwrap();
                let closed: Vec<u32> = if faults == 0 {
                    let n = nw.num_switches() as SwitchId;
                    (0..n).flat_map(|t| (0..n).map(move |x| (x, t))).map(|(x, t)| u.ud(x, t)).collect()
                } else {
                    Vec::new()
                };
                u.build_up_sets().unwrap();
                let n = nw.num_switches();
                let mut one_closed = 0;
                for t in 0..n as SwitchId {
                    let row = ud_row(&u, t);
                    for x in 0..n as SwitchId {
                        let got = u.depth(x) + u.depth(t) - 2 * u.shared_depth(x, t);
                        assert_eq!(got, row[x as usize], "{sides:?} {faults} faults r={root} x={x} t={t}");
                        if faults == 0 {
                            assert_eq!(got, closed[t as usize * n + x as usize], "{sides:?} r={root}");
                        } else if nw.switch_alive(x) && nw.switch_alive(t) {
                            // `ud` itself: the closed form, the pass over one Up set where one
                            // switch keeps the closed form, or the merge.
                            assert_eq!(u.ud(x, t), row[x as usize], "{sides:?} {faults} faults r={root} ud({x}, {t})");
                            one_closed += (u.is_closed(x) != u.is_closed(t)) as usize;
                        }
                    }
                }
                if faults > 0 {
                    assert!(!u.packed.is_empty() && one_closed > n, "{sides:?} r={root}: {one_closed} pairs");
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

    /// On a faulty HyperX with a failed switch (and one with trunks), the escape's classes from
    /// masks, where written, offer exactly the ports and penalties of its hops, for every (x, t)
    /// and two roots; they are written wherever the target keeps the closed form.
    #[test]
    fn faulty_hyperx_escape_classes_match_the_hops() {
        for (sides, nw) in faulty_hyperx_cases() {
            let n = nw.num_switches() as SwitchId;
            for root in [0usize, 7] {
                let u = UpDown::new(nw.clone(), root).unwrap();
                let (mut written, mut closed_t) = (0, 0);
                for t in (0..n).filter(|&t| nw.switch_alive(t)) {
                    for x in (0..n).filter(|&x| x != t && nw.switch_alive(x)) {
                        let mut classes = Vec::new();
                        let wrote = u.faulty_hyperx_classes(x, t, &mut classes, 3..4);
                        closed_t += u.is_closed(t) as u32;
                        if !wrote {
                            assert!(classes.is_empty() && !u.is_closed(t), "{sides:?} r={root} at {x} to {t}");
                            continue;
                        }
                        written += 1;
                        let mut want = Vec::new();
                        u.hops(x, t, |p, penalty, _| want.push((p, penalty)));
                        assert!(classes.iter().all(|c| c.escape && (c.lo, c.hi) == (3, 4)));
                        assert_eq!(class_ports(&classes), want, "{sides:?} r={root}: escape classes at {x} to {t}");
                    }
                }
                assert!(written > 0 && written == closed_t, "{sides:?} r={root}: {written} of {closed_t}");
            }
        }
    }

    /// On a faulty HyperX with a failed switch, the closed-form hops (where the destination keeps
    /// its fault-free Up set) and the Up-set hops give every live port's neighbour the BFS depth
    /// and the table pass's Up/Down distance, for every (x, t) and two roots.
    #[test]
    fn faulty_hyperx_escape_hops_match_table_pass() {
        for (sides, nw) in faulty_hyperx_cases() {
            let h = nw.sparse_distances().unwrap().hyperx().clone();
            let n = nw.num_switches() as SwitchId;
            for root in [0usize, 7] {
                let u = UpDown::new(nw.clone(), root).unwrap();
                let bfs = nw.bfs(root as SwitchId);
                let (mut closed_t, mut open_y, mut open_t) = (0, 0, 0);
                for t in (0..n).filter(|&t| nw.switch_alive(t)) {
                    let row = ud_row(&u, t);
                    for x in (0..n).filter(|&x| x != t && nw.switch_alive(x)) {
                        let mut want = Vec::new();
                        for p in 0..nw.switch_ports(x) as PortId {
                            if let Some((y, _)) = nw.neighbour(x, p) {
                                want.push((p, bfs[y as usize], row[y as usize]));
                            }
                        }
                        let mut slow = Vec::new();
                        u.sparse_hops(&h, x, t, &mut |p, dy, uy| slow.push((p, dy, uy)));
                        assert_eq!(slow, want, "{sides:?} r={root}: Up-set hops at {x} to {t}");
                        if !u.is_closed(t) {
                            let mut open = Vec::new();
                            if u.open_target_hops(&h, x, t, &mut |p, dy, uy| open.push((p, dy, uy))) {
                                open_t += 1;
                                assert_eq!(open, want, "{sides:?} r={root}: open-target hops at {x} to {t}");
                            }
                        }
                        if u.is_closed(t) {
                            closed_t += 1;
                            let mut fast = Vec::new();
                            u.closed_hops(&h, x, t, &mut |p, dy, uy| fast.push((p, dy, uy)));
                            assert_eq!(fast, want, "{sides:?} r={root}: closed-form hops at {x} to {t}");
                            open_y += want.iter().filter(|w| !u.is_closed(nw.neighbour(x, w.0).unwrap().0)).count();
                        }
                        let mut hops = Vec::new();
                        u.hops(x, t, |p, _, _| hops.push(p));
                        let ux = row[x as usize];
                        assert!(hops.iter().all(|&p| want.iter().any(|w| w.0 == p && w.2 < ux)));
                    }
                }
                // Both kinds occur: destinations with the closed form, neighbours without it.
                assert!(closed_t > 0 && open_y > 0, "{sides:?} r={root}: {closed_t} closed, {open_y} open");
                // And destinations without it, from one pass over their Up set.
                assert!(open_t > 0, "{sides:?} r={root}: no open target");
            }
        }
    }

    /// The bytes flagged are exactly those not zero, whatever their value (0x80 and 0x7f
    /// included), in a word with every byte set and in one with none.
    #[test]
    fn nonzero_bytes_flags_each_byte_not_zero() {
        for w in [0u64, 0x0102_0304_0506_0708, 0x8000_007f_0000_ff01, u64::MAX, 1 << 63, 0x0000_0100_0000_0000] {
            let want = (0..8).filter(|&i| w >> (8 * i) & 0xff != 0).fold(0u64, |m, i| m | 1 << (8 * i + 7));
            assert_eq!(nonzero_bytes(w), want, "{w:#x}");
        }
    }

    #[test]
    fn bad_root_is_a_config_error() {
        let e = UpDown::new(net(&[4, 4], 0), 16).err().unwrap().to_string();
        assert!(e.contains("routing.escape_root") && e.contains("16") && e.contains("below 16"), "{e}");
    }

    /// On faulty HyperZ (links, and links with a failed switch), `ud` equals a reference row
    /// computed from the parent relation alone for every pair and several roots, and the shortcut of
    /// [`UpDown::faulty_z_shared`] both applies to most pairs and is declined for some, testing
    /// bits or searching the sorted Up sets alike.
    #[test]
    fn faulty_hyperz_shortcut_matches_the_reference() {
        let hz = HyperZ::new(vec![3, 3], vec![2, 2], vec![1, 2], vec![1, 1], vec![vec![1; 2]; 2]).unwrap();
        let n = hz.num_switches();
        let topo: Arc<dyn crate::topology::Topology> = Arc::new(hz.clone());
        let mut checked = 0;
        for (links, seed) in [(4, 1), (12, 2), (25, 3)] {
            let mut faults = FaultSet::random_links(&*topo, links, seed).unwrap();
            if seed == 3 {
                faults.switches.push(n as SwitchId - 1);
            }
            let net = Arc::new(Fabric::new(topo.clone(), &faults));
            assert!(net.tree_exceptions().is_some(), "a faulty HyperZ keeps exceptions");
            for root in [0, n / 3] {
                let Ok(u) = UpDown::new(net.clone(), root) else { continue };
                let z = u.faulty_z.as_ref().expect("a faulty HyperZ keeps the Z-node table");
                assert!(u.up_words > 0, "the Up sets are kept as bits");
                // The same structure searching the sorted Up sets instead of testing bits.
                let mut searched = UpDown::new(net.clone(), root).unwrap();
                (searched.up_words, searched.up_bits) = (0, Vec::new());
                let (mut shortcut, mut merged) = (0, 0);
                for t in (0..n as SwitchId).filter(|&t| net.switch_alive(t)) {
                    let row = ud_row(&u, t);
                    for x in (0..n as SwitchId).filter(|&x| net.switch_alive(x)) {
                        assert_eq!(u.ud(x, t), row[x as usize], "{links} links, root {root}: ud({x}, {t})");
                        assert_eq!(searched.ud(x, t), row[x as usize], "searching: ud({x}, {t})");
                        let got = u.faulty_z_shared(z, x, t);
                        assert_eq!(got, searched.faulty_z_shared(z, x, t), "bits against searches: ({x}, {t})");
                        match got {
                            Some(_) => shortcut += 1,
                            None => merged += 1,
                        }
                    }
                }
                assert!(
                    shortcut > merged && merged > 0,
                    "{links} links, root {root}: {shortcut} shortcuts, {merged} merges"
                );
                checked += 1;
            }
        }
        assert!(checked >= 4, "only {checked} connected faulty networks and roots");
    }

    /// On fault-free HyperZ (g > 1, h = 3) and a fat tree, with several roots, the closed form
    /// `b = b_T + b_H` gives every pair the Up/Down distance of the former all-pairs pass, and the
    /// escape hops are those of the generic port scan.
    #[test]
    fn hyperz_closed_form_matches_the_reference() {
        for (sides, zones, roots, g) in [
            (&[3usize, 2][..], &[2usize, 2][..], &[1usize, 2][..], &[1usize, 2][..]),
            (&[2], &[2, 3, 2], &[1, 2, 2], &[1, 2, 2]),
            (&[], &[4, 4, 4], &[1, 4, 16], &[1, 1, 1]),
        ] {
            let q = vec![vec![1; sides.len()]; zones.len()];
            let hz = HyperZ::new(sides.to_vec(), zones.to_vec(), roots.to_vec(), g.to_vec(), q).unwrap();
            let n = hz.num_switches();
            let net = Arc::new(Fabric::new(Arc::new(hz.clone()), &FaultSet::default()));
            for root in [0, n / 2, n - 1] {
                let u = UpDown::new(net.clone(), root).unwrap();
                assert!(u.ztree.is_some());
                for t in 0..n as SwitchId {
                    let row = ud_row(&u, t);
                    for x in 0..n as SwitchId {
                        assert_eq!(u.ud(x, t), row[x as usize], "{} root {root}: ud({x}, {t})", hz.name());
                        if x == t {
                            continue;
                        }
                        let (mut fast, mut scan) = (Vec::new(), Vec::new());
                        u.hops(x, t, |p, pen, k| fast.push((p, pen, k)));
                        let (dx, ux) = (u.depth(x), u.ud(x, t));
                        let below = u.depth(t) >= dx && ux == u.depth(t) - dx;
                        for p in 0..net.switch_ports(x) as PortId {
                            let y = net.neighbour(x, p).unwrap().0;
                            let uy = row[y as usize];
                            let kind = u.kind(x, y);
                            let allowed = match kind {
                                LinkKind::Down => below,
                                LinkKind::Up => !below,
                                LinkKind::Horizontal => true,
                            };
                            if uy < ux && allowed {
                                scan.push((p, UpDown::penalty(kind, ux - uy), kind));
                            }
                        }
                        assert_eq!(fast, scan, "{} root {root}: hops at {x} to {t}", hz.name());
                    }
                }
            }
        }
    }
}
