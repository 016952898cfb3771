//! Initial partition of the coarsest graph: recursive bisection, each bisection by greedy graph
//! growing from random seeds followed by two-way Fiduccia–Mattheyses refinement.

use super::wgraph::WGraph;
use crate::rng::Rng;
use std::collections::BinaryHeap;

/// Splits `g` into `k` parts (`1 <= k <= g.n()`), every part nonempty.
pub(crate) fn recursive_bisection(g: &WGraph, k: usize, eps: f64, rng: &mut Rng) -> Vec<u32> {
    debug_assert!(k >= 1 && k <= g.n());
    let mut out = vec![0u32; g.n()];
    let ids: Vec<u32> = (0..g.n() as u32).collect();
    rb(g, &ids, k, 0, eps, rng, &mut out);
    out
}

fn rb(g: &WGraph, ids: &[u32], k: usize, first: u32, eps: f64, rng: &mut Rng, out: &mut [u32]) {
    if k == 1 {
        for &v in ids {
            out[v as usize] = first;
        }
        return;
    }
    if g.n() == k {
        for (i, &v) in ids.iter().enumerate() {
            out[v as usize] = first + i as u32;
        }
        return;
    }
    let k0 = k / 2;
    let k1 = k - k0;
    let side = bisect(g, [k0, k1], eps, rng);
    for (s, (ks, off)) in [(k0, 0), (k1, k0 as u32)].into_iter().enumerate() {
        let (sub, map) = g.induced(|v| side[v] as usize == s);
        let sub_ids: Vec<u32> = map.iter().map(|&l| ids[l as usize]).collect();
        rb(&sub, &sub_ids, ks, first + off, eps, rng, out);
    }
}

/// Largest weight allowed for a side whose target weight is `t`.
fn side_limit(t: f64, eps: f64, max_vw: i64) -> i64 {
    ((t * (1.0 + eps)).floor() as i64).max(t.ceil() as i64 + max_vw.max(1) - 1)
}

/// Bisects `g` into sides 0 and 1 that will later hold `k[0]` and `k[1]` parts: side `s` targets a
/// `k[s] / (k[0] + k[1])` share of the weight and keeps at least `k[s]` vertices.
fn bisect(g: &WGraph, k: [usize; 2], eps: f64, rng: &mut Rng) -> Vec<u8> {
    let n = g.n();
    let total = g.total_vw() as f64;
    let t0 = total * k[0] as f64 / (k[0] + k[1]) as f64;
    let max_vw = g.max_vw();
    let lim = [side_limit(t0, eps, max_vw), side_limit(total - t0, eps, max_vw)];
    let tries = if n <= 2_000 { 8 } else { 4 };
    let mut best: Option<((i64, i64), Vec<u8>)> = None;
    for _ in 0..tries {
        let mut side = grow(g, t0, k, rng);
        let score = fm2(g, &mut side, lim, k, rng);
        if best.as_ref().is_none_or(|(b, _)| score < *b) {
            best = Some((score, side));
        }
    }
    best.expect("at least one try").1
}

/// Greedy graph growing: side 0 starts from a random vertex and repeatedly absorbs the side-1
/// vertex with the best gain (a random unvisited vertex when the frontier is empty) until it
/// reaches weight `t0`.
fn grow(g: &WGraph, t0: f64, minc: [usize; 2], rng: &mut Rng) -> Vec<u8> {
    let n = g.n();
    let mut side = vec![1u8; n];
    let mut gain: Vec<i64> = (0..n).map(|v| -g.row(v).map(|e| g.ew[e]).sum::<i64>()).collect();
    let keys: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    let order = rng.permutation(n);
    let mut next_random = 0usize;
    let mut heap: BinaryHeap<(i64, u64, u32)> = BinaryHeap::new();
    let (mut w0, mut c0, mut c1) = (0i64, 0usize, n);
    while ((w0 as f64) < t0 || c0 < minc[0]) && c1 > minc[1] {
        let mut pick = None;
        while let Some((gn, _, v)) = heap.pop() {
            if side[v as usize] == 1 && gn == gain[v as usize] {
                pick = Some(v as usize);
                break;
            }
        }
        let v = match pick {
            Some(v) => v,
            None => {
                while side[order[next_random] as usize] == 0 {
                    next_random += 1;
                }
                order[next_random] as usize
            }
        };
        side[v] = 0;
        w0 += g.vw[v];
        c0 += 1;
        c1 -= 1;
        for e in g.row(v) {
            let u = g.adj[e] as usize;
            if side[u] == 1 {
                gain[u] += 2 * g.ew[e];
                heap.push((gain[u], keys[u], u as u32));
            }
        }
    }
    side
}

/// State of a bisection with internal (`id`) and external (`ed`) degrees of every vertex.
struct Bisection<'a> {
    g: &'a WGraph,
    side: &'a mut [u8],
    id: Vec<i64>,
    ed: Vec<i64>,
    w: [i64; 2],
    cnt: [usize; 2],
    cut: i64,
}

impl<'a> Bisection<'a> {
    fn new(g: &'a WGraph, side: &'a mut [u8]) -> Self {
        let n = g.n();
        let mut b = Bisection { g, side, id: vec![0; n], ed: vec![0; n], w: [0; 2], cnt: [0; 2], cut: 0 };
        for v in 0..n {
            let s = b.side[v] as usize;
            b.w[s] += g.vw[v];
            b.cnt[s] += 1;
            for e in g.row(v) {
                if b.side[g.adj[e] as usize] as usize == s {
                    b.id[v] += g.ew[e];
                } else {
                    b.ed[v] += g.ew[e];
                }
            }
            b.cut += b.ed[v];
        }
        b.cut /= 2;
        b
    }

