//! Point-to-point messaging: MPI's matching engine over a [`fabric::Fabric`].
//!
//! The engine ([`Engine`]) owns the request table, the posted-receive and
//! unexpected-message queues of every context, and the buffers of eager messages that
//! arrived before their receive. It decides which receive gets which message (MPI's
//! matching on (source, tag, context) with `ANY_SOURCE`/`ANY_TAG` and the
//! non-overtaking rule); the fabric moves the bytes.
//!
//! What this module must never do: block inside a fabric call, allocate per message
//! once warmed up (queues, the request slab, the eager pool and the event list are
//! reused), or panic on anything a peer sends. `MPI_PROC_NULL`, datatypes and C
//! argument checks live above (the C layer); this layer moves bytes between ranks of
//! `MPI_COMM_WORLD` under a context id.
//!
//! * [`engine`] — the public calls (`isend`, `irecv`, `test`, `wait`, …);
//!   `engine_layout` those of non-contiguous buffers (`isend_layout`, …).
//! * `progress` — turning fabric events into matches and completions; peer loss.
//! * `cancel` — retracting a send: a request to its receiver, which owns matching.
//! * `request` / `matching` / `unexpected` / `slab` — one file per piece of state.
//! * [`blocking`] — `send`, `recv`, `sendrecv`.
//! * [`layout`] — a non-contiguous buffer (a datatype's elements), gathered and
//!   scattered by the fabric in place.
//! * [`api`] — a safe Rust face: scoped borrowed buffers and owned `Vec` buffers.
//! * [`loopnet`] — an in-process [`fabric::Fabric`] for tests (deterministic).

pub mod api;
pub mod blocking;
mod cancel;
pub mod engine;
mod engine_layout;
pub mod fabric;
mod hash;
pub mod layout;
pub mod loopnet;
mod matching;
mod progress;
pub(crate) mod request;
mod slab;
mod unexpected;

pub use api::{Scope, ScopedReq};
pub use engine::Engine;
pub use fabric::{Claim, Envelope, Event, Fabric, FabricError, MsgToken, Rank, SendId};
pub use layout::Layout;

/// How a send completes (MPI_Send / MPI_Ssend / MPI_Rsend).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SendMode {
    /// Completes when the buffer may be reused.
    Standard,
    /// Completes only once a receive has matched the message (and the buffer is free).
    Sync,
    /// The program promises a receive is already posted; behaves as `Standard` here.
    Ready,
}

/// Names one request until it is freed (by `test`/`wait` returning its status, or by
/// `free` once complete). Never 0; a stale id is reported as
/// [`P2pError::UnknownRequest`], never confused with a later request in the same slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReqId(pub u64);

/// Names a message removed from matching by [`Engine::improbe`], for [`Engine::imrecv`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MsgHandle(u64);

impl MsgHandle {
    /// The raw value (the C layer keeps it in its handle table).
    pub fn raw(self) -> u64 {
        self.0
    }
    /// Rebuilds a handle from [`MsgHandle::raw`]; a wrong value is refused by `imrecv`.
    pub fn from_raw(v: u64) -> MsgHandle {
        MsgHandle(v)
    }
}

/// What a completed request reports.
///
/// A receive: the message's source and tag, `len` = bytes delivered into the buffer.
/// A send: `source` = the destination, the tag, and the bytes sent. A cancelled
/// receive: `cancelled`, `len` 0, `source`/`tag` as posted (0 for ANY).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub source: Rank,
    pub tag: i32,
    pub len: usize,
    pub cancelled: bool,
    /// The request's own error (truncation, a lost peer); the call that returned the
    /// status itself succeeded.
    pub error: Option<P2pError>,
}

/// Errors of the point-to-point layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum P2pError {
    /// The message had `len` bytes, the receive buffer `cap`: `cap` bytes were
    /// delivered (MPI_ERR_TRUNCATE).
    #[error("message of {len} bytes truncated to the {cap}-byte receive buffer")]
    Truncated { len: usize, cap: usize },
    #[error("rank {rank} is gone: {why}")]
    PeerLost { rank: Rank, why: String },
    /// The request id (or message handle) is not live.
    #[error("unknown or already freed request")]
    UnknownRequest,
    #[error("fabric: {0}")]
    Fabric(FabricError),
}

impl From<FabricError> for P2pError {
    fn from(e: FabricError) -> Self {
        match e {
            FabricError::PeerLost { rank, why } => P2pError::PeerLost { rank, why },
            e => P2pError::Fabric(e),
        }
    }
}

/// Whether a receive's (source, tag) filter accepts a message's.
#[inline]
pub(crate) fn accepts(fsrc: Option<Rank>, ftag: Option<i32>, src: Rank, tag: i32) -> bool {
    fsrc.is_none_or(|s| s == src) && ftag.is_none_or(|t| t == tag)
}
