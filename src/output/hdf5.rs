//! Writing the HDF5 layout of one run into a file or a group (see [`crate::output`] for the layout).
//!
//! Everything here is called from the main side (the CLI thread or the time-series writer thread),
//! never from the simulation threads.

use super::ffi::{self, sys};
use crate::config::Config;
use crate::metrics::{LinkSeries, Sample, Summary};
use crate::sim::RunResult;
use ::hdf5::dataset::Layout;
use ::hdf5::plist::group_create::LinkCreationOrder;
use ::hdf5::types::VarLenUnicode;
use ::hdf5::{Dataset, File, Group, H5Type, Location};
use anyhow::{anyhow, bail, Context, Result};
use crossbeam::channel::{Receiver, RecvTimeoutError};
use std::collections::VecDeque;
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::Path;
use std::time::{Duration, Instant};

/// Value of the root attribute `format`.
pub const FORMAT: &str = "hxsim-results";
/// Value of the root attribute `format_version`; bumped when the layout changes incompatibly.
pub const FORMAT_VERSION: u32 = 1;
/// Chunk length (rows) of the extendable time-series datasets.
pub const TIMESERIES_CHUNK: usize = 256;
/// Deflate (gzip) level of the compressed datasets (see [`FILTER_MIN_BYTES`]), applied by HDF5's
/// own deflate filter (after its byte shuffle for integers, see `shuffles`), so that any HDF5 or
/// netCDF-4 reader inflates them. Level 1 costs about half the CPU of level 4 for a sweep point's
/// columns; the byte shuffle does the most.
pub const DEFLATE_LEVEL: u8 = 1;
/// Arrays of fewer bytes are stored unfiltered, in the dataset's object header (HDF5's compact
/// layout, as scalars are): deflating a few KiB saves little (a chunk index and a filter message
/// cost a few hundred bytes of their own), and setting up the filter, the chunk index and a block
/// of the file for the data costs more CPU than the rest of writing the dataset.
pub const FILTER_MIN_BYTES: usize = 4096;
/// Half the entries of a chunk-index B-tree node (HDF5's default is 32).
pub const ISTORE_K: u32 = 2;
/// Largest chunk of a fixed-size array dataset, bytes: a whole column up to this size is one chunk
/// (one read), longer ones (per-server arrays of a million-endpoint network) are split.
pub const CHUNK_BYTES: usize = 1 << 20;

/// Units and description of each summary key (the fields of [`Summary`]); keys not listed get none.
pub const SUMMARY_UNITS: &[(&str, &str, &str)] = &[
    ("offered_load", "phits/cycle/server", "offered load (config)"),
    ("accepted_load", "phits/cycle/server", "phits whose tail arrived in the measured window, per cycle per server"),
    ("average_latency", "cycles", "mean latency (creation to tail arrival) of packets delivered in the window"),
    ("latency_p99", "cycles", "99th percentile of that latency"),
    ("average_hops", "switch traversals/packet", "mean switches crossed per delivered packet (both ends included)"),
    ("jain_index", "1", "Jain's fairness index of per-server injected phits in the window"),
    ("packets_delivered", "packets", "packets delivered in the measured window"),
    ("cycles", "cycles", "cycles simulated"),
    ("wall_seconds", "s", "wall-clock time of the simulation loop"),
    ("hops_per_second", "switch traversals/s", "simulation speed"),
    ("completion_cycles", "cycles", "fixed workloads: cycle at which the last tail arrived"),
    ("packets_lost", "packets", "failure events: packets lost at the events (on failed links and in failed switches)"),
    ("packets_stranded", "packets", "failure events: packets dropped after an event for want of a live route"),
    ("packets_retransmitted", "packets", "failure events: lost or stranded packets sent again by their source"),
    ("packets_abandoned", "packets", "failure events: lost or stranded packets their source gave up"),
    (
        "steady_state",
        "bool",
        "1 if the measured window reached a steady state (see hxsim's manual, docs/model.md, Steady state)",
    ),
    ("accepted_trend", "1", "fitted change of accepted load across the window, relative to its mean"),
    ("in_flight_trend", "1", "fitted change of packets in flight across the window, relative to its mean"),
    ("packets_generated", "packets", "packets generated over the whole run"),
    ("packets_suppressed", "packets", "generations skipped because a source queue was full"),
    ("peak_memory_bytes", "bytes", "peak resident memory of the process"),
    (
        "packets_dropped",
        "packets",
        "faults.unreachable = \"drop\": generations to an unreachable destination, not made",
    ),
    (
        "unreachable_pairs",
        "pairs",
        "ordered pairs of live servers that faults disconnected (their traffic is not generated)",
    ),
    ("servers_lost", "servers", "servers of failed switches (accepted load is per live server)"),
    ("routing_layers", "layers", "dfsssp, lash: virtual layers (VCs) needed; spda: spanning trees"),
    ("routing_table_bytes", "bytes", "dfsssp, lash, spda: memory of the routing tables"),
    ("routing_build_seconds", "s", "dfsssp, lash, spda: wall-clock time to build the routing tables"),
    ("vcs_used", "VCs", "VCs that carried phits on switch-to-switch links in the measured window (/vcs has each)"),
];

/// Summary keys that measure the machine rather than the model: they differ between identical runs.
pub const TIMING_KEYS: &[&str] = &["wall_seconds", "hops_per_second", "peak_memory_bytes", "routing_build_seconds"];

/// Attributes that describe when, where or how a file was written rather than what was simulated.
pub const NONDETERMINISTIC_ATTRS: &[&str] = &["start_time", "end_time", "host", "jobs", "argv"];

/// Time-series columns: name, units, description.
pub const TIMESERIES_COLUMNS: &[(&str, &str, &str)] = &[
    ("cycle", "cycles", "end of the interval (a last, shorter interval ends at the run's last cycle)"),
    (
        "injected_phits",
        "phits",
        "phits sent by all servers into the network in the interval (a server sends one phit per cycle: a packet's \
         phits count in the intervals they are sent in)",
    ),
    (
        "accepted_phits",
        "phits",
        "phits that reached their destination server in the interval (one per cycle per server: a packet's phits \
         count in the intervals they arrive in, up to its tail)",
    ),
    ("delivered_packets", "packets", "packets whose tail arrived in the interval"),
    ("latency_sum", "cycles", "sum of the latencies of those packets"),
    ("in_flight", "packets", "packets injected into the network minus delivered, at the end of the interval"),
    ("injected_load", "phits/cycle/server", "injected_phits / (interval length * servers)"),
    ("accepted_load", "phits/cycle/server", "accepted_phits / (interval length * servers)"),
    ("mean_latency", "cycles", "latency_sum / delivered_packets (NaN when none)"),
    (
        "lost_packets",
        "packets",
        "packets lost in the network in the interval: dropped at a failure event or stranded after one (0 without \
         [[faults.events]])",
    ),
];

/// Create (truncate) a results file. The writer does not lock the file, so that it can be read
/// (h5py, h5dump) while the run goes on: the file keeps the HDF5 1.8 format, whose superblock has
/// no "open for writing" flag (1.10's refuses readers without SWMR). Its chunk indexes are B-trees
/// whose nodes are allocated whole: [`ISTORE_K`] keeps them small, since nearly every dataset here
/// is one chunk (a node for 64 chunks per dataset would be most of the file).
pub fn create_file(path: &Path) -> Result<File> {
    let mut b = File::with_options();
    b.with_fapl(|p| p.file_locking(false))
        .with_fcpl(|p| p.link_creation_order(LinkCreationOrder::Indexed).istore_k(ISTORE_K));
    b.create(path).with_context(|| format!("cannot create results file {}", path.display()))
}

