//! Workloads with causal dependencies against the zero-load model: on an idle network a message of
//! `k` packets of `P` phits crossing `H` switches takes `(k - 1) P + L + H (X + L) + P - 1` cycles
//! from its send's start to its last tail (the zero-load latency of `tests/model.rs`, plus `P`
//! cycles per packet ahead of the last on the server's link), and a dependent send starts the cycle
//! the receive completes. The expected makespans below are built from that and the kernels'
//! definitions, not read from hxsim. Also: the results do not depend on the thread count, and bad
//! workloads are refused.

use hxsim::config::{parse_str, Config};
use hxsim::engine::Progress;
use hxsim::sim::{self, RunOptions, RunResult};

/// Link latency `L`, crossbar latency `X`, packet length `P` of the configs below.
const L: u64 = 3;
const X: u64 = 2;
const P: u64 = 16;

/// A 1-D HyperX of `n` switches (a complete graph) with one server each: every pair of tasks has
/// its own link, so simultaneous messages between distinct pairs never share one.
fn line(n: usize, kernel: &str, sets: &[String]) -> Config {
    let base = format!(
        "name = \"w\"\n[topology]\nsides = [{n}]\nservers_per_switch = 1\n[link]\nlatency = {L}\n\
         [router]\ncrossbar_latency = {X}\n[packet]\nsize_phits = {P}\n[workload]\nkernel = \"{kernel}\"\n\
         phit_bytes = 8\n"
    );
    parse_str(&base, "test", sets).expect("valid test config")
}

fn run(cfg: &Config, threads: usize) -> RunResult {
    sim::run(cfg, &RunOptions { threads, ..Default::default() }, &Progress::default()).expect("run succeeds")
}

/// Cycles from a message's start to its last tail on an idle network.
fn message(bytes: u64, switches: u64) -> u64 {
    let k = bytes.div_ceil(8).div_ceil(P).max(1);
    (k - 1) * P + L + switches * (X + L) + P - 1
}

fn makespan(r: &RunResult) -> u64 {
    assert!(r.complete, "the workload completed");
    r.summary.makespan_cycles.expect("a makespan")
}

fn sets(kv: &[(&str, String)]) -> Vec<String> {
    kv.iter().map(|(k, v)| format!("workload.{k}={v}")).collect()
}

/// Ping-pong between neighbouring switches: `iterations` round trips of two messages, with the
/// answer `compute_cycles` after the question arrives.
#[test]
fn a_ping_pong_takes_the_zero_load_round_trips() {
    for (bytes, iters, compute) in [(8u64, 1u64, 0u64), (1000, 3, 7), (4096, 2, 100)] {
        let s = sets(&[
            ("tasks", "2".into()),
            ("bytes", bytes.to_string()),
            ("iterations", iters.to_string()),
            ("compute_cycles", compute.to_string()),
        ]);
        let r = run(&line(4, "pingpong", &s), 1);
        let want = iters * (2 * message(bytes, 2) + compute);
        assert_eq!(makespan(&r), want, "{bytes} bytes, {iters} iterations, compute {compute}");
        assert_eq!(r.summary.messages_delivered, Some(2 * iters));
        // Every message crossed the same idle path: the mean latency is the zero-load one.
        assert_eq!(r.summary.message_latency_mean, Some(message(bytes, 2) as f64));
    }
}

/// A ping-pong between servers two hops apart (a 2-D HyperX, servers on switches (0,0) and (1,1)
/// by a mapping file) crosses three switches each way.
#[test]
fn a_ping_pong_over_two_hops_crosses_three_switches() {
    let dir = tempfile::tempdir().unwrap();
    let map = dir.path().join("map.txt");
    // One server per switch: server id = switch id; (1,1) is switch 1 + 4 * 1 = 5.
    std::fs::write(&map, "# task 0, task 1\n0\n5\n").unwrap();
    let mut s = sets(&[("tasks", "2".into()), ("bytes", "300".into()), ("iterations", "2".into())]);
    s.push("workload.mapping=\"file\"".into());
    s.push(format!("workload.mapping_file=\"{}\"", map.display()));
    s.push("topology.sides=[4,4]".into());
    let r = run(&line(4, "pingpong", &s), 1);
    assert_eq!(makespan(&r), 2 * 2 * message(300, 3));
}

