//! The HyperZ design search: the HyperZ `H_d(s_1..s_d; q)(Z_h(z_1..z_h; r_1..r_h; g_1..g_h))` with
//! fewest switches that connects at least `N` processors on switches of at most `R` ports (Adda,
//! "HyperZ: Hyper Z-Tree Topology", Preprints 2023, section 3.2, design equations (3) and (4), as
//! corrected by `shared/specs/hyperz/SPEC.md`, "SPEC" below, section 8 items 9-11).
//!
//! **Counting** (Adda 2023, eq. (2); SPEC section 1), with `r_0 = 1`, `z_{h+1} = 1`,
//! `w_i = r_i / r_{i-1}` and `side = q * sum_k (s_k - 1)`:
//! - `R_i = r_i prod_{j>i} z_j` nodes of level `i` per Z-node (`R_0` processors), `N_Z = prod_k s_k`
//!   Z-nodes, `N_i = N_Z R_i`; switches `N_Z sum_{i>=1} R_i`, processors `N_0 = N_Z R_0`;
//! - radix of a level-`i` switch: `z_i g_i + [i<h] w_{i+1} g_{i+1} + side`; the design's radix is the
//!   largest (SPEC section 8 item 3: the paper's "equal radix 18, 20, 22, 26" of section 5.3 are these
//!   maxima);
//! - links: internal `N_Z sum_i R_i z_i g_i` (processor links included), side
//!   `N_Z sum_i R_i side (s_k - 1) / 2` summed over `k`.
//!
//! **Constraints.** A design is feasible when
//! - it is one the topology builder ([`crate::topology::hyperz::HyperZ::new`]) accepts: `r_1 = g_1 = 1`
//!   (single-homed processors), `r_{i-1} | r_i` (SPEC section 2.3), `g_i, q >= 1`, at most `2^24`
//!   switches and `2^31` processors;
//! - every level has `z_i >= 2` and every dimension `s_k >= 2` (a level or dimension of one adds
//!   switches or ports and no processors; as HyperX's constraint (5), Ahn et al., SC09, section 3.1);
//! - ports: every level's radix is at most `R` (the SPEC section 1 form of the paper's
//!   `2z + dq(z-1) <= L_max`);
//! - size: `N_0 >= N` (eq. (4) with `R_0min` read as the total processor count, SPEC section 8 item 10);
//! - bisection (optional, `--bisection B`): both cuts below are at least `B`. The HyperX paper's
//!   relative bisection (Ahn et al., eq. (1)) carried to HyperZ, `beta = q s_min sum_{i>=1} R_i / (2 R_0)`:
//!   the side links that cross the cut through the middle of the narrowest GHC dimension, at every level,
//!   per processor of one half (it halves the processors exactly when `s_min` is even and, as in the
//!   HyperX paper, is used as is when it is odd). And, for `h >= 2`, the tree cut
//!   `min_{i>=2} R_i z_i g_i / R_0` ([`Design::tree_bisection`]), without which the fewest switches
//!   would always come from slim trees (`r_i = 1`) with a large `q`. The network's true bisection is at
//!   most the smaller of the two; neither the paper nor the SPEC defines one.
//!
//! **Families.**
//! - general: any `s`, `z`, `r`, `g`, and one `q` for every level and dimension;
//! - regular (`--regular`): Definition 3.1 with the regular Z-node of SPEC section 1: `z_i = z`,
//!   `s_k = s`, `r_i = z^(i-1)`, `g_i = 1`;
//! - fully regular (`--fully-regular`): Definition 3.2, also `z = s`. Then eq. (3), corrected (SPEC
//!   section 8 item 9), reads `z <= (dq + R) / (dq + 2)` for `h >= 2` (for `h = 1` the top-level radix
//!   `z + dq(z-1)` is the only one, a weaker bound), and eq. (4), corrected (item 10),
//!   `z >= N^(1/(h+d))`: [`eq3_max_zones`] and [`eq4_min_zones`].
//!
//! **Ranking.** Fewest switches, then fewer levels `h`, then fewer links (processor links included),
//! then the lexicographically smaller `(s, z, r, q, g)`. Each shape `(s, z_2..z_h)` is listed once,
//! with its cheapest `z_1`, `r`, `g` and `q`.
//!
//! **Search.** Levels `h = 1, 2, ...` and dimensions `d = 1, 2, ...`, at most `ceil(log2 N)` each
//! ([`scope_cap`]: more levels or dimensions of at least 2 would give at least twice the processors
//! asked for), unless `--levels`/`--dims` fix them; sides in the symmetric order `s_1 <= ... <= s_d`
//! (the dimensions are interchangeable, `q` being the same in all); zones from the top level down. The
//! incumbent bound of the HyperX search (Ahn et al. constraint (8)) prunes: with `O` the switch count of
//! the `K`-th best design so far, a prefix whose smallest completion (`r_i = 1`, remaining `z_i` and
//! `s_k` at least 2 or at least the current one) has more than `O` switches is abandoned, and so is any
//! `(h, d)` with `2^d (2^h - 1) > O`. The ports bound prunes sides and zones that leave no room for
//! `z_i >= 2`, and a capacity bound prunes prefixes that cannot reach `N` processors.
//!
//! For a complete shape the rest is chosen, not enumerated:
//! - `z_1 = max(2, ceil(N / (N_Z prod_{j>=2} z_j)))`, the smallest that reaches `N`: `z_1` adds no
//!   switch, and a larger one adds ports, links and processors and lowers `beta`. The largest feasible
//!   `z_1` is reported as a range, as the HyperX search reports `T`;
//! - `g`: `g_1 = 1`, and for `i >= 2` the smallest `g_i` with `R_i z_i g_i >= B R_0` (1 without
//!   `--bisection`): `g` changes neither switches nor processors nor `beta`, and a larger one only adds
//!   ports and links;
//! - `r`: with no bisection asked, `r_i = 1` minimises every `R_i` and so switches, ports and links.
//!   With `--bisection B` the smallest `sum R_i >= 2 B R_0 / (q s_min)` is needed; the divisor chains
//!   `r` (each with its `g`, within the ports) are searched for it (fewest switches, then fewest links)
//!   for every `q` that fits the ports, and the best `(q, r, g)` kept. Without `--bisection`, `q = 1`
//!   (or `--side-links`).
//!
//! The general search starts with the regular one: regular designs are general designs of distinct
//! shapes, so the `K`-th best regular switch count is a first incumbent bound.
//!
//! The brute-force enumeration in the tests tries every `(s, z, r, g, q)` in any order within the same
//! scope and finds the same designs.

use super::Ratio;
use serde::Serialize;

/// Largest processor count the simulator builds (`2^31`, [`crate::topology::hyperz`]'s size check).
pub const MAX_PROCESSORS: u64 = 1 << 31;
/// Largest switch count the simulator builds (`2^24`).
pub const MAX_SWITCHES: u64 = 1 << 24;
/// Largest `--radix` accepted (switch ports are `u16` in the simulator).
pub const MAX_RADIX: u64 = 65535;
/// Most partial shapes one search visits before giving up with [`TooLarge`].
pub const SHAPE_LIMIT: u64 = 2_000_000;