/// Open a results file for reading, without taking a lock (it may still be being written).
pub fn open_file(path: &Path) -> Result<File> {
    let mut b = File::with_options();
    b.with_fapl(|p| p.file_locking(false));
    b.open(path).with_context(|| format!("cannot open {} as an HDF5 file", path.display()))
}

/// Links a group keeps in its object header before it moves them to the dense storage of large
/// groups (a heap and two B-trees, HDF5's default from 8 links on): a run's groups have up to 24
/// members (`/summary`), and building the dense storage of each cost more CPU, and more bytes,
/// than the links.
pub const COMPACT_LINKS: u32 = 32;

/// Create a group whose members list in creation order (h5py iterates them in that order), with
/// the shared creation property list (see `ffi`).
pub fn new_group(parent: &Group, name: &str) -> Result<Group> {
    new_group_for(parent, name, 4, 1)
}

/// [`new_group`] for about `links` members and `attrs` attributes: its object header is made large
/// enough for them at once. HDF5 sizes a new group's header for an estimate of its links (4 names
/// of 8 bytes unless told), then adds a chunk of the file, linked from the last, for each member
/// or attribute that does not fit: a sweep point's 7 groups had 52 chunks (now 7), each allocated,
/// cached, written and freed on its own. The estimate is told as many links as there are members and
/// attributes, with names long enough that they take the bytes those do (about 40 a link, 80 an
/// attribute with its type and dataspace).
pub(crate) fn new_group_for(parent: &Group, name: &str, links: u32, attrs: u32) -> Result<Group> {
    /// Bytes of a link message beside its name (version 1 header, creation order tracked).
    const LINK_OVERHEAD: u32 = 24;
    let entries = (links + attrs).clamp(1, COMPACT_LINKS);
    let name_len = ((links * 40 + attrs * 80) / entries).saturating_sub(LINK_OVERHEAD).max(8);
    let ids = ffi::ids()?;
    let n = CString::new(name)?;
    // SAFETY: `parent.id()` is a live group, `ids.gcpl` a live property list, `n` outlives the
    // call; the list is shared: its estimate is set under the same lock as the call that uses it.
    let id = ::hdf5::sync::sync(|| unsafe {
        if sys::h5p::H5Pset_est_link_info(ids.gcpl, entries, name_len) < 0 {
            return -1;
        }
        sys::h5g::H5Gcreate2(parent.id(), n.as_ptr(), ffi::H5P_DEFAULT, ids.gcpl, ffi::H5P_DEFAULT)
    });
    if id < 0 {
        bail!("creating HDF5 group {name}");
    }
    // SAFETY: `id` is a group just created, whose one reference the handle takes over.
    Ok(unsafe { ::hdf5::from_id::<Group>(id) }?)
}

fn vlu(s: &str) -> Result<VarLenUnicode> {
    s.replace('\0', " ").parse::<VarLenUnicode>().map_err(|e| anyhow!("string attribute: {e}"))
}

/// Set a string attribute (created, or overwritten if it exists), of the type hdf5-metno gives
/// [`VarLenUnicode`] (a variable-length, null-terminated UTF-8 string; h5py reads it as `str`).
/// Called straight into the library with the shared type, dataspace and creation list (see
/// `ffi`): a results file has a `units` and a `description` on every dataset, and building those
/// for each attribute, as hdf5-metno does, was a tenth of the CPU time of writing a sweep point.
pub fn set_str_attr(loc: &Location, name: &str, value: &str) -> Result<()> {
    let exists = has_attr(loc, name)?;
    write_str_attr(loc, name, value, exists)
}

/// [`set_str_attr`] on an object just created, which has no attribute yet: it skips asking.
pub(crate) fn new_str_attr(loc: &Location, name: &str, value: &str) -> Result<()> {
    write_str_attr(loc, name, value, false)
}

fn write_str_attr(loc: &Location, name: &str, value: &str, exists: bool) -> Result<()> {
    let ids = ffi::ids()?;
    let v = CString::new(value.replace('\0', " "))?;
    let p = v.as_ptr();
    // SAFETY: the buffer H5Awrite reads is one `char *`, as a variable-length string's memory
    // type wants, and `v` outlives the call.
    unsafe { write_attr(loc, name, ids.str_ty, (&p as *const *const c_char).cast(), exists) }
}

/// Create (or, if `exists`, open) the scalar attribute `name` of type `ty` on `loc` and write it
/// from `buf`.
///
/// # Safety
///
/// `buf` must hold one value of the memory type `ty`.
unsafe fn write_attr(loc: &Location, name: &str, ty: ffi::Hid, buf: *const c_void, exists: bool) -> Result<()> {
    let ids = ffi::ids()?;
    let n = CString::new(name)?;
    // SAFETY: `loc.id()` is a live object handle, the ids are live (never closed) and `n`
    // outlives the calls; the lock serialises this with hdf5-metno's calls.
    let rc = ::hdf5::sync::sync(|| unsafe {
        ffi::write_attribute(loc.id(), n.as_ptr(), ty, ids.scalar, ids.acpl, buf, exists)
    });
    if rc < 0 {
        bail!("writing attribute {name}");
    }
    Ok(())
}

/// Whether `loc` has the attribute `name`. Asked with `H5Aexists`: opening a missing attribute to
/// find out fails, and gathering that failure's HDF5 error stack cost more than the attribute.
fn has_attr(loc: &Location, name: &str) -> Result<bool> {
    let n = CString::new(name)?;
    // SAFETY: `loc.id()` is a live object handle and `n` outlives the call; hdf5-metno's lock
    // serialises this with its own calls into the library.
    let rc = ::hdf5::sync::sync(|| unsafe { sys::h5a::H5Aexists(loc.id(), n.as_ptr()) });
    if rc < 0 {
        bail!("checking for attribute {name}");
    }
    Ok(rc > 0)
}

/// Set a scalar attribute (created, or overwritten if it exists): straight through the library for
/// the types `native_type` knows, with hdf5-metno for the others.
pub fn set_attr<T: H5Type>(loc: &Location, name: &str, value: &T) -> Result<()> {
    let exists = has_attr(loc, name)?;
    if let Some(ty) = native_type::<T>()? {
        // SAFETY: `value` is one `T`, whose memory type `ty` is.
        return unsafe { write_attr(loc, name, ty, (value as *const T).cast(), exists) };
    }
    let a = if exists {
        loc.attr(name)?
    } else {
        loc.new_attr::<T>().create(name).with_context(|| format!("creating attribute {name}"))?
    };
    a.write_scalar(value).with_context(|| format!("writing attribute {name}"))
}

/// Set a 1-D string array attribute.
pub fn set_str_list_attr(loc: &Location, name: &str, values: &[String]) -> Result<()> {
    let v: Vec<VarLenUnicode> = values.iter().map(|s| vlu(s)).collect::<Result<_>>()?;
    if has_attr(loc, name)? {
        loc.delete_attr(name)?;
    }
    loc.new_attr_builder().with_data(v.as_slice()).create(name).with_context(|| format!("writing attribute {name}"))?;
    Ok(())
}

/// Read a string attribute.
pub fn str_attr(loc: &Location, name: &str) -> Result<String> {
    let v: VarLenUnicode = loc.attr(name).and_then(|a| a.read_scalar()).with_context(|| format!("attribute {name}"))?;
    utf8(name, &v)
}

