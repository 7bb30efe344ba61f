//! Blocking collectives over any point-to-point layer ([`Pt2Pt`]): barrier, bcast,
//! reduce, allreduce, gather(v), scatter(v), allgather(v), alltoall(v),
//! reduce_scatter(_block), scan, exscan.
//!
//! Everything here works on *packed bytes*: the C layer (or a Rust program) packs
//! typed data before and unpacks after; counts and displacements are in bytes.
//! Reductions are a [`ReduceOp`]: a function `inout = in op inout` (the shape of
//! MPI_User_function) called on whole elements only, and whether it commutes. For a
//! non-commutative op every algorithm combines in rank order, so the result is
//! `((r0 op r1) op r2) …` exactly.
//!
//! A [`Pt2Pt`] is bound to one communicator's *collective* context (`ctx + 1`), so
//! collective traffic never matches a program's receives. Collectives of one
//! communicator are called in the same order on every rank and each algorithm uses
//! its own fixed tag ([`tags`]); point-to-point's non-overtaking rule keeps
//! consecutive calls apart.
//!
//! This module never allocates per element, never blocks except in the `Pt2Pt`
//! calls, and never panics on bad arguments: roots, counts and buffer lengths are
//! checked and refused with a [`CollError`] before any message is sent.

mod alltoall;
mod barrier;
mod bcast;
mod gather;
pub mod nb;
mod reduce;
mod scan;
pub mod shm;
pub mod testing;

pub use alltoall::{alltoall, alltoallv};
pub use barrier::barrier;
pub use bcast::bcast;
pub use gather::{allgather, allgatherv, gather, gatherv, scatter, scatterv};
pub use reduce::{allreduce, reduce, reduce_scatter, reduce_scatter_block};
pub use scan::{exscan, scan};

/// Blocking point-to-point in one communicator and one context: ranks are the
/// communicator's.
pub trait Pt2Pt {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    fn send(&mut self, dest: usize, tag: i32, data: &[u8]) -> Result<(), CollError>;
    /// Receives into `buf`; returns the bytes received (a longer message is an error).
    fn recv(&mut self, src: usize, tag: i32, buf: &mut [u8]) -> Result<usize, CollError>;
    /// Sends and receives at once (never deadlocks against a matching sendrecv).
    #[allow(clippy::too_many_arguments)]
    fn sendrecv(
        &mut self,
        dest: usize,
        stag: i32,
        data: &[u8],
        src: usize,
        rtag: i32,
        buf: &mut [u8],
    ) -> Result<usize, CollError>;
}

/// Why a collective failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CollError {
    #[error("root {root} is not a rank of a communicator of size {size}")]
    Root { root: usize, size: usize },
    /// Counts, displacements or buffer lengths that do not fit (MPI_ERR_COUNT,
    /// MPI_ERR_BUFFER, MPI_ERR_ARG on the C side).
    #[error("invalid argument: {0}")]
    Args(String),
    /// A message of another length than this rank's arguments expect (the ranks'
    /// arguments disagree).
    #[error("expected {expected} bytes from rank {from}, got {got}")]
    Length {
        from: usize,
        expected: usize,
        got: usize,
    },
    /// A message longer than the buffer.
    #[error("message truncated: {len} bytes into {cap}")]
    Truncated { len: usize, cap: usize },
    /// The point-to-point layer failed (a peer lost…).
    #[error("point-to-point: {0}")]
    Transport(String),
    /// No point-to-point layer is available for this communicator yet.
    #[error("point-to-point not yet available: {0}")]
    Unavailable(String),
}

impl From<crate::p2p::P2pError> for CollError {
    /// A point-to-point failure under a collective: truncation keeps its sizes.
    fn from(e: crate::p2p::P2pError) -> CollError {
        match e {
            crate::p2p::P2pError::Truncated { len, cap } => CollError::Truncated { len, cap },
            e => CollError::Transport(e.to_string()),
        }
    }
}

impl CollError {
    /// A completed receive's byte count, or the error its status carries.
    pub fn received(s: crate::p2p::Status) -> Result<usize, CollError> {
        match s.error {
            Some(e) => Err(e.into()),
            None => Ok(s.len),
        }
    }
}

/// A reduction: `op(in, inout)` sets `inout = in op inout`, element-wise, on slices
/// holding whole elements; `commutative` says whether `a op b == b op a`.
pub struct ReduceOp<'a> {
    pub op: &'a mut dyn FnMut(&[u8], &mut [u8]),
    pub commutative: bool,
}

