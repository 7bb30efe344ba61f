//! Partitioned point-to-point (MPI-4: MPI_Psend_init, MPI_Precv_init, MPI_Pready,
//! MPI_Pready_range, MPI_Pready_list, MPI_Parrived).
//!
//! A partitioned operation is a persistent request (made with `pcoll::init`, so
//! MPI_Start, MPI_Startall, the Wait/Test family and MPI_Request_free treat it as any
//! persistent request). Its data moves as **one message** on the communicator's
//! collective context: the send goes when the last partition is marked ready, the
//! receive is posted at each start. So MPI_Parrived reports every partition at once,
//! when the whole message is in; the standard allows this (it promises when data
//! may move, not that it moves early), and it means sender and receiver may split
//! the buffer into different numbers of partitions, as MPI-4 permits. What it does
//! not give is the early-bird overlap partitioned communication exists for: a
//! partition marked ready does not travel before the others.
//!
//! Matching: the standard pairs partitioned operations in the order they are
//! initialised, per communicator, peer and tag. Each side counts its inits per
//! (context, peer, tag, direction); the message's tag carries that count, so a
//! round of the second pair can never be taken by the first one's receive, whatever
//! order the sender completes them in. The tag lives in [`TAG_BASE`]'s range of the
//! collective context, which nothing else uses: 20 bits of the program's tag and 8 of
//! the count. Two pairs alias only when both are in flight at once between the same
//! ranks on one communicator with tags equal modulo 2^20 and init counts equal modulo
//! 256 (docs/mpi-features.md, "Partitioned communication").
//!
//! Must never: keep the caller's buffer past MPI_Request_free, or let a partitioned
//! message match an ordinary receive (the collective context keeps them apart).

use crate::abi::*;
use crate::comm::CommRef;
use crate::datatype;
use crate::ffi::{finish, mpi_fn};
use crate::greq::Hook;
use crate::p2p::{
    check_count, insert, issue_send, p2p, report, send_peer, send_tag, CStatus, Finish,
};
use crate::pcoll::Starter;
use crate::runtime;
use myrix_mpi::datatype::Datatype;
use myrix_mpi::p2p::SendMode;
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// The first tag of partitioned messages on a collective context: above the fixed
/// collective tags (1–11), below the neighbourhood ones (`NEIGHBOR_TAG`, 2^29) and
/// the nonblocking ones (2^30).
pub(crate) const TAG_BASE: i32 = 0x1000_0000;

/// One partitioned request's state, shared by its starter and MPI_Pready/Parrived.
struct Part {
    send: bool,
    partitions: usize,
    /// Marked ready in this round (sends): one bit per partition.
    ready: Vec<u64>,
    nready: usize,
    /// A round is in progress: started and, for a send, not yet issued.
    open: bool,
    comm_h: MPI_Comm,
    /// The communicator with its collective context in `ctx`.
    coll: CommRef,
    peer: Option<u32>,
    tag: c_int,
    wire_tag: i32,
    buf: *mut u8,
    /// Elements of `dt` in the whole buffer.
    count: usize,
    dt: Arc<Datatype>,
    /// This round's staging buffer (receives into non-contiguous memory).
    pending: Pending,
}

// SAFETY: `buf` is the program's buffer, only used while the request is active, as
// the C contract of partitioned operations requires.
unsafe impl Send for Part {}

type Shared = Arc<Mutex<Part>>;

fn lock(s: &Shared) -> MutexGuard<'_, Part> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

/// The live partitioned requests, by handle.
fn table() -> MutexGuard<'static, HashMap<MPI_Request, Shared>> {
    static T: OnceLock<Mutex<HashMap<MPI_Request, Shared>>> = OnceLock::new();
    T.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// Whom a partitioned init is with: (collective context, peer, tag, is a send).
type Pairing = (u32, Option<u32>, c_int, bool);

/// Inits so far per [`Pairing`]: the pairing count.
fn next_pairing(ctx: u32, peer: Option<u32>, tag: c_int, send: bool) -> u32 {
    static T: OnceLock<Mutex<HashMap<Pairing, u32>>> = OnceLock::new();
    let mut t = T
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let n = t.entry((ctx, peer, tag, send)).or_insert(0);
    let k = *n;
    *n = n.wrapping_add(1);
    k
}

/// A cleared bitset of `n` bits; MPI_ERR_NO_MEM rather than an abort when a huge
/// partition count cannot be had (a count of 0 lets any number of partitions pass
/// the size checks).
fn bits(n: usize) -> Result<Vec<u64>, c_int> {
    let words = n.div_ceil(64);
    let mut v = Vec::new();
    v.try_reserve_exact(words).map_err(|_| MPI_ERR_NO_MEM)?;
    v.resize(words, 0);
    Ok(v)
}

