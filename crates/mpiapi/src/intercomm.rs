//! Intercommunicators: MPI_Intercomm_create and _merge, MPI_Comm_test_inter,
//! MPI_Comm_remote_size/_group, and what MPI_Comm_dup, _split, _create and
//! _compare do when given one.
//!
//! An intercommunicator's `CommRef` has `ranks` = the world ranks of the REMOTE
//! group, so point-to-point (which addresses `ranks`) needs nothing special, and
//! [`Inter`] holds the local group plus two hidden intracommunicators made with
//! it: `lh` over the local group and `mh` over both groups (the group with the
//! lower leader world rank first). Blocking collectives (`intercoll.rs`) and every
//! later creation (dup, split, create, merge) run over those, so only
//! MPI_Intercomm_create has to agree on a context id without a communicator
//! spanning both groups: each group ORs its members' used-id bitmaps over the
//! local communicator, the leaders swap theirs (and their groups' world ranks)
//! over the peer communicator with the caller's tag, and each leader broadcasts the
//! result in its group. Both groups then take the same lowest free id.
//!
//! This module never holds the communicator table's lock while communicating.

use crate::abi::*;
use crate::coll::args::coll_code;
use crate::coll_glue::pt2pt;
use crate::comm::{self, lookup, CommRef};
use crate::ffi::{finish, mpi_fn, put};
use crate::runtime;
use myrix_mpi::coll::{self, ReduceOp};
use myrix_mpi::commctx::CAPACITY;
use myrix_mpi::group::{Compare, Group};
use myrix_mpi::p2p::P2pError;
use std::os::raw::c_int;
use std::sync::Arc;

/// What an intercommunicator has besides its remote group.
#[derive(Debug)]
pub struct Inter {
    /// The world ranks of the local group, in local rank order.
    pub local: Arc<[u32]>,
    /// Hidden intracommunicator of the local group (errors return).
    pub lh: MPI_Comm,
    /// Hidden intracommunicator of both groups (errors return).
    pub mh: MPI_Comm,
    /// Whether the local group comes first in `mh`.
    pub local_first: bool,
}

impl Inter {
    /// The rank in `mh` of remote rank `q`.
    pub fn mr(&self, q: usize) -> c_int {
        (if self.local_first {
            self.local.len() + q
        } else {
            q
        }) as c_int
    }
}

/// Bytes of a used-id bitmap.
pub(crate) const BITMAP: usize = CAPACITY / 8;

/// The OR of the local group's used-id bitmaps (collective over `lp`'s group), the
/// first step of agreeing on ids with another group. The caller holds `pool`'s lock
/// for the whole agreement.
pub(crate) fn local_used_ids(
    lp: &mut crate::coll_glue::Glue,
    pool: &myrix_mpi::commctx::ContextPool,
    name: &str,
) -> Result<Vec<u8>, c_int> {
    let mut or = |i: &[u8], o: &mut [u8]| o.iter_mut().zip(i).for_each(|(o, i)| *o |= *i);
    let mut lor = vec![0u8; BITMAP];
    let mut op = ReduceOp {
        op: &mut or,
        commutative: true,
    };
    coll::allreduce(lp, pool.bitmap(), &mut lor, &mut op).map_err(|e| coll_code(&e, name))?;
    Ok(lor)
}

/// Whether `comm` is an intercommunicator (the predefined ones never are).
pub fn is_inter(comm: MPI_Comm) -> bool {
    comm != MPI_COMM_WORLD && comm != MPI_COMM_SELF && comm::comms_is_inter(comm)
}

fn u32s(b: &[u8]) -> impl Iterator<Item = u32> + '_ {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// Makes the intercommunicator of `local` and `remote` (world ranks; this process,
/// world rank `me`, in `local`) once its hidden both-groups communicator `mh`
/// exists: agrees on the new contexts over `mh` (collective over both groups).
pub(crate) fn build(
    errh: MPI_Errhandler,
    local: Vec<u32>,
    remote: Vec<u32>,
    local_first: bool,
    mh: MPI_Comm,
    name: &str,
) -> Result<MPI_Comm, c_int> {
    let m = lookup(mh, name)?;
    let me = m.ranks[m.rank as usize];
    let ctx = comm::agree_ctx(&m, name)?;
    let lctx = comm::agree_ctx(&m, name)?;
    let lh = comm::install_with(MPI_ERRORS_RETURN, lctx, local.clone(), me)?;
    let rank = local.iter().position(|&r| r == me).ok_or(MPI_ERR_INTERN)? as u32;
    let inter = Inter {
        local: local.into(),
        lh,
        mh,
        local_first,
    };
    comm::install_ref(
        errh,
        CommRef {
            ctx,
            rank,
            ranks: remote.into(),
            inter: Some(Arc::new(inter)),
        },
    )
}

