//! The exported data-access functions, each a line of a table over
//! [`access::data`]: the blocking reads and writes through each file pointer
//! (individual, explicit offset, shared, ordered) and their collective `_all`
//! forms; the nonblocking `MPI_File_i*` forms, which do the I/O at once and
//! return a request that is already complete (MPI_Wait/Test give its status); the
//! split collectives (`_begin` does the access, `_end` hands its status back; one
//! at a time per file); and the large-count `_c` twin of each, which takes its
//! `MPI_Count` as it is (the engine counts in 64 bits, so nothing is narrowed).
//!
//! A collective `_all` access is each rank's independent one (no collective
//! buffering); the ordered forms are collective through the shared pointer.

use super::access::{data, Where};
use super::*;
use crate::ffi::{mpi_fn, put};
use std::os::raw::c_void;

/// A completed request for a nonblocking access's status.
fn ready_request(st: crate::p2p::CStatus, name: &str) -> Result<MPI_Request, c_int> {
    crate::runtime::with(name, |rt| {
        crate::p2p::insert_ready(crate::p2p::p2p(rt)?, st)
    })
}

/// Blocking accesses without an offset argument.
macro_rules! blocking {
    ($($name:ident / $pname:ident, $cnt:ty, $w:expr, $write:expr;)*) => {$(
        mpi_fn! {
            fn $name / $pname(fh: MPI_File, buf: *mut c_void, count: $cnt, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
                let name = stringify!($name);
                // SAFETY: the C contract for buf and status.
                let r = unsafe { data(fh, name, $w, buf, i64::from(count), datatype, $write) }
                    // SAFETY: status is NULL or an MPI_Status (the C contract).
                    .map(|st| unsafe { st.store(status) });
                finish(fh, name, r)
            }
        }
    )*};
}

/// Blocking accesses at an explicit offset.
macro_rules! blocking_at {
    ($($name:ident / $pname:ident, $cnt:ty, $write:expr;)*) => {$(
        mpi_fn! {
            fn $name / $pname(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: $cnt, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
                let name = stringify!($name);
                // SAFETY: the C contract for buf and status.
                let r = unsafe { data(fh, name, Where::At(offset), buf, i64::from(count), datatype, $write) }
                    // SAFETY: status is NULL or an MPI_Status (the C contract).
                    .map(|st| unsafe { st.store(status) });
                finish(fh, name, r)
            }
        }
    )*};
}

blocking! {
    MPI_File_read / PMPI_File_read, c_int, Where::Individual, false;
    MPI_File_read_c / PMPI_File_read_c, MPI_Count, Where::Individual, false;
    MPI_File_read_all / PMPI_File_read_all, c_int, Where::Individual, false;
    MPI_File_read_all_c / PMPI_File_read_all_c, MPI_Count, Where::Individual, false;
    MPI_File_read_shared / PMPI_File_read_shared, c_int, Where::Shared, false;
    MPI_File_read_shared_c / PMPI_File_read_shared_c, MPI_Count, Where::Shared, false;
    MPI_File_read_ordered / PMPI_File_read_ordered, c_int, Where::Ordered, false;
    MPI_File_read_ordered_c / PMPI_File_read_ordered_c, MPI_Count, Where::Ordered, false;
    MPI_File_write / PMPI_File_write, c_int, Where::Individual, true;
    MPI_File_write_c / PMPI_File_write_c, MPI_Count, Where::Individual, true;
    MPI_File_write_all / PMPI_File_write_all, c_int, Where::Individual, true;
    MPI_File_write_all_c / PMPI_File_write_all_c, MPI_Count, Where::Individual, true;
    MPI_File_write_shared / PMPI_File_write_shared, c_int, Where::Shared, true;
    MPI_File_write_shared_c / PMPI_File_write_shared_c, MPI_Count, Where::Shared, true;
    MPI_File_write_ordered / PMPI_File_write_ordered, c_int, Where::Ordered, true;
    MPI_File_write_ordered_c / PMPI_File_write_ordered_c, MPI_Count, Where::Ordered, true;
}

