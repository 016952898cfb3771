//! `mpirun -np R hxsim run` gives the single-process summary (apart from the timing keys) and results
//! file for several rank and thread counts (architecture spec, property 3), and streams the time
//! series during the run. Needs Open MPI's `mpirun` (see scripts/test-mpi.sh, which installs it);
//! compiled only with `--features mpi`.
#![cfg(feature = "mpi")]

use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

/// Keys that measure the machine rather than the experiment.
const TIMING_KEYS: [&str; 3] = ["wall_seconds", "hops_per_second", "peak_memory_bytes"];

/// A small 3-D HyperX (64 switches, 256 servers) that runs in well under a second in a debug build.
const SMALL: [&str; 8] = [
    "--set",
    "topology.sides=[4,4,4]",
    "--set",
    "topology.servers_per_switch=4",
    "--set",
    "simulation.warmup_cycles=300",
    "--set",
    "simulation.measure_cycles=600",
];

fn summary(out: std::process::Output, what: &str) -> Value {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{what}: exactly one summary line expected (rank 0 only), got:\n{text}");
    let mut v: Value = serde_json::from_str(lines[0]).unwrap();
    for k in TIMING_KEYS {
        assert!(v.as_object_mut().unwrap().remove(k).is_some(), "{what}: no `{k}`");
    }
    // Failure events: the rebuild's wall time is a timing key too.
    if let Some(events) = v.get_mut("failure_events").and_then(|e| e.as_array_mut()) {
        for e in events {
            e.as_object_mut().unwrap().remove("rebuild_seconds");
        }
    }
    v
}

/// `hxsim run` on the small 3-D config with `threads` threads, the same for one process and for ranks.
fn run_args(threads: usize, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> =
        ["run", "configs/hyperx-3d-8.toml", "--json", "--quiet", "--no-output", "--threads"].map(String::from).into();
    a.push(threads.to_string());
    a.extend(SMALL.iter().chain(extra).map(|s| s.to_string()));
    a
}

fn single(extra: &[&str], threads: usize) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_hxsim")).args(run_args(threads, extra)).output().unwrap();
    summary(out, &format!("single process, {threads} threads"))
}

fn mpirun(ranks: usize, threads: usize, extra: &[&str]) -> Value {
    let out = Command::new("mpirun")
        .args(["-np", &ranks.to_string(), "--oversubscribe", "--bind-to", "none"])
        .arg(env!("CARGO_BIN_EXE_hxsim"))
        .args(run_args(threads, extra))
        // Root in containers; ranks that wait should not spin on a core another rank needs.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot start mpirun ({e}); install openmpi-bin (scripts/test-mpi.sh does)"));
    summary(out, &format!("mpirun -np {ranks}, {threads} threads"))
}

#[test]
fn ranks_give_the_single_process_summary() {
    let reference = single(&[], 1);
    assert!(reference["packets_delivered"].as_u64().unwrap() > 1000, "{reference}");
    assert_eq!(single(&[], 3), reference, "3 threads");
    for (ranks, threads) in [(2, 1), (3, 1), (2, 2), (4, 1)] {
        assert_eq!(mpirun(ranks, threads, &[]), reference, "{ranks} ranks x {threads} threads");
    }
}

#[test]
fn ranks_give_the_single_process_summary_for_a_drained_workload() {
    // A fixed workload ends by draining, which all ranks must notice at the same window, and goes
    // through idle stretches at the end, which all ranks must jump over together.
    let fixed =
        ["--set", "traffic.mode=fixed", "--set", "traffic.workload_phits=160", "--set", "partition.method=multilevel"];
    let reference = single(&fixed, 1);
    assert!(reference["completion_cycles"].as_u64().unwrap() > 0, "{reference}");
    assert_eq!(mpirun(2, 1, &fixed), reference, "2 ranks");
    assert_eq!(mpirun(3, 2, &fixed), reference, "3 ranks x 2 threads");
}

