//! Checkpoint and restart through the binary: a run killed with SIGKILL after a checkpoint and
//! resumed from it (with the same or another thread count) prints the same JSON summary and writes
//! the same results arrays as a run that was never interrupted; bad resumes exit 2 and name the
//! flag.

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
    walk(&f, "", &mut out);
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
    let extra = [
        "--set",
        "router.injection_vcs=any",
        "--set",
        "router.allocation=vc",
        "--set",
        "router.injection_throttle=switch",
        "--set",
        "traffic.load=1.0",
    ];
    killed_and_resumed_with("1", Some("2"), "3000", &extra);
}

/// SurePath keeps, per switch, candidate lists of waiting heads and what selection learnt of each
/// output port; neither is saved, and a resumed run must learn them afresh from the restored
/// state (debug builds check every kept cost against its port), also across thread counts.
#[test]
fn sigkill_and_resume_with_surepath_kept_selection() {
    let extra =
        ["--set", "routing.algorithm=surepath-polarized", "--set", "router.allocation=vc", "--set", "traffic.load=0.9"];
    killed_and_resumed_with("1", Some("2"), "3000", &extra);
}

/// Failure events: a checkpoint taken after one event and before the routing's rebuild resumes
/// with the model after the event and rebuilds at the same cycle; a later event happens as in
/// the uninterrupted run (also with another thread count).
#[test]
fn sigkill_and_resume_across_failure_events() {
    let extra = [
        "--set",
        "routing.algorithm=surepath-polarized",
        "--set",
        "faults.reconfigure_cycles=1000",
        "--set",
        "faults.events=[{cycle=1000, links=[[0,0],[7,2]]}, {cycle=2500, switches=[9]}, {cycle=4200, random_links=4}]",
    ];
    killed_and_resumed_with("1", Some("2"), "3000", &extra);
}

/// `output.link_series`: the per-class series (summed in the saved statistics, their next buffer
/// census set again from the resume cycle) are those of the uninterrupted run, also across thread
/// counts and a failure event.
#[test]
fn sigkill_and_resume_with_the_link_series() {
    let extra = [
        "--set",
        "output.link_series=true",
        "--set",
        "routing.algorithm=surepath-polarized",
        "--set",
        "faults.events=[{cycle=1000, links=[[0,0],[7,2]]}]",
    ];
    killed_and_resumed_with("2", Some("1"), "3000", &extra);
}

/// The end-to-end injection window: the per-server outstanding counters are in the switch records
/// and the acknowledgements in flight are pending messages; both must survive, also across thread
/// counts (a window of 2 past saturation keeps servers waiting for acknowledgements all the time).
#[test]
fn sigkill_and_resume_with_the_injection_window() {
    let extra = [
        "--set",
        "router.injection_throttle=window",
        "--set",
        "router.injection_window=2",
        "--set",
        "traffic.load=1.0",
    ];
    killed_and_resumed_with("1", Some("2"), "3000", &extra);
}

/// The all-to-all shift's position in each server's walk (its packets generated so far) is saved:
/// a resume that started every server's walk over would send to other destinations.
#[test]
fn sigkill_and_resume_with_the_all_to_all_shift() {
    let extra = ["--set", "traffic.pattern=all-to-all-shift", "--set", "traffic.load=0.6"];
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
