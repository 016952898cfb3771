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
    let net = sim::build_network(cfg)?;
    crate::preflight::check_connected(cfg, &net)?;
    let routing = crate::routing::build(&cfg.routing_params(), net.clone())?;
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
    Ok(if r.deadlock_free() { 0 } else { 1 })
}
