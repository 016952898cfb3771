//! `mpirun -np R hxsim run` gives the single-process summary, apart from the timing keys, for
//! several rank and thread counts (architecture spec, property 3). Needs Open MPI's `mpirun` (see
//! scripts/test-mpi.sh, which installs it); compiled only with `--features mpi`.
#![cfg(feature = "mpi")]

use serde_json::Value;
use std::process::Command;

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

#[test]
fn rank_0_writes_the_one_results_file() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (dir.path().join("one.h5"), dir.path().join("two.h5"));
    let args = |p: &std::path::Path| -> Vec<String> {
        let mut a: Vec<String> = ["run", "configs/hyperx-3d-8.toml", "--quiet", "--json", "-o", p.to_str().unwrap()]
            .map(String::from)
            .to_vec();
        a.extend(SMALL.iter().map(|s| s.to_string()));
        a
    };
    let out = Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args(&one)).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new("mpirun")
        .args(["-np", "2", "--oversubscribe", "--bind-to", "none"])
        .arg(env!("CARGO_BIN_EXE_hxsim"))
        .args(args(&two))
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(files.len(), 2, "exactly one file per run: {files:?}");
    let (a, b) = (hdf5::File::open(&one).unwrap(), hdf5::File::open(&two).unwrap());
    assert_eq!(b.attr("ranks").unwrap().read_scalar::<u64>().unwrap(), 2);
    assert!(b.attr("complete").unwrap().read_scalar::<bool>().unwrap());
    // The time series is streamed by one process and gathered from two ranks: same rows.
    for col in ["cycle", "injected_phits", "accepted_phits", "delivered_packets", "latency_sum"] {
        let (x, y) = (read_u64s(&a.group("timeseries").unwrap(), col), read_u64s(&b.group("timeseries").unwrap(), col));
        assert!(!x.is_empty());
        assert_eq!(x, y, "timeseries/{col}");
    }
    for col in ["injected_phits", "accepted_phits"] {
        assert_eq!(read_u64s(&a.group("servers").unwrap(), col), read_u64s(&b.group("servers").unwrap(), col), "{col}");
    }
    assert_eq!(read_u64s(&a.group("links").unwrap(), "phits"), read_u64s(&b.group("links").unwrap(), "phits"));
    assert_eq!(read_u64s(&a.group("latency").unwrap(), "packets"), read_u64s(&b.group("latency").unwrap(), "packets"));
}

/// Ranks on networks whose switches differ: a HyperZ (servers on level 1 only, ports per level) and
/// a fat tree give the single-process summary for 2 and 3 ranks.
#[test]
fn ranks_give_the_single_process_summary_on_hyperz_and_fat_trees() {
    let dir = tempfile::tempdir().unwrap();
    for (name, topo) in [
        ("hyperz", "kind = \"hyperz\"\nsides = [2,2]\nzones = [4,2,2]\nroots = [1,2,2]\ninternal_links = [1,2,1]"),
        ("fattree", "kind = \"fattree\"\nzones = [4,4,4]\nroots = [1,4,16]"),
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
