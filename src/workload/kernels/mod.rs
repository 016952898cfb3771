//! Built-in kernels: one file each, registered in [`REGISTRY`] by name (`workload.kernel`).
//!
//! Every kernel builds a [`Workload`] from the same [`KernelParams`] (task count, message bytes,
//! iterations, compute cycles between iterations), reading the ones that apply to it.

mod allgather_ring;
mod allreduce_recursive_doubling;
mod allreduce_ring;
mod alltoall_pairwise;
mod broadcast_binomial;
mod butterfly;
mod pingpong;
mod reduce_scatter_ring;
mod stencil;
mod waterfall;

use super::Workload;
use crate::error::ConfigError;

/// The sizes a kernel is built with (the `[workload]` keys).
#[derive(Debug, Clone, PartialEq)]
pub struct KernelParams {
    /// Tasks (`workload.tasks`).
    pub tasks: u32,
    /// Bytes of each message, or of the whole buffer for collectives that split it
    /// (`workload.bytes`; each kernel's doc says which).
    pub bytes: u64,
    /// Iterations (`workload.iterations`).
    pub iterations: u32,
    /// Cycles of computation between iterations (`workload.compute_cycles`).
    pub compute_cycles: u64,
    /// The virtual grid of the stencils (`workload.grid`); empty: the most nearly square or cubic
    /// grid of `tasks`.
    pub grid: Vec<u32>,
}

/// A kernel: its `workload.kernel` name, a one-line description, and its builder.
pub struct Kernel {
    /// Name under `workload.kernel`.
    pub name: &'static str,
    /// One line for `hxsim list` and the reference.
    pub description: &'static str,
    /// Build the workload, or say which key's value it cannot take.
    pub build: fn(&KernelParams) -> Result<Workload, ConfigError>,
    /// Messages of one iteration for `n` tasks, exactly or a lower bound: how large the workload
    /// will be, known before building it ([`Kernel::min_bytes`]).
    pub messages: fn(u32) -> u128,
}

impl Kernel {
    /// A lower bound of the bytes the built workload takes: each message is a send and a receive
    /// ([`Workload::bytes_for`], without the dependencies). A kernel of a million tasks whose
    /// operations grow as `n^2` (a ring all-reduce over all of them: 4 x 10^12 operations) is
    /// refused from this before anything is allocated.
    pub fn min_bytes(&self, k: &KernelParams) -> u128 {
        let ops = 2 * (self.messages)(k.tasks) * k.iterations as u128;
        let per_op = Workload::bytes_for(0, 1, 0) as u128 - 8;
        ops * per_op
    }
}

/// Every built-in kernel.
pub const REGISTRY: &[Kernel] = &[
    Kernel {
        name: "pingpong",
        description: pingpong::DESCRIPTION,
        build: pingpong::build,
        messages: pingpong::messages,
    },
    Kernel {
        name: "allreduce-ring",
        description: allreduce_ring::DESCRIPTION,
        build: allreduce_ring::build,
        messages: allreduce_ring::messages,
    },
    Kernel {
        name: "allreduce-recursive-doubling",
        description: allreduce_recursive_doubling::DESCRIPTION,
        build: allreduce_recursive_doubling::build,
        messages: allreduce_recursive_doubling::messages,
    },
    Kernel {
        name: "stencil-2d",
        description: stencil::DESCRIPTION_2D,
        build: stencil::build_2d,
        messages: stencil::messages,
    },
    Kernel {
        name: "stencil-3d",
        description: stencil::DESCRIPTION_3D,
        build: stencil::build_3d,
        messages: stencil::messages,
    },
    Kernel {
        name: "butterfly",
        description: butterfly::DESCRIPTION,
        build: butterfly::build,
        messages: butterfly::messages,
    },
    Kernel {
        name: "waterfall",
        description: waterfall::DESCRIPTION,
        build: waterfall::build,
        messages: waterfall::messages,
    },
    Kernel {
        name: "allgather-ring",
        description: allgather_ring::DESCRIPTION,
        build: allgather_ring::build,
        messages: allgather_ring::messages,
    },
    Kernel {
        name: "reduce-scatter-ring",
        description: reduce_scatter_ring::DESCRIPTION,
        build: reduce_scatter_ring::build,
        messages: reduce_scatter_ring::messages,
    },
    Kernel {
        name: "alltoall-pairwise",
        description: alltoall_pairwise::DESCRIPTION,
        build: alltoall_pairwise::build,
        messages: alltoall_pairwise::messages,
    },
    Kernel {
        name: "broadcast-binomial",
        description: broadcast_binomial::DESCRIPTION,
        build: broadcast_binomial::build,
        messages: broadcast_binomial::messages,
    },
];

/// The kernel named `name`.
pub fn by_name(name: &str) -> Option<&'static Kernel> {
    REGISTRY.iter().find(|k| k.name == name)
}

/// Every kernel name.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|k| k.name).collect()
}

/// The error for a task count a kernel cannot take.
pub(crate) fn tasks_error(n: u32, allowed: &str) -> ConfigError {
    ConfigError::value("workload.tasks", n, allowed)
}

/// `log2 n` for the kernels that pair task `i` with `i XOR 2^j` (recursive doubling, butterfly),
/// or the error for a task count that is not a power of two (at least 2).
pub(crate) fn hypercube_steps(n: u32) -> Result<u32, ConfigError> {
    if n < 2 || !n.is_power_of_two() {
        return Err(tasks_error(n, "a power of two, at least 2"));
    }
    Ok(n.trailing_zeros())
}

