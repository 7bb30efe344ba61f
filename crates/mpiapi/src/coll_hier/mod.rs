//! Collectives of a communicator spanning several nodes, host by host: the ranks of
//! each node combine among themselves first (over the node's shared-memory
//! collectives), one rank per node (its *leader*, the node's lowest rank in the
//! communicator) crosses the network, and each node then shares the result.
//!
//! Taken when the communicator's ranks are on more than one node (`Job::node_of`),
//! at least two on one of them, and `MYRIX_MPI_COLL_HIER` is not `0`:
//! MPI_Barrier, MPI_Bcast (here); MPI_Allreduce, MPI_Reduce, MPI_Reduce_scatter and
//! MPI_Reduce_scatter_block with commutative operations (the order of operands
//! changes; [`reduce`]); MPI_Gather, MPI_Scatter, MPI_Allgather, MPI_Allgatherv and
//! MPI_Alltoall, the leaders moving whole node blocks ([`gather`]). The two levels
//! are communicators made on first use, collectively (every rank of the
//! communicator is in the same collective call then): the node's ranks and the
//! leaders (`MPI_Comm_split`, keeping the communicator's order); they are kept per
//! communicator handle and freed with it ([`forget`]). Each level runs the ordinary
//! collectives, so the choice of algorithm on each is theirs, except the leaders'
//! allreduce of large messages ([`reduce::rabenseifner`]).
//! Must never be entered by some ranks of a communicator and not by others: the
//! decision depends only on the communicator's ranks, the job's node map, the
//! operation, the arguments every rank passes alike and the environment.
//!
//! `MYRIX_MPI_COLL_DEBUG=1` prints each kind of choice once per collective.
//! `MYRIX_MPI_COLL_HIER_NODES=k` (for tests on one host) puts world rank `w` on node
//! `w % k` instead of where it runs, so the levels can be exercised without
//! namespaces.

/// The value of a `Result`, or from the enclosing function `Some(Err(code))`: a
/// rank's bad argument, once the levels exist, is its error (its error handler
/// acts), never a return to the flat path its peers do not take.
macro_rules! try_some {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Some(Err(e)),
        }
    };
}

mod gather;
mod reduce;
mod vform;

pub(crate) use gather::{allgather, alltoall, alltoall_max, gather, scatter};
pub(crate) use reduce::{allreduce, reduce, reduce_scatter};
pub(crate) use vform::{gatherv, scatterv};

use crate::abi::*;
use crate::comm;
use crate::runtime;
use std::collections::{HashMap, HashSet};
use std::os::raw::{c_int, c_void};
use std::sync::{Arc, Mutex, OnceLock};

/// The two levels of a spanning communicator, as this rank sees them.
struct Levels {
    /// The ranks of this node, in the communicator's order.
    node: MPI_Comm,
    /// The leaders (MPI_COMM_NULL on the other ranks).
    leaders: MPI_Comm,
    /// This rank's rank in `node` (0: the leader).
    node_rank: c_int,
    /// Per communicator rank: the index of its node among the leaders (nodes in the
    /// order of their first rank in the communicator).
    node_of: Vec<usize>,
    /// Per communicator rank: its rank in its node.
    rank_in_node: Vec<usize>,
    /// Per node (leader index): its communicator ranks, in order.
    members: Vec<Vec<usize>>,
    /// The communicator ranks node after node (the order the leaders' blocks end to
    /// end hold them in).
    order: Vec<usize>,
    /// This rank's rank in the communicator.
    me: usize,
}

impl Levels {
    fn size(&self) -> usize {
        self.node_of.len()
    }
    fn nodes(&self) -> usize {
        self.members.len()
    }
    fn is_leader(&self) -> bool {
        self.node_rank == 0
    }
}

type Cache = HashMap<MPI_Comm, Option<Arc<Levels>>>;

/// Per communicator handle: its levels, or `None` when it is on one node.
fn cache() -> &'static Mutex<Cache> {
    static C: OnceLock<Mutex<Cache>> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

/// `MYRIX_MPI_COLL_HIER_NODES`: the number of pretend nodes (tests), or 0.
fn fake_nodes() -> u32 {
    static K: OnceLock<u32> = OnceLock::new();
    *K.get_or_init(|| {
        std::env::var("MYRIX_MPI_COLL_HIER_NODES")
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .unwrap_or(0)
    })
}

