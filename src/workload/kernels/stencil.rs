//! Stencil 2D and 3D, the DAVC paper's first application kernels (Pascual and Navaridas,
//! "High-Performance, Low-Complexity Deadlock Avoidance for Arbitrary Topologies/Routings", section
//! 7.1, "Stencil 2D and 3D": "the application tasks are arranged in a 2D or 3D lattice and compute
//! for a certain part of the matrix and only need communicating with its neighbours in this virtual
//! topology").
//!
//! The tasks are laid out on a virtual grid (`workload.grid`, its product the task count; empty:
//! the most nearly square or cubic grid, as `MPI_Dims_create` chooses it), task `x + X (y + Y z)` at
//! `(x, y, z)`. The lattice is not periodic: a task on the boundary has fewer neighbours (the
//! paper says lattice, not torus; the authors' INRFlow/INSEE stencil sources could not be found to
//! check). In every iteration each task sends `workload.bytes` to each of its 2, 4 or 6 neighbours
//! and receives as much from each (a halo exchange of `MPI_Isend`s and `MPI_Irecv`s closed by one
//! `MPI_Waitall`); the next iteration's sends wait for all of this iteration's sends and receives,
//! through `workload.compute_cycles` of computation when there are any. Receives are posted at
//! once (they carry the iteration as their tag, so each pairs with its own iteration's send).

use super::{refused, require_all, tasks_error, KernelParams};
use crate::error::ConfigError;
use crate::workload::{Builder, OpIndex, Origin, Workload};

pub(super) const DESCRIPTION_2D: &str =
    "halo exchange on a 2-D grid (workload.grid): workload.bytes to and from each of 4 neighbours per iteration";
pub(super) const DESCRIPTION_3D: &str =
    "halo exchange on a 3-D grid (workload.grid): workload.bytes to and from each of 6 neighbours per iteration";

pub(super) fn build_2d(k: &KernelParams) -> Result<Workload, ConfigError> {
    build(k, 2, "stencil-2d")
}

pub(super) fn build_3d(k: &KernelParams) -> Result<Workload, ConfigError> {
    build(k, 3, "stencil-3d")
}

/// The grid of `tasks` with `d` sides, non-increasing, whose largest side is smallest (then its
/// second largest): the most nearly square or cubic, as `MPI_Dims_create` (12 tasks: 4 x 3 and
/// 3 x 2 x 2).
pub(crate) fn balanced_grid(tasks: u32, d: usize) -> Vec<u32> {
    let divisors = |n: u32| {
        (1..).take_while(move |&i: &u32| (i as u64) * (i as u64) <= n as u64).filter(move |i| n.is_multiple_of(*i))
    };
    match d {
        2 => {
            let b = divisors(tasks).last().unwrap_or(1);
            vec![tasks / b, b]
        }
        _ => {
            // Smallest side c <= cbrt(n), middle b <= sqrt(n / c); minimise the largest, then the middle.
            let mut best = vec![tasks, 1, 1];
            for c in divisors(tasks).filter(|&c| (c as u64).pow(3) <= tasks as u64) {
                let m = tasks / c;
                for b in divisors(m).filter(|&b| b >= c) {
                    let a = m / b;
                    if (a, b) < (best[0], best[1]) {
                        best = vec![a, b, c];
                    }
                }
            }
            best
        }
    }
}

fn grid(k: &KernelParams, d: usize) -> Result<Vec<u32>, ConfigError> {
    if k.tasks < 2 {
        return Err(tasks_error(k.tasks, "at least 2"));
    }
    if k.grid.is_empty() {
        return Ok(balanced_grid(k.tasks, d));
    }
    let shown = format!("{:?}", k.grid);
    if k.grid.len() != d {
        return Err(ConfigError::value(
            "workload.grid",
            shown,
            format!("{d} sides (or [] for the most balanced grid)"),
        ));
    }
    let product = k.grid.iter().try_fold(1u64, |p, &s| p.checked_mul(s as u64).filter(|_| s > 0));
    if product != Some(k.tasks as u64) {
        return Err(ConfigError::value(
            "workload.grid",
            shown,
            format!("sides of at least 1 whose product is workload.tasks = {}", k.tasks),
        ));
    }
    Ok(k.grid.clone())
}

