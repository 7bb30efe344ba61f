//! MPI-4 sessions (the standard's chapter 11, "The Sessions Model"): a program gets
//! MPI without MPI_Init, asks for the process sets it may use, makes a group from
//! one and a communicator from the group (MPI_Comm_create_from_group, here too).
//!
//! Process sets: `mpi://WORLD` (every rank of the job) and `mpi://SELF`. Each session
//! keeps its error handler and thread level; the runtime itself (the job, the
//! fabric) is shared with the World model and with other sessions; its start and
//! teardown are `runtime.rs`'s. Errors in a session call go to that
//! session's handler (MPI_SESSION_NULL's, as for MPI_Session_init, is
//! MPI_ERRORS_RETURN), never to MPI_COMM_WORLD's: a sessions-only program has no
//! world.
//!
//! Each session may have a buffer for buffered sends (MPI-4.1,
//! `MPI_Session_attach_buffer` …; the buffers themselves are `bsend.rs`'s): a
//! communicator made by MPI_Comm_create_from_group from a group of the session's
//! process sets uses it when it has none of its own.

use crate::abi::*;
use crate::ffi::{mpi_fn, put};
use crate::handles::{base, Table};
use crate::runtime;
use myrix_mpi::group::Group;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::{Mutex, MutexGuard};

/// The process sets every session offers, in the order `MPI_Session_get_nth_pset`
/// gives them.
const PSETS: [&str; 2] = ["mpi://WORLD", "mpi://SELF"];

struct Session {
    errh: MPI_Errhandler,
    /// The thread level asked for in the info's `thread_level`, as provided.
    provided: c_int,
}

static SESSIONS: Mutex<Table<Session>> = Mutex::new(Table::new(base::SESSION));

/// Groups made by MPI_Group_from_session_pset, with their session (until it is
/// finalized): how a communicator made from one finds its session's buffer.
static GROUP_OF: Mutex<Vec<(MPI_Group, MPI_Session)>> = Mutex::new(Vec::new());

fn group_of() -> MutexGuard<'static, Vec<(MPI_Group, MPI_Session)>> {
    GROUP_OF.lock().unwrap_or_else(|p| p.into_inner())
}

fn sessions() -> MutexGuard<'static, Table<Session>> {
    SESSIONS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether `h` is a handler a session may have.
fn valid_errh(h: MPI_Errhandler) -> bool {
    matches!(
        h,
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN
    ) || crate::errh::is_user(h, crate::errh::Kind::Session)
}

/// Raises `code` in `name` through handler `h` (of session `s`): the code returned
/// under MPI_ERRORS_RETURN or after a user handler; the job ended otherwise.
pub fn raise(h: MPI_Errhandler, s: MPI_Session, code: c_int, name: &str) -> c_int {
    if h == MPI_ERRORS_RETURN {
        return code;
    }
    if let Some(c) = crate::errh::call(h, s, code) {
        return c;
    }
    let (class, text) = runtime::error_text(code).unwrap_or(("MPI_ERR_UNKNOWN", "unknown error"));
    crate::ffi::say!("myrix MPI: {name} failed: {class}: {text}; ending the job");
    runtime::abort(code, name)
}

/// `r` as a C return code, errors through session `s`'s handler (MPI_ERRORS_RETURN
/// for an invalid session).
fn finish(s: MPI_Session, name: &str, r: Result<(), c_int>) -> c_int {
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(code) => {
            let h = sessions().get(s).map_or(MPI_ERRORS_RETURN, |x| x.errh);
            raise(h, s, code, name)
        }
    }
}

fn check(s: MPI_Session) -> Result<(), c_int> {
    sessions().get(s).map(drop).ok_or(MPI_ERR_SESSION)
}

