//! HyperZ (Adda, "HyperZ: Hyper Z-Tree Topology", Preprints 2023, section 3): a generalized hypercube
//! (GHC) whose nodes ("Z-nodes") are fat trees of height `h`, with side links at every switch level.
//! Written `H_{d,h}(s_1..s_d; Q_1..Q_d)(Z_h(z_1..z_h; r_1..r_h; g_1..g_h))` (Adda 2023, eq. 1).
//!
//! The paper does not give the wiring inside a Z-node; this module follows the project's reading in
//! `shared/specs/hyperz/SPEC.md` ("SPEC" below), checked against every number the paper states:
//! - A Z-node is the parallel-ports generalized fat tree `PGFT(h; z; w; g)` with `w_i = r_i / r_{i-1}`
//!   parents per node and `g_i` parallel links per child-parent pair (SPEC §2.1). With `sides` empty
//!   (`d = 0`) the whole network is that PGFT (an XGFT when every `g_i = 1`, a k-ary n-tree when also
//!   `z_i = k`, `r_i = k^{i-1}`).
//! - Every level `i = 1..h` is `R_i` parallel GHC planes (Hamming graphs `K_{s_1} x .. x K_{s_d}`): switch
//!   `(a; X)` is joined to `(b; X)` by `q_ik` links when `a` and `b` differ in coordinate `k` only
//!   (Adda 2023, section 3.1, condition 3 corrected as in SPEC §3). Processors have no side links.
//!
//! Servers are single-homed (`r_1 = g_1 = 1`, checked by [`HyperZ::new`]): the router attaches each
//! server to exactly one switch port, and processors then never relay, so switch distances are
//! distances in the switch graph.
//!
//! Numbering (SPEC §2.2, §2.3, §4.1 without the processor offset):
//! - Z-node `Z = sum_k a_k prod_{j<k} s_j` (`a_1` fastest); flat address `X_i` of a level-`i` node in
//!   `[0, R_i)`, `R_i = r_i prod_{j>i} z_j` (Adda 2023, eq. 2).
//! - Switch ids are level-major: level-1 switches first, `id = sum_{j<i} N_j + Z R_i + X_i`.
//! - Server (processor) `P = Z R_0 + X_0` sits on level-1 switch `P / z_1` as its server `P % z_1`:
//!   servers are contiguous, `z_1` per level-1 switch, none above.
//! - Switch-to-switch ports only (the router puts a switch's servers in front): SPEC's port index minus
//!   [`HyperZ::servers_of`]. In SPEC order: down ports (level >= 2: `c g_i + p` to child digit `c`), up
//!   ports (`t g_{i+1} + p` to parent digit `t`), then side ports per dimension, per other coordinate
//!   value in increasing order, per parallel link. The `p`-th parallel link joins port `p` of both ends'
//!   groups. At `h = 1` this is exactly [`super::HyperX`]'s numbering.
//!
//! Distances are closed forms (derived below at [`HyperZ::switch_distance`]) and are checked against BFS
//! in the tests, on instances with `g_i > 1`, non-uniform and zero `q_ik`, and `d = 0`.

use super::registry::TopologySpec;
use super::{PortId, SwitchId, Topology, View};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::sync::Arc;

/// Side-link multiplicities as a configuration writes them (Adda 2023, eq. 1: `q`, `q_k` or `Q_k`).
/// Deserializes untagged from a TOML integer, a list of integers, or a list of lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum SideLinks {
    /// One `q` for every level and dimension.
    Uniform(usize),
    /// One `q_k` per dimension, the same at every level (Adda 2023, section 3: "`Q_k` is replaced by `q_k`").
    PerDim(Vec<usize>),
    /// The full matrix, one list per level: `q[i-1][k-1] = q_ik` (SPEC §1).
    PerLevel(Vec<Vec<usize>>),
}

/// Expand a [`SideLinks`] to the `h x d` matrix `q[i-1][k-1] = q_ik` that [`HyperZ::new`] takes (SPEC §1).
/// The error names `topology.side_links` and the lengths expected.
pub fn expand_side_links(q: &SideLinks, h: usize, d: usize) -> Result<Vec<Vec<usize>>, String> {
    match q {
        SideLinks::Uniform(v) => Ok(vec![vec![*v; d]; h]),
        SideLinks::PerDim(v) if v.len() == d => Ok(vec![v.clone(); h]),
        SideLinks::PerDim(v) => Err(format!(
            "topology.side_links: {} values given, but there are d = {d} dimensions (give one number, one per \
             dimension, or one list of {d} per level)",
            v.len()
        )),
        SideLinks::PerLevel(m) => {
            if m.len() != h {
                return Err(format!(
                    "topology.side_links: {} lists given, but there are h = {h} levels (one list per level)",
                    m.len()
                ));
            }
            if let Some((i, row)) = m.iter().enumerate().find(|(_, row)| row.len() != d) {
                return Err(format!(
                    "topology.side_links: level {} has {} values, but there are d = {d} dimensions",
                    i + 1,
                    row.len()
                ));
            }
            Ok(m.clone())
        }
    }
}

/// What a switch-to-switch port leads to (SPEC §2.3 order: down, up, side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PortKind {
    /// To a parent, one level up in the same Z-node.
    Up,
    /// To a child, one level down in the same Z-node (level >= 2 only: level 1's children are servers).
    Down,
    /// To the same level and flat address in the Z-node that differs in dimension `dim` (0-based, SPEC `k = dim + 1`).
    Side {
        /// 0-based dimension.
        dim: usize,
    },
}

/// Where a switch is: level, Z-node, flat address, and the first local processor under its zone.
#[derive(Debug, Clone, Copy)]
struct Loc {
    znode: u32,
    flat: u32,
    /// `floor(X_i / r_i) * prod_{t<=i} z_t`: its height-`i` zone holds local processors
    /// `[zone_lo, zone_lo + prod_{t<=i} z_t)` (SPEC §2.3 ancestor test).
    zone_lo: u32,
    level: u8,
}

/// A HyperZ network `H_{d,h}(s; Q)(Z_h(z; r; g))` with single-homed servers (Adda 2023, section 3;
/// SPEC §1-§4). Also a PGFT/XGFT fat tree when `d = 0` (SPEC §2.1).
#[derive(Debug, Clone)]
pub struct HyperZ {
    sides: Vec<usize>,
    zones: Vec<usize>,
    roots: Vec<usize>,
    internal: Vec<usize>,
    side_links: Vec<Vec<usize>>,
    /// `r[i] = r_i`, `r[0] = 1` (SPEC §1).
    r: Vec<usize>,
    /// `big_r[i] = R_i`, `i = 0..=h` (Adda 2023, eq. 2).
    big_r: Vec<usize>,
    /// `zprod[i] = prod_{t<=i} z_t`, `zprod[0] = 1`, `zprod[h] = R_0`.
    zprod: Vec<usize>,
    /// `first[i]` = first switch id of level `i`, `i = 1..=h+1` (`first[h+1]` = number of switches).
    first: Vec<u32>,
    /// Switch-to-switch down ports at level `i`: `z_i g_i` for `i >= 2`, 0 at level 1.
    down_n: Vec<u16>,
    /// Up ports at level `i`: `w_{i+1} g_{i+1}` below the top, 0 at level `h`.
    up_n: Vec<u16>,
    /// `side_base[i][k]`: first side port of dimension `k` at level `i`; `side_base[i][d]` = switch ports.
    side_base: Vec<Vec<u16>>,
    /// Per dimension, bit `i` set iff `q_ik >= 1`.
    level_mask: Vec<u64>,
    /// Every dimension with `s_k >= 2` has side links at every level.
    full_side: bool,
    /// `stride[k] = prod_{j<k} s_j`.
    stride: Vec<usize>,
    /// Z-node coordinates, `coord_tab[Z * d + k]` (read per hop by routing).
    coord_tab: Vec<u16>,
    /// Per switch: level, Z-node, flat address (divisions were HyperX's top cost; read them).
    loc: Vec<Loc>,
    nz: usize,
    servers: usize,
    /// The far end of every switch-to-switch port, switch by switch (`port_base[level] + (sw -
    /// first[level]) * ports + p`): the routings under faults and SurePath's escape ask for
    /// neighbours per port and per search step, where [`HyperZ::wired_neighbour`]'s arithmetic
    /// (divisions by the level's parameters) cost about 130 instructions a call. Shared by clones.
    far: std::sync::Arc<Vec<(SwitchId, PortId)>>,
    /// `port_base[level]`: index in `far` of the level's first switch's first port.
    port_base: Vec<usize>,
}

fn checked_prod(it: impl IntoIterator<Item = usize>) -> Option<usize> {
    it.into_iter().try_fold(1usize, |acc, x| acc.checked_mul(x))
}

