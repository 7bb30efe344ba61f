//! The hot paths of the blocking collectives: predefined types (and, for
//! MPI_Allreduce and MPI_Reduce, predefined ops) through a communicator's shared
//! segment in the caller's own buffers (Allreduce, Reduce, Alltoall(v), Gather(v),
//! Scatter(v)), with no table lookup, reference count, scratch buffer or
//! per-rank array. Each returns None when it does not apply, before any step; the
//! general path in `coll.rs` then runs and reports any argument error, so these
//! never decide an error code of their own beyond what the collective returns. The
//! v-forms, once they took the segment's first step, finish on their own (through
//! point-to-point when the segment refuses the sizes, as the general path would).

use super::args::*;
use super::shm::{self, Via, Which};
use super::vshm::{self, Blocks};
use crate::abi::*;
use crate::coll_glue::pt2pt;
use crate::comm::CommRef;
use crate::datatype;
use myrix_mpi::coll::{self, ReduceOp};
use myrix_mpi::datatype::Basic;
use myrix_mpi::op::{BuiltinOp, Kernel};
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// Predefined ops ([`BuiltinOp`]'s variants).
const OPS: usize = 14;

/// Whether the predefined `op` is defined and implemented on `basic`: the library's
/// trial reduction on no data, remembered per pair. The trial walks the type's
/// table several times: about 250 instructions per call, a quarter of an 8-byte
/// MPI_Reduce on one rank (callgrind, session 25); remembered, a load.
fn reducible(op: BuiltinOp, basic: Basic) -> bool {
    // 0: not tried yet; 1: yes; 2: no.
    static SEEN: [AtomicU8; OPS * Basic::ALL.len()] =
        [const { AtomicU8::new(0) }; OPS * Basic::ALL.len()];
    let Some(slot) = SEEN.get(op as usize * Basic::ALL.len() + basic.index()) else {
        return myrix_mpi::op::reduce(op, basic, &[], &mut []).is_ok();
    };
    match slot.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let ok = myrix_mpi::op::reduce(op, basic, &[], &mut []).is_ok();
            slot.store(if ok { 1 } else { 2 }, Ordering::Relaxed);
            ok
        }
    }
}

/// The kernel of the predefined `op` on `basic` (`myrix_mpi::op::kernel`), made once
/// per pair: an 8-byte `op::reduce` spent about 140 instructions checking and
/// dispatching (callgrind, session 30), most of the root's combining in an 8-byte
/// MPI_Reduce on 2 ranks; the kernel is one call. None: `op::reduce` does it.
fn kernel(op: BuiltinOp, basic: Basic) -> Option<Kernel> {
    static K: [OnceLock<Option<Kernel>>; OPS * Basic::ALL.len()] =
        [const { OnceLock::new() }; OPS * Basic::ALL.len()];
    match K.get(op as usize * Basic::ALL.len() + basic.index()) {
        Some(k) => *k.get_or_init(|| myrix_mpi::op::kernel(op, basic)),
        None => myrix_mpi::op::kernel(op, basic),
    }
}

/// The hot path of MPI_Allreduce: a predefined type without gaps ([`plain_size`])
/// and a predefined op, through shared memory in the caller's buffers (not in
/// place), with no reference counts nor scratch; None when it does not apply (the
/// general path then also reports any error). `v`: the record when the entry went
/// straight here (`coll.rs` `direct_all`), else the communicator.
///
/// # Safety
/// The C contract for the buffers.
pub(super) unsafe fn allreduce_builtin(
    send: *const c_void,
    recv: *mut c_void,
    cnt: c_int,
    dt: MPI_Datatype,
    opx: MPI_Op,
    v: Via,
) -> Option<Result<(), c_int>> {
    let (sz, basic, bop) = (
        plain_size(dt)?,
        datatype::predefined(dt)?,
        crate::op::builtin(opx)?,
    );
    if in_place(send) || !reducible(bop, basic) {
        return None;
    }
    let b = sz.checked_mul(count(cnt).ok()?)?;
    let s = v.get(Which::Allreduce, b)?;
    // SAFETY: recvbuf and sendbuf hold n elements each, apart (not in place).
    let (out, data) = unsafe { (raw(recv, b)?, &*raw(send, b)?) };
    let k = kernel(bop, basic);
    let mut err = None;
    let mut f = |input: &[u8], inout: &mut [u8]| match k {
        Some(k) => k(input, inout),
        None => {
            if err.is_none() {
                err = myrix_mpi::op::reduce(bop, basic, input, inout).err();
            }
        }
    };
    let mut rop = ReduceOp {
        op: &mut f,
        commutative: myrix_mpi::op::is_commutative(bop),
    };
    let r = run(
        "MPI_Allreduce",
        shm::lock(&s).allreduce(data, out, sz.max(1), &mut rop),
    );
    Some(r.and(err.map_or(Ok(()), |_| Err(MPI_ERR_INTERN))))
}

