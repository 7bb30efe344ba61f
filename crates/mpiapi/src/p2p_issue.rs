//! Starting point-to-point operations from C (the general path; `p2p_fast.rs` has
//! the predefined-communicator one): the argument checks, the translation of a
//! communicator's ranks into world ranks, datatypes (contiguous data goes straight
//! from and into the caller's memory; other layouts are given to the fabric as a
//! [`myrix_mpi::p2p::Layout`] it gathers from and scatters into in place, packed
//! into a buffer the request holds only where the fabric cannot), buffered sends'
//! copies. Each operation makes one engine request
//! and one C handle ([`super::insert`]); this part owns no state of its own.

use super::*;

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
    dt.size().checked_mul(count).ok_or(MPI_ERR_COUNT)?;
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
        if !buffered && p.engine.fabric().layouts() {
            // SAFETY: forwarded contract.
            if let Some(lay) = unsafe { layout_of(buf.cast_mut().cast(), count, &dt) } {
                // SAFETY: the layout is boxed in the request (or its orphan entry)
                // until the engine's request completes; its memory is the caller's
                // buffer, untouched until then by the standard's rule.
                let id = unsafe { p.engine.isend_layout(dest, c.ctx, tag, &*lay, mode) }
                    .map_err(|e| report(name, &e))?;
                let finish = Finish::Layout(lay);
                return insert(p, Some(id), None, c.ranks.clone(), finish, persist);
            }
        }
        // SAFETY: forwarded contract.
        let (ptr, len, packed) = unsafe { send_region(buf, count, &dt)? };
        let (ptr, finish) = if buffered {
            p.reap_orphans();
            let owner = p.bufs.reserve(c.ctx, len, name)?;
            let mut copy = packed.unwrap_or_default();
            if copy.is_empty() && len > 0 {
                // SAFETY: ptr holds len bytes of the caller's data.
                copy.extend_from_slice(unsafe { std::slice::from_raw_parts(ptr, len) });
            }
            (copy.as_ptr(), Finish::Buffered(Box::new((copy, owner))))
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
                if let Finish::Buffered(b) = &finish {
                    p.bufs.release(b.1, b.0.len());
                }
                return Err(report(name, &e));
            }
        };
        if buffered {
            // A buffered send is complete for the caller once copied: the engine's
            // request runs on with the copy, reaped later.
            p.orphans.push((id, finish));
            let sent = Sent::new(dest, p.engine.last_sent(dest));
            let ready = Some(CStatus::empty());
            return insert_sent(p, None, ready, c.ranks.clone(), persist, sent);
        }
        insert(p, Some(id), None, c.ranks.clone(), finish, persist)
    })
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
        // SAFETY: the caller's buffer holds count elements of dt; the layout is
        // boxed in the request until the engine's completes.
        let lay = unsafe {
            recv_layout(p, buf, count, &dt, cap, |p, lay, cap| {
                p.engine
                    .irecv_layout(src, c.ctx, tag, lay, cap)
                    .map_err(|e| report(name, &e))
            })
        };
        if let Some(r) = lay {
            let (id, finish) = r?;
            return insert(p, Some(id), None, c.ranks.clone(), finish, persist);
        }
        let (ptr, finish) = recv_target(buf, count, &dt, cap);
        // SAFETY: ptr is the caller's buffer (untouched until completion by the
        // standard) or a Vec the request holds, each valid for cap bytes.
        let id =
            unsafe { p.engine.irecv(src, c.ctx, tag, ptr, cap) }.map_err(|e| report(name, &e))?;
        insert(p, Some(id), None, c.ranks.clone(), finish, persist)
    })
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
    let msg = m.msg;
    // SAFETY: as in issue_recv.
    let lay = unsafe {
        recv_layout(p, buf, count, &dt, cap, |p, lay, cap| {
            p.engine
                .imrecv_layout(msg, lay, cap)
                .map_err(|e| report(name, &e))
        })
    };
    if let Some(r) = lay {
        let (id, finish) = r?;
        return insert(p, Some(id), None, m.ranks, finish, None);
    }
    let (ptr, finish) = recv_target(buf, count, &dt, cap);
    // SAFETY: as in issue_recv.
    let id = unsafe { p.engine.imrecv(m.msg, ptr, cap) }.map_err(|e| report(name, &e))?;
    insert(p, Some(id), None, m.ranks, finish, None)
}

/// A non-contiguous buffer of `count` elements of `dt` at `buf` as a layout the
/// fabric gathers from or scatters into in place (issue 23: no packed copy); `None`
/// when the data is contiguous or empty (one region serves).
///
/// # Safety
/// `buf` holds `count` elements of `dt` (the C caller's contract).
pub(crate) unsafe fn layout_of(
    buf: *mut u8,
    count: usize,
    dt: &Datatype,
) -> Option<Box<myrix_mpi::p2p::Layout>> {
    if dt.is_contiguous() || count == 0 || dt.size() == 0 {
        return None;
    }
    // SAFETY: forwarded contract.
    unsafe { myrix_mpi::p2p::Layout::new(buf, count, dt.clone()) }.map(Box::new)
}

/// A receive into a layout when the fabric takes one (see [`layout_of`]); `None`:
/// the caller posts a flat receive.
///
/// # Safety
/// As [`layout_of`].
unsafe fn recv_layout(
    p: &mut P2p,
    buf: *mut u8,
    count: usize,
    dt: &Datatype,
    cap: usize,
    post: impl FnOnce(&mut P2p, *const myrix_mpi::p2p::Layout, usize) -> Result<ReqId, c_int>,
) -> Option<Result<(ReqId, Finish), c_int>> {
    if !p.engine.fabric().layouts() {
        return None;
    }
    // SAFETY: forwarded contract.
    let lay = unsafe { layout_of(buf, count, dt) }?;
    Some(post(p, &*lay, cap).map(|id| (id, Finish::Layout(lay))))
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
            Finish::Unpack(Box::new(Unpack {
                tmp,
                dt: dt.clone(),
                buf,
                count,
            })),
        )
    }
}
