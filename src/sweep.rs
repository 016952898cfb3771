//! The grid of `hxsim sweep` (the command is [`crate::commands::sweep`]): one config at every point
//! of a grid of overridden values.
//!
//! Each `--set` is one axis of the grid:
//! - `KEY=START:STOP:STEP`: an inclusive range (`traffic.load=0.1:1.0:0.1` gives 0.1, 0.2, ..., 1.0;
//!   the stop is included within rounding, and values are rounded to the decimals written);
//! - `KEY=A,B,C`: a list (`routing.algorithm=minimal,valiant`; TOML arrays such as `[4,4],[8,8]` are
//!   kept whole);
//! - `KEY=VALUE`: one value (an override applied to every point).
//!
//! The points are the cartesian product of the axes (the last `--set` varies fastest). Bad `--set`
//! syntax, or a value that makes any point's config invalid, is reported before anything runs (exit
//! code 2).
use crate::config::{self, Config, ConfigError};
use std::path::Path;

/// Most points one sweep may have.
pub const MAX_POINTS: usize = 100_000;

/// Type of a swept key's column in the `/sweep` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// Every value is a TOML integer: `i64`.
    Int,
    /// Every value is a number: `f64`.
    Float,
    /// Every value is `true` or `false`.
    Bool,
    /// Anything else: UTF-8 strings (strings as themselves, other literals as written).
    Text,
}

/// One `--set`: a config key and the values it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Dotted config key, e.g. `traffic.load`.
    pub key: String,
    /// Each value as a TOML literal (or bare string), as passed to `--set KEY=VALUE`.
    pub values: Vec<String>,
}

impl Axis {
    /// Column type of this axis in the table.
    pub fn kind(&self) -> ColumnKind {
        let lits: Vec<toml::Value> = self.values.iter().map(|v| config::parse_literal(v)).collect();
        if lits.iter().all(|v| v.is_integer()) {
            ColumnKind::Int
        } else if lits.iter().all(|v| v.is_integer() || v.is_float()) {
            ColumnKind::Float
        } else if lits.iter().all(|v| v.is_bool()) {
            ColumnKind::Bool
        } else {
            ColumnKind::Text
        }
    }
}

fn bad(spec: &str, why: impl std::fmt::Display) -> ConfigError {
    ConfigError::Parse { origin: "--set".into(), message: format!("`{spec}`: {why}") }
}

/// Split at commas (or find colons) outside brackets, braces and quotes.
fn split_top(v: &str, sep: char) -> Vec<String> {
    let (mut depth, mut quote, mut cur, mut out) = (0i32, None::<char>, String::new(), Vec::new());
    for c in v.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, c) if c == sep && depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

fn decimals(s: &str) -> Option<usize> {
    if s.contains(['e', 'E']) {
        return None;
    }
    Some(s.split_once('.').map_or(0, |(_, f)| f.len()))
}

/// Expand `START:STOP:STEP`.
fn range(spec: &str, parts: &[String]) -> Result<Vec<String>, ConfigError> {
    let how = "a range is START:STOP:STEP with three numbers, STEP > 0 and STOP >= START (e.g. 0.1:1.0:0.1)";
    if parts.len() != 3 {
        return Err(bad(spec, how));
    }
    let p: Vec<&str> = parts.iter().map(|s| s.trim()).collect();
    if let (Ok(a), Ok(b), Ok(s)) = (p[0].parse::<i64>(), p[1].parse::<i64>(), p[2].parse::<i64>()) {
        if s <= 0 || b < a {
            return Err(bad(spec, how));
        }
        // In i128: `b - a` of two i64 overflows i64 (e.g. i64::MIN:i64::MAX:1).
        let n = (b as i128 - a as i128) / s as i128 + 1;
        if n > MAX_POINTS as i128 {
            return Err(bad(spec, format!("{n} values; at most {MAX_POINTS}")));
        }
        // Every value lies in [a, b], so it fits in i64.
        return Ok((0..n).map(|i| (a as i128 + i * s as i128).to_string()).collect());
    }
    let num = |x: &str| x.parse::<f64>().ok().filter(|v| v.is_finite());
    let (Some(a), Some(b), Some(s)) = (num(p[0]), num(p[1]), num(p[2])) else {
        return Err(bad(spec, how));
    };
    if s <= 0.0 || b < a {
        return Err(bad(spec, how));
    }
    let steps = (b - a) / s;
    if steps + 1.0 > MAX_POINTS as f64 {
        return Err(bad(spec, format!("{:.0} values; at most {MAX_POINTS}", steps.floor() + 1.0)));
    }
    // Inclusive of STOP within rounding: 0.1:1.0:0.1 has (1.0 - 0.1) / 0.1 = 8.999999999999998 steps.
    let n = (steps + 1e-6).floor() as usize + 1;
    let dec = match (decimals(p[0]), decimals(p[2])) {
        (Some(x), Some(y)) => Some(x.max(y).max(1)),
        _ => None,
    };
    Ok((0..n)
        .map(|i| {
            let v = a + i as f64 * s;
            match dec {
                Some(d) => format!("{v:.d$}"),
                None => format!("{}", (v * 1e12).round() / 1e12),
            }
        })
        .collect())
}

