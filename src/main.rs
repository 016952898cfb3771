//! `hxsim`: command-line entry point. Parses, validates, dispatches; the work is in the library.

use anyhow::Result;
use clap::{Parser, Subcommand};
use hxsim::cli;
use std::path::PathBuf;
use std::process::ExitCode;

/// Parallel discrete-event simulator for HyperX/HyperZ interconnection networks.
#[derive(Parser, Debug)]
#[command(name = "hxsim", version = hxsim::build_info::LONG_VERSION, about, long_about = None)]
struct Cli {
    /// More log output on stderr: -v info, -vv debug, -vvv trace (RUST_LOG, e.g. `RUST_LOG=hxsim=debug`,
    /// overrides it).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

/// Options shared by the commands that read a config.
#[derive(clap::Args, Debug, Clone)]
struct ConfigArgs {
    /// Experiment description (TOML).
    config: PathBuf,
    /// Override a config key, e.g. `--set traffic.load=0.7` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

/// The config of `hxsim run`: as [`ConfigArgs`], but none with `--resume` (the checkpoint has it).
#[derive(clap::Args, Debug, Clone)]
struct RunConfigArgs {
    /// Experiment description (TOML); not with `--resume`.
    #[arg(required_unless_present = "resume", conflicts_with = "resume")]
    config: Option<PathBuf>,
    /// Override a config key, e.g. `--set traffic.load=0.7` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", conflicts_with = "resume")]
    set: Vec<String>,
}

/// Where results go (HDF5).
#[derive(clap::Args, Debug, Clone)]
struct OutputArgs {
    /// Results file (HDF5); default `results/<name>-<UTC timestamp>.h5` (`...-sweep.h5` for a sweep).
    /// An existing file is replaced.
    #[arg(long, short, value_name = "PATH")]
    output: Option<PathBuf>,
    /// Write no results file.
    #[arg(long, conflicts_with = "output")]
    no_output: bool,
}

impl OutputArgs {
    /// The file to write, or `None` for `--no-output`.
    fn path(&self, name: &str, suffix: &str) -> Option<PathBuf> {
        if self.no_output {
            None
        } else {
            Some(self.output.clone().unwrap_or_else(|| hxsim::output::default_path(name, suffix)))
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate one experiment and print its summary.
    Run {
        #[command(flatten)]
        cfg: RunConfigArgs,
        /// Checkpoint and restart.
        #[command(flatten)]
        checkpoint: hxsim::checkpoint::CheckpointArgs,
        /// Partitions, one thread each; results are identical for any value.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Print the summary as one JSON object.
        #[arg(long)]
        json: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
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
    },
    /// Run a config at every point of a grid of values into one HDF5 file.
    ///
    /// The points are the cartesian product of the --set axes; the file holds one group per point
    /// and a table of all points' summaries (/sweep).
    Sweep {
        /// Base experiment description (TOML).
        config: PathBuf,
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
        #[arg(long, value_enum, default_value_t = hxsim::plot::Figure::All)]
        figure: hxsim::plot::Figure,
        /// Plot the time series of this point of a sweep.
        #[arg(long, value_name = "N")]
        point: Option<usize>,
        /// One figure per value of this swept key (default: `traffic.pattern` when it is swept);
        /// the files are named PATH-VALUE.EXT.
        #[arg(long, value_name = "KEY")]
        by: Option<String>,
    },
    /// How well the switches split into parts (cut links, balance, lookahead), without running.
    Partition {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Number of parts (ranks x threads of a run).
        #[arg(long)]
        parts: usize,
        /// block, round-robin or multilevel; all three side by side when omitted.
        #[arg(long)]
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
        /// `csv` or `jsonl`; default: `csv` when the output file name ends in `.csv`, else `jsonl`.
        #[arg(long)]
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
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Print as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Find a network before simulating it: the cheapest HyperX for a size, radix and bisection
    /// (Ahn et al., SC09, section 3.1.2), its design space, and HyperX against the folded Clos.
    Design(hxsim::design::DesignArgs),
}

fn parse_size(s: &str) -> Result<u64, String> {
    hxsim::config::parse_bytes(s)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    init_logging(cli.verbose);
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            hxsim::output::note(&format!("error: {e:#}"));
            ExitCode::from(cli::exit_code(&e))
        }
    }
}

/// Log events to stderr: `RUST_LOG` when set, else warnings, or more with `-v`.
fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

fn dispatch(cli: Cli) -> Result<u8> {
    // `run` joins the MPI world (or explains why it cannot); nothing else is rank-aware, and N copies
    // of it would print N times or write the same file N times.
    if !matches!(cli.command, Command::Run { .. }) {
        if let Some((var, ranks)) = hxsim::engine::launcher_ranks().filter(|&(_, n)| n > 1) {
            hxsim::output::note(&format!(
                "error: started as one of {ranks} ranks ({var}={ranks}); only `hxsim run` runs over several \
                 processes: start this command once, without mpirun/srun (or set {}=1)",
                hxsim::engine::SINGLE_PROCESS_ENV
            ));
            return Ok(2);
        }
    }
    if !matches!(cli.command, Command::Run { .. } | Command::Sweep { .. }) {
        // Commands that only print end quietly when their reader goes away (`hxsim analyze | head`),
        // as Unix tools do; `run` and `sweep` write their files first and report a closed stdout as
        // an I/O error (exit 1) instead.
        // SAFETY: restoring the default action of a signal before any thread is started.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    match cli.command {
        Command::Run { cfg, checkpoint, threads, json, quiet, out, json_out, max_memory } => {
            // Checkpoint and restart: with --resume the config and threads come from the checkpoint.
            let (config, threads) = hxsim::checkpoint::setup(&checkpoint, cfg.config.as_deref(), &cfg.set, threads)?;
            let ranks = hxsim::engine::launcher_ranks().map_or(1, |r| r.1);
            config.check_memory(ranks, max_memory)?;
            let outputs = hxsim::output::RunOutputs { h5: out.path(&config.name, ""), json: json_out };
            hxsim::output::run_command(&config, threads, json, quiet, &outputs)
        }
        Command::Sweep { config, set, jobs, quiet, out, max_memory } => {
            let output = match (out.no_output, out.output) {
                (true, _) => hxsim::sweep::Output::None,
                (false, Some(p)) => hxsim::sweep::Output::Path(p),
                (false, None) => hxsim::sweep::Output::Default,
            };
            hxsim::sweep::sweep_command(&config, &set, jobs, quiet, output, max_memory)
        }
        Command::Plot { file, output, figure, point, by } => {
            let out = output.unwrap_or_else(|| file.with_extension("svg"));
            hxsim::plot::plot_command(&file, &out, figure, point, by.as_deref())
        }
        Command::Partition { cfg, parts, method, json } => {
            let config = cli::load_config(&cfg.config, &cfg.set)?;
            cli::partition(&config, parts, method.as_deref(), json)
        }
        Command::Merge { inputs, output, format, .. }
            if format.is_none() && output.as_ref().is_some_and(|o| o.extension().is_some_and(|x| x == "h5")) =>
        {
            let files = hxsim::merge_hdf5::expand_inputs(&inputs)?;
            hxsim::merge_hdf5::merge_to_hdf5(&files, output.as_deref().unwrap_or(std::path::Path::new("merged.h5")))
        }
        Command::Merge { inputs, output, format, expect } => {
            hxsim::merge::run(&inputs, output.as_deref(), format.as_deref(), expect)
        }
        Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(shell, &mut Cli::command(), "hxsim", &mut std::io::stdout());
            Ok(0)
        }
        Command::Analyze { cfg, json, sequence } => {
            let config = cli::load_config(&cfg.config, &cfg.set)?;
            match sequence {
                Some(s) => cli::analyze_sequence(&config, &s, json),
                None => cli::analyze(&config, json),
            }
        }
        Command::Faults { cfg, json } => {
            let config = cli::load_config(&cfg.config, &cfg.set)?;
            cli::faults(&config, json)
        }
        Command::CheckDeadlock { cfg, json } => {
            let config = cli::load_config(&cfg.config, &cfg.set)?;
            cli::check_deadlock(&config, json)
        }
        Command::Design(args) => hxsim::design::run(&args),
    }
}
