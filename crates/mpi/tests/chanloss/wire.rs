//! The network under the channel test: `rsm-proto` engines joined by a deterministic
//! lossy wire (latency, jitter that reorders, loss, duplication, all from one seed;
//! simulated time passed in), the nodes' exported memory as the engines write it, and
//! the channel's network windows on the engines' imports ([`EngineSeg`], a
//! `RemoteSegment`).
//!
//! **The memory.** An engine applies a write frame through [`Segs`], which does not
//! store it at once: it cuts it into pieces, queued, and the driver stores them one
//! by one, letting the node's receivers poll between any two ([`Segs::apply_next`]).
//! The pieces of one write follow the exporter's rule (`rsm::net::memory`, "first word
//! last"): a write that starts 8-aligned and is at least 8 long has its bytes from the
//! ninth on stored in random pieces in random order, then its first word in one store;
//! any other write is random pieces in random order. So a receiver sees every state a
//! concurrent reader of the real exporter's memory could see between two frames and
//! inside one, and a postbox whose flag shows before the data it announces is caught.
//! [`Order::FlagFirst`] breaks the rule on purpose (the first word stored first) to show
//! that the test sees the difference.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use myrix_mpi::channel::window::{Mem, RemoteSegment};
use myrix_rsm::RsmError;
use myrix_rsm_proto::engine::{Engine, FlushId, Import, Memory};
use myrix_rsm_proto::SegmentId;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One node's engine, shared by the driver and the windows that put through it.
pub type Shared = Arc<Mutex<Engine<usize>>>;

pub fn lock(e: &Shared) -> MutexGuard<'_, Engine<usize>> {
    e.lock().unwrap_or_else(|p| p.into_inner())
}

/// The wire's faults.
#[derive(Debug, Clone, Copy)]
pub struct WireConfig {
    pub latency_ns: u64,
    /// Extra delay per frame, uniform in `0..=jitter_ns` (frames overtake each other).
    pub jitter_ns: u64,
    pub loss: f64,
    pub duplicate: f64,
}

/// Frames in flight: (arrival, order, destination, source, bytes).
type Flight = Reverse<(u64, u64, usize, usize, Vec<u8>)>;

pub struct Wire {
    cfg: WireConfig,
    rng: ChaCha8Rng,
    queue: BinaryHeap<Flight>,
    order: u64,
    buf: Vec<u8>,
    pub sent: u64,
    pub lost: u64,
    pub duplicated: u64,
}

impl Wire {
    pub fn new(cfg: WireConfig, seed: u64, mtu: usize) -> Wire {
        Wire {
            cfg,
            rng: ChaCha8Rng::seed_from_u64(seed),
            queue: BinaryHeap::new(),
            order: 0,
            buf: vec![0; mtu],
            sent: 0,
            lost: 0,
            duplicated: 0,
        }
    }

    /// Takes every frame the engines want to send now into the wire.
    pub fn collect(&mut self, now: u64, engines: &[Shared]) {
        let mut buf = std::mem::take(&mut self.buf);
        for (src, e) in engines.iter().enumerate() {
            let mut e = lock(e);
            while let Some((dst, n)) = e.poll_transmit(now, &mut buf) {
                self.send(now, src, dst, &buf[..n]);
            }
        }
        self.buf = buf;
    }

    fn send(&mut self, now: u64, src: usize, dst: usize, frame: &[u8]) {
        self.sent += 1;
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
            let at = now + self.cfg.latency_ns + self.rng.gen_range(0..=self.cfg.jitter_ns);
            self.order += 1;
            self.queue
                .push(Reverse((at, self.order, dst, src, frame.to_vec())));
        }
    }

    /// When the next frame arrives.
    pub fn next_at(&self) -> Option<u64> {
        self.queue.peek().map(|Reverse(f)| f.0)
    }

    /// The next frame if it arrives by `now`: (destination, source, bytes).
    pub fn take_due(&mut self, now: u64) -> Option<(usize, usize, Vec<u8>)> {
        if self.next_at()? > now {
            return None;
        }
        let Reverse((_, _, dst, src, bytes)) = self.queue.pop()?;
        Some((dst, src, bytes))
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

/// How a write's pieces are ordered (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The exporter's rule: the first word last.
    FirstWordLast,
    /// Broken on purpose: the first word first.
    FlagFirst,
}

enum Piece {
    Bytes(SegmentId, usize, Vec<u8>),
    Word(SegmentId, usize, u64),
}

