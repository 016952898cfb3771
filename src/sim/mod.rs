//! Build a run from a [`Config`]: topology, faults, routing, traffic, partitions; run it on the
//! engine; merge the partitions' statistics into a [`RunResult`].

use crate::config::{Config, ConfigError};
use crate::engine::{Cycle, Outcome, Progress, RunSpec, World};
use crate::metrics::{
    jain_index, peak_memory_bytes, SampleRelay, SampleSender, SampleSink, Stats, Steadiness, Summary,
};
use crate::network::{
    Allocation, Allocator, EjectionVcs, FetchAhead, InjectionVcs, ModelParams, NetPartition, RouterOption, Throttle,
};
use crate::routing::{self, Routing};
use crate::topology::{Fabric, SwitchId, Topology, View};
use crate::traffic::{Injection, Pattern, PatternKind};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;
use thiserror::Error;

/// Why a run did not produce a complete result.
#[derive(Debug, Error)]
pub enum SimError {
    /// Bad input (exit code 2).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The watchdog found no progress with packets in flight.
    #[error(
        "deadlock: {in_flight} packets in flight and nothing moved since cycle {last_progress} (detected at cycle {cycle}); blocked channels:\n  {}",
        blocked.join("\n  ")
    )]
    Deadlock {
        /// Cycle of detection.
        cycle: Cycle,
        /// Last cycle anything moved.
        last_progress: Cycle,
        /// Packets in flight.
        in_flight: i64,
        /// Blocked input channels, readable.
        blocked: Vec<String>,
    },
    /// The model could not continue (e.g. an unroutable packet).
    #[error("simulation failed at cycle {cycle}: {reason}")]
    Failed {
        /// Cycle.
        cycle: Cycle,
        /// Why.
        reason: String,
    },
}

impl SimError {
    /// Process exit code: 2 for bad input, 3 for a failed simulation.
    pub fn exit_code(&self) -> i32 {
        match self {
            SimError::Config(_) => 2,
            _ => 3,
        }
    }
}

/// How to run (not part of the experiment: results never depend on it).
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Partitions, one thread each.
    pub threads: usize,
    /// Refuse the run (exit 2) if its router state needs more than this many bytes (`--max-memory`);
    /// `None`: the memory available to the process ([`Config::check_memory`]).
    pub max_memory: Option<u64>,
    /// Whether partitions fetch the next switches' records ahead (`--prefetch`; a matter of speed
    /// only).
    pub fetch_ahead: FetchAhead,
    /// Checkpoints to write, and the one to resume from (`--checkpoint`, `--resume`; see
    /// [`crate::checkpoint::setup`]).
    pub checkpoint: Option<crate::checkpoint::Plan>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { threads: 1, max_memory: None, fetch_ahead: FetchAhead::Auto, checkpoint: None }
    }
}

/// Everything a run produced.
pub struct RunResult {
    /// Headline figures.
    pub summary: Summary,
    /// Merged counters, histogram and time series.
    pub stats: Stats,
    /// Phits injected per server in the window (global server order).
    pub server_injected: Vec<u64>,
    /// Phits accepted per server in the window.
    pub server_accepted: Vec<u64>,
    /// Phits carried per switch-to-switch output port in the window, index `switch * ports + port`.
    pub link_phits: Vec<u64>,
    /// Whether the run reached its end (false if interrupted).
    pub complete: bool,
    /// The network that was simulated.
    pub net: Arc<Fabric>,
    /// Ranks and threads the run used.
    pub layout: Layout,
    /// Peak resident memory of the largest rank, bytes (`summary.peak_memory_bytes` is the sum over
    /// ranks).
    pub peak_memory_max_rank: u64,
}

/// The topology described by the config.
pub fn build_topology(cfg: &Config) -> Result<Arc<dyn Topology>, ConfigError> {
    cfg.topology.build(cfg.seed)
}

/// The topology with the config's faults applied (`[faults]`, see [`crate::topology::faults`]).
pub fn build_network(cfg: &Config) -> Result<Arc<Fabric>, ConfigError> {
    let topo = build_topology(cfg)?;
    let faults = cfg.faults.build(&*topo, cfg.seed)?;
    Ok(Arc::new(Fabric::new(topo, &faults)))
}

