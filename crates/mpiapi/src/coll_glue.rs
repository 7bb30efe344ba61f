//! The one seam between the C collectives (`coll.rs`), communicator creation
//! (`comm.rs`) and point-to-point: [`pt2pt`] gives the blocking [`Pt2Pt`] of a
//! communicator's *collective* context (`ctx + 1`).
//!
//! Until the point-to-point engine (`myrix_mpi::p2p`) is wired in, a communicator
//! of one rank works (messages to itself queue up) and any other fails with
//! `CollError::Unavailable`. THE INTEGRATOR REPLACES [`pt2pt`]'s body with one
//! over the engine (send/recv/sendrecv on `comm.ctx + 1`, ranks translated through
//! `comm.ranks`) and deletes [`barrier_fallback`].

use crate::comm::CommRef;
use crate::runtime;
use myrix_mpi::coll::testing::SelfPt2Pt;
use myrix_mpi::coll::{CollError, Pt2Pt};
use std::os::raw::c_int;

/// A communicator's point-to-point for its collectives.
pub struct Glue {
    rank: usize,
    size: usize,
    /// Size 1: the rank talks only to itself.
    single: SelfPt2Pt,
}

/// The collectives' point-to-point over `comm`'s collective context.
pub fn pt2pt(comm: &CommRef) -> impl Pt2Pt {
    Glue {
        rank: comm.rank as usize,
        size: comm.ranks.len(),
        single: SelfPt2Pt::new(),
    }
}

impl Glue {
    fn unavailable(&self) -> CollError {
        CollError::Unavailable(format!(
            "collectives over {} ranks need the point-to-point engine",
            self.size
        ))
    }
}

impl Pt2Pt for Glue {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn send(&mut self, dest: usize, tag: i32, data: &[u8]) -> Result<(), CollError> {
        if self.size != 1 {
            return Err(self.unavailable());
        }
        self.single.send(dest, tag, data)
    }
    fn recv(&mut self, src: usize, tag: i32, buf: &mut [u8]) -> Result<usize, CollError> {
        if self.size != 1 {
            return Err(self.unavailable());
        }
        self.single.recv(src, tag, buf)
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
        if self.size != 1 {
            return Err(self.unavailable());
        }
        self.single.sendrecv(dest, stag, data, src, rtag, buf)
    }
}

/// Until point-to-point is wired in: MPI_Barrier on a communicator of every world
/// rank goes through the launcher's PMI fence (`None`: no fallback for `comm`).
pub fn barrier_fallback(comm: &CommRef, name: &str) -> Option<Result<(), c_int>> {
    runtime::with(name, |rt| {
        if comm.ranks.len() != rt.job.size as usize {
            return Ok(None);
        }
        Ok(Some(rt.job.barrier().map_err(|e| {
            eprintln!("myrix MPI: {name}: {e}");
            crate::abi::MPI_ERR_OTHER
        })))
    })
    .unwrap_or_else(|e| Some(Err(e)))
}
