//! HyperX (Ahn, Binkert, Davis, McLaren, Schreiber, "HyperX: Topology, Routing, and Packaging of
//! Efficient Large-Scale Networks", SC09, section 3): an `L`-dimensional array of switches with sides
//! `S_1..S_L`, every switch connected to every other switch that differs from it in exactly one
//! coordinate, by `K_d` parallel (trunked) links in dimension `d`, and `T` servers per switch.
//!
//! Switch numbering: mixed radix, dimension 0 varies fastest:
//! `id = x_0 + S_0 * (x_1 + S_1 * (x_2 + ...))`.
//!
//! Port numbering (switch-to-switch ports only; the router puts the `T` server ports first):
//! dimensions in order; inside dimension `d`, the `S_d - 1` other coordinate values `v != x_d` in
//! increasing order; for each value its `K_d` trunk links. So port
//! `base_d + (rank of v among the other values) * K_d + k`, with `base_d = sum_{e<d} (S_e - 1) K_e`.
//! The rank of `v` is `v` if `v < x_d`, else `v - 1`.

use super::registry::TopologySpec;
use super::{PortId, SwitchId, Topology, View};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `[topology] kind = "hyperx"`: the keys of a HyperX (Ahn et al. section 3 notation).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HyperXConfig {
    /// Switches per dimension, `S_1..S_L`.
    pub sides: Vec<usize>,
    /// Parallel links between neighbours in each dimension, `K_1..K_L`; default 1 in every dimension.
    #[serde(default)]
    pub trunking: Vec<usize>,
    /// Servers (terminals) per switch, `T`.
    pub servers_per_switch: usize,
}

impl HyperXConfig {
    /// Trunking per dimension with the default (1) filled in.
    pub fn trunking(&self) -> Vec<usize> {
        if self.trunking.is_empty() {
            vec![1; self.sides.len()]
        } else {
            self.trunking.clone()
        }
    }
}

impl TopologySpec for HyperXConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        if self.sides.is_empty() || self.sides.len() > 8 {
            return Err(ConfigError::value("topology.sides", format!("{:?}", self.sides), "1 to 8 dimensions"));
        }
        if let Some(s) = self.sides.iter().find(|&&s| !(2..=4096).contains(&s)) {
            return Err(ConfigError::value("topology.sides", s, "each side between 2 and 4096"));
        }
        let switches: u128 = self.sides.iter().map(|&s| s as u128).product();
        if switches > (1 << 24) {
            return Err(ConfigError::value("topology.sides", format!("{:?}", self.sides), "at most 2^24 switches"));
        }
        if !self.trunking.is_empty() && self.trunking.len() != self.sides.len() {
            return Err(ConfigError::value(
                "topology.trunking",
                format!("{:?}", self.trunking),
                format!("one entry per dimension ({} entries) or empty", self.sides.len()),
            ));
        }
        if let Some(k) = self.trunking.iter().find(|&&k| !(1..=16).contains(&k)) {
            return Err(ConfigError::value("topology.trunking", k, "each between 1 and 16"));
        }
        if !(1..=1024).contains(&self.servers_per_switch) {
            return Err(ConfigError::value(
                "topology.servers_per_switch",
                self.servers_per_switch,
                "between 1 and 1024",
            ));
        }
        if switches * self.servers_per_switch as u128 > (1 << 31) {
            return Err(ConfigError::value(
                "topology.servers_per_switch",
                self.servers_per_switch,
                "at most 2^31 servers",
            ));
        }
        Ok(())
    }
    fn build(&self, _seed: u64) -> Result<Arc<dyn Topology>, ConfigError> {
        Ok(Arc::new(HyperX::new(&self.sides, &self.trunking(), self.servers_per_switch)))
    }
    fn size(&self) -> (u128, u128) {
        let switches: u128 = self.sides.iter().map(|&s| s as u128).product();
        (switches, switches * self.servers_per_switch as u128)
    }
    fn router_ports(&self) -> u128 {
        let trunk = self.trunking();
        let per: u128 = self.sides.iter().zip(&trunk).map(|(&s, &k)| (s as u128).saturating_sub(1) * k as u128).sum();
        self.size().0 * (per + self.servers_per_switch as u128)
    }
    fn faulty_distance_table(&self) -> bool {
        // Faults are sparse exceptions to the closed form (`topology::distances`).
        false
    }
}

