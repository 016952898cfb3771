//! What the `hxsim` subcommands do, kept out of `main.rs` so tests and other front ends can call it.

use crate::config::{self, Config, ConfigError};
use crate::engine::{LaunchError, Progress, World};
use crate::metrics::Summary;
use crate::sim::{self, Layout, RunOptions, RunResult, SimError};
use crate::topology::faults::{lifetime::StepReport, LiveGraph, Reach};
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Exit code for an error: 2 for bad input, 3 for a failed simulation (or, for `merge`, points that
/// did not complete), 1 otherwise (I/O failures).
pub fn exit_code(e: &anyhow::Error) -> u8 {
    if e.downcast_ref::<ConfigError>().is_some() {
        return 2;
    }
    if let Some(s) = e.downcast_ref::<SimError>() {
        return s.exit_code() as u8;
    }
    if e.downcast_ref::<LaunchError>().is_some() {
        return 2;
    }
    if let Some(m) = e.downcast_ref::<crate::merge::MergeError>() {
        return m.exit_code();
    }
    1
}

/// Load and validate a config with `--set` overrides.
pub fn load_config(path: &Path, set: &[String]) -> Result<Config> {
    Ok(config::load(path, set)?)
}

/// Run with a progress bar on stderr (unless `quiet`), shown once the run has lasted a second.
pub fn run_with_progress(cfg: &Config, opts: &RunOptions, quiet: bool) -> Result<RunResult, SimError> {
    run_with_progress_observed(cfg, opts, quiet, Arc::new(Progress::default()), None)
}

/// [`run_with_progress`] with a caller's `progress` (so that a signal handler can stop the run) and
/// an optional receiver of the time series during the run (see [`sim::run_observed`]).
pub fn run_with_progress_observed(
    cfg: &Config,
    opts: &RunOptions,
    quiet: bool,
    progress: Arc<Progress>,
    samples: Option<crate::metrics::SampleSender>,
) -> Result<RunResult, SimError> {
    run_with_progress_on(&World::single(), cfg, opts, quiet, progress, samples)
        .map(|r| r.expect("a single process is rank 0"))
}

/// [`run_with_progress_observed`] on every rank of `world` (collective); only rank 0 shows progress
/// and gets the result (see [`sim::run_on`], also for `samples`).
pub fn run_with_progress_on(
    world: &World,
    cfg: &Config,
    opts: &RunOptions,
    quiet: bool,
    progress: Arc<Progress>,
    samples: Option<crate::metrics::SampleSender>,
) -> Result<Option<RunResult>, SimError> {
    let end =
        if cfg.traffic.mode == "fixed" { 0 } else { cfg.simulation.warmup_cycles + cfg.simulation.measure_cycles };
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = (!quiet && world.is_root()).then(|| {
        let (progress, done) = (progress.clone(), done.clone());
        std::thread::spawn(move || watch(&progress, &done, end))
    });
    let result = sim::run_on(world, cfg, opts, &progress, samples);
    done.store(true, Ordering::Relaxed);
    if let Some(w) = watcher {
        let _ = w.join();
    }
    if let Ok(Some(r)) = &result {
        if let Some(note) = steady_note(cfg, &r.summary) {
            eprintln!("{note}");
        }
    }
    result
}

/// Seconds between heartbeat lines (`HXSIM_HEARTBEAT_SECS`, default 60; 0: none).
pub const HEARTBEAT_ENV: &str = "HXSIM_HEARTBEAT_SECS";

/// How often to print a heartbeat line on stderr: only when stderr is not a terminal (a batch
/// job's log, where the progress bar does not draw), every `HXSIM_HEARTBEAT_SECS` (default 60).
pub fn heartbeat_every() -> Option<Duration> {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        return None;
    }
    let secs = std::env::var(HEARTBEAT_ENV).ok().and_then(|v| v.trim().parse::<f64>().ok()).unwrap_or(60.0);
    (secs > 0.0).then(|| Duration::from_secs_f64(secs))
}

/// `hxsim: 2026-11-22T09:59:00Z, 1m 30s: WHAT`.
pub fn heartbeat(start: Instant, what: &str) {
    let elapsed = humantime::format_duration(Duration::from_secs(start.elapsed().as_secs()));
    eprintln!("hxsim: {}, {elapsed}: {what}", crate::output::iso8601_utc(std::time::SystemTime::now()));
}