/// The traffic pattern described by the config, on `topo`'s servers: HyperX-coordinate patterns on
/// a HyperX, processor-id patterns on any topology.
pub fn build_pattern(cfg: &Config, topo: &dyn Topology) -> Result<Pattern, ConfigError> {
    let kind: PatternKind = cfg
        .traffic
        .pattern
        .parse()
        .map_err(|e: String| ConfigError::value("traffic.pattern", format!("\"{}\"", cfg.traffic.pattern), e))?;
    if let Some(n) = cfg.traffic.active_servers {
        let key = |e| ConfigError::value("traffic.active_servers", n, e);
        let ids = crate::traffic::active_servers(topo, n).map_err(key)?;
        let mut pattern = Pattern::on_active(kind, ids, topo.num_servers() as u64, cfg.seed).map_err(key)?;
        pattern.set_message_packets(cfg.traffic.message_packets());
        return Ok(pattern);
    }
    // Groups are consecutive switches with the same number of servers each: the topology's, or
    // `traffic.group_switches` of them (DAVC section 7.1's adversarial on RRGs).
    let groups = cfg.traffic.group_switches.map(|g| g as usize).or(topo.group_size());
    if let (PatternKind::AdversarialGroup, Some(group), Some(t)) = (kind, groups, topo.uniform_servers()) {
        return Pattern::next_group(topo.num_servers() as u64, (group * t) as u64).map_err(|e| {
            match cfg.traffic.group_switches {
                Some(g) => ConfigError::value(
                    "traffic.group_switches",
                    g,
                    format!("switches per group, a divisor of the switches leaving at least 2 groups: {e}"),
                ),
                None => ConfigError::value("traffic.pattern", format!("\"{}\"", cfg.traffic.pattern), e),
            }
        });
    }
    let built = match (kind, topo.view()) {
        (_, View::HyperX(h)) => Pattern::new(kind, h.sides(), topo.servers_at(0), cfg.seed),
        _ => Pattern::on_servers(kind, topo.num_servers() as u64, &topo.name(), cfg.seed),
    };
    let mut pattern =
        built.map_err(|e| ConfigError::value("traffic.pattern", format!("\"{}\"", cfg.traffic.pattern), e))?;
    pattern.set_message_packets(cfg.traffic.message_packets());
    Ok(pattern)
}

/// Map switches onto `parts` partitions with the config's method (`partition.method`).
pub fn assign_partitions(cfg: &Config, net: &Fabric, parts: usize) -> Result<Vec<u32>, ConfigError> {
    let n = net.num_switches();
    if parts == 0 || parts > n {
        return Err(ConfigError::value("--threads", parts, format!("between 1 and the number of switches ({n})")));
    }
    partition_with(cfg, &partition_graph(cfg, net)?, parts)
}

/// Map the vertices of `g` onto `parts` partitions with the config's method (`partition.method`).
fn partition_with(cfg: &Config, g: &partitioning::Graph, parts: usize) -> Result<Vec<u32>, ConfigError> {
    let method: partitioning::Method = cfg.partition.method.parse().map_err(|e: partitioning::ParseMethodError| {
        ConfigError::value("partition.method", format!("\"{}\"", cfg.partition.method), e.to_string())
    })?;
    partitioning::partition(g, parts, method, cfg.seed)
        .map_err(|e| ConfigError::value("partition.method", &cfg.partition.method, e.to_string()))
}

/// The switch graph handed to the partitioner (live links, each with its latency, which bounds
/// the engine's lookahead across a cut).
pub fn partition_graph(cfg: &Config, net: &Fabric) -> Result<partitioning::Graph, ConfigError> {
    let lat = class_latencies(cfg, net.topology())?;
    let topo = net.topology();
    let mut edges = Vec::new();
    for s in 0..net.num_switches() as SwitchId {
        for p in 0..net.switch_ports(s) as u16 {
            if let Some((o, _)) = net.neighbour(s, p) {
                if s < o {
                    edges.push((s, o, lat[topo.link_class(s, p) as usize] as u32));
                }
            }
        }
    }
    let g = partitioning::Graph::from_edges(net.num_switches(), &edges);
    Ok(match topo.grid() {
        Some(sides) => g.with_coords(sides),
        None => g,
    })
}

