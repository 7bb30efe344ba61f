//! Persistent collectives (MPI-4: MPI_Barrier_init, MPI_Bcast_init, … MPI_Exscan_init):
//! a persistent request that starts the matching nonblocking collective
//! (`icoll.rs`) at each MPI_Start / MPI_Startall and completes as it does.
//!
//! The request keeps the `_init` call's arguments (buffers, arrays, handles), which the
//! program must keep valid until it frees the request, and issues `PMPI_I…` with them
//! at every start; the fresh request's state moves into the persistent handle as for
//! persistent point-to-point (`p2p_more::start`). So the arguments are checked at each
//! start, not at `_init` (an error then goes through the communicator's handler), and
//! every rank must start its persistent collectives of a communicator in the same
//! order, as the standard requires. The neighbourhood forms are not provided (their
//! nonblocking forms are not either). Must never keep a request past MPI_Request_free.

use crate::abi::*;
use crate::datatype;
use crate::ffi::{finish, mpi_fn};
use crate::p2p::{insert, p2p, Finish, Persist};
use crate::runtime;
use myrix_mpi::p2p::SendMode;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

/// Issues the collective once, writing its fresh request; an MPI error code.
pub(crate) type Starter = Arc<dyn Fn(*mut MPI_Request) -> c_int + Send + Sync>;

/// Makes the inactive persistent request of a collective on `comm_h`.
fn init(
    comm_h: MPI_Comm,
    request: *mut MPI_Request,
    start: Starter,
    name: &str,
) -> Result<(), c_int> {
    if request.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let c = crate::icoll::lookup(comm_h, name)?;
    let pers = Persist {
        send: false,
        mode: SendMode::Standard,
        buffered: false,
        buf: std::ptr::null_mut(),
        count: 0,
        dt: datatype::lookup_committed(MPI_BYTE)?,
        peer: 0,
        tag: 0,
        comm: c.clone(),
        coll: Some(start),
    };
    let h = runtime::with(name, |rt| {
        let p = p2p(rt)?;
        let h = insert(p, None, None, c.ranks.clone(), Finish::None, Some(pers))?;
        if let Some(r) = p.reqs.get_mut(h) {
            r.active = false;
        }
        Ok(h)
    })?;
    // SAFETY: non-NULL, an MPI_Request by the C contract.
    unsafe { request.write(h) };
    Ok(())
}

/// MPI_Start of a persistent collective: the fresh request of one `PMPI_I…` call.
pub(crate) fn start_coll(start: &Starter) -> Result<MPI_Request, c_int> {
    let mut req = MPI_REQUEST_NULL;
    match start(&mut req) {
        MPI_SUCCESS => Ok(req),
        rc => Err(rc),
    }
}

