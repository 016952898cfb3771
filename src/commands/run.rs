//! `hxsim run`: simulate one experiment, print its summary, and write its results file (see
//! [`crate::output`] for its layout) and JSON record.
//!
//! The results file is created before the run starts and is readable while it runs; the time series
//! is streamed into it. Files are written under [`crate::staged::partial_path`] and moved into place at the
//! end, so an existing file is replaced only by a finished (or validly interrupted) one. SIGINT or
//! SIGTERM stops the run at the next window boundary (see [`crate::signals`]); the results gathered
//! so far are written, the file keeps `complete = false`, and the process exits with 128 + the
//! signal number. A second signal exits at once.

use super::progress::run_with_progress_on;
use super::{exit_code, warn_threads};
use crate::config::{Config, ConfigError};
use crate::console::{note, out};
use crate::engine::{Progress, World};
use crate::metrics::Summary;
use crate::output::{hdf5, json_record, FLUSH_EVERY};
use crate::signals::{exit_status, signal_name, StopOnSignal, STOP_IO_ERROR};
use crate::sim::{self, Layout, RunOptions, SimError};
use crate::staged::{same_file, Staged};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Where `hxsim run` writes besides stdout.
#[derive(Debug, Default, Clone)]
pub struct RunOutputs {
    /// The HDF5 results file (`None`: `--no-output`).
    pub h5: Option<PathBuf>,
    /// `--json-out`: the JSON record of the run (see [`crate::output::json_record`]).
    pub json: Option<PathBuf>,
}

/// `hxsim run`: simulate, print the summary, and (unless `outputs.h5` is `None`) write the results
/// file, streaming the time series while the run goes on. Files are written under
/// [`crate::staged::partial_path`] and moved into place at the end, so an existing file is replaced only by a
/// finished (or validly interrupted) one. Returns the exit code: 0 when complete, 128 + signal when
/// stopped by a signal, 1 (with the summary printed anyway) when an output could not be written.
/// `opts` holds `--threads`, `--max-memory` and `--prefetch`.
pub fn run(cfg: &Config, opts: &RunOptions, json: bool, quiet: bool, outputs: &RunOutputs) -> Result<u8> {
    // One process, or every rank of the MPI world this process was started into: rank 0 prints and
    // writes the one results file; the other ranks simulate their partitions and stay silent.
    let world = World::from_env()?;
    let (ranks, root) = (world.size(), world.is_root());
    let threads = opts.threads;
    let layout = Layout { ranks, threads };
    let progress = Arc::new(Progress::default());
    let signals = StopOnSignal::install(progress.clone())?;
    if root {
        warn_threads(threads);
    }
    // Checked before anything runs: a path that cannot be written, or that another run is
    // writing, is bad input (see `check_paths` for the paths' relations).
    let staged_json = outputs.json.as_deref().filter(|_| root).map(|p| Staged::new(p, "--json-out")).transpose()?;
    let Some(path) = outputs.h5.as_deref().filter(|_| root) else {
        let res = match run_with_progress_on(&world, cfg, opts, quiet, progress, None) {
            Ok(Some(res)) => res,
            Ok(None) => return Ok(0),
            // Rank 0 reports errors for everybody.
            Err(e) if !root => return Ok(exit_code(&e.into())),
            Err(e) => return Err(e.into()),
        };
        let status = status_of(&res, signals.caught());
        let io = staged_json.map(|s| commit_json(s, cfg, &res, &status)).transpose().err();
        print_summary_with(cfg, &res.summary, &status, layout, json)?;
        return finish_code(io, run_exit_code(&res, signals.caught()));
    };
    let staged = Staged::new(path, "--output")?;
    signals.discard_on_exit(Some(staged.tmp()));
    let file = hdf5::create_file(staged.tmp())?;
    hdf5::write_header(&file, cfg, &hdf5::RunMeta { ranks, ..hdf5::RunMeta::now(threads) })?;
    let mut ts = hdf5::Timeseries::create(&file, cfg)?;
    file.flush()?;
    let (result, streamed) = {
        // With several ranks the other ranks' intervals arrive merged, relayed through this one.
        let (tx, rx) = crossbeam::channel::unbounded();
        std::thread::scope(|s| {
            let writer = s.spawn(|| {
                let r = hdf5::stream_timeseries(rx, crate::sim::sample_senders(layout), &mut ts, &file, FLUSH_EVERY);
                if r.is_err() {
                    // The file cannot be completed: stop the run at the next window, not at its end.
                    progress.stop.store(STOP_IO_ERROR, Ordering::SeqCst);
                }
                r
            });
            let result = run_with_progress_on(&world, cfg, opts, quiet, progress.clone(), Some(tx))
                .map(|r| r.expect("rank 0 gets the merged result"));
            let streamed = writer.join().unwrap_or_else(|_| Err(anyhow::anyhow!("the time-series writer panicked")));
            (result, streamed)
        })
    };
    let res = match result {
        Ok(res) => res,
        Err(e @ SimError::Config(_)) => {
            // Bad input found while building the model: nothing ran; dropping `staged` removes the
            // partial file and leaves any existing file alone.
            return Err(e.into());
        }
        Err(e) => {
            // The run failed: an existing file at the path stays as it was; a new path gets the
            // partial results with the error.
            let written = (|| {
                hdf5::set_str_attr(&file, "error", &e.to_string())?;
                hdf5::finish(&file, false, &format!("failed: {e}"))?;
                file.flush()?;
                anyhow::Ok(())
            })();
            drop(ts);
            drop(file);
            if written.is_ok() && !staged.dest().exists() && staged.commit().is_ok() {
                note(&format!("hxsim: partial results written to {}", path.display()));
            }
            return Err(e.into());
        }
    };
    let status = status_of(&res, signals.caught());
    let writing = std::time::Instant::now();
    let written = streamed.with_context(|| format!("writing the time series to {}", path.display())).and_then(|()| {
        hdf5::write_results(&file, &res, &mut ts)?;
        hdf5::finish(&file, res.complete, &status)?;
        file.flush()?;
        drop(ts);
        drop(file);
        signals.discard_on_exit(None);
        staged.commit().with_context(|| format!("moving the results file into place at {}", path.display()))
    });
    let w = writing.elapsed().as_secs_f64();
    tracing::info!(
        "wrote {} in {w:.4} s ({:.2}% of the simulation's {:.3} s)",
        path.display(),
        100.0 * w / res.summary.wall_seconds.max(1e-9),
        res.summary.wall_seconds
    );
    let io = written.err().or_else(|| staged_json.map(|s| commit_json(s, cfg, &res, &status)).transpose().err());
    print_summary_with(cfg, &res.summary, &status, layout, json)?;
    if io.is_none() {
        if json {
            note(&format!("results: {}", path.display()));
        } else {
            out(&format!("  {:<18} {}\n", "results", path.display()))?;
        }
    }
    finish_code(io, run_exit_code(&res, signals.caught()))
}