impl HyperZ {
    /// Build `H_{d,h}(sides; side_links)(Z_h(zones; roots; internal_links))` (Adda 2023, eq. 1; SPEC §1).
    /// `side_links[i-1][k-1] = q_ik` (see [`expand_side_links`]); `d = sides.len()` may be 0 (a PGFT).
    ///
    /// Errors name the parameter (`topology.zones`, ...) and say what is allowed: `h >= 1`; equal lengths;
    /// `s_k, z_i, r_i, g_i >= 1`; `r_{i-1} | r_i` (SPEC §2.3); `r_1 = g_1 = 1` (single-homed servers); every
    /// dimension with `s_k >= 2` has side links at some level (SPEC §7.7, else the network is disconnected);
    /// ids, ports and coordinates fit `u32`, `u16` and `u16`.
    pub fn new(
        sides: Vec<usize>,
        zones: Vec<usize>,
        roots: Vec<usize>,
        internal_links: Vec<usize>,
        side_links: Vec<Vec<usize>>,
    ) -> Result<Self, String> {
        let h = zones.len();
        let d = sides.len();
        if h == 0 {
            return Err("topology.zones: empty, but a Z-node has at least one switch level (h >= 1)".into());
        }
        if h > 62 {
            return Err(format!("topology.zones: h = {h} levels, at most 62 are supported"));
        }
        if roots.len() != h {
            return Err(format!("topology.roots: {} values, but topology.zones gives h = {h} levels", roots.len()));
        }
        if internal_links.len() != h {
            return Err(format!(
                "topology.internal_links: {} values, but topology.zones gives h = {h} levels",
                internal_links.len()
            ));
        }
        let side_links = expand_side_links(&SideLinks::PerLevel(side_links), h, d)?;
        for (name, v, sym) in [
            ("topology.zones", &zones, "z"),
            ("topology.roots", &roots, "r"),
            ("topology.internal_links", &internal_links, "g"),
        ] {
            if let Some(i) = v.iter().position(|&x| x == 0) {
                return Err(format!("{name}: {sym}_{} = 0, every level needs {sym}_i >= 1", i + 1));
            }
        }
        if let Some(k) = sides.iter().position(|&s| s == 0 || s > 1 << 16) {
            return Err(format!("topology.sides: s_{} = {}, allowed 1..=65536", k + 1, sides[k]));
        }
        if roots[0] != 1 {
            return Err(format!(
                "topology.roots: r_1 = {}, but servers must be single-homed: a processor has r_1*g_1 ports and the \
                 router attaches each server to exactly one switch port, so r_1 must be 1",
                roots[0]
            ));
        }
        if internal_links[0] != 1 {
            return Err(format!(
                "topology.internal_links: g_1 = {}, but servers must be single-homed: a processor has r_1*g_1 ports \
                 and the router attaches each server to exactly one switch port, so g_1 must be 1",
                internal_links[0]
            ));
        }
        for i in 1..h {
            if !roots[i].is_multiple_of(roots[i - 1]) {
                return Err(format!(
                    "topology.roots: r_{} = {} does not divide r_{} = {} (each level's root count must be a multiple \
                     of the one below)",
                    i,
                    roots[i - 1],
                    i + 1,
                    roots[i]
                ));
            }
        }
        for k in 0..d {
            if sides[k] >= 2 && side_links.iter().all(|row| row[k] == 0) {
                return Err(format!(
                    "topology.side_links: q_ik = 0 at every level for dimension {} (s_{} = {}), so the Z-nodes are \
                     disconnected; give some level at least one side link in it",
                    k + 1,
                    k + 1,
                    sides[k]
                ));
            }
        }

        let too_big = |what: &str| format!("topology: the network is too large ({what} overflows)");
        let mut r = vec![1usize];
        r.extend_from_slice(&roots);
        let nz = checked_prod(sides.iter().copied()).ok_or_else(|| too_big("number of Z-nodes"))?;
        let mut big_r = Vec::with_capacity(h + 1);
        for (i, &ri) in r.iter().enumerate() {
            let above = checked_prod(zones[i..].iter().copied()).and_then(|p| p.checked_mul(ri));
            big_r.push(above.ok_or_else(|| too_big("R_i"))?);
        }
        let mut zprod = vec![1usize];
        for &z in &zones {
            zprod.push(zprod.last().unwrap() * z); // <= R_0, which did not overflow
        }
        let servers =
            big_r[0].checked_mul(nz).filter(|&n| n <= u32::MAX as usize).ok_or_else(|| too_big("server ids"))?;
        let mut first = vec![0u32, 0u32];
        let mut acc = 0usize;
        for &ri in &big_r[1..] {
            acc = ri
                .checked_mul(nz)
                .and_then(|n| acc.checked_add(n))
                .filter(|&n| n <= u32::MAX as usize)
                .ok_or_else(|| too_big("switch ids"))?;
            first.push(acc as u32);
        }

        // Ports per level (SPEC §2.3), in u64 so that the u16 check cannot overflow first.
        let (mut down_n, mut up_n, mut side_base) = (vec![0u16], vec![0u16], vec![Vec::new()]);
        for i in 1..=h {
            let down = if i >= 2 { zones[i - 1] as u64 * internal_links[i - 1] as u64 } else { 0 };
            let up = if i < h { (r[i + 1] / r[i]) as u64 * internal_links[i] as u64 } else { 0 };
            let mut base = Vec::with_capacity(d + 1);
            let mut p = down + up;
            for k in 0..d {
                base.push(p);
                p += side_links[i - 1][k] as u64 * (sides[k] as u64 - 1);
            }
            base.push(p);
            if p > u16::MAX as u64 {
                return Err(format!("topology: level-{i} switches need {p} switch ports, at most 65535 are supported"));
            }
            down_n.push(down as u16);
            up_n.push(up as u16);
            side_base.push(base.into_iter().map(|b| b as u16).collect());
        }

        let level_mask: Vec<u64> =
            (0..d).map(|k| (1..=h).filter(|&i| side_links[i - 1][k] >= 1).fold(0u64, |m, i| m | 1 << i)).collect();
        let all_levels = ((1u64 << (h + 1)) - 1) & !1;
        let full_side = (0..d).all(|k| sides[k] < 2 || level_mask[k] == all_levels);

        let mut stride = Vec::with_capacity(d);
        let mut s_acc = 1usize;
        for &s in &sides {
            stride.push(s_acc);
            s_acc *= s;
        }
        let mut coord_tab = Vec::with_capacity(nz * d);
        for zi in 0..nz {
            for k in 0..d {
                coord_tab.push(((zi / stride[k]) % sides[k]) as u16);
            }
        }
        let mut loc = Vec::with_capacity(acc);
        for i in 1..=h {
            for zi in 0..nz {
                for x in 0..big_r[i] {
                    let zone_lo = (x / r[i] * zprod[i]) as u32;
                    loc.push(Loc { znode: zi as u32, flat: x as u32, zone_lo, level: i as u8 });
                }
            }
        }

        let hz = HyperZ {
            sides,
            zones,
            roots,
            internal: internal_links,
            side_links,
            r,
            big_r,
            zprod,
            first,
            down_n,
            up_n,
            side_base,
            level_mask,
            full_side,
            stride,
            coord_tab,
            loc,
            nz,
            servers,
            far: Default::default(),
            port_base: Vec::new(),
        };
        let hz = hz.with_port_table();
        debug_assert!(hz.closed_form_matches_bfs(), "HyperZ closed-form distance disagrees with BFS: {}", hz.name());
        Ok(hz)
    }

    /// Fills [`HyperZ::far`] from [`HyperZ::wired_neighbour`], switch by switch in parallel.
    fn with_port_table(mut self) -> Self {
        use rayon::prelude::*;
        let h = self.height();
        let mut port_base = vec![0usize; h + 2];
        for i in 1..=h {
            port_base[i + 1] = port_base[i] + (self.first[i + 1] - self.first[i]) as usize * self.level_ports(i);
        }
        let mut far = vec![(0, 0); port_base[h + 1]];
        for i in 1..=h {
            let ports = self.level_ports(i);
            if ports == 0 {
                continue;
            }
            far[port_base[i]..port_base[i + 1]].par_chunks_mut(ports).enumerate().for_each(|(k, row)| {
                let sw = self.first[i] + k as SwitchId;
                for (p, slot) in row.iter_mut().enumerate() {
                    *slot = self.wired_neighbour(sw, p as PortId).expect("HyperZ ports are wired");
                }
            });
        }
        self.far = std::sync::Arc::new(far);
        self.port_base = port_base;
        self
    }

    /// Debug builds check [`Self::switch_distance`] against BFS from every switch of Z-node 0 (Z-node
    /// translations carry these to every switch) on networks of up to 4096 switches.
    fn closed_form_matches_bfs(&self) -> bool {
        if self.num_switches() > 4096 {
            return true;
        }
        let mut dist = vec![u32::MAX; self.num_switches()];
        let mut queue = std::collections::VecDeque::new();
        for i in 1..=self.height() {
            for x in 0..self.big_r[i] {
                let src = self.switch_at(i, 0, x);
                dist.fill(u32::MAX);
                dist[src as usize] = 0;
                queue.push_back(src);
                while let Some(u) = queue.pop_front() {
                    for p in 0..self.switch_ports(u) as PortId {
                        let Some((v, _)) = self.neighbour(u, p) else { return false };
                        if dist[v as usize] == u32::MAX {
                            dist[v as usize] = dist[u as usize] + 1;
                            queue.push_back(v);
                        }
                    }
                }
                if (0..self.num_switches()).any(|b| dist[b] != self.switch_distance(src, b as SwitchId)) {
                    return false;
                }
            }
        }
        true
    }

    // ----- parameters and counts (SPEC §1) -----

