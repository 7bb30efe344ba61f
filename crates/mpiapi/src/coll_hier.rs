//! Collectives of a communicator spanning several nodes, host by host: the ranks of
//! each node combine among themselves first (over the node's shared-memory
//! collectives), one rank per node (its *leader*, the node's lowest rank in the
//! communicator) crosses the network, and each node then shares the result.
//!
//! MPI_Allreduce (commutative operations only: the order of operands changes),
//! MPI_Bcast and MPI_Barrier take this path when the communicator's ranks are on more
//! than one node (`Job::node_of`) and `MYRIX_MPI_COLL_HIER` is not `0`. The two levels
//! are communicators made on first use, collectively (every rank of the communicator
//! is in the same collective call then): the node's ranks (`MPI_Comm_split_type`
//! SHARED, keeping the communicator's order) and the leaders (`MPI_Comm_split`);
//! they are kept per communicator handle and freed with it ([`forget`]). Each level
//! runs the ordinary collectives, so the choice of algorithm on each is theirs.
//! Must never be entered by some ranks of a communicator and not by others: the
//! decision depends only on the communicator's ranks, the job's node map, the
//! operation and the environment, the same on every rank.

use crate::abi::*;
use crate::comm;
use crate::runtime;
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::{Mutex, OnceLock};

/// The two levels of a spanning communicator, as this rank sees them.
#[derive(Clone, Copy)]
struct Levels {
    /// The ranks of this node, in the communicator's order.
    node: MPI_Comm,
    /// The leaders (MPI_COMM_NULL on the other ranks).
    leaders: MPI_Comm,
    /// This rank's rank in `node` (0: the leader).
    node_rank: c_int,
}

/// Per communicator handle: its levels, or `None` when it is on one node.
fn cache() -> &'static Mutex<HashMap<MPI_Comm, Option<Levels>>> {
    static C: OnceLock<Mutex<HashMap<MPI_Comm, Option<Levels>>>> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Whether the path may apply at all: turned on, and the job on more than one node.
/// Read once: a job on one node pays one load per collective for this module.
fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("MYRIX_MPI_COLL_HIER").map_or(true, |v| v != "0")
            && runtime::with("a collective", |rt| {
                Ok(rt.job.node_of.len() == rt.job.size as usize
                    && rt.job.node_of.iter().any(|&n| n != rt.job.node_id))
            })
            .unwrap_or(false)
    })
}

/// For each rank of `comm` (world ranks `ranks`), its node; `None` when levels would
/// not help: all on one node, or each on a node of its own (the leaders' own
/// communicator is such a one, so the path never enters itself).
fn nodes_of(ranks: &[u32]) -> Result<Option<Vec<u32>>, c_int> {
    let nodes = runtime::with("a collective", |rt| {
        ranks
            .iter()
            .map(|&w| {
                rt.job
                    .node_of
                    .get(w as usize)
                    .copied()
                    .ok_or(MPI_ERR_INTERN)
            })
            .collect::<Result<Vec<u32>, c_int>>()
    })?;
    let spans = nodes.iter().any(|&n| n != nodes[0]);
    let mut sorted = nodes.clone();
    sorted.sort_unstable();
    let shared = sorted.windows(2).any(|w| w[0] == w[1]);
    Ok((spans && shared).then_some(nodes))
}

/// The levels of `comm`, made on first use (collective); `None`: not spanning,
/// an intercommunicator, or the path is turned off.
fn levels(comm_h: MPI_Comm, name: &str) -> Result<Option<Levels>, c_int> {
    if let Some(l) = cache()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&comm_h)
    {
        return Ok(*l);
    }
    let c = comm::lookup(comm_h, name)?;
    if c.inter.is_some() || nodes_of(&c.ranks)?.is_none() {
        cache()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(comm_h, None);
        return Ok(None);
    }
    let mut node = MPI_COMM_NULL;
    let mut leaders = MPI_COMM_NULL;
    let mut node_rank = 0;
    // SAFETY: out-parameters of our own.
    unsafe {
        check(crate::comm::PMPI_Comm_split_type(
            comm_h,
            MPI_COMM_TYPE_SHARED,
            0,
            MPI_INFO_NULL,
            &mut node,
        ))?;
        check(crate::comm::PMPI_Comm_rank(node, &mut node_rank))?;
        let color = if node_rank == 0 { 0 } else { MPI_UNDEFINED };
        check(crate::comm::PMPI_Comm_split(comm_h, color, 0, &mut leaders))?;
    }
    let l = Levels {
        node,
        leaders,
        node_rank,
    };
    cache()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(comm_h, Some(l));
    Ok(Some(l))
}