/// Parse one `--set KEY=VALUES` of a sweep.
pub fn parse_set(spec: &str) -> Result<Axis, ConfigError> {
    let (key, raw) = spec.split_once('=').ok_or_else(|| {
        bad(spec, "expected KEY=VALUES, e.g. traffic.load=0.1:1.0:0.1 or routing.algorithm=minimal,valiant")
    })?;
    let key = key.trim();
    if key.is_empty()
        || key.split('.').any(|p| p.is_empty())
        || !key.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    {
        return Err(bad(spec, format!("`{key}` is not a config key (dotted names such as traffic.load)")));
    }
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(bad(spec, "no value"));
    }
    let colon = split_top(raw, ':');
    let values = if colon.len() > 1 {
        range(spec, &colon)?
    } else {
        let items: Vec<String> = split_top(raw, ',').into_iter().map(|s| s.trim().to_string()).collect();
        if items.iter().any(|s| s.is_empty()) {
            return Err(bad(spec, "empty value in the list (values are separated by single commas)"));
        }
        items
    };
    let mut seen = std::collections::HashSet::new();
    if let Some(d) = values.iter().find(|v| !seen.insert(v.as_str())) {
        return Err(bad(spec, format!("value {d} is listed twice")));
    }
    Ok(Axis { key: key.to_string(), values })
}

/// One point of the grid.
#[derive(Debug, Clone)]
pub struct Point {
    /// Position in the sweep (row of the table, name of the group).
    pub index: usize,
    /// The value of each axis at this point, as given to `--set`.
    pub values: Vec<String>,
    /// The point's full config.
    pub config: Config,
}

impl Point {
    /// `traffic.load=0.3 routing.algorithm=valiant`.
    pub fn label(&self, axes: &[Axis]) -> String {
        axes.iter().zip(&self.values).map(|(a, v)| format!("{}={v}", a.key)).collect::<Vec<_>>().join(" ")
    }
}

/// Parse the `--set`s and build (and validate) the config of every point of their product.
pub fn expand(config_path: &Path, sets: &[String]) -> Result<(Vec<Axis>, Vec<Point>), ConfigError> {
    let (axes, total) = axes_of(sets)?;
    let text = crate::config::read_config_text(config_path)?;
    let points = points_of(&axes, total, |overrides| config::parse_file_str(&text, config_path, overrides))?;
    Ok((axes, points))
}

/// [`expand`] with the config saved in a checkpoint as the base (`hxsim sweep --from`): every
/// point's config is checked by [`crate::checkpoint::Saved::check`] (only keys that take effect
/// after the checkpoint's cycle may be swept).
pub fn expand_from(saved: &crate::checkpoint::Saved, sets: &[String]) -> Result<(Vec<Axis>, Vec<Point>), ConfigError> {
    let (axes, total) = axes_of(sets)?;
    let points = points_of(&axes, total, |overrides| {
        saved.config_with(overrides, crate::sim::router_vcs).map_err(|e| match e {
            ConfigError::Value { key, value, allowed } => {
                ConfigError::Value { key, value, allowed: format!("{allowed} (sweep point {})", overrides.join(" ")) }
            }
            other => other,
        })
    })?;
    Ok((axes, points))
}

/// The axes of the `--set`s and the number of points of their product.
fn axes_of(sets: &[String]) -> Result<(Vec<Axis>, usize), ConfigError> {
    let axes: Vec<Axis> = sets.iter().map(|s| parse_set(s)).collect::<Result<_, _>>()?;
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.key == a.key) {
            return Err(bad(&sets[i], format!("`{}` is set twice", a.key)));
        }
    }
    let total = axes.iter().try_fold(1usize, |acc, a| acc.checked_mul(a.values.len()).filter(|&n| n <= MAX_POINTS));
    let Some(total) = total else {
        return Err(ConfigError::value("--set", sets.join(" "), format!("at most {MAX_POINTS} points in a sweep")));
    };
    Ok((axes, total))
}

