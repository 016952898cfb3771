//! hxsim: a parallel, conservative, deterministic discrete-event simulator for the interconnection
//! networks of exascale machines (HyperX, HyperZ), with the routing and deadlock-avoidance
//! mechanisms of the SurePath, DAVC, HyperX and Nue papers.
//!
//! Layers, from the bottom:
//! - [`engine`]: the PDES kernel (partitions, windows, exchange, threads). Knows nothing of networks.
//! - [`topology`]: topologies (one file each) and faults.
//! - [`routing`]: routing algorithms (one file each) and VC policies.
//! - [`traffic`]: traffic patterns and injection processes.
//! - [`network`]: the router/link/server model, run as engine partitions. Knows nothing of threads.
//! - [`metrics`], [`sim`]: statistics, summaries, and building a run from a [`config::Config`].
//! - [`output`], [`sweep`], [`plot`], [`merge`]: results files, sweep grids, figures, merged tables.
//! - [`checkpoint`]: checkpoint and restart of `hxsim run`.
//! - [`design`]: design-space search (the cheapest HyperX for a size, radix and bisection).
//! - [`cli`], [`commands`]: the command line (parsing only) and what each subcommand does, with the
//!   small pieces they share: [`console`] (stdout and stderr), [`signals`] (SIGINT/SIGTERM),
//!   [`timestamp`] (UTC dates).
#![warn(missing_docs)]

pub mod build_info;
pub mod checkpoint;
pub mod cli;
pub mod commands;
pub mod config;
pub mod console;
pub mod design;
pub mod engine;
pub mod merge;
pub mod merge_hdf5;
pub mod metrics;
pub mod network;
pub mod output;
pub mod plot;
pub mod preflight;
pub mod rng;
pub mod routing;
pub mod signals;
pub mod sim;
pub mod sweep;
pub mod timestamp;
pub mod topology;
pub mod traffic;
