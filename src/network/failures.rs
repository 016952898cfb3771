//! Failures while the network runs ([`crate::topology::faults::events`]): what a failure event
//! does to a partition's packets and records, and what happens to packets left without a route.
//!
//! **At the event** (cycle `E`, applied before `E` is simulated, with every partition parked at
//! the break so that all ranks and threads apply it at the same simulated time):
//! - a failed link loses the packets in the output buffers that feed it (both directions) and the
//!   packets on the wire (their heads sent, not arrived); packets that had arrived in the input
//!   buffer at its far end stay there and go on;
//! - a failed switch loses every packet in its input and output buffers and its servers' source
//!   queues; its servers stop generating, and traffic to them is no longer generated (the new
//!   [`super::ModelParams`] restricts the pattern as for a switch failed from the start);
//! - these packets are **lost**: counted per event ([`crate::metrics::Stats::event_lost`]) and in the
//!   time series ([`crate::metrics::Sample::lost_packets`]). Real links lose what is on them;
//!   whether the packet is gone or sent again is the transport's business (below).
//!
//! **After the event** every head routes with the routing in force (see
//! [`crate::routing::degraded`]): the old one with the failed ports withdrawn until the rebuild,
//! the rebuilt one after it. A head with no candidate left (a deterministic routing whose port
//! failed, or a packet whose destination switch failed) is **stranded**: dropped where it waits and
//! counted ([`crate::metrics::Stats::stranded_packets`]), its buffer slot returned upstream as a
//! grant would. A packet routed before a rebuild can also be stranded by the new routing: under a
//! hop-indexed VC ladder (Minimal, Valiant), the hops it has taken plus its new, longer distance
//! may leave it no VC (SurePath's escape has none of this). Stranded packets are dropped rather
//! than left to block their buffers until the watchdog calls the network deadlocked; with
//! `faults.stranded = "wait"` they wait instead while a rebuild is pending (the routing's new
//! tables may give them a route), and are dropped once none is. Before any event an empty
//! candidate list still fails the run (a routing bug).
//!
//! Flow control across the failure: credits already on their way still arrive, every counter of a
//! port stays consistent (a dropped packet leaves its output buffer as if sent, and a packet lost
//! on the wire or in a failed switch's input buffer has its slot credited back), so that a
//! **repaired** link or switch starts with every credit its far buffers have free. No candidate
//! names a failed port while it is failed. A repaired switch's servers generate again.
//!
//! **End-to-end retransmission** (`faults.retransmit_cycles = R`): a reliable transport (an
//! InfiniBand reliable connection, a NIC with a retransmission timeout) sends a lost packet
//! again. Here the source learns of a loss `R` cycles after it (a notice on an idealised control
//! channel, as acknowledgements are: [`super::RESEND_VC`]), and puts the packet back at the head
//! of its source queue, routed afresh from its source switch under the routing then in force; it
//! keeps its creation cycle, so its latency counts the detour. A packet is sent again at most
//! `faults.retransmit_limit` times, and never to or from a server that has failed: those are
//! given up (`packets_abandoned`). A workload's message thus completes, later, where without
//! retransmission it would wait for ever; a send completes as before (its last packet left), and
//! the resent packets take no new place in the message's accounting. With
//! `router.injection_throttle = "window"` a resent packet keeps the window slot it had, and one
//! given up (or dropped without retransmission) frees it by the same notice.
//!
//! Determinism: notices are messages of the engine, sent `R >= ` the largest link latency ahead so
//! that they respect the lookahead between partitions; the packets a switch gets back in one
//! cycle are queued in an order of their own contents (server, destination, message, retries),
//! not of their arrival, so that any partitioning queues them alike.

use super::packet::{Packet, NIL};
use super::{clear_bit, CreditDue, Msg, NetPartition, Throttle, NO_VC, RESEND_VC};
use crate::engine::{Cycle, Scheduler};
use std::sync::Arc;

