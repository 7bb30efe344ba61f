//! Data movement by levels: MPI_Gather, MPI_Scatter, MPI_Allgather(v) and
//! MPI_Alltoall. Every rank packs what it contributes (its datatype's bytes, as the
//! flat collectives do); the node's leader collects its ranks' packed blocks through
//! the node's collectives, the leaders move whole node blocks (the ranks of node 0,
//! then those of node 1, …: `Levels::order`), and the blocks are spread and
//! unpacked at the end. Totals that do not fit one C count take the flat path.

use super::{c_count, check, levels, note, Levels};
use crate::abi::*;
use crate::coll::args::{elem, pack, unpack, Dt};
use crate::datatype;
use std::os::raw::{c_int, c_void};
use std::sync::{Arc, OnceLock};

/// Tag of the messages of this module on the node's communicator.
const TAG: c_int = 25;

/// A vector's bytes as a C buffer. An empty one's address would be 1, which is
/// MPI_IN_PLACE: an aligned dangling address then (nothing is read or written).
pub(super) fn cv(v: &[u8]) -> *const c_void {
    mv_ptr(v.as_ptr().cast_mut(), v.is_empty())
}
pub(super) fn mv(v: &mut [u8]) -> *mut c_void {
    mv_ptr(v.as_mut_ptr(), v.is_empty())
}
fn mv_ptr(p: *mut u8, empty: bool) -> *mut c_void {
    if empty {
        std::ptr::NonNull::<u64>::dangling().as_ptr().cast()
    } else {
        p.cast()
    }
}

/// Per node (leader index): `bytes(rank)` summed over its ranks, as C counts, and
/// their displacements end to end; `None` when a total does not fit.
pub(super) fn node_blocks(
    l: &Levels,
    bytes: impl Fn(usize) -> usize,
) -> Option<(Vec<c_int>, Vec<c_int>)> {
    let mut counts = Vec::with_capacity(l.nodes());
    let mut displs = Vec::with_capacity(l.nodes());
    let mut at = 0usize;
    for m in &l.members {
        let b: usize = m.iter().map(|&r| bytes(r)).sum();
        displs.push(c_count(at)?);
        counts.push(c_count(b)?);
        at = at.checked_add(b)?;
    }
    c_count(at)?;
    Some((counts, displs))
}

/// `MYRIX_MPI_HIER_MOVE_MAX`: the largest whole buffer (the root's in MPI_Gather and
/// MPI_Scatter, every rank's in MPI_Allgather(v)), in bytes, those go by levels
/// with; `k`/`m` suffixes; default 256 KiB. Above it the extra copies through the
/// leaders cost more than the messages they save (docs/mpi-coll.md has the figures).
fn move_max() -> usize {
    static M: OnceLock<usize> = OnceLock::new();
    *M.get_or_init(|| super::env_size("MYRIX_MPI_HIER_MOVE_MAX").unwrap_or(256 * 1024))
}

/// Whether `total` bytes are above [`move_max`] (said once with
/// `MYRIX_MPI_COLL_DEBUG`).
fn too_big(comm_h: MPI_Comm, name: &str, total: usize) -> bool {
    let big = total > move_max();
    if big {
        note(comm_h, name, "flat", || {
            format!("of {total} bytes: flat (above MYRIX_MPI_HIER_MOVE_MAX)")
        });
    }
    big
}

/// This rank's packed contribution: `n` elements of `t` at `buf`.
///
/// # Safety
/// `buf` holds them.
unsafe fn packed(buf: *const c_void, n: c_int, t: &Dt) -> Result<Vec<u8>, c_int> {
    let n = usize::try_from(n).map_err(|_| MPI_ERR_COUNT)?;
    // SAFETY: the caller's contract.
    unsafe { pack(buf.cast(), n, t) }
}

/// Bytes of `n` elements of `t` (`None`: negative or too many).
fn nbytes(n: c_int, t: &Dt) -> Option<usize> {
    usize::try_from(n).ok()?.checked_mul(t.size())
}

/// What MPI_Gather and MPI_Scatter by levels decide before moving anything.
struct Rooted {
    l: Arc<Levels>,
    root: usize,
    /// Bytes of each rank's block.
    b: usize,
    /// The type of the side every rank passes (None at an in-place root).
    each: Option<Dt>,
    /// The type of the root's other side (None elsewhere).
    other: Option<Dt>,
    /// Per node: its ranks' bytes and where they start, end to end.
    counts: Vec<c_int>,
    displs: Vec<c_int>,
}

