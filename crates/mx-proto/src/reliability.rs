//! A reliability layer over lossy transports, for any protocol that needs sessions,
//! sequence numbers, acks and resends: MX's engine uses it, and so can another protocol
//! on the same transports (remote shared memory) without MX's matching.
//!
//! One [`Session`] is one peer's sending and receiving state:
//!
//! * **sending**: each sequenced item ([`Session::push`]) gets the next sequence number
//!   and is kept until a cumulative ack covers it ([`Session::on_ack`]); the protocol
//!   builds its frame(s) from the item at each (re)send ([`Session::sending`]); items
//!   unacknowledged for [`Params::resend_ns`] are queued again, and one unacknowledged for
//!   [`Params::timeout_ns`] makes the peer unreachable ([`Session::on_timeout`]);
//! * **receiving**: [`Session::classify`] sorts an arriving frame into in order,
//!   duplicate, early (held, up to [`Params::early_window`], and released in order by
//!   [`Session::take_early`]) or stale; [`Session::delivered`] counts what was delivered
//!   and says when an explicit ack is due (after [`Params::ack_after`] frames, or
//!   [`Params::ack_delay_ns`]); every frame sent carries the ack ([`Session::ack`],
//!   [`Session::piggybacked`]).
//!
//! What a sequence number covers is the protocol's policy ([`SeqUnit`]): one frame (MX:
//! each fragment of a medium message has its own) or one message whose frames carry a
//! fragment number (Open-MX).
//!
//! The item type `T` is the protocol's: what it needs to build a sequenced frame again
//! (MX: a fragment of a send, a rendezvous, a notify). This module must never know what
//! a frame looks like, what a message is or how it is matched; it keeps held early frames
//! as opaque bytes. It reads no clock: time comes in as nanoseconds.

use std::collections::{BTreeMap, VecDeque};

/// `a` comes before `b` in the 16-bit sequence space.
#[inline(always)]
pub fn seq_lt(a: u16, b: u16) -> bool {
    (a.wrapping_sub(b) as i16) < 0
}

/// What one sequence number covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeqUnit {
    /// One frame: every frame is acknowledged, held early and resent on its own (MX).
    Frame,
    /// One message: its frames share the number and are told apart by a fragment
    /// number, and the number is delivered when the last fragment is (Open-MX).
    Message,
}

/// The layer's parameters.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub unit: SeqUnit,
    /// The transport never loses, duplicates or reorders: no acks, no timers, every
    /// frame is in order.
    pub lossless: bool,
    /// Frames delivered before an explicit ack is sent.
    pub ack_after: u32,
    /// Longest an ack waits for a frame to ride on.
    pub ack_delay_ns: u64,
    pub resend_ns: u64,
    /// An item unacknowledged this long makes the peer unreachable.
    pub timeout_ns: u64,
    /// Items in flight.
    pub send_window: u16,
    /// Sequence numbers ahead of the next expected one whose frames are held.
    pub early_window: u16,
}

/// An item sent and not yet acknowledged.
#[derive(Clone, Copy, Debug)]
pub struct Unacked<T> {
    pub seq: u16,
    pub item: T,
    /// 0 until first sent.
    pub first_sent: u64,
    pub last_sent: u64,
    /// Waiting to be (re)sent.
    pub queued: bool,
}

/// Where an arriving sequenced frame stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The next one expected: deliver it, then call [`Session::delivered`].
    InOrder,
    /// Already delivered: drop it and ack again (ours was probably lost).
    Duplicate,
    /// Ahead, inside the window: hold it ([`Session::hold`]).
    Early,
    /// Far ahead (or from a confused peer): drop it.
    Stale,
}

/// What a delivery asks of the protocol about acks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckDue {
    /// Nothing (lossless, or a deadline is already set).
    No,
    /// Send an explicit ack now ([`Session::want_ack`]).
    Now,
    /// A delayed ack is due at this time: arm a timer.
    At(u64),
}

/// What a timeout found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timeout {
    Alive,
    /// An item went unacknowledged for [`Params::timeout_ns`]: the peer is unreachable
    /// (already marked). Its items are kept: the protocol fails them.
    Unreachable,
}