/// The thread level an info's `thread_level` asks for (MPI_THREAD_SINGLE without).
fn required_level(info: MPI_Info) -> Result<c_int, c_int> {
    let pairs = crate::info::pairs_or_empty(info)?;
    let Some((_, v)) = pairs.iter().find(|(k, _)| k == "thread_level") else {
        return Ok(MPI_THREAD_SINGLE);
    };
    Ok(match v.trim() {
        "MPI_THREAD_MULTIPLE" => MPI_THREAD_MULTIPLE,
        "MPI_THREAD_SERIALIZED" => MPI_THREAD_SERIALIZED,
        "MPI_THREAD_FUNNELED" => MPI_THREAD_FUNNELED,
        "MPI_THREAD_SINGLE" => MPI_THREAD_SINGLE,
        // Not a level the standard names: refused, not quietly taken as SINGLE
        // (MPICH's errors/session/sessioninit).
        _ => return Err(MPI_ERR_ARG),
    })
}

fn level_name(l: c_int) -> &'static str {
    match l {
        MPI_THREAD_MULTIPLE => "MPI_THREAD_MULTIPLE",
        MPI_THREAD_SERIALIZED => "MPI_THREAD_SERIALIZED",
        MPI_THREAD_FUNNELED => "MPI_THREAD_FUNNELED",
        _ => "MPI_THREAD_SINGLE",
    }
}

/// The C string at `p`; MPI_ERR_ARG for NULL.
///
/// # Safety
/// `p` is NULL or NUL-terminated.
unsafe fn text<'a>(p: *const c_char) -> Result<&'a [u8], c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// The ranks of a process set, by name.
fn pset(name: &[u8], n: &str) -> Result<Group, c_int> {
    let (size, me) = runtime::with(n, |rt| Ok((rt.job.size, rt.job.rank)))?;
    // Case does not matter (MPICH's tests ask for "mpi://world").
    match name.to_ascii_uppercase().as_slice() {
        b"MPI://WORLD" => Ok(Group::world(size)),
        b"MPI://SELF" => Group::new(vec![me]).map_err(|_| MPI_ERR_INTERN),
        _ => {
            crate::ffi::say!(
                "myrix MPI: {n}: no process set named {:?} (there are mpi://WORLD and mpi://SELF)",
                String::from_utf8_lossy(name)
            );
            Err(MPI_ERR_ARG)
        }
    }
}

mpi_fn! {
    /// Starts a session (and the runtime, if neither MPI_Init nor another session
    /// has). `info`'s `thread_level` is honoured up to MPI_THREAD_SERIALIZED.
    fn MPI_Session_init / PMPI_Session_init(info: MPI_Info, errhandler: MPI_Errhandler, session: *mut MPI_Session) -> c_int {
        let name = "MPI_Session_init";
        let r = (|| {
            if session.is_null() {
                return Err(MPI_ERR_ARG);
            }
            if !valid_errh(errhandler) {
                return Err(MPI_ERR_ERRHANDLER);
            }
            let provided = runtime::thread_level(required_level(info)?);
            runtime::open_session(provided, name)?;
            let h = sessions().insert(Session { errh: errhandler, provided });
            let Some(h) = h else {
                let _ = runtime::close_session();
                return Err(MPI_ERR_NO_MEM);
            };
            // SAFETY: session is an MPI_Session (checked non-NULL).
            unsafe { put(session, h) }
        })();
        // Errors before a session exists go to MPI_SESSION_NULL's handler:
        // MPI_ERRORS_RETURN.
        finish(MPI_SESSION_NULL, name, r)
    }
}

mpi_fn! {
    /// Ends a session. The runtime stays up for a later session (or MPI_Init); it
    /// is torn down at MPI_Finalize or at exit.
    fn MPI_Session_finalize / PMPI_Session_finalize(session: *mut MPI_Session) -> c_int {
        let name = "MPI_Session_finalize";
        if session.is_null() {
            return finish(MPI_SESSION_NULL, name, Err(MPI_ERR_ARG));
        }
        // SAFETY: non-NULL, an MPI_Session by the C contract.
        let s = unsafe { session.read() };
        if let Err(c) = check(s) {
            return finish(s, name, Err(c));
        }
        group_of().retain(|e| e.1 != s);
        let _ = runtime::with(name, |rt| {
            crate::p2p::p2p(rt)?.bufs.forget_session(s);
            Ok(())
        });
        let r = runtime::close_session();
        let code = finish(s, name, r);
        sessions().remove(s);
        // SAFETY: as above.
        unsafe { session.write(MPI_SESSION_NULL) };
        code
    }
}

