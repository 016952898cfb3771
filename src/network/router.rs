//! The router of a switch: the link stage (outputs send on free links) and switch allocation, in
//! two steps (inputs request after routing, outputs grant and move packets through the crossbar),
//! with SurePath's `Q + P` selection and the refused-request shortcut (see the module docs of
//! [`super`]). This is the simulator's hot path: it allocates nothing and reads flat arrays.

use super::head_cache::{CandidateCache, HeadCache};
use super::levels::{bits, classes_from, classes_of, same_classes, CandidateClass, Mask, PortMask, FULL, MAX_CLASSES};
use super::packet::NIL;
use super::{
    clear_bit, set_bit, Allocation, Allocator, BitIter, CreditDue, EjectionVcs, Msg, NetPartition, OutPort, OutVc,
    Request, Reroute, Throttle, NO_VC, RUN_CACHE_BYTES,
};
use crate::engine::{Cycle, Scheduler};
use crate::rng::{below, tie_pick, Rng};
use crate::routing::{runs_of, step, Candidate, CandidateRun, ClassGroups, RouteState};
use crate::topology::SwitchId;

/// What selection learnt of one run's port and VC range: the lowest cost over its VCs with room
/// before the packet-length factor and the penalty (`occupancy + base - credits` of [`select`]),
/// how many VCs reach it, and the first that does.
///
/// Kept across cycles (where the partition keeps a switch's slots, see
/// [`NetPartition::run_costs`]), it holds while nothing it reads changes: the port's records,
/// whose every change clears the port's slots ([`NetPartition::port_changed`]), and time, through
/// the packet on the link, whose slot frees at a known cycle, and (per-VC allocation) the output
/// VCs' crossbars, which free at known cycles: it holds up to `until`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct RunCost {
    until: Cycle,
    low: u32,
    lo: u8,
    /// 0: nothing learnt (a run has `hi > lo`).
    hi: u8,
    first: u8,
    count: u8,
}

/// The context of one switch's selections: its switch-to-switch output ports and their VCs
/// (`port * v + vc`), the router's parameters, and the [`RunCost`]s learnt so far.
pub(super) struct Selection<'a> {
    outp: &'a [OutPort],
    outvc: &'a [OutVc],
    v: usize,
    out_cap: u16,
    in_cap: u32,
    pk_phits: u32,
    now: Cycle,
    /// With per-VC allocation: the free cycle of each output VC's crossbar output, indexed as
    /// `outvc`; a candidate whose output VC is receiving a packet counts as full, as CAMINOS's
    /// `EnforceFlowControl` discards an output VC that another input holds.
    vc_busy: Option<&'a [Cycle]>,
    /// Two [`RunCost`] slots per port, where the partition keeps them; `None`: every run's cost
    /// is learnt afresh (routings with few candidates per head, on distinct ports).
    costs: Option<&'a mut [RunCost]>,
}

impl Selection<'_> {
    /// `base` (input capacity plus the port's load: the part of the cost every VC of the port
    /// shares) and the VC whose last packet has left but is not yet settled ([`NO_VC`]: none).
    #[inline]
    fn port_terms(&self, o: &OutPort) -> (u32, u8) {
        o.cost_terms(self.in_cap, self.now)
    }

    /// `occupancy + base - credits` of VC `vc` of `port` (its cost before the packet-length
    /// factor and the penalty), or `None` if that output VC is full.
    #[inline]
    fn vc_cost(&self, port: usize, vc: u8, base: u32, freed: u8) -> Option<u32> {
        let i = port * self.v + vc as usize;
        let free = self.vc_busy.is_none_or(|b| b[i] <= self.now);
        OutPort::vc_cost(&self.outvc[i], vc, (base, freed), self.out_cap).filter(|_| free)
    }

    /// The [`RunCost`] of `r`'s port and VC range, kept in `costs` (the switch's slots, taken out
    /// of [`Selection::costs`] by [`select`], so that no run tests whether they are there): learnt
    /// again only when it no longer holds.
    #[inline(always)]
    fn run_cost(&self, costs: &mut [RunCost], r: &CandidateRun) -> RunCost {
        let slot = 2 * r.port as usize + (r.lo != 0) as usize;
        let c = costs[slot];
        if self.now <= c.until && c.lo == r.lo && c.hi == r.hi {
            debug_assert!(
                {
                    let fresh = self.learn(r);
                    (fresh.low, fresh.count, fresh.first) == (c.low, c.count, c.first)
                },
                "kept cost of port {}, VCs {}..{} differs from the port's state at cycle {}",
                r.port,
                r.lo,
                r.hi,
                self.now
            );
            return c;
        }
        self.relearn(costs, slot, r)
    }

    /// [`Selection::learn`] into slot `slot`, with the cycle up to which it holds; out of line,
    /// as most evaluations find their costs kept.
    #[inline(never)]
    fn relearn(&self, costs: &mut [RunCost], slot: usize, r: &CandidateRun) -> RunCost {
        let port = r.port as usize;
        let o = &self.outp[port];
        // The packet on the link frees its slot at `link_free`, which changes the cost then; so
        // does a crossbar that frees (per-VC allocation).
        let mut until = if o.freeing != NO_VC && o.link_free > self.now { o.link_free - 1 } else { Cycle::MAX };
        if let Some(b) = self.vc_busy {
            for vc in r.lo..r.hi {
                let f = b[port * self.v + vc as usize];
                if f > self.now {
                    until = until.min(f - 1);
                }
            }
        }
        let c = RunCost { until, ..self.learn(r) };
        costs[slot] = c;
        c
    }

    /// The [`RunCost`] of `r`'s port and VC range from the port's state now (`until` left open).
    #[inline(always)]
    fn learn(&self, r: &CandidateRun) -> RunCost {
        let port = r.port as usize;
        let (base, freed) = self.port_terms(&self.outp[port]);
        let mut c = RunCost { until: Cycle::MAX, low: u32::MAX, lo: r.lo, hi: r.hi, first: 0, count: 0 };
        for vc in r.lo..r.hi {
            match self.vc_cost(port, vc, base, freed) {
                Some(k) if k < c.low => (c.low, c.count, c.first) = (k, 1, vc),
                Some(k) if k == c.low => c.count += 1,
                _ => {}
            }
        }
        c
    }
}

/// SurePath selection (SurePath section 3): among the candidates of `runs` whose output VC has
/// room, the lowest `Q + P`, ties broken uniformly at random, as the run index and VC; and the
/// earliest cycle at which the crossbar output of any candidate (with room or not) is free.
/// Candidates are taken in list order (runs in order, VCs increasing within a run), and the
/// tie-break is the counter-based draw `tie_pick(key, ties)` counting ties from the first best in
/// that order, where `key` names the head ([`NetPartition::head_key`]): the choice is a function
/// of the state selection reads and of the head, not of how often the head asked before (issue
/// 34, ruling (a)): a head whose candidates' records did not change chooses again what it
/// chose, however often it is evaluated.
///
/// Where the partition keeps [`RunCost`]s, a run's cost is read from them ([`select_kept`]);
/// else each candidate is costed in turn ([`select_each`]). Both choose the same candidate with the
/// same draw.
///
/// While every candidate's crossbar output is busy, a request is certain to be refused, and nothing
/// the choice depends on can make it succeed: a busy output takes no grant, so its occupancy can
/// only fall, and its free cycle does not move. The router uses this to skip such heads.
#[inline]
fn select(runs: &[CandidateRun], sel: &mut Selection<'_>, key: u64) -> (Option<(usize, u8)>, Cycle) {
    if let Some(costs) = sel.costs.take() {
        let best = select_kept(runs, sel, costs, key);
        sel.costs = Some(costs);
        best
    } else {
        select_each(runs, sel, key)
    }
}

/// [`select`] costing each candidate in turn, a run's port record read once for all its VCs:
/// for routings with few candidates per head, on distinct ports, where kept costs would seldom be
/// read twice (Minimal executed 10% more instructions through [`select_kept`]).
#[inline]
fn select_each(runs: &[CandidateRun], sel: &Selection<'_>, key: u64) -> (Option<(usize, u8)>, Cycle) {
    let pk = sel.pk_phits;
    let cost = |r: &CandidateRun, vc: u8, base: u32, freed: u8| {
        sel.vc_cost(r.port as usize, vc, base, freed).map(|k| k * pk + r.penalty)
    };
    let mut best = (usize::MAX, 0u8);
    let mut best_cost = u32::MAX;
    let mut ties = 0u64;
    let mut xbar_free = Cycle::MAX;
    for (i, r) in runs.iter().enumerate() {
        let o = &sel.outp[r.port as usize];
        xbar_free = xbar_free.min(o.xbar_free);
        let (base, freed) = sel.port_terms(o);
        for vc in r.lo..r.hi {
            match cost(r, vc, base, freed) {
                Some(k) if k < best_cost => {
                    best_cost = k;
                    best = (i, vc);
                    ties = 1;
                }
                Some(k) if k == best_cost => ties += 1,
                _ => {}
            }
        }
    }
    if ties > 1 {
        // One draw picks among the tied candidates (their state is in cache from the first pass).
        let mut pick = tie_pick(key, ties);
        'scan: for (i, r) in runs.iter().enumerate().skip(best.0) {
            let (base, freed) = sel.port_terms(&sel.outp[r.port as usize]);
            let lo = if i == best.0 { best.1 } else { r.lo };
            for vc in lo..r.hi {
                if cost(r, vc, base, freed) == Some(best_cost) {
                    if pick == 0 {
                        best = (i, vc);
                        break 'scan;
                    }
                    pick -= 1;
                }
            }
        }
    }
    ((best.0 != usize::MAX).then_some(best), xbar_free)
}

