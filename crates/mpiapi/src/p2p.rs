//! Point-to-point from C, the state: the world's engine and the C request and
//! message tables (`P2p`), what a request holds (`CReq`: its engine request, what
//! to finish at completion, persistence), and completing, testing and waiting on
//! request handles. Split by what each part owns:
//!
//! * `p2p_status.rs` — what a completed operation reports to C (`CStatus`, error
//!   codes); no state.
//! * `p2p_issue.rs` — starting sends and receives: the argument checks, the
//!   translation between a communicator's ranks and world ranks, datatypes
//!   (contiguous data goes straight from and into the caller's memory; other
//!   layouts are packed into a buffer the request holds); it writes one entry into
//!   each table per operation.
//! * `p2p_calls.rs` / `p2p_fast.rs` — the C entry points and their fast paths.
//! * `p2p_more.rs` — probes, cancel, free, persistent requests, orphans.
//!
//! The matching and the transport are `myrix_mpi::p2p`'s.
//!
//! Must never: block outside a call the standard lets block, or hold a C pointer
//! beyond the request that was given it.

use crate::abi::*;
use crate::comm::{self, CommRef};
use crate::datatype;
use crate::ffi::{finish, mpi_fn, put};
use crate::handles::{base, Table};
use crate::runtime::{self, Runtime};
use myrix_mpi::datatype::Datatype;
use myrix_mpi::p2p::{Engine, MsgHandle, P2pError, ReqId, SendMode, Status};
use myrix_rsm::spin::SpinWait;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

#[path = "p2p_status.rs"]
mod status;
pub use status::error_code;
pub(crate) use status::*;

#[path = "p2p_issue.rs"]
mod issue;
pub(crate) use issue::*;

#[path = "p2p_reqs.rs"]
mod reqs;
pub(crate) use reqs::*;

/// The transport, chosen at MPI_Init (`myrix_mpi::world::start`).
pub type Fabric = myrix_mpi::world::BoxFabric;

/// The world's engine and the C-side objects.
pub struct P2p {
    pub engine: Engine<Fabric>,
    /// Freed requests still running, with the buffers they need until done.
    pub(crate) orphans: Vec<(ReqId, Finish)>,
    /// The C request handles (`p2p_reqs.rs`: table entries and engine handles).
    pub(crate) reqs: Reqs,
    pub(crate) msgs: Table<CMsg>,
    /// Attached buffers of buffered sends (`bsend.rs`).
    pub(crate) bufs: crate::bsend::Buffers,
}

// SAFETY: the raw pointers a P2p holds are C callers' buffers, touched only while
// the runtime's lock is held (the library provides at most MPI_THREAD_SERIALIZED).
unsafe impl Send for P2p {}

impl P2p {
    pub fn new(engine: Engine<Fabric>) -> P2p {
        P2p {
            engine,
            reqs: Reqs::new(),
            msgs: Table::new(base::MESSAGE),
            orphans: Vec::new(),
            bufs: Default::default(),
        }
    }
}

/// What a request must do when it completes.
pub(crate) enum Finish {
    None,
    /// Keeps a packed send buffer alive until its drop (the flag is unused:
    /// `Buffered` is a buffered send's).
    #[allow(dead_code)]
    Hold(Vec<u8>, bool),
    /// A buffered send's copy, charged to an attached buffer (`bsend.rs`). Boxed,
    /// as `Unpack`: a rare case need not make every request's entry larger.
    Buffered(Box<(Vec<u8>, crate::bsend::Owner)>),
    /// Unpacks a receive into the caller's non-contiguous buffer.
    Unpack(Box<Unpack>),
    /// Keeps the layout of a non-contiguous send or receive, which the fabric
    /// gathers from or scatters into, alive until the engine's request completes.
    #[allow(dead_code)]
    Layout(Box<myrix_mpi::p2p::Layout>),
    /// A nonblocking collective's staging buffers, unpacked at completion.
    Coll(Box<crate::icoll::Staged>),
    /// Code of the request's own (`greq.rs`: generalized requests, MPI_Comm_idup).
    Custom(Box<dyn crate::greq::Hook>),
}

/// A receive into a non-contiguous buffer: the bytes arrive in `tmp`, and are
/// unpacked into `count` elements of `dt` at `buf` at completion.
pub(crate) struct Unpack {
    pub(crate) tmp: Vec<u8>,
    pub(crate) dt: Arc<Datatype>,
    pub(crate) buf: *mut u8,
    pub(crate) count: usize,
}

