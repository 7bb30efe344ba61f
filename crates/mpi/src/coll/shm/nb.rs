//! Nonblocking collectives through the segment (MPI_Ibarrier, Ibcast, Ireduce,
//! Iallreduce, Iallgather, Ialltoall of data that fits a slot): one step each, in
//! the same step sequence as the blocking collectives, so every rank numbers it
//! alike. The data rides in the writer's line when it fits ([`INLINE`] bytes), else
//! in its slot (up to [`ShmColl::nb_max`] bytes per rank), as a blocking step's.
//! Larger blocks go one-copy ways (peers read the caller's memory): Ibcast,
//! Ialltoall and, above a slot, Iallgather in two steps (`nb_try_direct`); Ireduce
//! and Iallreduce above a slot with a predefined op in three (`one_copy_reduce.rs`).
//!
//! An operation is started with [`ShmColl::nb_start`]: it takes the next step
//! number and, when no earlier operation of this rank is still unfinished, writes
//! what its peers read (from the caller's bytes, no copy of its own: see
//! [`NbOp::borrowed`]), posts the step and, if it has nothing to read (a bcast
//! root, a reduce's other ranks), is over at once. An allgather's or alltoall's
//! own block goes straight to the output then; a reduction at a rank that receives
//! reads its own bytes back from its area (a reduce root, whose area nobody reads,
//! writes none and uses the caller's bytes when it is over at the start). Otherwise
//! it waits in a queue; [`ShmColl::nb_progress`] (from the request's
//! test, from a driver the caller files with the point-to-point engine, and before
//! every blocking collective through [`ShmColl::nb_drain`]) moves the queue in
//! order. The protocol's rule stays whole: a rank posts step `s` only after it read
//! step `s - 1`, because an operation posts only once every earlier one is over.
//! Operations finish in the order they started; their ids count up from 0.
//!
//! What this file must never do: block outside [`ShmColl::nb_drain`], write a
//! line or slot before its claim holds, or touch the caller's input after the
//! start (what an unfinished operation still needs of it is copied into the
//! operation before the start returns) — except an input the caller marked
//! [`NbOp::kept`] for the one-copy way: peers read it in place until every one has
//! posted the next step, and it is never written (MPI forbids the caller to change
//! a nonblocking collective's send buffer before completion).

mod one_copy_reduce;

use super::{Area, ShmColl, INLINE};
use crate::coll::CollError;
use crate::datatype::Basic;
use crate::op::BuiltinOp;
use myrix_rsm::spin::SpinWait;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A reduction on packed whole elements: `inout = input op inout`.
pub type CombineFn = Box<dyn FnMut(&[u8], &mut [u8]) + Send>;

/// A reduction a queued operation can run later.
pub enum NbCombine {
    /// A predefined op on a predefined type.
    Builtin(BuiltinOp, Basic),
    /// Anything else: `inout = input op inout` on packed whole elements.
    Boxed(CombineFn),
}

impl NbCombine {
    fn apply(&mut self, input: &[u8], inout: &mut [u8]) {
        match self {
            // The op and type were checked together at the start.
            NbCombine::Builtin(o, b) => {
                let _ = crate::op::reduce(*o, *b, input, inout);
            }
            NbCombine::Boxed(f) => f(input, inout),
        }
    }
}

/// What a nonblocking operation does.
pub enum NbKind {
    Barrier,
    /// The root writes `len` bytes; the others read them.
    Bcast {
        root: usize,
    },
    /// Every rank writes `len` bytes; `root` (every rank when None) combines them
    /// in rank order.
    Reduce {
        root: Option<usize>,
        combine: NbCombine,
    },
    /// Every rank writes a block of `len` bytes; every rank reads all of them.
    Allgather,
    /// Every rank writes `n` blocks of `len / n` bytes; each reads its block of
    /// everyone's.
    Alltoall,
}

/// This rank's contribution: the caller's bytes until the start returns (no copy
/// when the step posts at once, the common case), else a copy — in place when it
/// fits a line (no allocation on the small path), else on the heap.
enum Data {
    /// Valid only inside [`ShmColl::nb_start`] (see [`NbOp::borrowed`]).
    Borrowed(*const u8),
    Inline([u8; INLINE]),
    Heap(Vec<u8>),
    /// Not needed any more: the step posted and this rank's bytes are in its own
    /// area, or it contributes none.
    Gone,
}

