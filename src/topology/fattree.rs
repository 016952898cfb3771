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
}
