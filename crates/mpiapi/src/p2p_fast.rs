//! The fast paths of point-to-point from C: a predefined communicator, a predefined
//! contiguous datatype, no buffering. No handle lookup, no reference count, one
//! lock around the issue (and the wait, for the blocking calls). Each returns `None`
//! when the general path of [`super`] applies.
//!
//! Must never: diverge from the general path's semantics (errors, statuses,
//! MPI_PROC_NULL), only from its cost.

use super::*;

/// The handles of the standard ABI's predefined datatypes lie in `0x200..0x300`.
const DT_BASE: MPI_Datatype = 0x200;
const DT_SPAN: usize = 0x100;

/// A table entry: size and true lower bound, `None` for a handle that is not a
/// predefined contiguous type.
type Contig = Option<(u32, i32)>;

/// A predefined contiguous datatype's size and true lower bound, by handle, in one
/// indexed load (the table is made on first use from `datatype::predefined_ref`);
/// `None` for any other handle. Before: the handle's `match`, an out-of-line call,
/// the type list's lazy check, its `Arc` and five field checks (≈ 35 instructions
/// on every `MPI_Send`, docs/mpi-p2p.md "Session 27").
#[inline]
fn contig(dt: MPI_Datatype) -> Option<(usize, isize)> {
    static TABLE: std::sync::OnceLock<Box<[Contig]>> = std::sync::OnceLock::new();
    let i = dt.wrapping_sub(DT_BASE);
    if i >= DT_SPAN {
        return None;
    }
    let t = TABLE.get_or_init(|| {
        (0..DT_SPAN)
            .map(|i| {
                let d = datatype::predefined_ref(DT_BASE + i)?;
                if !d.is_contiguous() {
                    return None;
                }
                Some((
                    u32::try_from(d.size()).ok()?,
                    i32::try_from(d.true_lb()).ok()?,
                ))
            })
            .collect()
    });
    t.get(i)
        .copied()
        .flatten()
        .map(|(size, lb)| (size as usize, lb as isize))
}
/// MPI_Send/Ssend/Rsend on a predefined communicator with a predefined contiguous
/// datatype: no handle, no reference count, one lock around the issue and the wait.
/// `None`: the general path applies.
///
/// # Safety
/// The C contract for `buf`.
pub(super) unsafe fn fast_send(a: &SendArgs<'_>) -> Option<Result<(), c_int>> {
    if a.buffered {
        return None;
    }
    let c = comm::predefined_ref(a.comm)?;
    let (size, lb) = contig(a.dt)?;
    Some((|| {
        let count = check_count(a.count)?;
        let tag = send_tag(a.tag)?;
        let Some(dest) = send_peer(c, a.dest)? else {
            return runtime::check(a.name);
        };
        let len = size.checked_mul(count).ok_or(MPI_ERR_COUNT)?;
        let ptr = if len == 0 {
            std::ptr::NonNull::dangling().as_ptr()
        } else {
            a.buf.cast::<u8>().wrapping_offset(lb)
        };
        runtime::with(a.name, |rt| {
            let p = p2p(rt)?;
            if !p.orphans.is_empty() {
                p.reap_orphans();
            }
            // SAFETY: `ptr` holds `len` bytes of the caller's data (the C contract),
            // and this call waits for the request before it returns.
            let Some(id) = (unsafe { p.engine.isend_now(dest, c.ctx, tag, ptr, len, a.mode) })
                .map_err(|e| report(a.name, &e))?
            else {
                // Every byte left the buffer inside the call: no request to wait for.
                return Ok(());
            };
            let s = p.engine.wait(id).map_err(|e| report(a.name, &e))?;
            s.error.map_or(Ok(()), |e| Err(error_code(&e)))
        })
    })())
}

