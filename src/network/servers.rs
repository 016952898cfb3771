//! Servers: packet generation (Bernoulli gaps or a fixed workload) into bounded source queues,
//! injection into the switch's server ports with credits, and delivery (ejection) statistics.

use super::packet::Packet;
use super::source_queue::{Queued, SourcePool};
use super::{InjectionVcs, Msg, NetPartition, Throttle};
use crate::engine::{Cycle, Scheduler};
use crate::rng::geometric_gap;
use crate::routing::RouteState;
use crate::traffic::Injection;

impl NetPartition {
    pub(super) fn deliver_to_server(&mut self, li: usize, port: usize, pkt: &Packet, tail: Cycle) {
        let plen = self.p.packet_phits;
        let lat = tail - pkt.created;
        let hops = pkt.route.hops as u64 + 1;
        self.in_flight -= 1;
        self.stats.last_delivery = self.stats.last_delivery.max(tail);
        if self.in_window(tail) {
            self.stats.delivered_packets += 1;
            self.stats.delivered_phits += plen;
            self.stats.latency_sum += lat;
            self.stats.hops_sum += hops;
            self.stats.record_latency(lat);
            self.server_accepted[self.srv_base[li] as usize + port] += plen;
        }
        self.stats.record_delivery(tail, plen, lat, self.p.sample_cycles, self.p.window.1);
        if let Some(tasks) = self.tasks.as_mut() {
            tasks.arrival(self.srv_base[li] as usize + port, pkt, tail);
        }
        if tail >= self.window_end {
            let server = self.srv_base[li] + port as u32;
            self.late.push(super::LateDelivery { tail, latency: lat, hops: hops as u32, server });
        }
    }

    /// Take back out of the statistics the deliveries whose tail had not arrived by `stop`, the
    /// window end a run was stopped at: the statistics count a packet when it leaves its last
    /// switch, at its tail's cycle, which may lie beyond the end of the last window; a stopped run
    /// counts what a complete run of the same cycles counts. What was counted for them is taken
    /// out of the window counters and the time series (their delivery and the phits that arrive
    /// from `stop` on). Called once, after the run, never on a run that goes on.
    pub fn uncount_late(&mut self, stop: Cycle) {
        let (plen, sc, limit) = (self.p.packet_phits, self.p.sample_cycles, self.p.window.1);
        for d in std::mem::take(&mut self.late) {
            debug_assert!(d.tail >= stop, "a delivery inside the last window is final");
            if self.in_window(d.tail) {
                self.stats.delivered_packets -= 1;
                self.stats.delivered_phits -= plen;
                self.stats.latency_sum -= d.latency;
                self.stats.hops_sum -= d.hops as u64;
                let b = (d.latency as usize).min(crate::metrics::LATENCY_HIST_MAX - 1);
                self.stats.latency_hist[b] -= 1;
                self.server_accepted[d.server as usize] -= plen;
            }
            if d.tail < limit {
                let s = self.stats.sample_at(d.tail, sc);
                s.delivered_packets -= 1;
                s.latency_sum -= d.latency;
            }
            // The phits that had arrived before `stop` stay.
            let first = (d.tail + 1 - plen).max(stop);
            crate::metrics::spread_phits(first, d.tail + 1 - first, sc, limit, |k, n| {
                self.stats.sample_at(k * sc, sc).accepted_phits -= n
            });
        }
        // The last delivery before the stop is not known; the completion time of an interrupted
        // run is not reported (see `sim::collect`).
        self.stats.last_delivery = self.stats.last_delivery.min(stop.saturating_sub(1));
    }

    /// With `router.injection_throttle = "window"`: the acknowledgement of `pkt`, whose tail reaches
    /// its server (at switch `li`) at `tail`, to its source switch ([`super::Msg::ack`]), after the
    /// zero-load time of a head over the shortest distance back ([`super::ModelParams::ack_delay`]).
    /// Sent on an idealised control channel: no link bandwidth, no buffers. Kept out of line: the
    /// ejection loop it is called from stays as compact with the window off.
    #[inline(never)]
    pub(super) fn send_ack(&self, li: usize, pkt: &Packet, tail: Cycle, out: &mut Scheduler<'_, Msg>) {
        let src_sw = self.server_switch(pkt.src);
        let server = match pkt.src.checked_rem(self.uniform_t) {
            Some(s) => s,
            None => pkt.src - self.p.net.topology().first_server(src_sw),
        };
        let hops = self.p.net.distance(self.switches[li], src_sw) as Cycle;
        out.send(tail + self.p.ack_delay(hops), src_sw, Msg::ack(server as u16));
    }

