//! Tori and meshes: the k-ary n-cube with per-dimension sides `k_0 x .. x k_{n-1}` (Dally and
//! Towles, "Principles and Practices of Interconnection Networks", section 5.1; Dally and Seitz,
//! "Deadlock-Free Message Routing in Multiprocessor Interconnection Networks", IEEE TC 1987, for
//! the torus routing). A torus joins every switch to its two neighbours in each dimension with
//! wrap-around links; a mesh has no wrap-around links (its boundary ports are unwired).
//!
//! Switch numbering: mixed radix, dimension 0 fastest (as HyperX): `id = x_0 + k_0 (x_1 + ..)`.
//! Port numbering (switch-to-switch ports; the router puts the servers first): port `2d` goes to
//! `x_d + 1` (the positive direction), port `2d + 1` to `x_d - 1`, modulo `k_d` on a torus. On a
//! side of 2 the two ports of a torus dimension are parallel links to the same neighbour.
//!
//! Distances are closed-form: `sum_d min(|dx_d|, k_d - |dx_d|)` on a torus, `sum_d |dx_d|` on a
//! mesh. A torus is vertex-transitive, so `hxsim analyze` needs one BFS; a mesh is symmetric under
//! reflecting each dimension, so the switches with `x_d <= (k_d - 1) / 2` stand for all.

use super::registry::TopologySpec;
use super::{PortId, SwitchId, Topology, View};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `[topology] kind = "torus"` (`WRAP = true`) or `"mesh"`: sides and servers per switch.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CubeConfig<const WRAP: bool> {
    /// Switches per dimension, `k_0..k_{n-1}`.
    pub sides: Vec<usize>,
    /// Servers per switch.
    pub servers_per_switch: usize,
}

/// `kind = "torus"`.
pub type TorusConfig = CubeConfig<true>;
/// `kind = "mesh"`.
pub type MeshConfig = CubeConfig<false>;

impl<const WRAP: bool> TopologySpec for CubeConfig<WRAP> {
    fn validate(&self) -> Result<(), ConfigError> {
        if self.sides.is_empty() || self.sides.len() > 16 {
            return Err(ConfigError::value("topology.sides", format!("{:?}", self.sides), "1 to 16 dimensions"));
        }
        if let Some(s) = self.sides.iter().find(|&&s| !(2..=65536).contains(&s)) {
            return Err(ConfigError::value("topology.sides", s, "each side between 2 and 65536"));
        }
        if !(1..=1024).contains(&self.servers_per_switch) {
            return Err(ConfigError::value(
                "topology.servers_per_switch",
                self.servers_per_switch,
                "between 1 and 1024",
            ));
        }
        let (switches, servers) = self.size();
        if switches > (1 << 24) || servers > (1 << 31) {
            return Err(ConfigError::value(
                "topology.sides",
                format!("{:?}", self.sides),
                "at most 2^24 switches and 2^31 servers",
            ));
        }
        Ok(())
    }
    fn build(&self, _seed: u64) -> Result<Arc<dyn Topology>, ConfigError> {
        self.validate()?;
        Ok(Arc::new(Torus::new(&self.sides, self.servers_per_switch, WRAP)))
    }
    fn size(&self) -> (u128, u128) {
        let s = self.sides.iter().fold(1u128, |a, &k| a.saturating_mul(k as u128));
        (s, s.saturating_mul(self.servers_per_switch as u128))
    }
    fn router_ports(&self) -> u128 {
        self.size().0 * (2 * self.sides.len() + self.servers_per_switch) as u128
    }
}

/// A torus (`wrap`) or mesh.
#[derive(Debug, Clone)]
pub struct Torus {
    sides: Vec<usize>,
    stride: Vec<usize>,
    servers: usize,
    wrap: bool,
    switches: usize,
}

impl Torus {
    /// A torus (`wrap = true`) or mesh with these sides and servers per switch.
    pub fn new(sides: &[usize], servers: usize, wrap: bool) -> Self {
        let mut stride = Vec::with_capacity(sides.len());
        let mut acc = 1;
        for &k in sides {
            stride.push(acc);
            acc *= k;
        }
        Torus { sides: sides.to_vec(), stride, servers, wrap, switches: acc }
    }
    /// Whether it has wrap-around links (a torus rather than a mesh).
    pub fn wraps(&self) -> bool {
        self.wrap
    }
    /// Number of dimensions.
    pub fn dims(&self) -> usize {
        self.sides.len()
    }
    /// Side `k_d`.
    pub fn side(&self, d: usize) -> usize {
        self.sides[d]
    }
    /// Coordinate `x_d` of a switch.
    #[inline]
    pub fn coord(&self, sw: SwitchId, d: usize) -> usize {
        (sw as usize / self.stride[d]) % self.sides[d]
    }
    /// The switch with coordinate `d` of `sw` changed to `v`.
    #[inline]
    pub fn with_coord(&self, sw: SwitchId, d: usize, v: usize) -> SwitchId {
        (sw as usize + v * self.stride[d] - self.coord(sw, d) * self.stride[d]) as SwitchId
    }
    /// Signed offset along dimension `d` from `x` to `y` on the shortest way: positive is port
    /// `2d`. On a torus, a tie (`k_d` even, `|dx| = k_d / 2`) goes the positive way.
    #[inline]
    pub fn offset(&self, d: usize, x: usize, y: usize) -> i64 {
        let k = self.sides[d] as i64;
        let dx = y as i64 - x as i64;
        if !self.wrap {
            return dx;
        }
        let fwd = dx.rem_euclid(k);
        if fwd <= k - fwd {
            fwd
        } else {
            fwd - k
        }
    }
    /// Whether the hop through port `port` of `sw` is a wrap-around link (the dateline of
    /// dimension `port / 2`).
    #[inline]
    pub fn crosses_dateline(&self, sw: SwitchId, port: PortId) -> bool {
        let d = port as usize / 2;
        let x = self.coord(sw, d);
        if port.is_multiple_of(2) {
            x + 1 == self.sides[d]
        } else {
            x == 0
        }
    }
}

