//! Dragonfly `DF(p, a, h)` (Kim, Dally, Scott, Abts, "Technology-Driven, Highly-Scalable Dragonfly
//! Topology", ISCA 2008, section 3): groups of `a` routers, every router with `p` servers, `a - 1`
//! local links (the group is a complete graph) and `h` global links; `g = a h + 1` groups, so every
//! pair of groups is joined by exactly one global link (the maximum-size, balanced dragonfly of
//! section 3.1). The DAVC paper (section 7.1) evaluates `DF(6, 12, 6)`: 73 groups, 876 routers of
//! radix 23, 5256 servers.
//!
//! Switch numbering: router `r` of group `G` is switch `G a + r`.
//!
//! Port numbering (switch-to-switch ports; the router puts the `p` server ports first): local
//! ports `0..a - 1` (to the other routers of the group in increasing order, so port `q` leads to
//! router `q` if `q < r`, else `q + 1`), then global ports `a - 1..a - 1 + h`. Global port `k` of
//! router `r` is the group's global link `j = r h + k` (`0 <= j < a h`).
//!
//! **Global-link arrangement** (`arrangement`, which group link `j` of group `G` reaches):
//! - `"palmtree"` (default; the consecutive arrangement, named so by Camarero, Vallejo and
//!   Beivide, "Topological Characterization of Hamming and Dragonfly Networks", TOPC 2014): link `j`
//!   of group `G` goes to group `G + j + 1 (mod g)`, where it is that group's link `a h - 1 - j`.
//!   Rotating every group by one is an automorphism, so one group's routers are the distance
//!   sources of `hxsim analyze`.
//! - `"absolute"` (Kim et al. section 3.1, the arrangement of their Fig. 4): link `j` of group `G`
//!   goes to group `j` if `j < G`, else `j + 1`; there it is link `G` if `G < j + 1`, else `G - 1`.
//!
//! Link classes: `local` and `global` (`link.class_latency.global = 10` gives global cables ten
//! cycles). Distances are closed-form: `0`, `1` within a group; otherwise the shortest of the direct
//! global link, a local hop at either end, or two global hops through a third group (checked
//! against breadth-first search in the tests).

use super::registry::TopologySpec;
use super::{PortId, SwitchId, Topology, View};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The global-link arrangements (see the module doc).
pub const ARRANGEMENTS: &[&str] = &["palmtree", "absolute"];

/// `[topology] kind = "dragonfly"`: `DF(p, a, h)` in Kim et al.'s notation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DragonflyConfig {
    /// Servers per router, `p`.
    pub p: usize,
    /// Routers per group, `a`.
    pub a: usize,
    /// Global links per router, `h`.
    pub h: usize,
    /// Global-link arrangement: `"palmtree"` (default) or `"absolute"`.
    #[serde(default = "default_arrangement")]
    pub arrangement: String,
}

fn default_arrangement() -> String {
    "palmtree".into()
}

impl DragonflyConfig {
    fn groups(&self) -> u128 {
        self.a as u128 * self.h as u128 + 1
    }
}

impl TopologySpec for DragonflyConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=1024).contains(&self.p) {
            return Err(ConfigError::value("topology.p", self.p, "servers per router between 1 and 1024"));
        }
        if !(1..=1024).contains(&self.a) {
            return Err(ConfigError::value("topology.a", self.a, "routers per group between 1 and 1024"));
        }
        if !(1..=1024).contains(&self.h) {
            return Err(ConfigError::value("topology.h", self.h, "global links per router between 1 and 1024"));
        }
        if self.a - 1 + self.h > u16::MAX as usize {
            return Err(ConfigError::value("topology.h", self.h, "a - 1 + h at most 65535 switch ports"));
        }
        if !ARRANGEMENTS.contains(&self.arrangement.as_str()) {
            return Err(ConfigError::value(
                "topology.arrangement",
                format!("\"{}\"", self.arrangement),
                format!("allowed: {}", ARRANGEMENTS.join(", ")),
            ));
        }
        let (switches, servers) = self.size();
        if switches > (1 << 24) || servers > (1 << 31) {
            return Err(ConfigError::value(
                "topology.h",
                self.h,
                format!(
                    "at most 2^24 routers and 2^31 servers, got a (a h + 1) = {switches} routers, {servers} servers"
                ),
            ));
        }
        Ok(())
    }
    fn build(&self, _seed: u64) -> Result<Arc<dyn Topology>, ConfigError> {
        self.validate()?;
        Ok(Arc::new(Dragonfly::new(self.p, self.a, self.h, self.arrangement == "absolute")))
    }
    fn size(&self) -> (u128, u128) {
        let s = self.a as u128 * self.groups();
        (s, s * self.p as u128)
    }
    fn router_ports(&self) -> u128 {
        self.size().0 * (self.p + self.a - 1 + self.h) as u128
    }
}

