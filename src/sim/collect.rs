//! Reduce what every rank measured into one [`RunResult`]: the per-server and per-link arrays in
//! global order, the summed counters, and the summary's figures over the [`Schedule`]'s window.

use super::{Layout, RunResult};
use crate::config::Schedule;
use crate::engine::{Cycle, Outcome};
use crate::metrics::{jain_index, peak_memory_bytes, Stats, Steadiness, Summary};
use crate::network::{ModelParams, NetPartition};
use crate::topology::SwitchId;
use serde::{Deserialize, Serialize};

/// How the engine ended a run that did not fail.
#[derive(Debug, Clone, Copy)]
pub(crate) enum End {
    /// It ran (or was stopped) to this cycle.
    Reached(Cycle),
    /// A fixed workload drained: the run reports the cycle after its last delivery.
    Drained,
}

/// What one rank contributes to the result: its partitions' merged counters, its switches'
/// per-server and per-link arrays, and what it knows about a failure.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct RankResult {
    pub(crate) stats: Stats,
    /// Global ids of the switches whose arrays follow, in order.
    pub(crate) switches: Vec<SwitchId>,
    pub(crate) server_injected: Vec<u64>,
    pub(crate) server_accepted: Vec<u64>,
    pub(crate) link_phits: Vec<u64>,
    /// Peak resident memory of the rank's process, bytes.
    pub(crate) peak_memory: u64,
    pub(crate) failure: Option<String>,
    pub(crate) blocked: Vec<String>,
    /// Workloads: each local task's finish cycle (`Cycle::MAX`: not finished).
    pub(crate) task_finish: Vec<(u32, Cycle)>,
    /// Workloads that stalled: what the first unfinished tasks wait for.
    pub(crate) waiting: Vec<String>,
}

impl RankResult {
    /// The contribution of `parts`, which it consumes: each partition's per-server and per-link
    /// arrays are moved out of it and the partition dropped before the next one's are appended, so
    /// that collecting adds little to the run's peak memory (copying them while every partition
    /// was alive took 23 MB more at the peak on `configs/hyperx-3d-32.toml`, 22 bytes per
    /// endpoint).
    pub(crate) fn of(parts: Vec<NetPartition>, outcome: &Outcome, failed: bool) -> Self {
        let mut r = RankResult { peak_memory: peak_memory_bytes(), ..Default::default() };
        if matches!(outcome, Outcome::Stalled { .. }) {
            r.waiting = parts.iter().flat_map(|p| p.waiting_report(8)).take(8).collect();
        }
        if failed {
            r.failure = parts.iter().find_map(|p| p.failure().map(str::to_string));
            if let Outcome::Deadlock { cycle, .. } = outcome {
                r.blocked = parts.iter().flat_map(|p| p.blocked_report(*cycle, 12)).take(12).collect();
            }
        }
        for mut p in parts {
            r.stats.merge(&p.stats);
            r.switches.extend_from_slice(p.switches());
            r.task_finish.extend(p.task_finish_times());
            append(&mut r.server_injected, std::mem::take(&mut p.server_injected));
            append(&mut r.server_accepted, std::mem::take(&mut p.server_accepted));
            append(&mut r.link_phits, std::mem::take(&mut p.link_phits));
        }
        r
    }
}

/// `v` followed by `more`, taking `more` itself where `v` is empty.
fn append(v: &mut Vec<u64>, more: Vec<u64>) {
    if v.is_empty() {
        *v = more;
    } else {
        v.extend_from_slice(&more);
    }
}

