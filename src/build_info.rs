//! What this binary is: version, git commit, dirty flag, cargo features and build profile (set by
//! `build.rs`), shown by `hxsim --version` and written into every results file with the command line.

/// Crate version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Git commit the binary was built from, or `unknown`.
pub const GIT_COMMIT: &str = env!("HXSIM_GIT_COMMIT");
/// `true` when tracked files differed from [`GIT_COMMIT`] at build time, `false`, or `unknown`.
pub const GIT_DIRTY: &str = env!("HXSIM_GIT_DIRTY");
/// Enabled cargo features, comma-separated (empty: none).
pub const FEATURES: &str = env!("HXSIM_FEATURES");
/// Cargo build profile (`release`, `debug`).
pub const PROFILE: &str = env!("HXSIM_PROFILE");

/// What `hxsim --version` prints after the name:
/// `0.1.0 (commit 1d493f3..., dirty; features: mpi; profile release)`.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("HXSIM_GIT_COMMIT"),
    ", dirty: ",
    env!("HXSIM_GIT_DIRTY"),
    "; features: [",
    env!("HXSIM_FEATURES"),
    "]; profile ",
    env!("HXSIM_PROFILE"),
    ")"
);

/// The features as a list (empty when none).
pub fn features() -> Vec<String> {
    FEATURES.split(',').filter(|f| !f.is_empty()).map(str::to_string).collect()
}

/// The command line of this process, one argument per item (lossy UTF-8).
pub fn argv() -> Vec<String> {
    std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_version_names_everything() {
        assert!(LONG_VERSION.starts_with(VERSION));
        assert!(LONG_VERSION.contains(GIT_COMMIT) && LONG_VERSION.contains(PROFILE));
        assert!(["true", "false", "unknown"].contains(&GIT_DIRTY));
        assert_eq!(features().join(","), FEATURES);
    }
}