blocking_at! {
    MPI_File_read_at / PMPI_File_read_at, c_int, false;
    MPI_File_read_at_c / PMPI_File_read_at_c, MPI_Count, false;
    MPI_File_read_at_all / PMPI_File_read_at_all, c_int, false;
    MPI_File_read_at_all_c / PMPI_File_read_at_all_c, MPI_Count, false;
    MPI_File_write_at / PMPI_File_write_at, c_int, true;
    MPI_File_write_at_c / PMPI_File_write_at_c, MPI_Count, true;
    MPI_File_write_at_all / PMPI_File_write_at_all, c_int, true;
    MPI_File_write_at_all_c / PMPI_File_write_at_all_c, MPI_Count, true;
}

/// Nonblocking accesses without an offset: done now, the request complete.
macro_rules! nonblocking {
    ($($name:ident / $pname:ident, $cnt:ty, $w:expr, $write:expr;)*) => {$(
        mpi_fn! {
            fn $name / $pname(fh: MPI_File, buf: *mut c_void, count: $cnt, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
                let name = stringify!($name);
                let r = (|| {
                    if request.is_null() {
                        return Err(MPI_ERR_ARG);
                    }
                    // SAFETY: the C contract for buf.
                    let st = unsafe { data(fh, name, $w, buf, i64::from(count), datatype, $write) }?;
                    let h = ready_request(st, name)?;
                    // SAFETY: non-NULL, an MPI_Request by the C contract.
                    unsafe { put(request, h) }
                })();
                finish(fh, name, r)
            }
        }
    )*};
}

/// Nonblocking accesses at an explicit offset.
macro_rules! nonblocking_at {
    ($($name:ident / $pname:ident, $cnt:ty, $write:expr;)*) => {$(
        mpi_fn! {
            fn $name / $pname(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: $cnt, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
                let name = stringify!($name);
                let r = (|| {
                    if request.is_null() {
                        return Err(MPI_ERR_ARG);
                    }
                    // SAFETY: the C contract for buf.
                    let st = unsafe { data(fh, name, Where::At(offset), buf, i64::from(count), datatype, $write) }?;
                    let h = ready_request(st, name)?;
                    // SAFETY: non-NULL, an MPI_Request by the C contract.
                    unsafe { put(request, h) }
                })();
                finish(fh, name, r)
            }
        }
    )*};
}

nonblocking! {
    MPI_File_iread / PMPI_File_iread, c_int, Where::Individual, false;
    MPI_File_iread_c / PMPI_File_iread_c, MPI_Count, Where::Individual, false;
    MPI_File_iread_all / PMPI_File_iread_all, c_int, Where::Individual, false;
    MPI_File_iread_all_c / PMPI_File_iread_all_c, MPI_Count, Where::Individual, false;
    MPI_File_iread_shared / PMPI_File_iread_shared, c_int, Where::Shared, false;
    MPI_File_iread_shared_c / PMPI_File_iread_shared_c, MPI_Count, Where::Shared, false;
    MPI_File_iwrite / PMPI_File_iwrite, c_int, Where::Individual, true;
    MPI_File_iwrite_c / PMPI_File_iwrite_c, MPI_Count, Where::Individual, true;
    MPI_File_iwrite_all / PMPI_File_iwrite_all, c_int, Where::Individual, true;
    MPI_File_iwrite_all_c / PMPI_File_iwrite_all_c, MPI_Count, Where::Individual, true;
    MPI_File_iwrite_shared / PMPI_File_iwrite_shared, c_int, Where::Shared, true;
    MPI_File_iwrite_shared_c / PMPI_File_iwrite_shared_c, MPI_Count, Where::Shared, true;
}

nonblocking_at! {
    MPI_File_iread_at / PMPI_File_iread_at, c_int, false;
    MPI_File_iread_at_c / PMPI_File_iread_at_c, MPI_Count, false;
    MPI_File_iread_at_all / PMPI_File_iread_at_all, c_int, false;
    MPI_File_iread_at_all_c / PMPI_File_iread_at_all_c, MPI_Count, false;
    MPI_File_iwrite_at / PMPI_File_iwrite_at, c_int, true;
    MPI_File_iwrite_at_c / PMPI_File_iwrite_at_c, MPI_Count, true;
    MPI_File_iwrite_at_all / PMPI_File_iwrite_at_all, c_int, true;
    MPI_File_iwrite_at_all_c / PMPI_File_iwrite_at_all_c, MPI_Count, true;
}

