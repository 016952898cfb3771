//! `hxsim analyze`: topology properties after faults (switches, servers, links, radix, diameter,
//! distances, failed and live elements, unreachable pairs), and with `--sequence` the same along a
//! nested random link fault sequence (SurePath Fig. 1).

use crate::config::{Config, ConfigError};
use crate::sim;
use crate::topology::faults::{LiveGraph, Reach};
use anyhow::Result;
use serde::Serialize;

/// Topology properties reported by `hxsim analyze`.
#[derive(Debug, Serialize)]
pub struct Analysis {
    /// Switches.
    pub switches: usize,
    /// Servers.
    pub servers: usize,
    /// Live switch-to-switch links.
    pub links: usize,
    /// Ports per switch (servers plus switch-to-switch), the most of any switch.
    pub radix: usize,
    /// Largest distance between switches that have servers (over live links), in switch-to-switch
    /// hops.
    pub diameter: u32,
    /// Largest distance between two servers, in hops including the two server links.
    pub server_diameter: u32,
    /// Mean distance over all ordered pairs of switches that have servers (self pairs included).
    pub average_distance: f64,
    /// Every switch reaches every other.
    pub connected: bool,
    /// Links removed by faults (listed, or taken down by a failed switch).
    pub failed_links: usize,
    /// Switches removed by faults.
    pub failed_switches: usize,
    /// Switches alive.
    pub live_switches: usize,
    /// Live switch-to-switch links (the same as `links`).
    pub live_links: usize,
    /// Servers of live switches.
    pub live_servers: u64,
    /// Servers lost with failed switches.
    pub servers_lost: u64,
    /// Ordered pairs of live servers that cannot reach each other.
    pub unreachable_pairs: u64,
    /// Memory a run of this config allocates up front (router and server state, distance and
    /// routing tables; one process), bytes: [`Config::memory_lower_bound`].
    pub memory_bytes: u64,
    /// The most its packets can add (every buffer and source queue full), bytes:
    /// [`Config::packet_bytes_bound`].
    pub packet_bytes_max: u64,
    /// With faults on a HyperX, HyperZ or fat tree: the switch pairs whose distance differs from
    /// the family's closed form, which the run stores instead of an all-pairs table (5 bytes each).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance_exceptions: Option<u64>,
    /// With `[workload]`: its tasks, operations, messages and memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadFacts>,
    /// Family-specific facts (e.g. switches, radix and links per level of a HyperZ).
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// What `hxsim analyze` says of a `[workload]`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WorkloadFacts {
    /// The kernel and its sizes, or the GOAL file.
    pub name: String,
    /// Tasks (one per server).
    pub tasks: u32,
    /// Operations over all tasks.
    pub operations: u64,
    /// Messages (sends).
    pub messages: u64,
    /// Bytes the compiled workload and its run-time state take (every process holds the
    /// workload; the state is split over the partitions), counted in the memory check.
    pub bytes: u64,
}

/// Compute the analysis of a config's network; `vcs`: the VCs per port of the config's routing, if
/// it was built (for the memory figures, [`Config::memory_lower_bound`]).
pub fn analysis(cfg: &Config, vcs: Option<usize>) -> Result<Analysis, ConfigError> {
    let topo = sim::build_topology(cfg)?;
    let faults = cfg.faults.build(&*topo, cfg.seed)?;
    let comps = LiveGraph::new(&*topo, &faults).components();
    if comps.live_servers == 0 {
        return Err(ConfigError::value(
            "faults",
            cfg.faults.describe(),
            format!(
                "a fault set that leaves some of the {} servers alive (failed switches take their servers with them)",
                topo.num_servers()
            ),
        ));
    }
    let net = sim::build::fabric_within(cfg, topo, &faults, None, 1, None)?;
    let d = net.distance_stats();
    Ok(Analysis {
        switches: net.num_switches(),
        servers: net.num_servers(),
        links: net.live_links(),
        radix: net.max_router_ports(),
        diameter: d.diameter,
        server_diameter: d.diameter + 2,
        average_distance: d.average_distance,
        connected: d.connected,
        failed_links: net.failed_links(),
        failed_switches: net.failed_switches(),
        live_switches: net.num_switches() - net.failed_switches(),
        live_links: net.live_links(),
        live_servers: comps.live_servers,
        servers_lost: net.num_servers() as u64 - comps.live_servers,
        unreachable_pairs: comps.unreachable_pairs,
        workload: match &cfg.workload {
            None => None,
            Some(w) => {
                let wl = sim::workload::build_workload(w, comps.live_servers)?;
                Some(WorkloadFacts {
                    name: wl.name().to_string(),
                    tasks: wl.tasks(),
                    operations: wl.total_ops(),
                    messages: wl.messages(),
                    bytes: wl.bytes() + crate::network::task_state_bytes(wl.tasks() as u64, wl.total_ops()),
                })
            }
        },
        memory_bytes: cfg.memory_lower_bound(1, vcs).0,
        packet_bytes_max: cfg.packet_bytes_bound(vcs),
        distance_exceptions: net
            .sparse_distances()
            .map(|sd| sd.exceptions())
            .or_else(|| net.tree_exceptions().map(|ex| ex.exceptions()))
            .map(|x| x as u64),
        details: net.topology().details(),
    })
}

