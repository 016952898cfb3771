//! `hxsim merge ... -o FILE.h5`: the per-point results of a Slurm job array (JSON summaries, or the
//! HDF5 files of `hxsim run`) joined into one sweep file with the layout `hxsim sweep` writes, so that
//! `hxsim plot` and xarray read it as they read a sweep.
//!
//! - Each input point becomes a group `/points/NNN`: an HDF5 run file is copied whole (time series,
//!   servers, latency, links); a JSON object gives its `/summary` and its overrides.
//! - The swept keys are those of the JSON objects' `set` objects (as `jobs/sweep-array.slurm` writes
//!   them), and for HDF5 inputs the config keys whose values differ between the inputs.
//! - Missing and incomplete points are marked: an input that cannot be read, an HDF5 file whose
//!   `complete` is false, or a JSON object with no summary gives a row with `complete = false` and its
//!   reason in `error`; when the inputs are numbered (`point` in the JSON, or `point-N` in the file
//!   name), every number missing below the largest gets a row with `error = "missing"`; and in the
//!   gridded view `/grid` every combination of swept values that no input has is `"missing"`.

use crate::merge::natural_cmp;
use crate::output::hdf5 as h5;
use crate::output::table::{Row, SweepTable};
use crate::sweep::Axis;
use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One input point, before the axes are known.
struct Input {
    source: String,
    index: Option<u64>,
    /// Config keys (dotted) and their values as TOML literals.
    values: BTreeMap<String, String>,
    /// Keys from a JSON `set`: swept whether or not they differ.
    set_keys: Vec<String>,
    summary: Option<Vec<(String, Value)>>,
    complete: bool,
    error: String,
    /// An HDF5 file to copy into the point's group.
    h5: Option<PathBuf>,
    config: Option<String>,
}

impl Input {
    fn failed(source: &Path, error: String) -> Self {
        Input {
            source: source.display().to_string(),
            index: index_in_name(source),
            values: BTreeMap::new(),
            set_keys: Vec::new(),
            summary: None,
            complete: false,
            error,
            h5: None,
            config: None,
        }
    }
}

/// `N` of a file named `...point-N.ext` (or `...point_N`, `...pointN`).
fn index_in_name(p: &Path) -> Option<u64> {
    let stem = p.file_stem()?.to_str()?;
    let i = stem.rfind("point")?;
    stem[i + 5..].trim_start_matches(['-', '_']).parse().ok()
}

/// Dotted keys of a TOML table and their values as literals (arrays and inline tables whole).
fn flatten_toml(prefix: &str, t: &toml::Table, out: &mut BTreeMap<String, String>) {
    for (k, v) in t {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            toml::Value::Table(sub) => flatten_toml(&key, sub, out),
            v => {
                out.insert(key, v.to_string());
            }
        }
    }
}

/// Directories become their `*.h5` run files (not sweep files), and those `*.json` files that have
/// no `.h5` beside them (natural order); files are kept as given. Then
/// [`crate::merge::check_inputs`] (no file twice, the output not an input).
pub fn expand_inputs(inputs: &[PathBuf], output: Option<&Path>) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(p)
            .with_context(|| format!("cannot read {}", p.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|f| f.is_file())
            .filter(|f| match f.extension().and_then(|x| x.to_str()) {
                // A sweep file (one a merge wrote into this directory before) is not a point.
                Some("h5") => !is_sweep_file(f),
                Some("json") => !f.with_extension("h5").exists(),
                _ => false,
            })
            .collect();
        if files.is_empty() {
            return Err(crate::merge::MergeError::EmptyDir { path: p.display().to_string() }.into());
        }
        files.sort_by(|a, b| natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
        out.extend(files);
    }
    crate::merge::check_inputs(&out, output)?;
    Ok(out)
}

/// Whether `path` is an hxsim sweep file (root attribute `kind = "sweep"`), such as `merge` and
/// `sweep` write.
fn is_sweep_file(path: &Path) -> bool {
    h5::open_file(path).ok().and_then(|f| h5::str_attr(&f, "kind").ok()).is_some_and(|k| k == "sweep")
}