/// What stderr says about the measured window's steady state: a warning when it did not reach one,
/// and with `simulation.measure_until_steady` where the extension ended. `None` when there is
/// nothing to say.
pub fn steady_note(cfg: &Config, s: &Summary) -> Option<String> {
    let what = format!(
        "{} (routing {}, {} traffic, offered {})",
        cfg.name, cfg.routing.algorithm, cfg.traffic.pattern, cfg.traffic.load
    );
    let pct = |x: f64| if x.is_nan() { "-".to_string() } else { format!("{:+.0}%", 100.0 * x) };
    let window = cfg.simulation.measure_cycles.min(s.cycles);
    let until = cfg.simulation.measure_until_steady && cfg.traffic.mode == "bernoulli";
    match (s.steady_state, until) {
        (true, true) => Some(format!("{what}: steady after {} cycles (measured the last {window})", s.cycles)),
        (true, false) => None,
        (false, until) => Some(format!(
            "warning: {what}: the measured window did not reach a steady state (accepted load {} and packets in \
             flight {} across it); {}",
            pct(s.accepted_trend),
            pct(s.in_flight_trend),
            if until {
                format!("not steady by simulation.max_cycles ({} cycles simulated)", s.cycles)
            } else {
                "run longer, or set simulation.measure_until_steady = true".to_string()
            }
        )),
    }
}

fn watch(progress: &Progress, done: &std::sync::atomic::AtomicBool, end: u64) {
    let start = Instant::now();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let mut last = (Instant::now(), 0u64);
    let (beat, mut beat_last) = (heartbeat_every(), (Instant::now(), 0u64));
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        if beat.is_some_and(|e| beat_last.0.elapsed() >= e) {
            let c = progress.cycle.load(Ordering::Relaxed);
            let rate = (c - beat_last.1.min(c)) as f64 / beat_last.0.elapsed().as_secs_f64();
            let of = if end > 0 { format!("/{end} ({:.0}%)", 100.0 * c as f64 / end as f64) } else { String::new() };
            heartbeat(start, &format!("cycle {c}{of}, {rate:.0} cycles/s"));
            beat_last = (Instant::now(), c);
        }
        if start.elapsed() < Duration::from_secs(1) {
            continue;
        }
        let b = bar.get_or_insert_with(|| {
            let b = if end > 0 { indicatif::ProgressBar::new(end) } else { indicatif::ProgressBar::new_spinner() };
            b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:40}] {pos}/{len} cycles, {msg} (eta {eta})",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            b
        });
        let c = progress.cycle.load(Ordering::Relaxed);
        let dt = last.0.elapsed().as_secs_f64();
        if dt >= 0.5 {
            b.set_message(format!("{:.0} cycles/s", (c - last.1.min(c)) as f64 / dt));
            last = (Instant::now(), c);
        }
        b.set_position(c);
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

/// Print a summary as JSON or as a table (one process).
pub fn print_summary(cfg: &Config, s: &Summary, threads: usize, json: bool) -> Result<()> {
    print_summary_with(cfg, s, Layout { ranks: 1, threads }, json)
}

/// Write `text` to standard output. A closed or failing stdout (`hxsim run | true`, a shell capture
/// whose shell was killed) is an I/O error, exit code 1, not a panic.
pub fn out(text: &str) -> Result<()> {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes()).and_then(|()| o.flush()).context("writing to standard output")
}

/// Print a summary as JSON or as a table. The JSON object holds only [`Summary`], identical for any
/// `layout` apart from the timing keys (`wall_seconds`, `hops_per_second`, `peak_memory_bytes`);
/// the table also shows the layout and the memory per endpoint.
pub fn print_summary_with(cfg: &Config, s: &Summary, layout: Layout, json: bool) -> Result<()> {
    out(&summary_text(cfg, s, layout, json)?)
}