    /// Generation and injection of the servers of local switch `li`.
    pub(super) fn server_stage(&mut self, li: usize, now: Cycle, out: &mut Scheduler<'_, Msg>) {
        let (t, base) = (self.t_of[li] as usize, self.srv_base[li] as usize);
        let sw = self.switches[li];
        if now >= self.next_gen_min[li] {
            let mut next_min = Cycle::MAX;
            for s in 0..t {
                let si = base + s;
                while self.next_gen[si] <= now {
                    self.generate(li, s, now);
                    if self.next_gen[si] == Cycle::MAX {
                        break;
                    }
                }
                next_min = next_min.min(self.next_gen[si]);
            }
            self.next_gen_min[li] = next_min;
        }
        if self.inject_at[li] > now {
            return;
        }
        let plen = self.p.packet_phits;
        let throttle = self.p.throttle;
        // `switch` throttling: one verdict for every server of the switch this cycle.
        let switch_open = throttle != Throttle::Switch || self.switch_space_free(li, now);
        let mut next = Cycle::MAX;
        for s in 0..t {
            let si = base + s;
            let ready = self.server_ready[si];
            if ready > now {
                next = next.min(ready);
                continue;
            }
            if throttle != Throttle::Off {
                let open = match throttle {
                    Throttle::Switch => switch_open,
                    Throttle::Window => {
                        // A packet sent again keeps the slot it had (`failures`).
                        if self.srv_outstanding[si] >= self.p.injection_window && !self.resending(si) {
                            // Window full (a generation or a credit made it look ready): wait for
                            // an acknowledgement, whose arrival re-evaluates the server.
                            self.server_ready[si] = Cycle::MAX;
                            continue;
                        }
                        true
                    }
                    _ => {
                        let head = self.srcq.front(&self.servers[si].queue).expect("a ready server has a packet");
                        let route = self.queued_packet(li, s, head).route;
                        self.route_space_free(li, route, now)
                    }
                };
                if !open {
                    // Held back: ask again next cycle (the space it waits for frees without any
                    // event of this server's).
                    next = next.min(now + 1);
                    continue;
                }
            }
            let vc = match self.p.injection_vcs {
                InjectionVcs::Zero => {
                    self.servers[si].credits -= 1;
                    0
                }
                InjectionVcs::Any => {
                    // The lowest VC with a credit, as CAMINOS's servers choose; `credits` counts
                    // the VCs that have one.
                    let v = self.v;
                    let cred = &mut self.srv_vc_cred[si * v..(si + 1) * v];
                    let vc = cred.iter().position(|&c| c > 0).expect("a server with credits has a VC with one");
                    cred[vc] -= 1;
                    if cred[vc] == 0 {
                        self.servers[si].credits -= 1;
                    }
                    vc
                }
            };
            // A packet sent again after a loss (`failures`) is not a new one of its message, and
            // holds a window slot already.
            let resent = self.resending(si);
            if resent {
                self.srv_resend[si] -= 1;
            }
            let srv = &mut self.servers[si];
            let head = self.srcq.pop_front(&mut srv.queue);
            srv.queued -= 1;
            srv.link_free = now + plen;
            let mut ready = srv.ready_at();
            if throttle == Throttle::Window && !resent && self.window_filled(si) {
                ready = Cycle::MAX;
            }
            self.server_ready[si] = ready;
            next = next.min(ready);
            let pkt = self.unqueue(li, s, head);
            if let Some(tasks) = self.tasks.as_mut() {
                if !resent {
                    tasks.injected(si, now);
                }
                if tasks.wants_to_generate(si) {
                    // Its next packet, made next cycle (see `generate`).
                    self.next_gen[si] = now + 1;
                    self.next_gen_min[li] = self.next_gen_min[li].min(now + 1);
                }
            }
            if self.in_window(now) {
                self.server_injected[si] += plen;
            }
            self.stats.record_injection(now, plen, self.p.sample_cycles, self.p.window.1);
            self.last_progress = now;
            let lat = self.lat(li * self.np + s);
            out.send(now + lat, sw, Msg::Arrival { port: s as u16, vc: vc as u8, pkt });
        }
        self.inject_at[li] = next;
    }

