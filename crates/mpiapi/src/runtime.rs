//! The library's state: whether MPI is initialized, the job (through
//! `myrix_mpi::Job`), the thread level, and the error handlers of the predefined
//! communicators (created communicators keep theirs in `comm`'s table).
//!
//! Two models start it (MPI-4 §11): the World model (MPI_Init … MPI_Finalize, whose
//! phase `MPI_Initialized`/`MPI_Finalized` report) and sessions (`session.rs`). The
//! runtime comes up with the first of them and is torn down once: by MPI_Finalize
//! when no session is open, else at process exit (an `atexit` handler), so sessions
//! can end and start again as often as a program likes. After MPI_Finalize's
//! teardown it never comes up again (the launcher connection is gone): a later
//! MPI_Init or MPI_Session_init is refused with a message.

use crate::abi::*;
use myrix_mpi::Job;
use rtlock::{BiasedLock, Guard};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, AtomicUsize, Ordering};

#[path = "rtlock.rs"]
mod rtlock;

const NOT_INITIALIZED: u8 = 0;
const INITIALIZED: u8 = 1;
const FINALIZED: u8 = 2;

/// The World model's phase.
static PHASE: AtomicU8 = AtomicU8::new(NOT_INITIALIZED);
/// The runtime is up (`RT` holds it): set by the first model to start, cleared by
/// the teardown.
static UP: AtomicBool = AtomicBool::new(false);
/// The runtime was torn down; it never comes up again.
static DOWN: AtomicBool = AtomicBool::new(false);
/// Sessions open (`session.rs`).
static SESSIONS: AtomicUsize = AtomicUsize::new(0);
static WORLD_ERRH: AtomicUsize = AtomicUsize::new(MPI_ERRORS_ARE_FATAL);
static SELF_ERRH: AtomicUsize = AtomicUsize::new(MPI_ERRORS_ARE_FATAL);

/// The initialized library.
pub struct Runtime {
    pub job: Job,
    /// Point-to-point: the engine over the transport chosen at init.
    pub p2p: Option<crate::p2p::P2p>,
    pub provided: c_int,
    pub main_thread: std::thread::ThreadId,
}

/// Every call takes it (calls are serialized whatever the thread level); biased
/// toward the thread that started the runtime, which takes it without a locked
/// instruction (`rtlock.rs`).
static RT: BiasedLock<Option<Runtime>> = BiasedLock::new(None);

#[inline]
fn lock() -> Guard<'static, Option<Runtime>> {
    RT.lock()
}

pub fn initialized() -> bool {
    PHASE.load(Ordering::SeqCst) != NOT_INITIALIZED
}

pub fn finalized() -> bool {
    PHASE.load(Ordering::SeqCst) == FINALIZED
}

/// The thread level myrix provides for `required`: at most MPI_THREAD_SERIALIZED
/// (calls are serialized by a lock; point-to-point progress is not yet thread safe).
pub fn thread_level(required: c_int) -> c_int {
    if required >= MPI_THREAD_SERIALIZED {
        MPI_THREAD_SERIALIZED
    } else if required >= MPI_THREAD_FUNNELED {
        MPI_THREAD_FUNNELED
    } else {
        MPI_THREAD_SINGLE
    }
}

/// Whether the runtime is up (by MPI_Init or a session).
pub fn up() -> bool {
    UP.load(Ordering::SeqCst)
}

/// MPI_Init(_thread): starts the World model (and the runtime, unless a session
/// started it); the thread level provided for `required`.
pub fn init(required: c_int, name: &str) -> Result<c_int, c_int> {
    let mut rt = lock();
    if PHASE.load(Ordering::SeqCst) != NOT_INITIALIZED {
        crate::ffi::say!("myrix MPI: {name}: MPI was already initialized (or finalized)");
        return Err(MPI_ERR_OTHER);
    }
    let provided = thread_level(required);
    start(&mut rt, provided, name)?;
    if let Some(r) = rt.as_mut() {
        r.provided = provided;
    }
    PHASE.store(INITIALIZED, Ordering::SeqCst);
    Ok(provided)
}

/// MPI_Session_init's share: the runtime up (started here if no model runs yet),
/// one more session counted.
pub fn open_session(provided: c_int, name: &str) -> Result<(), c_int> {
    let mut rt = lock();
    start(&mut rt, provided, name)?;
    SESSIONS.fetch_add(1, Ordering::SeqCst);
    static AT_EXIT: std::sync::Once = std::sync::Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: registers a plain `extern "C" fn()`.
        unsafe { libc::atexit(teardown_at_exit) };
    });
    Ok(())
}

/// The teardown of a runtime that sessions kept up: every rank's process runs it
/// as it exits (collective over the job, as MPI_Finalize). Not while the World
/// model runs: a program that exits without MPI_Finalize is erroneous, and its
/// launcher reports it.
extern "C" fn teardown_at_exit() {
    if UP.load(Ordering::SeqCst) && PHASE.load(Ordering::SeqCst) != INITIALIZED {
        let _ = std::panic::catch_unwind(|| teardown("MPI_Session_finalize (at exit)"));
    }
}