/// A HyperX network, general form (sides and trunking may differ per dimension).
#[derive(Debug, Clone)]
pub struct HyperX {
    sides: Vec<usize>,
    trunking: Vec<usize>,
    servers: usize,
    /// `stride[d] = prod_{e<d} S_e`.
    stride: Vec<usize>,
    /// First port of each dimension, plus the total at the end.
    base: Vec<usize>,
    /// Dimension of each port.
    port_dim: Vec<u8>,
    /// `(first port, trunking)` of each dimension, as the routing inner loop reads them together.
    dim_ports: Vec<(u16, u16)>,
    /// Coordinates of every switch, `coord_tab[sw * L + d]` (routing reads them per hop; dividing
    /// each time was the simulator's top cost).
    coord_tab: Vec<u16>,
    switches: usize,
    /// Switch-to-switch ports per switch.
    ports: usize,
    /// Where the ports fit a 128-bit mask (else empty): per dimension `d`, from
    /// `rank_at[d]`, the mask of the `K_d` trunk ports to each other coordinate by its rank
    /// ([`HyperX::port_to`]), then the mask of all of the dimension's ports at
    /// `rank_at[d] + S_d - 1`. The routings' class loops read these per dimension instead of
    /// shifting 128-bit words by variable amounts.
    port_masks: Vec<u128>,
    /// First entry of each dimension in `port_masks`.
    rank_at: Vec<usize>,
}

impl HyperX {
    /// Build a HyperX with the given sides, trunking (one per dimension) and servers per switch.
    pub fn new(sides: &[usize], trunking: &[usize], servers: usize) -> Self {
        assert_eq!(sides.len(), trunking.len(), "one trunking factor per dimension");
        let mut stride = Vec::with_capacity(sides.len());
        let mut acc = 1usize;
        for &s in sides {
            stride.push(acc);
            acc *= s;
        }
        let mut base = vec![0usize];
        let mut port_dim = Vec::new();
        for (d, (&s, &k)) in sides.iter().zip(trunking).enumerate() {
            let n = (s - 1) * k;
            base.push(base[d] + n);
            port_dim.extend(std::iter::repeat_n(d as u8, n));
        }
        let mut coord_tab = Vec::with_capacity(acc * sides.len());
        for sw in 0..acc {
            for (d, &side) in sides.iter().enumerate() {
                coord_tab.push(((sw / stride[d]) % side) as u16);
            }
        }
        let dim_ports = (0..sides.len()).map(|d| (base[d] as u16, trunking[d] as u16)).collect();
        let ports = base[sides.len()];
        let (mut port_masks, mut rank_at) = (Vec::new(), Vec::new());
        if ports <= 128 {
            let ones = |n: usize| if n >= 128 { !0u128 } else { (1u128 << n) - 1 };
            for (d, (&s, &k)) in sides.iter().zip(trunking).enumerate() {
                rank_at.push(port_masks.len());
                port_masks.extend((0..s - 1).map(|rank| ones(k) << (base[d] + rank * k)));
                port_masks.push(ones((s - 1) * k) << base[d]);
            }
        }
        HyperX {
            ports,
            port_masks,
            rank_at,
            dim_ports,
            sides: sides.to_vec(),
            trunking: trunking.to_vec(),
            servers,
            stride,
            base,
            port_dim,
            coord_tab,
            switches: acc,
        }
    }

