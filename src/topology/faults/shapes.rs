//! Structured fault shapes placed by coordinates (Camarero et al., "Achieving High-Performance
//! Fault-Tolerant Routing in HyperX Interconnection Networks" (SurePath), section 6, Figs. 7 and 9).
//!
//! In a HyperX every row is a complete graph `K_S`, so any `m` switches of one row span a `K_m`, and
//! a shape is a set of switches whose links *among themselves* fail (the switches stay alive). Each
//! shape has an anchor `at` (switch coordinates, default the origin, which holds the default escape
//! root `routing.escape_root = 0`, so the root is inside the shape as in the paper) and takes
//! coordinates `at[d], at[d] + 1, ...` (modulo the side) along the dimensions it spans:
//!
//! | kind | keys (default) | switches | links (trunking 1) | paper |
//! |---|---|---|---|---|
//! | `row` | `dim` (0), `length` (the side) | a row segment | `C(length, 2)` | 2-D Row: `K_16`, 120; 3-D Row: `K_8`, 28 |
//! | `subplane` | `dims` ([0, 1]), `size` (5) | `size^2` square | `2 size C(size, 2)` | Subplane: `K_5^2`, 100 |
//! | `subcube` | `size` (3) | `size^n` in all `n` dims | `n size^(n-1) C(size, 2)` | Subcube: `K_3^3`, 81 |
//! | `cross` | `dims` ([0, 1]), `length` (11) | one row segment per dim through `at` | `len(dims) C(length, 2)` | Cross: two `K_11`, 110 |
//! | `star` | `length` (7) | one row segment per dim through `at`, all dims | `n C(length, 2)` | Star: three `K_7`, 63 |
//!
//! The cross's margin and the star's surviving links follow: the anchor keeps `side - length` links
//! per spanned dimension (Cross on 16x16: 5 + 5 of 30, the paper's "2/3 of the links of the root"
//! gone; Star on 8x8x8: 1 + 1 + 1, the paper's "only 3 remaining"). Two row segments through the
//! anchor share no link (their other switches differ in two coordinates).
//!
//! On a HyperZ (Adda 2023, section 3): `znode` (`at` = Z-node coordinates, default the origin): the
//! Z-node's switches fail, with their links and servers; `plane` (`level` 1..h, default 1, `index`
//! 0..R_level, default 0): the side links of one GHC plane of that level fail.

use super::FaultSet;
use crate::error::ConfigError;
use crate::topology::{HyperX, HyperZ, PortId, SwitchId, Topology, View};
use serde::{Deserialize, Serialize};

/// Shape kinds on a HyperX.
pub const HYPERX_KINDS: &[&str] = &["row", "subplane", "subcube", "cross", "star"];
/// Shape kinds on a HyperZ.
pub const HYPERZ_KINDS: &[&str] = &["znode", "plane"];

/// One entry of `faults.shapes` (see the module doc for the keys of each kind).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShapeConfig {
    /// `row`, `subplane`, `subcube`, `cross`, `star` (HyperX); `znode`, `plane` (HyperZ).
    pub kind: String,
    /// Coordinates of the anchor switch (HyperX) or Z-node (HyperZ); default the origin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Vec<usize>>,
    /// `row`: the dimension of the row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dim: Option<usize>,
    /// `subplane`, `cross`: the dimensions spanned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dims: Option<Vec<usize>>,
    /// `row`, `cross`, `star`: switches per row segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<usize>,
    /// `subplane`, `subcube`: switches per side of the square or cube.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<usize>,
    /// `plane` (HyperZ): the switch level, 1..h.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<usize>,
    /// `plane` (HyperZ): which of the level's parallel planes, `0..R_level`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
}

/// The keys each kind reads (besides `kind`).
fn keys_of(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "row" => &["at", "dim", "length"],
        "subplane" => &["at", "dims", "size"],
        "subcube" => &["at", "size"],
        "cross" => &["at", "dims", "length"],
        "star" => &["at", "length"],
        "znode" => &["at"],
        "plane" => &["level", "index"],
        _ => return None,
    })
}

impl ShapeConfig {
    /// Key `k` of the shape whose own key is `prefix` (`faults.shapes[2]`, `faults.events[0].shapes[1]`).
    fn key(prefix: &str, k: &str) -> String {
        format!("{prefix}.{k}")
    }

