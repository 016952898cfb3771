//! Network topologies: switches, where servers attach, switch-to-switch ports, link classes and
//! distances. One file per family behind [`Topology`]; [`registry`] names them for the config.
//!
//! **Port convention.** Every switch has router ports `0..servers_at(sw) + switch_ports(sw)`: first
//! its servers (router port `s` is the switch's `s`-th server, global id `first_server(sw) + s`),
//! then its switch-to-switch ports (router port `servers_at(sw) + p` is topology port `p`). Routing
//! algorithms only ever name topology ports `p`. Servers are numbered switch by switch, so the
//! servers of a switch are a contiguous id range and a server's switch is found without a table.
//! Switches without servers (the upper levels of trees, HyperZ) simply have `servers_at = 0`.
//!
//! Faults are applied on top by [`Fabric`], which is what routing algorithms and the router read.

pub mod clos;
pub mod distances;
pub mod exceptions;
pub mod dragonfly;
pub mod fabric;
pub mod fattree;
pub mod faults;
pub mod graph;
pub mod hyperx;
pub mod hyperz;
pub mod hyperz_exceptions;
pub mod kautz;
pub mod registry;
pub mod rrg;
pub mod torus;

pub use dragonfly::Dragonfly;
pub use fabric::{Fabric, FaultSet, Targets};
pub use graph::GraphTopology;
pub use hyperx::HyperX;
pub use hyperz::HyperZ;
pub use torus::Torus;

/// Index of a switch, `0..num_switches()`.
pub type SwitchId = u32;
/// Index of a switch-to-switch port on a switch, `0..switch_ports(sw)`.
pub type PortId = u16;

/// Hops from `root` to every switch into `dist` (one entry per switch; [`fabric::UNREACHABLE`]
/// where none): a breadth-first search that takes the switches linked to `s` from
/// `neighbours(s)`, in that order. The one BFS behind [`Fabric::bfs`], the fault model's and
/// Nue's (which reads a graph of its own); `queue` is scratch.
pub fn bfs_hops<I: IntoIterator<Item = SwitchId>>(
    root: SwitchId,
    dist: &mut [u32],
    queue: &mut std::collections::VecDeque<SwitchId>,
    mut neighbours: impl FnMut(SwitchId) -> I,
) {
    dist.fill(fabric::UNREACHABLE);
    dist[root as usize] = 0;
    queue.clear();
    queue.push_back(root);
    while let Some(s) = queue.pop_front() {
        let ds = dist[s as usize];
        for o in neighbours(s) {
            if dist[o as usize] == fabric::UNREACHABLE {
                dist[o as usize] = ds + 1;
                queue.push_back(o);
            }
        }
    }
}

/// What a router port is connected to ([`Topology::port_end`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortEnd {
    /// Port `1` of switch `0`.
    Switch(SwitchId, PortId),
    /// The server with this global id.
    Server(u32),
    /// Nothing (a port the family leaves unused on this switch).
    Unwired,
}

