//! The fuzz harness that stays (issue 12, build item 6; issue 37): proptest over the config schema
//! and `--set` strings, tiny runs, and the binary's output paths and checkpoint flags, run by the
//! normal `cargo test` in bounded time (well under 2 minutes on 2 cores in the test profile;
//! `HXSIM_FUZZ_SCALE=10 cargo test --test fuzz` runs ten times more cases).
//!
//! Coverage (issue 37): every topology family (`topology::registry::KINDS`, a tiny base each),
//! every routing of `routing::REGISTRY` on every family it runs on, every fault kind of
//! `[faults]` (random links and switches, lists, a CSV and a JSON file, shapes, a lifetime), every
//! key of the configuration reference, docs/reference.md (as `--set` keys), every checkpoint flag
//! (`--checkpoint`, `--checkpoint-every`, `--resume`) and every output path option (`-o` of run,
//! sweep, merge and plot, `--json-out`, `--checkpoint`, design's `--write-config`); each test
//! asserts that what it covers is the whole list, so a new family, routing or key is fuzzed as soon
//! as it exists.
//!
//! What must hold, whatever the input:
//! - no panic: every rejected input is a `ConfigError` (exit code 2) whose message names the key of
//!   the `--set` (or, for a constraint between keys, a key of the schema);
//! - sane metrics for every run that is accepted: 0 <= accepted load <= what was generated (exactly)
//!   and <= offered load plus a tolerance derived from the run length and Bernoulli noise; Jain's index
//!   in (0, 1], or NaN exactly when nothing was injected in the window; latency at least the zero-load
//!   latency of a packet that crosses one switch, `2 L + X + P - 1`.
//!
//! The keys come from the schema itself (the default config serialised), so a new key is fuzzed as
//! soon as it exists.

use hxsim::config::{parse_str, Config, ConfigError};
use hxsim::engine::Progress;
use hxsim::sim::{self, RunOptions, SimError};
use proptest::prelude::*;
use std::process::Command;

const BASE: &str =
    "[topology]\nsides = [3, 3]\nservers_per_switch = 2\n[simulation]\nwarmup_cycles = 100\nmeasure_cycles = 200\n";

fn scale() -> u32 {
    std::env::var("HXSIM_FUZZ_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1).max(1)
}

/// Every key of the configuration reference (docs/reference.md, generated from the schema and
/// checked by tests/reference.rs): the first cell of every key table above its `## Names`, for
/// every topology family and the subtables (`faults.lifetime.*`, `faults.shapes.*`) included.
fn reference_keys() -> Vec<String> {
    static KEYS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    KEYS.get_or_init(read_reference_keys).clone()
}

fn read_reference_keys() -> Vec<String> {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reference.md")).unwrap();
    let keys_part = &page[..page.find("\n## Names").expect("docs/reference.md has a Names section")];
    let mut keys: Vec<String> = keys_part
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l.split('`').nth(1).map(str::to_string))
        .collect();
    keys.sort();
    keys.dedup();
    assert!(keys.len() > 50, "the reference lists every key: {keys:?}");
    keys
}

/// Every dotted key of the schema, from the default config.
fn schema_keys() -> Vec<String> {
    fn walk(prefix: &str, v: &toml::Value, out: &mut Vec<String>) {
        match v {
            toml::Value::Table(t) => {
                for (k, x) in t {
                    let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    walk(&key, x, out);
                }
            }
            _ => out.push(prefix.to_string()),
        }
    }
    let cfg = parse_str(BASE, "base", &[]).unwrap();
    let mut out = Vec::new();
    walk("", &toml::Value::try_from(&cfg).unwrap(), &mut out);
    out
}

/// Values of every TOML type and of awkward magnitudes.
fn any_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        (0u64..5000).prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| format!("{v:e}")),
        prop::sample::select(vec!["nan", "inf", "-inf", "1e-300", "1e-16", "0.0", "-0.0", "1.0000001", "0.5"])
            .prop_map(str::to_string),
        any::<bool>().prop_map(|b| b.to_string()),
        "[a-z-]{0,12}".prop_map(|s| s),
        "\"[ -~]{0,8}\"".prop_map(|s| s),
        prop::collection::vec(0i64..40, 0..5).prop_map(|v| format!("{v:?}")),
        Just("{a = 1}".to_string()),
        Just("[[1], [2]]".to_string()),
    ]
}

fn key_strategy() -> impl Strategy<Value = String> {
    let mut keys = schema_keys();
    keys.extend(reference_keys());
    keys.sort();
    keys.dedup();
    prop_oneof![
        8 => prop::sample::select(keys),
        1 => "[a-z_]{1,10}(\\.[a-z_]{1,10}){0,2}".prop_map(|s| s),
    ]
}

