//! Binomial-tree broadcast from task 0 (Thakur, Rabenseifner and Gropp, "Optimization of
//! collective communication operations in MPICH", IJHPCA 19(1), 2005: the binomial tree of
//! `MPI_Bcast` for short messages, `ceil(log2 N)` steps). Task `i > 0` receives `workload.bytes`
//! from `i - 2^k`, `2^k` the lowest set bit of `i`; then it sends to `i + 2^j` for `j = k - 1` down
//! to 0 (the root: from `2^(ceil(log2 N) - 1)` down), where `i + 2^j < N`: farthest first, so the
//! largest subtree starts first, as MPICH does. Its sends and receives are blocking: every
//! operation of a task waits for the one before it in its program, iterations included (separated
//! by `compute_cycles`).

use super::{refused, tasks_error, KernelParams};
use crate::error::ConfigError;
use crate::workload::{Builder, Origin, Workload};

pub(super) const DESCRIPTION: &str =
    "binomial-tree broadcast of workload.bytes from task 0: ceil(log2 N) steps, farthest child first";

pub(super) fn build(k: &KernelParams) -> Result<Workload, ConfigError> {
    let n = k.tasks;
    if n < 2 {
        return Err(tasks_error(n, "at least 2"));
    }
    let top = n.next_power_of_two();
    let o = Origin::default();
    let mut b =
        Builder::new(format!("broadcast-binomial, {n} tasks, {} bytes, {} iterations", k.bytes, k.iterations), n, None);
    b.set_iterations(k.iterations);
    for i in 0..n {
        b.task(i);
        let low = if i == 0 { top } else { 1 << i.trailing_zeros() };
        let mut last = None;
        let mut then = |b: &mut Builder, op: u32| {
            if let Some(p) = last.replace(op) {
                b.require(op, p, false);
            }
        };
        for it in 0..k.iterations {
            let tag = it as u64;
            if it > 0 && k.compute_cycles > 0 {
                let c = b.calc(k.compute_cycles, o);
                then(&mut b, c);
            }
            if i > 0 {
                let r = b.recv(i - low, k.bytes, tag, o);
                then(&mut b, r);
            }
            let mut m = low >> 1;
            while m > 0 {
                if i + m < n {
                    let s = b.send(i + m, k.bytes, tag, o);
                    then(&mut b, s);
                }
                m >>= 1;
            }
        }
    }
    b.finish().map_err(|e| refused("broadcast-binomial", e))
}

/// Messages per iteration: every task but the root receives once. (For the memory check before building: [`super::Kernel::messages`].)
pub(super) fn messages(n: u32) -> u128 {
    let n = n as u128;
    n.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::super::{rounds, KernelParams};
    use super::*;
    use crate::workload::OpKind;

    fn params(tasks: u32, iterations: u32, compute: u64) -> KernelParams {
        KernelParams { tasks, bytes: 8, iterations, compute_cycles: compute, grid: vec![] }
    }

    fn sends(w: &Workload, t: u32) -> Vec<u32> {
        w.ops_of(t).iter().filter(|o| o.kind == OpKind::Send).map(|o| o.peer).collect()
    }

    /// The tree of 8 (drawn by hand): 0 -> 4, 2, 1; 4 -> 6, 5; 2 -> 3; 6 -> 7. Of 6: 4 -> 5 only
    /// (6 does not exist). Every task but the root receives once: N - 1 messages.
    #[test]
    fn the_tree_is_binomial_farthest_child_first() {
        let w = build(&params(8, 1, 0)).unwrap();
        assert_eq!(sends(&w, 0), [4, 2, 1]);
        assert_eq!(sends(&w, 4), [6, 5]);
        assert_eq!(sends(&w, 2), [3]);
        assert_eq!(sends(&w, 6), [7]);
        assert!(sends(&w, 7).is_empty() && sends(&w, 5).is_empty());
        assert_eq!(w.ops_of(6)[0].peer, 4);
        assert_eq!(w.ops_of(6)[0].kind, OpKind::Recv);
        assert_eq!(w.messages(), 7);
        let w = build(&params(6, 1, 0)).unwrap();
        assert_eq!(sends(&w, 0), [4, 2, 1]);
        assert_eq!(sends(&w, 4), [5]);
        assert_eq!(w.messages(), 5);
        // Blocking: each operation after the one before it.
        assert!(w.ops_of(4).iter().skip(1).all(|o| o.requires == 1));
    }

    /// ceil(log2 N) rounds per broadcast (the binomial tree's optimum in the telephone model), and
    /// the iterations do not overlap: I ceil(log2 N) + (I - 1) C.
    #[test]
    fn rounds_are_ceil_log2_n() {
        for n in [2u32, 3, 5, 6, 8, 13, 16, 33] {
            let l = n.next_power_of_two().trailing_zeros() as u64;
            assert_eq!(rounds(&build(&params(n, 1, 0)).unwrap()), Some(l), "n = {n}");
            assert_eq!(rounds(&build(&params(n, 3, 4)).unwrap()), Some(3 * l + 2 * 4), "n = {n}");
        }
    }
}