/// What [`print_summary_with`] prints.
pub fn summary_text(cfg: &Config, s: &Summary, layout: Layout, json: bool) -> Result<String> {
    use std::fmt::Write;
    if json {
        return Ok(serde_json::to_string(s).context("serialising the summary")? + "\n");
    }
    let mut t = String::new();
    let endpoints = cfg.topology.size().1 as u64;
    writeln!(
        t,
        "{} ({}; routing {}; {} traffic; {} ranks x {} threads)",
        cfg.name,
        sim::build_topology(cfg)?.name(),
        cfg.routing.algorithm,
        cfg.traffic.pattern,
        layout.ranks,
        layout.threads
    )?;
    let rows: Vec<(&str, String, &str)> = vec![
        ("offered load", format!("{:.4}", s.offered_load), "phits/cycle/server"),
        ("accepted load", format!("{:.4}", s.accepted_load), "phits/cycle/server"),
        ("average latency", format!("{:.2}", s.average_latency), "cycles"),
        ("latency p99", format!("{}", s.latency_p99), "cycles"),
        ("average hops", format!("{:.3}", s.average_hops), "switch traversals/packet"),
        ("Jain index", format!("{:.4}", s.jain_index), "(injected load)"),
        ("packets delivered", format!("{}", s.packets_delivered), "in the measured window"),
        ("cycles", format!("{}", s.cycles), "simulated"),
        ("ranks", format!("{}", layout.ranks), "MPI processes"),
        ("threads", format!("{}", layout.threads), "partitions per rank"),
        ("wall time", format!("{:.3}", s.wall_seconds), "s"),
        ("speed", format!("{:.0}", s.hops_per_second), "switch traversals/s"),
        ("peak memory", format!("{:.1}", s.peak_memory_bytes as f64 / 1048576.0), "MiB (sum over ranks)"),
        ("memory/endpoint", format!("{:.0}", s.peak_memory_bytes as f64 / endpoints as f64), "bytes per server"),
    ];
    for (k, v, u) in rows {
        writeln!(t, "  {k:<18} {v:>14}  {u}")?;
    }
    if let Some(c) = s.completion_cycles {
        writeln!(t, "  {:<18} {:>14}  cycles", "completion time", c)?;
    }
    if s.servers_lost > 0 {
        writeln!(
            t,
            "  note: {} servers were lost with failed switches; accepted load and Jain's index are over the live servers",
            s.servers_lost
        )?;
    }
    if s.unreachable_pairs > 0 {
        writeln!(
            t,
            "  note: faults split the network: {} ordered pairs of live servers cannot communicate, and {} packets to them were not generated (faults.unreachable = \"drop\")",
            s.unreachable_pairs, s.packets_dropped
        )?;
    }
    if s.packets_delivered == 0 {
        writeln!(
            t,
            "  note: no packet was delivered in the measured window: latency, hops and Jain's index have no data (NaN)"
        )?;
    }
    if s.packets_suppressed > 0 {
        writeln!(
            t,
            "  note: {} packet generations were skipped because source queues were full (offered load above what the network accepts)",
            s.packets_suppressed
        )?;
    }
    Ok(t)
}

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
    /// Family-specific facts (e.g. switches, radix and links per level of a HyperZ).
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// Compute the analysis of a config's network.
pub fn analysis(cfg: &Config) -> Result<Analysis, ConfigError> {
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
    let net = crate::topology::Fabric::new(topo, &faults);
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
        details: net.topology().details(),
    })
}

