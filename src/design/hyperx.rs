//! The HyperX design search of Ahn et al., SC09, section 3.1.2: the HyperX with fewest switches
//! for `N` endpoints on radix-`R` switches with relative bisection bandwidth at least `B`.
//!
//! A design is a dimension count `L`, a shape `S = (S_1..S_L)`, trunking factors
//! `K = (K_1..K_L)` and `T` endpoints (terminals) per switch. It is feasible when
//! - constraint (2), ports: `T + sum_k K_k (S_k - 1) <= R`;
//! - constraint (3), size: `T * prod_k S_k >= N`;
//! - constraint (4), bisection: `beta = min_k(K_k S_k) / (2T) >= B`;
//! - constraint (5): `S_k >= 2` for every `k`.
//!
//! The search enumerates `L = 1, 2, ...` and, for each, the shapes in the symmetric order of
//! constraint (6), `S_1 <= S_2 <= ... <= S_L`, pruning with
//! - constraint (8), the incumbent bound: a partial shape whose smallest completion
//!   (`prod_{j<k} S_j * S_k^(L-k+1)`) exceeds the switch count `O` of the best design found so far
//!   is abandoned, and so is every `L` with `2^L > O`;
//! - constraint (9), `T_min = ceil(N / O)`: no design that can still win has fewer endpoints per
//!   switch, so the ports a partial shape needs (`T_min + sum (S_k - 1)` with `K_k >= 1`) are
//!   checked against (2) before the shape is completed;
//! - a capacity bound from (2) and (3): with `b` ports left for `T` and the `m` remaining
//!   dimensions, `T * prod_rest S_j <= ((b + m) / (m + 1))^(m + 1)` (arithmetic-geometric mean), so
//!   a prefix whose product times that bound is below `N` cannot be completed.
//!
//! The regular designs are searched first (a few thousand shapes at most): they are general designs
//! too, so the best of them is the first incumbent of the general search. A general search that
//! would visit more than [`SHAPE_LIMIT`] partial shapes stops with [`TooLarge`] instead of
//! answering (huge `N` for the radix, e.g. `N = 2^40` on radix 256); the paper's cases visit far
//! fewer and take milliseconds.
//!
//! For a complete shape `S` the trunking and `T` are not enumerated one by one: constraint (3)
//! gives the smallest `T`, `T_lo = ceil(N / P)`, and constraint (4) at `T_lo` the smallest
//! trunking, `K_k = max(1, ceil(2 B T_lo / S_k))`. Any other feasible `(K', T')` for the same shape
//! has `T' >= T_lo` and so `K'_k >= K_k` in every dimension: it uses no fewer ports and no fewer
//! links, so `(K, T_lo)` is feasible whenever anything is and is the cheapest choice. Because
//! `S` is non-decreasing, this `K` is non-increasing: the symmetry ordering (7),
//! `K_1 >= ... >= K_L`, holds by construction. The brute-force search in the tests enumerates every
//! `(L, S, K, T)` without any of these orderings or bounds and finds the same designs.
//!
//! **Ranking.** Fewest switches `P = prod S_k`; ties go to fewer dimensions, then to fewer
//! switch-to-switch links (`P * sum_k K_k (S_k - 1) / 2`, each trunked link counted), then to the
//! lexicographically smaller shape. `T` is not unique for a given `(S, K)`: every `T` from `T_lo`
//! to `T_hi = min(R - sum K_k (S_k - 1), floor(min(K_k S_k) / (2B)))` is feasible. The design
//! reports that range and uses `T_lo` (fewest spare endpoint ports, highest `beta`); Table 1 prints
//! `T_hi` for its first general design (76 of 73..76) and `T_lo` for its first regular one (55).
//!
//! Variants: `regular` (all `S_k` equal and all `K_k` equal; the smallest `K` meeting (4)), a fixed
//! trunking (all `K_k = K`), and the flattened butterfly, which section 3.2 defines as the regular
//! HyperX with `K = 2` (section 3's stricter `T = S` form is not searched: section 3.2 notes it
//! needs `11^5` endpoints for the `N = 2^17`, `B = 1` case).

use super::Ratio;
use serde::Serialize;

