//! MPI-IO (the standard's chapter "I/O") over POSIX files, as ROMIO's "ufs" driver
//! does it: every rank opens the file itself and moves its own bytes with
//! `pread`/`pwrite`; there is **no collective buffering** and no data sieving (a
//! collective call is each rank's independent access, after the arguments were
//! checked alike). The parts:
//!
//! * this module — the file objects and their handle table, the ABI's I/O constants,
//!   file error handlers (MPI_ERRORS_RETURN by default; MPI_FILE_NULL's handler for
//!   MPI_File_open, MPI_File_delete and invalid handles), errno → error class, and
//!   the small collectives files need (over a private duplicate of the file's
//!   communicator, so no program message or collective can take theirs);
//! * [`open`] — MPI_File_open/close/delete, sizes, amode, group, info, sync,
//!   atomicity, the error handler functions;
//! * [`view`] — file views (displacement, etype, filetype from the datatype's
//!   flattened map) and the walk from view positions to file blocks;
//! * [`datarep`] — data representations: native, internal, external32 and the
//!   program's own (MPI_Register_datarep), and the converting transfer;
//! * [`access`] — the transfer engine (memory packed through the datatype code in
//!   bounded pieces, file blocks through the view) and the individual and
//!   explicit-offset calls;
//! * [`shared`] — the shared file pointer (a side file under `fcntl` locks) and the
//!   ordered collectives (an allgather of the counts);
//! * [`forms`] — the exported functions: blocking, nonblocking (done at once, the
//!   request returned complete), split collectives, and the `_c` large-count forms.

#![allow(non_camel_case_types)]

pub mod access;
pub mod datarep;
pub mod forms;
pub mod open;
pub mod shared;
pub mod view;

use crate::abi::*;
use crate::comm::CommRef;
use crate::handles::{base, Table};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

// ---- the ABI's I/O values (the same as include/mpi.h) ----

pub type MPI_File = Handle;
pub type MPI_Offset = i64;
pub const MPI_FILE_NULL: MPI_File = 0x118;

pub const MPI_MODE_APPEND: c_int = 1;
pub const MPI_MODE_CREATE: c_int = 2;
pub const MPI_MODE_DELETE_ON_CLOSE: c_int = 4;
pub const MPI_MODE_EXCL: c_int = 8;
pub const MPI_MODE_RDONLY: c_int = 16;
pub const MPI_MODE_RDWR: c_int = 32;
pub const MPI_MODE_SEQUENTIAL: c_int = 64;
pub const MPI_MODE_UNIQUE_OPEN: c_int = 128;
pub const MPI_MODE_WRONLY: c_int = 256;
/// Every file mode bit.
pub const ALL_MODES: c_int = 511;

pub const MPI_SEEK_CUR: c_int = 401;
pub const MPI_SEEK_END: c_int = 402;
pub const MPI_SEEK_SET: c_int = 403;
pub const MPI_DISPLACEMENT_CURRENT: MPI_Offset = -1;
pub const MPI_MAX_DATAREP_STRING: usize = 128;

pub const MPI_ERR_ACCESS: c_int = 20;
pub const MPI_ERR_AMODE: c_int = 21;
pub const MPI_ERR_BAD_FILE: c_int = 23;
pub const MPI_ERR_CONVERSION: c_int = 25;
pub const MPI_ERR_DUP_DATAREP: c_int = 27;
pub const MPI_ERR_FILE_EXISTS: c_int = 28;
pub const MPI_ERR_FILE: c_int = 30;
pub const MPI_ERR_IO: c_int = 35;
pub const MPI_ERR_NOT_SAME: c_int = 40;
pub const MPI_ERR_NO_SPACE: c_int = 41;
pub const MPI_ERR_NO_SUCH_FILE: c_int = 42;
pub const MPI_ERR_QUOTA: c_int = 44;
pub const MPI_ERR_READ_ONLY: c_int = 45;
pub const MPI_ERR_UNSUPPORTED_DATAREP: c_int = 54;

/// One open file, shared by its table entry and the calls running on it.
pub struct FileObj {
    /// The private duplicate of the communicator it was opened on.
    pub(crate) comm: MPI_Comm,
    pub(crate) cref: CommRef,
    pub(crate) file: std::fs::File,
    pub(crate) path: std::path::PathBuf,
    pub(crate) amode: c_int,
    /// The shared file pointer's side file (named at open, made at first use).
    pub(crate) shfp: shared::SideFile,
    pub(crate) st: Mutex<State>,
}

/// What changes while a file is open.
pub struct State {
    pub(crate) view: Arc<view::View>,
    /// The individual file pointer, in etypes of the view.
    pub(crate) pos: u64,
    pub(crate) atomic: bool,
    pub(crate) info: crate::info::Pairs,
    pub(crate) errh: MPI_Errhandler,
    /// A split collective begun and not yet ended: its status.
    pub(crate) split: Option<crate::p2p::CStatus>,
}

impl FileObj {
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }
    pub(crate) fn rank(&self) -> usize {
        self.cref.rank as usize
    }
}

static FILES: Mutex<Table<Arc<FileObj>>> = Mutex::new(Table::new(base::FILE));
/// MPI_FILE_NULL's error handler: the default of files opened from now on.
static NULL_ERRH: AtomicUsize = AtomicUsize::new(MPI_ERRORS_RETURN);

pub(crate) fn files() -> MutexGuard<'static, Table<Arc<FileObj>>> {
    FILES.lock().unwrap_or_else(|p| p.into_inner())
}

