//! Large-count forms of the blocking and persistent collectives: see `crate::large_count`.
//!
//! Every body is the same shape (a closure for `?`), also where nothing can fail.
#![allow(clippy::redundant_closure_call)]

use crate::large_count::*;

extern "C" {
    fn PMPI_Allgather(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Allgather_init(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
        info: MPI_Info,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Allgatherv(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        displs: *const c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Allreduce(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Allreduce_init(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
        info: MPI_Info,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Alltoall(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Alltoall_init(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
        info: MPI_Info,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Alltoallv(
        sendbuf: *const c_void,
        sendcounts: *const c_int,
        sdispls: *const c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        rdispls: *const c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Alltoallw(
        sendbuf: *const c_void,
        sendcounts: *const c_int,
        sdispls: *const c_int,
        sendtypes: *const MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        rdispls: *const c_int,
        recvtypes: *const MPI_Datatype,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Bcast(
        buffer: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Bcast_init(
        buffer: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
        info: MPI_Info,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Exscan(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Exscan_init(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
        info: MPI_Info,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Gather(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Gather_init(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
        info: MPI_Info,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Gatherv(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        displs: *const c_int,
        recvtype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Neighbor_allgather(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Neighbor_alltoall(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Reduce(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        root: c_int,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Reduce_init(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        root: c_int,
        comm: MPI_Comm,
        info: MPI_Info,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Reduce_local(
        inbuf: *const c_void,
        inoutbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
    ) -> c_int;
    fn PMPI_Reduce_scatter_block(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        recvcount: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Reduce_scatter_block_init(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        recvcount: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
        info: MPI_Info,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Reduce_scatter(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Scan(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Scan_init(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
        info: MPI_Info,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Scatter(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
    ) -> c_int;
    fn PMPI_Scatter_init(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
        info: MPI_Info,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Scatterv(
        sendbuf: *const c_void,
        sendcounts: *const c_int,
        displs: *const c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
    ) -> c_int;
}

mpi_fn! {
    fn MPI_Allgather_c / PMPI_Allgather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Allgather(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Allgather_c", r)
    }
}

mpi_fn! {
    fn MPI_Allgather_init_c / PMPI_Allgather_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Allgather_init(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, comm, info, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Allgather_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Allgatherv_c / PMPI_Allgatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let recvcounts_int = unsafe { ints_of(recvcounts, peers(comm)) }?;
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let displs_int = unsafe { ints_of(displs, peers(comm)) }?;
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Allgatherv(sendbuf, int_of(sendcount)?, sendtype, recvbuf, ptr_of(&recvcounts_int), ptr_of(&displs_int), recvtype, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Allgatherv_c", r)
    }
}

mpi_fn! {
    fn MPI_Allreduce_c / PMPI_Allreduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Allreduce(sendbuf, recvbuf, int_of(count)?, datatype, op, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Allreduce_c", r)
    }
}

mpi_fn! {
    fn MPI_Allreduce_init_c / PMPI_Allreduce_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Allreduce_init(sendbuf, recvbuf, int_of(count)?, datatype, op, comm, info, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Allreduce_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Alltoall_c / PMPI_Alltoall_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Alltoall(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Alltoall_c", r)
    }
}

mpi_fn! {
    fn MPI_Alltoall_init_c / PMPI_Alltoall_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Alltoall_init(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, comm, info, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Alltoall_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Alltoallv_c / PMPI_Alltoallv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let sendcounts_int = unsafe { ints_of(sendcounts, if sendbuf == MPI_IN_PLACE as *const c_void { None } else { peers(comm) }) }?;
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let sdispls_int = unsafe { ints_of(sdispls, if sendbuf == MPI_IN_PLACE as *const c_void { None } else { peers(comm) }) }?;
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let recvcounts_int = unsafe { ints_of(recvcounts, peers(comm)) }?;
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let rdispls_int = unsafe { ints_of(rdispls, peers(comm)) }?;
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Alltoallv(sendbuf, ptr_of(&sendcounts_int), ptr_of(&sdispls_int), sendtype, recvbuf, ptr_of(&recvcounts_int), ptr_of(&rdispls_int), recvtype, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Alltoallv_c", r)
    }
}

mpi_fn! {
    fn MPI_Alltoallw_c / PMPI_Alltoallw_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let sendcounts_int = unsafe { ints_of(sendcounts, if sendbuf == MPI_IN_PLACE as *const c_void { None } else { peers(comm) }) }?;
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let sdispls_int = unsafe { ints_of(sdispls, if sendbuf == MPI_IN_PLACE as *const c_void { None } else { peers(comm) }) }?;
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let recvcounts_int = unsafe { ints_of(recvcounts, peers(comm)) }?;
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let rdispls_int = unsafe { ints_of(rdispls, peers(comm)) }?;
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Alltoallw(sendbuf, ptr_of(&sendcounts_int), ptr_of(&sdispls_int), sendtypes, recvbuf, ptr_of(&recvcounts_int), ptr_of(&rdispls_int), recvtypes, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Alltoallw_c", r)
    }
}

mpi_fn! {
    fn MPI_Bcast_c / PMPI_Bcast_c(buffer: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Bcast(buffer, int_of(count)?, datatype, root, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Bcast_c", r)
    }
}

mpi_fn! {
    fn MPI_Bcast_init_c / PMPI_Bcast_init_c(buffer: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Bcast_init(buffer, int_of(count)?, datatype, root, comm, info, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Bcast_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Exscan_c / PMPI_Exscan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Exscan(sendbuf, recvbuf, int_of(count)?, datatype, op, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Exscan_c", r)
    }
}

mpi_fn! {
    fn MPI_Exscan_init_c / PMPI_Exscan_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Exscan_init(sendbuf, recvbuf, int_of(count)?, datatype, op, comm, info, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Exscan_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Gather_c / PMPI_Gather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Gather(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, root, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Gather_c", r)
    }
}

mpi_fn! {
    fn MPI_Gather_init_c / PMPI_Gather_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Gather_init(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, root, comm, info, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Gather_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Gatherv_c / PMPI_Gatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let recvcounts_int = unsafe { ints_of(recvcounts, root_len(comm, root)) }?;
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let displs_int = unsafe { ints_of(displs, root_len(comm, root)) }?;
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Gatherv(sendbuf, int_of(sendcount)?, sendtype, recvbuf, ptr_of(&recvcounts_int), ptr_of(&displs_int), recvtype, root, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Gatherv_c", r)
    }
}

mpi_fn! {
    fn MPI_Neighbor_allgather_c / PMPI_Neighbor_allgather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Neighbor_allgather(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Neighbor_allgather_c", r)
    }
}

mpi_fn! {
    fn MPI_Neighbor_alltoall_c / PMPI_Neighbor_alltoall_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Neighbor_alltoall(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Neighbor_alltoall_c", r)
    }
}

mpi_fn! {
    fn MPI_Reduce_c / PMPI_Reduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Reduce(sendbuf, recvbuf, int_of(count)?, datatype, op, root, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Reduce_c", r)
    }
}

mpi_fn! {
    fn MPI_Reduce_init_c / PMPI_Reduce_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Reduce_init(sendbuf, recvbuf, int_of(count)?, datatype, op, root, comm, info, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Reduce_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Reduce_local_c / PMPI_Reduce_local_c(inbuf: *const c_void, inoutbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Reduce_local(inbuf, inoutbuf, int_of(count)?, datatype, op) };
            Ok(rc)
        })();
        relay(MPI_COMM_WORLD, "MPI_Reduce_local_c", r)
    }
}

mpi_fn! {
    fn MPI_Reduce_scatter_block_c / PMPI_Reduce_scatter_block_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Reduce_scatter_block(sendbuf, recvbuf, int_of(recvcount)?, datatype, op, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Reduce_scatter_block_c", r)
    }
}

mpi_fn! {
    fn MPI_Reduce_scatter_block_init_c / PMPI_Reduce_scatter_block_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Reduce_scatter_block_init(sendbuf, recvbuf, int_of(recvcount)?, datatype, op, comm, info, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Reduce_scatter_block_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Reduce_scatter_c / PMPI_Reduce_scatter_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let recvcounts_int = unsafe { ints_of(recvcounts, local(comm)) }?;
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Reduce_scatter(sendbuf, recvbuf, ptr_of(&recvcounts_int), datatype, op, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Reduce_scatter_c", r)
    }
}

mpi_fn! {
    fn MPI_Scan_c / PMPI_Scan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Scan(sendbuf, recvbuf, int_of(count)?, datatype, op, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Scan_c", r)
    }
}

mpi_fn! {
    fn MPI_Scan_init_c / PMPI_Scan_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Scan_init(sendbuf, recvbuf, int_of(count)?, datatype, op, comm, info, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Scan_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Scatter_c / PMPI_Scatter_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Scatter(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, root, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Scatter_c", r)
    }
}

mpi_fn! {
    fn MPI_Scatter_init_c / PMPI_Scatter_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Scatter_init(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, root, comm, info, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Scatter_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Scatterv_c / PMPI_Scatterv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let sendcounts_int = unsafe { ints_of(sendcounts, root_len(comm, root)) }?;
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let displs_int = unsafe { ints_of(displs, root_len(comm, root)) }?;
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Scatterv(sendbuf, ptr_of(&sendcounts_int), ptr_of(&displs_int), sendtype, recvbuf, int_of(recvcount)?, recvtype, root, comm) };
            Ok(rc)
        })();
        relay(comm, "MPI_Scatterv_c", r)
    }
}
