//! Output files written under a partial name and moved into place only when complete
//! ([`Staged`], [`write_atomic`]), so that an existing file is replaced only by a finished one; and
//! the checks on output paths every command shares. A leaf module: results files, JSON records,
//! figures and checkpoints all use it.
//!
//! **One writer per path.** The partial file `FILE.partial` is claimed exclusively ([`claim`]): it
//! is created under a name of this process's own, locked (`flock`), and only then linked to
//! `FILE.partial`, which fails if that name exists. So `FILE.partial` only ever exists locked by
//! the run writing it, or left over by one that died (SIGKILL, a node crash), whose lock went with
//! it: a second run finds the lock held and refuses the path (exit 2, naming the key), or finds it
//! free and takes the leftover's place. Two runs given the same `-o` can no longer write into one
//! file, nor can the later one's rename drop the earlier one's results unnoticed.
//!
//! **What the path names.** A symbolic link is followed before staging, so the partial file lies
//! beside the file the link points to and the rename replaces that file, not the link. A path that
//! exists and is not a regular file (a device such as `/dev/null`, a FIFO) is never replaced: the
//! output is staged in the temporary directory and copied into it, in place, when complete. One of
//! the process's own descriptors (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`, or a link to one)
//! is written through that descriptor, as a shell's redirection would, whatever it is open on.

use crate::error::{os_error, ConfigError};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Make sure the directory of `path` exists; a path that cannot be written is bad input (exit 2)
/// naming `key` (the option that gave the path, e.g. `--output`).
pub fn prepare_path(path: &Path, key: &str) -> Result<(), ConfigError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            ConfigError::value(key, path.display(), format!("a path in a writable directory: {}", os_error(&e)))
        })?;
    }
    if path.is_dir() {
        return Err(ConfigError::value(key, path.display(), "a file path, not a directory"));
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

/// The path `path` stands for when written: the file at the end of its chain of symbolic links,
/// whether it exists or not (a dangling link names the file it would create); `path` itself when it
/// is no link. Links are resolved one at a time, relative to the directory of the link.
pub fn resolve_links(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    // As the kernel's limit on nested links (ELOOP): a loop ends here and fails when opened.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(&p) {
                Ok(t) if t.is_absolute() => p = t,
                Ok(t) => p = p.parent().map_or(t.clone(), |d| d.join(&t)),
                Err(_) => break,
            },
            _ => break,
        }
    }
    p
}

/// Why a partial file could not be claimed.
#[derive(Debug)]
pub enum ClaimError {
    /// Another live process holds it (it is writing the same output).
    Busy,
    /// The file system refused (no such directory, no permission, ...).
    Io(std::io::Error),
}

