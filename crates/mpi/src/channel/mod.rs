//! [`ChannelFabric`]: MPI's message transport over RSM segments, after Sun MPI's RSM
//! protocol (seed 004 §3): per connection S→R, a queue of 64-byte postboxes and a
//! buffer pool in R's memory, written only by S; acknowledgements and matches in an
//! ack segment in S's memory, written only by R. Connections are half duplex and made
//! at the first send ([`connect`]); a rank that never talks to a peer builds nothing
//! for it.
//!
//! * [`config`] — tunables (`MYRIX_MPI_*`), bounded.
//! * [`layout`] — every offset of the inbox, the channel area, the ack segment.
//! * [`window`] — the memory views (shm mappings, exports, test memory); the only
//!   `unsafe`, plus the two trait entry points that receive raw buffers.
//! * [`connect`] — the inbox handshake. [`directory`] — business cards.
//! * [`send`], [`recv`] — the per-channel state machines.
//!
//! Decisions where the design was silent:
//! * The sender proposes the channel's geometry (queue, pool, blocks) in its request:
//!   the area is "managed by a single sending process" (§3.1), so its shape is the
//!   sender's setting; the receiver checks it against the same bounds.
//! * Sync sends always use rendezvous (see [`send`]).
//! * [`ChannelFabric::open`] fetches every card through PMI at open (one
//!   `lookup` per rank): the fabric cannot keep the `&mut Job` for lazy lookups.
//!   Connections (the segments) are still made only at first send.
//!   [`ChannelFabric::with_directory`] looks cards up lazily.
//! * Liveness: every [`LIVENESS_EVERY`] calls of `progress`, one peer with a channel
//!   (either way) is checked with `Import::check` (a `flock` test on shm; the rsm
//!   watcher thread also marks dead exporters within ~5 ms). A peer that has no
//!   channel with this rank either way is not watched: nothing waits on it here.
//!   A peer that exits normally also shows as lost to the peers still running.
//! * Memory per connection (defaults, shm, 4 KiB pages): area 4 KiB queue + 256 KiB
//!   pool (R's memory, touched only as used), ack segment 4 KiB (S), and per peer
//!   about 0.6 KiB of heap on each side; 8 bytes per rank of the job and 64 bytes of
//!   inbox per rank before any connection.
//!
//! Measured (`cargo run --release -p myrix-mpi --example channel_pingpong`, 2 cores
//! shared with other builds, load 5–6, so the two-process figures are scheduler-bound
//! and above the target of < 0.2 µs one way): 8 bytes one way 0.37–2.9 µs across
//! processes; the software cost alone (`PINGPONG_MODE=thread`, both ranks in one
//! thread) is 0.06–0.09 µs per 8-byte message, 0.08 µs per KiB, 1.8 µs per 64 KiB.
//!
//! This module must never block, and must never let a peer's bad data panic it: a
//! corrupt channel is reported as [`Event::PeerLost`].

pub mod config;
pub mod connect;
pub mod directory;
pub mod layout;
pub mod recv;
pub mod send;
pub mod window;

use std::collections::VecDeque;

use myrix_rsm::{AccessEntry, Controller, ExportFlags, Import, NodeId, Perm, RsmError, SegmentId};

pub use config::{ChannelConfig, ConfigError};
pub use directory::{Card, CardList, Directory, FileDirectory, MemDirectory};

use crate::p2p::fabric::{Envelope, Event, Fabric, FabricError, MsgToken, Rank, SendId};
use connect::{Reply, Request};
use recv::{Rx, Taken};
use send::{Geometry, Link, Tx};
use window::{DstBuf, Mem, SrcBuf};

/// A peer broke the protocol (what it wrote cannot be a correct channel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt(pub &'static str);

/// `progress` calls between two liveness checks (of one peer each).
pub const LIVENESS_EVERY: u32 = 1 << 12;

fn rsm(what: &str, e: RsmError) -> FabricError {
    FabricError::Other(format!("{what}: {e}"))
}

#[derive(Debug)]
enum TxState {
    /// No card yet.
    Fresh,
    /// Request written; the ack segment waits in `ack`.
    Requested {
        ack: Mem,
    },
    Up {
        area: Import,
    },
}

#[derive(Debug)]
struct TxChan {
    tx: Tx,
    state: TxState,
}

