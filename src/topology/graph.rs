//! Arbitrary switch graphs: [`GraphTopology`] holds any list of bidirectional switch-to-switch
//! links, with a breadth-first distance table; the random regular graph ([`super::rrg`]) and the
//! Kautz graph ([`super::kautz`]) are built on it, and `kind = "graph"` reads one from an edge-list
//! file, so a real machine's topology can be loaded.
//!
//! **Edge-list format** (`topology.file`; a relative path in a config file is read from the file's
//! folder, see [`crate::config::parse_file_str`]): one link per
//! line, `u v`, two switch ids (0-based, separated by blanks); `#` starts a comment; blank lines
//! are skipped. The network has `1 + the largest id` switches; a line repeated gives parallel
//! links; a link from a switch to itself is an error. Every switch gets `servers_per_switch`
//! servers. Errors name the file and the line.
//!
//! **Ports**: the links of a switch are numbered by the far switch's id, in increasing order
//! (parallel links in the order of the list).
//!
//! **Memory**: there is no closed form for distances, so the topology keeps them in a table of one
//! byte per ordered switch pair, filled by one BFS per switch: `switches^2` bytes (RRG(876) and
//! DF-sized graphs: 0.77 MB; Kautz(7,3), 392 switches: 0.15 MB; the 16384-switch limit: 256 MiB).

use super::registry::TopologySpec;
use super::{PortId, SwitchId, Topology};
use crate::error::ConfigError;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Most switches a table-distance graph may have (the table is `switches^2` bytes).
pub const MAX_SWITCHES: usize = 16384;

/// Most edge visits the distance table's breadth-first searches may take (`switches x 2 links`,
/// `switches^2 x degree` for a regular graph): 2^35, an RRG of 16,384 switches of degree 128.
/// Beyond it the setup would run for a long time with nothing to show (an RRG of 16,384 switches
/// of degree 1,000 needs 2.7 x 10^11, and its generator's adjacency checks `switches x degree^2`):
/// refused up front.
pub const MAX_TABLE_WORK: u128 = 1 << 35;

/// Refuse a graph of `n` switches and `links` links whose distance table needs more than
/// [`MAX_TABLE_WORK`] edge visits.
pub fn check_table_work(n: usize, links: usize) -> Result<(), String> {
    let work = n as u128 * 2 * links as u128;
    if work > MAX_TABLE_WORK {
        return Err(format!(
            "a graph whose distance table takes at most 2^35 = {MAX_TABLE_WORK} edge visits (switches x 2 links); \
             {n} switches and {links} links take {work:.1e}",
            work = work as f64
        ));
    }
    Ok(())
}

/// Distance-table value for "unreachable".
const FAR: u8 = u8::MAX;

/// `[topology] kind = "graph"`: switches and links from an edge-list file (see the module doc).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphConfig {
    /// Path of the edge-list file.
    pub file: String,
    /// Servers per switch.
    pub servers_per_switch: usize,
}

/// Check `servers_per_switch` (shared by the graph families).
pub(super) fn check_servers(servers: usize) -> Result<(), ConfigError> {
    if !(1..=1024).contains(&servers) {
        return Err(ConfigError::value("topology.servers_per_switch", servers, "between 1 and 1024"));
    }
    Ok(())
}

impl GraphConfig {
    /// Read and check the file: `(switches, links)`.
    pub fn read(&self) -> Result<(usize, Links), ConfigError> {
        let text =
            crate::input::read_text(std::path::Path::new(&self.file), crate::input::DATA_MAX_BYTES).map_err(|why| {
                ConfigError::value(
                    "topology.file",
                    format!("\"{}\"", self.file),
                    format!("a readable edge-list file: {why}"),
                )
            })?;
        parse_edge_list(&text)
            .map_err(|(line, why)| ConfigError::value("topology.file", format!("{}:{line}", self.file), why))
    }
}

/// Switch-to-switch links as `(switch, switch)` pairs.
pub type Links = Vec<(SwitchId, SwitchId)>;