    /// The kind is known and only its keys are given.
    pub fn validate_keys(&self, prefix: &str) -> Result<(), ConfigError> {
        let all: Vec<&str> = HYPERX_KINDS.iter().chain(HYPERZ_KINDS).copied().collect();
        let Some(keys) = keys_of(&self.kind) else {
            return Err(ConfigError::value(
                &Self::key(prefix, "kind"),
                format!("\"{}\"", self.kind),
                format!("one of: {} (HyperX); {} (HyperZ)", HYPERX_KINDS.join(", "), HYPERZ_KINDS.join(", ")),
            ));
        };
        debug_assert!(all.contains(&self.kind.as_str()));
        let given = [
            ("at", self.at.is_some()),
            ("dim", self.dim.is_some()),
            ("dims", self.dims.is_some()),
            ("length", self.length.is_some()),
            ("size", self.size.is_some()),
            ("level", self.level.is_some()),
            ("index", self.index.is_some()),
        ];
        if let Some((k, _)) = given.iter().find(|(k, g)| *g && !keys.contains(k)) {
            return Err(ConfigError::value(
                &Self::key(prefix, k),
                "given",
                format!("only the keys of a {}: kind, {}", self.kind, keys.join(", ")),
            ));
        }
        Ok(())
    }

    /// The faults of this shape (whose key is `prefix`, e.g. `faults.shapes[2]`) on `topo`; errors name the key,
    /// the value and what fits the network.
    pub fn place(&self, topo: &dyn Topology, prefix: &str) -> Result<FaultSet, ConfigError> {
        self.validate_keys(prefix)?;
        match (topo.view(), HYPERX_KINDS.contains(&self.kind.as_str())) {
            (View::HyperX(h), true) => self.place_hyperx(h, prefix),
            (View::HyperZ(z), false) => self.place_hyperz(z, prefix),
            _ => Err(ConfigError::value(
                &Self::key(prefix, "kind"),
                format!("\"{}\"", self.kind),
                format!(
                    "a shape of {}: {}",
                    topo.name(),
                    match topo.view() {
                        View::HyperX(_) => HYPERX_KINDS.join(", "),
                        View::HyperZ(_) => HYPERZ_KINDS.join(", "),
                        _ => "none (shapes need HyperX or HyperZ coordinates; list links or switches)".into(),
                    }
                ),
            )),
        }
    }

    fn anchor(&self, sides: &[usize], prefix: &str, what: &str) -> Result<Vec<usize>, ConfigError> {
        let at = self.at.clone().unwrap_or_else(|| vec![0; sides.len()]);
        if at.len() != sides.len() || at.iter().zip(sides).any(|(&a, &s)| a >= s) {
            return Err(ConfigError::value(
                &Self::key(prefix, "at"),
                format!("{at:?}"),
                format!(
                    "{} {what} coordinates, each below its side ({})",
                    sides.len(),
                    sides.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x")
                ),
            ));
        }
        Ok(at)
    }

    fn dims_of(&self, n: usize, prefix: &str, default: Vec<usize>) -> Result<Vec<usize>, ConfigError> {
        let dims = self.dims.clone().unwrap_or(default);
        let mut seen = vec![false; n];
        let ok = !dims.is_empty() && dims.iter().all(|&d| d < n && !std::mem::replace(&mut seen[d], true));
        if !ok || dims.len() < 2 {
            return Err(ConfigError::value(
                &Self::key(prefix, "dims"),
                format!("{dims:?}"),
                format!("at least 2 distinct dimensions below {n} (the network has {n})"),
            ));
        }
        Ok(dims)
    }

    fn fits(key: &str, v: usize, dims: &[usize], sides: &[usize], paper: &str) -> Result<(), ConfigError> {
        let max = dims.iter().map(|&d| sides[d]).min().unwrap_or(0);
        if v < 2 || v > max {
            return Err(ConfigError::value(
                key,
                v,
                format!(
                    "between 2 and {max}, the smallest side it spans (sides {}){paper}",
                    sides.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x")
                ),
            ));
        }
        Ok(())
    }

