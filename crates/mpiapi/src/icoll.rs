//! Nonblocking collectives from C (MPI_Ibarrier, Ibcast, Ireduce, Iallreduce,
//! Igather(v), Iscatter(v), Iallgather(v), Ialltoall(v/w), Ireduce_scatter(_block),
//! Iscan, Iexscan) and the blocking MPI_Alltoallw, over `myrix_mpi::coll::nb`.
//!
//! Each call checks its arguments as the blocking form does (`coll::args`), turns
//! the caller's buffers into regions of a schedule — contiguous data in place,
//! other layouts packed into staging buffers now (inputs) or unpacked from them at
//! completion (outputs) — builds the schedule, and only then takes the
//! communicator's next sequence number for its tag (see [`next_seq`]) and starts it
//! in the engine. The request is an ordinary request handle: MPI_Wait/Test and
//! their array forms complete it; [`Staged`] (kept in the request's `Finish`) holds
//! the staging buffers and unpacks at completion. The engine runs the schedule in
//! every progress call, so any MPI call that waits keeps it moving.
//!
//! On communicators with a shared-memory collective segment, Ibarrier and the
//! small Ibcast, Ireduce, Iallreduce, Iallgather, Ialltoall take the segment
//! (`icoll_shm.rs`); the rest use the same point-to-point schedules. Intercommunicators take their own schedules
//! (`icoll_inter.rs`, checked first in each call); the neighbourhood forms are in
//! `icoll_nbr.rs`. Must never keep a C pointer past the request's completion, or
//! panic on bad arguments.

use crate::abi::*;
use crate::coll::args::*;
use crate::comm::CommRef;
use crate::datatype;
use crate::ffi::{finish, mpi_fn, put};
use crate::op;
use crate::p2p::{insert, p2p, report, Finish};
use crate::runtime;
use myrix_mpi::coll::nb::build::{self, Block};
use myrix_mpi::coll::nb::levels::{self as by_levels, Layout};
use myrix_mpi::coll::nb::{self, Buf, Builder};
use myrix_mpi::coll::CollError;
use std::borrow::Cow;
use std::os::raw::{c_int, c_void};
use std::sync::{Arc, Mutex, Weak};

/// The communicator of a nonblocking collective.
pub(crate) fn lookup(comm: MPI_Comm, name: &str) -> Result<CommRef, c_int> {
    crate::comm::lookup(comm, name)
}

#[path = "icoll_inter.rs"]
pub(crate) mod inter;
#[path = "icoll_more.rs"]
pub(crate) mod more;
#[path = "icoll_nbr.rs"]
pub(crate) mod nbr;
#[path = "icoll_shm.rs"]
pub(crate) mod shm_nb;

/// One output staged in a packed buffer: `len` bytes at `off` of staging buffer
/// `keep`, to unpack as `count` elements of `t` at `buf` at completion.
struct Out {
    keep: usize,
    off: usize,
    len: usize,
    buf: *mut u8,
    count: usize,
    t: Dt,
}

/// What a nonblocking collective's request holds until completion: the packed
/// copies its schedule reads and writes, and where outputs are unpacked.
pub(crate) struct Staged {
    keep: Vec<Vec<u8>>,
    outs: Vec<Out>,
}

// SAFETY: the raw pointers are the C caller's output buffers, which the standard
// keeps untouched by the program until the request completes; they are only used
// under the runtime's lock (MPI_THREAD_SERIALIZED at most).
unsafe impl Send for Staged {}

impl Staged {
    fn new() -> Staged {
        Staged {
            keep: Vec::new(),
            outs: Vec::new(),
        }
    }

    /// Unpacks the staged outputs (the request completed).
    pub(crate) fn finish(self) {
        for o in &self.outs {
            let Some(data) = self
                .keep
                .get(o.keep)
                .and_then(|v| v.get(o.off..o.off + o.len))
            else {
                continue;
            };
            if !data.is_empty() {
                // SAFETY: `buf` holds `count` elements of `t` (the C caller's
                // contract, kept since the call started).
                unsafe { o.t.unpack(data, o.buf, o.count) };
            }
        }
    }

    /// A staging buffer the schedule may use as a region.
    fn stage(&mut self, b: &mut Builder, mut v: Vec<u8>) -> (Buf, usize) {
        let len = v.len();
        let ptr = v.as_mut_ptr();
        self.keep.push(v);
        // SAFETY: the vector's heap buffer stays put (it is never resized) and alive
        // in `keep` until the request completes.
        (unsafe { b.user(ptr, len) }, self.keep.len() - 1)
    }