impl ReduceOp<'_> {
    /// `inout = input op inout`.
    pub(crate) fn apply(&mut self, input: &[u8], inout: &mut [u8]) {
        (self.op)(input, inout)
    }

    /// `acc = acc op later` (the left operand stays on the left): `later` is the
    /// scratch and is left unspecified.
    pub(crate) fn apply_right(&mut self, acc: &mut Vec<u8>, later: &mut Vec<u8>) {
        (self.op)(acc, later);
        std::mem::swap(acc, later);
    }
}

/// The fixed tag of each algorithm on the collective context.
pub mod tags {
    pub const BARRIER: i32 = 1;
    pub const BCAST: i32 = 2;
    pub const REDUCE: i32 = 3;
    pub const ALLREDUCE: i32 = 4;
    pub const GATHER: i32 = 5;
    pub const SCATTER: i32 = 6;
    pub const ALLGATHER: i32 = 7;
    pub const ALLTOALL: i32 = 8;
    pub const SCAN: i32 = 9;
    pub const EXSCAN: i32 = 10;
    /// Communicator creation (context agreement, split's colors) uses the
    /// collectives above with these first.
    pub const COMM: i32 = 11;
    /// Nonblocking collectives use `NONBLOCKING | seq` (see [`super::nb`]).
    pub const NONBLOCKING: i32 = super::nb::TAG_BASE;
}

pub(crate) fn check_root(p: &dyn Pt2Pt, root: usize) -> Result<(), CollError> {
    if root < p.size() {
        Ok(())
    } else {
        Err(CollError::Root {
            root,
            size: p.size(),
        })
    }
}

/// Receives exactly `buf.len()` bytes from `src`.
pub(crate) fn recv_exact(
    p: &mut dyn Pt2Pt,
    src: usize,
    tag: i32,
    buf: &mut [u8],
) -> Result<(), CollError> {
    let got = p.recv(src, tag, buf)?;
    expect(src, buf.len(), got)
}

/// Sends and receives; the received length must be `buf.len()`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sendrecv_exact(
    p: &mut dyn Pt2Pt,
    dest: usize,
    data: &[u8],
    src: usize,
    tag: i32,
    buf: &mut [u8],
) -> Result<(), CollError> {
    let got = p.sendrecv(dest, tag, data, src, tag, buf)?;
    expect(src, buf.len(), got)
}

fn expect(from: usize, expected: usize, got: usize) -> Result<(), CollError> {
    if got == expected {
        Ok(())
    } else {
        Err(CollError::Length {
            from,
            expected,
            got,
        })
    }
}

/// Checks per-rank `counts`/`displs` (bytes) against a buffer of `len` bytes:
/// one entry per rank, each block inside the buffer.
pub(crate) fn check_blocks(
    what: &str,
    n: usize,
    counts: &[usize],
    displs: &[usize],
    len: usize,
) -> Result<(), CollError> {
    if counts.len() != n || displs.len() != n {
        return Err(CollError::Args(format!(
            "{what}: {} counts and {} displacements for {n} ranks",
            counts.len(),
            displs.len()
        )));
    }
    for (i, (&c, &d)) in counts.iter().zip(displs).enumerate() {
        match d.checked_add(c) {
            Some(end) if end <= len => {}
            _ => {
                return Err(CollError::Args(format!(
                    "{what}: block {i} ({c} bytes at {d}) outside a buffer of {len} bytes"
                )))
            }
        }
    }
    Ok(())
}

/// The displacements of blocks of `counts` laid end to end, and the total.
pub fn packed_displs(counts: &[usize]) -> Result<(Vec<usize>, usize), CollError> {
    let mut at = 0usize;
    let mut d = Vec::with_capacity(counts.len());
    for &c in counts {
        d.push(at);
        at = at
            .checked_add(c)
            .ok_or_else(|| CollError::Args("counts overflow".into()))?;
    }
    Ok((d, at))
}

/// `len` bytes must be `want`.
pub(crate) fn check_len(what: &str, len: usize, want: usize) -> Result<(), CollError> {
    if len == want {
        Ok(())
    } else {
        Err(CollError::Args(format!(
            "{what}: a buffer of {len} bytes where {want} are needed"
        )))
    }
}