fn wire_tag(tag: c_int, pairing: u32) -> i32 {
    TAG_BASE | (((pairing & 0xff) as i32) << 20) | (tag & 0xf_ffff)
}

/// Removes the table entry when the request's starter is dropped (MPI_Request_free).
struct Entry {
    h: OnceLock<MPI_Request>,
    state: Shared,
}

impl Drop for Entry {
    fn drop(&mut self) {
        if let Some(h) = self.h.get() {
            let mut t = table();
            if t.get(h).is_some_and(|s| Arc::ptr_eq(s, &self.state)) {
                t.remove(h);
            }
        }
    }
}

/// A send waiting for its partitions: never complete until MPI_Pready issues it.
struct Unsent;

impl Hook for Unsent {
    fn ready(&self) -> bool {
        false
    }
    fn done(self: Box<Self>, _: &mut CStatus) {}
    fn freed(self: Box<Self>) {}
}

/// A non-contiguous receive's staging buffer, unpacked once: by the MPI_Parrived
/// that first sees the message in (the program may read its partitions then) or at
/// completion. Its lock is never held while another is taken.
struct Staged {
    tmp: Vec<u8>,
    dt: Arc<Datatype>,
    buf: *mut u8,
    count: usize,
}

// SAFETY: `buf` is the program's receive buffer, written only once the data is in.
unsafe impl Send for Staged {}

type Pending = Arc<Mutex<Option<Staged>>>;

fn unpack(pending: &Pending, bytes: usize) {
    let staged = pending.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(s) = staged {
        let n = bytes.min(s.tmp.len());
        // SAFETY: buf holds count elements of dt (the C contract, kept since the
        // _init call).
        unsafe { s.dt.unpack(&s.tmp[..n], s.buf, s.count) };
    }
}

/// A receive's completion: the program's tag in the status, and the data unpacked
/// if no MPI_Parrived did it.
struct Received {
    tag: c_int,
    pending: Pending,
}

impl Hook for Received {
    fn done(self: Box<Self>, st: &mut CStatus) {
        st.tag = self.tag;
        unpack(&self.pending, st.bytes);
    }
    fn freed(self: Box<Self>) {}
}

/// MPI_Start of a partitioned request: a fresh request for this round.
fn start_round(s: &Shared, out: *mut MPI_Request) -> c_int {
    let r = (|| {
        // The state's lock is not held while the runtime's is taken (MPI_Parrived
        // and completion take them the other way round).
        let (send, peer, coll, tag, wire_tag, buf, count, dt, pending) = {
            let mut g = lock(s);
            g.ready.fill(0);
            g.nready = 0;
            g.open = true;
            (
                g.send,
                g.peer,
                g.coll.clone(),
                g.tag,
                g.wire_tag,
                g.buf,
                g.count,
                g.dt.clone(),
                g.pending.clone(),
            )
        };
        let cap = dt.size().checked_mul(count).ok_or(MPI_ERR_COUNT)?;
        let ptr = if send || peer.is_none() || dt.is_contiguous() || cap == 0 {
            buf.wrapping_offset(dt.true_lb())
        } else {
            let mut tmp = vec![0u8; cap];
            let ptr = tmp.as_mut_ptr();
            let staged = Staged {
                tmp,
                dt,
                buf,
                count,
            };
            *pending.lock().unwrap_or_else(|p| p.into_inner()) = Some(staged);
            ptr
        };
        let ranks = coll.ranks.clone();
        let h = runtime::with("MPI_Start", |rt| {
            let p = p2p(rt)?;
            let Some(src) = peer else {
                return insert(p, None, Some(CStatus::empty()), ranks, Finish::None, None);
            };
            if send {
                return insert(p, None, None, ranks, Finish::Custom(Box::new(Unsent)), None);
            }
            // SAFETY: ptr is the program's buffer (untouched until completion by the
            // standard) or the staging Vec, which lives until unpacked; each is
            // valid for cap bytes.
            let id = unsafe {
                p.engine
                    .irecv(Some(src), coll.ctx, Some(wire_tag), ptr, cap)
            }
            .map_err(|e| report("MPI_Start", &e))?;
            let hook = Received { tag, pending };
            insert(
                p,
                Some(id),
                None,
                ranks,
                Finish::Custom(Box::new(hook)),
                None,
            )
        })?;
        // SAFETY: the fresh request's slot, from pcoll::start_coll.
        unsafe { out.write(h) };
        Ok(())
    })();
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(e) => e,
    }
}

