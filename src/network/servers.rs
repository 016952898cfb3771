//! Servers: packet generation (Bernoulli gaps or a fixed workload) into bounded source queues,
//! injection into the switch's server ports with credits, and delivery (ejection) statistics.

use super::packet::Packet;
use super::{Msg, NetPartition};
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
        let mut next = Cycle::MAX;
        for s in 0..t {
            let si = base + s;
            let ready = self.server_ready[si];
            if ready > now {
                next = next.min(ready);
                continue;
            }
            let srv = &mut self.servers[si];
            let idx = srv.queue.pop(&self.slab);
            srv.credits -= 1;
            srv.link_free = now + plen;
            let ready = srv.ready_at();
            self.server_ready[si] = ready;
            next = next.min(ready);
            let pkt = self.slab.remove(idx);
            if self.in_window(now) {
                self.server_injected[si] += plen;
            }
            self.stats.record_injection(now, plen, self.p.sample_cycles, self.p.window.1);
            self.last_progress = now;
            let lat = self.lat(li * self.np + s);
            out.send(now + lat, sw, Msg::Arrival { port: s as u16, vc: 0, pkt });
        }
        self.inject_at[li] = next;
    }

    fn generate(&mut self, li: usize, s: usize, now: Cycle) {
        let si = self.srv_base[li] as usize + s;
        let sw = self.switches[li];
        let srv = self.servers[si];
        let room = srv.queue.len() < self.p.source_queue;
        match self.p.injection {
            Injection::Bernoulli { packet_rate } => {
                self.next_gen[si] = now + geometric_gap(&mut self.rng_traffic[li], packet_rate);
                if !room {
                    self.stats.suppressed_packets += 1;
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
        let dst = self.p.pattern.destination(src, &mut self.rng_traffic[li]);
        let dst_sw = self.server_switch(dst);
        if let Some(c) = &self.p.component {
            // `faults.unreachable = "drop"`: no packet to another part of a split network.
            if c[sw as usize] != c[dst_sw as usize] {
                self.stats.dropped_packets += 1;
                return;
            }
        }
        let mut route = RouteState { src: sw, dst: dst_sw, ..Default::default() };
        self.p.routing.init(&mut route, &mut self.rng_router[li]);
        let idx = self.slab.insert(Packet { src, dst, created: now, ready_at: now, route });
        self.servers[si].queue.push(&mut self.slab, idx);
        let ready = self.servers[si].ready_at();
        self.server_ready[si] = ready;
        self.inject_at[li] = self.inject_at[li].min(ready);
        self.in_flight += 1;
        self.stats.generated_packets += 1;
    }
}
