//! Point-to-point from C: the argument checks, the translation between a
//! communicator's ranks and world ranks, datatypes (contiguous data goes straight
//! from and into the caller's memory; other layouts are packed into a buffer the
//! request holds), request and message handles, `MPI_Status`, buffered sends, and
//! persistent requests. The matching and the transport are `myrix_mpi::p2p`'s.
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

/// The transport, chosen at MPI_Init.
pub type Fabric = Box<dyn myrix_mpi::p2p::fabric::Fabric + Send>;

/// The world's engine and the C-side objects.
pub struct P2p {
    pub engine: Engine<Fabric>,
    /// Freed requests still running, with the buffers they need until done.
    pub(crate) orphans: Vec<(ReqId, Finish)>,
    pub(crate) reqs: Table<CReq>,
    pub(crate) msgs: Table<CMsg>,
    /// Attached buffers of buffered sends (`bsend.rs`).
    pub(crate) bufs: crate::bsend::Buffers,
}

/// The transport for this job: in-process for a singleton; postboxes in RSM
/// segments otherwise.
pub fn open_fabric(job: &mut myrix_mpi::Job) -> Result<Fabric, String> {
    use myrix_mpi::channel::{ChannelConfig, ChannelFabric};
    let cfg = ChannelConfig::from_env().map_err(|e| e.to_string())?;
    match ChannelFabric::open(job, &cfg) {
        Ok(f) => Ok(Box::new(f)),
        // A process alone can do without segments (it then cannot reach other
        // jobs' processes: MPI_Comm_accept/connect/join say so).
        Err(_) if job.size == 1 => {
            let (_, mut f) = myrix_mpi::p2p::loopnet::LoopNet::new(1, Default::default());
            Ok(Box::new(f.pop().ok_or("no fabric")?))
        }
        Err(e) => Err(e.to_string()),
    }
}

// SAFETY: the raw pointers a P2p holds are C callers' buffers, touched only while
// the runtime's lock is held (the library provides at most MPI_THREAD_SERIALIZED).
unsafe impl Send for P2p {}

