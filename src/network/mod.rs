//! The network model: input- and output-buffered virtual cut-through routers with virtual channels,
//! credit-based flow control, links, and servers, run as [`crate::engine::Partition`]s.
//!
//! Every switch with its servers is one logical process. Work is done per packet, with exact phit
//! timing (a packet of `P` phits occupies a link for `P` cycles; head and tail times are derived).
//! Each cycle a switch first applies the messages delivered to it for that cycle (arrivals and
//! credits, kept by switch since their delivery: [`NetPartition::step`]), then runs three stages:
//!
//! 1. **Link stage.** An output port whose link is free sends the head packet of one of its VCs
//!    (round robin) if the downstream input VC has a credit (room for a whole packet: VCT). The head
//!    reaches the next input buffer `L` cycles later; the output slot frees when the tail has left,
//!    `P` cycles after the head.
//! 2. **Routing and switch allocation.** Each input port whose crossbar input is free looks at its VCs
//!    (round robin, or random with `allocator = "random"`); the first head packet that is present and
//!    has a candidate with room in the output VC makes a request. Candidates come from the routing
//!    algorithm; the request goes to the candidate with the lowest `Q + P` (SurePath section 3).
//!    Each output port grants one request ([`Allocator`]: the oldest head, ties by round-robin
//!    pointer; an iSLIP-style round-robin pointer; or random; with
//!    `router.intransit_priority`, requests from switch-to-switch inputs first). A grant moves
//!    the packet through the crossbar: its head is in the output buffer `crossbar_latency` cycles
//!    later, and the crossbar input and output stay busy until the tail is through, at `speedup`
//!    phits per cycle but never ahead of the tail's arrival (cut-through). The input VC's credit goes
//!    back upstream when the tail has left the input buffer.
//! 3. **Servers.** Servers generate packets (Bernoulli via geometric gaps, or a fixed workload) into
//!    a bounded source queue, and inject one phit per cycle into their switch's input port (VC 0),
//!    with credits like any link. Ejection ports deliver to servers, which consume one phit per cycle.
//!    With `router.injection_throttle` a server may also be held back ([`Throttle`]); with its
//!    end-to-end window, destination switches acknowledge delivered packets to their source
//!    switches ([`Msg::ack`]) on an idealised control channel that uses no link or buffer.
//!
//! Zero-load latency is therefore `L + H (X + L) + P - 1` for a packet crossing `H` switches
//! (creation to tail arrival), which `tests/model.rs` checks.
//!
//! **Refused requests.** A request to an output whose crossbar is busy is refused, and the head
//! routes again next cycle (as in CAMINOS); on a loaded network that is most requests. A busy output
//! takes no grant, so neither its free cycle nor (upwards) its occupancy can change: while every
//! candidate output of a head is busy, its request is certain to be refused. Each input VC records
//! until when that holds and the input's turn ends there without routing (the refused request would
//! have ended it); with round-robin allocation a whole input whose first head in scan order is in
//! that state is skipped. Only random draws differ from routing every cycle; debug builds route
//! every skipped head and check that it would have been refused.
//!
//! Deliveries of one cycle commute (each input VC receives at most one head per cycle; credits and
//! frees are counters), and all choices draw from per-switch streams, so results are independent of
//! the partitioning. Nothing here allocates per packet once buffers have warmed up.

mod failures;
mod head_cache;
mod levels;
pub mod packet;
mod prefetch;
mod router;
mod series;
mod servers;
mod source_queue;
mod state;
mod tasks;

pub use failures::Stranded;
pub use head_cache::CandidateCache;
pub use prefetch::FetchAhead;
pub use state::{GlobalState, SwitchState};
pub use tasks::{TaskState, WorkloadPlan, NO_TASK};

/// Bytes of run-time state for `tasks` tasks of `ops` operations in all ([`WorkloadPlan`]).
pub fn task_state_bytes(tasks: u64, ops: u64) -> u64 {
    tasks::TaskRun::state_bytes(tasks, ops)
}

use crate::engine::{Cycle, Envelope, Lp, Partition, Scheduler, Status};
use crate::metrics::{SampleSink, Stats};
use crate::rng::{self, geometric_gap, Purpose, Rng};
use crate::routing::{Candidate, CandidateRun, Routing};
use crate::topology::{Fabric, SwitchId};
use crate::traffic::{Injection, Pattern};
use packet::{Packet, Queue, Slab, NIL};
use source_queue::{SourcePool, SourceQueue};
use std::sync::Arc;

/// A message between switches (or from a switch to itself). Serializable because messages that
/// cross a rank boundary travel over MPI.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub enum Msg {
    /// The head of `pkt` arrives at input `port`, VC `vc`.
    Arrival {
        /// Router input port.
        port: u16,
        /// Virtual channel.
        vc: u8,
        /// The packet.
        pkt: Packet,
    },
    /// A slot of the downstream input buffer behind output `port`, VC `vc`, was freed (for a server
    /// port below `T`: the server's injection credit). With `vc` = [`ACK_VC`] and a server's
    /// `port`, an acknowledgement instead ([`Msg::ack`]).
    Credit {
        /// Router output port (or server index).
        port: u16,
        /// Virtual channel.
        vc: u8,
    },
}

/// The `vc` of a [`Msg::Credit`] that is an acknowledgement ([`Msg::ack`]); no port has this many
/// VCs.
pub const ACK_VC: u8 = u8::MAX;

/// The `vc` of a [`Msg::Arrival`] that brings a lost packet back to its source server (`port`,
/// its index at the switch) to be sent again (see `network/failures.rs`): a notice on an idealised control
/// channel, as [`Msg::ack`] is, rather than a variant of its own (see there why).
pub const RESEND_VC: u8 = u8::MAX;

impl Msg {
    /// With `router.injection_throttle = "window"`: a packet of server `server` (its index at the
    /// receiving switch) was delivered to its destination server, and the server's window gets a
    /// slot back. Carried as a credit to the server's port with VC [`ACK_VC`] rather than as a
    /// variant of its own: a third variant costs every message a further test of the tag when it
    /// is delivered (0.2% of the instructions of a run with the window off, measured with
    /// cachegrind), while this costs one test on server credits only.
    pub fn ack(server: u16) -> Msg {
        Msg::Credit { port: server, vc: ACK_VC }
    }
}

/// A router mode chosen by name with a `router.*` key: its values with their names and one-line
/// descriptions, and the name lookups every such key shares.
pub trait RouterOption: Copy + 'static {
    /// The config key.
    const KEY: &'static str;
    /// Every value, with its name under [`RouterOption::KEY`] and a one-line description.
    const ALL: &'static [(Self, &'static str, &'static str)];

    /// The value named `name`.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(_, n, _)| *n == name).map(|&(v, _, _)| v)
    }

    /// Every name.
    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|&(_, n, _)| n).collect()
    }

    /// The value named `name`, or the error naming the key, the value and the names allowed.
    fn parse(name: &str) -> Result<Self, crate::error::ConfigError> {
        Self::from_name(name).ok_or_else(|| {
            crate::error::ConfigError::value(
                Self::KEY,
                format!("\"{name}\""),
                format!("allowed: {}", Self::names().join(", ")),
            )
        })
    }
}

/// Switch allocator: how an output chooses among the requests it receives, and how an input scans
/// its VCs. Names and docs in [`Allocator::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocator {
    /// The oldest head wins: the request whose packet arrived earliest in its input buffer, ties by
    /// the round-robin pointer; inputs scan VCs round robin.
    Age,
    /// Round-robin pointer per output (one past the last granted input), and per input over VCs.
    Islip,
    /// Uniformly random grants, and a random first VC per input.
    Random,
}

impl RouterOption for Allocator {
    const KEY: &'static str = "router.allocator";
    /// Every allocator, with its `router.allocator` name and a one-line description.
    const ALL: &'static [(Allocator, &'static str, &'static str)] = &[
        (Allocator::Age, "age", "oldest head at the switch first, ties round robin (default)"),
        (
            Allocator::Islip,
            "islip",
            "round-robin pointer per output; starves servers when an output mixes transit and injection",
        ),
        (Allocator::Random, "random", "uniformly random grants"),
    ];
}