    /// Height `h` (number of switch levels; Adda 2023, section 3).
    pub fn height(&self) -> usize {
        self.zones.len()
    }
    /// Number of GHC dimensions `d` (Adda 2023, section 3).
    pub fn dims(&self) -> usize {
        self.sides.len()
    }
    /// `s_1..s_d` (Adda 2023, eq. 1).
    pub fn sides(&self) -> &[usize] {
        &self.sides
    }
    /// `z_1..z_h` (Adda 2023, eq. 1; SPEC §1).
    pub fn zones(&self) -> &[usize] {
        &self.zones
    }
    /// `r_1..r_h` (Adda 2023, eq. 1; SPEC §1).
    pub fn roots(&self) -> &[usize] {
        &self.roots
    }
    /// `g_1..g_h` (Adda 2023, eq. 1; SPEC §1).
    pub fn internal_links(&self) -> &[usize] {
        &self.internal
    }
    /// `q[i-1][k-1] = q_ik` (Adda 2023, section 3; SPEC §1).
    pub fn side_links(&self) -> &[Vec<usize>] {
        &self.side_links
    }
    /// Number of Z-nodes `N_Z = prod_k s_k` (SPEC §1).
    pub fn num_znodes(&self) -> usize {
        self.nz
    }
    /// `R_i`, nodes of level `i` in one Z-node, `i = 0..=h` (Adda 2023, eq. 2; level 0 = processors).
    pub fn nodes_per_znode(&self, level: usize) -> usize {
        self.big_r[level]
    }
    /// `N_1..N_h`, switches per level in the whole network (Adda 2023, eq. 2).
    pub fn switches_per_level(&self) -> Vec<usize> {
        self.big_r[1..].iter().map(|&r| r * self.nz).collect()
    }
    /// Number of switches, `sum_i N_i` (Adda 2023, eq. 2).
    pub fn num_switches(&self) -> usize {
        self.loc.len()
    }
    /// Number of servers (processors) `N_0` (Adda 2023, eq. 2).
    pub fn num_servers(&self) -> usize {
        self.servers
    }
    /// Ports of a level-`level` switch, servers included: `z_i g_i + [i<h] w_{i+1} g_{i+1} + sum_k q_ik (s_k-1)`
    /// (SPEC §1). Level 0 gives a processor's `r_1 g_1 = 1`.
    pub fn radix(&self, level: usize) -> usize {
        if level == 0 {
            return 1;
        }
        self.level_ports(level) + if level == 1 { self.zones[0] } else { 0 }
    }
    /// [`Self::radix`] of levels `1..=h` (SPEC §1, §4.3 "radix per level").
    pub fn radix_per_level(&self) -> Vec<usize> {
        (1..=self.height()).map(|i| self.radix(i)).collect()
    }
    /// Internal links of the whole network, processor links included: `N_Z sum_i R_i z_i g_i` (SPEC §1, §7.5).
    pub fn internal_link_count(&self) -> usize {
        (1..=self.height()).map(|i| self.nz * self.big_r[i] * self.zones[i - 1] * self.internal[i - 1]).sum()
    }
    /// Side links of the whole network: `sum_{i,k} N_Z R_i q_ik (s_k - 1) / 2` (SPEC §1, §7.5).
    pub fn side_link_count(&self) -> usize {
        let mut n = 0;
        for i in 1..=self.height() {
            for (k, &s) in self.sides.iter().enumerate() {
                n += self.nz * self.big_r[i] * self.side_links[i - 1][k] * (s - 1) / 2;
            }
        }
        n
    }
    /// All links: [`Self::internal_link_count`] + [`Self::side_link_count`] (SPEC §4.3 "total").
    pub fn link_count(&self) -> usize {
        self.internal_link_count() + self.side_link_count()
    }
    /// Short name in the paper's notation (Adda 2023, eq. 1), e.g. `HyperZ H_{2,2}(4,4; q=1)(Z_2(8,8;1,8;1,1))`;
    /// `PGFT(h; z..; w..; g..)` (Zahavi's notation, SPEC §2.1) when `d = 0`.
    pub fn name(&self) -> String {
        let list = |v: &[usize]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",");
        let h = self.height();
        if self.sides.is_empty() {
            let w: Vec<usize> = (1..=h).map(|i| self.r[i] / self.r[i - 1]).collect();
            return format!("PGFT({h}; {}; {}; {})", list(&self.zones), list(&w), list(&self.internal));
        }
        let d = self.dims();
        let per_dim: Vec<usize> = self.side_links[0].clone();
        let q = if self.side_links.iter().all(|row| *row == per_dim) {
            if per_dim.iter().all(|&x| x == per_dim[0]) {
                format!("q={}", per_dim[0])
            } else {
                format!("q={}", list(&per_dim))
            }
        } else {
            let qk: Vec<String> = (0..d)
                .map(|k| format!("({})", list(&self.side_links.iter().map(|row| row[k]).collect::<Vec<_>>())))
                .collect();
            format!("Q={}", qk.join(","))
        };
        format!(
            "HyperZ H_{{{d},{h}}}({}; {q})(Z_{h}({};{};{}))",
            list(&self.sides),
            list(&self.zones),
            list(&self.roots),
            list(&self.internal)
        )
    }

    // ----- addressing (SPEC §2.2, §4.1) -----

    /// Level `1..=h` of a switch (SPEC §4.1: ids are level-major).
    #[inline]
    pub fn level(&self, sw: SwitchId) -> usize {
        self.loc[sw as usize].level as usize
    }
    /// Z-node index `Z = sum_k a_k prod_{j<k} s_j` of a switch (SPEC §4.1).
    #[inline]
    pub fn znode(&self, sw: SwitchId) -> u32 {
        self.loc[sw as usize].znode
    }
    /// Flat address `X_i` of a switch inside its Z-node (Adda 2023, section 3.1; SPEC §2.2).
    #[inline]
    pub fn flat(&self, sw: SwitchId) -> usize {
        self.loc[sw as usize].flat as usize
    }
    /// Coordinate `a_{k+1}` of Z-node `znode` (0-based `k`; SPEC §4.1).
    #[inline]
    pub fn coord(&self, znode: u32, k: usize) -> usize {
        self.coord_tab[znode as usize * self.sides.len() + k] as usize
    }
    /// The Z-node that equals `znode` except for coordinate `k` (0-based), which is `b`.
    #[inline]
    pub fn with_coord(&self, znode: u32, k: usize, b: usize) -> u32 {
        let a = self.coord(znode, k);
        (znode as usize + b * self.stride[k] - a * self.stride[k]) as u32
    }
    /// Switch id of `(level; Z; X)`: `sum_{j<i} N_j + Z R_i + X_i` (SPEC §4.1 without the processor offset).
    #[inline]
    pub fn switch_at(&self, level: usize, znode: u32, flat: usize) -> SwitchId {
        self.first[level] + (znode as usize * self.big_r[level] + flat) as u32
    }
    /// Index of `sw`'s height-`level` zone inside its Z-node (`level` at least `sw`'s level): the zone
    /// holds local processors `[index Pi, (index + 1) Pi)`, `Pi = prod_{t<=level} z_t` (SPEC §2.3). A
    /// child's zone index at its own level is its parent's times `z_i` plus its child digit.
    #[inline]
    pub fn zone_index(&self, sw: SwitchId, level: usize) -> usize {
        self.loc[sw as usize].zone_lo as usize / self.zprod[level]
    }
    /// `r_i` (`r_0 = 1`): a level-`i` switch's flat address modulo `r_i` is its root digits, shared
    /// by every switch it reaches going down (SPEC §2.2).
    #[inline]
    pub fn r(&self, i: usize) -> usize {
        self.r[i]
    }
    /// `|O|`, the number of offset dimensions between two Z-nodes (Adda 2023, Def. 4.2; SPEC §5.1).
    #[inline]
    pub fn offset_count(&self, za: u32, zb: u32) -> u32 {
        let d = self.sides.len();
        let (ca, cb) = (&self.coord_tab[za as usize * d..][..d], &self.coord_tab[zb as usize * d..][..d]);
        ca.iter().zip(cb).filter(|(x, y)| x != y).count() as u32
    }
    /// `min O` (0-based), the dimension ODim corrects first (SPEC §5.1), or `None` if the Z-nodes are equal.
    #[inline]
    pub fn first_offset_dim(&self, za: u32, zb: u32) -> Option<usize> {
        let d = self.sides.len();
        let (ca, cb) = (&self.coord_tab[za as usize * d..][..d], &self.coord_tab[zb as usize * d..][..d]);
        ca.iter().zip(cb).position(|(x, y)| x != y)
    }

    // ----- servers (SPEC §4.1 with r_1 = g_1 = 1) -----

    /// Servers attached to a switch: `z_1` on level 1, none above (SPEC §2.3 with `r_1 = g_1 = 1`).
    #[inline]
    pub fn servers_of(&self, sw: SwitchId) -> usize {
        if self.loc[sw as usize].level == 1 {
            self.zones[0]
        } else {
            0
        }
    }
    /// First server of a switch: `sw z_1` on level 1. It is the number of servers on switches before `sw`
    /// (so `N_0` above level 1), hence `first_server(sw)..first_server(sw) + servers_of(sw)` always.
    #[inline]
    pub fn first_server(&self, sw: SwitchId) -> u32 {
        (sw.min(self.first[2]) as usize * self.zones[0]) as u32
    }
    /// The level-1 switch of server `P`: `P / z_1` (SPEC §2.3: processor `X_0` has the one parent `X_0 / z_1`).
    #[inline]
    pub fn server_switch(&self, server: u32) -> SwitchId {
        server / self.zones[0] as u32
    }
    /// Z-node of server `P = Z R_0 + X_0` (SPEC §4.1).
    #[inline]
    pub fn server_znode(&self, server: u32) -> u32 {
        (server as usize / self.big_r[0]) as u32
    }
    /// Local address `X_0` of server `P = Z R_0 + X_0` (SPEC §4.1).
    #[inline]
    pub fn server_local(&self, server: u32) -> usize {
        server as usize % self.big_r[0]
    }
    /// Least common level of two servers: `max{j : x_j(X_0^src) != x_j(X_0^dst)}`, 0 if the local addresses
    /// are equal (SPEC §5.1). Depends only on local addresses.
    #[inline]
    pub fn lcl(&self, src: u32, dst: u32) -> usize {
        let (a, b) = (self.server_local(src), self.server_local(dst));
        (0..=self.height()).find(|&m| a / self.zprod[m] == b / self.zprod[m]).unwrap_or(self.height())
    }
    /// The on-line "LCL reached" test at switch `(i, X)` (SPEC §5.1): its height-`i` zone holds the local
    /// address of `dst`, i.e. `floor(X/r_i) == floor(X_0^dst / prod_{t<=i} z_t)`. Ignores Z-nodes: it is true
    /// at the aligned switch of every Z-node, as routing needs before the side hops.
    #[inline]
    pub fn ancestor_contains(&self, sw: SwitchId, dst: u32) -> bool {
        let l = self.loc[sw as usize];
        let x0 = self.server_local(dst);
        let lo = l.zone_lo as usize;
        x0 >= lo && x0 < lo + self.zprod[l.level as usize]
    }
    /// `sw` is an ancestor of server `dst`: same Z-node and [`Self::ancestor_contains`] (SPEC §2.3).
    #[inline]
    pub fn is_ancestor(&self, sw: SwitchId, dst: u32) -> bool {
        self.loc[sw as usize].znode == self.server_znode(dst) && self.ancestor_contains(sw, dst)
    }

    // ----- ports (SPEC §2.3, §3) -----

    fn level_ports(&self, level: usize) -> usize {
        self.side_base[level][self.sides.len()] as usize
    }
    /// Switch-to-switch ports of a switch: its radix minus its servers (SPEC §1, §2.3).
    #[inline]
    pub fn switch_ports(&self, sw: SwitchId) -> usize {
        self.level_ports(self.level(sw))
    }
    /// The largest [`Self::switch_ports`] over all switches.
    pub fn max_switch_ports(&self) -> usize {
        (1..=self.height()).map(|i| self.level_ports(i)).max().unwrap_or(0)
    }
    /// What port `p` of `sw` leads to, or `None` if `p >= switch_ports(sw)` (SPEC §2.3 order: down, up, side).
    #[inline]
    pub fn port_kind(&self, sw: SwitchId, p: PortId) -> Option<PortKind> {
        let i = self.level(sw);
        let (dn, up) = (self.down_n[i], self.up_n[i]);
        let base = &self.side_base[i];
        if p < dn {
            Some(PortKind::Down)
        } else if p < dn + up {
            Some(PortKind::Up)
        } else if p < base[self.sides.len()] {
            Some(PortKind::Side { dim: base.partition_point(|&b| b <= p) - 1 })
        } else {
            None
        }
    }
    /// The `w_{i+1} g_{i+1}` up ports of `sw` (empty at the top level; SPEC §2.3). Every parent lies on a
    /// minimal path while the LCL is not reached (SPEC §5.1).
    #[inline]
    pub fn up_ports(&self, sw: SwitchId) -> Range<PortId> {
        let i = self.level(sw);
        self.down_n[i]..self.down_n[i] + self.up_n[i]
    }
    /// The `g_i` parallel down ports of `sw` to its child whose zone holds server `dst`'s local address
    /// (child digit `x_i(X_0^dst)`, SPEC §2.3, §5.1 "Down"), or `None` at level 1 (down is ejection there)
    /// or when `sw`'s zone does not hold `dst` ([`Self::ancestor_contains`] is false). Ignores Z-nodes.
    #[inline]
    pub fn down_port_to(&self, sw: SwitchId, dst: u32) -> Option<Range<PortId>> {
        let l = self.loc[sw as usize];
        let i = l.level as usize;
        if i == 1 || !self.ancestor_contains(sw, dst) {
            return None;
        }
        let c = (self.server_local(dst) - l.zone_lo as usize) / self.zprod[i - 1];
        let g = self.internal[i - 1];
        Some((c * g) as PortId..((c + 1) * g) as PortId)
    }
    /// Port of `sw` to the switch with the same level and flat address in the Z-node whose coordinate `k`
    /// (0-based) is `b`, parallel link `p` (SPEC §2.3 side port rule). Requires `b != a_k` and `p < q_ik`.
    #[inline]
    pub fn side_port_to(&self, sw: SwitchId, k: usize, b: usize, p: usize) -> PortId {
        let l = self.loc[sw as usize];
        let i = l.level as usize;
        let a = self.coord(l.znode, k);
        debug_assert!(b != a && b < self.sides[k] && p < self.side_links[i - 1][k]);
        let rank = if b < a { b } else { b - 1 };
        (self.side_base[i][k] as usize + rank * self.side_links[i - 1][k] + p) as PortId
    }
    /// The `q_ik` parallel ports of `sw` towards coordinate value `b` in dimension `k` (0-based); empty when
    /// `q_ik = 0` or `b` is `sw`'s own coordinate (SPEC §2.3, §3).
    #[inline]
    pub fn side_ports(&self, sw: SwitchId, k: usize, b: usize) -> Range<PortId> {
        let l = self.loc[sw as usize];
        let i = l.level as usize;
        let a = self.coord(l.znode, k);
        let q = self.side_links[i - 1][k];
        if b == a || q == 0 {
            let s = self.side_base[i][k];
            return s..s;
        }
        let first = self.side_base[i][k] as usize + (if b < a { b } else { b - 1 }) * q;
        first as PortId..(first + q) as PortId
    }
    /// Calls `f` with every port of `at` on a shortest path to the level-1 switch `to`, in increasing
    /// port order, and returns true; returns false (calling nothing) where this closed form does not
    /// apply: `to` above level 1, or a level without side links in some dimension. The minimal next
    /// hops follow from [`Self::switch_distance`] with `lo = 1` (`r_1 = 1`): if `at`'s zone does not
    /// hold `to`, every parent is one hop closer (the zone to reach stays the same), else the one child
    /// whose zone holds `to` (all `g_i` links); and every side hop in an offset dimension (`|O|` falls by
    /// one, the tree part is unchanged). This is the inner loop of minimal routing on a HyperZ.
    #[inline]
    pub fn for_each_minimal_port(&self, at: SwitchId, to: SwitchId, mut f: impl FnMut(PortId)) -> bool {
        let lt = self.loc[to as usize];
        if lt.level != 1 || !self.full_side {
            return false;
        }
        let la = self.loc[at as usize];
        let dst = self.first_server(to);
        if self.ancestor_contains(at, dst) {
            if let Some(r) = self.down_port_to(at, dst) {
                r.for_each(&mut f);
            }
        } else {
            self.up_ports(at).for_each(&mut f);
        }
        let d = self.sides.len();
        let (ca, cb) = (&self.coord_tab[la.znode as usize * d..][..d], &self.coord_tab[lt.znode as usize * d..][..d]);
        for (k, (&x, &y)) in ca.iter().zip(cb).enumerate() {
            if x != y {
                self.side_ports(at, k, y as usize).for_each(&mut f);
            }
        }
        true
    }

    /// All side ports of `sw` in dimension `k` (0-based): `q_ik (s_k - 1)` of them (SPEC §2.3).
    #[inline]
    pub fn side_dim_ports(&self, sw: SwitchId, k: usize) -> Range<PortId> {
        let base = &self.side_base[self.level(sw)];
        base[k]..base[k + 1]
    }

    /// The far end `(switch, port)` of switch-to-switch port `p` of `sw`, or `None` if there is no such
    /// port (every port of a HyperZ is wired). Follows SPEC §2.3 (internal) and §3 (side).
    #[inline]
    pub fn neighbour(&self, sw: SwitchId, p: PortId) -> Option<(SwitchId, PortId)> {
        let l = self.loc.get(sw as usize)?;
        let i = l.level as usize;
        let ports = self.side_base[i][self.sides.len()] as usize;
        if p as usize >= ports {
            return None;
        }
        let at = self.port_base[i] + (sw - self.first[i]) as usize * ports + p as usize;
        Some(self.far[at])
    }

    /// [`HyperZ::neighbour`] from the wiring rules (what fills its table).
    fn wired_neighbour(&self, sw: SwitchId, p: PortId) -> Option<(SwitchId, PortId)> {
        let l = *self.loc.get(sw as usize)?;
        let i = l.level as usize;
        let x = l.flat as usize;
        let p = p as usize;
        let (dn, up) = (self.down_n[i] as usize, self.up_n[i] as usize);
        if p < dn {
            // Down to child C_c = (floor(X/r_i) z_i + c) r_{i-1} + (X mod r_i) mod r_{i-1}, which sees us
            // as parent digit t = (X mod r_i) / r_{i-1}.
            let g = self.internal[i - 1];
            let (c, k) = (p / g, p % g);
            let (ri, rp) = (self.r[i], self.r[i - 1]);
            let child = (x / ri * self.zones[i - 1] + c) * rp + (x % ri) % rp;
            let t = (x % ri) / rp;
            let back = self.down_n[i - 1] as usize + t * g + k;
            Some((self.switch_at(i - 1, l.znode, child), back as PortId))
        } else if p < dn + up {
            // Up to parent P_t = floor(X/(r_i z_{i+1})) r_{i+1} + t r_i + X mod r_i, which sees us as child
            // digit c = floor(X/r_i) mod z_{i+1}.
            let g = self.internal[i];
            let (t, k) = ((p - dn) / g, (p - dn) % g);
            let (ri, rn, zn) = (self.r[i], self.r[i + 1], self.zones[i]);
            let parent = x / (ri * zn) * rn + t * ri + x % ri;
            let c = (x / ri) % zn;
            Some((self.switch_at(i + 1, l.znode, parent), (c * g + k) as PortId))
        } else {
            let base = &self.side_base[i];
            if p >= base[self.sides.len()] as usize {
                return None;
            }
            let k = base.partition_point(|&b| b as usize <= p) - 1;
            let q = self.side_links[i - 1][k];
            let off = p - base[k] as usize;
            let (rank, t) = (off / q, off % q);
            let a = self.coord(l.znode, k);
            let b = if rank < a { rank } else { rank + 1 };
            let other = self.with_coord(l.znode, k, b);
            let back_rank = if a < b { a } else { a - 1 };
            Some((self.switch_at(i, other, x), (base[k] as usize + back_rank * q + t) as PortId))
        }
    }

    // ----- distances (SPEC §5.1, §7.8) -----

    /// Every dimension with `s_k >= 2` has side links (`q_ik >= 1`) at every level. Then the switch graph is
    /// the Cartesian product of the Z-node's switch tree and the Hamming graph, SPEC §5.1's minimal length
    /// `2 max(LCL,1) + |O|` holds and side hops may be taken at any level; otherwise [`Self::switch_distance`]
    /// accounts for the detour to a level that has them (still a closed form).
    pub fn side_links_at_every_level(&self) -> bool {
        self.full_side
    }

    /// Exact hop distance between two switches, without tables beyond the per-switch location.
    ///
    /// Derivation. Label a level-`i` node by XGFT digits: `x_p` (zone digits) at positions `p > i` and
    /// `y_p` (root digits) at `p <= i` (SPEC §2.2). A tree hop between levels `p-1` and `p` changes digit
    /// `p` only, and a side hop changes the Z-node only. Let `i <= j` be the two levels. The walk must
    /// reach `hi` = the lowest level `>= j` whose zone holds both (the `x` digits above it agree), and go
    /// down to `lo` = the highest level `<= i` below which the `y` digits agree (`X_a mod r_lo ==
    /// X_b mod r_lo`; `r_1 = 1` so `lo >= 1` and processors are never needed). A walk from level `i` to
    /// `j` covering `[lo, hi]` takes at least `(i-lo) + (hi-lo) + (hi-j) = 2(hi-lo) - (j-i)` tree hops, and
    /// down-up-down achieves it while setting every digit in between. Each offset dimension needs one
    /// side hop at a level the walk visits; so the distance is `|O|` plus the least `2(hi'-lo') - (j-i)`
    /// over `lo' <= lo`, `hi' >= hi` such that every offset dimension has `q_ik >= 1` at some level of
    /// `[lo', hi']`: just `2(hi-lo) - (j-i) + |O|` when [`Self::side_links_at_every_level`].
    pub fn switch_distance(&self, a: SwitchId, b: SwitchId) -> u32 {
        let (la, lb) = (self.loc[a as usize], self.loc[b as usize]);
        let (u, v) = if la.level <= lb.level { (la, lb) } else { (lb, la) };
        let (i, j) = (u.level as usize, v.level as usize);
        let mut hi = j;
        while u.zone_lo as usize / self.zprod[hi] != v.zone_lo as usize / self.zprod[hi] {
            hi += 1;
        }
        let mut lo = i;
        while u.flat as usize % self.r[lo] != v.flat as usize % self.r[lo] {
            lo -= 1;
        }
        let o = self.offset_count(u.znode, v.znode);
        if self.full_side || o == 0 {
            return (2 * (hi - lo) - (j - i)) as u32 + o;
        }
        self.detour(u.znode, v.znode, i, j, lo, hi) + o
    }

    /// Least tree hops `2(hi'-lo') - (j-i)` over intervals `[lo', hi'] ⊇ [lo, hi]` on which every offset
    /// dimension between `za` and `zb` has side links (see [`Self::switch_distance`]).
    fn detour(&self, za: u32, zb: u32, i: usize, j: usize, lo: usize, hi: usize) -> u32 {
        let d = self.sides.len();
        let (ca, cb) = (&self.coord_tab[za as usize * d..][..d], &self.coord_tab[zb as usize * d..][..d]);
        let mut best = usize::MAX;
        for lo2 in (1..=lo).rev() {
            for hi2 in hi..=self.height() {
                let cost = 2 * (hi2 - lo2) - (j - i);
                if cost >= best {
                    break;
                }
                let mask = ((1u64 << (hi2 + 1)) - 1) & !((1u64 << lo2) - 1);
                if ca.iter().zip(cb).zip(&self.level_mask).all(|((x, y), &m)| x == y || m & mask != 0) {
                    best = cost;
                }
            }
        }
        best as u32 // [1, h] always covers: `new` rejects dimensions without side links
    }

    /// Hop distance between two servers, both server links included: 0 if equal, else
    /// `2 + switch_distance` of their switches, which is `2 max(LCL,1) + |O|` when
    /// [`Self::side_links_at_every_level`] (SPEC §5.1, §7.8).
    pub fn server_distance(&self, p: u32, q: u32) -> u32 {
        if p == q {
            0
        } else {
            2 + self.switch_distance(self.server_switch(p), self.server_switch(q))
        }
    }

    /// Lowest level a level-`i` switch pair can be forced down to: `p-1` for the lowest `p <= i` with
    /// `w_p >= 2` (a root digit that can differ), else `i`.
    fn lo_min(&self, i: usize) -> usize {
        (2..=i).find(|&p| self.r[p] / self.r[p - 1] >= 2).map_or(i, |p| p - 1)
    }
    /// Highest level a level-`j` switch pair can be forced up to: the highest `p > j` with `z_p >= 2`, else `j`.
    fn hi_max(&self, j: usize) -> usize {
        (j + 1..=self.height()).rev().find(|&p| self.zones[p - 1] >= 2).unwrap_or(j)
    }
    /// Largest distance between a level-`i` and a level-`j` switch (`i <= j`): the distance grows with
    /// `[lo, hi]` and with `O`, and the extreme digits can differ independently.
    fn level_pair_diameter(&self, i: usize, j: usize) -> u32 {
        let (lo, hi) = (self.lo_min(i), self.hi_max(j));
        let deff = self.sides.iter().filter(|&&s| s >= 2).count() as u32;
        if self.full_side || deff == 0 {
            return (2 * (hi - lo) - (j - i)) as u32 + deff;
        }
        // Z-node 0 and the Z-node with every coordinate at 1 differ in every effective dimension.
        let far = self.sides.iter().zip(&self.stride).filter(|(&s, _)| s >= 2).map(|(_, &st)| st).sum::<usize>();
        self.detour(0, far as u32, i, j, lo, hi) + deff
    }
    /// Switch-to-switch diameter, from the closed form (maximised over level pairs; see
    /// [`Self::switch_distance`]).
    pub fn diameter(&self) -> u32 {
        let h = self.height();
        (1..=h)
            .flat_map(|i| (i..=h).map(move |j| (i, j)))
            .map(|(i, j)| self.level_pair_diameter(i, j))
            .max()
            .unwrap_or(0)
    }
    /// Server-to-server diameter: `2 max(λ,1) + d_eff` with `λ = max{i : z_i >= 2}` and `d_eff` the number of
    /// dimensions with `s_k >= 2` when [`Self::side_links_at_every_level`] (SPEC §7.8); in general 2 plus the
    /// largest level-1 switch distance (0 with a single server).
    pub fn server_diameter(&self) -> u32 {
        if self.servers <= 1 {
            0
        } else {
            2 + self.level_pair_diameter(1, 1)
        }
    }

    /// Representatives of the server-bearing (level-1) switches under the automorphisms that translate
    /// Z-nodes (`a_k -> a_k + c_k mod s_k`, which keep dimensions and so every `q_ik`; SPEC §3): one per flat
    /// address `X_1`, taken in Z-node 0, with orbit size `N_Z`. BFS from these covers every level-1 source.
    pub fn symmetry_classes(&self) -> Vec<(SwitchId, u64)> {
        (0..self.big_r[1]).map(|x| (self.switch_at(1, 0, x), self.nz as u64)).collect()
    }
}