mpi_fn! {
    fn MPI_Session_get_num_psets / PMPI_Session_get_num_psets(session: MPI_Session, _info: MPI_Info, npset_names: *mut c_int) -> c_int {
        // SAFETY: npset_names is NULL or an int.
        let r = check(session).and_then(|()| unsafe { put(npset_names, PSETS.len() as c_int) });
        finish(session, "MPI_Session_get_num_psets", r)
    }
}

mpi_fn! {
    /// The `n`th process set's name: its length with the NUL when `*pset_len` is 0,
    /// else the name truncated to `*pset_len` bytes with the NUL.
    fn MPI_Session_get_nth_pset / PMPI_Session_get_nth_pset(session: MPI_Session, _info: MPI_Info, n: c_int, pset_len: *mut c_int, pset_name: *mut c_char) -> c_int {
        let r = check(session).and_then(|()| {
            let name = usize::try_from(n).ok().and_then(|i| PSETS.get(i)).ok_or(MPI_ERR_ARG)?;
            if pset_len.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: non-NULL, an int by the C contract.
            let cap = unsafe { pset_len.read() };
            if cap == 0 {
                // SAFETY: as above.
                return unsafe { put(pset_len, name.len() as c_int + 1) };
            }
            let cap = usize::try_from(cap).map_err(|_| MPI_ERR_ARG)?;
            let mut len = 0;
            // SAFETY: pset_name holds *pset_len bytes by the C contract.
            unsafe { crate::ffi::put_str(pset_name, cap, &mut len, name) }
        });
        finish(session, "MPI_Session_get_nth_pset", r)
    }
}

mpi_fn! {
    /// A process set's info: `mpi_size`, its number of processes.
    fn MPI_Session_get_pset_info / PMPI_Session_get_pset_info(session: MPI_Session, pset_name: *const c_char, info: *mut MPI_Info) -> c_int {
        let name = "MPI_Session_get_pset_info";
        let r = check(session).and_then(|()| {
            // SAFETY: NULL or NUL-terminated by the C contract.
            let g = pset(unsafe { text(pset_name) }?, name)?;
            let h = crate::info::insert(vec![("mpi_size".into(), g.size().to_string())])?;
            // SAFETY: info is NULL or an MPI_Info.
            unsafe { put(info, h) }
        });
        finish(session, name, r)
    }
}

mpi_fn! {
    /// The hints in use: `thread_level`.
    fn MPI_Session_get_info / PMPI_Session_get_info(session: MPI_Session, info_used: *mut MPI_Info) -> c_int {
        let r = (|| {
            let level = sessions().get(session).map(|s| s.provided).ok_or(MPI_ERR_SESSION)?;
            let h = crate::info::insert(vec![("thread_level".into(), level_name(level).into())])?;
            // SAFETY: info_used is NULL or an MPI_Info.
            unsafe { put(info_used, h) }
        })();
        finish(session, "MPI_Session_get_info", r)
    }
}

mpi_fn! {
    fn MPI_Group_from_session_pset / PMPI_Group_from_session_pset(session: MPI_Session, pset_name: *const c_char, newgroup: *mut MPI_Group) -> c_int {
        let name = "MPI_Group_from_session_pset";
        let r = check(session).and_then(|()| {
            // SAFETY: NULL or NUL-terminated by the C contract.
            let g = pset(unsafe { text(pset_name) }?, name)?;
            if newgroup.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let h = crate::group::insert(g)?;
            let mut gs = group_of();
            gs.retain(|e| e.0 != h);
            gs.push((h, session));
            drop(gs);
            // SAFETY: newgroup is an MPI_Group (checked non-NULL).
            unsafe { put(newgroup, h) }
        });
        finish(session, name, r)
    }
}