/// Packets per server of a `fixed` workload: `traffic.workload_phits` over the packet size, or
/// (the all-to-all shift without `workload_phits`) one full exchange over the `live` servers that
/// take part: `(live - 1)` messages of `traffic.shift_message_packets` packets.
fn fixed_packets(cfg: &Config, live: u64) -> Result<u64, ConfigError> {
    let plen = cfg.packet.size_phits as u64;
    match cfg.traffic.workload_phits {
        Some(w) => Ok(w / plen),
        None if cfg.traffic.pattern == PatternKind::AllToAllShift.name() => {
            let m = cfg.traffic.message_packets();
            live.saturating_sub(1).checked_mul(m).filter(|p| p.checked_mul(plen).is_some()).ok_or_else(|| {
                ConfigError::value(
                    "traffic.shift_message_packets",
                    m,
                    format!("a full exchange of at most 2^64 phits per server ({live} servers take part)"),
                )
            })
        }
        None => Ok(crate::config::DEFAULT_WORKLOAD_PHITS / plen),
    }
}

/// The latency of each of the topology's link classes: `link.latency`, or the class's entry in
/// `link.class_latency`.
pub fn class_latencies(cfg: &Config, topo: &dyn Topology) -> Result<Vec<u64>, ConfigError> {
    let classes = topo.link_classes();
    if let Some(k) = cfg.link.class_latency.keys().find(|k| !classes.contains(&k.as_str())) {
        return Err(ConfigError::value(
            &format!("link.class_latency.{k}"),
            cfg.link.class_latency[k],
            format!("a link class of {}: {}", topo.name(), classes.join(", ")),
        ));
    }
    Ok(classes.iter().map(|c| cfg.link.class_latency.get(*c).copied().unwrap_or(cfg.link.latency)).collect())
}