/// A loss its source is told of (see the module docs): at cycle `at`, the packet to send again,
/// or (`None`) the window slot of server `src` to free.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Notice {
    at: Cycle,
    src: u32,
    pkt: Option<Packet>,
}

/// What a head with no candidate does (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stranded {
    /// Fail the run: before any failure event, no candidate is a routing's bug.
    Fail,
    /// Drop it and count it (`faults.stranded = "drop"`, and always once no rebuild is pending).
    Drop,
    /// Leave it waiting for the rebuild that is pending (`faults.stranded = "wait"`).
    Wait,
}

impl NetPartition {
    /// What heads with no candidate do from now on (the driver sets it at every break).
    pub fn set_stranded(&mut self, mode: Stranded) {
        self.stranded = mode;
    }

    /// Apply a failure event before cycle `now` is simulated, with the partition parked at a
    /// break ([`crate::engine::RunSpec::break_at`]): `p` is the model after it (the network with the
    /// event's repairs and failures, the routing in force, the pattern on the live servers). Drops
    /// what the failures lose (see the module docs) and counts it as event `event`'s, and lets the
    /// servers the event brings back generate again; returns the packets lost.
    pub fn apply_failure(&mut self, p: Arc<super::ModelParams>, event: usize, now: Cycle) -> u64 {
        let old = std::mem::replace(&mut self.p, p);
        let net = self.p.net.clone();
        let mut lost = 0u64;
        let mut lost_in_network = 0u64;
        let mut gone = Vec::new();
        for li in 0..self.switches.len() {
            let sw = self.switches[li];
            let t = self.t_of[li] as usize;
            if !net.switch_alive(sw) && old.net.switch_alive(sw) {
                // Its own ports: servers first, then its switch-to-switch ports (a switch with fewer
                // servers or ports than the largest has fewer than `np`).
                for port in 0..t + net.switch_ports(sw) {
                    lost_in_network += self.clear_output(li, port, &mut gone);
                    lost_in_network += self.clear_input(li, port, now, &mut gone);
                }
            }
            for port in 0..net.switch_ports(sw) {
                if net.switch_alive(sw) && !net.alive(sw, port as u16) && old.net.alive(sw, port as u16) {
                    lost_in_network += self.clear_output(li, t + port, &mut gone);
                }
            }
            // Servers that stop (their switch failed, or their destination under a permutation)
            // and servers that start again (repaired).
            let mut changed = false;
            for s in 0..t {
                let v = self.first_server[li] + s as u32;
                match (old.server_live(v), self.p.server_live(v)) {
                    (true, false) => lost += self.silence_server(li, s, &mut gone),
                    (false, true) => self.restart_server(li, s, now),
                    _ => continue,
                }
                changed = true;
            }
            if changed {
                self.servers_changed(li);
            }
        }
        // Heads on the wire of a failed link, or arriving at a failed switch: lost, and their slot
        // at the far end is credited back (the link is dead, so the credit only keeps the upstream
        // port's count whole for a repair).
        if let Some((at, mut pending)) = self.parked.take() {
            let before = pending.len();
            let mut back = Vec::new();
            pending.retain(|&(_, lp, msg)| {
                let Msg::Arrival { port, vc, pkt } = msg else { return true };
                let li = self.local_of[lp as usize] as usize;
                let (sw, t) = (self.switches[li], self.t_of[li]);
                if vc == RESEND_VC {
                    // Back to a source that has just failed: given up when it arrives.
                    return true;
                }
                let keep = net.switch_alive(sw) && (port < t || net.alive(sw, port - t));
                if !keep {
                    self.credit_at(li, port, vc, now);
                    back.push(pkt);
                }
                keep
            });
            lost_in_network += (before - pending.len()) as u64;
            gone.extend(back);
            self.parked = Some((at, pending));
        }
        lost += lost_in_network;
        for pkt in gone {
            self.lose(pkt, now);
        }
        if self.stats.event_lost.len() <= event {
            self.stats.event_lost.resize(event + 1, 0);
        }
        self.stats.event_lost[event] += lost;
        if now < self.p.window.1 {
            self.stats.sample_at(now, self.p.sample_cycles).lost_packets += lost_in_network;
        }
        self.stranded = Stranded::Drop;
        self.forget_routes();
        lost
    }

