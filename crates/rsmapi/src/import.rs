//! The import side: connect and disconnect, bulk and 8/16/32/64-bit puts and gets,
//! map and unmap, and the barrier mode.

use std::ffi::{c_int, c_ulong, c_void};
use std::sync::{Arc, Mutex};

use myrix_rsm::{BarrierMode, NodeId, Perm, RsmError, Scalar, SegmentId};

use crate::ffi::{bytes, bytes_mut, fill_values, guard, offset, values, write_out};
use crate::objects::{
    controller, forget_pollfds, import, insert, lock, Handle, ImportObj, Mapped, IMPORTS,
};

/// `RSM_MAP_NONE`: the library chooses the address.
pub const RSM_MAP_NONE: c_int = 0;

/// Connects to segment `segment_id` of node `node_id` with `perm`
/// (`RSM_PERM_READ`, `RSM_PERM_WRITE` or `RSM_PERM_RDWR`).
///
/// # Safety
/// `im_memseg` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_import_connect(
    ctrl: Handle,
    node_id: u32,
    segment_id: u32,
    perm: u32,
    im_memseg: *mut Handle,
) -> c_int {
    guard(|| {
        let c = controller(ctrl)?;
        if im_memseg.is_null() {
            return Err(RsmError::BadAddr);
        }
        let perm = Perm::requested(perm)?;
        let imp = c.import_connect(NodeId(node_id), SegmentId(segment_id), perm)?;
        let h = insert(
            &IMPORTS,
            ImportObj {
                import: imp,
                mapping: Mutex::new(None),
                pollfds: Mutex::new(0),
            },
        )?;
        // SAFETY: checked not NULL; the caller promises it is writable.
        unsafe { write_out(im_memseg, h as Handle) }
    })
}

/// Disconnects: refused while mapped (RSMERR_SEG_STILL_MAPPED) or while a poll
/// descriptor is out (RSMERR_POLLFD_IN_USE); the handle is dead after.
#[no_mangle]
pub extern "C" fn rsm_memseg_import_disconnect(im_memseg: Handle) -> c_int {
    guard(|| {
        let obj = import(im_memseg)?;
        if lock(&obj.mapping).is_some() {
            return Err(RsmError::SegStillMapped);
        }
        if *lock(&obj.pollfds) > 0 {
            return Err(RsmError::PollfdInUse);
        }
        drop(obj);
        let obj = IMPORTS
            .remove(im_memseg as usize)
            .ok_or(RsmError::BadSegHndl)?;
        forget_pollfds(im_memseg as usize);
        match Arc::try_unwrap(obj) {
            Ok(o) => o.import.disconnect(),
            // Another thread is inside a call on it: the last one out disconnects.
            Err(_) => Ok(()),
        }
    })
}

/// # Safety
/// `dst_addr` is NULL or points to `length` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_import_get(
    im_memseg: Handle,
    off: i64,
    dst_addr: *mut c_void,
    length: usize,
) -> c_int {
    guard(|| {
        let obj = import(im_memseg)?;
        let off = offset(off)?;
        // SAFETY: the caller promises length writable bytes at dst_addr.
        let out = unsafe { bytes_mut(dst_addr.cast(), length) }?;
        obj.import.get(off, out)
    })
}

/// # Safety
/// `src_addr` is NULL or points to `length` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_import_put(
    im_memseg: Handle,
    off: i64,
    src_addr: *mut c_void,
    length: usize,
) -> c_int {
    guard(|| {
        let obj = import(im_memseg)?;
        let off = offset(off)?;
        // SAFETY: the caller promises length readable bytes at src_addr.
        let data = unsafe { bytes(src_addr.cast_const().cast(), length) }?;
        obj.import.put(off, data)
    })
}

/// # Safety
/// `datap` is NULL or points to `rep_cnt` writable values.
unsafe fn get_n<T: Scalar + Copy + Default>(
    h: Handle,
    off: i64,
    datap: *mut T,
    rep_cnt: c_ulong,
) -> c_int {
    guard(|| {
        let obj = import(h)?;
        let off = offset(off)?;
        // SAFETY: the caller promises rep_cnt writable values at datap.
        unsafe { fill_values(datap, rep_cnt, |out| obj.import.get_scalars(off, out)) }
    })
}

