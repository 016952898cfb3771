//! The error every layer may raise about its input: [`ConfigError`], a problem with the experiment
//! description that names the key, the value and what is allowed. The command line maps it to exit
//! code 2. It lives in this leaf module so that the model (topologies, routings, the network) can
//! report bad parameters without importing the config schema that sits above it.

use thiserror::Error;

/// A problem with the experiment description. Always the user's input, hence exit code 2.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Io {
        /// Path given by the user.
        path: String,
        /// Underlying I/O error.
        source: std::io::Error,
    },
    /// TOML syntax error, unknown key or wrong type (serde's message names the key).
    #[error("invalid config {origin}: {message}")]
    Parse {
        /// File name or `--set`.
        origin: String,
        /// What the parser said.
        message: String,
    },
    /// A key has a value outside what is allowed.
    #[error("invalid value for `{key}`: {value} ({allowed})")]
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
    pub fn value(key: &str, value: impl std::fmt::Display, allowed: impl Into<String>) -> Self {
        ConfigError::Value { key: key.to_string(), value: value.to_string(), allowed: allowed.into() }
    }
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
