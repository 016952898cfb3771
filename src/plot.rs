//! `hxsim plot`: the standard figures from a results file, as SVG or PNG (by the output's extension).
//!
//! - A sweep file: accepted load, average latency and Jain's index against offered load, one curve
//!   per series (each combination of the swept values other than `traffic.load`).
//! - A run file (or one point of a sweep, `--point N`): the time series (injected and accepted load,
//!   mean latency, packets in flight against cycles), with the measurement window marked.
//!
//! Text is drawn with DejaVu Sans, built into the binary, so PNGs need no system fonts. Sizes are
//! chosen so that a three-panel figure printed at text width keeps its labels above 7 pt.

use crate::config::ConfigError;
use crate::output::hdf5 as h5;
use ::hdf5::types::{TypeDescriptor, VarLenUnicode};
use ::hdf5::{Dataset, Group};
use anyhow::{anyhow, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// Which figure to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Figure {
    /// Sweep: throughput, latency and Jain's index side by side; run: the time series.
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

/// Pixel size of one panel.
pub const PANEL: (u32, u32) = (640, 540);
pub(crate) const FONT: &str = "sans-serif";
pub(crate) const TITLE_PX: u32 = 30;
pub(crate) const DESC_PX: u32 = 28;
pub(crate) const LABEL_PX: u32 = 24;
pub(crate) const LEGEND_PX: u32 = 24;

/// Tableau 10 colours, distinguishable in print and by most colour-blind readers.
pub(crate) const PALETTE: [RGBColor; 10] = [
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
];

/// One curve.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Points in drawing order (NaNs are skipped).
    pub points: Vec<(f64, f64)>,
    /// Draw markers at the points (sweeps) or a plain line (time series).
    pub markers: bool,
}

/// One panel: axes, curves, and vertical reference lines.
#[derive(Debug, Clone)]
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
    /// Vertical dotted lines at these x values (e.g. the measurement window).
    pub vlines: Vec<f64>,
    /// Start the y axis at 0.
    pub y_from_zero: bool,
    /// Points circled in black: sweep points whose measured window was not steady.
    pub unsteady: Vec<(f64, f64)>,
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

