//! Issue 37, reliability: no file clobbered, no late failure, no summary that says more than the
//! run measured. Each test reproduces one defect through the binary; what it expects follows from
//! what must hold (a file that must not change, an exit code from the table of docs/commands.md, counts that
//! must agree between two runs), not from hxsim's own output.

use hxsim::output::hdf5 as h5;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const QUICKSTART: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/quickstart.toml");
const SHORT: [&str; 4] = ["--set", "simulation.warmup_cycles=100", "--set", "simulation.measure_cycles=300"];

fn hxsim(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).current_dir(cwd).output().expect("running hxsim")
}

fn spawn(args: &[&str], cwd: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_hxsim"))
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting hxsim")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let f = dir.join(name);
    std::fs::write(&f, body).unwrap();
    f
}

/// Bad input: exit 2, no panic, and the message names `key`.
fn refused(out: &Output, key: &str) {
    let err = text(&out.stderr);
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "panic: {err}");
    assert_eq!(out.status.code(), Some(2), "expected exit 2 naming {key}: {err}");
    assert!(err.contains(key), "the message does not name {key}: {err}");
}

fn wait_for(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn sigterm(child: &Child) {
    // SAFETY: signalling our own child.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
}

/// Output safety: a second run given the `-o` of a run still writing it exits 2 before it
/// simulates anything, and the first run's file stays whole (it was a corrupt file, or the
/// second run's alone, with exit 0 twice). A partial file left by a run that died is taken over.
#[test]
fn two_runs_on_one_output_do_not_share_its_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("same.h5");
    let long = ["run", QUICKSTART, "-q", "-o", "same.h5", "--set", "simulation.measure_cycles=100000000"];
    let first = spawn(&long, dir.path());
    let partial = dir.path().join("same.h5.partial");
    wait_for(&partial);
    let second = hxsim(&["run", QUICKSTART, "-q", "-o", "same.h5", SHORT[0], SHORT[1], SHORT[2], SHORT[3]], dir.path());
    refused(&second, "--output");
    assert!(text(&second.stderr).contains("same.h5.partial"), "{}", text(&second.stderr));
    // The first run's time series grows in its file meanwhile; stopped, it leaves a whole file.
    std::thread::sleep(Duration::from_millis(300));
    sigterm(&first);
    let first = first.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(143), "{}", text(&first.stderr));
    let f = h5::open_file(&out).unwrap();
    assert!(h5::str_attr(&f, "status").unwrap().starts_with("interrupted by SIGTERM"));
    assert!(f.dataset("summary/accepted_load").is_ok());
    assert!(!partial.exists());

    // A partial file whose writer is gone (killed outright) does not block the path.
    write(dir.path(), "same.h5.partial", "left by a killed run");
    let again = hxsim(&["run", QUICKSTART, "-q", "-o", "same.h5", SHORT[0], SHORT[1], SHORT[2], SHORT[3]], dir.path());
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(!partial.exists());
    assert!(h5::open_file(&out).is_ok());
}