/// Ring all-reduce of `N` tasks: `2 (N - 1)` steps of a `ceil(bytes / N)` chunk to the next task,
/// each step after the previous one's receive, every task at once on its own link.
#[test]
fn a_ring_allreduce_takes_2_n_minus_1_zero_load_steps() {
    for (n, bytes, iters, compute) in [(8u64, 800u64, 1u64, 0u64), (8, 8000, 2, 11), (5, 333, 1, 0)] {
        let s = sets(&[
            ("bytes", bytes.to_string()),
            ("iterations", iters.to_string()),
            ("compute_cycles", compute.to_string()),
        ]);
        let r = run(&line(n as usize, "allreduce-ring", &s), 1);
        let chunk = bytes.div_ceil(n);
        let want = iters * 2 * (n - 1) * message(chunk, 2) + (iters - 1) * compute;
        assert_eq!(makespan(&r), want, "{n} tasks, {bytes} bytes, {iters} iterations");
        assert_eq!(r.summary.task_finish_min, Some(want), "all tasks finish together");
        assert_eq!(r.summary.messages_delivered, Some(iters * n * 2 * (n - 1)));
    }
}

/// Recursive-doubling all-reduce: `log2 N` exchanges of the whole buffer.
#[test]
fn a_recursive_doubling_allreduce_takes_log2_n_zero_load_exchanges() {
    for (n, bytes) in [(8u64, 500u64), (16, 64), (2, 10000)] {
        let s = sets(&[("bytes", bytes.to_string())]);
        let r = run(&line(n as usize, "allreduce-recursive-doubling", &s), 1);
        assert_eq!(makespan(&r), n.trailing_zeros() as u64 * message(bytes, 2), "{n} tasks, {bytes} bytes");
    }
}

/// Every kernel on a loaded 2-D HyperX (tasks share switches and links) gives the same summary and
/// task finish times with 1, 2 and 3 threads.
#[test]
fn every_kernel_gives_the_same_results_on_any_thread_count() {
    for k in hxsim::workload::kernels::REGISTRY {
        let tasks = if k.name == "pingpong" { 2 } else { 16 };
        let mut s = sets(&[
            ("tasks", tasks.to_string()),
            ("bytes", "2000".into()),
            ("iterations", "2".into()),
            ("compute_cycles", "20".into()),
            ("mapping", "\"random\"".into()),
        ]);
        s.push("topology.sides=[4,4]".into());
        s.push("topology.servers_per_switch=2".into());
        let cfg = line(4, k.name, &s);
        let one = run(&cfg, 1);
        assert!(one.complete, "{}", k.name);
        for threads in [2, 3] {
            let other = run(&cfg, threads);
            assert_eq!(
                serde_json::to_string(&one.summary.clone().without_timings()).unwrap(),
                serde_json::to_string(&other.summary.clone().without_timings()).unwrap(),
                "{} with {threads} threads",
                k.name
            );
            assert_eq!(one.task_finish, other.task_finish, "{} with {threads} threads", k.name);
        }
    }
}

fn refused(cfg: Result<Config, hxsim::config::ConfigError>, key: &str) {
    let err = match cfg {
        Err(e) => e,
        Ok(c) => match sim::validate(&c, None) {
            Err(e) => e,
            Ok(()) => panic!("accepted; expected an error naming {key}"),
        },
    };
    assert!(err.to_string().contains(key), "expected {key} in: {err}");
}

/// Bad workloads are refused before anything runs, naming the key.
#[test]
fn bad_workloads_are_refused_naming_the_key() {
    let base = "[topology]\nsides = [4]\nservers_per_switch = 1\n[workload]\n";
    let cfg = |extra: &str| parse_str(&format!("{base}{extra}"), "test", &[]);
    refused(cfg("kernel = \"no-such\"\n"), "workload.kernel");
    refused(cfg("kernel = \"goal\"\n"), "workload.file");
    refused(cfg("kernel = \"pingpong\"\ntasks = 3\n"), "workload.tasks");
    refused(cfg("kernel = \"allreduce-ring\"\ntasks = 5\n"), "workload.tasks");
    refused(cfg("kernel = \"allreduce-recursive-doubling\"\ntasks = 3\n"), "workload.tasks");
    refused(cfg("kernel = \"allreduce-ring\"\nmapping = \"snake\"\n"), "workload.mapping");
    refused(cfg("kernel = \"allreduce-ring\"\nmapping = \"file\"\n"), "workload.mapping_file");
    refused(cfg("kernel = \"allreduce-ring\"\niterations = 0\n"), "workload.iterations");
    refused(cfg("kernel = \"allreduce-ring\"\nphit_bytes = 0\n"), "workload.phit_bytes");
    // A ring all-reduce over 65,536 tasks has 2 x 2 x 65,536 x 65,535 = 1.7 x 10^10 operations
    // (550 GB): refused before it is built.
    let big = parse_str(
        "[topology]\nsides = [64, 64]\nservers_per_switch = 16\n[workload]\nkernel = \"allreduce-ring\"\n",
        "test",
        &[],
    );
    refused(big, "a workload that fits in memory");
    let dir = tempfile::tempdir().unwrap();
    let map = dir.path().join("m.txt");
    for (text, what) in
        [("0\n1\n1\n3\n", "twice"), ("0\n1\n9\n3\n", "not a live server"), ("0\n1\n", "one server per task")]
    {
        std::fs::write(&map, text).unwrap();
        let c =
            cfg(&format!("kernel = \"allreduce-ring\"\nmapping = \"file\"\nmapping_file = \"{}\"\n", map.display()));
        let err = sim::validate(&c.unwrap(), None).expect_err("a bad mapping file");
        assert!(err.to_string().contains("workload.mapping_file") && err.to_string().contains(what), "{err}");
    }
}

