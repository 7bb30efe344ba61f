//! Large-count forms of the nonblocking collectives: see `crate::large_count`.
//!
//! The plain adapters are lines of `narrowed!`; by hand, the ones with out-parameters.
#![allow(clippy::redundant_closure_call)]

use crate::large_count::*;

narrowed! {
    fn MPI_Iallgather_c / PMPI_Iallgather_c => PMPI_Iallgather on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Iallgatherv_c / PMPI_Iallgatherv_c => PMPI_Iallgatherv on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcounts: *const MPI_Count => *const c_int [peers(comm)],
        displs: *const MPI_Aint => *const c_int [peers(comm)], recvtype: MPI_Datatype,
        comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Iallreduce_c / PMPI_Iallreduce_c => PMPI_Iallreduce on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Ialltoall_c / PMPI_Ialltoall_c => PMPI_Ialltoall on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Ialltoallv_c / PMPI_Ialltoallv_c => PMPI_Ialltoallv on comm;
    (
        sendbuf: *const c_void,
        sendcounts: *const MPI_Count => *const c_int [if sendbuf == MPI_IN_PLACE as *const c_void { None } else { peers(comm) }],
        sdispls: *const MPI_Aint => *const c_int [if sendbuf == MPI_IN_PLACE as *const c_void { None } else { peers(comm) }],
        sendtype: MPI_Datatype, recvbuf: *mut c_void,
        recvcounts: *const MPI_Count => *const c_int [peers(comm)],
        rdispls: *const MPI_Aint => *const c_int [peers(comm)], recvtype: MPI_Datatype,
        comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Ialltoallw_c / PMPI_Ialltoallw_c => PMPI_Ialltoallw on comm;
    (
        sendbuf: *const c_void,
        sendcounts: *const MPI_Count => *const c_int [if sendbuf == MPI_IN_PLACE as *const c_void { None } else { peers(comm) }],
        sdispls: *const MPI_Aint => *const c_int [if sendbuf == MPI_IN_PLACE as *const c_void { None } else { peers(comm) }],
        sendtypes: *const MPI_Datatype, recvbuf: *mut c_void,
        recvcounts: *const MPI_Count => *const c_int [peers(comm)],
        rdispls: *const MPI_Aint => *const c_int [peers(comm)], recvtypes: *const MPI_Datatype,
        comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Ibcast_c / PMPI_Ibcast_c => PMPI_Ibcast on comm;
    (
        buffer: *mut c_void, count: MPI_Count => c_int, datatype: MPI_Datatype, root: c_int,
        comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Iexscan_c / PMPI_Iexscan_c => PMPI_Iexscan on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Igather_c / PMPI_Igather_c => PMPI_Igather on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        root: c_int, comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Igatherv_c / PMPI_Igatherv_c => PMPI_Igatherv on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const MPI_Count => *const c_int [root_len(comm, root)],
        displs: *const MPI_Aint => *const c_int [root_len(comm, root)], recvtype: MPI_Datatype,
        root: c_int, comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Ireduce_c / PMPI_Ireduce_c => PMPI_Ireduce on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm,
        request: *mut MPI_Request,
    )

    fn MPI_Ireduce_scatter_block_c / PMPI_Ireduce_scatter_block_c => PMPI_Ireduce_scatter_block on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Ireduce_scatter_c / PMPI_Ireduce_scatter_c => PMPI_Ireduce_scatter on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void,
        recvcounts: *const MPI_Count => *const c_int [local(comm)], datatype: MPI_Datatype,
        op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Iscan_c / PMPI_Iscan_c => PMPI_Iscan on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Iscatter_c / PMPI_Iscatter_c => PMPI_Iscatter on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        root: c_int, comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Iscatterv_c / PMPI_Iscatterv_c => PMPI_Iscatterv on comm;
    (
        sendbuf: *const c_void,
        sendcounts: *const MPI_Count => *const c_int [root_len(comm, root)],
        displs: *const MPI_Aint => *const c_int [root_len(comm, root)], sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        root: c_int, comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Ineighbor_allgather_c / PMPI_Ineighbor_allgather_c => PMPI_Ineighbor_allgather on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Ineighbor_allgatherv_c / PMPI_Ineighbor_allgatherv_c => PMPI_Ineighbor_allgatherv on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcounts: *const MPI_Count => *const c_int [in_degree(comm)],
        displs: *const MPI_Aint => *const c_int [in_degree(comm)], recvtype: MPI_Datatype,
        comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Ineighbor_alltoall_c / PMPI_Ineighbor_alltoall_c => PMPI_Ineighbor_alltoall on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Ineighbor_alltoallv_c / PMPI_Ineighbor_alltoallv_c => PMPI_Ineighbor_alltoallv on comm;
    (
        sendbuf: *const c_void,
        sendcounts: *const MPI_Count => *const c_int [out_degree(comm)],
        sdispls: *const MPI_Aint => *const c_int [out_degree(comm)], sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcounts: *const MPI_Count => *const c_int [in_degree(comm)],
        rdispls: *const MPI_Aint => *const c_int [in_degree(comm)], recvtype: MPI_Datatype,
        comm: MPI_Comm, request: *mut MPI_Request,
    )

    fn MPI_Ineighbor_alltoallw_c / PMPI_Ineighbor_alltoallw_c => PMPI_Ineighbor_alltoallw on comm;
    (
        sendbuf: *const c_void,
        sendcounts: *const MPI_Count => *const c_int [out_degree(comm)],
        sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void,
        recvcounts: *const MPI_Count => *const c_int [in_degree(comm)],
        rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm,
        request: *mut MPI_Request,
    )
}