/// Output safety: an output that names one of the run's inputs, or another output, is refused up
/// front (exit 2, naming the option), and the input is left as it was: the config (`-o`,
/// `--json-out`), a fault list, the checkpoint resumed from; `--checkpoint` on the `--json-out` or
/// `-o` file (the record overwrote the checkpoint it said to resume from; the results were lost
/// at the end with exit 1).
#[test]
fn outputs_that_name_inputs_or_each_other_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let config = std::fs::read_to_string(QUICKSTART).unwrap();
    let c = write(dir.path(), "c.toml", &config);
    let faults = write(dir.path(), "f.csv", "link,0,0\n");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["-o", "c.toml"], "--output"),
        (vec!["--no-output", "--json-out", "c.toml"], "--json-out"),
        (vec!["--set", "faults.file=f.csv", "-o", "f.csv"], "--output"),
        (vec!["--no-output", "--checkpoint", "j.json", "--json-out", "j.json"], "--checkpoint"),
        (vec!["--checkpoint", "new.h5", "-o", "new.h5"], "--checkpoint"),
        (vec!["-o", "r.json", "--json-out", "r.json"], "--json-out"),
    ];
    for (args, key) in cases {
        let out = hxsim(&[&["run", "c.toml", "-q"][..], &args, &SHORT].concat(), dir.path());
        refused(&out, key);
        assert_eq!(std::fs::read_to_string(&c).unwrap(), config, "{args:?}");
        assert_eq!(std::fs::read_to_string(&faults).unwrap(), "link,0,0\n", "{args:?}");
        for f in ["j.json", "new.h5", "r.json"] {
            assert!(!dir.path().join(f).exists(), "{args:?} wrote {f}");
        }
    }
    // A checkpoint resumed from may take further checkpoints, not the results.
    let ck = dir.path().join("run.ckpt");
    let mut child = spawn(
        &[
            "run",
            "c.toml",
            "-q",
            "--no-output",
            "--checkpoint",
            "run.ckpt",
            "--set",
            "simulation.measure_cycles=100000000",
        ],
        dir.path(),
    );
    std::thread::sleep(Duration::from_millis(300));
    sigterm(&child);
    assert_eq!(child.wait().unwrap().code(), Some(143));
    assert!(ck.exists());
    let before = std::fs::read(&ck).unwrap();
    refused(&hxsim(&["run", "--resume", "run.ckpt", "-q", "-o", "run.ckpt"], dir.path()), "--output");
    assert_eq!(std::fs::read(&ck).unwrap(), before);
    child = spawn(&["run", "--resume", "run.ckpt", "-q", "--no-output"], dir.path());
    std::thread::sleep(Duration::from_millis(300));
    sigterm(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
}

/// Output safety: `-o` and `--json-out` never replace what is not a regular file with one: a FIFO
/// gets the bytes (its reader reads the whole file), a link still points to its target, which holds
/// the new file, and `--json-out /dev/stdout` writes to the standard output (it was refused naming
/// `--output` as a normal user, and replaced `/dev/stdout` as root).
#[test]
fn outputs_that_are_not_regular_files_are_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let c = std::ffi::CString::new(p(&fifo)).unwrap();
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let out =
        hxsim(&[&["run", QUICKSTART, "-q", "-o", "pipe", "--json-out", "r.json"][..], &SHORT].concat(), dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    // (Checked before joining the reader, which waits for ever on a FIFO nobody opened.)
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    let bytes = reader.join().unwrap();
    assert_eq!(&bytes[..8], b"\x89HDF\r\n\x1a\n", "the reader got an HDF5 file");
    // Through a link: the link stays, its target is the new file.
    std::os::unix::fs::symlink("sub/target.h5", dir.path().join("link.h5")).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    write(dir.path(), "sub/target.h5", "old");
    let out = hxsim(&[&["run", QUICKSTART, "-q", "-o", "link.h5"][..], &SHORT].concat(), dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::symlink_metadata(dir.path().join("link.h5")).unwrap().file_type().is_symlink());
    assert!(h5::open_file(&dir.path().join("sub/target.h5")).is_ok());
    // The standard output, as a pipe.
    let out = hxsim(
        &[&["run", QUICKSTART, "-q", "--no-output", "--json-out", "/dev/stdout"][..], &SHORT].concat(),
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let record: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(record["name"], "quickstart");
    assert!(stdout.contains("accepted load"), "the table follows the record: {stdout}");
}

/// Output safety: `merge` refuses an HDF5 output that is one of its inputs (it did so only for
/// JSON inputs) and a file given twice, and a directory merged into a file inside it twice gets
/// the same sweep file the second time (it read its own output as a point).
#[test]
fn merge_never_reads_its_output_or_a_file_twice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("pts");
    std::fs::create_dir(&d).unwrap();
    for i in 0..2 {
        let out =
            hxsim(&[&["run", QUICKSTART, "-q", "-o", &format!("pts/point-{i}.h5")][..], &SHORT].concat(), dir.path());
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let run = std::fs::read(d.join("point-0.h5")).unwrap();
    refused(&hxsim(&["merge", "pts/point-0.h5", "-o", "pts/point-0.h5"], dir.path()), "--output");
    assert_eq!(std::fs::read(d.join("point-0.h5")).unwrap(), run);
    refused(&hxsim(&["merge", "pts/point-0.h5", "pts/point-0.h5", "-o", "m.h5"], dir.path()), "twice");
    refused(&hxsim(&["merge", "pts", "pts/point-1.h5", "-o", "m.h5"], dir.path()), "twice");
    let js = write(dir.path(), "a.json", "{\"complete\": true, \"status\": \"complete\", \"x\": 1}\n");
    refused(&hxsim(&["merge", p(&js), p(&js)], dir.path()), "twice");
    let points = |out: &Output| {
        assert!(out.status.success(), "{}", text(&out.stderr));
        let f = h5::open_file(&d.join("all.h5")).unwrap();
        f.attr("points").unwrap().read_scalar::<u64>().unwrap()
    };
    assert_eq!(points(&hxsim(&["merge", "pts", "-o", "pts/all.h5"], dir.path())), 2);
    assert_eq!(points(&hxsim(&["merge", "pts", "-o", "pts/all.h5"], dir.path())), 2);
}

/// Output safety: a sweep with one point whose model is bad input (faults that split its network)
/// exits 2 before anything runs, and leaves an existing results file as it was (it ran the other
/// points, exited 3 and replaced the file).
#[test]
fn sweep_validates_every_point_before_running_any() {
    let dir = tempfile::tempdir().unwrap();
    let keep = write(dir.path(), "s.h5", "earlier results");
    // 40 failed links of the 48 of a 4x4 HyperX leave 8, too few to connect 16 switches.
    let out = hxsim(
        &[&["sweep", QUICKSTART, "-q", "-o", "s.h5", "--set", "faults.random_links=0,40"][..], &SHORT].concat(),
        dir.path(),
    );
    refused(&out, "faults.random_links");
    assert!(text(&out.stderr).contains("sweep point"), "{}", text(&out.stderr));
    assert!(text(&out.stdout).is_empty(), "nothing ran: {}", text(&out.stdout));
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), "earlier results");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec!["s.h5"]);
}

