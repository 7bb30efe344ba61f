//! Collectives through memory every rank of a communicator maps: one RSM `shm`
//! segment per communicator when its ranks share a node (what Open MPI's coll/sm
//! and MPICH's shared-memory collectives do), or, in tests, heap memory shared by
//! threads ([`heap::HeapMem`]). Sans OS: the algorithms see a [`SharedMem`] (a base
//! pointer and a length) and nothing else; they must never allocate per call on the
//! paths of contiguous buffers, nor make a system call (waits go through
//! [`SpinWait`], which may yield).
//!
//! # Layout ([`Geometry`])
//! Per rank, [`LINES`] *lines* of 64 bytes, then `depth` data slots of `slot` bytes
//! per rank:
//!
//! ```text
//! [rank 0: line 0 … line LINES-1] … [rank n-1: lines] [rank 0: slot 0 … slot depth-1] … [rank n-1: slots]
//! ```
//!
//! A line holds a step stamp (8 bytes) and up to [`INLINE`] bytes of data: a step
//! whose data fits there travels in the very cache line its stamp does (one miss
//! for the reader instead of two, one ownership transfer for the writer).
//!
//! # Protocol
//! Every collective is cut into *steps* (one per chunk of at most a slot), numbered
//! 1, 2, 3 … alike on every rank, since a communicator's collectives are called in
//! the same order everywhere. In step `s` each rank *posts* `s` exactly once (a
//! release store of the stamp of its line `s % LINES`), after writing whatever it
//! contributes to that line or to its slot `s % depth`; readers wait (acquire) for
//! the writer's line `s % LINES` to hold a stamp ≥ `s`, then read in place. Since a
//! rank posts every step in order, that stamp is ≥ `s` exactly when the rank has
//! posted `s` or later. A rank posts step `s` only after it finished reading step
//! `s - 1`, so "every rank has posted `s - k + 1`" means nobody reads what was
//! written for step `s - k` any more: a rank *claims* its line (`k` = `LINES`) or
//! slot (`k` = `depth`) for step `s` by waiting for that (a cached lower bound makes
//! the claim free while nobody lags that far behind). So a bcast root runs up to 63
//! small messages ahead of its readers, which on an oversubscribed machine lets
//! each rank do many calls per time slice. No wait is ever for a step newer than
//! the waiter's, so the slowest rank can always progress (`depth` ≥ 2).
//!
//! Reductions combine in rank order, `d0 op (d1 op (… op d(n-1)))`, the same on
//! every rank, so every rank gets bit-identical results and non-commutative ops stay
//! correct (MPI ops are associative). Large ones are split (`reduce.rs`): each rank
//! reduces its part of the chunk and the others copy the result.
//!
//! Small nonblocking collectives take one step each in the same sequence
//! ([`nb`]); a blocking collective first finishes those still open.

mod direct;
mod direct_reduce;
pub mod heap;
mod lines;
mod moves;
pub mod nb;
mod reduce;

use super::CollError;
pub use direct::{Blocks, PeerMem, SameProcess, DIRECT_MIN};
use myrix_rsm::spin::{self, SpinWait};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes per line.
pub const LINE: usize = 64;

/// Lines per rank: a rank may post this many steps of small data ahead of the
/// slowest reader (a bcast root batches its calls while its readers wait for a core).
pub const LINES: usize = 64;

/// Data bytes a line carries beside its stamp.
pub const INLINE: usize = LINE - 8;

/// Polls of a flag before a wait turns to [`SpinWait`] when the job has a core per
/// rank; a job with more ranks than cores turns to it at once (the rank waited for
/// may need this very core).
pub const HARD_SPIN: u32 = 1000;

/// Polls before a wait yields when the job has more ranks than cores.
pub const HARD_SPIN_OVER: u32 = 0;

/// Smallest chunk (bytes) an allreduce or reduce splits among the ranks.
pub const SPLIT_MIN: usize = 16 * 1024;

