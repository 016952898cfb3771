//! Stopping a run on SIGINT or SIGTERM: the first signal stops it at the next window boundary so
//! that the results gathered so far are written (the file keeps `complete = false`), a second one (or
//! one during setup) exits at once with 128 + the signal number.

use crate::console::note;
use crate::engine::Progress;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

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

/// 0 for a complete run, 128 + signal for one stopped by a signal, 1 otherwise.
pub fn exit_status(complete: bool, signal: Option<i32>) -> u8 {
    match (complete, signal) {
        (true, _) => 0,
        (false, Some(s)) => (128 + s) as u8,
        (false, None) => 1,
    }
}
