//! MPI_Comm_create_group: a communicator made by the members of a group alone (MPI-3),
//! collective over the group, not over its parent.
//!
//! The members agree on a context id as every communicator creation does
//! (`myrix_mpi::commctx`: the OR of their used-id bitmaps, the lowest id free on all),
//! but among themselves: over the parent's collective context with the tags moved into
//! a range of the call's tag ([`crate::coll_glue::pt2pt_subgroup`]), so the parent's
//! own collectives, and other groups creating at the same time with other tags, are
//! not disturbed. A process outside the group makes nothing and waits for nobody: it
//! gets MPI_COMM_NULL at once, as the standard says. Must never block a non-member or
//! take a message of the parent's collectives.

use crate::abi::*;
use crate::coll::args::coll_code;
use crate::comm::{install, lookup, put_comm, TAG_UB};
use crate::ffi::{finish, mpi_fn};
use std::os::raw::c_int;
use std::sync::Arc;

/// The body: the new communicator, or MPI_COMM_NULL for a process not in `group`.
fn create_group(
    comm: MPI_Comm,
    group: MPI_Group,
    tag: c_int,
    name: &str,
) -> Result<MPI_Comm, c_int> {
    let parent = lookup(comm, name)?;
    if parent.inter.is_some() {
        return Err(MPI_ERR_COMM);
    }
    if !(0..=TAG_UB).contains(&tag) {
        return Err(MPI_ERR_TAG);
    }
    let g = crate::group::get(group)?;
    if !g.ranks().iter().all(|r| parent.ranks.contains(r)) {
        return Err(MPI_ERR_GROUP);
    }
    let me = parent.ranks[parent.rank as usize];
    let Some(my_index) = g.rank_of(me) else {
        return Ok(MPI_COMM_NULL);
    };
    let ranks: Arc<[u32]> = Arc::from(g.ranks());
    let mut p = crate::coll_glue::pt2pt_subgroup(&parent, ranks, my_index, tag as u32);
    let ctx = crate::comm::pool()
        .allocate(&mut p)
        .map_err(|e| coll_code(&e, name))?;
    install(comm, ctx, g.ranks().to_vec(), me)
}

mpi_fn! {
    /// The communicator of `group`'s members, in group order; collective over the
    /// group only (`tag` tells concurrent creations apart). Non-members get
    /// MPI_COMM_NULL without communicating.
    fn MPI_Comm_create_group / PMPI_Comm_create_group(comm: MPI_Comm, group: MPI_Group, tag: c_int, newcomm: *mut MPI_Comm) -> c_int {
        let name = "MPI_Comm_create_group";
        let r = if newcomm.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            create_group(comm, group, tag, name)
        };
        // SAFETY: newcomm is NULL or an MPI_Comm.
        let r = unsafe { put_comm(newcomm, r) };
        finish(comm, name, r)
    }
}

/// MPI_Comm_create_from_group's body (`session.rs`): MPI_Comm_create_group over
/// MPI_COMM_WORLD (every group the job can name is one of its subsets), the tag a
/// hash of `stringtag`.
pub(crate) fn create_from_group(
    group: MPI_Group,
    stringtag: &[u8],
    name: &str,
) -> Result<MPI_Comm, c_int> {
    // FNV-1a, folded into the valid tags.
    let h = stringtag.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    let tag = (h % (TAG_UB as u32 + 1)) as c_int;
    create_group(MPI_COMM_WORLD, group, tag, name)
}