/// Everything derived from the config that partitions share. Checks first that the live servers
/// can reach each other ([`crate::preflight::check_connected`]).
///
/// **Active servers.** With `traffic.active_servers = n` only those `n` servers send and receive
/// (the others are silent) and the accepted load is over them.
///
/// **Dead servers and unreachable destinations.** The servers of failed switches never generate
/// and are never destinations: uniform traffic picks among the other *live* servers, and the random
/// server permutation permutes the live servers only (dead ones map to themselves and never send).
/// The all-to-all shift walks the live servers only (see [`PatternKind::AllToAllShift`]).
/// The other permutations keep their fixed map; a live server whose image is dead (or, with
/// `faults.unreachable = "drop"`, unreachable) never generates. With `"drop"`, uniform traffic draws
/// as usual and a packet to an unreachable destination is not generated (counted in
/// `packets_dropped`). These servers get no generation event at all ([`ModelParams::silent`]);
/// only uniform traffic on a split network reads a per-packet component check.
pub fn build_params(cfg: &Config, net: Arc<Fabric>) -> Result<ModelParams, ConfigError> {
    let reach = crate::preflight::check_connected(cfg, &net)?;
    let routing: Arc<dyn Routing> = Arc::from(routing::build(&cfg.routing_params(), net.clone())?);
    let mut pattern = build_pattern(cfg, net.topology())?;
    let topo = net.topology();
    let ns = net.num_servers();
    let mut silent = None;
    let mut component = None;
    let mut live_servers = reach.live_servers;
    if let Some(n) = cfg.traffic.active_servers {
        // The servers outside the active set are silent, as dead ones are; choosing the active set
        // among live servers is not defined, so faults that kill servers or split the network are
        // refused.
        if net.failed_switches() > 0 || reach.component.is_some() {
            return Err(ConfigError::value(
                "traffic.active_servers",
                n,
                "absent when faults fail switches or split the network (the active servers are chosen \
                 on the whole network)",
            ));
        }
        silent = Some(Arc::new((0..ns as u32).map(|v| !pattern.is_active(v)).collect()));
        live_servers = n;
    } else if net.failed_switches() > 0 || reach.component.is_some() {
        let live: Vec<bool> = (0..ns as u32).map(|v| net.server_alive(v)).collect();
        if net.failed_switches() > 0 {
            pattern.restrict_to_live(&live, cfg.seed);
        }
        let mut quiet = vec![false; ns];
        let mut any_rng = crate::rng::stream(0, 0, crate::rng::Purpose::Global);
        for v in 0..ns as u32 {
            let sw = topo.server_switch(v);
            quiet[v as usize] = if !live[v as usize] {
                true
            } else if pattern.is_permutation() {
                // Fixed maps draw nothing.
                let d = pattern.destination(v, &mut any_rng);
                let dsw = topo.server_switch(d);
                !live[d as usize] || reach.component.as_ref().is_some_and(|c| c[sw as usize] != c[dsw as usize])
            } else {
                false
            };
        }
        silent = Some(Arc::new(quiet));
        if !pattern.is_permutation() {
            component = reach.component.map(Arc::new);
        }
    }
    let pattern = Arc::new(pattern);
    let class_latency = class_latencies(cfg, net.topology())?;
    let plen = cfg.packet.size_phits as u64;
    let injection = match cfg.traffic.mode.as_str() {
        "fixed" => Injection::Fixed { packets: fixed_packets(cfg, live_servers)? },
        _ => Injection::Bernoulli { packet_rate: cfg.traffic.load / plen as f64 },
    };
    let warm = cfg.simulation.warmup_cycles;
    let window =
        if cfg.traffic.mode == "fixed" { (0, Cycle::MAX) } else { (warm, warm + cfg.simulation.measure_cycles) };
    let vcs = routing.vcs();
    let throttle = Throttle::parse(&cfg.router.injection_throttle)?;
    // The longest shortest path an acknowledgement takes: the diameter, or with faults the most the
    // distance tables hold (they store hops in a byte).
    let ack_max_hops = match throttle {
        Throttle::Window if net.is_faulty() => 254,
        Throttle::Window => net.topology().diameter() as Cycle,
        _ => 0,
    };
    let ack_hop = cfg.router.crossbar_latency + class_latency.iter().copied().max().unwrap_or(cfg.link.latency);
    Ok(ModelParams {
        net,
        routing,
        pattern,
        injection,
        seed: cfg.seed,
        vcs,
        packet_phits: plen,
        class_latency,
        server_latency: cfg.link.latency,
        crossbar_latency: cfg.router.crossbar_latency,
        crossbar_speedup: cfg.router.crossbar_speedup as u64,
        input_buffer: cfg.router.input_buffer_packets as u16,
        output_buffer: cfg.router.output_buffer_packets as u16,
        source_queue: cfg.traffic.source_queue_packets as u32,
        allocator: Allocator::parse(&cfg.router.allocator)?,
        intransit_priority: cfg.router.intransit_priority,
        throttle,
        injection_threshold: cfg.router.injection_threshold,
        injection_window: cfg.router.injection_window.min(u16::MAX as u64) as u16,
        ack_hop,
        ack_max_hops,
        injection_vcs: InjectionVcs::parse(&cfg.router.injection_vcs)?,
        ejection_vcs: EjectionVcs::parse(&cfg.router.ejection_vcs)?,
        allocation: Allocation::parse(&cfg.router.allocation)?,
        window,
        sample_cycles: cfg.output.sample_cycles,
        silent,
        component,
        unreachable_pairs: reach.unreachable_pairs,
        live_servers,
    })
}

/// Run the experiment in this process alone. `progress` can be watched (and stopped) from another
/// thread.
pub fn run(cfg: &Config, opts: &RunOptions, progress: &Progress) -> Result<RunResult, SimError> {
    run_observed(cfg, opts, progress, None)
}

/// [`run`], also sending every finished time-series interval of every partition to `samples`
/// during the run (see [`SampleSink`]; partition `i` of `opts.threads` sends as `i`).
pub fn run_observed(
    cfg: &Config,
    opts: &RunOptions,
    progress: &Progress,
    samples: Option<SampleSender>,
) -> Result<RunResult, SimError> {
    run_on(&World::single(), cfg, opts, progress, samples).map(|r| r.expect("a single process is rank 0"))
}

