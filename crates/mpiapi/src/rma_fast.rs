//! The one-element fast paths of the one-sided calls: MPI_Put and MPI_Get of one
//! run of a predefined type, MPI_Accumulate, Get_accumulate, Fetch_and_op and
//! Compare_and_swap of one element of a predefined type with a predefined op.
//! They reach a window in the lock-free slots and its one-element paths
//! (`Window::put_bytes`, `acc_one`, `cas_one`) without datatype objects, op
//! tables or result vectors: these calls are what latency-bound one-sided codes
//! (counters, locks, queues) do, and the general path cost 3x Open MPI there.
//!
//! Each returns `None`, having done nothing, whenever the general path has
//! something to check, refuse or report (another count or type, a NULL buffer
//! where one is needed, MPI_PROC_NULL or a rank out of range, a user op, the
//! runtime not up, a dynamic window or a rank on another node for the
//! accumulates): errors and edge cases stay the general path's alone. Errors of
//! the access itself (no epoch, out of range, an op not defined on the type) go
//! through the window's handler as there.

use crate::abi::*;
use crate::win::{code, win_finish};
use crate::{datatype, op, runtime};
use myrix_mpi::datatype::Basic;
use myrix_mpi::op::BuiltinOp;
use myrix_mpi::rma::{RmaError, Window};
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

/// MPI_Put and MPI_Get of one run of a predefined type (the origin's and the
/// target's count and type alike) on a window in the lock-free table: the
/// window's byte path straight away. `None`, with nothing done, whenever the
/// general path has something to check or report (a count of 0 or less, a NULL
/// buffer, a rank out of range or MPI_PROC_NULL, a runtime not up); errors of the
/// access itself go through the window's handler here as there.
///
/// # Safety
/// `buf` holds (put) or is writable for (get) `oc` elements of `odt`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn fast_bytes(
    buf: *mut c_void,
    oc: c_int,
    odt: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    tc: c_int,
    tdt: MPI_Datatype,
    win: MPI_Win,
    get: bool,
    name: &str,
) -> Option<c_int> {
    if odt != tdt || oc != tc || oc <= 0 || buf.is_null() {
        return None;
    }
    let (size, _) = one_run(odt)?;
    let w = &crate::win::fast_win(win)?.w;
    let r = usize::try_from(rank).ok().filter(|&r| r < w.size())?;
    if !runtime::up() {
        return None;
    }
    // Cannot overflow: a c_int count times a predefined size (at most 64).
    let n = oc as usize * size;
    // SAFETY: the C contract for buf, n bytes of a predefined type.
    let res = unsafe {
        if get {
            w.get_bytes(buf.cast(), n, r, disp)
        } else {
            w.put_bytes(buf.cast_const().cast(), n, r, disp)
        }
    };
    Some(match res {
        Ok(()) => MPI_SUCCESS,
        Err(e) => failed(win, name, &e),
    })
}

/// An error of a fast path's access, through the window's handler (out of line:
/// the success path stays a test).
#[cold]
#[inline(never)]
fn failed(win: MPI_Win, name: &str, e: &RmaError) -> c_int {
    win_finish(win, name, Err(code(e, name)))
}

/// The size and basic type of a predefined handle whose element is one run of
/// bytes (pair types with a gap, such as MPI_SHORT_INT, take the general path).
/// From a table built on first use, indexed by the handle's offset from
/// MPI_DATATYPE_NULL (the ABI numbers every predefined type from 0x200 to
/// 0x2ff): the datatype module's match, its table of type objects and their
/// layout tests cost some 30 instructions per call, a tenth of a put.
#[inline(always)]
fn one_run(dt: MPI_Datatype) -> Option<(usize, Basic)> {
    static TABLE: OnceLock<[u16; 256]> = OnceLock::new();
    let i = dt.wrapping_sub(MPI_DATATYPE_NULL);
    if i >= 256 {
        return None;
    }
    let e = TABLE.get_or_init(|| {
        let mut t = [0u16; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let d = datatype::predefined_ref(MPI_DATATYPE_NULL + i).filter(|d| d.is_contiguous());
            if let Some((d, b)) = d.and_then(|d| Some((d, d.as_basic()?))) {
                // The index must give the type back (Basic::ALL in index order).
                if (1..256).contains(&d.size()) && Basic::ALL.get(b.index()) == Some(&b) {
                    *e = d.size() as u16 | (b.index() as u16) << 8;
                }
            }
        }
        t
    })[i];
    (e != 0).then(|| ((e & 0xff) as usize, Basic::ALL[(e >> 8) as usize]))
}

/// Runs a one-element window call on the window in `win`'s lock-free slot and a
/// rank in range: `f`'s `None` hands the call back to the general path.
#[inline(always)]
fn on_window(
    win: MPI_Win,
    rank: c_int,
    name: &str,
    f: impl FnOnce(&Window, usize) -> Option<Result<(), RmaError>>,
) -> Option<c_int> {
    let w = &crate::win::fast_win(win)?.w;
    let r = usize::try_from(rank).ok().filter(|&r| r < w.size())?;
    if !runtime::up() {
        return None;
    }
    Some(match f(w, r)? {
        Ok(()) => MPI_SUCCESS,
        Err(e) => failed(win, name, &e),
    })
}

/// MPI_Accumulate (`result` NULL), MPI_Get_accumulate and MPI_Fetch_and_op of one
/// element: the origin's, the target's (and the result's, which the callers
/// check) count 1 and the same predefined type, a predefined op, an origin
/// unless the op is MPI_NO_OP.
///
/// # Safety
/// `origin` (unless the op is MPI_NO_OP) holds and `result` (unless NULL) is
/// writable for one element of `dt`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn fast_acc(
    origin: *const c_void,
    oc: c_int,
    odt: MPI_Datatype,
    result: *mut c_void,
    rank: c_int,
    disp: MPI_Aint,
    tc: c_int,
    tdt: MPI_Datatype,
    o: MPI_Op,
    win: MPI_Win,
    name: &str,
) -> Option<c_int> {
    let opx = op::builtin(o)?;
    if oc != 1 || tc != 1 || odt != tdt || (origin.is_null() && opx != BuiltinOp::NoOp) {
        return None;
    }
    let (_, basic) = one_run(tdt)?;
    on_window(win, rank, name, |w, r| {
        // SAFETY: the C contract for origin and result, one element of basic.
        unsafe { w.acc_one(opx, basic, origin.cast(), result.cast(), r, disp) }
    })
}

/// MPI_Compare_and_swap of one element of a predefined type.
///
/// # Safety
/// `origin` and `compare` hold, `result` is writable for, one element of `dt`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn fast_cas(
    origin: *const c_void,
    compare: *const c_void,
    result: *mut c_void,
    dt: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    win: MPI_Win,
    name: &str,
) -> Option<c_int> {
    if origin.is_null() || compare.is_null() || result.is_null() {
        return None;
    }
    let (_, basic) = one_run(dt)?;
    on_window(win, rank, name, |w, r| {
        // SAFETY: the C contract for the three buffers, one element of basic.
        unsafe { w.cas_one(basic, origin.cast(), compare.cast(), result.cast(), r, disp) }
    })
}
