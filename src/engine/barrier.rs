//! A sense-counting barrier for the partitions of one process: threads spin briefly, then yield,
//! then sleep on a condition variable.
//!
//! Why three phases: with `link.latency = 1` every window is one cycle, so threads meet thousands of
//! times per second and a wake-up through the kernel on every meeting would cost more than the
//! window itself; spinning is the fast path. But on a machine with as many threads as cores (or
//! fewer cores, or other jobs), a thread that keeps spinning while its partner is descheduled steals
//! the core the partner needs, so after a short spin the waiter yields, and after a few yields it
//! sleeps until the last thread arrives. The last thread only touches the lock when somebody sleeps.

use crossbeam::utils::CachePadded;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Busy-wait iterations before yielding (a few tens of microseconds).
const SPINS: u32 = 4000;
/// `yield_now` calls before sleeping.
const YIELDS: u32 = 64;

/// Barrier for a fixed number of threads, reusable across windows.
#[derive(Debug)]
pub struct SpinBarrier {
    n: usize,
    // Each counter on its own cache line: every arrival writes `count`, every waiter reads
    // `generation`, and sharing a line would make waiters' reads miss on every arrival.
    count: CachePadded<AtomicUsize>,
    generation: CachePadded<AtomicUsize>,
    sleepers: CachePadded<AtomicUsize>,
    lock: Mutex<()>,
    wake: Condvar,
}

impl SpinBarrier {
    /// Barrier for `n` threads.
    pub fn new(n: usize) -> Self {
        SpinBarrier {
            n,
            count: CachePadded::new(AtomicUsize::new(0)),
            generation: CachePadded::new(AtomicUsize::new(0)),
            sleepers: CachePadded::new(AtomicUsize::new(0)),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Wait until all `n` threads have called `wait` for this generation. Everything a thread wrote
    /// before `wait` is visible to every thread after it.
    pub fn wait(&self) {
        if self.n <= 1 {
            return;
        }
        let g = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            // SeqCst pairs with the sleeper's SeqCst increment of `sleepers` and load of
            // `generation`: either we see the sleeper, or it sees the new generation.
            self.generation.fetch_add(1, Ordering::SeqCst);
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                self.wake.notify_all();
            }
            return;
        }
        for _ in 0..SPINS {
            if self.generation.load(Ordering::Acquire) != g {
                return;
            }
            std::hint::spin_loop();
        }
        for _ in 0..YIELDS {
            if self.generation.load(Ordering::Acquire) != g {
                return;
            }
            std::thread::yield_now();
        }
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        while self.generation.load(Ordering::SeqCst) == g {
            guard = self.wake.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::time::Duration;

    #[test]
    fn no_thread_passes_before_all_arrive() {
        let b = SpinBarrier::new(3);
        let c = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for round in 1..=200u64 {
                        c.fetch_add(1, Ordering::SeqCst);
                        b.wait();
                        assert!(c.load(Ordering::SeqCst) >= 3 * round);
                        b.wait();
                    }
                });
            }
        });
    }

    #[test]
    fn sleeping_waiters_are_woken() {
        // One thread arrives late, long after the others have gone to sleep: they must wake up and
        // see everything it wrote before arriving.
        let b = SpinBarrier::new(3);
        let c = AtomicU64::new(0);
        std::thread::scope(|s| {
            for i in 0..3u64 {
                let (b, c) = (&b, &c);
                s.spawn(move || {
                    for round in 1..=5u64 {
                        if i == 0 {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        c.fetch_add(1, Ordering::Relaxed);
                        b.wait();
                        assert_eq!(c.load(Ordering::Relaxed), 3 * round);
                        b.wait();
                    }
                });
            }
        });
        assert_eq!(b.sleepers.load(Ordering::SeqCst), 0);
    }
}