/// The open file behind a handle (`MPI_ERR_FILE` otherwise, MPI_FILE_NULL too).
pub(crate) fn lookup(fh: MPI_File) -> Result<Arc<FileObj>, c_int> {
    crate::runtime::check("MPI_File")?;
    files().get(fh).cloned().ok_or(MPI_ERR_FILE)
}

pub(crate) fn null_errhandler() -> MPI_Errhandler {
    NULL_ERRH.load(Ordering::SeqCst)
}

pub(crate) fn set_null_errhandler(h: MPI_Errhandler) {
    NULL_ERRH.store(h, Ordering::SeqCst);
}

/// The handler errors on `fh` go to: its own, or MPI_FILE_NULL's for MPI_FILE_NULL
/// and handles that name no open file.
pub(crate) fn handler_of(fh: MPI_File) -> MPI_Errhandler {
    match files().get(fh) {
        Some(f) => f.state().errh,
        None => null_errhandler(),
    }
}

/// Raises error `code` of `name` on file `fh`: returned under MPI_ERRORS_RETURN (the
/// files' default), a user handler is called (then the code returned), the fatal
/// handlers end the job.
pub(crate) fn raise(fh: MPI_File, code: c_int, name: &str) -> c_int {
    let h = handler_of(fh);
    if h == MPI_ERRORS_RETURN {
        return code;
    }
    if let Some(c) = crate::errh::call(h, fh, code) {
        return c;
    }
    let (class, text) =
        crate::runtime::error_text(code).unwrap_or(("MPI_ERR_UNKNOWN", "unknown error"));
    crate::ffi::say!("myrix MPI: {name} failed: {class}: {text}; ending the job");
    crate::runtime::abort(code, name)
}

/// The result of a file call: errors through `fh`'s handler.
pub(crate) fn finish(fh: MPI_File, name: &str, r: Result<(), c_int>) -> c_int {
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(code) => raise(fh, code, name),
    }
}

/// The error class of an OS error.
pub(crate) fn os_error(e: &std::io::Error) -> c_int {
    match e.raw_os_error() {
        Some(libc::ENOENT) => MPI_ERR_NO_SUCH_FILE,
        Some(libc::EACCES) | Some(libc::EPERM) => MPI_ERR_ACCESS,
        Some(libc::EEXIST) => MPI_ERR_FILE_EXISTS,
        Some(libc::EROFS) => MPI_ERR_READ_ONLY,
        Some(libc::ENOSPC) => MPI_ERR_NO_SPACE,
        Some(libc::EDQUOT) => MPI_ERR_QUOTA,
        Some(libc::ENAMETOOLONG) | Some(libc::ENOTDIR) | Some(libc::EISDIR) => MPI_ERR_BAD_FILE,
        Some(libc::EINVAL) | Some(libc::EFBIG) => MPI_ERR_ARG,
        _ => MPI_ERR_IO,
    }
}

// ---- collectives among a file's ranks ----

fn coll_failed(name: &str, e: myrix_mpi::coll::CollError) -> c_int {
    crate::ffi::say!("myrix MPI: {name}: {e}");
    MPI_ERR_OTHER
}

/// Every rank's `value` (one `u64` each), in rank order.
pub(crate) fn allgather_u64(cref: &CommRef, value: u64, name: &str) -> Result<Vec<u64>, c_int> {
    let n = cref.ranks.len();
    if n == 1 {
        return Ok(vec![value]);
    }
    let mut all = vec![0u8; 8 * n];
    let mut p = crate::coll_glue::pt2pt(cref);
    myrix_mpi::coll::allgather(&mut p, &value.to_le_bytes(), &mut all)
        .map_err(|e| coll_failed(name, e))?;
    Ok(all
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

/// Agrees on an outcome: every rank returns the error of the lowest rank that
/// failed, or `Ok` when none did (so a collective call fails alike everywhere).
pub(crate) fn agree(cref: &CommRef, mine: Result<(), c_int>, name: &str) -> Result<(), c_int> {
    let code = mine.err().unwrap_or(MPI_SUCCESS);
    let all = allgather_u64(cref, code as u32 as u64, name)?;
    match all.into_iter().find(|&c| c != 0) {
        Some(c) => Err(c as u32 as c_int),
        None => Ok(()),
    }
}

/// Rank 0's `value`, on every rank.
pub(crate) fn bcast_u64(cref: &CommRef, value: u64, name: &str) -> Result<u64, c_int> {
    if cref.ranks.len() == 1 {
        return Ok(value);
    }
    let mut b = value.to_le_bytes();
    let mut p = crate::coll_glue::pt2pt(cref);
    myrix_mpi::coll::bcast(&mut p, 0, &mut b).map_err(|e| coll_failed(name, e))?;
    Ok(u64::from_le_bytes(b))
}

pub(crate) fn barrier(cref: &CommRef, name: &str) -> Result<(), c_int> {
    if cref.ranks.len() == 1 {
        return Ok(());
    }
    let mut p = crate::coll_glue::pt2pt(cref);
    myrix_mpi::coll::barrier(&mut p).map_err(|e| coll_failed(name, e))
}

/// Runs `f` on rank 0 alone and gives its outcome to every rank.
pub(crate) fn on_root(
    f: &FileObj,
    name: &str,
    g: impl FnOnce() -> Result<u64, c_int>,
) -> Result<u64, c_int> {
    let mine = if f.rank() == 0 { g() } else { Ok(0) };
    // The code first (so every rank fails alike), then the value.
    let code = match &mine {
        Ok(_) => 0u64,
        Err(c) => *c as u32 as u64,
    };
    let code = bcast_u64(&f.cref, code, name)?;
    if code != 0 {
        return Err(code as u32 as c_int);
    }
    bcast_u64(&f.cref, mine.unwrap_or(0), name)
}
