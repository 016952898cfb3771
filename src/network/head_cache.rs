//! The candidates of a switch's waiting heads, a few per switch, for networks whose per-input
//! candidate cache does not fit its budget (issue 34, the million-endpoint HyperX: a cache of
//! runs for every input port would take 5 GB there).
//!
//! A head waits at its switch until its request is granted; while it waits its candidates do not
//! change (they depend only on the switch and the head's routing state), yet without a cache every
//! turn asks the routing again. On `configs/hyperx-3d-32.toml` with 1% link faults and
//! `surepath-polarized`, 63% of evaluations were of a head evaluated before, and generating
//! candidates (Polarized routes and the Up/Down escape over a faulty network, about 95 runs a head)
//! took 56% of the CPU time. At about seven waiting heads per switch, a few entries per switch hold
//! nearly all of them.
//!
//! An entry keeps a head's runs as classes (a port mask per penalty and group) with each group's
//! VC range, 128 bytes instead of 12 per run, for runs of SurePath's shape: a group of
//! routing runs, then a group of escape runs, within a group one VC range and the ports strictly
//! increasing. [`HeadCache::expand`] gives back exactly those runs in their order, so selection
//! reads the same list and the results are unchanged. Other shapes are not cached.

use super::levels::{slot_of, CandidateClass, SlotRanges};
use crate::routing::CandidateRun;

/// Which cache holds waiting heads' candidates (`hxsim run --candidate-cache`). Results are the
/// same with any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CandidateCache {
    /// One head per input port where that fits the partition's cache budget (with cost levels
    /// where they fit too), else a few heads per switch (this module's cache) where those fit,
    /// else none.
    #[default]
    Auto,
    /// A few heads per switch (where they fit the budget), with cost levels where those fit, as
    /// `Auto` on a network too large for the per-input caches.
    Switch,
    /// None: every evaluation asks the routing (the reference the others must agree with).
    Off,
}

impl CandidateCache {
    /// The `--candidate-cache` names, in the order of [`CandidateCache::from_name`].
    pub const NAMES: [&'static str; 3] = ["auto", "switch", "off"];

    /// The mode named `name` (one of [`CandidateCache::NAMES`]).
    pub fn from_name(name: &str) -> Option<CandidateCache> {
        match name {
            "auto" => Some(CandidateCache::Auto),
            "switch" => Some(CandidateCache::Switch),
            "off" => Some(CandidateCache::Off),
            _ => None,
        }
    }
}

// An entry fills two cache lines (the module docs' 128 bytes).
const _: () = assert!(std::mem::size_of::<Entry>() == 128);

/// Most entries per switch. On the faulty million-endpoint HyperX (PolSP, 2 threads) 12 ways found
/// 60.6% of evaluations cached against 62.2% for 16 (the share of evaluations that are of a head
/// evaluated before) and 45.8% for 8.
const WAYS: usize = 12;

/// Fewest entries per switch worth keeping (a partition whose budget holds fewer keeps none).
const MIN_WAYS: usize = 4;

/// Bytes of one entry and its tag.
const WAY_BYTES: usize = 4 + std::mem::size_of::<Entry>();

/// Most classes an entry holds (a head whose runs form more is not cached). PolSP's heads on
/// the faulty million-endpoint HyperX form 4 or 5, 6 at most in 15M.
const CLASSES: usize = 6;

/// Ports a class's mask can hold.
const MASK_PORTS: usize = 128;

/// "No head" in [`HeadCache::tags`].
const EMPTY: u32 = 0;

/// One penalty class of a cached head: the ports of `mask` (its group is in [`Entry::escape`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Class {
    /// In 32-bit words, so that an entry takes 128 bytes.
    mask: [u32; 4],
    penalty: u32,
}

/// A cached head's runs as classes.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    classes: [Class; CLASSES],
    len: u8,
    /// Bit `i`: class `i` is of the escape group.
    escape: u8,
    /// The VC range of each group (routing, escape).
    ranges: [(u8, u8); 2],
    /// Whether the classes are the routing group's only, the escape group's to come when
    /// selection needs them ([`crate::routing::Routing::escape_penalty_floor`]).
    escape_later: bool,
}