impl P2p {
    pub fn new(engine: Engine<Fabric>) -> P2p {
        P2p {
            engine,
            reqs: Table::new(base::REQUEST),
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
    /// A buffered send's copy, charged to an attached buffer (`bsend.rs`).
    Buffered(Vec<u8>, crate::bsend::Owner),
    /// Unpacks a receive into the caller's non-contiguous buffer.
    Unpack {
        tmp: Vec<u8>,
        dt: Arc<Datatype>,
        buf: *mut u8,
        count: usize,
    },
    /// A nonblocking collective's staging buffers, unpacked at completion.
    Coll(Box<crate::icoll::Staged>),
    /// Code of the request's own (`greq.rs`: generalized requests, MPI_Comm_idup).
    Custom(Box<dyn crate::greq::Hook>),
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
    /// `MPI_Isend`, or a buffered send's copy): its world destination and message
    /// number, for MPI_Cancel to retract it (`Engine::cancel_sent`).
    pub(crate) sent: Option<(u32, u64)>,
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

/// A completed operation as C sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CStatus {
    pub(crate) source: c_int,
    pub(crate) tag: c_int,
    pub(crate) error: c_int,
    pub(crate) bytes: usize,
    pub(crate) cancelled: bool,
}

impl CStatus {
    /// The empty status the standard gives an inactive or null request: any
    /// source, any tag, no error, zero count.
    pub(crate) fn inactive() -> CStatus {
        CStatus {
            source: MPI_ANY_SOURCE,
            ..CStatus::empty()
        }
    }

    /// A completed operation with MPI_PROC_NULL (source MPI_PROC_NULL, any tag,
    /// zero count).
    pub(crate) fn empty() -> CStatus {
        CStatus {
            source: MPI_PROC_NULL,
            tag: MPI_ANY_TAG,
            error: MPI_SUCCESS,
            bytes: 0,
            cancelled: false,
        }
    }

    /// Stores a single completion's status: the standard leaves `MPI_ERROR` alone
    /// there (only the array calls set it, with MPI_ERR_IN_STATUS).
    ///
    /// # Safety
    /// `st` is NULL (MPI_STATUS_IGNORE) or valid for an MPI_Status.
    pub(crate) unsafe fn store(&self, st: *mut MPI_Status) {
        if st.is_null() {
            return;
        }
        // SAFETY: non-NULL and valid by the caller's contract.
        let error = unsafe { (*st).MPI_ERROR };
        // SAFETY: as above.
        unsafe { self.store_all(st) };
        // SAFETY: as above.
        unsafe { (*st).MPI_ERROR = error };
    }

    /// Stores every field, `MPI_ERROR` too (the array calls).
    ///
    /// # Safety
    /// `st` is NULL (MPI_STATUS_IGNORE) or valid for an MPI_Status.
    pub(crate) unsafe fn store_all(&self, st: *mut MPI_Status) {
        if st.is_null() {
            return;
        }
        let s = MPI_Status {
            MPI_SOURCE: self.source,
            MPI_TAG: self.tag,
            MPI_ERROR: self.error,
            MPI_internal: [
                self.bytes as u32 as c_int,
                (self.bytes as u64 >> 32) as u32 as c_int,
                c_int::from(self.cancelled),
                0,
                0,
            ],
        };
        // SAFETY: non-NULL and valid by the caller's contract.
        unsafe { st.write(s) };
    }
}

/// The count of bytes recorded in a status.
pub(crate) fn status_bytes(st: &MPI_Status) -> usize {
    (st.MPI_internal[0] as u32 as u64 | ((st.MPI_internal[1] as u32 as u64) << 32)) as usize
}

pub fn error_code(e: &P2pError) -> c_int {
    match e {
        P2pError::Truncated { .. } => MPI_ERR_TRUNCATE,
        P2pError::PeerLost { .. } => MPI_ERR_PROC_ABORTED,
        P2pError::UnknownRequest => MPI_ERR_REQUEST,
        P2pError::Fabric(_) => MPI_ERR_OTHER,
    }
}

pub(crate) fn report(name: &str, e: &P2pError) -> c_int {
    if !matches!(e, P2pError::Truncated { .. }) {
        crate::ffi::say!("myrix MPI: {name}: {e}");
    }
    error_code(e)
}

#[inline]
pub(crate) fn comm_rank_of(ranks: &[u32], world: u32) -> c_int {
    if ranks.get(world as usize) == Some(&world) {
        return world as c_int;
    }
    ranks
        .iter()
        .position(|&r| r == world)
        .map_or(MPI_ANY_SOURCE, |p| p as c_int)
}

#[inline]
pub(crate) fn cstatus(ranks: &[u32], s: &Status) -> CStatus {
    CStatus {
        source: comm_rank_of(ranks, s.source),
        tag: s.tag,
        error: s.error.as_ref().map_or(MPI_SUCCESS, error_code),
        bytes: s.len,
        cancelled: s.cancelled,
    }
}

pub(crate) fn p2p(rt: &mut Runtime) -> Result<&mut P2p, c_int> {
    rt.p2p.as_mut().ok_or(MPI_ERR_INTERN)
}

/// A point-to-point call's datatype: committed, or `MPI_DATATYPE_NULL` with a count
/// of 0 (an empty message, as MPICH accepts: its `pt2pt/recvnull`).
pub(crate) fn p2p_type(dt: MPI_Datatype, count: usize) -> Result<Arc<Datatype>, c_int> {
    if dt == MPI_DATATYPE_NULL && count == 0 {
        return datatype::lookup_committed(MPI_BYTE);
    }
    datatype::lookup_committed(dt)
}

pub(crate) fn check_count(count: c_int) -> Result<usize, c_int> {
    usize::try_from(count).map_err(|_| MPI_ERR_COUNT)
}

/// A peer rank for a send (`None` is MPI_PROC_NULL).
pub(crate) fn send_peer(c: &CommRef, dest: c_int) -> Result<Option<u32>, c_int> {
    if dest == MPI_PROC_NULL {
        return Ok(None);
    }
    let i = usize::try_from(dest).map_err(|_| MPI_ERR_RANK)?;
    c.ranks.get(i).copied().map(Some).ok_or(MPI_ERR_RANK)
}

/// A source for a receive: `Err` bad rank, `Ok(None)` PROC_NULL, `Ok(Some(None))` any.
pub(crate) fn recv_peer(c: &CommRef, src: c_int) -> Result<Option<Option<u32>>, c_int> {
    if src == MPI_ANY_SOURCE {
        return Ok(Some(None));
    }
    send_peer(c, src).map(|p| p.map(Some))
}

pub(crate) fn send_tag(tag: c_int) -> Result<i32, c_int> {
    if (0..=comm::TAG_UB).contains(&tag) {
        Ok(tag)
    } else {
        Err(MPI_ERR_TAG)
    }
}

pub(crate) fn recv_tag(tag: c_int) -> Result<Option<i32>, c_int> {
    if tag == MPI_ANY_TAG {
        Ok(None)
    } else {
        send_tag(tag).map(Some)
    }
}

/// The bytes of `count` elements of `dt` at `buf`, as one region when the layout
/// allows, else packed.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (the C caller's contract).
pub(crate) unsafe fn send_region(
    buf: *const c_void,
    count: usize,
    dt: &Datatype,
) -> Result<(*const u8, usize, Option<Vec<u8>>), c_int> {
    let len = dt.size().checked_mul(count).ok_or(MPI_ERR_COUNT)?;
    if len == 0 {
        return Ok((std::ptr::NonNull::dangling().as_ptr(), 0, None));
    }
    if dt.is_contiguous() {
        let p = buf.cast::<u8>().wrapping_offset(dt.true_lb());
        return Ok((p, len, None));
    }
    let mut v = vec![0u8; len];
    // SAFETY: the caller's contract; v holds the packed size.
    unsafe { dt.pack(buf.cast(), count, &mut v) };
    Ok((v.as_ptr(), len, Some(v)))
}

pub(crate) struct SendArgs<'a> {
    pub(crate) buf: *const c_void,
    pub(crate) count: c_int,
    pub(crate) dt: MPI_Datatype,
    pub(crate) dest: c_int,
    pub(crate) tag: c_int,
    pub(crate) comm: MPI_Comm,
    pub(crate) mode: SendMode,
    pub(crate) buffered: bool,
    pub(crate) name: &'a str,
}

/// Starts a send; returns the request handle.
///
/// # Safety
/// The C contract for `buf`.
pub(crate) unsafe fn start_send(a: &SendArgs<'_>) -> Result<MPI_Request, c_int> {
    let c = comm::lookup(a.comm, a.name)?;
    let count = check_count(a.count)?;
    let dt = p2p_type(a.dt, count)?;
    let tag = send_tag(a.tag)?;
    let peer = send_peer(&c, a.dest)?;
    // SAFETY: forwarded contract.
    unsafe {
        issue_send(
            &c, a.buf, count, dt, peer, tag, a.mode, a.buffered, a.name, None,
        )
    }
}

/// # Safety
/// The C contract for `buf`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn issue_send(
    c: &CommRef,
    buf: *const c_void,
    count: usize,
    dt: Arc<Datatype>,
    peer: Option<u32>,
    tag: i32,
    mode: SendMode,
    buffered: bool,
    name: &str,
    persist: Option<Persist>,
) -> Result<MPI_Request, c_int> {
    // SAFETY: forwarded contract.
    let (ptr, len, packed) = unsafe { send_region(buf, count, &dt)? };
    runtime::with(name, |rt| {
        let p = p2p(rt)?;
        let Some(dest) = peer else {
            return insert(
                p,
                None,
                Some(CStatus::empty()),
                c.ranks.clone(),
                Finish::None,
                persist,
            );
        };
        let (ptr, finish) = if buffered {
            p.reap_orphans();
            let owner = p.bufs.reserve(c.ctx, len, name)?;
            let mut copy = packed.unwrap_or_default();
            if copy.is_empty() && len > 0 {
                // SAFETY: ptr holds len bytes of the caller's data.
                copy.extend_from_slice(unsafe { std::slice::from_raw_parts(ptr, len) });
            }
            (copy.as_ptr(), Finish::Buffered(copy, owner))
        } else {
            match packed {
                Some(v) => (v.as_ptr(), Finish::Hold(v, false)),
                None => (ptr, Finish::None),
            }
        };
        // SAFETY: ptr stays valid until the request completes: the caller's buffer
        // (the standard forbids touching it meanwhile) or a Vec the request holds.
        let id = match unsafe { p.engine.isend(dest, c.ctx, tag, ptr, len, mode) } {
            Ok(id) => id,
            Err(e) => {
                if let Finish::Buffered(v, o) = &finish {
                    p.bufs.release(*o, v.len());
                }
                return Err(report(name, &e));
            }
        };
        if buffered {
            // A buffered send is complete for the caller once copied: the engine's
            // request runs on with the copy, reaped later.
            p.orphans.push((id, finish));
            let sent = Some((dest, p.engine.last_sent(dest)));
            let ready = Some(CStatus::empty());
            return insert_sent(p, None, ready, c.ranks.clone(), persist, sent);
        }
        insert(p, Some(id), None, c.ranks.clone(), finish, persist)
    })
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
    sent: Option<(u32, u64)>,
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

/// Starts a receive; returns the request handle.
///
/// # Safety
/// The C contract for `buf`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn start_recv(
    buf: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: MPI_Comm,
    name: &str,
    persist: bool,
) -> Result<MPI_Request, c_int> {
    let c = comm::lookup(comm, name)?;
    let count = check_count(count)?;
    let dt = p2p_type(dt, count)?;
    let tag = recv_tag(tag)?;
    let peer = recv_peer(&c, src)?;
    let pers = persist.then(|| Persist {
        send: false,
        mode: SendMode::Standard,
        buffered: false,
        buf: buf.cast(),
        count,
        dt: dt.clone(),
        peer: src,
        tag: tag.unwrap_or(MPI_ANY_TAG),
        comm: c.clone(),
        coll: None,
    });
    // SAFETY: forwarded contract.
    unsafe { issue_recv(&c, buf.cast(), count, dt, peer, tag, name, pers) }
}

