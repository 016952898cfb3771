//! A folded Clos with per-level switch counts, as the HyperX paper builds one for its Fig. 7 (Ahn et
//! al., SC09, section 4.1): "The folded Clos (with beta = 0.5) needs three levels. There are 205
//! level 1 switches with 10 uplinks and 20 downlinks; 130 level 2 switches that have 16 uplinks and
//! 16 downlinks; and 80 level 3 switches with 13 downlinks, 2 of them packaged per physical switch
//! so that P = 415."
//!
//! Those counts are not a PGFT (`kind = "fattree"`): 205 leaves of 20 servers are 4100 ports for
//! 4096 servers, and 80 top switches with 13 downlinks cannot take the 130 x 16 = 2080 uplinks of
//! level 2. They are the extended generalized fat tree `XGFT(3; 20, 16, 13; 1, 10, 16)` (Öhring et
//! al.) cut to its first 4096 servers: the full tree has 13 x 16 = 208 leaves, 13 x 10 = 130 level-2
//! and 10 x 16 = 160 level-3 switches; the first 4096 servers fill 205 leaves (the last with 16
//! servers), every level-2 and level-3 switch keeps a leaf below it, and the 160 level-3 switches
//! with 13 downlinks are the paper's 80 "packaged two per physical switch" (26 of 32 ports). So
//! 205 + 130 + 160 / 2 = 415, and beta = 2080 core links / 4096 = 0.51.
//!
//! **Construction** (`kind = "clos"`: `servers`, `down = [m_1..m_h]`, `up = [w_2..w_h]`): the
//! `XGFT(h; m; 1, w)` keeps the first `servers` servers, `ceil(servers / m_1)` leaves, and every
//! switch with a kept leaf below it. A level-`i` switch is `(g, b)`: `g` its subtree (the digits
//! `a_{i+1}..a_h`, `a_{i+1}` fastest), `b` its position among the `W_i = w_2 .. w_i` switches on
//! top of that subtree (digits `b_2..b_i`, `b_2` fastest). Its up port `t` goes to the level-`i+1`
//! switch `(g / m_{i+1}, b + W_i t)`, arriving at that switch's down port `g % m_{i+1}`; so the
//! down port `c` of `(g, b)` leads to `(g m_i + c, b % W_{i-1})`, unwired when that subtree was cut
//! (in the paper's tree, down ports 13..15 of the last ten level-2 switches). Ids are level-major
//! (leaves first, `g W_i + b` within a level); ports are down ports, then up ports; leaf `l` holds
//! servers `l m_1 ..`. For the paper's tree: pods of 16 leaves and 10 level-2 switches, fully
//! connected (13 pods, the last with 13 leaves); level-2 switch `b_2` of every pod goes to the 16
//! level-3 switches `b_2 + 10 t`.
//!
//! **Distances** (closed form, checked against BFS in debug builds and tests): between `x` at level
//! `i` and `y` at level `j >= i`, a path must climb to the lowest level `M >= j` whose subtree holds
//! both (only there can the digits `a_{j+1}..a_M` change), and must dip below the lowest level `l <=
//! i` where their digits `b_l` differ (only below it can `b_l` change), to `l - 1`; dipping first is
//! shorter, so the distance is `(M - i) + (M - j)` without a dip and `(i - l + 1) + (M - l + 1) + (M -
//! j)` with one. Cutting the tree changes no distance: every ancestor of a kept switch is kept, and a
//! dip can follow the kept descendants of `x`.

use super::registry::TopologySpec;
use super::{PortId, SwitchId, Topology};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `[topology] kind = "clos"`: a folded Clos `XGFT(h; down; 1, up)` cut to its first `servers`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClosConfig {
    /// Servers, the first of the full tree's `prod down` (all of them when 0).
    #[serde(default)]
    pub servers: usize,
    /// Down ports per switch at levels `1..h` (`down[0]`: servers per leaf).
    pub down: Vec<usize>,
    /// Up ports per switch at levels `1..h-1` (`h - 1` values).
    #[serde(default)]
    pub up: Vec<usize>,
    /// Top-level switches packaged per physical switch, for the physical switch count of `hxsim
    /// analyze` (the paper's 2); routing sees each logical switch.
    #[serde(default = "one")]
    pub top_per_package: usize,
}

