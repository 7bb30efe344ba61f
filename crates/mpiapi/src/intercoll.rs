//! The blocking collectives on intercommunicators, with the standard's meaning:
//! rooted ones have a root group (the root passes MPI_ROOT, its group mates
//! MPI_PROC_NULL) and the other group names the root's remote rank; the
//! all-to-all ones give each group the other group's data (allreduce: the other
//! group's reduction).
//!
//! Simple and correct rather than fast: each is built from the library's own C
//! calls on the intercommunicator's hidden communicators (`intercomm::Inter`): a
//! step inside the local group on `lh` and point-to-point between the groups on
//! `mh`, whose contexts no user message can reach. Datatypes, counts and
//! buffers are thus checked by those calls. `coll.rs` calls into here first
//! (`None`: not an intercommunicator). Scan and Exscan are not defined on
//! intercommunicators (MPI_ERR_COMM). Never called with the communicator table
//! locked.

use crate::abi::*;
use crate::coll::{PMPI_Barrier, PMPI_Bcast, PMPI_Reduce, PMPI_Scatterv};
use crate::comm::lookup;
use crate::datatype::{PMPI_Type_get_extent, PMPI_Type_get_true_extent};
use crate::intercomm::{is_inter, Inter};
use crate::p2p::{PMPI_Irecv, PMPI_Isend, PMPI_Recv, PMPI_Send};
use crate::p2p_more::PMPI_Sendrecv;
use crate::request::PMPI_Waitall;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

/// MPI_ROOT (mpi.h).
pub(crate) const MPI_ROOT: c_int = -4;
/// The tag of the traffic between the groups on `mh` (a context of its own).
const TAG: c_int = 1;

type R = Result<(), c_int>;

/// The intercommunicator behind `comm`: `(local rank, remote size, Inter)`.
fn inter(comm: MPI_Comm) -> Option<(usize, usize, Arc<Inter>)> {
    if !is_inter(comm) {
        return None;
    }
    let c = lookup(comm, "a collective").ok()?;
    let i = c.inter.clone()?;
    Some((c.rank as usize, c.ranks.len(), i))
}

fn ok(code: c_int) -> R {
    if code == MPI_SUCCESS {
        Ok(())
    } else {
        Err(code)
    }
}

/// Where a process stands in a rooted collective.
pub(crate) enum Role {
    /// The root (MPI_ROOT).
    Root,
    /// The root's group mates (MPI_PROC_NULL): nothing to do.
    Idle,
    /// The other group; the root's remote rank.
    Leaf(usize),
}

pub(crate) fn role(root: c_int, remote: usize) -> Result<Role, c_int> {
    match root {
        MPI_ROOT => Ok(Role::Root),
        MPI_PROC_NULL => Ok(Role::Idle),
        r => usize::try_from(r)
            .ok()
            .filter(|&r| r < remote)
            .map(Role::Leaf)
            .ok_or(MPI_ERR_ROOT),
    }
}

/// `(lb, extent)` of a datatype.
fn extent(dt: MPI_Datatype, true_: bool) -> Result<(isize, isize), c_int> {
    let (mut lb, mut ext) = (0 as MPI_Aint, 0 as MPI_Aint);
    // SAFETY: two valid out-parameters.
    ok(unsafe {
        if true_ {
            PMPI_Type_get_true_extent(dt, &mut lb, &mut ext)
        } else {
            PMPI_Type_get_extent(dt, &mut lb, &mut ext)
        }
    })?;
    Ok((lb, ext))
}

/// A scratch buffer for `n` elements of `dt` (8-byte aligned) and the address to
/// pass as the buffer.
struct Scratch {
    _mem: Vec<u64>,
    at: *mut c_void,
}

fn scratch(n: usize, dt: MPI_Datatype) -> Result<Scratch, c_int> {
    let (_, ext) = extent(dt, false)?;
    let (tlb, text) = extent(dt, true)?;
    let bytes = match n {
        0 => 0,
        n => (n as isize - 1)
            .checked_mul(ext.max(0))
            .and_then(|b| b.checked_add(text.max(0)))
            .ok_or(MPI_ERR_COUNT)? as usize,
    };
    let mut mem = vec![0u64; bytes.div_ceil(8).max(1)];
    let at = mem.as_mut_ptr().cast::<u8>().wrapping_offset(-tlb).cast();
    Ok(Scratch { _mem: mem, at })
}