/// One peer's reliability state; see the module docs.
#[derive(Debug)]
pub struct Session<T> {
    tx_next: u16,
    unacked: VecDeque<Unacked<T>>,
    rx_next: u16,
    /// The next fragment of `rx_next` ([`SeqUnit::Message`]).
    rx_frag: u32,
    /// Early frames by sequence number and fragment.
    early: BTreeMap<(u16, u32), Vec<u8>>,
    rx_unacked: u32,
    ack_deadline: Option<u64>,
    ack_queued: bool,
    unreachable: bool,
}

impl<T> Default for Session<T> {
    fn default() -> Self {
        Session {
            tx_next: 0,
            unacked: VecDeque::new(),
            rx_next: 0,
            rx_frag: 0,
            early: BTreeMap::new(),
            rx_unacked: 0,
            ack_deadline: None,
            ack_queued: false,
            unreachable: false,
        }
    }
}

impl<T: Copy> Session<T> {
    /// Starts afresh (a new session with the peer).
    pub fn reset(&mut self) {
        self.tx_next = 0;
        self.unacked.clear();
        self.rx_next = 0;
        self.rx_frag = 0;
        self.early.clear();
        self.rx_unacked = 0;
        self.ack_deadline = None;
        self.ack_queued = false;
        self.unreachable = false;
    }

    // ------------------------------------------------------------ sending

    /// The sequence number the next item gets.
    #[inline(always)]
    pub fn next_seq(&self) -> u16 {
        self.tx_next
    }

    /// Nothing sent is waiting for an ack.
    #[inline(always)]
    pub fn all_acked(&self) -> bool {
        self.unacked.is_empty()
    }

    /// Items sent (or queued) and not acknowledged.
    #[inline]
    pub fn in_flight(&self) -> usize {
        self.unacked.len()
    }

    /// Whether `items` more fit the send window (an empty window takes any number, so
    /// that a message larger than the window still goes).
    #[inline]
    pub fn has_room(&self, items: usize, params: &Params) -> bool {
        let n = self.unacked.len();
        n == 0 || n + items <= params.send_window as usize
    }

    /// Keeps `item` under the next sequence number, queued for sending; returns the
    /// number.
    #[inline]
    pub fn push(&mut self, item: T) -> u16 {
        let seq = self.tx_next;
        self.tx_next = seq.wrapping_add(1);
        self.unacked.push_back(Unacked {
            seq,
            item,
            first_sent: 0,
            last_sent: 0,
            queued: true,
        });
        seq
    }

    /// A lossless transport's item sent and forgotten at once: it only takes a number.
    #[inline(always)]
    pub fn push_untracked(&mut self) -> u16 {
        let seq = self.tx_next;
        self.tx_next = seq.wrapping_add(1);
        seq
    }

    /// Item `seq` is being sent at `now`: its item and whether this is a resend. `None`
    /// when it was acknowledged meanwhile.
    #[inline]
    pub fn sending(&mut self, seq: u16, now: u64) -> Option<(T, bool)> {
        let i = self.index_of(seq)?;
        let u = &mut self.unacked[i];
        u.queued = false;
        let again = u.first_sent != 0;
        if !again {
            u.first_sent = now.max(1);
        }
        u.last_sent = now;
        Some((u.item, again))
    }

    /// Removes item `seq` (a lossless transport: sent means delivered).
    #[inline]
    pub fn take(&mut self, seq: u16) -> Option<T> {
        let i = self.index_of(seq)?;
        self.unacked.remove(i).map(|u| u.item)
    }

    #[inline]
    fn index_of(&self, seq: u16) -> Option<usize> {
        // Numbers are consecutive from the front, unless a lossless transport took
        // some from the middle: then look.
        let front = self.unacked.front()?.seq;
        let i = seq.wrapping_sub(front) as usize;
        match self.unacked.get(i) {
            Some(u) if u.seq == seq => Some(i),
            _ => self.unacked.iter().position(|u| u.seq == seq),
        }
    }

    /// The peer expects `ack` next: every item before it is delivered and passed to
    /// `done`, oldest first. True when any was.
    #[inline]
    pub fn on_ack(&mut self, ack: u16, mut done: impl FnMut(T)) -> bool {
        let mut any = false;
        while let Some(item) = self.pop_acked(ack) {
            any = true;
            done(item);
        }
        any
    }

    /// [`Session::on_ack`] one item at a time, for a protocol that needs itself back
    /// between items.
    #[inline]
    pub fn pop_acked(&mut self, ack: u16) -> Option<T> {
        if !seq_lt(self.unacked.front()?.seq, ack) {
            return None;
        }
        self.unacked.pop_front().map(|u| u.item)
    }

