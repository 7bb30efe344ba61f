//! Small nonblocking collectives through the communicator's shared segment
//! (`myrix_mpi::coll::shm::nb`): MPI_Ibarrier, and MPI_Ibcast, Ireduce, Iallreduce,
//! Iallgather, Ialltoall whose data per rank fits a segment slot (32 KiB by
//! default; up to 56 bytes ride in a line), on a
//! communicator on one node whose segment a blocking collective already set up
//! (setting one up takes messages, which a nonblocking call must not wait for).
//! Each rank decides from what every rank passes alike (the message's bytes, the
//! communicator's segment), so all take the segment or none.
//!
//! The start posts its step when no earlier operation of this rank is unfinished,
//! writing this rank's contribution straight from the caller's (or the packed)
//! bytes — copied into the operation only when it has to wait — and if nothing is
//! left to read (a bcast root, a reduce's other ranks) returns a request already
//! complete.
//! Otherwise the request is a driver in the point-to-point engine (a schedule with
//! one poll step, [`NbReq`] at its completion): any call that makes progress — a
//! blocking receive too — moves the segment's queue (a peer may be waiting for a
//! step this rank could not post at the start), and a lost peer of the
//! communicator fails it (MPI_Wait returns the error) instead of a hang.
//!
//! Outputs of non-contiguous layouts are staged and unpacked at completion. Must
//! never block, nor keep a C pointer past the request's completion.

use super::{launch_ready, NO_RANKS};
use crate::abi::*;
use crate::coll::args::*;
use crate::coll::shm::{self, Shm};
use crate::comm::CommRef;
use crate::greq::Hook;
use crate::p2p::{insert, p2p, report, CStatus, Finish};
use crate::runtime;
use myrix_mpi::coll::nb::Builder;
pub(crate) use myrix_mpi::coll::shm::nb::NbCombine;
use myrix_mpi::coll::shm::nb::{NbKind, NbOp};
use myrix_mpi::coll::shm::INLINE;
use myrix_mpi::datatype::Datatype;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The communicator's segment, unless a persistent collective is starting (its
/// starts may come in any order; the segment's slots go in start order).
fn segment(c: &CommRef) -> Option<Shm> {
    if super::pinned() {
        return None;
    }
    shm::peek(c)
}

/// A staged output: `buf` unpacked into `count` elements of `t` at `out` when the
/// request completes.
struct Stage {
    buf: Vec<u8>,
    out: *mut c_void,
    count: usize,
    t: Datatype,
}

/// What the request of an operation not over at its start finishes: unpacks a
/// staged output.
struct NbReq {
    sh: Shm,
    id: u64,
    stage: Option<Stage>,
    /// Set when a copy of the one-copy way failed (None: not that way).
    failed: Option<Arc<AtomicBool>>,
}

// SAFETY: `out` is the C caller's buffer, left alone by the program until the
// request completes (the standard's rule); used under the runtime's lock only.
unsafe impl Send for NbReq {}

/// Polls of the segment in one progress call of the driver before it says "not
/// yet": a peer a few hundred nanoseconds behind is the common case, and the
/// engine's wait between progress calls may yield the core when the machine is
/// loaded.
const POLLS: u32 = 64;

/// [`POLLS`], or one when the job has more ranks than cores: the rank waited for
/// may need this very core, and the engine's wait yields it after every empty
/// progress call (as the blocking collectives' waits do from their first empty
/// poll). 64 polls there kept a 4-rank Ibarrier on 2 cores at 5× Open MPI's time.
fn polls() -> u32 {
    if myrix_rsm::spin::job_oversubscribed() {
        1
    } else {
        POLLS
    }
}

/// Moves `sh`'s queue; whether operation `id` is over.
fn poll(sh: &Shm, id: u64, polls: u32) -> bool {
    let Some(mut g) = shm::try_lock(sh) else {
        return false;
    };
    for _ in 0..polls.max(1) {
        if g.nb_done(id) {
            return true;
        }
        g.nb_progress();
        if g.nb_done(id) {
            return true;
        }
        std::hint::spin_loop();
    }
    false
}

impl Hook for NbReq {
    fn ready(&self) -> bool {
        poll(&self.sh, self.id, polls())
    }

    fn done(self: Box<Self>, st: &mut CStatus) {
        if failed(&self.failed) && st.error == MPI_SUCCESS {
            st.error = MPI_ERR_OTHER;
        }
        if let Some(s) = self.stage {
            // SAFETY: `out` holds `count` elements of `t` (the caller's contract,
            // kept since the start).
            unsafe { s.t.unpack(&s.buf, s.out.cast(), s.count) };
        }
    }

