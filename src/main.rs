//! `hxsim`: command-line entry point. Parses, validates, dispatches; the work is in the library.

use anyhow::Result;
use clap::{Parser, Subcommand};
use hxsim::cli;
use std::path::PathBuf;
use std::process::ExitCode;

/// Parallel discrete-event simulator for HyperX/HyperZ interconnection networks.
#[derive(Parser, Debug)]
#[command(name = "hxsim", version, about, long_about = None)]
struct Cli {
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
        cfg: ConfigArgs,
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
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        #[command(flatten)]
        out: OutputArgs,
    },
    /// Draw the standard figures of a results file (SVG or PNG).
    ///
    /// For a sweep: accepted load, latency and Jain's index against offered load, one curve per
    /// combination of the other swept values. For a run: its time series.
    Plot {
        /// Results file written by `hxsim run` or `hxsim sweep`.
        file: PathBuf,
        /// Figure file, SVG or PNG by extension (default: FILE with the extension .svg).
        #[arg(long, short, value_name = "PATH")]
        output: Option<PathBuf>,
        /// Which figure.
        #[arg(long, value_enum, default_value_t = hxsim::plot::Figure::All)]
        figure: hxsim::plot::Figure,
        /// Plot the time series of this point of a sweep.
        #[arg(long, value_name = "N")]
        point: Option<usize>,
    },
    /// Topology properties after faults: switches, servers, links, radix, diameter, distances.
    Analyze {
        #[command(flatten)]
        cfg: ConfigArgs,
        /// Print as one JSON object.
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
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(cli::exit_code(&e))
        }
    }
}

fn dispatch(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Run { cfg, threads, json, quiet, out } => {
            let config = cli::load_config(&cfg.config, &cfg.set)?;
            hxsim::output::run_command(&config, threads, json, quiet, out.path(&config.name, "").as_deref())
        }
        Command::Sweep { config, set, jobs, quiet, out } => {
            let output = match (out.no_output, out.output) {
                (true, _) => hxsim::sweep::Output::None,
                (false, Some(p)) => hxsim::sweep::Output::Path(p),
                (false, None) => hxsim::sweep::Output::Default,
            };
            hxsim::sweep::sweep_command(&config, &set, jobs, quiet, output)
        }
        Command::Plot { file, output, figure, point } => {
            let out = output.unwrap_or_else(|| file.with_extension("svg"));
            hxsim::plot::plot_command(&file, &out, figure, point)
        }
        Command::Analyze { cfg, json } => {
            let config = cli::load_config(&cfg.config, &cfg.set)?;
            cli::analyze(&config, json)
        }
        Command::CheckDeadlock { cfg, json } => {
            let config = cli::load_config(&cfg.config, &cfg.set)?;
            cli::check_deadlock(&config, json)
        }
    }
}
