//! What each `hxsim` subcommand does, one module per subcommand: `main.rs` parses the command line
//! with [`crate::cli`] and calls the subcommand's `run` here. A command prints its results, writes
//! its files and returns the process's exit code; an error it returns becomes one through
//! [`exit_code`]. Where a command computes something worth testing on its own (the analysis of
//! `hxsim analyze`, the partition report), its module exposes that too. The model, the analyses'
//! building blocks and the file formats live in the library's other modules; [`progress`] is the
//! progress display `run` and `sweep` share.

pub mod analyze;
pub mod check_deadlock;
pub mod completions;
pub mod design;
pub mod design_hyperz;
pub mod docs;
pub mod faults;
pub mod merge;
pub mod partition;
pub mod plot;
pub mod progress;
pub mod run;
pub mod sweep;
pub mod workload;

use crate::config::{self, Config, ConfigError};
use crate::console::note;
use crate::engine::LaunchError;
use crate::sim::SimError;
use anyhow::Result;
use std::path::Path;

/// Exit code for an error: 2 for bad input, 3 for a failed simulation (or, for `merge`, points that
/// did not complete), 1 otherwise (I/O failures).
pub fn exit_code(e: &anyhow::Error) -> u8 {
    if e.downcast_ref::<ConfigError>().is_some() {
        return 2;
    }
    if let Some(s) = e.downcast_ref::<SimError>() {
        return s.exit_code() as u8;
    }
    if e.downcast_ref::<LaunchError>().is_some() || e.downcast_ref::<crate::workload::WorkloadError>().is_some() {
        return 2;
    }
    if let Some(m) = e.downcast_ref::<crate::merge::MergeError>() {
        return m.exit_code();
    }
    1
}

/// Load and validate a config with `--set` overrides.
pub fn load_config(path: &Path, set: &[String]) -> Result<Config> {
    Ok(config::load(path, set)?)
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