/// The `total` points of the product of `axes`, each config made by `parse` from the point's
/// overrides (`KEY=VALUE`).
fn points_of(
    axes: &[Axis],
    total: usize,
    parse: impl Fn(&[String]) -> Result<Config, ConfigError>,
) -> Result<Vec<Point>, ConfigError> {
    let mut points = Vec::with_capacity(total);
    for index in 0..total {
        let mut rest = index;
        let mut values = vec![String::new(); axes.len()];
        for (k, a) in axes.iter().enumerate().rev() {
            values[k] = a.values[rest % a.values.len()].clone();
            rest /= a.values.len();
        }
        let overrides: Vec<String> = axes.iter().zip(&values).map(|(a, v)| format!("{}={v}", a.key)).collect();
        let config = parse(&overrides).map_err(|e| match e {
            ConfigError::Parse { origin, message } => {
                ConfigError::Parse { origin, message: format!("{message} (sweep point {})", overrides.join(" ")) }
            }
            other => other,
        })?;
        points.push(Point { index, values, config });
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_range_includes_stop_and_rounds() {
        let a = parse_set("traffic.load=0.1:1.0:0.1").unwrap();
        assert_eq!(a.key, "traffic.load");
        assert_eq!(a.values, ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"]);
        assert_eq!(a.kind(), ColumnKind::Float);
        let a = parse_set("traffic.load=0.05:0.2:0.05").unwrap();
        assert_eq!(a.values, ["0.05", "0.10", "0.15", "0.20"]);
        let a = parse_set("traffic.load=0.1:0.35:0.1").unwrap();
        assert_eq!(a.values, ["0.1", "0.2", "0.3"]);
    }

    #[test]
    fn integer_range_and_lists() {
        let a = parse_set("traffic.source_queue_packets=8:32:8").unwrap();
        assert_eq!(a.values, ["8", "16", "24", "32"]);
        assert_eq!(a.kind(), ColumnKind::Int);
        let a = parse_set("routing.algorithm=minimal, valiant,dor").unwrap();
        assert_eq!(a.values, ["minimal", "valiant", "dor"]);
        assert_eq!(a.kind(), ColumnKind::Text);
        let a = parse_set("topology.sides=[4,4],[2,8]").unwrap();
        assert_eq!(a.values, ["[4,4]", "[2,8]"]);
        let a = parse_set("seed=7").unwrap();
        assert_eq!(a.values, ["7"]);
        // The extremes of i64 are reached without overflow.
        let a = parse_set("seed=9223372036854775800:9223372036854775807:3").unwrap();
        assert_eq!(a.values, ["9223372036854775800", "9223372036854775803", "9223372036854775806"]);
        let a = parse_set("seed=-9223372036854775808:-9223372036854775806:2").unwrap();
        assert_eq!(a.values, ["-9223372036854775808", "-9223372036854775806"]);
    }

    #[test]
    fn bad_specs_are_rejected_with_the_reason() {
        for (spec, needle) in [
            ("traffic.load", "KEY=VALUES"),
            ("traffic.load=0.1:1.0", "START:STOP:STEP"),
            ("traffic.load=0.5:0.1:0.1", "STOP >= START"),
            ("traffic.load=0.1:1.0:0", "STEP > 0"),
            ("traffic.load=a:b:c", "three numbers"),
            ("traffic.load=0.1,,0.2", "empty value"),
            ("=0.1", "not a config key"),
            ("traffic..load=0.1", "not a config key"),
            ("traffic.load=0.1,0.1", "twice"),
            ("traffic.load=", "no value"),
            ("seed=-9223372036854775808:9223372036854775807:1", "at most 100000"),
            ("seed=0:9223372036854775807:1", "at most 100000"),
            ("traffic.load=0:1e300:1e-300", "at most 100000"),
        ] {
            let e = parse_set(spec).unwrap_err().to_string();
            assert!(e.contains(needle) && e.contains(spec), "{spec}: {e}");
        }
    }

    #[test]
    fn split_respects_brackets_and_quotes() {
        assert_eq!(split_top("[1,2],\"a,b\",c", ','), ["[1,2]", "\"a,b\"", "c"]);
        assert_eq!(split_top("\"x:y\"", ':'), ["\"x:y\""]);
    }
}