mpi_fn! {
    /// Persistent MPI_Ibarrier: started by MPI_Start, as often as wanted.
    fn MPI_Barrier_init / PMPI_Barrier_init(comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used

        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::PMPI_Ibarrier(comm, req) }
        });
        let r = init(comm, request, start, "MPI_Barrier_init");
        finish(comm, "MPI_Barrier_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Ibcast: started by MPI_Start, as often as wanted.
    fn MPI_Bcast_init / PMPI_Bcast_init(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let buffer = buffer as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::PMPI_Ibcast(buffer as *mut c_void, count, datatype, root, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Bcast_init");
        finish(comm, "MPI_Bcast_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Ireduce: started by MPI_Start, as often as wanted.
    fn MPI_Reduce_init / PMPI_Reduce_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let recvbuf = recvbuf as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::PMPI_Ireduce(sendbuf as *const c_void, recvbuf as *mut c_void, count, datatype, op, root, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Reduce_init");
        finish(comm, "MPI_Reduce_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Iallreduce: started by MPI_Start, as often as wanted.
    fn MPI_Allreduce_init / PMPI_Allreduce_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let recvbuf = recvbuf as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::PMPI_Iallreduce(sendbuf as *const c_void, recvbuf as *mut c_void, count, datatype, op, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Allreduce_init");
        finish(comm, "MPI_Allreduce_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Igather: started by MPI_Start, as often as wanted.
    fn MPI_Gather_init / PMPI_Gather_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let recvbuf = recvbuf as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::more::PMPI_Igather(sendbuf as *const c_void, sendcount, sendtype, recvbuf as *mut c_void, recvcount, recvtype, root, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Gather_init");
        finish(comm, "MPI_Gather_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Igatherv: started by MPI_Start, as often as wanted.
    fn MPI_Gatherv_init / PMPI_Gatherv_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let recvbuf = recvbuf as usize;
        let recvcounts = recvcounts as usize;
        let displs = displs as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::more::PMPI_Igatherv(sendbuf as *const c_void, sendcount, sendtype, recvbuf as *mut c_void, recvcounts as *const c_int, displs as *const c_int, recvtype, root, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Gatherv_init");
        finish(comm, "MPI_Gatherv_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Iscatter: started by MPI_Start, as often as wanted.
    fn MPI_Scatter_init / PMPI_Scatter_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let recvbuf = recvbuf as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::more::PMPI_Iscatter(sendbuf as *const c_void, sendcount, sendtype, recvbuf as *mut c_void, recvcount, recvtype, root, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Scatter_init");
        finish(comm, "MPI_Scatter_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Iscatterv: started by MPI_Start, as often as wanted.
    fn MPI_Scatterv_init / PMPI_Scatterv_init(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let sendcounts = sendcounts as usize;
        let displs = displs as usize;
        let recvbuf = recvbuf as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::more::PMPI_Iscatterv(sendbuf as *const c_void, sendcounts as *const c_int, displs as *const c_int, sendtype, recvbuf as *mut c_void, recvcount, recvtype, root, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Scatterv_init");
        finish(comm, "MPI_Scatterv_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Iallgather: started by MPI_Start, as often as wanted.
    fn MPI_Allgather_init / PMPI_Allgather_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let recvbuf = recvbuf as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::more::PMPI_Iallgather(sendbuf as *const c_void, sendcount, sendtype, recvbuf as *mut c_void, recvcount, recvtype, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Allgather_init");
        finish(comm, "MPI_Allgather_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Iallgatherv: started by MPI_Start, as often as wanted.
    fn MPI_Allgatherv_init / PMPI_Allgatherv_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let recvbuf = recvbuf as usize;
        let recvcounts = recvcounts as usize;
        let displs = displs as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::more::PMPI_Iallgatherv(sendbuf as *const c_void, sendcount, sendtype, recvbuf as *mut c_void, recvcounts as *const c_int, displs as *const c_int, recvtype, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Allgatherv_init");
        finish(comm, "MPI_Allgatherv_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Ialltoall: started by MPI_Start, as often as wanted.
    fn MPI_Alltoall_init / PMPI_Alltoall_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let recvbuf = recvbuf as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::more::PMPI_Ialltoall(sendbuf as *const c_void, sendcount, sendtype, recvbuf as *mut c_void, recvcount, recvtype, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Alltoall_init");
        finish(comm, "MPI_Alltoall_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Ialltoallv: started by MPI_Start, as often as wanted.
    fn MPI_Alltoallv_init / PMPI_Alltoallv_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let sendcounts = sendcounts as usize;
        let sdispls = sdispls as usize;
        let recvbuf = recvbuf as usize;
        let recvcounts = recvcounts as usize;
        let rdispls = rdispls as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::more::PMPI_Ialltoallv(sendbuf as *const c_void, sendcounts as *const c_int, sdispls as *const c_int, sendtype, recvbuf as *mut c_void, recvcounts as *const c_int, rdispls as *const c_int, recvtype, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Alltoallv_init");
        finish(comm, "MPI_Alltoallv_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Ialltoallw: started by MPI_Start, as often as wanted.
    fn MPI_Alltoallw_init / PMPI_Alltoallw_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let sendcounts = sendcounts as usize;
        let sdispls = sdispls as usize;
        let sendtypes = sendtypes as usize;
        let recvbuf = recvbuf as usize;
        let recvcounts = recvcounts as usize;
        let rdispls = rdispls as usize;
        let recvtypes = recvtypes as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::more::PMPI_Ialltoallw(sendbuf as *const c_void, sendcounts as *const c_int, sdispls as *const c_int, sendtypes as *const MPI_Datatype, recvbuf as *mut c_void, recvcounts as *const c_int, rdispls as *const c_int, recvtypes as *const MPI_Datatype, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Alltoallw_init");
        finish(comm, "MPI_Alltoallw_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Ireduce_scatter: started by MPI_Start, as often as wanted.
    fn MPI_Reduce_scatter_init / PMPI_Reduce_scatter_init(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let recvbuf = recvbuf as usize;
        let recvcounts = recvcounts as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::PMPI_Ireduce_scatter(sendbuf as *const c_void, recvbuf as *mut c_void, recvcounts as *const c_int, datatype, op, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Reduce_scatter_init");
        finish(comm, "MPI_Reduce_scatter_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Ireduce_scatter_block: started by MPI_Start, as often as wanted.
    fn MPI_Reduce_scatter_block_init / PMPI_Reduce_scatter_block_init(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let recvbuf = recvbuf as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::PMPI_Ireduce_scatter_block(sendbuf as *const c_void, recvbuf as *mut c_void, recvcount, datatype, op, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Reduce_scatter_block_init");
        finish(comm, "MPI_Reduce_scatter_block_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Iscan: started by MPI_Start, as often as wanted.
    fn MPI_Scan_init / PMPI_Scan_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let recvbuf = recvbuf as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::PMPI_Iscan(sendbuf as *const c_void, recvbuf as *mut c_void, count, datatype, op, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Scan_init");
        finish(comm, "MPI_Scan_init", r)
    }
}

mpi_fn! {
    /// Persistent MPI_Iexscan: started by MPI_Start, as often as wanted.
    fn MPI_Exscan_init / PMPI_Exscan_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let sendbuf = sendbuf as usize;
        let recvbuf = recvbuf as usize;
        let start: Starter = Arc::new(move |req| {
            // SAFETY: the arguments of the _init call, which the program keeps valid
            // until it frees the request (the C contract of persistent collectives).
            unsafe { crate::icoll::PMPI_Iexscan(sendbuf as *const c_void, recvbuf as *mut c_void, count, datatype, op, comm, req) }
        });
        let r = init(comm, request, start, "MPI_Exscan_init");
        finish(comm, "MPI_Exscan_init", r)
    }
}
