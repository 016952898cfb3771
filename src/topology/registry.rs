//! The topology registry: one line per family ties its config name (`topology.kind`), its
//! parameters (a serde struct in the family's file) and its builder together, so the name exists
//! once and both validation and construction read it.

use super::Topology;
use crate::config::ConfigError;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The parameters of one topology family: validated before anything is allocated, then built.
pub trait TopologySpec {
    /// Check every value and cross-key constraint; errors name the `topology.*` key.
    fn validate(&self) -> Result<(), ConfigError>;
    /// Build the topology (after [`TopologySpec::validate`]).
    fn build(&self) -> Result<Arc<dyn Topology>, ConfigError>;
    /// Number of switches and of servers, computed without building (for size checks).
    fn size(&self) -> (u128, u128);
}

macro_rules! registry {
    ($($name:literal => $variant:ident($spec:ty),)*) => {
        /// `[topology]`: a family chosen by `kind`, with that family's keys (unknown keys are errors).
        #[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
            /// The family name (`topology.kind`).
            pub fn kind(&self) -> &'static str {
                match self {
                    $(TopologyConfig::$variant(_) => $name,)*
                }
            }
        }
    };
}

registry! {
    "hyperx" => HyperX(super::hyperx::HyperXConfig),
    "hyperz" => HyperZ(super::hyperz::HyperZConfig),
    "fattree" => FatTree(super::fattree::FatTreeConfig),
}

impl TopologyConfig {
    /// See [`TopologySpec::validate`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.spec().validate()
    }
    /// See [`TopologySpec::build`].
    pub fn build(&self) -> Result<Arc<dyn Topology>, ConfigError> {
        self.spec().build()
    }
    /// See [`TopologySpec::size`].
    pub fn size(&self) -> (u128, u128) {
        self.spec().size()
    }
}
