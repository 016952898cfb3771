//! `hxsim check-deadlock`: build the channel dependency graph the routing and VC policy can produce
//! on the config's network and report whether it is deadlock free.

use crate::config::Config;
use crate::sim;
use anyhow::Result;

/// `hxsim check-deadlock`: 0 when the routing is shown deadlock free on the config's network, 1
/// when a cycle (or a packet that cannot move) is found; config errors are exit code 2, and so is
/// a network that faults split, as for a run (it was reported as an unroutable packet, exit 1).
pub fn run(cfg: &Config, json: bool) -> Result<u8> {
    use crate::routing::deadlock::{self, Verdict};
    let cfg = &*sim::events::expand_lifetime(cfg)?;
    let net = sim::build_network(cfg)?;
    crate::preflight::check_connected(cfg, &net)?;
    let routing = crate::routing::build(&cfg.routing_params(), net.clone())?;
    let r = deadlock::check(&net, &*routing);
    let transitions = across_events(cfg, &net)?;
    let all_free = r.deadlock_free() && transitions.iter().all(|t| t.report.as_ref().is_none_or(|r| r.deadlock_free()));
    if json {
        let mut v = serde_json::to_value(&r)?;
        if !cfg.faults.events.is_empty() {
            v["transitions"] = serde_json::to_value(&transitions)?;
        }
        println!("{}", serde_json::to_string(&v)?);
        return Ok(if all_free { 0 } else { 1 });
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
    println!("  VCs needed: {} of {} (the highest VC a route reaches, plus one)", r.vcs_needed, r.vcs);
    if let Some(t) = routing.tables() {
        println!(
            "  {}{}",
            super::analyze::table_line(&t),
            if r.routing == "spda" { " (one spanning tree per layer)" } else { "" }
        );
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
    for t in &transitions {
        match &t.report {
            None => println!(
                "across event {} (cycle {}): not checked ({} is escape based: Duato's condition over two escape \
                 subnetworks at once is not implemented)",
                t.event, t.cycle, r.routing
            ),
            Some(x) if x.deadlock_free() => println!(
                "across event {} (cycle {}): acyclic: old routes, new routes and every old prefix with a new suffix \
                 ({} channels used, {} dependencies)",
                t.event, t.cycle, x.channels_used, x.dependencies
            ),
            Some(x) => {
                println!("across event {} (cycle {}): NOT deadlock free: {}", t.event, t.cycle, short(&x.verdict))
            }
        }
    }
    Ok(if all_free { 0 } else { 1 })
}

/// The check of the change a failure event makes, for `hxsim check-deadlock` on a config with
/// `[[faults.events]]`.
#[derive(serde::Serialize)]
pub struct TransitionCheck {
    /// Index of the event.
    pub event: usize,
    /// Its cycle.
    pub cycle: u64,
    /// The analysis of [`crate::routing::degraded::Transition`] from the routing before the event
    /// (failed ports withdrawn) to the one rebuilt after it, on the network after it; `None` for an
    /// escape-based routing, not checked.
    pub report: Option<crate::routing::deadlock::Report>,
}

/// One check per failure event of `cfg`, from the routing built on the network before it to the
/// one rebuilt on the network after it (the change every packet in flight sees at the rebuild).
/// Routings that are never rebuilt (not fault tolerant) have no change to check.
fn across_events(cfg: &Config, net: &crate::topology::Fabric) -> Result<Vec<TransitionCheck>> {
    use crate::routing::degraded::{Degraded, Transition};
    use std::sync::Arc;
    let rebuilt = crate::routing::entry(&cfg.routing.algorithm).is_some_and(|e| e.fault_tolerant);
    if cfg.faults.events.is_empty() || !rebuilt {
        return Ok(Vec::new());
    }
    let topo = net.topology_arc();
    let timeline = cfg.faults.timeline(&*topo, cfg.seed)?;
    let fabric = |k: usize| timeline.fabric(k, topo.clone(), sim::build::distance_targets(cfg));
    let mut out = Vec::new();
    for (k, e) in cfg.faults.events.iter().enumerate() {
        let (before, after) = (fabric(k), fabric(k + 1));
        let old: Arc<dyn crate::routing::Routing> = Arc::from(crate::routing::build(&cfg.routing_params(), before)?);
        let new: Arc<dyn crate::routing::Routing> =
            Arc::from(crate::routing::build(&cfg.routing_params(), after.clone())?);
        let report = (!old.escape_based()).then(|| {
            let t = Transition::new(Arc::new(Degraded::new(old, after.clone(), true)), new);
            crate::routing::deadlock::check(&after, &t)
        });
        out.push(TransitionCheck { event: k, cycle: e.cycle, report });
    }
    Ok(out)
}

/// A verdict in a few words (the full report prints the channels).
fn short(v: &crate::routing::deadlock::Verdict) -> String {
    use crate::routing::deadlock::Verdict;
    let chain =
        |c: &[crate::routing::deadlock::Channel]| c.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" -> ");
    match v {
        Verdict::Cycle { channels } => format!("a cycle of {} channels: {}", channels.len(), chain(channels)),
        Verdict::Unroutable { place } => format!(
            "a packet from switch {} to switch {} has no candidate at switch {} after {} hops",
            place.src, place.dst, place.at, place.hops
        ),
        other => format!("{other:?}"),
    }
}
