//! Random regular graphs `RRG(N, k, r)`: `N` switches of radix `k`, each with `r` links to other
//! switches and `k - r` servers, wired as a uniformly drawn simple `r`-regular graph (Jellyfish:
//! Singla, Hong, Popa, Godfrey, NSDI 2012, section 3; the DAVC paper evaluates RRG(876, 23, 17),
//! section 7.1). The config names `switches`, `degree` (`r`) and `servers_per_switch` (`k - r`).
//!
//! **Generator** (Steger and Wormald, "Generating random regular graphs quickly", 1999, the
//! algorithm Jellyfish builds on): every switch has `r` free stubs; repeatedly join two stubs drawn
//! uniformly from the free ones if they belong to different, not yet adjacent switches. When no
//! such pair is left but stubs are (a dead end, rare), or the graph comes out disconnected, the
//! generator restarts from scratch, up to [`ATTEMPTS`] times; then it is a config error. The
//! result is a simple, connected, exactly `r`-regular graph, asymptotically uniform.
//!
//! **Seed**: `topology.seed` when given, else the run's master seed, through a stream of its own
//! (so the network does not change when other draws do). Distances come from the table of
//! [`GraphTopology`] (`switches^2` bytes: 0.77 MB for RRG(876)).

use super::graph::{check_servers, GraphTopology, MAX_SWITCHES};
use super::registry::TopologySpec;
use super::{SwitchId, Topology};
use crate::error::ConfigError;
use crate::rng::{below, stream, Purpose, Rng};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Restarts before giving up.
pub const ATTEMPTS: usize = 100;
/// Owner id of the generator's random stream (under [`Purpose::Global`]).
const STREAM: u64 = 0x7272_6700;

/// `[topology] kind = "rrg"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RrgConfig {
    /// Number of switches `N`.
    pub switches: usize,
    /// Switch-to-switch links per switch `r`.
    pub degree: usize,
    /// Servers per switch, `k - r`.
    pub servers_per_switch: usize,
    /// Seed of the graph (default: the run's `seed`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::rng::seed_format::option")]
    #[schemars(with = "Option<u64>")]
    pub seed: Option<u64>,
}

impl TopologySpec for RrgConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        if !(2..=MAX_SWITCHES).contains(&self.switches) {
            return Err(ConfigError::value(
                "topology.switches",
                self.switches,
                format!("between 2 and {MAX_SWITCHES} (the distance table is switches^2 bytes)"),
            ));
        }
        if self.degree == 0 || self.degree >= self.switches {
            return Err(ConfigError::value(
                "topology.degree",
                self.degree,
                format!("between 1 and switches - 1 = {} (a simple graph)", self.switches - 1),
            ));
        }
        if self.degree == 1 && self.switches > 2 {
            return Err(ConfigError::value(
                "topology.degree",
                1,
                "at least 2 when switches > 2 (else it is disconnected)",
            ));
        }
        // Checked before generating: the generator and the distance table's searches grow with
        // switches^2 x degree.
        super::graph::check_table_work(self.switches, self.switches * self.degree / 2)
            .map_err(|e| ConfigError::value("topology.degree", self.degree, e))?;
        if !(self.switches * self.degree).is_multiple_of(2) {
            return Err(ConfigError::value(
                "topology.degree",
                self.degree,
                format!("switches x degree even (every link has two ends), got {} x {}", self.switches, self.degree),
            ));
        }
        check_servers(self.servers_per_switch)
    }
    fn build(&self, seed: u64) -> Result<Arc<dyn Topology>, ConfigError> {
        self.validate()?;
        let seed = self.seed.unwrap_or(seed);
        let mut rng = stream(seed, STREAM, Purpose::Global);
        for attempt in 1..=ATTEMPTS {
            let Some(links) = pairing(self.switches, self.degree, &mut rng) else { continue };
            let mut details = serde_json::Map::new();
            details.insert("degree".into(), self.degree.into());
            details.insert("seed".into(), seed.into());
            details.insert("attempts".into(), attempt.into());
            let name = format!(
                "RRG({}, {}, {}) seed {seed}",
                self.switches,
                self.degree + self.servers_per_switch,
                self.degree
            );
            let g = GraphTopology::new(name, self.switches, &links, self.servers_per_switch, details)
                .map_err(|e| ConfigError::value("topology.switches", self.switches, e))?;
            if g.connected() {
                return Ok(Arc::new(g));
            }
        }
        Err(ConfigError::value(
            "topology.degree",
            self.degree,
            format!(
                "a degree that gives a connected simple graph on {} switches within {ATTEMPTS} attempts",
                self.switches
            ),
        ))
    }
    fn size(&self) -> (u128, u128) {
        (self.switches as u128, (self.switches * self.servers_per_switch) as u128)
    }
    fn router_ports(&self) -> u128 {
        (self.switches * (self.degree + self.servers_per_switch)) as u128
    }
}

