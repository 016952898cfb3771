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

/// The name a file is written under until it is complete: `FILE.partial`, in the same directory (so
/// that the final rename is atomic and never crosses file systems).
pub fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".partial");
    path.with_file_name(name)
}

/// An output file written under [`partial_path`] and renamed over its final path only by
/// [`Staged::commit`]: until then an existing file at the final path is never touched, and a run
/// that fails or is dropped removes its partial file. Readers holding the old file keep reading the
/// old file (a rename replaces the name, not the contents under their feet).
#[derive(Debug)]
pub struct Staged {
    dest: PathBuf,
    tmp: PathBuf,
    keep: bool,
}

impl Staged {
    /// Check that `dest` can be written (its directory is created; the partial file is created
    /// empty), or say why (bad input, exit 2).
    pub fn new(dest: &Path) -> Result<Self, ConfigError> {
        prepare_path(dest)?;
        let tmp = partial_path(dest);
        std::fs::File::create(&tmp).map_err(|e| {
            ConfigError::value("--output", dest.display(), format!("a path in a writable directory: {e}"))
        })?;
        Ok(Staged { dest: dest.to_path_buf(), tmp, keep: false })
    }

    /// Where to write now.
    pub fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// The final path.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Move the finished file into place (atomically replacing any file there).
    pub fn commit(mut self) -> std::io::Result<()> {
        self.keep = true;
        std::fs::rename(&self.tmp, &self.dest)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Write `bytes` to `path` atomically: a partial file in the same directory, synced, then renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = partial_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Value of [`Progress::stop`] that stops a run because its output failed (a signal stores 1).
pub const STOP_IO_ERROR: u64 = 2;

/// Stops a run (through [`Progress::stop`]) on SIGINT or SIGTERM, and exits at once on a second one,
/// or on the first one while the model is still being built (nothing simulated yet, so nothing to
/// save: setup of a large faulty network can take longer than Slurm's grace period). Before exiting
/// it removes the partial file registered with [`StopOnSignal::discard_on_exit`]. Dropping it stops
/// listening.
pub struct StopOnSignal {
    handle: signal_hook::iterator::Handle,
    thread: Option<std::thread::JoinHandle<()>>,
    caught: Arc<AtomicI32>,
    partial: Arc<std::sync::Mutex<Option<PathBuf>>>,
}

/// Print a line on stderr, ignoring a closed stderr (a message must never turn into a panic).
pub fn note(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{msg}");
}

impl StopOnSignal {
    /// Listen for SIGINT and SIGTERM on a background thread.
    pub fn install(progress: Arc<Progress>) -> Result<Self> {
        use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR1};
        // SIGUSR1 too: Slurm's `--signal=USR1@SECONDS` warns a job before its time limit, and a run
        // with `--checkpoint` then saves its state at the next window and stops.
        let mut signals =
            signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGUSR1]).context("installing signal handlers")?;
        let handle = signals.handle();
        let caught = Arc::new(AtomicI32::new(0));
        let partial: Arc<std::sync::Mutex<Option<PathBuf>>> = Arc::default();
        let (c, part) = (caught.clone(), partial.clone());
        let thread = std::thread::spawn(move || {
            for sig in signals.forever() {
                let name = signal_name(sig);
                let first = c.swap(sig, Ordering::SeqCst) == 0;
                // No window finished yet: the model is still being built (or the first window runs).
                let setup = progress.cycle.load(Ordering::SeqCst) == 0;
                if first && !setup {
                    progress.stop.store(1, Ordering::SeqCst);
                    note(&format!(
                        "hxsim: {name} received: stopping at the next window and writing what was gathered \
                         (send it again to exit at once)"
                    ));
                    continue;
                }
                let left = part.lock().ok().and_then(|mut p| p.take());
                if let Some(p) = &left {
                    let _ = std::fs::remove_file(p);
                }
                note(&format!(
                    "hxsim: {}{name}: exiting now{}",
                    if first { "" } else { "second " },
                    match (&left, setup) {
                        (_, true) =>
                            " (nothing simulated yet; no results file written, any existing file left as it was)",
                        (Some(_), false) =>
                            " (the unfinished results file was removed; any existing file left as it was)",
                        (None, false) => "",
                    }
                ));
                std::process::exit(128 + sig);
            }
        });
        Ok(StopOnSignal { handle, thread: Some(thread), caught, partial })
    }

    /// Remove `path` if the process has to exit at once (setup or a second signal).
    pub fn discard_on_exit(&self, path: Option<&Path>) {
        if let Ok(mut p) = self.partial.lock() {
            *p = path.map(Path::to_path_buf);
        }
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
        libc::SIGUSR1 => "SIGUSR1".into(),
        s => format!("signal {s}"),
    }
}

/// Where `hxsim run` writes besides stdout.
#[derive(Debug, Default, Clone)]
pub struct RunOutputs {
    /// The HDF5 results file (`None`: `--no-output`).
    pub h5: Option<PathBuf>,
    /// `--json-out`: the JSON record of the run (see [`json_record`]).
    pub json: Option<PathBuf>,
}