/// Refuse up front: `/dev/zero` or `/dev/urandom` as the config, `faults.file` or
/// `topology.file` is refused at once (exit 2 naming the key); it was read without bound (5 GB
/// after 30 s).
#[test]
fn endless_input_files_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let graph =
        write(dir.path(), "g.toml", "[topology]\nkind = \"graph\"\nfile = \"/dev/urandom\"\nservers_per_switch = 1\n");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "/dev/zero", "-q", "--no-output"], "/dev/zero"),
        (vec!["run", "/dev/urandom", "-q", "--no-output"], "/dev/urandom"),
        (vec!["run", QUICKSTART, "-q", "--no-output", "--set", "faults.file=\"/dev/zero\""], "faults.file"),
        (vec!["run", QUICKSTART, "-q", "--no-output", "--set", "faults.file=\"/dev/urandom\""], "faults.file"),
        (vec!["run", p(&graph), "-q", "--no-output"], "topology.file"),
        (vec!["analyze", "/dev/zero"], "/dev/zero"),
        (vec!["sweep", "/dev/zero", "-q", "--no-output", "--set", "traffic.load=0.1,0.2"], "/dev/zero"),
    ];
    for (args, key) in cases {
        let start = Instant::now();
        refused(&hxsim(&args, dir.path()), key);
        assert!(start.elapsed() < Duration::from_secs(10), "{args:?} took {:?}", start.elapsed());
    }
}

