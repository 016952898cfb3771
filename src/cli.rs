//! The command line of `hxsim`: every subcommand, its arguments and their help texts (clap). Only
//! parsing lives here; what each subcommand does is in [`crate::commands`], and `main.rs` joins the
//! two.

use crate::config::Named;
use crate::network::{CandidateCache, FetchAhead};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use std::path::PathBuf;

/// Parallel discrete-event simulator for HyperX/HyperZ interconnection networks.
#[derive(clap::Parser, Debug)]
#[command(name = "hxsim", version = crate::build_info::LONG_VERSION, about, long_about = None)]
pub struct Cli {
    /// More log output on stderr: -v info, -vv debug, -vvv trace (RUST_LOG, e.g. `RUST_LOG=hxsim=debug`,
    /// overrides it).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options shared by the commands that read a config.
#[derive(clap::Args, Debug, Clone)]
pub struct ConfigArgs {
    /// Experiment description (TOML).
    pub config: PathBuf,
    /// Override a config key, e.g. `--set traffic.load=0.7` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

/// The config of `hxsim run`: as [`ConfigArgs`], but none with `--resume` (the checkpoint has it).
#[derive(clap::Args, Debug, Clone)]
pub struct RunConfigArgs {
    /// Experiment description (TOML); not with `--resume`.
    #[arg(required_unless_present = "resume", conflicts_with = "resume")]
    pub config: Option<PathBuf>,
    /// Override a config key, e.g. `--set traffic.load=0.7` (repeatable). With `--resume`, only
    /// keys that take effect after the checkpoint's cycle (failure events after it, the end of
    /// the measured window; docs/checkpoint.md), and no checkpoints are written unless
    /// `--checkpoint` is given.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

/// Checkpoint options of `hxsim run`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CheckpointArgs {
    /// Write the whole simulation state to FILE (atomically) every `--checkpoint-every` cycles and
    /// when stopped by SIGTERM, SIGINT or SIGUSR1; `hxsim run --resume FILE` continues from it.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// Cycles between checkpoints (taken at the first window end at or after each multiple).
    #[arg(long, value_name = "CYCLES", requires = "checkpoint")]
    pub checkpoint_every: Option<u64>,
    /// Continue the run saved in FILE (no CONFIG: the config is in the checkpoint). Without
    /// `--checkpoint`, goes on checkpointing to FILE at the saved run's interval.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
}

/// Where results go (HDF5).
#[derive(clap::Args, Debug, Clone)]
pub struct OutputArgs {
    /// Results file (HDF5); default `results/<name>-<UTC timestamp>.h5` (`...-sweep.h5` for a sweep).
    /// An existing file is replaced.
    #[arg(long, short, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Write no results file.
    #[arg(long, conflicts_with = "output")]
    pub no_output: bool,
}

impl OutputArgs {
    /// The file to write, or `None` for `--no-output`.
    pub fn path(&self, name: &str, suffix: &str) -> Option<PathBuf> {
        if self.no_output {
            None
        } else {
            Some(self.output.clone().unwrap_or_else(|| crate::output::default_path(name, suffix)))
        }
    }
}

/// The subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Simulate one experiment and print its summary.
    Run {
        /// The experiment description and its `--set` overrides.
        #[command(flatten)]
        cfg: RunConfigArgs,
        /// Checkpoint and restart.
        #[command(flatten)]
        checkpoint: CheckpointArgs,
        /// Partitions, one thread each; results are identical for any value [default: 1; with
        /// --resume, the checkpoint's].
        #[arg(long)]
        threads: Option<usize>,
        /// Print the summary as one JSON object.
        #[arg(long)]
        json: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Where the results file goes.
        #[command(flatten)]
        out: OutputArgs,
        /// Also write the run's JSON record here (name, seed, complete, status, the summary's keys,
        /// the config), atomically, whatever happens to stdout; for job scripts and `hxsim merge`.
        #[arg(long, value_name = "FILE")]
        json_out: Option<PathBuf>,
        /// Refuse (exit 2) a config whose model needs more memory than this (e.g. `8G`); default:
        /// the memory available to the process.
        #[arg(long, value_name = "SIZE", value_parser = parse_size)]
        max_memory: Option<u64>,
        /// Fetch the next switches' records into the cache ahead of use: `auto` (where a
        /// partition's router state is more than twice the core's level-2 cache; records last
        /// read a packet's time earlier above 16 times), `on` (all of them) or `off`. A matter
        /// of speed only: results are identical.
        #[arg(long, value_name = "MODE", default_value = "auto", value_parser = fetch_ahead_parser())]
        prefetch: FetchAhead,
        /// Where waiting heads' candidates are kept between their evaluations: `auto` (one head
        /// per input port where that fits a partition's 64 MiB budget, else a few per switch),
        /// `switch` (a few per switch) or `off` (none, nor the cost levels selection reads
        /// cached heads' classes from). A matter of speed and memory only: results are identical.
        #[arg(long, value_name = "MODE", default_value = "auto", value_parser = candidate_cache_parser())]
        candidate_cache: CandidateCache,
    },
    /// Run a config at every point of a grid of values into one HDF5 file.
    ///
    /// The points are the cartesian product of the --set axes; the file holds one group per point
    /// and a table of all points' summaries (/sweep).
    Sweep {
        /// Base experiment description (TOML); not with `--from`.
        #[arg(required_unless_present = "from", conflicts_with = "from")]
        config: Option<PathBuf>,
        /// Run every point from the state saved in this checkpoint (`hxsim run --checkpoint`),
        /// with its config as the base: the swept keys may only be ones that take effect after
        /// the checkpoint's cycle (failure events after it, the end of the measured window).
        #[arg(long, value_name = "CHECKPOINT")]
        from: Option<PathBuf>,
        /// Swept key: `KEY=START:STOP:STEP` (inclusive range), `KEY=A,B,C` (list) or `KEY=VALUE`
        /// (repeatable; e.g. `--set traffic.load=0.1:1.0:0.1 --set routing.algorithm=minimal,valiant`).
        #[arg(long = "set", value_name = "KEY=VALUES")]
        set: Vec<String>,
        /// Points simulated at once, each single-threaded; results are identical for any value.
        #[arg(long, short, default_value_t = 1)]
        jobs: usize,
        /// Refuse (exit 2) a point whose model needs more memory than this (e.g. `8G`); default:
        /// the memory available to the process.
        #[arg(long, value_name = "SIZE", value_parser = parse_size)]
        max_memory: Option<u64>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Where the results file goes.
        #[command(flatten)]
        out: OutputArgs,
    },
    /// Draw the standard figures of a results file (SVG, PNG or PDF).
    ///
    /// For a sweep: accepted load, latency and Jain's index against offered load, one curve per
    /// combination of the other swept values. For a run: its time series.
    Plot {
        /// Results file written by `hxsim run` or `hxsim sweep`.
        file: PathBuf,
        /// Figure file, SVG, PNG or PDF by extension (default: FILE with the extension .svg).
        #[arg(long, short, value_name = "PATH")]
        output: Option<PathBuf>,
        /// Which figure.
        #[arg(long, value_enum, default_value_t = crate::plot::Figure::All)]
        figure: crate::plot::Figure,
        /// Plot the time series of this point of a sweep.
        #[arg(long, value_name = "N")]
        point: Option<usize>,
        /// One figure per value of this swept key (default: `traffic.pattern` when it is swept);
        /// the files are named PATH-VALUE.EXT.
        #[arg(long, value_name = "KEY")]
        by: Option<String>,
        /// Printed width of the whole figure (in, cm, mm or pt); the default is a two-column
        /// paper's text width. PNGs are drawn at 300 dpi for it, SVGs and PDFs sized in points.
        #[arg(long, value_name = "LENGTH", default_value = crate::plot::DEFAULT_WIDTH)]
        width: String,
        /// Size of the text when the figure is printed at --width (pt).
        #[arg(long, value_name = "SIZE", default_value = crate::plot::DEFAULT_FONT)]
        font: String,
    },
    /// How well the switches split into parts (cut links, balance, lookahead), without running.
    Partition {
        /// The experiment description and its `--set` overrides.
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Number of parts (ranks x threads of a run).
        #[arg(long)]
        parts: usize,
        /// How to split the switches; every method side by side when omitted.
        #[arg(long, value_parser = PossibleValuesParser::new(partitioning::Method::names()))]
        method: Option<String>,
        /// Print as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Combine the results of separate runs (e.g. a Slurm job array) into one table or sweep file.
    ///
    /// With `--output FILE.h5`: JSON summaries and HDF5 run files become one sweep file that
    /// `hxsim plot` draws, missing and incomplete points marked (exit code 3 if there are any).
    Merge {
        /// Files holding JSON objects (`hxsim run --json` output, one or more objects each), HDF5
        /// run files (`.h5`, for an `.h5` output), or directories of them read in natural order.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Write here instead of standard output.
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// Table format; default: `csv` when the output file name ends in `.csv`, else `jsonl`.
        #[arg(long, value_parser = ["csv", "jsonl"])]
        format: Option<String>,
        /// The inputs are points 0..N-1 (a `point` field, or the number in the file name, e.g.
        /// `point-7.json`): report the ones missing (exit 3).
        #[arg(long, value_name = "N")]
        expect: Option<usize>,
    },
    /// Print a shell completion script: `hxsim completions bash > /etc/bash_completion.d/hxsim`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Topology properties after faults: switches, servers, links, radix, diameter, distances,
    /// failed and live elements, unreachable pairs.
    Analyze {
        /// The experiment description and its `--set` overrides.
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Print as one JSON object.
        #[arg(long)]
        json: bool,
        /// Instead: diameter and connectivity along the nested random link sequence of the fault
        /// seed, at 0, STEP, 2 STEP, ... N failed links on top of the config's other faults
        /// (SurePath Fig. 1), updating one graph rather than rebuilding it.
        #[arg(long, value_name = "0:N:STEP")]
        sequence: Option<String>,
    },
    /// The config's fault set, and with [faults.lifetime] its state at every step: failed links and
    /// switches, new failures, critical failures repaired, servers lost, diameter, unreachable pairs.
    Faults {
        /// The experiment description and its `--set` overrides.
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Print one JSON object per step.
        #[arg(long)]
        json: bool,
    },
    /// Build the channel dependency graph the routing and VC policy can produce on this network
    /// (with its faults) and report whether it is deadlock free: exit code 0 if so (acyclic, or
    /// Duato's condition for escape-based routings), 1 if not (a cycle, printed as (switch, port,
    /// vc) channels, or packets that cannot move), 2 for bad input.
    CheckDeadlock {
        /// The experiment description and its `--set` overrides.
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Print as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Find a network before simulating it: the cheapest HyperX for a size, radix and bisection
    /// (Ahn et al., SC09, section 3.1.2), its design space, and HyperX against the folded Clos.
    Design(DesignArgs),
    /// Workloads of tasks with causal dependencies: write a built-in kernel as a GOAL schedule
    /// (LogGOPSim's text format), or read a GOAL schedule and report its size.
    Workload(WorkloadArgs),
    /// Print documentation generated from the binary: the configuration reference (every key,
    /// default and allowed value, and the names of every registry), as in docs/reference.md.
    Docs {
        /// Which page.
        #[arg(value_enum)]
        page: DocsPage,
        /// Write the page to this file instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// `hxsim workload`.
#[derive(clap::Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: WorkloadCommand,
}

/// The subcommands of `hxsim workload`.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum WorkloadCommand {
    /// Write a built-in kernel (`workload.kernel`) as a GOAL schedule that `hxsim workload check`,
    /// LogGOPSim's txt2bin and hxsim's GOAL reader read back as the same workload.
    Export(WorkloadExportArgs),
    /// Read a GOAL schedule and print its tasks, operations, messages, the bytes it takes in
    /// memory and its critical path in rounds of one message per task; exit code 2, with the file
    /// and line, if it cannot be replayed (a syntax error, an unknown label, a dependency cycle, a
    /// rank beyond num_ranks, a receive that no send matches, tasks that wait for each other).
    Check {
        /// The GOAL schedule.
        file: PathBuf,
        /// Print as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// Options of `hxsim workload export`: the kernel and its sizes (the `[workload]` keys).
#[derive(clap::Args, Debug, Clone)]
pub struct WorkloadExportArgs {
    /// The kernel.
    #[arg(value_parser = PossibleValuesParser::new(crate::workload::kernels::names()))]
    pub kernel: String,
    /// Tasks (MPI ranks).
    #[arg(long, value_name = "N")]
    pub tasks: u32,
    /// Bytes of each message, or of the whole buffer for the collectives that split it (each
    /// kernel's description says which).
    #[arg(long, value_name = "B")]
    pub bytes: u64,
    /// Iterations (waves of `waterfall`).
    #[arg(long, value_name = "I", default_value_t = 1)]
    pub iterations: u32,
    /// Cycles of computation between iterations.
    #[arg(long, value_name = "C", default_value_t = 0)]
    pub compute_cycles: u64,
    /// Virtual grid of the stencils, sides separated by commas (e.g. `4,4`); default: the most
    /// nearly square or cubic grid of --tasks.
    #[arg(long, value_name = "X,Y[,Z]", value_delimiter = ',')]
    pub grid: Vec<u32>,
    /// The GOAL file to write; default: standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// A page `hxsim docs` generates.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum DocsPage {
    /// The configuration reference (docs/reference.md).
    Reference,
}

/// Parses `--max-memory` (`8G`, `512M`, ...) into bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    crate::memory::parse_bytes(s)
}

/// Parses `--prefetch` (one of [`FetchAhead::NAMES`], which `--help` lists).
fn fetch_ahead_parser() -> impl TypedValueParser<Value = FetchAhead> {
    PossibleValuesParser::new(FetchAhead::NAMES).try_map(|s| {
        FetchAhead::from_name(&s)
            .ok_or_else(|| format!("`{s}` is not a mode (allowed: {})", FetchAhead::NAMES.join(", ")))
    })
}

/// Parses `--candidate-cache` (one of [`CandidateCache::NAMES`], which `--help` lists).
fn candidate_cache_parser() -> impl TypedValueParser<Value = CandidateCache> {
    PossibleValuesParser::new(CandidateCache::NAMES).try_map(|s| {
        CandidateCache::from_name(&s)
            .ok_or_else(|| format!("`{s}` is not a mode (allowed: {})", CandidateCache::NAMES.join(", ")))
    })
}

/// `hxsim design`.
#[derive(clap::Args, Debug, Clone)]
pub struct DesignArgs {
    /// Which design question.
    #[command(subcommand)]
    pub command: DesignCommand,
}

/// The questions `hxsim design` answers.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum DesignCommand {
    /// The HyperX with fewest switches for N endpoints on radix-R switches with relative bisection
    /// bandwidth at least B (Ahn et al., SC09, section 3.1.2). Ties go to fewer dimensions, then
    /// fewer links; T is the smallest that fits, with the feasible range shown.
    Hyperx(HyperxArgs),
    /// Switches per endpoint against network size for radix 32, 64, 128 and 256, HyperX (beta
    /// 0.125, 0.25, 0.5, 1) against the folded Clos, as Ahn et al.'s Fig. 8.
    HyperxVsClos(VsClosArgs),
    /// The HyperZ with fewest switches for N processors on radix-R switches (Adda 2023, section 3.2,
    /// equations (3)-(4) as corrected by the HyperZ SPEC section 8). Ties go to fewer levels, then
    /// fewer links.
    Hyperz(HyperzArgs),
}

/// Options of `hxsim design hyperx`.
#[derive(clap::Args, Debug, Clone)]
pub struct HyperxArgs {
    /// N: endpoints (terminals) needed.
    #[arg(long, value_name = "N")]
    pub endpoints: u64,
    /// R: ports per switch.
    #[arg(long, value_name = "R")]
    pub radix: u64,
    /// B: smallest relative bisection bandwidth, beta = min(K_k S_k)/(2T) (decimal or fraction).
    #[arg(long, value_name = "B")]
    pub bisection: String,
    /// Only regular designs: all S_k equal and all K_k equal.
    #[arg(long)]
    pub regular: bool,
    /// Every K_k equal to this.
    #[arg(long, value_name = "K")]
    pub trunking: Option<u64>,
    /// Flattened butterfly: a regular HyperX with K = 2 (section 3.2).
    #[arg(long, conflicts_with_all = ["regular", "trunking"])]
    pub flattened_butterfly: bool,
    /// Only designs with this many dimensions (L).
    #[arg(long, value_name = "L")]
    pub dims: Option<u64>,
    /// List the best COUNT designs (each shape once, with its cheapest trunking).
    #[arg(long, value_name = "COUNT", default_value_t = 1)]
    pub top: usize,
    /// Print as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Write the best design as an hxsim config (TOML) here.
    #[arg(long, value_name = "FILE")]
    pub write_config: Option<PathBuf>,
    /// Draw the regular design space in the (S, T) plane for L = --dims and K = --trunking (default:
    /// those of the best regular design) as Figs. 4 and 5 (SVG or PNG by extension).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

/// Options of `hxsim design hyperx-vs-clos`.
#[derive(clap::Args, Debug, Clone)]
pub struct VsClosArgs {
    /// Figure file (SVG or PNG by extension).
    #[arg(long, value_name = "FILE")]
    pub plot: PathBuf,
    /// Largest network size, as a power of two (N runs from 2^10 up to 2^MAX).
    #[arg(long, value_name = "MAX", default_value_t = 20)]
    pub max_log2_endpoints: u32,
    /// Print the points as JSON lines as well.
    #[arg(long)]
    pub json: bool,
}

/// Options of `hxsim design hyperz`: the quantities of Adda 2023's design equations (3)-(4) (`N`,
/// `L_max`, `h`, `d`, `q`) and the HyperX search's bisection, family, `--top`, `--json` and
/// `--write-config`.
#[derive(clap::Args, Debug, Clone)]
pub struct HyperzArgs {
    /// N: processors needed (eq. (4)'s R_0min, the total count).
    #[arg(long, value_name = "N")]
    pub processors: u64,
    /// R: ports per switch (eq. (3)'s L_max); every level's radix must fit.
    #[arg(long, value_name = "R")]
    pub radix: u64,
    /// Only Z-nodes of this height h (switch levels); default: any h up to ceil(log2 N).
    #[arg(long, value_name = "H")]
    pub levels: Option<u64>,
    /// Only this many GHC dimensions d; default: any d up to ceil(log2 N).
    #[arg(long, value_name = "D")]
    pub dims: Option<u64>,
    /// q: side links between neighbouring switches, at every level and dimension; default: 1, or the
    /// smallest that meets --bisection.
    #[arg(long, value_name = "Q")]
    pub side_links: Option<u64>,
    /// B: smallest relative bisection, of the GHC cut q*s_min*sum(R_i)/(2*R_0) and of the Z-node tree cut
    /// min R_i*z_i*g_i/R_0 (decimal or fraction); default: none.
    #[arg(long, value_name = "B")]
    pub bisection: Option<String>,
    /// Only regular designs (Definition 3.1): z_i = z, s_k = s, r_i = z^(i-1), g_i = 1.
    #[arg(long)]
    pub regular: bool,
    /// Only fully regular designs (Definition 3.2): regular with z = s (equations (3) and (4)).
    #[arg(long, conflicts_with = "regular")]
    pub fully_regular: bool,
    /// List the best COUNT designs (each shape (s, z_2..z_h) once, with its cheapest z_1, r, g, q).
    #[arg(long, value_name = "COUNT", default_value_t = 1)]
    pub top: usize,
    /// Print as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Write the best design as an hxsim config (TOML) here.
    #[arg(long, value_name = "FILE")]
    pub write_config: Option<std::path::PathBuf>,
}
