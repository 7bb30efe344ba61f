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
//! peer unreachable and fails its requests. The layer that does this is
//! [`crate::reliability`], usable by other protocols; MX's policy is one sequence number
//! per frame.
//!
//! The engine is split by the state each part owns (quinn-proto's `connection/` is the
//! model); this module is the orchestrator: the [`Engine`] itself, frame dispatch and the
//! public calls that do not belong to one part.
//!
//! * `config` — [`Config`];
//! * `types` — the API's plain types ([`Request`], [`PeerId`], [`Code`], [`Status`],
//!   [`Error`], [`Stats`], [`Handled`]…);
//! * `buffers` — where received bytes go ([`RecvBuf`]) and where sent bytes come from
//!   (gather, the buffer pool);
//! * `slab` — the request slab: allocation, completion, `test`;
//! * `peers` — peers, connect and sessions (restart, disconnect, death);
//! * `reliability` — MX's sequenced items over [`crate::reliability::Session`]: what
//!   an acknowledged frame completes, held frames delivered in order;
//! * `send` — starting sends, the send window, the send fast path;
//! * `matching` — posted and unexpected receives, the unexpected handler, eager and
//!   rendezvous arrivals, the receive fast paths;
//! * `pull` — the receive side of large messages;
//! * `frames` — frames in and out through the [`Codec`] (the layout), the transmit
//!   queue;
//! * `timers` — cached deadlines and what happens when they pass;
//! * `nack` — NACKs: answering frames of a wrong session, what one received ends, and
//!   a host's refusal of frames for endpoints not open ([`refusal`]);
//! * `regions` — the large sends' region table of layouts that name them by an 8-bit
//!   region (Open-MX: [`Codec::REGIONS`]).

mod buffers;
mod config;
mod flow;
mod frames;
mod matching;
mod nack;
mod peers;
mod pull;
mod regions;
mod reliability;
mod send;
mod slab;
mod timers;
mod types;

use std::collections::VecDeque;

use std::marker::PhantomData;

use myrix_wire::codec::seq;
pub use myrix_wire::codec::{Codec, Mx};
use myrix_wire::mx::{
    Body, Header, Kind, Repr, WholeEager, CONNECT_BAD_KEY, CONNECT_OK, NACK_BAD_ENDPOINT,
    NACK_BAD_SESSION, NACK_ENDPOINT_CLOSED, NO_HANDLE, NO_PEER,
};

pub use buffers::{RecvBuf, RecvTarget};
pub use config::Config;
pub use nack::{refusal, unopened_reason, OMX_ENDPOINT_MAX};
pub use peers::INSTANCE_BITS;
pub use types::{
    Code, DirectRecv, Error, Handled, HandlerAction, Lent, PeerId, Request, Stats, Status,
    UnexpectedHandler, UnexpectedInfo,
};

use crate::reliability::{AckDue, Arrival, Params, Session, Timeout};
use buffers::{concat_into, copy_short, gather, lent_for};
use flow::Flow;
use frames::Tx;
use matching::{RxCurrent, Unexpected};
use peers::Peer;
use pull::{pull_gaps, Pull};
use regions::Regions;
use reliability::SeqWhat;
use slab::{Req, ReqKind, ReqState, MAX_REQS};
use timers::Timers;

/// One endpoint's protocol state. See the module docs. `C` is the frame layout
/// ([`Codec`]): myrix's MX layout unless chosen with [`Engine::with_codec`].
pub struct Engine<L, C = Mx> {
    cfg: Config,
    /// `cfg`'s reliability parameters.
    reliability: Params,
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
    /// Spent vectors for unexpected messages and early frames, reused.
    pool: Vec<Vec<u8>>,
    handler: Option<UnexpectedHandler>,
    timers: Timers,
    /// Large sends' regions ([`Codec::REGIONS`]; empty otherwise).
    regions: Regions,
    stats: Stats,
    codec: PhantomData<fn() -> C>,
}

impl<L: Clone + PartialEq> Engine<L> {
    /// An engine for endpoint `endpoint` of NIC `nic` (48 bits), accepting connects
    /// with `key`, presenting `session` to its peers; frames in myrix's MX layout.
    pub fn new(cfg: Config, nic: u64, endpoint: u8, key: u32, session: u32) -> Engine<L> {
        Engine::with_codec(cfg, nic, endpoint, key, session)
    }
}

