//! MPI_Gatherv and MPI_Scatterv by levels. The per-rank counts are known in full
//! only at the root, so the leaders first learn their node's: every rank gives its
//! leader the byte count of its own block (a node gather of one int), and the root
//! gives its leader, when it is not one, the total of every node. The leaders then
//! cross the network once per node with a whole node block (gatherv/scatterv among
//! the leaders), the root's leader hands the root (or takes from it) everything,
//! and the node moves the blocks to or from its leader.
//!
//! A block above `MYRIX_MPI_HIER_BLOCK_MAX` (default 64 KiB) goes straight between
//! its rank and the root over the communicator's collective context instead, as the
//! flat path would send it: both ends know its size (the rank its own, the root
//! every rank's), so the choice is the same on both, and the leaders' copies of
//! large blocks (what made whole large gathers slower by levels) are never made.
//!
//! Arguments: a rank whose own arguments are bad (a datatype, a negative count)
//! returns the error instead of taking another path than its peers, so the
//! communicator's error handler acts (MPI_ERRORS_ARE_FATAL: the job ends) rather
//! than the ranks waiting for each other in different algorithms.

use super::{c_count, check, levels, note, Levels};
use crate::abi::*;
use crate::coll::args::{comm_ref, elem, ints, pack, unpack, Dt};
use crate::coll_glue::pt2pt;
use crate::datatype;
use myrix_mpi::coll::Pt2Pt;
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

/// Tag of the node-level messages between the root and its leader.
const TAG: c_int = 26;
/// Tag of the blocks sent straight between a rank and the root, on the
/// communicator's collective context (above the blocking collectives' 1–11).
const DIRECT: i32 = 26;

/// `MYRIX_MPI_HIER_BLOCK_MAX`: the largest block (bytes) of MPI_Gatherv and
/// MPI_Scatterv that goes through the leaders; `k`/`m` suffixes; default 64 KiB.
pub(super) fn block_max() -> usize {
    static M: OnceLock<usize> = OnceLock::new();
    *M.get_or_init(|| super::env_size("MYRIX_MPI_HIER_BLOCK_MAX").unwrap_or(64 * 1024))
}

fn cv(v: &[u8]) -> *const c_void {
    super::gather::cv(v)
}
fn mv(v: &mut [u8]) -> *mut c_void {
    super::gather::mv(v)
}
fn ci(v: &[c_int]) -> *const c_void {
    if v.is_empty() {
        std::ptr::NonNull::<u64>::dangling().as_ptr().cast()
    } else {
        v.as_ptr().cast()
    }
}
fn mi(v: &mut [c_int]) -> *mut c_void {
    if v.is_empty() {
        std::ptr::NonNull::<u64>::dangling().as_ptr().cast()
    } else {
        v.as_mut_ptr().cast()
    }
}

/// Bytes of `n` elements of `t`, or the error a flat call would give.
fn nbytes(n: c_int, t: &Dt) -> Result<usize, c_int> {
    usize::try_from(n)
        .map_err(|_| MPI_ERR_COUNT)?
        .checked_mul(t.size())
        .ok_or(MPI_ERR_COUNT)
}

/// Whether rank `r`'s block of `b` bytes goes through the leaders (the root's own
/// never moves).
fn via(r: usize, root: usize, b: usize) -> bool {
    r != root && b <= block_max()
}

/// The part of the levels shared by both directions: the node's per-rank byte
/// counts through the leaders (at the leader; one int per member), and their
/// displacements in the node block.
fn node_counts(l: &Levels, mine: c_int) -> Result<(Vec<c_int>, Vec<c_int>, c_int), c_int> {
    let nsz = l.members[l.node_of[l.me]].len();
    let mut nc = vec![0 as c_int; if l.is_leader() { nsz } else { 0 }];
    // SAFETY: one int each, our own vectors.
    check(unsafe {
        crate::coll::PMPI_Gather(
            (&mine as *const c_int).cast(),
            1,
            MPI_INT,
            mi(&mut nc),
            1,
            MPI_INT,
            0,
            l.node,
        )
    })?;
    let mut nd = Vec::with_capacity(nc.len());
    let mut at: c_int = 0;
    for &c in &nc {
        nd.push(at);
        at = at.checked_add(c).ok_or(MPI_ERR_COUNT)?;
    }
    Ok((nc, nd, at))
}