fn one() -> usize {
    1
}

impl ClosConfig {
    fn check(&self) -> Result<(), ConfigError> {
        let h = self.down.len();
        if h == 0 || self.down.contains(&0) {
            return Err(ConfigError::value(
                "topology.down",
                format!("{:?}", self.down),
                "at least one level, each >= 1",
            ));
        }
        if self.up.len() + 1 != h || self.up.contains(&0) {
            return Err(ConfigError::value(
                "topology.up",
                format!("{:?}", self.up),
                format!("one value >= 1 per level below the top: {} for {h} levels", h - 1),
            ));
        }
        let full = self.down.iter().try_fold(1u128, |a, &m| a.checked_mul(m as u128)).unwrap_or(u128::MAX);
        let servers = if self.servers == 0 { full } else { self.servers as u128 };
        if !(2..=full.min(1 << 31)).contains(&servers) {
            return Err(ConfigError::value(
                "topology.servers",
                self.servers,
                format!("between 2 and the full tree's {full} (and 2^31)"),
            ));
        }
        let (switches, _) = self.size();
        if switches > 1 << 24 {
            return Err(ConfigError::value("topology", format!("{switches} switches"), "at most 2^24 switches"));
        }
        if self.top_per_package == 0 {
            return Err(ConfigError::value("topology.top_per_package", 0, "at least 1"));
        }
        Ok(())
    }

    fn shape(&self) -> Shape {
        let full: u128 = self.down.iter().map(|&m| m as u128).product();
        let servers = if self.servers == 0 { full } else { self.servers as u128 };
        Shape::new(&self.down, &self.up, servers as usize)
    }
}

impl TopologySpec for ClosConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        self.check()
    }
    fn build(&self, _seed: u64) -> Result<Arc<dyn Topology>, ConfigError> {
        self.check()?;
        Ok(Arc::new(Clos::new(self.shape(), self.top_per_package)))
    }
    fn size(&self) -> (u128, u128) {
        let s = self.shape();
        (s.count.iter().map(|&c| c as u128).sum(), s.servers as u128)
    }
    fn router_ports(&self) -> u128 {
        let s = self.shape();
        (1..=s.h).map(|i| s.count[i - 1] as u128 * s.radix(i) as u128).sum()
    }
}

/// Per-level products of a cut XGFT (levels 1-based; index `i` of each vector is level `i`).
#[derive(Debug, Clone)]
struct Shape {
    h: usize,
    /// `m_i` (index 0 unused).
    m: Vec<usize>,
    /// `w_i`, parents of a level-`(i-1)` switch (indices 0, 1 unused).
    w: Vec<usize>,
    /// `A_i = m_2 .. m_i`, leaves under a level-`i` subtree.
    a: Vec<usize>,
    /// `W_i = w_2 .. w_i`, switches on top of a level-`i` subtree.
    big_w: Vec<usize>,
    /// Kept switches per level (index `i - 1`).
    count: Vec<usize>,
    servers: usize,
}

impl Shape {
    fn new(down: &[usize], up: &[usize], servers: usize) -> Shape {
        let h = down.len();
        let m: Vec<usize> = std::iter::once(0).chain(down.iter().copied()).collect();
        let w: Vec<usize> = [0, 0].into_iter().chain(up.iter().copied()).collect();
        let (mut a, mut big_w): (Vec<usize>, Vec<usize>) = (vec![0, 1], vec![0, 1]);
        for i in 2..=h {
            a.push(a[i - 1].saturating_mul(m[i]));
            big_w.push(big_w[i - 1].saturating_mul(w[i]));
        }
        let leaves = servers.div_ceil(m[1]);
        let count = (1..=h).map(|i| leaves.div_ceil(a[i]).saturating_mul(big_w[i])).collect();
        Shape { h, m, w, a, big_w, count, servers }
    }
    /// Down ports of a level-`i` switch (leaves: none, their servers are router ports).
    fn downs(&self, i: usize) -> usize {
        if i == 1 {
            0
        } else {
            self.m[i]
        }
    }
    /// Up ports of a level-`i` switch.
    fn ups(&self, i: usize) -> usize {
        if i == self.h {
            0
        } else {
            self.w[i + 1]
        }
    }
    /// Router ports of a level-`i` switch (servers included).
    fn radix(&self, i: usize) -> usize {
        if i == 1 {
            self.m[1] + self.ups(1)
        } else {
            self.downs(i) + self.ups(i)
        }
    }
}

