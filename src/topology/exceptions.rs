//! Exact distances on a faulty network without all-pairs tables, for any family whose fault-free
//! distance has a closed form `d0`: the closed form plus, per destination, a sorted list of the
//! sources whose distance the faults changed (*exceptions*), found by a dynamic-BFS repair.
//!
//! **Why it is exact.** Faults only remove links (a failed switch removes all of its links), so the
//! faulty distance `d_f >= d0` everywhere. Fix a destination `b` and call `u != b` *affected* when
//! `d_f(u,b) > d0(u,b)`. A neighbour `y` of `u` is *downhill* when `d0(y,b) = d0(u,b) - 1`; then
//! `u` is unaffected iff it has a live link to an unaffected downhill neighbour (a live shortest path
//! of the fault-free network starts with such a hop, and conversely). So the affected switches are
//! decided in increasing `d0`, each from its downhill neighbours, and:
//! - an affected `u` whose live downhill neighbours are all unaffected has none at all: every link
//!   from `u` to a downhill neighbour failed. These *seeds* are the only affected switches that no
//!   affected switch below them reveals; the family enumerates a superset of them per destination
//!   from the failed links ([`SeedIndex`]), cheaply, without scanning every fault per destination;
//! - every other affected `u` is an uphill neighbour (`d0 + 1`), over a live link, of an affected
//!   switch, so a bucket queue over `d0` that starts from the seeds and pushes the live uphill
//!   neighbours of each affected switch meets every affected switch (Ramalingam and Reps' dynamic
//!   shortest paths, specialised to unit weights and a closed-form `d0`).
//!
//! Exact distances of the affected switches follow from `d_f(u,b) = 1 + min over live neighbours
//! y of d_f(y,b)`, where an unaffected `y` has `d_f = d0`: a multi-source BFS (Dijkstra with unit
//! weights) over the affected switches whose sources carry `1 + min d0` of their unaffected live
//! neighbours. Pairs in different connected components are unreachable (one labelling of the
//! components); the search stays inside the destination's component, whose switches only have live
//! links to it.
//!
//! **Which destinations.** Routing asks for distances towards the switch of a packet's destination
//! server, and a few routings (Valiant's intermediates) towards any switch. So the lists may be kept
//! only for the *targets*, the switches with servers, where the others need none: `d(a, b)` with a
//! target `b` reads `b`'s list, and with a target `a` reads `a`'s (links are bidirectional, so
//! `d(a, b) = d(b, a)`). On a 4-level fat tree most exceptions lead towards the switches above the
//! leaves, so this keeps a small fraction of them. A pair with neither end a target is never asked
//! for then, and [`Exceptions::distance`] refuses it.
//!
//! Cost per destination: the seed candidates, plus the degree times the `d0` evaluations of every
//! candidate and affected switch; nothing per destination without faults near it. Destinations run
//! in parallel in fixed chunks, each with its own scratch (no allocation per destination once the
//! scratch has grown), and the lists are concatenated in destination order, so the result does not
//! depend on the thread count. Memory: a `u32` component label per switch, a `u32` offset per
//! destination, and [`BYTES_PER_EXCEPTION`] per exception, held twice while the per-chunk lists
//! are joined. Their number depends on where the faults fall (about 2,000 per failed link on a
//! 32-ary 4-tree), so the build may be given a budget of bytes for the lists: a running total of the
//! exceptions found stops it with [`OverBudget`] before they would take more (checked once per
//! destination, so the setup pays one atomic add per destination and the routing nothing). Lookups
//! allocate, hash and lock nothing: a component check, then a binary search in the destination's
//! list.

use super::fabric::UNREACHABLE;
use super::{PortId, SwitchId};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Bytes one exception takes in the lists: its source (`u32`) and its exact distance (`u8`).
pub const BYTES_PER_EXCEPTION: u64 = 5;

/// Copies of the lists held at the peak of a build: the per-chunk lists and the joined ones.
const COPIES_AT_PEAK: u64 = 2;

/// The exception lists of a build would take more than the bytes they were allowed
/// ([`Exceptions::new`]'s `budget`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverBudget {
    /// Bytes the lists were allowed at the peak of the build (both copies).
    pub budget: u64,
    /// The most exceptions that fit in `budget`: the faults need more.
    pub most: u64,
}

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "more than {} distance exceptions ({BYTES_PER_EXCEPTION} bytes each, held twice while the per-chunk lists are \
             joined), more than the {} they may take",
            self.most,
            crate::memory::human_bytes(self.budget)
        )
    }
}

