//! The standard figures of a results file, as SVG, PNG or PDF (by the output's extension); the
//! command that draws them is [`crate::commands::plot`].
//!
//! - A sweep with a `traffic.load` axis: accepted load, average latency and Jain's index against
//!   offered load, one curve per series (each combination of the other swept values).
//! - A sweep without a load axis: the same three metrics as a point chart, one column per value of
//!   the other swept keys, one marker per series.
//! - A sweep of fixed workloads (`traffic.mode = "fixed"`): the completion-time figure of SurePath
//!   (Fig. 10): accepted load over time per series, each series' completion time marked, and the
//!   completion times side by side.
//! - A run file (or one point of a sweep, `--point N`): the time series (injected and accepted load,
//!   mean latency, packets in flight against cycles), with the measurement window marked.
//!
//! A sweep gives one figure per traffic pattern when the pattern is swept (or per value of any swept
//! key with `--by KEY`), each titled with the network, the pattern and the settings the sweep fixed
//! with a one-value `--set`, with one legend for all panels under them (none for a single series).
//! Series get readable labels (`PolSP`, `OmniSP`, ...) and a distinct colour and
//! marker each for up to 12 series. A sweep point whose measured window did not reach a steady state
//! (summary `steady_state` false) is drawn hollow inside a black ring, with a legend note.
//!
//! Every figure is drawn for a printed size ([`PrintSize`], `--width` and `--font`; by default 7 in
//! wide with 9 pt text, a two-column paper's text width): panels share the width, the legend is a
//! strip under them, and text is at the requested size when the figure is printed at that width
//! (PNG at [`PNG_DPI`]; SVG and PDF sized in points). Text is drawn with DejaVu Sans, built into the
//! binary (and embedded into PDFs), so no system font is needed.

use crate::error::ConfigError;
use crate::output::hdf5 as h5;
use ::hdf5::types::{TypeDescriptor, VarLenUnicode};
use ::hdf5::{Dataset, File, Group};
use anyhow::{anyhow, bail, Context, Result};
use plotters::coord::Shift;
use plotters::element::DynElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use std::sync::Once;

/// Which figure to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Figure {
    /// Sweep: throughput, latency and Jain's index side by side (or the completion-time figure for
    /// fixed workloads); run: the time series.
    All,
    /// Sweep: accepted load against offered load.
    Throughput,
    /// Sweep: average latency against offered load.
    Latency,
    /// Sweep: Jain's index of injected load against offered load.
    Jain,
    /// Time series of a run (or of sweep point `--point`).
    Timeseries,
}

pub(crate) const FONT: &str = "sans-serif";
/// Text sizes in pixels of the design-space figures (`hxsim design`, see [`crate::design`]), which
/// are drawn at a fixed pixel size; `hxsim plot` sizes its figures from a [`PrintSize`].
pub(crate) const TITLE_PX: u32 = 30;
pub(crate) const DESC_PX: u32 = 28;
pub(crate) const LABEL_PX: u32 = 24;
pub(crate) const LEGEND_PX: u32 = 24;

/// Twelve colours: Tableau 10 and two darker ones, distinguishable in print and by most colour-blind
/// readers (each series also gets its own marker).
pub(crate) const PALETTE: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
    RGBColor(0, 60, 130),
];

/// Twelve markers: six shapes, filled then hollow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Cross,
}
const SHAPES: [Shape; 6] =
    [Shape::Circle, Shape::Square, Shape::TriangleUp, Shape::Diamond, Shape::TriangleDown, Shape::Cross];

/// Colour and (shape, filled) of series `i`: distinct for the first 12.
fn series_style(i: usize) -> (RGBColor, Shape, bool) {
    let k = i % 12;
    (PALETTE[k], SHAPES[k % 6], k < 6)
}

/// One curve.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Points in drawing order (NaNs are skipped).
    pub points: Vec<(f64, f64)>,
    /// Draw markers at the points (sweeps) or a plain line (time series).
    pub markers: bool,
    /// Join the points with a line (false: markers only, for point charts).
    pub line: bool,
    /// Style index (colour and marker), shared by the same series in every panel.
    pub style: usize,
    /// Per point (same order as `points`; empty: all steady): the run's measured window did not
    /// reach a steady state (summary `steady_state` false), so its value is a point on a drift. Such
    /// markers are drawn hollow inside a black ring, and the legend explains the ring.
    pub unsteady: Vec<bool>,
    /// Draw each point as a bar from the axis's base up to it (categorical panels).
    pub bars: bool,
}

impl Series {
    /// A sweep curve through rows `rows` of the columns `x` and `y`, sorted by `x`, each point
    /// flagged unsteady where the column `steady` (the summary's `steady_state`, 1 or 0) is 0.
    fn sweep(label: &str, style: usize, rows: &[usize], x: &[f64], y: &[f64], steady: Option<&[f64]>) -> Series {
        let mut pts: Vec<(f64, f64, bool)> =
            rows.iter().map(|&r| (x[r], y[r], steady.is_some_and(|s| s[r] == 0.0))).collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        Series {
            label: label.into(),
            points: pts.iter().map(|p| (p.0, p.1)).collect(),
            markers: true,
            line: true,
            style,
            unsteady: pts.iter().map(|p| p.2).collect(),
            bars: false,
        }
    }

    /// Whether point `i` is marked not steady.
    fn is_unsteady(&self, i: usize) -> bool {
        self.unsteady.get(i).copied().unwrap_or(false)
    }
}

/// Legend note for the ring around the markers of [`Series::unsteady`] points.
pub const UNSTEADY_NOTE: &str = "ringed, hollow: not steady";

/// One panel: axes, curves, and reference lines.
#[derive(Debug, Clone, Default)]
pub struct Panel {
    /// Caption.
    pub title: String,
    /// X axis label, with units.
    pub x_desc: String,
    /// Y axis label, with units.
    pub y_desc: String,
    /// Curves.
    pub series: Vec<Series>,
    /// Dashed grey lines from `(x0, y0)` to `(x1, y1)` (e.g. the ideal throughput).
    pub guides: Vec<((f64, f64), (f64, f64))>,
    /// Vertical dotted grey lines at these x values (e.g. the measurement window).
    pub vlines: Vec<f64>,
    /// Vertical dashed lines in a series' colour: `(x, style)` (e.g. completion times).
    pub marks: Vec<(f64, usize)>,
    /// Start the y axis at 0.
    pub y_from_zero: bool,
    /// Categorical x axis: tick `i` is labelled `categories[i]`.
    pub categories: Vec<String>,
}

/// A whole figure: title, panels side by side, one legend under them.
#[derive(Debug, Clone)]
pub struct Fig {
    /// Title above the panels (network and pattern).
    pub title: String,
    /// Panels, left to right.
    pub panels: Vec<Panel>,
    /// Legend entries: label, style index, with markers.
    pub legend: Vec<(String, usize, bool)>,
}

pub(crate) fn register_fonts() -> Result<()> {
    static ONCE: Once = Once::new();
    let mut ok = true;
    ONCE.call_once(|| {
        ok = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok();
    });
    if ok {
        Ok(())
    } else {
        Err(anyhow!("the built-in font could not be loaded"))
    }
}

fn range_of(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    let span = hi - lo;
    let pad = if span > 0.0 { span * 0.05 } else { hi.abs().max(1.0) * 0.05 };
    (if from_zero && lo >= 0.0 { lo } else { lo - pad }, hi + pad)
}

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing the figure: {e:?}")
}

/// The printed size of a figure (`hxsim plot --width --font`): every length of the drawing follows
/// from these two, so that the figure placed at its width in a document has its text at `font_pt`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrintSize {
    /// Width of the whole figure, in points (1/72 in).
    pub width_pt: f64,
    /// Size of its text, in points.
    pub font_pt: f64,
}

/// `--width`'s default: the text width of a two-column paper (IEEE and ACM templates: 7 in).
pub const DEFAULT_WIDTH: &str = "7in";
/// `--font`'s default: close to the 8-9 pt of a two-column paper's captions.
pub const DEFAULT_FONT: &str = "9pt";
/// Resolution of PNG figures, pixels per inch.
pub const PNG_DPI: f64 = 300.0;
/// Pixels per point of the SVG drawing behind SVG and PDF figures: plotters places everything at
/// whole pixels, so it draws at four times the printed size, and the file says its size in points.
const VECTOR_PX_PER_PT: f64 = 4.0;

impl Default for PrintSize {
    fn default() -> Self {
        PrintSize { width_pt: 7.0 * 72.0, font_pt: 9.0 }
    }
}