/// Which family of HyperX to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Any shape and trunking allowed by constraints (2)-(7).
    General,
    /// `S_k = S` and `K_k = K` for all `k` (section 3, "regular (L, S, K, T) HyperX").
    Regular,
}

/// A design problem: the constants of section 3.1 and the restrictions of the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// `N`, the endpoints needed.
    pub endpoints: u64,
    /// `R`, ports per switch.
    pub radix: u64,
    /// `B`, the smallest relative bisection bandwidth accepted.
    pub bisection: Ratio,
    /// General or regular.
    pub family: Family,
    /// Every `K_k` equal to this (`--trunking`); `None`: the search chooses.
    pub trunking: Option<u64>,
    /// Only this many dimensions (`--dims`); `None`: any `L` from 1 to `R - 1`.
    pub dims: Option<u64>,
    /// How many designs to return (`--top`), best first.
    pub top: usize,
}

/// One HyperX design.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Design {
    /// `S_1 <= ... <= S_L`, switches per dimension.
    pub sides: Vec<u64>,
    /// `K_1 >= ... >= K_L`, parallel links between neighbours in each dimension.
    pub trunking: Vec<u64>,
    /// Endpoints per switch, the smallest feasible (`T_lo`).
    pub servers_per_switch: u64,
    /// The largest feasible `T` for this `S` and `K` (`T_hi`).
    pub servers_per_switch_max: u64,
}

impl Design {
    /// `L`.
    pub fn dims(&self) -> usize {
        self.sides.len()
    }

    /// `P = prod S_k`.
    pub fn switches(&self) -> u64 {
        self.sides.iter().product()
    }

    /// Switch-to-switch ports per switch, `sum_k K_k (S_k - 1)`.
    pub fn network_ports(&self) -> u64 {
        self.sides.iter().zip(&self.trunking).map(|(s, k)| k * (s - 1)).sum()
    }

    /// Switch-to-switch links, each trunked link counted: `P * sum_k K_k (S_k - 1) / 2`.
    pub fn links(&self) -> u64 {
        self.switches() * self.network_ports() / 2
    }

    /// `min_k K_k S_k`, twice the bisection links per endpoint pair at `T = 1` (equation (1)).
    pub fn min_ks(&self) -> u64 {
        self.sides.iter().zip(&self.trunking).map(|(s, k)| k * s).min().unwrap_or(0)
    }

    /// `beta = min(K_k S_k) / (2T)` at `T` endpoints per switch (constraint (4)).
    pub fn beta_at(&self, t: u64) -> f64 {
        self.min_ks() as f64 / (2.0 * t as f64)
    }

    /// Endpoints the design attaches: `T * P`.
    pub fn endpoints(&self) -> u64 {
        self.servers_per_switch * self.switches()
    }

    /// Largest switch-to-switch distance: the number of dimensions (all have `S_k >= 2`).
    pub fn diameter(&self) -> usize {
        self.sides.iter().filter(|&&s| s >= 2).count()
    }

    /// Average distance over all ordered switch pairs, self pairs included, as `hxsim analyze`
    /// reports it: a pair differs in dimension `k` with probability `(S_k - 1) / S_k`.
    pub fn average_distance(&self) -> f64 {
        self.sides.iter().map(|&s| (s - 1) as f64 / s as f64).sum()
    }

    fn rank_key(&self) -> (u64, usize, u64, &[u64]) {
        (self.switches(), self.dims(), self.links(), &self.sides)
    }
}

/// A constraint of section 3.1 that a design breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// Shape and trunking have different lengths, or no dimension at all.
    Malformed,
    /// Constraint (2): more ports than the radix.
    Ports {
        /// `T + sum K_k (S_k - 1)`.
        used: u64,
    },
    /// Constraint (3): fewer endpoints than `N`.
    Size {
        /// `T * P`.
        endpoints: u64,
    },
    /// Constraint (4): too little bisection bandwidth.
    Bisection,
    /// Constraint (5): a dimension with fewer than 2 switches.
    Side,
    /// A trunking factor of 0, or `T` of 0.
    Zero,
}

