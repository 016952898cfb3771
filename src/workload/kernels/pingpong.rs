//! Ping-pong between tasks 0 and 1: the latency benchmark of every MPI suite (e.g. the OSU
//! micro-benchmarks' `osu_latency`). Task 0 sends `bytes` to task 1, which answers with `bytes`
//! once the message has arrived and it has computed `compute_cycles`; `iterations` round trips,
//! each starting when the previous answer has arrived.

use super::{tasks_error, KernelParams};
use crate::error::ConfigError;
use crate::workload::{Builder, Origin, Workload};

pub(super) const DESCRIPTION: &str = "two tasks bounce a message of workload.bytes, workload.iterations round trips";

pub(super) fn build(k: &KernelParams) -> Result<Workload, ConfigError> {
    if k.tasks != 2 {
        return Err(tasks_error(k.tasks, "2 (a ping-pong is between two tasks)"));
    }
    let o = Origin::default();
    let mut b = Builder::new(format!("pingpong, {} bytes, {} iterations", k.bytes, k.iterations), 2, None);
    b.set_iterations(k.iterations);
    b.task(0);
    let mut prev = None;
    for _ in 0..k.iterations {
        let s = b.send(1, k.bytes, 0, o);
        let r = b.recv(1, k.bytes, 1, o);
        if let Some(p) = prev {
            b.require(s, p, false);
        }
        b.require(r, s, false);
        prev = Some(r);
    }
    b.task(1);
    let mut prev = None;
    for _ in 0..k.iterations {
        let r = b.recv(0, k.bytes, 0, o);
        if let Some(p) = prev {
            b.require(r, p, false);
        }
        let before_send = if k.compute_cycles > 0 {
            let c = b.calc(k.compute_cycles, o);
            b.require(c, r, false);
            c
        } else {
            r
        };
        let s = b.send(0, k.bytes, 1, o);
        b.require(s, before_send, false);
        prev = Some(s);
    }
    b.finish().map_err(|e| ConfigError::value("workload.kernel", "\"pingpong\"", e.to_string()))
}

/// Messages per iteration: one each way. (For the memory check before building: [`super::Kernel::messages`].)
pub(super) fn messages(_tasks: u32) -> u128 {
    2
}