/// `hxsim analyze`.
pub fn run(cfg: &Config, json: bool) -> Result<u8> {
    // The routing gives the VC count of the memory figures, and table-based routings (Nue,
    // Up*/Down*, DFSSSP, LASH, SPDA) report what building their tables cost; a routing that cannot
    // be built here is left to `run` to report.
    let built = sim::build_network(cfg).map(|net| crate::routing::build(&cfg.routing_params(), net));
    // Why the routing could not be built (the memory figures then count the fewest VCs).
    let routing_error = match &built {
        Ok(Err(e)) => Some(e.to_string()),
        _ => None,
    };
    let routing = built.ok().and_then(Result::ok);
    let vcs = routing.as_ref().map(|r| r.vcs());
    let a = analysis(cfg, vcs)?;
    let tables = routing.and_then(|r| r.tables());
    if json {
        let mut v = serde_json::to_value(&a)?;
        if let (Some(t), Some(m)) = (&tables, v.as_object_mut()) {
            m.insert("routing_tables".into(), serde_json::to_value(t)?);
        }
        if let (Some(e), Some(m)) = (&routing_error, v.as_object_mut()) {
            m.insert("routing_error".into(), e.clone().into());
        }
        println!("{v}");
    } else {
        println!("{}", sim::build_topology(cfg)?.name());
        println!("  switches          {}", a.switches);
        println!("  servers           {}", a.servers);
        println!("  links             {} ({} failed)", a.links, a.failed_links);
        if a.failed_switches > 0 {
            println!(
                "  failed switches   {} ({} live; {} servers lost, {} live)",
                a.failed_switches, a.live_switches, a.servers_lost, a.live_servers
            );
        }
        if a.unreachable_pairs > 0 {
            println!("  unreachable pairs {} (ordered pairs of live servers)", a.unreachable_pairs);
        }
        println!("  radix             {}", a.radix);
        println!("  diameter          {} switch-to-switch hops ({} server to server)", a.diameter, a.server_diameter);
        println!("  average distance  {:.4}", a.average_distance);
        println!("  connected         {}", a.connected);
        println!(
            "  memory            {} up front ({}), plus up to {} of packets (every buffer and source queue full)",
            crate::memory::human_bytes(a.memory_bytes),
            cfg.memory_lower_bound(1, vcs).1,
            crate::memory::human_bytes(a.packet_bytes_max)
        );
        if let Some(x) = a.distance_exceptions {
            println!(
                "  faulty distances  closed form plus {x} exceptions ({}) instead of a {} x {} table",
                crate::memory::human_bytes(5 * x),
                a.switches,
                a.switches
            );
        }
        if let Some(w) = &a.workload {
            println!(
                "  workload          {}: {} tasks, {} operations, {} messages, {} (counted in the memory check)",
                w.name,
                w.tasks,
                w.operations,
                w.messages,
                crate::memory::human_bytes(w.bytes)
            );
        }
        if let Some(e) = &routing_error {
            println!("  routing           {} cannot be built: {e} (`hxsim run` exits 2)", cfg.routing.algorithm);
        }
        for (k, v) in &a.details {
            println!("  {:<17} {}", k.replace('_', " "), v);
        }
        if let Some(t) = &tables {
            println!("  {:<17} {}", cfg.routing.algorithm, table_line(t));
        }
    }
    Ok(0)
}