impl OverBudget {
    /// The refusal for lists of `budget` bytes at their peak.
    fn of(budget: u64) -> Self {
        OverBudget { budget, most: budget / (BYTES_PER_EXCEPTION * COPIES_AT_PEAK) }
    }
}

/// A family with a closed-form fault-free distance, as [`Exceptions`] reads it.
pub trait ClosedForm: Sync {
    /// Number of switches.
    fn switch_count(&self) -> usize;
    /// Fault-free hop distance between two switches.
    fn d0(&self, a: SwitchId, b: SwitchId) -> u32;
    /// Switch-to-switch ports of `x`.
    fn port_count(&self, x: SwitchId) -> usize;
    /// The switch at the far end of port `p` of `x`, if wired.
    fn far_switch(&self, x: SwitchId, p: PortId) -> Option<SwitchId>;
    /// Optionally, the ports of `u` in ranges of equal `d0(far end, b) - d0(u, b)` (-1, 0 or +1),
    /// every wired port in exactly one range, and true; false (calling nothing) where the family
    /// has no such shortcut, and then [`Exceptions`] evaluates `d0` at every neighbour. Families
    /// whose neighbours fall into a few classes towards `b` (a fat tree's parents: the one on
    /// `b`'s side and the others) save a `d0` per port.
    fn port_classes(&self, _u: SwitchId, _b: SwitchId, _f: impl FnMut(std::ops::Range<PortId>, i32)) -> bool {
        false
    }
}

/// Per destination, a superset of the switches every link of which to a downhill neighbour failed
/// (the seeds of the module doc), in any order, repeats allowed.
pub trait SeedIndex: Sync {
    /// Append the seed candidates of destination `b` to `out`.
    fn candidates(&self, b: SwitchId, out: &mut Vec<SwitchId>);
}

/// Destinations per parallel task: large enough that the per-task buffers are reused many times.
const CHUNK: usize = 256;

/// Component labels and per-destination exception lists: what both exact faulty-distance schemes
/// (this module's and the HyperX one of [`super::distances`]) store beside their closed form.
#[derive(Default)]
pub struct ExceptionLists {
    /// Connected component of each switch over live links.
    pub comp: Vec<u32>,
    /// Whether there is more than one component.
    pub split: bool,
    /// Where each destination's exceptions begin in `src` and `dist` (`n + 1` offsets).
    pub start: Vec<u32>,
    /// Exceptions of destination `b`: sources `src[start[b]..start[b+1]]`, sorted.
    pub src: Vec<SwitchId>,
    /// Exact distances (at most 254; [`u8::MAX`] never occurs inside a component).
    pub dist: Vec<u8>,
}

impl ExceptionLists {
    /// The exact distance from `a` to `b` when `(a, b)` is an exception of `b`.
    #[inline]
    pub fn exception(&self, a: SwitchId, b: SwitchId) -> Option<u8> {
        let (src, dist) = self.exceptions_to(b);
        src.binary_search(&a).ok().map(|i| dist[i])
    }

    /// The exceptions of destination `b`: sources (sorted) and their exact distances to `b`.
    #[inline]
    pub fn exceptions_to(&self, b: SwitchId) -> (&[SwitchId], &[u8]) {
        let (lo, hi) = (self.start[b as usize] as usize, self.start[b as usize + 1] as usize);
        (&self.src[lo..hi], &self.dist[lo..hi])
    }

    /// Whether `a` and `b` are in the same connected component.
    #[inline]
    pub fn same_component(&self, a: SwitchId, b: SwitchId) -> bool {
        !self.split || self.comp[a as usize] == self.comp[b as usize]
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        4 * (self.comp.len() + self.start.len() + self.src.len()) + self.dist.len()
    }
}

/// Exact faulty distances: the closed form `d0` plus sorted exceptions (see the module doc).
pub struct Exceptions<C> {
    cf: C,
    /// `target[b]`: `b`'s exceptions are kept (module doc). Empty: every switch's are.
    target: Vec<bool>,
    /// Component labels and per-destination exception lists (shared with the HyperX scheme).
    lists: ExceptionLists,
}