#[derive(Debug)]
struct RxChan {
    src: Rank,
    rx: Rx,
    ack: Import,
}

/// What this rank keeps for a peer it talks to (either way).
#[derive(Debug, Default)]
struct Peer {
    /// The peer's inbox, imported and mapped.
    inbox: Option<(Import, Mem)>,
    tx: Option<TxChan>,
    /// Index of its channel in `rx_active`.
    rx: Option<usize>,
    lost: bool,
}

#[derive(Debug)]
struct SelfMsg {
    seq: u64,
    id: SendId,
    env: Envelope,
    src: SrcBuf,
    announced: bool,
}

/// MPI's transport over RSM segments. See the module docs.
pub struct ChannelFabric {
    rank: Rank,
    size: Rank,
    node_of: Vec<u32>,
    cfg: ChannelConfig,
    ctl: Controller,
    page: usize,
    dir: Box<dyn Directory>,
    inbox: Mem,
    inbox_id: SegmentId,
    peers: Vec<Option<Box<Peer>>>,
    rx_active: Vec<RxChan>,
    tx_active: Vec<Rank>,
    selfq: VecDeque<SelfMsg>,
    /// Some message to self is not announced yet.
    self_new: bool,
    self_seq: u64,
    pending: Vec<Event>,
    next_send: u64,
    polls: u32,
    watch_next: usize,
}

impl std::fmt::Debug for ChannelFabric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelFabric")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("inbox", &self.inbox_id)
            .finish_non_exhaustive()
    }
}

impl ChannelFabric {
    /// Opens the fabric of a job launched with PMI: exports the inbox on `shm`,
    /// publishes the card, barriers, and reads the cards of the other ranks.
    pub fn open(job: &mut crate::Job, cfg: &ChannelConfig) -> Result<ChannelFabric, FabricError> {
        let pmi = |e: crate::pmi::PmiError| FabricError::Other(format!("PMI: {e}"));
        let mut node_of = vec![0u32; job.size as usize];
        node_of[job.rank as usize] = job.node_id;
        let mut f = ChannelFabric::with_directory(
            job.rank,
            job.size,
            node_of,
            CardList(vec![None; job.size as usize]),
            cfg,
        )?;
        let me = Card {
            node: f.ctl.local_node(),
            inbox: f.inbox_id,
        };
        job.publish("chan", &format!("{}:{}", job.node_id, me.encode()))
            .map_err(pmi)?;
        job.barrier().map_err(pmi)?;
        let mut cards = vec![None; job.size as usize];
        for r in 0..job.size {
            let v = if r == job.rank {
                format!("{}:{}", job.node_id, me.encode())
            } else {
                job.lookup("chan", r).map_err(pmi)?
            };
            let bad = || FabricError::Other(format!("bad card of rank {r}: {v:?}"));
            let (node, card) = v.split_once(':').ok_or_else(bad)?;
            f.node_of[r as usize] = node.parse().map_err(|_| bad())?;
            cards[r as usize] = Some(Card::decode(card).ok_or_else(bad)?);
        }
        f.dir = Box::new(CardList(cards));
        Ok(f)
    }

    /// A fabric whose ranks find each other through `dir` (`node_of[rank]`: the node
    /// each rank runs on; ranks on another node need a network controller, which this
    /// version does not have: sends to them fail).
    pub fn with_directory(
        rank: Rank,
        size: Rank,
        node_of: Vec<u32>,
        mut dir: impl Directory + 'static,
        cfg: &ChannelConfig,
    ) -> Result<ChannelFabric, FabricError> {
        cfg.validate()
            .map_err(|e| FabricError::Other(format!("channel configuration: {e}")))?;
        if rank >= size || node_of.len() != size as usize {
            return Err(FabricError::Other(format!(
                "rank {rank} of {size} with {} nodes given",
                node_of.len()
            )));
        }
        let ctl = Controller::get("shm").map_err(|e| rsm("shm controller", e))?;
        let page = ctl.attr().page_size;
        let len = layout::round_up(layout::inbox::len(size), page);
        let e = ctl
            .export_create(len, ExportFlags::default())
            .map_err(|e| rsm("inbox", e))?;
        let inbox_id = e.publish(None, &[]).map_err(|e| rsm("inbox", e))?;
        dir.publish(
            rank,
            Card {
                node: ctl.local_node(),
                inbox: inbox_id,
            },
        )?;
        let mut peers = Vec::with_capacity(size as usize);
        peers.resize_with(size as usize, || None);
        Ok(ChannelFabric {
            rank,
            size,
            node_of,
            cfg: cfg.clone(),
            ctl,
            page,
            dir: Box::new(dir),
            inbox: Mem::export(e),
            inbox_id,
            peers,
            rx_active: Vec::new(),
            tx_active: Vec::new(),
            selfq: VecDeque::new(),
            self_new: false,
            self_seq: 0,
            pending: Vec::new(),
            next_send: 0,
            polls: 0,
            watch_next: 0,
        })
    }

