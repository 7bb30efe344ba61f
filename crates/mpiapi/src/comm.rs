//! Communicators: the predefined ones (MPI_COMM_WORLD, MPI_COMM_SELF) and those a
//! program creates (dup, split, split_type, create, free) in a handle table. What a
//! program asks of one (size, rank, names, comparison, group, error handlers,
//! predefined attributes, error strings) is in the child module [`query`]
//! (`comm_query.rs`).
//!
//! Creating a communicator is collective over its parent: the members agree on a
//! context id through `myrix_mpi::commctx` over the parent's collective context
//! (through `coll_glue::pt2pt`, see `comm_idup`). Nothing here holds a lock while
//! communicating. MPI_Comm_idup is in `comm_idup`.

use crate::abi::*;
use crate::attr::{self, Kind};
use crate::coll::args::coll_code;
use crate::coll_glue::pt2pt;
use crate::ffi::{finish, mpi_fn, put};
use crate::handles::{base, Table};
use crate::runtime;
use myrix_mpi::coll;
use myrix_mpi::commctx::ContextPool;
use myrix_mpi::topo::Topology;
use std::os::raw::c_int;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

#[path = "comm_query.rs"]
pub mod query;
// Its public names stay `comm::` names (`MPI_Comm_size`, `set_lastusedcode`, …).
pub use query::*;

/// The largest tag (the standard asks for at least 32767). The point-to-point layer
/// will carry 31-bit tags.
pub const TAG_UB: c_int = 0x7fff_ffff;

/// What point-to-point and collective calls need to know of a communicator.
#[derive(Debug, Clone)]
pub struct CommRef {
    /// The point-to-point context id; the communicator's collectives use `ctx + 1`.
    pub ctx: u32,
    /// This process's rank in the communicator.
    pub rank: u32,
    /// The world rank of each communicator rank point-to-point addresses: for an
    /// intercommunicator, the remote group.
    pub ranks: Arc<[u32]>,
    /// An intercommunicator's local group and hidden helpers (`intercomm.rs`).
    pub inter: Option<Arc<crate::intercomm::Inter>>,
}

impl CommRef {
    /// The world ranks of the local group (for an intracommunicator, `ranks`).
    pub fn local(&self) -> &[u32] {
        self.inter.as_ref().map_or(&self.ranks, |i| &i.local)
    }
}

/// A created communicator: what collectives need, plus its name and error handler.
struct Comm {
    cref: CommRef,
    name: String,
    errh: MPI_Errhandler,
    /// A Cartesian, graph or distributed-graph topology (`crate::topo`).
    topo: Option<Arc<Topology>>,
}

/// The created communicators, and the names given to the predefined ones.
struct Comms {
    table: Table<Comm>,
    world_name: String,
    self_name: String,
}

static COMMS: Mutex<Comms> = Mutex::new(Comms {
    table: Table::new(base::COMM),
    world_name: String::new(),
    self_name: String::new(),
});

/// The context ids this process uses; locked apart from [`COMMS`] because agreeing
/// on one communicates.
static POOL: LazyLock<Mutex<ContextPool>> = LazyLock::new(|| Mutex::new(ContextPool::new()));

pub(crate) fn comms_is_inter(comm: MPI_Comm) -> bool {
    // A communicator with a collectives' record is an intracommunicator.
    if crate::coll::shm::known(comm).is_some() {
        return false;
    }
    comms()
        .table
        .get(comm)
        .is_some_and(|c| c.cref.inter.is_some())
}

fn comms() -> MutexGuard<'static, Comms> {
    COMMS.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn pool() -> MutexGuard<'static, ContextPool> {
    POOL.lock().unwrap_or_else(|p| p.into_inner())
}

