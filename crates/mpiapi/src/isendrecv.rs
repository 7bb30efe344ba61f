//! MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4): a send and a receive started
//! together, completed by one request.
//!
//! The request is the receive's. The outgoing data is packed into a copy of the
//! library's first, and its send finishes in the background, as a send freed with
//! MPI_Request_free does (the engine keeps the copy until it is delivered): so when
//! the request completes, the receive has arrived and the caller's send buffer is free
//! to reuse, which is what the standard promises. The price is one copy of the
//! outgoing message, as MPI_Sendrecv_replace pays anyway; an error of the background
//! send is not reported (the receive's is). Must never keep the caller's send buffer.

use crate::abi::*;
use crate::datatype;
use crate::ffi::{finish, mpi_fn, put};
use crate::p2p::*;
use crate::runtime;
use myrix_mpi::p2p::SendMode;
use std::os::raw::{c_int, c_void};

/// Starts the send of `count` elements of `dt` at `buf` from a packed copy, left to
/// finish in the background.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (the C contract).
unsafe fn send_copy(
    buf: *const c_void,
    count: c_int,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    name: &str,
) -> Result<(), c_int> {
    let n = check_count(count)?;
    let t = datatype::lookup_committed(dt)?;
    let len = t.size().checked_mul(n).ok_or(MPI_ERR_COUNT)?;
    let len_c = c_int::try_from(len).map_err(|_| MPI_ERR_COUNT)?;
    let mut copy = vec![0u8; len];
    // SAFETY: buf holds count elements (the caller's contract).
    unsafe { t.pack(buf.cast(), n, &mut copy) };
    let a = SendArgs {
        buf: copy.as_ptr().cast(),
        count: len_c,
        dt: MPI_BYTE,
        dest,
        tag,
        comm,
        mode: SendMode::Standard,
        buffered: false,
        name,
    };
    // SAFETY: the copy is `len` readable bytes, kept alive below until the send ends.
    let sh = unsafe { start_send(&a)? };
    runtime::with(name, |rt| {
        let p = p2p(rt)?;
        let Some(r) = p.reqs.get_mut(sh) else {
            return Ok(());
        };
        if r.id.is_none() {
            // Already delivered (or to MPI_PROC_NULL): nothing to keep.
            drop(copy);
        } else {
            r.finish = Finish::Hold(copy, false);
        }
        crate::p2p_more::free(p, sh)
    })
}

mpi_fn! {
    fn MPI_Isendrecv / PMPI_Isendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Isendrecv";
        let r = (|| {
            if request.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // The receive first: a message from ourselves must find it posted.
            // SAFETY: the C contract for the receive buffer.
            let rh = unsafe { start_recv(recvbuf, recvcount, recvtype, source, recvtag, comm, name, false)? };
            // SAFETY: the C contract for the send buffer.
            if let Err(e) = unsafe { send_copy(sendbuf, sendcount, sendtype, dest, sendtag, comm, name) } {
                let _ = runtime::with(name, |rt| {
                    let p = p2p(rt)?;
                    let _ = crate::p2p_more::cancel(p, rh);
                    crate::p2p_more::free(p, rh)
                });
                return Err(e);
            }
            // SAFETY: non-NULL, an MPI_Request by the contract.
            unsafe { put(request, rh) }
        })();
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Isendrecv_replace / PMPI_Isendrecv_replace(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Isendrecv_replace";
        let r = (|| {
            if request.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // The copy is taken before the receive may write the buffer.
            // SAFETY: the C contract for buf.
            unsafe { send_copy(buf, count, datatype, dest, sendtag, comm, name)? };
            // SAFETY: as above.
            let rh = unsafe { start_recv(buf, count, datatype, source, recvtag, comm, name, false)? };
            // SAFETY: non-NULL, an MPI_Request by the contract.
            unsafe { put(request, rh) }
        })();
        finish(comm, name, r)
    }
}
