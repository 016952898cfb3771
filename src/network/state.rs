//! The dynamic state of a [`NetPartition`] for checkpoints (see `crate::checkpoint`), in a form that
//! does not depend on the partitioning: one [`SwitchState`] per switch (its buffers with their
//! packets, credits, round-robin pointers, servers, per-switch random streams, per-link and
//! per-server counters, and the messages pending for it), and one [`GlobalState`] of what is summed
//! over partitions (statistics, packets in flight). A checkpoint taken with any thread or rank
//! count can therefore be restored into any other: the switches are dealt to the new partitions
//! and the sums go to one partition. Nothing that [`NetPartition::new`] derives from the config
//! (topology tables, latencies) is saved; a resumed run rebuilds it.
//!
//! Why this is exact: every choice a switch makes draws from its own streams (`rng_traffic[li]`,
//! `rng_router[li]`, seeded by switch id) or from keys of its own (`tie_seed[li]`, which a resumed
//! run derives again), deliveries of one cycle commute, and packets are
//! addressed by slab index only inside a partition (an index is never compared or reported), so a
//! switch's future depends only on its own record and the messages it receives. The partition-level
//! fields are integer sums (statistics, `in_flight`), a maximum (`last_progress`) or follow from the
//! switches (`undrained_servers`), so they can be recombined exactly.

use super::packet::Packet;
use super::{InPort, InVc, Msg, NetPartition, OutPort, OutVc, Server};
use crate::engine::{Cycle, Envelope};
use crate::metrics::Stats;
use crate::rng::Rng;
use crate::topology::SwitchId;
use serde::{Deserialize, Serialize};

/// One switch with its servers, as saved in a checkpoint.
#[derive(Serialize, Deserialize)]
pub struct SwitchState {
    /// Global switch id.
    pub id: SwitchId,
    /// Input ports (`np` of them).
    inp: Vec<InPort>,
    /// Input VCs (`np * v`): `refused_until` and the packets, head first.
    inbuf: Vec<(u32, Vec<Packet>)>,
    in_mask: Vec<u64>,
    /// Output ports (`np`).
    outp: Vec<OutPort>,
    /// Output VCs (`np * v`): occupancy, credits and the packets, head first.
    outvc: Vec<(u16, u16, Vec<Packet>)>,
    out_mask: Vec<u64>,
    /// Servers: link free cycle, credits, packets left (fixed workloads), source queue.
    servers: Vec<(Cycle, u16, u64, Vec<Packet>)>,
    next_gen: Vec<Cycle>,
    server_ready: Vec<Cycle>,
    /// Credits per server and VC of the switch's server input (`router.injection_vcs = "any"`;
    /// empty otherwise).
    srv_vc_cred: Vec<u16>,
    /// Packets generated per server (the all-to-all shift's position in its walk; empty with
    /// other patterns).
    srv_generated: Vec<u64>,
    /// Packets per server injected and not yet acknowledged (`router.injection_throttle =
    /// "window"`; empty otherwise). Acknowledgements in flight are among `pending`.
    srv_outstanding: Vec<u16>,
    /// Packets per server sent again after a loss, at the head of its source queue
    /// (`faults.retransmit_cycles`; empty otherwise).
    #[serde(default)]
    srv_resend: Vec<u32>,
    /// Per input and output VC, when its crossbar connection is free (`router.allocation = "vc"`;
    /// empty otherwise).
    vc_in_free: Vec<Cycle>,
    vc_out_free: Vec<Cycle>,
    next_gen_min: Cycle,
    inject_at: Cycle,
    rng_traffic: Rng,
    rng_router: Rng,
    /// Phits per switch-to-switch output port (`r`).
    link_phits: Vec<u64>,
    server_injected: Vec<u64>,
    server_accepted: Vec<u64>,
    /// Messages pending for this switch: delivery cycle and message.
    pending: Vec<(Cycle, Msg)>,
    /// Credits of this switch's inputs waiting for their slots to free: the cycle they are sent
    /// at, the input port and the VC (see `NetPartition::send_due_credits`).
    credits_due: Vec<(Cycle, u16, u8)>,
    /// Workloads: the tasks of the switch's servers (by server, `None` for one without a task).
    #[serde(default)]
    tasks: Vec<Option<super::TaskState>>,
}

