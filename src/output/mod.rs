//! Results files (HDF5) and the `hxsim run` command that writes them.
//!
//! Layout of a run's file (the README has the same with examples); a sweep puts the same layout in
//! each group `/points/NNN` and adds a table `/sweep` (see [`crate::sweep`]):
//!
//! ```text
//! /                  attributes: format = "hxsim-results", format_version, hxsim_version, git_commit,
//!                    name, config (the full config as TOML), seed, threads, ranks, sample_cycles,
//!                    start_time, host (written first, with complete = false, status = "running");
//!                    complete, status, end_time (written at the end)
//! /summary/KEY       one scalar per key of `hxsim run --json`, attributes units, description
//! /timeseries/COL    extendable 1-D datasets appended during the run, one row per sample interval:
//!                    cycle, injected_phits, accepted_phits, delivered_packets, latency_sum,
//!                    in_flight, injected_load, accepted_load, mean_latency
//! /servers/          injected_phits, accepted_phits per server (measured window)
//! /latency/          bin_edges, counts: 1-cycle latency histogram from min to max observed
//! /links/            switch, port, neighbour_switch, neighbour_port, dimension, phits, utilization
//!                    per live link direction (measured window)
//! ```
//!
//! The file is created before the run starts and is readable while it runs (no lock is taken; rows
//! are flushed at most every [`FLUSH_EVERY`]). SIGINT or SIGTERM stops the run at the next window
//! boundary; the results gathered so far are written, the file keeps `complete = false`, and the
//! process exits with 128 + the signal number. A second signal exits at once.

pub mod dims;
pub mod facts;
pub mod hdf5;
pub mod table;

use crate::cli;
use crate::config::{Config, ConfigError};
use crate::engine::{Progress, World};
use crate::sim::{Layout, RunOptions, SimError};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Git commit the binary was built from (`unknown` outside a git checkout); see [`crate::build_info`].
pub use crate::build_info::GIT_COMMIT;

/// Facts about the network of a config (see [`facts`]).
pub fn network_facts(cfg: &Config) -> facts::NetworkFacts {
    facts::of(cfg)
}

/// Longest time the time-series rows on disk lag behind the simulation.
pub const FLUSH_EVERY: Duration = Duration::from_millis(200);

/// Directory of default output files.
pub const RESULTS_DIR: &str = "results";

/// `2026-11-22T09:59:00Z`.
pub fn iso8601_utc(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// `20261122-095900` (UTC), for file names.
pub fn compact_utc(t: SystemTime) -> String {
    iso8601_utc(t).replace(['-', ':', 'Z'], "").replace('T', "-")
}

/// This machine's host name, or `unknown`.
pub fn hostname() -> String {
    gethostname::gethostname().into_string().unwrap_or_else(|_| "unknown".into())
}

/// `results/<name>-<timestamp><suffix>.h5`, with `-2`, `-3`, ... added if that file exists.
pub fn default_path(name: &str, suffix: &str) -> PathBuf {
    let stamp = compact_utc(SystemTime::now());
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    let mut p = Path::new(RESULTS_DIR).join(format!("{safe}-{stamp}{suffix}.h5"));
    let mut k = 2;
    while p.exists() {
        p = Path::new(RESULTS_DIR).join(format!("{safe}-{stamp}{suffix}-{k}.h5"));
        k += 1;
    }
    p
}

/// Make sure the directory of `path` exists; a path that cannot be written is bad input (exit 2).
pub fn prepare_path(path: &Path) -> Result<(), ConfigError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            ConfigError::value("--output", path.display(), format!("a path in a writable directory: {e}"))
        })?;
    }
    if path.is_dir() {
        return Err(ConfigError::value("--output", path.display(), "a file path, not a directory"));
    }
    Ok(())
}

/// Stops a run (through [`Progress::stop`]) on SIGINT or SIGTERM, and exits at once on a second one.
/// Dropping it stops listening.
pub struct StopOnSignal {
    handle: signal_hook::iterator::Handle,
    thread: Option<std::thread::JoinHandle<()>>,
    caught: Arc<AtomicI32>,
}

impl StopOnSignal {
    /// Listen for SIGINT and SIGTERM on a background thread.
    pub fn install(progress: Arc<Progress>) -> Result<Self> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let mut signals =
            signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).context("installing signal handlers")?;
        let handle = signals.handle();
        let caught = Arc::new(AtomicI32::new(0));
        let c = caught.clone();
        let thread = std::thread::spawn(move || {
            for sig in signals.forever() {
                let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
                if c.swap(sig, Ordering::SeqCst) == 0 {
                    progress.stop.store(1, Ordering::SeqCst);
                    eprintln!(
                        "hxsim: {name} received: stopping at the next window and writing what was gathered \
                         (send it again to exit at once)"
                    );
                } else {
                    eprintln!("hxsim: second {name}: exiting now");
                    std::process::exit(128 + sig);
                }
            }
        });
        Ok(StopOnSignal { handle, thread: Some(thread), caught })
    }

    /// The signal that stopped the run, if any.
    pub fn caught(&self) -> Option<i32> {
        match self.caught.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }
}