/// Run the experiment on every rank of `world` (collective: every rank calls it with the same
/// config), `opts.threads` partitions per rank. Rank `r` simulates global partitions
/// `r * threads .. (r + 1) * threads`. Rank 0 gets the merged result; the other ranks get `None`
/// (or the same error as rank 0). With one rank, `samples` receives every partition's finished
/// intervals during the run (partition `i` sends as `i`). With several ranks, rank 0's `samples`
/// receives each finished interval once, already merged over all ranks and partitions, as
/// partition 0, every few windows (see [`SampleRelay`]; [`sample_senders`] says how many senders
/// to expect); the other ranks' `samples` are ignored. Intervals the run ends in before they were
/// sent are in the result.
pub fn run_on(
    world: &World,
    cfg: &Config,
    opts: &RunOptions,
    progress: &Progress,
    samples: Option<SampleSender>,
) -> Result<Option<RunResult>, SimError> {
    let s = &cfg.simulation;
    if !s.measure_until_steady || cfg.traffic.mode == "fixed" {
        return run_once(world, cfg, opts, progress, samples);
    }
    // Runs twice as long each time, measuring the last `measure_cycles`, until the window is steady
    // or the next run would pass the bound. Every run is a fresh one (runs are deterministic, so it
    // goes through the same states as the shorter ones first), which costs at most twice the last
    // one and keeps the engine and every output unchanged; only the last run's time series goes to
    // `samples`.
    let bound = if s.max_cycles > 0 { s.max_cycles } else { 8 * (s.warmup_cycles + s.measure_cycles) };
    let mut end = s.warmup_cycles + s.measure_cycles;
    loop {
        let mut c = cfg.clone();
        c.simulation.warmup_cycles = end - s.measure_cycles;
        let (tx, rx) = match samples {
            Some(_) => {
                let (tx, rx) = crossbeam::channel::unbounded();
                (Some(tx), Some(rx))
            }
            None => (None, None),
        };
        let res = run_once(world, &c, opts, progress, tx)?;
        // Only rank 0 has the result: all ranks take its decision.
        let again = res.as_ref().is_some_and(|r| r.complete && !r.summary.steady_state) && 2 * end <= bound;
        if world.min_all(if world.is_root() { again as u64 } else { u64::MAX }) == 0 {
            if let (Some(out), Some(rx)) = (&samples, rx) {
                for m in rx.try_iter() {
                    let _ = out.send(m);
                }
            }
            return Ok(res);
        }
        end *= 2;
    }
}

/// How many partitions send each interval to the `samples` of [`run_on`] with `layout`: every
/// partition with one rank, and rank 0's relay alone with several.
pub fn sample_senders(layout: Layout) -> u32 {
    if layout.ranks == 1 {
        layout.threads as u32
    } else {
        1
    }
}

