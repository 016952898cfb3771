//! Design-space figures of Ahn et al., SC09: the regular HyperX design space in the `(S, T)`
//! plane (Figs. 4 and 5) and switches per endpoint against network size, HyperX against the folded
//! Clos (Fig. 8). Drawn in the style of `hxsim plot` (same font, sizes and colours).

use super::clos::folded_clos;
use super::hyperx::{self, Family, Problem};
use super::Ratio;
use crate::plot::{dashes, register_fonts, tick, DESC_PX, FONT, LABEL_PX, LEGEND_PX, PALETTE, TITLE_PX};
use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;

/// The bisection ratios of the paper's Table 1 and Fig. 8.
pub const PAPER_BETAS: [&str; 4] = ["0.125", "0.25", "0.5", "1"];

/// The regular design space for fixed `(L, K, R, N)` (section 3.1.1): integer `(S, T)` with
/// `T <= R - L K (S - 1)` (2), `T S^L >= N` (3), `T <= K S / (2 beta)` (4) and `S >= 2` (5).
#[derive(Debug, Clone)]
pub struct DesignSpace {
    /// `N`.
    pub endpoints: u64,
    /// `R`.
    pub radix: u64,
    /// `L`.
    pub dims: u64,
    /// `K`.
    pub trunking: u64,
    /// The `B` whose feasible points are drawn.
    pub bisection: Ratio,
    /// The ratios whose bound (4) and leftmost corner are drawn: the paper's four and `B`.
    pub betas: Vec<Ratio>,
}

impl DesignSpace {
    /// The space of `(L, K)` = `(dims, trunking)` for `N`, `R` and `B`.
    pub fn new(endpoints: u64, radix: u64, dims: u64, trunking: u64, bisection: Ratio) -> Self {
        let mut betas: Vec<Ratio> = PAPER_BETAS.iter().filter_map(|b| b.parse().ok()).collect();
        if !betas.contains(&bisection) {
            betas.push(bisection);
        }
        betas.sort_by(|a, b| a.value().total_cmp(&b.value()));
        DesignSpace { endpoints, radix, dims, trunking, bisection, betas }
    }

    /// Largest `S` with room for one endpoint under (2).
    pub fn s_max(&self) -> u64 {
        1 + (self.radix - 1) / (self.dims * self.trunking)
    }

    /// Feasible `T` for side `s` at bisection `beta`: `lo..=hi`, empty when `lo > hi`.
    pub fn t_range(&self, s: u64, beta: Ratio) -> (u64, u64) {
        let p = (0..self.dims).try_fold(1u64, |a, _| a.checked_mul(s)).unwrap_or(u64::MAX);
        let lo = self.endpoints.div_ceil(p).max(1);
        let ports = self.radix.saturating_sub(self.dims * self.trunking * (s - 1));
        (lo, ports.min(beta.max_t(self.trunking * s)))
    }

    /// Every feasible integer `(S, T)` at bisection `beta`.
    pub fn feasible(&self, beta: Ratio) -> Vec<(u64, u64)> {
        (2..=self.s_max())
            .flat_map(|s| {
                let (lo, hi) = self.t_range(s, beta);
                (lo..=hi).map(move |t| (s, t))
            })
            .collect()
    }

    /// The leftmost corner (fewest switches) at `beta`: smallest `S`, with its smallest `T`.
    pub fn leftmost(&self, beta: Ratio) -> Option<(u64, u64)> {
        (2..=self.s_max()).find_map(|s| {
            let (lo, hi) = self.t_range(s, beta);
            (lo <= hi).then_some((s, lo))
        })
    }
}

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing the figure: {e:?}")
}

/// A polyline clipped to `y <= y_max` (pieces outside are dropped, one segment per visible run).
fn clipped(points: impl Iterator<Item = (f64, f64)>, y_min: f64, y_max: f64) -> Vec<Vec<(f64, f64)>> {
    let mut runs: Vec<Vec<(f64, f64)>> = vec![vec![]];
    for (x, y) in points {
        if y.is_finite() && y <= y_max && y >= y_min {
            if let Some(r) = runs.last_mut() {
                r.push((x, y));
            }
        } else if runs.last().is_some_and(|r| !r.is_empty()) {
            runs.push(vec![]);
        }
    }
    runs.into_iter().filter(|r| r.len() > 1).collect()
}

