//! Flow: the work queued for each peer and not yet sequenced, the windows that bound
//! what is in flight, and the buffers that hold data until it is acknowledged.
//!
//! Work waits in its peer's queue, in the order it was asked for, and is sequenced
//! ([`Session::push`](myrix_mx_proto::reliability::Session::push)) only while the windows
//! allow: items in flight ([`super::Config::send_window`]), data bytes unacknowledged
//! ([`super::Config::write_window`]), read bytes unanswered
//! ([`super::Config::read_window`]). A large put or read reply is cut into MTU-sized
//! frames here, lazily; a large get becomes read requests of
//! [`super::Config::read_block`] bytes here, lazily. Nothing jumps the queue, so a flush
//! is sequenced after every write asked for before it.
//!
//! Must never build a frame, nor apply anything: it decides what is sent next.

use myrix_wire::rsm::{READ_REPLY_HEAD, WRITE_HEAD};

use super::*;

/// No buffer (an error reply).
pub(super) const NO_BUF: u32 = u32::MAX;

/// A sequenced item: what a frame is built from at each (re)send. Self-contained but
/// for data, which stays in [`Bufs`] until the item is acknowledged.
#[derive(Clone, Copy, Debug)]
pub(super) enum Item {
    Connect {
        imp: u32,
        seg: u32,
        perm: u32,
        node: u32,
        uid: u32,
        gid: u32,
    },
    ConnectReply {
        imp: u32,
        status: u32,
        exp: u32,
        len: u64,
    },
    Disconnect {
        exp: u32,
    },
    Write {
        buf: u32,
        at: u32,
        len: u32,
        exp: u32,
        offset: u64,
    },
    ReadReq {
        exp: u32,
        get: u32,
        offset: u64,
        len: u32,
    },
    ReadReply {
        buf: u32,
        at: u32,
        len: u32,
        req: u32,
        status: u32,
        offset: u64,
    },
    Flush {
        exp: u32,
        token: u32,
    },
    FlushReply {
        token: u32,
        status: u32,
    },
    Signal {
        to_importer: bool,
        conn: u32,
        flags: u32,
    },
    Abort {
        imp: u32,
        status: u32,
    },
}

impl Item {
    /// Gives back the item's hold on its buffer (acknowledged, or dropped).
    pub(super) fn release(self, bufs: &mut Bufs) {
        match self {
            Item::Write { buf, .. } | Item::ReadReply { buf, .. } => bufs.release(buf),
            _ => {}
        }
    }
}

/// What data a [`Pending::Data`] carries.
#[derive(Clone, Copy, Debug)]
pub(super) enum DataKind {
    Write { exp: u32 },
    Reply { req: u32 },
}

/// Work queued for a peer.
#[derive(Clone, Copy, Debug)]
pub(super) enum Pending {
    Item(Item),
    /// The unsent rest of a put or a read reply: `len` bytes from `at` in `buf`, for
    /// segment offset `offset`.
    Data {
        kind: DataKind,
        buf: u32,
        at: u32,
        len: u32,
        offset: u64,
    },
    /// The unrequested rest of a get.
    Get {
        get: u32,
    },
}

impl Pending {
    pub(super) fn release(self, bufs: &mut Bufs) {
        match self {
            Pending::Item(i) => i.release(bufs),
            Pending::Data { buf, .. } => bufs.release(buf),
            Pending::Get { .. } => {}
        }
    }
}

/// The most memory a released buffer keeps for the next small put
/// ([`Bufs::alloc_copy`]): with a window of 1024 frames, at most 256 KiB kept.
const KEEP_BUF: usize = 256;

/// Data buffers, shared by the frames cut from them and freed when the last is
/// acknowledged.
#[derive(Default)]
pub(super) struct Bufs {
    slots: Vec<(Vec<u8>, u32)>,
    free: Vec<u32>,
}

impl Bufs {
    /// Keeps `data` with one holder.
    pub(super) fn alloc(&mut self, data: Vec<u8>) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = (data, 1);
                i
            }
            None => {
                self.slots.push((data, 1));
                (self.slots.len() - 1) as u32
            }
        }
    }
    /// Keeps a copy of `data` with one holder, in the memory a released slot kept when
    /// it fits (a small put then allocates nothing).
    pub(super) fn alloc_copy(&mut self, data: &[u8]) -> u32 {
        match self.free.pop() {
            Some(i) => {
                let s = &mut self.slots[i as usize];
                s.0.clear();
                s.0.extend_from_slice(data);
                s.1 = 1;
                i
            }
            None => {
                self.slots.push((data.to_vec(), 1));
                (self.slots.len() - 1) as u32
            }
        }
    }
    pub(super) fn retain(&mut self, i: u32) {
        self.slots[i as usize].1 += 1;
    }
    pub(super) fn release(&mut self, i: u32) {
        if i == NO_BUF {
            return;
        }
        let s = &mut self.slots[i as usize];
        s.1 -= 1;
        if s.1 == 0 {
            if s.0.capacity() > KEEP_BUF {
                s.0 = Vec::new();
            } else {
                s.0.clear();
            }
            self.free.push(i);
        }
    }
    pub(super) fn get(&self, i: u32, at: u32, len: u32) -> &[u8] {
        &self.slots[i as usize].0[at as usize..(at + len) as usize]
    }
    /// Buffers held (for tests: none once everything is acknowledged).
    pub(super) fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

