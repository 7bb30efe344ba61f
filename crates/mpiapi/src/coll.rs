//! The blocking collectives in C: MPI_Barrier, Bcast, Reduce, Allreduce,
//! Gather(v), Scatter(v), Allgather(v), Alltoall(v), Reduce_scatter(_block), Scan,
//! Exscan, with MPI_IN_PLACE where the standard allows it.
//!
//! Each call checks its arguments (counts MPI_ERR_COUNT, root MPI_ERR_ROOT, types
//! MPI_ERR_TYPE, ops MPI_ERR_OP, NULL buffers MPI_ERR_BUFFER), packs what it sends
//! with the datatype, runs the algorithm of `myrix_mpi::coll` over the
//! communicator's collective context (`coll_glue::pt2pt`) and unpacks what it
//! received. Reductions run the op on packed whole elements (through a scratch
//! copy in memory layout for non-contiguous types). Never panics on bad
//! arguments; errors go through the communicator's handler.

#[path = "coll_a2a.rs"]
mod a2a;
#[path = "coll_args.rs"]
pub mod args;
#[path = "coll_big.rs"]
mod big;
#[path = "coll_fast.rs"]
mod fast;
#[path = "coll_rooted.rs"]
mod rooted;
#[path = "coll_shm.rs"]
pub mod shm;
#[path = "coll_stand.rs"]
mod stand;
#[path = "coll_vshm.rs"]
mod vshm;
pub(crate) use a2a::PMPI_Alltoallv;
pub(crate) use rooted::{PMPI_Gather, PMPI_Gatherv, PMPI_Scatter, PMPI_Scatterv};

use crate::abi::*;
use crate::coll_glue::pt2pt;
use crate::datatype;
use crate::ffi::{finish, mpi_fn};
use args::*;
use myrix_mpi::coll::{self, CollError, Pt2Pt, ReduceOp};
use shm::{Via, Which};
use std::os::raw::{c_int, c_void};

fn barrier(comm: MPI_Comm, name: &str) -> Result<(), c_int> {
    let c = comm_ref(comm, name)?;
    if let Some(s) = shm::get(&c, Which::Barrier, 0) {
        shm::lock(&s).barrier();
        return Ok(());
    }
    coll::barrier(&mut pt2pt(&c)).map_err(|e| coll_code(&e, name))
}

mpi_fn! {
    /// MPI_Barrier: dissemination over the collective context (until point-to-point
    /// is wired in, communicators of every world rank use the PMI fence).
    fn MPI_Barrier / PMPI_Barrier(comm: MPI_Comm) -> c_int {
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = crate::intercoll::barrier(comm) { return finish(comm, "MPI_Barrier", r); } // intercommunicators
        if let Some(r) = crate::coll_hier::barrier(comm) { return finish(comm, "MPI_Barrier", r); } // spanning nodes
        finish(comm, "MPI_Barrier", barrier(comm, "MPI_Barrier"))
    }
}

/// # Safety
/// The C contract for `buf`.
unsafe fn bcast(
    buf: *mut c_void,
    cnt: c_int,
    dt: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), c_int> {
    let name = "MPI_Bcast";
    let c = comm_ref(comm, name)?;
    // The hot path: a predefined type, borrowed (no reference count), through
    // shared memory in place.
    if let Some(t) = datatype::predefined_ref(dt) {
        let n = count(cnt)?;
        let root = check_root(root, &c)?;
        if let Some(s) = shm::get(&c, Which::Bcast, bytes(n, t)?) {
            // SAFETY: the buffer holds n elements.
            if let Some(mem) = unsafe { contig(buf, n, t) }? {
                return run(name, shm::lock(&s).bcast(root, mem));
            }
        }
    }
    let t = datatype::lookup(dt)?;
    let n = count(cnt)?;
    let root = check_root(root, &c)?;
    let me = c.rank as usize;
    let shm = shm::get(&c, Which::Bcast, bytes(n, &t)?);
    if let Some(s) = &shm {
        // SAFETY: the buffer holds n elements.
        if let Some(mem) = unsafe { contig(buf, n, &t) }? {
            return run(name, shm::lock(s).bcast(root, mem));
        }
    }
    let mut data = if me == root {
        // SAFETY: the root's buffer holds n elements.
        unsafe { pack(buf.cast(), n, &t) }?
    } else {
        need(buf, n, &t)?;
        vec![0u8; bytes(n, &t)?]
    };
    match &shm {
        Some(s) => run(name, shm::lock(s).bcast(root, &mut data))?,
        None => run(name, coll::bcast(&mut pt2pt(&c), root, &mut data))?,
    }
    if me != root {
        // SAFETY: the buffer is valid for n elements.
        unsafe { unpack(&data, buf.cast(), n, &t) }?;
    }
    Ok(())
}