/// Injection throttling (`router.injection_throttle`), a congestion-management mechanism for the
/// saturation collapse of escape-based routings (docs/model.md, "Congestion management"): a server
/// injects its next packet only while the buffer space its switch watches is free above
/// `router.injection_threshold`. Both variants are local-occupancy injection limitation as in
/// López, Martínez and Duato, "DRIL: Dynamically reduced message injection limitation mechanism
/// for wormhole networks" (ICPP 1998) and Baydal, López and Duato, "A family of mechanisms for
/// congestion control in wormhole networks" (IEEE TPDS 16(9), 2005), with space counted as
/// SurePath's `Q` counts it (output occupancy plus consumed downstream credits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Throttle {
    /// No throttling: a server injects whenever it has a packet and a credit.
    Off,
    /// The switch's switch-to-switch output ports, all VCs: free slots over their capacity.
    Switch,
    /// The useful channels of the packet (DRIL's rule): the routing candidates of the packet at its
    /// source switch outside the escape subnetwork (all candidates if none is outside it).
    Route,
    /// End-to-end window flow control: each server has at most `router.injection_window` packets
    /// unacknowledged, from the cycle its head leaves the server until the destination switch's
    /// acknowledgement of its tail's delivery reaches the source switch ([`Msg::ack`]). The
    /// acknowledgement travels on an idealised control channel (no link bandwidth, no buffers, as
    /// when acknowledgements are piggybacked or sent on a separate class) and takes the zero-load
    /// time of a head over the shortest distance back ([`ModelParams::ack_delay`]).
    Window,
}

impl RouterOption for Throttle {
    const KEY: &'static str = "router.injection_throttle";
    /// Every mode, with its `router.injection_throttle` name and a one-line description.
    const ALL: &'static [(Throttle, &'static str, &'static str)] = &[
        (Throttle::Off, "off", "no injection throttling (default)"),
        (Throttle::Switch, "switch", "inject while the switch's output ports (all VCs) are free above the threshold"),
        (Throttle::Route, "route", "inject while the packet's non-escape candidate VCs are free above the threshold"),
        (Throttle::Window, "window", "at most router.injection_window packets of a server unacknowledged (end to end)"),
    ];
}

/// Which VCs of its switch's input port a server injects into (`router.injection_vcs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectionVcs {
    /// VC 0 only.
    Zero,
    /// The lowest VC with a credit, as CAMINOS's servers do: several of a server's packets can wait
    /// at the switch at once, one per VC.
    Any,
}

impl RouterOption for InjectionVcs {
    const KEY: &'static str = "router.injection_vcs";
    /// Every mode, with its `router.injection_vcs` name and a one-line description.
    const ALL: &'static [(InjectionVcs, &'static str, &'static str)] = &[
        (InjectionVcs::Zero, "zero", "servers inject on VC 0 (default)"),
        (InjectionVcs::Any, "any", "servers inject on the lowest VC with a credit (CAMINOS)"),
    ];
}

/// Which VCs of a server's output port (the ejection port) a packet at its destination switch may
/// enter (`router.ejection_vcs`). `Any` is the default: CAMINOS (the SurePath paper's simulator)
/// offers every VC of the server's port, and with VC 0 only the ejection port's smaller buffer cost
/// 2-3.5% of accepted load at saturation on uniform traffic against CAMINOS (docs/model.md, "Ejection into any VC").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EjectionVcs {
    /// VC 0 only: the ejection port buffers `router.output_buffer_packets` packets.
    Zero,
    /// The lowest VC with room, as CAMINOS's routings offer every VC of the server's port at the
    /// destination: the ejection port buffers `vcs` times as many packets.
    Any,
}

impl RouterOption for EjectionVcs {
    const KEY: &'static str = "router.ejection_vcs";
    /// Every mode, with its `router.ejection_vcs` name and a one-line description.
    const ALL: &'static [(EjectionVcs, &'static str, &'static str)] = &[
        (EjectionVcs::Zero, "zero", "packets are ejected into VC 0 of the server's port (before 2026-11-23)"),
        (
            EjectionVcs::Any,
            "any",
            "packets are ejected into the lowest VC of the server's port with room (default, as CAMINOS)",
        ),
    ];
}

/// The unit of switch allocation (`router.allocation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocation {
    /// One packet at a time per crossbar input port and per crossbar output port; an input offers
    /// one head per turn.
    Port,
    /// Per (input port, VC) and (output port, VC), as CAMINOS's input-output router allocates
    /// (its allocators match `entry_port * vcs + entry_vc` to `requested_port * vcs + requested_vc`,
    /// and every matched pair moves a phit per crossbar cycle): every head requests, and several
    /// VCs of one input or one output cross the crossbar at once.
    Vc,
}

impl RouterOption for Allocation {
    const KEY: &'static str = "router.allocation";
    /// Every mode, with its `router.allocation` name and a one-line description.
    const ALL: &'static [(Allocation, &'static str, &'static str)] = &[
        (Allocation::Port, "port", "one packet per crossbar input and output port at a time (default)"),
        (Allocation::Vc, "vc", "per input VC and output VC, several VCs of a port at once (CAMINOS)"),
    ];
}

/// When a waiting head is routed again (`router.reroute`), with `router.allocation = "port"`. A
/// head's request to an output whose crossbar output is busy is refused; what the head does then
/// is the choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reroute {
    /// At each of its input's turns, from the state it reads then, as CAMINOS's routers do (the
    /// SurePath paper's model): a turn is skipped only while every candidate's crossbar output is
    /// busy, since its request would be refused whatever it chose.
    EachTurn,
    /// Once the crossbar output it chose frees: until then it makes no request and its input's
    /// turns end as its refused requests would have, as in routers that route a head once and
    /// retry the output they chose. An adaptive head then cannot move to another candidate whose
    /// crossbar frees first. On `configs/hyperx-3d-8.toml` (PolSP, load 0.6) a head is selected
    /// 1.09 times per traversal instead of 2.58 (docs/performance.md).
    OutputFrees,
}

impl RouterOption for Reroute {
    const KEY: &'static str = "router.reroute";
    /// Every mode, with its `router.reroute` name and a one-line description.
    const ALL: &'static [(Reroute, &'static str, &'static str)] = &[
        (Reroute::EachTurn, "each-turn", "a refused head is routed again at its input's next turn (default, CAMINOS)"),
        (
            Reroute::OutputFrees,
            "output-frees",
            "a refused head waits for the crossbar output it chose, then is routed again",
        ),
    ];
}

/// Everything a partition needs to know about the run, shared by all partitions.
#[derive(Clone)]
pub struct ModelParams {
    /// The network with faults.
    pub net: Arc<Fabric>,
    /// Routing with its VC policy.
    pub routing: Arc<dyn Routing>,
    /// Traffic pattern.
    pub pattern: Arc<Pattern>,
    /// Injection process.
    pub injection: Injection,
    /// Master seed.
    pub seed: u64,
    /// VCs per port.
    pub vcs: usize,
    /// Packet length, phits.
    pub packet_phits: u64,
    /// Latency of each link class of the topology (see [`crate::topology::Topology::link_classes`]),
    /// cycles.
    pub class_latency: Vec<u64>,
    /// Latency of server links (injection and ejection), cycles.
    pub server_latency: u64,
    /// Crossbar latency, cycles.
    pub crossbar_latency: u64,
    /// Crossbar speedup.
    pub crossbar_speedup: u64,
    /// Input buffer per VC, packets.
    pub input_buffer: u16,
    /// Output buffer per VC, packets.
    pub output_buffer: u16,
    /// Source queue per server, packets.
    pub source_queue: u32,
    /// Switch allocator.
    pub allocator: Allocator,
    /// Requests from switch-to-switch inputs win over requests from servers.
    pub intransit_priority: bool,
    /// Injection throttling.
    pub throttle: Throttle,
    /// Free fraction of the watched space a server needs to inject, with `throttle`.
    pub injection_threshold: f64,
    /// Packets a server may have unacknowledged, with [`Throttle::Window`].
    pub injection_window: u16,
    /// Cycles per hop of an acknowledgement ([`ModelParams::ack_delay`]): the crossbar latency plus
    /// the latency of the switch-to-switch links (the largest, where classes differ).
    pub ack_hop: Cycle,
    /// The most hops between two connected switches (a bound on the distance an acknowledgement
    /// travels; sizes the timing wheel with [`Throttle::Window`]).
    pub ack_max_hops: Cycle,
    /// VCs servers inject into.
    pub injection_vcs: InjectionVcs,
    /// VCs packets are ejected into.
    pub ejection_vcs: EjectionVcs,
    /// Unit of switch allocation.
    pub allocation: Allocation,
    /// When a refused head is routed again.
    pub reroute: Reroute,
    /// Measurement window `[start, end)`.
    pub window: (Cycle, Cycle),
    /// Sample interval, cycles.
    pub sample_cycles: Cycle,
    /// Record the per-port-class series ([`crate::metrics::LinkSeries`], `output.link_series`).
    pub link_series: bool,
    /// Servers that never generate (indexed by global server id): those of failed switches, and
    /// under a permutation those whose destination is dead or unreachable. `None`: every server
    /// generates. They get no generation event at all.
    pub silent: Option<Arc<Vec<bool>>>,
    /// Component of each switch when faults split the live servers and traffic is uniform
    /// (`faults.unreachable = "drop"`): a packet whose destination is in another component is not
    /// generated. `None` otherwise (no per-packet check).
    pub component: Option<Arc<Vec<u32>>>,
    /// Ordered pairs of live servers that cannot reach each other (their traffic is dropped).
    pub unreachable_pairs: u64,
    /// Servers that take part in the traffic: those of live switches, or the `traffic.active_servers`
    /// (the denominator of the accepted load).
    pub live_servers: u64,
    /// The workload and where its tasks run, with [`Injection::Workload`].
    pub workload: Option<Arc<WorkloadPlan>>,
    /// End-to-end retransmission of packets lost to failure events (`faults.retransmit_cycles`,
    /// see `network/failures.rs`); `None`: lost packets are gone.
    pub retransmit: Option<Retransmit>,
}