    fn freed(self: Box<Self>) {
        // Freeing a collective's request is erroneous in MPI; the operation may
        // still write the staging buffer, so it is left to it.
        if let Some(s) = self.stage {
            if !poll(&self.sh, self.id, 1) {
                std::mem::forget(s.buf);
            }
        }
    }

    fn peek(&self) -> Option<CStatus> {
        poll(&self.sh, self.id, 1).then(CStatus::empty)
    }
}

/// Room to pack a contribution: on the stack up to a line, else on the heap.
struct Tmp {
    line: [u8; INLINE],
    heap: Vec<u8>,
}

impl Default for Tmp {
    fn default() -> Tmp {
        Tmp {
            line: [0; INLINE],
            heap: Vec::new(),
        }
    }
}

impl Tmp {
    fn get(&mut self, len: usize) -> &mut [u8] {
        if len <= INLINE {
            &mut self.line[..len]
        } else {
            self.heap.resize(len, 0);
            &mut self.heap[..]
        }
    }
}

/// `n` elements of `t` at `buf` as packed bytes (in `tmp` when not contiguous).
///
/// # Safety
/// `buf` holds `n` elements of `t`.
unsafe fn packed<'a>(
    buf: *const c_void,
    n: usize,
    t: &Datatype,
    tmp: &'a mut Tmp,
) -> Result<&'a [u8], c_int> {
    let len = bytes(n, t)?;
    // SAFETY: the caller's contract.
    if let Some(d) = unsafe { contig(buf, n, t) }? {
        return Ok(d);
    }
    need(buf, n, t)?;
    let out = tmp.get(len);
    // SAFETY: as above; `out` holds len bytes.
    unsafe { t.pack(buf.cast(), n, out) };
    Ok(out)
}

/// `sh`'s segment if a contribution of `len` bytes per rank fits its steps, or
/// (`block` Some, an Ibcast's, Iallgather's or Ialltoall's) blocks of that size go
/// the one-copy way (alike on every rank: every rank passes the same length, and
/// the geometry and the way are decided alike).
fn fits(c: &CommRef, len: usize, block: Option<usize>) -> Option<Shm> {
    let sh = segment(c)?;
    // Only above a line is the slot's size needed (the lock is one exchange).
    let ok = len <= INLINE || {
        let g = shm::lock(&sh);
        len <= g.nb_max() || block.is_some_and(|b| g.one_copy(b))
    };
    ok.then_some(sh)
}

/// Whether `n` elements of `t` at `buf` are contiguous: [`packed`] gives the
/// caller's own memory, not a copy.
///
/// # Safety
/// As [`packed`]'s.
unsafe fn callers(buf: *const c_void, n: usize, t: &Datatype) -> bool {
    // SAFETY: the caller's contract.
    matches!(unsafe { contig(buf, n, t) }, Ok(Some(_)))
}

/// Where `n` elements of `t` at `buf` receive `len` bytes: the memory itself when
/// contiguous, else a staging buffer.
///
/// # Safety
/// `buf` is valid for `n` elements of `t` until the request completes.
unsafe fn output(
    buf: *mut c_void,
    n: usize,
    t: &Datatype,
    stage: &mut Option<Stage>,
) -> Result<(*mut u8, usize), c_int> {
    let len = bytes(n, t)?;
    // SAFETY: the caller's contract.
    if let Some(d) = unsafe { contig(buf, n, t) }? {
        return Ok((d.as_mut_ptr(), len));
    }
    need(buf, n, t)?;
    let mut v = vec![0u8; len];
    let p = v.as_mut_ptr();
    *stage = Some(Stage {
        buf: v,
        out: buf,
        count: n,
        t: t.clone(),
    });
    Ok((p, len))
}

