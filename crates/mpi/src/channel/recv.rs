//! The receiving end of one channel S→R: polls the postbox at the head of the queue in
//! R's channel area, announces envelopes, copies data out of postboxes and pool blocks
//! into the buffers given to `take`, acknowledges each postbox with its lap byte in S's
//! ack segment, and writes matches (clear-to-send, sync matched) into its ring.
//!
//! Everything read from the area was written by S, which may be buggy or hostile: every
//! kind, count, length and block index is checked before use, and a bad one is a
//! [`Corrupt`] (the fabric reports the peer lost), never a panic or an access outside
//! the area. A flag whose lap is not the expected one is simply "not yet".
//!
//! An eager message stays at the head (its data in the postboxes, nothing copied)
//! until taken; the engine takes eager messages as soon as they arrive, so the data is
//! copied once, straight into the receive buffer. RTS postboxes are consumed at once,
//! so later messages keep arriving while a rendezvous waits for its take.

use super::layout::{self, ack, area, kind, postbox as pb, Flag, REF_LARGE};
use super::send::{Geometry, Place};
use super::window::{DstBuf, Mem};
use super::Corrupt;
use crate::p2p::fabric::{Envelope, Event, MsgToken, Rank};

/// The receives a poll may deliver into directly: the fabric's view of the
/// engine's [`crate::p2p::fabric::Claim`].
pub trait Sink {
    /// The buffer of the posted receive that takes this message first, if any.
    fn claim(&mut self, src: Rank, env: &Envelope) -> Option<DstBuf>;
    /// The message last claimed is in its buffer (`true`) or could not be copied.
    fn claimed(&mut self, ok: bool);
}

#[derive(Debug, Clone, Copy)]
enum Cur {
    Idle,
    /// An eager message whose first postbox is at the head.
    Eager {
        seq: u64,
        len: usize,
        inline: bool,
        dst: Option<DstBuf>,
        copied: usize,
    },
    /// A rendezvous message's data arriving.
    Rdata {
        seq: u64,
        len: usize,
        dst: DstBuf,
        copied: usize,
    },
}

/// What `take` found.
#[derive(Debug, PartialEq, Eq)]
pub enum Taken {
    /// All data is in the buffer.
    Done,
    /// `Received` follows.
    Later,
    /// No such message waits here.
    Unknown,
}

#[derive(Debug)]
pub struct Rx {
    src: Rank,
    g: Geometry,
    /// The channel area (local), or the sender's area for this host (mapped) from
    /// this receiver's queue on ([`Mem::skip`]: the postbox offsets are a one-queue
    /// area's).
    area: Mem,
    /// Byte offset of the pool in `area`.
    pool_off: usize,
    /// S's ack segment (remote).
    acks: Mem,
    head: u64,
    /// `head % queue` and the lap the head postbox's flag must show, kept as the head
    /// moves (no division on the poll).
    idx: u32,
    lap: u32,
    next_seq: u64,
    cur: Cur,
    /// Announced rendezvous messages not yet taken: (seq, len).
    awaiting: Vec<(u64, usize)>,
    /// Taken rendezvous messages whose data has not started.
    expecting: Vec<(u64, usize, DstBuf)>,
    matches: u64,
    /// The put of the acks staged on a network ack window (`None` on shm, where an
    /// ack is a store S sees at once), and the rendezvous data bytes consumed since
    /// the acks last left: see [`Rx::consume_rdata`].
    ack_flush: Option<super::window::NetFlush>,
    rdata_unacked: usize,
    /// Toward another node: a postbox consumed since [`Rx::take_pooled`] last looked
    /// pointed at pool blocks (kept only where acks are staged).
    pooled: bool,
}

/// Rendezvous data consumed, as a fraction of the pool (1/`RDATA_ACK_SHARE`), after
/// which the staged acks leave at once instead of at the next idle progress. A
/// rendezvous message is larger than the eager limit (64 KiB by default, a quarter of
/// the default pool), so S streams it through the pool and refills blocks only as their
/// acks return: a receiver busy copying never idles and its lazy acks (session 24,
/// docs/mpi-net.md) left only once 32 were staged or 50 µs after the message, so S
/// stalled with a full pool every pool's worth of data (session 27, "A MiB's
/// timeline"). One ack datagram per quarter pool is a few per MiB.
const RDATA_ACK_SHARE: usize = 4;

