//! Windows in C: MPI_Win_create, _allocate, _allocate_shared (+ shared_query),
//! _create_dynamic (+ attach/detach), _free; the synchronization calls (fence,
//! lock/unlock, lock_all/unlock_all, flush*, sync, post/start/complete/wait/test);
//! group, attributes (MPI_WIN_BASE, SIZE, DISP_UNIT, CREATE_FLAVOR, MODEL), names
//! and error handlers. The operations are in `rma.rs`; the work in
//! `myrix_mpi::rma`.
//!
//! A window holds a private duplicate of its communicator: its creation
//! exchanges and fences run on that context, apart from the program's
//! collectives. Errors go through the window's error handler
//! (MPI_ERRORS_ARE_FATAL unless set; MPI_COMM_WORLD's for an invalid window).
//! Info arguments are accepted and ignored (MPI_INFO_NULL or an info handle).

use crate::abi::*;
use crate::coll_glue::pt2pt;
use crate::comm::{self, CommRef};
use crate::ffi::{finish, mpi_fn, put, put_str};
use crate::handles::{base, Table};
use crate::runtime;
use myrix_mpi::group::Group;
use myrix_mpi::rma::{Flavor, LockKind, Memory, RmaError, Window};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The predefined attribute values of a window, at stable addresses.
struct Attrs {
    base: *mut c_void,
    size: MPI_Aint,
    disp_unit: c_int,
    flavor: c_int,
    model: c_int,
}

/// A window as the C side holds it.
pub struct Win {
    pub w: Window,
    /// The private duplicate of the communicator.
    dup: MPI_Comm,
    cref: CommRef,
    name: Mutex<String>,
    errh: AtomicUsize,
    attrs: Box<Attrs>,
}

// SAFETY: `attrs.base` is an address only handed back to C, never dereferenced.
unsafe impl Send for Win {}
// SAFETY: as above.
unsafe impl Sync for Win {}

static WINS: Mutex<Table<Arc<Win>>> = Mutex::new(Table::new(base::WIN));

fn wins() -> MutexGuard<'static, Table<Arc<Win>>> {
    WINS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The window behind a handle (`MPI_ERR_WIN` for MPI_WIN_NULL, freed or unknown).
pub fn lookup(win: MPI_Win) -> Result<Arc<Win>, c_int> {
    wins().get(win).cloned().ok_or(MPI_ERR_WIN)
}

/// Windows whose table index is below this are also reachable without the
/// table's lock (the put/get/flush path).
const FAST: usize = 256;
static FAST_H: [AtomicUsize; FAST] = [const { AtomicUsize::new(0) }; FAST];
static FAST_P: [AtomicPtr<Win>; FAST] = [const { AtomicPtr::new(std::ptr::null_mut()) }; FAST];

fn fast_slot(h: MPI_Win) -> Option<usize> {
    Some(h & 0xff_ffff).filter(|&i| i < FAST)
}

/// Runs `f` on the window behind `win`, without the table's lock or a reference
/// count when it can: MPI_THREAD_SERIALIZED (the most myrix provides) means no
/// call frees a window while another call uses it, and MPI_Win_free clears the
/// slot before the table lets go of the window.
pub fn with_win<R>(win: MPI_Win, f: impl FnOnce(&Win) -> R) -> Result<R, c_int> {
    if let Some(p) = fast_ptr(win) {
        // SAFETY: fast_ptr's reasons (a live window no call frees meanwhile).
        return Ok(f(unsafe { &*p }));
    }
    let w = lookup(win)?;
    Ok(f(&w))
}

/// Runs `f` on the window behind `win` if it is in the lock-free slots (see
/// [`with_win`]); `None` (and `f` not run) otherwise.
#[inline(always)]
pub fn with_fast<R>(win: MPI_Win, f: impl FnOnce(&Win) -> R) -> Option<R> {
    // SAFETY: fast_ptr's reasons.
    fast_ptr(win).map(|p| f(unsafe { &*p }))
}