/// Whether a copy of the one-copy way failed.
fn failed(flag: &Option<Arc<AtomicBool>>) -> bool {
    flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// Starts `op` on `sh` and stores its request in `request`.
///
/// # Safety
/// `request` is valid for an MPI_Request (checked non-NULL by the caller).
unsafe fn start(
    c: &CommRef,
    sh: Shm,
    op: NbOp,
    stage: Option<Stage>,
    request: *mut MPI_Request,
    name: &str,
) -> Result<(), c_int> {
    let (id, done, flag) = {
        let mut g = shm::lock(&sh);
        // Only the one-copy way's copies can fail: no flag (an allocation per call,
        // session 30) for the others.
        let flag = g.nb_one_copy(&op).then(|| Arc::new(AtomicBool::new(false)));
        let op = match &flag {
            Some(f) => op.on_failure(f.clone()),
            None => op,
        };
        let id = g.nb_start(op).map_err(|e| coll_code(&e, name))?;
        (id, g.nb_done(id), flag)
    };
    if done && failed(&flag) {
        return Err(MPI_ERR_OTHER);
    }
    if done {
        if let Some(s) = stage {
            // SAFETY: as in `NbReq::done`.
            unsafe { s.t.unpack(&s.buf, s.out.cast(), s.count) };
        }
        // SAFETY: the caller's contract.
        return unsafe { launch_ready(request, name) };
    }
    // The request is a driver in the engine (a schedule of one poll step): every
    // progress call, a blocking receive's too, moves the segment's queue (a peer may
    // wait for this rank's step), and a lost peer fails it instead of a hang.
    let mut b = Builder::new(&c.ranks, c.rank as usize, c.ctx + 1, 0);
    let poller = sh.clone();
    b.poll(Box::new(move || poll(&poller, id, polls())));
    let driver = b.build().map_err(|e| coll_code(&e, name))?;
    let hook = Box::new(NbReq {
        sh,
        id,
        stage,
        failed: flag,
    });
    let h = runtime::with(name, |rt| {
        let p = p2p(rt)?;
        let d = p
            .engine
            .start_schedule(driver)
            .map_err(|e| report(name, &e))?;
        insert(p, Some(d), None, NO_RANKS, Finish::Custom(hook), None)
    })?;
    // SAFETY: the caller's contract.
    unsafe { crate::ffi::put(request, h) }
}

/// MPI_Ibarrier through the segment; None when `c` has none.
///
/// # Safety
/// `request` is valid for an MPI_Request.
pub(super) unsafe fn ibarrier(
    c: &CommRef,
    request: *mut MPI_Request,
    name: &str,
) -> Option<Result<(), c_int>> {
    let sh = segment(c)?;
    if request.is_null() {
        return Some(Err(MPI_ERR_ARG));
    }
    // SAFETY: no output.
    let op = unsafe { NbOp::new(NbKind::Barrier, &[], std::ptr::null_mut(), 0) }.ok()?;
    // SAFETY: the caller's contract.
    Some(unsafe { start(c, sh, op, None, request, name) })
}

/// MPI_Ibcast through the segment; None when it does not apply.
///
/// # Safety
/// The C contract for the buffer and request.
pub(super) unsafe fn ibcast(
    c: &CommRef,
    buf: *mut c_void,
    n: usize,
    t: &Dt,
    root: usize,
    request: *mut MPI_Request,
    name: &str,
) -> Option<Result<(), c_int>> {
    let len = bytes(n, t).ok()?;
    let sh = fits(c, len, Some(len))?;
    Some((|| {
        if request.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let mut tmp = Tmp::default();
        let mut stage = None;
        let op = if c.rank as usize == root {
            // SAFETY: the caller's contract.
            let d = unsafe { packed(buf, n, t, &mut tmp) }?;
            // SAFETY: no output; `d` lives until `start` returns.
            let op = unsafe { NbOp::borrowed(NbKind::Bcast { root }, d, std::ptr::null_mut(), 0) }
                .map_err(|e| coll_code(&e, name))?;
            // SAFETY: the caller's contract.
            if unsafe { callers(buf, n, t) } {
                // SAFETY: the caller's buffer, left alone until the request
                // completes (the standard's rule).
                unsafe { op.kept() }
            } else {
                op
            }
        } else {
            // SAFETY: the caller's contract.
            let (p, l) = unsafe { output(buf, n, t, &mut stage) }?;
            // SAFETY: p holds l bytes until completion (`output`).
            unsafe { NbOp::bcast_reader(root, p, l) }
        };
        // SAFETY: the caller's contract.
        unsafe { start(c, sh, op, stage, request, name) }
    })())
}

/// MPI_Ireduce (`root` Some) or MPI_Iallreduce through the segment; None when it
/// does not apply.
///
/// # Safety
/// The C contract for the buffers and request.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ireduce(
    c: &CommRef,
    send: *const c_void,
    recv: *mut c_void,
    n: usize,
    t: &Datatype,
    combine: impl FnOnce() -> NbCombine,
    root: Option<usize>,
    request: *mut MPI_Request,
    name: &str,
) -> Option<Result<(), c_int>> {
    let len = bytes(n, t).ok()?;
    let combine = combine();
    // Above a slot a predefined op goes the one-copy way (shares of whole
    // elements; alike on every rank: same op, type and count). The segment decides
    // the rest (`nb_start`).
    let builtin = matches!(combine, NbCombine::Builtin(..));
    let size = c.ranks.len().max(1);
    let sh = fits(c, len, builtin.then_some(len / size))?;
    Some((|| {
        if request.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let receives = root.is_none_or(|r| r == c.rank as usize);
        let mut tmp = Tmp::default();
        let src = if in_place(send) {
            recv.cast_const()
        } else {
            send
        };
        // SAFETY: the caller's contract (in place: recvbuf holds the data).
        let d = unsafe { packed(src, n, t, &mut tmp) }?;
        let mut stage = None;
        let (p, l) = if receives {
            // SAFETY: the caller's contract; the data was copied first.
            unsafe { output(recv, n, t, &mut stage) }?
        } else {
            (std::ptr::null_mut(), 0)
        };
        let kind = NbKind::Reduce { root, combine };
        // SAFETY: p holds l bytes until completion (`output`); `d` lives until
        // `start` returns.
        let op = unsafe { NbOp::borrowed(kind, d, p, l) }.map_err(|e| coll_code(&e, name))?;
        // SAFETY: the caller's contract (not in place: the send buffer).
        let op = if !in_place(send) && unsafe { callers(send, n, t) } {
            // SAFETY: the caller's send buffer, left alone until the request
            // completes (the standard's rule): the one-copy way reads it there.
            unsafe { op.kept() }
        } else {
            op
        };
        // SAFETY: the caller's contract.
        unsafe { start(c, sh, op, stage, request, name) }
    })())
}

