//! [`ChannelFabric`]: MPI's message transport over RSM segments, after Sun MPI's RSM
//! protocol (seed 004 §3): per sender S and host H, one area on H written only by S,
//! with a queue of 64-byte postboxes per rank of H and one buffer pool S alone
//! allocates from ([`pool`]); acknowledgements and matches in an ack segment per
//! connection S→R in S's memory, written only by R. Connections are half duplex and
//! made at the first send ([`connect`]); a rank that never talks to a peer builds
//! nothing for it, and maps nothing of its area.
//!
//! On shared memory (H is S's own host) S exports its area itself, at its first send
//! to a rank of the host, and names it in each request; each receiver maps it at its
//! first message from S. No agent and no first receiver is needed: the memory is on H
//! either way, and its life is S's (a receiver exiting cuts nobody off). Toward another
//! node or another job's process the area is still per connection, exported by R (one
//! queue, its own pool): sharing it there needs each receiver of H to export the same
//! memory through its own network endpoint, not built (docs/mpi-p2p.md).
//!
//! * [`config`] — tunables (`MYRIX_MPI_*`), bounded.
//! * [`layout`] — every offset of the inbox, the channel area, the ack segment.
//! * [`window`] — the memory views (shm mappings, exports, test memory); the only
//!   `unsafe`, plus the two trait entry points that receive raw buffers.
//! * [`connect`] — the inbox handshake slots; `peers` — making and losing connections.
//!   [`directory`] — business cards. [`net`] — ranks on other nodes (RSM `udp`).
//! * [`send`], [`recv`] — the per-channel state machines.
//! * `traffic` — the per-message path over them: the [`Fabric`] implementation and
//!   one progress call (`poll_all`). This file keeps the structure and its opening.
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
//! * Memory (defaults, shm, 4 KiB pages): per sender that sends on the host, one area
//!   of 4 KiB of queue per rank of the host + 256 KiB pool (touched only as used);
//!   per connection an ack segment 4 KiB (S) and about 0.6 KiB of heap on each side;
//!   8 bytes per rank of the job and 64 bytes of inbox per rank before any connection.
//!   Toward another node: an area of 4 KiB + 256 KiB per connection.
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
mod hostnet;
pub mod layout;
pub mod net;
mod peers;
pub mod pool;
pub mod recv;
pub mod send;
mod traffic;
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
    /// Request written; the ack segment waits in `ack`; `shared`: the request named
    /// this rank's area for the host, at this queue.
    Requested {
        ack: Mem,
        shared: Option<send::Place>,
        /// Toward another node, with `shared`: the area of the receiver's host the
        /// request named (None: it asked the receiver to make one).
        joined: Option<Arc<RemoteArea>>,
    },
    /// The area imported (None: this rank's own shared area).
    Up { area: Option<Arc<Import>> },
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
    /// Toward another node, a sender's shared area exported on this rank's network
    /// controller over the memory `rx` maps: first, so it goes before that memory.
    net_export: Option<myrix_rsm::Export>,
    src: Rank,
    rx: Rx,
    ack: Arc<Import>,
    /// The sender's shared area, when it is one (mapped here).
    area: Option<Arc<Import>>,
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
    /// This rank's area for its own host (seed §3.1: one queue per rank of the host,
    /// one pool), made at the first send to one of them.
    host_area: Option<HostArea>,
    /// This rank's areas on other nodes, by node (`node_of`): one per destination
    /// host (seed §3.1), made by the first receiver there ([`peers`]).
    remote_areas: Vec<(u32, RemoteHost)>,
}

/// This rank's area on another node, made by the first receiver it reached there
/// (an RSM shm segment of that host, mapped and exported on the network by each
/// receiver that joins it).
#[derive(Debug)]
struct RemoteArea {
    /// The shm segment on that host the next receiver joins.
    shm: SegmentId,
    pool: Arc<pool::Pool>,
}

#[derive(Debug)]
enum RemoteHost {
    /// The request that makes it went to this rank: other ranks of the host wait.
    Pending(Rank),
    Ready(Arc<RemoteArea>),
}

/// A sender's area on shared memory for the ranks of its host: exported by the sender
/// (the host is its own), mapped by each receiver at its first message from it.
#[derive(Debug)]
struct HostArea {
    mem: Mem,
    id: SegmentId,
    pool: Arc<pool::Pool>,
    g: Geometry,
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
            host_area: None,
            remote_areas: Vec::new(),
        })
    }

    /// The channel areas this rank writes into and the pools it allocates from (each
    /// counted once): its shared area for its host, one per host of another node it
    /// sends to (seed §3.1), and one per connection toward other jobs. An area has
    /// one pool, so they differ only while an area waits for its first link.
    pub fn areas_written(&self) -> (usize, usize) {
        let mut pools: Vec<*const pool::Pool> = Vec::new();
        for p in self.peers.iter().flatten() {
            if let Some(u) = p.tx.as_ref().and_then(|t| t.tx.pool()) {
                if !pools.contains(&Arc::as_ptr(&u)) {
                    pools.push(Arc::as_ptr(&u));
                }
            }
        }
        let waiting = self
            .host_area
            .as_ref()
            .is_some_and(|h| !pools.contains(&Arc::as_ptr(&h.pool)));
        (pools.len() + usize::from(waiting), pools.len())
    }

    /// The units of this rank's shared pool in use (None before it exists).
    pub fn host_pool_held(&self) -> Option<u64> {
        self.host_area.as_ref().map(|h| h.pool.held())
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