/// A postbox's line after its flag word: the envelope and the first payload.
const LINE_AFTER_FLAG: usize = layout::LINE - pb::CTX;

/// Context, tag and length from a first postbox's line after its flag.
#[inline]
fn envelope_of(line: &[u8; LINE_AFTER_FLAG]) -> Result<(u32, i32, usize), Corrupt> {
    const AT: usize = pb::CTX;
    let word = |at: usize| {
        let mut w = [0u8; 4];
        w.copy_from_slice(&line[at - AT..][..4]);
        u32::from_le_bytes(w)
    };
    let mut l = [0u8; 8];
    l.copy_from_slice(&line[pb::LEN - AT..][..8]);
    let len =
        usize::try_from(u64::from_le_bytes(l)).map_err(|_| Corrupt("message length too large"))?;
    Ok((word(pb::CTX), word(pb::TAG) as i32, len))
}

fn oob(_: super::window::OutOfBounds) -> Corrupt {
    Corrupt("a postbox points outside the channel area")
}

impl Rx {
    /// The receiving end of a connection's own area.
    pub fn new(src: Rank, g: Geometry, area: Mem, acks: Mem) -> Result<Rx, Corrupt> {
        Self::new_in(src, g, area, acks, Place::ALONE)
    }

    /// The receiving end of queue `place` of a sender's shared area (its pool after
    /// the last queue).
    pub fn new_in(
        src: Rank,
        g: Geometry,
        area: Mem,
        acks: Mem,
        place: Place,
    ) -> Result<Rx, Corrupt> {
        if !place.valid() {
            return Err(Corrupt("a queue outside its area"));
        }
        if area.len() < place.area_len(&g) || acks.len() < ack::len(g.queue) {
            return Err(Corrupt("a channel segment is shorter than its geometry"));
        }
        let qbase = place.queue_off(&g);
        let area = match qbase {
            0 => area,
            q => area
                .skip(q)
                .ok_or(Corrupt("a shared area behind a network window"))?,
        };
        Ok(Rx {
            src,
            g,
            pool_off: place.pool_off(&g) - qbase,
            area,
            ack_flush: acks.net_flush(),
            acks,
            head: 0,
            idx: 0,
            lap: layout::lap(0, g.queue),
            next_seq: 0,
            cur: Cur::Idle,
            awaiting: Vec::with_capacity(ack::RING_LEN),
            expecting: Vec::with_capacity(ack::RING_LEN),
            matches: 0,
            rdata_unacked: 0,
            pooled: false,
        })
    }

    #[inline]
    fn head_off(&self) -> usize {
        area::postbox(self.idx)
    }

    /// The flag of the head postbox, if it holds the expected lap.
    #[inline]
    fn head_flag(&self) -> Result<Option<Flag>, Corrupt> {
        let w = self
            .area
            .load_u64(self.head_off() + pb::FLAG)
            .map_err(oob)?;
        let f = Flag::decode(w);
        Ok((f.lap == self.lap).then_some(f))
    }

    fn consume(&mut self) -> Result<(), Corrupt> {
        debug_assert_eq!(self.lap as u8, layout::ack_lap(self.head, self.g.queue));
        if self.ack_flush.is_some() {
            // Read before the ack: once acknowledged the postbox is the sender's again.
            if let Ok(w) = self.area.load_u64(self.head_off() + pb::FLAG) {
                let k = Flag::decode(w).kind;
                self.pooled |= matches!(k, kind::LONG | kind::CONT_REFS | kind::RDATA);
            }
        }
        self.acks
            .store_u8(ack::ACKS + self.idx as usize, self.lap as u8)
            .map_err(|_| Corrupt("ack segment too short"))?;
        self.head += 1;
        self.idx += 1;
        if self.idx == self.g.queue {
            self.idx = 0;
            self.lap = self.lap.wrapping_add(1);
        }
        Ok(())
    }