/// A persistent request's arguments (MPI_Send_init / MPI_Recv_init).
#[derive(Clone)]
pub(crate) struct Persist {
    pub(crate) send: bool,
    pub(crate) mode: SendMode,
    pub(crate) buffered: bool,
    pub(crate) buf: *mut u8,
    pub(crate) count: usize,
    pub(crate) dt: Arc<Datatype>,
    pub(crate) peer: c_int,
    pub(crate) tag: c_int,
    pub(crate) comm: CommRef,
    /// A persistent collective's start (`pcoll.rs`); `None` for point-to-point.
    pub(crate) coll: Option<crate::pcoll::Starter>,
}

/// A communicator's ranks as a request keeps them (to give statuses in the
/// communicator's ranks): the predefined communicators' are borrowed for good, so
/// `MPI_Isend`/`MPI_Irecv` on them touch no reference count.
#[derive(Clone)]
pub(crate) enum Ranks {
    Static(&'static [u32]),
    Shared(Arc<[u32]>),
}

impl std::ops::Deref for Ranks {
    type Target = [u32];
    #[inline]
    fn deref(&self) -> &[u32] {
        match self {
            Ranks::Static(r) => r,
            Ranks::Shared(r) => r,
        }
    }
}

impl From<Arc<[u32]>> for Ranks {
    fn from(r: Arc<[u32]>) -> Ranks {
        Ranks::Shared(r)
    }
}

pub(crate) struct CReq {
    /// The engine's request; `None` once complete, for an inactive persistent one,
    /// or one that completed without the engine.
    pub(crate) id: Option<ReqId>,
    /// Started and not yet completed (a persistent request between MPI_Start and its
    /// completion; every other request from creation).
    pub(crate) active: bool,
    /// A status known without the engine (MPI_PROC_NULL, an inactive request, a
    /// send the fabric finished inside `MPI_Isend`).
    pub(crate) ready: Option<CStatus>,
    pub(crate) ranks: Ranks,
    pub(crate) finish: Finish,
    /// Boxed: most requests are not persistent, and a small entry is cheap to
    /// move in and out of the table.
    pub(crate) persist: Option<Box<Persist>>,
    /// A send complete without an engine request of its own (written whole inside
    /// `MPI_Isend`, or a buffered send's copy), for MPI_Cancel to retract it
    /// (`Engine::cancel_sent`).
    pub(crate) sent: Option<Sent>,
}

/// Every `MPI_Isend`/`MPI_Irecv` writes one `CReq` into the table and completion
/// takes it out: kept at most 128 bytes, so that both are a few vector moves rather
/// than a call to `memcpy` (and a boxed `Persist`, `Unpack` and buffered copy keep
/// the rare cases out of the common entry).
const _: () = assert!(std::mem::size_of::<CReq>() <= 128);

/// A send's world destination and its message number there (`MsgToken::seq`),
/// stored as the number plus one so that `Option<Sent>` takes no tag word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sent {
    dest: u32,
    seq1: std::num::NonZeroU64,
}

impl Sent {
    /// `None` for the (unreachable) last message number of a 64-bit count.
    pub(crate) fn new(dest: u32, seq: u64) -> Option<Sent> {
        Some(Sent {
            dest,
            seq1: std::num::NonZeroU64::new(seq.wrapping_add(1))?,
        })
    }

    /// The destination and the message number.
    pub(crate) fn get(self) -> (u32, u64) {
        (self.dest, self.seq1.get() - 1)
    }
}

pub(crate) struct CMsg {
    pub(crate) msg: MsgHandle,
    pub(crate) ranks: Arc<[u32]>,
}

/// What a buffered send takes from the attached buffer beyond its data. The copy
/// lives outside the caller's buffer (only its size is counted there), so the cost is
/// a small fixed charge; `MPI_BSEND_OVERHEAD` (512, the standard ABI's value) stays an
/// upper bound, and programs sized for MPICH's 96 or Open MPI's 128 bytes fit.
pub(crate) const BSEND_COST: usize = 64;

pub(crate) fn p2p(rt: &mut Runtime) -> Result<&mut P2p, c_int> {
    rt.p2p.as_mut().ok_or(MPI_ERR_INTERN)
}

#[inline]
pub(crate) fn insert(
    p: &mut P2p,
    id: Option<ReqId>,
    ready: Option<CStatus>,
    ranks: impl Into<Ranks>,
    finish: Finish,
    persist: Option<Persist>,
) -> Result<MPI_Request, c_int> {
    p.reqs
        .insert(CReq {
            id,
            active: true,
            ready,
            ranks: ranks.into(),
            finish,
            persist: persist.map(Box::new),
            sent: None,
        })
        .ok_or(MPI_ERR_NO_MEM)
}