/// The window in `win`'s lock-free slot, if it is there (see [`with_win`] for why
/// it may be used without the table's lock or a reference count): the way in of
/// the one-element paths, where [`with_fast`]'s closure cost a call and its
/// captures.
#[inline(always)]
pub(crate) fn fast_win<'a>(win: MPI_Win) -> Option<&'a Win> {
    // SAFETY: fast_ptr's reasons; the callers use it within their MPI call.
    fast_ptr(win).map(|p| unsafe { &*p })
}

/// The window in `win`'s lock-free slot, if it is there: set from a live window's
/// Arc (kept in the table until the slot is cleared), and no call frees it while
/// another uses it (with_win's reasons).
#[inline(always)]
fn fast_ptr(win: MPI_Win) -> Option<*const Win> {
    let i = fast_slot(win)?;
    if FAST_H[i].load(Ordering::Acquire) != win {
        return None;
    }
    let p = FAST_P[i].load(Ordering::Acquire);
    (!p.is_null()).then_some(p.cast_const())
}

/// The MPI error code of a core error (reported on stderr with its reason).
pub fn code(e: &RmaError, name: &str) -> c_int {
    crate::ffi::say!("myrix MPI: {name}: {e}");
    match e {
        RmaError::Arg(_) => MPI_ERR_ARG,
        RmaError::Rank(_) => MPI_ERR_RANK,
        RmaError::Range { .. } => MPI_ERR_RMA_RANGE,
        RmaError::Type(_) => MPI_ERR_TYPE,
        RmaError::Op => MPI_ERR_OP,
        RmaError::Sync(_) => MPI_ERR_RMA_SYNC,
        RmaError::Unsupported(_) => MPI_ERR_UNSUPPORTED_OPERATION,
        RmaError::Attach(_) => MPI_ERR_RMA_ATTACH,
        RmaError::Flavor => MPI_ERR_RMA_FLAVOR,
        RmaError::Gone(_)
        | RmaError::Peer(_)
        | RmaError::Rsm(..)
        | RmaError::Coll(_)
        | RmaError::Internal(_) => MPI_ERR_OTHER,
    }
}

/// A window call's result through the window's error handler.
#[inline]
pub fn win_finish(win: MPI_Win, name: &str, r: Result<(), c_int>) -> c_int {
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(c) => win_error(win, name, c),
    }
}

/// [`win_finish`]'s error half, out of line: the success path of every window
/// call is then a test, not a call.
#[cold]
#[inline(never)]
fn win_error(win: MPI_Win, name: &str, c: c_int) -> c_int {
    let h = match wins().get(win) {
        Some(w) => w.errh.load(Ordering::Relaxed),
        None => return finish(MPI_COMM_WORLD, name, Err(c)),
    };
    if h == MPI_ERRORS_RETURN {
        return c;
    }
    if let Some(c) = crate::errh::call(h, win, c) {
        return c;
    }
    let (class, text) = runtime::error_text(c).unwrap_or(("MPI_ERR_UNKNOWN", "unknown error"));
    crate::ffi::say!(
        "myrix MPI: {name} failed: {class}: {text}; ending the job (MPI_ERRORS_ARE_FATAL)"
    );
    runtime::abort(c, name)
}

fn check_info(info: MPI_Info) -> Result<(), c_int> {
    if info == MPI_INFO_NULL || info & (0xf << 24) == base::INFO {
        Ok(())
    } else {
        Err(MPI_ERR_INFO)
    }
}