impl<L: Clone + PartialEq, C: Codec> Engine<L, C> {
    /// [`Engine::new`] with frames in the layout of codec `C`.
    pub fn with_codec(cfg: Config, nic: u64, endpoint: u8, key: u32, session: u32) -> Self {
        let regions = if C::REGIONS {
            Regions::new(cfg.large_regions)
        } else {
            Regions::default()
        };
        Engine {
            reliability: Self::params(&cfg),
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
            timers: Timers::default(),
            regions,
            stats: Stats::default(),
            codec: PhantomData,
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
    /// The reliability layer's parameters: `cfg`'s, its windows kept under half the
    /// wire's sequence space so that `codec::seq::from_wire` is exact (Open-MX's
    /// throttling limit, `OMX__THROTTLING_OFFSET_MAX`, is the same 2^13 - 1).
    fn params(cfg: &Config) -> Params {
        let mut p = cfg.reliability();
        if C::MESSAGE_SEQ {
            p.unit = crate::reliability::SeqUnit::Message;
        }
        let max = ((1u32 << (C::SEQ_BITS.min(16) - 1)) - 1).min(u16::MAX as u32) as u16;
        p.send_window = p.send_window.min(max);
        p.early_window = p.early_window.min(max);
        p
    }

    pub fn session(&self) -> u32 {
        self.session
    }
    /// Where a peer is, as the transport gave it.
    pub fn peer_location(&self, p: PeerId) -> Option<&L> {
        self.peers.get(p.0 as usize).map(|x| &x.loc)
    }
    /// The peer is gone: the transport saw its process die, or it stopped
    /// acknowledging; until it connects again. Receives are not bound to a peer (as in
    /// MX), so a caller waiting for one from it asks here.
    pub fn peer_unreachable(&self, p: PeerId) -> bool {
        self.peers
            .get(p.0 as usize)
            .is_some_and(|x| x.rel.is_unreachable())
    }
    /// NIC id and endpoint id of a peer.
    pub fn peer_identity(&self, p: PeerId) -> Option<(u64, u8)> {
        self.peers.get(p.0 as usize).map(|x| (x.nic, x.endpoint))
    }
    pub fn set_unexpected_handler(&mut self, h: Option<UnexpectedHandler>) {
        self.handler = h;
    }
    /// Changes [`Config::request_timeout_ns`] from now on (MX's
    /// `mx_set_request_timeout` with no request): frames in flight and pulls are
    /// judged by the new value at their next timer.
    pub fn set_request_timeout(&mut self, ns: u64) {
        self.cfg.request_timeout_ns = ns;
        self.reliability.timeout_ns = ns;
    }
    /// Messages in the unexpected queue.
    pub fn unexpected_len(&self) -> usize {
        self.unexpected.len()
    }
    /// True when nothing waits to be sent or acknowledged.
    pub fn idle(&self) -> bool {
        self.txq.is_empty()
            && self
                .peers
                .iter()
                .all(|p| p.rel.idle() && p.waiting.is_empty())
    }

    /// A frame arrived from the transport at `from`.
    pub fn handle_frame(&mut self, now: u64, from: &L, bytes: &[u8]) -> Handled {
        self.stats.frames_in += 1;
        if self.cfg.reliable_transport && self.whole_eager_fast(bytes) {
            return Handled::Accepted;
        }
        let Some(repr) = Self::read_frame(bytes) else {
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
                session,
            } => {
                self.on_connect_reply(&h, status, index, request, session);
                return Handled::Accepted;
            }
            _ => {}
        }
        let kind = repr.body.kind();
        let mut pi = h.peer_index as usize;
        if kind == Kind::Nack && h.peer_index == NO_PEER {
            // A host's refusal of a frame for an endpoint it has not open knows no index
            // of ours: the peer is found by its NIC id and endpoint, as Open-MX does.
            match self
                .peers
                .iter()
                .position(|p| p.nic == h.nic && p.endpoint == h.src_endpoint)
            {
                Some(i) => pi = i,
                None => {
                    self.stats.stale_frames += 1;
                    return Handled::Dropped;
                }
            }
        }
        let ok = self.peers.get(pi).is_some_and(|p| {
            let session = if C::RECEIVER_SESSION {
                p.my_session
            } else {
                p.session
            };
            p.nic == h.nic
                && (!C::carries_session(kind)
                    || (p.endpoint == h.src_endpoint && session == h.session))
        });
        if !ok {
            self.stats.stale_frames += 1;
            self.nack_bad_session(&h, &repr.body);
            return Handled::Dropped;
        }
        let peer = pi as u16;
        // The wire's numbers in the engine's (the same but for Open-MX's 14 bits); a
        // number or an ack of another session drops the frame, as Open-MX's library
        // drops obsolete ones.
        let seq = if kind.sequenced() {
            self.peers[pi].rx_from_wire::<C>(h.seq)
        } else {
            Some(0)
        };
        let ack = if C::carries_ack(kind) {
            self.peers[pi].tx_from_wire::<C>(h.ack)
        } else {
            Some(0)
        };
        let (Some(seq), Some(ack)) = (seq, ack) else {
            self.stats.stale_frames += 1;
            return Handled::Dropped;
        };
        if !self.cfg.reliable_transport && C::carries_ack(kind) {
            self.on_ack(peer, ack);
        }
        if !kind.sequenced() {
            self.on_unsequenced(now, peer, &repr.body);
            return Handled::Accepted;
        }
        // MX sequences frames (every frame is fragment 0 of its number), Open-MX
        // messages.
        let (frag, last) = self.frag_of(&repr.body);
        match self.peers[pi].rel.classify(seq, frag, &self.reliability) {
            Arrival::InOrder => {
                let r = self.on_sequenced(now, peer, &repr.body);
                if r == Handled::Busy {
                    self.stats.busy += 1;
                    return r;
                }
                self.advance_rx(now, peer, last);
                self.drain_early(now, peer);
                Handled::Accepted
            }
            Arrival::Duplicate => {
                self.stats.duplicates += 1;
                // Our ack was probably lost: repeat it now.
                self.queue_ack(peer);
                Handled::Dropped
            }
            Arrival::Early => {
                if self.peers[pi].rel.holds(seq, frag) {
                    self.stats.duplicates += 1;
                } else {
                    let mut v = self.pool.pop().unwrap_or_default();
                    v.clear();
                    v.extend_from_slice(bytes);
                    let _ = self.peers[pi].rel.hold(seq, frag, v);
                    self.stats.early_held += 1;
                }
                Handled::Accepted
            }
            Arrival::Stale => {
                self.stats.stale_frames += 1;
                Handled::Dropped
            }
        }
    }

    /// A sequenced frame's fragment number under its sequence number and whether it
    /// ends the number: always `(0, true)` where numbers cover frames; where they
    /// cover messages ([`Codec::MESSAGE_SEQ`]), a medium fragment's place in its
    /// message.
    #[inline(always)]
    pub(super) fn frag_of(&self, body: &Body<'_>) -> (u32, bool) {
        match *body {
            Body::Eager {
                msg_len,
                offset,
                data,
                ..
            } if C::MESSAGE_SEQ => (
                offset / self.eager_frag() as u32,
                offset as usize + data.len() >= msg_len as usize,
            ),
            _ => (0, true),
        }
    }

    /// The send a large send's wire name (in a PULL or a NOTIFY) names: its request
    /// handle, or (with [`Codec::REGIONS`]) the holder of that region in that use.
    #[inline]
    fn send_of(&self, name: u32) -> Option<u32> {
        if C::REGIONS {
            self.regions.owner(name)
        } else {
            Some(name)
        }
    }

    fn on_unsequenced(&mut self, now: u64, peer: u16, body: &Body<'_>) {
        match *body {
            Body::Ack => {}
            Body::Pull {
                handle,
                recv_handle,
                offset,
                length,
                ..
            } => {
                let Some(handle) = self.send_of(handle) else {
                    self.stats.stale_frames += 1;
                    return;
                };
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
                // Asked again while the answer still waits to go out: it will.
                let queued = self.txq.iter().any(|t| {
                    matches!(*t, Tx::PullReply { send, recv_handle: rh, offset: o, end: e, .. }
                        if send == handle && rh == recv_handle && o <= offset && e >= end)
                });
                if queued {
                    self.stats.duplicates += 1;
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
            Body::Nack {
                reason,
                seq,
                handle,
            } => self.on_nack(peer, reason, seq, handle),
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
            Body::Notify { handle, length } => {
                if C::NOTIFY_ACK_NOW && !self.cfg.reliable_transport {
                    // The ack leaves with the sequence number this NOTIFY moves it to.
                    self.queue_ack(peer);
                }
                let large = self.cfg.medium_max;
                let handle = self.send_of(handle).unwrap_or(NO_HANDLE);
                let mut too_long = false;
                if let Some(r) = self.req_mut(handle) {
                    if r.kind == ReqKind::Send && r.peer == peer && r.need_notify {
                        // The length taken, where the layout carries it: the send's
                        // transfer length, as Open-MX's sender reports it; more than was
                        // sent is a bad frame (the send still ended: it was pulled).
                        if C::NOTIFY_LENGTH {
                            too_long = length as usize > r.msg_len;
                            r.xfer_len = r.msg_len.min(length as usize);
                        }
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
                if too_long {
                    self.stats.bad_frames += 1;
                }
                Handled::Accepted
            }
            _ => {
                self.stats.bad_frames += 1;
                Handled::Accepted
            }
        }
    }
}
