//! `hxsim design hyperz`: the HyperZ with fewest switches for a processor count and radix (Adda
//! 2023, section 3.2, equations (3)-(4) with the HyperZ SPEC section 8 corrections), printed as a
//! table or JSON, optionally written as a ready-to-run config. The search is in
//! [`crate::design::hyperz`].

use crate::cli::HyperzArgs;
use crate::design::hyperz::*;
use crate::design::Ratio;
use crate::error::ConfigError;
use serde::Serialize;

impl HyperzArgs {
    fn family(&self) -> Family {
        match (self.regular, self.fully_regular) {
            (_, true) => Family::FullyRegular,
            (true, _) => Family::Regular,
            _ => Family::General,
        }
    }

    fn problem(&self) -> Result<Problem, ConfigError> {
        if !(1..=MAX_PROCESSORS).contains(&self.processors) {
            return Err(ConfigError::value("--processors", self.processors, "between 1 and 2^31 processors"));
        }
        if let Some(h) = self.levels {
            if !(1..=62).contains(&h) {
                return Err(ConfigError::value("--levels", h, "between 1 and 62 switch levels"));
            }
        }
        // The smallest design: two Z-nodes (d = 1, s = 2, q = 1) of z_i = 2 with one up port below the top.
        let h = self.levels.unwrap_or(1);
        let tree = 2 + (h > 1) as u64;
        if !(tree + 1..=MAX_RADIX).contains(&self.radix) {
            return Err(ConfigError::value(
                "--radix",
                self.radix,
                format!(
                    "between {} and {MAX_RADIX} ports: a switch needs z_i >= 2 down ports, {} up port and at least one \
                     side port (h = {h})",
                    tree + 1,
                    if h > 1 { "one" } else { "no" },
                ),
            ));
        }
        for (flag, v) in [("--dims", self.dims), ("--side-links", self.side_links)] {
            if let Some(v) = v {
                if !(1..=self.radix - tree).contains(&v) {
                    return Err(ConfigError::value(
                        flag,
                        v,
                        format!(
                            "between 1 and {} (radix - {tree}: z_i >= 2 ports{})",
                            self.radix - tree,
                            if h > 1 { " and an up port" } else { "" }
                        ),
                    ));
                }
            }
        }
        let (d, q) = (self.dims.unwrap_or(1), self.side_links.unwrap_or(1));
        if tree + d * q > self.radix {
            return Err(ConfigError::value(
                "--radix",
                self.radix,
                format!(
                    "at least {} ports with --dims {d} and --side-links {q}: z_i >= 2 down ports, {} up port and \
                     q*sum(s_k - 1) >= {} side ports",
                    tree + d * q,
                    if h > 1 { "one" } else { "no" },
                    d * q
                ),
            ));
        }
        let bisection = match &self.bisection {
            None => None,
            Some(b) => Some(b.parse::<Ratio>().map_err(|e| ConfigError::value("--bisection", b, e))?),
        };
        if !(1..=super::design::MAX_TOP).contains(&self.top) {
            return Err(ConfigError::value("--top", self.top, "between 1 and 1000"));
        }
        Ok(Problem {
            processors: self.processors,
            radix: self.radix,
            levels: self.levels,
            dims: self.dims,
            side_links: self.side_links,
            bisection,
            family: self.family(),
            top: self.top,
        })
    }

    /// The options that define the problem, as typed.
    fn command_line(&self) -> String {
        let mut c = format!("hxsim design hyperz --processors {} --radix {}", self.processors, self.radix);
        for (flag, v) in [("--levels", self.levels), ("--dims", self.dims), ("--side-links", self.side_links)] {
            if let Some(v) = v {
                c += &format!(" {flag} {v}");
            }
        }
        if let Some(b) = &self.bisection {
            c += &format!(" --bisection {b}");
        }
        if self.regular {
            c += " --regular";
        }
        if self.fully_regular {
            c += " --fully-regular";
        }
        c
    }
}

