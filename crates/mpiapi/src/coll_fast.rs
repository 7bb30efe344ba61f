//! The hot paths of the blocking collectives: predefined types (and, for
//! MPI_Allreduce, predefined ops) through a communicator's shared segment in the
//! caller's own buffers, with no table lookup, reference count, scratch buffer or
//! per-rank array. Each returns None when it does not apply; the general path in
//! `coll.rs` then runs and reports any argument error, so these never decide an
//! error code of their own beyond what the shared-memory collective returns.

use super::args::*;
use super::shm::{self, Which};
use crate::abi::*;
use crate::comm::CommRef;
use crate::datatype;
use myrix_mpi::coll::ReduceOp;
use std::os::raw::{c_int, c_void};

/// The hot path of MPI_Allreduce: a predefined type and op, through shared memory
/// in the caller's buffers (not in place), with no reference counts nor scratch;
/// None when it does not apply (the general path then also reports any error).
///
/// # Safety
/// The C contract for the buffers.
pub(super) unsafe fn allreduce_builtin(
    send: *const c_void,
    recv: *mut c_void,
    cnt: c_int,
    dt: MPI_Datatype,
    opx: MPI_Op,
    c: &CommRef,
) -> Option<Result<(), c_int>> {
    let name = "MPI_Allreduce";
    let (t, basic, bop) = (
        datatype::predefined_ref(dt)?,
        datatype::predefined(dt)?,
        crate::op::builtin(opx)?,
    );
    let n = count(cnt).ok()?;
    if in_place(send) || myrix_mpi::op::reduce(bop, basic, &[], &mut []).is_err() {
        return None;
    }
    let s = shm::get(c, Which::Allreduce, bytes(n, t).ok()?)?;
    // SAFETY: recvbuf and sendbuf hold n elements each, apart (not in place).
    let (out, data) = unsafe { (contig(recv, n, t).ok()??, contig(send, n, t).ok()??) };
    let mut err = None;
    let mut f = |input: &[u8], inout: &mut [u8]| {
        if err.is_none() {
            err = myrix_mpi::op::reduce(bop, basic, input, inout).err();
        }
    };
    let mut rop = ReduceOp {
        op: &mut f,
        commutative: myrix_mpi::op::is_commutative(bop),
    };
    let r = run(
        name,
        shm::lock(&s).allreduce(data, out, t.size().max(1), &mut rop),
    );
    Some(r.and(err.map_or(Ok(()), |_| Err(MPI_ERR_INTERN))))
}

/// The hot path of MPI_Alltoall: predefined types whose blocks have the same bytes
/// on both sides, through shared memory in the caller's buffers, without reference
/// counts nor per-rank tables; None when it does not apply (the general path then
/// also reports any error).
///
/// # Safety
/// The C contract for the buffers (not in place).
pub(super) unsafe fn alltoall_predefined(
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    c: &CommRef,
) -> Option<Result<(), c_int>> {
    let (s, r) = (datatype::predefined_ref(st)?, datatype::predefined_ref(rt)?);
    let size = c.ranks.len();
    let sn = count(sc).ok()?.checked_mul(size)?;
    let rn = count(rc).ok()?.checked_mul(size)?;
    let total = bytes(sn, s).ok()?;
    if bytes(rn, r).ok()? != total {
        return None;
    }
    let sh = shm::get(c, Which::Alltoall, total)?;
    // SAFETY: sendbuf holds size × sendcount elements, recvbuf size × recvcount,
    // apart (not in place).
    let (d, o) = unsafe { (contig(send, sn, s).ok()??, contig(recv, rn, r).ok()??) };
    let r = run("MPI_Alltoall", shm::lock(&sh).alltoall(d, o));
    Some(r)
}
