//! `hxsim plot`: draw the standard figures of a results file (see [`crate::plot`]) into SVG, PNG or
//! PDF files, each replaced only by a whole new figure.

use crate::console;
use crate::error::ConfigError;
use crate::output::hdf5 as h5;
use crate::plot::{extension, render, sweep_figures, timeseries_figure, Figure, PrintSize, FORMATS};
use crate::staged::Staged;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// `out` with `-suffix` added to its stem (`fig.png` + `uniform` = `fig-uniform.png`).
fn with_suffix(out: &Path, suffix: &str) -> PathBuf {
    if suffix.is_empty() {
        return out.to_path_buf();
    }
    let safe: String =
        suffix.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    let stem = out.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    out.with_file_name(format!("{stem}-{safe}.{}", extension(out)))
}

/// `hxsim plot`: draw `figure` from the results file `file` into `output` (default: `file` with the
/// extension `.svg`; one file per value of `by` for a sweep that has several), at the print size
/// `size`.
pub fn run(
    file: &Path,
    output: Option<&Path>,
    figure: Figure,
    point: Option<usize>,
    by: Option<&str>,
    size: PrintSize,
) -> Result<u8> {
    let out = &output.map_or_else(|| file.with_extension("svg"), Path::to_path_buf);
    if !["svg", "png", "pdf"].contains(&extension(out).as_str()) {
        return Err(ConfigError::value("--output", out.display(), FORMATS).into());
    }
    if !file.exists() {
        return Err(ConfigError::value("FILE", file.display(), "an existing results file (.h5)").into());
    }
    // An input that cannot be read is bad input (exit 2), as the exit-code table of docs/commands.md says.
    let f = h5::open_file(file).map_err(|e| {
        ConfigError::value("FILE", file.display(), format!("a results file written by hxsim (.h5): {}", e.root_cause()))
    })?;
    if h5::str_attr(&f, "format").ok().as_deref() != Some(h5::FORMAT) {
        return Err(ConfigError::value(
            "FILE",
            file.display(),
            format!("a results file written by hxsim (.h5); this HDF5 file has no `format = \"{}\"`", h5::FORMAT),
        )
        .into());
    }
    let figs = match (point, f.group("sweep")) {
        (Some(i), _) => {
            let names = f.group("points").map(|g| g.member_names().unwrap_or_default()).unwrap_or_default();
            let name = names.iter().find(|n| n.parse::<usize>().ok() == Some(i)).ok_or_else(|| {
                ConfigError::value("--point", i, format!("one of the {} points of this sweep", names.len()))
            })?;
            vec![(String::new(), timeseries_figure(&f.group(&format!("points/{name}"))?)?)]
        }
        (None, Ok(_)) => sweep_figures(&f, figure, by)?,
        (None, Err(_)) => match figure {
            Figure::All | Figure::Timeseries => vec![(String::new(), timeseries_figure(&f)?)],
            f => {
                return Err(ConfigError::value(
                    "--figure",
                    format!("{f:?}").to_lowercase(),
                    format!("timeseries or all: {} is a single run, with only a time series", file.display()),
                )
                .into())
            }
        },
    };
    for (suffix, fig) in figs {
        let path = with_suffix(out, &suffix);
        if crate::staged::same_file(&path, file) {
            return Err(
                ConfigError::value("--output", path.display(), "a figure file, not the results file it draws").into()
            );
        }
        // Drawn under a partial name that keeps the extension (it picks the format) and put in
        // place whole (see `crate::staged`).
        let staged = Staged::keeping_extension(&path, "--output")?;
        render(&fig, staged.tmp(), size)
            .and_then(|()| staged.commit().map_err(anyhow::Error::from))
            .with_context(|| format!("writing the figure {}", path.display()))?;
        console::out(&format!("{}\n", path.display()))?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes() {
        assert_eq!(with_suffix(Path::new("a/fig.png"), "bit complement"), Path::new("a/fig-bit_complement.png"));
    }
}
