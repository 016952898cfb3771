//! Traffic: destination patterns ([`patterns`]) and injection processes.

pub mod patterns;

pub use patterns::{Pattern, PatternKind};

/// How servers generate packets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Injection {
    /// Open loop: each cycle each server generates a packet with probability `load / packet_size`
    /// (Bernoulli process at `load` phits/cycle/server), drawn as geometric gaps.
    Bernoulli {
        /// Packets per cycle per server.
        packet_rate: f64,
    },
    /// Closed workload: every server sends `packets` packets as fast as its source queue allows.
    Fixed {
        /// Packets per server.
        packets: u64,
    },
    /// A workload with causal dependencies ([`crate::workload`]): servers send the messages their
    /// tasks' programs send, when the operations they require have completed
    /// ([`crate::network::WorkloadPlan`]).
    Workload,
}

/// The `n` servers that take part in the traffic when `traffic.active_servers = n` (the others
/// neither send nor receive), as global ids in increasing order; their positions are the ranks
/// `0..n` the patterns are defined on ([`Pattern::on_active`]).
///
/// The choice spreads them evenly over the switches: with `C_s` the servers of switches `0..s`
/// and `S` all servers, switch `s` keeps its first `k_s = floor(n C_{s+1} / S) - floor(n C_s / S)`
/// servers (by local index). With `T` servers on every one of `P` switches that is `floor(n/P)` or
/// `ceil(n/P)` each, the larger ones spaced evenly along the switch ids. Why: the HyperX paper
/// (Ahn et al., SC09, section 4.1) compares networks at `N = 4096` processors, and the beta = 0.25
/// HyperX of its Fig. 7 has 4802 ports; leaving whole switches idle would make the load per switch
/// (and so per global link) uneven, while an even spread keeps every switch's injection close to
/// `n/P` servers' worth, the network loaded as uniformly as its ports allow (4096 of 4802: 12 on
/// 323 switches and 11 on 20). Deterministic: it reads no seed.
///
/// Errors (for the key `traffic.active_servers`): `n` outside `2..=S`.
pub fn active_servers(topo: &dyn crate::topology::Topology, n: u64) -> Result<Vec<u32>, String> {
    let total = topo.num_servers() as u64;
    if !(2..=total).contains(&n) {
        return Err(format!("between 2 and the number of servers ({total})"));
    }
    // u128: n * C can reach 2^64.
    let quota = |c: u64| (n as u128 * c as u128 / total as u128) as u64;
    let mut ids = Vec::with_capacity(n as usize);
    let mut before = 0u64;
    for s in 0..topo.num_switches() as u32 {
        let t = topo.servers_at(s) as u64;
        let k = quota(before + t) - quota(before);
        let first = topo.first_server(s);
        ids.extend((0..k as u32).map(|w| first + w));
        before += t;
    }
    debug_assert_eq!(ids.len() as u64, n);
    Ok(ids)
}