    /// Consumes the head postbox of a rendezvous message that carried `bytes` of its
    /// data, and puts the staged acks once a share of the pool was consumed since
    /// they last left: S is waiting for those blocks (see [`RDATA_ACK_SHARE`]).
    fn consume_rdata(&mut self, bytes: usize) -> Result<(), Corrupt> {
        self.consume()?;
        if let Some(f) = &self.ack_flush {
            self.rdata_unacked += bytes;
            if self.rdata_unacked * RDATA_ACK_SHARE >= self.g.pool_bytes() {
                self.rdata_unacked = 0;
                f.flush();
            }
        }
        Ok(())
    }

    fn u64_at(&self, off: usize) -> Result<u64, Corrupt> {
        let mut b = [0u8; 8];
        self.area.read(off, &mut b).map_err(oob)?;
        Ok(u64::from_le_bytes(b))
    }

    fn len_at(&self, off: usize) -> Result<usize, Corrupt> {
        usize::try_from(self.u64_at(off)?).map_err(|_| Corrupt("message length too large"))
    }

    /// Copies the head postbox's data (inline or blocks) into `dst` from `copied`;
    /// returns the new count.
    fn copy_head(
        &self,
        f: Flag,
        first: bool,
        len: usize,
        copied: usize,
        dst: &DstBuf,
    ) -> Result<usize, Corrupt> {
        let off = self.head_off();
        let (payload, cap_bytes, cap_refs) = if first {
            (
                off + pb::FIRST_PAYLOAD,
                pb::FIRST_PAYLOAD_LEN,
                pb::FIRST_REFS,
            )
        } else {
            (off + pb::CONT_PAYLOAD, pb::CONT_PAYLOAD_LEN, pb::CONT_REFS)
        };
        let rem = len - copied;
        if matches!(f.kind, kind::SHORT | kind::CONT_INLINE) {
            let n = f.nbytes as usize;
            if n != rem.min(cap_bytes) || f.count != 0 {
                return Err(Corrupt("inline byte count does not match the message"));
            }
            self.area.read_into(payload, dst, copied, n).map_err(oob)?;
            return Ok(copied + n);
        }
        let k = f.count as usize;
        if k == 0 || k > cap_refs || f.nbytes != 0 {
            return Err(Corrupt("bad block reference count"));
        }
        let small = self.g.small as usize;
        let pool = self.pool_off;
        let mut at = copied;
        for j in 0..k {
            let r = self.area.load_u32(payload + 4 * j).map_err(oob)?;
            let idx = r & !REF_LARGE;
            let units = if r & REF_LARGE != 0 {
                self.g.large_units()
            } else {
                1
            };
            if idx as u64 + units as u64 > self.g.pool_units as u64 {
                return Err(Corrupt("block index out of range"));
            }
            if at >= len {
                return Err(Corrupt("more blocks than the message needs"));
            }
            let n = (len - at).min(units as usize * small);
            self.area
                .read_into(pool + idx as usize * small, dst, at, n)
                .map_err(oob)?;
            at += n;
        }
        Ok(at)
    }

    /// Reads what has arrived. Returns whether anything moved.
    /// Whether a postbox that pointed at pool blocks was consumed since the last call
    /// (toward another node only; on shared memory always false).
    #[inline]
    pub fn take_pooled(&mut self) -> bool {
        std::mem::take(&mut self.pooled)
    }

    pub fn poll(&mut self, ev: &mut Vec<Event>) -> Result<bool, Corrupt> {
        self.poll_into::<dyn Sink>(ev, None)
    }

