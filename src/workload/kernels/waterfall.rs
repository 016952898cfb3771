//! Waterfall, the DAVC paper's third application kernel (Pascual and Navaridas, "High-Performance,
//! Low-Complexity Deadlock Avoidance for Arbitrary Topologies/Routings", section 7.1, "Waterfall":
//! "a large collection of small messages, with very tight causal dependencies ... during the most
//! of the execution time, most of the nodes are injecting messages at once").
//!
//! The paper gives no more than that, and its authors' definition (Navaridas and Miguel-Alonso's
//! micro-kernels, ISPDC 2009; the INRFlow and INSEE traffic generators) could not be found, so this
//! is a documented reading of it: a wavefront pipeline along the task ids. Task 0 starts
//! `workload.iterations` waves, one after another (`workload.compute_cycles` apart when there are
//! any); task `i` forwards each wave to task `i + 1` once it has received it from task `i - 1` and
//! has sent the previous wave (each message `workload.bytes`, meant small). Every message depends
//! on the one before it in the chain, and once the first `N - 1` waves are in the pipe every task
//! but the last injects at once, which are the two properties the paper names. In the telephone
//! model (one message per task per round) it takes `N + W - 2` rounds for `W` waves.

use super::{refused, tasks_error, KernelParams};
use crate::error::ConfigError;
use crate::workload::{Builder, Origin, Workload};

pub(super) const DESCRIPTION: &str =
    "wavefront pipeline: workload.iterations waves of workload.bytes, task i forwards each to i+1 after receiving it";

pub(super) fn build(k: &KernelParams) -> Result<Workload, ConfigError> {
    let n = k.tasks;
    if n < 2 {
        return Err(tasks_error(n, "at least 2"));
    }
    let o = Origin::default();
    let mut b = Builder::new(format!("waterfall, {n} tasks, {} bytes, {} waves", k.bytes, k.iterations), n, None);
    b.set_iterations(k.iterations);
    for i in 0..n {
        b.task(i);
        let mut last_send = None;
        for wave in 0..k.iterations {
            let tag = wave as u64;
            let recv = (i > 0).then(|| b.recv(i - 1, k.bytes, tag, o));
            if i + 1 == n {
                continue;
            }
            let mut before = last_send;
            if i == 0 && wave > 0 && k.compute_cycles > 0 {
                let c = b.calc(k.compute_cycles, o);
                b.require(c, last_send.expect("a previous wave"), false);
                before = Some(c);
            }
            let s = b.send(i + 1, k.bytes, tag, o);
            for on in [recv, before].into_iter().flatten() {
                b.require(s, on, false);
            }
            last_send = Some(s);
        }
    }
    b.finish().map_err(|e| refused("waterfall", e))
}

/// Messages per wave: each task but the last forwards it. (For the memory check before building: [`super::Kernel::messages`].)
pub(super) fn messages(n: u32) -> u128 {
    let n = n as u128;
    n.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::super::{rounds, KernelParams};
    use super::*;
    use crate::workload::OpKind;

    fn params(tasks: u32, waves: u32, compute: u64) -> KernelParams {
        KernelParams { tasks, bytes: 8, iterations: waves, compute_cycles: compute, grid: vec![] }
    }

    /// A middle task: receive wave w from i-1, send it to i+1 after that receive and after its
    /// send of wave w-1; the first task only sends, the last only receives.
    #[test]
    fn each_task_forwards_each_wave() {
        let w = build(&params(4, 3, 0)).unwrap();
        assert_eq!(w.messages(), 3 * 3);
        assert!(w.ops_of(0).iter().all(|o| o.kind == OpKind::Send && o.peer == 1));
        assert!(w.ops_of(3).iter().all(|o| o.kind == OpKind::Recv && o.peer == 2 && o.requires == 0));
        let mid = w.ops_of(2);
        assert_eq!(mid.len(), 6);
        assert_eq!((mid[0].kind, mid[0].peer), (OpKind::Recv, 1));
        assert_eq!((mid[1].kind, mid[1].peer, mid[1].requires), (OpKind::Send, 3, 1));
        assert_eq!(mid[3].requires, 2);
        assert_eq!(w.dependents(2, 1), &[3]);
        assert_eq!(w.dependents(2, 2), &[3]);
    }

    /// A pipeline: N + W - 2 rounds; task 0 spacing the waves by C makes it (W - 1)(1 + C) + N - 1.
    #[test]
    fn rounds_are_those_of_a_pipeline() {
        for (n, waves) in [(2u32, 1u32), (5, 1), (5, 8), (16, 3)] {
            assert_eq!(rounds(&build(&params(n, waves, 0)).unwrap()), Some((n + waves - 2) as u64));
            let c = 4u64;
            let expect = (waves as u64 - 1) * (1 + c) + n as u64 - 1;
            assert_eq!(rounds(&build(&params(n, waves, c)).unwrap()), Some(expect));
        }
    }
}