/// The partition-level state, combined over all partitions (and ranks).
#[derive(Serialize, Deserialize, Default)]
pub struct GlobalState {
    /// Counters and time series, merged ([`Stats::merge`]: sums and maxima).
    stats: Stats,
    /// Packets generated minus packets delivered, over the network.
    in_flight: i64,
    /// Last cycle anything moved, anywhere.
    last_progress: Cycle,
    failure: Option<String>,
    /// Losses whose sources are told at the next step (only just after a failure event).
    #[serde(default)]
    notices: Vec<super::failures::Notice>,
}

impl GlobalState {
    /// Add `o` (another partition's or rank's share).
    pub fn merge(&mut self, o: &GlobalState) {
        self.stats.merge(&o.stats);
        self.in_flight += o.in_flight;
        self.last_progress = self.last_progress.max(o.last_progress);
        if self.failure.is_none() {
            self.failure.clone_from(&o.failure);
        }
        self.notices.extend_from_slice(&o.notices);
    }
}

/// Every field of [`NetPartition`], by what a checkpoint does with it. The pattern has no `..`, so
/// a field added to `NetPartition` does not compile until it is listed here: its author decides
/// whether [`SwitchState`] or [`GlobalState`] must carry it (and adds it to
/// [`NetPartition::for_each_switch_state`] and [`NetPartition::restore_switch`]), or why it need
/// not be saved. Never called.
#[allow(dead_code)]
fn every_field_is_classified(part: &NetPartition) {
    let NetPartition {
        // Built by `NetPartition::new` from the config, the network and the partitioning.
        p: _,
        switches: _,
        local_of: _,
        t_of: _,
        srv_base: _,
        first_server: _,
        r: _,
        np: _,
        uniform_lat: _,
        uniform_t: _,
        v: _,
        in_sv: _,
        in_base: _,
        words: _,
        nbr: _,
        due_mask: _,
        run_cache_cap: _,
        fetch_ahead: _,
        fetch_far: _,
        sample_sink: _,
        port_class: _,
        // Set again from the resume cycle (`NetPartition::resume_link_series`).
        next_census: _,
        // Follow from the failure events before the resume cycle, which the run applies again to
        // the model it resumes with (`crate::sim::events`).
        stranded: _,
        // Saved per switch in `SwitchState` (the packets of the slab and of the source queues
        // with the queues holding them;
        // waiting credits from `credits_due`, counted back into `credits_pending`).
        slab: _,
        srcq: _,
        inp: _,
        inbuf: _,
        in_mask: _,
        outp: _,
        outvc: _,
        out_mask: _,
        servers: _,
        next_gen: _,
        next_gen_min: _,
        server_ready: _,
        inject_at: _,
        srv_outstanding: _,
        srv_resend: _,
        srv_vc_cred: _,
        srv_generated: _,
        vc_in_free: _,
        vc_out_free: _,
        rng_traffic: _,
        rng_router: _,
        // Derived from the seed and the switch ids.
        tie_seed: _,
        credits_due: _,
        credits_pending: _,
        link_phits: _,
        server_injected: _,
        server_accepted: _,
        // Saved in `GlobalState` (sums or maxima over partitions), or the engine's parked messages
        // dealt to the switches' `pending`.
        stats: _,
        in_flight: _,
        last_progress: _,
        failure: _,
        notices: _,
        parked: _,
        // Follows from the switches (`finish_restore`).
        undrained_servers: _,
        // Set by the engine at the start of every window (`Partition::begin_window`).
        window_end: _,
        // Deliveries whose tail is due after the window's end: not saved; they matter only to a
        // run stopped for good (`NetPartition::uncount_late`), and a run resumed from a
        // checkpoint counts them as the uninterrupted run does.
        late: _,
        // Caches of pure functions of the saved state, cleared by `begin_restore`.
        run_cache: _,
        run_cache_vc: _,
        run_cache_len: _,
        class_cache: _,
        head_cache: _,
        cache_mode: _,
        classes: _,
        run_costs: _,
        // Follow from the port records (`finish_restore`).
        levels: _,
        // Saved per switch in `SwitchState` (the tasks of its servers, with their events).
        tasks: _,
        // Scratch of one step or one cycle, empty at a window end.
        head_classes: _,
        head_len: _,
        wake: _,
        cands: _,
        runs: _,
        reqs: _,
        best: _,
        touched: _,
        inbox: _,
        inbox_start: _,
        by_switch: _,
        resent: _,
    } = part;
}

