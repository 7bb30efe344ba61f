//! Large-count forms of the persistent v-collectives (`MPI_Allgatherv_init_c` …): see
//! `crate::large_count`. Their count and displacement arrays are narrowed once, at
//! init, into arrays the request owns (the int forms keep the caller's, which the
//! program must leave alone until it frees the request); each start issues the
//! nonblocking int form over them. The neighbourhood forms' arrays have one entry
//! per source or destination; those without arrays are lines of `narrowed!`.
#![allow(clippy::redundant_closure_call)]

use crate::large_count::*;
use crate::pcoll::{init, Starter};
use std::sync::Arc;

extern "C" {
    fn PMPI_Iallgatherv(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        displs: *const c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Ialltoallv(
        sendbuf: *const c_void,
        sendcounts: *const c_int,
        sdispls: *const c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        rdispls: *const c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Ialltoallw(
        sendbuf: *const c_void,
        sendcounts: *const c_int,
        sdispls: *const c_int,
        sendtypes: *const MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        rdispls: *const c_int,
        recvtypes: *const MPI_Datatype,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Igatherv(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        displs: *const c_int,
        recvtype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Iscatterv(
        sendbuf: *const c_void,
        sendcounts: *const c_int,
        displs: *const c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Ineighbor_allgatherv(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        displs: *const c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Ineighbor_alltoallv(
        sendbuf: *const c_void,
        sendcounts: *const c_int,
        sdispls: *const c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        rdispls: *const c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Ineighbor_alltoallw(
        sendbuf: *const c_void,
        sendcounts: *const c_int,
        sdispls: *const MPI_Aint,
        sendtypes: *const MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        rdispls: *const MPI_Aint,
        recvtypes: *const MPI_Datatype,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Ireduce_scatter(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
}

/// The persistent request over `start`, its code as the int form gives it.
fn make(comm: MPI_Comm, request: *mut MPI_Request, start: Starter, name: &str) -> c_int {
    finish(comm, name, init(comm, request, start, name))
}

/// Send arrays of an all-to-all: unread with `MPI_IN_PLACE`.
fn send_len(sendbuf: *const c_void, comm: MPI_Comm) -> Option<usize> {
    if sendbuf as usize == MPI_IN_PLACE {
        None
    } else {
        peers(comm)
    }
}

mpi_fn! {
    fn MPI_Allgatherv_init_c / PMPI_Allgatherv_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Allgatherv_init_c";
        let _ = info;
        let r = (|| -> Result<c_int, c_int> {
            let sc = int_of(sendcount)?;
            // SAFETY: arrays of the C caller, one entry per peer.
            let (rc, rd) = unsafe { (ints_of(recvcounts, peers(comm))?, ints_of(displs, peers(comm))?) };
            let (sb, rb) = (sendbuf as usize, recvbuf as usize);
            let start: Starter = Arc::new(move |req| {
                // SAFETY: the buffers the program keeps until it frees the request;
                // the arrays are the request's own.
                unsafe { PMPI_Iallgatherv(sb as *const c_void, sc, sendtype, rb as *mut c_void, ptr_of(&rc), ptr_of(&rd), recvtype, comm, req) }
            });
            Ok(make(comm, request, start, name))
        })();
        relay(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Alltoallv_init_c / PMPI_Alltoallv_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Alltoallv_init_c";
        let _ = info;
        let r = (|| -> Result<c_int, c_int> {
            let n = send_len(sendbuf, comm);
            // SAFETY: arrays of the C caller, one entry per peer.
            let (sc, sd, rc, rd) = unsafe {
                (ints_of(sendcounts, n)?, ints_of(sdispls, n)?, ints_of(recvcounts, peers(comm))?, ints_of(rdispls, peers(comm))?)
            };
            let (sb, rb) = (sendbuf as usize, recvbuf as usize);
            let start: Starter = Arc::new(move |req| {
                // SAFETY: as in MPI_Allgatherv_init_c.
                unsafe { PMPI_Ialltoallv(sb as *const c_void, ptr_of(&sc), ptr_of(&sd), sendtype, rb as *mut c_void, ptr_of(&rc), ptr_of(&rd), recvtype, comm, req) }
            });
            Ok(make(comm, request, start, name))
        })();
        relay(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Alltoallw_init_c / PMPI_Alltoallw_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Alltoallw_init_c";
        let _ = info;
        let r = (|| -> Result<c_int, c_int> {
            let n = send_len(sendbuf, comm);
            // SAFETY: arrays of the C caller, one entry per peer.
            let (sc, sd, rc, rd) = unsafe {
                (ints_of(sendcounts, n)?, ints_of(sdispls, n)?, ints_of(recvcounts, peers(comm))?, ints_of(rdispls, peers(comm))?)
            };
            // The type arrays stay the caller's, as with the int form.
            let (sb, rb, st, rt) = (sendbuf as usize, recvbuf as usize, sendtypes as usize, recvtypes as usize);
            let start: Starter = Arc::new(move |req| {
                // SAFETY: as in MPI_Allgatherv_init_c; the type arrays are kept by
                // the program as for MPI_Alltoallw_init.
                unsafe { PMPI_Ialltoallw(sb as *const c_void, ptr_of(&sc), ptr_of(&sd), st as *const MPI_Datatype, rb as *mut c_void, ptr_of(&rc), ptr_of(&rd), rt as *const MPI_Datatype, comm, req) }
            });
            Ok(make(comm, request, start, name))
        })();
        relay(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Gatherv_init_c / PMPI_Gatherv_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Gatherv_init_c";
        let _ = info;
        let r = (|| -> Result<c_int, c_int> {
            let sc = int_of(sendcount)?;
            let n = root_len(comm, root);
            // SAFETY: arrays of the C caller, read at the root.
            let (rc, rd) = unsafe { (ints_of(recvcounts, n)?, ints_of(displs, n)?) };
            let (sb, rb) = (sendbuf as usize, recvbuf as usize);
            let start: Starter = Arc::new(move |req| {
                // SAFETY: as in MPI_Allgatherv_init_c.
                unsafe { PMPI_Igatherv(sb as *const c_void, sc, sendtype, rb as *mut c_void, ptr_of(&rc), ptr_of(&rd), recvtype, root, comm, req) }
            });
            Ok(make(comm, request, start, name))
        })();
        relay(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Scatterv_init_c / PMPI_Scatterv_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Scatterv_init_c";
        let _ = info;
        let r = (|| -> Result<c_int, c_int> {
            let rcount = int_of(recvcount)?;
            let n = root_len(comm, root);
            // SAFETY: arrays of the C caller, read at the root.
            let (sc, sd) = unsafe { (ints_of(sendcounts, n)?, ints_of(displs, n)?) };
            let (sb, rb) = (sendbuf as usize, recvbuf as usize);
            let start: Starter = Arc::new(move |req| {
                // SAFETY: as in MPI_Allgatherv_init_c.
                unsafe { PMPI_Iscatterv(sb as *const c_void, ptr_of(&sc), ptr_of(&sd), sendtype, rb as *mut c_void, rcount, recvtype, root, comm, req) }
            });
            Ok(make(comm, request, start, name))
        })();
        relay(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Reduce_scatter_init_c / PMPI_Reduce_scatter_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Reduce_scatter_init_c";
        let _ = info;
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: an array of the C caller, one entry per member.
            let rc = unsafe { ints_of(recvcounts, local(comm))? };
            let (sb, rb) = (sendbuf as usize, recvbuf as usize);
            let start: Starter = Arc::new(move |req| {
                // SAFETY: as in MPI_Allgatherv_init_c.
                unsafe { PMPI_Ireduce_scatter(sb as *const c_void, rb as *mut c_void, ptr_of(&rc), datatype, op, comm, req) }
            });
            Ok(make(comm, request, start, name))
        })();
        relay(comm, name, r)
    }
}

narrowed! {
    fn MPI_Neighbor_allgather_init_c / PMPI_Neighbor_allgather_init_c => PMPI_Neighbor_allgather_init on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request,
    )

    fn MPI_Neighbor_alltoall_init_c / PMPI_Neighbor_alltoall_init_c => PMPI_Neighbor_alltoall_init on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request,
    )
}

mpi_fn! {
    fn MPI_Neighbor_allgatherv_init_c / PMPI_Neighbor_allgatherv_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Neighbor_allgatherv_init_c";
        let _ = info;
        let r = (|| -> Result<c_int, c_int> {
            let sc = int_of(sendcount)?;
            let n = in_degree(comm);
            // SAFETY: arrays of the C caller, one entry per source.
            let (rc, rd) = unsafe { (ints_of(recvcounts, n)?, ints_of(displs, n)?) };
            let (sb, rb) = (sendbuf as usize, recvbuf as usize);
            let start: Starter = Arc::new(move |req| {
                // SAFETY: as in MPI_Allgatherv_init_c.
                unsafe { PMPI_Ineighbor_allgatherv(sb as *const c_void, sc, sendtype, rb as *mut c_void, ptr_of(&rc), ptr_of(&rd), recvtype, comm, req) }
            });
            Ok(make(comm, request, start, name))
        })();
        relay(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Neighbor_alltoallv_init_c / PMPI_Neighbor_alltoallv_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Neighbor_alltoallv_init_c";
        let _ = info;
        let r = (|| -> Result<c_int, c_int> {
            let (o, i) = (out_degree(comm), in_degree(comm));
            // SAFETY: arrays of the C caller, one entry per destination (send) or
            // source (receive).
            let (sc, sd, rc, rd) = unsafe {
                (ints_of(sendcounts, o)?, ints_of(sdispls, o)?, ints_of(recvcounts, i)?, ints_of(rdispls, i)?)
            };
            let (sb, rb) = (sendbuf as usize, recvbuf as usize);
            let start: Starter = Arc::new(move |req| {
                // SAFETY: as in MPI_Allgatherv_init_c.
                unsafe { PMPI_Ineighbor_alltoallv(sb as *const c_void, ptr_of(&sc), ptr_of(&sd), sendtype, rb as *mut c_void, ptr_of(&rc), ptr_of(&rd), recvtype, comm, req) }
            });
            Ok(make(comm, request, start, name))
        })();
        relay(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Neighbor_alltoallw_init_c / PMPI_Neighbor_alltoallw_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Neighbor_alltoallw_init_c";
        let _ = info;
        let r = (|| -> Result<c_int, c_int> {
            let (o, i) = (out_degree(comm), in_degree(comm));
            // SAFETY: arrays of the C caller, one entry per destination or source.
            let (sc, rc) = unsafe { (ints_of(sendcounts, o)?, ints_of(recvcounts, i)?) };
            // The displacement and type arrays stay the caller's (already MPI_Aint,
            // as in the int form).
            let (sb, rb) = (sendbuf as usize, recvbuf as usize);
            let (sd, rd, st, rt) = (sdispls as usize, rdispls as usize, sendtypes as usize, recvtypes as usize);
            let start: Starter = Arc::new(move |req| {
                // SAFETY: as in MPI_Alltoallw_init_c.
                unsafe { PMPI_Ineighbor_alltoallw(sb as *const c_void, ptr_of(&sc), sd as *const MPI_Aint, st as *const MPI_Datatype, rb as *mut c_void, ptr_of(&rc), rd as *const MPI_Aint, rt as *const MPI_Datatype, comm, req) }
            });
            Ok(make(comm, request, start, name))
        })();
        relay(comm, name, r)
    }
}
