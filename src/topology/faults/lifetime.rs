//! Failures over a machine's lifetime (Domke, Hoefler, Matsuoka, "Routing on the Dependency Graph:
//! A New Approach to Deadlock-Free High-Performance Routing" (Nue), section 2, "Fail-in-Place
//! High-Performance Networks").
//!
//! The paper takes TSUBAME2's failure data: an annual failure rate of about 1% for links and 1% for
//! switches, constant over a maximum lifetime of eight years; failures accumulate, and a *critical*
//! failure (one that "disconnects all paths between two hosts") is repaired while non-critical ones
//! stay in place. Here the lifetime `years` is cut into `steps` equal steps; in each step every live
//! switch, then every live link, fails independently with probability `1 - (1 - rate)^(years /
//! steps)` (draws from stream owner 2 of the fault seed, in switch then link id order, one per live
//! component, so step `k`'s failures are the same whatever the number of later steps). The failures
//! of a step are applied in that order; one that disconnects two servers that were connected before
//! it and stay live after it is critical and is repaired at once. A failed switch's own servers are
//! lost with it (fail-in-place of hosts), which alone does not make it critical.
//!
//! Step 0 is the configured base fault set ([`super::FaultConfig::base_set`]); a run uses step
//! `faults.lifetime.step` (default the last), so `hxsim sweep --set faults.lifetime.step=0:8:1`
//! simulates the machine year by year, and `hxsim faults` prints the steps.

use super::{Components, FaultSet, LiveGraph};
use crate::error::ConfigError;
use crate::rng::{self, Purpose};
use crate::topology::{fabric::all_links, SwitchId, Topology};
use serde::{Deserialize, Serialize};

/// `[faults.lifetime]` (defaults from Nue section 2: 1% a year for links and switches, 8 years).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LifetimeConfig {
    /// Annual failure rate of a link, in [0, 1).
    pub link_rate: f64,
    /// Annual failure rate of a switch, in [0, 1).
    pub switch_rate: f64,
    /// Machine lifetime, years.
    pub years: f64,
    /// Time steps over the lifetime.
    pub steps: usize,
    /// The step whose fault set a run uses, `0..=steps`; default `steps` (the end of life).
    /// With `every_cycles`, the last step the run reaches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// Cycles between steps *during* the run (0: off, the run starts at `step`): the run starts
    /// with the base fault set, and step `k`'s new failures happen at cycle `k * every_cycles`, as
    /// `[[faults.events]]` (`crate::sim::events`).
    #[serde(skip_serializing_if = "is_zero")]
    #[schemars(extend("default" = 0))]
    pub every_cycles: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl Default for LifetimeConfig {
    fn default() -> Self {
        LifetimeConfig { link_rate: 0.01, switch_rate: 0.01, years: 8.0, steps: 8, step: None, every_cycles: 0 }
    }
}

impl LifetimeConfig {
    /// The step a run uses.
    pub fn step(&self) -> usize {
        self.step.unwrap_or(self.steps)
    }

    /// Every value in range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (k, v) in [("faults.lifetime.link_rate", self.link_rate), ("faults.lifetime.switch_rate", self.switch_rate)]
        {
            if !(0.0..1.0).contains(&v) {
                return Err(ConfigError::value(k, v, "an annual failure rate in [0, 1) (Nue section 2: 0.01)"));
            }
        }
        if !(self.years > 0.0 && self.years <= 1000.0) {
            return Err(ConfigError::value("faults.lifetime.years", self.years, "in (0, 1000] (Nue section 2: 8)"));
        }
        if !(1..=100_000).contains(&self.steps) {
            return Err(ConfigError::value("faults.lifetime.steps", self.steps, "between 1 and 100000"));
        }
        if self.every_cycles.checked_mul(self.steps as u64).is_none() {
            return Err(ConfigError::value(
                "faults.lifetime.every_cycles",
                self.every_cycles,
                format!("cycles between steps such that all {} steps fit in a run (at most 2^64 cycles)", self.steps),
            ));
        }
        if self.step() > self.steps {
            return Err(ConfigError::value(
                "faults.lifetime.step",
                self.step(),
                format!("a step in 0..={} (faults.lifetime.steps)", self.steps),
            ));
        }
        Ok(())
    }

    fn step_probability(rate: f64, years: f64, steps: usize) -> f64 {
        1.0 - (1.0 - rate).powf(years / steps as f64)
    }
}

