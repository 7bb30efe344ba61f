//! The one-sided operations in C: MPI_Put, Get, Accumulate, Get_accumulate,
//! Fetch_and_op, Compare_and_swap and the request forms Rput, Rget, Raccumulate,
//! Rget_accumulate (their requests are complete at once: on one node every
//! operation is done when it returns; towards a rank on another node a put or a
//! non-fetching accumulate completes at the next synchronization, which the
//! standard allows for the request forms' "local" completion since the origin
//! buffer is copied before they return). Every argument is checked (counts MPI_ERR_COUNT, types MPI_ERR_TYPE,
//! ops MPI_ERR_OP — only predefined ops are allowed, as the standard says —,
//! ranks MPI_ERR_RANK, buffers MPI_ERR_BUFFER); MPI_PROC_NULL targets do
//! nothing. Errors go through the window's handler.

use crate::abi::*;
use crate::ffi::{mpi_fn, put};
use crate::rma_fast::{fast_acc, fast_bytes, fast_cas};
use crate::win::{code, lookup, target, win_finish, with_win, Win};
use crate::{datatype, op, runtime};
use myrix_mpi::datatype::Datatype;
use myrix_mpi::op::BuiltinOp;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

type Dt = Arc<Datatype>;

fn count(c: MPI_Count) -> Result<usize, c_int> {
    usize::try_from(c).map_err(|_| MPI_ERR_COUNT)
}

fn need(buf: *const c_void, n: usize, t: &Dt) -> Result<(), c_int> {
    if n > 0 && t.size() > 0 && buf.is_null() && t.true_lb() == 0 {
        Err(MPI_ERR_BUFFER)
    } else {
        Ok(())
    }
}

/// The window, the checked origin type and count, and the target (None:
/// MPI_PROC_NULL).
struct Args {
    w: Arc<Win>,
    r: Option<usize>,
    tdt: Dt,
    tcount: usize,
}

fn args(
    win: MPI_Win,
    rank: c_int,
    tcount: MPI_Count,
    tdt: MPI_Datatype,
    name: &str,
) -> Result<Args, c_int> {
    runtime::check(name)?;
    let w = lookup(win)?;
    let tcount = count(tcount)?;
    let tdt = datatype::lookup_committed(tdt)?;
    let r = target(&w, rank)?;
    Ok(Args { w, r, tdt, tcount })
}

/// The byte count of a transfer whose origin and target are the same count of
/// the same predefined type (the fast path); `None` otherwise.
#[inline]
fn same_basic(
    oc: MPI_Count,
    odt: MPI_Datatype,
    tc: MPI_Count,
    tdt: MPI_Datatype,
) -> Option<Result<usize, c_int>> {
    if odt != tdt || oc != tc {
        return None;
    }
    // Only a type whose bytes are one run: a pair type such as MPI_SHORT_INT
    // (size 6, extent 8) has a gap, so `count * size` bytes are not its data.
    let d = datatype::predefined_ref(odt).filter(|d| d.is_contiguous())?;
    Some(count(oc).and_then(|n| n.checked_mul(d.size()).ok_or(MPI_ERR_COUNT)))
}

/// MPI_Put's body.
///
/// # Safety
/// `origin` holds `ocount` elements of `odt`.
#[allow(clippy::too_many_arguments)]
unsafe fn do_put(
    origin: *const c_void,
    ocount: MPI_Count,
    odt: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    tcount: MPI_Count,
    tdt: MPI_Datatype,
    win: MPI_Win,
    name: &str,
) -> Result<(), c_int> {
    if let Some(n) = same_basic(ocount, odt, tcount, tdt) {
        runtime::check(name)?;
        let n = n?;
        if n > 0 && origin.is_null() {
            return Err(MPI_ERR_BUFFER);
        }
        return with_win(win, |w| match target(w, rank)? {
            Some(r) => {
                // SAFETY: the C contract for origin: readable for n bytes (a predefined type).
                unsafe { w.w.put_bytes(origin.cast(), n, r, disp) }.map_err(|e| code(&e, name))
            }
            None => Ok(()),
        })?;
    }
    let a = args(win, rank, tcount, tdt, name)?;
    let oc = count(ocount)?;
    let odt = datatype::lookup_committed(odt)?;
    need(origin, oc, &odt)?;
    let Some(r) = a.r else { return Ok(()) };
    // SAFETY: the C contract for origin.
    unsafe {
        a.w.w
            .put(origin.cast(), oc, &odt, r, disp, a.tcount, &a.tdt)
    }
    .map_err(|e| code(&e, name))
}

