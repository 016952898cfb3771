//! Fault lists from a file (`faults.file`): JSON or CSV, by extension (`.json`, else CSV).
//!
//! JSON: `{"links": [[switch, port], ...], "switches": [switch, ...]}` (both keys optional; nothing
//! else allowed). CSV: one fault per line, `link,SWITCH,PORT` or `switch,SWITCH`; blank lines, lines
//! starting with `#` and a header line starting with `kind` are skipped. Ports are switch-to-switch
//! ports (`0..switch_ports`), as in `faults.links`.

use super::{check_link, check_switch, FaultSet};
use crate::error::ConfigError;
use crate::topology::Topology;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonFaults {
    #[serde(default)]
    links: Vec<(u64, u64)>,
    #[serde(default)]
    switches: Vec<u64>,
}

/// Read and check the faults of `path` on `topo`. Errors name `faults.file`, the file, the line or
/// entry and what is allowed.
pub fn read(topo: &dyn Topology, path: &str) -> Result<FaultSet, ConfigError> {
    let text = crate::input::read_text(std::path::Path::new(path), crate::input::DATA_MAX_BYTES)
        .map_err(|why| ConfigError::value("faults.file", format!("\"{path}\""), format!("a readable file: {why}")))?;
    parse(topo, path, &text)
}

/// [`read`] on the text of a file called `path`.
pub fn parse(topo: &dyn Topology, path: &str, text: &str) -> Result<FaultSet, ConfigError> {
    let bad = |what: String, allowed: &str| ConfigError::value("faults.file", format!("\"{path}\": {what}"), allowed);
    let mut f = FaultSet::default();
    if path.to_ascii_lowercase().ends_with(".json") {
        let j: JsonFaults = serde_json::from_str(text).map_err(|e| {
            bad(e.to_string(), "a JSON object {\"links\": [[switch, port], ...], \"switches\": [switch, ...]}")
        })?;
        for (i, (s, p)) in j.links.into_iter().enumerate() {
            f.links.push(check_link(topo, s, p).map_err(|e| bad(format!("links[{i}] = [{s}, {p}]"), &e))?);
        }
        for (i, s) in j.switches.into_iter().enumerate() {
            f.switches.push(check_switch(topo, s).map_err(|e| bad(format!("switches[{i}] = {s}"), &e))?);
        }
        return Ok(f);
    }
    const CSV: &str = "CSV lines `link,SWITCH,PORT` or `switch,SWITCH` (# comments; .json for JSON)";
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || (n == 0 && line.starts_with("kind")) {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let num = |c: &str| c.parse::<u64>().map_err(|_| bad(format!("line {}: `{line}`", n + 1), CSV));
        match (cells[0], cells.len()) {
            ("link", 3) => {
                let (s, p) = (num(cells[1])?, num(cells[2])?);
                f.links.push(check_link(topo, s, p).map_err(|e| bad(format!("line {}: `{line}`", n + 1), &e))?);
            }
            ("switch", 2) => {
                let s = num(cells[1])?;
                f.switches.push(check_switch(topo, s).map_err(|e| bad(format!("line {}: `{line}`", n + 1), &e))?);
            }
            _ => return Err(bad(format!("line {}: `{line}`", n + 1), CSV)),
        }
    }
    Ok(f)
}