/// The data of all ranks (bytes) up to which an MPI_Reduce in a job with more ranks
/// than cores is combined by the root alone (`reduce.rs`; measured in session 29:
/// 64 KiB messages on 8 ranks, 128 KiB on 4).
pub const REDUCE_SOLO_OVER: usize = 512 * 1024;

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

    /// Bytes of one rank's lines.
    fn lines(&self) -> usize {
        LINES * LINE
    }

    /// Bytes the segment needs.
    pub fn len(&self) -> usize {
        self.n * self.lines() + self.n * self.depth * self.slot
    }

    /// Never true for a valid geometry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn check(&self) -> Result<(), CollError> {
        let fits = self
            .n
            .checked_mul(self.depth)
            .and_then(|x| x.checked_mul(self.slot.checked_add(LINES * LINE)?));
        if self.n == 0
            || self.depth < 2
            || self.slot % 64 != 0
            || self.slot / self.n < 64
            || fits.is_none()
        {
            return Err(CollError::Args(format!("bad shm geometry {self:?}")));
        }
        Ok(())
    }
}

/// Where a step's data lies: beside the stamp, or in the slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Area {
    Line,
    Slot,
}

impl Area {
    /// The area for a step whose writer uses `bytes` of it (alike on every rank).
    fn of(bytes: usize) -> Area {
        if bytes <= INLINE {
            Area::Line
        } else {
            Area::Slot
        }
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
    /// Every rank has posted at least this step.
    all_at: u64,
    /// Polls of a flag before a wait turns to [`SpinWait`].
    hard_spin: u32,
    /// The same when the job has more ranks than cores.
    hard_spin_over: u32,
    /// Smallest chunk a reduction splits among the ranks.
    split_min: usize,
    /// MPI_Reduce goes through the slots combined by the root alone (`reduce.rs`),
    /// ahead of the split and the one-copy way, while the ranks' data (ranks × the
    /// message) is at most this many bytes (0: never).
    reduce_solo_max: usize,
    /// Called between polls once a wait turns to [`SpinWait`]: drives what else must
    /// move while this rank waits (nonblocking collectives a peer may be waiting for).
    idle: Option<fn()>,
    /// Copies straight between ranks' memories for large blocks (`direct.rs`).
    peer: Option<Box<dyn PeerMem>>,
    /// Smallest block that goes that way.
    direct_min: usize,
    /// Scratch of the one-copy reduce, kept between calls.
    scratch: Vec<u8>,
    /// Nonblocking operations started and not over, oldest first (`nb.rs`).
    nb: std::collections::VecDeque<nb::NbOp>,
    /// Nonblocking operations started / over (ids count from 0).
    nb_started: u64,
    nb_finished: u64,
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
            hard_spin_over: HARD_SPIN_OVER,
            split_min: SPLIT_MIN,
            reduce_solo_max: 0,
            idle: None,
            peer: None,
            direct_min: DIRECT_MIN,
            scratch: Vec::new(),
            nb: std::collections::VecDeque::new(),
            nb_started: 0,
            nb_finished: 0,
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

    /// The same for a job with more ranks than cores (default [`HARD_SPIN_OVER`]).
    pub fn set_hard_spin_over(&mut self, polls: u32) {
        self.hard_spin_over = polls;
    }

    /// The smallest chunk (bytes) a reduction splits among the ranks (default
    /// [`SPLIT_MIN`]; `usize::MAX`: never). Must be alike on every rank.
    pub fn set_split_min(&mut self, bytes: usize) {
        self.split_min = bytes;
    }

    /// MPI_Reduce whose data of all ranks (ranks × the message) is at most `bytes`
    /// goes through the slots, every chunk combined by the root alone: the other
    /// ranks write and return without waiting (default 0: never; for jobs with more
    /// ranks than cores, [`REDUCE_SOLO_OVER`]). Must be alike on every rank.
    pub fn set_reduce_solo_max(&mut self, bytes: usize) {
        self.reduce_solo_max = bytes;
    }

    /// Lets blocks of `min` bytes or more move in one copy through `peer`
    /// (`direct.rs`). Both must be alike on every rank: set on all or none.
    pub fn set_peer(&mut self, peer: Box<dyn PeerMem>, min: usize) {
        self.peer = Some(peer);
        self.direct_min = min;
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

    /// Rank `q`'s line for step `s`.
    fn line(&self, q: usize, s: u64) -> *mut u8 {
        debug_assert!(q < self.g.n);
        let i = (s % LINES as u64) as usize;
        // SAFETY: inside the segment (n * lines + …, checked in `new`).
        unsafe { self.base.add(q * self.g.lines() + i * LINE) }
    }

    /// The stamp of rank `q`'s line for step `s`.
    fn stamp(&self, q: usize, s: u64) -> &AtomicU64 {
        // SAFETY: the line's first 8 bytes, 8-aligned (the base is, lines are 64
        // bytes), only ever accessed atomically.
        unsafe { &*self.line(q, s).cast::<AtomicU64>() }
    }

    /// Rank `q`'s area for step `s`.
    fn area(&self, q: usize, s: u64, a: Area) -> *mut u8 {
        let g = &self.g;
        match a {
            // SAFETY: the line's data bytes.
            Area::Line => unsafe { self.line(q, s).add(8) },
            Area::Slot => {
                let i = q * g.depth + (s % g.depth as u64) as usize;
                // SAFETY: inside the segment (n*lines + n*depth*slot bytes, checked
                // in `new`).
                unsafe { self.base.add(g.n * g.lines() + i * g.slot) }
            }
        }
    }

    fn cap(&self, a: Area) -> usize {
        match a {
            Area::Line => INLINE,
            Area::Slot => self.g.slot,
        }
    }

    /// `len` bytes at `off` of rank `q`'s area for step `s`, posted by `q` and not
    /// rewritten before this rank posts a later step.
    fn read(&self, q: usize, s: u64, a: Area, off: usize, len: usize) -> &[u8] {
        debug_assert!(off + len <= self.cap(a));
        // SAFETY: inside the area; the protocol keeps writers away until this rank
        // posts step s + 1.
        unsafe { std::slice::from_raw_parts(self.area(q, s, a).add(off), len) }
    }

    /// Writes `data` at `off` of this rank's area for step `s` (claimed).
    fn write(&self, s: u64, a: Area, off: usize, data: &[u8]) {
        debug_assert!(off + data.len() <= self.cap(a));
        // SAFETY: inside this rank's area, which nobody reads until it posts s.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                self.area(self.me, s, a).add(off),
                data.len(),
            )
        }
    }