/// MPI_Allgather straight from its entry (`coll.rs` `direct_all`): predefined types
/// without gaps ([`plain_size`]) whose blocks have the same bytes on both sides,
/// the caller's buffers, apart; None when it does not apply, before any step (a
/// send block inside the receive buffer too: the entry reports it). The general
/// path's own fast way is `coll_big.rs`.
///
/// # Safety
/// The C contract for the buffers.
pub(super) unsafe fn allgather_plain(
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    v: Via,
) -> Option<Result<(), c_int>> {
    let b = plain_size(st)?.checked_mul(count(sc).ok()?)?;
    if plain_size(rt)?.checked_mul(count(rc).ok()?)? != b {
        return None;
    }
    let total = b.checked_mul(v.c().ranks.len())?;
    let (s0, r0) = (send as usize, recv as usize);
    if b > 0 && s0 < r0.saturating_add(total) && r0 < s0.saturating_add(b) {
        return None;
    }
    let sh = v.get(Which::Allgather, total)?;
    // SAFETY: sendbuf holds sendcount elements, recvbuf size × recvcount, apart
    // (checked just above).
    let (data, out) = unsafe { (&*raw(send, b)?, raw(recv, total)?) };
    let r = run("MPI_Allgather", shm::lock(&sh).allgather(data, out));
    Some(r)
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

/// The hot path of MPI_Reduce: a predefined type without gaps ([`plain_size`]) and
/// a predefined op, through shared memory in the caller's buffers (not in place);
/// None when it does not apply, before any step. `v`: the record when the entry
/// went straight here (`coll_rooted.rs` `direct`), else the communicator.
///
/// # Safety
/// The C contract for the buffers.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn reduce_builtin(
    send: *const c_void,
    recv: *mut c_void,
    cnt: c_int,
    dt: MPI_Datatype,
    opx: MPI_Op,
    root: c_int,
    v: Via,
) -> Option<Result<(), c_int>> {
    let c = v.c();
    let root = check_root(root, c).ok()?;
    let (sz, basic, bop) = (
        plain_size(dt)?,
        datatype::predefined(dt)?,
        crate::op::builtin(opx)?,
    );
    if in_place(send) || !reducible(bop, basic) {
        return None;
    }
    let b = sz.checked_mul(count(cnt).ok()?)?;
    // SAFETY: recvbuf holds n elements at the root, apart from sendbuf.
    let out: &mut [u8] = if c.rank as usize == root {
        // SAFETY: as above.
        unsafe { raw(recv, b) }?
    } else {
        &mut []
    };
    let s = v.get(Which::Reduce, b)?;
    // SAFETY: sendbuf holds n elements.
    let data = unsafe { &*raw(send, b)? };
    let k = kernel(bop, basic);
    let mut err = None;
    let mut f = |input: &[u8], inout: &mut [u8]| match k {
        Some(k) => k(input, inout),
        None => {
            if err.is_none() {
                err = myrix_mpi::op::reduce(bop, basic, input, inout).err();
            }
        }
    };
    let mut rop = ReduceOp {
        op: &mut f,
        commutative: myrix_mpi::op::is_commutative(bop),
    };
    let r = run(
        "MPI_Reduce",
        shm::lock(&s).reduce(root, data, out, sz.max(1), &mut rop),
    );
    Some(r.and(err.map_or(Ok(()), |_| Err(MPI_ERR_INTERN))))
}