/// Whether the path may apply at all: turned on, and the job on more than one node.
/// Read once: a job on one node pays one load per collective for this module.
/// (`coll_shm.rs` `world_lock` asks too: the world's shortcut must not skip levels.)
pub(crate) fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("MYRIX_MPI_COLL_HIER").map_or(true, |v| v != "0")
            && (fake_nodes() > 1
                || runtime::with("a collective", |rt| {
                    Ok(rt.job.node_of.len() == rt.job.size as usize
                        && rt.job.node_of.iter().any(|&n| n != rt.job.node_id))
                })
                .unwrap_or(false))
    })
}

/// Whether `MYRIX_MPI_COLL_DEBUG` asks for the choices.
fn debug() -> bool {
    static D: OnceLock<bool> = OnceLock::new();
    *D.get_or_init(|| {
        std::env::var("MYRIX_MPI_COLL_DEBUG").is_ok_and(|v| v != "0" && !v.is_empty())
    })
}

/// Prints (`MYRIX_MPI_COLL_DEBUG`) the choice `what` of collective `name` on
/// `comm_h`, once per process, collective and `kind` of choice (programs that split
/// communicators in a loop would otherwise print without end).
pub(crate) fn note(comm_h: MPI_Comm, name: &str, kind: &str, what: impl FnOnce() -> String) {
    if !debug() {
        return;
    }
    static SEEN: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let key = format!("{name} {kind}");
    let fresh = SEEN
        .get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key);
    if fresh {
        let what = what();
        let (rank, size) = comm::lookup(comm_h, name).map_or((0, 0), |c| (c.rank, c.ranks.len()));
        let line =
            format!("myrix MPI: rank {rank} of a communicator of {size} ranks: {name} {what}\n");
        // One write, so the lines of ranks sharing a pipe stay whole.
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
    }
}

/// For each rank of `comm` (world ranks `ranks`), its node; `None` when levels would
/// not help: all on one node, or each on a node of its own (the leaders' own
/// communicator is such a one, so the path never enters itself).
fn nodes_of(ranks: &[u32]) -> Result<Option<Vec<u32>>, c_int> {
    let k = fake_nodes();
    let nodes = if k > 1 {
        ranks.iter().map(|&w| w % k).collect()
    } else {
        runtime::with("a collective", |rt| {
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
        })?
    };
    let spans = nodes.iter().any(|&n| n != nodes[0]);
    let mut sorted = nodes.clone();
    sorted.sort_unstable();
    let shared = sorted.windows(2).any(|w| w[0] == w[1]);
    Ok((spans && shared).then_some(nodes))
}

/// For the nonblocking collectives (`icoll`): the node of each rank of `c` when
/// the levels apply to it, decided as for the blocking ones but making nothing
/// (a nonblocking call must not wait for the other ranks).
pub(crate) fn node_ids(c: &crate::comm::CommRef) -> Option<Vec<u32>> {
    if !enabled() || c.inter.is_some() {
        return None;
    }
    nodes_of(&c.ranks).ok().flatten()
}

/// The levels of `comm`, made on first use (collective); `None`: not spanning,
/// an intercommunicator, or the path is turned off.
fn levels(comm_h: MPI_Comm, name: &str) -> Result<Option<Arc<Levels>>, c_int> {
    if !enabled() {
        return Ok(None);
    }
    if let Some(l) = cache()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&comm_h)
    {
        return Ok(l.clone());
    }
    let c = comm::lookup(comm_h, name)?;
    let nodes = match c.inter.is_none().then(|| nodes_of(&c.ranks)).transpose()? {
        Some(Some(n)) => n,
        _ => {
            cache()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(comm_h, None);
            return Ok(None);
        }
    };
    // Nodes in the order of their first rank; each rank's place.
    let myrix_mpi::coll::nb::levels::NodeMap {
        node_of,
        rank_in_node,
        members,
    } = myrix_mpi::coll::nb::levels::NodeMap::new(&nodes);
    let me = c.rank as usize;
    let node_rank = rank_in_node[me] as c_int;
    let mut node = MPI_COMM_NULL;
    let mut leaders = MPI_COMM_NULL;
    // SAFETY: out-parameters of our own.
    unsafe {
        // Colour: the node's index (the same on every rank of it); key 0 keeps the
        // communicator's order.
        check(crate::comm::PMPI_Comm_split(
            comm_h,
            node_of[me] as c_int,
            0,
            &mut node,
        ))?;
        let color = if node_rank == 0 { 0 } else { MPI_UNDEFINED };
        check(crate::comm::PMPI_Comm_split(comm_h, color, 0, &mut leaders))?;
    }
    let order = members.concat();
    let l = Arc::new(Levels {
        node,
        leaders,
        node_rank,
        node_of,
        rank_in_node,
        members,
        order,
        me,
    });
    cache()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(comm_h, Some(l.clone()));
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
    if let Some(Some(l)) = l {
        let (mut node, mut leaders) = (l.node, l.leaders);
        // SAFETY: handles of our own.
        unsafe {
            let _ = crate::comm::PMPI_Comm_free(&mut node);
            if leaders != MPI_COMM_NULL {
                let _ = crate::comm::PMPI_Comm_free(&mut leaders);
            }
        }
    }
}