/// [`select`] from kept [`RunCost`]s. A run's candidates share their port and penalty, so its
/// best VCs are those of lowest `occupancy - credits`: a run costs one read of its `RunCost`,
/// which holds until its port changes. SurePath's routings offer 60-100 candidates on 15-20 ports,
/// and every waiting head asks again each cycle, while a port changes a few times per packet.
#[inline]
fn select_kept(
    runs: &[CandidateRun],
    sel: &Selection<'_>,
    costs: &mut [RunCost],
    key: u64,
) -> (Option<(usize, u8)>, Cycle) {
    let pk = sel.pk_phits;
    let mut best = (usize::MAX, 0u8);
    let mut best_cost = u32::MAX;
    let mut ties = 0u64;
    let mut xbar_free = Cycle::MAX;
    for (i, r) in runs.iter().enumerate() {
        xbar_free = xbar_free.min(sel.outp[r.port as usize].xbar_free);
        let c = sel.run_cost(costs, r);
        if c.count == 0 {
            continue;
        }
        let k = c.low * pk + r.penalty;
        if k < best_cost {
            best_cost = k;
            best = (i, c.first);
            ties = c.count as u64;
        } else if k == best_cost {
            ties += c.count as u64;
        }
    }
    if ties > 1 {
        // One draw picks among the tied candidates: the run holding the pick, then its VC.
        let mut pick = tie_pick(key, ties);
        for (i, r) in runs.iter().enumerate().skip(best.0) {
            let c = sel.run_cost(costs, r);
            if c.count == 0 || c.low * pk + r.penalty != best_cost {
                continue;
            }
            if pick >= c.count as u64 {
                pick -= c.count as u64;
                continue;
            }
            let (base, freed) = sel.port_terms(&sel.outp[r.port as usize]);
            for vc in c.first..r.hi {
                if sel.vc_cost(r.port as usize, vc, base, freed) == Some(c.low) {
                    if pick == 0 {
                        best = (i, vc);
                        break;
                    }
                    pick -= 1;
                }
            }
            break;
        }
    }
    ((best.0 != usize::MAX).then_some(best), xbar_free)
}

/// Whether a partition of `n` switches of `r` switch-to-switch ports keeps selection's costs per
/// port ([`NetPartition::run_costs`]) for `routing`, where cost levels are not kept: if the routing
/// asks for them and they fit [`RUN_CACHE_BYTES`].
pub(super) fn keeps_costs(routing: &dyn crate::routing::Routing, n: usize, r: usize) -> bool {
    routing.keep_costs() && n * 2 * r * std::mem::size_of::<RunCost>() <= RUN_CACHE_BYTES
}

/// Heads selected from their runs in a partition with cost levels before it decides whether to
/// keep selection's costs per port too ([`NetPartition::run_head_with_levels`]).
const RUN_HEADS_SEEN: u64 = 4096;

/// Set in an input's `run_cache_len` (and in `head_len`) where the head's classes are the routing
/// group's only: the routing writes the escape group apart
/// ([`crate::routing::Routing::escape_penalty_floor`]) and selection has not needed it yet
/// ([`NetPartition::select_classes`]).
const ESCAPE_LATER: u8 = 0x80;

/// A count of `n` classes, with [`ESCAPE_LATER`] where `later`.
#[inline]
fn with_later(n: usize, later: bool) -> u8 {
    n as u8 | if later { ESCAPE_LATER } else { 0 }
}

/// A count of classes with [`ESCAPE_LATER`]: how many, and whether it was set.
#[inline]
fn without_later(len: u8) -> (usize, bool) {
    ((len & !ESCAPE_LATER) as usize, len & ESCAPE_LATER != 0)
}

/// Whether partitions may keep the class cache ([`NetPartition::class_cache`]: [`MAX_CLASSES`]
/// classes per input port) on a network of `switches` switches of `np` router ports: where the
/// whole network's fits [`RUN_CACHE_BYTES`]; elsewhere every partition with cost levels keeps its
/// heads' classes in the [`HeadCache`]. Judged on the whole network, so that which cache a run
/// uses, and its memory per endpoint, do not depend on its layout: judged per partition, 16
/// threads of the faulty million-endpoint HyperX took 1,716 bytes per endpoint against 1,005 on
/// 8, and were no faster (docs/performance.md, "Threads and ranks").
pub(super) fn class_cache_fits(switches: usize, np: usize) -> bool {
    switches * np * MAX_CLASSES * std::mem::size_of::<CandidateClass>() <= RUN_CACHE_BYTES
}

/// Runs per input port in the candidate cache ([`NetPartition::run_cache`]) of a partition whose
/// switches have at most `r` switch-to-switch ports: one per port and VC class (routes plus
/// escape), at most what its `u8` lengths count.
pub(super) fn run_cache_cap(r: usize) -> usize {
    (2 * r + 2).min(u8::MAX as usize)
}

/// Bytes of the candidate cache of a partition with `inputs` input ports (`r` as in
/// [`run_cache_cap`]), or `None` where that exceeds [`RUN_CACHE_BYTES`] and the cache stays off.
pub(super) fn run_cache_bytes(inputs: usize, r: usize) -> Option<usize> {
    let bytes = inputs * run_cache_cap(r) * std::mem::size_of::<CandidateRun>();
    (bytes <= RUN_CACHE_BYTES).then_some(bytes)
}

/// VCs set in `mask`, starting at `start` and wrapping around (round-robin order), without division.
#[inline]
fn rotated(mask: u64, start: usize) -> impl Iterator<Item = usize> {
    let hi = mask & (u64::MAX << start);
    let lo = mask & !(u64::MAX << start);
    BitIter(hi).chain(BitIter(lo))
}

/// Whether `until` (low 32 bits of a cycle; 0: unknown) is after `now`. A known `until` is within
/// 2^31 cycles of `now`: it is at most one packet's crossbar time ahead of the cycle it was set at,
/// and is cleared as soon as the head leaves (a head that stays 2^31 cycles is a deadlock, which the
/// watchdog reports long before). A cycle whose low bits are 0 reads as unknown, which only costs a
/// routing evaluation.
#[inline]
fn after(until: u32, now: Cycle) -> bool {
    until != 0 && (until.wrapping_sub(now as u32) as i32) > 0
}

/// `next_u32` without importing the trait everywhere.
trait NextU32 {
    fn next_u32_(&mut self) -> u32;
}
impl NextU32 for Rng {
    #[inline]
    fn next_u32_(&mut self) -> u32 {
        rand_core::RngCore::next_u32(self)
    }
}

impl NetPartition {
    /// Which candidate cache this partition may use (call before it steps). `Auto` is what
    /// [`NetPartition::new`] sets. `Off` turns the cost levels off, as does `Switch` where the
    /// per-switch cache (which then holds the classes levels need) does not fit; selection's costs
    /// are then kept per port instead where those fit.
    pub fn set_candidate_cache(&mut self, mode: CandidateCache) {
        self.cache_mode = mode;
        let n = self.switches.len();
        let no_classes = match mode {
            CandidateCache::Auto => false,
            CandidateCache::Switch => HeadCache::bytes_within(n, RUN_CACHE_BYTES) == 0,
            CandidateCache::Off => true,
        };
        if no_classes && self.levels.is_on() {
            self.levels = Default::default();
            if keeps_costs(&*self.p.routing, n, self.r) {
                self.run_costs = vec![RunCost::default(); n * 2 * self.r];
            }
        }
    }

    /// The head of VC `vc` of input `port` of local switch `li` (`inbuf` index `qi`) left (granted, or dropped): the
    /// next head (if any) is new, so nothing is known about its requests yet, nor its candidates.
    #[inline]
    pub(super) fn head_left(&mut self, li: usize, port: usize, qi: usize, vc: usize) {
        let pi = li * self.np + port;
        self.inbuf[qi].refused_until = 0;
        self.inp[pi].refused_until = 0;
        if self.run_cache_vc.get(pi) == Some(&(vc as u8)) {
            self.run_cache_vc[pi] = NO_VC;
        }
        if self.head_cache.is_on() {
            self.head_cache.forget(li, port, vc);
        }
    }

    /// Output port `port` of local switch `li` changed what selection reads of it (occupancy,
    /// credits, load, the packet on its link): its kept [`RunCost`]s no longer hold.
    #[inline]
    pub(super) fn port_changed(&mut self, li: usize, port: usize) {
        let t = self.t_of[li] as usize;
        if !self.run_costs.is_empty() && port >= t {
            let slot = li * 2 * self.r + 2 * (port - t);
            self.run_costs[slot].hi = 0;
            self.run_costs[slot + 1].hi = 0;
        }
        if self.levels.is_on() && port >= t {
            // Re-costed before the switch's next selection, from the records then: a port
            // changes up to four times a hop (grant, send, credit, slot freed), often several
            // before it is read.
            self.levels.mark_stale(li, port - t);
        }
    }

