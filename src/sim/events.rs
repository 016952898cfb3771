//! Failure events during a run (`[[faults.events]]`): the driver's side. It plans the breaks the
//! engine stops at (each event's cycle, and `faults.reconfigure_cycles` later the routing's
//! rebuild), builds the model after each change, and hands it to every partition of the rank
//! (`crate::network::failures` does the rest). Every rank builds the same networks and routings
//! from the config, so ranks need not exchange anything to agree.
//!
//! The routing in force is always the config's routing built on some network of the run's
//! timeline, seen through [`Degraded`]: after event `k`, the previous routing with the failed ports
//! withdrawn; once rebuilt (at `E_k + reconfigure_cycles`), the routing built on the network after
//! event `k`, with the ports of any later event withdrawn until its own rebuild. Routings the
//! registry does not mark fault tolerant are never rebuilt.

use super::build::{build_params_after_event, distance_targets};
use super::SimError;
use crate::config::{Config, ConfigError, Schedule};
use crate::engine::Cycle;
use crate::network::{ModelParams, NetPartition, Stranded, NO_TASK};
use crate::routing::{self, degraded::Degraded, Routing};
use crate::topology::faults::{LiveGraph, Timeline};
use crate::topology::Fabric;
use std::sync::Arc;
use std::time::Instant;

/// `cfg` with a lifetime played during the run (`faults.lifetime.every_cycles`) written out as
/// `[[faults.events]]`: the run starts with the base fault set, and each step's new failures
/// happen at `k * every_cycles` (critical failures are repaired within their step, as the lifetime
/// model says, so they do not show). `cfg` itself otherwise.
pub fn expand_lifetime(cfg: &Config) -> Result<std::borrow::Cow<'_, Config>, ConfigError> {
    use crate::topology::faults::{lifetime, FaultEvent};
    let Some(l) = cfg.faults.lifetime.as_ref().filter(|l| l.every_cycles > 0) else {
        return Ok(std::borrow::Cow::Borrowed(cfg));
    };
    if !cfg.faults.events.is_empty() {
        return Err(ConfigError::value(
            "faults.lifetime.every_cycles",
            l.every_cycles,
            "0 with [[faults.events]] (a lifetime played during the run writes its own events)",
        ));
    }
    let topo = super::build_topology(cfg)?;
    let base = cfg.faults.base_set(&*topo, cfg.seed)?;
    let steps = lifetime::simulate(&*topo, &base, l, cfg.faults.seed_or(cfg.seed), Some(l.step()));
    let mut c = cfg.clone();
    c.faults.lifetime = None;
    let as_pairs = |v: &[(crate::topology::SwitchId, u16)]| v.iter().map(|&(s, p)| vec![s as u64, p as u64]).collect();
    for w in steps.windows(2) {
        let (a, b) = (&w[0].faults, &w[1].faults);
        let (had_links, had_switches): (std::collections::HashSet<_>, std::collections::HashSet<_>) =
            (a.links.iter().collect(), a.switches.iter().collect());
        let links: Vec<_> = b.links.iter().copied().filter(|x| !had_links.contains(x)).collect();
        let switches: Vec<u64> = b.switches.iter().filter(|x| !had_switches.contains(x)).map(|&s| s as u64).collect();
        if links.is_empty() && switches.is_empty() {
            continue;
        }
        c.faults.events.push(FaultEvent {
            cycle: w[1].step as u64 * l.every_cycles,
            links: as_pairs(&links),
            switches,
            ..FaultEvent::default()
        });
    }
    Ok(std::borrow::Cow::Owned(c))
}