/// The body of every window creation: dups `comm`, builds the window, stores it.
fn create(
    comm_h: MPI_Comm,
    mem: Memory,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    out: *mut MPI_Win,
    name: &str,
) -> Result<Arc<Win>, c_int> {
    check_info(info)?;
    if out.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let disp = usize::try_from(disp_unit)
        .ok()
        .filter(|&d| d > 0 && c_int::try_from(d).is_ok())
        .ok_or(MPI_ERR_DISP)?;
    comm::lookup(comm_h, name)?;
    let node = runtime::with(name, |rt| Ok(rt.job.node_id))?;
    let mut dup = MPI_COMM_NULL;
    // SAFETY: dup is a valid out-parameter.
    let rc = unsafe { comm::PMPI_Comm_dup(comm_h, &mut dup) };
    if rc != MPI_SUCCESS {
        return Err(rc);
    }
    let cref = comm::lookup(dup, name)?;
    let made = Window::create(&mut pt2pt(&cref), mem, disp, node);
    let w = match made {
        Ok(w) => w,
        Err(e) => {
            // SAFETY: dup is the handle just made.
            unsafe { comm::PMPI_Comm_free(&mut dup) };
            return Err(code(&e, name));
        }
    };
    let (flavor, model) = (
        match w.flavor() {
            Flavor::Create => MPI_WIN_FLAVOR_CREATE,
            Flavor::Allocate => MPI_WIN_FLAVOR_ALLOCATE,
            Flavor::Dynamic => MPI_WIN_FLAVOR_DYNAMIC,
            Flavor::Shared => MPI_WIN_FLAVOR_SHARED,
        },
        MPI_WIN_UNIFIED,
    );
    let attrs = Box::new(Attrs {
        base: match mem {
            Memory::Caller { ptr, .. } => ptr.cast(),
            _ => w.base().cast(),
        },
        size: w.len() as MPI_Aint,
        disp_unit: disp as c_int,
        flavor,
        model,
    });
    let win = Arc::new(Win {
        w,
        dup,
        cref,
        name: Mutex::new(String::new()),
        errh: AtomicUsize::new(MPI_ERRORS_ARE_FATAL),
        attrs,
    });
    let h = wins().insert(win.clone()).ok_or(MPI_ERR_NO_MEM)?;
    if let Some(i) = fast_slot(h) {
        FAST_P[i].store(Arc::as_ptr(&win).cast_mut(), Ordering::Release);
        FAST_H[i].store(h, Ordering::Release);
    }
    // SAFETY: out is non-NULL (checked), an MPI_Win by the C contract.
    unsafe { out.write(h) };
    Ok(win)
}

fn size_arg(size: MPI_Aint) -> Result<usize, c_int> {
    usize::try_from(size).map_err(|_| MPI_ERR_SIZE)
}