/// End-to-end retransmission (see `network/failures.rs`): when a source learns of a loss, and how often it
/// sends a packet again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retransmit {
    /// Cycles from a loss until the packet is back in its source's queue (at least the largest
    /// link latency, so that the notice respects the engine's lookahead).
    pub after: Cycle,
    /// Times a packet is sent again before it is given up.
    pub limit: u8,
}

impl ModelParams {
    /// Whether server `v` takes part in the traffic: its switch is alive and it is not
    /// [`ModelParams::silent`].
    pub fn server_live(&self, v: u32) -> bool {
        self.net.server_alive(v) && !self.silent.as_ref().is_some_and(|q| q[v as usize])
    }

    /// Longest delay of any message (sizes the engine's timing wheel).
    pub fn max_delay(&self) -> Cycle {
        let base = (self.packet_phits + self.max_latency() + 1).max(self.retransmit.map_or(0, |r| r.after + 1));
        if self.throttle == Throttle::Window {
            // An acknowledgement is sent when a packet's tail reaches its server (at most a link
            // latency and a packet ahead) and arrives `ack_delay` after that.
            base + self.ack_delay(self.ack_max_hops)
        } else {
            base
        }
    }
    /// Delay of an acknowledgement over `hops` switch-to-switch hops ([`Throttle::Window`]): the
    /// zero-load time of a head over them, `hops (X + L)` as in the zero-load latency of the
    /// module docs, and at least 1 cycle (source and destination at one switch). Where link
    /// latencies differ, `L` is the largest: an acknowledgement between partitions crosses a cut
    /// link, whose latency bounds the engine's lookahead, so no acknowledgement is faster than the
    /// lookahead allows.
    #[inline]
    pub fn ack_delay(&self, hops: Cycle) -> Cycle {
        (hops * self.ack_hop).max(1)
    }
    /// The longest link latency.
    pub fn max_latency(&self) -> Cycle {
        self.class_latency.iter().copied().chain([self.server_latency]).max().unwrap_or(1)
    }
    /// The latency of every link when all are equal (the router then reads no per-port table).
    fn uniform_latency(&self) -> Option<Cycle> {
        let l = self.server_latency;
        self.class_latency.iter().all(|&c| c == l).then_some(l)
    }
    /// Latency of the link behind router port `port` of switch `sw`.
    pub fn port_latency(&self, sw: SwitchId, port: usize) -> Cycle {
        let t = self.net.servers_at(sw);
        if port < t {
            self.server_latency
        } else {
            self.class_latency[self.net.topology().link_class(sw, (port - t) as u16) as usize]
        }
    }
    /// Cycles a packet occupies the crossbar when fully buffered.
    fn crossbar_cycles(&self) -> u64 {
        self.packet_phits.div_ceil(self.crossbar_speedup)
    }
}

/// A server's injection side (its next generation cycle is in [`NetPartition::next_gen`]).
#[derive(Debug, Clone, Copy)]
struct Server {
    queue: SourceQueue,
    /// Packets in `queue` (the source queue's bound is checked at every generation).
    queued: u32,
    link_free: Cycle,
    credits: u16,
    remaining: u64,
}

impl Server {
    /// The cycle from which this server can inject: never with an empty source queue or no credit
    /// (a generation or a credit changes that), else when its link is free.
    #[inline]
    fn ready_at(&self) -> Cycle {
        if self.queue.is_empty() || self.credits == 0 {
            Cycle::MAX
        } else {
            self.link_free
        }
    }
}

/// A credit waiting for its input slot to free ([`NetPartition::credits_due`]): input `port`, VC
/// `vc` of local switch `li`.
#[derive(Debug, Clone, Copy)]
struct CreditDue {
    li: u32,
    port: u16,
    vc: u8,
}

/// A switch's request for the crossbar.
#[derive(Debug, Clone, Copy)]
struct Request {
    in_port: u16,
    in_vc: u8,
    out_port: u16,
    out_vc: u8,
    escape: bool,
    prio: u64,
}

/// Input port state.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
struct InPort {
    /// Cycle from which the crossbar input is free.
    free: Cycle,
    /// VCs with packets.
    vc_mask: u64,
    /// Round-robin pointer over VCs.
    rr: u8,
    /// Low 32 bits of a cycle before which this input's turn is known to end in a refused request
    /// (0: unknown); round-robin allocation only. See [`NetPartition::allocation_stage`].
    refused_until: u32,
    /// Latency of the link behind this port (both directions), cycles; read only when latencies
    /// differ (it fits in the record's padding).
    lat: u16,
}

/// Input VC: its buffer, and until when its head's request is known to be refused.
#[derive(Debug, Clone, Copy, Default)]
struct InVc {
    /// Packets in the buffer.
    q: Queue,
    /// Low 32 bits of the cycle before which every output the head may request has a busy crossbar
    /// output (0: unknown). See [`NetPartition::allocation_stage`].
    refused_until: u32,
}

/// Output port state.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
struct OutPort {
    /// Cycle from which the crossbar output is free.
    xbar_free: Cycle,
    /// Cycle from which the link is free.
    link_free: Cycle,
    /// VC of the packet last sent on the link ([`NO_VC`]: none pending). Its output slot frees when
    /// the tail has left, at `link_free`; rather than a message to itself, the switch reads the
    /// occupancy through [`OutPort::occupancy`] and settles it when the link sends again.
    freeing: u8,
    /// VCs with packets.
    vc_mask: u64,
    /// Sum over VCs of occupancy plus consumed credits, packets (SurePath's port term of `Q`).
    load: u32,
    /// Round-robin pointer over input ports (switch allocation).
    arb: u16,
    /// Round-robin pointer over VCs (link).
    rr: u8,
}

/// "No VC" in [`OutPort::freeing`].
const NO_VC: u8 = u8::MAX;

/// Most bytes a partition spends on its cache of candidate runs, and again on selection's kept
/// costs (larger networks route and cost every evaluation afresh).
const RUN_CACHE_BYTES: usize = 64 << 20;

impl OutPort {
    /// Occupancy at `now` of this port's VC `vc`, whose record is `ov`: its counter less the slot
    /// of the packet last sent if that one has left (freed, not yet settled in the counter).
    #[inline]
    fn occupancy(&self, ov: &OutVc, vc: usize, now: Cycle) -> u16 {
        ov.occ - (self.freeing as usize == vc && self.link_free <= now) as u16
    }
    /// SurePath's cost terms of this port at `now` for inputs of capacity `in_cap`: the part every
    /// VC shares (`in_cap` plus the port's load) and the VC whose last packet has left but is not
    /// yet settled ([`NO_VC`]: none), whose occupancy reads one less. A VC's cost is then
    /// `occupancy + base - credits` ([`OutPort::vc_cost`]).
    #[inline]
    fn cost_terms(&self, in_cap: u32, now: Cycle) -> (u32, u8) {
        let freed = if self.freeing != NO_VC && self.link_free <= now { self.freeing } else { NO_VC };
        (in_cap + self.load - (freed != NO_VC) as u32, freed)
    }
    /// The cost of VC `vc`, whose record is `ov`, from [`OutPort::cost_terms`], or `None` if it
    /// holds `out_cap` packets (full).
    #[inline]
    fn vc_cost(ov: &OutVc, vc: u8, (base, freed): (u32, u8), out_cap: u16) -> Option<u32> {
        let occ = ov.occ - (freed == vc) as u16;
        (occ < out_cap).then(|| occ as u32 + base - ov.cred as u32)
    }
    /// [`OutPort::load`] at `now` (the injection throttle's measure of a port's used space).
    #[inline]
    fn load_at(&self, now: Cycle) -> u32 {
        self.load - (self.freeing != NO_VC && self.link_free <= now) as u32
    }
}

