//! The rooted gathers and scatters in C: MPI_Gather(v) and MPI_Scatter(v).
//!
//! Split out of `coll.rs` (same checks, same paths): each call first tries the
//! predefined-type paths of `coll_fast.rs`, then packs with the datatype and runs
//! the segment's step (`coll_shm.rs`, `coll_vshm.rs` for the v-forms) or the
//! point-to-point algorithm of `myrix_mpi::coll`, and unpacks at the receivers.

use super::args::*;
use super::shm::{Via, Which};
use super::{args, contribution, fast, shm, stand, vshm};
use crate::abi::*;
use crate::coll_glue::pt2pt;
use crate::datatype;
use crate::ffi::{finish, mpi_fn};
use myrix_mpi::coll;
use std::os::raw::{c_int, c_void};

/// The communicator, from its record (`coll_cache.rs`), when a rooted call on it
/// may go straight to the predefined-type paths of `coll_fast.rs`: MPI is up and
/// the communicator's segment is in use, so neither `intercoll` nor `coll_hier`
/// applies. At the root the buffers must be what the entry's checks let through
/// (neither NULL nor in place, not the same memory; `plain`) — anything else takes
/// the entry as before. Those paths decide alike on every rank and return None for
/// whatever else they do not take (derived types, user ops, bad counts or roots),
/// which then also goes the whole way, so errors are reported as before. Any
/// communicator: MPI_COMM_WORLD, its dups and splits alike. MPI_Reduce (`coll.rs`)
/// takes it too.
#[inline]
pub(super) fn direct(
    comm: MPI_Comm,
    name: &str,
    send: *const c_void,
    recv: *const c_void,
    root: c_int,
) -> Option<Via<'static>> {
    crate::runtime::check(name).ok()?;
    let f = shm::fast(comm)?;
    plain(send, recv, root, &f.cref).then_some(Via::Record(f))
}

/// At the root of `c`, whether the send and receive buffers are neither NULL nor
/// in place nor the same memory (elsewhere: always).
fn plain(send: *const c_void, recv: *const c_void, root: c_int, c: &crate::comm::CommRef) -> bool {
    usize::try_from(root).ok() != Some(c.rank as usize)
        || !(send.is_null() || recv.is_null() || in_place(send) || in_place(recv) || send == recv)
}

/// Gather (`rcounts` None: `rc` each) and Gatherv.
///
/// # Safety
/// The C contract for the buffers and arrays.
#[allow(clippy::too_many_arguments)]
unsafe fn gather(
    name: &str,
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rcounts: Option<(*const c_int, *const c_int)>,
    rt: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), c_int> {
    let c = comm_ref(comm, name)?;
    // SAFETY: the C contract, forwarded.
    if let Some(r) = unsafe {
        match rcounts {
            None => fast::gather_predefined(send, sc, st, recv, rc, rt, root, Via::Comm(&c)),
            Some(v) => fast::gatherv_predefined(send, sc, st, recv, v, rt, root, Via::Comm(&c)),
        }
    } {
        return r;
    }
    let root = check_root(root, &c)?;
    let (me, size) = (c.rank as usize, c.ranks.len());
    let mut p = pt2pt(&c);
    if me != root {
        // SAFETY: the C contract (MPI_IN_PLACE is refused off the root).
        let data = unsafe { contribution(send, sc, st, recv, None) }?;
        if rcounts.is_none() {
            if let Some(s) = shm::get(&c, Which::Gather, data.len()) {
                return run(name, shm::lock(&s).gather(root, &data, &mut []));
            }
        } else if let Some(r) = vshm::gatherv(Via::Comm(&c), name, root, &data, None) {
            return r;
        }
        return run(name, coll::gatherv(&mut p, root, &data, &mut [], &[], &[]));
    }
    // The root's own side; when only it is bad, the root still takes the steps
    // (`coll_stand.rs`).
    // SAFETY: the C contract for the buffers and arrays.
    let side = (|| unsafe {
        let (rt, el, by, displs) = root_blocks(rt, rc, rcounts, size)?;
        let data = contribution(send, sc, st, recv, Some((displs[me] as isize, el[me], &rt)))?;
        if data.len() != by[me] {
            return Err(MPI_ERR_TRUNCATE);
        }
        for i in 0..size {
            need(elem(recv, displs[i] as isize, &rt)?.cast(), el[i], &rt)?;
        }
        Ok((rt, el, by, displs, data))
    })();
    let (rt, el, by, displs, data) = match side {
        Ok(v) => v,
        Err(e) => {
            if rcounts.is_none() && !in_place(send) {
                // SAFETY: sendbuf holds sendcount elements.
                if let Ok(data) = unsafe { contribution(send, sc, st, recv, None) } {
                    stand::gather(&c, root, &data);
                }
            }
            return Err(e);
        }
    };
    let (pd, total) = coll::packed_displs(&by).map_err(|e| coll_code(&e, name))?;
    let mut out = vec![0u8; total];
    match rcounts
        .is_none()
        .then(|| shm::get(&c, Which::Gather, by[me]))
    {
        Some(Some(s)) => run(name, shm::lock(&s).gather(root, &data, &mut out))?,
        Some(None) => run(name, coll::gatherv(&mut p, root, &data, &mut out, &by, &pd))?,
        None => match vshm::gatherv(
            Via::Comm(&c),
            name,
            root,
            &data,
            Some((&|q| (pd[q], by[q]), &mut out)),
        ) {
            Some(r) => r?,
            None => run(name, coll::gatherv(&mut p, root, &data, &mut out, &by, &pd))?,
        },
    }
    let skip = in_place(send).then_some(me);
    // SAFETY: recvbuf is valid for the blocks the root named.
    unsafe { unpack_blocks(&out, recv, &el, &by, &displs, &rt, skip) }
}