/// As [`insert`] for a send complete without an engine request: `sent` is its
/// world destination and message number ([`CReq::sent`]).
#[inline]
pub(crate) fn insert_sent(
    p: &mut P2p,
    id: Option<ReqId>,
    ready: Option<CStatus>,
    ranks: impl Into<Ranks>,
    persist: Option<Persist>,
    sent: Option<Sent>,
) -> Result<MPI_Request, c_int> {
    p.reqs
        .insert(CReq {
            id,
            active: true,
            ready,
            ranks: ranks.into(),
            finish: Finish::None,
            persist: persist.map(Box::new),
            sent,
        })
        .ok_or(MPI_ERR_NO_MEM)
}

pub(crate) fn insert_ready(p: &mut P2p, st: CStatus) -> Result<MPI_Request, c_int> {
    insert(
        p,
        None,
        Some(st),
        Arc::from([] as [u32; 0]),
        Finish::None,
        None,
    )
}

/// Completes the C side of a request the engine finished: unpacks, releases
/// buffered-send space, and frees the handle unless it is persistent.
pub(crate) fn complete(p: &mut P2p, h: MPI_Request, st: CStatus) -> CStatus {
    // The common case, one lookup: nothing to finish, not persistent.
    match p.reqs.discard_if(h, |r| {
        r.persist.is_none() && matches!(r.finish, Finish::None)
    }) {
        Some(true) | None => return st,
        Some(false) => {}
    }
    let Some(r) = p.reqs.get_mut(h) else {
        return st;
    };
    r.id = None;
    let f = std::mem::replace(&mut r.finish, Finish::None);
    let persistent = r.persist.is_some();
    let mut st = st;
    match f {
        Finish::Custom(c) => c.done(&mut st),
        f => p.release(f, st.bytes),
    }
    let Some(r) = p.reqs.get_mut(h) else {
        return st;
    };
    if persistent {
        r.active = false;
        r.ready = None;
    } else {
        p.reqs.remove(h);
    }
    st
}

/// Tests request `h` once: `Some(status)` when complete (and freed unless
/// persistent). An inactive or null request is complete with an empty status.
pub(crate) fn test_one(p: &mut P2p, h: MPI_Request) -> Result<Option<CStatus>, c_int> {
    if h == MPI_REQUEST_NULL {
        return Ok(Some(CStatus::inactive()));
    }
    p.promote(h);
    let r = p.reqs.get(h).ok_or(MPI_ERR_REQUEST)?;
    if !r.active {
        return Ok(Some(CStatus::inactive()));
    }
    match r.id {
        None => {
            if let Finish::Custom(c) = &r.finish {
                if !c.ready() {
                    if p.orphans.is_empty() {
                        return Ok(None);
                    }
                    // A flush request (`bsend.rs`) waits on buffered sends, which
                    // are counted gone when reaped.
                    p.reap_orphans();
                    let r = p.reqs.get(h).ok_or(MPI_ERR_REQUEST)?;
                    if matches!(&r.finish, Finish::Custom(c) if !c.ready()) {
                        return Ok(None);
                    }
                }
            }
            let r = p.reqs.get(h).ok_or(MPI_ERR_REQUEST)?;
            let st = r.ready.unwrap_or_else(CStatus::empty);
            Ok(Some(complete(p, h, st)))
        }
        // No progress here: the callers poll once per round, not once per request.
        Some(id) => {
            // The request's ranks are read while the engine is asked: one lookup.
            let st = match p.engine.take_map(id, |s| cstatus(&r.ranks, s)) {
                Ok(Some(s)) => s,
                Ok(None) => return Ok(None),
                Err(e) => CStatus {
                    error: error_code(&e),
                    ..CStatus::empty()
                },
            };
            Ok(Some(complete(p, h, st)))
        }
    }
}

/// Tests request `h` once, as [`test_one`], and says whether it stays (persistent).
/// The common case — an active request that is not persistent and has nothing to
/// finish — costs one lookup in each table: its status comes from the engine (or
/// from the handle, for a send finished inside `MPI_Isend`) and the handle is
/// dropped in its slot.
///
/// An engine handle (`p2p_reqs.rs`) costs one lookup in the engine alone. The table
/// is asked first: a table handle pays nothing for the engine handles' test, and an
/// engine handle fails the table's kind check at once.
#[inline]
pub(crate) fn take_one(p: &mut P2p, h: MPI_Request) -> Result<Option<(CStatus, bool)>, c_int> {
    if let Some(r) = p.reqs.table_get(h) {
        if r.active && r.persist.is_none() && matches!(r.finish, Finish::None) {
            let st = match r.id {
                None => r.ready.unwrap_or_else(CStatus::empty),
                Some(id) => match p.engine.take_map(id, |s| cstatus(&r.ranks, s)) {
                    Ok(Some(s)) => s,
                    Ok(None) => return Ok(None),
                    Err(e) => CStatus {
                        error: error_code(&e),
                        ..CStatus::empty()
                    },
                },
            };
            // Nothing left in it owns memory unless its ranks are shared: then the
            // reference count is dropped as usual.
            if matches!(r.ranks, Ranks::Static(_)) {
                p.reqs.table_forget(h);
            } else {
                p.reqs.table_discard(h);
            }
            return Ok(Some((st, false)));
        }
    } else if is_engine_handle(h) && p.reqs.none_promoted() {
        let id = engine_req(&p.engine, h).ok_or(MPI_ERR_REQUEST)?;
        let st = match p.engine.take_map(id, |s| cstatus(world_ranks(), s)) {
            Ok(Some(s)) => s,
            Ok(None) => return Ok(None),
            Err(e) => CStatus {
                error: error_code(&e),
                ..CStatus::empty()
            },
        };
        return Ok(Some((st, false)));
    }
    let Some(st) = test_one(p, h)? else {
        return Ok(None);
    };
    let persistent = h != MPI_REQUEST_NULL && p.reqs.get(h).is_some();
    Ok(Some((st, persistent)))
}