/// Output VC: its buffer and flow control.
#[derive(Debug, Clone, Copy, Default)]
struct OutVc {
    /// Packets in the buffer.
    q: Queue,
    /// Slots of the output buffer reserved or used, packets.
    occ: u16,
    /// Credits: free packet slots in the downstream input VC.
    cred: u16,
}

/// Bytes of the records of one router port with `vcs` VCs: its input and output port records and
/// their VC records.
fn port_record_bytes(vcs: usize) -> usize {
    use std::mem::size_of;
    size_of::<InPort>() + size_of::<OutPort>() + vcs * (size_of::<InVc>() + size_of::<OutVc>())
}

/// Bytes of router and server state a run allocates up front, from the sizes of the records
/// [`NetPartition::new`] allocates: per router port (servers' and switch-to-switch) its input and
/// output records and `vcs` input and output VC records, of which a server's port keeps
/// `server_in_vcs` input VC records (1, or `vcs` with `router.injection_vcs = "any"`); per switch-to-switch port its neighbour
/// entry and link counter; per server its record, generation times and counters; per switch its
/// random streams and bookkeeping. Packets come on top, [`PACKET_BYTES`] each.
pub fn state_bytes(switches: u128, router_ports: u128, servers: u128, vcs: u128, server_in_vcs: u128) -> u128 {
    use std::mem::size_of;
    let per_port = port_record_bytes(vcs as usize) as u128;
    let unused = servers * vcs.saturating_sub(server_in_vcs) * size_of::<InVc>() as u128;
    let links = router_ports.saturating_sub(servers);
    let per_link = (size_of::<(SwitchId, u16)>() + size_of::<u64>()) as u128;
    let per_server = size_of::<Server>() as u128 + 4 * size_of::<u64>() as u128;
    let per_switch = 2 * size_of::<crate::rng::Rng>() as u128 + 6 * size_of::<u64>() as u128;
    router_ports * per_port - unused + links * per_link + servers * per_server + switches * per_switch
}

/// Bytes a packet takes in the packet store (its 64-byte slot: the packet and its queue links).
pub const PACKET_BYTES: u128 = packet::Slab::ENTRY_BYTES as u128;

/// Bytes a server's source queue of `n` packets takes at most: its 8-byte entries in 64-byte
/// chunks (`network/source_queue.rs`; about 10.7 bytes a packet), plus a slab slot of
/// [`PACKET_BYTES`] for each packet, as where they all carry more than a plain entry holds (a
/// route state `init` drew, a workload's receive, a packet sent again).
pub fn source_queue_bytes(n: u64) -> u64 {
    SourcePool::queue_bytes(n) + n * PACKET_BYTES as u64
}

/// The switches (with their servers) of one partition. Per-switch state lives in flat arrays indexed
/// by local switch, port and VC, which keeps it compact and cache friendly.
pub struct NetPartition {
    p: Arc<ModelParams>,
    /// Global ids of the local switches, increasing (the canonical stepping order).
    switches: Vec<SwitchId>,
    /// Local index of every global switch (only meaningful for local ones).
    local_of: Arc<Vec<u32>>,
    /// Servers of each local switch (its router ports `0..t_of[li]`).
    t_of: Vec<u16>,
    /// Local index of the first server of each local switch (`n + 1` entries: server arrays are
    /// indexed `srv_base[li] + s`).
    srv_base: Vec<u32>,
    /// Global id of the first server of each local switch.
    first_server: Vec<u32>,
    /// Stride of per-switch-port arrays: the most switch-to-switch ports of any switch.
    r: usize,
    /// Router ports per switch in the flat arrays: the most of any switch of the network (the same
    /// in every partition, as round-robin pointers wrap at it).
    np: usize,
    /// The latency of every link when all are equal, else 0 (then [`InPort::lat`] holds it).
    uniform_lat: Cycle,
    /// Servers per switch when the same on every switch, else 0 (a destination's switch is then
    /// asked of the topology).
    uniform_t: u32,
    v: usize,
    words: usize,
    slab: Slab,
    /// The servers' source queues ([`source_queue`]): their packets that are only generated take
    /// 8 bytes each there instead of a slab slot.
    srcq: SourcePool,
    /// Input ports, `li * np + port`.
    inp: Vec<InPort>,
    /// Input VCs, at [`NetPartition::in_vc`]: per switch its server ports' [`NetPartition::in_sv`]
    /// records each, then its other ports' `v`.
    inbuf: Vec<InVc>,
    /// Input VC records of a server's port: 1, as servers inject on VC 0, or `v` with
    /// `router.injection_vcs = "any"`. The other VCs of those ports were never used, and on
    /// `configs/hyperx-3d-32.toml` their records took 40 bytes per endpoint.
    in_sv: usize,
    /// Where each local switch's input VCs start in `inbuf` (`n + 1` entries).
    in_base: Vec<usize>,
    in_mask: Vec<u64>,
    /// Output ports, `li * np + port`.
    outp: Vec<OutPort>,
    /// Output VCs (same indexing).
    outvc: Vec<OutVc>,
    out_mask: Vec<u64>,
    /// Far end of each switch-to-switch port, `li * r + p`: the neighbour and its router port.
    nbr: Vec<(SwitchId, u16)>,
    servers: Vec<Server>,
    /// Next generation cycle of each server, `srv_base[li] + s` (apart from [`Server`]: it is checked
    /// every cycle some server of the switch generates, and a few lines hold all of a switch's).
    next_gen: Vec<Cycle>,
    /// Per switch, the earliest next generation of its servers.
    next_gen_min: Vec<Cycle>,
    /// [`Server::ready_at`] of each server, `srv_base[li] + s`: the injection loop reads one cache line
    /// per switch, not every server record.
    server_ready: Vec<Cycle>,
    /// Per switch, the minimum of `server_ready` over its servers.
    inject_at: Vec<Cycle>,
    /// With `router.injection_throttle = "window"`: the packets of each server (indexed as
    /// `servers`) injected and not yet acknowledged; empty otherwise.
    srv_outstanding: Vec<u16>,
    /// With `faults.retransmit_cycles`: the packets each server (indexed as `servers`) sends again
    /// after a loss, waiting at the head of its source queue ([`failures`]); empty otherwise.
    srv_resend: Vec<u32>,
    /// With `router.injection_vcs = "any"`: each server's credits per VC, `(srv_base[li] + s) * v
    /// + vc` ([`Server::credits`] then counts its VCs with a credit); empty otherwise.
    srv_vc_cred: Vec<u16>,
    /// With a pattern that reads it (the all-to-all shift, [`crate::traffic::Pattern::reads_packet_index`]):
    /// the packets each server generated so far, dropped ones included (indexed as `servers`), the `k`
    /// of [`crate::traffic::Pattern::destination_nth`]; empty otherwise.
    srv_generated: Vec<u64>,
    /// With `router.allocation = "vc"`: the cycle from which the crossbar input of each input VC
    /// is free, `(li * np + port) * v + vc`; empty otherwise.
    vc_in_free: Vec<Cycle>,
    /// With `router.allocation = "vc"`: the cycle from which the crossbar output of each output VC
    /// is free (indexed as `outvc`); empty otherwise.
    vc_out_free: Vec<Cycle>,
    rng_traffic: Vec<Rng>,
    rng_router: Vec<Rng>,
    /// Per local switch, the base of its selection tie-breaks ([`crate::rng::tie_seed`]; see
    /// [`NetPartition::head_key`]). Derived from the seed and the switch, so not checkpointed.
    tie_seed: Vec<u64>,
    // Scratch, reused every step.
    cands: Vec<Candidate>,
    runs: Vec<CandidateRun>,
    /// Candidate runs of one head per input port, `(li * np + port) * run_cache_cap ..`: a head's
    /// candidates depend only on its switch and routing state, which do not change while it waits,
    /// so a head that routes again (its request refused, or no candidate with room) reads them
    /// here instead of asking the routing. See [`NetPartition::cached_runs`].
    run_cache: Vec<CandidateRun>,
    /// The input VC whose head's runs [`NetPartition::run_cache`] holds, per input port ([`NO_VC`]:
    /// none). Reset when that head leaves (a grant from its VC).
    run_cache_vc: Vec<u8>,
    /// Number of runs (or classes) cached per input port; for classes, with
    /// `router::ESCAPE_LATER` set where they are the head's routing group's only.
    run_cache_len: Vec<u8>,
    /// Where [`NetPartition::levels`] are kept, the run cache holds each head's candidates as
    /// classes instead ([`levels::CandidateClass`]), [`levels::MAX_CLASSES`] slots per input port
    /// (`run_cache_len` counting them), for heads whose runs form classes.
    class_cache: Vec<levels::CandidateClass>,
    /// Scratch: the classes a routing writes ([`crate::routing::Routing::candidate_classes`]).
    classes: Vec<crate::routing::PortClass>,
    /// Selection's cost levels ([`levels`]): kept for routings that cache candidates, with
    /// allocation per port, on switches of at most [`levels::MAX_PORTS`] switch-to-switch ports,
    /// where they and a cache of classes (`class_cache`, else `head_cache`) fit
    /// [`RUN_CACHE_BYTES`]; off (empty) otherwise.
    levels: levels::CostLevels,
    /// Where the per-input cache of runs (or of classes, with levels) does not fit
    /// [`RUN_CACHE_BYTES`]: a few waiting heads' candidates per switch ([`head_cache`]); off
    /// (empty) otherwise.
    head_cache: head_cache::HeadCache,
    /// With levels: the classes of the head being selected, as the routing wrote them or as the
    /// `head_cache` holds them (with the `head_cache`, `head_len` of them; 0 where its candidates
    /// form none, and selection reads `runs`; with `router::ESCAPE_LATER` set where they are the
    /// routing group's only, as for `run_cache_len`).
    head_classes: [levels::CandidateClass; levels::MAX_CLASSES],
    head_len: u8,
    /// Which candidate cache this partition may use ([`NetPartition::set_candidate_cache`]).
    cache_mode: CandidateCache,
    /// Runs per input port in the cache: 0 when off (a routing without runs, or a network whose
    /// cache would exceed [`RUN_CACHE_BYTES`]), `usize::MAX` until the first routing decides it.
    run_cache_cap: usize,
    reqs: Vec<Request>,
    /// What [`router`]'s selection learnt of each (output port, VC range) of every switch, two
    /// slots per switch-to-switch port (`li * 2 * r ..`), kept across cycles: for routings that
    /// cache candidates (many runs per head, several on one port), on networks where that fits
    /// [`RUN_CACHE_BYTES`]; else empty, and selection learns every run's cost afresh.
    run_costs: Vec<router::RunCost>,
    /// Credits of input slots that free at a later cycle, by that cycle modulo the ring's length
    /// (`due_mask + 1`, a power of two above the longest crossbar time): sent then, by
    /// [`NetPartition::send_due_credits`].
    credits_due: Vec<Vec<CreditDue>>,
    due_mask: usize,
    /// Credits in `credits_due`.
    credits_pending: usize,
    best: Vec<u32>,
    touched: Vec<u32>,
    /// This cycle's messages in delivery order, each with its local switch; applied per switch
    /// just before the switch steps ([`NetPartition::step`]), from `by_switch`.
    inbox: Vec<(Msg, u32)>,
    /// Where each local switch's messages start in `by_switch` (`n + 2` entries: switch `l`'s are
    /// `inbox_start[l]..inbox_start[l + 1]`), set by [`NetPartition::sort_inbox`] from the counts
    /// delivery keeps in it; all 0 between cycles.
    inbox_start: Vec<u32>,
    /// This cycle's messages grouped by local switch, in delivery order within each: a switch
    /// reads its own contiguously.
    by_switch: Vec<Msg>,
    // Statistics.
    /// Counters of this partition.
    pub stats: Stats,
    /// Phits carried by each local switch-to-switch output port in the window.
    pub link_phits: Vec<u64>,
    /// Phits injected by each local server in the window.
    pub server_injected: Vec<u64>,
    /// Phits accepted by each local server in the window.
    pub server_accepted: Vec<u64>,
    /// Receives each finished time-series interval during the run (e.g. for the HDF5 writer).
    pub sample_sink: Option<SampleSink>,
    /// With `output.link_series`: the class of each switch-to-switch port, `li * r + port`
    /// ([`crate::topology::Topology::series_class`]); empty otherwise.
    port_class: Vec<u16>,
    /// With `output.link_series`: the end of the next interval whose buffers are to be counted
    /// ([`series`]); `Cycle::MAX` otherwise.
    next_census: Cycle,
    in_flight: i64,
    last_progress: Cycle,
    undrained_servers: u64,
    failure: Option<String>,
    /// What a head with no candidate does: fail the run (before any failure event), or after one
    /// be dropped and counted, or wait for the pending rebuild ([`failures`]).
    stranded: Stranded,
    /// Losses whose sources are told at the end of this step ([`failures`]).
    notices: Vec<failures::Notice>,
    /// Lost packets back at their source switch, delivered with the messages being applied.
    resent: Vec<(u16, Packet)>,
    /// Where the next window starts and the messages pending for this partition, handed over by
    /// the engine when a run stops at a window end (checkpoints); `None` while running.
    parked: Option<(Cycle, Vec<Envelope<Msg>>)>,
    /// Whether [`NetPartition::step`] fetches the next switches' records ahead ([`FetchAhead`]).
    fetch_ahead: bool,
    /// Whether it also fetches the records of the ports a switch-step re-costs
    /// ([`prefetch::fetches_far`]).
    fetch_far: bool,
    /// The end of the window being simulated ([`Partition::begin_window`]).
    window_end: Cycle,
    /// Deliveries counted with a tail at or after the window's end (see [`LateDelivery`]).
    late: Vec<LateDelivery>,
    /// With a workload: the tasks of the partition's servers.
    tasks: Option<Box<tasks::TaskRun>>,
    /// Scratch: the servers whose tasks have messages to send after this cycle's events.
    wake: Vec<tasks::Wake>,
}