    pub fn config(&self) -> &ChannelConfig {
        &self.cfg
    }

    /// Ranks with a channel to this one (receive side) and from it (send side).
    pub fn connections(&self) -> (usize, usize) {
        let tx = self
            .peers
            .iter()
            .flatten()
            .filter(|p| {
                matches!(
                    p.tx,
                    Some(TxChan {
                        state: TxState::Up { .. },
                        ..
                    })
                )
            })
            .count();
        (self.rx_active.len(), tx)
    }

    fn peer(&mut self, r: Rank) -> &mut Peer {
        self.peers[r as usize].get_or_insert_with(Box::default)
    }

    fn import_mapped(&self, node: NodeId, id: SegmentId) -> Result<(Import, Mem), RsmError> {
        let i = self.ctl.import_connect(node, id, Perm::RDWR)?;
        let m = i.map()?;
        Ok((i, Mem::mapping(m)))
    }

    fn export(&self, len: usize, to: NodeId) -> Result<(Mem, SegmentId), RsmError> {
        let len = layout::round_up(len, self.page);
        let e = self.ctl.export_create(len, ExportFlags::default())?;
        let id = e.publish(
            None,
            &[AccessEntry {
                node: to,
                perm: Perm::RDWR,
            }],
        )?;
        Ok((Mem::export(e), id))
    }

