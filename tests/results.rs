//! HDF5 results, sweeps, plots and interruption, through the `hxsim` binary (issue 3).

use hdf5::types::VarLenUnicode;
use hxsim::output::hdf5 as h5;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const QUICKSTART: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/quickstart.toml");

fn hxsim(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).current_dir(cwd).output().expect("running hxsim")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn u64s(f: &hdf5::Group, name: &str) -> Vec<u64> {
    f.dataset(name).unwrap_or_else(|e| panic!("{name}: {e}")).read_raw::<u64>().unwrap()
}

fn f64s(f: &hdf5::Group, name: &str) -> Vec<f64> {
    f.dataset(name).unwrap_or_else(|e| panic!("{name}: {e}")).read_raw::<f64>().unwrap()
}

fn strs(f: &hdf5::Group, name: &str) -> Vec<String> {
    f.dataset(name).unwrap().read_raw::<VarLenUnicode>().unwrap().iter().map(|s| s.as_str().to_string()).collect()
}

fn bool_attr(loc: &hdf5::Location, name: &str) -> bool {
    loc.attr(name).unwrap().read_scalar::<bool>().unwrap()
}

#[test]
fn run_file_holds_the_json_summary_and_consistent_details() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.h5");
    let out = hxsim(&["run", QUICKSTART, "--json", "-q", "-o", path_str(&file)], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(path_str(&file)), "the path written is printed");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is the JSON summary");
    let json = json.as_object().unwrap();

    let f = h5::open_file(&file).unwrap();
    // Root attributes.
    assert!(bool_attr(&f, "complete"));
    assert_eq!(h5::str_attr(&f, "status").unwrap(), "complete");
    assert_eq!(h5::str_attr(&f, "format").unwrap(), "hxsim-results");
    assert_eq!(f.attr("seed").unwrap().read_scalar::<u64>().unwrap(), 1);
    assert_eq!(f.attr("threads").unwrap().read_scalar::<u64>().unwrap(), 1);
    assert_eq!(f.attr("ranks").unwrap().read_scalar::<u64>().unwrap(), 1);
    assert!(!h5::str_attr(&f, "host").unwrap().is_empty());
    assert!(h5::str_attr(&f, "start_time").unwrap().ends_with('Z'));
    let cfg = hxsim::config::load(Path::new(QUICKSTART), &[]).unwrap();
    let stored = hxsim::config::parse_str(&h5::str_attr(&f, "config").unwrap(), "file", &[]).unwrap();
    assert_eq!(stored, cfg, "the config attribute is the full config");

    // /summary equals --json, key for key, in the same order.
    let g = f.group("summary").unwrap();
    let names = g.member_names().unwrap();
    let mut ordered: Vec<String> = Vec::new();
    for (k, v) in json {
        // How the run ended: the file's root attributes.
        if k == "complete" {
            assert_eq!(Some(bool_attr(&f, "complete")), v.as_bool());
            continue;
        }
        if k == "status" {
            assert_eq!(Some(h5::str_attr(&f, "status").unwrap().as_str()), v.as_str());
            continue;
        }
        if let Some(list) = v.as_array() {
            // Lists are groups of their own: vc_phits is /vcs/phits.
            assert_eq!(k, "vc_phits");
            let phits = u64s(&f.group("vcs").unwrap(), "phits");
            assert_eq!(list.iter().map(|x| x.as_u64().unwrap()).collect::<Vec<_>>(), phits);
            continue;
        }
        ordered.push(k.clone());
        let ds = g.dataset(k).unwrap_or_else(|_| panic!("/summary/{k} missing"));
        if let Some(b) = v.as_bool() {
            assert_eq!(ds.read_scalar::<u8>().unwrap(), b as u8, "{k}");
        } else if let Some(u) = v.as_u64() {
            assert_eq!(ds.read_scalar::<u64>().unwrap(), u, "{k}");
        } else if v.is_null() {
            assert!(ds.read_scalar::<f64>().unwrap().is_nan(), "{k}");
        } else {
            assert_eq!(ds.read_scalar::<f64>().unwrap(), v.as_f64().unwrap(), "{k}");
        }
        assert!(ds.attr("units").is_ok(), "{k} has units");
    }
    let mut sorted_names = names.clone();
    sorted_names.sort();
    let mut sorted_json = ordered.clone();
    sorted_json.sort();
    assert_eq!(sorted_names, sorted_json, "no key more, no key less");
    let delivered = json["packets_delivered"].as_u64().unwrap();

    // Time series: one row per 100-cycle interval; the measured window's rows add up to the summary
    // (which counts a packet's 16 phits when its tail arrives; the series spreads them over the 16
    // cycles they arrive in, so at each end of the window at most 15 phits per server move across).
    let ts = f.group("timeseries").unwrap();
    let cycle = u64s(&ts, "cycle");
    assert_eq!(cycle, (1..=60).map(|k| k * 100).collect::<Vec<u64>>());
    let acc = u64s(&ts, "accepted_phits");
    let pk = u64s(&ts, "delivered_packets");
    let in_window = |i: usize| cycle[i] > 2000 && cycle[i] <= 6000;
    let acc_w: u64 = (0..60).filter(|&i| in_window(i)).map(|i| acc[i]).sum();
    let pk_w: u64 = (0..60).filter(|&i| in_window(i)).map(|i| pk[i]).sum();
    assert_eq!(pk_w, delivered);
    let accepted = json["accepted_load"].as_f64().unwrap();
    assert!((pk_w as f64 * 16.0 / (4000.0 * 64.0) - accepted).abs() < 1e-12);
    assert!(acc_w.abs_diff(16 * pk_w) <= 2 * 15 * 64, "{acc_w} vs {}", 16 * pk_w);

    // The streamed rows equal the samples of the same run done in-process.
    let res = hxsim::sim::run(&cfg, &Default::default(), &Default::default()).unwrap();
    let s = &res.stats.samples;
    assert_eq!(&u64s(&ts, "injected_phits")[..], &s.iter().map(|x| x.injected_phits).collect::<Vec<_>>()[..60]);
    assert_eq!(&acc[..], &s.iter().map(|x| x.accepted_phits).collect::<Vec<_>>()[..60]);
    assert_eq!(&u64s(&ts, "latency_sum")[..], &s.iter().map(|x| x.latency_sum).collect::<Vec<_>>()[..60]);
    let inflight = ts.dataset("in_flight").unwrap().read_raw::<i64>().unwrap();
    assert_eq!(&inflight[..], &s.iter().map(|x| x.in_flight).collect::<Vec<_>>()[..60]);
    let ml = f64s(&ts, "mean_latency");
    assert!((ml[30] - s[30].latency_sum as f64 / s[30].delivered_packets as f64).abs() < 1e-12);

    // Servers: Jain's index recomputed from the file.
    let inj = u64s(&f.group("servers").unwrap(), "injected_phits");
    assert_eq!(inj.len(), 64);
    assert_eq!(u64s(&f.group("servers").unwrap(), "accepted_phits").iter().sum::<u64>(), 16 * pk_w);
    assert!((hxsim::metrics::jain_index(&inj) - json["jain_index"].as_f64().unwrap()).abs() < 1e-12);

    // Sparse latency histogram: total, mean and p99 recomputed.
    let lat = f.group("latency").unwrap();
    let (edges, counts) = (u64s(&lat, "latency"), u64s(&lat, "packets"));
    assert_eq!(edges.len(), counts.len());
    assert!(counts.iter().all(|&c| c > 0) && edges.windows(2).all(|w| w[0] < w[1]), "only latencies that occurred");
    assert_eq!(counts.iter().sum::<u64>(), delivered);
    let mean = counts.iter().zip(&edges).map(|(&c, &e)| c * e).sum::<u64>() as f64 / delivered as f64;
    assert!((mean - json["average_latency"].as_f64().unwrap()).abs() < 1e-9);
    let need = (0.99 * delivered as f64).ceil() as u64;
    let mut acc_c = 0;
    let p99 = counts.iter().zip(&edges).find(|(&c, _)| {
        acc_c += c;
        acc_c >= need
    });
    assert_eq!(*p99.unwrap().1, json["latency_p99"].as_u64().unwrap());

    // Links: every live link direction, wired symmetrically, with its HyperX dimension.
    let l = f.group("links").unwrap();
    let (sw, port, nsw, nport) =
        (u64s(&l, "switch"), u64s(&l, "port"), u64s(&l, "neighbour_switch"), u64s(&l, "neighbour_port"));
    assert_eq!(sw.len(), 16 * 6);
    let dim = l.dataset("dimension").unwrap().read_raw::<i32>().unwrap();
    for i in 0..sw.len() {
        let back = (0..sw.len()).find(|&j| sw[j] == nsw[i] && port[j] == nport[i]).unwrap();
        assert_eq!((nsw[back], nport[back]), (sw[i], port[i]));
        assert_eq!(dim[i], if port[i] < 3 { 0 } else { 1 });
        // Dimension 0 links join switches in the same row (id = x0 + 4 x1).
        assert_eq!(sw[i] / 4 == nsw[i] / 4, dim[i] == 0);
    }
    let (ph, util) = (u64s(&l, "phits"), f64s(&l, "utilization"));
    assert!(ph.iter().all(|&p| p > 0));
    assert!(ph.iter().zip(&util).all(|(&p, &u)| (p as f64 / 4000.0 - u).abs() < 1e-12 && u <= 1.0));
}

