//! Statistics gathered by partitions, merged deterministically (integer sums), and the run summary.
//!
//! Definitions (architecture spec, property 6; SurePath section 4): accepted load is phits whose
//! packet's tail reached its destination server inside the measurement window, per cycle per
//! server; latency runs from packet creation at the source server to the arrival of its last phit at
//! the destination server (source queueing included); hops are switch traversals (a packet crossing
//! one switch, the source and destination switches included); Jain's index is over per-server
//! injected phits in the window.

use serde::{Deserialize, Serialize};

/// Latencies above this are counted in the last histogram bin.
pub const LATENCY_HIST_MAX: usize = 1 << 20;

/// One time-series sample: what happened in `[cycle - interval, cycle)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// End of the interval (cycles).
    pub cycle: u64,
    /// Phits injected into the network by servers in the interval: a server link sends one phit per
    /// cycle, so a packet's phits are split between the intervals they are sent in.
    pub injected_phits: u64,
    /// Packets whose head left their server in the interval (what the in-flight count rises by).
    pub injected_packets: u64,
    /// Phits that arrived at their destination server in the interval (one per cycle per server, the
    /// `P` phits of a packet over the `P` cycles up to its tail's arrival).
    pub accepted_phits: u64,
    /// Packets delivered in the interval.
    pub delivered_packets: u64,
    /// Sum of latencies of those packets (cycles).
    pub latency_sum: u64,
    /// Packets injected into the network minus packets delivered, since the start, at the end of the
    /// interval (packets still in source queues are not counted), less those lost.
    pub in_flight: i64,
    /// Packets lost in the network in the interval: dropped at a failure event (on a failed link or
    /// in a failed switch) or stranded after one (no live route); see `crate::network::failures`.
    #[serde(default)]
    pub lost_packets: u64,
}

/// The per-port-class time series of `output.link_series` (empty when off): for each sample
/// interval `k` (cycles `[k sc, (k + 1) sc)`) and each class of switch-to-switch output port
/// ([`crate::topology::Topology::series_classes`]),
/// - **phits** sent over the ports of the class in the interval, one per cycle as the other phit
///   series count (a packet's `P` phits leave over the `P` cycles from its head's departure);
/// - **buffered** packets in the input and output VC buffers of the class's ports, and the number
///   of **ports** of the class that are live, both at the interval's end (the state at the start of
///   cycle `(k + 1) sc`, before that cycle's arrivals are applied); the mean occupancy of a port is
///   `buffered / ports`;
///
/// and, over all classes, the packets that left their last switch for their server in the interval
/// (**ejected**) and those of them whose path was **minimal**: switch-to-switch hops at most the
/// distance between their source and destination switches on the network in force at that moment
/// (after a failure event the distances grow; a packet that passed before a link failed may be
/// shorter than the new distance, and is minimal).
///
/// Every word is an integer sum over partitions (ports belong to the partition of their switch), so
/// merged series are identical for any partitioning. Interval `k` is `stride()` words from `k *
/// stride()`: phits per class, buffered per class, ports per class, minimal, ejected.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkSeries {
    /// Port classes (0: the series is off).
    pub classes: usize,
    /// The counters, interval after interval.
    pub words: Vec<u64>,
}

impl LinkSeries {
    /// An empty series of `classes` port classes.
    pub fn new(classes: usize) -> Self {
        LinkSeries { classes, words: Vec::new() }
    }

    /// Words per interval.
    pub fn stride(&self) -> usize {
        3 * self.classes + 2
    }

    /// Intervals recorded (some of them maybe partly).
    pub fn intervals(&self) -> usize {
        self.words.len().checked_div(self.stride()).unwrap_or(0)
    }

    /// The words of interval `k`, the series grown with zeros to reach it.
    #[inline]
    fn row(&mut self, k: usize) -> &mut [u64] {
        let w = self.stride();
        if self.words.len() < (k + 1) * w {
            self.words.resize((k + 1) * w, 0);
        }
        &mut self.words[k * w..(k + 1) * w]
    }

    /// A packet of `phits` phits whose head leaves a port of class `class` at `first` (one phit per
    /// cycle, split among the intervals of `sample_cycles` they leave in).
    #[inline]
    pub fn add_phits(&mut self, class: usize, first: u64, phits: u64, sample_cycles: u64) {
        spread_phits(first, phits, sample_cycles, u64::MAX, |k, n| self.row(k as usize)[class] += n);
    }

    /// At the end of interval `k`: `buffered` packets in the buffers of `ports` live ports of class
    /// `class`.
    pub fn add_census(&mut self, k: usize, class: usize, buffered: u64, ports: u64) {
        let c = self.classes;
        let row = self.row(k);
        row[c + class] += buffered;
        row[2 * c + class] += ports;
    }

    /// A packet left its last switch in interval `k`, over a minimal path or not.
    #[inline]
    pub fn add_ejection(&mut self, k: usize, minimal: bool) {
        let c = self.classes;
        let row = self.row(k);
        row[3 * c] += minimal as u64;
        row[3 * c + 1] += 1;
    }

    /// Add `o` into `self` (sums: any order of merging gives the same).
    pub fn merge(&mut self, o: &LinkSeries) {
        if o.classes == 0 {
            return;
        }
        if self.classes == 0 {
            self.classes = o.classes;
        }
        assert_eq!(self.classes, o.classes, "link series of different port classes merged");
        add_counts(&mut self.words, &o.words);
    }

    /// Phits of class `class` in interval `k` (0 past the end).
    pub fn phits(&self, k: usize, class: usize) -> u64 {
        self.word(k, class)
    }
    /// Packets buffered at ports of class `class` at the end of interval `k`.
    pub fn buffered(&self, k: usize, class: usize) -> u64 {
        self.word(k, self.classes + class)
    }
    /// Live ports of class `class` at the end of interval `k`.
    pub fn ports(&self, k: usize, class: usize) -> u64 {
        self.word(k, 2 * self.classes + class)
    }
    /// Packets ejected in interval `k` over a minimal path.
    pub fn minimal(&self, k: usize) -> u64 {
        self.word(k, 3 * self.classes)
    }
    /// Packets ejected in interval `k`.
    pub fn ejected(&self, k: usize) -> u64 {
        self.word(k, 3 * self.classes + 1)
    }
    fn word(&self, k: usize, i: usize) -> u64 {
        self.words.get(k * self.stride() + i).copied().unwrap_or(0)
    }
}

/// Where [`SampleSink`]s send finished intervals: `(partition index, sample of that partition)`.
pub type SampleSender = crossbeam::channel::Sender<(u32, Sample)>;

