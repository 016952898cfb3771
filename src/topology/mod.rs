//! Network topologies: switches, their switch-to-switch ports, and distances.
//!
//! A topology numbers only switch-to-switch ports (`0..switch_ports()`); the router puts its
//! `servers_per_switch()` server ports in front of them (router port `T + p` is topology port `p`).
//! Faults are applied on top by [`Network`], which every routing algorithm reads.

pub mod faults;
pub mod hyperx;
pub mod hyperz;

pub use faults::{FaultSet, Network};
pub use hyperx::HyperX;
pub use hyperz::HyperZ;

/// Index of a switch, `0..num_switches()`.
pub type SwitchId = u32;
/// Index of a switch-to-switch port on a switch, `0..switch_ports()`.
pub type PortId = u16;

/// A fault-free topology. Implementations are one file each and are wired port by port.
pub trait Topology: Send + Sync {
    /// Short name for reports.
    fn name(&self) -> String;
    /// Number of switches.
    fn num_switches(&self) -> usize;
    /// Servers attached to every switch.
    fn servers_per_switch(&self) -> usize;
    /// Switch-to-switch ports per switch (the same on every switch).
    fn switch_ports(&self) -> usize;
    /// The far end `(switch, port)` of port `port` of `switch`, or `None` if the port is unwired.
    fn neighbour(&self, switch: SwitchId, port: PortId) -> Option<(SwitchId, PortId)>;
    /// Hop distance in the fault-free topology, computed without tables.
    fn distance(&self, a: SwitchId, b: SwitchId) -> u32;
    /// Diameter of the fault-free topology.
    fn diameter(&self) -> u32;
    /// The HyperX view, for dimension-aware routings (DOR, DAL, Omnidimensional).
    fn as_hyperx(&self) -> Option<&HyperX> {
        None
    }
}
