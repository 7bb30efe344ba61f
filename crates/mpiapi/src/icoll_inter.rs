//! The nonblocking collectives on intercommunicators, with the blocking forms'
//! meaning (`intercoll.rs`): rooted ones have a root (MPI_ROOT), its idle group
//! mates (MPI_PROC_NULL) and the other group naming the root's remote rank; the
//! others give each group the other group's data (allreduce, reduce_scatter: the
//! other group's reduction).
//!
//! One schedule per call, on the intercommunicator's own collective context
//! (`ctx + 1`, which its point-to-point traffic and the blocking forms, run on the
//! hidden communicators, never use) and its own sequence numbers. The schedule's
//! ranks are both groups, local then remote (local rank `i` is `i`, remote rank `q`
//! is `nl + q`): every rank of both groups starts the intercommunicator's
//! collectives in the same order, so the tags agree. Steps inside the local group
//! use the builder's subgroup ([`Builder::group`]) with the intracommunicator
//! schedules (binomial bcast and reduce, linear scatterv); the groups' leaders
//! (local rank 0) swap between the phases, each phase fenced. Gather, scatter,
//! allgather and all-to-all go straight between the groups (linear, as the blocking
//! forms). MPI_IN_PLACE is refused (MPI_ERR_BUFFER): the standard does not allow it
//! on intercommunicators. Scan and Exscan are not defined on them (MPI_ERR_COMM).

use super::more::{inputs, layout, outputs, w_side};
use super::{combine, launch, Staged};
use crate::abi::*;
use crate::coll::args::*;
use crate::comm::CommRef;
use crate::datatype;
use crate::intercoll::{role, Role};
use crate::intercomm::is_inter;
use myrix_mpi::coll::nb::build::{self, Block};
use myrix_mpi::coll::nb::Builder;
use myrix_mpi::coll::CollError;
use std::os::raw::{c_int, c_void};

/// An intercommunicator's schedule parts: the communicator, both groups' world
/// ranks (local then remote) and the local group's size.
pub(crate) struct Ic {
    c: CommRef,
    all: Vec<u32>,
    nl: usize,
}

impl Ic {
    /// The local group's size.
    pub(crate) fn local_size(&self) -> usize {
        self.nl
    }
    fn me(&self) -> usize {
        self.c.rank as usize
    }
    fn nr(&self) -> usize {
        self.all.len() - self.nl
    }
    /// A schedule over both groups on the intercommunicator's collective context.
    fn builder(&self) -> Builder<'_> {
        Builder::new(&self.all, self.me(), self.c.ctx + 1, 0)
    }
    /// The schedule's rank of remote rank `q`.
    fn remote(&self, q: usize) -> usize {
        self.nl + q
    }
    /// Steps from here on are inside the local group.
    fn local<'r>(&'r self, b: &mut Builder<'r>) {
        b.group(&self.all[..self.nl], self.me());
    }
}

/// `Some` when `comm` is an intercommunicator (its parts), `None` otherwise.
pub(crate) fn of(comm: MPI_Comm, name: &str) -> Result<Option<Ic>, c_int> {
    if !is_inter(comm) {
        return Ok(None);
    }
    let c = crate::comm::lookup(comm, name)?;
    let i = c.inter.clone().ok_or(MPI_ERR_INTERN)?;
    let nl = i.local.len();
    let all = [&i.local[..], &c.ranks[..]].concat();
    Ok(Some(Ic { c, all, nl }))
}

fn err(name: &str) -> impl Fn(CollError) -> c_int + '_ {
    move |e| coll_code(&e, name)
}

/// No MPI_IN_PLACE on an intercommunicator.
fn no_in_place(p: *const c_void) -> Result<(), c_int> {
    if in_place(p) {
        Err(MPI_ERR_BUFFER)
    } else {
        Ok(())
    }
}

