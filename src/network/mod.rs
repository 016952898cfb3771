//! The network model: input- and output-buffered virtual cut-through routers with virtual channels,
//! credit-based flow control, links, and servers, run as [`crate::engine::Partition`]s.
//!
//! Every switch with its servers is one logical process. Work is done per packet, with exact phit
//! timing (a packet of `P` phits occupies a link for `P` cycles; head and tail times are derived):
//!
//! 1. **Link stage.** An output port whose link is free sends the head packet of one of its VCs
//!    (round robin) if the downstream input VC has a credit (room for a whole packet: VCT). The head
//!    reaches the next input buffer `L` cycles later; the output slot frees when the tail has left,
//!    `P` cycles after the head.
//! 2. **Routing and switch allocation.** Each input port whose crossbar input is free looks at its VCs
//!    (round robin, or random with `allocator = "random"`); the first head packet that is present and
//!    has a candidate with room in the output VC makes a request. Candidates come from the routing
//!    algorithm; the request goes to the candidate with the lowest `Q + P` (SurePath section 3).
//!    Each output port grants one request (iSLIP-style round-robin pointer, or random; with
//!    `router.intransit_priority`, requests from switch-to-switch inputs first). A grant moves
//!    the packet through the crossbar: its head is in the output buffer `crossbar_latency` cycles
//!    later, and the crossbar input and output stay busy until the tail is through, at `speedup`
//!    phits per cycle but never ahead of the tail's arrival (cut-through). The input VC's credit goes
//!    back upstream when the tail has left the input buffer.
//! 3. **Servers.** Servers generate packets (Bernoulli via geometric gaps, or a fixed workload) into
//!    a bounded source queue, and inject one phit per cycle into their switch's input port (VC 0),
//!    with credits like any link. Ejection ports deliver to servers, which consume one phit per cycle.
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

pub mod packet;

use crate::engine::{Cycle, Lp, Partition, Scheduler, Status};
use crate::metrics::{Sample, SampleSink, Stats};
use crate::rng::{self, below, geometric_gap, Purpose, Rng};
use crate::routing::{Candidate, RouteState, Routing};
use crate::topology::{Fabric, SwitchId};
use crate::traffic::{Injection, Pattern};
use packet::{Packet, Queue, Slab, NIL};
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
    /// port below `T`: the server's injection credit).
    Credit {
        /// Router output port (or server index).
        port: u16,
        /// Virtual channel.
        vc: u8,
    },
}

/// Everything a partition needs to know about the run, shared by all partitions.
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
    /// Random rather than round-robin allocation.
    pub random_allocator: bool,
    /// Requests from switch-to-switch inputs win over requests from servers.
    pub intransit_priority: bool,
    /// Measurement window `[start, end)`.
    pub window: (Cycle, Cycle),
    /// Sample interval, cycles.
    pub sample_cycles: Cycle,
}

