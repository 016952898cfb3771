//! The `block` and `round-robin` methods.

use crate::Graph;

/// Contiguous ranges of vertex ids. With equal vertex weights the part sizes differ by at most one
/// (part `p` gets ids `ceil(p n / k)..ceil((p + 1) n / k)`); otherwise each boundary is placed
/// where the prefix weight is closest to `p W / k`, keeping every part nonempty. `O(V)`.
pub(crate) fn block(g: &Graph, k: usize) -> Vec<u32> {
    let n = g.num_vertices();
    debug_assert!(k >= 1 && k <= n);
    let mut assign = vec![0u32; n];
    let whole = [0, n];
    let strata: &[usize] = if g.strata.len() >= 2 { &g.strata } else { &whole };
    // A stratum with fewer vertices than parts leaves some parts without any of it; the largest
    // one is cut so that every part gets at least one vertex.
    let largest =
        strata.windows(2).map(|w| w[1] - w[0]).enumerate().max_by_key(|&(i, len)| (len, std::cmp::Reverse(i)));
    for (i, w) in strata.windows(2).enumerate() {
        let range = w[0]..w[1];
        let must_fill = largest.is_some_and(|(j, _)| j == i);
        let bounds = split(&g.vwgt[range.clone()], k, must_fill);
        for p in 0..k {
            assign[range.start + bounds[p]..range.start + bounds[p + 1]].fill(p as u32);
        }
    }
    assign
}

/// Bounds of `k` contiguous ranges of the vertices of weights `w`, balanced by count when the
/// weights are equal and by weight otherwise; with `nonempty` (and `k <= w.len()`), every range
/// holds at least one vertex.
fn split(w: &[u32], k: usize, nonempty: bool) -> Vec<usize> {
    let n = w.len();
    let w0 = w.first().copied().unwrap_or(1);
    let uniform = w0 > 0 && w.iter().all(|&x| x == w0);
    let mut bounds = vec![0usize; k + 1];
    bounds[k] = n;
    if uniform {
        for (p, b) in bounds.iter_mut().enumerate().take(k).skip(1) {
            *b = (p * n).div_ceil(k);
        }
    } else {
        // prefix[i] = weight of vertices 0..i, scaled by k so targets p*W are integers.
        let total: u128 = w.iter().map(|&x| x as u128).sum();
        let mut i = 0usize;
        let mut prefix: u128 = 0; // weight of 0..i
        for p in 1..k {
            let target = p as u128 * total;
            while i < n && prefix * (k as u128) < target {
                prefix += w[i] as u128;
                i += 1;
            }
            // i is the smallest index with prefix(i) * k >= target (or n); maybe i - 1 is closer.
            let mut b = i;
            if i > 0 {
                let below = prefix - w[i - 1] as u128;
                if target - below * (k as u128) < prefix * (k as u128) - target {
                    b = i - 1;
                }
            }
            bounds[p] = if nonempty && n >= k {
                // Keep every part nonempty: at least one vertex before, k - p after.
                b.max(bounds[p - 1] + 1).min(n - (k - p))
            } else {
                b.max(bounds[p - 1])
            };
        }
    }
    bounds
}

/// Vertex `v` goes to part `v % k`.
pub(crate) fn round_robin(n: usize, k: usize) -> Vec<u32> {
    (0..n).map(|v| (v % k) as u32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(assign: &[u32], k: usize) -> Vec<usize> {
        let mut s = vec![0; k];
        for &p in assign {
            s[p as usize] += 1;
        }
        s
    }

    #[test]
    fn uniform_block_sizes_differ_by_at_most_one() {
        for n in 1..40 {
            let g = Graph::from_edges(n, &[]);
            for k in 1..=n {
                let a = block(&g, k);
                assert!(a.windows(2).all(|w| w[0] <= w[1]));
                let s = sizes(&a, k);
                let (lo, hi) = (*s.iter().min().unwrap(), *s.iter().max().unwrap());
                assert!(lo >= 1 && hi - lo <= 1, "n={n} k={k} sizes={s:?}");
            }
        }
    }

    #[test]
    fn weighted_block_balances_weight() {
        let mut g = Graph::from_edges(8, &[]);
        g.vwgt = vec![4, 1, 1, 1, 1, 4, 1, 3];
        // Total 16, target 8 per part: the prefix weight of vertices 0..=4 is exactly 8.
        assert_eq!(block(&g, 2), vec![0, 0, 0, 0, 0, 1, 1, 1]);
        // Heavy first vertex: every part must still be nonempty.
        g.vwgt = vec![100, 1, 1, 1, 1, 1, 1, 1];
        let a = block(&g, 4);
        assert_eq!(sizes(&a, 4).iter().filter(|&&s| s == 0).count(), 0);
        assert_eq!(a[0], 0);
        assert_eq!(a[1], 1);
    }

    /// Strata (a tree's levels) are each cut into `k` ranges, part `p` taking the `p`-th of
    /// each: a two-level tree's leaves and tops are spread over both parts alike, where one cut
    /// of the ids would give one part every leaf.
    #[test]
    fn strata_spread_every_kind_over_every_part() {
        let g = Graph::from_edges(12, &[]).with_strata(vec![0, 8, 12]);
        assert_eq!(block(&g, 2), vec![0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1]);
        // A stratum smaller than the number of parts: the largest still fills every part.
        let g = Graph::from_edges(7, &[]).with_strata(vec![0, 5, 7]);
        let a = block(&g, 4);
        assert!(sizes(&a, 4).iter().all(|&s| s >= 1), "{a:?}");
        for k in 1..=5 {
            let a = block(&g, k);
            // Within each stratum parts come in order (contiguous ranges).
            assert!(a[..5].windows(2).all(|w| w[0] <= w[1]) && a[5..].windows(2).all(|w| w[0] <= w[1]));
            let s = sizes(&a[..5], k);
            assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1, "k={k} {a:?}");
        }
    }

    #[test]
    fn round_robin_cycles() {
        assert_eq!(round_robin(7, 3), vec![0, 1, 2, 0, 1, 2, 0]);
    }
}
