//! Error handlers the program writes (MPI_Comm_create_errhandler,
//! MPI_Win_create_errhandler, MPI_Comm_call_errhandler) and the error classes,
//! codes and strings it adds (MPI_Add_error_class / _code / _string), which
//! MPI_Error_class and MPI_Error_string then know.
//!
//! A user handler is a C function `void f(MPI_Comm *, int *, ...)` (or
//! `MPI_Win *`); `runtime::error` and `win::win_finish` call it through
//! [`call`] with no lock held, and the failing call then returns the code.
//! Handlers are never removed from their table (MPI_Errhandler_free only clears the
//! caller's handle), so a communicator keeps a valid handler whatever the program
//! frees.

use crate::abi::*;
use crate::ffi::{finish, mpi_fn, put};
use crate::handles::{base, Table};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::{LazyLock, Mutex, MutexGuard};

/// The object kind a handler is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Comm,
    Win,
    /// MPI_File_create_errhandler's (`io/`).
    File,
    Session,
}

/// `MPI_Comm_errhandler_function` / `MPI_Win_errhandler_function` (variadic in C;
/// called with the two fixed arguments, as the standard's implementations do).
type HandlerFn = unsafe extern "C" fn(*mut Handle, *mut c_int);

struct Errh {
    handlers: Table<(Kind, usize)>,
    /// Added codes: (code, class, string). Classes are their own class.
    codes: Vec<(c_int, c_int, String)>,
    last: c_int,
}

static ERRH: LazyLock<Mutex<Errh>> = LazyLock::new(|| {
    Mutex::new(Errh {
        handlers: Table::new(base::ERRHANDLER),
        codes: Vec::new(),
        last: crate::comm::LAST_PREDEFINED_CODE,
    })
});

fn errh() -> MutexGuard<'static, Errh> {
    ERRH.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether `h` is a handler the program created for `kind`.
pub fn is_user(h: MPI_Errhandler, kind: Kind) -> bool {
    errh().handlers.get(h).is_some_and(|&(k, _)| k == kind)
}

/// Whether `h` is a handler the program created, for any kind of object.
pub fn is_any_user(h: MPI_Errhandler) -> bool {
    errh().handlers.get(h).is_some()
}

/// Calls user handler `h` for `obj` with `code`; `None` when `h` is not one.
pub fn call(h: MPI_Errhandler, obj: Handle, code: c_int) -> Option<c_int> {
    let f = errh().handlers.get(h).map(|&(_, f)| f)?;
    // SAFETY: the function pointer the program gave MPI_*_create_errhandler,
    // with this (leading-argument) signature by the C contract.
    let f: HandlerFn = unsafe { std::mem::transmute::<usize, HandlerFn>(f) };
    let (mut o, mut c) = (obj, code);
    // SAFETY: both pointers are to locals.
    unsafe { f(&mut o, &mut c) };
    Some(code)
}

/// `(class, string)` of a code the program added.
pub fn added(code: c_int) -> Option<(c_int, String)> {
    let e = errh();
    e.codes
        .iter()
        .find(|c| c.0 == code)
        .map(|c| (c.1, c.2.clone()))
}

/// # Safety
/// `out` is NULL or valid for an MPI_Errhandler.
pub(crate) unsafe fn create(kind: Kind, f: usize, out: *mut MPI_Errhandler) -> Result<(), c_int> {
    if f == 0 || out.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let h = errh().handlers.insert((kind, f)).ok_or(MPI_ERR_NO_MEM)?;
    // SAFETY: the caller's contract (checked non-NULL).
    unsafe { put(out, h) }
}

mpi_fn! {
    fn MPI_Comm_create_errhandler / PMPI_Comm_create_errhandler(comm_errhandler_fn: usize, errhandler: *mut MPI_Errhandler) -> c_int {
        // SAFETY: errhandler is NULL or an MPI_Errhandler.
        let r = unsafe { create(Kind::Comm, comm_errhandler_fn, errhandler) };
        finish(MPI_COMM_WORLD, "MPI_Comm_create_errhandler", r)
    }
}

mpi_fn! {
    fn MPI_Win_create_errhandler / PMPI_Win_create_errhandler(win_errhandler_fn: usize, errhandler: *mut MPI_Errhandler) -> c_int {
        // SAFETY: errhandler is NULL or an MPI_Errhandler.
        let r = unsafe { create(Kind::Win, win_errhandler_fn, errhandler) };
        finish(MPI_COMM_WORLD, "MPI_Win_create_errhandler", r)
    }
}