    /// Return the slot of input `port`, VC `vc` of local switch `li` to whoever feeds it, at
    /// cycle `at` (the next cycle simulated, or later).
    fn credit_at(&mut self, li: usize, port: u16, vc: u8, at: Cycle) {
        self.credits_due[at as usize & self.due_mask].push(CreditDue { li: li as u32, port, vc });
        self.credits_pending += 1;
    }

    /// Server `s` of local switch `li` generates again from `now` (its switch repaired, or its
    /// destination): Bernoulli traffic draws its next gap from now; a fixed workload's server
    /// stays done (what it had left was dropped when it stopped).
    fn restart_server(&mut self, li: usize, s: usize, now: Cycle) {
        if let crate::traffic::Injection::Bernoulli { packet_rate } = self.p.injection {
            let si = self.srv_base[li] as usize + s;
            self.next_gen[si] = now + crate::rng::geometric_gap(&mut self.rng_traffic[li], packet_rate) - 1;
        }
    }

    /// Take the routing of `p` (a rebuilt one, or the same model otherwise), forgetting what was
    /// learnt from the previous one.
    pub fn set_routing(&mut self, p: Arc<super::ModelParams>) {
        self.p = p;
        self.forget_routes();
    }

    /// Take the model `p` of a run resumed after failure events (the partition's state, restored
    /// from a checkpoint, has their losses already), with what heads without a route do.
    /// The refusal marks restored with the state were made under this model's routing and stay
    /// (clearing them would route heads the uninterrupted run does not, and draw differently).
    pub fn resume_after_failures(&mut self, p: Arc<super::ModelParams>, mode: Stranded) {
        self.stranded = mode;
        self.p = p;
    }

    /// Forget every head's cached candidates and refusal marks, and selection's kept costs: they
    /// were computed with a routing or a network that has changed.
    fn forget_routes(&mut self) {
        self.run_cache_vc.fill(NO_VC);
        self.head_cache.clear();
        for ip in &mut self.inp {
            ip.refused_until = 0;
        }
        for iv in &mut self.inbuf {
            iv.refused_until = 0;
        }
        for c in &mut self.run_costs {
            *c = Default::default();
        }
    }

    /// Drop every packet in the output buffers of router port `port` of local switch `li` into
    /// `gone`, as if each had left (occupancy and load fall); returns how many.
    fn clear_output(&mut self, li: usize, port: usize, gone: &mut Vec<Packet>) -> u64 {
        let (np, v, w) = (self.np, self.v, self.words);
        let oi = li * np + port;
        let mut n = 0;
        for vc in 0..v {
            let qi = oi * v + vc;
            let k = self.outvc[qi].q.take_all(&mut self.slab, gone);
            // An output VC holds at most `output_buffer` (a u16) packets.
            self.outvc[qi].occ -= k as u16;
            self.outp[oi].load -= k as u32;
            n += k;
        }
        self.outp[oi].vc_mask = 0;
        clear_bit(&mut self.out_mask[li * w..(li + 1) * w], port);
        self.port_changed(li, port);
        n
    }

    /// Drop every packet in the input buffers of router port `port` of local switch `li` (a
    /// failed switch) into `gone`, crediting their slots back from `now` on; returns how many.
    fn clear_input(&mut self, li: usize, port: usize, now: Cycle, gone: &mut Vec<Packet>) -> u64 {
        let (np, w) = (self.np, self.words);
        let pi = li * np + port;
        let mut n = 0;
        for vc in 0..self.in_vcs(li, port) {
            let qi = self.in_vc(li, port, vc);
            let k = self.inbuf[qi].q.take_all(&mut self.slab, gone);
            for _ in 0..k {
                self.credit_at(li, port as u16, vc as u8, now);
            }
            n += k;
            self.inbuf[qi].refused_until = 0;
        }
        self.inp[pi].vc_mask = 0;
        self.inp[pi].refused_until = 0;
        clear_bit(&mut self.in_mask[li * w..(li + 1) * w], port);
        n
    }