mpi_fn! {
    fn MPI_Session_create_errhandler / PMPI_Session_create_errhandler(session_errhandler_fn: usize, errhandler: *mut MPI_Errhandler) -> c_int {
        // SAFETY: errhandler is NULL or an MPI_Errhandler.
        let r = unsafe { crate::errh::create(crate::errh::Kind::Session, session_errhandler_fn, errhandler) };
        finish(MPI_SESSION_NULL, "MPI_Session_create_errhandler", r)
    }
}

mpi_fn! {
    fn MPI_Session_set_errhandler / PMPI_Session_set_errhandler(session: MPI_Session, errhandler: MPI_Errhandler) -> c_int {
        let r = if !valid_errh(errhandler) {
            Err(MPI_ERR_ERRHANDLER)
        } else {
            match sessions().get_mut(session) {
                Some(s) => {
                    s.errh = errhandler;
                    Ok(())
                }
                None => Err(MPI_ERR_SESSION),
            }
        };
        finish(session, "MPI_Session_set_errhandler", r)
    }
}

mpi_fn! {
    fn MPI_Session_get_errhandler / PMPI_Session_get_errhandler(session: MPI_Session, errhandler: *mut MPI_Errhandler) -> c_int {
        let r = (|| {
            let h = sessions().get(session).map(|s| s.errh).ok_or(MPI_ERR_SESSION)?;
            // SAFETY: errhandler is NULL or an MPI_Errhandler.
            unsafe { put(errhandler, h) }
        })();
        finish(session, "MPI_Session_get_errhandler", r)
    }
}

mpi_fn! {
    /// Invokes the session's error handler with `errorcode`; MPI_SUCCESS once it
    /// returned.
    fn MPI_Session_call_errhandler / PMPI_Session_call_errhandler(session: MPI_Session, errorcode: c_int) -> c_int {
        let name = "MPI_Session_call_errhandler";
        match sessions().get(session).map(|s| s.errh) {
            Some(h) => {
                raise(h, session, errorcode, name);
                MPI_SUCCESS
            }
            None => finish(session, name, Err(MPI_ERR_SESSION)),
        }
    }
}

mpi_fn! {
    /// A communicator of `group`'s members (a group from a session's process set,
    /// or any group of the job's ranks) without a parent communicator: collective
    /// over the group, `stringtag` telling concurrent creations apart. It gets
    /// `errhandler`, which also takes this call's errors.
    fn MPI_Comm_create_from_group / PMPI_Comm_create_from_group(group: MPI_Group, stringtag: *const c_char, _info: MPI_Info, errhandler: MPI_Errhandler, newcomm: *mut MPI_Comm) -> c_int {
        let name = "MPI_Comm_create_from_group";
        let r = (|| {
            if newcomm.is_null() {
                return Err(MPI_ERR_ARG);
            }
            if !(errhandler == MPI_ERRHANDLER_NULL
                || valid_errh(errhandler)
                || crate::errh::is_user(errhandler, crate::errh::Kind::Comm))
            {
                return Err(MPI_ERR_ERRHANDLER);
            }
            // SAFETY: NULL or NUL-terminated by the C contract.
            let tag = unsafe { text(stringtag) }?;
            let c = crate::comm_group::create_from_group(group, tag, name)?;
            if c != MPI_COMM_NULL && errhandler != MPI_ERRHANDLER_NULL {
                runtime::set_errhandler(c, errhandler)?;
            }
            let of = group_of().iter().find(|e| e.0 == group).map(|e| e.1);
            if let (Some(s), true) = (of, c != MPI_COMM_NULL) {
                crate::bsend::note_session(crate::comm::lookup(c, name)?.ctx, s);
            }
            // SAFETY: newcomm is an MPI_Comm (checked non-NULL).
            unsafe { put(newcomm, c) }
        })();
        match r {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(errhandler, MPI_COMM_NULL, code, name),
        }
    }
}

