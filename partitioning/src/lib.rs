//! Graph partitioning for hxsim.
//!
//! The simulator maps its router graph (vertices = switches, edges = links with an integer latency
//! in cycles) onto `P` parts, one per worker. This crate computes that mapping and reports how good
//! it is:
//!
//! * [`Graph`] holds the undirected graph in CSR form, optionally with the mixed-radix coordinates
//!   of a HyperX-like topology ([`Coords`]).
//! * [`partition`] assigns every vertex a part id in `0..P` with one of three [`Method`]s:
//!   - [`Method::Block`]: contiguous ranges of vertex ids, i.e. slabs along the slowest-varying
//!     (highest) dimension when the graph has coordinates; `O(V + E)`.
//!   - [`Method::RoundRobin`]: vertex `v` goes to part `v % P`; `O(V + E)` (validation only).
//!   - [`Method::Multilevel`]: a METIS-style multilevel k-way partitioner (heavy-edge matching,
//!     recursive bisection of the coarsest graph, greedy k-way refinement while uncoarsening). It
//!     also refines the block partition and returns the better of the two, so its cut is never
//!     larger than that of `block` (see [`Method::Multilevel`]).
//! * [`quality`] reports the cut, balance, lookahead and communication degree of an assignment.
//!
//! Everything is deterministic: the same graph, part count, method and seed always give the same
//! assignment.
//!
//! ```
//! use partitioning::{partition, quality, Graph, Method};
//!
//! // A 4-cycle 0-1-2-3-0 with latencies 5, 3, 5, 7.
//! let g = Graph::from_edges(4, &[(0, 1, 5), (1, 2, 3), (2, 3, 5), (3, 0, 7)]);
//! let assign = partition(&g, 2, Method::Block, 0).unwrap();
//! assert_eq!(assign, vec![0, 0, 1, 1]);
//! let q = quality(&g, &assign, 2);
//! assert_eq!(q.cut_edges, 2);
//! assert_eq!(q.lookahead, Some(3));
//! ```
#![warn(missing_docs)]

mod block;
mod graph;
mod multilevel;
mod quality;
mod rng;

pub use graph::{Coords, Graph};
pub use multilevel::IMBALANCE_TOLERANCE;
pub use quality::{quality, Quality};

use std::fmt;
use std::str::FromStr;

/// How [`partition`] maps vertices onto parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, schemars::JsonSchema)]
#[schemars(rename_all = "kebab-case")]
pub enum Method {
    /// Contiguous ranges of vertex ids, balanced so that part sizes differ by at most one vertex
    /// (by vertex weight instead when the weights are not all equal).
    ///
    /// Vertex ids of a graph with [`Coords`] are ordered with dimension 0 fastest, so these
    /// ranges are slabs cut along the slowest-varying (highest) dimension first: when `P` divides
    /// the last side every part is a set of whole hyperplanes, otherwise a range may end inside a
    /// hyperplane (still aligned to whole lines/planes of the lower dimensions where the sizes
    /// allow). A graph with strata ([`Graph::with_strata`]: a HyperZ's or fat tree's levels) has
    /// each stratum cut so, part `p` taking the `p`-th range of every one. `O(V + E)`.
    Block,
    /// Vertex `v` goes to part `v % P`. `O(V + E)`.
    RoundRobin,
    /// Multilevel k-way partitioning in the style of METIS, minimising the cut weight (number of
    /// cut links) under a balance constraint: every part weighs at most
    /// `max(floor((1 + IMBALANCE_TOLERANCE) * W / P), ceil(W / P) + max_vertex_weight - 1)`
    /// where `W` is the total vertex weight (for unit weights: at most 3% above the average, and
    /// never stricter than the perfect balance `ceil(V / P)` that `block` achieves).
    ///
    /// 1. Coarsening by heavy-edge matching (vertices visited in a random order drawn from the
    ///    seed) until the graph has about `max(30 P, 100)` vertices.
    /// 2. Initial partition of the coarsest graph by recursive bisection (greedy graph growing
    ///    from several random seeds, each improved by two-way Fiduccia–Mattheyses).
    /// 3. Uncoarsening: at every level, the partition is projected, rebalanced and improved by
    ///    greedy boundary k-way refinement (moves with positive gain, or zero gain that improves
    ///    balance, respecting the balance constraint).
    ///
    /// The block partition, improved by the same k-way refinement, is always evaluated as a second
    /// candidate, and the better of the two is returned (balance constraint first, then cut
    /// weight, then the heaviest part). Refinement never increases the cut, so whenever the block
    /// partition satisfies the balance constraint (always the case with equal vertex weights) the
    /// result cuts no more than [`Method::Block`]; on HyperX graphs, where block slabs are already
    /// near optimal, the two candidates usually tie or the refined block wins. On graphs without
    /// useful vertex order (no coordinates) the multilevel candidate wins by far.
    ///
    /// Cost: a few passes over the edges per level, `O((V + E) log V)` overall in practice; about
    /// 0.5 s for P = 2 and 0.7 s for P = 16 on a 32x32x32 HyperX (32768 vertices, 1.5M edges) on
    /// one core.
    Multilevel,
}

