//! Other protocols served beside MX on one endpoint's transport.
//!
//! A transport moves frames; the first byte of a frame says whose it is
//! ([`myrix_wire::protocol`]). MX keeps its fast path (frames tagged
//! [`myrix_wire::protocol::MX`] go straight to its engine); a frame with another tag is
//! offered to the [`Protocol`] attached for that tag with [`crate::Endpoint::attach`],
//! whose frames leave through the same transport. Remote shared memory plugs in here.
//!
//! A protocol is driven like the MX engine, sans-IO: frames and time in, frames and
//! deadlines out. It must never block or read a clock; the endpoint does both.

use crate::transport::{Loc, Verdict};

/// A protocol sharing an endpoint's transport with MX.
pub trait Protocol: Send {
    /// The first byte of each of its frames; never [`myrix_wire::protocol::MX`].
    fn tag(&self) -> u8;
    /// A frame with this protocol's tag arrived.
    fn handle_frame(&mut self, now: u64, from: &Loc, frame: &[u8]) -> Verdict;
    /// A frame arrived, and the endpoint offers its send buffer (`room`, the
    /// transport's MTU long) for one datagram to answer it with: the destination and
    /// length of what the protocol wrote there, which the endpoint sends as soon as
    /// the receive returns, before its loop over the protocols (a request's reply then
    /// costs no second pass through the protocol's state). The default takes the frame
    /// and answers nothing; what is not written here leaves from
    /// [`Protocol::poll_transmit`] as before.
    fn handle_frame_answer(
        &mut self,
        now: u64,
        from: &Loc,
        frame: &[u8],
        room: &mut [u8],
    ) -> (Verdict, Option<(Loc, usize)>) {
        let _ = room;
        (self.handle_frame(now, from, frame), None)
    }
    /// The next frame to send, written into `buf` (the transport's MTU long): its
    /// destination and length.
    fn poll_transmit(&mut self, now: u64, buf: &mut [u8]) -> Option<(Loc, usize)>;
    /// When [`Protocol::handle_timeout`] should next be called.
    fn poll_timeout(&self) -> Option<u64> {
        None
    }
    fn handle_timeout(&mut self, _now: u64) {}
    /// The transport learnt that a peer died (lossless transports only).
    fn peer_gone(&mut self, _loc: &Loc) {}
}
