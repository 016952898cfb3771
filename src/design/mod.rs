//! Finding a network before simulating it (the work behind `hxsim design`, whose command is
//! [`crate::commands::design`]):
//!
//! - the HyperX design search of Ahn et al., SC09, section 3.1.2 (see [`hyperx`]), and the regular
//!   design space in the `(S, T)` plane as the paper's Figs. 4 and 5 (see [`figures`]);
//! - switches per endpoint against network size, HyperX against the folded Clos, as the paper's
//!   Fig. 8 (see [`figures`] and [`clos`]);
//! - the HyperZ design search from Adda 2023's design equations (3)-(4) with the HyperZ SPEC's
//!   corrections (see [`hyperz`]).

pub mod clos;
pub mod figures;
pub mod hyperx;
pub mod hyperz;

use std::str::FromStr;

/// A positive rational number, written as a decimal (`0.125`) or a fraction (`1/3`), so that
/// constraint (4) of section 3.1, `min(K_k S_k) / (2T) >= B`, is tested exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ratio {
    num: u64,
    den: u64,
}

impl FromStr for Ratio {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("\"{s}\" is not a positive decimal (0.5) or fraction (1/2)");
        let (num, den) = if let Some((a, b)) = s.split_once('/') {
            (a.trim().parse::<u64>().map_err(|_| bad())?, b.trim().parse::<u64>().map_err(|_| bad())?)
        } else {
            let (int, frac) = s.trim().split_once('.').unwrap_or((s.trim(), ""));
            if frac.len() > 9 || (int.is_empty() && frac.is_empty()) {
                return Err(bad());
            }
            let digits = |x: &str| x.is_empty() || x.bytes().all(|c| c.is_ascii_digit());
            if !digits(int) || !digits(frac) {
                return Err(bad());
            }
            let int: u64 = if int.is_empty() { 0 } else { int.parse().map_err(|_| bad())? };
            let f: u64 = if frac.is_empty() { 0 } else { frac.parse().map_err(|_| bad())? };
            let den = 10u64.pow(frac.len() as u32);
            (int.checked_mul(den).and_then(|x| x.checked_add(f)).ok_or_else(bad)?, den)
        };
        if num == 0 || den == 0 || num > 1_000_000_000_000 || den > 1_000_000_000_000 {
            return Err(bad());
        }
        Ok(Ratio { num, den })
    }
}

impl std::fmt::Display for Ratio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.value())
    }
}

impl Ratio {
    /// As a float (for printing).
    pub fn value(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// `self <= a / b` (`b > 0`).
    pub fn le_ratio(&self, a: u64, b: u64) -> bool {
        self.num as u128 * b as u128 <= a as u128 * self.den as u128
    }

    /// `self <= a / b` (`b > 0`), for wide operands.
    pub fn le_ratio_wide(&self, a: u128, b: u128) -> bool {
        (self.num as u128).checked_mul(b).is_some_and(|l| a.checked_mul(self.den as u128).is_none_or(|r| l <= r))
    }

    /// The smallest integer `k` with `k * s >= self * x` (`s > 0`).
    pub fn min_multiplier(&self, x: u64, s: u64) -> u64 {
        let k = (self.num as u128 * x as u128).div_ceil(s as u128 * self.den as u128);
        k.min(u64::MAX as u128) as u64
    }

    /// The largest `t` with `a / (2t) >= self`, i.e. `2 t self <= a`.
    pub fn max_t(&self, a: u64) -> u64 {
        let t = (a as u128 * self.den as u128) / (2 * self.num as u128);
        t.min(u64::MAX as u128) as u64
    }
}
