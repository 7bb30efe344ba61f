//! Frames in and out: the transmit queue and frames built from sequenced items;
//! arriving frames checked (layout, peer, session), acknowledgements taken, and
//! sequenced frames delivered once and in order (early ones held, duplicates
//! re-acknowledged) to the importer's or exporter's handler.
//!
//! Must never decide what a frame means to a connection: that is `import` and `export`.

use myrix_mx_proto::reliability::{AckDue, Arrival};
use myrix_wire::rsm::{emit_head, Body, Header, Kind, Repr};

use super::flow::Item;
use super::peers::{SessionCheck, BYE};
use super::*;

/// The largest send and early windows ([`Config::send_window`],
/// [`Config::early_window`]): a legitimate frame, duplicate or early, is never further
/// than this from the number expected.
pub(super) const MAX_WINDOW: u16 = 1 << 14;

/// A frame whose number (24 bits, with `seq_hi`) is this far or further from the one
/// expected was held back in the network while the sender's 16-bit numbers went round
/// (`.ci/netns.sh`'s slow class can hold one for half a second): dropped, ack and all.
/// Taken as new, its ack released frames never delivered (the peer then stopped
/// acknowledging and was declared unreachable), and its data could be held as early
/// and applied in place of the frame that now bears its number.
const OLD: u32 = 1 << 15;

/// The 24-bit distance from `b` to `a`, signed.
fn dist24(a: u32, b: u32) -> i32 {
    ((a.wrapping_sub(b) << 8) as i32) >> 8
}

/// A frame to send.
#[derive(Clone, Copy, Debug)]
pub(super) enum Tx {
    /// Sequenced item `seq` of peer `peer` (acknowledged meanwhile: skipped).
    Seq { peer: u32, seq: u16 },
    /// An explicit ack.
    Ack { peer: u32 },
}

impl<A: Copy + Eq + Hash + std::fmt::Debug> Engine<A> {
    /// The next frame to send, written into `buf` (at least [`Config::mtu`] long): its
    /// destination and length.
    pub fn poll_transmit(&mut self, now: u64, buf: &mut [u8]) -> Option<(A, usize)> {
        while let Some(tx) = self.txq.pop_front() {
            let (pi, body_item) = match tx {
                Tx::Ack { peer } => {
                    let p = &mut self.peers[peer as usize];
                    p.rel.ack_sent();
                    if self.rel.lossless {
                        continue;
                    }
                    (peer, None)
                }
                Tx::Seq { peer, seq } => {
                    let p = &mut self.peers[peer as usize];
                    let Some((item, again)) = p.rel.sending(seq, now) else {
                        continue;
                    };
                    if again {
                        self.stats.resends += 1;
                    }
                    (peer, Some((seq, item)))
                }
            };
            let p = &mut self.peers[pi as usize];
            // An explicit ack carries the next number, so its age can be checked too.
            let seq = body_item.map_or(p.rel.next_seq(), |(s, _)| s);
            let h = frame_header(p, self.session, seq);
            let n = match body_item {
                None => emit_head(&h, &Body::Ack, buf, 0),
                Some((_, item)) => emit_item(&h, item, &self.bufs, buf),
            };
            let Ok(n) = n else {
                // A buffer shorter than the MTU: the item is resent on its timer.
                continue;
            };
            p.rel.piggybacked();
            let addr = p.addr;
            if let Some((seq, _)) = body_item {
                if self.rel.lossless {
                    if let Some(item) = self.peers[pi as usize].rel.take(seq) {
                        self.item_done(pi, item);
                        self.fill_window(pi);
                    }
                } else {
                    self.arm_peer(pi, now + self.cfg.resend_ns);
                }
            }
            self.stats.frames_out += 1;
            return Some((addr, n));
        }
        None
    }