/// Hands one partition's finished time-series intervals to a collector thread while the run goes on
/// (the HDF5 writer merges them across partitions). Interval `k` covers `[k * sc, (k + 1) * sc)`; it
/// is final once the partition has simulated every cycle before `(k + 1) * sc`, because every event
/// is recorded at its own cycle or later (deliveries count at the tail's arrival, after the send).
/// Sending is one small `Copy` message per interval; nothing is done for intervals not yet final.
#[derive(Debug)]
pub struct SampleSink {
    part: u32,
    tx: SampleSender,
    sent: u64,
}

impl SampleSink {
    /// A sink for partition `part`.
    pub fn new(part: u32, tx: SampleSender) -> Self {
        SampleSink { part, tx, sent: 0 }
    }

    /// Send every interval that ends at or before `end` and has not been sent yet (intervals with no
    /// event are sent as zeros, with their `cycle` set). A collector that hung up is ignored.
    pub fn send_until(&mut self, end: u64, sample_cycles: u64, samples: &[Sample]) {
        let finished = end / sample_cycles;
        while self.sent < finished {
            let k = self.sent;
            let mut s = samples.get(k as usize).copied().unwrap_or_default();
            s.cycle = (k + 1) * sample_cycles;
            let _ = self.tx.send((self.part, s));
            self.sent += 1;
        }
    }

    /// Intervals sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }
}

/// The counters of a [`Sample`] that [`SampleRelay`] sums over ranks, one word each.
const RELAY_WORDS: usize = 7;

/// Fewest windows between two reductions of a [`SampleRelay`]: with long windows (and short sample
/// intervals) an interval finishes in almost every window, and one collective for several of them
/// costs the same as one for each.
pub const RELAY_EVERY_WINDOWS: u64 = 8;

/// Streams the time series of a run on several processes (MPI ranks) to rank 0 while it goes on,
/// where [`SampleSink`]s alone cannot reach: the collector (the HDF5 writer) runs in rank 0's
/// process only.
///
/// On every rank, the partitions' sinks send to the relay's channel as they would to the collector.
/// The relay is called at every window end, on the thread that talks to the other ranks (see
/// `engine::World::run_observed`). Once at least [`RELAY_EVERY_WINDOWS`] windows have passed since
/// its last reduction and some interval has become final (interval `k` is final when the window
/// end reaches `(k + 1) * sample_cycles`: every partition has sent it before the window ended), it
/// sums its partitions' contributions to each final interval, and all ranks add those sums up on
/// rank 0 in one reduction of `RELAY_WORDS` integers per interval. Rank 0 sends every merged
/// interval, once and in order, to the collector as partition 0.
///
/// Determinism: the decision to reduce depends only on the window ends and the sample interval,
/// which every rank sees alike, so every rank joins the same reductions; the counters are integers,
/// so the sums equal the single-process merge whatever the order of ranks and partitions.
#[derive(Debug)]
pub struct SampleRelay {
    rx: crossbeam::channel::Receiver<(u32, Sample)>,
    /// Partitions of this rank: contributions expected per interval.
    parts: u32,
    sample_cycles: u64,
    /// First interval not reduced yet.
    sent: u64,
    /// Sum and number of contributions of this rank's partitions to interval `sent + i`.
    acc: std::collections::VecDeque<(Sample, u32)>,
    /// Windows since the last reduction.
    windows: u64,
    /// Rank 0's collector (`None` on the other ranks).
    out: Option<SampleSender>,
}

impl SampleRelay {
    /// A relay for the `parts` partitions of this rank, and the sender their [`SampleSink`]s use.
    /// `out` is the collector on rank 0 (`None` elsewhere).
    pub fn new(parts: u32, sample_cycles: u64, out: Option<SampleSender>) -> (Self, SampleSender) {
        assert!(parts >= 1 && sample_cycles >= 1);
        let (tx, rx) = crossbeam::channel::unbounded();
        let relay =
            SampleRelay { rx, parts, sample_cycles, sent: 0, acc: std::collections::VecDeque::new(), windows: 0, out };
        (relay, tx)
    }

    /// At the end of the window ending at `end` (on every rank, for every window): take what the
    /// partitions sent, and if it is time, sum the final intervals over the ranks with `sum_to_root`
    /// (a collective element-wise sum that returns the sums on rank 0 and `None` elsewhere).
    pub fn window_end(&mut self, end: u64, sum_to_root: impl FnOnce(&[u64]) -> Option<Vec<u64>>) {
        let sc = self.sample_cycles;
        // Partitions of this rank may be a window ahead with one process (they do not wait for
        // the caller), so later intervals may be here too: kept for the next reduction.
        while let Ok((_, s)) = self.rx.try_recv() {
            let k = (s.cycle / sc).checked_sub(1).expect("a sink labels interval k with (k + 1) * sample_cycles");
            assert!(k >= self.sent, "interval {k} sent again after it was relayed");
            let i = (k - self.sent) as usize;
            if self.acc.len() <= i {
                self.acc.resize(i + 1, (Sample::default(), 0));
            }
            let (m, n) = &mut self.acc[i];
            m.add(&s);
            *n += 1;
        }
        self.windows += 1;
        let finished = end / sc;
        if finished <= self.sent || self.windows < RELAY_EVERY_WINDOWS {
            return;
        }
        let count = (finished - self.sent) as usize;
        let mut words = Vec::with_capacity(count * RELAY_WORDS);
        for i in 0..count {
            let (m, n) = self.acc.get(i).copied().unwrap_or_default();
            assert_eq!(
                n,
                self.parts,
                "interval {} is final but only {n} of {} partitions sent it",
                self.sent + i as u64,
                self.parts
            );
            words.extend_from_slice(&[
                m.injected_phits,
                m.injected_packets,
                m.accepted_phits,
                m.delivered_packets,
                m.latency_sum,
                m.in_flight as u64,
                m.lost_packets,
            ]);
        }
        let sums = sum_to_root(&words);
        if let (Some(sums), Some(out)) = (sums, &self.out) {
            for (i, w) in sums.chunks_exact(RELAY_WORDS).enumerate() {
                let s = Sample {
                    cycle: (self.sent + i as u64 + 1) * sc,
                    injected_phits: w[0],
                    injected_packets: w[1],
                    accepted_phits: w[2],
                    delivered_packets: w[3],
                    latency_sum: w[4],
                    in_flight: w[5] as i64,
                    lost_packets: w[6],
                };
                // A collector that hung up has failed and stops the run; the rows go nowhere.
                let _ = out.send((0, s));
            }
        }
        self.acc.drain(..count.min(self.acc.len()));
        self.sent = finished;
        self.windows = 0;
    }

    /// Intervals relayed so far.
    pub fn relayed(&self) -> u64 {
        self.sent
    }
}

