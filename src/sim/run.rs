//! Run a composed model on the engine, on every rank: partition the switches, build the
//! partitions, run windows (with checkpoints and restarts), and gather what each rank measured.

use super::build::{build_network_within, build_params, partition_graph, partition_with};
use super::collect::{collect, End, RankResult};
use super::{Layout, RunOptions, RunResult, SimError};
use crate::config::{Config, ConfigError, Schedule};
use crate::engine::{Cycle, Outcome, Progress, RunSpec, World};
use crate::metrics::{SampleRelay, SampleSender, SampleSink};
use crate::network::NetPartition;
use crate::topology::SwitchId;
use std::sync::Arc;
use std::time::Instant;

/// One run of `cfg` on `schedule` (see [`super::run_on`]).
pub(crate) fn run_once(
    world: &World,
    cfg: &Config,
    schedule: Schedule,
    opts: &RunOptions,
    progress: &Progress,
    samples: Option<SampleSender>,
) -> Result<Option<RunResult>, SimError> {
    let (ranks, rank, threads) = (world.size(), world.rank(), opts.threads);
    // A lifetime played during the run is a list of events; checkpoints keep the config as given.
    let given = cfg;
    let expanded = super::events::expand_lifetime(cfg)?;
    let cfg = &*expanded;
    let net = build_network_within(cfg, opts.max_memory, ranks)?;
    let mut params = build_params(cfg, net.clone(), &schedule)?;
    // With failure events the routers may need more VCs than the routing uses at the start.
    params.vcs = super::vcs_on(cfg, &net, &params, opts.max_memory)?;
    let params = Arc::new(params);
    // The command checked the memory before building anything, with a lower bound of the VC
    // count; the routing now says how many VCs every port gets.
    let workload_bytes = params.workload.as_ref().map_or(0, |p| {
        let w = &p.workload;
        w.bytes() + crate::network::task_state_bytes(w.tasks() as u64, w.total_ops()) / ranks as u64
    });
    cfg.check_memory_with(ranks, opts.max_memory, Some(params.vcs), workload_bytes)?;
    let n = net.num_switches();
    let total = ranks * threads;
    if threads == 0 || total > n {
        return Err(ConfigError::value(
            "--threads",
            threads,
            format!("at least 1, with ranks ({ranks}) x threads at most the number of switches ({n})"),
        )
        .into());
    }
    let graph = partition_graph(cfg, &net)?;
    let part_of = partition_with(cfg, &graph, total)?;
    let first = rank * threads;
    let mine = |p: u32| (p as usize) >= first && (p as usize) < first + threads;
    // Window: the smallest latency of a cut link, over all ranks. Neighbours: the ranks this rank
    // shares a link with, the only ones it exchanges messages with.
    let mut lookahead = u64::MAX;
    let mut is_neighbour = vec![false; ranks];
    let mut members: Vec<Vec<SwitchId>> = vec![Vec::new(); threads];
    let mut local_of = vec![0u32; n];
    for (s, &p) in part_of.iter().enumerate() {
        if !mine(p) {
            continue;
        }
        let li = p as usize - first;
        local_of[s] = members[li].len() as u32;
        members[li].push(s as SwitchId);
        for e in graph.edge_range(s) {
            let q = part_of[graph.adjncy[e] as usize];
            if q != p {
                lookahead = lookahead.min(graph.latency[e] as u64);
                is_neighbour[q as usize / threads] |= !mine(q);
            }
        }
    }
    // The graph is O(links) (about 40 MiB for the million-endpoint HyperX): not needed any more.
    drop(graph);
    let lookahead = match world.min_all(lookahead) {
        u64::MAX => params.max_latency(),
        l => l,
    };
    let neighbours: Vec<usize> = (0..ranks).filter(|&q| is_neighbour[q]).collect();
    let local_of = Arc::new(local_of);
    let mut parts: Vec<NetPartition> = members
        .into_iter()
        .map(|m| {
            let mut part = NetPartition::new(params.clone(), m, local_of.clone());
            part.set_candidate_cache(opts.candidate_cache);
            part.set_fetch_ahead(opts.fetch_ahead);
            part
        })
        .collect();
    // Other ranks' partitions cannot reach rank 0's collector: with several ranks every rank
    // relays its partitions' intervals to rank 0 at window ends, if rank 0 collects (all decide
    // alike, as the relay's reductions are collective).
    let relayed = ranks > 1 && world.min_all(if world.is_root() { samples.is_some() as u64 } else { u64::MAX }) == 1;
    let mut relay = None;
    let sink_tx = if relayed {
        let (r, tx) = SampleRelay::new(threads as u32, params.sample_cycles, samples);
        relay = Some(r);
        Some(tx)
    } else if ranks == 1 {
        samples
    } else {
        None
    };
    if let Some(tx) = sink_tx {
        for (i, p) in parts.iter_mut().enumerate() {
            p.sample_sink = Some(SampleSink::new(i as u32, tx.clone()));
        }
    }
    let spec = RunSpec {
        end: schedule.end,
        lookahead,
        max_delay: params.max_delay(),
        stop_when_drained: schedule.fixed,
        watchdog: cfg.simulation.watchdog_cycles,
        start: 0,
        pause_at: Cycle::MAX,
        break_at: Cycle::MAX,
    };
    // Checkpoint and restart (see `crate::checkpoint`): restore a resumed run, schedule pauses.
    let mut spec = spec;
    if let Some(plan) = &opts.checkpoint {
        crate::checkpoint::prepare(world, plan, &mut parts, &mut spec)?;
    }
    // Failure events: the engine stops at each (and at each rebuild of the routing) so that the
    // model changes at the same cycle on every rank and thread. A resumed run first makes the
    // changes of the breaks before its first cycle to the model (the partitions' state restored
    // from the checkpoint has them already); a break at its first cycle that the checkpoint
    // did not have (an event the resumed run adds there, see `crate::checkpoint::Saved::check`)
    // is made to the restored state too, as a run that never stopped makes it.
    let mut live = super::events::LiveFaults::plan(cfg, &net, &schedule, params.workload.as_deref())?;
    let mut current = params.clone();
    if let Some(l) = live.as_mut() {
        if spec.start > 0 {
            let saved = opts.checkpoint.as_ref().is_some_and(|c| c.holds_events_at_start());
            while l.next_break() < spec.start || (l.next_break() == spec.start && saved) {
                let at = l.next_break();
                current = l.at_break(cfg, &schedule, at, &current, &mut [])?;
            }
            if l.next_break() == spec.start {
                current = l.at_break(cfg, &schedule, spec.start, &current, &mut parts)?;
            }
            if !Arc::ptr_eq(&current, &params) {
                for p in &mut parts {
                    p.resume_after_failures(current.clone(), l.stranded());
                }
            }
        }
        spec.break_at = l.next_break();
    }
    let start = Instant::now();
    let (parts, outcome) = loop {
        let (mut done, outcome) = match relay.as_mut() {
            Some(r) => world.run_observed(parts, &part_of, &neighbours, &spec, progress, |end| {
                r.window_end(end, |words| world.sum_to_root(words))
            }),
            None => world.run(parts, &part_of, &neighbours, &spec, progress),
        };
        if let (Outcome::Paused { cycle } | Outcome::Interrupted { cycles: cycle }, Some(l)) = (&outcome, live.as_mut())
        {
            let resume_at = done.first().and_then(|p| p.resume_at()).unwrap_or(*cycle);
            if resume_at >= spec.break_at {
                // Before any checkpoint of this stop, so that it holds the model after the break.
                current = l.at_break(cfg, &schedule, resume_at, &current, &mut done)?;
                spec.break_at = l.next_break();
                if matches!(outcome, Outcome::Paused { .. }) && *cycle < spec.pause_at {
                    spec.start = resume_at;
                    parts = done;
                    continue;
                }
            }
        }
        // Checkpoint and restart: write at pauses and on signals; after a pause, go on.
        if opts
            .checkpoint
            .as_ref()
            .is_some_and(|plan| crate::checkpoint::after_leg(world, plan, given, &done, &outcome, &mut spec))
        {
            parts = done;
            continue;
        }
        break (done, outcome);
    };
    let wall = start.elapsed().as_secs_f64();
    let mut parts = parts;
    if let Outcome::Interrupted { cycles } = outcome {
        // After any checkpoint (which keeps them: the packets arrive when the run resumes): a
        // stopped run counts what a complete run of its cycles counts.
        for p in &mut parts {
            p.uncount_late(cycles);
        }
    }
    let failed = matches!(outcome, Outcome::Deadlock { .. } | Outcome::Failed { .. });
    let local = RankResult::of(parts, &outcome, failed);
    // Every rank takes part in the gather, whatever the outcome (it is collective).
    let results = if ranks == 1 {
        vec![local]
    } else {
        let bytes = bincode::serde::encode_to_vec(&local, bincode::config::standard())
            .expect("encoding a rank's result cannot fail");
        drop(local);
        match world.gather_to_root(bytes) {
            Some(all) => all
                .iter()
                .map(|b| {
                    bincode::serde::decode_from_slice(b, bincode::config::standard())
                        .expect("decoding a rank's result sent by another rank of this run")
                        .0
                })
                .collect(),
            None => Vec::new(),
        }
    };
    let (cycles, complete) = match outcome {
        Outcome::Finished { cycles } => (End::Reached(cycles), true),
        // The engine notices a drain at the end of a window, and windows depend on the layout
        // (one partition checks every 64 cycles); `collect` reports the completion cycle instead,
        // which does not.
        Outcome::Drained { .. } => (End::Drained, true),
        Outcome::Interrupted { cycles } | Outcome::Stalled { cycle: cycles } => (End::Reached(cycles), false),
        Outcome::Paused { .. } => unreachable!("a pause is taken by the checkpoint loop"),
        Outcome::Deadlock { cycle, last_progress, in_flight } => {
            let blocked = results.iter().flat_map(|r| r.blocked.iter().cloned()).take(12).collect();
            return Err(SimError::Deadlock { cycle, last_progress, in_flight, blocked });
        }
        Outcome::Failed { cycle } => {
            let reason = results.iter().find_map(|r| r.failure.clone()).unwrap_or_default();
            return Err(SimError::Failed { cycle, reason });
        }
    };
    if !world.is_root() {
        return Ok(None);
    }
    let layout = Layout { ranks, threads };
    let offered = cfg.traffic.load;
    let mut res = collect(&params, schedule, offered, &results, layout, cycles, wall, complete);
    if let Some(l) = &live {
        l.summarize(&mut res.summary, &res.stats, params.sample_cycles, params.live_servers);
        let ns = res.server_injected.len();
        let (mut by_src, mut by_dst) = (vec![0u64; ns], vec![0u64; ns]);
        for &(s, d) in &res.stats.losses {
            by_src[s as usize] += 1;
            by_dst[d as usize] += 1;
        }
        res.server_losses = (by_src, by_dst);
    }
    if let Outcome::Stalled { cycle } = outcome {
        let waiting: Vec<String> = results.iter().flat_map(|r| r.waiting.iter().cloned()).take(8).collect();
        res.stalled = Some(format!(
            "the workload stopped progressing by cycle {cycle}: every unfinished task waits and nothing is in \
             flight; waiting:\n  {}",
            waiting.join("\n  ")
        ));
    }
    Ok(Some(res))
}
