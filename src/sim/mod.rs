//! A run of an experiment, in three roles, one file each:
//! - [`build`]: compose the model from a [`Config`] (topology, faults, routing, traffic, the
//!   parameters partitions share, the partitioning);
//! - [`run`](mod@run): run it on the engine on every rank, with checkpoint and restart;
//! - [`collect`]: reduce the partitions' statistics into a [`RunResult`].
//!
//! The config is read while building; after that the run reads the typed values built from it
//! ([`ModelParams`](crate::network::ModelParams), the [`Schedule`]).

pub mod build;
pub mod collect;
pub mod events;
pub mod run;
pub mod workload;

use crate::config::{Config, ConfigError, Schedule};
use crate::engine::{Cycle, Progress, World};
use crate::metrics::{SampleSender, Stats, Summary};
use crate::network::{CandidateCache, FetchAhead};
use crate::topology::Fabric;
pub use build::{
    assign_partitions, build_network, build_network_within, build_params, build_pattern, build_topology,
    class_latencies, partition_graph,
};
use std::sync::Arc;
use thiserror::Error;

/// Why a run did not produce a complete result.
#[derive(Debug, Error)]
pub enum SimError {
    /// Bad input (exit code 2).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The watchdog found no progress with packets in flight.
    #[error(
        "deadlock: {in_flight} packets in flight and nothing moved since cycle {last_progress} (detected at cycle {cycle}); blocked channels:\n  {}",
        blocked.join("\n  ")
    )]
    Deadlock {
        /// Cycle of detection.
        cycle: Cycle,
        /// Last cycle anything moved.
        last_progress: Cycle,
        /// Packets in flight.
        in_flight: i64,
        /// Blocked input channels, readable.
        blocked: Vec<String>,
    },
    /// The model could not continue (e.g. an unroutable packet).
    #[error("simulation failed at cycle {cycle}: {reason}")]
    Failed {
        /// Cycle.
        cycle: Cycle,
        /// Why.
        reason: String,
    },
}

impl SimError {
    /// Process exit code: 2 for bad input, 3 for a failed simulation.
    pub fn exit_code(&self) -> i32 {
        match self {
            SimError::Config(_) => 2,
            _ => 3,
        }
    }
}

/// How to run (not part of the experiment: results never depend on it).
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Partitions, one thread each.
    pub threads: usize,
    /// Refuse the run (exit 2) if its router state needs more than this many bytes (`--max-memory`);
    /// `None`: the memory available to the process ([`Config::check_memory`]).
    pub max_memory: Option<u64>,
    /// Whether partitions fetch the next switches' records ahead (`--prefetch`; a matter of speed
    /// only).
    pub fetch_ahead: FetchAhead,
    /// Which cache holds waiting heads' candidates (`--candidate-cache`; a matter of speed and
    /// memory only).
    pub candidate_cache: CandidateCache,
    /// Checkpoints to write, and the one to resume from (`--checkpoint`, `--resume`; see
    /// [`crate::checkpoint::setup`]).
    pub checkpoint: Option<crate::checkpoint::Plan>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            threads: 1,
            max_memory: None,
            fetch_ahead: FetchAhead::Auto,
            candidate_cache: CandidateCache::Auto,
            checkpoint: None,
        }
    }
}

/// Everything a run produced.
pub struct RunResult {
    /// Headline figures.
    pub summary: Summary,
    /// Merged counters, histogram and time series.
    pub stats: Stats,
    /// Phits injected per server in the window (global server order).
    pub server_injected: Vec<u64>,
    /// Phits accepted per server in the window.
    pub server_accepted: Vec<u64>,
    /// With failure events: packets lost (at an event, or stranded after one) per source server,
    /// and per destination server, over the run ([`crate::metrics::Stats::losses`]); empty without.
    pub server_losses: (Vec<u64>, Vec<u64>),
    /// Phits carried per switch-to-switch output port in the window, index `switch * ports + port`.
    pub link_phits: Vec<u64>,
    /// Whether the run reached its end (false if interrupted).
    pub complete: bool,
    /// The network that was simulated.
    pub net: Arc<Fabric>,
    /// Ranks and threads the run used.
    pub layout: Layout,
    /// Peak resident memory of the largest rank, bytes (`summary.peak_memory_bytes` is the sum over
    /// ranks).
    pub peak_memory_max_rank: u64,
    /// When the run measured (the window of the counters above) and ended.
    pub schedule: Schedule,
    /// Workloads: the cycle each task finished at (by task; `u64::MAX`: not finished); empty
    /// without a workload.
    pub task_finish: Vec<Cycle>,
    /// Workloads: the server each task ran on (by task); empty without a workload.
    pub task_server: Vec<u32>,
    /// Workloads that stopped progressing (every task waiting, the network empty): when, and what
    /// the first waiting tasks wait for. The result is then incomplete, and `hxsim run` exits 3.
    pub stalled: Option<String>,
}

/// How a run was spread over processes and threads (not part of the experiment: results never
/// depend on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// MPI ranks (processes).
    pub ranks: usize,
    /// Partitions (threads) per rank.
    pub threads: usize,
}

