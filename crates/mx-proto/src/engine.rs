//! The MX protocol engine: matching, the message classes, reliability. Sans-IO.
//!
//! One [`Engine`] is one endpoint's protocol state. It never touches a socket, a thread or
//! a clock: the driver (`myrix_mx::Endpoint`, a test network, the simulator) passes
//! time in as nanoseconds and moves frames:
//!
//! * [`Engine::handle_frame`] — a frame arrived from the transport;
//! * [`Engine::poll_transmit`] — the next frame to send, written into the driver's buffer
//!   (a UDP datagram, a shared-memory ring slot) so the fast path copies data once;
//! * [`Engine::poll_timeout`] / [`Engine::handle_timeout`] — the next deadline
//!   (delayed ack, retransmission, pull re-request, request timeout).
//!
//! The generic `L` is the transport's notion of where a peer is (a socket address, a
//! ring index); the engine only stores it and hands it back with each frame to send.
//!
//! Protocol, per message class (limits in [`Config`]):
//! * **tiny / small**: one sequenced frame carrying the data;
//! * **medium**: consecutive sequenced fragments, eager;
//! * **large**: a sequenced rendezvous frame; once matched, the receiver pulls the data in
//!   blocks (unsequenced pull / pull-reply frames, missing ranges re-requested on a
//!   timer), then sends a sequenced notify that completes the send.
//!
//! Reliability (only when [`Config::reliable_transport`] is false): every sequenced frame
//! is kept until acknowledged; acks are piggy-backed on every frame and sent explicitly
//! after [`Config::ack_after`] unacknowledged frames or [`Config::ack_delay_ns`];
//! unacknowledged frames are resent every [`Config::resend_ns`]; early frames inside
//! [`Config::early_window`] are held and released in order; duplicates are dropped (and
//! re-acknowledged); a frame unacknowledged for [`Config::request_timeout_ns`] makes the
//! peer unreachable and fails its requests.

use std::collections::VecDeque;

use myrix_wire::mx::{
    emit_head, emit_whole_eager, parse_whole_eager, Body, Frame, Header, Kind, Repr, WholeEager,
    CONNECT_BAD_KEY, CONNECT_OK, EAGER_HEAD, HEADER_LEN, NO_HANDLE, NO_PEER,
};

/// `dst.copy_from_slice(src)` for the fast paths' messages, which are mostly a few bytes:
/// up to 32 bytes as two overlapping fixed-size moves instead of a call to `memcpy`.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    assert_eq!(dst.len(), n, "copy_short needs equal lengths");
    if (8..=16).contains(&n) {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..].copy_from_slice(&src[n - 8..]);
    } else if (17..=32).contains(&n) {
        dst[..16].copy_from_slice(&src[..16]);
        dst[n - 16..].copy_from_slice(&src[n - 16..]);
    } else {
        dst.copy_from_slice(src);
    }
}

/// Protocol parameters. Defaults follow MX / Open-MX where the paper or its source give a
/// value (message classes, 32 KiB pull blocks, ack after 4 frames); timers are shorter
/// than Open-MX's 0.5 s resend because our links are local.
#[derive(Clone, Debug)]
pub struct Config {
    pub tiny_max: usize,
    pub small_max: usize,
    /// Largest eager message; larger ones use the rendezvous.
    pub medium_max: usize,
    /// Largest frame the transport carries.
    pub mtu: usize,
    /// Largest medium fragment (data bytes), further capped by the MTU.
    pub medium_frag: usize,
    /// Bytes per pull request.
    pub pull_block: usize,
    /// Pull blocks outstanding per large receive.
    pub pull_window: usize,
    /// Largest message accepted.
    pub max_message: usize,
    /// The transport never loses, duplicates or reorders (self, shm): no acks, no timers.
    pub reliable_transport: bool,
    pub ack_after: u32,
    pub ack_delay_ns: u64,
    pub resend_ns: u64,
    /// After this long without an acknowledgement the peer is unreachable.
    pub request_timeout_ns: u64,
    pub connect_timeout_ns: u64,
    /// Sequenced frames in flight per peer.
    pub send_window: u16,
    /// Out-of-order frames held per peer.
    pub early_window: u16,
    /// Bound on the unexpected queue: messages and bytes.
    pub unexpected_max: usize,
    pub unexpected_max_bytes: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            tiny_max: 32,
            small_max: 128,
            medium_max: 32 * 1024,
            mtu: 1472,
            medium_frag: 8192,
            pull_block: 32 * 1024,
            pull_window: 4,
            max_message: 1 << 30,
            reliable_transport: false,
            ack_after: 4,
            ack_delay_ns: 1_000_000,
            resend_ns: 20_000_000,
            request_timeout_ns: 10_000_000_000,
            connect_timeout_ns: 5_000_000_000,
            send_window: 1024,
            early_window: 1024,
            unexpected_max: 4096,
            unexpected_max_bytes: 64 << 20,
        }
    }
}

/// A request handle: slot index and generation, so a stale handle is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Request(u32);