impl Drop for StopOnSignal {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Name of a signal number, for statuses.
pub fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        s => format!("signal {s}"),
    }
}

/// `hxsim run`: simulate, print the summary, and (unless `output` is `None`) write the results file,
/// streaming the time series while the run goes on. Returns the exit code: 0 when complete,
/// 128 + signal when stopped by a signal.
pub fn run_command(cfg: &Config, threads: usize, json: bool, quiet: bool, output: Option<&Path>) -> Result<u8> {
    // One process, or every rank of the MPI world this process was started into: rank 0 prints and
    // writes the one results file; the other ranks simulate their partitions and stay silent.
    let world = World::from_env()?;
    let (ranks, root) = (world.size(), world.is_root());
    let layout = Layout { ranks, threads };
    let progress = Arc::new(Progress::default());
    let signals = StopOnSignal::install(progress.clone())?;
    let opts = RunOptions { threads };
    let Some(path) = output.filter(|_| root) else {
        let res = match cli::run_with_progress_on(&world, cfg, &opts, quiet, progress, None) {
            Ok(Some(res)) => res,
            Ok(None) => return Ok(0),
            // Rank 0 reports errors for everybody.
            Err(e) if !root => return Ok(cli::exit_code(&e.into())),
            Err(e) => return Err(e.into()),
        };
        cli::print_summary_with(cfg, &res.summary, layout, json)?;
        return Ok(exit_status(res.complete, signals.caught()));
    };
    prepare_path(path)?;
    let file = hdf5::create_file(path)?;
    hdf5::write_header(&file, cfg, &hdf5::RunMeta { ranks, ..hdf5::RunMeta::now(threads) })?;
    let mut ts = hdf5::Timeseries::create(&file, cfg)?;
    file.flush()?;
    let (result, streamed) = if ranks == 1 {
        let (tx, rx) = crossbeam::channel::unbounded();
        std::thread::scope(|s| {
            let writer = s.spawn(|| hdf5::stream_timeseries(rx, threads as u32, &mut ts, &file, FLUSH_EVERY));
            let result = cli::run_with_progress_observed(cfg, &opts, quiet, progress, Some(tx));
            let streamed = writer.join().unwrap_or_else(|_| Err(anyhow::anyhow!("the time-series writer panicked")));
            (result, streamed)
        })
    } else {
        // Other ranks' partitions cannot stream into this process: the merged time series gathered
        // at the end is written by `write_results` below.
        let result = cli::run_with_progress_on(&world, cfg, &opts, quiet, progress, None)
            .map(|r| r.expect("rank 0 gets the merged result"));
        (result, Ok(()))
    };
    let res = match result {
        Ok(res) => res,
        Err(e @ SimError::Config(_)) => {
            // Bad input found while building the model: nothing ran, so leave no file behind.
            drop(ts);
            drop(file);
            let _ = std::fs::remove_file(path);
            return Err(e.into());
        }
        Err(e) => {
            hdf5::set_str_attr(&file, "error", &e.to_string())?;
            hdf5::finish(&file, false, &format!("failed: {e}"))?;
            file.flush()?;
            eprintln!("hxsim: partial results written to {}", path.display());
            return Err(e.into());
        }
    };
    streamed.with_context(|| format!("writing the time series to {}", path.display()))?;
    let writing = std::time::Instant::now();
    hdf5::write_results(&file, cfg, &res, &mut ts)?;
    let status = match (res.complete, signals.caught()) {
        (true, _) => "complete".to_string(),
        (false, Some(sig)) => format!("interrupted by {} at cycle {}", signal_name(sig), res.summary.cycles),
        (false, None) => format!("interrupted at cycle {}", res.summary.cycles),
    };
    hdf5::finish(&file, res.complete, &status)?;
    file.flush()?;
    drop(file);
    let w = writing.elapsed().as_secs_f64();
    tracing::info!(
        "wrote {} in {w:.4} s ({:.2}% of the simulation's {:.3} s)",
        path.display(),
        100.0 * w / res.summary.wall_seconds.max(1e-9),
        res.summary.wall_seconds
    );
    cli::print_summary_with(cfg, &res.summary, layout, json)?;
    if json {
        eprintln!("results: {}", path.display());
    } else {
        println!("  {:<18} {}", "results", path.display());
    }
    Ok(exit_status(res.complete, signals.caught()))
}

/// 0 for a complete run, 128 + signal for one stopped by a signal, 1 otherwise.
pub fn exit_status(complete: bool, signal: Option<i32>) -> u8 {
    match (complete, signal) {
        (true, _) => 0,
        (false, Some(s)) => (128 + s) as u8,
        (false, None) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn utc_formatting() {
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3661); // 2000-02-29 01:01:01
        assert_eq!(iso8601_utc(t), "2000-02-29T01:01:01Z");
        assert_eq!(compact_utc(t), "20000229-010101");
        assert_eq!(iso8601_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_798_761_599); // 2026-12-31 23:59:59
        assert_eq!(iso8601_utc(t), "2026-12-31T23:59:59Z");
    }
}