/// One design as printed (`--json`) and tabulated.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `d`.
    pub dims: usize,
    /// `s_1..s_d`.
    pub sides: Vec<u64>,
    /// `h`.
    pub levels: usize,
    /// `z_1..z_h` (`z_1` the smallest feasible).
    pub zones: Vec<u64>,
    /// Every `z_1` in `[lo, hi]` is feasible with the rest unchanged.
    pub zones1_range: [u64; 2],
    /// `r_1..r_h`.
    pub roots: Vec<u64>,
    /// `g_1..g_h`.
    pub internal_links: Vec<u64>,
    /// `q`.
    pub side_links: u64,
    /// `N_Z`.
    pub znodes: u64,
    /// `N_1..N_h`.
    pub switches_per_level: Vec<u64>,
    /// `sum_i N_i`.
    pub switches: u64,
    /// Internal links, processor links included.
    pub internal_link_count: u64,
    /// Side links.
    pub side_link_count: u64,
    /// Internal + side.
    pub links: u64,
    /// Switch-to-switch links (`hxsim analyze`'s `links`).
    pub switch_links: u64,
    /// Radix of levels `1..h`.
    pub radix_per_level: Vec<u64>,
    /// The largest.
    pub max_radix: u64,
    /// `N_0`.
    pub processors: u64,
    /// `q s_min sum R_i / (2 R_0)`, the GHC cut (module doc).
    pub bisection: f64,
    /// `min_{i>=2} R_i z_i g_i / R_0`, the tree cut; `None` for `h = 1`.
    pub tree_bisection: Option<f64>,
    /// Processor-to-processor diameter, processor links included (`2h + d`).
    pub diameter: u64,
    /// Between processor-bearing switches (`hxsim analyze`'s `diameter`).
    pub switch_diameter: u64,
}

impl From<&Design> for Report {
    fn from(x: &Design) -> Self {
        Report {
            dims: x.dims(),
            sides: x.sides.clone(),
            levels: x.levels(),
            zones: x.zones.clone(),
            zones1_range: [x.zones[0], x.zones1_max],
            roots: x.roots.clone(),
            internal_links: x.internal_links.clone(),
            side_links: x.side_links,
            znodes: x.znodes(),
            switches_per_level: x.switches_per_level(),
            switches: x.switches(),
            internal_link_count: x.internal_link_count(),
            side_link_count: x.side_link_count(),
            links: x.links(),
            switch_links: x.switch_links(),
            radix_per_level: x.radix_per_level(),
            max_radix: x.max_radix(),
            processors: x.processors(),
            bisection: x.bisection(),
            tree_bisection: x.tree_bisection(),
            diameter: x.diameter(),
            switch_diameter: x.switch_diameter(),
        }
    }
}

