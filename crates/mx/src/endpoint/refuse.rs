//! Refusals on the wire: a frame from another host for an endpoint id that nobody on
//! this host has open on the interface is answered with Open-MX's NACK
//! (`engine::refusal`: ENDPT_CLOSED, or BAD_ENDPT past Open-MX's 32 ids) by the one
//! endpoint that answers for the interface (`transport::eth_driver`), so the sender's
//! request ends at once with `MX_STATUS_ENDPOINT_CLOSED` / `MX_STATUS_BAD_ENDPOINT`.
//! A frame for this endpoint's id carrying the session of another instance of it (one
//! that closed: the sender has not connected to this one) is answered by this
//! endpoint with NACK BAD_SESSION, as Open-MX's driver checks a frame's session against
//! the endpoint's (`MX_STATUS_BAD_SESSION` for the sender); frames of a known peer with
//! a stale session are the engine's to answer.
//! The engine drops such frames; the poll's delivery hands them here, and the NACKs
//! leave after the poll, off the path of the frames that are ours.

use super::*;
use crate::engine::{refusal, unopened_reason, INSTANCE_BITS, OMX_ENDPOINT_MAX};
use myrix_wire::mx::NACK_BAD_SESSION;

/// A frame the engine dropped: held for refusal when it is another host's frame for
/// another endpoint id of this interface (one the host may not have open), or for
/// another instance of this endpoint.
#[inline(always)]
pub(super) fn consider<C: Codec>(
    engine: &Engine<Loc, C>,
    driver: &mut Option<Box<Driver>>,
    from: &Loc,
    frame: &[u8],
) {
    if let Some(d) = driver.as_deref_mut() {
        hold(engine, d, from, frame);
    }
}

#[cold]
#[inline(never)]
fn hold<C: Codec>(engine: &Engine<Loc, C>, d: &mut Driver, from: &Loc, frame: &[u8]) {
    let Ok(r) = C::parse(frame) else { return };
    let h = r.header;
    // This host's own frames (the loopback, `omx+nic:`) are never refused: its
    // endpoints see each other's frames on the interface.
    if h.nic == engine.nic() {
        return;
    }
    let other_instance = C::RECEIVER_SESSION
        && C::carries_session(r.body.kind())
        && (h.session ^ engine.session()) & INSTANCE_BITS != 0;
    if h.dst_endpoint != engine.endpoint() || other_instance {
        d.hold(from, frame);
    }
}

impl<C: Codec> Endpoint<C> {
    /// Answers the frames held for refusal whose endpoint id is not open on the
    /// interface, when this endpoint answers for it.
    #[cold]
    #[inline(never)]
    pub(super) fn send_refusals(&mut self) -> Result<(), MxError> {
        let Some(d) = self.driver.as_deref_mut() else {
            return Ok(());
        };
        let mut pending = std::mem::take(&mut d.pending);
        // A NACK is the 16-byte head and a 16-byte body, padded to 60 by the transport.
        let mut buf = [0u8; 128];
        for (from, frame) in &pending {
            let Ok(r) = C::parse(frame) else { continue };
            let id = r.header.dst_endpoint;
            let reason = if id == self.engine.endpoint() {
                NACK_BAD_SESSION
            } else if d.is_open(id) || !d.answers() {
                continue;
            } else {
                unopened_reason(id, OMX_ENDPOINT_MAX)
            };
            let Some(n) = refusal::<C>(frame, self.engine.nic(), reason, &mut buf) else {
                continue;
            };
            // A NACK lost to a full queue is sent again at the frame's resend.
            if self.transport.send(from, &buf[..n])? {
                d.refused += 1;
                if let Some(c) = &mut self.capture {
                    c.sent(from, &buf[..n]);
                }
            }
        }
        pending.clear();
        d.pending = pending;
        Ok(())
    }

    /// Frames this endpoint refused for endpoints of its interface that are not open
    /// (Open-MX's boards; 0 elsewhere).
    pub fn refused(&self) -> u64 {
        self.driver.as_ref().map_or(0, |d| d.refused)
    }
}