/// One attempt of the stub-pairing generator: the links of a simple `d`-regular graph on `n`
/// switches, or `None` at a dead end.
fn pairing(n: usize, d: usize, rng: &mut Rng) -> Option<Vec<(SwitchId, SwitchId)>> {
    let mut stubs: Vec<SwitchId> = (0..n as SwitchId).flat_map(|s| std::iter::repeat_n(s, d)).collect();
    let mut adj: Vec<Vec<SwitchId>> = vec![Vec::with_capacity(d); n];
    let mut links = Vec::with_capacity(n * d / 2);
    let ok = |adj: &[Vec<SwitchId>], u: SwitchId, v: SwitchId| u != v && !adj[u as usize].contains(&v);
    while !stubs.is_empty() {
        let mut misses = 0;
        loop {
            let i = below(rng, stubs.len() as u64) as usize;
            let j = below(rng, stubs.len() as u64) as usize;
            let (u, v) = (stubs[i], stubs[j]);
            if ok(&adj, u, v) {
                let (hi, lo) = if i > j { (i, j) } else { (j, i) };
                stubs.swap_remove(hi);
                stubs.swap_remove(lo);
                adj[u as usize].push(v);
                adj[v as usize].push(u);
                links.push((u.min(v), u.max(v)));
                break;
            }
            misses += 1;
            if misses >= 64 {
                // Is any suitable pair left at all?
                let mut left: Vec<SwitchId> = stubs.clone();
                left.sort_unstable();
                left.dedup();
                let any = left.iter().enumerate().any(|(k, &u)| left[k + 1..].iter().any(|&v| ok(&adj, u, v)));
                if !any {
                    return None;
                }
                misses = 0;
            }
        }
    }
    Some(links)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rrg(n: usize, d: usize, seed: u64) -> Arc<dyn Topology> {
        RrgConfig { switches: n, degree: d, servers_per_switch: 1, seed: None }.build(seed).unwrap()
    }

    #[test]
    fn simple_connected_regular_and_seeded() {
        for (n, d) in [(10, 3), (16, 15), (40, 5), (876, 17)] {
            let t = rrg(n, d, 7);
            let mut links = 0;
            for s in 0..n as SwitchId {
                assert_eq!(t.switch_ports(s), d);
                let mut far: Vec<SwitchId> = (0..d as u16).map(|p| t.neighbour(s, p).unwrap().0).collect();
                assert!(!far.contains(&s), "no self-loop");
                far.dedup();
                assert_eq!(far.len(), d, "no parallel links (ports sorted by far id)");
                for p in 0..d as u16 {
                    let (o, q) = t.neighbour(s, p).unwrap();
                    assert_eq!(t.neighbour(o, q), Some((s, p)));
                    links += 1;
                }
            }
            assert_eq!(links, n * d);
            assert!(t.diameter() < u8::MAX as u32);
        }
        let ends = |t: &Arc<dyn Topology>| (0..17).map(|p| t.neighbour(5, p)).collect::<Vec<_>>();
        assert_eq!(ends(&rrg(876, 17, 7)), ends(&rrg(876, 17, 7)));
        assert_ne!(ends(&rrg(876, 17, 7)), ends(&rrg(876, 17, 8)));
        let own = RrgConfig { switches: 876, degree: 17, servers_per_switch: 6, seed: Some(7) };
        assert_eq!(ends(&own.build(123).unwrap()), ends(&rrg(876, 17, 7)), "topology.seed wins");
    }

    #[test]
    fn bad_keys_are_named() {
        let e = |n, d| RrgConfig { switches: n, degree: d, servers_per_switch: 1, seed: None }.validate().unwrap_err();
        assert!(e(9, 3).to_string().contains("topology.degree"));
        assert!(e(5, 5).to_string().contains("topology.degree"));
        assert!(e(1, 1).to_string().contains("topology.switches"));
        // 16,384 switches of degree 1,000: 2.7 x 10^11 edge visits for the distance table, refused
        // before generating; degree 128 (2^35) is the most at that size.
        let big = e(16384, 1000).to_string();
        assert!(big.contains("topology.degree") && big.contains("2.7e11"), "{big}");
        assert!(e(16384, 129).to_string().contains("edge visits"));
        let ok = RrgConfig { switches: 16384, degree: 128, servers_per_switch: 1, seed: None };
        assert!(ok.validate().is_ok());
    }
}