/// Element `d` of a buffer of `dt`.
fn at(buf: *const c_void, d: c_int, dt: MPI_Datatype) -> Result<*mut c_void, c_int> {
    let (_, ext) = extent(dt, false)?;
    Ok(buf
        .cast::<u8>()
        .wrapping_offset(d as isize * ext)
        .cast_mut()
        .cast())
}

/// `n` ints of a C array (NULL when `n` is 0 is fine).
///
/// # Safety
/// `p` is NULL or valid for `n` ints.
unsafe fn ints<'a>(p: *const c_int, n: usize) -> Result<&'a [c_int], c_int> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Nonblocking sends and receives on `mh`, waited for together.
#[derive(Default)]
struct Batch(Vec<MPI_Request>);

impl Batch {
    /// # Safety
    /// `buf` holds `n` elements of `dt`.
    unsafe fn send(
        &mut self,
        buf: *const c_void,
        n: c_int,
        dt: MPI_Datatype,
        to: c_int,
        mh: MPI_Comm,
    ) -> R {
        let mut r = MPI_REQUEST_NULL;
        // SAFETY: the caller's contract; r is an out-parameter.
        ok(unsafe { PMPI_Isend(buf, n, dt, to, TAG, mh, &mut r) })?;
        self.0.push(r);
        Ok(())
    }
    /// # Safety
    /// `buf` has room for `n` elements of `dt`.
    unsafe fn recv(
        &mut self,
        buf: *mut c_void,
        n: c_int,
        dt: MPI_Datatype,
        from: c_int,
        mh: MPI_Comm,
    ) -> R {
        let mut r = MPI_REQUEST_NULL;
        // SAFETY: the caller's contract; r is an out-parameter.
        ok(unsafe { PMPI_Irecv(buf, n, dt, from, TAG, mh, &mut r) })?;
        self.0.push(r);
        Ok(())
    }
    fn wait(mut self) -> R {
        let n = self.0.len() as c_int;
        // SAFETY: n requests; statuses ignored.
        ok(unsafe { PMPI_Waitall(n, self.0.as_mut_ptr(), std::ptr::null_mut()) })
    }
}

/// # Safety
/// The C contract for the buffers.
unsafe fn send(buf: *const c_void, n: c_int, dt: MPI_Datatype, to: c_int, mh: MPI_Comm) -> R {
    // SAFETY: the caller's contract.
    ok(unsafe { PMPI_Send(buf, n, dt, to, TAG, mh) })
}

/// # Safety
/// The C contract for the buffers.
unsafe fn recv(buf: *mut c_void, n: c_int, dt: MPI_Datatype, from: c_int, mh: MPI_Comm) -> R {
    // SAFETY: the caller's contract; status ignored.
    ok(unsafe { PMPI_Recv(buf, n, dt, from, TAG, mh, std::ptr::null_mut()) })
}

/// The leaders swap `n` elements: `out` to the remote leader, `into` from it.
///
/// # Safety
/// The C contract for the buffers.
unsafe fn leaders_swap(
    out: *const c_void,
    into: *mut c_void,
    n: c_int,
    dt: MPI_Datatype,
    i: &Inter,
) -> R {
    let to = i.mr(0);
    // SAFETY: the caller's contract; status ignored.
    ok(unsafe {
        PMPI_Sendrecv(
            out,
            n,
            dt,
            to,
            TAG,
            into,
            n,
            dt,
            to,
            TAG,
            i.mh,
            std::ptr::null_mut(),
        )
    })
}

pub fn barrier(comm: MPI_Comm) -> Option<R> {
    let (_, _, i) = inter(comm)?;
    // SAFETY: no buffers.
    Some(ok(unsafe { PMPI_Barrier(i.mh) }))
}