    /// Server `s` of local switch `li` stops for good: its source queue is dropped into `gone` and
    /// it never generates again; returns how many packets were dropped.
    fn silence_server(&mut self, li: usize, s: usize, gone: &mut Vec<Packet>) -> u64 {
        let si = self.srv_base[li] as usize + s;
        let n = self.servers[si].queued as u64;
        for _ in 0..n {
            let x = self.srcq.pop_front(&mut self.servers[si].queue);
            let pkt = self.unqueue(li, s, x);
            gone.push(pkt);
        }
        let srv = &mut self.servers[si];
        debug_assert!(srv.queue.is_empty());
        srv.queued = 0;
        if let Some(r) = self.srv_resend.get_mut(si) {
            *r = 0;
        }
        if srv.remaining > 0 {
            srv.remaining = 0;
            self.undrained_servers -= 1;
        }
        self.next_gen[si] = Cycle::MAX;
        self.server_ready[si] = Cycle::MAX;
        n
    }

    /// The per-switch minima of local switch `li`'s server times, after some of them changed.
    fn servers_changed(&mut self, li: usize) {
        let r = self.srv_base[li] as usize..self.srv_base[li + 1] as usize;
        self.next_gen_min[li] = self.next_gen[r.clone()].iter().copied().min().unwrap_or(Cycle::MAX);
        self.inject_at[li] = self.server_ready[r].iter().copied().min().unwrap_or(Cycle::MAX);
    }

    /// Packet `pkt` is lost at `now` (at a failure event, or stranded after one): with
    /// retransmission its source is told and sends it again, unless its retries are spent or its
    /// source or destination has failed; otherwise it is gone (see the module docs).
    fn lose(&mut self, pkt: Packet, now: Cycle) {
        self.last_progress = now;
        self.stats.losses.push((pkt.src, pkt.dst));
        let src_live = self.p.server_live(pkt.src);
        if let Some(r) = self.p.retransmit {
            if pkt.retries < r.limit && src_live && self.p.server_live(pkt.dst) {
                let pkt = Packet { retries: pkt.retries + 1, ..pkt };
                self.notices.push(Notice { at: now + r.after, src: pkt.src, pkt: Some(pkt) });
                return;
            }
            self.stats.abandoned_packets += 1;
        }
        self.in_flight -= 1;
        if self.p.throttle == Throttle::Window && src_live {
            // Its window slot is free again once the source knows.
            let after = self.p.retransmit.map_or(self.p.max_latency(), |r| r.after);
            self.notices.push(Notice { at: now + after, src: pkt.src, pkt: None });
        }
    }

    /// Send this step's notices to the sources (every one at least a link latency ahead: the
    /// engine's lookahead holds).
    #[cold]
    pub(super) fn send_notices(&mut self, out: &mut Scheduler<'_, Msg>) {
        let topo = self.p.net.topology_arc();
        for n in std::mem::take(&mut self.notices) {
            let sw = topo.server_switch(n.src);
            let s = (n.src - topo.first_server(sw)) as u16;
            let msg = match n.pkt {
                Some(pkt) => Msg::Arrival { port: s, vc: RESEND_VC, pkt },
                None => Msg::ack(s),
            };
            out.send(n.at, sw, msg);
        }
    }