/// The error for a kernel whose workload the builder refused (a bug in the kernel, reported
/// rather than panicking).
pub(crate) fn refused(kernel: &str, e: super::WorkloadError) -> ConfigError {
    ConfigError::value("workload.kernel", format!("\"{kernel}\""), e.to_string())
}

/// Dependencies of the operations of one step on those of the step before: `op` waits for every
/// operation in `on` (or for nothing when `on` is empty).
pub(crate) fn require_all(b: &mut super::Builder, op: super::OpIndex, on: &[super::OpIndex]) {
    for &p in on {
        b.require(op, p, false);
    }
}

/// [`super::replay::rounds`], `None` where the tasks wait for each other: the kernels' tests
/// check their round counts against closed forms.
#[cfg(test)]
pub(crate) fn rounds(w: &Workload) -> Option<u64> {
    super::replay::rounds(w).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Builder, Origin};

    fn params(tasks: u32, iterations: u32, compute: u64) -> KernelParams {
        KernelParams { tasks, bytes: 256, iterations, compute_cycles: compute, grid: vec![] }
    }

    /// The telephone model on the examples: a ping-pong round trip is 2 rounds (plus the
    /// responder's calc), the ring all-reduce 2(N - 1), recursive doubling log2 N; and two tasks
    /// that each receive before sending never finish.
    #[test]
    fn rounds_of_the_examples_and_of_a_deadlock() {
        let pp = by_name("pingpong").unwrap().build;
        assert_eq!(rounds(&pp(&params(2, 5, 0)).unwrap()), Some(10));
        assert_eq!(rounds(&pp(&params(2, 5, 3)).unwrap()), Some(10 + 5 * 3));
        let ring = by_name("allreduce-ring").unwrap().build;
        assert_eq!(rounds(&ring(&params(7, 1, 0)).unwrap()), Some(12));
        let rd = by_name("allreduce-recursive-doubling").unwrap().build;
        assert_eq!(rounds(&rd(&params(32, 2, 0)).unwrap()), Some(10));

        let o = Origin::default();
        let mut b = Builder::new("deadlock", 2, None);
        for t in 0..2 {
            b.task(t);
            let r = b.recv(1 - t, 8, 0, o);
            let s = b.send(1 - t, 8, 0, o);
            b.require(s, r, false);
        }
        assert_eq!(rounds(&b.finish().unwrap()), None);
    }

    /// Every kernel builds at a size it accepts, completes (no task waits forever), is named after
    /// itself and refuses a task count of 1.
    #[test]
    fn every_kernel_builds_and_completes() {
        for k in REGISTRY {
            let tasks = if k.name == "pingpong" { 2 } else { 16 };
            let w = (k.build)(&params(tasks, 3, 10)).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            assert!(w.name().starts_with(k.name), "{}", w.name());
            assert_eq!(w.tasks(), tasks);
            assert_eq!(w.iterations(), Some(3));
            assert!(rounds(&w).is_some(), "{} does not complete", k.name);
            assert!(!k.description.is_empty());
            let e = (k.build)(&params(1, 1, 0)).expect_err(k.name).to_string();
            assert!(e.contains("workload.tasks"), "{}: {e}", k.name);
        }
        assert_eq!(names().len(), REGISTRY.len());
    }
}

/// The dependencies of a task that runs `MPI_Sendrecv` steps in sequence, iteration after
/// iteration (the ring and recursive-doubling all-reduces): a step's send waits for the previous
/// step's send (its buffer) and receive (the data it forwards or reduces), and from the second
/// iteration on the first step waits for `compute_cycles` of computation after the last step.
#[derive(Default)]
pub(crate) struct SendrecvChain {
    last: Option<(super::OpIndex, super::OpIndex)>,
    gate: Option<super::OpIndex>,
}

impl SendrecvChain {
    /// Start iteration `it` of the current task.
    pub(crate) fn iteration(&mut self, b: &mut super::Builder, it: u32, compute_cycles: u64) {
        if let (true, Some((s, r))) = (it > 0 && compute_cycles > 0, self.last) {
            let c = b.calc(compute_cycles, super::Origin::default());
            b.require(c, s, false);
            b.require(c, r, false);
            self.gate = Some(c);
        }
    }

    /// The step whose send is `s` and receive `r` (just added to the current task).
    pub(crate) fn step(&mut self, b: &mut super::Builder, s: super::OpIndex, r: super::OpIndex) {
        match (self.gate.take(), self.last) {
            (Some(c), _) => b.require(s, c, false),
            (None, Some((ps, pr))) => {
                b.require(s, ps, false);
                b.require(s, pr, false);
            }
            (None, None) => {}
        }
        self.last = Some((s, r));
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// [`Kernel::messages`] is what the built workload has per iteration (a lower bound for the
    /// stencils, whose count depends on the grid), so the memory check before building never
    /// refuses a workload that would fit.
    #[test]
    fn messages_before_building_match_the_built_workload() {
        for k in REGISTRY {
            for n in [2u32, 4, 8, 12, 16, 64] {
                if k.name == "pingpong" && n != 2 {
                    continue;
                }
                let p = KernelParams { tasks: n, bytes: 100, iterations: 3, compute_cycles: 5, grid: Vec::new() };
                let Ok(w) = (k.build)(&p) else { continue };
                let want = 3 * (k.messages)(n);
                if k.name.starts_with("stencil") {
                    assert!(w.messages() as u128 >= want, "{} with {n} tasks: {} < {want}", k.name, w.messages());
                } else {
                    assert_eq!(w.messages() as u128, want, "{} with {n} tasks", k.name);
                }
                assert!(k.min_bytes(&p) <= w.bytes() as u128, "{} with {n} tasks", k.name);
            }
        }
    }
}
