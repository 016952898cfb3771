//! `hxsim sweep`: run one config at every point of a grid of overridden values, into one HDF5 file.
//!
//! Each `--set` is one axis of the grid:
//! - `KEY=START:STOP:STEP`: an inclusive range (`traffic.load=0.1:1.0:0.1` gives 0.1, 0.2, ..., 1.0;
//!   the stop is included within rounding, and values are rounded to the decimals written);
//! - `KEY=A,B,C`: a list (`routing.algorithm=minimal,valiant`; TOML arrays such as `[4,4],[8,8]` are
//!   kept whole);
//! - `KEY=VALUE`: one value (an override applied to every point).
//!
//! The points are the cartesian product of the axes (the last `--set` varies fastest). Each point
//! runs single-threaded; `--jobs N` runs N points at once. Results never depend on `--jobs`: every
//! point's group holds only what that point computed. The file holds one group per point,
//! `/points/NNN`, with the layout of a run (see [`crate::output`]), and the table `/sweep`: one 1-D
//! dataset per column along the dimension `point` (`point`, `group`, each swept key, each summary key
//! as `f64` with NaN where a point has no value, `complete`, `error`), and the same values gridded
//! over the swept keys in `/grid` (see [`crate::output::table`]).
//!
//! A point that fails (deadlock, unroutable packet, bad derived value) records its error in its group
//! and in the table, and the sweep goes on; the exit code is then 3. Bad `--set` syntax, or a value
//! that makes any point's config invalid, is reported before anything runs (exit code 2).

use crate::cli;
use crate::config::{self, Config, ConfigError};
use crate::engine::Progress;
use crate::output::hdf5 as h5;
use crate::output::{exit_status, signal_name, Staged, StopOnSignal};
use crate::sim::{RunOptions, RunResult, SimError};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Most points one sweep may have.
pub const MAX_POINTS: usize = 100_000;

/// Type of a swept key's column in the `/sweep` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// Every value is a TOML integer: `i64`.
    Int,
    /// Every value is a number: `f64`.
    Float,
    /// Every value is `true` or `false`.
    Bool,
    /// Anything else: UTF-8 strings (strings as themselves, other literals as written).
    Text,
}

/// One `--set`: a config key and the values it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Dotted config key, e.g. `traffic.load`.
    pub key: String,
    /// Each value as a TOML literal (or bare string), as passed to `--set KEY=VALUE`.
    pub values: Vec<String>,
}

impl Axis {
    /// Column type of this axis in the table.
    pub fn kind(&self) -> ColumnKind {
        let lits: Vec<toml::Value> = self.values.iter().map(|v| config::parse_literal(v)).collect();
        if lits.iter().all(|v| v.is_integer()) {
            ColumnKind::Int
        } else if lits.iter().all(|v| v.is_integer() || v.is_float()) {
            ColumnKind::Float
        } else if lits.iter().all(|v| v.is_bool()) {
            ColumnKind::Bool
        } else {
            ColumnKind::Text
        }
    }
}

fn bad(spec: &str, why: impl std::fmt::Display) -> ConfigError {
    ConfigError::Parse { origin: "--set".into(), message: format!("`{spec}`: {why}") }
}

/// Split at commas (or find colons) outside brackets, braces and quotes.
fn split_top(v: &str, sep: char) -> Vec<String> {
    let (mut depth, mut quote, mut cur, mut out) = (0i32, None::<char>, String::new(), Vec::new());
    for c in v.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, c) if c == sep && depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

fn decimals(s: &str) -> Option<usize> {
    if s.contains(['e', 'E']) {
        return None;
    }
    Some(s.split_once('.').map_or(0, |(_, f)| f.len()))
}