    fn place_hyperx(&self, h: &HyperX, prefix: &str) -> Result<FaultSet, ConfigError> {
        let sides = h.sides();
        let n = sides.len();
        let at = self.anchor(sides, prefix, "switch")?;
        // Each group is a box: per dimension, the coordinates it takes (one value where it is flat).
        let segment = |d: usize, len: usize| -> Vec<usize> { (0..len).map(|k| (at[d] + k) % sides[d]).collect() };
        let flat = |d: usize| vec![at[d]];
        let mut boxes: Vec<Vec<Vec<usize>>> = Vec::new();
        match self.kind.as_str() {
            "row" => {
                let d = self.dim.unwrap_or(0);
                if d >= n {
                    return Err(ConfigError::value(&Self::key(prefix, "dim"), d, format!("a dimension below {n}")));
                }
                let len = self.length.unwrap_or(sides[d]);
                Self::fits(&Self::key(prefix, "length"), len, &[d], sides, "; default: the whole row")?;
                boxes.push((0..n).map(|e| if e == d { segment(e, len) } else { flat(e) }).collect());
            }
            "subplane" | "subcube" => {
                let dims =
                    if self.kind == "subplane" { self.dims_of(n, prefix, vec![0, 1])? } else { (0..n).collect() };
                if dims.len() < 2 {
                    return Err(ConfigError::value(
                        &Self::key(prefix, "kind"),
                        "\"subcube\"",
                        format!("a network of at least 2 dimensions (this one has {n}); use row"),
                    ));
                }
                let default = if self.kind == "subplane" { 5 } else { 3 };
                let size = self.size.unwrap_or(default);
                let paper = format!("; default {default}, the paper's {}", self.kind);
                Self::fits(&Self::key(prefix, "size"), size, &dims, sides, &paper)?;
                boxes.push((0..n).map(|e| if dims.contains(&e) { segment(e, size) } else { flat(e) }).collect());
            }
            "cross" | "star" => {
                let dims = if self.kind == "cross" { self.dims_of(n, prefix, vec![0, 1])? } else { (0..n).collect() };
                if dims.len() < 2 {
                    return Err(ConfigError::value(
                        &Self::key(prefix, "kind"),
                        "\"star\"",
                        format!("a network of at least 2 dimensions (this one has {n}); use row"),
                    ));
                }
                let default = if self.kind == "cross" { 11 } else { 7 };
                let len = self.length.unwrap_or(default);
                let paper = format!("; default {default}, the paper's {}", self.kind);
                Self::fits(&Self::key(prefix, "length"), len, &dims, sides, &paper)?;
                for &d in &dims {
                    boxes.push((0..n).map(|e| if e == d { segment(e, len) } else { flat(e) }).collect());
                }
            }
            _ => unreachable!("validated by validate_keys and place"),
        }
        let mut f = FaultSet::default();
        for b in &boxes {
            let members = cartesian(b).into_iter().map(|c| h.switch_at(&c)).collect::<Vec<_>>();
            links_within(h, &members, &mut f.links);
        }
        Ok(f)
    }

    fn place_hyperz(&self, z: &HyperZ, prefix: &str) -> Result<FaultSet, ConfigError> {
        let mut f = FaultSet::default();
        match self.kind.as_str() {
            "znode" => {
                if z.dims() == 0 {
                    return Err(ConfigError::value(
                        &Self::key(prefix, "kind"),
                        "\"znode\"",
                        "a HyperZ with side dimensions (with topology.sides empty the one Z-node is the whole network)",
                    ));
                }
                let at = self.anchor(z.sides(), prefix, "Z-node")?;
                let mut zn = 0u32;
                for (k, &a) in at.iter().enumerate() {
                    zn = z.with_coord(zn, k, a);
                }
                for level in 1..=z.height() {
                    for x in 0..z.nodes_per_znode(level) {
                        f.switches.push(z.switch_at(level, zn, x));
                    }
                }
            }
            "plane" => {
                let h = z.height();
                let level = self.level.unwrap_or(1);
                if !(1..=h).contains(&level) {
                    return Err(ConfigError::value(
                        &Self::key(prefix, "level"),
                        level,
                        format!("a switch level 1..{h}"),
                    ));
                }
                let planes = z.nodes_per_znode(level);
                let index = self.index.unwrap_or(0);
                if index >= planes {
                    return Err(ConfigError::value(
                        &Self::key(prefix, "index"),
                        index,
                        format!("a plane of level {level} below R_{level} = {planes}"),
                    ));
                }
                if z.dims() == 0 {
                    return Err(ConfigError::value(
                        &Self::key(prefix, "kind"),
                        "\"plane\"",
                        "a HyperZ with side dimensions (topology.sides is empty: there are no side links)",
                    ));
                }
                let members: Vec<SwitchId> =
                    (0..z.num_znodes() as u32).map(|zn| z.switch_at(level, zn, index)).collect();
                links_within(z, &members, &mut f.links);
            }
            _ => unreachable!("validated by validate_keys and place"),
        }
        Ok(f)
    }
}

/// Every combination of one value per dimension.
fn cartesian(b: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for vals in b {
        out = out.into_iter().flat_map(|c| vals.iter().map(move |&v| [c.clone(), vec![v]].concat())).collect();
    }
    out
}

/// Append every link with both ends in `members` (once, as its lower end).
fn links_within(topo: &dyn Topology, members: &[SwitchId], out: &mut Vec<(SwitchId, PortId)>) {
    let set: std::collections::HashSet<SwitchId> = members.iter().copied().collect();
    for &s in members {
        for p in 0..topo.switch_ports(s) as PortId {
            if let Some((o, q)) = topo.neighbour(s, p) {
                if set.contains(&o) && (s, p) < (o, q) {
                    out.push((s, p));
                }
            }
        }
    }
}
