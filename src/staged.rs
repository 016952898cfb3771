//! Output files written under a partial name and moved into place only when complete
//! ([`Staged`], [`write_atomic`]), so that an existing file is replaced only by a finished one; and
//! the checks on output paths every command shares. A leaf module: results files, JSON records and
//! checkpoints all use it.

use crate::error::ConfigError;
use std::path::{Path, PathBuf};

/// Make sure the directory of `path` exists; a path that cannot be written is bad input (exit 2).
pub fn prepare_path(path: &Path) -> Result<(), ConfigError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            ConfigError::value("--output", path.display(), format!("a path in a writable directory: {e}"))
        })?;
    }
    if path.is_dir() {
        return Err(ConfigError::value("--output", path.display(), "a file path, not a directory"));
    }
    Ok(())
}

/// The name a file is written under until it is complete: `FILE.partial`, in the same directory (so
/// that the final rename is atomic and never crosses file systems).
pub fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".partial");
    path.with_file_name(name)
}

/// An output file written under [`partial_path`] and renamed over its final path only by
/// [`Staged::commit`]: until then an existing file at the final path is never touched, and a run
/// that fails or is dropped removes its partial file. Readers holding the old file keep reading the
/// old file (a rename replaces the name, not the contents under their feet).
#[derive(Debug)]
pub struct Staged {
    dest: PathBuf,
    tmp: PathBuf,
    keep: bool,
}

impl Staged {
    /// Check that `dest` can be written (its directory is created; the partial file is created
    /// empty), or say why (bad input, exit 2).
    pub fn new(dest: &Path) -> Result<Self, ConfigError> {
        prepare_path(dest)?;
        let tmp = partial_path(dest);
        std::fs::File::create(&tmp).map_err(|e| {
            ConfigError::value("--output", dest.display(), format!("a path in a writable directory: {e}"))
        })?;
        Ok(Staged { dest: dest.to_path_buf(), tmp, keep: false })
    }

    /// Where to write now.
    pub fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// The final path.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Move the finished file into place (atomically replacing any file there).
    pub fn commit(mut self) -> std::io::Result<()> {
        self.keep = true;
        std::fs::rename(&self.tmp, &self.dest)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Write `bytes` to `path` atomically: a partial file in the same directory, synced, then renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = partial_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Whether `a` and `b` name the same file (or would: same absolute path before either exists).
pub fn same_file(a: &Path, b: &Path) -> bool {
    let abs = |p: &Path| {
        let p = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        match (p.parent().and_then(|d| d.canonicalize().ok()), p.file_name()) {
            (Some(d), Some(n)) => d.join(n),
            _ => p,
        }
    };
    abs(a) == abs(b)
}
