//! Checkpoint and restart of `hxsim run` (`--checkpoint FILE --checkpoint-every CYCLES`,
//! `--resume FILE`), with any number of threads and MPI ranks.
//!
//! **When.** Only at window ends, after the window's exchange: every message that crossed a cut is
//! then in its receiver's timing wheel, so nothing is between partitions or ranks. The engine stops
//! every partition of every rank at the first window end at or after the next multiple of
//! `--checkpoint-every` ([`crate::engine::Outcome::Paused`]) or at the window where a signal stopped
//! the run (SIGTERM, SIGINT, SIGUSR1); each partition parks its pending messages and the cycle the
//! next window starts at (see [`crate::engine::Partition::park`]); the file is written and the run
//! goes on in a fresh engine call from that cycle (or, after a signal, ends as an interrupted run
//! does).
//!
//! **What.** The config (JSON, with its hash), the binary's version, the cycle the run resumes at,
//! the network-wide sums ([`GlobalState`]: statistics and time series, packets in flight) and one
//! record per switch ([`SwitchState`]: buffers with their packets, credits, pointers, servers, the
//! switch's random streams, its counters and the messages pending for it). That form does not
//! depend on the partitioning (see `crate::network::state`), so **a checkpoint resumes with any
//! thread count and any rank count**: the switch records are dealt to the new partitions by the
//! new partitioning, and the sums go to partition 0 of rank 0. The topology, routing tables and
//! traffic pattern are rebuilt from the config, which is deterministic.
//!
//! **Determinism.** A resumed run starts its first window exactly where the stopped run's next
//! window would have started, with every switch in the same state and every pending message
//! scheduled for the same cycle, so it makes the same draws as a run that never stopped; results do
//! not depend on where windows end (nor, therefore, on the thread or rank count), so they are
//! bit-identical. The time-series streaming position is not stored: a resumed run sends every
//! finished interval again from the first one (the time series is in the checkpoint), so a results
//! file written by the resumed run is complete.
//!
//! **MPI.** One file, written by rank 0: the other ranks send their switch records to it in
//! chunks of a few MiB ([`World::gather_to_root`], one round per chunk), so no process ever holds
//! more than a chunk per rank, and the file is replaced by a single rename, atomically, as with one
//! process (a file per rank in a shared directory would need a second step to make a set of files
//! current together, and would tie the checkpoint to the rank count). Every rank reads the file
//! when resuming (it must be on a file system all ranks see, as the results are) and keeps the
//! records of its own switches.
//!
//! **File.** `HXSIMCKP`, a format number, the writer's version string (checked first, so a file from
//! another version is named as such), then length-prefixed bincode records (header, sums, one per
//! switch) and a 64-bit checksum over them, computed while they are written. The file is streamed
//! to a partial file beside the destination (never built in memory), synced, then renamed: an
//! existing checkpoint is replaced only by a complete one. A reader checks the checksum over the
//! whole file before decoding anything, so a truncated or corrupt file is refused (exit 2).

use crate::config::{Config, ConfigError};
use crate::engine::{Cycle, Outcome, RunSpec, World};
use crate::network::{GlobalState, NetPartition, SwitchState};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Magic bytes at the start of a checkpoint.
const MAGIC: &[u8; 8] = b"HXSIMCKP";
/// Layout of the file itself; the model's layout is covered by [`binary_version`]. Format 1 held
/// one record per partition and could only resume with the same partitioning.
const FORMAT: u32 = 2;
/// Bytes of switch records a rank sends to rank 0 at a time.
const CHUNK_BYTES: usize = 4 << 20;

/// The version a checkpoint must have been written by: the crate version and the git commit (the
/// state's layout changes with the code, and bincode is positional).
pub fn binary_version() -> String {
    format!("hxsim {} {}", crate::build_info::VERSION, crate::build_info::GIT_COMMIT)
}

/// What the checkpoint says about the run, before the state.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Header {
    /// The config, as JSON (exact: floats round-trip).
    config: String,
    /// [`Checksum`] of `config`.
    config_hash: u64,
    /// Ranks and threads per rank of the run that wrote it (a resume may use others).
    ranks: u32,
    threads: u32,
    /// Cycle of the window end the checkpoint was taken at.
    cycle: Cycle,
    /// Cycle the next window starts at (after any jump over idle cycles).
    resume_at: Cycle,
    /// Switch records that follow the sums: every switch of the network, once.
    switches: u64,
    /// Checkpoint file of the saved run and its interval (0: on signals only).
    path: PathBuf,
    every: Cycle,
}

/// What the user asked of checkpoints (`hxsim run --checkpoint FILE --checkpoint-every CYCLES
/// --resume FILE`), before it is checked by [`setup`].
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// `--checkpoint`: where to write checkpoints.
    pub checkpoint: Option<PathBuf>,
    /// `--checkpoint-every`: cycles between checkpoints (none: on signals only).
    pub every: Option<u64>,
    /// `--resume`: the checkpoint to continue from.
    pub resume: Option<PathBuf>,
}