impl Entry {
    /// `runs` as classes, or `None` where they do not have the shape of the module docs or form
    /// more than [`CLASSES`] classes.
    fn of(runs: &[CandidateRun]) -> Option<Entry> {
        let mut e = Entry::default();
        let (mut group, mut last) = (0usize, -1i32);
        for r in runs {
            let g = r.escape as usize;
            if g < group {
                return None;
            }
            if g > group {
                (group, last) = (g, -1);
            }
            if r.port as usize >= MASK_PORTS || r.port as i32 <= last || r.hi <= r.lo {
                return None;
            }
            last = r.port as i32;
            if e.ranges[g] == (0, 0) {
                e.ranges[g] = (r.lo, r.hi);
            } else if e.ranges[g] != (r.lo, r.hi) {
                return None;
            }
            let n = e.len as usize;
            let i = match (0..n).find(|&i| e.classes[i].penalty == r.penalty && (e.escape >> i & 1 == 1) == r.escape) {
                Some(i) => i,
                None if n == CLASSES => return None,
                None => {
                    e.classes[n] = Class { mask: [0; 4], penalty: r.penalty };
                    e.escape |= (r.escape as u8) << n;
                    e.len += 1;
                    n
                }
            };
            e.classes[i].mask[r.port as usize / 32] |= 1 << (r.port % 32);
        }
        Some(e)
    }

    /// Classes given as (ports, penalty, escape, VC range), or `None` where they are more than
    /// [`CLASSES`], or a group's classes differ in VC range.
    fn of_parts(parts: impl Iterator<Item = (u128, u32, bool, (u8, u8))>) -> Option<Entry> {
        let mut e = Entry::default();
        for (mask, penalty, escape, range) in parts {
            let (n, g) = (e.len as usize, escape as usize);
            if n == CLASSES || range.1 <= range.0 {
                return None;
            }
            if e.ranges[g] == (0, 0) {
                e.ranges[g] = range;
            } else if e.ranges[g] != range {
                return None;
            }
            let mask = [mask as u32, (mask >> 32) as u32, (mask >> 64) as u32, (mask >> 96) as u32];
            e.classes[n] = Class { mask, penalty };
            e.escape |= (escape as u8) << n;
            e.len += 1;
        }
        Some(e)
    }

    /// The runs of this entry, appended to `out` in the order they were stored: group by group,
    /// ports increasing.
    fn expand(&self, out: &mut Vec<CandidateRun>) {
        let classes = &self.classes[..self.len as usize];
        for (g, &(lo, hi)) in self.ranges.iter().enumerate() {
            let escape = g == 1;
            // The class of each port of the group, then the ports in increasing order.
            let mut of = [0u8; MASK_PORTS];
            let mut all = [0u32; 4];
            for (i, c) in classes.iter().enumerate().filter(|&(i, _)| (self.escape >> i & 1 == 1) == escape) {
                for w in 0..4 {
                    all[w] |= c.mask[w];
                    let mut m = c.mask[w];
                    while m != 0 {
                        of[w * 32 + m.trailing_zeros() as usize] = i as u8;
                        m &= m - 1;
                    }
                }
            }
            for (w, &word) in all.iter().enumerate() {
                let mut m = word;
                while m != 0 {
                    let port = w * 32 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    let penalty = classes[of[port] as usize].penalty;
                    out.push(CandidateRun { penalty, port: port as u16, lo, hi, escape });
                }
            }
        }
    }
}

/// Up to [`WAYS`] cached heads per switch of a partition (see the module docs), tagged by input
/// port and VC and replaced round robin.
#[derive(Debug, Default)]
pub(super) struct HeadCache {
    /// Entries per switch.
    ways: usize,
    /// Per switch, `ways` tags `(port << 8 | vc) + 1` ([`EMPTY`]: none).
    tags: Vec<u32>,
    /// Per switch, the way the next store takes when none is empty.
    next: Vec<u8>,
    entries: Vec<Entry>,
}

