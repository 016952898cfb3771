//! Results files: the HDF5 layout of a run and of a sweep, the tables and dimension scales in them,
//! and the JSON record of a run. Files are written under a partial name and moved into place at the
//! end ([`crate::staged`]).
//!
//! Layout of a run's file (docs/output.md has the same with examples); a sweep puts the same layout in
//! each group `/points/NNN` and adds a table `/sweep` (see [`crate::commands::sweep`]):
//!
//! ```text
//! /                  attributes: format = "hxsim-results", format_version, hxsim_version, git_commit,
//!                    name, config (the full config as TOML), seed, threads, ranks, sample_cycles,
//!                    start_time, host (written first, with complete = false, status = "running");
//!                    complete, status, end_time (written at the end)
//! /summary/KEY       one scalar per key of `hxsim run --json`, attributes units, description
//! /timeseries/COL    extendable 1-D datasets appended during the run (a sweep point's are written
//!                    whole when it ends), one row per sample interval:
//!                    cycle, injected_phits, accepted_phits, delivered_packets, latency_sum,
//!                    in_flight, injected_load, accepted_load, mean_latency, lost_packets
//! /servers/          injected_phits, accepted_phits per server (measured window)
//! /latency/          latency, packets: sparse exact histogram (each latency that occurred, cycles, and
//!                    how many packets had it); attributes total_packets, latency_sum
//! /links/            switch, port, neighbour_switch, neighbour_port, dimension, phits, utilization
//!                    per live link direction (measured window)
//! /vcs/              vc, phits, share: phits per VC on switch-to-switch links (measured window)
//! /events/           [[faults.events]] only: per event, cycle, links, switches, repaired_links,
//!                    repaired_switches, packets_lost,
//!                    rebuilt_at, rebuild_seconds, accepted_before, recovery_cycles
//! ```
//!
//! Arrays of [`hdf5::FILTER_MIN_BYTES`] or more are deflated, smaller ones stored compact (see
//! [`hdf5::column`]).
//!
//! The file is created before the run starts and is readable while it runs (no lock is taken; rows
//! are flushed at most every [`FLUSH_EVERY`]); the command that fills it is [`crate::commands::run`].

pub mod dims;
pub mod facts;
mod ffi;
pub mod hdf5;
pub mod table;

use crate::config::Config;
use std::path::{Path, PathBuf};
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

/// This machine's host name, or `unknown`.
pub fn hostname() -> String {
    gethostname::gethostname().into_string().unwrap_or_else(|_| "unknown".into())
}

/// `results/<name>-<timestamp><suffix>.h5`, with `-2`, `-3`, ... added if that file exists.
pub fn default_path(name: &str, suffix: &str) -> PathBuf {
    let stamp = crate::timestamp::compact_utc(SystemTime::now());
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