/// `a[from..to]`, or nothing where the array is unused (empty) in this configuration.
fn slice_or_empty<T: Clone>(a: &[T], from: usize, to: usize) -> Vec<T> {
    if a.is_empty() {
        Vec::new()
    } else {
        a[from..to].to_vec()
    }
}

fn packets(slab: &super::packet::Slab, q: &super::packet::Queue) -> Vec<Packet> {
    q.iter(slab).map(|i| *slab.get(i)).collect()
}

impl NetPartition {
    /// The packets in the source queue of server `s` of local switch `li` (`srv`), head first, as
    /// the run would inject them.
    fn source_packets(&self, li: usize, s: usize, srv: &Server) -> Vec<Packet> {
        self.srcq.iter(&srv.queue).map(|x| self.queued_packet(li, s, x)).collect()
    }

    /// This partition's share of the [`GlobalState`].
    pub fn global_state(&self) -> GlobalState {
        GlobalState {
            stats: self.stats.clone(),
            in_flight: self.in_flight,
            last_progress: self.last_progress,
            failure: self.failure.clone(),
            notices: self.notices.clone(),
        }
    }

    /// Switches of the whole network.
    pub fn num_switches(&self) -> usize {
        self.local_of.len()
    }

    /// The cycle the run resumes at, once parked by the engine at a window end.
    pub fn resume_at(&self) -> Option<Cycle> {
        self.parked.as_ref().map(|p| p.0)
    }

