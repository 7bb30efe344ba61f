//! A collective schedule: a straight-line program of steps (start a send, start a
//! receive, copy bytes, combine bytes with the reduction, poll work outside the
//! engine until it is done) separated by fences, and
//! its execution by the point-to-point engine.
//!
//! A [`Builder`] records the steps against regions (the caller's memory, promised
//! valid until completion, or scratch the schedule owns); every offset is checked
//! when the step is recorded, so a finished [`Schedule`] only holds pointers that
//! are in bounds. [`Engine::start_schedule`] puts it in the engine's request table
//! as an ordinary request; every `progress` call of the engine then runs each live
//! schedule forward: steps run in order, sends and receives only start (their
//! requests join the schedule's pending list), a fence waits until every started
//! request has completed. So any call that makes progress — a blocking receive, a
//! wait on another request, a blocking collective — moves nonblocking collectives
//! too.
//!
//! What this file must never do: allocate once the schedule is started (the pending
//! list is sized when the schedule is built), run a step whose memory a started
//! request may still touch (the builders place fences), or free memory a request
//! may still write (an error cancels the pending receives and waits for them).

use crate::p2p::engine::Engine;
use crate::p2p::fabric::{Fabric, Rank};
use crate::p2p::request::{Phase, Request, UserBuf};
use crate::p2p::{P2pError, ReqId, SendMode, Status};

use super::super::CollError;

/// `inout = input op inout` on whole elements (MPI_User_function's shape).
pub type Combine = Box<dyn FnMut(&[u8], &mut [u8]) + Send>;

/// A region steps refer to: the caller's memory or the schedule's scratch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buf(usize);

#[derive(Clone, Copy)]
struct Region {
    ptr: *mut u8,
    len: usize,
}

enum Step {
    Send {
        to: Rank,
        ptr: *const u8,
        len: usize,
    },
    Recv {
        from: Rank,
        ptr: *mut u8,
        len: usize,
    },
    Copy {
        from: *const u8,
        to: *mut u8,
        len: usize,
    },
    /// `inout = input op inout`.
    Reduce {
        input: *const u8,
        inout: *mut u8,
        len: usize,
    },
    Fence,
    /// Runs until it returns true (work outside the engine that must move in every
    /// progress call: a nonblocking collective on a shared segment); fails the
    /// schedule when one of `peers` is lost (that work would wait for it forever).
    Poll {
        f: Poll,
        peers: Box<[Rank]>,
    },
}

/// A [`Step::Poll`]'s function.
pub type Poll = Box<dyn FnMut() -> bool + Send>;

/// A started request of the schedule: its id and, for a receive, the length it
/// must deliver.
struct Pending {
    id: ReqId,
    recv: Option<usize>,
}

/// A collective's whole program, for one rank; see the module docs.
pub struct Schedule {
    ctx: u32,
    tag: i32,
    steps: Vec<Step>,
    pc: usize,
    pending: Vec<Pending>,
    combine: Option<Combine>,
    /// Scratch regions; never resized, so pointers into them stay valid.
    _scratch: Vec<Vec<u8>>,
    error: Option<P2pError>,
    cancelled: bool,
}

impl std::fmt::Debug for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schedule")
            .field("tag", &self.tag)
            .field("pc", &self.pc)
            .field("steps", &self.steps.len())
            .field("pending", &self.pending.len())
            .finish()
    }
}

// SAFETY: the raw pointers are the caller's memory (which the unsafe
// `Builder::user` promised valid and untouched by others until completion) or the
// schedule's own scratch; the schedule is used by one thread at a time (through
// `&mut Engine`), so moving it moves their only user.
unsafe impl Send for Schedule {}

/// Records a [`Schedule`]: regions, then steps. Ranks are the communicator's; they
/// are translated to world ranks through the table given to [`Builder::new`].
pub struct Builder<'r> {
    ranks: &'r [u32],
    me: usize,
    /// The communicator's ranks and this rank in them (`ranks`/`me` may name a
    /// subgroup for a while: [`Builder::group`]).
    all: &'r [u32],
    all_me: usize,
    regions: Vec<Region>,
    scratch: Vec<Vec<u8>>,
    steps: Vec<Step>,
    combine: Option<Combine>,
    error: Option<CollError>,
    ctx: u32,
    tag: i32,
}