/// One run of `cfg` as configured (see [`run_on`]).
fn run_once(
    world: &World,
    cfg: &Config,
    opts: &RunOptions,
    progress: &Progress,
    samples: Option<SampleSender>,
) -> Result<Option<RunResult>, SimError> {
    let (ranks, rank, threads) = (world.size(), world.rank(), opts.threads);
    let net = build_network(cfg)?;
    let params = Arc::new(build_params(cfg, net.clone())?);
    // The command checked the memory before building anything, with a lower bound of the VC
    // count; the routing now says how many VCs every port gets.
    cfg.check_memory(ranks, opts.max_memory, Some(params.routing.vcs()))?;
    let n = net.num_switches();
    let total = ranks * threads;
    if threads == 0 || total > n {
        return Err(ConfigError::value(
            "--threads",
            threads,
            format!("at least 1, with ranks ({ranks}) x threads at most the number of switches ({n})"),
        )
        .into());
    }
    let graph = partition_graph(cfg, &net)?;
    let part_of = partition_with(cfg, &graph, total)?;
    let first = rank * threads;
    let mine = |p: u32| (p as usize) >= first && (p as usize) < first + threads;
    // Window: the smallest latency of a cut link, over all ranks. Neighbours: the ranks this rank
    // shares a link with, the only ones it exchanges messages with.
    let mut lookahead = u64::MAX;
    let mut is_neighbour = vec![false; ranks];
    let mut members: Vec<Vec<SwitchId>> = vec![Vec::new(); threads];
    let mut local_of = vec![0u32; n];
    for (s, &p) in part_of.iter().enumerate() {
        if !mine(p) {
            continue;
        }
        let li = p as usize - first;
        local_of[s] = members[li].len() as u32;
        members[li].push(s as SwitchId);
        for e in graph.edge_range(s) {
            let q = part_of[graph.adjncy[e] as usize];
            if q != p {
                lookahead = lookahead.min(graph.latency[e] as u64);
                is_neighbour[q as usize / threads] |= !mine(q);
            }
        }
    }
    // The graph is O(links) (about 40 MiB for the million-endpoint HyperX): not needed any more.
    drop(graph);
    let lookahead = match world.min_all(lookahead) {
        u64::MAX => params.max_latency(),
        l => l,
    };
    let neighbours: Vec<usize> = (0..ranks).filter(|&q| is_neighbour[q]).collect();
    let local_of = Arc::new(local_of);
    let mut parts: Vec<NetPartition> = members
        .into_iter()
        .map(|m| {
            let mut part = NetPartition::new(params.clone(), m, local_of.clone());
            part.set_fetch_ahead(opts.fetch_ahead);
            part
        })
        .collect();
    // Other ranks' partitions cannot reach rank 0's collector: with several ranks every rank
    // relays its partitions' intervals to rank 0 at window ends, if rank 0 collects (all decide
    // alike, as the relay's reductions are collective).
    let relayed = ranks > 1 && world.min_all(if world.is_root() { samples.is_some() as u64 } else { u64::MAX }) == 1;
    let mut relay = None;
    let sink_tx = if relayed {
        let (r, tx) = SampleRelay::new(threads as u32, cfg.output.sample_cycles, samples);
        relay = Some(r);
        Some(tx)
    } else if ranks == 1 {
        samples
    } else {
        None
    };
    if let Some(tx) = sink_tx {
        for (i, p) in parts.iter_mut().enumerate() {
            p.sample_sink = Some(SampleSink::new(i as u32, tx.clone()));
        }
    }
    let fixed = cfg.traffic.mode == "fixed";
    let end = if fixed {
        if cfg.simulation.max_cycles > 0 {
            cfg.simulation.max_cycles
        } else {
            Cycle::MAX
        }
    } else {
        cfg.simulation.warmup_cycles + cfg.simulation.measure_cycles
    };
    let spec = RunSpec {
        end,
        lookahead,
        max_delay: params.max_delay(),
        stop_when_drained: fixed,
        watchdog: cfg.simulation.watchdog_cycles,
        start: 0,
        pause_at: Cycle::MAX,
    };
    // Checkpoint and restart (see `crate::checkpoint`): restore a resumed run, schedule pauses.
    let mut spec = spec;
    if let Some(plan) = &opts.checkpoint {
        crate::checkpoint::prepare(world, plan, &mut parts, &mut spec)?;
    }
    let start = Instant::now();
    let (parts, outcome) = loop {
        let (done, outcome) = match relay.as_mut() {
            Some(r) => world.run_observed(parts, &part_of, &neighbours, &spec, progress, |end| {
                r.window_end(end, |words| world.sum_to_root(words))
            }),
            None => world.run(parts, &part_of, &neighbours, &spec, progress),
        };
        // Checkpoint and restart: write at pauses and on signals; after a pause, go on.
        if opts
            .checkpoint
            .as_ref()
            .is_some_and(|plan| crate::checkpoint::after_leg(world, plan, cfg, &done, &outcome, &mut spec))
        {
            parts = done;
            continue;
        }
        break (done, outcome);
    };
    let wall = start.elapsed().as_secs_f64();
    let failed = matches!(outcome, Outcome::Deadlock { .. } | Outcome::Failed { .. });
    let local = RankResult::of(&parts, &outcome, failed);
    drop(parts);
    // Every rank takes part in the gather, whatever the outcome (it is collective).
    let results = if ranks == 1 {
        vec![local]
    } else {
        let bytes = bincode::serde::encode_to_vec(&local, bincode::config::standard())
            .expect("encoding a rank's result cannot fail");
        drop(local);
        match world.gather_to_root(bytes) {
            Some(all) => all
                .iter()
                .map(|b| {
                    bincode::serde::decode_from_slice(b, bincode::config::standard())
                        .expect("decoding a rank's result sent by another rank of this run")
                        .0
                })
                .collect(),
            None => Vec::new(),
        }
    };
    let (cycles, complete) = match outcome {
        Outcome::Finished { cycles } => (cycles, true),
        // The engine notices a drain at the end of a window, and windows depend on the layout
        // (one partition checks every 64 cycles); `collect` reports the completion cycle instead,
        // which does not.
        Outcome::Drained { .. } => (DRAINED, true),
        Outcome::Interrupted { cycles } => (cycles, false),
        Outcome::Paused { .. } => unreachable!("a pause is taken by the checkpoint loop"),
        Outcome::Deadlock { cycle, last_progress, in_flight } => {
            let blocked = results.iter().flat_map(|r| r.blocked.iter().cloned()).take(12).collect();
            return Err(SimError::Deadlock { cycle, last_progress, in_flight, blocked });
        }
        Outcome::Failed { cycle } => {
            let reason = results.iter().find_map(|r| r.failure.clone()).unwrap_or_default();
            return Err(SimError::Failed { cycle, reason });
        }
    };
    if !world.is_root() {
        return Ok(None);
    }
    let layout = Layout { ranks, threads };
    Ok(Some(collect(cfg, &params, &results, layout, cycles, wall, complete, fixed)))
}

