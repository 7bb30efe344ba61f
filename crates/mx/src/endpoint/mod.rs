//! The MX endpoint: the application's handle, an [`Engine`] driven over a [`Transport`].
//!
//! Progress happens inside the calls (as in Open-MX): every call first moves frames in
//! and out and handles due timers. `wait` and friends spin-poll, because waking a blocked
//! process costs more than the whole message on these machines. An optional progress
//! thread ([`Endpoint::into_shared`]) keeps retransmission going while the application
//! computes.
//!
//! ```
//! use myrix_mx::{Endpoint, MxError, RecvBuf};
//! use std::time::Duration;
//!
//! let t = Duration::from_secs(5);
//! let mut server = Endpoint::open("udp:127.0.0.1:0", 0, 42)?;
//! let addr = server.addr().to_string(); // give this text to the other process
//! let server = std::thread::spawn(move || -> Result<Vec<u8>, MxError> {
//!     let r = server.irecv(RecvBuf::One(vec![0; 5]), 0x1234, u64::MAX, 0)?;
//!     let (status, buf) = server.wait(r, t)?.expect("a message within 5 s");
//!     assert_eq!((status.msg_len, status.xfer_len), (5, 5));
//!     server.flush_all(t)?; // let the last acknowledgement out before closing
//!     Ok(buf.expect("a receive has a buffer").to_vec())
//! });
//! let mut client = Endpoint::open("udp:127.0.0.1:0", 0, 42)?;
//! let peer = client.connect(&addr.parse().unwrap(), 42, t)?;
//! let s = client.isend(peer, &[b"hel", b"lo"], 0x1234, 0)?; // gathered from two buffers
//! client.wait(s, t)?.expect("acknowledged within 5 s");
//! assert_eq!(server.join().unwrap()?, b"hello");
//! # Ok::<(), MxError>(())
//! ```

use std::io;
use std::time::{Duration, Instant};

use rand::Rng;

use crate::addr::EndpointAddr;
use crate::capture::{self, Capture, Framing};
use crate::engine::{
    self, Code, Codec, Config, DirectRecv, Engine, Handled, Lent, PeerId, RecvBuf, Request, Stats,
    Status, UnexpectedHandler,
};
use crate::protocol::Protocol;
use crate::transport::{
    eth::Eth, eth_driver::Driver, loopback::Loopback, omxshm::OmxShm, shm::Shm, udp::Udp,
    AnyTransport, Loc, Transport, Verdict,
};
use myrix_wire::codec::{Mx, Omx, OmxMxWire};
use myrix_wire::protocol as tag;

mod complete;
mod omx;
mod refuse;
pub use omx::OmxMxWireEndpoint;
mod serve;
mod shared;
mod spin;

use serve::{offer_other, Answer};
pub use shared::ProgressThread;