/// Expand `START:STOP:STEP`.
fn range(spec: &str, parts: &[String]) -> Result<Vec<String>, ConfigError> {
    let how = "a range is START:STOP:STEP with three numbers, STEP > 0 and STOP >= START (e.g. 0.1:1.0:0.1)";
    if parts.len() != 3 {
        return Err(bad(spec, how));
    }
    let p: Vec<&str> = parts.iter().map(|s| s.trim()).collect();
    if let (Ok(a), Ok(b), Ok(s)) = (p[0].parse::<i64>(), p[1].parse::<i64>(), p[2].parse::<i64>()) {
        if s <= 0 || b < a {
            return Err(bad(spec, how));
        }
        // In i128: `b - a` of two i64 overflows i64 (e.g. i64::MIN:i64::MAX:1).
        let n = (b as i128 - a as i128) / s as i128 + 1;
        if n > MAX_POINTS as i128 {
            return Err(bad(spec, format!("{n} values; at most {MAX_POINTS}")));
        }
        // Every value lies in [a, b], so it fits in i64.
        return Ok((0..n).map(|i| (a as i128 + i * s as i128).to_string()).collect());
    }
    let num = |x: &str| x.parse::<f64>().ok().filter(|v| v.is_finite());
    let (Some(a), Some(b), Some(s)) = (num(p[0]), num(p[1]), num(p[2])) else {
        return Err(bad(spec, how));
    };
    if s <= 0.0 || b < a {
        return Err(bad(spec, how));
    }
    let steps = (b - a) / s;
    if steps + 1.0 > MAX_POINTS as f64 {
        return Err(bad(spec, format!("{:.0} values; at most {MAX_POINTS}", steps.floor() + 1.0)));
    }
    // Inclusive of STOP within rounding: 0.1:1.0:0.1 has (1.0 - 0.1) / 0.1 = 8.999999999999998 steps.
    let n = (steps + 1e-6).floor() as usize + 1;
    let dec = match (decimals(p[0]), decimals(p[2])) {
        (Some(x), Some(y)) => Some(x.max(y).max(1)),
        _ => None,
    };
    Ok((0..n)
        .map(|i| {
            let v = a + i as f64 * s;
            match dec {
                Some(d) => format!("{v:.d$}"),
                None => format!("{}", (v * 1e12).round() / 1e12),
            }
        })
        .collect())
}

/// Parse one `--set KEY=VALUES` of a sweep.
pub fn parse_set(spec: &str) -> Result<Axis, ConfigError> {
    let (key, raw) = spec.split_once('=').ok_or_else(|| {
        bad(spec, "expected KEY=VALUES, e.g. traffic.load=0.1:1.0:0.1 or routing.algorithm=minimal,valiant")
    })?;
    let key = key.trim();
    if key.is_empty()
        || key.split('.').any(|p| p.is_empty())
        || !key.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    {
        return Err(bad(spec, format!("`{key}` is not a config key (dotted names such as traffic.load)")));
    }
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(bad(spec, "no value"));
    }
    let colon = split_top(raw, ':');
    let values = if colon.len() > 1 {
        range(spec, &colon)?
    } else {
        let items: Vec<String> = split_top(raw, ',').into_iter().map(|s| s.trim().to_string()).collect();
        if items.iter().any(|s| s.is_empty()) {
            return Err(bad(spec, "empty value in the list (values are separated by single commas)"));
        }
        items
    };
    let mut seen = std::collections::HashSet::new();
    if let Some(d) = values.iter().find(|v| !seen.insert(v.as_str())) {
        return Err(bad(spec, format!("value {d} is listed twice")));
    }
    Ok(Axis { key: key.to_string(), values })
}

/// One point of the grid.
#[derive(Debug, Clone)]
pub struct Point {
    /// Position in the sweep (row of the table, name of the group).
    pub index: usize,
    /// The value of each axis at this point, as given to `--set`.
    pub values: Vec<String>,
    /// The point's full config.
    pub config: Config,
}

impl Point {
    /// `traffic.load=0.3 routing.algorithm=valiant`.
    pub fn label(&self, axes: &[Axis]) -> String {
        axes.iter().zip(&self.values).map(|(a, v)| format!("{}={v}", a.key)).collect::<Vec<_>>().join(" ")
    }
}

