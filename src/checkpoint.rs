//! Checkpoint and restart of `hxsim run` (`--checkpoint FILE --checkpoint-every CYCLES`,
//! `--resume FILE`).
//!
//! **When.** Only at window ends, after the window's exchange: every message that crossed a cut is
//! then in its receiver's timing wheel, so nothing is between partitions. The engine stops every
//! partition at the first window end at or after the next multiple of `--checkpoint-every`
//! ([`crate::engine::Outcome::Paused`]) or at the window where a signal stopped the run (SIGTERM,
//! SIGINT, SIGUSR1); each partition parks its pending messages and the cycle the next window starts
//! at (see [`crate::engine::Partition::park`]); the file is written and the run goes on in a fresh
//! engine call from that cycle (or, after a signal, ends as an interrupted run does).
//!
//! **What.** The config (JSON, with its hash), the binary's version, the layout (threads), the cycle,
//! and each partition's dynamic state ([`crate::network::PartitionState`]: buffers, packet slab,
//! credits, the per-switch random streams, counters, the time series, pending messages). The
//! topology, routing tables and traffic pattern are rebuilt from the config, which is deterministic.
//!
//! **Determinism.** A resumed run starts its first window exactly where the stopped run's next
//! window would have started, with the same partitions, the same wheel contents and the same random
//! stream states, so it takes the same windows and makes the same draws as a run that never
//! stopped: its results are bit-identical. The time-series streaming position is not stored: a
//! resumed run's partitions send every finished interval again from the first one (their time
//! series is in the checkpoint), so a results file written by the resumed run is complete.
//!
//! **Layout.** A checkpoint is tied to its thread count (the partitioning, and with one partition
//! the window length, depend on it): `--resume` runs with the checkpoint's threads and refuses
//! another `--threads`. Several MPI ranks are refused (exit 2) for now.
//!
//! **File.** `HXSIMCKP`, a format number, the writer's version string (checked first, so a file from
//! another version is named as such), then a bincode header and body and a 64-bit checksum over
//! both (a truncated or corrupt file is refused before anything is decoded). Written to a partial
//! file beside the destination, synced, then renamed: an existing checkpoint is replaced only by a
//! complete one.

pub use crate::cli::CheckpointArgs;
use crate::config::{Config, ConfigError};
use crate::engine::{Cycle, Outcome, RunSpec};
use crate::network::{NetPartition, PartitionState};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// Magic bytes at the start of a checkpoint.
const MAGIC: &[u8; 8] = b"HXSIMCKP";
/// Layout of the file itself; the model's layout is covered by [`binary_version`].
const FORMAT: u32 = 1;

/// The version a checkpoint must have been written by: the crate version and the git commit (the
/// partition state's layout changes with the code, and bincode is positional).
pub fn binary_version() -> String {
    format!("hxsim {} {}", crate::build_info::VERSION, crate::build_info::GIT_COMMIT)
}

/// What the checkpoint says about the run, before the partitions.
#[derive(Serialize, Deserialize)]
struct Header {
    /// The config, as JSON (exact: floats round-trip).
    config: String,
    /// [`hash`] of `config`.
    config_hash: u64,
    /// Partitions (threads) of the run.
    threads: u32,
    /// Cycle of the window end the checkpoint was taken at.
    cycle: Cycle,
    /// Checkpoint file of the saved run and its interval (0: on signals only).
    path: PathBuf,
    every: Cycle,
}

/// A checkpoint read back.
struct Loaded {
    header: Header,
    parts: Vec<PartitionState>,
}

/// What this process does about checkpoints. A process runs one `hxsim run`, so this is set once by
/// the command before the run and read by `sim` at the start of the run; a global keeps the
/// wiring into the run path to a couple of lines.
struct Plan {
    path: PathBuf,
    every: Cycle,
    resume: Option<Loaded>,
}

static PLAN: Mutex<Option<Plan>> = Mutex::new(None);

/// A 64-bit checksum (SplitMix64 over 8-byte words; not cryptographic, it detects truncation and
/// corruption).
fn hash(bytes: &[u8]) -> u64 {
    let mut h = crate::rng::mix64(bytes.len() as u64);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = crate::rng::mix64(h ^ u64::from_le_bytes(c.try_into().unwrap()));
    }
    let mut last = [0u8; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    crate::rng::mix64(h ^ u64::from_le_bytes(last))
}

fn bad(flag: &str, path: &Path, why: impl Into<String>) -> anyhow::Error {
    ConfigError::value(flag, path.display(), why).into()
}