impl ModelParams {
    /// Longest delay of any message (sizes the engine's timing wheel).
    pub fn max_delay(&self) -> Cycle {
        self.packet_phits + self.max_latency() + 1
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
    queue: Queue,
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

/// A switch's request for the crossbar.
#[derive(Debug, Clone, Copy)]
struct Request {
    in_port: u16,
    in_vc: u8,
    out_port: u16,
    out_vc: u8,
    escape: bool,
    prio: u32,
}

/// Input port state.
#[derive(Debug, Clone, Copy, Default)]
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

/// Whether `until` (low 32 bits of a cycle; 0: unknown) is after `now`. A known `until` is within
/// 2^31 cycles of `now`: it is at most one packet's crossbar time ahead of the cycle it was set at,
/// and is cleared as soon as the head leaves (a head that stays 2^31 cycles is a deadlock, which the
/// watchdog reports long before). A cycle whose low bits are 0 reads as unknown, which only costs a
/// routing evaluation.
#[inline]
fn after(until: u32, now: Cycle) -> bool {
    until != 0 && (until.wrapping_sub(now as u32) as i32) > 0
}

/// Output port state.
#[derive(Debug, Clone, Copy, Default)]
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

impl OutPort {
    /// Occupancy at `now` of this port's VC `vc`, whose record is `ov`: its counter less the slot
    /// of the packet last sent if that one has left (freed, not yet settled in the counter).
    #[inline]
    fn occupancy(&self, ov: &OutVc, vc: usize, now: Cycle) -> u16 {
        ov.occ - (self.freeing as usize == vc && self.link_free <= now) as u16
    }
    /// [`OutPort::load`] at `now`.
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
    /// Input ports, `li * np + port`.
    inp: Vec<InPort>,
    /// Input VCs, `(li * np + port) * v + vc`.
    inbuf: Vec<InVc>,
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
    rng_traffic: Vec<Rng>,
    rng_router: Vec<Rng>,
    // Scratch, reused every step.
    cands: Vec<Candidate>,
    reqs: Vec<Request>,
    best: Vec<u32>,
    touched: Vec<u16>,
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
    in_flight: i64,
    last_progress: Cycle,
    undrained_servers: u64,
    failure: Option<String>,
}

/// SurePath selection (SurePath section 3): among `cands` whose output VC has room, the index of the
/// one with the lowest `Q + P`, ties broken uniformly at random; and the earliest cycle at which the
/// crossbar output of any candidate (with room or not) is free. `outp` and `outvc` are the
/// switch-to-switch output ports and their VCs (`port * v + vc`) of the switch.
///
/// While every candidate's crossbar output is busy, a request is certain to be refused, and nothing
/// the choice depends on can make it succeed: a busy output takes no grant, so its occupancy can
/// only fall, and its free cycle does not move. The router uses this to skip such heads.
#[inline]
#[allow(clippy::too_many_arguments)]
fn select(
    cands: &[Candidate],
    outp: &[OutPort],
    outvc: &[OutVc],
    v: usize,
    out_cap: u16,
    in_cap: u32,
    pk_phits: u32,
    now: Cycle,
    rng: &mut Rng,
) -> (Option<usize>, Cycle) {
    // The cost of candidate `c`, or `None` if its output VC is full.
    let cost = |c: &Candidate| {
        let port = c.port as usize;
        let o = &outp[port];
        let ov = outvc[port * v + c.vc as usize];
        let occ = o.occupancy(&ov, c.vc as usize, now);
        (occ < out_cap).then(|| (occ as u32 + in_cap - ov.cred as u32 + o.load_at(now)) * pk_phits + c.penalty)
    };
    let mut best = usize::MAX;
    let mut best_cost = u32::MAX;
    let mut ties = 0u64;
    let mut xbar_free = Cycle::MAX;
    for (i, c) in cands.iter().enumerate() {
        xbar_free = xbar_free.min(outp[c.port as usize].xbar_free);
        match cost(c) {
            Some(k) if k < best_cost => {
                best_cost = k;
                best = i;
                ties = 1;
            }
            Some(k) if k == best_cost => ties += 1,
            _ => {}
        }
    }
    if ties > 1 {
        // One draw picks among the tied candidates (their state is in cache from the first pass).
        let mut pick = below(rng, ties);
        for (i, c) in cands.iter().enumerate().skip(best) {
            if cost(c) == Some(best_cost) {
                if pick == 0 {
                    best = i;
                    break;
                }
                pick -= 1;
            }
        }
    }
    ((best != usize::MAX).then_some(best), xbar_free)
}

/// VCs set in `mask`, starting at `start` and wrapping around (round-robin order), without division.
#[inline]
fn rotated(mask: u64, start: usize) -> impl Iterator<Item = usize> {
    let hi = mask & (u64::MAX << start);
    let lo = mask & !(u64::MAX << start);
    BitIter(hi).chain(BitIter(lo))
}

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
        };
        let mut rng_traffic: Vec<Rng> =
            switches.iter().map(|&s| rng::stream(p.seed, s as u64, Purpose::Traffic)).collect();
        let rng_router = switches.iter().map(|&s| rng::stream(p.seed, s as u64, Purpose::Router)).collect();
        let mut servers = Vec::with_capacity(ns);
        let mut next_gen = Vec::with_capacity(ns);
        let mut next_gen_min = vec![Cycle::MAX; n];
        for li in 0..n {
            for _ in 0..t_of[li] {
                let first = match p.injection {
                    Injection::Fixed { .. } => 0,
                    Injection::Bernoulli { .. } => geometric_gap(&mut rng_traffic[li], rate) - 1,
                };
                next_gen_min[li] = next_gen_min[li].min(first);
                next_gen.push(first);
                servers.push(Server { queue: Queue::default(), link_free: 0, credits: p.input_buffer, remaining });
            }
        }
        let undrained_servers = if remaining > 0 { ns as u64 } else { 0 };
        NetPartition {
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
            inp,
            inbuf: vec![InVc::default(); n * np * v],
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
            rng_traffic,
            rng_router,
            cands: Vec::with_capacity(4 * np),
            reqs: Vec::with_capacity(np),
            best: vec![NIL; np],
            touched: Vec::with_capacity(np),
            stats: Stats::default(),
            link_phits: vec![0; n * r],
            server_injected: vec![0; ns],
            server_accepted: vec![0; ns],
            sample_sink: None,
            in_flight: 0,
            last_progress: 0,
            undrained_servers,
            failure: None,
            switches,
            local_of,
            p,
        }
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
        if self.uniform_t != 0 {
            dst / self.uniform_t
        } else {
            self.p.net.topology().server_switch(dst)
        }
    }

    /// Global ids of the switches of this partition.
    pub fn switches(&self) -> &[SwitchId] {
        &self.switches
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
                for vc in 0..self.v {
                    let q = (li * self.np + port) * self.v + vc;
                    let len = self.inbuf[q].q.len();
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

    #[inline]
    fn sample(&mut self, at: Cycle) -> &mut Sample {
        let i = (at / self.p.sample_cycles) as usize;
        if self.stats.samples.len() <= i {
            let sc = self.p.sample_cycles;
            let start = self.stats.samples.len();
            self.stats.samples.resize(i + 1, Sample::default());
            for (k, s) in self.stats.samples.iter_mut().enumerate().skip(start) {
                s.cycle = (k as u64 + 1) * sc;
            }
        }
        &mut self.stats.samples[i]
    }

    #[inline]
    fn in_window(&self, at: Cycle) -> bool {
        at >= self.p.window.0 && at < self.p.window.1
    }

    /// Whether output VC `vc` of output port `oi` (index `li * np + port`) has room for a packet.
    #[inline]
    fn has_room(&self, oi: usize, vc: usize, now: Cycle) -> bool {
        self.outp[oi].occupancy(&self.outvc[oi * self.v + vc], vc, now) < self.p.output_buffer
    }

    /// After the head of VC `vc` of input `pi` (index `li * np + port`) requested, with `busy` the
    /// earliest cycle any output it may request has a free crossbar: if that is after `now`, the
    /// request will be refused until then, which the VC (and, if it was the first VC in scan
    /// order, the input) records.
    #[inline]
    fn mark_refused(&mut self, pi: usize, vc: usize, first: bool, busy: Cycle, now: Cycle) {
        if busy > now {
            self.inbuf[pi * self.v + vc].refused_until = busy as u32;
            if first {
                self.inp[pi].refused_until = busy as u32;
            }
        }
    }

    /// Debug check of the refused-request shortcut: whether the head of input VC `qi` (global
    /// index) of switch `li` would make a request at `now` that is certain to be refused (some
    /// candidate has room, and every candidate's crossbar output is busy).
    fn head_refused(&self, li: usize, qi: usize, now: Cycle) -> bool {
        let (np, t) = (self.np, self.t_of[li] as usize);
        let sw = self.switches[li];
        let pkt = self.slab.get(self.inbuf[qi].q.front());
        let room = |op: usize, vc: usize| self.has_room(li * np + op, vc, now);
        let busy = |op: usize| self.outp[li * np + op].xbar_free > now;
        if pkt.route.dst == sw {
            let op = (pkt.dst - self.first_server[li]) as usize;
            return room(op, 0) && busy(op);
        }
        let mut cands = Vec::new();
        self.p.routing.candidates(sw, &pkt.route, &mut cands);
        cands.iter().any(|c| room(t + c.port as usize, c.vc as usize))
            && cands.iter().all(|c| busy(t + c.port as usize))
    }

    /// Debug check of the input-level shortcut: whether the turn of input `port` of switch `li`
    /// would end in a refused request: its first VC in round-robin order with a packet has a head
    /// that [`NetPartition::head_refused`].
    fn first_head_refused(&self, li: usize, port: usize, now: Cycle) -> bool {
        let pi = li * self.np + port;
        let ip = &self.inp[pi];
        rotated(ip.vc_mask, ip.rr as usize).next().is_some_and(|vc| self.head_refused(li, pi * self.v + vc, now))
    }

    /// Link stage of local switch `li`.
    fn link_stage(&mut self, li: usize, now: Cycle, out: &mut Scheduler<'_, Msg>) {
        let (np, v, t) = (self.np, self.v, self.t_of[li] as usize);
        let plen = self.p.packet_phits;
        for w in 0..self.words {
            // First the ports whose link is free, tested without branches so that the loads of the
            // (cold) port records overlap; sending on one port changes no other port's record.
            let mut bits = 0u64;
            let mut all = self.out_mask[li * self.words + w];
            while all != 0 {
                let b = all.trailing_zeros() as usize;
                all &= all - 1;
                bits |= ((self.outp[li * np + w * 64 + b].link_free <= now) as u64) << b;
            }
            while bits != 0 {
                let port = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let pi = li * np + port;
                let op = self.outp[pi];
                // Round robin over VCs whose head is present and has a downstream credit.
                let mut chosen = usize::MAX;
                for vc in rotated(op.vc_mask, op.rr as usize) {
                    let qi = pi * v + vc;
                    let ov = &self.outvc[qi];
                    if ov.cred == 0 {
                        continue;
                    }
                    if self.slab.get(ov.q.front()).ready_at <= now {
                        chosen = vc;
                        break;
                    }
                }
                if chosen == usize::MAX {
                    continue;
                }
                let vc = chosen;
                let qi = pi * v + vc;
                // The previous packet's tail has left (the link is free): settle its slot.
                let f = self.outp[pi].freeing;
                if f != NO_VC {
                    self.outvc[pi * v + f as usize].occ -= 1;
                    self.outp[pi].load -= 1;
                }
                let idx = self.outvc[qi].q.pop(&self.slab);
                let emptied = self.outvc[qi].q.is_empty();
                let o = &mut self.outp[pi];
                o.freeing = vc as u8;
                o.rr = if vc + 1 == v { 0 } else { vc as u8 + 1 };
                if emptied {
                    o.vc_mask &= !(1 << vc);
                    if o.vc_mask == 0 {
                        clear_bit(&mut self.out_mask[li * self.words..(li + 1) * self.words], port);
                    }
                }
                let pkt = self.slab.remove(idx);
                o.link_free = now + plen;
                self.last_progress = now;
                let lat = self.lat(pi);
                if port < t {
                    self.deliver_to_server(li, port, &pkt, now + lat + plen - 1);
                } else {
                    self.outvc[qi].cred -= 1;
                    self.outp[pi].load += 1;
                    let (nsw, nport) = self.nbr[li * self.r + port - t];
                    if self.in_window(now) {
                        self.link_phits[li * self.r + port - t] += plen;
                    }
                    out.send(now + lat, nsw, Msg::Arrival { port: nport, vc: vc as u8, pkt });
                }
            }
        }
    }

    fn deliver_to_server(&mut self, li: usize, port: usize, pkt: &Packet, tail: Cycle) {
        let plen = self.p.packet_phits;
        let lat = tail - pkt.created;
        let hops = pkt.route.hops as u64 + 1;
        self.in_flight -= 1;
        self.stats.last_delivery = self.stats.last_delivery.max(tail);
        if self.in_window(tail) {
            self.stats.delivered_packets += 1;
            self.stats.delivered_phits += plen;
            self.stats.latency_sum += lat;
            self.stats.hops_sum += hops;
            self.stats.record_latency(lat);
            self.server_accepted[self.srv_base[li] as usize + port] += plen;
        }
        let s = self.sample(tail);
        s.accepted_phits += plen;
        s.delivered_packets += 1;
        s.latency_sum += lat;
    }

    /// Routing and switch allocation of local switch `li` (stage 2 of the module docs, with the
    /// refused-request shortcut described there).
    fn allocation_stage(&mut self, li: usize, now: Cycle, out: &mut Scheduler<'_, Msg>) {
        let (np, v, t) = (self.np, self.v, self.t_of[li] as usize);
        let sw = self.switches[li];
        let pk_phits = self.p.packet_phits as u32;
        let out_cap = self.p.output_buffer;
        let in_cap = self.p.input_buffer as u32;
        let random = self.p.random_allocator;
        self.reqs.clear();
        for w in 0..self.words {
            // First the inputs that may request, tested without branches so that the loads of the
            // (cold) port records overlap; an input's turn changes no other input's record.
            let mut bits = 0u64;
            let mut all = self.in_mask[li * self.words + w];
            while all != 0 {
                let b = all.trailing_zeros() as usize;
                all &= all - 1;
                let ip = &self.inp[li * np + w * 64 + b];
                let skip = after(ip.refused_until, now);
                debug_assert!(
                    !skip || ip.free > now || self.first_head_refused(li, w * 64 + b, now),
                    "input {} of switch {} skipped but its turn would not end in a refused request",
                    w * 64 + b,
                    self.switches[li]
                );
                bits |= (((ip.free <= now) & !skip) as u64) << b;
            }
            while bits != 0 {
                let port = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let pi = li * np + port;
                let ip = self.inp[pi];
                let start = if random { below(&mut self.rng_router[li], v as u64) as usize } else { ip.rr as usize };
                // Whether every VC before this one in the scan order was empty. While the head of
                // the first VC in that order stays refused, so is the input: the order changes only
                // with a grant, and an arrival (which resets this) is the only way an empty VC
                // before it gets a head.
                let mut first = !random;
                for vc in rotated(ip.vc_mask, start) {
                    let iv = self.inbuf[pi * v + vc];
                    if after(iv.refused_until, now) {
                        // This head would request an output whose crossbar is busy and be refused,
                        // which ends this input's turn as the request would have.
                        debug_assert!(
                            self.head_refused(li, pi * v + vc, now),
                            "head of switch {} input {port} VC {vc} skipped but it would not be refused",
                            self.switches[li]
                        );
                        if first {
                            self.inp[pi].refused_until = iv.refused_until;
                        }
                        break;
                    }
                    let head = iv.q.front();
                    let pkt = self.slab.get(head);
                    if pkt.ready_at > now {
                        first = false;
                        continue;
                    }
                    // At the destination switch: eject to the server's port.
                    if pkt.route.dst == sw {
                        let op = (pkt.dst - self.first_server[li]) as usize;
                        if self.has_room(li * np + op, 0, now) {
                            self.reqs.push(Request {
                                in_port: port as u16,
                                in_vc: vc as u8,
                                out_port: op as u16,
                                out_vc: 0,
                                escape: false,
                                prio: 0,
                            });
                            let busy = self.outp[li * np + op].xbar_free;
                            self.mark_refused(pi, vc, first, busy, now);
                            break;
                        }
                        first = false;
                        continue;
                    }
                    let route = pkt.route;
                    self.cands.clear();
                    self.p.routing.candidates(sw, &route, &mut self.cands);
                    if self.cands.is_empty() {
                        if self.failure.is_none() {
                            self.failure = Some(format!(
                                "packet from switch {} to switch {} has no route at switch {sw} (cycle {now}, {} hops taken): \
                                 routing `{}` cannot reach its destination on this network",
                                route.src,
                                route.dst,
                                route.hops,
                                self.p.routing.name()
                            ));
                        }
                        first = false;
                        continue;
                    }
                    let base = li * np;
                    let (best, xbar_free) = select(
                        &self.cands,
                        &self.outp[base + t..base + np],
                        &self.outvc[(base + t) * v..(base + np) * v],
                        v,
                        out_cap,
                        in_cap,
                        pk_phits,
                        now,
                        &mut self.rng_router[li],
                    );
                    if let Some(i) = best {
                        let c = self.cands[i];
                        self.reqs.push(Request {
                            in_port: port as u16,
                            in_vc: vc as u8,
                            out_port: (t + c.port as usize) as u16,
                            out_vc: c.vc,
                            escape: c.escape,
                            prio: 0,
                        });
                        self.mark_refused(pi, vc, first, xbar_free, now);
                        break;
                    }
                    first = false;
                }
            }
        }
        if self.reqs.is_empty() {
            return;
        }
        // Output arbitration: one grant per output port whose crossbar output is free.
        self.touched.clear();
        for i in 0..self.reqs.len() {
            let rq = self.reqs[i];
            let op = rq.out_port as usize;
            if self.outp[li * np + op].xbar_free > now {
                continue;
            }
            let prio = if random {
                self.rng_router[li].next_u32_() >> 1
            } else {
                // Distance from the round-robin pointer, without division.
                let (ip, ptr) = (rq.in_port as u32, self.outp[li * np + op].arb as u32);
                if ip >= ptr {
                    ip - ptr
                } else {
                    ip + np as u32 - ptr
                }
            };
            // Injection requests rank after every transit request (allocator priorities are below
            // 2^31).
            let prio = prio | (((self.p.intransit_priority && (rq.in_port as usize) < t) as u32) << 31);
            self.reqs[i].prio = prio;
            let b = self.best[op];
            if b == NIL {
                self.best[op] = i as u32;
                self.touched.push(op as u16);
            } else if prio < self.reqs[b as usize].prio {
                self.best[op] = i as u32;
            }
        }
        let xbar = self.p.crossbar_cycles();
        let xlat = self.p.crossbar_latency;
        let plen = self.p.packet_phits;
        for k in 0..self.touched.len() {
            let op = self.touched[k] as usize;
            let rq = self.reqs[self.best[op] as usize];
            self.best[op] = NIL;
            let ip = rq.in_port as usize;
            let pi = li * np + ip;
            let qi = pi * v + rq.in_vc as usize;
            let idx = self.inbuf[qi].q.pop(&self.slab);
            let emptied = self.inbuf[qi].q.is_empty();
            // A new head (or none): nothing is known about its requests yet.
            self.inbuf[qi].refused_until = 0;
            self.inp[pi].refused_until = 0;
            let inport = &mut self.inp[pi];
            if emptied {
                inport.vc_mask &= !(1 << rq.in_vc);
                if inport.vc_mask == 0 {
                    clear_bit(&mut self.in_mask[li * self.words..(li + 1) * self.words], ip);
                }
            }
            inport.rr = if rq.in_vc as usize + 1 == v { 0 } else { rq.in_vc + 1 };
            // Crossbar timing: the tail is through after `xbar` cycles, but not before it arrived.
            let pkt = self.slab.get_mut(idx);
            let tail_in = pkt.ready_at + plen - 1;
            let done = (now + xbar).max(tail_in + 1);
            inport.free = done;
            let o = &mut self.outp[li * np + op];
            o.xbar_free = done;
            o.arb = if ip + 1 == np { 0 } else { ip as u16 + 1 };
            o.load += 1;
            o.vc_mask |= 1 << rq.out_vc;
            pkt.ready_at = now + xlat;
            if op >= t {
                let next = self.nbr[li * self.r + op - t].0;
                let c = Candidate { port: (op - t) as u16, vc: rq.out_vc, penalty: 0, escape: rq.escape };
                let mut st: RouteState = pkt.route;
                self.p.routing.advance(&mut st, sw, next, &c);
                self.slab.get_mut(idx).route = st;
            }
            let oi = (li * np + op) * v + rq.out_vc as usize;
            self.outvc[oi].q.push(&mut self.slab, idx);
            self.outvc[oi].occ += 1;
            set_bit(&mut self.out_mask[li * self.words..(li + 1) * self.words], op);
            self.stats.traversals += 1;
            self.last_progress = now;
            // The input slot is free once the tail has left it; tell whoever feeds this input.
            let lat = self.lat(pi);
            if ip < t {
                out.send(done + lat, sw, Msg::Credit { port: ip as u16, vc: rq.in_vc });
            } else {
                let (usw, uport) = self.nbr[li * self.r + ip - t];
                out.send(done + lat, usw, Msg::Credit { port: uport, vc: rq.in_vc });
            }
        }
    }

    /// Generation and injection of the servers of local switch `li`.
    fn server_stage(&mut self, li: usize, now: Cycle, out: &mut Scheduler<'_, Msg>) {
        let (t, base) = (self.t_of[li] as usize, self.srv_base[li] as usize);
        let sw = self.switches[li];
        if now >= self.next_gen_min[li] {
            let mut next_min = Cycle::MAX;
            for s in 0..t {
                let si = base + s;
                while self.next_gen[si] <= now {
                    self.generate(li, s, now);
                    if self.next_gen[si] == Cycle::MAX {
                        break;
                    }
                }
                next_min = next_min.min(self.next_gen[si]);
            }
            self.next_gen_min[li] = next_min;
        }
        if self.inject_at[li] > now {
            return;
        }
        let plen = self.p.packet_phits;
        let mut next = Cycle::MAX;
        for s in 0..t {
            let si = base + s;
            let ready = self.server_ready[si];
            if ready > now {
                next = next.min(ready);
                continue;
            }
            let srv = &mut self.servers[si];
            let idx = srv.queue.pop(&self.slab);
            srv.credits -= 1;
            srv.link_free = now + plen;
            let ready = srv.ready_at();
            self.server_ready[si] = ready;
            next = next.min(ready);
            let pkt = self.slab.remove(idx);
            if self.in_window(now) {
                self.server_injected[si] += plen;
            }
            self.sample(now).injected_phits += plen;
            self.last_progress = now;
            let lat = self.lat(li * self.np + s);
            out.send(now + lat, sw, Msg::Arrival { port: s as u16, vc: 0, pkt });
        }
        self.inject_at[li] = next;
    }

    fn generate(&mut self, li: usize, s: usize, now: Cycle) {
        let si = self.srv_base[li] as usize + s;
        let sw = self.switches[li];
        let srv = self.servers[si];
        let room = srv.queue.len() < self.p.source_queue;
        match self.p.injection {
            Injection::Bernoulli { packet_rate } => {
                self.next_gen[si] = now + geometric_gap(&mut self.rng_traffic[li], packet_rate);
                if !room {
                    self.stats.suppressed_packets += 1;
                    return;
                }
            }
            Injection::Fixed { .. } => {
                if !room {
                    // Try again next cycle; the queue drains at one packet per P cycles at most.
                    self.next_gen[si] = now + 1;
                    return;
                }
                let left = srv.remaining - 1;
                self.servers[si].remaining = left;
                self.next_gen[si] = if left == 0 { Cycle::MAX } else { now + 1 };
                if left == 0 {
                    self.undrained_servers -= 1;
                }
            }
        }
        let src = self.first_server[li] + s as u32;
        let dst = self.p.pattern.destination(src, &mut self.rng_traffic[li]);
        let mut route = RouteState { src: sw, dst: self.server_switch(dst), ..Default::default() };
        self.p.routing.init(&mut route, &mut self.rng_router[li]);
        let idx = self.slab.insert(Packet { src, dst, created: now, ready_at: now, route });
        self.servers[si].queue.push(&mut self.slab, idx);
        let ready = self.servers[si].ready_at();
        self.server_ready[si] = ready;
        self.inject_at[li] = self.inject_at[li].min(ready);
        self.in_flight += 1;
        self.stats.generated_packets += 1;
    }
}

/// `next_u32` without importing the trait everywhere.
trait NextU32 {
    fn next_u32_(&mut self) -> u32;
}
impl NextU32 for Rng {
    #[inline]
    fn next_u32_(&mut self) -> u32 {
        rand_core::RngCore::next_u32(self)
    }
}

impl Partition for NetPartition {
    type Msg = Msg;

    #[inline]
    fn deliver(&mut self, now: Cycle, lp: Lp, msg: Msg) {
        let li = self.local_of[lp as usize] as usize;
        let (np, v) = (self.np, self.v);
        match msg {
            Msg::Arrival { port, vc, mut pkt } => {
                pkt.ready_at = now;
                let idx = self.slab.insert(pkt);
                let pi = li * np + port as usize;
                self.inbuf[pi * v + vc as usize].q.push(&mut self.slab, idx);
                self.inp[pi].vc_mask |= 1 << vc;
                // A new head may come before the refused one in the scan order.
                self.inp[pi].refused_until = 0;
                set_bit(&mut self.in_mask[li * self.words..(li + 1) * self.words], port as usize);
            }
            Msg::Credit { port, vc } => {
                if port < self.t_of[li] {
                    let si = self.srv_base[li] as usize + port as usize;
                    self.servers[si].credits += 1;
                    let ready = self.servers[si].ready_at();
                    self.server_ready[si] = ready;
                    self.inject_at[li] = self.inject_at[li].min(ready);
                } else {
                    let pi = li * np + port as usize;
                    self.outvc[pi * v + vc as usize].cred += 1;
                    self.outp[pi].load -= 1;
                }
            }
        }
    }

    fn step(&mut self, now: Cycle, out: &mut Scheduler<'_, Msg>) {
        for li in 0..self.switches.len() {
            self.link_stage(li, now, out);
            self.allocation_stage(li, now, out);
            self.server_stage(li, now, out);
        }
    }

    fn status(&self, now: Cycle) -> Status {
        let next_activity =
            if !self.slab.is_empty() { now } else { self.next_gen_min.iter().copied().min().unwrap_or(Cycle::MAX) };
        Status {
            in_flight: self.in_flight,
            last_progress: self.last_progress,
            drained: self.undrained_servers == 0,
            next_activity,
            stop: false,
            failed: self.failure.is_some(),
        }
    }

    fn end_window(&mut self, end: Cycle) {
        if let Some(sink) = &mut self.sample_sink {
            sink.send_until(end, self.p.sample_cycles, &self.stats.samples);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_marks_compare_across_the_wrap_of_their_low_bits() {
        let now: Cycle = (1 << 32) - 3;
        assert!(after((now + 5) as u32, now), "5 cycles ahead, past the wrap");
        assert!(!after(now as u32, now), "not after itself");
        assert!(!after((now - 7) as u32, now), "in the past");
        // 0 is "unknown", also when the low bits of `now` are above 2^31 (where a plain wrapping
        // comparison would put 0 in the future).
        assert!(!after(0, 3 << 31));
        assert!(!after(0, 5));
    }
}
