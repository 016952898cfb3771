//! The multilevel k-way partitioner (see [`crate::Method::Multilevel`]).

mod coarsen;
mod initial;
mod refine;
mod wgraph;

use crate::rng::Rng;
use crate::{block, Graph};
use wgraph::WGraph;

/// Allowed relative excess of a part's weight over the average in [`crate::Method::Multilevel`]
/// (0.03 = 3%); see [`crate::Method::Multilevel`] for the exact bound.
pub const IMBALANCE_TOLERANCE: f64 = 0.03;

/// Greedy refinement passes per level.
const REFINE_PASSES: usize = 10;

/// Largest part weight allowed for `k` parts of total weight `total` when vertices weigh up to
/// `max_vw`: 3% above the average, but never less than the best achievable guarantee
/// `ceil(total / k) + max_vw - 1`.
pub(crate) fn part_limit(total: i64, k: usize, max_vw: i64) -> i64 {
    let avg = total as f64 / k as f64;
    let relaxed = (avg * (1.0 + IMBALANCE_TOLERANCE)).floor() as i64;
    let ceil_avg = (total + k as i64 - 1) / k as i64;
    relaxed.max(ceil_avg + max_vw.max(1) - 1)
}

/// Number of vertices at which coarsening stops.
fn coarsen_to(k: usize) -> usize {
    (30 * k).max(100)
}

/// Candidate ranking: balance violation, then cut weight, then heaviest part.
fn score(g: &WGraph, part: &[u32], k: usize, lim: i64) -> (i64, i64, i64) {
    let mut pw = vec![0i64; k];
    for (v, &p) in part.iter().enumerate() {
        pw[p as usize] += g.vw[v];
    }
    let max = pw.iter().copied().max().unwrap_or(0);
    ((max - lim).max(0), g.cut(part), max)
}

pub(crate) fn multilevel(g: &Graph, k: usize, seed: u64) -> Vec<u32> {
    let n = g.num_vertices();
    if k == 1 {
        return vec![0; n];
    }
    if k == n {
        return (0..n as u32).collect();
    }
    let fine = WGraph::from_graph(g);
    let lim = part_limit(fine.total_vw(), k, fine.max_vw());
    let mut rng = Rng::new(seed);

    // Candidate 1: the block partition, refined.
    let mut from_block = block::block(g, k);
    refine::balance_and_refine(&fine, &mut from_block, k, lim, REFINE_PASSES, &mut rng.fork());

    // Candidate 2: multilevel from scratch.
    let ml = multilevel_run(&fine, k, &mut rng.fork());

    let s_block = score(&fine, &from_block, k, lim);
    let s_ml = score(&fine, &ml, k, lim);
    let mut best = if s_ml < s_block { ml } else { from_block };
    ensure_nonempty(&mut best, k);
    best
}

/// Coarsen, partition the coarsest graph, then project back with rebalancing and refinement.
fn multilevel_run(fine: &WGraph, k: usize, rng: &mut Rng) -> Vec<u32> {
    let total = fine.total_vw();
    let target = coarsen_to(k);
    let max_vw = ((1.5 * total as f64 / target as f64) as i64).max(fine.max_vw());

    // levels[i] = (graph at level i + 1, map from level-i vertices to it); level 0 is `fine`.
    let mut levels: Vec<(WGraph, Vec<u32>)> = Vec::new();
    loop {
        let cur = levels.last().map_or(fine, |l| &l.0);
        if cur.n() <= target {
            break;
        }
        let (cg, cmap) = coarsen::coarsen(cur, max_vw, rng);
        let (before, after) = (cur.n(), cg.n());
        if after == before || after < k {
            break;
        }
        levels.push((cg, cmap));
        if after as f64 > 0.85 * before as f64 {
            break; // matching stalls (e.g. star-like graphs): stop coarsening
        }
    }

    let coarsest = levels.last().map_or(fine, |l| &l.0);
    let mut part = initial::recursive_bisection(coarsest, k, IMBALANCE_TOLERANCE, rng);
    let lim_of = |g: &WGraph| part_limit(total, k, g.max_vw());
    refine::balance_and_refine(coarsest, &mut part, k, lim_of(coarsest), REFINE_PASSES, rng);
    for i in (0..levels.len()).rev() {
        let finer = if i == 0 { fine } else { &levels[i - 1].0 };
        let cmap = &levels[i].1;
        let mut projected: Vec<u32> = cmap.iter().map(|&c| part[c as usize]).collect();
        refine::balance_and_refine(finer, &mut projected, k, lim_of(finer), REFINE_PASSES, rng);
        part = projected;
    }
    part
}

/// Safety net: gives every empty part one vertex taken from the part with the most vertices.
/// (The algorithms above never empty a part; this only guards the public guarantee.)
fn ensure_nonempty(part: &mut [u32], k: usize) {
    let mut cnt = vec![0usize; k];
    for &p in part.iter() {
        cnt[p as usize] += 1;
    }
    for empty in 0..k {
        if cnt[empty] > 0 {
            continue;
        }
        let donor = (0..k).max_by_key(|&p| (cnt[p], p)).expect("k >= 1");
        let v = part.iter().rposition(|&p| p as usize == donor).expect("donor has vertices");
        part[v] = empty as u32;
        cnt[donor] -= 1;
        cnt[empty] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_is_three_percent_or_perfect_balance() {
        assert_eq!(part_limit(1000, 2, 1), 515);
        assert_eq!(part_limit(64, 8, 1), 8);
        assert_eq!(part_limit(10, 3, 1), 4);
        assert_eq!(part_limit(10, 3, 5), 8);
    }

    #[test]
    fn ensure_nonempty_fills_gaps() {
        let mut p = vec![0, 0, 0, 2];
        ensure_nonempty(&mut p, 3);
        let mut cnt = [0; 3];
        for &x in &p {
            cnt[x as usize] += 1;
        }
        assert!(cnt.iter().all(|&c| c > 0));
    }
}