/// The text of an HDF5 string, checked: the library hands back whatever bytes the file holds, and
/// `VarLenUnicode::as_str` assumes UTF-8 without checking (a file written by another tool, or
/// damaged, made `hxsim plot` panic).
fn utf8(name: &str, v: &VarLenUnicode) -> Result<String> {
    std::str::from_utf8(v.as_bytes())
        .map(str::to_string)
        .map_err(|e| anyhow!("attribute {name} is not valid UTF-8 text ({e})"))
}

/// Read a 1-D string array attribute.
pub fn str_list_attr(loc: &Location, name: &str) -> Result<Vec<String>> {
    let v: Vec<VarLenUnicode> =
        loc.attr(name).and_then(|a| a.read_raw()).with_context(|| format!("attribute {name}"))?;
    v.iter().map(|s| utf8(name, s)).collect()
}

/// Rows per chunk of a fixed-size 1-D dataset of `len` rows: all of them up to [`CHUNK_BYTES`].
fn chunk_rows<T>(len: usize) -> usize {
    (CHUNK_BYTES / std::mem::size_of::<T>().max(1)).clamp(1, len.max(1))
}

/// Whether the byte shuffle filter goes before deflate for elements of type `T`: for integers,
/// whose high bytes are mostly zero, it is what makes them compress. Floating-point columns here
/// are mostly ratios of small integers (utilization = phits / cycles), whose 8-byte values repeat
/// whole: deflate finds those repeats in the unshuffled bytes (a sweep point's `utilization`
/// deflates to 9 KB unshuffled, 25-42 KB shuffled, and in a quarter of the time).
fn shuffles<T: H5Type>() -> bool {
    !matches!(T::type_descriptor(), ::hdf5::types::TypeDescriptor::Float(_))
}

/// Write a 1-D dataset with `units` and `description` attributes: from [`FILTER_MIN_BYTES`] up
/// chunked and deflated (see [`DEFLATE_LEVEL`]; integers byte-shuffled first, see `shuffles`),
/// smaller ones compact and unfiltered.
pub fn column<T: H5Type>(g: &Group, name: &str, data: &[T], units: &str, description: &str) -> Result<Dataset> {
    let storage = if std::mem::size_of_val(data) < FILTER_MIN_BYTES {
        Storage::Compact
    } else {
        Storage::Chunked { rows: chunk_rows::<T>(data.len()), shuffle: shuffles::<T>() }
    };
    let quick = if data.is_empty() { None } else { create(g, name, Some(&[data.len()]), data, storage)? };
    let ds = match quick {
        Some(ds) => ds,
        None => {
            // An empty column (HDF5 gives it a chunk of one row), or a type `native_type` does not
            // know.
            let b = g.new_dataset_builder().with_data(data);
            let b = match storage {
                _ if data.is_empty() => b,
                Storage::Compact => b.layout(Layout::Compact),
                Storage::Chunked { rows, shuffle: true } => b.chunk(rows).shuffle().deflate(DEFLATE_LEVEL),
                Storage::Chunked { rows, shuffle: false } => b.chunk(rows).deflate(DEFLATE_LEVEL),
            };
            b.create(name).with_context(|| format!("writing dataset {name}"))?
        }
    };
    new_str_attr(&ds, "units", units)?;
    new_str_attr(&ds, "description", description)?;
    Ok(ds)
}

/// The native HDF5 type of `T` (the one hdf5-metno gives it), for the integer, float and `bool`
/// types results are made of; `None` for others.
fn native_type<T: H5Type>() -> Result<Option<ffi::Hid>> {
    use ::hdf5::types::{FloatSize, IntSize, TypeDescriptor as D};
    // Also initialises the library, which sets the type ids read below.
    let ids = ffi::ids()?;
    Ok(Some(match T::type_descriptor() {
        D::Boolean => ids.bool_ty,
        D::Unsigned(IntSize::U1) => *sys::h5t::H5T_NATIVE_UINT8,
        D::Unsigned(IntSize::U4) => *sys::h5t::H5T_NATIVE_UINT32,
        D::Unsigned(IntSize::U8) => *sys::h5t::H5T_NATIVE_UINT64,
        D::Integer(IntSize::U4) => *sys::h5t::H5T_NATIVE_INT32,
        D::Integer(IntSize::U8) => *sys::h5t::H5T_NATIVE_INT64,
        D::Float(FloatSize::U8) => *sys::h5t::H5T_NATIVE_DOUBLE,
        _ => return Ok(None),
    }))
}

/// How [`create`] stores a dataset's values.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Storage {
    /// In the object header, unfiltered (HDF5's compact layout; under 64 KiB).
    Compact,
    /// 1-D, in chunks of `rows`, deflated, byte-shuffled first if `shuffle`.
    Chunked { rows: usize, shuffle: bool },
}

/// Create the dataset `name` in `g` holding `data` (of `shape`, row-major; `None`: a scalar, one
/// value) stored as `storage`, with no modification times (as hdf5-metno's builder), straight
/// through the library with the shared property lists (see [`ffi`]): the builder makes and sets
/// three property lists and a datatype per dataset, a tenth of the CPU time of writing a sweep
/// point, most of whose datasets are small. `None` (nothing created) for a type [`native_type`]
/// does not know.
pub(crate) fn create<T: H5Type>(
    g: &Group,
    name: &str,
    shape: Option<&[usize]>,
    data: &[T],
    storage: Storage,
) -> Result<Option<Dataset>> {
    let Some(ty) = native_type::<T>()? else { return Ok(None) };
    let write = Some((data.as_ptr().cast(), ffi::H5P_DEFAULT));
    // SAFETY: `data` holds `data.len()` values of `T`, whose native type `ty` is.
    unsafe { create_raw(g, name, shape, ty, write, data.len(), storage) }.map(Some)
}

/// [`create`] for text: variable-length UTF-8 strings, hdf5-metno's [`VarLenUnicode`] (a null
/// character, which C strings cannot hold, is written as a space).
pub(crate) fn create_strs(
    g: &Group,
    name: &str,
    shape: Option<&[usize]>,
    data: &[&str],
    storage: Storage,
) -> Result<Dataset> {
    let ids = ffi::ids()?;
    let owned = data.iter().map(|s| CString::new(s.replace('\0', " "))).collect::<Result<Vec<_>, _>>()?;
    let ptrs: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
    // SAFETY: `ptrs` holds `data.len()` `char *`, the memory layout of a variable-length string,
    // each pointing into `owned`, which outlives the call.
    unsafe { create_raw(g, name, shape, ids.str_ty, Some((ptrs.as_ptr().cast(), ids.small_xfer)), ptrs.len(), storage) }
}

