//! Reductions by levels (commutative operations only: combining node by node
//! changes the order of the operands): MPI_Allreduce, MPI_Reduce (root anywhere),
//! MPI_Reduce_scatter(_block) (a reduce by levels to rank 0, then a scatter), and
//! the leaders' allreduce of large messages by Rabenseifner's algorithm.

use super::{c_count, check, elem_at, levels, note, scratch, Levels};
use crate::abi::*;
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

/// Tag of the messages of this module on the levels' own communicators (no user
/// message travels there).
const TAG: c_int = 24;

/// `MYRIX_MPI_HIER_RSA_MIN`: the size in bytes (count × type size) from which the
/// leaders allreduce by Rabenseifner's reduce-scatter + allgather instead of their
/// communicator's ordinary allreduce; `k`/`m` suffixes; default 64 KiB.
fn rsa_min() -> usize {
    static M: OnceLock<usize> = OnceLock::new();
    *M.get_or_init(|| super::env_size("MYRIX_MPI_HIER_RSA_MIN").unwrap_or(64 * 1024))
}

/// The levels of `comm_h` when `op` is commutative, else `None` (said once with
/// `MYRIX_MPI_COLL_DEBUG`).
fn levels_for(
    op: MPI_Op,
    comm_h: MPI_Comm,
    name: &str,
) -> Option<Result<std::sync::Arc<Levels>, c_int>> {
    if !super::enabled() {
        return None;
    }
    // A bad op is this rank's error once the levels exist (its peers take them).
    let commutative = crate::op::lookup(op).map(|o| o.commutative());
    match levels(comm_h, name) {
        Ok(Some(_)) if commutative.is_err() => commutative.err().map(Err),
        Ok(Some(l)) if commutative == Ok(true) => Some(Ok(l)),
        Ok(Some(_)) => {
            note(comm_h, name, "flat", || {
                "flat: the operation is not commutative".into()
            });
            None
        }
        Ok(None) => None,
        Err(e) => Some(Err(e)),
    }
}

fn type_size(dt: MPI_Datatype) -> Result<usize, c_int> {
    let mut s = 0;
    // SAFETY: a valid out-parameter.
    check(unsafe { crate::datatype::PMPI_Type_size(dt, &mut s) })?;
    usize::try_from(s).map_err(|_| MPI_ERR_TYPE)
}

/// MPI_Allreduce by levels, or `None` (not spanning, or an operation that is not
/// commutative).
///
/// # Safety
/// The C contract of MPI_Allreduce for the buffers.
pub(crate) unsafe fn allreduce(
    send: *const c_void,
    recv: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    op: MPI_Op,
    comm_h: MPI_Comm,
) -> Option<Result<(), c_int>> {
    let l = match levels_for(op, comm_h, "MPI_Allreduce")? {
        Ok(l) => l,
        Err(e) => return Some(Err(e)),
    };
    let in_place = send as usize == MPI_IN_PLACE;
    let bytes = type_size(dt)
        .ok()
        .and_then(|s| s.checked_mul(usize::try_from(count).ok()?))
        .unwrap_or(0);
    let rsa = bytes >= rsa_min() && l.nodes() >= 2;
    let kind = if rsa { "rsa" } else { "levels" };
    note(comm_h, "MPI_Allreduce", kind, || {
        format!(
            "of {bytes} bytes by levels ({} nodes), leaders by {}",
            l.nodes(),
            if rsa {
                "Rabenseifner's reduce-scatter + allgather"
            } else {
                "their allreduce"
            }
        )
    });
    // SAFETY: the caller's buffers, passed on as the C contract allows.
    Some(unsafe {
        (|| {
            if l.is_leader() {
                let s = if in_place {
                    MPI_IN_PLACE as *const c_void
                } else {
                    send
                };
                check(crate::coll::PMPI_Reduce(s, recv, count, dt, op, 0, l.node))?;
                if rsa {
                    rabenseifner(recv, count, dt, op, l.leaders)?;
                } else {
                    check(crate::coll::PMPI_Allreduce(
                        MPI_IN_PLACE as *const c_void,
                        recv,
                        count,
                        dt,
                        op,
                        l.leaders,
                    ))?;
                }
            } else {
                let s = if in_place { recv.cast_const() } else { send };
                let null = std::ptr::null_mut();
                check(crate::coll::PMPI_Reduce(s, null, count, dt, op, 0, l.node))?;
            }
            check(crate::coll::PMPI_Bcast(recv, count, dt, 0, l.node))
        })()
    })
}