/// The state after one step of the lifetime.
#[derive(Debug, Clone, Serialize)]
pub struct StepReport {
    /// Step number (0 = the base fault set).
    pub step: usize,
    /// Years elapsed.
    pub years: f64,
    /// Failed links in all (including those of failed switches).
    pub failed_links: usize,
    /// Failed switches in all.
    pub failed_switches: usize,
    /// Links that failed in this step and stayed failed.
    pub new_links: usize,
    /// Switches that failed in this step and stayed failed.
    pub new_switches: usize,
    /// Critical link failures repaired in this step.
    pub repaired_links: usize,
    /// Critical switch failures repaired in this step.
    pub repaired_switches: usize,
    /// Servers lost with failed switches, in all.
    pub servers_lost: u64,
    /// The fault set at this step.
    #[serde(skip)]
    pub faults: FaultSet,
}

/// Whether going from `before` to `after` disconnected two servers that were connected before and
/// are live after.
fn splits(topo: &dyn Topology, before: &Components, after: &Components) -> bool {
    let mut image = vec![u32::MAX; before.servers.len()];
    for s in 0..topo.num_switches() {
        let (b, a) = (before.of[s], after.of[s]);
        if a == u32::MAX || b == u32::MAX || topo.servers_at(s as SwitchId) == 0 {
            continue;
        }
        match image[b as usize] {
            u32::MAX => image[b as usize] = a,
            x if x != a => return true,
            _ => {}
        }
    }
    false
}

/// The lifetime from `base` under `seed`, steps `0..=upto` (default all): one report per step.
pub fn simulate(
    topo: &dyn Topology,
    base: &FaultSet,
    cfg: &LifetimeConfig,
    seed: u64,
    upto: Option<usize>,
) -> Vec<StepReport> {
    let mut g = LiveGraph::new(topo, base);
    let links = all_links(topo);
    let mut rng = rng::stream(seed, 2, Purpose::Faults);
    let p_link = LifetimeConfig::step_probability(cfg.link_rate, cfg.years, cfg.steps);
    let p_switch = LifetimeConfig::step_probability(cfg.switch_rate, cfg.years, cfg.steps);
    let lost = |g: &LiveGraph| -> u64 {
        (0..topo.num_switches() as SwitchId).filter(|&s| !g.switch_alive(s)).map(|s| topo.servers_at(s) as u64).sum()
    };
    let report = |g: &LiveGraph, step: usize, counts: [usize; 4]| StepReport {
        step,
        years: cfg.years * step as f64 / cfg.steps as f64,
        failed_links: g.failed_links(),
        failed_switches: g.failed_switches(),
        new_links: counts[0],
        new_switches: counts[1],
        repaired_links: counts[2],
        repaired_switches: counts[3],
        servers_lost: lost(g),
        faults: g.fault_set(),
    };
    let mut out = vec![report(&g, 0, [0; 4])];
    for step in 1..=upto.unwrap_or(cfg.steps).min(cfg.steps) {
        let mut counts = [0usize; 4];
        // Draw first (one draw per live component, in id order), then apply.
        let sw: Vec<SwitchId> = (0..topo.num_switches() as SwitchId)
            .filter(|&s| g.switch_alive(s))
            .filter(|_| rng::unit(&mut rng) < p_switch)
            .collect();
        let ln: Vec<_> =
            links.iter().copied().filter(|&(s, p)| g.alive(s, p)).filter(|_| rng::unit(&mut rng) < p_link).collect();
        let mut before = g.components();
        for s in sw {
            let taken = g.fail_switch(s);
            let after = g.components();
            if splits(topo, &before, &after) {
                g.repair_switch(s, &taken);
                counts[3] += 1;
            } else {
                counts[1] += 1;
                before = after;
            }
        }
        // Links: if all of them together split nothing, no prefix does (same live servers, more links).
        let live: Vec<_> = ln.into_iter().filter(|&(s, p)| g.fail_link(s, p)).collect();
        let after = g.components();
        if splits(topo, &before, &after) {
            for &(s, p) in &live {
                g.repair_link(s, p);
            }
            for &(s, p) in &live {
                g.fail_link(s, p);
                let after = g.components();
                if splits(topo, &before, &after) {
                    g.repair_link(s, p);
                    counts[2] += 1;
                } else {
                    counts[0] += 1;
                    before = after;
                }
            }
        } else {
            counts[0] += live.len();
        }
        out.push(report(&g, step, counts));
    }
    out
}
