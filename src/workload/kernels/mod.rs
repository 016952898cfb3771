//! Built-in kernels: one file each, registered in [`REGISTRY`] by name (`workload.kernel`).
//!
//! Every kernel builds a [`Workload`] from the same [`KernelParams`] (task count, message bytes,
//! iterations, compute cycles between iterations), reading the ones that apply to it.

mod allreduce_recursive_doubling;
mod allreduce_ring;
mod pingpong;

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
}

/// Every built-in kernel.
pub const REGISTRY: &[Kernel] = &[
    Kernel { name: "pingpong", description: pingpong::DESCRIPTION, build: pingpong::build },
    Kernel { name: "allreduce-ring", description: allreduce_ring::DESCRIPTION, build: allreduce_ring::build },
    Kernel {
        name: "allreduce-recursive-doubling",
        description: allreduce_recursive_doubling::DESCRIPTION,
        build: allreduce_recursive_doubling::build,
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
