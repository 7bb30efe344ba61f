//! The channel's state machines (`send::Tx`, `recv::Rx`) between nodes whose segments
//! live behind `rsm-proto` engines on a lossy in-memory network ([`wire`]): what the
//! channel does between namespaces, in one thread, deterministic from one seed, time
//! passed in.
//!
//! Per ordered pair of nodes S→R, as `channel::peers` builds it between nodes: R
//! exports the channel area (its `Rx` reads it as local memory), S exports the ack
//! segment (its `Tx` reads it); S writes the area through a batch window
//! (`Mem::net_over`, batch) on its engine's import, R writes the acks through a lazy
//! window, and S's batch window toward R carries the acks S owes R. Each node acts
//! every few simulated microseconds as `ChannelFabric::poll_all` does: it starts sends
//! (queued, or written at once by `Tx::send_short_now`), pumps every `Tx` and puts what
//! the pump staged, polls every `Rx` (now and then offering messages to posted
//! receives, `Rx::poll_into`, or taking one directly, `Rx::recv_now`), takes announced
//! messages in random order (a tenth into a buffer too short), and puts its staged acks
//! once its progress found nothing to do for a while. Between any two pieces of a write
//! the engine applies, the receiving node's `Rx`s may poll ([`wire::Segs`]).
//!
//! [`run`] checks every byte, the envelopes, the order of messages per pair (the k-th
//! message announced or claimed is the k-th sent), one completion per send, a sync
//! send's match only after its take, that no `Rx` reports a corrupt channel, that no
//! engine reports anything but its barriers' success, that the channel never reads a
//! remote segment, and at the end that every queue and pool is empty again (every
//! postbox acknowledged, no block held). It returns the first violation as an error
//! naming the seed.

pub mod wire;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use myrix_mpi::channel::layout::{ack, area};
use myrix_mpi::channel::recv::{Rx, Sink, Taken};
use myrix_mpi::channel::send::{Geometry, Link, Tx};
use myrix_mpi::channel::window::{DstBuf, Mem, NetFlush, SrcBuf};
use myrix_mpi::channel::Corrupt;
use myrix_mpi::p2p::fabric::{Envelope, Event, SendId};
use myrix_rsm_proto::engine::{Config, Engine, Event as RsmEvent, FlushId, Import};
use myrix_rsm_proto::{Acl, Credentials, NodeId, Perm, SegmentId};
use myrix_wire::rsm::WRITE_HEAD;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wire::{lock, EngineRef, EngineSeg, Order, Segs, Shared, Wire, WireConfig};

const USER: Credentials = Credentials { uid: 1, gid: 1 };

/// One run's shape.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub nodes: usize,
    pub g: Geometry,
    /// The short and eager limits of every sender.
    pub short: usize,
    pub eager: usize,
    /// Messages each node sends each other node.
    pub msgs: usize,
    /// The largest rendezvous message.
    pub rdv_max: usize,
    /// Share of sends that are synchronous.
    pub sync: f64,
    pub wire: WireConfig,
    pub engine: Config,
    pub order: Order,
    /// Chance that a node's receivers poll between two pieces of a write.
    pub poll_between: f64,
    /// How long a node's progress finds nothing to do before its staged acks leave.
    pub ack_idle_ns: u64,
    /// A node acts again within this long.
    pub act_ns: u64,
    /// Simulated time after which an unfinished run is a hang.
    pub limit_ns: u64,
    /// The segments do not tell the window their write size (as an import that
    /// under-reports would): a flag-led run may then be cut across two frames.
    pub hide_one_write: bool,
}

/// What a run did (for the log and for the tests' coverage checks).
#[derive(Debug, Default)]
pub struct Report {
    pub sim_us: u64,
    pub messages: usize,
    pub bytes: usize,
    pub frames: u64,
    pub lost: u64,
    pub duplicated: u64,
    pub resends: u64,
    pub pieces: u64,
    pub split_writes: u64,
    /// Channels whose queue / pool went round at least once.
    pub queue_wraps: usize,
    pub pool_wraps: usize,
    pub sent_now: usize,
    pub claimed: usize,
    pub direct: usize,
    pub truncated: usize,
    pub between_polls: u64,
    pub barriers: u64,
}