/// The pool if no caller up the stack holds it (steps run inside progress).
pub(crate) fn try_pool() -> Option<MutexGuard<'static, ContextPool>> {
    match POOL.try_lock() {
        Ok(g) => Some(g),
        Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

/// The context of a communicator MPI_Comm_idup made, until it is agreed (odd: no
/// pool slot, released as nothing).
pub(crate) const NO_CTX: u32 = u32::MAX;

/// Gives a communicator MPI_Comm_idup made its agreed context.
pub(crate) fn set_ctx(h: MPI_Comm, ctx: u32) -> Result<(), c_int> {
    comms().table.get_mut(h).ok_or(MPI_ERR_COMM)?.cref.ctx = ctx;
    Ok(())
}

/// The communicator behind a handle (`MPI_ERR_COMM` for an invalid one). Context
/// ids: MPI_COMM_WORLD 0, MPI_COMM_SELF 2; created communicators get even ids agreed
/// by their members (`myrix_mpi::commctx`).
pub fn lookup(comm: MPI_Comm, name: &str) -> Result<CommRef, c_int> {
    match comm {
        MPI_COMM_WORLD => Ok(predefined(name)?.0.clone()),
        MPI_COMM_SELF => Ok(predefined(name)?.1.clone()),
        _ => comms()
            .table
            .get(comm)
            .map(|c| c.cref.clone())
            .ok_or(MPI_ERR_COMM),
    }
}

static PREDEF: std::sync::OnceLock<(CommRef, CommRef)> = std::sync::OnceLock::new();

/// MPI_COMM_WORLD's or MPI_COMM_SELF's `CommRef` without a lock or a clone, once made
/// (the first [`lookup`] of either makes both); `None` for any other handle, or
/// before. The caller checks that MPI is initialized (the hot path does, under the
/// runtime's lock it takes anyway).
#[inline]
pub fn predefined_ref(comm: MPI_Comm) -> Option<&'static CommRef> {
    let p = PREDEF.get()?;
    match comm {
        MPI_COMM_WORLD => Some(&p.0),
        MPI_COMM_SELF => Some(&p.1),
        _ => None,
    }
}

/// MPI_COMM_WORLD's and MPI_COMM_SELF's `CommRef`s, made once (a job's ranks do not
/// change; MPI cannot be initialized twice): every message looks its
/// communicator up.
fn predefined(name: &str) -> Result<&'static (CommRef, CommRef), c_int> {
    if let Some(p) = PREDEF.get() {
        runtime::check(name)?;
        return Ok(p);
    }
    let (rank, size) = runtime::with(name, |rt| Ok((rt.job.rank, rt.job.size)))?;
    Ok(PREDEF.get_or_init(|| {
        (
            CommRef {
                ctx: 0,
                rank,
                ranks: (0..size).collect(),
                inter: None,
            },
            CommRef {
                ctx: 2,
                rank: 0,
                ranks: Arc::from([rank]),
                inter: None,
            },
        )
    }))
}

/// The error handler of a created communicator (runtime.rs keeps the predefined
/// ones').
pub fn created_errhandler(comm: MPI_Comm) -> Option<MPI_Errhandler> {
    comms().table.get(comm).map(|c| c.errh)
}

/// Sets the error handler of a created communicator.
pub fn set_created_errhandler(comm: MPI_Comm, h: MPI_Errhandler) -> Result<(), c_int> {
    let mut cs = comms();
    let c = cs.table.get_mut(comm).ok_or(MPI_ERR_COMM)?;
    c.errh = h;
    Ok(())
}

/// The topology of a communicator (none for the predefined ones).
pub fn topology(comm: MPI_Comm) -> Option<Arc<Topology>> {
    comms().table.get(comm).and_then(|c| c.topo.clone())
}

/// Attaches a topology to a communicator just created.
pub fn set_topology(comm: MPI_Comm, t: Option<Arc<Topology>>) -> Result<(), c_int> {
    comms().table.get_mut(comm).ok_or(MPI_ERR_COMM)?.topo = t;
    Ok(())
}

/// A new communicator of `comm`'s ranks in the same order on a new context
/// (collective), with its topology but not its attributes or info.
pub(crate) fn dup_plain(comm: MPI_Comm, name: &str) -> Result<MPI_Comm, c_int> {
    let parent = lookup(comm, name)?;
    if parent.inter.is_some() {
        return crate::intercomm::dup(&parent, comm, name);
    }
    let ctx = agree_ctx(&parent, name)?;
    let me = parent.ranks[parent.rank as usize];
    let h = install(comm, ctx, parent.ranks.to_vec(), me)?;
    set_topology(h, topology(comm))?;
    Ok(h)
}

/// MPI_Comm_dup's body: [`dup_plain`], then the attributes through their copy
/// callbacks (a callback's error frees the new communicator and is returned).
pub(crate) fn dup_with_attrs(comm: MPI_Comm, name: &str) -> Result<MPI_Comm, c_int> {
    let h = dup_plain(comm, name)?;
    if let Err(e) = attr::copy_all(Kind::Comm, comm, h) {
        let _ = attr::delete_all(Kind::Comm, h);
        if let Some(c) = comms().table.remove(h) {
            crate::coll::shm::forget(h, &c.cref);
            pool().release(c.cref.ctx);
        }
        return Err(e);
    }
    crate::info::attach(h, crate::info::attached(comm));
    Ok(h)
}