/// The JSON record `--json-out` writes: what identifies the run (`name`, `seed`, `complete`,
/// `status`), the summary's keys, and the full config, so that `hxsim merge` can tell points apart
/// and find the ones that did not complete.
pub fn json_record(cfg: &Config, summary: &crate::metrics::Summary, complete: bool, status: &str) -> String {
    let mut m = serde_json::Map::new();
    m.insert("name".into(), cfg.name.clone().into());
    m.insert("seed".into(), cfg.seed.into());
    m.insert("complete".into(), complete.into());
    m.insert("status".into(), status.into());
    if let Ok(serde_json::Value::Object(s)) = serde_json::to_value(summary) {
        m.extend(s);
    }
    m.insert("config".into(), serde_json::to_value(cfg).unwrap_or_default());
    serde_json::Value::Object(m).to_string() + "\n"
}

/// `hxsim run`: simulate, print the summary, and (unless `outputs.h5` is `None`) write the results
/// file, streaming the time series while the run goes on. Files are written under
/// [`partial_path`] and moved into place at the end, so an existing file is replaced only by a
/// finished (or validly interrupted) one. Returns the exit code: 0 when complete, 128 + signal when
/// stopped by a signal, 1 (with the summary printed anyway) when an output could not be written.
pub fn run_command(cfg: &Config, threads: usize, json: bool, quiet: bool, outputs: &RunOutputs) -> Result<u8> {
    // One process, or every rank of the MPI world this process was started into: rank 0 prints and
    // writes the one results file; the other ranks simulate their partitions and stay silent.
    let world = World::from_env()?;
    let (ranks, root) = (world.size(), world.is_root());
    let layout = Layout { ranks, threads };
    let progress = Arc::new(Progress::default());
    let signals = StopOnSignal::install(progress.clone())?;
    let opts = RunOptions { threads };
    if root {
        warn_threads(threads);
    }
    // Checked before anything runs: a path that cannot be written is bad input.
    let staged_json = match outputs.json.as_deref().filter(|_| root) {
        Some(p) => {
            let s = Staged::new(p)?;
            if outputs.h5.as_deref().is_some_and(|h| same_file(h, p)) {
                return Err(ConfigError::value("--json-out", p.display(), "a different file than --output").into());
            }
            Some(s)
        }
        None => None,
    };
    let Some(path) = outputs.h5.as_deref().filter(|_| root) else {
        let res = match cli::run_with_progress_on(&world, cfg, &opts, quiet, progress, None) {
            Ok(Some(res)) => res,
            Ok(None) => return Ok(0),
            // Rank 0 reports errors for everybody.
            Err(e) if !root => return Ok(cli::exit_code(&e.into())),
            Err(e) => return Err(e.into()),
        };
        let status = status_of(&res, signals.caught());
        let io = staged_json.map(|s| commit_json(s, cfg, &res, &status)).transpose().err();
        cli::print_summary_with(cfg, &res.summary, layout, json)?;
        return finish_code(io, exit_status(res.complete, signals.caught()));
    };
    let staged = Staged::new(path)?;
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
            let result = cli::run_with_progress_on(&world, cfg, &opts, quiet, progress.clone(), Some(tx))
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
        hdf5::write_results(&file, cfg, &res, &mut ts)?;
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
    cli::print_summary_with(cfg, &res.summary, layout, json)?;
    if io.is_none() {
        if json {
            note(&format!("results: {}", path.display()));
        } else {
            cli::out(&format!("  {:<18} {}\n", "results", path.display()))?;
        }
    }
    finish_code(io, exit_status(res.complete, signals.caught()))
}

/// Whether `a` and `b` name the same file (or would: same absolute path before either exists).
pub fn same_file(a: &Path, b: &Path) -> bool {
    let abs = |p: &Path| {
        let p = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        match (p.parent().and_then(|d| d.canonicalize().ok()), p.file_name()) {
            (Some(d), Some(n)) => d.join(n),
            _ => p,
        }
    };
    abs(a) == abs(b)
}

fn status_of(res: &crate::sim::RunResult, caught: Option<i32>) -> String {
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
        let mut f = std::fs::File::create(s.tmp())?;
        f.write_all(json_record(cfg, &res.summary, res.complete, status).as_bytes())?;
        f.sync_all()?;
        s.commit()
    })()
    .with_context(|| format!("writing the JSON summary to {}", dest.display()))
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

/// Warn when more threads than cores are asked for: each partition spins at window ends, so
/// oversubscribed threads wait for each other's time slices (a run can be 100x slower).
pub fn warn_threads(threads: usize) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads > cores {
        note(&format!(
            "warning: --threads {threads} is more than the {cores} cores this process may use; partitions wait \
             for each other at every window, so the run will be much slower than with --threads {cores} (results \
             are the same)"
        ));
    }
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
