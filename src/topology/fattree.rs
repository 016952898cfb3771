//! Fat trees: the parallel-ports generalized fat tree `PGFT(h; z; w; g)` (Zahavi), which includes
//! Öhring et al.'s XGFT (every `g_i = 1`) and Petrini and Vanneschi's k-ary n-trees. It is the Z-node
//! of a HyperZ (SPEC §2.1), so it is built as a [`HyperZ`] without GHC dimensions: the wiring, the
//! port numbering (down, then up), the servers on the leaves and the closed-form distances are
//! HyperZ's. Routings: `nca` (nearest-common-ancestor up/down) and `dmodk` (D-mod-K).

use super::hyperz::{check_size, config_error, counts, router_ports, HyperZ};
use super::registry::TopologySpec;
use super::Topology;
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `[topology] kind = "fattree"`: a parallel-ports generalized fat tree `PGFT(h; z; w; g)` with
/// `w_i = r_i / r_{i-1}`, i.e. a HyperZ without GHC dimensions (SPEC §2.1). A k-ary n-tree is
/// `zones = [k, ..., k]`, `roots = [1, k, ..., k^(n-1)]`; an XGFT has every `internal_links` 1.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FatTreeConfig {
    /// Children per switch at each level, `z_1..z_h` (`z_1` = servers per leaf switch).
    pub zones: Vec<usize>,
    /// Root switches per subtree at each level, `r_1..r_h` (`r_1 = 1`; each divides the next).
    pub roots: Vec<usize>,
    /// Parallel links from a node to each parent, `g_1..g_h` (default all 1; `g_1 = 1`).
    #[serde(default)]
    pub internal_links: Vec<usize>,
}

impl FatTreeConfig {
    fn tree(&self) -> Result<HyperZ, ConfigError> {
        check_size(&[], &self.zones, &self.roots)?;
        let h = self.zones.len();
        let g = if self.internal_links.is_empty() { vec![1; h] } else { self.internal_links.clone() };
        HyperZ::new(Vec::new(), self.zones.clone(), self.roots.clone(), g, vec![Vec::new(); h])
            .map_err(|e| config_error(e, format!("zones {:?}, roots {:?}", self.zones, self.roots)))
    }
}

impl TopologySpec for FatTreeConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        self.tree().map(|_| ())
    }
    fn build(&self, _seed: u64) -> Result<Arc<dyn Topology>, ConfigError> {
        Ok(Arc::new(self.tree()?))
    }
    fn size(&self) -> (u128, u128) {
        counts(&[], &self.zones, &self.roots)
    }
    fn router_ports(&self) -> u128 {
        router_ports(&[], &self.zones, &self.roots, &self.internal_links, 0)
    }
    /// Faulty distances are the closed form plus exceptions ([`super::exceptions`]).
    fn faulty_distance_table(&self) -> bool {
        false
    }
    /// See [`exceptions_per_failed_link`].
    fn exceptions_per_failed_link(&self) -> u128 {
        exceptions_per_failed_link(&self.zones, &self.roots, &self.internal_links)
    }
}

/// A lower bound of the distance exceptions towards the leaves ([`super::exceptions`]) per failed
/// link of the fat tree `PGFT(h; z; w; g)` given by `zones` (`z_1..z_h`), `roots` (`r_1..r_h`,
/// `w_i = r_i / r_{i-1}`) and `internal_links` (`g_1..g_h`, empty: all 1), for any set of distinct
/// failed links, without failed switches, that leaves the tree connected. On the 32-ary 4-tree it
/// is 1,024, about half the ~2,000 per link measured (63.8M exceptions for 31,457 links).
///
/// **Derivation.** Fault-free shortest paths in a fat tree go up to a common ancestor and then
/// down, and the way down is unique: a switch has one child in each zone below it (SPEC §2.3,
/// [`super::hyperz_exceptions`]'s downhill rules), so the down path from a level-`m` switch to a
/// leaf `b` visits, at each level, the switch of `b`'s zone whose root digits are the ancestor's
/// (`X mod r_level`). Take a failed link between `c` at level `l` and its parent `p` at level
/// `l + 1` (with `g_{l+1} = 1`). For every leaf `b` under `c` and every level-`(l+1)` switch `u`
/// whose root digits are `p`'s (`p` itself among them), every shortest path from `u` to `b` goes
/// up from `u` to an ancestor whose root digits extend `u`'s (an up hop only appends a digit), and
/// then down through `p` (the switch of `b`'s level-`(l+1)` zone with `u`'s digits) and over the failed link to `c` (the one
/// child of `p` above `b`): so `d(u, b)` grew, and in a
/// connected network the pair is an exception of `b`'s list. That is `T_l` pairs: the leaves under
/// `c` (`z_2 ... z_l`) times the level-`(l+1)` zones (`z_{l+2} ... z_h`, one such `u` in each), i.e.
/// `T_l = z_2 ... z_h / z_{l+1}`.
///
/// **Why `n` links give at least `n` times the smallest `T_l`.** More faults only lengthen
/// distances, so every pair counted for one link stays an exception (the network stays connected).
/// No pair is counted for two distinct links: its `u` would lie one level above both links'
/// children, so they join the same two levels; `b` would be under both children, so both parents
/// lie in `b`'s level-`(l+1)` zone with `u`'s root digits, which makes them one switch `p`, and
/// `p` has one child in `b`'s level-`l` zone: both links are that one. So no overlap cancels any
/// of them, and the pairs add up.
///
/// A level with parallel links (`g_{l+1} >= 2`) loses no shortest path when one of them fails, so
/// its links add no exception and the bound is 0. A level with one parent per switch
/// (`w_{l+1} = 1`) has bridges, which a connected fault set cannot contain: it is left out of the
/// minimum (0 when every level is). The leaves carry the servers (`z_1 >= 1`), so they are targets
/// whichever routing runs ([`crate::topology::Targets`]).
pub fn exceptions_per_failed_link(zones: &[usize], roots: &[usize], internal_links: &[usize]) -> u128 {
    let above_leaves: u128 = zones.iter().skip(1).map(|&z| z as u128).product();
    let mut least: Option<u128> = None;
    // Links join level `l` and `l + 1`; `zones[l]`, `roots[l]` and `internal_links[l]` are level `l + 1`'s.
    for (l, &z) in zones.iter().enumerate().skip(1) {
        let g = internal_links.get(l).copied().unwrap_or(1);
        let (r_lo, r_hi) = (roots.get(l - 1).copied().unwrap_or(1), roots.get(l).copied().unwrap_or(1));
        let per_link = if g >= 2 {
            0
        } else if r_hi <= r_lo || z == 0 {
            continue;
        } else {
            above_leaves / z as u128
        };
        least = Some(least.map_or(per_link, |m| m.min(per_link)));
    }
    least.unwrap_or(0)
}