struct Msg {
    env: Envelope,
    data: Vec<u8>,
}

/// One ordered pair's messages and what has become of them.
struct Pair {
    msgs: Vec<Msg>,
    /// Sends started, and the next message expected to arrive.
    started: usize,
    next_arrival: u64,
    done: Vec<bool>,
    matched: Vec<bool>,
    taken: Vec<bool>,
    received: Vec<bool>,
    /// Announced, not taken; taken, data still coming.
    arrived: Vec<u64>,
    bufs: HashMap<u64, Vec<u8>>,
}

struct TxEnd {
    dst: usize,
    tx: Tx,
    flush: NetFlush,
}

struct RxEnd {
    src: usize,
    rx: Rx,
    acks: NetFlush,
}

struct Node {
    tx: Vec<TxEnd>,
    rx: Vec<RxEnd>,
    idle_since: Option<u64>,
    next_act: u64,
}

/// Posted receives as `Rx::poll_into` sees them: half the messages offered are
/// claimed, each into a buffer of its own (the tag names the message: `tag + 5`).
struct Claims<'a> {
    rng: &'a mut ChaCha8Rng,
    cur: Option<(u64, Vec<u8>)>,
    done: Vec<(u64, Vec<u8>)>,
}

impl Sink for Claims<'_> {
    fn claim(&mut self, _src: u32, env: &Envelope) -> Option<DstBuf> {
        if self.cur.is_some() || !self.rng.gen_bool(0.5) {
            return None;
        }
        let mut buf = vec![0u8; env.len];
        // SAFETY: (test) the buffer's heap memory moves with it into `cur`, then
        // `done`, and lives until checked.
        let dst = unsafe { DstBuf::new(buf.as_mut_ptr(), buf.len()) };
        self.cur = Some(((env.tag + 5) as u64, buf));
        Some(dst)
    }

    fn claimed(&mut self, ok: bool) {
        if let Some(c) = self.cur.take().filter(|_| ok) {
            self.done.push(c);
        }
    }
}

struct World {
    sc: Scenario,
    seed: u64,
    now: u64,
    rng: ChaCha8Rng,
    engines: Vec<Shared>,
    segs: Vec<Segs>,
    wire: Wire,
    nodes: Vec<Node>,
    /// `pairs[s][d]`, S→D.
    pairs: Vec<Vec<Option<Pair>>>,
    flushes: Vec<Arc<Mutex<Vec<FlushId>>>>,
    gets: Arc<AtomicU64>,
    rep: Report,
}

fn messages(rng: &mut ChaCha8Rng, sc: &Scenario) -> Vec<Msg> {
    (0..sc.msgs)
        .map(|i| {
            let len = match rng.gen_range(0..4) {
                0 => rng.gen_range(0..=sc.short),
                1 => rng.gen_range(sc.short..=sc.eager),
                2 => rng.gen_range(sc.eager..=sc.rdv_max),
                _ => rng.gen_range(0..=sc.short.min(100)),
            };
            Msg {
                env: Envelope {
                    ctx: rng.gen_range(0..3),
                    tag: i as i32 - 5,
                    len,
                    sync: rng.gen_bool(sc.sync),
                },
                data: (0..len).map(|_| rng.gen()).collect(),
            }
        })
        .collect()
}

/// Runs `sc` with `seed`: the first violation (module docs) as an error.
pub fn run(sc: &Scenario, seed: u64) -> Result<Report, String> {
    let mut w = World::new(sc.clone(), seed)?;
    w.connect()?;
    w.main_loop()?;
    w.finish()
}