/// The neighbours of task `t` on the non-periodic grid `dims`, in the order -x, +x, -y, +y, -z, +z.
pub(crate) fn neighbours(t: u32, dims: &[u32], out: &mut Vec<u32>) {
    out.clear();
    let mut stride = 1;
    for &side in dims {
        let c = (t / stride) % side;
        if c > 0 {
            out.push(t - stride);
        }
        if c + 1 < side {
            out.push(t + stride);
        }
        stride *= side;
    }
}

fn build(k: &KernelParams, d: usize, name: &str) -> Result<Workload, ConfigError> {
    let dims = grid(k, d)?;
    let n = k.tasks;
    let o = Origin::default();
    let shape = dims.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x");
    let mut b = Builder::new(format!("{name}, {shape} grid, {} bytes, {} iterations", k.bytes, k.iterations), n, None);
    b.set_iterations(k.iterations);
    let mut nbrs = Vec::with_capacity(2 * d);
    let mut prev: Vec<OpIndex> = Vec::with_capacity(4 * d);
    let mut cur: Vec<OpIndex> = Vec::with_capacity(4 * d);
    for t in 0..n {
        b.task(t);
        neighbours(t, &dims, &mut nbrs);
        prev.clear();
        for it in 0..k.iterations {
            let gate = if it > 0 && k.compute_cycles > 0 {
                let c = b.calc(k.compute_cycles, o);
                require_all(&mut b, c, &prev);
                Some(c)
            } else {
                None
            };
            cur.clear();
            for &p in &nbrs {
                let s = b.send(p, k.bytes, it as u64, o);
                match gate {
                    Some(c) => b.require(s, c, false),
                    None => require_all(&mut b, s, &prev),
                }
                cur.push(s);
            }
            for &p in &nbrs {
                cur.push(b.recv(p, k.bytes, it as u64, o));
            }
            std::mem::swap(&mut prev, &mut cur);
        }
    }
    b.finish().map_err(|e| refused(name, e))
}

