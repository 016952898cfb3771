//! The experiment description: one TOML file, `--set key=value` overrides, validation.
//!
//! Defaults follow the SurePath paper (Table 2): virtual cut-through, input buffers of 8 packets per VC,
//! output buffers of 4 packets per VC, 16-phit packets, 1-cycle links, 1-cycle crossbar, crossbar
//! speedup 2. Every error names the key, the value and what is allowed; the CLI maps them to exit code 2.

use crate::network::{Allocation, Allocator, EjectionVcs, InjectionVcs, Reroute, RouterOption, Throttle};
pub use crate::topology::registry::TopologyConfig;
use crate::traffic::PatternKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub use crate::error::ConfigError;
pub use crate::memory::{available_memory, human_bytes, parse_bytes};

/// A whole experiment.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Experiment name (used for output file names).
    #[serde(default = "default_name")]
    pub name: String,
    /// Master seed; every random stream is derived from it and the owner's id.
    #[serde(default = "default_seed", with = "crate::rng::seed_format")]
    #[schemars(with = "u64")]
    pub seed: u64,
    /// The network: a family (`kind`) and its keys.
    pub topology: TopologyConfig,
    /// Router microarchitecture.
    #[serde(default)]
    pub router: RouterConfig,
    /// Links.
    #[serde(default)]
    pub link: LinkConfig,
    /// Packets.
    #[serde(default)]
    pub packet: PacketConfig,
    /// Routing and deadlock avoidance.
    #[serde(default)]
    pub routing: RoutingConfig,
    /// Traffic pattern and injection.
    #[serde(default)]
    pub traffic: TrafficConfig,
    /// Failed links and switches.
    #[serde(default)]
    pub faults: FaultConfig,
    /// Run length and watchdog.
    #[serde(default)]
    pub simulation: SimulationConfig,
    /// Result output.
    #[serde(default)]
    pub output: OutputConfig,
    /// How switches are mapped onto partitions (threads and ranks).
    #[serde(default)]
    pub partition: PartitionConfig,
    /// A workload with causal dependencies (an application kernel, a collective, or a GOAL
    /// schedule) instead of `[traffic]`; absent: the traffic of `[traffic]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadConfig>,
}

/// A workload with causal dependencies ([`crate::workload`]; docs/workloads.md). With it,
/// `[traffic]` is not read: the servers send what their tasks' programs send, and the run ends
/// when every task has finished.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadConfig {
    /// A built-in kernel (listed under "Workload kernels" in `hxsim docs reference`), or `goal` to replay `workload.file`.
    pub kernel: String,
    /// `kernel = "goal"`: the GOAL schedule to replay (relative to the config file's folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// Tasks of a kernel (one per server); 0: one per live server. A GOAL file says its own.
    pub tasks: u64,
    /// Message bytes (a collective's buffer: each kernel's doc says which).
    pub bytes: u64,
    /// Iterations of the kernel.
    pub iterations: u32,
    /// Cycles of computation between iterations.
    pub compute_cycles: u64,
    /// The stencils' virtual grid (its product is the task count); empty: the most nearly square
    /// or cubic grid.
    pub grid: Vec<u32>,
    /// Bytes a phit carries: a message of `b` bytes is `ceil(b / phit_bytes)` phits.
    pub phit_bytes: u64,
    /// How tasks map onto the live servers: `linear` (task `i` on the `i`-th live server),
    /// `random` (a seeded random choice of servers), or `file` (`workload.mapping_file`: one server
    /// id per line, task by task).
    pub mapping: String,
    /// `mapping = "file"`: the file of server ids.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapping_file: Option<PathBuf>,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            kernel: "allreduce-ring".into(),
            file: None,
            tasks: 0,
            bytes: 1024,
            iterations: 1,
            compute_cycles: 0,
            grid: Vec::new(),
            phit_bytes: 16,
            mapping: "linear".into(),
            mapping_file: None,
        }
    }
}

/// The names `workload.mapping` takes.
pub const WORKLOAD_MAPPINGS: [&str; 3] = ["linear", "random", "file"];

impl WorkloadConfig {
    /// Checks that need no network: the kernel's name, the sizes, the mapping.
    fn validate(&self) -> Result<(), ConfigError> {
        let kernels = crate::workload::kernels::names();
        if self.kernel != "goal" && !kernels.contains(&self.kernel.as_str()) {
            return Err(ConfigError::value(
                "workload.kernel",
                format!("\"{}\"", self.kernel),
                format!("allowed: goal (with workload.file), {}", kernels.join(", ")),
            ));
        }
        if self.kernel == "goal" && self.file.is_none() {
            return Err(ConfigError::value("workload.file", "absent", "a GOAL file, with workload.kernel = \"goal\""));
        }
        if self.kernel != "goal" && self.file.is_some() {
            return Err(ConfigError::value(
                "workload.file",
                self.file.as_ref().map_or(String::new(), |f| format!("\"{}\"", f.display())),
                "absent unless workload.kernel = \"goal\"",
            ));
        }
        if self.tasks > u32::MAX as u64 / 2 {
            return Err(ConfigError::value("workload.tasks", self.tasks, "at most 2147483647"));
        }
        if self.iterations == 0 {
            return Err(ConfigError::value("workload.iterations", 0, "at least 1"));
        }
        if !(1..=1 << 20).contains(&self.phit_bytes) {
            return Err(ConfigError::value("workload.phit_bytes", self.phit_bytes, "between 1 and 1048576"));
        }
        if !WORKLOAD_MAPPINGS.contains(&self.mapping.as_str()) {
            return Err(ConfigError::value(
                "workload.mapping",
                format!("\"{}\"", self.mapping),
                format!("allowed: {}", WORKLOAD_MAPPINGS.join(", ")),
            ));
        }
        if (self.mapping == "file") != self.mapping_file.is_some() {
            return Err(ConfigError::value(
                "workload.mapping_file",
                self.mapping_file.as_ref().map_or("absent".to_string(), |f| format!("\"{}\"", f.display())),
                "a file of server ids exactly when workload.mapping = \"file\"",
            ));
        }
        Ok(())
    }

    /// The kernel's parameters, for `tasks` tasks.
    pub fn kernel_params(&self, tasks: u32) -> crate::workload::kernels::KernelParams {
        crate::workload::kernels::KernelParams {
            tasks,
            bytes: self.bytes,
            iterations: self.iterations,
            compute_cycles: self.compute_cycles,
            grid: self.grid.clone(),
        }
    }
}

fn default_name() -> String {
    "experiment".into()
}
fn default_seed() -> u64 {
    1
}

