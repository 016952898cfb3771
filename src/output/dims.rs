//! HDF5 dimension scales (the netCDF-4 data model), so that `xarray.open_dataset(path, group=...,
//! engine="h5netcdf")` names every dimension (`cycle`, `server`, `link`, `latency`, `point`, the swept
//! keys) instead of inventing `phony_dim_N`.
//!
//! A dimension is a 1-D dataset marked as a scale (its values are the coordinates); each variable
//! along it has the scale attached to its axis. `hdf5-metno` does not wrap this API; the attributes
//! that make it are written here straight through the library (see [`attach_axes`]).
//!
//! netCDF-4 (`netCDF4.Dataset`, `ncdump`, xarray's default engine) also requires that the scale a
//! variable's axis names be in the variable's own group or one above it: so every group of a
//! results file has its own scales, and no dataset is shared (hard-linked) between groups.

use super::ffi::{self, sys, DsListEntry, Hid, HvlT, ObjRef};
use ::hdf5::Dataset;
use anyhow::{bail, Result};
use std::ffi::{c_int, c_void, CString};

/// Attach `scale` to axis 0 of every dataset of `vars` (1-D), and mark it as the scale `name`.
pub fn attach_all(scale: &Dataset, name: &str, vars: &[&Dataset]) -> Result<()> {
    attach_axes(vars, &[(scale, name)])
}

/// Attach the scale `scales[j]` to axis `j` of every dataset of `vars` (each of as many axes as
/// there are scales, and none attached yet), and mark each scale as the dimension named beside it.
///
/// Writes what the high-level library's `H5DSattach_scale` and `H5DSset_scale` write, attribute
/// for attribute and type for type (HDF5 1.10's dimension-scale specification, which h5py, netCDF
/// and h5netcdf read): on each dataset `DIMENSION_LIST` (per axis, a variable-length list of
/// references to its scales), on each scale `REFERENCE_LIST` (the datasets and axes it is attached
/// to, in the order given; none if there are none), `CLASS = "DIMENSION_SCALE"` and `NAME` (both
/// fixed-length ASCII strings). Each attribute is written once: `H5DSattach_scale` checks both
/// datasets, then reads, deletes and writes again the scale's whole `REFERENCE_LIST` for every
/// dataset attached, which was a tenth of the CPU time of writing a sweep point.
pub fn attach_axes(vars: &[&Dataset], scales: &[(&Dataset, &str)]) -> Result<()> {
    if scales.is_empty() {
        // Scalars (a grid whose every swept key has one value): no dimension to name.
        return Ok(());
    }
    let ids = ffi::ids()?;
    let scale_refs = scales.iter().map(|(s, _)| reference(s)).collect::<Result<Vec<_>>>()?;
    let var_refs = vars.iter().map(|v| reference(v)).collect::<Result<Vec<_>>>()?;
    set_dimension_lists(vars, &scale_refs, ids)?;
    for (j, (scale, name)) in scales.iter().enumerate() {
        let entries: Vec<DsListEntry> =
            var_refs.iter().map(|&r| DsListEntry { dataset: r, dimension: j as c_int }).collect();
        let n = CString::new(*name)?;
        // SAFETY: `entries` holds one entry per element of the attribute's dataspace, in the
        // memory layout of its type; the strings outlive the calls.
        let rc = unsafe {
            let r = if entries.is_empty() {
                0
            } else {
                write_list(scale.id(), c"REFERENCE_LIST", ids.reflist_ty, entries.len(), entries.as_ptr().cast())
            };
            r.min(write_fixed_str(scale.id(), c"CLASS", c"DIMENSION_SCALE")).min(write_fixed_str(
                scale.id(),
                c"NAME",
                &n,
            ))
        };
        if rc < 0 {
            bail!("making {} the dimension scale {name}", scale.name());
        }
    }
    Ok(())
}

/// [`attach_axes`] for scales that may already be attached to other datasets: `scales[j]` is
/// `(scale, name, earlier)`, where `earlier` are the datasets already attached to it, each on axis
/// `j` as the new ones. A scale with earlier datasets keeps its class and name, and gets its
/// `REFERENCE_LIST` written again, listing the earlier datasets and then `vars`; the others are
/// made scales as by [`attach_axes`]. For the time series' per-class columns, written when a run
/// ends beside the columns its `cycle` scale got at the start.
pub fn attach_axes_more(vars: &[&Dataset], scales: &[(&Dataset, &str, &[&Dataset])]) -> Result<()> {
    let fresh: Vec<(&Dataset, &str)> = scales.iter().filter(|s| s.2.is_empty()).map(|s| (s.0, s.1)).collect();
    if fresh.len() == scales.len() {
        return attach_axes(vars, &fresh);
    }
    let ids = ffi::ids()?;
    let scale_refs = scales.iter().map(|s| reference(s.0)).collect::<Result<Vec<_>>>()?;
    set_dimension_lists(vars, &scale_refs, ids)?;
    for (j, (scale, name, earlier)) in scales.iter().enumerate() {
        let entries: Vec<DsListEntry> = earlier
            .iter()
            .chain(vars)
            .map(|v| Ok(DsListEntry { dataset: reference(v)?, dimension: j as c_int }))
            .collect::<Result<_>>()?;
        let n = CString::new(*name)?;
        // SAFETY: live ids; `entries` holds one entry per element of the attribute's dataspace,
        // in the memory layout of its type; the strings outlive the calls.
        let rc = unsafe {
            if earlier.is_empty() {
                write_list(scale.id(), c"REFERENCE_LIST", ids.reflist_ty, entries.len(), entries.as_ptr().cast())
                    .min(write_fixed_str(scale.id(), c"CLASS", c"DIMENSION_SCALE"))
                    .min(write_fixed_str(scale.id(), c"NAME", &n))
            } else {
                let gone = ::hdf5::sync::sync(|| sys::h5a::H5Adelete(scale.id(), c"REFERENCE_LIST".as_ptr()));
                gone.min(write_list(
                    scale.id(),
                    c"REFERENCE_LIST",
                    ids.reflist_ty,
                    entries.len(),
                    entries.as_ptr().cast(),
                ))
            }
        };
        if rc < 0 {
            bail!("attaching {} more datasets to the dimension scale {name}", vars.len());
        }
    }
    Ok(())
}