    /// Number of dimensions `L`.
    pub fn dims(&self) -> usize {
        self.sides.len()
    }
    /// Side `S_d`.
    pub fn side(&self, d: usize) -> usize {
        self.sides[d]
    }
    /// All sides.
    pub fn sides(&self) -> &[usize] {
        &self.sides
    }
    /// Trunking `K_d`.
    pub fn trunk(&self, d: usize) -> usize {
        self.trunking[d]
    }
    /// Coordinate `x_d` of a switch.
    #[inline]
    pub fn coord(&self, sw: SwitchId, d: usize) -> usize {
        self.coord_tab[sw as usize * self.sides.len() + d] as usize
    }
    /// All coordinates of a switch, as stored (one lookup for the routings' per-hop loops).
    #[inline]
    pub fn coords_of(&self, sw: SwitchId) -> &[u16] {
        let l = self.sides.len();
        &self.coord_tab[sw as usize * l..][..l]
    }
    /// All coordinates of a switch.
    pub fn coords(&self, sw: SwitchId) -> Vec<usize> {
        (0..self.dims()).map(|d| self.coord(sw, d)).collect()
    }
    /// Id offset of one step up in dimension `d` (`prod_{e<d} S_e`).
    #[inline]
    pub fn stride(&self, d: usize) -> usize {
        self.stride[d]
    }
    /// Switch id from coordinates.
    pub fn switch_at(&self, coords: &[usize]) -> SwitchId {
        coords.iter().zip(&self.stride).map(|(c, s)| c * s).sum::<usize>() as SwitchId
    }
    /// The switch reached from `sw` by changing coordinate `d` to `v`.
    #[inline]
    pub fn with_coord(&self, sw: SwitchId, d: usize, v: usize) -> SwitchId {
        let x = self.coord(sw, d);
        (sw as usize + v * self.stride[d] - x * self.stride[d]) as SwitchId
    }
    /// Dimension of a port.
    #[inline]
    pub fn port_dim(&self, p: PortId) -> usize {
        self.port_dim[p as usize] as usize
    }
    /// The ports of `sw` in dimension `d` as bit masks by what their far coordinate `v` is:
    /// `[neither, v == p1 only, v == p2 only, both]` (index `(v == p1) | (v == p2) << 1`, as the
    /// per-dimension hop loops classify ports), or `None` if the switch has more than 64 ports.
    /// Always inlined: the routings' class loops call it once per dimension, and a call costs
    /// about as much as its body.
    #[inline(always)]
    pub fn coordinate_class_masks(&self, sw: SwitchId, d: usize, p1: usize, p2: usize) -> Option<[u64; 4]> {
        self.class_masks(sw, d, p1, p2)
    }
    /// [`HyperX::coordinate_class_masks`] as 128-bit masks, for switches of up to 128 ports (the
    /// faulty million-endpoint HyperX's 93): `None` above that.
    #[inline(always)]
    pub fn coordinate_class_masks_wide(&self, sw: SwitchId, d: usize, p1: usize, p2: usize) -> Option<[u128; 4]> {
        self.class_masks(sw, d, p1, p2)
    }
    /// [`HyperX::coordinate_class_masks`] in masks of type `W`, from the per-rank masks of
    /// `port_masks`.
    #[inline(always)]
    fn class_masks<W: MaskWord>(&self, sw: SwitchId, d: usize, p1: usize, p2: usize) -> Option<[W; 4]> {
        self.class_masks_at(self.coord(sw, d), d, p1, p2)
    }
    /// [`HyperX::coordinate_class_masks`] of a switch whose coordinate in dimension `d` is `x`
    /// (for loops that read a switch's coordinates once, [`HyperX::coords_of`]).
    #[inline(always)]
    pub fn coordinate_class_masks_at(&self, x: usize, d: usize, p1: usize, p2: usize) -> Option<[u64; 4]> {
        self.class_masks_at(x, d, p1, p2)
    }
    /// [`HyperX::class_masks`] with the switch's coordinate `x` given.
    #[inline(always)]
    fn class_masks_at<W: MaskWord>(&self, x: usize, d: usize, p1: usize, p2: usize) -> Option<[W; 4]> {
        if self.ports > W::BITS {
            return None;
        }
        let masks = self.dim_masks(d);
        let of = |v: usize| if v == x { W::ZERO } else { W::of_u128(masks[v - (v > x) as usize]) };
        let (m1, m2, block) = (of(p1), of(p2), W::of_u128(masks[self.sides[d] - 1]));
        Some(if p1 == p2 { [block & !m1, W::ZERO, W::ZERO, m1] } else { [block & !m1 & !m2, m1, m2, W::ZERO] })
    }
    /// The ports of `sw` to `y`, a switch one coordinate away, as a 128-bit mask (its trunk links,
    /// [`HyperX::port_to`]).
    ///
    /// # Panics
    /// Where `y` is not a neighbour of `sw`, or the switches have more than 128 ports.
    #[inline]
    pub fn ports_to_neighbour(&self, sw: SwitchId, y: SwitchId) -> u128 {
        let d = (0..self.dims()).find(|&d| self.coord(y, d) != self.coord(sw, d)).expect("a neighbour");
        assert!(self.ports <= 128, "ports_to_neighbour on a HyperX of {} ports", self.ports);
        let (x, v) = (self.coord(sw, d), self.coord(y, d));
        self.dim_masks(d)[v - (v > x) as usize]
    }
    /// Dimension `d`'s entries of `port_masks` (at most 128 ports): the trunk ports towards each
    /// other coordinate by its rank (`v`, or `v - 1` above the switch's own), then the block.
    #[inline(always)]
    fn dim_masks(&self, d: usize) -> &[u128] {
        &self.port_masks[self.rank_at[d]..][..self.sides[d]]
    }
    /// Port of `sw` towards coordinate value `v` in dimension `d`, trunk `k` (`v != x_d`).
    #[inline]
    pub fn port_to(&self, sw: SwitchId, d: usize, v: usize, k: usize) -> PortId {
        let x = self.coord(sw, d);
        debug_assert!(v != x && k < self.trunking[d]);
        let rank = if v < x { v } else { v - 1 };
        (self.base[d] + rank * self.trunking[d] + k) as PortId
    }
    /// The neighbours of `sw` across dimension `d`, in port order: each other coordinate `v`
    /// there, increasing, with the range of `sw`'s ports to it (its trunks). Ports of a dimension
    /// are consecutive (`HyperX::port_to`), so the per-dimension hop loops classify a coordinate
    /// once and walk its ports from here.
    #[inline]
    pub fn dim_ports(&self, sw: SwitchId, d: usize) -> impl Iterator<Item = (usize, std::ops::Range<PortId>)> {
        let (x, k, base) = (self.coord(sw, d), self.trunking[d] as PortId, self.base[d] as PortId);
        (0..self.sides[d] - 1).map(move |rank| {
            let first = base + rank as PortId * k;
            (rank + (rank >= x) as usize, first..first + k)
        })
    }
    /// Calls `f(y, ports)` for every neighbour switch `y` of `sw` with the range of `sw`'s ports to
    /// it (its trunks), in port order: dimension by dimension, the other coordinates increasing.
    /// The hop loops of faulty networks walk neighbours this way, reading a neighbour's distances
    /// once for all its trunks.
    #[inline]
    pub fn for_each_neighbour(&self, sw: SwitchId, mut f: impl FnMut(SwitchId, std::ops::Range<PortId>)) {
        for d in 0..self.dims() {
            for (v, ports) in self.dim_ports(sw, d) {
                debug_assert_eq!(ports.start, self.port_to(sw, d, v, 0));
                f(self.with_coord(sw, d, v), ports);
            }
        }
    }
    /// Call `f` with every port of `at` that corrects one coordinate towards `to` (all trunks): the
    /// minimal next hops of a fault-free HyperX. Reads each coordinate once; this is the inner loop of
    /// minimal-based routings.
    #[inline]
    pub fn for_each_minimal_port(&self, at: SwitchId, to: SwitchId, mut f: impl FnMut(PortId)) {
        let l = self.sides.len();
        let ca = &self.coord_tab[at as usize * l..][..l];
        let cb = &self.coord_tab[to as usize * l..][..l];
        for ((&x, &y), &(base, k)) in ca.iter().zip(cb).zip(&self.dim_ports) {
            if x != y {
                let first = base + (y - (y > x) as u16) * k;
                for p in first..first + k {
                    f(p);
                }
            }
        }
    }

