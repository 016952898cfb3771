//! `hxsim sweep`: run one config at every point of a grid of overridden values (see [`crate::sweep`]
//! for the grid), into one HDF5 file.
//!
//! Each point runs single-threaded; `--jobs N` runs N points at once. Results never depend on
//! `--jobs`: every point's group holds only what that point computed. The file holds one group per
//! point, `/points/NNN`, with the layout of a run (see [`crate::output`]), and the table `/sweep`: one
//! 1-D dataset per column along the dimension `point` (`point`, `group`, each swept key, each summary
//! key as `f64` with NaN where a point has no value, `complete`, `error`), and the same values
//! gridded over the swept keys in `/grid` (see [`crate::output::table`]). Every point's group is
//! complete on its own (no dataset is shared between points, so netCDF-4 readers open the file),
//! and the file is flushed after a point at most every [`FLUSH_EVERY`].
//!
//! A point that fails (deadlock, unroutable packet) records its error in its group and in the table,
//! and the sweep goes on; the exit code is then 3. Bad `--set` syntax, or a value that makes any
//! point's config or model invalid (every distinct model is built once up front, see
//! [`crate::sim::validate`]), is reported before anything runs (exit code 2), and an existing
//! results file is left as it was.

use super::progress::{heartbeat, heartbeat_every, run_with_progress_observed};
use super::warn_threads;
use crate::config::{Config, ConfigError};
use crate::console::{note, out};
use crate::engine::Progress;
use crate::output::hdf5 as h5;
use crate::signals::{exit_status, signal_name, StopOnSignal, STOP_IO_ERROR};
use crate::sim::{RunOptions, RunResult, SimError};
use crate::staged::Staged;
use crate::sweep::{expand, expand_from, Axis, Point};
use crate::timestamp::iso8601_utc;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// How one point ended.
enum Outcome {
    Done(Box<RunResult>),
    Failed(String),
    NotRun,
}