/// Installs the hidden both-groups communicator on `ctx` (already agreed).
pub(crate) fn merged(
    ctx: u32,
    local: &[u32],
    remote: &[u32],
    local_first: bool,
    me: u32,
) -> Result<MPI_Comm, c_int> {
    let ranks = if local_first {
        [local, remote].concat()
    } else {
        [remote, local].concat()
    };
    comm::install_with(MPI_ERRORS_RETURN, ctx, ranks, me)
}

pub(crate) fn errh(comm: MPI_Comm) -> MPI_Errhandler {
    runtime::errhandler(comm).unwrap_or(MPI_ERRORS_ARE_FATAL)
}

/// The leaders' swap over the peer communicator's point-to-point context.
fn swap(
    peer: &CommRef,
    leader: u32,
    tag: c_int,
    data: &[u8],
    buf: &mut [u8],
) -> Result<usize, c_int> {
    let ctx = peer.ctx;
    let mut out = Err(MPI_ERR_INTERN);
    runtime::with("MPI_Intercomm_create", |rt| {
        let p = rt.p2p.as_mut().ok_or(MPI_ERR_INTERN)?;
        out = match p
            .engine
            .sendrecv(leader, tag, data, Some(leader), Some(tag), buf, ctx)
        {
            Ok(s) => match s.error {
                None => Ok(s.len),
                Some(P2pError::Truncated { .. }) => Err(MPI_ERR_TRUNCATE),
                Some(_) => Err(MPI_ERR_OTHER),
            },
            Err(_) => Err(MPI_ERR_OTHER),
        };
        Ok(())
    })?;
    out
}

/// The context MPI_Intercomm_create_from_groups talks on (and `+ 1`): no
/// communicator gets it (the pool's ids stay far below).
const FROM_GROUPS_CTX: u32 = u32::MAX - 1;

/// MPI_Intercomm_create_from_groups's body: MPI_Intercomm_create's agreement with
/// the local group and the remote leader reached on a context of its own, the tag
/// a hash of `stringtag`.
fn from_groups(
    local: &Group,
    local_leader: c_int,
    remote: &Group,
    remote_leader: c_int,
    stringtag: &[u8],
    errh: MPI_Errhandler,
    name: &str,
) -> Result<MPI_Comm, c_int> {
    let me = runtime::with(name, |rt| Ok(rt.job.rank))?;
    let rank = local.rank_of(me).ok_or(MPI_ERR_GROUP)? as u32;
    let lc = CommRef {
        ctx: FROM_GROUPS_CTX,
        rank,
        ranks: local.ranks().to_vec().into(),
        inter: None,
    };
    let peer = CommRef {
        ctx: FROM_GROUPS_CTX,
        rank: 0,
        ranks: remote.ranks().to_vec().into(),
        inter: None,
    };
    // FNV-1a, folded to a non-negative tag.
    let h = stringtag.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    let tag = (h & 0x3fff_ffff) as c_int;
    create_inter(lc, local_leader, &peer, remote_leader, tag, errh, name)
}