/// Stands for "drained; report the completion cycle" between [`run_on`] and [`collect`].
const DRAINED: Cycle = Cycle::MAX;

/// What one rank contributes to the result: its partitions' merged counters, its switches'
/// per-server and per-link arrays, and what it knows about a failure.
#[derive(Debug, Default, Serialize, Deserialize)]
struct RankResult {
    stats: Stats,
    /// Global ids of the switches whose arrays follow, in order.
    switches: Vec<SwitchId>,
    server_injected: Vec<u64>,
    server_accepted: Vec<u64>,
    link_phits: Vec<u64>,
    /// Peak resident memory of the rank's process, bytes.
    peak_memory: u64,
    failure: Option<String>,
    blocked: Vec<String>,
}

impl RankResult {
    fn of(parts: &[NetPartition], outcome: &Outcome, failed: bool) -> Self {
        let mut r = RankResult { peak_memory: peak_memory_bytes(), ..Default::default() };
        for p in parts {
            r.stats.merge(&p.stats);
            r.switches.extend_from_slice(p.switches());
            r.server_injected.extend_from_slice(&p.server_injected);
            r.server_accepted.extend_from_slice(&p.server_accepted);
            r.link_phits.extend_from_slice(&p.link_phits);
        }
        if failed {
            r.failure = parts.iter().find_map(|p| p.failure().map(str::to_string));
            if let Outcome::Deadlock { cycle, .. } = outcome {
                r.blocked = parts.iter().flat_map(|p| p.blocked_report(*cycle, 12)).take(12).collect();
            }
        }
        r
    }
}

/// How a run was spread over processes and threads (not part of the experiment: results never
/// depend on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// MPI ranks (processes).
    pub ranks: usize,
    /// Partitions (threads) per rank.
    pub threads: usize,
}