fn hxsim_json(args: &[&str], cwd: &std::path::Path) -> serde_json::Map<String, serde_json::Value> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).current_dir(cwd).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON summary");
    let m = v.as_object_mut().unwrap();
    for k in ["wall_seconds", "hops_per_second", "peak_memory_bytes"] {
        m.remove(k);
    }
    m.clone()
}

/// A checkpoint taken while the tasks are mid-way (two thirds into the makespan) resumes, with 1 or
/// 2 threads, to the summary of the run that was never stopped.
#[test]
fn a_checkpoint_taken_mid_workload_resumes_bit_identically() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = d.join("w.toml");
    std::fs::write(
        &cfg,
        "name = \"w\"\n[topology]\nsides = [4, 4]\nservers_per_switch = 2\n[workload]\nkernel = \"allreduce-ring\"\n\
         bytes = 20000\niterations = 2\ncompute_cycles = 40\nmapping = \"random\"\n",
    )
    .unwrap();
    let c = cfg.to_str().unwrap();
    let whole = hxsim_json(&["run", c, "-q", "--json", "--no-output", "--threads", "2"], d);
    let makespan = whole["makespan_cycles"].as_u64().expect("a makespan");
    let every = (2 * makespan / 3).to_string();
    let ck = d.join("w.ckpt");
    let k = ck.to_str().unwrap();
    let paused =
        hxsim_json(&["run", c, "-q", "--json", "--no-output", "--checkpoint", k, "--checkpoint-every", &every], d);
    assert_eq!(whole, paused, "pausing for a checkpoint changed the run");
    for threads in ["1", "2"] {
        let resumed = hxsim_json(&["run", "--resume", k, "-q", "--json", "--no-output", "--threads", threads], d);
        assert_eq!(whole, resumed, "resumed with {threads} threads");
    }
}

fn hxsim(args: &[&str], cwd: &std::path::Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).current_dir(cwd).output().unwrap()
}

const SMALL_NET: &str = "name = \"g\"\n[topology]\nsides = [4, 4]\nservers_per_switch = 2\n";

/// A built-in kernel exported as GOAL and replayed runs exactly as the kernel itself, for every
/// kernel (same operations, pairs and dependencies give the same run).
#[test]
fn a_replayed_export_runs_as_the_kernel_itself() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for k in hxsim::workload::kernels::REGISTRY {
        let tasks = if k.name == "pingpong" { "2" } else { "16" };
        let goal = d.join(format!("{}.goal", k.name));
        let g = goal.to_str().unwrap();
        let out = hxsim(
            &[
                "workload",
                "export",
                k.name,
                "--tasks",
                tasks,
                "--bytes",
                "3000",
                "--iterations",
                "2",
                "--compute-cycles",
                "25",
                "-o",
                g,
            ],
            d,
        );
        assert!(out.status.success(), "{}: {}", k.name, String::from_utf8_lossy(&out.stderr));
        let cfg = d.join("g.toml");
        std::fs::write(&cfg, SMALL_NET).unwrap();
        let c = cfg.to_str().unwrap();
        let common = ["run", c, "-q", "--json", "--no-output", "--set", "workload.mapping=\"random\""];
        let builtin = hxsim_json(
            &[
                &common[..],
                &[
                    "--set",
                    &format!("workload.kernel=\"{}\"", k.name),
                    "--set",
                    &format!("workload.tasks={tasks}"),
                    "--set",
                    "workload.bytes=3000",
                    "--set",
                    "workload.iterations=2",
                    "--set",
                    "workload.compute_cycles=25",
                ],
            ]
            .concat(),
            d,
        );
        let file = format!("workload.file=\"{g}\"");
        let replayed = hxsim_json(&[&common[..], &["--set", "workload.kernel=\"goal\"", "--set", &file]].concat(), d);
        let strip = |mut m: serde_json::Map<String, serde_json::Value>| {
            // A GOAL file does not say how many iterations it holds.
            m.remove("cycles_per_iteration");
            m
        };
        assert_eq!(strip(builtin), strip(replayed), "{}", k.name);
    }
}