/// The exit code of a run that produced a result: [`exit_status`], and 3 for a workload that
/// stopped progressing (after saying what its tasks wait for on stderr).
fn run_exit_code(res: &crate::sim::RunResult, caught: Option<i32>) -> u8 {
    match &res.stalled {
        Some(why) if caught.is_none() => {
            note(&format!("error: {why}"));
            3
        }
        _ => exit_status(res.complete, caught),
    }
}

fn status_of(res: &crate::sim::RunResult, caught: Option<i32>) -> String {
    if let (Some(_), None) = (&res.stalled, caught) {
        return format!("stalled at cycle {}", res.summary.cycles);
    }
    match (res.complete, caught) {
        (true, _) => "complete".to_string(),
        (false, Some(sig)) => format!("interrupted by {} at cycle {}", signal_name(sig), res.summary.cycles),
        (false, None) => format!("interrupted at cycle {}", res.summary.cycles),
    }
}

fn commit_json(s: Staged, cfg: &Config, res: &crate::sim::RunResult, status: &str) -> Result<()> {
    use std::io::Write;
    let dest = s.dest().to_path_buf();
    (|| {
        let mut f = s.file();
        f.write_all(json_record(cfg, &res.summary, res.complete, status).as_bytes())?;
        f.sync_all()?;
        s.commit()
    })()
    .with_context(|| format!("writing the JSON summary to {}", dest.display()))
}

/// The files `hxsim run` reads and writes, checked against each other before anything runs.
#[derive(Debug, Default, Clone, Copy)]
pub struct RunPaths<'a> {
    /// The config file (none with `--resume`).
    pub config: Option<&'a Path>,
    /// `--resume`: the checkpoint the run continues.
    pub resume: Option<&'a Path>,
    /// Where checkpoints go (`--checkpoint`, or the resumed file).
    pub checkpoint: Option<&'a Path>,
}

