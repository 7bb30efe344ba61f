//! Small calls programs and libraries expect: the MPI_Status accessors
//! (MPI_Status_set_* / MPI_Status_get_*, as generalized requests and tools use
//! them), MPI_Reduce_local, MPI_Type_match_size, and
//! MPI_Request_get_status_all / _any / _some over MPI_Request_get_status.
//!
//! The status layout is `p2p.rs`'s: the byte count in `MPI_internal[0..2]`, the
//! cancelled flag in `MPI_internal[2]`.

use crate::abi::*;
use crate::datatype;
use crate::ffi::{finish, mpi_fn, put};
use crate::op;
use std::os::raw::{c_int, c_void};

const MPI_TYPECLASS_INTEGER: c_int = 192;
const MPI_TYPECLASS_REAL: c_int = 193;
const MPI_TYPECLASS_COMPLEX: c_int = 194;

/// Runs `f` on a status the program owns (NULL: MPI_ERR_ARG).
///
/// # Safety
/// `st` is NULL or valid for an MPI_Status.
unsafe fn with_status(
    st: *mut MPI_Status,
    f: impl FnOnce(&mut MPI_Status) -> Result<(), c_int>,
) -> Result<(), c_int> {
    if st.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-NULL and an MPI_Status by the caller's contract.
    f(unsafe { &mut *st })
}

/// The bytes `count` elements of `dt` take (the basic elements of its type map:
/// whole copies of the type, then leading elements of a uniform one).
fn element_bytes(dt: MPI_Datatype, count: MPI_Count) -> Result<usize, c_int> {
    let t = datatype::lookup(dt)?;
    let count = u64::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
    let per = t.elements_per();
    if per == 0 {
        return if count == 0 { Ok(0) } else { Err(MPI_ERR_TYPE) };
    }
    let (whole, rest) = (count / per, count % per);
    let mut bytes = whole.checked_mul(t.size() as u64).ok_or(MPI_ERR_COUNT)?;
    if rest != 0 {
        // A partial copy has a size only when every element has the same size.
        let b = t.uniform_basic().ok_or(MPI_ERR_TYPE)?;
        bytes = bytes
            .checked_add(rest * b.size() as u64)
            .ok_or(MPI_ERR_COUNT)?;
    }
    usize::try_from(bytes).map_err(|_| MPI_ERR_COUNT)
}

/// Records `count` elements of `dt` as the status's byte count.
fn set_elements(s: &mut MPI_Status, dt: MPI_Datatype, count: MPI_Count) -> Result<(), c_int> {
    let bytes = element_bytes(dt, count)?;
    s.MPI_internal[0] = bytes as u32 as c_int;
    s.MPI_internal[1] = (bytes as u64 >> 32) as u32 as c_int;
    Ok(())
}

mpi_fn! {
    fn MPI_Status_set_elements / PMPI_Status_set_elements(status: *mut MPI_Status, datatype: MPI_Datatype, count: c_int) -> c_int {
        // SAFETY: status is NULL or an MPI_Status.
        let r = unsafe { with_status(status, |s| set_elements(s, datatype, MPI_Count::from(count))) };
        finish(MPI_COMM_WORLD, "MPI_Status_set_elements", r)
    }
}

mpi_fn! {
    fn MPI_Status_set_elements_x / PMPI_Status_set_elements_x(status: *mut MPI_Status, datatype: MPI_Datatype, count: MPI_Count) -> c_int {
        // SAFETY: status is NULL or an MPI_Status.
        let r = unsafe { with_status(status, |s| set_elements(s, datatype, count)) };
        finish(MPI_COMM_WORLD, "MPI_Status_set_elements_x", r)
    }
}

mpi_fn! {
    fn MPI_Status_set_elements_c / PMPI_Status_set_elements_c(status: *mut MPI_Status, datatype: MPI_Datatype, count: MPI_Count) -> c_int {
        // SAFETY: status is NULL or an MPI_Status.
        let r = unsafe { with_status(status, |s| set_elements(s, datatype, count)) };
        finish(MPI_COMM_WORLD, "MPI_Status_set_elements_c", r)
    }
}

