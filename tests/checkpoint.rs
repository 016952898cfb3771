//! Checkpoint and restart through the binary: a run killed with SIGKILL after a checkpoint and
//! resumed from it (with the same or another thread count) prints the same JSON summary and writes
//! the same results arrays as a run that was never interrupted; bad resumes exit 2 and name the
//! flag. Scenarios started from one checkpoint (`run --resume --set`, `sweep --from`) equal
//! whole runs of their configs, and keys the saved state depends on are refused.

use hdf5::types::TypeDescriptor;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const QUICKSTART: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/quickstart.toml");

/// A 3-D 4x4x4 HyperX (256 servers), long enough that a checkpoint appears well before the end.
const HX3: [&str; 6] = [
    "--set",
    "topology.sides=[4,4,4]",
    "--set",
    "simulation.warmup_cycles=1000",
    "--set",
    "simulation.measure_cycles=30000",
];

/// Summary keys that measure the machine, not the simulation.
const TIMING: [&str; 3] = ["wall_seconds", "hops_per_second", "peak_memory_bytes"];

fn hxsim(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).current_dir(cwd).output().expect("running hxsim")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn summary(out: &Output) -> serde_json::Map<String, serde_json::Value> {
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON summary");
    let m = v.as_object_mut().unwrap();
    for k in TIMING {
        assert!(m.remove(k).is_some(), "summary has {k}");
    }
    // Failure events: the rebuild's wall time is a timing key too.
    if let Some(events) = m.get_mut("failure_events").and_then(|e| e.as_array_mut()) {
        for e in events {
            e.as_object_mut().unwrap().remove("rebuild_seconds");
        }
    }
    m.clone()
}

/// Start `hxsim ARGS` (which checkpoints to `ck`) and return it, still running, once the first
/// checkpoint exists (past setup: a signal during setup exits at once, by design).
fn start_until_checkpoint(args: &[&str], ck: &Path, cwd: &Path) -> std::process::Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hxsim"))
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !ck.exists() {
        if let Some(st) = child.try_wait().unwrap() {
            panic!("the run ended ({st}) before writing a checkpoint");
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "no checkpoint after 2 minutes");
        std::thread::sleep(Duration::from_millis(2));
    }
    child
}

/// Start `run ... --checkpoint ck --checkpoint-every every`, SIGKILL it as soon as the checkpoint
/// file exists, and check that it really died of the kill (so the resume has work left to do).
fn start_and_kill(args: &[&str], ck: &Path, cwd: &Path) {
    let mut child = start_until_checkpoint(args, ck, cwd);
    child.kill().unwrap(); // SIGKILL
    let st = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(st.signal(), Some(libc::SIGKILL), "the run finished before it could be killed: {st}");
}

/// Every numeric dataset of the file, by path (timing keys of `/summary` left out), as bits.
fn arrays(path: &Path) -> Vec<(String, Vec<u64>)> {
    arrays_in(path, "/")
}

/// [`arrays`] of the group `group` of the file (a sweep's point), by path within it.
fn arrays_in(path: &Path, group: &str) -> Vec<(String, Vec<u64>)> {
    fn walk(g: &hdf5::Group, prefix: &str, out: &mut Vec<(String, Vec<u64>)>) {
        for name in g.member_names().unwrap() {
            let full = format!("{prefix}/{name}");
            if let Ok(sub) = g.group(&name) {
                walk(&sub, &full, out);
                continue;
            }
            if TIMING.contains(&name.as_str()) || name.contains("memory") || name == "rebuild_seconds" {
                continue;
            }
            let d = g.dataset(&name).unwrap();
            let bits: Vec<u64> = match d.dtype().unwrap().to_descriptor().unwrap() {
                TypeDescriptor::Integer(_) => d.read_raw::<i64>().unwrap().into_iter().map(|v| v as u64).collect(),
                TypeDescriptor::Unsigned(_) => d.read_raw::<u64>().unwrap(),
                TypeDescriptor::Float(_) => d.read_raw::<f64>().unwrap().into_iter().map(f64::to_bits).collect(),
                TypeDescriptor::Boolean => d.read_raw::<bool>().unwrap().into_iter().map(u64::from).collect(),
                _ => continue,
            };
            out.push((full, bits));
        }
    }
    let f = hdf5::File::open(path).unwrap();
    let mut out = Vec::new();
    walk(&f.group(group).unwrap(), "", &mut out);
    // Member order is the file's link order, not part of the results.
    out.sort();
    assert!(out.iter().any(|(n, v)| n == "/timeseries/cycle" && !v.is_empty()), "{}: no time series", path.display());
    out
}

