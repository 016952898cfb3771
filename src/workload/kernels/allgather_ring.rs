//! Ring all-gather: `N - 1` steps around a ring of the `N` tasks; in step `s` task `i` sends to
//! `i + 1` the block it received in step `s - 1` (its own in step 0) and receives one from `i - 1`
//! (Thakur, Rabenseifner and Gropp, "Optimization of collective communication operations in
//! MPICH", IJHPCA 19(1), 2005: the ring algorithm of MPICH's `MPI_Allgather` for long messages).
//! `workload.bytes` is the gathered buffer; a block is `ceil(bytes / N)` bytes. Step `s + 1`'s send
//! waits for step `s`'s receive and send (an `MPI_Sendrecv` per step). Iterations repeat it,
//! separated by `compute_cycles`.

use super::{refused, require_all, tasks_error, KernelParams};
use crate::error::ConfigError;
use crate::workload::{Builder, Origin, Workload};

pub(super) const DESCRIPTION: &str =
    "ring all-gather of a workload.bytes buffer: N-1 steps of a 1/N block to the next task";

pub(super) fn build(k: &KernelParams) -> Result<Workload, ConfigError> {
    ring(k, "allgather-ring")
}

/// `N - 1` ring steps of a `ceil(bytes / N)` block per iteration, each step's send after the
/// previous step's send and receive: the communication of the ring all-gather and of the ring
/// reduce-scatter alike.
pub(super) fn ring(k: &KernelParams, name: &str) -> Result<Workload, ConfigError> {
    let n = k.tasks;
    if n < 2 {
        return Err(tasks_error(n, "at least 2"));
    }
    let chunk = k.bytes.div_ceil(n as u64);
    let steps = n - 1;
    let o = Origin::default();
    let mut b = Builder::new(format!("{name}, {n} tasks, {} bytes, {} iterations", k.bytes, k.iterations), n, None);
    b.set_iterations(k.iterations);
    for i in 0..n {
        b.task(i);
        let (next, prev) = ((i + 1) % n, (i + n - 1) % n);
        let mut last: Vec<u32> = Vec::with_capacity(2);
        for it in 0..k.iterations {
            if it > 0 && k.compute_cycles > 0 {
                let c = b.calc(k.compute_cycles, o);
                require_all(&mut b, c, &last);
                last = vec![c];
            }
            for step in 0..steps {
                let tag = it as u64 * steps as u64 + step as u64;
                let s = b.send(next, chunk, tag, o);
                require_all(&mut b, s, &last);
                let r = b.recv(prev, chunk, tag, o);
                last = vec![s, r];
            }
        }
    }
    b.finish().map_err(|e| refused(name, e))
}

/// Messages per iteration: every task sends in each of the `n - 1` steps. (For the memory check before building: [`super::Kernel::messages`].)
pub(super) fn messages(n: u32) -> u128 {
    let n = n as u128;
    n * n.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::super::{rounds, KernelParams};
    use super::*;

    fn params(tasks: u32, bytes: u64, iterations: u32, compute: u64) -> KernelParams {
        KernelParams { tasks, bytes, iterations, compute_cycles: compute, grid: vec![] }
    }

    /// 5 tasks, 1000 bytes: 4 steps of 200-byte blocks to the next task; 1001 bytes round the
    /// block up to 201. Every task sends N - 1 blocks: N (N - 1) messages.
    #[test]
    fn blocks_go_around_the_ring() {
        let w = build(&params(5, 1000, 1, 0)).unwrap();
        assert_eq!(w.messages(), 5 * 4);
        let ops = w.ops_of(0);
        assert!(ops.iter().step_by(2).all(|o| o.peer == 1 && o.arg == 200));
        assert!(ops.iter().skip(1).step_by(2).all(|o| o.peer == 4 && o.arg == 200));
        assert_eq!(ops[2].requires, 2);
        let w = build(&params(5, 1001, 1, 0)).unwrap();
        assert_eq!(w.ops_of(3)[0].arg, 201);
    }

    /// N - 1 rounds per iteration.
    #[test]
    fn rounds_are_n_minus_one_per_iteration() {
        for n in [2u32, 3, 7, 16] {
            assert_eq!(rounds(&build(&params(n, 64, 1, 0)).unwrap()), Some(n as u64 - 1));
            assert_eq!(rounds(&build(&params(n, 64, 3, 5)).unwrap()), Some(3 * (n as u64 - 1) + 2 * 5));
        }
    }
}