mpi_fn! {
    fn MPI_Bcast / PMPI_Bcast(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
        if let Err(e) = args::entry::bcast_sizes(count, datatype) { return finish(comm, "MPI_Bcast", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract, forwarded.
        if let Some(r) = unsafe { stand::entry_bcast(buffer, count, datatype, root, comm) } { return finish(comm, "MPI_Bcast", r); } // a NULL or in-place buffer (coll_stand.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::intercoll::bcast(buffer, count, datatype, root, comm) } { return finish(comm, "MPI_Bcast", r); } // intercommunicators
        // SAFETY: the C contract for the buffer, forwarded.
        if let Some(r) = unsafe { crate::coll_hier::bcast(buffer, count, datatype, root, comm) } { return finish(comm, "MPI_Bcast", r); } // spanning nodes
        // SAFETY: the C contract for buffer.
        finish(comm, "MPI_Bcast", unsafe { bcast(buffer, count, datatype, root, comm) })
    }
}

/// # Safety
/// The C contract for the buffers.
#[allow(clippy::too_many_arguments)]
unsafe fn reduce(
    send: *const c_void,
    recv: *mut c_void,
    cnt: c_int,
    dt: MPI_Datatype,
    opx: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), c_int> {
    let name = "MPI_Reduce";
    let c = comm_ref(comm, name)?;
    // SAFETY: the C contract, forwarded.
    if let Some(r) = unsafe { fast::reduce_builtin(send, recv, cnt, dt, opx, root, Via::Comm(&c)) }
    {
        return r;
    }
    let red = reduction(opx, dt)?;
    let n = count(cnt)?;
    let root = check_root(root, &c)?;
    let me = c.rank as usize;
    let t = &red.t;
    let data = if in_place(send) {
        if me != root {
            return Err(MPI_ERR_BUFFER);
        }
        // SAFETY: in place: the root's recvbuf holds its contribution.
        unsafe { pack(recv.cast_const().cast(), n, t) }?
    } else {
        // SAFETY: sendbuf holds n elements.
        unsafe { pack(send.cast(), n, t) }?
    };
    let mut out = vec![0u8; if me == root { data.len() } else { 0 }];
    // A bad receive buffer at the root: its steps still taken (`coll_stand.rs`).
    let bad = if me == root {
        need(recv, n, t).err()
    } else {
        None
    };
    let shm = shm::get(&c, Which::Reduce, data.len());
    if let Some(e) = bad {
        let _ = match &shm {
            Some(s) => red.run(name, |rop| {
                shm::lock(s).reduce(root, &data, &mut out, t.size().max(1), rop)
            }),
            None => red.run(name, |rop| {
                coll::reduce(&mut pt2pt(&c), root, &data, &mut out, rop)
            }),
        };
        return Err(e);
    }
    if let Some(s) = shm {
        let elem = t.size().max(1);
        if me == root {
            // SAFETY: recvbuf holds n elements at the root (its contribution was
            // copied out above when in place).
            if let Some(mem) = unsafe { contig(recv, n, t) }? {
                return red.run(name, |rop| {
                    shm::lock(&s).reduce(root, &data, mem, elem, rop)
                });
            }
        }
        red.run(name, |rop| {
            shm::lock(&s).reduce(root, &data, &mut out, elem, rop)
        })?;
    } else {
        let mut p = pt2pt(&c);
        red.run(name, |rop| coll::reduce(&mut p, root, &data, &mut out, rop))?;
    }
    if me == root {
        // SAFETY: recvbuf is valid for n elements at the root.
        unsafe { unpack(&out, recv.cast(), n, t) }?;
    }
    Ok(())
}

mpi_fn! {
    fn MPI_Reduce / PMPI_Reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) -> c_int {
        // Predefined types and ops on a communicator with a segment: straight to it
        // (`coll_rooted.rs` `direct`).
        if let Some(c) = rooted::direct(comm, "MPI_Reduce", sendbuf, recvbuf.cast_const(), root) {
            // SAFETY: the C contract, forwarded.
            if let Some(r) = unsafe { fast::reduce_builtin(sendbuf, recvbuf, count, datatype, op, root, c) } { return finish(comm, "MPI_Reduce", r); }
        }
        if let Err(e) = args::entry::reduce(count, datatype, op).and_then(|()| args::entry::root_aliased(sendbuf, recvbuf.cast_const(), count > 0, root, comm)) { return finish(comm, "MPI_Reduce", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract, forwarded.
        if let Some(r) = unsafe { stand::entry_reduce(sendbuf, recvbuf, count, datatype, op, root, comm) } { return finish(comm, "MPI_Reduce", r); } // an in-place receive buffer at the root (coll_stand.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::intercoll::reduce(sendbuf, recvbuf, count, datatype, op, root, comm) } { return finish(comm, "MPI_Reduce", r); } // intercommunicators
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::coll_hier::reduce(sendbuf, recvbuf, count, datatype, op, root, comm) } { return finish(comm, "MPI_Reduce", r); } // spanning nodes
        // SAFETY: the C contract for the buffers.
        finish(comm, "MPI_Reduce", unsafe { reduce(sendbuf, recvbuf, count, datatype, op, root, comm) })
    }
}

/// The record of `comm` when a collective whose buffers count on every rank
/// (MPI_Allreduce, MPI_Allgather) may go straight to the predefined-type paths of
/// `coll_fast.rs`: as for the rooted calls (`coll_rooted.rs` `direct`: MPI is up, the
/// communicator's segment is in use, so neither `intercoll` nor `coll_hier`
/// applies), and neither buffer is MPI_IN_PLACE nor both the same pointer, which
/// the entry's checks would refuse or the general path handles. Those paths return
/// None for whatever else they do not take, alike on every rank, and that goes the
/// whole way, so errors are reported as before.
#[inline]
fn direct_all(
    comm: MPI_Comm,
    name: &str,
    send: *const c_void,
    recv: *const c_void,
) -> Option<Via<'static>> {
    if in_place(send) || in_place(recv) || send == recv {
        return None;
    }
    crate::runtime::check(name).ok()?;
    shm::fast(comm).map(Via::Record)
}

type AllFn = fn(&mut dyn Pt2Pt, &[u8], &mut [u8], &mut ReduceOp) -> Result<(), CollError>;

/// Allreduce, Scan, Exscan: every rank contributes and receives `cnt` elements.
///
/// # Safety
/// The C contract for the buffers.
#[allow(clippy::too_many_arguments)]
unsafe fn all_like(
    name: &str,
    f: AllFn,
    exscan: bool,
    allreduce: bool,
    send: *const c_void,
    recv: *mut c_void,
    cnt: c_int,
    dt: MPI_Datatype,
    opx: MPI_Op,
    comm: MPI_Comm,
) -> Result<(), c_int> {
    let c = comm_ref(comm, name)?;
    if allreduce {
        // SAFETY: the C contract, forwarded.
        if let Some(r) = unsafe { fast::allreduce_builtin(send, recv, cnt, dt, opx, Via::Comm(&c)) }
        {
            return r;
        }
    }
    let red = reduction(opx, dt)?;
    let n = count(cnt)?;
    let t = &red.t;
    let len = bytes(n, t)?;
    if let Some(s) = allreduce
        .then(|| shm::get(&c, Which::Allreduce, len))
        .flatten()
    {
        let elem = t.size().max(1);
        // SAFETY: recvbuf holds n elements.
        if let Some(out) = unsafe { contig(recv, n, t) }? {
            if in_place(send) {
                let data = out.to_vec();
                return red.run(name, |rop| shm::lock(&s).allreduce(&data, out, elem, rop));
            }
            // SAFETY: sendbuf holds n elements, apart from recvbuf.
            if let Some(data) = unsafe { contig(send, n, t) }? {
                return red.run(name, |rop| shm::lock(&s).allreduce(data, out, elem, rop));
            }
        }
        let data = if in_place(send) {
            // SAFETY: in place: recvbuf holds the contribution.
            unsafe { pack(recv.cast_const().cast(), n, t) }?
        } else {
            // SAFETY: sendbuf holds n elements.
            unsafe { pack(send.cast(), n, t) }?
        };
        need(recv, n, t)?;
        let mut out = vec![0u8; data.len()];
        red.run(name, |rop| {
            shm::lock(&s).allreduce(&data, &mut out, elem, rop)
        })?;
        // SAFETY: recvbuf is valid for n elements.
        return unsafe { unpack(&out, recv.cast(), n, t) };
    }
    let data = if in_place(send) {
        // SAFETY: in place: recvbuf holds the contribution.
        unsafe { pack(recv.cast_const().cast(), n, t) }?
    } else {
        // SAFETY: sendbuf holds n elements.
        unsafe { pack(send.cast(), n, t) }?
    };
    need(recv, n, t)?;
    let mut out = vec![0u8; data.len()];
    let mut p = pt2pt(&c);
    red.run(name, |rop| f(&mut p, &data, &mut out, rop))?;
    if !(exscan && c.rank == 0) {
        // SAFETY: recvbuf is valid for n elements.
        unsafe { unpack(&out, recv.cast(), n, t) }?;
    }
    Ok(())
}

mpi_fn! {
    fn MPI_Allreduce / PMPI_Allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        // Predefined types and ops on a communicator with a segment: straight to it (`direct_all`).
        if let Some(c) = direct_all(comm, "MPI_Allreduce", sendbuf, recvbuf.cast_const()) {
            // SAFETY: the C contract, forwarded.
            if let Some(r) = unsafe { fast::allreduce_builtin(sendbuf, recvbuf, count, datatype, op, c) } { return finish(comm, "MPI_Allreduce", r); }
        }
        if let Err(e) = args::entry::all(sendbuf, recvbuf, count, datatype, op) { return finish(comm, "MPI_Allreduce", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::intercoll::allreduce(sendbuf, recvbuf, count, datatype, op, comm) } { return finish(comm, "MPI_Allreduce", r); } // intercommunicators
        let name = "MPI_Allreduce";
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::coll_hier::allreduce(sendbuf, recvbuf, count, datatype, op, comm) } { return finish(comm, name, r); } // spanning nodes
        // SAFETY: the C contract for the buffers.
        finish(comm, name, unsafe { all_like(name, coll::allreduce, false, true, sendbuf, recvbuf, count, datatype, op, comm) })
    }
}

