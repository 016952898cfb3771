//! Engine tests on a toy model over ranks x threads, with an in-process transport that emulates
//! ranks by threads, so the multi-rank window protocol is checked without MPI (tests/mpi.rs checks
//! the real thing).

use super::*;
use std::sync::{Arc, Barrier, Mutex};

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const LOOKAHEAD: Cycle = 2;
const MAX_DELAY: Cycle = 40;

/// LPs pass tokens around: a token carries its remaining hops in its low byte; each hop goes to a
/// pseudo-random LP after a pseudo-random delay (sometimes long, so that whole windows are idle
/// and the engine jumps). Each LP keeps an order-independent digest of what it received.
struct Toy {
    lps: Vec<Lp>,
    total: u32,
    local_of: Arc<Vec<u32>>,
    pending: Vec<Vec<u64>>,
    digest: Vec<u64>,
    in_flight: i64,
    last_progress: Cycle,
    tokens_per_lp: u64,
    /// Hops every token makes before it dies.
    hops: u64,
}

impl Toy {
    fn new(lps: Vec<Lp>, total: u32, local_of: Arc<Vec<u32>>, tokens_per_lp: u64, hops: u64) -> Self {
        let k = lps.len();
        Toy {
            lps,
            total,
            local_of,
            pending: vec![Vec::new(); k],
            digest: vec![0; k],
            in_flight: 0,
            last_progress: 0,
            tokens_per_lp,
            hops,
        }
    }
}

impl Partition for Toy {
    type Msg = u64;
    fn deliver(&mut self, now: Cycle, lp: Lp, tok: u64) {
        let li = self.local_of[lp as usize] as usize;
        self.digest[li] = self.digest[li].wrapping_add(mix(now ^ tok.rotate_left(17) ^ lp as u64));
        self.pending[li].push(tok);
    }
    fn step(&mut self, now: Cycle, out: &mut Scheduler<'_, u64>) {
        for li in 0..self.lps.len() {
            let lp = self.lps[li];
            if now == 0 {
                for k in 0..self.tokens_per_lp {
                    self.pending[li].push((mix(lp as u64 * 1000 + k) << 8) | self.hops);
                    self.in_flight += 1;
                }
            }
            if self.pending[li].is_empty() {
                continue;
            }
            let mut toks = std::mem::take(&mut self.pending[li]);
            toks.sort_unstable(); // canonical order: arrival order is not
            for tok in toks.drain(..) {
                self.last_progress = now;
                let hops = tok & 0xff;
                if hops == 0 {
                    self.in_flight -= 1;
                    continue;
                }
                let h = mix(tok ^ now);
                let next = (lp + 1 + (h % 3) as u32) % self.total;
                let delay = if h.is_multiple_of(7) { MAX_DELAY } else { LOOKAHEAD + (h >> 8) % 4 };
                out.send(now + delay, next, ((tok >> 8).wrapping_add(h & 0xffff) << 8) | (hops - 1));
            }
            self.pending[li] = toks;
        }
    }
    fn status(&self, now: Cycle) -> Status {
        Status {
            in_flight: self.in_flight,
            last_progress: self.last_progress,
            drained: true,
            next_activity: if self.pending.iter().any(|p| !p.is_empty()) { now } else { Cycle::MAX },
            stop: false,
            failed: false,
        }
    }
}

/// Ranks emulated by threads of one process: mailboxes per (source, destination) rank, and a
/// barrier around the exchange.
struct Hub {
    mail: Vec<Mutex<Vec<Envelope<u64>>>>,
    status: Mutex<Vec<Status>>,
    barrier: Barrier,
    ranks: usize,
    rounds: Mutex<u64>,
}

struct ThreadTransport {
    hub: Arc<Hub>,
    rank: usize,
}

impl Transport<u64> for ThreadTransport {
    fn ranks(&self) -> usize {
        self.hub.ranks
    }
    fn rank(&self) -> usize {
        self.rank
    }
    fn exchange(
        &mut self,
        outbound: &mut [Vec<Envelope<u64>>],
        inbound: &mut Vec<Envelope<u64>>,
        local: Status,
    ) -> Status {
        let (h, r) = (&*self.hub, self.rank);
        assert!(outbound[r].is_empty(), "messages to the own rank must stay local");
        for (q, ob) in outbound.iter_mut().enumerate() {
            h.mail[r * h.ranks + q].lock().unwrap().append(ob);
        }
        h.status.lock().unwrap()[r] = local;
        h.barrier.wait();
        for q in 0..h.ranks {
            inbound.append(&mut h.mail[q * h.ranks + r].lock().unwrap());
        }
        let g = Status::reduce(h.status.lock().unwrap().iter().copied());
        if r == 0 {
            *h.rounds.lock().unwrap() += 1;
        }
        h.barrier.wait();
        g
    }
}

