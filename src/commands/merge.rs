//! `hxsim merge`: combine the results of separate runs (e.g. a Slurm job array) into one table
//! (JSON lines or CSV, see [`crate::merge`]) or, with `--output FILE.h5`, into one sweep file (see
//! [`crate::merge_hdf5`]).

use crate::console::{note, out};
use crate::merge::{expand_inputs, merge, problems, write, Format, MergeError};
use crate::merge_hdf5;
use std::path::{Path, PathBuf};

/// `hxsim merge`: into an HDF5 sweep file when `output` ends in `.h5` and no `format` is given
/// (see [`merge_hdf5::merge_to_hdf5`]), else into a table (see [`merge_table`]). Returns the exit
/// code.
pub fn run(
    inputs: &[PathBuf],
    output: Option<&Path>,
    format: Option<&str>,
    expect: Option<usize>,
) -> anyhow::Result<u8> {
    match output {
        Some(o) if format.is_none() && o.extension().is_some_and(|x| x == "h5") => {
            let files = merge_hdf5::expand_inputs(inputs, Some(o))?;
            merge_hdf5::merge_to_hdf5(&files, o)
        }
        _ => merge_table(inputs, output, format, expect),
    }
}

/// `hxsim merge` into a table: read `inputs`, write the table to `output` (standard output when `None`; a file
/// is written under a temporary name and renamed, and may not be one of the inputs). Returns 0, or
/// fails with [`MergeError::Incomplete`] (exit 3) after writing the table when rows did not complete
/// or expected points are missing.
pub fn merge_table(
    inputs: &[PathBuf],
    output: Option<&Path>,
    format: Option<&str>,
    expect: Option<usize>,
) -> anyhow::Result<u8> {
    let format = match format {
        Some(f) => f.parse()?,
        None if output.is_some_and(|o| o.extension().is_some_and(|x| x == "csv")) => Format::Csv,
        None => Format::JsonLines,
    };
    let files = expand_inputs(inputs, output)?;
    let table = merge(&files)?;
    let mut buf = Vec::new();
    write(&table, format, &mut buf)?;
    match output {
        Some(p) => {
            crate::staged::write_atomic(p, &buf, "--output")?;
            note(&format!("{} rows, {} columns -> {}", table.rows.len(), table.columns.len(), p.display()));
        }
        None => out(&String::from_utf8_lossy(&buf))?,
    }
    let problems = problems(&table, expect);
    if !problems.is_empty() {
        return Err(MergeError::Incomplete(format!(
            "not every point completed:\n  {}\n(the table holds what there is; rerun or resubmit these points)",
            problems.join("\n  ")
        ))
        .into());
    }
    Ok(0)
}
