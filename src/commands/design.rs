//! `hxsim design`: the cheapest HyperX for a size, radix and bisection (Ahn et al., SC09, section
//! 3.1.2), printed as a table or JSON, optionally written as a ready-to-run config, with the design
//! space figures; and HyperX against the folded Clos (`hyperx-vs-clos`). The search and the figures
//! are in [`crate::design`].

use crate::cli::{DesignArgs, DesignCommand, HyperxArgs};
use crate::design::hyperx::{self, Design, Family, Problem};
use crate::design::{figures, Ratio};
use crate::error::ConfigError;
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;

/// Largest `--endpoints` accepted.
pub const MAX_ENDPOINTS: u64 = 1 << 48;
/// Largest `--radix` accepted.
pub const MAX_RADIX: u64 = 65536;
/// Largest `--top` accepted.
pub const MAX_TOP: usize = 1000;

/// Check the output paths before the search (exit 2 naming the option, nothing written): each
/// can be claimed (see [`crate::staged::Staged`]: not a directory, its directory can be made, no
/// other run is writing it), and the two are different files.
pub(super) fn check_outputs(write_config: Option<&Path>, plot: Option<&Path>) -> Result<(), ConfigError> {
    if let (Some(c), Some(p)) = (write_config, plot) {
        if crate::staged::same_file(c, p) {
            return Err(ConfigError::value("--plot", p.display(), "a different file than --write-config"));
        }
    }
    if let Some(c) = write_config {
        crate::staged::Staged::new(c, "--write-config")?;
    }
    if let Some(p) = plot {
        crate::staged::Staged::keeping_extension(p, "--plot")?;
    }
    Ok(())
}

/// Draw a figure with `draw` into a partial file and put it at `path` whole (see
/// [`crate::staged::Staged::keeping_extension`]); a path that cannot be written names `key`.
fn staged_figure(key: &str, path: &Path, draw: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let staged = crate::staged::Staged::keeping_extension(path, key)?;
    draw(staged.tmp())?;
    staged.commit().with_context(|| format!("writing the figure {}", path.display()))
}

fn figure_path(key: &str, path: &Path) -> Result<(), ConfigError> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    if ext == "svg" || ext == "png" {
        Ok(())
    } else {
        Err(ConfigError::value(key, path.display(), "a file name ending in .svg or .png"))
    }
}

impl HyperxArgs {
    fn problem(&self) -> Result<Problem, ConfigError> {
        if !(1..=MAX_ENDPOINTS).contains(&self.endpoints) {
            return Err(ConfigError::value("--endpoints", self.endpoints, "between 1 and 2^48"));
        }
        if !(2..=MAX_RADIX).contains(&self.radix) {
            return Err(ConfigError::value("--radix", self.radix, "between 2 and 65536 ports"));
        }
        let bisection: Ratio =
            self.bisection.parse().map_err(|e: String| ConfigError::value("--bisection", &self.bisection, e))?;
        if let Some(k) = self.trunking {
            if !(1..self.radix).contains(&k) {
                return Err(ConfigError::value(
                    "--trunking",
                    k,
                    format!("between 1 and {} (radix - 1)", self.radix - 1),
                ));
            }
        }
        if let Some(l) = self.dims {
            if !(1..self.radix).contains(&l) {
                return Err(ConfigError::value("--dims", l, format!("between 1 and {} (radix - 1)", self.radix - 1)));
            }
        }
        if !(1..=MAX_TOP).contains(&self.top) {
            return Err(ConfigError::value("--top", self.top, "between 1 and 1000"));
        }
        if let Some(p) = &self.plot {
            figure_path("--plot", p)?;
        }
        let fb = self.flattened_butterfly;
        Ok(Problem {
            endpoints: self.endpoints,
            radix: self.radix,
            bisection,
            family: if self.regular || fb { Family::Regular } else { Family::General },
            trunking: if fb { Some(2) } else { self.trunking },
            dims: self.dims,
            top: self.top,
        })
    }

    /// The options that define the problem, as typed.
    fn command_line(&self) -> String {
        let mut c = format!(
            "hxsim design hyperx --endpoints {} --radix {} --bisection {}",
            self.endpoints, self.radix, self.bisection
        );
        if self.regular {
            c += " --regular";
        }
        if self.flattened_butterfly {
            c += " --flattened-butterfly";
        }
        if let Some(k) = self.trunking {
            c += &format!(" --trunking {k}");
        }
        if let Some(l) = self.dims {
            c += &format!(" --dims {l}");
        }
        c
    }

    fn family_name(&self) -> &'static str {
        match (self.flattened_butterfly, self.regular) {
            (true, _) => "flattened butterfly (regular, K = 2)",
            (false, true) => "regular",
            (false, false) => "general",
        }
    }
}

