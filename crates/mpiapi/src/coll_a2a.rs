//! The blocking all-to-all collectives in C: MPI_Alltoall and MPI_Alltoallv (the
//! shared-memory segment for regular blocks, else pairwise exchange over
//! point-to-point; by levels on communicators spanning nodes: `coll_hier`).
//! Split from `coll.rs` (the same checks and packing, `coll::args`).

use super::args::*;
use super::shm::{self, Which};
use crate::abi::*;
use crate::coll_glue::pt2pt;
use crate::datatype;
use crate::ffi::{finish, mpi_fn};
use myrix_mpi::coll;
use std::os::raw::{c_int, c_void};

/// One side of an all-to-all: the type, counts in elements and bytes, element
/// displacements.
struct Side {
    t: Dt,
    el: Vec<usize>,
    by: Vec<usize>,
    displs: Vec<c_int>,
}

/// # Safety
/// `cd` arrays hold one int per rank (the C contract).
unsafe fn side(
    size: usize,
    t: MPI_Datatype,
    each: c_int,
    cd: Option<(*const c_int, *const c_int)>,
) -> Result<Side, c_int> {
    let t = datatype::lookup(t)?;
    let (el, by, displs) = match cd {
        None => {
            let (el, by) = counts(&vec![each; size], &t)?;
            (el, by, regular(size, count(each)?)?)
        }
        Some((cs, ds)) => {
            // SAFETY: one int per rank in each array.
            let (cs, ds) = unsafe { (ints(cs, size)?, ints(ds, size)?) };
            let (el, by) = counts(cs, &t)?;
            (el, by, ds.to_vec())
        }
    };
    Ok(Side { t, el, by, displs })
}

/// Alltoall (`counts` None: `sc`/`rc` each) and Alltoallv; with MPI_IN_PLACE the
/// receive side describes both.
///
/// # Safety
/// The C contract for the buffers and arrays.
#[allow(clippy::too_many_arguments)]
unsafe fn alltoall(
    name: &str,
    send: *const c_void,
    sc: c_int,
    scd: Option<(*const c_int, *const c_int)>,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rcd: Option<(*const c_int, *const c_int)>,
    rt: MPI_Datatype,
    comm: MPI_Comm,
) -> Result<(), c_int> {
    let c = comm_ref(comm, name)?;
    let size = c.ranks.len();
    if scd.is_none() && rcd.is_none() && !in_place(send) {
        // SAFETY: the C contract for the buffers.
        if let Some(r) = unsafe { super::fast::alltoall_predefined(send, sc, st, recv, rc, rt, &c) }
        {
            return r;
        }
    }
    if let (Some(sv), Some(rv)) = (scd, rcd) {
        // SAFETY: the C contract for the buffers and arrays.
        let fast = unsafe { super::fast::alltoallv_predefined(send, sv, st, recv, rv, rt, &c) };
        if let Some(r) = fast {
            return r;
        }
    }
    // SAFETY: the C contract for the arrays.
    let r = unsafe { side(size, rt, rc, rcd) }?;
    let data = if in_place(send) {
        // SAFETY: in place: recvbuf holds the blocks to send, as the receive side says.
        unsafe { pack_blocks(recv, &r.el, &r.displs, &r.t) }?
    } else {
        // SAFETY: the C contract for the arrays and sendbuf.
        let s = unsafe { side(size, st, sc, scd) }?;
        let (sd, _) = coll::packed_displs(&s.by).map_err(|e| coll_code(&e, name))?;
        if scd.is_none() && rcd.is_none() {
            let (sn, rn) = (count(sc)?, count(rc)?);
            let (sn, rn) = (
                sn.checked_mul(size).ok_or(MPI_ERR_COUNT)?,
                rn.checked_mul(size).ok_or(MPI_ERR_COUNT)?,
            );
            // Contiguous types: the caller's buffers are the packed blocks (no pack,
            // no unpack, no scratch: at 1 MiB those copies cost more than the
            // exchange).
            // SAFETY: the C contract: sendbuf holds size × sendcount elements,
            // recvbuf size × recvcount, and the two do not overlap (not in place).
            let views = unsafe { (contig(send, sn, &s.t)?, contig(recv, rn, &r.t)?) };
            if let (Some(d), Some(o)) = views {
                let (rd, total) = coll::packed_displs(&r.by).map_err(|e| coll_code(&e, name))?;
                if d.len() == total && o.len() == total {
                    match shm::get(&c, Which::Alltoall, total) {
                        Some(sh) => run(name, shm::lock(&sh).alltoall(d, o))?,
                        None => run(
                            name,
                            coll::alltoallv(&mut pt2pt(&c), d, &s.by, &sd, o, &r.by, &rd),
                        )?,
                    }
                    return Ok(());
                }
            }
        }
        // SAFETY: sendbuf holds the send side's blocks.
        let d = unsafe { pack_blocks(send, &s.el, &s.displs, &s.t) }?;
        for i in 0..size {
            need(
                elem(recv, r.displs[i] as isize, &r.t)?.cast(),
                r.el[i],
                &r.t,
            )?;
        }
        let (rd, total) = coll::packed_displs(&r.by).map_err(|e| coll_code(&e, name))?;
        let mut out = vec![0u8; total];
        let regular = scd.is_none() && rcd.is_none() && d.len() == total;
        // The v-form through the segment when the blocks are alike enough.
        let v = (scd.is_some() || rcd.is_some())
            .then(|| {
                super::vshm::alltoallv(&c, name, &d, &|q| (sd[q], s.by[q]), &mut out, &|q| {
                    (rd[q], r.by[q])
                })
            })
            .flatten();
        match (v, regular.then(|| shm::get(&c, Which::Alltoall, total))) {
            (Some(res), _) => res?,
            (None, Some(Some(sh))) => run(name, shm::lock(&sh).alltoall(&d, &mut out))?,
            _ => run(
                name,
                coll::alltoallv(&mut pt2pt(&c), &d, &s.by, &sd, &mut out, &r.by, &rd),
            )?,
        }
        // SAFETY: recvbuf is valid for the receive side's blocks.
        return unsafe { unpack_blocks(&out, recv, &r.el, &r.by, &r.displs, &r.t, None) };
    };
    let (rd, total) = coll::packed_displs(&r.by).map_err(|e| coll_code(&e, name))?;
    let mut out = vec![0u8; total];
    let v = rcd
        .is_some()
        .then(|| {
            super::vshm::alltoallv(&c, name, &data, &|q| (rd[q], r.by[q]), &mut out, &|q| {
                (rd[q], r.by[q])
            })
        })
        .flatten();
    match (
        v,
        rcd.is_none().then(|| shm::get(&c, Which::Alltoall, total)),
    ) {
        (Some(res), _) => res?,
        (None, Some(Some(sh))) => run(name, shm::lock(&sh).alltoall(&data, &mut out))?,
        _ => run(
            name,
            coll::alltoallv(&mut pt2pt(&c), &data, &r.by, &rd, &mut out, &r.by, &rd),
        )?,
    }
    // SAFETY: recvbuf is valid for the receive side's blocks.
    unsafe { unpack_blocks(&out, recv, &r.el, &r.by, &r.displs, &r.t, None) }
}