    /// Forgets every item (the protocol has failed them).
    pub fn drop_unacked(&mut self) {
        self.unacked.clear();
    }

    pub fn is_unreachable(&self) -> bool {
        self.unreachable
    }

    /// The transport says the peer is gone.
    pub fn set_unreachable(&mut self) {
        self.unreachable = true;
    }

    // ------------------------------------------------------------ receiving

    /// The ack every frame to the peer carries: the next number expected.
    #[inline(always)]
    pub fn ack(&self) -> u16 {
        self.rx_next
    }

    /// The next fragment expected of [`Session::ack`]'s number (0 under
    /// [`SeqUnit::Frame`]).
    #[inline(always)]
    pub fn rx_frag(&self) -> u32 {
        self.rx_frag
    }

    /// Where a frame numbered `seq` (fragment `frag`, 0 under [`SeqUnit::Frame`])
    /// stands.
    #[inline]
    pub fn classify(&self, seq: u16, frag: u32, params: &Params) -> Arrival {
        if params.lossless || (seq == self.rx_next && frag == self.rx_frag) {
            Arrival::InOrder
        } else if seq_lt(seq, self.rx_next) || (seq == self.rx_next && frag < self.rx_frag) {
            Arrival::Duplicate
        } else if seq.wrapping_sub(self.rx_next) < params.early_window {
            Arrival::Early
        } else {
            Arrival::Stale
        }
    }

    /// Holds an early frame's bytes; false (and the bytes back) if it is held already.
    pub fn hold(&mut self, seq: u16, frag: u32, bytes: Vec<u8>) -> Result<(), Vec<u8>> {
        match self.early.entry((seq, frag)) {
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(bytes);
                Ok(())
            }
            std::collections::btree_map::Entry::Occupied(_) => Err(bytes),
        }
    }

    /// Whether frame `(seq, frag)` is held.
    pub fn holds(&self, seq: u16, frag: u32) -> bool {
        self.early.contains_key(&(seq, frag))
    }

    /// The held frame that is now in order, if any; deliver it, then call
    /// [`Session::delivered`] (or give it back with [`Session::hold`] if it cannot be
    /// delivered yet).
    #[inline]
    pub fn take_early(&mut self) -> Option<Vec<u8>> {
        if self.early.is_empty() {
            return None;
        }
        self.early.remove(&(self.rx_next, self.rx_frag))
    }

    /// The frame in order was delivered at `now`; `last` says it ends its message (only
    /// [`SeqUnit::Message`] looks).
    #[inline]
    pub fn delivered(&mut self, now: u64, last: bool, params: &Params) -> AckDue {
        if params.unit == SeqUnit::Message && !last {
            self.rx_frag += 1;
            return AckDue::No;
        }
        self.rx_frag = 0;
        self.rx_next = self.rx_next.wrapping_add(1);
        if params.lossless {
            return AckDue::No;
        }
        self.rx_unacked += 1;
        if self.rx_unacked >= params.ack_after {
            AckDue::Now
        } else if self.ack_deadline.is_none() {
            let at = now + params.ack_delay_ns;
            self.ack_deadline = Some(at);
            AckDue::At(at)
        } else {
            AckDue::No
        }
    }

    /// A lossless transport's whole message delivered straight from its frame.
    #[inline(always)]
    pub fn delivered_untracked(&mut self) {
        self.rx_next = self.rx_next.wrapping_add(1);
    }

    /// Asks for an explicit ack: true when the protocol must queue one (none is queued).
    #[inline]
    pub fn want_ack(&mut self) -> bool {
        !std::mem::replace(&mut self.ack_queued, true)
    }

    /// The explicit ack asked for is going out (or was dropped).
    #[inline]
    pub fn ack_sent(&mut self) {
        self.ack_queued = false;
    }

    /// A frame to the peer carries the ack: no explicit one is needed for now.
    #[inline(always)]
    pub fn piggybacked(&mut self) {
        self.rx_unacked = 0;
        self.ack_deadline = None;
    }

    /// Nothing to send, resend or acknowledge.
    pub fn idle(&self) -> bool {
        self.unacked.is_empty() && !self.ack_queued && self.ack_deadline.is_none()
    }

    // ------------------------------------------------------------ time

    /// The next time [`Session::on_timeout`] has work: a delayed ack, the oldest resend,
    /// or the moment the oldest item makes the peer unreachable.
    pub fn deadline(&self, params: &Params) -> Option<u64> {
        if params.lossless {
            return None;
        }
        let resend = self
            .unacked
            .iter()
            .filter(|u| !u.queued)
            .map(|u| u.last_sent + params.resend_ns);
        let dead = self
            .unacked
            .iter()
            .filter(|u| u.first_sent > 0)
            .map(|u| u.first_sent + params.timeout_ns);
        self.ack_deadline
            .into_iter()
            .chain(resend)
            .chain(dead)
            .min()
    }

    /// Whether the delayed ack is due at `now` (then the deadline is spent: the
    /// protocol asks for an explicit ack with [`Session::want_ack`]).
    pub fn ack_due(&mut self, now: u64) -> bool {
        let due = self.ack_deadline.is_some_and(|d| d <= now);
        if due {
            self.ack_deadline = None;
        }
        due
    }

    /// Does what is due at `now` besides the ack ([`Session::ack_due`]): items due for a
    /// resend are queued again and passed to `resend` (the protocol queues their
    /// frames); an item too old makes the peer unreachable.
    ///
    /// Every item due is resent (go-back-N). A receiver that holds early frames needs
    /// only the oldest: see [`Session::on_timeout_oldest`].
    pub fn on_timeout(
        &mut self,
        now: u64,
        params: &Params,
        mut resend: impl FnMut(u16),
    ) -> Timeout {
        let dead = self
            .unacked
            .iter()
            .any(|u| u.first_sent > 0 && now >= u.first_sent + params.timeout_ns);
        if dead {
            self.unreachable = true;
            return Timeout::Unreachable;
        }
        for u in self.unacked.iter_mut() {
            if !u.queued && u.first_sent > 0 && now >= u.last_sent + params.resend_ns {
                u.queued = true;
                resend(u.seq);
            }
        }
        Timeout::Alive
    }
}