/// LogGOPSim's own example schedules (tests/data/goal) replay on a network to completion, every
/// message delivered.
#[test]
fn loggopsim_examples_replay_on_the_network() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = d.join("g.toml");
    std::fs::write(&cfg, SMALL_NET).unwrap();
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/goal");
    let mut n = 0;
    for e in std::fs::read_dir(&data).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "goal") {
            continue;
        }
        let w = hxsim::workload::goal::read(&p).unwrap();
        let file = format!("workload.file=\"{}\"", p.display());
        let s = hxsim_json(
            &[
                "run",
                cfg.to_str().unwrap(),
                "-q",
                "--json",
                "--no-output",
                "--set",
                "workload.kernel=\"goal\"",
                "--set",
                &file,
            ],
            d,
        );
        assert_eq!(s["complete"], true, "{}", p.display());
        assert_eq!(s["messages_delivered"].as_u64(), Some(w.messages()), "{}", p.display());
        n += 1;
    }
    assert!(n >= 2, "the example schedules are there");
}

/// A workload whose tasks all wait (each receives before it sends, in a cycle) stops: exit 3,
/// the waiting tasks named with what they wait for, and the results file written, marked
/// incomplete.
#[test]
fn a_workload_that_stops_progressing_exits_3_with_partial_results() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Tasks 0 and 1 exchange once, then 1 and 2 wait for each other.
    let goal = "num_ranks 3\nrank 0 {\nl1: send 8b to 1 tag 0\n}\nrank 1 {\nl1: recv 8b from 0 tag 0\n\
                l2: recv 8b from 2 tag 0\nl3: send 8b to 2 tag 0\nl3 requires l2\n}\nrank 2 {\n\
                l1: recv 8b from 1 tag 0\nl2: send 8b to 1 tag 0\nl2 requires l1\n}\n";
    std::fs::write(d.join("stuck.goal"), goal).unwrap();
    std::fs::write(d.join("s.toml"), format!("{SMALL_NET}[workload]\nkernel = \"goal\"\nfile = \"stuck.goal\"\n"))
        .unwrap();
    let out = hxsim(&["run", "s.toml", "-q", "-o", "s.h5"], d);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("stopped progressing") && err.contains("task 1") && err.contains("task 2"), "{err}");
    assert!(err.contains("recv from task 2") && err.contains("0 of 1 packets"), "{err}");
    assert!(!err.contains("task 0 ("), "task 0 finished: {err}");
    let f = hdf5::File::open(d.join("s.h5")).expect("the results so far are written");
    assert!(!f.attr("complete").unwrap().read_scalar::<bool>().unwrap(), "marked incomplete");
    let finished: Vec<u8> = f.dataset("tasks/finished").unwrap().read_raw().unwrap();
    assert_eq!(finished, vec![1, 0, 0]);
}

/// A GOAL file with an error is refused by `hxsim run` (exit 2) naming the file and line.
#[test]
fn a_bad_goal_file_is_refused_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (text, line, what) in [
        (
            "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\nrank 1 {\nl1: recv 8b from 0 tag 0\nl1 requires l9\n}\n",
            7,
            "l9",
        ),
        ("num_ranks 2\nrank 0 {\nl1: sned 8b to 1 tag 0\n}\n", 3, ""),
        ("num_ranks 2\nrank 0 {\nl1: send 8b to 5 tag 0\n}\n", 3, "5"),
        ("num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\nrank 1 {\nl1: recv 8b from 0 tag 3\n}\n", 6, "no send"),
    ] {
        std::fs::write(d.join("bad.goal"), text).unwrap();
        std::fs::write(d.join("b.toml"), format!("{SMALL_NET}[workload]\nkernel = \"goal\"\nfile = \"bad.goal\"\n"))
            .unwrap();
        let out = hxsim(&["run", "b.toml", "-q", "--no-output"], d);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("bad.goal:{line}")) && err.contains(what), "line {line}, {what}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
