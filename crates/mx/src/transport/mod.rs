//! Transports move MX frames between endpoints; the engine decides what the frames say.
//!
//! * [`loopback`] (`self:`) — an endpoint talking to itself, in memory;
//! * [`udp`] (`udp:HOST:PORT`) — datagrams, IPv4 or IPv6, between hosts; may lose,
//!   duplicate and reorder, so the engine's reliability is on;
//! * [`shm`] (`shm:NAME`) — lock-free rings in shared memory between processes on one
//!   host, spin-polled, no system call on the fast path; lossless and in order;
//! * [`eth`] (`eth:IFNAME`) — raw Ethernet frames, EtherType 0x86DF, as Open-MX; lossy
//!   like UDP, without IP and UDP on the way. `omx:IFNAME` is the same transport
//!   carrying Open-MX's own frames (whole Ethernet frames, `myrix_wire::codec::Omx`);
//! * [`omxshm`] (`omx+shm:IFNAME`) — both: shared memory to this host's endpoints,
//!   Open-MX's frames on raw Ethernet to other hosts', chosen per peer.
//!
//! A transport never interprets a frame and never blocks.

use std::io;

pub mod eth;
pub mod eth_driver;
pub mod eth_ring;
pub mod ifaddrs;
pub mod loopback;
pub mod omxshm;
pub mod shm;
pub mod udp;
pub mod udp_mtu;

/// What the receiver of a frame did with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Used or dropped: the transport may reuse its room.
    Taken,
    /// No room for it now. A lossless transport keeps the frame and offers it again
    /// later; a lossy one may drop it (its sender resends).
    Busy,
}

/// Where a peer is, for any transport.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Loc {
    Myself,
    Udp(std::net::SocketAddr),
    /// The peer's endpoint id on this host.
    Shm(u8),
    /// The peer's Ethernet address.
    Eth([u8; 6]),
}

/// The transport of an endpoint, chosen when it opens. An enum rather than a trait
/// object so the receive loop, the engine's frame handler and the send's slot write
/// inline into each other (a ping-pong's latency is mostly such calls).
// One per endpoint, so its size does not matter; boxing the shm variant would put a
// pointer chase back on the hot path.
#[allow(clippy::large_enum_variant)]
pub enum AnyTransport {
    Loopback(loopback::Loopback),
    Shm(shm::Shm),
    Udp(udp::Udp),
    Eth(eth::Eth),
    OmxShm(Box<omxshm::OmxShm>),
}

impl AnyTransport {
    /// Peers whose locator names transport `kind` (`shm`, `omx`…) can be reached.
    pub fn reaches(&self, kind: &str) -> bool {
        let own = self.locator();
        let own = own.split(':').next().unwrap_or("");
        kind == own || matches!(self, AnyTransport::OmxShm(_)) && kind == "shm"
    }
}

macro_rules! each {
    ($self:expr, $t:ident => $e:expr) => {
        match $self {
            AnyTransport::Loopback($t) => $e,
            AnyTransport::Shm($t) => $e,
            AnyTransport::Udp($t) => $e,
            AnyTransport::Eth($t) => $e,
            AnyTransport::OmxShm($t) => $e,
        }
    };
}

impl Transport for AnyTransport {
    fn locator(&self) -> String {
        each!(self, t => t.locator())
    }
    fn mtu(&self) -> usize {
        each!(self, t => t.mtu())
    }
    fn reliable(&self) -> bool {
        each!(self, t => t.reliable())
    }
    fn resolve(&mut self, location: &str, endpoint: u8) -> io::Result<Loc> {
        each!(self, t => t.resolve(location, endpoint))
    }
    #[inline]
    fn send(&mut self, to: &Loc, frame: &[u8]) -> io::Result<bool> {
        each!(self, t => t.send(to, frame))
    }
    #[inline]
    fn frame_slot(&mut self, to: &Loc) -> io::Result<Option<&mut [u8]>> {
        each!(self, t => t.frame_slot(to))
    }
    #[inline]
    fn commit_slot(&mut self, to: &Loc, len: usize) {
        each!(self, t => t.commit_slot(to, len))
    }
    #[inline]
    fn flush(&mut self) -> io::Result<()> {
        each!(self, t => t.flush())
    }
    #[inline]
    fn poll_recv<F: FnMut(&Loc, &[u8]) -> Verdict>(
        &mut self,
        max: usize,
        deliver: F,
    ) -> io::Result<usize> {
        each!(self, t => t.poll_recv(max, deliver))
    }
    fn poll_gone(&mut self) -> Option<Loc> {
        each!(self, t => t.poll_gone())
    }
}

pub trait Transport: Send {
    /// The locator other endpoints use to reach this one (`udp:127.0.0.1:4000`).
    fn locator(&self) -> String;
    /// Largest frame.
    fn mtu(&self) -> usize;
    /// Never loses, duplicates or reorders.
    fn reliable(&self) -> bool;
    /// Turns the location part of a peer's address into a [`Loc`], attaching to the peer
    /// as needed.
    fn resolve(&mut self, location: &str, endpoint: u8) -> io::Result<Loc>;
    /// Sends one frame. `Ok(false)`: no room now (a full ring), try again later.
    fn send(&mut self, to: &Loc, frame: &[u8]) -> io::Result<bool>;
    /// Room to write the next frame to `to` in place (saving a copy), at most
    /// [`Transport::mtu`] bytes; `None` when there is no room now or the transport does
    /// not write in place. Nothing is sent until [`Transport::commit_slot`].
    fn frame_slot(&mut self, _to: &Loc) -> io::Result<Option<&mut [u8]>> {
        Ok(None)
    }
    /// Sends the first `len` bytes of the room the last `frame_slot(to)` gave.
    fn commit_slot(&mut self, _to: &Loc, _len: usize) {}
    /// Sends what [`Transport::send`] held back to leave with the frames after it (UDP's
    /// batches of full-size frames). Called when a burst of sends ends; a transport
    /// that holds frames also sends them before it next looks for frames to receive.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Offers received frames to `deliver`, at most `max`; returns how many it offered.
    /// A frame answered [`Verdict::Busy`] is kept and offered again later by lossless
    /// transports, dropped by lossy ones.
    fn poll_recv<F: FnMut(&Loc, &[u8]) -> Verdict>(
        &mut self,
        max: usize,
        deliver: F,
    ) -> io::Result<usize>;
    /// A peer the transport knows to be gone (its process died), once per death.
    /// Lossy transports leave this to the engine's timers.
    fn poll_gone(&mut self) -> Option<Loc> {
        None
    }
}