    /// Put `pkt` at the back of the source queue of server `s` of local switch `li`: as a plain
    /// entry where it is exactly the packet [`NetPartition::unqueue`] makes of one (its own source,
    /// ready from its creation, and the route state `init` gives every packet, as with most
    /// routings), else in the slab.
    pub(super) fn enqueue(&mut self, li: usize, s: usize, pkt: Packet) {
        let si = self.srv_base[li] as usize + s;
        let x = if self.is_plain(li, s, &pkt) {
            Queued::Plain { dst: pkt.dst, created: pkt.created }
        } else {
            Queued::Slab(self.slab.insert(pkt))
        };
        self.srcq.push_back(&mut self.servers[si].queue, x);
    }

    /// Whether `pkt`, queued at server `s` of local switch `li`, is what [`NetPartition::unqueue`]
    /// makes of a plain entry.
    #[inline]
    fn is_plain(&self, li: usize, s: usize, pkt: &Packet) -> bool {
        pkt.src == self.first_server[li] + s as u32
            && pkt.ready_at == pkt.created
            && pkt.op == 0
            && pkt.retries == 0
            && SourcePool::plain_fits(pkt.dst)
            && pkt.route == self.start_route(li, pkt.dst)
    }

    /// The packet a source-queue entry of server `s` of local switch `li` stands for, taking it out
    /// of the slab if it is there.
    #[inline]
    pub(super) fn unqueue(&mut self, li: usize, s: usize, x: Queued) -> Packet {
        match x {
            Queued::Slab(i) => self.slab.remove(i),
            Queued::Plain { .. } => self.queued_packet(li, s, x),
        }
    }

    /// The packet a source-queue entry of server `s` of local switch `li` stands for, left where it
    /// is: a plain entry's is its own source, ready from its creation, with the route state every
    /// packet starts with ([`NetPartition::start_route`]).
    #[inline]
    pub(super) fn queued_packet(&self, li: usize, s: usize, x: Queued) -> Packet {
        match x {
            Queued::Plain { dst, created } => Packet {
                src: self.first_server[li] + s as u32,
                dst,
                created,
                ready_at: created,
                route: self.start_route(li, dst),
                op: 0,
                retries: 0,
            },
            Queued::Slab(i) => *self.slab.get(i),
        }
    }

    /// Whether server `si`'s next packet is one it sends again after a loss (`failures`): only
    /// with `faults.retransmit_cycles`, one test of an empty vector otherwise.
    #[inline]
    fn resending(&self, si: usize) -> bool {
        self.srv_resend.get(si).is_some_and(|&n| n > 0)
    }

    /// With `router.injection_throttle = "window"`: server `si` injected a packet, outstanding from
    /// now (its head leaves the server) until its acknowledgement; whether its window is now full.
    #[inline(never)]
    fn window_filled(&mut self, si: usize) -> bool {
        let o = &mut self.srv_outstanding[si];
        *o += 1;
        debug_assert!(*o <= self.p.injection_window, "server {si}: {o} packets outstanding");
        *o == self.p.injection_window
    }

    /// `switch` throttling: whether the switch-to-switch output ports of local switch `li` have,
    /// over all their VCs, a free fraction of at least `router.injection_threshold` of their
    /// space (output buffer plus the downstream input buffer, counted as [`super::OutPort::load`]:
    /// occupancy plus consumed credits).
    fn switch_space_free(&self, li: usize, now: Cycle) -> bool {
        let (np, t) = (self.np, self.t_of[li] as usize);
        let per_port = self.v as u64 * (self.p.output_buffer as u64 + self.p.input_buffer as u64);
        let (mut used, mut cap) = (0u64, 0u64);
        for p in 0..self.r {
            // Unconnected (or failed) ports carry nothing and are not counted.
            if self.nbr[li * self.r + p].0 != crate::topology::SwitchId::MAX {
                used += self.outp[li * np + t + p].load_at(now) as u64;
                cap += per_port;
            }
        }
        cap == 0 || (cap - used.min(cap)) as f64 >= self.p.injection_threshold * cap as f64
    }