/// Every time-series row of a run carries at most one injected and one accepted phit per cycle per
/// server (a server link carries one phit per cycle each way), with sample intervals shorter than a
/// packet, a run that ends inside an interval, a saturated network and a fixed workload; the series
/// add up to the run's whole packets: exactly when the run sends nothing past its end (a drained
/// fixed workload), and otherwise but for the phits of packets cut by the end (fewer than 16 per
/// server each way).
/// A fixed workload measures its whole run, cycles 0 to the last delivery: the summary's cycles,
/// its completion cycle and the file's `measured_cycles` are one number, and the accepted load is
/// the phits delivered over it (issue 31: they disagreed by a cycle).
#[test]
fn fixed_workload_summary_and_file_measure_the_same_cycles() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.h5");
    let out = hxsim(
        &["run", QUICKSTART, "--json", "-q", "-o", path_str(&file)]
            .into_iter()
            .chain(["--set", "traffic.mode=fixed", "--set", "traffic.workload_phits=1600"])
            .collect::<Vec<_>>(),
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cycles = json["cycles"].as_u64().unwrap();
    assert_eq!(json["completion_cycles"].as_u64(), Some(cycles));
    let f = h5::open_file(&file).unwrap();
    for group in ["servers", "links", "vcs"] {
        let measured: u64 = f.group(group).unwrap().attr("measured_cycles").unwrap().read_scalar().unwrap();
        assert_eq!(measured, cycles, "/{group} measured_cycles");
    }
    // 64 servers (quickstart: 4x4 switches, 4 servers each), 16-phit packets, all delivered.
    let delivered = json["packets_delivered"].as_u64().unwrap();
    assert_eq!(delivered, 64 * 1600 / 16);
    let load = (delivered * 16) as f64 / (cycles as f64 * 64.0);
    assert_eq!(json["accepted_load"].as_f64().unwrap(), load);
    let accepted: Vec<u64> = u64s(&f.group("servers").unwrap(), "accepted_phits");
    assert_eq!(accepted.iter().sum::<u64>(), delivered * 16);
}