/// The family-specific view of a topology, matched once when a routing is built (never per hop).
#[derive(Debug, Clone, Copy)]
pub enum View<'a> {
    /// A HyperX: coordinates, dimensions, trunks.
    HyperX(&'a HyperX),
    /// A HyperZ or fat tree (a HyperZ without dimensions): levels, zones, Z-node coordinates.
    HyperZ(&'a HyperZ),
    /// A dragonfly: groups, routers in a group, global-link arrangement.
    Dragonfly(&'a Dragonfly),
    /// A torus or mesh (k-ary n-cube): sides, wrap-around.
    Torus(&'a Torus),
    /// Any other graph: routings use distances and ports only.
    Graph,
}

/// A fault-free topology. Implementations are one file each and are wired port by port.
pub trait Topology: Send + Sync {
    /// Short name for reports.
    fn name(&self) -> String;
    /// Number of switches.
    fn num_switches(&self) -> usize;
    /// The same number of servers on every switch, if so (HyperX's `T`). Families that say so get
    /// the five server methods below derived from it; the others (servers on some switches only,
    /// e.g. HyperZ and trees) override all five.
    fn uniform_servers(&self) -> Option<usize> {
        None
    }
    /// Number of servers (endpoints), `0..num_servers()`.
    fn num_servers(&self) -> usize {
        self.num_switches() * self.uniform_servers().unwrap_or(0)
    }
    /// Servers attached to `sw`: its router ports `0..servers_at(sw)`.
    #[inline]
    fn servers_at(&self, _sw: SwitchId) -> usize {
        self.uniform_servers().unwrap_or(0)
    }
    /// Global id of the first server of `sw` (the others follow in order).
    #[inline]
    fn first_server(&self, sw: SwitchId) -> u32 {
        sw * self.uniform_servers().unwrap_or(0) as u32
    }
    /// The switch a server is attached to.
    #[inline]
    fn server_switch(&self, server: u32) -> SwitchId {
        server / self.uniform_servers().unwrap_or(1).max(1) as u32
    }
    /// Switch-to-switch ports of `sw`.
    fn switch_ports(&self, sw: SwitchId) -> usize;
    /// The largest `switch_ports` over all switches.
    fn max_switch_ports(&self) -> usize;
    /// The largest `servers_at` over all switches.
    fn max_servers_at(&self) -> usize {
        self.uniform_servers().unwrap_or(0)
    }
    /// The far end `(switch, port)` of switch-to-switch port `port` of `switch`, or `None` if the
    /// port is unwired.
    fn neighbour(&self, switch: SwitchId, port: PortId) -> Option<(SwitchId, PortId)>;
    /// Names of the link classes this family distinguishes (index = class); `link.class_latency`
    /// keys name them. The default is one class, `"local"`.
    fn link_classes(&self) -> &'static [&'static str] {
        &["local"]
    }
    /// Class of the link behind switch-to-switch port `port` of `switch` (an index into
    /// [`Topology::link_classes`]; both ends of a link agree).
    fn link_class(&self, _switch: SwitchId, _port: PortId) -> u8 {
        0
    }
    /// Names of the classes of switch-to-switch ports that `output.link_series` reports apart
    /// (index = class): finer than [`Topology::link_classes`], which set latencies by config key.
    /// What a user looks at to explain a dip: a HyperX's or a torus's dimensions, a dragonfly's
    /// local and global links, a tree's up and down links per level. The default is one class,
    /// `"link"`.
    fn series_classes(&self) -> Vec<String> {
        vec!["link".into()]
    }
    /// Class of switch-to-switch port `port` of `switch` as an output (an index into
    /// [`Topology::series_classes`]; the two ends of a tree link differ: up at one, down at the other).
    fn series_class(&self, _switch: SwitchId, _port: PortId) -> u16 {
        0
    }
    /// Hop distance between switches in the fault-free topology, computed without tables.
    fn distance(&self, a: SwitchId, b: SwitchId) -> u32;
    /// Diameter of the fault-free topology (switch to switch, over switches that have servers).
    fn diameter(&self) -> u32;
    /// Switches from which breadth-first searches reach every distance of the network once,
    /// with the number of server-bearing switches each stands for (its orbit under the family's
    /// symmetries). Default: every switch with servers, weight 1. HyperX is vertex-transitive, so
    /// one source stands for all.
    fn distance_sources(&self) -> Vec<(SwitchId, u64)> {
        (0..self.num_switches() as SwitchId).filter(|&s| self.servers_at(s) > 0).map(|s| (s, 1)).collect()
    }
    /// Coordinates of the switches for coordinate-aware partitioning (sides, first varying fastest),
    /// if the family has a grid.
    fn grid(&self) -> Option<Vec<usize>> {
        None
    }
    /// Family-specific facts for `hxsim analyze` (e.g. switches, radix and links per level).
    fn details(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
    /// Switches per group when the family has groups (the dragonfly): group `g` is switches
    /// `g * size..(g + 1) * size`. Group traffic patterns (DAVC's adversarial) need it.
    fn group_size(&self) -> Option<usize> {
        None
    }
    /// The family-specific view (see [`View`]).
    fn view(&self) -> View<'_> {
        View::Graph
    }

    /// What router port `router_port` of `sw` connects to (see the module's port convention).
    fn port_end(&self, sw: SwitchId, router_port: usize) -> PortEnd {
        let t = self.servers_at(sw);
        if router_port < t {
            PortEnd::Server(self.first_server(sw) + router_port as u32)
        } else {
            match self.neighbour(sw, (router_port - t) as PortId) {
                Some((o, q)) => PortEnd::Switch(o, q),
                None => PortEnd::Unwired,
            }
        }
    }
    /// `(switch, router port)` of a server.
    fn attachment(&self, server: u32) -> (SwitchId, usize) {
        let sw = self.server_switch(server);
        (sw, (server - self.first_server(sw)) as usize)
    }
}