/// At the root: per node, the bytes of its blocks through the leaders, and their
/// displacements end to end (the leaders' counts); `None` when a total does not
/// fit a C count.
fn node_totals(l: &Levels, root: usize, by: &[usize]) -> Option<(Vec<c_int>, Vec<c_int>)> {
    super::gather::node_blocks(l, |r| if via(r, root, by[r]) { by[r] } else { 0 })
}

/// Per rank: element counts, element displacements, bytes.
type RootSide = (Vec<c_int>, Vec<c_int>, Vec<usize>);

/// The root's counts and displacements of a v-form, as byte counts per rank.
///
/// # Safety
/// `cs` and `ds` hold one int per rank (the C contract).
unsafe fn root_side(
    cs: *const c_int,
    ds: *const c_int,
    n: usize,
    t: &Dt,
) -> Result<RootSide, c_int> {
    // SAFETY: the caller's contract.
    let (cs, ds) = unsafe { (ints(cs, n)?, ints(ds, n)?) };
    let by = cs.iter().map(|&c| nbytes(c, t)).collect::<Result<_, _>>()?;
    Ok((cs.to_vec(), ds.to_vec(), by))
}

/// MPI_Gatherv by levels, or `None`.
///
/// # Safety
/// The C contract of MPI_Gatherv for the buffers and arrays.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gatherv(
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rt: MPI_Datatype,
    root: c_int,
    comm_h: MPI_Comm,
) -> Option<Result<(), c_int>> {
    let name = "MPI_Gatherv";
    let l = match levels(comm_h, name) {
        Ok(Some(l)) => l,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    let root = usize::try_from(root).ok().filter(|&r| r < l.size())?; // else the flat path reports it
    note(comm_h, name, "levels", || {
        format!("by levels ({} nodes)", l.nodes())
    });
    // SAFETY: the caller's contract, forwarded.
    Some(unsafe { gatherv_levels(&l, send, sc, st, recv, rcounts, rdispls, rt, root, comm_h) })
}

#[allow(clippy::too_many_arguments)]
unsafe fn gatherv_levels(
    l: &Levels,
    send: *const c_void,
    sc: c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rt: MPI_Datatype,
    root: usize,
    comm_h: MPI_Comm,
) -> Result<(), c_int> {
    let name = "MPI_Gatherv";
    let (me, n) = (l.me, l.size());
    let in_place = send as usize == MPI_IN_PLACE;
    let at_root = me == root;
    // The root's view of every block; everyone's own data.
    let rside = if at_root {
        let t = datatype::lookup(rt)?;
        // SAFETY: the C contract.
        let (cs, ds, by) = unsafe { root_side(rcounts, rdispls, n, &t) }?;
        Some((t, cs, ds, by))
    } else {
        None
    };
    let data = match (&rside, in_place) {
        (Some((t, cs, ds, _)), true) => {
            // SAFETY: in place: the root's own block of the receive buffer.
            unsafe { packed(elem(recv, ds[me] as isize, t)?.cast(), cs[me], t) }?
        }
        (None, true) => return Err(MPI_ERR_BUFFER),
        // SAFETY: the C contract.
        (_, false) => unsafe { packed(send, sc, &datatype::lookup(st)?) }?,
    };
    if let Some((_, _, _, by)) = &rside {
        if by[me] != data.len() {
            return Err(MPI_ERR_TRUNCATE);
        }
    }
    let b = data.len();
    let through = via(me, root, b);
    let mine = c_count(if through { b } else { 0 }).ok_or(MPI_ERR_COUNT)?;
    let root_node = l.node_of[root];
    let here = l.node_of[me];
    // Node: counts, then blocks, to the leader.
    let (nc, nd, ntotal) = node_counts(l, mine)?;
    let mut nodebuf = vec![0u8; ntotal as usize];
    let empty: &[u8] = &[];
    let byte = MPI_BYTE;
    // SAFETY: our own vectors of the sizes given.
    check(unsafe {
        crate::coll::PMPI_Gatherv(
            cv(if through { &data } else { empty }),
            mine,
            byte,
            mv(&mut nodebuf),
            nc.as_ptr(),
            nd.as_ptr(),
            byte,
            0,
            l.node,
        )
    })?;
    // The root's leader needs every node's total: from the root.
    let nodes = l.nodes();
    let mut totals = vec![
        0 as c_int;
        if here == root_node && l.is_leader() {
            2 * nodes
        } else {
            0
        }
    ];
    if let Some((_, _, _, by)) = &rside {
        let (t, d) = node_totals(l, root, by).ok_or(MPI_ERR_COUNT)?;
        let td: Vec<c_int> = t.into_iter().chain(d).collect();
        if !l.is_leader() {
            // SAFETY: our own vector.
            check(unsafe {
                crate::p2p::PMPI_Send(ci(&td), 2 * nodes as c_int, MPI_INT, 0, TAG, l.node)
            })?;
        }
        // (A root that is not a leader sizes what its leader hands it with them.)
        totals = td;
    } else if !totals.is_empty() {
        let from = l.rank_in_node[root] as c_int;
        // SAFETY: our own vector.
        check(unsafe {
            crate::p2p::PMPI_Recv(
                mi(&mut totals),
                2 * nodes as c_int,
                MPI_INT,
                from,
                TAG,
                l.node,
                std::ptr::null_mut(),
            )
        })?;
    }
    let all_len: usize = totals.iter().take(nodes).map(|&c| c as usize).sum();
    let mut all = vec![0u8; all_len];
    if l.is_leader() {
        let (tc, td) = if totals.is_empty() {
            (std::ptr::null(), std::ptr::null())
        } else {
            (totals.as_ptr(), totals[nodes..].as_ptr())
        };
        // SAFETY: our own vectors of the sizes given.
        check(unsafe {
            crate::coll::PMPI_Gatherv(
                cv(&nodebuf),
                ntotal,
                byte,
                mv(&mut all),
                tc,
                td,
                byte,
                root_node as c_int,
                l.leaders,
            )
        })?;
        if here == root_node && !at_root {
            let to = l.rank_in_node[root] as c_int;
            let len = c_count(all.len()).ok_or(MPI_ERR_COUNT)?;
            // SAFETY: our own vector.
            check(unsafe { crate::p2p::PMPI_Send(cv(&all), len, byte, to, TAG, l.node) })?;
        }
    } else if at_root {
        let len = c_count(all.len()).ok_or(MPI_ERR_COUNT)?;
        // SAFETY: our own vector.
        check(unsafe {
            crate::p2p::PMPI_Recv(
                mv(&mut all),
                len,
                byte,
                0,
                TAG,
                l.node,
                std::ptr::null_mut(),
            )
        })?;
    }
    let c = comm_ref(comm_h, name)?;
    let mut p = pt2pt(&c);
    let Some((t, cs, ds, by)) = &rside else {
        if !through && b > 0 {
            p.send(root, DIRECT, &data)
                .map_err(|e| crate::coll::args::coll_code(&e, name))?;
        }
        return Ok(());
    };
    // The root: blocks through the leaders in `order`, the others straight.
    let mut at = 0;
    let mut direct = Vec::new();
    for &r in &l.order {
        let bytes = by[r];
        let to = elem(recv, ds[r] as isize, t)?;
        if r == me {
            if !in_place {
                // SAFETY: the root's block of the receive buffer.
                unsafe { unpack(&data, to, cs[r] as usize, t) }?;
            }
        } else if via(r, root, bytes) {
            // SAFETY: rank r's block of the receive buffer.
            unsafe { unpack(&all[at..at + bytes], to, cs[r] as usize, t) }?;
            at += bytes;
        } else if bytes > 0 {
            direct.resize(bytes, 0);
            let got = p
                .recv(r, DIRECT, &mut direct)
                .map_err(|e| crate::coll::args::coll_code(&e, name))?;
            if got != bytes {
                return Err(MPI_ERR_TRUNCATE);
            }
            // SAFETY: rank r's block of the receive buffer.
            unsafe { unpack(&direct, to, cs[r] as usize, t) }?;
        }
    }
    Ok(())
}

/// `n` elements of `t` at `buf`, packed (a negative count refused).
///
/// # Safety
/// `buf` holds them.
unsafe fn packed(buf: *const c_void, n: c_int, t: &Dt) -> Result<Vec<u8>, c_int> {
    let n = usize::try_from(n).map_err(|_| MPI_ERR_COUNT)?;
    // SAFETY: the caller's contract.
    unsafe { pack(buf.cast(), n, t) }
}

/// MPI_Scatterv by levels, or `None`.
///
/// # Safety
/// The C contract of MPI_Scatterv for the buffers and arrays.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatterv(
    send: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    root: c_int,
    comm_h: MPI_Comm,
) -> Option<Result<(), c_int>> {
    let name = "MPI_Scatterv";
    let l = match levels(comm_h, name) {
        Ok(Some(l)) => l,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    let root = usize::try_from(root).ok().filter(|&r| r < l.size())?;
    note(comm_h, name, "levels", || {
        format!("by levels ({} nodes)", l.nodes())
    });
    // SAFETY: the caller's contract, forwarded.
    Some(unsafe { scatterv_levels(&l, send, scounts, sdispls, st, recv, rc, rt, root, comm_h) })
}

#[allow(clippy::too_many_arguments)]
unsafe fn scatterv_levels(
    l: &Levels,
    send: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    st: MPI_Datatype,
    recv: *mut c_void,
    rc: c_int,
    rt: MPI_Datatype,
    root: usize,
    comm_h: MPI_Comm,
) -> Result<(), c_int> {
    let name = "MPI_Scatterv";
    let (me, n) = (l.me, l.size());
    let at_root = me == root;
    let keep = !(at_root && recv as usize == MPI_IN_PLACE);
    let rside = if at_root {
        let t = datatype::lookup(st)?;
        // SAFETY: the C contract.
        let (cs, ds, by) = unsafe { root_side(scounts, sdispls, n, &t) }?;
        Some((t, cs, ds, by))
    } else {
        None
    };
    let mine_t = if keep {
        Some(datatype::lookup(rt)?)
    } else {
        None
    };
    let b = match (&mine_t, &rside) {
        (Some(t), _) => nbytes(rc, t)?,
        (None, Some((_, _, _, by))) => by[me],
        (None, None) => return Err(MPI_ERR_BUFFER),
    };
    if let (Some((_, _, _, by)), true) = (&rside, keep) {
        if by[me] != b {
            return Err(MPI_ERR_TRUNCATE);
        }
    }
    let through = via(me, root, b);
    let mine = c_count(if through { b } else { 0 }).ok_or(MPI_ERR_COUNT)?;
    let root_node = l.node_of[root];
    let here = l.node_of[me];
    let (nc, nd, ntotal) = node_counts(l, mine)?;
    let byte = MPI_BYTE;
    let nodes = l.nodes();
    // The root packs the blocks through the leaders, node after node.
    let mut all = Vec::new();
    let mut totals = Vec::new();
    if let Some((t, cs, ds, by)) = &rside {
        let (tc, td) = node_totals(l, root, by).ok_or(MPI_ERR_COUNT)?;
        totals = tc.into_iter().chain(td).collect();
        for &r in &l.order {
            if via(r, root, by[r]) {
                let from = elem(send, ds[r] as isize, t)?;
                // SAFETY: rank r's block of the send buffer.
                all.extend(unsafe { packed(from.cast(), cs[r], t) }?);
            }
        }
        if !l.is_leader() {
            let len = c_count(all.len()).ok_or(MPI_ERR_COUNT)?;
            // SAFETY: our own vectors.
            check(unsafe {
                crate::p2p::PMPI_Send(ci(&totals), 2 * nodes as c_int, MPI_INT, 0, TAG, l.node)
            })?;
            // SAFETY: our own vector.
            check(unsafe { crate::p2p::PMPI_Send(cv(&all), len, byte, 0, TAG, l.node) })?;
        }
    } else if here == root_node && l.is_leader() {
        let from = l.rank_in_node[root] as c_int;
        totals = vec![0; 2 * nodes];
        // SAFETY: our own vectors.
        check(unsafe {
            crate::p2p::PMPI_Recv(
                mi(&mut totals),
                2 * nodes as c_int,
                MPI_INT,
                from,
                TAG,
                l.node,
                std::ptr::null_mut(),
            )
        })?;
        all = vec![0u8; totals.iter().take(nodes).map(|&c| c as usize).sum()];
        let len = c_count(all.len()).ok_or(MPI_ERR_COUNT)?;
        // SAFETY: our own vector.
        check(unsafe {
            crate::p2p::PMPI_Recv(
                mv(&mut all),
                len,
                byte,
                from,
                TAG,
                l.node,
                std::ptr::null_mut(),
            )
        })?;
    }
    let mut nodebuf = vec![0u8; ntotal as usize];
    if l.is_leader() {
        let (tc, td) = if totals.is_empty() {
            (std::ptr::null(), std::ptr::null())
        } else {
            (totals.as_ptr(), totals[nodes..].as_ptr())
        };
        // SAFETY: our own vectors of the sizes given.
        check(unsafe {
            crate::coll::PMPI_Scatterv(
                cv(&all),
                tc,
                td,
                byte,
                mv(&mut nodebuf),
                ntotal,
                byte,
                root_node as c_int,
                l.leaders,
            )
        })?;
    }
    let mut out = vec![0u8; if through { b } else { 0 }];
    // SAFETY: our own vectors of the sizes given.
    check(unsafe {
        crate::coll::PMPI_Scatterv(
            cv(&nodebuf),
            nc.as_ptr(),
            nd.as_ptr(),
            byte,
            mv(&mut out),
            mine,
            byte,
            0,
            l.node,
        )
    })?;
    let c = comm_ref(comm_h, name)?;
    let mut p = pt2pt(&c);
    let code = |e: myrix_mpi::coll::CollError| crate::coll::args::coll_code(&e, name);
    match &rside {
        Some((t, cs, ds, by)) => {
            for &r in &l.order {
                if r != me && !via(r, root, by[r]) && by[r] > 0 {
                    let from = elem(send, ds[r] as isize, t)?;
                    // SAFETY: rank r's block of the send buffer.
                    let blk = unsafe { packed(from.cast(), cs[r], t) }?;
                    p.send(r, DIRECT, &blk).map_err(code)?;
                }
            }
            if let Some(rt) = &mine_t {
                let own = elem(send, ds[me] as isize, t)?;
                // SAFETY: the root's own block, to its receive buffer.
                let blk = unsafe { packed(own.cast(), cs[me], t) }?;
                // SAFETY: the receive buffer holds rc elements.
                unsafe { unpack(&blk, recv.cast(), rc as usize, rt) }?;
            }
        }
        None => {
            if !through && b > 0 {
                out = vec![0u8; b];
                let got = p.recv(root, DIRECT, &mut out).map_err(code)?;
                if got != b {
                    return Err(MPI_ERR_TRUNCATE);
                }
            }
            if let Some(rt) = &mine_t {
                // SAFETY: the receive buffer holds rc elements.
                unsafe { unpack(&out, recv.cast(), rc as usize, rt) }?;
            }
        }
    }
    Ok(())
}
