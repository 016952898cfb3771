//! Direct calls into the HDF5 C library, for the objects a results file has by the hundred (small
//! datasets, their string attributes, groups, dimension scales), and the datatypes and property
//! lists those calls share, made once and kept open until the library closes at exit.
//!
//! Why: `hdf5-metno`'s builders make, set and close several property lists, a datatype and a
//! dataspace for every object they create, and the high-level library's dimension-scale calls
//! (`H5DSattach_scale`) check and re-read what they are about to write; for a sweep point's forty
//! datasets that was most of the CPU time of writing it. Every call here goes through
//! `hdf5-metno`'s lock (`::hdf5::sync::sync`), which serialises it with the crate's own calls into
//! the library (not thread-safe as built).

use anyhow::{anyhow, Result};
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

/// An HDF5 identifier (`hid_t`).
pub type Hid = i64;

/// `H5P_DEFAULT`.
pub const H5P_DEFAULT: Hid = 0;
/// `H5S_ALL`.
pub const H5S_ALL: Hid = 0;
/// `H5S_SCALAR` (an `H5S_class_t`).
pub const H5S_SCALAR: c_int = 0;
/// `H5T_CSET_UTF8`.
const CSET_UTF8: c_int = 1;
/// `H5T_STR_NULLTERM`.
pub const STR_NULLTERM: c_int = 0;
/// `H5T_VARIABLE`.
const VARIABLE: usize = usize::MAX;
/// `H5T_COMPOUND` (an `H5T_class_t`).
const CLASS_COMPOUND: c_int = 6;
/// `H5D_COMPACT` (an `H5D_layout_t`).
const LAYOUT_COMPACT: c_int = 0;
/// `H5D_FILL_TIME_ALLOC`: what `hdf5-metno` sets on chunked datasets (as h5py does).
const FILL_TIME_ALLOC: c_int = 0;
/// `H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED`.
const CRT_ORDER_INDEXED: c_uint = 3;
/// `H5R_OBJECT`.
pub const REF_OBJECT: c_int = 0;

/// An object reference (`hobj_ref_t`, the object's address in the file).
pub type ObjRef = u64;

/// One entry of a dimension scale's `REFERENCE_LIST`: the layout of the high-level library's
/// `ds_list_t` (an object reference, then a C `int`, padded to 16 bytes), which is also the
/// attribute's type in the file.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DsListEntry {
    /// The dataset that has the scale.
    pub dataset: ObjRef,
    /// The axis of that dataset the scale is attached to.
    pub dimension: c_int,
}

/// A variable-length sequence as the library lays it out in memory (`hvl_t`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HvlT {
    /// Elements.
    pub len: usize,
    /// The first element.
    pub p: *const c_void,
}