    /// Hand `f` the state of each local switch in turn (only valid after the engine stopped the
    /// run at a window end: the pending messages are parked here). One record exists at a time.
    pub fn for_each_switch_state<E>(&self, mut f: impl FnMut(SwitchState) -> Result<(), E>) -> Result<(), E> {
        let (np, v, r, w) = (self.np, self.v, self.r, self.words);
        let parked: &[Envelope<Msg>] = self.parked.as_ref().map_or(&[], |p| &p.1);
        // Messages wait in the per-switch lists only between delivery and the same cycle's step.
        debug_assert!(self.inbox.is_empty(), "messages kept for a switch at a window end");
        // Pending messages by local switch (LP = switch id).
        let mut order: Vec<u32> = (0..parked.len() as u32).collect();
        order.sort_by_key(|&i| self.local_of[parked[i as usize].1 as usize]);
        let mut next = 0;
        // Credits waiting in the ring, by switch, with the cycle each is sent at: the ring holds
        // the cycles from the window end on, one per bucket.
        let end = self.parked.as_ref().map_or(0, |p| p.0);
        let mut due: Vec<(u32, Cycle, u16, u8)> = Vec::with_capacity(self.credits_pending);
        for (b, bucket) in self.credits_due.iter().enumerate() {
            let at = end + ((b as Cycle).wrapping_sub(end) & self.due_mask as Cycle);
            due.extend(bucket.iter().map(|c| (c.li, at, c.port, c.vc)));
        }
        due.sort_by_key(|d| d.0);
        let mut next_due = 0;
        let mut tasks = self.tasks.as_ref().map(|t| t.save()).unwrap_or_default();
        for (li, &id) in self.switches.iter().enumerate() {
            let (s0, s1) = (self.srv_base[li] as usize, self.srv_base[li + 1] as usize);
            let mut pending = Vec::new();
            while next < order.len() && self.local_of[parked[order[next] as usize].1 as usize] as usize == li {
                let (at, _, m) = parked[order[next] as usize];
                pending.push((at, m));
                next += 1;
            }
            let mut credits_due = Vec::new();
            while next_due < due.len() && due[next_due].0 as usize == li {
                let (_, at, port, vc) = due[next_due];
                credits_due.push((at, port, vc));
                next_due += 1;
            }
            let st = SwitchState {
                id,
                inp: self.inp[li * np..(li + 1) * np].to_vec(),
                // Every port with `v` VCs, as the checkpoint format has them: a server port's VCs
                // past its records (`NetPartition::in_vcs`) are empty.
                inbuf: (0..np * v)
                    .map(|k| match k % v < self.in_vcs(li, k / v) {
                        true => {
                            let b = &self.inbuf[self.in_vc(li, k / v, k % v)];
                            (b.refused_until, packets(&self.slab, &b.q))
                        }
                        false => (0, Vec::new()),
                    })
                    .collect(),
                in_mask: self.in_mask[li * w..(li + 1) * w].to_vec(),
                outp: self.outp[li * np..(li + 1) * np].to_vec(),
                outvc: self.outvc[li * np * v..(li + 1) * np * v]
                    .iter()
                    .map(|o| (o.occ, o.cred, packets(&self.slab, &o.q)))
                    .collect(),
                out_mask: self.out_mask[li * w..(li + 1) * w].to_vec(),
                servers: self.servers[s0..s1]
                    .iter()
                    .enumerate()
                    .map(|(k, s)| (s.link_free, s.credits, s.remaining, self.source_packets(li, k, s)))
                    .collect(),
                next_gen: self.next_gen[s0..s1].to_vec(),
                server_ready: self.server_ready[s0..s1].to_vec(),
                srv_vc_cred: slice_or_empty(&self.srv_vc_cred, s0 * v, s1 * v),
                srv_generated: slice_or_empty(&self.srv_generated, s0, s1),
                srv_outstanding: slice_or_empty(&self.srv_outstanding, s0, s1),
                srv_resend: slice_or_empty(&self.srv_resend, s0, s1),
                vc_in_free: slice_or_empty(&self.vc_in_free, li * np * v, (li + 1) * np * v),
                vc_out_free: slice_or_empty(&self.vc_out_free, li * np * v, (li + 1) * np * v),
                next_gen_min: self.next_gen_min[li],
                inject_at: self.inject_at[li],
                rng_traffic: self.rng_traffic[li].clone(),
                rng_router: self.rng_router[li].clone(),
                link_phits: self.link_phits[li * r..(li + 1) * r].to_vec(),
                server_injected: self.server_injected[s0..s1].to_vec(),
                server_accepted: self.server_accepted[s0..s1].to_vec(),
                pending,
                credits_due,
                tasks: if tasks.is_empty() { Vec::new() } else { tasks[s0..s1].iter_mut().map(Option::take).collect() },
            };
            f(st)?;
        }
        debug_assert_eq!(next, parked.len(), "a parked message for a switch of another partition");
        Ok(())
    }

    /// Start restoring this (freshly built) partition from a checkpoint that resumes at `resume_at`:
    /// empties the packet slab, and takes `global` if this partition is the one that carries the
    /// network-wide sums (exactly one partition of the run does; the others start from zero). Then
    /// [`NetPartition::restore_switch`] for each local switch and [`NetPartition::finish_restore`].
    pub fn begin_restore(&mut self, resume_at: Cycle, global: &GlobalState, carries_sums: bool) {
        self.slab = Default::default();
        self.srcq = Default::default();
        if carries_sums {
            self.stats = global.stats.clone();
            self.in_flight = global.in_flight;
            self.notices.clone_from(&global.notices);
        } else {
            self.notices.clear();
            // Zeroed counters, shaped as `NetPartition::new` shapes them (one per VC).
            self.stats = Stats { vc_phits: vec![0; self.v], ..Stats::default() };
            self.in_flight = 0;
        }
        // The engine reduces it with a maximum: every partition may hold the global one.
        self.last_progress = global.last_progress;
        self.failure.clone_from(&global.failure);
        self.parked = Some((resume_at, Vec::new()));
        self.resume_link_series(resume_at);
        self.credits_due.iter_mut().for_each(Vec::clear);
        self.credits_pending = 0;
        // Cached candidates belong to the heads this partition held before, and kept selection
        // costs to its ports: the restored heads are routed and costed afresh (both are pure
        // functions of the state they were learnt from).
        self.run_cache_vc.fill(super::NO_VC);
        self.head_cache.clear();
        self.run_costs.fill(super::router::RunCost::default());
        if let Some(t) = self.tasks.as_mut() {
            t.clear_events();
        }
    }

