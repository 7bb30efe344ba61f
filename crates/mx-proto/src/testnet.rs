//! A deterministic in-memory network that drives engines: latency, loss, duplication and
//! reordering from one seed, and simulated time that jumps from event to event. For tests
//! and for anyone who wants to study the protocol without sockets.
//!
//! Engine `i` is at location `i`. In lossy mode every frame independently may be lost,
//! duplicated and delayed by a random jitter (which reorders). In lossless mode
//! ([`NetConfig::lossless`]) frames between two endpoints stay in order and a frame the
//! receiver refuses as busy waits at the head of its pair's queue, as in a ring.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::engine::{
    refusal, unopened_reason, Codec, DirectRecv, Engine, Handled, Mx, Request, OMX_ENDPOINT_MAX,
};

#[derive(Clone, Copy, Debug)]
pub struct NetConfig {
    pub latency_ns: u64,
    /// Extra delay, uniform in `0..=jitter_ns`, per frame.
    pub jitter_ns: u64,
    pub loss: f64,
    pub duplicate: f64,
    pub lossless: bool,
    pub seed: u64,
}

impl NetConfig {
    pub fn lossy(loss: f64, seed: u64) -> NetConfig {
        NetConfig {
            latency_ns: 2_000,
            jitter_ns: 3_000,
            loss,
            duplicate: loss / 2.0,
            lossless: false,
            seed,
        }
    }
    pub fn lossless(seed: u64) -> NetConfig {
        NetConfig {
            latency_ns: 500,
            jitter_ns: 0,
            loss: 0.0,
            duplicate: 0.0,
            lossless: true,
            seed,
        }
    }
}

/// Frames in flight: (delivery time, tie-break, destination, source, bytes).
type InFlight = Reverse<(u64, u64, usize, usize, Vec<u8>)>;

pub struct TestNet<C: Codec = Mx> {
    pub now: u64,
    pub engines: Vec<Engine<usize, C>>,
    cfg: NetConfig,
    queue: BinaryHeap<InFlight>,
    held: HashMap<(usize, usize), VecDeque<Vec<u8>>>,
    rng: ChaCha8Rng,
    order: u64,
    buf: Vec<u8>,
    pub sent: u64,
    pub lost: u64,
    pub duplicated: u64,
    /// Per engine, the message of a send it was lent ([`Engine::isend_lent`]), as segments.
    lent: HashMap<usize, (Request, Vec<Vec<u8>>)>,
    /// Per engine, a blocking receive waiting without a request: frames to that engine
    /// go through [`Engine::handle_frame_direct`], as an endpoint's `recv` delivers them.
    pub direct: HashMap<usize, DirectRecv>,
    /// When set, every frame sent (before loss) as (source, destination, bytes): a
    /// capture for tests that read the wire.
    pub tap: Option<Vec<(usize, usize, Vec<u8>)>>,
    /// Locations whose endpoint is closed: its engine neither sends nor receives, and
    /// its host answers frames for it as Open-MX's driver does ([`refusal`]).
    pub closed: HashSet<usize>,
    /// Every host answers frames for an endpoint id other than its engine's (one it has
    /// not open) as Open-MX's driver does, instead of handing them to the engine.
    pub drivers: bool,
}

impl<C: Codec> TestNet<C> {
    pub fn new(cfg: NetConfig, engines: Vec<Engine<usize, C>>) -> Self {
        let mtu = engines.iter().map(|e| e.config().mtu).max().unwrap_or(0);
        TestNet {
            now: 1,
            engines,
            cfg,
            queue: BinaryHeap::new(),
            held: HashMap::new(),
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            order: 0,
            buf: vec![0; mtu],
            sent: 0,
            lost: 0,
            duplicated: 0,
            lent: HashMap::new(),
            direct: HashMap::new(),
            tap: None,
            closed: HashSet::new(),
            drivers: false,
        }
    }

    /// Moves every frame the engines want to send into the network.
    pub fn pump(&mut self) {
        let mut buf = std::mem::take(&mut self.buf);
        for src in 0..self.engines.len() {
            if self.closed.contains(&src) {
                continue;
            }
            loop {
                let segs: Vec<&[u8]>;
                let lent = match self.lent.get(&src) {
                    Some((r, v)) => {
                        segs = v.iter().map(|x| &x[..]).collect();
                        Some((*r, &segs[..]))
                    }
                    None => None,
                };
                let Some((dst, n)) = self.engines[src].poll_transmit_lent(self.now, &mut buf, lent)
                else {
                    break;
                };
                self.send_frame(src, dst, &buf[..n]);
            }
        }
        self.buf = buf;
    }

    /// Engine `e` lends the message of its send `r` (started with `isend_lent`) in
    /// these segments until [`TestNet::unlend`].
    pub fn lend(&mut self, e: usize, r: Request, segments: Vec<Vec<u8>>) {
        self.lent.insert(e, (r, segments));
    }

    /// Engine `e` stops lending: the engine copies what it still needs.
    pub fn unlend(&mut self, e: usize) {
        if let Some((r, v)) = self.lent.remove(&e) {
            let segs: Vec<&[u8]> = v.iter().map(|x| &x[..]).collect();
            self.engines[e].unlend(r, &segs);
        }
    }