/// Which family of HyperZ to search (Adda 2023, section 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Any sides, zones, roots and internal links; one `q`.
    General,
    /// Definition 3.1 with the regular Z-node: `z_i = z`, `s_k = s`, `r_i = z^(i-1)`, `g_i = 1`.
    Regular,
    /// Definition 3.2: regular with `z = s`; equations (3) and (4) bound `z`.
    FullyRegular,
}

/// A design problem: the constants of Adda 2023, section 3.2, and the restrictions of the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// `N`, the processors needed (`R_0min` of eq. (4), read as SPEC section 8 item 10 says).
    pub processors: u64,
    /// `R`, ports per switch (`L_max` of eq. (3)).
    pub radix: u64,
    /// Only Z-nodes of this height `h` (`--levels`).
    pub levels: Option<u64>,
    /// Only this many GHC dimensions `d` (`--dims`).
    pub dims: Option<u64>,
    /// Side links `q` fixed (`--side-links`); `None`: 1, or the smallest that meets `bisection`.
    pub side_links: Option<u64>,
    /// Smallest relative bisection `beta` accepted (`--bisection`); `None`: no constraint.
    pub bisection: Option<Ratio>,
    /// General, regular or fully regular.
    pub family: Family,
    /// How many designs to return (`--top`), best first.
    pub top: usize,
}

/// The search scope for `h` and for `d` when not fixed: `ceil(log2 N)`, at least 1. With `z_i, s_k >= 2`
/// a design with more levels (or dimensions) has at least `2^(h+d) >= 4N` processors.
pub fn scope_cap(processors: u64) -> u64 {
    (64 - processors.saturating_sub(1).leading_zeros() as u64).max(1)
}

/// Eq. (3) of Adda 2023, corrected (SPEC section 8 item 9): the largest `z` of a fully regular HyperZ
/// with `h >= 2` whose radix `2z + dq(z-1)` fits `R`: `floor((dq + R) / (dq + 2))`.
pub fn eq3_max_zones(d: u64, q: u64, radix: u64) -> u64 {
    (d * q + radix) / (d * q + 2)
}

/// Eq. (4) of Adda 2023, corrected (SPEC section 8 item 10): the smallest `z` with `z^(h+d) >= N`.
pub fn eq4_min_zones(processors: u64, h: u64, d: u64) -> u64 {
    let e = (h + d) as u32;
    let mut z = (processors as f64).powf(1.0 / e as f64).floor().max(1.0) as u64;
    while z > 1 && pow_sat(z - 1, e) >= processors {
        z -= 1;
    }
    while pow_sat(z, e) < processors {
        z += 1;
    }
    z
}

fn pow_sat(x: u64, e: u32) -> u64 {
    x.saturating_pow(e)
}

fn prod_sat(v: &[u64]) -> u64 {
    v.iter().fold(1u64, |a, &x| a.saturating_mul(x))
}

/// One HyperZ design `H_d(s; q)(Z_h(z; r; g))` (Adda 2023, eq. (1), with one `q`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Design {
    /// `s_1 <= ... <= s_d`, Z-nodes per GHC dimension.
    pub sides: Vec<u64>,
    /// `z_1..z_h`, zones per level (`z_1` processors per level-1 switch).
    pub zones: Vec<u64>,
    /// `r_1..r_h`, switches per zone at each level (`r_1 = 1`, each divides the next).
    pub roots: Vec<u64>,
    /// `g_1..g_h`, parallel links from a level-`(i-1)` node to each of its parents (`g_1 = 1`).
    pub internal_links: Vec<u64>,
    /// `q`, parallel side links between neighbouring switches, at every level and in every dimension.
    pub side_links: u64,
    /// The largest `z_1` that is still feasible with the rest unchanged (`zones[0]` is the smallest).
    pub zones1_max: u64,
}

impl Design {
    /// A design from its parameters, as written in the paper (`zones1_max` = `z_1`).
    pub fn new(sides: &[u64], zones: &[u64], roots: &[u64], internal_links: &[u64], side_links: u64) -> Self {
        Design {
            sides: sides.to_vec(),
            zones: zones.to_vec(),
            roots: roots.to_vec(),
            internal_links: internal_links.to_vec(),
            side_links,
            zones1_max: zones.first().copied().unwrap_or(0),
        }
    }

    /// `h`.
    pub fn levels(&self) -> usize {
        self.zones.len()
    }

    /// `d`.
    pub fn dims(&self) -> usize {
        self.sides.len()
    }

    /// `N_Z = prod_k s_k` (eq. (2)).
    pub fn znodes(&self) -> u64 {
        prod_sat(&self.sides)
    }

    /// `R_0..R_h`, nodes per level in one Z-node, `R_i = r_i prod_{j>i} z_j` (eq. (2)).
    pub fn nodes_per_znode(&self) -> Vec<u64> {
        let h = self.levels();
        (0..=h)
            .map(|i| {
                let r = if i == 0 { 1 } else { self.roots[i - 1] };
                r.saturating_mul(prod_sat(&self.zones[i..]))
            })
            .collect()
    }

    /// `N_1..N_h`, switches per level (eq. (2)).
    pub fn switches_per_level(&self) -> Vec<u64> {
        let nz = self.znodes();
        self.nodes_per_znode()[1..].iter().map(|&r| r.saturating_mul(nz)).collect()
    }

    /// All switches, `sum_i N_i`.
    pub fn switches(&self) -> u64 {
        self.switches_per_level().iter().fold(0u64, |a, &x| a.saturating_add(x))
    }

    /// `N_0`, processors (eq. (2)).
    pub fn processors(&self) -> u64 {
        self.znodes().saturating_mul(prod_sat(&self.zones))
    }

    /// Side ports of every switch: `q sum_k (s_k - 1)`.
    pub fn side_ports(&self) -> u64 {
        self.side_links.saturating_mul(self.sides.iter().map(|&s| s.saturating_sub(1)).sum::<u64>())
    }

    /// Radix of levels `1..h`: `z_i g_i + [i<h] w_{i+1} g_{i+1} + q sum_k (s_k - 1)` (SPEC section 1).
    pub fn radix_per_level(&self) -> Vec<u64> {
        let h = self.levels();
        (1..=h)
            .map(|i| {
                let down = self.zones[i - 1].saturating_mul(self.internal_links[i - 1]);
                let up = if i < h {
                    (self.roots[i] / self.roots[i - 1].max(1)).saturating_mul(self.internal_links[i])
                } else {
                    0
                };
                down.saturating_add(up).saturating_add(self.side_ports())
            })
            .collect()
    }