/// Claim the partial file `tmp` exclusively for this process: returns it created empty, open for
/// writing and locked (the lock lasts as long as the returned file is open). A leftover `tmp` whose
/// lock is free (its writer died) is replaced; one whose lock is held is [`ClaimError::Busy`].
pub fn claim(tmp: &Path) -> Result<File, ClaimError> {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let lock = |f: &File| {
        // SAFETY: flock on a descriptor this process owns; it blocks nothing (LOCK_NB).
        unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
    };
    let same_inode = |f: &File, p: &Path| match (f.metadata(), std::fs::symlink_metadata(p)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    };
    // A few rounds: each one that fails lost a race against another claimant or a leftover's
    // removal, and the next sees the new state.
    for _ in 0..8 {
        // Created and locked under a name of this process's own, then linked into place: the
        // partial name never exists unlocked while its writer lives.
        let mut own = tmp.as_os_str().to_os_string();
        own.push(format!(".{}-{}", std::process::id(), SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
        let own = PathBuf::from(own);
        let f =
            std::fs::OpenOptions::new().write(true).read(true).create_new(true).open(&own).map_err(ClaimError::Io)?;
        lock(&f);
        let linked = std::fs::hard_link(&own, tmp);
        let _ = std::fs::remove_file(&own);
        match linked {
            // Without flock on this file system (`locked` false) the exclusive name is all the
            // guard there is.
            Ok(()) => return Ok(f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => {
                // No hard links on this file system (some FUSE and FAT mounts): create the name
                // exclusively instead, then lock it.
                match std::fs::OpenOptions::new().write(true).read(true).create_new(true).open(tmp) {
                    Ok(f) => {
                        lock(&f);
                        return Ok(f);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(ClaimError::Io(e)),
                }
            }
        }
        // `tmp` exists: a live writer's (locked) or a leftover (free).
        let old = match std::fs::OpenOptions::new().write(true).open(tmp) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(ClaimError::Io(e)),
        };
        if !lock(&old) {
            return Err(ClaimError::Busy);
        }
        // Locked: its writer is gone. Remove it only if the name still stands for it (another
        // claimant may have replaced it meanwhile), holding its lock until then.
        if same_inode(&old, tmp) {
            let _ = std::fs::remove_file(tmp);
        }
    }
    Err(ClaimError::Busy)
}

/// How a [`Staged`] file reaches its destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Delivery {
    /// Renamed over the destination (a regular file, or none yet).
    Rename,
    /// Copied into the destination, which is not a regular file (a device, a FIFO): it is written
    /// to, never replaced.
    CopyInto,
    /// Written to this process's own descriptor: the path is `/dev/stdout`, `/dev/fd/N`,
    /// `/proc/self/fd/N` or a link to one, which means "where my descriptor N goes", at its
    /// current offset (a shell's `> file` included).
    Descriptor(i32),
}

/// The descriptor `path` stands for, if it or a link on its way is `/dev/fd/N`, `/proc/self/fd/N`
/// or `/proc/PID/fd/N` of this process (`/dev/stdout` is a link to `/proc/self/fd/1`).
fn own_descriptor(path: &Path) -> Option<i32> {
    let pid = std::process::id().to_string();
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        let parts: Vec<String> = p.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let fd = match parts.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
            ["/", "dev", "fd", n] => n.parse().ok(),
            ["/", "proc", who, "fd", n] if *who == "self" || *who == pid => n.parse().ok(),
            _ => None,
        };
        if fd.is_some() {
            return fd;
        }
        match std::fs::read_link(&p) {
            Ok(t) if t.is_absolute() => p = t,
            Ok(t) => p = p.parent().map_or(t.clone(), |d| d.join(&t)),
            Err(_) => return None,
        }
    }
    None
}

/// An output file written under a partial name and put in place only by [`Staged::commit`]: until
/// then an existing file at the final path is never touched, and a run that fails or is dropped
/// removes its partial file. Readers holding the old file keep reading the old file (a rename
/// replaces the name, not the contents under their feet). See the module doc for the exclusive
/// claim, links and outputs that are not regular files.
#[derive(Debug)]
pub struct Staged {
    dest: PathBuf,
    tmp: PathBuf,
    delivery: Delivery,
    /// The claimed partial file, open and locked until the commit or the drop.
    file: Option<File>,
    keep: bool,
}

impl Staged {
    /// Check that `dest` can be written and claim its partial file (created empty), or say why, as
    /// bad input (exit 2) naming `key`: a directory, a directory that cannot be created or written,
    /// or a partial file another running hxsim holds.
    pub fn new(dest: &Path, key: &str) -> Result<Self, ConfigError> {
        Self::with_partial(dest, key, partial_path)
    }