/// Create a dataset (see [`create`]) of `len` values of the memory (and file) type `ty` and, given
/// `write = Some((buf, dxpl))`, write them from `buf`, transferred with `dxpl`.
///
/// # Safety
///
/// `buf` holds `len` values of the memory type `ty`.
unsafe fn create_raw(
    g: &Group,
    name: &str,
    shape: Option<&[usize]>,
    ty: ffi::Hid,
    write: Option<(*const c_void, ffi::Hid)>,
    len: usize,
    storage: Storage,
) -> Result<Dataset> {
    let dims: Vec<u64> = shape.unwrap_or(&[]).iter().map(|&d| d as u64).collect();
    let values: u64 = dims.iter().product();
    if values != len as u64 {
        bail!("dataset {name}: {len} values for a shape of {values}");
    }
    let ids = ffi::ids()?;
    let (dcpl, chunk) = match storage {
        Storage::Compact => (ids.compact, 0),
        Storage::Chunked { rows, shuffle } => {
            if dims.len() != 1 || rows == 0 {
                bail!("dataset {name}: chunks of {rows} rows for a shape of {dims:?}");
            }
            (if shuffle { ids.shuffled } else { ids.deflated }, rows as u64)
        }
    };
    let n = CString::new(name)?;
    // SAFETY: `g.id()` is a live group, `ty` and the property lists live ids, `n` and `dims`
    // outlive the calls, and H5Dwrite reads `len` values of `ty` from `buf` (H5S_ALL: the whole
    // dataspace, which has that many). The chunked lists are shared: their chunk is set under the
    // same lock as the call that uses it.
    let id = ::hdf5::sync::sync(|| unsafe {
        if chunk > 0 && sys::h5p::H5Pset_chunk(dcpl, 1, &chunk) < 0 {
            return -1;
        }
        let space = match shape {
            None => sys::h5s::H5Screate(sys::h5s::H5S_class_t::H5S_SCALAR),
            Some(_) => sys::h5s::H5Screate_simple(dims.len() as c_int, dims.as_ptr(), std::ptr::null()),
        };
        if space < 0 {
            return -1;
        }
        let ds = sys::h5d::H5Dcreate2(g.id(), n.as_ptr(), ty, space, ffi::H5P_DEFAULT, dcpl, ffi::H5P_DEFAULT);
        sys::h5s::H5Sclose(space);
        if let (true, Some((buf, dxpl))) = (ds >= 0, write) {
            if sys::h5d::H5Dwrite(ds, ty, ffi::H5S_ALL, ffi::H5S_ALL, dxpl, buf) < 0 {
                sys::h5d::H5Dclose(ds);
                return -1;
            }
        }
        ds
    });
    if id < 0 {
        bail!("writing dataset {name}");
    }
    // SAFETY: `id` is a dataset just created, whose one reference the handle takes over.
    Ok(unsafe { ::hdf5::from_id::<Dataset>(id) }?)
}

/// Write a 1-D string dataset (chunked and deflated, as [`column()`]'s large ones: text compresses).
pub fn str_column(g: &Group, name: &str, data: &[String], description: &str) -> Result<Dataset> {
    let ds = if data.is_empty() {
        // HDF5 gives an empty dataset a chunk of one row.
        let v: [VarLenUnicode; 0] = [];
        g.new_dataset_builder().with_data(&v[..]).create(name).with_context(|| format!("writing dataset {name}"))?
    } else {
        let v: Vec<&str> = data.iter().map(String::as_str).collect();
        let rows = chunk_rows::<VarLenUnicode>(v.len());
        create_strs(g, name, Some(&[v.len()]), &v, Storage::Chunked { rows, shuffle: false })?
    };
    new_str_attr(&ds, "description", description)?;
    Ok(ds)
}

/// Who wrote a file, where and when (the root attributes that are not the experiment).
#[derive(Debug, Clone)]
pub struct RunMeta {
    /// Partitions (threads) per rank.
    pub threads: usize,
    /// MPI ranks (1 without MPI).
    pub ranks: usize,
    /// Start time, ISO 8601 UTC.
    pub start_time: String,
    /// Host name.
    pub host: String,
}

impl RunMeta {
    /// Metadata for a run starting now on this host.
    pub fn now(threads: usize) -> Self {
        RunMeta {
            threads,
            ranks: 1,
            start_time: crate::timestamp::iso8601_utc(std::time::SystemTime::now()),
            host: super::hostname(),
        }
    }
}

/// Write the identification attributes of a run (file root or sweep point group): format, version,
/// git commit, the full config as TOML, seed, threads, ranks, start time, host, and
/// `complete = false` / `status = "running"` until [`finish`] is called.
pub fn write_header(loc: &Location, cfg: &Config, meta: &RunMeta) -> Result<()> {
    set_str_attr(loc, "format", FORMAT)?;
    set_attr(loc, "format_version", &FORMAT_VERSION)?;
    set_str_attr(loc, "hxsim_version", env!("CARGO_PKG_VERSION"))?;
    write_build_attrs(loc)?;
    set_str_attr(loc, "name", &cfg.name)?;
    set_str_attr(loc, "config", &cfg.to_toml())?;
    set_attr(loc, "seed", &cfg.seed)?;
    set_attr(loc, "threads", &(meta.threads as u64))?;
    set_attr(loc, "ranks", &(meta.ranks as u64))?;
    set_attr(loc, "sample_cycles", &cfg.output.sample_cycles)?;
    set_str_attr(loc, "start_time", &meta.start_time)?;
    set_str_attr(loc, "host", &meta.host)?;
    set_attr(loc, "complete", &false)?;
    set_str_attr(loc, "status", "running")?;
    Ok(())
}

/// What built and started this file: `git_commit`, `git_dirty`, `features`, `build_profile` (see
/// [`crate::build_info`]) and `argv`, the command line.
pub fn write_build_attrs(loc: &Location) -> Result<()> {
    use crate::build_info as b;
    set_str_attr(loc, "git_commit", b::GIT_COMMIT)?;
    set_str_attr(loc, "git_dirty", b::GIT_DIRTY)?;
    set_str_attr(loc, "features", b::FEATURES)?;
    set_str_attr(loc, "build_profile", b::PROFILE)?;
    set_str_list_attr(loc, "argv", &b::argv())?;
    Ok(())
}

/// Mark the end of a run: `complete`, a human-readable `status` (`complete`, `interrupted by
/// SIGTERM`, `failed: ...`) and `end_time`.
pub fn finish(loc: &Location, complete: bool, status: &str) -> Result<()> {
    set_attr(loc, "complete", &complete)?;
    set_str_attr(loc, "status", status)?;
    set_str_attr(loc, "end_time", &crate::timestamp::iso8601_utc(std::time::SystemTime::now()))?;
    Ok(())
}

/// The `/timeseries` group: one 1-D dataset per column of [`TIMESERIES_COLUMNS`], all of the same
/// length. A run's are extendable (chunked), appended a batch of rows at a time while it runs; a
/// sweep point's are written whole when the point ends ([`Timeseries::create_once`]), with the
/// layout of any other column (see [`column()`]).
pub struct Timeseries {
    group: Group,
    /// Empty until the one write of a time series made by [`Timeseries::create_once`].
    cols: Vec<Dataset>,
    once: bool,
    rows: usize,
    in_flight: i64,
    servers: f64,
    sample_cycles: u64,
}

fn extendable<T: H5Type>(g: &Group, name: &str) -> Result<Dataset> {
    Ok(g.new_dataset::<T>().chunk(TIMESERIES_CHUNK).shuffle().deflate(DEFLATE_LEVEL).shape(0..).create(name)?)
}

/// Attach the columns after the first to the first, `cycle`, and make it their dimension scale.
fn attach_cycle(cols: &[Dataset]) -> Result<()> {
    super::dims::attach_all(&cols[0], "cycle", &cols[1..].iter().collect::<Vec<_>>()).context("timeseries")
}

fn append_col<T: H5Type>(ds: &Dataset, at: usize, data: &[T]) -> Result<()> {
    ds.resize(at + data.len())?;
    ds.write_slice(data, at..at + data.len())?;
    Ok(())
}