impl<'r> Builder<'r> {
    /// A schedule for rank `me` of the communicator whose world ranks are `ranks`,
    /// on context `ctx` (the collective context) with `tag`.
    pub fn new(ranks: &'r [u32], me: usize, ctx: u32, tag: i32) -> Self {
        Builder {
            ranks,
            me,
            all: ranks,
            all_me: me,
            regions: Vec::new(),
            scratch: Vec::new(),
            steps: Vec::new(),
            combine: None,
            error: None,
            ctx,
            tag,
        }
    }

    /// Until [`Builder::whole`], ranks are those of a subgroup of the communicator:
    /// the world ranks `ranks`, this rank `me` of them (a level of a collective by
    /// levels). Messages stay on the communicator's context and tag; the builder
    /// must keep MPI's order between any two ranks (the levels' phases are fenced).
    pub fn group(&mut self, ranks: &'r [u32], me: usize) {
        if ranks.get(me) != self.all.get(self.all_me) {
            self.error.get_or_insert(CollError::Args(
                "schedule: this rank is not in the subgroup".into(),
            ));
        }
        self.ranks = ranks;
        self.me = me;
    }

    /// Back to the whole communicator's ranks.
    pub fn whole(&mut self) {
        self.ranks = self.all;
        self.me = self.all_me;
    }

    /// This rank in the communicator (or the subgroup, [`Builder::group`]).
    pub fn rank(&self) -> usize {
        self.me
    }

    /// The communicator's size.
    pub fn size(&self) -> usize {
        self.ranks.len()
    }

    /// The reduction the schedule's reduce steps use.
    pub fn set_combine(&mut self, c: Combine) {
        self.combine = Some(c);
    }

    /// The caller's memory: `len` bytes at `ptr`.
    ///
    /// # Safety
    /// `ptr` is valid for reading and writing `len` bytes (for reading only if the
    /// schedule never writes this region) from the schedule's start until its request
    /// completes, and nothing else writes it meanwhile.
    pub unsafe fn user(&mut self, ptr: *mut u8, len: usize) -> Buf {
        let ptr = if len == 0 {
            std::ptr::NonNull::dangling().as_ptr()
        } else {
            ptr
        };
        self.regions.push(Region { ptr, len });
        Buf(self.regions.len() - 1)
    }

    /// `len` bytes of scratch owned by the schedule (zeroed).
    pub fn scratch(&mut self, len: usize) -> Buf {
        let mut v = super::pool::take(len);
        let ptr = if len == 0 {
            std::ptr::NonNull::dangling().as_ptr()
        } else {
            v.as_mut_ptr()
        };
        self.scratch.push(v);
        self.regions.push(Region { ptr, len });
        Buf(self.regions.len() - 1)
    }

    /// The length of a region.
    pub fn len_of(&self, b: Buf) -> usize {
        self.regions.get(b.0).map_or(0, |r| r.len)
    }

    fn at(&mut self, b: Buf, off: usize, len: usize) -> Option<*mut u8> {
        let r = self.regions.get(b.0).copied();
        match r {
            Some(r) if off.checked_add(len).is_some_and(|e| e <= r.len) => {
                Some(r.ptr.wrapping_add(off))
            }
            _ => {
                self.error.get_or_insert(CollError::Args(format!(
                    "schedule: {len} bytes at {off} outside a region"
                )));
                None
            }
        }
    }

    fn world(&mut self, r: usize) -> Option<Rank> {
        let w = self.ranks.get(r).copied();
        if w.is_none() {
            self.error.get_or_insert(CollError::Args(format!(
                "schedule: rank {r} is not in the communicator"
            )));
        }
        w
    }

    /// Starts sending `len` bytes at `off` of `b` to rank `to`.
    pub fn send(&mut self, to: usize, b: Buf, off: usize, len: usize) {
        if let (Some(to), Some(ptr)) = (self.world(to), self.at(b, off, len)) {
            self.steps.push(Step::Send {
                to,
                ptr: ptr.cast_const(),
                len,
            });
        }
    }

    /// Starts receiving exactly `len` bytes from rank `from` into `off` of `b`.
    pub fn recv(&mut self, from: usize, b: Buf, off: usize, len: usize) {
        if let (Some(from), Some(ptr)) = (self.world(from), self.at(b, off, len)) {
            self.steps.push(Step::Recv { from, ptr, len });
        }
    }

    /// Copies `len` bytes (regions must not overlap unless identical: then nothing).
    pub fn copy(&mut self, from: Buf, foff: usize, to: Buf, toff: usize, len: usize) {
        if let (Some(f), Some(t)) = (self.at(from, foff, len), self.at(to, toff, len)) {
            if f != t && len > 0 {
                self.steps.push(Step::Copy {
                    from: f.cast_const(),
                    to: t,
                    len,
                });
            }
        }
    }