/// Failure events: every rank stops at each event and each rebuild and changes its model there;
/// the packets lost, stranded and delivered are those of one process.
#[test]
fn ranks_give_the_single_process_summary_with_failure_events() {
    for routing in ["routing.algorithm=surepath-polarized", "routing.algorithm=minimal"] {
        let events = [
            "--set",
            routing,
            "--set",
            "traffic.load=0.8",
            "--set",
            "faults.reconfigure_cycles=100",
            "--set",
            "faults.events=[{cycle=400, random_links=20}, {cycle=650, switches=[5]}]",
        ];
        let reference = single(&events, 1);
        assert!(reference["packets_lost"].as_u64().unwrap() > 0, "{reference}");
        assert_eq!(mpirun(2, 1, &events), reference, "{routing}: 2 ranks");
        assert_eq!(mpirun(3, 2, &events), reference, "{routing}: 3 ranks x 2 threads");
    }
}

/// End-to-end retransmission: a lost packet's notice travels to its source's rank as an engine
/// message, and each switch queues the packets it gets back in an order of their own: ranks give
/// the single-process summary.
#[test]
fn ranks_give_the_single_process_summary_with_retransmission() {
    let events = [
        "--set",
        "routing.algorithm=minimal",
        "--set",
        "traffic.load=0.8",
        "--set",
        "faults.reconfigure_cycles=100",
        "--set",
        "faults.retransmit_cycles=150",
        "--set",
        "faults.events=[{cycle=400, random_links=20}, {cycle=650, switches=[5]}]",
    ];
    let reference = single(&events, 1);
    assert!(reference["packets_retransmitted"].as_u64().unwrap() > 0, "{reference}");
    assert_eq!(mpirun(2, 1, &events), reference, "2 ranks");
    assert_eq!(mpirun(3, 2, &events), reference, "3 ranks x 2 threads");
}

/// The end-to-end injection window sends acknowledgements between switches of different ranks
/// (engine messages like any other): past saturation, where servers wait for them all the time,
/// ranks still give the single-process summary.
#[test]
fn ranks_give_the_single_process_summary_with_the_injection_window() {
    let window = [
        "--set",
        "routing.algorithm=surepath-omni",
        "--set",
        "traffic.pattern=dimension-complement-reverse",
        "--set",
        "traffic.load=1.0",
        "--set",
        "router.injection_throttle=window",
        "--set",
        "router.injection_window=4",
    ];
    let reference = single(&window, 1);
    assert_eq!(mpirun(2, 1, &window), reference, "2 ranks");
    assert_eq!(mpirun(3, 2, &window), reference, "3 ranks x 2 threads");
}

#[test]
fn a_foreign_launcher_is_refused() {
    // What a binary started by another MPI's mpirun sees: the launcher says 2, MPI says 1.
    let out = Command::new(env!("CARGO_BIN_EXE_hxsim"))
        .args(["run", "configs/quickstart.toml", "--json", "--quiet", "--no-output"])
        .env("PMI_SIZE", "2")
        .env_remove("OMPI_COMM_WORLD_SIZE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("PMI_SIZE=2") && err.contains("world of 1"), "{err}");
    assert!(out.stdout.is_empty());
}

fn read_u64s(g: &hdf5::Group, name: &str) -> Vec<u64> {
    g.dataset(name).unwrap().read_raw::<u64>().unwrap()
}

/// `mpirun -np RANKS hxsim ARGS` as the tests run it (root in containers, more ranks than cores).
fn mpirun_command(ranks: usize, args: &[String]) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["-np", &ranks.to_string(), "--oversubscribe", "--bind-to", "none"])
        .arg(env!("CARGO_BIN_EXE_hxsim"))
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// Every `/timeseries` column of `a` equals that of `b`, bit for bit (NaN mean latencies too).
fn assert_same_timeseries(a: &hdf5::File, b: &hdf5::File, what: &str) {
    let (a, b) = (a.group("timeseries").unwrap(), b.group("timeseries").unwrap());
    let names = a.member_names().unwrap();
    assert_eq!(names, b.member_names().unwrap(), "{what}: timeseries columns");
    assert_eq!(names.len(), 10, "{what}: {names:?}");
    for name in &names {
        let (x, y) = (a.dataset(name).unwrap(), b.dataset(name).unwrap());
        // Every column is 8 bytes wide (u64, i64, f64): compare the bits.
        let bits = |d: &hdf5::Dataset| -> Vec<u64> {
            match name.as_str() {
                "in_flight" => d.read_raw::<i64>().unwrap().into_iter().map(|v| v as u64).collect(),
                "injected_load" | "accepted_load" | "mean_latency" => {
                    d.read_raw::<f64>().unwrap().into_iter().map(f64::to_bits).collect()
                }
                _ => d.read_raw::<u64>().unwrap(),
            }
        };
        let (x, y) = (bits(&x), bits(&y));
        assert!(!x.is_empty(), "{what}: timeseries/{name} is empty");
        assert_eq!(x, y, "{what}: timeseries/{name}");
    }
}

