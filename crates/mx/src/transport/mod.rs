//! Transports move MX frames between endpoints; the engine decides what the frames say.
//!
//! * [`loopback`] (`self:`) — an endpoint talking to itself, in memory;
//! * [`udp`] (`udp:HOST:PORT`) — datagrams, IPv4 or IPv6, between hosts; may lose,
//!   duplicate and reorder, so the engine's reliability is on;
//! * [`shm`] (`shm:NAME`) — lock-free rings in shared memory between processes on one
//!   host, spin-polled, no system call on the fast path; lossless and in order.
//!
//! A transport never interprets a frame and never blocks.

use std::io;

pub mod loopback;
pub mod shm;
pub mod udp;

use crate::engine::Handled;

/// Where a peer is, for any transport.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Loc {
    Myself,
    Udp(std::net::SocketAddr),
    /// The peer's endpoint id on this host.
    Shm(u8),
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
    /// Offers received frames to `deliver`, at most `max`; returns how many it offered.
    /// A frame answered [`Handled::Busy`] is kept and offered again later by lossless
    /// transports, dropped by lossy ones.
    fn poll_recv(
        &mut self,
        max: usize,
        deliver: &mut dyn FnMut(&Loc, &[u8]) -> Handled,
    ) -> io::Result<usize>;
    /// A peer the transport knows to be gone (its process died), once per death.
    /// Lossy transports leave this to the engine's timers.
    fn poll_gone(&mut self) -> Option<Loc> {
        None
    }
}