    /// `n` elements of `t` at `buf`, read by the schedule: the caller's memory when
    /// contiguous (and `copy` is false), else a packed copy made now.
    ///
    /// # Safety
    /// `buf` holds `n` elements of `t`, unchanged until the request completes.
    unsafe fn input(
        &mut self,
        b: &mut Builder,
        buf: *const c_void,
        n: usize,
        t: &Dt,
        copy: bool,
    ) -> Result<Block, c_int> {
        need(buf, n, t)?;
        let len = bytes(n, t)?;
        if !copy && t.is_contiguous() {
            let p = buf.cast::<u8>().wrapping_offset(t.true_lb()).cast_mut();
            // SAFETY: n elements of a contiguous type are len bytes at buf + true_lb,
            // readable until completion (the caller's contract); the schedule only
            // reads a region used as input.
            let r = unsafe { b.user(p, len) };
            return Ok(Block {
                buf: r,
                off: 0,
                len,
            });
        }
        // SAFETY: the caller's contract.
        let v = unsafe { pack(buf.cast(), n, t) }?;
        let (r, _) = self.stage(b, v);
        Ok(Block {
            buf: r,
            off: 0,
            len,
        })
    }

    /// `n` elements of `t` at `buf`, written by the schedule: the caller's memory
    /// when contiguous, else a staging buffer unpacked at completion (`preload`:
    /// holding the buffer's present contents, for in-place arguments).
    ///
    /// # Safety
    /// `buf` is valid for `n` elements of `t` until the request completes.
    unsafe fn output(
        &mut self,
        b: &mut Builder,
        buf: *mut c_void,
        n: usize,
        t: &Dt,
        preload: bool,
    ) -> Result<Block, c_int> {
        need(buf, n, t)?;
        let len = bytes(n, t)?;
        if t.is_contiguous() {
            let p = buf.cast::<u8>().wrapping_offset(t.true_lb());
            // SAFETY: as in `input`, and the program leaves the buffer alone until
            // completion (the standard's rule for nonblocking calls).
            let r = unsafe { b.user(p, len) };
            return Ok(Block {
                buf: r,
                off: 0,
                len,
            });
        }
        let v = if preload {
            // SAFETY: the caller's contract.
            unsafe { pack(buf.cast_const().cast(), n, t) }?
        } else {
            vec![0u8; len]
        };
        let (r, k) = self.stage(b, v);
        self.outs.push(Out {
            keep: k,
            off: 0,
            len,
            buf: buf.cast(),
            count: n,
            t: t.clone(),
        });
        Ok(Block {
            buf: r,
            off: 0,
            len,
        })
    }
}

/// The sequence numbers of the nonblocking collectives per communicator: context
/// id, the communicator's rank table (weakly: a new communicator on a reused
/// context has another table, and restarts at 0), the next number.
static SEQ: Mutex<Vec<SeqEntry>> = Mutex::new(Vec::new());
/// The same, counted by the persistent collectives' `_init` calls.
static PERSISTENT: Mutex<Vec<SeqEntry>> = Mutex::new(Vec::new());

type SeqEntry = (u32, Weak<[u32]>, u32);

/// Sequence numbers below this are the nonblocking collectives' (they wrap within
/// it); a persistent collective's is this plus its `_init` call's number.
const PINNED_BASE: u32 = 1 << 29;

