//! The results-identity check: the `--json` summaries of a fixed set of small runs
//! (`tests/identity/cases.toml`: every topology family, every routing, the fault kinds, fixed
//! workloads, router options, 1 and 3 threads) must equal the stored ones
//! (`tests/identity/expected.json`), timing keys aside.
//!
//! A refactor or a speed-up must leave every summary bit-identical. A change of the model on purpose
//! is re-blessed with `make bless` (`HXSIM_BLESS=1 cargo test --test identity`), which rewrites
//! `expected.json`; the commit says why the results changed.

use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Keys of the summary that measure the machine, not the model.
const TIMING_KEYS: [&str; 4] = ["wall_seconds", "hops_per_second", "peak_memory_bytes", "routing_build_seconds"];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/identity")
}

/// One case of `cases.toml`.
struct Case {
    name: String,
    config: String,
    threads: usize,
    set: Vec<String>,
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(dir().join("cases.toml")).expect("reading tests/identity/cases.toml");
    let doc: toml::Table = text.parse().expect("tests/identity/cases.toml is TOML");
    let bases = doc["bases"].as_table().expect("[bases]");
    let mut out = Vec::new();
    for c in doc["case"].as_array().expect("[[case]]") {
        let name = c["name"].as_str().expect("case name").to_string();
        let base = c["base"].as_str().expect("case base");
        let body = bases.get(base).and_then(|b| b.as_str()).unwrap_or_else(|| panic!("{name}: no base `{base}`"));
        let set = c
            .get("set")
            .and_then(|s| s.as_array())
            .map_or_else(Vec::new, |a| a.iter().map(|v| v.as_str().expect("a --set string").to_string()).collect());
        let threads = c.get("threads").and_then(|t| t.as_integer()).unwrap_or(1) as usize;
        out.push(Case { config: format!("name = \"{name}\"\n{body}"), name, threads, set });
    }
    let mut names: Vec<&str> = out.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), out.len(), "case names are unique");
    out
}

/// The summary of one case, without [`TIMING_KEYS`].
fn summary(case: &Case, work: &Path) -> Result<Value, String> {
    let path = work.join(format!("{}.toml", case.name));
    std::fs::write(&path, &case.config).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hxsim"));
    cmd.args(["run", path.to_str().unwrap(), "--json", "--quiet", "--no-output"]);
    cmd.args(["--threads", &case.threads.to_string()]);
    for s in &case.set {
        cmd.args(["--set", s]);
    }
    let out = cmd.output().map_err(|e| format!("running hxsim: {e}"))?;
    if !out.status.success() {
        return Err(format!("exit {:?}: {}", out.status.code(), String::from_utf8_lossy(&out.stderr)));
    }
    let mut v: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("stdout is not JSON: {e}"))?;
    let obj = v.as_object_mut().ok_or("the summary is not a JSON object")?;
    for k in TIMING_KEYS {
        obj.remove(k);
    }
    Ok(v)
}

/// What differs between two summaries, key by key.
fn differences(want: &Value, got: &Value) -> Vec<String> {
    let (Some(w), Some(g)) = (want.as_object(), got.as_object()) else {
        return vec![format!("expected {want}, got {got}")];
    };
    let mut keys: Vec<&String> = w.keys().chain(g.keys()).collect();
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .filter(|k| w.get(*k) != g.get(*k))
        .map(|k| {
            let show = |v: Option<&Value>| v.map_or_else(|| "absent".to_string(), Value::to_string);
            format!("{k}: expected {}, got {}", show(w.get(k)), show(g.get(k)))
        })
        .collect()
}

#[test]
fn summaries_equal_the_stored_ones() {
    let cases = cases();
    let work = tempfile::tempdir().unwrap();
    std::fs::copy(dir().join("ring.edges"), work.path().join("ring.edges")).unwrap();
    // Two workers: CI has two cores, and most cases are single-threaded.
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Value, String>>>> = Mutex::new((0..cases.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let r = summary(case, work.path());
                results.lock().unwrap()[i] = Some(r);
            });
        }
    });
    let results: Vec<Result<Value, String>> =
        results.into_inner().unwrap().into_iter().map(|r| r.expect("every case ran")).collect();
    let failed: Vec<String> =
        cases.iter().zip(&results).filter_map(|(c, r)| r.as_ref().err().map(|e| format!("{}: {e}", c.name))).collect();
    assert!(failed.is_empty(), "cases that did not run:\n{}", failed.join("\n"));
    let stored = dir().join("expected.json");
    if std::env::var_os("HXSIM_BLESS").is_some_and(|v| v != "0") {
        let mut all = Map::new();
        for (c, r) in cases.iter().zip(results) {
            all.insert(c.name.clone(), r.unwrap());
        }
        let text = serde_json::to_string_pretty(&Value::Object(all)).unwrap() + "\n";
        std::fs::write(&stored, text).unwrap();
        eprintln!("blessed {} summaries into {}", cases.len(), stored.display());
        return;
    }
    let want: Map<String, Value> = serde_json::from_str(
        &std::fs::read_to_string(&stored).expect("tests/identity/expected.json (`make bless` writes it)"),
    )
    .expect("expected.json is a JSON object");
    let mut report = Vec::new();
    for (c, got) in cases.iter().zip(&results) {
        match want.get(&c.name) {
            None => report.push(format!("{}: no stored summary (run `make bless`)", c.name)),
            Some(w) => {
                let d = differences(w, got.as_ref().unwrap());
                if !d.is_empty() {
                    report.push(format!("{}:\n    {}", c.name, d.join("\n    ")));
                }
            }
        }
    }
    for stale in want.keys().filter(|k| !cases.iter().any(|c| &c.name == *k)) {
        report.push(format!("{stale}: stored but no longer a case (run `make bless`)"));
    }
    assert!(
        report.is_empty(),
        "{} of {} summaries differ from tests/identity/expected.json; after an intended model change run \
         `make bless` and say why in the commit:\n{}",
        report.len(),
        cases.len(),
        report.join("\n")
    );
}
