//! The `block` and `round-robin` methods.

use crate::Graph;

/// Contiguous ranges of vertex ids. With equal vertex weights the part sizes differ by at most one
/// (part `p` gets ids `ceil(p n / k)..ceil((p + 1) n / k)`); otherwise each boundary is placed
/// where the prefix weight is closest to `p W / k`, keeping every part nonempty. `O(V)`.
pub(crate) fn block(g: &Graph, k: usize) -> Vec<u32> {
    let n = g.num_vertices();
    debug_assert!(k >= 1 && k <= n);
    let w0 = g.vwgt.first().copied().unwrap_or(1);
    let uniform = w0 > 0 && g.vwgt.iter().all(|&w| w == w0);
    let mut bounds = vec![0usize; k + 1];
    bounds[k] = n;
    if uniform {
        for (p, b) in bounds.iter_mut().enumerate().take(k).skip(1) {
            *b = (p * n).div_ceil(k);
        }
    } else {
        // prefix[i] = weight of vertices 0..i, scaled by k so targets p*W are integers.
        let total: u128 = g.vwgt.iter().map(|&w| w as u128).sum();
        let mut i = 0usize;
        let mut prefix: u128 = 0; // weight of 0..i
        for p in 1..k {
            let target = p as u128 * total;
            while i < n && prefix * (k as u128) < target {
                prefix += g.vwgt[i] as u128;
                i += 1;
            }
            // i is the smallest index with prefix(i) * k >= target (or n); maybe i - 1 is closer.
            let mut b = i;
            if i > 0 {
                let below = prefix - g.vwgt[i - 1] as u128;
                if target - below * (k as u128) < prefix * (k as u128) - target {
                    b = i - 1;
                }
            }
            // Keep every part nonempty: at least one vertex before, k - p after.
            bounds[p] = b.max(bounds[p - 1] + 1).min(n - (k - p));
        }
    }
    let mut assign = vec![0u32; n];
    for p in 0..k {
        assign[bounds[p]..bounds[p + 1]].fill(p as u32);
    }
    assign
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

    #[test]
    fn round_robin_cycles() {
        assert_eq!(round_robin(7, 3), vec![0, 1, 2, 0, 1, 2, 0]);
    }
}