/// Errors of the endpoint API.
#[derive(Debug, thiserror::Error)]
pub enum MxError {
    #[error(transparent)]
    Engine(#[from] engine::Error),
    #[error("transport: {0}")]
    Io(#[from] io::Error),
    #[error("bad board {0:?}: expected self, shm, udp:HOST:PORT, eth:IFNAME or (an OmxEndpoint) omx:IFNAME")]
    Board(String),
    #[error("cannot reach {0}: the transport differs from this endpoint's")]
    Transport(String),
    #[error("connect to {addr} failed: {code}")]
    Connect { addr: String, code: Code },
    #[error("timed out")]
    Timeout,
    #[error("the peer is gone (its process ended or it stopped answering)")]
    PeerLost,
    #[error("protocol tag {0:#04x} is MX's or already attached")]
    Tag(u8),
}

/// A completion: status, and the buffer of a receive.
pub type Completion = (Status, Option<RecvBuf>);

/// An endpoint whose frames are in layout `C`: myrix's own ([`Mx`], every board but
/// `omx:`) or Open-MX's ([`Omx`], raw Ethernet on an `omx:` board: [`OmxEndpoint`]).
pub struct Endpoint<C: Codec = Mx> {
    engine: Engine<Loc, C>,
    transport: AnyTransport,
    addr: EndpointAddr,
    epoch: Instant,
    tx: Vec<u8>,
    /// A frame the transport had no room for (a full ring): sent before any other.
    stalled: Option<(Loc, usize)>,
    /// Lossless transports have no timers: the clock is read rarely, off the fast path.
    timed: bool,
    clock_reads: u32,
    polls: u32,
    last_now: u64,
    /// Protocols served beside MX on this transport (usually none).
    others: Vec<Box<dyn Protocol>>,
    /// The peer a blocking receive waits for ([`Endpoint::recv_from`]): found gone, the
    /// wait ends.
    watch: Option<PeerId>,
    /// Every frame sent and received, written to a pcap file ([`crate::capture`]).
    capture: Option<Box<Capture>>,
    /// Open-MX boards: this endpoint's share of Open-MX's driver on its interface
    /// (refusals of frames for endpoints not open: [`refuse`]).
    driver: Option<Box<Driver>>,
}

/// What a lossless transport does with a frame the engine had no room for.
#[inline(always)]
fn verdict(h: Handled) -> Verdict {
    if h == Handled::Busy {
        Verdict::Busy
    } else {
        Verdict::Taken
    }
}

/// A poll of `t` with each frame recorded by `c` before `handle` takes it.
#[cold]
#[inline(never)]
fn poll_captured<F: FnMut(&Loc, &[u8]) -> Verdict>(
    t: &mut AnyTransport,
    c: &mut Capture,
    mut handle: F,
) -> io::Result<usize> {
    t.poll_recv(64, |from, frame| {
        c.received(from, frame);
        handle(from, frame)
    })
}

/// How a transport's frames are captured.
fn framing(t: &AnyTransport) -> Framing {
    use myrix_wire::pcap::Transport as T;
    match t {
        AnyTransport::Loopback(_) => Framing::Pseudo(T::Loopback),
        AnyTransport::Shm(_) => Framing::Pseudo(T::Shm),
        AnyTransport::Udp(_) => Framing::Pseudo(T::Udp),
        AnyTransport::Eth(e) => Framing::Eth {
            mac: e.mac(),
            whole: e.whole(),
        },
        // Shared-memory frames are recorded as Ethernet frames too (they are Open-MX's
        // whole frames), with a zero peer MAC.
        AnyTransport::OmxShm(t) => Framing::Eth {
            mac: t.eth().mac(),
            whole: true,
        },
    }
}

/// On lossy transports, a wait's polls read the clock once in this many.
const SPIN_CLOCK_POLLS: u32 = 16;
/// How often `progress` looks at departed peers and timers, in polls.
const HOUSEKEEPING_POLLS: u32 = 16;

use crate::transport::shm::host_nic;

/// A NIC id for an endpoint on a network board (UDP, Ethernet): random, locally
/// administered.
fn random_nic() -> u64 {
    (rand::thread_rng().gen::<u64>() & 0xfcff_ffff_ffff) | 0x0200_0000_0000
}

/// The peer id from a completed connect request, or why it failed.
fn connected(peer: &EndpointAddr, st: Status) -> Result<PeerId, MxError> {
    if st.code == Code::Success {
        Ok(st.source)
    } else {
        Err(MxError::Connect {
            addr: peer.to_string(),
            code: st.code,
        })
    }
}

/// An endpoint speaking Open-MX's frames on raw Ethernet (`omx:IFNAME`).
pub type OmxEndpoint = Endpoint<Omx>;

impl Endpoint {
    /// Opens endpoint `id` on a board: `self`, `shm`, `udp:HOST:PORT` (port 0 picks
    /// one) or `eth:IFNAME` (raw Ethernet in myrix's frames). Peers must present `key`
    /// to connect. (`omx:IFNAME`, raw Ethernet in Open-MX's frames, is
    /// [`OmxEndpoint::open_omx`].)
    pub fn open(board: &str, id: u8, key: u32) -> Result<Endpoint, MxError> {
        Self::open_with(board, id, key, Config::default())
    }

    /// As [`Endpoint::open`], with protocol parameters (the MTU and reliability are
    /// taken from the transport).
    pub fn open_with(board: &str, id: u8, key: u32, cfg: Config) -> Result<Endpoint, MxError> {
        if board.starts_with("omx:") {
            return Err(MxError::Board(format!(
                "{board} (Open-MX's frames: open it as an OmxEndpoint)"
            )));
        }
        Self::open_codec(board, id, key, cfg)
    }

    /// The peer id from a completed connect request (of any layout's endpoint), or
    /// why it failed.
    pub fn connected(peer: &EndpointAddr, st: Status) -> Result<PeerId, MxError> {
        connected(peer, st)
    }
}

impl<C: Codec> Endpoint<C> {
    fn open_codec(board: &str, id: u8, key: u32, mut cfg: Config) -> Result<Self, MxError> {
        let session: u32 = rand::thread_rng().gen_range(1..=u32::MAX);
        // Open-MX's frames: the id is claimed on the interface, and frames for ids not
        // open there are refused as Open-MX's driver does (`transport::eth_driver`).
        let driver = match board.split_once(':') {
            Some((b, iface)) if C::NACKS && b.starts_with("omx") => {
                Some(Box::new(Driver::open(iface, id)?))
            }
            _ => None,
        };
        let (transport, nic): (AnyTransport, u64) = match board {
            "self" | "self:" => (AnyTransport::Loopback(Loopback::default()), host_nic()),
            "shm" | "shm:" => {
                let nic = host_nic();
                (AnyTransport::Shm(Shm::open(nic, id)?), nic)
            }
            b if b.starts_with("udp:") => {
                let t = Udp::bind(&b[4..], None)?;
                (AnyTransport::Udp(t), random_nic())
            }
            b if b.starts_with("omx+shm:") => {
                let t = OmxShm::open(&b[8..], id)?;
                let m = t.eth().mac();
                let nic = u64::from_be_bytes([0, 0, m[0], m[1], m[2], m[3], m[4], m[5]]);
                (AnyTransport::OmxShm(Box::new(t)), nic)
            }
            b if b.starts_with("omx+nic:") => {
                let t = Eth::open_with(&b[8..], true, true)?;
                let m = t.mac();
                let nic = u64::from_be_bytes([0, 0, m[0], m[1], m[2], m[3], m[4], m[5]]);
                (AnyTransport::Eth(t), nic)
            }
            b if b.starts_with("eth:") || b.starts_with("omx:") => {
                // As in Open-MX, the NIC id is the interface's MAC (so a peer table of
                // MACs finds endpoints); endpoints on one interface differ by their id.
                let t = Eth::open(&b[4..], b.starts_with("omx:"))?;
                let m = t.mac();
                let nic = u64::from_be_bytes([0, 0, m[0], m[1], m[2], m[3], m[4], m[5]]);
                (AnyTransport::Eth(t), nic)
            }
            _ => return Err(MxError::Board(board.to_string())),
        };
        cfg.mtu = transport.mtu().min(C::FRAME_MAX);
        if C::MEDIUM_SLOT > 0 {
            // Medium fragment i starts at i × 8 KiB in Open-MX (4 KiB in its
            // MX-compatible mode): with a smaller MTU, a medium is a single frame.
            let room = cfg
                .mtu
                .saturating_sub(C::head_len(myrix_wire::mx::Kind::Medium));
            cfg.medium_frag = C::MEDIUM_SLOT;
            if room < cfg.medium_frag {
                cfg.medium_max = cfg.medium_max.min(room);
            }
        }
        cfg.reliable_transport = transport.reliable();
        let addr = EndpointAddr {
            nic,
            endpoint: id,
            session,
            locator: transport.locator(),
        };
        let mtu = cfg.mtu;
        let cfg_reliable = cfg.reliable_transport;
        let capture = match std::env::var_os(capture::ENV) {
            Some(p) if !p.is_empty() => {
                let path = capture::expand(&p.to_string_lossy());
                Some(Box::new(Capture::open(&path, framing(&transport))?))
            }
            _ => None,
        };
        Ok(Endpoint {
            engine: Engine::with_codec(cfg, nic, id, key, session),
            transport,
            addr,
            epoch: Instant::now(),
            tx: vec![0; mtu],
            stalled: None,
            timed: !cfg_reliable,
            clock_reads: 0,
            polls: 0,
            last_now: 1,
            others: Vec::new(),
            watch: None,
            capture,
            driver,
        })
    }

    /// Starts writing every frame this endpoint sends and receives to the pcap file
    /// `path` (see [`crate::capture`]); `MYRIX_PCAP=FILE` does it for every endpoint a
    /// process opens.
    pub fn capture_to(&mut self, path: &std::path::Path) -> Result<(), MxError> {
        self.capture = Some(Box::new(Capture::open(path, framing(&self.transport))?));
        Ok(())
    }

    /// The protocol parameters in force (message class limits and the like).
    pub fn config(&self) -> &Config {
        self.engine.config()
    }

    /// This endpoint's address, to give to peers.
    pub fn addr(&self) -> &EndpointAddr {
        &self.addr
    }

    fn now(&mut self) -> u64 {
        self.clock(false)
    }

    /// The time for the engine. Lossy transports have timers: every call reads the
    /// clock, except the polls of a wait after its first, which read it every
    /// [`SPIN_CLOCK_POLLS`] (polls are microseconds apart there, timers milliseconds,
    /// and a clock read per poll slows the poll that finds the message).
    #[inline(always)]
    fn clock(&mut self, spinning: bool) -> u64 {
        self.clock_reads = self.clock_reads.wrapping_add(1);
        let every = if !self.timed {
            1024
        } else if spinning {
            SPIN_CLOCK_POLLS
        } else {
            1
        };
        if self.clock_reads % every == 0 {
            self.last_now = self.epoch.elapsed().as_nanos() as u64 + 1;
        }
        self.last_now
    }

    /// Moves frames in and out and handles due timers. Returns frames received.
    pub fn progress(&mut self) -> Result<usize, MxError> {
        self.progress_lent(None, false)
    }

    /// [`Endpoint::progress`] while a blocking send lends its message; `spinning`: a
    /// poll of a wait after its first.
    fn progress_lent(&mut self, lent: Lent<'_>, spinning: bool) -> Result<usize, MxError> {
        let now = self.clock(spinning);
        let engine = &mut self.engine;
        let others = &mut self.others;
        let driver = &mut self.driver;
        let mut answer = Answer::new(&mut self.tx, self.stalled.is_some());
        let handle = |from: &Loc, frame: &[u8]| {
            if frame.first() != Some(&tag::MX) {
                if let Some(v) = offer_other(others, now, from, frame, &mut answer) {
                    return v;
                }
            }
            let h = engine.handle_frame(now, from, frame);
            if h == Handled::Dropped {
                refuse::consider(engine, driver, from, frame);
            }
            verdict(h)
        };
        // Capture off: the loop is the one without it.
        let n = match self.capture.as_deref_mut() {
            None => self.transport.poll_recv(64, handle)?,
            Some(c) => poll_captured(&mut self.transport, c, handle)?,
        };
        let out = answer.out;
        self.send_answer(out)?;
        self.after_poll(now, lent)?;
        Ok(n)
    }

    /// [`Endpoint::progress`] while a blocking receive waits without a request.
    #[inline(always)]
    fn progress_direct(&mut self, d: &mut DirectRecv) -> Result<usize, MxError> {
        let now = self.now();
        let engine = &mut self.engine;
        let others = &mut self.others;
        let driver = &mut self.driver;
        let mut answer = Answer::new(&mut self.tx, self.stalled.is_some());
        let handle = |from: &Loc, frame: &[u8]| {
            if frame.first() != Some(&tag::MX) {
                if let Some(v) = offer_other(others, now, from, frame, &mut answer) {
                    return v;
                }
            }
            let h = engine.handle_frame_direct(now, from, frame, d);
            if h == Handled::Dropped {
                refuse::consider(engine, driver, from, frame);
            }
            verdict(h)
        };
        // Capture off: the loop is the one without it.
        let n = match self.capture.as_deref_mut() {
            None => self.transport.poll_recv(64, handle)?,
            Some(c) => poll_captured(&mut self.transport, c, handle)?,
        };
        let out = answer.out;
        self.send_answer(out)?;
        self.after_poll(now, None)?;
        Ok(n)
    }

    /// What every poll does after taking in frames.
    #[inline(always)]
    fn after_poll(&mut self, now: u64, lent: Lent<'_>) -> Result<(), MxError> {
        // Departed peers and timers are not latency-critical: looked at every
        // HOUSEKEEPING_POLLS polls, so the idle poll that waits for the next frame stays
        // a few loads long.
        self.polls = self.polls.wrapping_add(1);
        if self.polls % HOUSEKEEPING_POLLS == 0 {
            self.housekeeping(now);
        }
        if self.stalled.is_some() || self.engine.has_transmit() {
            self.flush_lent(now, lent)?;
        }
        if !self.others.is_empty() {
            self.serve_others(now)?;
        }
        if self.driver.as_ref().is_some_and(|d| !d.pending.is_empty()) {
            self.send_refusals()?;
        }
        Ok(())
    }

    #[cold]
    fn housekeeping(&mut self, now: u64) {
        while let Some(loc) = self.transport.poll_gone() {
            for p in &mut self.others {
                p.peer_gone(&loc);
            }
            self.engine.peer_gone(&loc);
        }
        // The next timer is a cached deadline (a heap's top), so it is looked at on every
        // housekeeping round.
        if self.engine.poll_timeout().is_some_and(|t| t <= now) {
            self.engine.handle_timeout(now);
        }
    }

    fn flush(&mut self, now: u64) -> Result<(), MxError> {
        self.flush_lent(now, None)
    }

    fn flush_lent(&mut self, now: u64, lent: Lent<'_>) -> Result<(), MxError> {
        if let Some((loc, n)) = self.stalled.take() {
            if !self.transport.send(&loc, &self.tx[..n])? {
                self.stalled = Some((loc, n));
                return Ok(());
            }
            if let Some(c) = &mut self.capture {
                c.sent(&loc, &self.tx[..n]);
            }
        }
        loop {
            // Straight into the transport's room (a ring slot) where it has some: a pull
            // reply's data is then copied once on the way out, not twice.
            if let Some(to) = self.engine.next_transmit_to() {
                if let Some(room) = self.transport.frame_slot(to)? {
                    if let Some((to, n)) = self.engine.transmit_front(now, room, lent) {
                        if let Some(c) = &mut self.capture {
                            c.sent(&to, &room[..n]);
                        }
                        self.transport.commit_slot(&to, n);
                    }
                    continue;
                }
            }
            let Some((loc, n)) = self.engine.poll_transmit_lent(now, &mut self.tx, lent) else {
                self.transport.flush()?;
                return Ok(());
            };
            if !self.transport.send(&loc, &self.tx[..n])? {
                self.stalled = Some((loc, n));
                self.transport.flush()?;
                return Ok(());
            }
            if let Some(c) = &mut self.capture {
                c.sent(&loc, &self.tx[..n]);
            }
        }
    }

    /// Starts connecting to a peer; the request completes with the peer's id in
    /// [`Status::source`] once it accepted our key.
    pub fn iconnect(&mut self, peer: &EndpointAddr, key: u32) -> Result<Request, MxError> {
        if !self.transport.reaches(peer.transport()) {
            return Err(MxError::Transport(peer.to_string()));
        }
        // An address of an endpoint that closed, whose id we now hold: connecting would
        // reach ourselves and "verify" our own echo.
        if (peer.nic, peer.endpoint) == (self.addr.nic, self.addr.endpoint)
            && peer.session != self.addr.session
        {
            return Err(MxError::Connect {
                addr: peer.to_string(),
                code: Code::NoEndpoint,
            });
        }
        let loc = self.transport.resolve(peer.location(), peer.endpoint)?;
        // The address's session names the instance: a reply from another process that
        // opened the same id since (with the same key) fails the connect.
        self.call(|e, now| {
            e.iconnect_session(now, loc, peer.nic, peer.endpoint, key, peer.session, 0)
        })
    }

    /// Connects to a peer; returns its id once it accepted our key.
    pub fn connect(
        &mut self,
        peer: &EndpointAddr,
        key: u32,
        timeout: Duration,
    ) -> Result<PeerId, MxError> {
        let r = self.iconnect(peer, key)?;
        match self.wait(r, timeout)? {
            Some((st, _)) => connected(peer, st),
            None => Err(MxError::Timeout),
        }
    }

    /// Disconnects from a peer (see [`Engine::disconnect`]): its unfinished requests
    /// end with [`Code::Disconnected`] and sends to it are refused until
    /// [`Endpoint::connect`] is called again.
    pub fn disconnect(&mut self, peer: PeerId) -> Result<(), MxError> {
        self.engine.disconnect(peer)?;
        Ok(())
    }

    pub fn isend(
        &mut self,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        context: u64,
    ) -> Result<Request, MxError> {
        self.post_send(peer, segments, match_info, context, false)
    }

    /// Synchronous send: completes once the receiver matched it.
    pub fn issend(
        &mut self,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        context: u64,
    ) -> Result<Request, MxError> {
        self.post_send(peer, segments, match_info, context, true)
    }

    /// Sends and waits up to `timeout` until the send completes: for a large message,
    /// until the receiver has pulled it all. A large message is read straight from
    /// `segments` while the call lasts, without the copy `isend` takes. On a timeout the
    /// message is copied in and goes on in the background (it may still arrive).
    pub fn send(
        &mut self,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        timeout: Duration,
    ) -> Result<Status, MxError> {
        let len: usize = segments.iter().map(|s| s.len()).sum();
        if len <= self.engine.config().medium_max || self.stalled.is_some() {
            if self.stalled.is_none() {
                if let Some(st) = self.send_now(peer, segments, match_info, len)? {
                    return Ok(st);
                }
            }
            let r = self.isend(peer, segments, match_info, 0)?;
            return match self.wait(r, timeout)? {
                Some((st, _)) => Ok(st),
                None => {
                    self.engine.forget(r)?;
                    Err(MxError::Timeout)
                }
            };
        }
        let r = self.call(|e, now| e.isend_lent(now, peer, len, match_info, 0, false))?;
        // The lent segments go with every call that may emit the message's bytes;
        // whatever leaves without completing hands the message over first.
        match self.spin_until_ready(r, timeout, Some((r, segments))) {
            Ok(true) => match self.engine.test(r)? {
                Some((st, _)) => Ok(st),
                None => Err(engine::Error::BadRequest.into()),
            },
            Ok(false) => {
                self.engine.unlend(r, segments);
                self.engine.forget(r)?;
                Err(MxError::Timeout)
            }
            Err(e) => {
                self.engine.unlend(r, segments);
                Err(e)
            }
        }
    }

    /// The lossless fast path into the transport's room: when the engine's fast path
    /// takes the message and the transport has a slot for it (shm), its frame is written
    /// straight into the slot and published. False, with nothing sent, otherwise.
    #[inline(always)]
    fn frame_into_slot(
        &mut self,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
    ) -> Result<bool, MxError> {
        // A capture takes the ordinary path, which records what it sends.
        if self.capture.is_some() {
            return Ok(false);
        }
        let Some(loc) = self.engine.peer_location(peer).cloned() else {
            return Ok(false);
        };
        let Some(room) = self.transport.frame_slot(&loc)? else {
            return Ok(false);
        };
        // Nothing is published unless the engine wrote the frame.
        let Some((_, n)) = self.engine.fast_frame(peer, segments, match_info, room) else {
            return Ok(false);
        };
        self.transport.commit_slot(&loc, n);
        Ok(true)
    }

    /// A blocking send whose frame went straight into a slot needs no request: it is
    /// complete.
    #[inline(always)]
    fn send_now(
        &mut self,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        len: usize,
    ) -> Result<Option<Status>, MxError> {
        if !self.frame_into_slot(peer, segments, match_info)? {
            return Ok(None);
        }
        Ok(Some(Status {
            code: Code::Success,
            source: peer,
            match_info,
            msg_len: len,
            xfer_len: len,
            context: 0,
        }))
    }

    fn post_send(
        &mut self,
        peer: PeerId,
        segments: &[&[u8]],
        match_info: u64,
        context: u64,
        synchronous: bool,
    ) -> Result<Request, MxError> {
        if self.stalled.is_some() {
            return self
                .call(|e, now| e.isend(now, peer, segments, match_info, context, synchronous));
        }
        if !synchronous {
            // The frame written straight into the transport's room (a ring slot): no
            // copy through `tx`.
            if self.frame_into_slot(peer, segments, match_info)? {
                return Ok(self.engine.fast_sent(peer, segments, match_info, context)?);
            }
            let fast = self
                .engine
                .fast_frame(peer, segments, match_info, &mut self.tx);
            if let Some((loc, n)) = fast {
                // The frame leaves first; the request's bookkeeping is off the latency path.
                let sent = self
                    .transport
                    .send(&loc, &self.tx[..n])
                    .and_then(|ok| self.transport.flush().map(|()| ok));
                let r = self.engine.fast_sent(peer, segments, match_info, context)?;
                match sent {
                    Ok(true) => {
                        if let Some(c) = &mut self.capture {
                            c.sent(&loc, &self.tx[..n]);
                        }
                    }
                    Ok(false) => self.stalled = Some((loc, n)),
                    Err(e) => {
                        // The engine counted the send done; the caller gets the error,
                        // not a handle, so release the request rather than leave it.
                        let _ = self.engine.forget(r);
                        return Err(e.into());
                    }
                }
                return Ok(r);
            }
        }
        self.call(|e, now| e.isend(now, peer, segments, match_info, context, synchronous))
    }

    /// Runs one engine call at the current time, then sends what it queued.
    fn call<T>(
        &mut self,
        f: impl FnOnce(&mut Engine<Loc, C>, u64) -> Result<T, engine::Error>,
    ) -> Result<T, MxError> {
        let now = self.now();
        let r = f(&mut self.engine, now)?;
        // Most calls (a posted receive, a send on the fast path) queue nothing.
        if self.stalled.is_some() || self.engine.has_transmit() {
            self.flush(now)?;
        }
        Ok(r)
    }

    /// Sends a buffer the endpoint takes over (no copy); the completion hands it back
    /// (`RecvBuf::One`, contents intact) for the next message.
    pub fn isend_vec(
        &mut self,
        peer: PeerId,
        data: Vec<u8>,
        match_info: u64,
        context: u64,
    ) -> Result<Request, MxError> {
        self.call(|e, now| e.isend_vec(now, peer, data, match_info, context, false))
    }

    pub fn irecv(
        &mut self,
        buf: RecvBuf,
        match_info: u64,
        mask: u64,
        context: u64,
    ) -> Result<Request, MxError> {
        self.call(|e, now| e.irecv(now, buf, match_info, mask, context))
    }

    pub fn cancel(&mut self, r: Request) -> Result<RecvBuf, MxError> {
        Ok(self.engine.cancel(r)?)
    }

    pub fn forget(&mut self, r: Request) -> Result<(), MxError> {
        Ok(self.engine.forget(r)?)
    }

    pub fn context(&self, r: Request) -> Result<u64, MxError> {
        Ok(self.engine.context(r)?)
    }

    pub fn set_unexpected_handler(&mut self, h: Option<UnexpectedHandler>) {
        self.engine.set_unexpected_handler(h);
    }

    /// How long a request may go unacknowledged before it fails (10 s unless set).
    pub fn set_request_timeout(&mut self, t: std::time::Duration) {
        let ns = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
        self.engine.set_request_timeout(ns);
    }

    /// The peer is gone (its process died, or it stopped acknowledging), as far as the
    /// last progress call knows; until it connects again. A wait for a message from it
    /// would otherwise last its whole timeout.
    pub fn peer_lost(&self, peer: PeerId) -> bool {
        self.engine.peer_unreachable(peer)
    }

    /// NIC id and endpoint id of a peer this endpoint knows (a C interface reports
    /// them as a message's source).
    pub fn peer_identity(&self, peer: PeerId) -> Option<(u64, u8)> {
        self.engine.peer_identity(peer)
    }

    pub fn stats(&self) -> Stats {
        self.engine.stats()
    }

    /// Waits until every frame was sent and acknowledged, so the endpoint can close
    /// without its peer missing the last acknowledgements.
    pub fn flush_all(&mut self, timeout: Duration) -> Result<bool, MxError> {
        let end = Instant::now() + timeout;
        loop {
            self.progress()?;
            if self.engine.idle() && self.stalled.is_none() {
                return Ok(true);
            }
            if Instant::now() >= end {
                return Ok(false);
            }
        }
    }
}