mpi_fn! {
    fn MPI_Status_set_cancelled / PMPI_Status_set_cancelled(status: *mut MPI_Status, flag: c_int) -> c_int {
        // SAFETY: status is NULL or an MPI_Status.
        let r = unsafe { with_status(status, |s| { s.MPI_internal[2] = c_int::from(flag != 0); Ok(()) }) };
        finish(MPI_COMM_WORLD, "MPI_Status_set_cancelled", r)
    }
}

mpi_fn! {
    fn MPI_Status_set_source / PMPI_Status_set_source(status: *mut MPI_Status, source: c_int) -> c_int {
        // SAFETY: status is NULL or an MPI_Status.
        let r = unsafe { with_status(status, |s| { s.MPI_SOURCE = source; Ok(()) }) };
        finish(MPI_COMM_WORLD, "MPI_Status_set_source", r)
    }
}

mpi_fn! {
    fn MPI_Status_set_tag / PMPI_Status_set_tag(status: *mut MPI_Status, tag: c_int) -> c_int {
        // SAFETY: status is NULL or an MPI_Status.
        let r = unsafe { with_status(status, |s| { s.MPI_TAG = tag; Ok(()) }) };
        finish(MPI_COMM_WORLD, "MPI_Status_set_tag", r)
    }
}

mpi_fn! {
    fn MPI_Status_set_error / PMPI_Status_set_error(status: *mut MPI_Status, err: c_int) -> c_int {
        // SAFETY: status is NULL or an MPI_Status.
        let r = unsafe { with_status(status, |s| { s.MPI_ERROR = err; Ok(()) }) };
        finish(MPI_COMM_WORLD, "MPI_Status_set_error", r)
    }
}

mpi_fn! {
    fn MPI_Status_get_source / PMPI_Status_get_source(status: *mut MPI_Status, source: *mut c_int) -> c_int {
        // SAFETY: status is NULL or an MPI_Status; source NULL or an int.
        let r = unsafe { with_status(status, |s| put(source, s.MPI_SOURCE)) };
        finish(MPI_COMM_WORLD, "MPI_Status_get_source", r)
    }
}

mpi_fn! {
    fn MPI_Status_get_tag / PMPI_Status_get_tag(status: *mut MPI_Status, tag: *mut c_int) -> c_int {
        // SAFETY: status is NULL or an MPI_Status; tag NULL or an int.
        let r = unsafe { with_status(status, |s| put(tag, s.MPI_TAG)) };
        finish(MPI_COMM_WORLD, "MPI_Status_get_tag", r)
    }
}

mpi_fn! {
    fn MPI_Status_get_error / PMPI_Status_get_error(status: *mut MPI_Status, err: *mut c_int) -> c_int {
        // SAFETY: status is NULL or an MPI_Status; err NULL or an int.
        let r = unsafe { with_status(status, |s| put(err, s.MPI_ERROR)) };
        finish(MPI_COMM_WORLD, "MPI_Status_get_error", r)
    }
}

mpi_fn! {
    /// `inoutbuf = inbuf op inoutbuf`, element-wise, locally.
    fn MPI_Reduce_local / PMPI_Reduce_local(inbuf: *const c_void, inoutbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, opx: MPI_Op) -> c_int {
        let r = (|| {
            let n = usize::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
            let t = datatype::lookup_committed(datatype)?;
            let o = op::lookup(opx)?;
            op::check(&o, datatype)?;
            let len = t.size().checked_mul(n).ok_or(MPI_ERR_COUNT)?;
            if len == 0 {
                return Ok(());
            }
            // MPI_IN_PLACE has no meaning here, and aliased buffers are erroneous
            // (MPICH's errors/coll/reduce_local): refused, never dereferenced.
            let in_place = |p: *const c_void| p as usize == MPI_IN_PLACE;
            if inbuf.is_null() || inoutbuf.is_null() || in_place(inbuf) || in_place(inoutbuf) || inbuf == inoutbuf.cast_const() {
                return Err(MPI_ERR_BUFFER);
            }
            let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
            // SAFETY: both buffers hold count elements of the type (C contract).
            unsafe {
                t.pack(inbuf.cast(), n, &mut a);
                t.pack(inoutbuf.cast_const().cast(), n, &mut b);
            }
            op::apply_packed(&o, datatype, &a, &mut b)?;
            // SAFETY: as above.
            unsafe { t.unpack(&b, inoutbuf.cast(), n) };
            Ok(())
        })();
        finish(MPI_COMM_WORLD, "MPI_Reduce_local", r)
    }
}

