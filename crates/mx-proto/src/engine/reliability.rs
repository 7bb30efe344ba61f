//! MX's use of the reliability layer ([`crate::reliability`]): what a sequenced item
//! is for MX ([`SeqWhat`]), delivery of in-order and held frames, acks, and what an
//! acknowledged item completes.
//!
//! Must never know how a sequence number is kept, acked or resent: that is the layer's.

use super::*;

/// A sequenced frame kept until acknowledged; frames are rebuilt from it on (re)send.
/// MX's sequence numbers cover one frame each, so a medium message is several items.
#[derive(Clone, Copy, Debug)]
pub(super) enum SeqWhat {
    Eager {
        req: u32,
        kind: Kind,
        offset: u32,
        len: u32,
    },
    Rndv {
        req: u32,
    },
    /// `length`: what the receive took, for codecs whose NOTIFY carries it.
    Notify {
        handle: u32,
        length: u32,
    },
}

impl<L: Clone + PartialEq, C: Codec> Engine<L, C> {
    /// The frame in order from `peer` was delivered; `last` when it ends its sequence
    /// number (always, but for a medium's fragments under [`Codec::MESSAGE_SEQ`]).
    pub(super) fn advance_rx(&mut self, now: u64, peer: u16, last: bool) {
        match self.peers[peer as usize]
            .rel
            .delivered(now, last, &self.reliability)
        {
            AckDue::No => {}
            AckDue::Now => self.queue_ack(peer),
            AckDue::At(at) => self.arm_peer(peer, at),
        }
    }

    /// Delivers the held frames that are now in order.
    pub(super) fn drain_early(&mut self, now: u64, peer: u16) {
        while let Some(buf) = self.peers[peer as usize].rel.take_early() {
            let Some(repr) = Self::read_frame(&buf) else {
                return;
            };
            let body = repr.body;
            let (_, last) = self.frag_of(&body);
            let r = self.on_sequenced(now, peer, &body);
            if r == Handled::Busy {
                let p = &mut self.peers[peer as usize];
                let _ = p.rel.hold(p.rel.ack(), p.rel.rx_frag(), buf);
                return;
            }
            if self.pool.len() < 64 {
                self.pool.push(buf);
            }
            self.advance_rx(now, peer, last);
        }
    }

    pub(super) fn queue_ack(&mut self, peer: u16) {
        if self.peers[peer as usize].rel.want_ack() {
            self.txq.push_back(Tx::Ack { peer });
        }
    }

    pub(super) fn on_ack(&mut self, peer: u16, ack: u16) {
        let mut freed = false;
        while let Some(what) = self.peers[peer as usize].rel.pop_acked(ack) {
            freed = true;
            self.frame_done(what);
        }
        if freed {
            self.fill_window(peer);
        }
    }

    /// A sequenced frame is acknowledged (or emitted, on a lossless transport).
    pub(super) fn frame_done(&mut self, what: SeqWhat) {
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

    pub(super) fn queue_notify(&mut self, peer: u16, handle: u32, length: usize) {
        let length = length as u32;
        let seq = self.peers[peer as usize]
            .rel
            .push(SeqWhat::Notify { handle, length });
        self.txq.push_back(Tx::Seq { peer, seq, frag: 0 });
    }
}