fn draw_space<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, d: &DesignSpace) -> Result<()> {
    root.fill(&WHITE).map_err(err)?;
    let (l, k, r, n) = (d.dims as f64, d.trunking as f64, d.radix as f64, d.endpoints as f64);
    let s_hi = d.s_max() as f64 + 1.5;
    let (x0, x1, y0, y1) = (0.0, s_hi.max(4.0), 0.0, r * 1.05);
    let feasible = d.feasible(d.bisection);
    let title = format!(
        "HyperX design space (L = {}, K = {}, R = {}, N = {}){}",
        d.dims,
        d.trunking,
        d.radix,
        d.endpoints,
        if d.betas.iter().all(|&b| d.leftmost(b).is_none()) { ": no solutions" } else { "" }
    );
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT, TITLE_PX).into_font().style(FontStyle::Bold))
        .margin(20)
        .x_label_area_size(72)
        .y_label_area_size(96)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("S, switches per dimension")
        .y_desc("T, endpoints per switch")
        .axis_desc_style((FONT, DESC_PX))
        .label_style((FONT, LABEL_PX))
        .x_labels(10)
        .y_labels(8)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .bold_line_style(RGBColor(225, 225, 225))
        .light_line_style(WHITE)
        .axis_style(BLACK.stroke_width(2))
        .draw()
        .map_err(err)?;
    let fine = |f: &dyn Fn(f64) -> f64| -> Vec<(f64, f64)> {
        (0..=2000).map(|i| 2.0 + (x1 - 2.0) * i as f64 / 2000.0).map(|s| (s, f(s))).collect()
    };
    // Feasible integer points first, under the bounds.
    let dot = RGBColor(150, 150, 150);
    chart
        .draw_series(feasible.iter().map(|&(s, t)| Circle::new((s as f64, t as f64), 2, dot.filled())))
        .map_err(err)?
        .label(format!("feasible (S, T) at beta >= {}", d.bisection))
        .legend(move |(x, y)| Circle::new((x + 16, y), 4, dot.filled()));
    // S >= 2 (5).
    let black = BLACK.stroke_width(2);
    chart
        .draw_series(dashes((2.0, y0), (2.0, y1), 30).map(|p| PathElement::new(p, black)))
        .map_err(err)?
        .label("S >= 2 (5)")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 32, y)], black));
    // Ports (2) and size (3).
    let ports = PALETTE[3].stroke_width(3);
    for (i, run) in clipped(fine(&|s| r - l * k * (s - 1.0)).into_iter(), y0, y1).into_iter().enumerate() {
        let series = chart.draw_series(LineSeries::new(run, ports)).map_err(err)?;
        if i == 0 {
            series
                .label("ports (2): T <= R - LK(S-1)")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 32, y)], ports));
        }
    }
    let size = PALETTE[0].stroke_width(3);
    for (i, run) in clipped(fine(&|s| n / s.powf(l)).into_iter(), y0, y1).into_iter().enumerate() {
        let series = chart.draw_series(LineSeries::new(run, size)).map_err(err)?;
        if i == 0 {
            series
                .label("size (3): T >= N / S^L")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 32, y)], size));
        }
    }
    // Bisection (4), one line per beta, and its leftmost corner.
    let shades = [PALETTE[2], PALETTE[1], PALETTE[4], PALETTE[5], PALETTE[6]];
    for (i, &b) in d.betas.iter().enumerate() {
        let c = shades[i % shades.len()];
        let style = c.stroke_width(2);
        let bv = b.value();
        for (j, run) in clipped(fine(&|s| k * s / (2.0 * bv)).into_iter(), y0, y1).into_iter().enumerate() {
            let series = chart.draw_series(LineSeries::new(run, style)).map_err(err)?;
            if j == 0 {
                series
                    .label(format!("bisection (4), beta = {b}"))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 32, y)], style));
            }
        }
        if let Some((s, t)) = d.leftmost(b) {
            let at = (s as f64, t as f64);
            let blue = PALETTE[0];
            chart
                .draw_series([EmptyElement::at(at) + Rectangle::new([(-7, -7), (7, 7)], blue.filled())])
                .map_err(err)?;
            chart
                .draw_series([
                    EmptyElement::at(at) + Text::new(format!("({t},{s})"), (-52, -30), (FONT, LABEL_PX).into_font())
                ])
                .map_err(err)?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(160, 160, 160))
        .label_font((FONT, LEGEND_PX))
        .margin(12)
        .legend_area_size(44)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

