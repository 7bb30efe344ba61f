//! Collectives through memory every rank of a communicator maps: one RSM `shm`
//! segment per communicator when its ranks share a node (what Open MPI's coll/sm
//! and MPICH's shared-memory collectives do), or, in tests, heap memory shared by
//! threads ([`heap::HeapMem`]). Sans OS: the algorithms see a [`SharedMem`] (a base
//! pointer and a length) and nothing else.
//!
//! # Layout ([`Geometry`])
//! One flag line (128 bytes, so neighbours never share a cache line or its
//! prefetched pair) per rank, then `depth` data slots of `slot` bytes per rank:
//!
//! ```text
//! [flag 0][flag 1]…[flag n-1] [rank 0: slot 0 … slot depth-1] … [rank n-1: …]
//! ```
//!
//! # Protocol
//! Every collective is cut into *steps* (one per chunk of at most a slot), numbered
//! 1, 2, 3 … alike on every rank, since a communicator's collectives are called in
//! the same order everywhere. In step `s` each rank *posts* `s` in its flag exactly
//! once (a release store), after writing whatever it contributes to its slot
//! `s % depth`; readers wait (acquire) for the writer's flag to reach `s`, then read
//! the slot directly. A rank posts step `s` only after it finished reading step
//! `s - 1`, so "every rank's flag ≥ `s - depth + 1`" means nobody reads the slot of
//! step `s - depth` any more: a rank *claims* its slot for step `s` by waiting for
//! that (a cached lower bound makes the claim free while nobody lags `depth - 1`
//! steps behind). No wait is ever for a step newer than the waiter's, so the
//! slowest rank can always progress (`depth` ≥ 2).
//!
//! Reductions are applied by the reading rank in rank order,
//! `d0 op (d1 op (… op d(n-1)))`, the same on every rank, so every rank computes
//! bit-identical results and non-commutative ops stay correct (MPI ops are
//! associative). Every wait is a [`SpinWait`] (it yields on an oversubscribed
//! machine).

pub mod heap;

use super::{CollError, ReduceOp};
use myrix_rsm::spin::SpinWait;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes per flag line.
pub const LINE: usize = 128;

/// Polls of a flag before a wait turns to [`SpinWait`] (a few microseconds).
pub const HARD_SPIN: u32 = 1000;

/// Memory every rank of the communicator maps at some address of its own.
pub trait SharedMem: Send {
    /// The first byte (aligned to 8 at least).
    fn ptr(&self) -> *mut u8;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The shape of a communicator's segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Ranks.
    pub n: usize,
    /// Bytes per data slot (a multiple of 64, at least 64 per rank).
    pub slot: usize,
    /// Slots per rank (at least 2).
    pub depth: usize,
}

impl Geometry {
    /// The default slot size.
    pub const SLOT: usize = 32 * 1024;
    /// The default number of slots per rank.
    pub const DEPTH: usize = 4;

    /// The default geometry for `n` ranks.
    pub fn new(n: usize) -> Geometry {
        Geometry {
            n,
            slot: Self::SLOT,
            depth: Self::DEPTH,
        }
    }

    /// Bytes the segment needs.
    pub fn len(&self) -> usize {
        self.n * LINE + self.n * self.depth * self.slot
    }

    /// Never true for a valid geometry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn check(&self) -> Result<(), CollError> {
        if self.n == 0 || self.depth < 2 || self.slot % 64 != 0 || self.slot / self.n < 64 {
            return Err(CollError::Args(format!("bad shm geometry {self:?}")));
        }
        Ok(())
    }
}

/// One rank's view of a communicator's shared segment, and its step count.
pub struct ShmColl {
    mem: Box<dyn SharedMem>,
    base: *mut u8,
    g: Geometry,
    me: usize,
    /// The last step this rank posted.
    seq: u64,
    /// Every rank's flag is known to be at least this.
    all_at: u64,
    /// Polls of a flag before a wait turns to [`SpinWait`].
    hard_spin: u32,
    /// Called between polls once a wait turns to [`SpinWait`]: drives what else must
    /// move while this rank waits (nonblocking collectives a peer may be waiting for).
    idle: Option<fn()>,
}

// SAFETY: the raw base pointer points into `mem`, which is Send; a ShmColl is used
// by one thread at a time (it needs &mut for every collective).
unsafe impl Send for ShmColl {}