/// `cmd` with its address space limited to `bytes` (`ulimit -v`).
fn with_address_space(cmd: &mut Command, bytes: u64) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let r = libc::rlimit { rlim_cur: bytes as libc::rlim_t, rlim_max: bytes as libc::rlim_t };
            if libc::setrlimit(libc::RLIMIT_AS, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// Refuse up front: under `ulimit -v 4G` a `[256, 256]` HyperX (4.3 GiB of router state with its
/// 4 VCs) passed the memory check, which read only `MemAvailable`, allocated for 19 s and aborted
/// (exit 134, a stack backtrace). Now the address-space limit is one of the limits: exit 2 naming
/// it, before anything is built. And an allocation that fails anyway (`--max-memory` lifts the
/// check) ends with one line and exit 2, never a backtrace, even with `RUST_BACKTRACE=1`.
#[test]
fn the_address_space_limit_is_checked_and_out_of_memory_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let big = ["--set", "topology.sides=[256,256]", "--set", "faults.random_links=1", "--set", "routing.vcs=4"];
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hxsim"));
    cmd.args([&["run", QUICKSTART, "-q", "--no-output"][..], &big, &SHORT].concat()).current_dir(dir.path());
    let start = Instant::now();
    let out = with_address_space(&mut cmd, 4 << 30).env("RUST_BACKTRACE", "1").output().unwrap();
    refused(&out, "ulimit -v");
    assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
    // 1 GiB of address space, the check lifted: the router state's allocation fails.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hxsim"));
    cmd.args([&["run", QUICKSTART, "-q", "--no-output", "--max-memory", "1T"][..], &big[..2], &SHORT].concat());
    let out = with_address_space(&mut cmd, 1 << 30).env("RUST_BACKTRACE", "1").output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("out of memory") && !err.contains("backtrace") && err.lines().count() == 1, "{err}");
}

/// Refuse up front: an RRG of 16,384 switches of degree 1,000 (it generated for minutes with no
/// progress line) and `output.sample_cycles = 1` over 10^9 cycles (about 190 MB of time series
/// per million cycles, kept until the end) exit 2 at once, naming the key.
#[test]
fn setups_that_cannot_end_well_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let rrg = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/rrg-876-23-17.toml");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", rrg, "-q", "--no-output", "--set", "topology.switches=16384", "--set", "topology.degree=1000"],
            "topology.degree",
        ),
        (
            vec![
                "run",
                QUICKSTART,
                "-q",
                "--no-output",
                "--set",
                "output.sample_cycles=1",
                "--set",
                "simulation.measure_cycles=1000000000",
            ],
            "output.sample_cycles",
        ),
    ];
    for (args, key) in cases {
        let start = Instant::now();
        refused(&hxsim(&args, dir.path()), key);
        assert!(start.elapsed() < Duration::from_secs(10), "{args:?} took {:?}", start.elapsed());
    }
}

/// Refuse up front: torus-dor, dragonfly-min, dragonfly-valiant and ugal with one failed link or
/// switch exit 2 at validation (they failed at cycle 64 with exit 3 "no route"), naming
/// `routing.algorithm`; and every routing the advice lists runs on that faulty network (the advice
/// for `dor` listed routings that refuse faults; Valiant and Polarized were refused on a faulty
/// dragonfly blaming `routing.vcs`, which the user never set).
#[test]
fn fault_intolerant_routings_are_refused_with_advice_that_works() {
    let dir = tempfile::tempdir().unwrap();
    let torus = write(
        dir.path(),
        "t.toml",
        "[topology]\nkind = \"torus\"\nsides = [4, 4]\nservers_per_switch = 2\n[simulation]\nwarmup_cycles = 50\nmeasure_cycles = 150\n",
    );
    let dragonfly = write(
        dir.path(),
        "d.toml",
        "[topology]\nkind = \"dragonfly\"\np = 2\na = 4\nh = 2\n[simulation]\nwarmup_cycles = 50\nmeasure_cycles = 150\n",
    );
    for (cfg, routings) in
        [(&torus, &["torus-dor"][..]), (&dragonfly, &["dragonfly-min", "dragonfly-valiant", "ugal"][..])]
    {
        for routing in routings {
            for fault in ["faults.random_links=1", "faults.random_switches=1"] {
                let out = hxsim(
                    &[
                        "run",
                        p(cfg),
                        "-q",
                        "--no-output",
                        "--set",
                        &format!("routing.algorithm={routing}"),
                        "--set",
                        fault,
                    ],
                    dir.path(),
                );
                refused(&out, "routing.algorithm");
                let err = text(&out.stderr);
                assert!(err.contains("cannot route around"), "{err}");
                let advised: Vec<String> = err
                    .rsplit("use one of: ")
                    .next()
                    .unwrap()
                    .trim_end()
                    .trim_end_matches(')')
                    .split(", ")
                    .map(str::to_string)
                    .collect();
                assert!(advised.len() > 3, "{err}");
                for alg in &advised {
                    let ok = hxsim(
                        &[
                            "run",
                            p(cfg),
                            "-q",
                            "--no-output",
                            "--set",
                            &format!("routing.algorithm={alg}"),
                            "--set",
                            fault,
                        ],
                        dir.path(),
                    );
                    assert!(
                        ok.status.success(),
                        "{routing} advises {alg}, which fails with {fault}: {}",
                        text(&ok.stderr)
                    );
                }
            }
        }
    }
}

