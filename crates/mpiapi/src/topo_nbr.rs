//! The blocking neighbourhood collectives (MPI_Neighbor_allgather(v),
//! MPI_Neighbor_alltoall(v, w)) over a communicator's topology.
//!
//! Each call posts a receive per source and a send per destination on the
//! communicator's collective context (`ctx + 1`) with the tags
//! `myrix_mpi::topo::Topology::neighbors` gives, then waits for them all, so no
//! pair of neighbours can deadlock whatever the graph. MPI_PROC_NULL neighbours (an
//! open edge of a Cartesian grid) move nothing and leave their receive block alone.
//! The runtime's lock is taken per step (post, each wait), as `coll_glue` does.

use crate::abi::*;
use crate::comm::CommRef;
use crate::datatype;
use crate::ffi::{finish, mpi_fn};
use crate::p2p::report;
use crate::runtime;
use crate::topo::{code, ints, topo_of};
use myrix_mpi::datatype::Datatype;
use myrix_mpi::p2p::{ReqId, SendMode};
use myrix_mpi::topo::Neighbors;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

type Dt = Arc<Datatype>;

/// One block of a C buffer: `n` elements of `t` at byte offset `off` from `buf`.
pub(crate) struct Block {
    pub(crate) off: isize,
    pub(crate) n: usize,
    pub(crate) t: Dt,
}

fn count(c: c_int) -> Result<usize, c_int> {
    usize::try_from(c).map_err(|_| MPI_ERR_COUNT)
}

fn nbytes(b: &Block) -> Result<usize, c_int> {
    b.t.size().checked_mul(b.n).ok_or(MPI_ERR_COUNT)
}

/// The packed bytes of a block.
///
/// # Safety
/// `buf + b.off` holds `b.n` elements of `b.t` (the C contract).
unsafe fn pack(buf: *const c_void, b: &Block) -> Result<Vec<u8>, c_int> {
    let mut v = vec![0u8; nbytes(b)?];
    if !v.is_empty() {
        if buf.is_null() && b.t.true_lb() == 0 {
            return Err(MPI_ERR_BUFFER);
        }
        let p = buf.cast::<u8>().wrapping_offset(b.off);
        // SAFETY: the caller's contract; v holds the block's packed bytes.
        unsafe { b.t.pack(p, b.n, &mut v) };
    }
    Ok(v)
}

/// Stores packed `data` into a block.
///
/// # Safety
/// `buf + b.off` is valid for writing `b.n` elements of `b.t` (the C contract).
unsafe fn unpack(data: &[u8], buf: *mut c_void, b: &Block) -> Result<(), c_int> {
    if data.len() != nbytes(b)? {
        return Err(MPI_ERR_TRUNCATE);
    }
    if data.is_empty() {
        return Ok(());
    }
    if buf.is_null() && b.t.true_lb() == 0 {
        return Err(MPI_ERR_BUFFER);
    }
    let p = buf.cast::<u8>().wrapping_offset(b.off);
    // SAFETY: the caller's contract.
    unsafe { b.t.unpack(data, p, b.n) };
    Ok(())
}