mpi_fn! {
    fn MPI_Gather / PMPI_Gather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        // Predefined types on a communicator with a segment: straight to it (`direct`).
        if let Some(c) = direct(comm, "MPI_Gather", sendbuf, recvbuf.cast_const(), root) {
            // SAFETY: the C contract, forwarded.
            if let Some(r) = unsafe { fast::gather_predefined(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, c) } { return finish(comm, "MPI_Gather", r); }
        }
        if let Err(e) = args::entry::side(sendbuf, sendcount, sendtype).and_then(|()| args::entry::root_aliased(sendbuf, recvbuf.cast_const(), sendcount > 0, root, comm)) { return finish(comm, "MPI_Gather", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract, forwarded.
        if let Some(r) = unsafe { stand::entry_gather(recvbuf, recvcount, None, recvtype, root, comm) } { return finish(comm, "MPI_Gather", r); } // an in-place receive buffer at the root (coll_stand.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::intercoll::gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, None, recvtype, root, comm) } { return finish(comm, "MPI_Gather", r); } // intercommunicators
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::coll_hier::gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) } { return finish(comm, "MPI_Gather", r); } // spanning nodes
        let name = "MPI_Gather";
        // SAFETY: the C contract for the buffers.
        finish(comm, name, unsafe { gather(name, sendbuf, sendcount, sendtype, recvbuf, recvcount, None, recvtype, root, comm) })
    }
}

mpi_fn! {
    fn MPI_Gatherv / PMPI_Gatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        // Predefined types on a communicator with a segment: straight to it (`direct`).
        if let Some(c) = direct(comm, "MPI_Gatherv", sendbuf, recvbuf.cast_const(), root) {
            // SAFETY: the C contract, forwarded.
            if let Some(r) = unsafe { fast::gatherv_predefined(sendbuf, sendcount, sendtype, recvbuf, (recvcounts, displs), recvtype, root, c) } { return finish(comm, "MPI_Gatherv", r); }
        }
        if let Err(e) = args::entry::side(sendbuf, sendcount, sendtype).and_then(|()| args::entry::root_aliased(sendbuf, recvbuf.cast_const(), sendcount > 0, root, comm)) { return finish(comm, "MPI_Gatherv", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract, forwarded.
        if let Some(r) = unsafe { stand::entry_gather(recvbuf, 0, Some((recvcounts, displs)), recvtype, root, comm) } { return finish(comm, "MPI_Gatherv", r); } // an in-place receive buffer at the root (coll_stand.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::intercoll::gather(sendbuf, sendcount, sendtype, recvbuf, 0, Some((recvcounts, displs)), recvtype, root, comm) } { return finish(comm, "MPI_Gatherv", r); } // intercommunicators
        // SAFETY: the C contract for the buffers and arrays, forwarded.
        if let Some(r) = unsafe { crate::coll_hier::gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm) } { return finish(comm, "MPI_Gatherv", r); } // spanning nodes
        let name = "MPI_Gatherv";
        // SAFETY: the C contract for the buffers and arrays.
        finish(comm, name, unsafe { gather(name, sendbuf, sendcount, sendtype, recvbuf, 0, Some((recvcounts, displs)), recvtype, root, comm) })
    }
}