/// Parse an edge list into `(switches, links)`; errors are `(line number, what is wrong)`.
pub fn parse_edge_list(text: &str) -> Result<(usize, Links), (usize, String)> {
    let mut links = Vec::new();
    let mut n = 0usize;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() != 2 {
            return Err((i + 1, format!("a link `u v` (two switch ids), got `{line}`")));
        }
        let mut ids = [0 as SwitchId; 2];
        for (k, f) in fields.iter().enumerate() {
            ids[k] = match f.parse::<usize>() {
                Ok(x) if x < MAX_SWITCHES => x as SwitchId,
                _ => return Err((i + 1, format!("switch ids between 0 and {}, got `{f}`", MAX_SWITCHES - 1))),
            };
        }
        if ids[0] == ids[1] {
            return Err((i + 1, format!("a link between two different switches, got `{line}` (a self-loop)")));
        }
        n = n.max(ids[0] as usize + 1).max(ids[1] as usize + 1);
        links.push((ids[0], ids[1]));
    }
    if links.is_empty() {
        return Err((0, "at least one link `u v`, the file has none".into()));
    }
    Ok((n, links))
}

impl TopologySpec for GraphConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        check_servers(self.servers_per_switch)?;
        self.read().map(|_| ())
    }
    fn build(&self, _seed: u64) -> Result<Arc<dyn Topology>, ConfigError> {
        check_servers(self.servers_per_switch)?;
        let (n, links) = self.read()?;
        let mut details = serde_json::Map::new();
        details.insert("file".into(), self.file.clone().into());
        let g = GraphTopology::new(format!("Graph from {}", self.file), n, &links, self.servers_per_switch, details)
            .map_err(|e| ConfigError::value("topology.file", format!("\"{}\"", self.file), e))?;
        Ok(Arc::new(g))
    }
    fn size(&self) -> (u128, u128) {
        // Only used for size checks after validation; an unreadable file is reported by validate.
        let n = self.read().map(|x| x.0).unwrap_or(0) as u128;
        (n, n * self.servers_per_switch as u128)
    }
    fn router_ports(&self) -> u128 {
        let (n, links) = self.read().unwrap_or((0, Vec::new()));
        (n * self.servers_per_switch + 2 * links.len()) as u128
    }
}

/// A switch graph given by its links, with a BFS distance table (see the module doc).
#[derive(Debug, Clone)]
pub struct GraphTopology {
    name: String,
    servers: usize,
    /// Ports of switch `s` are `ends[offsets[s]..offsets[s + 1]]`.
    offsets: Vec<u32>,
    /// Far end `(switch, port)` of every port.
    ends: Vec<(SwitchId, PortId)>,
    max_ports: usize,
    n: usize,
    /// `dist[a * n + b]`, [`FAR`] when unreachable.
    dist: Vec<u8>,
    diameter: u32,
    details: serde_json::Map<String, serde_json::Value>,
}

impl GraphTopology {
    /// The graph on `n` switches with these bidirectional links (parallel links allowed,
    /// self-loops not) and `servers` servers per switch; `details` go to `hxsim analyze`.
    pub fn new(
        name: String,
        n: usize,
        links: &[(SwitchId, SwitchId)],
        servers: usize,
        mut details: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Self, String> {
        if n == 0 || n > MAX_SWITCHES {
            return Err(format!(
                "between 1 and {MAX_SWITCHES} switches (the distance table is switches^2 bytes), got {n}"
            ));
        }
        check_table_work(n, links.len())?;
        // Per switch: (far switch, link index, which end) sorted, so ports follow the far id.
        let mut lists: Vec<Vec<(SwitchId, u32, u8)>> = vec![Vec::new(); n];
        for (i, &(u, v)) in links.iter().enumerate() {
            if u == v || u as usize >= n || v as usize >= n {
                return Err(format!("link {i} ({u}, {v}) is a self-loop or names a switch outside 0..{n}"));
            }
            lists[u as usize].push((v, i as u32, 0));
            lists[v as usize].push((u, i as u32, 1));
        }
        let mut port_of = vec![[0 as PortId; 2]; links.len()];
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u32);
        let mut max_ports = 0;
        for l in lists.iter_mut() {
            l.sort_unstable();
            if l.len() > PortId::MAX as usize {
                return Err(format!("at most {} links per switch, got {}", PortId::MAX, l.len()));
            }
            max_ports = max_ports.max(l.len());
            for (p, &(_, i, e)) in l.iter().enumerate() {
                port_of[i as usize][e as usize] = p as PortId;
            }
            offsets.push(offsets.last().unwrap() + l.len() as u32);
        }
        let ends: Vec<(SwitchId, PortId)> = lists
            .iter()
            .flat_map(|l| l.iter().map(|&(far, i, e)| (far, port_of[i as usize][1 - e as usize])))
            .collect();
        let mut g = GraphTopology {
            name,
            servers,
            offsets,
            ends,
            max_ports,
            n,
            dist: Vec::new(),
            diameter: 0,
            details: serde_json::Map::new(),
        };
        let mut dist = vec![FAR; n * n];
        dist.par_chunks_mut(n).enumerate().for_each(|(a, row)| g_bfs(&g, a as SwitchId, row));
        g.dist = dist;
        g.diameter = g.dist.iter().filter(|&&d| d != FAR).map(|&d| d as u32).max().unwrap_or(0);
        if g.diameter >= FAR as u32 - 1 {
            return Err(format!("a diameter below {}, got {}", FAR - 1, g.diameter));
        }
        details.insert("distance_table_bytes".into(), (n * n).into());
        g.details = details;
        Ok(g)
    }

