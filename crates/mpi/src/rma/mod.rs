//! MPI-3 one-sided communication (RMA) over RSM: windows whose memory is an RSM
//! segment per rank on the `shm` controller, mapped by every rank of the window on
//! the same node, so that puts, gets and accumulates between them are loads and
//! stores (and atomics) on the target's memory, done by the origin alone; ranks on
//! other nodes reach it through the network controller ([`net`]).
//!
//! * [`window`] — creation (create, allocate, allocate_shared, dynamic with
//!   attach/detach), the operations, every synchronization (fence, lock/unlock,
//!   lock_all, flush, sync, post/start/complete/wait), free.
//! * [`ctrl`] — each rank's control block: the passive-target lock word, the
//!   accumulate lock, the PSCW counters, the attach table.
//! * [`acc`] — element-wise atomic accumulates (hardware atomics, else the lock).
//!
//! * [`net`] — windows whose ranks span nodes: targets on another node reached over
//!   RSM's network controller (puts and gets; accumulates, compare-and-swap and lock
//!   requests applied by a service thread at the target).
//!
//! On one node every operation completes when it returns (a copy into or out of
//! mapped memory), so a flush is a memory fence and request-based operations are
//! complete at once. Towards a rank on another node a put completes at the next
//! synchronization (an RSM barrier closes), an accumulate when the target's service
//! thread applied it; gets and fetching operations complete when they return.
//! Errors of an access (its range, its types, the epoch) are found when it is
//! issued; a target that went away (freed its window, or its process died, or its
//! node stopped answering) is reported by the synchronization that ends the epoch
//! (unlock, unlock_all, complete, fence) and by flush.
//!
//! Limits: `MPI_Win_allocate_shared` needs ranks of one node, and
//! `MPI_Win_create_dynamic` over ranks of several nodes is not implemented: both are
//! refused at creation on every rank (`Unsupported`). A rank that dies holding a
//! lock leaves it held.

pub mod acc;
pub mod ctrl;
pub mod net;
pub mod window;

pub use window::{Flavor, LockKind, Memory, Window};

use crate::coll::CollError;

/// Why a window operation failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RmaError {
    #[error("{0}")]
    Arg(String),
    #[error("rank {0} is not in the window")]
    Rank(usize),
    #[error("bytes {lo}..{hi} are outside rank {rank}'s window of {len} bytes")]
    Range {
        rank: usize,
        lo: i128,
        hi: i128,
        len: usize,
    },
    #[error("{0}")]
    Type(&'static str),
    #[error("the operation does not apply to the type")]
    Op,
    #[error("wrong synchronization: {0}")]
    Sync(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    Attach(String),
    #[error("the window's flavor does not allow this")]
    Flavor,
    #[error("rank {0}'s window is gone (freed, or its process ended)")]
    Gone(usize),
    #[error("rank {0} could not set up its part of the window")]
    Peer(usize),
    #[error("RSM: {0}: {1}")]
    Rsm(String, myrix_rsm::RsmError),
    #[error("collective: {0}")]
    Coll(String),
    #[error("internal error: {0}")]
    Internal(&'static str),
}

impl From<CollError> for RmaError {
    fn from(e: CollError) -> Self {
        RmaError::Coll(e.to_string())
    }
}
