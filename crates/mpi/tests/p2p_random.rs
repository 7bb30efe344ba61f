//! Randomized: N = 2..6 engines over the loop network, random sends (every mode,
//! sizes across eager and rendezvous), receives (named and ANY source/tag, short
//! buffers), probes, matched probes, cancels and tests, checked against a reference
//! model of MPI matching fed with the very arrival order the engines saw (a recording
//! fabric wraps each rank's): which message each receive must get, its status, and
//! every byte.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use myrix_mpi::p2p::fabric::{Envelope, Event, Fabric, FabricError, MsgToken, Rank, SendId};
use myrix_mpi::p2p::loopnet::{LoopConfig, LoopFabric, LoopNet};
use myrix_mpi::p2p::{Engine, MsgHandle, P2pError, ReqId, SendMode, Status};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Copy, Debug)]
struct MsgInfo {
    src: Rank,
    dest: Rank,
    ctx: u32,
    tag: i32,
    len: usize,
    sync: bool,
}

/// A posted receive in the model: (rid, source, context, tag).
type PostedRecv = (usize, Option<Rank>, u32, Option<i32>);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Outcome {
    Msg(usize),
    Cancelled,
}

#[derive(Default)]
struct Model {
    msgs: Vec<MsgInfo>,
    /// (src, dest) → message ids in send order (index = the fabric's seq).
    chans: HashMap<(Rank, Rank), Vec<usize>>,
    announced: HashMap<(Rank, Rank), u64>,
    /// Per rank: posted receives (rid, src, ctx, tag) in posting order.
    posted: Vec<Vec<PostedRecv>>,
    /// Per rank: arrived, unmatched messages in arrival order.
    unexpected: Vec<Vec<usize>>,
    expect: HashMap<usize, Outcome>,
    assigned: Vec<bool>,
}

fn accepts(fs: Option<Rank>, ft: Option<i32>, m: &MsgInfo) -> bool {
    fs.is_none_or(|s| s == m.src) && ft.is_none_or(|t| t == m.tag)
}

impl Model {
    fn arrive(&mut self, dest: Rank, token: MsgToken, env: Envelope) {
        let next = self.announced.entry((token.src, dest)).or_insert(0);
        assert_eq!(
            token.seq, *next,
            "announced out of order from {}",
            token.src
        );
        *next += 1;
        let id = self.chans[&(token.src, dest)][token.seq as usize];
        let m = self.msgs[id];
        assert_eq!(
            (env.ctx, env.tag, env.len, env.sync),
            (m.ctx, m.tag, m.len, m.sync)
        );
        let posted = &mut self.posted[dest as usize];
        if let Some(i) = posted
            .iter()
            .position(|&(_, s, c, t)| c == m.ctx && accepts(s, t, &m))
        {
            let (rid, ..) = posted.remove(i);
            self.expect.insert(rid, Outcome::Msg(id));
            self.assigned[id] = true;
        } else {
            self.unexpected[dest as usize].push(id);
        }
    }

    fn first_unexpected(
        &self,
        rank: Rank,
        s: Option<Rank>,
        c: u32,
        t: Option<i32>,
    ) -> Option<usize> {
        let u = &self.unexpected[rank as usize];
        u.iter()
            .position(|&id| self.msgs[id].ctx == c && accepts(s, t, &self.msgs[id]))
    }

    fn post(&mut self, rank: Rank, rid: usize, s: Option<Rank>, c: u32, t: Option<i32>) {
        if let Some(i) = self.first_unexpected(rank, s, c, t) {
            let id = self.unexpected[rank as usize].remove(i);
            self.expect.insert(rid, Outcome::Msg(id));
            self.assigned[id] = true;
        } else {
            self.posted[rank as usize].push((rid, s, c, t));
        }
    }

    fn cancel(&mut self, rank: Rank, rid: usize) {
        let p = &mut self.posted[rank as usize];
        if let Some(i) = p.iter().position(|e| e.0 == rid) {
            p.remove(i);
            self.expect.insert(rid, Outcome::Cancelled);
        }
    }
}

/// A fabric that tells the model every arrival, in the order the engine sees them.
struct Rec {
    inner: LoopFabric,
    model: Rc<RefCell<Model>>,
}