/// Parse the `--set`s and build (and validate) the config of every point of their product.
pub fn expand(config_path: &Path, sets: &[String]) -> Result<(Vec<Axis>, Vec<Point>), ConfigError> {
    let axes: Vec<Axis> = sets.iter().map(|s| parse_set(s)).collect::<Result<_, _>>()?;
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.key == a.key) {
            return Err(bad(&sets[i], format!("`{}` is set twice", a.key)));
        }
    }
    let total = axes.iter().try_fold(1usize, |acc, a| acc.checked_mul(a.values.len()).filter(|&n| n <= MAX_POINTS));
    let Some(total) = total else {
        return Err(ConfigError::value("--set", sets.join(" "), format!("at most {MAX_POINTS} points in a sweep")));
    };
    let text = std::fs::read_to_string(config_path)
        .map_err(|source| ConfigError::Io { path: config_path.display().to_string(), source })?;
    let origin = config_path.display().to_string();
    let mut points = Vec::with_capacity(total);
    for index in 0..total {
        let mut rest = index;
        let mut values = vec![String::new(); axes.len()];
        for (k, a) in axes.iter().enumerate().rev() {
            values[k] = a.values[rest % a.values.len()].clone();
            rest /= a.values.len();
        }
        let overrides: Vec<String> = axes.iter().zip(&values).map(|(a, v)| format!("{}={v}", a.key)).collect();
        let config = config::parse_str(&text, &origin, &overrides).map_err(|e| match e {
            ConfigError::Parse { origin, message } => {
                ConfigError::Parse { origin, message: format!("{message} (sweep point {})", overrides.join(" ")) }
            }
            other => other,
        })?;
        points.push(Point { index, values, config });
    }
    Ok((axes, points))
}

/// How one point ended.
enum Outcome {
    Done(Box<RunResult>),
    Failed(String),
    NotRun,
}

/// Where `hxsim sweep` writes.
#[derive(Debug, Clone)]
pub enum Output {
    /// `--no-output`: print the table only.
    None,
    /// `results/<name>-<timestamp>-sweep.h5`.
    Default,
    /// `--output PATH`.
    Path(PathBuf),
}