impl<A: Copy + Eq + Hash + std::fmt::Debug> Engine<A> {
    /// Queues work for peer `pi` (as its importer) behind what is already queued, and
    /// sends what fits.
    pub(super) fn push_pending(&mut self, pi: u32, w: Pending) {
        self.peers[pi as usize].waiting.push_back(w);
        self.fill_window(pi);
    }

    /// Queues an answer to peer `pi` (as its exporter) behind the answers already
    /// queued, and sends what fits.
    pub(super) fn push_answer(&mut self, pi: u32, w: Pending) {
        self.peers[pi as usize].answers.push_back(w);
        self.fill_window(pi);
    }

    /// Sequences the peer's queued work while the windows allow: answers first, then
    /// our own requests.
    ///
    /// Answers have a queue of their own because a get waits for the read window, and
    /// the read window opens only when the peer answers: with one queue, two nodes
    /// getting from each other at once each held the other's read replies behind a
    /// read request of their own that waited for them, for ever (no frame in flight,
    /// no timer: `tests/mpi_reorder.rs` found it). What is answered is bounded by what
    /// the peer asked ([`super::Config::max_reply_buffer`]); the two roles' frames need
    /// no order between them (a read reply is read from memory when its request is
    /// delivered, after that importer's earlier writes, whatever waits here).
    #[inline]
    pub(super) fn fill_window(&mut self, pi: u32) {
        // Most calls find nothing queued (every ack that frees an item asks): that is
        // answered here, inline, without the call and the loop's setup.
        let p = &self.peers[pi as usize];
        if p.answers.is_empty() && p.waiting.is_empty() {
            return;
        }
        self.fill_window_queued(pi);
    }

    /// [`Engine::fill_window`] with work queued.
    #[inline(never)]
    fn fill_window_queued(&mut self, pi: u32) {
        let write_max = (self.cfg.mtu - WRITE_HEAD) as u32;
        let reply_max = (self.cfg.mtu - READ_REPLY_HEAD) as u32;
        loop {
            let p = &mut self.peers[pi as usize];
            if !p.rel.has_room(1, &self.rel) {
                return;
            }
            let q = if p.answers.is_empty() {
                &mut p.waiting
            } else {
                &mut p.answers
            };
            let Some(front) = q.front_mut() else {
                return;
            };
            let item = match front {
                Pending::Item(item) => {
                    let item = *item;
                    q.pop_front();
                    item
                }
                Pending::Data {
                    kind,
                    buf,
                    at,
                    len,
                    offset,
                } => {
                    let max = match kind {
                        DataKind::Write { .. } => write_max,
                        DataKind::Reply { .. } => reply_max,
                    };
                    let n = (*len).min(max);
                    if p.data_in_flight > 0 && p.data_in_flight + n as usize > self.cfg.write_window
                    {
                        return;
                    }
                    let (b, a, o) = (*buf, *at, *offset);
                    let item = match *kind {
                        DataKind::Write { exp } => {
                            p.queued = p.queued.saturating_sub(n as usize);
                            Item::Write {
                                buf: b,
                                at: a,
                                len: n,
                                exp,
                                offset: o,
                            }
                        }
                        DataKind::Reply { req } => Item::ReadReply {
                            buf: b,
                            at: a,
                            len: n,
                            req,
                            status: 0,
                            offset: o,
                        },
                    };
                    p.data_in_flight += n as usize;
                    *at += n;
                    *len -= n;
                    *offset += n as u64;
                    self.bufs.retain(b);
                    if *len == 0 {
                        q.pop_front();
                        self.bufs.release(b);
                    }
                    item
                }
                Pending::Get { get } => {
                    let gid = *get;
                    let g = self.gets.get_mut(&gid);
                    let exp = g
                        .as_ref()
                        .and_then(|g| self.imports.get(&g.imp))
                        .and_then(|i| i.exp);
                    let (Some(g), Some(exp)) = (g, exp) else {
                        // Failed or disconnected meanwhile.
                        q.pop_front();
                        continue;
                    };
                    let left = g.data.len() as u64 - g.requested;
                    let n = left.min(self.cfg.read_block as u64) as u32;
                    if p.reads_in_flight > 0
                        && p.reads_in_flight + n as usize > self.cfg.read_window
                    {
                        return;
                    }
                    let offset = g.offset + g.requested;
                    g.blocks.push_back((offset, n, 0));
                    g.requested += n as u64;
                    p.reads_in_flight += n as usize;
                    if g.requested == g.data.len() as u64 {
                        q.pop_front();
                    }
                    Item::ReadReq {
                        exp,
                        get: gid,
                        offset,
                        len: n,
                    }
                }
            };
            let seq = p.rel.push(item);
            p.tx_count = p.tx_count.wrapping_add(1);
            self.txq.push_back(Tx::Seq { peer: pi, seq });
        }
    }

    /// A sequenced item is acknowledged (or sent, on a lossless transport): its data
    /// leaves the window.
    pub(super) fn item_done(&mut self, pi: u32, item: Item) {
        let p = &mut self.peers[pi as usize];
        match item {
            Item::Write { len, .. } => {
                p.data_in_flight = p.data_in_flight.saturating_sub(len as usize);
            }
            Item::ReadReply { len, .. } => {
                p.data_in_flight = p.data_in_flight.saturating_sub(len as usize);
                p.reply_buffered = p.reply_buffered.saturating_sub(len as usize);
            }
            _ => {}
        }
        item.release(&mut self.bufs);
    }

    /// Data buffers held: none once every put and read reply is acknowledged.
    pub fn buffers_held(&self) -> usize {
        self.bufs.live()
    }
}
