//! The conservative parallel discrete-event kernel. It knows logical processes (LPs), partitions of
//! LPs, timed messages and lookahead; it knows nothing of networks.
//!
//! Each partition owns some LPs and a timing wheel of messages addressed to them. A message sent at
//! cycle `t` over a link of latency `L` arrives at `t + L`; with `W` the minimum latency of any link
//! that crosses a partition cut, a partition can simulate `W` cycles without hearing from anybody
//! (architecture spec, property 1). After each window, partitions publish what crossed the cut into
//! double-buffered mailboxes, meet at a barrier, and take their inbound messages. A global reduction
//! of [`Status`] rides on the same barrier: it stops the run, detects deadlock, and lets all
//! partitions jump over cycles in which nobody has anything to do.
//!
//! Three scales, one loop (architecture spec, property 2): one partition on the calling thread; `T`
//! partitions on `T` threads of one process ([`run`]); and `R` processes (MPI ranks) of `T` threads
//! each ([`run_with`] and a [`Transport`]). With ranks, a window ends with two barriers: between
//! them, local partition 0 (the calling thread) hands the messages addressed to other ranks to the
//! transport, which exchanges them with the neighbouring ranks and reduces the status over all
//! ranks, while the other threads take their local mail; the transport's
//! [`Transport::window_end`] then lets a driver run collectives of its own in step with the windows
//! (rank 0 collects the time series that way, see `metrics::SampleRelay`). [`World`] is the process
//! group a run spans (one process, or the MPI world with the `mpi` feature) and offers the few
//! collectives the driver needs to merge results on rank 0.
//!
//! Determinism: message deliveries of one cycle must commute (a model contract), LPs step in a fixed
//! order, and each LP draws only from its own random streams, so results do not depend on the
//! partitioning, the thread count or the rank count.

mod barrier;
#[cfg(feature = "mpi")]
mod mpi;
mod transport;
mod wheel;
mod world;

pub use barrier::SpinBarrier;
pub use transport::{Local, Observed, Transport};
pub use wheel::Wheel;
pub use world::{launcher_ranks, LaunchError, World, SINGLE_PROCESS_ENV};

use crossbeam::utils::CachePadded;
use std::borrow::Cow;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Simulated time, in cycles.
pub type Cycle = u64;
/// Global index of a logical process.
pub type Lp = u32;

/// What a partition tells the others at the end of each window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Status {
    /// Work items created minus work items finished in this partition (packets generated here minus
    /// packets delivered here); may be negative for one partition, the global sum is what is in flight.
    pub in_flight: i64,
    /// Last cycle at which something made progress (a packet moved).
    pub last_progress: Cycle,
    /// This partition has nothing more to generate (fixed workloads).
    pub drained: bool,
    /// Earliest cycle at which the partition acts on its own (no inbound message), or `Cycle::MAX`.
    pub next_activity: Cycle,
    /// A stop was requested (set by partition 0 from [`Progress::stop`], so all agree on the window).
    pub stop: bool,
    /// The model hit an error it cannot continue from (e.g. an unroutable packet).
    pub failed: bool,
}

impl Status {
    /// Combine the statuses of partitions (or of ranks, each already combined): sums, extremes and
    /// flags, so the result does not depend on the order.
    pub fn reduce(all: impl Iterator<Item = Status>) -> Status {
        let mut g = Status {
            in_flight: 0,
            last_progress: 0,
            drained: true,
            next_activity: Cycle::MAX,
            stop: false,
            failed: false,
        };
        for s in all {
            g.in_flight += s.in_flight;
            g.last_progress = g.last_progress.max(s.last_progress);
            g.drained &= s.drained;
            g.next_activity = g.next_activity.min(s.next_activity);
            g.stop |= s.stop;
            g.failed |= s.failed;
        }
        g
    }
}