/// A folded Clos: the cut `XGFT(h; m; 1, w)` of the module docs.
#[derive(Debug, Clone)]
pub struct Clos {
    s: Shape,
    /// First switch id of each level (index `i - 1`), and the total at index `h`.
    first: Vec<SwitchId>,
    top_per_package: usize,
}

impl Clos {
    fn new(s: Shape, top_per_package: usize) -> Clos {
        let mut first = vec![0 as SwitchId];
        for c in &s.count {
            first.push(first.last().unwrap() + *c as SwitchId);
        }
        let c = Clos { s, first, top_per_package };
        debug_assert!(c.closed_form_matches_bfs(), "clos closed-form distance disagrees with BFS: {}", c.name());
        c
    }

    /// Level (1-based) of a switch.
    pub fn level(&self, sw: SwitchId) -> usize {
        (1..=self.s.h).find(|&i| sw < self.first[i]).expect("switch id in range")
    }

    /// `(level, g, b)` of a switch.
    fn label(&self, sw: SwitchId) -> (usize, usize, usize) {
        let i = self.level(sw);
        let idx = (sw - self.first[i - 1]) as usize;
        (i, idx / self.s.big_w[i], idx % self.s.big_w[i])
    }

    /// The switch `(g, b)` of level `i`, if kept.
    fn switch(&self, i: usize, g: usize, b: usize) -> Option<SwitchId> {
        let idx = g * self.s.big_w[i] + b;
        (idx < self.s.count[i - 1]).then(|| self.first[i - 1] + idx as SwitchId)
    }

    /// Kept switches per level.
    pub fn switches_per_level(&self) -> &[usize] {
        &self.s.count
    }

    /// Links between level `i` and level `i + 1` (`i = 1..h-1`).
    fn links_above(&self, i: usize) -> usize {
        self.s.count[i - 1] * self.s.ups(i)
    }

    fn closed_form_matches_bfs(&self) -> bool {
        let n = self.num_switches();
        if n > 4096 {
            return true;
        }
        let mut dist = vec![u32::MAX; n];
        let mut queue = std::collections::VecDeque::new();
        for src in 0..n as SwitchId {
            dist.fill(u32::MAX);
            dist[src as usize] = 0;
            queue.push_back(src);
            while let Some(u) = queue.pop_front() {
                for p in 0..self.switch_ports(u) as PortId {
                    if let Some((v, q)) = self.neighbour(u, p) {
                        if self.neighbour(v, q) != Some((u, p)) {
                            return false;
                        }
                        if dist[v as usize] == u32::MAX {
                            dist[v as usize] = dist[u as usize] + 1;
                            queue.push_back(v);
                        }
                    }
                }
            }
            if (0..n).any(|b| dist[b] != self.distance(src, b as SwitchId)) {
                return false;
            }
        }
        true
    }
}