/// Refuse (bad input, exit 2, naming the option) outputs that would destroy something before the
/// run starts rather than after it ends: two outputs on one file (`--output`, `--json-out`,
/// `--checkpoint`: each would overwrite the other, and the checkpoint the run says to resume
/// from would be gone), and an output on one of the run's inputs (the config, `faults.file`,
/// `topology.file`, the checkpoint resumed from; checkpoints may go on to the file resumed from).
pub fn check_paths(cfg: &Config, paths: RunPaths<'_>, outputs: &RunOutputs) -> Result<(), ConfigError> {
    let outs: Vec<(&str, &Path)> = [
        ("--output", outputs.h5.as_deref()),
        ("--json-out", outputs.json.as_deref()),
        ("--checkpoint", paths.checkpoint),
    ]
    .into_iter()
    .filter_map(|(k, p)| Some((k, p?)))
    .collect();
    let mut ins: Vec<(String, &Path)> = Vec::new();
    if let Some(c) = paths.config {
        ins.push(("the config file".into(), c));
    }
    if let Some(r) = paths.resume {
        ins.push(("the checkpoint resumed from (--resume)".into(), r));
    }
    let files = cfg.input_files();
    for (key, f) in &files {
        ins.push((format!("{key} of the config"), f.as_path()));
    }
    for (i, &(key, p)) in outs.iter().enumerate() {
        if let Some((other, _)) = outs[..i].iter().find(|(_, q)| same_file(p, q)) {
            return Err(ConfigError::value(key, p.display(), format!("a different file than {other}")));
        }
        for (what, q) in &ins {
            let resumed_checkpoint = key == "--checkpoint" && paths.resume == Some(*q);
            if !resumed_checkpoint && same_file(p, q) {
                return Err(ConfigError::value(
                    key,
                    p.display(),
                    format!("a file that is not one of the run's inputs (this is {what})"),
                ));
            }
        }
    }
    Ok(())
}

/// Exit code 1 with the I/O error reported (after the summary was printed), else `code`.
fn finish_code(io: Option<anyhow::Error>, code: u8) -> Result<u8> {
    match io {
        Some(e) => {
            note(&format!("error: {e:#}"));
            note("hxsim: the run stopped because its results could not be written; the summary above is all it kept (any existing results file was left as it was)");
            Ok(1)
        }
        None => Ok(code),
    }
}

/// Print the summary of a complete run as JSON or as a table (one process).
pub fn print_summary(cfg: &Config, s: &Summary, threads: usize, json: bool) -> Result<()> {
    print_summary_with(cfg, s, "complete", Layout { ranks: 1, threads }, json)
}

/// Print a summary as JSON or as a table. `status` is `complete` or how the run stopped
/// (`interrupted by SIGTERM at cycle N`). The JSON object holds `complete`, `status` and the
/// [`Summary`] ([`Summary::to_json`]), identical for any `layout` apart from the timing keys
/// (`wall_seconds`, `hops_per_second`, `peak_memory_bytes`); the table also shows the layout and
/// the memory per endpoint, and a note when the run did not complete.
pub fn print_summary_with(cfg: &Config, s: &Summary, status: &str, layout: Layout, json: bool) -> Result<()> {
    out(&summary_text(cfg, s, status, layout, json)?)
}

