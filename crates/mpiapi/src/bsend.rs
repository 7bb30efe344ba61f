//! Buffered sends' space: the process's buffer (MPI_Buffer_attach), and MPI-4.1's
//! buffers of a communicator (MPI_Comm_attach_buffer) and of a session
//! (MPI_Session_attach_buffer, in `session.rs`), their flushes, and
//! `MPI_BUFFER_AUTOMATIC` (no user buffer: the library finds the space).
//!
//! A buffered send takes its communicator's buffer if one is attached, else that of
//! the session the communicator was made in, else the process's. The copy lives in
//! a `Vec` of the request's (see `p2p::BSEND_COST`): the user's buffer is only a
//! budget, counted here; a send that does not fit fails with MPI_ERR_BUFFER. A flush
//! or a detach waits until every buffered send charged to that buffer has left it.
//!
//! Communicator buffers are keyed by the communicator's context id. A communicator
//! belongs to the session whose group MPI_Comm_create_from_group made it from, and
//! so does every communicator derived from it (dup, idup, split, create, merge):
//! [`SESSION_OF`], kept apart from the runtime's lock so `comm::install` can record
//! it from wherever a communicator is made.

use crate::abi::*;
use crate::comm;
use crate::ffi::{finish, mpi_fn, put};
use crate::greq::Hook;
use crate::p2p::{insert, p2p, spin_until, CStatus, Finish, P2p, BSEND_COST};
use crate::runtime;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Communicators that belong to a session: (context id, session). A leaf lock:
/// nothing else is taken while it is held.
static SESSION_OF: Mutex<Vec<(u32, MPI_Session)>> = Mutex::new(Vec::new());

fn session_of() -> MutexGuard<'static, Vec<(u32, MPI_Session)>> {
    SESSION_OF.lock().unwrap_or_else(|p| p.into_inner())
}

/// Records that the communicator of context `ctx` belongs to session `s`.
pub(crate) fn note_session(ctx: u32, s: MPI_Session) {
    let mut v = session_of();
    v.retain(|e| e.0 != ctx);
    v.push((ctx, s));
}

/// A communicator made from the one of context `parent` (dup, split…) on context
/// `child` belongs to the parent's session, if it has one.
pub(crate) fn inherit_session(parent: u32, child: u32) {
    let mut v = session_of();
    v.retain(|e| e.0 != child);
    if let Some(&(_, s)) = v.iter().find(|e| e.0 == parent) {
        v.push((child, s));
    }
}

/// `MPI_BUFFER_AUTOMATIC`'s address (mpi.h: `((void*)2)`).
pub(crate) const AUTOMATIC: usize = 2;

/// Whose buffer a buffered send was charged to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    Process,
    /// A communicator's, by context id.
    Comm(u32),
    Session(MPI_Session),
}

/// One attached buffer.
struct Space {
    buf: usize,
    size: usize,
    /// Bytes charged by buffered sends not yet gone.
    used: usize,
    /// Buffered sends not yet gone (what a flush request waits on).
    pending: Arc<AtomicUsize>,
}