impl PrintSize {
    /// Read `--width` (a length: `7in`, `17.8cm`, `180mm`, `504pt`) and `--font` (`9pt`, or a number
    /// of points).
    pub fn parse(width: &str, font: &str) -> Result<Self, ConfigError> {
        let width_pt = length_pt(width, &["in", "cm", "mm", "pt"]).filter(|w| (72.0..=72.0 * 40.0).contains(w));
        let width_pt = width_pt.ok_or_else(|| {
            ConfigError::value(
                "--width",
                width,
                "a length from 1in to 40in: a number with in, cm, mm or pt (e.g. 7in, 3.5in, 17cm)",
            )
        })?;
        let font_pt = length_pt(font, &["pt", ""]).filter(|f| (4.0..=36.0).contains(f));
        let font_pt = font_pt
            .ok_or_else(|| ConfigError::value("--font", font, "a text size from 4pt to 36pt (e.g. 9pt, 8, 10.5pt)"))?;
        Ok(PrintSize { width_pt, font_pt })
    }
}

/// `s` as a number and one of `units` (`""`: none; points then), in points.
fn length_pt(s: &str, units: &[&str]) -> Option<f64> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num.trim().parse().ok().filter(|v: &f64| v.is_finite() && *v > 0.0)?;
    let unit = unit.trim();
    if !units.contains(&unit) {
        return None;
    }
    Some(match unit {
        "in" => v * 72.0,
        "cm" => v * 72.0 / 2.54,
        "mm" => v * 72.0 / 25.4,
        _ => v,
    })
}

/// How plotters sizes text: a font "size" is not the em (what a point size measures) but a line
/// height. Its SVG backend writes `font-size` = size / 1.24; its bitmap backend scales DejaVu Sans
/// so that ascent + descent (1901 + 483 of 2048 units per em) is the size. So text of `em` pixels is
/// asked for at `em` times this.
#[derive(Debug, Clone, Copy)]
enum TextScale {
    Svg,
    Bitmap,
}

impl TextScale {
    fn size_per_em(self) -> f64 {
        match self {
            TextScale::Svg => 1.24,
            TextScale::Bitmap => (1901.0 + 483.0) / 2048.0,
        }
    }
}

/// The lengths of one drawing, in pixels: the print size times the output's pixels per point.
#[derive(Debug, Clone)]
struct Geometry {
    /// Text size, the em in pixels (axis descriptions, ticks, legend, captions).
    font: f64,
    /// Plotters' font size per pixel of em (see [`TextScale`]).
    size_per_em: f64,
    /// The figure's title (bold).
    title_font: f64,
    /// The title, broken into lines that fit the width.
    title_lines: Vec<String>,
    title_h: u32,
    width: u32,
    panel: (u32, u32),
    legend: LegendLayout,
    pen: Pen,
}

/// Stroke widths and marker size, in pixels.
#[derive(Debug, Clone, Copy)]
struct Pen {
    /// Curves.
    line: u32,
    /// Axes, guides, marker outlines.
    thin: u32,
    /// Marker radius.
    r: i32,
}

/// The legend, a strip under the panels: its entries side by side, in rows as wide as the figure,
/// each row centred.
#[derive(Debug, Clone, Default)]
struct LegendLayout {
    /// Label, style, markers.
    entries: Vec<(String, usize, bool)>,
    note: bool,
    /// Where each entry starts: (x, row), in entry order.
    at: Vec<(u32, u32)>,
    row_h: u32,
    h: u32,
}

/// Width in pixels of `text` in `font` (the built-in DejaVu Sans); a generous estimate if the
/// font cannot measure it.
fn text_w(text: &str, font: &FontDesc) -> u32 {
    font.box_size(text).map(|b| b.0).unwrap_or((text.chars().count() as f64 * font.get_size() * 0.62) as u32)
}

/// `text` broken at spaces into lines at most `width` pixels wide in `font` (a word longer than
/// that gets a line of its own).
fn wrap(text: &str, font: &FontDesc, width: u32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(l) if text_w(&format!("{l} {word}"), font) <= width => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// A title broken into lines at most `width` pixels wide, at its ` \u{2014} ` separators where it can
/// (a part too long alone is broken at spaces).
fn wrap_title(title: &str, font: &FontDesc, width: u32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for part in title.split(" \u{2014} ").filter(|p| !p.is_empty()) {
        match lines.last_mut() {
            Some(l) if text_w(&format!("{l} \u{2014} {part}"), font) <= width => {
                l.push_str(" \u{2014} ");
                l.push_str(part);
            }
            _ if text_w(part, font) > width => lines.extend(wrap(part, font, width)),
            _ => lines.push(part.to_string()),
        }
    }
    lines
}

impl Geometry {
    fn new(fig: &Fig, size: PrintSize, px_per_pt: f64, scale: TextScale) -> Result<Self> {
        register_fonts()?;
        let f = size.font_pt * px_per_pt;
        let size_per_em = scale.size_per_em();
        let width = (size.width_pt * px_per_pt).round() as u32;
        let title_font = f * 1.1;
        let tf = FontDesc::new(FontFamily::Name(FONT), title_font * size_per_em, FontStyle::Bold);
        let title_lines = wrap_title(&fig.title, &tf, (width as f64 - 2.0 * f) as u32);
        let title_h = ((title_lines.len() as f64 * 1.3 + 0.6) * title_font).round() as u32;
        let n = fig.panels.len().max(1) as u32;
        let panel_w = width / n;
        // Panels a little wider than tall; one panel alone no taller than 0.42 of the width, and
        // tall enough for a caption, two lines of axis text and a few ticks.
        let panel_h = (panel_w as f64 * 0.82).min(width as f64 * 0.42).max(13.0 * f).round() as u32;
        let lf = FontDesc::new(FontFamily::Name(FONT), f * size_per_em, FontStyle::Normal);
        // A one-series figure's only entry has no label: no legend for it.
        let entries: Vec<(String, usize, bool)> = fig.legend.iter().filter(|e| !e.0.is_empty()).cloned().collect();
        let note = has_unsteady(fig);
        let labels: Vec<&str> = entries.iter().map(|e| e.0.as_str()).chain(note.then_some(UNSTEADY_NOTE)).collect();
        let legend = if labels.is_empty() {
            LegendLayout::default()
        } else {
            // An entry: the line sample (with its marker), a gap, the label, a wider gap.
            let widths: Vec<u32> =
                labels.iter().map(|l| (3.2 * f) as u32 + text_w(l, &lf) + (1.4 * f) as u32).collect();
            let room = (width as f64 - 2.0 * f) as u32;
            let mut rows: Vec<Vec<usize>> = vec![Vec::new()];
            let mut used = 0;
            for (k, &w) in widths.iter().enumerate() {
                let row = rows.last_mut().expect("one row at least");
                if !row.is_empty() && used + w > room {
                    rows.push(vec![k]);
                    used = w;
                } else {
                    row.push(k);
                    used += w;
                }
            }
            let mut at = vec![(0, 0); labels.len()];
            for (r, row) in rows.iter().enumerate() {
                let total: u32 = row.iter().map(|&k| widths[k]).sum();
                let mut x = width.saturating_sub(total) / 2;
                for &k in row {
                    at[k] = (x, r as u32);
                    x += widths[k];
                }
            }
            let row_h = (1.45 * f).round() as u32;
            LegendLayout { entries, note, at, row_h, h: rows.len() as u32 * row_h + (0.6 * f) as u32 }
        };
        let pt = px_per_pt;
        let pen = Pen {
            line: (1.2 * pt).round().max(1.0) as u32,
            thin: (0.6 * pt).round().max(1.0) as u32,
            r: (0.28 * f).round().max(2.0) as i32,
        };
        Ok(Geometry {
            font: f,
            size_per_em,
            title_font,
            title_lines,
            title_h,
            width,
            panel: (panel_w, panel_h),
            legend,
            pen,
        })
    }

    fn size(&self) -> (u32, u32) {
        (self.width, self.title_h + self.panel.1 + self.legend.h)
    }

    fn text(&self) -> FontDesc<'static> {
        FontDesc::new(FontFamily::Name(FONT), self.font * self.size_per_em, FontStyle::Normal)
    }

    fn bold(&self) -> FontDesc<'static> {
        FontDesc::new(FontFamily::Name(FONT), self.font * self.size_per_em, FontStyle::Bold)
    }

    fn title(&self) -> FontDesc<'static> {
        FontDesc::new(FontFamily::Name(FONT), self.title_font * self.size_per_em, FontStyle::Bold)
    }
}

