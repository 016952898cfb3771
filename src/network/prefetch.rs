//! Fetching ahead: while a partition steps its switches in order, it asks the cache for the
//! records the next two switches will read ([`NetPartition::step`]). Where a partition's router
//! state is much larger than the core's private cache, every switch-step would otherwise wait on a
//! cache miss per record; where it fits in about that cache, the hints only cost instructions.
//! Measured on `benches/cpu.sh`'s configs (CPU seconds, fetching ahead off against on, one thread,
//! a core with a 2 MiB private cache): `hyperx-3d-8` with `minimal` (2.3 MB of port records) 0.87
//! and `hyperx-2d-16` (1.4 MB) 0.82, but a 10x10x10 HyperX (5.3 MB) 1.12, `hyperx-3d-16` (38 MB)
//! 1.60, the million-endpoint `hyperx-3d-32` 1.41. So by default ([`FetchAhead::Auto`]) a
//! partition fetches ahead when its router state is more than twice the private cache, and
//! fetches what was last read a packet's time earlier only above 16 times ([`fetches_far`]). The
//! hints change no result.
//!
//! The router state counts the port records and selection's cost levels, not the cached
//! candidates of waiting heads. With selection from cost levels, SurePath reads a head's classes
//! once per evaluation, and on 2026-11-30 fetching ahead cost PolSP and OmniSP 5% and 7% more CPU
//! time on `hyperx-3d-8` (4 interleaved pairs each), where their candidate cache had counted
//! them 10 MB; at 10x10x10 it saved them 6% and 5%, and DAL 9%, at 16x16x16 PolSP 31%. Left
//! out of the count (2.5 MB on `hyperx-3d-8`): PolSP there 0.91 of the CPU time, OmniSP 0.94,
//! PolSP on `hyperx-2d-16` 0.92, and no change at 14x14x14 and 16x16x16 (3 interleaved rounds).

use super::levels::CostLevels;
use super::router::RunCost;
use super::{for_each_set_bit, port_record_bytes, BitIter, Msg, NetPartition, Server};
use crate::topology::SwitchId;
use std::mem::size_of;
use std::sync::OnceLock;

/// Whether partitions fetch ahead (`hxsim run --prefetch`). Results are the same either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FetchAhead {
    /// Where the partition's router state is more than twice the core's private cache (the
    /// level-2 data cache Linux's sysfs reports for CPU 0; 1 MiB where it reports none).
    #[default]
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

impl FetchAhead {
    /// The `--prefetch` names, in the order of [`FetchAhead::from_name`].
    pub const NAMES: [&'static str; 3] = ["auto", "on", "off"];

    /// The mode named `name` (one of [`FetchAhead::NAMES`]).
    pub fn from_name(name: &str) -> Option<FetchAhead> {
        match name {
            "auto" => Some(FetchAhead::Auto),
            "on" => Some(FetchAhead::On),
            "off" => Some(FetchAhead::Off),
            _ => None,
        }
    }
}

/// The private cache assumed where the system does not say (1 MiB: a common level-2 size).
const DEFAULT_PRIVATE_CACHE: u64 = 1 << 20;

/// Bytes of the level-2 data cache of CPU 0, from Linux's sysfs (`None` where not available).
fn private_cache_bytes() -> Option<u64> {
    static BYTES: OnceLock<Option<u64>> = OnceLock::new();
    *BYTES.get_or_init(|| {
        let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
        let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok().map(|s| s.trim().to_string());
        std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
            let level = read(e.path().join("level"))?;
            let kind = read(e.path().join("type"))?;
            if level != "2" || kind == "Instruction" {
                return None;
            }
            parse_cache_size(&read(e.path().join("size"))?)
        })
    })
}

/// A sysfs cache size (`2048K`, `1M`, or bytes) in bytes.
fn parse_cache_size(s: &str) -> Option<u64> {
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let scale = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    Some(n * scale)
}

/// Whether a partition whose router state takes `state_bytes` fetches ahead in mode `mode`, on a
/// core whose private cache holds `cache_bytes`.
pub fn fetches_ahead(mode: FetchAhead, state_bytes: u64, cache_bytes: u64) -> bool {
    above(mode, state_bytes, 2 * cache_bytes)
}

/// Whether a partition that fetches ahead also fetches the records of the ports a switch-step
/// re-costs ([`NetPartition::prefetch_heads`]), in mode `mode` (as [`fetches_ahead`]): where its
/// router state is more than 16 times the private cache. Those records were last read when the
/// port's packet was sent, a packet's time earlier, and are still cached where the state is a few
/// times the cache: PolSP on `configs/hyperx-3d-8.toml` (10 MB with its candidate cache, which the
/// state counted then) took 2-3% more CPU time with them fetched, on the faulty million-endpoint
/// HyperX (335 MB a partition on two threads) 7% less.
pub fn fetches_far(mode: FetchAhead, state_bytes: u64, cache_bytes: u64) -> bool {
    above(mode, state_bytes, 16 * cache_bytes)
}