/// `hxsim analyze`.
pub fn analyze(cfg: &Config, json: bool) -> Result<u8> {
    let a = analysis(cfg)?;
    // Table-based routings (Nue, Up*/Down*) report what building their tables cost.
    let tables = sim::build_network(cfg)
        .ok()
        .and_then(|net| crate::routing::build(cfg, net).ok())
        .and_then(|r| r.tables().cloned());
    if json {
        let mut v = serde_json::to_value(&a)?;
        if let (Some(t), Some(m)) = (&tables, v.as_object_mut()) {
            m.insert("routing_tables".into(), serde_json::to_value(t)?);
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
        for (k, v) in &a.details {
            println!("  {:<17} {}", k.replace('_', " "), v);
        }
        if let Some(t) = &tables {
            println!("  {:<17} {}", cfg.routing.algorithm, table_line(t));
        }
    }
    Ok(0)
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
pub fn analyze_sequence(cfg: &Config, spec: &str, json: bool) -> Result<u8> {
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

/// One row of `hxsim faults`.
#[derive(Debug, Serialize)]
pub struct FaultStep {
    /// The lifetime state.
    #[serde(flatten)]
    pub step: StepReport,
    /// Diameter, average distance, connectivity and unreachable pairs at this step.
    #[serde(flatten)]
    pub reach: Reach,
}

/// The config's fault set at every lifetime step (one step without `[faults.lifetime]`).
pub fn fault_steps(cfg: &Config) -> Result<Vec<FaultStep>, ConfigError> {
    use crate::topology::faults::lifetime;
    let topo = sim::build_topology(cfg)?;
    let base = cfg.faults.base_set(&*topo, cfg.seed)?;
    let steps = match &cfg.faults.lifetime {
        Some(l) => lifetime::simulate(&*topo, &base, l, cfg.faults.seed_or(cfg.seed), None),
        None => lifetime::simulate(&*topo, &base, &Default::default(), cfg.faults.seed_or(cfg.seed), Some(0)),
    };
    Ok(steps
        .into_iter()
        .map(|s| {
            let reach = LiveGraph::new(&*topo, &s.faults).reach();
            FaultStep { step: s, reach }
        })
        .collect())
}

/// `hxsim faults`.
pub fn faults(cfg: &Config, json: bool) -> Result<u8> {
    let steps = fault_steps(cfg)?;
    if json {
        for s in &steps {
            println!("{}", serde_json::to_string(s)?);
        }
        return Ok(0);
    }
    println!("{} ({}): {}", cfg.name, sim::build_topology(cfg)?.name(), match &cfg.faults.lifetime {
        Some(l) => format!(
            "lifetime of {} years in {} steps, annual failure rates {} (links) and {} (switches), fault seed {}; critical failures repaired",
            l.years, l.steps, l.link_rate, l.switch_rate, cfg.faults.seed_or(cfg.seed)
        ),
        None => "the configured fault set (no [faults.lifetime])".into(),
    });
    let head = [
        "step",
        "years",
        "failed links",
        "failed switches",
        "new links",
        "new switches",
        "repaired links",
        "repaired switches",
        "servers lost",
        "diameter",
        "unreachable pairs",
    ];
    println!("  {}", head.join("  "));
    for s in &steps {
        let st = &s.step;
        let cells = [
            st.step.to_string(),
            format!("{:.2}", st.years),
            st.failed_links.to_string(),
            st.failed_switches.to_string(),
            st.new_links.to_string(),
            st.new_switches.to_string(),
            st.repaired_links.to_string(),
            st.repaired_switches.to_string(),
            st.servers_lost.to_string(),
            s.reach.diameter.to_string(),
            s.reach.unreachable_pairs.to_string(),
        ];
        let row: Vec<String> = cells.iter().zip(head.iter()).map(|(c, h)| format!("{c:>w$}", w = h.len())).collect();
        println!("  {}", row.join("  "));
    }
    Ok(0)
}

/// One method's row of `hxsim partition`.
#[derive(Debug, Serialize)]
pub struct PartitionReport {
    /// `block`, `round-robin` or `multilevel`.
    pub method: String,
    /// Pairs of adjacent switches in different parts.
    pub cut_edges: u64,
    /// Links between switches in different parts (trunked links counted one by one).
    pub cut_links: u64,
    /// `cut_links` over all live switch-to-switch links.
    pub cut_fraction: f64,
    /// Switches in the largest part.
    pub part_switches_max: u64,
    /// Switches in the smallest part.
    pub part_switches_min: u64,
    /// Servers in the largest part (servers live with their switch).
    pub part_servers_max: u64,
    /// Largest part over the average part (1.0: perfect balance).
    pub imbalance: f64,
    /// Cycles a part can simulate without hearing from the others (smallest latency of a cut link);
    /// `None` when nothing is cut.
    pub lookahead: Option<u32>,
    /// Most other parts one part shares links with (messages per window a part exchanges).
    pub neighbours_max: usize,
    /// Time the partitioner took, seconds.
    pub seconds: f64,
}

/// What `hxsim partition` reports.
#[derive(Debug, Serialize)]
pub struct PartitionSummary {
    /// Experiment name.
    pub name: String,
    /// Switches.
    pub switches: usize,
    /// Servers.
    pub servers: usize,
    /// Live switch-to-switch links.
    pub links: u64,
    /// Parts asked for.
    pub parts: usize,
    /// One entry per method.
    pub methods: Vec<PartitionReport>,
}

/// Partition the config's switch graph into `parts` with `method` (all methods when `None`) and
/// measure the quality of each assignment.
pub fn partition_summary(cfg: &Config, parts: usize, method: Option<&str>) -> Result<PartitionSummary, ConfigError> {
    let net = sim::build_network(cfg)?;
    let n = net.num_switches();
    if parts == 0 || parts > n {
        return Err(ConfigError::value("--parts", parts, format!("between 1 and the number of switches ({n})")));
    }
    let methods: Vec<partitioning::Method> = match method {
        None => partitioning::Method::ALL.to_vec(),
        Some(m) => vec![m.parse().map_err(|_| {
            ConfigError::value("--method", format!("\"{m}\""), "allowed: block, round-robin, multilevel")
        })?],
    };
    let g = sim::partition_graph(cfg, &net)?;
    let links: u64 = g.ewgt.iter().map(|&w| w as u64).sum::<u64>() / 2;
    let t = net.topology().max_servers_at() as u64;
    let mut out = Vec::new();
    for m in methods {
        let start = Instant::now();
        let assign = partitioning::partition(&g, parts, m, cfg.seed)
            .map_err(|e| ConfigError::value("--parts", parts, e.to_string()))?;
        let seconds = start.elapsed().as_secs_f64();
        let q = partitioning::quality(&g, &assign, parts);
        let (max, min) =
            (q.part_weights.iter().copied().max().unwrap_or(0), q.part_weights.iter().copied().min().unwrap_or(0));
        out.push(PartitionReport {
            method: m.name().to_string(),
            cut_edges: q.cut_edges,
            cut_links: q.cut_weight,
            cut_fraction: if links == 0 { 0.0 } else { q.cut_weight as f64 / links as f64 },
            part_switches_max: max,
            part_switches_min: min,
            part_servers_max: max * t,
            imbalance: q.imbalance,
            lookahead: q.lookahead,
            neighbours_max: q.neighbours_max,
            seconds,
        });
    }
    Ok(PartitionSummary { name: cfg.name.clone(), switches: n, servers: net.num_servers(), links, parts, methods: out })
}

/// `hxsim partition`.
pub fn partition(cfg: &Config, parts: usize, method: Option<&str>, json: bool) -> Result<u8> {
    let s = partition_summary(cfg, parts, method)?;
    if json {
        println!("{}", serde_json::to_string(&s)?);
        return Ok(0);
    }
    println!(
        "{} ({}): {} switches, {} servers, {} links; {} parts",
        s.name,
        sim::build_topology(cfg)?.name(),
        s.switches,
        s.servers,
        s.links,
        s.parts
    );
    let header =
        ["method", "cut links", "cut %", "cut pairs", "switches/part", "imbalance", "lookahead", "neighbours", "time"];
    let units = ["", "", "of links", "of switches", "max / min", "max / avg", "cycles", "max", "s"];
    let cells: Vec<[String; 9]> = s
        .methods
        .iter()
        .map(|r| {
            [
                r.method.clone(),
                r.cut_links.to_string(),
                format!("{:.2}", 100.0 * r.cut_fraction),
                r.cut_edges.to_string(),
                format!("{} / {}", r.part_switches_max, r.part_switches_min),
                format!("{:.4}", r.imbalance),
                r.lookahead.map_or("-".to_string(), |l| l.to_string()),
                r.neighbours_max.to_string(),
                format!("{:.3}", r.seconds),
            ]
        })
        .collect();
    let mut width = [0usize; 9];
    for row in std::iter::once(header.map(String::from))
        .chain(std::iter::once(units.map(String::from)))
        .chain(cells.iter().cloned())
    {
        for (w, c) in width.iter_mut().zip(row.iter()) {
            *w = (*w).max(c.len());
        }
    }
    let line = |row: &[String; 9]| {
        let mut l = format!("  {:<w$}", row[0], w = width[0]);
        for (c, w) in row.iter().zip(width.iter()).skip(1) {
            l.push_str(&format!("  {c:>w$}"));
        }
        println!("{}", l.trim_end());
    };
    line(&header.map(String::from));
    line(&units.map(String::from));
    for row in &cells {
        line(row);
    }
    Ok(0)
}

/// One line on a table-based routing's build: time, memory, layers and how it was built.
fn table_line(t: &crate::routing::TableReport) -> String {
    format!(
        "routing tables built in {:.3} s, {} in {} layer(s); {}",
        t.build_seconds,
        crate::config::human_bytes(t.table_bytes),
        t.layers,
        t.note
    )
}

/// `hxsim check-deadlock`: 0 when the routing is shown deadlock free on the config's network, 1
/// when a cycle (or a packet that cannot move) is found; config errors are exit code 2.
pub fn check_deadlock(cfg: &Config, json: bool) -> Result<u8> {
    use crate::routing::deadlock::{self, Verdict};
    let net = sim::build_network(cfg)?;
    let routing = crate::routing::build(cfg, net.clone())?;
    let r = deadlock::check(&net, &*routing);
    if json {
        println!("{}", serde_json::to_string(&r)?);
        return Ok(if r.deadlock_free() { 0 } else { 1 });
    }
    let policy = if routing.escape_based() { "own VC management" } else { cfg.routing.vc_policy.as_str() };
    println!(
        "{} on {} ({} failed links), routing {} ({policy}), {} VCs",
        cfg.name,
        sim::build_topology(cfg)?.name(),
        net.failed_links(),
        r.routing,
        r.vcs
    );
    println!(
        "  explored {} switch pairs, {} routing states; longest route {} hops; {} channels used, {} dependencies",
        r.pairs, r.states, r.longest_route, r.channels_used, r.dependencies
    );
    if let Some(t) = routing.tables() {
        println!("  {}", table_line(t));
    }
    let chain = |c: &[deadlock::Channel]| {
        let mut s: Vec<String> = c.iter().map(|x| x.to_string()).collect();
        if let Some(first) = c.first() {
            s.push(first.to_string());
        }
        s.join(" -> ")
    };
    match &r.verdict {
        Verdict::Acyclic => println!("acyclic: the channel dependency graph has no cycle (deadlock free)"),
        Verdict::Duato { escape_channels, extended_dependencies, full_cdg_acyclic } => println!(
            "deadlock free by Duato's condition: the escape subfunction is offered in every state, connected, and \
             its extended dependency graph ({escape_channels} channels, {extended_dependencies} dependencies) is \
             acyclic; the graph of all channels is {}",
            if *full_cdg_acyclic { "acyclic too" } else { "cyclic (allowed: the escape breaks those cycles)" }
        ),
        Verdict::Cycle { channels } => {
            println!("cycle of {} channels (switch, port, vc):", channels.len());
            println!("  {}", chain(channels));
        }
        Verdict::EscapeCycle { channels } => {
            println!("cycle in the extended dependency graph of the escape subnetwork, {} channels (switch, port, vc):", channels.len());
            println!("  {}", chain(channels));
        }
        Verdict::EscapeDisconnected { from, to } => {
            println!("escape subnetwork not connected: it cannot bring a packet from switch {from} to switch {to}")
        }
        Verdict::EscapeNotOffered { place, missing } => println!(
            "the escape channel {missing} is not offered to a packet from switch {} to switch {} at switch {} after {} hops",
            place.src, place.dst, place.at, place.hops
        ),
        Verdict::Unroutable { place } => println!(
            "unroutable: a packet from switch {} to switch {} has no candidate at switch {} after {} hops",
            place.src, place.dst, place.at, place.hops
        ),
        Verdict::InvalidCandidate { place, channel } => println!(
            "invalid candidate {channel} (dead port or VC beyond {}) for a packet from switch {} to switch {} at switch {}",
            r.vcs, place.src, place.dst, place.at
        ),
        Verdict::RouteTooLong { place } => println!(
            "a route from switch {} to switch {} exceeds {} hops at switch {}",
            place.src, place.dst, place.hops, place.at
        ),
    }
    Ok(if r.deadlock_free() { 0 } else { 1 })
}