/// Router parameters (SurePath Table 2 defaults).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RouterConfig {
    /// Input buffer per VC, in packets.
    pub input_buffer_packets: usize,
    /// Output buffer per VC, in packets.
    pub output_buffer_packets: usize,
    /// Cycles for a head to cross the crossbar.
    pub crossbar_latency: u64,
    /// Crossbar internal speedup (phits per cycle through the crossbar).
    pub crossbar_speedup: usize,
    /// Switch allocator: `age` (oldest head first), `islip` (round-robin pointers) or `random`; see
    /// [`crate::network::Allocator`].
    #[serde(with = "by_name")]
    #[schemars(with = "Allocator")]
    pub allocator: Allocator,
    /// Give requests from switch-to-switch inputs precedence over requests from servers (packets
    /// already in the network over newly injected ones) at every output; CAMINOS's
    /// `intransit_priority`. Within each class the allocator decides.
    pub intransit_priority: bool,
    /// Injection throttling, a congestion-management mechanism: `off`, `switch` or `route`; see
    /// [`crate::network::Throttle`]. Written to outputs only when not `off`.
    #[serde(with = "by_name", skip_serializing_if = "is_off")]
    #[schemars(with = "Throttle")]
    #[schemars(extend("default" = "off"))]
    pub injection_throttle: Throttle,
    /// With `injection_throttle`: the free fraction (0 to 1) of the watched buffer space a server
    /// needs to inject.
    #[serde(skip_serializing_if = "is_default_threshold")]
    #[schemars(extend("default" = 0.5))]
    pub injection_threshold: f64,
    /// With `injection_throttle = "window"`: the packets (1 to 65535) a server may have injected
    /// and not yet acknowledged. Accepted and ignored with the other modes, as the threshold is.
    #[serde(skip_serializing_if = "is_default_window")]
    #[schemars(extend("default" = 16))]
    pub injection_window: u64,
    /// VCs a server injects into: `zero` (VC 0 only) or `any` (any VC of its switch input with a
    /// credit, as CAMINOS); see [`crate::network::InjectionVcs`].
    #[serde(with = "by_name", skip_serializing_if = "is_zero_vcs")]
    #[schemars(with = "InjectionVcs")]
    #[schemars(extend("default" = "zero"))]
    pub injection_vcs: InjectionVcs,
    /// VCs of a server's output port a packet is ejected into: `any` (the lowest VC with room, as
    /// CAMINOS; the default) or `zero` (VC 0 only, the model before 2026-11-23); see
    /// [`crate::network::EjectionVcs`].
    #[serde(with = "by_name", skip_serializing_if = "is_any_vcs")]
    #[schemars(with = "EjectionVcs")]
    #[schemars(extend("default" = "any"))]
    pub ejection_vcs: EjectionVcs,
    /// Unit of switch allocation: `port` (one packet per input and output port crosses the
    /// crossbar at a time) or `vc` (per input VC and output VC, as CAMINOS's input-output
    /// router); see [`crate::network::Allocation`].
    #[serde(with = "by_name", skip_serializing_if = "is_port_allocation")]
    #[schemars(with = "Allocation")]
    #[schemars(extend("default" = "port"))]
    pub allocation: Allocation,
    /// When a head whose request was refused (its output's crossbar busy) is routed again:
    /// `each-turn` (at its input's next turn, as CAMINOS) or `output-frees` (once the crossbar
    /// output it chose frees; with `allocation = "port"` only); see [`crate::network::Reroute`].
    #[serde(with = "by_name", skip_serializing_if = "is_each_turn")]
    #[schemars(with = "Reroute")]
    #[schemars(extend("default" = "each-turn"))]
    pub reroute: Reroute,
}

fn is_off(t: &Throttle) -> bool {
    *t == Throttle::Off
}
fn is_default_threshold(x: &f64) -> bool {
    *x == RouterConfig::DEFAULT_THRESHOLD
}
fn is_default_window(x: &u64) -> bool {
    *x == RouterConfig::DEFAULT_WINDOW
}
fn is_zero_vcs(v: &InjectionVcs) -> bool {
    *v == InjectionVcs::Zero
}
fn is_any_vcs(v: &EjectionVcs) -> bool {
    *v == EjectionVcs::Any
}
fn is_port_allocation(a: &Allocation) -> bool {
    *a == Allocation::Port
}
fn is_each_turn(r: &Reroute) -> bool {
    *r == Reroute::EachTurn
}

impl RouterConfig {
    /// Default of `injection_threshold`.
    pub const DEFAULT_THRESHOLD: f64 = 0.5;
    /// Default of `injection_window`.
    pub const DEFAULT_WINDOW: u64 = 16;
}

impl Default for RouterConfig {
    fn default() -> Self {
        RouterConfig {
            input_buffer_packets: 8,
            output_buffer_packets: 4,
            crossbar_latency: 1,
            crossbar_speedup: 2,
            allocator: Allocator::Age,
            intransit_priority: false,
            injection_throttle: Throttle::Off,
            injection_threshold: Self::DEFAULT_THRESHOLD,
            injection_window: Self::DEFAULT_WINDOW,
            injection_vcs: InjectionVcs::Zero,
            ejection_vcs: EjectionVcs::Any,
            allocation: Allocation::Port,
            reroute: Reroute::EachTurn,
        }
    }
}

/// Link parameters.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LinkConfig {
    /// Latency of every link in cycles (data and credits alike), server links included; the
    /// engine's lookahead is the smallest latency of a link between partitions.
    pub latency: u64,
    /// Latency of the links of one class of the topology (e.g. `global = 10` on a dragonfly),
    /// overriding `latency` for that class.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub class_latency: std::collections::BTreeMap<String, u64>,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig { latency: 1, class_latency: Default::default() }
    }
}

/// Packet parameters.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PacketConfig {
    /// Packet length in phits; a link carries one phit per cycle.
    pub size_phits: usize,
}

impl Default for PacketConfig {
    fn default() -> Self {
        PacketConfig { size_phits: 16 }
    }
}

/// Routing algorithm and VC management.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    /// Algorithm name (kebab-case), one of [`crate::routing::REGISTRY`].
    pub algorithm: String,
    /// Virtual channels per port; 0 means "what the algorithm's paper configuration uses" (2n on HyperX).
    pub vcs: usize,
    /// VC policy where the algorithm lets you choose: `ladder`, `davc-n`, `davc-p`, `davc-np`, or
    /// `none` (any VC on any hop: not deadlock free, for analysis). SurePath and DAL manage their
    /// VCs themselves and only accept the default.
    pub vc_policy: String,
    /// Escape VCs for escape-based mechanisms (SurePath).
    pub escape_vcs: usize,
    /// Root switch of the Up/Down escape subnetwork.
    pub escape_root: usize,
    /// Non-minimal hop budget (Omnidimensional `m`); 0 means `n`, the number of dimensions.
    pub max_deroutes: usize,
    /// Extra hops over the shortest path for AllPath(k).
    pub extra_hops: usize,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            algorithm: "minimal".into(),
            vcs: 0,
            vc_policy: "ladder".into(),
            escape_vcs: 1,
            escape_root: 0,
            max_deroutes: 0,
            extra_hops: 1,
        }
    }
}

/// `traffic.workload_phits` when the config does not set it, for every pattern but the all-to-all
/// shift (whose default is one full exchange, see [`TrafficConfig::workload_phits`]).
pub const DEFAULT_WORKLOAD_PHITS: u64 = 1600;

/// How servers generate packets (`traffic.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[schemars(rename_all = "lowercase")]
pub enum TrafficMode {
    /// Open loop: every server generates a packet each cycle with probability `load / packet
    /// size`, for `warmup_cycles + measure_cycles` cycles.
    Bernoulli,
    /// Every server sends `traffic.workload_phits` and the run ends when all is delivered.
    Fixed,
}

