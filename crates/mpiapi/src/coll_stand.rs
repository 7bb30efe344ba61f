//! A root whose own side of MPI_Gather, MPI_Scatter or MPI_Reduce is bad (a type,
//! count or buffer only the root passes: the receive side of a gather, the send
//! side of a scatter, the receive buffer of a reduce) still takes the collective's
//! steps before it returns the error, with scratch memory sized from the side it
//! shares with the other ranks. Their calls then end (a gather's blocks and a
//! reduce's result are dropped, a scatter's ranks receive zeros) where under
//! MPI_ERRORS_RETURN they would wait for the root forever. Not when the shared side
//! is bad too or MPI_IN_PLACE (nothing then says how many steps to take), nor for
//! the v-forms (only the root knows the counts) or on the by-levels path.
//!
//! At the entry of the C calls (`entry_*`, before any path is chosen): a buffer
//! that is NULL or MPI_IN_PLACE where the standard forbids it, at a rank that knows
//! the sizes all the same (MPI_Bcast's buffer at any rank; the root's receive
//! buffer of MPI_Reduce, Gather(v), its send buffer of Scatter(v)), is replaced by
//! zeroed scratch memory and the call made again through its PMPI entry, so the
//! rank takes the collective's steps on whatever path its peers take; it then
//! returns MPI_ERR_BUFFER.

use super::args::{check_root, comm_ref, in_place, need};
use super::shm::{self, Which};
use super::{PMPI_Bcast, PMPI_Gather, PMPI_Gatherv, PMPI_Reduce, PMPI_Scatter, PMPI_Scatterv};
use crate::abi::*;
use crate::coll_glue::pt2pt;
use crate::comm::CommRef;
use crate::datatype;
use myrix_mpi::coll;
use myrix_mpi::datatype::Datatype;
use std::os::raw::{c_int, c_void};

/// A gather's steps at `root` for the other ranks' blocks of `data.len()` bytes.
pub(super) fn gather(c: &CommRef, root: usize, data: &[u8]) {
    let (n, b) = (c.ranks.len(), data.len());
    let mut out = vec![0u8; b * n];
    match shm::get(c, Which::Gather, b) {
        Some(s) => {
            let _ = shm::lock(&s).gather(root, data, &mut out);
        }
        None => {
            let (by, pd): (Vec<usize>, Vec<usize>) = (0..n).map(|q| (b, q * b)).unzip();
            let _ = coll::gatherv(&mut pt2pt(c), root, data, &mut out, &by, &pd);
        }
    }
}

/// A scatter's steps at `root`: zeros for the other ranks' blocks of `b` bytes.
pub(super) fn scatter(c: &CommRef, root: usize, b: usize) {
    let n = c.ranks.len();
    let (send, mut out) = (vec![0u8; b * n], vec![0u8; b]);
    match shm::get(c, Which::Scatter, b) {
        Some(s) => {
            let _ = shm::lock(&s).scatter(root, &send, &mut out);
        }
        None => {
            let (by, pd): (Vec<usize>, Vec<usize>) = (0..n).map(|q| (b, q * b)).unzip();
            let _ = coll::scatterv(&mut pt2pt(c), root, &send, &by, &pd, &mut out);
        }
    }
}

/// Zeroed memory for `n` elements of `t` (its bytes, kept alive by the caller,
/// and the buffer address to pass); None for a negative extent or a size that
/// overflows (the call then returns its error without the steps).
fn scratch(n: usize, t: &Datatype) -> Option<(Vec<u8>, *mut c_void)> {
    if n == 0 || t.size() == 0 {
        let mut one = vec![0u8; 1];
        let p = one.as_mut_ptr().cast();
        return Some((one, p));
    }
    let ext = t.extent();
    let span = isize::try_from(n - 1)
        .ok()?
        .checked_mul(ext.max(0))?
        .checked_add(t.true_extent())?;
    if ext < 0 || span <= 0 {
        return None;
    }
    let mut mem = vec![0u8; usize::try_from(span).ok()?];
    // Element 0's first byte lies true_lb bytes past the buffer's address.
    let p = mem.as_mut_ptr().wrapping_offset(-t.true_lb()).cast();
    Some((mem, p))
}

/// Scratch for the blocks `counts[i]` at element `displs[i]` of a v-form.
///
/// # Safety
/// `counts` and `displs` are NULL or hold `size` ints.
unsafe fn scratch_v(
    counts: *const c_int,
    displs: *const c_int,
    size: usize,
    t: &Datatype,
) -> Option<(Vec<u8>, *mut c_void)> {
    // SAFETY: the caller's promise.
    let (cs, ds) = unsafe {
        (
            super::args::ints(counts, size).ok()?,
            super::args::ints(displs, size).ok()?,
        )
    };
    let mut end = 0usize;
    for (&c, &d) in cs.iter().zip(ds) {
        let e = usize::try_from(d)
            .ok()?
            .checked_add(usize::try_from(c).ok()?)?;
        end = end.max(e);
    }
    scratch(end, t)
}

/// Whether this rank is the root of an intracommunicator's rooted collective (its
/// size if so). One lookup, none for the predefined communicators: the non-roots
/// of a gather, scatter or reduce often pass NULL, and come through here.
fn am_root(comm: MPI_Comm, root: c_int, name: &str) -> Option<usize> {
    let c = comm_ref(comm, name).ok()?;
    if c.inter.is_some() {
        return None;
    }
    let r = check_root(root, &c).ok()?;
    (c.rank as usize == r).then_some(c.ranks.len())
}

