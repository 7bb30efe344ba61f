//! The sending end of one channel S→R: the queue of sends not yet fully written, the
//! postbox and pool allocation (S alone allocates, so no locks), and the reading of
//! R's acknowledgements and matches from S's ack segment.
//!
//! Protocols (seed 004 §3.2), chosen per message:
//! * **short** (`len <= short`, not sync): data inline, 40 bytes in the first postbox
//!   and 56 in each further one;
//! * **long** (`len <= eager`, not sync): pool blocks filled, a barrier, then postboxes
//!   of block references (10 in the first, 14 in each further one), flag last; each
//!   postbox is written as soon as its blocks are full, so R copies earlier pieces
//!   while S fills later ones;
//! * **rendezvous** (`len > eager`, or any sync send): an RTS postbox only; the data
//!   follows as RDATA postboxes once R's take wrote a match into the ring. A sync
//!   send of any size goes this way: its match is what lets `SyncMatched` fire, and
//!   its data would otherwise sit in R's queue and block later messages.
//!
//! The pool is a ring of small blocks ([`super::pool`]), allocated in order; each
//! postbox records the range of allocations its blocks took, freed when R acknowledges
//! it: no fragmentation and no search. A large block never wraps around the ring's end
//! (the tail is skipped and freed with it). On shared memory the pool and the area are
//! shared by the links to every rank of the sender's host, each link writing its own
//! queue of the area ([`Place`]).
//! When postboxes or pool run out the send waits in the queue; nothing is lost and
//! nothing blocks. This module must never allocate per message once the queue's
//! capacity is reached, nor trust the ack segment for more than "go on".

use std::collections::VecDeque;
use std::sync::Arc;

use super::layout::{self, ack, area, kind, postbox as pb, Flag, REF_LARGE};
use super::pool::Pool;
use super::window::{Mem, SrcBuf};
use super::Corrupt;
use crate::p2p::fabric::{Envelope, Event, SendId};

/// A channel's shape, as the sender proposed it and the receiver built it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub queue: u32,
    pub pool_units: u32,
    pub small: u32,
    pub large: u32,
}

impl Geometry {
    pub fn large_units(&self) -> u32 {
        self.large / self.small
    }
    pub fn pool_bytes(&self) -> usize {
        self.pool_units as usize * self.small as usize
    }
}

/// Where one link's queue lies in its area: queue `index` of `queues`, the pool after
/// the last queue. [`Place::ALONE`] is a connection's own one-queue area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub index: u32,
    pub queues: u32,
}

impl Place {
    pub const ALONE: Place = Place {
        index: 0,
        queues: 1,
    };

    /// Most queues in one area (ranks of one host).
    pub const MAX_QUEUES: u32 = 1 << 16;

    /// Whether the place exists (`index < queues <= MAX_QUEUES`).
    pub fn valid(&self) -> bool {
        self.index < self.queues && self.queues <= Self::MAX_QUEUES
    }

    /// Byte offset of the queue.
    pub fn queue_off(&self, g: &Geometry) -> usize {
        area::queue_at(self.index, g.queue)
    }

    /// Byte offset of the pool.
    pub fn pool_off(&self, g: &Geometry) -> usize {
        area::pool_after(self.queues, g.queue)
    }