/// Set up checkpointing for `hxsim run` and return the config and thread count to run with: the
/// config loaded from `config` with `set`, or (with `--resume`) the checkpoint's. Errors are bad
/// input (exit 2) and name the flag.
pub fn setup(args: &CheckpointArgs, config: Option<&Path>, set: &[String], threads: usize) -> Result<(Config, usize)> {
    if args.checkpoint_every == Some(0) {
        return Err(ConfigError::value("--checkpoint-every", 0, "a number of cycles, at least 1").into());
    }
    let (cfg, threads, resume) = match &args.resume {
        None => {
            let path =
                config.ok_or_else(|| ConfigError::value("CONFIG", "missing", "a config file, or --resume FILE"))?;
            (crate::config::load(path, set)?, threads, None)
        }
        Some(file) => {
            let loaded = read(file)?;
            let cfg: Config = serde_json::from_str(&loaded.header.config)
                .map_err(|e| bad("--resume", file, format!("its config cannot be read: {e}")))?;
            let saved = loaded.header.threads as usize;
            // `--threads` defaults to 1, so 1 means "not given": the checkpoint's count is used.
            if threads != saved && threads != 1 {
                return Err(ConfigError::value(
                    "--threads",
                    threads,
                    format!(
                        "{saved}, the thread count of the checkpoint {} (a checkpoint resumes with the partitioning it was taken with)",
                        file.display()
                    ),
                )
                .into());
            }
            (cfg, saved, Some(loaded))
        }
    };
    let (path, every) = match (&args.checkpoint, &resume) {
        (Some(p), _) => (Some(p.clone()), args.checkpoint_every.unwrap_or(0)),
        // The file resumed from, not the path stored in it: that may be relative to another
        // directory.
        (None, Some(l)) => (args.resume.clone(), l.header.every),
        (None, None) => (None, 0),
    };
    if let Some(p) = &path {
        if cfg.simulation.measure_until_steady && cfg.traffic.mode != "fixed" {
            return Err(ConfigError::value(
                "--checkpoint",
                p.display(),
                "not with simulation.measure_until_steady (it reruns the simulation from cycle 0)",
            )
            .into());
        }
        if let Some((var, n)) = crate::engine::launcher_ranks().filter(|r| r.1 > 1) {
            return Err(ConfigError::value(
                "--checkpoint",
                p.display(),
                format!("one process only: checkpoints of MPI runs ({var}={n} ranks) are not implemented yet"),
            )
            .into());
        }
        if p.is_dir() {
            return Err(bad("--checkpoint", p, "a file path, not a directory"));
        }
        // A checkpoint replaces only a checkpoint: any other file there is the user's.
        if p.exists() && std::fs::read(p).map_or(true, |b| !b.starts_with(MAGIC)) {
            return Err(bad("--checkpoint", p, "a new file or an hxsim checkpoint; this file exists and is not one"));
        }
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(bad(
                "--checkpoint",
                p,
                format!("a file in an existing directory ({} is not one)", dir.display()),
            ));
        }
        *PLAN.lock().unwrap() = Some(Plan { path: p.clone(), every, resume });
    } else {
        *PLAN.lock().unwrap() = None;
    }
    Ok((cfg, threads))
}

/// Called by the run (one process, `threads` partitions) before the engine starts: restores the
/// partitions from the checkpoint being resumed, sets where the run starts and the first pause.
/// Returns whether checkpointing is on. Errors: the checkpoint does not fit this model.
pub fn prepare(parts: &mut [NetPartition], spec: &mut RunSpec, ranks: usize) -> Result<bool, ConfigError> {
    let mut plan = PLAN.lock().unwrap();
    let Some(plan) = plan.as_mut() else { return Ok(false) };
    if ranks > 1 {
        return Err(ConfigError::value("--checkpoint", plan.path.display(), "one process only (MPI runs: not yet)"));
    }
    if let Some(l) = plan.resume.take() {
        if l.parts.len() != parts.len() {
            return Err(ConfigError::value("--threads", parts.len(), format!("{}, the checkpoint's", l.parts.len())));
        }
        let mut start = None;
        for (p, st) in parts.iter_mut().zip(l.parts) {
            p.restore(st).map_err(|e| ConfigError::value("--resume", "checkpoint", e))?;
            start = p.resume_at();
        }
        spec.start = start.unwrap_or(l.header.cycle);
    }
    spec.pause_at = next_pause(spec.start, plan.every);
    Ok(true)
}

/// First checkpoint cycle after `now`: the next multiple of `every` (0: never).
fn next_pause(now: Cycle, every: Cycle) -> Cycle {
    match now.checked_div(every) {
        Some(k) => (k + 1).saturating_mul(every),
        None => Cycle::MAX,
    }
}

/// Called after each engine call with the partitions and outcome: writes a checkpoint when the run
/// paused for one or was stopped by a signal. Returns `true` when the run should go on (a pause),
/// with `spec` set for the next engine call. A checkpoint that cannot be written is reported and
/// the run goes on (its results are still worth having; the previous checkpoint stays in place).
pub fn after_leg(cfg: &Config, parts: &[NetPartition], outcome: &Outcome, spec: &mut RunSpec) -> bool {
    let cycle = match outcome {
        Outcome::Paused { cycle } | Outcome::Interrupted { cycles: cycle } => *cycle,
        _ => return false,
    };
    let (path, every) = match PLAN.lock().unwrap().as_ref() {
        Some(p) => (p.path.clone(), p.every),
        None => return false,
    };
    let started = Instant::now();
    match write(&path, cfg, parts, cycle, every) {
        Ok(bytes) => tracing::info!(
            "checkpoint at cycle {cycle}: {} ({bytes} bytes in {:.3} s)",
            path.display(),
            started.elapsed().as_secs_f64()
        ),
        Err(e) => crate::console::note(&format!("error: {e:#} (the run goes on; any earlier checkpoint is kept)")),
    }
    if let Outcome::Paused { .. } = outcome {
        spec.start = parts.first().and_then(|p| p.resume_at()).unwrap_or(cycle);
        spec.pause_at = next_pause(cycle, every);
        true
    } else {
        if matches!(outcome, Outcome::Interrupted { .. }) {
            crate::console::note(&format!(
                "hxsim: checkpoint at cycle {cycle} written to {}; continue with `hxsim run --resume {}`",
                path.display(),
                path.display()
            ));
        }
        false
    }
}

