//! Peers: the nodes this engine exchanges frames with, each with its reliability
//! session, its queue of work ([`super::flow`]), and the connections that ride on it;
//! sessions (a restarted peer), and what a peer's failure fails.
//!
//! Must never know a frame's layout; must never let a frame from an unknown address
//! create state unless it is a connect (and then only up to [`super::Config::max_peers`]).

use std::collections::VecDeque;

use crate::hash::FastSet;

use myrix_mx_proto::reliability::Session;

use super::flow::{Item, Pending};
use super::*;

/// One peer's state.
pub(super) struct Peer<A> {
    pub(super) addr: A,
    pub(super) rel: Session<Item>,
    /// The peer's session, once a frame told it.
    pub(super) remote_session: Option<u32>,
    /// Work not yet sequenced, in order ([`super::flow`]): what we ask of the peer as
    /// its importer (connects, writes, read requests, flushes, signals).
    pub(super) waiting: VecDeque<Pending>,
    /// What we answer the peer as its exporter (connect, read and flush replies,
    /// signals to its imports, aborts), in order, sequenced before [`Peer::waiting`]:
    /// answers never wait behind our own requests ([`super::flow`]).
    pub(super) answers: VecDeque<Pending>,
    /// Write and read-reply data bytes sequenced and not acknowledged.
    pub(super) data_in_flight: usize,
    /// Read bytes requested from the peer and not answered.
    pub(super) reads_in_flight: usize,
    /// Put bytes queued and not yet sequenced.
    pub(super) queued: usize,
    /// Read-reply bytes held for the peer (exporter side).
    pub(super) reply_buffered: usize,
    /// Our imports of the peer's segments.
    pub(super) imports: FastSet<u32>,
    /// Connections the peer holds to our segments.
    pub(super) exports: FastSet<u32>,
    /// The earliest deadline this peer has on the timer heap.
    pub(super) armed: Option<u64>,
    /// Items sequenced to the peer and frames delivered from it, counted past the
    /// reliability layer's 16 bits: bits 16..24 go on the wire (`seq_hi`, `ack_hi`),
    /// so a frame the network held back while the numbers went round is known as old
    /// ([`super::frames`]).
    pub(super) tx_count: u32,
    pub(super) rx_count: u32,
    /// Added to the engine's session in frames to this peer: raised each time this
    /// side starts its numbering with the peer afresh, so the peer sees a newer session
    /// and starts afresh too.
    pub(super) epoch: u32,
    /// Numbering was restarted on this side (the peer was declared unreachable, or
    /// gone) and no frame of a newer session has come from the peer since: frames of
    /// its known session are numbered the old way and are dropped.
    pub(super) resync: bool,
    /// While [`Peer::resync`]: when the next probe (an explicit ack, carrying our
    /// newer session) goes, so a link that comes back is noticed without traffic.
    pub(super) probe_at: Option<u64>,
    /// The peer said it leaves ([`BYE`]) and no newer session came since: what was
    /// owed to it was dropped at its bye and our own leave skips it. (A new call
    /// towards it is still queued and ends at the retry limit, as towards any silent
    /// node.)
    pub(super) left: bool,
    /// We said we leave ([`Engine::leave`]).
    pub(super) bye_sent: bool,
    /// When a frame of the peer's current session last came in (0: never), for
    /// [`Engine::peer_silence`].
    pub(super) heard_at: u64,
    /// The peer's bye came while ours to it was not acknowledged: it may resend its
    /// bye until it hears our ack, so the driver lingers ([`Engine::lingering`]).
    pub(super) linger: bool,
}

/// The connection a `Disconnect` names to say "this node leaves" (a bye): 0 is never a
/// connection's id (`Engine::fresh_id`), so the wire format is unchanged and an engine
/// that does not know byes takes it as the disconnect of an unknown connection:
/// acknowledged and ignored.
pub(super) const BYE: u32 = 0;

impl<A> Peer<A> {
    fn new(addr: A) -> Peer<A> {
        Peer {
            addr,
            rel: Session::default(),
            remote_session: None,
            waiting: VecDeque::new(),
            answers: VecDeque::new(),
            data_in_flight: 0,
            reads_in_flight: 0,
            queued: 0,
            reply_buffered: 0,
            imports: FastSet::default(),
            exports: FastSet::default(),
            armed: None,
            tx_count: 0,
            rx_count: 0,
            epoch: 0,
            resync: false,
            probe_at: None,
            left: false,
            bye_sent: false,
            linger: false,
            heard_at: 0,
        }
    }

    /// Numbering starts afresh, both ways (a new session, or a resynchronisation).
    pub(super) fn reset_numbering(&mut self) {
        self.rel.reset();
        self.tx_count = 0;
        self.rx_count = 0;
    }
}

/// What to do with a frame, by its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SessionCheck {
    Accept,
    /// From an older incarnation of the peer.
    Drop,
}