fn read_h5(path: &Path) -> Input {
    let r = (|| -> Result<Input> {
        let f = h5::open_file(path)?;
        let config = h5::str_attr(&f, "config").ok();
        let mut values = BTreeMap::new();
        if let Some(t) = config.as_deref().and_then(|c| c.parse::<toml::Table>().ok()) {
            flatten_toml("", &t, &mut values);
        }
        let complete = f.attr("complete").and_then(|a| a.read_scalar::<bool>()).unwrap_or(false);
        let status = h5::str_attr(&f, "status").unwrap_or_default();
        let summary = h5::read_summary_pairs(&f).ok().filter(|s| !s.is_empty());
        let error = match (complete, &summary) {
            (true, Some(_)) => String::new(),
            (_, None) => format!("no summary ({status})"),
            (false, _) => status,
        };
        Ok(Input {
            source: path.display().to_string(),
            index: index_in_name(path),
            values,
            set_keys: Vec::new(),
            summary,
            complete: complete && error.is_empty(),
            error,
            h5: Some(path.to_path_buf()),
            config,
        })
    })();
    r.unwrap_or_else(|e| Input::failed(path, format!("cannot read: {e:#}")))
}

fn read_json(path: &Path) -> Vec<Input> {
    let text = match crate::input::read_text(path, crate::input::DATA_MAX_BYTES) {
        Ok(t) => t,
        Err(e) => return vec![Input::failed(path, format!("cannot read: {e}"))],
    };
    let mut out = Vec::new();
    for v in serde_json::Deserializer::from_str(&text).into_iter::<Value>() {
        let v = match v {
            Ok(Value::Object(m)) => m,
            Ok(other) => {
                out.push(Input::failed(path, format!("not a JSON object: {other}")));
                continue;
            }
            Err(e) => {
                out.push(Input::failed(path, format!("incomplete JSON: {e}")));
                break;
            }
        };
        let mut input = Input::failed(path, String::new());
        if let Some(i) = v.get("point").and_then(Value::as_u64) {
            input.index = Some(i);
        }
        if let Some(Value::Object(set)) = v.get("set") {
            for (k, x) in set {
                let lit = match x {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                input.values.insert(k.clone(), lit);
                input.set_keys.push(k.clone());
            }
        }
        // `{"summary": {...}}` as the job script writes it, or a bare `hxsim run --json` object.
        let summary = match v.get("summary") {
            Some(Value::Object(s)) => Some(s.clone()),
            _ if v.contains_key("accepted_load") => Some(v.clone()),
            _ => None,
        };
        // The figures a results file's `/summary` holds: numbers, and `steady_state` (true, false
        // or null, as a run writes it); not the record's own `complete`, nor text.
        input.summary = summary.map(|s| {
            s.into_iter()
                .filter(|(k, x)| x.is_number() || (k != "complete" && (x.is_boolean() || x.is_null())))
                .collect()
        });
        // A record or summary of a run that stopped says so (`complete`, `status`, as `hxsim run
        // --json` and `--json-out` write them, outside or inside `summary`).
        let stopped = [Some(&v), input.summary.as_ref().and(summary_obj(&v))]
            .into_iter()
            .flatten()
            .find(|o| o.get("complete") == Some(&Value::Bool(false)))
            .map(|o| o.get("status").and_then(Value::as_str).unwrap_or("incomplete").to_string());
        input.error = match (&input.summary, v.get("error"), stopped) {
            (_, Some(e), _) => e.as_str().map_or_else(|| e.to_string(), str::to_string),
            (_, None, Some(status)) => status,
            (None, None, None) => "no summary".into(),
            (Some(_), None, None) => String::new(),
        };
        input.complete = input.error.is_empty();
        out.push(input);
    }
    if out.is_empty() {
        out.push(Input::failed(path, "no JSON object in the file".into()));
    }
    out
}

/// The `summary` object of a record, if it has one.
fn summary_obj(v: &serde_json::Map<String, Value>) -> Option<&serde_json::Map<String, Value>> {
    v.get("summary").and_then(Value::as_object)
}

/// Swept keys: every `set` key, then the config keys whose values differ between inputs.
fn swept_keys(inputs: &[Input]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for i in inputs {
        for k in &i.set_keys {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let mut all: Vec<&String> = inputs.iter().filter(|i| i.h5.is_some()).flat_map(|i| i.values.keys()).collect();
    all.sort();
    all.dedup();
    for k in all {
        let mut vals = inputs.iter().filter(|i| i.h5.is_some()).map(|i| i.values.get(k));
        let first = vals.next().flatten();
        if vals.any(|v| v != first) && !keys.contains(k) && k != "name" {
            keys.push(k.clone());
        }
    }
    keys
}

/// Distinct values of a key, numbers in increasing order, anything else in order of appearance.
fn axis_values(inputs: &[Input], key: &str) -> Vec<String> {
    let mut vals: Vec<String> = Vec::new();
    for v in inputs.iter().filter_map(|i| i.values.get(key)) {
        if !vals.contains(v) {
            vals.push(v.clone());
        }
    }
    if vals.iter().all(|v| v.parse::<f64>().is_ok()) {
        vals.sort_by(|a, b| a.parse::<f64>().unwrap_or(0.0).total_cmp(&b.parse::<f64>().unwrap_or(0.0)));
    }
    vals
}

/// Merge `files` (see [`expand_inputs`]) into the sweep file `out`. Returns the exit code: 0 when
/// every point is there and complete, 3 otherwise (the file is written either way).
pub fn merge_to_hdf5(files: &[PathBuf], out: &Path) -> Result<u8> {
    let mut inputs: Vec<Input> = Vec::new();
    for f in files {
        match f.extension().and_then(|x| x.to_str()) {
            Some("h5" | "hdf5") => inputs.push(read_h5(f)),
            _ => inputs.extend(read_json(f)),
        }
    }
    // Numbered inputs: the numbers below the largest that no input has are missing points.
    let numbered = inputs.iter().all(|i| i.index.is_some());
    if numbered {
        inputs.sort_by_key(|i| i.index);
        let max = inputs.iter().filter_map(|i| i.index).max().unwrap_or(0);
        let have: std::collections::HashSet<u64> = inputs.iter().filter_map(|i| i.index).collect();
        for k in (0..=max).filter(|k| !have.contains(k)) {
            let mut m = Input::failed(Path::new(""), "missing".into());
            m.index = Some(k);
            m.source = String::new();
            inputs.push(m);
        }
        inputs.sort_by_key(|i| i.index);
    }
    let keys = swept_keys(&inputs);
    let axes: Vec<Axis> = keys.iter().map(|k| Axis { key: k.clone(), values: axis_values(&inputs, k) }).collect();

    // Written under a partial name and moved into place at the end, as every results file.
    let staged = crate::staged::Staged::new(out, "--output")?;
    let f = h5::create_file(staged.tmp())?;
    let width = inputs.len().saturating_sub(1).to_string().len().max(3);
    let points = h5::new_group(&f, "points")?;
    let mut rows = Vec::new();
    for (n, input) in inputs.iter().enumerate() {
        let point = if numbered { input.index.unwrap_or(n as u64) } else { n as u64 };
        let name = format!("{point:0width$}");
        let mut group = String::new();
        if !input.source.is_empty() {
            match &input.h5 {
                Some(src) if input.summary.is_some() || input.config.is_some() => copy_run(src, &points, &name)?,
                _ => {
                    let g = h5::new_group(&points, &name)?;
                    if let Some(s) = &input.summary {
                        h5::write_summary_pairs(&g, s.clone())?;
                    }
                    h5::set_attr(&g, "complete", &input.complete)?;
                    h5::set_str_attr(&g, "status", if input.complete { "complete" } else { &input.error })?;
                }
            }
            let g = points.group(&name)?;
            h5::set_str_attr(&g, "source", &input.source)?;
            h5::set_attr(&g, "point", &point)?;
            group = format!("points/{name}");
        }
        let values: Vec<String> = keys.iter().map(|k| input.values.get(k).cloned().unwrap_or_default()).collect();
        rows.push(Row {
            point,
            values,
            group,
            summary: input.summary.clone(),
            complete: input.complete,
            error: input.error.clone(),
        });
    }
    let missing = rows.iter().filter(|r| !r.complete).count();
    let first_config = inputs.iter().find_map(|i| i.config.clone()).unwrap_or_default();
    let name = first_config
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("name").and_then(|n| n.as_str()).map(str::to_string))
        .unwrap_or_else(|| "merged".into());
    h5::set_str_attr(&f, "format", h5::FORMAT)?;
    h5::set_attr(&f, "format_version", &h5::FORMAT_VERSION)?;
    h5::set_str_attr(&f, "kind", "sweep")?;
    h5::set_str_attr(&f, "hxsim_version", env!("CARGO_PKG_VERSION"))?;
    h5::write_build_attrs(&f)?;
    h5::set_str_attr(&f, "name", &name)?;
    h5::set_str_attr(&f, "config", &first_config)?;
    h5::set_str_list_attr(&f, "merged_from", &files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>())?;
    h5::set_str_list_attr(&f, "swept_keys", &keys)?;
    h5::set_attr(&f, "points", &(rows.len() as u64))?;
    crate::output::table::write(&f, &SweepTable { axes, rows })?;
    let status = if missing == 0 {
        "complete".to_string()
    } else {
        format!("merged; {missing} of {} points missing or incomplete", inputs.len())
    };
    h5::finish(&f, missing == 0, &status)?;
    f.flush()?;
    drop(f);
    staged.commit().with_context(|| format!("moving the sweep file into place at {}", out.display()))?;
    tracing::info!(points = inputs.len(), missing, "merged into {}", out.display());
    eprintln!("{} points ({missing} missing or incomplete) -> {}", inputs.len(), out.display());
    Ok(if missing == 0 { 0 } else { 3 })
}

/// Copy the whole of the run file `src` into a new group `name` of `points`.
fn copy_run(src: &Path, points: &::hdf5::Group, name: &str) -> Result<()> {
    let sf = h5::open_file(src)?;
    let g = h5::new_group(points, name)?;
    for a in sf.attr_names()? {
        let attr = sf.attr(&a)?;
        copy_attr(&attr, &g, &a)?;
    }
    for m in sf.member_names()? {
        crate::output::dims::copy_object(&sf, &m, &g, &m)
            .with_context(|| format!("copying {m} of {}", src.display()))?;
    }
    // H5Ocopy keeps the source file's addresses in the dimension-scale references (vlen attributes
    // are not rewritten): link each group of a run's layout to its copied scale again.
    for (group, dim) in RUN_DIMENSIONS {
        let Ok(sub) = g.group(group) else { continue };
        let Ok(scale) = sub.dataset(dim) else { continue };
        let mut vars = Vec::new();
        for m in sub.member_names()? {
            let ds = sub.dataset(&m)?;
            if ds.attr("DIMENSION_LIST").is_ok() {
                ds.delete_attr("DIMENSION_LIST")?;
            }
            if m != *dim && ds.ndim() == 1 {
                vars.push(ds);
            }
        }
        for a in ["REFERENCE_LIST", "CLASS", "NAME"] {
            if scale.attr(a).is_ok() {
                scale.delete_attr(a)?;
            }
        }
        crate::output::dims::attach_all(&scale, dim, &vars.iter().collect::<Vec<_>>())?;
    }
    Ok(())
}

/// The groups of a run's layout and their dimension.
const RUN_DIMENSIONS: [(&str, &str); 5] =
    [("timeseries", "cycle"), ("servers", "server"), ("links", "link"), ("latency", "latency"), ("vcs", "vc")];

fn copy_attr(a: &::hdf5::Attribute, dst: &::hdf5::Group, name: &str) -> Result<()> {
    use ::hdf5::types::{TypeDescriptor as T, VarLenUnicode};
    match a.dtype()?.to_descriptor()? {
        T::Boolean => h5::set_attr(dst, name, &a.read_scalar::<bool>()?),
        T::Unsigned(_) => h5::set_attr(dst, name, &a.read_scalar::<u64>()?),
        T::Integer(_) => h5::set_attr(dst, name, &a.read_scalar::<i64>()?),
        T::Float(_) => h5::set_attr(dst, name, &a.read_scalar::<f64>()?),
        T::VarLenUnicode if a.ndim() == 0 => h5::set_str_attr(dst, name, a.read_scalar::<VarLenUnicode>()?.as_str()),
        T::VarLenUnicode => h5::set_str_list_attr(
            dst,
            name,
            &a.read_raw::<VarLenUnicode>()?.iter().map(|s| s.as_str().to_string()).collect::<Vec<_>>(),
        ),
        _ => Ok(()),
    }
}