/// Connects to the launcher (or becomes a singleton), unless the runtime is up.
fn start(rt: &mut Guard<'_, Option<Runtime>>, provided: c_int, name: &str) -> Result<(), c_int> {
    if DOWN.load(Ordering::SeqCst) {
        crate::ffi::say!(
            "myrix MPI: {name}: MPI was finalized (MPI_Finalize or the last session) and \
             cannot be started again in this process"
        );
        return Err(MPI_ERR_OTHER);
    }
    if rt.is_some() {
        return Ok(());
    }
    // The start-up Rust programs' `myrix_mpi::World` shares: the job, the spin rule,
    // the transport.
    let (job, fabric) = myrix_mpi::world::start().map_err(|e| {
        crate::ffi::say!("myrix MPI: {name}: {e}");
        MPI_ERR_OTHER
    })?;
    **rt = Some(Runtime {
        p2p: Some(crate::p2p::P2p::new(myrix_mpi::p2p::Engine::new(fabric))),
        job,
        provided,
        main_thread: std::thread::current().id(),
    });
    rt.bias_to_current_thread();
    UP.store(true, Ordering::SeqCst);
    Ok(())
}

/// Advances nonblocking collective schedules, if any run: called from waits that do
/// not drive the engine (shared-memory collectives), so a peer waiting for one of
/// this rank's schedules is not stalled. Skips when the lock is taken (a caller
/// holding it drives the engine itself).
///
/// Every [`LOST_CHECK_EVERY`] calls it also takes in the fabric's events and asks
/// whether a peer died: a rank dead inside a shared-memory collective never posts
/// its step, and such a wait cannot return an error, so the job is ended (an abort
/// through the launcher) instead of left hanging. A peer that exited after
/// MPI_Finalize cannot be the one seen here: finalize starts with a barrier over
/// MPI_COMM_WORLD, so once any rank is past it no rank waits in a collective.
pub fn progress_schedules() {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let Some(mut rt) = RT.try_lock() else {
        return;
    };
    let check = CALLS.fetch_add(1, Ordering::Relaxed) % LOST_CHECK_EVERY == 0;
    let mut lost = None;
    if let Some(p) = rt.as_mut().and_then(|r| r.p2p.as_mut()) {
        if check {
            // A probe on a context nobody sends on matches nothing: it reports a
            // lost peer (or a broken fabric) and otherwise only makes progress.
            if let Err(e) = p.engine.iprobe(None, NO_TRAFFIC_CTX, None) {
                lost = Some(e.to_string());
            }
        } else if p.engine.has_schedules() {
            let _ = p.engine.progress();
        }
    }
    drop(rt);
    if let Some(why) = lost {
        crate::ffi::say!(
            "myrix MPI: {why}, while this rank waited in a collective on shared memory; \
             ending the job"
        );
        abort(MPI_ERR_PROC_ABORTED, &why);
    }
}

/// Idle calls of a shared-memory wait between two looks for dead peers (the waits
/// call it once per yield or 64 spins: a look every few milliseconds at most).
const LOST_CHECK_EVERY: u32 = 64;

/// A context id no communicator gets (theirs are small and even, intercommunicator
/// set-up uses `u32::MAX - 1`).
const NO_TRAFFIC_CTX: u32 = u32::MAX;

/// Runs `f` on the runtime; `MPI_ERR_OTHER` before init or after finalize (with a
/// message naming `name`).
pub fn with<T>(name: &str, f: impl FnOnce(&mut Runtime) -> Result<T, c_int>) -> Result<T, c_int> {
    let mut rt = lock();
    match rt.as_mut().filter(|_| UP.load(Ordering::SeqCst)) {
        Some(r) => f(r),
        None if DOWN.load(Ordering::SeqCst) => {
            crate::ffi::say!("myrix MPI: {name} called after MPI_Finalize");
            Err(MPI_ERR_OTHER)
        }
        None => {
            crate::ffi::say!("myrix MPI: {name} called before MPI_Init");
            Err(MPI_ERR_OTHER)
        }
    }
}

/// `Ok` while the runtime is up; otherwise the error `with` would report.
pub fn check(name: &str) -> Result<(), c_int> {
    if UP.load(Ordering::SeqCst) {
        return Ok(());
    }
    with(name, |_| Ok(()))
}

/// MPI_Finalize: ends the World model; tears the runtime down unless a session is
/// still open (then it goes at exit).
pub fn finalize(name: &str) -> Result<(), c_int> {
    if PHASE.load(Ordering::SeqCst) != INITIALIZED {
        crate::ffi::say!("myrix MPI: {name}: MPI is not initialized (or already finalized)");
        return Err(MPI_ERR_OTHER);
    }
    if SESSIONS.load(Ordering::SeqCst) == 0 {
        teardown(name)?;
    }
    PHASE.store(FINALIZED, Ordering::SeqCst);
    Ok(())
}