    /// Restore one local switch from its record (see [`NetPartition::begin_restore`]).
    pub fn restore_switch(&mut self, st: SwitchState) -> Result<(), String> {
        let (np, v, r, w) = (self.np, self.v, self.r, self.words);
        let li = self.local_of[st.id as usize] as usize;
        if self.switches.get(li) != Some(&st.id) {
            return Err(format!("switch {} is not in this partition", st.id));
        }
        let (s0, s1) = (self.srv_base[li] as usize, self.srv_base[li + 1] as usize);
        // Arrays sized by the network must match: a mismatch means a different model.
        if st.inp.len() != np
            || st.inbuf.len() != np * v
            || st.outp.len() != np
            || st.outvc.len() != np * v
            || st.in_mask.len() != w
            || st.out_mask.len() != w
            || st.servers.len() != s1 - s0
            || st.next_gen.len() != s1 - s0
            || st.server_ready.len() != s1 - s0
            || st.link_phits.len() != r
            || st.server_injected.len() != s1 - s0
            || st.server_accepted.len() != s1 - s0
            || st.srv_vc_cred.len() != if self.srv_vc_cred.is_empty() { 0 } else { (s1 - s0) * v }
            || st.srv_generated.len() != if self.srv_generated.is_empty() { 0 } else { s1 - s0 }
            || st.srv_outstanding.len() != if self.srv_outstanding.is_empty() { 0 } else { s1 - s0 }
            // Saved with or without retransmission (a run resumed under other failure events may
            // turn it on or off while nothing has been lost: then every count is 0).
            || (!st.srv_resend.is_empty() && st.srv_resend.len() != s1 - s0)
            || (self.srv_resend.is_empty() && st.srv_resend.iter().any(|&n| n > 0))
            || st.vc_in_free.len() != if self.vc_in_free.is_empty() { 0 } else { np * v }
            || st.vc_out_free.len() != if self.vc_out_free.is_empty() { 0 } else { np * v }
            || st.inbuf.iter().enumerate().any(|(k, (until, pkts))| {
                k % v >= self.in_vcs(li, k / v) && (*until != 0 || !pkts.is_empty())
            })
        {
            return Err(format!("switch {}: the checkpoint's network differs from this run's", st.id));
        }
        // Where each of the checkpoint's input VCs goes (`None`: a server port's VC past its records).
        let ins: Vec<Option<usize>> =
            (0..np * v).map(|k| (k % v < self.in_vcs(li, k / v)).then(|| self.in_vc(li, k / v, k % v))).collect();
        let slab = &mut self.slab;
        let mut queue = |pkts: Vec<Packet>| {
            let mut q = super::packet::Queue::default();
            for p in pkts {
                let i = slab.insert(p);
                q.push(slab, i);
            }
            q
        };
        self.inp[li * np..(li + 1) * np].copy_from_slice(&st.inp);
        for ((refused_until, pkts), at) in st.inbuf.into_iter().zip(ins) {
            if let Some(i) = at {
                self.inbuf[i] = InVc { q: queue(pkts), refused_until };
            }
        }
        self.in_mask[li * w..(li + 1) * w].copy_from_slice(&st.in_mask);
        self.outp[li * np..(li + 1) * np].copy_from_slice(&st.outp);
        for (k, (occ, cred, pkts)) in st.outvc.into_iter().enumerate() {
            self.outvc[li * np * v + k] = OutVc { q: queue(pkts), occ, cred };
        }
        self.out_mask[li * w..(li + 1) * w].copy_from_slice(&st.out_mask);
        for (k, (link_free, credits, remaining, pkts)) in st.servers.into_iter().enumerate() {
            let queued = pkts.len() as u32;
            self.servers[s0 + k] = Server { queue: Default::default(), queued, link_free, credits, remaining };
            for p in pkts {
                self.enqueue(li, k, p);
            }
        }
        self.next_gen[s0..s1].copy_from_slice(&st.next_gen);
        self.server_ready[s0..s1].copy_from_slice(&st.server_ready);
        if !st.srv_vc_cred.is_empty() {
            self.srv_vc_cred[s0 * v..s1 * v].copy_from_slice(&st.srv_vc_cred);
        }
        if !st.srv_generated.is_empty() {
            self.srv_generated[s0..s1].copy_from_slice(&st.srv_generated);
        }
        if !st.srv_resend.is_empty() && !self.srv_resend.is_empty() {
            self.srv_resend[s0..s1].copy_from_slice(&st.srv_resend);
        }
        if !st.srv_outstanding.is_empty() {
            self.srv_outstanding[s0..s1].copy_from_slice(&st.srv_outstanding);
        }
        if !st.vc_in_free.is_empty() {
            self.vc_in_free[li * np * v..(li + 1) * np * v].copy_from_slice(&st.vc_in_free);
            self.vc_out_free[li * np * v..(li + 1) * np * v].copy_from_slice(&st.vc_out_free);
        }
        self.next_gen_min[li] = st.next_gen_min;
        self.inject_at[li] = st.inject_at;
        self.rng_traffic[li] = st.rng_traffic;
        self.rng_router[li] = st.rng_router;
        self.link_phits[li * r..(li + 1) * r].copy_from_slice(&st.link_phits);
        self.server_injected[s0..s1].copy_from_slice(&st.server_injected);
        self.server_accepted[s0..s1].copy_from_slice(&st.server_accepted);
        let resume_at = self.parked.as_ref().expect("begin_restore first").0;
        for (at, port, vc) in st.credits_due {
            if at < resume_at || at > resume_at + self.due_mask as Cycle || port as usize >= np {
                return Err(format!("switch {}: the checkpoint's network differs from this run's", st.id));
            }
            self.credits_due[at as usize & self.due_mask].push(super::CreditDue { li: li as u32, port, vc });
            self.credits_pending += 1;
        }
        match self.tasks.as_mut() {
            Some(t) if st.tasks.len() == s1 - s0 => {
                for (k, task) in st.tasks.into_iter().enumerate() {
                    if let Some(task) = task {
                        t.restore(s0 + k, task)?;
                    } else if t.has_task(s0 + k) {
                        return Err(format!("switch {}: the checkpoint's workload differs from this run's", st.id));
                    }
                }
            }
            None if st.tasks.is_empty() => {}
            _ => return Err(format!("switch {}: the checkpoint's workload differs from this run's", st.id)),
        }
        let parked = &mut self.parked.as_mut().expect("begin_restore first").1;
        parked.extend(st.pending.into_iter().map(|(at, m)| (at, st.id, m)));
        Ok(())
    }

    /// End a restore: the counts that follow from the switches.
    pub fn finish_restore(&mut self) {
        // A server still has packets to generate exactly while `remaining > 0` (fixed workloads;
        // 0 for Bernoulli traffic and silent servers), as counted by `NetPartition::new`.
        self.undrained_servers = self.servers.iter().filter(|s| s.remaining > 0).count() as u64;
        // Selection's cost levels follow from the restored port records.
        self.cost_all_ports(0);
        if let Some(t) = self.tasks.as_mut() {
            t.finish_restore();
        }
    }
}