mpi_fn! {
    /// The C type of a class (MPI_TYPECLASS_INTEGER, _REAL, _COMPLEX) and size in
    /// bytes; MPI_ERR_ARG when there is none.
    fn MPI_Type_match_size / PMPI_Type_match_size(typeclass: c_int, size: c_int, datatype: *mut MPI_Datatype) -> c_int {
        let ld = std::mem::size_of::<f64>() * 2;
        let found: Option<Handle> = match (typeclass, size) {
            (MPI_TYPECLASS_INTEGER, 1) => Some(0x240),
            (MPI_TYPECLASS_INTEGER, 2) => Some(0x248),
            (MPI_TYPECLASS_INTEGER, 4) => Some(0x250),
            (MPI_TYPECLASS_INTEGER, 8) => Some(0x258),
            (MPI_TYPECLASS_REAL, 4) => Some(0x210),
            (MPI_TYPECLASS_REAL, 8) => Some(0x214),
            (MPI_TYPECLASS_REAL, s) if s as usize == ld => Some(0x220),
            (MPI_TYPECLASS_COMPLEX, 8) => Some(0x212),
            (MPI_TYPECLASS_COMPLEX, 16) => Some(0x216),
            (MPI_TYPECLASS_COMPLEX, s) if s as usize == 2 * ld => Some(0x224),
            _ => None,
        };
        // SAFETY: datatype is NULL or an MPI_Datatype.
        let r = found.ok_or(MPI_ERR_ARG).and_then(|h| unsafe { put(datatype, h) });
        finish(MPI_COMM_WORLD, "MPI_Type_match_size", r)
    }
}

/// MPI_Request_get_status of request `i`: `Some(status)` when complete,
/// `None` when not; inactive (MPI_REQUEST_NULL) requests are `Err(())`.
///
/// # Safety
/// `reqs` holds more than `i` requests.
unsafe fn peek(
    reqs: *const MPI_Request,
    i: usize,
) -> Result<Result<Option<MPI_Status>, ()>, c_int> {
    // SAFETY: the caller's contract.
    let r = unsafe { reqs.add(i).read() };
    if r == MPI_REQUEST_NULL {
        return Ok(Err(()));
    }
    let mut flag: c_int = 0;
    // SAFETY: all-zero is a valid MPI_Status (plain ints).
    let mut st: MPI_Status = unsafe { std::mem::zeroed() };
    // SAFETY: flag and st are locals of the right types.
    let rc = unsafe { crate::p2p_more::PMPI_Request_get_status(r, &mut flag, &mut st) };
    if rc != MPI_SUCCESS {
        return Err(rc);
    }
    Ok(Ok((flag != 0).then_some(st)))
}

/// # Safety
/// `reqs` is NULL or holds `count` requests.
unsafe fn requests(reqs: *const MPI_Request, count: c_int) -> Result<usize, c_int> {
    let n = usize::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
    if n > 0 && reqs.is_null() {
        return Err(MPI_ERR_ARG);
    }
    Ok(n)
}

/// The status an inactive request reports.
fn empty_status() -> MPI_Status {
    MPI_Status {
        MPI_SOURCE: MPI_ANY_SOURCE,
        MPI_TAG: MPI_ANY_TAG,
        MPI_ERROR: MPI_SUCCESS,
        MPI_internal: [0; 5],
    }
}

