//! Checks of a built network before anything is allocated for a run: what validation of the config
//! alone cannot see.

use crate::config::{Config, ConfigError};
use crate::topology::{Fabric, SwitchId};

/// Every switch must reach every other over the live links: on a network that faults split, some
/// packets can never arrive, and the run would fail (or a routing report a misleading error) later.
/// One breadth-first search from switch 0, `O(links)`.
pub fn check_connected(cfg: &Config, net: &Fabric) -> Result<(), ConfigError> {
    let n = net.num_switches();
    let mut seen = vec![false; n];
    let mut queue = std::collections::VecDeque::from([0 as SwitchId]);
    seen[0] = true;
    let mut reached = 1usize;
    while let Some(s) = queue.pop_front() {
        for p in 0..net.switch_ports(s) as u16 {
            if let Some((o, _)) = net.neighbour(s, p) {
                if !std::mem::replace(&mut seen[o as usize], true) {
                    reached += 1;
                    queue.push_back(o);
                }
            }
        }
    }
    if reached == n {
        return Ok(());
    }
    let cut = seen.iter().position(|&x| !x).unwrap_or(0);
    Err(ConfigError::value(
        "faults.random_links",
        cfg.faults.random_links,
        format!(
            "a number of failed links that leaves the network connected: with seed {} they split it, and {} of the \
             {n} switches (switch {cut}, for one) cannot reach switch 0; use fewer failed links or another seed",
            cfg.seed,
            n - reached
        ),
    ))
}