/// Messages: each names the key the user set, once, briefly. The watchdog refusal had two runs of
/// 22 spaces; a disconnected edge-list file was blamed on `faults` (none set); HyperZ
/// `sides = [0, 2]` on `topology.zones`; a 300 KB value was echoed whole; an OS error was printed
/// twice ("No such file or directory (os error 2): No such file or directory (os error 2)").
#[test]
fn messages_name_the_key_once_and_briefly() {
    let dir = tempfile::tempdir().unwrap();
    let out = hxsim(&["run", QUICKSTART, "-q", "--no-output", "--set", "simulation.watchdog_cycles=5"], dir.path());
    refused(&out, "simulation.watchdog_cycles");
    assert!(!text(&out.stderr).contains("   "), "{:?}", text(&out.stderr));
    write(dir.path(), "split.txt", "0 1\n2 3\n");
    let g = write(dir.path(), "g.toml", "[topology]\nkind = \"graph\"\nfile = \"split.txt\"\nservers_per_switch = 1\n");
    let out = hxsim(&["run", p(&g), "-q", "--no-output"], dir.path());
    refused(&out, "topology.file");
    assert!(!text(&out.stderr).contains("`faults`"), "{}", text(&out.stderr));
    let hz = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/hyperz-1024-h1.toml");
    let out = hxsim(&["run", hz, "-q", "--no-output", "--set", "topology.sides=[0,2]"], dir.path());
    refused(&out, "topology.sides");
    let config = std::fs::read_to_string(QUICKSTART).unwrap();
    let many =
        write(dir.path(), "many.toml", &format!("{config}\n[faults]\nswitches = [{}]\n", vec!["x"; 50_000].join(",")));
    let out = hxsim(&["run", p(&many), "-q", "--no-output"], dir.path());
    refused(&out, "many.toml");
    assert!(out.stderr.len() < 1000, "{} bytes of stderr", out.stderr.len());
    let long = format!("traffic.pattern={}", "x".repeat(100_000));
    let out = hxsim(&["run", QUICKSTART, "-q", "--no-output", "--set", &long], dir.path());
    refused(&out, "traffic.pattern");
    assert!(out.stderr.len() < 1000, "{} bytes of stderr", out.stderr.len());
    let out = hxsim(&["run", "missing.toml", "-q", "--no-output"], dir.path());
    refused(&out, "missing.toml");
    let err = text(&out.stderr);
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(!err.contains("os error"), "{err}");
}

/// Messages: seeds above 2^63 - 1 (TOML integers stop there) are written as strings of digits and
/// read back: `--set seed=18446744073709551615` runs, and its results file's config and JSON record
/// hold the seed (it could not be written).
#[test]
fn seeds_above_two_to_the_63_can_be_written_and_read() {
    let dir = tempfile::tempdir().unwrap();
    let big = "18446744073709551615";
    let out = hxsim(
        &[
            &["run", QUICKSTART, "-q", "-o", "s.h5", "--json-out", "s.json", "--set", &format!("seed={big}")][..],
            &["--set", "faults.random_links=1", "--set", "faults.seed=9223372036854775808"],
            &SHORT,
        ]
        .concat(),
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let record: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.path().join("s.json")).unwrap()).unwrap();
    assert_eq!(record["seed"].as_u64(), Some(u64::MAX));
    let f = h5::open_file(&dir.path().join("s.h5")).unwrap();
    let config = h5::str_attr(&f, "config").unwrap();
    let cfg = hxsim::config::parse_str(&config, "file", &[]).unwrap();
    assert_eq!((cfg.seed, cfg.faults.seed), (u64::MAX, Some(1 << 63)));
    // The same seed written in the file, run again, gives the same summary.
    let c = write(dir.path(), "again.toml", &config);
    let again = hxsim(&[&["run", p(&c), "-q", "--no-output", "--json-out", "a.json"][..]].concat(), dir.path());
    assert!(again.status.success(), "{}", text(&again.stderr));
    let a: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.path().join("a.json")).unwrap()).unwrap();
    assert_eq!(a["packets_delivered"], record["packets_delivered"]);
    assert_eq!(a["accepted_load"], record["accepted_load"]);
}

