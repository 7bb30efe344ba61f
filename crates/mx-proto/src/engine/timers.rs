//! Time: the next deadline and what happens when it passes (delayed acks, resends,
//! unreachable peers, connect retries, pull re-requests, pull timeouts).
//!
//! Deadlines are cached, not searched: each owner (a peer, a connect or a pulling
//! receive) that gets an earlier deadline pushes it on a heap and remembers it in its
//! `armed` field, so [`Engine::poll_timeout`] is a peek and [`Engine::handle_timeout`]
//! visits only the owners that are due. A later deadline pushes nothing (the common case:
//! each frame sent moves its peer's resend deadline later); the entry it leaves is early,
//! wakes the engine once for nothing and is replaced by the owner's true deadline.
//!
//! Must never scan every request slot or every peer: that is what it is here to avoid.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::*;

/// Whose deadline a heap entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Owner {
    Peer(u16),
    /// A request, by handle: a stale handle is recognised and its entry dropped.
    Req(u32),
}

/// Deadlines, earliest first; see the module docs.
#[derive(Default)]
pub(super) struct Timers {
    heap: BinaryHeap<Reverse<(u64, Owner)>>,
}

impl Timers {
    /// Makes sure a wake-up comes no later than `at` for an owner whose earliest entry
    /// is `armed`.
    #[inline]
    pub(super) fn arm(&mut self, armed: &mut Option<u64>, at: u64, who: Owner) {
        if armed.is_none_or(|a| at < a) {
            *armed = Some(at);
            self.heap.push(Reverse((at, who)));
        }
    }

    #[inline]
    fn next(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// The next entry due at `now`.
    fn pop_due(&mut self, now: u64) -> Option<(u64, Owner)> {
        if self.next()? > now {
            return None;
        }
        self.heap.pop().map(|Reverse(x)| x)
    }
}

impl<L: Clone + PartialEq, C: Codec> Engine<L, C> {
    /// The peer's resend or delayed ack is due no later than `at`.
    #[inline]
    pub(super) fn arm_peer(&mut self, peer: u16, at: u64) {
        let p = &mut self.peers[peer as usize];
        self.timers.arm(&mut p.armed, at, Owner::Peer(peer));
    }

    /// Request `h` (a connect, a pulling receive) has work due no later than `at`.
    #[inline]
    pub(super) fn arm_req(&mut self, h: u32, at: u64) {
        if self.cfg.reliable_transport {
            return;
        }
        let r = &mut self.reqs[Request(h).index()];
        self.timers.arm(&mut r.armed, at, Owner::Req(h));
    }

    /// The earliest time `handle_timeout` may have work to do (it may find none: a
    /// deadline that moved later is seen when it would have passed).
    #[inline]
    pub fn poll_timeout(&self) -> Option<u64> {
        if self.cfg.reliable_transport {
            return None;
        }
        self.timers.next()
    }

    /// Does what is due at `now`: delayed acks, resends, unreachable peers, connect
    /// retries, pull re-requests and timeouts.
    pub fn handle_timeout(&mut self, now: u64) {
        if self.cfg.reliable_transport {
            return;
        }
        // Owners re-armed below are due after `now`, so this ends.
        while let Some((t, who)) = self.timers.pop_due(now) {
            match who {
                Owner::Peer(pi) => {
                    let Some(p) = self.peers.get_mut(pi as usize) else {
                        continue;
                    };
                    if p.armed != Some(t) {
                        continue; // superseded by an earlier entry, already handled
                    }
                    p.armed = None;
                    self.peer_timeout(now, pi);
                    if let Some(d) = self.peer_deadline(pi) {
                        self.arm_peer(pi, d);
                    }
                }
                Owner::Req(h) => {
                    let Some(r) = self.req_mut(h) else { continue };
                    if r.armed != Some(t) {
                        continue;
                    }
                    r.armed = None;
                    self.req_timeout(now, h);
                    if let Some(d) = self.req_deadline(h) {
                        self.arm_req(h, d);
                    }
                }
            }
        }
    }

    /// A peer's true next deadline: its delayed ack, its oldest resend, or the moment
    /// its oldest unacknowledged frame makes it unreachable.
    fn peer_deadline(&self, pi: u16) -> Option<u64> {
        self.peers[pi as usize].rel.deadline(&self.reliability)
    }

