//! Results files: the HDF5 layout of a run and of a sweep, the tables and dimension scales in them,
//! the JSON record of a run, and how files are written (under a partial name, then moved into place).
//!
//! Layout of a run's file (the README has the same with examples); a sweep puts the same layout in
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
//!                    in_flight, injected_load, accepted_load, mean_latency
//! /servers/          injected_phits, accepted_phits per server (measured window)
//! /latency/          latency, packets: sparse exact histogram (each latency that occurred, cycles, and
//!                    how many packets had it); attributes total_packets, latency_sum
//! /links/            switch, port, neighbour_switch, neighbour_port, dimension, phits, utilization
//!                    per live link direction (measured window)
//! /vcs/              vc, phits, share: phits per VC on switch-to-switch links (measured window)
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

use crate::config::{Config, ConfigError};
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
