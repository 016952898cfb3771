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
}
