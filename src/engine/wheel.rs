//! Timing wheel: one bucket per cycle modulo a power of two larger than the longest delay. Buckets
//! keep their capacity, so steady-state scheduling allocates nothing.

use super::{Cycle, Lp};

/// Pending messages of one partition, by delivery cycle.
pub struct Wheel<M> {
    buckets: Vec<Vec<(Lp, M)>>,
    mask: u64,
    len: usize,
    /// Cycle of the last delivered bucket; pushes must be within the wheel's horizon of it.
    cursor: Cycle,
}

impl<M> Wheel<M> {
    /// A wheel able to hold messages up to `horizon` cycles ahead.
    pub fn new(horizon: u64) -> Self {
        let size = (horizon + 1).next_power_of_two().max(2);
        Wheel { buckets: (0..size).map(|_| Vec::new()).collect(), mask: size - 1, len: 0, cursor: 0 }
    }

    /// Schedule `m` for `lp` at cycle `at`.
    #[inline]
    pub fn push(&mut self, at: Cycle, lp: Lp, m: M) {
        debug_assert!(at >= self.cursor && at - self.cursor <= self.mask, "message beyond wheel horizon");
        self.buckets[(at & self.mask) as usize].push((lp, m));
        self.len += 1;
    }

    /// Hand every message due at `now` to `f`.
    #[inline]
    pub fn deliver_due(&mut self, now: Cycle, mut f: impl FnMut(Lp, M)) {
        self.cursor = now;
        let i = (now & self.mask) as usize;
        if self.buckets[i].is_empty() {
            return;
        }
        let mut b = std::mem::take(&mut self.buckets[i]);
        self.len -= b.len();
        for (lp, m) in b.drain(..) {
            f(lp, m);
        }
        self.buckets[i] = b;
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Earliest cycle `>= from` with a pending message (`Cycle::MAX` if none).
    pub fn next_due(&self, from: Cycle) -> Cycle {
        if self.len == 0 {
            return Cycle::MAX;
        }
        (0..=self.mask)
            .map(|k| from + k)
            .find(|&c| !self.buckets[(c & self.mask) as usize].is_empty())
            .unwrap_or(Cycle::MAX)
    }
}