thread_local! {
    /// The number of the persistent collective this thread is starting, if any.
    static PINNED: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

fn take(table: &Mutex<Vec<SeqEntry>>, c: &CommRef) -> u32 {
    let mut s = table.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = s.iter_mut().find(|e| e.0 == c.ctx) {
        if e.1.upgrade().is_some_and(|r| Arc::ptr_eq(&r, &c.ranks)) {
            e.2 = e.2.wrapping_add(1);
            return e.2.wrapping_sub(1);
        }
        *e = (c.ctx, Arc::downgrade(&c.ranks), 1);
        return 0;
    }
    s.retain(|e| e.1.strong_count() > 0);
    s.push((c.ctx, Arc::downgrade(&c.ranks), 1));
    0
}

/// The next sequence number of `c`. Every rank starts the collectives of a
/// communicator in the same order (MPI's rule), so the numbers agree. A persistent
/// collective being started (see [`pinned`]) keeps the number of its `_init` call.
pub(crate) fn next_seq(c: &CommRef) -> u32 {
    if let Some(n) = PINNED.get() {
        return n;
    }
    take(&SEQ, c) % PINNED_BASE
}

/// The number of a persistent collective, taken at its `_init` call: the standard
/// orders those calls alike on every rank but lets the starts come in any order,
/// so the starts match by this number, not by when they come.
pub(crate) fn persistent_seq(c: &CommRef) -> u32 {
    PINNED_BASE + take(&PERSISTENT, c) % PINNED_BASE
}

/// Runs `f` (one start of a persistent collective) with its pinned number.
pub(crate) fn with_pinned<R>(seq: u32, f: impl FnOnce() -> R) -> R {
    let before = PINNED.replace(Some(seq));
    let r = f();
    PINNED.set(before);
    r
}

/// Whether a persistent collective is being started on this thread: it then takes
/// a point-to-point schedule, whose tag is its pinned number, not the segment,
/// whose slots are taken in start order.
pub(crate) fn pinned() -> bool {
    PINNED.get().is_some()
}

/// The layout by levels of `c` when it spans nodes (`coll_hier` decides as for the
/// blocking collectives; said once with `MYRIX_MPI_COLL_DEBUG`), else `None`.
pub(crate) fn levels(c: &CommRef, comm: MPI_Comm, name: &str) -> Option<Layout> {
    let nodes = crate::coll_hier::node_ids(c)?;
    let l = Layout::new(&c.ranks, c.rank as usize, &nodes)?;
    crate::coll_hier::note(comm, name, "levels", || {
        format!("by levels ({} nodes)", l.nodes())
    });
    Some(l)
}

/// A schedule for `c`'s collective context; the tag comes at the start.
fn builder(c: &CommRef) -> Builder<'_> {
    Builder::new(&c.ranks, c.rank as usize, c.ctx + 1, 0)
}

/// Builds `b`, starts it, and stores the new request handle in `request`.
///
/// # Safety
/// `request` is NULL or valid for an MPI_Request.
unsafe fn launch(
    c: &CommRef,
    b: Builder,
    staged: Staged,
    request: *mut MPI_Request,
    name: &str,
) -> Result<(), c_int> {
    if request.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let mut s = b.build().map_err(|e| coll_code(&e, name))?;
    let h = runtime::with(name, |rt| {
        let p = p2p(rt)?;
        s.retag(nb::tag(next_seq(c)));
        let id = p.engine.start_schedule(s).map_err(|e| report(name, &e))?;
        insert(
            p,
            Some(id),
            None,
            c.ranks.clone(),
            Finish::Coll(Box::new(staged)),
            None,
        )
    })?;
    // SAFETY: non-NULL; the caller's contract.
    unsafe { put(request, h) }
}

/// The ranks a request of the segment's nonblocking collectives keeps: none.
pub(crate) const NO_RANKS: crate::p2p::Ranks = crate::p2p::Ranks::Static(&[]);

/// The communicator of a collective that is not on an intercommunicator (those
/// return `Ok(None)`): the predefined ones borrowed, with no table look-up.
pub(crate) fn intra(comm: MPI_Comm, name: &str) -> Result<Option<Cow<'static, CommRef>>, c_int> {
    if crate::comm::predefined_ref(comm).is_none() && inter::of(comm, name)?.is_some() {
        return Ok(None);
    }
    comm_ref(comm, name).map(Some)
}

/// Stores a request already complete (a nonblocking collective over at its start)
/// in `request`.
///
/// # Safety
/// `request` is NULL or valid for an MPI_Request.
pub(crate) unsafe fn launch_ready(request: *mut MPI_Request, name: &str) -> Result<(), c_int> {
    if request.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // No ranks to keep (a collective's status names none): nothing to count.
    let h = runtime::with(name, |rt| {
        let st = Some(crate::p2p::CStatus::empty());
        insert(p2p(rt)?, None, st, NO_RANKS, Finish::None, None)
    })?;
    // SAFETY: non-NULL; the caller's contract.
    unsafe { put(request, h) }
}

/// The reduction a schedule runs: the op on packed whole elements.
fn combine(red: &Reduction) -> nb::Combine {
    let (o, dt) = (red.op, red.dt);
    // The op and type were checked together before; a user function cannot fail.
    Box::new(move |i: &[u8], io: &mut [u8]| {
        let _ = op::apply_packed(&o, dt, i, io);
    })
}

fn coll_err(name: &str) -> impl Fn(CollError) -> c_int + '_ {
    move |e| coll_code(&e, name)
}

