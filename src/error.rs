//! The error every layer may raise about its input: [`ConfigError`], a problem with the experiment
//! description that names the key, the value and what is allowed. The command line maps it to exit
//! code 2. It lives in this leaf module so that the model (topologies, routings, the network) can
//! report bad parameters without importing the config schema that sits above it.

use thiserror::Error;

/// A problem with the experiment description. Always the user's input, hence exit code 2.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read, or is not a config file's text (see [`crate::input`]).
    #[error("cannot read config file {path}: {why}")]
    Io {
        /// Path given by the user.
        path: String,
        /// Why: the OS error ([`os_error`]), or what the file should be.
        why: String,
    },
    /// TOML syntax error, unknown key or wrong type (serde's message names the key).
    #[error("invalid config {}: {}", clip(.origin), clip_lines(.message, 5 * ECHO_MAX_CHARS))]
    Parse {
        /// File name or `--set`.
        origin: String,
        /// What the parser said.
        message: String,
    },
    /// A key has a value outside what is allowed.
    #[error("invalid value for `{key}`: {value} ({})", clip_to(.allowed, 5 * ECHO_MAX_CHARS))]
    Value {
        /// Dotted key, e.g. `traffic.load`.
        key: String,
        /// The value found.
        value: String,
        /// What is allowed.
        allowed: String,
    },
}

impl ConfigError {
    /// Shorthand for a [`ConfigError::Value`].
    /// The value is shown as [`clip`] shortens it: a long list or file name is echoed by its start.
    pub fn value(key: &str, value: impl std::fmt::Display, allowed: impl Into<String>) -> Self {
        ConfigError::Value { key: key.to_string(), value: clip(&value.to_string()), allowed: allowed.into() }
    }
}

/// Longest value an error message echoes whole, in characters.
pub const ECHO_MAX_CHARS: usize = 200;

/// `s` as an error message echoes it: whole up to [`ECHO_MAX_CHARS`] characters, else its start
/// and how long it is (a `--set` of a 100,000-entry list would otherwise fill the terminal).
pub fn clip(s: &str) -> String {
    clip_to(s, ECHO_MAX_CHARS)
}

/// [`clip`] to `max` characters (what is allowed may be longer than a value: a list of names).
pub fn clip_to(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max.saturating_sub(40)).collect();
    format!("{head}... ({n} characters in all)")
}

/// [`clip_to`] applied to each line (a parser's message quotes the offending line, and marks the
/// column under it).
pub fn clip_lines(s: &str, max: usize) -> String {
    s.split('\n').map(|l| clip_to(l, max)).collect::<Vec<_>>().join("\n")
}

/// An OS error's text without Rust's ` (os error N)` suffix, for messages that name the path and
/// the key already. Errors carry it as text, not as a `source`: a source is printed again by the
/// error chain (`error: cannot read x: No such file or directory: No such file or directory`).
pub fn os_error(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_clipped() {
        let long = format!("[{}]", vec!["7"; 50_000].join(", "));
        let e = ConfigError::value("faults.switches", &long, "switch ids").to_string();
        assert!(e.len() < 400, "{} bytes", e.len());
        assert!(e.contains("[7, 7, 7") && e.contains(&format!("({} characters in all)", long.len())), "{e}");
        assert_eq!(clip("short"), "short");
        // Clipped on a character boundary.
        assert!(clip(&"é".repeat(500)).starts_with(&"é".repeat(160)));
    }

    #[test]
    fn os_errors_lose_their_number() {
        let e = std::fs::File::open("/nonexistent/x").unwrap_err();
        assert_eq!(os_error(&e), "No such file or directory");
    }
}
