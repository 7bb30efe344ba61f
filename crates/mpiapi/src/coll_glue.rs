//! The one seam between the C collectives (`coll.rs`), communicator creation
//! (`comm.rs`) and point-to-point: [`pt2pt`] gives the blocking [`Pt2Pt`] of a
//! communicator's *collective* context (`ctx + 1`), over the world's engine, ranks
//! translated through the communicator's rank table.
//!
//! Each call takes the runtime's lock for its own duration only, so a collective
//! never holds it while waiting for a peer across several calls.

use crate::comm::CommRef;
use crate::p2p::P2p;
use crate::runtime;
use myrix_mpi::coll::{CollError, Pt2Pt};
use myrix_mpi::p2p::SendMode;
use std::sync::Arc;

/// A communicator's point-to-point for its collectives.
pub struct Glue {
    rank: usize,
    ctx: u32,
    ranks: Arc<[u32]>,
    /// Added to every tag: 0, or a range of negative tags of its own (a subgroup's
    /// agreement, [`pt2pt_subgroup`]).
    tag_base: i32,
}

/// The collectives' point-to-point over `comm`'s collective context.
pub fn pt2pt(comm: &CommRef) -> Glue {
    Glue {
        rank: comm.rank as usize,
        ctx: comm.ctx + 1,
        ranks: comm.ranks.clone(),
        tag_base: 0,
    }
}

/// The collectives' point-to-point among `ranks` (world ranks; this process is
/// `rank` of them), a subgroup of `comm`, on `comm`'s collective context with every
/// tag moved into a negative range of `key`'s own: no collective of `comm` (tags
/// 1 to 11 and the nonblocking ones, all positive) and no subgroup agreement of
/// another key (below 2^26 apart) can take its messages. For MPI_Comm_create_group.
pub fn pt2pt_subgroup(comm: &CommRef, ranks: Arc<[u32]>, rank: usize, key: u32) -> Glue {
    Glue {
        rank,
        ctx: comm.ctx + 1,
        ranks,
        tag_base: i32::MIN + (key % (1 << 26)) as i32 * 32,
    }
}

impl Glue {
    fn world(&self, r: usize) -> Result<u32, CollError> {
        self.ranks
            .get(r)
            .copied()
            .ok_or_else(|| CollError::Args(format!("rank {r} is not in the communicator")))
    }

    fn engine<T>(&self, f: impl FnOnce(&mut P2p) -> Result<T, CollError>) -> Result<T, CollError> {
        let mut out = None;
        runtime::with("a collective", |rt| {
            let p = rt.p2p.as_mut().ok_or(crate::abi::MPI_ERR_INTERN)?;
            out = Some(f(p));
            Ok(())
        })
        .map_err(|_| CollError::Transport("the library is not initialized".into()))?;
        out.unwrap_or_else(|| Err(CollError::Transport("no engine".into())))
    }
}

impl Pt2Pt for Glue {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.ranks.len()
    }
    fn send(&mut self, dest: usize, tag: i32, data: &[u8]) -> Result<(), CollError> {
        let d = self.world(dest)?;
        let (ctx, tag) = (self.ctx, tag.wrapping_add(self.tag_base));
        self.engine(|p| {
            p.engine
                .send(d, ctx, tag, data, SendMode::Standard)
                .map_err(CollError::from)
        })
    }
    fn recv(&mut self, src: usize, tag: i32, buf: &mut [u8]) -> Result<usize, CollError> {
        let s = self.world(src)?;
        let (ctx, tag) = (self.ctx, tag.wrapping_add(self.tag_base));
        self.engine(|p| {
            p.engine
                .recv(Some(s), ctx, Some(tag), buf)
                .map_err(CollError::from)
                .and_then(CollError::received)
        })
    }
    fn sendrecv(
        &mut self,
        dest: usize,
        stag: i32,
        data: &[u8],
        src: usize,
        rtag: i32,
        buf: &mut [u8],
    ) -> Result<usize, CollError> {
        let d = self.world(dest)?;
        let s = self.world(src)?;
        let ctx = self.ctx;
        let (stag, rtag) = (
            stag.wrapping_add(self.tag_base),
            rtag.wrapping_add(self.tag_base),
        );
        self.engine(|p| {
            p.engine
                .sendrecv(d, stag, data, Some(s), Some(rtag), buf, ctx)
                .map_err(CollError::from)
                .and_then(CollError::received)
        })
    }
}