    fn peer_timeout(&mut self, now: u64, pi: u16) {
        if self.peers[pi as usize].rel.ack_due(now) {
            self.queue_ack(pi);
        }
        let txq = &mut self.txq;
        let p = &mut self.peers[pi as usize];
        let t = p.rel.on_timeout(now, &self.reliability, |seq| {
            txq.push_back(Tx::Seq {
                peer: pi,
                seq,
                frag: 0,
            });
        });
        if t == Timeout::Unreachable {
            self.fail_peer(pi, Code::Unreachable, false);
        }
    }

    /// A request's true next deadline: a connect's next try, a pull's oldest block or
    /// its timeout.
    fn req_deadline(&self, h: u32) -> Option<u64> {
        let r = self.req(h)?;
        if r.state != ReqState::Active {
            return None;
        }
        match r.kind {
            ReqKind::Connect => Some(r.last_try + self.cfg.resend_ns),
            ReqKind::Recv => {
                let p = r.pull.as_ref()?;
                if p.only_waiting() {
                    return None; // armed again when it gets room
                }
                let flow = &self.peers[r.peer as usize].flow;
                let block = p
                    .blocks
                    .iter()
                    .map(|b| flow.due(b.sent, b.tries, self.cfg.resend_ns))
                    .min();
                let dead = p.last_progress + self.cfg.request_timeout_ns;
                Some(block.map_or(dead, |b| b.min(dead)))
            }
            ReqKind::Send => None,
        }
    }

    fn req_timeout(&mut self, now: u64, h: u32) {
        let resend = self.cfg.resend_ns;
        let connect_timeout = self.cfg.connect_timeout_ns;
        let request_timeout = self.cfg.request_timeout_ns;
        let Some(r) = self.req_mut(h) else { return };
        if r.state != ReqState::Active {
            return;
        }
        match r.kind {
            ReqKind::Connect if now >= r.last_try + resend => {
                if now >= r.started + connect_timeout {
                    self.complete(h, Code::Unreachable);
                } else {
                    r.last_try = now;
                    self.txq.push_back(Tx::Connect { req: h });
                }
            }
            ReqKind::Recv => {
                let peer = r.peer as usize;
                let Some(pull) = r.pull.as_ref() else {
                    return;
                };
                if pull.only_waiting() {
                    return;
                }
                if now >= pull.last_progress + request_timeout {
                    self.abandon_pull(h);
                    self.complete(h, Code::Unreachable);
                    // The receives waiting for the window it held get its room (and
                    // their own clocks).
                    self.grant(now, peer as u16);
                    return;
                }
                // Borrowed again by field: the request and its peer's window at once.
                let r = &mut self.reqs[Request(h).index()];
                let pull = r.pull.as_mut().expect("checked");
                let flow = &mut self.peers[peer].flow;
                // Rarely more than the window's few blocks.
                let mut again: Vec<(usize, usize)> = Vec::new();
                for b in pull.blocks.iter_mut() {
                    if now >= flow.due(b.sent, b.tries, resend) {
                        b.sent = now;
                        b.tries = b.tries.saturating_add(1);
                        b.passed = 0;
                        again.extend(pull_gaps(&pull.have, b.start, b.end));
                    }
                }
                if !again.is_empty() {
                    flow.lost(now);
                }
                for (a, b) in again {
                    self.stats.pull_rerequests += 1;
                    self.txq.push_back(Tx::Pull {
                        req: h,
                        offset: a,
                        len: b - a,
                    });
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Owner, Timers};

    /// Only an earlier deadline pushes an entry; due entries come out earliest first and
    /// a later one stays for later.
    #[test]
    fn arm_pushes_only_earlier_deadlines() {
        let mut t = Timers::default();
        let mut armed = None;
        t.arm(&mut armed, 100, Owner::Peer(0));
        t.arm(&mut armed, 150, Owner::Peer(0));
        assert_eq!(t.heap.len(), 1, "a later deadline pushes nothing");
        t.arm(&mut armed, 50, Owner::Peer(0));
        assert_eq!((armed, t.next()), (Some(50), Some(50)));
        let mut other = None;
        t.arm(&mut other, 70, Owner::Req(7));
        assert_eq!(t.pop_due(60), Some((50, Owner::Peer(0))));
        assert_eq!(t.pop_due(60), None);
        assert_eq!(t.pop_due(100), Some((70, Owner::Req(7))));
        assert_eq!(t.pop_due(100), Some((100, Owner::Peer(0))));
        assert_eq!(t.next(), None);
    }
}
