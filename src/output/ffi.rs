//! The HDF5 datatypes and property lists that the results files' many small objects share (small
//! datasets, their string attributes, groups, dimension scales), made once and kept open until the
//! library closes at exit, and the helpers that call the library with them. The C declarations
//! come from `hdf5-metno-sys` (re-exported here as [`sys`]); this module declares none of its own.
//!
//! Why straight calls: `hdf5-metno`'s builders make, set and close several property lists, a
//! datatype and a dataspace for every object they create, and the high-level library's
//! dimension-scale calls (`H5DSattach_scale`) check and re-read what they are about to write; for a
//! sweep point's forty datasets that was most of the CPU time of writing it. Every call goes
//! through `hdf5-metno`'s lock (`::hdf5::sync::sync`), which serialises it with the crate's own
//! calls into the library (not thread-safe as built).

pub use hdf5_sys as sys;

use anyhow::{anyhow, Result};
use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;
use sys::h5::H5open;
use sys::h5a::{H5Aclose, H5Acreate2, H5Aopen, H5Awrite};
use sys::h5d::{H5D_fill_time_t, H5D_layout_t};
use sys::h5i::H5Iinc_ref;
use sys::h5p::{
    H5Pcreate, H5Pset_buffer, H5Pset_char_encoding, H5Pset_chunk, H5Pset_deflate, H5Pset_fill_time, H5Pset_layout,
    H5Pset_link_creation_order, H5Pset_link_phase_change, H5Pset_obj_track_times, H5Pset_shuffle,
    H5P_CLS_ATTRIBUTE_CREATE, H5P_CLS_DATASET_CREATE, H5P_CLS_DATASET_XFER, H5P_CLS_GROUP_CREATE,
    H5P_CRT_ORDER_INDEXED, H5P_CRT_ORDER_TRACKED,
};
use sys::h5s::{H5S_class_t, H5Screate};
use sys::h5t::{
    H5T_class_t, H5T_cset_t, H5T_str_t, H5Tcopy, H5Tcreate, H5Tinsert, H5Tset_cset, H5Tset_size, H5Tset_strpad,
    H5Tvlen_create, H5T_C_S1, H5T_NATIVE_INT, H5T_STD_REF_OBJ, H5T_VARIABLE,
};

/// An object reference (`hobj_ref_t`, the object's address in the file), as `hdf5-metno` makes
/// it for the HDF5 version it was built against.
pub use ::hdf5::ObjectReference1 as ObjRef;
pub use sys::h5i::hid_t as Hid;
pub use sys::h5p::H5P_DEFAULT;
pub use sys::h5s::H5S_ALL;
pub use sys::h5t::hvl_t as HvlT;

/// One entry of a dimension scale's `REFERENCE_LIST`: the layout of the high-level library's
/// `ds_list_t` (an object reference, then a C `int`, padded to 16 bytes), which is also the
/// attribute's type in the file. `hdf5-metno-sys` does not bind the high-level library.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DsListEntry {
    /// The dataset that has the scale.
    pub dataset: ObjRef,
    /// The axis of that dataset the scale is attached to.
    pub dimension: c_int,
}

/// The shared ids (see the module's doc). None is ever closed: the library closes them at exit.
#[derive(Debug, Clone, Copy)]
pub struct Ids {
    /// Variable-length UTF-8 string, null-terminated: `hdf5-metno`'s type of [`VarLenUnicode`]
    /// (h5py reads it as `str`).
    ///
    /// [`VarLenUnicode`]: ::hdf5::types::VarLenUnicode
    pub str_ty: Hid,
    /// A scalar dataspace.
    pub scalar: Hid,
    /// Attribute creation: UTF-8 names, as `hdf5-metno`'s.
    pub acpl: Hid,
    /// Dataset creation, compact layout, no modification times (as `hdf5-metno`'s builder).
    pub compact: Hid,
    /// Dataset creation, chunked (the chunk is set before each use), byte shuffle then deflate
    /// at [`super::hdf5::DEFLATE_LEVEL`], fill on allocation, no modification times.
    pub shuffled: Hid,
    /// The same without the shuffle.
    pub deflated: Hid,
    /// Group creation: links listed in creation order, kept compact up to
    /// [`super::hdf5::COMPACT_LINKS`] (the estimate of its links is set before each use).
    pub gcpl: Hid,
    /// `DIMENSION_LIST`'s type: a variable-length sequence of object references.
    pub dimlist_ty: Hid,
    /// `REFERENCE_LIST`'s type: compound of [`DsListEntry`].
    pub reflist_ty: Hid,
    /// `hdf5-metno`'s type of `bool` (an enum over 8-bit integers, `FALSE` and `TRUE`).
    pub bool_ty: Hid,
    /// Dataset transfer with a 64 KiB type-conversion buffer, for strings: with the default
    /// (1 MiB, allocated zeroed for every write that converts) a few rows of text cost more than
    /// the dataset.
    pub small_xfer: Hid,
}