/// The marker of style `style` at `at`; `unsteady`: drawn hollow (on white, so no line shows
/// through) inside a black ring, for a point that did not reach a steady state.
fn marker<'b, DB: DrawingBackend + 'b, C: Clone + 'b>(
    style: usize,
    at: C,
    pen: Pen,
    unsteady: bool,
) -> DynElement<'b, DB, C> {
    let r = pen.r;
    if unsteady {
        return ringed(style, at, pen);
    }
    let (color, shape, filled) = series_style(style);
    let fill: ShapeStyle = if filled { color.filled() } else { color.stroke_width(pen.line) };
    let e = EmptyElement::at(at);
    let rr = r + r / 6 + 1;
    match shape {
        Shape::Circle => (e + Circle::new((0, 0), r, fill)).into_dyn(),
        Shape::Square if filled => (e + Rectangle::new([(-r, -r), (r, r)], fill)).into_dyn(),
        Shape::Square => (e + PathElement::new(vec![(-r, -r), (r, -r), (r, r), (-r, r), (-r, -r)], fill)).into_dyn(),
        Shape::TriangleUp | Shape::TriangleDown | Shape::Diamond => {
            let pts = match shape {
                Shape::TriangleUp => vec![(0, -rr), (rr, rr * 3 / 4), (-rr, rr * 3 / 4)],
                Shape::TriangleDown => vec![(0, rr), (rr, -rr * 3 / 4), (-rr, -rr * 3 / 4)],
                _ => vec![(0, -rr), (rr, 0), (0, rr), (-rr, 0)],
            };
            if filled {
                (e + Polygon::new(pts, fill)).into_dyn()
            } else {
                let mut closed = pts.clone();
                closed.push(pts[0]);
                (e + PathElement::new(closed, fill)).into_dyn()
            }
        }
        Shape::Cross => {
            let s = color.stroke_width(pen.line + pen.thin);
            if filled {
                (e + PathElement::new(vec![(-r, -r), (r, r)], s) + PathElement::new(vec![(-r, r), (r, -r)], s))
                    .into_dyn()
            } else {
                (e + PathElement::new(vec![(-rr, 0), (rr, 0)], s) + PathElement::new(vec![(0, -rr), (0, rr)], s))
                    .into_dyn()
            }
        }
    }
}

/// The outline of the marker of style `style` (its hollow form) at `at`, on a white disc inside a
/// black ring: the mark of a point that did not reach a steady state.
fn ringed<'b, DB: DrawingBackend + 'b, C: Clone + 'b>(style: usize, at: C, pen: Pen) -> DynElement<'b, DB, C> {
    let (color, shape, filled) = series_style(style);
    let r = pen.r;
    let s = color.stroke_width(pen.line);
    let rr = r + r / 6 + 1;
    let ring = r + r * 3 / 4 + 1;
    let e = EmptyElement::at(at)
        + Circle::new((0, 0), ring, WHITE.filled())
        + Circle::new((0, 0), ring, BLACK.stroke_width(pen.line));
    let closed = |pts: Vec<(i32, i32)>| {
        let mut c = pts.clone();
        c.push(pts[0]);
        PathElement::new(c, s)
    };
    match shape {
        Shape::Circle => (e + Circle::new((0, 0), r, s)).into_dyn(),
        Shape::Square => (e + closed(vec![(-r, -r), (r, -r), (r, r), (-r, r)])).into_dyn(),
        Shape::TriangleUp => (e + closed(vec![(0, -rr), (rr, rr * 3 / 4), (-rr, rr * 3 / 4)])).into_dyn(),
        Shape::TriangleDown => (e + closed(vec![(0, rr), (rr, -rr * 3 / 4), (-rr, -rr * 3 / 4)])).into_dyn(),
        Shape::Diamond => (e + closed(vec![(0, -rr), (rr, 0), (0, rr), (-rr, 0)])).into_dyn(),
        // A cross has no inside: the ring alone marks it (x for the filled style, + for the hollow).
        Shape::Cross if filled => {
            let s = color.stroke_width(pen.line + pen.thin);
            (e + PathElement::new(vec![(-r, -r), (r, r)], s) + PathElement::new(vec![(-r, r), (r, -r)], s)).into_dyn()
        }
        Shape::Cross => {
            let s = color.stroke_width(pen.line + pen.thin);
            (e + PathElement::new(vec![(-rr, 0), (rr, 0)], s) + PathElement::new(vec![(0, -rr), (0, rr)], s)).into_dyn()
        }
    }
}

fn draw_panel<'a, DB: DrawingBackend + 'a>(area: &DrawingArea<DB, Shift>, p: &Panel, g: &Geometry) -> Result<()> {
    let pts = || p.series.iter().flat_map(|s| s.points.iter().copied()).filter(|(x, y)| x.is_finite() && y.is_finite());
    let (mut x0, mut x1) =
        range_of(pts().map(|q| q.0).chain(p.vlines.iter().copied()).chain(p.marks.iter().map(|m| m.0)), false);
    if !p.categories.is_empty() {
        (x0, x1) = (-0.5, p.categories.len() as f64 - 0.5);
    }
    let guide_ys = p.guides.iter().flat_map(|g| [g.0 .1, g.1 .1]);
    let (y0, y1) = range_of(pts().map(|q| q.1).chain(guide_ys), p.y_from_zero);
    let f = g.font;
    let (pw, ph) = g.panel;
    let text = g.text();
    // The axis descriptions are drawn here, wrapped to the axis's length (plotters' own are one
    // line): room for their lines beside the tick labels.
    let x_lines = wrap(&p.x_desc, &text, (pw as f64 * 0.7) as u32);
    let y_lines = wrap(&p.y_desc, &text, (ph as f64 * 0.62) as u32);
    let line_h = 1.2 * f;
    let y_area = (2.9 * f + y_lines.len() as f64 * line_h + 0.3 * f) as u32;
    // Category names that do not fit side by side under the axis are written upwards, each under
    // its category, in a label area as tall as the longest.
    let cat_w: Vec<u32> = p.categories.iter().map(|c| text_w(c, &text)).collect();
    let slot = (pw as f64 - y_area as f64 - 1.5 * f) / p.categories.len().max(1) as f64;
    let upright = cat_w.iter().any(|&w| w as f64 + 0.6 * f > slot);
    let tick_h = if upright { cat_w.iter().max().copied().unwrap_or(0) as f64 + 0.6 * f } else { 1.3 * f };
    let x_area = (tick_h + x_lines.len() as f64 * line_h) as u32;
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, g.bold())
        .margin((0.5 * f) as u32)
        .margin_right((1.0 * f) as u32)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    let cats = p.categories.clone();
    // Upright names are drawn below, not as tick labels.
    let cat_tick = move |v: &f64| {
        let i = v.round();
        if !upright && (v - i).abs() < 1e-6 && i >= 0.0 {
            cats.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let (plot_w, plot_h) = ((xr.end - xr.start).max(1) as f64, (yr.end - yr.start).max(1) as f64);
    let mut mesh = chart.configure_mesh();
    mesh.label_style(text.clone())
        .y_labels(((plot_h / (2.4 * f)) as usize).clamp(3, 6))
        .y_label_formatter(&tick)
        .bold_line_style(RGBColor(225, 225, 225).stroke_width(g.pen.thin))
        .light_line_style(WHITE)
        .axis_style(BLACK.stroke_width(g.pen.thin));
    if p.categories.is_empty() {
        // As many labels as fit side by side, from how wide a label of this range is (digits before
        // the point, and one or two after it for a short range).
        let (mag, span) = (x0.abs().max(x1.abs()), x1 - x0);
        let digits = if mag >= 1.0 { mag.log10().floor() + 1.0 } else { 1.0 };
        let decimals = if span < 0.5 {
            3.0
        } else if span < 5.0 {
            2.0
        } else {
            0.0
        };
        let label_w = ((digits.min(7.0) + decimals) * 0.55 + 0.4) * f;
        mesh.x_labels(((plot_w / label_w) as usize).clamp(3, 10)).x_label_formatter(&tick);
    } else {
        mesh.x_labels(p.categories.len() + 1).x_label_formatter(&cat_tick).disable_x_mesh();
    }
    mesh.draw().map_err(err)?;
    let (bx, by) = area.get_base_pixel();
    if upright {
        let up =
            TextStyle::from(text.clone().transform(FontTransform::Rotate270)).pos(Pos::new(HPos::Right, VPos::Center));
        for (i, c) in p.categories.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(i as f64, y0));
            area.draw(&Text::new(c.clone(), (x - bx, y - by + (0.4 * f) as i32), up.clone())).map_err(err)?;
        }
    }
    let ah = area.dim_in_pixel().1;
    let centre = TextStyle::from(text.clone()).pos(Pos::new(HPos::Center, VPos::Bottom));
    let cx = (xr.start + xr.end) / 2 - bx;
    for (i, l) in x_lines.iter().rev().enumerate() {
        let y = ah as i32 - (i as f64 * line_h) as i32;
        area.draw(&Text::new(l.clone(), (cx, y), centre.clone())).map_err(err)?;
    }
    let up = TextStyle::from(text.clone().transform(FontTransform::Rotate270)).pos(Pos::new(HPos::Center, VPos::Top));
    let cy = (yr.start + yr.end) / 2 - by;
    for (i, l) in y_lines.iter().enumerate() {
        let x = (0.5 * f) as i32 + (i as f64 * line_h) as i32;
        area.draw(&Text::new(l.clone(), (x, cy), up.clone())).map_err(err)?;
    }
    let grey = RGBColor(120, 120, 120);
    let thin = g.pen.thin;
    for &(a, b) in &p.guides {
        chart.draw_series(dashes(a, b, 30).map(|d| PathElement::new(d, grey.stroke_width(thin)))).map_err(err)?;
    }
    for &x in &p.vlines {
        chart
            .draw_series(dashes((x, y0), (x, y1), 40).map(|d| PathElement::new(d, grey.stroke_width(thin))))
            .map_err(err)?;
    }
    for &(x, style) in &p.marks {
        let c = series_style(style).0;
        chart
            .draw_series(dashes((x, y0), (x, y1), 20).map(|d| PathElement::new(d, c.stroke_width(g.pen.line))))
            .map_err(err)?;
    }
    // Markers are drawn in pixels of `area` (plotters' dynamic elements need a 'static backend in
    // chart coordinates); the ringed ones of points that are not steady last, so that no other
    // series hides them.
    let mut ringed = Vec::new();
    for s in &p.series {
        let color = series_style(s.style).0;
        let data: Vec<(f64, f64)> = s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
        if s.line {
            // Segment by segment: a thick polyline is joined with mitres, which at a sharp turn
            // (a spike of lost packets between flat intervals) reach far outside the panel.
            let pen = color.stroke_width(g.pen.line);
            chart.draw_series(data.windows(2).map(|w| PathElement::new(vec![w[0], w[1]], pen))).map_err(err)?;
        }
        if s.bars {
            chart
                .draw_series(data.iter().map(|&(x, y)| Rectangle::new([(x - 0.35, y0), (x + 0.35, y)], color.filled())))
                .map_err(err)?;
        }
        if s.markers {
            let shown = s.points.iter().enumerate().filter(|(_, (x, y))| x.is_finite() && y.is_finite());
            for (i, q) in shown {
                let (px, py) = chart.backend_coord(q);
                if s.is_unsteady(i) {
                    ringed.push((s.style, (px - bx, py - by)));
                } else {
                    area.draw(&marker::<DB, (i32, i32)>(s.style, (px - bx, py - by), g.pen, false)).map_err(err)?;
                }
            }
        }
    }
    for (style, at) in ringed {
        area.draw(&marker::<DB, (i32, i32)>(style, at, g.pen, true)).map_err(err)?;
    }
    Ok(())
}