/// A delivery counted before its tail arrived: the statistics count a packet when it leaves its
/// last switch, at its tail's arrival cycle `tail`, which may lie beyond the window being
/// simulated. A run stopped at that window's end (a signal) has not delivered it:
/// [`NetPartition::uncount_late`] takes such deliveries back out, so that a stopped run counts
/// what a complete run of the same cycles counts. Kept only for deliveries whose tail is at or after
/// the current window's end (those of the last `link latency + packet length` cycles of a window),
/// and dropped at the next window's end once their tail is inside it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LateDelivery {
    tail: Cycle,
    latency: Cycle,
    /// Switch-to-switch hops plus one (a route's hop count is a `u16`); 24 bytes an entry, as at
    /// 1-cycle windows every delivery of the last packet time is one.
    hops: u32,
    /// Local index of the destination server.
    server: u32,
}

/// The set bits of a word, lowest first: the VCs of a VC mask.
struct BitIter(u64);

impl Iterator for BitIter {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            None
        } else {
            let i = self.0.trailing_zeros() as usize;
            self.0 &= self.0 - 1;
            Some(i)
        }
    }
}

/// `f` of each set bit of `words` (bit `b` of word `w` is `64 w + b`), increasing: the ports of a
/// switch's `in_mask` or `out_mask` slice. Nested loops rather than a `flat_map` over the words,
/// which executed 4% more instructions per traversal in the prefetch and took more CPU.
#[inline(always)]
fn for_each_set_bit(words: &[u64], mut f: impl FnMut(usize)) {
    for (w, &word) in words.iter().enumerate() {
        for b in BitIter(word) {
            f(w * 64 + b);
        }
    }
}

#[inline]
fn set_bit(words: &mut [u64], i: usize) {
    words[i / 64] |= 1 << (i % 64);
}
#[inline]
fn clear_bit(words: &mut [u64], i: usize) {
    words[i / 64] &= !(1 << (i % 64));
}