    /// Moves the connection to `dest` on as far as it goes now.
    fn connect_step(&mut self, dest: Rank) -> Result<(), FabricError> {
        let me = self.rank;
        let Some(p) = self.peers[dest as usize].as_deref() else {
            return Ok(());
        };
        match &p.tx {
            Some(TxChan {
                state: TxState::Fresh,
                ..
            }) => {
                let Some(card) = self.dir.lookup(dest)? else {
                    return Ok(());
                };
                if p.inbox.is_none() {
                    let inbox = self
                        .import_mapped(card.node, card.inbox)
                        .map_err(|e| rsm(&format!("inbox of rank {dest}"), e))?;
                    self.peer(dest).inbox = Some(inbox);
                }
                let (ack, ack_id) = self
                    .export(layout::ack::len(self.cfg.queue), card.node)
                    .map_err(|e| rsm("ack segment", e))?;
                let req =
                    Request::from_config(self.ctl.local_node(), ack_id, self.inbox_id, &self.cfg);
                let p = self.peer(dest);
                let (_, inbox) = p.inbox.as_ref().expect("imported above");
                req.write(inbox, me)
                    .map_err(|_| FabricError::Other(format!("inbox of rank {dest} too short")))?;
                p.tx.as_mut().expect("tx exists").state = TxState::Requested { ack };
                Ok(())
            }
            Some(TxChan {
                state: TxState::Requested { .. },
                ..
            }) => {
                let Ok(Some(rep)) = Reply::read(&self.inbox, dest) else {
                    return Ok(());
                };
                if rep.status != 0 {
                    return Err(FabricError::PeerLost {
                        rank: dest,
                        why: "it refused the channel's geometry".into(),
                    });
                }
                let node = p
                    .inbox
                    .as_ref()
                    .map_or(self.ctl.local_node(), |(i, _)| i.node());
                let (area_imp, area) = self
                    .import_mapped(node, rep.area)
                    .map_err(|e| rsm(&format!("channel area of rank {dest}"), e))?;
                let g = Geometry {
                    queue: self.cfg.queue,
                    pool_units: self.cfg.pool_units(),
                    small: self.cfg.small_block,
                    large: self.cfg.large_block,
                };
                let tx = self.peer(dest).tx.as_mut().expect("tx exists");
                let TxState::Requested { ack } =
                    std::mem::replace(&mut tx.state, TxState::Up { area: area_imp })
                else {
                    unreachable!("matched above")
                };
                let link = Link::new(g, area, ack).map_err(|c| FabricError::PeerLost {
                    rank: dest,
                    why: c.0.into(),
                })?;
                tx.tx.connect(link);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Answers the requests in this rank's inbox.
    fn scan_inbox(&mut self, ev: &mut Vec<Event>) {
        for src in 0..self.size {
            if src == self.rank {
                continue;
            }
            let Ok(Some(req)) = Request::read(&self.inbox, src) else {
                continue;
            };
            let p = self.peers[src as usize].as_deref();
            if p.is_some_and(|p| p.rx.is_some() || p.lost) {
                continue;
            }
            if let Err(why) = self.accept(src, req) {
                self.lose(src, why, ev);
            }
        }
        // Replies to this rank's requests.
        for i in 0..self.tx_active.len() {
            let dest = self.tx_active[i];
            if let Err(e) = self.connect_step(dest) {
                self.lose(dest, e.to_string(), ev);
            }
        }
    }

    fn accept(&mut self, src: Rank, req: Request) -> Result<(), String> {
        if self.peer(src).inbox.is_none() {
            let inbox = self
                .import_mapped(req.node, req.inbox)
                .map_err(|e| format!("its inbox: {e}"))?;
            self.peer(src).inbox = Some(inbox);
        }
        let me = self.rank;
        let Some(g) = req.geometry() else {
            let (_, inbox) = self.peer(src).inbox.as_ref().expect("imported above");
            let _ = Reply {
                area: SegmentId(0),
                status: layout::REFUSED,
            }
            .write(inbox, me);
            return Err(format!("it asked for a bad channel geometry: {req:?}"));
        };
        let (ack_imp, acks) = self
            .import_mapped(req.node, req.ack)
            .map_err(|e| format!("its ack segment: {e}"))?;
        let (area, area_id) = self
            .export(layout::area::len(g.queue, g.pool_bytes()), req.node)
            .map_err(|e| format!("channel area: {e}"))?;
        let rx = Rx::new(src, g, area, acks).map_err(|c| c.0.to_string())?;
        self.rx_active.push(RxChan {
            src,
            rx,
            ack: ack_imp,
        });
        let idx = self.rx_active.len() - 1;
        let p = self.peer(src);
        p.rx = Some(idx);
        let (_, inbox) = p.inbox.as_ref().expect("imported above");
        Reply {
            area: area_id,
            status: 0,
        }
        .write(inbox, me)
        .map_err(|_| "its inbox is too short".to_string())
    }

    /// Forgets a peer and reports it lost (once).
    fn lose(&mut self, r: Rank, why: String, ev: &mut Vec<Event>) {
        let Some(p) = self.peers[r as usize].as_deref_mut() else {
            return;
        };
        if p.lost {
            return;
        }
        p.lost = true;
        p.tx = None;
        p.inbox = None;
        if let Some(i) = p.rx.take() {
            self.rx_active.swap_remove(i);
            if let Some(moved) = self.rx_active.get(i) {
                let s = moved.src;
                self.peer(s).rx = Some(i);
            }
        }
        self.tx_active.retain(|&d| d != r);
        ev.push(Event::PeerLost { rank: r, why });
    }

    /// Checks one peer's imports (round robin).
    fn watch(&mut self, ev: &mut Vec<Event>) {
        let n = self.peers.len();
        for _ in 0..n {
            let r = self.watch_next % n;
            self.watch_next = (r + 1) % n;
            let Some(p) = self.peers[r].as_deref() else {
                continue;
            };
            if p.lost {
                continue;
            }
            let mut bad = None;
            if let Some((i, _)) = &p.inbox {
                bad = i.check().err();
            }
            if let Some(TxChan {
                state: TxState::Up { area },
                ..
            }) = &p.tx
            {
                bad = bad.or(area.check().err());
            }
            if let Some(i) = p.rx {
                bad = bad.or(self.rx_active[i].ack.check().err());
            }
            if let Some(e) = bad {
                self.lose(r as Rank, format!("its segments are gone ({e})"), ev);
            }
            return;
        }
    }

    fn take_self(&mut self, seq: u64, dst: DstBuf) -> Result<bool, FabricError> {
        let Some(i) = self.selfq.iter().position(|m| m.seq == seq && m.announced) else {
            return Err(FabricError::UnknownMessage(MsgToken {
                src: self.rank,
                seq,
            }));
        };
        let m = self.selfq.remove(i).expect("found above");
        m.src.copy_to(0, &dst, 0, m.env.len);
        if m.env.sync {
            self.pending.push(Event::SyncMatched { send: m.id });
        }
        self.pending.push(Event::SendDone { send: m.id });
        Ok(true)
    }
}

impl Fabric for ChannelFabric {
    fn rank(&self) -> Rank {
        self.rank
    }

    fn size(&self) -> Rank {
        self.size
    }

    fn eager_limit(&self) -> usize {
        self.cfg.eager
    }

    unsafe fn send(
        &mut self,
        dest: Rank,
        env: Envelope,
        data: *const u8,
    ) -> Result<SendId, FabricError> {
        if dest >= self.size {
            return Err(FabricError::NoSuchRank(dest));
        }
        // SAFETY: the caller promises `data` is readable for `env.len` bytes until
        // `SendDone`, which is as long as the fabric keeps the `SrcBuf`.
        let src = unsafe { SrcBuf::new(data, env.len) };
        let id = SendId(self.next_send);
        if dest == self.rank {
            self.next_send += 1;
            self.selfq.push_back(SelfMsg {
                seq: self.self_seq,
                id,
                env,
                src,
                announced: false,
            });
            self.self_new = true;
            self.self_seq += 1;
            return Ok(id);
        }
        if self.node_of[dest as usize] != self.node_of[self.rank as usize] {
            return Err(FabricError::Other(format!(
                "rank {dest} runs on node {} and this one on node {}: no network controller \
                 for the channel (shm only)",
                self.node_of[dest as usize], self.node_of[self.rank as usize]
            )));
        }
        let (short, eager) = (self.cfg.short, self.cfg.eager);
        if self.peer(dest).lost {
            return Err(FabricError::PeerLost {
                rank: dest,
                why: "lost earlier".into(),
            });
        }
        self.next_send += 1;
        let p = self.peers[dest as usize].get_or_insert_with(Box::default);
        let fresh = p.tx.is_none();
        let tx = p.tx.get_or_insert_with(|| TxChan {
            tx: Tx::new(short, eager),
            state: TxState::Fresh,
        });
        tx.tx.push(id, env, src);
        if tx.tx.is_connected() {
            if let Err(c) = tx.tx.pump(&mut self.pending) {
                let mut ev = std::mem::take(&mut self.pending);
                self.lose(dest, c.0.into(), &mut ev);
                self.pending = ev;
            }
        } else if fresh {
            if let Err(e) = self.connect_step(dest) {
                self.peer(dest).tx = None;
                return Err(e);
            }
        }
        if !self.tx_active.contains(&dest) {
            self.tx_active.push(dest);
        }
        Ok(id)
    }

    unsafe fn send_eager(
        &mut self,
        dest: Rank,
        env: Envelope,
        data: *const u8,
    ) -> Result<Option<SendId>, FabricError> {
        // A short message on a channel that is up with nothing queued: straight into
        // the postbox.
        if let Some(TxChan {
            tx,
            state: TxState::Up { .. },
        }) = self
            .peers
            .get_mut(dest as usize)
            .and_then(|p| p.as_deref_mut())
            .and_then(|p| p.tx.as_mut())
        {
            // SAFETY: the caller promises `data` is readable for `env.len` bytes; it is
            // read only inside this call.
            let src = unsafe { SrcBuf::new(data, env.len) };
            match tx.send_short_now(env, src) {
                Ok(true) => return Ok(None),
                Ok(false) => {}
                Err(c) => {
                    let mut ev = std::mem::take(&mut self.pending);
                    self.lose(dest, c.0.into(), &mut ev);
                    self.pending = ev;
                    return Err(FabricError::PeerLost {
                        rank: dest,
                        why: c.0.into(),
                    });
                }
            }
        }
        // SAFETY: the caller's contract, forwarded.
        let id = unsafe { self.send(dest, env, data) }?;
        // `send` pumps at once: a message written whole (nothing queued ahead of it)
        // reported its SendDone last.
        if matches!(self.pending.last(), Some(Event::SendDone { send }) if *send == id) {
            self.pending.pop();
            return Ok(None);
        }
        Ok(Some(id))
    }

    unsafe fn recv_now(
        &mut self,
        src: Rank,
        accept: &mut dyn FnMut(&Envelope) -> bool,
        buf: *mut u8,
        cap: usize,
    ) -> Result<Option<Envelope>, FabricError> {
        let Some(i) = self
            .peers
            .get(src as usize)
            .and_then(|p| p.as_deref())
            .and_then(|p| p.rx)
        else {
            return Ok(None);
        };
        // SAFETY: the caller promises `buf` is writable for `cap` bytes during the call.
        let dst = unsafe { DstBuf::new(buf, cap) };
        match self.rx_active[i].rx.recv_now(accept, dst) {
            Ok(r) => Ok(r),
            Err(c) => {
                let mut ev = std::mem::take(&mut self.pending);
                self.lose(src, c.0.into(), &mut ev);
                self.pending = ev;
                Err(FabricError::PeerLost {
                    rank: src,
                    why: c.0.into(),
                })
            }
        }
    }

    unsafe fn take(
        &mut self,
        token: MsgToken,
        buf: *mut u8,
        cap: usize,
    ) -> Result<bool, FabricError> {
        // SAFETY: the caller promises `buf` is writable for `cap` bytes until the data
        // is reported received, which is as long as the fabric keeps the `DstBuf`.
        let dst = unsafe { DstBuf::new(buf, cap) };
        if token.src == self.rank {
            return self.take_self(token.seq, dst);
        }
        let Some(i) = self
            .peers
            .get(token.src as usize)
            .and_then(|p| p.as_deref())
            .and_then(|p| p.rx)
        else {
            return Err(FabricError::UnknownMessage(token));
        };
        match self.rx_active[i].rx.take(token.seq, dst) {
            Ok(Taken::Done) => Ok(true),
            Ok(Taken::Later) => Ok(false),
            Ok(Taken::Unknown) => Err(FabricError::UnknownMessage(token)),
            Err(c) => {
                let mut ev = std::mem::take(&mut self.pending);
                self.lose(token.src, c.0.into(), &mut ev);
                self.pending = ev;
                Err(FabricError::PeerLost {
                    rank: token.src,
                    why: c.0.into(),
                })
            }
        }
    }

    fn progress(&mut self, events: &mut Vec<Event>) -> Result<bool, FabricError> {
        // The receive side first; an empty poll reads each postbox flag it waits on
        // and a few words of this process's own memory, nothing else.
        let mut moved = false;
        if !self.pending.is_empty() {
            moved = true;
            events.append(&mut self.pending);
        }
        if self.self_new {
            self.self_new = false;
            for m in self.selfq.iter_mut().filter(|m| !m.announced) {
                m.announced = true;
                moved = true;
                events.push(Event::Arrived {
                    token: MsgToken {
                        src: self.rank,
                        seq: m.seq,
                    },
                    env: m.env,
                });
            }
        }
        if connect::take_changed(&self.inbox) {
            moved = true;
            self.scan_inbox(events);
        }
        let mut i = 0;
        while i < self.rx_active.len() {
            match self.rx_active[i].rx.poll(events) {
                Ok(m) => moved |= m,
                Err(c) => {
                    let src = self.rx_active[i].src;
                    self.lose(src, c.0.into(), events);
                    continue;
                }
            }
            i += 1;
        }
        let mut i = 0;
        while i < self.tx_active.len() {
            let dest = self.tx_active[i];
            let Some(tx) = self.peers[dest as usize]
                .as_deref_mut()
                .and_then(|p| p.tx.as_mut())
            else {
                self.tx_active.swap_remove(i);
                continue;
            };
            if tx.tx.idle() && matches!(tx.state, TxState::Up { .. }) {
                i += 1;
                continue;
            }
            match tx.tx.pump(events) {
                Ok(m) => moved |= m,
                Err(c) => {
                    self.lose(dest, c.0.into(), events);
                    continue;
                }
            }
            if let TxState::Fresh = tx.state {
                if let Err(e) = self.connect_step(dest) {
                    self.lose(dest, e.to_string(), events);
                    continue;
                }
            }
            i += 1;
        }
        self.polls = self.polls.wrapping_add(1);
        if self.polls % LIVENESS_EVERY == 0 {
            self.watch(events);
        }
        Ok(moved)
    }
}