    /// [`Staged::new`] with the partial file named by `partial` from the final path (e.g. keeping
    /// the extension, for writers that choose the format by it).
    pub fn with_partial(dest: &Path, key: &str, partial: impl Fn(&Path) -> PathBuf) -> Result<Self, ConfigError> {
        let bad = |why: String| ConfigError::value(key, dest.display(), why);
        let (target, delivery) = match (std::fs::metadata(dest), own_descriptor(dest)) {
            (Ok(m), _) if m.is_dir() => return Err(bad("a file path, not a directory".into())),
            (Ok(_), Some(fd)) => (dest.to_path_buf(), Delivery::Descriptor(fd)),
            (Ok(m), None) if !m.is_file() => (dest.to_path_buf(), Delivery::CopyInto),
            _ => (resolve_links(dest), Delivery::Rename),
        };
        let tmp = match delivery {
            Delivery::Rename => {
                prepare_path(&target, key)?;
                partial(&target)
            }
            Delivery::Descriptor(_) => private_partial(dest, &partial),
            Delivery::CopyInto => {
                // Opened now, so that a device or FIFO that cannot be written is refused up front
                // (a FIFO with no reader would block: it is opened when the output is complete).
                let is_fifo = std::fs::metadata(dest).is_ok_and(|m| {
                    use std::os::unix::fs::FileTypeExt;
                    m.file_type().is_fifo()
                });
                if !is_fifo {
                    std::fs::OpenOptions::new()
                        .write(true)
                        .open(dest)
                        .map_err(|e| bad(format!("a file this process may write: {}", os_error(&e))))?;
                }
                private_partial(dest, &partial)
            }
        };
        let file = match claim(&tmp) {
            Ok(f) => f,
            Err(ClaimError::Busy) => {
                return Err(bad(format!(
                    "a path no other run is writing: {} is held by a running hxsim (wait for it to end, or choose \
                     another path)",
                    tmp.display()
                )))
            }
            Err(ClaimError::Io(e)) => return Err(bad(format!("a path in a writable directory: {}", os_error(&e)))),
        };
        Ok(Staged { dest: target, tmp, delivery, file: Some(file), keep: false })
    }

    /// [`Staged::new`] with the partial file `.NAME.partial.EXT` (hidden, and keeping the extension:
    /// figure writers choose the format by it).
    pub fn keeping_extension(dest: &Path, key: &str) -> Result<Self, ConfigError> {
        Self::with_partial(dest, key, |p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy().into_owned();
            let ext = p.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
            p.with_file_name(format!(".{name}.partial.{ext}"))
        })
    }

    /// Where to write now (the claimed partial file).
    pub fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// The final path (symbolic links resolved).
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Whether the final path already holds a file this would replace (a regular file; a device or
    /// FIFO is written into, not replaced).
    pub fn replaces_existing(&self) -> bool {
        self.delivery == Delivery::Rename && self.dest.exists()
    }

    /// The claimed partial file, open for writing (for writers that take a file rather than a path).
    pub fn file(&self) -> &File {
        self.file.as_ref().expect("the partial file stays open until the commit")
    }

    /// Put the finished file in place: renamed over the final path (atomically replacing any
    /// file there), or copied into it when that is not a regular file.
    pub fn commit(mut self) -> std::io::Result<()> {
        match self.delivery {
            Delivery::Rename => {
                std::fs::rename(&self.tmp, &self.dest)?;
                self.keep = true;
            }
            Delivery::CopyInto => {
                let mut from = File::open(&self.tmp)?;
                let mut to = std::fs::OpenOptions::new().write(true).open(&self.dest)?;
                std::io::copy(&mut from, &mut to)?;
            }
            Delivery::Descriptor(fd) => {
                use std::os::unix::io::FromRawFd;
                let mut from = File::open(&self.tmp)?;
                // SAFETY: a duplicate of the descriptor, owned (and closed) by `to` alone.
                let dup = unsafe { libc::dup(fd) };
                if dup < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let mut to = unsafe { File::from_raw_fd(dup) };
                std::io::copy(&mut from, &mut to)?;
            }
        }
        Ok(())
    }
}

/// A partial file of this process's own in the temporary directory, for an output that is not
/// renamed into place.
fn private_partial(dest: &Path, partial: &impl Fn(&Path) -> PathBuf) -> PathBuf {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let k = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    partial(&std::env::temp_dir().join(format!("hxsim-{}-{k}-{name}", std::process::id())))
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.tmp);
        }
        // Closing the file releases the claim, after the partial name is gone.
        self.file.take();
    }
}