/// MPI_Intercomm_create's body over `lc` (the local communicator) and `peer`.
fn create_inter(
    lc: CommRef,
    local_leader: c_int,
    peer: &CommRef,
    remote_leader: c_int,
    tag: c_int,
    errh: MPI_Errhandler,
    name: &str,
) -> Result<MPI_Comm, c_int> {
    if lc.inter.is_some() {
        return Err(MPI_ERR_COMM);
    }
    let nl = lc.ranks.len();
    let ll = usize::try_from(local_leader)
        .ok()
        .filter(|&l| l < nl)
        .ok_or(MPI_ERR_RANK)?;
    let world = runtime::with(name, |rt| Ok(rt.job.size as usize))?;
    let me = lc.ranks[lc.rank as usize];
    let mut lp = pt2pt(&lc);
    // The whole agreement runs under the pool's lock, like comm.rs's.
    let mut pool = comm::pool();
    let lor = local_used_ids(&mut lp, &pool, name)?;
    // The leader's broadcast: status, local_first, remote size, remote world ranks
    // (room for a whole world), the OR of both groups' bitmaps.
    let len = 12 + 4 * world + BITMAP;
    let mut msg = vec![0u8; len];
    if lc.rank as usize == ll {
        let r = (|| {
            let rl = usize::try_from(remote_leader)
                .ok()
                .and_then(|r| peer.ranks.get(r).copied())
                .ok_or(MPI_ERR_RANK)?;
            if rl == me || tag < 0 {
                return Err(if tag < 0 { MPI_ERR_TAG } else { MPI_ERR_RANK });
            }
            let mut out = (nl as u32).to_le_bytes().to_vec();
            lc.ranks.iter().for_each(|r| out.extend(r.to_le_bytes()));
            out.extend(&lor);
            let mut back = vec![0u8; 4 + 4 * world + BITMAP];
            let n = swap(peer, rl, tag, &out, &mut back)?;
            let nr = u32s(&back[..4]).next().unwrap_or(0) as usize;
            if n != 4 + 4 * nr + BITMAP || nr == 0 || nr > world {
                return Err(MPI_ERR_INTERN);
            }
            msg[4..8].copy_from_slice(&u32::from(me < rl).to_le_bytes());
            msg[8..12 + 4 * nr].copy_from_slice(&back[..4 + 4 * nr]);
            let bits = &back[4 + 4 * nr..n];
            for (o, (a, b)) in msg[12 + 4 * world..].iter_mut().zip(lor.iter().zip(bits)) {
                *o = a | b;
            }
            Ok(())
        })();
        if let Err(code) = r {
            msg[..4].copy_from_slice(&(code as u32).to_le_bytes());
        }
    }
    coll::bcast(&mut lp, ll, &mut msg).map_err(|e| coll_code(&e, name))?;
    let head: Vec<u32> = u32s(&msg[..12]).collect();
    if head[0] != 0 {
        return Err(head[0] as c_int);
    }
    let (local_first, nr) = (head[1] != 0, head[2] as usize);
    let remote: Vec<u32> = u32s(&msg[12..12 + 4 * nr]).collect();
    let mctx = pool
        .take_free(&msg[12 + 4 * world..])
        .ok_or(MPI_ERR_OTHER)?;
    drop(pool);
    let mh = merged(mctx, &lc.ranks, &remote, local_first, me)?;
    build(errh, lc.ranks.to_vec(), remote, local_first, mh, name)
}

/// MPI_Comm_dup of an intercommunicator.
pub fn dup(c: &CommRef, comm: MPI_Comm, name: &str) -> Result<MPI_Comm, c_int> {
    let i = c.inter.as_ref().ok_or(MPI_ERR_COMM)?;
    let m = lookup(i.mh, name)?;
    let me = m.ranks[m.rank as usize];
    let mctx = comm::agree_ctx(&m, name)?;
    let mh = comm::install_with(MPI_ERRORS_RETURN, mctx, m.ranks.to_vec(), me)?;
    build(
        errh(comm),
        i.local.to_vec(),
        c.ranks.to_vec(),
        i.local_first,
        mh,
        name,
    )
}

/// MPI_Comm_split of an intercommunicator: the members of each color in the local
/// group face those of the same color in the remote group (MPI_COMM_NULL when
/// either side has none).
pub fn split(
    c: &CommRef,
    comm: MPI_Comm,
    color: c_int,
    key: c_int,
    name: &str,
) -> Result<MPI_Comm, c_int> {
    let i = c.inter.as_ref().ok_or(MPI_ERR_COMM)?;
    let m = lookup(i.mh, name)?;
    let n = m.ranks.len();
    let nl = i.local.len();
    let mine: Vec<u8> = [color.to_le_bytes(), key.to_le_bytes()].concat();
    let mut all = vec![0u8; 8 * n];
    coll::allgather(&mut pt2pt(&m), &mine, &mut all).map_err(|e| coll_code(&e, name))?;
    let mctx = comm::agree_ctx(&m, name)?;
    let int = |b: &[u8]| c_int::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let is_local = |mi: usize| if i.local_first { mi < nl } else { mi >= n - nl };
    let pick = |local: bool| {
        let mut v: Vec<(c_int, usize)> = all
            .chunks_exact(8)
            .enumerate()
            .filter(|&(mi, e)| is_local(mi) == local && int(&e[..4]) == color)
            .map(|(mi, e)| (int(&e[4..]), mi))
            .collect();
        v.sort_unstable();
        v.iter().map(|&(_, mi)| m.ranks[mi]).collect::<Vec<u32>>()
    };
    let (local, remote) = (pick(true), pick(false));
    if color == MPI_UNDEFINED || local.is_empty() || remote.is_empty() {
        comm::pool().release(mctx);
        return Ok(MPI_COMM_NULL);
    }
    let me = m.ranks[m.rank as usize];
    let mh = merged(mctx, &local, &remote, i.local_first, me)?;
    build(errh(comm), local, remote, i.local_first, mh, name)
}