/// A partition of the model: the LPs one thread simulates.
pub trait Partition: Send {
    /// Message exchanged between LPs.
    type Msg: Send;
    /// Apply `msg` to LP `lp` (owned by this partition) at cycle `now`. Deliveries of one cycle must
    /// commute: their order is not canonical.
    fn deliver(&mut self, now: Cycle, lp: Lp, msg: Self::Msg);
    /// Simulate cycle `now` for all owned LPs, in a fixed order, after that cycle's deliveries.
    fn step(&mut self, now: Cycle, out: &mut Scheduler<'_, Self::Msg>);
    /// State summary for the global reduction at window ends.
    fn status(&self, now: Cycle) -> Status;
    /// Called by the partition's thread before it simulates a window, with the cycle the window
    /// ends at (e.g. to tell what a stop at that end would leave unfinished). Default: nothing.
    fn begin_window(&mut self, _end: Cycle) {}
    /// Called by the partition's thread after it has simulated every cycle before `end` (the end of
    /// each window), e.g. to hand finished statistics to an observer. Default: nothing.
    fn end_window(&mut self, _end: Cycle) {}
    /// Take the messages still pending for this partition's LPs when the run stops at a window end
    /// with [`Outcome::Paused`] or [`Outcome::Interrupted`], and the cycle the next window would
    /// have started at (after any jump over idle cycles): what a checkpoint needs besides the
    /// partition's own state. Default: dropped.
    fn park(&mut self, _resume_at: Cycle, _pending: Vec<Envelope<Self::Msg>>) {}
    /// Messages to schedule before the first window of a run that starts at [`RunSpec::start`]
    /// (those given to [`Partition::park`] by the run that stopped there). Default: none.
    fn unpark(&mut self) -> Vec<Envelope<Self::Msg>> {
        Vec::new()
    }
}

/// Sends messages: to the local wheel, or to the outbox of the partition (or remote rank) that owns
/// the target.
pub struct Scheduler<'a, M> {
    now: Cycle,
    me: u32,
    /// Outbox of each LP: a local partition `0..T`, or `T + rank` for a partition of another rank.
    slot_of: &'a [u32],
    wheel: &'a mut Wheel<M>,
    outboxes: &'a mut [Vec<Envelope<M>>],
}

impl<M> Scheduler<'_, M> {
    /// Deliver `msg` to `lp` at cycle `at` (`at > now`; cross-partition sends must respect lookahead).
    #[inline(always)]
    pub fn send(&mut self, at: Cycle, lp: Lp, msg: M) {
        debug_assert!(at > self.now, "message into the past or present");
        let p = self.slot_of[lp as usize];
        if p == self.me {
            self.wheel.push(at, lp, msg);
        } else {
            self.outboxes[p as usize].push((at, lp, msg));
        }
    }
    /// Current cycle.
    pub fn now(&self) -> Cycle {
        self.now
    }
}

/// How to run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Stop before this cycle (the run simulates cycles `0..end`).
    pub end: Cycle,
    /// Minimum latency of links crossing the partition cut (>= 1).
    pub lookahead: Cycle,
    /// Largest delay of any message (sizes the timing wheel).
    pub max_delay: Cycle,
    /// Stop early once every partition is drained and nothing is in flight.
    pub stop_when_drained: bool,
    /// Deadlock watchdog: in flight and no progress for this many cycles.
    pub watchdog: Cycle,
    /// First cycle to simulate: 0, or where a paused (checkpointed) run resumes.
    pub start: Cycle,
    /// Stop with [`Outcome::Paused`] at the first window end at or after this cycle (`Cycle::MAX`:
    /// never), so that a checkpoint can be taken where no message is between partitions.
    pub pause_at: Cycle,
    /// Stop with [`Outcome::Paused`] exactly before this cycle (`Cycle::MAX`: never): no window
    /// and no jump over idle cycles passes it, and the partitions park with this cycle as where
    /// the next window starts, whatever the layout. The model changes there (a failure event) are
    /// then made at the same simulated time on every rank and thread.
    pub break_at: Cycle,
}