/// An object reference to `ds` (what `DIMENSION_LIST` and `REFERENCE_LIST` hold).
/// Write each of `vars`' `DIMENSION_LIST`: axis `j` refers to the scale `scale_refs[j]`.
fn set_dimension_lists(vars: &[&Dataset], scale_refs: &[ObjRef], ids: &ffi::Ids) -> Result<()> {
    // One reference per axis, each its own list of one.
    let dim_list: Vec<HvlT> =
        scale_refs.iter().map(|r| HvlT { len: 1, p: (r as *const ObjRef).cast_mut().cast::<c_void>() }).collect();
    for v in vars {
        debug_assert_eq!(v.ndim(), scale_refs.len(), "{}: one scale per axis", v.name());
        // SAFETY: `dim_list` holds one `hvl_t` per element of the attribute's dataspace, each
        // pointing to a reference that outlives the call.
        let rc =
            unsafe { write_list(v.id(), c"DIMENSION_LIST", ids.dimlist_ty, dim_list.len(), dim_list.as_ptr().cast()) };
        if rc < 0 {
            bail!("attaching dimension scales to {}", v.name());
        }
    }
    Ok(())
}

fn reference(ds: &Dataset) -> Result<ObjRef> {
    use ::hdf5::ObjectReference;
    ObjRef::create(ds, ".").map_err(|e| anyhow::anyhow!("making a reference to {}: {e}", ds.name()))
}

/// Create the 1-D attribute `name` of `len` elements of type `ty` on `obj` (default creation list:
/// ASCII name, as the high-level library's) and write it from `buf`. Negative on failure.
///
/// # Safety
///
/// `obj` is a live object, `buf` holds `len` elements of the memory type `ty`.
unsafe fn write_list(obj: Hid, name: &std::ffi::CStr, ty: Hid, len: usize, buf: *const c_void) -> c_int {
    let dims = [len as u64];
    ::hdf5::sync::sync(|| unsafe {
        let space = sys::h5s::H5Screate_simple(1, dims.as_ptr(), std::ptr::null());
        if space < 0 {
            return -1;
        }
        let rc = ffi::write_attribute(obj, name.as_ptr(), ty, space, ffi::H5P_DEFAULT, buf, false);
        sys::h5s::H5Sclose(space);
        rc
    })
}

/// Create the scalar string attribute `name` on `obj` holding `value`, as the high-level library's
/// `H5LT_set_attribute_string` does: a fixed-length ASCII string of the value's length plus its
/// terminating null. Negative on failure.
///
/// # Safety
///
/// `obj` is a live object.
unsafe fn write_fixed_str(obj: Hid, name: &std::ffi::CStr, value: &std::ffi::CStr) -> c_int {
    ::hdf5::sync::sync(|| unsafe {
        let ids = match ffi::ids() {
            Ok(ids) => ids,
            Err(_) => return -1,
        };
        let ty = ffi::fixed_str_type(value.count_bytes() + 1);
        if ty < 0 {
            return -1;
        }
        let rc =
            ffi::write_attribute(obj, name.as_ptr(), ty, ids.scalar, ffi::H5P_DEFAULT, value.as_ptr().cast(), false);
        sys::h5t::H5Tclose(ty);
        rc
    })
}

/// Copy the object `src_name` of `src` (a group with everything below it, or a dataset) to
/// `dst_name` in `dst`, possibly in another file. Object references (the links between dimension
/// scales and their variables) are expanded: one to an object inside the copied group points to
/// its copy.
pub fn copy_object(src: &::hdf5::Location, src_name: &str, dst: &::hdf5::Location, dst_name: &str) -> Result<()> {
    let (s, d) = (CString::new(src_name)?, CString::new(dst_name)?);
    let plist = ::hdf5::plist::ObjectCopy::try_new()?;
    // SAFETY: live handles (locations, property list), C strings that outlive the call; 0 is H5P_DEFAULT.
    let rc = ::hdf5::sync::sync(|| unsafe {
        if sys::h5p::H5Pset_copy_object(plist.id(), sys::h5o::H5O_COPY_EXPAND_REFERENCE_FLAG) < 0 {
            return -1;
        }
        sys::h5o::H5Ocopy(src.id(), s.as_ptr(), dst.id(), d.as_ptr(), plist.id(), ffi::H5P_DEFAULT)
    });
    if rc < 0 {
        bail!("copying {src_name} into {}", dst.name());
    }
    Ok(())
}
