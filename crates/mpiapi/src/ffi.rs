//! The boundary with C: the guard every exported function runs in (no panic crosses
//! into C), out-parameter writes, and the not-implemented report.

use crate::abi::*;
use crate::runtime;
use std::os::raw::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What an exported function returns when its body panicked.
pub trait OnPanic {
    fn on_panic() -> Self;
}
impl OnPanic for c_int {
    fn on_panic() -> c_int {
        MPI_ERR_INTERN
    }
}
impl OnPanic for f64 {
    fn on_panic() -> f64 {
        0.0
    }
}
impl OnPanic for usize {
    fn on_panic() -> usize {
        0
    }
}
impl OnPanic for isize {
    fn on_panic() -> isize {
        0
    }
}

/// Writes one line to stderr in a single write, so the messages of ranks sharing a
/// terminal or a pipe do not interleave mid-line (`eprintln!` writes its pieces one
/// by one).
pub fn say_line(line: &str) {
    let mut b = String::with_capacity(line.len() + 1);
    b.push_str(line);
    b.push('\n');
    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), b.as_bytes());
}

/// `eprintln!` for the library's messages: one write per line ([`say_line`]).
macro_rules! say {
    ($($t:tt)*) => {
        $crate::ffi::say_line(&format!($($t)*))
    };
}
pub(crate) use say;

/// Runs an exported function's body; a panic is reported and becomes an error.
pub fn guard<R: OnPanic>(name: &str, f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        say!("myrix MPI: internal error (panic) in {name}");
        R::on_panic()
    })
}

/// Defines `PMPI_X` with the body and `MPI_X` calling it (a profiling library may
/// replace `MPI_X` and call `PMPI_X`). Written `fn MPI_X / PMPI_X (…) -> R { … }`;
/// `build.rs` finds implemented functions by that form.
macro_rules! mpi_fn {
    ($(#[$m:meta])* fn $name:ident / $pname:ident ( $($a:ident : $t:ty),* $(,)? ) -> $r:ty $body:block) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $pname($($a: $t),*) -> $r {
            $crate::ffi::guard(stringify!($name), move || -> $r { $body })
        }
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $r {
            // SAFETY: the same contract as PMPI_X, whose arguments these are.
            unsafe { $pname($($a),*) }
        }
    };
}
pub(crate) use mpi_fn;

/// Writes an out-parameter; NULL is `MPI_ERR_ARG`.
///
/// # Safety
/// `p` is NULL or valid for writing a `T` (the C caller's contract).
pub unsafe fn put<T>(p: *mut T, v: T) -> Result<(), c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-NULL, and valid for a write by the caller's contract.
    unsafe { p.write(v) };
    Ok(())
}

/// Copies `s` into a C buffer of `cap` bytes (NUL-terminated, truncated to fit) and
/// stores its length in `len`.
///
/// # Safety
/// `buf` is NULL or valid for `cap` bytes; `len` is NULL or valid for an int.
pub unsafe fn put_str(buf: *mut c_char, cap: usize, len: *mut c_int, s: &str) -> Result<(), c_int> {
    if buf.is_null() || cap == 0 {
        return Err(MPI_ERR_ARG);
    }
    let bytes = s.as_bytes();
    let n = bytes.len().min(cap - 1);
    // SAFETY: buf is valid for cap bytes and n + 1 <= cap; the source is a Rust
    // string, which cannot overlap the caller's buffer.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n);
        buf.add(n).write(0);
    }
    // SAFETY: the caller's contract for len.
    unsafe { put(len, n as c_int) }
}

/// The body of every declared function that is not implemented yet.
pub fn unsupported(name: &str) -> c_int {
    guard(name, || {
        say!("myrix MPI: {name} is not implemented yet");
        runtime::error(MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_OPERATION, name)
    })
}

/// The result of a body that returns `Result<(), code>`: errors go through the error
/// handler of `comm`.
pub fn finish(comm: MPI_Comm, name: &str, r: Result<(), c_int>) -> c_int {
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(code) => runtime::error(comm, code, name),
    }
}