impl NetPartition {
    /// The partition owning `switches` (global ids, increasing).
    pub fn new(p: Arc<ModelParams>, switches: Vec<SwitchId>, local_of: Arc<Vec<u32>>) -> Self {
        let net = &p.net;
        let topo = net.topology();
        let r = net.max_switch_ports();
        let np = net.max_router_ports();
        let v = p.vcs;
        let n = switches.len();
        let words = np.div_ceil(64);
        let uniform_lat = p.uniform_latency().unwrap_or(0);
        let mut nbr = vec![(SwitchId::MAX, 0u16); n * r];
        let mut outvc = vec![OutVc::default(); n * np * v];
        let mut inp = vec![InPort::default(); n * np];
        let mut t_of = Vec::with_capacity(n);
        let mut srv_base = Vec::with_capacity(n + 1);
        let mut first_server = Vec::with_capacity(n);
        let mut total_servers = 0u32;
        for (li, &sw) in switches.iter().enumerate() {
            let t = net.servers_at(sw);
            t_of.push(t as u16);
            srv_base.push(total_servers);
            first_server.push(if t > 0 { topo.first_server(sw) } else { 0 });
            total_servers += t as u32;
            for port in 0..net.switch_ports(sw) {
                if let Some((o, q)) = net.neighbour(sw, port as u16) {
                    nbr[li * r + port] = (o, (net.servers_at(o) + q as usize) as u16);
                }
            }
            for port in 0..np {
                inp[li * np + port].lat =
                    if port < t + net.switch_ports(sw) { p.port_latency(sw, port) as u16 } else { 0 };
                for vc in 0..v {
                    // Servers consume at link rate, so ejection ports never run out of credits.
                    outvc[(li * np + port) * v + vc].cred = if port < t { u16::MAX } else { p.input_buffer };
                }
            }
        }
        srv_base.push(total_servers);
        let ns = total_servers as usize;
        let (remaining, rate) = match p.injection {
            Injection::Fixed { packets } => (packets, 0.0),
            Injection::Bernoulli { packet_rate } => (0, packet_rate),
            Injection::Workload => (0, 0.0),
        };
        let mut rng_traffic: Vec<Rng> =
            switches.iter().map(|&s| rng::stream(p.seed, s as u64, Purpose::Traffic)).collect();
        let rng_router = switches.iter().map(|&s| rng::stream(p.seed, s as u64, Purpose::Router)).collect();
        let tie_seed = switches.iter().map(|&s| rng::tie_seed(p.seed, s as u64)).collect();
        let mut servers = Vec::with_capacity(ns);
        let mut next_gen = Vec::with_capacity(ns);
        let mut next_gen_min = vec![Cycle::MAX; n];
        let mut senders = 0u64;
        for li in 0..n {
            for s in 0..t_of[li] {
                // A silent server (dead, or with no reachable destination) never generates.
                if let Some(q) = &p.silent {
                    if q[(first_server[li] + s as u32) as usize] {
                        next_gen.push(Cycle::MAX);
                        servers.push(Server {
                            queue: SourceQueue::default(),
                            queued: 0,
                            link_free: 0,
                            credits: p.input_buffer,
                            remaining: 0,
                        });
                        continue;
                    }
                }
                senders += 1;
                let first = match p.injection {
                    Injection::Fixed { .. } => 0,
                    Injection::Bernoulli { .. } => geometric_gap(&mut rng_traffic[li], rate) - 1,
                    // Woken by its task ([`NetPartition::wake_servers`]).
                    Injection::Workload => Cycle::MAX,
                };
                next_gen_min[li] = next_gen_min[li].min(first);
                next_gen.push(first);
                servers.push(Server {
                    queue: SourceQueue::default(),
                    queued: 0,
                    link_free: 0,
                    credits: p.input_buffer,
                    remaining,
                });
            }
        }
        let undrained_servers = if remaining > 0 { senders } else { 0 };
        let any_vc = p.injection_vcs == InjectionVcs::Any;
        let in_sv = if any_vc { v } else { 1 };
        let in_base: Vec<usize> = std::iter::once(0)
            .chain(t_of.iter().scan(0usize, |b, &t| {
                *b += t as usize * in_sv + (np - t as usize) * v;
                Some(*b)
            }))
            .collect();
        if any_vc {
            // `credits` counts the VCs with a credit: all of them.
            for srv in servers.iter_mut() {
                srv.credits = v as u16;
            }
        }
        let per_vc = p.allocation == Allocation::Vc;
        // Selection's costs kept across cycles (see `run_costs`), where the routing's candidates
        // are worth caching and the cost records fit.
        // Cost levels, and a cache of classes they need (one per input, or a few per switch),
        // each within the cache budget.
        let classes_fit = router::class_cache_fits(topo.num_switches(), np)
            || head_cache::HeadCache::bytes_within(n, RUN_CACHE_BYTES) > 0;
        let use_levels = p.routing.keep_costs()
            && !per_vc
            && r <= levels::MAX_PORTS
            && levels::CostLevels::bytes(n, r) <= RUN_CACHE_BYTES
            && classes_fit;
        let keep_costs = !use_levels && router::keeps_costs(&*p.routing, n, r);
        // A grant frees its input slot at most a packet's (or crossbar's) time later.
        let due_ring = (p.packet_phits.max(p.crossbar_cycles()) as usize + 1).next_power_of_two();
        let mut part = NetPartition {
            t_of,
            srv_base,
            first_server,
            r,
            np,
            v,
            words,
            uniform_lat,
            uniform_t: topo.uniform_servers().unwrap_or(0) as u32,
            slab: Slab::default(),
            srcq: SourcePool::default(),
            inp,
            inbuf: vec![InVc::default(); in_base[n]],
            in_sv,
            in_base,
            in_mask: vec![0; n * words],
            outp: vec![OutPort { freeing: NO_VC, ..OutPort::default() }; n * np],
            outvc,
            out_mask: vec![0; n * words],
            nbr,
            servers,
            next_gen,
            next_gen_min,
            server_ready: vec![Cycle::MAX; ns],
            inject_at: vec![Cycle::MAX; n],
            srv_outstanding: if p.throttle == Throttle::Window { vec![0; ns] } else { Vec::new() },
            srv_resend: if p.retransmit.is_some() { vec![0; ns] } else { Vec::new() },
            srv_vc_cred: if any_vc { vec![p.input_buffer; ns * v] } else { Vec::new() },
            srv_generated: if p.pattern.reads_packet_index() { vec![0; ns] } else { Vec::new() },
            vc_in_free: if per_vc { vec![0; n * np * v] } else { Vec::new() },
            vc_out_free: if per_vc { vec![0; n * np * v] } else { Vec::new() },
            rng_traffic,
            rng_router,
            tie_seed,
            cands: Vec::with_capacity(4 * np),
            runs: Vec::with_capacity(4 * np),
            run_cache: Vec::new(),
            run_cache_vc: Vec::new(),
            run_cache_len: Vec::new(),
            class_cache: Vec::new(),
            classes: Vec::with_capacity(levels::MAX_CLASSES),
            levels: if use_levels {
                levels::CostLevels::new(n, r, p.routing.escape_penalty_floor())
            } else {
                Default::default()
            },
            run_cache_cap: usize::MAX,
            head_cache: head_cache::HeadCache::default(),
            head_classes: [levels::CandidateClass::default(); levels::MAX_CLASSES],
            head_len: 0,
            cache_mode: CandidateCache::Auto,
            reqs: Vec::with_capacity(np),
            run_costs: if keep_costs { vec![router::RunCost::default(); n * 2 * r] } else { Vec::new() },
            credits_due: (0..due_ring).map(|_| Vec::new()).collect(),
            due_mask: due_ring - 1,
            credits_pending: 0,
            best: vec![NIL; np * v],
            touched: Vec::with_capacity(np),
            inbox: Vec::new(),
            inbox_start: vec![0; n + 2],
            by_switch: Vec::new(),
            stats: Stats { vc_phits: vec![0; v], ..Stats::default() },
            link_phits: vec![0; n * r],
            server_injected: vec![0; ns],
            server_accepted: vec![0; ns],
            sample_sink: None,
            port_class: Vec::new(),
            next_census: Cycle::MAX,
            in_flight: 0,
            last_progress: 0,
            undrained_servers,
            failure: None,
            stranded: Stranded::Fail,
            notices: Vec::new(),
            resent: Vec::new(),
            parked: None,
            fetch_ahead: false,
            fetch_far: false,
            window_end: 0,
            late: Vec::new(),
            tasks: None,
            wake: Vec::new(),
            switches,
            local_of,
            p,
        };
        part.cost_all_ports(0);
        part.set_fetch_ahead(FetchAhead::Auto);
        part.start_link_series();
        if let Some(plan) = &part.p.workload {
            let servers: Vec<u32> = (0..n)
                .flat_map(|li| (0..part.t_of[li] as u32).map(move |s| (li, s)))
                .map(|(li, s)| part.first_server[li] + s)
                .collect();
            let mut run = tasks::TaskRun::new(plan.clone(), servers.into_iter());
            run.start(&mut part.wake);
            part.tasks = Some(Box::new(run));
            part.wake_servers();
        }
        part
    }

    /// Let the servers in [`NetPartition::wake`] generate their tasks' packets from the cycle
    /// given (a message started).
    fn wake_servers(&mut self) {
        // Taken and put back: the scratch keeps its capacity.
        let mut wake = std::mem::take(&mut self.wake);
        for w in &wake {
            let si = w.server as usize;
            // The local switch of server `si`: the last whose first server is at or before it.
            let li = self.srv_base.partition_point(|&b| b as usize <= si) - 1;
            self.next_gen[si] = self.next_gen[si].min(w.at);
            self.next_gen_min[li] = self.next_gen_min[li].min(w.at);
        }
        wake.clear();
        self.wake = wake;
    }