impl HeadCache {
    /// Entries per switch of the cache of `n` switches within `budget` bytes: [`WAYS`], or fewer
    /// where they do not fit; `None` where not even [`MIN_WAYS`] fit.
    fn ways_within(n: usize, budget: usize) -> Option<usize> {
        let ways = (budget / n.max(1)).saturating_sub(1) / WAY_BYTES;
        (ways >= MIN_WAYS).then_some(ways.min(WAYS))
    }

    /// Bytes of the cache of `n` switches within `budget` (0: none fits).
    pub fn bytes_within(n: usize, budget: usize) -> usize {
        Self::ways_within(n, budget).map_or(0, |w| n * (w * WAY_BYTES + 1))
    }

    /// An empty cache for `n` switches within `budget` bytes, if one fits.
    pub fn within(n: usize, budget: usize) -> Option<Self> {
        let ways = Self::ways_within(n, budget)?;
        Some(HeadCache {
            ways,
            tags: vec![EMPTY; n * ways],
            next: vec![0; n],
            entries: vec![Entry::default(); n * ways],
        })
    }

    /// Whether this partition keeps one.
    #[inline]
    pub fn is_on(&self) -> bool {
        !self.next.is_empty()
    }

    #[inline]
    fn tag(port: usize, vc: usize) -> u32 {
        ((port as u32) << 8 | vc as u32) + 1
    }

    /// The entry of the head of input `port`, VC `vc` of local switch `li`, if cached.
    #[inline]
    pub fn find(&self, li: usize, port: usize, vc: usize) -> Option<usize> {
        let tag = Self::tag(port, vc);
        let w = self.ways;
        self.tags[li * w..(li + 1) * w].iter().position(|&t| t == tag).map(|i| li * w + i)
    }

    /// Hints the cache to fetch the tags of local switch `li` (no effect on results).
    #[inline]
    pub fn fetch_tags(&self, li: usize) {
        let w = self.ways;
        super::prefetch::prefetch_span(&self.tags[li * w..(li + 1) * w]);
    }

    /// Hints the cache to fetch the entry of the head of input `port`, VC `vc` of local switch
    /// `li`, if cached (no effect on results).
    #[inline]
    pub fn fetch_entry(&self, li: usize, port: usize, vc: usize) {
        if let Some(e) = self.find(li, port, vc) {
            super::prefetch::prefetch_span(std::slice::from_ref(&self.entries[e]));
        }
    }

    /// Appends the runs of entry `e` (from [`HeadCache::find`]) to `out`: those stored.
    #[inline]
    pub fn expand(&self, e: usize, out: &mut Vec<CandidateRun>) {
        self.entries[e].expand(out);
    }

    /// Whether entry `e` (from [`HeadCache::find`]) holds its head's routing group only
    /// ([`HeadCache::store_classes`]).
    #[inline]
    pub fn escape_later(&self, e: usize) -> bool {
        self.entries[e].escape_later
    }