/// Sends `out[i]` to destination slot `i` and receives source slot `i`'s message
/// of `caps[i]` bytes; `None` for a MPI_PROC_NULL source.
fn exchange(
    c: &CommRef,
    nb: &Neighbors,
    out: Vec<Vec<u8>>,
    caps: &[usize],
    name: &str,
) -> Result<Vec<Option<Vec<u8>>>, c_int> {
    let ctx = c.ctx + 1;
    let world = |r: usize| c.ranks.get(r).copied().ok_or(MPI_ERR_RANK);
    let mut recvs: Vec<Option<ReqId>> = Vec::with_capacity(caps.len());
    let mut sends: Vec<ReqId> = Vec::with_capacity(out.len());
    runtime::with(name, |rt| {
        let p = rt.p2p.as_mut().ok_or(MPI_ERR_INTERN)?;
        for (i, src) in nb.sources.iter().enumerate() {
            let Some(s) = src else {
                recvs.push(None);
                continue;
            };
            let buf = vec![0u8; caps[i]];
            let r = p
                .engine
                .irecv_vec(Some(world(*s)?), ctx, Some(nb.recv_tags[i]), buf);
            recvs.push(Some(r.map_err(|e| report(name, &e))?));
        }
        for (i, (dst, data)) in nb.dests.iter().zip(out).enumerate() {
            let Some(d) = dst else { continue };
            let r = p
                .engine
                .isend_vec(world(*d)?, ctx, nb.send_tags[i], data, SendMode::Standard);
            sends.push(r.map_err(|e| report(name, &e))?);
        }
        Ok(())
    })?;
    let wait = |r: ReqId| {
        runtime::with(name, |rt| {
            let p = rt.p2p.as_mut().ok_or(MPI_ERR_INTERN)?;
            p.engine.wait_vec(r).map_err(|e| report(name, &e))
        })
    };
    let mut got = Vec::with_capacity(recvs.len());
    for r in recvs {
        got.push(match r {
            Some(r) => Some(wait(r)?.1),
            None => None,
        });
    }
    for s in sends {
        wait(s)?;
    }
    Ok(got)
}

/// The topology's neighbours of this process.
pub(crate) fn neighbors(comm: MPI_Comm, name: &str) -> Result<(CommRef, Neighbors), c_int> {
    let (c, t) = topo_of(comm, name)?;
    let nb = t.neighbors(c.rank as usize).map_err(code)?;
    Ok((c, nb))
}