/// Run the experiment in this process alone. `progress` can be watched (and stopped) from another
/// thread.
pub fn run(cfg: &Config, opts: &RunOptions, progress: &Progress) -> Result<RunResult, SimError> {
    run_observed(cfg, opts, progress, None)
}

/// [`run()`], also sending every finished time-series interval of every partition to `samples`
/// during the run (see [`crate::metrics::SampleSink`]; partition `i` of `opts.threads` sends as `i`).
pub fn run_observed(
    cfg: &Config,
    opts: &RunOptions,
    progress: &Progress,
    samples: Option<SampleSender>,
) -> Result<RunResult, SimError> {
    run_on(&World::single(), cfg, opts, progress, samples).map(|r| r.expect("a single process is rank 0"))
}

/// Run the experiment on every rank of `world` (collective: every rank calls it with the same
/// config), `opts.threads` partitions per rank. Rank `r` simulates global partitions
/// `r * threads .. (r + 1) * threads`. Rank 0 gets the merged result; the other ranks get `None`
/// (or the same error as rank 0). With one rank, `samples` receives every partition's finished
/// intervals during the run (partition `i` sends as `i`). With several ranks, rank 0's `samples`
/// receives each finished interval once, already merged over all ranks and partitions, as
/// partition 0, every few windows (see [`crate::metrics::SampleRelay`]; [`sample_senders`] says how many senders
/// to expect); the other ranks' `samples` are ignored. Intervals the run ends in before they were
/// sent are in the result.
pub fn run_on(
    world: &World,
    cfg: &Config,
    opts: &RunOptions,
    progress: &Progress,
    samples: Option<SampleSender>,
) -> Result<Option<RunResult>, SimError> {
    let schedule = cfg.schedule();
    let Some(bound) = schedule.until_steady else {
        return run::run_once(world, cfg, schedule, opts, progress, samples);
    };
    // Runs twice as long each time, measuring the last `measure_cycles`, until the window is steady
    // or the next run would pass the bound. Every run is a fresh one (runs are deterministic, so it
    // goes through the same states as the shorter ones first), which costs at most twice the last
    // one and keeps the engine and every output unchanged; only the last run's time series goes to
    // `samples`.
    let mut end = schedule.end;
    loop {
        let (tx, rx) = match samples {
            Some(_) => {
                let (tx, rx) = crossbeam::channel::unbounded();
                (Some(tx), Some(rx))
            }
            None => (None, None),
        };
        let res = run::run_once(world, cfg, schedule.ending_at(end), opts, progress, tx)?;
        // Only rank 0 has the result: all ranks take its decision.
        let again =
            res.as_ref().is_some_and(|r| r.complete && r.summary.steady_state == Some(false)) && 2 * end <= bound;
        if world.min_all(if world.is_root() { again as u64 } else { u64::MAX }) == 0 {
            if let (Some(out), Some(rx)) = (&samples, rx) {
                for m in rx.try_iter() {
                    let _ = out.send(m);
                }
            }
            return Ok(res);
        }
        end *= 2;
    }
}

/// The checks of bad input that need the model, without running it: build the network with its
/// faults, the routing and the pattern as a run does (with the preflight checks, e.g. a network
/// that faults split) and the memory check with the routing's VC count, then drop them. `hxsim
/// sweep` makes them for every point before any point runs.
pub fn validate(cfg: &Config, max_memory: Option<u64>) -> Result<(), ConfigError> {
    let cfg = &*events::expand_lifetime(cfg)?;
    let net = build_network_within(cfg, max_memory, 1)?;
    let params = build_params(cfg, net.clone(), &cfg.schedule())?;
    events::LiveFaults::plan(cfg, &net, &cfg.schedule(), params.workload.as_deref())?;
    cfg.check_memory(1, max_memory, Some(vcs_on(cfg, &net, &params, max_memory)?))
}

/// VCs per port of the routers of a run of `cfg`: the routing's, or with failure events the most
/// the routing needs on any network of the run ([`events::event_vcs`]). A checkpoint's state has
/// this many; a run resumed from it under other events must need as many.
pub fn router_vcs(cfg: &Config) -> Result<usize, ConfigError> {
    let cfg = &*events::expand_lifetime(cfg)?;
    let net = build_network(cfg)?;
    let params = build_params(cfg, net.clone(), &cfg.schedule())?;
    vcs_on(cfg, &net, &params, None)
}

/// [`router_vcs`] of the model `params` built from `cfg` (lifetime expanded) on `net`; the networks
/// after failure events are built within `max_memory` as in [`build::build_network_within`].
pub(crate) fn vcs_on(
    cfg: &Config,
    net: &Fabric,
    params: &crate::network::ModelParams,
    max_memory: Option<u64>,
) -> Result<usize, ConfigError> {
    Ok(params.vcs.max(events::event_vcs(cfg, net, max_memory)?.unwrap_or(0)))
}

/// How many partitions send each interval to the `samples` of [`run_on`] with `layout`: every
/// partition with one rank, and rank 0's relay alone with several.
pub fn sample_senders(layout: Layout) -> u32 {
    if layout.ranks == 1 {
        layout.threads as u32
    } else {
        1
    }
}
