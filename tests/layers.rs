//! No module imports upward: `src/lib.rs` declares the top-level modules in layer order, bottom first,
//! and every `crate::X` a module names (outside comments and unit tests) must be declared before it.
//! Unit tests (files named `*tests.rs`, and what follows `#[cfg(test)]` at the end of a file) may
//! build their fixtures with any layer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level modules of `src/lib.rs`, in declaration order.
fn layers() -> Vec<String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ").or_else(|| l.trim().strip_prefix("mod ")))
        .map(|m| m.trim_end_matches(';').trim().to_string())
        .collect()
}

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file that counts: without comment lines, and without the unit tests at its end.
fn code(path: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") && lines.get(i + 1).is_some_and(|n| n.trim_start().starts_with("mod ")) {
            let next = lines[i + 1].trim();
            // `mod tests;` declares a test file (skipped by name); `mod tests {` starts the tests.
            if next.ends_with('{') {
                break;
            }
            continue;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push((i + 1, line.to_string()));
    }
    out
}

/// The top-level modules named by `crate::` paths in `line` (also inside `use crate::{a, b::c}`).
fn named(line: &str, known: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let m = part.trim().split("::").next().unwrap_or("").trim();
                out.push(m.to_string());
            }
        } else {
            let m: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            out.push(m);
        }
    }
    out.retain(|m| known.contains(m));
    out
}

#[test]
fn no_module_imports_upward() {
    let order = layers();
    assert!(order.len() > 10, "src/lib.rs declares the modules: {order:?}");
    let rank: BTreeMap<&str, usize> = order.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
    let mut upward = Vec::new();
    for m in &order {
        let mut fs = Vec::new();
        let single = src().join(format!("{m}.rs"));
        if single.exists() {
            fs.push(single);
        }
        let dir = src().join(m);
        if dir.is_dir() {
            files(&dir, &mut fs);
        }
        assert!(!fs.is_empty(), "module {m} has no source file");
        for f in fs {
            if f.file_name().unwrap().to_string_lossy().ends_with("tests.rs") {
                continue;
            }
            for (n, line) in code(&f) {
                for target in named(&line, &order) {
                    if target != *m && rank[target.as_str()] > rank[m.as_str()] {
                        upward.push(format!(
                            "{}:{n}: {m} imports {target}, a layer above it: {}",
                            f.strip_prefix(src().parent().unwrap()).unwrap().display(),
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(upward.is_empty(), "upward imports (layer order of src/lib.rs):\n{}", upward.join("\n"));
}

#[test]
fn the_checker_sees_grouped_and_nested_paths() {
    let known: Vec<String> = ["config", "sim", "error"].iter().map(|s| s.to_string()).collect();
    assert_eq!(named("use crate::{config::Config, error};", &known), ["config", "error"]);
    assert_eq!(named("let x = crate::sim::run(crate::config::load(p));", &known), ["sim", "config"]);
    assert!(named("use crate::engine::Cycle;", &known).is_empty());
}