/// Completes the C side of request `h` whose engine request ended with `r`.
fn engine_done(p: &mut P2p, h: MPI_Request, r: Result<Status, P2pError>) -> CStatus {
    let st = match r {
        Ok(s) => cstatus(p.reqs.get(h).map_or(&[][..], |r| &r.ranks[..]), &s),
        Err(e) => CStatus {
            error: error_code(&e),
            ..CStatus::empty()
        },
    };
    complete(p, h, st)
}

/// Whether the handle is a null or inactive request.
pub(crate) fn inactive(p: &mut P2p, h: MPI_Request) -> bool {
    p.promote(h);
    h == MPI_REQUEST_NULL || p.reqs.get(h).is_some_and(|r| !r.active)
}

/// Spins until `done` says so, driving the engine.
pub(crate) fn spin_until(
    p: &mut P2p,
    mut done: impl FnMut(&mut P2p) -> Result<bool, c_int>,
) -> Result<(), c_int> {
    let mut spin = SpinWait::new();
    loop {
        if !p.orphans.is_empty() {
            p.reap_orphans();
        }
        if done(p)? {
            return Ok(());
        }
        match p.engine.progress() {
            Ok(true) => spin.reset(),
            Ok(false) => spin.spin(),
            Err(e) => return Err(report("progress", &e)),
        }
    }
}

/// # Safety
/// `req` is valid for an MPI_Request; `st` NULL or valid for an MPI_Status.
pub(crate) unsafe fn wait_handle(
    req: *mut MPI_Request,
    st: *mut MPI_Status,
    name: &str,
) -> Result<(), c_int> {
    if req.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-NULL by the check; valid by the contract.
    let h = unsafe { req.read() };
    let got = runtime::with(name, |rt| {
        let p = p2p(rt)?;
        // An engine handle: the engine's wait loop, and nothing to free in C.
        if is_engine_handle(h) && p.reqs.none_promoted() {
            let id = engine_req(&p.engine, h).ok_or(MPI_ERR_REQUEST)?;
            if !p.orphans.is_empty() {
                p.reap_orphans();
            }
            let st = match p.engine.wait(id) {
                Ok(s) => cstatus(world_ranks(), &s),
                Err(e) => CStatus {
                    error: error_code(&e),
                    ..CStatus::empty()
                },
            };
            return Ok((st, false));
        }
        p.promote(h);
        if h != MPI_REQUEST_NULL && p.reqs.get(h).is_none() {
            return Err(MPI_ERR_REQUEST);
        }
        // An active request of the engine: the engine's own wait loop.
        if let Some(id) = p.reqs.get(h).filter(|r| r.active).and_then(|r| r.id) {
            if !p.orphans.is_empty() {
                p.reap_orphans();
            }
            let r = p.engine.wait(id);
            let st = engine_done(p, h, r);
            return Ok((st, p.reqs.get(h).is_some()));
        }
        let mut out = None;
        spin_until(p, |p| {
            out = test_one(p, h)?;
            Ok(out.is_some())
        })?;
        let persistent = p.reqs.get(h).is_some();
        Ok((out.unwrap_or_else(CStatus::empty), persistent))
    })?;
    let (s, persistent) = got;
    if !persistent {
        // SAFETY: as above.
        unsafe { req.write(MPI_REQUEST_NULL) };
    }
    // SAFETY: the caller's contract for st.
    unsafe { s.store(st) };
    if s.error != MPI_SUCCESS {
        return Err(s.error);
    }
    Ok(())
}

#[path = "p2p_calls.rs"]
mod calls;
pub use calls::{PMPI_Irecv, PMPI_Isend, PMPI_Recv, PMPI_Send};