impl Data {
    fn owned(data: &[u8]) -> Data {
        if data.len() <= INLINE {
            let mut d = [0u8; INLINE];
            d[..data.len()].copy_from_slice(data);
            Data::Inline(d)
        } else {
            Data::Heap(data.to_vec())
        }
    }

    fn get(&self, len: usize) -> &[u8] {
        match self {
            // SAFETY: `len` bytes, valid while the start runs (`NbOp::borrowed`).
            Data::Borrowed(p) => unsafe { std::slice::from_raw_parts(*p, len) },
            Data::Inline(d) => &d[..len],
            Data::Heap(v) => &v[..len],
            Data::Gone => &[],
        }
    }
}

/// One nonblocking operation of this rank.
pub struct NbOp {
    kind: NbKind,
    /// This rank's contribution (bcast root, reduce, allgather, alltoall); a bcast
    /// reader keeps none.
    data: Data,
    len: usize,
    /// Where the result goes (`out_len` bytes), valid until the operation is over
    /// (the caller's contract, see [`NbOp::new`]).
    out: *mut u8,
    out_len: usize,
    step: u64,
    posted: bool,
    /// Whether this rank's whole contribution sits in its own area of the step
    /// (written at the post), so the completion reads it there.
    own_in_area: bool,
    /// The one-copy way (an Ibcast, Iallgather or Ialltoall of large blocks, see
    /// `nb_try_direct`): two steps, `step` and `step + 1`.
    direct: bool,
    /// Whether this rank posted the second step (its copies are done).
    copied: bool,
    /// Whether `data` is the caller's memory, valid until the operation is over
    /// (it can be exposed to the peers without a copy).
    kept: bool,
    /// Set when a copy of the one-copy way failed here or at a peer.
    failed: Option<Arc<AtomicBool>>,
    /// A one-copy reduction (`one_copy_reduce.rs`): whether this rank posted its
    /// share (step `step + 1`), and the share followed by room for a peer's.
    reduced: bool,
    chunk: Vec<u8>,
}

// SAFETY: `out` is memory the caller promised to this operation until it is over;
// the operation is used by one thread at a time (inside its ShmColl).
unsafe impl Send for NbOp {}

impl NbOp {
    /// An operation of `kind` contributing `data` and writing its result,
    /// `out_len` bytes, at `out`. A bcast reader passes `data` of the message's
    /// length (its bytes are not used). [`ShmColl::nb_start`] refuses more than
    /// [`ShmColl::nb_max`] bytes.
    ///
    /// # Safety
    /// `out` is valid for writing `out_len` bytes until the operation is over
    /// ([`ShmColl::nb_done`]), and nothing else uses that memory meanwhile.
    pub unsafe fn new(
        kind: NbKind,
        data: &[u8],
        out: *mut u8,
        out_len: usize,
    ) -> Result<NbOp, CollError> {
        let reader = matches!(kind, NbKind::Bcast { .. }) && out_len > 0;
        let d = if reader {
            Data::Gone
        } else {
            Data::owned(data)
        };
        Ok(NbOp::with(kind, d, data.len(), out, out_len))
    }

    /// As [`NbOp::new`], but `data` is not copied here: the start reads it in place
    /// when the step posts at once, and copies it only when the operation has to
    /// wait for an earlier one or a claim (`data` may be part of `out`, as in
    /// place).
    ///
    /// # Safety
    /// As [`NbOp::new`]'s; `data` stays valid and unchanged until
    /// [`ShmColl::nb_start`] of this operation returns (it is not used after),
    /// or, when the operation is [`NbOp::kept`], until the operation completes.
    pub unsafe fn borrowed(
        kind: NbKind,
        data: &[u8],
        out: *mut u8,
        out_len: usize,
    ) -> Result<NbOp, CollError> {
        let reader = matches!(kind, NbKind::Bcast { .. }) && out_len > 0;
        let d = if reader {
            Data::Gone
        } else {
            Data::Borrowed(data.as_ptr())
        };
        Ok(NbOp::with(kind, d, data.len(), out, out_len))
    }

    /// An operation not started yet: the one place its fields are filled.
    fn with(kind: NbKind, data: Data, len: usize, out: *mut u8, out_len: usize) -> NbOp {
        NbOp {
            kind,
            data,
            len,
            out,
            out_len,
            step: 0,
            posted: false,
            own_in_area: false,
            direct: false,
            copied: false,
            kept: false,
            failed: None,
            reduced: false,
            chunk: Vec::new(),
        }
    }
}