    /// This rank's area for step `s` (claimed) as a slice to write in place.
    #[allow(clippy::mut_from_ref)]
    fn area_mut(&self, s: u64, a: Area, off: usize, len: usize) -> &mut [u8] {
        debug_assert!(off + len <= self.cap(a));
        // SAFETY: inside this rank's area, which nobody reads until it posts s, and
        // to which no other slice of this rank refers meanwhile.
        unsafe { std::slice::from_raw_parts_mut(self.area(self.me, s, a).add(off), len) }
    }

    /// The next step of a blocking collective: nonblocking operations started
    /// before it finish first (their steps come before).
    fn next(&mut self) -> u64 {
        if !self.nb.is_empty() {
            self.nb_drain();
        }
        self.seq += 1;
        self.seq
    }

    fn post(&self, s: u64) {
        self.stamp(self.me, s).store(s, Ordering::Release);
    }

    /// Waits until rank `q` posted step `s`; returns a step `q` is known to have
    /// posted (≥ `s`).
    fn wait(&self, q: usize, s: u64) -> u64 {
        let f = self.stamp(q, s);
        let mut v = f.load(Ordering::Acquire);
        if v >= s {
            return v;
        }
        // A short hard spin first when every rank has a core: a peer a few hundred
        // nanoseconds behind is the common case. Hardly any when the job
        // oversubscribes the cores: the peer may be waiting for this one.
        let hard = if spin::job_oversubscribed() {
            self.hard_spin_over
        } else {
            self.hard_spin
        };
        for _ in 0..hard {
            std::hint::spin_loop();
            v = f.load(Ordering::Acquire);
            if v >= s {
                return v;
            }
        }
        // The job's ranks per core decide whether to yield, not the machine's load:
        // a yield to another program's process costs a scheduler slice.
        let mut w = SpinWait::for_job();
        let mut k = 0u32;
        loop {
            w.spin();
            k = k.wrapping_add(1);
            if let Some(idle) = self.idle {
                if w.yields() || k % 64 == 0 {
                    idle();
                }
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

    /// Makes this rank's area `a` for step `s` writable: every rank has posted
    /// `s - LINES + 1` (a line) or `s - depth + 1` (a slot), so nobody reads that
    /// area's previous step. (Posting the stamp alone needs no claim: readers of an
    /// older step only ask whether the stamp is at least theirs.)
    fn claim(&mut self, s: u64, a: Area) {
        let back = match a {
            Area::Line => LINES,
            Area::Slot => self.g.depth,
        } as u64;
        let need = s.saturating_sub(back - 1);
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