#[test]
fn rank_0_writes_the_one_results_file() {
    let dir = tempfile::tempdir().unwrap();
    let args = |p: &std::path::Path, threads: usize| -> Vec<String> {
        let mut a: Vec<String> = ["run", "configs/hyperx-3d-8.toml", "--quiet", "--json", "-o", p.to_str().unwrap()]
            .map(String::from)
            .to_vec();
        a.extend(["--threads".to_string(), threads.to_string()]);
        a.extend(SMALL.iter().map(|s| s.to_string()));
        a
    };
    let one = dir.path().join("one.h5");
    let out = Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args(&one, 1)).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for (ranks, threads) in [(2, 1), (3, 2)] {
        let what = format!("{ranks} ranks x {threads} threads");
        let path = dir.path().join(format!("r{ranks}.h5"));
        let out = mpirun_command(ranks, &args(&path, threads)).output().unwrap();
        assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
        let mut files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        files.sort();
        assert!(files.contains(&path.file_name().unwrap().to_owned()), "{what}: {files:?}");
        assert!(
            !files.iter().any(|f| f.to_string_lossy().ends_with(".partial")),
            "{what}: one file per run: {files:?}"
        );
        let b = hdf5::File::open(&path).unwrap();
        assert_eq!(b.attr("ranks").unwrap().read_scalar::<u64>().unwrap(), ranks as u64);
        // Streamed by one process, relayed from the ranks to rank 0 and streamed there: same rows
        // (and the file is complete).
        assert_same_results(&one, &path, &what);
    }
}

