//! The two summary views of a sweep file, written by `hxsim sweep` and by `hxsim merge` into HDF5:
//!
//! - `/sweep`, the flat table: one 1-D column per field along the dimension `point` (`point`,
//!   `group`, each swept key, each summary key as `f64` with NaN where a point has none, `complete`,
//!   `error`); `xarray.open_dataset(path, group="sweep", engine="h5netcdf").to_dataframe()` is the
//!   whole table.
//! - `/grid`, the same values on the grid of the swept keys: each key that takes several values is a
//!   dimension with its values as coordinates, a key with one value is a scalar coordinate, and every
//!   metric is an N-dimensional variable (NaN, `complete = false` and `error = "missing"` where no
//!   point exists), so that `xarray.open_dataset(path, group="grid", engine="h5netcdf")` is a Dataset
//!   whose dims are the swept keys.

use super::dims;
use super::hdf5::{self as h5, Storage};
use crate::config;
use crate::sweep::{Axis, ColumnKind};
use ::hdf5::types::VarLenUnicode;
use ::hdf5::{Dataset, Group, H5Type};
use anyhow::Result;

/// One point (row) of a sweep.
#[derive(Debug, Clone)]
pub struct Row {
    /// Index of the point.
    pub point: u64,
    /// The point's value of each axis, as a TOML literal (or bare string) as given to `--set`.
    pub values: Vec<String>,
    /// Path of the point's group in the file (empty if it has none).
    pub group: String,
    /// Summary `(key, value)` pairs, when the point has a summary.
    pub summary: Option<Vec<(String, serde_json::Value)>>,
    /// It ran to its end.
    pub complete: bool,
    /// Why it did not (empty if it did).
    pub error: String,
}

/// The rows of a sweep and its axes (each axis's values in grid order).
#[derive(Debug, Clone)]
pub struct SweepTable {
    /// The swept keys and the values each takes.
    pub axes: Vec<Axis>,
    /// One row per point.
    pub rows: Vec<Row>,
}

