//! Reading the text files a user names (the config, `faults.file`, `topology.file`) with bounds: a
//! file is read a block at a time and refused as soon as it is plainly not text (a NUL byte, or
//! bytes that are not UTF-8) or grows past a size no such file has. `/dev/zero` or `/dev/urandom`
//! given as a config or a fault list is refused after its first block, in milliseconds, instead
//! of being read without end; a FIFO or a process substitution (`<(...)`) that sends text is read
//! as a file is. A leaf module: the config and the topology and fault readers use it.

use crate::error::os_error;
use crate::memory::human_bytes;
use std::io::Read;
use std::path::Path;

/// Largest config file: configs are a few KiB; a generated one with explicit fault lists of a
/// large machine stays well below this.
pub const CONFIG_MAX_BYTES: u64 = 16 << 20;

/// Largest data file (`faults.file`, `topology.file`): the edge list of the largest graph hxsim
/// builds (16,384 switches of degree 1,000, about 8 million lines) is about 100 MiB.
pub const DATA_MAX_BYTES: u64 = 1 << 30;

/// Bytes read at a time.
const BLOCK: usize = 64 << 10;

/// The text of the file at `path`, or why not (for the caller's message, which names the key): it
/// cannot be read, it is not UTF-8 text (checked block by block, so binary data is refused at its
/// first block), or it is larger than `limit` bytes (checked while reading, so an endless device
/// stops there).
pub fn read_text(path: &Path, limit: u64) -> Result<String, String> {
    let mut f = std::fs::File::open(path).map_err(|e| os_error(&e))?;
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err("a file, not a directory".into());
    }
    let mut buf: Vec<u8> = Vec::new();
    // Bytes at the start of `buf` known to be valid UTF-8.
    let mut valid = 0;
    loop {
        let at = buf.len();
        buf.resize(at + BLOCK, 0);
        let n = match f.read(&mut buf[at..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => 0,
            Err(e) => return Err(os_error(&e)),
        };
        buf.truncate(at + n);
        if n == 0 {
            break;
        }
        if buf.len() as u64 > limit {
            return Err(format!(
                "a file of at most {} (read {} so far)",
                human_bytes(limit),
                human_bytes(buf.len() as u64)
            ));
        }
        if let Some(i) = buf[at..].iter().position(|&b| b == 0) {
            return Err(format!("a text file (this one has a NUL byte at byte {}: binary data)", at + i));
        }
        match std::str::from_utf8(&buf[valid..]) {
            Ok(_) => valid = buf.len(),
            // An incomplete character at the end of the block is completed by the next one.
            Err(e) if e.error_len().is_none() => valid += e.valid_up_to(),
            Err(e) => {
                return Err(format!("UTF-8 text (this file is not: byte {} is invalid)", valid + e.valid_up_to()))
            }
        }
    }
    String::from_utf8(buf)
        .map_err(|e| format!("UTF-8 text (this file ends inside a character at byte {})", e.utf8_error().valid_up_to()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_devices_are_refused_at_once() {
        for dev in ["/dev/zero", "/dev/urandom"] {
            let t = std::time::Instant::now();
            let e = read_text(Path::new(dev), CONFIG_MAX_BYTES).unwrap_err();
            assert!(e.contains("text"), "{dev}: {e}");
            assert!(t.elapsed().as_secs_f64() < 1.0, "{dev} took {:?}", t.elapsed());
        }
    }

    #[test]
    fn text_is_read_whole_and_size_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.toml");
        // Several blocks, with a multi-byte character across a block boundary.
        let mut s = "x".repeat(BLOCK - 1);
        s.push('é');
        s.push_str(&"y = 1\n".repeat(30_000));
        std::fs::write(&p, &s).unwrap();
        assert_eq!(read_text(&p, CONFIG_MAX_BYTES).unwrap(), s);
        let e = read_text(&p, 1000).unwrap_err();
        assert!(e.contains("at most 1000 bytes"), "{e}");
        std::fs::write(&p, b"a = 1\n\xff\n").unwrap();
        assert!(read_text(&p, 1000).unwrap_err().contains("byte 6 is invalid"));
        assert!(read_text(dir.path(), 1000).unwrap_err().contains("directory"));
        assert!(read_text(&dir.path().join("none"), 1000).unwrap_err().contains("No such file"));
    }
}
