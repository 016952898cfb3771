//! hxsim: a parallel, conservative, deterministic discrete-event simulator for the interconnection
//! networks of exascale machines (HyperX, HyperZ), with the routing and deadlock-avoidance
//! mechanisms of the SurePath, DAVC, HyperX and Nue papers.
//!
//! Layers, from the bottom. The modules are declared below in this order, and a module imports
//! only from modules declared before it (`tests/layers.rs` checks it; unit tests are exempt):
//! - leaves every layer may use: [`error`] ([`error::ConfigError`], bad input), [`memory`] (sizes and
//!   available memory), [`input`] (bounded reads of the files a user names), [`rng`] (random
//!   streams), [`timestamp`], [`build_info`], [`console`]
//!   (stdout and stderr), [`staged`] (files written under a partial name, then moved into place);
//! - [`engine`]: the PDES kernel (partitions, windows, exchange, threads, MPI). Knows nothing of
//!   networks; [`signals`] (SIGINT/SIGTERM stop the engine's progress);
//! - [`metrics`]: counters, histograms, time series, Jain's index;
//! - the model: [`topology`] (one file per family, and faults), [`routing`] (one file per algorithm,
//!   and VC policies), [`traffic`] (patterns and injection), [`network`] (the router/link/server
//!   model, run as engine partitions; knows nothing of threads). The model never reads the config
//!   schema: each part takes its own typed parameters;
//! - [`config`]: the experiment description (TOML schema, validation), which reads the model's
//!   registries of names; [`preflight`] (checks on the built network before a run);
//! - [`checkpoint`] and [`sim`]: building a run from a config, running it on the engine (with
//!   checkpoint and restart), and reducing the partitions' statistics into a result;
//! - [`sweep`], [`output`], [`merge`], [`merge_hdf5`], [`plot`]: sweep grids, results files, merged
//!   tables, figures;
//! - [`design`]: design-space search (the cheapest HyperX or HyperZ for a size, radix and bisection);
//! - [`cli`], [`commands`]: the command line (parsing only) and what each subcommand does.
#![warn(missing_docs)]

pub mod error;
pub mod memory;
pub mod input;
pub mod rng;
pub mod timestamp;
pub mod build_info;
pub mod console;
pub mod staged;
pub mod engine;
pub mod signals;
pub mod metrics;
pub mod topology;
pub mod routing;
pub mod traffic;
pub mod workload;
pub mod network;
pub mod config;
pub mod preflight;
pub mod checkpoint;
pub mod sim;
pub mod sweep;
pub mod output;
pub mod merge;
pub mod merge_hdf5;
pub mod plot;
pub mod design;
pub mod cli;
pub mod commands;