/// MPI_Get's body.
///
/// # Safety
/// `origin` is writable for `ocount` elements of `odt`.
#[allow(clippy::too_many_arguments)]
unsafe fn do_get(
    origin: *mut c_void,
    ocount: MPI_Count,
    odt: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    tcount: MPI_Count,
    tdt: MPI_Datatype,
    win: MPI_Win,
    name: &str,
) -> Result<(), c_int> {
    if let Some(n) = same_basic(ocount, odt, tcount, tdt) {
        runtime::check(name)?;
        let n = n?;
        if n > 0 && origin.is_null() {
            return Err(MPI_ERR_BUFFER);
        }
        return with_win(win, |w| match target(w, rank)? {
            Some(r) => {
                // SAFETY: the C contract for origin: writable for n bytes (a predefined type).
                unsafe { w.w.get_bytes(origin.cast(), n, r, disp) }.map_err(|e| code(&e, name))
            }
            None => Ok(()),
        })?;
    }
    let a = args(win, rank, tcount, tdt, name)?;
    let oc = count(ocount)?;
    let odt = datatype::lookup_committed(odt)?;
    need(origin, oc, &odt)?;
    let Some(r) = a.r else { return Ok(()) };
    // SAFETY: the C contract for origin.
    unsafe {
        a.w.w
            .get(origin.cast(), oc, &odt, r, disp, a.tcount, &a.tdt)
    }
    .map_err(|e| code(&e, name))
}

/// A predefined op (user ops are not allowed in RMA: MPI_ERR_OP).
fn rma_op(o: MPI_Op) -> Result<BuiltinOp, c_int> {
    match op::lookup(o)? {
        op::OpRef::Builtin(b) => Ok(b),
        _ => Err(MPI_ERR_OP),
    }
}

/// `n` elements of `t` at `buf`, packed (borrowed when contiguous).
///
/// # Safety
/// `buf` holds `n` elements of `t`.
unsafe fn packed<'a>(
    buf: *const c_void,
    n: usize,
    t: &Dt,
) -> Result<std::borrow::Cow<'a, [u8]>, c_int> {
    let bytes = t.size().checked_mul(n).ok_or(MPI_ERR_COUNT)?;
    if bytes == 0 {
        return Ok(std::borrow::Cow::Borrowed(&[]));
    }
    need(buf, n, t)?;
    if t.is_contiguous() {
        // SAFETY: a contiguous type's n elements are `bytes` bytes at buf + true_lb.
        let s = unsafe {
            std::slice::from_raw_parts(buf.cast::<u8>().wrapping_offset(t.true_lb()), bytes)
        };
        return Ok(std::borrow::Cow::Borrowed(s));
    }
    let mut v = vec![0u8; bytes];
    // SAFETY: the caller's contract.
    unsafe { t.pack(buf.cast(), n, &mut v) };
    Ok(std::borrow::Cow::Owned(v))
}

/// The body of Accumulate and Get_accumulate (`result`: buffer, count, type).
///
/// # Safety
/// `origin` holds `ocount` elements of `odt` (unless the op is MPI_NO_OP);
/// `result` is writable for its count of its type.
#[allow(clippy::too_many_arguments)]
unsafe fn do_acc(
    origin: *const c_void,
    ocount: MPI_Count,
    odt: MPI_Datatype,
    result: Option<(*mut c_void, MPI_Count, MPI_Datatype)>,
    rank: c_int,
    disp: MPI_Aint,
    tcount: MPI_Count,
    tdt: MPI_Datatype,
    o: MPI_Op,
    win: MPI_Win,
    name: &str,
) -> Result<(), c_int> {
    let a = args(win, rank, tcount, tdt, name)?;
    let opx = rma_op(o)?;
    if a.tcount == 0 || a.tdt.size() == 0 {
        // Nothing moves, whatever the types' basic types (MPICH's rma/badrma): the
        // counts and handles are still checked.
        count(ocount)?;
        if opx != BuiltinOp::NoOp {
            datatype::lookup_committed(odt)?;
        }
        if let Some((_, c, t)) = result {
            count(c)?;
            datatype::lookup_committed(t)?;
        }
        return Ok(());
    }
    let tb = a.tdt.uniform_basic().ok_or(MPI_ERR_TYPE)?;
    let data = if opx == BuiltinOp::NoOp {
        std::borrow::Cow::Borrowed(&[][..])
    } else {
        let oc = count(ocount)?;
        let odt = datatype::lookup_committed(odt)?;
        if oc > 0 && odt.size() > 0 && odt.uniform_basic() != Some(tb) {
            return Err(MPI_ERR_TYPE);
        }
        // SAFETY: the C contract for origin.
        unsafe { packed(origin, oc, &odt)? }
    };
    let res = match result {
        Some((p, c, t)) => {
            let c = count(c)?;
            let t = datatype::lookup_committed(t)?;
            need(p, c, &t)?;
            Some((p, c, t))
        }
        None => None,
    };
    let Some(r) = a.r else { return Ok(()) };
    let old =
        a.w.w
            .accumulate(opx, &data, res.is_some(), r, disp, a.tcount, &a.tdt)
            .map_err(|e| code(&e, name))?;
    if let Some((p, c, t)) = res {
        if t.size().checked_mul(c) != Some(old.len()) {
            return Err(MPI_ERR_TYPE);
        }
        if !old.is_empty() {
            // SAFETY: the C contract for result.
            unsafe { t.unpack(&old, p.cast(), c) };
        }
    }
    Ok(())
}