/// Uninterrupted run vs. killed-and-resumed run with `threads` (resumed with `resume_threads`
/// given explicitly, or none): same JSON summary, same results arrays.
fn killed_and_resumed_equals_uninterrupted(threads: &str, resume_threads: Option<&str>, every: &str) {
    killed_and_resumed_with(threads, resume_threads, every, &[]);
}

/// `--set KEY=VALUE` for each of `kv`, as command-line arguments.
fn set_args<'a>(kv: &[&'a str]) -> Vec<&'a str> {
    kv.iter().flat_map(|k| ["--set", *k]).collect()
}

/// [`killed_and_resumed_equals_uninterrupted`] with `extra` config arguments.
fn killed_and_resumed_with(threads: &str, resume_threads: Option<&str>, every: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (a, b, ck) = (d.join("a.h5"), d.join("b.h5"), d.join("run.ckpt"));
    let mut base = vec!["run", QUICKSTART, "-q", "--json", "--threads", threads];
    base.extend_from_slice(&HX3);
    base.extend_from_slice(extra);
    let whole = summary(&hxsim(&[&base[..], &["-o", p(&a)]].concat(), d));
    start_and_kill(
        &[&base[..], &["--no-output", "--checkpoint", p(&ck), "--checkpoint-every", every]].concat(),
        &ck,
        d,
    );
    let mut resume = vec!["run", "--resume", p(&ck), "-q", "--json", "-o", p(&b)];
    if let Some(t) = resume_threads {
        resume.extend_from_slice(&["--threads", t]);
    }
    let out = hxsim(&resume, d);
    let resumed = summary(&out);
    assert_eq!(whole, resumed, "threads {threads}: resumed summary differs");
    let (x, y) = (arrays(&a), arrays(&b));
    let names = |v: &[(String, Vec<u64>)]| v.iter().map(|e| e.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&x), names(&y), "threads {threads}: datasets");
    for ((n, u), (_, v)) in x.iter().zip(&y) {
        let first = u.iter().zip(v).position(|(a, b)| a != b);
        assert!(
            u.len() == v.len() && first.is_none(),
            "threads {threads}: {n} differs (lengths {} and {}, first difference at {first:?})",
            u.len(),
            v.len()
        );
    }
    // The resumed run went on checkpointing to the same file (the saved run's settings).
    assert!(ck.exists());
}

#[test]
fn sigkill_and_resume_gives_the_uninterrupted_results_one_thread() {
    killed_and_resumed_equals_uninterrupted("1", None, "3000");
}

#[test]
fn sigkill_and_resume_gives_the_uninterrupted_results_two_threads() {
    killed_and_resumed_equals_uninterrupted("2", Some("2"), "2500");
}

/// The checkpoint holds one record per switch, not per partition: it resumes with another thread
/// count and gives the same results.
#[test]
fn sigkill_and_resume_with_two_threads_from_one() {
    killed_and_resumed_equals_uninterrupted("1", Some("2"), "3000");
}

#[test]
fn sigkill_and_resume_with_one_thread_from_two() {
    killed_and_resumed_equals_uninterrupted("2", Some("1"), "2500");
}

/// The router options with state of their own (per-VC server credits, per-VC crossbar times, the
/// injection throttle) survive a checkpoint, also across thread counts.
#[test]
fn sigkill_and_resume_with_per_vc_injection_and_allocation() {
    let extra = set_args(&[
        "router.injection_vcs=any",
        "router.allocation=vc",
        "router.injection_throttle=switch",
        "traffic.load=1.0",
    ]);
    killed_and_resumed_with("1", Some("2"), "3000", &extra);
}

