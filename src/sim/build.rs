//! Compose a run's model from a [`Config`]: the network with its faults, the routing, the traffic
//! pattern, the parameters every partition shares ([`ModelParams`]) and the partitioning.

use crate::config::{Config, ConfigError, Schedule, TrafficMode};
use crate::memory::human_bytes;
use crate::network::{ModelParams, Throttle};
use crate::routing::{self, Routing};
use crate::topology::{Fabric, SwitchId, Targets, Topology, View};
use crate::traffic::{Injection, Pattern, PatternKind};
use std::sync::Arc;

/// The topology described by the config.
pub fn build_topology(cfg: &Config) -> Result<Arc<dyn Topology>, ConfigError> {
    cfg.topology.build(cfg.seed)
}

/// The topology with the config's faults applied (`[faults]`, see [`crate::topology::faults`]),
/// within the memory this process may still use ([`build_network_within`]).
pub fn build_network(cfg: &Config) -> Result<Arc<Fabric>, ConfigError> {
    build_network_within(cfg, None, 1)
}

/// [`build_network`] for one of `ranks` processes, within `max_memory` (`--max-memory`; `None`:
/// what the process may still use, [`crate::memory::memory_limit`]): see [`fabric_within`].
pub fn build_network_within(cfg: &Config, max_memory: Option<u64>, ranks: usize) -> Result<Arc<Fabric>, ConfigError> {
    let topo = build_topology(cfg)?;
    let faults = cfg.faults.build(&*topo, cfg.seed)?;
    Ok(Arc::new(fabric_within(cfg, topo, &faults, max_memory, ranks, None)?))
}

/// `faults` applied to `topo` with the config's distance targets, where the distance exceptions
/// of a faulty HyperZ or fat tree may take what is left of `max_memory` (`None`: of what the
/// process may still use) once the rest of the run's [`Config::memory_lower_bound`] for `ranks`
/// processes is set aside. Their number depends on where the faults fall (the up-front check
/// counts only [`Config::distance_exceptions_bound`]), so the build keeps a running total and stops
/// before they would take more: a ConfigError naming `faults` (exit 2), not an allocation failure;
/// or `faults.events[k]` when `faults` is the set after failure event `event = Some(k)`.
pub fn fabric_within(
    cfg: &Config,
    topo: Arc<dyn Topology>,
    faults: &crate::topology::FaultSet,
    max_memory: Option<u64>,
    ranks: usize,
    event: Option<usize>,
) -> Result<Fabric, ConfigError> {
    let limit = max_memory.map(|l| (l, "--max-memory".to_string())).or_else(crate::memory::memory_limit);
    let (need, _) = cfg.memory_lower_bound(ranks, None);
    let counted = cfg.distance_exceptions_bound() * crate::topology::exceptions::BYTES_PER_EXCEPTION as u128;
    let rest = need.saturating_sub(counted.min(u64::MAX as u128) as u64);
    let budget = limit.as_ref().map(|(l, _)| l.saturating_sub(rest));
    Fabric::within(topo, faults, distance_targets(cfg), budget).map_err(|e| {
        let (avail, source) = limit.unwrap_or((u64::MAX, String::new()));
        let (key, value) = match event {
            None => ("faults".to_string(), cfg.faults.describe()),
            Some(k) => (format!("faults.events[{k}]"), format!("cycle {}", cfg.faults.events[k].cycle)),
        };
        ConfigError::value(
            &key,
            value,
            format!(
                "a fault set whose distance exceptions fit in memory: on this {} the faulty distances need {e}, \
                 what {source} ({}) leaves after the rest of the run ({} at least); use fewer faults, another \
                 faults.seed, or a machine with more memory",
                cfg.topology.kind(),
                human_bytes(avail),
                human_bytes(rest)
            ),
        )
    })
}

/// The switches a faulty HyperZ or fat tree keeps distance exceptions towards: those with servers,
/// unless the config's routing heads for others ([`routing::Entry::routes_to_any_switch`]).
pub fn distance_targets(cfg: &Config) -> Targets {
    match routing::entry(&cfg.routing.algorithm) {
        Some(e) if e.routes_to_any_switch => Targets::Every,
        _ => Targets::ServerSwitches,
    }
}