/// # Safety
/// The C contract for request.
unsafe fn ibarrier(comm: MPI_Comm, request: *mut MPI_Request, name: &str) -> Result<(), c_int> {
    let Some(c) = intra(comm, name)? else {
        let ic = inter::of(comm, name)?.ok_or(MPI_ERR_COMM)?;
        // SAFETY: the caller's contract.
        return unsafe { inter::ibarrier(ic, request, name) };
    };
    let lay = levels(&c, comm, name);
    if lay.is_none() {
        // SAFETY: the caller's contract.
        if let Some(r) = unsafe { shm_nb::ibarrier(&c, request, name) } {
            return r;
        }
    }
    let mut b = builder(&c);
    match &lay {
        Some(l) => by_levels::barrier(&mut b, l),
        None => build::barrier(&mut b),
    }
    // SAFETY: the caller's contract.
    unsafe { launch(&c, b, Staged::new(), request, name) }
}

mpi_fn! {
    fn MPI_Ibarrier / PMPI_Ibarrier(comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Ibarrier";
        // SAFETY: the C contract for request.
        finish(comm, name, unsafe { ibarrier(comm, request, name) })
    }
}

/// # Safety
/// The C contract for the buffer and request.
unsafe fn ibcast(
    buf: *mut c_void,
    cnt: c_int,
    dt: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> Result<(), c_int> {
    let name = "MPI_Ibcast";
    let t = datatype::lookup_committed(dt)?;
    let n = count(cnt)?;
    let Some(c) = intra(comm, name)? else {
        let ic = inter::of(comm, name)?.ok_or(MPI_ERR_COMM)?;
        // SAFETY: the caller's contract.
        return unsafe { inter::ibcast(ic, buf, n, &t, root, request, name) };
    };
    let root = check_root(root, &c)?;
    let lay = levels(&c, comm, name);
    if lay.is_none() {
        // SAFETY: the caller's contract.
        if let Some(r) = unsafe { shm_nb::ibcast(&c, buf, n, &t, root, request, name) } {
            return r;
        }
    }
    let mut b = builder(&c);
    let mut st = Staged::new();
    // SAFETY: the caller's contract for buf.
    let r = unsafe {
        if c.rank as usize == root {
            st.input(&mut b, buf, n, &t, false)?
        } else {
            st.output(&mut b, buf, n, &t, false)?
        }
    };
    match &lay {
        Some(l) => by_levels::bcast(&mut b, l, root, r.buf),
        None => build::bcast(&mut b, root, r.buf),
    }
    .map_err(coll_err(name))?;
    // SAFETY: the C contract for request.
    unsafe { launch(&c, b, st, request, name) }
}

mpi_fn! {
    fn MPI_Ibcast / PMPI_Ibcast(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::not_in_place(buffer).and_then(|()| crate::coll::args::entry::bcast_sizes(count, datatype)) { return crate::ffi::finish(comm, "MPI_Ibcast", Err(e)); } // argument checks (coll_args.rs)
        // SAFETY: the C contract for the buffer and request.
        finish(comm, "MPI_Ibcast", unsafe { ibcast(buffer, count, datatype, root, comm, request) })
    }
}

/// Ireduce (`root` Some), Iallreduce, Iscan, Iexscan.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RedKind {
    Reduce(c_int),
    Allreduce,
    Scan,
    Exscan,
}