/// One line on a table-based routing's build: time, memory, layers and how it was built.
pub fn table_line(t: &crate::routing::TableReport) -> String {
    let mut line = format!(
        "routing tables built in {:.3} s, {} in {} layer(s)",
        t.build_seconds,
        crate::memory::human_bytes(t.bytes),
        t.layers
    );
    if !t.note.is_empty() {
        line += "; ";
        line += &t.note;
    }
    line
}

/// One point of `hxsim analyze --sequence`.
#[derive(Debug, Serialize)]
pub struct SequencePoint {
    /// Random links failed so far (on top of the config's other faults).
    pub random_links: usize,
    /// Links failed in all.
    pub failed_links: usize,
    /// Diameter, average distance, connectivity and unreachable pairs.
    #[serde(flatten)]
    pub reach: Reach,
}

/// Parse `START:STOP:STEP` (inclusive, `STEP > 0`), or a single number.
fn parse_range(key: &str, s: &str) -> Result<Vec<usize>, ConfigError> {
    let bad = || {
        ConfigError::value(
            key,
            format!("\"{s}\""),
            "START:STOP:STEP (non-negative integers, STEP > 0, START <= STOP) or N",
        )
    };
    let v: Vec<usize> = s.split(':').map(|x| x.trim().parse::<usize>()).collect::<Result<_, _>>().map_err(|_| bad())?;
    match v[..] {
        [n] => Ok(vec![n]),
        [a, b, st] if st > 0 && a <= b => Ok((a..=b).step_by(st).collect()),
        _ => Err(bad()),
    }
}

/// The points of `hxsim analyze --sequence`: the nested random link sequence of the fault seed
/// (`faults.seed`, else `seed`) applied link by link to one [`LiveGraph`] holding the config's other
/// faults (`faults.random_links` is replaced by the sequence), with a breadth-first search from every
/// live server-bearing switch at each point.
pub fn sequence_points(cfg: &Config, spec: &str) -> Result<Vec<SequencePoint>, ConfigError> {
    let points = parse_range("--sequence", spec)?;
    let topo = sim::build_topology(cfg)?;
    let base_cfg = crate::topology::faults::FaultConfig { random_links: 0, lifetime: None, ..cfg.faults.clone() };
    let base = base_cfg.base_set(&*topo, cfg.seed)?;
    let all = crate::topology::fabric::all_links(&*topo);
    let max = points.iter().copied().max().unwrap_or(0);
    if max > all.len() {
        return Err(ConfigError::value(
            "--sequence",
            format!("\"{spec}\""),
            format!("at most the number of links of the network ({}) failed", all.len()),
        ));
    }
    let seq = crate::topology::faults::link_sequence(&all, max, cfg.faults.seed_or(cfg.seed));
    let mut g = LiveGraph::new(&*topo, &base);
    let mut done = 0;
    let mut out = Vec::new();
    for k in points {
        if k < done {
            g = LiveGraph::new(&*topo, &base);
            done = 0;
        }
        for &(s, p) in &seq[done..k] {
            g.fail_link(s, p);
        }
        done = k;
        out.push(SequencePoint { random_links: k, failed_links: g.failed_links(), reach: g.reach() });
    }
    Ok(out)
}

/// `hxsim analyze --sequence`.
pub fn run_sequence(cfg: &Config, spec: &str, json: bool) -> Result<u8> {
    let pts = sequence_points(cfg, spec)?;
    if json {
        println!("{}", serde_json::to_string(&pts)?);
        return Ok(0);
    }
    println!(
        "{}: nested random link faults, fault seed {}",
        sim::build_topology(cfg)?.name(),
        cfg.faults.seed_or(cfg.seed)
    );
    println!(
        "  {:>12} {:>12} {:>9} {:>12} {:>10} {:>18}",
        "random links", "failed links", "diameter", "avg distance", "connected", "unreachable pairs"
    );
    for p in &pts {
        println!(
            "  {:>12} {:>12} {:>9} {:>12.4} {:>10} {:>18}",
            p.random_links,
            p.failed_links,
            p.reach.diameter,
            p.reach.average_distance,
            p.reach.connected,
            p.reach.unreachable_pairs
        );
    }
    Ok(0)
}