    /// Process the workload's events of cycle `now` (arrivals and completions), before any switch
    /// steps.
    #[inline(never)]
    fn task_events(&mut self, now: Cycle) {
        let Some(tasks) = self.tasks.as_mut() else { return };
        let mut wake = std::mem::take(&mut self.wake);
        let stats = &mut self.stats;
        tasks.events_at(now, &mut wake, |d| stats.record_message(d.latency));
        self.wake = wake;
        self.wake_servers();
    }

    /// Latency of the link behind port `pi` (index `li * np + port`).
    #[inline]
    fn lat(&self, pi: usize) -> Cycle {
        if self.uniform_lat != 0 {
            self.uniform_lat
        } else {
            self.inp[pi].lat as Cycle
        }
    }

    /// The switch of server `dst`.
    #[inline]
    fn server_switch(&self, dst: u32) -> SwitchId {
        match dst.checked_div(self.uniform_t) {
            Some(sw) => sw,
            None => self.p.net.topology().server_switch(dst),
        }
    }

    /// The route state a packet from local switch `li` to server `dst` starts with, before
    /// `Routing::init`: its switches and the destination's port at its switch.
    #[inline]
    fn start_route(&self, li: usize, dst: u32) -> crate::routing::RouteState {
        let dst_sw = self.server_switch(dst);
        let dst_port = match dst.checked_rem(self.uniform_t) {
            Some(p) => p,
            None => dst - self.p.net.topology().first_server(dst_sw),
        } as u16;
        crate::routing::RouteState { src: self.switches[li], dst: dst_sw, dst_port, ..Default::default() }
    }

    /// Index in `inbuf` of VC `vc` of input port `port` of local switch `li`: its server ports
    /// (`0..t`) keep [`NetPartition::in_sv`] VC records each, its other ports `v`.
    #[inline(always)]
    fn in_vc(&self, li: usize, port: usize, vc: usize) -> usize {
        debug_assert!(vc < self.in_vcs(li, port), "switch {li} input {port} has no VC {vc} record");
        self.in_port_vcs(self.in_base[li], self.t_of[li] as usize, port) + vc
    }

    /// [`NetPartition::in_vc`] of VC 0 of input `port` of a switch whose input VCs start at
    /// `base` and which has `t` servers (for loops over a switch's ports, which read those once).
    #[inline(always)]
    fn in_port_vcs(&self, base: usize, t: usize, port: usize) -> usize {
        base + port * self.in_sv + port.saturating_sub(t) * (self.v - self.in_sv)
    }

    /// How many input VC records port `port` of local switch `li` has (see [`NetPartition::in_vc`]).
    #[inline]
    fn in_vcs(&self, li: usize, port: usize) -> usize {
        if port < self.t_of[li] as usize {
            self.in_sv
        } else {
            self.v
        }
    }

    /// Global ids of the switches of this partition.
    pub fn switches(&self) -> &[SwitchId] {
        &self.switches
    }

    /// Workloads: each local task's finish cycle (`Cycle::MAX` while running); empty without one.
    pub fn task_finish_times(&self) -> Vec<(u32, Cycle)> {
        self.tasks.as_ref().map_or_else(Vec::new, |t| t.finish_times().collect())
    }

    /// Workloads: what the first `max` unfinished local tasks wait for.
    pub fn waiting_report(&self, max: usize) -> Vec<String> {
        self.tasks.as_ref().map_or_else(Vec::new, |t| t.waiting_report(max))
    }

    /// Why the model stopped, if it failed.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Head packets waiting in input buffers at `now`, as readable lines (at most `max`).
    pub fn blocked_report(&self, now: Cycle, max: usize) -> Vec<String> {
        let mut out = Vec::new();
        for (li, &sw) in self.switches.iter().enumerate() {
            let t = self.t_of[li] as usize;
            for port in 0..self.np {
                for vc in 0..self.in_vcs(li, port) {
                    let q = self.in_vc(li, port, vc);
                    let len = self.inbuf[q].q.len(&self.slab);
                    if len == 0 || out.len() >= max {
                        continue;
                    }
                    let pk = self.slab.get(self.inbuf[q].q.front());
                    let from = if port < t { format!("server {}", port) } else { format!("switch port {}", port - t) };
                    out.push(format!(
                        "switch {sw} input {port} ({from}) VC {vc}: {} packets, head to switch {} waiting since cycle {} ({} cycles)",
                        len,
                        pk.route.dst,
                        pk.ready_at,
                        now.saturating_sub(pk.ready_at)
                    ));
                }
            }
        }
        out
    }

    /// An acknowledgement for server `s` of local switch `li` ([`Msg::ack`]): a slot of its window
    /// is back, and its readiness is re-evaluated as for a returning credit. Out of line: message
    /// delivery stays as compact with the window off.
    #[inline(never)]
    fn acknowledged(&mut self, li: usize, s: usize) {
        let si = self.srv_base[li] as usize + s;
        debug_assert!(self.srv_outstanding[si] > 0, "an acknowledgement with nothing outstanding");
        self.srv_outstanding[si] -= 1;
        let ready = self.servers[si].ready_at();
        self.server_ready[si] = ready;
        self.inject_at[li] = self.inject_at[li].min(ready);
    }

    /// Whether local switch `li` has nothing to do at `now`: no message for it this cycle, no
    /// packet in its input or output buffers, no server generating or injecting before a later
    /// cycle. Its three stages would then read its records and change nothing (they act only on
    /// set mask bits, and the servers only from `next_gen_min` and `inject_at`), so it is skipped:
    /// the same results, without touching the records of every idle switch every cycle (a sparse
    /// workload on a large network leaves most switches idle: a 4,096-task ring on the
    /// million-endpoint HyperX spent 5 ms per cycle on its 32,768 switches). Reads only small
    /// contiguous arrays.
    #[inline]
    fn is_idle(&self, li: usize, now: Cycle, mail: bool) -> bool {
        let w = self.words;
        self.next_gen_min[li] > now
            && self.inject_at[li] > now
            && self.in_mask[li * w..(li + 1) * w].iter().all(|&m| m == 0)
            && self.out_mask[li * w..(li + 1) * w].iter().all(|&m| m == 0)
            && !(mail && self.inbox_start[li] != self.inbox_start[li + 1])
    }

    #[inline]
    fn in_window(&self, at: Cycle) -> bool {
        at >= self.p.window.0 && at < self.p.window.1
    }
}

/// Group `items` by key into `out`, keeping their order within each key (a stable counting sort).
/// On entry `start[k + 2]` holds how many items have key `k` (and `start[0..2]` are 0); on return
/// key `k`'s items are `out[start[k]..start[k + 1]]`.
fn group_by_key<T: Copy>(items: &[(T, u32)], start: &mut [u32], out: &mut Vec<T>) {
    // The running sum makes `start[k + 1]` the start of key `k`'s items, which then serves as its
    // fill pointer and ends at the start of `k + 1`'s.
    for i in 2..start.len() {
        start[i] += start[i - 1];
    }
    out.clear();
    let Some(&(first, _)) = items.first() else { return };
    out.resize(items.len(), first);
    for &(item, k) in items {
        let at = &mut start[k as usize + 1];
        out[*at as usize] = item;
        *at += 1;
    }
}

impl NetPartition {
    /// Group this cycle's messages by local switch, keeping their delivery order within each (a
    /// stable counting sort into `by_switch`), so that a switch's messages are contiguous rather
    /// than scattered over the cycle's deliveries.
    fn sort_inbox(&mut self) {
        group_by_key(&self.inbox, &mut self.inbox_start, &mut self.by_switch);
        self.inbox.clear();
    }

    /// Apply this cycle's messages for local switch `li` (its part of `by_switch`), in delivery
    /// order.
    #[inline]
    fn apply_inbox(&mut self, now: Cycle, li: usize) {
        for k in self.inbox_start[li] as usize..self.inbox_start[li + 1] as usize {
            let msg = self.by_switch[k];
            self.apply(now, li, msg);
        }
    }