/// SurePath keeps, per switch, candidate lists of waiting heads and what selection learnt of each
/// output port; neither is saved, and a resumed run must learn them afresh from the restored
/// state (debug builds check every kept cost against its port), also across thread counts.
#[test]
fn sigkill_and_resume_with_surepath_kept_selection() {
    let extra = set_args(&["routing.algorithm=surepath-polarized", "router.allocation=vc", "traffic.load=0.9"]);
    killed_and_resumed_with("1", Some("2"), "3000", &extra);
}

/// With `router.reroute = "output-frees"` a waiting head's mark holds until the crossbar output
/// it chose frees; the marks are saved with the router state, so a resumed run skips the same
/// turns, also on another thread count.
#[test]
fn sigkill_and_resume_with_heads_waiting_for_their_output() {
    let extra = set_args(&["routing.algorithm=surepath-polarized", "router.reroute=output-frees", "traffic.load=0.9"]);
    killed_and_resumed_with("2", Some("1"), "3000", &extra);
}

/// Failure events: a checkpoint taken after one event and before the routing's rebuild resumes
/// with the model after the event and rebuilds at the same cycle; a later event happens as in
/// the uninterrupted run (also with another thread count).
#[test]
fn sigkill_and_resume_across_failure_events() {
    let extra = set_args(&[
        "routing.algorithm=surepath-polarized",
        "faults.reconfigure_cycles=1000",
        "faults.events=[{cycle=1000, links=[[0,0],[7,2]]}, {cycle=2500, switches=[9]}, {cycle=4200, random_links=4}]",
    ]);
    killed_and_resumed_with("1", Some("2"), "3000", &extra);
}

/// End-to-end retransmission: a checkpoint at the break of an event (every 3,000 cycles, the
/// event at 3,000) holds the notices of its losses not yet sent to their sources; later resends
/// are pending messages and per-server counts. Minimal strands packets after each event.
#[test]
fn sigkill_and_resume_with_retransmission() {
    let extra = set_args(&[
        "routing.algorithm=minimal",
        "traffic.load=0.8",
        "faults.reconfigure_cycles=300",
        "faults.retransmit_cycles=400",
        "faults.events=[{cycle=3000, random_links=8}, {cycle=4500, links=[[0,0]]}]",
    ]);
    killed_and_resumed_with("2", Some("1"), "3000", &extra);
}

/// `output.link_series`: the per-class series (summed in the saved statistics, their next buffer
/// census set again from the resume cycle) are those of the uninterrupted run, also across thread
/// counts and a failure event.
#[test]
fn sigkill_and_resume_with_the_link_series() {
    let extra = set_args(&[
        "output.link_series=true",
        "routing.algorithm=surepath-polarized",
        "faults.events=[{cycle=1000, links=[[0,0],[7,2]]}]",
    ]);
    killed_and_resumed_with("2", Some("1"), "3000", &extra);
}

/// The end-to-end injection window: the per-server outstanding counters are in the switch records
/// and the acknowledgements in flight are pending messages; both must survive, also across thread
/// counts (a window of 2 past saturation keeps servers waiting for acknowledgements all the time).
#[test]
fn sigkill_and_resume_with_the_injection_window() {
    let extra = set_args(&["router.injection_throttle=window", "router.injection_window=2", "traffic.load=1.0"]);
    killed_and_resumed_with("1", Some("2"), "3000", &extra);
}

/// The all-to-all shift's position in each server's walk (its packets generated so far) is saved:
/// a resume that started every server's walk over would send to other destinations.
#[test]
fn sigkill_and_resume_with_the_all_to_all_shift() {
    let extra = set_args(&["traffic.pattern=all-to-all-shift", "traffic.load=0.6"]);
    killed_and_resumed_with("1", Some("2"), "3000", &extra);
}