/// `(lb, extent)` of a datatype (`true_`: its true lower bound and extent).
fn extent(dt: MPI_Datatype, true_: bool) -> Result<(isize, isize), c_int> {
    let (mut lb, mut ext) = (0 as MPI_Aint, 0 as MPI_Aint);
    // SAFETY: two valid out-parameters.
    check(unsafe {
        if true_ {
            crate::datatype::PMPI_Type_get_true_extent(dt, &mut lb, &mut ext)
        } else {
            crate::datatype::PMPI_Type_get_extent(dt, &mut lb, &mut ext)
        }
    })?;
    Ok((lb, ext))
}

/// Memory for `n` elements of a datatype (8-byte aligned), and the address to pass
/// as the buffer (the memory minus the type's true lower bound).
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

/// The address of element `i` of an array of `dt` at `buf` (no access).
fn elem_at(buf: *const c_void, i: usize, dt: MPI_Datatype) -> Result<*mut c_void, c_int> {
    let (_, ext) = extent(dt, false)?;
    let off = (i as isize).checked_mul(ext).ok_or(MPI_ERR_COUNT)?;
    Ok(buf.cast::<u8>().wrapping_offset(off).cast_mut().cast())
}

/// A size in bytes from the environment (`k`/`m` suffixes); `None` when unset or
/// not a size (said once).
fn env_size(name: &str) -> Option<usize> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let (num, mul) = match v.as_bytes().last()? {
        b'k' | b'K' => (&v[..v.len() - 1], 1024),
        b'm' | b'M' => (&v[..v.len() - 1], 1024 * 1024),
        _ => (v, 1),
    };
    let n = num.parse::<usize>().ok().and_then(|n| n.checked_mul(mul));
    if n.is_none() {
        crate::ffi::say!("myrix MPI: {name}={v} is not a size; ignored");
    }
    n
}

/// A byte count as a C count, or `None` when it does not fit (the flat path then).
fn c_count(n: usize) -> Option<c_int> {
    c_int::try_from(n).ok()
}

/// MPI_Barrier by levels, or `None`.
pub(crate) fn barrier(comm_h: MPI_Comm) -> Option<Result<(), c_int>> {
    let l = match levels(comm_h, "MPI_Barrier") {
        Ok(Some(l)) => l,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    note(comm_h, "MPI_Barrier", "levels", || {
        format!("by levels ({} nodes)", l.nodes())
    });
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
    let l = match levels(comm_h, "MPI_Bcast") {
        Ok(Some(l)) => l,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    let root = usize::try_from(root).ok().filter(|&r| r < l.size())?; // else the ordinary path reports it
    note(comm_h, "MPI_Bcast", "levels", || {
        format!("by levels ({} nodes)", l.nodes())
    });
    let root_node = l.node_of[root];
    let mine = l.node_of[l.me];
    // SAFETY: the caller's buffer; handles of our own.
    Some(unsafe {
        (|| {
            if mine == root_node {
                let r = l.rank_in_node[root] as c_int;
                check(crate::coll::PMPI_Bcast(buf, count, dt, r, l.node))?;
            }
            if l.leaders != MPI_COMM_NULL {
                let r = root_node as c_int;
                check(crate::coll::PMPI_Bcast(buf, count, dt, r, l.leaders))?;
            }
            if mine != root_node {
                check(crate::coll::PMPI_Bcast(buf, count, dt, 0, l.node))?;
            }
            Ok(())
        })()
    })
}