/// # Safety
/// The C contract for the buffers and request.
#[allow(clippy::too_many_arguments)]
unsafe fn ireduce_like(
    name: &str,
    kind: RedKind,
    send: *const c_void,
    recv: *mut c_void,
    cnt: c_int,
    dt: MPI_Datatype,
    opx: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> Result<(), c_int> {
    // A predefined type and op on a predefined communicator: the segment's path
    // with no table look-up (None: the general path below decides, errors too).
    if let (Some(w), Some(b), Some(o)) = (
        crate::comm::predefined_ref(comm),
        datatype::predefined(dt),
        op::builtin(opx),
    ) {
        let root = match kind {
            RedKind::Reduce(r) => check_root(r, w).ok().map(Some),
            RedKind::Allreduce => Some(None),
            _ => None,
        };
        if let (Some(root), Ok(n), true) = (root, count(cnt), myrix_mpi::op::allowed(o, b)) {
            let receives = root.is_none_or(|r| r == w.rank as usize);
            let t = datatype::predefined_ref(dt).ok_or(MPI_ERR_TYPE)?;
            let go = runtime::check(name).is_ok()
                && (receives || !in_place(send))
                && levels(w, comm, name).is_none();
            if go {
                let comb = || shm_nb::NbCombine::Builtin(o, b);
                // SAFETY: the caller's contract.
                let r = unsafe { shm_nb::ireduce(w, send, recv, n, t, comb, root, request, name) };
                if let Some(r) = r {
                    return r;
                }
            }
        }
    }
    let red = reduction(opx, dt)?;
    let n = count(cnt)?;
    if let Some(ic) = inter::of(comm, name)? {
        let root = match kind {
            RedKind::Reduce(r) => Some(r),
            RedKind::Allreduce => None,
            RedKind::Scan | RedKind::Exscan => return Err(MPI_ERR_COMM),
        };
        // SAFETY: the caller's contract.
        return unsafe { inter::ireduce(ic, send, recv, n, &red, root, request, name) };
    }
    let c = lookup(comm, name)?;
    let t = red.t.clone();
    let len = bytes(n, &t)?;
    let me = c.rank as usize;
    let root = match kind {
        RedKind::Reduce(r) => Some(check_root(r, &c)?),
        _ => None,
    };
    let receives = root.is_none_or(|r| r == me);
    if in_place(send) && !receives {
        return Err(MPI_ERR_BUFFER);
    }
    // By levels: reduce and allreduce with a commutative op (the order changes).
    let lay = match kind {
        RedKind::Reduce(_) | RedKind::Allreduce if red.commutative => levels(&c, comm, name),
        _ => None,
    };
    if lay.is_none() && matches!(kind, RedKind::Reduce(_) | RedKind::Allreduce) {
        // SAFETY: the caller's contract.
        let comb = || match (datatype::predefined(red.dt), red.op) {
            (Some(b), op::OpRef::Builtin(o)) => shm_nb::NbCombine::Builtin(o, b),
            _ => shm_nb::NbCombine::Boxed(combine(&red)),
        };
        // SAFETY: the caller's contract.
        let r = unsafe { shm_nb::ireduce(&c, send, recv, n, &red.t, comb, root, request, name) };
        if let Some(r) = r {
            return r;
        }
    }
    let mut b = builder(&c);
    b.set_combine(combine(&red));
    let mut st = Staged::new();
    // SAFETY: the caller's contract for the buffers.
    let (s, r) = unsafe {
        if in_place(send) {
            let r = st.output(&mut b, recv, n, &t, true)?;
            (r, r)
        } else {
            let s = st.input(&mut b, send, n, &t, false)?;
            let r = if receives {
                // Exscan leaves rank 0's recvbuf alone: staged with its contents.
                st.output(&mut b, recv, n, &t, kind == RedKind::Exscan)?
            } else {
                Block {
                    buf: b.scratch(0),
                    off: 0,
                    len: 0,
                }
            };
            (s, r)
        }
    };
    match (kind, &lay) {
        (RedKind::Reduce(_), Some(l)) => {
            let root = root.unwrap_or(0);
            by_levels::reduce(&mut b, l, root, s.buf, r.buf, len).map_err(coll_err(name))?
        }
        (RedKind::Allreduce, Some(l)) => {
            by_levels::allreduce(&mut b, l, s.buf, r.buf, len).map_err(coll_err(name))?
        }
        (RedKind::Reduce(_), _) => {
            let root = root.unwrap_or(0);
            build::reduce(&mut b, root, s.buf, r.buf, len, red.commutative)
                .map_err(coll_err(name))?
        }
        (RedKind::Allreduce, _) => build::allreduce(&mut b, s.buf, r.buf, len),
        (RedKind::Scan, _) => build::scan(&mut b, s.buf, r.buf, len, false),
        (RedKind::Exscan, _) => build::scan(&mut b, s.buf, r.buf, len, true),
    }
    // SAFETY: the C contract for request.
    unsafe { launch(&c, b, st, request, name) }
}

mpi_fn! {
    fn MPI_Ireduce / PMPI_Ireduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::reduce(count, datatype, op).and_then(|()| crate::coll::args::entry::root_aliased(sendbuf, recvbuf.cast_const(), count > 0, root, comm)) { return crate::ffi::finish(comm, "MPI_Ireduce", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Ireduce";
        // SAFETY: the C contract for the buffers and request.
        finish(comm, name, unsafe { ireduce_like(name, RedKind::Reduce(root), sendbuf, recvbuf, count, datatype, op, comm, request) })
    }
}

mpi_fn! {
    fn MPI_Iallreduce / PMPI_Iallreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::all(sendbuf, recvbuf, count, datatype, op) { return crate::ffi::finish(comm, "MPI_Iallreduce", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Iallreduce";
        // SAFETY: the C contract for the buffers and request.
        finish(comm, name, unsafe { ireduce_like(name, RedKind::Allreduce, sendbuf, recvbuf, count, datatype, op, comm, request) })
    }
}

mpi_fn! {
    fn MPI_Iscan / PMPI_Iscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::all(sendbuf, recvbuf, count, datatype, op) { return crate::ffi::finish(comm, "MPI_Iscan", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Iscan";
        // SAFETY: the C contract for the buffers and request.
        finish(comm, name, unsafe { ireduce_like(name, RedKind::Scan, sendbuf, recvbuf, count, datatype, op, comm, request) })
    }
}

mpi_fn! {
    /// Rank 0's recvbuf is left as it was.
    fn MPI_Iexscan / PMPI_Iexscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::all(sendbuf, recvbuf, count, datatype, op) { return crate::ffi::finish(comm, "MPI_Iexscan", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Iexscan";
        // SAFETY: the C contract for the buffers and request.
        finish(comm, name, unsafe { ireduce_like(name, RedKind::Exscan, sendbuf, recvbuf, count, datatype, op, comm, request) })
    }
}

/// # Safety
/// The C contract for the buffers and request.
#[allow(clippy::too_many_arguments)]
unsafe fn ireduce_scatter(
    name: &str,
    send: *const c_void,
    recv: *mut c_void,
    rcounts: Option<*const c_int>,
    block: c_int,
    dt: MPI_Datatype,
    opx: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> Result<(), c_int> {
    let red = reduction(opx, dt)?;
    if let Some(ic) = inter::of(comm, name)? {
        let nl = ic.local_size();
        let cs = match rcounts {
            // SAFETY: recvcounts holds one int per local rank.
            Some(p) => unsafe { ints(p, nl) }?.to_vec(),
            None => vec![block; nl],
        };
        // SAFETY: the caller's contract.
        return unsafe { inter::ireduce_scatter(ic, send, recv, &cs, &red, request, name) };
    }
    let c = lookup(comm, name)?;
    let t = red.t.clone();
    let size = c.ranks.len();
    let me = c.rank as usize;
    let (el, by) = match rcounts {
        // SAFETY: recvcounts holds one int per rank.
        Some(p) => counts(unsafe { ints(p, size) }?, &t)?,
        None => counts(&vec![block; size], &t)?,
    };
    let total = el
        .iter()
        .try_fold(0usize, |a, &b| a.checked_add(b))
        .ok_or(MPI_ERR_COUNT)?;
    let mut b = builder(&c);
    b.set_combine(combine(&red));
    let mut st = Staged::new();
    // SAFETY: the caller's contract for the buffers. In place, the whole
    // contribution is read (copied into the accumulator) before any result lands.
    let (s, r) = unsafe {
        let src = if in_place(send) {
            recv.cast_const()
        } else {
            send
        };
        let s = st.input(&mut b, src, total, &t, false)?;
        (s, st.output(&mut b, recv, el[me], &t, false)?)
    };
    build::reduce_scatter(&mut b, s.buf, r.buf, &by, red.commutative).map_err(coll_err(name))?;
    // SAFETY: the C contract for request.
    unsafe { launch(&c, b, st, request, name) }
}

mpi_fn! {
    fn MPI_Ireduce_scatter / PMPI_Ireduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::all(sendbuf, recvbuf, 0, datatype, op).and_then(|()| crate::coll::args::entry::v_aliased(sendbuf, recvbuf.cast_const())) { return crate::ffi::finish(comm, "MPI_Ireduce_scatter", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Ireduce_scatter";
        // SAFETY: the C contract for the buffers, recvcounts and request.
        finish(comm, name, unsafe { ireduce_scatter(name, sendbuf, recvbuf, Some(recvcounts), 0, datatype, op, comm, request) })
    }
}

mpi_fn! {
    fn MPI_Ireduce_scatter_block / PMPI_Ireduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        if let Err(e) = crate::coll::args::entry::all(sendbuf, recvbuf, recvcount, datatype, op) { return crate::ffi::finish(comm, "MPI_Ireduce_scatter_block", Err(e)); } // argument checks (coll_args.rs)
        let name = "MPI_Ireduce_scatter_block";
        // SAFETY: the C contract for the buffers and request.
        finish(comm, name, unsafe { ireduce_scatter(name, sendbuf, recvbuf, None, recvcount, datatype, op, comm, request) })
    }
}