/// One task's reusable buffers, indexed by switch (stamps avoid clearing them per destination).
struct Scratch {
    epoch: u32,
    /// `queued[x] == epoch`: `x` entered the candidate buckets for this destination.
    queued: Vec<u32>,
    /// `hit[x] == epoch`: `x` is affected.
    hit: Vec<u32>,
    /// `done[x] == epoch`: `x`'s exact distance is final.
    done: Vec<u32>,
    /// Tentative exact distance of an affected switch.
    val: Vec<u32>,
    buckets: Vec<Vec<SwitchId>>,
    seeds: Vec<SwitchId>,
    affected: Vec<SwitchId>,
    order: Vec<(u32, SwitchId)>,
    queue: Vec<(u32, SwitchId)>,
    out: Vec<(SwitchId, u8)>,
}

impl Scratch {
    fn new(n: usize) -> Self {
        Scratch {
            epoch: 0,
            queued: vec![0; n],
            hit: vec![0; n],
            done: vec![0; n],
            val: vec![0; n],
            buckets: Vec::new(),
            seeds: Vec::new(),
            affected: Vec::new(),
            order: Vec::new(),
            queue: Vec::new(),
            out: Vec::new(),
        }
    }
}

impl<C: ClosedForm> Exceptions<C> {
    /// Build from the closed form, a port-liveness predicate (a failed switch has no live port),
    /// switch liveness, the family's seed index and the targets: `target[b]` when `b`'s exceptions
    /// are to be kept, every switch's when `target` is empty (module doc). `budget`: the bytes the
    /// exception lists may take at the peak of the build, both copies ([`BYTES_PER_EXCEPTION`]
    /// each); the build stops with [`OverBudget`] as soon as the exceptions found so far would
    /// pass it. Whether it stops depends only on the total, not on the thread count. `None`: no
    /// limit.
    pub fn new(
        cf: C,
        alive: impl Fn(SwitchId, PortId) -> bool + Sync,
        switch_alive: impl Fn(SwitchId) -> bool + Sync,
        seeds: &impl SeedIndex,
        target: Vec<bool>,
        budget: Option<u64>,
    ) -> Result<Self, OverBudget> {
        let n = cf.switch_count();
        debug_assert!(target.is_empty() || target.len() == n, "one target flag per switch");
        let (comp, split) = components(&cf, &alive);
        // The exceptions found so far over all tasks; each task stops once they pass `most`, so
        // the lists stop growing at most one destination per task past it.
        let most = budget.map_or(u64::MAX, |b| OverBudget::of(b).most);
        let (found, over) = (AtomicU64::new(0), AtomicBool::new(false));
        let chunks: Vec<(Vec<u32>, Vec<SwitchId>, Vec<u8>)> = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map_init(
                || Scratch::new(n),
                |s, c| {
                    let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
                    let mut counts = Vec::with_capacity(hi - lo);
                    let (mut src, mut dist) = (Vec::new(), Vec::new());
                    for b in lo..hi {
                        if over.load(Ordering::Relaxed) {
                            break;
                        }
                        let b = b as SwitchId;
                        if switch_alive(b) && (target.is_empty() || target[b as usize]) {
                            repair(&cf, &alive, &comp, seeds, b, s);
                        } else {
                            s.out.clear();
                        }
                        if !s.out.is_empty()
                            && found.fetch_add(s.out.len() as u64, Ordering::Relaxed) + s.out.len() as u64 > most
                        {
                            over.store(true, Ordering::Relaxed);
                            break;
                        }
                        counts.push(s.out.len() as u32);
                        src.extend(s.out.iter().map(|e| e.0));
                        dist.extend(s.out.iter().map(|e| e.1));
                    }
                    // Without the growth's spare capacity the lists take what the budget counts.
                    src.shrink_to_fit();
                    dist.shrink_to_fit();
                    (counts, src, dist)
                },
            )
            .collect();
        // Every exception found was added to `found` (the tasks stop only past `most`), so this is
        // decided by the total alone: the thread count cannot change it.
        if over.load(Ordering::Relaxed) {
            return Err(OverBudget::of(budget.unwrap_or(u64::MAX)));
        }
        let total: usize = chunks.iter().map(|c| c.1.len()).sum();
        let mut start = Vec::with_capacity(n + 1);
        let (mut src, mut dist) = (Vec::with_capacity(total), Vec::with_capacity(total));
        start.push(0u32);
        for (counts, s, d) in chunks {
            for k in counts {
                start.push(start.last().unwrap() + k);
            }
            src.extend(s);
            dist.extend(d);
        }
        Ok(Exceptions { cf, target, lists: ExceptionLists { comp, split, start, src, dist } })
    }