/// Traffic pattern and injection process.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    /// Pattern name (kebab-case), see [`crate::traffic::PatternKind`].
    #[serde(with = "by_name")]
    #[schemars(with = "PatternKind")]
    pub pattern: PatternKind,
    /// Offered load in phits/cycle/server, in (0, 1].
    pub load: f64,
    /// `bernoulli` (open loop at `load`) or `fixed` (every server sends `workload_phits`).
    #[serde(with = "by_name")]
    #[schemars(with = "TrafficMode")]
    pub mode: TrafficMode,
    /// Phits each server sends in `fixed` mode (a multiple of the packet size). Absent: 1600
    /// ([`DEFAULT_WORKLOAD_PHITS`]), except with `pattern = "all-to-all-shift"`: one full exchange,
    /// `(L-1) x traffic.shift_message_packets` packets per server for `L` live (or active) servers,
    /// known once the network is built (see [`crate::sim::build_params`]). With the shift, a set
    /// value must be a whole number of messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload_phits: Option<u64>,
    /// Capacity of each server's source queue in packets; generation pauses while it is full.
    pub source_queue_packets: usize,
    /// Only this many servers take part in the traffic (the rest neither send nor receive), spread
    /// evenly over the switches ([`crate::traffic::active_servers`]); the pattern is defined on their
    /// ranks `0..n` ([`crate::traffic::Pattern::on_active`]) and the accepted load and Jain's index
    /// are over them. For the HyperX paper's Fig. 7 (section 4.1: `N = 4096` on a network of 4802
    /// ports). Absent: every server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_servers: Option<u64>,
    /// `adversarial-group` on a topology without groups (the RRG): switches per group, groups being
    /// consecutive switch ids. The DAVC paper adapts the dragonfly's adversarial pattern to RRGs this
    /// way (section 7.1: "the network is divided in groups of a given size and each group sends the
    /// traffic to the next group"). Absent: the topology's own groups (the dragonfly's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_switches: Option<u64>,
    /// `all-to-all-shift` only: packets per message, i.e. per step of the exchange (a server sends
    /// this many consecutive packets to each destination before moving to the next). Absent: 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shift_message_packets: Option<u64>,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            pattern: PatternKind::Uniform,
            load: 0.5,
            mode: TrafficMode::Bernoulli,
            workload_phits: None,
            source_queue_packets: 64,
            active_servers: None,
            group_switches: None,
            shift_message_packets: None,
        }
    }
}

impl TrafficConfig {
    /// Packets per message of the all-to-all shift (`traffic.shift_message_packets`, default 1).
    pub fn message_packets(&self) -> u64 {
        self.shift_message_packets.unwrap_or(1)
    }
}

pub use crate::topology::faults::FaultConfig;

/// Run length and watchdog.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SimulationConfig {
    /// Cycles simulated before measuring.
    pub warmup_cycles: u64,
    /// Cycles of the measurement window.
    pub measure_cycles: u64,
    /// Deadlock watchdog: packets in flight and no packet moved for this many cycles is an error.
    pub watchdog_cycles: u64,
    /// Upper bound on cycles in `fixed` mode (0: no bound), and on the whole run with
    /// `measure_until_steady` (0: 8 x (warmup_cycles + measure_cycles)).
    pub max_cycles: u64,
    /// If the measured window is not steady (see [`crate::metrics::Steadiness`]), run again twice as
    /// long, measuring the last `measure_cycles` (the warm-up absorbs the transient), until it is
    /// steady or the next run would pass `max_cycles`.
    pub measure_until_steady: bool,
}

impl Default for SimulationConfig {
    fn default() -> Self {
        SimulationConfig {
            warmup_cycles: 3000,
            measure_cycles: 3000,
            watchdog_cycles: 20_000,
            max_cycles: 0,
            measure_until_steady: false,
        }
    }
}

/// When a run measures and when it ends, derived once from `[simulation]` and `traffic.mode` by
/// [`Config::schedule`]: the run, its summary, the results file and the progress bar all read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// A fixed workload (`traffic.mode = "fixed"`): the run ends when every packet is delivered
    /// (or at `end`), and the whole run is measured.
    pub fixed: bool,
    /// Cycles before the measured window (bernoulli; 0 for a fixed workload).
    pub warmup: u64,
    /// Cycles of the measured window (bernoulli; a fixed workload's window ends with the run).
    pub measure: u64,
    /// The cycle the run stops at: `warmup + measure`, or for a fixed workload
    /// `simulation.max_cycles` (`u64::MAX` when 0: until drained).
    pub end: u64,
    /// `simulation.measure_until_steady` (bernoulli only): the most cycles a rerun may last.
    pub until_steady: Option<u64>,
}

impl Schedule {
    /// The cycles `[start, end)` in which the window counters (per server, per link, per VC) and the
    /// summary's latencies count.
    pub fn window(&self) -> (u64, u64) {
        if self.fixed {
            (0, u64::MAX)
        } else {
            (self.warmup, self.warmup + self.measure)
        }
    }

    /// Cycles measured by a run that simulated cycles `0..cycles`: the window, cut short where the
    /// run stopped early; the whole run for a fixed workload (it reports the cycle after its last
    /// delivery). The one derivation of the accepted load's denominator and of the results file's
    /// `measured_cycles`.
    pub fn measured_cycles(&self, cycles: u64) -> u64 {
        if self.fixed {
            cycles.max(1)
        } else {
            (cycles.clamp(self.warmup, self.warmup + self.measure) - self.warmup).max(1)
        }
    }

    /// The same window moved to end at `end` (`measure_until_steady` runs again twice as long,
    /// measuring the last `measure` cycles).
    pub fn ending_at(&self, end: u64) -> Schedule {
        Schedule { warmup: end - self.measure, end, ..*self }
    }
}

/// Bytes a run keeps per time-series row, at least: a [`crate::metrics::Sample`] in a partition's
/// statistics, in its rank's result and in the merged result.
pub const TIMESERIES_ROW_BYTES: u128 = 3 * std::mem::size_of::<crate::metrics::Sample>() as u128;

/// Output options.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct OutputConfig {
    /// Time-series sampling interval in cycles.
    pub sample_cycles: u64,
    /// Also record, per sample interval and per class of switch-to-switch port (a HyperX's
    /// dimensions, a dragonfly's local and global links, a tree's up and down links per level), the
    /// phits sent and the packets buffered, and the share of packets delivered over a minimal path
    /// (`/timeseries/link_*` and `minimal_share` in the results file). Written to outputs only
    /// when on.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(extend("default" = false))]
    pub link_series: bool,
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig { sample_cycles: 100, link_series: false }
    }
}

/// Partitioning of switches onto engine partitions.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PartitionConfig {
    /// `block`, `round-robin` or `multilevel`.
    #[serde(with = "by_name")]
    #[schemars(with = "partitioning::Method")]
    pub method: partitioning::Method,
}

impl Default for PartitionConfig {
    fn default() -> Self {
        PartitionConfig { method: partitioning::Method::Block }
    }
}

/// Parse TOML text (with `--set` overrides already merged) into a validated [`Config`].
pub fn parse_str(text: &str, origin: &str, overrides: &[String]) -> Result<Config, ConfigError> {
    parse_in(text, origin, None, overrides)
}

/// Keys whose value names another file (`[section] key`).
const PATH_KEYS: [(&str, &str); 4] =
    [("faults", "file"), ("topology", "file"), ("workload", "file"), ("workload", "mapping_file")];