impl SweepTable {
    /// Summary keys in the order of the first row that has each, falling back to the documented list.
    pub fn summary_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for s in self.rows.iter().filter_map(|r| r.summary.as_ref()) {
            // Lists (`vc_phits`) are not columns: each point's group has them.
            for (k, _) in s.iter().filter(|(_, v)| !v.is_array()) {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
        if keys.is_empty() {
            keys = h5::SUMMARY_UNITS.iter().map(|u| u.0.to_string()).collect();
        }
        keys
    }

    fn summary_value(&self, row: &Row, key: &str) -> f64 {
        row.summary
            .as_ref()
            .and_then(|s| s.iter().find(|(k, _)| k == key))
            .and_then(|(_, v)| v.as_f64().or_else(|| v.as_bool().map(|b| b as u8 as f64)))
            .unwrap_or(f64::NAN)
    }
}

fn units(key: &str) -> (&'static str, &'static str) {
    h5::SUMMARY_UNITS.iter().find(|u| u.0 == key).map(|u| (u.1, u.2)).unwrap_or(("", "summary value"))
}

/// A swept value as text: a TOML string as itself, any other literal as written.
fn text_value(raw: &str) -> String {
    match config::parse_literal(raw) {
        toml::Value::String(s) => s,
        _ => raw.to_string(),
    }
}

/// Write the values of axis `a` (one per item of `raw`) as a 1-D dataset `name` of its column type.
fn axis_column(g: &Group, name: &str, a: &Axis, raw: &[&str], desc: &str) -> Result<Dataset> {
    let vals: Vec<toml::Value> = raw.iter().map(|v| config::parse_literal(v)).collect();
    Ok(match a.kind() {
        ColumnKind::Int => {
            let v: Vec<i64> = vals.iter().map(|v| v.as_integer().unwrap_or_default()).collect();
            h5::column(g, name, &v, "", desc)?
        }
        ColumnKind::Float => {
            let v: Vec<f64> =
                vals.iter().map(|v| v.as_float().or(v.as_integer().map(|i| i as f64)).unwrap_or(f64::NAN)).collect();
            h5::column(g, name, &v, "", desc)?
        }
        ColumnKind::Bool => {
            let v: Vec<bool> = vals.iter().map(|v| v.as_bool().unwrap_or_default()).collect();
            h5::column(g, name, &v, "", desc)?
        }
        ColumnKind::Text => {
            let v: Vec<String> = raw.iter().map(|r| text_value(r)).collect();
            h5::str_column(g, name, &v, desc)?
        }
    })
}

/// Write `/sweep` (flat) and `/grid` (gridded) into `f`.
pub fn write(f: &Group, t: &SweepTable) -> Result<()> {
    write_flat(f, t)?;
    write_grid(f, t)
}

fn write_flat(f: &Group, t: &SweepTable) -> Result<()> {
    let g = h5::new_group_for(f, "sweep", (t.axes.len() + t.summary_keys().len() + 4) as u32, 3)?;
    h5::set_str_attr(
        &g,
        "description",
        "one row per sweep point (dimension `point`): the swept values, the point's summary (f64, NaN where the \
         point has none), whether it completed, and why not",
    )?;
    let mut columns = vec!["point".to_string(), "group".to_string()];
    let idx: Vec<u64> = t.rows.iter().map(|r| r.point).collect();
    let point = h5::column(&g, "point", &idx, "", "index of the point")?;
    let groups: Vec<String> = t.rows.iter().map(|r| r.group.clone()).collect();
    let mut vars = vec![h5::str_column(&g, "group", &groups, "the point's group (empty if it has none)")?];
    for (k, a) in t.axes.iter().enumerate() {
        let raw: Vec<&str> = t.rows.iter().map(|r| r.values[k].as_str()).collect();
        vars.push(axis_column(&g, &a.key, a, &raw, &format!("swept value of {}", a.key))?);
        columns.push(a.key.clone());
    }
    for key in t.summary_keys() {
        let v: Vec<f64> = t.rows.iter().map(|r| t.summary_value(r, &key)).collect();
        let (units, desc) = units(&key);
        vars.push(h5::column(&g, &key, &v, units, desc)?);
        columns.push(key);
    }
    let complete: Vec<bool> = t.rows.iter().map(|r| r.complete).collect();
    vars.push(h5::column(&g, "complete", &complete, "", "the point ran to its end")?);
    let errors: Vec<String> = t.rows.iter().map(|r| r.error.clone()).collect();
    vars.push(h5::str_column(&g, "error", &errors, "why the point did not complete (empty if it did)")?);
    columns.extend(["complete".to_string(), "error".to_string()]);
    dims::attach_all(&point, "point", &vars.iter().collect::<Vec<_>>())?;
    h5::set_str_list_attr(&g, "columns", &columns)?;
    h5::set_str_list_attr(&g, "swept_keys", &t.axes.iter().map(|a| a.key.clone()).collect::<Vec<_>>())?;
    Ok(())
}

/// An N-dimensional variable of the grid, written whole.
fn grid_var<T: H5Type>(g: &Group, name: &str, shape: &[usize], data: &[T], units: &str, desc: &str) -> Result<Dataset> {
    let compact = compact_grid(data.len(), std::mem::size_of_val(data));
    let quick = if compact { h5::create(g, name, Some(shape), data, Storage::Compact)? } else { None };
    let ds = match quick {
        Some(ds) => ds,
        None => {
            let b = g.new_dataset::<T>().shape(shape.to_vec());
            let b = if data.len() <= 1 {
                b
            } else if compact {
                b.layout(::hdf5::dataset::Layout::Compact)
            } else {
                b.chunk(shape.to_vec()).shuffle().deflate(h5::DEFLATE_LEVEL)
            };
            let ds = b.create(name)?;
            ds.write_raw(data)?;
            ds
        }
    };
    grid_var_attrs(&ds, units, desc)?;
    Ok(ds)
}

/// As `h5::column`: small grids compact and unfiltered, larger ones deflated (a grid of one cell
/// is contiguous).
fn compact_grid(cells: usize, bytes: usize) -> bool {
    cells > 1 && bytes < h5::FILTER_MIN_BYTES
}

/// `units` (unless empty) and `description` of a variable of the grid, just created.
fn grid_var_attrs(ds: &Dataset, units: &str, desc: &str) -> Result<()> {
    if !units.is_empty() {
        h5::new_str_attr(ds, "units", units)?;
    }
    h5::new_str_attr(ds, "description", desc)
}

fn write_grid(f: &Group, t: &SweepTable) -> Result<()> {
    let g = h5::new_group_for(f, "grid", (t.axes.len() + t.summary_keys().len() + 3) as u32, 1)?;
    h5::set_str_attr(
        &g,
        "description",
        "the sweep on the grid of its swept keys: each key with several values is a dimension, each metric an \
         N-dimensional variable; cells with no point hold NaN, complete = false and error = \"missing\"",
    )?;
    // Dimensions: the axes with several values, in sweep order (the last varies fastest).
    let dim_axes: Vec<usize> = (0..t.axes.len()).filter(|&k| t.axes[k].values.len() > 1).collect();
    let shape: Vec<usize> = dim_axes.iter().map(|&k| t.axes[k].values.len()).collect();
    let cells: usize = shape.iter().product();
    // The cell of each row (None when a value is not on its axis).
    let cell_of = |r: &Row| -> Option<usize> {
        dim_axes.iter().try_fold(0usize, |acc, &k| {
            let a = &t.axes[k];
            let i = a.values.iter().position(|v| text_value(v) == text_value(&r.values[k]))?;
            Some(acc * a.values.len() + i)
        })
    };
    let mut at: Vec<Option<usize>> = vec![None; cells];
    for (i, r) in t.rows.iter().enumerate() {
        if let Some(c) = cell_of(r) {
            at[c] = Some(i);
        }
    }
    let mut scales = Vec::new();
    let mut scalar_coords = Vec::new();
    for a in &t.axes {
        let raw: Vec<&str> = a.values.iter().map(String::as_str).collect();
        let desc = format!("swept key {}", a.key);
        if a.values.len() > 1 {
            scales.push((axis_column(&g, &a.key, a, &raw, &desc)?, a.key.clone()));
        } else if let Some(v) = raw.first() {
            // A scalar coordinate: one value for every point.
            scalar_value(&g, &a.key, a, v, &desc)?;
            scalar_coords.push(a.key.clone());
        }
    }
    let mut vars = Vec::new();
    for key in t.summary_keys() {
        let v: Vec<f64> = at.iter().map(|i| i.map_or(f64::NAN, |i| t.summary_value(&t.rows[i], &key))).collect();
        let (units, desc) = units(&key);
        vars.push(grid_var(&g, &key, &shape, &v, units, desc)?);
    }
    let complete: Vec<bool> = at.iter().map(|i| i.is_some_and(|i| t.rows[i].complete)).collect();
    vars.push(grid_var(&g, "complete", &shape, &complete, "", "the point ran to its end")?);
    let point: Vec<i64> = at.iter().map(|i| i.map_or(-1, |i| t.rows[i].point as i64)).collect();
    vars.push(grid_var(&g, "point", &shape, &point, "", "index of the point (row of /sweep; -1: missing)")?);
    let err: Vec<&str> = at.iter().map(|i| i.map_or("missing", |i| t.rows[i].error.as_str())).collect();
    let err_desc = "why the point did not complete (empty if it did)";
    // Sized as `grid_var` sizes `VarLenUnicode` cells (one pointer each).
    vars.push(if compact_grid(err.len(), err.len() * std::mem::size_of::<VarLenUnicode>()) {
        let ds = h5::create_strs(&g, "error", Some(&shape), &err, Storage::Compact)?;
        grid_var_attrs(&ds, "", err_desc)?;
        ds
    } else {
        let err: Vec<VarLenUnicode> = err
            .iter()
            .map(|e| e.parse::<VarLenUnicode>())
            .collect::<Result<_, _>>()
            .map_err(|e| anyhow::anyhow!("error text: {e}"))?;
        grid_var(&g, "error", &shape, &err, "", err_desc)?
    });
    let scales: Vec<(&Dataset, &str)> = scales.iter().map(|(s, n)| (s, n.as_str())).collect();
    dims::attach_axes(&vars.iter().collect::<Vec<_>>(), &scales)?;
    if !scalar_coords.is_empty() {
        for v in &vars {
            h5::new_str_attr(v, "coordinates", &scalar_coords.join(" "))?;
        }
    }
    Ok(())
}

/// A 0-dimensional dataset holding the one value of axis `a`.
fn scalar_value(g: &Group, name: &str, a: &Axis, raw: &str, desc: &str) -> Result<()> {
    let v = config::parse_literal(raw);
    let ds = match a.kind() {
        ColumnKind::Int => {
            let ds = g.new_dataset::<i64>().create(name)?;
            ds.write_scalar(&v.as_integer().unwrap_or_default())?;
            ds
        }
        ColumnKind::Float => {
            let ds = g.new_dataset::<f64>().create(name)?;
            ds.write_scalar(&v.as_float().or(v.as_integer().map(|i| i as f64)).unwrap_or(f64::NAN))?;
            ds
        }
        ColumnKind::Bool => {
            let ds = g.new_dataset::<bool>().create(name)?;
            ds.write_scalar(&v.as_bool().unwrap_or_default())?;
            ds
        }
        ColumnKind::Text => {
            let ds = g.new_dataset::<VarLenUnicode>().create(name)?;
            let s: VarLenUnicode = text_value(raw).parse().map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
            ds.write_scalar(&s)?;
            ds
        }
    };
    h5::set_str_attr(&ds, "description", desc)
}