/// # Safety
/// The C contract for `buf`.
pub unsafe fn bcast(
    buf: *mut c_void,
    n: c_int,
    dt: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Option<R> {
    let (me, nr, i) = inter(comm)?;
    // SAFETY: the caller's contract, forwarded.
    Some((|| unsafe {
        match role(root, nr)? {
            Role::Root => send(buf, n, dt, i.mr(0), i.mh),
            Role::Idle => Ok(()),
            Role::Leaf(r) => {
                if me == 0 {
                    recv(buf, n, dt, i.mr(r), i.mh)?;
                }
                ok(PMPI_Bcast(buf, n, dt, 0, i.lh))
            }
        }
    })())
}

/// # Safety
/// The C contract for the buffers.
#[allow(clippy::too_many_arguments)]
pub unsafe fn reduce(
    sb: *const c_void,
    rb: *mut c_void,
    n: c_int,
    dt: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> Option<R> {
    let (me, nr, i) = inter(comm)?;
    // SAFETY: the caller's contract, forwarded; the scratch holds n elements.
    Some((|| unsafe {
        match role(root, nr)? {
            Role::Root => recv(rb, n, dt, i.mr(0), i.mh),
            Role::Idle => Ok(()),
            Role::Leaf(r) => {
                let t = scratch(usize::try_from(n).map_err(|_| MPI_ERR_COUNT)?, dt)?;
                ok(PMPI_Reduce(sb, t.at, n, dt, op, 0, i.lh))?;
                if me == 0 {
                    send(t.at, n, dt, i.mr(r), i.mh)?;
                }
                Ok(())
            }
        }
    })())
}

/// Allreduce: each group gets the other group's reduction.
///
/// # Safety
/// The C contract for the buffers.
pub unsafe fn allreduce(
    sb: *const c_void,
    rb: *mut c_void,
    n: c_int,
    dt: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Option<R> {
    let (me, _, i) = inter(comm)?;
    // SAFETY: the caller's contract, forwarded; the scratch holds n elements.
    Some((|| unsafe {
        let t = scratch(usize::try_from(n).map_err(|_| MPI_ERR_COUNT)?, dt)?;
        ok(PMPI_Reduce(sb, t.at, n, dt, op, 0, i.lh))?;
        if me == 0 {
            leaders_swap(t.at, rb, n, dt, &i)?;
        }
        ok(PMPI_Bcast(rb, n, dt, 0, i.lh))
    })())
}

/// Reduce_scatter (`counts` per local rank): the other group's reduction of
/// `sum(counts)` elements, scattered by `counts`.
///
/// # Safety
/// The C contract for the buffers; `counts` holds one int per local rank.
pub unsafe fn reduce_scatter(
    sb: *const c_void,
    rb: *mut c_void,
    counts: Option<*const c_int>,
    block: c_int,
    dt: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Option<R> {
    let (me, _, i) = inter(comm)?;
    let nl = i.local.len();
    // SAFETY: the caller's contract, forwarded; the scratches hold `total` elements.
    Some((|| unsafe {
        let cs = match counts {
            Some(p) => ints(p, nl)?.to_vec(),
            None => vec![block; nl],
        };
        if cs.iter().any(|&c| c < 0) {
            return Err(MPI_ERR_COUNT);
        }
        let mut displs = Vec::with_capacity(nl);
        let mut total: c_int = 0;
        for &c in &cs {
            displs.push(total);
            total = total.checked_add(c).ok_or(MPI_ERR_COUNT)?;
        }
        let mine = scratch(total as usize, dt)?;
        let theirs = scratch(total as usize, dt)?;
        ok(PMPI_Reduce(sb, mine.at, total, dt, op, 0, i.lh))?;
        if me == 0 {
            leaders_swap(mine.at, theirs.at, total, dt, &i)?;
        }
        let own = cs.get(me).copied().unwrap_or(0);
        ok(PMPI_Scatterv(
            theirs.at,
            cs.as_ptr(),
            displs.as_ptr(),
            dt,
            rb,
            own,
            dt,
            0,
            i.lh,
        ))
    })())
}

/// Gather (`v`: None, `rc` each) and Gatherv: the root receives from every
/// remote rank.
///
/// # Safety
/// The C contract for the buffers and arrays.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gather(
    sb: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    rb: *mut c_void,
    rc: c_int,
    v: Option<(*const c_int, *const c_int)>,
    rt: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Option<R> {
    let (_, nr, i) = inter(comm)?;
    // SAFETY: the caller's contract, forwarded.
    Some((|| unsafe {
        match role(root, nr)? {
            Role::Root => {
                let mut b = Batch::default();
                for q in 0..nr {
                    let (n, d) = match v {
                        None => (rc, rc.checked_mul(q as c_int).ok_or(MPI_ERR_COUNT)?),
                        Some((cs, ds)) => (ints(cs, nr)?[q], ints(ds, nr)?[q]),
                    };
                    b.recv(at(rb, d, rt)?, n, rt, i.mr(q), i.mh)?;
                }
                b.wait()
            }
            Role::Idle => Ok(()),
            Role::Leaf(r) => send(sb, sc, st, i.mr(r), i.mh),
        }
    })())
}

/// Scatter (`v`: None, `sc` each) and Scatterv: the root sends to every remote
/// rank.
///
/// # Safety
/// The C contract for the buffers and arrays.
#[allow(clippy::too_many_arguments)]
pub unsafe fn scatter(
    sb: *const c_void,
    sc: c_int,
    v: Option<(*const c_int, *const c_int)>,
    st: MPI_Datatype,
    rb: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Option<R> {
    let (_, nr, i) = inter(comm)?;
    // SAFETY: the caller's contract, forwarded.
    Some((|| unsafe {
        match role(root, nr)? {
            Role::Root => {
                let mut b = Batch::default();
                for q in 0..nr {
                    let (n, d) = match v {
                        None => (sc, sc.checked_mul(q as c_int).ok_or(MPI_ERR_COUNT)?),
                        Some((cs, ds)) => (ints(cs, nr)?[q], ints(ds, nr)?[q]),
                    };
                    b.send(at(sb, d, st)?, n, st, i.mr(q), i.mh)?;
                }
                b.wait()
            }
            Role::Idle => Ok(()),
            Role::Leaf(r) => recv(rb, rc, rt, i.mr(r), i.mh),
        }
    })())
}

/// Allgather(v) and Alltoall(v): every process sends to and receives from every
/// remote rank; `sv`/`rv` give per-remote-rank counts and displacements (None:
/// `sc`/`rc` each, at `q * count`); `all` sends the same block to everyone.
///
/// # Safety
/// The C contract for the buffers and arrays.
#[allow(clippy::too_many_arguments)]
pub unsafe fn exchange(
    sb: *const c_void,
    sc: c_int,
    sv: Option<(*const c_int, *const c_int)>,
    st: MPI_Datatype,
    rb: *mut c_void,
    rc: c_int,
    rv: Option<(*const c_int, *const c_int)>,
    rt: MPI_Datatype,
    all: bool,
    comm: MPI_Comm,
) -> Option<R> {
    let (_, nr, i) = inter(comm)?;
    let block = |v: Option<(*const c_int, *const c_int)>,
                 c: c_int,
                 q: usize|
     -> Result<(c_int, c_int), c_int> {
        match v {
            None => Ok((c, c.checked_mul(q as c_int).ok_or(MPI_ERR_COUNT)?)),
            // SAFETY: the arrays hold one int per remote rank (C contract).
            Some((cs, ds)) => unsafe { Ok((ints(cs, nr)?[q], ints(ds, nr)?[q])) },
        }
    };
    // SAFETY: the caller's contract, forwarded.
    Some((|| unsafe {
        if sb == MPI_IN_PLACE as *const c_void {
            return Err(MPI_ERR_BUFFER);
        }
        let mut b = Batch::default();
        for q in 0..nr {
            let (n, d) = block(rv, rc, q)?;
            b.recv(at(rb, d, rt)?, n, rt, i.mr(q), i.mh)?;
        }
        for q in 0..nr {
            let (n, d) = if all { (sc, 0) } else { block(sv, sc, q)? };
            b.send(at(sb, d, st)?, n, st, i.mr(q), i.mh)?;
        }
        b.wait()
    })())
}

/// Scan and Exscan: not defined on intercommunicators.
pub fn scan(comm: MPI_Comm) -> Option<R> {
    inter(comm).map(|_| Err(MPI_ERR_COMM))
}
