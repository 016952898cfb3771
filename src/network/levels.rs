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
//! A port whose records change ([`super::NetPartition::port_changed`]) is marked stale and
//! re-costed before its switch's next selection, once however often it changed; a port whose
//! link's packet frees its output slot at a known cycle waits in [`CostLevels::pending`] until its
//! switch's next selection at or after it.
//!
//! **Where the classes come from.** From the routing where it writes them
//! ([`crate::routing::Routing::candidate_classes`]), else grouped from its runs; kept per input
//! port (`NetPartition::class_cache`) where that fits the partition's cache budget, else a few per
//! switch in the [`super::head_cache`] (the million-endpoint networks). Switches of up to 128
//! switch-to-switch ports keep levels; masks take one 64-bit word where they have at most 64
//! ([`Mask`]).
//!
//! **Escape classes when they matter.** Where the routing writes its escape group apart
//! ([`crate::routing::Routing::escape_penalty_floor`]: SurePath), a head is cached with its
//! routing group's classes only, and its escape group's are asked for at the first selection
//! they could change: where the routing group's best cost reaches the escape slot's lowest level
//! ([`CostLevels::least_level`]) times the packet length plus the escape's least penalty (an
//! escape candidate could then win or tie), where no routing candidate has room, or where every
//! routing candidate's crossbar is busy (the head's refusal mark is the earliest free crossbar
//! over all its candidates). Elsewhere the escape candidates cannot change the choice, the draw or
//! the mark, so the answer is exact. On `configs/hyperx-3d-8.toml` (PolSP, uniform, load 0.6)
//! 91% of evaluations need no escape classes.

use crate::routing::{CandidateRun, PortClass};

/// A set of a switch's switch-to-switch ports (topology ports), bit `p` for port `p`: 128 bits, so
/// that the million-endpoint HyperX (93 such ports) and HyperZ keep levels too.
pub(super) type PortMask = u128;

/// Most switch-to-switch ports a switch may have for its partition to keep levels.
pub(super) const MAX_PORTS: usize = PortMask::BITS as usize;

/// The set bits of a [`PortMask`], increasing. Word by word: on switches of at most 64 such
/// ports the high word is 0, and 128-bit arithmetic per bit cost PolSP 5% more instructions on
/// `configs/hyperx-3d-8.toml`.
pub(super) struct Bits {
    lo: u64,
    hi: u64,
}

/// The set bits of `mask`.
#[inline]
pub(super) fn bits(mask: PortMask) -> Bits {
    Bits { lo: mask as u64, hi: (mask >> 64) as u64 }
}

/// A mask of ports as selection reads it: a 64-bit word where a partition's switches have at most
/// 64 switch-to-switch ports, else a [`PortMask`]. Selection is written once over this, and the
/// partition picks the width once per head: 128-bit arithmetic throughout cost PolSP about 4%
/// more instructions on `configs/hyperx-3d-8.toml` (21 ports).
pub(super) trait Mask: Copy + Eq + std::ops::BitAnd<Output = Self> + std::ops::BitOr<Output = Self> {
    /// 64-bit words per mask.
    const WORDS: usize;
    /// The empty mask.
    const EMPTY: Self;
    /// The mask of words `lo` (ports 0 to 63) and `hi` (the others; ignored with one word).
    fn of_words(lo: u64, hi: u64) -> Self;
    /// Port `p` alone.
    fn bit(p: usize) -> Self;
    /// The mask stored at word `i` of `v`.
    fn load(v: &[u64], i: usize) -> Self;
    /// Its ports, increasing.
    fn ports(self) -> impl Iterator<Item = usize>;
}

impl Mask for u64 {
    const WORDS: usize = 1;
    const EMPTY: Self = 0;
    #[inline]
    fn of_words(lo: u64, _hi: u64) -> Self {
        lo
    }
    #[inline]
    fn bit(p: usize) -> Self {
        1 << p
    }
    #[inline]
    fn load(v: &[u64], i: usize) -> Self {
        v[i]
    }
    #[inline]
    fn ports(self) -> impl Iterator<Item = usize> {
        super::BitIter(self)
    }
}

