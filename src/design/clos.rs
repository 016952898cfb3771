//! Switch count of a folded Clos (fat tree) of radix-`R` switches for `N` endpoints, the baseline
//! of Ahn et al., SC09, Fig. 8.
//!
//! Section 2.1 of the paper gives the full-bisection folded Clos: with `L` levels it holds
//! `N = 2 (R/2)^L` endpoints on `P = (2L - 1)(R/2)^(L-1)` switches, so `P/N = (2L - 1)/R`. The
//! paper does not spell out how it counts the tapered ones (`beta < 1`, defined in section 4.1 as
//! links leaving the core over `N`) or sizes that are not `2 (R/2)^L`; this module counts them as
//! the Fig. 7 Clos is built, tapered at the first level only:
//! - a leaf switch has `d` endpoint ports and `u = ceil(beta d)` up ports, `d` the largest with
//!   `d + u <= R`; `n_1 = ceil(N / d)` leaves carry `U = n_1 u` links upwards;
//! - the levels above are untapered: each of levels `2..L-1` has `ceil(U / (R/2))` switches with
//!   `R/2` ports down and up, the core has `ceil(U / R)` switches with all `R` ports down;
//! - `L` is the smallest with `n_1 <= R (R/2)^(L-2)` (a core switch reaches `R` subtrees, a level
//!   below the core multiplies by `R/2`); `N <= R` is one switch.
//!
//! At `beta = 1` this is exactly section 2.1 (`d = R/2`, `P = (2L-1) N / R`, tested). For Fig. 7's
//! case (`N = 4096`, `R = 32`, `beta = 0.5`) it gives 196 + 135 + 68 = 399 switches where the paper,
//! packaging 20 down and 10 up per leaf and two 13-port core switches per chip, has 415.

use super::Ratio;
use serde::Serialize;

/// A folded Clos as counted here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FoldedClos {
    /// Switch levels (1: a single switch).
    pub levels: u32,
    /// All switches.
    pub switches: u64,
    /// Endpoint ports per leaf switch.
    pub leaf_down: u64,
    /// Up ports per leaf switch.
    pub leaf_up: u64,
}

/// The folded Clos for `n` endpoints of radix-`r` switches tapered to `beta` (module doc); `None`
/// when `r < 4` or it would need more than 32 levels.
pub fn folded_clos(n: u64, r: u64, beta: Ratio) -> Option<FoldedClos> {
    if r < 4 || n == 0 {
        return None;
    }
    if n <= r {
        return Some(FoldedClos { levels: 1, switches: 1, leaf_down: n, leaf_up: 0 });
    }
    let up = |d: u64| beta.min_multiplier(d, 1).max(1);
    let d = (1..r).rev().find(|&d| d + up(d) <= r)?;
    let u = up(d);
    let n1 = n.div_ceil(d);
    let total_up = n1 as u128 * u as u128;
    let half = (r / 2) as u128;
    let mut reach = r as u128; // leaves a tree of `levels` levels reaches
    let mut levels = 2u32;
    while (n1 as u128) > reach {
        levels += 1;
        reach = reach.checked_mul(half)?;
        if levels > 32 {
            return None;
        }
    }
    let middle = (levels as u128 - 2) * total_up.div_ceil(half);
    let core = total_up.div_ceil(r as u128);
    let switches = u64::try_from(n1 as u128 + middle + core).ok()?;
    Some(FoldedClos { levels, switches, leaf_down: d, leaf_up: u })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_bisection_is_section_2_1() {
        let one: Ratio = "1".parse().unwrap();
        for r in [8u64, 16, 32, 64, 128] {
            for l in 2..=4u32 {
                let half = r / 2;
                let n = 2 * half.pow(l);
                let c = folded_clos(n, r, one).unwrap();
                assert_eq!(c.levels, l, "R={r} L={l}");
                assert_eq!(c.switches, (2 * l as u64 - 1) * half.pow(l - 1), "R={r} L={l}");
                // One more endpoint needs another level.
                assert_eq!(folded_clos(n + 1, r, one).unwrap().levels, l + 1);
            }
        }
        // Fig. 1: L = 2, R = 8 has 32 terminals and 12 switches.
        assert_eq!(folded_clos(32, 8, one).unwrap().switches, 12);
    }

    #[test]
    fn tapering_at_the_leaves() {
        let half: Ratio = "0.5".parse().unwrap();
        let c = folded_clos(4096, 32, half).unwrap();
        assert_eq!((c.leaf_down, c.leaf_up, c.levels), (21, 11, 3));
        assert_eq!(c.switches, 196 + 135 + 68);
    }
}