mpi_fn! {
    fn MPI_Scan / PMPI_Scan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        if let Err(e) = args::entry::all(sendbuf, recvbuf, count, datatype, op) { return finish(comm, "MPI_Scan", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = crate::intercoll::scan(comm) { return finish(comm, "MPI_Scan", r); } // intercommunicators
        let name = "MPI_Scan";
        // SAFETY: the C contract for the buffers.
        finish(comm, name, unsafe { all_like(name, coll::scan, false, false, sendbuf, recvbuf, count, datatype, op, comm) })
    }
}

mpi_fn! {
    /// Rank 0's recvbuf is left as it was.
    fn MPI_Exscan / PMPI_Exscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        if let Err(e) = args::entry::all(sendbuf, recvbuf, count, datatype, op) { return finish(comm, "MPI_Exscan", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = crate::intercoll::scan(comm) { return finish(comm, "MPI_Exscan", r); } // intercommunicators
        let name = "MPI_Exscan";
        // SAFETY: the C contract for the buffers.
        finish(comm, name, unsafe { all_like(name, coll::exscan, true, false, sendbuf, recvbuf, count, datatype, op, comm) })
    }
}

/// Reduce_scatter (`rcounts` per rank) and Reduce_scatter_block (`rcounts` None:
/// `block` each).
///
/// # Safety
/// The C contract for the buffers and `rcounts`.
#[allow(clippy::too_many_arguments)]
unsafe fn reduce_scatter(
    name: &str,
    send: *const c_void,
    recv: *mut c_void,
    rcounts: Option<*const c_int>,
    block: c_int,
    dt: MPI_Datatype,
    opx: MPI_Op,
    comm: MPI_Comm,
) -> Result<(), c_int> {
    let c = comm_ref(comm, name)?;
    let red = reduction(opx, dt)?;
    let t = &red.t;
    let size = c.ranks.len();
    let me = c.rank as usize;
    let el: Vec<usize> = match rcounts {
        // SAFETY: recvcounts holds one int per rank.
        Some(p) => counts(unsafe { ints(p, size) }?, t)?.0,
        None => vec![count(block)?; size],
    };
    let total = el
        .iter()
        .try_fold(0usize, |a, &b| a.checked_add(b))
        .ok_or(MPI_ERR_COUNT)?;
    let data = if in_place(send) {
        // SAFETY: in place: recvbuf holds the whole contribution.
        unsafe { pack(recv.cast_const().cast(), total, t) }?
    } else {
        // SAFETY: sendbuf holds total elements.
        unsafe { pack(send.cast(), total, t) }?
    };
    need(recv, el[me], t)?;
    let by: Vec<usize> = el.iter().map(|&n| bytes(n, t)).collect::<Result<_, _>>()?;
    let mut out = vec![0u8; by[me]];
    let mut p = pt2pt(&c);
    red.run(name, |rop| {
        coll::reduce_scatter(&mut p, &data, &mut out, &by, rop)
    })?;
    // SAFETY: recvbuf is valid for recvcounts[me] elements.
    unsafe { unpack(&out, recv.cast(), el[me], t) }
}

mpi_fn! {
    fn MPI_Reduce_scatter / PMPI_Reduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        if let Err(e) = args::entry::all(sendbuf, recvbuf, 0, datatype, op).and_then(|()| args::entry::v_aliased(sendbuf, recvbuf.cast_const())) { return finish(comm, "MPI_Reduce_scatter", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::intercoll::reduce_scatter(sendbuf, recvbuf, Some(recvcounts), 0, datatype, op, comm) } { return finish(comm, "MPI_Reduce_scatter", r); } // intercommunicators
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::coll_hier::reduce_scatter(sendbuf, recvbuf, Some(recvcounts), 0, datatype, op, comm) } { return finish(comm, "MPI_Reduce_scatter", r); } // spanning nodes
        let name = "MPI_Reduce_scatter";
        // SAFETY: the C contract for the buffers and recvcounts.
        finish(comm, name, unsafe { reduce_scatter(name, sendbuf, recvbuf, Some(recvcounts), 0, datatype, op, comm) })
    }
}

mpi_fn! {
    fn MPI_Reduce_scatter_block / PMPI_Reduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
        if let Err(e) = args::entry::all(sendbuf, recvbuf, recvcount, datatype, op) { return finish(comm, "MPI_Reduce_scatter_block", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::intercoll::reduce_scatter(sendbuf, recvbuf, None, recvcount, datatype, op, comm) } { return finish(comm, "MPI_Reduce_scatter_block", r); } // intercommunicators
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::coll_hier::reduce_scatter(sendbuf, recvbuf, None, recvcount, datatype, op, comm) } { return finish(comm, "MPI_Reduce_scatter_block", r); } // spanning nodes
        let name = "MPI_Reduce_scatter_block";
        // SAFETY: the C contract for the buffers.
        finish(comm, name, unsafe { reduce_scatter(name, sendbuf, recvbuf, None, recvcount, datatype, op, comm) })
    }
}