    /// As [`Rx::poll`], and an eager message whole in its first postbox is first
    /// offered to `sink` (the posted receives): claimed, it is copied into the
    /// receive's buffer and consumed, never announced, and the poll goes on to the
    /// next message. Offered only while this poll has announced nothing: an announced
    /// message (a rendezvous envelope) must be matched before the messages after it.
    pub fn poll_into<S: Sink + ?Sized>(
        &mut self,
        ev: &mut Vec<Event>,
        mut sink: Option<&mut S>,
    ) -> Result<bool, Corrupt> {
        let mut moved = false;
        loop {
            if let Cur::Eager { dst: None, .. } = self.cur {
                return Ok(moved); // waiting for the take
            }
            let Some(f) = self.head_flag()? else {
                return Ok(moved);
            };
            moved = true;
            let off = self.head_off();
            match (self.cur, f.kind) {
                (Cur::Idle, kind::SHORT | kind::LONG | kind::RTS) => {
                    // The envelope (and a short message's payload) with one copy of
                    // the line after the flag.
                    let mut line = [0u8; LINE_AFTER_FLAG];
                    self.area.read(off + pb::CTX, &mut line).map_err(oob)?;
                    let (ctx, tag, len) = envelope_of(&line)?;
                    let seq = self.next_seq;
                    let sync = f.kind == kind::RTS && f.count & 1 != 0;
                    if let Some(k) = sink.as_deref_mut().filter(|_| f.kind != kind::RTS) {
                        let claimed = if f.kind == kind::SHORT {
                            self.claim_line(f, ctx, tag, len, &line, k)?
                        } else {
                            self.claim_head(f, ctx, tag, len, k)?
                        };
                        if claimed {
                            continue;
                        }
                    }
                    // Announced: nothing after it may be claimed before the engine
                    // has matched it.
                    sink = None;
                    if f.kind == kind::RTS {
                        if f.count & !1 != 0 || f.nbytes != 0 {
                            return Err(Corrupt("bad RTS postbox"));
                        }
                        if self.awaiting.len() + self.expecting.len() >= ack::RING_LEN {
                            return Err(Corrupt("more rendezvous messages than the ring"));
                        }
                        self.awaiting.push((seq, len));
                        self.consume()?;
                    } else {
                        if f.kind == kind::LONG && len == 0 {
                            return Err(Corrupt("an empty message in blocks"));
                        }
                        self.cur = Cur::Eager {
                            seq,
                            len,
                            inline: f.kind == kind::SHORT,
                            dst: None,
                            copied: 0,
                        };
                    }
                    self.next_seq += 1;
                    ev.push(Event::Arrived {
                        token: MsgToken { src: self.src, seq },
                        env: Envelope {
                            ctx,
                            tag,
                            len,
                            sync,
                        },
                    });
                }
                (Cur::Idle, kind::RDATA) => {
                    let seq = self.u64_at(off + pb::SEQ)?;
                    let len = self.len_at(off + pb::LEN)?;
                    let Some(i) = self.expecting.iter().position(|e| e.0 == seq) else {
                        return Err(Corrupt("data for a message not taken"));
                    };
                    if self.expecting[i].1 != len {
                        return Err(Corrupt("rendezvous data of the wrong length"));
                    }
                    let (_, _, dst) = self.expecting.swap_remove(i);
                    let copied = self.copy_head(f, true, len, 0, &dst)?;
                    self.consume_rdata(copied)?;
                    self.advance(seq, len, dst, copied, false, ev);
                }
                (
                    Cur::Eager {
                        seq,
                        len,
                        inline,
                        dst: Some(dst),
                        copied,
                    },
                    k,
                ) if (k == kind::CONT_INLINE) == inline
                    && matches!(k, kind::CONT_INLINE | kind::CONT_REFS) =>
                {
                    let copied = self.copy_head(f, false, len, copied, &dst)?;
                    self.consume()?;
                    self.advance(seq, len, dst, copied, true, ev);
                }
                (
                    Cur::Rdata {
                        seq,
                        len,
                        dst,
                        copied,
                    },
                    kind::CONT_REFS,
                ) => {
                    let was = copied;
                    let copied = self.copy_head(f, false, len, copied, &dst)?;
                    self.consume_rdata(copied - was)?;
                    self.advance(seq, len, dst, copied, false, ev);
                }
                _ => return Err(Corrupt("unexpected postbox kind")),
            }
        }
    }

