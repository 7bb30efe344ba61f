//! The export side: rsm_memseg_export_create, _destroy, _rebind, _publish,
//! _unpublish, _republish.

use std::ffi::{c_int, c_uint, c_ulong, c_void};
use std::sync::{Arc, Mutex};

use myrix_rsm::{AccessEntry, ExportFlags, NodeId, Perm, RsmError, SegmentId};

use crate::ffi::{check_range, guard, offset, read_in, values, write_out, Res};
use crate::objects::{
    controller, export, forget_pollfds, insert, lock, ExportObj, Handle, EXPORTS,
};

/// `rsmapi_access_entry_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
#[allow(non_camel_case_types)]
pub struct rsmapi_access_entry_t {
    pub ae_node: u32,
    pub ae_permission: u32,
}

/// The most entries an access list may have (as myrix-rsm-proto's lists).
pub const MAX_ACL_ENTRIES: c_uint = myrix_rsm_proto::acl::MAX_ENTRIES as c_uint;

/// Creates an export segment over the caller's page-aligned memory at `vaddr`, or,
/// when `vaddr` is NULL (a myrix extension), over zeroed memory the library
/// allocates.
///
/// # Safety
/// `memseg` is NULL or writable. A non-NULL `vaddr` points to `length` bytes that
/// stay mapped until the segment is destroyed or rebound elsewhere.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_export_create(
    ctrl: Handle,
    memseg: *mut Handle,
    vaddr: *mut c_void,
    length: usize,
    flags: c_uint,
) -> c_int {
    guard(|| {
        let c = controller(ctrl)?;
        if memseg.is_null() {
            return Err(RsmError::BadAddr);
        }
        let flags = ExportFlags::from_bits(flags)?;
        let exp = if vaddr.is_null() {
            c.export_create(length, flags)?
        } else {
            check_range(vaddr as usize, length)?;
            // SAFETY: the caller promises the memory stays valid until the export is
            // destroyed or rebound, as RSMAPI requires.
            unsafe { c.export_create_at(vaddr.cast(), length, flags) }?
        };
        let h = insert(
            &EXPORTS,
            ExportObj {
                export: exp,
                pollfds: Mutex::new(0),
            },
        )?;
        // SAFETY: checked not NULL; the caller promises it is writable.
        unsafe { write_out(memseg, h as Handle) }
    })
}

/// Destroys an export segment (unpublishing it first): its handle is dead after.
#[no_mangle]
pub extern "C" fn rsm_memseg_export_destroy(memseg: Handle) -> c_int {
    guard(|| {
        let obj = export(memseg)?;
        if *lock(&obj.pollfds) > 0 {
            return Err(RsmError::PollfdInUse);
        }
        drop(obj);
        let obj = EXPORTS
            .remove(memseg as usize)
            .ok_or(RsmError::BadSegHndl)?;
        forget_pollfds(memseg as usize);
        match Arc::try_unwrap(obj) {
            Ok(o) => o.export.destroy(),
            // Another thread is inside a call on it: the last one out destroys it.
            Err(_) => Ok(()),
        }
    })
}

/// # Safety
/// `vaddr` is NULL or points to `length` bytes that stay mapped until the segment is
/// destroyed or rebound again.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_export_rebind(
    memseg: Handle,
    vaddr: *mut c_void,
    off: i64,
    length: usize,
) -> c_int {
    guard(|| {
        let obj = export(memseg)?;
        let off = offset(off)?;
        check_range(vaddr as usize, length)?;
        // SAFETY: the caller promises the new memory stays valid as RSMAPI requires.
        unsafe { obj.export.rebind(vaddr.cast(), off, length) }
    })
}

/// A C access list: `n` entries at `list`; none (open to all) when `n` is 0.
///
/// # Safety
/// `list` is NULL or points to `n` readable entries.
unsafe fn c_access_list(list: *const rsmapi_access_entry_t, n: c_uint) -> Res<Vec<AccessEntry>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if list.is_null() || n > MAX_ACL_ENTRIES {
        return Err(RsmError::BadAcl);
    }
    // SAFETY: not NULL; the caller promises n readable entries.
    let entries = unsafe { values(list, c_ulong::from(n)) }?;
    Ok(entries
        .iter()
        .map(|e| AccessEntry {
            node: NodeId(e.ae_node),
            perm: Perm(e.ae_permission),
        })
        .collect())
}

/// Publishes under `*segment_id`, or under an id the library picks (written back)
/// when it is 0.
///
/// # Safety
/// `segment_id` is NULL or readable and writable; `access_list` is NULL or has
/// `access_list_length` entries.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_export_publish(
    memseg: Handle,
    segment_id: *mut u32,
    access_list: *const rsmapi_access_entry_t,
    access_list_length: c_uint,
) -> c_int {
    guard(|| {
        let obj = export(memseg)?;
        // SAFETY: NULL is refused; the caller promises it is readable.
        let want = unsafe { read_in(segment_id) }?;
        // SAFETY: the caller promises access_list_length readable entries.
        let acl = unsafe { c_access_list(access_list, access_list_length) }?;
        let id = obj
            .export
            .publish((want != 0).then_some(SegmentId(want)), &acl)?;
        // SAFETY: read from above, so not NULL; the caller promises it is writable.
        unsafe { write_out(segment_id, id.0) }
    })
}

#[no_mangle]
pub extern "C" fn rsm_memseg_export_unpublish(memseg: Handle) -> c_int {
    guard(|| {
        let obj = export(memseg)?;
        if *lock(&obj.pollfds) > 0 {
            return Err(RsmError::PollfdInUse);
        }
        obj.export.unpublish()
    })
}

/// # Safety
/// `access_list` is NULL or has `access_list_length` readable entries.
#[no_mangle]
pub unsafe extern "C" fn rsm_memseg_export_republish(
    memseg: Handle,
    access_list: *const rsmapi_access_entry_t,
    access_list_length: c_uint,
) -> c_int {
    guard(|| {
        let obj = export(memseg)?;
        // SAFETY: the caller promises access_list_length readable entries.
        let acl = unsafe { c_access_list(access_list, access_list_length) }?;
        obj.export.republish(&acl)
    })
}