/// A complete request for the R-forms.
fn ready_request(request: *mut MPI_Request, name: &str) -> Result<(), c_int> {
    let h = runtime::with(name, |rt| {
        let p = crate::p2p::p2p(rt)?;
        crate::p2p::insert_ready(p, crate::p2p::CStatus::empty())
    })?;
    // SAFETY: checked non-NULL by the callers; an MPI_Request by the C contract.
    unsafe { put(request, h) }
}

mpi_fn! {
    fn MPI_Put / PMPI_Put(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int {
        // SAFETY: the C contract, forwarded.
        if let Some(c) = unsafe { fast_bytes(origin_addr.cast_mut(), origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, false, "MPI_Put") } {
            return c;
        }
        // SAFETY: the C contract, forwarded.
        let r = unsafe { do_put(origin_addr, origin_count.into(), origin_datatype, target_rank, target_disp, target_count.into(), target_datatype, win, "MPI_Put") };
        win_finish(win, "MPI_Put", r)
    }
}

mpi_fn! {
    fn MPI_Put_c / PMPI_Put_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int {
        // SAFETY: the C contract, forwarded.
        let r = unsafe { do_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, "MPI_Put_c") };
        win_finish(win, "MPI_Put_c", r)
    }
}

mpi_fn! {
    fn MPI_Get / PMPI_Get(origin_addr: *mut c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int {
        // SAFETY: the C contract, forwarded.
        if let Some(c) = unsafe { fast_bytes(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, true, "MPI_Get") } {
            return c;
        }
        // SAFETY: the C contract, forwarded.
        let r = unsafe { do_get(origin_addr, origin_count.into(), origin_datatype, target_rank, target_disp, target_count.into(), target_datatype, win, "MPI_Get") };
        win_finish(win, "MPI_Get", r)
    }
}

mpi_fn! {
    fn MPI_Get_c / PMPI_Get_c(origin_addr: *mut c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int {
        // SAFETY: the C contract, forwarded.
        let r = unsafe { do_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, "MPI_Get_c") };
        win_finish(win, "MPI_Get_c", r)
    }
}

mpi_fn! {
    fn MPI_Accumulate / PMPI_Accumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
        // SAFETY: the C contract, forwarded.
        if let Some(c) = unsafe { fast_acc(origin_addr, origin_count, origin_datatype, std::ptr::null_mut(), target_rank, target_disp, target_count, target_datatype, op, win, "MPI_Accumulate") } {
            return c;
        }
        // SAFETY: the C contract, forwarded.
        let r = unsafe { do_acc(origin_addr, origin_count.into(), origin_datatype, None, target_rank, target_disp, target_count.into(), target_datatype, op, win, "MPI_Accumulate") };
        win_finish(win, "MPI_Accumulate", r)
    }
}

mpi_fn! {
    fn MPI_Accumulate_c / PMPI_Accumulate_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
        // SAFETY: the C contract, forwarded.
        let r = unsafe { do_acc(origin_addr, origin_count, origin_datatype, None, target_rank, target_disp, target_count, target_datatype, op, win, "MPI_Accumulate_c") };
        win_finish(win, "MPI_Accumulate_c", r)
    }
}

mpi_fn! {
    fn MPI_Get_accumulate / PMPI_Get_accumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: c_int, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
        if result_count == 1 && result_datatype == target_datatype && !result_addr.is_null() {
            // SAFETY: the C contract, forwarded.
            if let Some(c) = unsafe { fast_acc(origin_addr, origin_count, origin_datatype, result_addr, target_rank, target_disp, target_count, target_datatype, op, win, "MPI_Get_accumulate") } {
                return c;
            }
        }
        // SAFETY: the C contract, forwarded.
        let r = unsafe { do_acc(origin_addr, origin_count.into(), origin_datatype, Some((result_addr, result_count.into(), result_datatype)), target_rank, target_disp, target_count.into(), target_datatype, op, win, "MPI_Get_accumulate") };
        win_finish(win, "MPI_Get_accumulate", r)
    }
}

mpi_fn! {
    fn MPI_Get_accumulate_c / PMPI_Get_accumulate_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: MPI_Count, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
        // SAFETY: the C contract, forwarded.
        let r = unsafe { do_acc(origin_addr, origin_count, origin_datatype, Some((result_addr, result_count, result_datatype)), target_rank, target_disp, target_count, target_datatype, op, win, "MPI_Get_accumulate_c") };
        win_finish(win, "MPI_Get_accumulate_c", r)
    }
}

