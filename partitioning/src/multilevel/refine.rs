//! Greedy boundary k-way refinement and balancing.

use super::wgraph::WGraph;
use crate::rng::Rng;

/// Part weights, vertex counts and scratch space of a k-way partition.
struct KWay<'a> {
    g: &'a WGraph,
    part: &'a mut [u32],
    pw: Vec<i64>,
    cnt: Vec<usize>,
    /// Connectivity of the current vertex to each part; zero outside `touched`.
    conn: Vec<i64>,
    touched: Vec<u32>,
}

impl<'a> KWay<'a> {
    fn new(g: &'a WGraph, part: &'a mut [u32], k: usize) -> Self {
        let mut pw = vec![0; k];
        let mut cnt = vec![0; k];
        for (v, &p) in part.iter().enumerate() {
            pw[p as usize] += g.vw[v];
            cnt[p as usize] += 1;
        }
        KWay { g, part, pw, cnt, conn: vec![0; k], touched: Vec::new() }
    }

    /// Fills `conn`/`touched` with the edge weight from `v` to each adjacent part.
    fn scan(&mut self, v: usize) {
        for e in self.g.row(v) {
            let p = self.part[self.g.adj[e] as usize] as usize;
            if self.conn[p] == 0 {
                self.touched.push(p as u32);
            }
            self.conn[p] += self.g.ew[e];
        }
    }

    fn clear(&mut self) {
        for &p in &self.touched {
            self.conn[p as usize] = 0;
        }
        self.touched.clear();
    }

    /// Best adjacent part other than `a` that can take `v` without exceeding `lim`: highest
    /// connectivity, then lightest. Must be called after `scan(v)`.
    fn best_target(&self, v: usize, a: usize, lim: i64) -> Option<(usize, i64)> {
        let w = self.g.vw[v];
        let mut best: Option<(usize, i64)> = None;
        for &p in &self.touched {
            let p = p as usize;
            if p == a || self.pw[p] + w > lim {
                continue;
            }
            let c = self.conn[p];
            let better = match best {
                None => true,
                Some((b, bc)) => c > bc || (c == bc && self.pw[p] < self.pw[b]),
            };
            if better {
                best = Some((p, c));
            }
        }
        best
    }

    fn apply(&mut self, v: usize, to: usize) {
        let a = self.part[v] as usize;
        let w = self.g.vw[v];
        self.pw[a] -= w;
        self.cnt[a] -= 1;
        self.pw[to] += w;
        self.cnt[to] += 1;
        self.part[v] = to as u32;
    }

    /// Moves vertices out of parts heavier than `lim`, preferring moves that lose the least cut
    /// weight. Each round considers the vertices of overweight parts that touch a part able to
    /// take them; only when there are none does it send vertices to the lightest part. Best
    /// effort: stops when balanced, when nothing can move, or after a bounded number of rounds.
    fn balance(&mut self, lim: i64) {
        let n = self.g.n();
        for _round in 0..64 {
            if self.pw.iter().all(|&w| w <= lim) {
                return;
            }
            let lightest = (0..self.pw.len()).min_by_key(|&p| (self.pw[p], p)).expect("k >= 1");
            let mut adjacent: Vec<(i64, u32, u32)> = Vec::new();
            let mut jumps: Vec<(i64, u32, u32)> = Vec::new();
            for v in 0..n {
                let a = self.part[v] as usize;
                if self.pw[a] <= lim || self.cnt[a] <= 1 {
                    continue;
                }
                self.scan(v);
                let internal = self.conn[a];
                match self.best_target(v, a, lim) {
                    Some((p, c)) => adjacent.push((c - internal, v as u32, p as u32)),
                    None if lightest != a && self.pw[lightest] + self.g.vw[v] <= lim => {
                        jumps.push((-internal, v as u32, lightest as u32))
                    }
                    None => {}
                }
                self.clear();
            }
            let mut cands = if adjacent.is_empty() { jumps } else { adjacent };
            cands.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
            let mut moved = 0;
            for (_, v, to) in cands {
                let (v, to) = (v as usize, to as usize);
                let a = self.part[v] as usize;
                if self.pw[a] <= lim || self.cnt[a] <= 1 || self.pw[to] + self.g.vw[v] > lim {
                    continue;
                }
                self.apply(v, to);
                moved += 1;
            }
            if moved == 0 {
                return;
            }
        }
    }

    /// Greedy refinement passes over the vertices in random order: a vertex moves to the adjacent
    /// part with the largest gain if the gain is positive, or zero and the move strictly lowers the
    /// heavier of the two parts, as long as the target stays within `lim` and the source keeps a
    /// vertex. The cut never increases.
    fn refine(&mut self, lim: i64, max_passes: usize, rng: &mut Rng) {
        let n = self.g.n();
        let mut order = rng.permutation(n);
        for _pass in 0..max_passes {
            let mut moved = 0;
            for &v in &order {
                let v = v as usize;
                let a = self.part[v] as usize;
                if self.cnt[a] <= 1 {
                    continue;
                }
                self.scan(v);
                let internal = self.conn[a];
                let target =
                    if self.touched.len() > 1 || self.conn[a] == 0 { self.best_target(v, a, lim) } else { None };
                self.clear();
                if let Some((b, c)) = target {
                    let gain = c - internal;
                    let w = self.g.vw[v];
                    if gain > 0 || (gain == 0 && self.pw[b] + w < self.pw[a]) {
                        self.apply(v, b);
                        moved += 1;
                    }
                }
            }
            if moved == 0 {
                break;
            }
            rng.shuffle(&mut order);
        }
    }
}

/// Rebalances `part` to part weights `<= lim` (best effort), then refines it greedily.
pub(crate) fn balance_and_refine(g: &WGraph, part: &mut [u32], k: usize, lim: i64, max_passes: usize, rng: &mut Rng) {
    let mut s = KWay::new(g, part, k);
    s.balance(lim);
    s.refine(lim, max_passes, rng);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Graph;

    fn ring(n: u32) -> WGraph {
        let edges: Vec<(u32, u32, u32)> = (0..n).map(|i| (i, (i + 1) % n, 1)).collect();
        WGraph::from_graph(&Graph::from_edges(n as usize, &edges))
    }

    #[test]
    fn refinement_never_increases_cut_and_balance_fixes_overload() {
        let g = ring(40);
        let mut rng = Rng::new(5);
        // Alternating assignment: cut 40.
        let mut part: Vec<u32> = (0..40).map(|v| (v % 2) as u32).collect();
        let before = g.cut(&part);
        balance_and_refine(&g, &mut part, 2, 21, 10, &mut rng);
        assert!(g.cut(&part) < before);
        let w0 = part.iter().filter(|&&p| p == 0).count();
        assert!((19..=21).contains(&w0));

        // Overloaded: everything but one vertex in part 0.
        let mut part = vec![0u32; 40];
        part[7] = 1;
        balance_and_refine(&g, &mut part, 2, 21, 10, &mut rng);
        let w0 = part.iter().filter(|&&p| p == 0).count();
        assert!((19..=21).contains(&w0), "w0={w0}");
    }
}
