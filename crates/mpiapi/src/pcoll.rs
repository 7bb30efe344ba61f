//! Persistent collectives (MPI-4: MPI_Barrier_init, MPI_Bcast_init, … MPI_Exscan_init):
//! a persistent request that starts the matching nonblocking collective
//! (`icoll.rs`) at each MPI_Start / MPI_Startall and completes as it does.
//!
//! The request keeps the `_init` call's arguments (buffers, arrays, handles), which the
//! program must keep valid until it frees the request, and issues `PMPI_I…` with them
//! at every start; the fresh request's state moves into the persistent handle as for
//! persistent point-to-point (`p2p_more::start`). So the arguments are checked at each
//! start, not at `_init` (an error then goes through the communicator's handler), and
//! the starts may come in any order, differing between ranks (MPI-4.0 §6.13): each
//! request's schedule is tagged with a number taken at its `_init` call
//! (`icoll::persistent_seq`), not at the start, and takes point-to-point steps, never
//! the segment's slots (which go in start order). The neighbourhood forms start
//! `MPI_Ineighbor_…` (`icoll_nbr.rs`); intercommunicators take the nonblocking forms'
//! intercommunicator schedules (`icoll_inter.rs`). Must never keep a request past
//! MPI_Request_free.

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
pub(crate) fn init(
    comm_h: MPI_Comm,
    request: *mut MPI_Request,
    start: Starter,
    name: &str,
) -> Result<(), c_int> {
    if request.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let c = crate::icoll::lookup(comm_h, name)?;
    let seq = crate::icoll::persistent_seq(&c);
    let inner = start;
    let start: Starter = Arc::new(move |r| crate::icoll::with_pinned(seq, || inner(r)));
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

/// A value of an `_init` call kept for its starts: pointers as addresses (so the
/// start can be shared between threads), handles and integers as they are.
trait Keep: Copy {
    type Kept: Copy + Send + Sync + 'static;
    fn keep(self) -> Self::Kept;
    fn back(k: Self::Kept) -> Self;
}

impl<T> Keep for *const T {
    type Kept = usize;
    fn keep(self) -> usize {
        self as usize
    }
    fn back(k: usize) -> Self {
        k as *const T
    }
}

impl<T> Keep for *mut T {
    type Kept = usize;
    fn keep(self) -> usize {
        self as usize
    }
    fn back(k: usize) -> Self {
        k as *mut T
    }
}

macro_rules! keep_as_is {
    ($($t:ty),*) => {$(
        impl Keep for $t {
            type Kept = $t;
            fn keep(self) -> $t {
                self
            }
            fn back(k: $t) -> $t {
                k
            }
        }
    )*};
}
keep_as_is!(c_int, usize);

/// `MPI_X_init` / `PMPI_X_init` with the parameters of `PMPI_IX` plus `info` and
/// `request`: a persistent request whose starts call `PMPI_IX` with the kept values.
macro_rules! persistent {
    ($name:ident / $pname:ident [$comm:ident] => $icall:path => ( $($a:ident : $t:ty),* )) => {
        mpi_fn! {
            /// Persistent form of the nonblocking collective (see the module docs).
            fn $name / $pname($($a: $t,)* info: MPI_Info, request: *mut MPI_Request) -> c_int {
                let _ = info; // no hint is used
                let kept = ($(<$t as Keep>::keep($a),)*);
                let start: Starter = Arc::new(move |req| {
                    let ($($a,)*) = kept;
                    // SAFETY: the arguments of the _init call, which the program keeps
                    // valid until it frees the request (the C contract of persistent
                    // collectives).
                    unsafe { $icall($(<$t as Keep>::back($a),)* req) }
                });
                let r = init($comm, request, start, stringify!($name));
                finish($comm, stringify!($name), r)
            }
        }
    };
}

persistent!(MPI_Barrier_init / PMPI_Barrier_init [comm] => crate::icoll::PMPI_Ibarrier => (comm: MPI_Comm));
persistent!(MPI_Bcast_init / PMPI_Bcast_init [comm] => crate::icoll::PMPI_Ibcast => (buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm));
persistent!(MPI_Reduce_init / PMPI_Reduce_init [comm] => crate::icoll::PMPI_Ireduce => (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm));
persistent!(MPI_Allreduce_init / PMPI_Allreduce_init [comm] => crate::icoll::PMPI_Iallreduce => (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm));
persistent!(MPI_Gather_init / PMPI_Gather_init [comm] => crate::icoll::more::PMPI_Igather => (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
persistent!(MPI_Gatherv_init / PMPI_Gatherv_init [comm] => crate::icoll::more::PMPI_Igatherv => (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
persistent!(MPI_Scatter_init / PMPI_Scatter_init [comm] => crate::icoll::more::PMPI_Iscatter => (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
persistent!(MPI_Scatterv_init / PMPI_Scatterv_init [comm] => crate::icoll::more::PMPI_Iscatterv => (sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
persistent!(MPI_Allgather_init / PMPI_Allgather_init [comm] => crate::icoll::more::PMPI_Iallgather => (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
persistent!(MPI_Allgatherv_init / PMPI_Allgatherv_init [comm] => crate::icoll::more::PMPI_Iallgatherv => (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
persistent!(MPI_Alltoall_init / PMPI_Alltoall_init [comm] => crate::icoll::more::PMPI_Ialltoall => (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
persistent!(MPI_Alltoallv_init / PMPI_Alltoallv_init [comm] => crate::icoll::more::PMPI_Ialltoallv => (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
persistent!(MPI_Alltoallw_init / PMPI_Alltoallw_init [comm] => crate::icoll::more::PMPI_Ialltoallw => (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm));
persistent!(MPI_Reduce_scatter_init / PMPI_Reduce_scatter_init [comm] => crate::icoll::PMPI_Ireduce_scatter => (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm));
persistent!(MPI_Reduce_scatter_block_init / PMPI_Reduce_scatter_block_init [comm] => crate::icoll::PMPI_Ireduce_scatter_block => (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm));
persistent!(MPI_Scan_init / PMPI_Scan_init [comm] => crate::icoll::PMPI_Iscan => (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm));
persistent!(MPI_Exscan_init / PMPI_Exscan_init [comm] => crate::icoll::PMPI_Iexscan => (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm));
persistent!(MPI_Neighbor_allgather_init / PMPI_Neighbor_allgather_init [comm] => crate::icoll::nbr::PMPI_Ineighbor_allgather => (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
persistent!(MPI_Neighbor_allgatherv_init / PMPI_Neighbor_allgatherv_init [comm] => crate::icoll::nbr::PMPI_Ineighbor_allgatherv => (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
persistent!(MPI_Neighbor_alltoall_init / PMPI_Neighbor_alltoall_init [comm] => crate::icoll::nbr::PMPI_Ineighbor_alltoall => (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
persistent!(MPI_Neighbor_alltoallv_init / PMPI_Neighbor_alltoallv_init [comm] => crate::icoll::nbr::PMPI_Ineighbor_alltoallv => (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
persistent!(MPI_Neighbor_alltoallw_init / PMPI_Neighbor_alltoallw_init [comm] => crate::icoll::nbr::PMPI_Ineighbor_alltoallw => (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm));