    /// Whether every switch reaches every other.
    pub fn connected(&self) -> bool {
        !self.dist[..self.n].contains(&FAR)
    }

    /// The far switches of `s`'s ports, in port order.
    pub fn neighbours_of(&self, s: SwitchId) -> impl Iterator<Item = SwitchId> + '_ {
        self.ends[self.offsets[s as usize] as usize..self.offsets[s as usize + 1] as usize].iter().map(|e| e.0)
    }
}

/// BFS from `a` over the links of `g`, into `row` (one byte per switch).
fn g_bfs(g: &GraphTopology, a: SwitchId, row: &mut [u8]) {
    let mut q = std::collections::VecDeque::with_capacity(g.n);
    row[a as usize] = 0;
    q.push_back(a);
    while let Some(s) = q.pop_front() {
        let d = row[s as usize];
        for o in g.neighbours_of(s) {
            if row[o as usize] == FAR {
                row[o as usize] = d.saturating_add(1).min(FAR - 1);
                q.push_back(o);
            }
        }
    }
}

impl Topology for GraphTopology {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn num_switches(&self) -> usize {
        self.n
    }
    #[inline]
    fn switch_ports(&self, sw: SwitchId) -> usize {
        (self.offsets[sw as usize + 1] - self.offsets[sw as usize]) as usize
    }
    fn max_switch_ports(&self) -> usize {
        self.max_ports
    }
    fn uniform_servers(&self) -> Option<usize> {
        Some(self.servers)
    }
    #[inline]
    fn neighbour(&self, sw: SwitchId, port: PortId) -> Option<(SwitchId, PortId)> {
        let (lo, hi) = (self.offsets[sw as usize], self.offsets[sw as usize + 1]);
        let i = lo + port as u32;
        (i < hi).then(|| self.ends[i as usize])
    }
    #[inline]
    fn distance(&self, a: SwitchId, b: SwitchId) -> u32 {
        match self.dist[a as usize * self.n + b as usize] {
            FAR => super::fabric::UNREACHABLE,
            d => d as u32,
        }
    }
    fn diameter(&self) -> u32 {
        self.diameter
    }
    fn details(&self) -> serde_json::Map<String, serde_json::Value> {
        self.details.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_list_errors_name_the_line() {
        assert_eq!(parse_edge_list("# ring\n0 1\n1 2 # tail\n\n2 0\n").unwrap(), (3, vec![(0, 1), (1, 2), (2, 0)]));
        assert_eq!(parse_edge_list("0 1\n1\n").unwrap_err().0, 2);
        assert_eq!(parse_edge_list("0 1\n\n3 3\n").unwrap_err().0, 3);
        assert_eq!(parse_edge_list("0 x\n").unwrap_err().0, 1);
        assert!(parse_edge_list("# nothing\n").is_err());
    }

    #[test]
    fn ports_follow_far_ids_and_parallel_links_pair_up() {
        let links = [(2, 0), (0, 1), (1, 2), (0, 1)];
        let g = GraphTopology::new("t".into(), 3, &links, 1, Default::default()).unwrap();
        assert_eq!(g.neighbours_of(0).collect::<Vec<_>>(), vec![1, 1, 2]);
        for s in 0..3 {
            for p in 0..g.switch_ports(s) as PortId {
                let (o, q) = g.neighbour(s, p).unwrap();
                assert_eq!(g.neighbour(o, q), Some((s, p)));
            }
        }
        assert_eq!(g.diameter(), 1);
        assert!(g.connected());
        let g = GraphTopology::new("t".into(), 4, &[(0, 1), (2, 3)], 1, Default::default()).unwrap();
        assert!(!g.connected());
        assert_eq!(g.distance(0, 3), super::super::fabric::UNREACHABLE);
    }
}