    fn gain(&self, v: usize) -> i64 {
        self.ed[v] - self.id[v]
    }

    fn flip(&mut self, v: usize) {
        let s = self.side[v] as usize;
        let d = 1 - s;
        self.cut -= self.gain(v);
        std::mem::swap(&mut self.id[v], &mut self.ed[v]);
        self.side[v] = d as u8;
        self.w[s] -= self.g.vw[v];
        self.w[d] += self.g.vw[v];
        self.cnt[s] -= 1;
        self.cnt[d] += 1;
        for e in self.g.row(v) {
            let u = self.g.adj[e] as usize;
            let ew = self.g.ew[e];
            if self.side[u] as usize == d {
                self.id[u] += ew;
                self.ed[u] -= ew;
            } else {
                self.id[u] -= ew;
                self.ed[u] += ew;
            }
        }
    }
}

fn overload(w: [i64; 2], lim: [i64; 2]) -> i64 {
    (w[0] - lim[0]).max(0) + (w[1] - lim[1]).max(0)
}

/// Two-way FM: passes of single-vertex moves in order of gain (each vertex at most once per
/// pass), allowing a side to exceed its limit by one vertex weight in between, then rolling back
/// to the best prefix by (overload, cut). Returns the final (overload, cut).
fn fm2(g: &WGraph, side: &mut [u8], lim: [i64; 2], minc: [usize; 2], rng: &mut Rng) -> (i64, i64) {
    let n = g.n();
    let slack = g.max_vw().max(1);
    let keys: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    let patience = (n / 10).clamp(20, 200);
    let mut b = Bisection::new(g, side);
    let mut locked = vec![false; n];
    for _pass in 0..10 {
        let mut heaps: [BinaryHeap<(i64, u64, u32)>; 2] = [BinaryHeap::new(), BinaryHeap::new()];
        for v in 0..n {
            heaps[b.side[v] as usize].push((b.gain(v), keys[v], v as u32));
        }
        locked.fill(false);
        let mut moves: Vec<u32> = Vec::new();
        let start = (overload(b.w, lim), b.cut);
        let mut best = start;
        let mut best_len = 0;
        let mut since_best = 0;
        loop {
            let mut choice: Option<(i64, usize, usize)> = None;
            for s in 0..2 {
                while let Some(&(gn, _, v)) = heaps[s].peek() {
                    let v = v as usize;
                    if locked[v] || b.side[v] as usize != s || gn != b.gain(v) {
                        heaps[s].pop();
                    } else {
                        break;
                    }
                }
                let Some(&(gn, _, v)) = heaps[s].peek() else {
                    continue;
                };
                let v = v as usize;
                let d = 1 - s;
                if b.cnt[s] <= minc[s] {
                    continue;
                }
                let mut nw = b.w;
                nw[s] -= g.vw[v];
                nw[d] += g.vw[v];
                let ok = nw[d] <= lim[d] + slack || overload(nw, lim) < overload(b.w, lim);
                if !ok {
                    continue;
                }
                let better = match choice {
                    None => true,
                    Some((cg, cs, _)) => gn > cg || (gn == cg && b.w[s] > b.w[cs]),
                };
                if better {
                    choice = Some((gn, s, v));
                }
            }
            let Some((_, _, v)) = choice else { break };
            b.flip(v);
            locked[v] = true;
            moves.push(v as u32);
            for e in g.row(v) {
                let u = g.adj[e] as usize;
                if !locked[u] {
                    heaps[b.side[u] as usize].push((b.gain(u), keys[u], u as u32));
                }
            }
            let score = (overload(b.w, lim), b.cut);
            if score < best {
                best = score;
                best_len = moves.len();
                since_best = 0;
            } else {
                since_best += 1;
                if since_best >= patience {
                    break;
                }
            }
        }
        for &v in moves[best_len..].iter().rev() {
            b.flip(v as usize);
        }
        if best >= start {
            break;
        }
    }
    (overload(b.w, lim), b.cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Graph;

    #[test]
    fn bisects_two_cliques_joined_by_one_edge() {
        let mut edges = Vec::new();
        for base in [0u32, 6] {
            for a in 0..6 {
                for b in a + 1..6 {
                    edges.push((base + a, base + b, 1));
                }
            }
        }
        edges.push((5, 6, 1));
        let g = WGraph::from_graph(&Graph::from_edges(12, &edges));
        let part = recursive_bisection(&g, 2, 0.03, &mut Rng::new(1));
        assert_eq!(g.cut(&part), 1);
        assert!(part[..6].iter().all(|&p| p == part[0]));
        assert!(part[6..].iter().all(|&p| p == part[6]));
    }

    #[test]
    fn every_part_nonempty() {
        let edges: Vec<(u32, u32, u32)> = (0..29).map(|i| (i, i + 1, 1)).collect();
        let g = WGraph::from_graph(&Graph::from_edges(30, &edges));
        for k in 1..=30 {
            let part = recursive_bisection(&g, k, 0.03, &mut Rng::new(k as u64));
            let mut cnt = vec![0; k];
            for &p in &part {
                cnt[p as usize] += 1;
            }
            assert!(cnt.iter().all(|&c| c > 0), "k={k} {cnt:?}");
        }
    }
}