fn draw_panel<'a, DB: DrawingBackend + 'a>(area: &DrawingArea<DB, Shift>, p: &Panel) -> Result<()> {
    let pts = || p.series.iter().flat_map(|s| s.points.iter().copied()).filter(|(x, y)| x.is_finite() && y.is_finite());
    let (x0, x1) = range_of(pts().map(|q| q.0).chain(p.vlines.iter().copied()), false);
    let guide_ys = p.guides.iter().flat_map(|g| [g.0 .1, g.1 .1]);
    let (y0, y1) = range_of(pts().map(|q| q.1).chain(guide_ys), p.y_from_zero);
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, (FONT, TITLE_PX).into_font().style(FontStyle::Bold))
        .margin(16)
        .x_label_area_size(72)
        .y_label_area_size(96)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(p.x_desc.as_str())
        .y_desc(p.y_desc.as_str())
        .axis_desc_style((FONT, DESC_PX))
        .label_style((FONT, LABEL_PX))
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .bold_line_style(RGBColor(225, 225, 225))
        .light_line_style(WHITE)
        .axis_style(BLACK.stroke_width(2))
        .draw()
        .map_err(err)?;
    let grey = RGBColor(120, 120, 120);
    for &(a, b) in &p.guides {
        chart.draw_series(dashes(a, b, 30).map(|d| PathElement::new(d, grey.stroke_width(2)))).map_err(err)?;
    }
    for &x in &p.vlines {
        chart
            .draw_series(dashes((x, y0), (x, y1), 40).map(|d| PathElement::new(d, grey.stroke_width(2))))
            .map_err(err)?;
    }
    let legend = p.series.len() > 1 || p.series.iter().any(|s| !s.label.is_empty());
    for (i, s) in p.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let (style, filled) = (color.stroke_width(3), color.filled());
        let data: Vec<(f64, f64)> = s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
        let line = chart.draw_series(LineSeries::new(data.clone(), style)).map_err(err)?;
        let stroke = move |c: (i32, i32)| EmptyElement::at(c) + PathElement::new(vec![(0, 0), (32, 0)], style);
        // Marker shapes cycle circle, triangle, square, cross, in the plot and in the legend.
        if legend {
            line.label(s.label.clone());
            match (s.markers, i % 4) {
                (false, _) => line.legend(stroke),
                (true, 0) => line.legend(move |c| stroke(c) + Circle::new((16, 0), 6, filled)),
                (true, 1) => line.legend(move |c| stroke(c) + TriangleMarker::new((16, 0), 7, filled)),
                (true, 2) => line.legend(move |c| stroke(c) + Rectangle::new([(11, -5), (21, 5)], filled)),
                (true, _) => line.legend(move |c| stroke(c) + Cross::new((16, 0), 6, style)),
            };
        }
        if s.markers {
            let pts = data.iter().copied();
            match i % 4 {
                0 => chart.draw_series(pts.map(|q| Circle::new(q, 6, filled))).map(|_| ()),
                1 => chart.draw_series(pts.map(|q| TriangleMarker::new(q, 7, filled))).map(|_| ()),
                2 => chart
                    .draw_series(pts.map(|q| EmptyElement::at(q) + Rectangle::new([(-5, -5), (5, 5)], filled)))
                    .map(|_| ()),
                _ => chart.draw_series(pts.map(|q| Cross::new(q, 6, style))).map(|_| ()),
            }
            .map_err(err)?;
        }
    }
    let ring = BLACK.stroke_width(2);
    let marks = p.unsteady.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite());
    let circled = chart.draw_series(marks.map(|q| Circle::new(q, 11, ring))).map_err(err)?;
    if legend && !p.unsteady.is_empty() {
        circled.label("window not steady").legend(move |c| Circle::new((c.0 + 16, c.1), 9, ring));
    }
    if legend {
        chart
            .configure_series_labels()
            .position(legend_corner(p, (x0, x1), (y0, y1)))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .label_font((FONT, LEGEND_PX))
            .margin(12)
            .legend_area_size(44)
            .draw()
            .map_err(err)?;
    }
    Ok(())
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

/// The corner of the plot with the fewest data points in it, for the legend.
fn legend_corner(p: &Panel, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> SeriesLabelPosition {
    let (w, h) = (x1 - x0, y1 - y0);
    let corners = [
        (SeriesLabelPosition::UpperLeft, false, true),
        (SeriesLabelPosition::UpperRight, true, true),
        (SeriesLabelPosition::LowerRight, true, false),
        (SeriesLabelPosition::LowerLeft, false, false),
    ];
    let count = |right: bool, upper: bool| {
        p.series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|(x, y)| {
                let fx = (x - x0) / w;
                let fy = (y - y0) / h;
                (if right { fx > 0.55 } else { fx < 0.45 }) && (if upper { fy > 0.6 } else { fy < 0.4 })
            })
            .count()
    };
    corners.iter().min_by_key(|c| count(c.1, c.2)).map(|c| c.0.clone()).unwrap_or(SeriesLabelPosition::UpperLeft)
}

/// Draw `panels` side by side into `out` (`.svg` or `.png`).
pub fn render(panels: &[Panel], out: &Path) -> Result<()> {
    register_fonts()?;
    let n = panels.len().max(1) as u32;
    let size = (PANEL.0 * n, PANEL.1);
    let ext = out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    match ext.as_str() {
        "svg" => draw_all(SVGBackend::new(out, size).into_drawing_area(), panels),
        "png" => draw_all(BitMapBackend::new(out, size).into_drawing_area(), panels),
        _ => Err(ConfigError::value("--output", out.display(), "a file name ending in .svg or .png").into()),
    }
}

