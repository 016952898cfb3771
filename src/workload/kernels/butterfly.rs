//! Butterfly, the DAVC paper's second application kernel (Pascual and Navaridas, "High-Performance,
//! Low-Complexity Deadlock Avoidance for Arbitrary Topologies/Routings", section 7.1, "Butterfly":
//! "an optimised, binary implementation of collective operations in which each node communicates
//! with nodes located at power of 2 distances, in terms of task id").
//!
//! `N` (a power of two) tasks, `log2 N` steps per iteration: in step `j` task `i` sends
//! `workload.bytes` to task `i XOR 2^j` and receives as much from it. Step `j + 1`'s send waits for
//! step `j`'s receive (what it forwards or combines); the first step of an iteration waits for the
//! last receive of the one before, through `workload.compute_cycles` of computation when there are
//! any. Unlike `allreduce-recursive-doubling`, a step does not wait for its own send to complete.

use super::{refused, KernelParams};
use crate::error::ConfigError;
use crate::workload::{Builder, Origin, Workload};

pub(super) const DESCRIPTION: &str =
    "log2(N) steps exchanging workload.bytes with task i XOR 2^j, each after the previous step's receive";

pub(super) fn build(k: &KernelParams) -> Result<Workload, ConfigError> {
    let n = k.tasks;
    let steps = super::hypercube_steps(n)?;
    let o = Origin::default();
    let mut b = Builder::new(format!("butterfly, {n} tasks, {} bytes, {} iterations", k.bytes, k.iterations), n, None);
    b.set_iterations(k.iterations);
    for i in 0..n {
        b.task(i);
        let mut last_recv = None;
        for it in 0..k.iterations {
            if it > 0 && k.compute_cycles > 0 {
                let c = b.calc(k.compute_cycles, o);
                b.require(c, last_recv.expect("a previous step"), false);
                last_recv = Some(c);
            }
            for j in 0..steps {
                let tag = it as u64 * steps as u64 + j as u64;
                let s = b.send(i ^ (1 << j), k.bytes, tag, o);
                if let Some(r) = last_recv {
                    b.require(s, r, false);
                }
                last_recv = Some(b.recv(i ^ (1 << j), k.bytes, tag, o));
            }
        }
    }
    b.finish().map_err(|e| refused("butterfly", e))
}

/// Messages per iteration: every task sends in each of the `log2 n` steps. (For the memory check before building: [`super::Kernel::messages`].)
pub(super) fn messages(n: u32) -> u128 {
    let n = n as u128;
    n * (n.max(1).ilog2() as u128)
}

#[cfg(test)]
mod tests {
    use super::super::{rounds, KernelParams};
    use super::*;
    use crate::workload::OpKind;

    fn params(tasks: u32, iterations: u32, compute: u64) -> KernelParams {
        KernelParams { tasks, bytes: 32, iterations, compute_cycles: compute, grid: vec![] }
    }

    /// Task 5 of 8 exchanges with 4, 7 and 1 (5 XOR 1, 2, 4), each send after the previous receive.
    #[test]
    fn partners_are_at_power_of_two_distances() {
        let w = build(&params(8, 1, 0)).unwrap();
        let ops = w.ops_of(5);
        let peers: Vec<u32> = ops.iter().step_by(2).map(|o| o.peer).collect();
        assert_eq!(peers, [4, 7, 1]);
        assert!(ops.iter().step_by(2).all(|o| o.kind == OpKind::Send));
        assert_eq!((ops[0].requires, ops[2].requires, ops[4].requires), (0, 1, 1));
        assert_eq!(w.dependents(5, 1), &[2]);
        assert_eq!(w.messages(), 8 * 3);
    }

    /// One round per step in the telephone model: I log2 N + (I - 1) C.
    #[test]
    fn rounds_are_log2_n_per_iteration() {
        for n in [2u32, 4, 16, 64] {
            let l = n.trailing_zeros() as u64;
            assert_eq!(rounds(&build(&params(n, 1, 0)).unwrap()), Some(l));
            assert_eq!(rounds(&build(&params(n, 3, 7)).unwrap()), Some(3 * l + 2 * 7));
        }
    }

    #[test]
    fn task_counts_must_be_powers_of_two() {
        let e = build(&params(12, 1, 0)).unwrap_err().to_string();
        assert!(e.contains("workload.tasks") && e.contains("12") && e.contains("power of two"), "{e}");
    }
}