fn check(rc: c_int) -> Result<(), c_int> {
    if rc == MPI_SUCCESS {
        Ok(())
    } else {
        Err(rc)
    }
}

/// Frees the levels kept for `comm_h` (MPI_Comm_free of it).
pub(crate) fn forget(comm_h: MPI_Comm) {
    let l = cache()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&comm_h);
    if let Some(Some(mut l)) = l {
        // SAFETY: handles of our own.
        unsafe {
            let _ = crate::comm::PMPI_Comm_free(&mut l.node);
            if l.leaders != MPI_COMM_NULL {
                let _ = crate::comm::PMPI_Comm_free(&mut l.leaders);
            }
        }
    }
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
    if !enabled() {
        return None;
    }
    if !crate::op::lookup(op).is_ok_and(|o| o.commutative()) {
        return None;
    }
    let l = match levels(comm_h, "MPI_Allreduce") {
        Ok(Some(l)) => l,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    let in_place = send as usize == MPI_IN_PLACE;
    // SAFETY: the caller's buffers, passed on as the C contract allows.
    Some(unsafe {
        (|| {
            if l.node_rank == 0 {
                let s = if in_place {
                    MPI_IN_PLACE as *const c_void
                } else {
                    send
                };
                check(crate::coll::PMPI_Reduce(s, recv, count, dt, op, 0, l.node))?;
                check(crate::coll::PMPI_Allreduce(
                    MPI_IN_PLACE as *const c_void,
                    recv,
                    count,
                    dt,
                    op,
                    l.leaders,
                ))?;
            } else {
                let s = if in_place { recv.cast_const() } else { send };
                check(crate::coll::PMPI_Reduce(
                    s,
                    std::ptr::null_mut(),
                    count,
                    dt,
                    op,
                    0,
                    l.node,
                ))?;
            }
            check(crate::coll::PMPI_Bcast(recv, count, dt, 0, l.node))
        })()
    })
}

/// MPI_Barrier by levels, or `None`.
pub(crate) fn barrier(comm_h: MPI_Comm) -> Option<Result<(), c_int>> {
    if !enabled() {
        return None;
    }
    let l = match levels(comm_h, "MPI_Barrier") {
        Ok(Some(l)) => l,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    // SAFETY: handles of our own.
    Some(unsafe {
        (|| {
            check(crate::coll::PMPI_Barrier(l.node))?;
            if l.leaders != MPI_COMM_NULL {
                check(crate::coll::PMPI_Barrier(l.leaders))?;
            }
            check(crate::coll::PMPI_Barrier(l.node))
        })()
    })
}

/// MPI_Bcast by levels, or `None`. The root's node first spreads the data among
/// its ranks, the leaders then from the root's leader, then every other node.
///
/// # Safety
/// The C contract of MPI_Bcast for the buffer.
pub(crate) unsafe fn bcast(
    buf: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    root: c_int,
    comm_h: MPI_Comm,
) -> Option<Result<(), c_int>> {
    if !enabled() {
        return None;
    }
    let c = comm::lookup(comm_h, "MPI_Bcast").ok()?;
    let n = c.ranks.len();
    if root < 0 || root as usize >= n {
        return None; // the ordinary path reports it
    }
    let l = match levels(comm_h, "MPI_Bcast") {
        Ok(Some(l)) => l,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    let nodes = match nodes_of(&c.ranks) {
        Ok(Some(v)) => v,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    let root = root as usize;
    let root_node = nodes[root];
    let mine = nodes[c.rank as usize];
    // The root's rank in its node, and its leader's rank among the leaders (leaders
    // are ordered by their rank in the communicator: the first rank of each node).
    let root_in_node = nodes[..root].iter().filter(|&&x| x == root_node).count() as c_int;
    let first_of = |node: u32| nodes.iter().position(|&x| x == node).unwrap_or(0);
    let root_leader = (0..n)
        .filter(|&i| first_of(nodes[i]) == i && i < first_of(root_node))
        .count() as c_int;
    // SAFETY: the caller's buffer; handles of our own.
    Some(unsafe {
        (|| {
            if mine == root_node {
                check(crate::coll::PMPI_Bcast(
                    buf,
                    count,
                    dt,
                    root_in_node,
                    l.node,
                ))?;
            }
            if l.leaders != MPI_COMM_NULL {
                check(crate::coll::PMPI_Bcast(
                    buf,
                    count,
                    dt,
                    root_leader,
                    l.leaders,
                ))?;
            }
            if mine != root_node {
                check(crate::coll::PMPI_Bcast(buf, count, dt, 0, l.node))?;
            }
            Ok(())
        })()
    })
}