/// The whole neighbourhood exchange: `sb[i]` blocks of `sendbuf` go to destination
/// `i`, source `i`'s data lands in `rb[i]` of `recvbuf`.
///
/// # Safety
/// The blocks lie in the C buffers (the C contract).
unsafe fn run(
    c: &CommRef,
    nb: &Neighbors,
    sendbuf: *const c_void,
    sb: &[Block],
    recvbuf: *mut c_void,
    rb: &[Block],
    name: &str,
) -> Result<(), c_int> {
    if sendbuf as usize == MPI_IN_PLACE || recvbuf as usize == MPI_IN_PLACE {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: the caller's contract.
    let out = sb
        .iter()
        .map(|b| unsafe { pack(sendbuf, b) })
        .collect::<Result<Vec<_>, _>>()?;
    let caps = rb.iter().map(nbytes).collect::<Result<Vec<_>, _>>()?;
    let got = exchange(c, nb, out, &caps, name)?;
    for (data, b) in got.iter().zip(rb) {
        if let Some(d) = data {
            // SAFETY: the caller's contract.
            unsafe { unpack(d, recvbuf, b) }?;
        }
    }
    Ok(())
}

/// `k` blocks of `n` elements of `t` end to end (the same block `k` times when
/// `same`).
pub(crate) fn regular(
    k: usize,
    n: c_int,
    dt: MPI_Datatype,
    same: bool,
) -> Result<Vec<Block>, c_int> {
    let n = count(n)?;
    let t = datatype::lookup_committed(dt)?;
    let step = (n as isize).checked_mul(t.extent()).ok_or(MPI_ERR_COUNT)?;
    (0..k)
        .map(|i| {
            let off = if same {
                0
            } else {
                step.checked_mul(i as isize).ok_or(MPI_ERR_COUNT)?
            };
            Ok(Block {
                off,
                n,
                t: t.clone(),
            })
        })
        .collect()
}

/// `k` blocks given by counts and element displacements.
///
/// # Safety
/// `counts` and `displs` hold `k` ints (the C contract).
pub(crate) unsafe fn varied(
    k: usize,
    counts: *const c_int,
    displs: *const c_int,
    dt: MPI_Datatype,
) -> Result<Vec<Block>, c_int> {
    let t = datatype::lookup_committed(dt)?;
    // SAFETY: the caller's contract.
    let (cs, ds) = unsafe {
        (
            ints(counts, k as c_int, MPI_ERR_ARG)?,
            ints(displs, k as c_int, MPI_ERR_ARG)?,
        )
    };
    cs.iter()
        .zip(ds)
        .map(|(&n, &d)| {
            let off = (d as isize).checked_mul(t.extent()).ok_or(MPI_ERR_COUNT)?;
            Ok(Block {
                off,
                n: count(n)?,
                t: t.clone(),
            })
        })
        .collect()
}

/// `k` blocks given by counts, byte displacements and a type each.
///
/// # Safety
/// The three arrays hold `k` entries (the C contract).
pub(crate) unsafe fn typed(
    k: usize,
    counts: *const c_int,
    displs: *const MPI_Aint,
    types: *const MPI_Datatype,
) -> Result<Vec<Block>, c_int> {
    if k == 0 {
        return Ok(Vec::new());
    }
    if counts.is_null() || displs.is_null() || types.is_null() {
        return Err(MPI_ERR_ARG);
    }
    (0..k)
        .map(|i| {
            // SAFETY: i < k entries each (the caller's contract).
            let (n, d, dt) = unsafe {
                (
                    counts.add(i).read(),
                    displs.add(i).read(),
                    types.add(i).read(),
                )
            };
            Ok(Block {
                off: d,
                n: count(n)?,
                t: datatype::lookup_committed(dt)?,
            })
        })
        .collect()
}

mpi_fn! {
    fn MPI_Neighbor_allgather / PMPI_Neighbor_allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let name = "MPI_Neighbor_allgather";
        let r = neighbors(comm, name).and_then(|(c, nb)| {
            let sb = regular(nb.dests.len(), sendcount, sendtype, true)?;
            let rb = regular(nb.sources.len(), recvcount, recvtype, false)?;
            // SAFETY: the C contract for both buffers.
            unsafe { run(&c, &nb, sendbuf, &sb, recvbuf, &rb, name) }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Neighbor_allgatherv / PMPI_Neighbor_allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let name = "MPI_Neighbor_allgatherv";
        let r = neighbors(comm, name).and_then(|(c, nb)| {
            let sb = regular(nb.dests.len(), sendcount, sendtype, true)?;
            // SAFETY: the C contract for the arrays and both buffers.
            unsafe {
                let rb = varied(nb.sources.len(), recvcounts, displs, recvtype)?;
                run(&c, &nb, sendbuf, &sb, recvbuf, &rb, name)
            }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Neighbor_alltoall / PMPI_Neighbor_alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let name = "MPI_Neighbor_alltoall";
        let r = neighbors(comm, name).and_then(|(c, nb)| {
            let sb = regular(nb.dests.len(), sendcount, sendtype, false)?;
            let rb = regular(nb.sources.len(), recvcount, recvtype, false)?;
            // SAFETY: the C contract for both buffers.
            unsafe { run(&c, &nb, sendbuf, &sb, recvbuf, &rb, name) }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Neighbor_alltoallv / PMPI_Neighbor_alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        let name = "MPI_Neighbor_alltoallv";
        let r = neighbors(comm, name).and_then(|(c, nb)| {
            // SAFETY: the C contract for the arrays and both buffers.
            unsafe {
                let sb = varied(nb.dests.len(), sendcounts, sdispls, sendtype)?;
                let rb = varied(nb.sources.len(), recvcounts, rdispls, recvtype)?;
                run(&c, &nb, sendbuf, &sb, recvbuf, &rb, name)
            }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Neighbor_alltoallw / PMPI_Neighbor_alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm) -> c_int {
        let name = "MPI_Neighbor_alltoallw";
        let r = neighbors(comm, name).and_then(|(c, nb)| {
            // SAFETY: the C contract for the arrays and both buffers.
            unsafe {
                let sb = typed(nb.dests.len(), sendcounts, sdispls, sendtypes)?;
                let rb = typed(nb.sources.len(), recvcounts, rdispls, recvtypes)?;
                run(&c, &nb, sendbuf, &sb, recvbuf, &rb, name)
            }
        });
        finish(comm, name, r)
    }
}
