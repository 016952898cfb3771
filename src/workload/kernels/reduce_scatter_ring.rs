//! Ring reduce-scatter: `N - 1` steps around a ring of the `N` tasks; in step `s` task `i` sends to
//! `i + 1` the partial sum of one block (its own value in step 0, the one it just received and
//! reduced after) and receives another from `i - 1`; after `N - 1` steps each task holds one block
//! fully reduced (Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
//! workstations", JPDC 69(2), 2009, the first half of the ring all-reduce; Thakur, Rabenseifner and
//! Gropp, IJHPCA 19(1), 2005). `workload.bytes` is each task's input vector; a block
//! is `ceil(bytes / N)` bytes. Its messages and dependencies are those of the ring all-gather (the
//! reduction's arithmetic is not modelled, as in `allreduce-ring`); iterations are separated by
//! `compute_cycles`.

use super::KernelParams;
use crate::error::ConfigError;
use crate::workload::Workload;

pub(super) const DESCRIPTION: &str =
    "ring reduce-scatter of a workload.bytes vector: N-1 steps of a 1/N block to the next task";

pub(super) fn build(k: &KernelParams) -> Result<Workload, ConfigError> {
    super::allgather_ring::ring(k, "reduce-scatter-ring")
}

/// Messages per iteration: every task sends in each of the `n - 1` steps. (For the memory check before building: [`super::Kernel::messages`].)
pub(super) fn messages(n: u32) -> u128 {
    let n = n as u128;
    n * n.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::super::{by_name, rounds, KernelParams};
    use super::*;

    /// The first half of the ring all-reduce: 2(N-1) steps there, N-1 here, with the same
    /// blocks, so it has half the all-reduce's messages and rounds.
    #[test]
    fn it_is_half_a_ring_allreduce() {
        let k = KernelParams { tasks: 6, bytes: 600, iterations: 1, compute_cycles: 0, grid: vec![] };
        let w = build(&k).unwrap();
        let all = (by_name("allreduce-ring").unwrap().build)(&k).unwrap();
        assert_eq!(2 * w.messages(), all.messages());
        assert_eq!(w.messages(), 6 * 5);
        assert_eq!(rounds(&w), Some(5));
        assert_eq!(rounds(&all), Some(10));
        assert_eq!(w.ops_of(2)[0].arg, 100);
        assert_eq!(w.ops_of(2)[0].peer, 3);
    }
}