impl Timeseries {
    /// Create an empty `timeseries` group in `parent`, with extendable columns.
    pub fn create(parent: &Group, cfg: &Config) -> Result<Self> {
        let mut ts = Self::group(parent, cfg, "appended during the run")?;
        let g = &ts.group;
        let mut cols = Vec::new();
        for &(name, units, desc) in TIMESERIES_COLUMNS {
            let ds = match name {
                "in_flight" => extendable::<i64>(g, name)?,
                "injected_load" | "accepted_load" | "mean_latency" => extendable::<f64>(g, name)?,
                _ => extendable::<u64>(g, name)?,
            };
            set_str_attr(&ds, "units", units)?;
            set_str_attr(&ds, "description", desc)?;
            cols.push(ds);
        }
        attach_cycle(&cols)?;
        ts.cols = cols;
        Ok(ts)
    }

    /// Create an empty `timeseries` group in `parent` whose columns are written whole, once, by
    /// [`Timeseries::append_rest`] (or a single [`Timeseries::append`]): a sweep point's, whose
    /// rows are all known when it is written. Unchunked columns of a few rows spare the chunk
    /// index and filter of each, most of the cost of writing a short point's time series.
    pub fn create_once(parent: &Group, cfg: &Config) -> Result<Self> {
        let mut ts = Self::group(parent, cfg, "written when the run ended")?;
        ts.once = true;
        Ok(ts)
    }

    fn group(parent: &Group, cfg: &Config, when: &str) -> Result<Self> {
        let g = new_group_for(parent, "timeseries", TIMESERIES_COLUMNS.len() as u32, 2)?;
        set_attr(&g, "sample_cycles", &cfg.output.sample_cycles)?;
        set_str_attr(
            &g,
            "description",
            &format!(
                "one row per sample interval, {when}; a run that ends between samples has a last row that covers \
                 [previous cycle, cycle) only, normalised by that length"
            ),
        )?;
        let servers = super::network_facts(cfg).servers;
        Ok(Timeseries {
            group: g,
            cols: Vec::new(),
            once: false,
            rows: 0,
            in_flight: 0,
            servers: servers as f64,
            sample_cycles: cfg.output.sample_cycles,
        })
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Append merged samples (consecutive intervals, starting with interval `rows()`).
    pub fn append(&mut self, samples: &[Sample]) -> Result<()> {
        if samples.is_empty() && !(self.once && self.cols.is_empty()) {
            return Ok(());
        }
        let n = samples.len();
        let mut u: [Vec<u64>; 5] = Default::default();
        let mut inflight = Vec::with_capacity(n);
        let mut lost = Vec::with_capacity(n);
        let mut f: [Vec<f64>; 3] = Default::default();
        let sc = self.sample_cycles;
        for (i, s) in samples.iter().enumerate() {
            // A last row cut short by the end of the run covers `[k sc, cycle)` only: normalise by
            // that length, not by a full interval.
            let start = (self.rows + i) as u64 * sc;
            let len = s.cycle.saturating_sub(start).clamp(1, sc);
            let per = len as f64 * self.servers;
            self.in_flight += s.injected_packets as i64 - s.delivered_packets as i64 - s.lost_packets as i64;
            u[0].push(s.cycle);
            u[1].push(s.injected_phits);
            u[2].push(s.accepted_phits);
            u[3].push(s.delivered_packets);
            u[4].push(s.latency_sum);
            inflight.push(self.in_flight);
            lost.push(s.lost_packets);
            f[0].push(s.injected_phits as f64 / per);
            f[1].push(s.accepted_phits as f64 / per);
            f[2].push(if s.delivered_packets == 0 {
                f64::NAN
            } else {
                s.latency_sum as f64 / s.delivered_packets as f64
            });
        }
        if self.once {
            if !self.cols.is_empty() {
                bail!("the time series of {} is written once, and it was", self.group.name());
            }
            let g = &self.group;
            let c = |i: usize| TIMESERIES_COLUMNS[i];
            for (i, col) in u.iter().enumerate() {
                self.cols.push(column(g, c(i).0, col, c(i).1, c(i).2)?);
            }
            self.cols.push(column(g, c(5).0, &inflight, c(5).1, c(5).2)?);
            for (i, col) in f.iter().enumerate() {
                self.cols.push(column(g, c(6 + i).0, col, c(6 + i).1, c(6 + i).2)?);
            }
            self.cols.push(column(g, c(9).0, &lost, c(9).1, c(9).2)?);
            attach_cycle(&self.cols)?;
        } else {
            let at = self.rows;
            for (i, col) in u.iter().enumerate() {
                append_col(&self.cols[i], at, col)?;
            }
            append_col(&self.cols[5], at, &inflight)?;
            for (i, col) in f.iter().enumerate() {
                append_col(&self.cols[6 + i], at, col)?;
            }
            append_col(&self.cols[9], at, &lost)?;
        }
        self.rows += n;
        Ok(())
    }

    /// Append the intervals of a finished run's merged samples that were not streamed: those that
    /// start before the last simulated cycle, plus, for a drained fixed workload, any later ones.
    pub fn append_rest(&mut self, samples: &[Sample], cycles: u64, drained: bool) -> Result<()> {
        let sc = self.sample_cycles;
        let mut want = cycles.div_ceil(sc) as usize;
        if drained {
            want = want.max(samples.len());
        }
        if want <= self.rows {
            // A time series written once still gets its (empty) columns.
            return self.append(&[]);
        }
        let rest: Vec<Sample> = (self.rows..want)
            .map(|k| {
                let mut s = samples.get(k).copied().unwrap_or_default();
                let start = k as u64 * sc;
                // The interval the run ended in is labelled with the run's last cycle.
                s.cycle = if start < cycles { (start + sc).min(cycles) } else { start + sc };
                s
            })
            .collect();
        self.append(&rest)
    }
}

/// A 2-D dataset `[rows x cols]` (row-major `data`) with `units` and `description`: compact when
/// small, else chunked by whole rows and deflated (integers byte-shuffled first, as [`column()`]).
fn table2<T: H5Type>(
    g: &Group,
    name: &str,
    (rows, cols): (usize, usize),
    data: &[T],
    units: &str,
    description: &str,
) -> Result<Dataset> {
    let b = g.new_dataset::<T>().shape([rows, cols]);
    let b = if rows * cols == 0 {
        b
    } else if std::mem::size_of_val(data) < FILTER_MIN_BYTES {
        b.layout(Layout::Compact)
    } else {
        let chunk = [chunk_rows::<T>(rows * cols).div_ceil(cols).clamp(1, rows), cols];
        if shuffles::<T>() {
            b.chunk(chunk).shuffle().deflate(DEFLATE_LEVEL)
        } else {
            b.chunk(chunk).deflate(DEFLATE_LEVEL)
        }
    };
    let ds = b.create(name).with_context(|| format!("creating dataset {name}"))?;
    if rows * cols > 0 {
        ds.write_raw(data).with_context(|| format!("writing dataset {name}"))?;
    }
    new_str_attr(&ds, "units", units)?;
    new_str_attr(&ds, "description", description)?;
    Ok(ds)
}

impl Timeseries {
    /// Add the per-port-class series of `output.link_series` ([`LinkSeries`], classes named
    /// `names`) to the finished time series, one row per row written: `link_class` (the
    /// dimension of the classes) and `link_class_name`; per interval and class `link_phits`,
    /// `link_load`, `link_occupancy`, `link_ports`; per interval `ejected_packets`,
    /// `minimal_packets`, `minimal_share`. Nothing for a series that is off.
    pub fn write_link_series(&mut self, series: &LinkSeries, names: &[String]) -> Result<()> {
        let c = series.classes;
        if c == 0 {
            return Ok(());
        }
        let n = self.rows;
        let g = self.group.clone();
        let ends: Vec<u64> = if n == 0 { Vec::new() } else { self.cols[0].read_raw::<u64>()? };
        let sc = self.sample_cycles;
        let mut phits = Vec::with_capacity(n * c);
        let mut load = Vec::with_capacity(n * c);
        let mut occupancy = Vec::with_capacity(n * c);
        let mut ports = Vec::with_capacity(n * c);
        let (mut minimal, mut ejected, mut share) = (Vec::new(), Vec::new(), Vec::new());
        for (k, &end) in ends.iter().enumerate() {
            let len = end.saturating_sub(k as u64 * sc).clamp(1, sc) as f64;
            for class in 0..c {
                let (p, b, q) = (series.phits(k, class), series.buffered(k, class), series.ports(k, class));
                phits.push(p);
                ports.push(q);
                load.push(if q == 0 { f64::NAN } else { p as f64 / (len * q as f64) });
                occupancy.push(if q == 0 { f64::NAN } else { b as f64 / q as f64 });
            }
            let (m, e) = (series.minimal(k), series.ejected(k));
            minimal.push(m);
            ejected.push(e);
            share.push(if e == 0 { f64::NAN } else { m as f64 / e as f64 });
        }
        let ids: Vec<u32> = (0..c as u32).collect();
        let class = column(&g, "link_class", &ids, "", "class of switch-to-switch port (the dimension of link_*)")?;
        let names: Vec<String> = (0..c).map(|i| names.get(i).cloned().unwrap_or_else(|| format!("class{i}"))).collect();
        let class_name = str_column(
            &g,
            "link_class_name",
            &names,
            "name of each class: dim0, dim1, ... (HyperX, torus, HyperZ sides), local/global (dragonfly), upN/downN \
             (tree links from level N to N + 1 and back)",
        )?;
        let per_class = [
            table2(&g, "link_phits", (n, c), &phits, "phits", "phits sent over the ports of the class in the interval (one per cycle: a packet's phits count in the intervals they leave in)")?,
            table2(&g, "link_load", (n, c), &load, "phits/cycle/port", "link_phits / (interval length * link_ports): the mean utilization of the class's links (NaN without a live port)")?,
            table2(&g, "link_occupancy", (n, c), &occupancy, "packets/port", "packets in the input and output buffers of the class's live ports at the end of the interval, per port (NaN without a live port)")?,
            table2(&g, "link_ports", (n, c), &ports, "ports", "live switch-to-switch ports of the class at the end of the interval (0 for a last interval cut short)")?,
        ];
        let per_row = [
            column(&g, "ejected_packets", &ejected, "packets", "packets whose head left their last switch for their server in the interval")?,
            column(&g, "minimal_packets", &minimal, "packets", "those of them whose switch-to-switch hops were at most the distance between their source and destination switches on the network in force then")?,
            column(&g, "minimal_share", &share, "1", "minimal_packets / ejected_packets (NaN when none)")?,
        ];
        super::dims::attach_all(&class, "link_class", &[&class_name])?;
        let earlier: Vec<&Dataset> = self.cols[1..].iter().collect();
        let mut vars: Vec<&Dataset> = per_class.iter().collect();
        super::dims::attach_axes_more(
            &vars,
            &[(&self.cols[0], "cycle", &earlier), (&class, "link_class", &[&class_name])],
        )?;
        let mut earlier = earlier;
        earlier.append(&mut vars);
        let rows: Vec<&Dataset> = per_row.iter().collect();
        super::dims::attach_axes_more(&rows, &[(&self.cols[0], "cycle", &earlier)])?;
        Ok(())
    }
}

/// Merges the per-partition contributions to each interval; an interval is ready once every
/// partition has sent it.
#[derive(Debug)]
pub struct SampleMerger {
    parts: u32,
    sample_cycles: u64,
    next: u64,
    pending: VecDeque<(Sample, u32)>,
}

impl SampleMerger {
    /// A merger for `parts` partitions.
    pub fn new(parts: u32, sample_cycles: u64) -> Self {
        SampleMerger { parts, sample_cycles, next: 0, pending: VecDeque::new() }
    }