/// What a rank sends in the gathers: its packed send buffer, or with MPI_IN_PLACE
/// its own block of the receive buffer (`own`: element displacement and count).
///
/// # Safety
/// The C contract for the buffers.
unsafe fn contribution(
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *const c_void,
    own: Option<(isize, usize, &Dt)>,
) -> Result<Vec<u8>, c_int> {
    if in_place(send) {
        let (d, n, rt) = own.ok_or(MPI_ERR_BUFFER)?;
        // SAFETY: in place: the receive buffer holds this rank's block.
        unsafe { pack(elem(recv, d, rt)?, n, rt) }
    } else {
        let st = datatype::lookup(st)?;
        // SAFETY: sendbuf holds sc elements.
        unsafe { pack(send.cast(), count(sc)?, &st) }
    }
}

/// Allgather (`rcounts` None: `rc` each) and Allgatherv.
///
/// # Safety
/// The C contract for the buffers and arrays.
#[allow(clippy::too_many_arguments)]
unsafe fn allgather(
    name: &str,
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rcounts: Option<(*const c_int, *const c_int)>,
    rt: MPI_Datatype,
    comm: MPI_Comm,
) -> Result<(), c_int> {
    let c = comm_ref(comm, name)?;
    // SAFETY: the C contract, forwarded.
    if let Some(r) = unsafe { big::allgather_predefined(send, sc, st, recv, rc, rcounts, rt, &c) } {
        return r;
    }
    let (me, size) = (c.rank as usize, c.ranks.len());
    let rt = datatype::lookup(rt)?;
    let (el, by, displs) = match rcounts {
        None => {
            let each = count(rc)?;
            let (el, by) = counts(&vec![rc; size], &rt)?;
            (el, by, regular(size, each)?)
        }
        Some((cs, ds)) => {
            // SAFETY: recvcounts and displs hold one int per rank.
            let (cs, ds) = unsafe { (ints(cs, size)?, ints(ds, size)?) };
            let (el, by) = counts(cs, &rt)?;
            (el, by, ds.to_vec())
        }
    };
    // SAFETY: the C contract for the buffers.
    let data =
        unsafe { contribution(send, sc, st, recv, Some((displs[me] as isize, el[me], &rt))) }?;
    if data.len() != by[me] {
        return Err(MPI_ERR_TRUNCATE);
    }
    for i in 0..size {
        need(elem(recv, displs[i] as isize, &rt)?.cast(), el[i], &rt)?;
    }
    let (pd, total) = coll::packed_displs(&by).map_err(|e| coll_code(&e, name))?;
    let mut out = vec![0u8; total];
    let which = if rcounts.is_none() {
        Which::Allgather
    } else {
        Which::Allgatherv
    };
    match shm::get(&c, which, total) {
        Some(s) => run(name, shm::lock(&s).allgatherv(&data, &mut out, &by, &pd))?,
        None => run(
            name,
            coll::allgatherv(&mut pt2pt(&c), &data, &mut out, &by, &pd),
        )?,
    }
    let skip = in_place(send).then_some(me);
    // SAFETY: recvbuf is valid for every rank's block.
    unsafe { unpack_blocks(&out, recv, &el, &by, &displs, &rt, skip) }
}

