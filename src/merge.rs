//! Combining the results of separate runs into one table (the command is [`crate::commands::merge`]).
//!
//! A Slurm job array runs one point of a sweep per array task, each writing its own file; this
//! module joins them. Inputs are files holding one or more JSON objects (the output of
//! `hxsim run --json`, or of a job script that wraps it with the point's parameters, see
//! `jobs/sweep-array.slurm`), or directories whose `*.json` files are read in natural order
//! (`point-2` before `point-10`). Nested objects are flattened into dotted column names
//! (`{"set": {"traffic.load": "0.3"}}` becomes the column `set.traffic.load`); arrays are kept as
//! JSON text. Every row gets a `source` column first (the file it came from); the other columns
//! appear in the order they are first seen. Output is JSON lines (one flat object per row) or CSV.
//!
//! Merging into one HDF5 sweep file (`--output FILE.h5`) is [`crate::merge_hdf5`].

use serde_json::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Problems with the inputs or options of `hxsim merge` (exit code 2).
#[derive(Debug, Error)]
pub enum MergeError {
    /// An input could not be read.
    #[error("cannot read {path}: {why}")]
    Io {
        /// The path.
        path: String,
        /// What went wrong (the OS error without its number, see [`crate::error::os_error`]).
        why: String,
    },
    /// The same file is given twice (directly, or also through its directory).
    #[error("invalid value for `INPUT`: {path} is given twice (allowed: each file once)")]
    Duplicate {
        /// The path, as given the second time.
        path: String,
    },
    /// An input is not a sequence of JSON objects.
    #[error("{path}: {message} (expected JSON objects, e.g. the output of `hxsim run --json`)")]
    Json {
        /// The path.
        path: String,
        /// What the parser said.
        message: String,
    },
    /// A directory input holds no `*.json` file.
    #[error("{path}: no *.json files in this directory")]
    EmptyDir {
        /// The path.
        path: String,
    },
    /// Unknown output format.
    #[error("invalid value for `--format`: \"{0}\" (allowed: csv, jsonl)")]
    Format(String),
    /// The output would overwrite an input.
    #[error("invalid value for `--output`: {path} is one of the inputs (allowed: a file that is not merged)")]
    OutputIsInput {
        /// The path.
        path: String,
    },
    /// Some points did not complete or are missing (the table was written all the same).
    #[error("{0}")]
    Incomplete(String),
}

impl MergeError {
    /// Exit code: 3 for points that did not complete or are missing (like a failed simulation), 2
    /// for bad inputs or options.
    pub fn exit_code(&self) -> u8 {
        match self {
            MergeError::Incomplete(_) => 3,
            _ => 2,
        }
    }
}

/// Output format of [`merge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values with a header row (RFC 4180 quoting).
    Csv,
    /// One JSON object per line.
    JsonLines,
}

impl std::str::FromStr for Format {
    type Err = MergeError;
    fn from_str(s: &str) -> Result<Self, MergeError> {
        match s {
            "csv" => Ok(Format::Csv),
            "jsonl" | "json-lines" | "ndjson" => Ok(Format::JsonLines),
            _ => Err(MergeError::Format(s.to_string())),
        }
    }
}

/// A merged table: column names and rows (missing cells are `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column names, `source` first.
    pub columns: Vec<String>,
    /// One row per input object, cells in column order.
    pub rows: Vec<Vec<Option<Value>>>,
}

/// Expand directories into their `*.json` files (natural order); keep files as given. Then
/// [`check_inputs`]: no file twice, and `output` not one of them.
pub fn expand_inputs(inputs: &[PathBuf], output: Option<&Path>) -> Result<Vec<PathBuf>, MergeError> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let rd = std::fs::read_dir(p)
                .map_err(|e| MergeError::Io { path: p.display().to_string(), why: crate::error::os_error(&e) })?;
            let mut files: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.is_file() && f.extension().is_some_and(|x| x == "json"))
                .collect();
            if files.is_empty() {
                return Err(MergeError::EmptyDir { path: p.display().to_string() });
            }
            files.sort_by(|a, b| natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    check_inputs(&out, output)?;
    Ok(out)
}

/// Refuse (exit 2) an input file given twice (as `a.json a.json`, or as `dir dir/a.json`: its rows
/// would count twice) and an `output` that is one of the inputs (merging would overwrite it).
pub fn check_inputs(files: &[PathBuf], output: Option<&Path>) -> Result<(), MergeError> {
    for (i, f) in files.iter().enumerate() {
        if output.is_some_and(|o| crate::staged::same_file(f, o)) {
            return Err(MergeError::OutputIsInput { path: f.display().to_string() });
        }
        if files[..i].iter().any(|g| crate::staged::same_file(f, g)) {
            return Err(MergeError::Duplicate { path: f.display().to_string() });
        }
    }
    Ok(())
}