#[test]
fn timeseries_rows_carry_at_most_one_phit_per_cycle_per_server() {
    let dir = tempfile::tempdir().unwrap();
    let (servers, plen) = (64u64, 16u64);
    let cases: [&[&str]; 4] = [
        &["--set", "output.sample_cycles=7", "--set", "simulation.measure_cycles=1000"],
        &["--set", "traffic.load=1.0", "--set", "simulation.measure_cycles=1050"],
        &["--set", "traffic.load=1.0", "--set", "output.sample_cycles=33", "--set", "simulation.warmup_cycles=500"],
        &["--set", "traffic.mode=fixed", "--set", "traffic.workload_phits=640", "--set", "output.sample_cycles=10"],
    ];
    for (n, extra) in cases.iter().enumerate() {
        let file = dir.path().join(format!("r{n}.h5"));
        let mut args = vec!["run", QUICKSTART, "--json", "-q", "-o", path_str(&file)];
        args.extend_from_slice(extra);
        let out = hxsim(&args, dir.path());
        assert!(out.status.success(), "{extra:?}: {}", text(&out.stderr));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let f = h5::open_file(&file).unwrap();
        let sc = f.attr("sample_cycles").unwrap().read_scalar::<u64>().unwrap();
        let ts = f.group("timeseries").unwrap();
        let (cycle, inj, acc, pk) = (
            u64s(&ts, "cycle"),
            u64s(&ts, "injected_phits"),
            u64s(&ts, "accepted_phits"),
            u64s(&ts, "delivered_packets"),
        );
        let (inj_load, acc_load) = (f64s(&ts, "injected_load"), f64s(&ts, "accepted_load"));
        for i in 0..cycle.len() {
            let len = cycle[i] - i as u64 * sc;
            assert!(len >= 1 && len <= sc, "{extra:?} row {i}");
            assert!(inj[i] <= len * servers, "{extra:?} row {i}: {} injected phits in {len} cycles", inj[i]);
            assert!(acc[i] <= len * servers, "{extra:?} row {i}: {} accepted phits in {len} cycles", acc[i]);
            assert!(inj_load[i] <= 1.0 && acc_load[i] <= 1.0, "{extra:?} row {i}");
        }
        let (inj_sum, acc_sum, pk_sum) = (inj.iter().sum::<u64>(), acc.iter().sum::<u64>(), pk.iter().sum::<u64>());
        let generated = json["packets_generated"].as_u64().unwrap();
        let in_flight_end = *ts.dataset("in_flight").unwrap().read_raw::<i64>().unwrap().last().unwrap() as u64;
        if n == 3 {
            // Drained: every packet generated was sent and delivered inside the run.
            assert_eq!(pk_sum, generated);
            assert_eq!(inj_sum, plen * generated, "{extra:?}");
            assert_eq!(acc_sum, plen * generated, "{extra:?}");
        } else {
            // Packets sent: delivered plus those still in the network at the end.
            let sent = pk_sum + in_flight_end;
            assert!(inj_sum <= plen * sent && inj_sum + servers * (plen - 1) >= plen * sent, "{extra:?}");
            assert!(acc_sum >= plen * pk_sum && acc_sum <= plen * pk_sum + servers * (plen - 1), "{extra:?}");
        }
    }
}

