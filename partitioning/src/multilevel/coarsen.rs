//! Coarsening by heavy-edge matching.

use super::wgraph::WGraph;
use crate::rng::Rng;

/// One coarsening step: matches every vertex with its unmatched neighbour of heaviest connecting
/// edge (vertices visited in random order, pairs heavier than `max_vw` are not formed) and
/// contracts the matching. Returns the coarse graph and the coarse vertex of every vertex.
pub(crate) fn coarsen(g: &WGraph, max_vw: i64, rng: &mut Rng) -> (WGraph, Vec<u32>) {
    const NONE: u32 = u32::MAX;
    let n = g.n();
    let mut mate = vec![NONE; n];
    for v in rng.permutation(n) {
        let v = v as usize;
        if mate[v] != NONE {
            continue;
        }
        let mut best = NONE;
        let mut best_w = 0;
        for e in g.row(v) {
            let u = g.adj[e] as usize;
            if mate[u] == NONE && g.ew[e] > best_w && g.vw[v] + g.vw[u] <= max_vw {
                best = u as u32;
                best_w = g.ew[e];
            }
        }
        if best == NONE {
            mate[v] = v as u32;
        } else {
            mate[v] = best;
            mate[best as usize] = v as u32;
        }
    }

    // Coarse ids in order of the smaller fine id of each pair (keeps locality).
    let mut cmap = vec![NONE; n];
    let mut members: Vec<(u32, u32)> = Vec::with_capacity(n / 2 + 1);
    for v in 0..n {
        if cmap[v] == NONE {
            let c = members.len() as u32;
            let m = mate[v];
            cmap[v] = c;
            cmap[m as usize] = c;
            members.push((v as u32, m));
        }
    }

    let cn = members.len();
    let mut cg = WGraph {
        xadj: Vec::with_capacity(cn + 1),
        adj: Vec::with_capacity(g.adj.len() / 2),
        ew: Vec::with_capacity(g.adj.len() / 2),
        vw: Vec::with_capacity(cn),
    };
    cg.xadj.push(0);
    let mut slot = vec![usize::MAX; cn];
    for (c, &(a, b)) in members.iter().enumerate() {
        let row_start = cg.adj.len();
        let mut w = 0;
        let pair = [a, b];
        let len = if a == b { 1 } else { 2 };
        for &x in &pair[..len] {
            let x = x as usize;
            w += g.vw[x];
            for e in g.row(x) {
                let cu = cmap[g.adj[e] as usize] as usize;
                if cu == c {
                    continue;
                }
                if slot[cu] == usize::MAX {
                    slot[cu] = cg.adj.len();
                    cg.adj.push(cu as u32);
                    cg.ew.push(g.ew[e]);
                } else {
                    cg.ew[slot[cu]] += g.ew[e];
                }
            }
        }
        for &cu in &cg.adj[row_start..] {
            slot[cu as usize] = usize::MAX;
        }
        cg.xadj.push(cg.adj.len());
        cg.vw.push(w);
    }
    (cg, cmap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Graph;

    #[test]
    fn contraction_preserves_weights() {
        // 6-cycle with one heavy chord.
        let mut edges: Vec<(u32, u32, u32)> = (0..6).map(|i| (i, (i + 1) % 6, 1)).collect();
        edges.push((0, 3, 1));
        edges.push((0, 3, 1));
        let g = WGraph::from_graph(&Graph::from_edges(6, &edges));
        let (cg, cmap) = coarsen(&g, 10, &mut Rng::new(3));
        assert!(cg.n() < g.n());
        assert_eq!(cg.total_vw(), 6);
        // Total edge weight = original minus the weight of contracted edges.
        let contracted: i64 = (0..6)
            .flat_map(|v| g.row(v).map(move |e| (v, e)))
            .filter(|&(v, e)| cmap[v] == cmap[g.adj[e] as usize])
            .map(|(_, e)| g.ew[e])
            .sum();
        let total = |g: &WGraph| g.ew.iter().sum::<i64>();
        assert_eq!(total(&cg), total(&g) - contracted);
        // Symmetric.
        for c in 0..cg.n() {
            for e in cg.row(c) {
                let d = cg.adj[e] as usize;
                let back = cg.row(d).find(|&f| cg.adj[f] as usize == c).unwrap();
                assert_eq!(cg.ew[back], cg.ew[e]);
            }
        }
    }
}