/// Checkpoints every few windows in one process, without a kill: the run's summary is unchanged by
/// the pauses, and resuming the last checkpoint (taken near the end) gives the same summary again.
#[test]
fn pausing_for_checkpoints_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ck = d.join("c.ckpt");
    let args = ["run", QUICKSTART, "-q", "--json", "--no-output", "--threads", "2"];
    let whole = summary(&hxsim(&args, d));
    let paused = summary(&hxsim(&[&args[..], &["--checkpoint", p(&ck), "--checkpoint-every", "700"]].concat(), d));
    assert_eq!(whole, paused);
    let resumed = summary(&hxsim(&["run", "--resume", p(&ck), "-q", "--json", "--no-output"], d));
    assert_eq!(whole, resumed);
}

fn exits_2_naming(out: &Output, flag: &str, words: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(flag) && err.contains(words), "expected `{flag}` and `{words}` in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_resumes_exit_2_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ck = d.join("c.ckpt");
    let out = hxsim(&["run", QUICKSTART, "-q", "--no-output", "--checkpoint", p(&ck), "--checkpoint-every", "1000"], d);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let good = std::fs::read(&ck).unwrap();
    let missing = d.join("missing.ckpt");
    exits_2_naming(&hxsim(&["run", "--resume", p(&missing), "-q", "--no-output"], d), "--resume", "read");
    let cut = write(d, "cut.ckpt", &good[..good.len() / 2]);
    exits_2_naming(&hxsim(&["run", "--resume", p(&cut), "-q", "--no-output"], d), "--resume", "truncated");
    let mut flipped = good.clone();
    let i = flipped.len() - 100;
    flipped[i] ^= 0x40;
    let flipped = write(d, "flip.ckpt", &flipped);
    exits_2_naming(&hxsim(&["run", "--resume", p(&flipped), "-q", "--no-output"], d), "--resume", "corrupt");
    // Another version: the version string is stored in clear after the magic and format number.
    let version = format!("hxsim {} ", env!("CARGO_PKG_VERSION"));
    let at = good.windows(version.len()).position(|w| w == version.as_bytes()).expect("version in the file");
    let mut other = good.clone();
    other[at + 6] = b'9';
    let other = write(d, "other.ckpt", &other);
    exits_2_naming(&hxsim(&["run", "--resume", p(&other), "-q", "--no-output"], d), "--resume", "written by");
    let notckpt = write(d, "config.toml", &std::fs::read(QUICKSTART).unwrap());
    exits_2_naming(&hxsim(&["run", "--resume", p(&notckpt), "-q", "--no-output"], d), "--resume", "not one");
    // A file of the previous format (one record per partition) is named as such.
    let mut old = good.clone();
    old[8..12].copy_from_slice(&1u32.to_le_bytes());
    let old = write(d, "old.ckpt", &old);
    exits_2_naming(&hxsim(&["run", "--resume", p(&old), "-q", "--no-output"], d), "--resume", "checkpoint format 1");
    // More threads than switches, and a config next to --resume.
    exits_2_naming(
        &hxsim(&["run", "--resume", p(&ck), "--threads", "100000", "-q", "--no-output"], d),
        "--threads",
        "number of switches",
    );
    let both = hxsim(&["run", QUICKSTART, "--resume", p(&ck), "-q", "--no-output"], d);
    assert_eq!(both.status.code(), Some(2), "{}", text(&both.stderr));
    // --checkpoint never replaces a file that is not a checkpoint.
    let precious = write(d, "notes.txt", b"precious");
    let out = hxsim(&["run", QUICKSTART, "-q", "--no-output", "--checkpoint", p(&precious)], d);
    exits_2_naming(&out, "--checkpoint", "not one");
    assert_eq!(std::fs::read(&precious).unwrap(), b"precious");
    // The good checkpoint was never touched by the failed resumes.
    assert_eq!(std::fs::read(&ck).unwrap(), good);
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let f = dir.join(name);
    std::fs::write(&f, bytes).unwrap();
    f
}