impl<A: Copy + Eq + Hash + std::fmt::Debug> Engine<A> {
    /// The peer at `addr`, made if new and there is room.
    pub(super) fn peer_or_new(&mut self, addr: A) -> Option<u32> {
        if let Some(&p) = self.peer_of.get(&addr) {
            return Some(p);
        }
        if self.peers.len() >= self.cfg.max_peers {
            return None;
        }
        let p = self.peers.len() as u32;
        self.peers.push(Peer::new(addr));
        self.peer_of.insert(addr, p);
        Some(p)
    }

    /// A frame from peer `pi` carries `session`: accept it, or drop it as stale.
    ///
    /// A newer session than the one known means the peer restarted its numbering
    /// with us: its process restarted, or it declared us unreachable and starts afresh
    /// (a rail that came back). If this side restarted its own numbering meanwhile
    /// ([`Peer::resync`]) both are fresh: accepted. Otherwise everything with the old
    /// numbering fails with [`RsmError::ConnAborted`], this side starts afresh too and
    /// presents a newer session in turn (so a peer that waits for one accepts ours).
    ///
    /// While this side waits for the peer to start afresh, frames of its known session
    /// are dropped, and answered with an explicit ack: it carries our newer session,
    /// which tells the peer to start afresh.
    pub(super) fn check_session(&mut self, pi: u32, session: u32) -> SessionCheck {
        let p = &mut self.peers[pi as usize];
        let Some(known) = p.remote_session else {
            p.remote_session = Some(session);
            p.resync = false;
            return SessionCheck::Accept;
        };
        let newer = (session.wrapping_sub(known) as i32) > 0;
        if session == known && !p.resync {
            SessionCheck::Accept
        } else if session == known {
            self.stats.resync_dropped += 1;
            self.queue_ack(pi);
            SessionCheck::Drop
        } else if newer && p.resync {
            p.remote_session = Some(session);
            p.resync = false;
            p.probe_at = None;
            // A new incarnation of a peer that left, as in the branch below.
            p.left = false;
            p.linger = false;
            // Answered: our own probes stop now, and the peer may not have heard our
            // newer session yet (its copies were lost while the link was down); it
            // would wait in resync for ever.
            self.queue_ack(pi);
            SessionCheck::Accept
        } else if newer {
            self.peer_failed(pi, RsmError::ConnAborted);
            let p = &mut self.peers[pi as usize];
            // A new incarnation of a peer that left: a peer like any other again.
            p.left = false;
            p.linger = false;
            p.reset_numbering();
            p.epoch = p.epoch.wrapping_add(1);
            p.remote_session = Some(session);
            // Our newer session, at once: the peer may be waiting for it.
            self.queue_ack(pi);
            SessionCheck::Accept
        } else {
            SessionCheck::Drop
        }
    }

    /// The transport says the peer at `addr` is gone (its process died), or the driver
    /// wants to reach a peer declared unreachable again: everything with it fails with
    /// [`RsmError::ConnAborted`] and numbering starts afresh (a later incarnation, or
    /// the same peer once it sees our newer session, starts afresh too).
    pub fn peer_gone(&mut self, addr: &A) {
        let Some(&pi) = self.peer_of.get(addr) else {
            return;
        };
        let p = &self.peers[pi as usize];
        if p.resync && p.tx_count == 0 && p.rel.all_acked() {
            return; // fresh already, nothing sent since
        }
        self.peer_failed(pi, RsmError::ConnAborted);
        self.restart_numbering(pi);
    }

    /// This side starts its numbering with peer `pi` afresh and waits for the peer to
    /// do the same ([`Peer::resync`]).
    pub(super) fn restart_numbering(&mut self, pi: u32) {
        let p = &mut self.peers[pi as usize];
        p.reset_numbering();
        p.epoch = p.epoch.wrapping_add(1);
        p.resync = p.remote_session.is_some();
    }

    /// The peer stopped acknowledging ([`RsmError::RemoteNodeUnreachable`]) or went
    /// away ([`RsmError::ConnAborted`]): its queued and unacknowledged work is dropped,
    /// our imports of its segments fail (pending connects, gets and flushes complete
    /// with `err`; later calls return it), its connections to our segments are removed.
    pub(super) fn peer_failed(&mut self, pi: u32, err: RsmError) {
        let p = &mut self.peers[pi as usize];
        let all = p.rel.next_seq();
        while let Some(item) = p.rel.pop_acked(all) {
            item.release(&mut self.bufs);
        }
        for w in p.waiting.drain(..).chain(p.answers.drain(..)) {
            w.release(&mut self.bufs);
        }
        p.data_in_flight = 0;
        p.reads_in_flight = 0;
        p.queued = 0;
        p.reply_buffered = 0;
        let imports: Vec<u32> = p.imports.drain().collect();
        let exports: Vec<u32> = p.exports.drain().collect();
        for imp in imports {
            self.import_failed(imp, err);
        }
        for c in exports {
            if let Some(conn) = self.exp_conns.remove(&c) {
                if let Some(e) = self.exports.get_mut(&conn.seg) {
                    e.conns.remove(&c);
                }
            }
        }
    }