/// `hxsim sweep`. Returns the exit code: 0 if every point completed, 3 if any failed, 128 + signal
/// if interrupted.
pub fn sweep_command(
    config_path: &Path,
    sets: &[String],
    jobs: usize,
    quiet: bool,
    output: Output,
    max_memory: Option<u64>,
) -> Result<u8> {
    if jobs == 0 {
        return Err(ConfigError::value("--jobs", 0, "at least 1").into());
    }
    let (axes, points) = expand(config_path, sets)?;
    for p in &points {
        p.config.check_memory(1, max_memory).map_err(|e| match e {
            ConfigError::Value { key, value, allowed } => {
                ConfigError::Value { key, value, allowed: format!("{allowed} (sweep point {})", p.label(&axes)) }
            }
            other => other,
        })?;
    }
    crate::output::warn_threads(jobs);
    let base = &points[0].config;
    let path = match output {
        Output::None => None,
        Output::Default => Some(crate::output::default_path(&base.name, "-sweep")),
        Output::Path(p) => Some(p),
    };
    let progress = Arc::new(Progress::default());
    let signals = StopOnSignal::install(progress.clone())?;
    let staged = path.as_deref().map(Staged::new).transpose()?;
    signals.discard_on_exit(staged.as_ref().map(|s| s.tmp()));
    let file = match &staged {
        Some(st) => {
            let f = h5::create_file(st.tmp())?;
            write_sweep_header(&f, config_path, base, sets, &axes, points.len(), jobs)?;
            h5::new_group(&f, "points")?;
            f.flush()?;
            Some(f)
        }
        None => None,
    };
    let n = points.len();
    let bar = if quiet { indicatif::ProgressBar::hidden() } else { indicatif::ProgressBar::new(n as u64) };
    bar.set_draw_target(if quiet {
        indicatif::ProgressDrawTarget::hidden()
    } else {
        indicatif::ProgressDrawTarget::stderr()
    });
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} points (eta {eta}) {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let width = (n - 1).to_string().len().max(3);
    let group_name = |i: usize| format!("{i:0width$}");
    let mut outcomes: Vec<Outcome> = (0..n).map(|_| Outcome::NotRun).collect();
    let next = AtomicUsize::new(0);
    let (tx, rx) = crossbeam::channel::unbounded::<(usize, String, Result<RunResult, SimError>)>();
    let mut write_error: Option<anyhow::Error> = None;
    let (beat, started) = (cli::heartbeat_every(), std::time::Instant::now());
    let (mut beat_last, mut done) = (std::time::Instant::now(), 0usize);
    std::thread::scope(|s| {
        for _ in 0..jobs.min(n) {
            let (tx, next, points, progress) = (tx.clone(), &next, &points, progress.clone());
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= points.len() || progress.stop.load(Ordering::SeqCst) != 0 {
                    break;
                }
                let start = crate::output::iso8601_utc(std::time::SystemTime::now());
                let opts = RunOptions { threads: 1 };
                let r = cli::run_with_progress_observed(&points[i].config, &opts, true, progress.clone(), None);
                if tx.send((i, start, r)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, start, r) in rx {
            let p = &points[i];
            let outcome = match r {
                Ok(res) => Outcome::Done(Box::new(res)),
                Err(e) => Outcome::Failed(e.to_string()),
            };
            if let (Some(f), None) = (&file, &write_error) {
                let meta = h5::RunMeta { threads: 1, ranks: 1, start_time: start, host: crate::output::hostname() };
                let writing = std::time::Instant::now();
                let written = f
                    .group("points")
                    .map_err(anyhow::Error::from)
                    .and_then(|g| write_point(&g, &group_name(i), p, &axes, &meta, &outcome))
                    .and_then(|_| f.flush().map_err(anyhow::Error::from));
                if let Outcome::Done(r) = &outcome {
                    let w = writing.elapsed().as_secs_f64();
                    tracing::info!(
                        point = i,
                        "wrote the point in {w:.4} s ({:.2}% of its {:.3} s simulation)",
                        100.0 * w / r.summary.wall_seconds.max(1e-9),
                        r.summary.wall_seconds
                    );
                }
                if let Err(e) = written {
                    // Stop the other points: the file is unusable.
                    progress.stop.store(crate::output::STOP_IO_ERROR, Ordering::SeqCst);
                    write_error = Some(e.context(format!("writing sweep point {i}")));
                }
            }
            if let Outcome::Failed(e) = &outcome {
                bar.println(format!("point {i} ({}) failed: {}", p.label(&axes), e.lines().next().unwrap_or("")));
            }
            outcomes[i] = outcome;
            bar.set_message(p.label(&axes));
            bar.inc(1);
            done += 1;
            tracing::debug!(point = i, "sweep point done: {}", p.label(&axes));
            if !quiet && (done == n || beat.is_some_and(|e| beat_last.elapsed() >= e)) && beat.is_some() {
                cli::heartbeat(started, &format!("{done}/{n} points done (last: {})", p.label(&axes)));
                beat_last = std::time::Instant::now();
            }
        }
    });
    bar.finish_and_clear();
    let caught = signals.caught();
    let failed = outcomes.iter().filter(|o| matches!(o, Outcome::Failed(_))).count();
    let interrupted = caught.is_some();
    if let (Some(f), Some(st)) = (file, staged) {
        let written = write_error.map_or_else(
            || {
                crate::output::table::write(&f, &table(&axes, &points, &outcomes, &group_name))?;
                let status = match caught {
                    Some(sig) => format!("interrupted by {}", signal_name(sig)),
                    None if failed > 0 => format!("complete; {failed} of {n} points failed"),
                    None => "complete".into(),
                };
                h5::finish(&f, !interrupted, &status)?;
                f.flush()?;
                drop(f);
                signals.discard_on_exit(None);
                let dest = st.dest().to_path_buf();
                st.commit().with_context(|| format!("moving the results file into place at {}", dest.display()))
            },
            Err,
        );
        cli::out(&table_text(&axes, &points, &outcomes))?;
        if let Err(e) = written {
            crate::output::note(&format!("error: {e:#}"));
            crate::output::note(
                "hxsim: the sweep stopped because its results file could not be written; the table above is all \
                 it kept (any existing file was left as it was)",
            );
            return Ok(1);
        }
        cli::out(&format!("results: {}\n", path.as_deref().unwrap_or(Path::new("")).display()))?;
    } else {
        cli::out(&table_text(&axes, &points, &outcomes))?;
    }
    if interrupted {
        return Ok(exit_status(false, caught));
    }
    Ok(if failed > 0 { 3 } else { 0 })
}

fn write_sweep_header(
    f: &::hdf5::File,
    config_path: &Path,
    base: &Config,
    sets: &[String],
    axes: &[Axis],
    n: usize,
    jobs: usize,
) -> Result<()> {
    let text = std::fs::read_to_string(config_path).unwrap_or_default();
    h5::set_str_attr(f, "format", h5::FORMAT)?;
    h5::set_attr(f, "format_version", &h5::FORMAT_VERSION)?;
    h5::set_str_attr(f, "kind", "sweep")?;
    h5::set_str_attr(f, "hxsim_version", env!("CARGO_PKG_VERSION"))?;
    h5::write_build_attrs(f)?;
    h5::set_str_attr(f, "name", &base.name)?;
    h5::set_str_attr(f, "config", &text)?;
    h5::set_str_attr(f, "config_path", &config_path.display().to_string())?;
    h5::set_str_list_attr(f, "sweep", sets)?;
    h5::set_str_list_attr(f, "swept_keys", &axes.iter().map(|a| a.key.clone()).collect::<Vec<_>>())?;
    h5::set_attr(f, "points", &(n as u64))?;
    h5::set_attr(f, "seed", &base.seed)?;
    h5::set_attr(f, "threads", &1u64)?;
    h5::set_attr(f, "ranks", &1u64)?;
    h5::set_attr(f, "jobs", &(jobs as u64))?;
    h5::set_str_attr(f, "start_time", &crate::output::iso8601_utc(std::time::SystemTime::now()))?;
    h5::set_str_attr(f, "host", &crate::output::hostname())?;
    h5::set_attr(f, "complete", &false)?;
    h5::set_str_attr(f, "status", "running")?;
    Ok(())
}

fn write_point(
    points: &::hdf5::Group,
    name: &str,
    p: &Point,
    axes: &[Axis],
    meta: &h5::RunMeta,
    outcome: &Outcome,
) -> Result<()> {
    let g = h5::new_group(points, name)?;
    h5::write_header(&g, &p.config, meta)?;
    h5::set_attr(&g, "point", &(p.index as u64))?;
    h5::set_str_attr(&g, "swept", &p.label(axes))?;
    match outcome {
        Outcome::Done(res) => {
            let mut ts = h5::Timeseries::create(&g, &p.config)?;
            h5::write_results(&g, &p.config, res, &mut ts)?;
            let status = if res.complete {
                "complete".to_string()
            } else {
                format!("interrupted at cycle {}", res.summary.cycles)
            };
            h5::finish(&g, res.complete, &status)?;
        }
        Outcome::Failed(e) => {
            h5::set_str_attr(&g, "error", e)?;
            h5::finish(&g, false, &format!("failed: {}", e.lines().next().unwrap_or("")))?;
        }
        Outcome::NotRun => h5::finish(&g, false, "not run")?,
    }
    Ok(())
}

/// The table of a sweep's outcomes (see [`crate::output::table`]).
fn table(
    axes: &[Axis],
    points: &[Point],
    outcomes: &[Outcome],
    group_name: &dyn Fn(usize) -> String,
) -> crate::output::table::SweepTable {
    use crate::output::table::{Row, SweepTable};
    let rows = points
        .iter()
        .zip(outcomes)
        .map(|(p, o)| Row {
            point: p.index as u64,
            values: p.values.clone(),
            group: if matches!(o, Outcome::NotRun) { String::new() } else { format!("points/{}", group_name(p.index)) },
            summary: match o {
                Outcome::Done(r) => Some(h5::summary_pairs(&r.summary)),
                _ => None,
            },
            complete: matches!(o, Outcome::Done(r) if r.complete),
            error: match o {
                Outcome::Done(r) if r.complete => String::new(),
                Outcome::Done(_) => "interrupted".into(),
                Outcome::Failed(e) => e.clone(),
                Outcome::NotRun => "not run (sweep interrupted)".into(),
            },
        })
        .collect();
    SweepTable { axes: axes.to_vec(), rows }
}

fn table_text(axes: &[Axis], points: &[Point], outcomes: &[Outcome]) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let label_w = points.iter().map(|p| p.label(axes).len()).max().unwrap_or(5).max(5);
    let _ = writeln!(
        t,
        "{:<label_w$}  {:>9}  {:>10}  {:>6}  {:>7}  {:>6}  status",
        "point", "accepted", "latency", "p99", "Jain", "steady"
    );
    for (p, o) in points.iter().zip(outcomes) {
        let label = p.label(axes);
        let _ = match o {
            Outcome::Done(r) => {
                let s = &r.summary;
                writeln!(
                    t,
                    "{label:<label_w$}  {:>9.4}  {:>10.2}  {:>6}  {:>7.4}  {:>6}  {}",
                    s.accepted_load,
                    s.average_latency,
                    s.latency_p99,
                    s.jain_index,
                    if s.steady_state { "yes" } else { "NO" },
                    if r.complete { "ok" } else { "interrupted" }
                )
            }
            Outcome::Failed(e) => {
                writeln!(
                    t,
                    "{label:<label_w$}  {:>9}  {:>10}  {:>6}  {:>7}  {:>6}  failed: {}",
                    "-",
                    "-",
                    "-",
                    "-",
                    "-",
                    { e.lines().next().unwrap_or("") }
                )
            }
            Outcome::NotRun => {
                writeln!(t, "{label:<label_w$}  {:>9}  {:>10}  {:>6}  {:>7}  {:>6}  not run", "-", "-", "-", "-", "-")
            }
        };
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_range_includes_stop_and_rounds() {
        let a = parse_set("traffic.load=0.1:1.0:0.1").unwrap();
        assert_eq!(a.key, "traffic.load");
        assert_eq!(a.values, ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"]);
        assert_eq!(a.kind(), ColumnKind::Float);
        let a = parse_set("traffic.load=0.05:0.2:0.05").unwrap();
        assert_eq!(a.values, ["0.05", "0.10", "0.15", "0.20"]);
        let a = parse_set("traffic.load=0.1:0.35:0.1").unwrap();
        assert_eq!(a.values, ["0.1", "0.2", "0.3"]);
    }

    #[test]
    fn integer_range_and_lists() {
        let a = parse_set("traffic.source_queue_packets=8:32:8").unwrap();
        assert_eq!(a.values, ["8", "16", "24", "32"]);
        assert_eq!(a.kind(), ColumnKind::Int);
        let a = parse_set("routing.algorithm=minimal, valiant,dor").unwrap();
        assert_eq!(a.values, ["minimal", "valiant", "dor"]);
        assert_eq!(a.kind(), ColumnKind::Text);
        let a = parse_set("topology.sides=[4,4],[2,8]").unwrap();
        assert_eq!(a.values, ["[4,4]", "[2,8]"]);
        let a = parse_set("seed=7").unwrap();
        assert_eq!(a.values, ["7"]);
        // The extremes of i64 are reached without overflow.
        let a = parse_set("seed=9223372036854775800:9223372036854775807:3").unwrap();
        assert_eq!(a.values, ["9223372036854775800", "9223372036854775803", "9223372036854775806"]);
        let a = parse_set("seed=-9223372036854775808:-9223372036854775806:2").unwrap();
        assert_eq!(a.values, ["-9223372036854775808", "-9223372036854775806"]);
    }

    #[test]
    fn bad_specs_are_rejected_with_the_reason() {
        for (spec, needle) in [
            ("traffic.load", "KEY=VALUES"),
            ("traffic.load=0.1:1.0", "START:STOP:STEP"),
            ("traffic.load=0.5:0.1:0.1", "STOP >= START"),
            ("traffic.load=0.1:1.0:0", "STEP > 0"),
            ("traffic.load=a:b:c", "three numbers"),
            ("traffic.load=0.1,,0.2", "empty value"),
            ("=0.1", "not a config key"),
            ("traffic..load=0.1", "not a config key"),
            ("traffic.load=0.1,0.1", "twice"),
            ("traffic.load=", "no value"),
            ("seed=-9223372036854775808:9223372036854775807:1", "at most 100000"),
            ("seed=0:9223372036854775807:1", "at most 100000"),
            ("traffic.load=0:1e300:1e-300", "at most 100000"),
        ] {
            let e = parse_set(spec).unwrap_err().to_string();
            assert!(e.contains(needle) && e.contains(spec), "{spec}: {e}");
        }
    }

    #[test]
    fn split_respects_brackets_and_quotes() {
        assert_eq!(split_top("[1,2],\"a,b\",c", ','), ["[1,2]", "\"a,b\"", "c"]);
        assert_eq!(split_top("\"x:y\"", ':'), ["\"x:y\""]);
    }
}