impl ShmColl {
    /// Rank `me` of `g.n` over `mem`, which every rank maps, zeroed before any rank
    /// first uses it, at least `g.len()` bytes and 8-aligned.
    pub fn new(mem: Box<dyn SharedMem>, g: Geometry, me: usize) -> Result<ShmColl, CollError> {
        g.check()?;
        if me >= g.n || mem.len() < g.len() || mem.ptr() as usize % 8 != 0 {
            return Err(CollError::Args(format!(
                "shm segment of {} bytes for rank {me} of {g:?}",
                mem.len()
            )));
        }
        let base = mem.ptr();
        Ok(ShmColl {
            mem,
            base,
            g,
            me,
            seq: 0,
            all_at: 0,
            hard_spin: HARD_SPIN,
            idle: None,
        })
    }

    /// Sets the function a long wait calls between polls.
    pub fn set_idle(&mut self, f: fn()) {
        self.idle = Some(f);
    }

    /// Polls of a flag before a wait turns to [`SpinWait`] (default [`HARD_SPIN`]).
    pub fn set_hard_spin(&mut self, polls: u32) {
        self.hard_spin = polls;
    }

    pub fn rank(&self) -> usize {
        self.me
    }

    pub fn size(&self) -> usize {
        self.g.n
    }

    pub fn geometry(&self) -> Geometry {
        self.g
    }

    /// The memory (to release it).
    pub fn into_mem(self) -> Box<dyn SharedMem> {
        self.mem
    }

    fn flag(&self, q: usize) -> &AtomicU64 {
        debug_assert!(q < self.g.n);
        // SAFETY: flag lines lie inside the segment (checked in `new`), 8-aligned,
        // and are only ever accessed atomically.
        unsafe { &*self.base.add(q * LINE).cast::<AtomicU64>() }
    }

    /// Rank `q`'s slot for step `s`.
    fn slot(&self, q: usize, s: u64) -> *mut u8 {
        let g = &self.g;
        let i = q * g.depth + (s % g.depth as u64) as usize;
        // SAFETY: inside the segment (n*LINE + n*depth*slot bytes, checked in `new`).
        unsafe { self.base.add(g.n * LINE + i * g.slot) }
    }

    /// `len` bytes of rank `q`'s slot for step `s`, posted by `q` and not rewritten
    /// before this rank posts a later step.
    fn read(&self, q: usize, s: u64, off: usize, len: usize) -> &[u8] {
        debug_assert!(off + len <= self.g.slot);
        // SAFETY: inside the slot; the protocol keeps writers away until this rank
        // posts step s + 1.
        unsafe { std::slice::from_raw_parts(self.slot(q, s).add(off), len) }
    }