    /// The message at the head, if it is the next one (nothing of an earlier message
    /// pending), short and in this one postbox, and `accept` takes it: copied into
    /// `dst`, consumed, never announced.
    pub fn recv_now(
        &mut self,
        accept: &mut dyn FnMut(&Envelope) -> bool,
        dst: DstBuf,
    ) -> Result<Option<Envelope>, Corrupt> {
        if !matches!(self.cur, Cur::Idle) {
            return Ok(None);
        }
        let Some(f) = self.head_flag()? else {
            return Ok(None);
        };
        let off = self.head_off();
        if f.kind == kind::SHORT {
            return self.recv_line_now(f, off, accept, dst);
        }
        let whole = match f.kind {
            kind::LONG => self.first_covers(f, self.len_at(off + pb::LEN)?)?,
            _ => false,
        };
        if !whole {
            return Ok(None);
        }
        let len = self.len_at(off + pb::LEN)?;
        let env = Envelope {
            ctx: self.area.load_u32(off + pb::CTX).map_err(oob)?,
            tag: self.area.load_u32(off + pb::TAG).map_err(oob)? as i32,
            len,
            sync: false,
        };
        if !accept(&env) {
            return Ok(None);
        }
        self.copy_head(f, true, len, 0, &dst)?;
        self.consume()?;
        self.next_seq += 1;
        Ok(Some(env))
    }

    /// [`Rx::recv_now`] for a short message at `off`: the postbox after its flag is read
    /// with one copy, and the envelope and payload taken from that copy.
    fn recv_line_now(
        &mut self,
        f: Flag,
        off: usize,
        accept: &mut dyn FnMut(&Envelope) -> bool,
        dst: DstBuf,
    ) -> Result<Option<Envelope>, Corrupt> {
        const AT: usize = pb::CTX;
        let mut line = [0u8; LINE_AFTER_FLAG];
        self.area.read(off + AT, &mut line).map_err(oob)?;
        let (ctx, tag, len) = envelope_of(&line)?;
        if len > pb::FIRST_PAYLOAD_LEN {
            return Ok(None); // continued in the next postboxes: the general path
        }
        if f.nbytes as usize != len || f.count != 0 {
            return Err(Corrupt("inline byte count does not match the message"));
        }
        let env = Envelope {
            ctx,
            tag,
            len,
            sync: false,
        };
        if !accept(&env) {
            return Ok(None);
        }
        dst.write_slice(&line[pb::FIRST_PAYLOAD - AT..][..len]);
        self.consume()?;
        self.next_seq += 1;
        Ok(Some(env))
    }

    /// [`Rx::claim_head`] for a short message, from the copy of its postbox's line:
    /// offered to `sink` if it is whole in this postbox, then copied from `line`.
    fn claim_line<S: Sink + ?Sized>(
        &mut self,
        f: Flag,
        ctx: u32,
        tag: i32,
        len: usize,
        line: &[u8; LINE_AFTER_FLAG],
        sink: &mut S,
    ) -> Result<bool, Corrupt> {
        if len > pb::FIRST_PAYLOAD_LEN {
            return Ok(false); // continued in the next postboxes: announced
        }
        if f.nbytes as usize != len || f.count != 0 {
            return Err(Corrupt("inline byte count does not match the message"));
        }
        let env = Envelope {
            ctx,
            tag,
            len,
            sync: false,
        };
        let Some(dst) = sink.claim(self.src, &env) else {
            return Ok(false);
        };
        dst.write_slice(&line[pb::FIRST_PAYLOAD - pb::CTX..][..len]);
        let r = self.consume();
        sink.claimed(r.is_ok());
        r?;
        self.next_seq += 1;
        Ok(true)
    }

    /// Offers the eager message at the head (its first postbox `f`, envelope fields
    /// read) to `sink` if it is whole in that postbox; true once claimed, copied and
    /// consumed.
    fn claim_head<S: Sink + ?Sized>(
        &mut self,
        f: Flag,
        ctx: u32,
        tag: i32,
        len: usize,
        sink: &mut S,
    ) -> Result<bool, Corrupt> {
        let whole = match f.kind {
            kind::SHORT => len <= pb::FIRST_PAYLOAD_LEN,
            _ => len > 0 && self.first_covers(f, len)?,
        };
        if !whole {
            return Ok(false);
        }
        let env = Envelope {
            ctx,
            tag,
            len,
            sync: false,
        };
        let Some(dst) = sink.claim(self.src, &env) else {
            return Ok(false);
        };
        let r = self
            .copy_head(f, true, len, 0, &dst)
            .and_then(|_| self.consume());
        sink.claimed(r.is_ok());
        r?;
        self.next_seq += 1;
        Ok(true)
    }