impl Request {
    fn new(index: usize, gen: u16) -> Request {
        Request(((gen as u32) << 16) | index as u32)
    }
    fn index(self) -> usize {
        (self.0 & 0xffff) as usize
    }
    fn gen(self) -> u16 {
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
    /// The peer has no such endpoint.
    NoEndpoint,
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
    fn of_receive(xfer_len: usize, msg_len: usize) -> Code {
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

/// Where a receive's data goes: one buffer, or a scatter list filled in order.
/// Each buffer's length (not capacity) is the room it offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecvBuf {
    One(Vec<u8>),
    Segments(Vec<Vec<u8>>),
}

impl RecvBuf {
    pub fn len(&self) -> usize {
        match self {
            RecvBuf::One(v) => v.len(),
            RecvBuf::Segments(s) => s.iter().map(|v| v.len()).sum(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Copies `data` at `offset`, truncating at the end of the buffer.
    #[inline]
    fn write_at(&mut self, mut offset: usize, mut data: &[u8]) {
        match self {
            RecvBuf::One(v) => {
                if offset < v.len() {
                    let n = data.len().min(v.len() - offset);
                    copy_short(&mut v[offset..offset + n], &data[..n]);
                }
            }
            RecvBuf::Segments(segs) => {
                for s in segs.iter_mut() {
                    if data.is_empty() {
                        break;
                    }
                    if offset >= s.len() {
                        offset -= s.len();
                        continue;
                    }
                    let n = data.len().min(s.len() - offset);
                    s[offset..offset + n].copy_from_slice(&data[..n]);
                    data = &data[n..];
                    offset = 0;
                }
            }
        }
    }
    /// The bytes as one vector (a copy for segments).
    pub fn to_vec(&self) -> Vec<u8> {
        match self {
            RecvBuf::One(v) => v.clone(),
            RecvBuf::Segments(s) => s.concat(),
        }
    }
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

/// The lent message of request `h`, if the caller lent it for this call.
fn lent_for<'a>(h: u32, lent: Lent<'a>) -> Option<&'a [&'a [u8]]> {
    match lent {
        Some((r, segs)) if r.raw() == h => Some(segs),
        _ => {
            debug_assert!(false, "a lent message's bytes were needed but not lent");
            None
        }
    }
}

/// Replaces `data` with the concatenation of `segs` (`len` bytes in all).
fn concat_into(data: &mut Vec<u8>, segs: &[&[u8]], len: usize) {
    data.clear();
    data.reserve(len);
    for s in segs {
        data.extend_from_slice(s);
    }
}

/// Copies `dst.len()` bytes of the concatenation of `segs`, from `offset` on.
fn gather(segs: &[&[u8]], mut offset: usize, dst: &mut [u8]) {
    let mut at = 0;
    for s in segs {
        if at == dst.len() {
            break;
        }
        if offset >= s.len() {
            offset -= s.len();
            continue;
        }
        let n = (s.len() - offset).min(dst.len() - at);
        dst[at..at + n].copy_from_slice(&s[offset..offset + n]);
        at += n;
        offset = 0;
    }
}

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

fn seq_lt(a: u16, b: u16) -> bool {
    (a.wrapping_sub(b) as i16) < 0
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReqKind {
    Send,
    Recv,
    Connect,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReqState {
    Free,
    /// Posted and waiting (receives: in the posted queue).
    Pending,
    /// Matched / in progress.
    Active,
    /// Complete, waiting for the application to test it.
    Done,
}

/// Receive-side state of a large message being pulled.
#[derive(Debug, Default)]
struct Pull {
    sender_handle: u32,
    /// Next byte not yet requested.
    next: usize,
    /// Ranges received, sorted and merged.
    have: Vec<(usize, usize)>,
    received: usize,
    /// Last time a reply brought new bytes.
    last_progress: u64,
    /// Requested but incomplete blocks: (start, end, last request time).
    blocks: VecDeque<(usize, usize, u64)>,
}

impl Pull {
    /// Records a range; returns the bytes that were new.
    fn add(&mut self, start: usize, end: usize) -> usize {
        let mut new = end - start;
        for &(a, b) in &self.have {
            let (lo, hi) = (a.max(start), b.min(end));
            if lo < hi {
                new -= hi - lo;
            }
        }
        if new == 0 {
            return 0;
        }
        // Merged in place: replies nearly always extend the last range, and a reply must
        // not cost an allocation.
        let at = self.have.partition_point(|&(a, _)| a < start);
        self.have.insert(at, (start, end));
        let mut w = 0;
        for i in 1..self.have.len() {
            let (a, b) = self.have[i];
            if a <= self.have[w].1 {
                self.have[w].1 = self.have[w].1.max(b);
            } else {
                w += 1;
                self.have[w] = (a, b);
            }
        }
        self.have.truncate(w + 1);
        self.received += new;
        new
    }
    fn covers(have: &[(usize, usize)], start: usize, end: usize) -> bool {
        have.iter().any(|&(a, b)| a <= start && b >= end)
    }
    fn gaps(&self, start: usize, end: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut at = start;
        for &(a, b) in &self.have {
            if b <= at || a >= end {
                continue;
            }
            if a > at {
                out.push((at, a));
            }
            at = at.max(b);
        }
        if at < end {
            out.push((at, end));
        }
        out
    }
}

#[derive(Debug)]
struct Req {
    gen: u16,
    kind: ReqKind,
    state: ReqState,
    forgotten: bool,
    context: u64,
    peer: u16,
    match_info: u64,
    mask: u64,
    msg_len: usize,
    xfer_len: usize,
    code: Code,
    /// Send: the message. Returned to the pool when the request ends.
    data: Vec<u8>,
    recv: Option<RecvBuf>,
    /// Send: sequenced frames not yet acknowledged (emitted, on lossless transports).
    outstanding: u32,
    /// Send: a notify must arrive (synchronous or large).
    need_notify: bool,
    /// Send: the message is not in `data` but lent by the caller, who passes it to every
    /// call that may emit its bytes (see [`Lent`]).
    lent: bool,
    /// Send: the message vector was the caller's (`isend_vec`) and goes back to it with
    /// the completion, contents intact.
    give_back: bool,
    pull: Option<Box<Pull>>,
    /// Connect: key, first and last attempt.
    key: u32,
    started: u64,
    last_try: u64,
}

impl Req {
    fn empty() -> Req {
        Req {
            gen: 0,
            kind: ReqKind::Send,
            state: ReqState::Free,
            forgotten: false,
            context: 0,
            peer: 0,
            match_info: 0,
            mask: 0,
            msg_len: 0,
            xfer_len: 0,
            code: Code::Success,
            data: Vec::new(),
            recv: None,
            outstanding: 0,
            need_notify: false,
            pull: None,
            key: 0,
            started: 0,
            last_try: 0,
            lent: false,
            give_back: false,
        }
    }
}

/// A sequenced frame kept until acknowledged; frames are rebuilt from it on (re)send.
#[derive(Clone, Copy, Debug)]
enum SeqWhat {
    Eager {
        req: u32,
        kind: Kind,
        offset: u32,
        len: u32,
    },
    Rndv {
        req: u32,
    },
    Notify {
        handle: u32,
    },
}

#[derive(Clone, Copy, Debug)]
struct Unacked {
    seq: u16,
    what: SeqWhat,
    first_sent: u64,
    last_sent: u64,
    /// Queued for (re)transmission and not yet emitted.
    queued: bool,
}

/// The message being received from a peer: its later fragments follow in sequence.
#[derive(Clone, Copy, Debug)]
enum RxTarget {
    Recv(u32),
    Unexpected(u64),
}

#[derive(Clone, Copy, Debug)]
struct RxCurrent {
    target: RxTarget,
    next_offset: usize,
    msg_len: usize,
}

struct Peer<L> {
    loc: L,
    nic: u64,
    endpoint: u8,
    /// Their session; 0 until known.
    session: u32,
    /// The session we present to them: ours, changed at each disconnect so that the
    /// next connect starts both sides afresh.
    my_session: u32,
    /// The index they gave us; `NO_PEER` until connected.
    their_index: u16,
    unreachable: bool,
    tx_next: u16,
    unacked: VecDeque<Unacked>,
    /// Messages waiting for room in the send window: (request, is large).
    waiting: VecDeque<u32>,
    rx_next: u16,
    early: std::collections::BTreeMap<u16, Vec<u8>>,
    rx_unacked: u32,
    ack_deadline: Option<u64>,
    ack_queued: bool,
    rx_current: Option<RxCurrent>,
}

impl<L> Peer<L> {
    fn new(loc: L, nic: u64, endpoint: u8, my_session: u32) -> Peer<L> {
        Peer {
            loc,
            nic,
            endpoint,
            session: 0,
            my_session,
            their_index: NO_PEER,
            unreachable: false,
            tx_next: 0,
            unacked: VecDeque::new(),
            waiting: VecDeque::new(),
            rx_next: 0,
            early: Default::default(),
            rx_unacked: 0,
            ack_deadline: None,
            ack_queued: false,
            rx_current: None,
        }
    }
    fn reset_session(&mut self) {
        self.tx_next = 0;
        self.unacked.clear();
        self.waiting.clear();
        self.rx_next = 0;
        self.early.clear();
        self.rx_unacked = 0;
        self.ack_deadline = None;
        self.ack_queued = false;
        self.rx_current = None;
        self.unreachable = false;
    }
}

struct Unexpected {
    id: u64,
    peer: u16,
    match_info: u64,
    msg_len: usize,
    /// Eager data so far (empty for a rendezvous).
    data: Vec<u8>,
    received: usize,
    /// Sender handle of a rendezvous, or of a synchronous eager send.
    handle: u32,
    rndv: bool,
}

/// Work for `poll_transmit`, in order.
#[derive(Clone, Copy, Debug)]
enum Tx {
    /// The unacked frame with this sequence number.
    Seq {
        peer: u16,
        seq: u16,
    },
    Ack {
        peer: u16,
    },
    Connect {
        req: u32,
    },
    ConnectReply {
        peer: u16,
        status: u8,
        request: u32,
    },
    Refuse {
        peer: u16,
        status: u8,
        request: u32,
    },
    Pull {
        req: u32,
        offset: usize,
        len: usize,
    },
    PullReply {
        peer: u16,
        send: u32,
        recv_handle: u32,
        offset: usize,
        end: usize,
    },
}

/// One endpoint's protocol state. See the module docs.
pub struct Engine<L> {
    cfg: Config,
    nic: u64,
    endpoint: u8,
    key: u32,
    session: u32,
    peers: Vec<Peer<L>>,
    reqs: Vec<Req>,
    free_reqs: Vec<u32>,
    posted: VecDeque<u32>,
    unexpected: VecDeque<Unexpected>,
    unexpected_bytes: usize,
    next_unexpected_id: u64,
    completed: VecDeque<u32>,
    txq: VecDeque<Tx>,
    /// Peers whose ack deadline or unacked frames need a timer.
    pool: Vec<Vec<u8>>,
    handler: Option<UnexpectedHandler>,
    stats: Stats,
}

const MAX_REQS: usize = 0xffff;

impl<L: Clone + PartialEq> Engine<L> {
    pub fn new(cfg: Config, nic: u64, endpoint: u8, key: u32, session: u32) -> Engine<L> {
        Engine {
            cfg,
            nic: nic & 0xffff_ffff_ffff,
            endpoint,
            key,
            session,
            peers: Vec::new(),
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            posted: VecDeque::new(),
            unexpected: VecDeque::new(),
            unexpected_bytes: 0,
            next_unexpected_id: 0,
            completed: VecDeque::new(),
            txq: VecDeque::new(),
            pool: Vec::new(),
            handler: None,
            stats: Stats::default(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }
    pub fn stats(&self) -> Stats {
        self.stats
    }
    pub fn nic(&self) -> u64 {
        self.nic
    }
    pub fn endpoint(&self) -> u8 {
        self.endpoint
    }
    pub fn session(&self) -> u32 {
        self.session
    }
    /// Where a peer is, as the transport gave it.
    pub fn peer_location(&self, p: PeerId) -> Option<&L> {
        self.peers.get(p.0 as usize).map(|x| &x.loc)
    }
    /// NIC id and endpoint id of a peer.
    pub fn peer_identity(&self, p: PeerId) -> Option<(u64, u8)> {
        self.peers.get(p.0 as usize).map(|x| (x.nic, x.endpoint))
    }
    pub fn set_unexpected_handler(&mut self, h: Option<UnexpectedHandler>) {
        self.handler = h;
    }
    /// Messages in the unexpected queue.
    pub fn unexpected_len(&self) -> usize {
        self.unexpected.len()
    }
    /// True when nothing waits to be sent or acknowledged.
    pub fn idle(&self) -> bool {
        self.txq.is_empty()
            && self.peers.iter().all(|p| {
                p.unacked.is_empty()
                    && p.waiting.is_empty()
                    && !p.ack_queued
                    && p.ack_deadline.is_none()
            })
    }

    // ---------------------------------------------------------------- requests

    #[inline(always)]
    fn alloc(&mut self, kind: ReqKind, context: u64) -> Result<u32, Error> {
        let idx = match self.free_reqs.pop() {
            Some(i) => i as usize,
            None => {
                if self.reqs.len() >= MAX_REQS {
                    return Err(Error::TooManyRequests);
                }
                self.reqs.push(Req::empty());
                self.reqs.len() - 1
            }
        };
        let r = &mut self.reqs[idx];
        // A freed request holds no receive buffer or pull state (`free` took them) and
        // keeps its send vector for reuse, so resetting the plain fields is enough.
        debug_assert!(r.recv.is_none() && r.pull.is_none());
        let gen = r.gen.wrapping_add(1);
        r.gen = gen;
        r.kind = kind;
        r.state = ReqState::Pending;
        r.forgotten = false;
        r.context = context;
        r.peer = 0;
        r.match_info = 0;
        r.mask = 0;
        r.msg_len = 0;
        r.xfer_len = 0;
        r.code = Code::Success;
        r.outstanding = 0;
        r.need_notify = false;
        r.key = 0;
        r.started = 0;
        r.last_try = 0;
        r.lent = false;
        r.give_back = false;
        Ok(Request::new(idx, gen).raw())
    }

    #[inline]
    fn req(&self, h: u32) -> Option<&Req> {
        let r = Request(h);
        self.reqs
            .get(r.index())
            .filter(|x| x.gen == r.gen() && x.state != ReqState::Free)
    }
    #[inline]
    fn req_mut(&mut self, h: u32) -> Option<&mut Req> {
        let r = Request(h);
        self.reqs
            .get_mut(r.index())
            .filter(|x| x.gen == r.gen() && x.state != ReqState::Free)
    }

    /// Whether a spent buffer goes back to the pool: a few, and not huge, so a burst of
    /// large messages does not pin memory for ever.
    fn keep(&self, v: &Vec<u8>) -> bool {
        v.capacity() <= 4 << 20 && self.pool.len() < 16
    }

    #[inline(always)]
    fn free(&mut self, h: u32) -> Option<RecvBuf> {
        let idx = Request(h).index();
        let r = &mut self.reqs[idx];
        r.state = ReqState::Free;
        if r.pull.is_some() {
            r.pull = None;
        }
        if r.give_back {
            r.recv = Some(RecvBuf::One(std::mem::take(&mut r.data)));
        }
        Self::spend(&mut r.data);
        let recv = r.recv.take();
        self.free_reqs.push(idx as u32);
        recv
    }

    /// A send's message is no longer needed: its vector stays with the request slot for
    /// the next send, unless it is huge (a burst of large messages must not pin memory).
    fn spend(data: &mut Vec<u8>) {
        if data.capacity() > 4 << 20 {
            *data = Vec::new();
        } else {
            data.clear();
        }
    }

    #[inline(always)]
    fn complete(&mut self, h: u32, code: Code) {
        let Some(r) = self.req_mut(h) else { return };
        if r.state == ReqState::Done {
            return;
        }
        r.state = ReqState::Done;
        r.code = code;
        if r.kind == ReqKind::Send && !r.give_back {
            Self::spend(&mut r.data);
        }
        if self.reqs[Request(h).index()].forgotten {
            self.free(h);
        } else {
            self.completed.push_back(h);
        }
    }

    fn status_of(&self, r: &Req) -> Status {
        Status {
            code: r.code,
            source: PeerId(r.peer),
            match_info: r.match_info,
            msg_len: r.msg_len,
            xfer_len: r.xfer_len,
            context: r.context,
        }
    }

    /// Whether [`Engine::test`] would answer at once: the request completed, or the
    /// handle is not valid (then `test` says so). Cheap enough for every spin of a wait.
    #[inline(always)]
    pub fn ready(&self, req: Request) -> bool {
        self.req(req.raw())
            .is_none_or(|r| r.state == ReqState::Done)
    }

    /// Completion of a request: its status and, for a receive, the buffer back. The
    /// request is released: its handle becomes stale.
    #[inline]
    pub fn test(&mut self, req: Request) -> Result<Option<(Status, Option<RecvBuf>)>, Error> {
        let r = self.req(req.raw()).ok_or(Error::BadRequest)?;
        if r.state != ReqState::Done {
            return Ok(None);
        }
        let st = self.status_of(r);
        self.unlist_completed(req.raw());
        let buf = self.free(req.raw());
        Ok(Some((st, buf)))
    }

    #[inline]
    fn unlist_completed(&mut self, h: u32) {
        // Applications test the oldest or the newest completion, nearly always.
        if self.completed.front() == Some(&h) {
            self.completed.pop_front();
        } else if self.completed.back() == Some(&h) {
            self.completed.pop_back();
        } else if let Some(pos) = self.completed.iter().position(|&x| x == h) {
            self.completed.remove(pos);
        }
    }

    /// The first completed request not yet tested, without releasing it.
    pub fn ipeek(&self) -> Option<Request> {
        self.completed.front().map(|&h| Request(h))
    }

    /// The first completed request whose match info agrees with `match_info` under
    /// `mask`; released as by [`Engine::test`].
    #[allow(clippy::type_complexity)]
    pub fn test_any(
        &mut self,
        match_info: u64,
        mask: u64,
    ) -> Result<Option<(Request, Status, Option<RecvBuf>)>, Error> {
        if match_info & !mask != 0 {
            return Err(Error::BadMatchMask { match_info, mask });
        }
        let found = self.completed.iter().copied().find(|&h| {
            self.req(h)
                .is_some_and(|r| r.match_info & mask == match_info)
        });
        match found {
            Some(h) => {
                let (st, buf) = self.test(Request(h))?.ok_or(Error::BadRequest)?;
                Ok(Some((Request(h), st, buf)))
            }
            None => Ok(None),
        }
    }

    /// Status of the first unexpected message matching, without receiving it.
    pub fn iprobe(&self, match_info: u64, mask: u64) -> Result<Option<Status>, Error> {
        if match_info & !mask != 0 {
            return Err(Error::BadMatchMask { match_info, mask });
        }
        Ok(self
            .unexpected
            .iter()
            .find(|u| u.match_info & mask == match_info)
            .map(|u| Status {
                code: Code::Success,
                source: PeerId(u.peer),
                match_info: u.match_info,
                msg_len: u.msg_len,
                xfer_len: 0,
                context: 0,
            }))
    }

    /// Cancels a receive not yet matched; gives its buffer back.
    pub fn cancel(&mut self, req: Request) -> Result<RecvBuf, Error> {
        let r = self.req(req.raw()).ok_or(Error::BadRequest)?;
        if r.kind != ReqKind::Recv || r.state != ReqState::Pending {
            return Err(Error::NotCancellable);
        }
        if let Some(pos) = self.posted.iter().position(|&h| h == req.raw()) {
            self.posted.remove(pos);
        }
        Ok(self.free(req.raw()).unwrap_or(RecvBuf::One(Vec::new())))
    }

    /// The application will not test this request: it is released when it completes.
    pub fn forget(&mut self, req: Request) -> Result<(), Error> {
        let r = self.req_mut(req.raw()).ok_or(Error::BadRequest)?;
        r.forgotten = true;
        if r.state == ReqState::Done {
            self.unlist_completed(req.raw());
            self.free(req.raw());
        }
        Ok(())
    }

    /// The per-request context.
    pub fn context(&self, req: Request) -> Result<u64, Error> {
        Ok(self.req(req.raw()).ok_or(Error::BadRequest)?.context)
    }

    // ---------------------------------------------------------------- connect

    /// Starts connecting to the endpoint `(nic, endpoint)` at `loc`. Completes with the
    /// peer's id in [`Status::source`], or [`Code::BadKey`] / [`Code::Unreachable`].
    pub fn iconnect(
        &mut self,
        now: u64,
        loc: L,
        nic: u64,
        endpoint: u8,
        key: u32,
        context: u64,
    ) -> Result<Request, Error> {
        let idx = self.peer_slot(loc, nic, endpoint)?;
        let h = self.alloc(ReqKind::Connect, context)?;
        let r = self.req_mut(h).expect("just allocated");
        r.peer = idx;
        r.key = key;
        r.started = now;
        r.last_try = now;
        r.state = ReqState::Active;
        self.txq.push_back(Tx::Connect { req: h });
        Ok(Request(h))
    }

    fn peer_slot(&mut self, loc: L, nic: u64, endpoint: u8) -> Result<u16, Error> {
        if let Some(i) = self
            .peers
            .iter()
            .position(|p| p.nic == nic && p.endpoint == endpoint)
        {
            self.peers[i].loc = loc;
            return Ok(i as u16);
        }
        if self.peers.len() >= NO_PEER as usize {
            return Err(Error::TooManyPeers);
        }
        self.peers.push(Peer::new(loc, nic, endpoint, self.session));
        Ok((self.peers.len() - 1) as u16)
    }

    // ---------------------------------------------------------------- send

    fn check_peer(&self, peer: PeerId) -> Result<(), Error> {
        let p = self
            .peers
            .get(peer.0 as usize)
            .ok_or(Error::UnknownPeer(peer))?;
        if p.their_index == NO_PEER {
            return Err(Error::NotConnected(peer));
        }
        Ok(())
    }

    /// Sends the concatenation of `segments`, copied at once (the caller may reuse them).
    /// With `synchronous`, completes only when the receiver has matched it.
    pub fn isend(
        &mut self,
        _now: u64,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        context: u64,
        synchronous: bool,
    ) -> Result<Request, Error> {
        let len: usize = segments.iter().map(|s| s.len()).sum();
        self.check_send(peer, len)?;
        let h = self.alloc(ReqKind::Send, context)?;
        concat_into(&mut self.reqs[Request(h).index()].data, segments, len);
        Ok(self.start_send(h, peer, match_info, synchronous))
    }

    /// [`Engine::isend`] with the fast path of lossless transports: when nothing is
    /// queued for the peer and the message fits one frame, the frame is written into
    /// `buf` at once and returned for the caller to hand to the transport, and the send
    /// is complete (a lossless transport completes sends on emission). Otherwise the
    /// message takes the ordinary path and comes out of [`Engine::poll_transmit`].
    #[allow(clippy::too_many_arguments)]
    pub fn isend_into(
        &mut self,
        now: u64,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        context: u64,
        synchronous: bool,
        buf: &mut [u8],
    ) -> Result<(Request, Option<(L, usize)>), Error> {
        if synchronous {
            let r = self.isend(now, peer, segments, match_info, context, synchronous)?;
            return Ok((r, None));
        }
        match self.fast_frame(peer, segments, match_info, buf) {
            Some((loc, n)) => {
                let r = self.fast_sent(peer, segments, match_info, context)?;
                Ok((r, Some((loc, n))))
            }
            None => {
                let r = self.isend(now, peer, segments, match_info, context, false)?;
                Ok((r, None))
            }
        }
    }

    /// The send fast path, first half: when the transport is lossless, nothing is queued
    /// for the peer, the message fits one frame and a request is free, writes the
    /// message's frame into `buf`, counts it sent and returns where it goes and its
    /// length. The caller
    /// hands the frame to the transport and then calls [`Engine::fast_sent`] with the
    /// same arguments; nothing else may happen in between. `None`, having changed
    /// nothing, when the message must take [`Engine::isend`].
    ///
    /// Split in two so the frame leaves before the request's bookkeeping is done: that
    /// bookkeeping is off the latency path.
    #[inline(always)]
    pub fn fast_frame(
        &mut self,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        buf: &mut [u8],
    ) -> Option<(L, usize)> {
        if !self.cfg.reliable_transport || !self.txq.is_empty() {
            return None;
        }
        let len: usize = segments.iter().map(|s| s.len()).sum();
        let room = self.free_reqs.len() + MAX_REQS.saturating_sub(self.reqs.len());
        if len > self.eager_frag() || len > self.cfg.medium_max || room == 0 {
            return None;
        }
        let kind = self.eager_kind(len);
        let p = self.peers.get(peer.0 as usize)?;
        if p.their_index == NO_PEER
            || p.unreachable
            || !p.waiting.is_empty()
            || !p.unacked.is_empty()
        {
            return None;
        }
        let n = EAGER_HEAD + len;
        let (fixed, rest) = buf.get_mut(..n)?.split_first_chunk_mut::<EAGER_HEAD>()?;
        let head = self.header(peer.0, p.tx_next);
        emit_whole_eager(&head, kind, match_info, len as u32, fixed);
        let mut at = 0;
        for s in segments {
            copy_short(&mut rest[at..at + s.len()], s);
            at += s.len();
        }
        let p = &mut self.peers[peer.0 as usize];
        p.tx_next = p.tx_next.wrapping_add(1);
        self.stats.frames_out += 1;
        self.stats.fast_sends += 1;
        Some((p.loc.clone(), n))
    }

    /// The send fast path, second half: the request of the message whose frame
    /// [`Engine::fast_frame`] just wrote, already complete. (It cannot run out of
    /// requests: `fast_frame` checked that one is free.)
    #[inline(always)]
    pub fn fast_sent(
        &mut self,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        context: u64,
    ) -> Result<Request, Error> {
        let len: usize = segments.iter().map(|s| s.len()).sum();
        let h = self.alloc(ReqKind::Send, context)?;
        let r = &mut self.reqs[Request(h).index()];
        r.peer = peer.0;
        r.match_info = match_info;
        r.msg_len = len;
        r.xfer_len = len;
        r.state = ReqState::Done;
        self.completed.push_back(h);
        Ok(Request(h))
    }

    /// Sends `data`, taking it (no copy); the completion hands it back, as the buffer of
    /// its [`Engine::test`].
    pub fn isend_vec(
        &mut self,
        _now: u64,
        peer: PeerId,
        data: Vec<u8>,
        match_info: u64,
        context: u64,
        synchronous: bool,
    ) -> Result<Request, Error> {
        self.check_send(peer, data.len())?;
        let h = self.alloc(ReqKind::Send, context)?;
        let r = &mut self.reqs[Request(h).index()];
        r.data = data;
        r.give_back = true;
        Ok(self.start_send(h, peer, match_info, synchronous))
    }

    /// Starts sending a message of `len` bytes that the caller keeps: no copy is taken.
    /// Every call that may emit its bytes ([`Engine::transmit_front`],
    /// [`Engine::poll_transmit_lent`]) must be given it as [`Lent`] until the request
    /// completes or [`Engine::unlend`] copies it in; a frame that needs the bytes and
    /// does not get them is not sent (a caller's bug, caught by a debug assertion).
    pub fn isend_lent(
        &mut self,
        _now: u64,
        peer: PeerId,
        len: usize,
        match_info: u64,
        context: u64,
        synchronous: bool,
    ) -> Result<Request, Error> {
        self.check_send(peer, len)?;
        let h = self.alloc(ReqKind::Send, context)?;
        self.reqs[Request(h).index()].lent = true;
        Ok(self.start_send_len(h, peer, match_info, synchronous, len))
    }

    /// The caller stops lending a send's message: what is still needed is copied in.
    pub fn unlend(&mut self, req: Request, segments: &[&[u8]]) {
        let Some(r) = self.req_mut(req.raw()) else {
            return;
        };
        if r.lent {
            r.lent = false;
            if r.state != ReqState::Done {
                let len = r.msg_len;
                concat_into(&mut r.data, segments, len);
            }
        }
    }

    fn check_send(&self, peer: PeerId, len: usize) -> Result<(), Error> {
        let max = self.cfg.max_message.min(u32::MAX as usize);
        if len > max {
            return Err(Error::TooLarge { len, max });
        }
        self.check_peer(peer)
    }

    /// Queues the message now in request `h`'s vector.
    fn start_send(&mut self, h: u32, peer: PeerId, match_info: u64, synchronous: bool) -> Request {
        let len = self.reqs[Request(h).index()].data.len();
        self.start_send_len(h, peer, match_info, synchronous, len)
    }

    /// Queues the message of `len` bytes of request `h` (in its vector, or lent).
    fn start_send_len(
        &mut self,
        h: u32,
        peer: PeerId,
        match_info: u64,
        synchronous: bool,
        len: usize,
    ) -> Request {
        let large = self.cfg.medium_max;
        let r = &mut self.reqs[Request(h).index()];
        r.peer = peer.0;
        r.match_info = match_info;
        r.msg_len = len;
        r.xfer_len = len;
        r.state = ReqState::Active;
        r.need_notify = synchronous || len > large;
        if self.peers[peer.0 as usize].unreachable {
            self.complete(h, Code::Unreachable);
            return Request(h);
        }
        self.peers[peer.0 as usize].waiting.push_back(h);
        self.fill_window(peer.0);
        Request(h)
    }

    /// The message class of an eager message of `len` bytes.
    fn eager_kind(&self, len: usize) -> Kind {
        if len <= self.cfg.tiny_max {
            Kind::Tiny
        } else if len <= self.cfg.small_max {
            Kind::Small
        } else {
            Kind::Medium
        }
    }

    fn eager_frag(&self) -> usize {
        let room = self
            .cfg
            .mtu
            .saturating_sub(HEADER_LEN + Kind::Medium.body_len());
        self.cfg.medium_frag.min(room).max(1)
    }

    /// Moves waiting messages into the send window as sequenced frames.
    fn fill_window(&mut self, peer: u16) {
        let frag = self.eager_frag();
        loop {
            let p = &self.peers[peer as usize];
            let Some(&h) = p.waiting.front() else { return };
            let Some(r) = self.req(h) else {
                self.peers[peer as usize].waiting.pop_front();
                continue;
            };
            let len = r.msg_len;
            let large = len > self.cfg.medium_max;
            let frames = if large { 1 } else { len.div_ceil(frag).max(1) };
            let in_flight = p.unacked.len();
            if in_flight > 0 && in_flight + frames > self.cfg.send_window as usize {
                return;
            }
            let kind = self.eager_kind(len);
            let p = &mut self.peers[peer as usize];
            p.waiting.pop_front();
            for i in 0..frames {
                let seq = p.tx_next;
                p.tx_next = p.tx_next.wrapping_add(1);
                let what = if large {
                    SeqWhat::Rndv { req: h }
                } else {
                    let off = i * frag;
                    SeqWhat::Eager {
                        req: h,
                        kind,
                        offset: off as u32,
                        len: (len - off).min(frag) as u32,
                    }
                };
                p.unacked.push_back(Unacked {
                    seq,
                    what,
                    first_sent: 0,
                    last_sent: 0,
                    queued: true,
                });
                self.txq.push_back(Tx::Seq { peer, seq });
            }
            self.reqs[Request(h).index()].outstanding = frames as u32;
        }
    }

    // ---------------------------------------------------------------- receive

    /// Posts a receive for a message with `(message_match & mask) == match_info`.
    pub fn irecv(
        &mut self,
        now: u64,
        buf: RecvBuf,
        match_info: u64,
        mask: u64,
        context: u64,
    ) -> Result<Request, Error> {
        if match_info & !mask != 0 {
            return Err(Error::BadMatchMask { match_info, mask });
        }
        let h = self.alloc(ReqKind::Recv, context)?;
        {
            let r = &mut self.reqs[Request(h).index()];
            r.match_info = match_info;
            r.mask = mask;
            r.recv = Some(buf);
        }
        // Unexpected messages first, oldest first.
        if let Some(pos) = self
            .unexpected
            .iter()
            .position(|u| u.match_info & mask == match_info)
        {
            let u = self.unexpected.remove(pos).expect("position found");
            self.unexpected_bytes -= u.data.len();
            self.take_unexpected(now, h, u);
        } else {
            self.posted.push_back(h);
        }
        Ok(Request(h))
    }

    /// A receive matched an unexpected message.
    fn take_unexpected(&mut self, now: u64, h: u32, u: Unexpected) {
        let idx = Request(h).index();
        self.bind_match(h, u.peer, u.match_info, u.msg_len);
        if u.rndv {
            self.start_pull(now, h, u.handle);
            return;
        }
        let r = &mut self.reqs[idx];
        let buf = r.recv.as_mut().expect("receive has a buffer");
        r.xfer_len = u.msg_len.min(buf.len());
        buf.write_at(0, &u.data[..u.received]);
        if u.handle != NO_HANDLE {
            self.queue_notify(u.peer, u.handle);
        }
        let mut data = u.data;
        data.clear();
        if self.keep(&data) {
            self.pool.push(data);
        }
        if u.received == u.msg_len {
            self.finish_recv(h);
        } else if let Some(cur) = self.peers[u.peer as usize].rx_current.as_mut() {
            // Still arriving: the rest goes straight to the receive.
            if matches!(cur.target, RxTarget::Unexpected(id) if id == u.id) {
                cur.target = RxTarget::Recv(h);
            }
        }
    }

    /// A receive matched a message: it takes the message's source, match info and length.
    fn bind_match(&mut self, h: u32, peer: u16, match_info: u64, msg_len: usize) -> &mut Req {
        let r = &mut self.reqs[Request(h).index()];
        r.state = ReqState::Active;
        r.peer = peer;
        r.match_info = match_info;
        r.msg_len = msg_len;
        r
    }

    #[inline(always)]
    fn finish_recv(&mut self, h: u32) {
        let r = &self.reqs[Request(h).index()];
        let code = Code::of_receive(r.xfer_len, r.msg_len);
        self.complete(h, code);
    }

    #[inline(always)]
    fn find_posted(&mut self, match_info: u64) -> Option<u32> {
        let &first = self.posted.front()?;
        let r = &self.reqs[Request(first).index()];
        if match_info & r.mask == r.match_info {
            return self.posted.pop_front();
        }
        let pos = self.posted.iter().position(|&h| {
            let r = &self.reqs[Request(h).index()];
            match_info & r.mask == r.match_info
        })?;
        self.posted.remove(pos)
    }

    // ---------------------------------------------------------------- frames in

    /// A frame arrived from the transport at `from`.
    pub fn handle_frame(&mut self, now: u64, from: &L, bytes: &[u8]) -> Handled {
        self.stats.frames_in += 1;
        if self.cfg.reliable_transport && self.whole_eager_fast(bytes) {
            return Handled::Accepted;
        }
        let Ok(frame) = Frame::new_checked(bytes) else {
            self.stats.bad_frames += 1;
            return Handled::Dropped;
        };
        let Ok(repr) = Repr::parse(&frame) else {
            self.stats.bad_frames += 1;
            return Handled::Dropped;
        };
        let h = repr.header;
        if h.dst_endpoint != self.endpoint {
            self.stats.stale_frames += 1;
            return Handled::Dropped;
        }
        match repr.body {
            Body::Connect {
                key,
                index,
                request,
            } => {
                self.on_connect(from, &h, key, index, request);
                return Handled::Accepted;
            }
            Body::ConnectReply {
                status,
                index,
                request,
            } => {
                self.on_connect_reply(&h, status, index, request);
                return Handled::Accepted;
            }
            _ => {}
        }
        let pi = h.peer_index as usize;
        let ok = self.peers.get(pi).is_some_and(|p| {
            p.nic == h.nic && p.endpoint == h.src_endpoint && p.session == h.session
        });
        if !ok {
            self.stats.stale_frames += 1;
            return Handled::Dropped;
        }
        let peer = pi as u16;
        if !self.cfg.reliable_transport {
            self.on_ack(peer, h.ack);
        }
        let kind = repr.body.kind();
        if !kind.sequenced() {
            self.on_unsequenced(now, peer, &repr.body);
            return Handled::Accepted;
        }
        let p = &mut self.peers[pi];
        if self.cfg.reliable_transport || h.seq == p.rx_next {
            let r = self.on_sequenced(now, peer, &repr.body);
            if r == Handled::Busy {
                self.stats.busy += 1;
                return r;
            }
            self.advance_rx(now, peer);
            self.drain_early(now, peer);
            Handled::Accepted
        } else if seq_lt(h.seq, p.rx_next) {
            self.stats.duplicates += 1;
            // Our ack was probably lost: repeat it now.
            self.queue_ack(peer);
            Handled::Dropped
        } else if h.seq.wrapping_sub(p.rx_next) < self.cfg.early_window {
            if !p.early.contains_key(&h.seq) {
                let mut v = self.pool.pop().unwrap_or_default();
                v.clear();
                v.extend_from_slice(bytes);
                self.peers[pi].early.insert(h.seq, v);
                self.stats.early_held += 1;
            } else {
                self.stats.duplicates += 1;
            }
            Handled::Accepted
        } else {
            self.stats.stale_frames += 1;
            Handled::Dropped
        }
    }

    /// A whole message in one frame from a connected peer with nothing half-received,
    /// wanting no notify: what the lossless receive fast paths may take straight from
    /// the frame bytes. With the peer's index.
    #[inline(always)]
    fn whole_eager_in_order<'b>(&self, bytes: &'b [u8]) -> Option<(WholeEager<'b>, usize)> {
        let m = parse_whole_eager(bytes)?;
        let hd = &m.header;
        let pi = hd.peer_index as usize;
        let known = self.peers.get(pi).is_some_and(|p| {
            p.nic == hd.nic
                && p.endpoint == hd.src_endpoint
                && p.session == hd.session
                && p.rx_current.is_none()
        });
        if !known || hd.dst_endpoint != self.endpoint || m.handle != NO_HANDLE {
            return None;
        }
        Some((m, pi))
    }

    /// The receive fast path of lossless transports: a whole message in one frame, from
    /// a connected peer with nothing half-received, for a posted receive and with no
    /// notify wanted. Returns false, having changed nothing, for any other frame.
    fn whole_eager_fast(&mut self, bytes: &[u8]) -> bool {
        let Some((m, pi)) = self.whole_eager_in_order(bytes) else {
            return false;
        };
        let Some(h) = self.find_posted(m.match_info) else {
            return false;
        };
        let len = m.data.len();
        let r = self.bind_match(h, pi as u16, m.match_info, len);
        if let Some(buf) = r.recv.as_mut() {
            r.xfer_len = len.min(buf.len());
            buf.write_at(0, m.data);
        }
        let p = &mut self.peers[pi];
        p.rx_next = p.rx_next.wrapping_add(1);
        self.stats.fast_recvs += 1;
        self.finish_recv(h);
        true
    }

    /// Whether a blocking receive may wait through [`Engine::handle_frame_direct`]
    /// instead of a posted request: the transport is lossless, no receive is posted
    /// (it would come first), no unexpected message matches (it would be taken first)
    /// and no unexpected-message handler is set (it must not see a message that a
    /// posted receive would have taken).
    #[inline]
    pub fn direct_ok(&self, match_info: u64, mask: u64) -> bool {
        self.cfg.reliable_transport
            && self.posted.is_empty()
            && self.handler.is_none()
            && !self
                .unexpected
                .iter()
                .any(|u| u.match_info & mask == match_info)
    }

    /// [`Engine::handle_frame`] while a blocking receive waits without a request (see
    /// [`Engine::direct_ok`]): a whole single-frame message that matches it goes
    /// straight into its buffer, as a posted receive's would. Any frame that takes the
    /// general path sets [`DirectRecv::slow`]: it may have left a matching message in
    /// the unexpected queue, so the caller must look there (and post a receive) before
    /// taking another frame directly, or messages would be matched out of order.
    #[inline(always)]
    pub fn handle_frame_direct(
        &mut self,
        now: u64,
        from: &L,
        bytes: &[u8],
        d: &mut DirectRecv,
    ) -> Handled {
        // Only where frames cannot be lost or reordered: no sequence check here.
        if self.cfg.reliable_transport && d.done.is_none() && !d.slow {
            if let Some((m, pi)) = self.whole_eager_in_order(bytes) {
                if m.match_info & d.mask == d.match_info {
                    let len = m.data.len();
                    let xfer = len.min(d.buf.len());
                    d.buf.write_at(0, m.data);
                    let p = &mut self.peers[pi];
                    p.rx_next = p.rx_next.wrapping_add(1);
                    self.stats.frames_in += 1;
                    self.stats.fast_recvs += 1;
                    d.done = Some(Status {
                        code: Code::of_receive(xfer, len),
                        source: PeerId(pi as u16),
                        match_info: m.match_info,
                        msg_len: len,
                        xfer_len: xfer,
                        context: 0,
                    });
                    return Handled::Accepted;
                }
            }
            d.slow = true;
        }
        self.handle_frame(now, from, bytes)
    }

    fn advance_rx(&mut self, now: u64, peer: u16) {
        let p = &mut self.peers[peer as usize];
        p.rx_next = p.rx_next.wrapping_add(1);
        if self.cfg.reliable_transport {
            return;
        }
        p.rx_unacked += 1;
        if p.rx_unacked >= self.cfg.ack_after {
            self.queue_ack(peer);
        } else if p.ack_deadline.is_none() {
            p.ack_deadline = Some(now + self.cfg.ack_delay_ns);
        }
    }

    fn drain_early(&mut self, now: u64, peer: u16) {
        if self.peers[peer as usize].early.is_empty() {
            return;
        }
        loop {
            let p = &mut self.peers[peer as usize];
            let next = p.rx_next;
            let Some(buf) = p.early.remove(&next) else {
                return;
            };
            let Ok(frame) = Frame::new_checked(&buf[..]) else {
                return;
            };
            let Ok(repr) = Repr::parse(&frame) else {
                return;
            };
            let body = repr.body;
            let r = self.on_sequenced(now, peer, &body);
            if r == Handled::Busy {
                self.peers[peer as usize].early.insert(next, buf);
                return;
            }
            if self.pool.len() < 64 {
                self.pool.push(buf);
            }
            self.advance_rx(now, peer);
        }
    }

    fn queue_ack(&mut self, peer: u16) {
        let p = &mut self.peers[peer as usize];
        if !p.ack_queued {
            p.ack_queued = true;
            self.txq.push_back(Tx::Ack { peer });
        }
    }

    fn on_ack(&mut self, peer: u16, ack: u16) {
        let mut freed = false;
        loop {
            let p = &mut self.peers[peer as usize];
            let Some(front) = p.unacked.front() else {
                break;
            };
            if !seq_lt(front.seq, ack) {
                break;
            }
            let u = p.unacked.pop_front().expect("front exists");
            freed = true;
            self.frame_done(u.what);
        }
        if freed {
            self.fill_window(peer);
        }
    }

    /// A sequenced frame is acknowledged (or emitted, on a lossless transport).
    fn frame_done(&mut self, what: SeqWhat) {
        let h = match what {
            SeqWhat::Eager { req, .. } | SeqWhat::Rndv { req } => req,
            SeqWhat::Notify { .. } => return,
        };
        let Some(r) = self.req_mut(h) else { return };
        r.outstanding = r.outstanding.saturating_sub(1);
        if r.outstanding == 0 && !r.need_notify && r.state == ReqState::Active {
            self.complete(h, Code::Success);
        }
    }

    fn on_connect(&mut self, from: &L, h: &Header, key: u32, index: u16, request: u32) {
        let status = if key != self.key {
            CONNECT_BAD_KEY
        } else {
            CONNECT_OK
        };
        let Ok(pi) = self.peer_slot(from.clone(), h.nic, h.src_endpoint) else {
            self.stats.stale_frames += 1;
            return;
        };
        if status != CONNECT_OK {
            // Reply without binding the peer: it learns nothing but the refusal.
            self.txq.push_back(Tx::Refuse {
                peer: pi,
                status,
                request,
            });
            let p = &mut self.peers[pi as usize];
            if p.session == 0 {
                p.their_index = NO_PEER;
            }
            return;
        }
        self.bind_session(pi, h.session);
        self.peers[pi as usize].their_index = index;
        self.txq.push_back(Tx::ConnectReply {
            peer: pi,
            status,
            request,
        });
    }

    /// Records the peer's session; a different one means it restarted.
    fn bind_session(&mut self, pi: u16, session: u32) {
        let p = &mut self.peers[pi as usize];
        if p.session == session {
            return;
        }
        let restarted = p.session != 0;
        p.session = session;
        p.reset_session();
        if restarted {
            self.fail_peer(pi, Code::PeerReset, false);
        }
    }

    /// Disconnects from a peer, as `mx_disconnect` does: every unfinished request
    /// involving it (sends, receives it is filling, a connect in progress) completes
    /// with [`Code::Disconnected`], its half-arrived unexpected messages are dropped
    /// (whole ones stay, to be received), sends to it are refused with
    /// [`Error::NotConnected`] and its frames are dropped until one side connects
    /// again. The peer is not told; when we connect again it sees a new session, as
    /// after a restart, and its own requests to us end with [`Code::PeerReset`].
    pub fn disconnect(&mut self, peer: PeerId) -> Result<(), Error> {
        let pi = peer.0;
        if pi as usize >= self.peers.len() {
            return Err(Error::UnknownPeer(peer));
        }
        self.fail_peer(pi, Code::Disconnected, true);
        let p = &mut self.peers[pi as usize];
        p.reset_session();
        p.session = 0;
        p.their_index = NO_PEER;
        let next = p.my_session.wrapping_add(0x9e37_79b9);
        p.my_session = if next == 0 { 1 } else { next };
        Ok(())
    }

    /// The transport says the peer at `loc` is gone (its process died): its requests in
    /// progress complete with [`Code::Unreachable`], and so do new sends to it until it
    /// connects again.
    pub fn peer_gone(&mut self, loc: &L) {
        for pi in 0..self.peers.len() {
            if self.peers[pi].loc == *loc && self.peers[pi].their_index != NO_PEER {
                self.fail_peer(pi as u16, Code::Unreachable, false);
                self.peers[pi].unreachable = true;
            }
        }
    }

    /// Ends every unfinished request that involves a peer (connects in progress only when
    /// `connects_too`: a restart or a death is learnt while a connect may be answering).
    fn fail_peer(&mut self, pi: u16, code: Code, connects_too: bool) {
        let hs: Vec<u32> = (0..self.reqs.len())
            .filter_map(|i| {
                let r = &self.reqs[i];
                let live = matches!(r.state, ReqState::Active)
                    && r.peer == pi
                    && (connects_too || r.kind != ReqKind::Connect);
                live.then(|| Request::new(i, r.gen).raw())
            })
            .collect();
        for h in hs {
            self.complete(h, code);
        }
        let p = &mut self.peers[pi as usize];
        p.unacked.clear();
        p.waiting.clear();
        p.rx_current = None;
        self.txq.retain(|t| match *t {
            Tx::Seq { peer, .. } | Tx::Ack { peer } | Tx::PullReply { peer, .. } => peer != pi,
            _ => true,
        });
        // Unexpected messages of the old session can no longer be pulled or finished.
        let mut bytes = 0;
        self.unexpected.retain(|u| {
            let keep = u.peer != pi || (!u.rndv && u.received == u.msg_len);
            if !keep {
                bytes += u.data.len();
            }
            keep
        });
        self.unexpected_bytes -= bytes;
    }

    fn on_connect_reply(&mut self, h: &Header, status: u8, index: u16, request: u32) {
        let Some(r) = self.req(request) else {
            self.stats.stale_frames += 1;
            return;
        };
        if r.kind != ReqKind::Connect || r.state != ReqState::Active {
            self.stats.stale_frames += 1;
            return;
        }
        let pi = r.peer;
        let p = &self.peers[pi as usize];
        if p.nic != h.nic || p.endpoint != h.src_endpoint {
            self.stats.stale_frames += 1;
            return;
        }
        let code = match status {
            CONNECT_OK => Code::Success,
            CONNECT_BAD_KEY => Code::BadKey,
            _ => Code::NoEndpoint,
        };
        if code == Code::Success {
            self.bind_session(pi, h.session);
            self.peers[pi as usize].their_index = index;
        }
        self.complete(request, code);
    }

    fn on_unsequenced(&mut self, now: u64, peer: u16, body: &Body<'_>) {
        match *body {
            Body::Ack => {}
            Body::Pull {
                handle,
                recv_handle,
                offset,
                length,
            } => {
                let Some(r) = self.req(handle) else {
                    self.stats.stale_frames += 1;
                    return;
                };
                let (offset, end) = (offset as usize, offset as usize + length as usize);
                let have = if r.lent { r.msg_len } else { r.data.len() };
                if r.kind != ReqKind::Send || r.peer != peer || end > have {
                    self.stats.bad_frames += 1;
                    return;
                }
                self.txq.push_back(Tx::PullReply {
                    peer,
                    send: handle,
                    recv_handle,
                    offset,
                    end,
                });
            }
            Body::PullReply {
                recv_handle,
                offset,
                data,
            } => self.on_pull_reply(now, peer, recv_handle, offset as usize, data),
            _ => self.stats.bad_frames += 1,
        }
    }

    fn on_sequenced(&mut self, now: u64, peer: u16, body: &Body<'_>) -> Handled {
        match *body {
            Body::Eager {
                match_info,
                msg_len,
                offset,
                handle,
                data,
                ..
            } => self.on_eager(
                peer,
                match_info,
                msg_len as usize,
                offset as usize,
                handle,
                data,
            ),
            Body::Rndv {
                match_info,
                msg_len,
                handle,
            } => self.on_rndv(now, peer, match_info, msg_len as usize, handle),
            Body::Notify { handle } => {
                let large = self.cfg.medium_max;
                if let Some(r) = self.req_mut(handle) {
                    if r.kind == ReqKind::Send && r.peer == peer && r.need_notify {
                        r.need_notify = false;
                        if r.msg_len > large {
                            // Pulled means delivered, whatever became of the rendezvous ack.
                            r.outstanding = 0;
                        }
                        if r.outstanding == 0 && r.state == ReqState::Active {
                            self.complete(handle, Code::Success);
                        }
                    }
                }
                Handled::Accepted
            }
            _ => {
                self.stats.bad_frames += 1;
                Handled::Accepted
            }
        }
    }

    fn unexpected_full(&self, extra: usize) -> bool {
        self.unexpected.len() >= self.cfg.unexpected_max
            || self.unexpected_bytes + extra > self.cfg.unexpected_max_bytes
    }

    /// Finds the receive for a new message: posted, the handler's, or none.
    fn match_new(&mut self, peer: u16, match_info: u64, msg_len: usize) -> Option<u32> {
        if let Some(h) = self.find_posted(match_info) {
            return Some(h);
        }
        let mut handler = self.handler.take()?;
        let info = UnexpectedInfo {
            source: PeerId(peer),
            match_info,
            msg_len,
        };
        let action = handler(&info);
        self.handler = Some(handler);
        match action {
            HandlerAction::Continue => None,
            HandlerAction::Receive { buf, context } => {
                let h = self.alloc(ReqKind::Recv, context).ok()?;
                let r = &mut self.reqs[Request(h).index()];
                r.match_info = match_info;
                r.mask = u64::MAX;
                r.recv = Some(buf);
                Some(h)
            }
        }
    }

    fn on_eager(
        &mut self,
        peer: u16,
        match_info: u64,
        msg_len: usize,
        offset: usize,
        handle: u32,
        data: &[u8],
    ) -> Handled {
        let cur = self.peers[peer as usize].rx_current;
        let target = match cur {
            Some(c) => {
                if offset != c.next_offset || msg_len != c.msg_len {
                    self.stats.bad_frames += 1;
                    return Handled::Accepted;
                }
                c.target
            }
            None => {
                if offset != 0 {
                    self.stats.bad_frames += 1;
                    return Handled::Accepted;
                }
                match self.match_new(peer, match_info, msg_len) {
                    Some(h) => {
                        let r = self.bind_match(h, peer, match_info, msg_len);
                        r.xfer_len = msg_len.min(r.recv.as_ref().map_or(0, |b| b.len()));
                        if handle != NO_HANDLE {
                            self.queue_notify(peer, handle);
                        }
                        RxTarget::Recv(h)
                    }
                    None => {
                        if self.unexpected_full(msg_len) {
                            return Handled::Busy;
                        }
                        let id = self.next_unexpected_id;
                        self.next_unexpected_id += 1;
                        let mut buf = self.pool.pop().unwrap_or_default();
                        buf.clear();
                        buf.resize(msg_len, 0);
                        self.unexpected_bytes += msg_len;
                        self.unexpected.push_back(Unexpected {
                            id,
                            peer,
                            match_info,
                            msg_len,
                            data: buf,
                            received: 0,
                            handle,
                            rndv: false,
                        });
                        RxTarget::Unexpected(id)
                    }
                }
            }
        };
        let end = offset + data.len();
        match target {
            RxTarget::Recv(h) => {
                if let Some(buf) = self.reqs[Request(h).index()].recv.as_mut() {
                    buf.write_at(offset, data);
                }
            }
            RxTarget::Unexpected(id) => {
                if let Some(u) = self.unexpected.iter_mut().find(|u| u.id == id) {
                    u.data[offset..end].copy_from_slice(data);
                    u.received = end;
                }
            }
        }
        if end >= msg_len {
            self.peers[peer as usize].rx_current = None;
            if let RxTarget::Recv(h) = target {
                self.finish_recv(h);
            }
        } else {
            self.peers[peer as usize].rx_current = Some(RxCurrent {
                target,
                next_offset: end,
                msg_len,
            });
        }
        Handled::Accepted
    }

    fn on_rndv(
        &mut self,
        now: u64,
        peer: u16,
        match_info: u64,
        msg_len: usize,
        handle: u32,
    ) -> Handled {
        if self.peers[peer as usize].rx_current.is_some() {
            self.stats.bad_frames += 1;
            return Handled::Accepted;
        }
        match self.match_new(peer, match_info, msg_len) {
            Some(h) => {
                self.bind_match(h, peer, match_info, msg_len);
                self.start_pull(now, h, handle);
            }
            None => {
                if self.unexpected_full(0) {
                    return Handled::Busy;
                }
                let id = self.next_unexpected_id;
                self.next_unexpected_id += 1;
                self.unexpected.push_back(Unexpected {
                    id,
                    peer,
                    match_info,
                    msg_len,
                    data: Vec::new(),
                    received: 0,
                    handle,
                    rndv: true,
                });
            }
        }
        Handled::Accepted
    }

    fn queue_notify(&mut self, peer: u16, handle: u32) {
        let p = &mut self.peers[peer as usize];
        let seq = p.tx_next;
        p.tx_next = p.tx_next.wrapping_add(1);
        p.unacked.push_back(Unacked {
            seq,
            what: SeqWhat::Notify { handle },
            first_sent: 0,
            last_sent: 0,
            queued: true,
        });
        self.txq.push_back(Tx::Seq { peer, seq });
    }

    // ---------------------------------------------------------------- pull

    fn start_pull(&mut self, now: u64, h: u32, sender_handle: u32) {
        let r = &mut self.reqs[Request(h).index()];
        let room = r.recv.as_ref().map_or(0, |b| b.len());
        r.xfer_len = r.msg_len.min(room);
        r.pull = Some(Box::new(Pull {
            sender_handle,
            last_progress: now,
            ..Default::default()
        }));
        if r.xfer_len == 0 {
            self.finish_pull(h);
            return;
        }
        self.request_blocks(now, h);
    }

    /// Keeps `pull_window` blocks requested.
    fn request_blocks(&mut self, now: u64, h: u32) {
        let block = self.cfg.pull_block.max(1);
        let r = &mut self.reqs[Request(h).index()];
        let total = r.xfer_len;
        let Some(pull) = r.pull.as_mut() else { return };
        while pull.blocks.len() < self.cfg.pull_window.max(1) && pull.next < total {
            let start = pull.next;
            let end = (start + block).min(total);
            pull.next = end;
            pull.blocks.push_back((start, end, now));
            self.txq.push_back(Tx::Pull {
                req: h,
                offset: start,
                len: end - start,
            });
        }
    }

    fn on_pull_reply(&mut self, now: u64, peer: u16, h: u32, offset: usize, data: &[u8]) {
        let Some(r) = self.req_mut(h) else {
            self.stats.stale_frames += 1;
            return;
        };
        if r.kind != ReqKind::Recv || r.peer != peer || r.pull.is_none() {
            self.stats.stale_frames += 1;
            return;
        }
        let end = offset + data.len();
        if end > r.xfer_len {
            self.stats.bad_frames += 1;
            return;
        }
        let pull = r.pull.as_mut().expect("checked");
        if pull.add(offset, end) == 0 {
            self.stats.duplicates += 1;
            return;
        }
        pull.last_progress = now;
        if let Some(buf) = r.recv.as_mut() {
            buf.write_at(offset, data);
        }
        let pull = r.pull.as_mut().expect("checked");
        let before = pull.blocks.len();
        let Pull { have, blocks, .. } = &mut **pull;
        blocks.retain(|&(a, b, _)| !Pull::covers(have, a, b));
        let done = pull.received >= r.xfer_len;
        let progressed = pull.blocks.len() < before;
        if done {
            self.finish_pull(h);
        } else if progressed {
            self.request_blocks(now, h);
        }
    }

    fn finish_pull(&mut self, h: u32) {
        let r = &mut self.reqs[Request(h).index()];
        let (peer, handle) = (
            r.peer,
            r.pull.as_ref().map_or(NO_HANDLE, |p| p.sender_handle),
        );
        r.pull = None;
        self.queue_notify(peer, handle);
        self.finish_recv(h);
    }

    // ---------------------------------------------------------------- frames out

    fn header(&self, peer: u16, seq: u16) -> Header {
        let p = &self.peers[peer as usize];
        Header {
            peer_index: p.their_index,
            nic: self.nic,
            src_endpoint: self.endpoint,
            dst_endpoint: p.endpoint,
            session: p.my_session,
            seq,
            ack: p.rx_next,
        }
    }

    /// Whether [`Engine::poll_transmit`] has a frame to give.
    #[inline]
    pub fn has_transmit(&self) -> bool {
        !self.txq.is_empty()
    }

    /// Writes the next frame into `buf` (at least [`Config::mtu`] bytes); returns where
    /// it goes and its length.
    pub fn poll_transmit(&mut self, now: u64, buf: &mut [u8]) -> Option<(L, usize)> {
        self.poll_transmit_lent(now, buf, None)
    }

    /// [`Engine::poll_transmit`] while a send's message is lent (see [`Engine::isend_lent`]).
    pub fn poll_transmit_lent(
        &mut self,
        now: u64,
        buf: &mut [u8],
        lent: Lent<'_>,
    ) -> Option<(L, usize)> {
        while !self.txq.is_empty() {
            if let Some(x) = self.transmit_front(now, buf, lent) {
                return Some(x);
            }
        }
        None
    }

    /// Where the next frame of [`Engine::poll_transmit`] goes, when that is known
    /// without emitting it: the caller can then fetch room for it at the destination
    /// (a ring slot) and emit with [`Engine::transmit_front`], saving a copy.
    pub fn next_transmit_to(&self) -> Option<&L> {
        let peer = match *self.txq.front()? {
            Tx::Seq { peer, .. }
            | Tx::Ack { peer }
            | Tx::ConnectReply { peer, .. }
            | Tx::Refuse { peer, .. }
            | Tx::PullReply { peer, .. } => peer,
            Tx::Connect { req } | Tx::Pull { req, .. } => self.req(req)?.peer,
        };
        self.peers.get(peer as usize).map(|p| &p.loc)
    }

    /// Emits the first queued frame into `buf`; `None` when it had become stale (an
    /// acknowledged frame, a finished request), with nothing to send. Call it right
    /// after [`Engine::next_transmit_to`]: the frame goes where that said.
    pub fn transmit_front(
        &mut self,
        now: u64,
        buf: &mut [u8],
        lent: Lent<'_>,
    ) -> Option<(L, usize)> {
        let tx = self.txq.pop_front()?;
        let (peer, n) = self.emit(now, tx, buf, lent)?;
        self.stats.frames_out += 1;
        let p = &mut self.peers[peer as usize];
        // Every frame carries the ack.
        p.rx_unacked = 0;
        p.ack_deadline = None;
        Some((p.loc.clone(), n))
    }

    fn emit(&mut self, now: u64, tx: Tx, buf: &mut [u8], lent: Lent<'_>) -> Option<(u16, usize)> {
        match tx {
            Tx::Seq { peer, seq } => {
                let p = &mut self.peers[peer as usize];
                let pos = p.unacked.iter().position(|u| u.seq == seq)?;
                let u = &mut p.unacked[pos];
                u.queued = false;
                if u.first_sent == 0 {
                    u.first_sent = now.max(1);
                } else {
                    self.stats.retransmits += 1;
                }
                u.last_sent = now;
                let what = u.what;
                let h = self.header(peer, seq);
                let n = match what {
                    SeqWhat::Eager {
                        req,
                        kind,
                        offset,
                        len,
                    } => {
                        let r = self.req(req)?;
                        let (o, l) = (offset as usize, len as usize);
                        let body = Body::Eager {
                            kind,
                            match_info: r.match_info,
                            msg_len: r.msg_len as u32,
                            offset,
                            handle: if r.need_notify { req } else { NO_HANDLE },
                            data: &[],
                        };
                        let n = emit_head(&h, &body, buf, l).ok()?;
                        if r.lent {
                            let segs = lent_for(req, lent)?;
                            gather(segs, o, &mut buf[n - l..n]);
                        } else {
                            buf[n - l..n].copy_from_slice(&r.data[o..o + l]);
                        }
                        n
                    }
                    SeqWhat::Rndv { req } => {
                        let r = self.req(req)?;
                        let body = Body::Rndv {
                            match_info: r.match_info,
                            msg_len: r.msg_len as u32,
                            handle: req,
                        };
                        emit_head(&h, &body, buf, 0).ok()?
                    }
                    SeqWhat::Notify { handle } => {
                        emit_head(&h, &Body::Notify { handle }, buf, 0).ok()?
                    }
                };
                if self.cfg.reliable_transport {
                    let p = &mut self.peers[peer as usize];
                    if let Some(pos) = p.unacked.iter().position(|u| u.seq == seq) {
                        p.unacked.remove(pos);
                    }
                    self.frame_done(what);
                    self.fill_window(peer);
                }
                Some((peer, n))
            }
            Tx::Ack { peer } => {
                let p = &mut self.peers[peer as usize];
                p.ack_queued = false;
                if p.their_index == NO_PEER {
                    return None;
                }
                self.stats.acks_sent += 1;
                let h = self.header(peer, 0);
                Some((peer, emit_head(&h, &Body::Ack, buf, 0).ok()?))
            }
            Tx::Connect { req } => {
                let r = self.req(req)?;
                if r.state != ReqState::Active {
                    return None;
                }
                let (peer, key) = (r.peer, r.key);
                let mut h = self.header(peer, 0);
                h.peer_index = NO_PEER;
                let body = Body::Connect {
                    key,
                    index: peer,
                    request: req,
                };
                Some((peer, emit_head(&h, &body, buf, 0).ok()?))
            }
            Tx::ConnectReply {
                peer,
                status,
                request,
            }
            | Tx::Refuse {
                peer,
                status,
                request,
            } => {
                let mut h = self.header(peer, 0);
                h.peer_index = NO_PEER;
                let body = Body::ConnectReply {
                    status,
                    index: peer,
                    request,
                };
                Some((peer, emit_head(&h, &body, buf, 0).ok()?))
            }
            Tx::Pull { req, offset, len } => {
                let r = self.req(req)?;
                let pull = r.pull.as_ref()?;
                let peer = r.peer;
                let body = Body::Pull {
                    handle: pull.sender_handle,
                    recv_handle: req,
                    offset: offset as u32,
                    length: len as u32,
                };
                let h = self.header(peer, 0);
                Some((peer, emit_head(&h, &body, buf, 0).ok()?))
            }
            Tx::PullReply {
                peer,
                send,
                recv_handle,
                offset,
                end,
            } => {
                let room = self
                    .cfg
                    .mtu
                    .min(buf.len())
                    .saturating_sub(HEADER_LEN + Kind::PullReply.body_len())
                    .max(1);
                let n = (end - offset).min(room);
                if offset + n < end {
                    self.txq.push_front(Tx::PullReply {
                        peer,
                        send,
                        recv_handle,
                        offset: offset + n,
                        end,
                    });
                }
                let h = self.header(peer, 0);
                let r = self.req(send)?;
                let lent_segs = if r.lent {
                    Some(lent_for(send, lent)?)
                } else if r.data.len() < end {
                    return None;
                } else {
                    None
                };
                let body = Body::PullReply {
                    recv_handle,
                    offset: offset as u32,
                    data: &[],
                };
                let len = emit_head(&h, &body, buf, n).ok()?;
                match lent_segs {
                    Some(segs) => gather(segs, offset, &mut buf[len - n..len]),
                    None => buf[len - n..len].copy_from_slice(&r.data[offset..offset + n]),
                }
                Some((peer, len))
            }
        }
    }

    // ---------------------------------------------------------------- time

    /// The earliest time `handle_timeout` has work to do.
    pub fn poll_timeout(&self) -> Option<u64> {
        if self.cfg.reliable_transport {
            return None;
        }
        let mut t: Option<u64> = None;
        let mut at = |x: u64| t = Some(t.map_or(x, |y: u64| y.min(x)));
        for p in &self.peers {
            if let Some(d) = p.ack_deadline {
                at(d);
            }
            if let Some(u) = p
                .unacked
                .iter()
                .filter(|u| !u.queued)
                .map(|u| u.last_sent)
                .min()
            {
                at(u + self.cfg.resend_ns);
            }
        }
        for r in &self.reqs {
            if r.state != ReqState::Active {
                continue;
            }
            match r.kind {
                ReqKind::Connect => at(r.last_try + self.cfg.resend_ns),
                ReqKind::Recv => {
                    if let Some(p) = &r.pull {
                        if let Some(b) = p.blocks.iter().map(|b| b.2).min() {
                            at(b + self.cfg.resend_ns);
                        }
                    }
                }
                ReqKind::Send => {}
            }
        }
        t
    }

    /// Does what is due at `now`: delayed acks, resends, pull re-requests, timeouts.
    pub fn handle_timeout(&mut self, now: u64) {
        if self.cfg.reliable_transport {
            return;
        }
        let resend = self.cfg.resend_ns;
        for pi in 0..self.peers.len() {
            let p = &mut self.peers[pi];
            if p.ack_deadline.is_some_and(|d| d <= now) {
                p.ack_deadline = None;
                self.queue_ack(pi as u16);
            }
            let p = &mut self.peers[pi];
            let dead = p
                .unacked
                .iter()
                .any(|u| u.first_sent > 0 && now >= u.first_sent + self.cfg.request_timeout_ns);
            if dead {
                p.unreachable = true;
                self.fail_peer(pi as u16, Code::Unreachable, false);
                continue;
            }
            let p = &mut self.peers[pi];
            for u in p.unacked.iter_mut() {
                if !u.queued && u.first_sent > 0 && now >= u.last_sent + resend {
                    u.queued = true;
                    self.txq.push_back(Tx::Seq {
                        peer: pi as u16,
                        seq: u.seq,
                    });
                }
            }
        }
        for i in 0..self.reqs.len() {
            let r = &mut self.reqs[i];
            if r.state != ReqState::Active {
                continue;
            }
            let h = Request::new(i, r.gen).raw();
            match r.kind {
                ReqKind::Connect if now >= r.last_try + resend => {
                    if now >= r.started + self.cfg.connect_timeout_ns {
                        self.complete(h, Code::Unreachable);
                    } else {
                        r.last_try = now;
                        self.txq.push_back(Tx::Connect { req: h });
                    }
                }
                ReqKind::Recv => {
                    let Some(pull) = r.pull.as_mut() else {
                        continue;
                    };
                    if now >= pull.last_progress + self.cfg.request_timeout_ns {
                        self.complete(h, Code::Unreachable);
                        continue;
                    }
                    let mut due = Vec::new();
                    for b in pull.blocks.iter_mut() {
                        if now >= b.2 + resend {
                            b.2 = now;
                            due.push((b.0, b.1));
                        }
                    }
                    let again: Vec<(usize, usize)> =
                        due.iter().flat_map(|&(a, b)| pull.gaps(a, b)).collect();
                    for (a, b) in again {
                        self.stats.pull_rerequests += 1;
                        self.txq.push_back(Tx::Pull {
                            req: h,
                            offset: a,
                            len: b - a,
                        });
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Pull;

    /// Ranges arriving in any order, overlapping or repeated, merge into the set of bytes
    /// seen, and `add` counts only the new ones.
    #[test]
    fn pull_ranges_merge() {
        let mut p = Pull::default();
        assert_eq!(p.add(10, 20), 10);
        assert_eq!(p.add(30, 40), 10);
        assert_eq!(p.add(0, 5), 5);
        assert_eq!(p.have, vec![(0, 5), (10, 20), (30, 40)]);
        assert_eq!(p.add(15, 35), 10);
        assert_eq!(p.have, vec![(0, 5), (10, 40)]);
        assert_eq!(p.add(10, 40), 0);
        assert_eq!(p.add(5, 10), 5);
        assert_eq!(p.have, vec![(0, 40)]);
        assert_eq!(p.received, 40);
        assert!(Pull::covers(&p.have, 3, 40));
        assert_eq!(p.gaps(0, 50), vec![(40, 50)]);
    }

    #[test]
    fn copy_short_copies_every_length() {
        let src: Vec<u8> = (1..=70).collect();
        for n in 0..=70 {
            let mut dst = vec![0u8; n];
            super::copy_short(&mut dst, &src[..n]);
            assert_eq!(dst, src[..n], "length {n}");
        }
    }
}
