//! Quality metrics of an assignment.

use crate::Graph;

/// How good an assignment of vertices to parts is (see [`quality`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Quality {
    /// Number of parts `P`.
    pub parts: usize,
    /// Number of cut edges: distinct pairs of adjacent vertices that lie in different parts.
    pub cut_edges: u64,
    /// Number of cut links: the sum of [`Graph::ewgt`] over the cut edges. Equal to `cut_edges`
    /// unless parallel links (trunks) were merged into weighted edges. This is what
    /// [`crate::Method::Multilevel`] minimises.
    pub cut_weight: u64,
    /// Total vertex weight of each part (index = part id).
    pub part_weights: Vec<u64>,
    /// Heaviest part weight divided by the average part weight (`total / P`); 1.0 is perfect
    /// balance (also reported when the total weight is 0).
    pub imbalance: f64,
    /// Smallest latency over the cut edges: how many cycles a part can simulate without hearing
    /// from the others. `None` if nothing is cut.
    pub lookahead: Option<u32>,
    /// Largest number of other parts that one part shares a cut edge with.
    pub neighbours_max: usize,
}

/// Computes the [`Quality`] of `assign` (part id of each vertex, `< parts`) in `O(V + E + P)`.
///
/// # Panics
/// If `assign.len()` differs from the number of vertices or a part id is `>= parts`.
pub fn quality(g: &Graph, assign: &[u32], parts: usize) -> Quality {
    let n = g.num_vertices();
    assert_eq!(assign.len(), n, "assignment has {} entries for {n} vertices", assign.len());
    if let Some((v, &p)) = assign.iter().enumerate().find(|&(_, &p)| p as usize >= parts) {
        panic!("vertex {v} is assigned to part {p}, but there are only {parts} parts");
    }

    let mut part_weights = vec![0u64; parts];
    for (v, &p) in assign.iter().enumerate() {
        part_weights[p as usize] += g.vwgt[v] as u64;
    }

    let mut cut_edges = 0u64;
    let mut cut_weight = 0u64;
    let mut lookahead: Option<u32> = None;
    for v in 0..n {
        let pv = assign[v];
        for e in g.edge_range(v) {
            let u = g.adjncy[e] as usize;
            if u > v && assign[u] != pv {
                cut_edges += 1;
                cut_weight += g.ewgt[e] as u64;
                let lat = g.latency[e];
                lookahead = Some(lookahead.map_or(lat, |l| l.min(lat)));
            }
        }
    }

    // Vertices grouped by part (counting sort), then one sweep per part with a stamp array.
    let mut start = vec![0usize; parts + 1];
    for &p in assign {
        start[p as usize + 1] += 1;
    }
    for p in 0..parts {
        start[p + 1] += start[p];
    }
    let mut fill = start.clone();
    let mut by_part = vec![0u32; n];
    for (v, &p) in assign.iter().enumerate() {
        by_part[fill[p as usize]] = v as u32;
        fill[p as usize] += 1;
    }
    let mut stamp = vec![usize::MAX; parts];
    let mut neighbours_max = 0;
    for p in 0..parts {
        let mut count = 0;
        for &v in &by_part[start[p]..start[p + 1]] {
            for e in g.edge_range(v as usize) {
                let q = assign[g.adjncy[e] as usize] as usize;
                if q != p && stamp[q] != p {
                    stamp[q] = p;
                    count += 1;
                }
            }
        }
        neighbours_max = neighbours_max.max(count);
    }

    let total: u64 = part_weights.iter().sum();
    let max = part_weights.iter().copied().max().unwrap_or(0);
    let imbalance = if total == 0 { 1.0 } else { max as f64 * parts as f64 / total as f64 };

    Quality { parts, cut_edges, cut_weight, part_weights, imbalance, lookahead, neighbours_max }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_cycle_split_in_two() {
        // 0-1-2-3-0; parts {0,1} and {2,3}: edges 1-2 (latency 3) and 3-0 (latency 7) are cut.
        let g = Graph::from_edges(4, &[(0, 1, 5), (1, 2, 3), (2, 3, 5), (3, 0, 7)]);
        let q = quality(&g, &[0, 0, 1, 1], 2);
        assert_eq!(q.parts, 2);
        assert_eq!(q.cut_edges, 2);
        assert_eq!(q.cut_weight, 2);
        assert_eq!(q.part_weights, vec![2, 2]);
        assert_eq!(q.imbalance, 1.0);
        assert_eq!(q.lookahead, Some(3));
        assert_eq!(q.neighbours_max, 1);

        // Alternating split cuts all four edges; lookahead is the global minimum latency.
        let q = quality(&g, &[0, 1, 0, 1], 2);
        assert_eq!(q.cut_edges, 4);
        assert_eq!(q.lookahead, Some(3));

        // Nothing cut.
        let q = quality(&g, &[0, 0, 0, 0], 1);
        assert_eq!(q.cut_edges, 0);
        assert_eq!(q.lookahead, None);
        assert_eq!(q.neighbours_max, 0);
        assert_eq!(q.imbalance, 1.0);
    }

    #[test]
    fn lookahead_is_min_latency_over_cut_edges_only() {
        // Path 0 -1- 1 -10- 2 -4- 3 -2- 4 ; parts {0,1} {2,3} {4}: cut edges 1-2 (10) and 3-4 (2)
        // but the internal edge 0-1 has latency 1, which must not count.
        let g = Graph::from_edges(5, &[(0, 1, 1), (1, 2, 10), (2, 3, 4), (3, 4, 2)]);
        let q = quality(&g, &[0, 0, 1, 1, 2], 3);
        assert_eq!(q.cut_edges, 2);
        assert_eq!(q.lookahead, Some(2));
        assert_eq!(q.part_weights, vec![2, 2, 1]);
        // max 2 / average 5/3
        assert!((q.imbalance - 1.2).abs() < 1e-12);
        assert_eq!(q.neighbours_max, 2); // part 1 talks to parts 0 and 2

        let q = quality(&g, &[0, 0, 1, 1, 1], 2);
        assert_eq!(q.lookahead, Some(10));
    }

    #[test]
    fn trunked_links_count_in_cut_weight() {
        let g = Graph::from_edges(3, &[(0, 1, 2), (0, 1, 2), (1, 2, 1)]);
        let q = quality(&g, &[0, 1, 1], 2);
        assert_eq!(q.cut_edges, 1);
        assert_eq!(q.cut_weight, 2);
        assert_eq!(q.lookahead, Some(2));
    }

    #[test]
    fn weighted_parts_and_star_neighbours() {
        // Star centre 0 with leaves 1..=4, each leaf its own part.
        let mut g = Graph::from_edges(5, &[(0, 1, 1), (0, 2, 1), (0, 3, 1), (0, 4, 1)]);
        g.vwgt = vec![3, 1, 1, 1, 1];
        let q = quality(&g, &[0, 1, 2, 3, 4], 5);
        assert_eq!(q.neighbours_max, 4);
        assert_eq!(q.part_weights, vec![3, 1, 1, 1, 1]);
        assert!((q.imbalance - 3.0 * 5.0 / 7.0).abs() < 1e-12);
    }

    #[test]
    #[should_panic(expected = "only 2 parts")]
    fn rejects_out_of_range_part() {
        let g = Graph::from_edges(2, &[(0, 1, 1)]);
        quality(&g, &[0, 2], 2);
    }
}