/// Make the relative paths of [`PATH_KEYS`] in a config file's `value` relative to the working
/// directory by prefixing the file's folder `dir`: a config is read from anywhere, and the fault
/// list or edge list kept beside it goes with it. Paths given with `--set` are applied afterwards
/// and stay relative to the working directory, like any command-line path.
fn resolve_paths(value: &mut toml::Value, dir: &Path) {
    if dir.as_os_str().is_empty() {
        return;
    }
    for (section, key) in PATH_KEYS {
        if let Some(toml::Value::String(s)) = value.get_mut(section).and_then(|t| t.get_mut(key)) {
            if Path::new(s.as_str()).is_relative() {
                *s = dir.join(s.as_str()).display().to_string();
            }
        }
    }
}

/// Parse the text of the config file `path` (its relative file paths are read from its folder) with
/// `overrides` into a validated [`Config`].
pub fn parse_file_str(text: &str, path: &Path, overrides: &[String]) -> Result<Config, ConfigError> {
    parse_in(text, &path.display().to_string(), Some(path.parent().unwrap_or(Path::new(""))), overrides)
}

/// [`parse_str`], with the relative paths of a file in folder `dir` resolved against it.
fn parse_in(text: &str, origin: &str, dir: Option<&Path>, overrides: &[String]) -> Result<Config, ConfigError> {
    let mut value: toml::Value = text.parse().map_err(|e: toml::de::Error| ConfigError::Parse {
        origin: origin.into(),
        message: describe_toml_error(text, &e, true),
    })?;
    if let Some(dir) = dir {
        resolve_paths(&mut value, dir);
    }
    for ov in overrides {
        apply_override(&mut value, ov)?;
    }
    // Round-trip through text so that type errors point at the offending key and line.
    let merged =
        toml::to_string(&value).map_err(|e| ConfigError::Parse { origin: origin.into(), message: e.to_string() })?;
    let mut cfg: Config = toml::from_str(&merged).map_err(|e: toml::de::Error| ConfigError::Parse {
        // A wrong type or unknown key that a `--set` put there is the `--set`'s fault, not the file's.
        origin: match error_key(&merged, &e).and_then(|k| overrides.iter().rev().find(|ov| override_covers(ov, &k))) {
            Some(ov) => format!("--set {ov}"),
            // The file alone is fine: the --sets broke it.
            None if !overrides.is_empty() && toml::from_str::<Config>(text).is_ok() => {
                format!("--set {}", overrides.join(" --set "))
            }
            None => origin.to_string(),
        },
        message: describe_toml_error(&merged, &e, false),
    })?;
    // What an absent workload means depends on the pattern, which a field default cannot see: fill
    // it in, so that the config a result file or checkpoint stores says which workload was run.
    if cfg.traffic.workload_phits.is_none() && cfg.traffic.pattern != PatternKind::AllToAllShift {
        cfg.traffic.workload_phits = Some(DEFAULT_WORKLOAD_PHITS);
    }
    cfg.validate()?;
    Ok(cfg)
}

/// The dotted key of the line a TOML error points at (`traffic.load`), if it points at a key line.
fn error_key(text: &str, e: &toml::de::Error) -> Option<String> {
    let span = e.span()?;
    let line_start = text[..span.start.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next()?.trim();
    if line.starts_with('[') {
        // A table where a value belongs (`--set faults.random_links={a=1}` renders as a section).
        return Some(line.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    }
    let key = line.split_once('=')?.0.trim().trim_matches(|c| c == '"' || c == '\'').to_string();
    let section = text[..line_start]
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('['))
        .map(|l| l.trim().trim_matches(|c| c == '[' || c == ']').trim().to_string());
    Some(match section {
        Some(s) if !s.is_empty() => format!("{s}.{key}"),
        _ => key,
    })
}

/// Whether the override `ov` (`key=value`) set `key` or a table holding it.
fn override_covers(ov: &str, key: &str) -> bool {
    let Some((k, _)) = ov.split_once('=') else { return false };
    let k = k.trim();
    key == k || key.starts_with(&format!("{k}."))
}

/// One line: the parser's message plus the offending `key = value` line, each clipped
/// ([`crate::error::clip`]: a value of 100,000 characters is echoed by its start; the line starts
/// with its key, which stays).
/// `numbered`: say the line's number (in the user's own text, not in a merged re-rendering).
fn describe_toml_error(text: &str, e: &toml::de::Error, numbered: bool) -> String {
    // toml's own rendering quotes the whole line (a 100 KB list in one line): the message alone.
    let mut msg = crate::error::clip(&e.message().trim().replace('\n', "; "));
    if let Some(span) = e.span() {
        let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[span.start..].find('\n').map_or(text.len(), |i| span.start + i);
        // Find the table header above, so the key is reported with its section.
        let section = text[..line_start]
            .lines()
            .rev()
            .find(|l| l.trim_start().starts_with('['))
            .map(|l| l.trim().trim_matches(|c| c == '[' || c == ']').to_string());
        let line = crate::error::clip(text[line_start..line_end].trim());
        let at =
            if numbered { format!("line {}, ", text[..line_start].matches('\n').count() + 1) } else { String::new() };
        match section {
            Some(s) if !s.is_empty() => msg = format!("{msg} at {at}`[{s}] {line}`"),
            _ => msg = format!("{msg} at {at}`{line}`"),
        }
    }
    msg
}

/// Read, override and validate a config file.
pub fn load(path: &Path, overrides: &[String]) -> Result<Config, ConfigError> {
    let text = read_config_text(path)?;
    parse_file_str(&text, path, overrides)
}

/// The text of the config file `path`, read with the bounds of [`crate::input`] (so that
/// `/dev/zero` is refused at once).
pub fn read_config_text(path: &Path) -> Result<String, ConfigError> {
    crate::input::read_text(path, crate::input::CONFIG_MAX_BYTES)
        .map_err(|why| ConfigError::Io { path: path.display().to_string(), why })
}

/// Apply one `key.path=value` override; the value is read as a TOML literal, else as a string.
pub fn apply_override(root: &mut toml::Value, ov: &str) -> Result<(), ConfigError> {
    let (key, raw) = ov.split_once('=').ok_or_else(|| ConfigError::Parse {
        origin: "--set".into(),
        message: format!("`{ov}` is not of the form key=value"),
    })?;
    let key = key.trim();
    let parsed = parse_literal(raw.trim());
    let mut cur = root;
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(ConfigError::Parse { origin: "--set".into(), message: format!("`{key}` is not a valid key") });
    }
    for (i, part) in parts.iter().enumerate() {
        let table = cur.as_table_mut().ok_or_else(|| ConfigError::Parse {
            origin: "--set".into(),
            message: format!("`{}` is not a table", parts[..i].join(".")),
        })?;
        if i + 1 == parts.len() {
            table.insert(part.to_string(), parsed);
            return Ok(());
        }
        cur = table.entry(part.to_string()).or_insert_with(|| toml::Value::Table(Default::default()));
    }
    Ok(())
}

