//! The nonblocking neighbourhood collectives (MPI_Ineighbor_allgather(v),
//! MPI_Ineighbor_alltoall(v, w)): one schedule per call, a receive per source and a
//! send per destination, all started at once and fenced together.
//!
//! The blocking forms (`topo_nbr.rs`) tell two messages between the same pair of
//! ranks apart by tag (a Cartesian dimension of size 1 or 2, periodic, makes a rank
//! its own or its neighbour's neighbour twice). A schedule has one tag, so here
//! the order does it: every rank starts its receives sorted by the blocking form's
//! receive tag and its sends sorted by the send tag (stable sorts, so a graph's
//! edges keep their order), and point-to-point's non-overtaking rule pairs the
//! k-th send of a tag to a rank with that rank's k-th receive of the tag — the
//! pairing the tags give the blocking forms. MPI_PROC_NULL neighbours move nothing
//! and leave their receive block alone. Blocks are the caller's memory when
//! contiguous, else staged (`super::Staged`).

use super::{builder, launch, Staged};
use crate::abi::*;
use crate::ffi::{finish, mpi_fn};
use crate::topo_nbr::{neighbors, regular, typed, varied, Block};
use std::os::raw::{c_int, c_void};

/// Starts the exchange: `sb[i]` of `sendbuf` to destination slot `i`, source slot
/// `i`'s message into `rb[i]` of `recvbuf`.
///
/// # Safety
/// The blocks lie in the C buffers, valid until the request completes; `request` is
/// NULL or valid for an MPI_Request.
#[allow(clippy::too_many_arguments)]
unsafe fn start(
    comm: MPI_Comm,
    sendbuf: *const c_void,
    sb: impl FnOnce(usize) -> Result<Vec<Block>, c_int>,
    recvbuf: *mut c_void,
    rb: impl FnOnce(usize) -> Result<Vec<Block>, c_int>,
    request: *mut MPI_Request,
    name: &str,
) -> Result<(), c_int> {
    let (c, nb) = neighbors(comm, name)?;
    let (sb, rb) = (sb(nb.dests.len())?, rb(nb.sources.len())?);
    if sendbuf as usize == MPI_IN_PLACE || recvbuf as usize == MPI_IN_PLACE {
        return Err(MPI_ERR_ARG);
    }
    let mut b = builder(&c);
    let mut st = Staged::new();
    let mut order: Vec<usize> = (0..nb.sources.len()).collect();
    order.sort_by_key(|&i| nb.recv_tags.get(i).copied().unwrap_or(0));
    for i in order {
        let (Some(Some(src)), Some(blk)) = (nb.sources.get(i), rb.get(i)) else {
            continue;
        };
        let p = recvbuf
            .cast::<u8>()
            .wrapping_offset(blk.off)
            .cast::<c_void>();
        // SAFETY: the block lies in recvbuf (the caller's contract).
        let r = unsafe { st.output(&mut b, p, blk.n, &blk.t, false) }?;
        b.recv(*src, r.buf, r.off, r.len);
    }
    let mut order: Vec<usize> = (0..nb.dests.len()).collect();
    order.sort_by_key(|&i| nb.send_tags.get(i).copied().unwrap_or(0));
    for i in order {
        let (Some(Some(dst)), Some(blk)) = (nb.dests.get(i), sb.get(i)) else {
            continue;
        };
        let p = sendbuf
            .cast::<u8>()
            .wrapping_offset(blk.off)
            .cast::<c_void>();
        // SAFETY: the block lies in sendbuf (the caller's contract).
        let s = unsafe { st.input(&mut b, p, blk.n, &blk.t, false) }?;
        b.send(*dst, s.buf, s.off, s.len);
    }
    b.fence();
    // SAFETY: the caller's contract for request.
    unsafe { launch(&c, b, st, request, name) }
}

mpi_fn! {
    fn MPI_Ineighbor_allgather / PMPI_Ineighbor_allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Ineighbor_allgather";
        // SAFETY: the C contract for the buffers and request.
        let r = unsafe {
            start(comm, sendbuf, |k| regular(k, sendcount, sendtype, true), recvbuf,
                |k| regular(k, recvcount, recvtype, false), request, name)
        };
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Ineighbor_allgatherv / PMPI_Ineighbor_allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Ineighbor_allgatherv";
        // SAFETY: the C contract for the buffers, arrays (one entry per source) and
        // request.
        let r = unsafe {
            start(comm, sendbuf, |k| regular(k, sendcount, sendtype, true), recvbuf,
                |k| varied(k, recvcounts, displs, recvtype), request, name)
        };
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Ineighbor_alltoall / PMPI_Ineighbor_alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Ineighbor_alltoall";
        // SAFETY: the C contract for the buffers and request.
        let r = unsafe {
            start(comm, sendbuf, |k| regular(k, sendcount, sendtype, false), recvbuf,
                |k| regular(k, recvcount, recvtype, false), request, name)
        };
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Ineighbor_alltoallv / PMPI_Ineighbor_alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Ineighbor_alltoallv";
        // SAFETY: the C contract for the buffers, arrays (one entry per neighbour)
        // and request.
        let r = unsafe {
            start(comm, sendbuf, |k| varied(k, sendcounts, sdispls, sendtype), recvbuf,
                |k| varied(k, recvcounts, rdispls, recvtype), request, name)
        };
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Ineighbor_alltoallw / PMPI_Ineighbor_alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Ineighbor_alltoallw";
        // SAFETY: the C contract for the buffers, arrays (one entry per neighbour)
        // and request.
        let r = unsafe {
            start(comm, sendbuf, |k| typed(k, sendcounts, sdispls, sendtypes), recvbuf,
                |k| typed(k, recvcounts, rdispls, recvtypes), request, name)
        };
        finish(comm, name, r)
    }
}