/// A dragonfly `DF(p, a, h)` with `a h + 1` groups.
#[derive(Debug, Clone)]
pub struct Dragonfly {
    p: usize,
    a: usize,
    h: usize,
    g: usize,
    absolute: bool,
    /// Computed on first use (from the distance sources, `a` or all routers times every router).
    diameter: std::sync::OnceLock<u32>,
}

impl Dragonfly {
    /// `DF(p, a, h)` with the palm-tree arrangement, or Kim et al.'s absolute one.
    pub fn new(p: usize, a: usize, h: usize, absolute: bool) -> Self {
        Dragonfly { p, a, h, g: a * h + 1, absolute, diameter: std::sync::OnceLock::new() }
    }
    /// Servers per router `p`.
    pub fn p(&self) -> usize {
        self.p
    }
    /// Routers per group `a`.
    pub fn a(&self) -> usize {
        self.a
    }
    /// Global links per router `h`.
    pub fn h(&self) -> usize {
        self.h
    }
    /// Number of groups `a h + 1`.
    pub fn groups(&self) -> usize {
        self.g
    }
    /// Group of a switch.
    #[inline]
    pub fn group(&self, sw: SwitchId) -> usize {
        sw as usize / self.a
    }
    /// Router index of a switch within its group.
    #[inline]
    pub fn router(&self, sw: SwitchId) -> usize {
        sw as usize % self.a
    }
    /// Switch of router `r` of group `grp`.
    #[inline]
    pub fn switch(&self, grp: usize, r: usize) -> SwitchId {
        (grp * self.a + r) as SwitchId
    }
    /// Whether topology port `port` is a global link (every router numbers its ports alike).
    #[inline]
    pub fn is_global(&self, port: PortId) -> bool {
        port as usize >= self.a - 1
    }
    /// Local port of router `r` towards router `q` of the same group (`q != r`).
    #[inline]
    pub fn local_port(&self, r: usize, q: usize) -> PortId {
        debug_assert_ne!(r, q);
        (if q < r { q } else { q - 1 }) as PortId
    }
    /// Group link index `j` (`0..a h`) of group `grp` that reaches group `to` (`to != grp`).
    #[inline]
    pub fn link_to_group(&self, grp: usize, to: usize) -> usize {
        debug_assert_ne!(grp, to);
        if self.absolute {
            if to < grp {
                to
            } else {
                to - 1
            }
        } else {
            (to + self.g - grp - 1) % self.g
        }
    }
    /// Far end `(group, link index)` of group link `j` of group `grp`.
    #[inline]
    pub fn global_target(&self, grp: usize, j: usize) -> (usize, usize) {
        if self.absolute {
            let to = if j < grp { j } else { j + 1 };
            (to, if grp < to { grp } else { grp - 1 })
        } else {
            ((grp + j + 1) % self.g, self.a * self.h - 1 - j)
        }
    }
    /// The switch of group `grp` that owns the global link to group `to`, and its port.
    #[inline]
    pub fn gateway(&self, grp: usize, to: usize) -> (SwitchId, PortId) {
        let j = self.link_to_group(grp, to);
        (self.switch(grp, j / self.h), (self.a - 1 + j % self.h) as PortId)
    }
    /// The port of `at` on Kim et al.'s minimal route (local, global, local) towards `to`
    /// (`at != to`): within a group the local link; otherwise the global link to `to`'s group, or the
    /// local link to the router that owns it.
    #[inline]
    pub fn minimal_port(&self, at: SwitchId, to: SwitchId) -> PortId {
        let (ga, gb, r) = (self.group(at), self.group(to), self.router(at));
        if ga == gb {
            return self.local_port(r, self.router(to));
        }
        let (gw, port) = self.gateway(ga, gb);
        if gw == at {
            port
        } else {
            self.local_port(r, self.router(gw))
        }
    }
    /// Switch-to-switch hops of the minimal route from `at` to group `grp`'s switch `to` (0 to 3).
    pub fn minimal_hops(&self, at: SwitchId, to: SwitchId) -> u32 {
        let (ga, gb) = (self.group(at), self.group(to));
        if at == to {
            0
        } else if ga == gb {
            1
        } else {
            let (out, _) = self.gateway(ga, gb);
            let (inn, _) = self.gateway(gb, ga);
            1 + (out != at) as u32 + (inn != to) as u32
        }
    }