#[test]
fn file_does_not_depend_on_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("t1.h5"), dir.path().join("t3.h5"));
    for (p, t) in [(&a, "1"), (&b, "3")] {
        let out = hxsim(&["run", QUICKSTART, "-q", "--threads", t, "-o", path_str(p)], dir.path());
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let (fa, fb) = (h5::open_file(&a).unwrap(), h5::open_file(&b).unwrap());
    for col in ["cycle", "injected_phits", "accepted_phits", "delivered_packets", "latency_sum"] {
        let p = format!("timeseries/{col}");
        assert_eq!(u64s(&fa, &p), u64s(&fb, &p), "{p}");
    }
    for p in ["servers/injected_phits", "latency/packets", "links/phits", "summary/packets_delivered"] {
        let (x, y) =
            (fa.dataset(p).unwrap().read_raw::<u64>().unwrap(), fb.dataset(p).unwrap().read_raw::<u64>().unwrap());
        assert_eq!(x, y, "{p}");
    }
    assert_eq!(fb.attr("threads").unwrap().read_scalar::<u64>().unwrap(), 3);
}

#[test]
fn default_path_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = hxsim(&["run", QUICKSTART, "-q", "--no-output"], dir.path());
    assert!(out.status.success());
    assert!(!dir.path().join("results").exists(), "--no-output writes nothing");
    let out = hxsim(&["run", QUICKSTART, "-q"], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let files: Vec<PathBuf> =
        std::fs::read_dir(dir.path().join("results")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1);
    let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.starts_with("quickstart-") && name.ends_with(".h5"), "{name}");
    assert!(text(&out.stdout).contains(&format!("results/{name}")), "path printed: {}", text(&out.stdout));
    let out = hxsim(&["run", QUICKSTART, "-q", "--no-output", "-o", "x.h5"], dir.path());
    assert_eq!(out.status.code(), Some(2), "--output and --no-output conflict");
}