/// The base config of `hxsim sweep`.
#[derive(Debug, Clone)]
pub enum Base {
    /// `CONFIG`: a config file.
    Config(PathBuf),
    /// `--from CHECKPOINT`: every point starts from the state saved in the checkpoint, with its
    /// config as the base (see [`crate::checkpoint::Saved`]).
    Checkpoint(PathBuf),
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
pub fn run(
    base: &Base,
    sets: &[String],
    jobs: usize,
    quiet: bool,
    output: Output,
    max_memory: Option<u64>,
) -> Result<u8> {
    if jobs == 0 {
        return Err(ConfigError::value("--jobs", 0, "at least 1").into());
    }
    let (saved, config_path) = match base {
        Base::Config(p) => (None, p.as_path()),
        Base::Checkpoint(p) => (Some(crate::checkpoint::Saved::open(p, "--from")?), p.as_path()),
    };
    let (axes, points) = match &saved {
        None => expand(config_path, sets)?,
        Some(s) => expand_from(s, sets)?,
    };
    // Every point of a sweep `--from` a checkpoint restores it and writes none.
    let plan = saved.as_ref().map(|s| s.plan());
    if let (Some(s), false) = (&saved, quiet) {
        note(&format!(
            "hxsim: every point resumes {} at cycle {} (its events come at that cycle or later)",
            s.file().display(),
            s.resume_cycle()
        ));
    }
    let of_point = |p: &Point, e: ConfigError| match e {
        ConfigError::Value { key, value, allowed } => {
            ConfigError::Value { key, value, allowed: format!("{allowed} (sweep point {})", p.label(&axes)) }
        }
        other => other,
    };
    for p in &points {
        p.config.check_memory(1, max_memory, None).map_err(|e| of_point(p, e))?;
    }
    // Every point's model is built once before anything runs (points that differ only in the
    // offered load share one), so that bad input a point only shows when its network or routing
    // is built (faults that split the network, too few VCs) exits 2 with nothing run or written.
    let mut checked = std::collections::HashSet::new();
    for p in &points {
        let mut c = p.config.clone();
        c.traffic.load = 0.0;
        if checked.insert(serde_json::to_string(&c).unwrap_or_default()) {
            crate::sim::validate(&p.config, max_memory).map_err(|e| of_point(p, e))?;
        }
    }
    warn_threads(jobs);
    let base_cfg = &points[0].config;
    let path = match output {
        Output::None => None,
        Output::Default => Some(crate::output::default_path(&base_cfg.name, "-sweep")),
        Output::Path(p) => Some(p),
    };
    // The results file must not be one of the sweep's inputs: the config, or a file a point reads.
    if let Some(out) = &path {
        let what = if saved.is_some() { "the checkpoint (--from)" } else { "the config file" };
        let inputs = std::iter::once((what.to_string(), config_path.to_path_buf()))
            .chain(points.iter().flat_map(|p| p.config.input_files()).map(|(k, f)| (format!("{k} of a point"), f)));
        for (what, f) in inputs {
            if crate::staged::same_file(out, &f) {
                return Err(ConfigError::value(
                    "--output",
                    out.display(),
                    format!("a file that is not one of the sweep's inputs (this is {what})"),
                )
                .into());
            }
        }
    }
    let progress = Arc::new(Progress::default());
    let signals = StopOnSignal::install(progress.clone())?;
    let staged = path.as_deref().map(|p| Staged::new(p, "--output")).transpose()?;
    signals.discard_on_exit(staged.as_ref().map(|s| s.tmp()));
    // The file and its `/points` group, open until the table is written.
    let file = match &staged {
        Some(st) => {
            let f = h5::create_file(st.tmp())?;
            let text = match &saved {
                Some(s) => s.config_text()?,
                None => std::fs::read_to_string(config_path).unwrap_or_default(),
            };
            write_sweep_header(&f, (config_path, &text), base_cfg, sets, &axes, points.len(), jobs)?;
            if let Some(s) = &saved {
                h5::set_str_attr(&f, "from_checkpoint", &config_path.display().to_string())?;
                h5::set_attr(&f, "from_cycle", &s.resume_cycle())?;
            }
            let g = h5::new_group(&f, "points")?;
            f.flush()?;
            Some((f, g))
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
    let (tx, rx) = crossbeam::channel::unbounded::<(usize, String, Result<RunResult, SimError>, f64)>();
    let mut write_error: Option<anyhow::Error> = None;
    let (beat, started) = (heartbeat_every(), std::time::Instant::now());
    let (mut beat_last, mut done) = (std::time::Instant::now(), 0usize);
    let mut flushed = std::time::Instant::now();
    std::thread::scope(|s| {
        for _ in 0..jobs.min(n) {
            let (tx, next, points, progress, plan) = (tx.clone(), &next, &points, progress.clone(), &plan);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= points.len() || progress.stop.load(Ordering::SeqCst) != 0 {
                    break;
                }
                let start = iso8601_utc(std::time::SystemTime::now());
                let opts = RunOptions { threads: 1, max_memory, checkpoint: plan.clone(), ..Default::default() };
                let cpu = thread_cpu_seconds();
                let r = run_with_progress_observed(&points[i].config, &opts, true, progress.clone(), None);
                if tx.send((i, start, r, thread_cpu_seconds() - cpu)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, start, r, sim_cpu) in rx {
            let p = &points[i];
            let outcome = match r {
                Ok(res) => Outcome::Done(Box::new(res)),
                Err(e) => Outcome::Failed(e.to_string()),
            };
            if let (Some((f, g)), None) = (&file, &write_error) {
                let meta = h5::RunMeta { threads: 1, ranks: 1, start_time: start, host: crate::output::hostname() };
                let (writing, writing_cpu) = (std::time::Instant::now(), thread_cpu_seconds());
                let written = write_point(g, &group_name(i), p, &axes, &meta, &outcome).and_then(|_| {
                    // Flushing writes the metadata of every object changed since the last
                    // flush: once for several points costs less than once per point. The
                    // last point needs none: the table is written and the file closed (and
                    // flushed) right after it.
                    if done + 1 == n || flushed.elapsed() < FLUSH_EVERY {
                        return Ok(());
                    }
                    flushed = std::time::Instant::now();
                    f.flush().map_err(anyhow::Error::from)
                });
                if let Outcome::Done(r) = &outcome {
                    let w = writing.elapsed().as_secs_f64();
                    let wc = thread_cpu_seconds() - writing_cpu;
                    tracing::info!(
                        point = i,
                        "wrote the point in {w:.4} s ({:.2}% of its {:.3} s simulation); CPU time {wc:.4} s ({:.2}% of \
                         the simulation's {sim_cpu:.3} s)",
                        100.0 * w / r.summary.wall_seconds.max(1e-9),
                        r.summary.wall_seconds,
                        100.0 * wc / sim_cpu.max(1e-9),
                    );
                }
                if let Err(e) = written {
                    // Stop the other points: the file is unusable.
                    progress.stop.store(STOP_IO_ERROR, Ordering::SeqCst);
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
                heartbeat(started, &format!("{done}/{n} points done (last: {})", p.label(&axes)));
                beat_last = std::time::Instant::now();
            }
        }
    });
    bar.finish_and_clear();
    let caught = signals.caught();
    let failed = outcomes.iter().filter(|o| matches!(o, Outcome::Failed(_))).count();
    let interrupted = caught.is_some();
    if let (Some((f, points_group)), Some(st)) = (file, staged) {
        drop(points_group);
        let written = write_error.map_or_else(
            || {
                let cpu = thread_cpu_seconds();
                crate::output::table::write(&f, &table(&axes, &points, &outcomes, &group_name))?;
                let status = match caught {
                    Some(sig) => format!("interrupted by {}", signal_name(sig)),
                    None if failed > 0 => format!("complete; {failed} of {n} points failed"),
                    None => "complete".into(),
                };
                h5::finish(&f, !interrupted, &status)?;
                f.flush()?;
                drop(f);
                tracing::info!("wrote the table and closed the file: CPU time {:.4} s", thread_cpu_seconds() - cpu);
                signals.discard_on_exit(None);
                let dest = st.dest().to_path_buf();
                st.commit().with_context(|| format!("moving the results file into place at {}", dest.display()))
            },
            Err,
        );
        out(&table_text(&axes, &points, &outcomes))?;
        if let Err(e) = written {
            note(&format!("error: {e:#}"));
            note(
                "hxsim: the sweep stopped because its results file could not be written; the table above is all \
                 it kept (any existing file was left as it was)",
            );
            return Ok(1);
        }
        out(&format!("results: {}\n", path.as_deref().unwrap_or(Path::new("")).display()))?;
    } else {
        out(&table_text(&axes, &points, &outcomes))?;
    }
    if interrupted {
        return Ok(exit_status(false, caught));
    }
    Ok(if failed > 0 { 3 } else { 0 })
}

/// `config`: the base config's path and text (a checkpoint's config as TOML with `--from`).
fn write_sweep_header(
    f: &::hdf5::File,
    (config_path, text): (&Path, &str),
    base: &Config,
    sets: &[String],
    axes: &[Axis],
    n: usize,
    jobs: usize,
) -> Result<()> {
    h5::set_str_attr(f, "format", h5::FORMAT)?;
    h5::set_attr(f, "format_version", &h5::FORMAT_VERSION)?;
    h5::set_str_attr(f, "kind", "sweep")?;
    h5::set_str_attr(f, "hxsim_version", env!("CARGO_PKG_VERSION"))?;
    h5::write_build_attrs(f)?;
    h5::set_str_attr(f, "name", &base.name)?;
    h5::set_str_attr(f, "config", text)?;
    h5::set_str_attr(f, "config_path", &config_path.display().to_string())?;
    h5::set_str_list_attr(f, "sweep", sets)?;
    h5::set_str_list_attr(f, "swept_keys", &axes.iter().map(|a| a.key.clone()).collect::<Vec<_>>())?;
    h5::set_attr(f, "points", &(n as u64))?;
    h5::set_attr(f, "seed", &base.seed)?;
    h5::set_attr(f, "threads", &1u64)?;
    h5::set_attr(f, "ranks", &1u64)?;
    h5::set_attr(f, "jobs", &(jobs as u64))?;
    h5::set_str_attr(f, "start_time", &iso8601_utc(std::time::SystemTime::now()))?;
    h5::set_str_attr(f, "host", &crate::output::hostname())?;
    h5::set_attr(f, "complete", &false)?;
    h5::set_str_attr(f, "status", "running")?;
    Ok(())
}

/// Longest time a point's results stay in memory only (HDF5's metadata cache): after a point
/// finishes, the file is flushed if this long has passed since the last flush (the last point is
/// flushed with the table, which follows it). Until then the `.partial` file may not open; it is
/// never renamed into place before the sweep ends, so a sweep killed outright loses at most this
/// much of its points.
pub const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// CPU time of the calling thread, seconds (NaN if unknown). A sweep simulates each point on a
/// worker thread (one partition runs on the thread that calls it) and writes on the main thread, so
/// their CPU times compare even where a busy machine stretches wall-clock times.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc == 0 {
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    } else {
        f64::NAN
    }
}

fn write_point(
    points: &::hdf5::Group,
    name: &str,
    p: &Point,
    axes: &[Axis],
    meta: &h5::RunMeta,
    outcome: &Outcome,
) -> Result<()> {
    // summary, timeseries, servers, latency, links, vcs; the attributes of `write_header`, `point`,
    // `swept`, `end_time` (or `error`).
    let g = h5::new_group_for(points, name, 6, 22)?;
    h5::write_header(&g, &p.config, meta)?;
    h5::set_attr(&g, "point", &(p.index as u64))?;
    h5::set_str_attr(&g, "swept", &p.label(axes))?;
    match outcome {
        Outcome::Done(res) => {
            let mut ts = h5::Timeseries::create_once(&g, &p.config)?;
            h5::write_results(&g, res, &mut ts)?;
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

/// The sweep table of workloads: execution time (makespan), the median task's finish, message
/// latency (mean and p99).
fn workload_table_text(axes: &[Axis], points: &[Point], outcomes: &[Outcome], label_w: usize) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{:<label_w$}  {:>12}  {:>12}  {:>10}  {:>8}  status",
        "point", "makespan", "median task", "msg lat", "msg p99"
    );
    let cyc = |v: Option<u64>| v.map_or("-".to_string(), |c| c.to_string());
    for (p, o) in points.iter().zip(outcomes) {
        let label = p.label(axes);
        let _ = match o {
            Outcome::Done(r) => {
                let s = &r.summary;
                writeln!(
                    t,
                    "{label:<label_w$}  {:>12}  {:>12}  {:>10}  {:>8}  {}",
                    cyc(s.makespan_cycles),
                    cyc(s.task_finish_median),
                    s.message_latency_mean.map_or("-".into(), |m| format!("{m:.1}")),
                    cyc(s.message_latency_p99),
                    if r.stalled.is_some() {
                        "stalled"
                    } else if r.complete {
                        "ok"
                    } else {
                        "interrupted"
                    }
                )
            }
            Outcome::Failed(e) => writeln!(
                t,
                "{label:<label_w$}  {:>12}  {:>12}  {:>10}  {:>8}  failed: {}",
                "-",
                "-",
                "-",
                "-",
                e.lines().next().unwrap_or("")
            ),
            Outcome::NotRun => {
                writeln!(t, "{label:<label_w$}  {:>12}  {:>12}  {:>10}  {:>8}  not run", "-", "-", "-", "-")
            }
        };
    }
    t
}

fn table_text(axes: &[Axis], points: &[Point], outcomes: &[Outcome]) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let label_w = points.iter().map(|p| p.label(axes).len()).max().unwrap_or(5).max(5);
    if outcomes.iter().any(|o| matches!(o, Outcome::Done(r) if r.summary.messages_delivered.is_some())) {
        return workload_table_text(axes, points, outcomes, label_w);
    }
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
                    s.latency_p99.map_or("-".into(), |p| p.to_string()),
                    s.jain_index,
                    match s.steady_state {
                        Some(true) => "yes",
                        Some(false) => "NO",
                        None => "-",
                    },
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