/// Exit codes as the table of docs/commands.md says: `check-deadlock` on a network that faults split and
/// `plot` on an input that is not a results file are bad input, 2 (they exited 1).
#[test]
fn check_deadlock_on_a_split_network_and_plot_of_an_unreadable_file_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    // 40 of the 48 links of a 4x4 HyperX fail: 8 cannot connect 16 switches.
    let out = hxsim(&["check-deadlock", QUICKSTART, "--set", "faults.random_links=40"], dir.path());
    refused(&out, "faults");
    write(dir.path(), "bad.h5", "not an HDF5 file");
    refused(&hxsim(&["plot", "bad.h5", "-o", "f.svg"], dir.path()), "bad.h5");
    // An HDF5 file that hxsim did not write.
    let f = ::hdf5::File::create(dir.path().join("other.h5")).unwrap();
    f.new_dataset::<u8>().create("x").unwrap();
    drop(f);
    refused(&hxsim(&["plot", "other.h5", "-o", "f.svg"], dir.path()), "other.h5");
    assert!(!dir.path().join("f.svg").exists());
}

/// Honest summaries: a run stopped at cycle C (a signal) counts what a complete run of C cycles
/// counts: deliveries are recorded when a packet leaves its last switch, and those whose tail had
/// not arrived by C were counted (+0.13% packets), with their latencies, hops, per-server phits
/// and time-series rows. Checked with the stop at the first window end (one partition) and at a
/// later one set from another thread (two partitions), against the complete run with
/// `warmup + measure = C`; everything but `complete` must agree.
#[test]
fn a_stopped_run_counts_as_a_complete_run_of_its_cycles() {
    use hxsim::engine::Progress;
    use hxsim::sim::{self, RunOptions};
    use std::sync::atomic::Ordering;
    use std::sync::Arc;
    let base = std::fs::read_to_string(QUICKSTART).unwrap();
    let cfg = |extra: &[String]| hxsim::config::parse_str(&base, "q", extra).unwrap();
    for (threads, stop_after) in [(1usize, 0u64), (2, 700)] {
        let long = cfg(&["simulation.warmup_cycles=200".into(), "simulation.measure_cycles=1000000".into()]);
        let progress = Arc::new(Progress::default());
        if stop_after == 0 {
            progress.stop.store(1, Ordering::SeqCst);
        }
        let watcher = {
            let progress = progress.clone();
            std::thread::spawn(move || {
                while stop_after > 0 && progress.cycle.load(Ordering::SeqCst) < stop_after {
                    std::thread::yield_now();
                }
                progress.stop.store(1, Ordering::SeqCst);
            })
        };
        let opts = RunOptions { threads, ..Default::default() };
        let stopped = sim::run(&long, &opts, &progress).unwrap();
        watcher.join().unwrap();
        assert!(!stopped.complete);
        let c = stopped.summary.cycles;
        assert!(c > 0 && c < 1_000_000, "stopped at {c}");
        let (warmup, measure) = if c > 200 { (200, c - 200) } else { (0, c) };
        let whole =
            cfg(&[format!("simulation.warmup_cycles={warmup}"), format!("simulation.measure_cycles={measure}")]);
        let stopped = if c > 200 {
            stopped
        } else {
            // A stop within the warmup: the same run with no warmup, stopped at the same place.
            let progress = Progress::default();
            progress.stop.store(1, Ordering::SeqCst);
            let w0 = cfg(&["simulation.warmup_cycles=0".into(), "simulation.measure_cycles=1000000".into()]);
            let r = sim::run(&w0, &opts, &progress).unwrap();
            assert_eq!(r.summary.cycles, c);
            r
        };
        let complete =
            sim::run(&whole, &RunOptions { threads: 1, ..Default::default() }, &Progress::default()).unwrap();
        assert!(complete.complete);
        let (a, b) = (stopped.summary.clone().without_timings(), complete.summary.clone().without_timings());
        assert_eq!(a.packets_delivered, b.packets_delivered, "{threads} threads, stopped at {c}");
        // As JSON, where NaN (no data) is null and equals null.
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(&b).unwrap(),
            "{threads} threads, stopped at {c}"
        );
        assert_eq!(stopped.server_accepted, complete.server_accepted);
        assert_eq!(stopped.stats.latency_hist, complete.stats.latency_hist);
        // The time series up to C: the rows before C agree (the interval C falls in ends there).
        let rows = (c / whole.output.sample_cycles) as usize;
        for k in 0..rows {
            let (x, y) = (stopped.stats.samples[k], complete.stats.samples[k]);
            assert_eq!(
                (x.delivered_packets, x.accepted_phits, x.latency_sum),
                (y.delivered_packets, y.accepted_phits, y.latency_sum),
                "row {k}"
            );
        }
    }
}