/// The VCs per port a run with failure events sizes its routers for: the most the routing uses on
/// any network of the run (hop-indexed VC schemes use more where faults lengthen paths), so that
/// every rebuild fits; `None` without events, or for a routing that is never rebuilt. Builds the
/// routing on every network of the timeline, which also finds, before the run, an event after
/// which the routing cannot be rebuilt, or whose distance exceptions outgrow what `max_memory`
/// (`--max-memory`; `None`: the process's limit) leaves (errors naming the event).
pub fn event_vcs(cfg: &Config, net: &Fabric, max_memory: Option<u64>) -> Result<Option<usize>, ConfigError> {
    let rebuilds = routing::entry(&cfg.routing.algorithm).is_some_and(|e| e.fault_tolerant);
    if cfg.faults.events.is_empty() || !rebuilds {
        return Ok(None);
    }
    let topo = net.topology_arc();
    let timeline = cfg.faults.timeline(&*topo, cfg.seed)?;
    let mut most = 0;
    for k in 0..timeline.sets.len() {
        // Each network's distance exceptions are built within the memory left, as the run's first
        // one is (`build::fabric_within`); an event whose exceptions outgrow it is named.
        let net = super::build::fabric_within(cfg, topo.clone(), &timeline.sets[k], max_memory, 1, k.checked_sub(1))?;
        match routing::build(&cfg.routing_params(), Arc::new(net)) {
            Ok(r) => most = most.max(r.vcs()),
            Err(e) if k == 0 => return Err(e),
            Err(e) => {
                return Err(ConfigError::value(
                    &format!("faults.events[{}]", k - 1),
                    format!("cycle {}", cfg.faults.events[k - 1].cycle),
                    format!("an event after which routing `{}` can be rebuilt: {e}", cfg.routing.algorithm),
                ))
            }
        }
    }
    Ok(Some(most))
}

/// What one event did, as the run reports it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct EventRecord {
    /// Cycle of the event.
    pub cycle: Cycle,
    /// Links it failed (switch links of failed switches included).
    pub links: u64,
    /// Switches it failed.
    pub switches: u64,
    /// Links it repaired.
    pub repaired_links: u64,
    /// Switches it repaired.
    pub repaired_switches: u64,
    /// Cycle the routing rebuilt for the network after it came into force (`None`: never, for a
    /// routing that is not rebuilt or a run that ended first).
    pub rebuilt_at: Option<Cycle>,
    /// Wall-clock seconds of the rebuild on this rank (the network's distances and the routing's
    /// tables), `None` if not rebuilt.
    pub rebuild_seconds: Option<f64>,
    /// Live servers taking part after the event (the accepted load's denominator).
    pub live_servers: u64,
}

/// The failure events of a run and where the run is among them.
pub struct LiveFaults {
    timeline: Timeline,
    cycles: Vec<Cycle>,
    reconfigure: Cycle,
    /// Whether the routing is rebuilt after events (the registry's `fault_tolerant`).
    rebuilds: bool,
    /// `faults.stranded = "wait"`.
    wait: bool,
    /// `faults.retransmit_cycles` is set.
    retransmit: bool,
    /// Events applied so far.
    applied: usize,
    /// Rebuilds due: (cycle, index into `timeline.sets`), in order of cycle.
    due: Vec<(Cycle, usize)>,
    /// The routing in force, unwrapped (`None` until the first event: the run's own).
    inner: Option<Arc<dyn Routing>>,
    /// The network after the events applied so far.
    net: Option<Arc<Fabric>>,
    /// One record per event.
    pub records: Vec<EventRecord>,
}

