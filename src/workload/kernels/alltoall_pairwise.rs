//! Pairwise-exchange all-to-all: `N - 1` steps; in step `s` (from 1) task `i` sends its block for
//! task `(i + s) mod N` and receives the block of task `(i - s) mod N` (Thakur, Rabenseifner and
//! Gropp, "Optimization of collective communication operations in MPICH", IJHPCA 19(1), 2005: the
//! pairwise-exchange algorithm of `MPI_Alltoall` for long messages, in its form for any `N`).
//! `workload.bytes` is one block, what each task sends to each other task (`MPI_Alltoall`'s send
//! count). Step `s + 1`'s send waits for step `s`'s send and receive (an `MPI_Sendrecv` per step).
//! Iterations repeat it, separated by `compute_cycles`.

use super::{refused, require_all, tasks_error, KernelParams};
use crate::error::ConfigError;
use crate::workload::{Builder, Origin, Workload};

pub(super) const DESCRIPTION: &str =
    "pairwise-exchange all-to-all: N-1 steps, step s sends workload.bytes to task i+s and receives from i-s";

pub(super) fn build(k: &KernelParams) -> Result<Workload, ConfigError> {
    let n = k.tasks;
    if n < 2 {
        return Err(tasks_error(n, "at least 2"));
    }
    let steps = n - 1;
    let o = Origin::default();
    let mut b = Builder::new(
        format!("alltoall-pairwise, {n} tasks, {} bytes per pair, {} iterations", k.bytes, k.iterations),
        n,
        None,
    );
    b.set_iterations(k.iterations);
    for i in 0..n {
        b.task(i);
        let mut last: Vec<u32> = Vec::with_capacity(2);
        for it in 0..k.iterations {
            if it > 0 && k.compute_cycles > 0 {
                let c = b.calc(k.compute_cycles, o);
                require_all(&mut b, c, &last);
                last = vec![c];
            }
            for step in 1..=steps {
                let tag = it as u64;
                let s = b.send((i + step) % n, k.bytes, tag, o);
                require_all(&mut b, s, &last);
                let r = b.recv((i + n - step) % n, k.bytes, tag, o);
                last = vec![s, r];
            }
        }
    }
    b.finish().map_err(|e| refused("alltoall-pairwise", e))
}

/// Messages per iteration: every task sends to each of the `n - 1` others. (For the memory check before building: [`super::Kernel::messages`].)
pub(super) fn messages(n: u32) -> u128 {
    let n = n as u128;
    n * n.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::super::{rounds, KernelParams};
    use super::*;
    use crate::workload::OpKind;

    fn params(tasks: u32, iterations: u32, compute: u64) -> KernelParams {
        KernelParams { tasks, bytes: 128, iterations, compute_cycles: compute, grid: vec![] }
    }

    /// Every task sends one block to every other task, and receives one from each: task 2 of 5
    /// sends to 3, 4, 0, 1 and receives from 1, 0, 4, 3.
    #[test]
    fn every_pair_exchanges_one_block() {
        let w = build(&params(5, 1, 0)).unwrap();
        assert_eq!(w.messages(), 5 * 4);
        let ops = w.ops_of(2);
        let sends: Vec<u32> = ops.iter().filter(|o| o.kind == OpKind::Send).map(|o| o.peer).collect();
        let recvs: Vec<u32> = ops.iter().filter(|o| o.kind == OpKind::Recv).map(|o| o.peer).collect();
        assert_eq!(sends, [3, 4, 0, 1]);
        assert_eq!(recvs, [1, 0, 4, 3]);
        for t in 0..5 {
            let mut to: Vec<u32> = w.ops_of(t).iter().filter(|o| o.kind == OpKind::Send).map(|o| o.peer).collect();
            to.sort_unstable();
            assert_eq!(to, (0..5).filter(|&u| u != t).collect::<Vec<_>>());
        }
    }

    #[test]
    fn rounds_are_n_minus_one_per_iteration() {
        for n in [2u32, 5, 8] {
            assert_eq!(rounds(&build(&params(n, 1, 0)).unwrap()), Some(n as u64 - 1));
            assert_eq!(rounds(&build(&params(n, 2, 9)).unwrap()), Some(2 * (n as u64 - 1) + 9));
        }
    }
}
