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
//! * [`connect`] — the inbox handshake slots; `peers` — making and losing connections.
//!   [`directory`] — business cards. [`net`] — ranks on other nodes (RSM `udp`).
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
mod dynamic;
pub mod layout;
pub mod net;
mod peers;
pub mod recv;
pub mod send;
pub mod window;

use std::collections::VecDeque;
use std::sync::Arc;

use myrix_rsm::{AccessEntry, Controller, ExportFlags, Import, NodeId, Perm, RsmError, SegmentId};

pub use config::{ChannelConfig, ConfigError};
pub use directory::{Card, CardList, Directory, FileDirectory, MemDirectory};

use crate::p2p::fabric::{Claim, Envelope, Event, Fabric, FabricError, MsgToken, Rank, SendId};
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
        area: Arc<Import>,
    },
}

#[derive(Debug)]
struct TxChan {
    tx: Tx,
    state: TxState,
    /// Toward another node: whether sends are unacknowledged, for the flush at exit
    /// ([`net::flush_at_exit`]).
    busy: Option<Arc<std::sync::atomic::AtomicBool>>,
    /// Toward another node: puts the postboxes the pump staged.
    flush: Option<window::NetFlush>,
}

impl TxChan {
    /// After a pump: the staged postboxes leave, and the exit flag is updated. (Both
    /// are for other nodes: on shared memory this is two tests, kept inline.)
    #[inline(always)]
    fn note_busy(&mut self) {
        if let Some(f) = &self.flush {
            f.flush();
        }
        if let Some(b) = &self.busy {
            b.store(self.tx.busy(), std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// [`TxChan::note_busy`] after [`Tx::send_short_now`] wrote a postbox, which no ack
    /// can cover yet: busy without [`Tx::busy`]'s look at the acks (~90 instructions).
    #[inline(always)]
    fn note_sent(&mut self) {
        if let Some(f) = &self.flush {
            f.flush();
        }
        if let Some(b) = &self.busy {
            b.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

#[derive(Debug)]
struct RxChan {
    src: Rank,
    rx: Rx,
    ack: Arc<Import>,
    /// Toward another node: puts the acks staged in the lazy ack window.
    acks: Option<window::NetFlush>,
}

/// What this rank keeps for a peer it talks to (either way).
#[derive(Debug, Default)]
struct Peer {
    /// The peer's inbox, imported and mapped (or behind the network controller).
    inbox: Option<(Arc<Import>, Mem)>,
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
    /// The network controller's side, when the job spans several nodes ([`net`]).
    net: Option<Box<NetSide>>,
    /// Processes of other jobs, ranks `job_size..size` ([`dynamic`]).
    dyn_peers: Vec<dynamic::DynPeer>,
    /// The job's own ranks; the inbox has `slots` (more, for other jobs' processes).
    job_size: Rank,
    slots: Rank,
}

/// The network controller and this rank's inbox on it.
struct NetSide {
    ctl: Controller,
    page: usize,
    inbox: Mem,
    short: usize,
    /// Since when progress finds nothing to do, and how long before the staged acks
    /// leave.
    idle_since: Option<std::time::Instant>,
    ack_idle: std::time::Duration,
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
    /// publishes the card with this rank's node identity and network endpoints, barriers,
    /// reads the others' cards, assigns node ids (the job's layout is set from them),
    /// and when the ranks are on several nodes opens the network side ([`net`]) and
    /// barriers again.
    pub fn open(job: &mut crate::Job, cfg: &ChannelConfig) -> Result<ChannelFabric, FabricError> {
        let pmi = |e: crate::pmi::PmiError| FabricError::Other(format!("PMI: {e}"));
        let mut f = ChannelFabric::with_directory(
            job.rank,
            job.size,
            vec![0; job.size as usize],
            CardList(vec![None; job.size as usize]),
            cfg,
        )?;
        let me = Card {
            node: f.ctl.local_node(),
            inbox: f.inbox_id,
        };
        let ident = crate::job::node_identity();
        // Only needed if the job spans nodes; an error is reported then.
        let ep = net::local_card();
        let mine = format!("{ident}|{}|{}", ep.as_deref().unwrap_or("-"), me.encode());
        job.publish("chan", &mine).map_err(pmi)?;
        job.barrier().map_err(pmi)?;
        let (mut cards, mut idents, mut addrs) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..job.size {
            let v = if r == job.rank {
                mine.clone()
            } else {
                job.lookup("chan", r).map_err(pmi)?
            };
            let bad = || FabricError::Other(format!("bad card of rank {r}: {v:?}"));
            let mut it = v.split('|');
            let (Some(id), Some(addr), Some(card), None) =
                (it.next(), it.next(), it.next(), it.next())
            else {
                return Err(bad());
            };
            idents.push(id.to_string());
            addrs.push(addr.to_string());
            cards.push(Some(Card::decode(card).ok_or_else(bad)?));
        }
        f.node_of = crate::job::assign_nodes(&idents);
        job.set_layout(&f.node_of);
        f.dir = Box::new(CardList(cards));
        if job.nnodes > 1 {
            // Every rank opens its side, then all barrier (whether it worked or not:
            // the others would wait for this one).
            let opened = match ep {
                Err(e) => Err(FabricError::Other(e)),
                Ok(_) => f.open_net(&addrs),
            };
            job.barrier().map_err(pmi)?;
            opened?;
        }
        Ok(f)
    }

    /// Opens the network controller from every rank's network card (`addrs[rank]`,
    /// [`net::local_card`]) and exports this rank's network inbox ([`net::NET_INBOX`]).
    fn open_net(&mut self, addrs: &[String]) -> Result<(), FabricError> {
        let ctl = net::open_controller(self.rank, addrs)
            .map_err(|e| FabricError::Other(format!("network controller: {e}")))?;
        let page = ctl.attr().page_size;
        let len = layout::round_up(layout::inbox::len(self.size), page);
        let e = ctl
            .export_create(len, ExportFlags::default())
            .map_err(|e| rsm("network inbox", e))?;
        e.publish(Some(net::NET_INBOX), &[])
            .map_err(|e| rsm("network inbox", e))?;
        let short = net::net_short(self.cfg.queue, self.cfg.eager).map_err(FabricError::Other)?;
        self.net = Some(Box::new(NetSide {
            ctl,
            page,
            inbox: Mem::export(e),
            short,
            idle_since: None,
            ack_idle: net::ack_idle(),
        }));
        Ok(())
    }

    /// Whether `r` is on another node (reached through the network side).
    #[inline]
    fn remote(&self, r: Rank) -> bool {
        self.node_of[r as usize] != self.node_of[self.rank as usize]
    }

    /// This rank's inbox toward `r`.
    fn inbox_for(&self, r: Rank) -> &Mem {
        match &self.net {
            Some(n) if self.remote(r) => &n.inbox,
            _ => &self.inbox,
        }
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
        let slots = size.saturating_add(dynamic::DYN_SLOTS);
        let len = layout::round_up(layout::inbox::len(slots), page);
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
            net: None,
            dyn_peers: Vec::new(),
            job_size: size,
            slots,
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

impl ChannelFabric {
    /// `send_eager`'s path through the queue (kept out of line, so the postbox path
    /// stays small): the send is queued and pumped; done when written whole.
    ///
    /// # Safety
    /// As `Fabric::send_eager`.
    #[inline(never)]
    unsafe fn send_eager_queued(
        &mut self,
        dest: Rank,
        env: Envelope,
        data: *const u8,
    ) -> Result<Option<SendId>, FabricError> {
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

    /// The channel to `dest` broke while a send wrote to it: the peer is lost.
    #[cold]
    fn lost_on_send(&mut self, dest: Rank, c: Corrupt) -> FabricError {
        let mut ev = std::mem::take(&mut self.pending);
        self.lose(dest, c.0.into(), &mut ev);
        self.pending = ev;
        FabricError::PeerLost {
            rank: dest,
            why: c.0.into(),
        }
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
        let (mut short, eager) = (self.cfg.short, self.cfg.eager);
        if self.remote(dest) {
            let Some(n) = &self.net else {
                return Err(FabricError::Other(format!(
                    "rank {dest} runs on node {} and this one on node {}: no network \
                     controller open (a fabric made without PMI is shm only)",
                    self.node_of[dest as usize], self.node_of[self.rank as usize]
                )));
            };
            short = n.short;
        }
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
            busy: None,
            flush: None,
        });
        tx.tx.push(id, env, src);
        if tx.tx.is_connected() {
            let r = tx.tx.pump(&mut self.pending);
            tx.note_busy();
            if let Err(c) = r {
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
        if let Some(
            ch @ TxChan {
                state: TxState::Up { .. },
                ..
            },
        ) = self
            .peers
            .get_mut(dest as usize)
            .and_then(|p| p.as_deref_mut())
            .and_then(|p| p.tx.as_mut())
        {
            // SAFETY: the caller promises `data` is readable for `env.len` bytes; it is
            // read only inside this call.
            let src = unsafe { SrcBuf::new(data, env.len) };
            match ch.tx.send_short_now(env, src) {
                Ok(true) => {
                    // Toward another node the postbox was staged: put it now.
                    ch.note_sent();
                    return Ok(None);
                }
                Ok(false) => {}
                Err(c) => return Err(self.lost_on_send(dest, c)),
            }
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { self.send_eager_queued(dest, env, data) }
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
        if let Some(n) = self.net.as_deref().filter(|_| self.remote(src)) {
            // A peer on another node writes this memory only through the network
            // controller, whose frames come in when this process polls it: a direct
            // receive (the engine's blocking receive, which runs the whole progress
            // only every 16 of these calls) would otherwise see a message up to a
            // progress cycle after its frame came (docs/mpi-net.md, session 25).
            n.inbox.poll_net();
        }
        // SAFETY: the caller promises `buf` is writable for `cap` bytes during the call.
        let dst = unsafe { DstBuf::new(buf, cap) };
        match self.rx_active[i].rx.recv_now(accept, dst) {
            Ok(r) => {
                if let Some(n) = self.net.as_deref_mut().filter(|_| r.is_some()) {
                    // A message taken: this rank is not idle (its staged acks wait).
                    n.idle_since = None;
                }
                Ok(r)
            }
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
        self.poll_all(events, None)
    }

    fn progress_claiming(
        &mut self,
        events: &mut Vec<Event>,
        claim: &mut dyn Claim,
    ) -> Result<bool, FabricError> {
        self.poll_all(events, Some(claim))
    }

    fn card(&self) -> Option<String> {
        Some(self.dyn_card())
    }

    fn add_peers(&mut self, peers: &[crate::p2p::fabric::NewPeer]) -> Result<Rank, FabricError> {
        self.dyn_add(peers)
    }

    fn retire(&mut self, r: Rank) {
        self.dyn_retire(r)
    }
}

/// The engine's posted receives as a receive channel's [`recv::Sink`].
struct ClaimSink<'a>(&'a mut dyn Claim);

impl recv::Sink for ClaimSink<'_> {
    #[inline]
    fn claim(&mut self, src: Rank, env: &Envelope) -> Option<DstBuf> {
        let (ptr, cap) = self.0.claim(src, env)?;
        // SAFETY: `Claim::claim` promises the buffer writable for `cap` bytes until
        // `claimed`, which the channel calls before it lets go of the `DstBuf`.
        Some(unsafe { DstBuf::new(ptr, cap) })
    }

    #[inline]
    fn claimed(&mut self, ok: bool) {
        self.0.claimed(ok);
    }
}

impl ChannelFabric {
    /// One progress call: `claim`, when given, is offered the new messages that are
    /// whole here ([`Fabric::progress_claiming`]).
    fn poll_all(
        &mut self,
        events: &mut Vec<Event>,
        claim: Option<&mut dyn Claim>,
    ) -> Result<bool, FabricError> {
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
        let mut changed = false;
        if let Some(n) = &self.net {
            n.inbox.poll_net();
            changed = connect::take_changed(&n.inbox);
        }
        if connect::take_changed(&self.inbox) || changed {
            moved = true;
            self.scan_inbox(events);
        }
        // The sink is a concrete type, so the channel's calls to it inline.
        let mut cs = claim.map(ClaimSink);
        let mut i = 0;
        while i < self.rx_active.len() {
            match self.rx_active[i].rx.poll_into(events, cs.as_mut()) {
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
            let r = tx.tx.pump(events);
            tx.note_busy();
            match r {
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
        if let Some(n) = self.net.as_deref_mut() {
            // Idle long enough: the acks staged for other nodes leave (after any reply
            // the program sent meanwhile; see `window`'s lazy windows).
            if moved {
                n.idle_since = None;
            } else {
                let now = std::time::Instant::now();
                let since = *n.idle_since.get_or_insert(now);
                if now.duration_since(since) >= n.ack_idle {
                    n.idle_since = None;
                    for c in &self.rx_active {
                        if let Some(f) = &c.acks {
                            f.flush();
                        }
                    }
                }
            }
        }
        self.polls = self.polls.wrapping_add(1);
        if self.polls % LIVENESS_EVERY == 0 {
            self.watch(events);
        }
        Ok(moved)
    }
}