/// Mode `mode`'s answer for a partition of `state_bytes`: `On` yes, `Off` no, `Auto` where the
/// state exceeds `threshold`.
fn above(mode: FetchAhead, state_bytes: u64, threshold: u64) -> bool {
    match mode {
        FetchAhead::On => true,
        FetchAhead::Off => false,
        FetchAhead::Auto => state_bytes > threshold,
    }
}

impl NetPartition {
    /// Set whether this partition fetches ahead ([`FetchAhead`]).
    pub fn set_fetch_ahead(&mut self, mode: FetchAhead) {
        let cache = private_cache_bytes().unwrap_or(DEFAULT_PRIVATE_CACHE);
        let state = self.router_state_bytes();
        self.fetch_ahead = fetches_ahead(mode, state, cache);
        self.fetch_far = fetches_far(mode, state, cache);
    }

    /// Bytes of the records a switch-step reads for every port: port and VC records, and
    /// selection's kept costs or cost levels. Packets come on top, and so do the cached candidates
    /// of waiting heads ([`NetPartition::cached_runs`]), which are not counted: a head's classes
    /// are a few lines read once per evaluation, and counting them (PolSP's take three times the
    /// port records on `configs/hyperx-3d-8.toml`) had SurePath fetch ahead where it only cost
    /// instructions (see the module docs).
    fn router_state_bytes(&self) -> u64 {
        let levels = if self.levels.is_on() { CostLevels::bytes(self.switches.len(), self.r) } else { 0 };
        let unused_in = (self.inp.len() * self.v - self.inbuf.len()) * size_of::<super::InVc>();
        (self.inp.len() * port_record_bytes(self.v) - unused_in + self.run_costs.len() * size_of::<RunCost>() + levels)
            as u64
    }
}

