//! Large-count forms of the blocking and persistent collectives: see `crate::large_count`.
//!
//! The plain adapters are lines of `narrowed!`; by hand, the ones with out-parameters.
#![allow(clippy::redundant_closure_call)]

use crate::large_count::*;

narrowed! {
    fn MPI_Allgather_c / PMPI_Allgather_c => PMPI_Allgather on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        comm: MPI_Comm,
    )

    fn MPI_Allgather_init_c / PMPI_Allgather_init_c => PMPI_Allgather_init on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request,
    )

    fn MPI_Allgatherv_c / PMPI_Allgatherv_c => PMPI_Allgatherv on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcounts: *const MPI_Count => *const c_int [peers(comm)],
        displs: *const MPI_Aint => *const c_int [peers(comm)], recvtype: MPI_Datatype,
        comm: MPI_Comm,
    )

    fn MPI_Allreduce_c / PMPI_Allreduce_c => PMPI_Allreduce on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm,
    )

    fn MPI_Allreduce_init_c / PMPI_Allreduce_init_c => PMPI_Allreduce_init on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info,
        request: *mut MPI_Request,
    )

    fn MPI_Alltoall_c / PMPI_Alltoall_c => PMPI_Alltoall on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        comm: MPI_Comm,
    )

    fn MPI_Alltoall_init_c / PMPI_Alltoall_init_c => PMPI_Alltoall_init on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request,
    )

    fn MPI_Alltoallv_c / PMPI_Alltoallv_c => PMPI_Alltoallv on comm;
    (
        sendbuf: *const c_void,
        sendcounts: *const MPI_Count => *const c_int [if sendbuf == MPI_IN_PLACE as *const c_void { None } else { peers(comm) }],
        sdispls: *const MPI_Aint => *const c_int [if sendbuf == MPI_IN_PLACE as *const c_void { None } else { peers(comm) }],
        sendtype: MPI_Datatype, recvbuf: *mut c_void,
        recvcounts: *const MPI_Count => *const c_int [peers(comm)],
        rdispls: *const MPI_Aint => *const c_int [peers(comm)], recvtype: MPI_Datatype,
        comm: MPI_Comm,
    )

    fn MPI_Alltoallw_c / PMPI_Alltoallw_c => PMPI_Alltoallw on comm;
    (
        sendbuf: *const c_void,
        sendcounts: *const MPI_Count => *const c_int [if sendbuf == MPI_IN_PLACE as *const c_void { None } else { peers(comm) }],
        sdispls: *const MPI_Aint => *const c_int [if sendbuf == MPI_IN_PLACE as *const c_void { None } else { peers(comm) }],
        sendtypes: *const MPI_Datatype, recvbuf: *mut c_void,
        recvcounts: *const MPI_Count => *const c_int [peers(comm)],
        rdispls: *const MPI_Aint => *const c_int [peers(comm)], recvtypes: *const MPI_Datatype,
        comm: MPI_Comm,
    )

    fn MPI_Bcast_c / PMPI_Bcast_c => PMPI_Bcast on comm;
    (
        buffer: *mut c_void, count: MPI_Count => c_int, datatype: MPI_Datatype, root: c_int,
        comm: MPI_Comm,
    )

    fn MPI_Bcast_init_c / PMPI_Bcast_init_c => PMPI_Bcast_init on comm;
    (
        buffer: *mut c_void, count: MPI_Count => c_int, datatype: MPI_Datatype, root: c_int,
        comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request,
    )

    fn MPI_Exscan_c / PMPI_Exscan_c => PMPI_Exscan on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm,
    )

    fn MPI_Exscan_init_c / PMPI_Exscan_init_c => PMPI_Exscan_init on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info,
        request: *mut MPI_Request,
    )

    fn MPI_Gather_c / PMPI_Gather_c => PMPI_Gather on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        root: c_int, comm: MPI_Comm,
    )

    fn MPI_Gather_init_c / PMPI_Gather_init_c => PMPI_Gather_init on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request,
    )

    fn MPI_Gatherv_c / PMPI_Gatherv_c => PMPI_Gatherv on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const MPI_Count => *const c_int [root_len(comm, root)],
        displs: *const MPI_Aint => *const c_int [root_len(comm, root)], recvtype: MPI_Datatype,
        root: c_int, comm: MPI_Comm,
    )

    fn MPI_Neighbor_allgather_c / PMPI_Neighbor_allgather_c => PMPI_Neighbor_allgather on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        comm: MPI_Comm,
    )

    fn MPI_Neighbor_alltoall_c / PMPI_Neighbor_alltoall_c => PMPI_Neighbor_alltoall on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        comm: MPI_Comm,
    )

    fn MPI_Reduce_c / PMPI_Reduce_c => PMPI_Reduce on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm,
    )

    fn MPI_Reduce_init_c / PMPI_Reduce_init_c => PMPI_Reduce_init on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, info: MPI_Info,
        request: *mut MPI_Request,
    )

    fn MPI_Reduce_local_c / PMPI_Reduce_local_c => PMPI_Reduce_local on MPI_COMM_WORLD;
    (
        inbuf: *const c_void, inoutbuf: *mut c_void, count: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op,
    )

    fn MPI_Reduce_scatter_block_c / PMPI_Reduce_scatter_block_c => PMPI_Reduce_scatter_block on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm,
    )

    fn MPI_Reduce_scatter_block_init_c / PMPI_Reduce_scatter_block_init_c => PMPI_Reduce_scatter_block_init on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info,
        request: *mut MPI_Request,
    )

    fn MPI_Reduce_scatter_c / PMPI_Reduce_scatter_c => PMPI_Reduce_scatter on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void,
        recvcounts: *const MPI_Count => *const c_int [local(comm)], datatype: MPI_Datatype,
        op: MPI_Op, comm: MPI_Comm,
    )

    fn MPI_Scan_c / PMPI_Scan_c => PMPI_Scan on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm,
    )

    fn MPI_Scan_init_c / PMPI_Scan_init_c => PMPI_Scan_init on comm;
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count => c_int,
        datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info,
        request: *mut MPI_Request,
    )

    fn MPI_Scatter_c / PMPI_Scatter_c => PMPI_Scatter on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        root: c_int, comm: MPI_Comm,
    )

    fn MPI_Scatter_init_c / PMPI_Scatter_init_c => PMPI_Scatter_init on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request,
    )

    fn MPI_Scatterv_c / PMPI_Scatterv_c => PMPI_Scatterv on comm;
    (
        sendbuf: *const c_void,
        sendcounts: *const MPI_Count => *const c_int [root_len(comm, root)],
        displs: *const MPI_Aint => *const c_int [root_len(comm, root)], sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: MPI_Count => c_int, recvtype: MPI_Datatype,
        root: c_int, comm: MPI_Comm,
    )

    fn MPI_Neighbor_allgatherv_c / PMPI_Neighbor_allgatherv_c => PMPI_Neighbor_allgatherv on comm;
    (
        sendbuf: *const c_void, sendcount: MPI_Count => c_int, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcounts: *const MPI_Count => *const c_int [in_degree(comm)],
        displs: *const MPI_Aint => *const c_int [in_degree(comm)], recvtype: MPI_Datatype,
        comm: MPI_Comm,
    )

    fn MPI_Neighbor_alltoallv_c / PMPI_Neighbor_alltoallv_c => PMPI_Neighbor_alltoallv on comm;
    (
        sendbuf: *const c_void,
        sendcounts: *const MPI_Count => *const c_int [out_degree(comm)],
        sdispls: *const MPI_Aint => *const c_int [out_degree(comm)], sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcounts: *const MPI_Count => *const c_int [in_degree(comm)],
        rdispls: *const MPI_Aint => *const c_int [in_degree(comm)], recvtype: MPI_Datatype,
        comm: MPI_Comm,
    )

    fn MPI_Neighbor_alltoallw_c / PMPI_Neighbor_alltoallw_c => PMPI_Neighbor_alltoallw on comm;
    (
        sendbuf: *const c_void,
        sendcounts: *const MPI_Count => *const c_int [out_degree(comm)],
        sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void,
        recvcounts: *const MPI_Count => *const c_int [in_degree(comm)],
        rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm,
    )
}