/// Serialize a partition through its borrowing state (no copy).
struct Saved<'a>(&'a NetPartition);

impl Serialize for Saved<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.save_state(s)
    }
}

/// Write the checkpoint of `parts` (stopped at the window end `cycle`) to `path` atomically;
/// returns its size in bytes.
fn write(path: &Path, cfg: &Config, parts: &[NetPartition], cycle: Cycle, every: Cycle) -> Result<usize> {
    let config = serde_json::to_string(cfg).context("encoding the config")?;
    let header = Header {
        config_hash: hash(config.as_bytes()),
        config,
        threads: parts.len() as u32,
        cycle,
        path: path.to_path_buf(),
        every,
    };
    let bc = bincode::config::standard();
    let version = binary_version();
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&(version.len() as u32).to_le_bytes());
    out.extend_from_slice(version.as_bytes());
    let checked = out.len();
    let head = bincode::serde::encode_to_vec(&header, bc).context("encoding the checkpoint header")?;
    out.extend_from_slice(&(head.len() as u64).to_le_bytes());
    out.extend_from_slice(&head);
    let saved: Vec<Saved> = parts.iter().map(Saved).collect();
    bincode::serde::encode_into_std_write(&saved, &mut out, bc).context("encoding the partitions")?;
    let sum = hash(&out[checked..]);
    out.extend_from_slice(&sum.to_le_bytes());
    crate::output::write_atomic(path, &out).with_context(|| format!("writing the checkpoint {}", path.display()))?;
    Ok(out.len())
}

/// Read and check a checkpoint (exit 2 naming `--resume` for any problem).
fn read(path: &Path) -> Result<Loaded> {
    let flag = "--resume";
    let bytes = std::fs::read(path).map_err(|e| bad(flag, path, format!("a checkpoint file that can be read: {e}")))?;
    let corrupt = |what: &str| {
        bad(flag, path, format!("a complete hxsim checkpoint; this file is truncated or corrupt ({what})"))
    };
    if bytes.len() < 16 || &bytes[..8] != MAGIC {
        return Err(bad(flag, path, "an hxsim checkpoint (written by `hxsim run --checkpoint`); this file is not one"));
    }
    let format = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    let vlen = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let version = bytes.get(16..16 + vlen).ok_or_else(|| corrupt("version"))?;
    let version = String::from_utf8_lossy(version);
    if format != FORMAT || version != binary_version() {
        return Err(bad(
            flag,
            path,
            format!(
                "a checkpoint written by this binary ({}); it was written by {version} (checkpoint format {format}): \
                 resume it with that version, or start the run again",
                binary_version()
            ),
        ));
    }
    let checked = 16 + vlen;
    if bytes.len() < checked + 16 {
        return Err(corrupt("too short"));
    }
    let (data, sum) = bytes[checked..].split_at(bytes.len() - checked - 8);
    if hash(data) != u64::from_le_bytes(sum.try_into().unwrap()) {
        return Err(corrupt("checksum mismatch"));
    }
    let bc = bincode::config::standard();
    let hlen = u64::from_le_bytes(data[..8].try_into().unwrap()) as usize;
    let head = data.get(8..8 + hlen).ok_or_else(|| corrupt("header length"))?;
    let (header, _): (Header, usize) = bincode::serde::decode_from_slice(head, bc).map_err(|_| corrupt("header"))?;
    if hash(header.config.as_bytes()) != header.config_hash {
        return Err(corrupt("config hash"));
    }
    let (parts, used): (Vec<PartitionState>, usize) =
        bincode::serde::decode_from_slice(&data[8 + hlen..], bc).map_err(|e| corrupt(&format!("partitions: {e}")))?;
    if 8 + hlen + used != data.len() {
        return Err(corrupt("trailing bytes"));
    }
    Ok(Loaded { header, parts })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_at_multiples() {
        assert_eq!(next_pause(0, 100), 100);
        assert_eq!(next_pause(100, 100), 200);
        assert_eq!(next_pause(164, 100), 200);
        assert_eq!(next_pause(5, 0), Cycle::MAX);
    }

    #[test]
    fn checksum_sees_truncation_and_flips() {
        let a = b"0123456789abcdefXYZ".to_vec();
        assert_ne!(hash(&a), hash(&a[..18]));
        let mut b = a.clone();
        b[17] ^= 1;
        assert_ne!(hash(&a), hash(&b));
        assert_eq!(hash(&a), hash(&a.clone()));
    }
}