/// The result of a run of `params` on `schedule` at offered load `offered`, from every rank's
/// contribution `ranks`, ended as `end` after `wall` seconds.
#[allow(clippy::too_many_arguments)]
pub(crate) fn collect(
    params: &ModelParams,
    schedule: Schedule,
    offered: f64,
    ranks: &[RankResult],
    layout: Layout,
    end: End,
    wall: f64,
    complete: bool,
) -> RunResult {
    let net = params.net.clone();
    let topo = net.topology();
    let r = net.max_switch_ports();
    let n = net.num_switches();
    let ns = net.num_servers();
    let mut stats = Stats::default();
    let mut server_injected = vec![0u64; ns];
    let mut server_accepted = vec![0u64; ns];
    let mut link_phits = vec![0u64; n * r];
    for p in ranks {
        stats.merge(&p.stats);
        // A rank's server arrays hold its switches' servers in its switch order.
        let mut k = 0;
        for (l, &sw) in p.switches.iter().enumerate() {
            let g = sw as usize;
            let t = topo.servers_at(sw);
            let f = if t > 0 { topo.first_server(sw) as usize } else { 0 };
            server_injected[f..f + t].copy_from_slice(&p.server_injected[k..k + t]);
            server_accepted[f..f + t].copy_from_slice(&p.server_accepted[k..k + t]);
            k += t;
            link_phits[g * r..(g + 1) * r].copy_from_slice(&p.link_phits[l * r..(l + 1) * r]);
        }
    }
    let mut task_finish = Vec::new();
    if let Some(plan) = &params.workload {
        task_finish = vec![Cycle::MAX; plan.server_of.len()];
        for p in ranks {
            for &(t, c) in &p.task_finish {
                task_finish[t as usize] = c;
            }
        }
    }
    let peak_memory_total: u64 = ranks.iter().map(|p| p.peak_memory).sum();
    let peak_memory_max = ranks.iter().map(|p| p.peak_memory).max().unwrap_or(0);
    // In-flight counts per sample: cumulative generated minus delivered is not per-interval data, so
    // it is rebuilt from the per-interval injections and deliveries of whole packets.
    let plen = params.packet_phits as i64;
    let mut inflight = 0i64;
    for s in &mut stats.samples {
        inflight += s.injected_packets as i64 - s.delivered_packets as i64 - s.lost_packets as i64;
        s.in_flight = inflight;
    }
    // Accepted load per live server; Jain's index over the servers that send.
    let servers = params.live_servers as f64;
    let fixed = schedule.fixed;
    // A workload has finished when its last task has (a computation may end it after the last
    // delivery).
    let makespan = task_finish.iter().copied().max().filter(|&m| m != Cycle::MAX);
    let cycles = match end {
        End::Reached(c) => c,
        End::Drained => (stats.last_delivery + 1).max(makespan.unwrap_or(0)),
    };
    // An interrupted run measured only the cycles it reached.
    let window_cycles = schedule.measured_cycles(cycles);
    let accepted_load = stats.delivered_phits as f64 / (window_cycles as f64 * servers);
    let steadiness = if fixed {
        // A fixed workload drains by design: not judged.
        Steadiness { steady: true, accepted_trend: 0.0, in_flight_trend: 0.0 }
    } else {
        let w = schedule.warmup;
        Steadiness::of(&stats.samples, params.sample_cycles, plen as u64, w, w + window_cycles)
    };
    let dp = stats.delivered_packets.max(1) as f64;
    let tables = params.routing.tables();
    let summary = Summary {
        offered_load: (!fixed).then_some(offered),
        accepted_load,
        average_latency: if stats.delivered_packets == 0 { f64::NAN } else { stats.latency_sum as f64 / dp },
        latency_p99: (stats.delivered_packets > 0).then(|| stats.latency_quantile(0.99)),
        average_hops: if stats.delivered_packets == 0 { f64::NAN } else { stats.hops_sum as f64 / dp },
        jain_index: match &params.silent {
            None => jain_index(&server_injected),
            Some(q) => jain_index(
                &server_injected.iter().zip(q.iter()).filter(|(_, &q)| !q).map(|(&x, _)| x).collect::<Vec<_>>(),
            ),
        },
        packets_delivered: stats.delivered_packets,
        cycles,
        wall_seconds: wall,
        hops_per_second: if wall > 0.0 { stats.traversals as f64 / wall } else { 0.0 },
        // An interrupted workload has not completed: no completion time.
        completion_cycles: (fixed && complete).then_some(stats.last_delivery + 1),
        steady_state: (stats.delivered_packets > 0).then_some(steadiness.steady),
        accepted_trend: steadiness.accepted_trend,
        in_flight_trend: steadiness.in_flight_trend,
        packets_generated: stats.generated_packets,
        packets_suppressed: stats.suppressed_packets,
        peak_memory_bytes: peak_memory_total,
        packets_dropped: stats.dropped_packets,
        unreachable_pairs: params.unreachable_pairs,
        servers_lost: (ns - net.live_servers()) as u64,
        routing_layers: tables.as_ref().map_or(0, |t| t.layers as u64),
        routing_table_bytes: tables.as_ref().map_or(0, |t| t.bytes),
        routing_build_seconds: tables.as_ref().map_or(0.0, |t| t.build_seconds),
        vcs_used: stats.vc_phits.iter().filter(|&&p| p > 0).count() as u64,
        vc_phits: stats.vc_phits.clone(),
        makespan_cycles: None,
        task_finish_min: None,
        task_finish_median: None,
        task_finish_max: None,
        messages_delivered: None,
        message_latency_mean: None,
        message_latency_p99: None,
        cycles_per_iteration: None,
        packets_lost: None,
        packets_stranded: None,
        packets_retransmitted: None,
        packets_abandoned: None,
        failure_events: Vec::new(),
    };
    let mut summary = summary;
    if let Some(plan) = &params.workload {
        crate::metrics::fill_workload_summary(&mut summary, &task_finish, &stats, plan.workload.iterations(), complete);
        // The completion of a workload is its makespan.
        summary.completion_cycles = summary.makespan_cycles;
    }
    RunResult {
        summary,
        stats,
        server_injected,
        server_accepted,
        server_losses: Default::default(),
        link_phits,
        complete,
        net,
        layout,
        peak_memory_max_rank: peak_memory_max,
        schedule,
        task_finish,
        task_server: params.workload.as_ref().map_or_else(Vec::new, |p| p.server_of.clone()),
        stalled: None,
    }
}