    fn compute_diameter(&self) -> u32 {
        let n = (self.a * self.g) as SwitchId;
        let srcs = self.distance_sources();
        srcs.iter().flat_map(|&(s, _)| (0..n).map(move |t| (s, t))).map(|(s, t)| self.distance(s, t)).max().unwrap_or(0)
    }
}

impl Topology for Dragonfly {
    fn name(&self) -> String {
        format!(
            "Dragonfly DF({}, {}, {}) ({} groups, {} arrangement)",
            self.p,
            self.a,
            self.h,
            self.g,
            if self.absolute { "absolute" } else { "palmtree" }
        )
    }
    fn num_switches(&self) -> usize {
        self.a * self.g
    }
    #[inline]
    fn switch_ports(&self, _sw: SwitchId) -> usize {
        self.a - 1 + self.h
    }
    fn max_switch_ports(&self) -> usize {
        self.a - 1 + self.h
    }
    fn uniform_servers(&self) -> Option<usize> {
        Some(self.p)
    }
    fn neighbour(&self, sw: SwitchId, port: PortId) -> Option<(SwitchId, PortId)> {
        let (grp, r, q) = (self.group(sw), self.router(sw), port as usize);
        if q < self.a - 1 {
            let o = if q < r { q } else { q + 1 };
            Some((self.switch(grp, o), self.local_port(o, r)))
        } else if q < self.a - 1 + self.h {
            let (to, j) = self.global_target(grp, r * self.h + q - (self.a - 1));
            Some((self.switch(to, j / self.h), (self.a - 1 + j % self.h) as PortId))
        } else {
            None
        }
    }
    fn link_classes(&self) -> &'static [&'static str] {
        &["local", "global"]
    }
    /// `local` (inside a group) and `global` (between groups), as [`Topology::link_classes`].
    fn series_classes(&self) -> Vec<String> {
        vec!["local".into(), "global".into()]
    }
    fn series_class(&self, _sw: SwitchId, port: PortId) -> u16 {
        self.is_global(port) as u16
    }
    #[inline]
    fn link_class(&self, _sw: SwitchId, port: PortId) -> u8 {
        self.is_global(port) as u8
    }
    fn distance(&self, x: SwitchId, y: SwitchId) -> u32 {
        let (gx, gy) = (self.group(x), self.group(y));
        if x == y {
            return 0;
        }
        if gx == gy {
            return 1;
        }
        let (out, _) = self.gateway(gx, gy);
        let (inn, _) = self.gateway(gy, gx);
        match (out == x, inn == y) {
            (true, true) => return 1,
            (true, false) | (false, true) => return 2,
            _ => {}
        }
        // Two global hops through a third group: x -> c (in group X) -> y.
        let r = self.router(x);
        for k in 0..self.h {
            let (grp, j) = self.global_target(gx, r * self.h + k);
            let c = self.switch(grp, j / self.h);
            if grp != gy && self.gateway(grp, gy).0 == c && self.gateway(gy, grp).0 == y {
                return 2;
            }
        }
        3
    }
    fn diameter(&self) -> u32 {
        *self.diameter.get_or_init(|| self.compute_diameter())
    }
    fn distance_sources(&self) -> Vec<(SwitchId, u64)> {
        if self.absolute {
            (0..self.num_switches() as SwitchId).map(|s| (s, 1)).collect()
        } else {
            // Rotating groups (G -> G + 1) maps the palm tree onto itself.
            (0..self.a as SwitchId).map(|s| (s, self.g as u64)).collect()
        }
    }
    fn details(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("groups".into(), self.g.into());
        m.insert("local_links".into(), (self.g * self.a * (self.a - 1) / 2).into());
        m.insert("global_links".into(), (self.g * self.a * self.h / 2).into());
        m.insert("arrangement".into(), (if self.absolute { "absolute" } else { "palmtree" }).into());
        m
    }
    fn group_size(&self) -> Option<usize> {
        Some(self.a)
    }
    fn view(&self) -> View<'_> {
        View::Dragonfly(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Fabric, FaultSet};

    fn bfs_all(t: &Dragonfly) -> Vec<Vec<u32>> {
        let f = Fabric::new(Arc::new(t.clone()), &FaultSet::default());
        (0..t.num_switches() as SwitchId).map(|s| f.bfs(s)).collect()
    }

    #[test]
    fn wiring_is_symmetric_and_every_group_pair_has_one_global_link() {
        for absolute in [false, true] {
            let t = Dragonfly::new(2, 4, 2, absolute);
            let mut pairs = vec![0u32; t.groups() * t.groups()];
            for s in 0..t.num_switches() as SwitchId {
                for p in 0..t.switch_ports(s) as PortId {
                    let (o, q) = t.neighbour(s, p).unwrap();
                    assert_ne!(o, s);
                    assert_eq!(t.neighbour(o, q), Some((s, p)), "absolute {absolute}: ({s},{p})");
                    assert_eq!(t.link_class(s, p), t.link_class(o, q));
                    assert_eq!(t.is_global(p), t.group(s) != t.group(o));
                    if t.is_global(p) {
                        pairs[t.group(s) * t.groups() + t.group(o)] += 1;
                    }
                }
            }
            for x in 0..t.groups() {
                for y in 0..t.groups() {
                    assert_eq!(pairs[x * t.groups() + y], (x != y) as u32, "groups {x}, {y}");
                }
            }
        }
    }

    #[test]
    fn closed_form_distances_match_bfs() {
        for (p, a, h, absolute) in
            [(1, 4, 2, false), (1, 4, 2, true), (2, 3, 3, false), (1, 1, 3, false), (1, 6, 1, true)]
        {
            let t = Dragonfly::new(p, a, h, absolute);
            let d = bfs_all(&t);
            let mut diam = 0;
            for x in 0..t.num_switches() as SwitchId {
                for y in 0..t.num_switches() as SwitchId {
                    assert_eq!(t.distance(x, y), d[x as usize][y as usize], "DF({p},{a},{h}) {x} -> {y}");
                    assert!(t.minimal_hops(x, y) >= t.distance(x, y));
                    diam = diam.max(d[x as usize][y as usize]);
                }
            }
            assert_eq!(t.diameter(), diam);
        }
    }

    #[test]
    fn minimal_port_follows_local_global_local() {
        let t = Dragonfly::new(1, 4, 2, false);
        for x in 0..t.num_switches() as SwitchId {
            for y in 0..t.num_switches() as SwitchId {
                let (mut at, mut hops) = (x, 0);
                while at != y {
                    at = t.neighbour(at, t.minimal_port(at, y)).unwrap().0;
                    hops += 1;
                }
                assert_eq!(hops, t.minimal_hops(x, y));
                assert!(hops <= 3);
            }
        }
    }
}
