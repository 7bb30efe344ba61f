//! The RSM protocol engine, sans-IO: one [`Engine`] per node, both exporter and
//! importer. Frames and time in, frames, deadlines and events out.
//!
//! The driver (the IO crate's controllers, a test network, the simulator) passes time
//! in as nanoseconds and moves frames, as for the MX engine:
//!
//! * [`Engine::handle_frame`] — a frame arrived; the exporter's memory is passed in
//!   ([`Memory`]) so writes are applied and reads served right there;
//! * [`Engine::poll_transmit`] — the next frame to send, written into the driver's
//!   buffer, with its destination;
//! * [`Engine::poll_timeout`] / [`Engine::handle_timeout`] — delayed acks, resends,
//!   unreachable peers;
//! * [`Engine::poll_event`] — completions (connect, get, barrier), aborts, signals.
//!
//! `A` is the transport's notion of where a peer is (a socket address, a ring index, a
//! simulated host); the engine only stores it, hashes it and hands it back.
//!
//! **Protocol.** Every frame but the explicit ack is sequenced per peer through
//! [`myrix_mx_proto::reliability::Session`], the MX engine's reliability layer (one
//! number per frame, acks piggy-backed, early frames held, resends, a peer
//! unreachable after [`Config::timeout_ns`]), so frames from one node are applied in the
//! order they were queued, exactly once. That order gives the semantics:
//! * a **put** is cut into write frames of at most the MTU, pipelined up to
//!   [`Config::write_window`] unacknowledged bytes per peer;
//! * a **get** is pulled in read requests of [`Config::read_block`] bytes, at most
//!   [`Config::read_window`] bytes outstanding per peer; the exporter answers each with
//!   read replies cut to the MTU (sequenced too: a reply is read from memory when the
//!   request arrives, after every earlier write of that importer);
//! * a **flush** (a barrier's close) follows the writes before it, so its reply means
//!   they are applied; it carries whether any failed since the last flush;
//! * **signals** go both ways; the receiving engine attaches the sender's node from the
//!   connection;
//! * **unpublish** removes the segment's connections and sends each importer an abort;
//!   every later access on them is answered [`RsmError::ConnAborted`] and nothing
//!   written on them is applied.
//!
//! The exporter checks everything again (connection, permission, bounds against
//! [`Memory::len`] at the moment of the access): no frame makes it touch memory
//! outside a segment.
//!
//! Parts, by the state they own (quinn-proto's `connection/` is the model):
//! * `config` — [`Config`]; `types` — handles, [`Event`], [`Stats`]; `memory` — [`Memory`];
//! * `peers` — peers, sessions, what a peer's failure fails;
//! * `flow` — the per-peer queue of work not yet sequenced, windows, the data buffers;
//! * `frames` — frames out (built from sequenced items) and in (dispatch, order);
//! * `timers` — cached deadlines;
//! * `import` — the importer's calls and the answers they get; `direct` — a small put
//!   built straight into the send buffer when nothing waits ahead of it;
//! * `export` — the exporter's calls and the requests it serves.
//!
//! Must never read a clock, touch a socket or memory other than through [`Memory`], or
//! scan a whole table per frame.

mod config;
mod direct;
mod export;
mod flow;
mod frames;
mod import;
mod memory;
mod peers;
mod timers;
mod types;

use std::collections::VecDeque;
use std::hash::Hash;

pub use config::{Config, MAX_READ_BLOCK};
pub use memory::{check_range, Memory, NoMemory};
pub use peers::Silence;
pub use types::{Event, FlushId, GetId, Import, SignalTarget, Stats};

use crate::error::RsmError;
use crate::hash::FastMap;
use crate::types::{NodeId, SegmentId};
use export::{ExpConn, Export};
use flow::Bufs;
use frames::Tx;
use import::{Get, ImpConn};
use myrix_mx_proto::reliability::Params;
use peers::Peer;
use timers::Timers;

/// One node's RSM protocol state, exporter and importer; see the module docs.
pub struct Engine<A> {
    cfg: Config,
    rel: Params,
    node: NodeId,
    session: u32,
    peers: Vec<Peer<A>>,
    peer_of: FastMap<A, u32>,
    /// The peer the last frame came from, and its index: frames come in runs from one
    /// peer (a ping-pong, a bundle's frames, a stream), and each would otherwise cost a
    /// lookup in `peer_of`. Always right: `peer_of` never loses or changes an entry.
    last_from: Option<(A, u32)>,
    /// Nodes the driver vouches for by address ([`Engine::add_node`]).
    node_of: FastMap<A, NodeId>,
    imports: FastMap<u32, ImpConn>,
    gets: FastMap<u32, Get>,
    /// Flush token → import.
    flushes: FastMap<u32, u32>,
    exports: FastMap<SegmentId, Export>,
    exp_conns: FastMap<u32, ExpConn>,
    next_id: u32,
    bufs: Bufs,
    txq: VecDeque<Tx>,
    timers: Timers,
    events: VecDeque<Event<A>>,
    /// Signal events queued and not yet polled, per target (for no-accumulate).
    signals_pending: FastMap<SignalTarget, u32>,
    stats: Stats,
}

