//! A deterministic in-memory network for RSM engines, mirroring `myrix_mx_proto::testnet`
//! (which drives MX engines): latency, loss, duplication and reordering from one seed,
//! simulated time that jumps from event to event. Engine `i` is at address `i` and owns
//! memory `mems[i]`; events each engine reports are collected in `events[i]`.
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use myrix_rsm_proto::engine::{Config, Engine, Event};
use myrix_rsm_proto::{NodeId, SegmentId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub type Mem = HashMap<SegmentId, Vec<u8>>;

#[derive(Clone, Copy, Debug)]
pub struct NetConfig {
    pub latency_ns: u64,
    /// Extra delay, uniform in `0..=jitter_ns`, per frame (reorders).
    pub jitter_ns: u64,
    pub loss: f64,
    pub duplicate: f64,
    /// Share of frames steered into a slow lane (`.ci/netns.sh`'s HTB class where the
    /// kernel has no netem): each waits `slow_ns` more, so later frames overtake it.
    pub slow: f64,
    pub slow_ns: u64,
    pub seed: u64,
}

impl NetConfig {
    pub fn lossy(loss: f64, seed: u64) -> NetConfig {
        NetConfig {
            latency_ns: 2_000,
            jitter_ns: 3_000,
            loss,
            duplicate: loss / 2.0,
            slow: 0.0,
            slow_ns: 0,
            seed,
        }
    }
}

/// (time, order, destination, source, handled by the destination's CPU already
/// queued for it ([`Cpu`]), frame).
type InFlight = Reverse<(u64, u64, usize, usize, bool, Vec<u8>)>;

/// Each node as one busy process ([`Net::cpu`]): sending a frame costs it `tx_ns`,
/// handling one `rx_ns`; frames wait in its socket's receive buffer, in arrival order,
/// until it gets to them, and a frame that finds `queue` frames waiting is dropped (the
/// buffer is full: `crates/mx`'s 8 MiB `SO_RCVBUF` holds about 3500 full frames). A
/// node that sends more than the other can handle makes the other's frames seconds old
/// by the time they are read.
#[derive(Clone, Copy, Debug)]
pub struct Cpu {
    pub tx_ns: u64,
    pub rx_ns: u64,
    pub queue: u64,
}

/// The slow lane as `.ci/netns.sh` builds it where the kernel has no netem: an HTB
/// class of its own per sending node, `rate_bps` shared by its frames one at a time
/// (a FIFO: frames of the slow lane keep their order among themselves), at most
/// `limit` frames queued (the class's pfifo, the veth's `txqueuelen`), more dropped. A
/// frame's wait is the queue ahead of it: under load, hundreds of milliseconds.
#[derive(Clone, Copy, Debug)]
pub struct Htb {
    pub rate_bps: u64,
    pub limit: u64,
    /// Bytes each frame costs on the wire besides its payload (UDP, IP, Ethernet).
    pub overhead: u64,
}

impl Htb {
    /// `.ci/netns.sh`'s class: 20 Mbit/s, 1000 frames, UDP over Ethernet.
    pub const NETNS: Htb = Htb {
        rate_bps: 20_000_000,
        limit: 1000,
        overhead: 42,
    };
}

pub struct Net {
    pub now: u64,
    pub engines: Vec<Engine<usize>>,
    pub mems: Vec<Mem>,
    pub events: Vec<Vec<Event<usize>>>,
    cfg: NetConfig,
    queue: BinaryHeap<InFlight>,
    rng: ChaCha8Rng,
    order: u64,
    buf: Vec<u8>,
    /// Nodes whose frames (to and from) are all lost.
    pub cut: HashSet<usize>,
    /// Nodes whose explicit acks (frames that carry nothing else) are all lost.
    pub drop_acks_from: HashSet<usize>,
    /// The memory each engine applies writes to and reads from (`mems[mem_of[i]]`; by
    /// default its own): engines of one node on several rails share one.
    pub mem_of: Vec<usize>,
    /// Extra latency of each node's frames (a slower link).
    pub delay: Vec<u64>,
    /// The slow lane as a rate-limited queue ([`Htb`]) instead of a fixed
    /// [`NetConfig::slow_ns`].
    pub htb: Option<Htb>,
    /// When each node's slow lane is free again.
    slow_free: Vec<u64>,
    /// Frames the slow lane dropped (its queue was full).
    pub slow_dropped: u64,
    /// Nodes as busy processes ([`Cpu`]); `None`: they take no time.
    pub cpu: Option<Cpu>,
    /// When each node's process is free again.
    busy: Vec<u64>,
    /// Frames a full receive buffer dropped.
    pub rx_dropped: u64,
    pub sent: u64,
    pub lost: u64,
    pub duplicated: u64,
}

impl Net {
    /// `n` engines with `cfg`, node ids 0..n, session 1.
    pub fn new(n: usize, ecfg: Config, cfg: NetConfig) -> Net {
        let engines: Vec<Engine<usize>> = (0..n)
            .map(|i| Engine::new(ecfg.clone(), NodeId(i as u32), 1))
            .collect();
        Net {
            now: 1,
            mems: vec![Mem::new(); n],
            events: vec![Vec::new(); n],
            buf: vec![0; ecfg.mtu],
            engines,
            cfg,
            queue: BinaryHeap::new(),
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            order: 0,
            cut: HashSet::new(),
            drop_acks_from: HashSet::new(),
            mem_of: (0..n).collect(),
            delay: vec![0; n],
            htb: None,
            slow_free: vec![0; n],
            slow_dropped: 0,
            cpu: None,
            busy: vec![0; n],
            rx_dropped: 0,
            sent: 0,
            lost: 0,
            duplicated: 0,
        }
    }

    /// Moves every frame the engines want to send into the network, and their events
    /// into `events`.
    pub fn pump(&mut self) {
        let mut buf = std::mem::take(&mut self.buf);
        for src in 0..self.engines.len() {
            while let Some((dst, n)) = self.engines[src].poll_transmit(self.now, &mut buf) {
                assert!(n <= buf.len());
                self.send_frame(src, dst, &buf[..n]);
            }
            while let Some(e) = self.engines[src].poll_event() {
                self.events[src].push(e);
            }
        }
        self.buf = buf;
    }

    pub fn send_frame(&mut self, src: usize, dst: usize, frame: &[u8]) {
        self.sent += 1;
        let ack_only = || {
            myrix_wire::rsm::Repr::parse_bytes(frame)
                .is_ok_and(|r| r.body.kind() == myrix_wire::rsm::Kind::Ack)
        };
        if self.cut.contains(&src)
            || self.cut.contains(&dst)
            || (self.drop_acks_from.contains(&src) && ack_only())
            || self.rng.gen_bool(self.cfg.loss)
        {
            self.lost += 1;
            return;
        }
        // The sender's process spends `tx_ns` on it, after what it was doing.
        let depart = match self.cpu {
            Some(c) => {
                let d = self.busy[src].max(self.now) + c.tx_ns;
                self.busy[src] = d;
                d
            }
            None => self.now,
        };
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
            let slow = if self.cfg.slow > 0.0 && self.rng.gen_bool(self.cfg.slow) {
                match self.htb {
                    None => self.cfg.slow_ns,
                    Some(h) => {
                        let wire = (frame.len() as u64 + h.overhead) * 8 * 1_000_000_000;
                        let per = wire / h.rate_bps;
                        let start = self.slow_free[src].max(depart);
                        if (start - depart) / per.max(1) >= h.limit {
                            self.slow_dropped += 1;
                            continue;
                        }
                        self.slow_free[src] = start + per;
                        start + per - depart
                    }
                }
            } else {
                0
            };
            self.order += 1;
            let at = depart + self.cfg.latency_ns + jitter + slow + self.delay[src];
            self.queue
                .push(Reverse((at, self.order, dst, src, false, frame.to_vec())));
        }
    }

    pub fn next_event(&self) -> Option<u64> {
        let q = self.queue.peek().map(|Reverse(x)| x.0);
        let t = self.engines.iter().filter_map(|e| e.poll_timeout()).min();
        match (q, t) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Advances to the next event and handles it. False when nothing is left to happen.
    pub fn step(&mut self) -> bool {
        self.pump();
        let Some(t) = self.next_event() else {
            return false;
        };
        self.now = self.now.max(t);
        while let Some(Reverse(x)) = self.queue.peek() {
            if x.0 > self.now {
                break;
            }
            let Reverse((at, _, dst, src, queued, frame)) = self.queue.pop().expect("peeked");
            if let (Some(c), false) = (self.cpu, queued) {
                // Into the receive buffer, behind what the process has not read yet.
                let start = self.busy[dst].max(at);
                if (start - at) / c.rx_ns.max(1) >= c.queue {
                    self.rx_dropped += 1;
                    continue;
                }
                self.busy[dst] = start + c.rx_ns;
                self.order += 1;
                self.queue.push(Reverse((
                    start + c.rx_ns,
                    self.order,
                    dst,
                    src,
                    true,
                    frame,
                )));
                continue;
            }
            let (e, m) = (&mut self.engines[dst], &mut self.mems[self.mem_of[dst]]);
            e.handle_frame(self.now, &src, &frame, m);
        }
        for e in &mut self.engines {
            if e.poll_timeout().is_some_and(|d| d <= self.now) {
                e.handle_timeout(self.now);
            }
        }
        self.pump();
        true
    }

    /// Runs until `done` holds or `limit_ns` of simulated time passes; returns `done`.
    pub fn run_until(&mut self, limit_ns: u64, mut done: impl FnMut(&mut Net) -> bool) -> bool {
        let end = self.now + limit_ns;
        loop {
            self.pump();
            if done(self) {
                return true;
            }
            if self.now > end || !self.step() {
                return done(self);
            }
        }
    }

    /// Runs until nothing is left to send, acknowledge or answer.
    pub fn settle(&mut self) {
        let ok = self.run_until(10_000_000_000, |n| {
            n.queue.is_empty() && n.engines.iter().all(|e| e.idle())
        });
        assert!(ok, "the network did not settle");
    }

    /// Takes engine `i`'s events.
    pub fn take_events(&mut self, i: usize) -> Vec<Event<usize>> {
        self.pump();
        std::mem::take(&mut self.events[i])
    }

    /// Waits for the first event of engine `i` that `f` picks, keeping the others.
    pub fn wait_for<T>(&mut self, i: usize, mut f: impl FnMut(&Event<usize>) -> Option<T>) -> T {
        let mut found = None;
        let ok = self.run_until(30_000_000_000, |n| {
            if let Some(k) = n.events[i].iter().position(|e| f(e).is_some()) {
                let e = n.events[i].remove(k);
                found = f(&e);
                true
            } else {
                false
            }
        });
        assert!(ok, "event never came; engine {i} has {:?}", self.events[i]);
        found.expect("found")
    }
}