/// Check constraints (2)-(5) of Ahn et al., SC09, section 3.1 for the design `(S, K, T)` directly,
/// without any ordering: the reference used by the tests and by [`search`]'s debug assertions.
pub fn check(p: &Problem, sides: &[u64], trunking: &[u64], t: u64) -> Result<(), Violation> {
    if sides.is_empty() || sides.len() != trunking.len() {
        return Err(Violation::Malformed);
    }
    if t == 0 || trunking.contains(&0) {
        return Err(Violation::Zero);
    }
    if sides.iter().any(|&s| s < 2) {
        return Err(Violation::Side);
    }
    let used = t + sides.iter().zip(trunking).map(|(s, k)| k * (s - 1)).sum::<u64>();
    if used > p.radix {
        return Err(Violation::Ports { used });
    }
    let endpoints = sides.iter().fold(t as u128, |a, &s| a * s as u128);
    if endpoints < p.endpoints as u128 {
        return Err(Violation::Size { endpoints: endpoints.min(u64::MAX as u128) as u64 });
    }
    let min_ks = sides.iter().zip(trunking).map(|(s, k)| k * s).min().unwrap_or(0);
    if !p.bisection.le_ratio(min_ks, 2 * t) {
        return Err(Violation::Bisection);
    }
    Ok(())
}

/// The best designs, at most `cap`, in rank order.
struct Best {
    cap: usize,
    list: Vec<Design>,
}

impl Best {
    /// `O` of constraint (8): the switch count a new design must not exceed to enter the list.
    fn bound(&self) -> u64 {
        if self.list.len() < self.cap {
            u64::MAX
        } else {
            self.list.last().map_or(u64::MAX, Design::switches)
        }
    }

    fn offer(&mut self, d: Design) {
        if self.list.contains(&d) {
            return;
        }
        let at = self.list.partition_point(|x| x.rank_key() <= d.rank_key());
        if at < self.cap {
            self.list.insert(at, d);
            self.list.truncate(self.cap);
        }
    }
}

struct Search<'a> {
    p: &'a Problem,
    best: Best,
    /// Smallest `K_k` any dimension can have.
    k_min: u64,
    /// Partial shapes visited, against [`SHAPE_LIMIT`].
    visited: u64,
}

/// Most partial shapes one general search visits before giving up with [`TooLarge`] (about a
/// second in a release build).
pub const SHAPE_LIMIT: u64 = 20_000_000;

/// A general search that would visit more than [`SHAPE_LIMIT`] partial shapes: a huge `N` for
/// the radix, where no incumbent bound (8) is found early. Restricting `L` or asking for a regular
/// design makes it small.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge;

/// The best `p.top` designs of problem `p`, best first (ranking in the module doc). Empty when no
/// HyperX meets the constraints.
pub fn search(p: &Problem) -> Result<Vec<Design>, TooLarge> {
    let mut s =
        Search { p, best: Best { cap: p.top.max(1), list: Vec::new() }, k_min: p.trunking.unwrap_or(1), visited: 0 };
    // Regular designs first (a few thousand shapes at most): they are general designs too, and
    // the incumbent they give prunes the general search from its start.
    s.each_dims(Family::Regular);
    if p.family == Family::General {
        s.each_dims(Family::General);
    }
    if s.visited > SHAPE_LIMIT {
        return Err(TooLarge);
    }
    Ok(s.best.list)
}