    /// `route` throttling (DRIL's useful channels): whether the routing candidates of a packet with
    /// route state `route` at its source switch `li` that stay outside the escape subnetwork (all
    /// of them if none does) have a free fraction of at least `router.injection_threshold` of their space (output
    /// VC plus the downstream input VC). A packet for a server of its own switch always may.
    fn route_space_free(&mut self, li: usize, route: RouteState, now: Cycle) -> bool {
        let (np, v, t) = (self.np, self.v, self.t_of[li] as usize);
        let sw = self.switches[li];
        if route.dst == sw {
            return true;
        }
        self.cands.clear();
        self.p.routing.candidates(sw, &route, &mut self.cands);
        let out_cap = self.p.output_buffer as u64;
        let per_vc = out_cap + self.p.input_buffer as u64;
        let any_routing = self.cands.iter().any(|c| !c.escape);
        let (mut free, mut cap) = (0u64, 0u64);
        for c in self.cands.iter().filter(|c| !(any_routing && c.escape)) {
            let pi = li * np + t + c.port as usize;
            let ov = &self.outvc[pi * v + c.vc as usize];
            let occ = self.outp[pi].occupancy(ov, c.vc as usize, now) as u64;
            free += out_cap.saturating_sub(occ) + ov.cred as u64;
            cap += per_vc;
        }
        cap == 0 || free as f64 >= self.p.injection_threshold * cap as f64
    }

    fn generate(&mut self, li: usize, s: usize, now: Cycle) {
        let si = self.srv_base[li] as usize + s;
        let sw = self.switches[li];
        let srv = self.servers[si];
        let room = srv.queued < self.p.source_queue;
        match self.p.injection {
            Injection::Bernoulli { packet_rate } => {
                self.next_gen[si] = now + geometric_gap(&mut self.rng_traffic[li], packet_rate);
                if !room {
                    self.stats.suppressed_packets += 1;
                    return;
                }
            }
            Injection::Workload => {
                // A packet is made when the source queue is empty, and the next when this one is
                // injected (`server_stage` wakes the server again): the message waits in the
                // task's memory, not as packets, so a workload holds only the packets in the
                // network. The timing is that of a queue filled at once: the next packet is made
                // the cycle after an injection, and the link takes it `P >= 1` cycles after that
                // injection at the earliest.
                self.next_gen[si] = Cycle::MAX;
                let tasks = self.tasks.as_ref().expect("a workload run has tasks");
                if srv.queued > 0 || !tasks.wants_to_generate(si) {
                    return;
                }
            }
            Injection::Fixed { .. } => {
                if !room {
                    // Try again next cycle; the queue drains at one packet per P cycles at most.
                    self.next_gen[si] = now + 1;
                    return;
                }
                let left = srv.remaining - 1;
                self.servers[si].remaining = left;
                self.next_gen[si] = if left == 0 { Cycle::MAX } else { now + 1 };
                if left == 0 {
                    self.undrained_servers -= 1;
                }
            }
        }
        let src = self.first_server[li] + s as u32;
        let (mut created, mut op) = (now, 0);
        let dst = if let Some(tasks) = self.tasks.as_mut() {
            let (dst, start, recv) = tasks.next_packet(si).expect("a server woken by its task has a packet to send");
            (created, op) = (start, recv);
            dst
        } else if self.srv_generated.is_empty() {
            self.p.pattern.destination(src, &mut self.rng_traffic[li])
        } else {
            let k = self.srv_generated[si];
            self.srv_generated[si] = k + 1;
            self.p.pattern.destination_nth(src, k, &mut self.rng_traffic[li])
        };
        let dst_sw = self.server_switch(dst);
        if let Some(c) = &self.p.component {
            // `faults.unreachable = "drop"`: no packet to another part of a split network.
            if c[sw as usize] != c[dst_sw as usize] {
                self.stats.dropped_packets += 1;
                return;
            }
        }
        let mut route = self.start_route(li, dst);
        debug_assert_eq!(route.dst, dst_sw);
        self.p.routing.init(&mut route, &mut self.rng_router[li]);
        self.enqueue(li, s, Packet { src, dst, created, ready_at: now, route, op, retries: 0 });
        self.servers[si].queued += 1;
        let ready = self.servers[si].ready_at();
        self.server_ready[si] = ready;
        self.inject_at[li] = self.inject_at[li].min(ready);
        self.in_flight += 1;
        self.stats.generated_packets += 1;
    }
}