/// # Safety
/// `datap` is NULL or points to `rep_cnt` readable values.
unsafe fn put_n<T: Scalar + Copy>(h: Handle, off: i64, datap: *const T, rep_cnt: c_ulong) -> c_int {
    guard(|| {
        let obj = import(h)?;
        let off = offset(off)?;
        // SAFETY: the caller promises rep_cnt readable values at datap.
        let data = unsafe { values(datap, rep_cnt) }?;
        obj.import.put_scalars(off, &data)
    })
}

macro_rules! scalar_access {
    ($get:ident, $put:ident, $t:ty) => {
        /// # Safety
        /// `datap` is NULL or points to `rep_cnt` writable values.
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            im_memseg: Handle,
            off: i64,
            datap: *mut $t,
            rep_cnt: c_ulong,
        ) -> c_int {
            // SAFETY: the caller's promise is passed on unchanged.
            unsafe { get_n(im_memseg, off, datap, rep_cnt) }
        }

        /// # Safety
        /// `datap` is NULL or points to `rep_cnt` readable values.
        #[no_mangle]
        pub unsafe extern "C" fn $put(
            im_memseg: Handle,
            off: i64,
            datap: *mut $t,
            rep_cnt: c_ulong,
        ) -> c_int {
            // SAFETY: the caller's promise is passed on unchanged.
            unsafe { put_n(im_memseg, off, datap.cast_const(), rep_cnt) }
        }
    };
}

scalar_access!(rsm_memseg_import_get8, rsm_memseg_import_put8, u8);
scalar_access!(rsm_memseg_import_get16, rsm_memseg_import_put16, u16);
scalar_access!(rsm_memseg_import_get32, rsm_memseg_import_put32, u32);
scalar_access!(rsm_memseg_import_get64, rsm_memseg_import_put64, u64);

/// Maps the imported segment for loads and stores: `*address` receives the address
/// of byte `off`, and `length` bytes from there are accessible. Only
/// `RSM_MAP_NONE` is supported (others: RSMERR_MAP_FAILED); `perm` must be within
/// the permission the segment was imported with.
///
/// # Safety
/// `address` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_import_map(
    im_memseg: Handle,
    address: *mut *mut c_void,
    attr: c_int,
    perm: u32,
    off: i64,
    length: usize,
) -> c_int {
    guard(|| {
        let obj = import(im_memseg)?;
        if address.is_null() {
            return Err(RsmError::BadAddr);
        }
        if attr != RSM_MAP_NONE {
            return Err(RsmError::MapFailed);
        }
        let perm = Perm::requested(perm)?;
        if !obj.import.perm().covers(perm) {
            return Err(RsmError::PermDenied);
        }
        let off = offset(off)?;
        let len = obj.import.len();
        if off >= len {
            return Err(RsmError::BadOffset);
        }
        if length == 0 || length > len - off {
            return Err(RsmError::BadLength);
        }
        let mut slot = lock(&obj.mapping);
        if slot.is_some() {
            return Err(RsmError::SegAlreadyMapped);
        }
        let mapping = obj.import.map()?;
        let at = mapping.as_ptr() as usize + off;
        *slot = Some(Mapped { mapping });
        // SAFETY: checked not NULL; the caller promises it is writable.
        unsafe { write_out(address, at as *mut c_void) }
    })
}

#[no_mangle]
pub extern "C" fn rsm_memseg_import_unmap(im_memseg: Handle) -> c_int {
    guard(|| {
        let obj = import(im_memseg)?;
        // Dropping the mapping unmaps it.
        let was = lock(&obj.mapping).take();
        was.map(|_| ()).ok_or(RsmError::SegNotMapped)
    })
}

/// # Safety
/// `mode` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_import_get_mode(im_memseg: Handle, mode: *mut c_int) -> c_int {
    guard(|| {
        let obj = import(im_memseg)?;
        let code = obj.import.mode().code() as c_int;
        // SAFETY: NULL is refused by write_out; the caller promises it is writable.
        unsafe { write_out(mode, code) }
    })
}

#[no_mangle]
pub extern "C" fn rsm_memseg_import_set_mode(im_memseg: Handle, mode: c_int) -> c_int {
    guard(|| {
        let obj = import(im_memseg)?;
        let mode = u32::try_from(mode).map_err(|_| RsmError::BadMode)?;
        obj.import.set_mode(BarrierMode::from_code(mode)?)
    })
}