mpi_fn! {
    fn MPI_Win_create / PMPI_Win_create(base: *mut c_void, size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) -> c_int {
        let name = "MPI_Win_create";
        let r = size_arg(size).and_then(|len| {
            if len > 0 && base.is_null() {
                return Err(MPI_ERR_BASE);
            }
            create(comm, Memory::Caller { ptr: base.cast(), len }, disp_unit as MPI_Aint, info, win, name).map(drop)
        });
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Win_create_c / PMPI_Win_create_c(base: *mut c_void, size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) -> c_int {
        let name = "MPI_Win_create_c";
        let r = size_arg(size).and_then(|len| {
            if len > 0 && base.is_null() {
                return Err(MPI_ERR_BASE);
            }
            create(comm, Memory::Caller { ptr: base.cast(), len }, disp_unit, info, win, name).map(drop)
        });
        finish(comm, name, r)
    }
}

/// MPI_Win_allocate(_shared)(_c): `baseptr` is a `void **`.
///
/// # Safety
/// `baseptr` is NULL or valid for a pointer; `win` NULL or an MPI_Win.
#[allow(clippy::too_many_arguments)]
unsafe fn allocate(
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
    shared: bool,
    name: &str,
) -> c_int {
    let r = size_arg(size).and_then(|len| {
        if baseptr.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let mem = if shared {
            Memory::Shared { len }
        } else {
            Memory::Allocate { len }
        };
        let w = create(comm, mem, disp_unit, info, win, name)?;
        // SAFETY: baseptr is a void ** by the C contract (checked non-NULL).
        unsafe { put(baseptr.cast::<*mut c_void>(), w.attrs.base) }
    });
    finish(comm, name, r)
}

mpi_fn! {
    fn MPI_Win_allocate / PMPI_Win_allocate(size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
        // SAFETY: the C contract, forwarded.
        unsafe { allocate(size, disp_unit as MPI_Aint, info, comm, baseptr, win, false, "MPI_Win_allocate") }
    }
}

mpi_fn! {
    fn MPI_Win_allocate_c / PMPI_Win_allocate_c(size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
        // SAFETY: the C contract, forwarded.
        unsafe { allocate(size, disp_unit, info, comm, baseptr, win, false, "MPI_Win_allocate_c") }
    }
}

mpi_fn! {
    /// Memory contiguous across ranks (rank r + 1's right after rank r's), one RSM
    /// segment every rank maps.
    fn MPI_Win_allocate_shared / PMPI_Win_allocate_shared(size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
        // SAFETY: the C contract, forwarded.
        unsafe { allocate(size, disp_unit as MPI_Aint, info, comm, baseptr, win, true, "MPI_Win_allocate_shared") }
    }
}

mpi_fn! {
    fn MPI_Win_allocate_shared_c / PMPI_Win_allocate_shared_c(size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
        // SAFETY: the C contract, forwarded.
        unsafe { allocate(size, disp_unit, info, comm, baseptr, win, true, "MPI_Win_allocate_shared_c") }
    }
}

mpi_fn! {
    fn MPI_Win_create_dynamic / PMPI_Win_create_dynamic(info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) -> c_int {
        let name = "MPI_Win_create_dynamic";
        let r = create(comm, Memory::Dynamic, 1, info, win, name).map(drop);
        finish(comm, name, r)
    }
}

/// The body of MPI_Win_shared_query(_c).
///
/// # Safety
/// The out-parameters are NULL or valid for their types (`baseptr` a `void **`).
unsafe fn shared_query(
    win: MPI_Win,
    rank: c_int,
    size: *mut MPI_Aint,
    disp: impl FnOnce(usize) -> Result<(), c_int>,
    baseptr: *mut c_void,
) -> Result<(), c_int> {
    let w = lookup(win)?;
    let r = if rank == MPI_PROC_NULL {
        (0..w.w.size())
            .find(|&r| w.w.query(r).is_ok_and(|q| q.1 > 0))
            .unwrap_or(0)
    } else {
        usize::try_from(rank)
            .ok()
            .filter(|&r| r < w.w.size())
            .ok_or(MPI_ERR_RANK)?
    };
    let (b, len, du) = w.w.query(r).map_err(|e| code(&e, "MPI_Win_shared_query"))?;
    // A rank that gave no memory has no base (NULL, as MPICH gives; its
    // rma/win_shared_noncontig_put checks it).
    let b = if len == 0 { std::ptr::null_mut() } else { b };
    // SAFETY: the caller's contract.
    unsafe {
        put(size, len as MPI_Aint)?;
        put(baseptr.cast::<*mut c_void>(), b.cast())?;
    }
    disp(du)
}

mpi_fn! {
    fn MPI_Win_shared_query / PMPI_Win_shared_query(win: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut c_int, baseptr: *mut c_void) -> c_int {
        // SAFETY: the C contract for the out-parameters.
        let r = unsafe {
            // SAFETY: disp_unit is NULL or an int.
            shared_query(win, rank, size, |d| put(disp_unit, d as c_int), baseptr)
        };
        win_finish(win, "MPI_Win_shared_query", r)
    }
}

mpi_fn! {
    fn MPI_Win_shared_query_c / PMPI_Win_shared_query_c(win: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut MPI_Aint, baseptr: *mut c_void) -> c_int {
        // SAFETY: the C contract for the out-parameters.
        let r = unsafe {
            // SAFETY: disp_unit is NULL or an MPI_Aint.
            shared_query(win, rank, size, |d| put(disp_unit, d as MPI_Aint), baseptr)
        };
        win_finish(win, "MPI_Win_shared_query_c", r)
    }
}

mpi_fn! {
    /// Collective: refused (MPI_ERR_RMA_SYNC) inside a lock or PSCW epoch; waits
    /// for every rank, then removes this rank's segments.
    fn MPI_Win_free / PMPI_Win_free(win: *mut MPI_Win) -> c_int {
        let name = "MPI_Win_free";
        if win.is_null() {
            return finish(MPI_COMM_WORLD, name, Err(MPI_ERR_ARG));
        }
        // SAFETY: non-NULL, an MPI_Win by the C contract.
        let h = unsafe { win.read() };
        let r = lookup(h).and_then(|w| {
            crate::attr::delete_all(crate::attr::Kind::Win, h)?;
            crate::info::forget(h);
            w.w.free(&mut pt2pt(&w.cref)).map_err(|e| code(&e, name))?;
            if let Some(i) = fast_slot(h) {
                FAST_H[i].store(0, Ordering::Release);
                FAST_P[i].store(std::ptr::null_mut(), Ordering::Release);
            }
            wins().remove(h);
            let mut dup = w.dup;
            // SAFETY: the window's own duplicate communicator.
            unsafe { comm::PMPI_Comm_free(&mut dup) };
            // SAFETY: as above.
            unsafe { put(win, MPI_WIN_NULL) }
        });
        win_finish(h, name, r)
    }
}

mpi_fn! {
    fn MPI_Win_attach / PMPI_Win_attach(win: MPI_Win, base: *mut c_void, size: MPI_Aint) -> c_int {
        let r = lookup(win).and_then(|w| {
            let len = size_arg(size)?;
            if len > 0 && base.is_null() {
                return Err(MPI_ERR_BASE);
            }
            w.w.attach(base.cast(), len).map_err(|e| code(&e, "MPI_Win_attach"))
        });
        win_finish(win, "MPI_Win_attach", r)
    }
}

mpi_fn! {
    fn MPI_Win_detach / PMPI_Win_detach(win: MPI_Win, base: *const c_void) -> c_int {
        let r = lookup(win)
            .and_then(|w| w.w.detach(base.cast()).map_err(|e| code(&e, "MPI_Win_detach")));
        win_finish(win, "MPI_Win_detach", r)
    }
}

const ASSERTS: c_int =
    MPI_MODE_NOCHECK | MPI_MODE_NOPRECEDE | MPI_MODE_NOPUT | MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED;

fn check_assert(a: c_int, allowed: c_int) -> Result<(), c_int> {
    if a & !(allowed & ASSERTS) != 0 {
        Err(MPI_ERR_ASSERT)
    } else {
        Ok(())
    }
}

/// A target rank of `w`: `None` for MPI_PROC_NULL.
pub fn target(w: &Win, rank: c_int) -> Result<Option<usize>, c_int> {
    if rank == MPI_PROC_NULL {
        return Ok(None);
    }
    usize::try_from(rank)
        .ok()
        .filter(|&r| r < w.w.size())
        .map(Some)
        .ok_or(MPI_ERR_RANK)
}

/// Runs a synchronization body on a window, through its error handler.
fn sync(win: MPI_Win, name: &str, f: impl FnOnce(&Win) -> Result<(), RmaError>) -> c_int {
    let r = runtime::check(name)
        .and_then(|()| lookup(win))
        .and_then(|w| f(&w).map_err(|e| code(&e, name)));
    win_finish(win, name, r)
}

mpi_fn! {
    fn MPI_Win_fence / PMPI_Win_fence(assert: c_int, win: MPI_Win) -> c_int {
        let name = "MPI_Win_fence";
        if let Err(c) = check_assert(assert, ASSERTS & !MPI_MODE_NOCHECK) {
            return win_finish(win, name, Err(c));
        }
        sync(win, name, |w| w.w.fence(&mut pt2pt(&w.cref), assert & MPI_MODE_NOSUCCEED != 0))
    }
}

mpi_fn! {
    fn MPI_Win_lock / PMPI_Win_lock(lock_type: c_int, rank: c_int, assert: c_int, win: MPI_Win) -> c_int {
        let name = "MPI_Win_lock";
        let r = (|| {
            let kind = match lock_type {
                MPI_LOCK_SHARED => LockKind::Shared,
                MPI_LOCK_EXCLUSIVE => LockKind::Exclusive,
                _ => return Err(MPI_ERR_LOCKTYPE),
            };
            check_assert(assert, MPI_MODE_NOCHECK)?;
            runtime::check(name)?;
            let w = lookup(win)?;
            match target(&w, rank)? {
                Some(r) => w.w.lock(kind, r, assert & MPI_MODE_NOCHECK != 0).map_err(|e| code(&e, name)),
                None => Ok(()),
            }
        })();
        win_finish(win, name, r)
    }
}

mpi_fn! {
    fn MPI_Win_unlock / PMPI_Win_unlock(rank: c_int, win: MPI_Win) -> c_int {
        let name = "MPI_Win_unlock";
        let r = runtime::check(name).and_then(|()| lookup(win)).and_then(|w| match target(&w, rank)? {
            Some(r) => w.w.unlock(r).map_err(|e| code(&e, name)),
            None => Ok(()),
        });
        win_finish(win, name, r)
    }
}

mpi_fn! {
    fn MPI_Win_lock_all / PMPI_Win_lock_all(assert: c_int, win: MPI_Win) -> c_int {
        if let Err(c) = check_assert(assert, MPI_MODE_NOCHECK) {
            return win_finish(win, "MPI_Win_lock_all", Err(c));
        }
        sync(win, "MPI_Win_lock_all", |w| w.w.lock_all(assert & MPI_MODE_NOCHECK != 0))
    }
}

mpi_fn! {
    fn MPI_Win_unlock_all / PMPI_Win_unlock_all(win: MPI_Win) -> c_int {
        sync(win, "MPI_Win_unlock_all", |w| w.w.unlock_all())
    }
}

/// The body of MPI_Win_flush and MPI_Win_flush_local (inline: a flush follows
/// every operation of the latency benchmarks; the general path is out of line).
#[inline(always)]
fn flush_one(win: MPI_Win, rank: c_int, name: &str) -> c_int {
    // The window in the lock-free slots and a rank in range (every other case,
    // MPI_PROC_NULL included, is the general path's below).
    if let Some(w) = fast_win(win) {
        if let Some(r) = usize::try_from(rank).ok().filter(|&r| r < w.w.size()) {
            return match w.w.flush_rank(r) {
                Ok(()) => MPI_SUCCESS,
                Err(e) => flush_failed(win, name, &e),
            };
        }
    }
    flush_general(win, rank, name)
}

#[cold]
#[inline(never)]
fn flush_failed(win: MPI_Win, name: &str, e: &RmaError) -> c_int {
    win_finish(win, name, Err(code(e, name)))
}

#[inline(never)]
fn flush_general(win: MPI_Win, rank: c_int, name: &str) -> c_int {
    let r = with_win(win, |w| match target(w, rank)? {
        Some(r) => w.w.flush(Some(r)).map_err(|e| code(&e, name)),
        None => Ok(()),
    })
    .and_then(|r| r);
    win_finish(win, name, r)
}

mpi_fn! {
    fn MPI_Win_flush / PMPI_Win_flush(rank: c_int, win: MPI_Win) -> c_int {
        flush_one(win, rank, "MPI_Win_flush")
    }
}

mpi_fn! {
    fn MPI_Win_flush_local / PMPI_Win_flush_local(rank: c_int, win: MPI_Win) -> c_int {
        flush_one(win, rank, "MPI_Win_flush_local")
    }
}

mpi_fn! {
    fn MPI_Win_flush_all / PMPI_Win_flush_all(win: MPI_Win) -> c_int {
        sync(win, "MPI_Win_flush_all", |w| w.w.flush(None))
    }
}

mpi_fn! {
    fn MPI_Win_flush_local_all / PMPI_Win_flush_local_all(win: MPI_Win) -> c_int {
        sync(win, "MPI_Win_flush_local_all", |w| w.w.flush(None))
    }
}

mpi_fn! {
    fn MPI_Win_sync / PMPI_Win_sync(win: MPI_Win) -> c_int {
        sync(win, "MPI_Win_sync", |w| {
            w.w.sync();
            Ok(())
        })
    }
}

/// The window ranks of a group's processes (MPI_ERR_GROUP for an invalid group,
/// MPI_ERR_RANK for a process outside the window).
fn window_ranks(w: &Win, g: MPI_Group) -> Result<Vec<usize>, c_int> {
    let g = crate::group::get(g)?;
    g.ranks()
        .iter()
        .map(|wr| {
            w.cref
                .ranks
                .iter()
                .position(|x| x == wr)
                .ok_or(MPI_ERR_RANK)
        })
        .collect()
}

mpi_fn! {
    fn MPI_Win_post / PMPI_Win_post(group: MPI_Group, assert: c_int, win: MPI_Win) -> c_int {
        let name = "MPI_Win_post";
        let r = check_assert(assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT)
            .and_then(|()| lookup(win))
            .and_then(|w| {
                let g = window_ranks(&w, group)?;
                w.w.post(&g).map_err(|e| code(&e, name))
            });
        win_finish(win, name, r)
    }
}

mpi_fn! {
    fn MPI_Win_start / PMPI_Win_start(group: MPI_Group, assert: c_int, win: MPI_Win) -> c_int {
        let name = "MPI_Win_start";
        let r = check_assert(assert, MPI_MODE_NOCHECK)
            .and_then(|()| lookup(win))
            .and_then(|w| {
                let g = window_ranks(&w, group)?;
                w.w.start(&g, assert & MPI_MODE_NOCHECK != 0).map_err(|e| code(&e, name))
            });
        win_finish(win, name, r)
    }
}

mpi_fn! {
    fn MPI_Win_complete / PMPI_Win_complete(win: MPI_Win) -> c_int {
        sync(win, "MPI_Win_complete", |w| w.w.complete())
    }
}

mpi_fn! {
    fn MPI_Win_wait / PMPI_Win_wait(win: MPI_Win) -> c_int {
        sync(win, "MPI_Win_wait", |w| w.w.wait(true).map(drop))
    }
}

mpi_fn! {
    fn MPI_Win_test / PMPI_Win_test(win: MPI_Win, flag: *mut c_int) -> c_int {
        let name = "MPI_Win_test";
        let r = lookup(win).and_then(|w| {
            if flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let done = w.w.wait(false).map_err(|e| code(&e, name))?;
            // SAFETY: non-NULL int by the C contract.
            unsafe { put(flag, c_int::from(done)) }
        });
        win_finish(win, name, r)
    }
}

mpi_fn! {
    fn MPI_Win_get_group / PMPI_Win_get_group(win: MPI_Win, group: *mut MPI_Group) -> c_int {
        let r = lookup(win).and_then(|w| {
            if group.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let g = Group::new(w.cref.ranks.to_vec()).map_err(|_| MPI_ERR_INTERN)?;
            let h = crate::group::insert(g)?;
            // SAFETY: non-NULL MPI_Group by the C contract.
            unsafe { put(group, h) }
        });
        win_finish(win, "MPI_Win_get_group", r)
    }
}

mpi_fn! {
    /// The predefined attributes; `attribute_val` (a `void **`) receives the base
    /// itself for MPI_WIN_BASE and the address of the value for the others. Other
    /// keys: flag 0.
    fn MPI_Win_get_attr / PMPI_Win_get_attr(win: MPI_Win, win_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
        let r = lookup(win).and_then(|w| {
            if attribute_val.is_null() || flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let a = &*w.attrs;
            let v: *mut c_void = match win_keyval {
                MPI_WIN_BASE => a.base,
                MPI_WIN_SIZE => (&a.size as *const MPI_Aint).cast_mut().cast(),
                MPI_WIN_DISP_UNIT => (&a.disp_unit as *const c_int).cast_mut().cast(),
                MPI_WIN_CREATE_FLAVOR => (&a.flavor as *const c_int).cast_mut().cast(),
                MPI_WIN_MODEL => (&a.model as *const c_int).cast_mut().cast(),
                _ => {
                    crate::attr::check(crate::attr::Kind::Win, win_keyval)?;
                    let v = crate::attr::get(crate::attr::Kind::Win, win, win_keyval);
                    // SAFETY: non-NULL void ** and int by the C contract.
                    return unsafe { crate::attr::put_value(v, attribute_val, flag) };
                }
            };
            // SAFETY: non-NULL void ** and int by the C contract. The addresses stay
            // valid while the window lives.
            unsafe {
                put(attribute_val.cast::<*mut c_void>(), v)?;
                put(flag, 1)
            }
        });
        win_finish(win, "MPI_Win_get_attr", r)
    }
}

mpi_fn! {
    fn MPI_Win_set_name / PMPI_Win_set_name(win: MPI_Win, win_name: *const c_char) -> c_int {
        let r = lookup(win).and_then(|w| {
            if win_name.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: a NUL-terminated string by the C contract.
            let bytes = unsafe { CStr::from_ptr(win_name) }.to_bytes();
            let bytes = &bytes[..bytes.len().min(MPI_MAX_OBJECT_NAME - 1)];
            *w.name.lock().unwrap_or_else(|p| p.into_inner()) = String::from_utf8_lossy(bytes).into_owned();
            Ok(())
        });
        win_finish(win, "MPI_Win_set_name", r)
    }
}

mpi_fn! {
    fn MPI_Win_get_name / PMPI_Win_get_name(win: MPI_Win, win_name: *mut c_char, resultlen: *mut c_int) -> c_int {
        // MPI 4.1: the null handle has a name too.
        if win == MPI_WIN_NULL {
            // SAFETY: MPI_MAX_OBJECT_NAME bytes and an int by the C contract.
            let r = unsafe { put_str(win_name, MPI_MAX_OBJECT_NAME, resultlen, "MPI_WIN_NULL") };
            return finish(MPI_COMM_WORLD, "MPI_Win_get_name", r);
        }
        let r = lookup(win).and_then(|w| {
            let n = w.name.lock().unwrap_or_else(|p| p.into_inner()).clone();
            // SAFETY: MPI_MAX_OBJECT_NAME bytes and an int by the C contract.
            unsafe { put_str(win_name, MPI_MAX_OBJECT_NAME, resultlen, &n) }
        });
        win_finish(win, "MPI_Win_get_name", r)
    }
}

mpi_fn! {
    /// MPI_ERRORS_ARE_FATAL, MPI_ERRORS_ABORT or MPI_ERRORS_RETURN.
    fn MPI_Win_set_errhandler / PMPI_Win_set_errhandler(win: MPI_Win, errhandler: MPI_Errhandler) -> c_int {
        let r = lookup(win).and_then(|w| match errhandler {
            MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN => {
                w.errh.store(errhandler, Ordering::Relaxed);
                Ok(())
            }
            h if crate::errh::is_user(h, crate::errh::Kind::Win) => {
                w.errh.store(h, Ordering::Relaxed);
                Ok(())
            }
            _ => Err(MPI_ERR_ERRHANDLER),
        });
        win_finish(win, "MPI_Win_set_errhandler", r)
    }
}

mpi_fn! {
    fn MPI_Win_get_errhandler / PMPI_Win_get_errhandler(win: MPI_Win, errhandler: *mut MPI_Errhandler) -> c_int {
        let r = lookup(win).and_then(|w| {
            // SAFETY: NULL or an MPI_Errhandler by the C contract.
            unsafe { put(errhandler, w.errh.load(Ordering::Relaxed)) }
        });
        win_finish(win, "MPI_Win_get_errhandler", r)
    }
}

mpi_fn! {
    fn MPI_Win_call_errhandler / PMPI_Win_call_errhandler(win: MPI_Win, errorcode: c_int) -> c_int {
        match lookup(win) {
            Ok(_) => {
                let c = win_finish(win, "MPI_Win_call_errhandler", Err(errorcode));
                if c == errorcode { MPI_SUCCESS } else { c }
            }
            Err(c) => win_finish(win, "MPI_Win_call_errhandler", Err(c)),
        }
    }
}
