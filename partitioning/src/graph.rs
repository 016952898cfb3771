//! The router graph in CSR form.

use crate::PartitionError;

/// Undirected graph in CSR (compressed sparse row) form.
///
/// The neighbours of vertex `v` are `adjncy[xadj[v]..xadj[v + 1]]`; `latency[e]` and `ewgt[e]`
/// describe the edge stored at position `e`. Every undirected edge `{a, b}` is stored twice (once
/// in the row of `a`, once in the row of `b`) with the same latency and weight; there are no
/// self-loops. Vertex weights default to 1, edge latencies are `>= 1`.
///
/// [`Graph::from_edges`] merges parallel links between the same two switches (trunking) into one
/// CSR edge whose `ewgt` is the number of links and whose `latency` is the smallest of their
/// latencies. [`crate::quality`] then counts such an edge once in `cut_edges` and `ewgt` times in
/// `cut_weight`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    /// Row offsets: `num_vertices() + 1` entries, non-decreasing, `xadj[0] == 0`,
    /// `xadj[n] == adjncy.len()`.
    pub xadj: Vec<usize>,
    /// Neighbour of each CSR entry.
    pub adjncy: Vec<u32>,
    /// Latency (cycles, `>= 1`) of each CSR entry.
    pub latency: Vec<u32>,
    /// Number of parallel links merged into each CSR entry (`>= 1`); the partitioner minimises the
    /// total weight of cut edges.
    pub ewgt: Vec<u32>,
    /// Weight of each vertex (default 1); parts are balanced by total vertex weight.
    pub vwgt: Vec<u32>,
    /// Mixed-radix coordinates of the vertices, if the graph comes from a grid-like topology.
    pub coords: Option<Coords>,
    /// Boundaries of *strata*, ranges of vertex ids of one kind (e.g. the levels of a tree:
    /// `[0, N_1, N_1 + N_2, ..., n]`), which [`crate::Method::Block`] spreads over every part
    /// alike; empty for one stratum. See [`Graph::with_strata`].
    pub strata: Vec<usize>,
}

/// Mixed-radix vertex coordinates: vertex `v` has coordinates `(x0, x1, ...)` with dimension 0
/// varying fastest, i.e. `v = x0 + S0 * (x1 + S1 * (x2 + ...))` where `S = sides`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coords {
    /// Side length of each dimension, dimension 0 first; their product is the vertex count.
    pub sides: Vec<usize>,
}

impl Coords {
    /// Number of vertices described (the product of the sides; 1 for no dimensions).
    pub fn num_vertices(&self) -> usize {
        self.sides.iter().product()
    }

    /// Coordinates of vertex `v`, dimension 0 first.
    pub fn coords_of(&self, v: usize) -> Vec<usize> {
        let mut rest = v;
        self.sides
            .iter()
            .map(|&s| {
                let x = rest % s;
                rest /= s;
                x
            })
            .collect()
    }

    /// Vertex id of the given coordinates (dimension 0 first). Panics if the number of coordinates
    /// differs from the number of dimensions; coordinates are not range-checked.
    pub fn vertex_of(&self, x: &[usize]) -> usize {
        assert_eq!(x.len(), self.sides.len(), "wrong number of coordinates");
        x.iter().zip(&self.sides).rev().fold(0, |acc, (&xi, &s)| acc * s + xi)
    }
}

impl Graph {
    /// The switch graph of a fault-free HyperX with the given sides (dimension 0 fastest): vertex
    /// `v` is linked to every vertex that differs from it in exactly one coordinate, one edge per
    /// unordered pair, latency `latency`; coordinates attached.
    pub fn hyperx(sides: &[usize], latency: u32) -> Graph {
        let n: usize = sides.iter().product();
        let mut edges = Vec::new();
        for v in 0..n {
            let mut stride = 1;
            for &s in sides {
                let x = (v / stride) % s;
                for y in x + 1..s {
                    edges.push((v as u32, (v + (y - x) * stride) as u32, latency));
                }
                stride *= s;
            }
        }
        Graph::from_edges(n, &edges).with_coords(sides.to_vec())
    }

