//! The topology registry: one line per family ties its config name (`topology.kind`), its
//! parameters (a serde struct in the family's file) and its builder together, so the name exists
//! once and both validation and construction read it.

use super::Topology;
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The parameters of one topology family: validated before anything is allocated, then built.
pub trait TopologySpec {
    /// Check every value and cross-key constraint; errors name the `topology.*` key.
    fn validate(&self) -> Result<(), ConfigError>;
    /// Build the topology (after [`TopologySpec::validate`]); `seed` is the run's master seed, which
    /// randomly generated families (the random regular graph) draw from.
    fn build(&self, seed: u64) -> Result<Arc<dyn Topology>, ConfigError>;
    /// Number of switches and of servers, computed without building (for size checks).
    fn size(&self) -> (u128, u128);
    /// Router ports (servers plus switch-to-switch ports) summed over all switches, computed
    /// without building (for the memory estimate).
    fn router_ports(&self) -> u128;
    /// Whether a faulty network of this family keeps an all-pairs distance table (one byte per
    /// switch pair, counted by the up-front memory check): the default, for families without a
    /// closed form of faulty distances. A family whose [`crate::topology::Fabric`] keeps sparse
    /// exceptions to its closed form instead (HyperX; HyperZ and fat trees with side links at every
    /// level, [`crate::topology::exceptions`]) says `false`.
    fn faulty_distance_table(&self) -> bool {
        true
    }
    /// A lower bound of the distance exceptions ([`crate::topology::exceptions`], towards the
    /// switches with servers) that each failed link adds, for any set of distinct failed links
    /// without failed switches that leaves the network connected: `n` such links keep at least `n`
    /// times this many (the up-front memory check counts them). 0, the default, where none is
    /// derived.
    fn exceptions_per_failed_link(&self) -> u128 {
        0
    }
}

macro_rules! registry {
    ($($name:literal => $variant:ident($spec:ty),)*) => {
        /// `[topology]`: a family chosen by `kind`, with that family's keys (unknown keys are errors).
        #[derive(Debug, Clone, Serialize, PartialEq)]
        #[serde(tag = "kind")]
        pub enum TopologyConfig {
            $(
                #[doc = concat!("`kind = \"", $name, "\"`")]
                #[serde(rename = $name)]
                $variant($spec),
            )*
        }

        /// Every `topology.kind` name.
        pub const KINDS: &[&str] = &[$($name),*];

        impl TopologyConfig {
            fn spec(&self) -> &dyn TopologySpec {
                match self {
                    $(TopologyConfig::$variant(s) => s,)*
                }
            }
            /// Read the family's keys from `table` (without `kind`); errors name the key.
            fn from_table(kind: &str, table: toml::Table) -> Result<Self, String> {
                let value = toml::Value::Table(table);
                match kind {
                    $($name => <$spec>::deserialize(value).map(TopologyConfig::$variant).map_err(|e| e.to_string()),)*
                    other => Err(format!(
                        "unknown topology kind `{other}`, expected one of: {}",
                        KINDS.join(", ")
                    )),
                }
            }
            /// The family name (`topology.kind`).
            pub fn kind(&self) -> &'static str {
                match self {
                    $(TopologyConfig::$variant(_) => $name,)*
                }
            }
            /// The keys of each family, `(topology.kind, schema of its keys)`, in registry order: the
            /// generated configuration reference lists them.
            pub fn family_schemas(
                generator: &mut schemars::SchemaGenerator,
            ) -> Vec<(&'static str, schemars::Schema)> {
                vec![$(($name, generator.root_schema_for::<$spec>()),)*]
            }
        }

        impl schemars::JsonSchema for TopologyConfig {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                "TopologyConfig".into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "description": "The network: `kind` names a family (one of the topology registry's), and the family's keys follow (see below).",
                    "type": "object"
                })
            }
        }
    };
}

registry! {
    "hyperx" => HyperX(super::hyperx::HyperXConfig),
    "hyperz" => HyperZ(super::hyperz::HyperZConfig),
    "fattree" => FatTree(super::fattree::FatTreeConfig),
    "dragonfly" => Dragonfly(super::dragonfly::DragonflyConfig),
    "torus" => Torus(super::torus::TorusConfig),
    "mesh" => Mesh(super::torus::MeshConfig),
    "rrg" => Rrg(super::rrg::RrgConfig),
    "kautz" => Kautz(super::kautz::KautzConfig),
    "graph" => Graph(super::graph::GraphConfig),
    "clos" => Clos(super::clos::ClosConfig),
}

impl<'de> Deserialize<'de> for TopologyConfig {
    /// `kind` picks the family (default `"hyperx"`, for configs written before other families
    /// existed); the other keys are that family's, read with their names in every error.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut table = toml::Table::deserialize(d)?;
        let kind = match table.remove("kind") {
            None => "hyperx".to_string(),
            Some(toml::Value::String(s)) => s,
            Some(other) => return Err(D::Error::custom(format!("`topology.kind` must be a string, got {other}"))),
        };
        TopologyConfig::from_table(&kind, table).map_err(|e| {
            let e = e.trim().replace('\n', " ");
            D::Error::custom(if e.contains("topology.kind") {
                e
            } else {
                format!("{e} (in `[topology]`, kind = \"{kind}\")")
            })
        })
    }
}

impl TopologyConfig {
    /// See [`TopologySpec::validate`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.spec().validate()
    }
    /// See [`TopologySpec::build`].
    pub fn build(&self, seed: u64) -> Result<Arc<dyn Topology>, ConfigError> {
        self.spec().build(seed)
    }
    /// See [`TopologySpec::size`].
    pub fn size(&self) -> (u128, u128) {
        self.spec().size()
    }
    /// See [`TopologySpec::router_ports`].
    pub fn router_ports(&self) -> u128 {
        self.spec().router_ports()
    }
    /// See [`TopologySpec::faulty_distance_table`].
    pub fn faulty_distance_table(&self) -> bool {
        self.spec().faulty_distance_table()
    }
    /// See [`TopologySpec::exceptions_per_failed_link`].
    pub fn exceptions_per_failed_link(&self) -> u128 {
        self.spec().exceptions_per_failed_link()
    }
}