    /// The classes of entry `e` (from [`HeadCache::find`]), in the order stored: each as its ports
    /// (bit `p` for port `p`), penalty, group (escape or not) and the group's VC range: the tests'
    /// reference for [`HeadCache::classes_into`].
    #[cfg(test)]
    pub fn classes(&self, e: usize) -> impl Iterator<Item = (u128, u32, bool, (u8, u8))> + '_ {
        let entry = &self.entries[e];
        entry.classes[..entry.len as usize].iter().enumerate().map(move |(i, c)| {
            let escape = entry.escape >> i & 1 == 1;
            let mask = c.mask.iter().rev().fold(0u128, |m, &w| m << 32 | w as u128);
            (mask, c.penalty, escape, entry.ranges[escape as usize])
        })
    }

    /// The classes of entry `e` (from [`HeadCache::find`]) as selection reads them, written into
    /// `out` as [`super::levels::classes_of_parts`] writes them from their parts (128-bit mask,
    /// penalty, group, VC range), without those parts between: a group's slot is looked up at its
    /// first class, a slot not seen yet taking the group's range. The number of classes, or
    /// `None` where a group's range does not match its slot's.
    #[inline]
    pub fn classes_into(&self, e: usize, ranges: &mut SlotRanges, out: &mut [CandidateClass]) -> Option<usize> {
        const { assert!(CLASSES <= super::levels::MAX_CLASSES) };
        let entry = &self.entries[e];
        let n = entry.len as usize;
        let mut slot: [Option<u8>; 2] = [None; 2];
        for (i, (c, o)) in entry.classes[..n].iter().zip(out.iter_mut()).enumerate() {
            let g = (entry.escape >> i & 1) as usize;
            let s = match slot[g] {
                Some(s) => s,
                None => *slot[g].insert(slot_of(ranges, entry.ranges[g].0, entry.ranges[g].1)? as u8),
            };
            let [w0, w1, w2, w3] = c.mask.map(u64::from);
            *o = CandidateClass { lo: w0 | w1 << 32, hi: w2 | w3 << 32, penalty: c.penalty, slot: s, escape: g == 1 };
        }
        Some(n)
    }

    /// Caches `runs` as the candidates of the head of input `port`, VC `vc` of local switch `li`
    /// (not cached, and nothing replaced, where they do not form an entry).
    pub fn store(&mut self, li: usize, port: usize, vc: usize, runs: &[CandidateRun]) {
        if let Some(entry) = Entry::of(runs) {
            self.put(li, port, vc, entry);
        }
    }

    /// Caches the classes `parts` (ports as 128-bit masks, no port in two
    /// classes of a group) as the candidates of the head of input `port`, VC `vc` of local switch
    /// `li`, all of them or (`escape_later`) the routing group's only: whether they formed an
    /// entry (where not, nothing is stored or replaced).
    pub fn store_classes(
        &mut self,
        li: usize,
        port: usize,
        vc: usize,
        parts: impl Iterator<Item = (u128, u32, bool, (u8, u8))>,
        escape_later: bool,
    ) -> bool {
        let Some(entry) = Entry::of_parts(parts) else { return false };
        self.put(li, port, vc, Entry { escape_later, ..entry });
        true
    }

    /// Stores `entry` for the head of input `port`, VC `vc` of local switch `li`: in its own way
    /// where it has one (its classes completed), else in an empty way, else round robin.
    fn put(&mut self, li: usize, port: usize, vc: usize, entry: Entry) {
        let n = self.ways;
        let tag = Self::tag(port, vc);
        let ways = &mut self.tags[li * n..(li + 1) * n];
        let w = match ways.iter().position(|&t| t == tag).or_else(|| ways.iter().position(|&t| t == EMPTY)) {
            Some(w) => w,
            None => {
                let w = self.next[li] as usize;
                self.next[li] = ((w + 1) % n) as u8;
                w
            }
        };
        ways[w] = tag;
        self.entries[li * n + w] = entry;
    }

    /// Forgets the head of input `port`, VC `vc` of local switch `li` (it left, or was dropped).
    #[inline]
    pub fn forget(&mut self, li: usize, port: usize, vc: usize) {
        let tag = Self::tag(port, vc);
        let w = self.ways;
        for t in &mut self.tags[li * w..(li + 1) * w] {
            if *t == tag {
                *t = EMPTY;
            }
        }
    }

    /// Forgets every head.
    pub fn clear(&mut self) {
        self.tags.fill(EMPTY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{below, stream, Purpose};

    fn run(port: u16, lo: u8, hi: u8, penalty: u32, escape: bool) -> CandidateRun {
        CandidateRun { penalty, port, lo, hi, escape }
    }

    /// Random lists of SurePath's shape on up to 128 ports come back exactly, in order, including
    /// lists that fill every class (three penalties in each group).
    #[test]
    fn entries_give_back_the_runs_they_stored() {
        let mut rng = stream(7, 0, Purpose::Router);
        let mut full = 0;
        for _ in 0..2_000 {
            let mut runs = Vec::new();
            for (escape, lo, hi) in [(false, 0u8, 5u8), (true, 5, 6)] {
                for port in 0..128u16 {
                    if below(&mut rng, 3) == 0 {
                        let penalty = [0, 16, 48][below(&mut rng, 3) as usize] + escape as u32;
                        runs.push(run(port, lo, hi, penalty, escape));
                    }
                }
            }
            let e = Entry::of(&runs).expect("at most six classes");
            full += (e.len as usize == CLASSES) as u32;
            let mut back = Vec::new();
            e.expand(&mut back);
            assert_eq!(back, runs);
            // The classes name the same candidates: each port of a class is one of its runs.
            let mut c = HeadCache::within(1, 1 << 20).unwrap();
            c.store(0, 1, 2, &runs);
            let mut from_classes: Vec<CandidateRun> = c
                .classes(c.find(0, 1, 2).unwrap())
                .flat_map(|(mask, penalty, escape, (lo, hi))| {
                    (0..128u16).filter(move |&p| mask >> p & 1 == 1).map(move |p| run(p, lo, hi, penalty, escape))
                })
                .collect();
            from_classes.sort_by_key(|r| (r.escape, r.port));
            assert_eq!(from_classes, runs);
        }
        assert!(full > 1_000, "only {full} lists filled every class");
    }

    /// `classes_into` writes what `classes_of_parts` writes from `classes`, and leaves the slot
    /// ranges as it does: for entries of either group or both, in either order, and for slots
    /// not seen yet, holding the entry's ranges or holding others (where both decline).
    #[test]
    fn classes_into_writes_what_classes_of_parts_writes() {
        use crate::network::levels::{classes_of_parts, MAX_CLASSES};
        let mut rng = stream(11, 0, Purpose::Router);
        let mut declined = 0;
        for _ in 0..2_000 {
            // Escape group on VCs 5..6, or on 0..2 (the routing group's slot, another range).
            let esc_range = if below(&mut rng, 4) == 0 { (0u8, 2u8) } else { (5, 6) };
            let mut groups = [(false, (0u8, 5u8)), (true, esc_range)];
            if below(&mut rng, 2) == 0 {
                groups.swap(0, 1);
            }
            let mut parts = Vec::new();
            for (escape, range) in groups {
                for _ in 0..below(&mut rng, 4) {
                    let mask = (below(&mut rng, u64::MAX) as u128) << below(&mut rng, 64) | 1;
                    parts.push((mask, below(&mut rng, 100) as u32, escape, range));
                }
            }
            let mut c = HeadCache::within(1, 1 << 20).unwrap();
            assert!(c.store_classes(0, 1, 2, parts.iter().copied(), false));
            let e = c.find(0, 1, 2).unwrap();
            for start in [[(0, 0), (0, 0)], [(0, 5), (5, 6)], [(0, 5), (0, 0)], [(0, 4), (5, 6)], [(0, 0), (4, 6)]] {
                let (mut r1, mut r2) = (start, start);
                let (mut o1, mut o2) =
                    ([CandidateClass::default(); MAX_CLASSES], [CandidateClass::default(); MAX_CLASSES]);
                let want = classes_of_parts(c.classes(e), &mut r1, &mut o1);
                let got = c.classes_into(e, &mut r2, &mut o2);
                assert_eq!(got, want, "{parts:?} from {start:?}");
                assert_eq!(r2, r1, "{parts:?} from {start:?}");
                if let Some(n) = want {
                    assert_eq!(o2[..n], o1[..n], "{parts:?} from {start:?}");
                } else {
                    declined += 1;
                }
            }
        }
        assert!(declined > 1_000, "only {declined} declined");
    }

    /// Lists of another shape are declined: a routing run after the escape, ports not increasing
    /// in a group, two VC ranges in a group, a port past the masks, too many penalties.
    #[test]
    fn other_shapes_are_not_cached() {
        let many: Vec<_> = (0..7).map(|i| run(i, 0, 2, i as u32, false)).collect();
        for bad in [
            &[run(2, 3, 4, 96, true), run(1, 0, 3, 0, false)][..],
            &[run(4, 0, 3, 0, false), run(4, 0, 3, 16, false)],
            &[run(1, 0, 3, 0, false), run(2, 0, 2, 0, false)],
            &[run(128, 0, 3, 0, false)],
            &many,
        ] {
            assert!(Entry::of(bad).is_none(), "{bad:?}");
        }
        // The escape group alone, and an empty list, are entries.
        assert!(Entry::of(&[run(3, 5, 6, 0, true)]).is_some());
        assert!(Entry::of(&[]).is_some());
    }

    /// A switch holds [`WAYS`] heads; a store past them replaces round robin, and a forgotten or
    /// replaced head is no longer found.
    #[test]
    fn ways_replace_round_robin_and_forget() {
        let mut c = HeadCache::within(2, 1 << 20).unwrap();
        assert_eq!(c.ways, WAYS);
        let runs = [run(1, 0, 3, 0, false)];
        for p in 0..WAYS {
            c.store(1, p, 0, &runs);
        }
        assert!((0..WAYS).all(|p| c.find(1, p, 0).is_some()));
        assert_eq!(c.find(0, 0, 0), None, "another switch");
        c.store(1, 99, 2, &runs);
        assert_eq!(c.find(1, 0, 0), None, "the first way was replaced");
        assert!(c.find(1, 99, 2).is_some());
        c.forget(1, 99, 2);
        assert_eq!(c.find(1, 99, 2), None);
        c.store(1, 50, 1, &runs);
        assert!(c.find(1, 50, 1).is_some(), "an emptied way is taken first");
        assert!(c.find(1, 1, 0).is_some(), "so nothing else was replaced");
        c.clear();
        assert!((0..WAYS).all(|p| c.find(1, p, 0).is_none()));
    }

    /// A head cached with its routing group only is completed in its own way, which then holds
    /// every class, and no other way changes.
    #[test]
    fn a_head_completed_with_its_escape_classes_keeps_its_way() {
        let mut c = HeadCache::within(1, 1 << 20).unwrap();
        let routing = [(0b110u128, 0, false, (0, 3)), (0b1000, 64, false, (0, 3))];
        let escape = [(0b1u128, 96, true, (3, 4))];
        for p in 0..WAYS {
            assert!(c.store_classes(0, p, 1, routing.into_iter(), true));
        }
        let e = c.find(0, 4, 1).unwrap();
        assert!(c.escape_later(e));
        assert_eq!(c.classes(e).collect::<Vec<_>>(), routing);
        assert!(c.store_classes(0, 4, 1, routing.into_iter().chain(escape), false));
        assert_eq!(c.find(0, 4, 1), Some(e), "the same way");
        assert!(!c.escape_later(e));
        assert_eq!(c.classes(e).collect::<Vec<_>>(), [&routing[..], &escape[..]].concat());
        assert!((0..WAYS).filter(|&p| p != 4).all(|p| c.find(0, p, 1).is_some_and(|f| c.escape_later(f))));
        // Classes that form no entry (a group on two VC ranges) store nothing.
        let split = [(0b1u128, 0, false, (0, 3)), (0b10, 64, false, (0, 2))];
        assert!(!c.store_classes(0, 4, 1, split.into_iter(), true));
        assert!(!c.escape_later(e));
    }

    /// A budget too small for [`WAYS`] entries per switch gets fewer, down to [`MIN_WAYS`], and
    /// the cache stays within it.
    #[test]
    fn a_tight_budget_gets_fewer_ways() {
        let n = 1000;
        for budget in [0, n * (MIN_WAYS * WAY_BYTES + 1) - 1, n * (5 * WAY_BYTES + 1) + 7, 1 << 30] {
            let want = match budget / n {
                b if b < MIN_WAYS * WAY_BYTES + 1 => None,
                b => Some(((b - 1) / WAY_BYTES).min(WAYS)),
            };
            assert_eq!(HeadCache::ways_within(n, budget), want, "budget {budget}");
            assert!(HeadCache::bytes_within(n, budget) <= budget);
            assert_eq!(HeadCache::within(n, budget).map(|c| c.tags.len()), want.map(|w| w * n));
        }
        assert_eq!(HeadCache::ways_within(n, n * (5 * WAY_BYTES + 1) + 7), Some(5));
    }
}
