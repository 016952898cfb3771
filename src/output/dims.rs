//! HDF5 dimension scales (the netCDF-4 data model), so that `xarray.open_dataset(path, group=...,
//! engine="h5netcdf")` names every dimension (`cycle`, `server`, `link`, `latency`, `point`, the swept
//! keys) instead of inventing `phony_dim_N`.
//!
//! A dimension is a 1-D dataset marked as a scale (its values are the coordinates); each variable
//! along it has the scale attached to its axis. `hdf5-metno` does not wrap this API, so it is called
//! from HDF5's high-level library `hdf5_hl` (linked by `build.rs`).

use ::hdf5::Dataset;
use anyhow::{bail, Result};
use std::ffi::{c_char, c_int, c_uint, CString};

type Hid = i64;

extern "C" {
    fn H5DSset_scale(dsid: Hid, dimname: *const c_char) -> c_int;
    fn H5DSattach_scale(did: Hid, dsid: Hid, idx: c_uint) -> c_int;
}

/// Mark `ds` as the dimension scale named `name`. Attach variables to it first (HDF5 allows either
/// order; h5netcdf needs the scale's name to equal the dataset's).
pub fn make_scale(ds: &Dataset, name: &str) -> Result<()> {
    let n = CString::new(name)?;
    // SAFETY: `ds.id()` is a live dataset handle; `n` outlives the call. hdf5-metno's lock
    // serialises this with its own calls into the (not thread-safe) library.
    let rc = ::hdf5::sync::sync(|| unsafe { H5DSset_scale(ds.id(), n.as_ptr()) });
    if rc < 0 {
        bail!("making {} a dimension scale", ds.name());
    }
    Ok(())
}

/// Attach the scale `scale` to axis `axis` of `ds`.
pub fn attach(ds: &Dataset, scale: &Dataset, axis: usize) -> Result<()> {
    // SAFETY: both handles are live datasets; see `make_scale` for the lock.
    let rc = ::hdf5::sync::sync(|| unsafe { H5DSattach_scale(ds.id(), scale.id(), axis as c_uint) });
    if rc < 0 {
        bail!("attaching the dimension scale {} to {}", scale.name(), ds.name());
    }
    Ok(())
}

/// Attach `scale` to axis 0 of every dataset of `vars`, then mark it as the scale `name`.
pub fn attach_all(scale: &Dataset, name: &str, vars: &[&Dataset]) -> Result<()> {
    for v in vars {
        attach(v, scale, 0)?;
    }
    make_scale(scale, name)
}

extern "C" {
    fn H5Pset_copy_object(plist: Hid, flags: c_uint) -> c_int;
    fn H5Ocopy(
        src_loc: Hid,
        src_name: *const c_char,
        dst_loc: Hid,
        dst_name: *const c_char,
        ocpypl: Hid,
        lcpl: Hid,
    ) -> c_int;
}

/// Copy the object `src_name` of `src` (a group with everything below it, or a dataset) to
/// `dst_name` in `dst`, possibly in another file. Object references (the links between dimension
/// scales and their variables) are expanded: one to an object inside the copied group points to
/// its copy.
pub fn copy_object(src: &::hdf5::Location, src_name: &str, dst: &::hdf5::Location, dst_name: &str) -> Result<()> {
    /// `H5O_COPY_EXPAND_REFERENCE_FLAG`.
    const EXPAND_REFERENCES: c_uint = 0x0008;
    let (s, d) = (CString::new(src_name)?, CString::new(dst_name)?);
    let plist = ::hdf5::plist::ObjectCopy::try_new()?;
    // SAFETY: live handles (locations, property list), C strings that outlive the call; 0 is H5P_DEFAULT.
    let rc = ::hdf5::sync::sync(|| unsafe {
        if H5Pset_copy_object(plist.id(), EXPAND_REFERENCES) < 0 {
            return -1;
        }
        H5Ocopy(src.id(), s.as_ptr(), dst.id(), d.as_ptr(), plist.id(), 0)
    });
    if rc < 0 {
        bail!("copying {src_name} into {}", dst.name());
    }
    Ok(())
}