/// Write `bytes` to `path` as a [`Staged`] file (claimed, synced, then put in place); errors name
/// `key`.
pub fn write_atomic(path: &Path, bytes: &[u8], key: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let s = Staged::new(path, key)?;
    let mut f = s.file();
    f.write_all(bytes)?;
    f.sync_all()?;
    s.commit()?;
    Ok(())
}

/// Whether `a` and `b` name the same file, or would once written: the same file (device and
/// inode) when both exist, else the same absolute path once links are resolved. Two paths to one
/// device or FIFO (`/dev/null` twice) do not count: writing into such a file replaces nothing.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return x.is_file() && y.is_file() && x.dev() == y.dev() && x.ino() == y.ino();
    }
    let abs = |p: &Path| {
        let p = resolve_links(p);
        let p = std::path::absolute(&p).unwrap_or(p);
        match (p.parent().and_then(|d| d.canonicalize().ok()), p.file_name()) {
            (Some(d), Some(n)) => d.join(n),
            _ => p,
        }
    };
    abs(a) == abs(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A second claim of a partial file held by a live claimant is refused; once the first is
    /// dropped (its writer gone, lock released) the leftover is taken over.
    #[test]
    fn a_held_partial_file_is_refused_and_a_leftover_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("out.h5.partial");
        let first = claim(&tmp).unwrap();
        assert!(matches!(claim(&tmp), Err(ClaimError::Busy)));
        // The writer dies without removing its file: the name is left, unlocked.
        drop(first);
        assert!(tmp.exists());
        let second = claim(&tmp).unwrap();
        assert_eq!(second.metadata().unwrap().len(), 0, "a fresh, empty file replaces the leftover");
        assert!(matches!(claim(&tmp), Err(ClaimError::Busy)));
        // No file of the claimants' own names is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.h5.partial")]);
    }

    /// Two staged writers of one path: the second is refused (exit 2 naming the key) and the
    /// first completes; an existing file is replaced only at the commit.
    #[test]
    fn one_writer_per_path() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("r.json");
        std::fs::write(&dest, "old").unwrap();
        let a = Staged::new(&dest, "--json-out").unwrap();
        let e = Staged::new(&dest, "--json-out").unwrap_err().to_string();
        assert!(e.contains("--json-out") && e.contains("held by a running hxsim"), "{e}");
        a.file().write_all(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "old");
        a.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new");
        assert!(!partial_path(&dest).exists());
        // Dropped without a commit: the partial file goes, the file stays.
        let b = Staged::new(&dest, "--json-out").unwrap();
        b.file().write_all(b"lost").unwrap();
        drop(b);
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new");
        assert!(!partial_path(&dest).exists());
    }

    /// A link is followed: the file it points to is replaced and the link stays a link; a
    /// dangling link creates its target.
    #[test]
    fn links_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let (target, link) = (dir.path().join("sub/target.h5"), dir.path().join("link.h5"));
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink("sub/target.h5", &link).unwrap();
        write_atomic(&link, b"new", "--output").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink("made.json", &dangling).unwrap();
        write_atomic(&dangling, b"x", "--json-out").unwrap();
        assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(dir.path().join("made.json")).unwrap(), "x");
        assert!(same_file(&link, &target) && same_file(&dangling, &dir.path().join("made.json")));
    }

    /// A FIFO is written into, not replaced by a regular file.
    #[test]
    fn a_fifo_is_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_atomic(&fifo, b"{\"a\": 1}\n", "--json-out").unwrap();
        assert_eq!(reader.join().unwrap(), "{\"a\": 1}\n");
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        // /dev/null twice is not "the same output file".
        assert!(!same_file(Path::new("/dev/null"), Path::new("/dev/null")));
    }
}