impl NbOp {
    fn fail(&self) {
        if let Some(f) = &self.failed {
            f.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the completion reads this rank's own contribution (a reduction at a
    /// rank that receives; an allgather's or alltoall's own block is placed at the
    /// post).
    fn needs_own(&self) -> bool {
        matches!(self.kind, NbKind::Reduce { .. }) && self.out_len > 0
    }

    /// Marks `data` (of [`NbOp::borrowed`]) as the caller's memory, left alone
    /// until the operation is over, as MPI's rule for a send buffer: the one-copy
    /// way exposes it to the peers instead of copying it first.
    ///
    /// # Safety
    /// `data` stays valid and unchanged until [`ShmColl::nb_done`] says the
    /// operation is over.
    pub unsafe fn kept(mut self) -> NbOp {
        self.kept = matches!(self.data, Data::Borrowed(_));
        self
    }

    /// `flag` is set if a copy between the ranks' memories fails (the one-copy
    /// way); the operation still ends.
    pub fn on_failure(mut self, flag: Arc<AtomicBool>) -> NbOp {
        self.failed = Some(flag);
        self
    }

    /// A bcast reader's operation: `len` bytes from `root` into `out`.
    ///
    /// # Safety
    /// As [`NbOp::new`]'s, for `len` bytes at `out`.
    pub unsafe fn bcast_reader(root: usize, out: *mut u8, len: usize) -> NbOp {
        NbOp::with(NbKind::Bcast { root }, Data::Gone, len, out, len)
    }
}

impl ShmColl {
    /// Starts `op`; returns its id (see [`ShmColl::nb_done`]). Checks the lengths
    /// against the communicator first (nothing starts on an error).
    pub fn nb_start(&mut self, mut op: NbOp) -> Result<u64, CollError> {
        op.direct = self.nb_one_copy(&op);
        if op.len > self.nb_max() && !op.direct {
            return Err(CollError::Args(format!(
                "{} bytes do not fit a slot of {}",
                op.len,
                self.nb_max()
            )));
        }
        self.nb_start_checked(op)
    }

    /// Whether `op` would go the one-copy way, the only way whose copies can fail
    /// ([`NbOp::on_failure`]): a caller may skip the flag (an allocation per call)
    /// otherwise. The same answer as [`ShmColl::nb_start`]'s until the next start.
    pub fn nb_one_copy(&self, op: &NbOp) -> bool {
        let n = self.g.n;
        match op.kind {
            NbKind::Bcast { .. } => self.one_copy(op.len),
            NbKind::Alltoall => op.len % n == 0 && self.one_copy(op.len / n),
            // Above a slot only (the slots were the faster way up to it, session 28).
            NbKind::Allgather => op.len > self.nb_max() && self.one_copy(op.len),
            // Above a slot, a predefined op (session 29; whole elements per share).
            NbKind::Reduce { .. } => one_copy_reduce::elem(&op.kind).is_some_and(|esz| {
                op.len > self.nb_max() && op.len % esz == 0 && self.one_copy(op.len / n)
            }),
            _ => false,
        }
    }

    /// [`ShmColl::nb_start`] once the way is chosen and the length checked.
    fn nb_start_checked(&mut self, mut op: NbOp) -> Result<u64, CollError> {
        let n = self.g.n;
        let want_out = match &op.kind {
            NbKind::Barrier => 0,
            NbKind::Bcast { root } => {
                self.check_root(*root)?;
                if *root == self.me {
                    0
                } else {
                    op.len
                }
            }
            NbKind::Reduce { root, .. } => {
                if let Some(r) = root {
                    self.check_root(*r)?;
                }
                if root.is_none_or(|r| r == self.me) {
                    op.len
                } else {
                    0
                }
            }
            NbKind::Allgather => op.len * n,
            NbKind::Alltoall => {
                if op.len % n != 0 {
                    return Err(CollError::Args("alltoall: uneven blocks".into()));
                }
                op.len
            }
        };
        if op.out_len != want_out {
            return Err(CollError::Args(format!(
                "nonblocking: {} bytes of output for {want_out}",
                op.out_len
            )));
        }
        self.seq += 1;
        op.step = self.seq;
        if op.direct {
            self.seq += 1;
            if let Some(esz) = one_copy_reduce::elem(&op.kind) {
                // Three steps; the share and a peer's, allocated here, not in a poll.
                self.seq += 1;
                let (lo, hi) = one_copy_reduce::share(op.len, esz, n, self.me);
                op.chunk = vec![0u8; 2 * (hi - lo)];
            }
            // Exposed to the peers until the operation is over: the caller's own
            // memory when it promised to leave it alone, else a copy that does
            // not move with the operation.
            let exposes = match op.kind {
                NbKind::Bcast { root } => root == self.me,
                _ => true,
            };
            if exposes && !op.kept && !matches!(op.data, Data::Heap(_)) {
                op.data = Data::Heap(op.data.get(op.len).to_vec());
            }
        }
        let id = self.nb_started;
        self.nb_started += 1;
        if self.nb.is_empty() && self.nb_try(&mut op) {
            self.nb_finished += 1;
        } else {
            // The caller's bytes are not ours past this call: keep what the rest of
            // the operation needs (nothing once this rank's bytes are in its area).
            if op.direct {
                // Its input is kept or copied already (above).
            } else if let Data::Borrowed(_) = op.data {
                if op.posted && !op.own_in_area && op.needs_own() {
                    // A reduce root's: its claim holds and no peer reads its area.
                    self.write(op.step, Area::of(op.len), 0, op.data.get(op.len));
                    op.own_in_area = true;
                }
                op.data = if op.posted {
                    Data::Gone
                } else {
                    Data::owned(op.data.get(op.len))
                };
            }
            self.nb.push_back(op);
        }
        Ok(id)
    }

    /// The most bytes a rank may contribute to one operation (an Ialltoall: all its
    /// blocks): a slot. Alike on every rank (the geometry is).
    pub fn nb_max(&self) -> usize {
        self.g.slot
    }

    /// Whether operation `id` is over.
    pub fn nb_done(&self, id: u64) -> bool {
        id < self.nb_finished
    }

    /// Whether operation `id` has posted its step (peers no longer wait for this
    /// rank to move it).
    pub fn nb_posted(&self, id: u64) -> bool {
        let queued = self.nb_started - self.nb_finished;
        let first = self.nb_started - queued;
        match id.checked_sub(first) {
            None => true,
            Some(i) => self
                .nb
                .get(i as usize)
                .is_some_and(|o| o.posted && (!o.direct || o.copied)),
        }
    }

    /// Whether operations are unfinished.
    pub fn nb_pending(&self) -> bool {
        !self.nb.is_empty()
    }

    /// Moves the queue as far as it goes without waiting.
    pub fn nb_progress(&mut self) {
        // The queue is lent out while its head runs, so the head is tried where it
        // lies: popping and pushing it back moved the whole operation (two copies
        // of ~150 bytes per empty poll, a third of a waiting rank's time in
        // `perf` when 4 ranks share 2 cores).
        let mut q = std::mem::take(&mut self.nb);
        while let Some(op) = q.front_mut() {
            if !self.nb_try(op) {
                break;
            }
            q.pop_front();
            self.nb_finished += 1;
        }
        self.nb = q;
    }

    /// Finishes every queued operation (before a blocking collective: its steps
    /// come after theirs), waiting as the blocking collectives do.
    pub fn nb_drain(&mut self) {
        let mut polls = 0u32;
        let hard = if myrix_rsm::spin::job_oversubscribed() {
            self.hard_spin_over
        } else {
            self.hard_spin
        };
        let mut w = SpinWait::for_job();
        loop {
            self.nb_progress();
            if self.nb.is_empty() {
                return;
            }
            polls = polls.wrapping_add(1);
            if polls < hard {
                std::hint::spin_loop();
                continue;
            }
            w.spin();
            if let Some(idle) = self.idle {
                if w.yields() || polls % 64 == 0 {
                    idle();
                }
            }
        }
    }

    /// Whether rank `q` has posted step `s` (no wait).
    fn has_posted(&self, q: usize, s: u64) -> bool {
        self.stamp(q, s).load(Ordering::Acquire) >= s
    }

    /// Whether every other rank has posted step `s`.
    fn all_posted(&mut self, s: u64) -> bool {
        if self.all_at >= s {
            return true;
        }
        let mut low = u64::MAX;
        for q in 0..self.g.n {
            if q != self.me {
                let v = self.stamp(q, s).load(Ordering::Acquire);
                if v < s {
                    return false;
                }
                low = low.min(v);
            }
        }
        self.all_at = self.all_at.max(low.min(s));
        true
    }

    /// The claim of this rank's area `a` for step `s`, without waiting (see
    /// `ShmColl::claim`).
    fn try_claim(&mut self, s: u64, a: Area) -> bool {
        let back = match a {
            Area::Line => super::LINES,
            Area::Slot => self.g.depth,
        } as u64;
        let need = s.saturating_sub(back - 1);
        need == 0 || self.all_posted(need)
    }

    /// Runs `op` as far as it goes; true when it is over. Called only for the
    /// oldest unfinished operation.
    fn nb_try(&mut self, op: &mut NbOp) -> bool {
        if op.direct {
            if matches!(op.kind, NbKind::Reduce { .. }) {
                return self.nb_try_reduce_direct(op);
            }
            return self.nb_try_direct(op);
        }
        let s = op.step;
        let me = self.me;
        let n = self.g.n;
        let len = op.len;
        // Alike on every rank: every rank passes the same length.
        let a = Area::of(len);
        if !op.posted {
            let writes = match &op.kind {
                NbKind::Barrier => false,
                NbKind::Bcast { root } => *root == me,
                _ => true,
            };
            if writes {
                if !self.try_claim(s, a) {
                    return false;
                }
                self.nb_write(op, s, a);
            }
            self.post(s);
            op.posted = true;
        }
        match &mut op.kind {
            NbKind::Barrier => self.all_posted(s),
            NbKind::Bcast { root } => {
                if *root == me {
                    return true;
                }
                if !self.has_posted(*root, s) {
                    return false;
                }
                // SAFETY: `out` holds `len` bytes (checked at the start).
                let out = unsafe { std::slice::from_raw_parts_mut(op.out, len) };
                out.copy_from_slice(self.read(*root, s, a, 0, len));
                true
            }
            NbKind::Reduce { root, combine } => {
                if root.is_some_and(|r| r != me) {
                    return true;
                }
                if !self.all_posted(s) {
                    return false;
                }
                // Never part of `out` (an in-place contribution is in the area).
                let own = if op.own_in_area {
                    self.read(me, s, a, 0, len)
                } else {
                    op.data.get(len)
                };
                // SAFETY: as above.
                let out = unsafe { std::slice::from_raw_parts_mut(op.out, len) };
                // d0 op (d1 op (… op d(n-1))), as the blocking reduction.
                let last = n - 1;
                if last == me {
                    out.copy_from_slice(own);
                } else {
                    out.copy_from_slice(self.read(last, s, a, 0, len));
                }
                for q in (0..last).rev() {
                    let d = if q == me {
                        own
                    } else {
                        self.read(q, s, a, 0, len)
                    };
                    combine.apply(d, out);
                }
                true
            }
            NbKind::Allgather => {
                if !self.all_posted(s) {
                    return false;
                }
                // SAFETY: `out` holds n blocks of `len` bytes.
                let out = unsafe { std::slice::from_raw_parts_mut(op.out, len * n) };
                // This rank's own block went there at the post.
                for (q, b) in out.chunks_exact_mut(len.max(1)).enumerate().take(n) {
                    if q != me {
                        b.copy_from_slice(self.read(q, s, a, 0, len));
                    }
                }
                true
            }
            NbKind::Alltoall => {
                if !self.all_posted(s) {
                    return false;
                }
                let b = len / n;
                // SAFETY: `out` holds n blocks of `b` bytes.
                let out = unsafe { std::slice::from_raw_parts_mut(op.out, len) };
                for q in (0..n).filter(|&q| q != me) {
                    out[q * b..(q + 1) * b].copy_from_slice(self.read(q, s, a, me * b, b));
                }
                true
            }
        }
    }

    /// The one-copy way for an Ibcast, Iallgather or Ialltoall of blocks of
    /// `one_copy` size: in step `s` the ranks whose input the others read (the
    /// root; every rank of an allgather or alltoall) post its address in their
    /// lines; every reader copies straight
    /// from there with [`super::direct::PeerMem`] and posts `s + 1` with a status
    /// word (1: a copy failed); an exposing rank is over once every rank posted
    /// `s + 1` (its input is read until then). As the blocking `bcast_direct` and
    /// alltoall, so the steps mean the same to every rank.
    fn nb_try_direct(&mut self, op: &mut NbOp) -> bool {
        let (s, me, n, len) = (op.step, self.me, self.g.n, op.len);
        let d = s + 1;
        let exposes = match op.kind {
            NbKind::Bcast { root } => root == me,
            _ => true,
        };
        if !op.posted {
            if exposes {
                if !self.try_claim(s, Area::Line) {
                    return false;
                }
                let at = op.data.get(len).as_ptr() as u64;
                self.write(s, Area::Line, 0, &at.to_le_bytes());
            }
            self.post(s);
            op.posted = true;
        }
        if !op.copied {
            let ready = match op.kind {
                NbKind::Bcast { root } => exposes || self.has_posted(root, s),
                _ => self.all_posted(s),
            };
            // The claim first: the copies are done once.
            if !ready || !self.try_claim(d, Area::Line) {
                return false;
            }
            let mut ok = true;
            match op.kind {
                NbKind::Bcast { root } if !exposes => {
                    // SAFETY: `out` holds `len` bytes (checked at the start).
                    let out = unsafe { std::slice::from_raw_parts_mut(op.out, len) };
                    ok = self.peer_read(root, self.exposed_at(root, s), out);
                }
                NbKind::Allgather => {
                    // SAFETY: `out` holds n blocks of `len` bytes (checked at the
                    // start).
                    let out = unsafe { std::slice::from_raw_parts_mut(op.out, len * n) };
                    for q in (0..n).filter(|&q| q != me) {
                        let at = self.exposed_at(q, s);
                        ok &= self.peer_read(q, at, &mut out[q * len..(q + 1) * len]);
                    }
                    // SAFETY: as above; an in-place input was copied at the start,
                    // and `copy` allows an overlap anyway.
                    unsafe { std::ptr::copy(op.data.get(len).as_ptr(), op.out.add(me * len), len) };
                }
                NbKind::Alltoall => {
                    let b = len / n;
                    // SAFETY: `out` holds n blocks of `b` bytes; the input is not
                    // part of it (no in-place alltoall here).
                    let out = unsafe { std::slice::from_raw_parts_mut(op.out, len) };
                    for q in (0..n).filter(|&q| q != me) {
                        // The address came from shared memory: a bad one fails the
                        // read, never the arithmetic.
                        let at = self.exposed_at(q, s).wrapping_add(me * b);
                        ok &= self.peer_read(q, at, &mut out[q * b..(q + 1) * b]);
                    }
                    out[me * b..(me + 1) * b]
                        .copy_from_slice(&op.data.get(len)[me * b..(me + 1) * b]);
                }
                _ => {}
            }
            self.write(d, Area::Line, 0, &u64::from(!ok).to_le_bytes());
            self.post(d);
            op.copied = true;
            if !ok {
                op.fail();
            }
        }
        if exposes {
            if !self.all_posted(d) {
                return false;
            }
            let failed = (0..n)
                .filter(|&q| q != me)
                .any(|q| self.read(q, d, Area::Line, 0, 8) != [0u8; 8]);
            if failed {
                op.fail();
            }
        }
        true
    }

    /// The address rank `q` posted in its line for step `s` (posted).
    fn exposed_at(&self, q: usize, s: u64) -> usize {
        let mut w = [0u8; 8];
        w.copy_from_slice(self.read(q, s, Area::Line, 0, 8));
        u64::from_le_bytes(w) as usize
    }

    /// Writes what the peers of `op` read into this rank's area for step `s`
    /// (claimed), and this rank's own block of an allgather or alltoall straight
    /// into its output: one copy of each byte, from the caller's memory when the
    /// step posts at the start.
    fn nb_write(&self, op: &mut NbOp, s: u64, a: Area) {
        let me = self.me;
        let len = op.len;
        let d = op.data.get(len);
        match &op.kind {
            NbKind::Alltoall => {
                let b = len / self.g.n;
                // Peers read only their own blocks.
                self.write(s, a, 0, &d[..me * b]);
                self.write(s, a, (me + 1) * b, &d[(me + 1) * b..]);
                // SAFETY: `out` holds n blocks of `b` bytes (checked at the start);
                // `copy` allows an overlap with the input.
                unsafe { std::ptr::copy(d.as_ptr().add(me * b), op.out.add(me * b), b) };
            }
            NbKind::Allgather => {
                self.write(s, a, 0, d);
                // SAFETY: `out` holds n blocks of `len` bytes; as above.
                unsafe { std::ptr::copy(d.as_ptr(), op.out.add(me * len), len) };
            }
            // Nobody reads a reduce root's area: its bytes stay where they are
            // (copied at the start if the operation has to wait), unless they are
            // part of the output the completion overwrites.
            NbKind::Reduce { root: Some(r), .. }
                if *r == me && !overlaps(d, op.out, op.out_len) => {}
            _ => {
                self.write(s, a, 0, d);
                op.own_in_area = true;
            }
        }
    }
}

/// Whether `d` and the `len` bytes at `out` share memory.
fn overlaps(d: &[u8], out: *const u8, len: usize) -> bool {
    let (a, b) = (d.as_ptr() as usize, out as usize);
    !d.is_empty() && len > 0 && a < b + len && b < a + d.len()
}