mpi_fn! {
    /// Whether every request is complete, without freeing any; the statuses are
    /// written only then.
    fn MPI_Request_get_status_all / PMPI_Request_get_status_all(count: c_int, array_of_requests: *const MPI_Request, flag: *mut c_int, array_of_statuses: *mut MPI_Status) -> c_int {
        let r = (|| {
            // SAFETY: the C contract for the arrays.
            let n = unsafe { requests(array_of_requests, count) }?;
            let mut sts = Vec::with_capacity(n);
            for i in 0..n {
                // SAFETY: i < n requests.
                match unsafe { peek(array_of_requests, i) }? {
                    Ok(Some(s)) => sts.push(s),
                    Ok(None) => {
                        // SAFETY: flag is NULL or an int.
                        return unsafe { put(flag, 0) };
                    }
                    Err(()) => sts.push(empty_status()),
                }
            }
            if !array_of_statuses.is_null() {
                for (i, s) in sts.into_iter().enumerate() {
                    // SAFETY: the statuses array holds count entries.
                    unsafe { array_of_statuses.add(i).write(s) };
                }
            }
            // SAFETY: flag is NULL or an int.
            unsafe { put(flag, 1) }
        })();
        finish(MPI_COMM_WORLD, "MPI_Request_get_status_all", r)
    }
}

mpi_fn! {
    fn MPI_Request_get_status_any / PMPI_Request_get_status_any(count: c_int, array_of_requests: *const MPI_Request, index: *mut c_int, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
        let r = (|| {
            // SAFETY: the C contract for the array.
            let n = unsafe { requests(array_of_requests, count) }?;
            let mut active = false;
            for i in 0..n {
                // SAFETY: i < n requests.
                match unsafe { peek(array_of_requests, i) }? {
                    Ok(Some(s)) => {
                        if !status.is_null() {
                            // SAFETY: status is an MPI_Status (non-NULL).
                            unsafe { status.write(s) };
                        }
                        // SAFETY: index and flag are NULL or ints.
                        return unsafe { put(index, i as c_int).and_then(|()| put(flag, 1)) };
                    }
                    Ok(None) => active = true,
                    Err(()) => {}
                }
            }
            if active {
                // Nothing completed: index MPI_UNDEFINED too (the standard).
                // SAFETY: index and flag are NULL or ints.
                return unsafe { put(index, MPI_UNDEFINED).and_then(|()| put(flag, 0)) };
            }
            if !status.is_null() {
                // SAFETY: status is an MPI_Status (non-NULL).
                unsafe { status.write(empty_status()) };
            }
            // SAFETY: index and flag are NULL or ints.
            unsafe { put(index, MPI_UNDEFINED).and_then(|()| put(flag, 1)) }
        })();
        finish(MPI_COMM_WORLD, "MPI_Request_get_status_any", r)
    }
}

mpi_fn! {
    fn MPI_Request_get_status_some / PMPI_Request_get_status_some(incount: c_int, array_of_requests: *const MPI_Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MPI_Status) -> c_int {
        let r = (|| {
            // SAFETY: the C contract for the arrays.
            let n = unsafe { requests(array_of_requests, incount) }?;
            let (mut done, mut active) = (0usize, false);
            for i in 0..n {
                // SAFETY: i < n requests.
                match unsafe { peek(array_of_requests, i) }? {
                    Ok(Some(s)) => {
                        if array_of_indices.is_null() {
                            return Err(MPI_ERR_ARG);
                        }
                        // SAFETY: the output arrays hold incount entries.
                        unsafe {
                            array_of_indices.add(done).write(i as c_int);
                            if !array_of_statuses.is_null() {
                                array_of_statuses.add(done).write(s);
                            }
                        }
                        done += 1;
                        active = true;
                    }
                    Ok(None) => active = true,
                    Err(()) => {}
                }
            }
            let v = if active { done as c_int } else { MPI_UNDEFINED };
            // SAFETY: outcount is NULL or an int.
            unsafe { put(outcount, v) }
        })();
        finish(MPI_COMM_WORLD, "MPI_Request_get_status_some", r)
    }
}