/// SIGTERM (as Slurm sends at the time limit) writes a checkpoint at the next window and exits
/// 128 + 15; resuming it completes the run with the uninterrupted results.
#[test]
fn sigterm_checkpoints_and_resume_completes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ck = d.join("t.ckpt");
    let mut base = vec!["run", QUICKSTART, "-q", "--json", "--no-output"];
    base.extend_from_slice(&HX3);
    let whole = summary(&hxsim(&base, d));
    let child =
        start_until_checkpoint(&[&base[..], &["--checkpoint", p(&ck), "--checkpoint-every", "3000"]].concat(), &ck, d);
    let first = std::fs::read(&ck).unwrap();
    // SAFETY: a plain kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(128 + 15), "{}", text(&out.stderr));
    assert_ne!(std::fs::read(&ck).unwrap(), first, "the signal wrote a later checkpoint");
    assert!(text(&out.stderr).contains("--resume"), "{}", text(&out.stderr));
    let resumed = summary(&hxsim(&["run", "--resume", p(&ck), "-q", "--json", "--no-output"], d));
    assert_eq!(whole, resumed);
}

/// The quickstart 4x4 HyperX under SurePath-Polarized, warmed up for 2000 cycles, measured for
/// `measure` more.
fn warm(measure: &str) -> Vec<String> {
    let m = format!("simulation.measure_cycles={measure}");
    ["--set", "routing.algorithm=surepath-polarized", "--set", m.as_str()].map(String::from).to_vec()
}

/// A warm-up run of the quickstart with config arguments `args` that checkpoints every `every`
/// cycles into `d/warm.ckpt`: the checkpoint's path.
fn warm_checkpoint(d: &Path, every: &str, args: &[&str]) -> std::path::PathBuf {
    let ck = d.join("warm.ckpt");
    let run = ["run", QUICKSTART, "-q", "--no-output", "--checkpoint", p(&ck), "--checkpoint-every", every];
    let out = hxsim(&[&run[..], args].concat(), d);
    assert!(out.status.success(), "{}", text(&out.stderr));
    ck
}

/// The cycle a checkpoint resumes at, as the refusal of an event before it says (`at least R`).
fn resume_cycle(ck: &Path, d: &Path) -> u64 {
    let out = hxsim(
        &["run", "--resume", p(ck), "-q", "--no-output", "--set", "faults.events=[{cycle=1, random_links=1}]"],
        d,
    );
    exits_2_naming(&out, "faults.events[0].cycle", "at least");
    let err = text(&out.stderr);
    let at = err.find("at least ").unwrap() + "at least ".len();
    err[at..].split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
}