/// Scatter (`scounts` None: `sc` each) and Scatterv.
///
/// # Safety
/// The C contract for the buffers and arrays.
#[allow(clippy::too_many_arguments)]
unsafe fn scatter(
    name: &str,
    send: *const c_void,
    sc: c_int,
    scounts: Option<(*const c_int, *const c_int)>,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), c_int> {
    let c = comm_ref(comm, name)?;
    // SAFETY: the C contract, forwarded.
    if let Some(r) = unsafe {
        match scounts {
            None => fast::scatter_predefined(send, sc, st, recv, rc, rt, root, Via::Comm(&c)),
            Some(v) => fast::scatterv_predefined(send, v, st, recv, rc, rt, root, Via::Comm(&c)),
        }
    } {
        return r;
    }
    let root = check_root(root, &c)?;
    let (me, size) = (c.rank as usize, c.ranks.len());
    let mut p = pt2pt(&c);
    let keep = !(me == root && in_place(recv));
    // What this rank receives: its block, or at an in-place root a discarded copy.
    let (rt, rn) = if keep {
        let rt = datatype::lookup(rt)?;
        let rn = count(rc)?;
        need(recv, rn, &rt)?;
        (Some(rt), rn)
    } else {
        (None, 0)
    };
    if me != root {
        let rt = rt.ok_or(MPI_ERR_INTERN)?;
        let mut out = vec![0u8; bytes(rn, &rt)?];
        match scounts
            .is_none()
            .then(|| shm::get(&c, Which::Scatter, out.len()))
        {
            Some(Some(s)) => run(name, shm::lock(&s).scatter(root, &[], &mut out))?,
            Some(None) => run(name, coll::scatterv(&mut p, root, &[], &[], &[], &mut out))?,
            None => match vshm::scatterv(Via::Comm(&c), name, root, None, &mut out) {
                Some(r) => r?,
                None => run(name, coll::scatterv(&mut p, root, &[], &[], &[], &mut out))?,
            },
        }
        // SAFETY: recvbuf is valid for recvcount elements.
        return unsafe { unpack(&out, recv.cast(), rn, &rt) };
    }
    // The root's own side; when only it is bad, the root still takes the steps
    // (`coll_stand.rs`).
    // SAFETY: the C contract for the buffers and arrays.
    let side = (|| unsafe {
        let (st, el, by, displs) = root_blocks(st, sc, scounts, size)?;
        let data = pack_blocks(send, &el, &displs, &st)?;
        let (pd, _) = coll::packed_displs(&by).map_err(|e| coll_code(&e, name))?;
        if let Some(rt) = &rt {
            if bytes(rn, rt)? != by[me] {
                return Err(MPI_ERR_TRUNCATE);
            }
        }
        Ok((by, pd, data))
    })();
    let (by, pd, data) = match side {
        Ok(v) => v,
        Err(e) => {
            if let (None, Some(rt)) = (scounts, &rt) {
                stand::scatter(&c, root, bytes(rn, rt)?);
            }
            return Err(e);
        }
    };
    let mut out = vec![0u8; by[me]];
    match scounts
        .is_none()
        .then(|| shm::get(&c, Which::Scatter, by[me]))
    {
        Some(Some(s)) => run(name, shm::lock(&s).scatter(root, &data, &mut out))?,
        Some(None) => run(
            name,
            coll::scatterv(&mut p, root, &data, &by, &pd, &mut out),
        )?,
        None => {
            match vshm::scatterv(
                Via::Comm(&c),
                name,
                root,
                Some((&|q| (pd[q], by[q]), &data)),
                &mut out,
            ) {
                Some(r) => r?,
                None => run(
                    name,
                    coll::scatterv(&mut p, root, &data, &by, &pd, &mut out),
                )?,
            }
        }
    }
    match rt {
        // SAFETY: recvbuf is valid for recvcount elements.
        Some(rt) => unsafe { unpack(&out, recv.cast(), rn, &rt) },
        None => Ok(()),
    }
}