/// The shared ids, made on first use.
pub fn ids() -> Result<&'static Ids> {
    static IDS: OnceLock<Ids> = OnceLock::new();
    if let Some(ids) = IDS.get() {
        return Ok(ids);
    }
    let bool_ty = ::hdf5::Datatype::from_type::<bool>()?;
    // SAFETY: plain calls into the library (initialised by H5open), under hdf5-metno's lock; the
    // bool type's handle is dropped after its id got a reference of its own.
    let ids = ::hdf5::sync::sync(|| unsafe {
        if H5open() < 0 || H5Iinc_ref(bool_ty.id()) < 0 {
            return None;
        }
        let str_ty = H5Tcopy(*H5T_C_S1);
        let ok = str_ty >= 0
            && H5Tset_cset(str_ty, H5T_cset_t::H5T_CSET_UTF8) >= 0
            && H5Tset_strpad(str_ty, H5T_str_t::H5T_STR_NULLTERM) >= 0
            && H5Tset_size(str_ty, H5T_VARIABLE) >= 0;
        let scalar = H5Screate(H5S_class_t::H5S_SCALAR);
        let acpl = H5Pcreate(*H5P_CLS_ATTRIBUTE_CREATE);
        let ok = ok && scalar >= 0 && acpl >= 0 && H5Pset_char_encoding(acpl, H5T_cset_t::H5T_CSET_UTF8) >= 0;
        let dcpl = || {
            let p = H5Pcreate(*H5P_CLS_DATASET_CREATE);
            (p >= 0 && H5Pset_obj_track_times(p, 0) >= 0).then_some(p)
        };
        let compact = dcpl().filter(|&p| H5Pset_layout(p, H5D_layout_t::H5D_COMPACT) >= 0)?;
        // A chunk of one row until the caller sets its own: the filters need a chunked layout.
        let chunked = |shuffle: bool| {
            let p = dcpl()?;
            let ok = H5Pset_chunk(p, 1, [1u64].as_ptr()) >= 0
                && (!shuffle || H5Pset_shuffle(p) >= 0)
                && H5Pset_deflate(p, super::hdf5::DEFLATE_LEVEL.into()) >= 0
                && H5Pset_fill_time(p, H5D_fill_time_t::H5D_FILL_TIME_ALLOC) >= 0;
            ok.then_some(p)
        };
        let (shuffled, deflated) = (chunked(true)?, chunked(false)?);
        let gcpl = H5Pcreate(*H5P_CLS_GROUP_CREATE);
        let compact_links = super::hdf5::COMPACT_LINKS;
        let ok = ok
            && gcpl >= 0
            && H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) >= 0
            && H5Pset_link_phase_change(gcpl, compact_links, compact_links - 8) >= 0;
        let dimlist_ty = H5Tvlen_create(*H5T_STD_REF_OBJ);
        let reflist_ty = H5Tcreate(H5T_class_t::H5T_COMPOUND, std::mem::size_of::<DsListEntry>());
        let ok = ok
            && dimlist_ty >= 0
            && reflist_ty >= 0
            && H5Tinsert(reflist_ty, c"dataset".as_ptr(), std::mem::offset_of!(DsListEntry, dataset), *H5T_STD_REF_OBJ)
                >= 0
            && H5Tinsert(
                reflist_ty,
                c"dimension".as_ptr(),
                std::mem::offset_of!(DsListEntry, dimension),
                *H5T_NATIVE_INT,
            ) >= 0;
        let small_xfer = H5Pcreate(*H5P_CLS_DATASET_XFER);
        let ok = ok
            && small_xfer >= 0
            && H5Pset_buffer(small_xfer, 1 << 16, std::ptr::null_mut(), std::ptr::null_mut()) >= 0;
        ok.then_some(Ids {
            str_ty,
            scalar,
            acpl,
            compact,
            shuffled,
            deflated,
            gcpl,
            dimlist_ty,
            reflist_ty,
            bool_ty: bool_ty.id(),
            small_xfer,
        })
    });
    let ids = ids.ok_or_else(|| anyhow!("making the HDF5 types and property lists of results files"))?;
    Ok(IDS.get_or_init(|| ids))
}

/// A fixed-length ASCII string type of `len` bytes, null-terminated: the high-level library's type
/// of string attributes (`H5LT_set_attribute_string`), which dimension scales' `CLASS` and `NAME`
/// have. The caller closes it.
///
/// # Safety
///
/// Call under hdf5-metno's lock, with the library initialised.
pub unsafe fn fixed_str_type(len: usize) -> Hid {
    let t = H5Tcopy(*H5T_C_S1);
    if t < 0 || H5Tset_size(t, len) < 0 || H5Tset_strpad(t, H5T_str_t::H5T_STR_NULLTERM) < 0 {
        return -1;
    }
    t
}

/// Write the attribute `name` of `obj` from `buf`: opened if `exists`, else created with the
/// dataspace `space` and creation list `acpl`; then closed. Negative on failure.
///
/// # Safety
///
/// Call under hdf5-metno's lock (`::hdf5::sync::sync`), with live ids, a C string `name`, and `buf`
/// holding as many values of the memory type `ty` as the attribute's dataspace has elements.
pub unsafe fn write_attribute(
    obj: Hid,
    name: *const c_char,
    ty: Hid,
    space: Hid,
    acpl: Hid,
    buf: *const c_void,
    exists: bool,
) -> c_int {
    let a = if exists { H5Aopen(obj, name, H5P_DEFAULT) } else { H5Acreate2(obj, name, ty, space, acpl, H5P_DEFAULT) };
    if a < 0 {
        return -1;
    }
    let w = H5Awrite(a, ty, buf);
    w.min(H5Aclose(a))
}