/// Draw the design space `d` as Figs. 4 and 5 into `out` (`.svg` or `.png`): the three bounds,
/// the feasible integer points at `d.bisection`, and the leftmost corner of each beta labelled
/// `(T,S)` as in the paper.
pub fn draw_design_space(d: &DesignSpace, out: &Path) -> Result<()> {
    register_fonts()?;
    let size = (1200, 900);
    if is_png(out) {
        draw_space(&BitMapBackend::new(out, size).into_drawing_area(), d)
    } else {
        draw_space(&SVGBackend::new(out, size).into_drawing_area(), d)
    }
}

fn is_png(out: &Path) -> bool {
    out.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("png"))
}

/// One point of Fig. 8.
#[derive(Debug, Clone, Serialize)]
pub struct Fig8Point {
    /// `R`.
    pub radix: u64,
    /// `beta` (HyperX: at least this; folded Clos: tapered to this).
    pub beta: f64,
    /// `N`.
    pub endpoints: u64,
    /// Switches of the best general HyperX, `None` when none exists.
    pub hyperx_switches: Option<u64>,
    /// Its `L`.
    pub hyperx_dims: Option<usize>,
    /// Switches of the folded Clos ([`folded_clos`]).
    pub clos_switches: Option<u64>,
    /// Its levels.
    pub clos_levels: Option<u32>,
}

/// The radices of Fig. 8.
pub const FIG8_RADICES: [u64; 4] = [32, 64, 128, 256];

/// Fig. 8's data: for each radix and beta, `N = 2^(j/4)` for `j = 40..=4 max_log2` (from 1024, a
/// quarter octave apart), the best general HyperX and the folded Clos.
pub fn fig8_points(max_log2: u32) -> Vec<Fig8Point> {
    let betas: Vec<Ratio> = PAPER_BETAS.iter().filter_map(|b| b.parse().ok()).collect();
    let sizes: Vec<u64> = (40..=4 * max_log2).map(|j| 2f64.powf(j as f64 / 4.0).round() as u64).collect();
    let mut jobs: Vec<(u64, Ratio, u64)> = Vec::new();
    for &r in &FIG8_RADICES {
        for &b in &betas {
            jobs.extend(sizes.iter().map(|&n| (r, b, n)));
        }
    }
    jobs.par_iter()
        .map(|&(radix, b, n)| {
            let p = Problem {
                endpoints: n,
                radix,
                bisection: b,
                family: Family::General,
                trunking: None,
                dims: None,
                top: 1,
            };
            let h = hyperx::search(&p).ok().and_then(|v| v.into_iter().next());
            let c = folded_clos(n, radix, b);
            Fig8Point {
                radix,
                beta: b.value(),
                endpoints: n,
                hyperx_switches: h.as_ref().map(|d| d.switches()),
                hyperx_dims: h.as_ref().map(|d| d.dims()),
                clos_switches: c.map(|c| c.switches),
                clos_levels: c.map(|c| c.levels),
            }
        })
        .collect()
}