mpi_fn! {
    fn MPI_Scatter / PMPI_Scatter(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        // Predefined types on a communicator with a segment: straight to it (`direct`).
        if let Some(c) = direct(comm, "MPI_Scatter", sendbuf, recvbuf.cast_const(), root) {
            // SAFETY: the C contract, forwarded.
            if let Some(r) = unsafe { fast::scatter_predefined(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, c) } { return finish(comm, "MPI_Scatter", r); }
        }
        if let Err(e) = args::entry::side(recvbuf, recvcount, recvtype).and_then(|()| args::entry::root_aliased(sendbuf, recvbuf.cast_const(), recvcount > 0, root, comm)) { return finish(comm, "MPI_Scatter", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract, forwarded.
        if let Some(r) = unsafe { stand::entry_scatter(sendbuf, sendcount, None, sendtype, root, comm) } { return finish(comm, "MPI_Scatter", r); } // an in-place send buffer at the root (coll_stand.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::intercoll::scatter(sendbuf, sendcount, None, sendtype, recvbuf, recvcount, recvtype, root, comm) } { return finish(comm, "MPI_Scatter", r); } // intercommunicators
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::coll_hier::scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) } { return finish(comm, "MPI_Scatter", r); } // spanning nodes
        let name = "MPI_Scatter";
        // SAFETY: the C contract for the buffers.
        finish(comm, name, unsafe { scatter(name, sendbuf, sendcount, None, sendtype, recvbuf, recvcount, recvtype, root, comm) })
    }
}

mpi_fn! {
    fn MPI_Scatterv / PMPI_Scatterv(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        // Predefined types on a communicator with a segment: straight to it (`direct`).
        if let Some(c) = direct(comm, "MPI_Scatterv", sendbuf, recvbuf.cast_const(), root) {
            // SAFETY: the C contract, forwarded.
            if let Some(r) = unsafe { fast::scatterv_predefined(sendbuf, (sendcounts, displs), sendtype, recvbuf, recvcount, recvtype, root, c) } { return finish(comm, "MPI_Scatterv", r); }
        }
        if let Err(e) = args::entry::side(recvbuf, recvcount, recvtype).and_then(|()| args::entry::root_aliased(sendbuf, recvbuf.cast_const(), recvcount > 0, root, comm)) { return finish(comm, "MPI_Scatterv", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract, forwarded.
        if let Some(r) = unsafe { stand::entry_scatter(sendbuf, 0, Some((sendcounts, displs)), sendtype, root, comm) } { return finish(comm, "MPI_Scatterv", r); } // an in-place send buffer at the root (coll_stand.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::intercoll::scatter(sendbuf, 0, Some((sendcounts, displs)), sendtype, recvbuf, recvcount, recvtype, root, comm) } { return finish(comm, "MPI_Scatterv", r); } // intercommunicators
        // SAFETY: the C contract for the buffers and arrays, forwarded.
        if let Some(r) = unsafe { crate::coll_hier::scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm) } { return finish(comm, "MPI_Scatterv", r); } // spanning nodes
        let name = "MPI_Scatterv";
        // SAFETY: the C contract for the buffers and arrays.
        finish(comm, name, unsafe { scatter(name, sendbuf, 0, Some((sendcounts, displs)), sendtype, recvbuf, recvcount, recvtype, root, comm) })
    }
}

/// The root's blocks of a rooted collective: its datatype, and per rank the
/// elements, bytes and displacement, from the regular count `n` or the v-form's
/// `(counts, displs)` arrays.
///
/// # Safety
/// The v-form's arrays hold one int per rank.
#[allow(clippy::type_complexity)]
unsafe fn root_blocks(
    dt: MPI_Datatype,
    n: c_int,
    v: Option<(*const c_int, *const c_int)>,
    size: usize,
) -> Result<(Dt, Vec<usize>, Vec<usize>, Vec<c_int>), c_int> {
    let dt = datatype::lookup(dt)?;
    let (el, by, displs) = match v {
        None => {
            let each = count(n)?;
            let (el, by) = counts(&vec![n; size], &dt)?;
            (el, by, regular(size, each)?)
        }
        Some((cs, ds)) => {
            // SAFETY: the caller's promise.
            let (cs, ds) = unsafe { (ints(cs, size)?, ints(ds, size)?) };
            let (el, by) = counts(cs, &dt)?;
            (el, by, ds.to_vec())
        }
    };
    Ok((dt, el, by, displs))
}