/// Psend_init / Precv_init: validates, then makes the persistent request.
///
/// # Safety
/// `buf` holds `partitions * count` elements of `dt` for the request's life.
#[allow(clippy::too_many_arguments)]
unsafe fn init(
    send: bool,
    buf: *mut c_void,
    partitions: c_int,
    count: usize,
    dt: MPI_Datatype,
    peer: c_int,
    tag: c_int,
    comm_h: MPI_Comm,
    request: *mut MPI_Request,
    name: &str,
) -> Result<(), c_int> {
    let partitions = match check_count(partitions)? {
        0 => return Err(MPI_ERR_ARG),
        n => n,
    };
    let total = partitions.checked_mul(count).ok_or(MPI_ERR_COUNT)?;
    let dt = datatype::lookup_committed(dt)?;
    dt.size().checked_mul(total).ok_or(MPI_ERR_COUNT)?;
    let mut coll = crate::comm::lookup(comm_h, name)?;
    // No wildcards: partitioned operations are matched by init order (MPI-4 §4.2).
    let tag = send_tag(tag)?;
    let peer = send_peer(&coll, peer)?;
    coll.ctx += 1;
    // Allocated before the pairing is counted: a refusal must not shift the count.
    let ready = bits(if send { partitions } else { 0 })?;
    let pairing = next_pairing(coll.ctx, peer, tag, send);
    let state: Shared = Arc::new(Mutex::new(Part {
        send,
        partitions,
        ready,
        nready: 0,
        open: false,
        comm_h,
        coll,
        peer,
        tag,
        wire_tag: wire_tag(tag, pairing),
        buf: buf.cast(),
        count: total,
        dt,
        pending: Arc::default(),
    }));
    let entry = Arc::new(Entry {
        h: OnceLock::new(),
        state: state.clone(),
    });
    let e2 = entry.clone();
    let start: Starter = Arc::new(move |out| start_round(&e2.state, out));
    crate::pcoll::init(comm_h, request, start, name)?;
    // SAFETY: pcoll::init wrote the handle (request is non-NULL there).
    let h = unsafe { request.read() };
    let _ = entry.h.set(h);
    table().insert(h, state);
    Ok(())
}

fn lookup(h: MPI_Request, send: bool) -> Result<Shared, c_int> {
    match table().get(&h) {
        Some(s) if lock(s).send == send => Ok(s.clone()),
        _ => Err(MPI_ERR_REQUEST),
    }
}

/// Marks the partitions `parts` ready; the last one sends the whole buffer.
fn pready(h: MPI_Request, parts: impl Iterator<Item = c_int>, name: &str) -> Result<(), c_int> {
    let s = lookup(h, true)?;
    let mut g = lock(&s);
    if !g.open {
        return Err(MPI_ERR_REQUEST);
    }
    for i in parts {
        let i = usize::try_from(i).map_err(|_| MPI_ERR_ARG)?;
        if i >= g.partitions {
            return Err(MPI_ERR_ARG);
        }
        let (word, bit) = (i / 64, 1u64 << (i % 64));
        match g.ready.get_mut(word) {
            Some(w) if *w & bit == 0 => *w |= bit,
            _ => return Err(MPI_ERR_ARG),
        }
        g.nready += 1;
    }
    if g.nready < g.partitions {
        return Ok(());
    }
    g.open = false;
    let (peer, coll, buf, count, dt, wire_tag) = (
        g.peer,
        g.coll.clone(),
        g.buf,
        g.count,
        g.dt.clone(),
        g.wire_tag,
    );
    drop(g);
    let Some(dest) = peer else {
        return runtime::with(name, |rt| {
            let r = p2p(rt)?.reqs.get_mut(h).ok_or(MPI_ERR_REQUEST)?;
            r.finish = Finish::None;
            r.ready = Some(CStatus::empty());
            Ok(())
        });
    };
    // SAFETY: the buffer of the _init call, valid while the request is active.
    let tmp = unsafe {
        issue_send(
            &coll,
            buf.cast_const().cast(),
            count,
            dt,
            Some(dest),
            wire_tag,
            SendMode::Standard,
            false,
            name,
            None,
        )?
    };
    crate::p2p_more::adopt(h, tmp, name)
}

fn comm_of(h: MPI_Request) -> MPI_Comm {
    table().get(&h).map_or(MPI_COMM_WORLD, |s| lock(s).comm_h)
}