impl Space {
    fn new(buf: usize, size: usize) -> Space {
        Space {
            buf,
            size,
            used: 0,
            pending: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn fits(&self, need: usize) -> bool {
        self.buf == AUTOMATIC || self.used + need <= self.size
    }
}

/// Every attached buffer.
#[derive(Default)]
pub(crate) struct Buffers {
    process: Option<Space>,
    comms: Vec<(u32, Space)>,
    sessions: Vec<(MPI_Session, Space)>,
}

impl Buffers {
    fn space(&mut self, o: Owner) -> Option<&mut Space> {
        match o {
            Owner::Process => self.process.as_mut(),
            Owner::Comm(c) => self.comms.iter_mut().find(|e| e.0 == c).map(|e| &mut e.1),
            Owner::Session(s) => self
                .sessions
                .iter_mut()
                .find(|e| e.0 == s)
                .map(|e| &mut e.1),
        }
    }

    /// The buffer a buffered send on the communicator of context `ctx` uses.
    fn pick(&self, ctx: u32) -> Option<Owner> {
        if self.comms.iter().any(|e| e.0 == ctx) {
            return Some(Owner::Comm(ctx));
        }
        if !self.sessions.is_empty() {
            let s = session_of().iter().find(|e| e.0 == ctx).map(|e| e.1);
            if let Some(s) = s.filter(|s| self.sessions.iter().any(|e| e.0 == *s)) {
                return Some(Owner::Session(s));
            }
        }
        self.process.as_ref().map(|_| Owner::Process)
    }

    /// Charges a buffered send of `len` bytes on context `ctx`; the buffer charged.
    pub(crate) fn reserve(&mut self, ctx: u32, len: usize, name: &str) -> Result<Owner, c_int> {
        let need = len + BSEND_COST;
        let Some(o) = self.pick(ctx) else {
            crate::ffi::say!("myrix MPI: {name}: no buffer is attached");
            return Err(MPI_ERR_BUFFER);
        };
        let Some(s) = self.space(o) else {
            return Err(MPI_ERR_INTERN);
        };
        if !s.fits(need) {
            crate::ffi::say!(
                "myrix MPI: {name}: {len} bytes do not fit in the attached buffer ({} of {} bytes used)",
                s.used,
                s.size
            );
            return Err(MPI_ERR_BUFFER);
        }
        s.used += need;
        s.pending.fetch_add(1, Ordering::Relaxed);
        Ok(o)
    }

    /// A buffered send of `len` bytes charged to `o` has left.
    pub(crate) fn release(&mut self, o: Owner, len: usize) {
        if let Some(s) = self.space(o) {
            s.used = s.used.saturating_sub(len + BSEND_COST);
            let _ = s
                .pending
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        }
    }

    /// Forgets session `s` (finalized): its buffer and its communicators.
    pub(crate) fn forget_session(&mut self, s: MPI_Session) {
        self.sessions.retain(|e| e.0 != s);
        session_of().retain(|e| e.1 != s);
    }

    /// Forgets the communicator of context `ctx` (freed): its buffer and its
    /// session, so a later communicator given the same context id starts without
    /// either. Sends still charged to it release nothing (`space` finds none).
    pub(crate) fn forget_comm(&mut self, ctx: u32) {
        self.comms.retain(|e| e.0 != ctx);
        session_of().retain(|e| e.0 != ctx);
    }

    fn pending(&mut self, o: Owner) -> usize {
        self.space(o)
            .map_or(0, |s| s.pending.load(Ordering::Relaxed))
    }
}

/// Attaches `buf` (`size` bytes, or MPI_BUFFER_AUTOMATIC) as `o`'s buffer.
pub(crate) fn attach(p: &mut P2p, o: Owner, buf: usize, size: usize) -> Result<(), c_int> {
    let b = &mut p.bufs;
    if b.space(o).is_some() {
        crate::ffi::say!("myrix MPI: a buffer is already attached there");
        return Err(MPI_ERR_BUFFER);
    }
    let size = if buf == AUTOMATIC { 0 } else { size };
    let s = Space::new(buf, size);
    match o {
        Owner::Process => b.process = Some(s),
        Owner::Comm(c) => b.comms.push((c, s)),
        Owner::Session(x) => b.sessions.push((x, s)),
    }
    Ok(())
}

/// Waits until every buffered send charged to `o` has left its buffer.
pub(crate) fn flush(p: &mut P2p, o: Owner) -> Result<(), c_int> {
    spin_until(p, |p| Ok(p.bufs.pending(o) == 0))
}

/// Flushes, then detaches `o`'s buffer: its address and size ((0, 0) when none was
/// attached; MPI_BUFFER_AUTOMATIC and 0 for an automatic one).
pub(crate) fn detach(p: &mut P2p, o: Owner) -> Result<(usize, usize), c_int> {
    flush(p, o)?;
    let b = &mut p.bufs;
    let s = match o {
        Owner::Process => b.process.take(),
        Owner::Comm(c) => take_entry(&mut b.comms, c),
        Owner::Session(x) => take_entry(&mut b.sessions, x),
    };
    Ok(s.map_or((0, 0), |s| (s.buf, s.size)))
}

fn take_entry<K: PartialEq>(v: &mut Vec<(K, Space)>, k: K) -> Option<Space> {
    let i = v.iter().position(|e| e.0 == k)?;
    Some(v.swap_remove(i).1)
}

/// A request complete once every buffered send charged to `o` has left.
pub(crate) fn iflush(p: &mut P2p, o: Owner) -> Result<MPI_Request, c_int> {
    let pending = match p.bufs.space(o) {
        Some(s) => s.pending.clone(),
        None => Arc::new(AtomicUsize::new(0)),
    };
    let hook = Finish::Custom(Box::new(Flush(pending)));
    insert(p, None, None, Arc::<[u32]>::from(&[][..]), hook, None)
}

/// A flush request: ready when its buffer's sends are gone.
struct Flush(Arc<AtomicUsize>);

impl Hook for Flush {
    fn ready(&self) -> bool {
        self.0.load(Ordering::Relaxed) == 0
    }
    fn done(self: Box<Self>, st: &mut CStatus) {
        *st = CStatus::empty();
    }
    fn freed(self: Box<Self>) {}
    fn peek(&self) -> Option<CStatus> {
        self.ready().then(CStatus::empty)
    }
}

/// Writes a detached buffer's address and size to the C caller's out-parameters.
///
/// # Safety
/// `addr` is a `void**` and `size` points to a `T`, both non-NULL.
pub(crate) unsafe fn give_back<T: TryFrom<usize>>(
    addr: *mut c_void,
    size: *mut T,
    (b, n): (usize, usize),
) -> Result<(), c_int> {
    let n = T::try_from(n).map_err(|_| MPI_ERR_COUNT)?;
    // SAFETY: the caller's contract.
    unsafe {
        addr.cast::<*mut c_void>().write(b as *mut c_void);
        size.write(n);
    }
    Ok(())
}

/// The owner of communicator `c`'s buffer.
fn comm_owner(c: MPI_Comm, name: &str) -> Result<Owner, c_int> {
    Ok(Owner::Comm(comm::lookup(c, name)?.ctx))
}

fn size_of<T: TryInto<usize>>(n: T) -> Result<usize, c_int> {
    n.try_into().map_err(|_| MPI_ERR_COUNT)
}

mpi_fn! {
    fn MPI_Buffer_attach / PMPI_Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
        let name = "MPI_Buffer_attach";
        let r = size_of(size).and_then(|n| {
            runtime::with(name, |rt| attach(p2p(rt)?, Owner::Process, buffer as usize, n))
        });
        finish(MPI_COMM_WORLD, name, r)
    }
}

mpi_fn! {
    /// Waits until every buffered send has left the buffer, then gives it back.
    fn MPI_Buffer_detach / PMPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
        let name = "MPI_Buffer_detach";
        let r = if buffer_addr.is_null() || size.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            runtime::with(name, |rt| detach(p2p(rt)?, Owner::Process))
                // SAFETY: non-NULL; a void** and an int by the C contract.
                .and_then(|d| unsafe { give_back(buffer_addr, size, d) })
        };
        finish(MPI_COMM_WORLD, name, r)
    }
}