/// `hxsim design hyperz`: search, print, optionally write the best design's config; returns the exit code.
pub fn run(a: &HyperzArgs) -> anyhow::Result<u8> {
    let p = a.problem()?;
    super::design::check_outputs(a.write_config.as_deref(), None)?;
    let start = std::time::Instant::now();
    let designs = search(&p).map_err(|_| {
        ConfigError::value(
            "--processors",
            a.processors,
            format!(
                "the search for this many processors on radix {} would visit more than {SHAPE_LIMIT} partial shapes; \
                 restrict it with --levels, --dims or --regular",
                a.radix
            ),
        )
    })?;
    let seconds = start.elapsed().as_secs_f64();
    if designs.is_empty() {
        return Err(no_design(a, &p).into());
    }
    let reports: Vec<Report> = designs.iter().map(Report::from).collect();
    if a.json {
        let out = serde_json::json!({
            "processors": a.processors,
            "radix": a.radix,
            "levels": a.levels,
            "dims": a.dims,
            "side_links": a.side_links,
            "bisection": p.bisection.map(|b| b.value()),
            "family": p.family,
            "search_seconds": seconds,
            "designs": reports,
        });
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!(
            "HyperZ H_d(s; q)(Z_h(z; r; g)) for N = {} processors, radix {}{}: fewest switches, then fewer levels, \
             then fewer links (processor links included); searched in {:.3} s\n\
             beta: GHC-cut bisection q s_min sum(R_i) / (2 R_0); tree: Z-node cut min R_i z_i g_i / R_0 (h >= 2); \
             the network's bisection is at most the smaller; diam: processor to processor, 2h + d",
            a.processors,
            a.radix,
            p.bisection.map_or(String::new(), |b| format!(", bisection >= {b}")),
            seconds
        );
        println!(
            "{:>4} {:>2} {:<13} {:>2} {:<13} {:<7} {:<12} {:<10} {:>2} {:<22} {:>20} {:<13} {:>4} {:>6} {:>6} {:>6} {:>4}",
            "rank", "d", "s", "h", "z", "z_1", "r", "g", "q", "switches (per level)", "links int+side=all", "radix/level",
            "max", "procs", "beta", "tree", "diam"
        );
        for (i, r) in reports.iter().enumerate() {
            let z1 = if r.zones1_range[0] == r.zones1_range[1] {
                r.zones1_range[0].to_string()
            } else {
                format!("{}..{}", r.zones1_range[0], r.zones1_range[1])
            };
            println!(
                "{:>4} {:>2} {:<13} {:>2} {:<13} {:<7} {:<12} {:<10} {:>2} {:<22} {:>20} {:<13} {:>4} {:>6} {:>6.3} {:>6} {:>4}",
                i + 1,
                r.dims,
                format!("({})", list(&r.sides)),
                r.levels,
                format!("({})", list(&r.zones)),
                z1,
                format!("({})", list(&r.roots)),
                format!("({})", list(&r.internal_links)),
                r.side_links,
                format!("{} ({})", r.switches, list(&r.switches_per_level)),
                format!("{}+{}={}", r.internal_link_count, r.side_link_count, r.links),
                format!("({})", list(&r.radix_per_level)),
                r.max_radix,
                r.processors,
                r.bisection,
                r.tree_bisection.map_or("-".to_string(), |b| format!("{b:.3}")),
                r.diameter
            );
        }
    }
    if let Some(path) = &a.write_config {
        super::design::write_config(path, &config_text(&designs[0], &a.command_line()))?;
    }
    Ok(0)
}

/// The error for a problem without any design: which constraint excludes the smallest candidates.
fn no_design(a: &HyperzArgs, p: &Problem) -> ConfigError {
    let mut what = format!("radix {}", a.radix);
    if let Some(h) = a.levels {
        what += &format!(", --levels {h}");
    }
    if let Some(d) = a.dims {
        what += &format!(", --dims {d}");
    }
    if let Some(q) = a.side_links {
        what += &format!(", --side-links {q}");
    }
    if let Some(b) = &a.bisection {
        what += &format!(", --bisection {b}");
    }
    let mut why = String::new();
    if p.family == Family::FullyRegular {
        if let (Some(h), Some(d)) = (a.levels, a.dims) {
            let q = a.side_links.unwrap_or(1);
            let lo = eq4_min_zones(a.processors, h, d);
            let hi = if h >= 2 { eq3_max_zones(d, q, a.radix) } else { (a.radix + d * q) / (d * q + 1) };
            why = format!(
                "; eq. (4) needs z >= {lo} (z^(h+d) >= N) and eq. (3) allows z <= {hi} ({} <= R)",
                if h >= 2 { "2z + dq(z-1)" } else { "z + dq(z-1)" }
            );
        }
    }
    let family = match p.family {
        Family::General => "",
        Family::Regular => " regular",
        Family::FullyRegular => " fully regular",
    };
    ConfigError::value(
        "--processors",
        a.processors,
        format!(
            "no{family} HyperZ with {what} meets the constraints of Adda 2023 section 3.2 (every level's radix <= R, \
             N_0 >= N, z_i, s_k >= 2, r_(i-1) | r_i){why}; allow more ports or levels, or less bisection"
        ),
    )
}