    /// Whether the blocks the head postbox (the first of a message in blocks) points
    /// to hold all `len` bytes: then the whole message is here (S fills the blocks
    /// before it writes the postbox).
    fn first_covers(&self, f: Flag, len: usize) -> Result<bool, Corrupt> {
        let k = (f.count as usize).min(pb::FIRST_REFS);
        let payload = self.head_off() + pb::FIRST_PAYLOAD;
        let small = self.g.small as usize;
        let mut at = 0usize;
        for j in 0..k {
            let r = self.area.load_u32(payload + 4 * j).map_err(oob)?;
            at += if r & REF_LARGE != 0 {
                self.g.large as usize
            } else {
                small
            };
        }
        Ok(at >= len)
    }

    /// After a copy: the message is complete (Received) or still arriving.
    fn advance(
        &mut self,
        seq: u64,
        len: usize,
        dst: DstBuf,
        copied: usize,
        eager: bool,
        ev: &mut Vec<Event>,
    ) {
        if copied >= len {
            self.cur = Cur::Idle;
            ev.push(Event::Received {
                token: MsgToken { src: self.src, seq },
            });
        } else if eager {
            self.cur = Cur::Eager {
                seq,
                len,
                inline: matches!(self.cur, Cur::Eager { inline: true, .. }),
                dst: Some(dst),
                copied,
            };
        } else {
            self.cur = Cur::Rdata {
                seq,
                len,
                dst,
                copied,
            };
        }
    }

    /// Matches message `seq`: copies what is here into `dst`, or for a rendezvous
    /// message writes the match that lets S send.
    pub fn take(&mut self, seq: u64, dst: DstBuf) -> Result<Taken, Corrupt> {
        if let Cur::Eager {
            seq: s,
            len,
            inline,
            dst: None,
            ..
        } = self.cur
        {
            if s == seq {
                let f = self
                    .head_flag()?
                    .ok_or(Corrupt("the head postbox changed under its message"))?;
                let copied = self.copy_head(f, true, len, 0, &dst)?;
                self.consume()?;
                if copied >= len {
                    self.cur = Cur::Idle;
                    return Ok(Taken::Done);
                }
                self.cur = Cur::Eager {
                    seq,
                    len,
                    inline,
                    dst: Some(dst),
                    copied,
                };
                return Ok(Taken::Later);
            }
        }
        let Some(i) = self.awaiting.iter().position(|a| a.0 == seq) else {
            return Ok(Taken::Unknown);
        };
        let (_, len) = self.awaiting.swap_remove(i);
        let k = self.matches;
        let off = ack::ring(self.g.queue) + ack::entry(k) as usize;
        self.acks
            .store_u64(off, ack::encode(k, seq))
            .map_err(|_| Corrupt("ack segment too short"))?;
        self.matches += 1;
        if len == 0 {
            return Ok(Taken::Done);
        }
        self.expecting.push((seq, len, dst));
        Ok(Taken::Later)
    }

    /// Every message announced and not complete (the peer is lost).
    pub fn abandon(&mut self) -> Vec<MsgToken> {
        let src = self.src;
        let mut t: Vec<MsgToken> = self
            .awaiting
            .drain(..)
            .map(|a| a.0)
            .chain(self.expecting.drain(..).map(|e| e.0))
            .map(|seq| MsgToken { src, seq })
            .collect();
        match self.cur {
            Cur::Idle => {}
            Cur::Eager { seq, .. } | Cur::Rdata { seq, .. } => t.push(MsgToken { src, seq }),
        }
        self.cur = Cur::Idle;
        t
    }
}