    /// A head selected from its runs in a partition with cost levels (its candidates formed no
    /// classes). After [`RUN_HEADS_SEEN`] such heads, where they are more than one in eight, the
    /// partition keeps selection's costs per port too, where those fit; and where they are the
    /// majority and the classes come from the per-switch cache, it drops the levels, whose upkeep
    /// at every port change then buys little. The routing's runs may have an order classes cannot
    /// give back: a HyperZ rule's moves (`surepath-aliod` on `configs/hyperz-1m.toml` took 5% more
    /// CPU time with levels than without). Neither changes a result, only how it is computed.
    #[inline]
    fn run_head_with_levels(&mut self) {
        if !self.run_costs.is_empty() || self.levels.run_heads == u64::MAX {
            return;
        }
        self.levels.run_heads += 1;
        let (runs, classes) = (self.levels.run_heads, self.levels.class_heads);
        if runs >= RUN_HEADS_SEEN && runs * 8 >= classes {
            if runs >= classes && self.run_cache_cap == 0 {
                self.levels = Default::default();
            } else {
                // Decided: levels stay.
                self.levels.run_heads = u64::MAX;
            }
            let n = self.switches.len();
            if keeps_costs(&*self.p.routing, n, self.r) {
                self.run_costs = vec![RunCost::default(); n * 2 * self.r];
            }
        }
    }

    /// Sets the cost levels of switch-to-switch output port `port` (router port) of local switch
    /// `li` from its records at `now`: per slot, the lowest cost over the slot's VCs with room
    /// ([`Selection::vc_cost`]) and how many VCs reach it; and whether the port waits for the
    /// packet on its link to free its slot.
    fn recost(&mut self, li: usize, port: usize, now: Cycle) {
        let (v, t, oi) = (self.v, self.t_of[li] as usize, li * self.np + port);
        let o = &self.outp[oi];
        let terms = o.cost_terms(self.p.input_buffer as u32, now);
        let pending = o.freeing != NO_VC && o.link_free > now;
        // The port's VC records as one slice, so that each slot's loop checks its bounds once.
        let vcs = &self.outvc[oi * v..(oi + 1) * v];
        let mut lows = [(FULL, 0u8); 2];
        for (slot, &(lo, hi)) in self.levels.ranges.iter().enumerate() {
            let (mut low, mut count) = (u32::MAX, 0u8);
            for (ov, vc) in vcs[lo as usize..hi as usize].iter().zip(lo..) {
                match OutPort::vc_cost(ov, vc, terms, self.p.output_buffer) {
                    Some(k) if k < low => (low, count) = (k, 1),
                    Some(k) if k == low => count += 1,
                    _ => {}
                }
            }
            lows[slot] = (if count == 0 { FULL } else { low.min(FULL as u32 - 1) as u16 }, count);
        }
        self.levels.set_port(li, port - t, lows, pending);
    }

    /// Re-costs the ports of local switch `li` whose records changed since they were last costed,
    /// and those whose link's packet has freed its slot by `now` (before the switch's first
    /// selection at `now`). A port's cost is a function of its records and `now`, so costing it
    /// once here gives what costing it at each change, and again as its slot frees, gives.
    #[inline]
    fn recost_stale(&mut self, li: usize, now: Cycle) {
        let t = self.t_of[li] as usize;
        for p in bits(self.levels.take_stale(li)) {
            self.recost(li, t + p, now);
        }
        // Ports just re-costed are pending only where their slot frees after `now`.
        for p in bits(self.levels.pending(li)) {
            if self.outp[li * self.np + t + p].link_free <= now {
                self.recost(li, t + p, now);
            }
        }
    }

    /// Costs every switch-to-switch port from its records at `now` (a new partition or restored
    /// state, with `now` 0: a packet on a link is then accounted for when its slot frees, by
    /// [`NetPartition::recost_stale`] before its switch's first selection; or a slot's VC range
    /// just learnt, at the cycle being simulated).
    pub(super) fn cost_all_ports(&mut self, now: Cycle) {
        if self.levels.is_on() {
            for li in 0..self.switches.len() {
                // A switch with fewer servers than the partition's most has its switch-to-switch
                // ports from `t`, at most `r` of them (the router ports after are unused).
                let t = self.t_of[li] as usize;
                for port in t..self.np.min(t + self.r) {
                    self.recost(li, port, now);
                }
            }
        }
    }

    /// [`select`] for a head of local switch `li` whose candidates are `classes`, from the cost
    /// levels: the same candidate with the same draw (see the module docs of [`super::levels`]),
    /// and the earliest cycle any of its candidates' crossbar outputs is free where that matters
    /// (where it is after `now`: every candidate's crossbar busy; else a cycle not after `now`,
    /// which [`NetPartition::mark_refused`] reads the same); with [`Reroute::OutputFrees`], when
    /// the chosen one's is.
    ///
    /// With `escape_floor` (the least penalty of an escape candidate), `classes` are the routing
    /// group's only, and the escape group's are not known yet. The answer is then the one all
    /// classes give where no escape candidate could win or tie: where the routing group's best
    /// cost is below the escape slot's lowest level times the packet length plus the floor, and,
    /// where the chosen output's crossbar is busy, some routing candidate's is free (so that the
    /// earliest free cycle over all candidates is not after `now` either). Elsewhere `None`: the
    /// caller asks for the escape group and selects again. On `configs/hyperx-3d-8.toml`, PolSP at
    /// load 0.6, 91% of evaluations need no escape classes.
    #[inline]
    fn select_classes(
        &self,
        li: usize,
        classes: &[CandidateClass],
        now: Cycle,
        key: u64,
        escape_floor: Option<u32>,
    ) -> Option<(Option<Candidate>, Cycle)> {
        if self.levels.words() == 1 {
            self.select_classes_in::<u64>(li, classes, now, key, escape_floor)
        } else {
            self.select_classes_in::<PortMask>(li, classes, now, key, escape_floor)
        }
    }

    /// [`NetPartition::select_classes`] with masks of type `M` (of the levels' width).
    #[inline(always)]
    fn select_classes_in<M: Mask>(
        &self,
        li: usize,
        classes: &[CandidateClass],
        now: Cycle,
        key: u64,
        escape_floor: Option<u32>,
    ) -> Option<(Option<Candidate>, Cycle)> {
        let pk = self.p.packet_phits as u32;
        let lv = &self.levels;
        // The lowest cost, how many candidates reach it, and the ports that do in each group
        // (routing, escape; a group's classes share a slot, `slots`).
        let (mut best, mut ties, mut tied, mut slots) = (u32::MAX, 0u64, [M::EMPTY; 2], [0usize; 2]);
        for c in classes {
            let slot = c.slot as usize;
            if let Some((k, m)) = lv.lowest(li, slot, c.mask_as::<M>(), pk, c.penalty, best) {
                let cost = k * pk + c.penalty;
                let n: u64 = m.ports().map(|p| lv.count(li, slot, p)).sum();
                if cost < best {
                    (best, ties, tied) = (cost, n, [M::EMPTY; 2]);
                } else {
                    ties += n;
                }
                tied[c.escape as usize] = tied[c.escape as usize] | m;
                slots[c.escape as usize] = slot;
            }
        }
        if let Some(floor) = escape_floor {
            // The escape group is on slot 1 (its VCs do not start at 0).
            if best == u32::MAX || best >= lv.least_level(li, 1) * pk + floor {
                return None;
            }
        }
        if best == u32::MAX {
            return Some((None, Cycle::MAX));
        }
        // Selection's order is group, port, VC.
        let mut pick = if ties > 1 { tie_pick(key, ties) } else { 0 };
        let out = li * self.np + self.t_of[li] as usize;
        for (g, &m) in tied.iter().enumerate() {
            let slot = slots[g];
            for p in m.ports() {
                let n = lv.count(li, slot, p);
                if pick >= n {
                    pick -= n;
                    continue;
                }
                // The pick-th VC of the slot at the port's lowest cost.
                let (lo, hi) = lv.ranges[slot];
                let o = &self.outp[out + p];
                let terms = o.cost_terms(self.p.input_buffer as u32, now);
                let low = lv.low(li, slot, p) as u32;
                for vc in lo..hi {
                    let ov = &self.outvc[(out + p) * self.v + vc as usize];
                    if OutPort::vc_cost(ov, vc, terms, self.p.output_buffer) == Some(low) {
                        if pick > 0 {
                            pick -= 1;
                            continue;
                        }
                        let c = classes
                            .iter()
                            .find(|c| c.escape == (g == 1) && c.mask_as::<M>() & M::bit(p) != M::EMPTY)
                            .unwrap();
                        let chosen = Candidate { port: p as u16, vc, penalty: c.penalty, escape: c.escape };
                        let mut xbar_free = o.xbar_free;
                        // With `Reroute::OutputFrees` a refused head waits for the output it chose,
                        // whatever the other candidates' crossbars (escape ones too) do.
                        if xbar_free > now && self.p.reroute == Reroute::EachTurn {
                            // Refused: if every candidate's crossbar is busy, the head records until
                            // when ([`NetPartition::mark_refused`]). Any cycle not after `now`
                            // means the same (no mark), so the first free crossbar ends the search.
                            for q in classes.iter().fold(M::EMPTY, |m, c| m | c.mask_as::<M>()).ports() {
                                xbar_free = xbar_free.min(self.outp[out + q].xbar_free);
                                if xbar_free <= now {
                                    break;
                                }
                            }
                            if xbar_free > now && escape_floor.is_some() {
                                // Every routing candidate's crossbar is busy; an escape one's may not be.
                                return None;
                            }
                        }
                        return Some((Some(chosen), xbar_free));
                    }
                }
                unreachable!("port {p} of switch {} has fewer VCs at its lowest cost than counted", self.switches[li]);
            }
        }
        unreachable!("fewer tied candidates than counted at switch {}", self.switches[li]);
    }

