//! The C entry points of the basic point-to-point calls (MPI_Send and its modes,
//! MPI_Isend and its modes, MPI_Recv, MPI_Irecv): each tries the fast path of
//! `p2p_fast.rs` (a predefined communicator and contiguous type), then the general
//! path of [`super`].

use super::*;

#[path = "p2p_fast.rs"]
mod fast;
use fast::*;

/// # Safety
/// `buf` holds `count` elements of `dt`; `st` is NULL or an MPI_Status.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn blocking_recv(
    buf: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: MPI_Comm,
    st: *mut MPI_Status,
    name: &str,
) -> Result<(), c_int> {
    // SAFETY: forwarded.
    if let Some(r) = unsafe { fast_recv(buf, count, dt, src, tag, comm, st, name) } {
        return r;
    }
    // SAFETY: forwarded.
    let mut h = unsafe { start_recv(buf, count, dt, src, tag, comm, name, false)? };
    // SAFETY: h is ours; st by the contract.
    unsafe { wait_handle(&mut h, st, name) }
}

/// # Safety
/// The C contract for `buf`.
pub(crate) unsafe fn blocking_send(a: &SendArgs<'_>) -> Result<(), c_int> {
    // SAFETY: forwarded.
    if let Some(r) = unsafe { fast_send(a) } {
        return r;
    }
    // SAFETY: forwarded.
    let mut h = unsafe { start_send(a)? };
    // SAFETY: h is ours.
    unsafe { wait_handle(&mut h, std::ptr::null_mut(), a.name) }
}

macro_rules! send_fns {
    ($($name:ident / $pname:ident : $mode:expr, $buffered:expr;)*) => {$(
        mpi_fn! {
            fn $name / $pname(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
                let a = SendArgs { buf, count, dt: datatype, dest, tag, comm, mode: $mode, buffered: $buffered, name: stringify!($name) };
                // SAFETY: the C contract for buf.
                let r = unsafe { blocking_send(&a) };
                finish(comm, stringify!($name), r)
            }
        }
    )*};
}

send_fns! {
    MPI_Send / PMPI_Send: SendMode::Standard, false;
    MPI_Ssend / PMPI_Ssend: SendMode::Sync, false;
    MPI_Rsend / PMPI_Rsend: SendMode::Ready, false;
    MPI_Bsend / PMPI_Bsend: SendMode::Standard, true;
}

macro_rules! isend_fns {
    ($($name:ident / $pname:ident : $mode:expr, $buffered:expr;)*) => {$(
        mpi_fn! {
            fn $name / $pname(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
                let a = SendArgs { buf, count, dt: datatype, dest, tag, comm, mode: $mode, buffered: $buffered, name: stringify!($name) };
                let r = if request.is_null() {
                    Err(MPI_ERR_ARG)
                } else {
                    // SAFETY: the C contract for buf and request.
                    unsafe {
                        match fast_isend(&a) {
                            Some(r) => r,
                            None => start_send(&a),
                        }
                        .and_then(|h| put(request, h))
                    }
                };
                finish(comm, stringify!($name), r)
            }
        }
    )*};
}

isend_fns! {
    MPI_Isend / PMPI_Isend: SendMode::Standard, false;
    MPI_Issend / PMPI_Issend: SendMode::Sync, false;
    MPI_Irsend / PMPI_Irsend: SendMode::Ready, false;
    MPI_Ibsend / PMPI_Ibsend: SendMode::Standard, true;
}

mpi_fn! {
    fn MPI_Recv / PMPI_Recv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
        // SAFETY: the C contract for buf and status.
        let r = unsafe { blocking_recv(buf, count, datatype, source, tag, comm, status, "MPI_Recv") };
        finish(comm, "MPI_Recv", r)
    }
}

mpi_fn! {
    fn MPI_Irecv / PMPI_Irecv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = if request.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: the C contract for buf and request.
            unsafe {
                match fast_irecv(buf, count, datatype, source, tag, comm, "MPI_Irecv") {
                    Some(r) => r,
                    None => start_recv(buf, count, datatype, source, tag, comm, "MPI_Irecv", false),
                }
                .and_then(|h| put(request, h))
            }
        };
        finish(comm, "MPI_Irecv", r)
    }
}
