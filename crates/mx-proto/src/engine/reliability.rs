//! Reliability: per-peer sequence numbers, acks (piggy-backed and explicit), the
//! early-frame window, resends and unreachable peers.
//!
//! Must never know what a message is or how it is matched.

use super::*;

pub(super) fn seq_lt(a: u16, b: u16) -> bool {
    (a.wrapping_sub(b) as i16) < 0
}

/// A sequenced frame kept until acknowledged; frames are rebuilt from it on (re)send.
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
    Notify {
        handle: u32,
    },
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Unacked {
    pub(super) seq: u16,
    pub(super) what: SeqWhat,
    pub(super) first_sent: u64,
    pub(super) last_sent: u64,
    /// Queued for (re)transmission and not yet emitted.
    pub(super) queued: bool,
}

impl<L: Clone + PartialEq> Engine<L> {
    pub(super) fn advance_rx(&mut self, now: u64, peer: u16) {
        let p = &mut self.peers[peer as usize];
        p.rx_next = p.rx_next.wrapping_add(1);
        if self.cfg.reliable_transport {
            return;
        }
        p.rx_unacked += 1;
        if p.rx_unacked >= self.cfg.ack_after {
            self.queue_ack(peer);
        } else if p.ack_deadline.is_none() {
            let at = now + self.cfg.ack_delay_ns;
            p.ack_deadline = Some(at);
            self.arm_peer(peer, at);
        }
    }

    pub(super) fn drain_early(&mut self, now: u64, peer: u16) {
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

    pub(super) fn queue_ack(&mut self, peer: u16) {
        let p = &mut self.peers[peer as usize];
        if !p.ack_queued {
            p.ack_queued = true;
            self.txq.push_back(Tx::Ack { peer });
        }
    }

    pub(super) fn on_ack(&mut self, peer: u16, ack: u16) {
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
    pub(super) fn queue_notify(&mut self, peer: u16, handle: u32) {
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
}