impl Topology for HyperZ {
    fn name(&self) -> String {
        HyperZ::name(self)
    }
    fn num_switches(&self) -> usize {
        HyperZ::num_switches(self)
    }
    fn num_servers(&self) -> usize {
        self.servers
    }
    #[inline]
    fn servers_at(&self, sw: SwitchId) -> usize {
        self.servers_of(sw)
    }
    #[inline]
    fn first_server(&self, sw: SwitchId) -> u32 {
        HyperZ::first_server(self, sw)
    }
    #[inline]
    fn server_switch(&self, server: u32) -> SwitchId {
        HyperZ::server_switch(self, server)
    }
    #[inline]
    fn switch_ports(&self, sw: SwitchId) -> usize {
        HyperZ::switch_ports(self, sw)
    }
    fn max_switch_ports(&self) -> usize {
        HyperZ::max_switch_ports(self)
    }
    fn max_servers_at(&self) -> usize {
        self.zones[0]
    }
    fn uniform_servers(&self) -> Option<usize> {
        // Only a one-level tree has servers on every switch.
        (self.height() == 1).then_some(self.zones[0])
    }
    #[inline]
    fn neighbour(&self, sw: SwitchId, p: PortId) -> Option<(SwitchId, PortId)> {
        HyperZ::neighbour(self, sw, p)
    }
    fn link_classes(&self) -> &'static [&'static str] {
        &["internal", "side"]
    }
    /// The side links per dimension, `dim0`, ..., then the Z-node's internal links per level
    /// and direction: `up1` from level 1 to 2, `down1` from level 2 to 1, `up2`, ... (a fat tree,
    /// `d = 0`, has only these).
    fn series_classes(&self) -> Vec<String> {
        let dims = (0..self.sides.len()).map(|d| format!("dim{d}"));
        dims.chain((1..self.height()).flat_map(|i| [format!("up{i}"), format!("down{i}")])).collect()
    }
    fn series_class(&self, sw: SwitchId, p: PortId) -> u16 {
        let (d, i) = (self.sides.len(), self.level(sw));
        (match self.port_kind(sw, p) {
            Some(PortKind::Side { dim }) => dim,
            Some(PortKind::Up) => d + 2 * (i - 1),
            Some(PortKind::Down) => d + 2 * (i - 2) + 1,
            None => 0,
        }) as u16
    }
    fn link_class(&self, sw: SwitchId, p: PortId) -> u8 {
        matches!(self.port_kind(sw, p), Some(PortKind::Side { .. })) as u8
    }
    #[inline]
    fn distance(&self, a: SwitchId, b: SwitchId) -> u32 {
        self.switch_distance(a, b)
    }
    fn diameter(&self) -> u32 {
        // Between server-bearing (level-1) switches: what a packet crosses.
        self.server_diameter().saturating_sub(2)
    }
    fn distance_sources(&self) -> Vec<(SwitchId, u64)> {
        self.symmetry_classes()
    }
    fn details(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("switches_per_level".into(), self.switches_per_level().into());
        m.insert("radix_per_level".into(), self.radix_per_level().into());
        m.insert("max_radix".into(), self.radix_per_level().into_iter().max().unwrap_or(0).into());
        m.insert("znodes".into(), self.num_znodes().into());
        m.insert(
            "nodes_per_znode".into(),
            (0..=self.height()).map(|i| self.nodes_per_znode(i)).collect::<Vec<_>>().into(),
        );
        m.insert("internal_links".into(), self.internal_link_count().into());
        m.insert("side_links".into(), self.side_link_count().into());
        m.insert("total_links".into(), self.link_count().into());
        m
    }
    fn view(&self) -> View<'_> {
        View::HyperZ(self)
    }
}