impl Method {
    /// Every method, in the order they are documented.
    pub const ALL: [Method; 3] = [Method::Block, Method::RoundRobin, Method::Multilevel];

    /// The name accepted by [`FromStr`] and printed by [`fmt::Display`].
    pub fn name(self) -> &'static str {
        match self {
            Method::Block => "block",
            Method::RoundRobin => "round-robin",
            Method::Multilevel => "multilevel",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = ParseMethodError;

    /// Parses `block`, `round-robin` or `multilevel` (case-insensitive, surrounding whitespace
    /// ignored; `round_robin` is accepted as an alias).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "block" => Ok(Method::Block),
            "round-robin" | "round_robin" => Ok(Method::RoundRobin),
            "multilevel" => Ok(Method::Multilevel),
            _ => Err(ParseMethodError { given: s.to_string() }),
        }
    }
}

/// Error returned when parsing an unknown [`Method`] name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown partitioning method `{given}`; expected one of: block, round-robin, multilevel")]
pub struct ParseMethodError {
    /// The string that was not recognised.
    pub given: String,
}

/// Why [`partition`] could not produce an assignment.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PartitionError {
    /// `parts` was 0.
    #[error("the number of parts must be at least 1 (got 0)")]
    ZeroParts,
    /// The graph has no vertices.
    #[error("cannot partition an empty graph (0 vertices)")]
    EmptyGraph,
    /// More parts than vertices were requested, so some part would be empty.
    #[error(
        "cannot split {vertices} vertices into {parts} non-empty parts; \
         the number of parts must be at most the number of vertices"
    )]
    TooManyParts {
        /// Requested number of parts.
        parts: usize,
        /// Number of vertices of the graph.
        vertices: usize,
    },
    /// The CSR arrays or coordinates of the graph are inconsistent (see [`Graph::validate`]).
    #[error("invalid graph: {0}")]
    InvalidGraph(String),
}

/// Assigns every vertex of `g` a part in `0..parts` using `method`; returns the part of each vertex
/// (indexed by vertex id). Every part receives at least one vertex.
///
/// `seed` drives the random choices of [`Method::Multilevel`] (the other methods ignore it); the
/// result is a pure function of `(g, parts, method, seed)`.
///
/// # Errors
/// [`PartitionError::ZeroParts`], [`PartitionError::EmptyGraph`],
/// [`PartitionError::TooManyParts`] when `parts` exceeds the number of vertices, and
/// [`PartitionError::InvalidGraph`] when [`Graph::validate`] fails.
pub fn partition(g: &Graph, parts: usize, method: Method, seed: u64) -> Result<Vec<u32>, PartitionError> {
    g.validate()?;
    if parts == 0 {
        return Err(PartitionError::ZeroParts);
    }
    let n = g.num_vertices();
    if n == 0 {
        return Err(PartitionError::EmptyGraph);
    }
    if parts > n {
        return Err(PartitionError::TooManyParts { parts, vertices: n });
    }
    let assign = match method {
        Method::Block => block::block(g, parts),
        Method::RoundRobin => block::round_robin(n, parts),
        Method::Multilevel => multilevel::multilevel(g, parts, seed),
    };
    debug_assert_eq!(assign.len(), n);
    Ok(assign)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_round_trip() {
        for m in Method::ALL {
            assert_eq!(m.name().parse::<Method>().unwrap(), m);
            assert_eq!(m.to_string(), m.name());
        }
        assert_eq!(" Round_Robin ".parse::<Method>().unwrap(), Method::RoundRobin);
        let err = "metis".parse::<Method>().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("metis"), "{msg}");
        for m in Method::ALL {
            assert!(msg.contains(m.name()), "{msg}");
        }
    }

    #[test]
    fn errors() {
        let g = Graph::from_edges(3, &[(0, 1, 1), (1, 2, 1)]);
        for m in Method::ALL {
            assert_eq!(partition(&g, 0, m, 0), Err(PartitionError::ZeroParts));
            assert_eq!(partition(&g, 4, m, 0), Err(PartitionError::TooManyParts { parts: 4, vertices: 3 }));
        }
        let empty = Graph::from_edges(0, &[]);
        assert_eq!(partition(&empty, 1, Method::Block, 0), Err(PartitionError::EmptyGraph));
        let mut bad = g.clone();
        bad.latency[0] = 0;
        assert!(matches!(partition(&bad, 2, Method::Multilevel, 0), Err(PartitionError::InvalidGraph(_))));
        assert!(PartitionError::TooManyParts { parts: 4, vertices: 3 }.to_string().contains("4"));
    }
}