fn draw_all<'a, DB: DrawingBackend + 'a>(root: DrawingArea<DB, Shift>, panels: &[Panel]) -> Result<()> {
    root.fill(&WHITE).map_err(err)?;
    let areas = root.split_evenly((1, panels.len().max(1)));
    for (a, p) in areas.iter().zip(panels) {
        draw_panel(a, p)?;
    }
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

/// The panels of a sweep's table.
pub fn sweep_panels(table: &Group, figure: Figure) -> Result<Vec<Panel>> {
    let swept = h5::str_list_attr(table, "swept_keys")?;
    let x_key = if swept.iter().any(|k| k == "traffic.load") { "traffic.load" } else { "offered_load" };
    let x = read_f64(&table.dataset(x_key).with_context(|| format!("sweep table column {x_key}"))?)?;
    let others: Vec<(String, Vec<String>)> = swept
        .iter()
        .filter(|k| k.as_str() != "traffic.load")
        .map(|k| Ok((k.clone(), read_text(&table.dataset(k)?)?)))
        .collect::<Result<_>>()?;
    // Series: each combination of the other swept values, in order of first appearance; a key
    // that takes a single value is left out of the labels.
    let varying: Vec<&(String, Vec<String>)> = others.iter().filter(|(_, v)| v.iter().any(|s| *s != v[0])).collect();
    let mut keys: Vec<String> = Vec::new();
    let mut member: Vec<usize> = Vec::new();
    for row in 0..x.len() {
        let label = varying
            .iter()
            .map(|(k, v)| format!("{}={}", k.rsplit('.').next().unwrap_or(k), v[row]))
            .collect::<Vec<_>>()
            .join(", ");
        let i = keys.iter().position(|k| *k == label).unwrap_or_else(|| {
            keys.push(label);
            keys.len() - 1
        });
        member.push(i);
    }
    let curve = |col: &str| -> Result<Vec<Series>> {
        let y = read_f64(&table.dataset(col).with_context(|| format!("sweep table column {col}"))?)?;
        Ok(keys
            .iter()
            .enumerate()
            .map(|(i, label)| {
                let mut points: Vec<(f64, f64)> =
                    (0..x.len()).filter(|&r| member[r] == i).map(|r| (x[r], y[r])).collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series { label: label.clone(), points, markers: true }
            })
            .collect())
    };
    // Points whose window was not steady (files from before the column have none).
    let steady = table.dataset("steady_state").ok().map(|d| read_f64(&d)).transpose()?;
    let unsteady = |col: &str| -> Result<Vec<(f64, f64)>> {
        let Some(st) = &steady else { return Ok(vec![]) };
        let y = read_f64(&table.dataset(col)?)?;
        Ok((0..x.len()).filter(|&r| st[r] == 0.0).map(|r| (x[r], y[r])).collect())
    };
    let xd = "Offered load (phits/cycle/server)".to_string();
    let (xmin, xmax) =
        x.iter().filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    let throughput = Panel {
        title: "Throughput".into(),
        x_desc: xd.clone(),
        y_desc: "Accepted load (phits/cycle/server)".into(),
        series: curve("accepted_load")?,
        guides: if xmin.is_finite() { vec![((xmin, xmin), (xmax, xmax))] } else { vec![] },
        vlines: vec![],
        y_from_zero: true,
        unsteady: unsteady("accepted_load")?,
    };
    let latency = Panel {
        title: "Latency".into(),
        x_desc: xd.clone(),
        y_desc: "Average latency (cycles)".into(),
        series: curve("average_latency")?,
        guides: vec![],
        vlines: vec![],
        y_from_zero: true,
        unsteady: unsteady("average_latency")?,
    };
    let jain = Panel {
        title: "Fairness".into(),
        x_desc: xd,
        y_desc: "Jain's index of injected load".into(),
        series: curve("jain_index")?,
        guides: vec![],
        vlines: vec![],
        y_from_zero: false,
        unsteady: unsteady("jain_index")?,
    };
    Ok(match figure {
        Figure::All => vec![throughput, latency, jain],
        Figure::Throughput => vec![throughput],
        Figure::Latency => vec![latency],
        Figure::Jain => vec![jain],
        Figure::Timeseries => {
            return Err(ConfigError::value(
                "--figure",
                "timeseries",
                "throughput, latency, jain or all for a sweep (a sweep has no single time series: choose a point \
                 with --point N)",
            )
            .into())
        }
    })
}

/// The time-series panels of a run (a file's root, or a sweep point's group).
pub fn timeseries_panels(run: &Group) -> Result<Vec<Panel>> {
    let ts = run.group("timeseries").context("this run has no /timeseries")?;
    let col = |n: &str| -> Result<Vec<f64>> { read_f64(&ts.dataset(n).with_context(|| format!("timeseries/{n}"))?) };
    let cycle = col("cycle")?;
    let zip = |y: Vec<f64>| -> Vec<(f64, f64)> { cycle.iter().copied().zip(y).collect() };
    let mut vlines = Vec::new();
    if let Ok(text) = h5::str_attr(run, "config") {
        if let Ok(cfg) = crate::config::parse_str(&text, "the file's config", &[]) {
            if cfg.traffic.mode == "bernoulli" {
                let w = cfg.simulation.warmup_cycles as f64;
                vlines = vec![w, w + cfg.simulation.measure_cycles as f64];
            }
        }
    }
    let xd = "Cycle (measurement window dotted)".to_string();
    Ok(vec![
        Panel {
            title: "Load".into(),
            x_desc: xd.clone(),
            y_desc: "Load (phits/cycle/server)".into(),
            series: vec![
                Series { label: "injected".into(), points: zip(col("injected_load")?), markers: false },
                Series { label: "accepted".into(), points: zip(col("accepted_load")?), markers: false },
            ],
            guides: vec![],
            vlines: vlines.clone(),
            y_from_zero: true,
            unsteady: vec![],
        },
        Panel {
            title: "Latency".into(),
            x_desc: xd.clone(),
            y_desc: "Mean latency (cycles)".into(),
            series: vec![Series { label: String::new(), points: zip(col("mean_latency")?), markers: false }],
            guides: vec![],
            vlines: vlines.clone(),
            y_from_zero: true,
            unsteady: vec![],
        },
        Panel {
            title: "Packets in flight".into(),
            x_desc: xd,
            y_desc: "Packets in the network".into(),
            series: vec![Series { label: String::new(), points: zip(col("in_flight")?), markers: false }],
            guides: vec![],
            vlines,
            y_from_zero: true,
            unsteady: vec![],
        },
    ])
}

/// `hxsim plot`: draw `figure` from the results file `file` into `out`.
pub fn plot_command(file: &Path, out: &Path, figure: Figure, point: Option<usize>) -> Result<u8> {
    let ext = out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    if ext != "svg" && ext != "png" {
        return Err(ConfigError::value("--output", out.display(), "a file name ending in .svg or .png").into());
    }
    if !file.exists() {
        return Err(ConfigError::value("FILE", file.display(), "an existing results file (.h5)").into());
    }
    let f = h5::open_file(file)?;
    let panels = match (point, f.group("sweep")) {
        (Some(i), _) => {
            let names = f.group("points").map(|g| g.member_names().unwrap_or_default()).unwrap_or_default();
            let name = names.iter().find(|n| n.parse::<usize>().ok() == Some(i)).ok_or_else(|| {
                ConfigError::value("--point", i, format!("one of the {} points of this sweep", names.len()))
            })?;
            timeseries_panels(&f.group(&format!("points/{name}"))?)?
        }
        (None, Ok(table)) => sweep_panels(&table, figure)?,
        (None, Err(_)) => match figure {
            Figure::All | Figure::Timeseries => timeseries_panels(&f)?,
            f => {
                return Err(ConfigError::value(
                    "--figure",
                    format!("{f:?}").to_lowercase(),
                    format!("timeseries or all: {} is a single run, with only a time series", file.display()),
                )
                .into())
            }
        },
    };
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            ConfigError::value("--output", out.display(), format!("a path in a writable directory: {e}"))
        })?;
    }
    // Drawn under a temporary name and renamed, so an existing figure is replaced only by a whole one.
    let tmp = out.with_file_name(format!(".{}.partial.{ext}", out.file_name().unwrap_or_default().to_string_lossy()));
    let drawn = render(&panels, &tmp).and_then(|()| std::fs::rename(&tmp, out).map_err(anyhow::Error::from));
    if drawn.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    drawn.with_context(|| format!("writing the figure {}", out.display()))?;
    crate::cli::out(&format!("{}\n", out.display()))?;
    Ok(0)
}