/// What a run does about checkpoints, checked by [`setup`] (or made by [`Saved::plan`]) and
/// carried to the run in [`crate::sim::RunOptions::checkpoint`]: where to write them (none for a
/// run resumed under other failure events, see [`Saved`]), how often, and the checkpoint to resume
/// from.
#[derive(Debug, Clone)]
pub struct Plan {
    path: Option<PathBuf>,
    every: Cycle,
    /// The checkpoint to resume from (checked), its header, and the flag that named it (for
    /// errors: `--resume`, `--from`).
    resume: Option<(PathBuf, Header, &'static str)>,
}

/// A streaming 64-bit checksum (SplitMix64 over 8-byte little-endian words, then the length; not
/// cryptographic, it detects truncation and corruption).
#[derive(Clone)]
struct Checksum {
    h: u64,
    len: u64,
    buf: [u8; 8],
    n: usize,
}

impl Checksum {
    fn new() -> Self {
        Checksum { h: crate::rng::mix64(FORMAT as u64), len: 0, buf: [0; 8], n: 0 }
    }
    fn word(&mut self, w: u64) {
        self.h = crate::rng::mix64(self.h ^ w);
    }
    fn update(&mut self, mut data: &[u8]) {
        self.len += data.len() as u64;
        if self.n > 0 {
            let take = (8 - self.n).min(data.len());
            self.buf[self.n..self.n + take].copy_from_slice(&data[..take]);
            self.n += take;
            data = &data[take..];
            if self.n < 8 {
                return;
            }
            self.word(u64::from_le_bytes(self.buf));
            self.n = 0;
        }
        let mut chunks = data.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rem = chunks.remainder();
        self.buf[..rem.len()].copy_from_slice(rem);
        self.n = rem.len();
    }
    fn finish(&self) -> u64 {
        let mut last = [0u8; 8];
        last[..self.n].copy_from_slice(&self.buf[..self.n]);
        crate::rng::mix64(crate::rng::mix64(self.h ^ u64::from_le_bytes(last)) ^ self.len)
    }
    fn of(bytes: &[u8]) -> u64 {
        let mut c = Checksum::new();
        c.update(bytes);
        c.finish()
    }
}

/// A writer that checksums what goes through it.
struct Summed<W> {
    inner: W,
    sum: Checksum,
}

impl<W: Write> Write for Summed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sum.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn bad(flag: &str, path: &Path, why: impl Into<String>) -> anyhow::Error {
    ConfigError::value(flag, path.display(), why).into()
}

/// Check the checkpoint options of `hxsim run` and return the config and thread count to run with,
/// and the checkpoint plan (`None`: no checkpoints): the config loaded from `config` with `set`, or
/// (with `--resume`) the checkpoint's with `set` applied and checked by [`Saved::check`];
/// `threads` as given, else the checkpoint's when resuming, else 1. A resumed run goes on
/// checkpointing to the file it resumed (at the saved interval) unless `--checkpoint` says
/// otherwise, or `set` is given: that run is another scenario, whose checkpoints must not replace
/// the saved state others start from. Errors are bad input (exit 2) and name the flag or key.
pub fn setup(
    args: &Request,
    config: Option<&Path>,
    set: &[String],
    threads: Option<usize>,
    vcs_of: VcsOf,
) -> Result<(Config, usize, Option<Plan>)> {
    if args.every == Some(0) {
        return Err(ConfigError::value("--checkpoint-every", 0, "a number of cycles, at least 1").into());
    }
    let (cfg, threads, resume) = match &args.resume {
        None => {
            let path =
                config.ok_or_else(|| ConfigError::value("CONFIG", "missing", "a config file, or --resume FILE"))?;
            (crate::config::load(path, set)?, threads.unwrap_or(1), None)
        }
        Some(file) => {
            let saved = Saved::open(file, "--resume")?;
            let cfg = saved.config_with(set, vcs_of)?;
            // The state is independent of the partitioning: any thread count resumes it.
            let threads = threads.unwrap_or(saved.header.threads as usize);
            (cfg, threads, Some(saved))
        }
    };
    let (path, every) = match (&args.checkpoint, &resume) {
        // A link is followed: the checkpoint replaces the file it points to, not the link.
        (Some(p), _) => (Some(crate::staged::resolve_links(p)), args.every.unwrap_or(0)),
        // The file resumed from, not the path stored in it: that may be relative to another
        // directory.
        (None, Some(s)) if set.is_empty() => (args.resume.clone(), s.header.every),
        (None, _) => (None, 0),
    };
    let resume = resume.map(|s| (s.file, s.header, "--resume"));
    if let Some(p) = &path {
        if cfg.schedule().until_steady.is_some() {
            return Err(ConfigError::value(
                "--checkpoint",
                p.display(),
                "not with simulation.measure_until_steady (it reruns the simulation from cycle 0)",
            )
            .into());
        }
        if p.is_dir() {
            return Err(bad("--checkpoint", p, "a file path, not a directory"));
        }
        // A checkpoint replaces only a checkpoint: any other file there is the user's.
        if p.exists() && !starts_with_magic(p) {
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
    }
    let plan = (path.is_some() || resume.is_some()).then_some(Plan { path, every, resume });
    Ok((cfg, threads, plan))
}

/// The VCs per port the routers of a run of a config have (`crate::sim::router_vcs`, handed in by
/// the caller: building the model is the simulation layer's, above this one).
pub type VcsOf = fn(&Config) -> Result<usize, ConfigError>;

/// The config keys that may differ between a checkpoint's config and a run resumed from it (see
/// [`Saved::check`]), as the errors and the docs list them.
pub const CHANGEABLE_KEYS: &str = "faults.events (at or after the cycle the checkpoint resumes at), \
     faults.reconfigure_cycles, faults.stranded, faults.retransmit_cycles and faults.retransmit_limit (while no \
     event came at or before that cycle), \
     simulation.measure_cycles (ending after that cycle), simulation.watchdog_cycles, partition.method, name";

/// A checkpoint opened as the starting point of other scenarios: `hxsim run --resume FILE --set
/// KEY=VALUE` and every point of `hxsim sweep --from FILE`. The saved run's config is the base the
/// overrides apply to, and [`Saved::check`] refuses a config the saved state was not made under.
pub struct Saved {
    file: PathBuf,
    flag: &'static str,
    header: Header,
    config: Config,
    /// VCs per port of the saved routers ([`crate::sim::router_vcs`] of `config`), computed once
    /// when a config with other events needs it.
    vcs: std::sync::OnceLock<usize>,
}

impl Saved {
    /// Open and check the checkpoint `file` (named `flag` in errors: exit 2 for a file that is
    /// not a complete checkpoint of this binary).
    pub fn open(file: &Path, flag: &'static str) -> Result<Saved> {
        let header = read_header(file, flag)?;
        let config: Config = serde_json::from_str(&header.config)
            .map_err(|e| bad(flag, file, format!("its config cannot be read: {e}")))?;
        Ok(Saved { file: file.to_path_buf(), flag, header, config, vcs: Default::default() })
    }

    /// The saved run's config.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The saved run's config as TOML text (the base of `--set` overrides).
    pub fn config_text(&self) -> Result<String, ConfigError> {
        toml::to_string(&self.config).map_err(|e| {
            ConfigError::value(self.flag, self.file.display(), format!("its config cannot be written: {e}"))
        })
    }

    /// The cycle a run resumed from the checkpoint starts at (the first cycle it simulates).
    pub fn resume_cycle(&self) -> Cycle {
        self.header.resume_at
    }

    /// The checkpoint file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The saved config with `overrides` (`KEY=VALUE`) applied, checked by [`Saved::check`].
    pub fn config_with(&self, overrides: &[String], vcs_of: VcsOf) -> Result<Config, ConfigError> {
        if overrides.is_empty() {
            return Ok(self.config.clone());
        }
        let origin = format!("{} {}", self.flag, self.file.display());
        let cfg = crate::config::parse_str(&self.config_text()?, &origin, overrides)?;
        self.check(&cfg, vcs_of)?;
        Ok(cfg)
    }

    /// A plan that resumes the checkpoint and writes none.
    pub fn plan(&self) -> Plan {
        Plan { path: None, every: 0, resume: Some((self.file.clone(), self.header.clone(), self.flag)) }
    }

    /// Refuse (exit 2, naming the key, the value and why) a config `cfg` that the saved state was
    /// not made under, so that a run resumed under `cfg` equals a run of `cfg` that never stopped.
    /// Only what takes effect after the cycle the checkpoint resumes at, `R`, may differ
    /// ([`CHANGEABLE_KEYS`]):
    /// - `faults.events`: the saved run's events up to `R` are in the saved state, so `cfg` has
    ///   them, the same and first; its other events come at `R` or later (an event at `R` is
    ///   applied to the restored state before cycle `R` runs, as a run that never stopped does);
    /// - `faults.reconfigure_cycles`, `faults.stranded`, `faults.retransmit_cycles`,
    ///   `faults.retransmit_limit`: only while no event came before `R` (the rebuilds, stranded
    ///   and resent packets of earlier events are in the state);
    /// - `simulation.measure_cycles`: while the window ends after `R` (cycles after it are not
    ///   simulated yet; the window's counters so far are in the state);
    /// - `simulation.watchdog_cycles`, `partition.method` (results do not depend on the
    ///   partitioning), `name`.
    ///
    /// A config with other events must also need the saved routers' VCs per port
    /// ([`crate::sim::router_vcs`]: failures lengthen the routes of hop-indexed VC schemes).
    pub fn check(&self, cfg: &Config, vcs_of: VcsOf) -> Result<(), ConfigError> {
        let (saved, r) = (&self.config, self.header.resume_at);
        let mut same = saved.clone();
        same.name.clone_from(&cfg.name);
        same.partition.clone_from(&cfg.partition);
        same.simulation.measure_cycles = cfg.simulation.measure_cycles;
        same.simulation.watchdog_cycles = cfg.simulation.watchdog_cycles;
        same.faults.events.clone_from(&cfg.faults.events);
        same.faults.reconfigure_cycles = cfg.faults.reconfigure_cycles;
        same.faults.stranded.clone_from(&cfg.faults.stranded);
        same.faults.retransmit_cycles = cfg.faults.retransmit_cycles;
        same.faults.retransmit_limit = cfg.faults.retransmit_limit;
        if same != *cfg {
            let json = |c: &Config| serde_json::to_value(c).unwrap_or_default();
            let (key, theirs, ours) = first_difference(&json(saved), &json(cfg), String::new())
                .unwrap_or_else(|| ("the config".into(), "-".into(), "-".into()));
            return Err(ConfigError::value(
                &key,
                ours,
                format!(
                    "{theirs}, as in the checkpoint {}: the saved state was made under that value (only {CHANGEABLE_KEYS} \
                     may differ)",
                    self.file.display()
                ),
            ));
        }
        // Events up to R: applied in the saved state (every event at or before the cycle a run
        // resumes at is, see `crate::sim::run`). A lifetime played during the run writes its own
        // events, the same for both (`faults.lifetime` is equal).
        let played = saved.faults.lifetime.as_ref().is_some_and(|l| l.every_cycles > 0);
        let before: Vec<_> = saved.faults.events.iter().take_while(|e| e.cycle <= r).collect();
        for (k, e) in before.iter().enumerate() {
            if cfg.faults.events.get(k) != Some(e) {
                let ours = cfg.faults.events.get(k).map_or("absent".into(), event_text);
                return Err(ConfigError::value(
                    &format!("faults.events[{k}]"),
                    ours,
                    format!(
                        "the checkpoint's event {} (it came at or before cycle {r}, where the checkpoint resumes: the \
                         saved state holds its effects)",
                        event_text(e)
                    ),
                ));
            }
        }
        for (k, e) in cfg.faults.events.iter().enumerate().skip(before.len()) {
            if e.cycle < r {
                return Err(ConfigError::value(
                    &format!("faults.events[{k}].cycle"),
                    e.cycle,
                    format!(
                        "at least {r}, the cycle the checkpoint {} resumes at: the saved state was made without this \
                         event (take the checkpoint earlier, or run the whole scenario)",
                        self.file.display()
                    ),
                ));
            }
        }
        if !before.is_empty() || played {
            let why = |key: &str, ours: &dyn std::fmt::Display, theirs: &dyn std::fmt::Display| {
                ConfigError::value(
                    key,
                    ours,
                    format!("{theirs}, as in the checkpoint: failure events before cycle {r} ran under that value"),
                )
            };
            if cfg.faults.reconfigure_cycles != saved.faults.reconfigure_cycles {
                return Err(why(
                    "faults.reconfigure_cycles",
                    &cfg.faults.reconfigure_cycles,
                    &saved.faults.reconfigure_cycles,
                ));
            }
            if cfg.faults.stranded != saved.faults.stranded {
                return Err(why("faults.stranded", &cfg.faults.stranded, &saved.faults.stranded));
            }
            if cfg.faults.retransmit_cycles != saved.faults.retransmit_cycles {
                let text = |r: Option<u64>| r.map_or("absent".to_string(), |c| c.to_string());
                return Err(why(
                    "faults.retransmit_cycles",
                    &text(cfg.faults.retransmit_cycles),
                    &text(saved.faults.retransmit_cycles),
                ));
            }
            if cfg.faults.retransmit_limit != saved.faults.retransmit_limit {
                return Err(why(
                    "faults.retransmit_limit",
                    &cfg.faults.retransmit_limit,
                    &saved.faults.retransmit_limit,
                ));
            }
        }
        let (sc, ours) = (saved.schedule(), cfg.schedule());
        if !ours.fixed && ours.end <= r && ours.end != sc.end {
            return Err(ConfigError::value(
                "simulation.measure_cycles",
                cfg.simulation.measure_cycles,
                format!(
                    "at least {} (the measured window must end after cycle {r}, where the checkpoint resumes)",
                    r + 1 - ours.warmup.min(r)
                ),
            ));
        }
        if cfg.faults.events != saved.faults.events {
            let theirs = match self.vcs.get() {
                Some(&v) => v,
                None => {
                    let v = vcs_of(saved)?;
                    *self.vcs.get_or_init(|| v)
                }
            };
            let ours = vcs_of(cfg)?;
            if ours != theirs {
                return Err(ConfigError::value(
                    "faults.events",
                    format!("{} events", cfg.faults.events.len()),
                    format!(
                        "events under which the routers need the checkpoint's {theirs} VCs per port; these need {ours} \
                         (routing `{}` on the networks after them): take the checkpoint from a warm-up with \
                         routing.vcs = {} where the routing accepts it, or run the scenario whole",
                        cfg.routing.algorithm,
                        ours.max(theirs)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// An event as `{cycle = 4000, random_links = 2}`, for errors.
fn event_text(e: &crate::topology::faults::FaultEvent) -> String {
    toml::to_string(e).map_or_else(
        |_| format!("at cycle {}", e.cycle),
        |t| format!("{{{}}}", t.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(", ")),
    )
}

/// The first leaf where `a` and `b` differ, as (dotted key, `a`'s value, `b`'s value), values as
/// JSON (`absent` where a key is missing).
fn first_difference(a: &serde_json::Value, b: &serde_json::Value, at: String) -> Option<(String, String, String)> {
    use serde_json::Value;
    let join = |k: &str| if at.is_empty() { k.to_string() } else { format!("{at}.{k}") };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(u), Some(v)) => first_difference(u, v, join(k)),
                (u, v) if u != v => {
                    let show = |w: Option<&Value>| w.map_or("absent".to_string(), |w| w.to_string());
                    Some((join(k), show(u), show(v)))
                }
                _ => None,
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (u, v))| first_difference(u, v, format!("{at}[{i}]")))
        }
        _ if a != b => Some((at, a.to_string(), b.to_string())),
        _ => None,
    }
}

fn starts_with_magic(p: &Path) -> bool {
    let mut head = [0u8; 8];
    File::open(p).and_then(|mut f| f.read_exact(&mut head)).is_ok() && &head == MAGIC
}

/// Called by the run (collective: every rank, with its partitions) before the engine starts:
/// restores the partitions from the checkpoint being resumed, sets where the run starts and the
/// first pause. Errors: the checkpoint does not fit this model.
pub fn prepare(world: &World, plan: &Plan, parts: &mut [NetPartition], spec: &mut RunSpec) -> Result<(), ConfigError> {
    if let Some((file, header, flag)) = &plan.resume {
        let restored = restore(world, file, header, flag, parts);
        // Every rank reads the same file and builds the same model, so they agree; checked anyway,
        // as a rank that stops here alone would leave the others waiting in the run.
        let ok = world.min_all(restored.is_ok() as u64) == 1;
        match restored {
            Err(e) => return Err(ConfigError::value(flag, file.display(), e)),
            Ok(()) if !ok => {
                return Err(ConfigError::value(flag, file.display(), "a checkpoint every rank can restore"))
            }
            Ok(()) => {}
        }
        spec.start = header.resume_at;
    }
    spec.pause_at = next_pause(spec.start, plan.every);
    Ok(())
}

impl Plan {
    /// Where checkpoints are written (`None`: nowhere).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Whether the saved state has the failure events at the cycle the run resumes at applied:
    /// those of the saved config (a lifetime played during the run writes the same events for
    /// both). An event of the run's own at that cycle is applied to the restored state instead.
    pub fn holds_events_at_start(&self) -> bool {
        self.resume.as_ref().is_some_and(|(_, h, _)| {
            serde_json::from_str::<Config>(&h.config).is_ok_and(|c| {
                c.faults.lifetime.is_some_and(|l| l.every_cycles > 0)
                    || c.faults.events.iter().any(|e| e.cycle == h.resume_at)
            })
        })
    }
}

/// First checkpoint cycle after `now`: the next multiple of `every` (0: never).
fn next_pause(now: Cycle, every: Cycle) -> Cycle {
    match now.checked_div(every) {
        Some(k) => (k + 1).saturating_mul(every),
        None => Cycle::MAX,
    }
}

/// Called after each engine call (collective: every rank, with its partitions) with the outcome:
/// writes a checkpoint when the run paused for one or was stopped by a signal. Returns `true` when
/// the run should go on (a pause), with `spec` set for the next engine call. A checkpoint that
/// cannot be written is reported and the run goes on (its results are still worth having; the
/// previous checkpoint stays in place).
pub fn after_leg(
    world: &World,
    plan: &Plan,
    cfg: &Config,
    parts: &[NetPartition],
    outcome: &Outcome,
    spec: &mut RunSpec,
) -> bool {
    let cycle = match outcome {
        Outcome::Paused { cycle } | Outcome::Interrupted { cycles: cycle } => *cycle,
        _ => return false,
    };
    let (Some(path), every) = (&plan.path, plan.every) else {
        // A run that writes no checkpoints never pauses; stopped by a signal, it just ends.
        return false;
    };
    let started = Instant::now();
    let resume_at = parts.first().and_then(|p| p.resume_at()).unwrap_or(cycle);
    let written = write(world, path, cfg, parts, cycle, resume_at, every);
    if world.is_root() {
        match written {
            Ok(bytes) => tracing::info!(
                "checkpoint at cycle {cycle}: {} ({bytes} bytes in {:.3} s)",
                path.display(),
                started.elapsed().as_secs_f64()
            ),
            Err(e) => crate::console::note(&format!("error: {e:#} (the run goes on; any earlier checkpoint is kept)")),
        }
    }
    if let Outcome::Paused { .. } = outcome {
        spec.start = resume_at;
        spec.pause_at = next_pause(cycle, every);
        true
    } else {
        if world.is_root() {
            crate::console::note(&format!(
                "hxsim: checkpoint at cycle {cycle} written to {}; continue with `hxsim run --resume {}`",
                path.display(),
                path.display()
            ));
        }
        false
    }
}

/// Append `value` to `out` as a length-prefixed bincode record.
fn record<T: Serialize>(out: &mut Vec<u8>, value: &T) {
    let at = out.len();
    out.extend_from_slice(&[0; 8]);
    bincode::serde::encode_into_std_write(value, out, bincode::config::standard())
        .expect("encoding checkpoint state into memory cannot fail");
    let len = (out.len() - at - 8) as u64;
    out[at..at + 8].copy_from_slice(&len.to_le_bytes());
}

/// The file rank 0 streams the checkpoint into; the first error is kept and writing stops there
/// (the rank still takes part in every collective of the checkpoint).
struct Sink {
    out: Option<Summed<BufWriter<File>>>,
    tmp: PathBuf,
    error: Option<anyhow::Error>,
    bytes: u64,
    /// Whether this rank created (claimed) `tmp`.
    claimed: bool,
}

impl Sink {
    fn put(&mut self, bytes: &[u8]) {
        if let Some(w) = &mut self.out {
            match w.write_all(bytes) {
                Ok(()) => self.bytes += bytes.len() as u64,
                Err(e) => {
                    self.error = Some(anyhow::Error::new(e).context(format!("writing {}", self.tmp.display())));
                    self.out = None;
                }
            }
        }
    }
}

/// Write the checkpoint of the run stopped at the window end `cycle` (to resume at `resume_at`) to
/// `path` atomically (collective: every rank calls it with its partitions; rank 0 writes); returns
/// the file's size in bytes on rank 0.
fn write(
    world: &World,
    path: &Path,
    cfg: &Config,
    parts: &[NetPartition],
    cycle: Cycle,
    resume_at: Cycle,
    every: Cycle,
) -> Result<u64> {
    let root = world.is_root();
    let bc = bincode::config::standard();
    // Network-wide sums: this rank's partitions, then over the ranks on rank 0.
    let mut global = GlobalState::default();
    for p in parts {
        global.merge(&p.global_state());
    }
    if world.size() > 1 {
        let mine = bincode::serde::encode_to_vec(&global, bc).expect("encoding a rank's sums cannot fail");
        if let Some(all) = world.gather_to_root(mine) {
            global = GlobalState::default();
            for b in all {
                let (g, _): (GlobalState, usize) = bincode::serde::decode_from_slice(&b, bc)
                    .expect("decoding a rank's sums sent by another rank of this run");
                global.merge(&g);
            }
        }
    }
    let local = parts.iter().map(|p| p.switches().len() as u64).sum::<u64>();
    let switches = world.sum_to_root(&[local]).map_or(0, |s| s[0]);
    let mut sink = Sink { out: None, tmp: crate::staged::partial_path(path), error: None, bytes: 0, claimed: false };
    let mut buf = Vec::new();
    if root {
        let config = serde_json::to_string(cfg).context("encoding the config")?;
        let header = Header {
            config_hash: Checksum::of(config.as_bytes()),
            config,
            ranks: world.size() as u32,
            threads: parts.len() as u32,
            cycle,
            resume_at,
            switches,
            path: path.to_path_buf(),
            every,
        };
        // Claimed exclusively (see `crate::staged::claim`): two runs given one checkpoint path
        // must not write into one partial file.
        match crate::staged::claim(&sink.tmp) {
            Ok(f) => {
                sink.claimed = true;
                sink.out = Some(Summed { inner: BufWriter::with_capacity(1 << 20, f), sum: Checksum::new() })
            }
            Err(crate::staged::ClaimError::Busy) => {
                sink.error = Some(anyhow::anyhow!("{} is being written by another running hxsim", sink.tmp.display()))
            }
            Err(crate::staged::ClaimError::Io(e)) => {
                sink.error = Some(anyhow::Error::new(e).context(format!("creating {}", sink.tmp.display())))
            }
        }
        let version = binary_version();
        if let Some(w) = &mut sink.out {
            // The prefix is outside the checksum: a reader checks it first, to name another version.
            let mut prefix = MAGIC.to_vec();
            prefix.extend_from_slice(&FORMAT.to_le_bytes());
            prefix.extend_from_slice(&(version.len() as u32).to_le_bytes());
            prefix.extend_from_slice(version.as_bytes());
            if let Err(e) = w.inner.write_all(&prefix) {
                sink.error = Some(anyhow::Error::new(e).context(format!("writing {}", sink.tmp.display())));
                sink.out = None;
            }
            sink.bytes = prefix.len() as u64;
        }
        record(&mut buf, &header);
        record(&mut buf, &global);
        sink.put(&buf);
        buf.clear();
    }
    drop(global);
    // Switch records, a chunk per rank per round: a round ends with a gather on rank 0 and a
    // check whether every rank is done (ranks own different numbers of switches).
    let round = |buf: &mut Vec<u8>, done: bool, sink: &mut Sink| -> bool {
        if let Some(all) = world.gather_to_root(std::mem::take(buf)) {
            for b in all {
                sink.put(&b);
            }
        }
        world.min_all(done as u64) == 1
    };
    for p in parts {
        p.for_each_switch_state(|st: SwitchState| {
            record(&mut buf, &st);
            if world.size() == 1 {
                // One process: straight to the file, one switch at a time.
                sink.put(&buf);
                buf.clear();
            } else if buf.len() >= CHUNK_BYTES {
                round(&mut buf, false, &mut sink);
            }
            Ok::<(), ()>(())
        })
        .ok();
    }
    while !round(&mut buf, true, &mut sink) {}
    if !root {
        return Ok(0);
    }
    let finished = (|| -> Result<u64> {
        if let Some(e) = sink.error.take() {
            return Err(e);
        }
        let w = sink.out.take().expect("the file is open while there is no error");
        let sum = w.sum.finish();
        let mut f = w.inner;
        f.write_all(&sum.to_le_bytes())?;
        let f = f.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        // Renamed while the claim (the open file) is held.
        std::fs::rename(&sink.tmp, path)?;
        drop(f);
        Ok(sink.bytes + 8)
    })();
    // Only this run's own partial file (not one another run holds).
    if finished.is_err() && sink.claimed {
        let _ = std::fs::remove_file(&sink.tmp);
    }
    finished.with_context(|| format!("writing the checkpoint {}", path.display()))
}

/// Where the checksummed part of a checkpoint starts, after checking its prefix (exit 2 naming
/// `--resume`: not a checkpoint, or another version's).
fn check_prefix(path: &Path, flag: &str, r: &mut impl Read) -> Result<u64> {
    let not_one = || bad(flag, path, "an hxsim checkpoint (written by `hxsim run --checkpoint`); this file is not one");
    let mut head = [0u8; 16];
    r.read_exact(&mut head).map_err(|_| not_one())?;
    if &head[..8] != MAGIC {
        return Err(not_one());
    }
    let format = u32::from_le_bytes(head[8..12].try_into().unwrap());
    let vlen = u32::from_le_bytes(head[12..16].try_into().unwrap()) as usize;
    let mut version = vec![0u8; vlen.min(4096)];
    r.read_exact(&mut version).map_err(|_| corrupt(path, flag, "version"))?;
    let version = String::from_utf8_lossy(&version);
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
    Ok(16 + vlen as u64)
}

fn corrupt(path: &Path, flag: &str, what: &str) -> anyhow::Error {
    bad(flag, path, format!("a complete hxsim checkpoint; this file is truncated or corrupt ({what})"))
}

/// Read one length-prefixed record into `buf` (at most `left` bytes remain before the checksum).
/// `flag` names the file in errors.
fn read_record(
    r: &mut impl Read,
    buf: &mut Vec<u8>,
    left: &mut u64,
    path: &Path,
    flag: &str,
    what: &str,
) -> Result<()> {
    let mut len = [0u8; 8];
    if *left < 8 || r.read_exact(&mut len).is_err() {
        return Err(corrupt(path, flag, what));
    }
    let len = u64::from_le_bytes(len);
    if len > *left - 8 {
        return Err(corrupt(path, flag, &format!("{what} length")));
    }
    buf.clear();
    buf.resize(len as usize, 0);
    r.read_exact(buf).map_err(|_| corrupt(path, flag, what))?;
    *left -= 8 + len;
    Ok(())
}

/// Open a checkpoint, check its prefix and its checksum over the whole file (read once, in
/// constant memory), and return it positioned at its first record with the bytes left before the
/// checksum.
fn open_checked(path: &Path, flag: &str) -> Result<(BufReader<File>, u64)> {
    let f = File::open(path).map_err(|e| bad(flag, path, format!("a checkpoint file that can be read: {e}")))?;
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut r = BufReader::with_capacity(1 << 20, f);
    let start = check_prefix(path, flag, &mut r)?;
    let data = size.checked_sub(start + 8).ok_or_else(|| corrupt(path, flag, "too short"))?;
    let mut summed = Summed { inner: std::io::sink(), sum: Checksum::new() };
    let copied = std::io::copy(&mut (&mut r).take(data), &mut summed)
        .map_err(|e| bad(flag, path, format!("a checkpoint file that can be read: {e}")))?;
    let mut sum = [0u8; 8];
    if copied != data || r.read_exact(&mut sum).is_err() || summed.sum.finish() != u64::from_le_bytes(sum) {
        return Err(corrupt(path, flag, "checksum mismatch"));
    }
    r.seek(SeekFrom::Start(start))?;
    Ok((r, data))
}

/// Read and check a checkpoint's header (exit 2 naming `flag` for any problem).
fn read_header(path: &Path, flag: &str) -> Result<Header> {
    let (mut r, mut left) = open_checked(path, flag)?;
    let mut buf = Vec::new();
    read_record(&mut r, &mut buf, &mut left, path, flag, "header")?;
    let (header, _): (Header, usize) = bincode::serde::decode_from_slice(&buf, bincode::config::standard())
        .map_err(|_| corrupt(path, flag, "header"))?;
    if Checksum::of(header.config.as_bytes()) != header.config_hash {
        return Err(corrupt(path, flag, "config hash"));
    }
    Ok(header)
}

/// Restore this rank's partitions `parts` (freshly built from the checkpoint's config) from the
/// checkpoint `path` with `header`: the sums go to partition 0 of rank 0, each switch record to the
/// partition that owns the switch now.
fn restore(world: &World, path: &Path, header: &Header, flag: &str, parts: &mut [NetPartition]) -> Result<(), String> {
    let n = parts.first().map_or(0, |p| p.num_switches());
    if header.switches != n as u64 {
        return Err(format!(
            "a checkpoint of this network; it holds {} switches, the config builds {n}",
            header.switches
        ));
    }
    let text = |e: anyhow::Error| format!("{e:#}");
    let (mut r, mut left) = open_checked(path, flag).map_err(text)?;
    let bc = bincode::config::standard();
    let mut buf = Vec::new();
    read_record(&mut r, &mut buf, &mut left, path, flag, "header").map_err(text)?;
    read_record(&mut r, &mut buf, &mut left, path, flag, "sums").map_err(text)?;
    let (global, _): (GlobalState, usize) =
        bincode::serde::decode_from_slice(&buf, bc).map_err(|e| format!("its sums cannot be decoded: {e}"))?;
    // The local partition of every switch of this rank.
    let mut owner = vec![u32::MAX; n];
    for (k, p) in parts.iter_mut().enumerate() {
        for &s in p.switches() {
            owner[s as usize] = k as u32;
        }
        p.begin_restore(header.resume_at, &global, world.is_root() && k == 0);
    }
    drop(global);
    let mut seen = vec![false; n];
    for _ in 0..header.switches {
        read_record(&mut r, &mut buf, &mut left, path, flag, "switch").map_err(text)?;
        let (id, _): (crate::topology::SwitchId, usize) =
            bincode::serde::decode_from_slice(&buf, bc).map_err(|e| format!("a switch record: {e}"))?;
        let Some(&k) = owner.get(id as usize) else {
            return Err(format!("a record of switch {id}, beyond the network's {n}"));
        };
        if std::mem::replace(&mut seen[id as usize], true) {
            return Err(format!("switch {id} twice"));
        }
        if k == u32::MAX {
            continue;
        }
        let (st, _): (SwitchState, usize) =
            bincode::serde::decode_from_slice(&buf, bc).map_err(|e| format!("switch {id}: {e}"))?;
        parts[k as usize].restore_switch(st)?;
    }
    if left != 0 || seen.iter().any(|&s| !s) {
        return Err(text(corrupt(path, flag, "switch records")));
    }
    for p in parts.iter_mut() {
        p.finish_restore();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_difference_names_the_dotted_key_and_both_values() {
        let a =
            serde_json::json!({"routing": {"algorithm": "minimal", "vcs": 0}, "faults": {"links": [[0, 1], [2, 3]]}});
        let same = first_difference(&a, &a.clone(), String::new());
        assert_eq!(same, None);
        let mut b = a.clone();
        b["routing"]["algorithm"] = "valiant".into();
        assert_eq!(
            first_difference(&a, &b, String::new()),
            Some(("routing.algorithm".into(), "\"minimal\"".into(), "\"valiant\"".into()))
        );
        let mut b = a.clone();
        b["faults"]["links"][1][0] = 5.into();
        assert_eq!(
            first_difference(&a, &b, String::new()),
            Some(("faults.links[1][0]".into(), "2".into(), "5".into()))
        );
        // A key one side leaves out (serde skips defaults), and lists of other lengths, whole.
        let mut b = a.clone();
        b["faults"]["seed"] = 7.into();
        assert_eq!(first_difference(&a, &b, String::new()), Some(("faults.seed".into(), "absent".into(), "7".into())));
        let mut b = a.clone();
        b["faults"]["links"] = serde_json::json!([[0, 1]]);
        assert_eq!(
            first_difference(&a, &b, String::new()),
            Some(("faults.links".into(), "[[0,1],[2,3]]".into(), "[[0,1]]".into()))
        );
    }

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
        assert_ne!(Checksum::of(&a), Checksum::of(&a[..18]));
        let mut b = a.clone();
        b[17] ^= 1;
        assert_ne!(Checksum::of(&a), Checksum::of(&b));
        // A zero byte appended changes the sum (the length is in it).
        assert_ne!(Checksum::of(&a), Checksum::of(&[&a[..], &[0]].concat()));
    }

    #[test]
    fn checksum_does_not_depend_on_how_the_bytes_are_split() {
        let a: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(37)).collect();
        for cuts in [[0, 0], [3, 17], [8, 16], [1, 99], [50, 51]] {
            let mut c = Checksum::new();
            c.update(&a[..cuts[0]]);
            c.update(&a[cuts[0]..cuts[1]]);
            c.update(&a[cuts[1]..]);
            assert_eq!(c.finish(), Checksum::of(&a), "{cuts:?}");
        }
    }
}