/// Why a run ended before `end`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Reached `end`.
    Finished {
        /// Cycles simulated.
        cycles: Cycle,
    },
    /// Everything drained (fixed workload).
    Drained {
        /// Cycles simulated.
        cycles: Cycle,
    },
    /// The watchdog fired.
    Deadlock {
        /// Cycle at which it fired.
        cycle: Cycle,
        /// Last cycle anything moved.
        last_progress: Cycle,
        /// Items in flight.
        in_flight: i64,
    },
    /// The model reported a failure (see the partitions for details).
    Failed {
        /// Cycle of the window end at which it was seen.
        cycle: Cycle,
    },
    /// Stopped on request (signal).
    Interrupted {
        /// Cycles simulated.
        cycles: Cycle,
    },
    /// With [`RunSpec::stop_when_drained`]: not drained, yet nothing in flight and nothing
    /// scheduled anywhere (a workload whose tasks all wait for each other).
    Stalled {
        /// Cycle of the window end at which it was seen.
        cycle: Cycle,
    },
    /// Reached [`RunSpec::pause_at`] or [`RunSpec::break_at`]; every partition has parked its
    /// pending messages (see
    /// [`Partition::park`]) and the run can go on from there.
    Paused {
        /// Cycle of the window end it stopped at.
        cycle: Cycle,
    },
}

/// Shared view of a run in progress, for progress bars and signal handlers.
#[derive(Debug, Default)]
pub struct Progress {
    /// Cycle reached by all partitions.
    pub cycle: AtomicU64,
    /// Set to non-zero to stop at the next window boundary.
    pub stop: AtomicU64,
}

/// A boundary message: delivery cycle, target LP, payload.
pub type Envelope<M> = (Cycle, Lp, M);

/// A slot written by one thread and read by another after a barrier, on its own cache line so that
/// partitions publishing side by side do not invalidate each other's lines (false sharing).
struct Slot<T>(CachePadded<UnsafeCell<T>>);

impl<T: Default> Default for Slot<T> {
    fn default() -> Self {
        Slot(CachePadded::new(UnsafeCell::new(T::default())))
    }
}

impl<T> Slot<T> {
    /// SAFETY: the caller follows the ownership rule documented on `Shared`.
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self) -> &mut T {
        &mut *self.0.get()
    }
}

/// What the threads of one process share. `T` local partitions, `R` ranks, parity `par` of the window.
struct Shared<M> {
    /// Local partitions (threads) of this process.
    local: usize,
    /// Ranks (processes); 1 without a transport.
    ranks: usize,
    /// `mail[(par * T + src) * T + dst]`: messages between local partitions.
    mail: Vec<Slot<Vec<Envelope<M>>>>,
    /// `remote[(par * T + src) * R + rank]`: messages from local partition `src` to partitions of
    /// another rank, taken by the leader thread (local partition 0) for the transport.
    remote: Vec<Slot<Vec<Envelope<M>>>>,
    /// `inbox[par * T + dst]`: messages from other ranks, put there by the leader.
    inbox: Vec<Slot<Vec<Envelope<M>>>>,
    /// `status[par * T + p]`.
    status: Vec<Slot<Status>>,
    /// `global[par]`: the status reduced over all ranks, written by the leader.
    global: Vec<Slot<Status>>,
    barrier: SpinBarrier,
}

// SAFETY: slot `mail[par][src][dst]` is written only by partition `src` before the barrier that ends
// window k (parity k % 2) and read only by `dst` after that barrier and before the next one; the same
// slot is written again only after the barrier that ends window k+1. Status slots follow the same
// rule. With several ranks a window ends with two barriers, A and B: `remote[par][src][*]` is written
// by `src` before A and emptied by the leader between A and B; `inbox[par][dst]` and `global[par]`
// are written by the leader between A and B and read by `dst` (every thread for `global`) after B
// and before the next A. Each slot therefore has one writer or one reader at any time.
unsafe impl<M: Send> Sync for Shared<M> {}