/// Allreduce in place of `count` elements at `buf` on `comm` (commutative `op`) by
/// Rabenseifner's algorithm: recursive halving (each rank ends with the reduction of
/// one block of the vector), then recursive doubling (every rank gathers every
/// block). Each rank sends about twice the vector's size in all, whatever the number
/// of ranks, against log2(ranks) times with recursive doubling. With a number of
/// ranks that is not a power of two, the first `2 × rem` ranks pair up first (the
/// even one hands its vector to the odd one and waits for the result). Each block
/// is reduced by one rank, so every rank ends with the same bits.
///
/// # Safety
/// `buf` holds `count` elements of `dt`.
pub(super) unsafe fn rabenseifner(
    buf: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Result<(), c_int> {
    let (mut p, mut r) = (0, 0);
    // SAFETY: out-parameters of our own.
    unsafe {
        check(crate::comm::PMPI_Comm_size(comm, &mut p))?;
        check(crate::comm::PMPI_Comm_rank(comm, &mut r))?;
    }
    let n = usize::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
    let tmp = scratch(n, dt)?;
    let mut pof2 = 1;
    while pof2 * 2 <= p {
        pof2 *= 2;
    }
    let rem = p - pof2;
    let status = std::ptr::null_mut();
    // Block b of the vector: `cnt[b]` elements from element `disp[b]`.
    let pof2u = pof2 as usize;
    let cnt: Vec<usize> = (0..pof2u)
        .map(|b| n / pof2u + usize::from(b < n % pof2u))
        .collect();
    let mut disp = vec![0usize; pof2u + 1];
    for b in 0..pof2u {
        disp[b + 1] = disp[b] + cnt[b];
    }
    let span = |lo: usize, hi: usize| (disp[lo], (disp[hi] - disp[lo]) as c_int);
    // SAFETY: buf and tmp hold n elements; every range below lies within them.
    unsafe {
        let newrank = if r < 2 * rem {
            if r % 2 == 0 {
                check(crate::p2p::PMPI_Send(buf, count, dt, r + 1, TAG, comm))?;
                -1
            } else {
                check(crate::p2p::PMPI_Recv(
                    tmp.at,
                    count,
                    dt,
                    r - 1,
                    TAG,
                    comm,
                    status,
                ))?;
                check(crate::small::PMPI_Reduce_local(tmp.at, buf, count, dt, op))?;
                r / 2
            }
        } else {
            r - rem
        };
        let real = |nr: c_int| if nr < rem { nr * 2 + 1 } else { nr + rem };
        if newrank >= 0 {
            let (mut lo, mut hi) = (0usize, pof2u);
            let mut mask = pof2 / 2;
            while mask >= 1 {
                let partner = real(newrank ^ mask);
                let mid = (lo + hi) / 2;
                let (keep, give) = if newrank & mask == 0 {
                    ((lo, mid), (mid, hi))
                } else {
                    ((mid, hi), (lo, mid))
                };
                let (kd, kn) = span(keep.0, keep.1);
                let (gd, gn) = span(give.0, give.1);
                check(crate::p2p_more::PMPI_Sendrecv(
                    elem_at(buf, gd, dt)?,
                    gn,
                    dt,
                    partner,
                    TAG,
                    elem_at(tmp.at, kd, dt)?,
                    kn,
                    dt,
                    partner,
                    TAG,
                    comm,
                    status,
                ))?;
                check(crate::small::PMPI_Reduce_local(
                    elem_at(tmp.at, kd, dt)?,
                    elem_at(buf, kd, dt)?,
                    kn,
                    dt,
                    op,
                ))?;
                (lo, hi) = keep;
                mask /= 2;
            }
            // Now [lo, hi) is the one block newrank reduced; double it back.
            let mut mask = 1;
            while mask < pof2 {
                let partner = real(newrank ^ mask);
                let w = hi - lo;
                let theirs = if newrank & mask == 0 {
                    (hi, hi + w)
                } else {
                    (lo - w, lo)
                };
                let (md, mn) = span(lo, hi);
                let (td, tn) = span(theirs.0, theirs.1);
                check(crate::p2p_more::PMPI_Sendrecv(
                    elem_at(buf, md, dt)?,
                    mn,
                    dt,
                    partner,
                    TAG,
                    elem_at(buf, td, dt)?,
                    tn,
                    dt,
                    partner,
                    TAG,
                    comm,
                    status,
                ))?;
                (lo, hi) = (lo.min(theirs.0), hi.max(theirs.1));
                mask *= 2;
            }
        }
        if r < 2 * rem {
            if r % 2 == 1 {
                check(crate::p2p::PMPI_Send(buf, count, dt, r - 1, TAG, comm))?;
            } else {
                check(crate::p2p::PMPI_Recv(
                    buf,
                    count,
                    dt,
                    r + 1,
                    TAG,
                    comm,
                    status,
                ))?;
            }
        }
    }
    Ok(())
}

/// Reduces by levels into `recv` at `root` (only significant there); `send` is this
/// rank's contribution (the root's may be MPI_IN_PLACE, its own then in `recv`).
///
/// # Safety
/// The C contract of MPI_Reduce for the buffers.
#[allow(clippy::too_many_arguments)]
unsafe fn reduce_levels(
    l: &Levels,
    send: *const c_void,
    recv: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    op: MPI_Op,
    root: usize,
) -> Result<(), c_int> {
    let me = l.me;
    let in_place = send as usize == MPI_IN_PLACE;
    if in_place && me != root {
        return Err(MPI_ERR_BUFFER);
    }
    let root_node = l.node_of[root];
    let root_in_node = l.rank_in_node[root] as c_int;
    let n = usize::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
    let null = std::ptr::null_mut();
    let inp = MPI_IN_PLACE as *const c_void;
    // SAFETY: the caller's buffers (the C contract), our scratch of n elements.
    unsafe {
        if !l.is_leader() {
            let s = if in_place { recv.cast_const() } else { send };
            check(crate::coll::PMPI_Reduce(s, null, count, dt, op, 0, l.node))?;
            if me == root {
                let st = std::ptr::null_mut();
                check(crate::p2p::PMPI_Recv(recv, count, dt, 0, TAG, l.node, st))?;
            }
            return Ok(());
        }
        // A leader: the node's reduction into the root's buffer when it is the root,
        // else into scratch.
        let tmp;
        let acc = if me == root {
            recv
        } else {
            tmp = scratch(n, dt)?;
            tmp.at
        };
        let s = if me == root && in_place { inp } else { send };
        check(crate::coll::PMPI_Reduce(s, acc, count, dt, op, 0, l.node))?;
        let rl = root_node as c_int;
        if l.node_of[me] == root_node {
            check(crate::coll::PMPI_Reduce(
                inp, acc, count, dt, op, rl, l.leaders,
            ))?;
            if me != root {
                check(crate::p2p::PMPI_Send(
                    acc,
                    count,
                    dt,
                    root_in_node,
                    TAG,
                    l.node,
                ))?;
            }
        } else {
            check(crate::coll::PMPI_Reduce(
                acc, null, count, dt, op, rl, l.leaders,
            ))?;
        }
    }
    Ok(())
}

/// MPI_Reduce by levels, or `None`.
///
/// # Safety
/// The C contract of MPI_Reduce for the buffers.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce(
    send: *const c_void,
    recv: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm_h: MPI_Comm,
) -> Option<Result<(), c_int>> {
    let l = match levels_for(op, comm_h, "MPI_Reduce")? {
        Ok(l) => l,
        Err(e) => return Some(Err(e)),
    };
    let root = usize::try_from(root).ok().filter(|&r| r < l.size())?; // else the ordinary path reports it
    note(comm_h, "MPI_Reduce", "levels", || {
        format!("by levels ({} nodes)", l.nodes())
    });
    // SAFETY: the caller's contract, forwarded.
    Some(unsafe { reduce_levels(&l, send, recv, count, dt, op, root) })
}