impl LiveFaults {
    /// The events of `cfg` on the network `net` (the static faults applied), or `None` without
    /// events. Checks them: every network along the way must leave the live servers connected
    /// (unless `faults.unreachable = "drop"`); a workload (`workload`, where its tasks run) needs
    /// retransmission (a lost packet would stall its message for ever), every network connected,
    /// and no event may fail a switch that runs a task.
    pub fn plan(
        cfg: &Config,
        net: &Fabric,
        schedule: &Schedule,
        workload: Option<&crate::network::WorkloadPlan>,
    ) -> Result<Option<Self>, ConfigError> {
        let events = &cfg.faults.events;
        if events.is_empty() {
            return Ok(None);
        }
        if cfg.workload.is_some() && cfg.faults.retransmit_cycles.is_none() {
            return Err(ConfigError::value(
                "faults.retransmit_cycles",
                "absent",
                "set with [workload] and failure events: a lost packet would stall its message for ever unless \
                 its source sends it again (e.g. faults.retransmit_cycles = 1000)",
            ));
        }
        if cfg.workload.is_some() && cfg.faults.unreachable == "drop" {
            return Err(ConfigError::value(
                "faults.unreachable",
                "\"drop\"",
                "\"error\" with [workload] and failure events: a task cut off from another never completes",
            ));
        }
        let topo = net.topology();
        let timeline = cfg.faults.timeline(topo, cfg.seed)?;
        if let Some(w) = workload {
            for (k, added) in timeline.added.iter().enumerate() {
                if let Some(&sw) = added.switches.iter().find(|&&sw| {
                    (0..topo.servers_at(sw) as u32).any(|s| w.task_of[(topo.first_server(sw) + s) as usize] != NO_TASK)
                }) {
                    return Err(ConfigError::value(
                        &format!("faults.events[{k}]"),
                        format!("cycle {}, switch {sw}", events[k].cycle),
                        "failures of switches that run no task of the [workload]: a task whose server fails \
                         never completes (fail links, or switches without tasks)",
                    ));
                }
            }
        }
        if let Some(n) = cfg.traffic.active_servers {
            if timeline.sets.iter().any(|s| !s.switches.is_empty()) {
                return Err(ConfigError::value(
                    "traffic.active_servers",
                    n,
                    "absent when faults or faults.events fail switches (the active servers are chosen on the whole \
                     network)",
                ));
            }
        }
        let end = schedule.until_steady.unwrap_or(schedule.end);
        for (k, e) in events.iter().enumerate() {
            if e.cycle >= end {
                return Err(ConfigError::value(
                    &format!("faults.events[{k}].cycle"),
                    e.cycle,
                    format!("before the end of the run (cycle {end})"),
                ));
            }
            if cfg.faults.unreachable != "drop" && !LiveGraph::new(topo, &timeline.sets[k + 1]).servers_connected() {
                return Err(ConfigError::value(
                    &format!("faults.events[{k}]"),
                    format!("cycle {}", e.cycle),
                    "failures that leave every live server able to reach every other: this event splits the network; \
                     fail fewer links or switches, or set faults.unreachable = \"drop\"",
                ));
            }
        }
        let rebuilds = routing::entry(&cfg.routing.algorithm).is_some_and(|e| e.fault_tolerant);
        let records = events
            .iter()
            .zip(timeline.added.iter().zip(&timeline.repaired))
            .map(|(e, (a, r))| EventRecord {
                cycle: e.cycle,
                links: a.links.len() as u64,
                switches: a.switches.len() as u64,
                repaired_links: r.links.len() as u64,
                repaired_switches: r.switches.len() as u64,
                rebuilt_at: None,
                rebuild_seconds: None,
                live_servers: 0,
            })
            .collect();
        Ok(Some(LiveFaults {
            timeline,
            cycles: events.iter().map(|e| e.cycle).collect(),
            reconfigure: cfg.faults.reconfigure_cycles,
            rebuilds,
            wait: cfg.faults.stranded == "wait",
            retransmit: cfg.faults.retransmit_cycles.is_some(),
            applied: 0,
            due: Vec::new(),
            inner: None,
            net: None,
            records,
        }))
    }

    /// What heads with no candidate do now: wait while a rebuild is pending with
    /// `faults.stranded = "wait"`, else be dropped.
    pub fn stranded(&self) -> Stranded {
        if self.wait && !self.due.is_empty() {
            Stranded::Wait
        } else {
            Stranded::Drop
        }
    }

    /// The next cycle the run must stop at (an event or a rebuild), or `Cycle::MAX`.
    pub fn next_break(&self) -> Cycle {
        let event = self.cycles.get(self.applied).copied().unwrap_or(Cycle::MAX);
        let rebuild = self.due.first().map_or(Cycle::MAX, |d| d.0);
        event.min(rebuild)
    }

    /// The network of set `k` of the timeline.
    fn network(&self, cfg: &Config, k: usize, topo: Arc<dyn crate::topology::Topology>) -> Arc<Fabric> {
        self.timeline.fabric(k, topo, distance_targets(cfg))
    }