    /// The design's switch radix, the largest of [`Self::radix_per_level`] (SPEC section 8 item 3).
    pub fn max_radix(&self) -> u64 {
        self.radix_per_level().into_iter().max().unwrap_or(0)
    }

    /// Internal links, processor links included: `N_Z sum_i R_i z_i g_i` (SPEC section 1).
    pub fn internal_link_count(&self) -> u64 {
        let r = self.nodes_per_znode();
        let nz = self.znodes();
        (1..=self.levels()).fold(0u64, |a, i| {
            a.saturating_add(nz.saturating_mul(r[i]).saturating_mul(self.zones[i - 1] * self.internal_links[i - 1]))
        })
    }

    /// Side links: `sum_{i,k} N_Z R_i q (s_k - 1) / 2` (SPEC section 1).
    pub fn side_link_count(&self) -> u64 {
        let r = self.nodes_per_znode();
        let nz = self.znodes();
        let mut n = 0u64;
        for &ri in &r[1..] {
            for &s in &self.sides {
                n = n.saturating_add(nz.saturating_mul(ri).saturating_mul(self.side_links * (s - 1)) / 2);
            }
        }
        n
    }

    /// All links, internal and side (SPEC section 4.3 "total").
    pub fn links(&self) -> u64 {
        self.internal_link_count().saturating_add(self.side_link_count())
    }

    /// Switch-to-switch links, what `hxsim analyze` reports as `links`: all links but the `N_0` processor
    /// links (`r_1 = g_1 = 1`).
    pub fn switch_links(&self) -> u64 {
        self.links().saturating_sub(self.processors())
    }

    /// `sum_{i>=1} R_i`, switches per Z-node.
    fn switches_per_znode(&self) -> u64 {
        self.nodes_per_znode()[1..].iter().fold(0u64, |a, &x| a.saturating_add(x))
    }

    /// Relative bisection `beta = q s_min sum_{i>=1} R_i / (2 R_0)` (module doc); 0 without dimensions.
    pub fn bisection(&self) -> f64 {
        let s_min = self.sides.iter().copied().min().unwrap_or(0);
        (self.side_links * s_min) as f64 * self.switches_per_znode() as f64 / (2.0 * self.nodes_per_znode()[0] as f64)
    }

    /// Relative bisection of the Z-node trees, defined for `h >= 2`: `min_{i>=2} R_i z_i g_i / R_0`, the
    /// level-`i` internal links per processor. Splitting every level-`i` zone into halves of its `z_i`
    /// sub-zones, with all switches of levels `>= i` on one side, cuts only those links of one half
    /// (side links join equal flat addresses, so they stay on one side). With [`Self::bisection`] it
    /// bounds the network's relative bisection from above: a slim tree (`r_i = 1`) has a small one.
    pub fn tree_bisection(&self) -> Option<f64> {
        let r = self.nodes_per_znode();
        (2..=self.levels())
            .map(|i| (r[i] * self.zones[i - 1] * self.internal_links[i - 1]) as f64 / r[0] as f64)
            .min_by(f64::total_cmp)
    }

    /// `beta >= b`, exactly.
    /// `min(beta, tree bisection) >= b`, exactly.
    fn bisection_at_least(&self, b: &Ratio) -> bool {
        let s_min = self.sides.iter().copied().min().unwrap_or(0);
        let num = (self.side_links as u128 * s_min as u128).saturating_mul(self.switches_per_znode() as u128);
        let r = self.nodes_per_znode();
        let r0 = r[0] as u128;
        b.le_ratio_wide(num, 2 * r0)
            && (2..=self.levels()).all(|i| {
                let links =
                    (r[i] as u128 * self.zones[i - 1] as u128).saturating_mul(self.internal_links[i - 1] as u128);
                b.le_ratio_wide(links, r0)
            })
    }

    /// Processor-to-processor diameter in hops, processor links included: `2h + d` when every `z_i` and
    /// `s_k` is at least 2 and `q >= 1` (SPEC section 7 item 8, `2 max(lambda,1) + d_eff`).
    pub fn diameter(&self) -> u64 {
        let lambda = (1..=self.levels()).filter(|&i| self.zones[i - 1] >= 2).max().unwrap_or(0) as u64;
        let d_eff = self.sides.iter().filter(|&&s| s >= 2).count() as u64;
        2 * lambda.max(1) + d_eff
    }

    /// Switch-to-switch diameter between processor-bearing switches, `hxsim analyze`'s `diameter`:
    /// [`Self::diameter`] less the two processor links.
    pub fn switch_diameter(&self) -> u64 {
        self.diameter() - 2
    }

    /// `(s, z_2..z_h)`: the shape, listed once with its cheapest `z_1`, `r`, `g` and `q`.
    fn shape_key(&self) -> (&[u64], &[u64]) {
        (&self.sides, &self.zones[1..])
    }

    #[allow(clippy::type_complexity)]
    fn rank_key(&self) -> (u64, usize, u64, &[u64], &[u64], &[u64], u64, &[u64]) {
        (
            self.switches(),
            self.levels(),
            self.links(),
            &self.sides,
            &self.zones,
            &self.roots,
            self.side_links,
            &self.internal_links,
        )
    }
}

/// A rule of Adda 2023 (section 3.2), of the SPEC or of the topology builder that a design breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// No level or no dimension, or `roots`/`internal_links` not of length `h`.
    Malformed,
    /// `h` is not `--levels`, or beyond [`scope_cap`].
    Levels,
    /// `d` is not `--dims`, or beyond [`scope_cap`].
    Dims,
    /// A dimension with `s_k < 2`.
    Side,
    /// A level with `z_i < 2`.
    Zone,
    /// `r_1 != 1`, or `r_{i-1}` does not divide `r_i` (SPEC section 2.3).
    Roots,
    /// `g_1 != 1`, or some `g_i = 0`.
    InternalLinks,
    /// `q = 0`, or not `--side-links`.
    SideLinks,
    /// Not of the family asked for (Definitions 3.1, 3.2).
    Family,
    /// A level's radix exceeds `R` (eq. (3), SPEC section 1).
    Radix {
        /// The level, 1-based.
        level: usize,
        /// Its ports.
        ports: u64,
    },
    /// Fewer processors than `N` (eq. (4)).
    Processors {
        /// `N_0`.
        have: u64,
    },
    /// `beta < B`.
    Bisection,
    /// More switches or processors than the simulator builds.
    Size,
}