impl Fabric for Rec {
    fn rank(&self) -> Rank {
        self.inner.rank()
    }
    fn size(&self) -> Rank {
        self.inner.size()
    }
    fn eager_limit(&self) -> usize {
        self.inner.eager_limit()
    }
    unsafe fn send(
        &mut self,
        dest: Rank,
        env: Envelope,
        data: *const u8,
    ) -> Result<SendId, FabricError> {
        // SAFETY: forwarded with the caller's promise.
        unsafe { self.inner.send(dest, env, data) }
    }
    unsafe fn take(
        &mut self,
        token: MsgToken,
        buf: *mut u8,
        cap: usize,
    ) -> Result<bool, FabricError> {
        // SAFETY: forwarded with the caller's promise.
        unsafe { self.inner.take(token, buf, cap) }
    }
    fn progress(&mut self, events: &mut Vec<Event>) -> Result<bool, FabricError> {
        let from = events.len();
        let r = self.inner.progress(events);
        let me = self.inner.rank();
        let mut m = self.model.borrow_mut();
        for ev in &events[from..] {
            if let Event::Arrived { token, env } = ev {
                m.arrive(me, *token, *env);
            }
        }
        r
    }
}

fn byte(id: usize, i: usize) -> u8 {
    (id.wrapping_mul(131) ^ i.wrapping_mul(7) ^ (i >> 8)) as u8
}

const FILL: u8 = 0xEE;

struct Recv {
    rid: usize,
    rank: Rank,
    req: ReqId,
    buf: Vec<u8>,
}

struct Send {
    id: usize,
    rank: Rank,
    req: ReqId,
    _data: Vec<u8>,
}

struct Run {
    rng: ChaCha8Rng,
    model: Rc<RefCell<Model>>,
    es: Vec<Engine<Rec>>,
    recvs: Vec<Recv>,
    sends: Vec<Send>,
    mprobed: Vec<(Rank, MsgHandle, usize)>,
    next_rid: usize,
    max_len: usize,
    eager: usize,
    checked_recvs: usize,
}

