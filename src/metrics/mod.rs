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
    /// Phits injected into the network by servers in the interval.
    pub injected_phits: u64,
    /// Phits delivered (tails arrived) in the interval.
    pub accepted_phits: u64,
    /// Packets delivered in the interval.
    pub delivered_packets: u64,
    /// Sum of latencies of those packets (cycles).
    pub latency_sum: u64,
    /// Packets injected into the network minus packets delivered, since the start, at the end of the
    /// interval (packets still in source queues are not counted).
    pub in_flight: i64,
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
}

impl Stats {
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
        if self.latency_hist.len() < o.latency_hist.len() {
            self.latency_hist.resize(o.latency_hist.len(), 0);
        }
        for (a, b) in self.latency_hist.iter_mut().zip(&o.latency_hist) {
            *a += b;
        }
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
            a.injected_phits += b.injected_phits;
            a.accepted_phits += b.accepted_phits;
            a.delivered_packets += b.delivered_packets;
            a.latency_sum += b.latency_sum;
            a.in_flight += b.in_flight;
        }
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

/// The run's headline figures (the `--json` object). Units are in the field docs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Offered load, phits/cycle/server (config).
    pub offered_load: f64,
    /// Accepted load over the measured window, phits/cycle/server.
    pub accepted_load: f64,
    /// Mean latency of packets delivered in the window, cycles (creation to last phit); NaN (JSON
    /// `null`) when none was delivered.
    pub average_latency: f64,
    /// 99th percentile of that latency, cycles.
    pub latency_p99: u64,
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
    /// Fixed workloads: cycle at which the last packet's tail arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_cycles: Option<u64>,
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
    use super::*;

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