/// MPI_Isend/Issend/Irsend on a predefined communicator with a predefined contiguous
/// datatype: no reference count is touched, and a send the fabric finishes inside
/// the call (a short message into a free postbox) gets a handle with its status
/// ready and no engine request. `None`: the general path applies.
///
/// # Safety
/// The C contract for `buf`.
pub(super) unsafe fn fast_isend(a: &SendArgs<'_>) -> Option<Result<MPI_Request, c_int>> {
    if a.buffered {
        return None;
    }
    let c = comm::predefined_ref(a.comm)?;
    let (size, lb) = contig(a.dt)?;
    Some((|| {
        let count = check_count(a.count)?;
        let tag = send_tag(a.tag)?;
        let peer = send_peer(c, a.dest)?;
        let len = size.checked_mul(count).ok_or(MPI_ERR_COUNT)?;
        let ptr = if len == 0 {
            std::ptr::NonNull::dangling().as_ptr()
        } else {
            a.buf.cast::<u8>().wrapping_offset(lb)
        };
        let ranks = Ranks::Static(&c.ranks[..]);
        runtime::with(a.name, |rt| {
            let p = p2p(rt)?;
            let Some(dest) = peer else {
                return insert(p, None, Some(CStatus::empty()), ranks, Finish::None, None);
            };
            // SAFETY: `ptr` holds `len` bytes of the caller's data, which the standard
            // leaves untouched until the request completes.
            let id = unsafe { p.engine.isend_now(dest, c.ctx, tag, ptr, len, a.mode) }
                .map_err(|e| report(a.name, &e))?;
            let ready = id.is_none().then_some(CStatus {
                source: a.dest,
                tag,
                error: MPI_SUCCESS,
                bytes: len,
                cancelled: false,
            });
            // Such a send can still be cancelled (retracted at the receiver).
            let sent = id
                .is_none()
                .then(|| Sent::new(dest, p.engine.last_sent(dest)))
                .flatten();
            insert_sent(p, id, ready, ranks, None, sent)
        })
    })())
}

/// MPI_Irecv on a predefined communicator with a predefined contiguous datatype:
/// no reference count is touched (see [`fast_isend`]). `None`: the general path.
///
/// # Safety
/// The C contract for `buf`.
pub(super) unsafe fn fast_irecv(
    buf: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: MPI_Comm,
    name: &str,
) -> Option<Result<MPI_Request, c_int>> {
    let c = comm::predefined_ref(comm)?;
    let (size, lb) = contig(dt)?;
    let world = comm == MPI_COMM_WORLD;
    Some((|| {
        let count = check_count(count)?;
        let tag = recv_tag(tag)?;
        let peer = recv_peer(c, src)?;
        let cap = size.checked_mul(count).ok_or(MPI_ERR_COUNT)?;
        let ptr = buf.cast::<u8>().wrapping_offset(lb);
        let ranks = Ranks::Static(&c.ranks[..]);
        runtime::with(name, |rt| {
            let p = p2p(rt)?;
            let Some(src) = peer else {
                return insert(p, None, Some(CStatus::empty()), ranks, Finish::None, None);
            };
            // SAFETY: `ptr` is the caller's buffer of `cap` bytes, untouched by the
            // program until the request completes (the standard's rule).
            let id = unsafe { p.engine.irecv(src, c.ctx, tag, ptr, cap) }
                .map_err(|e| report(name, &e))?;
            // On the world, the handle names the engine's request: no C entry
            // (`p2p_reqs.rs`).
            if world {
                if let Some(h) = engine_handle(id) {
                    return Ok(h);
                }
            }
            insert(p, Some(id), None, ranks, Finish::None, None)
        })
    })())
}

/// MPI_Recv on a predefined communicator with a predefined contiguous datatype
/// (see [`fast_send`]).
///
/// # Safety
/// As [`blocking_recv`].
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn fast_recv(
    buf: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: MPI_Comm,
    st: *mut MPI_Status,
    name: &str,
) -> Option<Result<(), c_int>> {
    let c = comm::predefined_ref(comm)?;
    let (size, lb) = contig(dt)?;
    Some((|| {
        let count = check_count(count)?;
        let tag = recv_tag(tag)?;
        let Some(src) = recv_peer(c, src)? else {
            runtime::check(name)?;
            // SAFETY: the contract for st.
            unsafe { CStatus::empty().store(st) };
            return Ok(());
        };
        let cap = size.checked_mul(count).ok_or(MPI_ERR_COUNT)?;
        let ptr = buf.cast::<u8>().wrapping_offset(lb);
        let s = runtime::with(name, |rt| {
            let p = p2p(rt)?;
            if !p.orphans.is_empty() {
                p.reap_orphans();
            }
            // SAFETY: `ptr` is the caller's buffer of `cap` bytes (the C contract),
            // valid for this whole blocking call.
            unsafe { p.engine.recv_raw(src, c.ctx, tag, ptr, cap) }.map_err(|e| report(name, &e))
        })?;
        let cs = cstatus(&c.ranks, &s);
        // SAFETY: the contract for st.
        unsafe { cs.store(st) };
        if cs.error != MPI_SUCCESS {
            Err(cs.error)
        } else {
            Ok(())
        }
    })())
}