    /// `inout = input op inout` (input from the lower ranks).
    pub fn reduce(&mut self, input: Buf, ioff: usize, inout: Buf, ooff: usize, len: usize) {
        if let (Some(i), Some(o)) = (self.at(input, ioff, len), self.at(inout, ooff, len)) {
            if len > 0 {
                self.steps.push(Step::Reduce {
                    input: i.cast_const(),
                    inout: o,
                    len,
                });
            }
        }
    }

    /// `acc = acc op later` (later from the higher ranks); `later` ends unspecified.
    pub fn reduce_right(&mut self, acc: Buf, later: Buf, len: usize) {
        self.reduce(acc, 0, later, 0, len);
        self.copy(later, 0, acc, 0, len);
    }

    /// A step that runs `f` in every progress call until it returns true (the
    /// steps after it wait), or until a rank of the communicator is lost.
    pub fn poll(&mut self, f: Poll) {
        let peers = self.ranks.iter().copied().collect();
        self.steps.push(Step::Poll { f, peers });
    }

    /// Every send and receive started so far completes before the next step.
    pub fn fence(&mut self) {
        if !matches!(self.steps.last(), None | Some(Step::Fence)) {
            self.steps.push(Step::Fence);
        }
    }

    /// The finished schedule, or the first bad step recorded.
    pub fn build(self) -> Result<Schedule, CollError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.combine.is_none() && self.steps.iter().any(|s| matches!(s, Step::Reduce { .. })) {
            return Err(CollError::Args(
                "schedule: a reduction without an op".into(),
            ));
        }
        // The most requests started between two fences.
        let mut most = 0;
        let mut run = 0;
        for s in &self.steps {
            match s {
                Step::Send { .. } | Step::Recv { .. } => {
                    run += 1;
                    most = usize::max(most, run);
                }
                Step::Fence => run = 0,
                _ => {}
            }
        }
        Ok(Schedule {
            ctx: self.ctx,
            tag: self.tag,
            steps: self.steps,
            pc: 0,
            pending: Vec::with_capacity(most),
            combine: self.combine,
            _scratch: self.scratch,
            error: None,
            cancelled: false,
        })
    }
}

impl Drop for Schedule {
    fn drop(&mut self) {
        // Every request into the scratch is over by now (see the module docs).
        for v in self._scratch.drain(..) {
            super::pool::give(v);
        }
    }
}

impl Schedule {
    /// Number of steps (tests and debugging).
    pub fn steps(&self) -> usize {
        self.steps.len()
    }

    /// Sets the tag before the start (the C layer takes the communicator's next
    /// sequence number only once the arguments have been accepted).
    pub fn retag(&mut self, tag: i32) {
        self.tag = tag;
    }

    /// Runs forward as far as possible. Returns whether anything moved, and the
    /// final status once the schedule is over (no request of its own pending).
    fn advance<F: Fabric>(&mut self, eng: &mut Engine<F>) -> (bool, Option<Status>) {
        let mut moved = false;
        loop {
            moved |= self.reap(eng);
            if self.error.is_some() {
                if !self.cancelled {
                    self.cancelled = true;
                    for p in &self.pending {
                        // Only an unmatched receive goes; the rest completes.
                        let _ = eng.cancel(p.id);
                    }
                    continue;
                }
                if self.pending.is_empty() {
                    return (true, Some(self.status(eng.rank())));
                }
                return (moved, None);
            }
            if let Some(Step::Poll { f, peers }) = self.steps.get_mut(self.pc) {
                if !f() {
                    if !eng.lost.is_empty() {
                        if let Some(e) = peers.iter().find_map(|&r| eng.lost_error(Some(r))) {
                            self.error = Some(e);
                            continue;
                        }
                    }
                    return (moved, None);
                }
                self.pc += 1;
                moved = true;
                continue;
            }
            let Some(step) = self.steps.get(self.pc) else {
                if self.pending.is_empty() {
                    return (true, Some(self.status(eng.rank())));
                }
                return (moved, None);
            };
            match *step {
                Step::Fence => {
                    if !self.pending.is_empty() {
                        return (moved, None);
                    }
                }
                Step::Poll { .. } => {}
                Step::Send { to, ptr, len } => {
                    // SAFETY: `ptr` is in bounds of a region valid until the schedule's
                    // request completes, which waits for this send (fences, errors).
                    match unsafe { eng.isend(to, self.ctx, self.tag, ptr, len, SendMode::Standard) }
                    {
                        Ok(id) => self.pending.push(Pending { id, recv: None }),
                        Err(e) => self.error = Some(e),
                    }
                }
                Step::Recv { from, ptr, len } => {
                    // SAFETY: as for the send; no step touches this memory before the
                    // next fence, which waits for the receive.
                    match unsafe { eng.irecv(Some(from), self.ctx, Some(self.tag), ptr, len) } {
                        Ok(id) => self.pending.push(Pending {
                            id,
                            recv: Some(len),
                        }),
                        Err(e) => self.error = Some(e),
                    }
                }
                Step::Copy { from, to, len } => {
                    // SAFETY: both in bounds of live regions, distinct (checked when
                    // recorded), and no started request touches them (a fence came
                    // after any request using them).
                    unsafe { std::ptr::copy(from, to, len) };
                }
                Step::Reduce { input, inout, len } => {
                    // SAFETY: as for the copy; the builder gives two different regions
                    // (or disjoint parts of one) for input and inout.
                    let (i, o) = unsafe {
                        (
                            std::slice::from_raw_parts(input, len),
                            std::slice::from_raw_parts_mut(inout, len),
                        )
                    };
                    if let Some(c) = self.combine.as_mut() {
                        c(i, o);
                    }
                }
            }
            self.pc += 1;
            moved = true;
        }
    }