    /// The tie-break key of the head of VC `vc` of input `port` of local switch `li`, which
    /// arrived at cycle `arrived`: the head is the packet's hop at this switch, as no two packets
    /// arrive in one input VC in one cycle, so the key is the (seed, packet, hop) in
    /// terms the router has (the packet record has no spare bytes for an id). Injective for
    /// arrival cycles below 2^40, ports below 2^16 and VCs below 2^8; mixed by
    /// [`crate::rng::tie_pick`].
    #[inline]
    fn head_key(&self, li: usize, port: usize, vc: usize, arrived: Cycle) -> u64 {
        self.tie_seed[li] ^ (arrived << 24) ^ ((port as u64) << 8) ^ vc as u64
    }

    /// Whether output VC `vc` of output port `oi` (index `li * np + port`) has room for a packet.
    #[inline]
    fn has_room(&self, oi: usize, vc: usize, now: Cycle) -> bool {
        self.outp[oi].occupancy(&self.outvc[oi * self.v + vc], vc, now) < self.p.output_buffer
    }

    /// The VC of ejection port `oi` (index `li * np + port`, a server's port) a packet at its
    /// destination enters, if one has room (`router.ejection_vcs`): VC 0, or the lowest with room.
    /// With `vc_busy` (per-VC allocation, as in [`select`]) an output VC receiving a packet counts
    /// as full.
    #[inline]
    fn ejection_vc(&self, oi: usize, now: Cycle, vc_busy: Option<&[Cycle]>) -> Option<usize> {
        let usable = |vc: usize| self.has_room(oi, vc, now) && vc_busy.is_none_or(|b| b[oi * self.v + vc] <= now);
        match self.p.ejection_vcs {
            EjectionVcs::Zero => usable(0).then_some(0),
            EjectionVcs::Any => (0..self.v).find(|&vc| usable(vc)),
        }
    }

    /// After the head of input VC `qi` (index in `inbuf`) of input `pi` (index `li * np + port`) requested, with `busy` the
    /// earliest cycle any output it may request has a free crossbar: if that is after `now`, the
    /// request will be refused until then, which the VC (and, if it was the first VC in scan
    /// order, the input) records.
    #[inline]
    fn mark_refused(&mut self, pi: usize, qi: usize, first: bool, busy: Cycle, now: Cycle) {
        if busy > now {
            self.inbuf[qi].refused_until = busy as u32;
            if first {
                self.inp[pi].refused_until = busy as u32;
            }
        }
    }

    /// Debug check of the refused-request shortcut: whether the head of input VC `qi` (index in
    /// `inbuf`) of switch `li` would make a request at `now` that is certain to be refused (some
    /// candidate has room, and every candidate's crossbar output is busy).
    fn head_refused(&self, li: usize, qi: usize, now: Cycle) -> bool {
        let (np, t) = (self.np, self.t_of[li] as usize);
        let sw = self.switches[li];
        let pkt = self.slab.get(self.inbuf[qi].q.front());
        let room = |op: usize, vc: usize| self.has_room(li * np + op, vc, now);
        let busy = |op: usize| self.outp[li * np + op].xbar_free > now;
        if pkt.route.dst == sw {
            let op = (pkt.dst - self.first_server[li]) as usize;
            return self.ejection_vc(li * np + op, now, None).is_some() && busy(op);
        }
        let mut cands = Vec::new();
        self.p.routing.candidates(sw, &pkt.route, &mut cands);
        cands.iter().any(|c| room(t + c.port as usize, c.vc as usize))
            && cands.iter().all(|c| busy(t + c.port as usize))
    }

    /// The candidates of a packet in state `st` at `sw` into `self.runs`, as the routing writes
    /// them ([`crate::routing::Routing::candidate_runs`]) or converted from its candidate list;
    /// whether the routing wrote runs itself.
    #[inline]
    fn fresh_runs(&mut self, sw: SwitchId, st: &RouteState) -> bool {
        self.runs.clear();
        if self.p.routing.candidate_runs(sw, st, &mut self.runs) {
            return true;
        }
        self.cands.clear();
        self.p.routing.candidates(sw, st, &mut self.cands);
        runs_of(&self.cands, &mut self.runs);
        false
    }

    /// [`select`] for a head of local switch `li` whose candidate runs are in the run cache slot
    /// of input `cached` (index `li * np + port`), or in `self.runs`: the candidate it requests,
    /// if any, and the earliest cycle any of its candidates' crossbar outputs is free. With per-VC
    /// allocation, an output VC whose crossbar is busy counts as full.
    #[inline(always)]
    fn select_head(&mut self, li: usize, cached: Option<usize>, now: Cycle, key: u64) -> (Option<Candidate>, Cycle) {
        let (np, v, t) = (self.np, self.v, self.t_of[li] as usize);
        let (lo, hi) = (li * np + t, (li + 1) * np);
        let cap = self.run_cache_cap;
        let runs = match cached {
            Some(pi) => &self.run_cache[pi * cap..pi * cap + self.run_cache_len[pi] as usize],
            None => &self.runs[..],
        };
        let mut sel = Selection {
            outp: &self.outp[lo..hi],
            outvc: &self.outvc[lo * v..hi * v],
            v,
            out_cap: self.p.output_buffer,
            in_cap: self.p.input_buffer as u32,
            pk_phits: self.p.packet_phits as u32,
            now,
            vc_busy: (self.p.allocation == Allocation::Vc).then(|| &self.vc_out_free[lo * v..hi * v]),
            costs: self.run_costs.get_mut(li * 2 * self.r..(li + 1) * 2 * self.r),
        };
        let (best, xbar_free) = select(runs, &mut sel, key);
        (best.map(|(i, vc)| runs[i].candidate(vc)), xbar_free)
    }

    /// Record (once per run) that a packet in state `st` at `sw` has no candidate at all: the
    /// routing cannot reach its destination, which ends the run with this message.
    #[cold]
    fn report_unroutable(&mut self, sw: SwitchId, route: &RouteState, now: Cycle) {
        if self.failure.is_none() {
            self.failure = Some(format!(
                "packet from switch {} to switch {} has no route at switch {sw} (cycle {now}, {} hops taken): \
                 routing `{}` cannot reach its destination on this network",
                route.src,
                route.dst,
                route.hops,
                self.p.routing.name()
            ));
        }
    }

    /// The head of VC `vc` of input `pi` (index `li * np + port`), in state `route` at `sw`, has no
    /// candidate: what [`super::Stranded`] says.
    #[cold]
    fn stranded_head(&mut self, li: usize, pi: usize, vc: usize, sw: SwitchId, route: &RouteState, now: Cycle) {
        match self.stranded {
            super::Stranded::Fail => self.report_unroutable(sw, route, now),
            super::Stranded::Drop => self.drop_stranded(li, pi, vc, now),
            super::Stranded::Wait => {}
        }
    }

    /// The candidates of the head of VC `vc` of input `pi` (index `li * np + port`), in state `st`
    /// at `sw`: `true` if they are in the run cache (its slot of `pi`), else `false` with them in
    /// `self.runs` (and, when they fit, copied into the cache for the head's next evaluation).
    #[inline]
    fn cached_runs(&mut self, li: usize, pi: usize, vc: usize, sw: SwitchId, st: &RouteState, now: Cycle) -> bool {
        let cap = self.run_cache_cap;
        if cap == 0 && self.head_cache.is_on() {
            if self.levels.is_on() {
                return self.head_cache_classes(li, pi - li * self.np, vc, sw, st, now);
            }
            self.head_cache_runs(li, pi - li * self.np, vc, sw, st);
            return false;
        }
        if cap != 0 && cap != usize::MAX && self.run_cache_vc[pi] == vc as u8 {
            debug_assert!(
                {
                    let (n, later) = without_later(self.run_cache_len[pi]);
                    if self.levels.is_on() {
                        self.classes_of_routing(sw, st, Self::groups(later), &self.class_cache[pi * MAX_CLASSES..][..n])
                    } else {
                        let mut fresh = Vec::new();
                        self.p.routing.candidate_runs(sw, st, &mut fresh);
                        fresh[..] == self.run_cache[pi * cap..pi * cap + n]
                    }
                },
                "cached candidates of switch {sw} input {pi} VC {vc} differ from the routing's"
            );
            return true;
        }
        if cap != 0 && cap != usize::MAX && self.levels.is_on() && self.class_candidates(pi, vc, sw, st, now) {
            return self.run_cache_vc[pi] == vc as u8;
        }
        if !self.fresh_runs(sw, st) {
            // Routings without runs have few candidates: nothing to cache.
            self.run_cache_cap = 0;
            return false;
        }
        debug_assert!(self.runs_match_candidates(sw, st), "candidate runs differ from candidates");
        if cap == usize::MAX && !self.p.routing.cache_candidates() {
            self.run_cache_cap = 0;
        } else if cap == usize::MAX {
            // First evaluation: size the cache, unless that is too big for this partition.
            let (cap, inputs) = (run_cache_cap(self.r), self.inp.len());
            if self.levels.is_on()
                && self.cache_mode == CandidateCache::Auto
                && class_cache_fits(self.p.net.topology().num_switches(), self.np)
            {
                self.class_cache = vec![CandidateClass::default(); inputs * MAX_CLASSES];
                self.run_cache_vc = vec![NO_VC; inputs];
                self.run_cache_len = vec![0; inputs];
                self.run_cache_cap = cap;
            } else if self.cache_mode == CandidateCache::Auto && run_cache_bytes(inputs, self.r).is_some() {
                self.run_cache = vec![CandidateRun::EMPTY; inputs * cap];
                self.run_cache_vc = vec![NO_VC; inputs];
                self.run_cache_len = vec![0; inputs];
                self.run_cache_cap = cap;
            } else {
                self.run_cache_cap = 0;
                let fits = || HeadCache::within(self.switches.len(), RUN_CACHE_BYTES);
                if let Some(c) = (self.cache_mode != CandidateCache::Off).then(fits).flatten() {
                    self.head_cache = c;
                    self.head_cache.store(li, pi - li * self.np, vc, &self.runs);
                } else if self.levels.is_on() {
                    // Levels need classes, which only the caches keep: select from runs, with
                    // neither levels nor kept costs (not the case where `new` turns levels on).
                    self.levels = Default::default();
                }
            }
        }
        let cap = self.run_cache_cap;
        if cap == 0 && self.head_cache.is_on() && self.levels.is_on() {
            // The cache just made (first evaluation): this head's classes for selection.
            self.head_len = self.classes_of_runs(now);
        } else if cap != 0 && self.levels.is_on() {
            let formed = self.learning_ranges(now, |p| {
                let slots = &mut p.class_cache[pi * MAX_CLASSES..(pi + 1) * MAX_CLASSES];
                classes_of(&p.runs, &mut p.levels.ranges, slots)
            });
            match formed {
                Some(n) if n > 0 => {
                    self.run_cache_len[pi] = n as u8;
                    self.run_cache_vc[pi] = vc as u8;
                }
                _ => self.run_cache_vc[pi] = NO_VC,
            }
        } else if cap != 0 {
            let n = self.runs.len();
            if n > 0 && n <= cap {
                self.run_cache[pi * cap..pi * cap + n].copy_from_slice(&self.runs);
                self.run_cache_len[pi] = n as u8;
                self.run_cache_vc[pi] = vc as u8;
            } else {
                self.run_cache_vc[pi] = NO_VC;
            }
        }
        false
    }