impl Run {
    fn r(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n as u64) as usize
    }

    fn filters(&mut self) -> (Option<Rank>, u32, Option<i32>) {
        let n = self.es.len();
        let s = (self.r(5) < 3).then(|| self.r(n) as Rank);
        let c = [0, 2][self.r(2)];
        let t = (self.r(5) < 3).then(|| self.r(4) as i32);
        (s, c, t)
    }

    fn send(&mut self, from: Rank) {
        let n = self.es.len();
        let dest = self.r(n) as Rank;
        let ctx = [0, 2][self.r(2)];
        let tag = self.r(4) as i32;
        let e = self.eager;
        let len = match self.r(6) {
            0 => 0,
            1 => 1 + self.r(e),
            2 => e,
            3 => e + 1,
            _ => self.r(self.max_len + 1),
        };
        let mode = [
            SendMode::Standard,
            SendMode::Standard,
            SendMode::Sync,
            SendMode::Ready,
        ][self.r(4)];
        let id = {
            let mut m = self.model.borrow_mut();
            let id = m.msgs.len();
            m.msgs.push(MsgInfo {
                src: from,
                dest,
                ctx,
                tag,
                len,
                sync: mode == SendMode::Sync,
            });
            m.assigned.push(false);
            m.chans.entry((from, dest)).or_default().push(id);
            id
        };
        let data: Vec<u8> = (0..len).map(|i| byte(id, i)).collect();
        // SAFETY: `data`'s heap buffer lives in `self.sends` until the send completes.
        let req = unsafe { self.es[from as usize].isend(dest, ctx, tag, data.as_ptr(), len, mode) }
            .unwrap();
        self.sends.push(Send {
            id,
            rank: from,
            req,
            _data: data,
        });
    }

    fn recv(&mut self, rank: Rank, s: Option<Rank>, c: u32, t: Option<i32>, cap: usize) {
        let rid = self.next_rid;
        self.next_rid += 1;
        let mut buf = vec![FILL; cap];
        // SAFETY: `buf`'s heap buffer lives in `self.recvs` until the receive completes.
        let req = unsafe { self.es[rank as usize].irecv(s, c, t, buf.as_mut_ptr(), cap) }.unwrap();
        self.model.borrow_mut().post(rank, rid, s, c, t);
        self.recvs.push(Recv {
            rid,
            rank,
            req,
            buf,
        });
    }

    fn imrecv(&mut self, rank: Rank, h: MsgHandle, id: usize) {
        let rid = self.next_rid;
        self.next_rid += 1;
        let cap = self.r(self.max_len + 1);
        let mut buf = vec![FILL; cap];
        // SAFETY: as in `recv`.
        let req = unsafe { self.es[rank as usize].imrecv(h, buf.as_mut_ptr(), cap) }.unwrap();
        self.model.borrow_mut().expect.insert(rid, Outcome::Msg(id));
        self.recvs.push(Recv {
            rid,
            rank,
            req,
            buf,
        });
    }

    fn check_recv(&mut self, rv: &Recv, st: &Status) {
        let m = self.model.borrow();
        let want = m.expect.get(&rv.rid).copied();
        match want {
            Some(Outcome::Cancelled) => {
                assert!(st.cancelled && st.len == 0 && st.error.is_none(), "{st:?}");
                assert!(rv.buf.iter().all(|&b| b == FILL));
            }
            Some(Outcome::Msg(id)) => {
                let msg = m.msgs[id];
                let cap = rv.buf.len();
                assert!(!st.cancelled);
                assert_eq!(
                    (st.source, st.tag, st.len),
                    (msg.src, msg.tag, msg.len.min(cap)),
                    "rid {} msg {id}",
                    rv.rid
                );
                let err = (msg.len > cap).then_some(P2pError::Truncated { len: msg.len, cap });
                assert_eq!(st.error, err);
                for (i, &b) in rv.buf.iter().enumerate() {
                    let w = if i < st.len { byte(id, i) } else { FILL };
                    assert_eq!(b, w, "byte {i} of message {id}");
                }
            }
            None => panic!(
                "receive {} completed with {st:?}; the model matched it to nothing",
                rv.rid
            ),
        }
        self.checked_recvs += 1;
    }

    fn check_send(&self, s: &Send, st: &Status) {
        let m = self.model.borrow();
        let msg = m.msgs[s.id];
        assert_eq!((st.len, &st.error, st.cancelled), (msg.len, &None, false));
        if msg.sync {
            assert!(m.assigned[s.id], "Ssend {} complete before a match", s.id);
        }
    }

    /// Tests request `i` of the receives (or sends); verifies and drops it if done.
    fn test_recv(&mut self, i: usize) -> bool {
        let (rank, req) = (self.recvs[i].rank, self.recvs[i].req);
        match self.es[rank as usize].test(req).unwrap() {
            Some(st) => {
                let rv = self.recvs.swap_remove(i);
                self.check_recv(&rv, &st);
                true
            }
            None => false,
        }
    }

    fn test_send(&mut self, i: usize) -> bool {
        let (rank, req) = (self.sends[i].rank, self.sends[i].req);
        match self.es[rank as usize].test(req).unwrap() {
            Some(st) => {
                let s = self.sends.swap_remove(i);
                self.check_send(&s, &st);
                true
            }
            None => false,
        }
    }

    fn probe(&mut self, rank: Rank, matched: bool) {
        let (s, c, t) = self.filters();
        let e = &mut self.es[rank as usize];
        let got = if matched {
            e.improbe(s, c, t).unwrap()
        } else {
            e.iprobe(s, c, t)
                .unwrap()
                .map(|st| (MsgHandle::from_raw(0), st))
        };
        let mut m = self.model.borrow_mut();
        let want = m.first_unexpected(rank, s, c, t);
        match (got, want) {
            (None, None) => {}
            (Some((h, st)), Some(i)) => {
                let id = m.unexpected[rank as usize][i];
                let msg = m.msgs[id];
                assert_eq!((st.source, st.tag, st.len), (msg.src, msg.tag, msg.len));
                if matched {
                    m.unexpected[rank as usize].remove(i);
                    m.assigned[id] = true;
                    drop(m);
                    self.mprobed.push((rank, h, id));
                }
            }
            (g, w) => panic!("probe at {rank}: engine {g:?}, model {w:?}"),
        }
    }

    fn step(&mut self) {
        let n = self.es.len();
        let rank = self.r(n) as Rank;
        match self.r(100) {
            0..=29 => self.send(rank),
            30..=57 => {
                let (s, c, t) = self.filters();
                let cap = if self.r(3) == 0 {
                    self.r(self.eager + 2)
                } else {
                    self.max_len
                };
                self.recv(rank, s, c, t, cap);
            }
            58..=69 => {
                self.es[rank as usize].progress().unwrap();
            }
            70..=77 if !self.recvs.is_empty() => {
                let i = self.r(self.recvs.len());
                self.test_recv(i);
            }
            78..=83 if !self.sends.is_empty() => {
                let i = self.r(self.sends.len());
                self.test_send(i);
            }
            84..=88 if !self.recvs.is_empty() => {
                let i = self.r(self.recvs.len());
                let (rank, req, rid) = (self.recvs[i].rank, self.recvs[i].req, self.recvs[i].rid);
                self.es[rank as usize].cancel(req).unwrap();
                self.model.borrow_mut().cancel(rank, rid);
            }
            89..=93 => self.probe(rank, false),
            94..=97 => self.probe(rank, true),
            _ if !self.mprobed.is_empty() => {
                let i = self.r(self.mprobed.len());
                let (rank, h, id) = self.mprobed.swap_remove(i);
                self.imrecv(rank, h, id);
            }
            _ => {}
        }
    }

    fn finish(&mut self) {
        for (rank, h, id) in std::mem::take(&mut self.mprobed) {
            self.imrecv(rank, h, id);
        }
        for i in 0..self.recvs.len() {
            let (rank, req, rid) = (self.recvs[i].rank, self.recvs[i].req, self.recvs[i].rid);
            self.es[rank as usize].cancel(req).unwrap();
            self.model.borrow_mut().cancel(rank, rid);
        }
        // Catch-all receives for every message nothing has matched yet.
        let left: Vec<(Rank, u32)> = {
            let m = self.model.borrow();
            (0..m.msgs.len())
                .filter(|&id| !m.assigned[id])
                .map(|id| (m.msgs[id].dest, m.msgs[id].ctx))
                .collect()
        };
        for (rank, ctx) in left {
            self.recv(rank, None, ctx, None, self.max_len);
        }
        for round in 0.. {
            assert!(
                round < 200_000,
                "hang: {} receives, {} sends open",
                self.recvs.len(),
                self.sends.len()
            );
            if self.recvs.is_empty() && self.sends.is_empty() {
                break;
            }
            for e in &mut self.es {
                e.progress().unwrap();
            }
            let mut i = 0;
            while i < self.recvs.len() {
                if !self.test_recv(i) {
                    i += 1;
                }
            }
            let mut i = 0;
            while i < self.sends.len() {
                if !self.test_send(i) {
                    i += 1;
                }
            }
        }
        let m = self.model.borrow();
        assert!(
            m.assigned.iter().all(|&a| a),
            "a message was never received"
        );
        assert!(m.posted.iter().all(Vec::is_empty));
        for e in &self.es {
            assert_eq!(e.live_requests(), 0);
        }
    }
}

