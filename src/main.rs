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
    /// Combine the JSON summaries of separate runs (e.g. a Slurm job array) into one table.
    Merge {
        /// Files holding JSON objects (`hxsim run --json` output, one or more objects each), or
        /// directories whose `*.json` files are read in natural order.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Write here instead of standard output.
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// `csv` or `jsonl`; default: `csv` when the output file name ends in `.csv`, else `jsonl`.
        #[arg(long)]
        format: Option<String>,
    },
    /// Topology properties after faults: switches, servers, links, radix, diameter, distances.
    Analyze {
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
    // `run` joins the MPI world (or explains why it cannot); nothing else is rank-aware, and N copies
    // of it would print N times or write the same file N times.
    if !matches!(cli.command, Command::Run { .. }) {
        if let Some((var, ranks)) = hxsim::engine::launcher_ranks().filter(|&(_, n)| n > 1) {
            eprintln!(
                "error: started as one of {ranks} ranks ({var}={ranks}); only `hxsim run` runs over several \
                 processes: start this command once, without mpirun/srun (or set {}=1)",
                hxsim::engine::SINGLE_PROCESS_ENV
            );
            return Ok(2);
        }
    }
    match cli.command {
        Command::Run { cfg, threads, json, quiet } => {
            let config = cli::load_config(&cfg.config, &cfg.set)?;
            cli::run(&config, threads, json, quiet)
        }
        Command::Partition { cfg, parts, method, json } => {
            let config = cli::load_config(&cfg.config, &cfg.set)?;
            cli::partition(&config, parts, method.as_deref(), json)
        }
        Command::Merge { inputs, output, format } => hxsim::merge::run(&inputs, output.as_deref(), format.as_deref()),
        Command::Analyze { cfg, json } => {
            let config = cli::load_config(&cfg.config, &cfg.set)?;
            cli::analyze(&config, json)
        }
    }
}
