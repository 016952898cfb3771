//! What a run shows while it goes on: a progress bar on a terminal, heartbeat lines in a batch job's
//! log, and the steady-state note at the end. Shared by `hxsim run` and `hxsim sweep`.

use crate::config::Config;
use crate::engine::{Progress, World};
use crate::metrics::Summary;
use crate::sim::{self, RunOptions, RunResult, SimError};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Run with a progress bar on stderr (unless `quiet`), shown once the run has lasted a second.
pub fn run_with_progress(cfg: &Config, opts: &RunOptions, quiet: bool) -> Result<RunResult, SimError> {
    run_with_progress_observed(cfg, opts, quiet, Arc::new(Progress::default()), None)
}

/// [`run_with_progress`] with a caller's `progress` (so that a signal handler can stop the run) and
/// an optional receiver of the time series during the run (see [`sim::run_observed`]).
pub fn run_with_progress_observed(
    cfg: &Config,
    opts: &RunOptions,
    quiet: bool,
    progress: Arc<Progress>,
    samples: Option<crate::metrics::SampleSender>,
) -> Result<RunResult, SimError> {
    run_with_progress_on(&World::single(), cfg, opts, quiet, progress, samples)
        .map(|r| r.expect("a single process is rank 0"))
}

/// [`run_with_progress_observed`] on every rank of `world` (collective); only rank 0 shows progress
/// and gets the result (see [`sim::run_on`], also for `samples`).
pub fn run_with_progress_on(
    world: &World,
    cfg: &Config,
    opts: &RunOptions,
    quiet: bool,
    progress: Arc<Progress>,
    samples: Option<crate::metrics::SampleSender>,
) -> Result<Option<RunResult>, SimError> {
    // A fixed workload's end is not known: the bar counts cycles without a total.
    let schedule = cfg.schedule();
    let end = if schedule.fixed { 0 } else { schedule.end };
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = (!quiet && world.is_root()).then(|| {
        let (progress, done) = (progress.clone(), done.clone());
        std::thread::spawn(move || watch(&progress, &done, end))
    });
    let result = sim::run_on(world, cfg, opts, &progress, samples);
    done.store(true, Ordering::Relaxed);
    if let Some(w) = watcher {
        let _ = w.join();
    }
    if let Ok(Some(r)) = &result {
        if let Some(note) = steady_note(cfg, &r.summary) {
            eprintln!("{note}");
        }
        if let Some(note) = stranded_note(cfg, &r.summary) {
            eprintln!("{note}");
        }
    }
    result
}

/// What stderr says about packets stranded after failure events (dropped for want of a live
/// route): why, in the routing's terms. `None` when none was.
pub fn stranded_note(cfg: &Config, s: &Summary) -> Option<String> {
    let n = s.packets_stranded.filter(|&n| n > 0)?;
    let alg = &cfg.routing.algorithm;
    let why = if crate::routing::entry(alg).is_some_and(|e| e.fault_tolerant) {
        format!(
            "their destination switch failed, or {alg} had no live route for them until its rebuild \
             (faults.reconfigure_cycles = {}), or its rebuilt routing none from the state they were in",
            cfg.faults.reconfigure_cycles
        )
    } else {
        format!("{alg} cannot route around failed links or switches and is never rebuilt; use a fault-tolerant routing")
    };
    let fate = match (s.packets_retransmitted, s.packets_abandoned) {
        (Some(sent), Some(given_up)) => format!(
            "; with those lost, {sent} were sent again by their source (packets_retransmitted) and {given_up} given \
             up (packets_abandoned: retries spent, faults.retransmit_limit = {})",
            cfg.faults.retransmit_limit
        ),
        _ => String::new(),
    };
    Some(format!(
        "warning: {n} packets were stranded after failure events and dropped (packets_stranded): {why}; {} more \
         were lost at the events (packets_lost){fate}",
        s.packets_lost.unwrap_or(0)
    ))
}

/// Seconds between heartbeat lines (`HXSIM_HEARTBEAT_SECS`, default 60; 0: none).
pub const HEARTBEAT_ENV: &str = "HXSIM_HEARTBEAT_SECS";