fn run(seed: u64, steps: usize) -> usize {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = 2 + (rng.next_u64() % 5) as u32;
    let eager = [16, 64, 256][(rng.next_u64() % 3) as usize];
    let cfg = LoopConfig {
        seed: seed.wrapping_mul(0x9e37_79b9),
        eager_limit: eager,
        defer_percent: (rng.next_u64() % 60) as u32,
        max_announce: 1 + (rng.next_u64() % 4) as usize,
    };
    let model = Rc::new(RefCell::new(Model {
        posted: vec![Vec::new(); n as usize],
        unexpected: vec![Vec::new(); n as usize],
        ..Model::default()
    }));
    let (_net, fabrics) = LoopNet::new(n, cfg);
    let es = fabrics
        .into_iter()
        .map(|f| {
            Engine::new(Rec {
                inner: f,
                model: model.clone(),
            })
        })
        .collect();
    let mut run = Run {
        rng,
        model,
        es,
        recvs: Vec::new(),
        sends: Vec::new(),
        mprobed: Vec::new(),
        next_rid: 0,
        max_len: eager * 4,
        eager,
        checked_recvs: 0,
    };
    for _ in 0..steps {
        run.step();
    }
    run.finish();
    run.checked_recvs
}

#[test]
fn random_runs_match_the_model() {
    let mut total = 0;
    for seed in 0..200 {
        total += run(seed, 1500);
    }
    assert!(total > 50_000, "too few receives checked: {total}");
}