/// One design as printed (`--json`) and tabulated.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `L`.
    pub dims: usize,
    /// `S_1..S_L`.
    pub sides: Vec<u64>,
    /// `K_1..K_L`.
    pub trunking: Vec<u64>,
    /// `T`, the smallest feasible.
    pub servers_per_switch: u64,
    /// Every `T` in `[lo, hi]` is feasible for this `S` and `K`.
    pub servers_per_switch_range: [u64; 2],
    /// `P`.
    pub switches: u64,
    /// Switch-to-switch links, trunked links counted one by one.
    pub links: u64,
    /// `T * P`.
    pub endpoints: u64,
    /// Ports per switch used at `T`: `T + sum K_k (S_k - 1)`.
    pub ports_used: u64,
    /// `min(K_k S_k) / (2T)` at `T`.
    pub beta: f64,
    /// `beta` at the largest feasible `T`.
    pub beta_at_max_t: f64,
    /// Switch hops between the farthest switches.
    pub diameter: usize,
    /// Mean switch hops over ordered switch pairs, self pairs included (as `hxsim analyze`).
    pub average_distance: f64,
}

impl From<&Design> for Report {
    fn from(d: &Design) -> Self {
        Report {
            dims: d.dims(),
            sides: d.sides.clone(),
            trunking: d.trunking.clone(),
            servers_per_switch: d.servers_per_switch,
            servers_per_switch_range: [d.servers_per_switch, d.servers_per_switch_max],
            switches: d.switches(),
            links: d.links(),
            endpoints: d.endpoints(),
            ports_used: d.servers_per_switch + d.network_ports(),
            beta: d.beta_at(d.servers_per_switch),
            beta_at_max_t: d.beta_at(d.servers_per_switch_max),
            diameter: d.diameter(),
            average_distance: d.average_distance(),
        }
    }
}

fn vec_text(v: &[u64]) -> String {
    format!("({})", v.iter().map(u64::to_string).collect::<Vec<_>>().join(","))
}

/// `hxsim design ...`: returns the exit code.
pub fn run(args: &DesignArgs) -> Result<u8> {
    match &args.command {
        DesignCommand::Hyperx(a) => run_hyperx(a),
        DesignCommand::Hyperz(a) => super::design_hyperz::run(a),
        DesignCommand::HyperxVsClos(a) => {
            figure_path("--plot", &a.plot)?;
            if !(10..=30).contains(&a.max_log2_endpoints) {
                return Err(
                    ConfigError::value("--max-log2-endpoints", a.max_log2_endpoints, "between 10 and 30").into()
                );
            }
            let points = figures::fig8_points(a.max_log2_endpoints);
            if a.json {
                for p in &points {
                    println!("{}", serde_json::to_string(p)?);
                }
            }
            staged_figure("--plot", &a.plot, |tmp| figures::draw_fig8(&points, tmp))?;
            println!("{}", a.plot.display());
            Ok(0)
        }
    }
}