/// Run partitions `parts` (one thread each) until `spec.end`, a drain, a deadlock or a stop request.
/// `part_of[lp]` is the partition owning each LP. Returns the partitions and the outcome.
pub fn run<P: Partition>(parts: Vec<P>, part_of: &[u32], spec: &RunSpec, progress: &Progress) -> (Vec<P>, Outcome) {
    run_with(parts, part_of, spec, progress, &mut Local)
}

/// Run the local partitions `parts` of this process, exchanging boundary messages with the other
/// processes through `transport`.
///
/// Every rank runs the same number `T = parts.len()` of partitions; rank `r` owns the global
/// partitions `r * T .. (r + 1) * T`, in order, and `part_of[lp]` is the global partition of each LP
/// (the same table on every rank). Partition 0 of this process runs on the calling thread, which is
/// the only one that calls `transport` (so MPI needs no more than `MPI_THREAD_FUNNELED`); the others
/// get one scoped thread each. Every rank returns the same outcome.
pub fn run_with<P: Partition, X: Transport<P::Msg>>(
    parts: Vec<P>,
    part_of: &[u32],
    spec: &RunSpec,
    progress: &Progress,
    transport: &mut X,
) -> (Vec<P>, Outcome) {
    assert!(spec.lookahead >= 1);
    let t = parts.len();
    assert!(t >= 1, "a process needs at least one partition");
    let (ranks, rank) = (transport.ranks(), transport.rank());
    assert!(rank < ranks);
    let total = ranks * t;
    debug_assert!(part_of.iter().all(|&p| (p as usize) < total), "partition id beyond ranks x threads");
    // Where a message to each LP goes: a local partition (0..T), or the transport for rank q (T + q).
    // With one rank that is `part_of` itself, so the single-process path copies nothing.
    let slot_of: Cow<'_, [u32]> = if ranks == 1 {
        Cow::Borrowed(part_of)
    } else {
        let first = (rank * t) as u32;
        Cow::Owned(
            part_of
                .iter()
                .map(|&g| if g >= first && g < first + t as u32 { g - first } else { (t + g as usize / t) as u32 })
                .collect(),
        )
    };
    fn slots<T: Default>(n: usize) -> Vec<Slot<T>> {
        (0..n).map(|_| Slot::default()).collect()
    }
    let remote = ranks > 1;
    let shared = Shared::<P::Msg> {
        local: t,
        ranks,
        mail: slots(2 * t * t),
        remote: if remote { slots(2 * t * ranks) } else { Vec::new() },
        inbox: if remote { slots(2 * t) } else { Vec::new() },
        status: slots(2 * t),
        global: slots(2),
        barrier: SpinBarrier::new(t),
    };
    let ctx = Ctx { first: rank * t, total, slot_of: &slot_of, spec, shared: &shared, progress };
    let mut parts = parts.into_iter();
    let leader = parts.next().expect("at least one partition");
    if t == 1 {
        let (part, outcome) = drive(0, leader, &ctx, Some(transport));
        return (vec![part], outcome);
    }
    let mut results: Vec<Option<(P, Outcome)>> = (0..t).map(|_| None).collect();
    std::thread::scope(|s| {
        let ctx = &ctx;
        let handles: Vec<_> =
            parts.enumerate().map(|(i, part)| s.spawn(move || drive::<P, X>(i as u32 + 1, part, ctx, None))).collect();
        results[0] = Some(drive(0, leader, ctx, Some(transport)));
        for (i, h) in handles.into_iter().enumerate() {
            results[i + 1] = Some(h.join().expect("partition thread panicked"));
        }
    });
    let mut outcome = None;
    let parts = results
        .into_iter()
        .map(|r| {
            let (p, o) = r.expect("every partition returns");
            outcome.get_or_insert(o);
            p
        })
        .collect();
    (parts, outcome.expect("at least one partition"))
}