/// Counters of one partition; merged into the run's totals (serializable: MPI ranks send theirs to
/// rank 0).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Stats {
    /// Packets delivered in the window.
    pub delivered_packets: u64,
    /// Phits delivered in the window.
    pub delivered_phits: u64,
    /// Sum of latencies of packets delivered in the window.
    pub latency_sum: u64,
    /// Sum of switch traversals of packets delivered in the window.
    pub hops_sum: u64,
    /// Latency histogram (cycles, bin width 1) of packets delivered in the window.
    pub latency_hist: Vec<u64>,
    /// Switch traversals over the whole run (crossbar grants).
    pub traversals: u64,
    /// Packets generated over the whole run.
    pub generated_packets: u64,
    /// Generation attempts skipped because the source queue was full.
    pub suppressed_packets: u64,
    /// Generations whose destination was unreachable (`faults.unreachable = "drop"`).
    #[serde(default)]
    pub dropped_packets: u64,
    /// Cycle at which the last tail arrived (fixed workloads: completion time).
    pub last_delivery: u64,
    /// Time series, one entry per sample interval.
    pub samples: Vec<Sample>,
    /// Phits carried on switch-to-switch links in the window, per VC (one entry per VC of the
    /// routing; empty until a partition sizes it).
    #[serde(default)]
    pub vc_phits: Vec<u64>,
    /// Workloads: messages whose last packet arrived.
    #[serde(default)]
    pub messages_delivered: u64,
    /// Workloads: sum of message latencies (a send's start to its message's last tail), cycles.
    #[serde(default)]
    pub message_latency_sum: u64,
    /// Workloads: message latency histogram, log-linear buckets ([`log_bucket`]).
    #[serde(default)]
    pub message_latency_hist: Vec<u64>,
    /// Failure events: packets dropped at each event (on its failed links and in its failed
    /// switches, with their source queues), by event; empty without events.
    #[serde(default)]
    pub event_lost: Vec<u64>,
    /// Packets dropped after a failure event because the routing in force had no live candidate
    /// for them (a deterministic routing's port failed, or their destination did), over the run.
    #[serde(default)]
    pub stranded_packets: u64,
    /// Lost or stranded packets that their source sent again (`faults.retransmit_cycles`), each
    /// time counted.
    #[serde(default)]
    pub retransmitted_packets: u64,
    /// With `faults.retransmit_cycles`: lost or stranded packets their source gave up (its
    /// retries spent, or the source or destination failed).
    #[serde(default)]
    pub abandoned_packets: u64,
    /// Every loss to a failure event (lost at it, or stranded after it; a packet lost again after
    /// its retransmission counts again): its (source, destination) servers, in no particular order.
    /// Losses are rare next to deliveries, so a list is smaller than two counters per server.
    #[serde(default)]
    pub losses: Vec<(u32, u32)>,
    /// The per-port-class series of `output.link_series` (empty when off).
    #[serde(default)]
    pub link_series: LinkSeries,
}