    /// Make the changes due at `now` (the run is stopped there, every partition parked): first a
    /// rebuild that is due, then an event. `params` is the model in force; returns the one after.
    pub fn at_break(
        &mut self,
        cfg: &Config,
        schedule: &Schedule,
        now: Cycle,
        params: &Arc<ModelParams>,
        parts: &mut [NetPartition],
    ) -> Result<Arc<ModelParams>, SimError> {
        let mut params = params.clone();
        let topo = params.net.topology_arc();
        let mut inner = self.inner.clone().unwrap_or_else(|| params.routing.clone());
        while self.due.first().is_some_and(|d| d.0 <= now) {
            let (_, set) = self.due.remove(0);
            let started = Instant::now();
            let net = if set == self.applied {
                self.net.clone().expect("an event applied")
            } else {
                self.network(cfg, set, topo.clone())
            };
            let rebuilt = self.build_routing(cfg, net, &params, now)?;
            let r = &mut self.records[set - 1];
            r.rebuilt_at = Some(now);
            r.rebuild_seconds = Some(started.elapsed().as_secs_f64());
            inner = rebuilt;
            self.inner = Some(inner.clone());
            let current = self.net.clone().expect("an event applied");
            let routing: Arc<dyn Routing> = Arc::new(Degraded::new(inner.clone(), current, set != self.applied));
            params = Arc::new(ModelParams { routing, ..(*params).clone() });
            for p in parts.iter_mut() {
                p.set_routing(params.clone());
            }
        }
        if self.cycles.get(self.applied) == Some(&now) {
            let k = self.applied;
            let started = Instant::now();
            let net = self.network(cfg, k + 1, topo);
            self.net = Some(net.clone());
            self.applied += 1;
            let (routing, fresh): (Arc<dyn Routing>, bool) = if self.rebuilds && self.reconfigure == 0 {
                let rebuilt = self.build_routing(cfg, net.clone(), &params, now)?;
                self.inner = Some(rebuilt.clone());
                (Arc::new(Degraded::new(rebuilt, net.clone(), false)), true)
            } else {
                if self.rebuilds {
                    // A rebuild due after the run's end never comes.
                    self.due.push((now.saturating_add(self.reconfigure), k + 1));
                }
                self.inner.get_or_insert(inner.clone());
                (Arc::new(Degraded::new(inner, net.clone(), true)), false)
            };
            // A workload's tasks stay where they were placed.
            let next = build_params_after_event(cfg, net, schedule, routing, params.workload.clone())?;
            self.records[k].live_servers = next.live_servers;
            params = Arc::new(ModelParams { vcs: params.vcs, ..next });
            if fresh {
                let r = &mut self.records[k];
                r.rebuilt_at = Some(now);
                r.rebuild_seconds = Some(started.elapsed().as_secs_f64());
            }
            for p in parts.iter_mut() {
                p.apply_failure(params.clone(), k, now);
            }
        }
        let mode = self.stranded();
        for p in parts.iter_mut() {
            p.set_stranded(mode);
        }
        Ok(params)
    }

    /// Fill the failure-event figures of `summary` from the run's merged statistics.
    pub fn summarize(
        &self,
        summary: &mut crate::metrics::Summary,
        stats: &crate::metrics::Stats,
        sc: Cycle,
        servers: u64,
    ) {
        let events: Vec<_> = self
            .records
            .iter()
            .map(|r| crate::metrics::FailureEvent {
                cycle: r.cycle,
                links: r.links,
                switches: r.switches,
                repaired_links: r.repaired_links,
                repaired_switches: r.repaired_switches,
                rebuilt_at: r.rebuilt_at,
                rebuild_seconds: r.rebuild_seconds,
                ..Default::default()
            })
            .collect();
        // Events the run did not reach leave the servers as they were.
        let mut live = vec![servers];
        for r in &self.records {
            live.push(if r.live_servers > 0 { r.live_servers } else { *live.last().expect("the first") });
        }
        summary.packets_lost = Some(stats.event_lost.iter().sum());
        summary.packets_stranded = Some(stats.stranded_packets);
        if self.retransmit {
            summary.packets_retransmitted = Some(stats.retransmitted_packets);
            summary.packets_abandoned = Some(stats.abandoned_packets);
        }
        summary.failure_events = crate::metrics::failure_events(&events, &stats.event_lost, &stats.samples, sc, &live);
    }

    /// The config's routing built on `net`, within the VCs the partitions' records were sized for
    /// ([`event_vcs`]).
    fn build_routing(
        &self,
        cfg: &Config,
        net: Arc<Fabric>,
        params: &ModelParams,
        now: Cycle,
    ) -> Result<Arc<dyn Routing>, SimError> {
        let r: Arc<dyn Routing> = Arc::from(routing::build(&cfg.routing_params(), net)?);
        if r.vcs() > params.vcs {
            return Err(SimError::Failed {
                cycle: now,
                reason: format!(
                    "routing `{}` rebuilt after a failure event needs {} VCs where the routers have {}",
                    r.name(),
                    r.vcs(),
                    params.vcs
                ),
            });
        }
        Ok(r)
    }
}