mpi_fn! {
    fn MPI_Allgather / PMPI_Allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        // Predefined types on a communicator with a segment: straight to it (`direct_all`).
        if let Some(c) = direct_all(comm, "MPI_Allgather", sendbuf, recvbuf.cast_const()) {
            // SAFETY: the C contract, forwarded.
            if let Some(r) = unsafe { fast::allgather_plain(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c) } { return finish(comm, "MPI_Allgather", r); }
        }
        // SAFETY: the C contract for the arrays.
        if let Err(e) = args::entry::exchange(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype).and_then(|()| unsafe { args::entry::send_apart(sendbuf, sendcount, sendtype, recvbuf.cast_const(), recvcount, None, recvtype, comm) }) { return finish(comm, "MPI_Allgather", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::intercoll::exchange(sendbuf, sendcount, None, sendtype, recvbuf, recvcount, None, recvtype, true, comm) } { return finish(comm, "MPI_Allgather", r); } // intercommunicators
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::coll_hier::allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, None, recvtype, comm) } { return finish(comm, "MPI_Allgather", r); } // spanning nodes
        let name = "MPI_Allgather";
        // SAFETY: the C contract for the buffers.
        finish(comm, name, unsafe { allgather(name, sendbuf, sendcount, sendtype, recvbuf, recvcount, None, recvtype, comm) })
    }
}

