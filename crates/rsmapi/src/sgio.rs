//! Scatter/gather: rsm_memseg_import_putv and _getv, and the local memory handles
//! their lists may name (rsm_create_localmemory_handle, rsm_free_localmemory_handle).

use std::ffi::{c_int, c_uint, c_ulong, c_void};
use std::ptr::addr_of_mut;

use myrix_rsm::{RsmError, SignalFlags};

use crate::ffi::{bytes, bytes_mut, check_range, guard, read_in, values, write_out, Res};
use crate::objects::{controller, import, insert, Handle, LocalMem, LOCAL_MEMORY};

pub const RSM_MAX_SGIOREQS: c_ulong = 16;
pub const RSM_HANDLE_TYPE: c_int = 0x01;
pub const RSM_VA_TYPE: c_int = 0x02;
pub const RSM_IMPLICIT_SIGPOST: c_uint = 0x01;
pub const RSM_SIGPOST_NO_ACCUMULATE: c_uint = 0x02;

/// `rsm_iovec_t` (its `local` union is one pointer: a handle or an address).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_camel_case_types)]
pub struct rsm_iovec_t {
    pub io_type: c_int,
    pub local: *mut c_void,
    pub local_offset: usize,
    pub remote_offset: usize,
    pub transfer_length: usize,
}

/// `rsm_scat_gath_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_camel_case_types)]
pub struct rsm_scat_gath_t {
    pub local_nodeid: u32,
    pub io_request_count: c_ulong,
    pub io_residual_count: c_ulong,
    pub flags: c_uint,
    pub remote_handle: Handle,
    pub iovec: *mut rsm_iovec_t,
}

/// Names `length` bytes at `local_vaddr` for scatter/gather lists.
///
/// # Safety
/// `l_handle` is NULL or writable; the memory stays valid while the handle is used.
#[no_mangle]
pub unsafe extern "C" fn rsm_create_localmemory_handle(
    ctrl: Handle,
    l_handle: *mut Handle,
    local_vaddr: *mut c_void,
    length: usize,
) -> c_int {
    guard(|| {
        controller(ctrl)?;
        if l_handle.is_null() {
            return Err(RsmError::BadAddr);
        }
        if length == 0 {
            return Err(RsmError::BadLength);
        }
        check_range(local_vaddr as usize, length)?;
        let h = insert(
            &LOCAL_MEMORY,
            LocalMem {
                addr: local_vaddr as usize,
                len: length,
                controller: ctrl as usize,
            },
        )?;
        // SAFETY: checked not NULL; the caller promises it is writable.
        unsafe { write_out(l_handle, h as Handle) }
    })
}

#[no_mangle]
pub extern "C" fn rsm_free_localmemory_handle(ctrl: Handle, l_handle: Handle) -> c_int {
    guard(|| {
        controller(ctrl)?;
        LOCAL_MEMORY
            .remove(l_handle as usize)
            .map(drop)
            .ok_or(RsmError::BadLocalmemHndl)
    })
}

/// One entry resolved: local address, length, remote offset.
struct Io {
    addr: usize,
    len: usize,
    remote: usize,
}

fn resolve(v: &rsm_iovec_t) -> Res<Io> {
    let base = match v.io_type {
        RSM_HANDLE_TYPE => {
            let m = LOCAL_MEMORY
                .get(v.local as usize)
                .ok_or(RsmError::BadLocalmemHndl)?;
            if v.local_offset > m.len {
                return Err(RsmError::BadOffset);
            }
            if v.transfer_length > m.len - v.local_offset {
                return Err(RsmError::BadLength);
            }
            m.addr
        }
        RSM_VA_TYPE if v.local.is_null() => return Err(RsmError::BadAddr),
        RSM_VA_TYPE => v.local as usize,
        _ => return Err(RsmError::BadSgio),
    };
    let addr = base.checked_add(v.local_offset).ok_or(RsmError::BadAddr)?;
    check_range(addr, v.transfer_length)?;
    Ok(Io {
        addr,
        len: v.transfer_length,
        remote: v.remote_offset,
    })
}

/// Runs a list: every entry is checked before any I/O; then one transfer per entry,
/// in order, stopping at the first error. `io_residual_count` gets the number of
/// entries not done.
///
/// # Safety
/// `sg` is NULL or a readable, writable list whose addresses are valid for the
/// transfers it describes.
unsafe fn run(sg: *mut rsm_scat_gath_t, put: bool) -> c_int {
    guard(|| {
        // SAFETY: NULL is refused; the caller promises a readable list.
        let list = unsafe { read_in(sg) }.map_err(|_| RsmError::BadSgio)?;
        let residual = |n: c_ulong| {
            // SAFETY: sg is not NULL (read above); the caller promises it is writable.
            unsafe { write_out(addr_of_mut!((*sg).io_residual_count), n) }
        };
        let count = list.io_request_count;
        if count == 0 || count > RSM_MAX_SGIOREQS || list.iovec.is_null() {
            return Err(RsmError::BadSgio);
        }
        residual(count)?;
        let obj = import(list.remote_handle)?;
        // SAFETY: not NULL; the caller promises io_request_count readable entries.
        let entries = unsafe { values(list.iovec.cast_const(), count) }?;
        let ios = entries.iter().map(resolve).collect::<Res<Vec<Io>>>()?;
        for (done, io) in ios.iter().enumerate() {
            let r = if put {
                // SAFETY: the caller promises the entry's local memory is readable.
                let data = unsafe { bytes(io.addr as *const u8, io.len) }?;
                obj.import.put(io.remote, data)
            } else {
                // SAFETY: the caller promises the entry's local memory is writable and
                // not used elsewhere during the call.
                let out = unsafe { bytes_mut(io.addr as *mut u8, io.len) }?;
                obj.import.get(io.remote, out)
            };
            if let Err(e) = r {
                residual(count - done as c_ulong)?;
                return Err(e);
            }
        }
        residual(0)?;
        if list.flags & RSM_IMPLICIT_SIGPOST != 0 {
            obj.import.signal_post(SignalFlags {
                no_accumulate: list.flags & RSM_SIGPOST_NO_ACCUMULATE != 0,
            })?;
        }
        Ok(())
    })
}

/// # Safety
/// See [`run`].
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_import_putv(sg_io: *mut rsm_scat_gath_t) -> c_int {
    // SAFETY: the caller's promise is passed on.
    unsafe { run(sg_io, true) }
}

/// # Safety
/// See [`run`].
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_import_getv(sg_io: *mut rsm_scat_gath_t) -> c_int {
    // SAFETY: the caller's promise is passed on.
    unsafe { run(sg_io, false) }
}