/// Honest summaries: a figure with no data is `null`, never a number that looks measured. Nothing
/// delivered: `latency_p99` and `steady_state` were 0 and `true`; now null in JSON and NaN in the
/// results file. A fixed workload printed an `offered_load` that has no effect on it; now the key
/// is absent and the table has no such row.
#[test]
fn figures_without_data_are_null_or_absent() {
    let dir = tempfile::tempdir().unwrap();
    let out = hxsim(
        &[&["run", QUICKSTART, "-q", "--json", "-o", "e.h5", "--set", "traffic.load=1e-16"][..], &SHORT].concat(),
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["packets_delivered"], 0);
    assert!(v["latency_p99"].is_null() && v["steady_state"].is_null(), "{v}");
    let f = h5::open_file(&dir.path().join("e.h5")).unwrap();
    for key in ["latency_p99", "steady_state"] {
        assert!(f.dataset(&format!("summary/{key}")).unwrap().read_scalar::<f64>().unwrap().is_nan(), "{key}");
    }
    let fixed = ["--set", "traffic.mode=fixed", "--set", "traffic.workload_phits=64"];
    let out = hxsim(&[&["run", QUICKSTART, "-q", "--json", "--no-output"][..], &fixed].concat(), dir.path());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("offered_load").is_none() && v["completion_cycles"].as_u64().is_some(), "{v}");
    let out = hxsim(&[&["run", QUICKSTART, "-q", "--no-output"][..], &fixed].concat(), dir.path());
    assert!(!text(&out.stdout).contains("offered load"), "{}", text(&out.stdout));
}

/// Honest summaries: a stopped run says so where its figures are read: `complete` and `status` in
/// `--json`, and a note line in the table (neither said it was incomplete).
#[test]
fn a_stopped_run_says_so_in_its_json_and_its_table() {
    let dir = tempfile::tempdir().unwrap();
    for json in [true, false] {
        let mut args = vec!["run", QUICKSTART, "-q", "--no-output", "--set", "simulation.measure_cycles=100000000"];
        if json {
            args.push("--json");
        }
        let child = spawn(&args, dir.path());
        std::thread::sleep(Duration::from_millis(500));
        sigterm(&child);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        if json {
            let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(v["complete"], false);
            let cycles = v["cycles"].as_u64().unwrap();
            assert_eq!(v["status"], format!("interrupted by SIGTERM at cycle {cycles}"));
            // Merged, it is an incomplete point (merge into HDF5 took any summary as complete).
            write(dir.path(), "p.json", &stdout);
            let m = hxsim(&["merge", "p.json", "-o", "m.h5"], dir.path());
            assert_eq!(m.status.code(), Some(3), "{}", text(&m.stderr));
            let t = h5::open_file(&dir.path().join("m.h5")).unwrap();
            let e = t.dataset("sweep/error").unwrap().read_raw::<::hdf5::types::VarLenUnicode>().unwrap();
            assert!(e[0].as_str().starts_with("interrupted by SIGTERM"), "{}", e[0]);
        } else {
            assert!(stdout.contains("note: the run did not complete (interrupted by SIGTERM at cycle"), "{stdout}");
        }
    }
}
