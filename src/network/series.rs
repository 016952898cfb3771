//! The per-port-class time series of `output.link_series` ([`crate::metrics::LinkSeries`]): what a
//! user reads to explain a dip in the accepted load (did packets go non-minimal, which class of
//! links filled up).
//!
//! Off, it costs the router one test of a flag per packet sent over a switch-to-switch link and per
//! packet ejected, and the partition one comparison per cycle ([`NetPartition::next_census`] is
//! then never reached). On, the counters of a packet are kept out of line, and the buffers are
//! counted once per sample interval (a cold walk over the partition's ports).
//!
//! **When the buffers are counted.** The census of interval `k` is the state at the start of cycle
//! `b = (k + 1) sc`: taken at the first step at or after `b`, or at the end of a window that ends at
//! or after `b`, whichever comes first. No switch steps between `b` and then (a window ends after
//! its last cycle has stepped; the engine jumps over cycles only when every buffer is empty), so
//! the state is that of cycle `b` whatever the windows, the threads and the ranks.

use super::packet::Packet;
use super::NetPartition;
use crate::engine::Cycle;
use crate::metrics::LinkSeries;
use crate::topology::SwitchId;

impl NetPartition {
    /// The class of every local switch-to-switch port (`li * r + port`) and an empty series, when
    /// `output.link_series` is on; nothing otherwise.
    pub(super) fn start_link_series(&mut self) {
        if !self.p.link_series {
            return;
        }
        let topo = self.p.net.topology();
        let classes = topo.series_classes().len().max(1);
        let r = self.r;
        let mut class = vec![0u16; self.switches.len() * r];
        for (li, &sw) in self.switches.iter().enumerate() {
            for port in 0..topo.switch_ports(sw) {
                class[li * r + port] = topo.series_class(sw, port as u16);
                debug_assert!((class[li * r + port] as usize) < classes, "port class out of range");
            }
        }
        self.port_class = class;
        self.stats.link_series = LinkSeries::new(classes);
        self.next_census = self.p.sample_cycles;
    }

    /// After a restore at `resume_at` (a checkpoint): the series shaped again (a partition that
    /// does not carry the run's sums starts from zero), and the next census after `resume_at`,
    /// whose own was taken at the end of the window the checkpoint was made at.
    pub(super) fn resume_link_series(&mut self, resume_at: Cycle) {
        if !self.p.link_series {
            return;
        }
        if self.stats.link_series.classes == 0 {
            self.stats.link_series = LinkSeries::new(self.p.net.topology().series_classes().len().max(1));
        }
        let sc = self.p.sample_cycles;
        self.next_census = (resume_at / sc + 1) * sc;
    }

    /// A packet's head leaves switch-to-switch port `port` of local switch `li` at `now`. Cold:
    /// kept out of the link stage's code, which only tests the flag.
    #[cold]
    #[inline(never)]
    pub(super) fn count_link_phits(&mut self, li: usize, port: usize, now: Cycle) {
        let class = self.port_class[li * self.r + port] as usize;
        self.stats.link_series.add_phits(class, now, self.p.packet_phits, self.p.sample_cycles);
    }

    /// `pkt` leaves its last switch, local switch `li`, at `now`: minimal when its switch-to-switch
    /// hops are at most the distance from its source switch on the network in force.
    #[cold]
    #[inline(never)]
    pub(super) fn count_ejection(&mut self, li: usize, pkt: &Packet, now: Cycle) {
        let src: SwitchId = self.server_switch(pkt.src);
        let minimal = pkt.route.hops as u32 <= self.p.net.distance(src, self.switches[li]);
        self.stats.link_series.add_ejection((now / self.p.sample_cycles) as usize, minimal);
    }

    /// The census of every interval that ends at or before `upto` and has none yet: packets in the
    /// input and output buffers of the live switch-to-switch ports, per class (see the module docs
    /// for why the state now is the state at each such interval's end).
    #[cold]
    pub(super) fn census(&mut self, upto: Cycle) {
        let sc = self.p.sample_cycles;
        if self.next_census > upto {
            return;
        }
        let classes = self.stats.link_series.classes;
        let (np, v, r) = (self.np, self.v, self.r);
        let mut buffered = vec![0u64; classes];
        let mut ports = vec![0u64; classes];
        let net = &self.p.net;
        for (li, &sw) in self.switches.iter().enumerate() {
            if !net.switch_alive(sw) {
                continue;
            }
            let t = self.t_of[li] as usize;
            for port in 0..net.switch_ports(sw) {
                if net.neighbour(sw, port as u16).is_none() {
                    continue;
                }
                let c = self.port_class[li * r + port] as usize;
                let (pi, qi) = (li * np + t + port, self.in_vc(li, t + port, 0));
                let held: u32 = (0..v)
                    .map(|vc| self.inbuf[qi + vc].q.len(&self.slab) + self.outvc[pi * v + vc].q.len(&self.slab))
                    .sum();
                buffered[c] += held as u64;
                ports[c] += 1;
            }
        }
        while self.next_census <= upto {
            let k = (self.next_census / sc - 1) as usize;
            for c in 0..classes {
                self.stats.link_series.add_census(k, c, buffered[c], ports[c]);
            }
            self.next_census += sc;
        }
    }
}