/// `(rank, size)` in a communicator.
fn rank_size(comm: MPI_Comm, name: &str) -> Result<(c_int, c_int), c_int> {
    let c = lookup(comm, name)?;
    Ok((c.rank as c_int, c.local().len() as c_int))
}

/// Stores a new communicator of `ranks` (world ranks in communicator order; world
/// rank `me` among them) on context `ctx`, inheriting `parent`'s error handler and
/// session (`MPI_Comm_idup`, which installs before its context is agreed, passes the
/// session on itself). The
/// context goes back to the pool if the table is full.
pub(crate) fn install(
    parent: MPI_Comm,
    ctx: u32,
    ranks: Vec<u32>,
    me: u32,
) -> Result<MPI_Comm, c_int> {
    let errh = runtime::errhandler(parent).unwrap_or(MPI_ERRORS_ARE_FATAL);
    let h = install_with(errh, ctx, ranks, me)?;
    // WORLD and SELF belong to no session (and their lookup may need the runtime).
    if ctx != NO_CTX && parent != MPI_COMM_WORLD && parent != MPI_COMM_SELF {
        if let Ok(p) = lookup(parent, "") {
            crate::bsend::inherit_session(p.ctx, ctx);
        }
    }
    Ok(h)
}

/// [`install`] with error handler `errh`.
pub(crate) fn install_with(
    errh: MPI_Errhandler,
    ctx: u32,
    ranks: Vec<u32>,
    me: u32,
) -> Result<MPI_Comm, c_int> {
    let Some(rank) = ranks.iter().position(|&r| r == me) else {
        pool().release(ctx);
        return Err(MPI_ERR_INTERN);
    };
    let cref = CommRef {
        ctx,
        rank: rank as u32,
        ranks: Arc::from(ranks),
        inter: None,
    };
    install_ref(errh, cref)
}

/// Stores a communicator made elsewhere (`intercomm.rs`); its context goes back to
/// the pool if the table is full.
pub(crate) fn install_ref(errh: MPI_Errhandler, cref: CommRef) -> Result<MPI_Comm, c_int> {
    let ctx = cref.ctx;
    let c = Comm {
        cref,
        name: String::new(),
        errh,
        topo: None,
    };
    let h = comms().table.insert(c);
    h.ok_or_else(|| {
        pool().release(ctx);
        MPI_ERR_OTHER
    })
}

/// Frees a created communicator's entry and context (and an intercommunicator's
/// hidden helpers).
pub(crate) fn remove(h: MPI_Comm) -> Result<(), c_int> {
    let c = comms().table.remove(h).ok_or(MPI_ERR_COMM)?;
    // Its collectives' record (`coll_cache.rs`) goes with it.
    crate::coll::shm::forget(h, &c.cref);
    pool().release(c.cref.ctx);
    if let Some(i) = &c.cref.inter {
        for hidden in [i.lh, i.mh] {
            if let Some(x) = comms().table.remove(hidden) {
                crate::coll::shm::forget(hidden, &x.cref);
                pool().release(x.cref.ctx);
            }
        }
    }
    Ok(())
}

/// Agrees with the members of `parent` on a new context id (collective).
pub(crate) fn agree_ctx(parent: &CommRef, name: &str) -> Result<u32, c_int> {
    crate::comm_idup::agree_blocking(parent, name)
}