    /// Add one partition's contribution (its `cycle` identifies the interval).
    pub fn add(&mut self, s: Sample) {
        let k = (s.cycle / self.sample_cycles).saturating_sub(1);
        if k < self.next {
            return;
        }
        let i = (k - self.next) as usize;
        while self.pending.len() <= i {
            self.pending.push_back((Sample::default(), 0));
        }
        let (m, n) = &mut self.pending[i];
        m.cycle = s.cycle;
        m.add(&s);
        *n += 1;
    }

    /// The next interval, if all partitions have sent it.
    pub fn pop_ready(&mut self) -> Option<Sample> {
        match self.pending.front() {
            Some(&(_, n)) if n == self.parts => {
                self.next += 1;
                self.pending.pop_front().map(|(s, _)| s)
            }
            _ => None,
        }
    }
}

/// Receive the partitions' intervals until every sender has hung up (the run ended), appending the
/// merged rows to `ts` and flushing the file at most every `every` (and at the end), so that the
/// file on disk never lags the simulation by much more than that.
pub fn stream_timeseries(
    rx: Receiver<(u32, Sample)>,
    parts: u32,
    ts: &mut Timeseries,
    file: &File,
    every: Duration,
) -> Result<()> {
    let mut merger = SampleMerger::new(parts, ts.sample_cycles);
    let mut batch: Vec<Sample> = Vec::new();
    let mut last = Instant::now();
    loop {
        let wait = every.saturating_sub(last.elapsed());
        let open = match rx.recv_timeout(wait) {
            Ok((_, s)) => {
                merger.add(s);
                while let Ok((_, s)) = rx.try_recv() {
                    merger.add(s);
                }
                true
            }
            Err(RecvTimeoutError::Timeout) => true,
            Err(RecvTimeoutError::Disconnected) => false,
        };
        while let Some(s) = merger.pop_ready() {
            batch.push(s);
        }
        if !open || last.elapsed() >= every {
            if !batch.is_empty() {
                ts.append(&batch)?;
                batch.clear();
                file.flush()?;
            }
            last = Instant::now();
        }
        if !open {
            return Ok(());
        }
    }
}

/// The summary as ordered `(key, value)` pairs, exactly as `--json` prints it.
pub fn summary_pairs(s: &Summary) -> Vec<(String, serde_json::Value)> {
    match serde_json::to_value(s) {
        Ok(serde_json::Value::Object(m)) => m.into_iter().collect(),
        _ => Vec::new(),
    }
}

fn units_of(key: &str) -> (&'static str, &'static str) {
    SUMMARY_UNITS.iter().find(|u| u.0 == key).map(|u| (u.1, u.2)).unwrap_or(("", ""))
}

/// Read `/summary` back as `(key, value)` pairs in file order (unsigned integers as `u64`, signed as
/// `i64`, the rest as `f64`).
pub fn read_summary_pairs(parent: &Group) -> Result<Vec<(String, serde_json::Value)>> {
    use ::hdf5::types::TypeDescriptor as T;
    let g = parent.group("summary")?;
    let mut out = Vec::new();
    for k in g.member_names()? {
        let ds = g.dataset(&k)?;
        let v = match ds.dtype()?.to_descriptor()? {
            T::Unsigned(_) => serde_json::Value::from(ds.read_scalar::<u64>()?),
            T::Integer(_) => serde_json::Value::from(ds.read_scalar::<i64>()?),
            _ => serde_json::Value::from(ds.read_scalar::<f64>()?),
        };
        out.push((k, v));
    }
    Ok(out)
}

/// Write `/summary`: one scalar dataset per key of the JSON summary (integers as `u64`, the rest as
/// `f64`), each with `units` and `description` attributes.
pub fn write_summary(parent: &Group, s: &Summary) -> Result<()> {
    write_summary_pairs(parent, summary_pairs(s))
}

/// [`write_summary`] from `(key, value)` pairs (numbers only; other values are left out).
pub fn write_summary_pairs(parent: &Group, pairs: Vec<(String, serde_json::Value)>) -> Result<()> {
    let g = new_group_for(parent, "summary", pairs.len() as u32, 1)?;
    set_str_attr(&g, "description", "the figures of `hxsim run --json`, one scalar dataset each")?;
    for (k, v) in pairs {
        let ds = if let Some(b) = v.as_bool() {
            scalar(&g, &k, &(b as u8))?
        } else if let Some(u) = v.as_u64() {
            scalar(&g, &k, &u)?
        } else if let Some(i) = v.as_i64() {
            scalar(&g, &k, &i)?
        } else if let Some(f) = v.as_f64().or(v.is_null().then_some(f64::NAN)) {
            // JSON has no NaN: serde_json writes "no data" (e.g. the latency of an empty window) as null.
            scalar(&g, &k, &f)?
        } else {
            continue;
        };
        let (units, desc) = units_of(&k);
        new_str_attr(&ds, "units", units)?;
        new_str_attr(&ds, "description", desc)?;
    }
    Ok(())
}

/// A compact scalar dataset (see [`create`]).
fn scalar<T: H5Type>(g: &Group, name: &str, value: &T) -> Result<Dataset> {
    match create(g, name, None, std::slice::from_ref(value), Storage::Compact)? {
        Some(ds) => Ok(ds),
        None => {
            let ds = g.new_dataset::<T>().layout(Layout::Compact).create(name)?;
            ds.write_scalar(value)?;
            Ok(ds)
        }
    }
}

/// Write everything a finished (or interrupted) run produced besides the time series:
/// `/summary`, `/servers`, `/latency`, `/links`, `/vcs`; then complete the time series.
pub fn write_results(parent: &Group, res: &RunResult, ts: &mut Timeseries) -> Result<()> {
    // Cycles over which the window counters (servers, links) were gathered: the same derivation as
    // the summary's accepted load.
    let measured = res.schedule.measured_cycles(res.summary.cycles);
    write_summary(parent, &res.summary)?;

    let g = new_group_for(parent, "servers", 4, 3)?;
    set_attr(&g, "measured_cycles", &measured)?;
    let topo = res.net.topology();
    // Servers are numbered switch by switch; with the same number on every switch (HyperX's T), the
    // index is `switch * servers_per_switch + local index`.
    set_attr(&g, "servers_per_switch", &(topo.uniform_servers().unwrap_or(0) as u64))?;
    set_str_attr(
        &g,
        "description",
        "per server (index = global server id; servers are numbered switch by switch, so on a HyperX it is \
         switch * servers_per_switch + local index; servers_per_switch = 0 when it differs between switches), \
         in the measured window",
    )?;
    let ids: Vec<u32> = (0..res.server_injected.len() as u32).collect();
    let server = column(&g, "server", &ids, "", "server index (the dimension of this group)")?;
    let mut vars = vec![
        column(&g, "injected_phits", &res.server_injected, "phits", "phits injected into the network")?,
        column(&g, "accepted_phits", &res.server_accepted, "phits", "phits of packets delivered to this server")?,
    ];
    if !res.server_losses.0.is_empty() {
        let (by_src, by_dst) = &res.server_losses;
        vars.push(column(
            &g,
            "lost_as_source",
            by_src,
            "packets",
            "failure events: packets from this server lost at an event or stranded after one, over the run (each \
             loss of a retransmitted packet counted)",
        )?);
        vars.push(column(
            &g,
            "lost_as_destination",
            by_dst,
            "packets",
            "failure events: packets to this server lost at an event or stranded after one, over the run",
        )?);
    }
    if res.net.failed_switches() > 0 {
        let live: Vec<u8> = (0..res.server_injected.len() as u32).map(|v| res.net.server_alive(v) as u8).collect();
        vars.push(column(
            &g,
            "live",
            &live,
            "1",
            "1 for a server of a live switch, 0 for one lost with a failed switch (it neither sends nor receives; \
             accepted load and Jain's index are over live servers)",
        )?);
    }
    super::dims::attach_all(&server, "server", &vars.iter().collect::<Vec<_>>())?;

    if !res.task_finish.is_empty() {
        write_tasks(parent, res)?;
    }
    if !res.summary.failure_events.is_empty() {
        write_events(parent, &res.summary.failure_events)?;
    }
    write_latency(parent, &res.stats.latency_hist)?;
    write_links(parent, res, measured)?;
    write_vcs(parent, &res.summary.vc_phits, measured)?;
    ts.append_rest(&res.stats.samples, res.summary.cycles, res.complete && res.schedule.fixed)?;
    ts.write_link_series(&res.stats.link_series, &topo.series_classes())?;
    Ok(())
}

/// Write `/events` (`[[faults.events]]` only): per failure event, what failed, what it lost and
/// how the network recovered (the summary's `failure_events`; missing values are -1 for
/// integers and NaN for reals).
fn write_events(parent: &Group, events: &[crate::metrics::FailureEvent]) -> Result<()> {
    let g = new_group_for(parent, "events", 11, 5)?;
    set_str_attr(&g, "description", "per failure event of [[faults.events]], in order of cycle")?;
    let ids: Vec<u32> = (0..events.len() as u32).collect();
    let event = column(&g, "event", &ids, "", "event index (the dimension of this group)")?;
    let u = |f: fn(&crate::metrics::FailureEvent) -> u64| events.iter().map(f).collect::<Vec<u64>>();
    let i = |f: fn(&crate::metrics::FailureEvent) -> Option<u64>| {
        events.iter().map(|e| f(e).map_or(-1, |v| v as i64)).collect::<Vec<i64>>()
    };
    let r = |f: fn(&crate::metrics::FailureEvent) -> Option<f64>| {
        events.iter().map(|e| f(e).unwrap_or(f64::NAN)).collect::<Vec<f64>>()
    };
    let vars = [
        column(&g, "cycle", &u(|e| e.cycle), "cycles", "cycle of the event")?,
        column(&g, "links", &u(|e| e.links), "links", "links it failed (with those of its failed switches)")?,
        column(&g, "switches", &u(|e| e.switches), "switches", "switches it failed")?,
        column(&g, "repaired_links", &u(|e| e.repaired_links), "links", "links it repaired")?,
        column(&g, "repaired_switches", &u(|e| e.repaired_switches), "switches", "switches it repaired")?,
        column(&g, "packets_lost", &u(|e| e.packets_lost), "packets", "packets lost at the event")?,
        column(
            &g,
            "rebuilt_at",
            &i(|e| e.rebuilt_at),
            "cycles",
            "cycle the rebuilt routing came into force (-1: never)",
        )?,
        column(
            &g,
            "rebuild_seconds",
            &r(|e| e.rebuild_seconds),
            "s",
            "rank 0's wall time to rebuild (NaN: not rebuilt)",
        )?,
        column(
            &g,
            "accepted_before",
            &r(|e| e.accepted_before),
            "phits/cycle/server",
            "mean accepted load over the sample intervals before the event",
        )?,
        column(
            &g,
            "recovery_cycles",
            &i(|e| e.recovery_cycles),
            "cycles",
            "cycles until the accepted load is back within 2% of accepted_before (-1: not in the run)",
        )?,
    ];
    super::dims::attach_all(&event, "event", &vars.iter().collect::<Vec<_>>())?;
    Ok(())
}

/// Write `/tasks` (workloads only): per task, its server, whether it finished and when.
fn write_tasks(parent: &Group, res: &RunResult) -> Result<()> {
    let g = new_group_for(parent, "tasks", 4, 3)?;
    set_str_attr(
        &g,
        "description",
        "per task of the workload (index = task id, an MPI rank of the application): the server it ran on, \
         whether it finished, and the cycle it finished at (its last operation's completion; 0 if it did not finish)",
    )?;
    let ids: Vec<u32> = (0..res.task_finish.len() as u32).collect();
    let task = column(&g, "task", &ids, "", "task index (the dimension of this group)")?;
    let done: Vec<u8> = res.task_finish.iter().map(|&c| (c != u64::MAX) as u8).collect();
    let finish: Vec<u64> = res.task_finish.iter().map(|&c| if c == u64::MAX { 0 } else { c }).collect();
    let vars = [
        column(&g, "server", &res.task_server, "", "global id of the server the task ran on")?,
        column(&g, "finished", &done, "1", "1 if the task finished, 0 if the run ended first")?,
        column(&g, "finish_cycles", &finish, "cycles", "cycle the task's last operation completed")?,
    ];
    super::dims::attach_all(&task, "task", &vars.iter().collect::<Vec<_>>())?;
    Ok(())
}

/// Write `/latency`: the histogram of latencies as its non-empty 1-cycle bins only (exact: every
/// latency observed, with its packet count), so that a run whose latencies spread over thousands of
/// cycles stores only the values that occurred.
pub fn write_latency(parent: &Group, hist: &[u64]) -> Result<()> {
    let g = new_group_for(parent, "latency", 2, 4)?;
    let (mut lat, mut packets) = (Vec::new(), Vec::new());
    for (l, &c) in hist.iter().enumerate().filter(|(_, &c)| c > 0) {
        lat.push(l as u64);
        packets.push(c);
    }
    let total: u64 = packets.iter().sum();
    let sum: u64 = lat.iter().zip(&packets).map(|(l, c)| l * c).sum();
    set_str_attr(
        &g,
        "description",
        "latency (creation to tail arrival) of the packets delivered in the measured window, as a sparse \
         1-cycle histogram: packets[i] packets had latency exactly latency[i] cycles; latencies with no packet \
         are left out",
    )?;
    set_attr(&g, "total_packets", &total)?;
    set_attr(&g, "latency_sum", &sum)?;
    set_attr(&g, "overflow_cycles", &(crate::metrics::LATENCY_HIST_MAX as u64 - 1))?;
    let l = column(&g, "latency", &lat, "cycles", "a latency that occurred (the dimension of this group)")?;
    let p = column(
        &g,
        "packets",
        &packets,
        "packets",
        "packets with that latency (the latency overflow_cycles counts all longer ones too)",
    )?;
    super::dims::attach_all(&l, "latency", &[&p])?;
    Ok(())
}

/// Write `/links`: one row per live switch-to-switch link direction. Every point of a sweep has
/// all its columns, even those only the network decides (switch, port, neighbour, dimension): a
/// dataset hard-linked from another point's group would name that group's `link` scale, which
/// netCDF-4 readers refuse (see [`super::dims`]); deflated, the copies cost little.
fn write_links(parent: &Group, res: &RunResult, measured: u64) -> Result<()> {
    let net = &res.net;
    let r = net.max_switch_ports();
    let hx = match net.topology().view() {
        crate::topology::View::HyperX(h) => Some(h),
        _ => None,
    };
    // Every port's row, at most: the vectors never grow by copying.
    let n = net.num_switches() * r;
    let (mut sw, mut port, mut nsw, mut nport) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut dim, mut phits, mut util) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    for s in 0..net.num_switches() {
        for p in 0..net.switch_ports(s as u32) {
            if let Some((o, q)) = net.neighbour(s as u32, p as u16) {
                let ph = res.link_phits[s * r + p];
                sw.push(s as u32);
                port.push(p as u32);
                nsw.push(o);
                nport.push(q as u32);
                dim.push(hx.map_or(-1, |h| h.port_dim(p as u16) as i32));
                phits.push(ph);
                util.push(if measured == 0 { f64::NAN } else { ph as f64 / measured as f64 });
            }
        }
    }
    let g = new_group_for(parent, "links", 8, 2)?;
    set_attr(&g, "measured_cycles", &measured)?;
    set_str_attr(
        &g,
        "description",
        "one row per live switch-to-switch link direction (output port): phits carried in the measured window",
    )?;
    let ids: Vec<u32> = (0..sw.len() as u32).collect();
    let link = column(&g, "link", &ids, "", "row index (the dimension of this group)")?;
    let cols = [
        column(&g, "switch", &sw, "", "switch the link leaves")?,
        column(&g, "port", &port, "", "its switch-to-switch port (router port = the switch's servers + port)")?,
        column(&g, "neighbour_switch", &nsw, "", "switch at the far end")?,
        column(&g, "neighbour_port", &nport, "", "port of the far end")?,
        column(&g, "dimension", &dim, "", "HyperX dimension of the link (-1 if the topology has none)")?,
        column(&g, "phits", &phits, "phits", "phits sent over the link in the measured window")?,
        column(&g, "utilization", &util, "phits/cycle", "phits / measured_cycles (1 = busy every cycle)")?,
    ];
    super::dims::attach_all(&link, "link", &cols.iter().collect::<Vec<_>>())?;
    Ok(())
}

