//! Recursive-doubling all-reduce: in step `j` (of `log2 N`) task `i` exchanges its whole buffer
//! with task `i XOR 2^j` and reduces (Thakur, Rabenseifner and Gropp, "Optimization of collective
//! communication operations in MPICH", IJHPCA 19(1), 2005, section 4.5; the "hypercube"
//! all-reduce). `workload.bytes` is the buffer, sent whole in every step; `N` must be a power of
//! two. Step `j + 1`'s send waits for step `j`'s receive (the reduced data) and send. Iterations
//! repeat it, separated by `compute_cycles`.

use super::KernelParams;
use crate::error::ConfigError;
use crate::workload::{Builder, Origin, Workload};

pub(super) const DESCRIPTION: &str =
    "recursive-doubling all-reduce: log2(N) exchanges of the whole workload.bytes at distances 1, 2, 4, ...";

pub(super) fn build(k: &KernelParams) -> Result<Workload, ConfigError> {
    let n = k.tasks;
    let steps = super::hypercube_steps(n)?;
    let o = Origin::default();
    let mut b = Builder::new(
        format!("allreduce-recursive-doubling, {n} tasks, {} bytes, {} iterations", k.bytes, k.iterations),
        n,
        None,
    );
    b.set_iterations(k.iterations);
    for i in 0..n {
        b.task(i);
        let mut chain = super::SendrecvChain::default();
        for it in 0..k.iterations {
            chain.iteration(&mut b, it, k.compute_cycles);
            for j in 0..steps {
                let peer = i ^ (1 << j);
                let tag = it as u64 * steps as u64 + j as u64;
                let s = b.send(peer, k.bytes, tag, o);
                let r = b.recv(peer, k.bytes, tag, o);
                chain.step(&mut b, s, r);
            }
        }
    }
    b.finish().map_err(|e| ConfigError::value("workload.kernel", "\"allreduce-recursive-doubling\"", e.to_string()))
}

/// Messages per iteration: every task sends in each of the `log2 n` steps. (For the memory check before building: [`super::Kernel::messages`].)
pub(super) fn messages(n: u32) -> u128 {
    let n = n as u128;
    n * (n.max(1).ilog2() as u128)
}