mpi_fn! {
    fn MPI_Alltoall / PMPI_Alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        if let Err(e) = super::args::entry::exchange(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype) { return finish(comm, "MPI_Alltoall", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::intercoll::exchange(sendbuf, sendcount, None, sendtype, recvbuf, recvcount, None, recvtype, false, comm) } { return finish(comm, "MPI_Alltoall", r); } // intercommunicators
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::coll_hier::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) } { return finish(comm, "MPI_Alltoall", r); } // spanning nodes
        let name = "MPI_Alltoall";
        // SAFETY: the C contract for the buffers.
        finish(comm, name, unsafe { alltoall(name, sendbuf, sendcount, None, sendtype, recvbuf, recvcount, None, recvtype, comm) })
    }
}

mpi_fn! {
    fn MPI_Alltoallv / PMPI_Alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        if let Err(e) = super::args::entry::exchange(sendbuf, 0, sendtype, recvbuf, 0, recvtype).and_then(|()| super::args::entry::v_aliased(sendbuf, recvbuf.cast_const())) { return finish(comm, "MPI_Alltoallv", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::intercoll::exchange(sendbuf, 0, Some((sendcounts, sdispls)), sendtype, recvbuf, 0, Some((recvcounts, rdispls)), recvtype, false, comm) } { return finish(comm, "MPI_Alltoallv", r); } // intercommunicators
        let name = "MPI_Alltoallv";
        // SAFETY: the C contract for the buffers and arrays.
        finish(comm, name, unsafe { alltoall(name, sendbuf, 0, Some((sendcounts, sdispls)), sendtype, recvbuf, 0, Some((recvcounts, rdispls)), recvtype, comm) })
    }
}