fn draw_fig8_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    points: &[Fig8Point],
    radix: u64,
    letter: char,
    legend: bool,
) -> Result<()> {
    let mine: Vec<&Fig8Point> = points.iter().filter(|p| p.radix == radix).collect();
    let per = |p: &Fig8Point, v: Option<u64>| v.map(|s| ((p.endpoints as f64).log2(), s as f64 / p.endpoints as f64));
    let ys = mine.iter().flat_map(|p| [per(p, p.hyperx_switches), per(p, p.clos_switches)]).flatten();
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0f64);
    for (x, y) in ys {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        (x0, x1, y1) = (6.0, 20.0, 1.0);
    }
    let mut chart = ChartBuilder::on(area)
        .caption(format!("({letter}) radix {radix}"), (FONT, TITLE_PX).into_font().style(FontStyle::Bold))
        .margin(16)
        .margin_right(40)
        .x_label_area_size(72)
        .y_label_area_size(96)
        .build_cartesian_2d(x0..x1, 0.0..y1 * if legend { 1.4 } else { 1.05 })
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("N, endpoints")
        .y_desc("switches per endpoint")
        .axis_desc_style((FONT, DESC_PX))
        .label_style((FONT, LABEL_PX))
        .x_labels(8)
        .y_labels(6)
        .x_label_formatter(&|v| format!("2^{}", v.round()))
        .y_label_formatter(&tick)
        .bold_line_style(RGBColor(225, 225, 225))
        .light_line_style(WHITE)
        .axis_style(BLACK.stroke_width(2))
        .draw()
        .map_err(err)?;
    for (i, b) in PAPER_BETAS.iter().enumerate() {
        let bv: f64 = b.parse().unwrap_or(1.0);
        let c = PALETTE[i];
        let solid = c.stroke_width(3);
        let thin = c.stroke_width(2);
        let of = |f: &dyn Fn(&Fig8Point) -> Option<u64>| -> Vec<Vec<(f64, f64)>> {
            let mut runs = vec![vec![]];
            for p in mine.iter().filter(|p| p.beta == bv) {
                match per(p, f(p)) {
                    Some(q) => runs.last_mut().into_iter().for_each(|r| r.push(q)),
                    None => runs.push(vec![]),
                }
            }
            runs.into_iter().filter(|r| !r.is_empty()).collect()
        };
        for (j, run) in of(&|p| p.hyperx_switches).into_iter().enumerate() {
            let s = chart.draw_series(LineSeries::new(run, solid)).map_err(err)?;
            if j == 0 && legend {
                s.label(format!("HyperX beta {b}"))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 32, y)], solid));
            }
        }
        for (j, run) in of(&|p| p.clos_switches).into_iter().enumerate() {
            for w in run.windows(2) {
                chart.draw_series(dashes(w[0], w[1], 3).map(|d| PathElement::new(d, thin))).map_err(err)?;
            }
            // An empty series, for the legend entry.
            let s = chart.draw_series(std::iter::empty::<Circle<(f64, f64), i32>>()).map_err(err)?;
            if j == 0 && legend {
                s.label(format!("folded Clos beta {b}")).legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (12, 0)], thin)
                        + PathElement::new(vec![(20, 0), (32, 0)], thin)
                });
            }
        }
    }
    if legend {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(160, 160, 160))
            .label_font((FONT, LEGEND_PX))
            .margin(12)
            .legend_area_size(44)
            .draw()
            .map_err(err)?;
    }
    Ok(())
}

fn draw_fig8_all<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, points: &[Fig8Point]) -> Result<()> {
    root.fill(&WHITE).map_err(err)?;
    let areas = root.split_evenly((2, 2));
    for (i, (area, &r)) in areas.iter().zip(FIG8_RADICES.iter()).enumerate() {
        draw_fig8_panel(area, points, r, (b'a' + i as u8) as char, i == 1)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

/// Draw Fig. 8 from `points` into `out` (`.svg` or `.png`): four panels (radix 32, 64, 128, 256),
/// switches per endpoint against `log2 N`; HyperX solid, folded Clos dashed, one colour per beta.
pub fn draw_fig8(points: &[Fig8Point], out: &Path) -> Result<()> {
    register_fonts()?;
    let size = (1600, 1300);
    if is_png(out) {
        draw_fig8_all(BitMapBackend::new(out, size).into_drawing_area(), points)
    } else {
        draw_fig8_all(SVGBackend::new(out, size).into_drawing_area(), points)
    }
}