extern "C" {
    pub fn H5Pset_copy_object(plist: Hid, flags: c_uint) -> c_int;
    pub fn H5Ocopy(
        src_loc: Hid,
        src_name: *const c_char,
        dst_loc: Hid,
        dst_name: *const c_char,
        ocpypl: Hid,
        lcpl: Hid,
    ) -> c_int;
    pub fn H5open() -> c_int;
    pub fn H5Iinc_ref(id: Hid) -> c_int;
    pub fn H5Aexists(obj_id: Hid, attr_name: *const c_char) -> c_int;
    pub fn H5Aopen(obj_id: Hid, attr_name: *const c_char, aapl: Hid) -> Hid;
    pub fn H5Acreate2(loc: Hid, name: *const c_char, type_id: Hid, space_id: Hid, acpl: Hid, aapl: Hid) -> Hid;
    pub fn H5Awrite(attr_id: Hid, mem_type_id: Hid, buf: *const c_void) -> c_int;
    pub fn H5Aclose(attr_id: Hid) -> c_int;
    pub fn H5Tcopy(type_id: Hid) -> Hid;
    pub fn H5Tclose(type_id: Hid) -> c_int;
    pub fn H5Tcreate(class: c_int, size: usize) -> Hid;
    pub fn H5Tinsert(parent: Hid, name: *const c_char, offset: usize, member: Hid) -> c_int;
    pub fn H5Tvlen_create(base: Hid) -> Hid;
    pub fn H5Tset_cset(type_id: Hid, cset: c_int) -> c_int;
    pub fn H5Tset_strpad(type_id: Hid, strpad: c_int) -> c_int;
    pub fn H5Tset_size(type_id: Hid, size: usize) -> c_int;
    pub fn H5Screate(class: c_int) -> Hid;
    pub fn H5Screate_simple(rank: c_int, dims: *const u64, maxdims: *const u64) -> Hid;
    pub fn H5Sclose(space_id: Hid) -> c_int;
    pub fn H5Pcreate(class_id: Hid) -> Hid;
    pub fn H5Pset_char_encoding(plist: Hid, encoding: c_int) -> c_int;
    pub fn H5Pset_layout(plist: Hid, layout: c_int) -> c_int;
    pub fn H5Pset_obj_track_times(plist: Hid, track_times: bool) -> c_int;
    pub fn H5Pset_chunk(plist: Hid, ndims: c_int, dims: *const u64) -> c_int;
    pub fn H5Pset_shuffle(plist: Hid) -> c_int;
    pub fn H5Pset_deflate(plist: Hid, level: c_uint) -> c_int;
    pub fn H5Pset_fill_time(plist: Hid, fill_time: c_int) -> c_int;
    pub fn H5Pset_buffer(plist: Hid, size: usize, tconv: *mut c_void, bkg: *mut c_void) -> c_int;
    pub fn H5Pset_link_creation_order(plist: Hid, flags: c_uint) -> c_int;
    pub fn H5Pset_link_phase_change(plist: Hid, max_compact: c_uint, min_dense: c_uint) -> c_int;
    pub fn H5Pset_est_link_info(plist: Hid, est_num_entries: c_uint, est_name_len: c_uint) -> c_int;
    pub fn H5Dcreate2(
        loc: Hid,
        name: *const c_char,
        type_id: Hid,
        space_id: Hid,
        lcpl: Hid,
        dcpl: Hid,
        dapl: Hid,
    ) -> Hid;
    pub fn H5Dwrite(ds: Hid, mem_type: Hid, mem_space: Hid, file_space: Hid, xfer: Hid, buf: *const c_void) -> c_int;
    pub fn H5Dclose(ds: Hid) -> c_int;
    pub fn H5Dwrite_chunk(
        ds: Hid,
        dxpl: Hid,
        filters: u32,
        offset: *const u64,
        size: usize,
        buf: *const c_void,
    ) -> c_int;
    pub fn H5Gcreate2(loc: Hid, name: *const c_char, lcpl: Hid, gcpl: Hid, gapl: Hid) -> Hid;
    pub fn H5Rcreate(reference: *mut c_void, loc: Hid, name: *const c_char, ref_type: c_int, space: Hid) -> c_int;
    static H5T_C_S1_g: Hid;
    static H5T_STD_REF_OBJ_g: Hid;
    static H5T_NATIVE_INT_g: Hid;
    pub static H5T_NATIVE_UINT8_g: Hid;
    pub static H5T_NATIVE_UINT32_g: Hid;
    pub static H5T_NATIVE_UINT64_g: Hid;
    pub static H5T_NATIVE_INT32_g: Hid;
    pub static H5T_NATIVE_INT64_g: Hid;
    pub static H5T_NATIVE_DOUBLE_g: Hid;
    static H5P_CLS_ATTRIBUTE_CREATE_ID_g: Hid;
    static H5P_CLS_DATASET_CREATE_ID_g: Hid;
    static H5P_CLS_GROUP_CREATE_ID_g: Hid;
    static H5P_CLS_DATASET_XFER_ID_g: Hid;
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
        let str_ty = H5Tcopy(H5T_C_S1_g);
        let ok = str_ty >= 0
            && H5Tset_cset(str_ty, CSET_UTF8) >= 0
            && H5Tset_strpad(str_ty, STR_NULLTERM) >= 0
            && H5Tset_size(str_ty, VARIABLE) >= 0;
        let scalar = H5Screate(H5S_SCALAR);
        let acpl = H5Pcreate(H5P_CLS_ATTRIBUTE_CREATE_ID_g);
        let ok = ok && scalar >= 0 && acpl >= 0 && H5Pset_char_encoding(acpl, CSET_UTF8) >= 0;
        let dcpl = || {
            let p = H5Pcreate(H5P_CLS_DATASET_CREATE_ID_g);
            (p >= 0 && H5Pset_obj_track_times(p, false) >= 0).then_some(p)
        };
        let compact = dcpl().filter(|&p| H5Pset_layout(p, LAYOUT_COMPACT) >= 0)?;
        // A chunk of one row until the caller sets its own: the filters need a chunked layout.
        let chunked = |shuffle: bool| {
            let p = dcpl()?;
            let ok = H5Pset_chunk(p, 1, [1u64].as_ptr()) >= 0
                && (!shuffle || H5Pset_shuffle(p) >= 0)
                && H5Pset_deflate(p, super::hdf5::DEFLATE_LEVEL.into()) >= 0
                && H5Pset_fill_time(p, FILL_TIME_ALLOC) >= 0;
            ok.then_some(p)
        };
        let (shuffled, deflated) = (chunked(true)?, chunked(false)?);
        let gcpl = H5Pcreate(H5P_CLS_GROUP_CREATE_ID_g);
        let compact_links = super::hdf5::COMPACT_LINKS;
        let ok = ok
            && gcpl >= 0
            && H5Pset_link_creation_order(gcpl, CRT_ORDER_INDEXED) >= 0
            && H5Pset_link_phase_change(gcpl, compact_links, compact_links - 8) >= 0;
        let dimlist_ty = H5Tvlen_create(H5T_STD_REF_OBJ_g);
        let reflist_ty = H5Tcreate(CLASS_COMPOUND, std::mem::size_of::<DsListEntry>());
        let ok = ok
            && dimlist_ty >= 0
            && reflist_ty >= 0
            && H5Tinsert(
                reflist_ty,
                c"dataset".as_ptr(),
                std::mem::offset_of!(DsListEntry, dataset),
                H5T_STD_REF_OBJ_g,
            ) >= 0
            && H5Tinsert(
                reflist_ty,
                c"dimension".as_ptr(),
                std::mem::offset_of!(DsListEntry, dimension),
                H5T_NATIVE_INT_g,
            ) >= 0;
        let small_xfer = H5Pcreate(H5P_CLS_DATASET_XFER_ID_g);
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
    let t = H5Tcopy(H5T_C_S1_g);
    if t < 0 || H5Tset_size(t, len) < 0 || H5Tset_strpad(t, STR_NULLTERM) < 0 {
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