    /// The candidates of the head of VC `vc` of input `port` of local switch `li`, in state `st`
    /// at `sw`, into `self.runs`: from the [`HeadCache`] if it holds them, else from the routing
    /// (and then cached).
    #[inline]
    fn head_cache_runs(&mut self, li: usize, port: usize, vc: usize, sw: SwitchId, st: &RouteState) {
        if let Some(e) = self.head_cache.find(li, port, vc) {
            self.runs.clear();
            self.head_cache.expand(e, &mut self.runs);
            debug_assert!(
                {
                    let mut fresh = Vec::new();
                    self.p.routing.candidate_runs(sw, st, &mut fresh);
                    fresh == self.runs
                },
                "cached candidates of switch {sw} input {port} VC {vc} differ from the routing's"
            );
            return;
        }
        self.fresh_runs(sw, st);
        self.head_cache.store(li, port, vc, &self.runs);
    }

    /// The candidates of the head of VC `vc` of input `port` of local switch `li`, in state `st` at
    /// `sw`, for selection from cost levels where the [`HeadCache`] holds candidates: `true` with
    /// them as classes in `self.head_classes` (`self.head_len` of them, with [`ESCAPE_LATER`]
    /// where they are the routing group's only, as [`NetPartition::class_candidates`] caches them)
    /// if it holds the head; else `false`, with them in `self.runs` (from the routing, then
    /// cached), and as classes too where they form them (`self.head_len` 0 where not: selection
    /// then reads the runs).
    #[inline]
    fn head_cache_classes(
        &mut self,
        li: usize,
        port: usize,
        vc: usize,
        sw: SwitchId,
        st: &RouteState,
        now: Cycle,
    ) -> bool {
        self.head_len = 0;
        if let Some(e) = self.head_cache.find(li, port, vc) {
            let later = self.head_cache.escape_later(e);
            let n =
                self.learning_ranges(now, |p| p.head_cache.classes_into(e, &mut p.levels.ranges, &mut p.head_classes));
            if let Some(n) = n.filter(|&n| n > 0) {
                debug_assert!(
                    self.classes_of_routing(sw, st, Self::groups(later), &self.head_classes[..n]),
                    "cached classes of switch {sw} input {port} VC {vc} differ from the routing's"
                );
                self.head_len = with_later(n, later);
                return true;
            }
            if !later {
                self.runs.clear();
                self.head_cache.expand(e, &mut self.runs);
                return false;
            }
            // Part of the head's runs only: asked for again, below.
            self.head_cache.forget(li, port, vc);
        }
        let (written, later) = self.written_head_classes(sw, st, now);
        if let Some(n) = written {
            if n == 0 {
                // No candidate at all.
                self.runs.clear();
                return false;
            }
            self.store_head_classes(li, port, vc, n, later);
            return true;
        }
        self.fresh_runs(sw, st);
        self.head_cache.store(li, port, vc, &self.runs);
        self.head_len = self.classes_of_runs(now);
        false
    }

    /// The candidates of a packet in state `st` at `sw` (those of `groups`) as the routing
    /// writes them as classes ([`crate::routing::Routing::candidate_classes`]), into
    /// `self.head_classes` from index `at`: how many, or `None` where it writes none or they do
    /// not fit (the caller then asks for runs).
    fn written_classes(
        &mut self,
        sw: SwitchId,
        st: &RouteState,
        now: Cycle,
        groups: ClassGroups,
        at: usize,
    ) -> Option<usize> {
        let mut written = std::mem::take(&mut self.classes);
        written.clear();
        let ok = self.p.routing.candidate_classes(sw, st, groups, &mut written);
        let n = match ok {
            true => {
                self.learning_ranges(now, |p| classes_from(&written, &mut p.levels.ranges, &mut p.head_classes[at..]))
            }
            false => None,
        };
        self.classes = written;
        debug_assert!(
            n.is_none_or(|n| self.classes_of_routing(sw, st, groups, &self.head_classes[at..at + n])),
            "classes written by the routing at switch {sw} differ from those of its runs"
        );
        n
    }

    /// `self.runs` as classes into `self.head_classes`: how many (0 where they form none, or
    /// none fit); a slot's VC range seen for the first time is costed on every port.
    fn classes_of_runs(&mut self, now: Cycle) -> u8 {
        let n = self.learning_ranges(now, |p| classes_of(&p.runs, &mut p.levels.ranges, &mut p.head_classes));
        n.unwrap_or(0) as u8
    }

    /// `f(self)`, which may learn a slot's VC range (`self.levels.ranges`, each once per run from
    /// the first head that uses it); a range learnt is then costed on every port.
    #[inline]
    fn learning_ranges<R>(&mut self, now: Cycle, f: impl FnOnce(&mut Self) -> R) -> R {
        let before = self.levels.ranges;
        let r = f(self);
        if self.levels.ranges != before {
            self.cost_all_ports(now);
        }
        r
    }

    /// The candidates of the head of VC `vc` of input `pi`, in state `st` at `sw`, as the routing
    /// writes them as classes ([`NetPartition::written_classes`]), stored in the class cache: `true` if the routing wrote classes that fit (the head is cached, or, with no
    /// candidate at all, `self.runs` is empty); `false` if it did not, and the caller asks for runs.
    ///
    /// A head's classes may come without its escape group's ([`NetPartition::written_head_classes`]).
    fn class_candidates(&mut self, pi: usize, vc: usize, sw: SwitchId, st: &RouteState, now: Cycle) -> bool {
        let (written, later) = self.written_head_classes(sw, st, now);
        match written {
            None => false,
            Some(0) => {
                self.runs.clear();
                self.run_cache_vc[pi] = NO_VC;
                true
            }
            Some(n) => {
                self.class_cache[pi * MAX_CLASSES..][..n].copy_from_slice(&self.head_classes[..n]);
                self.run_cache_len[pi] = with_later(n, later);
                self.run_cache_vc[pi] = vc as u8;
                true
            }
        }
    }

    /// The classes of a head in state `st` at `sw`, new to selection, as
    /// [`NetPartition::written_classes`] writes them into `self.head_classes`, and whether they
    /// are its routing group's only ([`ESCAPE_LATER`]): where the routing writes its escape group
    /// apart, the escape slot's VC range is known (its levels then bound the escape's costs) and
    /// the head is not in the escape, the routing group's, unless that is empty; else all.
    fn written_head_classes(&mut self, sw: SwitchId, st: &RouteState, now: Cycle) -> (Option<usize>, bool) {
        let lazy = self.levels.escape_floor.is_some() && !st.escape && self.levels.ranges[1] != (0, 0);
        if lazy {
            if let Some(n) = self.written_classes(sw, st, now, ClassGroups::Routing, 0).filter(|&n| n > 0) {
                return (Some(n), true);
            }
        }
        (self.written_classes(sw, st, now, ClassGroups::All, 0), false)
    }

    /// The groups of classes cached with (`true`) or without [`ESCAPE_LATER`].
    #[inline]
    fn groups(escape_later: bool) -> ClassGroups {
        if escape_later {
            ClassGroups::Routing
        } else {
            ClassGroups::All
        }
    }