/// The root's remote rank or role, checked against the remote group.
fn role_in(ic: &Ic, root: c_int) -> Result<Role, c_int> {
    role(root, ic.nr())
}

/// # Safety
/// `request` is NULL or valid for an MPI_Request.
pub(crate) unsafe fn ibarrier(ic: Ic, request: *mut MPI_Request, name: &str) -> Result<(), c_int> {
    // Every rank of both groups in one dissemination barrier: no rank leaves before
    // every rank (so every rank of the other group) has entered.
    let mut b = ic.builder();
    build::barrier(&mut b);
    // SAFETY: the caller's contract.
    unsafe { launch(&ic.c, b, Staged::new(), request, name) }
}

/// # Safety
/// The C contract for the buffer and request.
pub(crate) unsafe fn ibcast(
    ic: Ic,
    buf: *mut c_void,
    n: usize,
    t: &Dt,
    root: c_int,
    request: *mut MPI_Request,
    name: &str,
) -> Result<(), c_int> {
    let role = role_in(&ic, root)?;
    let mut b = ic.builder();
    let mut st = Staged::new();
    match role {
        Role::Root => {
            // SAFETY: the caller's contract for buf.
            let s = unsafe { st.input(&mut b, buf, n, t, false) }?;
            b.send(ic.remote(0), s.buf, s.off, s.len);
            b.fence();
        }
        Role::Idle => {}
        Role::Leaf(r) => {
            // SAFETY: the caller's contract for buf.
            let o = unsafe { st.output(&mut b, buf, n, t, false) }?;
            if ic.me() == 0 {
                b.recv(ic.remote(r), o.buf, o.off, o.len);
                b.fence();
            }
            ic.local(&mut b);
            build::bcast(&mut b, 0, o.buf).map_err(err(name))?;
        }
    }
    // SAFETY: the caller's contract for request.
    unsafe { launch(&ic.c, b, st, request, name) }
}

/// Ireduce (`root` Some) and Iallreduce.
///
/// # Safety
/// The C contract for the buffers and request.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ireduce(
    ic: Ic,
    send: *const c_void,
    recv: *mut c_void,
    n: usize,
    red: &Reduction,
    root: Option<c_int>,
    request: *mut MPI_Request,
    name: &str,
) -> Result<(), c_int> {
    let t = red.t.clone();
    let len = bytes(n, &t)?;
    let role = match root {
        Some(r) => role_in(&ic, r)?,
        None => Role::Leaf(0),
    };
    let mut b = ic.builder();
    b.set_combine(combine(red));
    let mut st = Staged::new();
    let me = ic.me();
    if matches!(role, Role::Root) {
        // SAFETY: the caller's contract for recvbuf.
        let o = unsafe { st.output(&mut b, recv, n, &t, false) }?;
        b.recv(ic.remote(0), o.buf, o.off, o.len);
        b.fence();
    }
    if let Role::Leaf(r) = role {
        no_in_place(send)?;
        // SAFETY: the caller's contract for sendbuf.
        let s = unsafe { st.input(&mut b, send, n, &t, false) }?;
        let acc = b.scratch(len);
        ic.local(&mut b);
        build::reduce(&mut b, 0, s.buf, acc, len, red.commutative).map_err(err(name))?;
        b.whole();
        if root.is_some() {
            if me == 0 {
                b.send(ic.remote(r), acc, 0, len);
                b.fence();
            }
        } else {
            // Allreduce: the leaders swap their groups' results, each leader then
            // broadcasts the other group's in its own.
            no_in_place(recv.cast_const())?;
            // SAFETY: the caller's contract for recvbuf.
            let o = unsafe { st.output(&mut b, recv, n, &t, false) }?;
            if me == 0 {
                b.send(ic.remote(0), acc, 0, len);
                b.recv(ic.remote(0), o.buf, o.off, o.len);
                b.fence();
            }
            ic.local(&mut b);
            build::bcast(&mut b, 0, o.buf).map_err(err(name))?;
        }
    }
    // SAFETY: the caller's contract for request.
    unsafe { launch(&ic.c, b, st, request, name) }
}