/// Check every constraint of the module doc for `design` directly, without any ordering or bound: the
/// reference of the tests and of [`search`]'s debug assertions (`zones1_max` is not checked).
pub fn check(p: &Problem, x: &Design) -> Result<(), Violation> {
    let (h, d) = (x.levels(), x.dims());
    if h == 0 || d == 0 || x.roots.len() != h || x.internal_links.len() != h {
        return Err(Violation::Malformed);
    }
    let cap = scope_cap(p.processors);
    if p.levels.is_some_and(|l| l != h as u64) || (p.levels.is_none() && h as u64 > cap) {
        return Err(Violation::Levels);
    }
    if p.dims.is_some_and(|l| l != d as u64) || (p.dims.is_none() && d as u64 > cap) {
        return Err(Violation::Dims);
    }
    if x.sides.iter().any(|&s| s < 2) {
        return Err(Violation::Side);
    }
    if x.zones.iter().any(|&z| z < 2) {
        return Err(Violation::Zone);
    }
    if x.roots[0] != 1 || x.roots.windows(2).any(|w| w[0] == 0 || w[1] % w[0] != 0) {
        return Err(Violation::Roots);
    }
    if x.internal_links[0] != 1 || x.internal_links.contains(&0) {
        return Err(Violation::InternalLinks);
    }
    if x.side_links == 0 || p.side_links.is_some_and(|q| q != x.side_links) {
        return Err(Violation::SideLinks);
    }
    if p.family != Family::General {
        let z = x.zones[0];
        let regular = x.zones.iter().all(|&v| v == z)
            && x.sides.iter().all(|&s| s == x.sides[0])
            && x.internal_links.iter().all(|&g| g == 1)
            && x.roots.iter().enumerate().all(|(i, &r)| r == pow_sat(z, i as u32));
        if !regular || (p.family == Family::FullyRegular && x.sides[0] != z) {
            return Err(Violation::Family);
        }
    }
    if let Some((i, &ports)) = x.radix_per_level().iter().enumerate().find(|(_, &r)| r > p.radix) {
        return Err(Violation::Radix { level: i + 1, ports });
    }
    let have = x.processors();
    if have < p.processors {
        return Err(Violation::Processors { have });
    }
    if p.bisection.is_some_and(|b| !x.bisection_at_least(&b)) {
        return Err(Violation::Bisection);
    }
    if have > MAX_PROCESSORS || x.switches() > MAX_SWITCHES {
        return Err(Violation::Size);
    }
    Ok(())
}

/// A search that would visit more than [`SHAPE_LIMIT`] partial shapes; `--levels`, `--dims` or a
/// regular family make it small.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge;

/// The best designs, at most `cap`, in rank order, each shape once.
struct Best {
    cap: usize,
    list: Vec<Design>,
    /// A switch count known to admit `cap` designs (from the regular search), or `u64::MAX`.
    seed: u64,
}

impl Best {
    /// The switch count a new design must not exceed to enter the list (constraint (8) of Ahn et al.).
    fn bound(&self) -> u64 {
        let own =
            if self.list.len() < self.cap { u64::MAX } else { self.list.last().map_or(u64::MAX, Design::switches) };
        own.min(self.seed)
    }

    fn offer(&mut self, x: Design) {
        if let Some(i) = self.list.iter().position(|o| o.shape_key() == x.shape_key()) {
            if self.list[i].rank_key() <= x.rank_key() {
                return;
            }
            self.list.remove(i);
        }
        let at = self.list.partition_point(|o| o.rank_key() <= x.rank_key());
        if at < self.cap {
            self.list.insert(at, x);
            self.list.truncate(self.cap);
        }
    }
}

/// A complete shape while its roots are chosen: `pp[i-1] = P_i = prod_{j>i} z_j`, the largest `w` per
/// level, the least `sum R_i` the GHC cut needs, `N_Z`, the zones, side ports and `R_0`.
struct Shape<'a> {
    pp: &'a [u64],
    w_max: &'a [u64],
    target: u64,
    nz: u64,
    zones: &'a [u64],
    side: u64,
    r0: u64,
}

struct Search<'a> {
    p: &'a Problem,
    best: Best,
    visited: u64,
    /// Smallest `q` any design can have.
    q_min: u64,
}

/// The best `p.top` designs of problem `p`, best first (ranking in the module doc). Empty when no
/// HyperZ meets the constraints.
pub fn search(p: &Problem) -> Result<Vec<Design>, TooLarge> {
    // Regular designs are general designs of distinct shapes: the K-th best regular one bounds the K-th
    // best general one from the start (a few thousand candidates, milliseconds).
    let seed = match p.family {
        Family::General => {
            let regular = search(&Problem { family: Family::Regular, ..p.clone() })?;
            if regular.len() == p.top.max(1) {
                regular.last().map_or(u64::MAX, Design::switches)
            } else {
                u64::MAX
            }
        }
        _ => u64::MAX,
    };
    let mut s = Search {
        p,
        best: Best { cap: p.top.max(1), list: Vec::new(), seed },
        visited: 0,
        q_min: p.side_links.unwrap_or(1),
    };
    let cap = scope_cap(p.processors);
    let hs = p.levels.map_or(1..=cap, |h| h..=h);
    for h in hs {
        let ds = p.dims.map_or(1..=cap, |d| d..=d);
        for d in ds {
            // Smallest completion: N_Z >= 2^d, sum R_i >= 2^h - 1 (z_i >= 2, r_i >= 1).
            let least = pow_sat(2, d as u32).saturating_mul(pow_sat(2, h as u32) - 1);
            if h >= 63 || least > s.best.bound() || s.visited > SHAPE_LIMIT {
                continue;
            }
            match p.family {
                Family::General => s.sides(h as usize, d as usize, &mut Vec::new(), 1, 0, 2),
                Family::Regular | Family::FullyRegular => s.regular(h as usize, d as usize),
            }
        }
    }
    if s.visited > SHAPE_LIMIT {
        return Err(TooLarge);
    }
    Ok(s.best.list)
}