/// Add the counts `b` into `a` element by element, `a` growing to `b`'s length where shorter
/// (merging partitions' histograms and series, which each grow as far as they saw).
fn add_counts(a: &mut Vec<u64>, b: &[u64]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// Values below this are their own bucket in [`log_bucket`].
const LOG_EXACT: u64 = 1024;
/// Buckets per power of two above [`LOG_EXACT`].
const LOG_SUB: u64 = 64;

/// The bucket of `v` in a log-linear histogram: exact below 1,024, then 64 buckets per power of
/// two (relative width under 1.6%), so that message latencies of any size fit a few thousand
/// buckets.
pub fn log_bucket(v: u64) -> usize {
    if v < LOG_EXACT {
        return v as usize;
    }
    let e = 63 - v.leading_zeros() as u64; // v in [2^e, 2^(e+1))
    let sub = (v - (1 << e)) >> (e - LOG_SUB.trailing_zeros() as u64);
    (LOG_EXACT + (e - LOG_EXACT.trailing_zeros() as u64) * LOG_SUB + sub) as usize
}

/// The smallest value of bucket `b` of [`log_bucket`].
pub fn log_bucket_low(b: usize) -> u64 {
    let b = b as u64;
    if b < LOG_EXACT {
        return b;
    }
    let k = b - LOG_EXACT;
    let e = k / LOG_SUB + LOG_EXACT.trailing_zeros() as u64;
    (1 << e) + ((k % LOG_SUB) << (e - LOG_SUB.trailing_zeros() as u64))
}

impl Stats {
    /// Record a workload message of latency `lat`.
    pub fn record_message(&mut self, lat: u64) {
        self.messages_delivered += 1;
        self.message_latency_sum += lat;
        let b = log_bucket(lat);
        if self.message_latency_hist.len() <= b {
            self.message_latency_hist.resize(b + 1, 0);
        }
        self.message_latency_hist[b] += 1;
    }

    /// The `q`-quantile of message latency (the low end of the bucket holding it; within 1.6%), or
    /// `None` with no message.
    pub fn message_latency_quantile(&self, q: f64) -> Option<u64> {
        let total = self.messages_delivered;
        if total == 0 {
            return None;
        }
        let need = (q * total as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (b, &c) in self.message_latency_hist.iter().enumerate() {
            acc += c;
            if acc >= need {
                return Some(log_bucket_low(b));
            }
        }
        None
    }

    /// Record a latency in the histogram.
    #[inline]
    pub fn record_latency(&mut self, lat: u64) {
        let b = (lat as usize).min(LATENCY_HIST_MAX - 1);
        if self.latency_hist.len() <= b {
            self.latency_hist.resize((b + 1).next_power_of_two().min(LATENCY_HIST_MAX), 0);
        }
        self.latency_hist[b] += 1;
    }

    /// Add `o` into `self` (every field is a sum or max, so the order of merging does not matter).
    pub fn merge(&mut self, o: &Stats) {
        self.delivered_packets += o.delivered_packets;
        self.delivered_phits += o.delivered_phits;
        self.latency_sum += o.latency_sum;
        self.hops_sum += o.hops_sum;
        add_counts(&mut self.latency_hist, &o.latency_hist);
        self.traversals += o.traversals;
        self.generated_packets += o.generated_packets;
        self.suppressed_packets += o.suppressed_packets;
        self.dropped_packets += o.dropped_packets;
        self.last_delivery = self.last_delivery.max(o.last_delivery);
        if self.samples.len() < o.samples.len() {
            self.samples.resize(o.samples.len(), Sample::default());
        }
        for (a, b) in self.samples.iter_mut().zip(&o.samples) {
            a.cycle = b.cycle.max(a.cycle);
            a.add(b);
        }
        add_counts(&mut self.vc_phits, &o.vc_phits);
        self.messages_delivered += o.messages_delivered;
        self.message_latency_sum += o.message_latency_sum;
        add_counts(&mut self.message_latency_hist, &o.message_latency_hist);
        add_counts(&mut self.event_lost, &o.event_lost);
        self.stranded_packets += o.stranded_packets;
        self.retransmitted_packets += o.retransmitted_packets;
        self.abandoned_packets += o.abandoned_packets;
        self.losses.extend_from_slice(&o.losses);
        self.link_series.merge(&o.link_series);
    }

    /// The sample of the interval holding cycle `at` (intervals of `sample_cycles`), appending the
    /// intervals before it (with their `cycle` set) if the series does not reach it yet.
    #[inline]
    pub fn sample_at(&mut self, at: u64, sample_cycles: u64) -> &mut Sample {
        let i = (at / sample_cycles) as usize;
        if self.samples.len() <= i {
            let start = self.samples.len();
            self.samples.resize(i + 1, Sample::default());
            for (k, s) in self.samples.iter_mut().enumerate().skip(start) {
                s.cycle = (k as u64 + 1) * sample_cycles;
            }
        }
        &mut self.samples[i]
    }

    /// Record in the time series a packet of `phits` phits whose head leaves its server at `now`:
    /// the server link sends one phit per cycle, `now ..= now + phits - 1`, and each interval gets
    /// the phits sent in it; phits at `limit` or later (after the run's planned end) are not counted.
    #[inline]
    pub fn record_injection(&mut self, now: u64, phits: u64, sample_cycles: u64, limit: u64) {
        self.sample_at(now, sample_cycles).injected_packets += 1;
        spread_phits(now, phits, sample_cycles, limit, |k, n| {
            self.sample_at(k * sample_cycles, sample_cycles).injected_phits += n
        });
    }

    /// Record in the time series a packet of `phits` phits of latency `latency` whose tail reaches
    /// its destination server at `tail`: the packet counts as delivered in the interval of `tail`,
    /// its phits in the intervals they arrive in (`tail - phits + 1 ..= tail`, one per cycle). What
    /// happens at `limit` or later (after the run's planned end, as the summary's window) is not
    /// counted: the delivery is recorded when the packet leaves its last switch, before its tail
    /// arrives, and a run that ends in between has not delivered it.
    #[inline]
    pub fn record_delivery(&mut self, tail: u64, phits: u64, latency: u64, sample_cycles: u64, limit: u64) {
        if tail < limit {
            let s = self.sample_at(tail, sample_cycles);
            s.delivered_packets += 1;
            s.latency_sum += latency;
        }
        spread_phits(tail + 1 - phits, phits, sample_cycles, limit, |k, n| {
            self.sample_at(k * sample_cycles, sample_cycles).accepted_phits += n
        });
    }

    /// The `q`-quantile of the latency histogram (smallest latency with at least `q` of packets at
    /// or below it), or 0 if empty.
    pub fn latency_quantile(&self, q: f64) -> u64 {
        let total: u64 = self.latency_hist.iter().sum();
        if total == 0 {
            return 0;
        }
        let need = (q * total as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (lat, &c) in self.latency_hist.iter().enumerate() {
            acc += c;
            if acc >= need {
                return lat as u64;
            }
        }
        (self.latency_hist.len() - 1) as u64
    }
}

impl Sample {
    /// Add the counters of `o` (not its `cycle`).
    pub fn add(&mut self, o: &Sample) {
        self.injected_phits += o.injected_phits;
        self.injected_packets += o.injected_packets;
        self.accepted_phits += o.accepted_phits;
        self.delivered_packets += o.delivered_packets;
        self.latency_sum += o.latency_sum;
        self.in_flight += o.in_flight;
        self.lost_packets += o.lost_packets;
    }
}

/// Split `phits` phits sent one per cycle from cycle `first` on among the sample intervals of
/// `sample_cycles` they are sent in: `add(k, n)` for each interval `k` that gets `n > 0` of them, in
/// order. Phits at `limit` or later are left out. At most two intervals when the interval is at
/// least `phits` long; any number when it is shorter.
#[inline]
pub fn spread_phits(first: u64, phits: u64, sample_cycles: u64, limit: u64, mut add: impl FnMut(u64, u64)) {
    let end = first.saturating_add(phits).min(limit);
    let mut c = first;
    while c < end {
        let k = c / sample_cycles;
        let next = ((k + 1) * sample_cycles).min(end);
        add(k, next - c);
        c = next;
    }
}

/// Jain's fairness index `(sum x)^2 / (n sum x^2)`; 1 when all equal, 1/n when one takes all, NaN
/// when there is nothing to share (all zero, or no server): 0/0 is "no data", not "perfectly fair".
pub fn jain_index(x: &[u64]) -> f64 {
    let n = x.len() as f64;
    let s: f64 = x.iter().map(|&v| v as f64).sum();
    let s2: f64 = x.iter().map(|&v| (v as f64) * (v as f64)).sum();
    if s2 == 0.0 {
        f64::NAN
    } else {
        s * s / (n * s2)
    }
}

/// Whether a measured window reached a steady state, from the time series (past saturation some
/// routings decay for thousands of cycles, and a window on that decay measures a point on it).
///
/// Over the sample intervals that lie wholly in the window, a least-squares line through the
/// accepted phits per interval, counted as the accepted load is (all `P` phits of a packet in the
/// interval its tail arrives in: delivered packets times `P`), gives the change across the window (slope times the span between the
/// first and last interval) relative to the mean: [`Steadiness::accepted_trend`]. The accepted load
/// drifts, and the window is not steady, when that change is both
/// - **material**: more than [`STEADY_TOLERANCE`] (5%) of the mean. A window whose load falls 5%
///   end to end has a mean 2.5% off its end values, more than the 2% within which this simulator and
///   CAMINOS are held to agree; and
/// - **significant**: more than 3 standard errors of that change, so that a small network's noise
///   is not read as drift. The intervals' variance is the larger of their scatter around the line
///   and the Poisson variance of whole-packet deliveries (`P` times the mean phits, for `P`-phit
///   packets): with few intervals the scatter alone is a poor estimate (on `quickstart`, 300 + 600
///   cycles, six intervals of about 200 packets would read a chance -18% as significant).
///
/// Packets in flight get the same fit, [`Steadiness::in_flight_trend`], reported but not judged:
/// past saturation a network goes on filling its buffers for thousands of cycles while it delivers
/// at a constant rate (Valiant on Dimension Complement Reverse, `hyperx-3d-8`, offered 1.0, 2,000 +
/// 2,000 cycles: in flight +20%, accepted +2%), so a rising count alone does not make the measured
/// load wrong; a rise at a flat accepted load can also be the build-up before a collapse, which only
/// a longer window tells apart. With fewer than [`STEADY_MIN_SAMPLES`] intervals
/// (`output.sample_cycles` too long for the window) nothing can be told: the trends are NaN and the
/// window counts as steady.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Steadiness {
    /// The window reached a steady state.
    pub steady: bool,
    /// Fitted change of accepted load across the window, relative to its mean (-0.4: fell by 40% of
    /// the mean).
    pub accepted_trend: f64,
    /// Fitted change of packets in flight across the window, relative to its mean.
    pub in_flight_trend: f64,
}

/// Relative change across a window beyond which a series is not steady (see [`Steadiness`]).
pub const STEADY_TOLERANCE: f64 = 0.05;
/// Fewest sample intervals in a window for [`Steadiness`] to judge it.
pub const STEADY_MIN_SAMPLES: usize = 4;

/// Least-squares fit of `y` against its index: (change across the span, its standard error, mean),
/// with the variance of a point taken as at least `floor(mean)`.
fn trend(y: &[f64], floor: impl Fn(f64) -> f64) -> (f64, f64, f64) {
    let n = y.len() as f64;
    let mx = (n - 1.0) / 2.0;
    let my = y.iter().sum::<f64>() / n;
    let sxx: f64 = (0..y.len()).map(|i| (i as f64 - mx).powi(2)).sum();
    let sxy: f64 = y.iter().enumerate().map(|(i, v)| (i as f64 - mx) * (v - my)).sum();
    let slope = sxy / sxx;
    let ssr: f64 = y.iter().enumerate().map(|(i, v)| (v - my - slope * (i as f64 - mx)).powi(2)).sum();
    let se = ((ssr / (n - 2.0)).max(floor(my)) / sxx).sqrt();
    (slope * (n - 1.0), se * (n - 1.0), my)
}

impl Steadiness {
    /// The steadiness of the window `[start, end)` of the merged time series `samples` (intervals of
    /// `sample_cycles`, `in_flight` already cumulative) of a run with `packet_phits`-phit packets.
    pub fn of(samples: &[Sample], sample_cycles: u64, packet_phits: u64, start: u64, end: u64) -> Steadiness {
        // Interval `k` covers `[k sc, (k + 1) sc)`; intervals past the last event are absent
        // (nothing delivered, in-flight count unchanged).
        let (k0, k1) = (start.div_ceil(sample_cycles) as usize, (end / sample_cycles) as usize);
        let last = samples.len().min(k0).checked_sub(1).map_or(0, |i| samples[i].in_flight);
        let mut inside = Vec::with_capacity(k1.saturating_sub(k0));
        let mut in_flight = last;
        for k in k0..k1 {
            let s = samples.get(k).copied().unwrap_or(Sample { in_flight, ..Sample::default() });
            in_flight = s.in_flight;
            inside.push(s);
        }
        if inside.len() < STEADY_MIN_SAMPLES {
            return Steadiness { steady: true, accepted_trend: f64::NAN, in_flight_trend: f64::NAN };
        }
        let drift = |y: Vec<f64>, per_item: f64| {
            let (change, se, mean) = trend(&y, |m| per_item * m.max(0.0));
            let rel = if mean > 0.0 { change / mean } else { 0.0 };
            (rel, rel.abs() > STEADY_TOLERANCE && change.abs() > 3.0 * se)
        };
        let (accepted_trend, drifts) =
            drift(inside.iter().map(|s| (s.delivered_packets * packet_phits) as f64).collect(), packet_phits as f64);
        let (in_flight_trend, _) = drift(inside.iter().map(|s| s.in_flight as f64).collect(), 1.0);
        Steadiness { steady: !drifts, accepted_trend, in_flight_trend }
    }
}

/// The run's headline figures (the `--json` object, which adds `complete` and `status`, see
/// [`Summary::to_json`]). Units are in the field docs. A figure with no data is `null` in JSON (NaN
/// in results files), never a number that looks measured: latencies and the steady state of a
/// window in which nothing was delivered, the offered load of a fixed workload (absent: it has no
/// effect), the completion time of a run that did not complete (absent).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Offered load, phits/cycle/server (config); absent for a fixed workload, where
    /// `traffic.load` has no effect (the workload is a number of packets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_load: Option<f64>,
    /// Accepted load over the measured window, phits/cycle/server.
    pub accepted_load: f64,
    /// Mean latency of packets delivered in the window, cycles (creation to last phit); NaN (JSON
    /// `null`) when none was delivered.
    pub average_latency: f64,
    /// 99th percentile of that latency, cycles; `None` (JSON `null`) when none was delivered.
    pub latency_p99: Option<u64>,
    /// Mean switch traversals per delivered packet (source and destination switches included); NaN
    /// when none was delivered.
    pub average_hops: f64,
    /// Jain's index of per-server injected phits in the window; NaN when nothing was injected.
    pub jain_index: f64,
    /// Packets delivered in the window.
    pub packets_delivered: u64,
    /// Cycles simulated.
    pub cycles: u64,
    /// Wall-clock seconds of the simulation loop.
    pub wall_seconds: f64,
    /// Switch traversals over the whole run per wall-clock second.
    pub hops_per_second: f64,
    /// Fixed workloads that completed: cycle at which the last packet's tail arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_cycles: Option<u64>,
    /// Whether the measured window reached a steady state ([`Steadiness`]; fixed workloads: true);
    /// `None` (JSON `null`) when nothing was delivered in it (there is no load to judge).
    pub steady_state: Option<bool>,
    /// Fitted change of accepted load across the measured window, relative to its mean; NaN when the
    /// window has too few sample intervals; 0 for fixed workloads (not judged).
    pub accepted_trend: f64,
    /// The same for packets in flight.
    pub in_flight_trend: f64,
    /// Packets generated over the whole run.
    pub packets_generated: u64,
    /// Generation attempts skipped because a source queue was full (offered load above capacity).
    pub packets_suppressed: u64,
    /// Peak resident memory of the process, bytes.
    pub peak_memory_bytes: u64,
    /// `faults.unreachable = "drop"`: packets not generated because their destination was
    /// unreachable (absent when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub packets_dropped: u64,
    /// Ordered pairs of live servers that faults left unable to communicate (their traffic is not
    /// generated; absent when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreachable_pairs: u64,
    /// Servers lost with failed switches (absent when 0); accepted load is per live server.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub servers_lost: u64,
    /// Table-based routings (DFSSSP, LASH, SPDA): virtual layers needed, or spanning trees (absent
    /// for other routings).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub routing_layers: u64,
    /// Table-based routings: bytes of their routing tables (absent for other routings).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub routing_table_bytes: u64,
    /// Table-based routings: wall-clock seconds to build their tables (absent for other routings).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub routing_build_seconds: f64,
    /// VCs that carried some phit on a switch-to-switch link in the measured window (DAVC paper
    /// section 8, "VC utilization").
    #[serde(default)]
    pub vcs_used: u64,
    /// Phits carried on switch-to-switch links in the measured window, per VC (index = VC; as many
    /// entries as the routing has VCs per port).
    #[serde(default)]
    pub vc_phits: Vec<u64>,
    /// Workloads that completed: the cycle the last task finished at (the application's
    /// execution time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub makespan_cycles: Option<u64>,
    /// Workloads: the earliest finish of a task, cycles (over the tasks that finished).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_finish_min: Option<u64>,
    /// Workloads: the median finish of a task (the lower median), cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_finish_median: Option<u64>,
    /// Workloads: the latest finish of a task, cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_finish_max: Option<u64>,
    /// Workloads: messages whose last packet arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages_delivered: Option<u64>,
    /// Workloads: mean message latency (a send's start to its message's last tail), cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_latency_mean: Option<f64>,
    /// Workloads: 99th percentile of message latency, cycles (within 1.6%: [`log_bucket`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_latency_p99: Option<u64>,
    /// Iterative workloads that completed: the makespan over the iterations, cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_iteration: Option<f64>,
    /// Failure events (`[[faults.events]]`): packets lost at the events, over the run (on failed
    /// links, in failed switches and their source queues).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_lost: Option<u64>,
    /// Failure events: packets dropped after an event for want of a live route, over the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_stranded: Option<u64>,
    /// Failure events with `faults.retransmit_cycles`: lost or stranded packets sent again by their
    /// source, each time counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_retransmitted: Option<u64>,
    /// Failure events with `faults.retransmit_cycles`: lost or stranded packets given up (retries
    /// spent, or source or destination failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_abandoned: Option<u64>,
    /// Failure events: what each did and cost ([`FailureEvent`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_events: Vec<FailureEvent>,
}

/// One failure event of a run, as the summary reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FailureEvent {
    /// Cycle of the event.
    pub cycle: u64,
    /// Links it failed (with those of its failed switches).
    pub links: u64,
    /// Switches it failed.
    pub switches: u64,
    /// Links it repaired (`repair_links`).
    #[serde(default)]
    pub repaired_links: u64,
    /// Switches it repaired (`repair_switches`).
    #[serde(default)]
    pub repaired_switches: u64,
    /// Packets it lost (on its links, in its switches and their source queues).
    pub packets_lost: u64,
    /// Cycle the routing rebuilt for the network after it came into force; `None` for a routing
    /// that is never rebuilt, or a run that ended first.
    pub rebuilt_at: Option<u64>,
    /// Wall-clock seconds rank 0 took to rebuild (distances and routing tables); `None` as above.
    pub rebuild_seconds: Option<f64>,
    /// Mean accepted load over the sample intervals before the event (up to
    /// [`RECOVERY_INTERVALS`] of them, after the previous event), phits/cycle/server.
    pub accepted_before: Option<f64>,
    /// Cycles from the event to the start of the first sample interval from which the accepted
    /// load, averaged over [`RECOVERY_INTERVALS`] intervals (fewer at the end of the run), is back
    /// within 2% of `accepted_before`; `None` if it never is in the run.
    pub recovery_cycles: Option<u64>,
}