/// Resending only the oldest item, for a receiver that holds early frames.
///
/// Acks are cumulative: while the oldest item is missing at the receiver, every later
/// one looks unacknowledged, although a receiver that holds early frames has them. So
/// [`Session::on_timeout`], which resends every item due, sends the whole window again
/// for each frame the network loses or holds back; on a link that reorders a lot, or
/// to a receiver slower than the sender, those resends fill the receiver's socket
/// buffer, every frame it reads (and the ack it carries) is that much older, and the
/// window never opens again. Here a timer resends only the oldest item; once an ack
/// frees items, the next hole (the new oldest item, if it is due) is resent at once
/// ([`Session::resend_oldest_if_due`]), so k holes cost one timeout and k round trips,
/// and a timeout costs one frame.
impl<T: Copy> Session<T> {
    /// The next time [`Session::on_timeout_oldest`] has work: the delayed ack, the
    /// oldest item's resend, or the moment it makes the peer unreachable. O(1).
    pub fn deadline_oldest(&self, params: &Params) -> Option<u64> {
        if params.lossless {
            return None;
        }
        // Items are first sent in order: the oldest was sent first.
        let front = self.unacked.front().filter(|u| u.first_sent > 0);
        let resend = front
            .filter(|u| !u.queued)
            .map(|u| u.last_sent + params.resend_ns);
        let dead = front.map(|u| u.first_sent + params.timeout_ns);
        self.ack_deadline
            .into_iter()
            .chain(resend)
            .chain(dead)
            .min()
    }

    /// [`Session::on_timeout`] for the oldest item only: the peer is unreachable if it
    /// went unacknowledged for [`Params::timeout_ns`]; otherwise it is passed to
    /// `resend` if due.
    pub fn on_timeout_oldest(
        &mut self,
        now: u64,
        params: &Params,
        resend: impl FnOnce(u16),
    ) -> Timeout {
        if let Some(u) = self.unacked.front() {
            if u.first_sent > 0 && now >= u.first_sent + params.timeout_ns {
                self.unreachable = true;
                return Timeout::Unreachable;
            }
        }
        if let Some(seq) = self.resend_oldest_if_due(now, params) {
            resend(seq);
        }
        Timeout::Alive
    }