/// What every partition's driver reads.
struct Ctx<'a, M> {
    /// Global id of local partition 0.
    first: usize,
    /// Partitions over all ranks.
    total: usize,
    slot_of: &'a [u32],
    spec: &'a RunSpec,
    shared: &'a Shared<M>,
    progress: &'a Progress,
}

fn drive<P: Partition, X: Transport<P::Msg>>(
    me: u32,
    mut part: P,
    ctx: &Ctx<'_, P::Msg>,
    mut transport: Option<&mut X>,
) -> (P, Outcome) {
    let (spec, shared, progress) = (ctx.spec, ctx.shared, ctx.progress);
    let (n, ranks) = (shared.local, shared.ranks);
    let remote = ranks > 1;
    let me_us = me as usize;
    let mut wheel = Wheel::starting_at(spec.max_delay + 1, spec.start);
    for (at, lp, m) in part.unpark() {
        wheel.push(at, lp, m);
    }
    let mut outboxes: Vec<Vec<Envelope<P::Msg>>> =
        (0..n + if remote { ranks } else { 0 }).map(|_| Vec::new()).collect();
    // Leader scratch: outbound messages per rank, and what came in.
    let mut outbound: Vec<Vec<Envelope<P::Msg>>> = Vec::new();
    let mut inbound: Vec<Envelope<P::Msg>> = Vec::new();
    if transport.is_some() && remote {
        outbound = (0..ranks).map(|_| Vec::new()).collect();
    }
    let global_zero = ctx.first == 0 && me == 0;
    let mut t: Cycle = spec.start;
    let mut window: u64 = 0;
    // A lone partition has nobody to wait for: its window only bounds how often it checks status.
    let window_len = if ctx.total == 1 { spec.lookahead.max(64) } else { spec.lookahead };
    loop {
        let end = (t + window_len).min(spec.end).min(spec.break_at.max(t + 1));
        part.begin_window(end);
        for now in t..end {
            wheel.deliver_due(now, |lp, m| part.deliver(now, lp, m));
            let mut sched = Scheduler { now, me, slot_of: ctx.slot_of, wheel: &mut wheel, outboxes: &mut outboxes };
            part.step(now, &mut sched);
        }
        part.end_window(end);
        // Publish outboxes and status for this window.
        let par = (window % 2) as usize;
        let mut st = part.status(end);
        st.stop = global_zero && progress.stop.load(Ordering::Relaxed) != 0;
        // Pending messages only matter for jumping ahead, i.e. when the model itself is idle.
        let idle = st.next_activity > end;
        if idle && !wheel.is_empty() {
            st.next_activity = st.next_activity.min(wheel.next_due(end));
        }
        for (dst, ob) in outboxes.iter_mut().enumerate() {
            if !ob.is_empty() {
                if idle {
                    st.next_activity = st.next_activity.min(ob.iter().map(|e| e.0).min().unwrap());
                }
                // SAFETY: see `Shared`.
                let slot = unsafe {
                    if dst < n {
                        shared.mail[(par * n + me_us) * n + dst].get()
                    } else {
                        shared.remote[(par * n + me_us) * ranks + dst - n].get()
                    }
                };
                debug_assert!(slot.is_empty());
                std::mem::swap(slot, ob);
            }
        }
        unsafe { *shared.status[par * n + me_us].get() = st };
        shared.barrier.wait();
        let take_mail = |wheel: &mut Wheel<P::Msg>| {
            for src in 0..n {
                // SAFETY: see `Shared`.
                let slot = unsafe { shared.mail[(par * n + src) * n + me_us].get() };
                for (at, lp, m) in slot.drain(..) {
                    debug_assert!(at >= end, "lookahead violated: message for {at} arrived at window end {end}");
                    wheel.push(at, lp, m);
                }
            }
        };
        let local_status = || Status::reduce((0..n).map(|p| unsafe { *shared.status[par * n + p].get() }));
        let g = if !remote {
            take_mail(&mut wheel);
            if let Some(tr) = transport.as_deref_mut() {
                // Every partition published this window's status before the barrier, so it has
                // also finished `end_window`; the others may already be in the next window.
                tr.window_end(end);
            }
            local_status()
        } else {
            if let Some(tr) = transport.as_deref_mut() {
                // Leader, between barriers A and B: hand what crossed to other ranks to the
                // transport, spread what came back over the local inboxes, publish the global status.
                for (q, ob) in outbound.iter_mut().enumerate() {
                    for src in 0..n {
                        // SAFETY: see `Shared`.
                        ob.append(unsafe { shared.remote[(par * n + src) * ranks + q].get() });
                    }
                }
                let g = tr.exchange(&mut outbound, &mut inbound, local_status());
                for (at, lp, m) in inbound.drain(..) {
                    let dst = ctx.slot_of[lp as usize] as usize;
                    assert!(dst < n, "message for LP {lp} reached a rank that does not own it");
                    // SAFETY: see `Shared`.
                    unsafe { shared.inbox[par * n + dst].get() }.push((at, lp, m));
                }
                unsafe { *shared.global[par].get() = g };
                // Still between the barriers: no local partition has started the next window.
                tr.window_end(end);
            }
            // Local mail meanwhile: the other threads would only be waiting for the leader.
            take_mail(&mut wheel);
            shared.barrier.wait();
            // SAFETY: see `Shared`.
            for (at, lp, m) in unsafe { shared.inbox[par * n + me_us].get() }.drain(..) {
                debug_assert!(at >= end, "lookahead violated: message for {at} arrived at window end {end}");
                wheel.push(at, lp, m);
            }
            unsafe { *shared.global[par].get() }
        };
        window += 1;
        if me == 0 {
            progress.cycle.store(end, Ordering::Relaxed);
        }
        // Every partition of every rank reads the same reduced status, so all take the same decision.
        if g.failed {
            return (part, Outcome::Failed { cycle: end });
        }
        if end >= spec.end {
            return (part, Outcome::Finished { cycles: end });
        }
        if spec.stop_when_drained && g.drained && g.in_flight == 0 {
            return (part, Outcome::Drained { cycles: end });
        }
        if spec.stop_when_drained && g.in_flight == 0 && g.next_activity == Cycle::MAX {
            return (part, Outcome::Stalled { cycle: end });
        }
        if g.in_flight > 0 && end.saturating_sub(g.last_progress) > spec.watchdog {
            return (part, Outcome::Deadlock { cycle: end, last_progress: g.last_progress, in_flight: g.in_flight });
        }
        // Jump over cycles in which nobody has anything to do.
        t = if g.next_activity > end && g.next_activity != Cycle::MAX { g.next_activity.min(spec.end) } else { end };
        // Never over a break: the run stops there (below).
        t = t.min(spec.break_at.max(end));
        // All mail of the window is in the wheels now: a stop here loses nothing if the partition
        // keeps what is pending (and where the jump would have gone, so that a resumed run takes
        // the same windows as one that never stopped).
        let at_break = t >= spec.break_at;
        if g.stop || end >= spec.pause_at || at_break {
            let mut pending = Vec::with_capacity(wheel.len());
            wheel.drain_into(&mut pending);
            part.park(t, pending);
            return (part, if g.stop { Outcome::Interrupted { cycles: end } } else { Outcome::Paused { cycle: end } });
        }
    }
}