/// Read a command-line value as TOML (`0.7`, `[4,4]`, `true`), falling back to a bare string.
pub fn parse_literal(raw: &str) -> toml::Value {
    let doc = format!("v = {raw}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| toml::Value::String(raw.into())),
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

/// A config value chosen by name from a fixed list (a router mode, a pattern, a mode, a
/// partitioning method): read and written by its name, so the config holds the typed value and an
/// unknown name is refused while parsing, naming the key and the names allowed.
pub trait Named: Copy + Sized + 'static {
    /// The dotted config key the value is read from.
    const KEY: &'static str;
    /// Every value, with its name.
    fn all() -> Vec<(Self, &'static str)>;
    /// The value's name.
    fn name(self) -> &'static str;
    /// Every name, in order.
    fn names() -> Vec<&'static str> {
        Self::all().into_iter().map(|(_, n)| n).collect()
    }
    /// The value named `name`.
    fn from_name(name: &str) -> Option<Self> {
        Self::all().into_iter().find(|(_, n)| *n == name).map(|(v, _)| v)
    }
}

/// `#[serde(with = "by_name")]`: a [`Named`] value as its name.
mod by_name {
    use super::{ConfigError, Named};
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer, T: Named>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: Named>(d: D) -> Result<T, D::Error> {
        let name = String::deserialize(d)?;
        T::from_name(&name).ok_or_else(|| {
            D::Error::custom(ConfigError::value(
                T::KEY,
                format!("\"{name}\""),
                format!("allowed: {}", T::names().join(", ")),
            ))
        })
    }
}

/// The router modes are named by their own tables ([`RouterOption::ALL`]).
macro_rules! named_router_option {
    ($($t:ty),*) => {$(
        impl Named for $t {
            const KEY: &'static str = <$t as RouterOption>::KEY;
            fn all() -> Vec<(Self, &'static str)> {
                <$t as RouterOption>::ALL.iter().map(|&(v, n, _)| (v, n)).collect()
            }
            fn name(self) -> &'static str {
                <$t as RouterOption>::ALL.iter().find(|(v, _, _)| *v == self).map_or("", |&(_, n, _)| n)
            }
        }
    )*};
}
named_router_option!(Allocator, Throttle, InjectionVcs, EjectionVcs, Allocation, Reroute);

/// The schema of a router mode for the generated reference (`hxsim docs reference`): its names with
/// their one-line descriptions, from the same table.
macro_rules! router_option_schema {
    ($($t:ty),*) => {$(
        impl JsonSchema for $t {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($t).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let one_of: Vec<serde_json::Value> = <$t as RouterOption>::ALL
                    .iter()
                    .map(|&(_, name, doc)| serde_json::json!({ "type": "string", "const": name, "description": doc }))
                    .collect();
                schemars::json_schema!({ "oneOf": one_of })
            }
        }
    )*};
}
router_option_schema!(Allocator, Throttle, InjectionVcs, EjectionVcs, Allocation, Reroute);

impl Named for PatternKind {
    const KEY: &'static str = "traffic.pattern";
    fn all() -> Vec<(Self, &'static str)> {
        PatternKind::ALL.iter().map(|&k| (k, k.name())).collect()
    }
    fn name(self) -> &'static str {
        PatternKind::name(self)
    }
}

impl TrafficMode {
    /// Every mode with its `traffic.mode` name.
    const ALL: [(TrafficMode, &'static str); 2] =
        [(TrafficMode::Bernoulli, "bernoulli"), (TrafficMode::Fixed, "fixed")];
}

impl Named for TrafficMode {
    const KEY: &'static str = "traffic.mode";
    fn all() -> Vec<(Self, &'static str)> {
        TrafficMode::ALL.to_vec()
    }
    fn name(self) -> &'static str {
        TrafficMode::ALL.iter().find(|(m, _)| *m == self).map_or("", |&(_, n)| n)
    }
}

impl Named for partitioning::Method {
    const KEY: &'static str = "partition.method";
    fn all() -> Vec<(Self, &'static str)> {
        partitioning::Method::ALL.iter().map(|&m| (m, m.name())).collect()
    }
    fn name(self) -> &'static str {
        partitioning::Method::name(self)
    }
}

fn one_of(key: &str, value: &str, allowed: &[&str]) -> Result<(), ConfigError> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(ConfigError::value(key, format!("\"{value}\""), format!("allowed: {}", allowed.join(", "))))
    }
}