/// Hint the cache to fetch the line holding `r` (no effect on the program's results; a no-op where
/// the hint is not available).
#[inline(always)]
pub(super) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault; `r` is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(r as *const T as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// Hint the cache to fetch every line of `s` (as [`prefetch`]).
#[inline(always)]
pub(super) fn prefetch_span<T>(s: &[T]) {
    let bytes = std::mem::size_of_val(s);
    if bytes == 0 {
        return;
    }
    let p = s.as_ptr() as *const u8;
    // SAFETY: every offset is within `s` (the last is its last byte).
    for off in (0..bytes).step_by(64).chain([bytes - 1]) {
        prefetch(unsafe { &*p.add(off) });
    }
}

impl NetPartition {
    /// Fetches output port `pi`'s record and the first and last lines of its VC records.
    #[inline(always)]
    fn fetch_output(&self, pi: usize) {
        let v = self.v;
        prefetch(&self.outp[pi]);
        prefetch(&self.outvc[pi * v]);
        prefetch(&self.outvc[pi * v + v - 1]);
    }

    /// First stage of the prefetch, two switches ahead ([`NetPartition::step`]): the port and VC
    /// records of local switch `l`'s inputs and outputs holding packets, its neighbour table and
    /// link counters, and its servers' records.
    #[inline]
    pub(super) fn prefetch_ports(&self, l: usize) {
        let (np, w) = (self.np, self.words);
        for_each_set_bit(&self.in_mask[l * w..(l + 1) * w], |port| {
            let (pi, qi) = (l * np + port, self.in_vc(l, port, 0));
            prefetch(&self.inp[pi]);
            prefetch(&self.inbuf[qi]);
            prefetch(&self.inbuf[qi + self.in_vcs(l, port) - 1]);
        });
        for_each_set_bit(&self.out_mask[l * w..(l + 1) * w], |port| self.fetch_output(l * np + port));
        // The far ends of its links, read by every packet it sends and grants to a link, and the
        // links' counters.
        if self.r > 0 {
            let (first, last) = (l * self.r, (l + 1) * self.r - 1);
            let per_line = (64 / std::mem::size_of::<(SwitchId, u16)>()).max(1);
            for e in (first..=last).step_by(per_line).chain([last]) {
                prefetch(&self.nbr[e]);
            }
            for e in (first..=last).step_by(8).chain([last]) {
                prefetch(&self.link_phits[e]);
            }
        }
        // Its cost levels and cached heads' tags, read by its first selection.
        if self.levels.is_on() {
            self.levels.fetch_switch(l);
        }
        if self.head_cache.is_on() {
            self.head_cache.fetch_tags(l);
        }
        // Its servers' records, read when one of them generates or may inject.
        let (s0, s1) = (self.srv_base[l] as usize, self.srv_base[l + 1] as usize);
        if s1 > s0 {
            let per_line = (64 / std::mem::size_of::<Server>()).max(1);
            for si in (s0..s1).step_by(per_line).chain([s1 - 1]) {
                prefetch(&self.servers[si]);
            }
            for si in (s0..s1).step_by(8).chain([s1 - 1]) {
                prefetch(&self.next_gen[si]);
                prefetch(&self.server_ready[si]);
            }
        }
    }

    /// Second stage, one switch ahead: what the first stage's records point to (the head packet
    /// of every VC holding packets, and its entry in the per-switch
    /// [`HeadCache`](super::head_cache::HeadCache); with [`fetches_far`], the records of the
    /// ports the levels mark for re-costing) and the records local switch `l`'s messages will
    /// change (a server's credit changes its server's records, fetched by the first stage).
    #[inline]
    pub(super) fn prefetch_heads(&self, l: usize) {
        let (np, v, w, t) = (self.np, self.v, self.words, self.t_of[l]);
        for_each_set_bit(&self.in_mask[l * w..(l + 1) * w], |port| {
            let (pi, qi) = (l * np + port, self.in_vc(l, port, 0));
            for vc in BitIter(self.inp[pi].vc_mask) {
                prefetch(self.slab.get(self.inbuf[qi + vc].q.front()));
                if self.head_cache.is_on() {
                    self.head_cache.fetch_entry(l, port, vc);
                }
            }
        });
        for_each_set_bit(&self.out_mask[l * w..(l + 1) * w], |port| {
            let pi = l * np + port;
            for vc in BitIter(self.outp[pi].vc_mask) {
                prefetch(self.slab.get(self.outvc[pi * v + vc].q.front()));
            }
        });
        // The records of the ports its step re-costs (for those whose slot has freed, not read
        // since their packet was sent).
        if self.fetch_far && self.levels.is_on() {
            for p in super::levels::bits(self.levels.to_recost(l)) {
                self.fetch_output(l * np + t as usize + p);
            }
        }
        let (from, to) = (self.inbox_start[l] as usize, self.inbox_start[l + 1] as usize);
        for msg in &self.by_switch[from..to] {
            match *msg {
                Msg::Arrival { port, vc, .. } => {
                    let pi = l * np + port as usize;
                    prefetch(&self.inp[pi]);
                    // A packet sent back to its source (`RESEND_VC`) names no buffer.
                    if vc != super::RESEND_VC {
                        prefetch(&self.inbuf[self.in_vc(l, port as usize, vc as usize)]);
                    }
                }
                Msg::Credit { port, vc } if port >= t => {
                    let pi = l * np + port as usize;
                    prefetch(&self.outp[pi]);
                    prefetch(&self.outvc[pi * v + vc as usize]);
                }
                Msg::Credit { .. } => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_read_as_sysfs_writes_them() {
        assert_eq!(parse_cache_size("2048K"), Some(2 << 20));
        assert_eq!(parse_cache_size("1M"), Some(1 << 20));
        assert_eq!(parse_cache_size("524288"), Some(512 << 10));
        assert_eq!(parse_cache_size("48 K"), None);
        assert_eq!(parse_cache_size("K"), None);
    }

    /// `auto` fetches ahead exactly above twice the cache, and far above 16 times; `on` and `off`
    /// whatever the size.
    #[test]
    fn auto_fetches_ahead_above_twice_the_cache_and_far_above_16_times() {
        let cache = 2 << 20;
        assert!(!fetches_ahead(FetchAhead::Auto, 2 * cache, cache));
        assert!(fetches_ahead(FetchAhead::Auto, 2 * cache + 1, cache));
        assert!(fetches_ahead(FetchAhead::On, 0, cache));
        assert!(!fetches_ahead(FetchAhead::Off, u64::MAX, cache));
        assert!(!fetches_far(FetchAhead::Auto, 16 * cache, cache));
        assert!(fetches_far(FetchAhead::Auto, 16 * cache + 1, cache));
        assert!(fetches_far(FetchAhead::On, 0, cache));
        assert!(!fetches_far(FetchAhead::Off, u64::MAX, cache));
        for name in FetchAhead::NAMES {
            assert!(FetchAhead::from_name(name).is_some(), "{name}");
        }
        assert_eq!(FetchAhead::from_name("yes"), None);
    }
}