impl Mask for PortMask {
    const WORDS: usize = 2;
    const EMPTY: Self = 0;
    #[inline]
    fn of_words(lo: u64, hi: u64) -> Self {
        lo as PortMask | (hi as PortMask) << 64
    }
    #[inline]
    fn bit(p: usize) -> Self {
        1 << p
    }
    #[inline]
    fn load(v: &[u64], i: usize) -> Self {
        v[i] as PortMask | (v[i + 1] as PortMask) << 64
    }
    #[inline]
    fn ports(self) -> impl Iterator<Item = usize> {
        bits(self)
    }
}

impl Iterator for Bits {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.lo != 0 {
            let i = self.lo.trailing_zeros() as usize;
            self.lo &= self.lo - 1;
            Some(i)
        } else if self.hi != 0 {
            let i = self.hi.trailing_zeros() as usize;
            self.hi &= self.hi - 1;
            Some(64 + i)
        } else {
            None
        }
    }
}

/// Cost levels kept as masks; higher costs (deep buffers) are found by a scan of the ports in
/// [`CostLevels::over`]. Sixteen: selection found every lowest cost below 16 on
/// `configs/hyperx-3d-8.toml` (PolSP at offered 0.6 and 1.0, 68M selections) and on the faulty
/// million-endpoint HyperX (PolSP, 106M), so the scan is rare; at 64 levels of two-word masks
/// they took 64 MiB on that network (61 bytes per endpoint), at 16 a quarter of that.
pub(super) const LEVELS: usize = 16;

/// "No VC of the slot has room" in [`CostLevels::low`].
pub(super) const FULL: u16 = u16::MAX;

/// Most classes a head's candidates may form; a head with more is selected from its runs. Eight
/// (SurePath on a HyperX forms at most 3 routing and 5 escape classes) make an input's classes
/// 192 bytes, three cache lines: at 12 (288 bytes, an input's classes straddling lines) PolSP took
/// 7% more CPU time on `configs/hyperx-3d-8.toml` for the same instructions.
pub(super) const MAX_CLASSES: usize = 8;

/// A waiting head's candidates with one penalty in one group: every port of its mask (topology
/// ports, below [`MAX_PORTS`]) on every VC of its group's range.
///
/// The mask is kept as two 64-bit words (24 bytes a class, where a `u128` field would align it to
/// 32), and selection on switches of at most 64 such ports reads only the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct CandidateClass {
    /// Ports 0 to 63 of the mask.
    pub lo: u64,
    /// Ports 64 to 127.
    pub hi: u64,
    pub penalty: u32,
    /// The class's slot in [`CostLevels`] (0: its VC range starts at VC 0).
    pub slot: u8,
    /// Its group: 0 routing, 1 escape (selection's order, before ports).
    pub escape: bool,
}

impl CandidateClass {
    /// The class of the ports of `mask` with `penalty` on slot `slot` of group `escape`.
    pub fn new(mask: PortMask, penalty: u32, slot: u8, escape: bool) -> Self {
        CandidateClass { lo: mask as u64, hi: (mask >> 64) as u64, penalty, slot, escape }
    }

    /// Adds port `p`.
    #[inline]
    pub fn add_port(&mut self, p: usize) {
        if p < 64 {
            self.lo |= 1 << p;
        } else {
            self.hi |= 1 << (p - 64);
        }
    }

    /// Its ports.
    #[inline]
    pub fn mask(&self) -> PortMask {
        self.lo as PortMask | (self.hi as PortMask) << 64
    }

    /// Its ports as a mask of type `M` (only the first word where `M` has one).
    #[inline(always)]
    pub fn mask_as<M: Mask>(&self) -> M {
        M::of_words(self.lo, self.hi)
    }
}