    /// Whether `b`'s exceptions are kept (module doc).
    #[inline]
    pub fn is_target(&self, b: SwitchId) -> bool {
        self.target.is_empty() || self.target[b as usize]
    }

    /// Whether every switch's exceptions are kept, so that any pair may be asked for.
    pub fn every_target(&self) -> bool {
        self.target.is_empty()
    }

    /// The closed form these distances correct.
    #[inline]
    pub fn closed_form(&self) -> &C {
        &self.cf
    }

    /// Whether the distance from `a` to the target `b` ([`Exceptions::is_target`]) is not the
    /// closed form's: `(a, b)` is an exception, or the two lie in different components. A binary
    /// search, without the closed form.
    #[inline]
    pub fn differs(&self, a: SwitchId, b: SwitchId) -> bool {
        debug_assert!(self.is_target(b), "switch {b} keeps no exceptions");
        if self.lists.split && self.lists.comp[a as usize] != self.lists.comp[b as usize] {
            return true;
        }
        self.lists.exceptions_to(b).0.binary_search(&a).is_ok()
    }

    /// Exact distance from `a` to `b` over live links ([`UNREACHABLE`] if disconnected). At least
    /// one of them must be a target ([`Exceptions::is_target`]); panics otherwise, as a wrong
    /// distance would silently misroute.
    #[inline]
    pub fn distance(&self, a: SwitchId, b: SwitchId) -> u32 {
        if a == b {
            return 0;
        }
        if self.lists.split && self.lists.comp[a as usize] != self.lists.comp[b as usize] {
            return UNREACHABLE;
        }
        // Distances are symmetric: read the list of whichever end is a target.
        let (a, b) = if self.is_target(b) {
            (a, b)
        } else {
            assert!(
                self.is_target(a),
                "distance between switches {a} and {b}, neither with servers: the fabric keeps exceptions \
                 only towards switches with servers (a routing that heads elsewhere needs Targets::Every)"
            );
            (b, a)
        };
        let (lo, hi) = (self.lists.start[b as usize] as usize, self.lists.start[b as usize + 1] as usize);
        match self.lists.src[lo..hi].binary_search(&a) {
            Ok(i) => self.lists.dist[lo + i] as u32,
            Err(_) => self.cf.d0(a, b),
        }
    }

    /// When `a != b` are at their closed-form distance and the family rates its ports in classes
    /// ([`ClosedForm::port_classes`]), calls `f` with every live port of `a` (`alive`) that brings a
    /// packet one hop closer to `b`, in increasing port order, and returns true; otherwise returns
    /// false and calls nothing. Such hops lead to a neighbour one closer in the closed form that is
    /// not itself an exception (`d_f >= d0` everywhere). Also false when `b` is no target.
    #[inline]
    pub fn minimal_ports(
        &self,
        a: SwitchId,
        b: SwitchId,
        alive: impl Fn(PortId) -> bool,
        f: &mut impl FnMut(PortId),
    ) -> bool {
        if a == b || !self.same_component(a, b) || !self.is_target(b) {
            return false;
        }
        let (lo, hi) = (self.lists.start[b as usize] as usize, self.lists.start[b as usize + 1] as usize);
        let list = &self.lists.src[lo..hi];
        if list.binary_search(&a).is_ok() {
            return false;
        }
        self.cf.port_classes(a, b, |r, delta| {
            if delta == -1 {
                for p in r.filter(|&p| alive(p)) {
                    if let Some(y) = self.cf.far_switch(a, p) {
                        if y == b || list.binary_search(&y).is_err() {
                            f(p);
                        }
                    }
                }
            }
        })
    }

    /// The exceptions of destination `b`: sources (sorted) and their exact distances to `b`. Every
    /// other source of `b`'s component is at its closed-form distance from `b`. Empty for a `b`
    /// that is no target.
    #[inline]
    pub fn exceptions_to(&self, b: SwitchId) -> (&[SwitchId], &[u8]) {
        self.lists.exceptions_to(b)
    }

    /// Whether `a` and `b` are in the same connected component.
    #[inline]
    pub fn same_component(&self, a: SwitchId, b: SwitchId) -> bool {
        self.lists.same_component(a, b)
    }