/// Turn a `"topology.key: message"` error of [`HyperZ::new`] into a config error for that key.
pub(super) fn config_error(msg: String, value: impl std::fmt::Display) -> ConfigError {
    match msg.split_once(": ") {
        Some((key, rest)) if key.starts_with("topology.") => ConfigError::value(key, value, rest),
        _ => ConfigError::value("topology", value, msg),
    }
}

/// Switches and servers of a HyperZ from its parameters alone (Adda 2023, eq. 2), saturating; for the
/// size check before anything is built.
pub(super) fn counts(sides: &[usize], zones: &[usize], roots: &[usize]) -> (u128, u128) {
    let nz: u128 = sides.iter().map(|&s| s as u128).product();
    let h = zones.len();
    let servers = nz.saturating_mul(zones.iter().map(|&z| z as u128).product());
    let mut switches = 0u128;
    for i in 1..=h {
        let above: u128 = zones[i..].iter().map(|&z| z as u128).product();
        switches = switches
            .saturating_add(nz.saturating_mul(roots.get(i - 1).copied().unwrap_or(1) as u128).saturating_mul(above));
    }
    (switches, servers)
}

/// Router ports summed over all switches from the parameters alone (SPEC §1 radix per level), with
/// `side` side ports per switch (an upper bound when they differ per level); saturating.
pub(super) fn router_ports(sides: &[usize], zones: &[usize], roots: &[usize], internal: &[usize], side: u128) -> u128 {
    let nz: u128 = sides.iter().map(|&s| s as u128).product();
    let h = zones.len();
    let g = |i: usize| internal.get(i).copied().unwrap_or(1).max(1) as u128;
    let r = |i: usize| if i == 0 { 1 } else { roots.get(i - 1).copied().unwrap_or(1).max(1) as u128 };
    let mut total = 0u128;
    for i in 1..=h {
        let above: u128 = zones[i..].iter().map(|&z| z as u128).product();
        let n = nz.saturating_mul(r(i)).saturating_mul(above);
        let up = if i < h { (r(i + 1) / r(i)).max(1) * g(i) } else { 0 };
        let radix = zones[i - 1] as u128 * g(i - 1) + up + side;
        total = total.saturating_add(n.saturating_mul(radix));
    }
    total
}

/// Refuse networks beyond the simulator's id ranges before building them.
pub(super) fn check_size(sides: &[usize], zones: &[usize], roots: &[usize]) -> Result<(), ConfigError> {
    // A 0 makes the server count 0: name the list that holds it, not the one the count is read
    // from (`sides = [0, 2]` was blamed on `topology.zones`).
    for (key, v) in [("topology.sides", sides), ("topology.zones", zones), ("topology.roots", roots)] {
        if v.contains(&0) {
            return Err(ConfigError::value(key, format!("{v:?}"), "every entry at least 1 (SPEC section 2.3)"));
        }
    }
    let (switches, servers) = counts(sides, zones, roots);
    if switches > (1 << 24) {
        return Err(ConfigError::value("topology", format!("{switches} switches"), "at most 2^24 switches"));
    }
    if !(2..=(1 << 31)).contains(&servers) {
        return Err(ConfigError::value("topology.zones", format!("{servers} servers"), "between 2 and 2^31 servers"));
    }
    Ok(())
}

/// `[topology] kind = "hyperz"`: the keys of a HyperZ `H_{d,h}(s; Q)(Z_h(z; r; g))` (Adda 2023, eq. 1).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HyperZConfig {
    /// Z-nodes per GHC dimension, `s_1..s_d`.
    pub sides: Vec<usize>,
    /// Zones per level, `z_1..z_h` (`z_1` = processors per level-1 switch).
    pub zones: Vec<usize>,
    /// Root switches per zone at each level, `r_1..r_h` (`r_1 = 1`; each divides the next).
    pub roots: Vec<usize>,
    /// Parallel links from a node to each parent, `g_1..g_h` (default all 1; `g_1 = 1`).
    #[serde(default)]
    pub internal_links: Vec<usize>,
    /// Side links `q`: one number, one per dimension, or one list per level (default 1).
    #[serde(default = "one_side_link")]
    pub side_links: SideLinks,
}

fn one_side_link() -> SideLinks {
    SideLinks::Uniform(1)
}

impl HyperZConfig {
    fn params(&self) -> Result<(Vec<usize>, Vec<Vec<usize>>), ConfigError> {
        let h = self.zones.len();
        let g = if self.internal_links.is_empty() { vec![1; h] } else { self.internal_links.clone() };
        let q = expand_side_links(&self.side_links, h, self.sides.len())
            .map_err(|e| config_error(e, format!("{:?}", self.side_links)))?;
        Ok((g, q))
    }
    fn hyperz(&self) -> Result<HyperZ, ConfigError> {
        check_size(&self.sides, &self.zones, &self.roots)?;
        let (g, q) = self.params()?;
        HyperZ::new(self.sides.clone(), self.zones.clone(), self.roots.clone(), g, q)
            .map_err(|e| config_error(e, format!("zones {:?}, roots {:?}", self.zones, self.roots)))
    }
}