    /// The first `n` of `self.head_classes` as the head's in the [`HeadCache`] (of input `port`, VC
    /// `vc` of local switch `li`; its routing group's only where `later`), and in `self.head_len`
    /// for this selection. Where they form no entry the cache forgets the head, whose classes are
    /// then written again at its next evaluation.
    fn store_head_classes(&mut self, li: usize, port: usize, vc: usize, n: usize, later: bool) {
        let ranges = self.levels.ranges;
        let parts = self.head_classes[..n].iter().map(|c| (c.mask(), c.penalty, c.escape, ranges[c.slot as usize]));
        if !self.head_cache.store_classes(li, port, vc, parts, later) {
            self.head_cache.forget(li, port, vc);
        }
        self.head_len = with_later(n, later);
    }

    /// The classes selection reads for the head of VC `vc` of input `pi` (index `li * np +
    /// port`), from whichever cache holds them (the class cache, or the [`HeadCache`] through
    /// `self.head_classes`), with the escape's least penalty where they are its routing group's
    /// only ([`ESCAPE_LATER`]); `None` where the head's candidates are not classes (it is then
    /// selected from runs).
    #[inline]
    fn selection_classes(&self, pi: usize, vc: usize) -> (Option<&[CandidateClass]>, Option<u32>) {
        let (classes, later) = if !self.levels.is_on() {
            (None, false)
        } else if self.run_cache_cap != 0 {
            let (n, later) = without_later(self.run_cache_len[pi]);
            ((self.run_cache_vc[pi] == vc as u8).then(|| &self.class_cache[pi * MAX_CLASSES..][..n]), later)
        } else if self.head_cache.is_on() {
            // The per-switch cache's classes ([`NetPartition::head_cache_classes`]).
            let (n, later) = without_later(self.head_len);
            ((n > 0).then(|| &self.head_classes[..n]), later)
        } else {
            (None, false)
        };
        (classes, self.levels.escape_floor.filter(|_| later))
    }

    /// Completes the classes of the head of VC `vc` of input `pi` (index `li * np + port`, in state
    /// `st` at `sw`), which are its routing group's ([`ESCAPE_LATER`]), with its escape group's,
    /// in the cache that holds them (for the [`HeadCache`], in `self.head_classes` too): `true` if
    /// they fit; else `false`, with the head no longer cached (it is then selected from its runs,
    /// as a head whose classes are too many).
    #[cold]
    fn complete_escape_classes(
        &mut self,
        li: usize,
        pi: usize,
        vc: usize,
        sw: SwitchId,
        st: &RouteState,
        now: Cycle,
    ) -> bool {
        let port = pi - li * self.np;
        let class_cache = self.run_cache_cap != 0;
        let (n, later) = without_later(if class_cache { self.run_cache_len[pi] } else { self.head_len });
        debug_assert!(later, "head of switch {sw} input {port} VC {vc} has its escape classes already");
        // The class cache's are apart from `self.head_classes`: the escape's are written from 0.
        let at = if class_cache { 0 } else { n };
        let written = self.written_classes(sw, st, now, ClassGroups::Escape, at);
        let Some(m) = written.filter(|&m| n + m <= MAX_CLASSES) else {
            if class_cache {
                self.run_cache_vc[pi] = NO_VC;
            } else {
                self.head_cache.forget(li, port, vc);
            }
            return false;
        };
        // Selection takes the escape group on slot 1 ([`NetPartition::select_classes`]).
        debug_assert!(self.head_classes[at..at + m].iter().all(|c| c.escape && c.slot == 1));
        if class_cache {
            self.class_cache[pi * MAX_CLASSES + n..][..m].copy_from_slice(&self.head_classes[..m]);
            self.run_cache_len[pi] = (n + m) as u8;
        } else {
            self.store_head_classes(li, port, vc, n + m, false);
        }
        true
    }

    /// Debug check of cached or written classes: whether `classes` are those the routing's runs
    /// (of `groups`) form for a packet in state `st` at `sw` (the same classes, in any order).
    fn classes_of_routing(
        &self,
        sw: SwitchId,
        st: &RouteState,
        groups: ClassGroups,
        classes: &[CandidateClass],
    ) -> bool {
        let mut fresh = Vec::new();
        self.p.routing.candidate_runs(sw, st, &mut fresh);
        match groups {
            ClassGroups::All => {}
            ClassGroups::Routing => fresh.retain(|r| !r.escape),
            ClassGroups::Escape => fresh.retain(|r| r.escape),
        }
        let (mut formed, mut ranges) = ([CandidateClass::default(); MAX_CLASSES], self.levels.ranges);
        classes_of(&fresh, &mut ranges, &mut formed).is_some_and(|m| same_classes(&formed[..m], classes))
    }

    /// Debug check of [`Routing::candidate_runs`]: whether `self.runs` expands to exactly the
    /// candidates of a packet in state `st` at `sw`, in the same order.
    fn runs_match_candidates(&self, sw: SwitchId, st: &RouteState) -> bool {
        let mut cands = Vec::new();
        self.p.routing.candidates(sw, st, &mut cands);
        let expanded: Vec<Candidate> =
            self.runs.iter().flat_map(|r| (r.lo..r.hi).map(move |vc| r.candidate(vc))).collect();
        cands == expanded
    }

    /// Debug check of the input-level shortcut: whether the turn of input `port` of switch `li`
    /// would end in a refused request: its first VC in round-robin order with a packet has a head
    /// that [`NetPartition::head_refused`].
    fn first_head_refused(&self, li: usize, port: usize, now: Cycle) -> bool {
        let pi = li * self.np + port;
        let ip = &self.inp[pi];
        rotated(ip.vc_mask, ip.rr as usize)
            .next()
            .is_some_and(|vc| self.head_refused(li, self.in_vc(li, port, vc), now))
    }

    /// Link stage of local switch `li`.
    pub(super) fn link_stage(&mut self, li: usize, now: Cycle, out: &mut Scheduler<'_, Msg>) {
        let (np, v, t) = (self.np, self.v, self.t_of[li] as usize);
        let plen = self.p.packet_phits;
        let series = self.p.link_series;
        for w in 0..self.words {
            // First the ports whose link is free, tested without branches so that the loads of the
            // (cold) port records overlap; sending on one port changes no other port's record.
            let mut bits = 0u64;
            for b in BitIter(self.out_mask[li * self.words + w]) {
                bits |= ((self.outp[li * np + w * 64 + b].link_free <= now) as u64) << b;
            }
            for b in BitIter(bits) {
                let port = w * 64 + b;
                let pi = li * np + port;
                let op = self.outp[pi];
                // Round robin over VCs whose head is present and has a downstream credit.
                let mut chosen = usize::MAX;
                for vc in rotated(op.vc_mask, op.rr as usize) {
                    let qi = pi * v + vc;
                    let ov = &self.outvc[qi];
                    if ov.cred == 0 {
                        continue;
                    }
                    if self.slab.get(ov.q.front()).ready_at <= now {
                        chosen = vc;
                        break;
                    }
                }
                if chosen == usize::MAX {
                    continue;
                }
                let vc = chosen;
                let qi = pi * v + vc;
                // The previous packet's tail has left (the link is free): settle its slot.
                let f = self.outp[pi].freeing;
                if f != NO_VC {
                    self.outvc[pi * v + f as usize].occ -= 1;
                    self.outp[pi].load -= 1;
                }
                let idx = self.outvc[qi].q.pop(&mut self.slab);
                let emptied = self.outvc[qi].q.is_empty();
                let o = &mut self.outp[pi];
                o.freeing = vc as u8;
                o.rr = if vc + 1 == v { 0 } else { vc as u8 + 1 };
                if emptied {
                    o.vc_mask &= !(1 << vc);
                    if o.vc_mask == 0 {
                        clear_bit(&mut self.out_mask[li * self.words..(li + 1) * self.words], port);
                    }
                }
                let pkt = self.slab.remove(idx);
                o.link_free = now + plen;
                self.last_progress = now;
                let lat = self.lat(pi);
                if port < t {
                    let tail = now + lat + plen - 1;
                    if series {
                        self.count_ejection(li, &pkt, now);
                    }
                    self.deliver_to_server(li, port, &pkt, tail);
                    if self.p.throttle == Throttle::Window {
                        self.send_ack(li, &pkt, tail, out);
                    }
                } else {
                    self.outvc[qi].cred -= 1;
                    self.outp[pi].load += 1;
                    self.port_changed(li, port);
                    let (nsw, nport) = self.nbr[li * self.r + port - t];
                    if series {
                        self.count_link_phits(li, port - t, now);
                    }
                    if self.in_window(now) {
                        self.link_phits[li * self.r + port - t] += plen;
                        self.stats.vc_phits[vc] += plen;
                    }
                    out.send(now + lat, nsw, Msg::Arrival { port: nport, vc: vc as u8, pkt });
                }
            }
        }
    }

    /// Routing and switch allocation of local switch `li` (stage 2 of the module docs): requests,
    /// then grants. Inlined into the switch step, with the request step: where the compiler
    /// left them out of line (as it did once the step's prefetch stages grew, e0e705f), PolSP
    /// took 4-8% more CPU time on `configs/hyperx-3d-8.toml` and 3-7% more on the faulty
    /// million-endpoint HyperX, `minimal` 1-13% more on `configs/hyperx-3d-8.toml`.
    #[inline(always)]
    pub(super) fn allocation_stage(&mut self, li: usize, now: Cycle) {
        if self.p.allocation == Allocation::Vc {
            self.request_step_vc(li, now);
        } else {
            self.request_step(li, now);
        }
        if !self.reqs.is_empty() {
            self.grant_step(li, now);
        }
    }

