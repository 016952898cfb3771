//! `hxsim completions`: print a shell completion script for the command line of [`crate::cli`].

use crate::cli::Cli;
use anyhow::Result;

/// Print the completion script for `shell` on standard output.
pub fn run(shell: clap_complete::Shell) -> Result<u8> {
    use clap::CommandFactory;
    clap_complete::generate(shell, &mut Cli::command(), "hxsim", &mut std::io::stdout());
    Ok(0)
}
