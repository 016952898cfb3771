//! A sense-counting spin barrier: threads spin briefly, then yield, so that oversubscribed runs
//! (more threads than cores) still make progress.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Barrier for a fixed number of threads, reusable across windows.
#[derive(Debug)]
pub struct SpinBarrier {
    n: usize,
    count: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    /// Barrier for `n` threads.
    pub fn new(n: usize) -> Self {
        SpinBarrier { n, count: AtomicUsize::new(0), generation: AtomicUsize::new(0) }
    }

    /// Wait until all `n` threads have called `wait` for this generation. Everything a thread wrote
    /// before `wait` is visible to every thread after it.
    pub fn wait(&self) {
        let g = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == g {
            if spins < 200 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

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
}