impl<A: Copy + Eq + Hash + std::fmt::Debug> Engine<A> {
    /// The engine of node `node`, presenting `session` to its peers: a number that
    /// grows each time the node's process starts (a peer that sees a larger one drops
    /// what it had with the old one; frames of a smaller one are dropped).
    pub fn new(cfg: Config, node: NodeId, session: u32) -> Engine<A> {
        let mut cfg = cfg;
        cfg.mtu = cfg.mtu.max(64);
        cfg.read_block = cfg.read_block.clamp(1, MAX_READ_BLOCK);
        // A frame more than `OLD` numbers from the expected one is dropped as old
        // (`frames`): legitimate ones are never that far.
        cfg.send_window = cfg.send_window.clamp(1, frames::MAX_WINDOW);
        cfg.early_window = cfg.early_window.clamp(1, frames::MAX_WINDOW);
        Engine {
            rel: cfg.reliability(),
            cfg,
            node,
            session,
            peers: Vec::new(),
            peer_of: FastMap::default(),
            last_from: None,
            node_of: FastMap::default(),
            imports: FastMap::default(),
            gets: FastMap::default(),
            flushes: FastMap::default(),
            exports: FastMap::default(),
            exp_conns: FastMap::default(),
            next_id: 1,
            bufs: Bufs::default(),
            txq: VecDeque::new(),
            timers: Timers::default(),
            events: VecDeque::new(),
            signals_pending: FastMap::default(),
            stats: Stats::default(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }
    pub fn node(&self) -> NodeId {
        self.node
    }
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The driver knows (from its node table) that the node at `addr` is `node`: a
    /// connect from `addr` claiming another node is refused with
    /// [`RsmError::PermDenied`]. Without an entry, the claim in the connect is taken.
    pub fn add_node(&mut self, addr: A, node: NodeId) {
        self.node_of.insert(addr, node);
    }

    /// The next completion, abort or signal.
    pub fn poll_event(&mut self) -> Option<Event<A>> {
        let e = self.events.pop_front()?;
        if let Event::Signal { target, .. } = &e {
            if let Some(n) = self.signals_pending.get_mut(target) {
                *n -= 1;
                if *n == 0 {
                    self.signals_pending.remove(target);
                }
            }
        }
        Some(e)
    }

    /// The driver holds a signal it polled for `target` until its application takes it:
    /// counted as pending, so a no-accumulate signal is not added while it waits. Pair
    /// with [`Engine::signal_taken`].
    pub fn signal_held(&mut self, target: SignalTarget) {
        *self.signals_pending.entry(target).or_insert(0) += 1;
    }

    /// The application took a signal the driver held ([`Engine::signal_held`]).
    pub fn signal_taken(&mut self, target: SignalTarget) {
        if let Some(n) = self.signals_pending.get_mut(&target) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.signals_pending.remove(&target);
            }
        }
    }

    /// Whether [`Engine::poll_transmit`] may have a frame to send now (conservative:
    /// an entry it would skip counts), so a driver that sent one datagram knows
    /// whether to ask again.
    pub fn has_transmit(&self) -> bool {
        !self.txq.is_empty()
    }

    /// Nothing waits to be sent, acknowledged or answered.
    pub fn idle(&self) -> bool {
        self.txq.is_empty()
            && self.gets.is_empty()
            && self.flushes.is_empty()
            && self
                .peers
                .iter()
                .all(|p| p.rel.idle() && p.waiting.is_empty() && p.answers.is_empty())
    }

    fn fresh_id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        id
    }

    /// Queues a signal event unless `no_accumulate` and one is pending for `target`.
    fn post_signal(&mut self, target: SignalTarget, from: NodeId, no_accumulate: bool) {
        let n = self.signals_pending.entry(target).or_insert(0);
        if no_accumulate && *n > 0 {
            self.stats.signals_dropped += 1;
            return;
        }
        *n += 1;
        self.events.push_back(Event::Signal { target, from });
    }
}

/// A status field as a result: 0 is success; an unknown number is a failure.
fn status_result(status: u32) -> Result<(), RsmError> {
    if status == 0 {
        Ok(())
    } else {
        Err(i32::try_from(status)
            .ok()
            .and_then(RsmError::from_code)
            .unwrap_or(RsmError::BarrierFailure))
    }
}

fn status_of(r: Result<(), RsmError>) -> u32 {
    match r {
        Ok(()) => 0,
        Err(e) => e.code() as u32,
    }
}
