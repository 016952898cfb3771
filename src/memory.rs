//! Sizes of memory: reading them (`8G`), writing them (`1.5 GiB`) and how much this process may
//! still use. A leaf module: the config's up-front memory check and the table routings' refusals
//! both read it.

/// `1.5 GiB`.
pub fn human_bytes(b: u64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} bytes")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// Parse a memory size: bytes, or a number with a suffix K, M, G, T (powers of 1024; `KiB`, `GB`
/// and the like are read the same way).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().map_err(|_| format!("`{s}` is not a size (e.g. 8G, 512M, 1000000)"))?;
    let mult = match unit.trim().to_ascii_lowercase().trim_end_matches("ib").trim_end_matches('b') {
        "" => 1u64,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return Err(format!("`{s}`: unknown unit `{unit}` (allowed: K, M, G, T)")),
    };
    let b = v * mult as f64;
    if !(b.is_finite() && b >= 1.0 && b < u64::MAX as f64) {
        return Err(format!("`{s}` is not a size between 1 byte and 16 EiB"));
    }
    Ok(b as u64)
}

/// Memory this process may still use: `MemAvailable` from `/proc/meminfo`, lowered to the cgroup
/// v2 limit minus its usage when there is one; `None` when neither can be read.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    let read = |f: &str| std::fs::read_to_string(f).ok().and_then(|s| s.trim().parse::<u64>().ok());
    let cgroup = read("/sys/fs/cgroup/memory.max")
        .map(|max| max.saturating_sub(read("/sys/fs/cgroup/memory.current").unwrap_or(0)));
    match (meminfo, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
