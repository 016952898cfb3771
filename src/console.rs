//! What the commands say on the terminal: results on standard output, messages on standard error.
//! Neither may turn a closed pipe into a panic.

use anyhow::{Context, Result};

/// Write `text` to standard output. A closed or failing stdout (`hxsim run | true`, a shell capture
/// whose shell was killed) is an I/O error, exit code 1, not a panic.
pub fn out(text: &str) -> Result<()> {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes()).and_then(|()| o.flush()).context("writing to standard output")
}

/// Print a line on stderr, ignoring a closed stderr (a message must never turn into a panic).
pub fn note(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{msg}");
}