/// MPI_Reduce_scatter (`rcounts`) and MPI_Reduce_scatter_block (`block` each) by
/// levels: the whole vector reduced by levels to rank 0, then scattered from there
/// (MPI_Scatter by levels for the block form). `None` as for [`reduce`].
///
/// # Safety
/// The C contract of MPI_Reduce_scatter(_block) for the buffers and counts.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce_scatter(
    send: *const c_void,
    recv: *mut c_void,
    rcounts: Option<*const c_int>,
    block: c_int,
    dt: MPI_Datatype,
    op: MPI_Op,
    comm_h: MPI_Comm,
) -> Option<Result<(), c_int>> {
    let name = if rcounts.is_some() {
        "MPI_Reduce_scatter"
    } else {
        "MPI_Reduce_scatter_block"
    };
    let l = match levels_for(op, comm_h, name)? {
        Ok(l) => l,
        Err(e) => return Some(Err(e)),
    };
    let size = l.size();
    let counts: Vec<c_int> = match rcounts {
        // SAFETY: recvcounts holds one int per rank (the C contract).
        Some(p) if !p.is_null() => unsafe { std::slice::from_raw_parts(p, size) }.to_vec(),
        Some(_) => return Some(Err(MPI_ERR_ARG)),
        None => vec![block; size],
    };
    if counts.iter().any(|&c| c < 0) {
        return Some(Err(MPI_ERR_COUNT));
    }
    let total: usize = counts.iter().map(|&c| c as usize).sum();
    let total_c = c_count(total)?; // too large for one count: the flat path
    note(comm_h, name, "levels", || {
        format!("by levels ({} nodes): reduce to rank 0, scatter", l.nodes())
    });
    let in_place = send as usize == MPI_IN_PLACE;
    let me = l.me;
    // SAFETY: the caller's buffers (the C contract); our scratch of `total` elements.
    Some(unsafe {
        (|| {
            let s = if in_place { recv.cast_const() } else { send };
            let tmp = scratch(if me == 0 { total } else { 0 }, dt)?;
            reduce_levels(&l, s, tmp.at, total_c, dt, op, 0)?;
            let comm = comm_h;
            match rcounts {
                None => check(crate::coll::PMPI_Scatter(
                    tmp.at, block, dt, recv, block, dt, 0, comm,
                )),
                Some(_) => {
                    let mut displs = Vec::with_capacity(size);
                    let mut at = 0usize;
                    for &c in &counts {
                        displs.push(c_count(at).ok_or(MPI_ERR_COUNT)?);
                        at += c as usize;
                    }
                    check(crate::coll::PMPI_Scatterv(
                        tmp.at,
                        counts.as_ptr(),
                        displs.as_ptr(),
                        dt,
                        recv,
                        counts[me],
                        dt,
                        0,
                        comm,
                    ))
                }
            }
        })()
    })
}