    /// Request step of local switch `li`: each input whose crossbar input is free routes its first
    /// head in VC order that has a candidate with room and requests it (into `self.reqs`), with the
    /// refused-request shortcut of the module docs.
    #[inline(always)]
    fn request_step(&mut self, li: usize, now: Cycle) {
        let (np, v, t) = (self.np, self.v, self.t_of[li] as usize);
        let (sw, in_base) = (self.switches[li], self.in_base[li]);
        let random = self.p.allocator == Allocator::Random;
        self.reqs.clear();
        // Whether this step has re-costed the switch's changed ports: done before its first
        // selection, not at every step, so that a port that changes over steps that select
        // nothing (heads waiting for their output with `Reroute::OutputFrees`) is costed once.
        let mut costed = false;
        for w in 0..self.words {
            // First the inputs that may request, tested without branches so that the loads of the
            // (cold) port records overlap; an input's turn changes no other input's record.
            let mut bits = 0u64;
            for b in BitIter(self.in_mask[li * self.words + w]) {
                let ip = &self.inp[li * np + w * 64 + b];
                let skip = after(ip.refused_until, now);
                debug_assert!(
                    !skip
                        || ip.free > now
                        || self.p.reroute == Reroute::OutputFrees
                        || self.first_head_refused(li, w * 64 + b, now),
                    "input {} of switch {} skipped but its turn would not end in a refused request",
                    w * 64 + b,
                    self.switches[li]
                );
                bits |= (((ip.free <= now) & !skip) as u64) << b;
            }
            for b in BitIter(bits) {
                let port = w * 64 + b;
                let pi = li * np + port;
                let ip = self.inp[pi];
                let start = if random { below(&mut self.rng_router[li], v as u64) as usize } else { ip.rr as usize };
                // Whether every VC before this one in the scan order was empty. While the head of
                // the first VC in that order stays refused, so is the input: the order changes only
                // with a grant, and an arrival (which resets this) is the only way an empty VC
                // before it gets a head.
                let mut first = !random;
                let ib = self.in_port_vcs(in_base, t, port);
                for vc in rotated(ip.vc_mask, start) {
                    let iv = self.inbuf[ib + vc];
                    if after(iv.refused_until, now) {
                        // This head would request an output whose crossbar is busy and be refused,
                        // which ends this input's turn as the request would have (with
                        // `Reroute::OutputFrees`, it waits for the output it chose).
                        debug_assert!(
                            self.p.reroute == Reroute::OutputFrees || self.head_refused(li, ib + vc, now),
                            "head of switch {} input {port} VC {vc} skipped but it would not be refused",
                            self.switches[li]
                        );
                        if first {
                            self.inp[pi].refused_until = iv.refused_until;
                        }
                        break;
                    }
                    let head = iv.q.front();
                    let pkt = self.slab.get(head);
                    if pkt.ready_at > now {
                        first = false;
                        continue;
                    }
                    // The age key of the `age` allocator: when the head arrived in this buffer.
                    let arrived = pkt.ready_at;
                    // At the destination switch: eject to the server's port.
                    if pkt.route.dst == sw {
                        let op = (pkt.dst - self.first_server[li]) as usize;
                        if let Some(evc) = self.ejection_vc(li * np + op, now, None) {
                            self.reqs.push(Request {
                                in_port: port as u16,
                                in_vc: vc as u8,
                                out_port: op as u16,
                                out_vc: evc as u8,
                                escape: false,
                                prio: arrived,
                            });
                            let busy = self.outp[li * np + op].xbar_free;
                            self.mark_refused(pi, ib + vc, first, busy, now);
                            break;
                        }
                        first = false;
                        continue;
                    }
                    let route = pkt.route;
                    let key = self.head_key(li, port, vc, arrived);
                    let cached = self.cached_runs(li, pi, vc, sw, &route, now);
                    if self.runs.is_empty() && !cached {
                        self.stranded_head(li, pi, vc, sw, &route, now);
                        first = false;
                        continue;
                    }
                    if self.levels.is_on() && !costed {
                        self.recost_stale(li, now);
                        costed = true;
                    }
                    let (classes, escape_floor) = self.selection_classes(pi, vc);
                    let (best, xbar_free) = if !self.levels.is_on() {
                        self.select_head(li, cached.then_some(pi), now, key)
                    } else if let Some(classes) = classes {
                        let first_answer = self.select_classes(li, classes, now, key, escape_floor);
                        self.levels.class_heads += 1;
                        let selected = match first_answer {
                            Some(selected) => selected,
                            // The escape group's classes could matter: cached now, with the rest.
                            None if self.complete_escape_classes(li, pi, vc, sw, &route, now) => {
                                let (classes, _) = self.selection_classes(pi, vc);
                                let classes = classes.expect("the head's classes, completed");
                                self.select_classes(li, classes, now, key, None).expect("classes whole")
                            }
                            None => {
                                // Too many classes with the escape's: selected from runs, as such a
                                // head is when its classes come whole.
                                self.fresh_runs(sw, &route);
                                self.run_head_with_levels();
                                self.select_head(li, None, now, key)
                            }
                        };
                        let (best, xbar_free) = selected;
                        debug_assert!(
                            {
                                // The run-based selection, on the routing's runs, chooses the same.
                                self.fresh_runs(sw, &route);
                                let (b, x) = self.select_head(li, None, now, key);
                                // (With `Reroute::OutputFrees` the class selection does not
                                // look for the earliest free crossbar: the head waits for its own.)
                                b == best
                                    && (best.is_none()
                                        || self.p.reroute == Reroute::OutputFrees
                                        || (x > now) == (xbar_free > now) && (x <= now || x == xbar_free))
                            },
                            "class selection of switch {sw} input {port} VC {vc} differs from the run-based one at cycle {now}"
                        );
                        (best, xbar_free)
                    } else {
                        // Runs that form no classes: selected from `self.runs`.
                        self.run_head_with_levels();
                        self.select_head(li, None, now, key)
                    };
                    if let Some(c) = best {
                        self.reqs.push(Request {
                            in_port: port as u16,
                            in_vc: vc as u8,
                            out_port: (t + c.port as usize) as u16,
                            out_vc: c.vc,
                            escape: c.escape,
                            prio: arrived,
                        });
                        let busy = match self.p.reroute {
                            Reroute::EachTurn => xbar_free,
                            // The head waits for the crossbar output it chose.
                            Reroute::OutputFrees => self.outp[li * np + t + c.port as usize].xbar_free,
                        };
                        self.mark_refused(pi, ib + vc, first, busy, now);
                        break;
                    }
                    first = false;
                }
            }
        }
    }

    /// Request step of local switch `li` with per-VC allocation (`router.allocation = "vc"`, as
    /// CAMINOS's input-output router): every input VC whose crossbar input is free and whose head
    /// has a candidate with room in an output VC whose crossbar output is free requests that
    /// candidate (lowest `Q + P`), whatever the other VCs of its input do. No refused-request
    /// shortcut: a request is refused only when another wins its output VC.
    fn request_step_vc(&mut self, li: usize, now: Cycle) {
        let (np, v, t) = (self.np, self.v, self.t_of[li] as usize);
        let sw = self.switches[li];
        self.reqs.clear();
        for w in 0..self.words {
            for b in BitIter(self.in_mask[li * self.words + w]) {
                let port = w * 64 + b;
                let pi = li * np + port;
                for vc in BitIter(self.inp[pi].vc_mask) {
                    if self.vc_in_free[pi * v + vc] > now {
                        continue;
                    }
                    let pkt = self.slab.get(self.inbuf[self.in_vc(li, port, vc)].q.front());
                    if pkt.ready_at > now {
                        continue;
                    }
                    let arrived = pkt.ready_at;
                    if pkt.route.dst == sw {
                        let op = (pkt.dst - self.first_server[li]) as usize;
                        if let Some(evc) = self.ejection_vc(li * np + op, now, Some(&self.vc_out_free)) {
                            self.reqs.push(Request {
                                in_port: port as u16,
                                in_vc: vc as u8,
                                out_port: op as u16,
                                out_vc: evc as u8,
                                escape: false,
                                prio: arrived,
                            });
                        }
                        continue;
                    }
                    let route = pkt.route;
                    // Several heads of one input route in one step here, so the per-input cache
                    // of `request_step` does not apply.
                    self.fresh_runs(sw, &route);
                    if self.runs.is_empty() {
                        self.stranded_head(li, pi, vc, sw, &route, now);
                        continue;
                    }
                    let key = self.head_key(li, port, vc, arrived);
                    if let (Some(c), _) = self.select_head(li, None, now, key) {
                        self.reqs.push(Request {
                            in_port: port as u16,
                            in_vc: vc as u8,
                            out_port: (t + c.port as usize) as u16,
                            out_vc: c.vc,
                            escape: c.escape,
                            prio: arrived,
                        });
                    }
                }
            }
        }
    }

