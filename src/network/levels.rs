//! Selection from cost levels (issue 34, item 2): a waiting head's candidates as a few classes (a
//! port mask per penalty), and per switch and VC range the switch-to-switch ports as bit masks by
//! cost, kept up to date as ports change, so that a selection is a handful of word operations
//! instead of a pass over 20-40 runs.
//!
//! **What it computes.** Exactly what [`super::router`]'s run-based selection computes, with the
//! same tie-break draw over the same order, for heads whose runs have this shape (SurePath's): a
//! *group* of routing runs, then a group of escape runs; within a group every run on one VC range
//! and the ports strictly increasing. Selection's order is then group, port, VC, which a group's
//! classes give back by merging their port masks. A head whose runs have another shape is selected
//! from its runs ([`classes_of`] declines).
//!
//! **What it keeps.** Per switch and *slot* (slot 0: a VC range starting at VC 0, slot 1: another;
//! each slot's range fixed when first seen), per port the lowest cost over the slot's VCs with room
//! (`occupancy + input capacity + port load - credits`, as [`super::router`]'s `RunCost::low`) and
//! how many VCs reach it, and per cost level below [`LEVELS`] the ports at that level as a mask.
//! A port is re-costed whenever its records change ([`super::NetPartition::port_changed`]) and when
//! the packet on its link frees its output slot (a known cycle: such ports wait in
//! [`CostLevels::pending`] until their switch's next step at or after it).

use super::BitIter;
use crate::routing::{CandidateRun, PortClass};

/// Cost levels kept as masks; higher costs (deep buffers) are found by a scan of the ports in
/// [`CostLevels::over`].
pub(super) const LEVELS: usize = 64;

/// "No VC of the slot has room" in [`CostLevels::low`].
pub(super) const FULL: u16 = u16::MAX;

/// Most classes a head's candidates may form; a head with more is selected from its runs.
pub(super) const MAX_CLASSES: usize = 12;

/// A waiting head's candidates with one penalty in one group: every port of `mask` (topology
/// ports, below 64) on every VC of its group's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct CandidateClass {
    pub mask: u64,
    pub penalty: u32,
    /// The class's slot in [`CostLevels`] (0: its VC range starts at VC 0).
    pub slot: u8,
    /// Its group: 0 routing, 1 escape (selection's order, before ports).
    pub escape: bool,
}

/// The VC range of each slot of a partition's levels (`(0, 0)`: not seen yet).
pub(super) type SlotRanges = [(u8, u8); 2];

/// The slot of VC range `lo..hi` (0 where it starts at VC 0), which a slot not seen yet in
/// `ranges` takes; `None` if the slot holds another range.
fn slot_of(ranges: &mut SlotRanges, lo: u8, hi: u8) -> Option<usize> {
    let slot = (lo != 0) as usize;
    if ranges[slot] == (0, 0) {
        ranges[slot] = (lo, hi);
    }
    (ranges[slot] == (lo, hi)).then_some(slot)
}

/// Groups `runs` into classes in `out` (at most its length): the number of classes, or `None` if
/// the runs do not have the shape of the module docs, a port is 64 or more, a VC range does not
/// match its slot's in `ranges` (a slot not seen yet takes the run's range, which the caller then
/// costs), or there are too many classes.
pub(super) fn classes_of(runs: &[CandidateRun], ranges: &mut SlotRanges, out: &mut [CandidateClass]) -> Option<usize> {
    let (mut n, mut last_port, mut escape, cap) = (0usize, -1i32, false, out.len());
    let mut group_range = None;
    for r in runs {
        if r.port >= 64 {
            return None;
        }
        if r.escape != escape {
            if escape {
                // A routing run after the escape group.
                return None;
            }
            (escape, last_port, group_range) = (true, -1, None);
        }
        if r.port as i32 <= last_port || group_range.is_some_and(|g| g != (r.lo, r.hi)) {
            return None;
        }
        last_port = r.port as i32;
        group_range = Some((r.lo, r.hi));
        let slot = slot_of(ranges, r.lo, r.hi)?;
        let bit = 1u64 << r.port;
        match out[..n].iter_mut().find(|c| c.penalty == r.penalty && c.escape == r.escape) {
            Some(c) => c.mask |= bit,
            None if n == cap => return None,
            None => {
                out[n] = CandidateClass { mask: bit, penalty: r.penalty, slot: slot as u8, escape: r.escape };
                n += 1;
            }
        }
    }
    Some(n)
}

