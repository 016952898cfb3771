//! `hxsim faults`: the config's fault set, and with `[faults.lifetime]` its state at every step.

use crate::config::{Config, ConfigError};
use crate::sim;
use crate::topology::faults::{lifetime::StepReport, LiveGraph, Reach};
use anyhow::Result;
use serde::Serialize;

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
pub fn run(cfg: &Config, json: bool) -> Result<u8> {
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
