//! Sizes of memory: reading them (`8G`), writing them (`1.5 GiB`) and how much this process may
//! still use (the tightest of the available memory, `ulimit -v` and `-d`, and its own cgroup). A leaf module: the config's up-front memory check and the table routings' refusals
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

/// Memory this process may still use, in bytes: the smallest of what [`memory_limits`] finds;
/// `None` when none can be read.
pub fn available_memory() -> Option<u64> {
    memory_limit().map(|(b, _)| b)
}

/// The smallest of [`memory_limits`], with what it is (for messages: "the cgroup's memory limit is
/// 3.8 GiB").
pub fn memory_limit() -> Option<(u64, String)> {
    memory_limits().into_iter().min_by_key(|l| l.0)
}

/// Every bound on the memory this process may still use that can be read, with what it is:
/// `MemAvailable` of `/proc/meminfo`; the address-space and data-segment limits (`ulimit -v`,
/// `ulimit -d`: `RLIMIT_AS`, `RLIMIT_DATA`) less what the process already maps (`VmSize`,
/// `VmData`), since a run that passes them fails its allocation and aborts; and the memory limit
/// of the process's own cgroup less its usage, v2 (`memory.max`, `memory.current`) or v1
/// (`memory.limit_in_bytes`, `memory.usage_in_bytes`), at every level from the process's cgroup up
/// to the root (a Slurm job's limit is on its own cgroup, below the root), read from the cgroup
/// that `/proc/self/cgroup` names ([`cgroup_limit`]).
pub fn memory_limits() -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = |text: &str, key: &str| {
        text.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    };
    if let Some(a) = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| kib(&m, "MemAvailable:")) {
        out.push((a, "the available memory (MemAvailable)".to_string()));
    }
    for (resource, name, used) in [
        (libc::RLIMIT_AS, "the address-space limit (ulimit -v)", "VmSize:"),
        (libc::RLIMIT_DATA, "the data-segment limit (ulimit -d)", "VmData:"),
    ] {
        let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes the struct it is given.
        if unsafe { libc::getrlimit(resource, &mut r) } == 0 && r.rlim_cur != libc::RLIM_INFINITY {
            let left = r.rlim_cur.saturating_sub(kib(&status, used).unwrap_or(0));
            out.push((left, format!("{name} less what the process maps already")));
        }
    }
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    out.extend(cgroup_limit(&own, std::path::Path::new("/sys/fs/cgroup")));
    out
}