/// A node's exported segments as its engine writes them (module docs).
pub struct Segs {
    segs: HashMap<SegmentId, Mem>,
    pending: VecDeque<Piece>,
    rng: ChaCha8Rng,
    order: Order,
    /// Pieces stored, and writes cut into more than one.
    pub pieces: u64,
    pub split: u64,
}

impl Segs {
    pub fn new(seed: u64, order: Order) -> Segs {
        Segs {
            segs: HashMap::new(),
            pending: VecDeque::new(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            order,
            pieces: 0,
            split: 0,
        }
    }

    /// `seg` is backed by `mem` (the engine's half of a heap window).
    pub fn bind(&mut self, seg: SegmentId, mem: Mem) {
        self.segs.insert(seg, mem);
    }

    /// Stores the next piece of the writes the engine applied; false when none waits.
    pub fn apply_next(&mut self) -> bool {
        let Some(p) = self.pending.pop_front() else {
            return false;
        };
        self.pieces += 1;
        let r = match &p {
            Piece::Bytes(seg, off, b) => self.segs[seg].write(*off, b),
            Piece::Word(seg, off, w) => self.segs[seg].store_u64(*off, *w),
        };
        r.expect("the engine checked the range");
        true
    }

    /// `data[from..]` at `off + from` in random pieces, in random order.
    fn scatter(&mut self, seg: SegmentId, off: usize, data: &[u8], from: usize) {
        let n = data.len() - from;
        if n == 0 {
            return;
        }
        let k = self.rng.gen_range(1..=n.min(4));
        let mut cuts: Vec<usize> = (0..k - 1).map(|_| self.rng.gen_range(1..n)).collect();
        cuts.extend([0, n]);
        cuts.sort_unstable();
        cuts.dedup();
        let mut parts: Vec<(usize, usize)> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
        parts.shuffle(&mut self.rng);
        if parts.len() > 1 {
            self.split += 1;
        }
        for (a, b) in parts {
            let at = from + a;
            self.pending
                .push_back(Piece::Bytes(seg, off + at, data[at..from + b].to_vec()));
        }
    }
}

impl Memory for Segs {
    fn len(&self, seg: SegmentId) -> Option<u64> {
        self.segs.get(&seg).map(|m| m.len() as u64)
    }

    fn write(&mut self, seg: SegmentId, offset: u64, data: &[u8]) {
        let off = offset as usize;
        if data.len() >= 8 && off % 8 == 0 {
            let mut w = [0u8; 8];
            w.copy_from_slice(&data[..8]);
            let word = Piece::Word(seg, off, u64::from_ne_bytes(w));
            if self.order == Order::FlagFirst {
                self.pending.push_back(word);
                self.scatter(seg, off, data, 8);
            } else {
                self.scatter(seg, off, data, 8);
                self.pending.push_back(word);
            }
        } else {
            self.scatter(seg, off, data, 0);
        }
    }

    fn read(&self, seg: SegmentId, offset: u64, out: &mut [u8]) {
        self.segs[&seg]
            .read(offset as usize, out)
            .expect("the engine checked the range");
    }
}

/// A channel window's import on a node's engine: puts are the engine's; a barrier
/// is a flush whose result the driver checks when it comes (nothing here may wait);
/// gets are refused and counted (the channel never reads a remote segment).
#[derive(Debug)]
pub struct EngineSeg {
    pub engine: EngineRef,
    pub imp: Import,
    pub len: usize,
    /// Flushes asked and not yet reported, shared with the driver.
    pub flushes: Arc<Mutex<Vec<FlushId>>>,
    pub gets: Arc<AtomicU64>,
    /// What [`RemoteSegment::one_write`] says: the engine's write size, or None to
    /// hide it (the window then believes any run is one write).
    pub one_write: Option<usize>,
}

/// [`Shared`] with a `Debug` the window needs.
pub struct EngineRef(pub Shared);

impl std::fmt::Debug for EngineRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EngineRef")
    }
}

impl RemoteSegment for EngineSeg {
    fn len(&self) -> usize {
        self.len
    }

    fn put(&self, off: usize, data: &[u8]) -> Result<(), RsmError> {
        lock(&self.engine.0).put(self.imp, off as u64, data)
    }

    fn get(&self, _off: usize, _out: &mut [u8]) -> Result<(), RsmError> {
        self.gets.fetch_add(1, Ordering::Relaxed);
        Err(RsmError::BadConf)
    }

    fn one_write(&self) -> Option<usize> {
        self.one_write
    }

    fn barrier(&self) -> Result<(), RsmError> {
        let f = lock(&self.engine.0).flush(self.imp)?;
        self.flushes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(f);
        Ok(())
    }
}