fn run_hyperx(a: &HyperxArgs) -> Result<u8> {
    let p = a.problem()?;
    check_outputs(a.write_config.as_deref(), a.plot.as_deref())?;
    let start = std::time::Instant::now();
    let designs = hyperx::search(&p).map_err(|_| {
        ConfigError::value(
            "--endpoints",
            a.endpoints,
            format!(
                "the general search for this many endpoints on radix {} would visit more than {} partial shapes; \
                 restrict it with --dims L or --regular",
                a.radix,
                hyperx::SHAPE_LIMIT
            ),
        )
    })?;
    let seconds = start.elapsed().as_secs_f64();
    if let Some(path) = &a.plot {
        // L and K of the figure: given, or those of the best regular design.
        let regular = Problem { family: Family::Regular, top: 1, ..p.clone() };
        let best_regular = hyperx::search(&regular).ok().and_then(|v| v.into_iter().next());
        let l = a.dims.or(best_regular.as_ref().map(|d| d.dims() as u64));
        let k = p.trunking.or(best_regular.as_ref().map(|d| d.trunking[0]));
        let (Some(l), Some(k)) = (l, k) else {
            return Err(ConfigError::value(
                "--plot",
                path.display(),
                "no regular design exists here: give the figure's --dims and --trunking",
            )
            .into());
        };
        let space = figures::DesignSpace::new(p.endpoints, p.radix, l, k, p.bisection);
        staged_figure("--plot", path, |tmp| figures::draw_design_space(&space, tmp))?;
        eprintln!("design space (L = {l}, K = {k}) drawn in {}", path.display());
    }
    if designs.is_empty() {
        let mut what = format!("--radix {} --bisection {} ({})", a.radix, a.bisection, a.family_name());
        if let Some(l) = a.dims {
            what += &format!(", --dims {l}");
        }
        if let Some(k) = a.trunking {
            what += &format!(", --trunking {k}");
        }
        return Err(ConfigError::value(
            "--endpoints",
            a.endpoints,
            format!(
                "no HyperX with {what} meets constraints (2)-(5) of Ahn et al. section 3.1 for this many endpoints; \
                 allow more ports, less bisection, or other dimensions or trunking"
            ),
        )
        .into());
    }
    let reports: Vec<Report> = designs.iter().map(Report::from).collect();
    if a.json {
        let out = serde_json::json!({
            "endpoints": a.endpoints,
            "radix": a.radix,
            "bisection": p.bisection.value(),
            "family": a.family_name(),
            "trunking": p.trunking,
            "dims": a.dims,
            "search_seconds": seconds,
            "designs": reports,
        });
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!(
            "HyperX for N = {} endpoints, radix {}, bisection >= {} ({}): fewest switches, then fewer dimensions, \
             then fewer links; searched in {:.3} s",
            a.endpoints,
            a.radix,
            a.bisection,
            a.family_name(),
            seconds
        );
        println!(
            "{:>4} {:>2} {:<16} {:<14} {:>5} {:>11} {:>9} {:>10} {:>10} {:>6} {:>6} {:>4} {:>7}",
            "rank", "L", "S", "K", "T", "T range", "switches", "links", "endpoints", "ports", "beta", "diam", "avg d"
        );
        for (i, r) in reports.iter().enumerate() {
            println!(
                "{:>4} {:>2} {:<16} {:<14} {:>5} {:>11} {:>9} {:>10} {:>10} {:>6} {:>6.3} {:>4} {:>7.4}",
                i + 1,
                r.dims,
                vec_text(&r.sides),
                vec_text(&r.trunking),
                r.servers_per_switch,
                format!("{}..{}", r.servers_per_switch_range[0], r.servers_per_switch_range[1]),
                r.switches,
                r.links,
                r.endpoints,
                r.ports_used,
                r.beta,
                r.diameter,
                r.average_distance
            );
        }
    }
    if let Some(path) = &a.write_config {
        write_config(path, &config_text(&designs[0], &a.command_line()))?;
    }
    Ok(0)
}

/// `--write-config`: check that `text` parses as a config hxsim simulates, then write it to `path`.
pub(super) fn write_config(path: &Path, text: &str) -> Result<()> {
    crate::config::parse_str(text, &path.display().to_string(), &[]).map_err(|e| {
        ConfigError::value("--write-config", path.display(), format!("this design is beyond what hxsim simulates: {e}"))
    })?;
    // As every output: claimed, written under a partial name and put in place whole; a path that
    // cannot be written is bad input naming the option (see `crate::staged`).
    crate::staged::write_atomic(path, text.as_bytes(), "--write-config")
        .with_context(|| format!("writing {}", path.display()))?;
    eprintln!("config written to {}", path.display());
    Ok(())
}

/// A ready-to-run hxsim config for design `d` (the layout of `configs/hyperx-3d-8.toml`).
/// `command` is the command line that found it, recorded in a comment.
pub fn config_text(d: &Design, command: &str) -> String {
    let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    format!(
        "# Found by `{command}`\n\
         # (Ahn et al., SC09, section 3.1.2): {p} switches, {e} servers (T = {t}; any T in {t}..{tmax} fits), {links} links,\n\
         # {ports} ports per switch used, beta {beta:.4}, diameter {diam}, average distance {avg:.4}.\n\
         name = \"hyperx-{p}-switches\"\n\
         seed = 1\n\
         \n\
         [topology]\n\
         kind = \"hyperx\"\n\
         sides = [{sides}]\n\
         trunking = [{trunking}]\n\
         servers_per_switch = {t}\n\
         \n\
         [routing]\n\
         algorithm = \"dal\"\n\
         \n\
         [traffic]\n\
         pattern = \"uniform\"\n\
         load = 0.6\n\
         \n\
         [simulation]\n\
         warmup_cycles = 3000\n\
         measure_cycles = 3000\n",
        p = d.switches(),
        e = d.endpoints(),
        t = d.servers_per_switch,
        tmax = d.servers_per_switch_max,
        links = d.links(),
        ports = d.servers_per_switch + d.network_ports(),
        beta = d.beta_at(d.servers_per_switch),
        diam = d.diameter(),
        avg = d.average_distance(),
        sides = list(&d.sides),
        trunking = list(&d.trunking),
    )
}