impl Topology for Torus {
    /// One class per dimension, `dim0`, `dim1`, ... (ports `2d` and `2d + 1`).
    fn series_classes(&self) -> Vec<String> {
        (0..self.dims()).map(|d| format!("dim{d}")).collect()
    }
    fn series_class(&self, _sw: SwitchId, p: PortId) -> u16 {
        p / 2
    }
    fn name(&self) -> String {
        let s: Vec<String> = self.sides.iter().map(|k| k.to_string()).collect();
        format!("{} {} (T={})", if self.wrap { "Torus" } else { "Mesh" }, s.join("x"), self.servers)
    }
    fn num_switches(&self) -> usize {
        self.switches
    }
    #[inline]
    fn switch_ports(&self, _sw: SwitchId) -> usize {
        2 * self.sides.len()
    }
    fn max_switch_ports(&self) -> usize {
        2 * self.sides.len()
    }
    fn uniform_servers(&self) -> Option<usize> {
        Some(self.servers)
    }
    fn neighbour(&self, sw: SwitchId, port: PortId) -> Option<(SwitchId, PortId)> {
        let d = port as usize / 2;
        if d >= self.sides.len() {
            return None;
        }
        let (k, x) = (self.sides[d], self.coord(sw, d));
        let v = if port.is_multiple_of(2) {
            if x + 1 == k && !self.wrap {
                return None;
            }
            (x + 1) % k
        } else {
            if x == 0 && !self.wrap {
                return None;
            }
            (x + k - 1) % k
        };
        Some((self.with_coord(sw, d, v), port ^ 1))
    }
    fn distance(&self, a: SwitchId, b: SwitchId) -> u32 {
        (0..self.sides.len()).map(|d| self.offset(d, self.coord(a, d), self.coord(b, d)).unsigned_abs() as u32).sum()
    }
    fn diameter(&self) -> u32 {
        self.sides.iter().map(|&k| if self.wrap { k / 2 } else { k - 1 } as u32).sum()
    }
    fn distance_sources(&self) -> Vec<(SwitchId, u64)> {
        if self.wrap {
            return vec![(0, self.switches as u64)];
        }
        // Reflections x_d -> k_d - 1 - x_d: one representative per orbit, weighted by its size.
        let mut out = vec![(0 as SwitchId, 1u64)];
        for (d, &k) in self.sides.iter().enumerate() {
            let mut next = Vec::new();
            for &(s, w) in &out {
                for x in 0..k.div_ceil(2) {
                    let orbit = if 2 * x + 1 == k { 1 } else { 2 };
                    next.push((s + (x * self.stride[d]) as SwitchId, w * orbit));
                }
            }
            out = next;
        }
        out
    }
    fn grid(&self) -> Option<Vec<usize>> {
        Some(self.sides.clone())
    }
    fn details(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("wrap_around".into(), self.wrap.into());
        m.insert("dimensions".into(), self.sides.len().into());
        m
    }
    fn view(&self) -> View<'_> {
        View::Torus(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Fabric, FaultSet};

    #[test]
    fn wiring_and_closed_form_distances_match_bfs() {
        for (sides, wrap) in [(vec![4, 3], true), (vec![2, 5], true), (vec![4, 3, 2], false), (vec![5], false)] {
            let t = Torus::new(&sides, 1, wrap);
            let f = Fabric::new(Arc::new(t.clone()), &FaultSet::default());
            let mut diam = 0;
            for s in 0..t.num_switches() as SwitchId {
                for p in 0..t.switch_ports(s) as PortId {
                    if let Some((o, q)) = t.neighbour(s, p) {
                        assert_eq!(t.neighbour(o, q), Some((s, p)), "{sides:?}: ({s},{p})");
                    }
                }
                let d = f.bfs(s);
                for (o, &x) in d.iter().enumerate() {
                    assert_eq!(t.distance(s, o as SwitchId), x, "{sides:?} wrap {wrap}: {s} -> {o}");
                    diam = diam.max(x);
                }
            }
            assert_eq!(t.diameter(), diam);
            let w: u64 = t.distance_sources().iter().map(|x| x.1).sum();
            assert_eq!(w, t.num_switches() as u64);
            let st = f.distance_stats();
            let brute: u64 = (0..t.num_switches() as SwitchId).flat_map(|a| f.bfs(a)).map(|x| x as u64).sum::<u64>();
            let n = t.num_switches() as f64;
            assert!((st.average_distance - brute as f64 / (n * n)).abs() < 1e-12, "{sides:?}");
        }
    }

    #[test]
    fn links_counted_per_dimension() {
        // k-ary n-cube: n k^n links on a torus (k > 2), n (k - 1) k^(n-1) on a mesh.
        let t = Torus::new(&[7, 7, 7], 4, true);
        assert_eq!(crate::topology::fabric::all_links(&t).len(), 3 * 343);
        let m = Torus::new(&[7, 7, 7], 4, false);
        assert_eq!(crate::topology::fabric::all_links(&m).len(), 3 * 6 * 49);
    }
}
