//! Failures while the machine runs: `[[faults.events]]`, each failing links and switches at a
//! cycle of the run (the static `[faults]` keys fail them before cycle 0).
//!
//! An event may repair failed links and switches (`repair_links`, `repair_switches`), then names
//! what fails as `[faults]` does: explicit `links = [[switch, port], ...]` and
//! `switches = [...]`, structured `shapes = [{ kind = "row" }, ...]` (as `faults.shapes`: on a
//! HyperX a shape's links among its switches, on a HyperZ a Z-node or a plane), and
//! `random_links = N` / `random_switches = N`, drawn among what is still
//! alive at the event from a stream of its own (owner `8 + k` for event `k`, purpose
//! [`Purpose::Faults`], under `faults.seed` or the run's seed), so that adding an event never moves
//! the faults of another. What the model does at an event and after it is in
//! `crate::network::failures` (packets lost, routing rebuilt after `faults.reconfigure_cycles`).

use super::{check_link, check_switch, shuffled_prefix, FaultSet};
use crate::error::ConfigError;
use crate::rng::{self, Purpose};
use crate::topology::{SwitchId, Topology};
use serde::{Deserialize, Serialize};

fn is_zero(x: &usize) -> bool {
    *x == 0
}

/// One `[[faults.events]]` entry: what fails, and when.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultEvent {
    /// Cycle the failure happens at (before that cycle is simulated); at least 1, and events in
    /// increasing order.
    pub cycle: u64,
    /// Number of live switch-to-switch links that fail, drawn from the event's own stream.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(extend("default" = 0))]
    pub random_links: usize,
    /// Number of live switches that fail (with their links and servers), drawn likewise.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(extend("default" = 0))]
    pub random_switches: usize,
    /// Links that fail, as `[switch, port]` (either end).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("default" = []))]
    pub links: Vec<Vec<u64>>,
    /// Switches that fail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("default" = []))]
    pub switches: Vec<u64>,
    /// Structured shapes that fail, as `faults.shapes` places them (what of a shape has failed
    /// already is left as it is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("default" = []))]
    pub shapes: Vec<super::ShapeConfig>,
    /// Failed links that are repaired, as `[switch, port]` (repairs come before the event's
    /// failures).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("default" = []))]
    pub repair_links: Vec<Vec<u64>>,
    /// Failed switches that are repaired (with their links, unless these failed on their own, and
    /// their servers, which generate again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("default" = []))]
    pub repair_switches: Vec<u64>,
}

/// Stream owner of event `k`'s random draws (0-2 are the static faults' and the lifetime's).
fn stream_owner(k: usize) -> u64 {
    8 + k as u64
}

impl FaultEvent {
    /// Checks that need no network; `k` is the event's index.
    pub fn validate(&self, k: usize, previous: Option<u64>) -> Result<(), ConfigError> {
        let key = format!("faults.events[{k}].cycle");
        if self.cycle == 0 {
            return Err(ConfigError::value(&key, 0, "at least 1 (failures before the run are the [faults] keys)"));
        }
        if let Some(p) = previous {
            if self.cycle <= p {
                return Err(ConfigError::value(
                    &key,
                    self.cycle,
                    format!("after the previous event's cycle ({p}): events in increasing order of cycle"),
                ));
            }
        }
        if self.random_links == 0
            && self.random_switches == 0
            && self.links.is_empty()
            && self.switches.is_empty()
            && self.shapes.is_empty()
            && self.repair_links.is_empty()
            && self.repair_switches.is_empty()
        {
            return Err(ConfigError::value(
                &format!("faults.events[{k}]"),
                format!("{{ cycle = {} }}", self.cycle),
                "an event that fails or repairs something: links, switches, shapes, random_links, random_switches, \
                 repair_links or repair_switches",
            ));
        }
        for (i, shape) in self.shapes.iter().enumerate() {
            shape.validate_keys(&format!("faults.events[{k}].shapes[{i}]"))?;
        }
        Ok(())
    }

    /// What this event (index `k`) repairs of `before` (what has failed so far): links failed on
    /// their own (a link of a failed switch comes back with its switch) and failed switches.
    pub fn repairs(&self, k: usize, topo: &dyn Topology, before: &FaultSet) -> Result<FaultSet, ConfigError> {
        let dead = super::LiveGraph::new(topo, before);
        let mut rep = FaultSet::default();
        for (i, l) in self.repair_links.iter().enumerate() {
            let key = format!("faults.events[{k}].repair_links[{i}]");
            let bad = |why: String| ConfigError::value(&key, format!("{l:?}"), why);
            if l.len() != 2 {
                return Err(bad("a pair [switch, port]".into()));
            }
            let (s, p) = check_link(topo, l[0], l[1]).map_err(bad)?;
            let (o, _) = topo.neighbour(s, p).expect("a checked link is wired");
            if !dead.switch_alive(s) || !dead.switch_alive(o) {
                return Err(bad(format!(
                    "a link failed on its own: switch {} has failed; repair it with repair_switches",
                    if dead.switch_alive(s) { o } else { s }
                )));
            }
            if !before.links.contains(&(s, p)) {
                return Err(bad(format!("a failed link: it is alive at cycle {}", self.cycle)));
            }
            rep.links.push((s, p));
        }
        for (i, &s) in self.repair_switches.iter().enumerate() {
            let key = format!("faults.events[{k}].repair_switches[{i}]");
            let sw = check_switch(topo, s).map_err(|e| ConfigError::value(&key, s, e))?;
            if dead.switch_alive(sw) {
                return Err(ConfigError::value(
                    &key,
                    s,
                    format!("a failed switch: it is alive at cycle {}", self.cycle),
                ));
            }
            rep.switches.push(sw);
        }
        Ok(rep)
    }