/// Sample intervals averaged for a failure event's level before it and its recovery.
pub const RECOVERY_INTERVALS: usize = 5;

/// The [`FailureEvent`]s of a run: `events` with their other fields filled, `lost` per event,
/// over the merged time series `samples` of intervals of `sample_cycles`; `servers[k]` is the
/// number of live servers taking part before event `k` (and `servers[k + 1]` after it), the
/// accepted load's denominator, so that servers a failed switch takes down do not count as a dip
/// that never recovers.
pub fn failure_events(
    events: &[FailureEvent],
    lost: &[u64],
    samples: &[Sample],
    sample_cycles: u64,
    servers: &[u64],
) -> Vec<FailureEvent> {
    let mean = |xs: &[Sample], n: u64| {
        xs.iter().map(|s| s.accepted_phits as f64).sum::<f64>() / (xs.len() as f64 * sample_cycles as f64 * n as f64)
    };
    let mut out = Vec::new();
    let mut previous = 0u64;
    for (k, e) in events.iter().enumerate() {
        let cycle = e.cycle;
        // Whole intervals between the previous event and this one.
        let first = previous.div_ceil(sample_cycles) as usize;
        let last = ((cycle / sample_cycles) as usize).min(samples.len());
        let before = &samples[first.min(last).max(last.saturating_sub(RECOVERY_INTERVALS))..last];
        let accepted_before = (!before.is_empty()).then(|| mean(before, servers[k]));
        let after = cycle.div_ceil(sample_cycles) as usize;
        let recovery_cycles = accepted_before.and_then(|level| {
            (after..samples.len()).find_map(|j| {
                let w = &samples[j..(j + RECOVERY_INTERVALS).min(samples.len())];
                (mean(w, servers[k + 1]) >= 0.98 * level).then(|| j as u64 * sample_cycles - cycle)
            })
        });
        out.push(FailureEvent {
            packets_lost: lost.get(k).copied().unwrap_or(0),
            accepted_before,
            recovery_cycles,
            ..e.clone()
        });
        previous = cycle;
    }
    out
}