/// The hot path of MPI_Gather: predefined types whose elements are their packed
/// form ([`plain_size`]) and whose blocks have the same bytes on both sides,
/// through shared memory in the caller's buffers (not in place); None when it does
/// not apply (the general path then also reports any error).
///
/// # Safety
/// The C contract for the buffers.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gather_predefined(
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    root: c_int,
    v: Via,
) -> Option<Result<(), c_int>> {
    let c = v.c();
    let root = check_root(root, c).ok()?;
    let b = plain_size(st)?.checked_mul(count(sc).ok()?)?;
    if in_place(send) {
        return None;
    }
    // SAFETY: the root's recvbuf holds size × recvcount elements, apart from sendbuf.
    let out: &mut [u8] = if c.rank as usize == root {
        if plain_size(rt)?.checked_mul(count(rc).ok()?)? != b {
            return None;
        }
        // SAFETY: as above.
        unsafe { raw(recv, b.checked_mul(c.ranks.len())?) }?
    } else {
        &mut []
    };
    let sh = v.get(Which::Gather, b)?;
    // SAFETY: sendbuf holds sendcount elements.
    let data = unsafe { raw(send, b) }?;
    let r = run("MPI_Gather", shm::lock(&sh).gather(root, data, out));
    Some(r)
}

/// The hot path of MPI_Scatter; see [`gather_predefined`].
///
/// # Safety
/// The C contract for the buffers.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn scatter_predefined(
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    root: c_int,
    v: Via,
) -> Option<Result<(), c_int>> {
    let c = v.c();
    let root = check_root(root, c).ok()?;
    let at_root = c.rank as usize == root;
    if at_root && in_place(recv) {
        return None;
    }
    let b = plain_size(rt)?.checked_mul(count(rc).ok()?)?;
    // SAFETY: the root's sendbuf holds size × sendcount elements, apart from recvbuf.
    let data: &[u8] = if at_root {
        if plain_size(st)?.checked_mul(count(sc).ok()?)? != b {
            return None;
        }
        // SAFETY: as above.
        unsafe { raw(send, b.checked_mul(c.ranks.len())?) }?
    } else {
        &[]
    };
    let sh = v.get(Which::Scatter, b)?;
    // SAFETY: recvbuf holds recvcount elements.
    let out = unsafe { raw(recv, b) }?;
    let r = run("MPI_Scatter", shm::lock(&sh).scatter(root, data, out));
    Some(r)
}

/// The elements from a buffer's start that blocks of `cs` elements at `ds` span;
/// None when a count or displacement is negative (the general path takes those).
fn span(cs: &[c_int], ds: &[c_int]) -> Option<usize> {
    cs.iter().zip(ds).try_fold(0usize, |end, (&k, &d)| {
        let (k, d) = (usize::try_from(k).ok()?, usize::try_from(d).ok()?);
        Some(end.max(d.checked_add(k)?))
    })
}

/// The blocks `at` names, as the point-to-point algorithms take them.
fn listed(n: usize, at: Blocks) -> (Vec<usize>, Vec<usize>) {
    (
        (0..n).map(|q| at(q).1).collect(),
        (0..n).map(|q| at(q).0).collect(),
    )
}

/// The hot path of MPI_Gatherv: predefined types, the caller's buffers (not in
/// place), no packing nor per-rank tables; None when it does not apply.
///
/// # Safety
/// The C contract for the buffers and arrays.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gatherv_predefined(
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    (rcs, rds): (*const c_int, *const c_int),
    rt: MPI_Datatype,
    root: c_int,
    v: Via,
) -> Option<Result<(), c_int>> {
    let c = v.c();
    let name = "MPI_Gatherv";
    let root = check_root(root, c).ok()?;
    let b = plain_size(st)?.checked_mul(count(sc).ok()?)?;
    let (n, me) = (c.ranks.len(), c.rank as usize);
    if in_place(send) {
        return None;
    }
    // SAFETY: sendbuf holds sendcount elements.
    let data = unsafe { raw(send, b) }?;
    if me != root {
        return Some(match vshm::gatherv(v, name, root, data, None) {
            Some(r) => r,
            None => run(
                name,
                coll::gatherv(&mut pt2pt(c), root, data, &mut [], &[], &[]),
            ),
        });
    }
    let sz = plain_size(rt)?;
    // SAFETY: recvcounts and displs hold one int per rank.
    let (cs, ds) = unsafe { (ints(rcs, n).ok()?, ints(rds, n).ok()?) };
    if b != (cs[me].max(0) as usize).checked_mul(sz)? {
        return None;
    }
    // SAFETY: recvbuf holds the blocks (span elements from its start), apart from
    // sendbuf.
    let out = unsafe { raw(recv, span(cs, ds)?.checked_mul(sz)?) }?;
    let at = |q: usize| (ds[q] as usize * sz, cs[q] as usize * sz);
    Some(
        match vshm::gatherv(v, name, root, data, Some((&at, &mut *out))) {
            Some(r) => r,
            None => {
                let (by, pd) = listed(n, &at);
                run(
                    name,
                    coll::gatherv(&mut pt2pt(c), root, data, out, &by, &pd),
                )
            }
        },
    )
}