/// MPI_Comm_create of an intercommunicator: `g` (a subgroup of the local group)
/// faces the remote group's chosen subgroup.
pub fn create(c: &CommRef, comm: MPI_Comm, g: &Group, name: &str) -> Result<MPI_Comm, c_int> {
    let i = c.inter.as_ref().ok_or(MPI_ERR_COMM)?;
    if !g.ranks().iter().all(|r| i.local.contains(r)) {
        return Err(MPI_ERR_GROUP);
    }
    let me = i.local[c.rank as usize];
    match g.rank_of(me) {
        Some(pos) => split(c, comm, 0, pos as c_int, name),
        None => split(c, comm, MPI_UNDEFINED, 0, name),
    }
}

fn group_cmp(a: &[u32], b: &[u32]) -> Result<Compare, c_int> {
    let ga = Group::new(a.to_vec()).map_err(|_| MPI_ERR_INTERN)?;
    let gb = Group::new(b.to_vec()).map_err(|_| MPI_ERR_INTERN)?;
    Ok(ga.compare(&gb))
}

/// MPI_Comm_compare when either is an intercommunicator (not the same handle).
pub fn compare(a: &CommRef, b: &CommRef) -> Result<c_int, c_int> {
    if a.inter.is_none() || b.inter.is_none() {
        return Ok(MPI_UNEQUAL);
    }
    let l = group_cmp(a.local(), b.local())?;
    let r = group_cmp(&a.ranks, &b.ranks)?;
    Ok(match (l, r) {
        (Compare::Ident, Compare::Ident) => MPI_CONGRUENT,
        (Compare::Unequal, _) | (_, Compare::Unequal) => MPI_UNEQUAL,
        _ => MPI_SIMILAR,
    })
}

/// MPI_Intercomm_merge's body: the group that said `high` goes last; when both
/// said the same, the `mh` order.
fn merge(comm: MPI_Comm, high: c_int, name: &str) -> Result<MPI_Comm, c_int> {
    let c = lookup(comm, name)?;
    let i = c.inter.as_ref().ok_or(MPI_ERR_COMM)?;
    let m = lookup(i.mh, name)?;
    let mut all = vec![0u8; m.ranks.len()];
    coll::allgather(&mut pt2pt(&m), &[u8::from(high != 0)], &mut all)
        .map_err(|e| coll_code(&e, name))?;
    let mine = all[m.rank as usize];
    let theirs = all[i.mr(0) as usize];
    let local_first = if mine == theirs {
        i.local_first
    } else {
        mine == 0
    };
    let ranks = if local_first {
        [&i.local[..], &c.ranks[..]].concat()
    } else {
        [&c.ranks[..], &i.local[..]].concat()
    };
    let ctx = comm::agree_ctx(&m, name)?;
    comm::install(comm, ctx, ranks, m.ranks[m.rank as usize])
}

mpi_fn! {
    /// Builds an intercommunicator from two disjoint groups (collective over both
    /// local communicators; the leaders talk over `peer_comm` with `tag`).
    fn MPI_Intercomm_create / PMPI_Intercomm_create(local_comm: MPI_Comm, local_leader: c_int, peer_comm: MPI_Comm, remote_leader: c_int, tag: c_int, newintercomm: *mut MPI_Comm) -> c_int {
        let name = "MPI_Intercomm_create";
        let r = if newintercomm.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            lookup(local_comm, name)
                .and_then(|lc| {
                    // The peer matters at the local leader only.
                    let peer = if lc.rank as c_int == local_leader {
                        lookup(peer_comm, name)?
                    } else {
                        lc.clone()
                    };
                    create_inter(lc, local_leader, &peer, remote_leader, tag, errh(local_comm), name)
                })
                // SAFETY: newintercomm is an MPI_Comm (checked non-NULL).
                .and_then(|h| unsafe { put(newintercomm, h) })
        };
        finish(local_comm, name, r)
    }
}

mpi_fn! {
    /// The intracommunicator of both groups; the group passing `high` true goes
    /// last.
    fn MPI_Intercomm_merge / PMPI_Intercomm_merge(intercomm: MPI_Comm, high: c_int, newintracomm: *mut MPI_Comm) -> c_int {
        let name = "MPI_Intercomm_merge";
        let r = if newintracomm.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: newintracomm is an MPI_Comm (checked non-NULL).
            merge(intercomm, high, name).and_then(|h| unsafe { put(newintracomm, h) })
        };
        finish(intercomm, name, r)
    }
}