/// Starts a split collective: one may be pending per file (MPI_ERR_IO otherwise).
///
/// # Safety
/// The C contract for buf.
unsafe fn begin(
    fh: MPI_File,
    name: &str,
    w: Where,
    buf: *mut c_void,
    count: i64,
    dt: MPI_Datatype,
    write: bool,
) -> Result<(), c_int> {
    let f = lookup(fh)?;
    if f.state().split.is_some() {
        return Err(MPI_ERR_IO);
    }
    // SAFETY: forwarded.
    let st = unsafe { data(fh, name, w, buf, count, dt, write) }?;
    f.state().split = Some(st);
    Ok(())
}

/// Ends the pending split collective, storing its status.
///
/// # Safety
/// `status` is NULL or an MPI_Status.
unsafe fn end(fh: MPI_File, status: *mut MPI_Status) -> Result<(), c_int> {
    let f = lookup(fh)?;
    let st = f.state().split.take().ok_or(MPI_ERR_IO)?;
    // SAFETY: the caller's contract.
    unsafe { st.store(status) };
    Ok(())
}

macro_rules! split_begin {
    ($($name:ident / $pname:ident, $cnt:ty, $w:expr, $write:expr;)*) => {$(
        mpi_fn! {
            fn $name / $pname(fh: MPI_File, buf: *mut c_void, count: $cnt, datatype: MPI_Datatype) -> c_int {
                let name = stringify!($name);
                // SAFETY: the C contract for buf.
                let r = unsafe { begin(fh, name, $w, buf, i64::from(count), datatype, $write) };
                finish(fh, name, r)
            }
        }
    )*};
}

macro_rules! split_begin_at {
    ($($name:ident / $pname:ident, $cnt:ty, $write:expr;)*) => {$(
        mpi_fn! {
            fn $name / $pname(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: $cnt, datatype: MPI_Datatype) -> c_int {
                let name = stringify!($name);
                // SAFETY: the C contract for buf.
                let r = unsafe { begin(fh, name, Where::At(offset), buf, i64::from(count), datatype, $write) };
                finish(fh, name, r)
            }
        }
    )*};
}

macro_rules! split_end {
    ($($name:ident / $pname:ident;)*) => {$(
        mpi_fn! {
            fn $name / $pname(fh: MPI_File, _buf: *mut c_void, status: *mut MPI_Status) -> c_int {
                // SAFETY: the C contract for status.
                let r = unsafe { end(fh, status) };
                finish(fh, stringify!($name), r)
            }
        }
    )*};
}

split_begin! {
    MPI_File_read_all_begin / PMPI_File_read_all_begin, c_int, Where::Individual, false;
    MPI_File_read_all_begin_c / PMPI_File_read_all_begin_c, MPI_Count, Where::Individual, false;
    MPI_File_read_ordered_begin / PMPI_File_read_ordered_begin, c_int, Where::Ordered, false;
    MPI_File_read_ordered_begin_c / PMPI_File_read_ordered_begin_c, MPI_Count, Where::Ordered, false;
    MPI_File_write_all_begin / PMPI_File_write_all_begin, c_int, Where::Individual, true;
    MPI_File_write_all_begin_c / PMPI_File_write_all_begin_c, MPI_Count, Where::Individual, true;
    MPI_File_write_ordered_begin / PMPI_File_write_ordered_begin, c_int, Where::Ordered, true;
    MPI_File_write_ordered_begin_c / PMPI_File_write_ordered_begin_c, MPI_Count, Where::Ordered, true;
}

split_begin_at! {
    MPI_File_read_at_all_begin / PMPI_File_read_at_all_begin, c_int, false;
    MPI_File_read_at_all_begin_c / PMPI_File_read_at_all_begin_c, MPI_Count, false;
    MPI_File_write_at_all_begin / PMPI_File_write_at_all_begin, c_int, true;
    MPI_File_write_at_all_begin_c / PMPI_File_write_at_all_begin_c, MPI_Count, true;
}

split_end! {
    MPI_File_read_all_end / PMPI_File_read_all_end;
    MPI_File_read_at_all_end / PMPI_File_read_at_all_end;
    MPI_File_read_ordered_end / PMPI_File_read_ordered_end;
    MPI_File_write_all_end / PMPI_File_write_all_end;
    MPI_File_write_at_all_end / PMPI_File_write_at_all_end;
    MPI_File_write_ordered_end / PMPI_File_write_ordered_end;
}