impl TopologySpec for HyperZConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        if self.sides.is_empty() {
            return Err(ConfigError::value(
                "topology.sides",
                "[]",
                "at least one dimension (a HyperZ without dimensions is a fat tree: topology.kind = \"fattree\")",
            ));
        }
        self.hyperz().map(|_| ())
    }
    fn build(&self, _seed: u64) -> Result<Arc<dyn Topology>, ConfigError> {
        Ok(Arc::new(self.hyperz()?))
    }
    fn size(&self) -> (u128, u128) {
        counts(&self.sides, &self.zones, &self.roots)
    }
    fn router_ports(&self) -> u128 {
        let side = match &self.side_links {
            SideLinks::Uniform(q) => self.sides.iter().map(|&s| (*q * s.saturating_sub(1)) as u128).sum(),
            SideLinks::PerDim(q) => self.sides.iter().zip(q).map(|(&s, &q)| (q * s.saturating_sub(1)) as u128).sum(),
            SideLinks::PerLevel(m) => m
                .iter()
                .flat_map(|row| self.sides.iter().zip(row).map(|(&s, &q)| (q * s.saturating_sub(1)) as u128))
                .max()
                .unwrap_or(0),
        };
        router_ports(&self.sides, &self.zones, &self.roots, &self.internal_links, side)
    }
    /// With side links at every level (every `q_ik >= 1` where `s_k >= 2`), faulty distances are the
    /// closed form plus exceptions ([`super::exceptions`]); otherwise an all-pairs table.
    fn faulty_distance_table(&self) -> bool {
        match self.params() {
            Ok((_, q)) => !q.iter().all(|row| row.iter().zip(&self.sides).all(|(&q, &s)| q >= 1 || s < 2)),
            Err(_) => true,
        }
    }
    /// 0: side links leave paths around most faults. With `h >= 2` a failed top-level side link
    /// changes no distance towards a leaf (the side hop can be taken at a lower level instead), so
    /// the smallest count per failed link is 0; and over random faults they are few (63,246 for the
    /// 17,367 failed links of 1% on `configs/hyperz-1m.toml`, 3.6 per link, 309 KiB), next to the
    /// per-switch state the memory check counts. A fat tree has no such detours:
    /// [`super::fattree::exceptions_per_failed_link`].
    fn exceptions_per_failed_link(&self) -> u128 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{HyperX, Topology};
    use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

    /// SPEC §1 quantities computed straight from the parameters, independently of `HyperZ`.
    struct Spec {
        z: Vec<usize>,
        r: Vec<usize>, // r[0] = 1
        g: Vec<usize>,
        s: Vec<usize>,
        q: Vec<Vec<usize>>,
    }

    impl Spec {
        fn h(&self) -> usize {
            self.z.len()
        }
        fn nz(&self) -> usize {
            self.s.iter().product()
        }
        /// Eq. (2): R_i = r_i prod_{j=i+1}^{h} z_j.
        fn big_r(&self, i: usize) -> usize {
            self.r[i] * self.z[i..].iter().product::<usize>()
        }
        fn w(&self, i: usize) -> usize {
            self.r[i] / self.r[i - 1]
        }
        /// SPEC §1 radix of a level-i switch, servers included.
        fn radix(&self, i: usize) -> usize {
            let down = self.z[i - 1] * self.g[i - 1];
            let up = if i < self.h() { self.w(i + 1) * self.g[i] } else { 0 };
            let side: usize = (0..self.s.len()).map(|k| self.q[i - 1][k] * (self.s[k] - 1)).sum();
            down + up + side
        }
        fn internal(&self) -> usize {
            (1..=self.h()).map(|i| self.nz() * self.big_r(i) * self.z[i - 1] * self.g[i - 1]).sum()
        }
        fn side(&self) -> usize {
            let mut n = 0;
            for i in 1..=self.h() {
                for k in 0..self.s.len() {
                    n += self.nz() * self.big_r(i) * self.q[i - 1][k] * (self.s[k] - 1) / 2;
                }
            }
            n
        }
        /// SPEC §4.1: level-1 switch of processor P (its one parent X_1 = X_0 / z_1, same Z-node).
        fn server_switch(&self, p: usize) -> usize {
            let (zi, x0) = (p / self.big_r(0), p % self.big_r(0));
            zi * self.big_r(1) + x0 / self.z[0]
        }
        /// SPEC §5.1: LCL from the processor digits x_j(X_0) = floor(X_0 / prod_{t<j} z_t) mod z_j.
        fn lcl(&self, a: usize, b: usize) -> usize {
            let (mut a, mut b) = (a % self.big_r(0), b % self.big_r(0));
            let mut l = 0;
            for (j, &zj) in self.z.iter().enumerate() {
                if a % zj != b % zj {
                    l = j + 1;
                }
                a /= zj;
                b /= zj;
            }
            l
        }
        fn offset(&self, a: usize, b: usize) -> usize {
            let (mut a, mut b) = (a / self.big_r(0), b / self.big_r(0));
            let mut o = 0;
            for &s in &self.s {
                o += (a % s != b % s) as usize;
                a /= s;
                b /= s;
            }
            o
        }
    }

    fn make(z: &[usize], r: &[usize], g: &[usize], s: &[usize], q: SideLinks) -> (HyperZ, Spec) {
        let qm = expand_side_links(&q, z.len(), s.len()).unwrap();
        let hz = HyperZ::new(s.to_vec(), z.to_vec(), r.to_vec(), g.to_vec(), qm.clone()).unwrap();
        let mut rr = vec![1];
        rr.extend_from_slice(r);
        (hz, Spec { z: z.to_vec(), r: rr, g: g.to_vec(), s: s.to_vec(), q: qm })
    }

    fn uni(q: usize) -> SideLinks {
        SideLinks::Uniform(q)
    }

    /// Small instances, all single-homed, covering g > 1, non-uniform and zero q, z_i = 1, s_k = 1, d = 0.
    fn small_instances() -> Vec<(HyperZ, Spec)> {
        use SideLinks::*;
        vec![
            make(&[2, 2], &[1, 2], &[1, 1], &[2], uni(1)),
            make(&[2, 2], &[1, 2], &[1, 1], &[2, 2], uni(1)),
            make(&[4, 2], &[1, 2], &[1, 2], &[2], uni(2)),
            make(&[3, 2], &[1, 2], &[1, 2], &[3, 2], PerLevel(vec![vec![1, 2], vec![2, 1]])),
            make(&[2, 2, 2], &[1, 2, 4], &[1, 1, 2], &[3], uni(1)),
            make(&[4, 2, 3], &[1, 2, 4], &[1, 2, 1], &[2, 3], uni(1)),
            make(&[2, 2, 2], &[1, 2, 4], &[1, 1, 1], &[3, 2], PerLevel(vec![vec![0, 1], vec![1, 0], vec![0, 0]])),
            make(&[2, 3, 2], &[1, 1, 2], &[1, 1, 1], &[3], PerLevel(vec![vec![0], vec![0], vec![1]])),
            make(&[2, 1, 2], &[1, 3, 3], &[1, 1, 2], &[2], PerLevel(vec![vec![1], vec![2], vec![1]])),
            make(&[2, 2], &[1, 2], &[1, 1], &[1, 3], PerDim(vec![0, 1])),
            make(&[3, 2], &[1, 2], &[1, 2], &[], uni(0)),
            make(&[3], &[1], &[1], &[3, 2], PerDim(vec![2, 1])),
        ]
    }

    /// SPEC §7 invariants 1-6 and the server attachment, by enumerating every port.
    fn check_structure(hz: &HyperZ, sp: &Spec) {
        let h = sp.h();
        // 1. counts.
        let n: Vec<usize> = (1..=h).map(|i| sp.big_r(i) * sp.nz()).collect();
        assert_eq!(hz.switches_per_level(), n);
        assert_eq!(hz.num_switches(), n.iter().sum::<usize>());
        assert_eq!(hz.num_znodes(), sp.nz());
        assert_eq!(hz.num_servers(), sp.big_r(0) * sp.nz());
        let mut per_level = vec![0; h + 1];
        for sw in 0..hz.num_switches() as SwitchId {
            per_level[hz.level(sw)] += 1;
        }
        assert_eq!(per_level[1..], n[..]);
        assert_eq!(hz.radix_per_level(), (1..=h).map(|i| sp.radix(i)).collect::<Vec<_>>());

        let mut mult: HashMap<(SwitchId, SwitchId), usize> = HashMap::new();
        let (mut ports, mut side_ports) = (0usize, 0usize);
        let mut next_server = 0u32;
        for sw in 0..hz.num_switches() as SwitchId {
            let i = hz.level(sw);
            let np = hz.switch_ports(sw);
            // 2. degree = radix; servers contiguous, z_1 per level-1 switch.
            assert_eq!(np + hz.servers_of(sw), sp.radix(i), "switch {sw} level {i}");
            assert_eq!(hz.servers_of(sw), if i == 1 { sp.z[0] } else { 0 });
            assert_eq!(hz.first_server(sw), next_server);
            for t in 0..hz.servers_of(sw) as u32 {
                assert_eq!(hz.server_switch(next_server + t), sw);
                assert_eq!(sp.server_switch((next_server + t) as usize), sw as usize);
            }
            next_server += hz.servers_of(sw) as u32;
            assert_eq!(hz.neighbour(sw, np as PortId), None);
            assert_eq!(hz.port_kind(sw, np as PortId), None);
            assert_eq!(hz.up_ports(sw).len(), if i < h { sp.w(i + 1) * sp.g[i] } else { 0 });
            let (mut parents, mut children) = (BTreeSet::new(), BTreeSet::new());
            let mut side_nbrs = vec![BTreeSet::new(); sp.s.len()];
            for p in 0..np as PortId {
                ports += 1;
                // 2. every port wired once: the neighbour map is a fixed-point-free involution.
                let (o, back) = hz.neighbour(sw, p).unwrap();
                assert_eq!(hz.wired_neighbour(sw, p), Some((o, back)), "the port table at ({sw},{p})");
                assert_ne!(o, sw);
                assert!((back as usize) < hz.switch_ports(o));
                assert_eq!(hz.neighbour(o, back), Some((sw, p)), "({sw},{p}) -> ({o},{back})");
                *mult.entry((sw, o)).or_default() += 1;
                let kind = hz.port_kind(sw, p).unwrap();
                assert_eq!(hz.up_ports(sw).contains(&p), kind == PortKind::Up);
                match kind {
                    // 3. internal edges join levels i and i+1 of one Z-node.
                    PortKind::Up => {
                        assert_eq!((hz.level(o), hz.znode(o)), (i + 1, hz.znode(sw)));
                        assert_eq!(hz.port_kind(o, back), Some(PortKind::Down));
                        parents.insert(o);
                    }
                    PortKind::Down => {
                        assert!(i >= 2);
                        assert_eq!((hz.level(o), hz.znode(o)), (i - 1, hz.znode(sw)));
                        assert_eq!(hz.port_kind(o, back), Some(PortKind::Up));
                        children.insert(o);
                    }
                    // 4. side edges: same level and X, Z-nodes differing in exactly the port's dimension.
                    PortKind::Side { dim } => {
                        side_ports += 1;
                        assert_eq!((hz.level(o), hz.flat(o)), (i, hz.flat(sw)));
                        let (za, zb) = (hz.znode(sw), hz.znode(o));
                        assert_eq!(hz.offset_count(za, zb), 1);
                        assert_eq!(hz.first_offset_dim(za, zb), Some(dim));
                        assert_eq!(hz.port_kind(o, back), Some(PortKind::Side { dim }));
                        assert!(hz.side_dim_ports(sw, dim).contains(&p));
                        let b = hz.coord(zb, dim);
                        assert!(hz.side_ports(sw, dim, b).contains(&p));
                        let k = (p - hz.side_ports(sw, dim, b).start) as usize;
                        assert_eq!(hz.side_port_to(sw, dim, b, k), p);
                        assert_eq!(hz.with_coord(za, dim, b), zb);
                        side_nbrs[dim].insert(o);
                    }
                }
            }
            // 3. w_{i+1} distinct parents, z_i distinct children.
            assert_eq!(parents.len(), if i < h { sp.w(i + 1) } else { 0 });
            assert_eq!(children.len(), if i >= 2 { sp.z[i - 1] } else { 0 });
            // 6. each layer plane is a Hamming graph: s_k - 1 neighbours per dimension with side links.
            for (k, nb) in side_nbrs.iter().enumerate() {
                let want = if sp.q[i - 1][k] > 0 { sp.s[k] - 1 } else { 0 };
                assert_eq!(nb.len(), want);
                assert_eq!(hz.side_dim_ports(sw, k).len(), sp.q[i - 1][k] * (sp.s[k] - 1));
            }
        }
        assert_eq!(next_server as usize, hz.num_servers());
        // 3, 4. multiplicities g_i and q_ik.
        for (&(a, b), &m) in &mult {
            let (la, lb) = (hz.level(a), hz.level(b));
            if la == lb {
                let k = hz.first_offset_dim(hz.znode(a), hz.znode(b)).unwrap();
                assert_eq!(m, sp.q[la - 1][k]);
            } else {
                assert_eq!(m, sp.g[la.max(lb) - 1]);
            }
        }
        // 5. link totals (processor links count as internal).
        assert_eq!(ports % 2, 0);
        assert_eq!(side_ports / 2, sp.side());
        assert_eq!((ports - side_ports) / 2 + hz.num_servers(), sp.internal());
        assert_eq!(hz.internal_link_count(), sp.internal());
        assert_eq!(hz.side_link_count(), sp.side());
        assert_eq!(hz.link_count(), sp.internal() + sp.side());
    }

    fn bfs(hz: &HyperZ, src: SwitchId) -> Vec<u32> {
        let mut dist = vec![u32::MAX; hz.num_switches()];
        dist[src as usize] = 0;
        let mut queue = VecDeque::from([src]);
        while let Some(u) = queue.pop_front() {
            for p in 0..hz.switch_ports(u) as PortId {
                let (v, _) = hz.neighbour(u, p).unwrap();
                if dist[v as usize] == u32::MAX {
                    dist[v as usize] = dist[u as usize] + 1;
                    queue.push_back(v);
                }
            }
        }
        dist
    }

    /// Distances, diameters, LCL, ancestor/down-port tests and symmetry classes against BFS.
    fn check_distances(hz: &HyperZ, sp: &Spec) {
        let ns = hz.num_switches();
        let all: Vec<Vec<u32>> = (0..ns as SwitchId).map(|s| bfs(hz, s)).collect();
        let mut diam = 0;
        for (a, row) in all.iter().enumerate() {
            for (b, &d) in row.iter().enumerate() {
                assert_ne!(d, u32::MAX, "disconnected");
                assert_eq!(hz.switch_distance(a as SwitchId, b as SwitchId), d, "switches {a} {b}");
                diam = diam.max(d);
            }
        }
        assert_eq!(hz.diameter(), diam);

        // Servers are degree-1 leaves on their SPEC §4.1 switch.
        let full = sp.q.iter().zip(0..).all(|(row, _)| row.iter().zip(&sp.s).all(|(&q, &s)| q > 0 || s < 2));
        assert_eq!(hz.side_links_at_every_level(), full);
        let n0 = hz.num_servers();
        let mut sdiam = 0;
        for p in 0..n0 {
            for q in 0..n0 {
                let bfs_d = if p == q { 0 } else { 2 + all[sp.server_switch(p)][sp.server_switch(q)] };
                assert_eq!(hz.server_distance(p as u32, q as u32), bfs_d, "servers {p} {q}");
                assert_eq!(hz.lcl(p as u32, q as u32), sp.lcl(p, q));
                if full && p != q {
                    assert_eq!(bfs_d as usize, 2 * sp.lcl(p, q).max(1) + sp.offset(p, q), "SPEC §5.1 length");
                }
                sdiam = sdiam.max(bfs_d);
            }
        }
        assert_eq!(hz.server_diameter(), sdiam);
        if full {
            // SPEC §7.8: 2 max(λ,1) + d_eff.
            let lambda = (1..=sp.h()).filter(|&i| sp.z[i - 1] >= 2).max().unwrap_or(0) as u32;
            let deff = sp.s.iter().filter(|&&s| s >= 2).count() as u32;
            let want = if deff == 0 { 2 * lambda } else { 2 * lambda.max(1) + deff };
            assert_eq!(hz.server_diameter(), want);
        }

        // Ancestors: a pure down path of level-1 hops reaches the destination's switch.
        for sw in 0..ns as SwitchId {
            let i = hz.level(sw);
            for dst in 0..n0 as u32 {
                let leaf = sp.server_switch(dst as usize);
                let anc = all[sw as usize][leaf] as usize == i - 1;
                assert_eq!(hz.is_ancestor(sw, dst), anc, "switch {sw} server {dst}");
                let aligned = hz.switch_at(i, hz.server_znode(dst), hz.flat(sw));
                assert_eq!(hz.ancestor_contains(sw, dst), hz.is_ancestor(aligned, dst));
                match hz.down_port_to(sw, dst) {
                    None => assert!(i == 1 || !hz.ancestor_contains(sw, dst)),
                    Some(range) => {
                        assert!(i >= 2 && hz.ancestor_contains(sw, dst));
                        assert_eq!(range.len(), sp.g[i - 1]);
                        let children: BTreeSet<SwitchId> =
                            range.clone().map(|p| hz.neighbour(sw, p).unwrap().0).collect();
                        assert_eq!(children.len(), 1);
                        let child = *children.iter().next().unwrap();
                        assert_eq!(hz.level(child), i - 1);
                        assert!(hz.ancestor_contains(child, dst));
                        for p in 0..hz.up_ports(sw).start {
                            if !range.contains(&p) {
                                assert!(!hz.ancestor_contains(hz.neighbour(sw, p).unwrap().0, dst));
                            }
                        }
                    }
                }
            }
        }

        // Symmetry classes: every level-1 switch has its representative's distance profile.
        let classes = hz.symmetry_classes();
        assert_eq!(classes.iter().map(|c| c.1).sum::<u64>() as usize, sp.big_r(1) * sp.nz());
        let profile = |s: usize| {
            let mut v = all[s].clone();
            v.sort_unstable();
            v
        };
        for sw in 0..sp.big_r(1) * sp.nz() {
            let rep = classes.iter().find(|c| hz.flat(c.0) == hz.flat(sw as SwitchId)).unwrap();
            assert_eq!((hz.level(rep.0), hz.znode(rep.0)), (1, 0));
            assert_eq!(profile(sw), profile(rep.0 as usize));
        }
    }

    #[test]
    fn invariants_and_distances_on_small_instances() {
        for (hz, sp) in small_instances() {
            check_structure(&hz, &sp);
            check_distances(&hz, &sp);
        }
    }

    /// Link `(a, pa) -- (b, pb)` in canonical order.
    fn link(a: SwitchId, pa: PortId, b: SwitchId, pb: PortId) -> ((SwitchId, PortId), (SwitchId, PortId)) {
        if (a, pa) < (b, pb) {
            ((a, pa), (b, pb))
        } else {
            ((b, pb), (a, pa))
        }
    }

    fn switch_links(hz: &HyperZ) -> HashSet<((SwitchId, PortId), (SwitchId, PortId))> {
        let mut out = HashSet::new();
        for sw in 0..hz.num_switches() as SwitchId {
            for p in 0..hz.switch_ports(sw) as PortId {
                let (o, q) = hz.neighbour(sw, p).unwrap();
                out.insert(link(sw, p, o, q));
            }
        }
        out
    }

    #[test]
    fn tiny_example_matches_spec_link_list() {
        // SPEC §4.2 (i): H_{1,2}(2; q=1)(Z_2(2,2;1,2;1,1)). SPEC ids: processors 0..8, then switches 8..16;
        // ours: switch = SPEC id - N_0 (8), level-1 switch port = SPEC port - z_1 (2).
        let (hz, sp) = make(&[2, 2], &[1, 2], &[1, 1], &[2], uni(1));
        check_structure(&hz, &sp);
        assert_eq!(hz.switches_per_level(), vec![4, 4]);
        assert_eq!(hz.radix_per_level(), vec![5, 3]);
        assert_eq!((hz.internal_link_count(), hz.side_link_count()), (16, 4));
        assert_eq!(hz.server_diameter(), 5);
        // Links 0-3 and 8-11: processor P on switch #8 + P/2, SPEC port P % 2.
        for (p, spec_sw) in [(0, 8), (1, 8), (2, 9), (3, 9), (4, 10), (5, 10), (6, 11), (7, 11)] {
            assert_eq!(hz.server_switch(p), spec_sw - 8);
            assert_eq!(p - hz.first_server(spec_sw - 8), p % 2);
        }
        let spec_links = [
            (8, 2, 12, 0),  // 4
            (8, 3, 13, 0),  // 5
            (9, 2, 12, 1),  // 6
            (9, 3, 13, 1),  // 7
            (10, 2, 14, 0), // 12
            (10, 3, 15, 0), // 13
            (11, 2, 14, 1), // 14
            (11, 3, 15, 1), // 15
            (8, 4, 10, 4),  // 16 side
            (9, 4, 11, 4),  // 17 side
            (12, 2, 14, 2), // 18 side
            (13, 2, 15, 2), // 19 side
        ];
        let port = |sw: u32, p: u16| if sw < 12 { p - 2 } else { p };
        let want: HashSet<_> =
            spec_links.iter().map(|&(a, pa, b, pb)| link(a - 8, port(a, pa), b - 8, port(b, pb))).collect();
        assert_eq!(switch_links(&hz), want);
        assert_eq!(hz.num_servers() + want.len(), 20);
    }

    #[test]
    fn figure_1_instance_matches_spec() {
        // SPEC §2.4 / §4.2: H_{1,2}(2;2)(Z_2(4,2;1,2;1,2)): R = (8,2,2), radix 10/6, 40 links, diameter 5.
        let (hz, sp) = make(&[4, 2], &[1, 2], &[1, 2], &[2], uni(2));
        check_structure(&hz, &sp);
        assert_eq!(hz.nodes_per_znode(2), 2, "Fig. 1: R_2 = 2");
        assert_eq!((hz.nodes_per_znode(0), hz.nodes_per_znode(1)), (8, 2));
        assert_eq!(hz.radix_per_level(), vec![10, 6]);
        assert_eq!(hz.link_count(), 40);
        assert_eq!(hz.server_diameter(), 5);
        // S1(Z;X) = 2Z + X, S2(Z;X) = 4 + 2Z + X; level-1 SPEC ports minus z_1 = 4.
        let mut want = HashSet::new();
        for z in 0..2u32 {
            let (s1, s2) = (|x: u32| 2 * z + x, |x: u32| 4 + 2 * z + x);
            for (x, par, up0, dn0) in [(0, 0, 4, 0), (0, 1, 6, 0), (1, 0, 4, 2), (1, 1, 6, 2)] {
                for p in 0..2 {
                    want.insert(link(s1(x), up0 - 4 + p, s2(par), dn0 + p));
                }
            }
        }
        for x in 0..2u32 {
            for p in 0..2 {
                want.insert(link(x, 8 - 4 + p, 2 + x, 8 - 4 + p));
                want.insert(link(4 + x, 4 + p, 6 + x, 4 + p));
            }
        }
        assert_eq!(switch_links(&hz), want);
        for p in 0..16 {
            assert_eq!(hz.server_switch(p), p / 4, "P(Z;0..3) on S1(Z;0), P(Z;4..7) on S1(Z;1)");
        }
    }

    #[test]
    fn section_5_3_radices() {
        // SPEC §2.4: Z_3(8,4,8;1,4,8;1,2,2), q = 1: R = (256,32,32,8); radix per level 18/14/18, 20/16/20,
        // 22/18/22, 26/22/26 (maximum 18, 20, 22, 26); 1024 processors at (2,2).
        for (s, radix) in
            [([2, 2], [18, 14, 18]), ([4, 2], [20, 16, 20]), ([4, 4], [22, 18, 22]), ([8, 4], [26, 22, 26])]
        {
            let (hz, _) = make(&[8, 4, 8], &[1, 4, 8], &[1, 2, 2], &s, uni(1));
            assert_eq!((0..4).map(|i| hz.nodes_per_znode(i)).collect::<Vec<_>>(), vec![256, 32, 32, 8]);
            assert_eq!(hz.radix_per_level(), radix.to_vec());
            assert_eq!(hz.max_switch_ports(), (radix[0] - 8).max(radix[1]).max(radix[2]));
            if s == [2, 2] {
                assert_eq!(hz.num_servers(), 1024);
            }
        }
    }

    #[test]
    fn section_4_3_table() {
        // SPEC §4.3: (z, r, g, s) -> switches per level, links internal/side/total, radix per level, diameter.
        #[allow(clippy::type_complexity)]
        let rows: [(&[usize], &[usize], &[usize], [usize; 2], &[usize], [usize; 3], &[usize], u32); 5] = [
            (&[16], &[1], &[1], [8, 8], &[64], [1024, 448, 1472], &[30], 4),
            (&[8, 8], &[1, 8], &[1, 1], [4, 4], &[128, 128], [2048, 768, 2816], &[22, 14], 6),
            (&[4, 4], &[1, 4], &[1, 1], [8, 8], &[256, 256], [2048, 3584, 5632], &[22, 18], 6),
            (&[8, 4, 8], &[1, 4, 8], &[1, 2, 2], [2, 2], &[128, 128, 32], [2560, 288, 2848], &[18, 14, 18], 8),
            (&[4, 4, 4], &[1, 4, 16], &[1, 1, 1], [4, 4], &[256, 256, 256], [3072, 2304, 5376], &[14, 14, 10], 8),
        ];
        for (z, r, g, s, per_level, links, radix, diam) in rows {
            let (hz, sp) = make(z, r, g, &s, uni(1));
            check_structure(&hz, &sp);
            assert_eq!(hz.num_servers(), 1024);
            assert_eq!(hz.switches_per_level(), per_level.to_vec());
            assert_eq!([hz.internal_link_count(), hz.side_link_count(), hz.link_count()], links);
            assert_eq!(hz.radix_per_level(), radix.to_vec());
            assert_eq!(hz.server_diameter(), diam);
            // BFS from the symmetry classes gives the same server diameter; diameter() from all sources.
            let mut from_reps = 0;
            for (rep, _) in hz.symmetry_classes() {
                let d = bfs(&hz, rep);
                let n1 = per_level[0];
                from_reps = from_reps.max(2 + d[..n1].iter().max().unwrap());
            }
            assert_eq!(from_reps, diam);
            let sw_diam = (0..hz.num_switches() as SwitchId).map(|s| *bfs(&hz, s).iter().max().unwrap()).max().unwrap();
            assert_eq!(hz.diameter(), sw_diam);
        }
    }

    #[test]
    fn section_5_3_node_distances_match_bfs() {
        let (hz, sp) = make(&[8, 4, 8], &[1, 4, 8], &[1, 2, 2], &[2, 2], uni(1));
        check_distances(&hz, &sp);
    }

    #[test]
    fn regular_radix_bound() {
        // Adda 2023, section 3.2: a regular Z-node (z_i = z, r_i = z^{i-1}, g = 1) has max radix 2z + dq(z-1)
        // and z^h s^d processors.
        for (z, h, d, q) in [(4usize, 2, 2, 1), (3, 3, 2, 2), (8, 2, 2, 1), (2, 4, 3, 1)] {
            let zs = vec![z; h];
            let rs: Vec<usize> = (0..h).map(|i| z.pow(i as u32)).collect();
            let (hz, _) = make(&zs, &rs, &vec![1; h], &vec![z; d], uni(q));
            assert_eq!(hz.radix_per_level().into_iter().max().unwrap(), 2 * z + d * q * (z - 1));
            assert_eq!(hz.num_servers(), z.pow((h + d) as u32));
        }
    }

    #[test]
    fn height_1_is_hyperx_port_by_port() {
        // SPEC §2.4, §7.9: Z_1(T;1;1) with q_1k = K_k is HyperX(S, K, T), same ids and port numbers.
        for (s, k, t) in [(vec![3, 4, 2], vec![1, 2, 3], 2), (vec![4, 4], vec![2, 2], 3), (vec![5], vec![1], 4)] {
            let hx = HyperX::new(&s, &k, t);
            let (hz, sp) = make(&[t], &[1], &[1], &s, SideLinks::PerDim(k.clone()));
            check_structure(&hz, &sp);
            assert_eq!(hz.num_switches(), hx.num_switches());
            assert_eq!(hz.num_servers(), hx.num_switches() * hx.servers_at(0));
            for sw in 0..hx.num_switches() as SwitchId {
                assert_eq!(hz.servers_of(sw), hx.servers_at(sw));
                assert_eq!(hz.first_server(sw) as usize, sw as usize * t);
                assert_eq!(hz.switch_ports(sw), hx.switch_ports(sw));
                for p in 0..hx.switch_ports(sw) as PortId {
                    assert_eq!(hz.neighbour(sw, p), hx.neighbour(sw, p), "switch {sw} port {p}");
                }
                for d in 0..s.len() {
                    assert_eq!(hz.coord(hz.znode(sw), d), hx.coord(sw, d));
                }
                for o in 0..hx.num_switches() as SwitchId {
                    assert_eq!(hz.switch_distance(sw, o), hx.distance(sw, o));
                }
            }
            assert_eq!(hz.diameter(), hx.diameter());
        }
    }

    #[test]
    fn k_ary_n_tree_as_pgft() {
        // SPEC §2.1: k-ary n-tree = Z_n(k..k; 1,k,..,k^{n-1}; 1..1), d = 0. With k = 4, n = 3: k^n = 64
        // processors, k^{n-1} = 16 switches per level (n k^{n-1} = 48), n k^n = 192 links, radix 2k below
        // the top and k at the top, up-down diameter 2n between processors and 2(n-1) between switches.
        let (hz, sp) = make(&[4, 4, 4], &[1, 4, 16], &[1, 1, 1], &[], uni(1));
        check_structure(&hz, &sp);
        assert_eq!(hz.num_servers(), 64);
        assert_eq!(hz.switches_per_level(), vec![16, 16, 16]);
        assert_eq!(hz.link_count(), 192);
        assert_eq!(hz.side_link_count(), 0);
        assert_eq!(hz.radix_per_level(), vec![8, 8, 4]);
        assert_eq!(hz.server_diameter(), 6);
        assert_eq!(hz.diameter(), 4);
        assert_eq!(hz.name(), "PGFT(3; 4,4,4; 1,4,4; 1,1,1)");
        check_distances(&hz, &sp);
    }

    #[test]
    fn names_follow_the_paper_notation() {
        let (hz, _) = make(&[8, 8], &[1, 8], &[1, 1], &[4, 4], uni(1));
        assert_eq!(hz.name(), "HyperZ H_{2,2}(4,4; q=1)(Z_2(8,8;1,8;1,1))");
        let (hz, _) = make(&[3, 2], &[1, 2], &[1, 2], &[3, 2], SideLinks::PerDim(vec![1, 2]));
        assert_eq!(hz.name(), "HyperZ H_{2,2}(3,2; q=1,2)(Z_2(3,2;1,2;1,2))");
        let (hz, _) = make(&[3, 2], &[1, 2], &[1, 2], &[3, 2], SideLinks::PerLevel(vec![vec![1, 2], vec![2, 1]]));
        assert_eq!(hz.name(), "HyperZ H_{2,2}(3,2; Q=(1,2),(2,1))(Z_2(3,2;1,2;1,2))");
    }

    #[test]
    fn side_links_forms_expand_and_deserialize() {
        use SideLinks::*;
        assert_eq!(expand_side_links(&Uniform(2), 2, 3), Ok(vec![vec![2, 2, 2], vec![2, 2, 2]]));
        assert_eq!(expand_side_links(&PerDim(vec![1, 2]), 3, 2), Ok(vec![vec![1, 2]; 3]));
        let m = vec![vec![1, 0], vec![0, 1]];
        assert_eq!(expand_side_links(&PerLevel(m.clone()), 2, 2), Ok(m));
        assert_eq!(expand_side_links(&Uniform(1), 2, 0), Ok(vec![vec![], vec![]]));
        assert!(expand_side_links(&PerDim(vec![1, 2, 3]), 2, 2).unwrap_err().starts_with("topology.side_links"));
        assert!(expand_side_links(&PerLevel(vec![vec![1, 2]]), 2, 2).unwrap_err().starts_with("topology.side_links"));
        assert!(expand_side_links(&PerLevel(vec![vec![1], vec![1, 2]]), 2, 2)
            .unwrap_err()
            .starts_with("topology.side_links: level 1"));
        #[derive(Deserialize)]
        struct T {
            q: SideLinks,
        }
        assert_eq!(toml::from_str::<T>("q = 2").unwrap().q, Uniform(2));
        assert_eq!(toml::from_str::<T>("q = [1, 2]").unwrap().q, PerDim(vec![1, 2]));
        assert_eq!(toml::from_str::<T>("q = [[1, 2], [0, 1]]").unwrap().q, PerLevel(vec![vec![1, 2], vec![0, 1]]));
    }

    #[test]
    fn invalid_parameters_are_rejected_with_the_key() {
        let err = |z: &[usize], r: &[usize], g: &[usize], s: &[usize], q: Vec<Vec<usize>>| {
            HyperZ::new(s.to_vec(), z.to_vec(), r.to_vec(), g.to_vec(), q).unwrap_err()
        };
        let e = err(&[2, 2, 2], &[1, 2, 3], &[1, 1, 1], &[2], vec![vec![1]; 3]);
        assert!(e.starts_with("topology.roots: r_2 = 2 does not divide r_3 = 3"), "{e}");
        let e = err(&[2, 2], &[2, 4], &[1, 1], &[2], vec![vec![1]; 2]);
        assert!(e.starts_with("topology.roots: r_1 = 2") && e.contains("single-homed"), "{e}");
        let e = err(&[2, 2], &[1, 2], &[2, 1], &[2], vec![vec![1]; 2]);
        assert!(e.starts_with("topology.internal_links: g_1 = 2") && e.contains("single-homed"), "{e}");
        assert!(err(&[], &[], &[], &[2], vec![]).starts_with("topology.zones"));
        assert!(err(&[2, 0], &[1, 2], &[1, 1], &[2], vec![vec![1]; 2]).starts_with("topology.zones: z_2 = 0"));
        assert!(err(&[2, 2], &[1, 0], &[1, 1], &[2], vec![vec![1]; 2]).starts_with("topology.roots: r_2 = 0"));
        assert!(err(&[2, 2], &[1, 2], &[1, 0], &[2], vec![vec![1]; 2]).starts_with("topology.internal_links: g_2 = 0"));
        assert!(err(&[2, 2], &[1], &[1, 1], &[2], vec![vec![1]; 2]).starts_with("topology.roots"));
        assert!(err(&[2, 2], &[1, 2], &[1], &[2], vec![vec![1]; 2]).starts_with("topology.internal_links"));
        assert!(err(&[2, 2], &[1, 2], &[1, 1], &[2], vec![vec![1]; 3]).starts_with("topology.side_links"));
        assert!(err(&[2, 2], &[1, 2], &[1, 1], &[2, 0], vec![vec![1, 1]; 2]).starts_with("topology.sides: s_2 = 0"));
        let e = err(&[2, 2], &[1, 2], &[1, 1], &[2, 3], vec![vec![1, 0]; 2]);
        assert!(e.starts_with("topology.side_links") && e.contains("disconnected"), "{e}");
        let e = err(&[1 << 20, 1 << 20], &[1, 1], &[1, 1], &[1 << 10], vec![vec![1]; 2]);
        assert!(e.contains("too large"), "{e}");
        assert!(err(&[2], &[1], &[1], &[40000, 40000], vec![vec![1, 1]]).contains("65535"));
    }
}