/// The message of a rejected `--set key=value` names `key` (or another key of the schema, when
/// the value broke a constraint between keys).
fn names_a_key(msg: &str, key: &str, keys: &[String]) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    msg.contains(key) || msg.contains(last) || keys.iter().chain(&reference_keys()).any(|k| msg.contains(k.as_str()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000 * scale(), failure_persistence: None, ..ProptestConfig::default() })]

    /// Any `--set` on a valid base: accepted, or rejected as bad input naming the key; never a panic.
    #[test]
    fn any_set_is_accepted_or_names_its_key(sets in prop::collection::vec((key_strategy(), any_value()), 1..4)) {
        let keys = schema_keys();
        let overrides: Vec<String> = sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
        match parse_str(BASE, "base", &overrides) {
            Ok(cfg) => prop_assert!(cfg.validate().is_ok()),
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(
                    sets.iter().any(|(k, _)| names_a_key(&msg, k, &keys)),
                    "{overrides:?}: {msg}"
                );
                if let ConfigError::Parse { origin, .. } = &e {
                    // A --set that broke the config is blamed on a --set, never on the base file.
                    prop_assert!(origin.starts_with("--set"), "{overrides:?} blamed on {origin}: {msg}");
                }
            }
        }
    }

    /// Sweep `--set` syntax: parsed, or rejected with the spec in the message; never a panic.
    #[test]
    fn any_sweep_set_parses_or_is_rejected(key in key_strategy(), a in any::<i64>(), b in any::<i64>(), s in any::<i64>(),
                                           f in any::<f64>(), g in any::<f64>(), h in any::<f64>()) {
        for spec in [format!("{key}={a}:{b}:{s}"), format!("{key}={f}:{g}:{h}"), format!("{key}={a},{f},{a}")] {
            match hxsim::sweep::parse_set(&spec) {
                Ok(axis) => prop_assert!(!axis.values.is_empty() && axis.values.len() <= hxsim::sweep::MAX_POINTS),
                // Named by its start: errors clip what they echo (hxsim::error::clip).
                Err(e) => prop_assert!(e.to_string().contains(&spec[..spec.len().min(100)]), "{spec}: {e}"),
            }
        }
    }
}

/// A tiny valid experiment.
fn tiny_config() -> impl Strategy<Value = Vec<String>> {
    (
        prop::collection::vec(2usize..4, 1..3),
        1usize..3,
        // Every routing that runs on a HyperX, from the registry.
        prop::sample::select(hxsim::routing::names_for("hyperx", false)),
        prop::sample::select(vec!["uniform", "random-server-permutation", "transpose", "swap2", "bit-complement"]),
        prop_oneof![Just(1e-16), 0.01f64..=1.0],
        (1u64..4, prop::sample::select(vec![1usize, 4, 16]), 1u64..3, 1usize..4),
        (0u64..200, 1u64..300, any::<u64>(), prop::sample::select(vec!["bernoulli", "fixed"])),
    )
        .prop_map(|(sides, t, alg, pat, load, (lat, plen, xlat, speed), (warm, meas, seed, mode))| {
            vec![
                format!("topology.sides={sides:?}"),
                format!("topology.servers_per_switch={t}"),
                format!("routing.algorithm={alg}"),
                format!("traffic.pattern={pat}"),
                format!("traffic.load={load:e}"),
                format!("traffic.mode={mode}"),
                format!("traffic.workload_phits={}", plen * 4),
                format!("link.latency={lat}"),
                format!("packet.size_phits={plen}"),
                format!("router.crossbar_latency={xlat}"),
                format!("router.crossbar_speedup={speed}"),
                format!("simulation.warmup_cycles={warm}"),
                format!("simulation.measure_cycles={meas}"),
                format!("simulation.max_cycles={}", 20_000),
                // Any u64: seeds above 2^63 - 1 are written as strings (rng::seed_format).
                format!("seed={seed}"),
            ]
        })
}