/// MPI_Iallgather (`alltoall` false) or MPI_Ialltoall through the segment, blocks
/// of `rn` elements of `rt` from every rank, `sn` elements of `st` in all from this
/// one (`st` None: in place); None when it does not apply (in place
/// for an alltoall, data beyond a line).
///
/// # Safety
/// The C contract for the buffers and request.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn iexchange(
    c: &CommRef,
    alltoall: bool,
    send: *const c_void,
    sn: usize,
    st: Option<&Dt>,
    recv: *mut c_void,
    rn: usize,
    rt: &Dt,
    request: *mut MPI_Request,
    name: &str,
) -> Option<Result<(), c_int>> {
    let size = c.ranks.len();
    let block = bytes(rn, rt).ok()?;
    let mine = if alltoall {
        block.checked_mul(size)?
    } else {
        block
    };
    if alltoall && in_place(send) {
        return None;
    }
    // Blocks of the one-copy size go that way for both (an allgather's since
    // session 29: through the point-to-point ring at 1 MiB it was 1.26× Open MPI's).
    let sh = fits(c, mine, Some(block))?;
    Some((|| {
        if request.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let me = c.rank as usize;
        let mut tmp = Tmp::default();
        let d = match st {
            Some(st) if !in_place(send) => {
                // SAFETY: the caller's contract.
                unsafe { packed(send, sn, st, &mut tmp) }.and_then(|d| {
                    if d.len() == mine {
                        Ok(d)
                    } else {
                        Err(MPI_ERR_TRUNCATE)
                    }
                })?
            }
            _ => {
                // In place (allgather): this rank's block of recvbuf.
                let mut all = vec![0u8; block * size];
                // SAFETY: recvbuf holds size blocks of rn elements.
                let whole = unsafe { packed_any(recv, rn * size, rt, &mut all) }?;
                let mine = tmp.get(block);
                mine.copy_from_slice(&whole[me * block..(me + 1) * block]);
                mine
            }
        };
        let mut stage = None;
        // SAFETY: the caller's contract.
        let (p, l) = unsafe { output(recv, rn * size, rt, &mut stage) }?;
        let kind = if alltoall {
            NbKind::Alltoall
        } else {
            NbKind::Allgather
        };
        // SAFETY: p holds l bytes until completion (`output`); `d` lives until
        // `start` returns.
        let op = unsafe { NbOp::borrowed(kind, d, p, l) }.map_err(|e| coll_code(&e, name))?;
        // SAFETY: the caller's contract (not in place: the send buffer).
        let kept = st.is_some_and(|st| !in_place(send) && unsafe { callers(send, sn, st) });
        let op = if kept {
            // SAFETY: the caller's send buffer, left alone until the request
            // completes (the standard's rule).
            unsafe { op.kept() }
        } else {
            op
        };
        // SAFETY: the caller's contract.
        unsafe { start(c, sh, op, stage, request, name) }
    })())
}

/// `n` elements of `t` at `buf` packed into `out` (its length).
///
/// # Safety
/// `buf` holds `n` elements of `t`.
unsafe fn packed_any<'a>(
    buf: *const c_void,
    n: usize,
    t: &Datatype,
    out: &'a mut [u8],
) -> Result<&'a [u8], c_int> {
    // SAFETY: the caller's contract.
    if let Some(d) = unsafe { contig(buf, n, t) }? {
        return Ok(d);
    }
    need(buf, n, t)?;
    // SAFETY: as above.
    unsafe { t.pack(buf.cast(), n, out) };
    Ok(out)
}
