//! Large-count forms of the nonblocking collectives: see `crate::large_count`.
//!
//! Every body is the same shape (a closure for `?`), also where nothing can fail.
#![allow(clippy::redundant_closure_call)]

use crate::large_count::*;

extern "C" {
    fn PMPI_Iallgather(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
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
    fn PMPI_Iallreduce(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Ialltoall(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
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
    fn PMPI_Ibcast(
        buffer: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Iexscan(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Igather(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        root: c_int,
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
    fn PMPI_Ireduce(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        root: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Ireduce_scatter_block(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        recvcount: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
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
    fn PMPI_Iscan(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    fn PMPI_Iscatter(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
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
}

mpi_fn! {
    fn MPI_Iallgather_c / PMPI_Iallgather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Iallgather(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Iallgather_c", r)
    }
}

mpi_fn! {
    fn MPI_Iallgatherv_c / PMPI_Iallgatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let recvcounts_int = unsafe { ints_of(recvcounts, peers(comm)) }?;
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let displs_int = unsafe { ints_of(displs, peers(comm)) }?;
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Iallgatherv(sendbuf, int_of(sendcount)?, sendtype, recvbuf, ptr_of(&recvcounts_int), ptr_of(&displs_int), recvtype, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Iallgatherv_c", r)
    }
}

mpi_fn! {
    fn MPI_Iallreduce_c / PMPI_Iallreduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Iallreduce(sendbuf, recvbuf, int_of(count)?, datatype, op, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Iallreduce_c", r)
    }
}

mpi_fn! {
    fn MPI_Ialltoall_c / PMPI_Ialltoall_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Ialltoall(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Ialltoall_c", r)
    }
}

mpi_fn! {
    fn MPI_Ialltoallv_c / PMPI_Ialltoallv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
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
            let rc = unsafe { PMPI_Ialltoallv(sendbuf, ptr_of(&sendcounts_int), ptr_of(&sdispls_int), sendtype, recvbuf, ptr_of(&recvcounts_int), ptr_of(&rdispls_int), recvtype, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Ialltoallv_c", r)
    }
}

mpi_fn! {
    fn MPI_Ialltoallw_c / PMPI_Ialltoallw_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
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
            let rc = unsafe { PMPI_Ialltoallw(sendbuf, ptr_of(&sendcounts_int), ptr_of(&sdispls_int), sendtypes, recvbuf, ptr_of(&recvcounts_int), ptr_of(&rdispls_int), recvtypes, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Ialltoallw_c", r)
    }
}

mpi_fn! {
    fn MPI_Ibcast_c / PMPI_Ibcast_c(buffer: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Ibcast(buffer, int_of(count)?, datatype, root, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Ibcast_c", r)
    }
}

mpi_fn! {
    fn MPI_Iexscan_c / PMPI_Iexscan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Iexscan(sendbuf, recvbuf, int_of(count)?, datatype, op, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Iexscan_c", r)
    }
}

mpi_fn! {
    fn MPI_Igather_c / PMPI_Igather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Igather(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, root, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Igather_c", r)
    }
}

mpi_fn! {
    fn MPI_Igatherv_c / PMPI_Igatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let recvcounts_int = unsafe { ints_of(recvcounts, root_len(comm, root)) }?;
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let displs_int = unsafe { ints_of(displs, root_len(comm, root)) }?;
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Igatherv(sendbuf, int_of(sendcount)?, sendtype, recvbuf, ptr_of(&recvcounts_int), ptr_of(&displs_int), recvtype, root, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Igatherv_c", r)
    }
}

mpi_fn! {
    fn MPI_Ireduce_c / PMPI_Ireduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Ireduce(sendbuf, recvbuf, int_of(count)?, datatype, op, root, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Ireduce_c", r)
    }
}

mpi_fn! {
    fn MPI_Ireduce_scatter_block_c / PMPI_Ireduce_scatter_block_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Ireduce_scatter_block(sendbuf, recvbuf, int_of(recvcount)?, datatype, op, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Ireduce_scatter_block_c", r)
    }
}

mpi_fn! {
    fn MPI_Ireduce_scatter_c / PMPI_Ireduce_scatter_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let recvcounts_int = unsafe { ints_of(recvcounts, local(comm)) }?;
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Ireduce_scatter(sendbuf, recvbuf, ptr_of(&recvcounts_int), datatype, op, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Ireduce_scatter_c", r)
    }
}

mpi_fn! {
    fn MPI_Iscan_c / PMPI_Iscan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Iscan(sendbuf, recvbuf, int_of(count)?, datatype, op, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Iscan_c", r)
    }
}

mpi_fn! {
    fn MPI_Iscatter_c / PMPI_Iscatter_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Iscatter(sendbuf, int_of(sendcount)?, sendtype, recvbuf, int_of(recvcount)?, recvtype, root, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Iscatter_c", r)
    }
}

mpi_fn! {
    fn MPI_Iscatterv_c / PMPI_Iscatterv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let r = (|| -> Result<c_int, c_int> {
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let sendcounts_int = unsafe { ints_of(sendcounts, root_len(comm, root)) }?;
            // SAFETY: arrays of the C caller, as long as the int form reads.
            let displs_int = unsafe { ints_of(displs, root_len(comm, root)) }?;
            // SAFETY: the caller's arguments, counts narrowed (checked).
            let rc = unsafe { PMPI_Iscatterv(sendbuf, ptr_of(&sendcounts_int), ptr_of(&displs_int), sendtype, recvbuf, int_of(recvcount)?, recvtype, root, comm, request) };
            Ok(rc)
        })();
        relay(comm, "MPI_Iscatterv_c", r)
    }
}
