//! Barriers: rsm_memseg_import_init_barrier, _open_barrier, _order_barrier,
//! _close_barrier, _destroy_barrier.
//!
//! The caller's `rsmapi_barrier_t` holds the import handle (`seg`), the barrier's own
//! handle (`privdata`) and that handle's generation (`gnum`, informative); all three
//! are checked against the library's tables before use.

use std::ffi::{c_int, c_void};
use std::ptr::addr_of_mut;
use std::sync::{Arc, Mutex};

use myrix_rsm::{Barrier, BarrierType, RsmError};

use crate::ffi::{guard, read_in, write_out, Res};
use crate::objects::{import, insert, lock, BarrierObj, Handle, BARRIERS};

/// `rsmapi_barrier_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_camel_case_types)]
pub struct rsmapi_barrier_t {
    pub seg: Handle,
    pub gnum: u16,
    pub privdata: Handle,
}

/// # Safety
/// `barrier` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_import_init_barrier(
    im_memseg: Handle,
    kind: c_int,
    barrier: *mut rsmapi_barrier_t,
) -> c_int {
    guard(|| {
        let obj = import(im_memseg)?;
        if barrier.is_null() {
            return Err(RsmError::BadBarrierPtr);
        }
        let kind = u32::try_from(kind).map_err(|_| RsmError::BadBarrierPtr)?;
        let b = obj.import.init_barrier(BarrierType::from_code(kind)?)?;
        let h = insert(
            &BARRIERS,
            BarrierObj {
                import: im_memseg as usize,
                barrier: Mutex::new(b),
            },
        )?;
        let value = rsmapi_barrier_t {
            seg: im_memseg,
            gnum: (h >> 24) as u16,
            privdata: h as *mut c_void,
        };
        // SAFETY: checked not NULL; the caller promises it is writable.
        unsafe { write_out(barrier, value) }
    })
}

/// The barrier the caller's struct names.
///
/// # Safety
/// `barrier` is NULL or readable.
unsafe fn lookup(barrier: *const rsmapi_barrier_t, need_import: bool) -> Res<Arc<BarrierObj>> {
    // SAFETY: NULL is refused; the caller promises it is readable.
    let b = unsafe { read_in(barrier) }.map_err(|_| RsmError::BadBarrierPtr)?;
    if b.privdata.is_null() {
        return Err(RsmError::BarrierUninitialized);
    }
    let obj = BARRIERS
        .get(b.privdata as usize)
        .ok_or(RsmError::BadBarrierPtr)?;
    if obj.import != b.seg as usize {
        return Err(RsmError::BadBarrierPtr);
    }
    if need_import {
        // The segment was disconnected: the barrier has nothing left to cover.
        import(b.seg)?;
    }
    Ok(obj)
}

/// # Safety
/// `barrier` is NULL or readable.
unsafe fn with(barrier: *const rsmapi_barrier_t, op: impl FnOnce(&mut Barrier) -> Res) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise is passed on.
        let obj = unsafe { lookup(barrier, true) }?;
        let mut b = lock(&obj.barrier);
        op(&mut b)
    })
}

/// # Safety
/// `barrier` is NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_import_open_barrier(barrier: *mut rsmapi_barrier_t) -> c_int {
    // SAFETY: the caller's promise is passed on.
    unsafe { with(barrier, Barrier::open) }
}

/// # Safety
/// `barrier` is NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_import_order_barrier(barrier: *mut rsmapi_barrier_t) -> c_int {
    // SAFETY: the caller's promise is passed on.
    unsafe { with(barrier, Barrier::order) }
}

/// # Safety
/// `barrier` is NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_import_close_barrier(barrier: *mut rsmapi_barrier_t) -> c_int {
    // SAFETY: the caller's promise is passed on.
    unsafe { with(barrier, Barrier::close) }
}

/// Frees the barrier (also after its segment was disconnected) and clears
/// `privdata`, so a second destroy or a later use says RSMERR_BARRIER_UNINITIALIZED.
///
/// # Safety
/// `barrier` is NULL or readable and writable.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_import_destroy_barrier(
    barrier: *mut rsmapi_barrier_t,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise is passed on.
        unsafe { lookup(barrier, false) }?;
        // SAFETY: lookup read it, so it is not NULL.
        let privdata = unsafe { read_in(barrier) }?.privdata;
        BARRIERS
            .remove(privdata as usize)
            .ok_or(RsmError::BadBarrierPtr)?;
        // SAFETY: not NULL; the caller promises it is writable.
        unsafe { write_out(addr_of_mut!((*barrier).privdata), std::ptr::null_mut()) }
    })
}