/// Compare strings with runs of digits compared as numbers (`point-2` < `point-10`).
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (None, _) => return std::cmp::Ordering::Less,
            (_, None) => return std::cmp::Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let i = x.iter().take_while(|c| c.is_ascii_digit()).count();
                let j = y.iter().take_while(|c| c.is_ascii_digit()).count();
                let (nx, ny) = (trim_zeros(&x[..i]), trim_zeros(&y[..j]));
                let o = nx.len().cmp(&ny.len()).then_with(|| nx.cmp(ny)).then_with(|| i.cmp(&j));
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
                x = &x[i..];
                y = &y[j..];
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                x = &x[1..];
                y = &y[1..];
            }
        }
    }
}

fn trim_zeros(d: &[u8]) -> &[u8] {
    let k = d.iter().take_while(|&&c| c == b'0').count();
    &d[k.min(d.len().saturating_sub(1))..]
}

/// Flatten nested objects into dotted keys, in the order of the file (serde_json's `preserve_order`
/// feature keeps objects in insertion order), arrays as JSON text.
fn flatten(prefix: &str, v: Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(fields) => {
            for (k, x) in fields {
                let key = if prefix.is_empty() { k } else { format!("{prefix}.{k}") };
                flatten(&key, x, out);
            }
        }
        a @ Value::Array(_) => out.push((prefix.to_string(), Value::String(a.to_string()))),
        x => out.push((prefix.to_string(), x)),
    }
}

/// Read every input (files; see [`expand_inputs`] for directories) into one table.
pub fn merge(files: &[PathBuf]) -> Result<Table, MergeError> {
    let mut columns = vec!["source".to_string()];
    let mut index = std::collections::HashMap::new();
    index.insert("source".to_string(), 0usize);
    let mut rows = Vec::new();
    for f in files {
        let path = f.display().to_string();
        let text = crate::input::read_text(f, crate::input::DATA_MAX_BYTES)
            .map_err(|why| MergeError::Io { path: path.clone(), why })?;
        let mut count = 0;
        for value in serde_json::Deserializer::from_str(&text).into_iter::<Value>() {
            let value = value.map_err(|e| MergeError::Json { path: path.clone(), message: e.to_string() })?;
            if !value.is_object() {
                let v = &value;
                return Err(MergeError::Json { path: path.clone(), message: format!("found {v} at the top level") });
            }
            let mut cells = Vec::new();
            flatten("", value, &mut cells);
            let mut row = vec![None; columns.len()];
            row[0] = Some(Value::String(path.clone()));
            for (k, v) in cells {
                let i = *index.entry(k.clone()).or_insert_with(|| {
                    columns.push(k);
                    columns.len() - 1
                });
                if row.len() <= i {
                    row.resize(i + 1, None);
                }
                row[i] = Some(v);
            }
            rows.push(row);
            count += 1;
        }
        if count == 0 {
            return Err(MergeError::Json { path, message: "no JSON object in the file".into() });
        }
    }
    for r in &mut rows {
        r.resize(columns.len(), None);
    }
    Ok(Table { columns, rows })
}

fn csv_field(v: &Option<Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(x) => x.to_string(),
    }
}

/// Write `table` in `format`.
pub fn write(table: &Table, format: Format, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(&table.columns)?;
            for r in &table.rows {
                w.write_record(r.iter().map(csv_field))?;
            }
            w.flush()?;
        }
        Format::JsonLines => {
            for r in &table.rows {
                let mut m = Map::new();
                for (c, v) in table.columns.iter().zip(r) {
                    if let Some(v) = v {
                        m.insert(c.clone(), v.clone());
                    }
                }
                writeln!(out, "{}", Value::Object(m))?;
            }
        }
    }
    Ok(())
}