/// The levels `l` or the flat path for a rooted collective of blocks: `None` for the
/// flat path (a root the flat path refuses, a buffer above
/// [`move_max`]); `Some(Err)` for a bad argument of this rank's own, returned from
/// here, never left to the flat path, whose peers in the levels would wait for it.
/// `each`: the (count, type) every rank passes (Gather's send side, Scatter's
/// receive side) and whether it is MPI_IN_PLACE (allowed at the root only);
/// `other`: the root's other side. Every rank sizes its block from `each` (the
/// root from `other` when in place), so the choice is the same everywhere even when
/// the root's other type is wrong; the root checks `other` against it
/// (MPI_ERR_TRUNCATE).
fn rooted(
    l: Arc<Levels>,
    name: &str,
    comm_h: MPI_Comm,
    root: c_int,
    ((ec, et), in_place): ((c_int, MPI_Datatype), bool),
    (oc, ot): (c_int, MPI_Datatype),
) -> Option<Result<Rooted, c_int>> {
    let root = usize::try_from(root).ok().filter(|&r| r < l.size())?; // else the flat path reports it
    let at_root = l.me == root;
    let other = if at_root {
        Some(try_some!(datatype::lookup(ot)))
    } else {
        None
    };
    let each = if in_place {
        None
    } else {
        Some(try_some!(datatype::lookup(et)))
    };
    let b = match (&each, &other) {
        (Some(t), _) => try_some!(nbytes(ec, t).ok_or(MPI_ERR_COUNT)),
        (None, Some(t)) => try_some!(nbytes(oc, t).ok_or(MPI_ERR_COUNT)),
        (None, None) => return Some(Err(MPI_ERR_BUFFER)),
    };
    if let Some(t) = &other {
        if nbytes(oc, t) != Some(b) {
            return Some(Err(MPI_ERR_TRUNCATE));
        }
    }
    if too_big(comm_h, name, b.checked_mul(l.size())?) {
        return None;
    }
    let (counts, displs) = node_blocks(&l, |_| b)?;
    c_count(b)?;
    note(comm_h, name, "levels", || {
        format!("of {b} bytes a rank by levels ({} nodes)", l.nodes())
    });
    Some(Ok(Rooted {
        l,
        root,
        b,
        each,
        other,
        counts,
        displs,
    }))
}