const _: () = assert!(std::mem::size_of::<CandidateClass>() == 24);

/// What [`CostLevels`] keeps of one port, per slot: the lowest cost over the slot's VCs with room
/// ([`FULL`]: none), and how many of them reach it.
#[derive(Debug, Clone, Copy)]
struct PortCost {
    low: [u16; 2],
    count: [u8; 2],
}

const _: () = assert!(std::mem::size_of::<PortCost>() == 6);

/// The VC range of each slot of a partition's levels (`(0, 0)`: not seen yet).
pub(super) type SlotRanges = [(u8, u8); 2];

/// The slot of VC range `lo..hi` (0 where it starts at VC 0), which a slot not seen yet in
/// `ranges` takes; `None` if the slot holds another range.
pub(super) fn slot_of(ranges: &mut SlotRanges, lo: u8, hi: u8) -> Option<usize> {
    let slot = (lo != 0) as usize;
    if ranges[slot] == (0, 0) {
        ranges[slot] = (lo, hi);
    }
    (ranges[slot] == (lo, hi)).then_some(slot)
}

/// Groups `runs` into classes in `out` (at most its length): the number of classes, or `None` if
/// the runs do not have the shape of the module docs, a port is [`MAX_PORTS`] or more, a VC range does not
/// match its slot's in `ranges` (a slot not seen yet takes the run's range, which the caller then
/// costs), or there are too many classes.
pub(super) fn classes_of(runs: &[CandidateRun], ranges: &mut SlotRanges, out: &mut [CandidateClass]) -> Option<usize> {
    let (mut n, mut last_port, mut escape, cap) = (0usize, -1i32, false, out.len());
    let mut group_range = None;
    for r in runs {
        if r.port as usize >= MAX_PORTS {
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
        let bit: PortMask = 1 << r.port;
        match out[..n].iter_mut().find(|c| c.penalty == r.penalty && c.escape == r.escape) {
            Some(c) => c.add_port(r.port as usize),
            None if n == cap => return None,
            None => {
                out[n] = CandidateClass::new(bit, r.penalty, slot as u8, r.escape);
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
    classes_of_parts(classes.iter().map(|c| (c.mask, c.penalty, c.escape, (c.lo, c.hi))), ranges, out)
}

/// Classes given as (port mask, penalty, escape, VC range) into `out` (at most its length), as
/// [`classes_from`]: the number of classes, or `None` if there are too many, a group's classes are
/// on different VC ranges, or a range does not match its slot's in `ranges`.
pub(super) fn classes_of_parts(
    parts: impl Iterator<Item = (PortMask, u32, bool, (u8, u8))>,
    ranges: &mut SlotRanges,
    out: &mut [CandidateClass],
) -> Option<usize> {
    let mut group_slot = [None; 2];
    let mut n = 0;
    for (mask, penalty, escape, (lo, hi)) in parts {
        let slot = slot_of(ranges, lo, hi)?;
        if *group_slot[escape as usize].get_or_insert(slot) != slot {
            // A group's classes share a slot (selection merges a group's ports on it).
            return None;
        }
        *out.get_mut(n)? = CandidateClass::new(mask, penalty, slot as u8, escape);
        n += 1;
    }
    Some(n)
}

/// Whether two class lists offer the same candidates: the same classes in any order (debug
/// checks of classes a routing wrote against those its runs form).
pub(super) fn same_classes(a: &[CandidateClass], b: &[CandidateClass]) -> bool {
    let key = |c: &CandidateClass| (c.escape, c.penalty, c.slot, c.mask());
    let mut a: Vec<_> = a.iter().map(key).collect();
    let mut b: Vec<_> = b.iter().map(key).collect();
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

/// The cost levels of a partition's switches (see the module docs).
///
/// Masks are stored in 64-bit words, one per mask where the switches have at most 64
/// switch-to-switch ports and two otherwise (`words`, as [`Mask`]), so that levels take no more
/// room (and cache) on the smaller switches than they need.
#[derive(Debug, Default)]
pub(super) struct CostLevels {
    r: usize,
    /// Words per mask: 1 or 2.
    words: usize,
    /// The VC range of each slot.
    pub ranges: SlotRanges,
    /// Where the routing writes a head's escape classes apart
    /// ([`crate::routing::Routing::escape_penalty_floor`]): the least penalty of an escape
    /// candidate, which lets selection ask for them only when they could matter.
    pub escape_floor: Option<u32>,
    /// Per switch, slot and level `k < LEVELS`: the ports whose lowest cost is `k`, at
    /// `((li * 2 + slot) * LEVELS + k) * words`.
    lvl: Vec<u64>,
    /// Per switch and slot (`li * 2 + slot`): bit `k` set where level `k`'s mask is not empty.
    nonempty: Vec<u64>,
    /// Per switch and slot: the ports whose lowest cost is [`LEVELS`] or more (`words` each).
    over: Vec<u64>,
    /// Per switch and port (`li * r + port`), both slots: the lowest cost over the slot's VCs
    /// with room, or [`FULL`], and how many VCs reach it. One record per port, so that re-costing
    /// a port (both slots) reads and writes one cache line, not four.
    cost: Vec<PortCost>,
    /// Per switch (`words` each): ports whose link carries a packet whose slot frees later than
    /// the port was last costed.
    pending: Vec<u64>,
    /// Per switch (`words` each): ports whose records changed since they were last costed
    /// ([`CostLevels::mark_stale`]).
    stale: Vec<u64>,
    /// Heads selected from classes, and from runs (`u64::MAX` once the partition has decided
    /// whether to keep selection's costs per port too: `NetPartition::run_head_with_levels`).
    pub class_heads: u64,
    pub run_heads: u64,
}

/// Words of a mask of `r` ports.
fn words_of(r: usize) -> usize {
    if r <= 64 {
        1
    } else {
        2
    }
}

impl CostLevels {
    /// Bytes of the levels of `n` switches of `r` switch-to-switch ports.
    pub fn bytes(n: usize, r: usize) -> usize {
        let m = 8 * words_of(r);
        n * 2 * (LEVELS + 1) * m + n * 2 * 8 + n * 2 * r * 3 + 2 * n * m
    }

    /// Levels for `n` switches of `r` switch-to-switch ports (at most [`MAX_PORTS`]), every port
    /// full until costed, for a routing whose [`crate::routing::Routing::escape_penalty_floor`] is
    /// `escape_floor`.
    pub fn new(n: usize, r: usize, escape_floor: Option<u32>) -> Self {
        assert!(r <= MAX_PORTS, "cost levels for {r} ports");
        let w = words_of(r);
        CostLevels {
            r,
            words: w,
            ranges: [(0, 0); 2],
            escape_floor,
            lvl: vec![0; n * 2 * LEVELS * w],
            nonempty: vec![0; n * 2],
            over: vec![0; n * 2 * w],
            cost: vec![PortCost { low: [FULL; 2], count: [0; 2] }; n * r],
            pending: vec![0; n * w],
            stale: vec![0; n * w],
            class_heads: 0,
            run_heads: 0,
        }
    }

    /// Whether levels are kept (a partition where this path is on).
    #[inline]
    pub fn is_on(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The word of `port` in a per-switch mask of switch `li` (`pending`, `stale`), and its bit.
    #[inline]
    fn port_bit(&self, li: usize, port: usize) -> (usize, u64) {
        (li * self.words + port / 64, 1u64 << (port % 64))
    }

    /// Switch `li`'s mask in `masks` (`pending` or `stale`, `words` per switch).
    #[inline]
    fn switch_mask(&self, masks: &[u64], li: usize) -> PortMask {
        if self.words == 1 {
            masks[li] as PortMask
        } else {
            PortMask::load(masks, li * 2)
        }
    }

    /// Ports of switch `li` waiting for their link's packet to free its slot.
    #[inline]
    pub fn pending(&self, li: usize) -> PortMask {
        self.switch_mask(&self.pending, li)
    }

    /// Marks port `port` of switch `li` as waiting for its link's packet to free its slot, or not.
    #[inline]
    pub fn set_pending(&mut self, li: usize, port: usize, waiting: bool) {
        let (i, b) = self.port_bit(li, port);
        if waiting {
            self.pending[i] |= b;
        } else {
            self.pending[i] &= !b;
        }
    }

    /// The ports of switch `li` its next selection may re-cost: stale, or waiting for their slot to
    /// free (as [`CostLevels::take_stale`] and [`CostLevels::pending`] give them, clearing nothing).
    #[inline]
    pub fn to_recost(&self, li: usize) -> PortMask {
        self.switch_mask(&self.stale, li) | self.pending(li)
    }

    /// Marks port `port` of switch `li` as changed since it was last costed: it is re-costed
    /// before its switch's next selection, once however often it changed before that.
    #[inline]
    pub fn mark_stale(&mut self, li: usize, port: usize) {
        let (i, b) = self.port_bit(li, port);
        self.stale[i] |= b;
    }

    /// The ports of switch `li` marked by [`CostLevels::mark_stale`] since the last call, which
    /// clears them.
    #[inline]
    pub fn take_stale(&mut self, li: usize) -> PortMask {
        let m = self.switch_mask(&self.stale, li);
        if self.words == 1 {
            self.stale[li] = 0;
        } else {
            self.stale[li * 2..li * 2 + 2].fill(0);
        }
        m
    }

    /// Port `port` (topology port) of switch `li` now has, per slot, lowest cost `lows[slot].0`
    /// ([`FULL`]: no room) on `lows[slot].1` VCs, and waits for its link's packet to free its slot
    /// or not (`pending`), with the port's record read and written once.
    #[inline]
    pub fn set_port(&mut self, li: usize, port: usize, lows: [(u16, u8); 2], pending: bool) {
        let c = &mut self.cost[li * self.r + port];
        let old = c.low;
        *c = PortCost { low: [lows[0].0, lows[1].0], count: [lows[0].1, lows[1].1] };
        for (slot, (&old, &(new, _))) in old.iter().zip(&lows).enumerate() {
            if old != new {
                if self.words == 1 {
                    self.move_port::<u64>(li * 2 + slot, port, old, new);
                } else {
                    self.move_port::<PortMask>(li * 2 + slot, port, old, new);
                }
            }
        }
        self.set_pending(li, port, pending);
    }

    /// Moves port `port` of switch and slot `s` from level `old` to level `new` (as
    /// [`CostLevels::set_port`]) in masks of `M::WORDS` words.
    #[inline(always)]
    fn move_port<M: Mask>(&mut self, s: usize, port: usize, old: u16, new: u16) {
        // The word of `port` in a mask, and its bit there (`port < 64` in a one-word mask).
        let (w, word) = (M::WORDS, if M::WORDS == 1 { 0 } else { port / 64 });
        let b = 1u64 << (port % 64);
        if old != FULL {
            if (old as usize) < LEVELS {
                let base = (s * LEVELS + old as usize) * w;
                self.lvl[base + word] &= !b;
                if M::load(&self.lvl, base) == M::EMPTY {
                    self.nonempty[s] &= !(1 << old);
                }
            } else {
                self.over[s * w + word] &= !b;
            }
        }
        if new != FULL {
            if (new as usize) < LEVELS {
                self.lvl[(s * LEVELS + new as usize) * w + word] |= b;
                self.nonempty[s] |= 1 << new;
            } else {
                self.over[s * w + word] |= b;
            }
        }
    }

    /// Hints the cache to fetch what switch `li`'s first selection reads of its levels: its
    /// stale and pending ports, which levels hold ports, each slot's lowest levels, and its ports'
    /// costs (no effect on results).
    #[inline]
    pub fn fetch_switch(&self, li: usize) {
        use super::prefetch::{prefetch, prefetch_span};
        let w = self.words;
        prefetch(&self.stale[li * w]);
        prefetch(&self.pending[li * w]);
        prefetch(&self.nonempty[li * 2]);
        prefetch(&self.lvl[li * 2 * LEVELS * w]);
        prefetch(&self.lvl[(li * 2 + 1) * LEVELS * w]);
        prefetch_span(&self.cost[li * self.r..(li + 1) * self.r]);
    }

    /// Words per mask (see [`Mask`]): 1 where the switches have at most 64 switch-to-switch ports.
    #[inline]
    pub fn words(&self) -> usize {
        self.words
    }

    /// A lower bound of the cost of every port of slot `slot` of switch `li`: the lowest level
    /// with a port, or [`LEVELS`] where none has one (every port costs that or more, or is full).
    #[inline]
    pub fn least_level(&self, li: usize, slot: usize) -> u32 {
        let ne = self.nonempty[li * 2 + slot];
        if ne == 0 {
            LEVELS as u32
        } else {
            ne.trailing_zeros()
        }
    }

    /// The lowest cost `k` among the ports of `mask` on slot `slot` of switch `li` with
    /// `k * scale + offset <= limit`, with the ports at that cost; `None` if there is none.
    /// (Selection's bound: a multiplication per level rather than a division per class.) `M` has
    /// [`CostLevels::words`] words.
    #[inline]
    pub fn lowest<M: Mask>(
        &self,
        li: usize,
        slot: usize,
        mask: M,
        scale: u32,
        offset: u32,
        limit: u32,
    ) -> Option<(u32, M)> {
        debug_assert_eq!(M::WORDS, self.words);
        let s = li * 2 + slot;
        let below = |k: u32| (k as u64) * scale as u64 + offset as u64 <= limit as u64;
        for k in super::BitIter(self.nonempty[s]) {
            if !below(k as u32) {
                return None;
            }
            let m = M::load(&self.lvl, (s * LEVELS + k) * M::WORDS) & mask;
            if m != M::EMPTY {
                return Some((k as u32, m));
            }
        }
        let o = M::load(&self.over, s * M::WORDS) & mask;
        if o == M::EMPTY {
            return None;
        }
        self.lowest_over(li, slot, o, below)
    }

    /// [`CostLevels::lowest`] among ports whose cost is [`LEVELS`] or more.
    #[cold]
    fn lowest_over<M: Mask>(&self, li: usize, slot: usize, ports: M, below: impl Fn(u32) -> bool) -> Option<(u32, M)> {
        let (mut low, mut at) = (u32::MAX, M::EMPTY);
        for p in ports.ports() {
            let c = self.low(li, slot, p) as u32;
            if c < low {
                (low, at) = (c, M::bit(p));
            } else if c == low {
                at = at | M::bit(p);
            }
        }
        (low != u32::MAX && below(low)).then_some((low, at))
    }

    /// How many VCs of slot `slot` of port `port` of switch `li` reach its lowest cost.
    #[inline]
    pub fn count(&self, li: usize, slot: usize, port: usize) -> u64 {
        self.cost[li * self.r + port].count[slot] as u64
    }

    /// The lowest cost of slot `slot` of port `port` of switch `li` ([`FULL`]: no room).
    #[inline]
    pub fn low(&self, li: usize, slot: usize, port: usize) -> u16 {
        self.cost[li * self.r + port].low[slot]
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
        // Masks of one word, and of two (more ports than a word holds).
        levels_match_a_scan::<u64>(21);
        levels_match_a_scan::<PortMask>(100);
    }

    fn levels_match_a_scan<M: Mask + std::fmt::Debug>(r: usize) {
        let n = 3;
        let mut lv = CostLevels::new(n, r, None);
        assert_eq!(lv.words(), M::WORDS);
        let mut rng = stream(3, 0, Purpose::Router);
        let mut costs = vec![FULL; n * 2 * r];
        let mut hits = 0;
        for step in 0..20_000 {
            let (li, slot, p) =
                (below(&mut rng, n as u64) as usize, below(&mut rng, 2) as usize, below(&mut rng, r as u64) as usize);
            let c = match below(&mut rng, 10) {
                0 => FULL,
                1 => LEVELS as u16 - 4 + below(&mut rng, 10) as u16,
                _ => below(&mut rng, 12) as u16,
            };
            costs[(li * 2 + slot) * r + p] = c;
            let lows = [(costs[li * 2 * r + p], 1), (costs[(li * 2 + 1) * r + p], 1)];
            lv.set_port(li, p, lows, false);
            if step % 7 == 0 {
                let mask = (0..r).filter(|_| below(&mut rng, 3) == 0).fold(M::EMPTY, |m, p| m | M::bit(p));
                // Costs up to 4 (`k * 3 + 2 <= 14`), or any.
                let (bound, limit) = if below(&mut rng, 3) == 0 { (5, 14) } else { (u32::MAX, u32::MAX) };
                let mut want: Option<(u32, M)> = None;
                for p in 0..r {
                    let c = costs[(li * 2 + slot) * r + p];
                    if mask & M::bit(p) == M::EMPTY || c == FULL || c as u32 >= bound {
                        continue;
                    }
                    want = match want {
                        Some((low, at)) if (c as u32) > low => Some((low, at)),
                        Some((low, at)) if c as u32 == low => Some((low, at | M::bit(p))),
                        _ => Some((c as u32, M::bit(p))),
                    };
                }
                hits += want.is_some() as u32;
                assert_eq!(lv.lowest(li, slot, mask, 3, 2, limit), want, "step {step}");
            }
        }
        assert!(hits > 1000, "{r} ports: {hits}");
        // The pending marks.
        lv.set_pending(1, r - 1, true);
        lv.set_pending(1, 0, true);
        assert_eq!(lv.pending(1), 1 | 1 << (r - 1));
        lv.set_pending(1, 0, false);
        assert_eq!((lv.pending(0), lv.pending(1), lv.pending(2)), (0, 1 << (r - 1), 0));
        // The stale marks, taken once.
        lv.mark_stale(2, r - 1);
        lv.mark_stale(2, 1);
        lv.mark_stale(2, 1);
        assert_eq!((lv.take_stale(1), lv.take_stale(2)), (0, 1 << 1 | 1 << (r - 1)));
        assert_eq!(lv.take_stale(2), 0);
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
        assert_eq!(out[2], CandidateClass::new(1, 96, 1, true));
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
        assert_eq!(out[0], CandidateClass::new(1 << 1 | 1 << 7, 0, 0, false));
        assert_eq!(out[1].mask(), 1 << 4);
        assert_eq!(out[2], CandidateClass::new(1 << 2, 96, 1, true));
        // A port past the first 64-bit word.
        let wide = [run(3, 0, 3, 0, false), run(100, 0, 3, 0, false)];
        assert_eq!(classes_of(&wide, &mut ranges, &mut out), Some(1));
        assert_eq!(out[0].mask(), 1 << 3 | 1 << 100);
        // Ports not increasing, a routing run after the escape, another VC range, a port past the
        // masks.
        for bad in [
            &[run(4, 0, 3, 0, false), run(1, 0, 3, 0, false)][..],
            &[run(2, 3, 4, 96, true), run(1, 0, 3, 0, false)],
            &[run(1, 0, 3, 0, false), run(2, 0, 2, 0, false)],
            &[run(1, 0, 2, 0, false)],
            &[run(MAX_PORTS as u16, 0, 3, 0, false)],
        ] {
            assert_eq!(classes_of(bad, &mut ranges, &mut out), None, "{bad:?}");
        }
    }
}