impl World {
    fn new(sc: Scenario, seed: u64) -> Result<World, String> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = sc.nodes;
        let engines: Vec<Shared> = (0..n)
            .map(|i| {
                Arc::new(Mutex::new(Engine::new(
                    sc.engine.clone(),
                    NodeId(i as u32),
                    1,
                )))
            })
            .collect();
        let segs = (0..n)
            .map(|i| Segs::new(seed ^ (0x5e65 + i as u64), sc.order))
            .collect();
        let mut pairs: Vec<Vec<Option<Pair>>> = Vec::new();
        for s in 0..n {
            pairs.push(
                (0..n)
                    .map(|d| {
                        (s != d).then(|| {
                            let msgs = messages(&mut rng, &sc);
                            let k = msgs.len();
                            Pair {
                                msgs,
                                started: 0,
                                next_arrival: 0,
                                done: vec![false; k],
                                matched: vec![false; k],
                                taken: vec![false; k],
                                received: vec![false; k],
                                arrived: Vec::new(),
                                bufs: HashMap::new(),
                            }
                        })
                    })
                    .collect(),
            );
        }
        Ok(World {
            wire: Wire::new(sc.wire, seed ^ 0x91e, sc.engine.mtu),
            sc,
            seed,
            now: 1,
            rng,
            engines,
            segs,
            nodes: (0..n)
                .map(|_| Node {
                    tx: Vec::new(),
                    rx: Vec::new(),
                    idle_since: None,
                    next_act: 1,
                })
                .collect(),
            pairs,
            flushes: (0..n).map(|_| Arc::default()).collect(),
            gets: Arc::default(),
            rep: Report::default(),
        })
    }

    fn fail(&self, what: impl std::fmt::Display) -> String {
        format!("seed {}: at {} µs: {what}", self.seed, self.now / 1000)
    }

    /// The segments of every pair, exported and imported over the lossy wire, and the
    /// two state machines on their windows.
    fn connect(&mut self) -> Result<(), String> {
        let (n, g) = (self.sc.nodes, self.sc.g);
        let area_len = area::len(g.queue, g.pool_bytes());
        let ack_len = ack::len(g.queue);
        // (s, d) → (area import on s, ack import on d), and the local halves.
        let mut conns: Vec<(usize, usize, Import, Import, Mem, Mem)> = Vec::new();
        for s in 0..n {
            for d in (0..n).filter(|&d| d != s) {
                let k = (s * 16 + d) as u32 * 2;
                let (a_id, k_id) = (
                    SegmentId(SegmentId::USER_BASE | k),
                    SegmentId(SegmentId::USER_BASE | (k + 1)),
                );
                let (area_r, area_e) = Mem::heap(area_len);
                let (ack_s, ack_e) = Mem::heap(ack_len);
                self.segs[d].bind(a_id, area_e);
                self.segs[s].bind(k_id, ack_e);
                let open = Acl::Open(Perm(0o666));
                lock(&self.engines[d])
                    .publish(a_id, open.clone(), USER)
                    .unwrap();
                lock(&self.engines[s]).publish(k_id, open, USER).unwrap();
                let ai = lock(&self.engines[s])
                    .connect(d, NodeId(d as u32), a_id, Perm::RDWR, USER)
                    .unwrap();
                let ki = lock(&self.engines[d])
                    .connect(s, NodeId(s as u32), k_id, Perm::RDWR, USER)
                    .unwrap();
                conns.push((s, d, ai, ki, area_r, ack_s));
            }
        }
        // Every connect answered, over the same faults.
        let mut want = 2 * conns.len();
        let end = self.now + 1_000_000_000;
        while want > 0 {
            self.wire.collect(self.now, &self.engines);
            for e in &self.engines {
                while let Some(ev) = lock(e).poll_event() {
                    match ev {
                        RsmEvent::Connected { result: Ok(_), .. } => want -= 1,
                        other => return Err(self.fail(format!("connecting: {other:?}"))),
                    }
                }
            }
            if want > 0 && !self.advance_network(end)? {
                return Err(self.fail("the connects never finished"));
            }
        }
        let mut acks_owed: HashMap<(usize, usize), NetFlush> = HashMap::new();
        for (s, d, ai, ki, area_r, ack_s) in conns {
            let seg = |node: usize, imp: Import, len: usize| -> Arc<EngineSeg> {
                Arc::new(EngineSeg {
                    engine: EngineRef(self.engines[node].clone()),
                    imp,
                    len,
                    flushes: self.flushes[node].clone(),
                    gets: self.gets.clone(),
                    one_write: (!self.sc.hide_one_write).then(|| self.sc.engine.mtu - WRITE_HEAD),
                })
            };
            let area_w = Mem::net_over(seg(s, ai, area_r.len()), false, true);
            let acks_w = Mem::net_over(seg(d, ki, ack_s.len()), true, false);
            let flush = area_w.net_flush().expect("a network window");
            let acks = acks_w.net_flush().expect("a network window");
            acks_owed.insert((d, s), acks.clone());
            let mut tx = Tx::new(self.sc.short, self.sc.eager);
            tx.connect(Link::new(g, area_w, ack_s).map_err(|c| self.fail(c.0))?);
            let rx = Rx::new(s as u32, g, area_r, acks_w).map_err(|c| self.fail(c.0))?;
            self.nodes[s].tx.push(TxEnd { dst: d, tx, flush });
            self.nodes[d].rx.push(RxEnd { src: s, rx, acks });
        }
        // S's postboxes toward D carry the acks S owes D.
        for (s, node) in self.nodes.iter().enumerate() {
            for t in &node.tx {
                t.flush.carry_acks(&acks_owed[&(s, t.dst)]);
            }
        }
        Ok(())
    }

    /// Moves time to the next frame or timer and handles it (a frame's writes stored
    /// piece by piece, the receivers polling between pieces). False when nothing is
    /// due before `until`.
    fn advance_network(&mut self, until: u64) -> Result<bool, String> {
        let timer = self
            .engines
            .iter()
            .filter_map(|e| lock(e).poll_timeout())
            .min();
        let t = match (self.wire.next_at(), timer) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(t) => t,
                None => return Ok(false),
            },
        };
        if t > until {
            return Ok(false);
        }
        self.now = self.now.max(t);
        if let Some((dst, src, frame)) = self.wire.take_due(self.now) {
            lock(&self.engines[dst]).handle_frame(self.now, &src, &frame, &mut self.segs[dst]);
            while self.segs[dst].apply_next() {
                if self.rng.gen_bool(self.sc.poll_between) {
                    self.rep.between_polls += 1;
                    self.poll_rx(dst, false)?;
                }
            }
        }
        for e in &self.engines {
            let mut e = lock(e);
            if e.poll_timeout().is_some_and(|d| d <= self.now) {
                e.handle_timeout(self.now);
            }
        }
        Ok(true)
    }

    /// The engines' events: only their barriers' success is expected.
    fn engine_events(&mut self) -> Result<(), String> {
        for (i, e) in self.engines.iter().enumerate() {
            while let Some(ev) = lock(e).poll_event() {
                let RsmEvent::BarrierDone { flush, result, .. } = ev else {
                    return Err(self.fail(format!("engine {i}: {ev:?}")));
                };
                let mut f = self.flushes[i].lock().unwrap();
                let Some(k) = f.iter().position(|x| *x == flush) else {
                    return Err(self.fail(format!("engine {i}: an unknown barrier")));
                };
                f.swap_remove(k);
                if let Err(e) = result {
                    return Err(self.fail(format!("engine {i}: a barrier failed: {e}")));
                }
                self.rep.barriers += 1;
            }
        }
        Ok(())
    }

    fn main_loop(&mut self) -> Result<(), String> {
        let limit = self.now + self.sc.limit_ns;
        loop {
            self.wire.collect(self.now, &self.engines);
            self.engine_events()?;
            if self.settled()? {
                return Ok(());
            }
            if self.now > limit {
                return Err(self.fail(format!("a hang: {}", self.progress())));
            }
            let act = self
                .nodes
                .iter()
                .map(|n| n.next_act)
                .min()
                .unwrap_or(u64::MAX);
            if act <= self.now || !self.advance_network(act)? {
                self.now = self.now.max(act);
                for i in 0..self.nodes.len() {
                    if self.nodes[i].next_act <= self.now {
                        self.act(i)?;
                        self.nodes[i].next_act = self.now + self.rng.gen_range(1..=self.sc.act_ns);
                    }
                }
            }
        }
    }

    fn pairs_of(&self) -> impl Iterator<Item = &Pair> {
        self.pairs.iter().flatten().flatten()
    }

    fn progress(&self) -> String {
        let p: Vec<String> = self
            .pairs_of()
            .map(|p| {
                format!(
                    "{}/{} started, {} done, {} received",
                    p.started,
                    p.msgs.len(),
                    p.done.iter().filter(|&&d| d).count(),
                    p.received.iter().filter(|&&r| r).count()
                )
            })
            .collect();
        format!("{p:?}; {} frames", self.wire.sent)
    }

    /// Every message delivered and every send done; then every queue and pool empty,
    /// the engines idle and their barriers answered.
    fn settled(&mut self) -> Result<bool, String> {
        let all = self.pairs_of().all(|p| {
            p.started == p.msgs.len() && p.done.iter().all(|&d| d) && p.received.iter().all(|&r| r)
        });
        if !all {
            return Ok(false);
        }
        for n in &mut self.nodes {
            for t in &mut n.tx {
                if t.tx.busy()
                    || t.tx
                        .usage()
                        .is_some_and(|u| u.postboxes_held + u.units_held > 0)
                {
                    return Ok(false);
                }
            }
        }
        Ok(self.wire.is_empty()
            && self.engines.iter().all(|e| lock(e).idle())
            && self.flushes.iter().all(|f| f.lock().unwrap().is_empty()))
    }

    fn corrupt(&self, who: &str, c: Corrupt) -> String {
        self.fail(format!("{who}: the channel is corrupt: {}", c.0))
    }

    /// One act of node `i`: the program's sends and takes, and a progress call.
    fn act(&mut self, i: usize) -> Result<(), String> {
        let mut moved = false;
        for k in 0..self.nodes[i].tx.len() {
            moved |= self.send_side(i, k)?;
        }
        moved |= self.poll_rx(i, true)?;
        let node = &mut self.nodes[i];
        if moved {
            node.idle_since = None;
        } else {
            let since = *node.idle_since.get_or_insert(self.now);
            if self.now - since >= self.sc.ack_idle_ns {
                node.idle_since = None;
                for r in &node.rx {
                    r.acks.flush();
                }
            }
        }
        Ok(())
    }

    /// Starts some sends toward `tx[k]`'s destination, pumps, puts what is staged.
    fn send_side(&mut self, i: usize, k: usize) -> Result<bool, String> {
        let d = self.nodes[i].tx[k].dst;
        let mut ev = Vec::new();
        while self.rng.gen_bool(0.4) {
            let p = self.pairs[i][d].as_mut().expect("a pair");
            if p.started == p.msgs.len() {
                break;
            }
            let j = p.started;
            p.started += 1;
            let m = &p.msgs[j];
            let env = m.env;
            // SAFETY: (test) the messages outlive the machines and never move.
            let src = unsafe { SrcBuf::new(m.data.as_ptr(), m.data.len()) };
            let t = &mut self.nodes[i].tx[k];
            if self.rng.gen_bool(0.5) {
                // As the fabric does: a pump first, so the queue is often empty.
                let r = t.tx.pump(&mut ev);
                t.flush.flush();
                r.map_err(|c| self.corrupt("a pump", c))?;
            }
            let t = &mut self.nodes[i].tx[k];
            let now = self.rng.gen_bool(0.7);
            let written = if now {
                let r = t.tx.send_short_now(env, src);
                r.map_err(|c| self.corrupt("a send", c))?
            } else {
                false
            };
            let t = &mut self.nodes[i].tx[k];
            if written {
                t.flush.flush();
                self.rep.sent_now += 1;
                self.pairs[i][d].as_mut().expect("a pair").done[j] = true;
            } else {
                t.tx.push(SendId(j as u64), env, src);
            }
        }
        let t = &mut self.nodes[i].tx[k];
        let r = t.tx.pump(&mut ev);
        t.flush.flush();
        let moved = r.map_err(|c| self.corrupt("a pump", c))?;
        self.sender_events(i, d, ev)?;
        Ok(moved)
    }

    fn sender_events(&mut self, s: usize, d: usize, ev: Vec<Event>) -> Result<(), String> {
        for e in ev {
            let p = self.pairs[s][d].as_mut().expect("a pair");
            match e {
                Event::SendDone { send } if !p.done[send.0 as usize] => {
                    p.done[send.0 as usize] = true;
                }
                Event::SyncMatched { send } => {
                    let j = send.0 as usize;
                    if !(p.msgs[j].env.sync && p.taken[j] && !p.matched[j]) {
                        return Err(self.fail(format!("{s}→{d}: a wrong match of {j}")));
                    }
                    p.matched[j] = true;
                }
                other => return Err(self.fail(format!("{s}→{d}: sender's {other:?}"))),
            }
        }
        Ok(())
    }

    /// Polls every receiver of node `i` (`sink`: offering whole messages to posted
    /// receives, or taking one directly, now and then). Returns whether any moved.
    fn poll_rx(&mut self, i: usize, sink: bool) -> Result<bool, String> {
        let mut moved = false;
        for k in 0..self.nodes[i].rx.len() {
            let mut ev = Vec::new();
            let s = self.nodes[i].rx[k].src;
            if sink && self.rng.gen_bool(0.1) {
                self.recv_now(i, k)?;
            }
            let mut rng = ChaCha8Rng::seed_from_u64(self.rng.gen());
            let mut claims = Claims {
                rng: &mut rng,
                cur: None,
                done: Vec::new(),
            };
            let offer = sink && self.rng.gen_bool(0.5);
            let rx = &mut self.nodes[i].rx[k].rx;
            let r = if offer {
                rx.poll_into(&mut ev, Some(&mut claims))
            } else {
                rx.poll(&mut ev)
            };
            moved |= r.map_err(|c| self.corrupt(&format!("{s}→{i}'s poll"), c))?;
            for (j, buf) in std::mem::take(&mut claims.done) {
                self.rep.claimed += 1;
                self.arrives(s, i, j, None)?;
                self.check(s, i, j, &buf)?;
            }
            for e in ev {
                match e {
                    Event::Arrived { token, env } if token.src == s as u32 => {
                        self.arrives(s, i, token.seq, Some(env))?;
                    }
                    Event::Received { token } if token.src == s as u32 => {
                        let p = self.pairs[s][i].as_mut().expect("a pair");
                        let Some(buf) = p.bufs.remove(&token.seq) else {
                            return Err(self.fail(format!("{s}→{i}: {} not taken", token.seq)));
                        };
                        self.check(s, i, token.seq, &buf)?;
                    }
                    other => return Err(self.fail(format!("{s}→{i}: receiver's {other:?}"))),
                }
            }
            // A receive posted meanwhile takes what was announced (an eager message
            // is then copied as its postboxes land).
            self.take_some(i, k)?;
        }
        Ok(moved)
    }

    /// Message `j` of S→D arrives (announced with `env`, or claimed or taken directly
    /// when `env` is None): it must be the next one.
    fn arrives(&mut self, s: usize, d: usize, j: u64, env: Option<Envelope>) -> Result<(), String> {
        let p = self.pairs[s][d].as_mut().expect("a pair");
        let want = p.next_arrival;
        if j != want || j as usize >= p.msgs.len() {
            return Err(self.fail(format!("{s}→{d}: message {j} arrived, {want} expected")));
        }
        p.next_arrival += 1;
        match env {
            Some(env) if env != p.msgs[j as usize].env => {
                Err(self.fail(format!("{s}→{d}: message {j}'s envelope {env:?}")))
            }
            Some(_) => {
                p.arrived.push(j);
                Ok(())
            }
            None => {
                p.taken[j as usize] = true;
                Ok(())
            }
        }
    }

    /// `buf` holds message `j` of S→D (as much of it as fits).
    fn check(&mut self, s: usize, d: usize, j: u64, buf: &[u8]) -> Result<(), String> {
        let p = self.pairs[s][d].as_mut().expect("a pair");
        let m = &p.msgs[j as usize];
        let n = m.data.len().min(buf.len());
        if buf[..n] != m.data[..n] {
            let at = (0..n).find(|&x| buf[x] != m.data[x]).unwrap_or(0);
            let len = m.data.len();
            return Err(self.fail(format!(
                "{s}→{d}: message {j} ({len} bytes) differs from byte {at}"
            )));
        }
        if p.received[j as usize] {
            return Err(self.fail(format!("{s}→{d}: message {j} received twice")));
        }
        p.received[j as usize] = true;
        Ok(())
    }

    /// The receive of the next message straight from the head postbox, if it is whole
    /// there (`Rx::recv_now`).
    fn recv_now(&mut self, i: usize, k: usize) -> Result<(), String> {
        let s = self.nodes[i].rx[k].src;
        let mut buf = vec![0u8; self.sc.eager];
        // SAFETY: (test) `buf` outlives the call.
        let dst = unsafe { DstBuf::new(buf.as_mut_ptr(), buf.len()) };
        let cap = buf.len();
        let got = self.nodes[i].rx[k]
            .rx
            .recv_now(&mut |env| env.len <= cap, dst)
            .map_err(|c| self.corrupt(&format!("{s}→{i}'s direct receive"), c))?;
        if let Some(env) = got {
            let j = (env.tag + 5) as u64;
            self.arrives(s, i, j, None)?;
            let p = self.pairs[s][i].as_ref().expect("a pair");
            if env != p.msgs[j as usize].env {
                return Err(self.fail(format!("{s}→{i}: direct {j}'s envelope {env:?}")));
            }
            self.rep.direct += 1;
            self.check(s, i, j, &buf[..env.len])?;
        }
        Ok(())
    }

    /// The program takes an announced message of `rx[k]`, half the time.
    fn take_some(&mut self, i: usize, k: usize) -> Result<(), String> {
        let s = self.nodes[i].rx[k].src;
        let p = self.pairs[s][i].as_mut().expect("a pair");
        if p.arrived.is_empty() || !self.rng.gen_bool(0.5) {
            return Ok(());
        }
        let j = p
            .arrived
            .swap_remove(self.rng.gen_range(0..p.arrived.len()));
        let len = p.msgs[j as usize].env.len;
        let short = self.rng.gen_bool(0.1);
        let mut buf = vec![0u8; if short { len / 2 } else { len }];
        self.rep.truncated += usize::from(short);
        // SAFETY: (test) the buffer's heap memory stays put in `bufs` until checked.
        let dst = unsafe { DstBuf::new(buf.as_mut_ptr(), buf.len()) };
        p.taken[j as usize] = true;
        let r = self.nodes[i].rx[k].rx.take(j, dst);
        match r.map_err(|c| self.corrupt(&format!("{s}→{i}'s take"), c))? {
            Taken::Done => self.check(s, i, j, &buf),
            Taken::Later => {
                self.pairs[s][i]
                    .as_mut()
                    .expect("a pair")
                    .bufs
                    .insert(j, buf);
                Ok(())
            }
            Taken::Unknown => Err(self.fail(format!("{s}→{i}: the take of {j} unknown"))),
        }
    }

    /// The last checks, once settled.
    fn finish(mut self) -> Result<Report, String> {
        for p in self.pairs_of() {
            for (j, m) in p.msgs.iter().enumerate() {
                if p.matched[j] != m.env.sync {
                    return Err(self.fail(format!("message {j}: sync {}", m.env.sync)));
                }
            }
        }
        let g = self.sc.g;
        for n in &mut self.nodes {
            for t in &mut n.tx {
                let u = t.tx.usage().expect("connected");
                self.rep.queue_wraps += usize::from(u.postboxes > g.queue as u64);
                self.rep.pool_wraps += usize::from(u.units > g.pool_units as u64);
                if !t.tx.abandon().is_empty() {
                    return Err("a sender still had sends".into());
                }
            }
            for r in &mut n.rx {
                if !r.rx.abandon().is_empty() {
                    return Err("a receiver still had messages".into());
                }
            }
        }
        if self.gets.load(Ordering::Relaxed) != 0 {
            return Err(self.fail("the channel read a remote segment"));
        }
        let mut rep = std::mem::take(&mut self.rep);
        rep.sim_us = self.now / 1000;
        rep.messages = self.pairs_of().map(|p| p.msgs.len()).sum();
        rep.bytes = self
            .pairs_of()
            .flat_map(|p| &p.msgs)
            .map(|m| m.data.len())
            .sum();
        rep.frames = self.wire.sent;
        rep.lost = self.wire.lost;
        rep.duplicated = self.wire.duplicated;
        rep.resends = self.engines.iter().map(|e| lock(e).stats().resends).sum();
        rep.pieces = self.segs.iter().map(|s| s.pieces).sum();
        rep.split_writes = self.segs.iter().map(|s| s.split).sum();
        Ok(rep)
    }
}