/// MPI_Comm_split's body: members with `color` (MPI_UNDEFINED: none), ordered by
/// `(key, parent rank)`.
pub(crate) fn split(
    comm: MPI_Comm,
    color: c_int,
    key: c_int,
    name: &str,
) -> Result<MPI_Comm, c_int> {
    if color < 0 && color != MPI_UNDEFINED {
        return Err(MPI_ERR_ARG);
    }
    let parent = lookup(comm, name)?;
    if parent.inter.is_some() {
        return crate::intercomm::split(&parent, comm, color, key, name);
    }
    let n = parent.ranks.len();
    let mut p = pt2pt(&parent);
    let mine: Vec<u8> = [color.to_le_bytes(), key.to_le_bytes()].concat();
    let mut all = vec![0u8; 8 * n];
    coll::allgather(&mut p, &mine, &mut all).map_err(|e| coll_code(&e, name))?;
    let ctx = agree_ctx(&parent, name)?;
    if color == MPI_UNDEFINED {
        pool().release(ctx);
        return Ok(MPI_COMM_NULL);
    }
    let int = |b: &[u8]| c_int::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let mut members: Vec<(c_int, usize)> = all
        .chunks_exact(8)
        .enumerate()
        .filter(|(_, e)| int(&e[..4]) == color)
        .map(|(i, e)| (int(&e[4..]), i))
        .collect();
    members.sort_unstable();
    let ranks = members.iter().map(|&(_, i)| parent.ranks[i]).collect();
    install(comm, ctx, ranks, parent.ranks[parent.rank as usize])
}

/// Writes a new communicator's handle, or MPI_COMM_NULL when the call failed.
/// # Safety
/// `out` is NULL or valid for an MPI_Comm.
pub(crate) unsafe fn put_comm(out: *mut MPI_Comm, r: Result<MPI_Comm, c_int>) -> Result<(), c_int> {
    match r {
        // SAFETY: the caller's contract.
        Ok(h) => unsafe { put(out, h) },
        Err(e) => {
            if !out.is_null() {
                // SAFETY: the caller's contract (non-NULL).
                unsafe { out.write(MPI_COMM_NULL) };
            }
            Err(e)
        }
    }
}

mpi_fn! {
    /// A new communicator of the same ranks on a new context (collective).
    fn MPI_Comm_dup / PMPI_Comm_dup(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
        let name = "MPI_Comm_dup";
        let r = if newcomm.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            dup_with_attrs(comm, name)
        };
        // SAFETY: newcomm is NULL or an MPI_Comm.
        let r = unsafe { put_comm(newcomm, r) };
        finish(comm, name, r)
    }
}

mpi_fn! {
    /// Splits by color, ordering by key then rank (collective); MPI_UNDEFINED gets
    /// MPI_COMM_NULL.
    fn MPI_Comm_split / PMPI_Comm_split(comm: MPI_Comm, color: c_int, key: c_int, newcomm: *mut MPI_Comm) -> c_int {
        let name = "MPI_Comm_split";
        let r = if newcomm.is_null() { Err(MPI_ERR_ARG) } else { split(comm, color, key, name) };
        // SAFETY: newcomm is NULL or an MPI_Comm.
        let r = unsafe { put_comm(newcomm, r) };
        finish(comm, name, r)
    }
}

mpi_fn! {
    /// By the ranks' hardware: see [`split_type_body`].
    fn MPI_Comm_split_type / PMPI_Comm_split_type(comm: MPI_Comm, split_type: c_int, key: c_int, info: MPI_Info, newcomm: *mut MPI_Comm) -> c_int {
        let name = "MPI_Comm_split_type";
        let r = if newcomm.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            split_type_body(comm, split_type, key, info, name)
        };
        // SAFETY: newcomm is NULL or an MPI_Comm.
        let r = unsafe { put_comm(newcomm, r) };
        finish(comm, name, r)
    }
}

/// The one hardware level myrix knows: the node (ranks that share memory), the
/// standard's `mpi_shared_memory` resource type.
const SHARED_MEMORY: &str = "mpi_shared_memory";

/// MPI_Comm_split_type's body. SHARED splits by node; HW_GUIDED and (MPI-4.1)
/// RESOURCE_GUIDED by the resource named in the info's `mpi_hw_resource_type`,
/// where only `mpi_shared_memory` is known (another name, or none, gives this rank
/// MPI_COMM_NULL, as the standard allows); HW_UNGUIDED by node when that is
/// smaller than `comm`, naming the level in `info`, else MPI_COMM_NULL.
fn split_type_body(
    comm: MPI_Comm,
    split_type: c_int,
    key: c_int,
    info: MPI_Info,
    name: &str,
) -> Result<MPI_Comm, c_int> {
    let node = || {
        runtime::with(name, |rt| Ok(rt.job.node_id))
            .and_then(|node| c_int::try_from(node).map_err(|_| MPI_ERR_INTERN))
    };
    match split_type {
        MPI_COMM_TYPE_SHARED => split(comm, node()?, key, name),
        MPI_COMM_TYPE_HW_GUIDED | MPI_COMM_TYPE_RESOURCE_GUIDED => {
            let asked = crate::info::pairs_or_empty(info)?
                .into_iter()
                .find(|(k, _)| k == "mpi_hw_resource_type")
                .is_some_and(|(_, v)| v == SHARED_MEMORY);
            split(comm, if asked { node()? } else { MPI_UNDEFINED }, key, name)
        }
        MPI_COMM_TYPE_HW_UNGUIDED => {
            let c = split(comm, node()?, key, name)?;
            let (mine, all) = (
                lookup(c, name)?.ranks.len(),
                lookup(comm, name)?.ranks.len(),
            );
            if mine == all {
                // Every rank of `comm` sees the same sizes here: all free theirs.
                crate::coll_hier::forget(c);
                remove(c)?;
                return Ok(MPI_COMM_NULL);
            }
            if info != MPI_INFO_NULL {
                crate::info::set(info, "mpi_hw_resource_type", SHARED_MEMORY)?;
            }
            Ok(c)
        }
        MPI_UNDEFINED => split(comm, MPI_UNDEFINED, key, name),
        _ => Err(MPI_ERR_ARG),
    }
}