#[allow(clippy::too_many_arguments)]
fn collect(
    cfg: &Config,
    params: &ModelParams,
    ranks: &[RankResult],
    layout: Layout,
    cycles: Cycle,
    wall: f64,
    complete: bool,
    fixed: bool,
) -> RunResult {
    let net = params.net.clone();
    let topo = net.topology();
    let r = net.max_switch_ports();
    let n = net.num_switches();
    let ns = net.num_servers();
    let mut stats = Stats::default();
    let mut server_injected = vec![0u64; ns];
    let mut server_accepted = vec![0u64; ns];
    let mut link_phits = vec![0u64; n * r];
    for p in ranks {
        stats.merge(&p.stats);
        // A rank's server arrays hold its switches' servers in its switch order.
        let mut k = 0;
        for (l, &sw) in p.switches.iter().enumerate() {
            let g = sw as usize;
            let t = topo.servers_at(sw);
            let f = if t > 0 { topo.first_server(sw) as usize } else { 0 };
            server_injected[f..f + t].copy_from_slice(&p.server_injected[k..k + t]);
            server_accepted[f..f + t].copy_from_slice(&p.server_accepted[k..k + t]);
            k += t;
            link_phits[g * r..(g + 1) * r].copy_from_slice(&p.link_phits[l * r..(l + 1) * r]);
        }
    }
    let peak_memory_total: u64 = ranks.iter().map(|p| p.peak_memory).sum();
    let peak_memory_max = ranks.iter().map(|p| p.peak_memory).max().unwrap_or(0);
    // In-flight counts per sample: cumulative generated minus delivered is not per-interval data, so
    // it is rebuilt from the per-interval injections and deliveries of whole packets.
    let plen = cfg.packet.size_phits as i64;
    let mut inflight = 0i64;
    for s in &mut stats.samples {
        inflight += s.injected_packets as i64 - s.delivered_packets as i64;
        s.in_flight = inflight;
    }
    // Accepted load per live server; Jain's index over the servers that send.
    let servers = params.live_servers as f64;
    // An interrupted run measured only the cycles it reached.
    let window_cycles = if fixed {
        stats.last_delivery.max(1)
    } else {
        cfg.simulation.measure_cycles.min(cycles.saturating_sub(cfg.simulation.warmup_cycles)).max(1)
    };
    let accepted_load = stats.delivered_phits as f64 / (window_cycles as f64 * servers);
    let steadiness = if fixed {
        // A fixed workload drains by design: not judged.
        Steadiness { steady: true, accepted_trend: 0.0, in_flight_trend: 0.0 }
    } else {
        let w = cfg.simulation.warmup_cycles;
        Steadiness::of(&stats.samples, cfg.output.sample_cycles, plen as u64, w, w + window_cycles)
    };
    let dp = stats.delivered_packets.max(1) as f64;
    let cycles = if cycles == DRAINED { stats.last_delivery + 1 } else { cycles };
    let tables = params.routing.tables();
    let summary = Summary {
        offered_load: cfg.traffic.load,
        accepted_load,
        average_latency: if stats.delivered_packets == 0 { f64::NAN } else { stats.latency_sum as f64 / dp },
        latency_p99: stats.latency_quantile(0.99),
        average_hops: if stats.delivered_packets == 0 { f64::NAN } else { stats.hops_sum as f64 / dp },
        jain_index: match &params.silent {
            None => jain_index(&server_injected),
            Some(q) => jain_index(
                &server_injected.iter().zip(q.iter()).filter(|(_, &q)| !q).map(|(&x, _)| x).collect::<Vec<_>>(),
            ),
        },
        packets_delivered: stats.delivered_packets,
        cycles,
        wall_seconds: wall,
        hops_per_second: if wall > 0.0 { stats.traversals as f64 / wall } else { 0.0 },
        completion_cycles: if fixed { Some(stats.last_delivery + 1) } else { None },
        steady_state: steadiness.steady,
        accepted_trend: steadiness.accepted_trend,
        in_flight_trend: steadiness.in_flight_trend,
        packets_generated: stats.generated_packets,
        packets_suppressed: stats.suppressed_packets,
        peak_memory_bytes: peak_memory_total,
        packets_dropped: stats.dropped_packets,
        unreachable_pairs: params.unreachable_pairs,
        servers_lost: (ns - net.live_servers()) as u64,
        routing_layers: tables.as_ref().map_or(0, |t| t.layers as u64),
        routing_table_bytes: tables.as_ref().map_or(0, |t| t.bytes),
        routing_build_seconds: tables.as_ref().map_or(0.0, |t| t.build_seconds),
        vcs_used: stats.vc_phits.iter().filter(|&&p| p > 0).count() as u64,
        vc_phits: stats.vc_phits.clone(),
    };
    RunResult {
        summary,
        stats,
        server_injected,
        server_accepted,
        link_phits,
        complete,
        net,
        layout,
        peak_memory_max_rank: peak_memory_max,
    }
}