/// The legend strip: per entry, a line sample with the series' marker and its label, in columns;
/// with the note, a last entry showing the ring of points that are not steady.
fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, g: &Geometry) -> Result<()> {
    let l = &g.legend;
    let f = g.font;
    let style = TextStyle::from(g.text()).pos(Pos::new(HPos::Left, VPos::Center));
    let at = |k: usize| {
        let (x, row) = l.at[k];
        (x as i32, (0.3 * f) as i32 + (row * l.row_h + l.row_h / 2) as i32)
    };
    let sample = (2.6 * f) as i32;
    for (k, (label, style_i, markers)) in l.entries.iter().enumerate() {
        let (x, y) = at(k);
        let color = series_style(*style_i).0;
        area.draw(&PathElement::new(vec![(x, y), (x + sample, y)], color.stroke_width(g.pen.line))).map_err(err)?;
        if *markers {
            area.draw(&marker::<DB, (i32, i32)>(*style_i, (x + sample / 2, y), g.pen, false)).map_err(err)?;
        }
        area.draw(&Text::new(label.clone(), (x + sample + (0.6 * f) as i32, y), style.clone())).map_err(err)?;
    }
    if l.note {
        let (x, y) = at(l.entries.len());
        let grey = RGBColor(120, 120, 120);
        let r = g.pen.r;
        area.draw(&Circle::new((x + sample / 2, y), r + r * 3 / 4 + 1, BLACK.stroke_width(g.pen.line))).map_err(err)?;
        area.draw(&Circle::new((x + sample / 2, y), r, grey.stroke_width(g.pen.line))).map_err(err)?;
        area.draw(&Text::new(UNSTEADY_NOTE, (x + sample + (0.6 * f) as i32, y), style)).map_err(err)?;
    }
    Ok(())
}

/// Whether any point of `fig` is marked not steady (its legend then explains the mark).
pub fn has_unsteady(fig: &Fig) -> bool {
    fig.panels.iter().flat_map(|p| &p.series).any(|s| s.unsteady.iter().any(|&u| u))
}

