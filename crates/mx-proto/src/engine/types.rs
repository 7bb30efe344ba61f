//! The API's plain types: handles, ids, codes, statuses, errors, counters.

use super::*;

/// A request handle: slot index and generation, so a stale handle is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Request(pub(super) u32);

impl Request {
    pub(super) fn new(index: usize, gen: u16) -> Request {
        Request(((gen as u32) << 16) | index as u32)
    }
    pub(super) fn index(self) -> usize {
        (self.0 & 0xffff) as usize
    }
    pub(super) fn gen(self) -> u16 {
        (self.0 >> 16) as u16
    }
    /// The handle as it travels in frames.
    pub fn raw(self) -> u32 {
        self.0
    }
}

/// A connected peer, as this endpoint numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeerId(pub u16);

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    Success,
    /// The receive buffer was shorter than the message: `xfer_len < msg_len`.
    Truncated,
    /// The peer refused our connect: wrong key.
    BadKey,
    /// The peer has no such endpoint open (Open-MX: NACK ENDPT_CLOSED, MX's
    /// `MX_STATUS_ENDPOINT_CLOSED`).
    NoEndpoint,
    /// The peer's host has no endpoint of that id at all (Open-MX: NACK BAD_ENDPT for an
    /// id past its endpoint count, MX's `MX_STATUS_BAD_ENDPOINT`).
    BadEndpoint,
    /// No acknowledgement within the request timeout.
    Unreachable,
    /// The peer restarted (new session) before the request finished.
    PeerReset,
    /// We disconnected from the peer ([`Engine::disconnect`]) before the request
    /// finished.
    Disconnected,
}

impl Code {
    /// A finished receive's code: truncated when the buffer held less than the message.
    #[inline(always)]
    pub(super) fn of_receive(xfer_len: usize, msg_len: usize) -> Code {
        if xfer_len < msg_len {
            Code::Truncated
        } else {
            Code::Success
        }
    }

    pub fn is_success(self) -> bool {
        self == Code::Success
    }
}

/// What a user reads: the cause, in words ([`Code`]'s `Debug` is the variant's name).
impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Code::Success => "success",
            Code::Truncated => "truncated: the receive buffer was shorter than the message",
            Code::BadKey => "the peer refused the key",
            Code::NoEndpoint => {
                "no endpoint of that id is open there (its process may have exited)"
            }
            Code::BadEndpoint => "the peer's host has no endpoint of that id",
            Code::Unreachable => "unreachable: no acknowledgement within the request timeout",
            Code::PeerReset => "the peer restarted before the request finished",
            Code::Disconnected => "disconnected from the peer before the request finished",
        })
    }
}

/// What a completed request reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    pub code: Code,
    /// The peer: the sender for a receive, the destination for a send, the connected peer.
    pub source: PeerId,
    pub match_info: u64,
    /// The sender's message length.
    pub msg_len: usize,
    /// Bytes actually delivered into the receive buffer.
    pub xfer_len: usize,
    pub context: u64,
}

/// Errors from API calls: the request is refused, nothing was queued.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("receive match {match_info:#x} has bits outside its mask {mask:#x}")]
    BadMatchMask { match_info: u64, mask: u64 },
    #[error("message of {len} bytes exceeds the {max}-byte limit")]
    TooLarge { len: usize, max: usize },
    #[error("unknown peer {0:?}")]
    UnknownPeer(PeerId),
    #[error("peer {0:?} is not connected")]
    NotConnected(PeerId),
    #[error("stale or unknown request handle")]
    BadRequest,
    #[error("too many outstanding requests (65535)")]
    TooManyRequests,
    #[error("too many peers")]
    TooManyPeers,
    #[error("the request is not a receive that can be cancelled")]
    NotCancellable,
}

/// A blocking receive waiting without a request: see [`Engine::handle_frame_direct`].
#[derive(Debug)]
pub struct DirectRecv {
    pub match_info: u64,
    pub mask: u64,
    pub buf: RecvBuf,
    /// Set when a message was received into `buf`.
    pub done: Option<Status>,
    /// Set when a frame took the general path since the caller last cleared it.
    pub slow: bool,
}

/// What an unexpected-message handler sees.
#[derive(Clone, Copy, Debug)]
pub struct UnexpectedInfo {
    pub source: PeerId,
    pub match_info: u64,
    pub msg_len: usize,
}

/// What an unexpected-message handler decides.
pub enum HandlerAction {
    /// Queue the message as unexpected, as without a handler.
    Continue,
    /// Receive it now into this buffer, completing with this context.
    Receive { buf: RecvBuf, context: u64 },
}

pub type UnexpectedHandler = Box<dyn FnMut(&UnexpectedInfo) -> HandlerAction + Send>;

/// The message of a send started with [`Engine::isend_lent`], lent for one call: the
/// request and the segments it reads from. The engine keeps no reference to them.
pub type Lent<'a> = Option<(Request, &'a [&'a [u8]])>;

/// Counters, for diagnostics and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub frames_in: u64,
    pub frames_out: u64,
    /// Frames that failed to parse, or broke the protocol.
    pub bad_frames: u64,
    /// Frames for another endpoint, an unknown peer or an old session.
    pub stale_frames: u64,
    pub duplicates: u64,
    pub early_held: u64,
    pub retransmits: u64,
    pub acks_sent: u64,
    /// Frames refused because the unexpected queue was full.
    pub busy: u64,
    pub pull_rerequests: u64,
    /// Messages that took the lossless fast paths (sent straight out / matched straight
    /// from the frame).
    pub fast_sends: u64,
    pub fast_recvs: u64,
    /// NACKs sent (frames of a known peer with the wrong session, [`Codec::NACKS`]).
    pub nacks_sent: u64,
    /// NACKs received that ended requests.
    pub nacks_received: u64,
}

/// Whether the engine consumed a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handled {
    Accepted,
    /// Dropped: bad, stale, duplicate or early beyond the window (see [`Stats`]).
    Dropped,
    /// The unexpected queue is full. A lossless transport should keep the frame and
    /// offer it again later; a lossy one may drop it (the sender will resend).
    Busy,
}