    /// The oldest item, queued again when it was sent [`Params::resend_ns`] ago or
    /// more and is not queued already: the protocol sends it. Called after an ack freed
    /// items, it fills the receiver's next hole without waiting for a timer.
    pub fn resend_oldest_if_due(&mut self, now: u64, params: &Params) -> Option<u16> {
        let u = self.unacked.front_mut()?;
        if u.queued || u.first_sent == 0 || now < u.last_sent + params.resend_ns {
            return None;
        }
        u.queued = true;
        Some(u.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(unit: SeqUnit) -> Params {
        Params {
            unit,
            lossless: false,
            ack_after: 3,
            ack_delay_ns: 100,
            resend_ns: 1_000,
            timeout_ns: 10_000,
            send_window: 4,
            early_window: 8,
        }
    }

    /// Two sessions joined by a loop that can drop, delay and duplicate frames: items
    /// arrive once, in order.
    #[test]
    fn in_order_delivery_with_dup_early_and_stale() {
        let p = params(SeqUnit::Frame);
        let mut rx = Session::<u32>::default();
        assert_eq!(rx.classify(0, 0, &p), Arrival::InOrder);
        assert_eq!(rx.delivered(5, true, &p), AckDue::At(105));
        assert_eq!(rx.ack(), 1);
        // 3 arrives before 1 and 2: held.
        assert_eq!(rx.classify(3, 0, &p), Arrival::Early);
        rx.hold(3, 0, vec![3]).unwrap();
        assert_eq!(rx.hold(3, 0, vec![3]), Err(vec![3]), "held twice");
        assert_eq!(rx.take_early(), None, "2 is still missing");
        assert_eq!(rx.classify(0, 0, &p), Arrival::Duplicate);
        assert_eq!(rx.classify(9, 0, &p), Arrival::Stale);
        assert_eq!(rx.classify(0x8000, 0, &p), Arrival::Stale);
        for s in 1..3 {
            assert_eq!(rx.classify(s, 0, &p), Arrival::InOrder);
            let due = rx.delivered(6, true, &p);
            assert_eq!(due, if s == 2 { AckDue::Now } else { AckDue::No });
        }
        assert_eq!(rx.take_early(), Some(vec![3]));
        rx.delivered(7, true, &p);
        assert_eq!(rx.ack(), 4);
        assert!(rx.want_ack());
        assert!(!rx.want_ack(), "one explicit ack at a time");
        rx.ack_sent();
        rx.piggybacked();
    }

    #[test]
    fn acks_release_items_in_order_and_open_the_window() {
        let p = params(SeqUnit::Frame);
        let mut tx = Session::<char>::default();
        for c in ['a', 'b', 'c', 'd'] {
            assert!(tx.has_room(1, &p));
            let s = tx.push(c);
            assert_eq!(tx.sending(s, 10), Some((c, false)));
        }
        assert!(!tx.has_room(1, &p));
        let mut done = Vec::new();
        assert!(tx.on_ack(2, |c| done.push(c)));
        assert_eq!(done, ['a', 'b']);
        assert!(
            !tx.on_ack(2, |c| done.push(c)),
            "a repeated ack frees nothing"
        );
        assert!(tx.has_room(2, &p));
        assert_eq!(tx.sending(0, 20), None, "acknowledged");
        assert_eq!(tx.take(3), Some('d'));
        assert_eq!(tx.in_flight(), 1);
    }

    /// Unacknowledged items are resent every `resend_ns`; after `timeout_ns` the peer is
    /// unreachable.
    #[test]
    fn resend_after_timeout_then_unreachable() {
        let p = params(SeqUnit::Frame);
        let mut tx = Session::<u8>::default();
        let s = tx.push(7);
        assert_eq!(tx.deadline(&p), None, "queued, not sent: no timer yet");
        tx.sending(s, 100);
        assert_eq!(tx.deadline(&p), Some(1_100));
        let mut again = Vec::new();
        assert_eq!(tx.on_timeout(500, &p, |s| again.push(s)), Timeout::Alive);
        assert!(again.is_empty());
        let mut tries = 1;
        let mut now = 1_100;
        while tx.on_timeout(now, &p, |s| again.push(s)) == Timeout::Alive {
            assert_eq!(again.pop(), Some(s));
            assert_eq!(tx.sending(s, now), Some((7, true)));
            tries += 1;
            now = tx.deadline(&p).expect("a deadline while unacknowledged");
        }
        assert_eq!(tries, 10, "sent at 100, resent every 1000 until 10100");
        assert_eq!(now, 10_100);
        assert!(tx.is_unreachable());
        tx.reset();
        assert!(!tx.is_unreachable() && tx.idle());
    }

    /// The oldest-only policy resends one item per timeout, the next hole as soon as an
    /// ack frees the one before it, and declares the peer unreachable on the oldest.
    #[test]
    fn oldest_only_resends_one_hole_at_a_time() {
        let p = params(SeqUnit::Frame);
        let mut tx = Session::<u8>::default();
        for i in 0..4 {
            let s = tx.push(i);
            tx.sending(s, 100 + u64::from(i));
        }
        assert_eq!(tx.deadline_oldest(&p), Some(1_100));
        let mut again = Vec::new();
        assert_eq!(
            tx.on_timeout_oldest(1_099, &p, |s| again.push(s)),
            Timeout::Alive
        );
        assert!(again.is_empty(), "not due yet");
        tx.on_timeout_oldest(1_200, &p, |s| again.push(s));
        assert_eq!(again, [0], "only the oldest, although all four are due");
        assert_eq!(tx.resend_oldest_if_due(1_200, &p), None, "queued already");
        assert_eq!(tx.sending(0, 1_200), Some((0, true)));
        // The receiver held 1 and 3: the ack frees 0 and 1, and 2 is the next hole.
        assert!(tx.on_ack(2, |_| {}));
        assert_eq!(tx.resend_oldest_if_due(1_200, &p), Some(2));
        assert_eq!(tx.sending(2, 1_200), Some((2, true)));
        assert!(tx.on_ack(4, |_| {}));
        assert_eq!(tx.resend_oldest_if_due(1_200, &p), None, "nothing left");
        // An item never acknowledged makes the peer unreachable.
        let s = tx.push(9);
        tx.sending(s, 2_000);
        assert_eq!(tx.deadline_oldest(&p), Some(3_000));
        let mut now = 3_000;
        while tx.on_timeout_oldest(now, &p, |s| again.push(s)) == Timeout::Alive {
            tx.sending(s, now);
            now = tx.deadline_oldest(&p).unwrap();
        }
        assert_eq!(now, 12_000);
        assert!(tx.is_unreachable());
    }

    #[test]
    fn delayed_ack_is_reported_when_due() {
        let p = params(SeqUnit::Frame);
        let mut rx = Session::<u8>::default();
        assert_eq!(rx.delivered(0, true, &p), AckDue::At(100));
        assert_eq!(
            rx.delivered(50, true, &p),
            AckDue::No,
            "one deadline at a time"
        );
        assert_eq!(rx.deadline(&p), Some(100));
        assert!(!rx.ack_due(99));
        assert!(rx.ack_due(100));
        assert!(!rx.ack_due(100), "spent");
        assert_eq!(rx.deadline(&p), None);
    }

    /// Under `SeqUnit::Message` a number is delivered with its last fragment; fragments
    /// are held early and dropped as duplicates one by one.
    #[test]
    fn per_message_numbers_count_fragments() {
        let p = params(SeqUnit::Message);
        let mut rx = Session::<u8>::default();
        assert_eq!(rx.classify(0, 0, &p), Arrival::InOrder);
        assert_eq!(rx.delivered(0, false, &p), AckDue::No);
        assert_eq!(rx.classify(0, 0, &p), Arrival::Duplicate);
        assert_eq!(rx.classify(0, 2, &p), Arrival::Early);
        rx.hold(0, 2, vec![2]).unwrap();
        assert_eq!(rx.classify(0, 1, &p), Arrival::InOrder);
        rx.delivered(0, false, &p);
        assert_eq!(rx.take_early(), Some(vec![2]));
        assert_eq!(rx.delivered(0, true, &p), AckDue::At(100));
        assert_eq!((rx.ack(), rx.classify(1, 0, &p)), (1, Arrival::InOrder));
    }

    #[test]
    fn lossless_takes_everything_in_order_without_acks() {
        let mut p = params(SeqUnit::Frame);
        p.lossless = true;
        let mut rx = Session::<u8>::default();
        assert_eq!(rx.classify(42, 0, &p), Arrival::InOrder);
        assert_eq!(rx.delivered(0, true, &p), AckDue::No);
        assert_eq!(rx.deadline(&p), None);
    }
}