    /// This node leaves (its controller is released, its process exits): a bye, queued
    /// behind everything else, to every peer it has exchanged frames with and that is
    /// neither gone nor left. A peer that takes it fails what it has with us
    /// ([`RsmError::ConnAborted`]) and expects nothing more: it does not resend to us
    /// what we received but whose ack it lost, and its gets and flushes towards our
    /// segments end at once ([`Engine::on_bye`]). [`Engine::idle`] holds once every
    /// bye is acknowledged (or the peer's own bye came). Call once everything else is
    /// drained (idle), so the bye is the last frame each peer gets from us.
    pub fn leave(&mut self) {
        for pi in 0..self.peers.len() as u32 {
            let p = &mut self.peers[pi as usize];
            if p.left || p.bye_sent || p.resync || p.remote_session.is_none() {
                continue;
            }
            if p.rel.is_unreachable() {
                continue;
            }
            p.bye_sent = true;
            self.push_pending(pi, Pending::Item(Item::Disconnect { exp: BYE }));
        }
    }

    /// Peer `pi` leaves (its bye, delivered in order: everything it sent before was
    /// applied). What we have with it fails with [`RsmError::ConnAborted`] (our imports
    /// of its segments, their pending gets and flushes; its connections to ours), what
    /// we queued or sent it and it did not acknowledge is dropped (it wants none of
    /// it), and the bye is acknowledged at once (the ack is built when sent, after the bye
    /// counts as delivered). Numbering is kept, so a resent bye
    /// is acknowledged again; a later incarnation of the peer presents a newer session.
    pub(super) fn on_bye(&mut self, pi: u32) {
        let p = &mut self.peers[pi as usize];
        let ours_unacked = p.bye_sent && !p.rel.all_acked();
        p.left = true;
        p.linger |= ours_unacked;
        self.peer_failed(pi, RsmError::ConnAborted);
        // At once, not after the ack delay: the peer waits for it to close.
        self.queue_ack(pi);
    }

    /// Whether a peer's bye came while ours to it was unacknowledged: both sides left
    /// at once, and the peer may not have our ack of its bye (it then resends the bye
    /// until it has, or until its retry limit). A driver about to close its endpoint
    /// keeps answering for a short while after [`Engine::idle`] (a linger, as TCP's
    /// TIME_WAIT), while frames still come.
    pub fn lingering(&self) -> bool {
        self.peers.iter().any(|p| p.linger)
    }

    /// Whether `addr` has been declared unreachable (or gone) and not heard from since.
    pub fn peer_unreachable(&self, addr: &A) -> bool {
        self.peer_of.get(addr).is_some_and(|&p| {
            let p = &self.peers[p as usize];
            p.rel.is_unreachable() || p.resync
        })
    }

    /// How long `addr` has been silent at `now` (since its last frame of the current
    /// session), and whether we wait for it to acknowledge frames. `None` for a peer
    /// never heard from, or declared unreachable already. A driver with several rails
    /// to a node uses it to find a rail that went dead while it carried nothing
    /// ([`crate::rails::Rails::silent_rails`]): this engine's own timeout counts from
    /// its oldest unacknowledged frame, so a rail that was idle when its link went down
    /// is declared unreachable only `timeout_ns` after its next write.
    pub fn peer_silence(&self, addr: &A, now: u64) -> Option<Silence> {
        let &pi = self.peer_of.get(addr)?;
        let p = &self.peers[pi as usize];
        if p.heard_at == 0 || p.rel.is_unreachable() || p.resync {
            return None;
        }
        Some(Silence {
            heard_ago: now.saturating_sub(p.heard_at),
            waiting: !p.rel.all_acked(),
        })
    }

    /// Declares `addr` unreachable now, as the engine's timeout does (what we have with
    /// it fails with [`RsmError::RemoteNodeUnreachable`], numbering starts afresh and
    /// the peer is probed until it answers): the driver knows the peer is lost on this
    /// rail before the timeout ([`Engine::peer_silence`]). No-op for an unknown peer or
    /// one already declared.
    pub fn declare_unreachable(&mut self, addr: &A, now: u64) {
        let Some(&pi) = self.peer_of.get(addr) else {
            return;
        };
        let p = &mut self.peers[pi as usize];
        if p.rel.is_unreachable() || p.resync {
            return;
        }
        p.rel.set_unreachable();
        self.peer_unreachable_now(pi, now);
    }
}

/// A peer's silence ([`Engine::peer_silence`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Silence {
    /// Nanoseconds since its last frame came in.
    pub heard_ago: u64,
    /// Frames we sent it are unacknowledged.
    pub waiting: bool,
}