impl Search<'_> {
    /// Ports a level needs besides its side ports, at least: `z_i >= 2` plus one up port below the top.
    fn least_tree_ports(h: usize) -> u64 {
        2 + (h > 1) as u64
    }

    /// Choose `s_k` for `k = prefix.len()` and after, `s_k >= lo`; `nz` and `side` of the prefix.
    fn sides(&mut self, h: usize, d: usize, prefix: &mut Vec<u64>, nz: u64, side: u64, lo: u64) {
        self.visited += 1;
        if self.visited > SHAPE_LIMIT {
            return;
        }
        if prefix.len() == d {
            self.zones(h, prefix, &mut Vec::new());
            return;
        }
        let m = (d - prefix.len()) as u32; // dimensions left, this one included
        let sw_least = pow_sat(2, h as u32) - 1;
        let mut s = lo;
        loop {
            // Incumbent bound: every completion has N_Z >= nz s^m and sum R_i >= 2^h - 1.
            if nz.saturating_mul(pow_sat(s, m)).saturating_mul(sw_least) > self.best.bound() {
                break;
            }
            // Ports: the remaining dimensions take at least q_min (s - 1) each.
            let side_least = side + m as u64 * (s - 1);
            if self.q_min.saturating_mul(side_least) + Self::least_tree_ports(h) > self.p.radix {
                break;
            }
            prefix.push(s);
            self.sides(h, d, prefix, nz * s, side + s - 1, s);
            prefix.pop();
            s += 1;
        }
    }

    /// Choose the zones `z_h, z_{h-1}, ..., z_2` (top down, `upper` holds `z_h` first); then complete.
    fn zones(&mut self, h: usize, sides: &[u64], upper: &mut Vec<u64>) {
        self.visited += 1;
        if self.visited > SHAPE_LIMIT {
            return;
        }
        let nz = prod_sat(sides);
        let side = self.q_min * sides.iter().map(|s| s - 1).sum::<u64>();
        let Some(free) = self.p.radix.checked_sub(side) else { return };
        // z_1 <= free - [h>1]; z_i <= free - [i<h] for i >= 2 (g = 1, w >= 1).
        let z1_max = free.saturating_sub((h > 1) as u64);
        if upper.len() + 1 == h {
            let mut zu: Vec<u64> = upper.clone();
            zu.reverse(); // z_2..z_h
            self.complete(sides, &zu);
            return;
        }
        let level = h - upper.len(); // the level chosen now, >= 2
        let z_max = free.saturating_sub((level < h) as u64);
        // P_i = prod_{j>i} z_j for the levels already set: sum and the last one (P_{level}).
        let mut known = 0u64;
        let mut p = 1u64;
        for &z in upper.iter() {
            known = known.saturating_add(p);
            p = p.saturating_mul(z);
        }
        // Now `known` = sum_{i > level} P_i... plus P_level = p once z_level is chosen below.
        let prod_upper = prod_sat(upper);
        for z in 2..=z_max {
            // With z_level = z: P_level = p, P_{level-1} = p z, and levels level-2..1 at least doubling.
            let below = level - 1; // levels 1..level-1 still to come, each P at least 2x the previous
            let p_next = p.saturating_mul(z);
            let lb = known.saturating_add(p).saturating_add(p_next.saturating_mul(pow_sat(2, below as u32) - 1));
            if nz.saturating_mul(lb) > self.best.bound() {
                break;
            }
            // Capacity: the levels below this one at their largest.
            let rest = pow_sat(z_max.max(2), (level - 2) as u32).saturating_mul(z1_max);
            if nz.saturating_mul(prod_upper).saturating_mul(z).saturating_mul(rest) < self.p.processors {
                continue;
            }
            upper.push(z);
            self.zones(h, sides, upper);
            upper.pop();
        }
    }

    /// The cheapest `z_1`, `q`, `r` (with `g = 1`) for the shape `(sides, z_2..z_h)`, offered if feasible.
    fn complete(&mut self, sides: &[u64], zu: &[u64]) {
        let p = self.p;
        let h = zu.len() + 1;
        let nz = prod_sat(sides);
        let side_sum: u64 = sides.iter().map(|s| s - 1).sum();
        let s_min = sides[0];
        let z1 = p.processors.div_ceil(nz.saturating_mul(prod_sat(zu))).max(2);
        let mut zones = vec![z1];
        zones.extend_from_slice(zu);
        // P_i = prod_{j>i} z_j, i = 1..h.
        let pp: Vec<u64> = (1..=h).map(|i| prod_sat(&zones[i..])).collect();
        let r0 = prod_sat(&zones);
        let qs: Vec<u64> = match (p.side_links, p.bisection) {
            (Some(q), _) => vec![q],
            (None, None) => vec![1],
            (None, Some(_)) => {
                let room = p.radix.saturating_sub(Self::least_tree_ports(h));
                (1..=room / side_sum.max(1)).collect()
            }
        };
        let mut best: Option<Design> = None;
        for q in qs {
            let side = q * side_sum;
            if zones.iter().enumerate().any(|(i, &z)| z + side + (i + 1 < h) as u64 > p.radix) {
                continue;
            }
            // Smallest sum R_i with q s_min sum R_i / (2 R_0) >= B.
            let target = match p.bisection {
                None => 0,
                Some(b) => b.min_multiplier(2 * r0, q * s_min),
            };
            // Up ports w_{i+1} at level i (i < h): z_i + w_{i+1} + side <= R.
            let w_max: Vec<u64> = (0..h).map(|i| p.radix - zones[i] - side).collect();
            let mut chain = vec![1u64];
            let mut found: Vec<(Vec<u64>, Vec<u64>)> = Vec::new();
            let mut least = u64::MAX;
            let shape = Shape { pp: &pp, w_max: &w_max, target, nz, zones: &zones, side, r0 };
            self.roots(&shape, &mut chain, pp[0], &mut found, &mut least);
            for (roots, internal_links) in found {
                let x = Design {
                    sides: sides.to_vec(),
                    zones: zones.clone(),
                    roots,
                    internal_links,
                    side_links: q,
                    zones1_max: z1,
                };
                if best.as_ref().is_none_or(|b| x.rank_key() < b.rank_key()) {
                    best = Some(x);
                }
            }
        }
        let Some(mut x) = best else { return };
        if x.switches() > self.best.bound() || check(p, &x).is_err() {
            return;
        }
        x.zones1_max = self.z1_max(&x);
        self.best.offer(x);
    }

    /// The fewest internal links `g` for roots `r`: `g_1 = 1` and, for `i >= 2`, the smallest `g_i` with
    /// `R_i z_i g_i >= B R_0` (the tree cut); `None` when some level's ports exceed `R`.
    fn internal_links(&self, s: &Shape, roots: &[u64]) -> Option<Vec<u64>> {
        let h = roots.len();
        let g: Vec<u64> = (0..h)
            .map(|i| match (i, self.p.bisection) {
                (0, _) | (_, None) => 1,
                (_, Some(b)) => b.min_multiplier(s.r0, roots[i].saturating_mul(s.pp[i - 1])).max(1),
            })
            .collect();
        let fits = (0..h).all(|i| {
            let up = if i + 1 < h { (roots[i + 1] / roots[i]).saturating_mul(g[i + 1]) } else { 0 };
            s.zones[i].saturating_mul(g[i]).saturating_add(up).saturating_add(s.side) <= self.p.radix
        });
        fits.then_some(g)
    }

    /// Divisor chains `r` (`r_1 = 1`, `w_i = r_i / r_{i-1} <= w_max[i-2]`) with `sum_i r_i P_i >= target`,
    /// each with its fewest internal links ([`Self::internal_links`]) fitting the ports, and that sum
    /// least: all of them, in `found`, with the least sum in `least`. `acc` is the sum over the levels in
    /// `chain`.
    fn roots(
        &mut self,
        s: &Shape,
        chain: &mut Vec<u64>,
        acc: u64,
        found: &mut Vec<(Vec<u64>, Vec<u64>)>,
        least: &mut u64,
    ) {
        let (pp, w_max) = (s.pp, s.w_max);
        let h = pp.len();
        let i = chain.len(); // 0-based index of the level chosen now
        if i == h {
            if acc >= s.target && acc <= *least {
                let Some(g) = self.internal_links(s, chain) else { return };
                if acc < *least {
                    found.clear();
                    *least = acc;
                }
                found.push((chain.clone(), g));
            }
            return;
        }
        self.visited += 1;
        if self.visited > SHAPE_LIMIT {
            return;
        }
        let r_last = *chain.last().unwrap();
        let rest: u64 = pp[i..].iter().fold(0u64, |a, &x| a.saturating_add(x));
        for w in 1..=w_max[i - 1].max(1) {
            let r = r_last.saturating_mul(w);
            // Every later r_j >= r: the least sum this branch can reach.
            let lb = acc.saturating_add(r.saturating_mul(rest));
            if lb > *least || s.nz.saturating_mul(lb) > self.best.bound() {
                break;
            }
            // The largest sum it can reach: every later level at its largest w.
            let (mut hi, mut rr) = (acc, r);
            for j in i..h {
                if j > i {
                    rr = rr.saturating_mul(w_max[j - 1].max(1));
                }
                hi = hi.saturating_add(rr.saturating_mul(pp[j]));
            }
            if hi < s.target {
                continue;
            }
            chain.push(r);
            self.roots(s, chain, acc.saturating_add(r.saturating_mul(pp[i])), found, least);
            chain.pop();
        }
    }

    /// The largest `z_1` with the rest of `x` unchanged. The ports, bisection and size constraints
    /// each fail from some `z_1` on, so the feasible `z_1` form an interval from `x.zones[0]`.
    fn z1_max(&self, x: &Design) -> u64 {
        let mut y = x.clone();
        let up = if x.levels() > 1 { x.roots[1] * x.internal_links[1] } else { 0 };
        let (mut lo, mut hi) = (x.zones[0], self.p.radix.saturating_sub(up + x.side_ports()).max(x.zones[0]));
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            y.zones[0] = mid;
            if check(self.p, &y).is_ok() {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }

    /// Regular (Definition 3.1) and fully regular (Definition 3.2) designs with `h` levels and `d`
    /// dimensions: `z_i = z`, `s_k = s` (`= z` when fully regular), `r_i = z^(i-1)`, `g_i = 1`, and the
    /// smallest `q` meeting the bisection.
    fn regular(&mut self, h: usize, d: usize) {
        let p = self.p;
        let full = p.family == Family::FullyRegular;
        let mut s = 2u64;
        loop {
            self.visited += 1;
            let nz = pow_sat(s, d as u32);
            // Switches N_Z h z^(h-1) >= N_Z h 2^(h-1); ports >= 2 + [h>1] + q d (s-1).
            if nz.saturating_mul(h as u64 * pow_sat(2, h as u32 - 1)) > self.best.bound()
                || self.q_min * d as u64 * (s - 1) + Self::least_tree_ports(h) > p.radix
                || self.visited > SHAPE_LIMIT
            {
                break;
            }
            let zs: Vec<u64> = if full { vec![s] } else { (2..=p.radix).collect() };
            for z in zs {
                let zones = vec![z; h];
                let roots: Vec<u64> = (0..h).map(|i| pow_sat(z, i as u32)).collect();
                let mut x = Design::new(&vec![s; d], &zones, &roots, &vec![1; h], self.q_min);
                if x.switches() > self.best.bound() || x.max_radix() > p.radix {
                    break;
                }
                if x.processors() < p.processors {
                    continue;
                }
                // beta = q s h z^(h-1) / (2 z^h) = q s h / (2 z): the smallest q meeting B.
                if let (None, Some(b)) = (p.side_links, p.bisection) {
                    x.side_links = b.min_multiplier(2 * z, s * h as u64).max(1);
                }
                if check(p, &x).is_ok() {
                    self.best.offer(x);
                }
            }
            s += 1;
        }
    }
}

