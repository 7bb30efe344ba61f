//! The nonblocking collectives with one block per rank: MPI_Igather(v),
//! Iscatter(v), Iallgather(v), Ialltoall(v/w), and the blocking MPI_Alltoallw
//! (an Ialltoallw and a wait). Every block is its own region of the schedule: the
//! caller's memory for a contiguous type, else a packed copy (inputs) or a staging
//! buffer unpacked at completion (outputs).

use super::inter::{self, Side};
use super::lookup;
use super::{builder, coll_err, launch, Staged};
use crate::abi::*;
use crate::coll::args::*;
use crate::datatype;
use crate::ffi::{finish, mpi_fn};
use myrix_mpi::coll::nb::build::{self, Block};
use myrix_mpi::coll::nb::levels as by_levels;
use myrix_mpi::coll::nb::Builder;
use std::os::raw::{c_int, c_void};

/// Per-rank element counts and element displacements: `each` for every rank with
/// regular displacements, or the C arrays.
///
/// # Safety
/// The arrays hold one int per rank.
pub(super) unsafe fn layout(
    size: usize,
    each: c_int,
    arrays: Option<(*const c_int, *const c_int)>,
    t: &Dt,
) -> Result<(Vec<usize>, Vec<isize>), c_int> {
    match arrays {
        None => {
            let (el, _) = counts(&vec![each; size], t)?;
            let d = regular(size, count(each)?)?;
            Ok((el, d.iter().map(|&x| x as isize).collect()))
        }
        Some((cs, ds)) => {
            // SAFETY: one int per rank in each array.
            let (cs, ds) = unsafe { (ints(cs, size)?, ints(ds, size)?) };
            let (el, _) = counts(cs, t)?;
            Ok((el, ds.iter().map(|&x| x as isize).collect()))
        }
    }
}

/// The blocks of an output buffer (`own_in_place`: this rank's block keeps its
/// contents, staged with them).
///
/// # Safety
/// `buf` holds the blocks, valid until completion.
pub(super) unsafe fn outputs(
    st: &mut Staged,
    b: &mut Builder,
    buf: *mut c_void,
    el: &[usize],
    displs: &[isize],
    t: &Dt,
    own_in_place: Option<usize>,
) -> Result<Vec<Block>, c_int> {
    let mut v = Vec::with_capacity(el.len());
    for i in 0..el.len() {
        let p = elem(buf, displs[i], t)?.cast::<c_void>();
        // SAFETY: the caller's contract for block i.
        v.push(unsafe { st.output(b, p, el[i], t, own_in_place == Some(i)) }?);
    }
    Ok(v)
}

/// The blocks of an input buffer (`copy`: always a packed copy).
///
/// # Safety
/// `buf` holds the blocks, unchanged until completion.
pub(super) unsafe fn inputs(
    st: &mut Staged,
    b: &mut Builder,
    buf: *const c_void,
    el: &[usize],
    displs: &[isize],
    t: &Dt,
    copy: bool,
) -> Result<Vec<Block>, c_int> {
    let mut v = Vec::with_capacity(el.len());
    for i in 0..el.len() {
        let p = elem(buf, displs[i], t)?.cast_const().cast::<c_void>();
        // SAFETY: the caller's contract for block i.
        v.push(unsafe { st.input(b, p, el[i], t, copy) }?);
    }
    Ok(v)
}