mpi_fn! {
    /// One element of a predefined type: Get_accumulate with counts of 1.
    fn MPI_Fetch_and_op / PMPI_Fetch_and_op(origin_addr: *const c_void, result_addr: *mut c_void, datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, op: MPI_Op, win: MPI_Win) -> c_int {
        let name = "MPI_Fetch_and_op";
        if !result_addr.is_null() {
            // SAFETY: the C contract, forwarded.
            if let Some(c) = unsafe { fast_acc(origin_addr, 1, datatype, result_addr, target_rank, target_disp, 1, datatype, op, win, name) } {
                return c;
            }
        }
        let r = if datatype::predefined(datatype).is_none() {
            Err(MPI_ERR_TYPE)
        } else {
            // SAFETY: the C contract, forwarded.
            unsafe { do_acc(origin_addr, 1, datatype, Some((result_addr, 1, datatype)), target_rank, target_disp, 1, datatype, op, win, name) }
        };
        win_finish(win, name, r)
    }
}

mpi_fn! {
    fn MPI_Compare_and_swap / PMPI_Compare_and_swap(origin_addr: *const c_void, compare_addr: *const c_void, result_addr: *mut c_void, datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, win: MPI_Win) -> c_int {
        let name = "MPI_Compare_and_swap";
        // SAFETY: the C contract, forwarded.
        if let Some(c) = unsafe { fast_cas(origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win, name) } {
            return c;
        }
        let r = (|| {
            if datatype::predefined(datatype).is_none() {
                return Err(MPI_ERR_TYPE);
            }
            let a = args(win, target_rank, 1, datatype, name)?;
            if origin_addr.is_null() || compare_addr.is_null() || result_addr.is_null() {
                return Err(MPI_ERR_BUFFER);
            }
            let Some(r) = a.r else { return Ok(()) };
            let n = a.tdt.size();
            // SAFETY: one element of the type at each buffer (the C contract).
            let (o, c) = unsafe {
                (
                    std::slice::from_raw_parts(origin_addr.cast::<u8>(), n),
                    std::slice::from_raw_parts(compare_addr.cast::<u8>(), n),
                )
            };
            let old = a.w.w.compare_and_swap(&a.tdt, o, c, r, target_disp).map_err(|e| code(&e, name))?;
            // SAFETY: result holds one element (the C contract).
            unsafe { std::ptr::copy_nonoverlapping(old.as_ptr(), result_addr.cast::<u8>(), n) };
            Ok(())
        })();
        win_finish(win, name, r)
    }
}

mpi_fn! {
    fn MPI_Rput / PMPI_Rput(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Rput";
        let r = if request.is_null() { Err(MPI_ERR_ARG) } else {
            // SAFETY: the C contract, forwarded.
            unsafe { do_put(origin_addr, origin_count.into(), origin_datatype, target_rank, target_disp, target_count.into(), target_datatype, win, name) }
                .and_then(|()| ready_request(request, name))
        };
        win_finish(win, name, r)
    }
}

mpi_fn! {
    fn MPI_Rget / PMPI_Rget(origin_addr: *mut c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Rget";
        let r = if request.is_null() { Err(MPI_ERR_ARG) } else {
            // SAFETY: the C contract, forwarded.
            unsafe { do_get(origin_addr, origin_count.into(), origin_datatype, target_rank, target_disp, target_count.into(), target_datatype, win, name) }
                .and_then(|()| ready_request(request, name))
        };
        win_finish(win, name, r)
    }
}

mpi_fn! {
    fn MPI_Raccumulate / PMPI_Raccumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Raccumulate";
        let r = if request.is_null() { Err(MPI_ERR_ARG) } else {
            // SAFETY: the C contract, forwarded.
            unsafe { do_acc(origin_addr, origin_count.into(), origin_datatype, None, target_rank, target_disp, target_count.into(), target_datatype, op, win, name) }
                .and_then(|()| ready_request(request, name))
        };
        win_finish(win, name, r)
    }
}

mpi_fn! {
    fn MPI_Rget_accumulate / PMPI_Rget_accumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: c_int, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Rget_accumulate";
        let r = if request.is_null() { Err(MPI_ERR_ARG) } else {
            // SAFETY: the C contract, forwarded.
            unsafe { do_acc(origin_addr, origin_count.into(), origin_datatype, Some((result_addr, result_count.into(), result_datatype)), target_rank, target_disp, target_count.into(), target_datatype, op, win, name) }
                .and_then(|()| ready_request(request, name))
        };
        win_finish(win, name, r)
    }
}