mpi_fn! {
    fn MPI_Comm_test_inter / PMPI_Comm_test_inter(comm: MPI_Comm, flag: *mut c_int) -> c_int {
        let name = "MPI_Comm_test_inter";
        let r = lookup(comm, name).and_then(|c| {
            // SAFETY: flag is NULL or an int.
            unsafe { put(flag, c_int::from(c.inter.is_some())) }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Comm_remote_size / PMPI_Comm_remote_size(comm: MPI_Comm, size: *mut c_int) -> c_int {
        let name = "MPI_Comm_remote_size";
        let r = lookup(comm, name).and_then(|c| {
            if c.inter.is_none() {
                return Err(MPI_ERR_COMM);
            }
            // SAFETY: size is NULL or an int.
            unsafe { put(size, c.ranks.len() as c_int) }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Comm_remote_group / PMPI_Comm_remote_group(comm: MPI_Comm, group: *mut MPI_Group) -> c_int {
        let name = "MPI_Comm_remote_group";
        let r = lookup(comm, name).and_then(|c| {
            if c.inter.is_none() {
                return Err(MPI_ERR_COMM);
            }
            if group.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let g = Group::new(c.ranks.to_vec()).map_err(|_| MPI_ERR_INTERN)?;
            let h = crate::group::insert(g)?;
            // SAFETY: group is an MPI_Group (checked non-NULL).
            unsafe { put(group, h) }
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    /// MPI_Intercomm_create without communicators: the members of `local_group`
    /// and `remote_group` (disjoint) call it with the same `stringtag`. `info` is
    /// ignored; the new intercommunicator gets `errhandler`.
    fn MPI_Intercomm_create_from_groups / PMPI_Intercomm_create_from_groups(local_group: MPI_Group, local_leader: c_int, remote_group: MPI_Group, remote_leader: c_int, stringtag: *const std::os::raw::c_char, _info: MPI_Info, errhandler: MPI_Errhandler, newintercomm: *mut MPI_Comm) -> c_int {
        let name = "MPI_Intercomm_create_from_groups";
        let r = if newintercomm.is_null() || stringtag.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            // SAFETY: a NUL-terminated string by the C contract.
            let tag = unsafe { std::ffi::CStr::from_ptr(stringtag) }.to_bytes();
            crate::group::get(local_group)
                .and_then(|l| Ok((l, crate::group::get(remote_group)?)))
                .and_then(|(l, r)| from_groups(&l, local_leader, &r, remote_leader, tag, errhandler, name))
                // SAFETY: newintercomm is an MPI_Comm (checked non-NULL).
                .and_then(|h| unsafe { put(newintercomm, h) })
        };
        finish(MPI_COMM_WORLD, name, r)
    }
}

extern "C" {
    fn PMPI_Barrier(comm: MPI_Comm) -> c_int;
    fn PMPI_Comm_free(comm: *mut MPI_Comm) -> c_int;
}

mpi_fn! {
    /// Frees a communicator once every rank of it has called (collective): a
    /// barrier over it, which every pending message to this rank precedes (the
    /// non-overtaking rule), then MPI_Comm_free. The predefined communicators are
    /// refused (MPI_ERR_COMM), as by MPI_Comm_free.
    fn MPI_Comm_disconnect / PMPI_Comm_disconnect(comm: *mut MPI_Comm) -> c_int {
        if comm.is_null() {
            return finish(MPI_COMM_WORLD, "MPI_Comm_disconnect", Err(MPI_ERR_ARG));
        }
        // SAFETY: non-NULL, an MPI_Comm by the C contract.
        let h = unsafe { comm.read() };
        if matches!(h, MPI_COMM_WORLD | MPI_COMM_SELF | MPI_COMM_NULL) {
            return finish(h, "MPI_Comm_disconnect", Err(MPI_ERR_COMM));
        }
        // SAFETY: a communicator handle; the callee checks it.
        let rc = unsafe { PMPI_Barrier(h) };
        if rc != MPI_SUCCESS {
            return rc;
        }
        // Processes of another job (accept/connect/join) end on their own now.
        if let Ok(c) = lookup(h, "MPI_Comm_disconnect") {
            if c.inter.is_some() {
                crate::dynproc::retire(&c, h);
            }
        }
        // SAFETY: the caller's handle pointer.
        unsafe { PMPI_Comm_free(comm) }
    }
}