mpi_fn! {
    fn MPI_Buffer_flush / PMPI_Buffer_flush() -> c_int {
        let name = "MPI_Buffer_flush";
        let r = runtime::with(name, |rt| flush(p2p(rt)?, Owner::Process));
        finish(MPI_COMM_WORLD, name, r)
    }
}

mpi_fn! {
    fn MPI_Buffer_iflush / PMPI_Buffer_iflush(request: *mut MPI_Request) -> c_int {
        let name = "MPI_Buffer_iflush";
        let r = if request.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            runtime::with(name, |rt| iflush(p2p(rt)?, Owner::Process))
                // SAFETY: non-NULL, an MPI_Request by the contract.
                .and_then(|h| unsafe { put(request, h) })
        };
        finish(MPI_COMM_WORLD, name, r)
    }
}

fn comm_attach(c: MPI_Comm, buffer: *mut c_void, size: Result<usize, c_int>, name: &str) -> c_int {
    let r = (|| {
        let (o, n) = (comm_owner(c, name)?, size?);
        runtime::with(name, |rt| attach(p2p(rt)?, o, buffer as usize, n))
    })();
    finish(c, name, r)
}

/// # Safety
/// `addr` is NULL or a `void**`, `size` NULL or a `T`.
unsafe fn comm_detach<T: TryFrom<usize>>(
    c: MPI_Comm,
    addr: *mut c_void,
    size: *mut T,
    name: &str,
) -> c_int {
    let r = (|| {
        if addr.is_null() || size.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let o = comm_owner(c, name)?;
        let d = runtime::with(name, |rt| detach(p2p(rt)?, o))?;
        // SAFETY: non-NULL, the caller's contract.
        unsafe { give_back(addr, size, d) }
    })();
    finish(c, name, r)
}

mpi_fn! {
    fn MPI_Comm_attach_buffer / PMPI_Comm_attach_buffer(comm: MPI_Comm, buffer: *mut c_void, size: c_int) -> c_int {
        comm_attach(comm, buffer, size_of(size), "MPI_Comm_attach_buffer")
    }
}

mpi_fn! {
    fn MPI_Comm_attach_buffer_c / PMPI_Comm_attach_buffer_c(comm: MPI_Comm, buffer: *mut c_void, size: MPI_Count) -> c_int {
        comm_attach(comm, buffer, size_of(size), "MPI_Comm_attach_buffer_c")
    }
}

mpi_fn! {
    fn MPI_Comm_detach_buffer / PMPI_Comm_detach_buffer(comm: MPI_Comm, buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
        // SAFETY: the C contract for the out-parameters.
        unsafe { comm_detach(comm, buffer_addr, size, "MPI_Comm_detach_buffer") }
    }
}

mpi_fn! {
    fn MPI_Comm_detach_buffer_c / PMPI_Comm_detach_buffer_c(comm: MPI_Comm, buffer_addr: *mut c_void, size: *mut MPI_Count) -> c_int {
        // SAFETY: the C contract for the out-parameters.
        unsafe { comm_detach(comm, buffer_addr, size, "MPI_Comm_detach_buffer_c") }
    }
}

mpi_fn! {
    fn MPI_Comm_flush_buffer / PMPI_Comm_flush_buffer(comm: MPI_Comm) -> c_int {
        let name = "MPI_Comm_flush_buffer";
        let r = comm_owner(comm, name)
            .and_then(|o| runtime::with(name, |rt| flush(p2p(rt)?, o)));
        finish(comm, name, r)
    }
}

mpi_fn! {
    fn MPI_Comm_iflush_buffer / PMPI_Comm_iflush_buffer(comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Comm_iflush_buffer";
        let r = (|| {
            if request.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let o = comm_owner(comm, name)?;
            let h = runtime::with(name, |rt| iflush(p2p(rt)?, o))?;
            // SAFETY: non-NULL, an MPI_Request by the contract.
            unsafe { put(request, h) }
        })();
        finish(comm, name, r)
    }
}