impl Topology for Clos {
    /// Per level and direction: `up1` from level 1 to 2, `down1` from level 2 to 1, `up2`, ...
    fn series_classes(&self) -> Vec<String> {
        (1..self.s.h).flat_map(|i| [format!("up{i}"), format!("down{i}")]).collect()
    }
    fn series_class(&self, sw: SwitchId, p: PortId) -> u16 {
        let i = self.level(sw);
        (if (p as usize) < self.s.downs(i) { 2 * (i - 2) + 1 } else { 2 * (i - 1) }) as u16
    }
    fn name(&self) -> String {
        let list = |v: &[usize]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",");
        format!("clos({}; {}; {})", self.s.servers, list(&self.s.m[1..]), list(&self.s.w[2..]))
    }
    fn num_switches(&self) -> usize {
        self.first[self.s.h] as usize
    }
    fn num_servers(&self) -> usize {
        self.s.servers
    }
    #[inline]
    fn servers_at(&self, sw: SwitchId) -> usize {
        if sw < self.first[1] {
            (self.s.servers - sw as usize * self.s.m[1]).min(self.s.m[1])
        } else {
            0
        }
    }
    #[inline]
    fn first_server(&self, sw: SwitchId) -> u32 {
        if sw < self.first[1] {
            sw * self.s.m[1] as u32
        } else {
            self.s.servers as u32
        }
    }
    #[inline]
    fn server_switch(&self, server: u32) -> SwitchId {
        server / self.s.m[1] as u32
    }
    #[inline]
    fn switch_ports(&self, sw: SwitchId) -> usize {
        let i = self.level(sw);
        self.s.downs(i) + self.s.ups(i)
    }
    fn max_switch_ports(&self) -> usize {
        (1..=self.s.h).map(|i| self.s.downs(i) + self.s.ups(i)).max().unwrap_or(0)
    }
    fn max_servers_at(&self) -> usize {
        self.s.m[1]
    }
    fn uniform_servers(&self) -> Option<usize> {
        (self.s.h == 1 && self.s.servers == self.s.m[1]).then_some(self.s.m[1])
    }
    fn neighbour(&self, sw: SwitchId, p: PortId) -> Option<(SwitchId, PortId)> {
        let (i, g, b) = self.label(sw);
        let p = p as usize;
        let s = &self.s;
        if p < s.downs(i) {
            let below = s.big_w[i - 1];
            let child = self.switch(i - 1, g * s.m[i] + p, b % below)?;
            Some((child, (s.downs(i - 1) + b / below) as PortId))
        } else if p < s.downs(i) + s.ups(i) {
            let t = p - s.downs(i);
            let parent = self.switch(i + 1, g / s.m[i + 1], b + s.big_w[i] * t)?;
            Some((parent, (g % s.m[i + 1]) as PortId))
        } else {
            None
        }
    }
    fn distance(&self, x: SwitchId, y: SwitchId) -> u32 {
        let (lx, ly) = (self.label(x), self.label(y));
        let ((i, gx, bx), (j, gy, by)) = if lx.0 <= ly.0 { (lx, ly) } else { (ly, lx) };
        let s = &self.s;
        // Lowest common subtree level, from the first leaves below each.
        let (fx, fy) = (gx * s.a[i], gy * s.a[j]);
        let top = (j..=s.h).find(|&k| fx / s.a[k] == fy / s.a[k]).unwrap_or(s.h);
        // Lowest b digit (levels 2..=i) that differs.
        let dip = (2..=i).find(|&l| (bx / s.big_w[l - 1]) % s.w[l] != (by / s.big_w[l - 1]) % s.w[l]);
        let (i, j, top) = (i as u32, j as u32, top as u32);
        match dip {
            None => (top - i) + (top - j),
            Some(l) => {
                let low = l as u32 - 1;
                (i - low) + (top - low) + (top - j)
            }
        }
    }
    fn diameter(&self) -> u32 {
        let leaves = self.s.count[0];
        self.distance(0, leaves as SwitchId - 1)
    }
    fn details(&self) -> serde_json::Map<String, serde_json::Value> {
        let s = &self.s;
        let mut m = serde_json::Map::new();
        m.insert("switches_per_level".into(), s.count.clone().into());
        let physical = s.count[..s.h - 1].iter().sum::<usize>() + s.count[s.h - 1].div_ceil(self.top_per_package);
        m.insert("physical_switches".into(), physical.into());
        m.insert("radix_per_level".into(), (1..=s.h).map(|i| s.radix(i)).collect::<Vec<_>>().into());
        let links: Vec<usize> = (1..s.h).map(|i| self.links_above(i)).collect();
        m.insert("links_per_level".into(), links.clone().into());
        if let Some(&core) = links.last() {
            // The paper's beta: links from core switches over the network size (section 4.1).
            m.insert("beta".into(), (core as f64 / s.servers as f64).into());
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clos(servers: usize, down: &[usize], up: &[usize]) -> Clos {
        let c = ClosConfig { servers, down: down.to_vec(), up: up.to_vec(), top_per_package: 2 };
        c.check().unwrap();
        Clos::new(c.shape(), 2)
    }

    #[test]
    fn the_papers_fig_7_folded_clos() {
        // 205 level-1 switches with 20 servers (the last 16) and 10 uplinks, 130 level-2 with 16 down
        // and 16 up, 160 level-3 with 13 down packaged two per switch: P = 415, beta = 2080 / 4096.
        let c = clos(4096, &[20, 16, 13], &[10, 16]);
        assert_eq!(c.switches_per_level(), &[205, 130, 160]);
        let d = c.details();
        assert_eq!(d["physical_switches"], 415);
        assert_eq!(d["radix_per_level"], serde_json::json!([30, 32, 13]));
        assert_eq!(d["links_per_level"], serde_json::json!([2050, 2080]));
        assert_eq!(c.servers_at(204), 16);
        assert_eq!(c.servers_at(203), 20);
        // Level-2 switches use 16 down ports except the last pod's ten, which have 13 leaves.
        let wired = |sw: SwitchId| (0..c.switch_ports(sw) as PortId).filter(|&p| c.neighbour(sw, p).is_some()).count();
        let l2: Vec<usize> = (205..335).map(wired).collect();
        assert!(l2[..120].iter().all(|&k| k == 32) && l2[120..].iter().all(|&k| k == 29), "{l2:?}");
        assert!((335..495).all(|s| wired(s) == 13));
        assert!((0..205).all(|s| wired(s) == 10));
        // Leaves in one pod are 2 hops apart, in different pods 4; the diameter is 4.
        assert_eq!((c.distance(0, 15), c.distance(0, 16), c.distance(0, 204), c.diameter()), (2, 4, 4, 4));
        assert!(c.closed_form_matches_bfs());
    }

    #[test]
    fn closed_form_distances_match_bfs_on_cut_trees() {
        for (servers, down, up) in [
            (0, &[2usize, 3, 2][..], &[2usize, 2][..]),
            (9, &[2, 3, 2], &[2, 2]),
            (7, &[1, 3, 3], &[3, 2]),
            (30, &[3, 2, 2, 3], &[2, 1, 3]),
            (5, &[5], &[]),
            (40, &[4, 4, 4], &[1, 4]),
        ] {
            let c = clos(servers, down, up);
            assert!(c.closed_form_matches_bfs(), "{}", c.name());
        }
    }

    #[test]
    fn minimal_and_valiant_deliver_on_a_cut_tree() {
        use crate::config::parse_str;
        use crate::engine::Progress;
        use crate::sim::{self, RunOptions};
        let text = "[topology]\nkind = \"clos\"\nservers = 58\ndown = [4, 4, 4]\nup = [2, 4]\n";
        for alg in ["minimal", "valiant"] {
            let sets: Vec<String> = [
                format!("routing.algorithm={alg}"),
                "traffic.load=0.2".into(),
                "simulation.warmup_cycles=200".into(),
                "simulation.measure_cycles=600".into(),
            ]
            .into();
            let cfg = parse_str(text, "test", &sets).unwrap();
            let s =
                sim::run(&cfg, &RunOptions { threads: 1, ..Default::default() }, &Progress::default()).unwrap().summary;
            assert!((s.accepted_load - 0.2).abs() < 0.04, "{alg}: accepted {}", s.accepted_load);
        }
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let e = |servers, down: &[usize], up: &[usize]| {
            ClosConfig { servers, down: down.to_vec(), up: up.to_vec(), top_per_package: 1 }
                .check()
                .unwrap_err()
                .to_string()
        };
        assert!(e(0, &[], &[]).contains("topology.down"));
        assert!(e(0, &[4, 4], &[]).contains("topology.up"));
        assert!(e(17, &[4, 4], &[2]).contains("topology.servers"));
    }
}