/// MPI_Bcast with a NULL (not MPI_BOTTOM) or MPI_IN_PLACE buffer at this rank, root
/// or not: the steps on scratch memory (the root sends zeros), then MPI_ERR_BUFFER.
///
/// # Safety
/// The C contract of MPI_Bcast.
pub(super) unsafe fn entry_bcast(
    buf: *mut c_void,
    n: c_int,
    dt: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Option<Result<(), c_int>> {
    if !in_place(buf) && !buf.is_null() {
        return None;
    }
    let t = datatype::lookup(dt).ok()?;
    let cnt = usize::try_from(n).ok()?;
    if !in_place(buf) && need(buf, cnt, &t).is_ok() {
        return None;
    }
    let (_mem, p) = scratch(cnt, &t)?;
    // SAFETY: p holds n elements of dt.
    let _ = unsafe { PMPI_Bcast(p, n, dt, root, comm) };
    Some(Err(MPI_ERR_BUFFER))
}

/// MPI_Reduce with MPI_IN_PLACE or NULL as the root's receive buffer.
///
/// # Safety
/// The C contract of MPI_Reduce.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn entry_reduce(
    send: *const c_void,
    recv: *mut c_void,
    n: c_int,
    dt: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> Option<Result<(), c_int>> {
    if !in_place(recv) && !recv.is_null() {
        return None;
    }
    am_root(comm, root, "MPI_Reduce")?;
    let t = datatype::lookup(dt).ok()?;
    let cnt = usize::try_from(n).ok()?;
    if !in_place(recv) && need(recv, cnt, &t).is_ok() {
        return None;
    }
    let (_out, p) = scratch(cnt, &t)?;
    let (_in, q) = scratch(cnt, &t)?;
    let send = if in_place(send) { q.cast_const() } else { send };
    // SAFETY: p (and q) hold n elements of dt; send is the caller's.
    let _ = unsafe { PMPI_Reduce(send, p, n, dt, op, root, comm) };
    Some(Err(MPI_ERR_BUFFER))
}

/// MPI_Gather(v) with MPI_IN_PLACE or NULL as the root's receive buffer: the blocks its
/// receive side names land in scratch memory (its own block taken from scratch
/// too).
///
/// # Safety
/// The C contract of MPI_Gather / MPI_Gatherv.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn entry_gather(
    recv: *mut c_void,
    rc: c_int,
    v: Option<(*const c_int, *const c_int)>,
    rt: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Option<Result<(), c_int>> {
    if !in_place(recv) && !recv.is_null() {
        return None;
    }
    let size = am_root(comm, root, "MPI_Gather")?;
    let t = datatype::lookup(rt).ok()?;
    // SAFETY: the caller's contract for the arrays at the root.
    let (total, mine, (_all, p)) = unsafe { sides(rc, v, size, &t, comm, "MPI_Gather") }?;
    if !in_place(recv) && need(recv, total, &t).is_ok() {
        return None;
    }
    let (_one, q) = scratch(usize::try_from(mine).ok()?, &t)?;
    // SAFETY: scratch memory of the receive side's size.
    let _ = unsafe {
        match v {
            None => PMPI_Gather(q, rc, rt, p, rc, rt, root, comm),
            Some((cs, ds)) => PMPI_Gatherv(q, mine, rt, p, cs, ds, rt, root, comm),
        }
    };
    Some(Err(MPI_ERR_BUFFER))
}

/// The root's side of a gather or scatter: its elements in all, its own count,
/// and scratch memory for all of them.
///
/// # Safety
/// The v-form's arrays hold one int per rank.
#[allow(clippy::type_complexity)]
unsafe fn sides(
    n: c_int,
    v: Option<(*const c_int, *const c_int)>,
    size: usize,
    t: &Datatype,
    comm: MPI_Comm,
    name: &str,
) -> Option<(usize, c_int, (Vec<u8>, *mut c_void))> {
    match v {
        None => {
            let all = usize::try_from(n).ok()?.checked_mul(size)?;
            Some((all, n, scratch(all, t)?))
        }
        Some((cs, ds)) => {
            let me = comm_ref(comm, name).ok()?.rank as usize;
            // SAFETY: the caller's promise.
            let counts = unsafe { super::args::ints(cs, size) }.ok()?;
            let mut all = 0usize;
            for &c in counts {
                all = all.checked_add(usize::try_from(c).ok()?)?;
            }
            // SAFETY: as above.
            Some((all, counts[me], unsafe { scratch_v(cs, ds, size, t) }?))
        }
    }
}

/// MPI_Scatter(v) with MPI_IN_PLACE or NULL as the root's send buffer: zeros
/// scattered.
///
/// # Safety
/// The C contract of MPI_Scatter / MPI_Scatterv.
pub(super) unsafe fn entry_scatter(
    send: *const c_void,
    sc: c_int,
    v: Option<(*const c_int, *const c_int)>,
    st: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Option<Result<(), c_int>> {
    if !in_place(send) && !send.is_null() {
        return None;
    }
    let size = am_root(comm, root, "MPI_Scatter")?;
    let t = datatype::lookup(st).ok()?;
    // SAFETY: the caller's contract for the arrays at the root.
    let (total, mine, (_all, p)) = unsafe { sides(sc, v, size, &t, comm, "MPI_Scatter") }?;
    if !in_place(send) && need(send, total, &t).is_ok() {
        return None;
    }
    let (_one, q) = scratch(usize::try_from(mine).ok()?, &t)?;
    // SAFETY: scratch memory of the send side's size.
    let _ = unsafe {
        match v {
            None => PMPI_Scatter(p, sc, st, q, sc, st, root, comm),
            Some((cs, ds)) => PMPI_Scatterv(p, cs, ds, st, q, mine, st, root, comm),
        }
    };
    Some(Err(MPI_ERR_BUFFER))
}