    /// Writes `data` at `off` of this rank's slot for step `s` (claimed).
    fn write(&self, s: u64, off: usize, data: &[u8]) {
        debug_assert!(off + data.len() <= self.g.slot);
        // SAFETY: inside this rank's slot, which nobody reads until it posts s.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.slot(self.me, s).add(off), data.len())
        }
    }

    fn next(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn post(&self, s: u64) {
        self.flag(self.me).store(s, Ordering::Release);
    }

    /// Waits until rank `q` posted step `s`; returns its flag.
    fn wait(&self, q: usize, s: u64) -> u64 {
        let f = self.flag(q);
        let mut v = f.load(Ordering::Acquire);
        if v >= s {
            return v;
        }
        // A short hard spin first: a peer a few hundred nanoseconds behind is the
        // common case, and yielding then (SpinWait yields at once when the machine
        // looks busy) costs microseconds.
        for _ in 0..self.hard_spin {
            std::hint::spin_loop();
            v = f.load(Ordering::Acquire);
            if v >= s {
                return v;
            }
        }
        let mut w = SpinWait::new();
        loop {
            w.spin();
            if let Some(idle) = self.idle {
                idle();
            }
            v = f.load(Ordering::Acquire);
            if v >= s {
                return v;
            }
        }
    }

    /// Waits for every other rank's step `s`.
    fn wait_all(&mut self, s: u64) {
        let mut low = u64::MAX;
        for q in 0..self.g.n {
            if q != self.me {
                low = low.min(self.wait(q, s));
            }
        }
        self.all_at = self.all_at.max(low.min(s));
    }

    /// Makes this rank's slot for step `s` writable: every rank has posted
    /// `s - depth + 1`, so nobody reads the slot's previous step.
    fn claim(&mut self, s: u64) {
        let need = s.saturating_sub(self.g.depth as u64 - 1);
        if self.all_at >= need {
            return;
        }
        let mut low = u64::MAX;
        for q in 0..self.g.n {
            if q != self.me {
                low = low.min(self.wait(q, need));
            }
        }
        self.all_at = self.all_at.max(low);
    }

    /// MPI_Barrier: every rank posts a step and waits for every other's.
    pub fn barrier(&mut self) {
        let s = self.next();
        self.post(s);
        self.wait_all(s);
    }

    /// MPI_Bcast of `buf` (the same length everywhere) from `root`, a slot per step.
    pub fn bcast(&mut self, root: usize, buf: &mut [u8]) -> Result<(), CollError> {
        self.check_root(root)?;
        if self.g.n == 1 {
            return Ok(());
        }
        let slot = self.g.slot;
        let mut off = 0;
        loop {
            let c = slot.min(buf.len() - off);
            let s = self.next();
            if self.me == root {
                self.claim(s);
                self.write(s, 0, &buf[off..off + c]);
                self.post(s);
            } else {
                self.post(s);
                self.wait(root, s);
                buf[off..off + c].copy_from_slice(self.read(root, s, 0, c));
            }
            off += c;
            if off >= buf.len() {
                return Ok(());
            }
        }
    }

    /// MPI_Reduce of every rank's `send` into `recv` at `root` (`recv` as long as
    /// `send` there, unused elsewhere); `elem` bytes per element.
    pub fn reduce(
        &mut self,
        root: usize,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
        op: &mut ReduceOp,
    ) -> Result<(), CollError> {
        self.check_root(root)?;
        if self.me == root {
            super::check_len("reduce", recv.len(), send.len())?;
        }
        self.reduce_to(Some(root), send, recv, elem, op)
    }

    /// MPI_Allreduce: every rank's `send` reduced into every `recv`.
    pub fn allreduce(
        &mut self,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
        op: &mut ReduceOp,
    ) -> Result<(), CollError> {
        super::check_len("allreduce", recv.len(), send.len())?;
        self.reduce_to(None, send, recv, elem, op)
    }

    fn reduce_to(
        &mut self,
        root: Option<usize>,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
        op: &mut ReduceOp,
    ) -> Result<(), CollError> {
        if elem == 0 || send.len() % elem != 0 {
            return Err(CollError::Args(format!(
                "{} bytes are not whole elements of {elem}",
                send.len()
            )));
        }
        let (n, me) = (self.g.n, self.me);
        let chunk = (self.g.slot / elem).max(1) * elem;
        if chunk > self.g.slot {
            return Err(CollError::Args(format!(
                "elements of {elem} bytes do not fit a slot of {}",
                self.g.slot
            )));
        }
        let mut off = 0;
        loop {
            let c = chunk.min(send.len() - off);
            let s = self.next();
            let mine = &send[off..off + c];
            let reads = match root {
                None => true,
                Some(r) => r == me,
            };
            if reads && root.is_some() {
                // The root's contribution never leaves it.
                self.post(s);
            } else {
                self.claim(s);
                self.write(s, 0, mine);
                self.post(s);
            }
            if reads {
                self.wait_all(s);
                let acc = &mut recv[off..off + c];
                let last = n - 1;
                acc.copy_from_slice(if last == me {
                    mine
                } else {
                    self.read(last, s, 0, c)
                });
                for q in (0..last).rev() {
                    let d = if q == me { mine } else { self.read(q, s, 0, c) };
                    op.apply(d, acc);
                }
            }
            off += c;
            if off >= send.len() {
                return Ok(());
            }
        }
    }

    /// MPI_Gather: every rank's `send` (the same length everywhere) into `recv` at
    /// `root`, rank after rank.
    pub fn gather(&mut self, root: usize, send: &[u8], recv: &mut [u8]) -> Result<(), CollError> {
        self.check_root(root)?;
        let (n, me, b) = (self.g.n, self.me, send.len());
        if me == root {
            super::check_len("gather", recv.len(), n * b)?;
            recv[me * b..(me + 1) * b].copy_from_slice(send);
        }
        if n == 1 || b == 0 {
            return Ok(());
        }
        let mut off = 0;
        while off < b {
            let c = self.g.slot.min(b - off);
            let s = self.next();
            if me == root {
                self.post(s);
                for q in (0..n).filter(|&q| q != me) {
                    self.wait(q, s);
                    recv[q * b + off..q * b + off + c].copy_from_slice(self.read(q, s, 0, c));
                }
            } else {
                self.claim(s);
                self.write(s, 0, &send[off..off + c]);
                self.post(s);
            }
            off += c;
        }
        Ok(())
    }

    /// MPI_Scatter: block `q` of the root's `send` (`n` blocks of `recv.len()`) to
    /// rank `q`'s `recv`.
    pub fn scatter(&mut self, root: usize, send: &[u8], recv: &mut [u8]) -> Result<(), CollError> {
        self.check_root(root)?;
        let (n, me, b) = (self.g.n, self.me, recv.len());
        if me == root {
            super::check_len("scatter", send.len(), n * b)?;
            recv.copy_from_slice(&send[me * b..(me + 1) * b]);
        }
        if n == 1 || b == 0 {
            return Ok(());
        }
        let per = self.per_rank();
        let mut off = 0;
        while off < b {
            let c = per.min(b - off);
            let s = self.next();
            if me == root {
                self.claim(s);
                for q in (0..n).filter(|&q| q != me) {
                    self.write(s, q * per, &send[q * b + off..q * b + off + c]);
                }
                self.post(s);
            } else {
                self.post(s);
                self.wait(root, s);
                recv[off..off + c].copy_from_slice(self.read(root, s, me * per, c));
            }
            off += c;
        }
        Ok(())
    }

    /// MPI_Allgather: every rank's `send` into every `recv`, rank after rank.
    pub fn allgather(&mut self, send: &[u8], recv: &mut [u8]) -> Result<(), CollError> {
        let (n, b) = (self.g.n, send.len());
        let counts = vec![b; n];
        let displs: Vec<usize> = (0..n).map(|q| q * b).collect();
        self.allgatherv(send, recv, &counts, &displs)
    }

    /// MPI_Allgatherv on packed bytes: rank `q`'s `counts[q]` bytes at `displs[q]` of
    /// every `recv` (`send` is this rank's block).
    pub fn allgatherv(
        &mut self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<(), CollError> {
        let (n, me) = (self.g.n, self.me);
        super::check_blocks("allgatherv", n, counts, displs, recv.len())?;
        super::check_len("allgatherv", send.len(), counts[me])?;
        recv[displs[me]..displs[me] + counts[me]].copy_from_slice(send);
        let most = counts.iter().copied().max().unwrap_or(0);
        if n == 1 || most == 0 {
            return Ok(());
        }
        let slot = self.g.slot;
        let mut off = 0;
        while off < most {
            let s = self.next();
            let mine = counts[me].saturating_sub(off).min(slot);
            if mine > 0 {
                self.claim(s);
                self.write(s, 0, &send[off..off + mine]);
            }
            self.post(s);
            for q in (0..n).filter(|&q| q != me) {
                let c = counts[q].saturating_sub(off).min(slot);
                if c > 0 {
                    self.wait(q, s);
                    let at = displs[q] + off;
                    recv[at..at + c].copy_from_slice(self.read(q, s, 0, c));
                }
            }
            // Ranks with nothing left this step still post it; wait for them too so
            // the claim cache stays right.
            self.wait_all(s);
            off += slot;
        }
        Ok(())
    }

    /// MPI_Alltoall: block `q` of `send` (`n` blocks of equal length) to rank `q`,
    /// whose `recv` gets it as block `me`.
    pub fn alltoall(&mut self, send: &[u8], recv: &mut [u8]) -> Result<(), CollError> {
        let (n, me) = (self.g.n, self.me);
        if send.len() % n != 0 {
            return Err(CollError::Args(format!(
                "alltoall: {} bytes for {n} ranks",
                send.len()
            )));
        }
        super::check_len("alltoall", recv.len(), send.len())?;
        let b = send.len() / n;
        recv[me * b..(me + 1) * b].copy_from_slice(&send[me * b..(me + 1) * b]);
        if n == 1 || b == 0 {
            return Ok(());
        }
        let per = self.per_rank();
        let mut off = 0;
        while off < b {
            let c = per.min(b - off);
            let s = self.next();
            self.claim(s);
            for q in (0..n).filter(|&q| q != me) {
                self.write(s, q * per, &send[q * b + off..q * b + off + c]);
            }
            self.post(s);
            for q in (0..n).filter(|&q| q != me) {
                self.wait(q, s);
                recv[q * b + off..q * b + off + c].copy_from_slice(self.read(q, s, me * per, c));
            }
            self.all_at = self.all_at.max(s);
            off += c;
        }
        Ok(())
    }

    /// Bytes of one slot for each rank (scatter, alltoall), cache-line sized.
    fn per_rank(&self) -> usize {
        ((self.g.slot / self.g.n) & !63)
            .max(64)
            .min(self.g.slot / self.g.n)
    }

    fn check_root(&self, root: usize) -> Result<(), CollError> {
        if root < self.g.n {
            Ok(())
        } else {
            Err(CollError::Root {
                root,
                size: self.g.n,
            })
        }
    }
}