/// `n` dashes (every other piece of `n * 2 - 1` equal pieces) along the segment from `a` to `b`.
pub(crate) fn dashes(a: (f64, f64), b: (f64, f64), n: usize) -> impl Iterator<Item = Vec<(f64, f64)>> {
    let k = (2 * n - 1) as f64;
    let at = move |t: f64| (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
    (0..n).map(move |i| vec![at(2.0 * i as f64 / k), at((2 * i + 1) as f64 / k)])
}

/// Tick label: at most three decimals, trailing zeros dropped; exponent notation for large values.
pub(crate) fn tick(v: &f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        return format!("{v:.1e}");
    }
    let s = format!("{v:.3}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// The output formats, by extension (what an error about `--output` allows).
pub const FORMATS: &str = "a file name ending in .svg, .png or .pdf";

/// The extension of `out`, lower case (`""` when it has none).
pub fn extension(out: &Path) -> String {
    out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default()
}

/// Draw `fig` into `out` (`.svg`, `.png` or `.pdf`) at the print size `size`: a PNG at
/// [`PNG_DPI`], an SVG or PDF sized in points (`size.width_pt` wide).
pub fn render(fig: &Fig, out: &Path, size: PrintSize) -> Result<()> {
    let ext = extension(out);
    if ext == "png" {
        let g = Geometry::new(fig, size, PNG_DPI / 72.0, TextScale::Bitmap)?;
        return draw_all(BitMapBackend::new(out, g.size()).into_drawing_area(), fig, &g);
    }
    if ext != "svg" && ext != "pdf" {
        return Err(ConfigError::value("--output", out.display(), FORMATS).into());
    }
    let g = Geometry::new(fig, size, VECTOR_PX_PER_PT, TextScale::Svg)?;
    let (w, h) = g.size();
    let mut svg = String::new();
    draw_all(SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area(), fig, &g)?;
    // The drawing's own units are pixels at VECTOR_PX_PER_PT per point: say the printed size, in
    // points for an SVG file, and unitless for svg2pdf, which makes one unit a point of the page
    // (it would read `pt` as CSS points and convert them to 4/3 as many of its units).
    let (pw, ph) = (w as f64 / VECTOR_PX_PER_PT, h as f64 / VECTOR_PX_PER_PT);
    let unit = if ext == "svg" { "pt" } else { "" };
    let printed = format!("width=\"{pw:.2}{unit}\" height=\"{ph:.2}{unit}\"");
    let svg = svg.replacen(&format!("width=\"{w}\" height=\"{h}\""), &printed, 1);
    let bytes = if ext == "pdf" { svg_to_pdf(&svg)? } else { svg.into_bytes() };
    std::fs::write(out, bytes).with_context(|| format!("writing {}", out.display()))
}

/// Convert the SVG plotters draws into a vector PDF, DejaVu Sans embedded (subset).
#[cfg(feature = "pdf")]
fn svg_to_pdf(svg: &str) -> Result<Vec<u8>> {
    use svg2pdf::usvg;
    let mut db = usvg::fontdb::Database::new();
    db.load_font_data(dejavu::sans::regular().to_vec());
    db.load_font_data(dejavu::sans::bold().to_vec());
    db.set_sans_serif_family("DejaVu Sans");
    let opts =
        usvg::Options { font_family: "DejaVu Sans".into(), fontdb: std::sync::Arc::new(db), ..Default::default() };
    let tree = usvg::Tree::from_str(svg, &opts).map_err(|e| anyhow!("reading the drawn SVG: {e}"))?;
    svg2pdf::to_pdf(&tree, svg2pdf::ConversionOptions::default(), svg2pdf::PageOptions::default())
        .map_err(|e| anyhow!("converting to PDF: {e}"))
}

/// Without the `pdf` feature there is no PDF output.
#[cfg(not(feature = "pdf"))]
fn svg_to_pdf(_svg: &str) -> Result<Vec<u8>> {
    bail!("this hxsim was built without the `pdf` feature: write .svg or .png")
}

/// The title (centred, one line per entry of `g.title_lines`), the panels side by side under it,
/// and the legend strip under them.
fn draw_all<'a, DB: DrawingBackend + 'a>(root: DrawingArea<DB, Shift>, fig: &Fig, g: &Geometry) -> Result<()> {
    root.fill(&WHITE).map_err(err)?;
    let (title, rest) = root.split_vertically(g.title_h);
    let (body, legend) = rest.split_vertically(g.panel.1);
    let style = TextStyle::from(g.title()).pos(Pos::new(HPos::Center, VPos::Top));
    let w = title.dim_in_pixel().0 as i32;
    for (i, line) in g.title_lines.iter().enumerate() {
        let y = (0.35 * g.title_font + i as f64 * 1.3 * g.title_font) as i32;
        title.draw(&Text::new(line.clone(), (w / 2, y), style.clone())).map_err(err)?;
    }
    let n = fig.panels.len().max(1);
    let areas = body.split_evenly((1, n));
    for (a, p) in areas.iter().zip(&fig.panels) {
        draw_panel(a, p, g)?;
    }
    draw_legend(&legend, g)?;
    root.present().map_err(err)?;
    Ok(())
}

/// A column of numbers (integers and booleans converted; strings give NaN).
fn read_f64(ds: &Dataset) -> Result<Vec<f64>> {
    match ds.dtype()?.to_descriptor()? {
        TypeDescriptor::Boolean => Ok(ds.read_raw::<bool>()?.into_iter().map(|b| b as u8 as f64).collect()),
        TypeDescriptor::VarLenUnicode | TypeDescriptor::VarLenAscii => Ok(vec![f64::NAN; ds.size()]),
        _ => Ok(ds.read_raw::<f64>()?),
    }
}

/// A column as text (numbers printed shortest).
fn read_text(ds: &Dataset) -> Result<Vec<String>> {
    match ds.dtype()?.to_descriptor()? {
        TypeDescriptor::VarLenUnicode => Ok(ds
            .read_raw::<VarLenUnicode>()?
            .iter()
            .map(|s| String::from_utf8_lossy(s.as_bytes()).into_owned())
            .collect()),
        TypeDescriptor::Boolean => Ok(ds.read_raw::<bool>()?.iter().map(|b| b.to_string()).collect()),
        TypeDescriptor::Integer(_) => Ok(ds.read_raw::<i64>()?.iter().map(|v| v.to_string()).collect()),
        TypeDescriptor::Unsigned(_) => Ok(ds.read_raw::<u64>()?.iter().map(|v| v.to_string()).collect()),
        _ => Ok(ds.read_raw::<f64>()?.iter().map(|v| format!("{v}")).collect()),
    }
}

/// Readable name of a routing algorithm, as the papers write it.
pub fn routing_label(name: &str) -> String {
    match name {
        "dor" => "DOR",
        "minimal" => "Minimal",
        "valiant" => "Valiant",
        "omniwar" => "OmniWAR",
        "polarized" => "Polarized",
        "surepath-omni" => "OmniSP",
        "surepath-polarized" => "PolSP",
        "dal" => "DAL",
        "sp" => "SP",
        "ecmp" => "ECMP",
        "allpath" => "AllPath",
        other => return other.to_string(),
    }
    .to_string()
}

/// Readable name of a traffic pattern.
pub fn pattern_label(name: &str) -> String {
    match name {
        "uniform" => "Uniform".to_string(),
        "random-server-permutation" => "Random server permutation".to_string(),
        "dimension-complement-reverse" => "Dimension Complement Reverse".to_string(),
        "regular-permutation-to-neighbour" => "Regular permutation to neighbour".to_string(),
        "bit-complement" => "Bit complement".to_string(),
        "bit-reverse" => "Bit reverse".to_string(),
        "transpose" => "Transpose".to_string(),
        "swap2" => "Swap2".to_string(),
        other => other.to_string(),
    }
}

/// Short name of a traffic pattern, for tick labels.
pub fn pattern_short(name: &str) -> String {
    match name {
        "random-server-permutation" => "RSP".to_string(),
        "dimension-complement-reverse" => "DCR".to_string(),
        "regular-permutation-to-neighbour" => "RPN".to_string(),
        "bit-complement" => "Bit compl.".to_string(),
        "bit-reverse" => "Bit rev.".to_string(),
        other => pattern_label(other),
    }
}

/// Readable name of a swept key, for axis labels.
fn key_label(key: &str) -> String {
    match key {
        "traffic.pattern" => "Traffic pattern".into(),
        "routing.algorithm" => "Routing".into(),
        other => other.to_string(),
    }
}

/// Legend text of one swept value: routing names as in the papers, other keys as `name=value`.
fn value_label(key: &str, value: &str) -> String {
    match key {
        "routing.algorithm" => routing_label(value),
        "traffic.pattern" => pattern_label(value),
        _ => format!("{}={value}", key.rsplit('.').next().unwrap_or(key)),
    }
}

/// The rows of a sweep table, read once.
struct Table {
    swept: Vec<String>,
    text: Vec<(String, Vec<String>)>,
    group: Vec<String>,
    rows: usize,
    table: Group,
}

impl Table {
    fn read(table: Group) -> Result<Self> {
        let swept = h5::str_list_attr(&table, "swept_keys")?;
        let text: Vec<(String, Vec<String>)> =
            swept.iter().map(|k| Ok((k.clone(), read_text(&table.dataset(k)?)?))).collect::<Result<_>>()?;
        let group = table.dataset("group").map(|d| read_text(&d).unwrap_or_default()).unwrap_or_default();
        let rows = table.dataset("point")?.size();
        Ok(Table { swept, text, group, rows, table })
    }

    fn col(&self, name: &str) -> Result<Vec<f64>> {
        read_f64(&self.table.dataset(name).with_context(|| format!("sweep table column {name}"))?)
    }

    fn has(&self, name: &str) -> bool {
        self.table.dataset(name).is_ok()
    }

    fn values(&self, key: &str) -> Option<&Vec<String>> {
        self.text.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Keys that take more than one value among `rows`.
    fn varying(&self, rows: &[usize]) -> Vec<String> {
        self.text.iter().filter(|(_, v)| rows.iter().any(|&r| v[r] != v[rows[0]])).map(|(k, _)| k.clone()).collect()
    }
}

/// Group `rows` by the text of `keys`, in order of first appearance: (label, rows).
fn group_rows(t: &Table, rows: &[usize], keys: &[String]) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for &r in rows {
        let label = keys
            .iter()
            .map(|k| value_label(k, &t.values(k).map(|v| v[r].clone()).unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", ");
        match out.iter_mut().find(|(l, _)| *l == label) {
            Some((_, v)) => v.push(r),
            None => out.push((label, vec![r])),
        }
    }
    out
}

/// Title of a figure: the network, and the pattern when all rows share one.
fn title_for(f: &File, t: &Table, rows: &[usize]) -> String {
    let config = rows
        .iter()
        .find_map(|&r| t.group.get(r).filter(|g| !g.is_empty()).and_then(|g| f.group(g).ok()))
        .and_then(|g| h5::str_attr(&g, "config").ok())
        .or_else(|| h5::str_attr(f, "config").ok())
        .unwrap_or_default();
    let net = crate::output::facts::from_toml(&config).label;
    let pattern = match t.values("traffic.pattern") {
        Some(v) if rows.iter().all(|&r| v[r] == v[rows[0]]) => Some(v[rows[0]].clone()),
        Some(_) => None,
        None => config
            .parse::<toml::Table>()
            .ok()
            .and_then(|c| c.get("traffic")?.get("pattern")?.as_str().map(str::to_string))
            .or(Some("uniform".into())),
    };
    let mut parts: Vec<String> = Vec::new();
    if !net.is_empty() {
        parts.push(net);
    }
    if config.parse::<toml::Table>().ok().is_some_and(|c| c.contains_key("workload")) {
        // A workload sweep: the kernel is in the figure's suffix (one figure per kernel) or in
        // the fixed settings.
        return parts.join(" \u{2014} ");
    }
    if let Some(p) = pattern {
        parts.push(format!("{} traffic", pattern_label(&p)));
    }
    parts.join(" \u{2014} ")
}

/// "workload KERNEL" (or the GOAL file's name) of a config with `[workload]`.
fn workload_label(config: Option<&toml::Table>) -> Option<String> {
    let w = config?.get("workload")?;
    let kernel = w.get("kernel").and_then(|k| k.as_str()).unwrap_or("allreduce-ring");
    if kernel == "goal" {
        let file = w.get("file").and_then(|f| f.as_str()).unwrap_or("");
        let name = Path::new(file).file_name().map_or(file.to_string(), |n| n.to_string_lossy().into_owned());
        return Some(format!("GOAL schedule {name}"));
    }
    Some(format!("workload {kernel}"))
}

/// Whether a swept key with one value is worth a figure's title: what was simulated (routing,
/// router, traffic, faults...), not how long (`simulation.*`) or what was written (`output.*`); the
/// network (`topology.*`), the offered load and the pattern have their own place in it.
fn titled_key(key: &str) -> bool {
    let own_place = ["traffic.load", "traffic.pattern"].contains(&key) || key.starts_with("topology.");
    !(own_place || key.starts_with("simulation.") || key.starts_with("output."))
}

/// The settings a sweep fixed with a one-value `--set` (e.g. `router.injection_throttle=window`),
/// as legend-style labels: they are what tells two figures of different sweeps apart when their
/// network and pattern are the same.
fn fixed_settings(t: &Table) -> Vec<String> {
    t.text
        .iter()
        .filter(|(k, v)| titled_key(k) && v.windows(2).all(|w| w[0] == w[1]))
        .filter_map(|(k, v)| v.first().map(|first| value_label(k, first)))
        .collect()
}

/// The figures of a sweep: one per value of `by` (default: the traffic pattern when it varies along
/// with the load),
/// each with a name suffix (empty for a single figure).
pub fn sweep_figures(f: &File, figure: Figure, by: Option<&str>) -> Result<Vec<(String, Fig)>> {
    let t = Table::read(f.group("sweep")?)?;
    let all: Vec<usize> = (0..t.rows).collect();
    let by_key = match by {
        Some(k) if t.values(k).is_some() => Some(k.to_string()),
        Some(k) => {
            return Err(ConfigError::value("--by", k, format!("one of the swept keys: {}", t.swept.join(", "))).into())
        }
        // Workloads: one figure per kernel (execution times compare within a kernel).
        None if t.varying(&all).iter().any(|k| k == "workload.kernel") => Some("workload.kernel".to_string()),
        // One figure per pattern when curves run along the load; a point chart shows the patterns
        // side by side instead.
        None if t.varying(&all).iter().any(|k| k == "traffic.load") => {
            t.varying(&all).into_iter().find(|k| k == "traffic.pattern")
        }
        None => None,
    };
    let groups = match &by_key {
        Some(k) => {
            let v = t.values(k).expect("checked above");
            let mut out: Vec<(String, Vec<usize>)> = Vec::new();
            for (r, value) in v.iter().enumerate() {
                match out.iter_mut().find(|(l, _)| l == value) {
                    Some((_, rows)) => rows.push(r),
                    None => out.push((value.clone(), vec![r])),
                }
            }
            out
        }
        None => vec![(String::new(), all)],
    };
    let single = groups.len() == 1;
    let fixed = fixed_settings(&t);
    let mut figs = Vec::new();
    for (value, rows) in groups {
        let mut fig = sweep_figure(f, &t, &rows, figure, by_key.as_deref())?;
        if !fixed.is_empty() {
            fig.title = format!("{} \u{2014} {}", fig.title, fixed.join(", "));
        }
        if let Some(k) = by_key.as_deref().filter(|k| *k != "traffic.pattern") {
            fig.title = format!("{} \u{2014} {}", fig.title, value_label(k, &value));
        }
        figs.push((if single { String::new() } else { value }, fig));
    }
    Ok(figs)
}

fn sweep_figure(f: &File, t: &Table, rows: &[usize], figure: Figure, by: Option<&str>) -> Result<Fig> {
    let title = title_for(f, t, rows);
    let varying: Vec<String> = t.varying(rows).into_iter().filter(|k| Some(k.as_str()) != by).collect();
    let has_load = varying.iter().any(|k| k == "traffic.load");
    let workload = t.has("makespan_cycles") && t.col("makespan_cycles")?.iter().any(|v| v.is_finite());
    if workload && matches!(figure, Figure::All) {
        return workload_figure(f, t, rows, &varying, title);
    }
    let fixed = t.has("completion_cycles") && t.col("completion_cycles")?.iter().any(|v| v.is_finite());
    if fixed && !has_load && matches!(figure, Figure::All) {
        return completion_figure(f, t, rows, &varying, title);
    }
    // Series: each combination of the varying keys other than the load (routing first).
    let mut series_keys: Vec<String> = varying.iter().filter(|k| *k != "traffic.load").cloned().collect();
    series_keys.sort_by_key(|k| k != "routing.algorithm");
    let metrics = [
        ("accepted_load", "Throughput", "Accepted load (phits/cycle/server)", true),
        ("average_latency", "Latency", "Average latency (cycles)", true),
        ("jain_index", "Fairness", "Jain's index of injected load", false),
    ];
    let chosen: Vec<_> = match figure {
        Figure::All => metrics.to_vec(),
        Figure::Throughput => vec![metrics[0]],
        Figure::Latency => vec![metrics[1]],
        Figure::Jain => vec![metrics[2]],
        Figure::Timeseries => bail!("a sweep has no single time series: choose a point with --point N"),
    };
    let mut panels = Vec::new();
    let legend;
    if has_load {
        let x = t.col("traffic.load")?;
        let steady = if t.has("steady_state") { Some(t.col("steady_state")?) } else { None };
        let series = group_rows(t, rows, &series_keys);
        legend = series.iter().enumerate().map(|(i, (l, _))| (l.clone(), i, true)).collect();
        let (xmin, xmax) = rows
            .iter()
            .map(|&r| x[r])
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
        for (col, name, ydesc, zero) in chosen {
            let y = t.col(col)?;
            let s = series
                .iter()
                .enumerate()
                .map(|(i, (label, rs))| Series::sweep(label, i, rs, &x, &y, steady.as_deref()))
                .collect();
            panels.push(Panel {
                title: name.into(),
                x_desc: "Offered load (phits/cycle/server)".into(),
                y_desc: ydesc.into(),
                series: s,
                guides: if col == "accepted_load" && xmin.is_finite() {
                    vec![((xmin, xmin), (xmax, xmax))]
                } else {
                    vec![]
                },
                y_from_zero: zero,
                ..Default::default()
            });
        }
    } else {
        // A point chart: the series key (routing when swept) as markers, the other keys as columns.
        let (series_key, cat_keys) = match series_keys.split_first() {
            Some((s, rest)) => (vec![s.clone()], rest.to_vec()),
            None => (vec![], vec![]),
        };
        let series = group_rows(t, rows, &series_key);
        let cats = group_rows(t, rows, &cat_keys);
        let cat_label = |r: usize| {
            cat_keys
                .iter()
                .map(|k| {
                    let v = t.values(k).map(|v| v[r].clone()).unwrap_or_default();
                    if k == "traffic.pattern" {
                        pattern_short(&v)
                    } else {
                        value_label(k, &v)
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let n = series.len().max(1) as f64;
        let steady = if t.has("steady_state") { Some(t.col("steady_state")?) } else { None };
        legend = series
            .iter()
            .enumerate()
            .map(|(i, (l, _))| (if l.is_empty() { "all points".into() } else { l.clone() }, i, true))
            .collect();
        for (col, name, ydesc, zero) in chosen {
            let y = t.col(col)?;
            let s = series
                .iter()
                .enumerate()
                .map(|(i, (label, rs))| {
                    let off = if n > 1.0 { (i as f64 - (n - 1.0) / 2.0) * 0.5 / n } else { 0.0 };
                    let points = rs
                        .iter()
                        .map(|&r| {
                            let c = cats.iter().position(|(_, cr)| cr.contains(&r)).unwrap_or(0);
                            (c as f64 + off, y[r])
                        })
                        .collect();
                    let unsteady = rs.iter().map(|&r| steady.as_ref().is_some_and(|s| s[r] == 0.0)).collect();
                    Series { label: label.clone(), points, markers: true, line: false, style: i, unsteady, bars: false }
                })
                .collect();
            panels.push(Panel {
                title: name.into(),
                x_desc: cat_keys.iter().map(|k| key_label(k)).collect::<Vec<_>>().join(", "),
                y_desc: ydesc.into(),
                series: s,
                y_from_zero: zero,
                categories: cats
                    .iter()
                    .map(|(l, rs)| if l.is_empty() { "all".into() } else { cat_label(rs[0]) })
                    .collect(),
                ..Default::default()
            });
        }
    }
    Ok(Fig { title, panels, legend })
}

/// SurePath Fig. 10 for fixed workloads: accepted load over time per series with each series'
/// completion time marked, and the completion times side by side.
fn completion_figure(f: &File, t: &Table, rows: &[usize], varying: &[String], title: String) -> Result<Fig> {
    let mut keys = varying.to_vec();
    keys.sort_by_key(|k| k != "routing.algorithm");
    let series = group_rows(t, rows, &keys);
    let completion = t.col("completion_cycles")?;
    let mut curves = Vec::new();
    let mut marks = Vec::new();
    let mut bars = Vec::new();
    for (i, (label, rs)) in series.iter().enumerate() {
        let r = rs[0];
        if let Some(g) = t.group.get(r).filter(|g| !g.is_empty()).and_then(|g| f.group(g).ok()) {
            if let Ok(ts) = g.group("timeseries") {
                let cycle = read_f64(&ts.dataset("cycle")?)?;
                let acc = read_f64(&ts.dataset("accepted_load")?)?;
                curves.push(Series {
                    label: label.clone(),
                    points: cycle.into_iter().zip(acc).collect(),
                    markers: false,
                    line: true,
                    style: i,
                    unsteady: Vec::new(),
                    bars: false,
                });
            }
        }
        if completion[r].is_finite() {
            marks.push((completion[r], i));
        }
        bars.push(Series {
            label: label.clone(),
            points: vec![(i as f64, completion[r])],
            markers: true,
            line: false,
            style: i,
            unsteady: Vec::new(),
            bars: false,
        });
    }
    let mut panels = Vec::new();
    if !curves.is_empty() {
        panels.push(Panel {
            title: "Accepted load over time".into(),
            x_desc: "Cycle (dashed: completion time)".into(),
            y_desc: "Accepted load (phits/cycle/server)".into(),
            series: curves,
            marks,
            y_from_zero: true,
            ..Default::default()
        });
    }
    panels.push(Panel {
        title: "Completion time".into(),
        x_desc: String::new(),
        y_desc: "Cycles to deliver the workload".into(),
        series: bars,
        y_from_zero: true,
        categories: series.iter().map(|(l, _)| l.clone()).collect(),
        ..Default::default()
    });
    let legend = series.iter().enumerate().map(|(i, (l, _))| (l.clone(), i, true)).collect();
    Ok(Fig { title, panels, legend })
}

/// The workload figure of a sweep: the execution time (makespan) of each series as bars, and each
/// series' per-task finish times as a cumulative distribution (from its point's `/tasks`).
fn workload_figure(f: &File, t: &Table, rows: &[usize], varying: &[String], title: String) -> Result<Fig> {
    let mut keys = varying.to_vec();
    keys.sort_by_key(|k| k != "routing.algorithm");
    let series = group_rows(t, rows, &keys);
    let makespan = t.col("makespan_cycles")?;
    let mut bars = Vec::new();
    let mut cdfs = Vec::new();
    for (i, (label, rs)) in series.iter().enumerate() {
        let r = rs[0];
        bars.push(Series {
            label: label.clone(),
            points: vec![(i as f64, makespan[r])],
            style: i,
            bars: true,
            ..Default::default()
        });
        if let Some(g) = t.group.get(r).filter(|g| !g.is_empty()).and_then(|g| f.group(g).ok()) {
            if let Some(points) = finish_cdf(&g)? {
                cdfs.push(Series { label: label.clone(), points, line: true, style: i, ..Default::default() });
            }
        }
    }
    let mut panels = vec![Panel {
        title: "Execution time".into(),
        x_desc: String::new(),
        y_desc: "Cycles until the last task finished".into(),
        series: bars,
        y_from_zero: true,
        categories: series.iter().map(|(l, _)| l.clone()).collect(),
        ..Default::default()
    }];
    if !cdfs.is_empty() {
        panels.push(finish_cdf_panel(cdfs));
    }
    let legend = series.iter().enumerate().map(|(i, (l, _))| (l.clone(), i, false)).collect();
    Ok(Fig { title, panels, legend })
}

/// The per-task finish-time distribution of a run group with `/tasks` (finished tasks only):
/// points `(cycle, fraction of tasks finished by it)`, or `None` without `/tasks`.
fn finish_cdf(run: &Group) -> Result<Option<Vec<(f64, f64)>>> {
    let Ok(tasks) = run.group("tasks") else { return Ok(None) };
    let finish = read_f64(&tasks.dataset("finish_cycles")?)?;
    let done = read_f64(&tasks.dataset("finished")?)?;
    let n = finish.len().max(1) as f64;
    let mut c: Vec<f64> = finish.iter().zip(&done).filter(|(_, &d)| d != 0.0).map(|(&x, _)| x).collect();
    c.sort_by(f64::total_cmp);
    // A step per distinct finish cycle (a million tasks finish at far fewer distinct cycles).
    // From 0 at the first finish, so that tasks finishing together draw a vertical step.
    let mut pts: Vec<(f64, f64)> = c.first().map(|&x| vec![(x, 0.0)]).unwrap_or_default();
    for (k, &x) in c.iter().enumerate() {
        let y = (k + 1) as f64 / n;
        match pts.last_mut() {
            Some(last) if last.0 == x && last.1 > 0.0 => last.1 = y,
            _ => pts.push((x, y)),
        }
    }
    Ok(Some(pts))
}

fn finish_cdf_panel(series: Vec<Series>) -> Panel {
    Panel {
        title: "Task finish times".into(),
        x_desc: "Cycle".into(),
        y_desc: "Fraction of tasks finished".into(),
        series,
        y_from_zero: true,
        ..Default::default()
    }
}

/// Style of the dashed lines marking failure events on a time-series figure.
const EVENT_STYLE: usize = 6;
/// Styles of the link classes' loads (`output.link_series`), in class order: those no other
/// curve of the time-series figure takes first.
const LINK_STYLES: [usize; 8] = [9, 10, 11, 7, 2, 5, 4, 0];
/// Style of the minimal share (`output.link_series`).
const MINIMAL_STYLE: usize = 8;

/// The time-series figure of a run (a file's root, or a sweep point's group).
pub fn timeseries_figure(run: &Group) -> Result<Fig> {
    let ts = run.group("timeseries").context("this run has no /timeseries")?;
    let col = |n: &str| -> Result<Vec<f64>> { read_f64(&ts.dataset(n).with_context(|| format!("timeseries/{n}"))?) };
    let cycle = col("cycle")?;
    let zip = |y: Vec<f64>| -> Vec<(f64, f64)> { cycle.iter().copied().zip(y).collect() };
    let config = h5::str_attr(run, "config").unwrap_or_default();
    let mut vlines = Vec::new();
    let mut fixed = false;
    let mut events = Vec::new();
    if let Ok(cfg) = crate::config::parse_str(&config, "the file's config", &[]) {
        let s = cfg.schedule();
        if s.fixed {
            fixed = true;
        } else {
            vlines = vec![s.warmup as f64, (s.warmup + s.measure) as f64];
        }
        if let Ok(cfg) = crate::sim::events::expand_lifetime(&cfg) {
            events = cfg.faults.events.iter().map(|e| e.cycle as f64).collect();
        }
    }
    let mut marks: Vec<(f64, usize)> = events.iter().map(|&c| (c, EVENT_STYLE)).collect();
    if fixed {
        if let Ok(c) = run.dataset("summary/completion_cycles").and_then(|d| d.read_scalar::<f64>()) {
            marks.push((c, 1));
        }
    }
    let xd = if !events.is_empty() {
        "Cycle (events dashed)"
    } else if !vlines.is_empty() {
        "Cycle (measurement window dotted)"
    } else if !marks.is_empty() {
        "Cycle (dashed: completion time)"
    } else {
        "Cycle"
    }
    .to_string();
    let net = crate::output::facts::from_toml(&config).label;
    let pattern = config
        .parse::<toml::Table>()
        .ok()
        .and_then(|c| c.get("traffic")?.get("pattern")?.as_str().map(str::to_string))
        .unwrap_or_else(|| "uniform".into());
    let routing = config
        .parse::<toml::Table>()
        .ok()
        .and_then(|c| c.get("routing")?.get("algorithm")?.as_str().map(str::to_string))
        .unwrap_or_else(|| "minimal".into());
    // What was simulated: the offered load (or the fixed workload) and, for a sweep point, the
    // other values its point took (`swept`, e.g. `traffic.load=0.50 routing.algorithm=minimal`).
    let table = config.parse::<toml::Table>().ok();
    let traffic = table.as_ref().and_then(|c| c.get("traffic"));
    let load = if fixed {
        match traffic.and_then(|t| t.get("workload_phits")) {
            Some(phits) => format!("fixed workload of {phits} phits per server"),
            None => "fixed workload".into(),
        }
    } else {
        let load = traffic.and_then(|t| t.get("load")).and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)));
        load.map(|l| format!("offered load {}", tick(&l))).unwrap_or_default()
    };
    let swept = h5::str_attr(run, "swept").unwrap_or_default();
    let others = swept
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        // The routing, the mode and the workload are in the title already.
        .filter(|(k, _)| titled_key(k) && !["routing.algorithm", "traffic.mode", "traffic.workload_phits"].contains(k))
        .map(|(k, v)| value_label(k, v));
    let (traffic_part, load) = match workload_label(table.as_ref()) {
        Some(w) => (w, String::new()),
        None => (format!("{} traffic", pattern_label(&pattern)), load),
    };
    let title = [net, traffic_part, routing_label(&routing), load]
        .into_iter()
        .chain(others)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" \u{2014} ");
    let line = |label: &str, points, style| Series {
        label: label.into(),
        points,
        markers: false,
        line: true,
        style,
        unsteady: Vec::new(),
        bars: false,
    };
    let panels = vec![
        Panel {
            title: "Load".into(),
            x_desc: xd.clone(),
            y_desc: "Load (phits/cycle/server)".into(),
            series: vec![
                line("injected", zip(col("injected_load")?), 0),
                line("accepted", zip(col("accepted_load")?), 1),
            ],
            vlines: vlines.clone(),
            marks: marks.clone(),
            y_from_zero: true,
            ..Default::default()
        },
        Panel {
            title: "Latency".into(),
            x_desc: xd.clone(),
            y_desc: "Mean latency of delivered packets (cycles)".into(),
            series: vec![line("mean latency", zip(col("mean_latency")?), 2)],
            vlines: vlines.clone(),
            marks: marks.clone(),
            y_from_zero: true,
            ..Default::default()
        },
        Panel {
            title: "Packets in flight".into(),
            x_desc: xd.clone(),
            y_desc: "Packets in the network".into(),
            series: vec![line("in flight", zip(col("in_flight")?), 4)],
            vlines: vlines.clone(),
            marks: marks.clone(),
            y_from_zero: true,
            ..Default::default()
        },
    ];
    let mut legend = vec![
        ("injected load".into(), 0, false),
        ("accepted load".into(), 1, false),
        ("mean latency".into(), 2, false),
        ("packets in flight".into(), 4, false),
    ];
    let mut panels = panels;
    // `output.link_series`: the load of each class of link and the share of minimal paths, one
    // panel (both are fractions), where a dip is explained.
    if let (Ok(load), Ok(names)) = (ts.dataset("link_load"), ts.dataset("link_class_name")) {
        let names = read_text(&names)?;
        let classes = names.len();
        let values = read_f64(&load)?;
        let mut series: Vec<Series> = names
            .iter()
            .enumerate()
            .map(|(c, name)| {
                let y: Vec<f64> = values.iter().skip(c).step_by(classes.max(1)).copied().collect();
                line(&format!("{name} link load"), zip(y), LINK_STYLES[c % LINK_STYLES.len()])
            })
            .collect();
        series.push(line("minimal share", zip(col("minimal_share")?), MINIMAL_STYLE));
        for s in &series {
            legend.push((s.label.clone(), s.style, false));
        }
        panels.push(Panel {
            title: "Links by class".into(),
            x_desc: xd.clone(),
            y_desc: "Link load (phits/cycle/port), minimal share".into(),
            series,
            vlines: vlines.clone(),
            marks: marks.clone(),
            y_from_zero: true,
            ..Default::default()
        });
    }
    // Failure events: what they lost, and the events marked on every panel.
    if !events.is_empty() && ts.dataset("lost_packets").is_ok() {
        panels.push(Panel {
            title: "Packets lost".into(),
            x_desc: xd,
            y_desc: "Packets lost or stranded per interval".into(),
            series: vec![line("lost", zip(col("lost_packets")?), 3)],
            vlines,
            marks,
            y_from_zero: true,
            ..Default::default()
        });
        legend.push(("packets lost".into(), 3, false));
        legend.push(("failure event (dashed)".into(), EVENT_STYLE, false));
    }
    // A workload's run: its tasks' finish times too.
    if let Some(points) = finish_cdf(run)? {
        panels.push(finish_cdf_panel(vec![Series {
            label: "tasks".into(),
            points,
            line: true,
            style: 5,
            ..Default::default()
        }]));
        legend.push(("fraction of tasks finished".into(), 5, false));
    }
    Ok(Fig { title, panels, legend })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twelve_distinct_styles() {
        let styles: Vec<_> = (0..12).map(series_style).collect();
        for i in 0..12 {
            for j in 0..i {
                assert!(styles[i].0 != styles[j].0, "colours {i} {j}");
                assert!((styles[i].1, styles[i].2) != (styles[j].1, styles[j].2), "markers {i} {j}");
            }
        }
    }

    /// The sweep series builder carries each row's `steady_state` to its point, through the sort
    /// by offered load, and a figure with such a point gets the legend note.
    #[test]
    fn sweep_series_flags_unsteady_points() {
        let x = [0.9, 0.1, 0.5, 0.7];
        let y = [0.6, 0.1, 0.5, 0.65];
        let steady = [0.0, 1.0, 1.0, 0.0];
        let s = Series::sweep("a", 0, &[0, 1, 2, 3], &x, &y, Some(&steady));
        assert_eq!(s.points, vec![(0.1, 0.1), (0.5, 0.5), (0.7, 0.65), (0.9, 0.6)]);
        assert_eq!(s.unsteady, vec![false, false, true, true]);
        let fig = |s: Series| Fig {
            title: String::new(),
            panels: vec![Panel { series: vec![s], ..Default::default() }],
            legend: vec![("a".into(), 0, true)],
        };
        assert!(has_unsteady(&fig(s)));
        // Without the column (a file from before it), every point counts as steady.
        let s = Series::sweep("a", 0, &[0, 1, 2, 3], &x, &y, None);
        assert_eq!(s.unsteady, vec![false; 4]);
        assert!(!has_unsteady(&fig(s)));
        // The ring's note gets a legend entry of its own; a lone unlabelled series none.
        let lone = |s: Series| Fig { legend: vec![(String::new(), 0, true)], ..fig(s) };
        let g = |f: &Fig| Geometry::new(f, PrintSize::default(), 1.0, TextScale::Svg).unwrap();
        let unsteady = Series::sweep("", 0, &[0, 1, 2, 3], &x, &y, Some(&steady));
        let steady_only = Series::sweep("", 0, &[0, 1, 2, 3], &x, &y, None);
        assert_eq!(g(&lone(steady_only)).legend.h, 0);
        let l = g(&lone(unsteady)).legend;
        assert!(l.h > 0 && l.entries.is_empty() && l.note);
    }

    /// Lengths in every unit `--width` takes, converted to points (1 in = 72 pt = 2.54 cm); bad
    /// values refused with the flag, the value and what is allowed.
    #[test]
    fn print_sizes_parse_in_points() {
        let p = |w: &str, f: &str| PrintSize::parse(w, f);
        assert_eq!(p("7in", "9pt").unwrap(), PrintSize::default());
        assert_eq!(p(" 3.5in", "8").unwrap(), PrintSize { width_pt: 252.0, font_pt: 8.0 });
        assert!((p("17.78cm", "9pt").unwrap().width_pt - 504.0).abs() < 1e-9);
        assert!((p("177.8mm", "9pt").unwrap().width_pt - 504.0).abs() < 1e-9);
        assert_eq!(p("504pt", "10.5pt").unwrap().font_pt, 10.5);
        for (w, f, key) in [
            ("7", "9pt", "--width"),
            ("7ft", "9pt", "--width"),
            ("-7in", "9pt", "--width"),
            ("0.5in", "9pt", "--width"),
            ("7in", "9in", "--font"),
            ("7in", "2pt", "--font"),
            ("7in", "NaNpt", "--font"),
        ] {
            let e = p(w, f).unwrap_err().to_string();
            assert!(e.contains(key) && e.contains(if key == "--width" { w } else { f }), "{e}");
        }
    }

    /// A long title breaks between its parts, each line within the width.
    #[test]
    fn titles_wrap_between_parts() {
        register_fonts().unwrap();
        let font = FontDesc::new(FontFamily::Name(FONT), 12.0, FontStyle::Bold);
        let title = "HyperX 16x16, 16 servers/switch \u{2014} Dimension Complement Reverse traffic \u{2014} injection_throttle=window";
        let one = wrap_title(title, &font, 10_000);
        assert_eq!(one, vec![title.to_string()]);
        let width = text_w(title, &font) * 2 / 3;
        let lines = wrap_title(title, &font, width);
        assert_eq!(lines.join(" \u{2014} "), title);
        assert!(lines.len() == 2 && lines.iter().all(|l| text_w(l, &font) <= width), "{lines:?}");
        assert!(lines.iter().all(|l| !l.ends_with('\u{2014}') && !l.starts_with('\u{2014}')));
    }

    #[test]
    fn labels() {
        assert_eq!(routing_label("surepath-polarized"), "PolSP");
        assert_eq!(routing_label("surepath-omni"), "OmniSP");
        assert_eq!(value_label("routing.vcs", "4"), "vcs=4");
    }
}