/// Ireduce_scatter (`cs`: per local rank) and Ireduce_scatter_block: the other
/// group's reduction of `sum(cs)` elements, scattered by `cs`.
///
/// # Safety
/// The C contract for the buffers and request.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ireduce_scatter(
    ic: Ic,
    send: *const c_void,
    recv: *mut c_void,
    cs: &[c_int],
    red: &Reduction,
    request: *mut MPI_Request,
    name: &str,
) -> Result<(), c_int> {
    no_in_place(send)?;
    let t = red.t.clone();
    let (el, by) = counts(cs, &t)?;
    let total = el
        .iter()
        .try_fold(0usize, |a, &b| a.checked_add(b))
        .ok_or(MPI_ERR_COUNT)?;
    let tlen = bytes(total, &t)?;
    let me = ic.me();
    let mut b = ic.builder();
    b.set_combine(combine(red));
    let mut st = Staged::new();
    // SAFETY: the caller's contract for the buffers.
    let (s, o) = unsafe {
        (
            st.input(&mut b, send, total, &t, false)?,
            st.output(&mut b, recv, el.get(me).copied().unwrap_or(0), &t, false)?,
        )
    };
    let (mine, theirs) = (b.scratch(tlen), b.scratch(tlen));
    ic.local(&mut b);
    build::reduce(&mut b, 0, s.buf, mine, tlen, red.commutative).map_err(err(name))?;
    b.whole();
    if me == 0 {
        b.send(ic.remote(0), mine, 0, tlen);
        b.recv(ic.remote(0), theirs, 0, tlen);
        b.fence();
    }
    ic.local(&mut b);
    let mut off = 0;
    let blocks: Vec<Block> = by
        .iter()
        .map(|&len| {
            let blk = Block {
                buf: theirs,
                off,
                len,
            };
            off += len;
            blk
        })
        .collect();
    let blocks = if me == 0 { blocks } else { Vec::new() };
    build::scatterv(&mut b, 0, &blocks, Some(o)).map_err(err(name))?;
    // SAFETY: the caller's contract for request.
    unsafe { launch(&ic.c, b, st, request, name) }
}

/// Igather(v) (`gather`) and Iscatter(v): the root receives from (sends to) every
/// remote rank; `sc`/`rc` are the one-block side, `v` the root's per-remote-rank
/// counts and displacements (None: `each` elements at `q * each`).
///
/// # Safety
/// The C contract for the buffers, arrays and request.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn irooted(
    ic: Ic,
    gather: bool,
    one: (*mut c_void, c_int, MPI_Datatype),
    many: (
        *mut c_void,
        c_int,
        Option<(*const c_int, *const c_int)>,
        MPI_Datatype,
    ),
    root: c_int,
    request: *mut MPI_Request,
    name: &str,
) -> Result<(), c_int> {
    let role = role_in(&ic, root)?;
    let mut b = ic.builder();
    let mut st = Staged::new();
    match role {
        Role::Root => {
            no_in_place(many.0.cast_const())?;
            let t = datatype::lookup_committed(many.3)?;
            let nr = ic.nr();
            // SAFETY: the caller's contract for the arrays and the root's buffer.
            unsafe {
                let (el, ds) = layout(nr, many.1, many.2, &t)?;
                let blocks = if gather {
                    outputs(&mut st, &mut b, many.0, &el, &ds, &t, None)?
                } else {
                    inputs(&mut st, &mut b, many.0, &el, &ds, &t, false)?
                };
                for (q, blk) in blocks.iter().enumerate() {
                    if gather {
                        b.recv(ic.remote(q), blk.buf, blk.off, blk.len);
                    } else {
                        b.send(ic.remote(q), blk.buf, blk.off, blk.len);
                    }
                }
            }
        }
        Role::Idle => {}
        Role::Leaf(r) => {
            no_in_place(one.0.cast_const())?;
            let t = datatype::lookup_committed(one.2)?;
            let n = count(one.1)?;
            // SAFETY: the caller's contract for the buffer.
            unsafe {
                if gather {
                    let s = st.input(&mut b, one.0, n, &t, false)?;
                    b.send(ic.remote(r), s.buf, s.off, s.len);
                } else {
                    let o = st.output(&mut b, one.0, n, &t, false)?;
                    b.recv(ic.remote(r), o.buf, o.off, o.len);
                }
            }
        }
    }
    b.fence();
    // SAFETY: the caller's contract for request.
    unsafe { launch(&ic.c, b, st, request, name) }
}