mpi_fn! {
    /// The communicator of `group`'s members, in group order (collective over
    /// `comm`; `group` must be a subset of it). Non-members get MPI_COMM_NULL.
    fn MPI_Comm_create / PMPI_Comm_create(comm: MPI_Comm, group: MPI_Group, newcomm: *mut MPI_Comm) -> c_int {
        let name = "MPI_Comm_create";
        let r = if newcomm.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            lookup(comm, name).and_then(|parent| {
                let g = crate::group::get(group)?;
                if parent.inter.is_some() {
                    return crate::intercomm::create(&parent, comm, &g, name);
                }
                if !g.ranks().iter().all(|r| parent.ranks.contains(r)) {
                    return Err(MPI_ERR_GROUP);
                }
                let ctx = agree_ctx(&parent, name)?;
                let me = parent.ranks[parent.rank as usize];
                if g.rank_of(me).is_none() {
                    pool().release(ctx);
                    return Ok(MPI_COMM_NULL);
                }
                install(comm, ctx, g.ranks().to_vec(), me)
            })
        };
        // SAFETY: newcomm is NULL or an MPI_Comm.
        let r = unsafe { put_comm(newcomm, r) };
        finish(comm, name, r)
    }
}

mpi_fn! {
    /// Frees a created communicator and sets the handle to MPI_COMM_NULL; the
    /// predefined ones cannot be freed (MPI_ERR_COMM).
    fn MPI_Comm_free / PMPI_Comm_free(comm: *mut MPI_Comm) -> c_int {
        let name = "MPI_Comm_free";
        if comm.is_null() {
            return finish(MPI_COMM_WORLD, name, Err(MPI_ERR_ARG));
        }
        // SAFETY: non-NULL, an MPI_Comm by the C contract.
        let h = unsafe { comm.read() };
        let r = lookup(h, name).and_then(|_| {
            if comms().table.get(h).is_none() {
                return Err(MPI_ERR_COMM);
            }
            // Delete callbacks first: one failing leaves the communicator alive.
            attr::delete_all(Kind::Comm, h)?;
            crate::coll_hier::forget(h);
            crate::info::forget(h);
            let ctx = lookup(h, name)?.ctx;
            // A buffer attached to it is detached with it (its id may be reused).
            runtime::with(name, |rt| {
                crate::p2p::p2p(rt)?.bufs.forget_comm(ctx);
                Ok(())
            })?;
            remove(h)?;
            // SAFETY: as above.
            unsafe { put(comm, MPI_COMM_NULL) }
        });
        finish(h, name, r)
    }
}

mpi_fn! {
    /// MPI_Comm_dup, and the new communicator gets `info`'s hints instead of the
    /// old one's.
    fn MPI_Comm_dup_with_info / PMPI_Comm_dup_with_info(comm: MPI_Comm, info: MPI_Info, newcomm: *mut MPI_Comm) -> c_int {
        let name = "MPI_Comm_dup_with_info";
        let r = if newcomm.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            crate::info::pairs_or_empty(info).and_then(|p| {
                let h = dup_with_attrs(comm, name)?;
                crate::info::attach(h, p);
                Ok(h)
            })
        };
        // SAFETY: newcomm is NULL or an MPI_Comm.
        let r = unsafe { put_comm(newcomm, r) };
        finish(comm, name, r)
    }
}