fn check_metrics(cfg: &Config, threads: usize) -> Result<(), TestCaseError> {
    let res = match sim::run(cfg, &RunOptions { threads, ..Default::default() }, &Progress::default()) {
        Ok(r) => r,
        // Bad input found while building the model (e.g. a pattern that needs a power of two).
        Err(SimError::Config(e)) => {
            prop_assert!(!e.to_string().is_empty());
            return Ok(());
        }
        Err(e) => return Err(TestCaseError::fail(format!("{cfg:?}: {e}"))),
    };
    let s = &res.summary;
    // Accepted load is per live server (servers of failed switches neither send nor receive).
    let servers = (res.server_injected.len() as u64 - s.servers_lost) as f64;
    let p = cfg.packet.size_phits as f64;
    let (l, x) = (cfg.link.latency as f64, cfg.router.crossbar_latency as f64);
    prop_assert!(s.accepted_load >= 0.0);
    if cfg.traffic.mode == hxsim::config::TrafficMode::Bernoulli {
        let (w, m) = (cfg.simulation.warmup_cycles as f64, cfg.simulation.measure_cycles as f64);
        // Exact: what is delivered in the window was generated before its end.
        prop_assert!(s.accepted_load * m * servers <= s.packets_generated as f64 * p + 1e-9, "{s:?}");
        // Statistical: the offered load over the whole run (backlog included), plus 6 sigma of the
        // Bernoulli packet count, over the window.
        let offered = s.offered_load.expect("a bernoulli run reports its offered load");
        let expected_packets = offered / p * (w + m) * servers;
        let bound = (expected_packets + 6.0 * expected_packets.sqrt() + 1.0) * p / (m * servers);
        prop_assert!(s.accepted_load <= bound, "accepted {} > {bound} ({cfg:?})", s.accepted_load);
    }
    let injected: u64 = res.server_injected.iter().sum();
    if injected == 0 {
        prop_assert!(s.jain_index.is_nan());
    } else {
        prop_assert!(s.jain_index > 0.0 && s.jain_index <= 1.0 + 1e-12, "Jain {}", s.jain_index);
    }
    if cfg.traffic.mode == hxsim::config::TrafficMode::Fixed {
        prop_assert!(s.offered_load.is_none(), "a fixed workload has no offered load: {s:?}");
    }
    if s.packets_delivered == 0 {
        prop_assert!(s.average_latency.is_nan() && s.average_hops.is_nan());
        prop_assert!(s.latency_p99.is_none() && s.steady_state.is_none(), "no data, no figure: {s:?}");
    } else {
        let zero_load = 2.0 * l + x + p - 1.0;
        prop_assert!(s.average_latency >= zero_load, "latency {} < zero-load {zero_load} ({cfg:?})", s.average_latency);
        prop_assert!(s.latency_p99.is_some_and(|p| p as f64 >= zero_load));
        prop_assert!(s.average_hops >= 1.0);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120 * scale(), failure_persistence: None, ..ProptestConfig::default() })]

    /// Tiny runs of valid configs, on 1 and 2 threads: sane metrics, identical results.
    #[test]
    fn tiny_runs_have_sane_metrics(sets in tiny_config(), threads in 1usize..3) {
        let Ok(cfg) = parse_str(BASE, "base", &sets) else { return Ok(()) };
        check_metrics(&cfg, threads)?;
    }
}

