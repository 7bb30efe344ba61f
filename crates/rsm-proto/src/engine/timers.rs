//! Time: the next deadline and what happens when it passes (delayed acks, resends of
//! the oldest unacknowledged frame, unreachable peers).
//!
//! Deadlines are cached, not searched, as in the MX engine: a peer that gets an
//! earlier deadline pushes it on a heap and remembers it in its `armed` field, so
//! [`Engine::poll_timeout`] is a peek and [`Engine::handle_timeout`] visits only the
//! peers that are due. A later deadline pushes nothing; the entry it leaves wakes the
//! engine once early and is replaced by the peer's true deadline.
//!
//! Must never scan every peer: that is what it is here to avoid.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use myrix_mx_proto::reliability::Timeout;

use super::frames::Tx;
use super::*;

/// Deadlines of peers, earliest first.
#[derive(Default)]
pub(super) struct Timers {
    heap: BinaryHeap<Reverse<(u64, u32)>>,
}

impl<A: Copy + Eq + Hash + std::fmt::Debug> Engine<A> {
    /// Peer `pi` has work due no later than `at`.
    pub(super) fn arm_peer(&mut self, pi: u32, at: u64) {
        if self.rel.lossless {
            return;
        }
        let p = &mut self.peers[pi as usize];
        if p.armed.is_none_or(|a| at < a) {
            p.armed = Some(at);
            self.timers.heap.push(Reverse((at, pi)));
        }
    }

    /// Peer `pi` was just marked unreachable (its timeout, or the driver's
    /// [`Engine::declare_unreachable`]): what we have with it fails, numbering starts
    /// afresh and the peer is probed.
    pub(super) fn peer_unreachable_now(&mut self, pi: u32, now: u64) {
        let addr = self.peers[pi as usize].addr;
        self.peer_failed(pi, RsmError::RemoteNodeUnreachable);
        // Fresh numbering, so the peer can be reached again once it answers (a link
        // that comes back): it starts afresh when it sees our newer session.
        self.restart_numbering(pi);
        let p = &mut self.peers[pi as usize];
        p.probe_at = p.resync.then_some(now + self.cfg.timeout_ns);
        if let Some(t) = p.probe_at {
            self.arm_peer(pi, t);
        }
        self.events.push_back(Event::PeerUnreachable { peer: addr });
    }

    /// The earliest time [`Engine::handle_timeout`] may have work to do.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.timers.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// Does what is due at `now`: delayed acks, resends, unreachable peers.
    pub fn handle_timeout(&mut self, now: u64) {
        while let Some(&Reverse((t, pi))) = self.timers.heap.peek() {
            if t > now {
                break;
            }
            self.timers.heap.pop();
            let p = &mut self.peers[pi as usize];
            if p.armed != Some(t) {
                continue; // superseded by an earlier entry, already handled
            }
            p.armed = None;
            if p.rel.ack_due(now) {
                self.queue_ack(pi);
            }
            let p = &mut self.peers[pi as usize];
            let txq = &mut self.txq;
            // Only the oldest unacknowledged frame is resent: the peer holds the ones
            // after it that arrived (up to `early_window`), and the ack that follows
            // says where the next hole is (`frames`, `on_ack`). Resending the whole
            // window every `resend_ns` (go-back-N), as before, collapsed MPI across
            // namespaces under `.ci/netns.sh`'s reordering class: each frame held back
            // cost a window of resends, both ways; the receivers' socket buffers filled
            // (8 MiB), every frame read and its ack were seconds old, and after
            // `timeout_ns` the peer was declared unreachable (docs/rsm-net.md,
            // "Reordering").
            let r = p.rel.on_timeout_oldest(now, &self.rel, |seq| {
                txq.push_back(Tx::Seq { peer: pi, seq });
            });
            if r == Timeout::Unreachable {
                self.peer_unreachable_now(pi, now);
                continue;
            }
            // A peer declared unreachable is probed every `timeout_ns` until it
            // answers with a newer session.
            let p = &mut self.peers[pi as usize];
            if let Some(t) = p.probe_at.filter(|_| p.resync) {
                if t <= now {
                    p.probe_at = Some(now + self.cfg.timeout_ns);
                    self.stats.probes += 1;
                    self.queue_ack(pi);
                }
                let t = self.peers[pi as usize].probe_at.unwrap_or(t);
                self.arm_peer(pi, t);
            }
            if let Some(d) = self.peers[pi as usize].rel.deadline_oldest(&self.rel) {
                self.arm_peer(pi, d.max(now + 1));
            }
        }
    }
}
