//! Ring all-reduce: a reduce-scatter then an all-gather around a ring of the `N` tasks, each in
//! `N - 1` steps moving one `1/N` chunk of the buffer to the next task (Patarasuk and Yuan,
//! "Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 69(2), 2009;
//! Thakur, Rabenseifner and Gropp, "Optimization of collective communication operations in
//! MPICH", IJHPCA 19(1), 2005, section 4.5). `workload.bytes` is the whole buffer; a chunk is
//! `ceil(bytes / N)` bytes.
//!
//! In step `s` task `i` sends to `i + 1` and receives from `i - 1` (mod `N`), as an
//! `MPI_Sendrecv`; step `s + 1`'s send waits for step `s`'s receive (it forwards, or reduces into,
//! the chunk just received) and for step `s`'s send (its buffer). Iterations repeat the whole
//! all-reduce, separated by `compute_cycles` of computation.

use super::{tasks_error, KernelParams};
use crate::error::ConfigError;
use crate::workload::{Builder, Origin, Workload};

pub(super) const DESCRIPTION: &str =
    "ring all-reduce of a workload.bytes buffer: 2(N-1) steps of a 1/N chunk to the next task";

pub(super) fn build(k: &KernelParams) -> Result<Workload, ConfigError> {
    let n = k.tasks;
    if n < 2 {
        return Err(tasks_error(n, "at least 2"));
    }
    let chunk = k.bytes.div_ceil(n as u64);
    let steps = 2 * (n - 1);
    let o = Origin::default();
    let mut b =
        Builder::new(format!("allreduce-ring, {n} tasks, {} bytes, {} iterations", k.bytes, k.iterations), n, None);
    b.set_iterations(k.iterations);
    for i in 0..n {
        b.task(i);
        let (next, prev_task) = ((i + 1) % n, (i + n - 1) % n);
        let mut chain = super::SendrecvChain::default();
        for it in 0..k.iterations {
            chain.iteration(&mut b, it, k.compute_cycles);
            for step in 0..steps {
                let tag = (it as u64) * steps as u64 + step as u64;
                let s = b.send(next, chunk, tag, o);
                let r = b.recv(prev_task, chunk, tag, o);
                chain.step(&mut b, s, r);
            }
        }
    }
    b.finish().map_err(|e| ConfigError::value("workload.kernel", "\"allreduce-ring\"", e.to_string()))
}

/// Messages per iteration: every task sends in each of the `2 (n - 1)` steps. (For the memory check before building: [`super::Kernel::messages`].)
pub(super) fn messages(n: u32) -> u128 {
    let n = n as u128;
    2 * n * (n - 1)
}