#[test]
fn scenarios_from_one_checkpoint_equal_whole_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let warm_args = warm("1000");
    let ck = warm_checkpoint(d, "2000", &warm_args.iter().map(String::as_str).collect::<Vec<_>>());
    let saved = std::fs::read(&ck).unwrap();
    let r = resume_cycle(&ck, d);
    assert!((2000..3000).contains(&r), "the checkpoint after the warm-up resumes at {r}");
    // An event at the resume cycle itself (applied to the restored state), and two later ones.
    let events = [
        format!("[{{cycle={r}, random_links=3}}]"),
        format!("[{{cycle={r}, switches=[3]}}, {{cycle={}, random_links=2}}]", r + 400),
    ];
    let sweep_out = d.join("s.h5");
    let ev_axis = format!("faults.events={}", events.join(","));
    let out = hxsim(
        &[
            "sweep",
            "--from",
            p(&ck),
            "--set",
            &ev_axis,
            "--set",
            "simulation.measure_cycles=1000,1200",
            "-q",
            "-j",
            "2",
            "-o",
            p(&sweep_out),
        ],
        d,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let f = hdf5::File::open(&sweep_out).unwrap();
    // In the order the points finished (with two jobs): sorted, they are in the order of the grid.
    let mut groups: Vec<String> = f.group("points").unwrap().member_names().unwrap();
    groups.sort();
    assert_eq!(groups.len(), 4);
    let mut accepted = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        let (ev, measure) = (&events[i / 2], ["1000", "1200"][i % 2]);
        let set = [format!("faults.events={ev}"), format!("simulation.measure_cycles={measure}")];
        let resumed_h5 = d.join(format!("r{i}.h5"));
        // Resumed with one thread and with two (the events are applied to every partition).
        let threads = ["1", "2"][i % 2];
        let resumed = hxsim(
            &[
                "run",
                "--resume",
                p(&ck),
                "--set",
                &set[0],
                "--set",
                &set[1],
                "--threads",
                threads,
                "-q",
                "--json",
                "-o",
                p(&resumed_h5),
            ],
            d,
        );
        let mut whole_args: Vec<String> = ["run", QUICKSTART, "-q", "--json", "-o"].map(String::from).to_vec();
        let whole_h5 = d.join(format!("w{i}.h5"));
        whole_args.push(p(&whole_h5).into());
        whole_args.extend(warm(measure));
        whole_args.extend(["--set".into(), set[0].clone()]);
        let whole = hxsim(&whole_args.iter().map(String::as_str).collect::<Vec<_>>(), d);
        let (resumed, whole) = (summary(&resumed), summary(&whole));
        assert_eq!(resumed, whole, "point {i}: {set:?}");
        assert_eq!(whole["failure_events"].as_array().unwrap().len(), 1 + i / 2, "point {i}");
        let point = arrays_in(&sweep_out, &format!("points/{g}"));
        assert_eq!(point, arrays(&resumed_h5), "point {i}: the sweep's group against run --resume");
        assert_eq!(point, arrays(&whole_h5), "point {i}: the sweep's group against the whole run");
        accepted.push(whole["accepted_load"].as_f64().unwrap());
    }
    // The scenarios differ (a failed switch loses its servers' traffic).
    assert_ne!(accepted[0], accepted[2]);
    // Runs resumed under other events write no checkpoint over the saved state.
    assert_eq!(std::fs::read(&ck).unwrap(), saved);
}

#[test]
fn scenarios_from_a_checkpoint_refuse_what_the_saved_state_depends_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let warm_args = warm("1000");
    let ck = warm_checkpoint(d, "2000", &warm_args.iter().map(String::as_str).collect::<Vec<_>>());
    let r = resume_cycle(&ck, d);
    for (set, key) in [
        ("traffic.load=0.3", "traffic.load"),
        ("seed=2", "seed"),
        ("routing.algorithm=surepath-omni", "routing.algorithm"),
        ("router.input_buffer_packets=3", "router.input_buffer_packets"),
        ("output.sample_cycles=50", "output.sample_cycles"),
        ("simulation.warmup_cycles=1000", "simulation.warmup_cycles"),
        ("faults.random_links=2", "faults.random_links"),
    ] {
        exits_2_naming(&hxsim(&["sweep", "--from", p(&ck), "--set", set, "-q", "--no-output"], d), key, "checkpoint");
        exits_2_naming(&hxsim(&["run", "--resume", p(&ck), "--set", set, "-q", "--no-output"], d), key, "checkpoint");
    }
    // An event before the resume cycle, in one point of a sweep: nothing runs.
    let before = format!("faults.events=[{{cycle={}, random_links=1}}],[{{cycle={}, random_links=1}}]", r + 10, r - 1);
    let out = hxsim(&["sweep", "--from", p(&ck), "--set", &before, "-q", "--no-output"], d);
    exits_2_naming(&out, "faults.events[0].cycle", &format!("{}", r - 1));
    assert!(text(&out.stderr).contains(&format!("at least {r}")), "{}", text(&out.stderr));
    assert!(text(&out.stdout).is_empty(), "no point ran: {}", text(&out.stdout));
    // A measured window that ends before the resume cycle.
    let short = format!("simulation.measure_cycles={}", r - 2000 - 1);
    exits_2_naming(
        &hxsim(&["run", "--resume", p(&ck), "--set", &short, "-q", "--no-output"], d),
        "simulation.measure_cycles",
        "after cycle",
    );
    // CONFIG and --from together.
    let both = hxsim(&["sweep", QUICKSTART, "--from", p(&ck), "--set", "seed=1", "-q", "--no-output"], d);
    assert_eq!(both.status.code(), Some(2), "{}", text(&both.stderr));
}