    /// Number of kept pairs (towards targets) whose distance differs from the closed form
    /// (unreachable pairs excluded).
    pub fn exceptions(&self) -> usize {
        self.lists.src.len()
    }

    /// Whether every switch reaches every other.
    pub fn connected(&self) -> bool {
        !self.lists.split
    }

    /// Bytes held (for reports).
    pub fn bytes(&self) -> usize {
        self.lists.bytes() + self.target.len()
    }
}

/// Component labels over live links, and whether there is more than one.
fn components<C: ClosedForm>(cf: &C, alive: &impl Fn(SwitchId, PortId) -> bool) -> (Vec<u32>, bool) {
    let n = cf.switch_count();
    let mut comp = vec![u32::MAX; n];
    let mut stack = Vec::new();
    let mut c = 0;
    for r in 0..n {
        if comp[r] != u32::MAX {
            continue;
        }
        comp[r] = c;
        stack.push(r as SwitchId);
        while let Some(x) = stack.pop() {
            for p in 0..cf.port_count(x) as PortId {
                if !alive(x, p) {
                    continue;
                }
                if let Some(y) = cf.far_switch(x, p) {
                    if comp[y as usize] == u32::MAX {
                        comp[y as usize] = c;
                        stack.push(y);
                    }
                }
            }
        }
        c += 1;
    }
    (comp, c > 1)
}