/// The workload figures of a [`Summary`], from the tasks' finish cycles (`u64::MAX`: not
/// finished), the merged statistics, the kernel's iterations and whether the run completed.
pub fn fill_workload_summary(
    s: &mut Summary,
    task_finish: &[u64],
    stats: &Stats,
    iterations: Option<u32>,
    complete: bool,
) {
    let mut done: Vec<u64> = task_finish.iter().copied().filter(|&c| c != u64::MAX).collect();
    done.sort_unstable();
    s.task_finish_min = done.first().copied();
    s.task_finish_median = (!done.is_empty()).then(|| done[(done.len() - 1) / 2]);
    s.task_finish_max = done.last().copied();
    let makespan = (complete && done.len() == task_finish.len()).then(|| done.last().copied().unwrap_or(0));
    s.makespan_cycles = makespan;
    s.messages_delivered = Some(stats.messages_delivered);
    s.message_latency_mean =
        (stats.messages_delivered > 0).then(|| stats.message_latency_sum as f64 / stats.messages_delivered as f64);
    s.message_latency_p99 = stats.message_latency_quantile(0.99);
    s.cycles_per_iteration = match (makespan, iterations) {
        (Some(m), Some(i)) if i > 0 => Some(m as f64 / i as f64),
        _ => None,
    };
}