/// The tightest memory limit less usage of the cgroups named by `proc_self_cgroup` (the text of
/// `/proc/self/cgroup`) under the cgroup file system at `root` (`/sys/fs/cgroup`), from the
/// process's own cgroup up to the root, and what it is. cgroup v2 (the line `0::/PATH`, files
/// `memory.max` and `memory.current` under `root` or, in hybrid layouts, `root/unified`) and v1
/// (the line `N:...memory...:/PATH`, files `memory.limit_in_bytes` and `memory.usage_in_bytes`
/// under `root/memory`) are both read. A path that does not exist under the mount (a container
/// whose cgroup namespace puts its own cgroup at the mount's root) is read from the mount's root.
pub fn cgroup_limit(proc_self_cgroup: &str, root: &std::path::Path) -> Option<(u64, String)> {
    let read = |f: std::path::PathBuf| std::fs::read_to_string(f).ok().and_then(|s| s.trim().parse::<u64>().ok());
    let mut best: Option<(u64, String)> = None;
    for line in proc_self_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let rel = path.trim_start_matches('/');
        let (mounts, max, used): (Vec<std::path::PathBuf>, &str, &str) = if controllers.is_empty() {
            (vec![root.to_path_buf(), root.join("unified")], "memory.max", "memory.current")
        } else if controllers.split(',').any(|c| c == "memory") {
            (vec![root.join("memory")], "memory.limit_in_bytes", "memory.usage_in_bytes")
        } else {
            continue;
        };
        for mount in mounts.iter().filter(|m| m.is_dir()) {
            let own = mount.join(rel);
            let mut dir = if own.is_dir() { own } else { mount.clone() };
            loop {
                // `max` (v2's "no limit") does not parse, and v1's no-limit value is huge: both are
                // passed over.
                if let Some(limit) = read(dir.join(max)) {
                    let left = limit.saturating_sub(read(dir.join(used)).unwrap_or(0));
                    if best.as_ref().is_none_or(|b| left < b.0) {
                        best = Some((
                            left,
                            format!("the memory limit of cgroup {} ({max}) less its usage", dir.display()),
                        ));
                    }
                }
                if dir == *mount || !dir.pop() {
                    break;
                }
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(p: &std::path::Path, v: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, v).unwrap();
    }

    /// A Slurm job's limit lies on the job's own cgroup, below the root: v2 and v1 are read there
    /// and at every level above, and the tightest limit less usage wins.
    #[test]
    fn own_cgroup_limits_are_read_v1_and_v2() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        // v2: the job's cgroup allows 4 GiB and uses 1 GiB; its parent has no limit ("max").
        put(&r.join("system.slice/job_7/memory.max"), "4294967296\n");
        put(&r.join("system.slice/job_7/memory.current"), "1073741824\n");
        put(&r.join("system.slice/memory.max"), "max\n");
        let (b, why) = cgroup_limit("0::/system.slice/job_7\n", r).unwrap();
        assert_eq!(b, 3 << 30);
        assert!(why.contains("job_7") && why.contains("memory.max"), "{why}");
        // v1: the job's step allows 8 GiB, its job 2 GiB with 512 MiB used: the job's binds.
        put(&r.join("memory/slurm/uid_1/job_9/step_0/memory.limit_in_bytes"), "8589934592");
        put(&r.join("memory/slurm/uid_1/job_9/step_0/memory.usage_in_bytes"), "0");
        put(&r.join("memory/slurm/uid_1/job_9/memory.limit_in_bytes"), "2147483648");
        put(&r.join("memory/slurm/uid_1/job_9/memory.usage_in_bytes"), "536870912");
        put(&r.join("memory/memory.limit_in_bytes"), "9223372036854771712");
        let (b, why) = cgroup_limit("4:memory:/slurm/uid_1/job_9/step_0\n3:cpu,cpuacct:/x\n", r).unwrap();
        assert_eq!(b, (2 << 30) - (512 << 20));
        assert!(why.ends_with("job_9 (memory.limit_in_bytes) less its usage"), "{why}");
        // Both at once (hybrid): the smaller.
        let both = "4:memory:/slurm/uid_1/job_9/step_0\n0::/system.slice/job_7\n";
        assert_eq!(cgroup_limit(both, r).unwrap().0, (2 << 30) - (512 << 20));
        // A path the mount does not have (a cgroup namespace): the mount's root is read.
        assert_eq!(cgroup_limit("0::/not/here\n", r), None);
        put(&r.join("memory.max"), "1000");
        assert_eq!(cgroup_limit("0::/not/here\n", r).unwrap().0, 1000);
    }

    /// `ulimit -v` is one of the limits, less what the process maps already.
    #[test]
    fn the_address_space_limit_counts() {
        let mut old = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: get and set this test process's own limit (raised back below).
        unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut old) };
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let vm: u64 = status
            .lines()
            .find(|l| l.starts_with("VmSize:"))
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let limit = vm * 1024 + (64 << 30);
        let set = libc::rlimit { rlim_cur: limit as libc::rlim_t, rlim_max: old.rlim_max };
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &set) }, 0);
        let found = memory_limits().into_iter().find(|l| l.1.contains("ulimit -v"));
        unsafe { libc::setrlimit(libc::RLIMIT_AS, &old) };
        let (b, _) = found.expect("the address-space limit is read");
        // 64 GiB less what other test threads mapped meanwhile.
        assert!(b <= 64 << 30 && b > 60 << 30, "{b}");
    }
}