    /// Bytes of the whole area.
    pub fn area_len(&self, g: &Geometry) -> usize {
        area::len_of(self.queues, g.queue, g.pool_bytes())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Proto {
    Short,
    Long,
    Rts,
    Rdata,
}

#[derive(Debug)]
struct Work {
    id: SendId,
    seq: u64,
    env: Envelope,
    src: SrcBuf,
    proto: Proto,
    sent: usize,
    started: bool,
}

#[derive(Debug)]
struct Waiting {
    id: SendId,
    seq: u64,
    src: SrcBuf,
    env: Envelope,
}

/// The connected part: the windows and the allocation counters.
#[derive(Debug)]
pub struct Link {
    g: Geometry,
    /// R's channel area (remote), or the sender's area for R's host from this link's
    /// queue on ([`Mem::skip`]: the postbox offsets are a one-queue area's).
    area: Mem,
    /// Byte offset of the pool in `area`.
    pool_off: usize,
    /// This rank's ack segment (local).
    acks: Mem,
    tail: u64,
    /// `tail % queue` and the tail postbox's lap, kept as the tail moves.
    tail_idx: u32,
    tail_lap: u32,
    acked: u64,
    /// Per postbox: the range of pool allocations its blocks took (empty for none).
    release: Box<[[u64; 2]]>,
    /// The range the postbox being written has allocated so far.
    cur: [u64; 2],
    /// Postboxes whose `release` entry is not empty (none on a stream of short
    /// messages: their acks are then taken back without a look at the entries).
    ranged: u32,
    pool: Arc<Pool>,
    /// Units this link allocated, and of them freed by R's acks (its share of the
    /// pool, for [`Tx::usage`]).
    units: u64,
    units_freed: u64,
    matches: u64,
}

impl Link {
    /// A connection's own area: `area` must hold `layout::area::len(g.queue, pool
    /// bytes)` and `acks` `layout::ack::len(g.queue)` (checked).
    pub fn new(g: Geometry, area: Mem, acks: Mem) -> Result<Link, Corrupt> {
        Self::new_in(
            g,
            area,
            acks,
            Place::ALONE,
            Arc::new(Pool::new(g.pool_units)),
        )
    }

    /// A link writing queue `place` of a shared area whose pool `pool` allocates (it
    /// has `g.pool_units` units; every link of the area holds the same one).
    pub fn new_in(
        g: Geometry,
        area: Mem,
        acks: Mem,
        place: Place,
        pool: Arc<Pool>,
    ) -> Result<Link, Corrupt> {
        if !place.valid() || pool.units() != g.pool_units {
            return Err(Corrupt("a link's place or pool does not fit its geometry"));
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
        Ok(Link {
            g,
            area,
            pool_off: place.pool_off(&g) - qbase,
            acks,
            tail: 0,
            tail_idx: 0,
            tail_lap: layout::lap(0, g.queue),
            acked: 0,
            release: vec![[0; 2]; g.queue as usize].into_boxed_slice(),
            cur: [0; 2],
            ranged: 0,
            pool,
            units: 0,
            units_freed: 0,
            matches: 0,
        })
    }

    /// The flush handle of the link's area, when it is a network window.
    pub fn net_flush(&self) -> Option<super::window::NetFlush> {
        self.area.net_flush()
    }

    /// Frees the pool range of postbox `i` (acknowledged, or its receiver gone).
    #[inline]
    fn release(&mut self, i: usize) {
        let [lo, hi] = self.release[i];
        if hi > lo {
            self.pool.free(lo, hi);
            self.units_freed += hi - lo;
            self.release[i] = [0; 2];
            self.ranged -= 1;
        }
    }

    /// Takes back the postboxes (and their blocks) R has acknowledged: eight at a time
    /// where eight acks of one lap share an aligned word (a window of short messages
    /// is taken back in a few loads, not one per postbox), else one by one.
    #[inline]
    fn reclaim(&mut self) -> bool {
        let q = self.g.queue;
        let start = self.acked;
        while self.acked < self.tail {
            let i = (self.acked % q as u64) as usize;
            if i % 8 == 0 && i + 8 <= q as usize && self.tail - self.acked >= 8 {
                // The eight positions from `acked` are in one lap (`i + 7 < queue`).
                let want = u64::from_ne_bytes([layout::ack_lap(self.acked, q); 8]);
                if self.acks.load_u64(ack::ACKS + i) == Ok(want) {
                    if self.ranged > 0 {
                        for j in i..i + 8 {
                            self.release(j);
                        }
                    }
                    self.acked += 8;
                    continue;
                }
            }
            match self.acks.load_u8(ack::ACKS + i) {
                Ok(b) if b == layout::ack_lap(self.acked, q) => {
                    self.release(i);
                    self.acked += 1;
                }
                _ => break,
            }
        }
        self.acked != start
    }

    fn free_boxes(&self) -> u64 {
        self.g.queue as u64 - (self.tail - self.acked)
    }

    /// Whether a postbox is free, reading R's acks only when none seems to be: on the
    /// fast path the sender never reads the line R writes.
    #[inline]
    fn room(&mut self) -> bool {
        self.free_boxes() > 0 || (self.reclaim() && self.free_boxes() > 0)
    }

    /// `units` contiguous small blocks for the postbox being written, or None while
    /// the pool is full (even after taking back what R has acknowledged; the other
    /// receivers sharing the pool are the fabric's, [`Pool::take_starved`]).
    fn alloc(&mut self, units: u32) -> Option<u32> {
        let (idx, lo) = match self.pool.alloc(units) {
            None if self.reclaim() => self.pool.alloc(units)?,
            r => r?,
        };
        // One postbox's allocations follow each other in the count (the links of a
        // pool write one postbox at a time), so its range is `cur[0]..head`.
        if self.cur[0] == self.cur[1] {
            self.cur[0] = lo;
        }
        let head = self.pool.head();
        self.units += head - lo;
        self.cur[1] = head;
        Some(idx)
    }

    /// Writes the postbox at the tail: `body` fills it, then the flag goes last.
    fn post(
        &mut self,
        kind: u8,
        count: u8,
        nbytes: u16,
        body: impl FnOnce(&Mem, usize) -> Result<(), super::window::OutOfBounds>,
    ) -> Result<(), Corrupt> {
        let off = area::postbox(self.tail_idx);
        body(&self.area, off).map_err(|_| Corrupt("postbox write out of bounds"))?;
        let flag = self.tail_flag(kind, count, nbytes);
        self.area
            .store_u64(off + pb::FLAG, flag)
            .map_err(|_| Corrupt("postbox write out of bounds"))?;
        self.posted();
        Ok(())
    }

    /// [`Link::post`] of an inline postbox whose line after the flag word is the first
    /// `n` bytes of `line` (envelope and payload): flag and line are written in one
    /// step ([`Mem::post_led`]).
    #[inline]
    fn post_line<const N: usize>(
        &mut self,
        kind: u8,
        nbytes: u16,
        line: &[u8; N],
        n: usize,
    ) -> Result<(), Corrupt> {
        const { assert!(pb::CTX == pb::FLAG + 8) };
        let off = area::postbox(self.tail_idx);
        let flag = self.tail_flag(kind, 0, nbytes);
        self.area
            .post_led(off + pb::FLAG, flag, line, n)
            .map_err(|_| Corrupt("postbox write out of bounds"))?;
        // An inline postbox took no blocks: its `release` entry stays empty.
        debug_assert_eq!(self.cur[0], self.cur[1]);
        self.next_tail();
        Ok(())
    }

    /// The encoded flag of the postbox at the tail.
    #[inline]
    fn tail_flag(&self, kind: u8, count: u8, nbytes: u16) -> u64 {
        Flag {
            lap: self.tail_lap,
            kind,
            count,
            nbytes,
        }
        .encode()
    }

    /// The postbox at the tail was written: its blocks recorded, on to the next.
    #[inline]
    fn posted(&mut self) {
        if self.cur[0] != self.cur[1] {
            self.release[self.tail_idx as usize] = self.cur;
            self.cur = [0; 2];
            self.ranged += 1;
        }
        self.next_tail();
    }

    /// On to the next postbox. (An entry of `release` is empty unless its postbox
    /// holds blocks not yet freed: [`Link::release`] empties it.)
    #[inline(always)]
    fn next_tail(&mut self) {
        self.tail += 1;
        self.tail_idx += 1;
        if self.tail_idx == self.g.queue {
            self.tail_idx = 0;
            self.tail_lap = self.tail_lap.wrapping_add(1);
        }
    }

    /// Writes what it can of a short message; true once all is written.
    fn short(&mut self, w: &mut Work) -> Result<bool, Corrupt> {
        let len = w.env.len;
        while !w.started || w.sent < len {
            if !self.room() {
                return Ok(false);
            }
            let src = w.src;
            let at = w.sent;
            if !w.started {
                let n = len.min(pb::FIRST_PAYLOAD_LEN);
                let env = w.env;
                // The envelope and the payload are one run after the flag word: built
                // here and written with one copy (one bounds check, one staging).
                const AT: usize = pb::CTX;
                let mut b = [0u8; pb::FIRST_PAYLOAD - AT + pb::FIRST_PAYLOAD_LEN];
                b[..4].copy_from_slice(&env.ctx.to_le_bytes());
                b[pb::TAG - AT..][..4].copy_from_slice(&(env.tag as u32).to_le_bytes());
                b[pb::LEN - AT..][..8].copy_from_slice(&(len as u64).to_le_bytes());
                let run = pb::FIRST_PAYLOAD - AT + n;
                src.copy_into_any(0, &mut b[pb::FIRST_PAYLOAD - AT..run])
                    .map_err(|_| Corrupt("short message shorter than its envelope"))?;
                self.post_line(kind::SHORT, n as u16, &b, run)?;
                w.started = true;
                w.sent = n;
            } else {
                let n = (len - at).min(pb::CONT_PAYLOAD_LEN);
                self.post(kind::CONT_INLINE, 0, n as u16, |m, off| {
                    m.write_from(off + pb::CONT_PAYLOAD, &src, at, n)
                })?;
                w.sent += n;
            }
        }
        Ok(true)
    }

    /// A short message whole in the first postbox (`env.len <= FIRST_PAYLOAD_LEN`),
    /// written at once when a postbox is free: envelope and payload built on the stack
    /// as the line after the flag word, one fixed-size copy, then the flag. False (and
    /// nothing written) while the queue is full.
    #[inline]
    fn short_one(&mut self, env: &Envelope, src: &SrcBuf) -> Result<bool, Corrupt> {
        if !self.room() {
            return Ok(false);
        }
        let n = env.len;
        const AT: usize = pb::CTX;
        let mut b = [0u8; layout::LINE - AT];
        b[..4].copy_from_slice(&env.ctx.to_le_bytes());
        b[pb::TAG - AT..][..4].copy_from_slice(&(env.tag as u32).to_le_bytes());
        b[pb::LEN - AT..][..8].copy_from_slice(&(n as u64).to_le_bytes());
        let payload = b
            .get_mut(pb::FIRST_PAYLOAD - AT..pb::FIRST_PAYLOAD - AT + n)
            .ok_or(Corrupt("a short message longer than its postbox"))?;
        src.copy_into(0, payload)
            .map_err(|_| Corrupt("short message shorter than its envelope"))?;
        self.post_line(kind::SHORT, n as u16, &b, pb::FIRST_PAYLOAD - AT + n)?;
        Ok(true)
    }

    /// Writes what it can of a message in pool blocks (long or rendezvous data).
    fn blocks(&mut self, w: &mut Work) -> Result<bool, Corrupt> {
        let len = w.env.len;
        let small = self.g.small as usize;
        let pool = self.pool_off;
        while w.sent < len {
            if !self.room() {
                return Ok(false);
            }
            let cap = if w.started {
                pb::CONT_REFS
            } else {
                pb::FIRST_REFS
            };
            let mut refs = [0u32; pb::CONT_REFS];
            let mut k = 0;
            let mut at = w.sent;
            // Blocks next to each other in the pool hold consecutive bytes of the
            // message: they are written as one run (one put over the network, from
            // the caller's buffer; `Mem::write_from`), cut only where the ring wraps.
            // (pool offset, message offset, bytes) of the run not yet written.
            let mut run: Option<(usize, usize, usize)> = None;
            while k < cap && at < len {
                let rem = len - at;
                let (units, bytes, bit) = if rem > small {
                    let l = self.g.large as usize;
                    (self.g.large_units(), rem.min(l), REF_LARGE)
                } else {
                    (1, rem, 0)
                };
                let Some(idx) = self.alloc(units) else { break };
                let off = pool + idx as usize * small;
                run = match run {
                    // A block is full but for the message's last one, so a run stays
                    // contiguous while the pool offsets follow each other.
                    Some((o, a, n)) if o + n == off => Some((o, a, n + bytes)),
                    Some(r) => {
                        self.write_run(&w.src, r)?;
                        Some((off, at, bytes))
                    }
                    None => Some((off, at, bytes)),
                };
                refs[k] = idx | bit;
                k += 1;
                at += bytes;
            }
            if let Some(r) = run {
                self.write_run(&w.src, r)?;
            }
            if k == 0 {
                return Ok(false); // the pool is full: wait for acks
            }
            // The data must be in R's memory before the postbox that points to it.
            self.area.barrier();
            let first = !w.started;
            let (env, seq, proto) = (w.env, w.seq, w.proto);
            let kind = match (first, proto) {
                (true, Proto::Rdata) => kind::RDATA,
                (true, _) => kind::LONG,
                (false, _) => kind::CONT_REFS,
            };
            self.post(kind, k as u8, 0, |m, off| {
                let payload = if first {
                    if proto == Proto::Rdata {
                        m.write(off + pb::SEQ, &seq.to_le_bytes())?;
                    } else {
                        m.store_u32(off + pb::CTX, env.ctx)?;
                        m.store_u32(off + pb::TAG, env.tag as u32)?;
                    }
                    m.write(off + pb::LEN, &(len as u64).to_le_bytes())?;
                    off + pb::FIRST_PAYLOAD
                } else {
                    off + pb::CONT_PAYLOAD
                };
                for (j, r) in refs[..k].iter().enumerate() {
                    m.store_u32(payload + 4 * j, *r)?;
                }
                Ok(())
            })?;
            w.started = true;
            w.sent = at;
        }
        Ok(true)
    }

    /// Writes `n` bytes of `src` from `at` into the pool at offset `off`.
    fn write_run(&self, src: &SrcBuf, (off, at, n): (usize, usize, usize)) -> Result<(), Corrupt> {
        self.area
            .write_from(off, src, at, n)
            .map_err(|_| Corrupt("pool write out of bounds"))
    }

    fn rts(&mut self, w: &mut Work) -> Result<bool, Corrupt> {
        if !self.room() {
            return Ok(false);
        }
        let env = w.env;
        self.post(kind::RTS, env.sync as u8, 0, |m, off| {
            m.store_u32(off + pb::CTX, env.ctx)?;
            m.store_u32(off + pb::TAG, env.tag as u32)?;
            m.write(off + pb::LEN, &(env.len as u64).to_le_bytes())
        })?;
        Ok(true)
    }
}

impl Drop for Link {
    /// The blocks R never acknowledged go back to the pool, which other links may
    /// share (R is lost, or the fabric is going away: nobody reads them now).
    fn drop(&mut self) {
        while self.acked < self.tail {
            let i = (self.acked % self.g.queue as u64) as usize;
            self.release(i);
            self.acked += 1;
        }
        self.pool.free(self.cur[0], self.cur[1]);
    }
}

/// [`Tx::usage`]: the queue's and the pool's use, in postboxes and small-block units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub postboxes: u64,
    pub postboxes_held: u64,
    pub units: u64,
    pub units_held: u64,
}

/// The sender's state for one destination: sends queued before and after the
/// connection exists.
#[derive(Debug)]
pub struct Tx {
    short: usize,
    eager: usize,
    queue: VecDeque<Work>,
    /// Rendezvous and sync messages whose RTS is written, waiting for their match.
    awaiting: Vec<Waiting>,
    /// Matched rendezvous messages whose data is queued: the receiver counts them
    /// against its ring until it reads their first postbox, so new RTSs wait for them.
    rdata_queued: usize,
    next_seq: u64,
    link: Option<Link>,
}

impl Tx {
    pub fn new(short: usize, eager: usize) -> Tx {
        Tx {
            short,
            eager,
            queue: VecDeque::new(),
            awaiting: Vec::with_capacity(ack::RING_LEN),
            rdata_queued: 0,
            next_seq: 0,
            link: None,
        }
    }

    pub fn connect(&mut self, link: Link) {
        self.link = Some(link);
    }

    pub fn is_connected(&self) -> bool {
        self.link.is_some()
    }

    /// Whether anything is left to do (queued data, unacknowledged postboxes, matches
    /// awaited). Reads R's acks.
    pub fn busy(&mut self) -> bool {
        if let Some(l) = self.link.as_mut() {
            l.reclaim();
        }
        !self.queue.is_empty()
            || !self.awaiting.is_empty()
            || self.link.as_ref().is_some_and(|l| l.acked != l.tail)
    }

    /// The channel's use so far, as of the acks last read (None before it is
    /// connected): postboxes written and pool units allocated since it was made, and
    /// of them those the receiver has not acknowledged yet. Both held counts are 0
    /// once every postbox is acknowledged ([`Tx::busy`] reads the acks).
    pub fn usage(&self) -> Option<Usage> {
        self.link.as_ref().map(|l| Usage {
            postboxes: l.tail,
            postboxes_held: l.tail - l.acked,
            units: l.units,
            units_held: l.units - l.units_freed,
        })
    }

    /// The pool the link allocates from (None before it is connected).
    pub fn pool(&self) -> Option<Arc<Pool>> {
        self.link.as_ref().map(|l| l.pool.clone())
    }

    /// Takes back what R has acknowledged (the fabric's answer to a starved shared
    /// pool, [`super::pool::Pool::take_starved`]); true if anything came back.
    pub fn reclaim(&mut self) -> bool {
        self.link.as_mut().is_some_and(Link::reclaim)
    }

    /// Whether the pump has nothing to do: no queued data, no match awaited.
    pub fn idle(&self) -> bool {
        self.queue.is_empty() && self.awaiting.is_empty()
    }

    /// Queues a send; [`Tx::pump`] writes it.
    pub fn push(&mut self, id: SendId, env: Envelope, src: SrcBuf) {
        let proto = if env.sync || env.len > self.eager {
            Proto::Rts
        } else if env.len <= self.short {
            Proto::Short
        } else {
            Proto::Long
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        self.queue.push_back(Work {
            id,
            seq,
            env,
            src,
            proto,
            sent: 0,
            started: false,
        });
    }

    /// The fast path of a short message: when the channel is up, nothing is queued
    /// ahead (the non-overtaking rule) and its postboxes are free, writes it whole now
    /// and returns true (no `SendDone` follows: the buffer is free). Otherwise does
    /// nothing and returns false ([`Tx::push`] it).
    #[inline]
    pub fn send_short_now(&mut self, env: Envelope, src: SrcBuf) -> Result<bool, Corrupt> {
        if env.sync || env.len > self.short || !self.queue.is_empty() {
            return Ok(false);
        }
        let Some(l) = &mut self.link else {
            return Ok(false);
        };
        if env.len > pb::FIRST_PAYLOAD_LEN {
            return self.send_short_boxes(env, src);
        }
        let sent = l.short_one(&env, &src)?;
        self.next_seq += u64::from(sent);
        Ok(sent)
    }

    /// [`Tx::send_short_now`] of a message over several postboxes (out of line).
    #[inline(never)]
    fn send_short_boxes(&mut self, env: Envelope, src: SrcBuf) -> Result<bool, Corrupt> {
        let Some(l) = &mut self.link else {
            return Ok(false);
        };
        let rest = env.len.saturating_sub(pb::FIRST_PAYLOAD_LEN);
        let boxes = 1 + rest.div_ceil(pb::CONT_PAYLOAD_LEN) as u64;
        if l.free_boxes() < boxes && (!l.reclaim() || l.free_boxes() < boxes) {
            return Ok(false);
        }
        let mut w = Work {
            id: SendId(u64::MAX),
            seq: self.next_seq,
            env,
            src,
            proto: Proto::Short,
            sent: 0,
            started: false,
        };
        if !l.short(&mut w)? {
            return Err(Corrupt("postboxes counted free were not"));
        }
        self.next_seq += 1;
        Ok(true)
    }

    /// Reads acks and matches, writes what fits. Returns whether anything moved.
    pub fn pump(&mut self, ev: &mut Vec<Event>) -> Result<bool, Corrupt> {
        let Some(l) = &mut self.link else {
            return Ok(false);
        };
        // Acks are read only when the queue or the pool looks full (`room`, `alloc`).
        let mut moved = false;
        while !self.awaiting.is_empty() {
            let k = l.matches;
            let off = ack::ring(l.g.queue) + ack::entry(k) as usize;
            let v = l
                .acks
                .load_u64(off)
                .map_err(|_| Corrupt("ack segment too short"))?;
            if (v >> 32) as u32 != (k + 1) as u32 {
                break;
            }
            let lo = v as u32;
            let Some(i) = self.awaiting.iter().position(|w| w.seq as u32 == lo) else {
                return Err(Corrupt("a match for a message not awaiting one"));
            };
            let w = self.awaiting.swap_remove(i);
            l.matches += 1;
            moved = true;
            if w.env.sync {
                ev.push(Event::SyncMatched { send: w.id });
            }
            if w.env.len == 0 {
                ev.push(Event::SendDone { send: w.id });
            } else {
                // Ahead of RTSs still queued (they may be waiting for these very
                // data to free the receiver's ring), at a message boundary: a message
                // whose postboxes are partly written finishes first.
                let at = self
                    .queue
                    .iter()
                    .enumerate()
                    .position(|(i, q)| q.proto == Proto::Rts && !(i == 0 && q.started))
                    .unwrap_or(self.queue.len());
                self.rdata_queued += 1;
                self.queue.insert(
                    at,
                    Work {
                        id: w.id,
                        seq: w.seq,
                        env: w.env,
                        src: w.src,
                        proto: Proto::Rdata,
                        sent: 0,
                        started: false,
                    },
                );
            }
        }
        while let Some(w) = self.queue.front_mut() {
            let before = (w.sent, w.started);
            let done = match w.proto {
                Proto::Short => l.short(w)?,
                Proto::Long | Proto::Rdata => l.blocks(w)?,
                Proto::Rts if self.awaiting.len() + self.rdata_queued < ack::RING_LEN => {
                    l.rts(w)?
                }
                Proto::Rts => false,
            };
            moved |= done || before != (w.sent, w.started);
            if !done {
                break;
            }
            let w = self.queue.pop_front().expect("front exists");
            if w.proto == Proto::Rdata {
                self.rdata_queued -= 1;
            }
            if w.proto == Proto::Rts {
                self.awaiting.push(Waiting {
                    id: w.id,
                    seq: w.seq,
                    src: w.src,
                    env: w.env,
                });
            } else {
                ev.push(Event::SendDone { send: w.id });
            }
        }
        Ok(moved)
    }

    /// Every send not yet done (the peer is lost).
    pub fn abandon(&mut self) -> Vec<SendId> {
        self.rdata_queued = 0;
        let mut ids: Vec<SendId> = self.queue.drain(..).map(|w| w.id).collect();
        ids.extend(self.awaiting.drain(..).map(|w| w.id));
        ids
    }
}