mpi_fn! {
    fn MPI_Allgatherv / PMPI_Allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
        // SAFETY: the C contract for the arrays.
        if let Err(e) = args::entry::exchange(sendbuf, sendcount, sendtype, recvbuf, 0, recvtype).and_then(|()| unsafe { args::entry::send_apart(sendbuf, sendcount, sendtype, recvbuf.cast_const(), 0, Some((recvcounts, displs)), recvtype, comm) }) { return finish(comm, "MPI_Allgatherv", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::intercoll::exchange(sendbuf, sendcount, None, sendtype, recvbuf, 0, Some((recvcounts, displs)), recvtype, true, comm) } { return finish(comm, "MPI_Allgatherv", r); } // intercommunicators
        // SAFETY: the C contract for the buffers, forwarded.
        if let Some(r) = unsafe { crate::coll_hier::allgather(sendbuf, sendcount, sendtype, recvbuf, 0, Some((recvcounts, displs)), recvtype, comm) } { return finish(comm, "MPI_Allgatherv", r); } // spanning nodes
        let name = "MPI_Allgatherv";
        // SAFETY: the C contract for the buffers and arrays.
        finish(comm, name, unsafe { allgather(name, sendbuf, sendcount, sendtype, recvbuf, 0, Some((recvcounts, displs)), recvtype, comm) })
    }
}