/// Run the toy on `ranks` x `threads` partitions (block assignment of `lps` LPs); returns the
/// digest of every LP, the outcome, and the number of exchange rounds.
fn run_toy(lps: u32, ranks: usize, threads: usize, end: Cycle, tokens: u64, hops: u64) -> (Vec<u64>, Outcome, u64) {
    let total = ranks * threads;
    let part_of: Vec<u32> = (0..lps).map(|l| (l as usize * total / lps as usize) as u32).collect();
    let spec = RunSpec {
        end,
        lookahead: LOOKAHEAD,
        max_delay: MAX_DELAY,
        stop_when_drained: true,
        watchdog: 1000,
        start: 0,
        pause_at: Cycle::MAX,
        break_at: Cycle::MAX,
    };
    let mut local_of = vec![0u32; lps as usize];
    let mut members: Vec<Vec<Lp>> = vec![Vec::new(); total];
    for (l, &p) in part_of.iter().enumerate() {
        local_of[l] = members[p as usize].len() as u32;
        members[p as usize].push(l as Lp);
    }
    let local_of = Arc::new(local_of);
    let hub = Arc::new(Hub {
        mail: (0..ranks * ranks).map(|_| Mutex::new(Vec::new())).collect(),
        status: Mutex::new(vec![Status::default(); ranks]),
        barrier: Barrier::new(ranks),
        ranks,
        rounds: Mutex::new(0),
    });
    let mut digest = vec![0u64; lps as usize];
    let mut outcomes = Vec::new();
    let mut window_ends: Option<Vec<Cycle>> = None;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..ranks)
            .map(|r| {
                let parts: Vec<Toy> = members[r * threads..(r + 1) * threads]
                    .iter()
                    .map(|m| Toy::new(m.clone(), lps, local_of.clone(), tokens, hops))
                    .collect();
                let (hub, part_of, spec) = (hub.clone(), &part_of, &spec);
                s.spawn(move || {
                    // Window ends as the transport's hook sees them.
                    let mut ends = Vec::new();
                    let mut tr = Observed { inner: ThreadTransport { hub, rank: r }, hook: |end| ends.push(end) };
                    let res = run_with(parts, part_of, spec, &Progress::default(), &mut tr);
                    (res, ends)
                })
            })
            .collect();
        for h in handles {
            let ((parts, outcome), ends) = h.join().unwrap();
            // Every rank's hook sees every window end once, in order, up to where the run stopped:
            // what lets it make collective calls of its own.
            assert!(ends.windows(2).all(|w| w[0] < w[1]), "window ends out of order: {ends:?}");
            if let Outcome::Finished { cycles } = outcome {
                assert_eq!(ends.last(), Some(&cycles));
            }
            match &window_ends {
                None => window_ends = Some(ends),
                Some(first) => assert_eq!(first, &ends, "ranks saw different window ends"),
            }
            for p in &parts {
                for (li, &lp) in p.lps.iter().enumerate() {
                    digest[lp as usize] = p.digest[li];
                }
            }
            outcomes.push(outcome);
        }
    });
    assert!(outcomes.windows(2).all(|w| w[0] == w[1]), "ranks disagree: {outcomes:?}");
    let rounds = *hub.rounds.lock().unwrap();
    if ranks > 1 {
        assert_eq!(window_ends.map(|e| e.len() as u64), Some(rounds), "one hook call per exchange");
    }
    (digest, outcomes.pop().unwrap(), rounds)
}

#[test]
fn same_digests_for_any_ranks_and_threads() {
    // A run cut short at cycle 300 (Finished), so the outcome must match exactly too.
    let (reference, outcome, _) = run_toy(24, 1, 1, 300, 3, 200);
    assert_eq!(outcome, Outcome::Finished { cycles: 300 });
    assert!(reference.iter().all(|&d| d != 0), "every LP received something");
    for (ranks, threads) in [(1, 2), (1, 3), (2, 1), (2, 2), (3, 1), (3, 2), (4, 1)] {
        let (d, o, _) = run_toy(24, ranks, threads, 300, 3, 200);
        assert_eq!(o, outcome, "{ranks} ranks x {threads} threads");
        assert_eq!(d, reference, "{ranks} ranks x {threads} threads");
    }
}

#[test]
fn drains_and_jumps_over_idle_windows() {
    // Few tokens, long gaps: the run must drain (every token reaches 0 hops), and idle stretches
    // must be skipped rather than simulated window by window.
    let (reference, outcome, _) = run_toy(12, 1, 1, 100_000, 1, 12);
    assert!(matches!(outcome, Outcome::Drained { .. }), "{outcome:?}");
    for (ranks, threads) in [(2, 1), (3, 2)] {
        let (d, o, rounds) = run_toy(12, ranks, threads, 100_000, 1, 12);
        assert!(matches!(o, Outcome::Drained { .. }), "{o:?}");
        assert_eq!(d, reference);
        let Outcome::Drained { cycles } = o else { unreachable!() };
        assert!(rounds < cycles / LOOKAHEAD, "{rounds} exchanges for {cycles} cycles: no jump happened");
    }
}

#[test]
fn stop_request_ends_every_rank_at_the_same_window() {
    let progress = Progress::default();
    progress.stop.store(1, Ordering::Relaxed);
    let lps = 8u32;
    let part_of: Vec<u32> = (0..lps).map(|l| l / 4).collect();
    let local_of = Arc::new((0..lps).map(|l| l % 4).collect::<Vec<u32>>());
    let parts = (0..2).map(|p| Toy::new((p * 4..p * 4 + 4).collect(), lps, local_of.clone(), 2, 200)).collect();
    let spec = RunSpec {
        end: 1000,
        lookahead: LOOKAHEAD,
        max_delay: MAX_DELAY,
        stop_when_drained: false,
        watchdog: 500,
        start: 0,
        pause_at: Cycle::MAX,
        break_at: Cycle::MAX,
    };
    let (_, o) = run(parts, &part_of, &spec, &progress);
    assert_eq!(o, Outcome::Interrupted { cycles: LOOKAHEAD });
}