mpi_fn! {
    fn MPI_Psend_init / PMPI_Psend_init(buf: *const c_void, partitions: c_int, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info; // no hint is used
        let r = check_count(count).and_then(|n| {
            // SAFETY: the C contract for buf.
            unsafe { init(true, buf.cast_mut(), partitions, n, datatype, dest, tag, comm, request, "MPI_Psend_init") }
        });
        finish(comm, "MPI_Psend_init", r)
    }
}

mpi_fn! {
    fn MPI_Psend_init_c / PMPI_Psend_init_c(buf: *const c_void, partitions: c_int, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info;
        let r = usize::try_from(count).map_err(|_| MPI_ERR_COUNT).and_then(|n| {
            // SAFETY: the C contract for buf.
            unsafe { init(true, buf.cast_mut(), partitions, n, datatype, dest, tag, comm, request, "MPI_Psend_init_c") }
        });
        finish(comm, "MPI_Psend_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Precv_init / PMPI_Precv_init(buf: *mut c_void, partitions: c_int, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info;
        let r = check_count(count).and_then(|n| {
            // SAFETY: the C contract for buf.
            unsafe { init(false, buf, partitions, n, datatype, source, tag, comm, request, "MPI_Precv_init") }
        });
        finish(comm, "MPI_Precv_init", r)
    }
}

mpi_fn! {
    fn MPI_Precv_init_c / PMPI_Precv_init_c(buf: *mut c_void, partitions: c_int, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
        let _ = info;
        let r = usize::try_from(count).map_err(|_| MPI_ERR_COUNT).and_then(|n| {
            // SAFETY: the C contract for buf.
            unsafe { init(false, buf, partitions, n, datatype, source, tag, comm, request, "MPI_Precv_init_c") }
        });
        finish(comm, "MPI_Precv_init_c", r)
    }
}

mpi_fn! {
    fn MPI_Pready / PMPI_Pready(partition: c_int, request: MPI_Request) -> c_int {
        let r = pready(request, std::iter::once(partition), "MPI_Pready");
        finish(comm_of(request), "MPI_Pready", r)
    }
}

mpi_fn! {
    fn MPI_Pready_range / PMPI_Pready_range(partition_low: c_int, partition_high: c_int, request: MPI_Request) -> c_int {
        let r = if partition_low > partition_high {
            Err(MPI_ERR_ARG)
        } else {
            pready(request, partition_low..=partition_high, "MPI_Pready_range")
        };
        finish(comm_of(request), "MPI_Pready_range", r)
    }
}

mpi_fn! {
    fn MPI_Pready_list / PMPI_Pready_list(length: c_int, array_of_partitions: *const c_int, request: MPI_Request) -> c_int {
        let r = check_count(length).and_then(|n| {
            if n > 0 && array_of_partitions.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let list = if n == 0 {
                &[][..]
            } else {
                // SAFETY: non-NULL, `length` ints by the C contract.
                unsafe { std::slice::from_raw_parts(array_of_partitions, n) }
            };
            pready(request, list.iter().copied(), "MPI_Pready_list")
        });
        finish(comm_of(request), "MPI_Pready_list", r)
    }
}

mpi_fn! {
    fn MPI_Parrived / PMPI_Parrived(request: MPI_Request, partition: c_int, flag: *mut c_int) -> c_int {
        let r = (|| {
            if flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let s = lookup(request, false)?;
            let (n, pending) = {
                let g = lock(&s);
                (g.partitions, g.pending.clone())
            };
            if !usize::try_from(partition).is_ok_and(|i| i < n) {
                return Err(MPI_ERR_ARG);
            }
            // Whether the message is in, and how many bytes it brought.
            let arrived = runtime::with("MPI_Parrived", |rt| {
                let p = p2p(rt)?;
                let _ = p.engine.progress().map_err(|e| report("MPI_Parrived", &e))?;
                let r = p.reqs.get(request).ok_or(MPI_ERR_REQUEST)?;
                // An inactive request has nothing outstanding (MPI-4.1 §4.2.3).
                Ok(match (r.active, r.id) {
                    (false, _) => Some(0),
                    (true, Some(id)) => p.engine.status(id).map(|s| s.len),
                    (true, None) => r.ready.map(|s| s.bytes),
                })
            })?;
            if let Some(bytes) = arrived {
                unpack(&pending, bytes);
            }
            // SAFETY: non-NULL int by the C contract.
            unsafe { flag.write(c_int::from(arrived.is_some())) };
            Ok(())
        })();
        finish(comm_of(request), "MPI_Parrived", r)
    }
}