#[test]
fn bad_run_input_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    // Too many failed links is found while building the network, after the file would be created.
    let out = hxsim(&["run", QUICKSTART, "-q", "--set", "faults.random_links=100", "-o", "x.h5"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("faults.random_links"));
    assert!(!dir.path().join("x.h5").exists());
    let out = hxsim(&["run", QUICKSTART, "-q", "--set", "traffic.load=2", "-o", "x.h5"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.path().join("x.h5").exists());
}

const SMALL: [&str; 2] = ["--set", "simulation.warmup_cycles=500"];

#[test]
fn sweep_writes_a_group_per_point_and_a_table_independent_of_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let mut tables = Vec::new();
    for jobs in ["1", "3"] {
        let file = dir.path().join(format!("sweep{jobs}.h5"));
        let out = hxsim(
            &[
                "sweep",
                QUICKSTART,
                "--set",
                "traffic.load=0.2:0.4:0.1",
                "--set",
                "routing.algorithm=minimal,valiant",
                SMALL[0],
                SMALL[1],
                "--set",
                "simulation.measure_cycles=1000",
                "-q",
                "-j",
                jobs,
                "-o",
                path_str(&file),
            ],
            dir.path(),
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let f = h5::open_file(&file).unwrap();
        assert!(bool_attr(&f, "complete"));
        assert_eq!(h5::str_attr(&f, "kind").unwrap(), "sweep");
        let t = f.group("sweep").unwrap();
        let cols = h5::str_list_attr(&t, "columns").unwrap();
        assert_eq!(&cols[..4], ["point", "group", "traffic.load", "routing.algorithm"]);
        assert!(cols.contains(&"accepted_load".to_string()) && cols.ends_with(&["complete".into(), "error".into()]));
        assert_eq!(f64s(&t, "traffic.load"), [0.2, 0.2, 0.3, 0.3, 0.4, 0.4]);
        assert_eq!(strs(&t, "routing.algorithm"), ["minimal", "valiant"].repeat(3));
        assert_eq!(strs(&t, "error"), vec![String::new(); 6]);
        assert_eq!(t.dataset("complete").unwrap().read_raw::<bool>().unwrap(), vec![true; 6]);
        let groups = strs(&t, "group");
        let acc = f64s(&t, "accepted_load");
        for (i, g) in groups.iter().enumerate() {
            let p = f.group(g).unwrap();
            assert!(bool_attr(&p, "complete"));
            assert_eq!(p.dataset("summary/accepted_load").unwrap().read_scalar::<f64>().unwrap(), acc[i]);
            let cfg = hxsim::config::parse_str(&h5::str_attr(&p, "config").unwrap(), "file", &[]).unwrap();
            assert_eq!(cfg.routing.algorithm, ["minimal", "valiant"][i % 2]);
            assert_eq!(cfg.simulation.measure_cycles, 1000);
            assert_eq!(u64s(&p, "timeseries/cycle").len(), 15);
        }
        let summary_cols: Vec<(String, Vec<f64>)> = cols[4..cols.len() - 2]
            .iter()
            .filter(|c| !h5::TIMING_KEYS.contains(&c.as_str()))
            .map(|c| (c.clone(), f64s(&t, c)))
            .collect();
        tables.push(summary_cols);
        let out = hxsim(&["plot", path_str(&file), "-o", path_str(&dir.path().join("fig.svg"))], dir.path());
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    assert_eq!(tables[0], tables[1], "the table does not depend on --jobs");
    // Valiant costs latency at low load on this network.
    let lat = &tables[0].iter().find(|c| c.0 == "average_latency").unwrap().1;
    assert!(lat[1] > lat[0]);
}

#[test]
fn failed_point_is_recorded_and_the_sweep_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.h5");
    // Minimal routing with every hop on one VC (`vc_policy = "none"`, not deadlock free) at full
    // load: uniform traffic flows, bit-complement deadlocks (every packet crosses the network in
    // both dimensions, and the channel dependencies close cycles) and the watchdog fails it.
    let out = hxsim(
        &[
            "sweep",
            QUICKSTART,
            "--set",
            "traffic.pattern=uniform,bit-complement",
            "--set",
            "routing.vc_policy=none",
            "--set",
            "routing.vcs=1",
            "--set",
            "traffic.load=1.0",
            "--set",
            "simulation.watchdog_cycles=200",
            "--set",
            "simulation.warmup_cycles=0",
            "--set",
            "simulation.measure_cycles=3000",
            "-q",
            "-o",
            path_str(&file),
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let f = h5::open_file(&file).unwrap();
    assert!(bool_attr(&f, "complete"), "the sweep itself finished");
    let t = f.group("sweep").unwrap();
    let err = strs(&t, "error");
    assert_eq!(err[0], "");
    assert!(err[1].contains("deadlock"), "{}", err[1]);
    let acc = f64s(&t, "accepted_load");
    assert!(acc[0] > 0.4 && acc[1].is_nan());
    let g = f.group(&strs(&t, "group")[1]).unwrap();
    assert!(!bool_attr(&g, "complete"));
    assert!(h5::str_attr(&g, "error").unwrap().contains("deadlock"));
    assert!(text(&out.stdout).contains("failed"));
}

#[test]
fn bad_sweep_input_exits_2_and_names_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    for (set, needle) in [
        ("traffic.load=0.1:1.0", "START:STOP:STEP"),
        ("traffic.load", "KEY=VALUES"),
        ("traffic.load=0.5:1.5:0.5", "traffic.load"),
        ("traffic.lod=0.1,0.2", "lod"),
        ("routing.algorithm=minimal,nope", "nope"),
    ] {
        let out = hxsim(&["sweep", QUICKSTART, "--set", set, "-q", "-o", "x.h5"], dir.path());
        assert_eq!(out.status.code(), Some(2), "{set}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(needle), "{set}: {}", text(&out.stderr));
        assert!(!dir.path().join("x.h5").exists(), "nothing is written for bad input");
    }
    let out = hxsim(&["sweep", QUICKSTART, "--set", "traffic.load=0.1,0.2", "-j", "0"], dir.path());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn sigterm_leaves_a_readable_incomplete_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.h5");
    let mut child = Command::new(env!("CARGO_BIN_EXE_hxsim"))
        .args(["run", QUICKSTART, "-q", "--set", "simulation.measure_cycles=1000000000", "-o", path_str(&file)])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the file, read while the run goes on, shows some rows.
    let start = Instant::now();
    let seen = loop {
        assert!(start.elapsed() < Duration::from_secs(120), "no time-series rows appeared");
        std::thread::sleep(Duration::from_millis(100));
        // While the run goes on the file is FILE.partial; it becomes FILE at the end.
        let partial = dir.path().join("long.h5.partial");
        let rows = h5::open_file(&partial).ok().and_then(|f| f.dataset("timeseries/cycle").ok().map(|d| d.size()));
        if let Some(n) = rows.filter(|&n| n >= 30) {
            assert!(!file.exists(), "the final name appears only when the file is finished");
            let f = h5::open_file(&partial).unwrap();
            assert!(!bool_attr(&f, "complete"), "complete is false while running");
            break n;
        }
    };
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "hxsim did not stop after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(143), "exit 128 + SIGTERM; stderr: {}", text(&out.stderr));
    assert!(text(&out.stderr).contains("SIGTERM"));
    let f = h5::open_file(&file).unwrap();
    assert!(!bool_attr(&f, "complete"));
    assert!(h5::str_attr(&f, "status").unwrap().contains("interrupted by SIGTERM"));
    let cycle = u64s(&f, "timeseries/cycle");
    assert!(cycle.len() >= seen, "{} rows after, {seen} seen before", cycle.len());
    let simulated = f.dataset("summary/cycles").unwrap().read_scalar::<u64>().unwrap();
    // Consecutive intervals; the last one ends where the run stopped.
    let n = cycle.len();
    assert!(
        cycle[..n - 1].iter().enumerate().all(|(i, &c)| c == (i as u64 + 1) * 100),
        "rows are consecutive intervals"
    );
    assert_eq!(cycle[n - 1], simulated.min(n as u64 * 100));
    assert!(!dir.path().join("long.h5.partial").exists());
    assert!(*cycle.last().unwrap() <= simulated.div_ceil(100) * 100 && simulated < 1_000_000_000);
    assert_eq!(u64s(&f, "servers/injected_phits").len(), 64, "the results gathered so far are written");
}

fn png_pixels(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let px = buf[..info.buffer_size()].chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
    (info.width, info.height, px)
}

#[test]
fn plot_draws_png_and_svg_with_the_built_in_font() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.h5");
    let out = hxsim(
        &[
            "sweep",
            QUICKSTART,
            "--set",
            "traffic.load=0.2,0.4",
            "--set",
            "routing.algorithm=minimal,valiant",
            SMALL[0],
            SMALL[1],
            "--set",
            "simulation.measure_cycles=500",
            "-q",
            "-j",
            "2",
            "-o",
            path_str(&file),
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let png_path = dir.path().join("figs/s.png");
    let out = hxsim(&["plot", path_str(&file), "-o", path_str(&png_path)], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (w, h, px) = png_pixels(&png_path);
    // By default 7 in wide at 300 dpi; three panels a little wider than tall, a title and a legend.
    assert_eq!(w, 2100);
    assert!(h > 2100 / 3 * 3 / 4 && h < 2100 / 2, "{w} x {h}");
    // Curves in the first two palette colours, and text: dark pixels in the caption band.
    assert!(px.iter().filter(|p| **p == [31, 119, 180]).count() > 500, "first series drawn");
    assert!(px.iter().filter(|p| **p == [255, 127, 14]).count() > 500, "second series drawn");
    let dark_in_caption = (0..40 * w as usize).filter(|&i| px[i].iter().all(|&c| c < 80)).count();
    assert!(dark_in_caption > 100, "the captions were rendered ({dark_in_caption} dark pixels)");

    let svg = dir.path().join("s.svg");
    let out = hxsim(&["plot", path_str(&file), "-o", path_str(&svg), "--figure", "latency"], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = std::fs::read_to_string(&svg).unwrap();
    for needle in ["<svg", "Offered load (phits/cycle/server)", "Average latency (cycles)", "Minimal", "Valiant"] {
        assert!(s.contains(needle), "{needle} in the SVG");
    }
    // A point's time series, and a single run's.
    let out = hxsim(&["plot", path_str(&file), "--point", "3", "-o", path_str(&dir.path().join("p3.png"))], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = hxsim(&["plot", path_str(&file), "--point", "9", "-o", path_str(&dir.path().join("p9.png"))], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = hxsim(&["plot", path_str(&file), "-o", path_str(&dir.path().join("x.gif"))], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains(".svg, .png or .pdf"));
    let pdf = dir.path().join("x.pdf");
    let out = hxsim(&["plot", path_str(&file), "-o", path_str(&pdf)], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bytes = std::fs::read(&pdf).unwrap();
    assert!(bytes.starts_with(b"%PDF"));
    // The page is the printed size: 7 in = 504 pt wide.
    assert!(String::from_utf8_lossy(&bytes).contains("/MediaBox [0 0 504 "), "page of 504 pt");

    // --width and --font: half the width, a PNG half as wide; the text size is in the SVG.
    let narrow = dir.path().join("n.png");
    let out = hxsim(&["plot", path_str(&file), "-o", path_str(&narrow), "--width", "3.5in"], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(png_pixels(&narrow).0, 1050);
    let svg8 = dir.path().join("f8.svg");
    let out =
        hxsim(&["plot", path_str(&file), "-o", path_str(&svg8), "--font", "8pt", "--width", "17.78cm"], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = std::fs::read_to_string(&svg8).unwrap();
    // Drawn at 4 pixels per point: 8 pt text is 32 units in a drawing 504 pt (2016 units) wide.
    assert!(s.contains("width=\"504.00pt\""), "{}", &s[..200]);
    // plotters writes font-size as its size / 1.24, the em: 8 pt = 32 units.
    assert!(s.contains("font-size=\"32\"") || s.contains("font-size=\"31.99"), "8 pt text");
    for (flag, bad) in [("--width", "7 furlongs"), ("--width", "0.1in"), ("--font", "9px"), ("--font", "100pt")] {
        let out = hxsim(&["plot", path_str(&file), "-o", path_str(&svg8), flag, bad], dir.path());
        assert_eq!(out.status.code(), Some(2), "{flag} {bad}");
        assert!(text(&out.stderr).contains(flag) && text(&out.stderr).contains(bad), "{}", text(&out.stderr));
    }
}

/// Titles say what tells figures apart: a setting the sweep fixed with a one-value `--set` (not
/// the windows' lengths), and a point's offered load.
#[test]
fn plot_titles_name_the_fixed_settings_and_the_load() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.h5");
    let sweep = [
        "sweep",
        QUICKSTART,
        "--set",
        "traffic.load=0.2,0.4",
        "--set",
        "router.injection_throttle=window",
        SMALL[0],
        SMALL[1],
        "--set",
        "simulation.measure_cycles=500",
        "-q",
        "-o",
        path_str(&file),
    ];
    let out = hxsim(&sweep, dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let svg = |args: &[&str], name: &str| {
        let path = dir.path().join(name);
        let out = hxsim(&[&["plot", path_str(&file), "-o", path_str(&path)], args].concat(), dir.path());
        assert!(out.status.success(), "{}", text(&out.stderr));
        std::fs::read_to_string(&path).unwrap()
    };
    let s = svg(&[], "all.svg");
    assert!(s.contains("Uniform traffic") && s.contains("injection_throttle=window"), "title names the fixed setting");
    assert!(!s.contains("warmup_cycles"), "not the windows");
    let s = svg(&["--point", "1"], "p1.svg");
    assert!(s.contains("Minimal \u{2014} offered load 0.4") && s.contains("injection_throttle=window"), "point title");
}
