//! Other protocols served beside MX on the endpoint's transport (remote shared memory
//! next): frames whose tag is not MX's go to the protocol attached for it, and what it
//! sends leaves through the same transport. MX's fast path never comes here.

use myrix_wire::protocol as tag;

use super::{Endpoint, MxError};
use crate::addr::EndpointAddr;
use crate::engine::Codec;
use crate::protocol::Protocol;
use crate::transport::{AnyTransport, Loc, Transport, Verdict};

/// The endpoint's send buffer, lent to the protocols while a receive runs, for one
/// datagram answering a frame ([`Protocol::handle_frame_answer`]); sent by
/// [`Endpoint::send_answer`] once the receive returns.
pub(super) struct Answer<'a> {
    /// `None` while MX's stalled frame holds the buffer.
    room: Option<&'a mut [u8]>,
    /// What a protocol wrote there: where it goes, how long.
    pub(super) out: Option<(Loc, usize)>,
}

impl<'a> Answer<'a> {
    pub(super) fn new(tx: &'a mut [u8], stalled: bool) -> Answer<'a> {
        Answer {
            room: (!stalled).then_some(tx),
            out: None,
        }
    }
}

/// Offers a frame that is not MX's to the protocol attached for its tag; `None` when no
/// protocol has that tag. The protocol may answer in `answer`'s room while it is free.
#[cold]
pub(super) fn offer_other(
    others: &mut [Box<dyn Protocol>],
    now: u64,
    from: &Loc,
    frame: &[u8],
    answer: &mut Answer<'_>,
) -> Option<Verdict> {
    let t = tag::tag(frame)?;
    let p = others.iter_mut().find(|p| p.tag() == t)?;
    match answer.room.as_deref_mut() {
        // One answer per receive: the buffer holds it until the receive returns.
        Some(room) if answer.out.is_none() => {
            let (v, out) = p.handle_frame_answer(now, from, frame, room);
            answer.out = out;
            Some(v)
        }
        _ => Some(p.handle_frame(now, from, frame)),
    }
}

impl<C: Codec> Endpoint<C> {
    /// Serves another protocol on this endpoint's transport: frames tagged
    /// `protocol.tag()` go to it from now on, and it sends through the transport.
    /// Refuses MX's own tag and a tag already attached.
    pub fn attach(&mut self, protocol: Box<dyn Protocol>) -> Result<(), MxError> {
        let t = protocol.tag();
        if t == tag::MX || self.others.iter().any(|p| p.tag() == t) {
            return Err(MxError::Tag(t));
        }
        self.others.push(protocol);
        Ok(())
    }

    /// Where a peer is on this endpoint's transport, for an attached protocol to send to.
    pub fn locate(&mut self, peer: &EndpointAddr) -> Result<Loc, MxError> {
        if peer.transport() != self.addr.transport() {
            return Err(MxError::Transport(peer.to_string()));
        }
        Ok(self.transport.resolve(peer.location(), peer.endpoint)?)
    }

    /// The descriptor that becomes readable when a frame arrives (UDP and Ethernet
    /// boards), so an attached protocol's progress thread can sleep in `poll(2)` rather
    /// than wake on a period; `None` on in-memory transports.
    pub fn wait_fd(&self) -> Option<std::os::fd::RawFd> {
        match &self.transport {
            AnyTransport::Udp(t) => Some(t.raw_fd()),
            AnyTransport::Eth(t) => Some(t.raw_fd()),
            _ => None,
        }
    }

    /// Takes back the protocol attached for `tag`.
    pub fn detach(&mut self, tag: u8) -> Option<Box<dyn Protocol>> {
        let i = self.others.iter().position(|p| p.tag() == tag)?;
        Some(self.others.remove(i))
    }

    /// The protocol attached for `tag`, to call it between progress calls.
    pub fn attached(&mut self, tag: u8) -> Option<&mut (dyn Protocol + 'static)> {
        let p = self.others.iter_mut().find(|p| p.tag() == tag)?;
        Some(p.as_mut())
    }

    /// [`Endpoint::progress`] for a caller that polls in a loop (an RSM exporter polling
    /// its memory, a wait's polls): the clock is read every few polls, as a blocking
    /// wait's own polls do, not on every one. The time given to the engines never goes
    /// back (it is the last reading), only lags by a few polls; timers are milliseconds.
    pub fn poll(&mut self) -> Result<usize, MxError> {
        self.progress_lent(None, true)
    }

    /// Sends what the attached protocols have queued (and MX's stalled frame before
    /// it), without receiving: for a protocol's call that only queued frames (a
    /// one-sided write), where a receive would cost a system call before the send.
    pub fn transmit(&mut self) -> Result<(), MxError> {
        let now = self.now();
        if self.stalled.is_some() {
            self.flush(now)?;
        }
        self.serve_others(now)
    }

    /// Sends one datagram an attached protocol's caller builds right now, without the
    /// protocols' loop of [`Endpoint::transmit`] (which asks every protocol for frames
    /// until it has none, each call taking its lock): for a caller that already holds
    /// its protocol's state and knows what it queued (an RSM put). `fill` gets the
    /// time and the endpoint's send buffer and returns where the datagram goes and its
    /// length (`None`: nothing to send). MX's stalled frame goes first; while the
    /// transport still cannot take it, `fill` is not called (what the protocol queued
    /// leaves with the next progress). Returns whether `fill` was called.
    pub fn send_with(
        &mut self,
        fill: impl FnOnce(u64, &mut [u8]) -> Option<(Loc, usize)>,
    ) -> Result<bool, MxError> {
        let now = self.now();
        if self.stalled.is_some() {
            self.flush(now)?;
            if self.stalled.is_some() {
                return Ok(false);
            }
        }
        let Some((loc, n)) = fill(now, &mut self.tx) else {
            return Ok(true);
        };
        if !self.transport.send(&loc, &self.tx[..n])? {
            self.stalled = Some((loc, n));
        } else if let Some(c) = &mut self.capture {
            c.sent(&loc, &self.tx[..n]);
        }
        self.transport.flush()?;
        Ok(true)
    }

    /// Sends the datagram a protocol wrote into the send buffer while the receive ran
    /// ([`Answer`]), first thing after it: a request's reply leaves without the
    /// protocols' loop. The transport is flushed by [`Endpoint::serve_others`], which
    /// every poll with a protocol attached runs next.
    pub(super) fn send_answer(&mut self, out: Option<(Loc, usize)>) -> Result<(), MxError> {
        let Some((loc, n)) = out else {
            return Ok(());
        };
        if !self.transport.send(&loc, &self.tx[..n])? {
            self.stalled = Some((loc, n));
        } else if let Some(c) = &mut self.capture {
            c.sent(&loc, &self.tx[..n]);
        }
        Ok(())
    }

    /// The other protocols' due timers and frames to send. MX's stalled frame goes
    /// first: a lossless transport keeps the order of what each protocol sent.
    #[cold]
    pub(super) fn serve_others(&mut self, now: u64) -> Result<(), MxError> {
        for i in 0..self.others.len() {
            let p = &mut self.others[i];
            if p.poll_timeout().is_some_and(|t| t <= now) {
                p.handle_timeout(now);
            }
            while self.stalled.is_none() {
                let Some((loc, n)) = self.others[i].poll_transmit(now, &mut self.tx) else {
                    break;
                };
                if !self.transport.send(&loc, &self.tx[..n])? {
                    self.stalled = Some((loc, n));
                } else if let Some(c) = &mut self.capture {
                    c.sent(&loc, &self.tx[..n]);
                }
            }
        }
        self.transport.flush()?;
        Ok(())
    }
}