/// MPI_Session_finalize's share: one session fewer. The runtime stays up for the
/// next session or MPI_Init (torn down by MPI_Finalize or at exit).
pub fn close_session() -> Result<(), c_int> {
    SESSIONS
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .map(drop)
        .map_err(|_| MPI_ERR_SESSION)
}

/// Tells the launcher this rank is done and releases everything: collective over
/// the job (each rank tears down once, whichever model finishes last there).
fn teardown(name: &str) -> Result<(), c_int> {
    // Every rank reaches here before any tears down the segments its peers write
    // into; buffered sends still in flight are delivered first.
    crate::dynproc::at_finalize();
    let world = crate::comm::lookup(MPI_COMM_WORLD, name)?;
    myrix_mpi::coll::barrier(&mut crate::coll_glue::pt2pt(&world)).map_err(|e| {
        crate::ffi::say!("myrix MPI: {name}: the closing barrier failed: {e}");
        MPI_ERR_OTHER
    })?;
    with(name, |rt| {
        if let Some(p) = rt.p2p.as_mut() {
            p.drain_orphans()?;
        }
        // Past this fence no rank makes progress on a channel any more (each one
        // returned from the barrier above, taking in and acknowledging everything
        // sent to it): the segments can go, instead of waiting for the next RSM
        // user on this host to reap them.
        if rt.job.size > 1 {
            rt.job.barrier().map_err(|e| {
                crate::ffi::say!("myrix MPI: {name}: {e}");
                MPI_ERR_OTHER
            })?;
        }
        crate::coll::shm::release_all();
        rt.p2p = None;
        rt.job.finalize().map_err(|e| {
            crate::ffi::say!("myrix MPI: {name}: {e}");
            MPI_ERR_OTHER
        })
    })?;
    UP.store(false, Ordering::SeqCst);
    DOWN.store(true, Ordering::SeqCst);
    Ok(())
}

/// Ends the whole job with `code` (never returns).
pub fn abort(code: c_int, why: &str) -> ! {
    let mut rt = lock();
    match rt.as_mut() {
        Some(r) if UP.load(Ordering::SeqCst) => r.job.abort(code, why),
        _ => std::process::exit(i32::from(myrix_mpi::launch::exit_status(code))),
    }
}

fn slot(comm: MPI_Comm) -> Option<&'static AtomicUsize> {
    match comm {
        MPI_COMM_WORLD => Some(&WORLD_ERRH),
        MPI_COMM_SELF => Some(&SELF_ERRH),
        _ => None,
    }
}

/// The error handler of a communicator: the predefined ones' here, created ones'
/// in their `comm` table entry; `None` for an invalid handle.
pub fn errhandler(comm: MPI_Comm) -> Option<MPI_Errhandler> {
    match slot(comm) {
        Some(s) => Some(s.load(Ordering::SeqCst)),
        None => crate::comm::created_errhandler(comm),
    }
}

/// Sets the error handler of a communicator.
pub fn set_errhandler(comm: MPI_Comm, h: MPI_Errhandler) -> Result<(), c_int> {
    match h {
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN => {}
        h if crate::errh::is_user(h, crate::errh::Kind::Comm) => {}
        _ => return Err(MPI_ERR_ERRHANDLER),
    }
    match slot(comm) {
        Some(s) => {
            s.store(h, Ordering::SeqCst);
            Ok(())
        }
        None => crate::comm::set_created_errhandler(comm, h),
    }
}

/// The text of an error code.
pub fn error_text(code: c_int) -> Option<(&'static str, &'static str)> {
    usize::try_from(code)
        .ok()
        .and_then(|c| ERROR_CLASSES.get(c).copied())
}

/// Raises error `code` in `name` on `comm`: under MPI_ERRORS_RETURN returns the code;
/// under MPI_ERRORS_ARE_FATAL (the default; also for an invalid communicator, whose
/// errors go to MPI_COMM_WORLD's handler) or MPI_ERRORS_ABORT reports it and ends
/// the job.
pub fn error(comm: MPI_Comm, code: c_int, name: &str) -> c_int {
    let h = errhandler(comm)
        .or_else(|| errhandler(MPI_COMM_WORLD))
        .unwrap_or(MPI_ERRORS_ARE_FATAL);
    if h == MPI_ERRORS_RETURN {
        return code;
    }
    if let Some(c) = crate::errh::call(h, comm, code) {
        return c;
    }
    let (class, text) = error_text(code).unwrap_or(("MPI_ERR_UNKNOWN", "unknown error"));
    let rank = with_rank();
    crate::ffi::say!(
        "myrix MPI: {name} failed{rank}: {class}: {text}; ending the job (MPI_ERRORS_ARE_FATAL)"
    );
    abort(code, name)
}

fn with_rank() -> String {
    match lock().as_ref() {
        Some(r) if up() => format!(" on rank {}", r.job.rank),
        _ => String::new(),
    }
}