/// Converts a routing's classes ([`crate::routing::Routing::candidate_classes`]) into `out`: the
/// number of classes, or `None` if there are too many, a group's classes are on different VC
/// ranges, or a VC range does not match its slot's in `ranges` (a slot not seen yet takes the class's range, which the caller then costs).
pub(super) fn classes_from(
    classes: &[PortClass],
    ranges: &mut SlotRanges,
    out: &mut [CandidateClass],
) -> Option<usize> {
    if classes.len() > out.len() {
        return None;
    }
    let mut group_slot = [None; 2];
    for (c, o) in classes.iter().zip(out.iter_mut()) {
        let slot = slot_of(ranges, c.lo, c.hi)?;
        if *group_slot[c.escape as usize].get_or_insert(slot) != slot {
            // A group's classes share a slot (selection merges a group's ports on it).
            return None;
        }
        *o = CandidateClass { mask: c.mask, penalty: c.penalty, slot: slot as u8, escape: c.escape };
    }
    Some(classes.len())
}

/// Whether two class lists offer the same candidates: the same classes in any order (debug
/// checks of classes a routing wrote against those its runs form).
pub(super) fn same_classes(a: &[CandidateClass], b: &[CandidateClass]) -> bool {
    let key = |c: &CandidateClass| (c.escape, c.penalty, c.slot, c.mask);
    let mut a: Vec<_> = a.iter().map(key).collect();
    let mut b: Vec<_> = b.iter().map(key).collect();
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

/// The cost levels of a partition's switches (see the module docs).
#[derive(Debug, Default)]
pub(super) struct CostLevels {
    r: usize,
    /// The VC range of each slot.
    pub ranges: SlotRanges,
    /// Per switch, slot and level `k < LEVELS`: the ports whose lowest cost is `k`, at
    /// `(li * 2 + slot) * LEVELS + k`.
    lvl: Vec<u64>,
    /// Per switch and slot (`li * 2 + slot`): bit `k` set where level `k`'s mask is not empty.
    nonempty: Vec<u64>,
    /// Per switch and slot: the ports whose lowest cost is [`LEVELS`] or more.
    over: Vec<u64>,
    /// Per switch, slot and port (`(li * 2 + slot) * r + port`): the lowest cost over the slot's VCs
    /// with room, or [`FULL`].
    low: Vec<u16>,
    /// How many of the slot's VCs reach `low`, indexed as `low`.
    count: Vec<u8>,
    /// Per switch: ports whose link carries a packet whose slot frees later than the port was
    /// last costed.
    pub pending: Vec<u64>,
}

impl CostLevels {
    /// Bytes of the levels of `n` switches of `r` switch-to-switch ports.
    pub fn bytes(n: usize, r: usize) -> usize {
        n * 2 * (LEVELS + 2) * 8 + n * 2 * r * 3 + n * 8
    }

    /// Levels for `n` switches of `r` switch-to-switch ports, every port full until costed.
    pub fn new(n: usize, r: usize) -> Self {
        CostLevels {
            r,
            ranges: [(0, 0); 2],
            lvl: vec![0; n * 2 * LEVELS],
            nonempty: vec![0; n * 2],
            over: vec![0; n * 2],
            low: vec![FULL; n * 2 * r],
            count: vec![0; n * 2 * r],
            pending: vec![0; n],
        }
    }

    /// Whether levels are kept (a partition where this path is on).
    #[inline]
    pub fn is_on(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Port `port` (topology port) of switch `li` now has lowest cost `new` ([`FULL`]: no room) on
    /// `count` VCs of slot `slot`.
    #[inline]
    pub fn set(&mut self, li: usize, slot: usize, port: usize, new: u16, count: u8) {
        let s = li * 2 + slot;
        let i = s * self.r + port;
        self.count[i] = count;
        let old = self.low[i];
        if old == new {
            return;
        }
        self.low[i] = new;
        let b = 1u64 << port;
        if old != FULL {
            if (old as usize) < LEVELS {
                let m = &mut self.lvl[s * LEVELS + old as usize];
                *m &= !b;
                if *m == 0 {
                    self.nonempty[s] &= !(1 << old);
                }
            } else {
                self.over[s] &= !b;
            }
        }
        if new != FULL {
            if (new as usize) < LEVELS {
                self.lvl[s * LEVELS + new as usize] |= b;
                self.nonempty[s] |= 1 << new;
            } else {
                self.over[s] |= b;
            }
        }
    }

    /// The lowest cost `k` among the ports of `mask` on slot `slot` of switch `li` with
    /// `k * scale + offset <= limit`, with the ports at that cost; `None` if there is none.
    /// (Selection's bound: a multiplication per level rather than a division per class.)
    #[inline]
    pub fn lowest(&self, li: usize, slot: usize, mask: u64, scale: u32, offset: u32, limit: u32) -> Option<(u32, u64)> {
        let s = li * 2 + slot;
        let below = |k: u32| (k as u64) * scale as u64 + offset as u64 <= limit as u64;
        for k in BitIter(self.nonempty[s]) {
            if !below(k as u32) {
                return None;
            }
            let m = self.lvl[s * LEVELS + k] & mask;
            if m != 0 {
                return Some((k as u32, m));
            }
        }
        let o = self.over[s] & mask;
        if o == 0 {
            return None;
        }
        self.lowest_over(s, o, below)
    }

    /// [`CostLevels::lowest`] among ports whose cost is [`LEVELS`] or more.
    #[cold]
    fn lowest_over(&self, s: usize, ports: u64, below: impl Fn(u32) -> bool) -> Option<(u32, u64)> {
        let (mut low, mut at) = (u32::MAX, 0u64);
        for p in BitIter(ports) {
            let c = self.low[s * self.r + p] as u32;
            if c < low {
                (low, at) = (c, 1 << p);
            } else if c == low {
                at |= 1 << p;
            }
        }
        (low != u32::MAX && below(low)).then_some((low, at))
    }

    /// How many VCs of slot `slot` of port `port` of switch `li` reach its lowest cost.
    #[inline]
    pub fn count(&self, li: usize, slot: usize, port: usize) -> u64 {
        self.count[(li * 2 + slot) * self.r + port] as u64
    }

    /// The lowest cost of slot `slot` of port `port` of switch `li` ([`FULL`]: no room).
    pub fn low(&self, li: usize, slot: usize, port: usize) -> u16 {
        self.low[(li * 2 + slot) * self.r + port]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{below, stream, Purpose};

    /// The masks give what a scan of the kept costs gives, after random updates that include
    /// costs past the kept levels and full ports; and `lowest` respects its bound.
    #[test]
    fn levels_answer_what_a_scan_of_the_costs_answers() {
        let (n, r) = (3, 21);
        let mut lv = CostLevels::new(n, r);
        let mut rng = stream(3, 0, Purpose::Router);
        let mut costs = vec![FULL; n * 2 * r];
        let mut hits = 0;
        for step in 0..20_000 {
            let (li, slot, p) =
                (below(&mut rng, n as u64) as usize, below(&mut rng, 2) as usize, below(&mut rng, r as u64) as usize);
            let c = match below(&mut rng, 10) {
                0 => FULL,
                1 => 60 + below(&mut rng, 10) as u16,
                _ => below(&mut rng, 12) as u16,
            };
            lv.set(li, slot, p, c, 1);
            costs[(li * 2 + slot) * r + p] = c;
            if step % 7 == 0 {
                let mask = (0..r).filter(|_| below(&mut rng, 3) == 0).fold(0u64, |m, p| m | 1 << p);
                // Costs up to 4 (`k * 3 + 2 <= 14`), or any.
                let (bound, limit) = if below(&mut rng, 3) == 0 { (5, 14) } else { (u32::MAX, u32::MAX) };
                let mut want: Option<(u32, u64)> = None;
                for p in 0..r {
                    let c = costs[(li * 2 + slot) * r + p];
                    if mask & 1 << p == 0 || c == FULL || c as u32 >= bound {
                        continue;
                    }
                    want = match want {
                        Some((low, at)) if (c as u32) > low => Some((low, at)),
                        Some((low, at)) if c as u32 == low => Some((low, at | 1 << p)),
                        _ => Some((c as u32, 1 << p)),
                    };
                }
                hits += want.is_some() as u32;
                assert_eq!(lv.lowest(li, slot, mask, 3, 2, limit), want, "step {step}");
            }
        }
        assert!(hits > 1000);
    }

    fn run(port: u16, lo: u8, hi: u8, penalty: u32, escape: bool) -> CandidateRun {
        CandidateRun { penalty, port, lo, hi, escape }
    }

    /// A routing's classes convert where each group keeps to one slot and the slots' ranges.
    #[test]
    fn written_classes_keep_one_slot_per_group() {
        let class = |mask, penalty, lo, hi, escape| PortClass { mask, penalty, lo, hi, escape };
        let mut out = [CandidateClass::default(); MAX_CLASSES];
        let mut ranges = [(0, 0); 2];
        let ok = [class(0b11, 0, 0, 3, false), class(0b100, 64, 0, 3, false), class(0b1, 96, 3, 4, true)];
        assert_eq!(classes_from(&ok, &mut ranges, &mut out), Some(3));
        assert_eq!(ranges, [(0, 3), (3, 4)]);
        assert_eq!(out[2], CandidateClass { mask: 1, penalty: 96, slot: 1, escape: true });
        let split = [class(0b1, 0, 0, 3, false), class(0b10, 64, 3, 4, false)];
        assert_eq!(classes_from(&split, &mut ranges, &mut out), None, "a group on two slots");
        assert_eq!(classes_from(&[class(1, 0, 0, 2, false)], &mut ranges, &mut out), None, "another range");
    }

    /// SurePath's shape forms classes; other shapes are declined.
    #[test]
    fn classes_take_surepaths_shape_only() {
        let mut out = [CandidateClass::default(); MAX_CLASSES];
        let mut ranges = [(0, 0); 2];
        let sp = [run(1, 0, 3, 0, false), run(4, 0, 3, 64, false), run(7, 0, 3, 0, false), run(2, 3, 4, 96, true)];
        assert_eq!(classes_of(&sp, &mut ranges, &mut out), Some(3));
        assert_eq!(ranges, [(0, 3), (3, 4)]);
        assert_eq!(out[0], CandidateClass { mask: 1 << 1 | 1 << 7, penalty: 0, slot: 0, escape: false });
        assert_eq!(out[1].mask, 1 << 4);
        assert_eq!(out[2], CandidateClass { mask: 1 << 2, penalty: 96, slot: 1, escape: true });
        // Ports not increasing, a routing run after the escape, another VC range, a port of 64.
        for bad in [
            &[run(4, 0, 3, 0, false), run(1, 0, 3, 0, false)][..],
            &[run(2, 3, 4, 96, true), run(1, 0, 3, 0, false)],
            &[run(1, 0, 3, 0, false), run(2, 0, 2, 0, false)],
            &[run(1, 0, 2, 0, false)],
            &[run(64, 0, 3, 0, false)],
        ] {
            assert_eq!(classes_of(bad, &mut ranges, &mut out), None, "{bad:?}");
        }
    }
}