    /// Call `f` with the ports of `at` (all trunks) that correct the lowest dimension in which `at`
    /// and `to` differ: the next hops of dimension-order routing (nothing if `at == to`).
    #[inline]
    pub fn for_each_dor_port(&self, at: SwitchId, to: SwitchId, mut f: impl FnMut(PortId)) {
        let Some(d) = (0..self.dims()).find(|&d| self.coord(at, d) != self.coord(to, d)) else { return };
        let v = self.coord(to, d);
        for k in 0..self.trunk(d) {
            f(self.port_to(at, d, v, k));
        }
    }

    /// `(dimension, coordinate value, trunk)` that port `p` of `sw` leads to.
    #[inline]
    pub fn port_target(&self, sw: SwitchId, p: PortId) -> (usize, usize, usize) {
        let d = self.port_dim(p);
        let off = p as usize - self.base[d];
        let k = self.trunking[d];
        let rank = off / k;
        let x = self.coord(sw, d);
        let v = if rank < x { rank } else { rank + 1 };
        (d, v, off % k)
    }
    /// The switch at the far end of port `p` of `sw` (as [`Topology::neighbour`], without the
    /// far end's port or the trait's dispatch: the faulty HyperX's escape asks this per hop).
    #[inline]
    pub fn neighbour_switch(&self, sw: SwitchId, p: PortId) -> SwitchId {
        let (d, v, _) = self.port_target(sw, p);
        self.with_coord(sw, d, v)
    }
    /// Number of coordinates in which two switches differ (the Hamming distance).
    #[inline]
    pub fn hamming(&self, a: SwitchId, b: SwitchId) -> u32 {
        Self::differing(self.coords_of(a), self.coords_of(b))
    }
    /// Number of coordinates in which two switches' coordinates ([`HyperX::coords_of`]) differ:
    /// [`HyperX::hamming`] for loops that have read them already.
    #[inline]
    pub fn differing(a: &[u16], b: &[u16]) -> u32 {
        a.iter().zip(b).filter(|(x, y)| x != y).count() as u32
    }
}