    /// What this event (index `k`) fails on top of `before` (what has failed so far): the new
    /// links and switches, none of them already failed. Random draws take the live ones in the
    /// order of the event's stream under `seed`.
    pub fn failures(
        &self,
        k: usize,
        topo: &dyn Topology,
        before: &FaultSet,
        seed: u64,
    ) -> Result<FaultSet, ConfigError> {
        let mut dead = super::LiveGraph::new(topo, before);
        let mut new = FaultSet::default();
        for (i, l) in self.links.iter().enumerate() {
            let key = format!("faults.events[{k}].links[{i}]");
            if l.len() != 2 {
                return Err(ConfigError::value(&key, format!("{l:?}"), "a pair [switch, port]"));
            }
            let (s, p) = check_link(topo, l[0], l[1]).map_err(|e| ConfigError::value(&key, format!("{l:?}"), e))?;
            if dead.alive(s, p) {
                dead.fail_link(s, p);
                new.links.push((s, p));
            }
        }
        for (i, &s) in self.switches.iter().enumerate() {
            let key = format!("faults.events[{k}].switches[{i}]");
            let s = check_switch(topo, s).map_err(|e| ConfigError::value(&key, s, e))?;
            if dead.switch_alive(s) {
                dead.fail_switch(s);
                new.switches.push(s);
            }
        }
        for (i, shape) in self.shapes.iter().enumerate() {
            let placed = shape.place(topo, &format!("faults.events[{k}].shapes[{i}]"))?;
            for s in placed.switches {
                if dead.switch_alive(s) {
                    dead.fail_switch(s);
                    new.switches.push(s);
                }
            }
            for (s, p) in placed.links {
                if dead.alive(s, p) {
                    dead.fail_link(s, p);
                    new.links.push((s, p));
                }
            }
        }
        let mut rng = rng::stream(seed, stream_owner(k), Purpose::Faults);
        if self.random_links > 0 {
            let live: Vec<_> =
                crate::topology::fabric::all_links(topo).into_iter().filter(|&(s, p)| dead.alive(s, p)).collect();
            if self.random_links > live.len() {
                return Err(ConfigError::value(
                    &format!("faults.events[{k}].random_links"),
                    self.random_links,
                    format!("at most the {} links still alive at cycle {}", live.len(), self.cycle),
                ));
            }
            for i in shuffled_prefix(live.len(), self.random_links, &mut rng) {
                let (s, p) = live[i];
                dead.fail_link(s, p);
                new.links.push((s, p));
            }
        }
        if self.random_switches > 0 {
            let live: Vec<SwitchId> = (0..topo.num_switches() as SwitchId).filter(|&s| dead.switch_alive(s)).collect();
            if self.random_switches >= live.len() {
                return Err(ConfigError::value(
                    &format!("faults.events[{k}].random_switches"),
                    self.random_switches,
                    format!("fewer than the {} switches still alive at cycle {}", live.len(), self.cycle),
                ));
            }
            for i in shuffled_prefix(live.len(), self.random_switches, &mut rng) {
                new.switches.push(live[i]);
            }
        }
        Ok(new)
    }
}

/// The fault sets of a run with events: `sets[0]` is the static set, `sets[k + 1]` the set after
/// event `k` (the union of everything so far), with what event `k` added in `added[k]`.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// Cumulative fault sets, one more than the events.
    pub sets: Vec<FaultSet>,
    /// What each event failed.
    pub added: Vec<FaultSet>,
    /// What each event repaired.
    pub repaired: Vec<FaultSet>,
}

impl Timeline {
    /// The network after `k` events (`k = 0`: the static faults only) on `topo`, with distances
    /// towards `targets`.
    pub fn fabric(
        &self,
        k: usize,
        topo: std::sync::Arc<dyn Topology>,
        targets: crate::topology::Targets,
    ) -> std::sync::Arc<crate::topology::Fabric> {
        std::sync::Arc::new(crate::topology::Fabric::with_targets(topo, &self.sets[k], targets))
    }

    /// The timeline of `events` from the static set `base`.
    pub fn build(events: &[FaultEvent], topo: &dyn Topology, base: FaultSet, seed: u64) -> Result<Self, ConfigError> {
        let mut sets = vec![base];
        let mut added = Vec::new();
        let mut repaired = Vec::new();
        for (k, e) in events.iter().enumerate() {
            let before = sets.last().expect("the static set");
            let rep = e.repairs(k, topo, before)?;
            let mut all = before.clone();
            all.links.retain(|l| !rep.links.contains(l));
            all.switches.retain(|s| !rep.switches.contains(s));
            let new = e.failures(k, topo, &all, seed)?;
            all.links.extend(&new.links);
            all.switches.extend(&new.switches);
            all.normalize(topo);
            sets.push(all);
            added.push(new);
            repaired.push(rep);
        }
        Ok(Timeline { sets, added, repaired })
    }
}