/// The binary, on a few random `--set`s: exit 0 or 2, never a panic; 2 names the key.
#[test]
fn binary_exits_0_or_2_without_panicking() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let keys = schema_keys();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("base.toml");
    std::fs::write(&cfg, BASE).unwrap();
    let mut runner = TestRunner::deterministic();
    for _ in 0..(24 * scale()) {
        let (k, v) = (key_strategy(), any_value()).new_tree(&mut runner).unwrap().current();
        let set = format!("{k}={v}");
        let out = Command::new(env!("CARGO_BIN_EXE_hxsim"))
            .args(["run", cfg.to_str().unwrap(), "-q", "--no-output", "--set", &set])
            .args(["--set", "simulation.measure_cycles=50", "--set", "simulation.warmup_cycles=0"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{set}: {err}");
        match out.status.code() {
            Some(0) => {}
            Some(2) => assert!(names_a_key(&err, &k, &keys), "{set}: {err}"),
            c => panic!("{set}: exit {c:?}: {err}"),
        }
    }
}

/// A tiny network of every topology family (the graph family reads `ring.txt` in `dir`, written
/// here), with a short schedule; the list must be the registry's.
fn family_bases(dir: &std::path::Path) -> Vec<(&'static str, String)> {
    std::fs::write(dir.join("ring.txt"), "0 1\n1 2\n2 3\n3 4\n4 5\n5 0\n0 3\n1 4\n").unwrap();
    let ring = dir.join("ring.txt").display().to_string();
    let bases = vec![
        ("hyperx", "kind = \"hyperx\"\nsides = [3, 3]\nservers_per_switch = 2".to_string()),
        ("hyperz", "kind = \"hyperz\"\nsides = [2, 2]\nzones = [2, 2]\nroots = [1, 2]".to_string()),
        ("fattree", "kind = \"fattree\"\nzones = [2, 2]\nroots = [1, 2]".to_string()),
        ("dragonfly", "kind = \"dragonfly\"\np = 1\na = 2\nh = 1".to_string()),
        ("torus", "kind = \"torus\"\nsides = [3, 3]\nservers_per_switch = 1".to_string()),
        ("mesh", "kind = \"mesh\"\nsides = [3, 2]\nservers_per_switch = 1".to_string()),
        ("rrg", "kind = \"rrg\"\nswitches = 10\ndegree = 3\nservers_per_switch = 1".to_string()),
        ("kautz", "kind = \"kautz\"\ndegree = 2\ndiameter = 2\nservers_per_switch = 1".to_string()),
        ("graph", format!("kind = \"graph\"\nfile = \"{ring}\"\nservers_per_switch = 1")),
        ("clos", "kind = \"clos\"\nservers = 16\ndown = [4, 4]\nup = [4]\ntop_per_package = 1".to_string()),
    ];
    let mut kinds: Vec<&str> = bases.iter().map(|b| b.0).collect();
    let mut all = hxsim::topology::registry::KINDS.to_vec();
    kinds.sort_unstable();
    all.sort_unstable();
    assert_eq!(kinds, all, "a tiny base for every topology family");
    bases
        .into_iter()
        .map(|(k, t)| {
            (
                k,
                format!(
                    "[topology]\n{t}\n[simulation]\nwarmup_cycles = 40\nmeasure_cycles = 120\nwatchdog_cycles = 2000\n"
                ),
            )
        })
        .collect()
}

/// A fault kind: its name, its `--set`s, and the families it applies to (`None`: all).
type FaultKind = (&'static str, Vec<String>, Option<&'static [&'static str]>);

/// Every fault kind of `[faults]`, as `--set`s, and the families it applies to (`None`: all). The
/// CSV and JSON files are written in `dir` by [`fault_files`].
fn fault_kinds(dir: &std::path::Path) -> Vec<FaultKind> {
    let file = |name: &str| format!("faults.file=\"{}\"", dir.join(name).display());
    let kinds = vec![
        ("random_links", vec!["faults.random_links=1".to_string()], None),
        ("random_switches", vec!["faults.random_switches=1".into()], None),
        ("links", vec!["faults.links=[[0,0]]".into()], None),
        ("switches", vec!["faults.switches=[1]".into()], None),
        ("file", vec![file("f.csv")], None),
        ("file-json", vec![file("f.json")], None),
        ("shapes", vec!["faults.shapes=[{kind=\"row\",length=2}]".into()], Some(&["hyperx"][..])),
        ("shapes-hyperz", vec!["faults.shapes=[{kind=\"plane\",level=1,index=0}]".into()], Some(&["hyperz"][..])),
        ("lifetime", vec!["faults.lifetime={link_rate=0.05,switch_rate=0.02,years=4,steps=2}".into()], None),
        ("events", vec!["faults.events=[{cycle=100,random_links=1},{cycle=150,random_switches=1}]".into()], None),
        (
            "events-reconfigure",
            vec![
                "faults.events=[{cycle=100,random_links=2}]".into(),
                "faults.reconfigure_cycles=60".into(),
                "faults.stranded=\"wait\"".into(),
                "faults.retransmit_cycles=40".into(),
                "faults.retransmit_limit=2".into(),
            ],
            None,
        ),
    ];
    // Every `faults.*` key of the configuration reference is a fault kind here or a modifier the
    // runs set with each (`seed`, `unreachable`).
    // A subtable's keys (`faults.lifetime.years`) count with their table.
    for key in reference_keys().iter().filter(|k| k.starts_with("faults.")) {
        let key = key.splitn(3, '.').take(2).collect::<Vec<_>>().join(".");
        let k = &key["faults.".len()..];
        assert!(
            ["seed", "unreachable"].contains(&k)
                || kinds.iter().any(|(_, sets, _)| sets.iter().any(|s| s.starts_with(key.as_str()))),
            "fault key {key} of the reference is not fuzzed"
        );
    }
    kinds
}

fn fault_files(dir: &std::path::Path) {
    std::fs::write(dir.join("f.csv"), "kind,switch,port\nlink,0,0\n").unwrap();
    std::fs::write(dir.join("f.json"), "{\"switches\": [1]}").unwrap();
}

/// How an in-process tiny run ended.
enum Ended {
    Ran,
    Refused,
}

/// Parse, build and run `base` with `sets` on `threads` threads: refused as bad input naming a key
/// (never a panic, never another failure), or run with sane metrics ([`check_metrics`]).
fn tiny_run(base: &str, sets: &[String], threads: usize) -> Result<Ended, TestCaseError> {
    let keys = schema_keys();
    let cfg = match parse_str(base, "base", sets) {
        Ok(c) => c,
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(
                sets.iter().any(|s| names_a_key(&msg, s.split('=').next().unwrap(), &keys)),
                "{sets:?}: {msg}"
            );
            return Ok(Ended::Refused);
        }
    };
    match sim::run(&cfg, &RunOptions { threads, ..Default::default() }, &Progress::default()) {
        Err(SimError::Config(e)) => {
            let msg = e.to_string();
            prop_assert!(names_a_key(&msg, "", &keys) || msg.contains("--threads"), "{sets:?}: {msg}");
            Ok(Ended::Refused)
        }
        Err(e) => Err(TestCaseError::fail(format!("{base}\n{sets:?}: {e}"))),
        Ok(_) => {
            check_metrics(&cfg, threads)?;
            Ok(Ended::Ran)
        }
    }
}

/// Every topology family with every routing of the registry that runs on it, fault-free and with
/// a fault kind (rotating over the kinds, with `faults.unreachable = "drop"` so that a split is
/// simulated rather than refused), on 1 and 2 threads: each run is refused as bad input naming a
/// key, or runs with sane metrics; and every family, every routing and every fault kind runs at
/// least once.
#[test]
fn every_family_routing_and_fault_kind_runs_or_is_refused_by_key() {
    let dir = tempfile::tempdir().unwrap();
    fault_files(dir.path());
    let faults = fault_kinds(dir.path());
    let mut ran: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    let mut k = 0usize;
    for (family, base) in family_bases(dir.path()) {
        for routing in hxsim::routing::names_for(family, false) {
            let faulty = hxsim::routing::entry(routing).is_some_and(|e| e.fault_tolerant);
            let kinds: Vec<_> = faults.iter().filter(|f| f.2.is_none_or(|fs| fs.contains(&family))).collect();
            let mut cases = vec![(None, vec![])];
            if faulty {
                // Two fault kinds per pair, rotating, so that every kind meets every family.
                for j in 0..2 {
                    let f = kinds[(k + j) % kinds.len()];
                    let mut sets = f.1.clone();
                    sets.push("faults.unreachable=\"drop\"".into());
                    cases.push((Some(f.0), sets));
                }
            }
            for (fault, mut sets) in cases {
                k += 1;
                sets.push(format!("routing.algorithm={routing}"));
                let threads = 1 + k % 2;
                // A panic is reported with its case.
                let ended = std::panic::catch_unwind(|| tiny_run(&base, &sets, threads))
                    .unwrap_or_else(|_| panic!("panic on {family}, {sets:?}, {threads} threads"));
                match ended {
                    Ok(Ended::Ran) => {
                        for key in [format!("family {family}"), format!("routing {routing}")]
                            .into_iter()
                            .chain(fault.map(|f| format!("fault {f}")))
                        {
                            *ran.entry(key).or_default() += 1;
                        }
                    }
                    Ok(Ended::Refused) => {}
                    Err(e) => panic!("{family}, {sets:?}, {threads} threads: {e}"),
                }
            }
        }
    }
    let missing: Vec<String> = hxsim::topology::registry::KINDS
        .iter()
        .map(|f| format!("family {f}"))
        .chain(hxsim::routing::REGISTRY.iter().map(|e| format!("routing {}", e.name)))
        .chain(faults.iter().map(|f| format!("fault {}", f.0)))
        .filter(|key| !ran.contains_key(key))
        .collect();
    assert!(missing.is_empty(), "never ran: {missing:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60 * scale(), failure_persistence: None, ..ProptestConfig::default() })]

    /// Random tiny runs on any family, with a routing that runs on it, any fault kind (or none),
    /// any pattern by server id, load, packet size, seed and thread count.
    #[test]
    fn tiny_runs_on_any_family_have_sane_metrics(
        family in 0usize..10,
        routing in any::<prop::sample::Index>(),
        fault in 0usize..12,
        pattern in prop::sample::select(vec!["uniform", "random-server-permutation", "bit-complement", "bit-reverse", "transpose"]),
        load in 0.01f64..=1.0,
        plen in prop::sample::select(vec![1usize, 4, 16]),
        seed in any::<u64>(),
        threads in 1usize..3,
    ) {
        let dir = tempfile::tempdir().unwrap();
        fault_files(dir.path());
        let bases = family_bases(dir.path());
        let (kind, base) = &bases[family % bases.len()];
        let faults = fault_kinds(dir.path());
        let mut sets: Vec<String> = match faults.get(fault) {
            Some(f) if f.2.is_none_or(|fs| fs.contains(kind)) => f.1.clone(),
            _ => vec![],
        };
        let names = hxsim::routing::names_for(kind, !sets.is_empty());
        sets.push("faults.unreachable=\"drop\"".into());
        sets.push(format!("routing.algorithm={}", routing.get(&names)));
        sets.push(format!("traffic.pattern={pattern}"));
        sets.push(format!("traffic.load={load:e}"));
        sets.push(format!("packet.size_phits={plen}"));
        sets.push(format!("seed={seed}"));
        tiny_run(base, &sets, threads)?;
    }
}

/// What an output path option is given, for [`outputs_and_checkpoint_flags_never_clobber`].
#[derive(Debug, Clone, Copy, PartialEq)]
enum PathKind {
    /// A new file.
    New,
    /// A new file in a directory that does not exist yet.
    NewDir,
    /// An existing regular file (replaced on success).
    Existing,
    /// An existing directory (refused).
    Dir,
    /// A link to an existing file (the file is replaced, the link stays).
    Link,
    /// A link to a file that does not exist (the file is created).
    Dangling,
    /// `/dev/null` (written into, never replaced).
    DevNull,
    /// The command's own input (refused).
    Input,
    /// A path in a directory that cannot exist (refused).
    Unwritable,
    /// The same path as the command's first output (refused, unless both are `/dev/null`).
    Same,
}

const PATH_KINDS: [PathKind; 10] = [
    PathKind::New,
    PathKind::NewDir,
    PathKind::Existing,
    PathKind::Dir,
    PathKind::Link,
    PathKind::Dangling,
    PathKind::DevNull,
    PathKind::Input,
    PathKind::Unwritable,
    PathKind::Same,
];

/// The state of a path, to tell whether a command changed it.
fn state(p: &std::path::Path) -> String {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::symlink_metadata(p) {
        Err(_) => "absent".into(),
        Ok(m) if m.file_type().is_symlink() => format!("link to {:?}", std::fs::read_link(p).unwrap()),
        Ok(m) if m.is_dir() => "dir".into(),
        Ok(m) if m.file_type().is_char_device() => "char device".into(),
        Ok(_) => {
            // Its length and an FNV-1a hash of its bytes.
            let bytes = std::fs::read(p).unwrap();
            let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
            format!("file of {} bytes, hash {h:016x}", bytes.len())
        }
    }
}

/// Every file under `dir` whose name says it is a partial output left behind.
fn leftovers(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(leftovers(&p));
        } else if p.file_name().unwrap().to_string_lossy().contains(".partial") {
            out.push(p);
        }
    }
    out
}

/// The binary with every output path option (`-o` of run, sweep, merge and plot, `--json-out`,
/// `--checkpoint`, design's `--write-config` and `--plot`) given every kind of path (new, in a new
/// directory, existing, a directory, a link, a dangling link, `/dev/null`, the command's input, an
/// unwritable place, another output's), and the checkpoint flags (`--checkpoint`,
/// `--checkpoint-every`, `--resume`): never a panic; exit 0 or 2; exit 2 for a path that must be
/// refused, with every output and input as it was; never an input changed; never a partial file
/// left; a link stays a link and `/dev/null` a device; and a run resumed from its last checkpoint
/// gives the summary of the run that wrote it.
#[test]
fn outputs_and_checkpoint_flags_never_clobber() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tmpdir = d.join("tmp");
    std::fs::create_dir(&tmpdir).unwrap();
    let cfg = d.join("c.toml");
    std::fs::write(
        &cfg,
        format!("{BASE}warmup_cycles = 50\nmeasure_cycles = 400\n").replace(
            "[simulation]\nwarmup_cycles = 100\nmeasure_cycles = 200\nwarmup_cycles",
            "[simulation]\nwarmup_cycles",
        ),
    )
    .unwrap();
    let hx = |args: &[String]| {
        Command::new(env!("CARGO_BIN_EXE_hxsim")).args(args).current_dir(d).env("TMPDIR", &tmpdir).output().unwrap()
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    // Inputs for plot and merge.
    std::fs::create_dir(d.join("pts")).unwrap();
    for i in 0..2 {
        let (h5, json) = (format!("pts/point-{i}.h5"), format!("pts/point-{i}.json"));
        let load = format!("traffic.load=0.{}", i + 2);
        let out = hx(&s(&["run", "c.toml", "-q", "-o", &h5, "--json-out", &json, "--set", &load]));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let inputs = [cfg.clone(), d.join("pts/point-0.h5"), d.join("pts/point-1.h5"), d.join("pts/point-0.json")];
    let before_inputs: Vec<String> = inputs.iter().map(|p| state(p)).collect();
    let mut runner = TestRunner::deterministic();
    let mut seen = std::collections::BTreeSet::new();
    let mut resumed_alike = 0;
    // Twenty cases per command; option `j` of case `i` of a command gets path kind `(i + 3 j) % 10`
    // and is left out when `(i + j) % 4 == 3`: every option meets every kind (the coverage check at
    // the end), and the random choices are the checkpoint interval.
    for case in 0..(120 * scale() as usize) {
        let i = case / 6;
        let pick = |n: usize, runner: &mut TestRunner| (0..n).new_tree(runner).unwrap().current();
        let command = ["run", "sweep", "merge", "plot", "design", "design-vs-clos"][case % 6];
        let (keys, ext, input): (&[&str], &str, &str) = match command {
            "run" => (&["-o", "--json-out", "--checkpoint"], "h5", "c.toml"),
            "sweep" => (&["-o"], "h5", "c.toml"),
            "merge" => (&["-o"], ["h5", "csv"][i / 10 % 2], "pts/point-0.h5"),
            "plot" => (&["-o"], "svg", "pts/point-0.h5"),
            "design" => (&["--write-config", "--plot"], "svg", "c.toml"),
            _ => (&["--plot"], "svg", "c.toml"),
        };
        // Paths for the options used this time (each option present or not).
        let mut outs: Vec<(&str, PathKind, String)> = Vec::new();
        for (j, key) in keys.iter().enumerate() {
            if j > 0 && (i + j) % 4 == 3 {
                continue;
            }
            let kind = PATH_KINDS[(i + 3 * j) % PATH_KINDS.len()];
            if kind == PathKind::Input && command.starts_with("design") {
                // `design` reads no file.
                continue;
            }
            let ext = match *key {
                "--json-out" => "json",
                "--checkpoint" => "ckpt",
                "--write-config" => "toml",
                _ => ext,
            };
            let name = format!("o{case}-{j}.{ext}");
            let path = match kind {
                PathKind::New => name,
                PathKind::NewDir => format!("new{case}/{name}"),
                PathKind::Existing => {
                    std::fs::write(d.join(&name), "precious").unwrap();
                    name
                }
                PathKind::Dir => {
                    std::fs::create_dir(d.join(&name)).unwrap();
                    name
                }
                PathKind::Link => {
                    std::fs::write(d.join(format!("target-{name}")), "precious").unwrap();
                    std::os::unix::fs::symlink(format!("target-{name}"), d.join(&name)).unwrap();
                    name
                }
                PathKind::Dangling => {
                    std::os::unix::fs::symlink(format!("made-{name}"), d.join(&name)).unwrap();
                    name
                }
                PathKind::DevNull => "/dev/null".into(),
                PathKind::Input => input.into(),
                PathKind::Unwritable => format!("/proc/none/{name}"),
                PathKind::Same => outs.first().map_or(name, |o| o.2.clone()),
            };
            seen.insert(format!("{command} {key} {kind:?}"));
            outs.push((key, kind, path));
        }
        let mut args: Vec<String> = match command {
            "run" => s(&["run", "c.toml", "-q", "--json"]),
            "sweep" => s(&["sweep", "c.toml", "-q", "--set", "traffic.load=0.2,0.4"]),
            "merge" => s(&["merge", "pts"]),
            "plot" => s(&["plot", "pts/point-0.h5"]),
            "design" => s(&["design", "hyperx", "--endpoints", "64", "--radix", "16", "--bisection", "0.5"]),
            _ => s(&["design", "hyperx-vs-clos", "--max-log2-endpoints", "10"]),
        };
        for (key, _, path) in &outs {
            args.extend([key.to_string(), path.clone()]);
        }
        if command == "run" && !outs.iter().any(|o| o.0 == "-o") {
            args.push("--no-output".into());
        }
        if outs.is_empty() {
            // (hyperx-vs-clos's --plot is required: nothing to test without it.)
            continue;
        }
        let checkpointing = outs.iter().any(|o| o.0 == "--checkpoint");
        if checkpointing && pick(2, &mut runner) == 0 {
            args.extend(s(&["--checkpoint-every", &(50 + 50 * pick(6, &mut runner)).to_string()]));
        }
        if command == "plot"
            || command == "design-vs-clos"
            || (command == "design" && outs.iter().any(|o| o.0 == "--plot"))
        {
            // Figures need a name ending in .svg (a device has none): drop the other cases.
            if outs.iter().any(|o| o.1 == PathKind::DevNull || o.1 == PathKind::Input && o.0 != "--write-config") {
                continue;
            }
        }
        let watched: Vec<std::path::PathBuf> = outs
            .iter()
            .filter(|o| !o.2.starts_with('/'))
            .flat_map(|o| {
                let p = d.join(&o.2);
                let made = p.with_file_name(format!("made-{}", p.file_name().unwrap().to_string_lossy()));
                let target = p.with_file_name(format!("target-{}", p.file_name().unwrap().to_string_lossy()));
                [p, made, target]
            })
            .collect();
        let before: Vec<String> = watched.iter().map(|p| state(p)).collect();
        let out = hx(&args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        let code = out.status.code();
        assert!(matches!(code, Some(0) | Some(2)), "{args:?}: exit {code:?}: {err}");
        let must_refuse = outs.iter().enumerate().any(|(j, o)| match o.1 {
            PathKind::Dir | PathKind::Unwritable => true,
            // A checkpoint replaces only a checkpoint: not a file of the user's.
            PathKind::Existing | PathKind::Link => o.0 == "--checkpoint",
            PathKind::Input => true,
            PathKind::Same => j > 0 && o.2 != "/dev/null",
            _ => false,
        });
        if must_refuse {
            assert_eq!(code, Some(2), "{args:?} must be refused: {err}");
        }
        if code == Some(2) {
            let names_option = outs.iter().any(|o| err.contains(o.0)) || err.contains("--checkpoint-every");
            assert!(names_option, "{args:?}: exit 2 without naming the option: {err}");
            let after: Vec<String> = watched.iter().map(|p| state(p)).collect();
            assert_eq!(before, after, "{args:?}: refused, yet an output changed");
        } else {
            // (A checkpoint is written at pauses only, when the run reaches one: checked below.)
            for (key, kind, path) in outs.iter().filter(|o| o.0 != "--checkpoint") {
                let p = d.join(path);
                match kind {
                    PathKind::Link => {
                        assert!(p.is_symlink(), "{args:?}: {key} replaced the link");
                        assert_ne!(std::fs::read(&p).unwrap(), b"precious", "{args:?}: {key} not written");
                    }
                    PathKind::Dangling => assert!(p.is_symlink() && p.exists(), "{args:?}: {key}: no target"),
                    PathKind::Existing => assert_ne!(std::fs::read(&p).unwrap(), b"precious", "{args:?}: {key}"),
                    PathKind::New | PathKind::NewDir => assert!(p.is_file(), "{args:?}: {key} not written"),
                    _ => {}
                }
            }
        }
        assert_eq!(state(std::path::Path::new("/dev/null")), "char device");
        let now: Vec<String> = inputs.iter().map(|p| state(p)).collect();
        assert_eq!(now, before_inputs, "{args:?} changed an input");
        assert_eq!(leftovers(d), Vec::<std::path::PathBuf>::new(), "{args:?} left partial files");
        assert_eq!(std::fs::read_dir(&tmpdir).unwrap().count(), 0, "{args:?} left files in TMPDIR");
        // A checkpoint a complete run left resumes to the same summary (`--resume`).
        if code == Some(0) && checkpointing && command == "run" {
            let ck = outs.iter().find(|o| o.0 == "--checkpoint").unwrap();
            let resumed = hx(&s(&["run", "--resume", &ck.2, "-q", "--json", "--no-output"]));
            let rerr = String::from_utf8_lossy(&resumed.stderr);
            match ck.1 {
                PathKind::DevNull => assert_eq!(resumed.status.code(), Some(2), "{rerr}"),
                _ if !d.join(&ck.2).exists() => {
                    // No pause was reached (no --checkpoint-every, or the run ended first).
                    assert_eq!(resumed.status.code(), Some(2), "{rerr}");
                    assert!(rerr.contains("--resume"), "{rerr}");
                }
                _ => {
                    assert!(resumed.status.success(), "{args:?}: resume: {rerr}");
                    let strip = |b: &[u8]| {
                        let mut v: serde_json::Value = serde_json::from_slice(b).unwrap();
                        for k in ["wall_seconds", "hops_per_second", "peak_memory_bytes"] {
                            v.as_object_mut().unwrap().remove(k);
                        }
                        v
                    };
                    assert_eq!(strip(&resumed.stdout), strip(&out.stdout), "{args:?}: the resumed run differs");
                    resumed_alike += 1;
                }
            }
        }
    }
    assert!(resumed_alike >= 2, "{resumed_alike} runs resumed from a checkpoint");
    // Every option met every kind of path at least once (the sample is deterministic).
    for (command, keys) in [("run", &["-o", "--json-out", "--checkpoint"][..]), ("merge", &["-o"][..])] {
        for key in keys {
            for kind in PATH_KINDS {
                assert!(seen.contains(&format!("{command} {key} {kind:?}")), "{command} {key} never got {kind:?}");
            }
        }
    }
}