#[cfg(test)]
mod rank_tests;

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring of LPs passing a token: LP i sends to LP (i+1) % n after `delay` cycles, `hops` times.
    /// Each partition owns a contiguous range of LPs.
    struct Ring {
        lps: std::ops::Range<Lp>,
        n: Lp,
        delay: Cycle,
        pending: Vec<(Lp, u32)>,
        /// Deliveries seen: (cycle, lp, remaining hops).
        seen: Vec<(Cycle, Lp, u32)>,
        in_flight: i64,
        stuck: bool,
        last: Cycle,
        parked: Vec<Envelope<u32>>,
        resume_at: Cycle,
    }

    impl Partition for Ring {
        type Msg = u32;
        fn deliver(&mut self, now: Cycle, lp: Lp, hops: u32) {
            assert!(self.lps.contains(&lp));
            self.seen.push((now, lp, hops));
            self.pending.push((lp, hops));
        }
        fn step(&mut self, now: Cycle, out: &mut Scheduler<'_, u32>) {
            if now == 0 && self.lps.contains(&0) {
                self.in_flight += 1;
                out.send(self.delay, 1 % self.n, 40);
            }
            if self.stuck {
                return;
            }
            for (lp, hops) in self.pending.drain(..) {
                self.last = now;
                if hops == 0 {
                    self.in_flight -= 1;
                } else {
                    out.send(now + self.delay, (lp + 1) % self.n, hops - 1);
                }
            }
        }
        fn status(&self, _now: Cycle) -> Status {
            Status {
                in_flight: self.in_flight,
                last_progress: self.last,
                drained: true,
                next_activity: if self.pending.is_empty() { Cycle::MAX } else { 0 },
                stop: false,
                failed: false,
            }
        }
        fn park(&mut self, resume_at: Cycle, pending: Vec<Envelope<u32>>) {
            self.resume_at = resume_at;
            self.parked = pending;
        }
        fn unpark(&mut self) -> Vec<Envelope<u32>> {
            std::mem::take(&mut self.parked)
        }
    }

    fn ring(parts: u32, n: Lp, delay: Cycle, stuck: bool) -> (Vec<Ring>, Vec<u32>) {
        let part_of: Vec<u32> = (0..n).map(|lp| lp * parts / n).collect();
        let rings = (0..parts)
            .map(|p| {
                let lo = part_of.iter().position(|&x| x == p).unwrap() as Lp;
                let hi = part_of.iter().rposition(|&x| x == p).unwrap() as Lp + 1;
                Ring {
                    lps: lo..hi,
                    n,
                    delay,
                    pending: vec![],
                    seen: vec![],
                    in_flight: 0,
                    stuck,
                    last: 0,
                    parked: vec![],
                    resume_at: 0,
                }
            })
            .collect();
        (rings, part_of)
    }

    fn spec(end: Cycle, delay: Cycle) -> RunSpec {
        RunSpec {
            end,
            lookahead: delay,
            max_delay: delay,
            stop_when_drained: true,
            watchdog: 100,
            start: 0,
            pause_at: Cycle::MAX,
            break_at: Cycle::MAX,
        }
    }

    #[test]
    fn breaks_stop_exactly_and_change_nothing() {
        // A break stops every partition with the next window starting exactly at it, for any
        // partitioning (a lone partition's windows are 64 cycles long, and a jump over idle
        // cycles would pass it); going on from there sees the same deliveries.
        for parts in [1, 2, 3] {
            let (rings, part_of) = ring(parts, 10, 3, false);
            let (whole, _) = run(rings, &part_of, &spec(10_000, 3), &Progress::default());
            let (mut rings, _) = ring(parts, 10, 3, false);
            let mut s = spec(10_000, 3);
            let breaks = [5, 6, 50, 77, 200, 500];
            let mut hit = Vec::new();
            let outcome = loop {
                s.break_at = breaks.iter().copied().find(|&b| b > s.start).unwrap_or(Cycle::MAX);
                let (r, o) = run(rings, &part_of, &s, &Progress::default());
                rings = r;
                match o {
                    Outcome::Paused { .. } => {
                        assert!(rings.iter().all(|r| r.resume_at == s.break_at), "{parts} partitions");
                        hit.push(s.break_at);
                        s.start = s.break_at;
                    }
                    o => break o,
                }
            };
            assert!(matches!(outcome, Outcome::Drained { .. }), "{outcome:?}");
            // The token is consumed at cycle 123; with one partition the run notices at 128 and
            // the break at 200 is never reached.
            assert_eq!(hit, [5, 6, 50, 77], "{parts} partitions");
            let key = |rs: Vec<Ring>| {
                let mut v: Vec<_> = rs.into_iter().flat_map(|r| r.seen).collect();
                v.sort();
                v
            };
            assert_eq!(key(whole), key(rings), "{parts} partitions");
        }
    }

    #[test]
    fn token_ring_is_the_same_for_any_partitioning() {
        // 40 hops of 3 cycles after the first send at cycle 0: the token is consumed at cycle 123.
        let mut reference = None;
        for parts in [1, 2, 3, 5] {
            let (rings, part_of) = ring(parts, 10, 3, false);
            let (rings, outcome) = run(rings, &part_of, &spec(10_000, 3), &Progress::default());
            let mut seen: Vec<_> = rings.into_iter().flat_map(|r| r.seen).collect();
            seen.sort();
            assert_eq!(seen.len(), 41);
            assert_eq!(seen.last().unwrap().0, 3 * 41);
            // Drained: stops at the first window end after the token is consumed.
            match outcome {
                Outcome::Drained { cycles } => assert!((123..=123 + 64).contains(&cycles), "{cycles}"),
                o => panic!("{o:?}"),
            }
            if let Some(r) = &reference {
                assert_eq!(r, &seen, "{parts} partitions");
            }
            reference = Some(seen);
        }
    }

    #[test]
    fn pausing_and_resuming_changes_nothing() {
        // Checkpoints stop every partition at a window end with the token in flight (possibly
        // between partitions); going on from the parked messages sees the same deliveries.
        for parts in [1, 2, 3] {
            let (rings, part_of) = ring(parts, 10, 3, false);
            let (whole, _) = run(rings, &part_of, &spec(10_000, 3), &Progress::default());
            let (mut rings, _) = ring(parts, 10, 3, false);
            let mut s = spec(10_000, 3);
            let mut pauses = 0;
            let outcome = loop {
                s.pause_at = s.start + 10;
                let (r, o) = run(rings, &part_of, &s, &Progress::default());
                rings = r;
                match o {
                    Outcome::Paused { cycle } => {
                        assert!(cycle >= s.pause_at);
                        pauses += 1;
                        s.start = rings[0].resume_at;
                        assert!(rings.iter().all(|r| r.resume_at == s.start));
                    }
                    o => break o,
                }
            };
            assert!(matches!(outcome, Outcome::Drained { .. }), "{outcome:?}");
            // One partition checks every 64 cycles: the token is gone by the second check.
            assert!(pauses >= if parts == 1 { 1 } else { 5 }, "{parts} partitions: {pauses} pauses");
            let key = |rs: Vec<Ring>| {
                let mut v: Vec<_> = rs.into_iter().flat_map(|r| r.seen).collect();
                v.sort();
                v
            };
            assert_eq!(key(whole), key(rings), "{parts} partitions");
        }
    }

    #[test]
    fn watchdog_reports_no_progress() {
        let (rings, part_of) = ring(2, 4, 1, true);
        let (_, outcome) = run(rings, &part_of, &spec(10_000, 1), &Progress::default());
        match outcome {
            Outcome::Deadlock { cycle, in_flight, .. } => {
                assert_eq!(in_flight, 1);
                assert!(cycle > 100 && cycle < 110, "{cycle}");
            }
            o => panic!("expected deadlock, got {o:?}"),
        }
    }

    #[test]
    fn stop_request_ends_every_partition_in_the_same_window() {
        let (rings, part_of) = ring(3, 6, 1, false);
        let progress = Progress::default();
        progress.stop.store(1, Ordering::Relaxed);
        let mut s = spec(10_000, 1);
        s.stop_when_drained = false;
        let (_, outcome) = run(rings, &part_of, &s, &progress);
        assert_eq!(outcome, Outcome::Interrupted { cycles: 1 });
    }
}