/// The traffic pattern described by the config, on `topo`'s servers: HyperX-coordinate patterns on
/// a HyperX, processor-id patterns on any topology.
pub fn build_pattern(cfg: &Config, topo: &dyn Topology) -> Result<Pattern, ConfigError> {
    let kind = cfg.traffic.pattern;
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
pub(crate) fn partition_with(cfg: &Config, g: &partitioning::Graph, parts: usize) -> Result<Vec<u32>, ConfigError> {
    let method = cfg.partition.method;
    partitioning::partition(g, parts, method, cfg.seed)
        .map_err(|e| ConfigError::value("partition.method", method.name(), e.to_string()))
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
    Ok(match (topo.grid(), topo.view()) {
        (Some(sides), _) => g.with_coords(sides),
        // A HyperZ's or fat tree's levels do unequal work per switch (the leaves hold the servers;
        // `surepath-aliod` on the faulty million-endpoint HyperZ, the thread of the level-2 switches
        // did 7% of the CPU work, the other 93%): each
        // part takes a slice of every level, which are consecutive ids, the same Z-nodes' at
        // every level.
        (None, View::HyperZ(hz)) if hz.height() > 1 => {
            let mut bounds = vec![0];
            for n in hz.switches_per_level() {
                bounds.push(bounds[bounds.len() - 1] + n);
            }
            g.with_strata(bounds)
        }
        (None, _) => g,
    })
}

/// Packets per server of a `fixed` workload: `traffic.workload_phits` over the packet size, or
/// (the all-to-all shift without `workload_phits`) one full exchange over the `live` servers that
/// take part: `(live - 1)` messages of `traffic.shift_message_packets` packets.
fn fixed_packets(cfg: &Config, live: u64) -> Result<u64, ConfigError> {
    let plen = cfg.packet.size_phits as u64;
    match cfg.traffic.workload_phits {
        Some(w) => Ok(w / plen),
        None if cfg.traffic.pattern == PatternKind::AllToAllShift => {
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
/// The counters count in `schedule`'s window.
pub fn build_params(cfg: &Config, net: Arc<Fabric>, schedule: &Schedule) -> Result<ModelParams, ConfigError> {
    build_params_with(cfg, net, schedule, None)
}

/// [`build_params`] with `routing` (built for another network: a failure event's, see
/// [`super::events`]) instead of the config's routing built on `net`.
pub fn build_params_with(
    cfg: &Config,
    net: Arc<Fabric>,
    schedule: &Schedule,
    routing: Option<Arc<dyn Routing>>,
) -> Result<ModelParams, ConfigError> {
    build_model(cfg, net, schedule, routing, None)
}

/// [`build_params_with`] for the network after a failure event, where a workload keeps the tasks
/// where they were placed (`placed`, the run's plan) rather than being placed again on the new
/// network's live servers.
pub fn build_params_after_event(
    cfg: &Config,
    net: Arc<Fabric>,
    schedule: &Schedule,
    routing: Arc<dyn Routing>,
    placed: Option<Arc<crate::network::WorkloadPlan>>,
) -> Result<ModelParams, ConfigError> {
    build_model(cfg, net, schedule, Some(routing), Some(placed))
}

fn build_model(
    cfg: &Config,
    net: Arc<Fabric>,
    schedule: &Schedule,
    routing: Option<Arc<dyn Routing>>,
    placed: Option<Option<Arc<crate::network::WorkloadPlan>>>,
) -> Result<ModelParams, ConfigError> {
    let reach = crate::preflight::check_connected(cfg, &net)?;
    let routing: Arc<dyn Routing> = match routing {
        Some(r) => r,
        None => Arc::from(routing::build(&cfg.routing_params(), net.clone())?),
    };
    let mut pattern = build_pattern(cfg, net.topology())?;
    let topo = net.topology();
    let ns = net.num_servers();
    let mut silent = None;
    let mut component = None;
    let mut live_servers = reach.live_servers;
    let workload = match placed {
        Some(p) => p,
        None => super::workload::plan(cfg, &net, reach.component.as_deref())?,
    };
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
    if let Some(plan) = &workload {
        // Servers without a task neither send nor receive; the accepted load is over the tasks.
        silent = Some(Arc::new(plan.task_of.iter().map(|&t| t == crate::network::NO_TASK).collect()));
        live_servers = plan.server_of.len() as u64;
        component = None;
    }
    let pattern = Arc::new(pattern);
    let class_latency = class_latencies(cfg, net.topology())?;
    let plen = cfg.packet.size_phits as u64;
    let injection = match cfg.traffic.mode {
        _ if workload.is_some() => Injection::Workload,
        TrafficMode::Fixed => Injection::Fixed { packets: fixed_packets(cfg, live_servers)? },
        TrafficMode::Bernoulli => Injection::Bernoulli { packet_rate: cfg.traffic.load / plen as f64 },
    };
    let vcs = routing.vcs();
    let r = &cfg.router;
    let throttle = r.injection_throttle;
    // The longest shortest path an acknowledgement takes: the diameter, or with faults the most the
    // distance tables hold (they store hops in a byte).
    let ack_max_hops = match throttle {
        Throttle::Window if net.is_faulty() => 254,
        Throttle::Window => net.topology().diameter() as u64,
        _ => 0,
    };
    let ack_hop = r.crossbar_latency + class_latency.iter().copied().max().unwrap_or(cfg.link.latency);
    let retransmit = match cfg.faults.retransmit_cycles {
        Some(after) => {
            let longest = class_latency.iter().copied().chain([cfg.link.latency]).max().unwrap_or(1);
            if after < longest {
                return Err(ConfigError::value(
                    "faults.retransmit_cycles",
                    after,
                    format!(
                        "at least the largest link latency ({longest} cycles): a source learns of a loss no sooner \
                         than a packet crosses a link"
                    ),
                ));
            }
            Some(crate::network::Retransmit { after, limit: cfg.faults.retransmit_limit as u8 })
        }
        None => None,
    };
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
        crossbar_latency: r.crossbar_latency,
        crossbar_speedup: r.crossbar_speedup as u64,
        input_buffer: r.input_buffer_packets as u16,
        output_buffer: r.output_buffer_packets as u16,
        source_queue: cfg.traffic.source_queue_packets as u32,
        allocator: r.allocator,
        intransit_priority: r.intransit_priority,
        throttle,
        injection_threshold: r.injection_threshold,
        injection_window: r.injection_window.min(u16::MAX as u64) as u16,
        ack_hop,
        ack_max_hops,
        injection_vcs: r.injection_vcs,
        ejection_vcs: r.ejection_vcs,
        allocation: r.allocation,
        reroute: r.reroute,
        window: schedule.window(),
        sample_cycles: cfg.output.sample_cycles,
        link_series: cfg.output.link_series,
        silent,
        component,
        unreachable_pairs: reach.unreachable_pairs,
        live_servers,
        workload,
        retransmit,
    })
}
