//! Checks of a built network before anything is allocated for a run: what validation of the config
//! alone cannot see.

use crate::config::{Config, ConfigError};
use crate::topology::{Fabric, SwitchId};

/// Which live servers can reach which, on a network that faults may have split.
#[derive(Debug, Clone, Default)]
pub struct Reachability {
    /// Component of each switch (`u32::MAX` for a failed one) when live servers are split (only
    /// possible with `faults.unreachable = "drop"`); `None` when every live server reaches every other.
    pub component: Option<Vec<u32>>,
    /// Ordered pairs of live servers that cannot reach each other (their traffic is dropped).
    pub unreachable_pairs: u64,
    /// Servers of live switches.
    pub live_servers: u64,
}

/// Every live server must reach every other over the live links, unless `faults.unreachable =
/// "drop"`; and at least two servers must be alive. A breadth-first search per component,
/// `O(links)`. Errors (exit 2) give the number of unreachable ordered pairs of live servers and one
/// example pair.
pub fn check_connected(cfg: &Config, net: &Fabric) -> Result<Reachability, ConfigError> {
    let n = net.num_switches();
    let topo = net.topology();
    let mut of = vec![u32::MAX; n];
    let mut servers: Vec<u64> = Vec::new();
    let mut queue = std::collections::VecDeque::new();
    for root in 0..n as SwitchId {
        if of[root as usize] != u32::MAX || !net.switch_alive(root) {
            continue;
        }
        let c = servers.len() as u32;
        of[root as usize] = c;
        queue.push_back(root);
        let mut count = 0u64;
        while let Some(s) = queue.pop_front() {
            count += net.servers_at(s) as u64;
            for p in 0..net.switch_ports(s) as u16 {
                if let Some((o, _)) = net.neighbour(s, p) {
                    if of[o as usize] == u32::MAX {
                        of[o as usize] = c;
                        queue.push_back(o);
                    }
                }
            }
        }
        servers.push(count);
    }
    let live: u64 = servers.iter().sum();
    if live < 2 {
        return Err(ConfigError::value(
            "faults",
            cfg.faults.describe(),
            format!(
                "a fault set that leaves at least 2 of the {} servers alive: {live} left (failed switches take their \
                 servers with them); fail fewer switches",
                net.num_servers()
            ),
        ));
    }
    let same: u128 = servers.iter().map(|&c| c as u128 * c as u128).sum();
    let unreachable = (live as u128 * live as u128 - same).min(u64::MAX as u128) as u64;
    if unreachable == 0 {
        return Ok(Reachability { component: None, unreachable_pairs: 0, live_servers: live });
    }
    if cfg.faults.unreachable != "drop" {
        let big = (0..servers.len()).max_by_key(|&c| (servers[c], std::cmp::Reverse(c))).unwrap_or(0);
        let other = (0..servers.len()).find(|&c| c != big && servers[c] > 0).unwrap_or(0);
        let first = |c: usize| {
            (0..n)
                .find(|&s| of[s] == c as u32 && net.servers_at(s as SwitchId) > 0)
                .map(|s| (topo.first_server(s as SwitchId), s))
                .unwrap_or((0, 0))
        };
        let ((a, sa), (b, sb)) = (first(big), first(other));
        let parts = servers.iter().filter(|&&c| c > 0).count();
        if !cfg.faults.any() {
            // No fault split it: the topology itself is disconnected (an edge-list file).
            let (key, value) = match cfg.input_files().into_iter().find(|(k, _)| *k == "topology.file") {
                Some((k, f)) => (k, format!("\"{}\"", f.display())),
                None => ("topology", topo.name()),
            };
            return Err(ConfigError::value(
                key,
                value,
                format!(
                    "a connected network: its {live} servers fall into {parts} parts that no link joins (e.g. server \
                     {a} on switch {sa} and server {b} on switch {sb}); or set faults.unreachable = \"drop\" to \
                     simulate without the traffic between them"
                ),
            ));
        }
        return Err(ConfigError::value(
            "faults",
            cfg.faults.describe(),
            format!(
                "a fault set that leaves every live server able to reach every other: it splits the {live} live \
                 servers into {} parts and {unreachable} ordered pairs of them cannot communicate (e.g. server {a} on \
                 switch {sa} and server {b} on switch {sb}); use fewer faults or another faults.seed, or set \
                 faults.unreachable = \"drop\" to simulate without the traffic between them",
                parts
            ),
        ));
    }
    Ok(Reachability { component: Some(of), unreachable_pairs: unreachable, live_servers: live })
}