    /// Puts a frame from `src` to `dst` into the network (lost, duplicated and delayed as
    /// configured): for frames an engine handed out directly, as `Engine::isend_into` does.
    pub fn send_frame(&mut self, src: usize, dst: usize, frame: &[u8]) {
        self.sent += 1;
        if let Some(tap) = self.tap.as_mut() {
            tap.push((src, dst, frame.to_vec()));
        }
        if self.rng.gen_bool(self.cfg.loss) {
            self.lost += 1;
            return;
        }
        let copies = if self.rng.gen_bool(self.cfg.duplicate) {
            self.duplicated += 1;
            2
        } else {
            1
        };
        for _ in 0..copies {
            let jitter = if self.cfg.jitter_ns > 0 {
                self.rng.gen_range(0..=self.cfg.jitter_ns)
            } else {
                0
            };
            let at = self.now + self.cfg.latency_ns + jitter;
            self.order += 1;
            self.queue
                .push(Reverse((at, self.order, dst, src, frame.to_vec())));
        }
    }

    fn next_event(&self) -> Option<u64> {
        let q = self.queue.peek().map(|Reverse(x)| x.0);
        let t = (self.engines.iter().enumerate())
            .filter(|(i, _)| !self.closed.contains(i))
            .filter_map(|(_, e)| e.poll_timeout())
            .min();
        match (q, t) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn deliver(&mut self, dst: usize, src: usize, frame: Vec<u8>) {
        if dst >= self.engines.len() || self.refused(dst, src, &frame) {
            return;
        }
        if self.cfg.lossless {
            let q = self.held.entry((src, dst)).or_default();
            if !q.is_empty() {
                q.push_back(frame);
                return;
            }
            if self.offer(dst, src, &frame) == Handled::Busy {
                self.held.entry((src, dst)).or_default().push_back(frame);
            }
        } else {
            let _ = self.offer(dst, src, &frame);
        }
    }

    /// The host at `dst` has no endpoint open for `frame` (its engine is closed, or
    /// with [`TestNet::drivers`] the frame is for another endpoint id): answers it as
    /// Open-MX's driver does and keeps it from the engine.
    fn refused(&mut self, dst: usize, src: usize, frame: &[u8]) -> bool {
        if !self.drivers && self.closed.is_empty() {
            return false;
        }
        let Ok(r) = C::parse(frame) else {
            return false;
        };
        let e = &self.engines[dst];
        let id = r.header.dst_endpoint;
        if !(self.closed.contains(&dst) || self.drivers && id != e.endpoint()) {
            return false;
        }
        let reason = unopened_reason(id, OMX_ENDPOINT_MAX);
        let mut buf = vec![0u8; self.buf.len().max(128)];
        if let Some(n) = refusal::<C>(frame, e.nic(), reason, &mut buf) {
            buf.truncate(n.max(60));
            self.send_frame(dst, src, &buf);
        }
        true
    }

    fn offer(&mut self, dst: usize, src: usize, frame: &[u8]) -> Handled {
        match self.direct.get_mut(&dst) {
            Some(d) => self.engines[dst].handle_frame_direct(self.now, &src, frame, d),
            None => self.engines[dst].handle_frame(self.now, &src, frame),
        }
    }

    /// Offers held frames again (after the application posted receives).
    fn retry_held(&mut self) {
        let keys: Vec<(usize, usize)> = self
            .held
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(k, _)| *k)
            .collect();
        for (src, dst) in keys {
            while let Some(f) = self.held.get_mut(&(src, dst)).and_then(|q| q.pop_front()) {
                if self.offer(dst, src, &f) == Handled::Busy {
                    self.held
                        .get_mut(&(src, dst))
                        .expect("exists")
                        .push_front(f);
                    break;
                }
            }
        }
    }

    /// Advances to the next event and handles it. False when nothing is left to happen.
    pub fn step(&mut self) -> bool {
        self.pump();
        self.retry_held();
        let Some(t) = self.next_event() else {
            return false;
        };
        self.now = self.now.max(t);
        while let Some(Reverse(x)) = self.queue.peek() {
            if x.0 > self.now {
                break;
            }
            let Reverse((_, _, dst, src, frame)) = self.queue.pop().expect("peeked");
            self.deliver(dst, src, frame);
        }
        for (i, e) in self.engines.iter_mut().enumerate() {
            if self.closed.contains(&i) {
                continue;
            }
            if e.poll_timeout().is_some_and(|d| d <= self.now) {
                e.handle_timeout(self.now);
            }
        }
        self.pump();
        true
    }

    /// Runs until `done` holds or `limit_ns` of simulated time passes; returns `done`.
    pub fn run_until(&mut self, limit_ns: u64, mut done: impl FnMut(&mut Self) -> bool) -> bool {
        let end = self.now + limit_ns;
        loop {
            if done(self) {
                return true;
            }
            if self.now > end || !self.step() {
                return done(self);
            }
        }
    }

    /// Frames waiting in the network or held at a busy receiver.
    pub fn in_flight(&self) -> usize {
        self.queue.len() + self.held.values().map(|q| q.len()).sum::<usize>()
    }
}