/// What [`print_summary_with`] prints.
pub fn summary_text(cfg: &Config, s: &Summary, status: &str, layout: Layout, json: bool) -> Result<String> {
    use std::fmt::Write;
    let complete = status == "complete";
    if json {
        let v = serde_json::Value::Object(s.to_json(complete, status));
        return Ok(serde_json::to_string(&v).context("serialising the summary")? + "\n");
    }
    let mut t = String::new();
    let endpoints = cfg.topology.size().1 as u64;
    writeln!(
        t,
        "{} ({}; routing {}; {}; {} ranks x {} threads)",
        cfg.name,
        sim::build_topology(cfg)?.name(),
        cfg.routing.algorithm,
        match &cfg.workload {
            Some(w) if w.kernel == "goal" =>
                format!("workload {}", w.file.as_deref().unwrap_or(Path::new("")).display()),
            Some(w) => format!("workload {}", w.kernel),
            None => format!("{} traffic", cfg.traffic.pattern),
        },
        layout.ranks,
        layout.threads
    )?;
    let mut rows: Vec<(&str, String, &str)> = vec![
        ("accepted load", format!("{:.4}", s.accepted_load), "phits/cycle/server"),
        ("average latency", format!("{:.2}", s.average_latency), "cycles"),
        ("latency p99", s.latency_p99.map_or("NaN".into(), |p| p.to_string()), "cycles"),
        ("average hops", format!("{:.3}", s.average_hops), "switch traversals/packet"),
        ("Jain index", format!("{:.4}", s.jain_index), "(injected load)"),
        ("packets delivered", format!("{}", s.packets_delivered), "in the measured window"),
        ("cycles", format!("{}", s.cycles), "simulated"),
        ("ranks", format!("{}", layout.ranks), "MPI processes"),
        ("threads", format!("{}", layout.threads), "partitions per rank"),
        ("wall time", format!("{:.3}", s.wall_seconds), "s"),
        ("speed", format!("{:.0}", s.hops_per_second), "switch traversals/s"),
        ("peak memory", format!("{:.1}", s.peak_memory_bytes as f64 / 1048576.0), "MiB (sum over ranks)"),
        ("memory/endpoint", format!("{:.0}", s.peak_memory_bytes as f64 / endpoints as f64), "bytes per server"),
    ];
    // A fixed workload's `traffic.load` has no effect: no offered-load row.
    if let Some(o) = s.offered_load {
        rows.insert(0, ("offered load", format!("{o:.4}"), "phits/cycle/server"));
    }
    for (k, v, u) in rows {
        writeln!(t, "  {k:<18} {v:>14}  {u}")?;
    }
    if let Some(c) = s.completion_cycles {
        writeln!(t, "  {:<18} {:>14}  cycles", "completion time", c)?;
    }
    if cfg.workload.is_some() {
        let cyc = |v: Option<u64>| v.map_or("-".to_string(), |c| c.to_string());
        writeln!(
            t,
            "  {:<18} {:>14}  cycles (min {}, median {})",
            "task finish max",
            cyc(s.task_finish_max),
            cyc(s.task_finish_min),
            cyc(s.task_finish_median)
        )?;
        if let Some(i) = s.cycles_per_iteration {
            writeln!(t, "  {:<18} {:>14.1}  cycles", "per iteration", i)?;
        }
        writeln!(
            t,
            "  {:<18} {:>14}  mean latency {} cycles, p99 {}",
            "messages",
            s.messages_delivered.unwrap_or(0),
            s.message_latency_mean.map_or("-".to_string(), |m| format!("{m:.1}")),
            cyc(s.message_latency_p99)
        )?;
    }
    if !s.failure_events.is_empty() {
        let rebuilt = s.failure_events.iter().filter(|e| e.rebuilt_at.is_some()).count();
        writeln!(
            t,
            "  {:<18} {:>14}  during the run ({rebuilt} rebuilds of the routing)",
            "failure events",
            s.failure_events.len()
        )?;
        writeln!(
            t,
            "  {:<18} {:>14}  packets ({} stranded after them)",
            "lost at events",
            s.packets_lost.unwrap_or(0),
            s.packets_stranded.unwrap_or(0)
        )?;
        if let (Some(again), Some(gone)) = (s.packets_retransmitted, s.packets_abandoned) {
            writeln!(t, "  {:<18} {:>14}  packets ({gone} given up)", "retransmitted", again)?;
        }
    }
    if s.routing_layers > 0 {
        writeln!(
            t,
            "  {:<18} {:>14}  {} ({:.1} MiB of tables built in {:.3} s)",
            "routing layers",
            s.routing_layers,
            if cfg.routing.algorithm == "spda" { "spanning trees" } else { "virtual layers needed" },
            s.routing_table_bytes as f64 / 1048576.0,
            s.routing_build_seconds
        )?;
    }
    if !s.vc_phits.is_empty() {
        writeln!(t, "  {:<18} {:>14}  of {} ({})", "VCs used", s.vcs_used, s.vc_phits.len(), vc_shares(&s.vc_phits))?;
    }
    if s.servers_lost > 0 {
        writeln!(
            t,
            "  note: {} servers were lost with failed switches; accepted load and Jain's index are over the live servers",
            s.servers_lost
        )?;
    }
    if s.unreachable_pairs > 0 {
        writeln!(
            t,
            "  note: faults split the network: {} ordered pairs of live servers cannot communicate, and {} packets to them were not generated (faults.unreachable = \"drop\")",
            s.unreachable_pairs, s.packets_dropped
        )?;
    }
    if !complete {
        writeln!(
            t,
            "  note: the run did not complete ({status}): the figures are over the {} cycles it simulated{}",
            s.cycles,
            if cfg.schedule().fixed { ", and the workload was not all delivered" } else { "" }
        )?;
    }
    if s.packets_delivered == 0 {
        writeln!(
            t,
            "  note: no packet was delivered in the measured window: latency, hops, Jain's index and the steady state \
             have no data (NaN)"
        )?;
    }
    if s.packets_suppressed > 0 {
        writeln!(
            t,
            "  note: {} packet generations were skipped because source queues were full (offered load above what the network accepts)",
            s.packets_suppressed
        )?;
    }
    Ok(t)
}

/// The share of switch-to-switch phits each VC carried, `"VC0 52%, VC1 48%"` (the first 16 VCs that
/// carried any; the JSON summary has them all).
fn vc_shares(vc_phits: &[u64]) -> String {
    let total: u64 = vc_phits.iter().sum();
    if total == 0 {
        return "no switch-to-switch phits in the window".into();
    }
    let used: Vec<(usize, u64)> = vc_phits.iter().copied().enumerate().filter(|&(_, p)| p > 0).collect();
    let mut parts: Vec<String> =
        used.iter().take(16).map(|&(vc, p)| format!("VC{vc} {:.1}%", 100.0 * p as f64 / total as f64)).collect();
    if used.len() > 16 {
        parts.push(format!("{} more", used.len() - 16));
    }
    format!("phits: {}", parts.join(", "))
}