/// `(a,b,c)`: a list of counts as the design tables print it.
pub fn list(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// A ready-to-run hxsim config for design `x` (the layout of `configs/hyperz-1024-h3a.toml`).
/// `command` is the command line that found it, recorded in a comment.
pub fn config_text(x: &Design, command: &str) -> String {
    format!(
        "# Found by `{command}`\n\
         # (Adda 2023, section 3.2; SPEC sections 1 and 8): H_{d}({s}; q={q})(Z_{h}({z};{r};{g})),\n\
         # {n} processors, {sw} switches ({per}), {links} links ({int} internal, {side} side), radix per level {rad},\n\
         # relative bisection {beta:.4}, processor diameter {diam}.\n\
         name = \"hyperz-{sw}-switches\"\n\
         seed = 1\n\
         \n\
         [topology]\n\
         kind = \"hyperz\"\n\
         sides = [{sl}]\n\
         zones = [{zl}]\n\
         roots = [{rl}]\n\
         internal_links = [{gl}]\n\
         side_links = {q}\n\
         \n\
         [routing]\n\
         algorithm = \"aliod\"\n\
         \n\
         [traffic]\n\
         pattern = \"uniform\"\n\
         load = 0.5\n\
         \n\
         [simulation]\n\
         warmup_cycles = 3000\n\
         measure_cycles = 3000\n",
        d = x.dims(),
        h = x.levels(),
        s = list(&x.sides),
        z = list(&x.zones),
        r = list(&x.roots),
        g = list(&x.internal_links),
        q = x.side_links,
        n = x.processors(),
        sw = x.switches(),
        per = list(&x.switches_per_level()),
        links = x.links(),
        int = x.internal_link_count(),
        side = x.side_link_count(),
        rad = list(&x.radix_per_level()),
        beta = x.bisection(),
        diam = x.diameter(),
        sl = x.sides.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
        zl = x.zones.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
        rl = x.roots.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
        gl = x.internal_links.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(n: u64, r: u64) -> Problem {
        Problem {
            processors: n,
            radix: r,
            levels: None,
            dims: None,
            side_links: None,
            bisection: None,
            family: Family::General,
            top: 1,
        }
    }

    /// Adda 2023, section 5.3: `Z_3(8,4,8;1,4,8;1,2,2)` (SPEC section 8 item 2: `h = 3`).
    fn paper_node(sides: &[u64]) -> Design {
        Design::new(sides, &[8, 4, 8], &[1, 4, 8], &[1, 2, 2], 1)
    }

    #[test]
    fn section_5_3_radices_18_20_22_26() {
        // SPEC section 2.4: internal ports 16 / 12 / 16, plus sum (s_k - 1) side ports.
        for (sides, radix, n) in [([2, 2], 18, 1024), ([4, 2], 20, 2048), ([4, 4], 22, 4096), ([8, 4], 26, 8192)] {
            let x = paper_node(&sides);
            let side = (sides[0] - 1) + (sides[1] - 1);
            assert_eq!(x.radix_per_level(), vec![16 + side, 12 + side, 16 + side], "{sides:?}");
            assert_eq!(x.max_radix(), radix);
            assert_eq!(x.processors(), n, "1024 = 2 * 2 * 256 and so on");
            assert_eq!(x.nodes_per_znode(), vec![256, 32, 32, 8]);
            // Meets every constraint on the paper's radix-32 switches.
            assert_eq!(check(&problem(n, 32), &x), Ok(()));
        }
    }

    /// SPEC section 4.3: `(sides, zones, roots, g, switches per level, internal, side links, radix per
    /// level, processor diameter)` of the h = 1, h = 2 A and h = 3 A rows, derived from SPEC section 1.
    #[allow(clippy::type_complexity)]
    const SPEC_4_3: [(&[u64], &[u64], &[u64], &[u64], &[u64], u64, u64, &[u64], u64); 3] = [
        (&[8, 8], &[16], &[1], &[1], &[64], 1024, 448, &[30], 4),
        (&[4, 4], &[8, 8], &[1, 8], &[1, 1], &[128, 128], 2048, 768, &[22, 14], 6),
        (&[2, 2], &[8, 4, 8], &[1, 4, 8], &[1, 2, 2], &[128, 128, 32], 2560, 288, &[18, 14, 18], 8),
    ];

    #[test]
    fn spec_4_3_rows_are_counted_as_the_spec_says() {
        for (s, z, r, g, per_level, internal, side, radix, diam) in SPEC_4_3 {
            let x = Design::new(s, z, r, g, 1);
            assert_eq!(x.processors(), 1024);
            assert_eq!(x.switches_per_level(), per_level);
            assert_eq!(x.internal_link_count(), internal);
            assert_eq!(x.side_link_count(), side);
            assert_eq!(x.radix_per_level(), radix);
            assert_eq!(x.diameter(), diam);
        }
        // h = 3 A: beta = 1 * 2 * (32 + 32 + 8) / (2 * 256) = 9/32; tree: level 2 has 32 * 4 * 2 = 256
        // links per 256 processors, level 3 8 * 8 * 2 = 128.
        let a = Design::new(&[2, 2], &[8, 4, 8], &[1, 4, 8], &[1, 2, 2], 1);
        assert_eq!(a.bisection(), 9.0 / 32.0);
        assert_eq!(a.tree_bisection(), Some(0.5));
        // h = 2 A: level 2 has 8 * 8 = 64 links per 64 processors; h = 1 has no tree.
        assert_eq!(Design::new(&[4, 4], &[8, 8], &[1, 8], &[1, 1], 1).tree_bisection(), Some(1.0));
        assert_eq!(Design::new(&[8, 8], &[16], &[1], &[1], 1).tree_bisection(), None);
    }

    #[test]
    fn search_finds_designs_at_least_as_small_as_spec_4_3() {
        for (s, z, r, g, _, _, _, radix, _) in SPEC_4_3 {
            let max_radix = *radix.iter().max().unwrap();
            let row = Design::new(s, z, r, g, 1);
            // At the row's own radix and height, with its own bisection asked for: the row is feasible,
            // so the search must find at least as few switches.
            let mut p = problem(1024, max_radix);
            p.levels = Some(z.len() as u64);
            let beta: Ratio = {
                let nz = row.znodes();
                let sum_r = row.switches() / nz;
                format!("{}/{}", s[0] * sum_r, 2 * row.nodes_per_znode()[0]).parse().unwrap()
            };
            p.bisection = Some(beta);
            assert_eq!(check(&p, &row), Ok(()), "{z:?}");
            let best = &search(&p).unwrap()[0];
            assert!(best.switches() <= row.switches(), "{z:?}: {best:?}");
            assert_eq!(check(&p, best), Ok(()));
            // And with any height at that radix, no bisection asked: no more switches either.
            let best_any = &search(&problem(1024, max_radix)).unwrap()[0];
            assert!(best_any.switches() <= row.switches());
        }
    }

    #[test]
    fn eq3_eq4_and_the_fig3_claim() {
        // SPEC section 8 item 9: d = 2, q = 1, L_max = 32 gives z <= 8.
        assert_eq!(eq3_max_zones(2, 1, 32), 8);
        // Eq. (3) is exactly the radix formula 2z + dq(z-1) <= R for h >= 2 (SPEC section 1).
        for (d, q, r) in [(2, 1, 32), (3, 1, 32), (2, 2, 40), (1, 3, 17)] {
            let z = eq3_max_zones(d, q, r);
            let x = |z: u64| Design::new(&vec![z; d as usize], &[z, z], &[1, z], &[1, 1], q).max_radix();
            assert!(x(z) <= r && x(z + 1) > r, "d={d} q={q} R={r}");
            assert_eq!(x(z), 2 * z + d * q * (z - 1));
        }
        // Eq. (4): z^(h+d) >= N.
        assert_eq!(eq4_min_zones(131072, 3, 3), 8); // 7^6 = 117649 < 131072 <= 8^6
        assert_eq!(eq4_min_zones(1024, 3, 2), 4); // 4^5 = 1024
                                                  // SPEC section 8 item 11: h = 3, s = 8, d = 3 needs 2*8 + 3*7 = 37 ports, and eq. (3) with
                                                  // L_max = 32 allows z <= 7 only: no fully regular design for 131072 processors.
        let x = Design::new(&[8, 8, 8], &[8, 8, 8], &[1, 8, 64], &[1, 1, 1], 1);
        assert_eq!(x.max_radix(), 37);
        assert_eq!(eq3_max_zones(3, 1, 32), 7);
        let mut p = problem(131072, 32);
        p.levels = Some(3);
        p.dims = Some(3);
        p.family = Family::FullyRegular;
        assert_eq!(check(&p, &x), Err(Violation::Radix { level: 1, ports: 37 }));
        assert!(search(&p).unwrap().is_empty());
        p.radix = 37;
        assert_eq!(search(&p).unwrap()[0], x);
    }

    /// Every design with `s_k` in `2..=R` in any order, `z_i` in `2..=R`, `w_i` in `1..=R`, `g_i` in
    /// `1..=R` (`i >= 2`), `q` in `1..=R`, `h` and `d` within [`scope_cap`] or as fixed, checked with
    /// [`check`] alone; per shape the best by the rank key; ranked.
    fn brute_force(p: &Problem) -> Vec<Design> {
        let r = p.radix;
        let cap = scope_cap(p.processors);
        let hs: Vec<u64> = p.levels.map_or((1..=cap).collect(), |h| vec![h]);
        let ds: Vec<u64> = p.dims.map_or((1..=cap).collect(), |d| vec![d]);
        // All side vectors (any order) with sum (s_k - 1) <= R - 2 (else no level fits z >= 2).
        fn vectors(r: u64, d: usize, cur: &mut Vec<u64>, used: u64, out: &mut Vec<Vec<u64>>) {
            if cur.len() == d {
                out.push(cur.clone());
                return;
            }
            for s in 2..=r {
                if used + s - 1 + 2 > r {
                    break;
                }
                cur.push(s);
                vectors(r, d, cur, used + s - 1, out);
                cur.pop();
            }
        }
        // All Z-nodes (z, r, g) of height h whose tree ports alone fit R at every level.
        fn znodes(r: u64, h: usize, z: &mut Vec<u64>, roots: &mut Vec<u64>, g: &mut Vec<u64>, out: &mut Vec<Design>) {
            let i = z.len();
            if i == h {
                out.push(Design::new(&[], z, roots, g, 1));
                return;
            }
            let gs: Vec<u64> = if i == 0 { vec![1] } else { (1..=r).collect() };
            let ws: Vec<u64> = if i == 0 { vec![1] } else { (1..=r).collect() };
            for zz in 2..=r {
                for &gg in &gs {
                    for &w in &ws {
                        // Ports of level i (0-based): z g, plus at least one side port; level i - 1 also has its
                        // w g up ports now known (necessary conditions only: `check` decides).
                        if zz * gg + 1 > r || (i > 0 && z[i - 1] * g[i - 1] + w * gg + 1 > r) {
                            continue;
                        }
                        let rr = if i == 0 { 1 } else { roots[i - 1] * w };
                        z.push(zz);
                        roots.push(rr);
                        g.push(gg);
                        znodes(r, h, z, roots, g, out);
                        z.pop();
                        roots.pop();
                        g.pop();
                    }
                }
            }
        }
        let mut best: std::collections::BTreeMap<(Vec<u64>, Vec<u64>), Design> = Default::default();
        for &h in &hs {
            let mut zs = Vec::new();
            znodes(r, h as usize, &mut Vec::new(), &mut Vec::new(), &mut Vec::new(), &mut zs);
            for &d in &ds {
                let mut ss = Vec::new();
                vectors(r, d as usize, &mut Vec::new(), 0, &mut ss);
                for s in &ss {
                    for zn in &zs {
                        for q in 1..=r {
                            let mut x = zn.clone();
                            x.sides = s.clone();
                            x.side_links = q;
                            if x.max_radix() > r {
                                break;
                            }
                            if check(p, &x).is_err() {
                                continue;
                            }
                            x.sides.sort();
                            let key = (x.sides.clone(), x.zones[1..].to_vec());
                            if best.get(&key).is_none_or(|o| x.rank_key() < o.rank_key()) {
                                best.insert(key, x);
                            }
                        }
                    }
                }
            }
        }
        let mut v: Vec<Design> = best.into_values().collect();
        v.sort_by(|a, b| a.rank_key().cmp(&b.rank_key()));
        v.truncate(p.top);
        v
    }

    fn without_range(v: Vec<Design>) -> Vec<Design> {
        v.into_iter()
            .map(|mut x| {
                x.zones1_max = x.zones[0];
                x
            })
            .collect()
    }

    #[test]
    fn pruned_search_agrees_with_brute_force_on_small_problems() {
        let (mut checked, mut grown_roots, mut more_side_links, mut more_internal) = (0, 0, 0, 0);
        for r in 3..=7u64 {
            for n in [1u64, 4, 6, 9, 16, 30, 50] {
                for b in [None, Some("1/4"), Some("1/2"), Some("1"), Some("3/2")] {
                    for (levels, dims, q) in
                        [(None, None, None), (Some(2), None, None), (Some(3), None, None), (None, Some(1), Some(2))]
                    {
                        // The brute force grows as R^(3h): keep h <= 4 (scope_cap(16) = 4) unless fixed.
                        if levels.is_none() && scope_cap(n) > 4 {
                            continue;
                        }
                        let mut p = problem(n, r);
                        p.bisection = b.map(|b| b.parse().unwrap());
                        p.levels = levels;
                        p.dims = dims;
                        p.side_links = q;
                        p.top = 5;
                        let fast = without_range(search(&p).unwrap());
                        let slow = without_range(brute_force(&p));
                        assert_eq!(fast, slow, "{p:?}");
                        checked += fast.len();
                        grown_roots += fast.iter().filter(|x| x.roots.iter().any(|&r| r > 1)).count();
                        more_side_links += fast.iter().filter(|x| x.side_links > 1).count();
                        more_internal += fast.iter().filter(|x| x.internal_links.iter().any(|&g| g > 1)).count();
                    }
                }
            }
        }
        assert!(checked > 300, "the grid must hold many feasible designs, found {checked}");
        // The bisection cases exercise the choice of r, g and q, not only r = 1, g = 1, q = 1.
        assert!(
            grown_roots > 10 && more_side_links > 10 && more_internal > 10,
            "{grown_roots} {more_side_links} {more_internal}"
        );
    }

    #[test]
    fn regular_families_agree_with_brute_force() {
        for r in 4..=9u64 {
            for n in [4u64, 16, 40, 100] {
                for family in [Family::Regular, Family::FullyRegular] {
                    for b in [None, Some("1/2")] {
                        let mut p = problem(n, r);
                        p.family = family;
                        p.bisection = b.map(|b| b.parse().unwrap());
                        p.top = 4;
                        assert_eq!(search(&p).unwrap(), brute_force_regular(&p), "{p:?}");
                    }
                }
            }
        }
    }

    /// Regular designs straight from Definitions 3.1/3.2: every `(h, d, s, z, q)` checked.
    fn brute_force_regular(p: &Problem) -> Vec<Design> {
        let cap = scope_cap(p.processors);
        let mut all = Vec::new();
        for h in 1..=cap as usize {
            for d in 1..=cap as usize {
                for s in 2..=p.radix {
                    for z in 2..=p.radix {
                        for q in 1..=p.radix {
                            let roots: Vec<u64> = (0..h).map(|i| z.pow(i as u32)).collect();
                            let x = Design::new(&vec![s; d], &vec![z; h], &roots, &vec![1; h], q);
                            if check(p, &x).is_ok() {
                                all.push(x);
                            }
                        }
                    }
                }
            }
        }
        // Per shape the best (the smallest q), then ranked.
        all.sort_by(|a, b| a.rank_key().cmp(&b.rank_key()));
        let mut out: Vec<Design> = Vec::new();
        for x in all {
            if !out.iter().any(|o| o.shape_key() == x.shape_key()) {
                out.push(x);
            }
        }
        out.truncate(p.top);
        out
    }

    #[test]
    fn z1_range_is_the_feasible_interval() {
        let mut p = problem(1000, 20);
        p.top = 5;
        p.bisection = Some("1/8".parse().unwrap());
        for x in search(&p).unwrap() {
            for z1 in x.zones[0]..=x.zones1_max {
                let mut y = x.clone();
                y.zones[0] = z1;
                assert_eq!(check(&p, &y), Ok(()), "{x:?} at z1 = {z1}");
            }
            let mut y = x.clone();
            y.zones[0] = x.zones1_max + 1;
            assert!(check(&p, &y).is_err());
        }
    }

    #[test]
    fn scope() {
        assert_eq!(scope_cap(1), 1);
        assert_eq!(scope_cap(2), 1);
        assert_eq!(scope_cap(1024), 10);
        assert_eq!(scope_cap(1025), 11);
    }
}