/// How often to print a heartbeat line on stderr: only when stderr is not a terminal (a batch
/// job's log, where the progress bar does not draw), every `HXSIM_HEARTBEAT_SECS` (default 60).
pub fn heartbeat_every() -> Option<Duration> {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        return None;
    }
    let secs = std::env::var(HEARTBEAT_ENV).ok().and_then(|v| v.trim().parse::<f64>().ok()).unwrap_or(60.0);
    (secs > 0.0).then(|| Duration::from_secs_f64(secs))
}

/// `hxsim: 2026-11-22T09:59:00Z, 1m 30s: WHAT`.
pub fn heartbeat(start: Instant, what: &str) {
    let elapsed = humantime::format_duration(Duration::from_secs(start.elapsed().as_secs()));
    eprintln!("hxsim: {}, {elapsed}: {what}", crate::timestamp::iso8601_utc(std::time::SystemTime::now()));
}

/// What stderr says about the measured window's steady state: a warning when it did not reach one,
/// and with `simulation.measure_until_steady` where the extension ended. `None` when there is
/// nothing to say.
pub fn steady_note(cfg: &Config, s: &Summary) -> Option<String> {
    let what = format!(
        "{} (routing {}, {} traffic, offered {})",
        cfg.name, cfg.routing.algorithm, cfg.traffic.pattern, cfg.traffic.load
    );
    let pct = |x: f64| if x.is_nan() { "-".to_string() } else { format!("{:+.0}%", 100.0 * x) };
    let window = cfg.simulation.measure_cycles.min(s.cycles);
    let until = cfg.schedule().until_steady.is_some();
    match (s.steady_state, until) {
        (Some(true), true) => Some(format!("{what}: steady after {} cycles (measured the last {window})", s.cycles)),
        (Some(true) | None, false) => None,
        (None, true) => Some(format!("{what}: nothing delivered in the window, steadiness not judged")),
        (Some(false), until) => Some(format!(
            "warning: {what}: the measured window did not reach a steady state (accepted load {} and packets in \
             flight {} across it); {}",
            pct(s.accepted_trend),
            pct(s.in_flight_trend),
            if until {
                format!("not steady by simulation.max_cycles ({} cycles simulated)", s.cycles)
            } else {
                "run longer, or set simulation.measure_until_steady = true".to_string()
            }
        )),
    }
}

/// What the progress bar and the heartbeat say before the first window ends.
const SETUP: &str = "setting up: building the network, its faults and the routing";

fn watch(progress: &Progress, done: &std::sync::atomic::AtomicBool, end: u64) {
    let start = Instant::now();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let mut last = (Instant::now(), 0u64);
    let (beat, mut beat_last) = (heartbeat_every(), (Instant::now(), 0u64));
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        // No window has ended yet: the model is still being built (a large or faulty network,
        // routing tables), which the cycle count alone would show as a stall at 0.
        let setting_up = progress.cycle.load(Ordering::Relaxed) == 0;
        if beat.is_some_and(|e| beat_last.0.elapsed() >= e) {
            let c = progress.cycle.load(Ordering::Relaxed);
            let rate = (c - beat_last.1.min(c)) as f64 / beat_last.0.elapsed().as_secs_f64();
            let of = if end > 0 { format!("/{end} ({:.0}%)", 100.0 * c as f64 / end as f64) } else { String::new() };
            heartbeat(
                start,
                &if setting_up { SETUP.to_string() } else { format!("cycle {c}{of}, {rate:.0} cycles/s") },
            );
            beat_last = (Instant::now(), c);
        }
        if start.elapsed() < Duration::from_secs(1) {
            continue;
        }
        let b = bar.get_or_insert_with(|| {
            let b = if end > 0 { indicatif::ProgressBar::new(end) } else { indicatif::ProgressBar::new_spinner() };
            b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:40}] {pos}/{len} cycles, {msg} (eta {eta})",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            b
        });
        let c = progress.cycle.load(Ordering::Relaxed);
        let dt = last.0.elapsed().as_secs_f64();
        if setting_up {
            b.set_message(SETUP);
        } else if dt >= 0.5 {
            b.set_message(format!("{:.0} cycles/s", (c - last.1.min(c)) as f64 / dt));
            last = (Instant::now(), c);
        }
        b.set_position(c);
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}