    /// Collects the pending requests that completed; the first error is kept.
    fn reap<F: Fabric>(&mut self, eng: &mut Engine<F>) -> bool {
        let mut moved = false;
        let mut i = 0;
        while i < self.pending.len() {
            let p = &self.pending[i];
            if !eng.is_complete(p.id) {
                i += 1;
                continue;
            }
            let recv = p.recv;
            let st = eng.take_done(p.id.0);
            self.pending.swap_remove(i);
            moved = true;
            let Some(st) = st else { continue };
            let err = match (st.error, recv) {
                (Some(e), _) => Some(e),
                // A shorter message: the ranks' arguments disagree.
                (None, Some(want)) if st.len != want && !st.cancelled => {
                    Some(P2pError::Truncated {
                        len: st.len,
                        cap: want,
                    })
                }
                _ => None,
            };
            if let Some(e) = err {
                self.error.get_or_insert(e);
            }
        }
        moved
    }

    fn status(&mut self, me: Rank) -> Status {
        Status {
            source: me,
            tag: self.tag,
            len: 0,
            cancelled: false,
            error: self.error.take(),
        }
    }
}

impl<F: Fabric> Engine<F> {
    /// Starts a collective schedule; returns an ordinary request (test, wait,
    /// is_complete, free) that completes when the schedule is over. Its status has
    /// `len` 0 and the first error a step met (a lost peer, a message of another
    /// length). The first steps run now; every later `progress` call runs it on.
    pub fn start_schedule(&mut self, s: Schedule) -> Result<ReqId, P2pError> {
        self.check_usable()?;
        let no_buf = UserBuf {
            ptr: std::ptr::null_mut(),
            cap: 0,
        };
        let key = self
            .reqs
            .insert(Request::new(Phase::Coll(Some(Box::new(s))), no_buf));
        self.colls.push(key);
        self.advance_coll(key);
        Ok(ReqId(key))
    }

    /// Schedules not yet complete.
    pub fn live_schedules(&self) -> usize {
        self.colls.len()
    }

    /// Runs every live schedule forward (from `progress`); whether any moved.
    pub(crate) fn advance_colls(&mut self) -> bool {
        let mut keys = std::mem::take(&mut self.colls);
        let mut moved = false;
        keys.retain(|&k| {
            let (m, live) = self.advance_coll(k);
            moved |= m;
            live
        });
        // Nothing starts a schedule while they run; keep any that did all the same.
        keys.append(&mut self.colls);
        self.colls = keys;
        moved
    }

    /// Runs schedule `key` forward; (moved, still live).
    fn advance_coll(&mut self, key: u64) -> (bool, bool) {
        let Some(req) = self.reqs.get_mut(key) else {
            return (false, false);
        };
        let Phase::Coll(slot) = &mut req.phase else {
            return (false, false);
        };
        let Some(mut s) = slot.take() else {
            return (false, false);
        };
        let (moved, done) = s.advance(self);
        match done {
            Some(st) => {
                self.complete(key, st);
                (true, false)
            }
            None => {
                if let Some(Phase::Coll(slot)) = self.reqs.get_mut(key).map(|r| &mut r.phase) {
                    *slot = Some(s);
                }
                (moved, true)
            }
        }
    }
}