    /// Grant step of local switch `li`: each output whose crossbar output is free grants one
    /// request (oldest head, round robin or random: [`Allocator`]; in-transit first with
    /// `router.intransit_priority`), and the
    /// granted packets cross the crossbar into their output VCs.
    fn grant_step(&mut self, li: usize, now: Cycle) {
        let (np, v, t) = (self.np, self.v, self.t_of[li] as usize);
        let (sw, in_base) = (self.switches[li], self.in_base[li]);
        let alloc = self.p.allocator;
        let per_vc = self.p.allocation == Allocation::Vc;
        // Output arbitration: one grant per output port (per output VC with per-VC allocation)
        // whose crossbar output is free.
        self.touched.clear();
        for i in 0..self.reqs.len() {
            let rq = self.reqs[i];
            let op = rq.out_port as usize;
            let key = if per_vc {
                // Requests go only to output VCs with a free crossbar output (see `select`).
                debug_assert!(self.vc_out_free[(li * np + op) * v + rq.out_vc as usize] <= now);
                op * v + rq.out_vc as usize
            } else {
                if self.outp[li * np + op].xbar_free > now {
                    continue;
                }
                op
            };
            // Distance from the round-robin pointer, without division.
            let dist = || {
                let (ip, ptr) = (rq.in_port as u64, self.outp[li * np + op].arb as u64);
                if ip >= ptr {
                    ip - ptr
                } else {
                    ip + np as u64 - ptr
                }
            };
            // Lowest wins. Allocator priorities are below 2^63 (`rq.prio` holds the head's arrival
            // cycle, below 2^47, and router ports are fewer than 2^16).
            let prio = match alloc {
                Allocator::Random => (self.rng_router[li].next_u32_() >> 1) as u64,
                Allocator::Islip => dist(),
                Allocator::Age => rq.prio << 16 | dist(),
            };
            // Injection requests rank after every transit request.
            let prio = prio | (((self.p.intransit_priority && (rq.in_port as usize) < t) as u64) << 63);
            self.reqs[i].prio = prio;
            let b = self.best[key];
            if b == NIL {
                self.best[key] = i as u32;
                self.touched.push(key as u32);
            } else if prio < self.reqs[b as usize].prio {
                self.best[key] = i as u32;
            }
        }
        let xbar = self.p.crossbar_cycles();
        let xlat = self.p.crossbar_latency;
        let plen = self.p.packet_phits;
        for k in 0..self.touched.len() {
            let key = self.touched[k] as usize;
            let rq = self.reqs[self.best[key] as usize];
            self.best[key] = NIL;
            let op = rq.out_port as usize;
            let ip = rq.in_port as usize;
            let pi = li * np + ip;
            let qi = self.in_port_vcs(in_base, t, ip) + rq.in_vc as usize;
            let idx = self.inbuf[qi].q.pop(&mut self.slab);
            let emptied = self.inbuf[qi].q.is_empty();
            self.head_left(li, ip, qi, rq.in_vc as usize);
            let inport = &mut self.inp[pi];
            if emptied {
                inport.vc_mask &= !(1 << rq.in_vc);
                if inport.vc_mask == 0 {
                    clear_bit(&mut self.in_mask[li * self.words..(li + 1) * self.words], ip);
                }
            }
            inport.rr = if rq.in_vc as usize + 1 == v { 0 } else { rq.in_vc + 1 };
            // Crossbar timing: the tail is through after `xbar` cycles, but not before it arrived.
            let pkt = self.slab.get_mut(idx);
            let tail_in = pkt.ready_at + plen - 1;
            let done = (now + xbar).max(tail_in + 1);
            let o = &mut self.outp[li * np + op];
            if per_vc {
                // Only this input VC and this output VC are busy; the port records stay free.
                self.vc_in_free[pi * v + rq.in_vc as usize] = done;
                self.vc_out_free[(li * np + op) * v + rq.out_vc as usize] = done;
            } else {
                inport.free = done;
                o.xbar_free = done;
            }
            o.arb = if ip + 1 == np { 0 } else { ip as u16 + 1 };
            o.load += 1;
            o.vc_mask |= 1 << rq.out_vc;
            pkt.ready_at = now + xlat;
            if op >= t {
                let next = self.nbr[li * self.r + op - t].0;
                let c = Candidate { port: (op - t) as u16, vc: rq.out_vc, penalty: 0, escape: rq.escape };
                let mut st: RouteState = pkt.route;
                step(&mut st, &c);
                self.p.routing.advance(&mut st, sw, next, &c);
                self.slab.get_mut(idx).route = st;
            }
            let oi = (li * np + op) * v + rq.out_vc as usize;
            self.outvc[oi].q.push(&mut self.slab, idx);
            self.outvc[oi].occ += 1;
            self.port_changed(li, op);
            set_bit(&mut self.out_mask[li * self.words..(li + 1) * self.words], op);
            self.stats.traversals += 1;
            self.last_progress = now;
            // The input slot is free once the tail has left it, at `done`: whoever feeds this input
            // is told then ([`NetPartition::send_due_credits`]).
            self.credits_due[done as usize & self.due_mask].push(CreditDue {
                li: li as u32,
                port: ip as u16,
                vc: rq.in_vc,
            });
            self.credits_pending += 1;
        }
    }

    /// Send the credits of the input slots freed at `now` (queued by [`NetPartition::grant_step`]):
    /// each reaches the upstream output (or server) a link latency later, when the model says.
    /// Held here rather than in the engine's wheel from the grant on: a credit waits up to a
    /// packet's crossbar time for its slot to free, and its 8 bytes here against a 64-byte
    /// message there are most of the memory of messages in flight on a large network.
    pub(super) fn send_due_credits(&mut self, now: Cycle, out: &mut Scheduler<'_, Msg>) {
        let b = now as usize & self.due_mask;
        let mut due = std::mem::take(&mut self.credits_due[b]);
        self.credits_pending -= due.len();
        for c in due.drain(..) {
            let (li, ip) = (c.li as usize, c.port as usize);
            let pi = li * self.np + ip;
            let lat = self.lat(pi);
            let t = self.t_of[li] as usize;
            if ip < t {
                out.send(now + lat, self.switches[li], Msg::Credit { port: c.port, vc: c.vc });
            } else {
                let (usw, uport) = self.nbr[li * self.r + ip - t];
                out.send(now + lat, usw, Msg::Credit { port: uport, vc: c.vc });
            }
        }
        // Keep the bucket's capacity.
        self.credits_due[b] = due;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Selection from kept costs chooses what the per-candidate scan chooses, with the same key:
    /// on random port states and candidate lists, for a fresh record and for one kept from an
    /// earlier cycle (also across the cycle the packet on a link frees its slot, which `until`
    /// must catch), with and without per-VC allocation.
    #[test]
    fn kept_costs_select_what_each_candidate_selects() {
        let (ports, v) = (6usize, 4usize);
        let mut rng = crate::rng::stream(11, 0, crate::rng::Purpose::Router);
        let mut draw = |n: u64| below(&mut rng, n);
        let (mut kept_reads, mut ties) = (0, 0);
        for case in 0..400 {
            let now: Cycle = 100;
            let outp: Vec<OutPort> = (0..ports)
                .map(|_| OutPort {
                    xbar_free: 95 + draw(10),
                    link_free: 95 + draw(10),
                    freeing: if draw(2) == 0 { NO_VC } else { draw(v as u64) as u8 },
                    load: 8 + draw(4) as u32,
                    ..OutPort::default()
                })
                .collect();
            // Few distinct occupancies and credits, so that ties are common.
            let outvc: Vec<OutVc> = (0..ports * v)
                .map(|_| OutVc { occ: 1 + draw(3) as u16, cred: draw(2) as u16, ..OutVc::default() })
                .collect();
            let busy: Vec<Cycle> = (0..ports * v).map(|_| 95 + draw(10)).collect();
            // Runs as SurePath writes them: routing VCs 0..3 and the escape VC 3, on ports in any
            // order, a port at most once per VC range.
            let mut runs = Vec::new();
            for port in 0..ports as u16 {
                if draw(3) != 0 {
                    runs.push(CandidateRun { penalty: 16 * draw(3) as u32, port, lo: 0, hi: 3, escape: false });
                }
                if draw(2) == 0 {
                    runs.push(CandidateRun { penalty: 48 + 16 * draw(2) as u32, port, lo: 3, hi: 4, escape: true });
                }
            }
            let per_vc = case % 2 == 1;
            let mut costs = vec![RunCost::default(); 2 * ports];
            for t in [now, now, now + 3, now + 6] {
                let sel = |costs| Selection {
                    outp: &outp,
                    outvc: &outvc,
                    v,
                    out_cap: 3,
                    in_cap: 2,
                    pk_phits: 4,
                    now: t,
                    vc_busy: per_vc.then_some(&busy[..]),
                    costs,
                };
                let key = crate::rng::mix64(case as u64 * 7 + t);
                let each = select_each(&runs, &sel(None), key);
                kept_reads += costs.iter().filter(|c| c.hi != 0 && t <= c.until).count();
                let kept = select_kept(&runs, &sel(None), &mut costs, key);
                assert_eq!(kept, each, "case {case} at cycle {t}");
                // Where the lowest cost is tied, another key picks another candidate (some of the
                // time): the draw is used.
                let other = select_each(&runs, &sel(None), key ^ 1);
                ties += (other != each) as u32;
            }
        }
        assert!(kept_reads > 1000 && ties > 100, "the cases read kept records ({kept_reads}) and draw ({ties})");
    }

    #[test]
    fn refusal_marks_compare_across_the_wrap_of_their_low_bits() {
        let now: Cycle = (1 << 32) - 3;
        assert!(after((now + 5) as u32, now), "5 cycles ahead, past the wrap");
        assert!(!after(now as u32, now), "not after itself");
        assert!(!after((now - 7) as u32, now), "in the past");
        // 0 is "unknown", also when the low bits of `now` are above 2^31 (where a plain wrapping
        // comparison would put 0 in the future).
        assert!(!after(0, 3 << 31));
        assert!(!after(0, 5));
    }
}