    /// Builds a graph with `n` vertices (unit weights) from undirected edges `(a, b, latency)`,
    /// each given once in either orientation.
    ///
    /// Self-loops (`a == b`) are ignored. Parallel edges between the same pair are merged into one
    /// edge whose weight ([`Graph::ewgt`]) is their number and whose latency is the smallest.
    /// Neighbour lists are sorted by vertex id. `O(V + E log d)` for maximum degree `d`.
    ///
    /// # Panics
    /// If an endpoint is `>= n`, a latency is 0, or `n` does not fit in a `u32`.
    pub fn from_edges(n: usize, edges: &[(u32, u32, u32)]) -> Graph {
        assert!(n <= u32::MAX as usize, "at most {} vertices are supported", u32::MAX);
        let mut start = vec![0usize; n + 1];
        for (i, &(a, b, lat)) in edges.iter().enumerate() {
            assert!(
                (a as usize) < n && (b as usize) < n,
                "edge #{i} ({a}, {b}) has an endpoint outside the {n} vertices"
            );
            assert!(lat >= 1, "edge #{i} ({a}, {b}) has latency 0; latencies must be >= 1");
            if a != b {
                start[a as usize + 1] += 1;
                start[b as usize + 1] += 1;
            }
        }
        for v in 0..n {
            start[v + 1] += start[v];
        }
        let mut pos = start.clone();
        let mut tmp = vec![(0u32, 0u32); start[n]];
        for &(a, b, lat) in edges {
            if a != b {
                tmp[pos[a as usize]] = (b, lat);
                pos[a as usize] += 1;
                tmp[pos[b as usize]] = (a, lat);
                pos[b as usize] += 1;
            }
        }
        drop(pos);
        let mut xadj = Vec::with_capacity(n + 1);
        let mut adjncy = Vec::with_capacity(tmp.len());
        let mut latency = Vec::with_capacity(tmp.len());
        let mut ewgt: Vec<u32> = Vec::with_capacity(tmp.len());
        xadj.push(0);
        for v in 0..n {
            let row = &mut tmp[start[v]..start[v + 1]];
            // Sorting by (neighbour, latency) puts the smallest latency of parallel links first.
            row.sort_unstable();
            let row_start = adjncy.len();
            for &(u, lat) in row.iter() {
                if adjncy.len() > row_start && adjncy.last() == Some(&u) {
                    let w = ewgt.last_mut().expect("nonempty");
                    *w = w.saturating_add(1);
                } else {
                    adjncy.push(u);
                    latency.push(lat);
                    ewgt.push(1);
                }
            }
            xadj.push(adjncy.len());
        }
        Graph { xadj, adjncy, latency, ewgt, vwgt: vec![1; n], coords: None, strata: Vec::new() }
    }

    /// Attaches mixed-radix coordinates (see [`Coords`]); `sides[0]` is the fastest-varying
    /// dimension.
    ///
    /// # Panics
    /// If a side is 0 or the product of `sides` differs from the number of vertices.
    pub fn with_coords(mut self, sides: Vec<usize>) -> Graph {
        assert!(sides.iter().all(|&s| s > 0), "coordinate sides must be >= 1, got {sides:?}");
        let coords = Coords { sides };
        assert_eq!(
            coords.num_vertices(),
            self.num_vertices(),
            "product of sides {:?} differs from the number of vertices",
            coords.sides
        );
        self.coords = Some(coords);
        self
    }

    /// Declares strata: vertex ids `bounds[i]..bounds[i + 1]` are of kind `i` (`bounds` starts at
    /// 0 and ends at the vertex count). Where the kinds do different amounts of work per vertex
    /// (a tree's leaves, which hold the servers, and the switches above them), contiguous ranges
    /// of ids would give one part one kind; [`crate::Method::Block`] then cuts every stratum into
    /// `P` ranges and gives part `p` the `p`-th of each.
    ///
    /// # Panics
    /// If `bounds` does not start at 0, end at the vertex count and increase.
    pub fn with_strata(mut self, bounds: Vec<usize>) -> Graph {
        assert!(
            bounds.first() == Some(&0)
                && bounds.last() == Some(&self.num_vertices())
                && bounds.windows(2).all(|w| w[0] < w[1]),
            "strata bounds {bounds:?} must rise from 0 to {}",
            self.num_vertices()
        );
        self.strata = bounds;
        self
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.xadj.len().saturating_sub(1)
    }

    /// Number of undirected edges (half the number of CSR entries).
    pub fn num_edges(&self) -> usize {
        self.adjncy.len() / 2
    }

    /// CSR positions of the edges of vertex `v` (index [`Graph::adjncy`], [`Graph::latency`] and
    /// [`Graph::ewgt`] with them).
    pub fn edge_range(&self, v: usize) -> std::ops::Range<usize> {
        self.xadj[v]..self.xadj[v + 1]
    }

