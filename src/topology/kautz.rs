//! Kautz graphs `Kautz(d, k)` (Li, Lu, Su, "Graph-Theoretic Analysis of Kautz Topology and DHT
//! Schemes", NPC 2004; the Nue paper, section 2, routes Kautz(7,3) with 2,352 terminals): the
//! switches are the strings `s_1 .. s_k` over the alphabet `{0, .., d}` with no two consecutive
//! symbols equal, `(d + 1) d^(k - 1)` of them, and switch `s_1 s_2 .. s_k` has a directed arc to
//! each `s_2 .. s_k x` with `x != s_k`: out-degree and in-degree `d`, directed diameter `k`.
//!
//! **Bidirectional links.** The simulator's links are bidirectional, so every directed arc becomes
//! one bidirectional link: each switch has exactly `2 d` switch-to-switch ports (its `d` out-arcs
//! and `d` in-arcs), and a pair of opposite arcs (`aba -> bab -> aba`) gives two parallel links.
//! There are `(d + 1) d^k` links. Kautz(7, 3) with 6 servers per switch: 392 switches of radix
//! 20, 2352 servers, 2744 links.
//!
//! Switch numbering: string `s_1 .. s_k` is `s_1 d^(k-1) + sum_{i>=2} t_i d^(k-i)` with
//! `t_i = (s_i - s_{i-1} - 1) mod (d + 1)`, lexicographic in `(s_1, t_2, .., t_k)`. Ports follow the
//! far switch's id ([`GraphTopology`]); distances come from its table (`switches^2` bytes: 0.15 MB
//! for Kautz(7,3)).

use super::graph::{check_servers, GraphTopology, MAX_SWITCHES};
use super::registry::TopologySpec;
use super::{SwitchId, Topology};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `[topology] kind = "kautz"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KautzConfig {
    /// Out-degree `d` (alphabet of `d + 1` symbols).
    pub degree: usize,
    /// String length `k`, the directed diameter.
    pub diameter: usize,
    /// Servers per switch.
    pub servers_per_switch: usize,
}

impl KautzConfig {
    fn switches(&self) -> u128 {
        (self.degree as u128 + 1)
            .saturating_mul((self.degree as u128).saturating_pow(self.diameter.saturating_sub(1) as u32))
    }
}

impl TopologySpec for KautzConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        if !(2..=64).contains(&self.degree) {
            return Err(ConfigError::value("topology.degree", self.degree, "between 2 and 64"));
        }
        if !(1..=16).contains(&self.diameter) {
            return Err(ConfigError::value("topology.diameter", self.diameter, "between 1 and 16"));
        }
        if self.switches() > MAX_SWITCHES as u128 {
            return Err(ConfigError::value(
                "topology.diameter",
                self.diameter,
                format!(
                    "(d + 1) d^(k - 1) at most {MAX_SWITCHES} switches (the distance table is switches^2 bytes), got {}",
                    self.switches()
                ),
            ));
        }
        check_servers(self.servers_per_switch)
    }
    fn build(&self, _seed: u64) -> Result<Arc<dyn Topology>, ConfigError> {
        self.validate()?;
        let (d, k) = (self.degree, self.diameter);
        let mut details = serde_json::Map::new();
        details.insert("directed_diameter".into(), k.into());
        details.insert("out_degree".into(), d.into());
        let g = GraphTopology::new(
            format!("Kautz({d}, {k}) (T={})", self.servers_per_switch),
            self.switches() as usize,
            &arcs(d, k),
            self.servers_per_switch,
            details,
        )
        .map_err(|e| ConfigError::value("topology.diameter", k, e))?;
        Ok(Arc::new(g))
    }
    fn size(&self) -> (u128, u128) {
        let n = self.switches();
        (n, n * self.servers_per_switch as u128)
    }
    fn router_ports(&self) -> u128 {
        self.switches() * (2 * self.degree + self.servers_per_switch) as u128
    }
}

/// The string of switch `id` of `Kautz(d, k)`.
pub fn string(d: usize, k: usize, id: SwitchId) -> Vec<usize> {
    let mut t = vec![0; k];
    let mut x = id as usize;
    for i in (1..k).rev() {
        t[i] = x % d;
        x /= d;
    }
    let mut s = vec![x; k];
    for i in 1..k {
        s[i] = (s[i - 1] + 1 + t[i]) % (d + 1);
    }
    s
}

/// The id of a Kautz string (inverse of [`string`]).
pub fn id(d: usize, s: &[usize]) -> SwitchId {
    let mut x = s[0];
    for w in s.windows(2) {
        x = x * d + (w[1] + d + 1 - w[0] - 1) % (d + 1);
    }
    x as SwitchId
}

/// Every directed arc `(tail, head)` of `Kautz(d, k)`, by tail id then appended symbol.
pub fn arcs(d: usize, k: usize) -> Vec<(SwitchId, SwitchId)> {
    let n = (d + 1) * d.pow(k as u32 - 1);
    let mut out = Vec::with_capacity(n * d);
    for u in 0..n as SwitchId {
        let s = string(d, k, u);
        for x in (0..=d).filter(|&x| x != s[k - 1]) {
            let next: Vec<usize> = s[1..].iter().copied().chain([x]).collect();
            out.push((u, id(d, &next)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_round_trip_and_arcs_shift() {
        let (d, k) = (3, 3);
        let n = 4 * 9;
        for u in 0..n as SwitchId {
            let s = string(d, k, u);
            assert!(s.windows(2).all(|w| w[0] != w[1]) && s.iter().all(|&c| c <= d), "{s:?}");
            assert_eq!(id(d, &s), u);
        }
        let a = arcs(d, k);
        assert_eq!(a.len(), n * d);
        for &(u, v) in &a {
            assert_eq!(string(d, k, u)[1..], string(d, k, v)[..k - 1]);
        }
    }

    #[test]
    fn every_switch_has_2d_ports_and_the_diameter_is_k() {
        for (d, k) in [(2, 3), (3, 2), (7, 3)] {
            let t = KautzConfig { degree: d, diameter: k, servers_per_switch: 1 }.build(0).unwrap();
            for s in 0..t.num_switches() as SwitchId {
                assert_eq!(t.switch_ports(s), 2 * d);
            }
            assert_eq!(t.diameter(), k as u32, "Kautz({d},{k})");
        }
    }
}