/// One side of an exchange with every remote rank.
pub(crate) enum Side {
    /// The same block to every remote rank (allgather's send side).
    Same(c_int, MPI_Datatype),
    /// `count` each at `q * count`, or the C arrays (counts, element
    /// displacements), one type.
    Blocks(c_int, Option<(*const c_int, *const c_int)>, MPI_Datatype),
    /// Alltoallw: counts, byte displacements, types.
    Typed(*const c_int, *const c_int, *const MPI_Datatype),
}

/// The blocks of one side.
///
/// # Safety
/// The C contract for the buffer and arrays.
unsafe fn side(
    ic: &Ic,
    st: &mut Staged,
    b: &mut Builder,
    buf: *mut c_void,
    s: &Side,
    out: bool,
) -> Result<Vec<Block>, c_int> {
    let nr = ic.nr();
    // SAFETY: the caller's contract, forwarded.
    unsafe {
        match *s {
            Side::Same(n, dt) => {
                let t = datatype::lookup_committed(dt)?;
                let blk = st.input(b, buf, count(n)?, &t, false)?;
                Ok(vec![blk; nr])
            }
            Side::Blocks(n, arrays, dt) => {
                let t = datatype::lookup_committed(dt)?;
                let (el, ds) = layout(nr, n, arrays, &t)?;
                if out {
                    outputs(st, b, buf, &el, &ds, &t, None)
                } else {
                    inputs(st, b, buf, &el, &ds, &t, false)
                }
            }
            Side::Typed(cs, ds, ts) => {
                let mut v = Vec::with_capacity(nr);
                for (n, d, t) in w_side(nr, cs, ds, ts)? {
                    let p = buf.cast::<u8>().wrapping_offset(d).cast::<c_void>();
                    v.push(if out {
                        st.output(b, p, n, &t, false)?
                    } else {
                        st.input(b, p, n, &t, false)?
                    });
                }
                Ok(v)
            }
        }
    }
}

/// Iallgather(v) and Ialltoall(v, w): every process receives a block from and
/// sends a block to every remote rank, all at once.
///
/// # Safety
/// The C contract for the buffers, arrays and request.
pub(crate) unsafe fn iexchange(
    ic: Ic,
    send: (*const c_void, Side),
    recv: (*mut c_void, Side),
    request: *mut MPI_Request,
    name: &str,
) -> Result<(), c_int> {
    no_in_place(send.0)?;
    let mut b = ic.builder();
    let mut st = Staged::new();
    // SAFETY: the caller's contract for the buffers and arrays.
    let (sb, rb) = unsafe {
        (
            side(&ic, &mut st, &mut b, send.0.cast_mut(), &send.1, false)?,
            side(&ic, &mut st, &mut b, recv.0, &recv.1, true)?,
        )
    };
    for (q, r) in rb.iter().enumerate() {
        b.recv(ic.remote(q), r.buf, r.off, r.len);
    }
    for (q, s) in sb.iter().enumerate() {
        b.send(ic.remote(q), s.buf, s.off, s.len);
    }
    b.fence();
    // SAFETY: the caller's contract for request.
    unsafe { launch(&ic.c, b, st, request, name) }
}