/// MPI_Gather by levels, or `None`.
///
/// # Safety
/// The C contract of MPI_Gather for the buffers.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gather(
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    root: c_int,
    comm_h: MPI_Comm,
) -> Option<Result<(), c_int>> {
    let name = "MPI_Gather";
    let in_place = send as usize == MPI_IN_PLACE;
    // Every rank's send side (none at an in-place root); the root's receive side.
    // Communicators on one node (the usual case) leave here, at one look-up.
    let l = match levels(comm_h, name) {
        Ok(Some(l)) => l,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    let Rooted {
        l,
        root,
        b,
        each: stt,
        other: rtt,
        counts,
        displs,
    } = try_some!(rooted(
        l,
        name,
        comm_h,
        root,
        ((sc, st), in_place),
        (rc, rt)
    )?);
    let (me, n) = (l.me, l.size());
    let bc = c_count(b)?;
    let root_node = l.node_of[root];
    let mine = l.node_of[me];
    let null = std::ptr::null_mut();
    // SAFETY: the caller's buffers (the C contract); our own vectors of the sizes
    // passed with them.
    Some(unsafe {
        (|| {
            let data = match (&stt, &rtt) {
                (Some(t), _) => packed(send, sc, t)?,
                (None, Some(t)) => {
                    packed(elem(recv, (me as isize) * rc as isize, t)?.cast(), rc, t)?
                }
                (None, None) => return Err(MPI_ERR_BUFFER),
            };
            if data.len() != b {
                return Err(MPI_ERR_TRUNCATE);
            }
            let byte = MPI_BYTE;
            let mut nodebuf = vec![
                0u8;
                if l.is_leader() {
                    b * l.members[mine].len()
                } else {
                    0
                }
            ];
            check(crate::coll::PMPI_Gather(
                cv(&data),
                bc,
                byte,
                mv(&mut nodebuf),
                bc,
                byte,
                0,
                l.node,
            ))?;
            let here = mine == root_node;
            let mut all = vec![
                0u8;
                if here && (l.is_leader() || me == root) {
                    b * n
                } else {
                    0
                }
            ];
            if l.is_leader() {
                let rl = root_node as c_int;
                let out = if here { mv(&mut all) } else { null };
                check(crate::coll::PMPI_Gatherv(
                    cv(&nodebuf),
                    counts[mine],
                    byte,
                    out,
                    counts.as_ptr(),
                    displs.as_ptr(),
                    byte,
                    rl,
                    l.leaders,
                ))?;
                if here && me != root {
                    let to = l.rank_in_node[root] as c_int;
                    let total = c_count(all.len()).ok_or(MPI_ERR_COUNT)?;
                    check(crate::p2p::PMPI_Send(
                        cv(&all),
                        total,
                        byte,
                        to,
                        TAG,
                        l.node,
                    ))?;
                }
            } else if me == root {
                let total = c_count(all.len()).ok_or(MPI_ERR_COUNT)?;
                let st = std::ptr::null_mut();
                check(crate::p2p::PMPI_Recv(
                    mv(&mut all),
                    total,
                    byte,
                    0,
                    TAG,
                    l.node,
                    st,
                ))?;
            }
            if me == root {
                let t = rtt.as_ref().ok_or(MPI_ERR_INTERN)?;
                for (k, &r) in l.order.iter().enumerate() {
                    if in_place && r == me {
                        continue;
                    }
                    let at = elem(recv, r as isize * rc as isize, t)?;
                    unpack(&all[k * b..(k + 1) * b], at, rc as usize, t)?;
                }
            }
            Ok(())
        })()
    })
}

/// MPI_Scatter by levels, or `None`.
///
/// # Safety
/// The C contract of MPI_Scatter for the buffers.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatter(
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    root: c_int,
    comm_h: MPI_Comm,
) -> Option<Result<(), c_int>> {
    let name = "MPI_Scatter";
    // Every rank's receive side (none at an in-place root); the root's send side.
    let in_place = recv as usize == MPI_IN_PLACE;
    // Communicators on one node (the usual case) leave here, at one look-up.
    let l = match levels(comm_h, name) {
        Ok(Some(l)) => l,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    let Rooted {
        l,
        root,
        b,
        each: rtt,
        other: stt,
        counts,
        displs,
    } = try_some!(rooted(
        l,
        name,
        comm_h,
        root,
        ((rc, rt), in_place),
        (sc, st)
    )?);
    let (me, n) = (l.me, l.size());
    let bc = c_count(b)?;
    let root_node = l.node_of[root];
    let mine = l.node_of[me];
    // SAFETY: the caller's buffers (the C contract); our own vectors.
    Some(unsafe {
        (|| {
            let here = mine == root_node;
            let byte = MPI_BYTE;
            let mut all = Vec::new();
            if me == root {
                let t = stt.as_ref().ok_or(MPI_ERR_INTERN)?;
                all.reserve(b * n);
                for &r in &l.order {
                    all.extend(packed(
                        elem(send, r as isize * sc as isize, t)?.cast(),
                        sc,
                        t,
                    )?);
                }
            }
            if here && !l.is_leader() && me == root {
                let total = c_count(all.len()).ok_or(MPI_ERR_COUNT)?;
                check(crate::p2p::PMPI_Send(cv(&all), total, byte, 0, TAG, l.node))?;
            }
            let mut nodebuf = vec![
                0u8;
                if l.is_leader() {
                    b * l.members[mine].len()
                } else {
                    0
                }
            ];
            if l.is_leader() {
                if here && me != root {
                    all = vec![0u8; b * n];
                    let total = c_count(all.len()).ok_or(MPI_ERR_COUNT)?;
                    let from = l.rank_in_node[root] as c_int;
                    let st = std::ptr::null_mut();
                    check(crate::p2p::PMPI_Recv(
                        mv(&mut all),
                        total,
                        byte,
                        from,
                        TAG,
                        l.node,
                        st,
                    ))?;
                }
                check(crate::coll::PMPI_Scatterv(
                    cv(&all),
                    counts.as_ptr(),
                    displs.as_ptr(),
                    byte,
                    mv(&mut nodebuf),
                    counts[mine],
                    byte,
                    root_node as c_int,
                    l.leaders,
                ))?;
            }
            let mut out = vec![0u8; b];
            check(crate::coll::PMPI_Scatter(
                cv(&nodebuf),
                bc,
                byte,
                mv(&mut out),
                bc,
                byte,
                0,
                l.node,
            ))?;
            if let Some(t) = &rtt {
                unpack(&out, recv.cast(), rc as usize, t)?;
            }
            Ok(())
        })()
    })
}

/// MPI_Allgather (`rcounts` None: `rc` each) and MPI_Allgatherv by levels, or `None`.
///
/// # Safety
/// The C contract of MPI_Allgather(v) for the buffers and arrays.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allgather(
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rcounts: Option<(*const c_int, *const c_int)>,
    rt: MPI_Datatype,
    comm_h: MPI_Comm,
) -> Option<Result<(), c_int>> {
    let name = if rcounts.is_some() {
        "MPI_Allgatherv"
    } else {
        "MPI_Allgather"
    };
    let l = match levels(comm_h, name) {
        Ok(Some(l)) => l,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    let (me, n) = (l.me, l.size());
    let rtt = try_some!(datatype::lookup(rt));
    let (el, displs): (Vec<c_int>, Vec<c_int>) = match rcounts {
        None => {
            let each = try_some!(usize::try_from(rc).map_err(|_| MPI_ERR_COUNT));
            let d = (0..n)
                .map(|i| c_count(i.checked_mul(each)?))
                .collect::<Option<_>>()?;
            (vec![rc; n], d)
        }
        Some((cs, ds)) if !cs.is_null() && !ds.is_null() => {
            // SAFETY: one int per rank in each (the C contract).
            let (cs, ds) = unsafe {
                (
                    std::slice::from_raw_parts(cs, n),
                    std::slice::from_raw_parts(ds, n),
                )
            };
            (cs.to_vec(), ds.to_vec())
        }
        Some(_) => return Some(Err(MPI_ERR_ARG)),
    };
    let by: Vec<usize> = try_some!(el
        .iter()
        .map(|&c| nbytes(c, &rtt).ok_or(MPI_ERR_COUNT))
        .collect::<Result<_, _>>());
    let (counts, ndispls) = node_blocks(&l, |r| by[r])?;
    let total: usize = by.iter().sum();
    let total_c = c_count(total)?;
    if too_big(comm_h, name, total) {
        return None;
    }
    let in_place = send as usize == MPI_IN_PLACE;
    note(comm_h, name, "levels", || {
        format!("of {total} bytes by levels ({} nodes)", l.nodes())
    });
    let mine = l.node_of[me];
    // Within the node: each rank's bytes and where they go in the leader's buffer.
    let mem = &l.members[mine];
    let ncounts: Vec<c_int> = mem.iter().map(|&r| by[r] as c_int).collect();
    let mut nd = Vec::with_capacity(mem.len());
    let mut at = 0;
    for &c in &ncounts {
        nd.push(at);
        at += c;
    }
    // SAFETY: the caller's buffers (the C contract); our own vectors.
    Some(unsafe {
        (|| {
            let data = if in_place {
                packed(elem(recv, displs[me] as isize, &rtt)?.cast(), el[me], &rtt)?
            } else {
                packed(send, sc, &datatype::lookup(st)?)?
            };
            if data.len() != by[me] {
                return Err(MPI_ERR_TRUNCATE);
            }
            let byte = MPI_BYTE;
            let mut nodebuf = vec![
                0u8;
                if l.is_leader() {
                    counts[mine] as usize
                } else {
                    0
                }
            ];
            check(crate::coll::PMPI_Gatherv(
                cv(&data),
                by[me] as c_int,
                byte,
                mv(&mut nodebuf),
                ncounts.as_ptr(),
                nd.as_ptr(),
                byte,
                0,
                l.node,
            ))?;
            let mut all = vec![0u8; total];
            if l.is_leader() {
                check(crate::coll::PMPI_Allgatherv(
                    cv(&nodebuf),
                    counts[mine],
                    byte,
                    mv(&mut all),
                    counts.as_ptr(),
                    ndispls.as_ptr(),
                    byte,
                    l.leaders,
                ))?;
            }
            check(crate::coll::PMPI_Bcast(
                mv(&mut all),
                total_c,
                byte,
                0,
                l.node,
            ))?;
            let mut at = 0;
            for &r in &l.order {
                if !(in_place && r == me) {
                    let to = elem(recv, displs[r] as isize, &rtt)?;
                    unpack(&all[at..at + by[r]], to, el[r] as usize, &rtt)?;
                }
                at += by[r];
            }
            Ok(())
        })()
    })
}

/// `MYRIX_MPI_HIER_ALLTOALL_MAX`: the largest block (bytes one rank sends another)
/// MPI_Alltoall goes by levels with; `k`/`m` suffixes; default 1 KiB. Above it the
/// leaders' extra copies of every block cost more than the messages they save.
pub(crate) fn alltoall_max() -> usize {
    static M: OnceLock<usize> = OnceLock::new();
    *M.get_or_init(|| super::env_size("MYRIX_MPI_HIER_ALLTOALL_MAX").unwrap_or(1024))
}

/// MPI_Alltoall by levels (not in place; blocks of at most
/// `MYRIX_MPI_HIER_ALLTOALL_MAX` bytes), or `None`: the node's ranks' send buffers
/// go to the leader, the leaders exchange, for each pair of nodes, every block one
/// node's ranks send the other's, and each leader hands its ranks what is theirs.
///
/// # Safety
/// The C contract of MPI_Alltoall for the buffers.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoall(
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    comm_h: MPI_Comm,
) -> Option<Result<(), c_int>> {
    let name = "MPI_Alltoall";
    if send as usize == MPI_IN_PLACE {
        return None;
    }
    let l = match levels(comm_h, name) {
        Ok(Some(l)) => l,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    let (stt, rtt) = (
        try_some!(datatype::lookup(st)),
        try_some!(datatype::lookup(rt)),
    );
    let b = try_some!(nbytes(sc, &stt).ok_or(MPI_ERR_COUNT));
    if b > alltoall_max() {
        note(comm_h, name, "flat", || {
            format!("of {b} bytes a block: flat (above MYRIX_MPI_HIER_ALLTOALL_MAX)")
        });
        return None;
    }
    let (me, n) = (l.me, l.size());
    let row = b.checked_mul(n)?; // one rank's send (or receive) buffer
    c_count(row.checked_mul(n)?)?;
    let mine = l.node_of[me];
    let nsz = l.members[mine].len();
    note(comm_h, name, "levels", || {
        format!("of {b} bytes a block by levels ({} nodes)", l.nodes())
    });
    // SAFETY: the caller's buffers (the C contract); our own vectors.
    Some(unsafe {
        (|| {
            if nbytes(rc, &rtt) != Some(b) {
                return Err(MPI_ERR_TRUNCATE);
            }
            let mut data = Vec::with_capacity(row);
            for r in 0..n {
                data.extend(packed(
                    elem(send, r as isize * sc as isize, &stt)?.cast(),
                    sc,
                    &stt,
                )?);
            }
            let byte = MPI_BYTE;
            let rowc = c_count(row).ok_or(MPI_ERR_COUNT)?;
            let mut nodebuf = vec![0u8; if l.is_leader() { row * nsz } else { 0 }];
            check(crate::coll::PMPI_Gather(
                cv(&data),
                rowc,
                byte,
                mv(&mut nodebuf),
                rowc,
                byte,
                0,
                l.node,
            ))?;
            let mut out = vec![0u8; if l.is_leader() { row * nsz } else { 0 }];
            if l.is_leader() {
                // To node d: for each of our ranks j, its blocks for d's ranks.
                let mut sbuf = Vec::with_capacity(row * nsz);
                let (mut scnt, mut sdis, mut rcnt, mut rdis) = (vec![], vec![], vec![], vec![]);
                for m in &l.members {
                    sdis.push(sbuf.len() as c_int);
                    for j in 0..nsz {
                        for &r in m {
                            let at = j * row + r * b;
                            sbuf.extend_from_slice(&nodebuf[at..at + b]);
                        }
                    }
                    scnt.push((nsz * m.len() * b) as c_int);
                }
                let mut at = 0;
                for m in &l.members {
                    rdis.push(at as c_int);
                    rcnt.push((m.len() * nsz * b) as c_int);
                    at += m.len() * nsz * b;
                }
                let mut rbuf = vec![0u8; at];
                check(crate::coll::PMPI_Alltoallv(
                    cv(&sbuf),
                    scnt.as_ptr(),
                    sdis.as_ptr(),
                    byte,
                    mv(&mut rbuf),
                    rcnt.as_ptr(),
                    rdis.as_ptr(),
                    byte,
                    l.leaders,
                ))?;
                // From node s: for each of its ranks (source), its blocks for our
                // ranks k; our rank k's row holds the sources in communicator order.
                for (s, m) in l.members.iter().enumerate() {
                    for (js, &src) in m.iter().enumerate() {
                        for k in 0..nsz {
                            let from = rdis[s] as usize + (js * nsz + k) * b;
                            let to = k * row + src * b;
                            out[to..to + b].copy_from_slice(&rbuf[from..from + b]);
                        }
                    }
                }
            }
            let mut got = vec![0u8; row];
            check(crate::coll::PMPI_Scatter(
                cv(&out),
                rowc,
                byte,
                mv(&mut got),
                rowc,
                byte,
                0,
                l.node,
            ))?;
            for r in 0..n {
                let to = elem(recv, r as isize * rc as isize, &rtt)?;
                unpack(&got[r * b..(r + 1) * b], to, rc as usize, &rtt)?;
            }
            Ok(())
        })()
    })
}