/// With two ranks, rank 0 appends time-series rows to `FILE.partial` while the run goes on, not
/// only at the end: a reader sees some but not all of the rows the config asks for (cycles /
/// `output.sample_cycles`), and they are the first rows of the finished file, which equals one
/// process's.
#[test]
fn ranks_stream_the_time_series_during_the_run() {
    const WARMUP: u64 = 300;
    // About 5 s with two ranks in the (optimised) test build: many flushes of the writer.
    const MEASURE: u64 = 39_700;
    const SAMPLE: u64 = 50;
    let rows = (WARMUP + MEASURE).div_ceil(SAMPLE) as usize;
    let dir = tempfile::tempdir().unwrap();
    let args = |p: &std::path::Path| -> Vec<String> {
        let mut a: Vec<String> = ["run", "configs/hyperx-3d-8.toml", "--quiet", "--json", "-o", p.to_str().unwrap()]
            .map(String::from)
            .to_vec();
        for set in [
            "topology.sides=[4,4,4]".to_string(),
            "topology.servers_per_switch=4".to_string(),
            format!("simulation.warmup_cycles={WARMUP}"),
            format!("simulation.measure_cycles={MEASURE}"),
            format!("output.sample_cycles={SAMPLE}"),
        ] {
            a.extend(["--set".to_string(), set]);
        }
        a
    };
    let file = dir.path().join("two.h5");
    let partial = dir.path().join("two.h5.partial");
    let mut child = mpirun_command(2, &args(&file))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start mpirun ({e}); install openmpi-bin (scripts/test-mpi.sh does)"));
    let start = Instant::now();
    // Rows read from the partial file while the run went on: `cycle` and `accepted_phits`.
    let mut seen: Option<(Vec<u64>, Vec<u64>)> = None;
    while child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < Duration::from_secs(300), "mpirun -np 2 did not finish in 300 s");
        std::thread::sleep(Duration::from_millis(20));
        // The writer may be in the middle of an append: a read that fails is tried again.
        let read = (|| -> Option<(Vec<u64>, Vec<u64>)> {
            let f = hxsim::output::hdf5::open_file(&partial).ok()?;
            let g = f.group("timeseries").ok()?;
            let cycle = g.dataset("cycle").ok()?.read_raw::<u64>().ok()?;
            let acc = g.dataset("accepted_phits").ok()?.read_raw::<u64>().ok()?;
            (cycle.len() == acc.len()).then_some((cycle, acc))
        })();
        if let Some((cycle, acc)) = read.filter(|(c, _)| !c.is_empty() && c.len() < rows) {
            assert!(!file.exists(), "the final name appears only when the file is finished");
            seen = Some((cycle, acc));
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "mpirun -np 2 failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr));
    let (cycle, acc) = seen
        .unwrap_or_else(|| panic!("no time-series rows were seen before the run of {} cycles ended", WARMUP + MEASURE));
    let b = hdf5::File::open(&file).unwrap();
    let ts = b.group("timeseries").unwrap();
    let all_cycles = read_u64s(&ts, "cycle");
    assert_eq!(all_cycles.len(), rows, "one row per {SAMPLE}-cycle interval of {} cycles", WARMUP + MEASURE);
    assert_eq!(all_cycles, (1..=rows as u64).map(|k| k * SAMPLE).collect::<Vec<_>>());
    assert_eq!(cycle[..], all_cycles[..cycle.len()], "rows streamed during the run are the file's first rows");
    assert_eq!(acc[..], read_u64s(&ts, "accepted_phits")[..acc.len()]);
    let one = dir.path().join("one.h5");
    let out = Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args(&one)).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_same_timeseries(&hdf5::File::open(&one).unwrap(), &b, "streamed from 2 ranks");
}

/// Ranks on networks whose switches differ: a HyperZ (servers on level 1 only, ports per level), a
/// fat tree, and a faulty HyperZ routed around its failed links and switch by ALIOD (issue 32) give
/// the single-process summary for 2 and 3 ranks, and the faulty one for 2 and 3 threads too.
#[test]
fn ranks_give_the_single_process_summary_on_hyperz_and_fat_trees() {
    let dir = tempfile::tempdir().unwrap();
    let hyperz = "kind = \"hyperz\"\nsides = [2,2]\nzones = [4,2,2]\nroots = [1,2,2]\ninternal_links = [1,2,1]";
    let faulty = format!(
        "{hyperz}\n[routing]\nalgorithm = \"aliod\"\nvc_policy = \"hyperz-b\"\n[faults]\nrandom_links = 4\nrandom_switches = 1"
    );
    for (name, topo) in [
        ("hyperz", hyperz.to_string()),
        ("fattree", "kind = \"fattree\"\nzones = [4,4,4]\nroots = [1,4,16]".to_string()),
        ("hyperz-faulty", faulty),
    ] {
        let path = dir.path().join(format!("{name}.toml"));
        let text = format!(
            "name = \"{name}\"\n[topology]\n{topo}\n[traffic]\nload = 0.8\n[simulation]\nwarmup_cycles = 300\nmeasure_cycles = 600\n"
        );
        std::fs::write(&path, text).unwrap();
        let args = |threads: usize| -> Vec<String> {
            let mut a: Vec<String> = ["run", path.to_str().unwrap(), "--json", "--quiet", "--no-output", "--threads"]
                .map(String::from)
                .into();
            a.push(threads.to_string());
            a
        };
        let out = Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args(1)).output().unwrap();
        let reference = summary(out, &format!("{name}, single process"));
        if name == "hyperz-faulty" {
            for threads in [2, 3] {
                let out = Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args(threads)).output().unwrap();
                assert_eq!(summary(out, &format!("{name}, {threads} threads")), reference, "{name}: {threads} threads");
            }
        }
        for (ranks, threads) in [(2, 1), (3, 1)] {
            let out = Command::new("mpirun")
                .args(["-np", &ranks.to_string(), "--oversubscribe", "--bind-to", "none"])
                .arg(env!("CARGO_BIN_EXE_hxsim"))
                .args(args(threads))
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
                .env("OMPI_MCA_mpi_yield_when_idle", "1")
                .output()
                .unwrap();
            assert_eq!(summary(out, &format!("{name}, {ranks} ranks")), reference, "{name}: {ranks} ranks");
        }
    }
}