impl Search<'_> {
    fn each_dims(&mut self, family: Family) {
        let p = self.p;
        let dims = match p.dims {
            Some(l) => l..=l,
            None => 1..=p.radix.saturating_sub(1),
        };
        for l in dims {
            // Constraint (8) with S_k >= 2, and (2) with S_k >= 2, K_k >= 1, T >= T_min.
            let o = self.best.bound();
            if l >= 64 || 1u64 << l > o || self.t_min() + l * self.k_min > p.radix || self.visited > SHAPE_LIMIT {
                break;
            }
            let mut prefix = Vec::with_capacity(l as usize);
            match family {
                Family::General => self.shapes(l as usize, &mut prefix, 1, 0, 2),
                Family::Regular => self.regular(l as usize),
            }
        }
    }

    /// `T_min` of constraint (9).
    fn t_min(&self) -> u64 {
        match self.best.bound() {
            u64::MAX => 1,
            o => self.p.endpoints.div_ceil(o).max(1),
        }
    }

    /// Can a prefix with product `prod`, `used` network ports and `m` dimensions still to choose
    /// reach `N` endpoints? (Arithmetic-geometric mean bound on `T * prod_rest S_j`, see the module
    /// doc; a little slack keeps rounding on the safe side.)
    fn can_reach(&self, prod: u128, used: u64, m: usize) -> bool {
        let Some(b) = self.p.radix.checked_sub(used) else { return false };
        let per = (b + m as u64) as f64 / (m + 1) as f64;
        prod as f64 * per.powi(m as i32 + 1) * (1.0 + 1e-9) + 1.0 >= self.p.endpoints as f64
    }

    /// Choose `S_k` for `k = prefix.len()` and the dimensions after it, `S_k >= lo` (6).
    fn shapes(&mut self, l: usize, prefix: &mut Vec<u64>, prod: u128, used: u64, lo: u64) {
        let k = prefix.len();
        self.visited += 1;
        if self.visited > SHAPE_LIMIT {
            return;
        }
        if k == l {
            self.complete(prefix);
            return;
        }
        let m = (l - k) as u32; // dimensions left, this one included
        let mut s = lo;
        loop {
            let o = self.best.bound() as u128;
            // (8): every completion has product at least prod * s^m.
            let smallest = (0..m).try_fold(prod, |a, _| a.checked_mul(s as u128)).unwrap_or(u128::MAX);
            if smallest > o {
                break;
            }
            // (2) with (9): T >= T_min and K_j >= k_min for the m dimensions left, each S_j >= s.
            let need = used + m as u64 * self.k_min * (s - 1);
            if self.t_min() + need > self.p.radix {
                break;
            }
            let here = used + self.k_min * (s - 1);
            if self.can_reach(prod * s as u128, here, (m - 1) as usize) {
                prefix.push(s);
                self.shapes(l, prefix, prod * s as u128, here, s);
                prefix.pop();
            }
            s += 1;
        }
    }

    /// Regular shapes `(S, ..., S)` with `L = l`.
    fn regular(&mut self, l: usize) {
        let mut s = 2u64;
        loop {
            let prod = (0..l).try_fold(1u128, |a, _| a.checked_mul(s as u128)).unwrap_or(u128::MAX);
            if prod > self.best.bound() as u128 || self.t_min() + l as u64 * self.k_min * (s - 1) > self.p.radix {
                break;
            }
            self.complete(&vec![s; l]);
            s += 1;
        }
    }

    /// The cheapest `(K, T)` for the shape `sides`, offered to the list if feasible.
    fn complete(&mut self, sides: &[u64]) {
        let p = self.p;
        let prod: u64 = sides.iter().product();
        let t_lo = p.endpoints.div_ceil(prod).max(1);
        // Smallest K_k with K_k S_k >= 2 B T_lo (4); regular: one K for all (S is the same anyway).
        let trunking: Vec<u64> = match p.trunking {
            Some(k) => vec![k; sides.len()],
            None => sides.iter().map(|&s| p.bisection.min_multiplier(2 * t_lo, s).max(1)).collect(),
        };
        debug_assert!(trunking.windows(2).all(|w| w[0] >= w[1]), "constraint (7) holds by construction");
        let net: u64 = sides.iter().zip(&trunking).map(|(s, k)| k * (s - 1)).sum();
        let Some(t_ports) = p.radix.checked_sub(net) else { return };
        let min_ks = sides.iter().zip(&trunking).map(|(s, k)| k * s).min().unwrap_or(0);
        let t_hi = t_ports.min(p.bisection.max_t(min_ks));
        if t_lo > t_hi {
            return;
        }
        debug_assert_eq!(check(p, sides, &trunking, t_lo), Ok(()));
        debug_assert_eq!(check(p, sides, &trunking, t_hi), Ok(()));
        self.best.offer(Design {
            sides: sides.to_vec(),
            trunking,
            servers_per_switch: t_lo,
            servers_per_switch_max: t_hi,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search_ok(p: &Problem) -> Vec<Design> {
        search(p).expect("small search")
    }

    fn problem(n: u64, r: u64, b: &str, family: Family) -> Problem {
        Problem { endpoints: n, radix: r, bisection: b.parse().unwrap(), family, trunking: None, dims: None, top: 1 }
    }

    /// Every design `(L, S, K, T)` with `S_k` in `2..=R`, `K_k` in `1..=R`, `T` in `1..=R`, in
    /// any order, checked with [`check`] alone; for each shape up to permutation the feasible
    /// `(K, T)` with fewest links and then smallest `T`. Ranked as [`search`] ranks.
    fn brute_force(p: &Problem) -> Vec<Design> {
        let mut best: std::collections::BTreeMap<Vec<u64>, Design> = Default::default();
        let r = p.radix;
        let mut all_s: Vec<Vec<u64>> = Vec::new();
        // All vectors S (any order) of any length L with sum (S_k - 1) <= R - 1: every other S
        // breaks (2) for any K >= 1, T >= 1, so cutting them here enumerates nothing less.
        fn vectors(r: u64, cur: &mut Vec<u64>, used: u64, out: &mut Vec<Vec<u64>>, lo: u64, hi: u64) {
            if !cur.is_empty() {
                out.push(cur.clone());
            }
            for s in lo..=hi {
                if used + (s - 1) + 1 > r {
                    break;
                }
                cur.push(s);
                vectors(r, cur, used + s - 1, out, lo, hi);
                cur.pop();
            }
        }
        vectors(r, &mut Vec::new(), 0, &mut all_s, 2, r);
        for s in &all_s {
            if let Some(l) = p.dims {
                if s.len() as u64 != l {
                    continue;
                }
            }
            if p.family == Family::Regular && s.iter().any(|&x| x != s[0]) {
                continue;
            }
            let mut ks: Vec<Vec<u64>> = vec![vec![]];
            for _ in 0..s.len() {
                ks = ks
                    .into_iter()
                    .flat_map(|k| {
                        (1..=r).map(move |x| {
                            let mut k = k.clone();
                            k.push(x);
                            k
                        })
                    })
                    .filter(|k| k.iter().zip(s.iter()).map(|(k, s)| k * (s - 1)).sum::<u64>() < r)
                    .collect();
            }
            for k in ks {
                if p.family == Family::Regular && k.iter().any(|&x| x != k[0]) {
                    continue;
                }
                if let Some(fixed) = p.trunking {
                    if k.iter().any(|&x| x != fixed) {
                        continue;
                    }
                }
                let feasible: Vec<u64> = (1..=r).filter(|&t| check(p, s, &k, t).is_ok()).collect();
                let (Some(&t_lo), Some(&t_hi)) = (feasible.first(), feasible.last()) else { continue };
                assert_eq!(feasible.len() as u64, t_hi - t_lo + 1, "feasible T form an interval");
                // Canonical order: sort the dimensions by S ascending, K descending.
                let mut dims: Vec<(u64, u64)> = s.iter().copied().zip(k.iter().copied()).collect();
                dims.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
                let d = Design {
                    sides: dims.iter().map(|x| x.0).collect(),
                    trunking: dims.iter().map(|x| x.1).collect(),
                    servers_per_switch: t_lo,
                    servers_per_switch_max: t_hi,
                };
                let key = d.sides.clone();
                let better = match best.get(&key) {
                    None => true,
                    Some(o) => (d.links(), d.servers_per_switch) < (o.links(), o.servers_per_switch),
                };
                if better {
                    best.insert(key, d);
                }
            }
        }
        let mut v: Vec<Design> = best.into_values().collect();
        v.sort_by(|a, b| a.rank_key().cmp(&b.rank_key()));
        v.truncate(p.top);
        v
    }

    #[test]
    fn pruned_search_agrees_with_brute_force_on_small_problems() {
        let mut checked = 0;
        for r in 2..=9u64 {
            for n in [1u64, 2, 3, 5, 8, 12, 17, 24, 32, 45, 64, 100, 128, 200] {
                for b in ["0.125", "0.25", "0.5", "1", "1.5", "0.3"] {
                    for family in [Family::General, Family::Regular] {
                        for (trunking, dims) in [(None, None), (Some(1), None), (Some(2), None), (None, Some(2))] {
                            let mut p = problem(n, r, b, family);
                            p.trunking = trunking;
                            p.dims = dims;
                            p.top = 6;
                            let fast = search_ok(&p);
                            let slow = brute_force(&p);
                            assert_eq!(fast, slow, "{p:?}");
                            checked += fast.len();
                        }
                    }
                }
            }
        }
        assert!(checked > 1000, "the grid must hold many feasible designs, found {checked}");
    }

    fn paper(b: &str, family: Family) -> Problem {
        problem(1 << 17, 128, b, family)
    }

    /// Ahn et al., SC09, Table 1 (`N = 2^17`, `R = 128`): the paper's general designs, each
    /// `(B, S, K, T as printed)`.
    const TABLE1_GENERAL: [(&str, [u64; 3], [u64; 3], u64); 4] = [
        ("0.125", [5, 19, 19], [4, 1, 1], 76),
        ("0.25", [3, 27, 30], [9, 1, 1], 54),
        ("0.5", [3, 35, 36], [12, 1, 1], 35),
        ("1", [5, 38, 38], [8, 1, 1], 19),
    ];

    /// Table 1's regular designs, `(B, L, S, K, T as printed)`.
    const TABLE1_REGULAR: [(&str, usize, u64, u64, u64); 4] =
        [("0.125", 4, 7, 2, 55), ("0.25", 3, 14, 2, 48), ("0.5", 3, 16, 2, 32), ("1", 4, 10, 3, 14)];

    #[test]
    fn table1_general_designs() {
        for (b, sides, trunking, t) in TABLE1_GENERAL {
            let p = paper(b, Family::General);
            // The paper's design meets every constraint as printed ...
            assert_eq!(check(&p, &sides, &trunking, t), Ok(()), "B = {b}");
            // ... and the search finds it (no design with fewer switches exists).
            let best = &search_ok(&p)[0];
            assert_eq!(best.sides, sides, "B = {b}");
            assert_eq!(best.trunking, trunking, "B = {b}");
            assert_eq!(best.switches(), sides.iter().product::<u64>());
            let (lo, hi) = (best.servers_per_switch, best.servers_per_switch_max);
            assert!((lo..=hi).contains(&t), "B = {b}: the paper's T = {t} is in the range {lo}..{hi}");
            // Every T of the range is feasible and the ones just outside are not.
            for x in lo..=hi {
                assert_eq!(check(&p, &sides, &trunking, x), Ok(()));
            }
            assert!(check(&p, &sides, &trunking, lo - 1).is_err());
            assert!(check(&p, &sides, &trunking, hi + 1).is_err());
        }
        // The note: for the first design every T from 73 to 76 fits, and the paper prints 76.
        let first = &search_ok(&paper("0.125", Family::General))[0];
        assert_eq!((first.servers_per_switch, first.servers_per_switch_max), (73, 76));
    }

    #[test]
    fn table1_general_switch_counts_and_ties() {
        let counts: Vec<u64> =
            ["0.125", "0.25", "0.5", "1"].iter().map(|b| search_ok(&paper(b, Family::General))[0].switches()).collect();
        assert_eq!(counts, [1805, 2430, 3780, 7220]);
        // At B = 1 another shape also has 7220 switches in 3 dimensions; the paper's has fewer links.
        let mut p = paper("1", Family::General);
        p.top = 2;
        let two = search_ok(&p);
        assert_eq!(two[1].sides, [10, 19, 38]);
        assert_eq!(two[1].trunking, [4, 2, 1]);
        assert_eq!(check(&p, &two[1].sides, &two[1].trunking, 19), Ok(()));
        assert_eq!(two[0].switches(), two[1].switches());
        assert!(two[0].links() < two[1].links());
    }

    #[test]
    fn table1_regular_designs() {
        for (b, l, s, k, t) in TABLE1_REGULAR {
            let p = paper(b, Family::Regular);
            assert_eq!(check(&p, &vec![s; l], &vec![k; l], t), Ok(()), "B = {b}");
            let best = &search_ok(&p)[0];
            assert_eq!(best.sides, vec![s; l], "B = {b}");
            assert_eq!(best.trunking, vec![k; l], "B = {b}");
            assert!((best.servers_per_switch..=best.servers_per_switch_max).contains(&t));
        }
        // The paper prints the smallest T for the first regular design.
        assert_eq!(search_ok(&paper("0.125", Family::Regular))[0].servers_per_switch, 55);
    }

    #[test]
    fn flattened_butterfly_section_3_2() {
        // A regular HyperX with K = 2 at full bisection: L = 4, S = 11, T = 9, 14,641 switches.
        let mut p = paper("1", Family::Regular);
        p.trunking = Some(2);
        let best = &search_ok(&p)[0];
        assert_eq!((best.dims(), best.sides[0], best.servers_per_switch), (4, 11, 9));
        assert_eq!(best.switches(), 14641);
        // With T = S as well it would need 11^5 = 161,051 endpoints, 29,979 more than N.
        assert_eq!(11u64.pow(5) - (1 << 17), 29979);
    }

    #[test]
    fn general_beats_regular_by_8_to_28_percent() {
        let savings: Vec<f64> = ["0.125", "0.25", "0.5", "1"]
            .iter()
            .map(|b| {
                let g = search_ok(&paper(b, Family::General))[0].switches() as f64;
                let r = search_ok(&paper(b, Family::Regular))[0].switches() as f64;
                100.0 * (r - g) / r
            })
            .collect();
        let lo = savings.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = savings.iter().copied().fold(0.0, f64::max);
        assert_eq!((lo.round(), hi.round()), (8.0, 28.0), "{savings:?}");
        // "The best results were always three dimensional in the general case, whereas the best
        // regular designs were four dimensional in two cases."
        let dims = |f| ["0.125", "0.25", "0.5", "1"].map(|b| search_ok(&paper(b, f))[0].dims());
        assert_eq!(dims(Family::General), [3, 3, 3, 3]);
        assert_eq!(dims(Family::Regular).iter().filter(|&&l| l == 4).count(), 2);
    }

    #[test]
    fn two_dimensions_without_trunking_cannot_reach_2_17_endpoints() {
        // Fig. 4: L = 2, K = 1, R = 128, N = 2^17 has no solution, regular or not, whatever the
        // bisection asked for.
        for b in ["0.001", "0.125", "0.5", "1"] {
            for family in [Family::Regular, Family::General] {
                let mut p = paper(b, family);
                p.dims = Some(2);
                p.trunking = Some(1);
                assert!(search_ok(&p).is_empty(), "B = {b} {family:?}");
            }
        }
        // ... while three dimensions do (Fig. 5).
        let mut p = paper("0.5", Family::Regular);
        p.dims = Some(3);
        p.trunking = Some(1);
        assert!(!search_ok(&p).is_empty());
    }

    #[test]
    fn table1_cases_list_ten_designs_within_seconds() {
        let start = std::time::Instant::now();
        for b in ["0.125", "0.25", "0.5", "1"] {
            for f in [Family::General, Family::Regular] {
                let mut p = paper(b, f);
                p.top = 10;
                assert_eq!(search_ok(&p).len(), 10);
            }
        }
        assert!(start.elapsed().as_secs_f64() < 20.0, "{:?}", start.elapsed());
    }

    #[test]
    fn design_metrics() {
        // SurePath Table 3's 8x8x8 HyperX: diameter 3, average distance 2.625 (as hxsim analyze).
        let d =
            Design { sides: vec![8, 8, 8], trunking: vec![1, 1, 1], servers_per_switch: 8, servers_per_switch_max: 8 };
        assert_eq!(d.diameter(), 3);
        assert!((d.average_distance() - 2.625).abs() < 1e-12);
        assert_eq!(d.links(), 512 * 21 / 2);
        assert_eq!(d.beta_at(8), 0.5);
    }

    #[test]
    fn ratios_are_exact() {
        let r: Ratio = "0.1".parse().unwrap();
        // 0.1 as a float is a little above 1/10: the exact test still accepts K S = 2 T / 10.
        assert!(r.le_ratio(2, 20));
        assert!(!r.le_ratio(19, 200));
        assert_eq!("1/3".parse::<Ratio>().unwrap().max_t(2), 3);
        for bad in ["0", "-1", "x", "", ".", "1/0", "0.1234567891"] {
            assert!(bad.parse::<Ratio>().is_err(), "{bad}");
        }
    }
}
