//! The request table's entries: one per send or receive from its start until the
//! program frees it. A request holds the user's buffer as a raw pointer (the caller
//! of the unsafe `isend`/`irecv` promised it stays valid until completion), where the
//! request is in its life, and its status once complete. Must never free an owned
//! buffer the fabric may still touch.

use super::fabric::{MsgToken, Rank, SendId};
use super::Status;

/// A receive buffer: written only by the fabric (through `take`) or by the engine's
/// copy out of an eager buffer, and only while the request is not complete.
///
/// A layout receive (a non-contiguous buffer, [`super::Layout`]) is the layout's
/// address with the top bit set ([`UserBuf::layout`]): no user-space address has it
/// (on the 64-bit targets this library is built for), and a tag keeps the request
/// entry at 128 bytes and a posted receive at 40, where a third field would not.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UserBuf {
    pub(crate) ptr: *mut u8,
    pub(crate) cap: usize,
}

/// The tag of a layout receive's `ptr`.
const LAYOUT_TAG: usize = 1 << (usize::BITS - 1);

impl UserBuf {
    /// `cap` bytes at `ptr`.
    #[inline]
    pub(crate) const fn flat(ptr: *mut u8, cap: usize) -> UserBuf {
        UserBuf { ptr, cap }
    }

    /// The first `cap` packed bytes of `lay`.
    pub(crate) fn layout(lay: *const super::Layout, cap: usize) -> UserBuf {
        UserBuf {
            ptr: lay.cast::<u8>().cast_mut().map_addr(|a| a | LAYOUT_TAG),
            cap,
        }
    }

    /// The layout of a layout receive; `None` for a flat buffer.
    #[inline]
    pub(crate) fn lay(&self) -> Option<*const super::Layout> {
        (self.ptr.addr() & LAYOUT_TAG != 0)
            .then(|| self.ptr.map_addr(|a| a & !LAYOUT_TAG).cast_const().cast())
    }
}

// SAFETY: a `UserBuf` is a pointer the caller of `irecv`/`imrecv` handed over together
// with the promise that it stays valid for writing until the request completes; the
// engine that holds it is used by one thread at a time (`&mut self`), so moving the
// engine to another thread moves the sole user of the pointer with it.
unsafe impl Send for UserBuf {}

/// A send's retraction (MPI_Cancel of a send; see `super::cancel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cancel {
    /// Not asked, or answered "too late": the send completes normally.
    No,
    /// Asked of the receiver, no answer yet: the send does not complete before it.
    Asked,
    /// The receiver removed the message: the send completes cancelled.
    Cancelled,
}

/// `Request::seq` of a request that is not a send (or may no longer be retracted).
pub(crate) const NOT_SENT: u64 = u64::MAX;

/// Where a request is in its life.
#[derive(Debug)]
pub(crate) enum Phase {
    /// A send waiting for `SendDone` (`done`) and, for a sync send, `SyncMatched`.
    Send {
        id: SendId,
        dest: Rank,
        done: bool,
        await_sync: bool,
        /// Where a retraction of the message stands (`super::cancel`).
        cancel: Cancel,
        status: Status,
    },
    /// A receive in its context's posted queue.
    Posted {
        ctx: u32,
        src: Option<Rank>,
        tag: Option<i32>,
    },
    /// A receive matched to `token`, its data on the way (through the fabric, or into
    /// the eager buffer it will be copied from). `status` is what it will report.
    Receiving { token: MsgToken, status: Status },
    /// Complete: waiting for `test`/`wait`/`free`.
    Done(Status),
    /// A collective schedule run by `progress` (`coll::nb`); `None` only while it
    /// runs.
    Coll(Option<Box<crate::coll::nb::Schedule>>),
}

#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) phase: Phase,
    pub(crate) buf: UserBuf,
    /// `MPI_Request_free` came before completion: the slot goes at completion.
    pub(crate) freed: bool,
    /// The buffer of an owned-buffer request ([`super::api`]); returned at completion.
    /// Boxed: only the Rust API's owned-buffer calls use it, and a smaller entry is
    /// cheaper to write and free for every other request. (A `Box<[u8]>` would not
    /// do: making one may move the heap buffer the fabric is already given.)
    #[allow(clippy::box_collection)]
    pub(crate) owned: Option<Box<Vec<u8>>>,
    /// A send: its message's number among those to its destination (the
    /// `MsgToken::seq` the receiver knows it by), kept after completion so that
    /// MPI_Cancel can still retract it; [`NOT_SENT`] otherwise.
    pub(crate) seq: u64,
}

/// Every send that does not finish inside its call and every receive writes one
/// `Request` into the engine's slab: kept at most 128 bytes so that the write is a few
/// vector moves, not a call to `memcpy`.
const _: () = assert!(std::mem::size_of::<Request>() <= 128);

impl Request {
    pub(crate) fn new(phase: Phase, buf: UserBuf) -> Self {
        Request {
            phase,
            buf,
            freed: false,
            owned: None,
            seq: NOT_SENT,
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done(_))
    }

    pub(crate) fn status(&self) -> Option<&Status> {
        match &self.phase {
            Phase::Done(s) => Some(s),
            _ => None,
        }
    }
}

/// The status of a receive that matched a message of `len` bytes from `src`/`tag`
/// into a buffer of `cap` bytes.
#[inline]
pub(crate) fn recv_status(src: Rank, tag: i32, len: usize, cap: usize) -> Status {
    Status {
        source: src,
        tag,
        len: len.min(cap),
        cancelled: false,
        error: (len > cap).then_some(super::P2pError::Truncated { len, cap }),
    }
}