    /// A frame arrived from `from`. `mem` is this node's exported memory (writes are
    /// applied and reads served from it now). False when the frame was dropped
    /// (malformed, from an unknown peer or an older session, stale).
    pub fn handle_frame<M: Memory + ?Sized>(
        &mut self,
        now: u64,
        from: &A,
        frame: &[u8],
        mem: &mut M,
    ) -> bool {
        self.stats.frames_in += 1;
        let Ok(repr) = Repr::parse_bytes(frame) else {
            self.stats.frames_dropped += 1;
            return false;
        };
        let kind = repr.body.kind();
        let pi = match self.last_from {
            Some((a, p)) if a == *from => Some(p),
            _ => match self.peer_of.get(from) {
                Some(&p) => Some(p),
                None if kind == Kind::Connect => self.peer_or_new(*from),
                None => None,
            },
        };
        let Some(pi) = pi else {
            self.stats.frames_dropped += 1;
            return false;
        };
        self.last_from = Some((*from, pi));
        if self.check_session(pi, repr.header.session) == SessionCheck::Drop {
            self.stats.frames_dropped += 1;
            return false;
        }
        // (At least 1: 0 means never heard.)
        self.peers[pi as usize].heard_at = now.max(1);
        let h = repr.header;
        if !self.rel.lossless {
            let p = &self.peers[pi as usize];
            let seq = u32::from(h.seq_hi) << 16 | u32::from(h.seq);
            if dist24(seq, p.rx_count).unsigned_abs() >= OLD {
                self.stats.old_frames += 1;
                return false;
            }
            // An ack is at most our next number, and not from a lap ago (one merely
            // older than our oldest unacknowledged number frees nothing).
            let ack = u32::from(h.ack_hi) << 16 | u32::from(h.ack);
            let behind = dist24(p.tx_count, ack);
            if behind < 0 || behind.unsigned_abs() >= OLD {
                self.stats.old_frames += 1;
                return false;
            }
        }
        self.on_ack(now, pi, repr.header.ack);
        if kind == Kind::Ack {
            return true;
        }
        let seq = repr.header.seq;
        let p = &mut self.peers[pi as usize];
        match p.rel.classify(seq, 0, &self.rel) {
            Arrival::InOrder => {
                self.deliver(now, pi, &repr.body, mem);
                self.advance_rx(now, pi);
                self.drain_early(now, pi, mem);
            }
            Arrival::Duplicate => {
                self.stats.duplicates += 1;
                self.queue_ack(pi);
            }
            Arrival::Early => {
                let _ = p.rel.hold(seq, 0, frame.to_vec());
            }
            Arrival::Stale => {
                self.stats.frames_dropped += 1;
                return false;
            }
        }
        true
    }

    /// Peer `pi` expects `ack` next from us: what it covers is done. If the oldest
    /// item left is overdue, the peer holds what came after it and waits for that one:
    /// it goes again now (only it: see `timers`).
    fn on_ack(&mut self, now: u64, pi: u32, ack: u16) {
        let mut freed = false;
        while let Some(item) = self.peers[pi as usize].rel.pop_acked(ack) {
            freed = true;
            self.item_done(pi, item);
        }
        if freed {
            if let Some(seq) = self.peers[pi as usize]
                .rel
                .resend_oldest_if_due(now, &self.rel)
            {
                self.txq.push_back(Tx::Seq { peer: pi, seq });
            }
            self.fill_window(pi);
        }
    }

    /// The frame in order from `pi` was delivered.
    fn advance_rx(&mut self, now: u64, pi: u32) {
        let p = &mut self.peers[pi as usize];
        p.rx_count = p.rx_count.wrapping_add(1);
        match p.rel.delivered(now, true, &self.rel) {
            AckDue::No => {}
            AckDue::Now => self.queue_ack(pi),
            AckDue::At(at) => self.arm_peer(pi, at),
        }
    }

    /// Delivers held frames that are now in order.
    fn drain_early<M: Memory + ?Sized>(&mut self, now: u64, pi: u32, mem: &mut M) {
        while let Some(bytes) = self.peers[pi as usize].rel.take_early() {
            if let Ok(repr) = Repr::parse_bytes(&bytes) {
                self.deliver(now, pi, &repr.body, mem);
            }
            self.advance_rx(now, pi);
        }
    }

    pub(super) fn queue_ack(&mut self, pi: u32) {
        if !self.rel.lossless && self.peers[pi as usize].rel.want_ack() {
            self.txq.push_back(Tx::Ack { peer: pi });
        }
    }

