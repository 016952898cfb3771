//! `hxsim partition`: how well the switches split into parts (cut links, balance, lookahead),
//! without running.

use crate::config::{Config, ConfigError};
use crate::sim;
use anyhow::Result;
use serde::Serialize;
use std::time::Instant;

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
pub fn run(cfg: &Config, parts: usize, method: Option<&str>, json: bool) -> Result<u8> {
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