/// The hot path of MPI_Scatterv; see [`gatherv_predefined`].
///
/// # Safety
/// The C contract for the buffers and arrays.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn scatterv_predefined(
    send: *const c_void,
    (scs, sds): (*const c_int, *const c_int),
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    root: c_int,
    v: Via,
) -> Option<Result<(), c_int>> {
    let c = v.c();
    let name = "MPI_Scatterv";
    let root = check_root(root, c).ok()?;
    let (n, me) = (c.ranks.len(), c.rank as usize);
    if me == root && in_place(recv) {
        return None;
    }
    let b = plain_size(rt)?.checked_mul(count(rc).ok()?)?;
    // SAFETY: recvbuf holds recvcount elements.
    let out = unsafe { raw(recv, b) }?;
    if me != root {
        return Some(match vshm::scatterv(v, name, root, None, &mut *out) {
            Some(r) => r,
            None => run(
                name,
                coll::scatterv(&mut pt2pt(c), root, &[], &[], &[], out),
            ),
        });
    }
    let sz = plain_size(st)?;
    // SAFETY: sendcounts and displs hold one int per rank.
    let (cs, ds) = unsafe { (ints(scs, n).ok()?, ints(sds, n).ok()?) };
    if b != (cs[me].max(0) as usize).checked_mul(sz)? {
        return None;
    }
    // SAFETY: sendbuf holds the blocks (span elements from its start), apart from
    // recvbuf.
    let data = unsafe { &*raw(send, span(cs, ds)?.checked_mul(sz)?)? };
    let at = |q: usize| (ds[q] as usize * sz, cs[q] as usize * sz);
    Some(
        match vshm::scatterv(v, name, root, Some((&at, data)), &mut *out) {
            Some(r) => r,
            None => {
                let (by, pd) = listed(n, &at);
                run(
                    name,
                    coll::scatterv(&mut pt2pt(c), root, data, &by, &pd, out),
                )
            }
        },
    )
}

/// The hot path of MPI_Alltoallv: predefined types, the caller's buffers (not in
/// place), no packing nor per-rank tables; None when it does not apply.
///
/// # Safety
/// The C contract for the buffers and arrays.
pub(super) unsafe fn alltoallv_predefined(
    send: *const c_void,
    (scs, sds): (*const c_int, *const c_int),
    st: MPI_Datatype,
    recv: *mut c_void,
    (rcs, rds): (*const c_int, *const c_int),
    rt: MPI_Datatype,
    c: &CommRef,
) -> Option<Result<(), c_int>> {
    let name = "MPI_Alltoallv";
    if in_place(send) {
        return None;
    }
    let (s, r) = (datatype::predefined_ref(st)?, datatype::predefined_ref(rt)?);
    let (n, me) = (c.ranks.len(), c.rank as usize);
    // SAFETY: each array holds one int per rank.
    let (scs, sds, rcs, rds) = unsafe {
        (
            ints(scs, n).ok()?,
            ints(sds, n).ok()?,
            ints(rcs, n).ok()?,
            ints(rds, n).ok()?,
        )
    };
    let (ss, rs) = (s.size(), r.size());
    if (scs[me].max(0) as usize).checked_mul(ss)? != (rcs[me].max(0) as usize).checked_mul(rs)? {
        return None;
    }
    // SAFETY: the buffers hold the blocks (span elements from their starts) and do
    // not overlap (not in place).
    let (data, out) = unsafe {
        (
            &*contig(send, span(scs, sds)?, s).ok()??,
            contig(recv, span(rcs, rds)?, r).ok()??,
        )
    };
    let sat = |q: usize| (sds[q] as usize * ss, scs[q] as usize * ss);
    let rat = |q: usize| (rds[q] as usize * rs, rcs[q] as usize * rs);
    Some(
        match vshm::alltoallv(c, name, data, &sat, &mut *out, &rat) {
            Some(r) => r,
            None => {
                let ((sby, spd), (rby, rpd)) = (listed(n, &sat), listed(n, &rat));
                run(
                    name,
                    coll::alltoallv(&mut pt2pt(c), data, &sby, &spd, out, &rby, &rpd),
                )
            }
        },
    )
}