impl Config {
    /// The files the config names and a run reads, with their keys: `faults.file` and, for
    /// `kind = "graph"`, `topology.file` (an output must not name them).
    pub fn input_files(&self) -> Vec<(&'static str, PathBuf)> {
        let mut v: Vec<(&'static str, PathBuf)> =
            self.faults.file.iter().map(|f| ("faults.file", PathBuf::from(f))).collect();
        if let TopologyConfig::Graph(g) = &self.topology {
            v.push(("topology.file", PathBuf::from(&g.file)));
        }
        v
    }

    /// Check every value range and cross-key constraint that does not need the built topology.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.topology.validate()?;
        if let Some(w) = &self.workload {
            w.validate()?;
        }
        let r = &self.router;
        if !(1..=1024).contains(&r.input_buffer_packets) {
            return Err(ConfigError::value(
                "router.input_buffer_packets",
                r.input_buffer_packets,
                "between 1 and 1024",
            ));
        }
        if !(1..=1024).contains(&r.output_buffer_packets) {
            return Err(ConfigError::value(
                "router.output_buffer_packets",
                r.output_buffer_packets,
                "between 1 and 1024",
            ));
        }
        if !(1..=64).contains(&r.crossbar_latency) {
            return Err(ConfigError::value("router.crossbar_latency", r.crossbar_latency, "between 1 and 64 cycles"));
        }
        if !(1..=16).contains(&r.crossbar_speedup) {
            return Err(ConfigError::value("router.crossbar_speedup", r.crossbar_speedup, "between 1 and 16"));
        }
        if !(0.0..=1.0).contains(&r.injection_threshold) {
            return Err(ConfigError::value("router.injection_threshold", r.injection_threshold, "between 0 and 1"));
        }
        if r.reroute == Reroute::OutputFrees && r.allocation == Allocation::Vc {
            // Per-VC allocation has no refused turns: every head requests at every turn.
            return Err(ConfigError::value(
                "router.reroute",
                "output-frees",
                "`each-turn` where router.allocation = \"vc\", which has no refused turns to wait out",
            ));
        }
        if !(1..=u16::MAX as u64).contains(&r.injection_window) {
            return Err(ConfigError::value(
                "router.injection_window",
                r.injection_window,
                "an integer from 1 to 65535 packets",
            ));
        }
        if !(1..=1000).contains(&self.link.latency) {
            return Err(ConfigError::value("link.latency", self.link.latency, "between 1 and 1000 cycles"));
        }
        if let Some((k, &l)) = self.link.class_latency.iter().find(|(_, l)| !(1..=1000).contains(*l)) {
            return Err(ConfigError::value(&format!("link.class_latency.{k}"), l, "between 1 and 1000 cycles"));
        }
        if !(1..=4096).contains(&self.packet.size_phits) {
            return Err(ConfigError::value("packet.size_phits", self.packet.size_phits, "between 1 and 4096"));
        }
        let ro = &self.routing;
        one_of("routing.algorithm", &ro.algorithm, &crate::routing::names())?;
        one_of("routing.vc_policy", &ro.vc_policy, &crate::routing::vc::policy_names())?;
        if !(1..=63).contains(&ro.escape_vcs) {
            return Err(ConfigError::value("routing.escape_vcs", ro.escape_vcs, "between 1 and 63"));
        }
        if ro.max_deroutes > 64 {
            return Err(ConfigError::value(
                "routing.max_deroutes",
                ro.max_deroutes,
                "between 1 and 64, or 0 for the default (n, the number of dimensions)",
            ));
        }
        if ro.extra_hops > 64 {
            return Err(ConfigError::value("routing.extra_hops", ro.extra_hops, "between 0 and 64"));
        }
        if ro.vcs > crate::routing::vc::MAX_VCS {
            return Err(ConfigError::value(
                "routing.vcs",
                ro.vcs,
                format!(
                    "between 1 and {}, or 0 for the routing's default: the router keeps at most that many VCs per port",
                    crate::routing::vc::MAX_VCS
                ),
            ));
        }
        let tr = &self.traffic;
        let shift = tr.pattern == PatternKind::AllToAllShift;
        if !(tr.load > 0.0 && tr.load <= 1.0) {
            return Err(ConfigError::value("traffic.load", tr.load, "phits/cycle/server in (0, 1]"));
        }
        if let Some(m) = tr.shift_message_packets {
            if !shift || !(1..=1 << 20).contains(&m) {
                return Err(ConfigError::value(
                    "traffic.shift_message_packets",
                    m,
                    format!(
                        "between 1 and 2^20, and only with traffic.pattern = \"{}\" (the pattern is \"{}\")",
                        PatternKind::AllToAllShift,
                        tr.pattern
                    ),
                ));
            }
        }
        // With the shift, whole messages: a server's last message cut short is no exchange step.
        let unit = self.packet.size_phits as u64 * if shift { tr.message_packets() } else { 1 };
        // Absent: one full exchange with the shift, else the default (a file always has it filled in,
        // see `TrafficFile`; only a config built in code can lack it).
        if let Some(w) =
            tr.workload_phits.filter(|&w| tr.mode == TrafficMode::Fixed && (w == 0 || !w.is_multiple_of(unit)))
        {
            return Err(ConfigError::value(
                "traffic.workload_phits",
                w,
                if shift {
                    format!(
                        "a positive multiple of packet.size_phits x traffic.shift_message_packets ({} x {} = \
                         {unit}: whole messages), or absent for one full exchange",
                        self.packet.size_phits,
                        tr.message_packets()
                    )
                } else {
                    format!("a positive multiple of packet.size_phits ({})", self.packet.size_phits)
                },
            ));
        }
        if let Some(g) = tr.group_switches {
            if tr.pattern != PatternKind::AdversarialGroup || g == 0 {
                return Err(ConfigError::value(
                    "traffic.group_switches",
                    g,
                    format!(
                        "at least 1, and only with traffic.pattern = \"adversarial-group\" (the pattern is \"{}\")",
                        tr.pattern
                    ),
                ));
            }
        }
        if !(1..=1_000_000).contains(&tr.source_queue_packets) {
            return Err(ConfigError::value(
                "traffic.source_queue_packets",
                tr.source_queue_packets,
                "between 1 and 1000000",
            ));
        }
        let s = &self.simulation;
        if s.measure_cycles == 0 && tr.mode == TrafficMode::Bernoulli {
            return Err(ConfigError::value("simulation.measure_cycles", 0, "at least 1 cycle"));
        }
        if let Some(r) = self.faults.retransmit_cycles.filter(|&r| r >= s.watchdog_cycles) {
            return Err(ConfigError::value(
                "faults.retransmit_cycles",
                r,
                format!(
                    "below simulation.watchdog_cycles ({}): a network that only waits for a retransmission would be \
                     called deadlocked; raise the watchdog or shorten the timeout",
                    s.watchdog_cycles
                ),
            ));
        }
        let transit = self.transit_bound();
        if s.watchdog_cycles < transit.max(100) {
            return Err(ConfigError::value(
                "simulation.watchdog_cycles",
                s.watchdog_cycles,
                format!(
                    "at least {} cycles: 100, and 2 x (link.latency + packet.size_phits + router.crossbar_latency) = \
                     {transit}, the longest a packet may go without moving in a network that is not deadlocked (a \
                     link transit, then the credit for it)",
                    transit.max(100)
                ),
            ));
        }
        if s.measure_until_steady
            && tr.mode == TrafficMode::Bernoulli
            && s.max_cycles > 0
            && s.max_cycles < s.warmup_cycles + s.measure_cycles
        {
            return Err(ConfigError::value(
                "simulation.max_cycles",
                s.max_cycles,
                format!(
                    "with simulation.measure_until_steady, at least warmup_cycles + measure_cycles ({}), or 0 for 8 times that",
                    s.warmup_cycles + s.measure_cycles
                ),
            ));
        }
        if self.output.sample_cycles == 0 {
            return Err(ConfigError::value("output.sample_cycles", 0, "at least 1 cycle"));
        }
        self.faults.validate()?;
        // What each routing runs on comes from its registry entry, and so does the advice.
        let kind = self.topology.kind();
        let entry = crate::routing::entry(&ro.algorithm).expect("routing.algorithm was checked against the registry");
        if !entry.runs_on(kind) {
            return Err(ConfigError::value(
                "routing.algorithm",
                format!("\"{}\"", ro.algorithm),
                format!(
                    "{} runs on topology.kind = {}; on a {kind} use one of: {}",
                    ro.algorithm,
                    entry.families.iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(" or "),
                    crate::routing::names_for(kind, false).join(", ")
                ),
            ));
        }
        if self.faults.any() && !entry.fault_tolerant {
            return Err(ConfigError::value(
                "routing.algorithm",
                format!("\"{}\"", ro.algorithm),
                format!(
                    "{} cannot route around a failed link or switch (a packet whose only hop is dead fails the \
                     run); with faults ({}) on a {kind} use one of: {}",
                    ro.algorithm,
                    self.faults.describe(),
                    crate::routing::names_for(kind, true).join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// Longest time a packet may legitimately make no progress in a network that is not deadlocked:
    /// a link transit of its head and tail plus the crossbar, then the credit back over the link,
    /// counted twice for margin. The deadlock watchdog must be longer. (The longest link class
    /// counts: `link.class_latency` values above `link.latency` too.)
    pub fn transit_bound(&self) -> u64 {
        let lat = self.link.class_latency.values().copied().chain([self.link.latency]).max().unwrap_or(1);
        let one = lat + self.packet.size_phits as u64 + self.router.crossbar_latency;
        2 * one
    }

    /// A cheap lower bound of the memory a run of this config needs, in bytes, and what drives it
    /// (see [`Config::check_memory`]). It counts the state whose size the config fixes: the router
    /// and server records [`crate::network::state_bytes`] allocates up front (every port's input
    /// and output records and VCs, every server's), and with faults on a family without a closed
    /// form the all-pairs distance table (one byte per switch pair; a faulty HyperX, HyperZ or fat
    /// tree keeps sparse exceptions instead, `topology::distances` and `topology::exceptions`, of
    /// which the per-switch part is counted, and for a fat tree with random link faults the
    /// exceptions of [`Config::distance_exceptions_bound`]; the build itself stops before the
    /// exceptions it finds outgrow the memory left, `sim::build_network_within`). `ranks`
    /// processes share the per-switch state;
    /// each holds the distance table. `vcs`: the VCs per port of the built routing, when known (else
    /// `Config::vcs_estimate`, a lower bound). Packets come on top: [`Config::packet_bytes_bound`].
    pub fn memory_lower_bound(&self, ranks: usize, vcs: Option<usize>) -> (u64, String) {
        let (switches, servers) = self.topology.size();
        let ports = self.topology.router_ports();
        let vcs = vcs.map_or_else(|| self.vcs_estimate(), |v| v as u128);
        let server_in_vcs = if self.router.injection_vcs == InjectionVcs::Any { vcs } else { 1 };
        let state = crate::network::state_bytes(switches, ports, servers, vcs, server_in_vcs) / ranks.max(1) as u128;
        let table = if self.faults.any() && self.topology.faulty_distance_table() { switches * switches } else { 0 };
        // Without a table, faulty distances keep a component label and an exception offset per
        // switch (`topology::exceptions`, `topology::distances`), and the exceptions, whose number
        // depends on where the faults fall (reported by `hxsim analyze`): at least the bound of
        // `distance_exceptions_bound`.
        let sparse = if self.faults.any() && table == 0 { 8 * switches } else { 0 };
        let exceptions = self.distance_exceptions_bound();
        let sparse = sparse + exceptions * crate::topology::exceptions::BYTES_PER_EXCEPTION as u128;
        let routes = self.routing_table_bytes();
        let series = self.timeseries_bytes();
        let total = (state + table + sparse + routes + series).min(u64::MAX as u128) as u64;
        let why = format!(
            "{switches} switches with {ports} router ports x {vcs} VCs of router state{}{}{}{}",
            if server_in_vcs < vcs { " (a server's port: one input VC)" } else { "" },
            if table > 0 {
                format!(", plus a {switches} x {switches} distance table because [faults] has faults")
            } else if exceptions > 0 {
                format!(
                    ", plus sparse faulty distances (closed form and at least {exceptions} exceptions of {} bytes, {} \
                     per failed link of faults.random_links = {}) because [faults] has faults",
                    crate::topology::exceptions::BYTES_PER_EXCEPTION,
                    self.topology.exceptions_per_failed_link(),
                    self.faults.random_links
                )
            } else if sparse > 0 {
                ", plus sparse faulty distances (closed form and exceptions) because [faults] has faults".to_string()
            } else {
                String::new()
            },
            if routes > 0 {
                format!(
                    ", plus {}'s {switches} x {switches} tables of next hops (2 bytes) and VCs (1 byte)",
                    self.routing.algorithm
                )
            } else {
                String::new()
            },
            if series > 0 {
                format!(
                    ", plus a time series of {} rows (output.sample_cycles = {}) held three times",
                    series / TIMESERIES_ROW_BYTES,
                    self.output.sample_cycles
                )
            } else {
                String::new()
            }
        );
        (total, why)
    }

    /// A lower bound of the distance exceptions a faulty HyperZ or fat tree keeps
    /// ([`crate::topology::exceptions`]): `faults.random_links` (distinct links, at most as many as
    /// the network has) times the family's bound per failed link
    /// ([`crate::topology::registry::TopologySpec::exceptions_per_failed_link`], derived for fat
    /// trees, 0 for the others). That bound holds for fault sets that leave the network connected
    /// and fail no switch, so this is 0 unless the random links are the only faults besides
    /// explicit `faults.links` (which only add failures and lengthen distances) and
    /// `faults.unreachable = "error"` (a split network is then refused, and never needs its
    /// exceptions).
    pub fn distance_exceptions_bound(&self) -> u128 {
        let f = &self.faults;
        let only_links = f.random_switches == 0
            && f.switches.is_empty()
            && f.file.is_none()
            && f.shapes.is_empty()
            && f.lifetime.is_none();
        if !only_links || f.unreachable != "error" || f.random_links == 0 {
            return 0;
        }
        let (_, servers) = self.topology.size();
        let links = self.topology.router_ports().saturating_sub(servers) / 2;
        (f.random_links as u128).min(links).saturating_mul(self.topology.exceptions_per_failed_link())
    }

    /// Bytes of the time series a run keeps in memory until it ends: one row per
    /// `output.sample_cycles` interval of the longest run the schedule allows, held by each
    /// partition, by the rank's result and by the merged result ([`TIMESERIES_ROW_BYTES`] for the
    /// three). 0 for a fixed workload without `simulation.max_cycles` (its end is not known).
    /// `output.sample_cycles = 1` over a million cycles is 168 MB.
    pub fn timeseries_bytes(&self) -> u128 {
        let schedule = self.schedule();
        let end = schedule.until_steady.unwrap_or(schedule.end);
        if end == u64::MAX {
            return 0;
        }
        end.div_ceil(self.output.sample_cycles.max(1)) as u128 * TIMESERIES_ROW_BYTES
    }

    /// VCs per port for the memory estimates before the routing is built: `routing.vcs`, or 2 when
    /// the routing chooses (its smallest choice on any network; most choose more, e.g. `minimal`
    /// twice the diameter, so [`crate::sim`] checks again with the built routing's count).
    fn vcs_estimate(&self) -> u128 {
        if self.routing.vcs == 0 {
            2
        } else {
            self.routing.vcs as u128
        }
    }

    /// The most memory the packets of a run can take, in bytes: every input and output buffer of
    /// every router port full ([`crate::network::PACKET_BYTES`] each), and every server's source
    /// queue full ([`crate::network::source_queue_bytes`] each). A saturated run approaches it;
    /// below saturation the packets take a small part of it. `vcs` as in
    /// [`Config::memory_lower_bound`].
    pub fn packet_bytes_bound(&self, vcs: Option<usize>) -> u64 {
        let (_, servers) = self.topology.size();
        let ports = self.topology.router_ports();
        let buffered = ports
            * vcs.map_or_else(|| self.vcs_estimate(), |v| v as u128)
            * (self.router.input_buffer_packets + self.router.output_buffer_packets) as u128;
        let queue = self.traffic.source_queue_packets as u64;
        let per_server = crate::network::source_queue_bytes(queue) as u128;
        (buffered * crate::network::PACKET_BYTES + servers * per_server).min(u64::MAX as u128) as u64
    }

    /// Bytes of the all-pairs tables of the routings that keep them ([`crate::routing::Entry`]'s
    /// `all_pairs_tables`: DFSSSP, LASH): a 2-byte port per (switch, destination switch) and a VC
    /// byte per (source, destination) pair; 0 for the others (SPDA's trees are `O(switches)` each).
    pub fn routing_table_bytes(&self) -> u128 {
        let (switches, _) = self.topology.size();
        match crate::routing::entry(&self.routing.algorithm) {
            Some(e) if e.all_pairs_tables => 3 * switches * switches,
            _ => 0,
        }
    }

    /// Refuse (bad input, exit code 2) a config whose [`Config::memory_lower_bound`] exceeds `limit`
    /// (`--max-memory`) or, without one, the memory this process may still use
    /// ([`crate::memory::memory_limit`]: `MemAvailable`, `ulimit -v` and `-d`, its own cgroup's
    /// limit): such a run would allocate for a long time and then abort. `vcs` as in [`Config::memory_lower_bound`].
    pub fn check_memory(&self, ranks: usize, limit: Option<u64>, vcs: Option<usize>) -> Result<(), ConfigError> {
        self.check_memory_with(ranks, limit, vcs, 0)
    }

    /// [`Config::check_memory`] with `workload` bytes more per process: the compiled workload of
    /// `[workload]` and its run-time state, known once it is built (a workload too large on its
    /// own is refused naming `workload.tasks` or `workload.file`).
    pub fn check_memory_with(
        &self,
        ranks: usize,
        limit: Option<u64>,
        vcs: Option<usize>,
        workload: u64,
    ) -> Result<(), ConfigError> {
        let Some((avail, source)) = limit.map(|l| (l, "--max-memory".to_string())).or_else(crate::memory::memory_limit)
        else {
            return Ok(());
        };
        let (net_need, why) = self.memory_lower_bound(ranks, vcs);
        let need = net_need.saturating_add(workload);
        if need <= avail {
            return Ok(());
        }
        if let (Some(w), true) = (&self.workload, workload > 0 && net_need <= avail) {
            let (key, value) = match &w.file {
                Some(f) => ("workload.file", format!("\"{}\"", f.display())),
                None => ("workload.tasks", w.tasks.to_string()),
            };
            return Err(ConfigError::value(
                key,
                value,
                format!(
                    "a workload that fits in memory: its operations and their run-time state take {} on top of \
                     the network's {} ({why}), but {source} is {}",
                    human_bytes(workload),
                    human_bytes(net_need),
                    human_bytes(avail)
                ),
            ));
        }
        let series = self.timeseries_bytes().min(u64::MAX as u128) as u64;
        if series > 0 && need.saturating_sub(series) <= avail {
            return Err(ConfigError::value(
                "output.sample_cycles",
                self.output.sample_cycles,
                format!(
                    "a sampling interval whose time series fits in memory: with it the run needs at least {} ({why}) \
                     but {source} is {}; sample less often, or run fewer cycles",
                    human_bytes(need),
                    human_bytes(avail)
                ),
            ));
        }
        let routes = self.routing_table_bytes().min(u64::MAX as u128) as u64;
        if routes > 0 && need - routes <= avail {
            return Err(ConfigError::value(
                "routing.algorithm",
                format!("\"{}\"", self.routing.algorithm),
                format!(
                    "a routing whose tables fit in memory: with them the run needs at least {} ({why}) but {source} \
                     is {}; use a routing that computes its routes (e.g. minimal, sp, ecmp) or a smaller network",
                    human_bytes(need),
                    human_bytes(avail)
                ),
            ));
        }
        let exceptions = (self.distance_exceptions_bound() * crate::topology::exceptions::BYTES_PER_EXCEPTION as u128)
            .min(u64::MAX as u128) as u64;
        if exceptions > 0 && need - exceptions <= avail {
            return Err(ConfigError::value(
                "faults",
                self.faults.describe(),
                format!(
                    "a fault set whose distance exceptions fit in memory: with them the run needs at least {} ({why}) \
                     but {source} is {}; use fewer faults or a smaller network",
                    human_bytes(need),
                    human_bytes(avail)
                ),
            ));
        }
        let (switches, servers) = self.topology.size();
        Err(ConfigError::value(
            "topology",
            format!("a {} of {switches} switches and {servers} servers", self.topology.kind()),
            format!(
                "a network whose state fits in memory: it needs at least {} ({why}) but {source} is {}",
                human_bytes(need),
                human_bytes(avail)
            ),
        ))
    }

    /// When the run measures and ends ([`Schedule`]).
    pub fn schedule(&self) -> Schedule {
        let s = &self.simulation;
        let fixed = self.traffic.mode == TrafficMode::Fixed || self.workload.is_some();
        let until = s.warmup_cycles + s.measure_cycles;
        Schedule {
            fixed,
            warmup: if fixed { 0 } else { s.warmup_cycles },
            measure: s.measure_cycles,
            end: match (fixed, s.max_cycles) {
                (false, _) => until,
                (true, 0) => u64::MAX,
                (true, m) => m,
            },
            until_steady: (s.measure_until_steady && !fixed).then(|| match s.max_cycles {
                0 => 8 * until,
                m => m,
            }),
        }
    }

    /// What the routing reads when it is built: the `[routing]` section typed (`0` for "the
    /// algorithm's default" becomes `None`), the packet size and the seed.
    pub fn routing_params(&self) -> crate::routing::RoutingParams {
        let r = &self.routing;
        crate::routing::RoutingParams {
            algorithm: r.algorithm.clone(),
            vcs: (r.vcs != 0).then_some(r.vcs),
            vc_policy: r.vc_policy.clone(),
            escape_vcs: r.escape_vcs,
            escape_root: r.escape_root,
            max_deroutes: (r.max_deroutes != 0).then_some(r.max_deroutes),
            extra_hops: r.extra_hops as u32,
            packet_phits: self.packet.size_phits as u32,
            seed: self.seed,
            faults: self.faults.describe(),
        }
    }

    /// The config as TOML text (recorded in result files).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: &str = "[topology]\nsides=[4,4]\nservers_per_switch=4\n";

    #[test]
    fn defaults_follow_surepath_table2() {
        let c = parse_str(MIN, "t", &[]).unwrap();
        assert_eq!(c.router.input_buffer_packets, 8);
        assert_eq!(c.router.output_buffer_packets, 4);
        assert_eq!(c.packet.size_phits, 16);
        assert_eq!(c.link.latency, 1);
        assert_eq!(c.router.crossbar_latency, 1);
        assert_eq!(c.router.crossbar_speedup, 2);
    }

    #[test]
    fn set_overrides_nested_keys() {
        let c = parse_str(MIN, "t", &["traffic.load=0.7".into(), "routing.algorithm=valiant".into()]).unwrap();
        assert_eq!(c.traffic.load, 0.7);
        assert_eq!(c.routing.algorithm, "valiant");
    }

    /// The exceptions a faulty fat tree keeps are counted up front (38 links of a 4-ary 4-tree, at
    /// least 16 each: `z_2 z_3 z_4 / z_{l+1}` = 64 / 4), and a limit that only they exceed names
    /// `faults`; without them it would fit.
    #[test]
    fn memory_check_counts_a_fat_trees_exceptions_and_names_faults() {
        let tree = "[topology]\nkind=\"fattree\"\nzones=[4,4,4,4]\nroots=[1,4,16,64]\n[routing]\nalgorithm=\"nca\"\n";
        let faulty =
            parse_str(tree, "t", &["faults.random_links=38".into(), "output.sample_cycles=100000".into()]).unwrap();
        assert_eq!(faulty.distance_exceptions_bound(), 38 * 16);
        let (need, why) = faulty.memory_lower_bound(1, None);
        assert!(why.contains("at least 608 exceptions"), "{why}");
        let switched = parse_str(
            tree,
            "t",
            &["faults.random_links=38".into(), "output.sample_cycles=100000".into(), "faults.random_switches=1".into()],
        );
        assert_eq!(switched.unwrap().memory_lower_bound(1, None).0, need - 608 * 5);
        // Short of what dropping the time series (one row) would save: only the exceptions tip it.
        let series = faulty.timeseries_bytes() as u64;
        assert!(series < 608 * 5, "{series}");
        let e = faulty.check_memory(1, Some(need - series - 1), None).unwrap_err().to_string();
        assert!(e.contains("`faults`") && e.contains("faults.random_links = 38"), "{e}");
        assert!(faulty.check_memory(1, Some(need), None).is_ok());
    }

    #[test]
    fn errors_name_key_and_allowed_values() {
        let e = parse_str(MIN, "t", &["traffic.load=1.5".into()]).unwrap_err().to_string();
        assert!(e.contains("traffic.load") && e.contains("1.5") && e.contains("(0, 1]"), "{e}");
        let e = parse_str(MIN, "t", &["routing.algorithm=foo".into()]).unwrap_err().to_string();
        assert!(e.contains("routing.algorithm") && e.contains("valiant"), "{e}");
        let e = parse_str(MIN, "t", &["traffic.lod=0.5".into()]).unwrap_err().to_string();
        assert!(e.contains("lod"), "{e}");
        let e = parse_str(MIN, "t", &["traffic.load=\"x\"".into()]).unwrap_err().to_string();
        assert!(e.contains("load") || e.contains("invalid type"), "{e}");
    }
}