    /// Apply `msg` to local switch `li` at `now` (a delivery, made by [`NetPartition::step`] just
    /// before `li` steps).
    #[inline]
    fn apply(&mut self, now: Cycle, li: usize, msg: Msg) {
        let (np, v) = (self.np, self.v);
        match msg {
            Msg::Arrival { port, vc, mut pkt } => {
                if vc == RESEND_VC {
                    self.resent.push((port, pkt));
                    return;
                }
                pkt.ready_at = now;
                let idx = self.slab.insert(pkt);
                let pi = li * np + port as usize;
                let qi = self.in_vc(li, port as usize, vc as usize);
                self.inbuf[qi].q.push(&mut self.slab, idx);
                self.inp[pi].vc_mask |= 1 << vc;
                // A new head may come before the refused one in the scan order.
                self.inp[pi].refused_until = 0;
                set_bit(&mut self.in_mask[li * self.words..(li + 1) * self.words], port as usize);
            }
            Msg::Credit { port, vc } => {
                if port < self.t_of[li] {
                    if vc == ACK_VC {
                        self.acknowledged(li, port as usize);
                        return;
                    }
                    let si = self.srv_base[li] as usize + port as usize;
                    if !self.srv_vc_cred.is_empty() {
                        // `injection_vcs = "any"`: `credits` counts VCs with a credit.
                        let c = &mut self.srv_vc_cred[si * v + vc as usize];
                        *c += 1;
                        if *c > 1 {
                            return;
                        }
                    }
                    self.servers[si].credits += 1;
                    let ready = self.servers[si].ready_at();
                    self.server_ready[si] = ready;
                    self.inject_at[li] = self.inject_at[li].min(ready);
                } else {
                    let pi = li * np + port as usize;
                    self.outvc[pi * v + vc as usize].cred += 1;
                    self.outp[pi].load -= 1;
                    self.port_changed(li, port as usize);
                }
            }
        }
    }
}

impl Partition for NetPartition {
    type Msg = Msg;

    /// Messages are not applied as they are delivered but kept in `inbox` (counted per switch),
    /// grouped by switch when the cycle steps, and applied to each switch right before it steps:
    /// the records they change (input buffers, credits, the packet) are then in cache when the
    /// switch reads them, rather than written once by the delivery and read again after every
    /// other switch's delivery has pushed them out. Deliveries of one cycle commute (each changes
    /// only its switch, and none is seen before that switch steps), so the results are those of
    /// applying them at delivery.
    #[inline]
    fn deliver(&mut self, _now: Cycle, lp: Lp, msg: Msg) {
        let li = self.local_of[lp as usize];
        self.inbox.push((msg, li));
        self.inbox_start[li as usize + 2] += 1;
    }

    fn step(&mut self, now: Cycle, out: &mut Scheduler<'_, Msg>) {
        if now >= self.next_census {
            self.census(now);
        }
        if self.tasks.as_ref().is_some_and(|t| t.next_event() <= now) {
            self.task_events(now);
        }
        if self.credits_pending > 0 {
            self.send_due_credits(now, out);
        }
        let mail = !self.inbox.is_empty();
        if mail {
            self.sort_inbox();
        }
        let n = self.switches.len();
        for li in 0..n {
            if self.is_idle(li, now, mail) {
                continue;
            }
            if self.fetch_ahead && li + 2 < n {
                self.prefetch_ports(li + 2);
            }
            if self.fetch_ahead && li + 1 < n {
                self.prefetch_heads(li + 1);
            }
            if mail {
                self.apply_inbox(now, li);
                if !self.resent.is_empty() {
                    self.requeue_resent(li, now);
                }
            }
            self.link_stage(li, now, out);
            self.allocation_stage(li, now);
            self.server_stage(li, now, out);
        }
        if mail {
            self.inbox_start.fill(0);
            self.by_switch.clear();
        }
        if !self.notices.is_empty() {
            self.send_notices(out);
        }
    }

    fn status(&self, now: Cycle) -> Status {
        let tasks = self.tasks.as_deref();
        let next_activity =
            if !self.slab.is_empty() || !self.srcq.is_empty() || self.credits_pending > 0 || !self.notices.is_empty() {
                now
            } else {
                let gen = self.next_gen_min.iter().copied().min().unwrap_or(Cycle::MAX);
                gen.min(tasks.map_or(Cycle::MAX, |t| t.next_event()))
            };
        Status {
            in_flight: self.in_flight,
            last_progress: self.last_progress,
            drained: self.undrained_servers == 0 && tasks.is_none_or(|t| t.running() == 0),
            next_activity,
            stop: false,
            failed: self.failure.is_some(),
        }
    }

    fn begin_window(&mut self, end: Cycle) {
        self.window_end = end;
    }

    fn end_window(&mut self, end: Cycle) {
        // Deliveries whose tail is inside the window just simulated are final.
        self.late.retain(|d| d.tail >= end);
        if end >= self.next_census {
            self.census(end);
        }
        if let Some(sink) = &mut self.sample_sink {
            sink.send_until(end, self.p.sample_cycles, &self.stats.samples);
        }
    }

    fn park(&mut self, resume_at: Cycle, pending: Vec<Envelope<Msg>>) {
        self.parked = Some((resume_at, pending));
    }

    fn unpark(&mut self) -> Vec<Envelope<Msg>> {
        self.parked.take().map(|(_, m)| m).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `in_vc` numbers every input VC record of a partition once, with a server's port keeping
    /// one record (servers inject on VC 0) or `v` (`router.injection_vcs = "any"`) and every other
    /// port `v`, on a fat tree whose upper switches have no servers (so `t` varies by switch).
    #[test]
    fn input_vc_records_are_numbered_once() {
        for (topology, injection) in [
            ("kind = \"hyperx\"\nsides = [3, 3]\nservers_per_switch = 2", "zero"),
            ("kind = \"hyperx\"\nsides = [3, 3]\nservers_per_switch = 2", "any"),
            ("kind = \"fattree\"\nzones = [2, 2, 2]\nroots = [1, 2, 4]\ninternal_links = [1, 1, 1]", "zero"),
        ] {
            let cfg = crate::config::parse_str(
                &format!("[topology]\n{topology}\n[router]\ninjection_vcs = \"{injection}\"\n"),
                "test",
                &[],
            )
            .unwrap();
            let net = crate::sim::build_network(&cfg).unwrap();
            let params = Arc::new(crate::sim::build_params(&cfg, net.clone(), &cfg.schedule()).unwrap());
            let n = net.num_switches() as u32;
            let part = NetPartition::new(params, (0..n).collect(), Arc::new((0..n).collect()));
            let (v, sv) = (part.v, if injection == "any" { part.v } else { 1 });
            let mut seen = vec![0u32; part.inbuf.len()];
            let mut serverless_seen = false;
            for li in 0..n as usize {
                let t = net.servers_at(li as u32);
                serverless_seen |= t == 0;
                for port in 0..part.np {
                    let want = if port < t { sv } else { v };
                    assert_eq!(part.in_vcs(li, port), want, "{topology}: switch {li} port {port}");
                    for vc in 0..want {
                        seen[part.in_vc(li, port, vc)] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|&k| k == 1), "{topology}, injection {injection}: {seen:?}");
            // Every router port's `v` records less the unused ones of the servers' ports.
            let servers = (0..n).map(|s| net.servers_at(s)).sum::<usize>();
            assert_eq!(part.inbuf.len(), n as usize * part.np * v - servers * (v - sv), "{topology}");
            assert!(v > 1, "{topology}: the routing has one VC, which tests nothing");
            assert_eq!(serverless_seen, topology.contains("fattree"), "{topology}: switches without servers");
        }
    }

    /// The counting sort groups like a stable sort by key (std's `sort_by_key` is stable), for
    /// keys with no, one and many items, in any delivery order.
    #[test]
    fn grouping_by_key_is_a_stable_sort() {
        let keys = 7u32;
        let mut rng = crate::rng::stream(5, 0, crate::rng::Purpose::Router);
        for len in [0usize, 1, 2, 40, 300] {
            // Key 3 gets nothing; the items are their delivery index.
            let items: Vec<(usize, u32)> = (0..len)
                .map(|i| {
                    let k = crate::rng::below(&mut rng, keys as u64 - 1) as u32;
                    (i, if k >= 3 { k + 1 } else { k })
                })
                .collect();
            let mut start = vec![0u32; keys as usize + 2];
            for &(_, k) in &items {
                start[k as usize + 2] += 1;
            }
            let mut out = Vec::new();
            group_by_key(&items, &mut start, &mut out);
            let mut expected = items.clone();
            expected.sort_by_key(|&(_, k)| k);
            assert_eq!(out, expected.iter().map(|&(i, _)| i).collect::<Vec<_>>(), "{len} items");
            for k in 0..keys as usize {
                let got: Vec<usize> = out[start[k] as usize..start[k + 1] as usize].to_vec();
                let want: Vec<usize> = items.iter().filter(|&&(_, key)| key as usize == k).map(|&(i, _)| i).collect();
                assert_eq!(got, want, "key {k} of {len} items");
            }
        }
    }
}