    /// Queue the packets sent back to local switch `li`'s servers this cycle (`resent`) at the
    /// head of their source queues, routed afresh, in an order of their own (see the module docs).
    #[cold]
    pub(super) fn requeue_resent(&mut self, li: usize, now: Cycle) {
        let mut back = std::mem::take(&mut self.resent);
        back.sort_unstable_by_key(|&(s, p)| (s, p.dst, p.created, p.op, p.retries));
        // In reverse, so that each source queue starts with its packets in that order.
        for &(s, mut pkt) in back.iter().rev() {
            let si = self.srv_base[li] as usize + s as usize;
            if !self.p.server_live(pkt.src) || !self.p.server_live(pkt.dst) {
                // The source or the destination failed meanwhile.
                self.stats.abandoned_packets += 1;
                self.in_flight -= 1;
                continue;
            }
            let mut route = self.start_route(li, pkt.dst);
            self.p.routing.init(&mut route, &mut self.rng_router[li]);
            pkt.route = route;
            pkt.ready_at = now;
            // Sent again: it holds `retries > 0`, which a plain entry does not, so it stays in
            // the slab.
            let idx = self.slab.insert(pkt);
            let srv = &mut self.servers[si];
            self.srcq.push_front_slab(&mut srv.queue, idx);
            srv.queued += 1;
            self.srv_resend[si] += 1;
            let ready = srv.ready_at();
            self.server_ready[si] = ready;
            self.inject_at[li] = self.inject_at[li].min(ready);
            self.stats.retransmitted_packets += 1;
        }
        self.last_progress = now;
        back.clear();
        self.resent = back;
    }