    /// A sequenced frame's meaning, once and in order.
    fn deliver<M: Memory + ?Sized>(&mut self, _now: u64, pi: u32, body: &Body<'_>, mem: &mut M) {
        match *body {
            Body::Connect {
                segment,
                perm,
                node,
                uid,
                gid,
                conn,
            } => self.on_connect(pi, segment, perm, node, uid, gid, conn, mem),
            Body::ConnectReply {
                conn,
                status,
                exporter_conn,
                length,
            } => self.on_connect_reply(pi, conn, status, exporter_conn, length),
            Body::Disconnect { conn: BYE } => self.on_bye(pi),
            Body::Disconnect { conn } => self.on_disconnect(pi, conn),
            Body::Write { conn, offset, data } => self.on_write(pi, conn, offset, data, mem),
            Body::ReadReq {
                conn,
                request,
                offset,
                length,
            } => self.on_read(pi, conn, request, offset, length, mem),
            Body::ReadReply {
                request,
                status,
                offset,
                data,
            } => self.on_read_reply(pi, request, status, offset, data),
            Body::Flush { conn, token } => self.on_flush(pi, conn, token),
            Body::FlushReply { token, status } => self.on_flush_reply(pi, token, status),
            Body::Signal {
                to_importer: false,
                conn,
                flags,
            } => self.on_signal_exporter(pi, conn, flags),
            Body::Signal {
                to_importer: true,
                conn,
                flags,
            } => self.on_signal_importer(pi, conn, flags),
            Body::Abort { conn, status } => self.on_abort(pi, conn, status),
            Body::Ack => {}
        }
    }
}

/// Writes the frame of `item` into `buf`; data is copied once, from its buffer.
/// The header of a frame to peer `p` numbered `seq`, acknowledging what has arrived.
#[inline]
pub(super) fn frame_header<A>(p: &Peer<A>, session: u32, seq: u16) -> Header {
    let next = p.rel.next_seq();
    let full = p.tx_count.wrapping_sub(u32::from(next.wrapping_sub(seq)));
    Header {
        session: session.wrapping_add(p.epoch),
        seq,
        ack: p.rel.ack(),
        seq_hi: (full >> 16) as u8,
        ack_hi: (p.rx_count >> 16) as u8,
    }
}

pub(super) fn emit_item(
    h: &Header,
    item: Item,
    bufs: &flow::Bufs,
    buf: &mut [u8],
) -> Result<usize, myrix_wire::rsm::Error> {
    let (body, data): (Body<'_>, &[u8]) = match item {
        Item::Connect {
            imp,
            seg,
            perm,
            node,
            uid,
            gid,
        } => (
            Body::Connect {
                segment: seg,
                perm,
                node,
                uid,
                gid,
                conn: imp,
            },
            &[],
        ),
        Item::ConnectReply {
            imp,
            status,
            exp,
            len,
        } => (
            Body::ConnectReply {
                conn: imp,
                status,
                exporter_conn: exp,
                length: len,
            },
            &[],
        ),
        Item::Disconnect { exp } => (Body::Disconnect { conn: exp }, &[]),
        Item::Write {
            buf: b,
            at,
            len,
            exp,
            offset,
        } => (
            Body::Write {
                conn: exp,
                offset,
                data: &[],
            },
            bufs.get(b, at, len),
        ),
        Item::ReadReq {
            exp,
            get,
            offset,
            len,
        } => (
            Body::ReadReq {
                conn: exp,
                request: get,
                offset,
                length: len,
            },
            &[],
        ),
        Item::ReadReply {
            buf: b,
            at,
            len,
            req,
            status,
            offset,
        } => (
            Body::ReadReply {
                request: req,
                status,
                offset,
                data: &[],
            },
            if b == flow::NO_BUF {
                &[]
            } else {
                bufs.get(b, at, len)
            },
        ),
        Item::Flush { exp, token } => (Body::Flush { conn: exp, token }, &[]),
        Item::FlushReply { token, status } => (Body::FlushReply { token, status }, &[]),
        Item::Signal {
            to_importer,
            conn,
            flags,
        } => (
            Body::Signal {
                to_importer,
                conn,
                flags,
            },
            &[],
        ),
        Item::Abort { imp, status } => (Body::Abort { conn: imp, status }, &[]),
    };
    let n = emit_head(h, &body, buf, data.len())?;
    buf[n - data.len()..n].copy_from_slice(data);
    Ok(n)
}