/// The arrays of two results files agree bit for bit: time series, per-server and per-link counts,
/// latency histogram.
fn assert_same_results(a: &std::path::Path, b: &std::path::Path, what: &str) {
    let (a, b) = (hdf5::File::open(a).unwrap(), hdf5::File::open(b).unwrap());
    assert!(b.attr("complete").unwrap().read_scalar::<bool>().unwrap(), "{what}: complete");
    assert_same_timeseries(&a, &b, what);
    for col in ["injected_phits", "accepted_phits"] {
        let g = |f: &hdf5::File| read_u64s(&f.group("servers").unwrap(), col);
        assert_eq!(g(&a), g(&b), "{what}: servers/{col}");
    }
    let links = |f: &hdf5::File| read_u64s(&f.group("links").unwrap(), "phits");
    assert_eq!(links(&a), links(&b), "{what}: links/phits");
    let latency = |f: &hdf5::File| read_u64s(&f.group("latency").unwrap(), "packets");
    assert_eq!(latency(&a), latency(&b), "{what}: latency/packets");
}

/// Checkpoints with ranks (item "checkpoint and restart"): `mpirun -np 2` with `--checkpoint`,
/// SIGKILLed with all its ranks once a checkpoint exists, resumes to the uninterrupted
/// single-process results, with 2 ranks and with another layout (1 process x 3 threads, 3 ranks);
/// and a single-process checkpoint resumes with 2 ranks.
#[test]
fn checkpoints_resume_with_any_rank_count() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    // Long enough that the kill lands well before the end (a few seconds with two ranks).
    let model: Vec<String> = [
        "topology.sides=[4,4,4]",
        "topology.servers_per_switch=4",
        "simulation.warmup_cycles=300",
        "simulation.measure_cycles=30000",
    ]
    .iter()
    .flat_map(|v| ["--set".to_string(), v.to_string()])
    .collect();
    let run = |extra: &[String]| -> Vec<String> {
        let mut a: Vec<String> = ["run", "configs/hyperx-3d-8.toml", "--quiet", "--json"].map(String::from).to_vec();
        a.extend(model.iter().cloned());
        a.extend(extra.iter().cloned());
        a
    };
    let one = d.join("one.h5");
    let out = Command::new(env!("CARGO_BIN_EXE_hxsim"))
        .args(run(&["-o".into(), s(&one)]))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let reference = summary(out, "uninterrupted, one process");
    // Two ranks checkpointing every 3000 cycles, killed (mpirun and ranks: its process group) as
    // soon as the first checkpoint is in place.
    let ck = d.join("r2.ckpt");
    let mut child = mpirun_command(
        2,
        &run(&["--no-output".into(), "--checkpoint".into(), s(&ck), "--checkpoint-every".into(), "3000".into()]),
    )
    .process_group(0)
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap_or_else(|e| panic!("cannot start mpirun ({e}); install openmpi-bin (scripts/test-mpi.sh does)"));
    let start = Instant::now();
    while !ck.exists() {
        assert!(child.try_wait().unwrap().is_none(), "mpirun -np 2 ended before its first checkpoint");
        assert!(start.elapsed() < Duration::from_secs(300), "no checkpoint after 300 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: kill(2) of the process group of our own child.
    assert_eq!(unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) }, 0);
    let st = child.wait().unwrap();
    assert!(!st.success(), "the run finished before it could be killed");
    let saved = std::fs::read(&ck).unwrap();
    let resume = |ck: &std::path::Path, out: &std::path::Path, threads: &str| -> Vec<String> {
        ["run", "--resume", &s(ck), "--quiet", "--json", "-o", &s(out), "--threads", threads].map(String::from).to_vec()
    };
    // Each resume goes on checkpointing to its file: a copy each, all from the same state.
    for (ranks, threads) in [(2, "1"), (1, "3"), (3, "1")] {
        let what = format!("checkpoint of 2 ranks resumed with {ranks} ranks x {threads} threads");
        let ck = d.join(format!("r2-{ranks}x{threads}.ckpt"));
        std::fs::write(&ck, &saved).unwrap();
        let h5 = d.join(format!("r2-{ranks}x{threads}.h5"));
        let out = if ranks == 1 {
            Command::new(env!("CARGO_BIN_EXE_hxsim"))
                .args(resume(&ck, &h5, threads))
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .unwrap()
        } else {
            mpirun_command(ranks, &resume(&ck, &h5, threads)).output().unwrap()
        };
        assert_eq!(summary(out, &what), reference, "{what}");
        assert_same_results(&one, &h5, &what);
    }
    // A checkpoint of one process (2 threads) resumed by 2 ranks.
    let ck1 = d.join("p1.ckpt");
    let out = Command::new(env!("CARGO_BIN_EXE_hxsim"))
        .args(run(&[
            "--no-output".into(),
            "--threads".into(),
            "2".into(),
            "--checkpoint".into(),
            s(&ck1),
            "--checkpoint-every".into(),
            "20000".into(),
        ]))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(summary(out, "one process checkpointing"), reference);
    let h5 = d.join("p1-2x1.h5");
    let out = mpirun_command(2, &resume(&ck1, &h5, "1")).output().unwrap();
    assert_eq!(summary(out, "one-process checkpoint resumed with 2 ranks"), reference);
    assert_same_results(&one, &h5, "one-process checkpoint resumed with 2 ranks");
}