impl Topology for HyperX {
    /// One class per dimension, `dim0`, `dim1`, ...
    fn series_classes(&self) -> Vec<String> {
        (0..self.dims()).map(|d| format!("dim{d}")).collect()
    }
    fn series_class(&self, _sw: SwitchId, p: PortId) -> u16 {
        self.port_dim(p) as u16
    }
    fn name(&self) -> String {
        let sides: Vec<String> = self.sides.iter().map(|s| s.to_string()).collect();
        format!("HyperX {} (K={:?}, T={})", sides.join("x"), self.trunking, self.servers)
    }
    fn num_switches(&self) -> usize {
        self.switches
    }
    #[inline]
    fn switch_ports(&self, _sw: SwitchId) -> usize {
        self.ports
    }
    fn max_switch_ports(&self) -> usize {
        self.ports
    }
    fn uniform_servers(&self) -> Option<usize> {
        Some(self.servers)
    }
    fn neighbour(&self, sw: SwitchId, p: PortId) -> Option<(SwitchId, PortId)> {
        if p as usize >= self.max_switch_ports() {
            return None;
        }
        let (d, v, k) = self.port_target(sw, p);
        let other = self.with_coord(sw, d, v);
        let back = self.port_to(other, d, self.coord(sw, d), k);
        Some((other, back))
    }
    fn distance(&self, a: SwitchId, b: SwitchId) -> u32 {
        self.hamming(a, b)
    }
    fn diameter(&self) -> u32 {
        self.sides.iter().filter(|&&s| s > 1).count() as u32
    }
    fn distance_sources(&self) -> Vec<(SwitchId, u64)> {
        // Vertex-transitive: every switch sees the same distances.
        vec![(0, self.switches as u64)]
    }
    fn grid(&self) -> Option<Vec<usize>> {
        Some(self.sides.clone())
    }
    fn view(&self) -> View<'_> {
        View::HyperX(self)
    }
}