/// A lower bound of the messages per iteration: every task of a lattice of at least two has a
/// neighbour (the exact count depends on the grid). (For the memory check before building:
/// [`super::Kernel::messages`].)
pub(super) fn messages(n: u32) -> u128 {
    if n >= 2 {
        n as u128
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::super::{by_name, rounds, KernelParams};
    use super::*;

    fn params(tasks: u32, grid: &[u32], iterations: u32, compute: u64) -> KernelParams {
        KernelParams { tasks, bytes: 64, iterations, compute_cycles: compute, grid: grid.to_vec() }
    }

    /// The balanced grids are MPI_Dims_create's on its documented examples, and for every task
    /// count up to 300 the best of all factorisations found by brute force.
    #[test]
    fn balanced_grids_are_the_most_nearly_square_or_cubic() {
        assert_eq!(balanced_grid(12, 2), [4, 3]);
        assert_eq!(balanced_grid(16, 2), [4, 4]);
        assert_eq!(balanced_grid(7, 2), [7, 1]);
        assert_eq!(balanced_grid(12, 3), [3, 2, 2]);
        assert_eq!(balanced_grid(64, 3), [4, 4, 4]);
        assert_eq!(balanced_grid(6, 3), [3, 2, 1]);
        for n in 1..=300u32 {
            let mut best2 = (u32::MAX, 0);
            let mut best3 = (u32::MAX, u32::MAX, 0);
            for a in (1..=n).filter(|a| n % a == 0) {
                let m = n / a;
                for b in (1..=m).filter(|b| m % b == 0 && *b <= a) {
                    let c = m / b;
                    if c == 1 {
                        best2 = best2.min((a, b));
                    }
                    if c <= b {
                        best3 = best3.min((a, b, c));
                    }
                }
            }
            assert_eq!(balanced_grid(n, 2), [best2.0, best2.1], "n = {n}");
            assert_eq!(balanced_grid(n, 3), [best3.0, best3.1, best3.2], "n = {n}");
        }
    }

    /// On a 3 x 3 grid a corner has 2 neighbours, an edge 3, the centre 4; on 2 x 3 x 4 the
    /// corner (0,0,0) has 3 and the inner (1,1,1) 6... as counted by hand.
    #[test]
    fn neighbours_on_the_grid() {
        let mut v = Vec::new();
        neighbours(0, &[3, 3], &mut v);
        assert_eq!(v, [1, 3]);
        neighbours(1, &[3, 3], &mut v);
        assert_eq!(v, [0, 2, 4]);
        neighbours(4, &[3, 3], &mut v);
        assert_eq!(v, [3, 5, 1, 7]);
        neighbours(8, &[3, 3], &mut v);
        assert_eq!(v, [7, 5]);
        // (1, 1, 1) on 3 x 3 x 3 is task 1 + 3 + 9 = 13.
        neighbours(13, &[3, 3, 3], &mut v);
        assert_eq!(v, [12, 14, 10, 16, 4, 22]);
        neighbours(0, &[2, 3, 4], &mut v);
        assert_eq!(v, [1, 2, 6]);
    }

    /// Messages: one per direction of every grid edge per iteration. An X x Y mesh has
    /// (X-1)Y + X(Y-1) edges; X x Y x Z has (X-1)YZ + X(Y-1)Z + XY(Z-1).
    #[test]
    fn every_edge_carries_one_message_each_way_per_iteration() {
        let w = (by_name("stencil-2d").unwrap().build)(&params(9, &[3, 3], 5, 0)).unwrap();
        assert_eq!(w.messages(), 5 * 2 * (2 * 3 + 3 * 2));
        let w = (by_name("stencil-3d").unwrap().build)(&params(24, &[2, 3, 4], 2, 0)).unwrap();
        assert_eq!(w.messages(), 2 * 2 * (3 * 4 + 2 * 2 * 4 + 2 * 3 * 3));
        let w = (by_name("stencil-2d").unwrap().build)(&params(12, &[], 1, 0)).unwrap();
        assert!(w.name().contains("4x3 grid"), "{}", w.name());
        assert_eq!(w.messages(), 2 * (3 * 3 + 4 * 2));
    }

    /// The centre of 3 x 3 (4 neighbours): iteration 1's sends wait for iteration 0's 8
    /// operations, or for the calc that waits for them.
    #[test]
    fn the_next_iteration_waits_for_the_halo() {
        let w = (by_name("stencil-2d").unwrap().build)(&params(9, &[3, 3], 2, 0)).unwrap();
        let ops = w.ops_of(4);
        assert_eq!(ops.len(), 16);
        assert!(ops[8..12].iter().all(|o| o.requires == 8));
        assert!(ops[..8].iter().chain(&ops[12..]).all(|o| o.requires == 0));
        let w = (by_name("stencil-2d").unwrap().build)(&params(9, &[3, 3], 2, 100)).unwrap();
        let ops = w.ops_of(4);
        assert_eq!(ops.len(), 17);
        assert_eq!((ops[8].kind, ops[8].arg, ops[8].requires), (crate::workload::OpKind::Calc, 100, 8));
        assert!(ops[9..13].iter().all(|o| o.requires == 1));
        assert_eq!(w.dependents(4, 8), &[9, 10, 11, 12]);
    }

    /// In the telephone model an iteration is one round (all sends at once), plus the calc
    /// between iterations: I + (I - 1) C.
    #[test]
    fn rounds_are_one_per_iteration_plus_computation() {
        for (dims, kernel) in [(vec![4u32, 3], "stencil-2d"), (vec![2, 3, 2], "stencil-3d")] {
            let n = dims.iter().product();
            let w = (by_name(kernel).unwrap().build)(&params(n, &dims, 4, 0)).unwrap();
            assert_eq!(rounds(&w), Some(4));
            let w = (by_name(kernel).unwrap().build)(&params(n, &dims, 4, 10)).unwrap();
            assert_eq!(rounds(&w), Some(4 + 3 * 10));
        }
    }

    #[test]
    fn bad_grids_name_the_key() {
        let e = build_2d(&params(12, &[5, 3], 1, 0)).unwrap_err().to_string();
        assert!(e.contains("workload.grid") && e.contains("[5, 3]") && e.contains("product"), "{e}");
        let e = build_3d(&params(12, &[4, 3], 1, 0)).unwrap_err().to_string();
        assert!(e.contains("3 sides"), "{e}");
        let e = build_2d(&params(0, &[0, 3], 1, 0)).unwrap_err().to_string();
        assert!(e.contains("workload.tasks"), "{e}");
        let e = build_2d(&params(4, &[0, 4], 1, 0)).unwrap_err().to_string();
        assert!(e.contains("at least 1"), "{e}");
    }
}