/// Rows that did not complete (`complete` false, or a `status` other than `complete`) and, with
/// `expect = Some(n)`, the points of `0..n` that no row stands for. A row's point is its `point`
/// field, or else the last number in its source file's name (`point-7.json`). Empty when all is well.
pub fn problems(table: &Table, expect: Option<usize>) -> Vec<String> {
    let col = |name: &str| table.columns.iter().position(|c| c == name);
    let (source, complete, status, point) = (col("source"), col("complete"), col("status"), col("point"));
    let cell = |r: &Vec<Option<Value>>, i: Option<usize>| i.and_then(|i| r.get(i).cloned().flatten());
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for r in &table.rows {
        let src = cell(r, source).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        let incomplete = cell(r, complete).is_some_and(|v| v == Value::Bool(false))
            || cell(r, status).is_some_and(|v| v.as_str().is_some_and(|s| s != "complete"));
        if incomplete {
            let why = cell(r, status).and_then(|v| v.as_str().map(str::to_string)).unwrap_or("complete = false".into());
            out.push(format!("{src}: incomplete ({why})"));
        }
        let p = cell(r, point).and_then(|v| v.as_u64()).or_else(|| {
            let stem = Path::new(&src).file_stem()?.to_string_lossy().into_owned();
            let digits: String =
                stem.chars().rev().skip_while(|c| !c.is_ascii_digit()).take_while(|c| c.is_ascii_digit()).collect();
            digits.chars().rev().collect::<String>().parse().ok()
        });
        if let Some(p) = p {
            seen.insert(p);
        }
    }
    if let Some(n) = expect {
        let missing: Vec<String> = (0..n as u64).filter(|p| !seen.contains(p)).map(|p| p.to_string()).collect();
        if !missing.is_empty() {
            out.push(format!("{} of {n} points missing: {}", missing.len(), missing.join(", ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_compares_numbers() {
        let mut v = vec!["point-10.json", "point-2.json", "point-1.json", "point-02.json", "a.json"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, vec!["a.json", "point-1.json", "point-2.json", "point-02.json", "point-10.json"]);
    }

    #[test]
    fn merges_flattens_and_quotes() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("p-1.json");
        let b = dir.path().join("p-2.json");
        std::fs::write(
            &a,
            r#"{"point":1,"set":{"traffic.load":"0.3"},"summary":{"z_first":[1,2],"accepted_load":0.29}}"#,
        )
        .unwrap();
        std::fs::write(&b, "{\"point\":2,\"summary\":{\"accepted_load\":0.5,\"note\":\"a,b\"}}\n{\"point\":3}\n")
            .unwrap();
        let t = merge(&expand_inputs(&[dir.path().to_path_buf()], None).unwrap()).unwrap();
        // Key order of the files, not alphabetical.
        assert_eq!(
            t.columns,
            vec!["source", "point", "set.traffic.load", "summary.z_first", "summary.accepted_load", "summary.note"]
        );
        assert_eq!(t.rows.len(), 3);
        let mut out = Vec::new();
        write(&t, Format::Csv, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "source,point,set.traffic.load,summary.z_first,summary.accepted_load,summary.note");
        assert!(lines[1].ends_with(",1,0.3,\"[1,2]\",0.29,"), "{}", lines[1]);
        assert!(lines[2].ends_with(",2,,,0.5,\"a,b\""), "{}", lines[2]);
        assert!(lines[3].ends_with(",3,,,,"), "{}", lines[3]);
        let mut out = Vec::new();
        write(&t, Format::JsonLines, &mut out).unwrap();
        let first: Value = serde_json::from_str(String::from_utf8(out).unwrap().lines().next().unwrap()).unwrap();
        assert_eq!(first["set.traffic.load"], "0.3");
        assert_eq!(first["summary.accepted_load"], 0.29);
    }

    #[test]
    fn rejects_non_objects_and_empty_dirs() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(expand_inputs(&[dir.path().to_path_buf()], None), Err(MergeError::EmptyDir { .. })));
        let f = dir.path().join("x.json");
        std::fs::write(&f, "[1, 2]").unwrap();
        let e = merge(std::slice::from_ref(&f)).unwrap_err().to_string();
        assert!(e.contains("x.json") && e.contains("top level"), "{e}");
        std::fs::write(&f, "{\"a\": ").unwrap();
        assert!(matches!(merge(&[f]), Err(MergeError::Json { .. })));
        assert!("xml".parse::<Format>().unwrap_err().to_string().contains("csv, jsonl"));
    }
}

#[cfg(test)]
mod problem_tests {
    use super::*;

    #[test]
    fn incomplete_and_missing_points_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("point-0.json"), r#"{"name":"a","complete":true,"status":"complete"}"#).unwrap();
        std::fs::write(
            dir.path().join("point-2.json"),
            r#"{"name":"a","complete":false,"status":"interrupted by SIGTERM at cycle 5"}"#,
        )
        .unwrap();
        let t = merge(&expand_inputs(&[dir.path().to_path_buf()], None).unwrap()).unwrap();
        let p = problems(&t, Some(4));
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].contains("point-2.json") && p[0].contains("SIGTERM"), "{p:?}");
        // Points 1 and 3 of 0..4 have no file.
        assert!(p[1].contains("2 of 4 points missing: 1, 3"), "{p:?}");
        assert!(problems(&t, Some(1)).len() == 1, "point 2 still incomplete");
    }
}