impl Summary {
    /// The `--json` object of a run: `complete` (whether it reached its end) and `status`
    /// (`complete`, or how it stopped: `interrupted by SIGTERM at cycle N`) first, then the
    /// summary's keys.
    pub fn to_json(&self, complete: bool, status: &str) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("complete".into(), complete.into());
        m.insert("status".into(), status.into());
        if let Ok(serde_json::Value::Object(s)) = serde_json::to_value(self) {
            m.extend(s);
        }
        m
    }

    /// The summary without the keys that measure the machine rather than the model (wall time,
    /// speed, memory, table build time): what must be identical across thread and rank counts.
    pub fn without_timings(mut self) -> Self {
        self.wall_seconds = 0.0;
        self.hops_per_second = 0.0;
        self.peak_memory_bytes = 0;
        self.routing_build_seconds = 0.0;
        self
    }
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// Peak resident set size of this process in bytes (Linux `VmHWM`), or 0 if unknown.
pub fn peak_memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()).map(|kb| kb * 1024))
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {

    /// Log-linear buckets: exact below 1,024; above, every value lies in its bucket's
    /// `[low, next low)`, buckets increase, and their width is under 1/64 of their low end.
    #[test]
    fn log_buckets_cover_values_in_order() {
        let mut prev = 0;
        for v in (0..5000u64).chain([1 << 20, (1 << 20) + 12345, u64::MAX / 3]) {
            let b = log_bucket(v);
            assert!(b >= prev || v < 5000 && b == prev, "buckets decrease at {v}");
            prev = prev.max(b);
            let (lo, hi) = (log_bucket_low(b), log_bucket_low(b + 1));
            assert!(lo <= v && (v < hi || hi <= lo), "{v} outside bucket {b} [{lo}, {hi})");
            if v < 1024 {
                assert_eq!(lo, v);
            } else if hi > lo {
                assert!((hi - lo) as f64 <= lo as f64 / 64.0 + 1.0, "bucket {b} too wide: [{lo}, {hi})");
            }
        }
        let mut st = Stats::default();
        for lat in [10, 20, 30, 5000] {
            st.record_message(lat);
        }
        assert_eq!(st.message_latency_quantile(0.5), Some(20));
        let p99 = st.message_latency_quantile(0.99).unwrap();
        assert!(p99 <= 5000 && p99 as f64 >= 5000.0 * (1.0 - 1.0 / 64.0), "{p99}");
    }

    use super::*;

    /// Two ranks of two partitions each, relayed to rank 0, give the sums of all four partitions'
    /// intervals, each once, in order; nothing is reduced before enough windows have passed.
    #[test]
    fn relay_sums_ranks_at_window_ends() {
        let sc = 10;
        let (collector, rows) = crossbeam::channel::unbounded();
        let (mut r0, tx0) = SampleRelay::new(2, sc, Some(collector));
        let (mut r1, tx1) = SampleRelay::new(2, sc, None);
        let mut sinks: Vec<SampleSink> = [&tx0, &tx0, &tx1, &tx1]
            .iter()
            .enumerate()
            .map(|(i, tx)| SampleSink::new(i as u32, (*tx).clone()))
            .collect();
        // Partition p records p + 1 injected phits and one delivery of latency 3p in every interval.
        let per_part = |p: u64, n: usize| -> Vec<Sample> {
            (0..n)
                .map(|_| Sample {
                    cycle: 0,
                    injected_phits: p + 1,
                    injected_packets: p,
                    accepted_phits: 2 * p,
                    delivered_packets: 1,
                    latency_sum: 3 * p,
                    in_flight: -(p as i64),
                    lost_packets: p % 2,
                })
                .collect()
        };
        let mut reductions = 0;
        for w in 1..=40u64 {
            let end = 4 * w;
            for (p, sink) in sinks.iter_mut().enumerate() {
                sink.send_until(end, sc, &per_part(p as u64, 100));
            }
            let mut from_1 = None;
            r1.window_end(end, |words| {
                from_1 = Some(words.to_vec());
                None
            });
            r0.window_end(end, |words| {
                let other = from_1.take().expect("both ranks reduce in the same window");
                reductions += 1;
                Some(words.iter().zip(&other).map(|(a, b)| a.wrapping_add(*b)).collect())
            });
            assert!(from_1.is_none(), "rank 1 reduced alone at window {w}");
            assert_eq!(r0.relayed(), r1.relayed());
        }
        // 40 windows of 4 cycles: reductions at windows 8, 16, 24, 32, 40.
        assert_eq!(reductions, 5);
        assert_eq!(r0.relayed(), 16);
        let got: Vec<Sample> = rows
            .try_iter()
            .map(|(p, s)| {
                assert_eq!(p, 0);
                s
            })
            .collect();
        let want: Vec<Sample> = (1..=16)
            .map(|k| Sample {
                cycle: k * sc,
                injected_phits: 1 + 2 + 3 + 4,
                injected_packets: 1 + 2 + 3,
                accepted_phits: 2 * (1 + 2 + 3),
                delivered_packets: 4,
                latency_sum: 3 * (1 + 2 + 3),
                in_flight: -(1 + 2 + 3),
                lost_packets: 1 + 1,
            })
            .collect();
        assert_eq!(got, want);
    }

    /// The split of a packet's phits among intervals equals counting its phits one cycle at a
    /// time, for intervals shorter and longer than the packet, with and without a limit.
    #[test]
    fn phits_split_as_sent_one_per_cycle() {
        for sc in [1, 3, 7, 16, 100] {
            for phits in [1, 5, 16] {
                for first in 0..40 {
                    for limit in [u64::MAX, 30, first + phits / 2] {
                        let mut want = vec![0u64; 64];
                        for c in (first..first + phits).filter(|&c| c < limit) {
                            want[(c / sc) as usize] += 1;
                        }
                        let mut got = vec![0u64; 64];
                        let mut parts = 0;
                        spread_phits(first, phits, sc, limit, |k, n| {
                            assert!(n > 0 && n <= sc);
                            got[k as usize] += n;
                            parts += 1;
                        });
                        assert_eq!(got, want, "sc {sc} phits {phits} first {first} limit {limit}");
                        if sc >= phits {
                            assert!(parts <= 2);
                        }
                    }
                }
            }
        }
    }

    /// One server injecting back to back and receiving back to back never records more than one
    /// phit per cycle in an interval, and the series sums are whole packets.
    #[test]
    fn back_to_back_packets_fill_intervals_at_most() {
        let (sc, plen, lat) = (10, 16, 3);
        let mut st = Stats::default();
        let n = 50;
        for i in 0..n {
            // Injected at 5 + 16 i (one phit per cycle, no gap); tail arrives 20 cycles later.
            let now = 5 + plen * i;
            st.record_injection(now, plen, sc, u64::MAX);
            st.record_delivery(now + 20 + plen - 1, plen, lat, sc, u64::MAX);
        }
        for s in &st.samples {
            assert!(s.injected_phits <= sc && s.accepted_phits <= sc, "{s:?}");
        }
        let sum = |f: fn(&Sample) -> u64| st.samples.iter().map(f).sum::<u64>();
        assert_eq!(sum(|s| s.injected_phits), n * plen);
        assert_eq!(sum(|s| s.accepted_phits), n * plen);
        assert_eq!(sum(|s| s.injected_packets), n);
        assert_eq!(sum(|s| s.delivered_packets), n);
        assert_eq!(sum(|s| s.latency_sum), n * lat);
        // The first packet's phits, 5..=20: 5 in [0, 10), 10 in [10, 20), 1 in [20, 30).
        assert_eq!(st.samples[0].injected_phits, 5);
        assert_eq!(st.samples[1].injected_phits, 10);
        for (k, s) in st.samples.iter().enumerate() {
            assert_eq!(s.cycle, (k as u64 + 1) * sc);
        }
        // A limit leaves out the phits sent from it on.
        let mut cut = Stats::default();
        cut.record_injection(95, plen, sc, 100);
        assert_eq!(cut.samples.iter().map(|s| s.injected_phits).sum::<u64>(), 5);
        // A tail at 105 arrives after a run that ends at 100: 10 of its phits (90..=99) did arrive.
        cut.record_delivery(105, plen, lat, sc, 100);
        assert_eq!(cut.samples.iter().map(|s| s.accepted_phits).sum::<u64>(), 10);
        assert_eq!(cut.samples.iter().map(|s| s.delivered_packets + s.latency_sum).sum::<u64>(), 0);
    }

    /// A link series' words land where its readers look, a packet's phits split one per cycle,
    /// and merging partitions in any order gives the same series.
    #[test]
    fn link_series_records_and_merges_in_any_order() {
        let sc = 10;
        let part = |seed: u64| {
            let mut ls = LinkSeries::new(3);
            for i in 0..20u64 {
                let x = seed * 31 + i * 7;
                ls.add_phits((x % 3) as usize, x % 50, 16, sc);
                ls.add_ejection((x % 5) as usize, x.is_multiple_of(2));
            }
            ls.add_census(4, 2, seed, 1);
            ls
        };
        let one = part(1);
        // 20 packets of 16 phits; each split over at most 3 intervals of 10 cycles, one per cycle.
        let total: u64 =
            (0..one.intervals()).flat_map(|k| (0..3).map(move |c| (k, c))).map(|(k, c)| one.phits(k, c)).sum();
        assert_eq!(total, 20 * 16);
        assert!((0..one.intervals()).all(|k| (0..3).all(|c| one.phits(k, c) <= 20 * sc)));
        // A packet of 16 phits whose first leaves at cycle 31: 9 phits in [30, 40), 7 in [40, 50).
        let mut first = LinkSeries::new(3);
        first.add_phits(1, 31, 16, sc);
        assert_eq!((first.phits(3, 1), first.phits(4, 1), first.phits(4, 0)), (9, 7, 0));
        assert_eq!((one.buffered(4, 2), one.ports(4, 2), one.buffered(4, 1)), (1, 1, 0));
        assert_eq!((0..5).map(|k| one.ejected(k)).sum::<u64>(), 20);
        assert_eq!((0..5).map(|k| one.minimal(k)).sum::<u64>(), 10);
        let parts: Vec<LinkSeries> = (1..=3).map(part).collect();
        let mut a = LinkSeries::default();
        for p in &parts {
            a.merge(p);
        }
        let mut b = LinkSeries::default();
        for p in parts.iter().rev() {
            b.merge(p);
        }
        assert_eq!(a, b);
        assert_eq!(a.buffered(4, 2), 1 + 2 + 3);
    }

    #[test]
    fn jain_extremes() {
        assert!((jain_index(&[5, 5, 5, 5]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[8, 0, 0, 0]) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn jain_of_nothing_is_no_data() {
        assert!(jain_index(&[0, 0, 0]).is_nan());
        assert!(jain_index(&[]).is_nan());
    }

    /// 40 intervals of 100 cycles, `acc(k)` packets delivered in interval `k`.
    fn series(acc: impl Fn(u64) -> u64, fl: impl Fn(u64) -> i64) -> Vec<Sample> {
        (0..40)
            .map(|k| Sample { cycle: (k + 1) * 100, delivered_packets: acc(k), in_flight: fl(k), ..Sample::default() })
            .collect()
    }

    #[test]
    fn steadiness_tells_drift_from_noise() {
        // Flat with +-3% alternating noise: steady.
        let s = Steadiness::of(&series(|k| 1000 + 30 * (k % 2), |_| 500), 100, 1, 2000, 4000);
        assert!(s.steady && s.accepted_trend.abs() < 0.01, "{s:?}");
        // Falling from 1000 to 600 over the window: not steady, trend about -0.5 of the mean.
        let s = Steadiness::of(&series(|k| 1000 - 20 * k.saturating_sub(20), |_| 500), 100, 1, 2000, 4000);
        assert!(!s.steady && (s.accepted_trend + 0.48).abs() < 0.05, "{s:?}");
        // Flat accepted load, in-flight packets growing from 700 to 890 (24% of the mean 795): reported,
        // not judged.
        let s = Steadiness::of(&series(|_| 1000, |k| 500 + 10 * k as i64), 100, 1, 2000, 4000);
        assert!(s.steady && (s.in_flight_trend - 0.24).abs() < 0.01, "{s:?}");
        // A 4% drift, though significant, is within the tolerance.
        let s = Steadiness::of(&series(|k| 1000 - 2 * k.saturating_sub(20), |_| 500), 100, 1, 2000, 4000);
        assert!(s.steady, "{s:?}");
        // Six intervals of about 200 16-phit packets falling 18% by chance: within Poisson noise.
        let s = Steadiness::of(&series(|k| [219, 206, 188, 212, 188, 181][k as usize % 6], |_| 500), 100, 16, 0, 600);
        assert!(s.steady && s.accepted_trend < -0.1, "{s:?}");
        // Too few intervals to tell.
        let s = Steadiness::of(&series(|k| 4000 - 100 * k, |_| 500), 100, 1, 3700, 4000);
        assert!(s.steady && s.accepted_trend.is_nan(), "{s:?}");
    }

    #[test]
    fn quantile_from_histogram() {
        let mut s = Stats::default();
        for l in 1..=100 {
            s.record_latency(l);
        }
        assert_eq!(s.latency_quantile(0.99), 99);
        assert_eq!(s.latency_quantile(0.5), 50);
        assert_eq!(s.latency_quantile(1.0), 100);
    }
}
