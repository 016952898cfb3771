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
        Command::Run { cfg, threads, json, quiet } => {
            let config = cli::load_config(&cfg.config, &cfg.set)?;
            cli::run(&config, threads, json, quiet)
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