/// A word of port bits ([`HyperX::coordinate_class_masks`] and its 128-bit twin share one body).
trait MaskWord: Copy + std::ops::BitAnd<Output = Self> + std::ops::Not<Output = Self> {
    const BITS: usize;
    const ZERO: Self;
    /// The low [`MaskWord::BITS`] bits of `m`.
    fn of_u128(m: u128) -> Self;
}

impl MaskWord for u64 {
    const BITS: usize = 64;
    const ZERO: Self = 0;
    #[inline(always)]
    fn of_u128(m: u128) -> Self {
        m as u64
    }
}

impl MaskWord for u128 {
    const BITS: usize = 128;
    const ZERO: Self = 0;
    #[inline(always)]
    fn of_u128(m: u128) -> Self {
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same for the 128-bit masks of a HyperX of more than 64 ports (84: 29 x 2 + 19 + 7),
    /// which the 64-bit masks decline.
    #[test]
    fn wide_coordinate_class_masks_match_port_to() {
        let h = HyperX::new(&[30, 20, 8], &[2, 1, 1], 1);
        assert_eq!(h.coordinate_class_masks(0, 0, 0, 0), None);
        for sw in (0..h.num_switches() as SwitchId).step_by(97) {
            for d in 0..h.dims() {
                for (p1, p2) in [(0, 0), (1, 5), (h.side(d) - 1, 2), (h.coord(sw, d), 3)] {
                    let mut want = [0u128; 4];
                    for v in (0..h.side(d)).filter(|&v| v != h.coord(sw, d)) {
                        for k in 0..h.trunk(d) {
                            want[(v == p1) as usize | ((v == p2) as usize) << 1] |= 1 << h.port_to(sw, d, v, k);
                        }
                    }
                    assert_eq!(h.coordinate_class_masks_wide(sw, d, p1, p2), Some(want), "{sw} {d} {p1} {p2}");
                }
            }
        }
    }

    /// A neighbour's ports are its trunk links as `port_to` numbers them.
    #[test]
    fn ports_to_neighbour_are_its_trunks() {
        let h = HyperX::new(&[4, 3, 5], &[2, 1, 3], 1);
        for sw in 0..h.num_switches() as SwitchId {
            for d in 0..h.dims() {
                for v in (0..h.side(d)).filter(|&v| v != h.coord(sw, d)) {
                    let want = (0..h.trunk(d)).fold(0u128, |m, k| m | 1 << h.port_to(sw, d, v, k));
                    assert_eq!(h.ports_to_neighbour(sw, h.with_coord(sw, d, v)), want, "{sw} {d} {v}");
                }
            }
        }
    }

    /// The masks are offered up to their width and declined past it: 64 and 128 ports fit the
    /// 64-bit and 128-bit masks, 65 and 129 do not; a full mask is every port.
    #[test]
    fn coordinate_class_masks_fit_up_to_their_width() {
        for (side, narrow, wide) in [(65, true, true), (66, false, true), (129, false, true), (130, false, false)] {
            let h = HyperX::new(&[side], &[1], 1);
            assert_eq!(h.coordinate_class_masks(0, 0, 1, 1).is_some(), narrow, "{side}");
            let m = h.coordinate_class_masks_wide(0, 0, 1, 1);
            assert_eq!(m.is_some(), wide, "{side}");
            if let Some(m) = m {
                let all = m.iter().fold(0u128, |a, &b| a | b);
                assert_eq!(all.count_ones() as usize, side - 1, "{side}");
            }
        }
    }

    /// The coordinate-class masks hold exactly the ports `port_to` gives for each far coordinate,
    /// classified by whether it is `p1` and whether it is `p2`, with trunking.
    #[test]
    fn coordinate_class_masks_match_port_to() {
        let h = HyperX::new(&[4, 3, 5], &[2, 1, 3], 1);
        for sw in 0..h.num_switches() as SwitchId {
            for d in 0..h.dims() {
                for p1 in 0..h.side(d) {
                    for p2 in 0..h.side(d) {
                        let mut want = [0u64; 4];
                        for v in (0..h.side(d)).filter(|&v| v != h.coord(sw, d)) {
                            for k in 0..h.trunk(d) {
                                want[(v == p1) as usize | ((v == p2) as usize) << 1] |= 1 << h.port_to(sw, d, v, k);
                            }
                        }
                        assert_eq!(h.coordinate_class_masks(sw, d, p1, p2), Some(want), "{sw} {d} {p1} {p2}");
                        // The same from the switch's coordinate, derived from its id.
                        let x = (sw as usize / h.stride(d)) % h.side(d);
                        assert_eq!(h.coords_of(sw)[d] as usize, x, "{sw} {d}");
                        assert_eq!(h.coordinate_class_masks_at(x, d, p1, p2), Some(want), "{sw} {d} {p1} {p2}");
                        let wide = want.map(|m| m as u128);
                        assert_eq!(h.coordinate_class_masks_wide(sw, d, p1, p2), Some(wide), "{sw} {d} {p1} {p2}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_port_is_wired_symmetrically() {
        let h = HyperX::new(&[3, 4, 2], &[1, 2, 3], 2);
        for sw in 0..h.num_switches() as SwitchId {
            for p in 0..h.switch_ports(sw) as PortId {
                let (o, q) = h.neighbour(sw, p).unwrap();
                assert_ne!(o, sw);
                assert_eq!(h.hamming(sw, o), 1);
                assert_eq!(h.neighbour(o, q), Some((sw, p)), "link ({sw},{p}) -> ({o},{q}) not symmetric");
                assert_eq!(h.neighbour_switch(sw, p), o);
            }
            // A dimension's neighbours in port order, each with its trunks.
            for d in 0..h.dims() {
                let want: Vec<_> = (0..h.side(d))
                    .filter(|&v| v != h.coord(sw, d))
                    .map(|v| (v, h.port_to(sw, d, v, 0)..h.port_to(sw, d, v, h.trunk(d) - 1) + 1))
                    .collect();
                assert_eq!(h.dim_ports(sw, d).collect::<Vec<_>>(), want, "switch {sw}, dimension {d}");
            }
        }
    }

    #[test]
    fn radix_matches_ahn_formula() {
        // Ahn et al. section 3: R = T + sum_d (S_d - 1) K_d.
        let h = HyperX::new(&[8, 8, 8], &[1, 1, 1], 8);
        assert_eq!(h.switch_ports(0) + h.servers_at(0), 29);
        let h = HyperX::new(&[16, 16], &[1, 1], 16);
        assert_eq!(h.switch_ports(0) + h.servers_at(0), 46);
        let h = HyperX::new(&[5, 19, 19], &[4, 1, 1], 76);
        assert_eq!(h.switch_ports(0), 4 * 4 + 18 + 18);
    }
}