/// Issue 37: a run stopped by SIGTERM under mpirun exits 143, as the exit-code table of docs/commands.md says, so that
/// requeue scripts see it. mpirun itself, sent SIGTERM, aborts the job and exits 1 whatever the
/// ranks exit with (Open MPI 4.1); `jobs/local-mpirun.sh` forwards the signal and reads the exit
/// code back from the run's JSON record (it exited 1).
#[test]
fn a_sigterm_through_the_mpirun_script_exits_143() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("r.json");
    let mut child = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/jobs/local-mpirun.sh"))
        .args(["2", "1", "configs/quickstart.toml", "-q", "--no-output", "--json-out"])
        .arg(&record)
        .args(["--set", "simulation.measure_cycles=100000000"])
        .env("HXSIM", env!("CARGO_BIN_EXE_hxsim"))
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Long enough for both ranks to be simulating (setup done).
    std::thread::sleep(Duration::from_secs(4));
    // SAFETY: signalling our own child.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "the script did not end");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(143), "{err}");
    let r: Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    assert_eq!(r["complete"], false);
    assert!(r["status"].as_str().unwrap().starts_with("interrupted by SIGTERM"), "{r}");
}

/// Every built-in workload kernel (tasks on random servers, two iterations with computation
/// between them) gives the single-process summary, makespan and task finish statistics included,
/// on 2 and 3 ranks.
#[test]
fn ranks_give_the_single_process_summary_for_every_workload_kernel() {
    for k in hxsim::workload::kernels::REGISTRY {
        let tasks = if k.name == "pingpong" { "2" } else { "64" };
        let sets = [
            format!("workload.kernel=\"{}\"", k.name),
            format!("workload.tasks={tasks}"),
            "workload.bytes=1500".to_string(),
            "workload.iterations=2".to_string(),
            "workload.compute_cycles=30".to_string(),
            "workload.mapping=\"random\"".to_string(),
        ];
        let extra: Vec<&str> = sets.iter().flat_map(|s| ["--set", s.as_str()]).collect();
        let reference = single(&extra, 1);
        assert!(reference["makespan_cycles"].as_u64().is_some_and(|m| m > 0), "{}: {reference}", k.name);
        for ranks in [2, 3] {
            assert_eq!(mpirun(ranks, 1, &extra), reference, "{}: {ranks} ranks", k.name);
        }
    }
}