/// The exceptions of destination `b` into `s.out`, sorted by source (module doc).
fn repair<C: ClosedForm>(
    cf: &C,
    alive: &impl Fn(SwitchId, PortId) -> bool,
    comp: &[u32],
    index: &impl SeedIndex,
    b: SwitchId,
    s: &mut Scratch,
) {
    s.out.clear();
    s.seeds.clear();
    index.candidates(b, &mut s.seeds);
    if s.seeds.is_empty() {
        return;
    }
    s.epoch = s.epoch.wrapping_add(1);
    if s.epoch == 0 {
        // The stamps wrapped: old marks could read as current.
        s.queued.fill(0);
        s.hit.fill(0);
        s.done.fill(0);
        s.epoch = 1;
    }
    let e = s.epoch;
    let cb = comp[b as usize];
    let (mut lowest, mut top) = (usize::MAX, 0);
    for i in 0..s.seeds.len() {
        let u = s.seeds[i];
        if u == b || comp[u as usize] != cb || s.queued[u as usize] == e {
            continue;
        }
        s.queued[u as usize] = e;
        let d = cf.d0(u, b) as usize;
        if s.buckets.len() <= d + 1 {
            s.buckets.resize_with(d + 2, Vec::new);
        }
        s.buckets[d].push(u);
        lowest = lowest.min(d);
        top = top.max(d);
    }
    if lowest == usize::MAX {
        return;
    }
    // Affected switches in increasing d0: a switch is unaffected iff a live link leads to an
    // unaffected downhill neighbour; the live uphill neighbours of an affected one are candidates.
    s.affected.clear();
    let mut d = lowest;
    while d <= top {
        let mut bucket = std::mem::take(&mut s.buckets[d]);
        if s.buckets.len() < d + 2 {
            s.buckets.resize_with(d + 2, Vec::new);
        }
        for &u in &bucket {
            let mut kept = false;
            let hit = &s.hit;
            let classified = cf.port_classes(u, b, |r, delta| {
                if delta == -1 && !kept {
                    kept = r.filter(|&p| alive(u, p)).filter_map(|p| cf.far_switch(u, p)).any(|y| hit[y as usize] != e);
                }
            });
            if !classified {
                kept = (0..cf.port_count(u) as PortId)
                    .filter(|&p| alive(u, p))
                    .filter_map(|p| cf.far_switch(u, p))
                    .any(|y| hit[y as usize] != e && (y == b || cf.d0(y, b) as usize + 1 == d));
            }
            if kept {
                continue;
            }
            s.hit[u as usize] = e;
            s.affected.push(u);
            let (queued, next) = (&mut s.queued, &mut s.buckets[d + 1]);
            let mut push = |x: SwitchId| {
                if queued[x as usize] != e {
                    queued[x as usize] = e;
                    next.push(x);
                }
            };
            let classified = cf.port_classes(u, b, |r, delta| {
                if delta == 1 {
                    r.filter(|&p| alive(u, p)).filter_map(|p| cf.far_switch(u, p)).for_each(&mut push);
                }
            });
            if !classified {
                (0..cf.port_count(u) as PortId)
                    .filter(|&p| alive(u, p))
                    .filter_map(|p| cf.far_switch(u, p))
                    .filter(|&x| cf.d0(x, b) as usize == d + 1)
                    .for_each(&mut push);
            }
        }
        bucket.clear();
        s.buckets[d] = bucket;
        if !s.buckets[d + 1].is_empty() {
            top = top.max(d + 1);
        }
        d += 1;
    }
    if s.affected.is_empty() {
        return;
    }
    // Exact distances: BFS over the affected switches from their unaffected live neighbours, which
    // are at their closed-form distance. `order` holds the sources by starting value; `queue` the
    // relaxed switches, whose values never decrease, so merging the two pops in Dijkstra order.
    s.order.clear();
    for &u in &s.affected {
        let mut best = u32::MAX;
        let hit = &s.hit;
        let d = cf.d0(u, b) as i32;
        let classified = cf.port_classes(u, b, |r, delta| {
            let v = (d + delta + 1) as u32;
            if v < best && r.filter(|&p| alive(u, p)).filter_map(|p| cf.far_switch(u, p)).any(|y| hit[y as usize] != e)
            {
                best = v;
            }
        });
        if !classified {
            for y in (0..cf.port_count(u) as PortId).filter(|&p| alive(u, p)).filter_map(|p| cf.far_switch(u, p)) {
                if hit[y as usize] != e {
                    best = best.min(1 + if y == b { 0 } else { cf.d0(y, b) });
                }
            }
        }
        s.val[u as usize] = best;
        if best != u32::MAX {
            s.order.push((best, u));
        }
    }
    s.order.sort_unstable();
    s.queue.clear();
    let (mut i, mut q) = (0, 0);
    loop {
        let take_order = match (s.order.get(i), s.queue.get(q)) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(a), Some(c)) => a.0 <= c.0,
        };
        let (v, u) = if take_order {
            i += 1;
            s.order[i - 1]
        } else {
            q += 1;
            s.queue[q - 1]
        };
        if s.done[u as usize] == e || v > s.val[u as usize] {
            continue;
        }
        s.done[u as usize] = e;
        for p in 0..cf.port_count(u) as PortId {
            if !alive(u, p) {
                continue;
            }
            if let Some(w) = cf.far_switch(u, p) {
                let wi = w as usize;
                if s.hit[wi] == e && s.done[wi] != e && v + 1 < s.val[wi] {
                    s.val[wi] = v + 1;
                    s.queue.push((v + 1, w));
                }
            }
        }
    }
    for &u in &s.affected {
        let v = s.val[u as usize];
        debug_assert!(v != u32::MAX, "switch {u} shares {b}'s component but found no path to it");
        s.out.push((u, if v == u32::MAX { u8::MAX } else { v.min(254) as u8 }));
    }
    s.out.sort_unstable_by_key(|x| x.0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_str;
    use crate::topology::fabric::all_links;
    use crate::topology::{Fabric, FaultSet, HyperZ, Targets, Topology};
    use std::sync::Arc;

    /// Fat trees `(zones, roots, internal_links)`: k-ary n-trees, an XGFT with unequal arities and
    /// parents, one with a level of single parents (bridges), one with parallel links.
    const TREES: &[(&[usize], &[usize], &[usize])] = &[
        (&[4, 4, 4], &[1, 4, 16], &[1, 1, 1]),
        (&[4, 4, 4, 4], &[1, 4, 16, 64], &[1, 1, 1, 1]),
        (&[2, 3, 4, 3], &[1, 2, 4, 12], &[1, 1, 1, 1]),
        (&[3, 4, 4], &[1, 1, 4], &[1, 1, 1]),
        (&[4, 4, 4], &[1, 4, 16], &[1, 2, 1]),
    ];

    fn tree_config(t: &(&[usize], &[usize], &[usize]), extra: &str) -> crate::config::Config {
        let toml = format!(
            "[topology]\nkind = \"fattree\"\nzones = {:?}\nroots = {:?}\ninternal_links = {:?}\n[routing]\nalgorithm = \
             \"nca\"\n[faults]\n{extra}\n",
            t.0, t.1, t.2
        );
        parse_str(&toml, "t", &[]).unwrap()
    }

    fn tree(t: &(&[usize], &[usize], &[usize])) -> Arc<dyn Topology> {
        let h = t.0.len();
        Arc::new(HyperZ::new(Vec::new(), t.0.to_vec(), t.1.to_vec(), t.2.to_vec(), vec![Vec::new(); h]).unwrap())
    }

    /// `z_2 ... z_h / z_{l+1}` (the bound's `T_l`) for the level `l` of the lower end of link
    /// `(s, p)`, or `None` when it is a bridge or one of parallel links: computed from the built
    /// tree, independently of the parameters' arithmetic in `fattree::exceptions_per_failed_link`.
    fn pairs_of_link(hz: &HyperZ, s: SwitchId, p: PortId) -> Option<u128> {
        let o = hz.neighbour(s, p).unwrap().0;
        let (c, parent) = if hz.level(s) < hz.level(o) { (s, o) } else { (o, s) };
        let l = hz.level(c);
        let to_parent = (0..hz.switch_ports(c) as PortId).filter(|&q| hz.neighbour(c, q).unwrap().0 == parent).count();
        let parents: std::collections::BTreeSet<SwitchId> =
            hz.up_ports(c).map(|q| hz.neighbour(c, q).unwrap().0).collect();
        if to_parent > 1 || parents.len() < 2 {
            return None;
        }
        let leaves_under_c = (0..hz.num_switches() as SwitchId)
            .filter(|&b| hz.level(b) == 1 && hz.switch_distance(c, b) as usize == l - 1)
            .count() as u128;
        let same_digits = (0..hz.num_switches() as SwitchId)
            .filter(|&u| hz.level(u) == l + 1 && hz.flat(u) % hz.r(l + 1) == hz.flat(parent) % hz.r(l + 1))
            .count() as u128;
        Some(leaves_under_c * same_digits)
    }

    /// One failed link at a time, on every link of the trees small enough: the exceptions kept
    /// towards the leaves are at least the pairs the bound counts for that link (leaves under the
    /// child times the switches of the parent's level with its root digits, counted on the built
    /// tree), and the bound per link is the least of those over the links a connected fault set can
    /// hold. On a k-ary n-tree the top links lose exactly those pairs, so the bound is attained.
    #[test]
    fn one_failed_link_loses_at_least_the_pairs_counted() {
        for t in TREES.iter().filter(|t| t.0.len() == 3 || t.0 == [2, 3, 4, 3]) {
            let topo = tree(t);
            let hz = match topo.view() {
                crate::topology::View::HyperZ(h) => h.clone(),
                _ => unreachable!(),
            };
            let per_link = crate::topology::fattree::exceptions_per_failed_link(t.0, t.1, t.2);
            let mut least: Option<u128> = None;
            let mut least_real = u128::MAX;
            for (s, p) in all_links(&*topo) {
                let faults = FaultSet { links: vec![(s, p)], ..Default::default() };
                let net = Fabric::with_targets(topo.clone(), &faults, Targets::ServerSwitches);
                let ex = net.tree_exceptions().unwrap();
                let real = ex.exceptions() as u128;
                match pairs_of_link(&hz, s, p) {
                    None if !ex.connected() => {}
                    None => {
                        least = Some(0);
                        assert_eq!(real, 0, "{t:?}: one of parallel links {s}:{p}");
                    }
                    Some(pairs) => {
                        assert!(ex.connected(), "{t:?}: link {s}:{p} is no bridge");
                        assert!(real >= pairs, "{t:?}: link {s}:{p} loses {real} < {pairs}");
                        least = Some(least.map_or(pairs, |m| m.min(pairs)));
                        least_real = least_real.min(real);
                    }
                }
            }
            assert_eq!(per_link, least.unwrap_or(0), "{t:?}");
            if t.0.iter().all(|&z| z == t.0[0]) && t.2.iter().all(|&g| g == 1) {
                assert_eq!(least_real, per_link, "{t:?}: a top link loses exactly the pairs counted");
            }
        }
    }

    /// `Config::distance_exceptions_bound` against the exceptions a built network keeps, for
    /// several fault counts (1, 2%, 5% and 10% of the links) and seeds: never above them (the
    /// memory check's contract), and within a factor of `h` of them (a link at level `l` of a tree
    /// whose levels have no more parents than children loses at most `h - l` times the pairs
    /// counted; more faults add a few pairs whose every detour they cut). Split networks are skipped
    /// (a run refuses them); a bound of 0 (parallel links) is checked to be 0.
    #[test]
    fn bound_is_below_the_exceptions_kept_and_within_h_of_them() {
        let mut checked = 0;
        for t in TREES {
            let h = t.0.len() as u128;
            let links = all_links(&*tree(t)).len();
            for n in [1, links / 50, links / 20, links / 10].into_iter().filter(|&n| n >= 1) {
                for seed in 1..=4 {
                    let cfg = tree_config(t, &format!("random_links = {n}\nseed = {seed}"));
                    let bound = cfg.distance_exceptions_bound();
                    let net = crate::sim::build_network(&cfg).unwrap();
                    let ex = net.tree_exceptions().unwrap();
                    if !ex.connected() {
                        continue;
                    }
                    let real = ex.exceptions() as u128;
                    assert!(bound <= real, "{t:?}, {n} links, seed {seed}: bound {bound} > {real} kept");
                    assert!(real <= h * bound || bound == 0, "{t:?}, {n} links, seed {seed}: {real} > {h} x {bound}");
                    checked += (bound > 0) as usize;
                }
            }
        }
        assert!(checked >= 50, "only {checked} faulty trees with a bound were compared");
        // Failed switches, or a split network allowed, void the bound's premise: 0.
        let t = &TREES[0];
        assert_eq!(tree_config(t, "random_links = 4\nrandom_switches = 1").distance_exceptions_bound(), 0);
        assert_eq!(tree_config(t, "random_links = 4\nunreachable = \"drop\"").distance_exceptions_bound(), 0);
        // More links than the tree has: the count is capped at the links.
        assert_eq!(
            tree_config(t, "random_links = 100000").distance_exceptions_bound(),
            all_links(&*tree(t)).len() as u128 * 4
        );
    }

    /// The budget of a build: exactly the lists' peak (two copies of 5 bytes per exception) passes
    /// and keeps the same lists as no budget; a byte less, or a tiny budget, stops the build with
    /// the most exceptions that fit, whatever the thread count.
    #[test]
    fn a_budget_stops_the_build_before_the_lists_outgrow_it() {
        let t = &TREES[1];
        let topo = tree(t);
        let cfg = tree_config(t, &format!("random_links = {}", all_links(&*topo).len() / 20));
        let faults: FaultSet = cfg.faults.build(&*topo, cfg.seed).unwrap();
        let free = Fabric::within(topo.clone(), &faults, Targets::ServerSwitches, None).unwrap();
        let lists = |net: &Fabric| {
            let ex = net.tree_exceptions().unwrap();
            (0..net.num_switches() as SwitchId)
                .map(|b| (ex.exceptions_to(b).0.to_vec(), ex.exceptions_to(b).1.to_vec()))
                .collect::<Vec<_>>()
        };
        let real = free.tree_exceptions().unwrap().exceptions() as u64;
        assert!(real > 1000, "{real} exceptions: too few to test a budget");
        let peak = real * BYTES_PER_EXCEPTION * COPIES_AT_PEAK;
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let fits = Fabric::within(topo.clone(), &faults, Targets::ServerSwitches, Some(peak)).unwrap();
                assert_eq!(lists(&fits), lists(&free));
                for budget in [peak - 1, 100, 0] {
                    let e = Fabric::within(topo.clone(), &faults, Targets::ServerSwitches, Some(budget)).err();
                    assert_eq!(e, Some(OverBudget { budget, most: budget / 10 }), "{threads} threads");
                }
            });
        }
        assert!(OverBudget::of(peak - 1).most < real);
    }

    /// Through the config: a tiny `--max-memory` stops the build with an error naming `faults` and
    /// its value, how many exceptions were needed and the limit; enough memory builds the network.
    #[test]
    fn a_run_without_memory_for_the_exceptions_is_refused_naming_faults() {
        let t = &TREES[1];
        let cfg = tree_config(t, "random_links = 38");
        let (rest, _) = cfg.memory_lower_bound(1, None);
        let e = crate::sim::build::build_network_within(&cfg, Some(rest), 1).err().expect("no room for exceptions");
        let msg = e.to_string();
        for want in ["faults", "faults.random_links = 38", "distance exceptions", "--max-memory", "more than"] {
            assert!(msg.contains(want), "`{want}` missing: {msg}");
        }
        assert!(crate::sim::build::build_network_within(&cfg, Some(rest + (1 << 30)), 1).is_ok());
    }
}