    /// A head with no candidate after a failure event (see the module docs): drop the head of VC
    /// `vc` of input `pi` (index `li * np + port`) of local switch `li` at `now`, and return its
    /// buffer slot upstream when its tail has arrived, as a grant would.
    #[cold]
    pub(super) fn drop_stranded(&mut self, li: usize, pi: usize, vc: usize, now: Cycle) {
        let (np, w) = (self.np, self.words);
        let qi = self.in_vc(li, pi - li * np, vc);
        let idx = self.inbuf[qi].q.pop(&mut self.slab);
        let pkt = self.slab.remove(idx);
        self.head_left(li, pi - li * np, qi, vc);
        if self.inbuf[qi].q.is_empty() {
            self.inp[pi].vc_mask &= !(1 << vc);
            if self.inp[pi].vc_mask == 0 {
                clear_bit(&mut self.in_mask[li * w..(li + 1) * w], pi - li * np);
            }
        }
        let done = (pkt.ready_at + self.p.packet_phits - 1).max(now) + 1;
        self.credits_due[done as usize & self.due_mask].push(CreditDue {
            li: li as u32,
            port: (pi - li * np) as u16,
            vc: vc as u8,
        });
        self.credits_pending += 1;
        self.lose(pkt, now);
        self.stats.stranded_packets += 1;
        if now < self.p.window.1 {
            self.stats.sample_at(now, self.p.sample_cycles).lost_packets += 1;
        }
        debug_assert_ne!(idx, NIL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::engine::{Outcome, Progress, RunSpec};
    use crate::topology::faults::FaultSet;

    /// The whole 4x4 HyperX (4 servers a switch, load 0.9) in one partition, with `routing`.
    struct Fixture {
        cfg: Config,
        params: Arc<crate::network::ModelParams>,
        net: Arc<crate::topology::Fabric>,
    }

    impl Fixture {
        fn new(seed: u64, routing: &str) -> Self {
            let cfg = crate::config::parse_str(
                &format!(
                    "seed = {seed}\n[topology]\nkind = \"hyperx\"\nsides = [4, 4]\nservers_per_switch = 4\n\
                     [traffic]\nload = 0.9\n[routing]\nalgorithm = \"{routing}\"\n"
                ),
                "test",
                &[],
            )
            .unwrap();
            let net = crate::sim::build_network(&cfg).unwrap();
            let params = Arc::new(crate::sim::build_params(&cfg, net.clone(), &cfg.schedule()).unwrap());
            Fixture { cfg, params, net }
        }
        fn partition(&self) -> NetPartition {
            let n = self.net.num_switches() as u32;
            NetPartition::new(self.params.clone(), (0..n).collect(), Arc::new((0..n).collect()))
        }
        /// The model after `faults`, with the routing rebuilt on it and the routers' VCs.
        fn after(&self, faults: FaultSet) -> Arc<crate::network::ModelParams> {
            let f = Arc::new(crate::topology::Fabric::new(self.net.topology_arc(), &faults));
            let r: Arc<dyn crate::routing::Routing> =
                Arc::from(crate::routing::build(&self.cfg.routing_params(), f.clone()).unwrap());
            let mut p = crate::sim::build::build_params_with(&self.cfg, f, &self.cfg.schedule(), Some(r)).unwrap();
            p.vcs = self.params.vcs;
            Arc::new(p)
        }
        /// Run `part` from `start` to the break at `until` (`Cycle::MAX`: to cycle 4000).
        fn run(&self, part: NetPartition, start: Cycle, until: Cycle) -> (NetPartition, Outcome) {
            let spec = RunSpec {
                end: 4000,
                lookahead: 1,
                max_delay: self.params.max_delay(),
                stop_when_drained: false,
                watchdog: 100_000,
                start,
                pause_at: Cycle::MAX,
                break_at: until,
            };
            let part_of = vec![0u32; self.net.num_switches()];
            let (mut parts, outcome) = crate::engine::run(vec![part], &part_of, &spec, &Progress::default());
            (parts.pop().unwrap(), outcome)
        }
    }

    /// The packets a failed link loses are exactly those in the output buffers feeding it (both
    /// directions) and those on its wire, counted here from the partition's state at the event
    /// (not by the code under test); afterwards the run goes on, and SurePath, whose escape reaches
    /// every destination from any state, strands nothing.
    #[test]
    fn a_failed_link_loses_what_is_on_it_and_in_its_output_buffers() {
        for algorithm in ["minimal", "surepath-polarized"] {
            let fx = Fixture::new(4, algorithm);
            let event = 1500;
            let (mut part, outcome) = fx.run(fx.partition(), 0, event);
            assert!(matches!(outcome, Outcome::Paused { .. }), "{outcome:?}");
            assert_eq!(part.resume_at(), Some(event));
            // Link (switch 0, port 0) to its neighbour (b, q); router ports are servers first.
            let topo = fx.net.topology();
            let (b, q) = topo.neighbour(0, 0).unwrap();
            let t = topo.servers_at(0);
            let out_packets = |p: &NetPartition, sw: u32, port: usize| -> u64 {
                let oi = sw as usize * p.np + port;
                (0..p.v).map(|vc| p.outvc[oi * p.v + vc].q.len(&p.slab) as u64).sum()
            };
            let buffered = out_packets(&part, 0, t) + out_packets(&part, b, t + q as usize);
            let on_wire: Vec<Packet> = part
                .parked
                .as_ref()
                .unwrap()
                .1
                .iter()
                .filter_map(|&(_, lp, m)| match m {
                    Msg::Arrival { port, pkt, .. }
                        if (lp == b && port as usize == t + q as usize) || (lp == 0 && port as usize == t) =>
                    {
                        Some(pkt)
                    }
                    _ => None,
                })
                .collect();
            let expected = buffered + on_wire.len() as u64;
            // Their sources and destinations, as the losses must list them.
            let mut pairs: Vec<(u32, u32)> = on_wire.iter().map(|p| (p.src, p.dst)).collect();
            for (sw, port) in [(0, t), (b, t + q as usize)] {
                let oi = sw as usize * part.np + port;
                for vc in 0..part.v {
                    let q = &part.outvc[oi * part.v + vc].q;
                    pairs.extend(q.iter(&part.slab).map(|i| (part.slab.get(i).src, part.slab.get(i).dst)));
                }
            }
            pairs.sort_unstable();
            assert!(expected > 0, "{algorithm}: at load 0.9 the link carries packets at the event");
            let after = fx.after(FaultSet { links: vec![(0, 0)], switches: vec![] });
            let generated_before = part.stats.generated_packets;
            assert_eq!(part.apply_failure(after, 0, event), expected, "{algorithm}");
            assert_eq!(part.stats.event_lost, vec![expected]);
            let mut losses = part.stats.losses.clone();
            losses.sort_unstable();
            assert_eq!(losses, pairs, "{algorithm}: the losses by source and destination");
            // The rest of the run: packets keep arriving.
            let delivered = part.stats.delivered_packets;
            let (part, outcome) = fx.run(part, event, Cycle::MAX);
            assert!(matches!(outcome, Outcome::Finished { .. }), "{outcome:?}");
            if algorithm == "surepath-polarized" {
                // Its escape reaches every destination from any state.
                assert_eq!(part.stats.stranded_packets, 0, "{algorithm}");
            }
            assert!(part.stats.delivered_packets > delivered && part.stats.generated_packets > generated_before);
        }
    }

    /// Flow control stays whole across a failure and a repair: on every link, per VC, the upstream
    /// credits plus what the downstream input buffer holds, the credits waiting to be sent or on
    /// their way back, and the heads on the wire make the buffer's size, counted from the state
    /// at pauses before the failure, between it and the repair, and after the repair (a repaired
    /// link starts with every credit its buffer has free).
    #[test]
    fn credits_add_up_on_every_link_across_a_failure_and_a_repair() {
        let fx = Fixture::new(9, "surepath-polarized");
        let topo = fx.net.topology_arc();
        let n = fx.net.num_switches();
        // Switch 0's link on port 0 and switch 5 fail at 1000; both come back at 1700.
        let failed = fx.after(FaultSet { links: vec![(0, 0)], switches: vec![5] });
        let whole = fx.after(FaultSet::default());
        let mut part = fx.partition();
        let mut start = 0;
        for (pause, change) in [(700, None), (1000, Some(failed)), (1300, None), (1700, Some(whole)), (2400, None)] {
            let (p, outcome) = fx.run(part, start, pause);
            assert!(matches!(outcome, Outcome::Paused { .. }), "{outcome:?}");
            part = p;
            start = pause;
            if let Some(p) = change {
                part.apply_failure(p, 0, pause);
            }
            let pending = &part.parked.as_ref().unwrap().1;
            let mut checked = 0;
            for s in 0..n as u32 {
                let t = topo.servers_at(s);
                for p in 0..topo.switch_ports(s) as u16 {
                    let (o, q) = topo.neighbour(s, p).unwrap();
                    let (up, down) = (t + p as usize, topo.servers_at(o) + q as usize);
                    for vc in 0..part.v {
                        let cred = part.outvc[(s as usize * part.np + up) * part.v + vc].cred as usize;
                        let held = part.inbuf[part.in_vc(o as usize, down, vc)].q.len(&part.slab) as usize;
                        let due = part
                            .credits_due
                            .iter()
                            .flatten()
                            .filter(|c| c.li == o && c.port as usize == down && c.vc as usize == vc)
                            .count();
                        let flying = pending
                            .iter()
                            .filter(|&&(_, lp, m)| match m {
                                Msg::Credit { port, vc: c, .. } => lp == s && port as usize == up && c as usize == vc,
                                Msg::Arrival { port, vc: c, .. } => {
                                    lp == o && port as usize == down && c as usize == vc
                                }
                            })
                            .count();
                        assert_eq!(
                            cred + held + due + flying,
                            fx.params.input_buffer as usize,
                            "link ({s}, {p}) VC {vc} at cycle {pause}: credits {cred}, held {held}, due {due}, flying {flying}"
                        );
                        checked += 1;
                    }
                }
            }
            assert!(checked > 0);
        }
        assert!(part.stats.event_lost.iter().sum::<u64>() > 0, "the failure lost packets");
    }
}