#[test]
fn scenarios_whose_routers_need_more_vcs_are_refused() {
    // Polarized's VC ladder grows where failures lengthen routes: the routers of a run with these
    // failures have more VCs than those of the warm-up, whose state cannot hold them.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base =
        set_args(&["routing.algorithm=polarized", "simulation.warmup_cycles=500", "simulation.measure_cycles=500"]);
    let ck = warm_checkpoint(d, "500", &base);
    let r = resume_cycle(&ck, d);
    let events = format!("faults.events=[{{cycle={r}, random_links=3}}]");
    let cfg = |extra: &[String]| {
        let mut sets: Vec<String> = base.chunks(2).map(|c| c[1].to_string()).collect();
        sets.extend(extra.iter().cloned());
        hxsim::config::load(Path::new(QUICKSTART), &sets).unwrap()
    };
    let (warm_vcs, event_vcs) = (
        hxsim::sim::router_vcs(&cfg(&[])).unwrap(),
        hxsim::sim::router_vcs(&cfg(std::slice::from_ref(&events))).unwrap(),
    );
    assert!(event_vcs > warm_vcs, "the events need more VCs ({event_vcs} against {warm_vcs})");
    let out = hxsim(&["run", "--resume", p(&ck), "--set", &events, "-q", "--no-output"], d);
    exits_2_naming(&out, "faults.events", &format!("checkpoint's {warm_vcs} VCs"));
    exits_2_naming(
        &hxsim(&["sweep", "--from", p(&ck), "--set", &events, "-q", "--no-output"], d),
        "faults.events",
        "VCs",
    );
}

#[test]
fn every_shipped_config_survives_the_round_trip_that_overrides_start_from() {
    // `run --resume --set` and `sweep --from` apply overrides to the checkpoint's config (stored
    // as JSON) written as TOML, and refuse any key that then differs: the round trip must give
    // the config back exactly, or every scenario of that config would be refused.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let cfg = hxsim::config::load(&path, &[]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let json: hxsim::config::Config = serde_json::from_str(&serde_json::to_string(&cfg).unwrap()).unwrap();
        let back = hxsim::config::parse_str(&toml::to_string(&json).unwrap(), "round trip", &[])
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(back, cfg, "{}", path.display());
        n += 1;
    }
    assert!(n > 0, "no config in {}", dir.display());
}

/// Retransmission may be turned on for scenarios after a warm-up without it (nothing was lost
/// before the checkpoint): the resumed run equals the whole run with it, and loses packets that
/// its sources send again.
#[test]
fn retransmission_may_start_with_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // SurePath's VCs do not depend on the network (a hop-indexed ladder's would need more routers'
    // VCs than the warm-up's after the failures, which is refused).
    let base =
        set_args(&["routing.algorithm=surepath-polarized", "traffic.load=0.9", "simulation.measure_cycles=1500"]);
    let ck = warm_checkpoint(d, "2000", &base);
    let r = resume_cycle(&ck, d);
    let event = format!("faults.events=[{{cycle={}, random_links=12}}]", r + 200);
    let scenario = set_args(&[&event, "faults.reconfigure_cycles=300", "faults.retransmit_cycles=250"]);
    let mut resume = vec!["run", "--resume", p(&ck), "-q", "--json", "--no-output"];
    resume.extend_from_slice(&scenario);
    let resumed = summary(&hxsim(&resume, d));
    let mut whole = vec!["run", QUICKSTART, "-q", "--json", "--no-output"];
    whole.extend_from_slice(&base);
    whole.extend_from_slice(&scenario);
    let whole = summary(&hxsim(&whole, d));
    assert_eq!(resumed, whole);
    assert!(whole["packets_retransmitted"].as_u64().unwrap() > 0, "{whole:?}");
}