/// # Safety
/// The C contract for `buf`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn issue_recv(
    c: &CommRef,
    buf: *mut u8,
    count: usize,
    dt: Arc<Datatype>,
    peer: Option<Option<u32>>,
    tag: Option<i32>,
    name: &str,
    persist: Option<Persist>,
) -> Result<MPI_Request, c_int> {
    let cap = dt.size().checked_mul(count).ok_or(MPI_ERR_COUNT)?;
    runtime::with(name, |rt| {
        let p = p2p(rt)?;
        let Some(src) = peer else {
            return insert(
                p,
                None,
                Some(CStatus::empty()),
                c.ranks.clone(),
                Finish::None,
                persist,
            );
        };
        let (ptr, finish) = recv_target(buf, count, &dt, cap);
        // SAFETY: ptr is the caller's buffer (untouched until completion by the
        // standard) or a Vec the request holds, each valid for cap bytes.
        let id =
            unsafe { p.engine.irecv(src, c.ctx, tag, ptr, cap) }.map_err(|e| report(name, &e))?;
        insert(p, Some(id), None, c.ranks.clone(), finish, persist)
    })
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
            let st = match p.engine.try_take(id) {
                Ok(Some(s)) => cstatus(&r.ranks, &s),
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
#[inline]
pub(crate) fn take_one(p: &mut P2p, h: MPI_Request) -> Result<Option<(CStatus, bool)>, c_int> {
    if let Some(r) = p.reqs.get(h) {
        if r.active && r.persist.is_none() && matches!(r.finish, Finish::None) {
            let st = match r.id {
                None => r.ready.unwrap_or_else(CStatus::empty),
                Some(id) => match p.engine.try_take(id) {
                    Ok(Some(s)) => cstatus(&r.ranks, &s),
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
                p.reqs.forget(h);
            } else {
                p.reqs.discard_if(h, |_| true);
            }
            return Ok(Some((st, false)));
        }
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
pub(crate) fn inactive(p: &P2p, h: MPI_Request) -> bool {
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

/// Receives a message matched by a probe.
///
/// # Safety
/// `buf` holds `count` elements of `dt`.
pub(crate) unsafe fn mrecv(
    p: &mut P2p,
    m: CMsg,
    buf: *mut u8,
    count: usize,
    dt: Arc<Datatype>,
    name: &str,
) -> Result<MPI_Request, c_int> {
    let cap = dt.size().checked_mul(count).ok_or(MPI_ERR_COUNT)?;
    let (ptr, finish) = recv_target(buf, count, &dt, cap);
    // SAFETY: as in issue_recv.
    let id = unsafe { p.engine.imrecv(m.msg, ptr, cap) }.map_err(|e| report(name, &e))?;
    insert(p, Some(id), None, m.ranks, finish, None)
}

/// Where a receive's bytes go: the caller's buffer when contiguous, else a
/// temporary the request unpacks at completion.
pub(crate) fn recv_target(
    buf: *mut u8,
    count: usize,
    dt: &Arc<Datatype>,
    cap: usize,
) -> (*mut u8, Finish) {
    if dt.is_contiguous() || cap == 0 {
        (buf.wrapping_offset(dt.true_lb()), Finish::None)
    } else {
        let mut tmp = vec![0u8; cap];
        (
            tmp.as_mut_ptr(),
            Finish::Unpack {
                tmp,
                dt: dt.clone(),
                buf,
                count,
            },
        )
    }
}