    /// Checks the structural invariants in `O(V + E)`: array lengths, monotone offsets, neighbour
    /// ids in range, no self-loops, latencies and edge weights `>= 1`, at most `u32::MAX`
    /// vertices, coordinates matching the vertex count, and strata bounds rising from 0 to it. Symmetry (every edge stored in both
    /// rows) is required but not checked.
    pub fn validate(&self) -> Result<(), PartitionError> {
        let bad = |msg: String| Err(PartitionError::InvalidGraph(msg));
        if self.xadj.is_empty() {
            return bad("xadj must have num_vertices + 1 entries (got an empty xadj)".into());
        }
        let n = self.num_vertices();
        if n > u32::MAX as usize {
            return bad(format!("{n} vertices; at most {} are supported", u32::MAX));
        }
        if self.xadj[0] != 0 {
            return bad(format!("xadj[0] must be 0, got {}", self.xadj[0]));
        }
        if let Some(v) = (0..n).find(|&v| self.xadj[v] > self.xadj[v + 1]) {
            return bad(format!("xadj decreases at vertex {v}"));
        }
        let m = self.adjncy.len();
        if self.xadj[n] != m {
            return bad(format!("xadj[{n}] = {} but adjncy has {m} entries", self.xadj[n]));
        }
        if self.latency.len() != m || self.ewgt.len() != m {
            return bad(format!(
                "adjncy, latency and ewgt must have the same length (got {m}, {}, {})",
                self.latency.len(),
                self.ewgt.len()
            ));
        }
        if self.vwgt.len() != n {
            return bad(format!("vwgt has {} entries for {n} vertices", self.vwgt.len()));
        }
        let s = &self.strata;
        if !s.is_empty() && (s[0] != 0 || s[s.len() - 1] != n || s.windows(2).any(|w| w[0] >= w[1])) {
            return bad(format!("strata bounds {s:?} must rise from 0 to {n}"));
        }
        for v in 0..n {
            for e in self.edge_range(v) {
                let u = self.adjncy[e] as usize;
                if u >= n {
                    return bad(format!("vertex {v} has neighbour {u} >= {n}"));
                }
                if u == v {
                    return bad(format!("vertex {v} has a self-loop"));
                }
                if self.latency[e] == 0 {
                    return bad(format!("edge ({v}, {u}) has latency 0 (must be >= 1)"));
                }
                if self.ewgt[e] == 0 {
                    return bad(format!("edge ({v}, {u}) has weight 0 (must be >= 1)"));
                }
            }
        }
        if let Some(c) = &self.coords {
            if c.sides.contains(&0) {
                return bad(format!("coordinate sides must be >= 1, got {:?}", c.sides));
            }
            if c.num_vertices() != n {
                return bad(format!(
                    "product of coordinate sides {:?} is {} but the graph has {n} vertices",
                    c.sides,
                    c.num_vertices()
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_edges_builds_sorted_symmetric_csr() {
        let g = Graph::from_edges(4, &[(2, 0, 3), (0, 1, 1), (3, 2, 2), (1, 1, 9)]);
        assert_eq!(g.num_vertices(), 4);
        assert_eq!(g.num_edges(), 3);
        assert_eq!(g.xadj, vec![0, 2, 3, 5, 6]);
        assert_eq!(g.adjncy, vec![1, 2, 0, 0, 3, 2]);
        assert_eq!(g.latency, vec![1, 3, 1, 3, 2, 2]);
        assert_eq!(g.ewgt, vec![1; 6]);
        assert_eq!(g.vwgt, vec![1; 4]);
        g.validate().unwrap();
    }

    #[test]
    fn parallel_edges_are_merged() {
        let g = Graph::from_edges(2, &[(0, 1, 4), (1, 0, 2), (0, 1, 7)]);
        assert_eq!(g.adjncy, vec![1, 0]);
        assert_eq!(g.ewgt, vec![3, 3]);
        assert_eq!(g.latency, vec![2, 2]);
    }

    #[test]
    fn coords_round_trip() {
        let g = Graph::from_edges(24, &[]).with_coords(vec![2, 3, 4]);
        let c = g.coords.as_ref().unwrap();
        assert_eq!(c.coords_of(1 + 2 * (2 + 3 * 3)), vec![1, 2, 3]);
        for v in 0..24 {
            assert_eq!(c.vertex_of(&c.coords_of(v)), v);
        }
        g.validate().unwrap();
    }

    #[test]
    #[should_panic(expected = "product of sides")]
    fn with_coords_checks_product() {
        let _ = Graph::from_edges(5, &[]).with_coords(vec![2, 2]);
    }

    #[test]
    #[should_panic(expected = "latency 0")]
    fn from_edges_rejects_zero_latency() {
        let _ = Graph::from_edges(2, &[(0, 1, 0)]);
    }

    #[test]
    fn validate_reports_problems() {
        let g = Graph::from_edges(3, &[(0, 1, 1), (1, 2, 1)]);
        let mut b = g.clone();
        b.adjncy[0] = 7;
        assert!(b.validate().unwrap_err().to_string().contains(">= 3"));
        let mut b = g.clone();
        b.vwgt.pop();
        assert!(b.validate().is_err());
        let mut b = g.clone();
        b.coords = Some(Coords { sides: vec![2, 2] });
        assert!(b.validate().is_err());
        let mut b = g.clone();
        b.xadj[1] = 5;
        assert!(b.validate().is_err());
    }
}