/// Write `/vcs`: phits carried on switch-to-switch links per VC in the measured window (DAVC paper
/// section 8's VC utilization), with the VC index as the dimension scale.
pub fn write_vcs(parent: &Group, vc_phits: &[u64], measured: u64) -> Result<()> {
    let g = new_group_for(parent, "vcs", 3, 2)?;
    set_attr(&g, "measured_cycles", &measured)?;
    set_str_attr(
        &g,
        "description",
        "one row per VC of the routing (index = VC): phits carried on switch-to-switch links in the measured window",
    )?;
    let total: u64 = vc_phits.iter().sum();
    let ids: Vec<u32> = (0..vc_phits.len() as u32).collect();
    let share: Vec<f64> =
        vc_phits.iter().map(|&p| if total == 0 { f64::NAN } else { p as f64 / total as f64 }).collect();
    let vc = column(&g, "vc", &ids, "", "virtual channel (the dimension of this group)")?;
    let cols = [
        column(
            &g,
            "phits",
            vc_phits,
            "phits",
            "phits sent on this VC over switch-to-switch links in the measured window",
        )?,
        column(&g, "share", &share, "1", "phits / phits of all VCs (NaN when no phit was sent)")?,
    ];
    super::dims::attach_all(&vc, "vc", &cols.iter().collect::<Vec<_>>())?;
    Ok(())
}