mpi_fn! {
    /// Invokes the communicator's error handler with `errorcode`; MPI_SUCCESS once
    /// it returned.
    fn MPI_Comm_call_errhandler / PMPI_Comm_call_errhandler(comm: MPI_Comm, errorcode: c_int) -> c_int {
        let name = "MPI_Comm_call_errhandler";
        match crate::comm::lookup(comm, name) {
            Ok(_) => {
                crate::runtime::error(comm, errorcode, name);
                MPI_SUCCESS
            }
            Err(c) => finish(comm, name, Err(c)),
        }
    }
}

mpi_fn! {
    fn MPI_Add_error_class / PMPI_Add_error_class(errorclass: *mut c_int) -> c_int {
        let r = if errorclass.is_null() {
            Err(MPI_ERR_ARG)
        } else {
            let mut e = errh();
            e.last += 1;
            let c = e.last;
            e.codes.push((c, c, String::new()));
            drop(e);
            crate::comm::set_lastusedcode(c);
            // SAFETY: errorclass is an int (checked non-NULL).
            unsafe { put(errorclass, c) }
        };
        finish(MPI_COMM_WORLD, "MPI_Add_error_class", r)
    }
}

mpi_fn! {
    fn MPI_Add_error_code / PMPI_Add_error_code(errorclass: c_int, errorcode: *mut c_int) -> c_int {
        let r = (|| {
            if errorcode.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let mut e = errh();
            // A code goes into an added class or a predefined one (MPICH's
            // errhan/dynamic_errcode_predefined_errclass), never MPI_SUCCESS's.
            let known = e.codes.iter().any(|c| c.0 == errorclass && c.1 == errorclass)
                || (errorclass != MPI_SUCCESS && crate::runtime::error_text(errorclass).is_some());
            if !known {
                return Err(MPI_ERR_ARG);
            }
            e.last += 1;
            let c = e.last;
            e.codes.push((c, errorclass, String::new()));
            drop(e);
            crate::comm::set_lastusedcode(c);
            // SAFETY: errorcode is an int (checked non-NULL).
            unsafe { put(errorcode, c) }
        })();
        finish(MPI_COMM_WORLD, "MPI_Add_error_code", r)
    }
}

mpi_fn! {
    fn MPI_Add_error_string / PMPI_Add_error_string(errorcode: c_int, string: *const c_char) -> c_int {
        let r = (|| {
            if string.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: a NUL-terminated string by the C contract.
            let b = unsafe { CStr::from_ptr(string) }.to_bytes();
            if b.len() >= MPI_MAX_ERROR_STRING {
                return Err(MPI_ERR_ARG);
            }
            let mut e = errh();
            let c = e.codes.iter_mut().find(|c| c.0 == errorcode).ok_or(MPI_ERR_ARG)?;
            c.2 = String::from_utf8_lossy(b).into_owned();
            Ok(())
        })();
        finish(MPI_COMM_WORLD, "MPI_Add_error_string", r)
    }
}

/// MPI_Remove_error_class / _code's body: removes an added class (which has no
/// codes left besides itself) or an added code (not a class).
fn remove(code: c_int, class: bool) -> Result<(), c_int> {
    let mut e = errh();
    let at = e
        .codes
        .iter()
        .position(|c| c.0 == code && (c.1 == code) == class)
        .ok_or(MPI_ERR_ARG)?;
    if class && e.codes.iter().any(|c| c.1 == code && c.0 != code) {
        return Err(MPI_ERR_ARG);
    }
    e.codes.remove(at);
    Ok(())
}

mpi_fn! {
    /// Removes a class MPI_Add_error_class made; its codes must be removed first.
    fn MPI_Remove_error_class / PMPI_Remove_error_class(errorclass: c_int) -> c_int {
        finish(MPI_COMM_WORLD, "MPI_Remove_error_class", remove(errorclass, true))
    }
}

mpi_fn! {
    /// Removes a code MPI_Add_error_code made.
    fn MPI_Remove_error_code / PMPI_Remove_error_code(errorcode: c_int) -> c_int {
        finish(MPI_COMM_WORLD, "MPI_Remove_error_code", remove(errorcode, false))
    }
}

mpi_fn! {
    /// Forgets the string of an added class or code (MPI_Error_string then gives
    /// the empty string, as before MPI_Add_error_string).
    fn MPI_Remove_error_string / PMPI_Remove_error_string(errorcode: c_int) -> c_int {
        let r = errh()
            .codes
            .iter_mut()
            .find(|c| c.0 == errorcode)
            .map(|c| c.2.clear())
            .ok_or(MPI_ERR_ARG);
        finish(MPI_COMM_WORLD, "MPI_Remove_error_string", r)
    }
}