/// Random traffic among 3..6 ranks, one killed midway: every request on the others
/// completes (with `PeerLost` where it depended on the dead rank), nothing hangs,
/// and what completes without error carries the right bytes.
#[test]
fn random_runs_with_a_lost_peer_never_hang() {
    let mut lost_seen = 0;
    for seed in 0..40u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xdead);
        let mut r = |n: usize| (rng.next_u64() % n as u64) as usize;
        let n = 3 + r(4);
        let cfg = LoopConfig {
            seed,
            eager_limit: 32,
            ..LoopConfig::default()
        };
        let (net, mut es) = LoopNet::engines(n as u32, cfg);
        let victim = r(n);
        let mut sends: Vec<(usize, ReqId, Vec<u8>)> = Vec::new();
        let mut recvs: Vec<(usize, ReqId, Vec<u8>)> = Vec::new();
        let check = |st: &Status, buf: &[u8], lost_seen: &mut usize| match &st.error {
            None => {
                // Payload: the source rank, then its length's low byte, repeated.
                assert!(buf[..st.len]
                    .iter()
                    .all(|&b| b == st.source as u8 ^ st.len as u8));
            }
            Some(P2pError::PeerLost { rank, .. }) => {
                assert_eq!(*rank as usize, victim);
                *lost_seen += 1;
            }
            Some(P2pError::Truncated { .. }) => {}
            Some(e) => panic!("{e:?}"),
        };
        for step in 0..600 {
            if step == 300 {
                net.kill(victim as u32, "test");
            }
            let me = r(n);
            if step >= 300 && me == victim {
                continue;
            }
            match r(10) {
                0..=3 => {
                    let dest = r(n);
                    let len = [0, 5, 32, 33, 100][r(5)];
                    let data = vec![me as u8 ^ len as u8; len];
                    let mode = [SendMode::Standard, SendMode::Sync][r(2)];
                    // SAFETY: `data`'s heap buffer lives in `sends` until complete.
                    match unsafe { es[me].isend(dest as u32, 0, 1, data.as_ptr(), len, mode) } {
                        Ok(q) => sends.push((me, q, data)),
                        Err(P2pError::PeerLost { rank, .. }) => assert_eq!(rank as usize, victim),
                        Err(e) => panic!("{e:?}"),
                    }
                }
                4..=6 => {
                    let src = (r(3) > 0).then(|| r(n) as u32);
                    let mut buf = vec![0u8; 100];
                    // SAFETY: `buf`'s heap buffer lives in `recvs` until complete.
                    let q = unsafe { es[me].irecv(src, 0, None, buf.as_mut_ptr(), 100) }.unwrap();
                    recvs.push((me, q, buf));
                }
                _ => {
                    es[me].progress().unwrap();
                }
            }
        }
        // The victim's own requests are abandoned with it.
        sends.retain(|s| s.0 != victim);
        recvs.retain(|s| s.0 != victim);
        for (me, q, _) in &recvs {
            es[*me].cancel(*q).unwrap();
        }
        for round in 0.. {
            assert!(round < 100_000, "hang: {} sends open", sends.len());
            for (me, e) in es.iter_mut().enumerate() {
                if me != victim {
                    e.progress().unwrap();
                }
            }
            recvs.retain(|(me, q, buf)| match es[*me].test(*q).unwrap() {
                Some(st) => {
                    check(&st, buf, &mut lost_seen);
                    false
                }
                None => true,
            });
            sends.retain(|(me, q, _)| match es[*me].test(*q).unwrap() {
                Some(st) => {
                    assert!(
                        st.error.is_none() || matches!(st.error, Some(P2pError::PeerLost { .. }))
                    );
                    false
                }
                None => true,
            });
            if sends.is_empty() && recvs.is_empty() {
                break;
            }
            // Drain what survivors sent each other, so their sends can finish.
            for me in (0..n).filter(|&m| m != victim) {
                for src in (0..n).filter(|&s| s != victim) {
                    if es[me].iprobe(Some(src as u32), 0, None).unwrap().is_some() {
                        let mut buf = vec![0u8; 100];
                        let st = es[me].recv(Some(src as u32), 0, None, &mut buf).unwrap();
                        check(&st, &buf, &mut lost_seen);
                    }
                }
            }
        }
    }
    assert!(lost_seen > 0, "no receive ever saw the loss");
}