/// Igather (`rcounts` None: `rc` each) and Igatherv.
///
/// # Safety
/// The C contract for the buffers, arrays and request.
#[allow(clippy::too_many_arguments)]
unsafe fn igather(
    name: &str,
    send: *const c_void,
    sc: c_int,
    st_: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rcounts: Option<(*const c_int, *const c_int)>,
    rt: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> Result<(), c_int> {
    if let Some(ic) = inter::of(comm, name)? {
        let many = (recv, rc, rcounts, rt);
        // SAFETY: the caller's contract.
        return unsafe {
            inter::irooted(
                ic,
                true,
                (send.cast_mut(), sc, st_),
                many,
                root,
                request,
                name,
            )
        };
    }
    let c = lookup(comm, name)?;
    let root = check_root(root, &c)?;
    let (me, size) = (c.rank as usize, c.ranks.len());
    let mut b = builder(&c);
    let mut st = Staged::new();
    let ip = in_place(send);
    if ip && me != root {
        return Err(MPI_ERR_BUFFER);
    }
    let mine = if ip {
        None
    } else {
        let t = datatype::lookup_committed(st_)?;
        // SAFETY: sendbuf holds sendcount elements.
        Some(unsafe { st.input(&mut b, send, count(sc)?, &t, false) }?)
    };
    let blocks = if me == root {
        let rt = datatype::lookup_committed(rt)?;
        // SAFETY: the caller's contract for the arrays and recvbuf.
        unsafe {
            let (el, ds) = layout(size, rc, rcounts, &rt)?;
            outputs(&mut st, &mut b, recv, &el, &ds, &rt, ip.then_some(me))?
        }
    } else {
        Vec::new()
    };
    build::gatherv(&mut b, root, mine, &blocks).map_err(coll_err(name))?;
    // SAFETY: the C contract for request.
    unsafe { launch(&c, b, st, request, name) }
}

mpi_fn! {
    fn MPI_Igather / PMPI_Igather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::side(sendbuf, sendcount, sendtype).and_then(|()| crate::coll::args::entry::root_aliased(sendbuf, recvbuf.cast_const(), sendcount > 0, root, comm)) { return crate::ffi::finish(comm, "MPI_Igather", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Igather";
        // SAFETY: the C contract for the buffers and request.
        finish(comm, name, unsafe { igather(name, sendbuf, sendcount, sendtype, recvbuf, recvcount, None, recvtype, root, comm, request) })
    }
}

mpi_fn! {
    fn MPI_Igatherv / PMPI_Igatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::side(sendbuf, sendcount, sendtype).and_then(|()| crate::coll::args::entry::root_aliased(sendbuf, recvbuf.cast_const(), sendcount > 0, root, comm)) { return crate::ffi::finish(comm, "MPI_Igatherv", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Igatherv";
        // SAFETY: the C contract for the buffers, arrays and request.
        finish(comm, name, unsafe { igather(name, sendbuf, sendcount, sendtype, recvbuf, 0, Some((recvcounts, displs)), recvtype, root, comm, request) })
    }
}

/// Iscatter (`scounts` None: `sc` each) and Iscatterv.
///
/// # Safety
/// The C contract for the buffers, arrays and request.
#[allow(clippy::too_many_arguments)]
unsafe fn iscatter(
    name: &str,
    send: *const c_void,
    sc: c_int,
    scounts: Option<(*const c_int, *const c_int)>,
    st_: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> Result<(), c_int> {
    if let Some(ic) = inter::of(comm, name)? {
        let many = (send.cast_mut(), sc, scounts, st_);
        // SAFETY: the caller's contract.
        return unsafe { inter::irooted(ic, false, (recv, rc, rt), many, root, request, name) };
    }
    let c = lookup(comm, name)?;
    let root = check_root(root, &c)?;
    let (me, size) = (c.rank as usize, c.ranks.len());
    let mut b = builder(&c);
    let mut st = Staged::new();
    let ip = in_place(recv);
    if ip && me != root {
        return Err(MPI_ERR_BUFFER);
    }
    let mine = if ip {
        None
    } else {
        let rt = datatype::lookup_committed(rt)?;
        // SAFETY: recvbuf is valid for recvcount elements.
        Some(unsafe { st.output(&mut b, recv, count(rc)?, &rt, false) }?)
    };
    let blocks = if me == root {
        let t = datatype::lookup_committed(st_)?;
        // SAFETY: the caller's contract for the arrays and sendbuf.
        unsafe {
            let (el, ds) = layout(size, sc, scounts, &t)?;
            inputs(&mut st, &mut b, send, &el, &ds, &t, false)?
        }
    } else {
        Vec::new()
    };
    build::scatterv(&mut b, root, &blocks, mine).map_err(coll_err(name))?;
    // SAFETY: the C contract for request.
    unsafe { launch(&c, b, st, request, name) }
}

mpi_fn! {
    fn MPI_Iscatter / PMPI_Iscatter(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::side(recvbuf, recvcount, recvtype).and_then(|()| crate::coll::args::entry::root_aliased(sendbuf, recvbuf.cast_const(), recvcount > 0, root, comm)) { return crate::ffi::finish(comm, "MPI_Iscatter", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Iscatter";
        // SAFETY: the C contract for the buffers and request.
        finish(comm, name, unsafe { iscatter(name, sendbuf, sendcount, None, sendtype, recvbuf, recvcount, recvtype, root, comm, request) })
    }
}

mpi_fn! {
    fn MPI_Iscatterv / PMPI_Iscatterv(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::side(recvbuf, recvcount, recvtype).and_then(|()| crate::coll::args::entry::root_aliased(sendbuf, recvbuf.cast_const(), recvcount > 0, root, comm)) { return crate::ffi::finish(comm, "MPI_Iscatterv", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Iscatterv";
        // SAFETY: the C contract for the buffers, arrays and request.
        finish(comm, name, unsafe { iscatter(name, sendbuf, 0, Some((sendcounts, displs)), sendtype, recvbuf, recvcount, recvtype, root, comm, request) })
    }
}

/// Iallgather (`rcounts` None: `rc` each) and Iallgatherv.
///
/// # Safety
/// The C contract for the buffers, arrays and request.
#[allow(clippy::too_many_arguments)]
unsafe fn iallgather(
    name: &str,
    send: *const c_void,
    sc: c_int,
    st_: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rcounts: Option<(*const c_int, *const c_int)>,
    rt: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> Result<(), c_int> {
    let Some(c) = super::intra(comm, name)? else {
        let ic = inter::of(comm, name)?.ok_or(MPI_ERR_COMM)?;
        let (s, r) = (
            (send, Side::Same(sc, st_)),
            (recv, Side::Blocks(rc, rcounts, rt)),
        );
        // SAFETY: the caller's contract.
        return unsafe { inter::iexchange(ic, s, r, request, name) };
    };
    let (me, size) = (c.rank as usize, c.ranks.len());
    let lay = super::levels(&c, comm, name);
    if lay.is_none() && rcounts.is_none() {
        let stt = match in_place(send) {
            true => None,
            false => Some(datatype::lookup_committed(st_)?),
        };
        let rtt = datatype::lookup_committed(rt)?;
        // In place, the send count and type are not significant (MPICH's tests pass -1).
        let sn = if stt.is_some() { count(sc)? } else { 0 };
        let rn = count(rc)?;
        // SAFETY: the caller's contract.
        let r = unsafe {
            super::shm_nb::iexchange(
                &c,
                false,
                send,
                sn,
                stt.as_ref(),
                recv,
                rn,
                &rtt,
                request,
                name,
            )
        };
        if let Some(r) = r {
            return r;
        }
    }
    let mut b = builder(&c);
    let mut st = Staged::new();
    let ip = in_place(send);
    let mine = if ip {
        None
    } else {
        let t = datatype::lookup_committed(st_)?;
        // SAFETY: sendbuf holds sendcount elements.
        Some(unsafe { st.input(&mut b, send, count(sc)?, &t, false) }?)
    };
    let rt = datatype::lookup_committed(rt)?;
    // SAFETY: the caller's contract for the arrays and recvbuf.
    let blocks = unsafe {
        let (el, ds) = layout(size, rc, rcounts, &rt)?;
        outputs(&mut st, &mut b, recv, &el, &ds, &rt, ip.then_some(me))?
    };
    match &lay {
        Some(l) => by_levels::allgatherv(&mut b, l, mine, &blocks),
        None => build::allgatherv(&mut b, mine, &blocks),
    }
    .map_err(coll_err(name))?;
    // SAFETY: the C contract for request.
    unsafe { launch(&c, b, st, request, name) }
}

mpi_fn! {
    fn MPI_Iallgather / PMPI_Iallgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the C contract for the arrays.
        if let Err(e) = crate::coll::args::entry::exchange(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype).and_then(|()| unsafe { crate::coll::args::entry::send_apart(sendbuf, sendcount, sendtype, recvbuf.cast_const(), recvcount, None, recvtype, comm) }) { return crate::ffi::finish(comm, "MPI_Iallgather", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Iallgather";
        // SAFETY: the C contract for the buffers and request.
        finish(comm, name, unsafe { iallgather(name, sendbuf, sendcount, sendtype, recvbuf, recvcount, None, recvtype, comm, request) })
    }
}

mpi_fn! {
    fn MPI_Iallgatherv / PMPI_Iallgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        // SAFETY: the C contract for the arrays.
        if let Err(e) = crate::coll::args::entry::exchange(sendbuf, sendcount, sendtype, recvbuf, 0, recvtype).and_then(|()| unsafe { crate::coll::args::entry::send_apart(sendbuf, sendcount, sendtype, recvbuf.cast_const(), 0, Some((recvcounts, displs)), recvtype, comm) }) { return crate::ffi::finish(comm, "MPI_Iallgatherv", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Iallgatherv";
        // SAFETY: the C contract for the buffers, arrays and request.
        finish(comm, name, unsafe { iallgather(name, sendbuf, sendcount, sendtype, recvbuf, 0, Some((recvcounts, displs)), recvtype, comm, request) })
    }
}

/// Ialltoall (`counts` None: `sc`/`rc` each) and Ialltoallv; with MPI_IN_PLACE the
/// receive side describes both, and the blocks to send are copied first.
///
/// # Safety
/// The C contract for the buffers, arrays and request.
#[allow(clippy::too_many_arguments)]
unsafe fn ialltoall(
    name: &str,
    send: *const c_void,
    sc: c_int,
    scd: Option<(*const c_int, *const c_int)>,
    st_: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rcd: Option<(*const c_int, *const c_int)>,
    rt: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> Result<(), c_int> {
    let Some(c) = super::intra(comm, name)? else {
        let ic = inter::of(comm, name)?.ok_or(MPI_ERR_COMM)?;
        let (s, r) = (
            (send, Side::Blocks(sc, scd, st_)),
            (recv, Side::Blocks(rc, rcd, rt)),
        );
        // SAFETY: the caller's contract.
        return unsafe { inter::iexchange(ic, s, r, request, name) };
    };
    let size = c.ranks.len();
    let rt = datatype::lookup_committed(rt)?;
    // By levels: MPI_Ialltoall with blocks of at most MYRIX_MPI_HIER_ALLTOALL_MAX
    // bytes (the blocking form's switch point; every rank's block is as long).
    let blen = usize::try_from(rc)
        .ok()
        .and_then(|n| n.checked_mul(rt.size()));
    let lay = match blen {
        Some(bl) if scd.is_none() && bl <= crate::coll_hier::alltoall_max() => {
            super::levels(&c, comm, name)
        }
        _ => None,
    };
    if lay.is_none() && scd.is_none() && rcd.is_none() && !in_place(send) {
        let stt = datatype::lookup_committed(st_)?;
        let sn = count(sc)?.checked_mul(size).ok_or(MPI_ERR_COUNT)?;
        let rn = count(rc)?;
        // SAFETY: the caller's contract.
        let r = unsafe {
            super::shm_nb::iexchange(&c, true, send, sn, Some(&stt), recv, rn, &rt, request, name)
        };
        if let Some(r) = r {
            return r;
        }
    }
    let mut b = builder(&c);
    let mut st = Staged::new();
    // SAFETY: the caller's contract for the arrays and buffers.
    let (sb, rb) = unsafe {
        let (rel, rds) = layout(size, rc, rcd, &rt)?;
        let sb = if in_place(send) {
            inputs(&mut st, &mut b, recv, &rel, &rds, &rt, true)?
        } else {
            let t = datatype::lookup_committed(st_)?;
            let (sel, sds) = layout(size, sc, scd, &t)?;
            inputs(&mut st, &mut b, send, &sel, &sds, &t, false)?
        };
        (sb, outputs(&mut st, &mut b, recv, &rel, &rds, &rt, None)?)
    };
    match (&lay, blen) {
        (Some(l), Some(bl)) => by_levels::alltoall(&mut b, l, &sb, &rb, bl),
        _ => build::alltoallv(&mut b, &sb, &rb),
    }
    .map_err(coll_err(name))?;
    // SAFETY: the C contract for request.
    unsafe { launch(&c, b, st, request, name) }
}

mpi_fn! {
    fn MPI_Ialltoall / PMPI_Ialltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::exchange(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype) { return crate::ffi::finish(comm, "MPI_Ialltoall", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Ialltoall";
        // SAFETY: the C contract for the buffers and request.
        finish(comm, name, unsafe { ialltoall(name, sendbuf, sendcount, None, sendtype, recvbuf, recvcount, None, recvtype, comm, request) })
    }
}

mpi_fn! {
    fn MPI_Ialltoallv / PMPI_Ialltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::exchange(sendbuf, 0, sendtype, recvbuf, 0, recvtype).and_then(|()| crate::coll::args::entry::v_aliased(sendbuf, recvbuf.cast_const())) { return crate::ffi::finish(comm, "MPI_Ialltoallv", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Ialltoallv";
        // SAFETY: the C contract for the buffers, arrays and request.
        finish(comm, name, unsafe { ialltoall(name, sendbuf, 0, Some((sendcounts, sdispls)), sendtype, recvbuf, 0, Some((recvcounts, rdispls)), recvtype, comm, request) })
    }
}

/// One side of an alltoallw: per-rank counts, byte displacements and types.
///
/// # Safety
/// Each array holds one entry per rank.
pub(super) unsafe fn w_side(
    size: usize,
    cs: *const c_int,
    ds: *const c_int,
    ts: *const MPI_Datatype,
) -> Result<Vec<(usize, isize, Dt)>, c_int> {
    // SAFETY: one int per rank in each array.
    let (cs, ds) = unsafe { (ints(cs, size)?, ints(ds, size)?) };
    if size > 0 && ts.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let mut v = Vec::with_capacity(size);
    for i in 0..size {
        // SAFETY: one datatype per rank.
        let t = datatype::lookup_committed(unsafe { ts.add(i).read() })?;
        v.push((count(cs[i])?, ds[i] as isize, t));
    }
    Ok(v)
}

/// MPI_Ialltoallw (and the body of the blocking MPI_Alltoallw): displacements in
/// bytes, a datatype per rank on each side.
///
/// # Safety
/// The C contract for the buffers, arrays and request.
#[allow(clippy::too_many_arguments)]
unsafe fn ialltoallw(
    name: &str,
    send: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    stypes: *const MPI_Datatype,
    recv: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> Result<(), c_int> {
    if let Some(ic) = inter::of(comm, name)? {
        let s = (send, Side::Typed(scounts, sdispls, stypes));
        let r = (recv, Side::Typed(rcounts, rdispls, rtypes));
        // SAFETY: the caller's contract.
        return unsafe { inter::iexchange(ic, s, r, request, name) };
    }
    let c = lookup(comm, name)?;
    let size = c.ranks.len();
    let mut b = builder(&c);
    let mut st = Staged::new();
    // SAFETY: the caller's contract for the arrays.
    let rs = unsafe { w_side(size, rcounts, rdispls, rtypes) }?;
    let ip = in_place(send);
    let ss = if ip {
        rs.clone()
    } else {
        // SAFETY: as above.
        unsafe { w_side(size, scounts, sdispls, stypes) }?
    };
    let base = if ip { recv.cast_const() } else { send };
    let mut sb = Vec::with_capacity(size);
    let mut rb = Vec::with_capacity(size);
    for ((n, d, t), (rn, rd, rt)) in ss.iter().zip(&rs) {
        let p = base.cast::<u8>().wrapping_offset(*d).cast::<c_void>();
        let q = recv.cast::<u8>().wrapping_offset(*rd).cast::<c_void>();
        // SAFETY: the caller's contract for each rank's block (in place, copied
        // before anything lands in the receive buffer).
        unsafe {
            sb.push(st.input(&mut b, p, *n, t, ip)?);
            rb.push(st.output(&mut b, q, *rn, rt, false)?);
        }
    }
    build::alltoallv(&mut b, &sb, &rb).map_err(coll_err(name))?;
    // SAFETY: the C contract for request.
    unsafe { launch(&c, b, st, request, name) }
}

mpi_fn! {
    fn MPI_Ialltoallw / PMPI_Ialltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::not_in_place(recvbuf).and_then(|()| crate::coll::args::entry::v_aliased(sendbuf, recvbuf.cast_const())) { return crate::ffi::finish(comm, "MPI_Ialltoallw", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Ialltoallw";
        // SAFETY: the C contract for the buffers, arrays and request.
        finish(comm, name, unsafe { ialltoallw(name, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request) })
    }
}

mpi_fn! {
    /// The nonblocking schedule, waited for.
    fn MPI_Alltoallw / PMPI_Alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm) -> c_int {
        if let Err(e) = crate::coll::args::entry::not_in_place(recvbuf).and_then(|()| crate::coll::args::entry::v_aliased(sendbuf, recvbuf.cast_const())) { return crate::ffi::finish(comm, "MPI_Alltoallw", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Alltoallw";
        let mut h = MPI_REQUEST_NULL;
        // SAFETY: the C contract for the buffers and arrays; h is ours.
        let r = unsafe {
            ialltoallw(name, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, &mut h)
                .and_then(|()| crate::p2p::wait_handle(&mut h, std::ptr::null_mut(), name))
        };
        finish(comm, name, r)
    }
}