/// `session`'s buffer owner, if the session is valid.
fn owner(session: MPI_Session) -> Result<crate::bsend::Owner, c_int> {
    check(session).map(|()| crate::bsend::Owner::Session(session))
}

fn attach_buffer(
    session: MPI_Session,
    buffer: *mut c_void,
    size: Option<usize>,
    name: &str,
) -> c_int {
    let r = (|| {
        let (o, n) = (owner(session)?, size.ok_or(MPI_ERR_COUNT)?);
        runtime::with(name, |rt| {
            crate::bsend::attach(crate::p2p::p2p(rt)?, o, buffer as usize, n)
        })
    })();
    finish(session, name, r)
}

/// # Safety
/// `addr` is NULL or a `void**`, `size` NULL or a `T`.
unsafe fn detach_buffer<T: TryFrom<usize>>(
    session: MPI_Session,
    addr: *mut c_void,
    size: *mut T,
    name: &str,
) -> c_int {
    let r = (|| {
        if addr.is_null() || size.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let o = owner(session)?;
        let d = runtime::with(name, |rt| crate::bsend::detach(crate::p2p::p2p(rt)?, o))?;
        // SAFETY: non-NULL, the caller's contract.
        unsafe { crate::bsend::give_back(addr, size, d) }
    })();
    finish(session, name, r)
}

mpi_fn! {
    fn MPI_Session_attach_buffer / PMPI_Session_attach_buffer(session: MPI_Session, buffer: *mut c_void, size: c_int) -> c_int {
        attach_buffer(session, buffer, usize::try_from(size).ok(), "MPI_Session_attach_buffer")
    }
}

mpi_fn! {
    fn MPI_Session_attach_buffer_c / PMPI_Session_attach_buffer_c(session: MPI_Session, buffer: *mut c_void, size: MPI_Count) -> c_int {
        attach_buffer(session, buffer, usize::try_from(size).ok(), "MPI_Session_attach_buffer_c")
    }
}

mpi_fn! {
    fn MPI_Session_detach_buffer / PMPI_Session_detach_buffer(session: MPI_Session, buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
        // SAFETY: the C contract for the out-parameters.
        unsafe { detach_buffer(session, buffer_addr, size, "MPI_Session_detach_buffer") }
    }
}

mpi_fn! {
    fn MPI_Session_detach_buffer_c / PMPI_Session_detach_buffer_c(session: MPI_Session, buffer_addr: *mut c_void, size: *mut MPI_Count) -> c_int {
        // SAFETY: the C contract for the out-parameters.
        unsafe { detach_buffer(session, buffer_addr, size, "MPI_Session_detach_buffer_c") }
    }
}

mpi_fn! {
    fn MPI_Session_flush_buffer / PMPI_Session_flush_buffer(session: MPI_Session) -> c_int {
        let name = "MPI_Session_flush_buffer";
        let r = owner(session).and_then(|o| {
            runtime::with(name, |rt| crate::bsend::flush(crate::p2p::p2p(rt)?, o))
        });
        finish(session, name, r)
    }
}

mpi_fn! {
    fn MPI_Session_iflush_buffer / PMPI_Session_iflush_buffer(session: MPI_Session, request: *mut MPI_Request) -> c_int {
        let name = "MPI_Session_iflush_buffer";
        let r = (|| {
            if request.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let o = owner(session)?;
            let h = runtime::with(name, |rt| crate::bsend::iflush(crate::p2p::p2p(rt)?, o))?;
            // SAFETY: non-NULL, an MPI_Request by the contract.
            unsafe { put(request, h) }
        })();
        finish(session, name, r)
    }
}
